// ARG_MAX / ARG_MIN of 8-bit tensors over the innermost axis (the
// segmentation-map case: one pixel's class scores are contiguous), one row
// per vector: bit-exact with reference::ArgMinMax (the first extreme wins).
//
// Bytes are mapped to an unsigned order first (int8 ^ 0x80; bitwise NOT for
// the minimum). AVX-512: the row's maximum is found by halving folds, and
// the answer is the first lane equal to it. AVX2 (rows of 8 or more): the
// minimum of 16-bit (inverted byte, position) keys, via phminposuw; also
// used on AVX-512 CPUs for 8 to 32 classes, where it is faster.
#pragma once

#include <cstdint>

#include "kernels/optimized/isa.h"

namespace delegato::optimized {

struct ArgMinMax8 {
  static bool Covers(int64_t axis_size, int64_t inner) {
    return inner == 1 && axis_size >= 1 && axis_size <= 64;
  }
  bool is_max = true;
  bool is_signed = false;  // int8 (else uint8)
  bool index64 = false;    // int64 output (else int32)
  int64_t axis_size = 0;
  Isa isa = Isa::kScalar;
  // Rows [begin, end) of the [outer, axis_size] input.
  void Run(const uint8_t* input, void* output, int64_t begin, int64_t end) const;
};

}  // namespace delegato::optimized
