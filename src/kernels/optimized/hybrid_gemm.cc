#include "kernels/optimized/hybrid_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/optimized/grouped_conv.h"
#include "kernels/optimized/neon_clamp.h"
#include "kernels/optimized/tap_pairs.h"
#include "kernels/reference/hybrid.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

// GCC 12 reports false "may be used uninitialized" warnings from inside its
// own AVX-512 intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace delegato::optimized {

namespace {

constexpr int kBlock = 16;  // output channels per packed block

int32_t LoadPair(const int16_t* a) {
  int32_t v;
  std::memcpy(&v, a, sizeof v);
  return v;
}

// ---------------------------------------------------------------- scalar

void MultiplyScalar(const int16_t* packed, int k_padded, int blocks, const int16_t* a, int rows,
                    int32_t* acc, int acc_stride) {
  const int pairs = k_padded / 2;
  for (int b = 0; b < blocks; ++b) {
    const int16_t* w = packed + static_cast<size_t>(b) * pairs * kBlock * 2;
    for (int r = 0; r < rows; ++r) {
      const int16_t* x = a + static_cast<size_t>(r) * k_padded;
      int32_t sums[kBlock] = {};
      for (int p = 0; p < pairs; ++p) {
        const int16_t* wp = w + static_cast<size_t>(p) * kBlock * 2;
        for (int c = 0; c < kBlock; ++c) {
          // Wrapping adds, as the reference's int32 sums.
          const int32_t pair = int32_t{x[2 * p]} * wp[2 * c] + int32_t{x[2 * p + 1]} * wp[2 * c + 1];
          sums[c] = static_cast<int32_t>(static_cast<uint32_t>(sums[c]) + static_cast<uint32_t>(pair));
        }
      }
      std::memcpy(acc + static_cast<size_t>(r) * acc_stride + b * kBlock, sums, sizeof sums);
    }
  }
}

#if DELEGATO_ARM

// ---------------------------------------------------------------- NEON

// R rows x one block of 16 channels. A pair's 32 packed weights are four
// vectors of four channels' (k, k + 1) weights; each is multiplied by the
// row's pair repeated with widening multiply-adds (smlal, smlal2) into
// eight int32 vectors per row whose adjacent lanes hold one channel's two
// products; the lanes are added pairwise at the end (addp). The sums are
// the same products added modulo 2^32, so they equal the reference's.
template <int R>
void TileNeon(const int16_t* w, int pairs, const int16_t* a, int k_padded, int32_t* acc,
              int acc_stride) {
  int32x4_t s[R][8];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < 8; ++j) s[r][j] = vdupq_n_s32(0);
  for (int p = 0; p < pairs; ++p, w += 2 * kBlock) {
    int16x8_t wv[4];
    for (int j = 0; j < 4; ++j) wv[j] = vld1q_s16(w + 8 * j);
    for (int r = 0; r < R; ++r) {
      const int16x8_t x =
          vreinterpretq_s16_s32(vdupq_n_s32(LoadPair(a + static_cast<size_t>(r) * k_padded + 2 * p)));
      for (int j = 0; j < 4; ++j) {
        s[r][2 * j] = vmlal_s16(s[r][2 * j], vget_low_s16(wv[j]), vget_low_s16(x));
        s[r][2 * j + 1] = vmlal_high_s16(s[r][2 * j + 1], wv[j], x);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    int32_t* out = acc + static_cast<size_t>(r) * acc_stride;
    for (int j = 0; j < 4; ++j) vst1q_s32(out + 4 * j, vpaddq_s32(s[r][2 * j], s[r][2 * j + 1]));
  }
}

void MultiplyNeon(const int16_t* packed, int k_padded, int blocks, const int16_t* a, int rows,
                  int32_t* acc, int acc_stride) {
  const int pairs = k_padded / 2;
  for (int b = 0; b < blocks; ++b) {
    const int16_t* w = packed + static_cast<size_t>(b) * pairs * kBlock * 2;
    int r = 0;
    for (; r + 3 <= rows; r += 3)  // 24 sums, 4 weight vectors and a row pair: 29 registers
      TileNeon<3>(w, pairs, a + static_cast<size_t>(r) * k_padded, k_padded,
                  acc + static_cast<size_t>(r) * acc_stride + b * kBlock, acc_stride);
    const int16_t* ar = a + static_cast<size_t>(r) * k_padded;
    int32_t* cr = acc + static_cast<size_t>(r) * acc_stride + b * kBlock;
    if (rows - r == 2) TileNeon<2>(w, pairs, ar, k_padded, cr, acc_stride);
    if (rows - r == 1) TileNeon<1>(w, pairs, ar, k_padded, cr, acc_stride);
  }
}

// a[i] = q[i] - zero_point for i < k (in [-255, 255]).
void WidenNeon(const int8_t* q, int k, int32_t zero_point, int16_t* a) {
  const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(zero_point));
  int i = 0;
  for (; i + 16 <= k; i += 16) {
    const int8x16_t bytes = vld1q_s8(q + i);
    vst1q_s16(a + i, vsubq_s16(vmovl_s8(vget_low_s8(bytes)), zp));
    vst1q_s16(a + i + 8, vsubq_s16(vmovl_high_s8(bytes), zp));
  }
  for (; i < k; ++i) a[i] = static_cast<int16_t>(q[i] - zero_point);
}

// The row's minimum and maximum (the reference's values; a zero's sign may
// differ, which none of the quantization parameters depend on); false when
// a value is NaN (the caller then runs the reference).
bool RangeNeon(const float* v, int32_t n, float* lo, float* hi) {
  float32x4_t mn = vdupq_n_f32(INFINITY), mx = vdupq_n_f32(-INFINITY);
  uint32x4_t ordered = vdupq_n_u32(~0u);
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t x = vld1q_f32(v + i);
    mn = vminq_f32(mn, x);
    mx = vmaxq_f32(mx, x);
    ordered = vandq_u32(ordered, vceqq_f32(x, x));
  }
  if (vminvq_u32(ordered) == 0) return false;
  float a = vminvq_f32(mn), b = vmaxvq_f32(mx);
  for (; i < n; ++i) {
    if (std::isnan(v[i])) return false;
    a = std::min(a, v[i]);
    b = std::max(b, v[i]);
  }
  *lo = a;
  *hi = b;
  return true;
}

// round(x * inverse) + zero_point, clamped, as QuantizeAvx2; fcvtas rounds
// half away from zero and converts as the reference's cast does on Arm
// (the values are within the int32 range: the range check excluded NaN).
void QuantizeNeon(const float* v, int32_t n, int32_t zero_point, float inverse, int32_t qmin,
                  int32_t qmax, int8_t* out) {
  const int32x4_t zp = vdupq_n_s32(zero_point);
  const float32x4_t inv = vdupq_n_f32(inverse);
  const int32x4_t lo = vdupq_n_s32(qmin), hi = vdupq_n_s32(qmax);
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    int32x4_t q[2];
    for (int j = 0; j < 2; ++j) {
      const int32x4_t rounded =
          vaddq_s32(vcvtaq_s32_f32(vmulq_f32(vld1q_f32(v + i + 4 * j), inv)), zp);
      q[j] = vminq_s32(hi, vmaxq_s32(lo, rounded));
    }
    vst1_s8(out + i, vmovn_s16(vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1]))));
  }
  for (; i < n; ++i) {
    const auto rounded = static_cast<int32_t>(std::round(v[i] * inverse));
    const auto q = static_cast<int32_t>(static_cast<uint32_t>(rounded) +
                                        static_cast<uint32_t>(zero_point));
    out[i] = static_cast<int8_t>(std::min(qmax, std::max(qmin, q)));
  }
}

