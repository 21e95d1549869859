// SVDF: a fully connected layer factored into a feature filter and a time
// filter over a rolling memory (the state): TFLite's full-integer kernel (int8
// activations, int16 state, bit-exact), its float kernel and its hybrid kernel
// (int8 weights, float activations and state; within float rounding).
//
// Shapes: input [batch, input_size], weights_feature [filters, input_size],
// weights_time [filters, memory], bias [units] (optional), state
// [batch, memory * filters] laid out as [batch][filter][memory], output
// [batch, units] with units = filters / rank.
//
// One step: shift the whole state buffer left by one element, write each
// filter's feature activation into its newest memory slot, dot every filter's
// memory with its time weights, sum each group of `rank` filters into a unit,
// add the bias, requantize to int8.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/quantization.h"
#include "kernels/reference/lstm_float.h"

namespace delegato::reference {

struct SvdfShape {
  int32_t batch = 0;
  int32_t input_size = 0;
  int32_t filters = 0;
  int32_t memory = 0;
  int32_t rank = 1;
  int32_t units() const { return filters / rank; }
};

// Drops the oldest value of the flat state buffer (TFLite shifts the whole
// buffer, so each filter's newest slot briefly holds its neighbour's oldest).
template <class T>
void SvdfShiftState(const SvdfShape& s, T* state) {
  const int64_t size = static_cast<int64_t>(s.batch) * s.memory * s.filters;
  if (size > 1) std::copy(state + 1, state + size, state);
}

// Full-integer SVDF: int8 input/weights_feature/output, int16 weights_time and
// state, int32 bias. feature_* rescales input*weights_feature into the state's
// scale, output_* rescales state*weights_time into the output's scale.
struct SvdfIntegerParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t feature_multiplier = 0;
  int feature_shift = 0;
  int32_t output_multiplier = 0;
  int output_shift = 0;
};

// `scratch` holds batch * filters int32 values.
inline void SvdfInteger(const SvdfShape& s, const SvdfIntegerParams& p, const int8_t* input,
                        const int8_t* weights_feature, const int16_t* weights_time,
                        const int32_t* bias, int16_t* state, int32_t* scratch, int8_t* output) {
  SvdfShiftState(s, state);
  for (int32_t b = 0; b < s.batch; ++b) {
    const int8_t* x = input + static_cast<int64_t>(b) * s.input_size;
    for (int32_t f = 0; f < s.filters; ++f) {
      const int8_t* w = weights_feature + static_cast<int64_t>(f) * s.input_size;
      int32_t dot = 0;
      for (int32_t c = 0; c < s.input_size; ++c) dot += w[c] * (x[c] - p.input_zero_point);
      dot = quant::MultiplyByQuantizedMultiplier(dot, p.feature_multiplier, p.feature_shift);
      dot = std::clamp<int32_t>(dot, INT16_MIN, INT16_MAX);
      // The state is symmetric (zero point 0), so the value is stored as is.
      const int64_t i = static_cast<int64_t>(b) * s.filters + f;
      state[i * s.memory + s.memory - 1] = static_cast<int16_t>(dot);
    }
  }
  for (int32_t b = 0; b < s.batch; ++b) {
    for (int32_t f = 0; f < s.filters; ++f) {
      const int64_t i = static_cast<int64_t>(b) * s.filters + f;
      const int16_t* m = state + i * s.memory;
      const int16_t* w = weights_time + static_cast<int64_t>(f) * s.memory;
      // Wrapping 32-bit accumulation, like the int32 sum it reproduces.
      uint32_t dot = 0;
      for (int32_t k = 0; k < s.memory; ++k)
        dot += static_cast<uint32_t>(static_cast<int32_t>(w[k]) * m[k]);
      scratch[i] = static_cast<int32_t>(dot);
    }
  }
  const int32_t units = s.units();
  for (int32_t b = 0; b < s.batch; ++b) {
    for (int32_t u = 0; u < units; ++u) {
      const int64_t o = static_cast<int64_t>(b) * units + u;
      uint32_t sum = 0;
      for (int32_t r = 0; r < s.rank; ++r) sum += static_cast<uint32_t>(scratch[o * s.rank + r]);
      if (bias != nullptr) sum += static_cast<uint32_t>(bias[u]);
      int32_t value = quant::MultiplyByQuantizedMultiplier(static_cast<int32_t>(sum),
                                                           p.output_multiplier, p.output_shift);
      value = std::clamp<int32_t>(value + p.output_zero_point, INT8_MIN, INT8_MAX);
      output[o] = static_cast<int8_t>(value);
    }
  }
}

