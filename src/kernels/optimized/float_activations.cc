#include "kernels/optimized/float_activations.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/reference/activations.h"
#include "kernels/reference/math.h"
#include "kernels/reference/softmax.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

// GCC 12's AVX-512 min/max intrinsics pass an undefined vector through an
// all-ones mask, which it then reports as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace delegato::optimized {

namespace {

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;  // 8 significant bits: n * kLn2Hi is exact
constexpr float kLn2Lo = -2.12194440e-4f;
// Below -104 exp rounds to 0, above 89 to infinity (float's range ends at
// 88.72); the scaling by 2^n keeps every result in between, denormals too.
constexpr float kExpMin = -104.0f, kExpMax = 89.0f;
constexpr float kUpper = 16.619047164916992188f;  // TFLite's cut-offs
constexpr float kLower = -9.0f;
// 1/k! for k = 6..2.
constexpr float kC6 = 1.0f / 720, kC5 = 1.0f / 120, kC4 = 1.0f / 24, kC3 = 1.0f / 6,
                kC2 = 0.5f;
// tanh below |x| = 1/16: x (1 + x^2 (kT3 + x^2 (kT5 + x^2 kT7))).
constexpr float kTanhSmall = 0.0625f;
constexpr float kT3 = -1.0f / 3, kT5 = 2.0f / 15, kT7 = -17.0f / 315;

// The LSTMs' scalar sigmoid (reference::LstmFloatOps).
inline float SigmoidValue(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// GELU. 1 / sqrt 2, sqrt(2 / pi) * 2 (the approximate form's exponent -2u)
// and the cubic coefficient, as the reference writes them.
constexpr float kRsqrt2 = 0.70710678118654752440f;
constexpr float kTwoSqrt2OverPi = 2.0f * 0.79788456080286535588f;
constexpr float kGeluCubic = 0.044715f;
// Beyond a = 20, erfc(a) is 0 in float (it underflows at about 10.05); the
// clamp keeps a^2 finite (and a NaN input as a NaN product with x).
constexpr float kErfcMaxArg = 20.0f;
// Numerical Recipes' erfcc: erfc(a) = t exp(-a^2 + P(t)), t = 1 / (1 + a/2),
// P(t) = sum kErfc[i] t^i.
constexpr float kErfc[10] = {-1.26551223f, 1.00002368f, 0.37409196f,  0.09678418f,
                             -0.18628806f, 0.27886807f, -1.13520398f, 1.48851587f,
                             -0.82215223f, 0.17087277f};

}  // namespace

#if DELEGATO_X86
namespace {

// exp(t) without the clamp: Exp512's values for t in [kExpMin, kExpMax] (or NaN).
DLG_TARGET_AVX512 inline __m512 ExpUnclamped512(__m512 t) {
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

DLG_TARGET_AVX512 inline __m512 Exp512(__m512 t) {
  // max(lo, t) then min(hi, .): the second operand is returned for NaN.
  return ExpUnclamped512(
      _mm512_min_ps(_mm512_set1_ps(kExpMax), _mm512_max_ps(_mm512_set1_ps(kExpMin), t)));
}

DLG_TARGET_AVX512 inline __m512 Logistic512(__m512 x) {
  const __mmask16 low = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kLower), _CMP_LT_OQ);
  const __mmask16 high = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kUpper), _CMP_GT_OQ);
  const __m512 neg = _mm512_sub_ps(_mm512_setzero_ps(), x);
  if ((low | high) == 0) {
    // Every lane between the cut-offs (activations mostly are): no clamp,
    // no blends; the same values.
    return _mm512_div_ps(_mm512_set1_ps(1.0f),
                         _mm512_add_ps(_mm512_set1_ps(1.0f), ExpUnclamped512(neg)));
  }
  const __m512 e = Exp512(_mm512_mask_blend_ps(low, neg, x));
  __m512 y = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  y = _mm512_mask_blend_ps(low, y, e);
  return _mm512_mask_blend_ps(high, y, _mm512_set1_ps(1.0f));
}

// f over [begin, end), 16 lanes at a time; the last lanes masked (the same
// vector code for every element).
template <__m512 (*F)(__m512)>
DLG_TARGET_AVX512 void Range512(const float* in, float* out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) _mm512_storeu_ps(out + i, F(_mm512_loadu_ps(in + i)));
  if (i < end) {
    const __mmask16 m = static_cast<__mmask16>((1u << (end - i)) - 1);
    _mm512_mask_storeu_ps(out + i, m, F(_mm512_maskz_loadu_ps(m, in + i)));
  }
}

