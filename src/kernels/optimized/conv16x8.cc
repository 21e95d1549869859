#include "kernels/optimized/conv16x8.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#include "kernels/optimized/grouped_conv.h"
#include "kernels/optimized/im2col.h"
#include "kernels/optimized/requantize16.h"
#include "kernels/optimized/tap_pairs.h"
#include "kernels/quantization.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

namespace delegato::optimized {

namespace {

// Below this many multiply-adds a layer runs on the calling thread.
constexpr int64_t kMinParallelMacs = int64_t{1} << 17;
static_assert(Conv16x8::kPanel == kRequant16Lanes, "a panel is requantized at once");

#if DELEGATO_X86
// sums[r][16] += the int32 sums acc[r][0..1] (8 channels each), widened.
template <int R>
DLG_TARGET_AVX2 inline void WidenAdd(const __m256i (&acc)[R][2], int64_t* sums) {
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < 2; ++h) {
      int64_t* s = sums + r * Conv16x8::kPanel + h * 8;
      const __m256i lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(acc[r][h]));
      const __m256i hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(acc[r][h], 1));
      __m256i* s0 = reinterpret_cast<__m256i*>(s);
      __m256i* s1 = reinterpret_cast<__m256i*>(s + 4);
      _mm256_storeu_si256(s0, _mm256_add_epi64(_mm256_loadu_si256(s0), lo));
      _mm256_storeu_si256(s1, _mm256_add_epi64(_mm256_loadu_si256(s1), hi));
    }
}

// The 16 channels' weights of pair p of panel w, sign-extended: channels 0-7
// in w0, 8-15 in w1, each channel's two k values adjacent.
DLG_TARGET_AVX2 inline void LoadPairWeights(const int8_t* w, int p, __m256i* w0, __m256i* w1) {
  const int8_t* wp = w + static_cast<size_t>(p) * 2 * Conv16x8::kPanel;
  *w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wp)));
  *w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wp + 16)));
}

// rows[r] (r < R) times panel `w` ([k_pairs][16][2] int8) over k <=
// kExactProducts16x8 values: the exact int32 sums[r][16] (overwritten).
template <int R>
DLG_TARGET_AVX2 void Block32(const int16_t* const* rows, int k, const int8_t* w, int32_t* sums) {
  __m256i acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int p = 0; p < (k + 1) / 2; ++p) {
    __m256i w0, w1;
    LoadPairWeights(w, p, &w0, &w1);
    const bool last_alone = 2 * p + 1 == k;  // its pair's second input is 0 (weight padding)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      int32_t pair = static_cast<uint16_t>(rows[r][2 * p]);
      if (!last_alone) std::memcpy(&pair, rows[r] + 2 * p, sizeof(pair));
      const __m256i x = _mm256_set1_epi32(pair);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x, w0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x, w1));
    }
  }
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < 2; ++h)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + r * Conv16x8::kPanel + h * 8),
                          acc[r][h]);
}

// rows[r] (r < R) times panel `w` ([k_pairs][16][2] int8) over k values:
// 64-bit sums[r][16] (added to, not overwritten).
template <int R>
DLG_TARGET_AVX2 void Block(const int16_t* const* rows, int k, const int8_t* w, int64_t* sums) {
  const int full_pairs = k / 2;
  for (int p0 = 0; p0 < full_pairs; p0 += Conv16x8::kPairsPerRun) {
    const int p1 = std::min(full_pairs, p0 + Conv16x8::kPairsPerRun);
    __m256i acc[R][2];
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int p = p0; p < p1; ++p) {
      __m256i w0, w1;
      LoadPairWeights(w, p, &w0, &w1);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        int32_t pair;
        std::memcpy(&pair, rows[r] + 2 * p, sizeof(pair));
        const __m256i x = _mm256_set1_epi32(pair);
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x, w0));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x, w1));
      }
    }
    WidenAdd<R>(acc, sums);
  }
  if (k % 2 != 0) {
    // The last k alone: its pair's second input is 0 (its weight is padding).
    __m256i w0, w1;
    LoadPairWeights(w, full_pairs, &w0, &w1);
    __m256i acc[R][2];
    for (int r = 0; r < R; ++r) {
      const __m256i x = _mm256_set1_epi32(static_cast<uint16_t>(rows[r][k - 1]));
      acc[r][0] = _mm256_madd_epi16(x, w0);
      acc[r][1] = _mm256_madd_epi16(x, w1);
    }
    WidenAdd<R>(acc, sums);
  }
}
#endif

