#include "kernels/optimized/batch_matmul_float.h"

#include <cstdint>

#if DELEGATO_X86
#include <immintrin.h>
#endif

namespace delegato::optimized {

namespace {

#if DELEGATO_X86
// kRows output rows x kVectors * 8 columns of one matrix product: every
// output sums lhs(m, k) * rhs(k, n) from 0 in ascending k, the vectors
// kept in registers across k (independent sums, so the adds' latency
// overlaps instead of chaining one vector's).
template <int kRows, int kVectors>
DLG_TARGET_AVX2 inline void TileAvx2(int32_t depth, const float* a, int64_t lhs_m, int64_t lhs_k,
                                     const float* b, int64_t cols, float* c) {
  __m256 t[kRows][kVectors];
  for (int r = 0; r < kRows; ++r)
    for (int v = 0; v < kVectors; ++v) t[r][v] = _mm256_setzero_ps();
  for (int32_t k = 0; k < depth; ++k) {
    __m256 bk[kVectors];
    for (int v = 0; v < kVectors; ++v) bk[v] = _mm256_loadu_ps(b + k * cols + 8 * v);
    for (int r = 0; r < kRows; ++r) {
      const __m256 x = _mm256_set1_ps(a[r * lhs_m + k * lhs_k]);
      for (int v = 0; v < kVectors; ++v)
        t[r][v] = _mm256_add_ps(t[r][v], _mm256_mul_ps(bk[v], x));
    }
  }
  for (int r = 0; r < kRows; ++r)
    for (int v = 0; v < kVectors; ++v) _mm256_storeu_ps(c + r * cols + 8 * v, t[r][v]);
}

// Columns [n, n + 8 * kVectors) of every row: 4 rows at a time, then one.
template <int kVectors>
DLG_TARGET_AVX2 inline void ColumnsAvx2(const reference::BatchMatMulGeometry& g, const float* a,
                                        int64_t lhs_m, int64_t lhs_k, const float* b, float* c,
                                        int32_t n) {
  int32_t m = 0;
  for (; m + 4 <= g.rows; m += 4)
    TileAvx2<4, kVectors>(g.depth, a + m * lhs_m, lhs_m, lhs_k, b + n, g.cols,
                          c + static_cast<int64_t>(m) * g.cols + n);
  for (; m < g.rows; ++m)
    TileAvx2<1, kVectors>(g.depth, a + m * lhs_m, lhs_m, lhs_k, b + n, g.cols,
                          c + static_cast<int64_t>(m) * g.cols + n);
}

// One lhs matrix times one rhs matrix stored [k][n] with row stride `cols`.
DLG_TARGET_AVX2 void MatrixAvx2(const reference::BatchMatMulGeometry& g, const float* a,
                                int64_t lhs_m, int64_t lhs_k, const float* b, float* c) {
  const int32_t cols = g.cols;
  int32_t n = 0;
  for (; n + 16 <= cols; n += 16) ColumnsAvx2<2>(g, a, lhs_m, lhs_k, b, c, n);
  for (; n + 8 <= cols; n += 8) ColumnsAvx2<1>(g, a, lhs_m, lhs_k, b, c, n);
  for (; n < cols; ++n) {
    for (int32_t m = 0; m < g.rows; ++m) {
      const float* am = a + m * lhs_m;
      float total = 0;
      for (int32_t k = 0; k < g.depth; ++k)
        total += b[static_cast<int64_t>(k) * cols + n] * am[k * lhs_k];
      c[static_cast<int64_t>(m) * cols + n] = total;
    }
  }
}
#endif

}  // namespace

bool BatchMatMulFloatVectorized(Isa isa) {
  return DELEGATO_X86 && (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni);
}

size_t BatchMatMulFloatScratchBytes(const reference::BatchMatMulGeometry& g) {
  return g.adj_y ? sizeof(float) * static_cast<size_t>(g.depth) * g.cols : 0;
}

void BatchMatMulFloat(Isa isa, const reference::BatchMatMulGeometry& g, const float* lhs,
                      const float* rhs, float* out, float* scratch) {
#if DELEGATO_X86
  if (BatchMatMulFloatVectorized(isa)) {
    const int64_t lhs_m = g.adj_x ? 1 : g.depth, lhs_k = g.adj_x ? g.rows : 1;
    reference::ForEachBatchMatrix(g, [&](int64_t l, int64_t r, int64_t o) {
      const float* b = rhs + r;
      if (g.adj_y) {  // [n][k] -> [k][n]
        for (int32_t n = 0; n < g.cols; ++n)
          for (int32_t k = 0; k < g.depth; ++k)
            scratch[static_cast<int64_t>(k) * g.cols + n] = b[static_cast<int64_t>(n) * g.depth + k];
        b = scratch;
      }
      MatrixAvx2(g, lhs + l, lhs_m, lhs_k, b, out + o);
    });
    return;
  }
#endif
  (void)isa;
  (void)scratch;
  reference::BatchMatMulFloat(g, lhs, rhs, out);
}

}  // namespace delegato::optimized
