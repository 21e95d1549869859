#include "kernels/optimized/resize_bilinear.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#if DELEGATO_X86
#include <immintrin.h>
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

template <class T>
DLG_TARGET_AVX512 inline __m512 LoadFloat16(const T* p, __mmask16 mask) {
  if constexpr (std::is_same_v<T, float>) return _mm512_maskz_loadu_ps(mask, p);
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mask, p)));
}

// Channels [0, depth) of one output pixel.
template <class T>
DLG_TARGET_AVX512 void Avx512FloatPixel(const T* p00, const T* p10, const T* p01, const T* p11,
                                        const ResizeBilinear::Taps& tx,
                                        const ResizeBilinear::Taps& ty, T* out, int32_t depth) {
  const __m512 dy = _mm512_set1_ps(ty.weight), one_minus_dy = _mm512_set1_ps(ty.one_minus);
  const __m512 dx = _mm512_set1_ps(tx.weight), one_minus_dx = _mm512_set1_ps(tx.one_minus);
  for (int32_t c = 0; c < depth; c += 16) {
    const __mmask16 mask = static_cast<__mmask16>(_bzhi_u32(0xFFFF, std::min(16, depth - c)));
    const __m512 t00 = _mm512_mul_ps(_mm512_mul_ps(LoadFloat16(p00 + c, mask), one_minus_dy), one_minus_dx);
    const __m512 t10 = _mm512_mul_ps(_mm512_mul_ps(LoadFloat16(p10 + c, mask), dy), one_minus_dx);
    const __m512 t01 = _mm512_mul_ps(_mm512_mul_ps(LoadFloat16(p01 + c, mask), one_minus_dy), dx);
    const __m512 t11 = _mm512_mul_ps(_mm512_mul_ps(LoadFloat16(p11 + c, mask), dy), dx);
    __m512 v = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(t00, t10), t01), t11);
    if constexpr (std::is_same_v<T, float>) {
      _mm512_mask_storeu_ps(out + c, mask, v);
    } else {
      v = _mm512_add_ps(v, _mm512_set1_ps(0.5f));
      _mm_mask_storeu_epi8(out + c, mask, _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v)));
    }
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

// One output row of uint8 / float32 with the row terms precomputed:
// top[j] = p(y0, j) * (1 - dy) and bottom[j] = p(y1, j) * dy are the
// reference's first products, the same for every output x.
template <class T>
DLG_TARGET_AVX512 void Avx512FloatRow(const ResizeBilinear& r, const T* row0, const T* row1,
                                      const ResizeBilinear::Taps& ty, float* top, float* bottom,
                                      T* out) {
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
      __m512 v = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(t00, t10), t01), t11);
      if constexpr (std::is_same_v<T, float>) {
        _mm512_mask_storeu_ps(out + c, mask, v);
      } else {
        v = _mm512_add_ps(v, _mm512_set1_ps(0.5f));
        _mm_mask_storeu_epi8(out + c, mask, _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v)));
      }
    }
  }
}

#endif  // DELEGATO_X86

// Row terms fit on the stack up to this many floats each.
constexpr int64_t kMaxRowTerms = 4096;

template <class T>
void Rows(const ResizeBilinear& r, int64_t begin, int64_t end, const T* input, T* output) {
  const reference::ResizeGeometry& g = r.geometry();
  const int64_t row = static_cast<int64_t>(g.input_width) * g.depth;
  const bool vector = r.isa() == Isa::kAvx512Vnni;
  for (int64_t out_row = begin; out_row < end; ++out_row) {
    const int32_t b = static_cast<int32_t>(out_row / g.output_height);
    const int32_t y = static_cast<int32_t>(out_row % g.output_height);
    const T* image = input + static_cast<int64_t>(b) * g.input_height * row;
    const ResizeBilinear::Taps& ty = r.y_taps()[y];
    T* out = output + out_row * g.output_width * g.depth;
#if DELEGATO_X86
    if constexpr (!std::is_same_v<T, int8_t>) {
      if (vector && row <= kMaxRowTerms) {
        alignas(64) float top[kMaxRowTerms], bottom[kMaxRowTerms];
        Avx512FloatRow<T>(r, image + ty.lower * row, image + ty.upper * row, ty, top, bottom, out);
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
      if (vector) {
        if constexpr (std::is_same_v<T, int8_t>)
          Avx512FixedPixel(p00, p10, p01, p11, tx.weight10, ty.weight10, out, g.depth);
        else
          Avx512FloatPixel<T>(p00, p10, p01, p11, tx, ty, out, g.depth);
        continue;
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
    : type_(type), g_(g), isa_(isa == Isa::kAvx512Vnni ? isa : Isa::kScalar) {
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
