// 8-bit SOFTMAX over the last dimension, bit-exact with
// reference::SoftmaxQuantized.
//
// The reference's fixed-point exp depends only on d = row_max - x, which is
// in [0, 255] for 8-bit inputs, and on the Prepare-time parameters. Build()
// evaluates the reference's exp (and its Q12.19 rescale for the sum) for
// all 256 differences once, so Eval is a max, a table-lookup sum, the
// reference's reciprocal and one fixed-point multiply per element. Entries
// with d beyond the radius (the reference skips them) hold 0: they add 0 to
// the sum and give the output minimum, as in the reference.
#pragma once

#include <cstdint>

#include "kernels/reference/softmax.h"

namespace delegato::optimized {

class QuantSoftmax8 {
 public:
  enum class Output { kUInt8, kInt8, kInt16 };

  // in_signed: int8 input, else uint8.
  void Build(const reference::QuantizedSoftmaxParams& params, bool in_signed, Output output);

  // Rows [row_begin, row_end) of `depth` elements; out holds uint8, int8 or
  // int16 elements per Output.
  void Run(const void* in, void* out, int64_t depth, int64_t row_begin, int64_t row_end) const;

 private:
  template <class In, class Out>
  void RunTyped(const In* in, Out* out, int64_t depth, int64_t row_begin, int64_t row_end) const;

  int32_t exp_[256] = {};      // exp(-d) in Q0.31 (0 past the radius)
  int32_t exp_sum_[256] = {};  // the same rescaled to Q12.19, as summed
  bool in_signed_ = false;
  Output output_ = Output::kUInt8;
};

}  // namespace delegato::optimized
