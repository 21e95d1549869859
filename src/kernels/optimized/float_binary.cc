#include "kernels/optimized/float_binary.h"

#include <algorithm>

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

#include "kernels/optimized/neon_clamp.h"

// GCC 12's AVX-512 min/max intrinsics pass an undefined vector through an
// all-ones mask, which it then reports as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace delegato::optimized {

namespace {

using reference::BinaryOp;

// One innermost run: out[k] = clamp(a[k * sa] op b[k * sb]), sa and sb 0 or 1.
using RunFn = void (*)(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb,
                       float* out, int64_t n, float lo, float hi);
// `rows` runs of n: row r reads a + r * a_row and b + r * b_row (0: the same
// values for every row, e.g. a per-channel scale), each with stride sa / sb
// (1, or 0: one value for the run, e.g. a layer norm's per-row mean), and
// writes out + r * n. Short runs (a few channels per pixel) then cost no call
// each.
using RowsFn = void (*)(BinaryOp op, const float* a, int64_t sa, int64_t a_row, const float* b,
                        int64_t sb, int64_t b_row, float* out, int64_t rows, int64_t n, float lo,
                        float hi);

#if DELEGATO_X86
template <BinaryOp kOp>
DLG_TARGET_AVX512 inline __m512 Op512(__m512 x, __m512 y) {
  if constexpr (kOp == BinaryOp::kAdd) return _mm512_add_ps(x, y);
  if constexpr (kOp == BinaryOp::kSub) return _mm512_sub_ps(x, y);
  if constexpr (kOp == BinaryOp::kMul) return _mm512_mul_ps(x, y);
  if constexpr (kOp == BinaryOp::kSquaredDifference) {
    const __m512 d = _mm512_sub_ps(x, y);
    return _mm512_mul_ps(d, d);
  }
  return _mm512_div_ps(x, y);
}

template <BinaryOp kOp>
DLG_TARGET_AVX512 void Run512T(const float* a, int64_t sa, const float* b, int64_t sb, float* out,
                               int64_t n, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const __m512 a0 = _mm512_set1_ps(a[0]), b0 = _mm512_set1_ps(b[0]);
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    const __m512 x = sa ? _mm512_loadu_ps(a + k) : a0;
    const __m512 y = sb ? _mm512_loadu_ps(b + k) : b0;
    _mm512_storeu_ps(out + k, _mm512_min_ps(vhi, _mm512_max_ps(vlo, Op512<kOp>(x, y))));
  }
  if (k < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - k)) - 1);
    // Masked-off lanes compute on 1s (no faults, no effect).
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 x = sa ? _mm512_mask_loadu_ps(one, m, a + k) : a0;
    const __m512 y = sb ? _mm512_mask_loadu_ps(one, m, b + k) : b0;
    _mm512_mask_storeu_ps(out + k, m, _mm512_min_ps(vhi, _mm512_max_ps(vlo, Op512<kOp>(x, y))));
  }
}

DLG_TARGET_AVX512 void Run512(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb,
                              float* out, int64_t n, float lo, float hi) {
  switch (op) {
    case BinaryOp::kAdd: return Run512T<BinaryOp::kAdd>(a, sa, b, sb, out, n, lo, hi);
    case BinaryOp::kSub: return Run512T<BinaryOp::kSub>(a, sa, b, sb, out, n, lo, hi);
    case BinaryOp::kMul: return Run512T<BinaryOp::kMul>(a, sa, b, sb, out, n, lo, hi);
    case BinaryOp::kSquaredDifference: return
        Run512T<BinaryOp::kSquaredDifference>(a, sa, b, sb, out, n, lo, hi);
    default: return Run512T<BinaryOp::kDiv>(a, sa, b, sb, out, n, lo, hi);
  }
}

template <BinaryOp kOp>
DLG_TARGET_AVX512 void Rows512T(const float* a, int64_t sa, int64_t a_row, const float* b,
                                 int64_t sb, int64_t b_row, float* out, int64_t rows, int64_t n,
                                 float lo, float hi) {
  for (int64_t r = 0; r < rows; ++r)
    Run512T<kOp>(a + r * a_row, sa, b + r * b_row, sb, out + r * n, n, lo, hi);
}