// 1 / (1 + exp(-x)) without the cut-offs (the LSTM gates' sigmoid).
DLG_TARGET_AVX512 inline __m512 Sigmoid512(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, Exp512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

// x * logistic(x), the product rounded as the MUL after a LOGISTIC rounds it.
DLG_TARGET_AVX512 inline __m512 Swish512(__m512 x) { return _mm512_mul_ps(x, Logistic512(x)); }

DLG_TARGET_AVX512 void Softmax512(float beta, const float* in, float* out, int64_t depth,
                                  int64_t row_begin, int64_t row_end) {
  const __m512 vbeta = _mm512_set1_ps(beta);
  for (int64_t row = row_begin; row < row_end; ++row) {
    const float* x = in + row * depth;
    float* y = out + row * depth;
    const int64_t full = depth / 16 * 16;
    const __mmask16 tail = static_cast<__mmask16>((1u << (depth - full)) - 1);
    const __m512 lowest = _mm512_set1_ps(std::numeric_limits<float>::lowest());
    // max(x, m) keeps m for a NaN x, as the reference's (m < x) ? x : m.
    __m512 m = lowest;
    for (int64_t c = 0; c < full; c += 16) m = _mm512_max_ps(_mm512_loadu_ps(x + c), m);
    if (tail) m = _mm512_max_ps(_mm512_mask_loadu_ps(lowest, tail, x + full), m);
    const __m512 vmax = _mm512_set1_ps(_mm512_reduce_max_ps(m));
    __m512 sum = _mm512_setzero_ps();
    for (int64_t c = 0; c < full; c += 16) {
      const __m512 e =
          Exp512(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + c), vmax), vbeta));
      _mm512_storeu_ps(y + c, e);
      sum = _mm512_add_ps(sum, e);
    }
    if (tail) {
      const __m512 e = Exp512(
          _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + full), vmax), vbeta));
      _mm512_mask_storeu_ps(y + full, tail, e);
      sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(tail, e));
    }
    const __m512 vsum = _mm512_set1_ps(_mm512_reduce_add_ps(sum));
    for (int64_t c = 0; c < full; c += 16)
      _mm512_storeu_ps(y + c, _mm512_div_ps(_mm512_loadu_ps(y + c), vsum));
    if (tail)
      _mm512_mask_storeu_ps(y + full, tail,
                            _mm512_div_ps(_mm512_maskz_loadu_ps(tail, y + full), vsum));
  }
}

// x * min(6, max(0, x + 3)) / 6 with the reference's operations: std::max(0,
// v) is (0 < v) ? v : 0 = max(v, 0) (NaN -> 0), std::min(6, r) is
// (r < 6) ? r : 6 = min(r, 6); then a product and a division, as written.
DLG_TARGET_AVX512 void HardSwish512Range(const float* in, float* out, int64_t begin,
                                         int64_t end) {
  const __m512 zero = _mm512_setzero_ps(), three = _mm512_set1_ps(3.0f),
               six = _mm512_set1_ps(6.0f);
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m512 x = _mm512_loadu_ps(in + i);
    const __m512 r = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(x, three), zero), six);
    _mm512_storeu_ps(out + i, _mm512_div_ps(_mm512_mul_ps(x, r), six));
  }
  for (; i < end; ++i) out[i] = reference::HardSwishValue(in[i]);
}

// tanh: |x| < 0.0625: x (1 + x^2 (-1/3 + x^2 (2/15 - 17/315 x^2))), the Taylor
// series (next term below 1e-12 relative); otherwise sign(x) (1 - e) / (1 + e)
// with e = exp(-2|x|) (1 - e >= 0.117: relative error about 1e-6).

DLG_TARGET_AVX512 inline __m512 Tanh512(__m512 x) {
  const __m512 sign_mask = _mm512_castsi512_ps(_mm512_set1_epi32(INT32_MIN));
  const __m512 ax = _mm512_andnot_ps(sign_mask, x);
  const __m512 e = Exp512(_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f)));
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 big = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
  big = _mm512_or_ps(big, _mm512_and_ps(x, sign_mask));
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 p = _mm512_fmadd_ps(x2, _mm512_set1_ps(kT7), _mm512_set1_ps(kT5));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(kT3));
  // x (1 + x^2 p): a product last, so tanh(-0) = -0.
  const __m512 small = _mm512_mul_ps(x, _mm512_fmadd_ps(x2, p, one));
  const __mmask16 is_small = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(kTanhSmall), _CMP_LT_OQ);
  return _mm512_mask_blend_ps(is_small, big, small);
}

// exp(hi + lo) for |lo| <= 2: n = round((hi + lo) log2 e), hi - n ln 2 in two
// steps (the first exact), then + lo, so a large hi keeps its relative
// precision and the reduced argument stays within ln 2 / 2 plus rounding.
DLG_TARGET_AVX512 inline __m512 ExpSum512(__m512 hi, __m512 lo) {
  hi = _mm512_min_ps(_mm512_set1_ps(kExpMax), _mm512_max_ps(_mm512_set1_ps(kExpMin), hi));
  const __m512 sum = _mm512_add_ps(hi, lo);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(sum, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), hi);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  r = _mm512_add_ps(r, lo);
  __m512 p = _mm512_set1_ps(kC6);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC5));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// x Phi(x) with Phi through erfc(|x| / sqrt 2), on kN vectors at once, each
