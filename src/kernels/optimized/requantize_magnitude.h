// Magnitude requantization: TFLite's two roundings (the rounding doubling
// high multiply, then the rounding divide by 2^e, e = -shift) composed into
// one on |acc|:
//   |result| = (|acc| * M + 2^30 + r * 2^31 - [acc < 0]) >> (31 + e),
// r = 2^(e-1) (0 when e = 0), with the sign of acc. The [acc < 0] term only
// matters when |acc| * M = 2^30 (mod 2^31) (the 2-adic valuations of |acc|
// and M sum to 30) and, for e >= 1, the second rounding ties too, which
// holds for one residue class of |acc| / 2^(30 - v2(M)) modulo 2^(e+1).
// MagnitudeExact says whether any |acc| up to a bound falls in it; a kernel
// whose Prepare bounds |acc| per channel takes this form (dropping the term)
// only where none can, with no left shift and the bound below 2^31 (no wrap).
// Then one 32x32->64 unsigned multiply, an add and a 64-bit shift per lane
// replace the signed high multiply and the rounding divide (9 operations per
// 16 lanes instead of 14; 7 with IFMA's 52-bit multiply-adds when every
// |acc| < 2^20); the caller applies the sign, usually on packed 16-bit values.
// Used by DEPTHWISE_CONV_2D (quant_depthwise.h) and the AVX-512 CONV_2D /
// FULLY_CONNECTED GEMM (quant_conv.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif

namespace delegato::optimized {

// Whether the magnitude form equals the reference for every |acc| <= bound
// with this multiplier and shift (exactly: false only when some acc in the
// bound differs, or the form does not apply: left shift, negative
// multiplier, bound of 2^31 or more).
inline bool MagnitudeExact(int32_t multiplier, int32_t shift, int64_t bound) {
  if (multiplier < 0 || shift > 0 || shift < -31 || bound < 0 || bound >= (int64_t{1} << 31))
    return false;
  if (multiplier == 0 || bound == 0) return true;
  // A negative acc ties in the first rounding when |acc| * M = 2^30 (mod
  // 2^31): |acc| = 2^z * q, q odd, z = 30 - v2(M). With e = 0 that tie is the
  // result; with e >= 1 the dropped -1 changes it only when the second
  // rounding ties too: (|acc| * M + 2^30) / 2^31 = (q * m + 1) / 2 (m = M's
  // odd part) must be 2^(e-1) modulo 2^e, i.e. q * m = 2^e - 1 modulo
  // 2^(e+1). The smallest such q is q0 = (2^e - 1) / m modulo 2^(e+1).
  const int v = __builtin_ctz(static_cast<uint32_t>(multiplier));
  const int z = 30 - v;  // v <= 30 as 0 < M < 2^31
  if ((int64_t{1} << z) > bound) return true;  // no |acc| <= bound has valuation z
  const int e = -shift;
  if (e == 0) return false;
  const uint64_t odd = static_cast<uint64_t>(multiplier) >> v;
  uint64_t inverse = odd;  // Newton's iteration doubles the correct low bits: 3, 6, ..., 96
  for (int i = 0; i < 5; ++i) inverse *= 2 - odd * inverse;
  const uint64_t modulus_mask = (uint64_t{1} << (e + 1)) - 1;
  const uint64_t q0 = (((uint64_t{1} << e) - 1) * inverse) & modulus_mask;
  return static_cast<int64_t>(q0 << z) > bound;  // q0 < 2^32, z <= 30
}

// The magnitude form of one value, sign applied (what the vector forms
// compute; for checks against the reference where no bound argument is
// tight enough). Requires 0 <= multiplier, -31 <= shift <= 0, and
// acc > INT32_MIN.
// With `tie`, the reference's - [acc < 0] too: then it is the reference for
// every such acc.
inline int32_t MagnitudeValue(int32_t acc, int32_t multiplier, int32_t shift, bool tie = false) {
  const int e = -shift;
  const uint64_t round = (uint64_t{1} << 30) + (e > 0 ? uint64_t{1} << (30 + e) : 0) -
                         (tie && acc < 0 ? 1 : 0);
  const uint64_t magnitude =
      (static_cast<uint64_t>(std::abs(acc)) * static_cast<uint64_t>(multiplier) + round) >>
      (31 + e);
  return acc < 0 ? -static_cast<int32_t>(magnitude) : static_cast<int32_t>(magnitude);
}

// Largest |x - x_zp| of an 8-bit input value.
inline int64_t MaxInputDeviation(bool is_uint8, int32_t input_zero_point) {
  const int64_t lo = is_uint8 ? 0 : -128, hi = is_uint8 ? 255 : 127;
  return std::max(std::abs(lo - input_zero_point), std::abs(hi - input_zero_point));
}

// Per-channel constants as 64-bit lanes, one array per kind, lane i of kind
// k at data(k)[c / 2 + i] for a 16- or 8-channel block starting at channel
// c: the even channels' multiplier, rounding addend and shift (31 + e), then
// the odd channels' (doubled multiplier and addend, shift e, which leaves the
// result in the lane's high 32 bits), and for IFMA the odd multiplier as
// M * 2^21. Channels never Set requantize everything to 0.
enum MagnitudeConstant {
  kEvenMultiplier,
  kEvenRound,
  kEvenShift,
  kOddMultiplier,
  kOddRound,
  kOddShift,
  kOddMultiplierIfma,
  kMagnitudeConstants
};

struct MagnitudeChannels {
  AlignedBuffer<uint64_t> constants;
  size_t half = 0;  // padded channels / 2
  bool ifma = true;  // whether the kOddMultiplierIfma constants exist

