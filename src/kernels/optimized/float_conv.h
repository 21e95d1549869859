// float32 CONV_2D / FULLY_CONNECTED (a packed GEMM) and DEPTHWISE_CONV_2D
// (depth multiplier 1) with fused bias and activation clamp.
//
// Unlike the quantized kernels these are not bit-exact with the reference:
// the vector code sums the products in another order (bias first, then taps
// in blocks, with fused multiply-adds), so a result differs from the
// reference's by rounding only, at most a few ulp of the sum of the absolute
// values of the terms. Results do not depend on the thread count; they may
// differ between ISAs by that rounding.
//
// GEMM: output[m][n] = clamp(bias[n] + sum_k A[m][k] W[k][n]) with m = output
// pixel, k = (filter_y, filter_x, in_channel), n = output channel. Weights are
// packed once (Prepare) into panels of NR output channels ([panel][k][NR],
// zero padded); a micro-kernel keeps MR x NR sums in registers (AVX-512: 8 x 32,
// AVX2: 6 x 16, aarch64 NEON: 8 x 8, scalar: 4 x 16; layers of at most 8
// channels: AVX2's 12 x 8, on AVX-512 too; a panel's last <= one
// vector of channels uses a one-vector variant; on AVX-512, 1x1 layers of
// one channel take dot products of 16 pixels at a time (AVX2: 8), see
// avx512::DotRows16). 1x1 convolutions (any stride) and
// FULLY_CONNECTED read A's rows in place; other shapes read a pixel's window
// in place as one run per filter row (per tap when dilated along x) when it
// is inside the image, and gather border pixels into per-task scratch
// (padded taps zero).
//
// Depthwise: the filter is repacked as [tap][channels padded to the vector
// width]; four output pixels whose windows are inside the image run together
// (independent sums hide the multiply-add latency; eight when the channels fit
// one vector, and layers of at most 8 channels take AVX2's 8-lane vectors on
// AVX-512 too), border pixels one at a time over their valid taps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/grouped_conv.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/depthwise_conv.h"

namespace delegato::optimized {

struct FloatConvParams {
  reference::ConvGeometry geometry;  // groups() must be 1
  float act_min = 0, act_max = 0;
  const float* filter = nullptr;  // [out][filter_y][filter_x][in]
  const float* bias = nullptr;    // one per output channel, or null
};

class FloatConv {
 public:
  static bool Covers(const reference::ConvGeometry& g);
  FloatConv(const FloatConvParams& params, Isa isa, int num_threads);

  Isa isa() const { return isa_; }
  size_t scratch_bytes() const { return per_task_bytes_ * num_tasks_; }
  int num_tasks() const { return num_tasks_; }
  // Task `task` of num_tasks(): each writes its own output elements; scratch
  // holds scratch_bytes(), 64-byte aligned.
  void RunTask(int task, const float* input, float* output, uint8_t* scratch) const;
  // GEMM rows (output pixels) [m_begin, m_end), all channels, on the calling
  // thread: row m_begin is written at `output`; task_scratch holds
  // task_scratch_bytes(), 64-byte aligned. The same values as RunTask's.
  void RunRows(int64_t m_begin, int64_t m_end, const float* input, float* output,
               uint8_t* task_scratch) const;
  size_t task_scratch_bytes() const { return per_task_bytes_; }
  const reference::ConvGeometry& geometry() const { return g_; }
  size_t packed_bytes() const { return weights_.bytes() + bias_.bytes(); }

  // Layout facts for tests.
  int nr() const { return nr_; }
  int mr() const { return mr_; }
  int block_rows() const { return block_rows_; }
  bool gathers_rows() const { return !direct_; }

