#include "kernels/optimized/lstm.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/fixed_point.h"
#include "kernels/optimized/float_activations.h"
#include "kernels/quantization.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

namespace delegato::optimized {

namespace {

constexpr int kRowAlign = 16;  // packed float rows per column, a multiple of both vector widths

#if DELEGATO_X86
// out[0, rows_left) += the sums of NV vectors of 16 rows over `cols` columns of
// w ([cols][padded_rows], already offset to the block's first row).
template <int NV>
DLG_TARGET_AVX512 void FloatBlock512(const float* w, int padded_rows, int cols, const float* v,
                                     float* out, int rows_left) {
  __m512 acc[NV];
  for (int i = 0; i < NV; ++i) acc[i] = _mm512_setzero_ps();
  for (int c = 0; c < cols; ++c) {
    const __m512 x = _mm512_set1_ps(v[c]);
    const float* wc = w + static_cast<size_t>(c) * padded_rows;
    for (int i = 0; i < NV; ++i)
      acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(_mm512_load_ps(wc + 16 * i), x));
  }
  for (int i = 0; i < NV; ++i) {
    const int left = rows_left - 16 * i;
    const __mmask16 m = left >= 16 ? static_cast<__mmask16>(0xFFFF)
                                   : static_cast<__mmask16>((1u << left) - 1);
    const __m512 o = _mm512_maskz_loadu_ps(m, out + 16 * i);
    _mm512_mask_storeu_ps(out + 16 * i, m, _mm512_add_ps(o, acc[i]));
  }
}

DLG_TARGET_AVX512 void FloatMatVec512(const LstmPackedWeights::FloatMatrix& m, const float* v,
                                      float* out) {
  for (int r0 = 0; r0 < m.rows; r0 += 64) {
    const int left = m.rows - r0;
    const float* w = m.packed.data() + r0;
    switch (std::min(4, (left + 15) / 16)) {
      case 4: FloatBlock512<4>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      case 3: FloatBlock512<3>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      case 2: FloatBlock512<2>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      default: FloatBlock512<1>(w, m.padded_rows, m.cols, v, out + r0, left); break;
    }
  }
}

template <int NV>
DLG_TARGET_AVX2 void FloatBlock256(const float* w, int padded_rows, int cols, const float* v,
                                   float* out, int rows_left) {
  __m256 acc[NV];
  for (int i = 0; i < NV; ++i) acc[i] = _mm256_setzero_ps();
  for (int c = 0; c < cols; ++c) {
    const __m256 x = _mm256_set1_ps(v[c]);
    const float* wc = w + static_cast<size_t>(c) * padded_rows;
    for (int i = 0; i < NV; ++i)
      acc[i] = _mm256_add_ps(acc[i], _mm256_mul_ps(_mm256_load_ps(wc + 8 * i), x));
  }
  for (int i = 0; i < NV; ++i) {
    const int left = rows_left - 8 * i;
    if (left >= 8) {
      _mm256_storeu_ps(out + 8 * i, _mm256_add_ps(_mm256_loadu_ps(out + 8 * i), acc[i]));
    } else {
      alignas(32) float sums[8];
      _mm256_store_ps(sums, acc[i]);
      for (int j = 0; j < left; ++j) out[8 * i + j] += sums[j];
    }
  }
}

DLG_TARGET_AVX2 void FloatMatVec256(const LstmPackedWeights::FloatMatrix& m, const float* v,
                                    float* out) {
  for (int r0 = 0; r0 < m.rows; r0 += 32) {
    const int left = m.rows - r0;
    const float* w = m.packed.data() + r0;
    switch (std::min(4, (left + 7) / 8)) {
      case 4: FloatBlock256<4>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      case 3: FloatBlock256<3>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      case 2: FloatBlock256<2>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      default: FloatBlock256<1>(w, m.padded_rows, m.cols, v, out + r0, left); break;
    }
  }
}
#endif  // DELEGATO_X86

#if DELEGATO_ARM
// As FloatBlock512 with 4-lane vectors (the sources build with
// -ffp-contract=off on aarch64: a separate multiply and add, as the reference).
template <int NV>
void FloatBlockNeon(const float* w, int padded_rows, int cols, const float* v, float* out,
                    int rows_left) {
  float32x4_t acc[NV];
  for (int i = 0; i < NV; ++i) acc[i] = vdupq_n_f32(0.0f);
  for (int c = 0; c < cols; ++c) {
    const float32x4_t x = vdupq_n_f32(v[c]);
    const float* wc = w + static_cast<size_t>(c) * padded_rows;
    for (int i = 0; i < NV; ++i) acc[i] = vaddq_f32(acc[i], vmulq_f32(vld1q_f32(wc + 4 * i), x));
  }
  for (int i = 0; i < NV; ++i) {
    const int left = rows_left - 4 * i;
    if (left >= 4) {
      vst1q_f32(out + 4 * i, vaddq_f32(vld1q_f32(out + 4 * i), acc[i]));
    } else {
      float sums[4];
      vst1q_f32(sums, acc[i]);
      for (int j = 0; j < left; ++j) out[4 * i + j] += sums[j];
    }
  }
}

void FloatMatVecNeon(const LstmPackedWeights::FloatMatrix& m, const float* v, float* out) {
  for (int r0 = 0; r0 < m.rows; r0 += 32) {
    const int left = m.rows - r0;
    const float* w = m.packed.data() + r0;
    switch (std::min(8, (left + 3) / 4)) {
      case 8: FloatBlockNeon<8>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      case 7: FloatBlockNeon<7>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      case 6: FloatBlockNeon<6>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      case 5: FloatBlockNeon<5>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      case 4: FloatBlockNeon<4>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      case 3: FloatBlockNeon<3>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      case 2: FloatBlockNeon<2>(w, m.padded_rows, m.cols, v, out + r0, left); break;
      default: FloatBlockNeon<1>(w, m.padded_rows, m.cols, v, out + r0, left); break;
    }
  }
}
#endif  // DELEGATO_ARM

// The int8 products' scratch: one widened row, then one row of int32 sums.
int16_t* WidenedRow(uint8_t* scratch) { return reinterpret_cast<int16_t*>(scratch); }
int32_t* ProductSums(uint8_t* scratch, const HybridGemm& gemm) {
  return reinterpret_cast<int32_t*>(scratch +
                                    RoundUp(static_cast<size_t>(gemm.k_padded()) * 2, 64));
}

}  // namespace

