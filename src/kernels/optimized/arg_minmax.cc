#include "kernels/optimized/arg_minmax.h"

#include <algorithm>

#if DELEGATO_X86
#include <immintrin.h>
#endif

// GCC 12 reports false "may be used uninitialized" warnings from inside its
// own AVX-512 intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace delegato::optimized {
namespace {

// The byte transform that turns the wanted extreme into an unsigned maximum.
inline uint8_t OrderKey(const ArgMinMax8& k) {
  return static_cast<uint8_t>((k.is_signed ? 0x80 : 0x00) ^ (k.is_max ? 0x00 : 0xFF));
}

template <class Index>
void ScalarRows(const ArgMinMax8& k, const uint8_t* input, Index* output, int64_t begin,
                int64_t end) {
  const uint8_t key = OrderKey(k);
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = input + r * k.axis_size;
    uint8_t best = row[0] ^ key;
    Index best_index = 0;
    for (int64_t a = 1; a < k.axis_size; ++a) {
      const uint8_t v = row[a] ^ key;
      if (v > best) {
        best = v;
        best_index = static_cast<Index>(a);
      }
    }
    output[r] = best_index;
  }
}

#if DELEGATO_X86
template <class Index>
DLG_TARGET_AVX512 void Avx512Rows(const ArgMinMax8& k, const uint8_t* input, Index* output,
                                  int64_t begin, int64_t end) {
  const __mmask64 valid = _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(k.axis_size));
  const __m512i key = _mm512_set1_epi8(static_cast<char>(OrderKey(k)));
  for (int64_t r = begin; r < end; ++r) {
    // Lanes past the row read as key ^ key = 0, the unsigned minimum.
    const __m512i v =
        _mm512_xor_si512(_mm512_mask_loadu_epi8(key, valid, input + r * k.axis_size), key);
    __m512i m = _mm512_max_epu8(v, _mm512_shuffle_i64x2(v, v, 0x4E));
    m = _mm512_max_epu8(m, _mm512_shuffle_i64x2(m, m, 0xB1));
    m = _mm512_max_epu8(m, _mm512_shuffle_epi32(m, _MM_PERM_BADC));
    m = _mm512_max_epu8(m, _mm512_shuffle_epi32(m, _MM_PERM_CDAB));
    m = _mm512_max_epu8(m, _mm512_srli_epi32(m, 16));
    m = _mm512_max_epu8(m, _mm512_srli_epi16(m, 8));
    const __m512i best = _mm512_broadcastb_epi8(_mm512_castsi512_si128(m));
    const __mmask64 hits = _mm512_cmpeq_epi8_mask(v, best) & valid;
    output[r] = static_cast<Index>(__builtin_ctzll(hits));  // hits != 0: the maximum is in the row
  }
}

// Each channel becomes the 16-bit key (order byte << 8) | channel with the
// order byte inverted, so the smallest key is the wanted extreme at its
// first position; phminposuw reduces 8 keys. Chunks of 8 channels start at
// 0, 8, ... and the last one at axis_size - 8 (overlaps repeat keys, which
// does not change the minimum). Needs axis_size >= 8.
DLG_TARGET_AVX2 inline __m128i Avx2Keys(const uint8_t* p, __m128i key, __m128i index) {
  const __m128i v = _mm_xor_si128(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), key);
  return _mm_unpacklo_epi8(index, v);
}

template <class Index>
DLG_TARGET_AVX2 void Avx2Rows(const ArgMinMax8& k, const uint8_t* input, Index* output,
                              int64_t begin, int64_t end) {
  const int64_t n = k.axis_size;
  const __m128i key = _mm_set1_epi8(static_cast<char>(OrderKey(k) ^ 0xFF));
  const __m128i lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0);
  const int64_t chunks = (n + 7) / 8;
  __m128i index[8];
  for (int64_t j = 0; j < chunks; ++j) {
    const int64_t offset = std::min<int64_t>(8 * j, n - 8);
    index[j] = _mm_add_epi8(lane, _mm_set1_epi8(static_cast<char>(offset)));
  }
  const int64_t last = n - 8;
  if (chunks == 3) {  // 16 < n <= 24 (segmentation maps), unrolled
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* row = input + r * n;
      const __m128i m = _mm_min_epu16(
          _mm_min_epu16(Avx2Keys(row, key, index[0]), Avx2Keys(row + 8, key, index[1])),
          Avx2Keys(row + last, key, index[2]));
      output[r] = static_cast<Index>(_mm_cvtsi128_si32(_mm_minpos_epu16(m)) & 0xFF);
    }
    return;
  }
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = input + r * n;
    __m128i m = Avx2Keys(row, key, index[0]);
    for (int64_t j = 1; j < chunks; ++j)
      m = _mm_min_epu16(m, Avx2Keys(row + std::min(8 * j, last), key, index[j]));
    output[r] = static_cast<Index>(_mm_cvtsi128_si32(_mm_minpos_epu16(m)) & 0xFF);
  }
}
#endif

}  // namespace

void ArgMinMax8::Run(const uint8_t* input, void* output, int64_t begin, int64_t end) const {
#if DELEGATO_X86
  // phminposuw over 8-class chunks beats the 512-bit folds for up to 4
  // chunks (DeepLab's 21 classes: 0.27 vs 0.81 ms for 513x513 pixels).
  const bool avx2_keys = axis_size >= 8 && (isa == Isa::kAvx2 || (isa == Isa::kAvx512Vnni &&
                                                                   axis_size <= 32));
  if (isa == Isa::kAvx512Vnni && !avx2_keys) {
    if (index64)
      Avx512Rows(*this, input, static_cast<int64_t*>(output), begin, end);
    else
      Avx512Rows(*this, input, static_cast<int32_t*>(output), begin, end);
    return;
  }
  if (avx2_keys) {
    if (index64)
      Avx2Rows(*this, input, static_cast<int64_t*>(output), begin, end);
    else
      Avx2Rows(*this, input, static_cast<int32_t*>(output), begin, end);
    return;
  }
#endif
  if (index64)
    ScalarRows(*this, input, static_cast<int64_t*>(output), begin, end);
  else
    ScalarRows(*this, input, static_cast<int32_t*>(output), begin, end);
}

}  // namespace delegato::optimized
