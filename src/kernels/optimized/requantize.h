// Vectorized fixed-point requantization, bit-exact with
// quant::MultiplyByQuantizedMultiplier (TFLite's double rounding) followed by
// the output offset and the activation clamp.
//
// Per lane: x = acc << left_shift (wrapping); the rounding doubling high
// multiply (x * m * 2 + 2^31) >> 32 with TFLite's round-half-away nudge equals
// floor((x * m + 2^30) / 2^31) for every x when m >= 0 (for negative products
// TFLite truncates (x*m + 1 - 2^30) / 2^31 toward zero, which is the same
// floor), so it is one 64-bit multiply, add and shift. m is a Q31 multiplier
// in [0, 2^31), so the overflow case (both operands INT32_MIN) never occurs.
// Then RoundingDivideByPOT: (x >> r) + (remainder > threshold), with the mask
// (2^r - 1) and the threshold mask >> 1 precomputed per channel. The clamp
// runs before the offset is added (bounds shifted by -offset), so no int32
// overflow can happen where the reference computes in 64 bits.
#pragma once

#include <cstdint>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/quantization.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

namespace delegato::optimized {

// Per-channel constants, `padded` entries (a multiple of 16) each; padding
// channels requantize everything to 0.
struct RequantChannels {
  AlignedBuffer<int32_t> multiplier, shift, left_shift, right_shift, remainder_mask, threshold;
  int32_t output_offset = 0;
  int32_t clamp_min = 0, clamp_max = 0;  // act_min / act_max minus output_offset

  void Init(const int32_t* multipliers, const int32_t* shifts, int channels, int padded,
            int32_t out_offset, int32_t act_min, int32_t act_max) {
    multiplier.Resize(padded);
    shift.Resize(padded);
    left_shift.Resize(padded);
    right_shift.Resize(padded);
    remainder_mask.Resize(padded);
    threshold.Resize(padded);
    for (int c = 0; c < channels; ++c) {
      const int s = shifts[c];
      multiplier[c] = multipliers[c];
      shift[c] = s;
      left_shift[c] = s > 0 ? s : 0;
      right_shift[c] = s > 0 ? 0 : -s;
      const int64_t mask = (int64_t{1} << right_shift[c]) - 1;
      remainder_mask[c] = static_cast<int32_t>(mask);
      threshold[c] = static_cast<int32_t>(mask >> 1);
    }
    output_offset = out_offset;
    clamp_min = act_min - out_offset;
    clamp_max = act_max - out_offset;
  }

  // Frees the per-channel arrays (a kernel whose every channel requantizes
  // another way), keeping the offset and clamp bounds.
  void ReleaseChannels() {
    multiplier = AlignedBuffer<int32_t>();
    shift = AlignedBuffer<int32_t>();
    left_shift = AlignedBuffer<int32_t>();
    right_shift = AlignedBuffer<int32_t>();
    remainder_mask = AlignedBuffer<int32_t>();
    threshold = AlignedBuffer<int32_t>();
  }
};

// Scalar: the reference arithmetic itself.
inline int32_t RequantizeOne(const RequantChannels& rq, int c, int32_t acc) {
  int32_t v = quant::MultiplyByQuantizedMultiplier(acc, rq.multiplier[c], rq.shift[c]);
  v = v < rq.clamp_min ? rq.clamp_min : v;
  v = v > rq.clamp_max ? rq.clamp_max : v;
  return v + rq.output_offset;
}

#if DELEGATO_X86

// 16 channels starting at c (c a multiple of 16).
struct Requant512 {
  __m512i multiplier, left_shift, right_shift, remainder_mask, threshold;
};

DLG_TARGET_AVX512 inline Requant512 LoadRequant512(const RequantChannels& rq, int c) {
  return Requant512{_mm512_load_si512(rq.multiplier.data() + c),
                    _mm512_load_si512(rq.left_shift.data() + c),
                    _mm512_load_si512(rq.right_shift.data() + c),
                    _mm512_load_si512(rq.remainder_mask.data() + c),
                    _mm512_load_si512(rq.threshold.data() + c)};
}

// MultiplyByQuantizedMultiplier per lane.
DLG_TARGET_AVX512 inline __m512i MultiplyByQuantizedMultiplier512(__m512i acc,
                                                                   const Requant512& p) {
  const __m512i x = _mm512_sllv_epi32(acc, p.left_shift);
  const __m512i nudge = _mm512_set1_epi64(int64_t{1} << 30);
  __m512i even = _mm512_add_epi64(_mm512_mul_epi32(x, p.multiplier), nudge);
  __m512i odd = _mm512_add_epi64(
      _mm512_mul_epi32(_mm512_srli_epi64(x, 32), _mm512_srli_epi64(p.multiplier, 32)), nudge);
  even = _mm512_srli_epi64(even, 31);  // bits 31..62 into the low half
  odd = _mm512_slli_epi64(odd, 1);     // bits 31..62 into the high half
  const __m512i high = _mm512_mask_blend_epi32(0xAAAA, even, odd);
  const __m512i remainder = _mm512_and_si512(high, p.remainder_mask);
  const __m512i threshold = _mm512_sub_epi32(p.threshold, _mm512_srai_epi32(high, 31));
  __m512i q = _mm512_srav_epi32(high, p.right_shift);
  const __mmask16 round_up = _mm512_cmpgt_epi32_mask(remainder, threshold);
  return _mm512_mask_sub_epi32(q, round_up, q, _mm512_set1_epi32(-1));
}

// Returns clamp(MultiplyByQuantizedMultiplier(acc)) + offset per lane.
DLG_TARGET_AVX512 inline __m512i Requantize512(__m512i acc, const Requant512& p, __m512i lo,
                                                __m512i hi, __m512i offset) {
  const __m512i q = MultiplyByQuantizedMultiplier512(acc, p);
  return _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(q, lo), hi), offset);
}