#if DELEGATO_X86
namespace avx512 {
using V = __m512i;
using M = __mmask32;
constexpr int kLanes = 32;
DLG_TARGET_AVX512 inline V Set1(int16_t x) { return _mm512_set1_epi16(x); }
DLG_TARGET_AVX512 inline V Add(V a, V b) { return _mm512_add_epi16(a, b); }
DLG_TARGET_AVX512 inline V Sub(V a, V b) { return _mm512_sub_epi16(a, b); }
DLG_TARGET_AVX512 inline V AddSat(V a, V b) { return _mm512_adds_epi16(a, b); }
DLG_TARGET_AVX512 inline V And(V a, V b) { return _mm512_and_si512(a, b); }
DLG_TARGET_AVX512 inline V MulHrs(V a, V b) { return _mm512_mulhrs_epi16(a, b); }
DLG_TARGET_AVX512 inline V AvgU(V a, V b) { return _mm512_avg_epu16(a, b); }
template <int E>
DLG_TARGET_AVX512 inline V Sra(V x) { return _mm512_srai_epi16(x, E); }
template <int E>
DLG_TARGET_AVX512 inline V Sll(V x) { return _mm512_slli_epi16(x, E); }
DLG_TARGET_AVX512 inline M CmpGt(V a, V b) { return _mm512_cmpgt_epi16_mask(a, b); }
DLG_TARGET_AVX512 inline M CmpEq(V a, V b) { return _mm512_cmpeq_epi16_mask(a, b); }
DLG_TARGET_AVX512 inline M MaskAnd(M a, M b) { return static_cast<M>(a & b); }
DLG_TARGET_AVX512 inline M TestBits(V a, V b) { return _mm512_test_epi16_mask(a, b); }
DLG_TARGET_AVX512 inline V Select(M m, V if_true, V if_false) {
  return _mm512_mask_blend_epi16(m, if_false, if_true);
}
DLG_TARGET_AVX512 inline M LaneMask(int n) { return static_cast<M>((1u << n) - 1); }
DLG_TARGET_AVX512 inline V Load(const int16_t* p) { return _mm512_loadu_si512(p); }
DLG_TARGET_AVX512 inline V LoadN(const int16_t* p, int n) {
  return _mm512_maskz_loadu_epi16(LaneMask(n), p);
}
DLG_TARGET_AVX512 inline void Store(int16_t* p, V v) { _mm512_storeu_si512(p, v); }
DLG_TARGET_AVX512 inline void StoreN(int16_t* p, V v, int n) {
  _mm512_mask_storeu_epi16(p, LaneMask(n), v);
}
#define FP_TARGET DLG_TARGET_AVX512
#include "kernels/optimized/fixed_point16.inc"
#undef FP_TARGET
}  // namespace avx512