DLG_TARGET_AVX512 void Rows512(BinaryOp op, const float* a, int64_t sa, int64_t a_row,
                              const float* b, int64_t sb, int64_t b_row, float* out, int64_t rows,
                              int64_t n, float lo, float hi) {
  using Fn = void (*)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*,
                     int64_t, int64_t, float, float);
  Fn rows_t = Rows512T<BinaryOp::kDiv>;
  switch (op) {
    case BinaryOp::kAdd: rows_t = Rows512T<BinaryOp::kAdd>; break;
    case BinaryOp::kSub: rows_t = Rows512T<BinaryOp::kSub>; break;
    case BinaryOp::kMul: rows_t = Rows512T<BinaryOp::kMul>; break;
    case BinaryOp::kSquaredDifference: rows_t = Rows512T<BinaryOp::kSquaredDifference>; break;
    default: break;
  }
  rows_t(a, sa, a_row, b, sb, b_row, out, rows, n, lo, hi);
}

template <BinaryOp kOp>
DLG_TARGET_AVX2 inline __m256 Op256(__m256 x, __m256 y) {
  if constexpr (kOp == BinaryOp::kAdd) return _mm256_add_ps(x, y);
  if constexpr (kOp == BinaryOp::kSub) return _mm256_sub_ps(x, y);
  if constexpr (kOp == BinaryOp::kMul) return _mm256_mul_ps(x, y);
  if constexpr (kOp == BinaryOp::kSquaredDifference) {
    const __m256 d = _mm256_sub_ps(x, y);
    return _mm256_mul_ps(d, d);
  }
  return _mm256_div_ps(x, y);
}

template <BinaryOp kOp>
DLG_TARGET_AVX2 void Run256T(const float* a, int64_t sa, const float* b, int64_t sb, float* out,
                             int64_t n, float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const __m256 a0 = _mm256_set1_ps(a[0]), b0 = _mm256_set1_ps(b[0]);
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256 x = sa ? _mm256_loadu_ps(a + k) : a0;
    const __m256 y = sb ? _mm256_loadu_ps(b + k) : b0;
    _mm256_storeu_ps(out + k, _mm256_min_ps(vhi, _mm256_max_ps(vlo, Op256<kOp>(x, y))));
  }
  for (; k < n; ++k) {
    const __m128 x = _mm_set_ss(a[k * sa]), y = _mm_set_ss(b[k * sb]);
    __m128 r;
    if constexpr (kOp == BinaryOp::kAdd) r = _mm_add_ss(x, y);
    else if constexpr (kOp == BinaryOp::kSub) r = _mm_sub_ss(x, y);
    else if constexpr (kOp == BinaryOp::kMul) r = _mm_mul_ss(x, y);
    else if constexpr (kOp == BinaryOp::kSquaredDifference)
      r = _mm_mul_ss(_mm_sub_ss(x, y), _mm_sub_ss(x, y));
    else r = _mm_div_ss(x, y);
    out[k] = _mm_cvtss_f32(_mm_min_ss(_mm_set_ss(hi), _mm_max_ss(_mm_set_ss(lo), r)));
  }
}

DLG_TARGET_AVX2 void Run256(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb,
                            float* out, int64_t n, float lo, float hi) {
  switch (op) {
    case BinaryOp::kAdd: return Run256T<BinaryOp::kAdd>(a, sa, b, sb, out, n, lo, hi);
    case BinaryOp::kSub: return Run256T<BinaryOp::kSub>(a, sa, b, sb, out, n, lo, hi);
    case BinaryOp::kMul: return Run256T<BinaryOp::kMul>(a, sa, b, sb, out, n, lo, hi);
    case BinaryOp::kSquaredDifference: return
        Run256T<BinaryOp::kSquaredDifference>(a, sa, b, sb, out, n, lo, hi);
    default: return Run256T<BinaryOp::kDiv>(a, sa, b, sb, out, n, lo, hi);
  }
}

