// Inputs whose dynamic-range quantization lands on exact half steps, so the
// LiteRT replay checks how each hybrid kernel rounds them. Each row holds its
// range's two extremes, then values that quantize to k + 1/2. All values are
// multiples of 2^-6 and the scales powers of two, so every product is exact:
// symmetric rows span [-127, 127] * 2^-6 (scale 2^-6, zero point 0);
// asymmetric rows alternate [-101, 154] * 2^-6 (zero point -27) and
// [-160, 95] * 2^-6 (zero point 32), where a half step rounds differently
// before and after the zero point is added.
#pragma once

#include <cstddef>
#include <vector>

namespace delegato::testing {

inline void FillTieRows(std::vector<float>& values, size_t row_length, bool asymmetric) {
  static constexpr float kTies[] = {0.5f, -2.5f, 1.5f, -0.5f, 2.5f, 3.5f, -1.5f, 4.5f, -3.5f};
  constexpr float kStep = 1.0f / 64;
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t row = i / row_length, column = i % row_length;
    float hi = 127, lo = -127;
    if (asymmetric) {
      hi = row % 2 == 0 ? 154 : 95;
      lo = row % 2 == 0 ? -101 : -160;
    }
    float v = kTies[(column + row) % (sizeof kTies / sizeof kTies[0])];
    if (column == 0) v = hi;
    if (column == 1) v = lo;
    values[i] = v * kStep;
  }
}

}  // namespace delegato::testing
