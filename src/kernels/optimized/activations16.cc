#include "kernels/optimized/activations16.h"

#include <array>

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

namespace delegato::optimized {

namespace {

// Entry i and entry i + 1 (i < 255) of the reference's table, low and high
// 16 bits: one gather fetches both.
constexpr std::array<int32_t, 256> MakePairTable() {
  std::array<int32_t, 256> pairs{};
  const std::array<uint16_t, 256>& t = reference::kSigmoidTable16;
  for (int i = 0; i < 256; ++i)
    pairs[i] = static_cast<int32_t>(uint32_t{t[i]} | (uint32_t{t[i < 255 ? i + 1 : i]} << 16));
  return pairs;
}
constexpr std::array<int32_t, 256> kPairTable = MakePairTable();

#if DELEGATO_X86
// kTanh: 2^8 input steps per entry (else 2^9), the reference's final steps
// for TANH (else LOGISTIC).
template <bool kTanh>
DLG_TARGET_AVX2 void Run(int32_t multiplier, int32_t shift, const int16_t* in, int16_t* out,
                         int64_t n) {
  constexpr int kBits = kTanh ? 8 : 9;
  const __m256i vm = _mm256_set1_epi32(multiplier);
  const __m256i round = _mm256_set1_epi32(shift > 0 ? 1 << (shift - 1) : 0);
  const __m128i count = _mm_cvtsi32_si128(shift);
  const __m256i last = _mm256_set1_epi32(254);
  const __m256i low16 = _mm256_set1_epi32(0xFFFF);
  const __m256i frac_mask = _mm256_set1_epi32((1 << kBits) - 1);
  const __m256i saturated = _mm256_set1_epi32(kTanh ? 0xFFFF << 8 : 0x7FFF << 10);
  const __m256i zero = _mm256_setzero_si256();
  for (int64_t i = 0; i + 8 <= n; i += 8) {
    __m256i x = _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    x = _mm256_sra_epi32(_mm256_add_epi32(_mm256_mullo_epi32(x, vm), round), count);
    const __m256i magnitude = _mm256_abs_epi32(x);
    const __m256i index = _mm256_srli_epi32(magnitude, kBits);
    const __m256i beyond = _mm256_cmpgt_epi32(index, last);  // index >= 255
    const __m256i pair = _mm256_i32gather_epi32(kPairTable.data(), _mm256_min_epi32(index, last), 4);
    const __m256i a = _mm256_and_si256(pair, low16);
    const __m256i b = _mm256_srli_epi32(pair, 16);
    __m256i r = _mm256_add_epi32(
        _mm256_slli_epi32(a, kBits),
        _mm256_mullo_epi32(_mm256_and_si256(magnitude, frac_mask), _mm256_sub_epi32(b, a)));
    r = _mm256_blendv_epi8(r, saturated, beyond);
    const __m256i negative = _mm256_cmpgt_epi32(zero, x);
    __m256i y;
    if constexpr (kTanh) {
      const __m256i pos = _mm256_add_epi32(r, _mm256_set1_epi32(-(1 << 23) + (1 << 7)));
      const __m256i neg = _mm256_sub_epi32(_mm256_set1_epi32((1 << 23) + (1 << 7) - 1), r);
      y = _mm256_srai_epi32(_mm256_blendv_epi8(pos, neg, negative), 8);
    } else {
      const __m256i pos = _mm256_add_epi32(r, _mm256_set1_epi32(1 << 9));
      const __m256i neg = _mm256_sub_epi32(_mm256_set1_epi32((1 << 25) + (1 << 9) - 1), r);
      y = _mm256_srli_epi32(_mm256_blendv_epi8(pos, neg, negative), 10);
    }
    // Every y lies in [-32767, 32767]: the saturating pack is exact.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm_packs_epi32(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1)));
  }
}
#endif

#if DELEGATO_X86
// The same steps 16 lanes at a time (AVX-512).
template <bool kTanh>
DLG_TARGET_AVX512 void Run512(int32_t multiplier, int32_t shift, const int16_t* in, int16_t* out,
                              int64_t n) {
  constexpr int kBits = kTanh ? 8 : 9;
  const __m512i vm = _mm512_set1_epi32(multiplier);
  const __m512i round = _mm512_set1_epi32(shift > 0 ? 1 << (shift - 1) : 0);
  const __m128i count = _mm_cvtsi32_si128(shift);
  const __m512i last = _mm512_set1_epi32(254);
  const __m512i low16 = _mm512_set1_epi32(0xFFFF);
  const __m512i frac_mask = _mm512_set1_epi32((1 << kBits) - 1);
  const __m512i saturated = _mm512_set1_epi32(kTanh ? 0xFFFF << 8 : 0x7FFF << 10);
  const __m512i zero = _mm512_setzero_si512();
  for (int64_t i = 0; i + 16 <= n; i += 16) {
    __m512i x = _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)));
    x = _mm512_sra_epi32(_mm512_add_epi32(_mm512_mullo_epi32(x, vm), round), count);
    const __m512i magnitude = _mm512_abs_epi32(x);
    const __m512i index = _mm512_srli_epi32(magnitude, kBits);
    const __mmask16 beyond = _mm512_cmpgt_epi32_mask(index, last);  // index >= 255
    const __m512i pair =
        _mm512_i32gather_epi32(_mm512_min_epi32(index, last), kPairTable.data(), 4);
    const __m512i a = _mm512_and_si512(pair, low16);
    const __m512i b = _mm512_srli_epi32(pair, 16);
    __m512i r = _mm512_add_epi32(
        _mm512_slli_epi32(a, kBits),
        _mm512_mullo_epi32(_mm512_and_si512(magnitude, frac_mask), _mm512_sub_epi32(b, a)));
    r = _mm512_mask_blend_epi32(beyond, r, saturated);
    const __mmask16 negative = _mm512_cmplt_epi32_mask(x, zero);
    __m512i y;
    if constexpr (kTanh) {
      const __m512i pos = _mm512_add_epi32(r, _mm512_set1_epi32(-(1 << 23) + (1 << 7)));
      const __m512i neg = _mm512_sub_epi32(_mm512_set1_epi32((1 << 23) + (1 << 7) - 1), r);
      y = _mm512_srai_epi32(_mm512_mask_blend_epi32(negative, pos, neg), 8);
    } else {
      const __m512i pos = _mm512_add_epi32(r, _mm512_set1_epi32(1 << 9));
      const __m512i neg = _mm512_sub_epi32(_mm512_set1_epi32((1 << 25) + (1 << 9) - 1), r);
      y = _mm512_srli_epi32(_mm512_mask_blend_epi32(negative, pos, neg), 10);
    }
    // Every y lies in [-32767, 32767]: the saturating narrow is exact.
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtsepi32_epi16(y));
  }
}
#endif

