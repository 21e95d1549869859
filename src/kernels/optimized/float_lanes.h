// float32 vector helpers shared by the float convolution kernels, one
// namespace per ISA with the same names (V, kLanes, Load, LoadN, Store,
// StoreN, Set1, Zero, Add, Sub, Fma, Min, Max), so that one loop source
// (a .inc file) compiles for each.
//
// LoadN / StoreN touch only the first n lanes (n < kLanes), zeroing the rest
// on load. Fma(a, b, c) is a * b + c in one rounding. Min / Max keep a NaN
// operand's NaN when it is the second operand (x86) or either (NEON), so
// Min(hi, Max(lo, x)) passes a NaN x through as std::min / std::max do in
// the reference's clamp.
#pragma once

// GCC 12's AVX-512 min/max intrinsics pass an undefined vector through an
// all-ones mask, which it then reports as uninitialized; the warnings are
// emitted where the helpers below are inlined, so the kernel sources that
// include this header have them off.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/optimized/isa.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

namespace delegato::optimized::lanes {

#if DELEGATO_X86
namespace avx512 {
using V = __m512;
constexpr int kLanes = 16;
DLG_TARGET_AVX512 inline V Load(const float* p) { return _mm512_loadu_ps(p); }
DLG_TARGET_AVX512 inline V LoadN(const float* p, int n) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
}
DLG_TARGET_AVX512 inline void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
DLG_TARGET_AVX512 inline void StoreN(float* p, V v, int n) {
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), v);
}
DLG_TARGET_AVX512 inline V Set1(float x) { return _mm512_set1_ps(x); }
DLG_TARGET_AVX512 inline V Zero() { return _mm512_setzero_ps(); }
DLG_TARGET_AVX512 inline V Add(V a, V b) { return _mm512_add_ps(a, b); }
DLG_TARGET_AVX512 inline V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
DLG_TARGET_AVX512 inline V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
DLG_TARGET_AVX512 inline V Min(V a, V b) { return _mm512_min_ps(a, b); }
DLG_TARGET_AVX512 inline V Max(V a, V b) { return _mm512_max_ps(a, b); }
}  // namespace avx512

namespace avx2 {
using V = __m256;
constexpr int kLanes = 8;
DLG_TARGET_AVX2 inline __m256i LaneMask(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
DLG_TARGET_AVX2 inline V Load(const float* p) { return _mm256_loadu_ps(p); }
DLG_TARGET_AVX2 inline V LoadN(const float* p, int n) { return _mm256_maskload_ps(p, LaneMask(n)); }
DLG_TARGET_AVX2 inline void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
DLG_TARGET_AVX2 inline void StoreN(float* p, V v, int n) { _mm256_maskstore_ps(p, LaneMask(n), v); }
DLG_TARGET_AVX2 inline V Set1(float x) { return _mm256_set1_ps(x); }
DLG_TARGET_AVX2 inline V Zero() { return _mm256_setzero_ps(); }
DLG_TARGET_AVX2 inline V Add(V a, V b) { return _mm256_add_ps(a, b); }
DLG_TARGET_AVX2 inline V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
DLG_TARGET_AVX2 inline V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
DLG_TARGET_AVX2 inline V Min(V a, V b) { return _mm256_min_ps(a, b); }
DLG_TARGET_AVX2 inline V Max(V a, V b) { return _mm256_max_ps(a, b); }
}  // namespace avx2
#endif  // DELEGATO_X86

#if DELEGATO_ARM
// Armv8.0 Advanced SIMD. vfmaq_f32 is a fused multiply-add (fmla) even though
// the aarch64 build compiles with -ffp-contract=off.
namespace neon {
using V = float32x4_t;
constexpr int kLanes = 4;
inline V Load(const float* p) { return vld1q_f32(p); }
inline V LoadN(const float* p, int n) {
  float lanes[kLanes] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int i = 0; i < n; ++i) lanes[i] = p[i];
  return vld1q_f32(lanes);
}
inline void Store(float* p, V v) { vst1q_f32(p, v); }
inline void StoreN(float* p, V v, int n) {
  float lanes[kLanes];
  vst1q_f32(lanes, v);
  for (int i = 0; i < n; ++i) p[i] = lanes[i];
}
inline V Set1(float x) { return vdupq_n_f32(x); }
inline V Zero() { return vdupq_n_f32(0.0f); }
inline V Add(V a, V b) { return vaddq_f32(a, b); }
inline V Sub(V a, V b) { return vsubq_f32(a, b); }
inline V Fma(V a, V b, V c) { return vfmaq_f32(c, a, b); }
// fmin/fmax return NaN when either operand is NaN: a NaN sum stays NaN.
inline V Min(V a, V b) { return vminq_f32(a, b); }
inline V Max(V a, V b) { return vmaxq_f32(a, b); }
}  // namespace neon
#endif  // DELEGATO_ARM

}  // namespace delegato::optimized::lanes
