#include "kernels/optimized/quant_binary.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "kernels/optimized/quantize.h"
#include "kernels/optimized/requantize.h"
#include "kernels/optimized/requantize_magnitude.h"

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

using Kind = QuantBinary::Kind;

inline int32_t Load8(const uint8_t* p, bool is_uint8) {
  return is_uint8 ? int32_t{*p} : int32_t{static_cast<int8_t>(*p)};
}

// The reference arithmetic of one element.
inline uint8_t ScalarElement(const QuantBinary& k, int32_t a, int32_t b) {
  if (k.kind() == Kind::kMul) {
    return k.is_uint8() ? static_cast<uint8_t>(reference::QuantizedMul<uint8_t>(a, b, k.mul()))
                        : static_cast<uint8_t>(reference::QuantizedMul<int8_t>(a, b, k.mul()));
  }
  const bool sub = k.kind() == Kind::kSub;
  return k.is_uint8() ? static_cast<uint8_t>(reference::QuantizedAddSub<uint8_t>(a, b, k.add(), sub))
                      : static_cast<uint8_t>(reference::QuantizedAddSub<int8_t>(a, b, k.add(), sub));
}

void ScalarSpan(const QuantBinary& k, const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb,
                uint8_t* out, int64_t n) {
  const bool u8 = k.is_uint8();
  for (int64_t i = 0; i < n; ++i) out[i] = ScalarElement(k, Load8(a + i * sa, u8), Load8(b + i * sb, u8));
}

// `count` rows of n outputs each: row r reads a + r * a_row and b + r * b_row
// (element strides 0 or 1 within a row) and writes out + r * out_row. One
// call for all of them keeps the dispatch and the constants' set-up out of
// each row (a squeeze-and-excitation MUL's rows of 96-240 channels: 5-15% of
// its time).
struct Rows {
  int64_t count = 1, a_row = 0, b_row = 0, out_row = 0;
};

// An ADD/SUB input rescaled as the reference does, for a broadcast value.
inline int32_t RescaleAddInput(int32_t x, int32_t offset, int left_shift, int32_t multiplier,
                               int shift) {
  return quant::MultiplyByQuantizedMultiplierSmallerThanOneExp((offset + x) * (1 << left_shift),
                                                               multiplier, shift);
}

#if DELEGATO_ARM

// 8 bytes widened to two int32x4 (lanes 0-3, 4-7).
template <bool kSigned>
inline int32x4x2_t Load8Neon(const uint8_t* p) {
  const uint8x8_t bytes = vld1_u8(p);
  const int16x8_t h = kSigned ? vmovl_s8(vreinterpret_s8_u8(bytes))
                              : vreinterpretq_s16_u16(vmovl_u8(bytes));
  return int32x4x2_t{{vmovl_s16(vget_low_s16(h)), vmovl_high_s16(h)}};
}

// The reference adds the output offset in int32 (wrapping), then clamps.
inline int32x4_t OutputStageNeon(int32x4_t q, int32x4_t offset, int32x4_t lo, int32x4_t hi) {
  return vminq_s32(vmaxq_s32(vaddq_s32(q, offset), lo), hi);
}

// Whole groups of 8 (as Avx2Span); the caller finishes the tail with the scalar loop.
template <bool kSigned, Kind kKind>
int64_t NeonSpan(const QuantBinary& k, const uint8_t* a, int64_t sa, const uint8_t* b,
                 int64_t sb, uint8_t* out, int64_t n) {
  const int64_t full = n / 8 * 8;
  if constexpr (kKind == Kind::kMul) {
    const reference::QuantizedMulDivParams& p = k.mul();
    const RequantNeon rq = BroadcastRequantNeon(p.output_multiplier, p.output_shift);
    const int32x4_t off1 = vdupq_n_s32(p.input1_offset);
    const int32x4_t off2 = vdupq_n_s32(p.input2_offset);
    const int32x4_t out_off = vdupq_n_s32(p.output_offset);
    const int32x4_t lo = vdupq_n_s32(p.act_min);
    const int32x4_t hi = vdupq_n_s32(p.act_max);
    const int32x4_t a_const = vdupq_n_s32(Load8(a, !kSigned) + p.input1_offset);
    const int32x4_t b_const = vdupq_n_s32(Load8(b, !kSigned) + p.input2_offset);
    for (int64_t i = 0; i < full; i += 8) {
      int32x4x2_t va{{a_const, a_const}}, vb{{b_const, b_const}};
      if (sa) {
        va = Load8Neon<kSigned>(a + i);
        va.val[0] = vaddq_s32(va.val[0], off1);
        va.val[1] = vaddq_s32(va.val[1], off1);
      }
      if (sb) {
        vb = Load8Neon<kSigned>(b + i);
        vb.val[0] = vaddq_s32(vb.val[0], off2);
        vb.val[1] = vaddq_s32(vb.val[1], off2);
      }
      int32x4_t v[2];
      for (int h = 0; h < 2; ++h)
        v[h] = OutputStageNeon(
            MultiplyByQuantizedMultiplierNeon(vmulq_s32(va.val[h], vb.val[h]), rq), out_off, lo, hi);
      vst1_u8(out + i, vget_low_u8(NarrowToBytesNeon(v[0], v[1], v[0], v[1])));
    }
  } else {
    const reference::QuantizedAddParams& p = k.add();
    const RequantNeon r1 = BroadcastRequantNeon(p.input1_multiplier, p.input1_shift);
    const RequantNeon r2 = BroadcastRequantNeon(p.input2_multiplier, p.input2_shift);
    const RequantNeon ro = BroadcastRequantNeon(p.output_multiplier, p.output_shift);
    const int32x4_t off1 = vdupq_n_s32(p.input1_offset);
    const int32x4_t off2 = vdupq_n_s32(p.input2_offset);
    const int32x4_t out_off = vdupq_n_s32(p.output_offset);
    const int32x4_t lo = vdupq_n_s32(p.act_min);
    const int32x4_t hi = vdupq_n_s32(p.act_max);
    const int32x4_t shift = vdupq_n_s32(p.left_shift);
    const int32x4_t a_const = vdupq_n_s32(RescaleAddInput(
        Load8(a, !kSigned), p.input1_offset, p.left_shift, p.input1_multiplier, p.input1_shift));
    const int32x4_t b_const = vdupq_n_s32(RescaleAddInput(
        Load8(b, !kSigned), p.input2_offset, p.left_shift, p.input2_multiplier, p.input2_shift));
    for (int64_t i = 0; i < full; i += 8) {
      int32x4x2_t va{{a_const, a_const}}, vb{{b_const, b_const}};
      if (sa) {
        va = Load8Neon<kSigned>(a + i);
        for (int h = 0; h < 2; ++h)
          va.val[h] = MultiplyByQuantizedMultiplierNeon(
              vshlq_s32(vaddq_s32(va.val[h], off1), shift), r1);
      }
      if (sb) {
        vb = Load8Neon<kSigned>(b + i);
        for (int h = 0; h < 2; ++h)
          vb.val[h] = MultiplyByQuantizedMultiplierNeon(
              vshlq_s32(vaddq_s32(vb.val[h], off2), shift), r2);
      }
      int32x4_t v[2];
      for (int h = 0; h < 2; ++h) {
        const int32x4_t raw = kKind == Kind::kSub ? vsubq_s32(va.val[h], vb.val[h])
                                                  : vaddq_s32(va.val[h], vb.val[h]);
        v[h] = OutputStageNeon(MultiplyByQuantizedMultiplierNeon(raw, ro), out_off, lo, hi);
      }
      vst1_u8(out + i, vget_low_u8(NarrowToBytesNeon(v[0], v[1], v[0], v[1])));
    }
  }
  return full;
}

template <bool kSigned>
int64_t NeonDispatch(const QuantBinary& k, const uint8_t* a, int64_t sa, const uint8_t* b,
                     int64_t sb, uint8_t* out, int64_t n) {
  switch (k.kind()) {
    case Kind::kAdd: return NeonSpan<kSigned, Kind::kAdd>(k, a, sa, b, sb, out, n);
    case Kind::kSub: return NeonSpan<kSigned, Kind::kSub>(k, a, sa, b, sb, out, n);
    case Kind::kMul: return NeonSpan<kSigned, Kind::kMul>(k, a, sa, b, sb, out, n);
  }
  return 0;
}

#endif  // DELEGATO_ARM

#if DELEGATO_X86

