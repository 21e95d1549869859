#include "kernels/optimized/resize_bilinear.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

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

using Type = ResizeBilinear::Type;

// The reference's per-element arithmetic, for the scalar ISA and tails.
template <class T>
inline T FloatElement(T p00, T p10, T p01, T p11, const ResizeBilinear::Taps& tx,
                      const ResizeBilinear::Taps& ty) {
  // One operation per statement, in the reference's order (and this file is
  // compiled without floating-point contraction).
  const float dy = ty.weight, dx = tx.weight;
  const float rounding = std::is_integral_v<T> ? 0.5f : 0.0f;
  const float t00 = static_cast<float>(p00) * (1 - dy) * (1 - dx);
  const float t10 = static_cast<float>(p10) * dy * (1 - dx);
  const float t01 = static_cast<float>(p01) * (1 - dy) * dx;
  const float t11 = static_cast<float>(p11) * dy * dx;
  float v = t00 + t10;
  v = v + t01;
  v = v + t11;
  v = v + rounding;
  return static_cast<T>(v);
}

inline int8_t FixedElement(int8_t p00, int8_t p10, int8_t p01, int8_t p11, int32_t wx,
                           int32_t wy) {
  const int64_t v20 = int64_t{p00} * ((1 << 10) - wy) * ((1 << 10) - wx) +
                      int64_t{p10} * wy * ((1 << 10) - wx) + int64_t{p01} * ((1 << 10) - wy) * wx +
                      int64_t{p11} * wy * wx;
  const int64_t round = v20 > 0 ? (1 << 19) : -(1 << 19);
  return static_cast<int8_t>((v20 + round) / (1 << 20));
}

template <class T>
void ScalarPixel(const ResizeBilinear& r, const T* p00, const T* p10, const T* p01,
                 const T* p11, const ResizeBilinear::Taps& tx, const ResizeBilinear::Taps& ty,
                 T* out, int32_t c_begin, int32_t c_end) {
  for (int32_t c = c_begin; c < c_end; ++c) {
    if constexpr (std::is_same_v<T, int8_t>)
      out[c] = FixedElement(p00[c], p10[c], p01[c], p11[c], tx.weight10, ty.weight10);
    else
      out[c] = FloatElement<T>(p00[c], p10[c], p01[c], p11[c], tx, ty);
  }
}

#if DELEGATO_X86

DLG_TARGET_AVX512 inline __m512 LoadFloat16(const uint8_t* p, __mmask16 mask) {
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mask, p)));
}

// Channels [0, depth) of one uint8 output pixel.
DLG_TARGET_AVX512 void Avx512Uint8Pixel(const uint8_t* p00, const uint8_t* p10, const uint8_t* p01,
                                        const uint8_t* p11,
                                        const ResizeBilinear::Taps& tx,
                                        const ResizeBilinear::Taps& ty, uint8_t* out, int32_t depth) {
  const __m512 dy = _mm512_set1_ps(ty.weight), one_minus_dy = _mm512_set1_ps(ty.one_minus);
  const __m512 dx = _mm512_set1_ps(tx.weight), one_minus_dx = _mm512_set1_ps(tx.one_minus);
  for (int32_t c = 0; c < depth; c += 16) {
    const __mmask16 mask = static_cast<__mmask16>(_bzhi_u32(0xFFFF, std::min(16, depth - c)));
    const __m512 t00 = _mm512_mul_ps(_mm512_mul_ps(LoadFloat16(p00 + c, mask), one_minus_dy), one_minus_dx);
    const __m512 t10 = _mm512_mul_ps(_mm512_mul_ps(LoadFloat16(p10 + c, mask), dy), one_minus_dx);
    const __m512 t01 = _mm512_mul_ps(_mm512_mul_ps(LoadFloat16(p01 + c, mask), one_minus_dy), dx);
    const __m512 t11 = _mm512_mul_ps(_mm512_mul_ps(LoadFloat16(p11 + c, mask), dy), dx);
    const __m512 v = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(t00, t10), t01), t11);
    _mm_mask_storeu_epi8(out + c, mask,
                         _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(
                             _mm512_add_ps(v, _mm512_set1_ps(0.5f)))));
  }
}

DLG_TARGET_AVX512 void Avx512FixedPixel(const int8_t* p00, const int8_t* p10, const int8_t* p01,
                                        const int8_t* p11, int32_t wx, int32_t wy, int8_t* out,
                                        int32_t depth) {
  const __m512i w00 = _mm512_set1_epi32(((1 << 10) - wy) * ((1 << 10) - wx));
  const __m512i w10 = _mm512_set1_epi32(wy * ((1 << 10) - wx));
  const __m512i w01 = _mm512_set1_epi32(((1 << 10) - wy) * wx);
  const __m512i w11 = _mm512_set1_epi32(wy * wx);
  const __m512i half = _mm512_set1_epi32(1 << 19);
  const __m512i bias_negative = _mm512_set1_epi32((1 << 20) - 1);
  for (int32_t c = 0; c < depth; c += 16) {
    const __mmask16 mask = static_cast<__mmask16>(_bzhi_u32(0xFFFF, std::min(16, depth - c)));
    const __m512i v00 = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, p00 + c));
    const __m512i v10 = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, p10 + c));
    const __m512i v01 = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, p01 + c));
    const __m512i v11 = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, p11 + c));
    __m512i v = _mm512_add_epi32(
        _mm512_add_epi32(_mm512_mullo_epi32(v00, w00), _mm512_mullo_epi32(v10, w10)),
        _mm512_add_epi32(_mm512_mullo_epi32(v01, w01), _mm512_mullo_epi32(v11, w11)));
    // + 2^19 when positive, - 2^19 otherwise; then divide by 2^20 toward zero.
    const __mmask16 positive = _mm512_cmpgt_epi32_mask(v, _mm512_setzero_si512());
    v = _mm512_mask_add_epi32(_mm512_sub_epi32(v, half), positive, v, half);
    const __mmask16 negative = _mm512_cmplt_epi32_mask(v, _mm512_setzero_si512());
    v = _mm512_mask_add_epi32(v, negative, v, bias_negative);
    v = _mm512_srai_epi32(v, 20);
    _mm_mask_storeu_epi8(out + c, mask, _mm512_cvtepi32_epi8(v));
  }
}

