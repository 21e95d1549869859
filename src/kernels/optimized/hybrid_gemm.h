// Dynamic-range ("hybrid") CONV_2D and FULLY_CONNECTED: float activations,
// constant int8 weights, bit-exact with reference::HybridConv and
// reference::HybridFullyConnected.
//
// The reference quantizes each image (CONV_2D) or row (FULLY_CONNECTED) of
// the input to int8 with a scale and zero point of its own, sums
// w * (q - zero_point) in int32 and scales the sum back in float. Here the
// same int8 values (the reference's quantizer) are widened to int16 as
// q - zero_point (in [-255, 255]; padded taps and the K tail are 0), and the
// weights are packed once as int16 pairs, [16-channel block][k/2][16][2], so
// one vpmaddwd (AVX2) or vpdpwssd (AVX-512 VNNI) adds two exact products per
// 32-bit lane (|sum of a pair| <= 2 * 255 * 128, no saturation). Integer sums
// are exact in any order (wrapping like the reference's), and the float
// epilogue performs the reference's operations in its order (no fused
// multiply-add: the optimized sources are compiled with -ffp-contract=off),
// so outputs are identical for every ISA and thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/grouped_conv.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/batch_matmul.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/hybrid.h"

namespace delegato::optimized {

// Whether `isa` has vector variants here and in HybridDepthwiseKernel (AVX2,
// AVX-512 VNNI, and NEON on aarch64 builds; FULLY_CONNECTED's float outputs
// stay a scalar loop everywhere). The ops use these kernels only then: the
// scalar variant (tested like the others) is slower than the reference on
// one-row FULLY_CONNECTED, which reads int16 weights instead of int8.
inline bool HybridVectorIsa(Isa isa) {
  return (DELEGATO_X86 && (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni)) ||
         (DELEGATO_ARM && IsArmIsa(isa));
}

// int32 sums of int8 weights [n][k] against int16 rows.
class HybridGemm {
 public:
  HybridGemm(const int8_t* weights, int n, int k, Isa isa);

  int n() const { return n_; }
  int k() const { return k_; }
  int k_padded() const { return k_padded_; }  // k rounded up to 2: the row length of A
  int n_padded() const { return n_padded_; }  // n rounded up to 16: the row length of acc
  Isa isa() const { return isa_; }

  // acc[r][c] = sum_k W[c][k] * a[r][k] for r < rows, c < n (columns up to
  // n_padded() are written too). `a`: rows of k_padded() int16 (tail 0).
  void Multiply(const int16_t* a, int rows, int32_t* acc) const;

  size_t packed_bytes() const { return packed_.bytes(); }

 private:
  int n_ = 0, k_ = 0, k_padded_ = 0, n_padded_ = 0;
  Isa isa_ = Isa::kScalar;
  AlignedBuffer<int16_t> packed_;  // [n_padded / 16][k_padded / 2][16][2]
};

// a[i] = q[i] - zero_point for i < k, 0 up to k_padded.
void WidenRow(Isa isa, const int8_t* q, int k, int32_t zero_point, int16_t* a, int k_padded);

// Quantizes n floats as the reference's SymmetricQuantizeRow /
// AsymmetricQuantizeRow do (same int8 values, scale and zero point); the
// range and the rounding in vectors.
void HybridQuantizeRow(Isa isa, const float* values, int32_t n, bool asymmetric,
                       int8_t* quantized, float* scale, int32_t* zero_point);
// HybridQuantizeRow over `rows` rows (row r at values + r * stride, quantized
// to quantized + r * n), with the same results; the rows' scales and zero
// points are computed 8 at a time in vectors, so short rows (a transformer's
// 32-64 features) do not wait on one chain of divisions each.
void HybridQuantizeRows(Isa isa, const float* values, int64_t stride, int rows, int32_t n,
                        bool asymmetric, int8_t* quantized, float* scales, int32_t* zero_points);

// `rows` pixels' float outputs from their int32 sums (row r's n sums at
// acc + r * acc_stride, its outputs at out + r * out_stride), in the
// reference's order:
//   weight_scales given: float(acc[c]) * weight_scales[c] * image_scale
//   none:                float(acc[c]) * image_scale
// plus bias[c] when given, clamped to [act_min, act_max]; vectors on AVX2 and
// AVX-512 (NEON per row), the same values as the scalar loop.
void ConvOutputRows(Isa isa, const int32_t* acc, size_t acc_stride, int rows, int n,
                    const float* weight_scales, float image_scale, const float* bias,
                    float act_min, float act_max, float* out, size_t out_stride);

// Hybrid CONV_2D (ungrouped, no dilation): the quantized image widened once
// to int16 q - zero_point inside a zero border, im2col rows copied from it
// (a window's filter row is one run; 1x1 convolutions over an even depth read
// its pixels in place), HybridGemm, then per output
//   per-channel weights: float(acc) * weight_scale[c] * image_scale
//   per-tensor weights:  float(acc) * image_scale  (image_scale includes the weight scale)
// plus bias, clamped to [act_min, act_max].
struct HybridConvKernelParams {
  reference::ConvGeometry geometry;
  const int8_t* filter = nullptr;        // [out][filter_y][filter_x][in]
  bool per_channel = false;
  const float* weight_scales = nullptr;  // per output channel (per_channel)
  float act_min = 0, act_max = 0;
};

class HybridConvKernel {
 public:
  static bool Covers(const reference::ConvGeometry& g);
  HybridConvKernel(const HybridConvKernelParams& params, Isa isa, int num_threads);

