// BATCH_MATMUL: shape, broadcast and type checks plus the requantization
// multiplier in Prepare; the reference kernel in Eval.
//   inputs: lhs [..., M, K] ([..., K, M] with adj_x), rhs [..., K, N]
//           ([..., N, K] with adj_y), ranks 2 to 5, batch dimensions broadcast
//   output: [broadcast batch..., M, N]
//   types:  all FLOAT32; all INT8; INT8 inputs with an INT32 output (raw sums);
//           all INT16 (zero points 0); hybrid: FLOAT32 lhs, constant INT8 rhs
//           (per-tensor scale, zero point 0), FLOAT32 output.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "kernels/optimized/batch_matmul_float.h"
#include "kernels/optimized/batch_matmul_int8.h"
#include "kernels/optimized/hybrid_gemm.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/batch_matmul.h"
#include "kernels/reference/hybrid.h"
#include "ops/kernel.h"
#include "ops/layer_quant.h"

namespace delegato {
namespace {

struct BatchMatMulData {
  reference::BatchMatMulGeometry g;
  DataType type = DataType::kFloat32;
  DataType output_type = DataType::kFloat32;
  reference::BatchMatMulQuantParams q;
  // Hybrid: FLOAT32 lhs, constant INT8 rhs, FLOAT32 output.
  bool hybrid = false;
  reference::HybridBatchMatMulParams hybrid_params;
  std::vector<int32_t> column_sums;
  int64_t lhs_matrices = 0;
  // Scratch: quantized lhs, row scales, row zero points, one row buffer
  // (then the vector kernel's, when there is one).
  size_t scales_offset = 0, zero_points_offset = 0, row_offset = 0, kernel_offset = 0;
  std::unique_ptr<optimized::HybridBatchMatMulKernel> fast_hybrid;
  // float32 in vectors (bit-exact), when the kernel set allows it.
  optimized::Isa float_isa = optimized::Isa::kScalar;
  // int8 -> int8 in vectors (bit-exact), when the kernel set allows it.
  bool fast_int8 = false;
  optimized::Isa int8_isa = optimized::Isa::kScalar;
};

}  // namespace

void PrepareBatchMatMul(KernelContext& ctx, Node& node) {
  using namespace layer_quant;
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const auto* params = std::get_if<BatchMatMulParams>(&node.def->params);
  // Older files may leave the (all-default) options table out.
  const BatchMatMulParams p = params != nullptr ? *params : BatchMatMulParams{};
  const Tensor& lhs = ctx.input(node, 0);
  const Tensor& rhs = ctx.input(node, 1);
  Tensor& output = ctx.output(node, 0);

  for (const Tensor* t : {&lhs, &rhs}) {
    DLG_NODE_CHECK(ctx, node, t->rank() >= 2 && t->rank() <= 5, t == &lhs ? "lhs" : "rhs",
                   " tensor \"", t->name, "\" must have rank 2 to 5, has rank ", t->rank());
    CheckConstantSize(ctx, node, *t, t == &lhs ? "lhs" : "rhs");
  }
  const int out_rank = std::max(lhs.rank(), rhs.rank());
  reference::BatchMatMulGeometry g;
  g.adj_x = p.adj_x;
  g.adj_y = p.adj_y;
  std::vector<int32_t> out_dims(out_rank);
  // Batch dimensions, right-aligned; broadcast where one side is 1.
  for (int i = 0; i < out_rank - 2; ++i) {
    const int li = i - (out_rank - lhs.rank()), ri = i - (out_rank - rhs.rank());
    const int32_t ld = li >= 0 ? lhs.dim(li) : 1;
    const int32_t rd = ri >= 0 ? rhs.dim(ri) : 1;
    DLG_NODE_CHECK(ctx, node, ld == rd || ld == 1 || rd == 1, "batch dimension ", i,
                   " does not broadcast: lhs \"", lhs.name, "\" has ", ld, ", rhs \"", rhs.name,
                   "\" has ", rd);
    out_dims[i] = ld == 1 ? rd : ld;
    const int slot = i - (out_rank - 2) + 3;  // position among the last 3 batch dims
    DLG_NODE_CHECK(ctx, node, slot >= 0, "more than 3 batch dimensions");
    g.lhs_batch[slot] = ld;
    g.rhs_batch[slot] = rd;
    g.out_batch[slot] = out_dims[i];
  }
  const int32_t l0 = lhs.dim(lhs.rank() - 2), l1 = lhs.dim(lhs.rank() - 1);
  const int32_t r0 = rhs.dim(rhs.rank() - 2), r1 = rhs.dim(rhs.rank() - 1);
  g.rows = p.adj_x ? l1 : l0;
  g.depth = p.adj_x ? l0 : l1;
  const int32_t rhs_depth = p.adj_y ? r1 : r0;
  g.cols = p.adj_y ? r0 : r1;
  DLG_NODE_CHECK(ctx, node, g.depth == rhs_depth, "lhs \"", lhs.name, "\" contracts ", g.depth,
                 " values (adj_x=", p.adj_x, "), rhs \"", rhs.name, "\" ", rhs_depth,
                 " (adj_y=", p.adj_y, ")");
  out_dims[out_rank - 2] = g.rows;
  out_dims[out_rank - 1] = g.cols;

  auto data = std::make_shared<BatchMatMulData>();
  const DataType type = lhs.type;
  data->type = type;
  data->output_type = output.type;
  if (type == DataType::kFloat32 && rhs.type == DataType::kInt8) {
    DLG_NODE_CHECK(ctx, node, output.type == DataType::kFloat32, "hybrid FLOAT32 lhs with INT8 ",
                   "rhs needs a FLOAT32 output, output \"", output.name, "\" is ",
                   DataTypeName(output.type));
    DLG_NODE_CHECK(ctx, node, rhs.is_constant(), "hybrid rhs tensor \"", rhs.name,
                   "\" must be constant");
    const TensorQuant rq = ActivationQuant(ctx, node, rhs, "rhs", /*zero_zp_required=*/true);
    data->hybrid = true;
    reference::HybridBatchMatMulParams& hp = data->hybrid_params;
    hp.asymmetric = p.asymmetric_quantize_inputs;
    hp.rhs_scale = rq.scale;
    // Sum of each output column over k, per rhs matrix.
    const int64_t rhs_matrices =
        int64_t{g.rhs_batch[0]} * g.rhs_batch[1] * g.rhs_batch[2];
    const int64_t rhs_k = g.adj_y ? 1 : g.cols, rhs_n = g.adj_y ? g.depth : 1;
    const int8_t* r = rhs.data_as<int8_t>();
    data->column_sums.assign(static_cast<size_t>(rhs_matrices) * g.cols, 0);
    for (int64_t mat = 0; mat < rhs_matrices; ++mat)
      for (int32_t n = 0; n < g.cols; ++n)
        for (int32_t k = 0; k < g.depth; ++k)
          data->column_sums[mat * g.cols + n] +=
              r[mat * g.depth * g.cols + k * rhs_k + n * rhs_n];
    hp.column_sums = data->column_sums.data();
    data->lhs_matrices = int64_t{g.lhs_batch[0]} * g.lhs_batch[1] * g.lhs_batch[2];
    const size_t rows = static_cast<size_t>(data->lhs_matrices) * g.rows;
    const size_t quantized_bytes = rows * g.depth;
    data->scales_offset = (quantized_bytes + 15) / 16 * 16;
    data->zero_points_offset = data->scales_offset + rows * sizeof(float);
    data->row_offset = data->zero_points_offset + rows * sizeof(int32_t);
    node.scratch_bytes = data->row_offset + sizeof(float) * g.depth;
    if (ctx.optimized() && optimized::HybridVectorIsa(optimized::SelectedIsa()) && g.rows > 0 &&
        g.cols > 0 && g.depth > 0) {
      data->fast_hybrid = std::make_unique<optimized::HybridBatchMatMulKernel>(
          g, r, optimized::SelectedIsa());
      data->kernel_offset = (node.scratch_bytes + 63) / 64 * 64;
      node.scratch_bytes = data->kernel_offset + data->fast_hybrid->scratch_bytes();
    }
    data->g = g;
    ctx.SetOutputDims(node, 0, out_dims);
    node.op_data = std::move(data);
    return;
  }
  const bool int8_to_int32 = type == DataType::kInt8 && output.type == DataType::kInt32;
  const bool supported = (type == DataType::kFloat32 || type == DataType::kInt8 ||
                          type == DataType::kInt16) &&
                         rhs.type == type && (output.type == type || int8_to_int32);
  DLG_NODE_CHECK(ctx, node, supported, "unsupported types: lhs \"", lhs.name, "\" ",
                 DataTypeName(type), ", rhs \"", rhs.name, "\" ", DataTypeName(rhs.type),
                 ", output \"", output.name, "\" ", DataTypeName(output.type),
                 " (supported: all FLOAT32, all INT8, INT8 to INT32, all INT16)");

  if ((type == DataType::kInt8 || type == DataType::kInt16) && !int8_to_int32) {
    const bool is16 = type == DataType::kInt16;
    const TensorQuant lq = ActivationQuant(ctx, node, lhs, "lhs", is16);
    const TensorQuant rq = ActivationQuant(ctx, node, rhs, "rhs", is16);
    const TensorQuant oq = ActivationQuant(ctx, node, output, "output", is16);
    WeightQuant w;
    w.scales = {rq.scale};
    std::vector<int32_t> multiplier, shift;
    ComputeMultipliers(ctx, node, lq.scale, w, oq.scale, 1, /*legacy_float_product=*/true,
                       &multiplier, &shift);
    data->q.lhs_offset = -lq.zero_point;
    data->q.rhs_offset = -rq.zero_point;
    data->q.output_offset = oq.zero_point;
    data->q.multiplier = multiplier[0];
    data->q.shift = shift[0];
    data->q.act_min = is16 ? -32768 : -128;
    data->q.act_max = is16 ? 32767 : 127;
  }
  data->g = g;
  if (type == DataType::kFloat32 && ctx.optimized() &&
      optimized::BatchMatMulFloatVectorized(optimized::SelectedIsa())) {
    data->float_isa = optimized::SelectedIsa();
    node.scratch_bytes = optimized::BatchMatMulFloatScratchBytes(g);
  }
  if (type == DataType::kInt8 && output.type == DataType::kInt8 && !data->hybrid &&
      ctx.optimized() && optimized::BatchMatMulInt8Vectorized(optimized::SelectedIsa())) {
    data->fast_int8 = true;
    data->int8_isa = optimized::SelectedIsa();
    node.scratch_bytes = optimized::BatchMatMulInt8ScratchBytes(g);
  }
  ctx.SetOutputDims(node, 0, out_dims);
  node.op_data = std::move(data);
}

void EvalBatchMatMul(KernelContext& ctx, const Node& node) {
  const BatchMatMulData& d = *node.data<BatchMatMulData>();
  const Tensor& lhs = ctx.in(node, 0);
  const Tensor& rhs = ctx.in(node, 1);
  Tensor& output = ctx.out(node, 0);
  if (d.hybrid) {
    int8_t* quantized = reinterpret_cast<int8_t*>(node.scratch);
    float* scales = reinterpret_cast<float*>(node.scratch + d.scales_offset);
    int32_t* zero_points = reinterpret_cast<int32_t*>(node.scratch + d.zero_points_offset);
    float* row = reinterpret_cast<float*>(node.scratch + d.row_offset);
    if (d.fast_hybrid) {
      d.fast_hybrid->QuantizeLhs(d.hybrid_params, lhs.data_as<float>(), row, quantized, scales,
                                 zero_points, 0, d.lhs_matrices);
      d.fast_hybrid->Run(d.hybrid_params, quantized, scales, zero_points, output.data_as<float>(),
                         node.scratch + d.kernel_offset);
      return;
    }
    reference::QuantizeBatchMatMulLhs(d.g, d.hybrid_params, lhs.data_as<float>(), row, quantized,
                                      scales, zero_points, 0, d.lhs_matrices);
    reference::HybridBatchMatMul(d.g, d.hybrid_params, quantized, scales, zero_points,
                                 rhs.data_as<int8_t>(), output.data_as<float>());
    return;
  }
  switch (d.type) {
    case DataType::kFloat32:
      optimized::BatchMatMulFloat(d.float_isa, d.g, lhs.data_as<float>(), rhs.data_as<float>(),
                                  output.data_as<float>(),
                                  reinterpret_cast<float*>(node.scratch));
      break;
    case DataType::kInt8:
      if (d.output_type == DataType::kInt32) {
        reference::BatchMatMulInt8ToInt32(d.g, lhs.data_as<int8_t>(), rhs.data_as<int8_t>(),
                                          output.data_as<int32_t>());
      } else if (d.fast_int8) {
        optimized::BatchMatMulInt8(d.int8_isa, d.g, d.q, lhs.data_as<int8_t>(),
                                   rhs.data_as<int8_t>(), output.data_as<int8_t>(),
                                   reinterpret_cast<int32_t*>(node.scratch));
      } else {
        reference::BatchMatMulQuantized<int8_t, int32_t>(
            d.g, d.q, lhs.data_as<int8_t>(), rhs.data_as<int8_t>(), output.data_as<int8_t>());
      }
      break;
    case DataType::kInt16:
      reference::BatchMatMulQuantized<int16_t, int64_t>(
          d.g, d.q, lhs.data_as<int16_t>(), rhs.data_as<int16_t>(), output.data_as<int16_t>());
      break;
    default:
      break;
  }
}

}  // namespace delegato