// ConvOutputAvx2 in 4 lanes.
int ConvOutputNeon(const int32_t* acc, int n, const float* weight_scales, float image_scale,
                   const float* bias, float act_min, float act_max, float* out) {
  const float32x4_t scale = vdupq_n_f32(image_scale);
  const float32x4_t lo = vdupq_n_f32(act_min), hi = vdupq_n_f32(act_max);
  int c = 0;
  for (; c + 4 <= n; c += 4) {
    float32x4_t v = vcvtq_f32_s32(vld1q_s32(acc + c));
    if (weight_scales != nullptr) v = vmulq_f32(v, vld1q_f32(weight_scales + c));
    v = vmulq_f32(v, scale);
    if (bias != nullptr) v = vaddq_f32(v, vld1q_f32(bias + c));
    vst1q_f32(out + c, ClampNeon(v, lo, hi));
  }
  return c;
}

#endif  // DELEGATO_ARM

#if DELEGATO_X86

// ---------------------------------------------------------------- AVX2

// R rows x G blocks of 16 channels (block g's weights block_stride further).
template <int R, int G = 1>
DLG_TARGET_AVX2 void Tile256(const int16_t* w, int pairs, const int16_t* a, int k_padded,
                             int32_t* acc, int acc_stride, size_t block_stride = 0) {
  __m256i c[R][2 * G];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < 2 * G; ++j) c[r][j] = _mm256_setzero_si256();
  for (int p = 0; p < pairs; ++p, w += 2 * kBlock) {
    __m256i wv[2 * G];
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
      wv[2 * g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(w + g * block_stride));
      wv[2 * g + 1] =
          _mm256_load_si256(reinterpret_cast<const __m256i*>(w + g * block_stride + kBlock));
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256i x = _mm256_set1_epi32(LoadPair(a + static_cast<size_t>(r) * k_padded + 2 * p));
#pragma GCC unroll 8
      for (int j = 0; j < 2 * G; ++j) c[r][j] = _mm256_add_epi32(c[r][j], _mm256_madd_epi16(x, wv[j]));
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    int32_t* out = acc + static_cast<size_t>(r) * acc_stride;
#pragma GCC unroll 8
    for (int j = 0; j < 2 * G; ++j)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * j), c[r][j]);
  }
}

// One or two rows (a 1x1 image, a FULLY_CONNECTED batch): whole blocks 4 at
// a time, so 8-16 sums are in flight instead of a row's 2, each waiting on
// the last vpmaddwd + vpaddd. Returns the blocks done.
template <int R>
DLG_TARGET_AVX2 int FewRowsAvx2(const int16_t* packed, size_t block_stride, int pairs, int blocks,
                                const int16_t* a, int k_padded, int32_t* acc, int acc_stride) {
  int b = 0;
  for (; b + 4 <= blocks; b += 4)
    Tile256<R, 4>(packed + b * block_stride, pairs, a, k_padded, acc + b * kBlock, acc_stride,
                  block_stride);
  for (; b + 2 <= blocks; b += 2)
    Tile256<R, 2>(packed + b * block_stride, pairs, a, k_padded, acc + b * kBlock, acc_stride,
                  block_stride);
  return b;
}

// A block whose channels 8-15 are all padding (layers of at most 8 channels,
// or the last 1-8 of a layer): the first 8 lanes only, 8 rows at a time; the
// padding's sums, zero, are stored as zeros.
template <int R>
DLG_TARGET_AVX2 void HalfTile256(const int16_t* w, int pairs, const int16_t* a, int k_padded,
                                 int32_t* acc, int acc_stride) {
  __m256i c0[R];
  for (int r = 0; r < R; ++r) c0[r] = _mm256_setzero_si256();
  for (int p = 0; p < pairs; ++p, w += 2 * kBlock) {
    const __m256i w0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(w));
    for (int r = 0; r < R; ++r) {
      const __m256i x = _mm256_set1_epi32(LoadPair(a + static_cast<size_t>(r) * k_padded + 2 * p));
      c0[r] = _mm256_add_epi32(c0[r], _mm256_madd_epi16(x, w0));
    }
  }
  for (int r = 0; r < R; ++r) {
    int32_t* out = acc + static_cast<size_t>(r) * acc_stride;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), c0[r]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8), _mm256_setzero_si256());
  }
}

DLG_TARGET_AVX2 void HalfBlockAvx2(const int16_t* w, int pairs, const int16_t* a, int k_padded,
                                   int rows, int32_t* acc, int acc_stride) {
  int r = 0;
  for (; r + 8 <= rows; r += 8)
    HalfTile256<8>(w, pairs, a + static_cast<size_t>(r) * k_padded, k_padded,
                   acc + static_cast<size_t>(r) * acc_stride, acc_stride);
  for (; r < rows; ++r)
    HalfTile256<1>(w, pairs, a + static_cast<size_t>(r) * k_padded, k_padded,
                   acc + static_cast<size_t>(r) * acc_stride, acc_stride);
}

DLG_TARGET_AVX2 void MultiplyAvx2(const int16_t* packed, int k_padded, int blocks, int n,
                                  const int16_t* a, int rows, int32_t* acc, int acc_stride) {
  const int pairs = k_padded / 2;
  const size_t block_stride = static_cast<size_t>(pairs) * kBlock * 2;
  // The last block is a half one when its channels 8-15 are all padding.
  const int whole_blocks = n - (blocks - 1) * kBlock <= kBlock / 2 ? blocks - 1 : blocks;
  int first = 0;
  if (rows == 1)
    first = FewRowsAvx2<1>(packed, block_stride, pairs, whole_blocks, a, k_padded, acc, acc_stride);
  else if (rows == 2)
    first = FewRowsAvx2<2>(packed, block_stride, pairs, whole_blocks, a, k_padded, acc, acc_stride);
  for (int b = first; b < blocks; ++b) {
    const int16_t* w = packed + b * block_stride;
    if (b == whole_blocks) {
      HalfBlockAvx2(w, pairs, a, k_padded, rows, acc + b * kBlock, acc_stride);
      continue;
    }
    int r = 0;
    for (; r + 4 <= rows; r += 4)
      Tile256<4>(w, pairs, a + static_cast<size_t>(r) * k_padded, k_padded,
                 acc + static_cast<size_t>(r) * acc_stride + b * kBlock, acc_stride);
    const int16_t* ar = a + static_cast<size_t>(r) * k_padded;
    int32_t* cr = acc + static_cast<size_t>(r) * acc_stride + b * kBlock;
    switch (rows - r) {
      case 3: Tile256<3>(w, pairs, ar, k_padded, cr, acc_stride); break;
      case 2: Tile256<2>(w, pairs, ar, k_padded, cr, acc_stride); break;
      case 1: Tile256<1>(w, pairs, ar, k_padded, cr, acc_stride); break;
      default: break;
    }
  }
}