// The reference adds the output offset in int32 (wrapping), then clamps.
DLG_TARGET_AVX512 inline __m512i OutputStage512(__m512i q, __m512i offset, __m512i lo, __m512i hi) {
  return _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(q, offset), lo), hi);
}
DLG_TARGET_AVX2 inline __m256i OutputStage256(__m256i q, __m256i offset, __m256i lo, __m256i hi) {
  return _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(q, offset), lo), hi);
}

template <bool kSigned>
DLG_TARGET_AVX512 inline __m512i Load16(const uint8_t* p, __mmask16 mask) {
  const __m128i bytes = _mm_maskz_loadu_epi8(mask, p);
  return kSigned ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
}

// ADD / SUB / MUL rescales (QuantBinary::Form): requantize.h's general
// form, the magnitude form (requantize_magnitude.h) where the constructor
// proved it exact, or the magnitude form with its tie term, exact for any
// value.
template <int kForm>
DLG_TARGET_AVX512 inline __m512i AddRescale512(__m512i x, const Requant512& r,
                                               const MagnitudeRequant512& m) {
  if constexpr (kForm == QuantBinary::kGeneralForm) {
    return MultiplyByQuantizedMultiplier512(x, r);
  } else {
    const __m512i magnitude =
        kForm == QuantBinary::kMagnitudeForm ? Magnitude512(x, m) : MagnitudeTie512(x, m);
    return _mm512_mask_sub_epi32(magnitude, _mm512_movepi32_mask(x), _mm512_setzero_si512(),
                                 magnitude);
  }
}

// kOut: the output's rescale form; the inputs' is the magnitude form unless
// it is the general one.
template <bool kSigned, Kind kKind, int kOut>
DLG_TARGET_AVX512 void AddSpan512(const QuantBinary& k, const uint8_t* a, int64_t sa,
                                  const uint8_t* b, int64_t sb, uint8_t* out, int64_t n,
                                  const Rows& rows) {
  constexpr int kIn =
      kOut == QuantBinary::kGeneralForm ? QuantBinary::kGeneralForm : QuantBinary::kMagnitudeForm;
  const reference::QuantizedAddParams& p = k.add();
  const Requant512 r1 = BroadcastRequant512(p.input1_multiplier, p.input1_shift);
  const Requant512 r2 = BroadcastRequant512(p.input2_multiplier, p.input2_shift);
  const Requant512 ro = BroadcastRequant512(p.output_multiplier, p.output_shift);
  MagnitudeRequant512 m1{}, m2{}, mo{};
  if constexpr (kOut != QuantBinary::kGeneralForm) {
    m1 = LoadMagnitudeRequant512(k.magnitude_constants(), 0);
    m2 = LoadMagnitudeRequant512(k.magnitude_constants(), 16);
    mo = LoadMagnitudeRequant512(k.magnitude_constants(), 32);
  }
  const __m512i off1 = _mm512_set1_epi32(p.input1_offset);
  const __m512i off2 = _mm512_set1_epi32(p.input2_offset);
  const __m512i out_off = _mm512_set1_epi32(p.output_offset);
  const __m512i lo = _mm512_set1_epi32(p.act_min);
  const __m512i hi = _mm512_set1_epi32(p.act_max);
  const __m128i shift = _mm_cvtsi32_si128(p.left_shift);
  for (int64_t r = 0; r < rows.count; ++r, a += rows.a_row, b += rows.b_row, out += rows.out_row) {
    const __m512i a_const = _mm512_set1_epi32(RescaleAddInput(
        Load8(a, !kSigned), p.input1_offset, p.left_shift, p.input1_multiplier, p.input1_shift));
    const __m512i b_const = _mm512_set1_epi32(RescaleAddInput(
        Load8(b, !kSigned), p.input2_offset, p.left_shift, p.input2_multiplier, p.input2_shift));
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 mask = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
      const __m512i va =
          sa ? AddRescale512<kIn>(
                   _mm512_sll_epi32(_mm512_add_epi32(Load16<kSigned>(a + i, mask), off1), shift),
                   r1, m1)
             : a_const;
      const __m512i vb =
          sb ? AddRescale512<kIn>(
                   _mm512_sll_epi32(_mm512_add_epi32(Load16<kSigned>(b + i, mask), off2), shift),
                   r2, m2)
             : b_const;
      const __m512i raw = kKind == Kind::kSub ? _mm512_sub_epi32(va, vb) : _mm512_add_epi32(va, vb);
      const __m512i v = OutputStage512(AddRescale512<kOut>(raw, ro, mo), out_off, lo, hi);
      _mm_mask_storeu_epi8(out + i, mask, _mm512_cvtepi32_epi8(v));
    }
  }
}

// The longest repeated row MulSpan512 / MulSpan256 keep in a tile (6 KB of
// int32 lanes on the stack).
constexpr int64_t kMulTileValues = 1536;

// MUL with the magnitude form (kOut, with or without its tie term): the
// product of the offset inputs (|p| <= 255^2, so vpmaddwd of the low 16-bit
// halves gives it exactly) rescaled by AddRescale512.
template <bool kSigned, int kOut>
DLG_TARGET_AVX512 void MulSpan512(const QuantBinary& k, const uint8_t* a, int64_t sa,
                                  const uint8_t* b, int64_t sb, uint8_t* out, int64_t n,
                                  const Rows& rows) {
  const reference::QuantizedMulDivParams& p = k.mul();
  const MagnitudeRequant512 mo = LoadMagnitudeRequant512(k.magnitude_constants(), 0);
  const Requant512 unused{};
  const __m512i off1 = _mm512_set1_epi32(p.input1_offset);
  const __m512i off2 = _mm512_set1_epi32(p.input2_offset);
  const __m512i out_off = _mm512_set1_epi32(p.output_offset);
  const __m512i lo = _mm512_set1_epi32(p.act_min);
  const __m512i hi = _mm512_set1_epi32(p.act_max);
  const __m512i low_words = _mm512_set1_epi32(0xFFFF);
  // A row that repeats (a squeeze-and-excitation scale): its offset low
  // words once, not per row.
  alignas(64) __m512i tile[kMulTileValues / 16];
  const bool b_tile = sb != 0 && rows.b_row == 0 && rows.count > 1 && n <= kMulTileValues;
  if (b_tile)
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 mask = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
      tile[i / 16] = _mm512_and_si512(_mm512_add_epi32(Load16<kSigned>(b + i, mask), off2), low_words);
    }
  for (int64_t r = 0; r < rows.count; ++r, a += rows.a_row, b += rows.b_row, out += rows.out_row) {
    const __m512i a_const = _mm512_set1_epi32(Load8(a, !kSigned) + p.input1_offset);
    const __m512i b_const = _mm512_set1_epi32(Load8(b, !kSigned) + p.input2_offset);
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 mask = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
      const __m512i va = sa ? _mm512_add_epi32(Load16<kSigned>(a + i, mask), off1) : a_const;
      const __m512i vb_words =
          b_tile ? tile[i / 16]
                 : _mm512_and_si512(
                       sb ? _mm512_add_epi32(Load16<kSigned>(b + i, mask), off2) : b_const,
                       low_words);
      const __m512i product = _mm512_madd_epi16(_mm512_and_si512(va, low_words), vb_words);
      const __m512i v = OutputStage512(AddRescale512<kOut>(product, unused, mo), out_off, lo, hi);
      _mm_mask_storeu_epi8(out + i, mask, _mm512_cvtepi32_epi8(v));
    }
  }
}

