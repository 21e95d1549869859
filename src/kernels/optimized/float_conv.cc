#include "kernels/optimized/float_conv.h"

#include <algorithm>
#include <cstring>

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

#include "kernels/optimized/float_lanes.h"
#include "kernels/optimized/float_winograd.h"
#include "kernels/optimized/grouped_conv.h"
#include "kernels/optimized/im2col.h"

namespace delegato::optimized {

#if DELEGATO_X86
namespace avx512 {
using namespace lanes::avx512;
#define FK_TARGET DLG_TARGET_AVX512
#define FK_MAX_ROWS 8
#define FK_MAX_NARROW_ROWS 8
#include "kernels/optimized/float_conv_kernels.inc"
#undef FK_TARGET
#undef FK_MAX_ROWS
#undef FK_MAX_NARROW_ROWS

// One output channel of a 1x1 convolution (FloatConv::dot_): 16 pixels'
// dot products with the weight vector, each accumulated across 16-lane
// vectors of its k values, then the 16 sums reduced together (pair, quad
// and 128-bit block transposes with adds) into one vector of 16 outputs:
// contiguous, since the output has one channel. `count` rows are real
// (the rest repeat one and are not stored).
DLG_TARGET_AVX512 void DotRows16(const float* const* rows, int k, const float* w, float bias,
                                 float lo, float hi, float* out, int count) {
  V acc[16];
#pragma GCC unroll 16
  for (int r = 0; r < 16; ++r) acc[r] = _mm512_setzero_ps();
  for (int k0 = 0; k0 < k; k0 += 16) {
    const __mmask16 m =
        k - k0 >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (k - k0)) - 1);
    const V wv = _mm512_load_ps(w + k0);  // zero padded to 16
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r)
      acc[r] = Fma(_mm512_maskz_loadu_ps(m, rows[r] + k0), wv, acc[r]);
  }
  // Lanes (0, 2) of each 128-bit block: row 2i's partial sums, (1, 3): row 2i + 1's.
  V t[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i)
    t[i] = _mm512_add_ps(_mm512_unpacklo_ps(acc[2 * i], acc[2 * i + 1]),
                         _mm512_unpackhi_ps(acc[2 * i], acc[2 * i + 1]));
  // Each 128-bit block: rows 4i .. 4i + 3's sums over that block.
  V u[4];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i)
    u[i] = _mm512_add_ps(_mm512_shuffle_ps(t[2 * i], t[2 * i + 1], 0x44),
                         _mm512_shuffle_ps(t[2 * i], t[2 * i + 1], 0xEE));
  const V x01 = _mm512_add_ps(_mm512_shuffle_f32x4(u[0], u[1], 0x44),
                              _mm512_shuffle_f32x4(u[0], u[1], 0xEE));
  const V x23 = _mm512_add_ps(_mm512_shuffle_f32x4(u[2], u[3], 0x44),
                              _mm512_shuffle_f32x4(u[2], u[3], 0xEE));
  V sums = _mm512_add_ps(_mm512_shuffle_f32x4(x01, x23, 0x88),
                         _mm512_shuffle_f32x4(x01, x23, 0xDD));
  sums = _mm512_add_ps(sums, _mm512_set1_ps(bias));
  sums = Min(Set1(hi), Max(Set1(lo), sums));
  _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << count) - 1), sums);
}
}  // namespace avx512

namespace avx2 {
using namespace lanes::avx2;
#define FK_TARGET DLG_TARGET_AVX2
#define FK_MAX_ROWS 6
// Layers of at most 8 output channels: 12 rows' sums in 12 of the 16 ymm
// registers (6 independent chains leave a quarter of the multiply-add
// throughput unused at a latency of 4).
#define FK_MAX_NARROW_ROWS 12
#include "kernels/optimized/float_conv_kernels.inc"
#undef FK_TARGET
#undef FK_MAX_ROWS
#undef FK_MAX_NARROW_ROWS

// avx512::DotRows16 on 8 lanes: 8 pixels' dot products with the weight
// vector, each accumulated across 8-lane vectors of its k values, the 8
// sums reduced by horizontal adds into one vector of 8 contiguous outputs.
// `count` rows are real (the rest repeat one and are not stored).
DLG_TARGET_AVX2 void DotRows8(const float* const* rows, int k, const float* w, float bias,
                              float lo, float hi, float* out, int count) {
  V acc[8];
#pragma GCC unroll 8
  for (int r = 0; r < 8; ++r) acc[r] = _mm256_setzero_ps();
  int k0 = 0;
  for (; k0 + 8 <= k; k0 += 8) {
    const V wv = _mm256_load_ps(w + k0);
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) acc[r] = Fma(_mm256_loadu_ps(rows[r] + k0), wv, acc[r]);
  }
  if (k0 < k) {
    const __m256i m = LaneMask(k - k0);
    const V wv = _mm256_load_ps(w + k0);  // zero padded
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) acc[r] = Fma(_mm256_maskload_ps(rows[r] + k0, m), wv, acc[r]);
  }
  // Each 128-bit half of h0123: rows 0-3's sums over that half of the lanes.
  const V h01 = _mm256_hadd_ps(acc[0], acc[1]), h23 = _mm256_hadd_ps(acc[2], acc[3]);
  const V h45 = _mm256_hadd_ps(acc[4], acc[5]), h67 = _mm256_hadd_ps(acc[6], acc[7]);
  const V h0123 = _mm256_hadd_ps(h01, h23), h4567 = _mm256_hadd_ps(h45, h67);
  const __m128 s0123 = _mm_add_ps(_mm256_castps256_ps128(h0123), _mm256_extractf128_ps(h0123, 1));
  const __m128 s4567 = _mm_add_ps(_mm256_castps256_ps128(h4567), _mm256_extractf128_ps(h4567, 1));
  V sums = _mm256_insertf128_ps(_mm256_castps128_ps256(s0123), s4567, 1);
  sums = _mm256_add_ps(sums, _mm256_set1_ps(bias));
  sums = Min(Set1(hi), Max(Set1(lo), sums));
  StoreN(out, sums, count);
}
}  // namespace avx2
#endif  // DELEGATO_X86

