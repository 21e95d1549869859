// The int16x8 64-bit requantization (reference::MultiplyByQuantizedMultiplier64
// of sum + bias, clamped, narrowed to int16) for 16 channels at once, shared by
// the int16x8 CONV_2D and DEPTHWISE_CONV_2D fast paths.
//
// 4 lanes at a time: the 64-bit product x * r (r the 16-bit multiplier, < 2^15)
// from two 32 x 32-bit multiplies (x = high * 2^32 + low, low unsigned), the
// arithmetic right shift from a logical one with the sign's bits filled in.
// Needs every channel's multiplier >= 0 and right shift 15 - shift in 1-63
// (Requant16Covers).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/int16x8.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

namespace delegato::optimized {

inline constexpr int kRequant16Lanes = 16;

// Whether the vector form reproduces the reference for a channel.
inline bool Requant16Covers(int32_t multiplier, int32_t shift) {
  const int total_shift = 15 - shift;
  return multiplier >= 0 && total_shift >= 1 && total_shift <= 63;
}

// Requantize16's per-channel operands for channels [0, count) of buffers
// padded to `padded`: reduced (reference::ReducedMultiplier16) and right
// (15 - shift); padding channels get multiplier 0 and a valid shift, 1.
inline void SetRequant16Channels(const int32_t* multiplier, const int32_t* shift, int count,
                                 size_t padded, AlignedBuffer<int32_t>* reduced,
                                 AlignedBuffer<int32_t>* right) {
  reduced->Resize(padded);  // zeroed
  right->Resize(padded);
  for (size_t c = 0; c < padded; ++c) (*right)[c] = 1;
  for (int c = 0; c < count; ++c) {
    (*reduced)[c] = reference::ReducedMultiplier16(multiplier[c]);
    (*right)[c] = 15 - shift[c];
  }
}

#if DELEGATO_X86
namespace requant16_detail {

// 4 int64 values from p + 4 * q.
DLG_TARGET_AVX2 inline __m256i Load4(const int64_t* p, int q) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 4 * q));
}

// 4 int32 values from p + 4 * q, widened to int64.
DLG_TARGET_AVX2 inline __m256i Load4(const int32_t* p, int q) {
  return _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 4 * q)));
}

// The 16 int32 lanes of a then b (already within int16) into out[0, ncols).
DLG_TARGET_AVX2 inline void StoreInt16(__m256i a, __m256i b, int16_t* out, int ncols) {
  // packs works per 128-bit half: a0-3 b0-3 a4-7 b4-7, put back in order.
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
  if (ncols == kRequant16Lanes) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), packed);
  } else {
    alignas(32) int16_t all[kRequant16Lanes];
    _mm256_store_si256(reinterpret_cast<__m256i*>(all), packed);
    std::memcpy(out, all, static_cast<size_t>(ncols) * sizeof(int16_t));
  }
}

}  // namespace requant16_detail