namespace avx2 {
using V = __m256i;
using M = __m256i;  // all-ones lanes where true
constexpr int kLanes = 16;
DLG_TARGET_AVX2 inline V Set1(int16_t x) { return _mm256_set1_epi16(x); }
DLG_TARGET_AVX2 inline V Add(V a, V b) { return _mm256_add_epi16(a, b); }
DLG_TARGET_AVX2 inline V Sub(V a, V b) { return _mm256_sub_epi16(a, b); }
DLG_TARGET_AVX2 inline V AddSat(V a, V b) { return _mm256_adds_epi16(a, b); }
DLG_TARGET_AVX2 inline V And(V a, V b) { return _mm256_and_si256(a, b); }
DLG_TARGET_AVX2 inline V MulHrs(V a, V b) { return _mm256_mulhrs_epi16(a, b); }
DLG_TARGET_AVX2 inline V AvgU(V a, V b) { return _mm256_avg_epu16(a, b); }
template <int E>
DLG_TARGET_AVX2 inline V Sra(V x) { return _mm256_srai_epi16(x, E); }
template <int E>
DLG_TARGET_AVX2 inline V Sll(V x) { return _mm256_slli_epi16(x, E); }
DLG_TARGET_AVX2 inline M CmpGt(V a, V b) { return _mm256_cmpgt_epi16(a, b); }
DLG_TARGET_AVX2 inline M CmpEq(V a, V b) { return _mm256_cmpeq_epi16(a, b); }
DLG_TARGET_AVX2 inline M MaskAnd(M a, M b) { return _mm256_and_si256(a, b); }
DLG_TARGET_AVX2 inline M TestBits(V a, V b) {
  return _mm256_xor_si256(_mm256_cmpeq_epi16(_mm256_and_si256(a, b), _mm256_setzero_si256()),
                          _mm256_set1_epi16(-1));
}
DLG_TARGET_AVX2 inline V Select(M m, V if_true, V if_false) {
  return _mm256_blendv_epi8(if_false, if_true, m);
}
DLG_TARGET_AVX2 inline V Load(const int16_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
DLG_TARGET_AVX2 inline V LoadN(const int16_t* p, int n) {
  alignas(32) int16_t lanes[kLanes] = {};
  std::memcpy(lanes, p, sizeof(int16_t) * n);
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
}
DLG_TARGET_AVX2 inline void Store(int16_t* p, V v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
}
DLG_TARGET_AVX2 inline void StoreN(int16_t* p, V v, int n) {
  alignas(32) int16_t lanes[kLanes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  std::memcpy(p, lanes, sizeof(int16_t) * n);
}
#define FP_TARGET DLG_TARGET_AVX2
#include "kernels/optimized/fixed_point16.inc"
#undef FP_TARGET
}  // namespace avx2
#endif  // DELEGATO_X86

#if DELEGATO_ARM
namespace neon {
using V = int16x8_t;
using M = uint16x8_t;
constexpr int kLanes = 8;
inline V Set1(int16_t x) { return vdupq_n_s16(x); }
inline V Add(V a, V b) { return vaddq_s16(a, b); }
inline V Sub(V a, V b) { return vsubq_s16(a, b); }
inline V AddSat(V a, V b) { return vqaddq_s16(a, b); }
inline V And(V a, V b) { return vandq_s16(a, b); }
// (2ab + 2^15) >> 16, saturated: already the saturating rounding doubling high multiply.
inline V MulHrs(V a, V b) { return vqrdmulhq_s16(a, b); }
inline V AvgU(V a, V b) {
  return vreinterpretq_s16_u16(vrhaddq_u16(vreinterpretq_u16_s16(a), vreinterpretq_u16_s16(b)));
}
template <int E>
inline V Sra(V x) { return vshrq_n_s16(x, E); }
template <int E>
inline V Sll(V x) { return vshlq_n_s16(x, E); }
inline M CmpGt(V a, V b) { return vcgtq_s16(a, b); }
inline M CmpEq(V a, V b) { return vceqq_s16(a, b); }
inline M MaskAnd(M a, M b) { return vandq_u16(a, b); }
inline M TestBits(V a, V b) { return vtstq_s16(a, b); }
inline V Select(M m, V if_true, V if_false) { return vbslq_s16(m, if_true, if_false); }
inline V Load(const int16_t* p) { return vld1q_s16(p); }
inline V LoadN(const int16_t* p, int n) {
  int16_t lanes[kLanes] = {};
  std::memcpy(lanes, p, sizeof(int16_t) * n);
  return vld1q_s16(lanes);
}
inline void Store(int16_t* p, V v) { vst1q_s16(p, v); }
inline void StoreN(int16_t* p, V v, int n) {
  int16_t lanes[kLanes];
  vst1q_s16(lanes, v);
  std::memcpy(p, lanes, sizeof(int16_t) * n);
}
#define FP_TARGET
#include "kernels/optimized/fixed_point16.inc"
#undef FP_TARGET
}  // namespace neon
#endif  // DELEGATO_ARM

bool LstmVectorIsa(Isa isa) {
  return isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni || IsArmIsa(isa);
}

void LstmPackedWeights::AddFloat(const float* matrix, int rows, int cols) {
  if (FindFloat(matrix) != nullptr) return;
  auto m = std::make_unique<FloatMatrix>();
  m->source = matrix;
  m->rows = rows;
  m->cols = cols;
  m->padded_rows = static_cast<int>(RoundUp(static_cast<size_t>(rows), kRowAlign));
  m->packed.Resize(static_cast<size_t>(cols) * m->padded_rows);  // zeroed: padding rows add 0
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      m->packed[static_cast<size_t>(c) * m->padded_rows + r] =
          matrix[static_cast<size_t>(r) * cols + c];
  float_.push_back(std::move(m));
}

void LstmPackedWeights::AddInt8(const int8_t* matrix, int rows, int cols) {
  if (FindInt8(matrix) != nullptr) return;
  Int8Matrix m;
  m.source = matrix;
  m.gemm = std::make_unique<HybridGemm>(matrix, rows, cols, isa_);
  int8_.push_back(std::move(m));
}

size_t LstmPackedWeights::scratch_bytes() const {
  size_t bytes = 0;
  for (const Int8Matrix& m : int8_)
    bytes = std::max(bytes, RoundUp(static_cast<size_t>(m.gemm->k_padded()) * 2, 64) +
                                static_cast<size_t>(m.gemm->n_padded()) * 4);
  return bytes;
}

const LstmPackedWeights::FloatMatrix* LstmPackedWeights::FindFloat(const float* matrix) const {
  for (const auto& m : float_)
    if (m->source == matrix) return m.get();
  return nullptr;
}

const LstmPackedWeights::Int8Matrix* LstmPackedWeights::FindInt8(const int8_t* matrix) const {
  for (const Int8Matrix& m : int8_)
    if (m.source == matrix) return &m;
  return nullptr;
}

void FloatLstmOps::MatVec(const float* matrix, int rows, int cols, const float* vector,
                          int n_batch, float* result) const {
  const LstmPackedWeights::FloatMatrix* m = weights->FindFloat(matrix);
#if DELEGATO_X86
  if (m != nullptr && m->rows == rows && m->cols == cols) {
    for (int b = 0; b < n_batch; ++b) {
      const float* v = vector + static_cast<size_t>(b) * cols;
      float* out = result + static_cast<size_t>(b) * rows;
      if (weights->isa() == Isa::kAvx512Vnni)
        FloatMatVec512(*m, v, out);
      else
        FloatMatVec256(*m, v, out);
    }
    return;
  }
#elif DELEGATO_ARM
  if (m != nullptr && m->rows == rows && m->cols == cols) {
    for (int b = 0; b < n_batch; ++b)
      FloatMatVecNeon(*m, vector + static_cast<size_t>(b) * cols,
                      result + static_cast<size_t>(b) * rows);
    return;
  }
#else
  (void)m;
#endif
  reference::LstmFloatOps().MatVec(matrix, rows, cols, vector, n_batch, result);
}

void FloatLstmOps::Activate(reference::LstmActivation act, float* v, int n) const {
  if (act == reference::LstmActivation::kSigmoid) {
    FloatSigmoid(weights->isa(), v, v, 0, n);
  } else if (act == reference::LstmActivation::kTanh) {
    FloatTanh(weights->isa(), v, v, 0, n);
  } else {
    reference::LstmFloatOps().Activate(act, v, n);
  }
}

void HybridLstmOps::QuantizeRows(const float* v, int n_batch, int n, bool asymmetric, int8_t* q,
                                 float* scales, int32_t* zero_points) const {
  for (int b = 0; b < n_batch; ++b) {
    const size_t offset = static_cast<size_t>(b) * n;
    HybridQuantizeRow(weights->isa(), v + offset, n, asymmetric, q + offset, &scales[b],
                      &zero_points[b]);
    if (!asymmetric) zero_points[b] = 0;
  }
}

void HybridLstmOps::MatVecQuantized(const int8_t* matrix, float matrix_scale,
                                    const int32_t* row_sums, int rows, int cols, const int8_t* q,
                                    const float* scales, const int32_t* zero_points,
                                    bool asymmetric, int n_batch, float* result) const {
  const LstmPackedWeights::Int8Matrix* m = weights->FindInt8(matrix);
  if (m == nullptr || m->gemm->n() != rows || m->gemm->k() != cols) {
    reference::LstmHybridOps().MatVecQuantized(matrix, matrix_scale, row_sums, rows, cols, q,
                                               scales, zero_points, asymmetric, n_batch, result);
    return;
  }
  // sum w (q - zero_point) = sum w q - row_sum zero_point, as the reference subtracts it.
  const HybridGemm& gemm = *m->gemm;
  int16_t* widened = WidenedRow(scratch);
  int32_t* sums = ProductSums(scratch, gemm);
  for (int b = 0; b < n_batch; ++b) {
    WidenRow(weights->isa(), q + static_cast<size_t>(b) * cols, cols,
             asymmetric ? zero_points[b] : 0, widened, gemm.k_padded());
    gemm.Multiply(widened, 1, sums);
    const float scale = scales[b] * matrix_scale;
    float* out = result + static_cast<size_t>(b) * rows;
    for (int r = 0; r < rows; ++r) out[r] += static_cast<float>(sums[r]) * scale;
  }
}

template <class T>
void IntegerLstmOps::MatMulRequant(const int8_t* x, const int32_t* bias, const int8_t* matrix,
                                   int32_t multiplier, int shift, int n_batch, int n_in, int n_out,
                                   int32_t zero_point, T* output) const {
  const LstmPackedWeights::Int8Matrix* m = weights->FindInt8(matrix);
  if (m == nullptr || m->gemm->n() != n_out || m->gemm->k() != n_in) {
    reference::LstmIntegerOps::MatMulRequant(x, bias, matrix, multiplier, shift, n_batch, n_in,
                                             n_out, zero_point, output);
    return;
  }
  const HybridGemm& gemm = *m->gemm;
  int16_t* widened = WidenedRow(scratch);
  int32_t* sums = ProductSums(scratch, gemm);
  for (int b = 0; b < n_batch; ++b) {
    WidenRow(weights->isa(), x + static_cast<size_t>(b) * n_in, n_in, 0, widened,
             gemm.k_padded());
    gemm.Multiply(widened, 1, sums);
    T* out = output + static_cast<size_t>(b) * n_out;
    for (int r = 0; r < n_out; ++r) {
      // Wrapping int32 sums: the same value in any order.
      int32_t acc = fixed_point::WrappingAdd(bias[r], sums[r]);
      acc = quant::MultiplyByQuantizedMultiplier(acc, multiplier, shift);
      acc = fixed_point::WrappingAdd(fixed_point::WrappingAdd(acc, zero_point), int32_t{out[r]});
      out[r] = static_cast<T>(
          std::clamp<int32_t>(acc, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
    }
  }
}

void IntegerLstmOps::Sigmoid(int16_t* gate, int n) const {
#if DELEGATO_X86
  if (weights->isa() == Isa::kAvx512Vnni) return avx512::LogisticRange<3>(gate, n, gate);
  if (weights->isa() == Isa::kAvx2) return avx2::LogisticRange<3>(gate, n, gate);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(weights->isa())) return neon::LogisticRange<3>(gate, n, gate);
#endif
  reference::LstmIntegerOps::Sigmoid(gate, n);
}

void IntegerLstmOps::Tanh(int integer_bits, const int16_t* in, int n, int16_t* out) const {
  if (integer_bits < 0 || integer_bits > 6) return;  // as the reference (Prepare excludes them)
#if DELEGATO_X86
  if (weights->isa() == Isa::kAvx512Vnni) return avx512::TanhRange(integer_bits, in, n, out);
  if (weights->isa() == Isa::kAvx2) return avx2::TanhRange(integer_bits, in, n, out);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(weights->isa())) return neon::TanhRange(integer_bits, in, n, out);
#endif
  reference::LstmIntegerOps::Tanh(integer_bits, in, n, out);
}

template void IntegerLstmOps::MatMulRequant<int16_t>(const int8_t*, const int32_t*, const int8_t*,
                                                     int32_t, int, int, int, int, int32_t,
                                                     int16_t*) const;
template void IntegerLstmOps::MatMulRequant<int8_t>(const int8_t*, const int32_t*, const int8_t*,
                                                    int32_t, int, int, int, int, int32_t,
                                                    int8_t*) const;

}  // namespace delegato::optimized