#if DELEGATO_ARM
// Armv8.0 Advanced SIMD: 4 lanes, NR = 8 channels, up to 8 rows (16 of the 32
// vector registers hold sums, 8 more four taps of each row). vfmaq_f32 is a fused multiply-add (fmla) even
// though the aarch64 build compiles with -ffp-contract=off: the fast path
// rounds like the x86 FMA path, not like the reference.
namespace neon {
using namespace lanes::neon;
#define FK_TARGET
#define FK_MAX_ROWS 8
#define FK_MAX_NARROW_ROWS 8
#include "kernels/optimized/float_conv_kernels.inc"
#undef FK_TARGET
#undef FK_MAX_ROWS
#undef FK_MAX_NARROW_ROWS

// GemmBlock with four k values of a row in one register and by-lane
// multiply-adds (fmla v.4s, v.4s, v.s[l]): one load per row and four taps
// instead of four broadcast loads. The same sums in the same order.
template <int R>
void GemmBlockByLane(int segs, int run, const float* const* a, const float* w, const float* bias,
                     float lo, float hi, float* c, size_t ldc, int ncols) {
  V acc0[R], acc1[R];
  const V b0 = Load(bias), b1 = Load(bias + kLanes);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    acc0[r] = b0;
    acc1[r] = b1;
  }
  for (int s = 0; s < segs; ++s) {
    const float* ap[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) ap[r] = a[s * R + r];
    int i = 0;
    for (; i + 4 <= run; i += 4) {
      V x[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) x[r] = vld1q_f32(ap[r] + i);
#define DLG_FK_LANE(l)                                   \
  {                                                      \
    const V w0 = Load(w), w1 = Load(w + kLanes);         \
    w += 2 * kLanes;                                     \
    _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) { \
      acc0[r] = vfmaq_laneq_f32(acc0[r], w0, x[r], l);   \
      acc1[r] = vfmaq_laneq_f32(acc1[r], w1, x[r], l);   \
    }                                                    \
  }
      DLG_FK_LANE(0)
      DLG_FK_LANE(1)
      DLG_FK_LANE(2)
      DLG_FK_LANE(3)
#undef DLG_FK_LANE
    }
    for (; i < run; ++i) {
      const V w0 = Load(w), w1 = Load(w + kLanes);
      w += 2 * kLanes;
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        acc0[r] = vfmaq_n_f32(acc0[r], w0, ap[r][i]);
        acc1[r] = vfmaq_n_f32(acc1[r], w1, ap[r][i]);
      }
    }
  }
  const V vlo = Set1(lo), vhi = Set1(hi);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* out = c + static_cast<size_t>(r) * ldc;
    const V v0 = Min(vhi, Max(vlo, acc0[r]));
    const V v1 = Min(vhi, Max(vlo, acc1[r]));
    Store(out, v0);
    if (ncols == 2 * kLanes)
      Store(out + kLanes, v1);
    else
      StoreN(out + kLanes, v1, ncols - kLanes);
  }
}

// Panels of more than one vector of channels by lane; the last <= 4
// channels of a layer by the shared one-vector blocks.
void GemmByLane(int rows, int segs, int run, const float* const* a, const float* w,
                const float* bias, float lo, float hi, float* c, size_t ldc, int ncols) {
  if (ncols <= kLanes) return Gemm(rows, segs, run, a, w, bias, lo, hi, c, ldc, ncols);
  switch (rows) {
    case 1: GemmBlockByLane<1>(segs, run, a, w, bias, lo, hi, c, ldc, ncols); break;
    case 2: GemmBlockByLane<2>(segs, run, a, w, bias, lo, hi, c, ldc, ncols); break;
    case 3: GemmBlockByLane<3>(segs, run, a, w, bias, lo, hi, c, ldc, ncols); break;
    case 4: GemmBlockByLane<4>(segs, run, a, w, bias, lo, hi, c, ldc, ncols); break;
    case 5: GemmBlockByLane<5>(segs, run, a, w, bias, lo, hi, c, ldc, ncols); break;
    case 6: GemmBlockByLane<6>(segs, run, a, w, bias, lo, hi, c, ldc, ncols); break;
    case 7: GemmBlockByLane<7>(segs, run, a, w, bias, lo, hi, c, ldc, ncols); break;
    case 8: GemmBlockByLane<8>(segs, run, a, w, bias, lo, hi, c, ldc, ncols); break;
    default: break;
  }
}

