#include "kernels/optimized/hybrid_depthwise.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/optimized/hybrid_gemm.h"
#include "kernels/optimized/neon_clamp.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

// GCC 12 reports false "may be used uninitialized" warnings from inside its
// own AVX-512 intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace delegato::optimized {

namespace {

constexpr int kChannelAlign = 16;

// One channel, as the reference computes it.
inline float ChannelOutput(int32_t acc, float channel_scale, float image_scale, const float* bias,
                           int32_t c, float act_min, float act_max) {
  float v = static_cast<float>(acc);
  v *= channel_scale * image_scale;
  if (bias != nullptr) v += bias[c];
  return std::min(std::max(v, act_min), act_max);
}

// Where one output pixel reads: its window's first tap in the widened image
// and the offsets of the others from it.
struct Window {
  const int16_t* origin;
  const size_t* offsets;  // in int16 elements, one per tap
  int taps;
};

void PixelScalar(const Window& w, const int32_t* weights, int padded_depth, int depth,
                 const float* channel_scales, float image_scale, const float* bias, float act_min,
                 float act_max, float* out) {
  for (int c = 0; c < depth; ++c) {
    int32_t acc = 0;
    for (int t = 0; t < w.taps; ++t)
      acc += int32_t{w.origin[w.offsets[t] + c]} *
             int32_t{static_cast<int16_t>(weights[static_cast<size_t>(t) * padded_depth + c])};
    out[c] = ChannelOutput(acc, channel_scales[c], image_scale, bias, c, act_min, act_max);
  }
}

#if DELEGATO_X86

// G groups of 8 channels from channel c: the sums over every tap.
template <int G>
DLG_TARGET_AVX2 void Groups256(const Window& w, const int32_t* weights, int padded_depth, int c,
                               __m256i* acc) {
  for (int g = 0; g < G; ++g) acc[g] = _mm256_setzero_si256();
  for (int t = 0; t < w.taps; ++t) {
    const int16_t* x = w.origin + w.offsets[t] + c;
    const int32_t* wt = weights + static_cast<size_t>(t) * padded_depth + c;
    for (int g = 0; g < G; ++g) {
      const __m256i xv = _mm256_cvtepu16_epi32(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 8 * g)));
      const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(wt + 8 * g));
      acc[g] = _mm256_add_epi32(acc[g], _mm256_madd_epi16(xv, wv));
    }
  }
}

// float(acc) * (channel_scale * image_scale) + bias, then max(lo, .) and
// min(hi, .) in the operand order of std::max(v, lo) / std::min(v, hi);
// `count` < 8 stores that many lanes.
DLG_TARGET_AVX2 void Output256(__m256i acc, const float* channel_scales, __m256 scale,
                               const float* bias, __m256 lo, __m256 hi, int c, int count,
                               float* out) {
  float cs[8], bs[8], result[8];
  const float* cs_ptr = channel_scales + c;
  const float* b_ptr = bias != nullptr ? bias + c : nullptr;
  if (count < 8) {
    std::memcpy(cs, channel_scales + c, sizeof(float) * count);
    std::fill(cs + count, cs + 8, 0.0f);
    cs_ptr = cs;
    if (bias != nullptr) {
      std::memcpy(bs, bias + c, sizeof(float) * count);
      std::fill(bs + count, bs + 8, 0.0f);
      b_ptr = bs;
    }
  }
  __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_mul_ps(_mm256_loadu_ps(cs_ptr), scale));
  if (b_ptr != nullptr) v = _mm256_add_ps(v, _mm256_loadu_ps(b_ptr));
  v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
  if (count == 8) {
    _mm256_storeu_ps(out + c, v);
  } else {
    _mm256_storeu_ps(result, v);
    std::memcpy(out + c, result, sizeof(float) * count);
  }
}

