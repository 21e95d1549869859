// TRANSPOSE_CONV: checks, output shape, padding and requantization constants
// in Prepare; the reference scatter kernel in Eval, or for float32 with a
// constant filter on AVX2 / AVX-512 the bit-exact gather kernels
// (optimized/transpose_conv_float.h; uint8, int8 and the hybrid op's integer
// sums: optimized/transpose_conv_quant.h) over output rows across threads.
//   inputs: output_shape (constant INT32 [4]), weights [out_c, h, w, in_c],
//           input [batch, h, w, in_c], bias [out_c] (optional, version 3+)
//   types:  all FLOAT32; all UINT8 (per-tensor weights, INT32 bias);
//           INT8 (per-tensor or per-channel symmetric weights, INT32 bias);
//           INT16 activations with INT8 symmetric weights and INT64 bias (16x8,
//           zero points 0; LiteRT accepts an INT32 bias there but reads it as
//           INT64, so it is rejected); hybrid: FLOAT32 input, bias and output
//           with constant INT8 weights (per-tensor or per-channel, zero points
//           0), as dynamic-range quantization writes it.
// Padding is TFLite's: computed as for a convolution from the output size to
// the input size. The fused activation is applied (versions 4+ carry it).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "kernels/optimized/hybrid_gemm.h"
#include "kernels/optimized/transpose_conv_float.h"
#include "kernels/optimized/transpose_conv_quant.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/hybrid.h"
#include "kernels/reference/transpose_conv.h"
#include "ops/kernel.h"
#include "ops/layer_quant.h"