// step for all of them before the next: one vector's steps wait on each
// other (a division, a degree-9 polynomial, exp), and the scheduler holds
// only a few vectors' waiting steps (gelu_float 1024 with 4 vectors at once:
// AVX-512 0.70 -> 0.57 us, AVX2 1.37 -> 0.98).
template <int kN>
DLG_TARGET_AVX512 inline void Gelu512N(__m512* x) {
  const __m512 sign_mask = _mm512_castsi512_ps(_mm512_set1_epi32(INT32_MIN));
  const __m512 one = _mm512_set1_ps(1.0f), half = _mm512_set1_ps(0.5f);
  __m512 a[kN], t[kN], p[kN], hi[kN], lo[kN];
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) {
    a[k] = _mm512_mul_ps(_mm512_andnot_ps(sign_mask, x[k]), _mm512_set1_ps(kRsqrt2));
    a[k] = _mm512_min_ps(a[k], _mm512_set1_ps(kErfcMaxArg));  // NaN -> 20; x keeps the NaN
  }
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) t[k] = _mm512_div_ps(one, _mm512_fmadd_ps(a[k], half, one));
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) p[k] = _mm512_set1_ps(kErfc[9]);
  for (int i = 8; i >= 0; --i) {
#pragma GCC unroll 4
    for (int k = 0; k < kN; ++k) p[k] = _mm512_fmadd_ps(p[k], t[k], _mm512_set1_ps(kErfc[i]));
  }
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) {
    const __m512 a2 = _mm512_mul_ps(a[k], a[k]);
    const __m512 a2_lo = _mm512_fmsub_ps(a[k], a[k], a2);  // a^2 = a2 + a2_lo exactly
    hi[k] = _mm512_sub_ps(_mm512_setzero_ps(), a2);
    lo[k] = _mm512_sub_ps(p[k], a2_lo);
  }
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) hi[k] = ExpSum512(hi[k], lo[k]);
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) {
    // x <= 0: Phi = erfc / 2; x > 0: 1 - erfc / 2.
    const __m512 half_erfc = _mm512_mul_ps(_mm512_mul_ps(t[k], hi[k]), half);
    const __mmask16 positive = _mm512_cmp_ps_mask(x[k], _mm512_setzero_ps(), _CMP_GT_OQ);
    x[k] = _mm512_mul_ps(
        x[k], _mm512_mask_blend_ps(positive, half_erfc, _mm512_sub_ps(one, half_erfc)));
  }
}

