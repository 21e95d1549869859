// Prepare-time helpers shared by the layer ops (TRANSPOSE_CONV, BATCH_MATMUL):
// checked quantization parameters, requantization multipliers and fused
// activation ranges, computed as TFLite's Prepare computes them.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/quantization.h"
#include "ops/kernel.h"

namespace delegato::layer_quant {

inline const char* ActivationName(Activation a) {
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

inline void TypeRange(DataType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case DataType::kUInt8: *lo = 0; *hi = 255; return;
    case DataType::kInt8: *lo = -128; *hi = 127; return;
    case DataType::kInt16: *lo = -32768; *hi = 32767; return;
    default: *lo = INT32_MIN; *hi = INT32_MAX; return;
  }
}

// A constant tensor's buffer must hold exactly its elements.
inline void CheckConstantSize(KernelContext& ctx, const Node& node, const Tensor& t,
                              const char* role) {
  if (!t.is_constant()) return;
  const size_t expected = TensorByteSize(t.type, t.dims);
  DLG_NODE_CHECK(ctx, node, t.bytes == expected, role, " tensor \"", t.name, "\" has ", t.bytes,
                 " bytes of data, its shape needs ", expected);
}

struct TensorQuant {
  float scale = 0.0f;
  int32_t zero_point = 0;
};

// An activation tensor's per-tensor scale and zero point: a positive finite
// scale, a zero point inside the type's range (and 0 when zero_zp_required).
inline TensorQuant ActivationQuant(KernelContext& ctx, const Node& node, const Tensor& t,
                                   const char* role, bool zero_zp_required = false) {
  const Quantization& q = *t.quantization;
  DLG_NODE_CHECK(ctx, node, !q.scale.empty(), role, " tensor \"", t.name, "\" (",
                 DataTypeName(t.type), ") has no quantization parameters");
  DLG_NODE_CHECK(ctx, node, q.scale.size() == 1, role, " tensor \"", t.name,
                 "\" must be quantized per tensor, has ", q.scale.size(), " scales");
  const float scale = q.scale[0];
  DLG_NODE_CHECK(ctx, node, std::isfinite(scale) && scale > 0.0f, role, " tensor \"", t.name,
                 "\" has invalid scale ", scale);
  const int64_t zp = q.zero_point.empty() ? 0 : q.zero_point[0];
  int64_t lo, hi;
  TypeRange(t.type, &lo, &hi);
  DLG_NODE_CHECK(ctx, node, zp >= lo && zp <= hi, role, " tensor \"", t.name, "\" has zero point ",
                 zp, " outside the ", DataTypeName(t.type), " range");
  DLG_NODE_CHECK(ctx, node, !zero_zp_required || zp == 0, role, " tensor \"", t.name, "\" (",
                 DataTypeName(t.type), ") must have zero point 0, has ", zp);
  return TensorQuant{scale, static_cast<int32_t>(zp)};
}

// Weight scales: one, or one per `channels` along quantized dimension `axis`.
struct WeightQuant {
  std::vector<float> scales;
  int32_t zero_point = 0;
  bool per_channel = false;
};

inline WeightQuant FilterQuant(KernelContext& ctx, const Node& node, const Tensor& filter,
                               int32_t channels, int axis, bool require_zero_zero_points) {
  const Quantization& q = *filter.quantization;
  const char* name = filter.name.c_str();
  DLG_NODE_CHECK(ctx, node, !q.scale.empty(), "filter tensor \"", name, "\" (",
                 DataTypeName(filter.type), ") has no quantization parameters");
  WeightQuant w;
  w.per_channel = q.scale.size() > 1;
  if (w.per_channel) {
    DLG_NODE_CHECK(ctx, node, filter.type == DataType::kInt8, "filter tensor \"", name,
                   "\" is quantized per axis but has type ", DataTypeName(filter.type),
                   "; per-axis weights must be INT8");
    DLG_NODE_CHECK(ctx, node, static_cast<int64_t>(q.scale.size()) == channels,
                   "filter tensor \"", name, "\" has ", q.scale.size(),
                   " per-axis scales, expected one per output channel (", channels, ")");
    DLG_NODE_CHECK(ctx, node, q.quantized_dimension == axis, "filter tensor \"", name,
                   "\" quantized_dimension ", q.quantized_dimension,
                   " is not the output-channel dimension ", axis);
  }
  for (float s : q.scale)
    DLG_NODE_CHECK(ctx, node, std::isfinite(s) && s >= 0.0f, "filter tensor \"", name,
                   "\" has invalid scale ", s);
  w.scales = q.scale;
  const int64_t zp = q.zero_point.empty() ? 0 : q.zero_point[0];
  if (require_zero_zero_points) {
    for (int64_t z : q.zero_point)
      DLG_NODE_CHECK(ctx, node, z == 0, "filter tensor \"", name,
                     "\" must have zero points of 0 (symmetric ", DataTypeName(filter.type),
                     " weights), has ", z);
  }
  int64_t lo, hi;
  TypeRange(filter.type, &lo, &hi);
  DLG_NODE_CHECK(ctx, node, zp >= lo && zp <= hi, "filter tensor \"", name, "\" has zero point ",
                 zp, " outside the ", DataTypeName(filter.type), " range");
  w.zero_point = static_cast<int32_t>(zp);
  return w;
}

// One Q31 multiplier and shift per channel. legacy_float_product: TFLite's
// per-tensor helper multiplies the two float scales in float first (uint8
// convolutions, BATCH_MATMUL); the per-channel path multiplies in double.
inline void ComputeMultipliers(KernelContext& ctx, const Node& node, float input_scale,
                               const WeightQuant& w, float output_scale, int32_t channels,
                               bool legacy_float_product, std::vector<int32_t>* multipliers,
                               std::vector<int32_t>* shifts) {
  multipliers->assign(channels, 0);
  shifts->assign(channels, 0);
  for (int32_t c = 0; c < channels; ++c) {
    const float filter_scale = w.per_channel ? w.scales[c] : w.scales[0];
    const double real =
        legacy_float_product
            ? static_cast<double>(input_scale * filter_scale) / static_cast<double>(output_scale)
            : static_cast<double>(input_scale) * static_cast<double>(filter_scale) /
                  static_cast<double>(output_scale);
    int32_t multiplier = 0;
    int shift = 0;
    quant::QuantizeMultiplier(real, &multiplier, &shift);
    DLG_NODE_CHECK(ctx, node, shift <= 31 && shift >= -62, "effective output scale ", real,
                   " of channel ", c, " cannot be requantized");
    (*multipliers)[c] = multiplier;
    (*shifts)[c] = shift;
  }
}

// The clamp range of a fused activation on a quantized output of `type`.
inline void QuantActivationRange(KernelContext& ctx, const Node& node, Activation act,
                                 DataType type, const TensorQuant& out, int32_t* act_min,
                                 int32_t* act_max) {
  DLG_NODE_CHECK(ctx, node, act == Activation::kNone || 6.0f / out.scale < 2.0e9f,
                 "output scale ", out.scale, " is too small for fused activation ",
                 ActivationName(act));
  bool ok = false;
  switch (type) {
    case DataType::kUInt8:
      ok = quant::ActivationRangeQuantized<uint8_t>(act, out.scale, out.zero_point, act_min,
                                                    act_max);
      break;
    case DataType::kInt8:
      ok = quant::ActivationRangeQuantized<int8_t>(act, out.scale, out.zero_point, act_min,
                                                   act_max);
      break;
    case DataType::kInt16:
      ok = quant::ActivationRangeQuantized<int16_t>(act, out.scale, out.zero_point, act_min,
                                                    act_max);
      break;
    default: break;
  }
  DLG_NODE_CHECK(ctx, node, ok, "fused activation ", ActivationName(act),
                 " is not supported for ", DataTypeName(type));
}

}  // namespace delegato::layer_quant
