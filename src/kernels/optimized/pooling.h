// AVERAGE_POOL_2D and MAX_POOL_2D for uint8, int8 and float32, vectorized
// across channels (AVX2 code, also run on AVX-512 CPUs), bit-exact with the
// reference kernels (reference/pooling.h):
//   8-bit average: the window's exact int32 sum per channel, then the
//     reference's rounding (sum +- count/2) / count truncated, computed as a
//     double division: the numerator is below 2^25 and the divisor at most
//     2^16, so the correctly rounded quotient never crosses an integer and
//     truncating it gives the integer quotient.
//   float average: the same additions in the same (y, x) order per lane, one
//     IEEE division by the float count.
//   max: per-lane max from the type's lowest value; float max keeps the
//     reference's std::max behaviour (a NaN input is skipped, equal zeros keep
//     the earlier value) by the operand order of maxps.
//   The activation clamp of float values also keeps std::min/std::max's
//   order (a NaN average stays NaN).
// Channels past the last whole vector take the reference's scalar formula.
#pragma once

#include <cstdint>

#include "kernels/optimized/isa.h"
#include "kernels/reference/pooling.h"

namespace delegato::optimized {

// Whether the vector kernels run on `isa` and cover `g` (windows of at most
// 65536 positions, so 8-bit sums stay below 2^24).
bool PoolCovers(Isa isa, const reference::PoolGeometry& g);

// Output rows [row_begin, row_end), as the reference functions of the same names.
void AveragePool8(const reference::PoolGeometry& g, bool is_signed, const uint8_t* input,
                  int32_t act_min, int32_t act_max, uint8_t* output, int64_t row_begin,
                  int64_t row_end);
void MaxPool8(const reference::PoolGeometry& g, bool is_signed, const uint8_t* input,
              int32_t act_min, int32_t act_max, uint8_t* output, int64_t row_begin,
              int64_t row_end);
void AveragePoolFloat(const reference::PoolGeometry& g, const float* input, float act_min,
                      float act_max, float* output, int64_t row_begin, int64_t row_end);
void MaxPoolFloat(const reference::PoolGeometry& g, const float* input, float act_min,
                  float act_max, float* output, int64_t row_begin, int64_t row_end);

}  // namespace delegato::optimized