// ---------------------------------------------------------------- AVX-512 VNNI

// R rows x B blocks of 16 channels, vpdpwssd (two int16 products per lane).
template <int R, int B>
DLG_TARGET_AVX512 void Tile512(const int16_t* w, size_t block_stride, int pairs, const int16_t* a,
                               int k_padded, int32_t* acc, int acc_stride) {
  __m512i c[R][B];
  for (int r = 0; r < R; ++r)
    for (int b = 0; b < B; ++b) c[r][b] = _mm512_setzero_si512();
  for (int p = 0; p < pairs; ++p, w += 2 * kBlock) {
    __m512i wv[B];
    for (int b = 0; b < B; ++b)
      wv[b] = _mm512_load_si512(reinterpret_cast<const void*>(w + b * block_stride));
    for (int r = 0; r < R; ++r) {
      const __m512i x = _mm512_set1_epi32(LoadPair(a + static_cast<size_t>(r) * k_padded + 2 * p));
      for (int b = 0; b < B; ++b) c[r][b] = _mm512_dpwssd_epi32(c[r][b], x, wv[b]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int b = 0; b < B; ++b)
      _mm512_storeu_si512(acc + static_cast<size_t>(r) * acc_stride + b * kBlock, c[r][b]);
}

template <int B>
DLG_TARGET_AVX512 void Rows512(const int16_t* w, size_t block_stride, int pairs, const int16_t* a,
                               int k_padded, int rows, int32_t* acc, int acc_stride) {
  constexpr int kRows = B == 2 ? 6 : 8;
  int r = 0;
  for (; r + kRows <= rows; r += kRows)
    Tile512<kRows, B>(w, block_stride, pairs, a + static_cast<size_t>(r) * k_padded, k_padded,
                      acc + static_cast<size_t>(r) * acc_stride, acc_stride);
  const int16_t* ar = a + static_cast<size_t>(r) * k_padded;
  int32_t* cr = acc + static_cast<size_t>(r) * acc_stride;
  switch (rows - r) {  // the last rows in one tile (a row alone waits on vpdpwssd's latency)
    case 7: Tile512<7, B>(w, block_stride, pairs, ar, k_padded, cr, acc_stride); break;
    case 6: Tile512<6, B>(w, block_stride, pairs, ar, k_padded, cr, acc_stride); break;
    case 5: Tile512<5, B>(w, block_stride, pairs, ar, k_padded, cr, acc_stride); break;
    case 4: Tile512<4, B>(w, block_stride, pairs, ar, k_padded, cr, acc_stride); break;
    case 3: Tile512<3, B>(w, block_stride, pairs, ar, k_padded, cr, acc_stride); break;
    case 2: Tile512<2, B>(w, block_stride, pairs, ar, k_padded, cr, acc_stride); break;
    case 1: Tile512<1, B>(w, block_stride, pairs, ar, k_padded, cr, acc_stride); break;
    default: break;
  }
}

// One or two rows: 8 (4) blocks at a time, so 8 sums are in flight instead of
// one or two. Returns the blocks done.
template <int R>
DLG_TARGET_AVX512 int FewRows512(const int16_t* packed, size_t block_stride, int pairs, int blocks,
                                 const int16_t* a, int k_padded, int32_t* acc, int acc_stride) {
  constexpr int kGroup = 8 / R;
  int b = 0;
  for (; b + kGroup <= blocks; b += kGroup)
    Tile512<R, kGroup>(packed + b * block_stride, block_stride, pairs, a, k_padded,
                       acc + b * kBlock, acc_stride);
  return b;
}

DLG_TARGET_AVX512 void MultiplyAvx512(const int16_t* packed, int k_padded, int blocks,
                                      const int16_t* a, int rows, int32_t* acc, int acc_stride) {
  const int pairs = k_padded / 2;
  const size_t block_stride = static_cast<size_t>(pairs) * kBlock * 2;
  int b = 0;
  if (rows == 1) b = FewRows512<1>(packed, block_stride, pairs, blocks, a, k_padded, acc, acc_stride);
  if (rows == 2) b = FewRows512<2>(packed, block_stride, pairs, blocks, a, k_padded, acc, acc_stride);
  for (; b + 2 <= blocks; b += 2)
    Rows512<2>(packed + b * block_stride, block_stride, pairs, a, k_padded, rows, acc + b * kBlock,
               acc_stride);
  if (b < blocks)
    Rows512<1>(packed + b * block_stride, block_stride, pairs, a, k_padded, rows, acc + b * kBlock,
               acc_stride);
}

// ---------------------------------------------------------------- row helpers

DLG_TARGET_AVX2 void WidenAvx2(const int8_t* q, int k, int32_t zero_point, int16_t* a) {
  const __m256i zp = _mm256_set1_epi16(static_cast<int16_t>(zero_point));
  int i = 0;
  for (; i + 16 <= k; i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(a + i),
                        _mm256_sub_epi16(_mm256_cvtepi8_epi16(bytes), zp));
  }
  for (; i < k; ++i) a[i] = static_cast<int16_t>(q[i] - zero_point);
}

// Lanes' minimum and maximum; false when a value is NaN (the caller then
// runs the reference, whose std::minmax_element treats NaN its own way).
DLG_TARGET_AVX2 bool RangeAvx2(const float* v, int32_t n, float* lo, float* hi) {
  __m256 mn = _mm256_set1_ps(INFINITY), mx = _mm256_set1_ps(-INFINITY);
  __m256 nan = _mm256_setzero_ps();
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(v + i);
    mn = _mm256_min_ps(mn, x);
    mx = _mm256_max_ps(mx, x);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
  if (_mm256_movemask_ps(nan) != 0) return false;
  float lanes_min[8], lanes_max[8];
  _mm256_storeu_ps(lanes_min, mn);
  _mm256_storeu_ps(lanes_max, mx);
  float a = lanes_min[0], b = lanes_max[0];
  for (int j = 1; j < 8; ++j) {
    a = std::min(a, lanes_min[j]);
    b = std::max(b, lanes_max[j]);
  }
  for (; i < n; ++i) {
    if (std::isnan(v[i])) return false;
    a = std::min(a, v[i]);
    b = std::max(b, v[i]);
  }
  *lo = a;
  *hi = b;
  return true;
}

// x * inverse rounded half away from zero (std::round), truncated to int32 as
// the reference's cast (out of range and NaN: INT32_MIN).
DLG_TARGET_AVX2 inline __m256i RoundToInt(__m256 t) {
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  __m256 r = _mm256_round_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  // t - trunc(t) is exact; |fraction| >= 0.5 rounds away from zero.
  const __m256 fraction = _mm256_andnot_ps(sign_mask, _mm256_sub_ps(t, r));
  const __m256 away = _mm256_cmp_ps(fraction, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
  const __m256 one = _mm256_or_ps(_mm256_and_ps(t, sign_mask), _mm256_set1_ps(1.0f));
  r = _mm256_add_ps(r, _mm256_and_ps(away, one));
  return _mm256_cvttps_epi32(r);
}

// round(x * inverse) + zero_point, clamped: reference::AsymmetricQuantizeValue
// (zero point 0: SymmetricQuantizeRow's rounding).
DLG_TARGET_AVX2 void QuantizeAvx2(const float* v, int32_t n, int32_t zero_point, float inverse,
                                  int32_t qmin, int32_t qmax, int8_t* out) {
  const __m256i zp = _mm256_set1_epi32(zero_point);
  const __m256 inv = _mm256_set1_ps(inverse);
  const __m256i lo = _mm256_set1_epi32(qmin), hi = _mm256_set1_epi32(qmax);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i q[4];
    for (int j = 0; j < 4; ++j) {
      const __m256 x = _mm256_loadu_ps(v + i + 8 * j);
      const __m256i rounded = _mm256_add_epi32(RoundToInt(_mm256_mul_ps(x, inv)), zp);
      q[j] = _mm256_min_epi32(hi, _mm256_max_epi32(lo, rounded));
    }
    const __m256i words01 = _mm256_packs_epi32(q[0], q[1]);
    const __m256i words23 = _mm256_packs_epi32(q[2], q[3]);
    const __m256i bytes = _mm256_packs_epi16(words01, words23);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm256_permutevar8x32_epi32(bytes, order));
  }
  for (; i < n; ++i) {
    const auto rounded = static_cast<int32_t>(std::round(v[i] * inverse));
    const auto q = static_cast<int32_t>(static_cast<uint32_t>(rounded) +
                                        static_cast<uint32_t>(zero_point));
    out[i] = static_cast<int8_t>(std::min(qmax, std::max(qmin, q)));
  }
}