template <bool kSigned, Kind kKind>
DLG_TARGET_AVX512 void Avx512Span(const QuantBinary& k, const uint8_t* a, int64_t sa,
                                  const uint8_t* b, int64_t sb, uint8_t* out, int64_t n,
                                  const Rows& rows) {
  if constexpr (kKind == Kind::kMul) {
    if (k.form() == QuantBinary::kMagnitudeForm)
      return MulSpan512<kSigned, QuantBinary::kMagnitudeForm>(k, a, sa, b, sb, out, n, rows);
    if (k.form() == QuantBinary::kMagnitudeTieForm)
      return MulSpan512<kSigned, QuantBinary::kMagnitudeTieForm>(k, a, sa, b, sb, out, n, rows);
    const reference::QuantizedMulDivParams& p = k.mul();
    const Requant512 rq = BroadcastRequant512(p.output_multiplier, p.output_shift);
    const __m512i off1 = _mm512_set1_epi32(p.input1_offset);
    const __m512i off2 = _mm512_set1_epi32(p.input2_offset);
    const __m512i out_off = _mm512_set1_epi32(p.output_offset);
    const __m512i lo = _mm512_set1_epi32(p.act_min);
    const __m512i hi = _mm512_set1_epi32(p.act_max);
    for (int64_t r = 0; r < rows.count; ++r, a += rows.a_row, b += rows.b_row, out += rows.out_row) {
      const __m512i a_const = _mm512_set1_epi32(Load8(a, !kSigned) + p.input1_offset);
      const __m512i b_const = _mm512_set1_epi32(Load8(b, !kSigned) + p.input2_offset);
      for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 mask = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
        const __m512i va = sa ? _mm512_add_epi32(Load16<kSigned>(a + i, mask), off1) : a_const;
        const __m512i vb = sb ? _mm512_add_epi32(Load16<kSigned>(b + i, mask), off2) : b_const;
        const __m512i v = OutputStage512(MultiplyByQuantizedMultiplier512(_mm512_mullo_epi32(va, vb), rq),
                                         out_off, lo, hi);
        _mm_mask_storeu_epi8(out + i, mask, _mm512_cvtepi32_epi8(v));
      }
    }
  } else if (k.form() == QuantBinary::kMagnitudeForm) {
    AddSpan512<kSigned, kKind, QuantBinary::kMagnitudeForm>(k, a, sa, b, sb, out, n, rows);
  } else if (k.form() == QuantBinary::kMagnitudeTieForm) {
    AddSpan512<kSigned, kKind, QuantBinary::kMagnitudeTieForm>(k, a, sa, b, sb, out, n, rows);
  } else {
    AddSpan512<kSigned, kKind, QuantBinary::kGeneralForm>(k, a, sa, b, sb, out, n, rows);
  }
}

template <bool kSigned>
DLG_TARGET_AVX2 inline __m256i Load8Lanes(const uint8_t* p) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return kSigned ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
}

// As AddRescale512 (vpsignd applies the sign; a zero sum's magnitude is 0).
template <int kForm>
DLG_TARGET_AVX2 inline __m256i AddRescale256(__m256i x, const Requant256& r,
                                             const MagnitudeRequant256& m) {
  if constexpr (kForm == QuantBinary::kMagnitudeForm)
    return _mm256_sign_epi32(Magnitude256(x, m), x);
  else if constexpr (kForm == QuantBinary::kMagnitudeTieForm)
    return _mm256_sign_epi32(MagnitudeTie256(x, m), x);
  else
    return MultiplyByQuantizedMultiplier256(x, r);
}

// n: a multiple of 8.
template <bool kSigned, Kind kKind, int kOut>
DLG_TARGET_AVX2 void AddSpan256(const QuantBinary& k, const uint8_t* a, int64_t sa,
                                const uint8_t* b, int64_t sb, uint8_t* out, int64_t n,
                                const Rows& rows) {
  constexpr int kIn =
      kOut == QuantBinary::kGeneralForm ? QuantBinary::kGeneralForm : QuantBinary::kMagnitudeForm;
  const reference::QuantizedAddParams& p = k.add();
  const Requant256 r1 = BroadcastRequant256(p.input1_multiplier, p.input1_shift);
  const Requant256 r2 = BroadcastRequant256(p.input2_multiplier, p.input2_shift);
  const Requant256 ro = BroadcastRequant256(p.output_multiplier, p.output_shift);
  MagnitudeRequant256 m1{}, m2{}, mo{};
  if constexpr (kOut != QuantBinary::kGeneralForm) {
    m1 = LoadMagnitudeRequant256(k.magnitude_constants(), 0);
    m2 = LoadMagnitudeRequant256(k.magnitude_constants(), 16);
    mo = LoadMagnitudeRequant256(k.magnitude_constants(), 32);
  }
  const __m256i off1 = _mm256_set1_epi32(p.input1_offset);
  const __m256i off2 = _mm256_set1_epi32(p.input2_offset);
  const __m256i out_off = _mm256_set1_epi32(p.output_offset);
  const __m256i lo = _mm256_set1_epi32(p.act_min);
  const __m256i hi = _mm256_set1_epi32(p.act_max);
  const __m128i shift = _mm_cvtsi32_si128(p.left_shift);
  for (int64_t r = 0; r < rows.count; ++r, a += rows.a_row, b += rows.b_row, out += rows.out_row) {
    const __m256i a_const = _mm256_set1_epi32(RescaleAddInput(
        Load8(a, !kSigned), p.input1_offset, p.left_shift, p.input1_multiplier, p.input1_shift));
    const __m256i b_const = _mm256_set1_epi32(RescaleAddInput(
        Load8(b, !kSigned), p.input2_offset, p.left_shift, p.input2_multiplier, p.input2_shift));
    for (int64_t i = 0; i < n; i += 8) {
      const __m256i va =
          sa ? AddRescale256<kIn>(
                   _mm256_sll_epi32(_mm256_add_epi32(Load8Lanes<kSigned>(a + i), off1), shift), r1,
                   m1)
             : a_const;
      const __m256i vb =
          sb ? AddRescale256<kIn>(
                   _mm256_sll_epi32(_mm256_add_epi32(Load8Lanes<kSigned>(b + i), off2), shift), r2,
                   m2)
             : b_const;
      const __m256i raw = kKind == Kind::kSub ? _mm256_sub_epi32(va, vb) : _mm256_add_epi32(va, vb);
      const __m256i v = OutputStage256(AddRescale256<kOut>(raw, ro, mo), out_off, lo, hi);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), NarrowToBytes256(v, v));
    }
  }
}

// As MulSpan512; n a multiple of 8.
template <bool kSigned, int kOut>
DLG_TARGET_AVX2 void MulSpan256(const QuantBinary& k, const uint8_t* a, int64_t sa,
                                const uint8_t* b, int64_t sb, uint8_t* out, int64_t n,
                                const Rows& rows) {
  const reference::QuantizedMulDivParams& p = k.mul();
  const MagnitudeRequant256 mo = LoadMagnitudeRequant256(k.magnitude_constants(), 0);
  const Requant256 unused{};
  const __m256i off1 = _mm256_set1_epi32(p.input1_offset);
  const __m256i off2 = _mm256_set1_epi32(p.input2_offset);
  const __m256i out_off = _mm256_set1_epi32(p.output_offset);
  const __m256i lo = _mm256_set1_epi32(p.act_min);
  const __m256i hi = _mm256_set1_epi32(p.act_max);
  const __m256i low_words = _mm256_set1_epi32(0xFFFF);
  // As MulSpan512: a repeated second row's offset low words once per call.
  alignas(32) __m256i tile[kMulTileValues / 8];
  const bool b_tile = sb != 0 && rows.b_row == 0 && rows.count > 1 && n <= kMulTileValues;
  if (b_tile)
    for (int64_t i = 0; i < n; i += 8)
      tile[i / 8] =
          _mm256_and_si256(_mm256_add_epi32(Load8Lanes<kSigned>(b + i), off2), low_words);
  for (int64_t r = 0; r < rows.count; ++r, a += rows.a_row, b += rows.b_row, out += rows.out_row) {
    const __m256i a_const = _mm256_set1_epi32(Load8(a, !kSigned) + p.input1_offset);
    const __m256i b_const = _mm256_set1_epi32(Load8(b, !kSigned) + p.input2_offset);
    for (int64_t i = 0; i < n; i += 8) {
      const __m256i va = sa ? _mm256_add_epi32(Load8Lanes<kSigned>(a + i), off1) : a_const;
      const __m256i vb_words =
          b_tile ? tile[i / 8]
                 : _mm256_and_si256(
                       sb ? _mm256_add_epi32(Load8Lanes<kSigned>(b + i), off2) : b_const,
                       low_words);
      const __m256i product = _mm256_madd_epi16(_mm256_and_si256(va, low_words), vb_words);
      const __m256i v = OutputStage256(AddRescale256<kOut>(product, unused, mo), out_off, lo, hi);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), NarrowToBytes256(v, v));
    }
  }
}

