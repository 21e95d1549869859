#include "kernels/optimized/reduce_mean.h"

#include <algorithm>
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

// sums[c] for c < count, rows `stride` elements apart (inner, or more when
// summing the last channels of a row).
template <class T>
void ScalarSum(const T* in, int64_t reduced, int64_t count, int32_t* sums, int64_t stride) {
  uint32_t* acc = reinterpret_cast<uint32_t*>(sums);
  std::fill_n(acc, count, 0u);
  for (int64_t r = 0; r < reduced; ++r, in += stride)
    for (int64_t c = 0; c < count; ++c) acc[c] += static_cast<uint32_t>(int32_t{in[c]});
}

#if DELEGATO_X86
template <bool kSigned>
DLG_TARGET_AVX512 inline __m512i Widen(__m128i b) {
  return kSigned ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
}

// 16 bytes at p as int32 lanes.
template <bool kSigned>
DLG_TARGET_AVX512 inline __m512i Load16(const uint8_t* p) {
  return Widen<kSigned>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// 64 channels per step in four int32 vectors; the tail with masks.
template <bool kSigned>
DLG_TARGET_AVX512 void Avx512Sum(const uint8_t* in, int64_t reduced, int64_t inner, int32_t* sums) {
  int64_t c = 0;
  for (; c + 64 <= inner; c += 64) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    const uint8_t* p = in + c;
    for (int64_t r = 0; r < reduced; ++r, p += inner) {
      a0 = _mm512_add_epi32(a0, Load16<kSigned>(p));
      a1 = _mm512_add_epi32(a1, Load16<kSigned>(p + 16));
      a2 = _mm512_add_epi32(a2, Load16<kSigned>(p + 32));
      a3 = _mm512_add_epi32(a3, Load16<kSigned>(p + 48));
    }
    _mm512_storeu_si512(sums + c, a0);
    _mm512_storeu_si512(sums + c + 16, a1);
    _mm512_storeu_si512(sums + c + 32, a2);
    _mm512_storeu_si512(sums + c + 48, a3);
  }
  for (; c < inner; c += 16) {
    const int64_t left = inner - c;
    const __mmask16 mask = static_cast<__mmask16>(left >= 16 ? 0xFFFF : (1u << left) - 1);
    __m512i acc = _mm512_setzero_si512();
    const uint8_t* p = in + c;
    for (int64_t r = 0; r < reduced; ++r, p += inner)
      acc = _mm512_add_epi32(acc, Widen<kSigned>(_mm_maskz_loadu_epi8(mask, p)));
    _mm512_mask_storeu_epi32(sums + c, mask, acc);
  }
}

// 8 bytes at p as int32 lanes.
template <bool kSigned>
DLG_TARGET_AVX2 inline __m256i Load8(const uint8_t* p) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return kSigned ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

// As Avx512Sum with 32 channels per step; the last inner % 8 in scalar.
template <bool kSigned>
DLG_TARGET_AVX2 void Avx2Sum(const uint8_t* in, int64_t reduced, int64_t inner, int32_t* sums) {
  int64_t c = 0;
  for (; c + 32 <= inner; c += 32) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    const uint8_t* p = in + c;
    for (int64_t r = 0; r < reduced; ++r, p += inner) {
      a0 = _mm256_add_epi32(a0, Load8<kSigned>(p));
      a1 = _mm256_add_epi32(a1, Load8<kSigned>(p + 8));
      a2 = _mm256_add_epi32(a2, Load8<kSigned>(p + 16));
      a3 = _mm256_add_epi32(a3, Load8<kSigned>(p + 24));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + c), a0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + c + 8), a1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + c + 16), a2);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + c + 24), a3);
  }
  for (; c + 8 <= inner; c += 8) {
    __m256i acc = _mm256_setzero_si256();
    const uint8_t* p = in + c;
    for (int64_t r = 0; r < reduced; ++r, p += inner) acc = _mm256_add_epi32(acc, Load8<kSigned>(p));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + c), acc);
  }
  if (c < inner) {
    using T = std::conditional_t<kSigned, int8_t, uint8_t>;
    ScalarSum(reinterpret_cast<const T*>(in + c), reduced, inner - c, sums + c, inner);
  }
}
#endif