DLG_TARGET_AVX2 inline __m256i LoadInt8x8(const int8_t* p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// Avx512FixedPixel on 8 lanes (FixedElement's arithmetic; the weighted sum
// is at most 128 * 2^20 in magnitude, so int32 holds it), the last depth % 8
// channels scalar.
DLG_TARGET_AVX2 void Avx2FixedPixel(const int8_t* p00, const int8_t* p10, const int8_t* p01,
                                    const int8_t* p11, int32_t wx, int32_t wy, int8_t* out,
                                    int32_t depth) {
  const __m256i w00 = _mm256_set1_epi32(((1 << 10) - wy) * ((1 << 10) - wx));
  const __m256i w10 = _mm256_set1_epi32(wy * ((1 << 10) - wx));
  const __m256i w01 = _mm256_set1_epi32(((1 << 10) - wy) * wx);
  const __m256i w11 = _mm256_set1_epi32(wy * wx);
  const __m256i half = _mm256_set1_epi32(1 << 19);
  const __m256i bias_negative = _mm256_set1_epi32((1 << 20) - 1);
  int32_t c = 0;
  for (; c + 8 <= depth; c += 8) {
    __m256i v = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_mullo_epi32(LoadInt8x8(p00 + c), w00),
                         _mm256_mullo_epi32(LoadInt8x8(p10 + c), w10)),
        _mm256_add_epi32(_mm256_mullo_epi32(LoadInt8x8(p01 + c), w01),
                         _mm256_mullo_epi32(LoadInt8x8(p11 + c), w11)));
    // + 2^19 when positive, - 2^19 otherwise; then divide by 2^20 toward zero.
    const __m256i positive = _mm256_cmpgt_epi32(v, _mm256_setzero_si256());
    v = _mm256_add_epi32(_mm256_sub_epi32(v, half),
                         _mm256_and_si256(positive, _mm256_add_epi32(half, half)));
    v = _mm256_add_epi32(v, _mm256_and_si256(_mm256_srai_epi32(v, 31), bias_negative));
    v = _mm256_srai_epi32(v, 20);
    // Lanes are in [-128, 127]: the saturating packs are exact.
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(v, v), _mm256_setzero_si256());
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + c),
                     _mm_unpacklo_epi32(_mm256_castsi256_si128(bytes),
                                        _mm256_extracti128_si256(bytes, 1)));
  }
  for (; c < depth; ++c) out[c] = FixedElement(p00[c], p10[c], p01[c], p11[c], wx, wy);
}

// One output row of uint8 with the row terms precomputed:
// top[j] = p(y0, j) * (1 - dy) and bottom[j] = p(y1, j) * dy are the
// reference's first products, the same for every output x.
DLG_TARGET_AVX512 void Avx512Uint8Row(const ResizeBilinear& r, const uint8_t* row0,
                                      const uint8_t* row1, const ResizeBilinear::Taps& ty,
                                      float* top, float* bottom, uint8_t* out) {
  const reference::ResizeGeometry& g = r.geometry();
  const int32_t depth = g.depth;
  const int64_t n = int64_t{g.input_width} * depth;
  const __m512 dy = _mm512_set1_ps(ty.weight), one_minus_dy = _mm512_set1_ps(ty.one_minus);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(top + i, mask, _mm512_mul_ps(LoadFloat16(row0 + i, mask), one_minus_dy));
    _mm512_mask_storeu_ps(bottom + i, mask, _mm512_mul_ps(LoadFloat16(row1 + i, mask), dy));
  }
  for (int32_t x = 0; x < g.output_width; ++x, out += depth) {
    const ResizeBilinear::Taps& tx = r.x_taps()[x];
    const __m512 dx = _mm512_set1_ps(tx.weight), one_minus_dx = _mm512_set1_ps(tx.one_minus);
    const float* t0 = top + int64_t{tx.lower} * depth;
    const float* b0 = bottom + int64_t{tx.lower} * depth;
    const float* t1 = top + int64_t{tx.upper} * depth;
    const float* b1 = bottom + int64_t{tx.upper} * depth;
    for (int32_t c = 0; c < depth; c += 16) {
      const __mmask16 mask = static_cast<__mmask16>(_bzhi_u32(0xFFFF, std::min(16, depth - c)));
      const __m512 t00 = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, t0 + c), one_minus_dx);
      const __m512 t10 = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, b0 + c), one_minus_dx);
      const __m512 t01 = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, t1 + c), dx);
      const __m512 t11 = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, b1 + c), dx);
      const __m512 v = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(t00, t10), t01), t11);
      _mm_mask_storeu_epi8(out + c, mask,
                           _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(
                               _mm512_add_ps(v, _mm512_set1_ps(0.5f)))));
    }
  }
}

