// The summing part of 8-bit MEAN when the reduced dims are contiguous: the
// input is [outer, reduced, inner] and every output element sums `reduced`
// values `inner` apart (MEAN over H and W of NHWC: outer = batches, inner =
// channels). Integer sums wrap modulo 2^32 like the reference's, so adding
// whole channel vectors row after row gives the reference's sums exactly;
// the final rescale stays the reference's (reference::MeanRescale).
#pragma once

#include <cstdint>

#include "kernels/optimized/isa.h"
#include "kernels/reference/reduce.h"

namespace delegato::optimized {

struct MeanSum8 {
  int64_t outer = 0, reduced = 0, inner = 0;
  bool is_signed = false;  // int8 (else uint8)
  Isa isa = Isa::kScalar;

  // Fills outer/reduced/inner when `s` reduces one contiguous block of dims
  // (with something to reduce); false otherwise.
  bool Plan(const reference::ReduceShape& s);
  // sums[outer * inner] = the reference's int32 sums.
  void Run(const uint8_t* input, int32_t* sums) const { RunRows(input, 0, reduced, sums); }
  // The same sums over reduced rows [row_begin, row_end) only: sums of
  // consecutive row ranges, added with wrapping, are the whole sums (threads
  // sum the rows their cores wrote and the caller adds the parts).
  void RunRows(const uint8_t* input, int64_t row_begin, int64_t row_end, int32_t* sums) const;
};

// float32 MEAN over a plan made by MeanSum8::Plan (its isa picks the code):
// every output adds its `reduced` values to 0.0f in the reference's order
// (row after row; whole vectors of inner positions at a time), then divides
// by `count`, so the result is bit-exact with reference::MeanFloat.
void MeanFloatContiguous(const MeanSum8& plan, float count, const float* input, float* output);

}  // namespace delegato::optimized