#if DELEGATO_ARM
// 16 channels per step. Rows are added into 16-bit lanes (a widening add per
// 8 bytes) in blocks of 256, which cannot overflow them (256 x 255 = 65280
// for uint8, 256 x -128 = -32768 for int8); each block's 16-bit sums are then
// widened into the int32 sums. Sums of blocks are the sums of the rows, so
// the int32 results (wrapping alike) are the reference's.
template <bool kSigned>
void NeonSum(const uint8_t* in, int64_t reduced, int64_t inner, int32_t* sums) {
  constexpr int64_t kBlockRows = 256;
  int64_t c = 0;
  for (; c + 16 <= inner; c += 16) {
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
    const uint8_t* p = in + c;
    for (int64_t r0 = 0; r0 < reduced; r0 += kBlockRows) {
      const int64_t r1 = std::min(reduced, r0 + kBlockRows);
      int16x8_t lo, hi;
      if (kSigned) {
        lo = hi = vdupq_n_s16(0);
        for (int64_t r = r0; r < r1; ++r, p += inner) {
          const int8x16_t b = vld1q_s8(reinterpret_cast<const int8_t*>(p));
          lo = vaddw_s8(lo, vget_low_s8(b));
          hi = vaddw_high_s8(hi, b);
        }
      } else {
        uint16x8_t ulo = vdupq_n_u16(0), uhi = ulo;
        for (int64_t r = r0; r < r1; ++r, p += inner) {
          const uint8x16_t b = vld1q_u8(p);
          ulo = vaddw_u8(ulo, vget_low_u8(b));
          uhi = vaddw_high_u8(uhi, b);
        }
        lo = vreinterpretq_s16_u16(ulo);
        hi = vreinterpretq_s16_u16(uhi);
      }
      if (kSigned) {
        a0 = vaddw_s16(a0, vget_low_s16(lo));
        a1 = vaddw_high_s16(a1, lo);
        a2 = vaddw_s16(a2, vget_low_s16(hi));
        a3 = vaddw_high_s16(a3, hi);
      } else {  // the 16-bit lanes hold unsigned sums: zero-extend
        const uint16x8_t ulo = vreinterpretq_u16_s16(lo), uhi = vreinterpretq_u16_s16(hi);
        a0 = vreinterpretq_s32_u32(vaddw_u16(vreinterpretq_u32_s32(a0), vget_low_u16(ulo)));
        a1 = vreinterpretq_s32_u32(vaddw_high_u16(vreinterpretq_u32_s32(a1), ulo));
        a2 = vreinterpretq_s32_u32(vaddw_u16(vreinterpretq_u32_s32(a2), vget_low_u16(uhi)));
        a3 = vreinterpretq_s32_u32(vaddw_high_u16(vreinterpretq_u32_s32(a3), uhi));
      }
    }
    vst1q_s32(sums + c, a0);
    vst1q_s32(sums + c + 4, a1);
    vst1q_s32(sums + c + 8, a2);
    vst1q_s32(sums + c + 12, a3);
  }
  if (c < inner) {
    using T = std::conditional_t<kSigned, int8_t, uint8_t>;
    ScalarSum(reinterpret_cast<const T*>(in + c), reduced, inner - c, sums + c, inner);
  }
}
#endif

}  // namespace

bool MeanSum8::Plan(const reference::ReduceShape& s) {
  if (s.input_count == 0 || s.reduced_count == 0 || s.rank == 0) return false;
  // Dims of size 1 may sit anywhere; the others must read kept*, reduced+,
  // kept*.
  int first = -1, last = -1;
  for (int d = 0; d < s.rank; ++d) {
    if (s.output_strides[d] != 0 || s.input_dims[d] == 1) continue;
    if (first < 0) first = d;
    last = d;
  }
  outer = 1;
  reduced = 1;
  inner = 1;
  if (first < 0) {  // nothing of size > 1 reduced: every output sums one value
    inner = s.input_count;
    return true;
  }
  for (int d = 0; d < s.rank; ++d) {
    const int64_t n = s.input_dims[d];
    const bool is_reduced = s.output_strides[d] == 0;
    if (d < first) {
      outer *= n;
    } else if (d <= last) {
      if (!is_reduced && n != 1) return false;
      reduced *= n;
    } else {
      inner *= n;
    }
  }
  return true;
}