// uint8 results: the reference's trunc(v + 0.5), as int32 lanes.
DLG_TARGET_AVX2 inline __m256i Avx2Round(__m256 v) {
  return _mm256_cvttps_epi32(_mm256_add_ps(v, _mm256_set1_ps(0.5f)));
}

// The reference's x blend of 8 channels: ((t0 (1-dx) + b0 (1-dx)) + t1 dx) + b1 dx.
DLG_TARGET_AVX2 inline __m256 Avx2Blend(const float* t0, const float* b0, const float* t1,
                                        const float* b1, __m256 dx, __m256 one_minus_dx) {
  const __m256 t00 = _mm256_mul_ps(_mm256_load_ps(t0), one_minus_dx);
  const __m256 t10 = _mm256_mul_ps(_mm256_load_ps(b0), one_minus_dx);
  const __m256 t01 = _mm256_mul_ps(_mm256_load_ps(t1), dx);
  const __m256 t11 = _mm256_mul_ps(_mm256_load_ps(b1), dx);
  return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(t00, t10), t01), t11);
}

// Avx512Uint8Row with 8 channels per vector. The row terms are kept with
// input columns `stride` (depth rounded up to 8) floats apart, so loads are
// aligned and a column's last chunk reads its own padding. Stores past a
// pixel's last channel are allowed while the output row has room: the
// following pixel, written next, overwrites them.
DLG_TARGET_AVX2 void Avx2Uint8Row(const ResizeBilinear& r, const uint8_t* row0,
                                  const uint8_t* row1, const ResizeBilinear::Taps& ty,
                                  int32_t stride, float* top, float* bottom, uint8_t* out) {
  const reference::ResizeGeometry& g = r.geometry();
  const int32_t depth = g.depth;
  const __m256 dy = _mm256_set1_ps(ty.weight), one_minus_dy = _mm256_set1_ps(ty.one_minus);
  for (int32_t j = 0; j < g.input_width; ++j) {
    const uint8_t* s0 = row0 + int64_t{j} * depth;
    const uint8_t* s1 = row1 + int64_t{j} * depth;
    float* t = top + int64_t{j} * stride;
    float* b = bottom + int64_t{j} * stride;
    int32_t c = 0;
    for (; c + 8 <= depth; c += 8) {
      const __m256 v0 = _mm256_cvtepi32_ps(
          _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s0 + c))));
      const __m256 v1 = _mm256_cvtepi32_ps(
          _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s1 + c))));
      _mm256_store_ps(t + c, _mm256_mul_ps(v0, one_minus_dy));
      _mm256_store_ps(b + c, _mm256_mul_ps(v1, dy));
    }
    for (; c < depth; ++c) {
      t[c] = static_cast<float>(s0[c]) * ty.one_minus;
      b[c] = static_cast<float>(s1[c]) * ty.weight;
    }
    for (; c < stride; ++c) t[c] = b[c] = 0.0f;
  }
  uint8_t* const row_end = out + int64_t{g.output_width} * depth;
  for (int32_t x = 0; x < g.output_width; ++x, out += depth) {
    const ResizeBilinear::Taps& tx = r.x_taps()[x];
    const __m256 dx = _mm256_set1_ps(tx.weight), one_minus_dx = _mm256_set1_ps(tx.one_minus);
    const float* t0 = top + int64_t{tx.lower} * stride;
    const float* b0 = bottom + int64_t{tx.lower} * stride;
    const float* t1 = top + int64_t{tx.upper} * stride;
    const float* b1 = bottom + int64_t{tx.upper} * stride;
    int32_t c = 0;
    for (; c + 8 < depth; c += 16) {  // two chunks, the second one not empty
      const __m256i v0 = Avx2Round(Avx2Blend(t0 + c, b0 + c, t1 + c, b1 + c, dx, one_minus_dx));
      const __m256i v1 = Avx2Round(
          Avx2Blend(t0 + c + 8, b0 + c + 8, t1 + c + 8, b1 + c + 8, dx, one_minus_dx));
      // Per 128-bit lane: v0 low half, v1 low half | v0 high half, v1 high half.
      const __m256i w = _mm256_packs_epi32(v0, v1);
      const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(w, w),
                                                        _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0));
      const __m128i v = _mm256_castsi256_si128(bytes);
      if (out + c + 16 <= row_end) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), v);
      } else {
        alignas(16) uint8_t last[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(last), v);
        std::memcpy(out + c, last, static_cast<size_t>(std::min(16, depth - c)));
      }
    }
    if (c < depth) {
      const __m256i i = Avx2Round(Avx2Blend(t0 + c, b0 + c, t1 + c, b1 + c, dx, one_minus_dx));
      const __m128i w =
          _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
      const __m128i v = _mm_packus_epi16(w, w);
      if (out + c + 8 <= row_end) {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + c), v);
      } else {
        alignas(16) uint8_t last[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(last), v);
        std::memcpy(out + c, last, static_cast<size_t>(depth - c));
      }
    }
  }
}

