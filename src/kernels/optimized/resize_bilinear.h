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
// three types; AVX2 covers uint8 and float32 (int8 runs the scalar code),
// and uint8 with weights in sixteenths (see sixteenths()) runs in int16 with
// AVX2 instructions on both (faster than the 512-bit float path).
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
    int16_t weight16 = 0;       // uint8 sixteenths path: 16 * weight
  };
  // uint8 with every weight a multiple of 1/16 in [0, 1] (e.g. 33 -> 513
  // with align_corners): every float the reference forms is then exact (at
  // most 8 + 8 significant bits), so its result equals the integer
  // (sum of p * (16 w_y) * (16 w_x) + 128) >> 8, computed in 16-bit lanes
  // (the sum is at most 255 * 256).
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