void MeanSum8::RunRows(const uint8_t* input, int64_t row_begin, int64_t row_end,
                       int32_t* sums) const {
  const int64_t rows = row_end - row_begin;
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t* in = input + (o * reduced + row_begin) * inner;
    int32_t* out = sums + o * inner;
#if DELEGATO_X86
    if (isa == Isa::kAvx512Vnni) {
      if (is_signed)
        Avx512Sum<true>(in, rows, inner, out);
      else
        Avx512Sum<false>(in, rows, inner, out);
      continue;
    }
    if (isa == Isa::kAvx2) {
      if (is_signed)
        Avx2Sum<true>(in, rows, inner, out);
      else
        Avx2Sum<false>(in, rows, inner, out);
      continue;
    }
#endif
#if DELEGATO_ARM
    if (IsArmIsa(isa)) {
      if (is_signed)
        NeonSum<true>(in, rows, inner, out);
      else
        NeonSum<false>(in, rows, inner, out);
      continue;
    }
#endif
    if (is_signed)
      ScalarSum(reinterpret_cast<const int8_t*>(in), rows, inner, out, inner);
    else
      ScalarSum(in, rows, inner, out, inner);
  }
}

#if DELEGATO_X86
namespace {

DLG_TARGET_AVX512 void Avx512MeanFloat(const float* in, int64_t reduced, int64_t inner,
                                       float count, float* out) {
  const __m512 vcount = _mm512_set1_ps(count);
  for (int64_t i0 = 0; i0 < inner; i0 += 64) {
    __mmask16 m[4];
    for (int j = 0; j < 4; ++j) {
      const int64_t left = std::clamp<int64_t>(inner - i0 - 16 * j, 0, 16);
      m[j] = static_cast<__mmask16>((1u << left) - 1);
    }
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                     _mm512_setzero_ps()};
    const float* p = in + i0;
    for (int64_t r = 0; r < reduced; ++r, p += inner)
      for (int j = 0; j < 4; ++j)
        acc[j] = _mm512_add_ps(acc[j], _mm512_maskz_loadu_ps(m[j], p + 16 * j));
    for (int j = 0; j < 4; ++j)
      _mm512_mask_storeu_ps(out + i0 + 16 * j, m[j], _mm512_div_ps(acc[j], vcount));
  }
}

DLG_TARGET_AVX2 void Avx2MeanFloat(const float* in, int64_t reduced, int64_t inner, float count,
                                   float* out) {
  const __m256 vcount = _mm256_set1_ps(count);
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t i0 = 0; i0 < inner; i0 += 32) {
    __m256i m[4];
    for (int j = 0; j < 4; ++j) {
      const int64_t left = std::clamp<int64_t>(inner - i0 - 8 * j, 0, 8);
      m[j] = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left)), lanes);
    }
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                     _mm256_setzero_ps()};
    const float* p = in + i0;
    for (int64_t r = 0; r < reduced; ++r, p += inner)
      for (int j = 0; j < 4; ++j)
        acc[j] = _mm256_add_ps(acc[j], _mm256_maskload_ps(p + 8 * j, m[j]));
    for (int j = 0; j < 4; ++j)
      _mm256_maskstore_ps(out + i0 + 8 * j, m[j], _mm256_div_ps(acc[j], vcount));
  }
}

// inner == 1 (MEAN over the last axis, a layer norm's): each output sums one
// row of `reduced` adjacent values. A lane per row (16 or 8 rows at a time),
// the row's values gathered one column after another: each lane adds its row
// in the reference's order, and the rows' addition chains run side by side
// instead of one after another. Rows left over run the scalar loop.
DLG_TARGET_AVX512 int64_t Avx512MeanRows(const float* in, int64_t rows, int64_t reduced,
                                         float count, float* out) {
  const __m512 vcount = _mm512_set1_ps(count);
  const __m512i offsets = _mm512_mullo_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
      _mm512_set1_epi32(static_cast<int32_t>(reduced)));
  int64_t row = 0;
  for (; row + 16 <= rows; row += 16) {
    const float* p = in + row * reduced;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t r = 0; r < reduced; ++r)
      acc = _mm512_add_ps(acc, _mm512_i32gather_ps(offsets, p + r, 4));
    _mm512_storeu_ps(out + row, _mm512_div_ps(acc, vcount));
  }
  return row;
}

DLG_TARGET_AVX2 int64_t Avx2MeanRows(const float* in, int64_t rows, int64_t reduced, float count,
                                     float* out) {
  const __m256 vcount = _mm256_set1_ps(count);
  const __m256i offsets = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                             _mm256_set1_epi32(static_cast<int32_t>(reduced)));
  int64_t row = 0;
  for (; row + 8 <= rows; row += 8) {
    const float* p = in + row * reduced;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t r = 0; r < reduced; ++r)
      acc = _mm256_add_ps(acc, _mm256_i32gather_ps(p + r, offsets, 4));
    _mm256_storeu_ps(out + row, _mm256_div_ps(acc, vcount));
  }
  return row;
}

}  // namespace
#endif  // DELEGATO_X86