// float32 rows: each output from its four input pixels directly, in the
// reference's order ((p00 (1-dy)) (1-dx) + (p10 dy) (1-dx)) + (p01 (1-dy)) dx)
// + (p11 dy) dx. Twice the multiplies of Avx2Uint8Row's shared row terms,
// yet faster (float32 16x16x8 -> 32x32: 2.6 against 4.8 us with the row
// terms; loads of terms stored a moment before stall). A channel tail is loaded under a mask (no read past
// the input) and stored whole while the output row has room (the next
// pixel overwrites the excess).
DLG_TARGET_AVX2 inline __m256 Avx2DirectBlend(__m256 p00, __m256 p10, __m256 p01, __m256 p11,
                                              __m256 dy, __m256 one_minus_dy, __m256 dx,
                                              __m256 one_minus_dx) {
  const __m256 t00 = _mm256_mul_ps(_mm256_mul_ps(p00, one_minus_dy), one_minus_dx);
  const __m256 t10 = _mm256_mul_ps(_mm256_mul_ps(p10, dy), one_minus_dx);
  const __m256 t01 = _mm256_mul_ps(_mm256_mul_ps(p01, one_minus_dy), dx);
  const __m256 t11 = _mm256_mul_ps(_mm256_mul_ps(p11, dy), dx);
  return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(t00, t10), t01), t11);
}

template <bool kWholeVectors>
DLG_TARGET_AVX2 void Avx2FloatDirectRow(const ResizeBilinear& r, const float* row0,
                                        const float* row1, const ResizeBilinear::Taps& ty,
                                        float* out) {
  const int32_t depth = r.geometry().depth;
  const int32_t full = kWholeVectors ? depth : depth / 8 * 8;
  const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(depth - full),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256 dy = _mm256_set1_ps(ty.weight), one_minus_dy = _mm256_set1_ps(ty.one_minus);
  const ResizeBilinear::Taps* taps = r.x_taps();
  const float* const row_end = out + int64_t{r.geometry().output_width} * depth;
  for (int32_t x = 0; x < r.geometry().output_width; ++x, out += depth) {
    const __m256 dx = _mm256_set1_ps(taps[x].weight);
    const __m256 one_minus_dx = _mm256_set1_ps(taps[x].one_minus);
    const int64_t lower = int64_t{taps[x].lower} * depth;
    const int64_t upper = int64_t{taps[x].upper} * depth;
    for (int32_t c = 0; c < full; c += 8)
      _mm256_storeu_ps(out + c, Avx2DirectBlend(_mm256_loadu_ps(row0 + lower + c),
                                                _mm256_loadu_ps(row1 + lower + c),
                                                _mm256_loadu_ps(row0 + upper + c),
                                                _mm256_loadu_ps(row1 + upper + c), dy,
                                                one_minus_dy, dx, one_minus_dx));
    if (!kWholeVectors && full < depth) {
      const int64_t c = full;
      const __m256 v = Avx2DirectBlend(_mm256_maskload_ps(row0 + lower + c, tail),
                                       _mm256_maskload_ps(row1 + lower + c, tail),
                                       _mm256_maskload_ps(row0 + upper + c, tail),
                                       _mm256_maskload_ps(row1 + upper + c, tail), dy,
                                       one_minus_dy, dx, one_minus_dx);
      if (out + c + 8 <= row_end)
        _mm256_storeu_ps(out + c, v);
      else
        _mm256_maskstore_ps(out + c, tail, v);
    }
  }
}

// 8-bit rows when ResizeBilinear::sixteenths(). The column terms
// v[j] = p(y0, j) (16 - wy) + p(y1, j) wy are kept with columns `stride`
// (depth rounded up to 16) int16 apart; each output combines
// s = v[lower] (16 - wx) + v[upper] wx, 16 channels per vector (a depth of
// 8 or less: `stride` 8, one 8-lane vector per pixel).
//  - uint8: the terms carry +8 (at most 4088), so s holds the reference's
//    +128 rounding (the weights sum to 16) and stays below 2^16; the
//    output is s >> 8.
//  - int8: terms in [-2048, 2032], s in [-32768, 32512]; the reference
//    rounds half away from zero, so the output is sign(s) ((|s| + 128) >> 8),
//    with |s| + 128 read as unsigned (at most 32896).
// Stores past a pixel's last channel follow the rule of Avx2Uint8Row.
template <class T>
DLG_TARGET_AVX2 inline __m256i Avx2Sixteenths(const int16_t* v0, const int16_t* v1, __m256i a,
                                              __m256i b) {
  const __m256i s = _mm256_add_epi16(
      _mm256_mullo_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(v0)), a),
      _mm256_mullo_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(v1)), b));
  if constexpr (std::is_same_v<T, uint8_t>) return _mm256_srli_epi16(s, 8);
  const __m256i magnitude =
      _mm256_srli_epi16(_mm256_add_epi16(_mm256_abs_epi16(s), _mm256_set1_epi16(128)), 8);
  return _mm256_sign_epi16(magnitude, s);
}

// Packs 16-bit lanes (in T's range) to T bytes.
template <class T>
DLG_TARGET_AVX2 inline __m256i Avx2Pack16(__m256i a, __m256i b) {
  if constexpr (std::is_same_v<T, uint8_t>) return _mm256_packus_epi16(a, b);
  return _mm256_packs_epi16(a, b);
}
template <class T>
DLG_TARGET_AVX2 inline __m128i Pack16(__m128i a, __m128i b) {
  if constexpr (std::is_same_v<T, uint8_t>) return _mm_packus_epi16(a, b);
  return _mm_packs_epi16(a, b);
}