// G groups of 16 channels from channel c with pair_weights: the even
// channels' sums in even[g], the odd channels' in odd[g] (vpmaddwd adds
// x[2i] * w_even + x[2i+1] * 0, and x[2i] * 0 + x[2i+1] * w_odd).
template <int G, int kTaps = 0>
DLG_TARGET_AVX2 void PairGroups256(const Window& w, const int32_t* pair_weights, int padded_depth,
                                   int c, __m256i* even, __m256i* odd) {
  if constexpr (kTaps == 0) {
    if (w.taps == 9) return PairGroups256<G, 9>(w, pair_weights, padded_depth, c, even, odd);
  }
  const int taps = kTaps != 0 ? kTaps : w.taps;
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) even[g] = odd[g] = _mm256_setzero_si256();
#pragma GCC unroll 9
  for (int t = 0; t < taps; ++t) {
    const int16_t* x = w.origin + w.offsets[t] + c;
    const int32_t* wt = pair_weights + static_cast<size_t>(t) * padded_depth + c;
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 16 * g));
      const __m256i we = _mm256_load_si256(reinterpret_cast<const __m256i*>(wt + 16 * g));
      const __m256i wo = _mm256_load_si256(reinterpret_cast<const __m256i*>(wt + 16 * g + 8));
      even[g] = _mm256_add_epi32(even[g], _mm256_madd_epi16(xv, we));
      odd[g] = _mm256_add_epi32(odd[g], _mm256_madd_epi16(xv, wo));
    }
  }
}

// PairGroups256's sums as outputs of channels c .. c + 16 * groups.
DLG_TARGET_AVX2 void PairOutputs256(const __m256i* even, const __m256i* odd, int groups,
                                    const float* channel_scales, __m256 scale, const float* bias,
                                    __m256 lo, __m256 hi, int c, float* out) {
  for (int g = 0; g < groups; ++g) {
    // [e0 o0 e1 o1 | e4 o4 e5 o5] and [e2 o2 e3 o3 | e6 o6 e7 o7]: channels
    // 0-3 | 8-11 and 4-7 | 12-15 of the group.
    const __m256i low = _mm256_unpacklo_epi32(even[g], odd[g]);
    const __m256i high = _mm256_unpackhi_epi32(even[g], odd[g]);
    Output256(_mm256_permute2x128_si256(low, high, 0x20), channel_scales, scale, bias, lo, hi,
              c + 16 * g, 8, out);
    Output256(_mm256_permute2x128_si256(low, high, 0x31), channel_scales, scale, bias, lo, hi,
              c + 16 * g + 8, 8, out);
  }
}

DLG_TARGET_AVX2 void PixelAvx2(const Window& w, const int32_t* weights, const int32_t* pair_weights,
                               int padded_depth, int depth, const float* channel_scales,
                               float image_scale, const float* bias, float act_min, float act_max,
                               float* out) {
  const __m256 scale = _mm256_set1_ps(image_scale);
  const __m256 lo = _mm256_set1_ps(act_min), hi = _mm256_set1_ps(act_max);
  int c = 0;
  if (pair_weights != nullptr) {
    __m256i even[4], odd[4];
    for (; c + 64 <= depth; c += 64) {
      PairGroups256<4>(w, pair_weights, padded_depth, c, even, odd);
      PairOutputs256(even, odd, 4, channel_scales, scale, bias, lo, hi, c, out);
    }
    const int groups = (depth - c) / 16;  // 0 to 3
    switch (groups) {
      case 3: PairGroups256<3>(w, pair_weights, padded_depth, c, even, odd); break;
      case 2: PairGroups256<2>(w, pair_weights, padded_depth, c, even, odd); break;
      case 1: PairGroups256<1>(w, pair_weights, padded_depth, c, even, odd); break;
      default: break;
    }
    PairOutputs256(even, odd, groups, channel_scales, scale, bias, lo, hi, c, out);
    c += 16 * groups;
  }
  __m256i acc[4];
  for (; c + 32 <= depth; c += 32) {
    Groups256<4>(w, weights, padded_depth, c, acc);
    for (int g = 0; g < 4; ++g)
      Output256(acc[g], channel_scales, scale, bias, lo, hi, c + 8 * g, 8, out);
  }
  const int groups = (depth - c + 7) / 8;  // 0 to 4
  switch (groups) {
    case 4: Groups256<4>(w, weights, padded_depth, c, acc); break;
    case 3: Groups256<3>(w, weights, padded_depth, c, acc); break;
    case 2: Groups256<2>(w, weights, padded_depth, c, acc); break;
    case 1: Groups256<1>(w, weights, padded_depth, c, acc); break;
    default: break;
  }
  for (int g = 0; g < groups; ++g)
    Output256(acc[g], channel_scales, scale, bias, lo, hi, c + 8 * g,
              std::min(8, depth - c - 8 * g), out);
}