void GemmPanelsByLane(int rows, int panels, int segs, int run, const float* const* a,
                      const float* w, size_t panel_stride, const float* bias, float lo, float hi,
                      float* c, size_t ldc, int n) {
  for (int p = 0; p < panels; ++p)
    GemmByLane(rows, segs, run, a, w + p * panel_stride, bias + p * 2 * kLanes, lo, hi,
               c + p * 2 * kLanes, ldc, std::min(2 * kLanes, n - p * 2 * kLanes));
}
}  // namespace neon
#endif  // DELEGATO_ARM

namespace scalar {
constexpr int kLanes = 8;
struct V {
  float v[kLanes];
};
inline V Load(const float* p) {
  V r;
  for (int i = 0; i < kLanes; ++i) r.v[i] = p[i];
  return r;
}
inline V LoadN(const float* p, int n) {
  V r;
  for (int i = 0; i < kLanes; ++i) r.v[i] = i < n ? p[i] : 0.0f;
  return r;
}
inline void Store(float* p, const V& v) {
  for (int i = 0; i < kLanes; ++i) p[i] = v.v[i];
}
inline void StoreN(float* p, const V& v, int n) {
  for (int i = 0; i < n; ++i) p[i] = v.v[i];
}
inline V Set1(float x) {
  V r;
  for (int i = 0; i < kLanes; ++i) r.v[i] = x;
  return r;
}
inline V Fma(const V& a, const V& b, const V& c) {
  V r;
  for (int i = 0; i < kLanes; ++i) r.v[i] = a.v[i] * b.v[i] + c.v[i];
  return r;
}
// The reference's std::min/std::max with the bound first: NaN stays NaN.
inline V Min(const V& bound, const V& x) {
  V r;
  for (int i = 0; i < kLanes; ++i) r.v[i] = bound.v[i] < x.v[i] ? bound.v[i] : x.v[i];
  return r;
}
inline V Max(const V& bound, const V& x) {
  V r;
  for (int i = 0; i < kLanes; ++i) r.v[i] = x.v[i] < bound.v[i] ? bound.v[i] : x.v[i];
  return r;
}
#define FK_TARGET
#define FK_MAX_ROWS 4
#define FK_MAX_NARROW_ROWS 4
#include "kernels/optimized/float_conv_kernels.inc"
#undef FK_TARGET
#undef FK_MAX_ROWS
#undef FK_MAX_NARROW_ROWS
}  // namespace scalar

namespace {

int Lanes(Isa isa) {
  switch (isa) {
    case Isa::kAvx512Vnni: return 16;
    case Isa::kAvx2: return 8;
    case Isa::kNeon:
    case Isa::kDotprod:
    case Isa::kI8mm: return 4;
    default: return 8;
  }
}

// Rows gathered or read per block: their k values stay in L2 while every
// weight panel passes over them.
constexpr size_t kBlockBytes = 96 * 1024;
constexpr int kMaxBlockRows = 256;
constexpr size_t kSmallWeightsBytes = 24 * 1024;
// Below this many multiply-adds a layer runs on the calling thread.
constexpr int64_t kMinParallelMacs = int64_t{1} << 17;

// Along one axis: the output positions [*begin, *end) whose whole window
// (taps at origin + i * dilation) is inside the input (empty: both `out`).
// They are contiguous.
void WholeWindows(int32_t out, int32_t stride, int32_t pad, int32_t dilation, int32_t taps,
                  int32_t size, int32_t* begin, int32_t* end) {
  *begin = out;
  *end = out;
  for (int32_t o = 0; o < out; ++o) {
    const int64_t first = int64_t{o} * stride - pad;
    if (first < 0 || first + int64_t{taps - 1} * dilation >= size) continue;
    if (*begin == out) *begin = o;
    *end = o + 1;
  }
}

}  // namespace

bool FloatConv::Covers(const reference::ConvGeometry& g) {
  if (g.groups() != 1) return false;
  const int64_t k = int64_t{g.filter_height} * g.filter_width * g.input_depth;
  return k > 0 && k < (int64_t{1} << 24) && g.output_depth > 0;
}