DLG_TARGET_AVX512 inline __m512 GeluApproximate512(__m512 x) {
  const __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
  const __m512 u2 = _mm512_mul_ps(_mm512_fmadd_ps(x3, _mm512_set1_ps(kGeluCubic), x),
                                  _mm512_set1_ps(-kTwoSqrt2OverPi));
  const __m512 e = Exp512(u2);
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

template <bool kApproximate>
DLG_TARGET_AVX512 inline __m512 GeluAny512(__m512 x) {
  if constexpr (kApproximate) {
    return GeluApproximate512(x);
  } else {
    Gelu512N<1>(&x);
    return x;
  }
}

template <bool kApproximate>
DLG_TARGET_AVX512 void Gelu512Range(const float* in, float* out, int64_t begin, int64_t end) {
  int64_t i = begin;
  if constexpr (!kApproximate) {
    for (; i + 64 <= end; i += 64) {
      __m512 x[4];
      for (int k = 0; k < 4; ++k) x[k] = _mm512_loadu_ps(in + i + 16 * k);
      Gelu512N<4>(x);
      for (int k = 0; k < 4; ++k) _mm512_storeu_ps(out + i + 16 * k, x[k]);
    }
  }
  for (; i + 16 <= end; i += 16)
    _mm512_storeu_ps(out + i, GeluAny512<kApproximate>(_mm512_loadu_ps(in + i)));
  if (i < end) {
    const __mmask16 m = static_cast<__mmask16>((1u << (end - i)) - 1);
    _mm512_mask_storeu_ps(out + i, m, GeluAny512<kApproximate>(_mm512_maskz_loadu_ps(m, in + i)));
  }
}

// exp(t) = 2^n p: n = round(t log2 e) and the polynomial p of the rest.
DLG_TARGET_AVX2 inline __m256 ExpMantissa256(__m256 t, __m256* n_out) {
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
  *n_out = n;
  return p;
}

// exp(t) for t in [-80, 80] (or NaN): 2^n is a normal float, one exact product.
// The same values as Exp256 there.
DLG_TARGET_AVX2 inline __m256 ExpNormal256(__m256 t) {
  __m256 n;
  const __m256 p = ExpMantissa256(t, &n);
  const __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

DLG_TARGET_AVX2 inline __m256 Exp256(__m256 t) {
  t = _mm256_min_ps(_mm256_set1_ps(kExpMax), _mm256_max_ps(_mm256_set1_ps(kExpMin), t));
  __m256 n;
  const __m256 p = ExpMantissa256(t, &n);
  // 2^n, n in [-150, 128], as 2^n1 * 2^n2 with n1 = n >> 1 and n2 = n - n1
  // (both normal): p * 2^n1 is exact, the second product rounds once.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

DLG_TARGET_AVX2 inline __m256 Logistic256(__m256 x) {
  const __m256 low = _mm256_cmp_ps(x, _mm256_set1_ps(kLower), _CMP_LT_OQ);
  const __m256 high = _mm256_cmp_ps(x, _mm256_set1_ps(kUpper), _CMP_GT_OQ);
  const __m256 neg = _mm256_sub_ps(_mm256_setzero_ps(), x);
  const __m256 cut = _mm256_or_ps(low, high);
  if (_mm256_testz_ps(cut, cut)) {
    // Every lane between the cut-offs (activations mostly are): exp(-x)
    // with -x in [-16.7, 9], no clamp, no blends; the same values.
    return _mm256_div_ps(_mm256_set1_ps(1.0f),
                         _mm256_add_ps(_mm256_set1_ps(1.0f), ExpNormal256(neg)));
  }
  const __m256 e = Exp256(_mm256_blendv_ps(neg, x, low));
  __m256 y = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  y = _mm256_blendv_ps(y, e, low);
  return _mm256_blendv_ps(y, _mm256_set1_ps(1.0f), high);
}

// Horizontal maximum and sum of 8 lanes by halving shuffles (a row of 16
// attention scores otherwise waits on a chain of scalar steps per row).
DLG_TARGET_AVX2 inline float MaxLanes256(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

DLG_TARGET_AVX2 inline float SumLanes256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

DLG_TARGET_AVX2 void Softmax256(float beta, const float* in, float* out, int64_t depth,
                                int64_t row_begin, int64_t row_end) {
  const __m256 vbeta = _mm256_set1_ps(beta);
  const __m256 lowest = _mm256_set1_ps(std::numeric_limits<float>::lowest());
  const int64_t full = depth / 8 * 8;
  // The last depth - full lanes: loaded and stored under a mask.
  const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(depth - full)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256 tail_ps = _mm256_castsi256_ps(tail);
  const bool has_tail = full < depth;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const float* x = in + row * depth;
    float* y = out + row * depth;
    // max(x, m) keeps m for a NaN x, as the reference's (m < x) ? x : m; the
    // lanes then hold no NaN, so the order of the reduction does not matter.
    __m256 m = lowest;
    for (int64_t c = 0; c < full; c += 8) m = _mm256_max_ps(_mm256_loadu_ps(x + c), m);
    __m256 rest = lowest;
    if (has_tail) {
      rest = _mm256_blendv_ps(lowest, _mm256_maskload_ps(x + full, tail), tail_ps);
      m = _mm256_max_ps(rest, m);
    }
    const __m256 vmax = _mm256_set1_ps(MaxLanes256(m));
    __m256 sum = _mm256_setzero_ps();
    for (int64_t c = 0; c < full; c += 8) {
      const __m256 e =
          Exp256(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + c), vmax), vbeta));
      _mm256_storeu_ps(y + c, e);
      sum = _mm256_add_ps(sum, e);
    }
    __m256 e_rest = _mm256_setzero_ps();
    if (has_tail) {
      e_rest = _mm256_and_ps(Exp256(_mm256_mul_ps(_mm256_sub_ps(rest, vmax), vbeta)), tail_ps);
      sum = _mm256_add_ps(sum, e_rest);
    }
    const __m256 vsum = _mm256_set1_ps(SumLanes256(sum));
    for (int64_t c = 0; c < full; c += 8)
      _mm256_storeu_ps(y + c, _mm256_div_ps(_mm256_loadu_ps(y + c), vsum));
    if (has_tail) _mm256_maskstore_ps(y + full, tail, _mm256_div_ps(e_rest, vsum));
  }
}

DLG_TARGET_AVX2 void HardSwish256Range(const float* in, float* out, int64_t begin,
                                       int64_t end) {
  const __m256 zero = _mm256_setzero_ps(), three = _mm256_set1_ps(3.0f),
               six = _mm256_set1_ps(6.0f);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256 x = _mm256_loadu_ps(in + i);
    const __m256 r = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(x, three), zero), six);
    _mm256_storeu_ps(out + i, _mm256_div_ps(_mm256_mul_ps(x, r), six));
  }
  for (; i < end; ++i) out[i] = reference::HardSwishValue(in[i]);
}

DLG_TARGET_AVX2 inline __m256 Tanh256(__m256 x) {
  const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN));
  const __m256 ax = _mm256_andnot_ps(sign_mask, x);
  const __m256 e = Exp256(_mm256_mul_ps(ax, _mm256_set1_ps(-2.0f)));
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256 big = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
  big = _mm256_or_ps(big, _mm256_and_ps(x, sign_mask));
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_fmadd_ps(x2, _mm256_set1_ps(kT7), _mm256_set1_ps(kT5));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(kT3));
  // x (1 + x^2 p): a product last, so tanh(-0) = -0.
  const __m256 small = _mm256_mul_ps(x, _mm256_fmadd_ps(x2, p, one));
  const __m256 is_small = _mm256_cmp_ps(ax, _mm256_set1_ps(kTanhSmall), _CMP_LT_OQ);
  return _mm256_blendv_ps(big, small, is_small);
}

