// float32 CONV_2D 3x3, stride 1, by Winograd's minimal filtering F(2x2, 3x3):
// each 2x2 block of output pixels ("tile") comes from the 4x4 input patch d
// under it as Y = A^T [ (G g G^T) .* (B^T d B) ] A, 16 multiplications per
// tile and channel pair instead of 36. Per block of tiles:
//   1. the input transform B^T d B of every input channel (adds only), into
//      16 matrices V[xi][tile][in];
//   2. 16 GEMMs M[xi] = V[xi] U[xi], U[xi][in][out] the transformed weights
//      G g G^T (computed in double in Prepare, rounded once), packed in
//      panels of two vectors of output channels like FloatConv's;
//   3. the output transform A^T M A (adds only), then bias and the clamp.
// B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; 1/2 1/2 1/2;
// 1/2 -1/2 1/2; 0 0 1], A^T = [1 1 1 0; 0 1 -1 -1].
//
// Not bit-exact with the reference (nor with FloatConv): the transforms add
// and subtract inputs and sums before and after the products, so a result
// carries rounding errors of a few ulp of the larger intermediate values, of
// the order of 1e-6 of the sum of the absolute values of its terms (the
// tests bound it). Those intermediates mix the whole 4x4 patch: an input
// far larger than its neighbours adds its own rounding error to all four
// outputs of its tile, and an infinite or NaN input makes all four NaN (the
// reference: only the outputs whose window holds it). A non-finite
// reference output is never finite here. Results do not depend on the
// thread count.
//
// Tiles are numbered (batch, tile row, tile column); a task takes a
// contiguous range of them, in blocks of rows() tiles. Tiles past the image's
// last row or column read zeros and their extra outputs are not stored.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/float_conv.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/conv.h"

namespace delegato::optimized {

class FloatWinograd {
 public:
  // 3x3, stride 1, no dilation, ungrouped, on a vector ISA (AVX2, AVX-512,
  // the Arm ISAs), with transformed weights of at most kMaxWeightBytes (16
  // floats per channel pair: 512 x 512 channels). Every block of tiles
  // reads all of them; past L2 it still pays (7x7x512 -> 512 on AVX2,
  // 16 MB: 3.35 -> 2.08 ms), but they take 16/9 of the filter's memory.
  static bool Covers(const reference::ConvGeometry& g, Isa isa);
  // Whether it is chosen over FloatConv for this layer (measured, see
  // docs/performance_notes.md): enough input and output channels that the
  // transforms cost less than the products they save. DELEGATO_WINOGRAD=0
  // (read once) keeps every layer on the GEMM.
  static bool Pays(const reference::ConvGeometry& g);
  static constexpr size_t kMaxWeightBytes = size_t{16} << 20;

  FloatWinograd(const FloatConvParams& params, Isa isa, int num_threads);

  Isa isa() const { return isa_; }
  int num_tasks() const { return num_tasks_; }
  size_t scratch_bytes() const { return per_task_bytes_ * num_tasks_; }
  // Task `task` of num_tasks(): its own range of tiles; scratch holds
  // scratch_bytes(), 64-byte aligned.
  void RunTask(int task, const float* input, float* output, uint8_t* scratch) const;
  // Every tile on the calling thread (a grouped layer's group);
  // task_scratch holds task_scratch_bytes(), 64-byte aligned.
  void RunAll(const float* input, float* output, uint8_t* task_scratch) const {
    RunTiles(0, tiles(), input, output, reinterpret_cast<float*>(task_scratch));
  }
  size_t task_scratch_bytes() const { return per_task_bytes_; }
  size_t packed_bytes() const { return weights_.bytes() + bias_.bytes(); }

  // Layout, shared with the per-ISA loops.
  struct Layout {
    int32_t batches = 0, in_h = 0, in_w = 0, in_c = 0;
    int32_t out_h = 0, out_w = 0, out_c = 0;
    int32_t pad_h = 0, pad_w = 0;
    int32_t tiles_y = 0, tiles_x = 0;
    int cp = 0;  // input channels padded to the vector width
    int kp = 0;  // output channels padded to the vector width
    int rows = 0;  // tiles per block
    float act_min = 0, act_max = 0;
  };
  const Layout& layout() const { return l_; }
  int64_t tiles() const { return int64_t{l_.batches} * l_.tiles_y * l_.tiles_x; }

 private:
  void RunTiles(int64_t begin, int64_t end, const float* input, float* output,
                float* scratch) const;

  Layout l_;
  Isa isa_ = Isa::kAvx2;
  AlignedBuffer<float> weights_;  // [xi][panel][cp][panel width], zero padded
  AlignedBuffer<float> bias_;     // [kp]
  int num_tasks_ = 1;
  int64_t blocks_per_task_ = 0;
  size_t per_task_bytes_ = 0;
};

}  // namespace delegato::optimized