// Whole groups of 8 of each row; the caller finishes the rows' tails with
// the scalar loop.
template <bool kSigned, Kind kKind>
DLG_TARGET_AVX2 int64_t Avx2Span(const QuantBinary& k, const uint8_t* a, int64_t sa,
                                 const uint8_t* b, int64_t sb, uint8_t* out, int64_t n,
                                 const Rows& rows) {
  const int64_t full = n / 8 * 8;
  if constexpr (kKind == Kind::kMul) {
    if (k.form() == QuantBinary::kMagnitudeForm) {
      MulSpan256<kSigned, QuantBinary::kMagnitudeForm>(k, a, sa, b, sb, out, full, rows);
      return full;
    }
    if (k.form() == QuantBinary::kMagnitudeTieForm) {
      MulSpan256<kSigned, QuantBinary::kMagnitudeTieForm>(k, a, sa, b, sb, out, full, rows);
      return full;
    }
    const reference::QuantizedMulDivParams& p = k.mul();
    const Requant256 rq = BroadcastRequant256(p.output_multiplier, p.output_shift);
    const __m256i off1 = _mm256_set1_epi32(p.input1_offset);
    const __m256i off2 = _mm256_set1_epi32(p.input2_offset);
    const __m256i out_off = _mm256_set1_epi32(p.output_offset);
    const __m256i lo = _mm256_set1_epi32(p.act_min);
    const __m256i hi = _mm256_set1_epi32(p.act_max);
    for (int64_t r = 0; r < rows.count; ++r, a += rows.a_row, b += rows.b_row, out += rows.out_row) {
      const __m256i a_const = _mm256_set1_epi32(Load8(a, !kSigned) + p.input1_offset);
      const __m256i b_const = _mm256_set1_epi32(Load8(b, !kSigned) + p.input2_offset);
      for (int64_t i = 0; i < full; i += 8) {
        const __m256i va = sa ? _mm256_add_epi32(Load8Lanes<kSigned>(a + i), off1) : a_const;
        const __m256i vb = sb ? _mm256_add_epi32(Load8Lanes<kSigned>(b + i), off2) : b_const;
        const __m256i v = OutputStage256(MultiplyByQuantizedMultiplier256(_mm256_mullo_epi32(va, vb), rq),
                                         out_off, lo, hi);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), NarrowToBytes256(v, v));
      }
    }
  } else if (k.form() == QuantBinary::kMagnitudeForm) {
    AddSpan256<kSigned, kKind, QuantBinary::kMagnitudeForm>(k, a, sa, b, sb, out, full, rows);
  } else if (k.form() == QuantBinary::kMagnitudeTieForm) {
    AddSpan256<kSigned, kKind, QuantBinary::kMagnitudeTieForm>(k, a, sa, b, sb, out, full, rows);
  } else {
    AddSpan256<kSigned, kKind, QuantBinary::kGeneralForm>(k, a, sa, b, sb, out, full, rows);
  }
  return full;
}

template <bool kSigned>
void Avx512Dispatch(const QuantBinary& k, const uint8_t* a, int64_t sa, const uint8_t* b,
                    int64_t sb, uint8_t* out, int64_t n, const Rows& rows) {
  switch (k.kind()) {
    case Kind::kAdd: Avx512Span<kSigned, Kind::kAdd>(k, a, sa, b, sb, out, n, rows); return;
    case Kind::kSub: Avx512Span<kSigned, Kind::kSub>(k, a, sa, b, sb, out, n, rows); return;
    case Kind::kMul: Avx512Span<kSigned, Kind::kMul>(k, a, sa, b, sb, out, n, rows); return;
  }
}

template <bool kSigned>
int64_t Avx2Dispatch(const QuantBinary& k, const uint8_t* a, int64_t sa, const uint8_t* b,
                     int64_t sb, uint8_t* out, int64_t n, const Rows& rows) {
  switch (k.kind()) {
    case Kind::kAdd: return Avx2Span<kSigned, Kind::kAdd>(k, a, sa, b, sb, out, n, rows);
    case Kind::kSub: return Avx2Span<kSigned, Kind::kSub>(k, a, sa, b, sb, out, n, rows);
    case Kind::kMul: return Avx2Span<kSigned, Kind::kMul>(k, a, sa, b, sb, out, n, rows);
  }
  return 0;
}


// Short inner rows. Over the last two merged dimensions [R, P] (P short)
// each input is one of three forms, indexed by the flat position o = r*P + c
// inside the block: contiguous (x[o]), repeating a row (x[c]) or one value
// per row (x[r]). The walk runs whole vectors across row boundaries: the
// repeating row is rescaled once into a tile long enough to load a vector at
// any phase c; per-row values are rescaled as a vector of consecutive rows
// and spread to their lanes by a permute with lane index (c + j) / P.
enum class Src { kLinear, kTile, kPerRow };

constexpr int64_t kMaxPeriod = 63;  // shorter inner rows take the block walk
constexpr int kMaxLanes = 16;

// One block's inputs: data of the block (kLinear, kPerRow) or the rescaled
// tile (kTile).
struct BlockInputs {
  int64_t period = 0, rows = 0;
  const uint8_t* a = nullptr;
  const uint8_t* b = nullptr;
  const int32_t* tile_a = nullptr;
  const int32_t* tile_b = nullptr;
};

// floor(m / P) as (m * ceil(2^16 / P)) >> 16, exact for m < 2^16 / P.
inline int32_t DivMagic(int64_t period) { return static_cast<int32_t>((65536 + period - 1) / period); }

template <bool kSigned, Kind kKind>
struct Lanes512 {
  Requant512 r1, r2, ro;
  __m512i off1, off2, out_off, lo, hi;
  __m128i shift;
};

template <bool kSigned, Kind kKind>
DLG_TARGET_AVX512 inline Lanes512<kSigned, kKind> MakeLanes512(const QuantBinary& k) {
  Lanes512<kSigned, kKind> q;
  if constexpr (kKind == Kind::kMul) {
    const reference::QuantizedMulDivParams& p = k.mul();
    q.ro = BroadcastRequant512(p.output_multiplier, p.output_shift);
    q.r1 = q.r2 = q.ro;
    q.off1 = _mm512_set1_epi32(p.input1_offset);
    q.off2 = _mm512_set1_epi32(p.input2_offset);
    q.out_off = _mm512_set1_epi32(p.output_offset);
    q.lo = _mm512_set1_epi32(p.act_min);
    q.hi = _mm512_set1_epi32(p.act_max);
    q.shift = _mm_setzero_si128();
  } else {
    const reference::QuantizedAddParams& p = k.add();
    q.r1 = BroadcastRequant512(p.input1_multiplier, p.input1_shift);
    q.r2 = BroadcastRequant512(p.input2_multiplier, p.input2_shift);
    q.ro = BroadcastRequant512(p.output_multiplier, p.output_shift);
    q.off1 = _mm512_set1_epi32(p.input1_offset);
    q.off2 = _mm512_set1_epi32(p.input2_offset);
    q.out_off = _mm512_set1_epi32(p.output_offset);
    q.lo = _mm512_set1_epi32(p.act_min);
    q.hi = _mm512_set1_epi32(p.act_max);
    q.shift = _mm_cvtsi32_si128(p.left_shift);
  }
  return q;
}

// An input's lanes as the arithmetic consumes them (MUL: x + offset; ADD,
// SUB: rescaled).
template <bool kSigned, Kind kKind>
DLG_TARGET_AVX512 inline __m512i Input512(const Lanes512<kSigned, kKind>& q, bool second,
                                          __m512i x) {
  const __m512i v = _mm512_add_epi32(x, second ? q.off2 : q.off1);
  if constexpr (kKind == Kind::kMul) return v;
  return MultiplyByQuantizedMultiplier512(_mm512_sll_epi32(v, q.shift), second ? q.r2 : q.r1);
}

template <bool kSigned, Kind kKind>
DLG_TARGET_AVX512 inline __m512i Output512(const Lanes512<kSigned, kKind>& q, __m512i va,
                                           __m512i vb) {
  __m512i raw;
  if constexpr (kKind == Kind::kMul)
    raw = _mm512_mullo_epi32(va, vb);
  else if constexpr (kKind == Kind::kSub)
    raw = _mm512_sub_epi32(va, vb);
  else
    raw = _mm512_add_epi32(va, vb);
  return OutputStage512(MultiplyByQuantizedMultiplier512(raw, q.ro), q.out_off, q.lo, q.hi);
}

template <bool kSigned, Kind kKind, Src kS>
DLG_TARGET_AVX512 inline __m512i Operand512(const Lanes512<kSigned, kKind>& q, bool second,
                                            const uint8_t* data, const int32_t* tile, int64_t o,
                                            __mmask16 mask, int64_t phase, __m512i lane_rows,
                                            __m512i row_values) {
  if constexpr (kS == Src::kLinear) {
    return Input512(q, second, Load16<kSigned>(data + o, mask));
  } else if constexpr (kS == Src::kTile) {
    return _mm512_loadu_si512(tile + phase);
  } else {
    return _mm512_permutexvar_epi32(lane_rows, row_values);
  }
}