FloatConv::FloatConv(const FloatConvParams& p, Isa isa, int num_threads)
    : g_(p.geometry), isa_(isa), act_min_(p.act_min), act_max_(p.act_max) {
  k_ = g_.filter_height * g_.filter_width * g_.input_depth;
  n_ = g_.output_depth;
  m_ = int64_t{g_.batches} * g_.output_height * g_.output_width;
  direct_ = g_.filter_height == 1 && g_.filter_width == 1 && g_.pad_height == 0 &&
            g_.pad_width == 0;
  // At most 8 output channels on AVX-512: half of every vector would be
  // padding; the AVX2 kernel's 12 x 8 blocks make the same sums (one
  // channel 1x1 keeps the AVX-512 dot products, dot_).
  gemm_isa_ = isa_ == Isa::kAvx512Vnni && n_ <= 8 && !(n_ == 1 && direct_) ? Isa::kAvx2 : isa_;
  nr_ = 2 * Lanes(gemm_isa_);
  mr_ = gemm_isa_ == Isa::kAvx512Vnni || IsArmIsa(gemm_isa_) ? 8
        : gemm_isa_ == Isa::kAvx2                             ? 6
                                                              : 4;
  // One vector of output channels (avx2::GemmBlockNarrow): more rows per block.
  if (gemm_isa_ == Isa::kAvx2 && n_ <= Lanes(gemm_isa_)) mr_ = kMaxRows;
  panels_ = (n_ + nr_ - 1) / nr_;
  // Rows whose window is inside the image are read in place, a segment per
  // filter row (adjacent pixels) or per tap (dilated columns).
  const int64_t image_row = int64_t{g_.dilation_height} * g_.input_width * g_.input_depth;
  if (direct_) {
    segs_ = 1;
    run_ = k_;
    seg_offsets_ = {0};
  } else if (g_.dilation_width == 1 && g_.filter_height <= kMaxSegs) {
    segs_ = g_.filter_height;
    run_ = g_.filter_width * g_.input_depth;
    for (int ky = 0; ky < g_.filter_height; ++ky) seg_offsets_.push_back(ky * image_row);
  } else if (g_.filter_height * g_.filter_width <= kMaxSegs) {
    segs_ = g_.filter_height * g_.filter_width;
    run_ = g_.input_depth;
    for (int ky = 0; ky < g_.filter_height; ++ky)
      for (int kx = 0; kx < g_.filter_width; ++kx)
        seg_offsets_.push_back(ky * image_row +
                               int64_t{kx} * g_.dilation_width * g_.input_depth);
  } else {
    segs_ = 1;  // every row gathered
    run_ = k_;
  }
  PackWeights(p);
  // Output pixels whose whole window is inside the image: rows [inside_y_begin_,
  // inside_y_end_) x columns [inside_x_begin_, inside_x_end_).
  WholeWindows(g_.output_height, g_.stride_height, g_.pad_height, g_.dilation_height,
               g_.filter_height, g_.input_height, &inside_y_begin_, &inside_y_end_);
  WholeWindows(g_.output_width, g_.stride_width, g_.pad_width, g_.dilation_width,
               g_.filter_width, g_.input_width, &inside_x_begin_, &inside_x_end_);
  const size_t row_bytes = static_cast<size_t>(k_) * sizeof(float);
  int rows = static_cast<int>(std::min<size_t>(kMaxBlockRows, kBlockBytes / row_bytes));
  rows = std::max(mr_, rows / mr_ * mr_);
  block_rows_ = static_cast<int>(std::min<int64_t>(rows, RoundUp(m_, mr_)));

  const int64_t macs = m_ * n_ * k_;
  num_tasks_ = macs >= kMinParallelMacs ? std::max(1, num_threads) : 1;
  // Split rows when every task gets a few blocks of them; otherwise panels.
  split_rows_ = m_ >= int64_t{num_tasks_} * mr_ * 4 || panels_ < num_tasks_;
  if (split_rows_) num_tasks_ = static_cast<int>(std::min<int64_t>(num_tasks_, (m_ + mr_ - 1) / mr_));
  else num_tasks_ = std::min(num_tasks_, panels_);
  num_tasks_ = std::max(1, num_tasks_);
  per_task_bytes_ = direct_ ? 0 : RoundUp(static_cast<size_t>(block_rows_) * row_bytes, 64);
}

void FloatConv::PackWeights(const FloatConvParams& p) {
  // AVX-512, one output channel, 1x1: dot products of 16 pixels at a time
  // (avx512::DotRows16; the GEMM would fill 1 of 16 lanes).
  dot_ = (isa_ == Isa::kAvx512Vnni || isa_ == Isa::kAvx2) && n_ == 1 && direct_;
  if (dot_) {
    weights_.Resize(RoundUp(static_cast<size_t>(k_), 16));  // zeroed
    std::copy(p.filter, p.filter + k_, weights_.data());
    bias_.Resize(1);
    bias_[0] = p.bias != nullptr ? p.bias[0] : 0.0f;
    return;
  }
  weights_.Resize(static_cast<size_t>(panels_) * k_ * nr_);  // zeroed: padding channels
  bias_.Resize(static_cast<size_t>(panels_) * nr_);
  // A panel is written kBlock rows at a time (at most 256 x 32 floats, 32 KB,
  // within L1) while each channel's filter is read in order: column by column
  // over the whole panel touched a new cache line per value.
  constexpr int kBlock = 256;
  for (int panel = 0; panel < panels_; ++panel) {
    float* dst = weights_.data() + static_cast<size_t>(panel) * k_ * nr_;
    const int n0 = panel * nr_, columns = std::min(nr_, n_ - n0);
    for (int k0 = 0; k0 < k_; k0 += kBlock) {
      const int k1 = std::min(k_, k0 + kBlock);
      for (int j = 0; j < columns; ++j) {
        const float* src = p.filter + static_cast<size_t>(n0 + j) * k_;
        for (int k = k0; k < k1; ++k) dst[static_cast<size_t>(k) * nr_ + j] = src[k];
      }
    }
  }
  for (int n = 0; n < n_; ++n) bias_[n] = p.bias != nullptr ? p.bias[n] : 0.0f;
}