// The constants of one multiplier and shift in every lane.
DLG_TARGET_AVX512 inline Requant512 BroadcastRequant512(int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const int64_t mask = (int64_t{1} << right) - 1;
  return Requant512{_mm512_set1_epi32(multiplier), _mm512_set1_epi32(left),
                    _mm512_set1_epi32(right), _mm512_set1_epi32(static_cast<int32_t>(mask)),
                    _mm512_set1_epi32(static_cast<int32_t>(mask >> 1))};
}

// 8 channels starting at c (c a multiple of 8).
struct Requant256 {
  __m256i multiplier, left_shift, right_shift, remainder_mask, threshold;
};

DLG_TARGET_AVX2 inline __m256i Load256(const int32_t* p) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
}

DLG_TARGET_AVX2 inline Requant256 LoadRequant256(const RequantChannels& rq, int c) {
  return Requant256{Load256(rq.multiplier.data() + c), Load256(rq.left_shift.data() + c),
                    Load256(rq.right_shift.data() + c), Load256(rq.remainder_mask.data() + c),
                    Load256(rq.threshold.data() + c)};
}

DLG_TARGET_AVX2 inline __m256i MultiplyByQuantizedMultiplier256(__m256i acc,
                                                                 const Requant256& p) {
  const __m256i x = _mm256_sllv_epi32(acc, p.left_shift);
  const __m256i nudge = _mm256_set1_epi64x(int64_t{1} << 30);
  __m256i even = _mm256_add_epi64(_mm256_mul_epi32(x, p.multiplier), nudge);
  __m256i odd = _mm256_add_epi64(
      _mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(p.multiplier, 32)), nudge);
  even = _mm256_srli_epi64(even, 31);
  odd = _mm256_slli_epi64(odd, 1);
  const __m256i high = _mm256_blend_epi32(even, odd, 0xAA);
  const __m256i remainder = _mm256_and_si256(high, p.remainder_mask);
  const __m256i threshold = _mm256_sub_epi32(p.threshold, _mm256_srai_epi32(high, 31));
  __m256i q = _mm256_srav_epi32(high, p.right_shift);
  return _mm256_sub_epi32(q, _mm256_cmpgt_epi32(remainder, threshold));
}

DLG_TARGET_AVX2 inline __m256i Requantize256(__m256i acc, const Requant256& p, __m256i lo,
                                              __m256i hi, __m256i offset) {
  const __m256i q = MultiplyByQuantizedMultiplier256(acc, p);
  return _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(q, lo), hi), offset);
}

DLG_TARGET_AVX2 inline Requant256 BroadcastRequant256(int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const int64_t mask = (int64_t{1} << right) - 1;
  return Requant256{_mm256_set1_epi32(multiplier), _mm256_set1_epi32(left),
                    _mm256_set1_epi32(right), _mm256_set1_epi32(static_cast<int32_t>(mask)),
                    _mm256_set1_epi32(static_cast<int32_t>(mask >> 1))};
}

