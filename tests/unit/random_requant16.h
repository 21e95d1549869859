// Random per-channel biases and requantization parameters for the int16x8
// fast-path tests (optimized_conv16x8_test, optimized_depthwise16x8_test).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/quantization.h"

namespace delegato::testing {

struct Requant16Params {
  std::vector<int64_t> bias;
  std::vector<int32_t> multiplier, shift;
};

// `realistic`: biases and scales of real layers (|bias| < 2^24, shifts -14..-2),
// which the 32-bit requantization takes; otherwise biases up to 2^40, shifts
// down to -30 and channel 0's right shift beyond 31, pinning the layer to the
// 64-bit path. `extreme_products` > 0: every product at the extreme (2^22),
// the bias bringing the sum of that many of them back near 0.
inline Requant16Params RandomRequant16(std::mt19937& rng, int channels, bool realistic,
                                      int64_t extreme_products) {
  Requant16Params r;
  r.bias.resize(channels);
  r.multiplier.resize(channels);
  r.shift.resize(channels);
  const int bias_bits = realistic ? 24 : 40;
  for (int n = 0; n < channels; ++n) {
    r.bias[n] = std::uniform_int_distribution<int64_t>(-(int64_t{1} << bias_bits),
                                                       int64_t{1} << bias_bits)(rng);
    if (extreme_products > 0) r.bias[n] = -(int64_t{1} << 22) * extreme_products + n * 1000;
    double real = std::ldexp(
        std::uniform_real_distribution<double>(0.5, 1.0)(rng),
        std::uniform_int_distribution<int>(realistic ? -13 : -30, realistic ? -1 : -8)(rng));
    if (!realistic && n == 0) real = std::ldexp(0.75, -25);
    quant::QuantizeMultiplier(real, &r.multiplier[n], &r.shift[n]);
  }
  return r;
}

}  // namespace delegato::testing