// Outputs [o, o_end) of one block.
template <bool kSigned, Kind kKind, Src kA, Src kB>
DLG_TARGET_AVX512 void Avx512Block(const QuantBinary& k, const BlockInputs& in, uint8_t* out,
                                   int64_t o, int64_t o_end) {
  const Lanes512<kSigned, kKind> q = MakeLanes512<kSigned, kKind>(k);
  const int64_t period = in.period;
  int64_t row = o / period, phase = o % period;
  const int64_t step_rows = 16 / period, step_phase = 16 % period;
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i magic = _mm512_set1_epi32(DivMagic(period));
  // Per-row values: rows [row_base, row_base + 16) rescaled, kept while the
  // vectors stay within them.
  __m512i row_values = _mm512_setzero_si512();
  int64_t row_base = -16;
  for (; o < o_end; o += 16) {
    const int64_t count = o_end - o;
    const __mmask16 mask = static_cast<__mmask16>(count >= 16 ? 0xFFFF : (1u << count) - 1);
    __m512i lane_rows = iota;
    if constexpr (kA == Src::kPerRow || kB == Src::kPerRow) {
      const int64_t last_row = row + (phase + std::min<int64_t>(count, 16) - 1) / period;
      if (last_row >= row_base + 16) {
        row_base = row;
        const int64_t left = in.rows - row;
        const __mmask16 row_mask = static_cast<__mmask16>(left >= 16 ? 0xFFFF : (1u << left) - 1);
        row_values = Input512(q, kB == Src::kPerRow,
                              Load16<kSigned>((kA == Src::kPerRow ? in.a : in.b) + row, row_mask));
      }
      lane_rows = _mm512_add_epi32(
          _mm512_srli_epi32(
              _mm512_mullo_epi32(_mm512_add_epi32(iota, _mm512_set1_epi32(static_cast<int32_t>(phase))), magic),
              16),
          _mm512_set1_epi32(static_cast<int32_t>(row - row_base)));
    }
    const __m512i va = Operand512<kSigned, kKind, kA>(q, false, in.a, in.tile_a, o, mask, phase,
                                                      lane_rows, row_values);
    const __m512i vb = Operand512<kSigned, kKind, kB>(q, true, in.b, in.tile_b, o, mask, phase,
                                                      lane_rows, row_values);
    _mm_mask_storeu_epi8(out + o, mask, _mm512_cvtepi32_epi8(Output512(q, va, vb)));
    phase += step_phase;
    row += step_rows;
    if (phase >= period) {
      phase -= period;
      ++row;
    }
  }
}

template <bool kSigned, Kind kKind>
struct Lanes256 {
  Requant256 r1, r2, ro;
  __m256i off1, off2, out_off, lo, hi;
  __m128i shift;
};

template <bool kSigned, Kind kKind>
DLG_TARGET_AVX2 inline Lanes256<kSigned, kKind> MakeLanes256(const QuantBinary& k) {
  Lanes256<kSigned, kKind> q;
  if constexpr (kKind == Kind::kMul) {
    const reference::QuantizedMulDivParams& p = k.mul();
    q.ro = BroadcastRequant256(p.output_multiplier, p.output_shift);
    q.r1 = q.r2 = q.ro;
    q.off1 = _mm256_set1_epi32(p.input1_offset);
    q.off2 = _mm256_set1_epi32(p.input2_offset);
    q.out_off = _mm256_set1_epi32(p.output_offset);
    q.lo = _mm256_set1_epi32(p.act_min);
    q.hi = _mm256_set1_epi32(p.act_max);
    q.shift = _mm_setzero_si128();
  } else {
    const reference::QuantizedAddParams& p = k.add();
    q.r1 = BroadcastRequant256(p.input1_multiplier, p.input1_shift);
    q.r2 = BroadcastRequant256(p.input2_multiplier, p.input2_shift);
    q.ro = BroadcastRequant256(p.output_multiplier, p.output_shift);
    q.off1 = _mm256_set1_epi32(p.input1_offset);
    q.off2 = _mm256_set1_epi32(p.input2_offset);
    q.out_off = _mm256_set1_epi32(p.output_offset);
    q.lo = _mm256_set1_epi32(p.act_min);
    q.hi = _mm256_set1_epi32(p.act_max);
    q.shift = _mm_cvtsi32_si128(p.left_shift);
  }
  return q;
}

template <bool kSigned, Kind kKind>
DLG_TARGET_AVX2 inline __m256i Input256(const Lanes256<kSigned, kKind>& q, bool second,
                                        __m256i x) {
  const __m256i v = _mm256_add_epi32(x, second ? q.off2 : q.off1);
  if constexpr (kKind == Kind::kMul) return v;
  return MultiplyByQuantizedMultiplier256(_mm256_sll_epi32(v, q.shift), second ? q.r2 : q.r1);
}

template <bool kSigned, Kind kKind>
DLG_TARGET_AVX2 inline __m256i Output256(const Lanes256<kSigned, kKind>& q, __m256i va,
                                         __m256i vb) {
  __m256i raw;
  if constexpr (kKind == Kind::kMul)
    raw = _mm256_mullo_epi32(va, vb);
  else if constexpr (kKind == Kind::kSub)
    raw = _mm256_sub_epi32(va, vb);
  else
    raw = _mm256_add_epi32(va, vb);
  return OutputStage256(MultiplyByQuantizedMultiplier256(raw, q.ro), q.out_off, q.lo, q.hi);
}

// Up to 8 bytes from p (count of them readable), as 8 lanes.
template <bool kSigned>
DLG_TARGET_AVX2 inline __m256i LoadPartial8(const uint8_t* p, int64_t count) {
  if (count >= 8) return Load8Lanes<kSigned>(p);
  uint8_t bytes[8] = {};
  std::memcpy(bytes, p, static_cast<size_t>(count));
  return Load8Lanes<kSigned>(bytes);
}

template <bool kSigned, Kind kKind, Src kS>
DLG_TARGET_AVX2 inline __m256i Operand256(const Lanes256<kSigned, kKind>& q, bool second,
                                          const uint8_t* data, const int32_t* tile, int64_t o,
                                          int64_t count, int64_t phase, __m256i lane_rows,
                                          __m256i row_values) {
  if constexpr (kS == Src::kLinear) {
    return Input256(q, second, LoadPartial8<kSigned>(data + o, count));
  } else if constexpr (kS == Src::kTile) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + phase));
  } else {
    return _mm256_permutevar8x32_epi32(row_values, lane_rows);
  }
}

template <bool kSigned, Kind kKind, Src kA, Src kB>
DLG_TARGET_AVX2 void Avx2Block(const QuantBinary& k, const BlockInputs& in, uint8_t* out,
                               int64_t o, int64_t o_end) {
  const Lanes256<kSigned, kKind> q = MakeLanes256<kSigned, kKind>(k);
  const int64_t period = in.period;
  int64_t row = o / period, phase = o % period;
  const int64_t step_rows = 8 / period, step_phase = 8 % period;
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i magic = _mm256_set1_epi32(DivMagic(period));
  __m256i row_values = _mm256_setzero_si256();  // rows [row_base, row_base + 8) rescaled
  int64_t row_base = -8;
  for (; o < o_end; o += 8) {
    const int64_t count = o_end - o;
    __m256i lane_rows = iota;
    if constexpr (kA == Src::kPerRow || kB == Src::kPerRow) {
      const int64_t last_row = row + (phase + std::min<int64_t>(count, 8) - 1) / period;
      if (last_row >= row_base + 8) {
        row_base = row;
        row_values = Input256(q, kB == Src::kPerRow,
                              LoadPartial8<kSigned>((kA == Src::kPerRow ? in.a : in.b) + row, in.rows - row));
      }
      lane_rows = _mm256_add_epi32(
          _mm256_srli_epi32(
              _mm256_mullo_epi32(_mm256_add_epi32(iota, _mm256_set1_epi32(static_cast<int32_t>(phase))), magic),
              16),
          _mm256_set1_epi32(static_cast<int32_t>(row - row_base)));
    }
    const __m256i va = Operand256<kSigned, kKind, kA>(q, false, in.a, in.tile_a, o, count, phase,
                                                      lane_rows, row_values);
    const __m256i vb = Operand256<kSigned, kKind, kB>(q, true, in.b, in.tile_b, o, count, phase,
                                                      lane_rows, row_values);
    const __m256i v = Output256(q, va, vb);
    const __m128i bytes = NarrowToBytes256(v, v);
    if (count >= 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + o), bytes);
    } else {
      uint8_t tail[16];
      _mm_storeu_si128(reinterpret_cast<__m128i*>(tail), bytes);
      std::memcpy(out + o, tail, static_cast<size_t>(count));
    }
    phase += step_phase;
    row += step_rows;
    if (phase >= period) {
      phase -= period;
      ++row;
    }
  }
}