template <class T>
DLG_TARGET_AVX2 void Avx2SixteenthsRow(const ResizeBilinear& r, const T* row0, const T* row1,
                                       const ResizeBilinear::Taps& ty, int32_t stride,
                                       int16_t* terms, T* out) {
  const reference::ResizeGeometry& g = r.geometry();
  const int32_t depth = g.depth;
  const __m256i wy = _mm256_set1_epi16(ty.weight16);
  const __m256i one_minus_wy = _mm256_set1_epi16(static_cast<int16_t>(16 - ty.weight16));
  const int16_t rounding = std::is_same_v<T, uint8_t> ? 8 : 0;
  const __m256i rounding16 = _mm256_set1_epi16(rounding);
  for (int32_t j = 0; j < g.input_width; ++j) {
    const T* s0 = row0 + int64_t{j} * depth;
    const T* s1 = row1 + int64_t{j} * depth;
    int16_t* t = terms + int64_t{j} * stride;
    int32_t c = 0;
    for (; c + 16 <= depth; c += 16) {
      const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s0 + c));
      const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s1 + c));
      __m256i p0, p1;
      if constexpr (std::is_same_v<T, uint8_t>) {
        p0 = _mm256_cvtepu8_epi16(b0);
        p1 = _mm256_cvtepu8_epi16(b1);
      } else {
        p0 = _mm256_cvtepi8_epi16(b0);
        p1 = _mm256_cvtepi8_epi16(b1);
      }
      _mm256_store_si256(reinterpret_cast<__m256i*>(t + c),
                         _mm256_add_epi16(_mm256_add_epi16(_mm256_mullo_epi16(p0, one_minus_wy),
                                                           _mm256_mullo_epi16(p1, wy)),
                                          rounding16));
    }
    if (c + 8 <= depth) {
      const __m128i b0 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s0 + c));
      const __m128i b1 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s1 + c));
      const __m128i p0 = std::is_same_v<T, uint8_t> ? _mm_cvtepu8_epi16(b0) : _mm_cvtepi8_epi16(b0);
      const __m128i p1 = std::is_same_v<T, uint8_t> ? _mm_cvtepu8_epi16(b1) : _mm_cvtepi8_epi16(b1);
      _mm_store_si128(reinterpret_cast<__m128i*>(t + c),
                      _mm_add_epi16(_mm_add_epi16(_mm_mullo_epi16(p0, _mm256_castsi256_si128(one_minus_wy)),
                                                  _mm_mullo_epi16(p1, _mm256_castsi256_si128(wy))),
                                    _mm256_castsi256_si128(rounding16)));
      c += 8;
    }
    for (; c < depth; ++c)
      t[c] = static_cast<int16_t>(s0[c] * (16 - ty.weight16) + s1[c] * ty.weight16 + rounding);
    for (; c < stride; ++c) t[c] = 0;
  }
  T* const row_end = out + int64_t{g.output_width} * depth;
  if (stride == 8) {  // depth <= 8: one 128-bit vector per pixel
    for (int32_t x = 0; x < g.output_width; ++x, out += depth) {
      const ResizeBilinear::Taps& tx = r.x_taps()[x];
      const __m128i v0 = _mm_load_si128(reinterpret_cast<const __m128i*>(terms + 8 * tx.lower));
      const __m128i v1 = _mm_load_si128(reinterpret_cast<const __m128i*>(terms + 8 * tx.upper));
      const __m128i s =
          _mm_add_epi16(_mm_mullo_epi16(v0, _mm_set1_epi16(static_cast<int16_t>(16 - tx.weight16))),
                        _mm_mullo_epi16(v1, _mm_set1_epi16(tx.weight16)));
      __m128i v;
      if constexpr (std::is_same_v<T, uint8_t>) {
        v = _mm_srli_epi16(s, 8);
      } else {
        v = _mm_sign_epi16(_mm_srli_epi16(_mm_add_epi16(_mm_abs_epi16(s), _mm_set1_epi16(128)), 8),
                           s);
      }
      const __m128i bytes = Pack16<T>(v, v);
      if (out + 8 <= row_end) {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out), bytes);
      } else {
        alignas(16) T last[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(last), bytes);
        std::memcpy(out, last, static_cast<size_t>(depth));
      }
    }
    return;
  }
  for (int32_t x = 0; x < g.output_width; ++x, out += depth) {
    const ResizeBilinear::Taps& tx = r.x_taps()[x];
    const __m256i b = _mm256_set1_epi16(tx.weight16);
    const __m256i a = _mm256_set1_epi16(static_cast<int16_t>(16 - tx.weight16));
    const int16_t* v0 = terms + int64_t{tx.lower} * stride;
    const int16_t* v1 = terms + int64_t{tx.upper} * stride;
    int32_t c = 0;
    for (; c + 16 < depth; c += 32) {  // two chunks, the second one not empty
      const __m256i bytes = _mm256_permute4x64_epi64(
          Avx2Pack16<T>(Avx2Sixteenths<T>(v0 + c, v1 + c, a, b),
                        Avx2Sixteenths<T>(v0 + c + 16, v1 + c + 16, a, b)),
          0xD8);
      if (out + c + 32 <= row_end) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + c), bytes);
      } else {
        alignas(32) T last[32];
        _mm256_store_si256(reinterpret_cast<__m256i*>(last), bytes);
        std::memcpy(out + c, last, static_cast<size_t>(std::min(32, depth - c)));
      }
    }
    if (c < depth) {
      const __m256i s = Avx2Sixteenths<T>(v0 + c, v1 + c, a, b);
      const __m128i bytes = Pack16<T>(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
      if (out + c + 16 <= row_end) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), bytes);
      } else {
        alignas(16) T last[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(last), bytes);
        std::memcpy(out + c, last, static_cast<size_t>(depth - c));
      }
    }
  }
}

