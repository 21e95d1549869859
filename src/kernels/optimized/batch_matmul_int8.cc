#include "kernels/optimized/batch_matmul_int8.h"

#include "kernels/optimized/requantize.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif

// GCC 12's AVX-512 intrinsics pass an undefined vector through an all-ones
// mask, which it then reports as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace delegato::optimized {

namespace {

int32_t PaddedCols(int32_t cols) { return (cols + 15) / 16 * 16; }

// w[k][n] = rhs(k, n) + rhs_offset, zero beyond cols.
void WidenRhs(const reference::BatchMatMulGeometry& g, int32_t rhs_offset, const int8_t* rhs,
              int32_t* w) {
  const int32_t padded = PaddedCols(g.cols);
  const int64_t rhs_k = g.adj_y ? 1 : g.cols, rhs_n = g.adj_y ? g.depth : 1;
  for (int32_t k = 0; k < g.depth; ++k) {
    int32_t* row = w + int64_t{k} * padded;
    for (int32_t n = 0; n < g.cols; ++n)
      row[n] = int32_t{rhs[k * rhs_k + n * rhs_n]} + rhs_offset;
    for (int32_t n = g.cols; n < padded; ++n) row[n] = 0;
  }
}

#if DELEGATO_X86

DLG_TARGET_AVX512 void Avx512Matrix(const reference::BatchMatMulGeometry& g,
                                    const reference::BatchMatMulQuantParams& q,
                                    const int8_t* a, const int32_t* w, int8_t* c) {
  const int32_t padded = PaddedCols(g.cols);
  const int64_t lhs_m = g.adj_x ? 1 : g.depth, lhs_k = g.adj_x ? g.rows : 1;
  const Requant512 rq = BroadcastRequant512(q.multiplier, q.shift);
  const __m512i lo = _mm512_set1_epi32(q.act_min - q.output_offset),
                hi = _mm512_set1_epi32(q.act_max - q.output_offset),
                offset = _mm512_set1_epi32(q.output_offset);
  for (int32_t m = 0; m < g.rows; ++m) {
    for (int32_t n0 = 0; n0 < g.cols; n0 += 16) {
      __m512i acc = _mm512_setzero_si512();
      for (int32_t k = 0; k < g.depth; ++k) {
        const __m512i x = _mm512_set1_epi32(int32_t{a[m * lhs_m + k * lhs_k]} + q.lhs_offset);
        acc = _mm512_add_epi32(
            acc, _mm512_mullo_epi32(x, _mm512_loadu_si512(w + int64_t{k} * padded + n0)));
      }
      const int left = g.cols - n0 < 16 ? g.cols - n0 : 16;
      const __mmask16 mask = static_cast<__mmask16>((1u << left) - 1);
      _mm512_mask_cvtepi32_storeu_epi8(c + int64_t{m} * g.cols + n0, mask,
                                       Requantize512(acc, rq, lo, hi, offset));
    }
  }
}

DLG_TARGET_AVX2 void Avx2Matrix(const reference::BatchMatMulGeometry& g,
                                const reference::BatchMatMulQuantParams& q, const int8_t* a,
                                const int32_t* w, int8_t* c) {
  const int32_t padded = PaddedCols(g.cols);
  const int64_t lhs_m = g.adj_x ? 1 : g.depth, lhs_k = g.adj_x ? g.rows : 1;
  const Requant256 rq = BroadcastRequant256(q.multiplier, q.shift);
  const __m256i lo = _mm256_set1_epi32(q.act_min - q.output_offset),
                hi = _mm256_set1_epi32(q.act_max - q.output_offset),
                offset = _mm256_set1_epi32(q.output_offset);
  for (int32_t m = 0; m < g.rows; ++m) {
    for (int32_t n0 = 0; n0 < g.cols; n0 += 8) {
      __m256i acc = _mm256_setzero_si256();
      for (int32_t k = 0; k < g.depth; ++k) {
        const __m256i x = _mm256_set1_epi32(int32_t{a[m * lhs_m + k * lhs_k]} + q.lhs_offset);
        acc = _mm256_add_epi32(
            acc, _mm256_mullo_epi32(x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                                           w + int64_t{k} * padded + n0))));
      }
      alignas(32) int32_t lanes[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                         Requantize256(acc, rq, lo, hi, offset));
      const int left = g.cols - n0 < 8 ? g.cols - n0 : 8;
      for (int i = 0; i < left; ++i)
        c[int64_t{m} * g.cols + n0 + i] = static_cast<int8_t>(lanes[i]);
    }
  }
}

#endif  // DELEGATO_X86

}  // namespace

bool BatchMatMulInt8Vectorized(Isa isa) {
#if DELEGATO_X86
  return isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni;
#else
  (void)isa;
  return false;
#endif
}

size_t BatchMatMulInt8ScratchBytes(const reference::BatchMatMulGeometry& g) {
  return static_cast<size_t>(g.depth) * PaddedCols(g.cols) * sizeof(int32_t);
}

void BatchMatMulInt8(Isa isa, const reference::BatchMatMulGeometry& g,
                     const reference::BatchMatMulQuantParams& q, const int8_t* lhs,
                     const int8_t* rhs, int8_t* out, int32_t* scratch) {
#if DELEGATO_X86
  if (BatchMatMulInt8Vectorized(isa)) {
    reference::ForEachBatchMatrix(g, [&](int64_t l, int64_t r, int64_t o) {
      WidenRhs(g, q.rhs_offset, rhs + r, scratch);
      if (isa == Isa::kAvx512Vnni)
        Avx512Matrix(g, q, lhs + l, scratch, out + o);
      else
        Avx2Matrix(g, q, lhs + l, scratch, out + o);
    });
    return;
  }
#endif
  (void)scratch;
  reference::BatchMatMulQuantized<int8_t, int32_t>(g, q, lhs, rhs, out);
}

}  // namespace delegato::optimized