void FloatConv::RunDot(int64_t m_begin, int64_t m_end, const float* input, float* output) const {
#if DELEGATO_X86
  Pixel px = PixelOf(m_begin);
  const bool contiguous = ContiguousRows();
  const int group = isa_ == Isa::kAvx512Vnni ? 16 : 8;
  const float* rows[16];
  for (int64_t m0 = m_begin; m0 < m_end; m0 += group) {
    const int count = static_cast<int>(std::min<int64_t>(group, m_end - m0));
    for (int i = 0; i < count; ++i) rows[i] = DirectRow(input, m0 + i, px, contiguous);
    for (int i = count; i < group; ++i) rows[i] = rows[0];
    if (group == 16)
      avx512::DotRows16(rows, k_, weights_.data(), bias_[0], act_min_, act_max_,
                        output + (m0 - m_begin), count);
    else
      avx2::DotRows8(rows, k_, weights_.data(), bias_[0], act_min_, act_max_,
                     output + (m0 - m_begin), count);
  }
#else
  (void)m_begin, (void)m_end, (void)input, (void)output;
#endif
}

FloatConv::Pixel FloatConv::PixelOf(int64_t m) const {
  Pixel px;
  px.x = static_cast<int32_t>(m % g_.output_width);
  px.y = static_cast<int32_t>(m / g_.output_width % g_.output_height);
  px.batch = m / g_.output_width / g_.output_height;
  return px;
}

const float* FloatConv::RowPointer(const float* input, const Pixel& px) const {
  const int64_t iy = px.y * g_.stride_height, ix = px.x * g_.stride_width;
  return input + ((px.batch * g_.input_height + iy) * g_.input_width + ix) * g_.input_depth;
}

void FloatConv::GatherRow(const float* input, const Pixel& px, float* dst) const {
  GatherWindow(g_, input, px.batch, px.y, px.x, dst);
}

void FloatConv::RunTask(int task, const float* input, float* output, uint8_t* scratch) const {
  int64_t m_begin = 0, m_end = m_;
  int p_begin = 0, p_end = panels_;
  if (split_rows_) {
    const int64_t groups = (m_ + mr_ - 1) / mr_;
    m_begin = std::min(m_, groups * task / num_tasks_ * mr_);
    m_end = std::min(m_, groups * (task + 1) / num_tasks_ * mr_);
  } else {
    p_begin = panels_ * task / num_tasks_;
    p_end = panels_ * (task + 1) / num_tasks_;
  }
  Run(m_begin, m_end, p_begin, p_end, input, output + m_begin * n_,
      scratch + per_task_bytes_ * task);
}

void FloatConv::RunRows(int64_t m_begin, int64_t m_end, const float* input, float* output,
                        uint8_t* task_scratch) const {
  Run(m_begin, m_end, 0, panels_, input, output, task_scratch);
}