// f over [begin, end), 8 lanes at a time; the last lanes through a padded
// copy (the same vector code for every element).
template <__m256 (*F)(__m256)>
DLG_TARGET_AVX2 void PaddedRange256(const float* in, float* out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) _mm256_storeu_ps(out + i, F(_mm256_loadu_ps(in + i)));
  if (i < end) {
    alignas(32) float rest[8] = {};
    for (int64_t j = i; j < end; ++j) rest[j - i] = in[j];
    _mm256_store_ps(rest, F(_mm256_load_ps(rest)));
    for (int64_t j = i; j < end; ++j) out[j] = rest[j - i];
  }
}

DLG_TARGET_AVX2 void Logistic256Range(const float* in, float* out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) _mm256_storeu_ps(out + i, Logistic256(_mm256_loadu_ps(in + i)));
  for (; i < end; ++i) out[i] = reference::LogisticValue(in[i]);
}

DLG_TARGET_AVX2 inline __m256 Sigmoid256(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, Exp256(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

DLG_TARGET_AVX2 void Sigmoid256Range(const float* in, float* out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) _mm256_storeu_ps(out + i, Sigmoid256(_mm256_loadu_ps(in + i)));
  for (; i < end; ++i) out[i] = SigmoidValue(in[i]);
}

DLG_TARGET_AVX2 void Swish256Range(const float* in, float* out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256 x = _mm256_loadu_ps(in + i);
    _mm256_storeu_ps(out + i, _mm256_mul_ps(x, Logistic256(x)));
  }
  for (; i < end; ++i) out[i] = in[i] * reference::LogisticValue(in[i]);
}

// exp(hi + lo), as ExpSum512.
DLG_TARGET_AVX2 inline __m256 ExpSum256(__m256 hi, __m256 lo) {
  hi = _mm256_min_ps(_mm256_set1_ps(kExpMax), _mm256_max_ps(_mm256_set1_ps(kExpMin), hi));
  const __m256 sum = _mm256_add_ps(hi, lo);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(sum, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), hi);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  r = _mm256_add_ps(r, lo);
  __m256 p = _mm256_set1_ps(kC6);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC5));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// Gelu512N with 8 lanes.
template <int kN>
DLG_TARGET_AVX2 inline void Gelu256N(__m256* x) {
  const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN));
  const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
  __m256 a[kN], t[kN], p[kN], hi[kN], lo[kN];
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) {
    a[k] = _mm256_mul_ps(_mm256_andnot_ps(sign_mask, x[k]), _mm256_set1_ps(kRsqrt2));
    a[k] = _mm256_min_ps(a[k], _mm256_set1_ps(kErfcMaxArg));
  }
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) t[k] = _mm256_div_ps(one, _mm256_fmadd_ps(a[k], half, one));
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) p[k] = _mm256_set1_ps(kErfc[9]);
  for (int i = 8; i >= 0; --i) {
#pragma GCC unroll 4
    for (int k = 0; k < kN; ++k) p[k] = _mm256_fmadd_ps(p[k], t[k], _mm256_set1_ps(kErfc[i]));
  }
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) {
    const __m256 a2 = _mm256_mul_ps(a[k], a[k]);
    const __m256 a2_lo = _mm256_fmsub_ps(a[k], a[k], a2);
    hi[k] = _mm256_sub_ps(_mm256_setzero_ps(), a2);
    lo[k] = _mm256_sub_ps(p[k], a2_lo);
  }
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) hi[k] = ExpSum256(hi[k], lo[k]);
#pragma GCC unroll 4
  for (int k = 0; k < kN; ++k) {
    const __m256 half_erfc = _mm256_mul_ps(_mm256_mul_ps(t[k], hi[k]), half);
    const __m256 positive = _mm256_cmp_ps(x[k], _mm256_setzero_ps(), _CMP_GT_OQ);
    x[k] = _mm256_mul_ps(x[k],
                         _mm256_blendv_ps(half_erfc, _mm256_sub_ps(one, half_erfc), positive));
  }
}

