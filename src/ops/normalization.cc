// LOG_SOFTMAX, L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION and L2_POOL_2D
// (kernels/reference/normalization.h).
#include <cmath>
#include <memory>
#include <variant>

#include "kernels/quantization.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/normalization.h"
#include "ops/kernel.h"

namespace delegato {

namespace {

template <class P>
P ParamsOrDefault(const Node& node) {
  if (const P* p = std::get_if<P>(&node.def->params)) return *p;
  return P{};
}

// Row-wise ops over the last dimension.
struct RowData {
  DataType type = DataType::kFloat32;
  int64_t depth = 0;
  int64_t rows = 0;
  int32_t input_zero_point = 0;
  reference::LocalResponseNormParamsRef lrn;
  reference::QuantizedLogSoftmaxParams log_softmax;
};

std::shared_ptr<RowData> PrepareRows(KernelContext& ctx, Node& node, int max_rank) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, in.type == out.type, "output (tensor \"", out.name, "\") is ",
                 DataTypeName(out.type), ", input (tensor \"", in.name, "\") is ",
                 DataTypeName(in.type));
  DLG_NODE_CHECK(ctx, node, in.rank() >= 1 && in.rank() <= max_rank, "input (tensor \"", in.name,
                 "\") has rank ", in.rank(), ", supported 1 to ", max_rank);
  ctx.SetOutputDims(node, 0, in.dims);
  auto d = std::make_shared<RowData>();
  d->type = in.type;
  d->depth = in.dims.back();
  d->rows = d->depth == 0 ? 0 : in.NumElements() / d->depth;
  return d;
}

constexpr int64_t kMinParallelElements = 4096;

template <class Fn>
void ParallelRows(const KernelContext& ctx, const RowData& d, const Fn& fn) {
  const int64_t min_rows =
      std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(1, d.depth));
  ParallelRange(ctx, d.rows, fn, min_rows);
}

void CheckFixedOutput(const KernelContext& ctx, const Node& node, const Tensor& out, float scale,
                      int32_t zero_point) {
  const Quantization& q = *out.quantization;
  DLG_NODE_CHECK(ctx, node, q.scale.size() == 1 && q.scale[0] == scale &&
                                out.zero_point() == zero_point,
                 "output (tensor \"", out.name, "\") must have scale ", scale, " and zero point ",
                 zero_point);
}

}  // namespace

// ------------------------------------------------------------ LOG_SOFTMAX

// Quantized outputs have scale 16/256 and the zero point at the type's
// maximum (255 or 127), as TFLite requires.
void PrepareLogSoftmax(KernelContext& ctx, Node& node) {
  auto d = PrepareRows(ctx, node, 8);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  if (in.type == DataType::kUInt8 || in.type == DataType::kInt8) {
    const Quantization& q = *in.quantization;
    DLG_NODE_CHECK(ctx, node, q.scale.size() == 1 && std::isfinite(q.scale[0]) && q.scale[0] > 0,
                   "input (tensor \"", in.name, "\") needs one positive scale");
    CheckFixedOutput(ctx, node, out, 16.0f / 256, in.type == DataType::kUInt8 ? 255 : 127);
    DLG_NODE_CHECK(ctx, node, reference::PrepareQuantizedLogSoftmax(q.scale[0], &d->log_softmax),
                   "input scale ", q.scale[0], " is too small for the fixed-point log-softmax");
  } else {
    DLG_NODE_CHECK(ctx, node, in.type == DataType::kFloat32, DataTypeName(in.type),
                   " input (tensor \"", in.name,
                   "\") is not supported, only FLOAT32, UINT8, INT8");
  }
  node.op_data = std::move(d);
}

void EvalLogSoftmax(KernelContext& ctx, const Node& node) {
  const RowData& d = *node.data<RowData>();
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  ParallelRows(ctx, d, [&](int64_t begin, int64_t end) {
    switch (d.type) {
      case DataType::kFloat32:
        reference::LogSoftmaxFloat(in.data_as<float>(), out.data_as<float>(), d.depth, begin, end);
        break;
      case DataType::kUInt8:
        reference::LogSoftmaxQuantized(d.log_softmax, in.data_as<uint8_t>(),
                                       out.data_as<uint8_t>(), d.depth, begin, end);
        break;
      case DataType::kInt8:
        reference::LogSoftmaxQuantized(d.log_softmax, in.data_as<int8_t>(),
                                       out.data_as<int8_t>(), d.depth, begin, end);
        break;
      default: break;
    }
  });
}

// ------------------------------------------------------------ L2_NORMALIZATION

void PrepareL2Normalization(KernelContext& ctx, Node& node) {
  auto d = PrepareRows(ctx, node, 4);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, ParamsOrDefault<L2NormParams>(node).activation == Activation::kNone,
                 "a fused activation is not supported (TFLite ignores none but NONE)");
  if (in.type == DataType::kUInt8 || in.type == DataType::kInt8) {
    const Quantization& q = *in.quantization;
    DLG_NODE_CHECK(ctx, node, q.scale.size() == 1, "input (tensor \"", in.name,
                   "\") must be quantized per tensor");
    d->input_zero_point = in.zero_point();
    CheckFixedOutput(ctx, node, out, 1.0f / 128, in.type == DataType::kUInt8 ? 128 : 0);
  } else {
    DLG_NODE_CHECK(ctx, node, in.type == DataType::kFloat32, DataTypeName(in.type),
                   " input (tensor \"", in.name, "\") is not supported, only FLOAT32, UINT8, INT8");
  }
  node.op_data = std::move(d);
}