#if DELEGATO_ARM
namespace {

// Avx2MeanRows in 4 lanes: the 4 rows' next 4 values loaded and transposed
// (vtrn, then the halves recombined), so each lane still adds its own row's
// values in the reference's order.
int64_t NeonMeanRows(const float* in, int64_t rows, int64_t reduced, float count, float* out) {
  const float32x4_t vcount = vdupq_n_f32(count);
  int64_t row = 0;
  for (; row + 4 <= rows; row += 4) {
    const float* p0 = in + row * reduced;
    const float* p1 = p0 + reduced;
    const float* p2 = p1 + reduced;
    const float* p3 = p2 + reduced;
    float32x4_t acc = vdupq_n_f32(0.0f);
    int64_t r = 0;
    for (; r + 4 <= reduced; r += 4) {
      const float32x4x2_t ab = vtrnq_f32(vld1q_f32(p0 + r), vld1q_f32(p1 + r));
      const float32x4x2_t cd = vtrnq_f32(vld1q_f32(p2 + r), vld1q_f32(p3 + r));
      acc = vaddq_f32(acc, vcombine_f32(vget_low_f32(ab.val[0]), vget_low_f32(cd.val[0])));
      acc = vaddq_f32(acc, vcombine_f32(vget_low_f32(ab.val[1]), vget_low_f32(cd.val[1])));
      acc = vaddq_f32(acc, vcombine_f32(vget_high_f32(ab.val[0]), vget_high_f32(cd.val[0])));
      acc = vaddq_f32(acc, vcombine_f32(vget_high_f32(ab.val[1]), vget_high_f32(cd.val[1])));
    }
    for (; r < reduced; ++r) {
      const float column[4] = {p0[r], p1[r], p2[r], p3[r]};
      acc = vaddq_f32(acc, vld1q_f32(column));
    }
    vst1q_f32(out + row, vdivq_f32(acc, vcount));
  }
  return row;
}

}  // namespace
#endif  // DELEGATO_ARM

void MeanFloatContiguous(const MeanSum8& plan, float count, const float* input, float* output) {
  int64_t first_outer = 0;
#if DELEGATO_X86
  // Row sums: a lane per row, when 15 rows' offsets fit the gather's int32.
  if (plan.inner == 1 && plan.reduced > 1 && plan.reduced <= (int64_t{1} << 26)) {
    if (plan.isa == Isa::kAvx512Vnni)
      first_outer = Avx512MeanRows(input, plan.outer, plan.reduced, count, output);
    else if (plan.isa == Isa::kAvx2)
      first_outer = Avx2MeanRows(input, plan.outer, plan.reduced, count, output);
  }
#endif
#if DELEGATO_ARM
  if (plan.inner == 1 && plan.reduced > 1 && IsArmIsa(plan.isa))
    first_outer = NeonMeanRows(input, plan.outer, plan.reduced, count, output);
#endif
  for (int64_t o = first_outer; o < plan.outer; ++o) {
    const float* in = input + o * plan.reduced * plan.inner;
    float* out = output + o * plan.inner;
#if DELEGATO_X86
    if (plan.isa == Isa::kAvx512Vnni) {
      Avx512MeanFloat(in, plan.reduced, plan.inner, count, out);
      continue;
    }
    if (plan.isa == Isa::kAvx2) {
      Avx2MeanFloat(in, plan.reduced, plan.inner, count, out);
      continue;
    }
#endif
    if (plan.inner == 1) {  // a local sum: out may alias nothing, but the compiler cannot know
      float sum = 0.0f;
      for (int64_t r = 0; r < plan.reduced; ++r) sum = sum + in[r];
      out[0] = sum / count;
      continue;
    }
    for (int64_t i = 0; i < plan.inner; ++i) out[i] = 0.0f;
    for (int64_t r = 0; r < plan.reduced; ++r)
      for (int64_t i = 0; i < plan.inner; ++i) out[i] = out[i] + in[r * plan.inner + i];
    for (int64_t i = 0; i < plan.inner; ++i) out[i] = out[i] / count;
  }
}

}  // namespace delegato::optimized
