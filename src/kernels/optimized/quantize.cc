#include "kernels/optimized/quantize.h"

#include "kernels/reference/quantize.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif

// GCC 12 reports false "may be used uninitialized" warnings from inside its
// own AVX-512 intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace delegato::optimized {
namespace {

template <class In, class Out>
void BuildTable(uint8_t* table, int32_t multiplier, int shift, int32_t in_zp, int32_t out_zp) {
  In in[256];
  Out out[256];
  for (int i = 0; i < 256; ++i) in[i] = static_cast<In>(static_cast<uint8_t>(i));
  reference::Requantize(in, out, multiplier, shift, in_zp, out_zp, 0, 256);
  for (int i = 0; i < 256; ++i) table[i] = static_cast<uint8_t>(out[i]);
}

#if DELEGATO_X86
// out = table[in]: two two-register byte permutes cover entries 0..127 and
// 128..255, the input's top bit picks between them.
__attribute__((target("avx512f,avx512bw,avx512vbmi,bmi2"))) void VbmiLookup(
    const uint8_t* table, const uint8_t* in, uint8_t* out, int64_t begin, int64_t end) {
  const __m512i t0 = _mm512_load_si512(table), t1 = _mm512_load_si512(table + 64);
  const __m512i t2 = _mm512_load_si512(table + 128), t3 = _mm512_load_si512(table + 192);
  for (int64_t i = begin; i < end; i += 64) {
    const __mmask64 mask =
        end - i >= 64 ? ~uint64_t{0} : _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(end - i));
    const __m512i x = _mm512_maskz_loadu_epi8(mask, in + i);
    const __m512i low = _mm512_permutex2var_epi8(t0, x, t1);
    const __m512i high = _mm512_permutex2var_epi8(t2, x, t3);
    _mm512_mask_storeu_epi8(out + i, mask,
                            _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), low, high));
  }
}

DLG_TARGET_AVX512 void Avx512Quantize(const QuantizeFloat8& q, const float* in, uint8_t* out,
                                      int64_t begin, int64_t end) {
  const __m512 scale = _mm512_set1_ps(q.scale);
  const __m512 half = _mm512_set1_ps(0.5f);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512i sign_bit = _mm512_set1_epi32(static_cast<int32_t>(0x80000000u));
  const __m512i zp = _mm512_set1_epi32(q.zero_point);
  const __m512i lo = _mm512_set1_epi32(q.out_signed ? -128 : 0);
  const __m512i hi = _mm512_set1_epi32(q.out_signed ? 127 : 255);
  for (int64_t i = begin; i < end; i += 16) {
    const __mmask16 mask =
        static_cast<__mmask16>(end - i >= 16 ? 0xFFFF : (1u << (end - i)) - 1);
    const __m512 x = _mm512_div_ps(_mm512_maskz_loadu_ps(mask, in + i), scale);
    const __m512 t = _mm512_roundscale_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512 diff = _mm512_sub_ps(x, t);
    // |x - t| >= 0.5: move one away from zero (copysign(1, x)).
    const __mmask16 away = _mm512_cmp_ps_mask(_mm512_abs_ps(diff), half, _CMP_GE_OQ);
    const __m512 step = _mm512_castsi512_ps(
        _mm512_or_si512(_mm512_castps_si512(one), _mm512_and_si512(_mm512_castps_si512(x), sign_bit)));
    const __m512 rounded = _mm512_mask_add_ps(t, away, t, step);
    __m512i v = _mm512_cvttps_epi32(rounded);  // out of range / NaN -> INT32_MIN, as on x86
    v = _mm512_add_epi32(v, zp);
    v = _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
    _mm_mask_storeu_epi8(out + i, mask, _mm512_cvtepi32_epi8(v));
  }
}
#endif

}  // namespace

void RequantizeTable8::Build(bool in_signed, bool out_signed, int32_t multiplier, int shift,
                             int32_t in_zp, int32_t out_zp) {
  if (in_signed && out_signed)
    BuildTable<int8_t, int8_t>(table, multiplier, shift, in_zp, out_zp);
  else if (in_signed)
    BuildTable<int8_t, uint8_t>(table, multiplier, shift, in_zp, out_zp);
  else if (out_signed)
    BuildTable<uint8_t, int8_t>(table, multiplier, shift, in_zp, out_zp);
  else
    BuildTable<uint8_t, uint8_t>(table, multiplier, shift, in_zp, out_zp);
#if DELEGATO_X86
  vbmi = SelectedIsa() == Isa::kAvx512Vnni && __builtin_cpu_supports("avx512vbmi");
#endif
}

void RequantizeTable8::Run(const uint8_t* in, uint8_t* out, int64_t begin, int64_t end) const {
#if DELEGATO_X86
  if (vbmi) {
    VbmiLookup(table, in, out, begin, end);
    return;
  }
#endif
  for (int64_t i = begin; i < end; ++i) out[i] = table[in[i]];
}

void QuantizeFloat8::Run(const float* in, uint8_t* out, int64_t begin, int64_t end) const {
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni) {
    Avx512Quantize(*this, in, out, begin, end);
    return;
  }
#endif
  if (out_signed)
    reference::AffineQuantize(scale, zero_point, in, reinterpret_cast<int8_t*>(out), begin, end);
  else
    reference::AffineQuantize(scale, zero_point, in, out, begin, end);
}

}  // namespace delegato::optimized