// sums (int64, or int32 exact sums) + bias for 16 channels, requantized with
// the 16-bit multipliers `reduced` (reference::ReducedMultiplier16) and right
// shifts `right` (15 - shift), clamped to [lo, hi], as int16 into out (the
// first ncols of them).
template <class Sum>
DLG_TARGET_AVX2 inline void Requantize16(const Sum* sums, const int64_t* bias,
                                         const int32_t* reduced, const int32_t* right, int32_t lo,
                                         int32_t hi, int16_t* out, int ncols) {
  using requant16_detail::Load4;
  using requant16_detail::StoreInt16;
  const __m256i one = _mm256_set1_epi64x(1), sixty_four = _mm256_set1_epi64x(64);
  const __m256i low_dwords = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  __m128i quarter[4];
  for (int q = 0; q < 4; ++q) {
    const __m256i x = _mm256_add_epi64(Load4(sums, q), Load4(bias, q));
    const __m256i r = Load4(reduced, q);
    // x * r modulo 2^64: r < 2^15, x = high * 2^32 + low (low unsigned).
    const __m256i low_product = _mm256_mul_epu32(x, r);
    const __m256i high_product =
        _mm256_slli_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), r), 32);
    const __m256i shift = Load4(right, q);
    const __m256i round = _mm256_sllv_epi64(one, _mm256_sub_epi64(shift, one));
    const __m256i sum = _mm256_add_epi64(_mm256_add_epi64(low_product, high_product), round);
    // Arithmetic right shift: the logical one, the sign's bits filled in.
    const __m256i negative = _mm256_cmpgt_epi64(_mm256_setzero_si256(), sum);
    const __m256i shifted =
        _mm256_or_si256(_mm256_srlv_epi64(sum, shift),
                        _mm256_sllv_epi64(negative, _mm256_sub_epi64(sixty_four, shift)));
    quarter[q] = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(shifted, low_dwords));
  }
  const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
  __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(quarter[0]), quarter[1], 1);
  __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(quarter[2]), quarter[3], 1);
  a = _mm256_min_epi32(_mm256_max_epi32(a, vlo), vhi);
  b = _mm256_min_epi32(_mm256_max_epi32(b, vlo), vhi);
  StoreInt16(a, b, out, ncols);
}
#endif

// The same requantization when every channel's sum + bias fits in int32 and
// its right shift s = 15 - shift is 1-31, in 32-bit lanes: about a third of
// Requantize16's instructions. x * r (|x| < 2^31, r < 2^15: below 2^46) is
// one signed 32 x 32-bit multiply per lane; adding 2^(k+s) (k >= 32, k + s
// >= 47, at most 63) makes it non-negative, so a logical shift does the
// arithmetic one, and the 2^k it adds after the shift leaves the low 32 bits
// (the reference's int32 result) unchanged. x86 (AVX2) and aarch64 (NEON).
class Requant16Int32 {
 public:
  // Whether channels [0, n) qualify when every |sum| <= max_abs_sum.
  static bool Covers(const int32_t* multiplier, const int32_t* shift, const int64_t* bias, int n,
                     int64_t max_abs_sum) {
    for (int c = 0; c < n; ++c) {
      const int right = 15 - shift[c];
      const int64_t b = bias != nullptr ? bias[c] : 0;
      if (multiplier[c] < 0 || right < 1 || right > 31 ||
          std::max(b, -b) > int64_t{0x7FFFFFFF} - max_abs_sum)
        return false;
    }
    return true;
  }

  // Channels padded to whole groups of 16 (padding requantizes to 0).
  Requant16Int32(const int32_t* multiplier, const int32_t* shift, const int64_t* bias, int n) {
    const size_t padded = (static_cast<size_t>(n) + kRequant16Lanes - 1) / kRequant16Lanes *
                          kRequant16Lanes;
    bias_.Resize(padded);
    reduced_.Resize(padded);
    right_.Resize(padded);
    offset_.Resize(padded);
    for (size_t c = 0; c < padded; ++c) {
      const bool real = c < static_cast<size_t>(n);
      const int right = real ? 15 - shift[c] : 1;
      if (real && bias != nullptr) bias_[c] = static_cast<int32_t>(bias[c]);
      reduced_[c] = real ? reference::ReducedMultiplier16(multiplier[c]) : 0;
      right_[c] = right;
      const int k = std::max(32, 47 - right);
      const int64_t offset =
          static_cast<int64_t>((uint64_t{1} << (right - 1)) + (uint64_t{1} << (k + right)));
#if DELEGATO_X86
      // Per 8 channels: the 4 even ones' offsets, then the 4 odd ones'.
      offset_[c / 8 * 8 + (c % 2) * 4 + (c % 8) / 2] = offset;
#else
      offset_[c] = offset;
#endif
    }
  }

