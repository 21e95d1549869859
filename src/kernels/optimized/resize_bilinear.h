// RESIZE_BILINEAR for uint8 and float32 (single-precision interpolation)
// and int8 (10-bit fixed point), vectorized over channels, bit-exact with
// reference::ResizeBilinearFloat / ResizeBilinearFixed.
//
// Source rows, columns and weights are computed once (Prepare) with the
// reference's own index arithmetic. The float path performs, per lane, the
// reference's operations in its order, one IEEE operation each (this file is
// compiled with -ffp-contract=off so no multiply-add is fused):
// ((p00 (1-dy)) (1-dx) + (p10 dy) (1-dx)) + (p01 (1-dy)) dx + (p11 dy) dx
// (+ 0.5 and truncation for uint8). The int8 path's 20-bit sums are below
// 2^27 in magnitude, so int32 lanes hold them exactly. AVX-512 covers all
// three types; AVX2 covers uint8 and int8 (int32 lanes) and float32; NEON
// covers float32 (the direct rows, 4 lanes) and 8-bit resizes with weights
// in sixteenths (8 int16 lanes); other 8-bit resizes run the scalar loop on
// Arm.
// float32 runs the AVX2 rows on both (8 lanes; a 16-lane version measured
// slower), and so do 8-bit resizes with weights in sixteenths (see
// sixteenths()), in int16 (faster than the 512-bit paths).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/optimized/isa.h"
#include "kernels/reference/resize.h"

namespace delegato::optimized {

class ResizeBilinear {
 public:
  enum class Type { kFloat32, kUInt8, kInt8 };
  static bool Covers(Type type, const reference::ResizeGeometry& g);
  ResizeBilinear(Type type, const reference::ResizeGeometry& g, Isa isa);

  Isa isa() const { return isa_; }
  int64_t rows() const { return int64_t{g_.batches} * g_.output_height; }
  // Output rows [begin, end) ((batch, y) pairs).
  void RunRows(int64_t begin, int64_t end, const void* input, void* output) const;

  struct Taps {
    int32_t lower = 0, upper = 0;
    float weight = 0.0f;        // float paths: d = position - lower
    float one_minus = 0.0f;     // 1 - d
    int32_t weight10 = 0;       // int8 path: 10-bit weight of `upper`
    int16_t weight16 = 0;       // 8-bit sixteenths path: 16 * weight
  };
  // 8-bit with every weight a multiple of 1/16 in [0, 1] (e.g. 33 -> 513
  // with align_corners, or any 2x upsampling with half-pixel centres):
  // - uint8: every float the reference forms is then exact (at most 8 + 8
  //   significant bits), so its result equals the integer
  //   (sum of p * (16 w_y) * (16 w_x) + 128) >> 8;
  // - int8: the 10-bit weights are multiples of 64, so the reference's
  //   20-bit sum is 2^12 times s = sum of p * (16 w_y) * (16 w_x), and its
  //   rounding (half away from zero) is sign(s) ((|s| + 128) >> 8).
  // Both are computed in 16-bit lanes (|s| is at most 2^15).
  bool sixteenths() const { return sixteenths_; }
  const reference::ResizeGeometry& geometry() const { return g_; }
  const Taps* x_taps() const { return x_.data(); }
  const Taps* y_taps() const { return y_.data(); }
  Type type() const { return type_; }

 private:
  Type type_;
  reference::ResizeGeometry g_;
  Isa isa_;
  std::vector<Taps> x_, y_;
  bool sixteenths_ = false;
};

}  // namespace delegato::optimized