void FloatConv::Run(int64_t m_begin, int64_t m_end, int p_begin, int p_end, const float* input,
                    float* output, uint8_t* task_scratch) const {
  if (m_begin >= m_end) return;
#if DELEGATO_X86
  if (dot_) {
    RunDot(m_begin, m_end, input, output);
    return;
  }
#endif
  float* panel = reinterpret_cast<float*>(task_scratch);
  // Per row of the block: where its values start and whether they were
  // gathered (then contiguous) or are read in place (segments at seg_offsets_).
  const float* rows[kMaxBlockRows];
  bool gathered[kMaxBlockRows];
  const float* segments[kMaxSegs * kMaxRows];
  using GemmFn = void (*)(int, int, int, const float* const*, const float*, const float*, float,
                          float, float*, size_t, int);
  GemmFn gemm = scalar::Gemm;
  using GemvFn = void (*)(int, int, const float* const*, const float*, size_t, const float*,
                          float, float, float*);
  GemvFn gemv = scalar::Gemv;
  using GemmPanelsFn = void (*)(int, int, int, int, const float* const*, const float*, size_t,
                                const float*, float, float, float*, size_t, int);
  GemmPanelsFn gemm_panels = scalar::GemmPanels;
  constexpr int kGemvPanels = scalar::kGemvPanels;
#if DELEGATO_X86
  static_assert(avx2::kGemvPanels == kGemvPanels && avx512::kGemvPanels == kGemvPanels);
  if (gemm_isa_ == Isa::kAvx512Vnni)
    gemm = avx512::Gemm, gemv = avx512::Gemv, gemm_panels = avx512::GemmPanels;
  if (gemm_isa_ == Isa::kAvx2) gemm = avx2::Gemm, gemv = avx2::Gemv, gemm_panels = avx2::GemmPanels;
#endif
#if DELEGATO_ARM
  static_assert(neon::kGemvPanels == kGemvPanels);
  if (IsArmIsa(isa_)) gemm = neon::GemmByLane, gemv = neon::Gemv, gemm_panels = neon::GemmPanelsByLane;
#endif
  // The output pixel of row m0, advanced row by row (no division per row).
  Pixel px = PixelOf(m_begin);
  const bool contiguous = ContiguousRows();
  // 1x1 convolutions over whole images: row m is input + m * k, one
  // segment; no per-row bookkeeping (it cost as much as a small layer's
  // multiply-adds).
  const bool plain_rows = direct_ && contiguous;
  for (int64_t m0 = m_begin; m0 < m_end; m0 += block_rows_) {
    const int count = static_cast<int>(std::min<int64_t>(block_rows_, m_end - m0));
    for (int i = plain_rows ? count : 0; i < count;) {
      if (direct_) {
        gathered[i] = false;
        rows[i] = DirectRow(input, m0 + i, px, contiguous);
        ++i;
        continue;
      }
      if (const float* origin = WindowInside(input, px); origin != nullptr) {
        // The windows of this output row from px to the interior's end are
        // inside too, each stride_width pixels after the last: no bounds
        // arithmetic per row (a third of a 3-channel first layer's time).
        const int run = static_cast<int>(std::min<int64_t>(count - i, inside_x_end_ - px.x));
        const int64_t step = int64_t{g_.stride_width} * g_.input_depth;
        for (int j = 0; j < run; ++j) {
          rows[i + j] = origin + j * step;
          gathered[i + j] = false;
        }
        i += run;
        AdvanceAlongRow(px, run);
        continue;
      }
      float* dst = panel + static_cast<size_t>(i) * k_;
      GatherRow(input, px, dst);
      rows[i] = dst;
      gathered[i] = true;
      ++i;
      Advance(px);
    }
    const int64_t* offsets = seg_offsets_.data();
    int segments_of = -1;  // the row group `segments` holds
    // A lone row (a 1x1 image, FULLY_CONNECTED's one batch): whole panels
    // kGemvPanels at a time, the rest below.
    int first_panel = p_begin;
    if (count == 1) {
      if (plain_rows)
        segments[0] = input + m0 * k_;
      else
        for (int s = 0; s < segs_; ++s)
          segments[s] = gathered[0] ? rows[0] + static_cast<size_t>(s) * run_ : rows[0] + offsets[s];
      segments_of = 0;
      for (; first_panel + kGemvPanels <= p_end && (first_panel + kGemvPanels) * nr_ <= n_;
           first_panel += kGemvPanels)
        gemv(segs_, run_, segments, weights_.data() + static_cast<size_t>(first_panel) * k_ * nr_,
             static_cast<size_t>(k_) * nr_, bias_.data() + static_cast<size_t>(first_panel) * nr_,
             act_min_, act_max_, output + (m0 - m_begin) * n_ + int64_t{first_panel} * nr_);
    }
    // Small weights (they stay in L1): each group of rows through every
    // panel, so output rows are written whole; otherwise each panel over
    // every row group of the block.
    const bool rows_outer = static_cast<size_t>(p_end - first_panel) * k_ * nr_ * sizeof(float) <=
                            kSmallWeightsBytes;
    // Row groups of nearly equal size (49 rows: 7 x 7, not 6 x 8 + 1: a lone
    // row runs at the multiply-add latency, not its throughput).
    const int groups = (count + mr_ - 1) / mr_;
    const int group_base = count / groups, group_extra = count % groups;
    // Points `segments` at row group `group`'s rows (r of them from r0).
    auto point_segments = [&](int group, int r0, int r) {
      if (group == segments_of) return;
      if (plain_rows) {
        const float* row = input + (m0 + r0) * k_;
        for (int j = 0; j < r; ++j) segments[j] = row + static_cast<size_t>(j) * k_;
      } else {
        for (int j = 0; j < r; ++j) {
          const float* row = rows[r0 + j];
          if (gathered[r0 + j]) {
            for (int s = 0; s < segs_; ++s) segments[s * r + j] = row + static_cast<size_t>(s) * run_;
          } else {
            for (int s = 0; s < segs_; ++s) segments[s * r + j] = row + offsets[s];
          }
        }
      }
      segments_of = group;
    };
    const size_t panel_floats = static_cast<size_t>(k_) * nr_;
    // Each row group through all panels in one call (AVX2 one-vector
    // layers' 12-row groups take gemm's narrow blocks below; a lone panel
    // has no calls to save).
    if (rows_outer && mr_ <= kMaxPanelRows && p_end - first_panel >= 2) {
      for (int group = 0; group < groups; ++group) {
        const int r0 = group * group_base + std::min(group, group_extra);
        const int r = group_base + (group < group_extra ? 1 : 0);
        point_segments(group, r0, r);
        gemm_panels(r, p_end - first_panel, segs_, run_, segments,
                    weights_.data() + first_panel * panel_floats, panel_floats,
                    bias_.data() + static_cast<size_t>(first_panel) * nr_, act_min_, act_max_,
                    output + (m0 - m_begin + r0) * n_ + static_cast<int64_t>(first_panel) * nr_, n_,
                    n_ - first_panel * nr_);
      }
      continue;
    }
    const int outer_count = rows_outer ? groups : p_end - first_panel;
    const int inner_count = rows_outer ? p_end - first_panel : groups;
    for (int outer = 0; outer < outer_count; ++outer) {
      for (int inner = 0; inner < inner_count; ++inner) {
        const int pn = first_panel + (rows_outer ? inner : outer);
        const int group = rows_outer ? outer : inner;
        const int r0 = group * group_base + std::min(group, group_extra);
        const int r = group_base + (group < group_extra ? 1 : 0);
        point_segments(group, r0, r);
        gemm(r, segs_, run_, segments, weights_.data() + pn * panel_floats,
             bias_.data() + static_cast<size_t>(pn) * nr_, act_min_, act_max_,
             output + (m0 - m_begin + r0) * n_ + static_cast<int64_t>(pn) * nr_, n_,
             std::min(nr_, n_ - pn * nr_));
      }
    }
  }
}