// RangeAvx2 and QuantizeAvx2 16 lanes at a time, with two independent
// minimum / maximum chains.
DLG_TARGET_AVX512 bool RangeAvx512(const float* v, int32_t n, float* lo, float* hi) {
  __m512 mn0 = _mm512_set1_ps(INFINITY), mx0 = _mm512_set1_ps(-INFINITY);
  __m512 mn1 = mn0, mx1 = mx0;
  __mmask16 nan = 0;
  int32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 x0 = _mm512_loadu_ps(v + i), x1 = _mm512_loadu_ps(v + i + 16);
    mn0 = _mm512_min_ps(mn0, x0);
    mx0 = _mm512_max_ps(mx0, x0);
    mn1 = _mm512_min_ps(mn1, x1);
    mx1 = _mm512_max_ps(mx1, x1);
    nan |= _mm512_cmp_ps_mask(x0, x1, _CMP_UNORD_Q);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(m, v + i);
    mn0 = _mm512_mask_min_ps(mn0, m, mn0, x);
    mx0 = _mm512_mask_max_ps(mx0, m, mx0, x);
    nan |= _mm512_mask_cmp_ps_mask(m, x, x, _CMP_UNORD_Q);
  }
  if (nan != 0) return false;
  *lo = _mm512_reduce_min_ps(_mm512_min_ps(mn0, mn1));
  *hi = _mm512_reduce_max_ps(_mm512_max_ps(mx0, mx1));
  return true;
}

DLG_TARGET_AVX512 inline __m512i RoundToInt512(__m512 t) {
  const __m512 r = _mm512_roundscale_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  // t - trunc(t) is exact; |fraction| >= 0.5 rounds away from zero.
  const __m512 fraction = _mm512_abs_ps(_mm512_sub_ps(t, r));
  const __mmask16 away = _mm512_cmp_ps_mask(fraction, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
  const __m512 one = _mm512_castsi512_ps(_mm512_or_si512(
      _mm512_and_si512(_mm512_castps_si512(t), _mm512_set1_epi32(INT32_MIN)),
      _mm512_castps_si512(_mm512_set1_ps(1.0f))));
  return _mm512_cvttps_epi32(_mm512_mask_add_ps(r, away, r, one));
}

DLG_TARGET_AVX512 void QuantizeAvx512(const float* v, int32_t n, int32_t zero_point,
                                      float inverse, int32_t qmin, int32_t qmax, int8_t* out) {
  const __m512i zp = _mm512_set1_epi32(zero_point);
  const __m512 inv = _mm512_set1_ps(inverse);
  const __m512i lo = _mm512_set1_epi32(qmin), hi = _mm512_set1_epi32(qmax);
  for (int32_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(m, v + i);
    const __m512i rounded = _mm512_add_epi32(RoundToInt512(_mm512_mul_ps(x, inv)), zp);
    _mm_mask_storeu_epi8(out + i, m,
                         _mm512_cvtepi32_epi8(_mm512_min_epi32(hi, _mm512_max_epi32(lo, rounded))));
  }
}

// ConvOutputRows (below) 8 channels at a time, the last 1-7 under a lane
// mask: the same IEEE operations in the same order, max(lo, v) / min(hi, v)
// in std::max(v, lo) / std::min(v, hi)'s operand order (NaN passes through
// as there). Rows in one call: a layer of 8-16 channels spent as long on a
// call, a dispatch and a scalar tail per pixel as on its outputs.
DLG_TARGET_AVX2 void ConvOutputAvx2(const int32_t* acc, size_t acc_stride, int rows, int n,
                                    const float* weight_scales, float image_scale,
                                    const float* bias, float act_min, float act_max, float* out,
                                    size_t out_stride) {
  const __m256 scale = _mm256_set1_ps(image_scale);
  const __m256 lo = _mm256_set1_ps(act_min), hi = _mm256_set1_ps(act_max);
  const int full = n / 8 * 8;
  const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(n - full),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  for (int r = 0; r < rows; ++r, acc += acc_stride, out += out_stride) {
    for (int c = 0; c < full; c += 8) {
      __m256 v = _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + c)));
      if (weight_scales != nullptr) v = _mm256_mul_ps(v, _mm256_loadu_ps(weight_scales + c));
      v = _mm256_mul_ps(v, scale);
      if (bias != nullptr) v = _mm256_add_ps(v, _mm256_loadu_ps(bias + c));
      _mm256_storeu_ps(out + c, _mm256_min_ps(hi, _mm256_max_ps(lo, v)));
    }
    if (full < n) {
      __m256 v = _mm256_cvtepi32_ps(_mm256_maskload_epi32(acc + full, tail));
      if (weight_scales != nullptr) v = _mm256_mul_ps(v, _mm256_maskload_ps(weight_scales + full, tail));
      v = _mm256_mul_ps(v, scale);
      if (bias != nullptr) v = _mm256_add_ps(v, _mm256_maskload_ps(bias + full, tail));
      _mm256_maskstore_ps(out + full, tail, _mm256_min_ps(hi, _mm256_max_ps(lo, v)));
    }
  }
}

#endif  // DELEGATO_X86