template <int G>
DLG_TARGET_AVX512 void Groups512(const Window& w, const int32_t* weights, int padded_depth, int c,
                                 __m512i* acc) {
  for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_si512();
  for (int t = 0; t < w.taps; ++t) {
    const int16_t* x = w.origin + w.offsets[t] + c;
    const int32_t* wt = weights + static_cast<size_t>(t) * padded_depth + c;
    for (int g = 0; g < G; ++g) {
      const __m512i xv = _mm512_cvtepu16_epi32(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 16 * g)));
      acc[g] = _mm512_dpwssd_epi32(acc[g], xv, _mm512_load_si512(wt + 16 * g));
    }
  }
}

DLG_TARGET_AVX512 void Output512(__m512i acc, const float* channel_scales, __m512 scale,
                                 const float* bias, __m512 lo, __m512 hi, int c, int count,
                                 float* out) {
  const __mmask16 m = count >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << count) - 1);
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc),
                           _mm512_mul_ps(_mm512_maskz_loadu_ps(m, channel_scales + c), scale));
  if (bias != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + c));
  v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
  _mm512_mask_storeu_ps(out + c, m, v);
}

// PairGroups256 on 16 lanes: G groups of 32 channels, vpdpwssd.
template <int G, int kTaps = 0>
DLG_TARGET_AVX512 void PairGroups512(const Window& w, const int32_t* pair_weights,
                                     int padded_depth, int c, __m512i* even, __m512i* odd) {
  if constexpr (kTaps == 0) {
    if (w.taps == 9) return PairGroups512<G, 9>(w, pair_weights, padded_depth, c, even, odd);
  }
  const int taps = kTaps != 0 ? kTaps : w.taps;
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) even[g] = odd[g] = _mm512_setzero_si512();
#pragma GCC unroll 9
  for (int t = 0; t < taps; ++t) {
    const int16_t* x = w.origin + w.offsets[t] + c;
    const int32_t* wt = pair_weights + static_cast<size_t>(t) * padded_depth + c;
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
      const __m512i xv = _mm512_loadu_si512(x + 32 * g);
      even[g] = _mm512_dpwssd_epi32(even[g], xv, _mm512_load_si512(wt + 32 * g));
      odd[g] = _mm512_dpwssd_epi32(odd[g], xv, _mm512_load_si512(wt + 32 * g + 16));
    }
  }
}

// PairGroups512's sums as outputs of channels c .. c + 32 * groups: channels
// 2i and 2i + 1 back in order, lanes 0-15 then 16-31 of each group.
DLG_TARGET_AVX512 void PairOutputs512(const __m512i* even, const __m512i* odd, int groups,
                                      const float* channel_scales, __m512 scale, const float* bias,
                                      __m512 lo, __m512 hi, int c, float* out) {
  const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i second =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  for (int g = 0; g < groups; ++g) {
    Output512(_mm512_permutex2var_epi32(even[g], first, odd[g]), channel_scales, scale, bias, lo,
              hi, c + 32 * g, 16, out);
    Output512(_mm512_permutex2var_epi32(even[g], second, odd[g]), channel_scales, scale, bias, lo,
              hi, c + 32 * g + 16, 16, out);
  }
}