  // The batches' widened images, then each task's panels.
  size_t scratch_bytes() const {
    return image_bytes_ * p_.geometry.batches + per_task_bytes_ * num_tasks_;
  }
  int num_tasks() const { return num_tasks_; }
  // Stores image `batch` (quantized as the reference's QuantizeConvInput
  // leaves it) into scratch as int16 q - zero_point with the padding around
  // it 0, so every window's filter row is one contiguous run. Every batch's
  // image is widened before any RunTask.
  void WidenImage(int64_t batch, const int8_t* quantized_image, int32_t zero_point,
                  uint8_t* scratch) const;
  // scales: the batches' image scales (times the weight scale for per-tensor
  // weights).
  void RunTask(int task, const float* scales, const float* bias, float* output,
               uint8_t* scratch) const;
  Isa isa() const { return gemm_.isa(); }

 private:
  HybridConvKernelParams p_;
  HybridGemm gemm_;
  int32_t padded_height_ = 0, padded_width_ = 0;
  bool rows_in_place_ = false;
  int block_rows_ = 0;
  int num_tasks_ = 1;
  size_t image_bytes_ = 0, panel_bytes_ = 0, per_task_bytes_ = 0;
};

// Hybrid grouped CONV_2D with per-channel weights (the reference's
// HybridConv with groups): one HybridConvKernel per group over the image the
// caller quantized whole (one scale and zero point per batch, as the
// reference). A task takes whole groups and, for each, gathers the group's
// quantized channels, widens them, runs the group's GEMM on the calling
// thread and scatters the outputs into the group's channels. Bit-exact.
class HybridGroupedConv {
 public:
  // More than one group, each of which HybridConvKernel covers.
  static bool Covers(const reference::ConvGeometry& g);
  // params.per_channel must be set; weight_scales one per output channel.
  HybridGroupedConv(const HybridConvKernelParams& params, Isa isa, int num_threads);
  ~HybridGroupedConv();

  int num_tasks() const { return num_tasks_; }
  size_t scratch_bytes() const { return scratch_.per_task_bytes * num_tasks_; }
  // Task `task` of num_tasks(): `quantized` holds every batch's image,
  // `zero_points` and `scales` (the image scales) one per batch.
  void RunTask(int task, const int8_t* quantized, const int32_t* zero_points,
               const float* scales, const float* bias, float* output, uint8_t* scratch) const;

 private:
  reference::ConvGeometry g_;
  std::vector<std::unique_ptr<HybridConvKernel>> groups_;
  int num_tasks_ = 1;
  GroupedScratch scratch_;
};

// Hybrid FULLY_CONNECTED: each input row quantized (symmetric or asymmetric),
// then out = (bias or 0) + float(acc) * (row_scale * weight_scale), clamped
// when `clamp`.
struct HybridFullyConnectedKernelParams {
  int32_t depth = 0, units = 0;
  const int8_t* weights = nullptr;  // [units][depth]
  const float* weight_scales = nullptr;
  bool per_channel = false;
  bool asymmetric = false;
  bool clamp = false;
  float act_min = 0, act_max = 0;
};

class HybridFullyConnectedKernel {
 public:
  HybridFullyConnectedKernel(const HybridFullyConnectedKernelParams& params, Isa isa);

  // Scratch for `rows` input rows processed by one call of Run.
  size_t scratch_bytes(int64_t rows) const;
  // Rows [begin, end) of input [batches][depth] into output [batches][units];
  // scratch: scratch_bytes(end - begin).
  void Run(const float* input, const float* bias, float* output, int64_t begin, int64_t end,
           uint8_t* scratch) const;
  static constexpr int kBlockRows = 16;
  Isa isa() const { return gemm_.isa(); }

 private:
  HybridFullyConnectedKernelParams p_;
  HybridGemm gemm_;
};

// Hybrid BATCH_MATMUL (float lhs, constant int8 rhs), bit-exact with
// reference::QuantizeBatchMatMulLhs + reference::HybridBatchMatMul: each lhs
// row quantized by HybridQuantizeRow, each rhs matrix packed once as a
// HybridGemm over its columns ([n][k], transposed unless adj_y), the sums of
// w * q then finished as the reference does (the zero point's correction in
// float, truncated to int32, times the row's scale).
class HybridBatchMatMulKernel {
 public:
  HybridBatchMatMulKernel(const reference::BatchMatMulGeometry& g, const int8_t* rhs, Isa isa);

  // Rows of lhs widened at a time, and the scratch Run needs (64-byte aligned).
  static constexpr int kBlockRows = 16;
  size_t scratch_bytes() const;

  // Quantizes lhs matrices [matrix_begin, matrix_end) (scales include the rhs
  // scale); row_buffer holds depth floats.
  void QuantizeLhs(const reference::HybridBatchMatMulParams& p, const float* lhs,
                   float* row_buffer, int8_t* quantized, float* scales, int32_t* zero_points,
                   int64_t matrix_begin, int64_t matrix_end) const;
  void Run(const reference::HybridBatchMatMulParams& p, const int8_t* quantized,
           const float* scales, const int32_t* zero_points, float* out, uint8_t* scratch) const;
  Isa isa() const { return isa_; }

 private:
  reference::BatchMatMulGeometry g_;
  Isa isa_;
  std::vector<std::unique_ptr<HybridGemm>> gemms_;  // one per rhs matrix
};

}  // namespace delegato::optimized