#if DELEGATO_ARM
// Block on aarch64: the same packed pairs, de-interleaved by vld2q_s8 into
// the pair's two k values' 16 weights; smlal by each row's input value into
// int32 lanes (channels 0-3, 4-7, 8-11, 12-15), runs of kPairsPerRun pairs
// exact as on x86, then added to the 64-bit sums.
// Sum int64_t: added to the 64-bit sums; int32_t (k <= kExactProducts16x8,
// one run): the exact int32 sums stored (as Block32).
template <int R, class Sum>
void BlockNeon(const int16_t* const* rows, int k, const int8_t* w, Sum* sums) {
  auto widen_add = [&](const int32x4_t (&acc)[R][4]) {
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < 4; ++q) {
        Sum* s = sums + r * Conv16x8::kPanel + q * 4;
        if constexpr (std::is_same_v<Sum, int32_t>) {
          vst1q_s32(s, acc[r][q]);
        } else {
          vst1q_s64(s, vaddw_s32(vld1q_s64(s), vget_low_s32(acc[r][q])));
          vst1q_s64(s + 2, vaddw_high_s32(vld1q_s64(s + 2), acc[r][q]));
        }
      }
  };
  // acc[r][0..3] += x * w (16 channels' int16 weights in wl, wh).
  auto multiply_add = [](int32x4_t* acc, int16x8_t wl, int16x8_t wh, int16_t x) {
    acc[0] = vmlal_n_s16(acc[0], vget_low_s16(wl), x);
    acc[1] = vmlal_high_n_s16(acc[1], wl, x);
    acc[2] = vmlal_n_s16(acc[2], vget_low_s16(wh), x);
    acc[3] = vmlal_high_n_s16(acc[3], wh, x);
  };
  const int pairs = (k + 1) / 2;
  for (int p0 = 0; p0 < pairs; p0 += Conv16x8::kPairsPerRun) {
    const int p1 = std::min(pairs, p0 + Conv16x8::kPairsPerRun);
    int32x4_t acc[R][4];
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < 4; ++q) acc[r][q] = vdupq_n_s32(0);
    for (int p = p0; p < p1; ++p) {
      const int8x16x2_t wp = vld2q_s8(w + static_cast<size_t>(p) * 2 * Conv16x8::kPanel);
      const int16x8_t w0l = vmovl_s8(vget_low_s8(wp.val[0])), w0h = vmovl_high_s8(wp.val[0]);
      const int16x8_t w1l = vmovl_s8(vget_low_s8(wp.val[1])), w1h = vmovl_high_s8(wp.val[1]);
      // An odd k's last value has no partner (its weights are padding, 0).
      const bool pair = 2 * p + 1 < k;
      for (int r = 0; r < R; ++r) {
        multiply_add(acc[r], w0l, w0h, rows[r][2 * p]);
        if (pair) multiply_add(acc[r], w1l, w1h, rows[r][2 * p + 1]);
      }
    }
    widen_add(acc);
  }
}
#endif

}  // namespace

bool Conv16x8Grouped::Covers(const reference::ConvGeometry& g, Isa isa) {
  reference::ConvGeometry group;
  return GroupGeometry(g, &group) && Conv16x8::Covers(group, isa);
}

Conv16x8Grouped::Conv16x8Grouped(const Conv16x8Params& p, int num_threads) : g_(p.geometry) {
  const int per_group = g_.filters_per_group();
  Conv16x8Params gp = p;
  GroupGeometry(g_, &gp.geometry);
  const size_t filter_per_group =
      static_cast<size_t>(per_group) * g_.filter_height * g_.filter_width * g_.filter_depth;
  for (int gi = 0; gi < g_.groups(); ++gi) {
    const size_t first = static_cast<size_t>(gi) * per_group;
    gp.filter = p.filter + gi * filter_per_group;
    gp.bias64 = p.bias64 != nullptr ? p.bias64 + first : nullptr;
    gp.bias32 = p.bias32 != nullptr ? p.bias32 + first : nullptr;
    gp.multiplier = p.multiplier != nullptr ? p.multiplier + first : nullptr;
    gp.shift = p.shift != nullptr ? p.shift + first : nullptr;
    gp.output_scale = p.output_scale != nullptr ? p.output_scale + first : nullptr;
    groups_.push_back(std::make_unique<Conv16x8>(gp, 1));
  }
  num_tasks_ = GroupedTasks(g_, num_threads, int64_t{1} << 17);
  scratch_ = PlanGroupedScratch(g_, sizeof(int16_t), sizeof(int16_t), groups_[0]->scratch_bytes());
}

void Conv16x8Grouped::RunTask(int task, const int16_t* input, int16_t* output,
                              uint8_t* scratch) const {
  RunTaskGroups(g_, scratch_, task, num_tasks_, input, sizeof(int16_t), output, sizeof(int16_t),
                scratch, [&](int gi, uint8_t* in, uint8_t* out, uint8_t* kernel_scratch) {
                  groups_[gi]->RunTask(0, reinterpret_cast<const int16_t*>(in),
                                       reinterpret_cast<int16_t*>(out), kernel_scratch);
                });
}