void FullyConnectedOutputRow(const HybridFullyConnectedKernelParams& p, const int32_t* acc,
                             float row_scale, const float* bias, float* out) {
  for (int32_t u = 0; u < p.units; ++u) {
    const float scale = row_scale * (p.per_channel ? p.weight_scales[u] : p.weight_scales[0]);
    const float v = (bias != nullptr ? bias[u] : 0.0f) + static_cast<float>(acc[u]) * scale;
    out[u] = p.clamp ? std::min(std::max(v, p.act_min), p.act_max) : v;
  }
}

// One row on the ISAs ConvOutputRows leaves to a row at a time.
void ConvOutputOneRow(Isa isa, const int32_t* acc, int n, const float* weight_scales,
                      float image_scale, const float* bias, float act_min, float act_max,
                      float* out) {
  int c = 0;
#if DELEGATO_ARM
  if (IsArmIsa(isa))
    c = ConvOutputNeon(acc, n, weight_scales, image_scale, bias, act_min, act_max, out);
#else
  (void)isa;
#endif
  for (; c < n; ++c) {
    float v = weight_scales != nullptr
                  ? static_cast<float>(acc[c]) * weight_scales[c] * image_scale
                  : static_cast<float>(acc[c]) * image_scale;
    if (bias != nullptr) v += bias[c];
    out[c] = std::min(std::max(v, act_min), act_max);
  }
}

}  // namespace

void ConvOutputRows(Isa isa, const int32_t* acc, size_t acc_stride, int rows, int n,
                    const float* weight_scales, float image_scale, const float* bias,
                    float act_min, float act_max, float* out, size_t out_stride) {
#if DELEGATO_X86
  if (isa != Isa::kScalar) {
    ConvOutputAvx2(acc, acc_stride, rows, n, weight_scales, image_scale, bias, act_min, act_max,
                   out, out_stride);
    return;
  }
#endif
  for (int r = 0; r < rows; ++r)
    ConvOutputOneRow(isa, acc + r * acc_stride, n, weight_scales, image_scale, bias, act_min,
                     act_max, out + r * out_stride);
}

// ---------------------------------------------------------------- HybridGemm

HybridGemm::HybridGemm(const int8_t* weights, int n, int k, Isa isa)
    : n_(n), k_(k), k_padded_((k + 1) / 2 * 2), n_padded_((n + kBlock - 1) / kBlock * kBlock) {
  isa_ = HybridVectorIsa(isa) ? isa : Isa::kScalar;
  packed_.Resize(static_cast<size_t>(n_padded_) * k_padded_);  // zeroed: padding
  PackTapPairs<kBlock>(weights, n, k, 0, packed_.data());
}

void HybridGemm::Multiply(const int16_t* a, int rows, int32_t* acc) const {
  const int blocks = n_padded_ / kBlock;
#if DELEGATO_X86
  if (isa_ == Isa::kAvx512Vnni) {
    MultiplyAvx512(packed_.data(), k_padded_, blocks, a, rows, acc, n_padded_);
    return;
  }
  if (isa_ == Isa::kAvx2) {
    MultiplyAvx2(packed_.data(), k_padded_, blocks, n_, a, rows, acc, n_padded_);
    return;
  }
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa_)) {
    MultiplyNeon(packed_.data(), k_padded_, blocks, a, rows, acc, n_padded_);
    return;
  }
#endif
  MultiplyScalar(packed_.data(), k_padded_, blocks, a, rows, acc, n_padded_);
}

void WidenRow(Isa isa, const int8_t* q, int k, int32_t zero_point, int16_t* a, int k_padded) {
#if DELEGATO_X86
  if (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni) {
    WidenAvx2(q, k, zero_point, a);
  } else
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa)) {
    WidenNeon(q, k, zero_point, a);
  } else
#endif
  {
    for (int i = 0; i < k; ++i) a[i] = static_cast<int16_t>(q[i] - zero_point);
  }
  for (int i = k; i < k_padded; ++i) a[i] = 0;
}

namespace {

using QuantizeFn = void (*)(const float*, int32_t, int32_t, float, int32_t, int32_t, int8_t*);

// The reference's parameters for a row's range [lo, hi] (a row of zeros
// when it is empty), then `quantize`: a vector form of its rounding.
void QuantizeInRange(QuantizeFn quantize, float lo, float hi, const float* values, int32_t n,
                     bool asymmetric, int8_t* quantized, float* scale, int32_t* zero_point) {
  if (asymmetric) {
    if (!reference::AsymmetricQuantizeParams(lo, hi, scale, zero_point)) {
      std::memset(quantized, 0, static_cast<size_t>(n));
      return;
    }
    quantize(values, n, *zero_point, 1.0f / *scale, -128, 127, quantized);
    return;
  }
  *zero_point = 0;
  float inverse = 0.0f;
  if (!reference::SymmetricQuantizeParams(lo, hi, scale, &inverse)) {
    std::memset(quantized, 0, static_cast<size_t>(n));
    return;
  }
  quantize(values, n, 0, inverse, -127, 127, quantized);
}

}  // namespace

void HybridQuantizeRow(Isa isa, const float* values, int32_t n, bool asymmetric,
                       int8_t* quantized, float* scale, int32_t* zero_point) {
  float lo = 0.0f, hi = 0.0f;
#if DELEGATO_X86
  const bool wide = isa == Isa::kAvx512Vnni;
  if ((isa == Isa::kAvx2 || wide) && n > 0 &&
      (wide ? RangeAvx512(values, n, &lo, &hi) : RangeAvx2(values, n, &lo, &hi))) {
    QuantizeInRange(wide ? QuantizeAvx512 : QuantizeAvx2, lo, hi, values, n, asymmetric,
                    quantized, scale, zero_point);
    return;
  }
#elif DELEGATO_ARM
  if (IsArmIsa(isa) && n > 0 && RangeNeon(values, n, &lo, &hi)) {
    QuantizeInRange(QuantizeNeon, lo, hi, values, n, asymmetric, quantized, scale, zero_point);
    return;
  }
#else
  (void)isa, (void)lo, (void)hi;
#endif
  if (asymmetric) {
    reference::AsymmetricQuantizeRow(values, n, quantized, scale, zero_point);
  } else {
    reference::SymmetricQuantizeRow(values, n, quantized, scale);
    *zero_point = 0;
  }
}