#if DELEGATO_ARM
// The same steps on aarch64, 4 lanes per int32x4; NEON has no gather, so the
// pair is read lane by lane.
template <bool kTanh>
void RunNeon(int32_t multiplier, int32_t shift, const int16_t* in, int16_t* out, int64_t n) {
  constexpr int kBits = kTanh ? 8 : 9;
  const int32x4_t vm = vdupq_n_s32(multiplier);
  const int32x4_t round = vdupq_n_s32(shift > 0 ? 1 << (shift - 1) : 0);
  const int32x4_t minus_shift = vdupq_n_s32(-shift);
  const uint32x4_t last = vdupq_n_u32(254);
  const uint32x4_t low16 = vdupq_n_u32(0xFFFF);
  const uint32x4_t frac_mask = vdupq_n_u32((1u << kBits) - 1);
  const int32x4_t saturated = vdupq_n_s32(kTanh ? 0xFFFF << 8 : 0x7FFF << 10);
  for (int64_t i = 0; i + 8 <= n; i += 8) {
    const int16x8_t v = vld1q_s16(in + i);
    int32x4_t y[2];
    for (int h = 0; h < 2; ++h) {
      int32x4_t x = h == 0 ? vmovl_s16(vget_low_s16(v)) : vmovl_high_s16(v);
      x = vshlq_s32(vaddq_s32(vmulq_s32(x, vm), round), minus_shift);  // arithmetic
      const uint32x4_t magnitude = vreinterpretq_u32_s32(vabsq_s32(x));
      const uint32x4_t index = vshrq_n_u32(magnitude, kBits);
      const uint32x4_t beyond = vcgtq_u32(index, last);  // index >= 255
      const uint32x4_t clamped = vminq_u32(index, last);
      uint32x4_t pair = vdupq_n_u32(0);
      pair = vsetq_lane_u32(static_cast<uint32_t>(kPairTable[vgetq_lane_u32(clamped, 0)]), pair, 0);
      pair = vsetq_lane_u32(static_cast<uint32_t>(kPairTable[vgetq_lane_u32(clamped, 1)]), pair, 1);
      pair = vsetq_lane_u32(static_cast<uint32_t>(kPairTable[vgetq_lane_u32(clamped, 2)]), pair, 2);
      pair = vsetq_lane_u32(static_cast<uint32_t>(kPairTable[vgetq_lane_u32(clamped, 3)]), pair, 3);
      const int32x4_t a = vreinterpretq_s32_u32(vandq_u32(pair, low16));
      const int32x4_t b = vreinterpretq_s32_u32(vshrq_n_u32(pair, 16));
      int32x4_t r = vaddq_s32(
          vshlq_n_s32(a, kBits),
          vmulq_s32(vreinterpretq_s32_u32(vandq_u32(magnitude, frac_mask)), vsubq_s32(b, a)));
      r = vbslq_s32(beyond, saturated, r);
      const uint32x4_t negative = vcltzq_s32(x);
      if constexpr (kTanh) {
        const int32x4_t pos = vaddq_s32(r, vdupq_n_s32(-(1 << 23) + (1 << 7)));
        const int32x4_t neg = vsubq_s32(vdupq_n_s32((1 << 23) + (1 << 7) - 1), r);
        y[h] = vshrq_n_s32(vbslq_s32(negative, neg, pos), 8);
      } else {
        const int32x4_t pos = vaddq_s32(r, vdupq_n_s32(1 << 9));
        const int32x4_t neg = vsubq_s32(vdupq_n_s32((1 << 25) + (1 << 9) - 1), r);
        y[h] = vreinterpretq_s32_u32(
            vshrq_n_u32(vreinterpretq_u32_s32(vbslq_s32(negative, neg, pos)), 10));
      }
    }
    // Every y lies in [-32767, 32767]: the saturating narrow is exact.
    vst1q_s16(out + i, vqmovn_high_s32(vqmovn_s32(y[0]), y[1]));
  }
}
#endif

}  // namespace