DLG_TARGET_AVX512 void PixelAvx512(const Window& w, const int32_t* weights,
                                   const int32_t* pair_weights, int padded_depth, int depth,
                                   const float* channel_scales, float image_scale,
                                   const float* bias, float act_min, float act_max, float* out) {
  const __m512 scale = _mm512_set1_ps(image_scale);
  const __m512 lo = _mm512_set1_ps(act_min), hi = _mm512_set1_ps(act_max);
  int c = 0;
  if (pair_weights != nullptr) {
    __m512i even[4], odd[4];
    for (; c + 128 <= depth; c += 128) {
      PairGroups512<4>(w, pair_weights, padded_depth, c, even, odd);
      PairOutputs512(even, odd, 4, channel_scales, scale, bias, lo, hi, c, out);
    }
    const int groups = (depth - c) / 32;  // 0 to 3
    switch (groups) {
      case 3: PairGroups512<3>(w, pair_weights, padded_depth, c, even, odd); break;
      case 2: PairGroups512<2>(w, pair_weights, padded_depth, c, even, odd); break;
      case 1: PairGroups512<1>(w, pair_weights, padded_depth, c, even, odd); break;
      default: break;
    }
    PairOutputs512(even, odd, groups, channel_scales, scale, bias, lo, hi, c, out);
    c += 32 * groups;
  }
  __m512i acc[4];
  for (; c + 64 <= depth; c += 64) {
    Groups512<4>(w, weights, padded_depth, c, acc);
    for (int g = 0; g < 4; ++g)
      Output512(acc[g], channel_scales, scale, bias, lo, hi, c + 16 * g, 16, out);
  }
  const int groups = (depth - c + 15) / 16;  // 0 to 4
  switch (groups) {
    case 4: Groups512<4>(w, weights, padded_depth, c, acc); break;
    case 3: Groups512<3>(w, weights, padded_depth, c, acc); break;
    case 2: Groups512<2>(w, weights, padded_depth, c, acc); break;
    case 1: Groups512<1>(w, weights, padded_depth, c, acc); break;
    default: break;
  }
  for (int g = 0; g < groups; ++g)
    Output512(acc[g], channel_scales, scale, bias, lo, hi, c + 16 * g,
              std::min(16, depth - c - 16 * g), out);
}
#endif

#if DELEGATO_ARM
// 16 channels at a time (the image and weights are padded to 16 with
// zeros): per tap the widened inputs and the weights (the low halves of the
// int32 weight lanes, de-interleaved by vld2) into four int32 sums with
// widening multiply-adds. The outputs follow ChannelOutput's operations.
void PixelNeon(const Window& w, const int32_t* weights, int padded_depth, int depth,
               const float* channel_scales, float image_scale, const float* bias, float act_min,
               float act_max, float* out) {
  const float32x4_t scale = vdupq_n_f32(image_scale);
  const float32x4_t lo = vdupq_n_f32(act_min), hi = vdupq_n_f32(act_max);
  for (int c = 0; c < depth; c += 16) {
    int32x4_t acc[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
    for (int t = 0; t < w.taps; ++t) {
      const int16_t* x = w.origin + w.offsets[t] + c;
      const int16_t* wt =
          reinterpret_cast<const int16_t*>(weights + static_cast<size_t>(t) * padded_depth + c);
      for (int h = 0; h < 2; ++h) {
        const int16x8_t xv = vld1q_s16(x + 8 * h);
        const int16x8_t wv = vld2q_s16(wt + 16 * h).val[0];
        acc[2 * h] = vmlal_s16(acc[2 * h], vget_low_s16(xv), vget_low_s16(wv));
        acc[2 * h + 1] = vmlal_high_s16(acc[2 * h + 1], xv, wv);
      }
    }
    const int count = std::min(16, depth - c);
    float cs[16] = {}, bs[16] = {}, result[16];
    std::memcpy(cs, channel_scales + c, sizeof(float) * count);
    if (bias != nullptr) std::memcpy(bs, bias + c, sizeof(float) * count);
    for (int q = 0; q < 4; ++q) {
      float32x4_t v = vmulq_f32(vcvtq_f32_s32(acc[q]), vmulq_f32(vld1q_f32(cs + 4 * q), scale));
      if (bias != nullptr) v = vaddq_f32(v, vld1q_f32(bs + 4 * q));
      vst1q_f32(result + 4 * q, ClampNeon(v, lo, hi));
    }
    std::memcpy(out + c, result, sizeof(float) * count);
  }
}
#endif

}  // namespace

