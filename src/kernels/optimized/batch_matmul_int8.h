// int8 BATCH_MATMUL with a requantized int8 output (AVX-512, AVX2), bit-exact
// with reference::BatchMatMulQuantized<int8_t, int32_t>.
//
// Per output matrix the rhs is widened once into scratch as int32
// `rhs(k, n) + rhs_offset` in [k][n] order (transposed when adj_y; columns
// padded to 16 with zeros); each output row then sums, over k, the broadcast
// `lhs(m, k) + lhs_offset` times a vector of columns in int32 lanes (integer
// sums wrap alike in any order), and requantizes with the single multiplier
// (requantize.h: TFLite's fixed-point steps per lane), output offset, clamp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/optimized/isa.h"
#include "kernels/reference/batch_matmul.h"

namespace delegato::optimized {

// Whether `isa` has the vector kernel (AVX2, AVX-512; scalar: no).
bool BatchMatMulInt8Vectorized(Isa isa);
// Scratch bytes BatchMatMulInt8 needs for `g` (one widened rhs matrix).
size_t BatchMatMulInt8ScratchBytes(const reference::BatchMatMulGeometry& g);
// Needs BatchMatMulInt8Vectorized(isa); otherwise runs the reference.
void BatchMatMulInt8(Isa isa, const reference::BatchMatMulGeometry& g,
                     const reference::BatchMatMulQuantParams& q, const int8_t* lhs,
                     const int8_t* rhs, int8_t* out, int32_t* scratch);

}  // namespace delegato::optimized