using BlockFn = void (*)(const QuantBinary&, const BlockInputs&, uint8_t*, int64_t, int64_t);

template <bool kSigned, Kind kKind, Src kA, Src kB>
BlockFn PickBlockIsa(Isa isa) {
  return isa == Isa::kAvx512Vnni ? &Avx512Block<kSigned, kKind, kA, kB>
                                 : &Avx2Block<kSigned, kKind, kA, kB>;
}

template <bool kSigned, Kind kKind>
BlockFn PickBlockForms(Isa isa, Src a, Src b) {
  if (a == Src::kLinear && b == Src::kTile) return PickBlockIsa<kSigned, kKind, Src::kLinear, Src::kTile>(isa);
  if (a == Src::kLinear && b == Src::kPerRow) return PickBlockIsa<kSigned, kKind, Src::kLinear, Src::kPerRow>(isa);
  if (a == Src::kTile && b == Src::kLinear) return PickBlockIsa<kSigned, kKind, Src::kTile, Src::kLinear>(isa);
  if (a == Src::kTile && b == Src::kPerRow) return PickBlockIsa<kSigned, kKind, Src::kTile, Src::kPerRow>(isa);
  if (a == Src::kPerRow && b == Src::kLinear) return PickBlockIsa<kSigned, kKind, Src::kPerRow, Src::kLinear>(isa);
  if (a == Src::kPerRow && b == Src::kTile) return PickBlockIsa<kSigned, kKind, Src::kPerRow, Src::kTile>(isa);
  return nullptr;
}

template <bool kSigned>
BlockFn PickBlockKind(Kind kind, Isa isa, Src a, Src b) {
  switch (kind) {
    case Kind::kAdd: return PickBlockForms<kSigned, Kind::kAdd>(isa, a, b);
    case Kind::kSub: return PickBlockForms<kSigned, Kind::kSub>(isa, a, b);
    case Kind::kMul: return PickBlockForms<kSigned, Kind::kMul>(isa, a, b);
  }
  return nullptr;
}

// One input contiguous, the other repeating with a short period P (P = 1: a
// broadcast value): each output is a function of the contiguous byte and the
// phase, so the outputs for all 256 bytes of each phase are computed once,
// by the vector kernel itself, and then looked up.
constexpr int64_t kMaxTablePeriod = 16;
constexpr int64_t kTableMinOutputsPerPhase = 2048;  // below this, tabulating costs more

// AVX2 gathers only 8 bytes at a time: faster than ADD/SUB's three
// rescales, slower than MUL's one. One phase is looked up with byte shuffles.
bool TableWins(const QuantBinary& k, int64_t period) {
  return k.isa() == Isa::kAvx512Vnni || period == 1 || k.kind() != Kind::kMul;
}

struct OutputTable {
  // [phase][byte], then padding for the 4-byte gathers of the last entry.
  alignas(64) uint8_t bytes[kMaxTablePeriod * 256 + 64];
  // (i % P) * 256 for i < P + kMaxLanes: a vector of phase offsets at any phase.
  alignas(64) int32_t phase_base[kMaxTablePeriod + kMaxLanes];
  const uint8_t* source = nullptr;
};

// (i % period) * 256 for i < period + kMaxLanes: a table's row offsets from any phase.
void FillPhaseBase(int64_t period, int32_t* phase_base) {
  for (int64_t i = 0; i < period + kMaxLanes; ++i) phase_base[i] = static_cast<int32_t>(i % period * 256);
}

// pattern[p * stride] is the repeating input at phase p; bytes gets
// [phase][byte], phase_base FillPhaseBase's offsets.
void FillTable(const QuantBinary& k, bool linear_is_a, const uint8_t* pattern, int64_t stride,
               int64_t period, uint8_t* bytes, int32_t* phase_base) {
  uint8_t values[256];
  for (int v = 0; v < 256; ++v) values[v] = static_cast<uint8_t>(v);
  for (int64_t p = 0; p < period; ++p) {
    const uint8_t* c = pattern + p * stride;
    if (linear_is_a)
      k.RunSpan(values, 1, c, 0, bytes + p * 256, 256);
    else
      k.RunSpan(c, 0, values, 1, bytes + p * 256, 256);
  }
  FillPhaseBase(period, phase_base);
}

void BuildTable(const QuantBinary& k, bool linear_is_a, const uint8_t* pattern, int64_t stride,
                int64_t period, OutputTable* t) {
  FillTable(k, linear_is_a, pattern, stride, period, t->bytes, t->phase_base);
  t->source = pattern;
}

DLG_TARGET_AVX512 void Avx512Lookup(const uint8_t* table, const int32_t* phase_base,
                                    int64_t period, int64_t phase, const uint8_t* x, uint8_t* out,
                                    int64_t n) {
  const int64_t step = 16 % period;
  const int* base = reinterpret_cast<const int*>(table);
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t count = n - i;
    const __mmask16 mask = static_cast<__mmask16>(count >= 16 ? 0xFFFF : (1u << count) - 1);
    const __m512i index = _mm512_add_epi32(Load16<false>(x + i, mask),
                                           _mm512_loadu_si512(phase_base + phase));
    const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask, index, base, 1);
    _mm_mask_storeu_epi8(out + i, mask, _mm512_cvtepi32_epi8(v));
    phase += step;
    if (phase >= period) phase -= period;
  }
}

DLG_TARGET_AVX2 void Avx2Lookup(const uint8_t* table, const int32_t* phase_base, int64_t period,
                                int64_t phase, const uint8_t* x, uint8_t* out, int64_t n) {
  const int64_t step = 8 % period;
  const int* base = reinterpret_cast<const int*>(table);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i index = _mm256_add_epi32(
        Load8Lanes<false>(x + i),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(phase_base + phase)));
    // Each gather reads 4 table bytes; keep the first.
    const __m256i v = _mm256_and_si256(_mm256_i32gather_epi32(base, index, 1), _mm256_set1_epi32(0xFF));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), NarrowToBytes256(v, v));
    phase += step;
    if (phase >= period) phase -= period;
  }
  for (; i < n; ++i) {
    out[i] = table[phase * 256 + x[i]];
    if (++phase == period) phase = 0;
  }
}

// table: [phase][byte]; phase_base: (i % period) * 256 for i < period + kMaxLanes.
void Lookup(Isa isa, const uint8_t* table, const int32_t* phase_base, int64_t period,
            int64_t phase, const uint8_t* x, uint8_t* out, int64_t n) {
  if (period == 1) {
    LookupBytes(ByteLookupFor(isa), table, x, out, 0, n);
    return;
  }
  if (isa == Isa::kAvx512Vnni)
    Avx512Lookup(table, phase_base, period, phase, x, out, n);
  else
    Avx2Lookup(table, phase_base, period, phase, x, out, n);
}

void Lookup(Isa isa, const OutputTable& t, int64_t period, int64_t phase, const uint8_t* x,
            uint8_t* out, int64_t n) {
  Lookup(isa, t.bytes, t.phase_base, period, phase, x, out, n);
}

// The rescaled repeating row, P + kMaxLanes long: tile[i] = x[i % P].
void FillTile(const QuantBinary& k, bool second, const uint8_t* x, int64_t period, int32_t* tile) {
  const bool u8 = k.is_uint8();
  for (int64_t i = 0; i < period + kMaxLanes; ++i) {
    const int32_t v = Load8(x + i % period, u8);
    if (k.kind() == Kind::kMul) {
      tile[i] = v + (second ? k.mul().input2_offset : k.mul().input1_offset);
    } else {
      const reference::QuantizedAddParams& p = k.add();
      tile[i] = second ? RescaleAddInput(v, p.input2_offset, p.left_shift, p.input2_multiplier, p.input2_shift)
                       : RescaleAddInput(v, p.input1_offset, p.left_shift, p.input1_multiplier, p.input1_shift);
    }
  }
}

// The form of an input over the last two dimensions [R, P], from its strides.
bool FormOf(int64_t outer_stride, int64_t inner_stride, int64_t period, Src* form) {
  if (inner_stride == 1 && outer_stride == period) *form = Src::kLinear;
  else if (inner_stride == 1 && outer_stride == 0) *form = Src::kTile;
  else if (inner_stride == 0 && outer_stride == 1) *form = Src::kPerRow;
  else return false;
  return true;
}

