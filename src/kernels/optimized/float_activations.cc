#include "kernels/optimized/float_activations.h"

#include "kernels/reference/activations.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif

namespace delegato::optimized {

namespace {

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;  // 8 significant bits: n * kLn2Hi is exact
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kExpMin = -87.0f, kExpMax = 88.0f;
constexpr float kUpper = 16.619047164916992188f;  // TFLite's cut-offs
constexpr float kLower = -9.0f;
// 1/k! for k = 6..2.
constexpr float kC6 = 1.0f / 720, kC5 = 1.0f / 120, kC4 = 1.0f / 24, kC3 = 1.0f / 6,
                kC2 = 0.5f;

}  // namespace

#if DELEGATO_X86
namespace {

DLG_TARGET_AVX512 inline __m512 Exp512(__m512 t) {
  // max(lo, t) then min(hi, .): the second operand is returned for NaN.
  t = _mm512_min_ps(_mm512_set1_ps(kExpMax), _mm512_max_ps(_mm512_set1_ps(kExpMin), t));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), t);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kC6);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC5));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

DLG_TARGET_AVX512 inline __m512 Logistic512(__m512 x) {
  const __mmask16 low = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kLower), _CMP_LT_OQ);
  const __mmask16 high = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kUpper), _CMP_GT_OQ);
  const __m512 neg = _mm512_sub_ps(_mm512_setzero_ps(), x);
  const __m512 e = Exp512(_mm512_mask_blend_ps(low, neg, x));
  __m512 y = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  y = _mm512_mask_blend_ps(low, y, e);
  return _mm512_mask_blend_ps(high, y, _mm512_set1_ps(1.0f));
}

DLG_TARGET_AVX512 void Logistic512Range(const float* in, float* out, int64_t begin,
                                        int64_t end) {
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) _mm512_storeu_ps(out + i, Logistic512(_mm512_loadu_ps(in + i)));
  if (i < end) {
    const __mmask16 m = static_cast<__mmask16>((1u << (end - i)) - 1);
    _mm512_mask_storeu_ps(out + i, m, Logistic512(_mm512_maskz_loadu_ps(m, in + i)));
  }
}

DLG_TARGET_AVX2 inline __m256 Exp256(__m256 t) {
  t = _mm256_min_ps(_mm256_set1_ps(kExpMax), _mm256_max_ps(_mm256_set1_ps(kExpMin), t));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), t);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kC6);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC5));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  // 2^n with n in [-126, 127] (t is clamped): the exponent field n + 127.
  const __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

DLG_TARGET_AVX2 inline __m256 Logistic256(__m256 x) {
  const __m256 low = _mm256_cmp_ps(x, _mm256_set1_ps(kLower), _CMP_LT_OQ);
  const __m256 high = _mm256_cmp_ps(x, _mm256_set1_ps(kUpper), _CMP_GT_OQ);
  const __m256 neg = _mm256_sub_ps(_mm256_setzero_ps(), x);
  const __m256 e = Exp256(_mm256_blendv_ps(neg, x, low));
  __m256 y = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  y = _mm256_blendv_ps(y, e, low);
  return _mm256_blendv_ps(y, _mm256_set1_ps(1.0f), high);
}

DLG_TARGET_AVX2 void Logistic256Range(const float* in, float* out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) _mm256_storeu_ps(out + i, Logistic256(_mm256_loadu_ps(in + i)));
  for (; i < end; ++i) out[i] = reference::LogisticValue(in[i]);
}

}  // namespace
#endif  // DELEGATO_X86

bool HasFloatLogistic(Isa isa) {
#if DELEGATO_X86
  return isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni;
#else
  (void)isa;
  return false;
#endif
}

void FloatLogistic(Isa isa, const float* in, float* out, int64_t begin, int64_t end) {
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni) return Logistic512Range(in, out, begin, end);
  if (isa == Isa::kAvx2) return Logistic256Range(in, out, begin, end);
#endif
  reference::LogisticFloat(in, out, begin, end);
}

}  // namespace delegato::optimized