#endif  // DELEGATO_X86

#if DELEGATO_ARM
// Avx2FloatDirectRow in 4 lanes; a pixel's last depth % 4 channels through
// padded copies (the same vector operations).
void NeonFloatDirectRow(const ResizeBilinear& r, const float* row0, const float* row1,
                        const ResizeBilinear::Taps& ty, float* out) {
  const int32_t depth = r.geometry().depth;
  const int32_t full = depth / 4 * 4;
  const float32x4_t dy = vdupq_n_f32(ty.weight), one_minus_dy = vdupq_n_f32(ty.one_minus);
  const ResizeBilinear::Taps* taps = r.x_taps();
  auto blend = [&](float32x4_t p00, float32x4_t p10, float32x4_t p01, float32x4_t p11,
                   float32x4_t dx, float32x4_t one_minus_dx) {
    const float32x4_t t00 = vmulq_f32(vmulq_f32(p00, one_minus_dy), one_minus_dx);
    const float32x4_t t10 = vmulq_f32(vmulq_f32(p10, dy), one_minus_dx);
    const float32x4_t t01 = vmulq_f32(vmulq_f32(p01, one_minus_dy), dx);
    const float32x4_t t11 = vmulq_f32(vmulq_f32(p11, dy), dx);
    return vaddq_f32(vaddq_f32(vaddq_f32(t00, t10), t01), t11);
  };
  for (int32_t x = 0; x < r.geometry().output_width; ++x, out += depth) {
    const float32x4_t dx = vdupq_n_f32(taps[x].weight);
    const float32x4_t one_minus_dx = vdupq_n_f32(taps[x].one_minus);
    const float* p00 = row0 + int64_t{taps[x].lower} * depth;
    const float* p10 = row1 + int64_t{taps[x].lower} * depth;
    const float* p01 = row0 + int64_t{taps[x].upper} * depth;
    const float* p11 = row1 + int64_t{taps[x].upper} * depth;
    for (int32_t c = 0; c < full; c += 4)
      vst1q_f32(out + c, blend(vld1q_f32(p00 + c), vld1q_f32(p10 + c), vld1q_f32(p01 + c),
                               vld1q_f32(p11 + c), dx, one_minus_dx));
    if (full < depth) {
      float v[4][4] = {}, result[4];
      for (int32_t c = full; c < depth; ++c) {
        v[0][c - full] = p00[c];
        v[1][c - full] = p10[c];
        v[2][c - full] = p01[c];
        v[3][c - full] = p11[c];
      }
      vst1q_f32(result, blend(vld1q_f32(v[0]), vld1q_f32(v[1]), vld1q_f32(v[2]),
                              vld1q_f32(v[3]), dx, one_minus_dx));
      std::copy(result, result + (depth - full), out + full);
    }
  }
}

// Avx2SixteenthsRow in 8 lanes: the same column terms (int16, `stride`
// apart, zero past the depth) and per output the same 16-bit sum, shift and
// rounding. uint8 sums are read as unsigned 16-bit (at most 65408).
template <class T>
inline uint8x8_t NeonSixteenths(int16x8_t v0, int16x8_t v1, int16x8_t a, int16x8_t b) {
  const int16x8_t s = vmlaq_s16(vmulq_s16(v0, a), v1, b);  // wraps as the x86 lanes do
  if constexpr (std::is_same_v<T, uint8_t>) return vshrn_n_u16(vreinterpretq_u16_s16(s), 8);
  const uint16x8_t magnitude =
      vshrq_n_u16(vaddq_u16(vreinterpretq_u16_s16(vabsq_s16(s)), vdupq_n_u16(128)), 8);
  const int16x8_t m = vreinterpretq_s16_u16(magnitude);
  return vreinterpret_u8_s8(vmovn_s16(vbslq_s16(vcltzq_s16(s), vnegq_s16(m), m)));
}