void EvalL2Normalization(KernelContext& ctx, const Node& node) {
  const RowData& d = *node.data<RowData>();
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  ParallelRows(ctx, d, [&](int64_t begin, int64_t end) {
    switch (d.type) {
      case DataType::kFloat32:
        reference::L2NormalizeFloat(in.data_as<float>(), out.data_as<float>(), d.depth, begin,
                                    end);
        break;
      case DataType::kUInt8:
        reference::L2NormalizeQuantized(d.input_zero_point, in.data_as<uint8_t>(),
                                        out.data_as<uint8_t>(), d.depth, begin, end);
        break;
      case DataType::kInt8:
        reference::L2NormalizeQuantized(d.input_zero_point, in.data_as<int8_t>(),
                                        out.data_as<int8_t>(), d.depth, begin, end);
        break;
      default: break;
    }
  });
}

// ------------------------------------------------------------ LOCAL_RESPONSE_NORMALIZATION

void PrepareLocalResponseNormalization(KernelContext& ctx, Node& node) {
  auto d = PrepareRows(ctx, node, 4);
  const Tensor& in = ctx.input(node, 0);
  DLG_NODE_CHECK(ctx, node, in.rank() == 4, "input (tensor \"", in.name,
                 "\") must have rank 4, has rank ", in.rank());
  DLG_NODE_CHECK(ctx, node, in.type == DataType::kFloat32, DataTypeName(in.type),
                 " input (tensor \"", in.name, "\") is not supported, only FLOAT32");
  const LocalResponseNormParams p = ParamsOrDefault<LocalResponseNormParams>(node);
  d->lrn = reference::LocalResponseNormParamsRef{p.radius, p.bias, p.alpha, p.beta};
  node.op_data = std::move(d);
}

void EvalLocalResponseNormalization(KernelContext& ctx, const Node& node) {
  const RowData& d = *node.data<RowData>();
  const float* x = ctx.in(node, 0).data_as<float>();
  float* y = ctx.out(node, 0).data_as<float>();
  ParallelRows(ctx, d, [&](int64_t begin, int64_t end) {
    reference::LocalResponseNormFloat(d.lrn, x, y, d.depth, begin, end);
  });
}

// ------------------------------------------------------------ L2_POOL_2D

namespace {
struct L2PoolData {
  reference::PoolGeometry geometry;
  float act_min = 0, act_max = 0;
};
}  // namespace

void PrepareL2Pool2D(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Pool2DParams* params = std::get_if<Pool2DParams>(&node.def->params);
  DLG_NODE_CHECK(ctx, node, params != nullptr, "missing Pool2DOptions");
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, in.rank() == 4, "input (tensor \"", in.name,
                 "\") must have rank 4, has rank ", in.rank());
  DLG_NODE_CHECK(ctx, node, in.type == DataType::kFloat32 && out.type == DataType::kFloat32,
                 "only FLOAT32 is supported, input (tensor \"", in.name, "\") is ",
                 DataTypeName(in.type), ", output ", DataTypeName(out.type));
  DLG_NODE_CHECK(ctx, node, params->stride_h > 0 && params->stride_w > 0, "stride ",
                 params->stride_h, "x", params->stride_w, " must be positive");
  auto d = std::make_shared<L2PoolData>();
  reference::PoolGeometry& g = d->geometry;
  g.batches = in.dim(0);
  g.input_height = in.dim(1);
  g.input_width = in.dim(2);
  g.depth = in.dim(3);
  g.filter_height = params->filter_h;
  g.filter_width = params->filter_w;
  g.stride_height = params->stride_h;
  g.stride_width = params->stride_w;
  const reference::Window2D window = reference::ComputeWindow2D(
      params->padding, g.stride_height, g.stride_width, 1, 1, g.input_height, g.input_width,
      g.filter_height, g.filter_width);
  g.output_height = window.out_height;
  g.output_width = window.out_width;
  g.pad_height = window.pad_height;
  g.pad_width = window.pad_width;
  DLG_NODE_CHECK(ctx, node,
                 quant::ActivationRangeFloat(params->activation, &d->act_min, &d->act_max),
                 "fused activation ", static_cast<int>(params->activation), " is not supported");
  ctx.SetOutputDims(node, 0, {g.batches, g.output_height, g.output_width, g.depth});
  node.op_data = std::move(d);
}

void EvalL2Pool2D(KernelContext& ctx, const Node& node) {
  const L2PoolData& d = *node.data<L2PoolData>();
  const float* x = ctx.in(node, 0).data_as<float>();
  float* y = ctx.out(node, 0).data_as<float>();
  ParallelRange(ctx, d.geometry.output_rows(), [&](int64_t begin, int64_t end) {
    reference::L2PoolFloat(d.geometry, x, d.act_min, d.act_max, y, begin, end);
  });
}

}  // namespace delegato