DLG_TARGET_AVX2 inline __m256 GeluApproximate256(__m256 x) {
  const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  const __m256 u2 = _mm256_mul_ps(_mm256_fmadd_ps(x3, _mm256_set1_ps(kGeluCubic), x),
                                  _mm256_set1_ps(-kTwoSqrt2OverPi));
  const __m256 e = Exp256(u2);
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

template <bool kApproximate>
DLG_TARGET_AVX2 inline __m256 GeluAny256(__m256 x) {
  if constexpr (kApproximate) {
    return GeluApproximate256(x);
  } else {
    Gelu256N<1>(&x);
    return x;
  }
}

template <bool kApproximate>
DLG_TARGET_AVX2 void Gelu256Range(const float* in, float* out, int64_t begin, int64_t end) {
  int64_t i = begin;
  if constexpr (!kApproximate) {
    for (; i + 32 <= end; i += 32) {
      __m256 x[4];
      for (int k = 0; k < 4; ++k) x[k] = _mm256_loadu_ps(in + i + 8 * k);
      Gelu256N<4>(x);
      for (int k = 0; k < 4; ++k) _mm256_storeu_ps(out + i + 8 * k, x[k]);
    }
  }
  for (; i + 8 <= end; i += 8)
    _mm256_storeu_ps(out + i, GeluAny256<kApproximate>(_mm256_loadu_ps(in + i)));
  if (i < end) {
    alignas(32) float rest[8] = {};
    for (int64_t j = i; j < end; ++j) rest[j - i] = in[j];
    _mm256_store_ps(rest, GeluAny256<kApproximate>(_mm256_load_ps(rest)));
    for (int64_t j = i; j < end; ++j) out[j] = rest[j - i];
  }
}

}  // namespace
#endif  // DELEGATO_X86

#if DELEGATO_ARM
namespace {

// 2^n p(r), p the degree-6 Taylor polynomial of e^r, 2^n as 2^n1 * 2^n2 with
// both factors normal (see Exp256): the common tail of ExpNeon and ExpSumNeon.
inline float32x4_t ScaledPolynomialNeon(float32x4_t n, float32x4_t r) {
  float32x4_t p = vdupq_n_f32(kC6);
  p = vfmaq_f32(vdupq_n_f32(kC5), p, r);
  p = vfmaq_f32(vdupq_n_f32(kC4), p, r);
  p = vfmaq_f32(vdupq_n_f32(kC3), p, r);
  p = vfmaq_f32(vdupq_n_f32(kC2), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  const int32x4_t ni = vcvtnq_s32_f32(n);
  const int32x4_t n1 = vshrq_n_s32(ni, 1);
  const int32x4_t n2 = vsubq_s32(ni, n1);
  const int32x4_t bias = vdupq_n_s32(127);
  const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
  const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
  return vmulq_f32(vmulq_f32(p, s1), s2);
}

// Exp256's steps in 4-lane NEON vectors (fused multiply-adds where it has them).
inline float32x4_t ExpNeon(float32x4_t t) {
  // max(lo, t) then min(hi, .): NEON's fmax/fmin return NaN for a NaN operand.
  t = vminq_f32(vdupq_n_f32(kExpMax), vmaxq_f32(vdupq_n_f32(kExpMin), t));
  const float32x4_t n = vrndnq_f32(vmulq_f32(t, vdupq_n_f32(kLog2e)));
  float32x4_t r = vfmsq_f32(t, n, vdupq_n_f32(kLn2Hi));
  r = vfmsq_f32(r, n, vdupq_n_f32(kLn2Lo));
  return ScaledPolynomialNeon(n, r);
}

// exp(hi + lo), as ExpSum256.
inline float32x4_t ExpSumNeon(float32x4_t hi, float32x4_t lo) {
  hi = vminq_f32(vdupq_n_f32(kExpMax), vmaxq_f32(vdupq_n_f32(kExpMin), hi));
  const float32x4_t n = vrndnq_f32(vmulq_f32(vaddq_f32(hi, lo), vdupq_n_f32(kLog2e)));
  float32x4_t r = vfmsq_f32(hi, n, vdupq_n_f32(kLn2Hi));
  r = vfmsq_f32(r, n, vdupq_n_f32(kLn2Lo));
  return ScaledPolynomialNeon(n, vaddq_f32(r, lo));
}

// LOGISTIC with TFLite's cut-offs, as Logistic256.
inline float32x4_t LogisticNeon(float32x4_t x) {
  const uint32x4_t low = vcltq_f32(x, vdupq_n_f32(kLower));
  const uint32x4_t high = vcgtq_f32(x, vdupq_n_f32(kUpper));
  const float32x4_t one = vdupq_n_f32(1.0f);
  const float32x4_t e = ExpNeon(vbslq_f32(low, x, vnegq_f32(x)));
  const float32x4_t y = vbslq_f32(low, e, vdivq_f32(one, vaddq_f32(one, e)));
  return vbslq_f32(high, one, y);
}

inline float32x4_t SwishNeon(float32x4_t x) { return vmulq_f32(x, LogisticNeon(x)); }

// x * min(6, max(0, x + 3)) / 6 with std::max / std::min's semantics:
// (0 < v) ? v : 0 (NaN -> 0), then (r < 6) ? r : 6, as HardSwish256Range.
inline float32x4_t HardSwishNeon(float32x4_t x) {
  const float32x4_t zero = vdupq_n_f32(0.0f), six = vdupq_n_f32(6.0f);
  const float32x4_t v = vaddq_f32(x, vdupq_n_f32(3.0f));
  float32x4_t r = vbslq_f32(vcgtq_f32(v, zero), v, zero);
  r = vbslq_f32(vcltq_f32(r, six), r, six);
  return vdivq_f32(vmulq_f32(x, r), six);
}

// GELU's exact form, as Gelu512N (one vector).
inline float32x4_t GeluNeon(float32x4_t x) {
  const float32x4_t one = vdupq_n_f32(1.0f), half = vdupq_n_f32(0.5f);
  float32x4_t a = vmulq_f32(vabsq_f32(x), vdupq_n_f32(kRsqrt2));
  a = vminq_f32(a, vdupq_n_f32(kErfcMaxArg));  // NaN stays NaN: so does the result
  const float32x4_t t = vdivq_f32(one, vfmaq_f32(one, a, half));
  float32x4_t p = vdupq_n_f32(kErfc[9]);
  for (int i = 8; i >= 0; --i) p = vfmaq_f32(vdupq_n_f32(kErfc[i]), p, t);
  const float32x4_t a2 = vmulq_f32(a, a);
  const float32x4_t a2_lo = vfmaq_f32(vnegq_f32(a2), a, a);  // a^2 = a2 + a2_lo exactly
  const float32x4_t e = ExpSumNeon(vnegq_f32(a2), vsubq_f32(p, a2_lo));
  const float32x4_t half_erfc = vmulq_f32(vmulq_f32(t, e), half);
  return vmulq_f32(x, vbslq_f32(vcgtq_f32(x, vdupq_n_f32(0.0f)),
                                vsubq_f32(one, half_erfc), half_erfc));
}

// GELU's approximate form, as GeluApproximate256.
inline float32x4_t GeluApproximateNeon(float32x4_t x) {
  const float32x4_t x3 = vmulq_f32(vmulq_f32(x, x), x);
  const float32x4_t u2 = vmulq_f32(vfmaq_f32(x, x3, vdupq_n_f32(kGeluCubic)),
                                   vdupq_n_f32(-kTwoSqrt2OverPi));
  return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), ExpNeon(u2)));
}