  // with_ifma = false leaves out the IFMA multipliers (7 -> 6 constants per
  // channel pair) for kernels that never take MagnitudeIfma512.
  void Init(int padded_channels, bool with_ifma = true) {
    half = static_cast<size_t>(padded_channels) / 2;
    ifma = with_ifma;
    constants = AlignedBuffer<uint64_t>((with_ifma ? kMagnitudeConstants : kOddMultiplierIfma) * half);
  }
  // Requires MagnitudeExact(multiplier, shift, bound) for the channel's bound.
  void Set(int c, int32_t multiplier, int32_t shift) {
    const int e = -shift;
    const uint64_t round = (uint64_t{1} << 30) + (e > 0 ? uint64_t{1} << (30 + e) : 0);
    const size_t lane = static_cast<size_t>(c / 2);
    const int base = c % 2 == 0 ? kEvenMultiplier : kOddMultiplier;
    const uint64_t scale = c % 2 == 0 ? 1 : 2;
    constants[(base + 0) * half + lane] = scale * static_cast<uint64_t>(multiplier);
    constants[(base + 1) * half + lane] = scale * round;
    constants[(base + 2) * half + lane] = c % 2 == 0 ? 31 + e : e;
    if (c % 2 == 1 && ifma)
      constants[kOddMultiplierIfma * half + lane] = static_cast<uint64_t>(multiplier) << 21;
  }
  const uint64_t* data(MagnitudeConstant k) const {
    return constants.data() + static_cast<size_t>(k) * half;
  }
  size_t bytes() const { return constants.bytes(); }
};

#if DELEGATO_X86

#define DLG_TARGET_AVX512_IFMA                                                                \
  __attribute__((target("avx2,fma,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni," \
                        "avx512ifma")))

// The constants of 8 lanes (AVX2) or 16 (AVX-512) from channel c.
struct MagnitudeRequant256 {
  __m256i even_multiplier, even_round, even_shift, odd_multiplier, odd_round, odd_shift;
};

DLG_TARGET_AVX2 inline MagnitudeRequant256 LoadMagnitudeRequant256(const MagnitudeChannels& mc,
                                                                   int c) {
  __m256i v[6];
  for (int k = 0; k < 6; ++k)
    v[k] = _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(mc.data(static_cast<MagnitudeConstant>(k)) + c / 2));
  return {v[0], v[1], v[2], v[3], v[4], v[5]};
}

// |requantized acc| per lane: the even lanes' quotient lands in the low 32
// bits of their 64-bit product, the odd lanes' (doubled, shifted 31 less) in
// the high 32 bits.
// As Magnitude256 with the reference's - [acc < 0] (exact for every acc,
// |acc| < 2^31, no MagnitudeExact needed): 4 more operations.
DLG_TARGET_AVX2 inline __attribute__((always_inline)) __m256i MagnitudeTie256(
    __m256i acc, const MagnitudeRequant256& q) {
  const __m256i x = _mm256_abs_epi32(acc);
  const __m256i negative = _mm256_srai_epi32(acc, 31);  // -1 in negative lanes
  const __m256i even = _mm256_srlv_epi64(
      _mm256_add_epi64(_mm256_add_epi64(_mm256_mul_epu32(x, q.even_multiplier), q.even_round),
                       _mm256_shuffle_epi32(negative, _MM_SHUFFLE(2, 2, 0, 0))),
      q.even_shift);
  const __m256i odd = _mm256_srlv_epi64(
      _mm256_add_epi64(
          _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), q.odd_multiplier),
                           q.odd_round),
          _mm256_slli_epi64(_mm256_shuffle_epi32(negative, _MM_SHUFFLE(3, 3, 1, 1)), 1)),
      q.odd_shift);
  return _mm256_blend_epi32(even, odd, 0xAA);
}