 private:
  struct Pixel {
    int32_t x = 0, y = 0;
    int64_t batch = 0;
  };
  void PackWeights(const FloatConvParams& p);
  // Rows [m_begin, m_end) x panels [p_begin, p_end); row m_begin at `output`.
  void Run(int64_t m_begin, int64_t m_end, int p_begin, int p_end, const float* input,
           float* output, uint8_t* task_scratch) const;
  // dot_: output rows [m_begin, m_end) by avx512::DotRows16 / avx2::DotRows8, row
  // m_begin at `output`.
  void RunDot(int64_t m_begin, int64_t m_end, const float* input, float* output) const;
  // The output pixel of GEMM row m; the next row's pixel (no division).
  Pixel PixelOf(int64_t m) const;
  void Advance(Pixel& px) const { AdvanceAlongRow(px, 1); }
  // px moved `n` pixels along its output row, n <= output_width - px.x.
  void AdvanceAlongRow(Pixel& px, int n) const {
    px.x += n;
    if (px.x == g_.output_width) {
      px.x = 0;
      if (++px.y == g_.output_height) {
        px.y = 0;
        ++px.batch;
      }
    }
  }
  // Direct (1x1, unpadded) with stride 1: GEMM row m is input pixel m.
  bool ContiguousRows() const {
    return direct_ && g_.stride_height == 1 && g_.stride_width == 1;
  }
  // A direct layer's row m, px its pixel: advanced past it unless
  // `contiguous` (ContiguousRows()), where row m is found without pixel
  // arithmetic and px is no longer used.
  const float* DirectRow(const float* input, int64_t m, Pixel& px, bool contiguous) const {
    if (contiguous) return input + m * k_;
    const float* row = RowPointer(input, px);
    Advance(px);
    return row;
  }
  const float* RowPointer(const float* input, const Pixel& px) const;
  void GatherRow(const float* input, const Pixel& px, float* dst) const;
  // The first input value of px's window when the whole window is inside the
  // image and rows are read in place; otherwise null (the row is gathered).
  const float* WindowInside(const float* input, const Pixel& px) const {
    if (seg_offsets_.empty() || px.y < inside_y_begin_ || px.y >= inside_y_end_ ||
        px.x < inside_x_begin_ || px.x >= inside_x_end_)
      return nullptr;
    const int64_t iy0 = int64_t{px.y} * g_.stride_height - g_.pad_height;
    const int64_t ix0 = int64_t{px.x} * g_.stride_width - g_.pad_width;
    return input + ((px.batch * g_.input_height + iy0) * g_.input_width + ix0) * g_.input_depth;
  }
  static constexpr int kMaxSegs = 16;
  static constexpr int kMaxRows = 12;  // rows per micro-kernel block, any ISA
  static constexpr int kMaxPanelRows = 8;  // rows per GemmPanels call (two-vector blocks)

  reference::ConvGeometry g_;
  Isa isa_ = Isa::kScalar;
  Isa gemm_isa_ = Isa::kScalar;  // the micro-kernel's (AVX2 for <= 8 channels on AVX-512)
  float act_min_ = 0, act_max_ = 0;
  int k_ = 0, n_ = 0;
  int64_t m_ = 0;
  int nr_ = 16, mr_ = 4;
  int panels_ = 0;
  bool direct_ = false;  // 1x1 without padding: A rows are input pixels
  // k split into segs_ runs of run_ values; a row read in place has run s at
  // its window origin + seg_offsets_[s] (empty: every row is gathered).
  int segs_ = 1, run_ = 0;
  std::vector<int64_t> seg_offsets_;
  int32_t inside_y_begin_ = 0, inside_y_end_ = 0, inside_x_begin_ = 0, inside_x_end_ = 0;
  int block_rows_ = 0;
  AlignedBuffer<float> weights_;  // [panel][k][nr]; dot_: [k] padded to 16
  AlignedBuffer<float> bias_;     // [panel * nr]
  bool dot_ = false;  // AVX-512 or AVX2, one channel, 1x1: dot products over pixels
  int num_tasks_ = 1;
  bool split_rows_ = true;
  size_t per_task_bytes_ = 0;
};

class FloatWinograd;

// A grouped CONV_2D (filter depth below the input depth: ResNeXt, RegNet) as
// one convolution per group (FloatWinograd where it covers and pays for the
// group's geometry, FloatConv otherwise): a task takes whole groups and, for
// each, gathers the group's input channels into its scratch, runs that
// group's kernel on the calling thread and scatters the outputs into the
// group's output channels. The copies cost about a pass over the input and
// output per group; the sums are those kernels', so their rounding bounds
// hold.
class FloatGroupedConv {
 public:
  // More than one group, each of which FloatConv covers.
  static bool Covers(const reference::ConvGeometry& g);
  FloatGroupedConv(const FloatConvParams& params, Isa isa, int num_threads);
  ~FloatGroupedConv();
  bool winograd() const { return !winograd_.empty(); }

  int num_tasks() const { return num_tasks_; }
  size_t scratch_bytes() const { return scratch_.per_task_bytes * num_tasks_; }
  // Task `task` of num_tasks(): its own groups; scratch holds
  // scratch_bytes(), 64-byte aligned.
  void RunTask(int task, const float* input, float* output, uint8_t* scratch) const;
  size_t packed_bytes() const;

 private:
  reference::ConvGeometry g_;
  std::vector<std::unique_ptr<FloatConv>> groups_;         // or
  std::vector<std::unique_ptr<FloatWinograd>> winograd_;  // one per group
  int num_tasks_ = 1;
  GroupedScratch scratch_;
};

struct FloatDepthwiseParams {
  reference::DepthwiseGeometry geometry;  // depth_multiplier must be 1
  float act_min = 0, act_max = 0;
  const float* filter = nullptr;  // [1][filter_y][filter_x][channels]
  const float* bias = nullptr;    // one per channel, or null
};

class FloatDepthwise {
 public:
  static bool Covers(const reference::DepthwiseGeometry& g);
  FloatDepthwise(const FloatDepthwiseParams& params, Isa isa);