bool Conv16x8::Covers(const reference::ConvGeometry& g, Isa isa) {
  if (isa != Isa::kAvx2 && isa != Isa::kAvx512Vnni && !IsArmIsa(isa)) return false;
  const int64_t k = int64_t{g.filter_height} * g.filter_width * g.input_depth;
  return g.groups() == 1 && k > 0 && k < (int64_t{1} << 24) && g.output_depth > 0;
}

Conv16x8::Conv16x8(const Conv16x8Params& p, int num_threads)
    : g_(p.geometry), sums32_(p.sums32), act_min_(p.act_min), act_max_(p.act_max) {
  k_ = g_.filter_height * g_.filter_width * g_.input_depth;
  k_pairs_ = (k_ + 1) / 2;
  n_ = g_.output_depth;
  panels_ = (n_ + kPanel - 1) / kPanel;
  m_ = int64_t{g_.batches} * g_.output_height * g_.output_width;
  direct_ = g_.filter_height == 1 && g_.filter_width == 1 && g_.pad_height == 0 &&
            g_.pad_width == 0 && g_.stride_height == 1 && g_.stride_width == 1;
  if (p.output_scale != nullptr) {
    fc_scale_.assign(p.output_scale, p.output_scale + n_);
    SetBias(p);
  } else if (!sums32_ && k_ <= reference::kExactProducts16x8 &&
             Requant16Int32::Covers(p.multiplier, p.shift, p.bias64, n_, int64_t{k_} << 22)) {
    // At most kExactProducts16x8 products per output, biases and shifts
    // permitting: int32 sums and the requantization in 32-bit lanes.
    requant32_ = std::make_unique<Requant16Int32>(p.multiplier, p.shift, p.bias64, n_);
  } else {
    PrepareWideRequantization(p);
  }
  weights_.Resize(static_cast<size_t>(panels_) * k_pairs_ * kPanel * 2);  // zeroed
  PackTapPairs<kPanel>(p.filter, n_, k_, 0, weights_.data());
  const int64_t groups = (m_ + kRows - 1) / kRows;
  num_tasks_ = m_ * n_ * k_ >= kMinParallelMacs ? std::max(1, num_threads) : 1;
  num_tasks_ = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(num_tasks_, groups)));
  per_task_bytes_ = direct_ ? 0 : RoundUp(size_t{kRows} * k_pairs_ * 2 * sizeof(int16_t), 64);
}

void Conv16x8::SetBias(const Conv16x8Params& p) {
  bias_.Resize(static_cast<size_t>(panels_) * kPanel);  // zeroed: padding channels give 0
  for (int n = 0; n < n_; ++n) {
    if (p.bias64 != nullptr) bias_[n] = p.bias64[n];
    if (p.bias32 != nullptr) bias_[n] = p.bias32[n];
  }
}

void Conv16x8::PrepareWideRequantization(const Conv16x8Params& p) {
  const size_t padded = static_cast<size_t>(panels_) * kPanel;
  SetBias(p);
  // As reference::MultiplyByQuantizedMultiplier64; the vector form needs a
  // multiplier >= 0 and a right shift of 1-63.
  vector_requant_ = DELEGATO_X86 && !sums32_;
  for (int n = 0; n < n_; ++n)
    if (!Requant16Covers(p.multiplier[n], p.shift[n])) vector_requant_ = false;
  if (vector_requant_) {
    SetRequant16Channels(p.multiplier, p.shift, n_, padded, &reduced_, &right_);
  } else {
    multiplier_.assign(p.multiplier, p.multiplier + n_);
    shift_.assign(p.shift, p.shift + n_);
  }
}

void Conv16x8::GatherRow(const int16_t* input, int64_t m, int16_t* dst) const {
  const int64_t ox = m % g_.output_width;
  const int64_t oy = m / g_.output_width % g_.output_height;
  GatherWindow(g_, input, m / g_.output_width / g_.output_height, oy, ox, dst);
  if (k_ % 2 != 0) dst[k_] = 0;  // the padding of the last pair
}

void Conv16x8::RunTask(int task, const int16_t* input, int16_t* output, uint8_t* scratch) const {
  const int64_t groups = (m_ + kRows - 1) / kRows;
  const int64_t m_begin = std::min(m_, groups * task / num_tasks_ * kRows);
  const int64_t m_end = std::min(m_, groups * (task + 1) / num_tasks_ * kRows);
  RunRows(m_begin, m_end, input, output,
          reinterpret_cast<int16_t*>(scratch + per_task_bytes_ * task));
}

