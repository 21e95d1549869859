// float32 BATCH_MATMUL, bit-exact with reference::BatchMatMulFloat: each
// output still starts at 0 and adds lhs(m, k) * rhs(k, n) in ascending k as
// separate IEEE multiply and add (no fused multiply-add: the optimized
// sources are compiled with -ffp-contract=off); the vector lanes hold 8
// neighbouring outputs n, so nothing is reassociated. With adj_y the rhs
// matrix is first transposed into scratch so the lanes read contiguous rows.
// AVX2 (also used on AVX-512 CPUs); other ISAs run the reference.
#pragma once

#include <cstddef>

#include "kernels/optimized/isa.h"
#include "kernels/reference/batch_matmul.h"

namespace delegato::optimized {

// Whether the vector variant runs for `isa` (otherwise the reference does).
bool BatchMatMulFloatVectorized(Isa isa);
// Scratch bytes BatchMatMulFloat needs for `g`.
size_t BatchMatMulFloatScratchBytes(const reference::BatchMatMulGeometry& g);
void BatchMatMulFloat(Isa isa, const reference::BatchMatMulGeometry& g, const float* lhs,
                      const float* rhs, float* out, float* scratch);

}  // namespace delegato::optimized
