#include "kernels/optimized/activations16.h"

#include <array>

#if DELEGATO_X86
#include <immintrin.h>
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

}  // namespace

bool Int16SigmoidTanhCovers(Isa isa) { return isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni; }

void Int16SigmoidTanh(bool tanh, const reference::Int16ActivationParams& p, const int16_t* in,
                      int16_t* out, int64_t begin, int64_t end) {
  int64_t vector_end = begin;
#if DELEGATO_X86
  int32_t multiplier, shift;
  reference::detail::EffectiveInt16Params(p, &multiplier, &shift);
  const int64_t n = (end - begin) / 8 * 8;
  if (tanh)
    Run<true>(multiplier, shift, in + begin, out + begin, n);
  else
    Run<false>(multiplier, shift, in + begin, out + begin, n);
  vector_end = begin + n;
#endif
  if (tanh)
    reference::TanhInt16(p, in, out, vector_end, end);
  else
    reference::LogisticInt16(p, in, out, vector_end, end);
}

}  // namespace delegato::optimized