void Conv16x8::RunRows(int64_t m_begin, int64_t m_end, const int16_t* input, int16_t* output,
                       int16_t* rows_scratch) const {
#if DELEGATO_X86 || DELEGATO_ARM
  const int16_t* rows[kRows];
  alignas(32) int64_t sums[kRows * kPanel];
  alignas(32) int32_t sums32[kRows * kPanel];
  for (int64_t m0 = m_begin; m0 < m_end; m0 += kRows) {
    const int count = static_cast<int>(std::min<int64_t>(kRows, m_end - m0));
    for (int r = 0; r < count; ++r) {
      if (direct_) {
        rows[r] = input + (m0 + r) * k_;
      } else {
        int16_t* dst = rows_scratch + static_cast<size_t>(r) * k_pairs_ * 2;
        GatherRow(input, m0 + r, dst);
        rows[r] = dst;
      }
    }
    for (int pn = 0; pn < panels_; ++pn) {
      const int8_t* w = weights_.data() + static_cast<size_t>(pn) * k_pairs_ * kPanel * 2;
      const int c0 = pn * kPanel;
      const int ncols = std::min(kPanel, n_ - c0);
      if (requant32_ != nullptr) {
#if DELEGATO_X86
        switch (count) {
          case 1: Block32<1>(rows, k_, w, sums32); break;
          case 2: Block32<2>(rows, k_, w, sums32); break;
          case 3: Block32<3>(rows, k_, w, sums32); break;
          default: Block32<4>(rows, k_, w, sums32); break;
        }
#else
        switch (count) {
          case 1: BlockNeon<1>(rows, k_, w, sums32); break;
          case 2: BlockNeon<2>(rows, k_, w, sums32); break;
          case 3: BlockNeon<3>(rows, k_, w, sums32); break;
          default: BlockNeon<4>(rows, k_, w, sums32); break;
        }
#endif
        for (int r = 0; r < count; ++r)
          requant32_->Run(sums32 + r * kPanel, c0, act_min_, act_max_,
                          output + (m0 + r) * n_ + c0, ncols);
        continue;
      }
#if DELEGATO_X86
      std::fill(sums, sums + kRows * kPanel, int64_t{0});
      switch (count) {
        case 1: Block<1>(rows, k_, w, sums); break;
        case 2: Block<2>(rows, k_, w, sums); break;
        case 3: Block<3>(rows, k_, w, sums); break;
        default: Block<4>(rows, k_, w, sums); break;
      }
      if (vector_requant_) {
        for (int r = 0; r < count; ++r)
          Requantize16(sums + r * kPanel, bias_.data() + c0, reduced_.data() + c0,
                       right_.data() + c0, act_min_, act_max_, output + (m0 + r) * n_ + c0,
                       ncols);
        continue;
      }
#else
      std::fill(sums, sums + kRows * kPanel, int64_t{0});
      switch (count) {
        case 1: BlockNeon<1>(rows, k_, w, sums); break;
        case 2: BlockNeon<2>(rows, k_, w, sums); break;
        case 3: BlockNeon<3>(rows, k_, w, sums); break;
        default: BlockNeon<4>(rows, k_, w, sums); break;
      }
#endif
      // Per output: FULLY_CONNECTED's rescale, or a requantization outside
      // the vector form; with an INT32 bias on the reference's wrapping
      // 32-bit sum.
      for (int r = 0; r < count; ++r) {
        int16_t* out = output + (m0 + r) * n_ + c0;
        for (int j = 0; j < ncols; ++j) {
          const int c = c0 + j;
          const uint64_t total =
              static_cast<uint64_t>(sums[r * kPanel + j]) + static_cast<uint64_t>(bias_[c]);
          const int64_t signed_total =
              sums32_ ? int64_t{static_cast<int32_t>(static_cast<uint32_t>(total))}
                      : static_cast<int64_t>(total);
          if (!fc_scale_.empty()) {
            out[j] = reference::detail::RescaleFullyConnected16(signed_total, fc_scale_[c],
                                                                act_min_, act_max_);
            continue;
          }
          const int32_t v =
              sums32_ ? quant::MultiplyByQuantizedMultiplier(static_cast<int32_t>(signed_total),
                                                             multiplier_[c], shift_[c])
                      : reference::MultiplyByQuantizedMultiplier64(signed_total, multiplier_[c],
                                                                    shift_[c]);
          out[j] = static_cast<int16_t>(std::min(std::max(v, act_min_), act_max_));
        }
      }
    }
  }
#else
  (void)m_begin, (void)m_end, (void)input, (void)output, (void)rows_scratch;
#endif
}

}  // namespace delegato::optimized