inline float32x4_t SigmoidNeon(float32x4_t x) {
  const float32x4_t one = vdupq_n_f32(1.0f);
  return vdivq_f32(one, vaddq_f32(one, ExpNeon(vnegq_f32(x))));
}

inline float32x4_t TanhNeon(float32x4_t x) {
  const float32x4_t one = vdupq_n_f32(1.0f);
  const float32x4_t ax = vabsq_f32(x);
  const float32x4_t e = ExpNeon(vmulq_f32(ax, vdupq_n_f32(-2.0f)));
  float32x4_t big = vdivq_f32(vsubq_f32(one, e), vaddq_f32(one, e));
  big = vbslq_f32(vdupq_n_u32(0x80000000u), x, big);  // x's sign
  const float32x4_t x2 = vmulq_f32(x, x);
  float32x4_t p = vfmaq_f32(vdupq_n_f32(kT5), x2, vdupq_n_f32(kT7));
  p = vfmaq_f32(vdupq_n_f32(kT3), x2, p);
  const float32x4_t small = vmulq_f32(x, vfmaq_f32(one, x2, p));
  return vbslq_f32(vcltq_f32(ax, vdupq_n_f32(kTanhSmall)), small, big);
}

// f over [begin, end), 4 lanes at a time; the last lanes through a padded copy
// (the same vector code for every element).
template <float32x4_t (*F)(float32x4_t)>
void NeonRange(const float* in, float* out, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 4 <= end; i += 4) vst1q_f32(out + i, F(vld1q_f32(in + i)));
  if (i < end) {
    float lanes[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    std::copy(in + i, in + end, lanes);
    vst1q_f32(lanes, F(vld1q_f32(lanes)));
    std::copy(lanes, lanes + (end - i), out + i);
  }
}

// SOFTMAX rows, as Softmax256 in 4 lanes; a row's last depth % 4 values
// through a padded copy (lowest for the maximum, dropped from the sum).
void SoftmaxNeon(float beta, const float* in, float* out, int64_t depth, int64_t row_begin,
                 int64_t row_end) {
  const float32x4_t vbeta = vdupq_n_f32(beta);
  const float lowest = std::numeric_limits<float>::lowest();
  const int64_t full = depth / 4 * 4, rest = depth - full;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const float* x = in + row * depth;
    float* y = out + row * depth;
    float tail[4] = {lowest, lowest, lowest, lowest};
    std::copy(x + full, x + depth, tail);
    // maxNum keeps m for a NaN x, as the reference's (m < x) ? x : m.
    float32x4_t m = vld1q_f32(tail);
    for (int64_t c = 0; c < full; c += 4) m = vmaxnmq_f32(vld1q_f32(x + c), m);
    const float32x4_t vmax = vdupq_n_f32(vmaxnmvq_f32(m));
    float32x4_t sum = vdupq_n_f32(0.0f);
    for (int64_t c = 0; c < full; c += 4) {
      const float32x4_t e = ExpNeon(vmulq_f32(vsubq_f32(vld1q_f32(x + c), vmax), vbeta));
      vst1q_f32(y + c, e);
      sum = vaddq_f32(sum, e);
    }
    float e_tail[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (rest > 0) {
      vst1q_f32(e_tail, ExpNeon(vmulq_f32(vsubq_f32(vld1q_f32(tail), vmax), vbeta)));
      for (int64_t c = rest; c < 4; ++c) e_tail[c] = 0.0f;
      sum = vaddq_f32(sum, vld1q_f32(e_tail));
    }
    const float32x4_t vsum = vdupq_n_f32(vaddvq_f32(sum));
    for (int64_t c = 0; c < full; c += 4) vst1q_f32(y + c, vdivq_f32(vld1q_f32(y + c), vsum));
    if (rest > 0) {
      vst1q_f32(e_tail, vdivq_f32(vld1q_f32(e_tail), vsum));
      std::copy(e_tail, e_tail + rest, y + full);
    }
  }
}

}  // namespace
#endif  // DELEGATO_ARM

