// AVERAGE_POOL_2D and MAX_POOL_2D for float32, uint8, int8 and int16 (zero
// points 0, as TFLite requires).
// Quantized pooling copies the input's scale: the output's parameters only
// set the activation clamp (TFLite does not requantize either).
#include <cmath>
#include <cstdint>
#include <memory>
#include <variant>

#include "kernels/optimized/pooling.h"
#include "kernels/quantization.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/pooling.h"
#include "ops/kernel.h"

namespace delegato {
namespace {

struct PoolData {
  DataType type = DataType::kFloat32;
  reference::PoolGeometry geometry;
  float float_min = 0, float_max = 0;
  int32_t quant_min = 0, quant_max = 0;
  bool fast = false;  // optimized/pooling.h (uint8, int8, float32)
};

const char* ActivationName(Activation a) {
  switch (a) {
    case Activation::kNone: return "NONE";
    case Activation::kRelu: return "RELU";
    case Activation::kReluN1To1: return "RELU_N1_TO_1";
    case Activation::kRelu6: return "RELU6";
    case Activation::kTanh: return "TANH";
    case Activation::kSignBit: return "SIGN_BIT";
  }
  return "UNKNOWN";
}

void PreparePool(KernelContext& ctx, Node& node, bool average) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Pool2DParams* params = std::get_if<Pool2DParams>(&node.def->params);
  DLG_NODE_CHECK(ctx, node, params != nullptr, "missing Pool2DOptions");
  const Tensor& input = ctx.input(node, 0);
  const Tensor& output = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, input.rank() == 4, "input tensor \"", input.name,
                 "\" must have rank 4, has rank ", input.rank());
  const DataType type = input.type;
  DLG_NODE_CHECK(ctx, node,
                 type == DataType::kFloat32 || type == DataType::kUInt8 ||
                     type == DataType::kInt8 || type == DataType::kInt16,
                 "input tensor \"", input.name, "\" has unsupported type ", DataTypeName(type),
                 " (supported: FLOAT32, UINT8, INT8, INT16)");
  DLG_NODE_CHECK(ctx, node, output.type == type, "output tensor \"", output.name, "\" has type ",
                 DataTypeName(output.type), ", input \"", input.name, "\" has ",
                 DataTypeName(type));
  DLG_NODE_CHECK(ctx, node, params->stride_h > 0 && params->stride_w > 0, "stride ",
                 params->stride_h, "x", params->stride_w, " must be positive");

  auto d = std::make_shared<PoolData>();
  d->type = type;
  reference::PoolGeometry& g = d->geometry;
  g.batches = input.dim(0);
  g.input_height = input.dim(1);
  g.input_width = input.dim(2);
  g.depth = input.dim(3);
  g.filter_height = params->filter_h;
  g.filter_width = params->filter_w;
  g.stride_height = params->stride_h;
  g.stride_width = params->stride_w;
  // Filter sizes below 1 give an empty output, as in TFLite.
  const reference::Window2D window = reference::ComputeWindow2D(
      params->padding, g.stride_height, g.stride_width, 1, 1, g.input_height, g.input_width,
      g.filter_height, g.filter_width);
  g.output_height = window.out_height;
  g.output_width = window.out_width;
  g.pad_height = window.pad_height;
  g.pad_width = window.pad_width;
  if (average && g.batches > 0 && g.depth > 0)
    DLG_NODE_CHECK(ctx, node, !reference::PoolHasEmptyWindow(g),
                   "a pooling window lies entirely in the padding");

  bool ok;
  if (type == DataType::kFloat32) {
    ok = quant::ActivationRangeFloat(params->activation, &d->float_min, &d->float_max);
  } else {
    const Quantization& q = *output.quantization;
    DLG_NODE_CHECK(ctx, node, !q.scale.empty(), "output tensor \"", output.name, "\" (",
                   DataTypeName(type), ") has no quantization parameters");
    const float scale = q.scale[0];
    const int64_t zp = q.zero_point.empty() ? 0 : q.zero_point[0];
    DLG_NODE_CHECK(ctx, node, std::isfinite(scale) && scale > 0.0f, "output tensor \"",
                   output.name, "\" has invalid scale ", scale);
    DLG_NODE_CHECK(ctx, node,
                   params->activation == Activation::kNone || 6.0f / scale < 2.0e9f,
                   "output scale ", scale, " is too small for fused activation ",
                   ActivationName(params->activation));
    DLG_NODE_CHECK(ctx, node, zp >= -(int64_t{1} << 31) && zp < (int64_t{1} << 31),
                   "output tensor \"", output.name, "\" has zero point ", zp, " out of range");
    if (type == DataType::kInt16) {
      const Quantization& in_q = *input.quantization;
      const int64_t in_zp = in_q.zero_point.empty() ? 0 : in_q.zero_point[0];
      DLG_NODE_CHECK(ctx, node, in_zp == 0 && zp == 0, "INT16 input \"", input.name,
                     "\" and output \"", output.name, "\" need zero points 0, have ", in_zp,
                     " and ", zp);
    }
    const int32_t zp32 = static_cast<int32_t>(zp);
    switch (type) {
      case DataType::kUInt8:
        ok = quant::ActivationRangeQuantized<uint8_t>(params->activation, scale, zp32,
                                                      &d->quant_min, &d->quant_max);
        break;
      case DataType::kInt16:
        ok = quant::ActivationRangeQuantized<int16_t>(params->activation, scale, zp32,
                                                      &d->quant_min, &d->quant_max);
        break;
      default:
        ok = quant::ActivationRangeQuantized<int8_t>(params->activation, scale, zp32,
                                                     &d->quant_min, &d->quant_max);
        break;
    }
    // A zero point far outside the type can make the range empty; keep it ordered.
    DLG_NODE_CHECK(ctx, node, !ok || d->quant_min <= d->quant_max, "output tensor \"",
                   output.name, "\" zero point ", zp, " leaves no valid output values");
  }
  DLG_NODE_CHECK(ctx, node, ok, "fused activation ", ActivationName(params->activation),
                 " is not supported");