// Low bytes of 16 int32 lanes (two vectors of 8), in order.
DLG_TARGET_AVX2 inline __m128i NarrowToBytes256(__m256i a, __m256i b) {
  __m256i words = _mm256_packs_epi32(a, b);  // a0-3 b0-3 | a4-7 b4-7
  words = _mm256_permute4x64_epi64(words, 0xD8);  // a0-7 | b0-7
  words = _mm256_and_si256(words, _mm256_set1_epi16(0xFF));
  const __m256i bytes = _mm256_packus_epi16(words, words);  // a0-7 a0-7 | b0-7 b0-7
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(bytes, 0x08));
}

// clamp(q, lo, hi) + offset of 16 int32 lanes (two vectors of 8), as bytes in
// order, computed on int16: the signed saturation of the first pack is exact,
// since it keeps order and is the identity on [lo, hi] (the bounds lie inside
// int16), so out-of-range lanes still clamp to lo or hi. lo16, hi16: the clamp
// bounds (RequantChannels::clamp_min / clamp_max) and offset16 the output
// offset, broadcast to int16; lo + offset .. hi + offset lie in the output
// type's range, whose low bytes are the result. 7 operations instead of the
// 11 of two Requantize256 clamps and NarrowToBytes256.
DLG_TARGET_AVX2 inline __m128i ClampOffsetToBytes256(__m256i a, __m256i b, __m256i lo16,
                                                     __m256i hi16, __m256i offset16) {
  __m256i words = _mm256_packs_epi32(a, b);  // a0-3 b0-3 | a4-7 b4-7
  words = _mm256_min_epi16(_mm256_max_epi16(words, lo16), hi16);
  words = _mm256_and_si256(_mm256_add_epi16(words, offset16), _mm256_set1_epi16(0xFF));
  // 4-byte groups: a0-3 b0-3 a0-3 b0-3 | a4-7 b4-7 a4-7 b4-7
  const __m256i bytes = _mm256_packus_epi16(words, words);
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5)));
}

#endif  // DELEGATO_X86

#if DELEGATO_ARM

// 4 channels starting at c (c a multiple of 4). right_shift is stored negated
// (vshlq_s32 shifts right by a negative count).
struct RequantNeon {
  int32x4_t multiplier, left_shift, neg_right_shift, remainder_mask, threshold;
};

inline RequantNeon LoadRequantNeon(const RequantChannels& rq, int c) {
  return RequantNeon{vld1q_s32(rq.multiplier.data() + c), vld1q_s32(rq.left_shift.data() + c),
                     vnegq_s32(vld1q_s32(rq.right_shift.data() + c)),
                     vld1q_s32(rq.remainder_mask.data() + c), vld1q_s32(rq.threshold.data() + c)};
}

inline RequantNeon BroadcastRequantNeon(int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const int64_t mask = (int64_t{1} << right) - 1;
  return RequantNeon{vdupq_n_s32(multiplier), vdupq_n_s32(left), vdupq_n_s32(-right),
                     vdupq_n_s32(static_cast<int32_t>(mask)),
                     vdupq_n_s32(static_cast<int32_t>(mask >> 1))};
}

// MultiplyByQuantizedMultiplier per lane: sqrdmulh is the rounding doubling
// high multiply (floor((x * m + 2^30) / 2^31), see above; m >= 0 so it never
// saturates), then RoundingDivideByPOT as on x86.
inline int32x4_t MultiplyByQuantizedMultiplierNeon(int32x4_t acc, const RequantNeon& p) {
  const int32x4_t x = vshlq_s32(acc, p.left_shift);
  const int32x4_t high = vqrdmulhq_s32(x, p.multiplier);
  const int32x4_t remainder = vandq_s32(high, p.remainder_mask);
  const int32x4_t threshold = vsubq_s32(p.threshold, vshrq_n_s32(high, 31));
  const int32x4_t q = vshlq_s32(high, p.neg_right_shift);
  return vsubq_s32(q, vreinterpretq_s32_u32(vcgtq_s32(remainder, threshold)));
}

inline int32x4_t RequantizeNeon(int32x4_t acc, const RequantNeon& p, int32x4_t lo, int32x4_t hi,
                                int32x4_t offset) {
  const int32x4_t q = MultiplyByQuantizedMultiplierNeon(acc, p);
  return vaddq_s32(vminq_s32(vmaxq_s32(q, lo), hi), offset);
}

// Low bytes of 16 int32 lanes, in order.
inline uint8x16_t NarrowToBytesNeon(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
  const int16x8_t ab = vmovn_high_s32(vmovn_s32(a), b);
  const int16x8_t cd = vmovn_high_s32(vmovn_s32(c), d);
  return vreinterpretq_u8_s8(vmovn_high_s16(vmovn_s16(ab), cd));
}

#endif  // DELEGATO_ARM

}  // namespace delegato::optimized
