// TRANSPOSE as a batch of 2-D transposes of whole elements.
//
// Prepare reduces the permutation to its simplest equivalent: unit dims are
// dropped, input dims that stay next to each other in the output are merged,
// and trailing input dims the permutation keeps last become part of the
// element (an attention layer's [1, S, H, D] -> [1, H, S, D] is then a
// [S, H] -> [H, S] transpose of D-value elements, its key transpose
// [1, S, H, D] -> [1, H, D, S] one of [S, H D] -> [H D, S] values). Eval then
// writes output rows (all output dims but the last fixed) in blocks: 4-byte
// values in 8x8 blocks transposed in AVX2 registers (4x4 in NEON), 2-4
// planes interleaved at a constant width, elements of 16, 32 or 64 bytes as
// fixed-size copies, other sizes one element at a time.
// Results are the reference's byte for byte (a transpose only moves bytes).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/optimized/isa.h"

namespace delegato::optimized {

inline constexpr int kMaxTransposePlanRank = 6;

struct TransposePlan {
  Isa isa = Isa::kScalar;
  int rank = 0;                               // 0: the whole tensor is one element (a copy)
  int64_t element_bytes = 0;                  // bytes moved as one unit
  int64_t dims[kMaxTransposePlanRank] = {};   // output dims, in units
  int64_t steps[kMaxTransposePlanRank] = {};  // the input stride of each, in units
};

// `dims` are the input's, output dim d is input dim perm[d]; rank in
// [0, kMaxTransposePlanRank], perm a permutation of 0..rank-1.
TransposePlan PlanTranspose(Isa isa, size_t element_size, int rank, const int32_t* dims,
                            const int32_t* perm);

// Output rows (the product of every output dim but the last; 1 for a copy):
// the unit threads split.
int64_t TransposeRows(const TransposePlan& plan);

// Writes output rows [row_begin, row_end).
void Transpose(const TransposePlan& plan, const uint8_t* input, uint8_t* output, int64_t row_begin,
               int64_t row_end);

}  // namespace delegato::optimized