template <class T>
void NeonSixteenthsRow(const ResizeBilinear& r, const T* row0, const T* row1,
                       const ResizeBilinear::Taps& ty, int32_t stride, int16_t* terms, T* out) {
  const reference::ResizeGeometry& g = r.geometry();
  const int32_t depth = g.depth;
  const int16_t rounding = std::is_same_v<T, uint8_t> ? 8 : 0;
  const int16x8_t wy = vdupq_n_s16(ty.weight16);
  const int16x8_t one_minus_wy = vdupq_n_s16(static_cast<int16_t>(16 - ty.weight16));
  const int16x8_t rounding16 = vdupq_n_s16(rounding);
  auto widen = [](const T* p) {
    if constexpr (std::is_same_v<T, uint8_t>) return vreinterpretq_s16_u16(vmovl_u8(vld1_u8(p)));
    else return vmovl_s8(vld1_s8(p));
  };
  for (int32_t j = 0; j < g.input_width; ++j) {
    const T* s0 = row0 + int64_t{j} * depth;
    const T* s1 = row1 + int64_t{j} * depth;
    int16_t* t = terms + int64_t{j} * stride;
    int32_t c = 0;
    for (; c + 8 <= depth; c += 8)
      vst1q_s16(t + c, vaddq_s16(vmlaq_s16(vmulq_s16(widen(s0 + c), one_minus_wy), widen(s1 + c),
                                           wy),
                                 rounding16));
    for (; c < depth; ++c)
      t[c] = static_cast<int16_t>(s0[c] * (16 - ty.weight16) + s1[c] * ty.weight16 + rounding);
    for (; c < stride; ++c) t[c] = 0;
  }
  T* const row_end = out + int64_t{g.output_width} * depth;
  for (int32_t x = 0; x < g.output_width; ++x, out += depth) {
    const ResizeBilinear::Taps& tx = r.x_taps()[x];
    const int16x8_t a = vdupq_n_s16(static_cast<int16_t>(16 - tx.weight16));
    const int16x8_t b = vdupq_n_s16(tx.weight16);
    const int16_t* v0 = terms + int64_t{tx.lower} * stride;
    const int16_t* v1 = terms + int64_t{tx.upper} * stride;
    // 8 channels per store; the bytes past the pixel's depth are rewritten
    // by the next pixel, and the row's last bytes go through a copy.
    for (int32_t c = 0; c < depth; c += 8) {
      const uint8x8_t bytes = NeonSixteenths<T>(vld1q_s16(v0 + c), vld1q_s16(v1 + c), a, b);
      if (out + c + 8 <= row_end) {
        vst1_u8(reinterpret_cast<uint8_t*>(out + c), bytes);
      } else {
        uint8_t last[8];
        vst1_u8(last, bytes);
        std::memcpy(out + c, last, static_cast<size_t>(std::min(8, depth - c)));
      }
    }
  }
}
#endif  // DELEGATO_ARM

// Row terms fit on the stack up to this many floats each.
constexpr int64_t kMaxRowTerms = 4096;

template <class T>
void Rows(const ResizeBilinear& r, int64_t begin, int64_t end, const T* input, T* output) {
  const reference::ResizeGeometry& g = r.geometry();
  const int64_t row = static_cast<int64_t>(g.input_width) * g.depth;
  // x86 only (unused on Arm):
  [[maybe_unused]] const bool vector = r.isa() == Isa::kAvx512Vnni;
  const int32_t stride = (g.depth + 7) / 8 * 8;  // AVX2 uint8 row terms: padded columns
  [[maybe_unused]] const bool avx2 =
      r.isa() == Isa::kAvx2 && int64_t{g.input_width} * stride <= kMaxRowTerms;
  [[maybe_unused]] alignas(64) float top[kMaxRowTerms], bottom[kMaxRowTerms];
  // Sixteenths: int16 column terms, one 128-bit vector per column up to 8
  // channels, else in 16-channel vectors.
  const int32_t stride16 = g.depth <= 8 ? 8 : (g.depth + 15) / 16 * 16;
  const bool sixteenths = r.sixteenths() && int64_t{g.input_width} * stride16 <= kMaxRowTerms;
  alignas(64) int16_t terms[kMaxRowTerms];
  for (int64_t out_row = begin; out_row < end; ++out_row) {
    const int32_t b = static_cast<int32_t>(out_row / g.output_height);
    const int32_t y = static_cast<int32_t>(out_row % g.output_height);
    const T* image = input + static_cast<int64_t>(b) * g.input_height * row;
    const ResizeBilinear::Taps& ty = r.y_taps()[y];
    T* out = output + out_row * g.output_width * g.depth;
#if DELEGATO_X86
    if constexpr (!std::is_same_v<T, float>) {
      // The 16-bit integer path first: about twice as fast as the AVX-512
      // float path (DeepLab's 33x33x21 -> 513x513: 0.72 vs 1.46 ms).
      if (sixteenths) {
        Avx2SixteenthsRow<T>(r, image + ty.lower * row, image + ty.upper * row, ty, stride16,
                             terms, out);
        continue;
      }
    }
    if constexpr (std::is_same_v<T, float>) {
      if (vector || r.isa() == Isa::kAvx2) {
        const float* row0 = image + ty.lower * row;
        const float* row1 = image + ty.upper * row;
        if (g.depth % 8 == 0)
          Avx2FloatDirectRow<true>(r, row0, row1, ty, out);
        else
          Avx2FloatDirectRow<false>(r, row0, row1, ty, out);
        continue;
      }
    }
    if constexpr (std::is_same_v<T, uint8_t>) {
      if (vector && row <= kMaxRowTerms) {
        Avx512Uint8Row(r, image + ty.lower * row, image + ty.upper * row, ty, top, bottom, out);
        continue;
      }
      if (avx2) {
        Avx2Uint8Row(r, image + ty.lower * row, image + ty.upper * row, ty, stride, top, bottom,
                     out);
        continue;
      }
    }
#endif
#if DELEGATO_ARM
    if constexpr (std::is_same_v<T, float>) {
      if (IsArmIsa(r.isa())) {
        NeonFloatDirectRow(r, image + ty.lower * row, image + ty.upper * row, ty, out);
        continue;
      }
    } else {
      if (sixteenths) {
        NeonSixteenthsRow<T>(r, image + ty.lower * row, image + ty.upper * row, ty, stride16,
                             terms, out);
        continue;
      }
    }
#endif
    for (int32_t x = 0; x < g.output_width; ++x, out += g.depth) {
      const ResizeBilinear::Taps& tx = r.x_taps()[x];
      const T* p00 = image + ty.lower * row + int64_t{tx.lower} * g.depth;
      const T* p10 = image + ty.upper * row + int64_t{tx.lower} * g.depth;
      const T* p01 = image + ty.lower * row + int64_t{tx.upper} * g.depth;
      const T* p11 = image + ty.upper * row + int64_t{tx.upper} * g.depth;
#if DELEGATO_X86
      if (vector) {  // float32 rows never come here (Avx2FloatDirectRow above)
        if constexpr (std::is_same_v<T, int8_t>)
          Avx512FixedPixel(p00, p10, p01, p11, tx.weight10, ty.weight10, out, g.depth);
        else if constexpr (std::is_same_v<T, uint8_t>)
          Avx512Uint8Pixel(p00, p10, p01, p11, tx, ty, out, g.depth);
        continue;
      }
      if constexpr (std::is_same_v<T, int8_t>) {
        if (r.isa() == Isa::kAvx2) {
          Avx2FixedPixel(p00, p10, p01, p11, tx.weight10, ty.weight10, out, g.depth);
          continue;
        }
      }
#endif
      ScalarPixel<T>(r, p00, p10, p01, p11, tx, ty, out, 0, g.depth);
    }
  }
}

}  // namespace

