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
// 2^27 in magnitude, so int32 lanes hold them exactly.
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
  };
  const reference::ResizeGeometry& geometry() const { return g_; }
  const Taps* x_taps() const { return x_.data(); }
  const Taps* y_taps() const { return y_.data(); }
  Type type() const { return type_; }

 private:
  Type type_;
  reference::ResizeGeometry g_;
  Isa isa_;
  std::vector<Taps> x_, y_;
};

}  // namespace delegato::optimized
