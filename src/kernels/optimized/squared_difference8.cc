#include "kernels/optimized/squared_difference8.h"

#include "kernels/optimized/requantize.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif

// GCC 12 reports false "may be used uninitialized" warnings from inside its
// own AVX-512 intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace delegato::optimized {
namespace {

constexpr int kInputLeftShift = 7;  // the reference's headroom (SquaredDifferenceRescale)

struct Span {
  const int8_t* a;
  int64_t stride_a;  // 0 (broadcast) or 1
  const int8_t* b;
  int64_t stride_b;
  int8_t* out;
  int64_t count;
};

// Elements [from, s.count) with the reference's steps on the tabulated rescales.
void ScalarSpan(const reference::QuantizedSquaredDifferenceParams& p, const int32_t* rescaled_a,
                const int32_t* rescaled_b, const Span& s, int64_t from) {
  for (int64_t i = from; i < s.count; ++i)
    s.out[i] = reference::SquaredDifferenceOutput(
        p, rescaled_a[static_cast<uint8_t>(s.a[i * s.stride_a])] -
               rescaled_b[static_cast<uint8_t>(s.b[i * s.stride_b])]);
}

#if DELEGATO_X86

DLG_TARGET_AVX512 void Avx512Span(const reference::QuantizedSquaredDifferenceParams& p,
                                  const int32_t* rescaled_a, const int32_t* rescaled_b,
                                  const Span& s) {
  const Requant512 rq_a = BroadcastRequant512(p.input1_multiplier, p.input1_shift);
  const Requant512 rq_b = BroadcastRequant512(p.input2_multiplier, p.input2_shift);
  const Requant512 rq_out = BroadcastRequant512(p.output_multiplier, p.output_shift);
  const __m512i offset_a = _mm512_set1_epi32(p.input1_offset);
  const __m512i offset_b = _mm512_set1_epi32(p.input2_offset);
  const __m512i out_offset = _mm512_set1_epi32(p.output_offset);
  const __m512i lo = _mm512_set1_epi32(-128 - p.output_offset);
  const __m512i hi = _mm512_set1_epi32(127 - p.output_offset);
  const __m512i fixed_a = _mm512_set1_epi32(rescaled_a[static_cast<uint8_t>(s.a[0])]);
  const __m512i fixed_b = _mm512_set1_epi32(rescaled_b[static_cast<uint8_t>(s.b[0])]);
  for (int64_t i = 0; i < s.count; i += 16) {
    const int64_t left = s.count - i;
    const __mmask16 mask = static_cast<__mmask16>(left >= 16 ? 0xFFFF : (1u << left) - 1);
    __m512i va = fixed_a, vb = fixed_b;
    if (s.stride_a) {
      const __m512i x = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, s.a + i));
      va = MultiplyByQuantizedMultiplier512(
          _mm512_slli_epi32(_mm512_add_epi32(x, offset_a), kInputLeftShift), rq_a);
    }
    if (s.stride_b) {
      const __m512i y = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, s.b + i));
      vb = MultiplyByQuantizedMultiplier512(
          _mm512_slli_epi32(_mm512_add_epi32(y, offset_b), kInputLeftShift), rq_b);
    }
    const __m512i diff = _mm512_sub_epi32(va, vb);
    const __m512i r = Requantize512(_mm512_mullo_epi32(diff, diff), rq_out, lo, hi, out_offset);
    _mm_mask_storeu_epi8(s.out + i, mask, _mm512_cvtepi32_epi8(r));
  }
}

DLG_TARGET_AVX2 void Avx2Span(const reference::QuantizedSquaredDifferenceParams& p,
                              const int32_t* rescaled_a, const int32_t* rescaled_b,
                              const Span& s) {
  const Requant256 rq_a = BroadcastRequant256(p.input1_multiplier, p.input1_shift);
  const Requant256 rq_b = BroadcastRequant256(p.input2_multiplier, p.input2_shift);
  const Requant256 rq_out = BroadcastRequant256(p.output_multiplier, p.output_shift);
  const __m256i offset_a = _mm256_set1_epi32(p.input1_offset);
  const __m256i offset_b = _mm256_set1_epi32(p.input2_offset);
  const __m256i out_offset = _mm256_set1_epi32(p.output_offset);
  const __m256i lo = _mm256_set1_epi32(-128 - p.output_offset);
  const __m256i hi = _mm256_set1_epi32(127 - p.output_offset);
  const __m256i fixed_a = _mm256_set1_epi32(rescaled_a[static_cast<uint8_t>(s.a[0])]);
  const __m256i fixed_b = _mm256_set1_epi32(rescaled_b[static_cast<uint8_t>(s.b[0])]);
  int64_t i = 0;
  for (; i + 16 <= s.count; i += 16) {
    __m256i r[2];
    for (int h = 0; h < 2; ++h) {
      __m256i va = fixed_a, vb = fixed_b;
      if (s.stride_a) {
        const __m256i x = _mm256_cvtepi8_epi32(
            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s.a + i + 8 * h)));
        va = MultiplyByQuantizedMultiplier256(
            _mm256_slli_epi32(_mm256_add_epi32(x, offset_a), kInputLeftShift), rq_a);
      }
      if (s.stride_b) {
        const __m256i y = _mm256_cvtepi8_epi32(
            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s.b + i + 8 * h)));
        vb = MultiplyByQuantizedMultiplier256(
            _mm256_slli_epi32(_mm256_add_epi32(y, offset_b), kInputLeftShift), rq_b);
      }
      const __m256i diff = _mm256_sub_epi32(va, vb);
      r[h] = Requantize256(_mm256_mullo_epi32(diff, diff), rq_out, lo, hi, out_offset);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(s.out + i), NarrowToBytes256(r[0], r[1]));
  }
  ScalarSpan(p, rescaled_a, rescaled_b, s, i);
}

#endif  // DELEGATO_X86

}  // namespace

QuantSquaredDifference8::QuantSquaredDifference8(
    const reference::QuantizedSquaredDifferenceParams& params, Isa isa)
    : params_(params), isa_(isa) {
  for (int v = 0; v < 256; ++v) {
    const int8_t x = static_cast<int8_t>(static_cast<uint8_t>(v));
    rescaled_a_[v] = reference::SquaredDifferenceRescale(
        x, params.input1_offset, params.input1_multiplier, params.input1_shift);
    rescaled_b_[v] = reference::SquaredDifferenceRescale(
        x, params.input2_offset, params.input2_multiplier, params.input2_shift);
  }
}

void QuantSquaredDifference8::Run(const reference::BroadcastPlan& plan, const int8_t* a,
                                  const int8_t* b, int8_t* out, int64_t begin,
                                  int64_t end) const {
  reference::ForEachBroadcastRun(
      plan, begin, end,
      [&](int64_t a_offset, int64_t sa, int64_t b_offset, int64_t sb, int64_t position,
          int64_t count) {
        const Span s{a + a_offset, sa, b + b_offset, sb, out + position, count};
#if DELEGATO_X86
        const bool vector_strides = sa <= 1 && sb <= 1;  // merged plans give 0 or 1
        if (vector_strides && isa_ == Isa::kAvx512Vnni) return Avx512Span(params_, rescaled_a_, rescaled_b_, s);
        if (vector_strides && isa_ == Isa::kAvx2) return Avx2Span(params_, rescaled_a_, rescaled_b_, s);
#endif
        ScalarSpan(params_, rescaled_a_, rescaled_b_, s, 0);
      });
}

}  // namespace delegato::optimized