#if DELEGATO_X86
namespace {

// reference::AsymmetricQuantizeParams or SymmetricQuantizeParams (and the
// inverse HybridQuantizeRow then takes) for 8 rows' extremes at once: the
// same IEEE operations lane by lane, the zero point rounded half away from
// zero as std::round does. A lane whose range is empty gets scale 1, zero
// point 0 and `empty` set.
DLG_TARGET_AVX2 void QuantizeParams8(const float* lo, const float* hi, bool asymmetric,
                                     float* scale, float* inverse, int32_t* zero_point,
                                     int32_t* empty) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  const __m256 vlo = _mm256_loadu_ps(lo), vhi = _mm256_loadu_ps(hi);
  __m256 s, inv, is_empty;
  __m256i zp = _mm256_setzero_si256();
  if (asymmetric) {
    // std::min(0.0f, lo) and std::max(0.0f, hi) in the instructions' operand order.
    const __m256 rmin = _mm256_min_ps(vlo, zero), rmax = _mm256_max_ps(vhi, zero);
    is_empty = _mm256_cmp_ps(rmin, rmax, _CMP_EQ_OQ);
    s = _mm256_div_ps(_mm256_sub_ps(rmax, rmin), _mm256_set1_ps(255.0f));
    const __m256 from_min = _mm256_div_ps(rmin, s), from_max = _mm256_div_ps(rmax, s);
    const __m256 qmin = _mm256_set1_ps(-128.0f), qmax = _mm256_set1_ps(127.0f);
    const __m256 error_min =
        _mm256_add_ps(_mm256_set1_ps(128.0f), _mm256_andnot_ps(sign_mask, from_min));
    const __m256 error_max = _mm256_add_ps(qmax, _mm256_andnot_ps(sign_mask, from_max));
    const __m256 z =
        _mm256_blendv_ps(_mm256_sub_ps(qmax, from_max), _mm256_sub_ps(qmin, from_min),
                         _mm256_cmp_ps(error_min, error_max, _CMP_LT_OQ));
    // std::round and the int8_t cast, which keeps the low byte of the int32
    // conversion: the value itself in range, 0 for a NaN (an infinite extreme)
    // as on x86; then the nudge's ends.
    zp = _mm256_srai_epi32(_mm256_slli_epi32(RoundToInt(z), 24), 24);
    zp = _mm256_blendv_epi8(zp, _mm256_set1_epi32(-128),
                            _mm256_castps_si256(_mm256_cmp_ps(z, qmin, _CMP_LE_OQ)));
    zp = _mm256_blendv_epi8(zp, _mm256_set1_epi32(127),
                            _mm256_castps_si256(_mm256_cmp_ps(z, qmax, _CMP_GE_OQ)));
    zp = _mm256_andnot_si256(_mm256_castps_si256(is_empty), zp);
    inv = _mm256_div_ps(one, s);
  } else {
    const __m256 range =
        _mm256_max_ps(_mm256_andnot_ps(sign_mask, vlo), _mm256_andnot_ps(sign_mask, vhi));
    is_empty = _mm256_cmp_ps(range, zero, _CMP_EQ_OQ);
    s = _mm256_div_ps(range, _mm256_set1_ps(127.0f));
    inv = _mm256_div_ps(_mm256_set1_ps(127.0f), range);
  }
  _mm256_storeu_ps(scale, _mm256_blendv_ps(s, one, is_empty));
  _mm256_storeu_ps(inverse, inv);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(zero_point), zp);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(empty), _mm256_castps_si256(is_empty));
}

}  // namespace
#endif  // DELEGATO_X86

void HybridQuantizeRows(Isa isa, const float* values, int64_t stride, int rows, int32_t n,
                        bool asymmetric, int8_t* quantized, float* scales,
                        int32_t* zero_points) {
#if DELEGATO_X86
  const bool wide = isa == Isa::kAvx512Vnni;
  if ((isa == Isa::kAvx2 || wide) && n > 0) {
    auto quantize = wide ? QuantizeAvx512 : QuantizeAvx2;
    for (int r0 = 0; r0 < rows; r0 += 8) {
      const int count = std::min(8, rows - r0);
      float lo[8] = {}, hi[8] = {}, scale[8], inverse[8];
      int32_t zero_point[8], empty[8];
      bool finite[8] = {};
      for (int r = 0; r < count; ++r) {
        const float* v = values + (r0 + r) * stride;
        finite[r] = wide ? RangeAvx512(v, n, &lo[r], &hi[r]) : RangeAvx2(v, n, &lo[r], &hi[r]);
      }
      QuantizeParams8(lo, hi, asymmetric, scale, inverse, zero_point, empty);
      for (int r = 0; r < count; ++r) {
        const float* v = values + (r0 + r) * stride;
        int8_t* q = quantized + static_cast<int64_t>(r0 + r) * n;
        if (!finite[r]) {  // a NaN: the reference's own handling
          HybridQuantizeRow(Isa::kScalar, v, n, asymmetric, q, &scales[r0 + r],
                            &zero_points[r0 + r]);
          continue;
        }
        scales[r0 + r] = scale[r];
        zero_points[r0 + r] = zero_point[r];
        if (empty[r] != 0)
          std::memset(q, 0, static_cast<size_t>(n));
        else
          quantize(v, n, zero_point[r], inverse[r], asymmetric ? -128 : -127, 127, q);
      }
    }
    return;
  }
#endif
  for (int r = 0; r < rows; ++r)
    HybridQuantizeRow(isa, values + r * stride, n, asymmetric,
                      quantized + static_cast<int64_t>(r) * n, &scales[r], &zero_points[r]);
}

// ---------------------------------------------------------------- CONV_2D

bool HybridConvKernel::Covers(const reference::ConvGeometry& g) {
  const int64_t k = static_cast<int64_t>(g.filter_height) * g.filter_width * g.input_depth;
  return g.groups() == 1 && g.dilation_height == 1 && g.dilation_width == 1 && k > 0 &&
         k < (1 << 20) && g.output_depth > 0;
}

HybridConvKernel::HybridConvKernel(const HybridConvKernelParams& params, Isa isa, int num_threads)
    : p_(params),
      gemm_(params.filter, params.geometry.output_depth,
            params.geometry.filter_height * params.geometry.filter_width *
                params.geometry.input_depth,
            isa) {
  const reference::ConvGeometry& g = p_.geometry;
  // The widened image covers every tap of every output pixel: the padding
  // before the image, the image, and whatever the last window reaches past it.
  padded_height_ = std::max(g.pad_height + g.input_height,
                            (g.output_height - 1) * g.stride_height + g.filter_height);
  padded_width_ = std::max(g.pad_width + g.input_width,
                           (g.output_width - 1) * g.stride_width + g.filter_width);
  image_bytes_ = RoundUp(sizeof(int16_t) * padded_height_ * padded_width_ * g.input_depth, 64);
  // 1x1, stride 1, even depth: the widened image's pixels are the GEMM's rows.
  rows_in_place_ = g.filter_height == 1 && g.filter_width == 1 && g.stride_height == 1 &&
                   g.stride_width == 1 && g.input_depth == gemm_.k_padded() &&
                   padded_width_ == g.input_width && padded_height_ == g.input_height;
  // A panel of rows stays within about 64 KB (L2-resident while every
  // weight block passes over it).
  block_rows_ = std::clamp(32768 / gemm_.k_padded(), 1, 96);
  const int64_t pixels = static_cast<int64_t>(g.output_height) * g.output_width;
  const int64_t rows = g.batches * pixels;
  // Below about 10 µs of work the hand-off to another thread costs more
  // than it saves.
  constexpr int64_t kMinParallelMacs = int64_t{1} << 19;
  const int64_t macs = rows * gemm_.k() * gemm_.n();
  num_tasks_ = macs < kMinParallelMacs
                   ? 1
                   : static_cast<int>(std::clamp<int64_t>((rows + block_rows_ - 1) / block_rows_,
                                                          1, std::max(1, num_threads)));
  panel_bytes_ = rows_in_place_ ? 0 : RoundUp(sizeof(int16_t) * block_rows_ * gemm_.k_padded(), 64);
  per_task_bytes_ = panel_bytes_ + RoundUp(sizeof(int32_t) * block_rows_ * gemm_.n_padded(), 64);
}

