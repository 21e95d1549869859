#include "kernels/optimized/depthwise16x8.h"

#include <algorithm>
#include <cstring>

#include "kernels/reference/int16x8.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

namespace delegato::optimized {

namespace {

static_assert(Depthwise16x8::kBlock == kRequant16Lanes, "a block is requantized at once");

// Position of channel j (< 16) of tap t (0 or 1 in its pair) in a pair's 32
// packed weights: vpunpcklwd of the pair's inputs holds channels 0-3 and
// 8-11 (per 128-bit lane), vpunpckhwd 4-7 and 12-15, each channel's two taps
// adjacent.
int PackedIndex(int j, int t) {
  const int half = (j / 4) % 2;  // 0: the unpacklo vector, 1: unpackhi
  const int lane = j / 8;
  return half * 16 + lane * 8 + (j % 4) * 2 + t;
}

#if DELEGATO_X86
// Sums over the tap pairs of 16 channels at `channel`: taps[2p], taps[2p+1]
// point at each tap's pixel (or the zero row); int32 sums into sums[16].
DLG_TARGET_AVX2 inline void SumBlock(const int16_t* const* taps, int pairs, size_t channel,
                                     const int16_t* w, int32_t* sums) {
  __m256i acc_lo = _mm256_setzero_si256(), acc_hi = _mm256_setzero_si256();
  for (int p = 0; p < pairs; ++p, w += 32) {
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(taps[2 * p] + channel));
    const __m256i x1 =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(taps[2 * p + 1] + channel));
    const __m256i w_lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(w));
    const __m256i w_hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(w + 16));
    acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), w_lo));
    acc_hi = _mm256_add_epi32(acc_hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), w_hi));
  }
  // acc_lo: channels 0-3 | 8-11, acc_hi: 4-7 | 12-15.
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums),
                      _mm256_permute2x128_si256(acc_lo, acc_hi, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + 8),
                      _mm256_permute2x128_si256(acc_lo, acc_hi, 0x31));
}
#endif

#if DELEGATO_ARM
// SumBlock on aarch64: vld2q_s16 de-interleaves each half of a pair's packed
// weights into its two taps' (channels 0-3 and 8-11, then 4-7 and 12-15);
// smlal of each tap's inputs into the four channel quads.
inline void SumBlockNeon(const int16_t* const* taps, int pairs, size_t channel, const int16_t* w,
                         int32_t* sums) {
  int32x4_t acc[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
  for (int p = 0; p < pairs; ++p, w += 32) {
    const int16x8x2_t lo = vld2q_s16(w);       // taps' weights, channels 0-3 | 8-11
    const int16x8x2_t hi = vld2q_s16(w + 16);  // channels 4-7 | 12-15
    for (int t = 0; t < 2; ++t) {
      const int16_t* x = taps[2 * p + t] + channel;
      const int16x8_t a = vld1q_s16(x), b = vld1q_s16(x + 8);  // channels 0-7, 8-15
      acc[0] = vmlal_s16(acc[0], vget_low_s16(a), vget_low_s16(lo.val[t]));
      acc[1] = vmlal_s16(acc[1], vget_high_s16(a), vget_low_s16(hi.val[t]));
      acc[2] = vmlal_s16(acc[2], vget_low_s16(b), vget_high_s16(lo.val[t]));
      acc[3] = vmlal_s16(acc[3], vget_high_s16(b), vget_high_s16(hi.val[t]));
    }
  }
  for (int q = 0; q < 4; ++q) vst1q_s32(sums + 4 * q, acc[q]);
}
#endif

}  // namespace

bool Depthwise16x8::Covers(const reference::DepthwiseGeometry& g, const int32_t* multiplier,
                           const int32_t* shift, Isa isa) {
  if (isa != Isa::kAvx2 && isa != Isa::kAvx512Vnni && !IsArmIsa(isa)) return false;
  if (g.depth_multiplier != 1 || g.output_depth <= 0 || g.filter_height <= 0 ||
      g.filter_width <= 0 ||
      int64_t{g.filter_height} * g.filter_width > reference::kExactProducts16x8)
    return false;
  for (int32_t c = 0; c < g.output_depth; ++c)
    if (!Requant16Covers(multiplier[c], shift[c])) return false;
  return true;
}

Depthwise16x8::Depthwise16x8(const Depthwise16x8Params& p)
    : g_(p.geometry), act_min_(p.act_min), act_max_(p.act_max) {
  taps_ = g_.filter_height * g_.filter_width;
  pairs_ = (taps_ + 1) / 2;
  blocks_ = (g_.output_depth + kBlock - 1) / kBlock;
  const size_t padded = static_cast<size_t>(blocks_) * kBlock;
  weights_.Resize(static_cast<size_t>(blocks_) * pairs_ * 32);  // zeroed: padding taps, channels
  for (int t = 0; t < taps_; ++t)
    for (int32_t c = 0; c < g_.output_depth; ++c)
      weights_[(static_cast<size_t>(c / kBlock) * pairs_ + t / 2) * 32 +
               PackedIndex(c % kBlock, t % 2)] =
          p.filter[static_cast<size_t>(t) * g_.output_depth + c];
  zeros_.Resize(padded);
  // |a product| <= 2^15 * 2^7.
  const int64_t max_abs_sum = int64_t{taps_} << 22;
  if (Requant16Int32::Covers(p.multiplier, p.shift, p.bias, g_.output_depth, max_abs_sum)) {
    requant32_ = std::make_unique<Requant16Int32>(p.multiplier, p.shift, p.bias, g_.output_depth);
    return;
  }
  bias_.Resize(padded);  // zeroed
  if (p.bias != nullptr) std::copy(p.bias, p.bias + g_.output_depth, bias_.data());
  SetRequant16Channels(p.multiplier, p.shift, g_.output_depth, padded, &reduced_, &right_);
}

