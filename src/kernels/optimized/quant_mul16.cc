#include "kernels/optimized/quant_mul16.h"

#if DELEGATO_X86
#include <immintrin.h>

#include "kernels/optimized/requantize.h"
#endif

namespace delegato::optimized {

bool QuantMul16Covers(const reference::QuantizedMulDivParams& p, Isa isa) {
  return (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni) && p.input1_offset == 0 &&
         p.input2_offset == 0 && p.output_shift <= 31 && p.output_shift >= -31 &&
         p.output_multiplier >= 0;
}

namespace {

// One run: a[k * sa] * b[k * sb] for k < count, sa and sb 0 or 1.
#if DELEGATO_X86
DLG_TARGET_AVX2 void Run256(const int16_t* a, int64_t sa, const int16_t* b, int64_t sb,
                            int16_t* out, int64_t count,
                            const reference::QuantizedMulDivParams& p) {
  const Requant256 rq = BroadcastRequant256(p.output_multiplier, p.output_shift);
  const __m256i offset = _mm256_set1_epi32(p.output_offset);
  const __m256i lo = _mm256_set1_epi32(p.act_min), hi = _mm256_set1_epi32(p.act_max);
  const __m256i a_value = _mm256_set1_epi32(a[0]), b_value = _mm256_set1_epi32(b[0]);
  int64_t k = 0;
  for (; k + 8 <= count; k += 8) {
    const __m256i va =
        sa != 0 ? _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k)))
                : a_value;
    const __m256i vb =
        sb != 0 ? _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k)))
                : b_value;
    const __m256i q = MultiplyByQuantizedMultiplier256(_mm256_mullo_epi32(va, vb), rq);
    const __m256i o = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(q, offset), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k),
                     _mm_packs_epi32(_mm256_castsi256_si128(o), _mm256_extracti128_si256(o, 1)));
  }
  for (; k < count; ++k) out[k] = reference::QuantizedMul<int16_t>(a[k * sa], b[k * sb], p);
}
#endif

}  // namespace

void QuantMul16(const reference::BroadcastPlan& plan, const int16_t* a, const int16_t* b,
                int16_t* out, const reference::QuantizedMulDivParams& p, int64_t begin,
                int64_t end) {
  reference::ForEachBroadcastRun(
      plan, begin, end,
      [&](int64_t a_offset, int64_t sa, int64_t b_offset, int64_t sb, int64_t position,
          int64_t count) {
#if DELEGATO_X86
        if ((sa == 0 || sa == 1) && (sb == 0 || sb == 1)) {
          Run256(a + a_offset, sa, b + b_offset, sb, out + position, count, p);
          return;
        }
#endif
        for (int64_t k = 0; k < count; ++k)
          out[position + k] =
              reference::QuantizedMul<int16_t>(a[a_offset + k * sa], b[b_offset + k * sb], p);
      });
}

}  // namespace delegato::optimized