  ctx.SetOutputDims(node, 0, {g.batches, g.output_height, g.output_width, g.depth});
  d->fast = ctx.optimized() && type != DataType::kInt16 &&
            optimized::PoolCovers(optimized::SelectedIsa(), g);
  node.op_data = std::move(d);
}

}  // namespace

void PrepareAveragePool2D(KernelContext& ctx, Node& node) { PreparePool(ctx, node, true); }

void EvalAveragePool2D(KernelContext& ctx, const Node& node) {
  const PoolData& d = *node.data<PoolData>();
  const reference::PoolGeometry& g = d.geometry;
  const Tensor& input = ctx.in(node, 0);
  Tensor& output = ctx.out(node, 0);
  switch (d.type) {
    case DataType::kFloat32: {
      const float* in = input.data_as<float>();
      float* out = output.data_as<float>();
      ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
        if (d.fast)
          optimized::AveragePoolFloat(g, in, d.float_min, d.float_max, out, begin, end);
        else
          reference::AveragePoolFloat(g, in, d.float_min, d.float_max, out, begin, end);
      });
      break;
    }
    case DataType::kUInt8: {
      const uint8_t* in = input.data_as<uint8_t>();
      uint8_t* out = output.data_as<uint8_t>();
      ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
        if (d.fast)
          optimized::AveragePool8(g, false, reinterpret_cast<const uint8_t*>(in), d.quant_min,
                          d.quant_max, reinterpret_cast<uint8_t*>(out), begin, end);
        else
          reference::AveragePoolQuantized(g, in, d.quant_min, d.quant_max, out, begin, end);
      });
      break;
    }
    case DataType::kInt16: {
      const int16_t* in = input.data_as<int16_t>();
      int16_t* out = output.data_as<int16_t>();
      ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
        reference::AveragePoolQuantized(g, in, d.quant_min, d.quant_max, out, begin, end);
      });
      break;
    }
    default: {
      const int8_t* in = input.data_as<int8_t>();
      int8_t* out = output.data_as<int8_t>();
      ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
        if (d.fast)
          optimized::AveragePool8(g, true, reinterpret_cast<const uint8_t*>(in), d.quant_min,
                          d.quant_max, reinterpret_cast<uint8_t*>(out), begin, end);
        else
          reference::AveragePoolQuantized(g, in, d.quant_min, d.quant_max, out, begin, end);
      });
      break;
    }
  }
}

void PrepareMaxPool2D(KernelContext& ctx, Node& node) { PreparePool(ctx, node, false); }

void EvalMaxPool2D(KernelContext& ctx, const Node& node) {
  const PoolData& d = *node.data<PoolData>();
  const reference::PoolGeometry& g = d.geometry;
  const Tensor& input = ctx.in(node, 0);
  Tensor& output = ctx.out(node, 0);
  switch (d.type) {
    case DataType::kFloat32: {
      const float* in = input.data_as<float>();
      float* out = output.data_as<float>();
      ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
        if (d.fast)
          optimized::MaxPoolFloat(g, in, d.float_min, d.float_max, out, begin, end);
        else
          reference::MaxPoolFloat(g, in, d.float_min, d.float_max, out, begin, end);
      });
      break;
    }
    case DataType::kUInt8: {
      const uint8_t* in = input.data_as<uint8_t>();
      uint8_t* out = output.data_as<uint8_t>();
      ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
        if (d.fast)
          optimized::MaxPool8(g, false, reinterpret_cast<const uint8_t*>(in), d.quant_min,
                          d.quant_max, reinterpret_cast<uint8_t*>(out), begin, end);
        else
          reference::MaxPoolQuantized(g, in, d.quant_min, d.quant_max, out, begin, end);
      });
      break;
    }
    case DataType::kInt16: {
      const int16_t* in = input.data_as<int16_t>();
      int16_t* out = output.data_as<int16_t>();
      ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
        reference::MaxPoolQuantized(g, in, d.quant_min, d.quant_max, out, begin, end);
      });
      break;
    }
    default: {
      const int8_t* in = input.data_as<int8_t>();
      int8_t* out = output.data_as<int8_t>();
      ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
        if (d.fast)
          optimized::MaxPool8(g, true, reinterpret_cast<const uint8_t*>(in), d.quant_min,
                          d.quant_max, reinterpret_cast<uint8_t*>(out), begin, end);
        else
          reference::MaxPoolQuantized(g, in, d.quant_min, d.quant_max, out, begin, end);
      });
      break;
    }
  }
}

}  // namespace delegato