#if DELEGATO_X86
DLG_TARGET_AVX2 void Depthwise16x8::Requantize(const int32_t* sums, size_t c, int16_t* out,
                                               int ncols) const {
  if (requant32_ != nullptr) {
    requant32_->Run(sums, c, act_min_, act_max_, out, ncols);
    return;
  }
  Requantize16(sums, bias_.data() + c, reduced_.data() + c, right_.data() + c, act_min_, act_max_,
               out, ncols);
}
#elif DELEGATO_ARM
void Depthwise16x8::Requantize(const int32_t* sums, size_t c, int16_t* out, int ncols) const {
  if (requant32_ != nullptr) {
    requant32_->Run(sums, c, act_min_, act_max_, out, ncols);
    return;
  }
  for (int j = 0; j < ncols; ++j) {
    const int32_t v = reference::MultiplyByReducedMultiplier64(
        int64_t{sums[j]} + bias_[c + j], reduced_[c + j], right_[c + j]);
    out[j] = static_cast<int16_t>(std::min(std::max(v, act_min_), act_max_));
  }
}
#endif

void Depthwise16x8::RunRows(int64_t begin, int64_t end, const int16_t* input,
                            int16_t* output) const {
#if DELEGATO_X86 || DELEGATO_ARM
  const int32_t channels = g_.output_depth;
  const int32_t full_blocks = channels / kBlock;
  const int tail = channels % kBlock;
  const size_t image = static_cast<size_t>(g_.input_height) * g_.input_width * channels;
  // Two per pair; a last unpaired tap's partner reads zeros (weight 0).
  const int16_t* taps[reference::kExactProducts16x8 + 2];
  alignas(32) int16_t tail_rows[reference::kExactProducts16x8 + 2][kBlock];
  const int16_t* tail_taps[reference::kExactProducts16x8 + 2];
  alignas(32) int32_t sums[kBlock];
#if DELEGATO_X86
  const auto sum_block = SumBlock;
#else
  const auto sum_block = SumBlockNeon;
#endif
  taps[2 * pairs_ - 1] = zeros_.data();
  // Lanes past the tail stay 0 (their weights are 0 too).
  if (tail != 0) std::memset(tail_rows, 0, sizeof(tail_rows));
  for (int64_t row = begin; row < end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g_.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g_.output_height);
    const int16_t* batch_input = input + batch * image;
    const int32_t in_y0 = out_y * g_.stride_height - g_.pad_height;
    for (int32_t out_x = 0; out_x < g_.output_width; ++out_x) {
      const int32_t in_x0 = out_x * g_.stride_width - g_.pad_width;
      int t = 0;
      for (int32_t fy = 0; fy < g_.filter_height; ++fy) {
        const int32_t in_y = in_y0 + g_.dilation_height * fy;
        const bool row_inside = in_y >= 0 && in_y < g_.input_height;
        for (int32_t fx = 0; fx < g_.filter_width; ++fx, ++t) {
          const int32_t in_x = in_x0 + g_.dilation_width * fx;
          taps[t] = row_inside && in_x >= 0 && in_x < g_.input_width
                        ? batch_input + (static_cast<size_t>(in_y) * g_.input_width + in_x) *
                                            channels
                        : zeros_.data();
        }
      }
      int16_t* out = output + (static_cast<size_t>(row) * g_.output_width + out_x) * channels;
      for (int32_t b = 0; b < full_blocks; ++b) {
        const size_t c = static_cast<size_t>(b) * kBlock;
        sum_block(taps, pairs_, c, weights_.data() + static_cast<size_t>(b) * pairs_ * 32, sums);
        Requantize(sums, c, out + c, kBlock);
      }
      if (tail != 0) {
        const size_t c = static_cast<size_t>(full_blocks) * kBlock;
        for (int i = 0; i < 2 * pairs_; ++i) {
          std::memcpy(tail_rows[i], taps[i] + c, static_cast<size_t>(tail) * sizeof(int16_t));
          tail_taps[i] = tail_rows[i];
        }
        sum_block(tail_taps, pairs_, 0,
                  weights_.data() + static_cast<size_t>(full_blocks) * pairs_ * 32, sums);
        Requantize(sums, c, out + c, tail);
      }
    }
  }
#else
  (void)begin, (void)end, (void)input, (void)output;
#endif
}

}  // namespace delegato::optimized
