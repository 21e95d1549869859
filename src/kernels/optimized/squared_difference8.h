// int8 SQUARED_DIFFERENCE with broadcasting, vectorized, bit-exact with
// reference::QuantizedSquaredDifference.
//
// Each input's rescale ((x - zero_point) << 7 times a below-one multiplier)
// depends on its byte only: Prepare tabulates it for the 256 bytes (scalar
// path and broadcast values) with the reference's own arithmetic, and the
// vector paths compute it per lane with the exact fixed-point multiply of
// requantize.h. The squared difference fits int32 (|rescaled| <= 2^14), and
// the output rescale is the same exact multiply, then offset and clamp.
#pragma once

#include <cstdint>

#include "kernels/optimized/isa.h"
#include "kernels/reference/compare.h"

namespace delegato::optimized {

class QuantSquaredDifference8 {
 public:
  QuantSquaredDifference8(const reference::QuantizedSquaredDifferenceParams& params, Isa isa);

  Isa isa() const { return isa_; }
  // Output elements [begin, end) of `plan` (any split gives the same bytes).
  void Run(const reference::BroadcastPlan& plan, const int8_t* a, const int8_t* b, int8_t* out,
           int64_t begin, int64_t end) const;

 private:
  reference::QuantizedSquaredDifferenceParams params_;
  Isa isa_;
  int32_t rescaled_a_[256];  // indexed by the byte (uint8_t) of the input
  int32_t rescaled_b_[256];
};

}  // namespace delegato::optimized