// ------------------------------------------------------------- depthwise

bool FloatGroupedConv::Covers(const reference::ConvGeometry& g) {
  reference::ConvGeometry group;
  return GroupGeometry(g, &group) && FloatConv::Covers(group);
}

FloatGroupedConv::FloatGroupedConv(const FloatConvParams& p, Isa isa, int num_threads)
    : g_(p.geometry) {
  const int groups = g_.groups();
  const int per_group = g_.filters_per_group();
  FloatConvParams gp = p;
  GroupGeometry(g_, &gp.geometry);
  const size_t filter_per_group =
      static_cast<size_t>(per_group) * g_.filter_height * g_.filter_width * g_.filter_depth;
  const bool winograd =
      FloatWinograd::Covers(gp.geometry, isa) && FloatWinograd::Pays(gp.geometry);
  for (int gi = 0; gi < groups; ++gi) {
    gp.filter = p.filter + gi * filter_per_group;
    gp.bias = p.bias != nullptr ? p.bias + static_cast<size_t>(gi) * per_group : nullptr;
    if (winograd)
      winograd_.push_back(std::make_unique<FloatWinograd>(gp, isa, 1));
    else
      groups_.push_back(std::make_unique<FloatConv>(gp, isa, 1));
  }
  num_tasks_ = GroupedTasks(g_, num_threads, kMinParallelMacs);
  scratch_ = PlanGroupedScratch(g_, sizeof(float), sizeof(float),
                                winograd ? winograd_[0]->task_scratch_bytes()
                                         : groups_[0]->task_scratch_bytes());
}

FloatGroupedConv::~FloatGroupedConv() = default;

size_t FloatGroupedConv::packed_bytes() const {
  size_t bytes = 0;
  for (const auto& conv : groups_) bytes += conv->packed_bytes();
  for (const auto& conv : winograd_) bytes += conv->packed_bytes();
  return bytes;
}

void FloatGroupedConv::RunTask(int task, const float* input, float* output,
                               uint8_t* scratch) const {
  const int64_t out_pixels = g_.output_rows() * g_.output_width;
  RunTaskGroups(g_, scratch_, task, num_tasks_, input, sizeof(float), output, sizeof(float),
                scratch, [&](int gi, uint8_t* in, uint8_t* out, uint8_t* kernel_scratch) {
                  const float* group_in = reinterpret_cast<const float*>(in);
                  float* group_out = reinterpret_cast<float*>(out);
                  if (winograd())
                    winograd_[gi]->RunAll(group_in, group_out, kernel_scratch);
                  else
                    groups_[gi]->RunRows(0, out_pixels, group_in, group_out, kernel_scratch);
                });
}

bool FloatDepthwise::Covers(const reference::DepthwiseGeometry& g) {
  return g.depth_multiplier == 1 && g.output_depth > 0 && g.filter_height > 0 &&
         g.filter_width > 0;
}

FloatDepthwise::FloatDepthwise(const FloatDepthwiseParams& p, Isa isa)
    : g_(p.geometry), isa_(isa), act_min_(p.act_min), act_max_(p.act_max) {
  const int channels = g_.output_depth;
  padded_channels_ = static_cast<int>(RoundUp(channels, 2 * Lanes(isa_)));
  const int taps = g_.filter_height * g_.filter_width;
  weights_.Resize(static_cast<size_t>(taps) * padded_channels_);
  bias_.Resize(padded_channels_);
  for (int t = 0; t < taps; ++t)
    std::memcpy(weights_.data() + static_cast<size_t>(t) * padded_channels_,
                p.filter + static_cast<size_t>(t) * channels, channels * sizeof(float));
  if (p.bias != nullptr) std::memcpy(bias_.data(), p.bias, channels * sizeof(float));
  auto range = [](int32_t out, int32_t stride, int32_t pad, int32_t dilation, int32_t taps,
                  int32_t size) {
    TapRange r;
    const int64_t origin = int64_t{out} * stride - pad;
    int32_t lo = 0;
    while (lo < taps && origin + int64_t{lo} * dilation < 0) ++lo;
    int32_t hi = taps;
    while (hi > lo && origin + int64_t{hi - 1} * dilation >= size) --hi;
    r.lo = lo;
    r.hi = hi;
    return r;
  };
  x_taps_.resize(g_.output_width);
  for (int32_t x = 0; x < g_.output_width; ++x)
    x_taps_[x] = range(x, g_.stride_width, g_.pad_width, g_.dilation_width, g_.filter_width,
                       g_.input_width);
  y_taps_.resize(g_.output_height);
  for (int32_t y = 0; y < g_.output_height; ++y)
    y_taps_[y] = range(y, g_.stride_height, g_.pad_height, g_.dilation_height, g_.filter_height,
                       g_.input_height);
  WholeWindows(g_.output_width, g_.stride_width, g_.pad_width, g_.dilation_width,
               g_.filter_width, g_.input_width, &interior_x_begin_, &interior_x_end_);
}