namespace delegato {
namespace {

constexpr int kOutputShape = 0;
constexpr int kWeights = 1;
constexpr int kInput = 2;
constexpr int kBias = 3;

struct TransposeConvData {
  reference::TransposeConvGeometry g;
  DataType type = DataType::kFloat32;
  float float_min = 0, float_max = 0;
  reference::TransposeConvQuantParams q;  // pointers into the vectors below
  std::vector<int32_t> multipliers, shifts;
  // Hybrid: scratch holds the quantized input, then per-batch scales and zero
  // points, then the int32 accumulators.
  bool hybrid = false;
  reference::HybridTransposeConvParams hybrid_params;
  std::vector<float> weight_scales;
  std::vector<float> channel_scales;  // fast_hybrid: a weight scale per output channel
  size_t scales_offset = 0, zero_points_offset = 0, acc_offset = 0;
  // float32 gather kernel (bit-exact with the reference), when selected.
  bool fast_float = false;
  int64_t min_parallel_rows = 2;  // small layers stay on the calling thread
  optimized::TransposeConvFloat float_kernel;
  bool fast_quant = false;   // uint8 / int8 gather kernel (bit-exact)
  bool fast_hybrid = false;  // hybrid: vector quantizer, gathered int32 sums (bit-exact)
  optimized::Isa isa = optimized::Isa::kScalar;
  size_t offsets_offset = 0;  // hybrid: per-batch input offsets (-zero point) in scratch
  optimized::TransposeConvQuant quant_kernel;
};

}  // namespace

void PrepareTransposeConv(KernelContext& ctx, Node& node) {
  using namespace layer_quant;
  ctx.CheckInputCount(node, 3, 4);
  ctx.CheckOutputCount(node, 1);
  const auto* params = std::get_if<TransposeConvParams>(&node.def->params);
  DLG_NODE_CHECK(ctx, node, params != nullptr, "missing TransposeConvOptions");

  const Tensor& output_shape = ctx.input(node, kOutputShape);
  const Tensor& weights = ctx.input(node, kWeights);
  const Tensor& input = ctx.input(node, kInput);
  const Tensor* bias = ctx.optional_input(node, kBias);
  Tensor& output = ctx.output(node, 0);

  DLG_NODE_CHECK(ctx, node, output_shape.type == DataType::kInt32, "output_shape tensor \"",
                 output_shape.name, "\" has type ", DataTypeName(output_shape.type),
                 ", INT32 expected");
  DLG_NODE_CHECK(ctx, node, output_shape.rank() == 1 && output_shape.dim(0) == 4,
                 "output_shape tensor \"", output_shape.name, "\" must be a 1-D tensor of 4 values");
  ctx.RequireValues(node, output_shape, "(output_shape) is computed at run time and decides "
                    "the output shape");
  CheckConstantSize(ctx, node, output_shape, "output_shape");
  DLG_NODE_CHECK(ctx, node, input.rank() == 4, "input tensor \"", input.name,
                 "\" must have rank 4 (NHWC), has rank ", input.rank());
  DLG_NODE_CHECK(ctx, node, weights.rank() == 4, "weights tensor \"", weights.name,
                 "\" must have rank 4 [out_channels, height, width, in_channels], has rank ",
                 weights.rank());
  CheckConstantSize(ctx, node, weights, "weights");

  const int32_t* shape = output_shape.data_as<int32_t>();
  std::vector<int32_t> out_dims(shape, shape + 4);
  for (int i = 0; i < 4; ++i)
    DLG_NODE_CHECK(ctx, node, out_dims[i] >= 0, "output_shape has negative dimension ",
                   out_dims[i]);

  reference::TransposeConvGeometry g;
  g.batches = input.dim(0);
  g.input_height = input.dim(1);
  g.input_width = input.dim(2);
  g.input_depth = input.dim(3);
  g.output_depth = weights.dim(0);
  g.filter_height = weights.dim(1);
  g.filter_width = weights.dim(2);
  g.output_height = out_dims[1];
  g.output_width = out_dims[2];
  g.stride_height = params->stride_h;
  g.stride_width = params->stride_w;
  DLG_NODE_CHECK(ctx, node, weights.dim(3) == g.input_depth, "weights tensor \"", weights.name,
                 "\" has ", weights.dim(3), " input channels, input \"", input.name, "\" has ",
                 g.input_depth);
  DLG_NODE_CHECK(ctx, node, out_dims[0] == g.batches, "output_shape batch ", out_dims[0],
                 " differs from the input batch ", g.batches);
  DLG_NODE_CHECK(ctx, node, out_dims[3] == g.output_depth, "output_shape depth ", out_dims[3],
                 " differs from the weights' output channels ", g.output_depth);
  DLG_NODE_CHECK(ctx, node, g.stride_height > 0 && g.stride_width > 0, "strides must be positive, got ",
                 g.stride_height, "x", g.stride_width);
  DLG_NODE_CHECK(ctx, node, g.filter_height > 0 && g.filter_width > 0,
                 "weights must have a non-empty spatial extent");

  reference::WindowDim height, width;
  const bool ok_h = reference::ComputeWindowDim(params->padding, g.output_height,
                                                g.filter_height, g.stride_height, 1, &height);
  const bool ok_w = reference::ComputeWindowDim(params->padding, g.output_width, g.filter_width,
                                                g.stride_width, 1, &width);
  DLG_NODE_CHECK(ctx, node, ok_h && ok_w, "cannot compute the padding for output ",
                 g.output_height, "x", g.output_width, " and filter ", g.filter_height, "x",
                 g.filter_width);
  g.pad_height = height.pad;
  g.pad_width = width.pad;

  auto data = std::make_shared<TransposeConvData>();
  const DataType type = input.type;
  data->type = type;

  const bool supported = type == DataType::kFloat32 || type == DataType::kUInt8 ||
                         type == DataType::kInt8 || type == DataType::kInt16;
  const bool hybrid = type == DataType::kFloat32 && weights.type == DataType::kInt8;
  const DataType weight_type =
      type == DataType::kInt16 || hybrid ? DataType::kInt8 : type;
  DLG_NODE_CHECK(ctx, node, supported && weights.type == weight_type && output.type == type,
                 "unsupported types: input \"", input.name, "\" ", DataTypeName(type),
                 ", weights \"", weights.name, "\" ", DataTypeName(weights.type), ", output \"",
                 output.name, "\" ", DataTypeName(output.type),
                 " (supported: all FLOAT32, all UINT8, all INT8, INT16 with INT8 weights, "
                 "FLOAT32 with INT8 weights)");

  if (bias != nullptr) {
    CheckConstantSize(ctx, node, *bias, "bias");
    DLG_NODE_CHECK(ctx, node, bias->NumElements() == g.output_depth, "bias tensor \"",
                   bias->name, "\" has ", bias->NumElements(), " elements, expected ",
                   g.output_depth);
    bool bias_ok;
    if (type == DataType::kFloat32) {
      bias_ok = bias->type == DataType::kFloat32;
    } else if (type == DataType::kInt16) {
      // LiteRT's reference kernel reads a 16x8 bias as INT64 whatever its type.
      bias_ok = bias->type == DataType::kInt64;
    } else {
      bias_ok = bias->type == DataType::kInt32;
    }
    DLG_NODE_CHECK(ctx, node, bias_ok, "bias tensor \"", bias->name, "\" has type ",
                   DataTypeName(bias->type), ", which ", DataTypeName(type),
                   " TRANSPOSE_CONV does not take");
    if (type != DataType::kFloat32 && type != DataType::kUInt8) {
      DLG_NODE_CHECK(ctx, node, bias->zero_point() == 0, "bias tensor \"", bias->name,
                     "\" must have zero point 0");
    }
  }

  const Activation act = params->activation;
  if (hybrid) {
    DLG_NODE_CHECK(ctx, node, weights.is_constant(), "hybrid weights tensor \"", weights.name,
                   "\" must be constant");
    const WeightQuant w_q = FilterQuant(ctx, node, weights, g.output_depth, 0,
                                        /*require_zero_zero_points=*/true);
    data->hybrid = true;
    data->weight_scales = w_q.scales;
    reference::HybridTransposeConvParams& hp = data->hybrid_params;
    hp.per_channel = w_q.per_channel;
    hp.weight_scales = data->weight_scales.data();
    DLG_NODE_CHECK(ctx, node, quant::ActivationRangeFloat(act, &hp.act_min, &hp.act_max),
                   "fused activation ", ActivationName(act), " is not supported");
    const size_t quantized_bytes =
        static_cast<size_t>(g.batches) * g.input_height * g.input_width * g.input_depth;
    data->scales_offset = (quantized_bytes + 15) / 16 * 16;
    data->zero_points_offset = data->scales_offset + sizeof(float) * g.batches;
    data->acc_offset =
        (data->zero_points_offset + sizeof(int32_t) * g.batches + 15) / 16 * 16;
    node.scratch_bytes = data->acc_offset + g.output_elements() * sizeof(int32_t);
  } else if (type == DataType::kFloat32) {
    DLG_NODE_CHECK(ctx, node,
                   quant::ActivationRangeFloat(act, &data->float_min, &data->float_max),
                   "fused activation ", ActivationName(act), " is not supported");
  } else {
    const bool is16 = type == DataType::kInt16;
    const TensorQuant in_q = ActivationQuant(ctx, node, input, "input", is16);
    const TensorQuant out_q = ActivationQuant(ctx, node, output, "output", is16);
    const WeightQuant w_q = FilterQuant(ctx, node, weights, g.output_depth, 0,
                                        /*require_zero_zero_points=*/type != DataType::kUInt8);
    if (type == DataType::kUInt8 && bias != nullptr) {
      // TFLite's per-tensor multiplier helper insists on a consistent bias scale.
      const double product = static_cast<double>(in_q.scale) * w_q.scales[0];
      const double diff = std::abs(product - static_cast<double>(bias->scale()));
      DLG_NODE_CHECK(ctx, node, diff / out_q.scale <= 0.02, "bias tensor \"", bias->name,
                     "\" scale ", bias->scale(), " does not match input scale * weights scale (",
                     product, ")");
    }
    ComputeMultipliers(ctx, node, in_q.scale, w_q, out_q.scale, g.output_depth,
                       /*legacy_float_product=*/type == DataType::kUInt8, &data->multipliers,
                       &data->shifts);
    QuantActivationRange(ctx, node, act, type, out_q, &data->q.act_min, &data->q.act_max);
    data->q.input_offset = -in_q.zero_point;
    data->q.filter_offset = type == DataType::kUInt8 ? -w_q.zero_point : 0;
    data->q.output_offset = out_q.zero_point;
    data->q.multiplier = data->multipliers.data();
    data->q.shift = data->shifts.data();
    node.scratch_bytes = g.output_elements() * (is16 ? sizeof(int64_t) : sizeof(int32_t));
  }
  data->g = g;
  const optimized::Isa isa = optimized::SelectedIsa();
  if (!hybrid && type == DataType::kFloat32 && ctx.optimized() && weights.is_constant() &&
      (isa == optimized::Isa::kAvx2 || isa == optimized::Isa::kAvx512Vnni)) {
    data->fast_float = true;
    data->float_kernel.Prepare(isa, g, weights.data_as<float>());
  }
  if (!hybrid && (type == DataType::kUInt8 || type == DataType::kInt8) && ctx.optimized() &&
      weights.is_constant() &&
      (isa == optimized::Isa::kAvx2 || isa == optimized::Isa::kAvx512Vnni)) {
    data->fast_quant = true;
    data->quant_kernel.Prepare(isa, g, data->q, type == DataType::kUInt8, weights.data);
    node.scratch_bytes = 0;  // the kernel's sums stay in registers
  }
  if (hybrid && ctx.optimized() &&
      (isa == optimized::Isa::kAvx2 || isa == optimized::Isa::kAvx512Vnni)) {
    data->fast_hybrid = true;
    data->isa = isa;
    data->quant_kernel.PrepareSums(isa, g, weights.data_as<int8_t>());
    // Per-tensor weights repeat their scale: the reference multiplies by it
    // then by the image's, two roundings the per-channel path also makes.
    data->channel_scales.resize(g.output_depth);
    for (int32_t oc = 0; oc < g.output_depth; ++oc)
      data->channel_scales[oc] = data->weight_scales[data->hybrid_params.per_channel ? oc : 0];
    data->offsets_offset = node.scratch_bytes;
    node.scratch_bytes += sizeof(int32_t) * g.batches;
  }
  if (data->fast_float || data->fast_quant || data->fast_hybrid) {
    // About 5 microseconds of multiply-adds before a second thread pays off.
    const double macs = static_cast<double>(g.output_elements()) * g.input_depth *
                        g.filter_height * g.filter_width /
                        (static_cast<double>(g.stride_height) * g.stride_width);
    if (macs < 512.0 * 1024) data->min_parallel_rows = INT64_MAX;
  }
  ctx.SetOutputDims(node, 0, out_dims);
  node.op_data = std::move(data);
}

void EvalTransposeConv(KernelContext& ctx, const Node& node) {
  const TransposeConvData& d = *node.data<TransposeConvData>();
  const Tensor& weights = ctx.in(node, kWeights);
  const Tensor& input = ctx.in(node, kInput);
  const bool has_bias = node.inputs.size() > kBias && node.inputs[kBias] >= 0;
  const Tensor* bias = has_bias ? &ctx.in(node, kBias) : nullptr;
  Tensor& output = ctx.out(node, 0);
  if (d.fast_hybrid) {
    // The reference's steps: each batch quantized (same bytes, scale and zero
    // point), the int32 sums of (q - zero_point) * w, then its float epilogue.
    const reference::TransposeConvGeometry& g = d.g;
    const int64_t in_size = int64_t{g.input_height} * g.input_width * g.input_depth;
    int8_t* quantized = reinterpret_cast<int8_t*>(node.scratch);
    float* scales = reinterpret_cast<float*>(node.scratch + d.scales_offset);
    int32_t* zero_points = reinterpret_cast<int32_t*>(node.scratch + d.zero_points_offset);
    int32_t* acc = reinterpret_cast<int32_t*>(node.scratch + d.acc_offset);
    int32_t* offsets = reinterpret_cast<int32_t*>(node.scratch + d.offsets_offset);
    const float* in = input.data_as<float>();
    for (int32_t b = 0; b < g.batches; ++b) {
      optimized::HybridQuantizeRow(d.isa, in + b * in_size, static_cast<int32_t>(in_size), true,
                                   quantized + b * in_size, &scales[b], &zero_points[b]);
      offsets[b] = -zero_points[b];
    }
    const reference::HybridTransposeConvParams& p = d.hybrid_params;
    const float* b_ptr = bias ? bias->data_as<float>() : nullptr;
    float* out_all = output.data_as<float>();
    const int64_t row_size = int64_t{g.output_width} * g.output_depth;
    ParallelRange(
        ctx, d.quant_kernel.rows(),
        [&](int64_t begin, int64_t end) {
          d.quant_kernel.Sums(quantized, offsets, acc, begin, end);
          for (int64_t row = begin; row < end; ++row) {
            const float scale = scales[row / g.output_height];
            optimized::ConvOutputRows(d.isa, acc + row * row_size, g.output_depth,
                                      static_cast<int>(row_size / g.output_depth), g.output_depth,
                                      d.channel_scales.data(), scale, b_ptr, p.act_min, p.act_max,
                                      out_all + row * row_size, g.output_depth);
          }
        },
        d.min_parallel_rows);
    return;
  }
  if (d.hybrid) {
    reference::HybridTransposeConv(
        d.g, d.hybrid_params, input.data_as<float>(), weights.data_as<int8_t>(),
        bias ? bias->data_as<float>() : nullptr, reinterpret_cast<int8_t*>(node.scratch),
        reinterpret_cast<float*>(node.scratch + d.scales_offset),
        reinterpret_cast<int32_t*>(node.scratch + d.zero_points_offset),
        reinterpret_cast<int32_t*>(node.scratch + d.acc_offset), output.data_as<float>());
    return;
  }
  switch (d.type) {
    case DataType::kFloat32:
      if (d.fast_float) {
        const float* in = input.data_as<float>();
        const float* b = bias ? bias->data_as<float>() : nullptr;
        float* out = output.data_as<float>();
        ParallelRange(
            ctx, d.float_kernel.rows(),
            [&](int64_t begin, int64_t end) {
              d.float_kernel.Run(in, b, d.float_min, d.float_max, out, begin, end);
            },
            d.min_parallel_rows);
        break;
      }
      reference::TransposeConvFloat(d.g, input.data_as<float>(), weights.data_as<float>(),
                                    bias ? bias->data_as<float>() : nullptr, d.float_min,
                                    d.float_max, output.data_as<float>());
      break;
    case DataType::kUInt8:
    case DataType::kInt8:
      if (d.fast_quant) {
        const void* in = input.data;
        const int32_t* b = bias ? bias->data_as<int32_t>() : nullptr;
        void* out = output.data;
        ParallelRange(
            ctx, d.quant_kernel.rows(),
            [&](int64_t begin, int64_t end) { d.quant_kernel.Run(in, b, out, begin, end); },
            d.min_parallel_rows);
        break;
      }
      if (d.type == DataType::kInt8) {
        reference::TransposeConvQuantized<int8_t, int32_t, int32_t>(
            d.g, d.q, input.data_as<int8_t>(), weights.data_as<int8_t>(),
            bias ? bias->data_as<int32_t>() : nullptr, reinterpret_cast<int32_t*>(node.scratch),
            output.data_as<int8_t>());
        break;
      }
      reference::TransposeConvQuantized<uint8_t, int32_t, int32_t>(
          d.g, d.q, input.data_as<uint8_t>(), weights.data_as<uint8_t>(),
          bias ? bias->data_as<int32_t>() : nullptr, reinterpret_cast<int32_t*>(node.scratch),
          output.data_as<uint8_t>());
      break;
    case DataType::kInt16:
      reference::TransposeConvQuantized<int16_t, int64_t, int64_t>(
          d.g, d.q, input.data_as<int16_t>(), weights.data_as<int8_t>(),
          bias ? bias->data_as<int64_t>() : nullptr, reinterpret_cast<int64_t*>(node.scratch),
          output.data_as<int16_t>());
      break;
    default:
      break;
  }
}

}  // namespace delegato
