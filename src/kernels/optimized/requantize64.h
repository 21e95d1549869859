// Requantization to 8 bits as one 64-bit rounding shift per lane, bit-exact
// with requantize.h (quant::MultiplyByQuantizedMultiplier, then offset and
// clamp) and cheaper: about 12 vector uops per 16 lanes instead of 20, and
// only 4 of them (two multiplies, two shifts) on the one port AVX-512
// multiplies and shifts share with vpdpbusd. For GEMMs with few input
// channels requantization costs more than the multiply-adds, so this is what
// sets their speed.
//
// Derivation. With x = acc << left (wrapping), T = x * m (exact in int64),
// r = right shift: the reference's rounding doubling high multiply is
// high = floor((T + 2^30) / 2^31), and its rounding divide by 2^r (half away
// from zero) is floor((high + 2^(r-1) - [high < 0]) / 2^r) for r >= 1, high
// itself for r = 0. Nested floors of integers merge, so
//   out = floor((T + 2^30 + (2^(r-1) - [high < 0]) * 2^31) / 2^(31+r)) + zp
//       = (T + add - [rounds and T < -2^30] * 2^31) >> (31 + r)
// with add = 2^30 + [r >= 1] 2^(30+r) + zp * 2^(31+r) (zp folded in;
// high < 0 exactly when T + 2^30 < 0). |T| <= 2^62, so the sum stays inside
// int64 while r <= kMaxRightShift. For r >= 1 the result fits in int32
// (|T| / 2^32 + |zp|); with r = 0 (shift >= 0) it may not, and the clamp to
// [act_min, act_max] runs on the 64-bit lanes first ("wide" channels). The
// clamp is otherwise done on bytes after a saturating narrow, where it is
// cheaper.
#pragma once

#include <cstdint>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif

namespace delegato::optimized {

struct Requant64Channels {
  static constexpr int kMaxRightShift = 22;

  // Whether every channel's shift is in range [-kMaxRightShift, 31].
  static bool Covers(const int32_t* shifts, int channels) {
    for (int c = 0; c < channels; ++c)
      if (shifts[c] < -kMaxRightShift || shifts[c] > 31) return false;
    return true;
  }

  // Per 16-channel block c0: 8 int64 lanes for channels c0, c0+2, ..., c0+14
  // (even), then 8 for c0+1, ..., c0+15 (odd).
  AlignedBuffer<int64_t> add, shift;
  AlignedBuffer<int32_t> multiplier, odd_multiplier,
      left_shift;                  // per channel / shuffled
  AlignedBuffer<uint16_t> rounds;  // per block: bit i (even lanes), 8 + i (odd lanes)
  bool wide = false;               // some channel has no right shift (see above)
  bool out_signed = true;
  int32_t act_min = 0, act_max = 0;