void FloatDepthwise::RunRows(int64_t begin, int64_t end, const float* input, float* output,
                             int64_t input_first_row) const {
#if DELEGATO_X86
  // At most 8 channels: AVX2's 8-lane loop (eight pixels at once, unmasked);
  // a 16-lane vector would be half padding. The same sums either way.
  if (isa_ == Isa::kAvx512Vnni && g_.output_depth > 8)
    return avx512::DwRows(*this, begin, end, input, input_first_row, output);
  if (isa_ == Isa::kAvx512Vnni) return avx2::DwRows(*this, begin, end, input, input_first_row, output);
  if (isa_ == Isa::kAvx2) return avx2::DwRows(*this, begin, end, input, input_first_row, output);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa_)) return neon::DwRows(*this, begin, end, input, input_first_row, output);
#endif
  scalar::DwRows(*this, begin, end, input, input_first_row, output);
}

// ------------------------------------------------- convolution + depthwise

bool FloatConvDepthwise::Fits(const FloatConv& conv, const FloatDepthwise& dw, int num_threads) {
  const reference::ConvGeometry& c = conv.geometry();
  const reference::DepthwiseGeometry& d = dw.geometry();
  if (c.batches != d.batches || c.output_height != d.input_height ||
      c.output_width != d.input_width || c.output_depth != d.input_depth)
    return false;
  const size_t image_bytes = static_cast<size_t>(d.input_height) * d.input_width *
                             static_cast<size_t>(d.input_depth) * sizeof(float);
  return image_bytes / static_cast<size_t>(std::max(1, num_threads)) >= kMinImageBytesPerThread;
}

FloatConvDepthwise::FloatConvDepthwise(const FloatConv& conv, const FloatDepthwise& dw,
                                       int num_threads, size_t band_bytes)
    : conv_(conv), dw_(dw) {
  const reference::DepthwiseGeometry& g = dw_.geometry();
  row_floats_ = static_cast<size_t>(g.input_width) * g.input_depth;
  const int window = (g.filter_height - 1) * g.dilation_height + 1;
  const size_t fit = band_bytes / (row_floats_ * sizeof(float));
  band_rows_ = static_cast<int>(std::min<int64_t>(
      g.input_height, std::max<int64_t>(window, static_cast<int64_t>(fit))));
  band_offset_ = RoundUp(conv_.task_scratch_bytes(), 64);
  per_task_bytes_ = RoundUp(band_offset_ + band_rows_ * row_floats_ * sizeof(float), 64);
  num_tasks_ = static_cast<int>(std::clamp<int64_t>(dw_.rows(), 1, std::max(1, num_threads)));
}

int64_t FloatConvDepthwise::FirstRow(int64_t oy) const {
  const reference::DepthwiseGeometry& g = dw_.geometry();
  return std::clamp<int64_t>(oy * g.stride_height - g.pad_height, 0, g.input_height);
}

int64_t FloatConvDepthwise::EndRow(int64_t oy) const {
  const reference::DepthwiseGeometry& g = dw_.geometry();
  const int64_t window = int64_t{g.filter_height - 1} * g.dilation_height + 1;
  return std::clamp<int64_t>(oy * g.stride_height - g.pad_height + window, 0, g.input_height);
}

void FloatConvDepthwise::RunTask(int task, const float* conv_input, float* output,
                                 uint8_t* scratch) const {
  const reference::DepthwiseGeometry& g = dw_.geometry();
  const int64_t rows = dw_.rows();
  const int64_t begin = rows * task / num_tasks_, end = rows * (task + 1) / num_tasks_;
  uint8_t* task_scratch = scratch + per_task_bytes_ * task;
  float* band = reinterpret_cast<float*>(task_scratch + band_offset_);
  const int64_t width = g.input_width;
  for (int64_t row = begin; row < end;) {
    const int64_t batch = row / g.output_height;
    const int64_t batch_row = batch * g.output_height;  // output row of y = 0
    const int64_t image_row = batch * g.input_height;   // image row of y = 0
    const int64_t batch_end = std::min(end, batch_row + g.output_height);
    // The band holds image rows [first, first + count) of this batch.
    int64_t first = image_row + FirstRow(row - batch_row);
    int64_t count = 0;
    while (row < batch_end) {
      // As many output rows as the band holds the windows of (at least one:
      // it holds a whole window).
      int64_t stop = row + 1;
      while (stop < batch_end && image_row + EndRow(stop - batch_row) - first <= band_rows_) ++stop;
      const int64_t needed = image_row + EndRow(stop - 1 - batch_row);
      if (first + count < needed) {
        conv_.RunRows((first + count) * width, needed * width, conv_input,
                      band + static_cast<size_t>(count) * row_floats_, task_scratch);
        count = needed - first;
      }
      dw_.RunRows(row, stop, band, output, first);
      row = stop;
      if (row == batch_end) break;
      // Keep the rows the next output rows still read.
      const int64_t next_first = image_row + FirstRow(row - batch_row);
      const int64_t keep = std::max<int64_t>(0, first + count - next_first);
      if (keep > 0 && next_first > first)
        std::memmove(band, band + static_cast<size_t>(next_first - first) * row_floats_,
                     static_cast<size_t>(keep) * row_floats_ * sizeof(float));
      first = next_first;
      count = keep;
    }
  }
}

}  // namespace delegato::optimized