bool HasFloatLogistic(Isa isa) {
#if DELEGATO_X86
  return isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni;
#elif DELEGATO_ARM
  return IsArmIsa(isa);
#else
  (void)isa;
  return false;
#endif
}

void FloatLogistic(Isa isa, const float* in, float* out, int64_t begin, int64_t end) {
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni) return Range512<Logistic512>(in, out, begin, end);
  if (isa == Isa::kAvx2) return Logistic256Range(in, out, begin, end);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa)) return NeonRange<LogisticNeon>(in, out, begin, end);
#endif
  reference::LogisticFloat(in, out, begin, end);
}

void FloatExp(Isa isa, const float* in, float* out, int64_t begin, int64_t end) {
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni) return Range512<Exp512>(in, out, begin, end);
  if (isa == Isa::kAvx2) return PaddedRange256<Exp256>(in, out, begin, end);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa)) return NeonRange<ExpNeon>(in, out, begin, end);
#endif
  for (int64_t i = begin; i < end; ++i) out[i] = std::exp(in[i]);
}

void FloatSigmoid(Isa isa, const float* in, float* out, int64_t begin, int64_t end) {
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni) return Range512<Sigmoid512>(in, out, begin, end);
  if (isa == Isa::kAvx2) return Sigmoid256Range(in, out, begin, end);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa)) return NeonRange<SigmoidNeon>(in, out, begin, end);
#endif
  for (int64_t i = begin; i < end; ++i) out[i] = SigmoidValue(in[i]);
}

void FloatSwish(Isa isa, const float* in, float* out, int64_t begin, int64_t end) {
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni) return Range512<Swish512>(in, out, begin, end);
  if (isa == Isa::kAvx2) return Swish256Range(in, out, begin, end);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa)) return NeonRange<SwishNeon>(in, out, begin, end);
#endif
  for (int64_t i = begin; i < end; ++i) out[i] = in[i] * reference::LogisticValue(in[i]);
}

void FloatHardSwish(Isa isa, const float* in, float* out, int64_t begin, int64_t end) {
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni) return HardSwish512Range(in, out, begin, end);
  if (isa == Isa::kAvx2) return HardSwish256Range(in, out, begin, end);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa)) return NeonRange<HardSwishNeon>(in, out, begin, end);
#endif
  reference::HardSwishFloat(in, out, begin, end);
}

void FloatTanh(Isa isa, const float* in, float* out, int64_t begin, int64_t end) {
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni) return Range512<Tanh512>(in, out, begin, end);
  if (isa == Isa::kAvx2) return PaddedRange256<Tanh256>(in, out, begin, end);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa)) return NeonRange<TanhNeon>(in, out, begin, end);
#endif
  reference::TanhFloat(in, out, begin, end);
}

void FloatGelu(Isa isa, bool approximate, const float* in, float* out, int64_t begin,
               int64_t end) {
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni)
    return approximate ? Gelu512Range<true>(in, out, begin, end)
                       : Gelu512Range<false>(in, out, begin, end);
  if (isa == Isa::kAvx2)
    return approximate ? Gelu256Range<true>(in, out, begin, end)
                       : Gelu256Range<false>(in, out, begin, end);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa))
    return approximate ? NeonRange<GeluApproximateNeon>(in, out, begin, end)
                       : NeonRange<GeluNeon>(in, out, begin, end);
#endif
  reference::GeluFloat(approximate, in, out, begin, end);
}

void FloatSoftmax(Isa isa, float beta, const float* in, float* out, int64_t depth,
                  int64_t row_begin, int64_t row_end) {
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni) return Softmax512(beta, in, out, depth, row_begin, row_end);
  if (isa == Isa::kAvx2) return Softmax256(beta, in, out, depth, row_begin, row_end);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa)) return SoftmaxNeon(beta, in, out, depth, row_begin, row_end);
#endif
  reference::SoftmaxFloat(beta, in, out, depth, row_begin, row_end);
}

}  // namespace delegato::optimized