bool HybridGroupedConv::Covers(const reference::ConvGeometry& g) {
  reference::ConvGeometry group;
  return GroupGeometry(g, &group) && HybridConvKernel::Covers(group);
}

HybridGroupedConv::HybridGroupedConv(const HybridConvKernelParams& params, Isa isa,
                                     int num_threads)
    : g_(params.geometry) {
  const int groups = g_.groups();
  const int per_group = g_.filters_per_group();
  HybridConvKernelParams gp = params;
  GroupGeometry(g_, &gp.geometry);
  const size_t filter_per_group =
      static_cast<size_t>(per_group) * g_.filter_height * g_.filter_width * g_.filter_depth;
  for (int gi = 0; gi < groups; ++gi) {
    gp.filter = params.filter + gi * filter_per_group;
    gp.weight_scales = params.weight_scales + static_cast<size_t>(gi) * per_group;
    groups_.push_back(std::make_unique<HybridConvKernel>(gp, isa, 1));
  }
  num_tasks_ = GroupedTasks(g_, num_threads, int64_t{1} << 19);
  scratch_ = PlanGroupedScratch(g_, sizeof(int8_t), sizeof(float), groups_[0]->scratch_bytes());
}

HybridGroupedConv::~HybridGroupedConv() = default;

void HybridGroupedConv::RunTask(int task, const int8_t* quantized, const int32_t* zero_points,
                                const float* scales, const float* bias, float* output,
                                uint8_t* scratch) const {
  const size_t image = static_cast<size_t>(g_.input_height) * g_.input_width * g_.filter_depth;
  const size_t per_group = g_.filters_per_group();
  RunTaskGroups(g_, scratch_, task, num_tasks_, quantized, sizeof(int8_t), output, sizeof(float),
                scratch, [&](int gi, uint8_t* in, uint8_t* out, uint8_t* kernel_scratch) {
                  const HybridConvKernel& kernel = *groups_[gi];
                  const int8_t* group_in = reinterpret_cast<const int8_t*>(in);
                  for (int64_t b = 0; b < g_.batches; ++b)
                    kernel.WidenImage(b, group_in + b * image, zero_points[b], kernel_scratch);
                  kernel.RunTask(0, scales, bias != nullptr ? bias + gi * per_group : nullptr,
                                 reinterpret_cast<float*>(out), kernel_scratch);
                });
}

void HybridConvKernel::WidenImage(int64_t batch, const int8_t* quantized_image,
                                  int32_t zero_point, uint8_t* scratch) const {
  const reference::ConvGeometry& g = p_.geometry;
  const Isa isa = gemm_.isa();
  int16_t* padded = reinterpret_cast<int16_t*>(scratch + image_bytes_ * batch);
  const size_t depth = g.input_depth;
  const size_t padded_row = static_cast<size_t>(padded_width_) * depth;
  const size_t left = static_cast<size_t>(g.pad_width) * depth;
  const size_t image_row = static_cast<size_t>(g.input_width) * depth;
  const size_t right = padded_row - left - image_row;
  // Padding taps add 0, as the reference skips them.
  std::memset(padded, 0, sizeof(int16_t) * g.pad_height * padded_row);
  for (int32_t y = 0; y < g.input_height; ++y) {
    int16_t* dst = padded + (static_cast<size_t>(g.pad_height) + y) * padded_row;
    std::memset(dst, 0, sizeof(int16_t) * left);
    WidenRow(isa, quantized_image + y * image_row, static_cast<int>(image_row), zero_point,
             dst + left, static_cast<int>(image_row));
    std::memset(dst + left + image_row, 0, sizeof(int16_t) * right);
  }
  const int32_t below = padded_height_ - g.pad_height - g.input_height;
  std::memset(padded + static_cast<size_t>(g.pad_height + g.input_height) * padded_row, 0,
              sizeof(int16_t) * below * padded_row);
}

void HybridConvKernel::RunTask(int task, const float* scales, const float* bias, float* output,
                               uint8_t* scratch) const {
  const reference::ConvGeometry& g = p_.geometry;
  const Isa isa = gemm_.isa();
  const int64_t pixels = static_cast<int64_t>(g.output_height) * g.output_width;
  const int64_t rows = g.batches * pixels;
  const int64_t begin = rows * task / num_tasks_, end = rows * (task + 1) / num_tasks_;
  uint8_t* mine = scratch + image_bytes_ * g.batches + per_task_bytes_ * task;
  int16_t* panel = reinterpret_cast<int16_t*>(mine);
  int32_t* acc = reinterpret_cast<int32_t*>(mine + panel_bytes_);
  const int k_padded = gemm_.k_padded();
  const size_t depth = g.input_depth;
  const size_t padded_row = static_cast<size_t>(padded_width_) * depth;
  const size_t tap_run = sizeof(int16_t) * g.filter_width * depth;
  const size_t taps = static_cast<size_t>(g.filter_height) * g.filter_width * depth;
  for (int64_t m0 = begin; m0 < end;) {
    // A block stays within one image (its rows share the image's scale).
    const int64_t batch = m0 / pixels;
    const int count = static_cast<int>(
        std::min<int64_t>({block_rows_, end - m0, (batch + 1) * pixels - m0}));
    const int16_t* image = reinterpret_cast<const int16_t*>(scratch + image_bytes_ * batch);
    const int16_t* a = image + (m0 - batch * pixels) * depth;
    if (!rows_in_place_) {
      // im2col: per filter row, the window's taps are one run of the padded
      // image.
      for (int r = 0; r < count; ++r) {
        const int64_t pixel = m0 - batch * pixels + r;
        const int32_t out_y = static_cast<int32_t>(pixel / g.output_width);
        const int32_t out_x = static_cast<int32_t>(pixel % g.output_width);
        const int16_t* src = image + static_cast<size_t>(out_y) * g.stride_height * padded_row +
                             static_cast<size_t>(out_x) * g.stride_width * depth;
        int16_t* row = panel + static_cast<size_t>(r) * k_padded;
        // Constant-size copies for the usual runs (a call each cost 8% of a
        // grouped ResNeXt's time).
        CopyRuns(reinterpret_cast<const uint8_t*>(src), sizeof(int16_t) * padded_row,
                 reinterpret_cast<uint8_t*>(row), tap_run, g.filter_height, tap_run);
        for (size_t i = taps; i < static_cast<size_t>(k_padded); ++i) row[i] = 0;
      }
      a = panel;
    }
    gemm_.Multiply(a, count, acc);
    ConvOutputRows(isa, acc, gemm_.n_padded(), count, g.output_depth,
                   p_.per_channel ? p_.weight_scales : nullptr, scales[batch], bias, p_.act_min,
                   p_.act_max, output + m0 * g.output_depth, g.output_depth);
    m0 += count;
  }
}

// ---------------------------------------------------------------- FULLY_CONNECTED

HybridFullyConnectedKernel::HybridFullyConnectedKernel(
    const HybridFullyConnectedKernelParams& params, Isa isa)
    : p_(params), gemm_(params.weights, params.units, params.depth, isa) {}