bool ResizeBilinear::Covers(Type type, const reference::ResizeGeometry& g) {
  return g.batches > 0 && g.depth > 0 && g.output_height > 0 && g.output_width > 0 &&
         g.input_height > 0 && g.input_width > 0 && !(g.align_corners && g.half_pixel_centers);
}

ResizeBilinear::ResizeBilinear(Type type, const reference::ResizeGeometry& g, Isa isa)
    : type_(type),
      g_(g),
      isa_(isa == Isa::kAvx512Vnni || isa == Isa::kAvx2 || IsArmIsa(isa) ? isa : Isa::kScalar) {
  auto fill = [&](int32_t in_size, int32_t out_size, std::vector<Taps>* taps) {
    taps->resize(out_size);
    const float scale = reference::detail::ResizeScale(in_size, out_size, g.align_corners);
    const int32_t scale10 = reference::detail::ResizeScale10(in_size, out_size, g.align_corners);
    for (int32_t i = 0; i < out_size; ++i) {
      Taps& t = (*taps)[i];
      if (type == Type::kInt8) {
        int32_t position;
        reference::detail::InterpolationFixed(i, scale10, g.half_pixel_centers, in_size,
                                              &position, &t.lower, &t.upper);
        t.weight10 = position - (1 << 10) * t.lower;
      } else {
        float position;
        reference::detail::InterpolationFloat(i, scale, g.half_pixel_centers, in_size, &position,
                                              &t.lower, &t.upper);
        t.weight = position - static_cast<float>(t.lower);
        t.one_minus = 1 - t.weight;
      }
    }
  };
  fill(g.input_width, g.output_width, &x_);
  fill(g.input_height, g.output_height, &y_);
  auto in_sixteenths = [type](std::vector<Taps>* taps) {
    for (Taps& t : *taps) {
      // A clamped edge tap (lower == upper, e.g. half-pixel centres' first
      // output, whose weight is negative) reads one pixel whatever its
      // weight: exactly p in the integer reference, and in the float one
      // when the weight is a sixteenth in [-1, 1] (every product and sum is
      // then exact).
      if (t.lower == t.upper &&
          (type == Type::kInt8 ||
           (t.weight >= -1.0f && t.weight <= 1.0f &&
            t.weight * 16.0f == static_cast<float>(static_cast<int>(t.weight * 16.0f))))) {
        t.weight16 = 0;
        continue;
      }
      if (type == Type::kInt8) {
        if (t.weight10 < 0 || t.weight10 > (1 << 10) || t.weight10 % 64 != 0) return false;
        t.weight16 = static_cast<int16_t>(t.weight10 / 64);
        continue;
      }
      const float w16 = t.weight * 16.0f;  // exact: a power-of-two scale
      if (!(t.weight >= 0.0f && t.weight <= 1.0f) || w16 != static_cast<float>(static_cast<int>(w16)))
        return false;
      t.weight16 = static_cast<int16_t>(w16);
    }
    return true;
  };
  sixteenths_ = type != Type::kFloat32 && isa_ != Isa::kScalar && in_sixteenths(&x_) &&
                in_sixteenths(&y_);
}

void ResizeBilinear::RunRows(int64_t begin, int64_t end, const void* input, void* output) const {
  switch (type_) {
    case Type::kFloat32:
      Rows(*this, begin, end, static_cast<const float*>(input), static_cast<float*>(output));
      return;
    case Type::kUInt8:
      Rows(*this, begin, end, static_cast<const uint8_t*>(input), static_cast<uint8_t*>(output));
      return;
    case Type::kInt8:
      Rows(*this, begin, end, static_cast<const int8_t*>(input), static_cast<int8_t*>(output));
      return;
  }
}

}  // namespace delegato::optimized