template <BinaryOp kOp>
DLG_TARGET_AVX2 void Rows256T(const float* a, int64_t sa, int64_t a_row, const float* b,
                               int64_t sb, int64_t b_row, float* out, int64_t rows, int64_t n,
                               float lo, float hi) {
  for (int64_t r = 0; r < rows; ++r)
    Run256T<kOp>(a + r * a_row, sa, b + r * b_row, sb, out + r * n, n, lo, hi);
}

DLG_TARGET_AVX2 void Rows256(BinaryOp op, const float* a, int64_t sa, int64_t a_row,
                            const float* b, int64_t sb, int64_t b_row, float* out, int64_t rows,
                            int64_t n, float lo, float hi) {
  using Fn = void (*)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*,
                     int64_t, int64_t, float, float);
  Fn rows_t = Rows256T<BinaryOp::kDiv>;
  switch (op) {
    case BinaryOp::kAdd: rows_t = Rows256T<BinaryOp::kAdd>; break;
    case BinaryOp::kSub: rows_t = Rows256T<BinaryOp::kSub>; break;
    case BinaryOp::kMul: rows_t = Rows256T<BinaryOp::kMul>; break;
    case BinaryOp::kSquaredDifference: rows_t = Rows256T<BinaryOp::kSquaredDifference>; break;
    default: break;
  }
  rows_t(a, sa, a_row, b, sb, b_row, out, rows, n, lo, hi);
}
#endif  // DELEGATO_X86

#if DELEGATO_ARM
template <BinaryOp kOp>
inline float32x4_t OpNeon(float32x4_t x, float32x4_t y) {
  if constexpr (kOp == BinaryOp::kAdd) return vaddq_f32(x, y);
  if constexpr (kOp == BinaryOp::kSub) return vsubq_f32(x, y);
  if constexpr (kOp == BinaryOp::kMul) return vmulq_f32(x, y);
  if constexpr (kOp == BinaryOp::kSquaredDifference) {
    const float32x4_t d = vsubq_f32(x, y);
    return vmulq_f32(d, d);
  }
  return vdivq_f32(x, y);
}

template <BinaryOp kOp>
void RunNeonT(const float* a, int64_t sa, const float* b, int64_t sb, float* out, int64_t n,
              float lo, float hi) {
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  const float32x4_t a0 = vdupq_n_f32(a[0]), b0 = vdupq_n_f32(b[0]);
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const float32x4_t x = sa ? vld1q_f32(a + k) : a0;
    const float32x4_t y = sb ? vld1q_f32(b + k) : b0;
    vst1q_f32(out + k, ClampNeon(OpNeon<kOp>(x, y), vlo, vhi));
  }
  if (k < n) {  // the last values through padded copies (pad 1: no effect)
    float x[4] = {1.0f, 1.0f, 1.0f, 1.0f}, y[4] = {1.0f, 1.0f, 1.0f, 1.0f}, r[4];
    for (int64_t j = k; j < n; ++j) {
      x[j - k] = a[j * sa];
      y[j - k] = b[j * sb];
    }
    vst1q_f32(r, ClampNeon(OpNeon<kOp>(vld1q_f32(x), vld1q_f32(y)), vlo, vhi));
    std::copy(r, r + (n - k), out + k);
  }
}

template <BinaryOp kOp>
void RowsNeonT(const float* a, int64_t sa, int64_t a_row, const float* b, int64_t sb,
               int64_t b_row, float* out, int64_t rows, int64_t n, float lo, float hi) {
  for (int64_t r = 0; r < rows; ++r)
    RunNeonT<kOp>(a + r * a_row, sa, b + r * b_row, sb, out + r * n, n, lo, hi);
}