  Isa isa() const { return isa_; }
  int64_t rows() const { return int64_t{g_.batches} * g_.output_height; }
  int64_t macs() const {
    return rows() * g_.output_width * g_.output_depth * g_.filter_height * g_.filter_width;
  }
  // Output rows (batch * output_height + y) [begin, end). `input` holds the
  // image from row input_first_row (batch * input_height + y) on: a band of
  // it suffices when it has every row these outputs' windows reach.
  void RunRows(int64_t begin, int64_t end, const float* input, float* output,
               int64_t input_first_row = 0) const;
  size_t packed_bytes() const { return weights_.bytes() + bias_.bytes(); }

  // Internals shared with the per-ISA loops.
  struct TapRange {
    int32_t lo = 0, hi = 0;
  };
  const reference::DepthwiseGeometry& geometry() const { return g_; }
  const float* weights() const { return weights_.data(); }  // [tap][padded channels]
  const float* bias() const { return bias_.data(); }
  int padded_channels() const { return padded_channels_; }
  float act_min() const { return act_min_; }
  float act_max() const { return act_max_; }
  const TapRange* x_taps() const { return x_taps_.data(); }
  const TapRange* y_taps() const { return y_taps_.data(); }
  int32_t interior_x_begin() const { return interior_x_begin_; }
  int32_t interior_x_end() const { return interior_x_end_; }

 private:
  reference::DepthwiseGeometry g_;
  Isa isa_ = Isa::kScalar;
  float act_min_ = 0, act_max_ = 0;
  int padded_channels_ = 0;
  AlignedBuffer<float> weights_;
  AlignedBuffer<float> bias_;
  std::vector<TapRange> x_taps_, y_taps_;
  int32_t interior_x_begin_ = 0, interior_x_end_ = 0;
};


// A CONV_2D whose output only a DEPTHWISE_CONV_2D reads (an inverted
// residual block's expansion and depthwise layers), run without writing the
// intermediate image: each task computes the rows of it that its depthwise
// output rows reach into a band of a few image rows in its scratch, where
// the depthwise kernel reads them while they are still in cache, then moves
// the rows later outputs still need to the band's start. The intermediate
// image of the MobileNets' first blocks (112 x 112 x 96 floats, 4.8 MB) does
// not fit in L2: apart, the convolution writes it out and the depthwise
// layer reads it back. Every value comes from the same kernels' same
// operations as when the layers run apart, so the outputs are bit for bit
// the same; rows at a task's edges are computed by both tasks.
class FloatConvDepthwise {
 public:
  // Whether dw's input is conv's output image (same batches, height, width,
  // depth) and fusing pays: each thread's share of the image is too large to
  // stay in its core's L2 between the layers. Measured on the float32
  // MobileNet v2 (224): at 1 thread the 1.6-4.8 MB images gain 50-220 µs
  // a pair and a 0.6 MB one loses 10-20 µs; at 2 threads only the 4.8 MB
  // one gains (80 µs), the 1.8 MB ones lose about 10.
  static bool Fits(const FloatConv& conv, const FloatDepthwise& dw, int num_threads);
  static constexpr size_t kDefaultBandBytes = 256 * 1024;
  static constexpr size_t kMinImageBytesPerThread = 1536 * 1024;
  FloatConvDepthwise(const FloatConv& conv, const FloatDepthwise& dw, int num_threads,
                     size_t band_bytes = kDefaultBandBytes);

  int num_tasks() const { return num_tasks_; }
  size_t scratch_bytes() const { return per_task_bytes_ * num_tasks_; }
  int band_rows() const { return band_rows_; }
  // Task `task` of num_tasks(): a contiguous range of the depthwise output
  // rows, read from conv_input, written to output (the depthwise layer's).
  void RunTask(int task, const float* conv_input, float* output, uint8_t* scratch) const;

 private:
  // Image rows [lo, hi) (of one batch) output row oy's window reaches.
  int64_t FirstRow(int64_t oy) const;
  int64_t EndRow(int64_t oy) const;

  const FloatConv& conv_;
  const FloatDepthwise& dw_;
  int band_rows_ = 0;
  size_t row_floats_ = 0;     // one image row: width x depth
  size_t band_offset_ = 0;    // in a task's scratch: the convolution's scratch first
  size_t per_task_bytes_ = 0;
  int num_tasks_ = 1;
};

}  // namespace delegato::optimized