// Outputs [begin, end) block by block when the inner rows are short;
// false when the plan does not have that shape.
bool RunBlocks(const QuantBinary& k, const reference::BroadcastPlan& plan, const uint8_t* a,
               const uint8_t* b, uint8_t* out, int64_t begin, int64_t end) {
  if (plan.rank == 1 && (plan.a_strides[0] == 0) != (plan.b_strides[0] == 0) &&
      end - begin >= kTableMinOutputsPerPhase && TableWins(k, 1)) {
    const bool linear_is_a = plan.b_strides[0] == 0;
    OutputTable table;
    BuildTable(k, linear_is_a, linear_is_a ? b : a, 0, 1, &table);
    Lookup(k.isa(), table, 1, 0, (linear_is_a ? a : b) + begin, out + begin, end - begin);
    return true;
  }
  if (plan.rank < 2) return false;
  const int last = plan.rank - 1;
  const int64_t period = plan.dims[last], rows = plan.dims[last - 1];
  if (period > kMaxPeriod) return false;
  Src form_a, form_b;
  if (!FormOf(plan.a_strides[last - 1], plan.a_strides[last], period, &form_a) ||
      !FormOf(plan.b_strides[last - 1], plan.b_strides[last], period, &form_b))
    return false;
  const BlockFn fn = k.is_uint8() ? PickBlockKind<false>(k.kind(), k.isa(), form_a, form_b)
                                  : PickBlockKind<true>(k.kind(), k.isa(), form_a, form_b);
  if (fn == nullptr) return false;
  const int64_t block = rows * period;
  const bool tabulate = ((form_a == Src::kLinear && form_b == Src::kTile) ||
                         (form_a == Src::kTile && form_b == Src::kLinear)) &&
                        period <= kMaxTablePeriod && end - begin >= kTableMinOutputsPerPhase * period &&
                        TableWins(k, period);
  if (tabulate) {
    OutputTable table;
    const bool linear_is_a = form_a == Src::kLinear;
    for (int64_t position = begin; position < end;) {
      const int64_t index = position / block;
      int64_t rest = index, a_offset = 0, b_offset = 0;
      for (int d = last - 2; d >= 0; --d) {
        const int64_t i = rest % plan.dims[d];
        rest /= plan.dims[d];
        a_offset += i * plan.a_strides[d];
        b_offset += i * plan.b_strides[d];
      }
      const uint8_t* x = linear_is_a ? a + a_offset : b + b_offset;
      const uint8_t* pattern = linear_is_a ? b + b_offset : a + a_offset;
      if (pattern != table.source) BuildTable(k, linear_is_a, pattern, 1, period, &table);
      const int64_t start = index * block;
      const int64_t o = position - start, o_end = std::min(block, end - start);
      Lookup(k.isa(), table, period, o % period, x + o, out + position, o_end - o);
      position = start + o_end;
    }
    return true;
  }
  alignas(64) int32_t tile_a[kMaxPeriod + kMaxLanes];
  alignas(64) int32_t tile_b[kMaxPeriod + kMaxLanes];
  const uint8_t* tile_a_source = nullptr;
  const uint8_t* tile_b_source = nullptr;
  for (int64_t position = begin; position < end;) {
    const int64_t index = position / block;
    int64_t rest = index, a_offset = 0, b_offset = 0;
    for (int d = last - 2; d >= 0; --d) {
      const int64_t i = rest % plan.dims[d];
      rest /= plan.dims[d];
      a_offset += i * plan.a_strides[d];
      b_offset += i * plan.b_strides[d];
    }
    const BlockInputs in{period, rows, a + a_offset, b + b_offset, tile_a, tile_b};
    if (form_a == Src::kTile && in.a != tile_a_source) {
      FillTile(k, false, in.a, period, tile_a);
      tile_a_source = in.a;
    }
    if (form_b == Src::kTile && in.b != tile_b_source) {
      FillTile(k, true, in.b, period, tile_b);
      tile_b_source = in.b;
    }
    const int64_t start = index * block;
    const int64_t o_end = std::min(block, end - start);
    fn(k, in, out + start, position - start, o_end);
    position = start + o_end;
  }
  return true;
}

#endif  // DELEGATO_X86

bool ShiftInRange(int shift) { return shift <= 0 && shift >= -31; }

// One row on the ISAs RunRows leaves to a row at a time.
void RunOneSpan(const QuantBinary& k, const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb,
                uint8_t* out, int64_t n) {
  switch (k.isa()) {
#if DELEGATO_ARM
    case Isa::kNeon:
    case Isa::kDotprod:
    case Isa::kI8mm: {  // no dot products here: the neon loop
      const int64_t done = k.is_uint8() ? NeonDispatch<false>(k, a, sa, b, sb, out, n)
                                        : NeonDispatch<true>(k, a, sa, b, sb, out, n);
      ScalarSpan(k, a + done * sa, sa, b + done * sb, sb, out + done, n - done);
      return;
    }
#endif
    default:
      ScalarSpan(k, a, sa, b, sb, out, n);
      return;
  }
}

}  // namespace

bool QuantBinary::CoversAddSub(const reference::QuantizedAddParams& p) {
  // 8-bit inputs: (x + offset) << 20 stays within int32 and the rescaled
  // values sum without overflow; every shift is a right shift of 0..31.
  return p.left_shift >= 0 && p.left_shift <= 20 && ShiftInRange(p.input1_shift) &&
         ShiftInRange(p.input2_shift) && ShiftInRange(p.output_shift) &&
         p.input1_multiplier >= 0 && p.input2_multiplier >= 0 && p.output_multiplier >= 0;
}

bool QuantBinary::CoversMul(const reference::QuantizedMulDivParams& p) {
  return p.output_shift <= 31 && p.output_shift >= -31 && p.output_multiplier >= 0;
}

QuantBinary::QuantBinary(Kind kind, bool is_uint8, const reference::QuantizedAddParams& add,
                         const reference::QuantizedMulDivParams& mul, Isa isa)
    : kind_(kind), is_uint8_(is_uint8), add_(add), mul_(mul), isa_(isa) {
  if (kind_ != Kind::kMul)
    PrepareAddMagnitude();
  else
    PrepareMulMagnitude();
}

// MUL: MagnitudeExact over the largest |(x + offset1) (y + offset2)|.
void QuantBinary::PrepareMulMagnitude() {
  const reference::QuantizedMulDivParams& p = mul_;
  const int64_t lo = is_uint8_ ? 0 : -128, hi = is_uint8_ ? 255 : 127;
  const auto deviation = [&](int32_t offset) {
    return std::max(std::abs(lo + offset), std::abs(hi + offset));
  };
  const Form output = OutputForm(p.output_multiplier, p.output_shift,
                                 deviation(p.input1_offset) * deviation(p.input2_offset));
  if (output == kGeneralForm) return;
  magnitude_.Init(16);
  for (int c = 0; c < 16; ++c) magnitude_.Set(c, p.output_multiplier, p.output_shift);
  form_ = output;
}

// The output's rescale of values up to `bound`: the magnitude form where
// MagnitudeExact holds, else with its tie term where the form applies at all
// (no left shift, a bound below 2^31), else the general form.
QuantBinary::Form QuantBinary::OutputForm(int32_t multiplier, int32_t shift, int64_t bound) {
  if (MagnitudeExact(multiplier, shift, bound)) return kMagnitudeForm;
  if (multiplier >= 0 && shift <= 0 && shift >= -31 && bound < (int64_t{1} << 31))
    return kMagnitudeTieForm;
  return kGeneralForm;
}

// The magnitude form for ADD / SUB's three rescales when it equals the
// reference: for each input, checked on all 256 bytes (a bound argument
// would refuse the usual multiplier of 1/2, whose ties a multiple of
// 2^left_shift never meets); for the output, MagnitudeExact over the largest
// sum of two rescaled inputs.
void QuantBinary::PrepareAddMagnitude() {
  const reference::QuantizedAddParams& p = add_;
  const int32_t lo = is_uint8_ ? 0 : -128, hi = is_uint8_ ? 255 : 127;
  if (p.left_shift < 0 || p.left_shift > 22) return;  // |(x + offset) << left_shift| < 2^31
  int64_t sum_bound = 0;
  for (const auto [offset, multiplier, shift] :
       {std::array<int32_t, 3>{p.input1_offset, p.input1_multiplier, p.input1_shift},
        std::array<int32_t, 3>{p.input2_offset, p.input2_multiplier, p.input2_shift}}) {
    if (multiplier < 0 || shift > 0 || shift < -31) return;
    int64_t largest = 0;
    for (int32_t x = lo; x <= hi; ++x) {
      const int32_t scaled = RescaleAddInput(x, offset, p.left_shift, multiplier, shift);
      if (MagnitudeValue((x + offset) * (1 << p.left_shift), multiplier, shift) != scaled) return;
      largest = std::max<int64_t>(largest, std::abs(int64_t{scaled}));
    }
    sum_bound += largest;
  }
  const Form output = OutputForm(p.output_multiplier, p.output_shift, sum_bound);
  if (output == kGeneralForm) return;
  magnitude_.Init(48);
  for (int c = 0; c < 16; ++c) {
    magnitude_.Set(c, p.input1_multiplier, p.input1_shift);
    magnitude_.Set(16 + c, p.input2_multiplier, p.input2_shift);
    magnitude_.Set(32 + c, p.output_multiplier, p.output_shift);
  }
  form_ = output;
}