size_t HybridFullyConnectedKernel::scratch_bytes(int64_t rows) const {
  (void)rows;  // rows are processed kBlockRows at a time
  return RoundUp(static_cast<size_t>(p_.depth) * kBlockRows, 64) +
         RoundUp(sizeof(int16_t) * kBlockRows * gemm_.k_padded(), 64) +
         RoundUp(sizeof(int32_t) * kBlockRows * gemm_.n_padded(), 64);
}

void HybridFullyConnectedKernel::Run(const float* input, const float* bias, float* output,
                                     int64_t begin, int64_t end, uint8_t* scratch) const {
  const Isa isa = gemm_.isa();
  int8_t* quantized = reinterpret_cast<int8_t*>(scratch);
  int16_t* panel = reinterpret_cast<int16_t*>(
      scratch + RoundUp(static_cast<size_t>(p_.depth) * kBlockRows, 64));
  int32_t* acc = reinterpret_cast<int32_t*>(
      reinterpret_cast<uint8_t*>(panel) +
      RoundUp(sizeof(int16_t) * kBlockRows * gemm_.k_padded(), 64));
  float row_scales[kBlockRows];
  int32_t zero_points[kBlockRows];
  for (int64_t m0 = begin; m0 < end; m0 += kBlockRows) {
    const int count = static_cast<int>(std::min<int64_t>(kBlockRows, end - m0));
    HybridQuantizeRows(isa, input + m0 * p_.depth, p_.depth, count, p_.depth, p_.asymmetric,
                       quantized, row_scales, zero_points);
    for (int r = 0; r < count; ++r)
      WidenRow(isa, quantized + static_cast<size_t>(r) * p_.depth, p_.depth, zero_points[r],
               panel + static_cast<size_t>(r) * gemm_.k_padded(), gemm_.k_padded());
    gemm_.Multiply(panel, count, acc);
    for (int r = 0; r < count; ++r)
      FullyConnectedOutputRow(p_, acc + static_cast<size_t>(r) * gemm_.n_padded(), row_scales[r],
                              bias, output + (m0 + r) * p_.units);
  }
}

HybridBatchMatMulKernel::HybridBatchMatMulKernel(const reference::BatchMatMulGeometry& g,
                                                 const int8_t* rhs, Isa isa)
    : g_(g), isa_(isa) {
  const int64_t matrices = int64_t{g.rhs_batch[0]} * g.rhs_batch[1] * g.rhs_batch[2];
  const size_t size = static_cast<size_t>(g.depth) * g.cols;
  std::vector<int8_t> columns(size);
  for (int64_t mat = 0; mat < matrices; ++mat) {
    const int8_t* b = rhs + mat * static_cast<int64_t>(size);
    if (g.adj_y) {
      std::copy_n(b, size, columns.begin());  // already [n][k]
    } else {
      for (int32_t k = 0; k < g.depth; ++k)
        for (int32_t n = 0; n < g.cols; ++n)
          columns[static_cast<size_t>(n) * g.depth + k] = b[static_cast<size_t>(k) * g.cols + n];
    }
    gemms_.push_back(std::make_unique<HybridGemm>(columns.data(), g.cols, g.depth, isa));
  }
}

size_t HybridBatchMatMulKernel::scratch_bytes() const {
  if (gemms_.empty()) return 0;
  const HybridGemm& gemm = *gemms_.front();
  return RoundUp(size_t{kBlockRows} * gemm.k_padded() * sizeof(int16_t), 64) +
         size_t{kBlockRows} * gemm.n_padded() * sizeof(int32_t);
}

void HybridBatchMatMulKernel::QuantizeLhs(const reference::HybridBatchMatMulParams& p,
                                          const float* lhs, float* row_buffer, int8_t* quantized,
                                          float* scales, int32_t* zero_points,
                                          int64_t matrix_begin, int64_t matrix_end) const {
  if (!g_.adj_x) {  // rows contiguous: quantized together
    const int64_t matrix_size = static_cast<int64_t>(g_.rows) * g_.depth;
    for (int64_t mat = matrix_begin; mat < matrix_end; ++mat) {
      const int64_t row0 = mat * g_.rows;
      HybridQuantizeRows(isa_, lhs + mat * matrix_size, g_.depth, g_.rows, g_.depth, p.asymmetric,
                         quantized + row0 * g_.depth, scales + row0, zero_points + row0);
      for (int32_t m = 0; m < g_.rows; ++m) scales[row0 + m] *= p.rhs_scale;
    }
    return;
  }
  reference::QuantizeBatchMatMulLhs(
      g_, p, lhs, row_buffer, quantized, scales, zero_points, matrix_begin, matrix_end,
      [&](const float* v, int32_t n, int8_t* q, float* scale, int32_t* zp) {
        HybridQuantizeRow(isa_, v, n, p.asymmetric, q, scale, zp);
        if (!p.asymmetric) *zp = 0;
      });
}

void HybridBatchMatMulKernel::Run(const reference::HybridBatchMatMulParams& p,
                                  const int8_t* quantized, const float* scales,
                                  const int32_t* zero_points, float* out, uint8_t* scratch) const {
  const int64_t lhs_size = std::max<int64_t>(static_cast<int64_t>(g_.rows) * g_.depth, 1);
  const int64_t rhs_size = std::max<int64_t>(static_cast<int64_t>(g_.depth) * g_.cols, 1);
  reference::ForEachBatchMatrix(g_, [&](int64_t l, int64_t r, int64_t o) {
    const int64_t first_row = l / lhs_size * g_.rows;
    const HybridGemm& gemm = *gemms_[static_cast<size_t>(r / rhs_size)];
    const int32_t* sums = p.column_sums + r / rhs_size * g_.cols;
    int16_t* panel = reinterpret_cast<int16_t*>(scratch);
    int32_t* acc = reinterpret_cast<int32_t*>(
        scratch + RoundUp(size_t{kBlockRows} * gemm.k_padded() * sizeof(int16_t), 64));
    for (int32_t m0 = 0; m0 < g_.rows; m0 += kBlockRows) {
      const int count = std::min(kBlockRows, g_.rows - m0);
      for (int i = 0; i < count; ++i)
        WidenRow(isa_, quantized + (first_row + m0 + i) * g_.depth, g_.depth, 0,
                 panel + static_cast<size_t>(i) * gemm.k_padded(), gemm.k_padded());
      gemm.Multiply(panel, count, acc);
      for (int i = 0; i < count; ++i) {
        const int64_t row = first_row + m0 + i;
        const float scale = scales[row];
        const float offset = static_cast<float>(zero_points[row]);
        const int32_t* row_acc = acc + static_cast<size_t>(i) * gemm.n_padded();
        float* dst = out + o + static_cast<int64_t>(m0 + i) * g_.cols;
        for (int32_t n = 0; n < g_.cols; ++n) {
          const int32_t total = static_cast<int32_t>(static_cast<float>(row_acc[n]) -
                                                     static_cast<float>(sums[n]) * offset);
          dst[n] = scale * static_cast<float>(total);
        }
      }
    }
  });
}

}  // namespace delegato::optimized
