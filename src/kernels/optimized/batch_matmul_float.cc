#include "kernels/optimized/batch_matmul_float.h"

#include <cstdint>

#if DELEGATO_X86
#include <immintrin.h>
#endif

namespace delegato::optimized {

namespace {

#if DELEGATO_X86
// One lhs matrix times one rhs matrix stored [k][n] with row stride `cols`.
DLG_TARGET_AVX2 void MatrixAvx2(const reference::BatchMatMulGeometry& g, const float* a,
                                int64_t lhs_m, int64_t lhs_k, const float* b, float* c) {
  const int32_t cols = g.cols;
  for (int32_t m = 0; m < g.rows; ++m) {
    const float* am = a + m * lhs_m;
    float* cm = c + static_cast<int64_t>(m) * cols;
    int32_t n = 0;
    for (; n + 32 <= cols; n += 32) {
      __m256 t0 = _mm256_setzero_ps(), t1 = t0, t2 = t0, t3 = t0;
      for (int32_t k = 0; k < g.depth; ++k) {
        const __m256 x = _mm256_set1_ps(am[k * lhs_k]);
        const float* bk = b + static_cast<int64_t>(k) * cols + n;
        t0 = _mm256_add_ps(t0, _mm256_mul_ps(_mm256_loadu_ps(bk), x));
        t1 = _mm256_add_ps(t1, _mm256_mul_ps(_mm256_loadu_ps(bk + 8), x));
        t2 = _mm256_add_ps(t2, _mm256_mul_ps(_mm256_loadu_ps(bk + 16), x));
        t3 = _mm256_add_ps(t3, _mm256_mul_ps(_mm256_loadu_ps(bk + 24), x));
      }
      _mm256_storeu_ps(cm + n, t0);
      _mm256_storeu_ps(cm + n + 8, t1);
      _mm256_storeu_ps(cm + n + 16, t2);
      _mm256_storeu_ps(cm + n + 24, t3);
    }
    for (; n + 8 <= cols; n += 8) {
      __m256 t = _mm256_setzero_ps();
      for (int32_t k = 0; k < g.depth; ++k)
        t = _mm256_add_ps(
            t, _mm256_mul_ps(_mm256_loadu_ps(b + static_cast<int64_t>(k) * cols + n),
                             _mm256_set1_ps(am[k * lhs_k])));
      _mm256_storeu_ps(cm + n, t);
    }
    for (; n < cols; ++n) {
      float total = 0;
      for (int32_t k = 0; k < g.depth; ++k)
        total += b[static_cast<int64_t>(k) * cols + n] * am[k * lhs_k];
      cm[n] = total;
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