  size_t bytes() const { return bias_.bytes() + reduced_.bytes() + right_.bytes() + offset_.bytes(); }

#if DELEGATO_X86
  // sums[16] of channels [c0, c0 + 16) (c0 a multiple of 16), clamped to
  // [lo, hi], as int16 into out (the first ncols of them).
  DLG_TARGET_AVX2 void Run(const int32_t* sums, size_t c0, int32_t lo, int32_t hi, int16_t* out,
                           int ncols) const {
    const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
    const __m256i low_half = _mm256_set1_epi64x(0xFFFFFFFF);
    __m256i half[2];
    for (int h = 0; h < 2; ++h) {
      const size_t c = c0 + 8 * h;
      const __m256i x = _mm256_add_epi32(Load8(sums + 8 * h), Load8(bias_.data() + c));
      const __m256i r = Load8(reduced_.data() + c);
      const __m256i s = Load8(right_.data() + c);
      const __m256i* offset = reinterpret_cast<const __m256i*>(offset_.data() + c);
      const __m256i even = _mm256_srlv_epi64(
          _mm256_add_epi64(_mm256_mul_epi32(x, r), _mm256_load_si256(offset)),
          _mm256_and_si256(s, low_half));
      const __m256i odd = _mm256_srlv_epi64(
          _mm256_add_epi64(
              _mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(r, 32)),
              _mm256_load_si256(offset + 1)),
          _mm256_srli_epi64(s, 32));
      half[h] = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
      half[h] = _mm256_min_epi32(_mm256_max_epi32(half[h], vlo), vhi);
    }
    requant16_detail::StoreInt16(half[0], half[1], out, ncols);
  }
#endif

#if DELEGATO_ARM
  // The same on aarch64: vmull_s32 gives x * r in 64-bit lanes, vshlq_u64 by
  // minus s the logical shift, vmovn_u64 the low 32 bits.
  void Run(const int32_t* sums, size_t c0, int32_t lo, int32_t hi, int16_t* out,
           int ncols) const {
    const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
    int16x8_t half[2];
    for (int h = 0; h < 2; ++h) {
      int32x4_t quad[2];
      for (int i = 0; i < 2; ++i) {
        const size_t c = c0 + 8 * h + 4 * i;
        const int32x4_t x = vaddq_s32(vld1q_s32(sums + 8 * h + 4 * i), vld1q_s32(bias_.data() + c));
        const int32x4_t r = vld1q_s32(reduced_.data() + c);
        const int32x4_t minus_s = vnegq_s32(vld1q_s32(right_.data() + c));
        const int64_t* offset = offset_.data() + c;
        const uint64x2_t low = vshlq_u64(
            vreinterpretq_u64_s64(
                vaddq_s64(vmull_s32(vget_low_s32(x), vget_low_s32(r)), vld1q_s64(offset))),
            vmovl_s32(vget_low_s32(minus_s)));
        const uint64x2_t high = vshlq_u64(
            vreinterpretq_u64_s64(vaddq_s64(vmull_high_s32(x, r), vld1q_s64(offset + 2))),
            vmovl_high_s32(minus_s));
        quad[i] = vreinterpretq_s32_u32(vcombine_u32(vmovn_u64(low), vmovn_u64(high)));
        quad[i] = vminq_s32(vmaxq_s32(quad[i], vlo), vhi);
      }
      half[h] = vmovn_high_s32(vmovn_s32(quad[0]), quad[1]);
    }
    if (ncols == kRequant16Lanes) {
      vst1q_s16(out, half[0]);
      vst1q_s16(out + 8, half[1]);
    } else {
      int16_t all[kRequant16Lanes];
      vst1q_s16(all, half[0]);
      vst1q_s16(all + 8, half[1]);
      std::memcpy(out, all, static_cast<size_t>(ncols) * sizeof(int16_t));
    }
  }
#endif

 private:
#if DELEGATO_X86
  DLG_TARGET_AVX2 static __m256i Load8(const int32_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
#endif

  AlignedBuffer<int32_t> bias_, reduced_, right_;
  AlignedBuffer<int64_t> offset_;
};

}  // namespace delegato::optimized