DLG_TARGET_AVX2 inline __attribute__((always_inline)) __m256i Magnitude256(
    __m256i acc, const MagnitudeRequant256& q) {
  const __m256i x = _mm256_abs_epi32(acc);
  const __m256i even = _mm256_srlv_epi64(
      _mm256_add_epi64(_mm256_mul_epu32(x, q.even_multiplier), q.even_round), q.even_shift);
  const __m256i odd = _mm256_srlv_epi64(
      _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), q.odd_multiplier),
                       q.odd_round),
      q.odd_shift);
  return _mm256_blend_epi32(even, odd, 0xAA);
}

struct MagnitudeRequant512 {
  __m512i even_multiplier, even_round, even_shift, odd_multiplier, odd_round, odd_shift;
};

// ifma: the odd multiplier for MagnitudeIfma512.
DLG_TARGET_AVX512 inline MagnitudeRequant512 LoadMagnitudeRequant512(const MagnitudeChannels& mc,
                                                                     int c, bool ifma = false) {
  __m512i v[6];
  for (int k = 0; k < 6; ++k)
    v[k] = _mm512_loadu_si512(mc.data(static_cast<MagnitudeConstant>(k)) + c / 2);
  if (ifma) v[kOddMultiplier] = _mm512_loadu_si512(mc.data(kOddMultiplierIfma) + c / 2);
  return {v[0], v[1], v[2], v[3], v[4], v[5]};
}

// As Magnitude256.
DLG_TARGET_AVX512 inline __attribute__((always_inline)) __m512i Magnitude512(
    __m512i acc, const MagnitudeRequant512& q) {
  const __m512i x = _mm512_abs_epi32(acc);
  const __m512i even = _mm512_srlv_epi64(
      _mm512_add_epi64(_mm512_mul_epu32(x, q.even_multiplier), q.even_round), q.even_shift);
  const __m512i odd = _mm512_srlv_epi64(
      _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(x, 32), q.odd_multiplier),
                       q.odd_round),
      q.odd_shift);
  return _mm512_mask_blend_epi32(0xAAAA, even, odd);
}

// As MagnitudeTie256.
DLG_TARGET_AVX512 inline __attribute__((always_inline)) __m512i MagnitudeTie512(
    __m512i acc, const MagnitudeRequant512& q) {
  const __m512i x = _mm512_abs_epi32(acc);
  const __mmask8 negative_even =
      _mm512_test_epi64_mask(acc, _mm512_set1_epi64(int64_t{0x80000000}));
  const __mmask8 negative_odd = _mm512_movepi64_mask(acc);
  __m512i even = _mm512_add_epi64(_mm512_mul_epu32(x, q.even_multiplier), q.even_round);
  even = _mm512_mask_sub_epi64(even, negative_even, even, _mm512_set1_epi64(1));
  __m512i odd =
      _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(x, 32), q.odd_multiplier), q.odd_round);
  odd = _mm512_mask_sub_epi64(odd, negative_odd, odd, _mm512_set1_epi64(2));
  return _mm512_mask_blend_epi32(0xAAAA, _mm512_srlv_epi64(even, q.even_shift),
                                 _mm512_srlv_epi64(odd, q.odd_shift));
}

// As Magnitude512 with |acc| < 2^20 and the IFMA odd multiplier:
// vpmadd52luq takes the even lanes (their high halves zeroed) times M plus
// the addend in one step; vpmadd52huq the odd lanes, which sit 32 bits up,
// times M * 2^21, giving 2 |acc| M exactly, plus the doubled addend.
DLG_TARGET_AVX512_IFMA inline __attribute__((always_inline)) __m512i MagnitudeIfma512(
    __m512i acc, const MagnitudeRequant512& q) {
  const __m512i even = _mm512_srlv_epi64(
      _mm512_madd52lo_epu64(q.even_round, _mm512_maskz_abs_epi32(0x5555, acc), q.even_multiplier),
      q.even_shift);
  const __m512i odd = _mm512_srlv_epi64(
      _mm512_madd52hi_epu64(q.odd_round, _mm512_maskz_abs_epi32(0xAAAA, acc), q.odd_multiplier),
      q.odd_shift);
  return _mm512_mask_blend_epi32(0xAAAA, even, odd);
}

#endif  // DELEGATO_X86

}  // namespace delegato::optimized