void QuantBinary::RunSpan(const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb,
                          uint8_t* out, int64_t n) const {
  RunRows(a, sa, 0, b, sb, 0, out, n, 1);
}

void QuantBinary::RunRows(const uint8_t* a, int64_t sa, int64_t a_row, const uint8_t* b,
                          int64_t sb, int64_t b_row, uint8_t* out, int64_t n,
                          int64_t count) const {
#if DELEGATO_X86
  const Rows rows{count, a_row, b_row, n};
  if (isa_ == Isa::kAvx512Vnni) {
    if (is_uint8_)
      Avx512Dispatch<false>(*this, a, sa, b, sb, out, n, rows);
    else
      Avx512Dispatch<true>(*this, a, sa, b, sb, out, n, rows);
    return;
  }
  if (isa_ == Isa::kAvx2) {
    const int64_t done = is_uint8_ ? Avx2Dispatch<false>(*this, a, sa, b, sb, out, n, rows)
                                   : Avx2Dispatch<true>(*this, a, sa, b, sb, out, n, rows);
    if (done < n)
      for (int64_t r = 0; r < count; ++r)
        ScalarSpan(*this, a + r * a_row + done * sa, sa, b + r * b_row + done * sb, sb,
                   out + r * n + done, n - done);
    return;
  }
#endif
  for (int64_t r = 0; r < count; ++r)
    RunOneSpan(*this, a + r * a_row, sa, b + r * b_row, sb, out + r * n, n);
}


bool QuantBinary::TabulateConstant(const reference::BroadcastPlan& plan, const uint8_t* constant,
                                   bool constant_is_a) {
#if DELEGATO_X86
  if (isa_ != Isa::kAvx512Vnni && isa_ != Isa::kAvx2) return false;
  const int last = plan.rank - 1;
  const int64_t* c_strides = constant_is_a ? plan.a_strides : plan.b_strides;
  const int64_t* x_strides = constant_is_a ? plan.b_strides : plan.a_strides;
  // The constant: one row along the last dimension (or one value), the same
  // for every outer index. The other input: dense in output order.
  const int64_t period = c_strides[last] == 0 ? 1 : plan.dims[last];
  if (period > kMaxConstantPeriod || (c_strides[last] != 0 && c_strides[last] != 1)) return false;
  int64_t dense = 1;
  for (int d = last; d >= 0; --d) {
    if (d < last && c_strides[d] != 0) return false;
    if (x_strides[d] != dense) return false;
    dense *= plan.dims[d];
  }
  // (AVX2 MUL gathers measured as fast as its rescale on their own, and a
  // table can be composed with its neighbour's: ComposeAfter.)
  table_period_ = period;
  table_linear_is_a_ = !constant_is_a;
  table_bytes_.Resize(static_cast<size_t>(period) * 256 + 64);
  table_phase_base_.assign(static_cast<size_t>(period + kMaxLanes), 0);
  FillTable(*this, table_linear_is_a_, constant, 1, period, table_bytes_.data(),
            table_phase_base_.data());
  return true;
#else
  (void)plan;
  (void)constant;
  (void)constant_is_a;
  return false;
#endif
}

bool QuantBinary::ComposeAfter(const QuantBinary& first) {
#if DELEGATO_X86
  if (!tabulated() || !first.tabulated()) return false;
  const int64_t p1 = first.table_period_, p2 = table_period_;
  const int64_t period = std::lcm(p1, p2);
  if (period > kMaxConstantPeriod) return false;
  AlignedBuffer<uint8_t> bytes;
  bytes.Resize(static_cast<size_t>(period) * 256 + 64);
  for (int64_t p = 0; p < period; ++p) {
    const uint8_t* t1 = first.table_bytes_.data() + (p % p1) * 256;
    const uint8_t* t2 = table_bytes_.data() + (p % p2) * 256;
    for (int x = 0; x < 256; ++x) bytes[static_cast<size_t>(p * 256 + x)] = t2[t1[x]];
  }
  table_bytes_ = std::move(bytes);
  table_period_ = period;
  table_phase_base_.assign(static_cast<size_t>(period + kMaxLanes), 0);
  FillPhaseBase(period, table_phase_base_.data());
  return true;
#else
  (void)first;
  return false;
#endif
}

void QuantBinary::Run(const reference::BroadcastPlan& plan, const void* a_data,
                      const void* b_data, void* out_data, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  const uint8_t* a = static_cast<const uint8_t*>(a_data);
  const uint8_t* b = static_cast<const uint8_t*>(b_data);
  uint8_t* out = static_cast<uint8_t*>(out_data);
#if DELEGATO_X86
  if (table_period_ > 0) {  // TabulateConstant
    const uint8_t* x = (table_linear_is_a_ ? a : b) + begin;
    Lookup(isa_, table_bytes_.data(), table_phase_base_.data(), table_period_,
           begin % table_period_, x, out + begin, end - begin);
    return;
  }
  if ((isa_ == Isa::kAvx512Vnni || isa_ == Isa::kAvx2) && RunBlocks(*this, plan, a, b, out, begin, end))
    return;
#endif
  // The reference's walk (BroadcastBinary), one vector call per run or per
  // stretch of whole rows.
  reference::BroadcastCursor at(plan, begin);
  const int last = at.last();
  const int64_t sa = plan.a_strides[last], sb = plan.b_strides[last];
  // (Scalar and Arm ISAs; the x86 vector ISAs took RunBlocks above.) Short rows where one
  // input is contiguous over the last two dimensions
  // and the other repeats one row: several rows per vector call, the
  // repeating row copied side by side (x[i % n] for i < kGroup * n).
  constexpr int64_t kGroup = 64;
  const int64_t n = plan.dims[last];
  bool a_repeats = false, b_repeats = false;
  if (last >= 1 && n < kGroup && sa == 1 && sb == 1) {
    a_repeats = plan.a_strides[last - 1] == 0 && plan.b_strides[last - 1] == n;
    b_repeats = plan.b_strides[last - 1] == 0 && plan.a_strides[last - 1] == n;
  }
  const int64_t rows_per_group = kGroup / n;
  uint8_t pattern[kGroup];
  const uint8_t* pattern_source = nullptr;
  int64_t position = begin;
  while (position < end) {
    if ((a_repeats || b_repeats) && at.index[last] == 0 && rows_per_group > 1 &&
        plan.dims[last - 1] - at.index[last - 1] >= rows_per_group &&
        end - position >= rows_per_group * n) {
      const uint8_t* row = a_repeats ? a + at.a_offset : b + at.b_offset;
      if (row != pattern_source) {
        for (int64_t i = 0; i < rows_per_group * n; ++i) pattern[i] = row[i % n];
        pattern_source = row;
      }
      const int64_t count = rows_per_group * n;
      if (a_repeats)
        RunSpan(pattern, 1, b + at.b_offset, 1, out + position, count);
      else
        RunSpan(a + at.a_offset, 1, pattern, 1, out + position, count);
      position += count;
      at.AdvanceRows(rows_per_group);
      continue;
    }
    if (last >= 1 && at.index[last] == 0) {  // whole rows, one call
      const int64_t rows = std::min(plan.dims[last - 1] - at.index[last - 1], (end - position) / n);
      if (rows > 1) {
        RunRows(a + at.a_offset, sa, plan.a_strides[last - 1], b + at.b_offset, sb,
                plan.b_strides[last - 1], out + position, n, rows);
        position += rows * n;
        at.AdvanceRows(rows);
        continue;
      }
    }
    const int64_t run = std::min(at.RowLeft(), end - position);
    RunSpan(a + at.a_offset, sa, b + at.b_offset, sb, out + position, run);
    position += run;
    at.Advance(run);
  }
}

}  // namespace delegato::optimized