HybridDepthwiseKernel::HybridDepthwiseKernel(const reference::DepthwiseGeometry& g,
                                             const int8_t* filter, const float* channel_scales,
                                             float act_min, float act_max, Isa isa)
    : g_(g), source_depth_(g.input_depth), repeat_(g.depth_multiplier),
      channel_scales_(channel_scales), act_min_(act_min), act_max_(act_max) {
  g_.input_depth = g.output_depth;
  g_.depth_multiplier = 1;
  isa_ = HybridVectorIsa(isa) ? isa : Isa::kScalar;
  // The widened image covers every tap of every output pixel.
  padded_height_ = std::max(g.pad_height + g.input_height,
                            (g.output_height - 1) * g.stride_height +
                                (g.filter_height - 1) * g.dilation_height + 1);
  padded_width_ = std::max(g.pad_width + g.input_width,
                           (g.output_width - 1) * g.stride_width +
                               (g.filter_width - 1) * g.dilation_width + 1);
  padded_depth_ = static_cast<int32_t>(RoundUp(g_.input_depth, kChannelAlign));
  image_bytes_ = RoundUp(sizeof(int16_t) * padded_height_ * padded_width_ * padded_depth_, 64);
  const size_t taps = static_cast<size_t>(g.filter_height) * g.filter_width;
  const size_t row = static_cast<size_t>(padded_width_) * padded_depth_;
  for (int32_t fy = 0; fy < g.filter_height; ++fy)
    for (int32_t fx = 0; fx < g.filter_width; ++fx)
      tap_offsets_.push_back(static_cast<size_t>(fy) * g.dilation_height * row +
                             static_cast<size_t>(fx) * g.dilation_width * padded_depth_);
  weights_.Resize(taps * padded_depth_);
  for (size_t tap = 0; tap < taps; ++tap)
    for (int32_t c = 0; c < padded_depth_; ++c)
      weights_[tap * padded_depth_ + c] =
          c < g_.input_depth
              ? static_cast<int32_t>(static_cast<uint16_t>(
                    static_cast<int16_t>(filter[tap * g_.input_depth + c])))
              : 0;
  const int32_t pair_group = isa_ == Isa::kAvx512Vnni ? 32 : isa_ == Isa::kAvx2 ? 16 : 0;
  if (pair_group != 0 && g_.input_depth >= pair_group) {
    const int32_t half = pair_group / 2;
    pair_weights_.Resize(taps * padded_depth_);  // zeroed: channels past the last pair group
    for (size_t tap = 0; tap < taps; ++tap)
      for (int32_t c0 = 0; c0 + pair_group <= g_.input_depth; c0 += pair_group)
        for (int32_t i = 0; i < half; ++i) {
          int32_t* group = pair_weights_.data() + tap * padded_depth_ + c0;
          const uint32_t even = weights_[tap * padded_depth_ + c0 + 2 * i];
          const uint32_t odd = weights_[tap * padded_depth_ + c0 + 2 * i + 1];
          group[i] = static_cast<int32_t>(even);
          group[half + i] = static_cast<int32_t>(odd << 16);
        }
  }
}