// Float and hybrid SVDF share the tail: state * weights_time per filter, the
// rank sum per unit, the bias, the activation.
struct SvdfFloatParams {
  LstmActivation activation = LstmActivation::kNone;
};

namespace svdf_internal {

// `scratch` holds batch * filters floats.
inline void TimeWeightsBiasActivation(const SvdfShape& s, LstmActivation activation,
                                      const float* weights_time, const float* bias,
                                      const float* state, float* scratch, float* output) {
  for (int32_t b = 0; b < s.batch; ++b) {
    for (int32_t f = 0; f < s.filters; ++f) {
      const int64_t i = static_cast<int64_t>(b) * s.filters + f;
      const float* m = state + i * s.memory;
      const float* w = weights_time + static_cast<int64_t>(f) * s.memory;
      float dot = 0.0f;
      for (int32_t k = 0; k < s.memory; ++k) dot += w[k] * m[k];
      scratch[i] = dot;
    }
  }
  const int32_t units = s.units();
  for (int32_t b = 0; b < s.batch; ++b) {
    for (int32_t u = 0; u < units; ++u) {
      const int64_t o = static_cast<int64_t>(b) * units + u;
      float sum = 0.0f;
      for (int32_t r = 0; r < s.rank; ++r) sum += scratch[o * s.rank + r];
      if (bias != nullptr) sum += bias[u];
      output[o] = lstm_float_internal::Activate(activation, sum);
    }
  }
}

}  // namespace svdf_internal

// Float SVDF: every tensor float32. `scratch` holds batch * filters floats.
inline void SvdfFloat(const SvdfShape& s, const SvdfFloatParams& p, const float* input,
                      const float* weights_feature, const float* weights_time, const float* bias,
                      float* state, float* scratch, float* output) {
  SvdfShiftState(s, state);
  for (int32_t b = 0; b < s.batch; ++b) {
    const float* x = input + static_cast<int64_t>(b) * s.input_size;
    for (int32_t f = 0; f < s.filters; ++f) {
      const float* w = weights_feature + static_cast<int64_t>(f) * s.input_size;
      float dot = 0.0f;
      for (int32_t c = 0; c < s.input_size; ++c) dot += w[c] * x[c];
      const int64_t i = static_cast<int64_t>(b) * s.filters + f;
      state[i * s.memory + s.memory - 1] = dot;
    }
  }
  svdf_internal::TimeWeightsBiasActivation(s, p.activation, weights_time, bias, state, scratch,
                                           output);
}

// Hybrid SVDF: int8 weights_feature (per-tensor scale, zero point 0) with float
// input, state, bias and output; weights_time is dequantized once to float by
// the caller (int8 value * its scale). Each batch row of the input is quantized
// (symmetric, or asymmetric in double with `feature_row_sums` correcting the
// zero point, as TFLite's portable BatchQuantizeFloats);
// an all-zero input skips the feature product (its activations are 0).
struct SvdfHybridParams {
  LstmActivation activation = LstmActivation::kNone;
  bool asymmetric = false;
  float feature_scale = 1.0f;
  const int32_t* feature_row_sums = nullptr;  // filters values, used when asymmetric
};

// scratch: batch * filters floats; quantized: batch * input_size;
// row_scales, zero_points: batch values each.
inline void SvdfHybrid(const SvdfShape& s, const SvdfHybridParams& p, const float* input,
                       const int8_t* weights_feature, const float* weights_time,
                       const float* bias, float* state, float* scratch, int8_t* quantized,
                       float* row_scales, int32_t* zero_points, float* output) {
  SvdfShiftState(s, state);
  const int64_t n = static_cast<int64_t>(s.batch) * s.filters;
  std::fill(scratch, scratch + n, 0.0f);
  if (!lstm_hybrid_internal::AllZero(input, s.batch * s.input_size)) {
    BatchQuantizeRows(input, s.batch, s.input_size, p.asymmetric, quantized, row_scales,
                      zero_points);
    lstm_hybrid_internal::MatVecAccumulate(weights_feature, p.feature_scale, p.feature_row_sums,
                                           s.filters, s.input_size, quantized, row_scales,
                                           zero_points, p.asymmetric, s.batch, scratch);
  }
  for (int64_t i = 0; i < n; ++i) state[i * s.memory + s.memory - 1] = scratch[i];
  svdf_internal::TimeWeightsBiasActivation(s, p.activation, weights_time, bias, state, scratch,
                                           output);
}

}  // namespace delegato::reference