bool Int16SigmoidTanhCovers(Isa isa) {
  return isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni || IsArmIsa(isa);
}

void Int16SigmoidTanh(Isa isa, bool tanh, const reference::Int16ActivationParams& p,
                      const int16_t* in, int16_t* out, int64_t begin, int64_t end) {
  int64_t vector_end = begin;
#if DELEGATO_X86 || DELEGATO_ARM
  int32_t multiplier, shift;
  reference::detail::EffectiveInt16Params(p, &multiplier, &shift);
  using RunFn = void (*)(int32_t, int32_t, const int16_t*, int16_t*, int64_t);
#if DELEGATO_X86
  const bool wide = isa == Isa::kAvx512Vnni;
  const int64_t lanes = wide ? 16 : 8;
  const RunFn run = wide ? (tanh ? Run512<true> : Run512<false>) : (tanh ? Run<true> : Run<false>);
#else
  (void)isa;
  const int64_t lanes = 8;
  const RunFn run = tanh ? RunNeon<true> : RunNeon<false>;
#endif
  const int64_t n = (end - begin) / lanes * lanes;
  run(multiplier, shift, in + begin, out + begin, n);
  vector_end = begin + n;
#else
  (void)isa;
#endif
  if (tanh)
    reference::TanhInt16(p, in, out, vector_end, end);
  else
    reference::LogisticInt16(p, in, out, vector_end, end);
}

}  // namespace delegato::optimized
