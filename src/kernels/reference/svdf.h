// SVDF: a fully connected layer factored into a feature filter and a time
// filter over a rolling memory (the state), bit-exact with TFLite's
// full-integer kernel (int8 activations, int16 state).
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

}  // namespace delegato::reference