  // Requires Covers(shifts, channels); padded is a multiple of 16.
  void Init(const int32_t* multipliers, const int32_t* shifts, int channels, int padded,
            int32_t zero_point, int32_t out_min, int32_t out_max, bool is_signed) {
    add.Resize(padded);
    shift.Resize(padded);
    multiplier.Resize(padded);
    odd_multiplier.Resize(padded);
    left_shift.Resize(padded);
    rounds.Resize(padded / 16);
    wide = false;
    out_signed = is_signed;
    act_min = out_min;
    act_max = out_max;
    for (int c = 0; c < padded; ++c) {
      const int s = c < channels ? shifts[c] : 0;
      const int32_t m = c < channels ? multipliers[c] : 0;
      const int left = s > 0 ? s : 0, right = s > 0 ? 0 : -s;
      multiplier[c] = m;
      left_shift[c] = left;
      wide = wide || right == 0;
      const int block = c / 16, lane = c % 16;
      const int slot = block * 16 + (lane % 2) * 8 + lane / 2;
      // odd_multiplier: channel c0+2i+1 in dword 2i of its block (vpmuldq reads
      // those).
      if (lane % 2 == 1)
        odd_multiplier[block * 16 + lane - 1] = m;
      else
        odd_multiplier[c + 1] = 0;
      uint64_t a = (uint64_t{1} << 30) +
                   (static_cast<uint64_t>(static_cast<int64_t>(zero_point)) << (31 + right));
      if (right >= 1) {
        a += uint64_t{1} << (30 + right);
        rounds[block] = static_cast<uint16_t>(rounds[block] | (1u << ((lane % 2) * 8 + lane / 2)));
      }
      add[slot] = static_cast<int64_t>(a);
      shift[slot] = 31 + right;
    }
  }
};

#if DELEGATO_X86

// The constants of one 16-channel block.
struct Requant64Block {
  __m512i multiplier, odd_multiplier, left_shift, add_even, add_odd, shift_even, shift_odd;
  __mmask8 round_even, round_odd;
};

DLG_TARGET_AVX512 inline Requant64Block LoadRequant64Block(const Requant64Channels& rq, int c) {
  const int block = c / 16;
  const uint16_t rounds = rq.rounds[block];
  return Requant64Block{
      _mm512_load_si512(rq.multiplier.data() + c), _mm512_load_si512(rq.odd_multiplier.data() + c),
      _mm512_load_si512(rq.left_shift.data() + c), _mm512_load_si512(rq.add.data() + c),
      _mm512_load_si512(rq.add.data() + c + 8),    _mm512_load_si512(rq.shift.data() + c),
      _mm512_load_si512(rq.shift.data() + c + 8),  static_cast<__mmask8>(rounds & 0xFF),
      static_cast<__mmask8>(rounds >> 8)};
}

// The clamp bounds in registers (kernels keep them across their stores,
// which the compiler must otherwise assume may change them).
struct Requant64Bounds {
  __m512i min64, max64, min32;
  __m128i min8, max8;
  bool out_signed;
};

DLG_TARGET_AVX512 inline Requant64Bounds LoadRequant64Bounds(const Requant64Channels& rq) {
  return Requant64Bounds{_mm512_set1_epi64(rq.act_min),
                         _mm512_set1_epi64(rq.act_max),
                         _mm512_set1_epi32(rq.act_min),
                         _mm_set1_epi8(static_cast<char>(rq.act_min)),
                         _mm_set1_epi8(static_cast<char>(rq.act_max)),
                         rq.out_signed};
}

// MultiplyByQuantizedMultiplier + zero point per int32 lane; clamped too
// when kWide (then required), else maybe not.
template <bool kWide>
DLG_TARGET_AVX512 inline __m512i Requant64(__m512i acc, const Requant64Block& p,
                                           const Requant64Bounds& bounds) {
  if constexpr (kWide) acc = _mm512_sllv_epi32(acc, p.left_shift);
  const __m512i negative_high = _mm512_set1_epi64(-(int64_t{1} << 30));
  const __m512i two31 = _mm512_set1_epi64(int64_t{1} << 31);
  const __m512i acc_odd = _mm512_shuffle_epi32(acc, _MM_PERM_DDBB);  // dword 2i+1 -> 2i
  __m512i even = _mm512_mul_epi32(acc, p.multiplier);
  __m512i odd = _mm512_mul_epi32(acc_odd, p.odd_multiplier);
  const __mmask8 down_even = _mm512_mask_cmplt_epi64_mask(p.round_even, even, negative_high);
  const __mmask8 down_odd = _mm512_mask_cmplt_epi64_mask(p.round_odd, odd, negative_high);
  even = _mm512_add_epi64(even, p.add_even);
  odd = _mm512_add_epi64(odd, p.add_odd);
  even = _mm512_mask_sub_epi64(even, down_even, even, two31);
  odd = _mm512_mask_sub_epi64(odd, down_odd, odd, two31);
  even = _mm512_srav_epi64(even, p.shift_even);
  odd = _mm512_srav_epi64(odd, p.shift_odd);
  if constexpr (kWide) {
    even = _mm512_min_epi64(_mm512_max_epi64(even, bounds.min64), bounds.max64);
    odd = _mm512_min_epi64(_mm512_max_epi64(odd, bounds.min64), bounds.max64);
  }
  // Odd results (dword 2i of `odd`) into the odd dwords.
  return _mm512_mask_shuffle_epi32(even, 0xAAAA, odd, _MM_PERM_CCAA);
}

// The 16 lanes clamped to [act_min, act_max] as bytes.
DLG_TARGET_AVX512 inline __m128i ClampToBytes64(__m512i v, const Requant64Bounds& bounds) {
  if (bounds.out_signed)
    return _mm_min_epi8(_mm_max_epi8(_mm512_cvtsepi32_epi8(v), bounds.min8), bounds.max8);
  const __m128i b = _mm512_cvtusepi32_epi8(_mm512_max_epi32(v, bounds.min32));
  return _mm_min_epu8(b, bounds.max8);
}

#endif  // DELEGATO_X86

}  // namespace delegato::optimized