void HybridDepthwiseKernel::WidenImage(int64_t batch, const int8_t* quantized_image,
                                       int32_t zero_point, uint8_t* scratch) const {
  const reference::DepthwiseGeometry& g = g_;
  int16_t* padded = reinterpret_cast<int16_t*>(scratch + image_bytes_ * batch);
  const size_t row = static_cast<size_t>(padded_width_) * padded_depth_;
  std::memset(padded, 0, image_bytes_);  // the border and the padding channels add 0
  for (int32_t y = 0; y < g.input_height; ++y) {
    int16_t* dst = padded + (static_cast<size_t>(g.pad_height) + y) * row +
                   static_cast<size_t>(g.pad_width) * padded_depth_;
    if (repeat_ > 1) {
      const int8_t* src = quantized_image + static_cast<size_t>(y) * g.input_width * source_depth_;
      for (int32_t x = 0; x < g.input_width; ++x, src += source_depth_)
        for (int32_t c = 0; c < source_depth_; ++c) {
          const int16_t v = static_cast<int16_t>(int32_t{src[c]} - zero_point);
          for (int32_t j = 0; j < repeat_; ++j)
            dst[static_cast<size_t>(x) * padded_depth_ + static_cast<size_t>(c) * repeat_ + j] = v;
        }
      continue;
    }
    const int8_t* src = quantized_image + static_cast<size_t>(y) * g.input_width * g.input_depth;
    if (padded_depth_ == g.input_depth) {
      WidenRow(isa_, src, g.input_width * g.input_depth, zero_point, dst,
               g.input_width * g.input_depth);
      continue;
    }
    for (int32_t x = 0; x < g.input_width; ++x)
      WidenRow(isa_, src + static_cast<size_t>(x) * g.input_depth, g.input_depth,
               zero_point, dst + static_cast<size_t>(x) * padded_depth_, g.input_depth);
  }
}

void HybridDepthwiseKernel::Run(const uint8_t* scratch, const float* scales, const float* bias,
                                float* output, int64_t row_begin, int64_t row_end) const {
  const reference::DepthwiseGeometry& g = g_;
  const int32_t depth = g.input_depth;
  const size_t row = static_cast<size_t>(padded_width_) * padded_depth_;
  const int taps = static_cast<int>(tap_offsets_.size());
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t batch = r / g.output_height;
    const int32_t out_y = static_cast<int32_t>(r % g.output_height);
    const int16_t* image = reinterpret_cast<const int16_t*>(scratch + image_bytes_ * batch);
    const int16_t* window_row = image + static_cast<size_t>(out_y) * g.stride_height * row;
    for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
      float* out = output + (static_cast<size_t>(r) * g.output_width + out_x) * depth;
      const Window w{window_row + static_cast<size_t>(out_x) * g.stride_width * padded_depth_,
                     tap_offsets_.data(), taps};
#if DELEGATO_X86
      if (isa_ == Isa::kAvx512Vnni) {
        PixelAvx512(w, weights_.data(), pair_weights_.size() != 0 ? pair_weights_.data() : nullptr,
                    padded_depth_, depth, channel_scales_, scales[batch],
                    bias, act_min_, act_max_, out);
        continue;
      }
      if (isa_ == Isa::kAvx2) {
        PixelAvx2(w, weights_.data(), pair_weights_.size() != 0 ? pair_weights_.data() : nullptr,
                  padded_depth_, depth, channel_scales_, scales[batch], bias,
                  act_min_, act_max_, out);
        continue;
      }
#endif
#if DELEGATO_ARM
      if (IsArmIsa(isa_)) {
        PixelNeon(w, weights_.data(), padded_depth_, depth, channel_scales_, scales[batch], bias,
                  act_min_, act_max_, out);
        continue;
      }
#endif
      PixelScalar(w, weights_.data(), padded_depth_, depth, channel_scales_, scales[batch], bias,
                  act_min_, act_max_, out);
    }
  }
}

}  // namespace delegato::optimized