void RunNeon(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* out,
             int64_t n, float lo, float hi) {
  switch (op) {
    case BinaryOp::kAdd: return RunNeonT<BinaryOp::kAdd>(a, sa, b, sb, out, n, lo, hi);
    case BinaryOp::kSub: return RunNeonT<BinaryOp::kSub>(a, sa, b, sb, out, n, lo, hi);
    case BinaryOp::kMul: return RunNeonT<BinaryOp::kMul>(a, sa, b, sb, out, n, lo, hi);
    case BinaryOp::kSquaredDifference:
      return RunNeonT<BinaryOp::kSquaredDifference>(a, sa, b, sb, out, n, lo, hi);
    default: return RunNeonT<BinaryOp::kDiv>(a, sa, b, sb, out, n, lo, hi);
  }
}

void RowsNeon(BinaryOp op, const float* a, int64_t sa, int64_t a_row, const float* b,
              int64_t sb, int64_t b_row, float* out, int64_t rows, int64_t n, float lo,
              float hi) {
  switch (op) {
    case BinaryOp::kAdd:
      return RowsNeonT<BinaryOp::kAdd>(a, sa, a_row, b, sb, b_row, out, rows, n, lo, hi);
    case BinaryOp::kSub:
      return RowsNeonT<BinaryOp::kSub>(a, sa, a_row, b, sb, b_row, out, rows, n, lo, hi);
    case BinaryOp::kMul:
      return RowsNeonT<BinaryOp::kMul>(a, sa, a_row, b, sb, b_row, out, rows, n, lo, hi);
    case BinaryOp::kSquaredDifference:
      return RowsNeonT<BinaryOp::kSquaredDifference>(a, sa, a_row, b, sb, b_row, out, rows, n,
                                                      lo, hi);
    default:
      return RowsNeonT<BinaryOp::kDiv>(a, sa, a_row, b, sb, b_row, out, rows, n, lo, hi);
  }
}
#endif  // DELEGATO_ARM

}  // namespace

bool HasFloatBinary(Isa isa) {
#if DELEGATO_X86
  return isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni;
#elif DELEGATO_ARM
  return IsArmIsa(isa);
#else
  (void)isa;
  return false;
#endif
}

void FloatBinary(Isa isa, BinaryOp op, const reference::BroadcastPlan& plan, const float* a,
                 const float* b, float* out, float lo, float hi, int64_t begin, int64_t end) {
  if (begin >= end) return;
  RunFn run_fn = nullptr;
  RowsFn rows_fn = nullptr;
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni) run_fn = Run512, rows_fn = Rows512;
  if (isa == Isa::kAvx2) run_fn = Run256, rows_fn = Rows256;
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa)) run_fn = RunNeon, rows_fn = RowsNeon;
#endif
  if (run_fn == nullptr || op == BinaryOp::kFloorDiv) {
    reference::BinaryArithmetic<float>(op, plan, a, b, out, {lo, hi}, begin, end);
    return;
  }
  // The reference's walk (reference::BroadcastBinary), a vector loop per run.
  reference::BroadcastCursor at(plan, begin);
  const int last = at.last();
  const int64_t sa = plan.a_strides[last], sb = plan.b_strides[last];
  int64_t position = begin;
  while (position < end) {
    if (last >= 1 && at.index[last] == 0) {
      // Whole rows of the innermost dimension, up to the end of the next one.
      const int64_t n = plan.dims[last];
      const int64_t rows =
          std::min((end - position) / n, plan.dims[last - 1] - at.index[last - 1]);
      if (rows > 1) {
        const int64_t a_row = plan.a_strides[last - 1], b_row = plan.b_strides[last - 1];
        rows_fn(op, a + at.a_offset, sa, a_row, b + at.b_offset, sb, b_row, out + position, rows,
                n, lo, hi);
        position += rows * n;
        at.AdvanceRows(rows);
        continue;
      }
    }
    const int64_t run = std::min(at.RowLeft(), end - position);
    run_fn(op, a + at.a_offset, sa, b + at.b_offset, sb, out + position, run, lo, hi);
    position += run;
    at.Advance(run);
  }
}

}  // namespace delegato::optimized
