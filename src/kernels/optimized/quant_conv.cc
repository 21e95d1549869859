#include "kernels/optimized/quant_conv.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/optimized/grouped_conv.h"
#include "kernels/optimized/tap_pairs.h"
#include "kernels/reference/fully_connected.h"

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

constexpr int kPanelRowMultiple = 48;  // a multiple of every kernel's row count
constexpr int kMaxTileRows = 16;       // the most rows a kernel computes at once (AMX)
constexpr size_t kPanelTargetBytes = 96 * 1024;
constexpr int kMaxBlockRows = 1536;
// The vnni im2col copies write whole vectors: up to this many bytes past the
// end of what they fill, which the panel reserves.
constexpr size_t kIm2colOverwrite = 64;
// AMX tiles multiply 64 taps at a time (the weights' padding with AMX).
constexpr int kAmxTaps = 64;

// ------------------------------------------------------------ slab kernels

// The double rescale of one channel, then offset and clamp.
inline uint8_t RescaleDoubleOne(const RequantChannels& rq, const double* scale, int c,
                                int32_t acc) {
  int32_t v = reference::RescaleDouble(acc, scale[c]);
  v = v < rq.clamp_min ? rq.clamp_min : v;
  v = v > rq.clamp_max ? rq.clamp_max : v;
  return static_cast<uint8_t>(v + rq.output_offset);
}

#if DELEGATO_X86

// round(double(acc) * scale) half away from zero, INT32_MIN when out of
// range (reference::RescaleDouble), for 8 lanes.
DLG_TARGET_AVX512 inline __m256i RescaleDouble8(__m256i acc, __m512d scale) {
  const __m512d x = _mm512_mul_pd(_mm512_cvtepi32_pd(acc), scale);
  const __m512d t = _mm512_roundscale_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __mmask8 away =
      _mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_sub_pd(x, t)), _mm512_set1_pd(0.5), _CMP_GE_OQ);
  const __m512d step = _mm512_castsi512_pd(_mm512_or_si512(
      _mm512_castpd_si512(_mm512_set1_pd(1.0)),
      _mm512_and_si512(_mm512_castpd_si512(x), _mm512_set1_epi64(INT64_MIN))));
  const __m512d r = _mm512_mask_add_pd(t, away, t, step);
  const __mmask8 in_range = _mm512_cmp_pd_mask(r, _mm512_set1_pd(-2147483648.0), _CMP_GE_OQ) &
                            _mm512_cmp_pd_mask(r, _mm512_set1_pd(2147483648.0), _CMP_LT_OQ);
  return _mm256_mask_blend_epi32(in_range, _mm256_set1_epi32(INT32_MIN), _mm512_cvttpd_epi32(r));
}

DLG_TARGET_AVX512 inline __m512i RescaleDouble16(__m512i acc, const double* scale) {
  const __m256i lo = RescaleDouble8(_mm512_castsi512_si256(acc), _mm512_load_pd(scale));
  const __m256i hi = RescaleDouble8(_mm512_extracti64x4_epi64(acc, 1), _mm512_load_pd(scale + 8));
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// MR panel rows from a times one slab of NB 16-channel blocks of weights:
// the accumulators start at the column bias (one add fewer per output
// vector) and stay in registers.
template <int MR, int NB>
DLG_TARGET_AVX512 inline __attribute__((always_inline)) void VnniAccumulate(
    const uint8_t* a, size_t stride, int k4, const int8_t* w, const __m512i (&bias)[NB],
    __m512i (&acc)[MR][NB]) {
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) acc[r][j] = bias[j];
  for (int t = 0; t < k4; ++t, w += NB * 64, a += 4) {
    __m512i wv[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) wv[j] = _mm512_load_si512(w + j * 64);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      int32_t quad;
      std::memcpy(&quad, a + r * stride, 4);
      const __m512i av = _mm512_set1_epi32(quad);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], av, wv[j]);
    }
  }
}

// Where a slab kernel's accumulators come from: Load<MR, NB>(r0, bias, acc)
// sets acc to the column bias plus panel rows r0..r0+MR-1 times the slab.
// vpdpbusd, in registers:
struct VnniSource {
  const uint8_t* panel;
  size_t stride;
  int k4;
  const int8_t* weights;
  template <int MR, int NB>
  DLG_TARGET_AVX512 inline __attribute__((always_inline)) void Load(
      int r0, const __m512i (&bias)[NB], __m512i (&acc)[MR][NB]) const {
    VnniAccumulate<MR, NB>(panel + static_cast<size_t>(r0) * stride, stride, k4, weights, bias,
                           acc);
  }
};

// A panel of one row (a FULLY_CONNECTED or 1x1 convolution over one pixel,
// as in squeeze-and-excitation blocks): VnniAccumulate would run MR rows'
// multiply-adds for it. Its dot products run alone instead, in four
// partial sums per block so that consecutive tap groups do not wait on one
// another; the other rows are left at the bias (computed, never stored).
struct VnniRowSource {
  const uint8_t* panel;
  int k4;
  const int8_t* weights;
  template <int MR, int NB>
  DLG_TARGET_AVX512 inline __attribute__((always_inline)) void Load(
      int r0, const __m512i (&bias)[NB], __m512i (&acc)[MR][NB]) const {
    (void)r0;  // the one row
    __m512i part[4][NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      part[0][j] = bias[j];
      part[1][j] = part[2][j] = part[3][j] = _mm512_setzero_si512();
    }
    const int8_t* w = weights;
    const uint8_t* a = panel;
    int t = 0;
    for (; t + 4 <= k4; t += 4, w += 4 * NB * 64, a += 16) {
#pragma GCC unroll 4
      for (int p = 0; p < 4; ++p) {
        int32_t quad;
        std::memcpy(&quad, a + 4 * p, 4);
        const __m512i av = _mm512_set1_epi32(quad);
#pragma GCC unroll 4
        for (int j = 0; j < NB; ++j)
          part[p][j] = _mm512_dpbusd_epi32(part[p][j], av, _mm512_load_si512(w + (p * NB + j) * 64));
      }
    }
    for (; t < k4; ++t, w += NB * 64, a += 4) {
      int32_t quad;
      std::memcpy(&quad, a, 4);
      const __m512i av = _mm512_set1_epi32(quad);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j)
        part[0][j] = _mm512_dpbusd_epi32(part[0][j], av, _mm512_load_si512(w + j * 64));
    }
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      acc[0][j] = _mm512_add_epi32(_mm512_add_epi32(part[0][j], part[1][j]),
                                   _mm512_add_epi32(part[2][j], part[3][j]));
#pragma GCC unroll 16
      for (int r = 1; r < MR; ++r) acc[r][j] = bias[j];
    }
  }
};

// AMX: 16 panel rows times a slab of NB blocks into c ([16][NB * 16] int32).
// Tiles 0..NB-1 accumulate 16 rows x 16 channels each; tile 4 holds 16 rows
// x 64 panel bytes; tiles 6 and 7 alternate for the weights (16 groups of 4
// taps x 16 channels, rows NB * 64 bytes apart: the vnni packing read as
// tiles). tdpbusd multiplies unsigned panel bytes by signed weights like
// vpdpbusd, so the sums are the vnni kernel's. The weights are padded with
// zeros to a multiple of 64 taps: the last chunk's bytes past a panel row's
// taps (the next row's, or the panel's reserve) add nothing.
constexpr int kAmxRows = 16;

struct alignas(64) AmxTileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

const AmxTileConfig& AmxConfig() {
  static const AmxTileConfig config = [] {
    AmxTileConfig c;
    for (int t : {0, 1, 2, 3, 4, 6, 7}) {
      c.rows[t] = kAmxRows;
      c.bytes_per_row[t] = 64;
    }
    return c;
  }();
  return config;
}

DLG_TARGET_AMX void AmxBegin() { _tile_loadconfig(&AmxConfig()); }
DLG_TARGET_AMX void AmxEnd() { _tile_release(); }

template <int NB>
DLG_TARGET_AMX __attribute__((noinline)) void AmxTileProduct(const uint8_t* a, size_t stride,
                                                             int chunks, const int8_t* w,
                                                             int32_t* c) {
  constexpr size_t kWeightStride = NB * 64;
  _tile_zero(0);
  if constexpr (NB > 1) _tile_zero(1);
  if constexpr (NB > 2) _tile_zero(2);
  if constexpr (NB > 3) _tile_zero(3);
  for (int t = 0; t < chunks; ++t, a += kAmxTaps, w += kAmxTaps / 4 * kWeightStride) {
    _tile_loadd(4, a, stride);
    _tile_loadd(6, w, kWeightStride);
    _tile_dpbusd(0, 4, 6);
    if constexpr (NB > 1) {
      _tile_loadd(7, w + 64, kWeightStride);
      _tile_dpbusd(1, 4, 7);
    }
    if constexpr (NB > 2) {
      _tile_loadd(6, w + 128, kWeightStride);
      _tile_dpbusd(2, 4, 6);
    }
    if constexpr (NB > 3) {
      _tile_loadd(7, w + 192, kWeightStride);
      _tile_dpbusd(3, 4, 7);
    }
  }
  _tile_stored(0, c, kWeightStride);
  if constexpr (NB > 1) _tile_stored(1, c + 16, kWeightStride);
  if constexpr (NB > 2) _tile_stored(2, c + 32, kWeightStride);
  if constexpr (NB > 3) _tile_stored(3, c + 48, kWeightStride);
}

// AMX sums of 16 rows at a time, handed to the output stage MR rows at a
// time (MR divides 16).
template <int NB>
struct AmxSource {
  AmxSource(const uint8_t* panel_in, size_t stride_in, int chunks_in, const int8_t* weights_in)
      : panel(panel_in), stride(stride_in), chunks(chunks_in), weights(weights_in) {}
  const uint8_t* panel;
  size_t stride;
  int chunks;  // of kAmxTaps
  const int8_t* weights;
  alignas(64) int32_t sums[kAmxRows * NB * 16];
  template <int MR, int NB2>
  DLG_TARGET_AVX512 inline __attribute__((always_inline)) void Load(
      int r0, const __m512i (&bias)[NB2], __m512i (&acc)[MR][NB2]) {
    static_assert(NB2 == NB && kAmxRows % MR == 0);
    if (r0 % kAmxRows == 0)
      AmxTileProduct<NB>(panel + static_cast<size_t>(r0) * stride, stride, chunks, weights, sums);
    const int32_t* row = sums + (r0 % kAmxRows) * NB * 16;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j)
        acc[r][j] = _mm512_add_epi32(_mm512_load_si512(row + r * NB * 16 + j * 16), bias[j]);
  }
};

// The magnitude requantization's output stage (requantize_magnitude.h):
// the output zero point and the activation bounds in registers.
struct MagnitudeOutput {
  __m512i offset16;  // output zero point, int16 lanes
  __m512i min8, max8;
  __m512i transpose;  // MagnitudeQuadBytes' dword order
};

DLG_TARGET_AVX512 inline MagnitudeOutput LoadMagnitudeOutput(int32_t zero_point, int32_t act_min,
                                                             int32_t act_max) {
  return MagnitudeOutput{
      _mm512_set1_epi16(static_cast<int16_t>(zero_point)),
      _mm512_set1_epi8(static_cast<char>(act_min)), _mm512_set1_epi8(static_cast<char>(act_max)),
      _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15)};
}

// Output zero point plus or minus the packed magnitudes m of accumulators
// a and c (int16 lanes a 0-3, c 0-3, a 4-7, c 4-7, ...), with their signs:
// int16 saturation keeps values outside the output range outside it.
DLG_TARGET_AVX512 inline __attribute__((always_inline)) __m512i SignedMagnitudeWords(
    __m512i m, __m512i a, __m512i c, __m512i offset16) {
  const __mmask32 negative = _mm512_movepi16_mask(_mm512_packs_epi32(a, c));
  return _mm512_mask_subs_epi16(_mm512_adds_epi16(m, offset16), negative, offset16, m);
}

// Four accumulator vectors a0..a3 (16 channels each) and their magnitudes
// m0..m3 as output bytes, clamped: bytes 16k..16k+15 are vector k's. The
// packs leave dword 4l + k holding vector k's channels 4l..4l+3; one dword
// permute puts each vector's 16 bytes together. The saturating narrowings
// keep order, so clamping the bytes gives the reference's clamp.
template <bool kSigned>
DLG_TARGET_AVX512 inline __attribute__((always_inline)) __m512i MagnitudeQuadBytes(
    __m512i a0, __m512i a1, __m512i a2, __m512i a3, __m512i m0, __m512i m1, __m512i m2,
    __m512i m3, const MagnitudeOutput& o) {
  const __m512i w01 = SignedMagnitudeWords(_mm512_packs_epi32(m0, m1), a0, a1, o.offset16);
  const __m512i w23 = SignedMagnitudeWords(_mm512_packs_epi32(m2, m3), a2, a3, o.offset16);
  __m512i bytes = kSigned ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
  bytes = _mm512_permutexvar_epi32(o.transpose, bytes);
  return kSigned ? _mm512_min_epi8(_mm512_max_epi8(bytes, o.min8), o.max8)
                 : _mm512_min_epu8(_mm512_max_epu8(bytes, o.min8), o.max8);
}

// The slab kernels with magnitude requantization: without and with IFMA,
// each compiled for its own target.
#define DLG_MAGNITUDE_KERNEL VnniMagnitudeSlabKernel
#define DLG_MAGNITUDE_TARGET DLG_TARGET_AVX512
#define DLG_MAGNITUDE Magnitude512
#define DLG_MAGNITUDE_IFMA false
#include "kernels/optimized/quant_conv_magnitude.inc"
#undef DLG_MAGNITUDE_KERNEL
#undef DLG_MAGNITUDE_TARGET
#undef DLG_MAGNITUDE
#undef DLG_MAGNITUDE_IFMA
#define DLG_MAGNITUDE_KERNEL VnniMagnitudeIfmaSlabKernel
#define DLG_MAGNITUDE_TARGET DLG_TARGET_AVX512_IFMA
#define DLG_MAGNITUDE MagnitudeIfma512
#define DLG_MAGNITUDE_IFMA true
#include "kernels/optimized/quant_conv_magnitude.inc"
#undef DLG_MAGNITUDE_KERNEL
#undef DLG_MAGNITUDE_TARGET
#undef DLG_MAGNITUDE
#undef DLG_MAGNITUDE_IFMA

// How a slab kernel requantizes: requantize.h, requantize64.h (narrow or
// wide channels), or FULLY_CONNECTED's double rescale.
enum class Requant { kFixed, kShift64, kShift64Wide, kDouble };

// Rows [0, rows) of the panel times one slab of NB 16-channel blocks, MR rows
// at a time from `source` (VnniSource, AmxSource); requantized and stored.
template <int MR, int NB, Requant kRequant, class Source>
DLG_TARGET_AVX512 void VnniSlabKernel(Source& source, int rows, const int32_t* column_bias,
                                      const int32_t* row_terms, const RequantChannels& rq,
                                      const Requant64Channels& rq64, const double* double_scale,
                                      int n0, int n, uint8_t* out, size_t out_stride) {
  constexpr bool kDouble = kRequant == Requant::kDouble;
  constexpr bool kShift64 = kRequant == Requant::kShift64 || kRequant == Requant::kShift64Wide;
  const __m512i lo = _mm512_set1_epi32(rq.clamp_min);
  const __m512i hi = _mm512_set1_epi32(rq.clamp_max);
  const __m512i offset = _mm512_set1_epi32(rq.output_offset);
  const Requant64Bounds bounds = LoadRequant64Bounds(rq64);
  __m512i bias[NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) bias[j] = _mm512_load_si512(column_bias + n0 + 16 * j);
  for (int r0 = 0; r0 < rows; r0 += MR) {
    __m512i acc[MR][NB];
    source.template Load<MR, NB>(r0, bias, acc);
    const int valid_rows = std::min(MR, rows - r0);
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      const int c = n0 + 16 * j;
      const int valid = std::min(16, n - c);
      const __mmask16 mask = static_cast<__mmask16>(valid >= 16 ? 0xFFFF : (1u << valid) - 1);
      if constexpr (kShift64) {
        const Requant64Block p = LoadRequant64Block(rq64, c);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          if (r >= valid_rows) break;
          __m512i v = acc[r][j];
          if (row_terms != nullptr) v = _mm512_add_epi32(v, _mm512_set1_epi32(row_terms[r0 + r]));
          v = Requant64<kRequant == Requant::kShift64Wide>(v, p, bounds);
          _mm_mask_storeu_epi8(out + static_cast<size_t>(r0 + r) * out_stride + c, mask,
                               ClampToBytes64(v, bounds));
        }
        continue;
      }
      const Requant512 p = LoadRequant512(rq, c);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        if (r >= valid_rows) break;
        __m512i v = acc[r][j];
        if (row_terms != nullptr) v = _mm512_add_epi32(v, _mm512_set1_epi32(row_terms[r0 + r]));
        if constexpr (kDouble) {
          v = RescaleDouble16(v, double_scale + c);
          v = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(v, lo), hi), offset);
        } else {
          v = Requantize512(v, p, lo, hi, offset);
        }
        _mm_mask_storeu_epi8(out + static_cast<size_t>(r0 + r) * out_stride + c, mask,
                             _mm512_cvtepi32_epi8(v));
      }
    }
  }
}

// reference::RescaleDouble for 4 lanes: round(double(acc) * scale), half away
// from zero (x - trunc(x) is exact, so a fraction of at least one half steps
// away). An out-of-range result converts to INT32_MIN, the value cvttpd2dq
// returns for anything outside int32 and the one the reference reproduces.
DLG_TARGET_AVX2 inline __m128i RescaleDouble4(__m128i acc, __m256d scale) {
  const __m256d x = _mm256_mul_pd(_mm256_cvtepi32_pd(acc), scale);
  const __m256d t = _mm256_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d away =
      _mm256_cmp_pd(_mm256_andnot_pd(sign, _mm256_sub_pd(x, t)), _mm256_set1_pd(0.5), _CMP_GE_OQ);
  const __m256d step =
      _mm256_and_pd(away, _mm256_or_pd(_mm256_set1_pd(1.0), _mm256_and_pd(x, sign)));
  return _mm256_cvttpd_epi32(_mm256_add_pd(t, step));
}

// RescaleDouble4 for 8 lanes; scale 32-byte aligned.
DLG_TARGET_AVX2 inline __m256i RescaleDouble8Avx2(__m256i acc, const double* scale) {
  const __m128i lo = RescaleDouble4(_mm256_castsi256_si128(acc), _mm256_load_pd(scale));
  const __m128i hi = RescaleDouble4(_mm256_extracti128_si256(acc, 1), _mm256_load_pd(scale + 4));
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

// Rows [0, rows) of an int16 panel (x - x_zp) times one 16-channel block of
// int16 weights [k/2][16][2] (w - w_zp), MR rows at a time: 2 * MR
// accumulators, two weight vectors and one broadcast fill the 16 ymm
// registers at MR = 6. Each pair product sum is exact in int32 (vpmaddwd);
// sums wrap modulo 2^32 as the reference's. The requantization constants are
// loaded after the tap loop: held across it (as at MR = 4 before), they made
// GCC copy every accumulator once per iteration.
// NV = 2 vectors (16 channels) at MR = 6; NV = 1 (8 channels: a block whose
// channels past the eighth are padding, as in layers of 8 or 24 outputs) at
// MR = 12, the same 12 accumulators, so padding is not computed. The packed
// weights are the same (the kernel reads the first half of each 16-channel row).
// kMagnitude: the slab's channels requantize in the magnitude form (Prepare
// proved it exact; 10 operations per 8 lanes instead of 15), `mc` holding
// their constants; kLeftShift is then false.
template <int MR, int NV, bool kLeftShift, bool kMagnitude = false>
DLG_TARGET_AVX2 void Avx2SlabKernel(const int16_t* panel, size_t stride, int rows, int k2,
                                    const int16_t* weights, const int32_t* column_bias,
                                    const RequantChannels& rq, const double* double_scale,
                                    const MagnitudeChannels* mc, int n0, int n, uint8_t* out,
                                    size_t out_stride) {
  static_assert(NV == 1 || NV == 2);
  static_assert(!(kMagnitude && kLeftShift));
  const int valid = std::min(8 * NV, n - n0);
  for (int r0 = 0; r0 < rows; r0 += MR) {
    // Accumulators start at the column bias (one add fewer per output vector).
    __m256i acc[MR][NV];
    {
      __m256i bias[NV];
#pragma GCC unroll 2
      for (int j = 0; j < NV; ++j) bias[j] = Load256(column_bias + n0 + 8 * j);
#pragma GCC unroll 12
      for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
        for (int j = 0; j < NV; ++j) acc[r][j] = bias[j];
    }
    const int16_t* a = panel + static_cast<size_t>(r0) * stride;
    const int16_t* w = weights;
    for (int t = 0; t < k2; ++t, w += 32, a += 2) {
      __m256i wv[NV];
#pragma GCC unroll 2
      for (int j = 0; j < NV; ++j) wv[j] = _mm256_load_si256(reinterpret_cast<const __m256i*>(w + 16 * j));
#pragma GCC unroll 12
      for (int r = 0; r < MR; ++r) {
        int32_t pair;
        std::memcpy(&pair, a + r * stride, 4);
        const __m256i av = _mm256_set1_epi32(pair);
#pragma GCC unroll 2
        for (int j = 0; j < NV; ++j)
          acc[r][j] = _mm256_add_epi32(acc[r][j], _mm256_madd_epi16(av, wv[j]));
      }
    }
    const int valid_rows = std::min(MR, rows - r0);
    const __m256i lo = _mm256_set1_epi16(static_cast<int16_t>(rq.clamp_min));
    const __m256i hi = _mm256_set1_epi16(static_cast<int16_t>(rq.clamp_max));
    const __m256i offset = _mm256_set1_epi16(static_cast<int16_t>(rq.output_offset));
    Requant256 p[NV];
    MagnitudeRequant256 m[NV];
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j) {
      if constexpr (kMagnitude) {
        m[j] = LoadMagnitudeRequant256(*mc, n0 + 8 * j);
      } else {
        p[j] = LoadRequant256(rq, n0 + 8 * j);
        if constexpr (!kLeftShift) p[j].left_shift = _mm256_setzero_si256();  // the shift folds away
      }
    }
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      if (r >= valid_rows) break;
      uint8_t* dst = out + static_cast<size_t>(r0 + r) * out_stride + n0;
      __m256i v[NV];
#pragma GCC unroll 2
      for (int j = 0; j < NV; ++j) {
        if constexpr (kMagnitude)
          v[j] = _mm256_sign_epi32(Magnitude256(acc[r][j], m[j]), acc[r][j]);
        else
          v[j] = double_scale != nullptr ? RescaleDouble8Avx2(acc[r][j], double_scale + n0 + 8 * j)
                                         : MultiplyByQuantizedMultiplier256(acc[r][j], p[j]);
      }
      const __m128i bytes = ClampOffsetToBytes256(v[0], v[NV - 1], lo, hi, offset);
      if (valid == 16) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), bytes);
      } else if (valid == 8) {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), bytes);
      } else {
        alignas(16) uint8_t tmp[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(tmp), bytes);
        std::memcpy(dst, tmp, valid);
      }
    }
  }
}

// Layers of one output channel (QuantConv::dot_weights_): 8 panel rows'
// dot products with the channel's k int16 weights (zero padded to 16), 16
// taps per vpmaddwd, then the 8 sums reduced together (vphaddd, exact in
// int32 with wraparound like every other order) into one vector: one
// requantization and one 8-byte store per 8 outputs, contiguous since the
// output has one channel. Reads up to 15 int16 past a row's kp taps (the next
// row or the panel's reserve), times zero weights.
DLG_TARGET_AVX2 void Avx2DotKernel(const int16_t* panel, size_t stride, int rows, int kp,
                                   const int16_t* weights, int32_t column_bias,
                                   const RequantChannels& rq, const double* double_scale,
                                   uint8_t* out) {
  const Requant256 p = BroadcastRequant256(rq.multiplier[0], rq.shift[0]);
  alignas(32) double scale[8];
  if (double_scale != nullptr) std::fill(scale, scale + 8, double_scale[0]);
  const __m256i lo = _mm256_set1_epi16(static_cast<int16_t>(rq.clamp_min));
  const __m256i hi = _mm256_set1_epi16(static_cast<int16_t>(rq.clamp_max));
  const __m256i offset = _mm256_set1_epi16(static_cast<int16_t>(rq.output_offset));
  const __m256i bias = _mm256_set1_epi32(column_bias);
  for (int r0 = 0; r0 < rows; r0 += 8) {
    __m256i acc[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) acc[r] = _mm256_setzero_si256();
    const int16_t* a = panel + static_cast<size_t>(r0) * stride;
    for (int k0 = 0; k0 < kp; k0 += 16) {
      const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(weights + k0));
#pragma GCC unroll 8
      for (int r = 0; r < 8; ++r)
        acc[r] = _mm256_add_epi32(
            acc[r], _mm256_madd_epi16(
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + r * stride + k0)),
                        w));
    }
    // Per 128-bit half: rows 0-3's partial sums, then rows 4-7's.
    const __m256i h0123 = _mm256_hadd_epi32(_mm256_hadd_epi32(acc[0], acc[1]),
                                            _mm256_hadd_epi32(acc[2], acc[3]));
    const __m256i h4567 = _mm256_hadd_epi32(_mm256_hadd_epi32(acc[4], acc[5]),
                                            _mm256_hadd_epi32(acc[6], acc[7]));
    const __m256i sums =
        _mm256_add_epi32(_mm256_add_epi32(_mm256_permute2x128_si256(h0123, h4567, 0x20),
                                          _mm256_permute2x128_si256(h0123, h4567, 0x31)),
                         bias);
    const __m256i v = double_scale != nullptr ? RescaleDouble8Avx2(sums, scale)
                                              : MultiplyByQuantizedMultiplier256(sums, p);
    const __m128i bytes = ClampOffsetToBytes256(v, v, lo, hi, offset);
    const int valid = std::min(8, rows - r0);
    if (valid == 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + r0), bytes);
    } else {
      alignas(16) uint8_t tmp[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), bytes);
      std::memcpy(out + r0, tmp, static_cast<size_t>(valid));
    }
  }
}

DLG_TARGET_AVX512 void VnniCopy(uint8_t* dst, const uint8_t* src, size_t n, uint8_t xor_mask) {
  if (xor_mask == 0) {
    std::memcpy(dst, src, n);
    return;
  }
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(xor_mask));
  for (; n >= 64; n -= 64, src += 64, dst += 64)
    _mm512_storeu_si512(dst, _mm512_xor_si512(_mm512_loadu_si512(src), flip));
  if (n > 0) {
    const __mmask64 mask = _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(n));
    _mm512_mask_storeu_epi8(dst, mask, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, src), flip));
  }
}

// n bytes, x ^ flip. Loads are masked (nothing past n is read); stores write
// the whole vector (up to kIm2colOverwrite bytes past n) and are only as wide
// as needed: wide masked accesses cost far more than the bytes they move.
DLG_TARGET_AVX512 inline void VnniCopyAny(uint8_t* dst, const uint8_t* src, size_t n,
                                          __m512i flip) {
  if (n <= 16) {
    const __mmask16 mask = static_cast<__mmask16>(_bzhi_u32(0xFFFFu, static_cast<unsigned>(n)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                     _mm_xor_si128(_mm_maskz_loadu_epi8(mask, src), _mm512_castsi512_si128(flip)));
    return;
  }
  if (n <= 32) {
    const __mmask32 mask = _bzhi_u32(~0u, static_cast<unsigned>(n));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst),
                        _mm256_xor_si256(_mm256_maskz_loadu_epi8(mask, src),
                                         _mm512_castsi512_si256(flip)));
    return;
  }
  for (; n >= 64; n -= 64, src += 64, dst += 64)
    _mm512_storeu_si512(dst, _mm512_xor_si512(_mm512_loadu_si512(src), flip));
  if (n > 0) {
    const __mmask64 mask = _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(n));
    _mm512_storeu_si512(dst, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, src), flip));
  }
}

DLG_TARGET_AVX512 inline void VnniFill(uint8_t* dst, size_t n, __m512i value) {
  if (n <= 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm512_castsi512_si128(value));
    return;
  }
  for (; n >= 64; n -= 64, dst += 64) _mm512_storeu_si512(dst, value);
  if (n > 0) _mm512_storeu_si512(dst, value);
}

// One vector of W = 16, 32 or 64 bytes, for VnniIm2colNarrowRun.
template <int W>
struct NarrowVector;
template <>
struct NarrowVector<16> {
  using V = __m128i;
  using Mask = __mmask16;
  DLG_TARGET_AVX512 static V Load(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  DLG_TARGET_AVX512 static V LoadMasked(Mask m, const uint8_t* p) { return _mm_maskz_loadu_epi8(m, p); }
  DLG_TARGET_AVX512 static void Store(uint8_t* p, V v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  DLG_TARGET_AVX512 static V Xor(V a, V b) { return _mm_xor_si128(a, b); }
  DLG_TARGET_AVX512 static V Narrow(__m512i v) { return _mm512_castsi512_si128(v); }
};
template <>
struct NarrowVector<32> {
  using V = __m256i;
  using Mask = __mmask32;
  DLG_TARGET_AVX512 static V Load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  DLG_TARGET_AVX512 static V LoadMasked(Mask m, const uint8_t* p) { return _mm256_maskz_loadu_epi8(m, p); }
  DLG_TARGET_AVX512 static void Store(uint8_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  DLG_TARGET_AVX512 static V Xor(V a, V b) { return _mm256_xor_si256(a, b); }
  DLG_TARGET_AVX512 static V Narrow(__m512i v) { return _mm512_castsi512_si256(v); }
};
template <>
struct NarrowVector<64> {
  using V = __m512i;
  using Mask = __mmask64;
  DLG_TARGET_AVX512 static V Load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  DLG_TARGET_AVX512 static V LoadMasked(Mask m, const uint8_t* p) { return _mm512_maskz_loadu_epi8(m, p); }
  DLG_TARGET_AVX512 static void Store(uint8_t* p, V v) { _mm512_storeu_si512(p, v); }
  DLG_TARGET_AVX512 static V Xor(V a, V b) { return _mm512_xor_si512(a, b); }
  DLG_TARGET_AVX512 static V Narrow(__m512i v) { return v; }
};

// The interior of an output row when one filter row's taps fit in W bytes
// (first layers: 3x3 over 3 channels; grouped layers' gathered groups: 3x3
// over 8 or 16 channels): per pixel, one W-byte load, xor and store per
// filter row, with the loop invariants hoisted. Loads are plain except near
// the end of the input, where they are masked. A store runs up to W - 1
// bytes past its taps, into bytes written next or the panel's reserve.
template <int W>
DLG_TARGET_AVX512 inline uint8_t* VnniIm2colNarrowRun(
    const uint8_t* first, size_t step, int count, const int64_t* fy_offset, int filter_h,
    size_t row_taps, size_t tail, size_t kp, const uint8_t* input, size_t input_bytes,
    __m512i flip512, __m512i pad512, uint8_t* dst) {
  using N = NarrowVector<W>;
  static_assert(kIm2colOverwrite >= W);
  const typename N::Mask mask =
      static_cast<typename N::Mask>(_bzhi_u64(~uint64_t{0}, static_cast<unsigned>(row_taps)));
  // Plain W-byte loads from at most this address stay inside the input.
  const bool any_plain = input_bytes >= W;
  const uint8_t* safe_end = input + (any_plain ? input_bytes - W : 0);
  const typename N::V flip = N::Narrow(flip512), pad = N::Narrow(pad512);
  for (int i = 0; i < count; ++i, first += step, dst += kp) {
    uint8_t* d = dst;
    for (int fy = 0; fy < filter_h; ++fy, d += row_taps) {
      typename N::V v = pad;
      if (fy_offset[fy] >= 0) {
        const uint8_t* src = first + fy_offset[fy];
        v = N::Xor(any_plain && src <= safe_end ? N::Load(src) : N::LoadMasked(mask, src), flip);
      }
      N::Store(d, v);
    }
    if (tail > 0) _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_setzero_si128());
  }
  return dst;
}

// im2col of `rows` output pixels from m0 into a vnni panel (rows of kp bytes:
// the k taps as x ^ xor_mask, padded taps as pad_byte, then zeros), with
// vector copies: with few input channels (first layers) the per-tap copies
// are a few bytes each, and byte loops cost more than the GEMM. Each copy
// may write past its end into bytes written next (in increasing order) or
// into the panel's reserve.
DLG_TARGET_AVX512 void VnniIm2col(const reference::ConvGeometry& g, int k, int kp,
                                  uint8_t xor_mask, uint8_t pad_byte, const uint8_t* input,
                                  int64_t m0, int rows, uint8_t* panel) {
  constexpr int kMaxNarrowFilterRows = 16;
  const int32_t out_h = g.output_height, out_w = g.output_width;
  const int32_t in_h = g.input_height, in_w = g.input_width;
  const int32_t filter_h = g.filter_height, filter_w = g.filter_width;
  const int32_t stride_h = g.stride_height, stride_w = g.stride_width;
  const int32_t dilation_h = g.dilation_height, dilation_w = g.dilation_width;
  const int32_t pad_h = g.pad_height, pad_w = g.pad_width;
  const size_t cin = g.input_depth;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(xor_mask));
  const __m512i pad = _mm512_set1_epi8(static_cast<char>(pad_byte));
  const int64_t plane = int64_t{out_h} * out_w;
  const size_t batch_size = static_cast<size_t>(in_h) * in_w * cin;
  const size_t row_taps = static_cast<size_t>(filter_w) * cin;
  const size_t in_row_stride = static_cast<size_t>(in_w) * cin;
  const size_t tail = static_cast<size_t>(kp - k);
  int64_t b = m0 / plane;
  int32_t oy = static_cast<int32_t>((m0 % plane) / out_w);
  int32_t ox = static_cast<int32_t>((m0 % plane) % out_w);
  // Narrow runs: output columns [narrow_begin, narrow_end) read whole filter rows.
  const bool narrow = row_taps <= 64 && dilation_w == 1 && filter_h <= kMaxNarrowFilterRows;
  int32_t narrow_begin = 0, narrow_end = 0;
  if (narrow) {
    // ox * stride_w - pad_w >= 0 and ox * stride_w - pad_w + filter_w <= in_w.
    narrow_begin = std::min<int32_t>(out_w, (pad_w + stride_w - 1) / stride_w);
    const int32_t last_start = in_w - filter_w + pad_w;  // largest ox * stride_w
    const int32_t end = last_start < 0 ? 0 : std::min<int32_t>(out_w, last_start / stride_w + 1);
    narrow_end = std::max(narrow_begin, end);
  }
  const size_t input_bytes = static_cast<size_t>(g.batches) * batch_size;
  int64_t fy_offset[kMaxNarrowFilterRows];
  for (int r = 0; r < rows; ++r, ++ox) {
    if (ox == out_w) {
      ox = 0;
      if (++oy == out_h) {
        oy = 0;
        ++b;
      }
    }
    const uint8_t* batch_in = input + static_cast<size_t>(b) * batch_size;
    uint8_t* dst = panel + static_cast<size_t>(r) * kp;
    const int32_t iy0 = oy * stride_h - pad_h;
    if (narrow && ox >= narrow_begin && ox < narrow_end) {
      const int count = std::min(narrow_end - ox, rows - r);
      for (int32_t fy = 0; fy < filter_h; ++fy) {
        const int32_t iy = iy0 + dilation_h * fy;
        fy_offset[fy] = iy < 0 || iy >= in_h ? -1 : static_cast<int64_t>(iy) * in_row_stride;
      }
      const uint8_t* first = batch_in + static_cast<size_t>(ox * stride_w - pad_w) * cin;
      const size_t step = static_cast<size_t>(stride_w) * cin;
      if (row_taps <= 16)
        VnniIm2colNarrowRun<16>(first, step, count, fy_offset, filter_h, row_taps, tail, kp,
                                input, input_bytes, flip, pad, dst);
      else if (row_taps <= 32)
        VnniIm2colNarrowRun<32>(first, step, count, fy_offset, filter_h, row_taps, tail, kp,
                                input, input_bytes, flip, pad, dst);
      else
        VnniIm2colNarrowRun<64>(first, step, count, fy_offset, filter_h, row_taps, tail, kp,
                                input, input_bytes, flip, pad, dst);
      r += count - 1;
      ox += count - 1;
      continue;
    }
    const int32_t ix0 = ox * stride_w - pad_w;
    const bool whole_row = dilation_w == 1 && ix0 >= 0 && ix0 + filter_w <= in_w;
    for (int32_t fy = 0; fy < filter_h; ++fy) {
      const int32_t iy = iy0 + dilation_h * fy;
      if (iy < 0 || iy >= in_h) {
        VnniFill(dst, row_taps, pad);
        dst += row_taps;
        continue;
      }
      const uint8_t* in_row = batch_in + static_cast<size_t>(iy) * in_row_stride;
      if (whole_row) {
        VnniCopyAny(dst, in_row + static_cast<size_t>(ix0) * cin, row_taps, flip);
        dst += row_taps;
        continue;
      }
      for (int32_t fx = 0; fx < filter_w; ++fx, dst += cin) {
        const int32_t ix = ix0 + dilation_w * fx;
        if (ix < 0 || ix >= in_w)
          VnniFill(dst, cin, pad);
        else
          VnniCopyAny(dst, in_row + static_cast<size_t>(ix) * cin, cin, flip);
      }
    }
    if (tail > 0) VnniFill(dst, tail, _mm512_setzero_si512());
  }
}

// One row's vpsadbw partial sums (8 int64 lanes): `full` bytes in 64-byte
// loads, then the bytes under `tail`.
DLG_TARGET_AVX512 inline __attribute__((always_inline)) __m512i RowPartials(const uint8_t* p,
                                                                            size_t full,
                                                                            __mmask64 tail) {
  const __m512i zero = _mm512_setzero_si512();
  __m512i sum = zero;
  for (size_t k = 0; k < full; k += 64)
    sum = _mm512_add_epi64(sum, _mm512_sad_epu8(_mm512_loadu_si512(p + k), zero));
  if (tail != 0)
    sum = _mm512_add_epi64(sum, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(tail, p + full), zero));
  return sum;
}

// 128-bit lanes 0 + 1 and 2 + 3 of a, then of b.
DLG_TARGET_AVX512 inline __attribute__((always_inline)) __m512i FoldLanes(__m512i a, __m512i b) {
  return _mm512_add_epi64(_mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_i64x2(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

// coef times each row's byte sum (wrapping like the reference's int32).
// Eight rows at a time: their partial sums reduce together by a
// transpose-and-add tree, row i ending in lane i, in place of one horizontal
// reduction per row.
DLG_TARGET_AVX512 void VnniRowSums(const uint8_t* panel, size_t stride, int rows, int32_t coef,
                                   int32_t* out) {
  const size_t full = stride / 64 * 64;
  const __mmask64 tail = _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(stride - full));
  const __m256i coefficient = _mm256_set1_epi32(coef);
  int r = 0;
  for (; r + 8 <= rows; r += 8) {
    const uint8_t* p = panel + static_cast<size_t>(r) * stride;
    __m512i pairs[4];  // rows 2i and 2i + 1 alternating
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const __m512i a = RowPartials(p + 2 * i * stride, full, tail);
      const __m512i b = RowPartials(p + (2 * i + 1) * stride, full, tail);
      pairs[i] = _mm512_add_epi64(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
    }
    const __m512i sums = FoldLanes(FoldLanes(pairs[0], pairs[1]), FoldLanes(pairs[2], pairs[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r),
                        _mm256_mullo_epi32(_mm512_cvtepi64_epi32(sums), coefficient));
  }
  for (; r < rows; ++r) {
    const uint64_t total = static_cast<uint64_t>(
        _mm512_reduce_add_epi64(RowPartials(panel + static_cast<size_t>(r) * stride, full, tail)));
    out[r] = static_cast<int32_t>(static_cast<uint32_t>(coef) * static_cast<uint32_t>(total));
  }
}

DLG_TARGET_AVX2 inline void Avx2Widen16(int16_t* dst, const uint8_t* src, bool is_uint8,
                                        __m256i zp) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  const __m256i w = is_uint8 ? _mm256_cvtepu8_epi16(b) : _mm256_cvtepi8_epi16(b);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_sub_epi16(w, zp));
}

DLG_TARGET_AVX2 inline void Avx2Widen8(int16_t* dst, const uint8_t* src, bool is_uint8,
                                       __m128i zp) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src));
  const __m128i w = is_uint8 ? _mm_cvtepu8_epi16(b) : _mm_cvtepi8_epi16(b);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_sub_epi16(w, zp));
}

// dst[i] = x[i] - zero_point for n bytes. A partial last block is done as a
// whole block ending at n, overlapping the one before (same values written
// twice): im2col copies of first layers are a few bytes each (9 for 3x3 over
// 3 channels), and a per-byte tail loop cost more than the GEMM on them.
DLG_TARGET_AVX2 void Avx2Widen(int16_t* dst, const uint8_t* src, size_t n, bool is_uint8,
                               int32_t zero_point) {
  const __m256i zp = _mm256_set1_epi16(static_cast<int16_t>(zero_point));
  const __m128i zp8 = _mm256_castsi256_si128(zp);
  if (n >= 16) {
    const size_t last = n - 16;
    for (size_t i = 0; i < last; i += 16) Avx2Widen16(dst + i, src + i, is_uint8, zp);
    Avx2Widen16(dst + last, src + last, is_uint8, zp);
    return;
  }
  if (n >= 8) {
    Avx2Widen8(dst, src, is_uint8, zp8);
    Avx2Widen8(dst + n - 8, src + n - 8, is_uint8, zp8);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const int32_t x = is_uint8 ? int32_t{src[i]} : int32_t{static_cast<int8_t>(src[i])};
    dst[i] = static_cast<int16_t>(x - zero_point);
  }
}

#endif  // DELEGATO_X86

#if DELEGATO_ARM

// Requantizes (or double-rescales) one row of 16 channel sums and stores the
// `valid` leading bytes.
inline void StoreRowNeon(const int32x4_t acc[4], const RequantNeon p[4],
                         const RequantChannels& rq, const double* double_scale, int n0,
                         int valid, uint8_t* dst) {
  if (double_scale != nullptr) {
    int32_t sums[16];
    for (int j = 0; j < 4; ++j) vst1q_s32(sums + 4 * j, acc[j]);
    for (int l = 0; l < valid; ++l) dst[l] = RescaleDoubleOne(rq, double_scale, n0 + l, sums[l]);
    return;
  }
  const int32x4_t lo = vdupq_n_s32(rq.clamp_min);
  const int32x4_t hi = vdupq_n_s32(rq.clamp_max);
  const int32x4_t offset = vdupq_n_s32(rq.output_offset);
  const uint8x16_t bytes = NarrowToBytesNeon(
      RequantizeNeon(acc[0], p[0], lo, hi, offset), RequantizeNeon(acc[1], p[1], lo, hi, offset),
      RequantizeNeon(acc[2], p[2], lo, hi, offset), RequantizeNeon(acc[3], p[3], lo, hi, offset));
  if (valid >= 16) {
    vst1q_u8(dst, bytes);
  } else {
    uint8_t tmp[16];
    vst1q_u8(tmp, bytes);
    std::memcpy(dst, tmp, valid);
  }
}

// Armv8.0: rows [0, rows) of an int16 panel (x - x_zp) times one 16-channel
// block of int16 weights [k/2][16][2] (w - w_zp), MR rows at a time; each
// product is exact in int32 (smlal), sums wrap modulo 2^32 as the reference's.
template <int MR>
void NeonSlabKernel(const int16_t* panel, size_t stride, int rows, int k2,
                    const int16_t* weights, const int32_t* column_bias,
                    const RequantChannels& rq, const double* double_scale, int n0, int n,
                    uint8_t* out, size_t out_stride) {
  const int valid = std::min(16, n - n0);
  RequantNeon p[4];
  int32x4_t bias[4];
  for (int j = 0; j < 4; ++j) {
    p[j] = LoadRequantNeon(rq, n0 + 4 * j);
    bias[j] = vld1q_s32(column_bias + n0 + 4 * j);
  }
  for (int r0 = 0; r0 < rows; r0 += MR) {
    int32x4_t acc[MR][4];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < 4; ++j) acc[r][j] = bias[j];
    const int16_t* a = panel + static_cast<size_t>(r0) * stride;
    const int16_t* w = weights;
    for (int t = 0; t < k2; ++t, w += 32, a += 2) {
      // val[0]: the even tap of channels 0-7, val[1]: the odd tap.
      const int16x8x2_t w0 = vld2q_s16(w);
      const int16x8x2_t w1 = vld2q_s16(w + 16);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        int32_t pair;
        std::memcpy(&pair, a + r * stride, 4);
        const int16x4_t av = vreinterpret_s16_s32(vdup_n_s32(pair));
        acc[r][0] = vmlal_lane_s16(acc[r][0], vget_low_s16(w0.val[0]), av, 0);
        acc[r][1] = vmlal_high_lane_s16(acc[r][1], w0.val[0], av, 0);
        acc[r][2] = vmlal_lane_s16(acc[r][2], vget_low_s16(w1.val[0]), av, 0);
        acc[r][3] = vmlal_high_lane_s16(acc[r][3], w1.val[0], av, 0);
        acc[r][0] = vmlal_lane_s16(acc[r][0], vget_low_s16(w0.val[1]), av, 1);
        acc[r][1] = vmlal_high_lane_s16(acc[r][1], w0.val[1], av, 1);
        acc[r][2] = vmlal_lane_s16(acc[r][2], vget_low_s16(w1.val[1]), av, 1);
        acc[r][3] = vmlal_high_lane_s16(acc[r][3], w1.val[1], av, 1);
      }
    }
    const int valid_rows = std::min(MR, rows - r0);
    for (int r = 0; r < valid_rows; ++r)
      StoreRowNeon(acc[r], p, rq, double_scale, n0, valid,
                   out + static_cast<size_t>(r0 + r) * out_stride + n0);
  }
}

// Armv8.2 dot products: rows of a byte panel (raw x, k padded to 4) times one
// 16-channel block of byte weights [k/4][16][4] (raw w): sdot for int8,
// udot for uint8, four products per lane and instruction, wrapping modulo
// 2^32. The zero points come back as the folded column bias and, for uint8
// with w_zp != 0, a per-row term -w_zp * sum(x).
template <int MR, bool kUnsigned>
DLG_TARGET_DOTPROD void DotSlabKernel(const uint8_t* panel, size_t stride, int rows, int k4,
                                      const uint8_t* weights, const int32_t* column_bias,
                                      const int32_t* row_terms, const RequantChannels& rq,
                                      const double* double_scale, int n0, int n, uint8_t* out,
                                      size_t out_stride) {
  const int valid = std::min(16, n - n0);
  RequantNeon p[4];
  int32x4_t bias[4];
  for (int j = 0; j < 4; ++j) {
    p[j] = LoadRequantNeon(rq, n0 + 4 * j);
    bias[j] = vld1q_s32(column_bias + n0 + 4 * j);
  }
  for (int r0 = 0; r0 < rows; r0 += MR) {
    int32x4_t acc[MR][4];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < 4; ++j) acc[r][j] = bias[j];
    const uint8_t* a = panel + static_cast<size_t>(r0) * stride;
    const uint8_t* w = weights;
    for (int t = 0; t < k4; ++t, w += 64, a += 4) {
      uint8x16_t wv[4];
      for (int j = 0; j < 4; ++j) wv[j] = vld1q_u8(w + 16 * j);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        uint32_t quad;
        std::memcpy(&quad, a + r * stride, 4);
        const uint8x16_t av = vreinterpretq_u8_u32(vdupq_n_u32(quad));
        for (int j = 0; j < 4; ++j) {
          if constexpr (kUnsigned)
            acc[r][j] = vreinterpretq_s32_u32(
                vdotq_u32(vreinterpretq_u32_s32(acc[r][j]), wv[j], av));
          else
            acc[r][j] =
                vdotq_s32(acc[r][j], vreinterpretq_s8_u8(wv[j]), vreinterpretq_s8_u8(av));
        }
      }
    }
    const int valid_rows = std::min(MR, rows - r0);
    for (int r = 0; r < valid_rows; ++r) {
      if (row_terms != nullptr) {
        const int32x4_t term = vdupq_n_s32(row_terms[r0 + r]);
        for (int j = 0; j < 4; ++j) acc[r][j] = vaddq_s32(acc[r][j], term);
      }
      StoreRowNeon(acc[r], p, rq, double_scale, n0, valid,
                   out + static_cast<size_t>(r0 + r) * out_stride + n0);
    }
  }
}

// Armv8.6 matrix multiply: smmla (int8) / ummla (uint8) multiplies a 2 x 8
// block of panel bytes (two rows, eight taps) by an 8 x 2 block of weight
// bytes (two channels) into a 2 x 2 block of int32 sums, wrapping modulo
// 2^32. Weights [k/8][8 channel pairs][2][8] (raw w); 2 * kPairs rows at a
// time, each pair's 16 channels in 8 registers of 2 x 2 sums. The zero points
// come back as in DotSlabKernel.
template <int kPairs, bool kUnsigned>
DLG_TARGET_I8MM void MmlaSlabKernel(const uint8_t* panel, size_t stride, int rows, int k8,
                                    const uint8_t* weights, const int32_t* column_bias,
                                    const int32_t* row_terms, const RequantChannels& rq,
                                    const double* double_scale, int n0, int n, uint8_t* out,
                                    size_t out_stride) {
  constexpr int kRows = 2 * kPairs;
  const int valid = std::min(16, n - n0);
  RequantNeon p[4];
  int32x4_t bias[4];
  for (int j = 0; j < 4; ++j) {
    p[j] = LoadRequantNeon(rq, n0 + 4 * j);
    bias[j] = vld1q_s32(column_bias + n0 + 4 * j);
  }
  for (int r0 = 0; r0 < rows; r0 += kRows) {
    // acc[q][j]: rows (2q, 2q + 1) x channels (2j, 2j + 1), row-major.
    int32x4_t acc[kPairs][8];
#pragma GCC unroll 4
    for (int q = 0; q < kPairs; ++q)
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) acc[q][j] = vdupq_n_s32(0);
    const uint8_t* a = panel + static_cast<size_t>(r0) * stride;
    const uint8_t* w = weights;
    for (int t = 0; t < k8; ++t, w += 128, a += 8) {
      uint8x16_t av[kPairs];
#pragma GCC unroll 4
      for (int q = 0; q < kPairs; ++q)
        av[q] = vcombine_u8(vld1_u8(a + 2 * q * stride), vld1_u8(a + (2 * q + 1) * stride));
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const uint8x16_t wv = vld1q_u8(w + 16 * j);
#pragma GCC unroll 4
        for (int q = 0; q < kPairs; ++q) {
          if constexpr (kUnsigned)
            acc[q][j] = vreinterpretq_s32_u32(
                vmmlaq_u32(vreinterpretq_u32_s32(acc[q][j]), av[q], wv));
          else
            acc[q][j] = vmmlaq_s32(acc[q][j], vreinterpretq_s8_u8(av[q]), vreinterpretq_s8_u8(wv));
        }
      }
    }
    const int valid_rows = std::min(kRows, rows - r0);
    for (int q = 0; q < kPairs && 2 * q < valid_rows; ++q) {
      // Channels 4c..4c+3 of the pair's first row are the low halves of
      // acc[q][2c] and acc[q][2c + 1]; of its second row, the high halves.
      int32x4_t top[4], bottom[4];
      for (int c = 0; c < 4; ++c) {
        const int64x2_t lo = vreinterpretq_s64_s32(acc[q][2 * c]);
        const int64x2_t hi = vreinterpretq_s64_s32(acc[q][2 * c + 1]);
        top[c] = vaddq_s32(vreinterpretq_s32_s64(vzip1q_s64(lo, hi)), bias[c]);
        bottom[c] = vaddq_s32(vreinterpretq_s32_s64(vzip2q_s64(lo, hi)), bias[c]);
      }
      const int r = r0 + 2 * q;
      if (row_terms != nullptr) {
        const int32x4_t t0 = vdupq_n_s32(row_terms[r]), t1 = vdupq_n_s32(row_terms[r + 1]);
        for (int c = 0; c < 4; ++c) {
          top[c] = vaddq_s32(top[c], t0);
          bottom[c] = vaddq_s32(bottom[c], t1);
        }
      }
      StoreRowNeon(top, p, rq, double_scale, n0, valid,
                   out + static_cast<size_t>(r) * out_stride + n0);
      if (2 * q + 1 < valid_rows)
        StoreRowNeon(bottom, p, rq, double_scale, n0, valid,
                     out + static_cast<size_t>(r + 1) * out_stride + n0);
    }
  }
}

void NeonWiden(int16_t* dst, const uint8_t* src, size_t n, bool is_uint8, int32_t zero_point) {
  const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(zero_point));
  for (; n >= 16; n -= 16, src += 16, dst += 16) {
    const uint8x16_t b = vld1q_u8(src);
    int16x8_t lo, hi;
    if (is_uint8) {
      lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(b)));
      hi = vreinterpretq_s16_u16(vmovl_high_u8(b));
    } else {
      lo = vmovl_s8(vget_low_s8(vreinterpretq_s8_u8(b)));
      hi = vmovl_high_s8(vreinterpretq_s8_u8(b));
    }
    vst1q_s16(dst, vsubq_s16(lo, zp));
    vst1q_s16(dst + 8, vsubq_s16(hi, zp));
  }
  for (size_t i = 0; i < n; ++i) {
    const int32_t x = is_uint8 ? int32_t{src[i]} : int32_t{static_cast<int8_t>(src[i])};
    dst[i] = static_cast<int16_t>(x - zero_point);
  }
}

// coef * (sum of each panel row's bytes), modulo 2^32.
void NeonRowSums(const uint8_t* panel, size_t stride, int rows, int32_t coef, int32_t* out) {
  for (int r = 0; r < rows; ++r) {
    const uint8_t* p = panel + static_cast<size_t>(r) * stride;
    uint32x4_t sum = vdupq_n_u32(0);
    size_t k = 0;
    for (; k + 16 <= stride; k += 16) sum = vpadalq_u16(sum, vpaddlq_u8(vld1q_u8(p + k)));
    uint32_t total = vaddvq_u32(sum);
    for (; k < stride; ++k) total += p[k];
    out[r] = static_cast<int32_t>(static_cast<uint32_t>(coef) * total);
  }
}

#endif  // DELEGATO_ARM

// GCC 12's aarch64 loop vectorizer turns this loop into loads past the end
// of the panel (a fault when the panel ends a mapping, as under qemu): there
// it stays scalar (the neon and dotprod kernels are the fast paths).
#if DELEGATO_ARM && !defined(__clang__)
#define DLG_SCALAR_SLAB_ATTRIBUTES __attribute__((optimize("no-tree-loop-vectorize")))
#else
#define DLG_SCALAR_SLAB_ATTRIBUTES
#endif

template <int MR>
DLG_SCALAR_SLAB_ATTRIBUTES void ScalarSlabKernel(const int16_t* panel, size_t stride, int rows, int k2,
                      const int16_t* weights, const int32_t* column_bias,
                      const RequantChannels& rq, const double* double_scale, int n0, int n,
                      uint8_t* out, size_t out_stride) {
  const int valid = std::min(16, n - n0);
  for (int r0 = 0; r0 < rows; r0 += MR) {
    uint32_t acc[MR][16] = {};
    const int16_t* a = panel + static_cast<size_t>(r0) * stride;
    const int16_t* w = weights;
    for (int t = 0; t < k2; ++t, w += 32, a += 2) {
      for (int r = 0; r < MR; ++r) {
        const int32_t a0 = a[r * stride], a1 = a[r * stride + 1];
        for (int l = 0; l < 16; ++l)
          acc[r][l] += static_cast<uint32_t>(a0 * w[2 * l] + a1 * w[2 * l + 1]);
      }
    }
    const int valid_rows = std::min(MR, rows - r0);
    for (int r = 0; r < valid_rows; ++r) {
      uint8_t* dst = out + static_cast<size_t>(r0 + r) * out_stride + n0;
      for (int l = 0; l < valid; ++l) {
        const int c = n0 + l;
        const uint32_t total = acc[r][l] + static_cast<uint32_t>(column_bias[c]);
        dst[l] = double_scale != nullptr
                     ? RescaleDoubleOne(rq, double_scale, c, static_cast<int32_t>(total))
                     : static_cast<uint8_t>(RequantizeOne(rq, c, static_cast<int32_t>(total)));
      }
    }
  }
}

}  // namespace

// ------------------------------------------------------------ per-ISA ops

struct ScalarOps {
  using Elem = int16_t;
  static constexpr bool kOwnIm2col = false;
  static void Im2col(const QuantConv&, const uint8_t*, int64_t, int, Elem*) {}
  static void Copy(const QuantConv& c, Elem* dst, const uint8_t* src, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      const int32_t x = c.is_uint8_ ? int32_t{src[i]} : int32_t{static_cast<int8_t>(src[i])};
      dst[i] = static_cast<int16_t>(x - c.input_zero_point_);
    }
  }
  static void Fill(const QuantConv&, Elem* dst, size_t n) { std::fill_n(dst, n, Elem{0}); }
  static void Zero(Elem* dst, size_t n) { std::fill_n(dst, n, Elem{0}); }
  static void RowSums(const QuantConv&, const Elem*, int, int32_t*) {}
  static void Begin(const QuantConv&) {}
  static void End(const QuantConv&) {}
  static void Slab(const QuantConv& c, const QuantConv::Slab& s, const Elem* panel, int rows,
                   const int32_t*, uint8_t* out) {
    ScalarSlabKernel<4>(panel, c.k_padded_, rows, c.k_padded_ / 2, c.weights16_.data() + s.offset,
                        c.column_bias_.data(), c.requant_, c.DoubleScale(), s.n0, c.n_, out,
                        c.n_);
  }
};

#if DELEGATO_X86
struct Avx2Ops : ScalarOps {
  static void Copy(const QuantConv& c, Elem* dst, const uint8_t* src, size_t n) {
    Avx2Widen(dst, src, n, c.is_uint8_, c.input_zero_point_);
  }
  static void Slab(const QuantConv& c, const QuantConv::Slab& s, const Elem* panel, int rows,
                   const int32_t*, uint8_t* out) {
    if (c.n_ == 1) {
      Avx2DotKernel(panel, c.k_padded_, rows, c.k_padded_, c.dot_weights_.data(),
                    c.column_bias_[0], c.requant_, c.DoubleScale(), out);
      return;
    }
    // A block with at most 8 real channels: the 8-channel kernel.
    const bool eight = c.n_ - s.n0 <= 8;
    if (s.requant == QuantConv::SlabRequant::kMagnitude) {
      eight ? Run<12, 1, false, true>(c, s, panel, rows, out)
            : Run<6, 2, false, true>(c, s, panel, rows, out);
      return;
    }
    // Most layers' multipliers are below 1 (no left shift): that variant skips the shift.
    const int32_t* left = c.requant_.left_shift.data() + s.n0;
    const bool left_shift = std::any_of(left, left + 16, [](int32_t v) { return v != 0; });
    if (eight)
      left_shift ? Run<12, 1, true>(c, s, panel, rows, out) : Run<12, 1, false>(c, s, panel, rows, out);
    else
      left_shift ? Run<6, 2, true>(c, s, panel, rows, out) : Run<6, 2, false>(c, s, panel, rows, out);
  }
  template <int MR, int NV, bool kLeftShift, bool kMagnitude = false>
  static void Run(const QuantConv& c, const QuantConv::Slab& s, const Elem* panel, int rows,
                  uint8_t* out) {
    Avx2SlabKernel<MR, NV, kLeftShift, kMagnitude>(
        panel, c.k_padded_, rows, c.k_padded_ / 2, c.weights16_.data() + s.offset,
        c.column_bias_.data(), c.requant_, c.DoubleScale(), &c.magnitude_, s.n0, c.n_, out, c.n_);
  }
};

struct VnniOps {
  using Elem = uint8_t;
  static constexpr bool kOwnIm2col = true;
  static void Im2col(const QuantConv& c, const uint8_t* input, int64_t m0, int rows, Elem* panel) {
    VnniIm2col(c.g_, c.k_, c.k_padded_, c.xor_mask_, c.pad_byte_, input, m0, rows, panel);
  }
  static void Copy(const QuantConv& c, Elem* dst, const uint8_t* src, size_t n) {
    if (n <= 32) {  // few input channels (first layers): not worth a call
      const uint8_t flip = c.xor_mask_;
      for (size_t i = 0; i < n; ++i) dst[i] = src[i] ^ flip;
      return;
    }
    VnniCopy(dst, src, n, c.xor_mask_);
  }
  static void Fill(const QuantConv& c, Elem* dst, size_t n) {
    if (n <= 32) {
      for (size_t i = 0; i < n; ++i) dst[i] = c.pad_byte_;
      return;
    }
    std::memset(dst, c.pad_byte_, n);
  }
  static void Zero(Elem* dst, size_t n) {
    if (n <= 32) {
      for (size_t i = 0; i < n; ++i) dst[i] = 0;
      return;
    }
    std::memset(dst, 0, n);
  }
  static void RowSums(const QuantConv& c, const Elem* panel, int rows, int32_t* row_terms) {
    VnniRowSums(panel, c.k_padded_, rows, c.row_coefficient_, row_terms);
  }
  static void Slab(const QuantConv& c, const QuantConv::Slab& s, const Elem* panel, int rows,
                   const int32_t* row_terms, uint8_t* out) {
    switch (s.requant) {
      case QuantConv::SlabRequant::kDouble:
        Dispatch<Requant::kDouble>(c, s, panel, rows, row_terms, out);
        return;
      case QuantConv::SlabRequant::kGeneral:
        Dispatch<Requant::kFixed>(c, s, panel, rows, row_terms, out);
        return;
      case QuantConv::SlabRequant::kShift64:
        if (c.requant64_.wide)
          Dispatch<Requant::kShift64Wide>(c, s, panel, rows, row_terms, out);
        else
          Dispatch<Requant::kShift64>(c, s, panel, rows, row_terms, out);
        return;
      case QuantConv::SlabRequant::kMagnitude:
        if (c.is_uint8_)
          DispatchMagnitude<false, false>(c, s, panel, rows, row_terms, out);
        else
          DispatchMagnitude<true, false>(c, s, panel, rows, row_terms, out);
        return;
      case QuantConv::SlabRequant::kMagnitudeIfma:
        if (c.is_uint8_)
          DispatchMagnitude<false, true>(c, s, panel, rows, row_terms, out);
        else
          DispatchMagnitude<true, true>(c, s, panel, rows, row_terms, out);
        return;
    }
  }
  // Rows per kernel step for NB blocks: what fits the registers with
  // vpdpbusd; a divisor of the AMX tile rows.
  static constexpr int VnniRows(int nb) { return nb == 4 ? 6 : nb == 3 ? 8 : nb == 2 ? 12 : 16; }
  static constexpr int AmxRows(int nb) { return nb >= 3 ? 4 : nb == 2 ? 8 : 16; }
  // The slab's kernel: `kernel.template operator()<MR, NB>(source)`.
  template <class Kernel>
  static void WithSource(const QuantConv& c, const QuantConv::Slab& s, const Elem* panel,
                         int rows, const Kernel& kernel) {
    const int8_t* w = c.weights8_.data() + s.offset;
    const size_t stride = c.k_padded_;
    const auto run = [&]<int NB>() {
      if (c.amx_) {
        AmxSource<NB> source(panel, stride, c.k_weights_ / kAmxTaps, w);
        kernel.template operator()<AmxRows(NB), NB>(source);
      } else if (rows == 1) {
        // (With AMX the tiles stay: on MobileNet v2's 1280 -> 1001 logits,
        // weights coming from L3, they measured 61-63 us against 68-69.)
        VnniRowSource source{panel, c.k_padded_ / 4, w};
        kernel.template operator()<VnniRows(NB), NB>(source);
      } else {
        VnniSource source{panel, stride, c.k_padded_ / 4, w};
        kernel.template operator()<VnniRows(NB), NB>(source);
      }
    };
    switch (s.blocks) {
      case 4: run.template operator()<4>(); break;
      case 3: run.template operator()<3>(); break;
      case 2: run.template operator()<2>(); break;
      default: run.template operator()<1>(); break;
    }
  }
  template <bool kSigned, bool kIfma>
  static void DispatchMagnitude(const QuantConv& c, const QuantConv::Slab& s, const Elem* panel,
                                int rows, const int32_t* row_terms, uint8_t* out) {
    const int32_t* terms = c.row_coefficient_ != 0 ? row_terms : nullptr;
    const int32_t zp = c.requant_.output_offset;
    const int32_t lo = c.requant_.clamp_min + zp, hi = c.requant_.clamp_max + zp;
    WithSource(c, s, panel, rows, [&]<int MR, int NB>(auto& source) {
      if constexpr (kIfma)
        VnniMagnitudeIfmaSlabKernel<MR, NB, kSigned>(source, rows, c.column_bias_.data(), terms,
                                                     c.magnitude_, zp, lo, hi, s.n0, c.n_, out,
                                                     c.n_);
      else
        VnniMagnitudeSlabKernel<MR, NB, kSigned>(source, rows, c.column_bias_.data(), terms,
                                                 c.magnitude_, zp, lo, hi, s.n0, c.n_, out, c.n_);
    });
  }
  template <Requant kRequant>
  static void Dispatch(const QuantConv& c, const QuantConv::Slab& s, const Elem* panel, int rows,
                       const int32_t* row_terms, uint8_t* out) {
    const int32_t* terms = c.row_coefficient_ != 0 ? row_terms : nullptr;
    WithSource(c, s, panel, rows, [&]<int MR, int NB>(auto& source) {
      VnniSlabKernel<MR, NB, kRequant>(source, rows, c.column_bias_.data(), terms, c.requant_,
                                       c.requant64_, c.DoubleScale(), s.n0, c.n_, out, c.n_);
    });
  }
  static void Begin(const QuantConv& c) {
    if (c.amx_) AmxBegin();
  }
  static void End(const QuantConv& c) {
    if (c.amx_) AmxEnd();
  }
};
#endif

#if DELEGATO_ARM
struct NeonOps : ScalarOps {
  static void Copy(const QuantConv& c, Elem* dst, const uint8_t* src, size_t n) {
    NeonWiden(dst, src, n, c.is_uint8_, c.input_zero_point_);
  }
  static void Slab(const QuantConv& c, const QuantConv::Slab& s, const Elem* panel, int rows,
                   const int32_t*, uint8_t* out) {
    NeonSlabKernel<4>(panel, c.k_padded_, rows, c.k_padded_ / 2, c.weights16_.data() + s.offset,
                      c.column_bias_.data(), c.requant_, c.DoubleScale(), s.n0, c.n_, out, c.n_);
  }
};

struct DotprodOps {
  using Elem = uint8_t;
  static constexpr bool kOwnIm2col = false;
  static void Im2col(const QuantConv&, const uint8_t*, int64_t, int, Elem*) {}
  static void Copy(const QuantConv&, Elem* dst, const uint8_t* src, size_t n) {
    std::memcpy(dst, src, n);
  }
  static void Fill(const QuantConv& c, Elem* dst, size_t n) { std::memset(dst, c.pad_byte_, n); }
  static void Zero(Elem* dst, size_t n) { std::memset(dst, 0, n); }
  static void RowSums(const QuantConv& c, const Elem* panel, int rows, int32_t* row_terms) {
    NeonRowSums(panel, c.k_padded_, rows, c.row_coefficient_, row_terms);
  }
  static void Begin(const QuantConv&) {}
  static void End(const QuantConv&) {}
  static void Slab(const QuantConv& c, const QuantConv::Slab& s, const Elem* panel, int rows,
                   const int32_t* row_terms, uint8_t* out) {
    const uint8_t* w = reinterpret_cast<const uint8_t*>(c.weights8_.data()) + s.offset;
    const int32_t* terms = c.row_coefficient_ != 0 ? row_terms : nullptr;
    if (c.is_uint8_)
      DotSlabKernel<6, true>(panel, c.k_padded_, rows, c.k_padded_ / 4, w, c.column_bias_.data(),
                             terms, c.requant_, c.DoubleScale(), s.n0, c.n_, out, c.n_);
    else
      DotSlabKernel<6, false>(panel, c.k_padded_, rows, c.k_padded_ / 4, w,
                              c.column_bias_.data(), terms, c.requant_, c.DoubleScale(), s.n0,
                              c.n_, out, c.n_);
  }
};
// The dotprod panel (raw bytes, k padded to 8) and bias folding, with the
// matrix-multiply kernel.
struct I8mmOps : DotprodOps {
  static void Slab(const QuantConv& c, const QuantConv::Slab& s, const Elem* panel, int rows,
                   const int32_t* row_terms, uint8_t* out) {
    const uint8_t* w = reinterpret_cast<const uint8_t*>(c.weights8_.data()) + s.offset;
    const int32_t* terms = c.row_coefficient_ != 0 ? row_terms : nullptr;
    const int k8 = c.k_padded_ / 8;
    const size_t stride = c.k_padded_;
    const double* ds = c.DoubleScale();
    // One row (FULLY_CONNECTED with batch 1): a single pair, half of it padding.
    if (c.is_uint8_) {
      if (rows <= 2)
        MmlaSlabKernel<1, true>(panel, stride, rows, k8, w, c.column_bias_.data(), terms,
                                c.requant_, ds, s.n0, c.n_, out, c.n_);
      else
        MmlaSlabKernel<3, true>(panel, stride, rows, k8, w, c.column_bias_.data(), terms,
                                c.requant_, ds, s.n0, c.n_, out, c.n_);
    } else {
      if (rows <= 2)
        MmlaSlabKernel<1, false>(panel, stride, rows, k8, w, c.column_bias_.data(), terms,
                                 c.requant_, ds, s.n0, c.n_, out, c.n_);
      else
        MmlaSlabKernel<3, false>(panel, stride, rows, k8, w, c.column_bias_.data(), terms,
                                 c.requant_, ds, s.n0, c.n_, out, c.n_);
    }
  }
};
#endif

// ------------------------------------------------------------ QuantConv

bool QuantGroupedConv::Covers(const reference::ConvGeometry& g) {
  reference::ConvGeometry group;
  return GroupGeometry(g, &group) && QuantConv::Covers(group);
}

QuantGroupedConv::QuantGroupedConv(const QuantConvParams& p, Isa isa, int num_threads)
    : g_(p.geometry) {
  const int groups = g_.groups();
  const int per_group = g_.filters_per_group();
  QuantConvParams gp = p;
  GroupGeometry(g_, &gp.geometry);
  const size_t filter_per_group =
      static_cast<size_t>(per_group) * g_.filter_height * g_.filter_width * g_.filter_depth;
  for (int gi = 0; gi < groups; ++gi) {
    const size_t first = static_cast<size_t>(gi) * per_group;
    gp.filter = static_cast<const uint8_t*>(p.filter) + gi * filter_per_group;
    gp.multiplier = p.multiplier != nullptr ? p.multiplier + first : nullptr;
    gp.shift = p.shift != nullptr ? p.shift + first : nullptr;
    gp.bias = p.bias != nullptr ? p.bias + first : nullptr;
    gp.output_scale = p.output_scale != nullptr ? p.output_scale + first : nullptr;
    groups_.push_back(std::make_unique<QuantConv>(gp, isa, 1));
  }
  num_tasks_ = GroupedTasks(g_, num_threads, int64_t{1} << 17);
  scratch_ = PlanGroupedScratch(g_, 1, 1, groups_[0]->scratch_bytes());
}

size_t QuantGroupedConv::packed_bytes() const {
  size_t bytes = 0;
  for (const auto& conv : groups_) bytes += conv->packed_bytes();
  return bytes;
}

void QuantGroupedConv::RunTask(int task, const void* input, void* output,
                               uint8_t* scratch) const {
  RunTaskGroups(g_, scratch_, task, num_tasks_, input, 1, output, 1, scratch,
                [&](int gi, uint8_t* in, uint8_t* out, uint8_t* kernel_scratch) {
                  groups_[gi]->RunTask(0, in, out, kernel_scratch);
                });
}

bool QuantConv::Covers(const reference::ConvGeometry& g) {
  if (g.filter_depth != g.input_depth || g.groups() != 1) return false;
  if (g.output_depth <= 0 || g.batches <= 0 || g.output_height <= 0 || g.output_width <= 0)
    return false;
  const int64_t k = int64_t{g.filter_height} * g.filter_width * g.input_depth;
  // K bounds the panel row (and int16 widening of sums is exact for any K:
  // accumulation wraps modulo 2^32 exactly like the reference).
  return k > 0 && k <= (int64_t{1} << 24);
}

QuantConv::QuantConv(const QuantConvParams& p, Isa isa, int num_threads,
                     std::span<const uint8_t> packed)
    : g_(p.geometry), isa_(isa), is_uint8_(p.is_uint8) {
  const reference::ConvGeometry& g = g_;
  k_ = g.filter_height * g.filter_width * g.input_depth;
  pointwise_ = g.filter_height == 1 && g.filter_width == 1 && g.stride_height == 1 &&
               g.stride_width == 1 && g.pad_height == 0 && g.pad_width == 0 &&
               g.output_height == g.input_height && g.output_width == g.input_width;
  n_ = g.output_depth;
  m_ = int64_t{g.batches} * g.output_height * g.output_width;
  input_zero_point_ = p.input_zero_point;
  // One output channel: the AVX2 dot kernel, which requantizes 8 outputs
  // at once, beats a vnni block of 16 channels of which 15 are padding
  // (kernels_bench conv_int8 32x32x8 -> 1: 1.0 against 2.3 µs).
  if (isa_ == Isa::kAvx512Vnni && n_ == 1) isa_ = Isa::kAvx2;
  const bool vnni = isa_ == Isa::kAvx512Vnni;
  const bool mmla = isa_ == Isa::kI8mm;
  // dotprod and i8mm share the raw-byte panel and the zero-point folding.
  const bool dot = isa_ == Isa::kDotprod || mmla;
  const bool byte_panel = vnni || dot;  // 8-bit panel and weights8_ (else int16)
  const int group = mmla ? 8 : byte_panel ? 4 : 2;
  k_padded_ = static_cast<int>(RoundUp(k_, group));
  amx_ = vnni && AmxSelected() && k_ >= kAmxMinTaps;
  k_weights_ = amx_ ? static_cast<int>(RoundUp(k_padded_, kAmxTaps)) : k_padded_;
  const int blocks16 = (n_ + 15) / 16;
  const int padded_n = blocks16 * 16;

  // Slabs: vnni up to 4 blocks each, balanced; otherwise one block each.
  if (vnni) {
    const int count = (blocks16 + 3) / 4;
    int n0 = 0;
    size_t offset = 0;
    for (int i = 0; i < count; ++i) {
      const int blocks = blocks16 / count + (i < blocks16 % count ? 1 : 0);
      slabs_.push_back(Slab{n0, blocks, offset});
      n0 += blocks * 16;
      offset += static_cast<size_t>(k_weights_) * blocks * 16;
    }
    weights8_.Resize(offset);
  } else if (dot) {
    for (int i = 0; i < blocks16; ++i)
      slabs_.push_back(Slab{i * 16, 1, static_cast<size_t>(i) * k_padded_ * 16});
    weights8_.Resize(static_cast<size_t>(blocks16) * k_padded_ * 16);
  } else {
    for (int i = 0; i < blocks16; ++i)
      slabs_.push_back(Slab{i * 16, 1, static_cast<size_t>(i) * k_padded_ * 16});
    weights16_.Resize(static_cast<size_t>(blocks16) * k_padded_ * 16);
  }

  // Weights, their per-channel sums and the folded bias.
  const uint8_t* f_u8 = static_cast<const uint8_t*>(p.filter);
  const int8_t* f_s8 = static_cast<const int8_t*>(p.filter);
  const int32_t x_zp = p.input_zero_point;
  const int32_t w_zp = is_uint8_ ? p.filter_zero_point : 0;
  column_bias_.Resize(padded_n);
  weight_abs_sum_.Resize(padded_n);
  // A stored packing of the same weights skips the loops below (PackedWeightStore).
  reused_packed_ = LoadPacked(p, packed);
  if (!reused_packed_) {
    for (int n = 0; n < n_; ++n) {
      uint32_t sum = 0, abs_sum = 0;  // abs_sum <= 255 * 2^24 fits
      const size_t row = static_cast<size_t>(n) * k_;
      if (is_uint8_) {
        for (int k = 0; k < k_; ++k) {
          sum += f_u8[row + k];
          abs_sum += static_cast<uint32_t>(std::abs(int32_t{f_u8[row + k]} - w_zp));
        }
      } else {
        for (int k = 0; k < k_; ++k) {
          sum += static_cast<uint32_t>(int32_t{f_s8[row + k]});
          abs_sum += static_cast<uint32_t>(std::abs(int32_t{f_s8[row + k]}));
        }
      }
      weight_abs_sum_[n] = abs_sum;
      uint32_t b = p.bias != nullptr ? static_cast<uint32_t>(p.bias[n]) : 0u;
      if (vnni) {
        if (is_uint8_) {
          b += static_cast<uint32_t>(k_) * static_cast<uint32_t>(w_zp) * static_cast<uint32_t>(x_zp);
          b -= static_cast<uint32_t>(x_zp) * sum;
        } else {
          b -= static_cast<uint32_t>(128 + x_zp) * sum;
        }
      } else if (dot) {
        // Raw bytes: sum (w - w_zp)(x - x_zp) = sum w x - x_zp sum w
        //   + K w_zp x_zp - w_zp sum x (the last per row).
        if (is_uint8_)
          b += static_cast<uint32_t>(k_) * static_cast<uint32_t>(w_zp) * static_cast<uint32_t>(x_zp);
        b -= static_cast<uint32_t>(x_zp) * sum;
      }
      column_bias_[n] = static_cast<int32_t>(b);
    }
    // Padding entries stay zero (the buffers are zero-initialized).
    if (!byte_panel) {
      // [k/2][16][2] int16 w - w_zp: the slabs (one block each) lie one after
      // another.
      if (is_uint8_)
        PackTapPairs<16>(f_u8, n_, k_, w_zp, weights16_.data());
      else
        PackTapPairs<16>(f_s8, n_, k_, w_zp, weights16_.data());
    }
    if (mmla) {
      // [k/8][8 channel pairs][2][8]: a pair's 8 taps each, as smmla reads them.
      for (const Slab& s : slabs_) {
        const int channels = std::min(16, n_ - s.n0);
        int8_t* dst = weights8_.data() + s.offset;
        for (int k8 = 0; k8 < k_padded_ / 8; ++k8, dst += 128) {
          for (int j = 0; j < channels; ++j) {
            const size_t row = static_cast<size_t>(s.n0 + j) * k_;
            for (int i = 0; i < 8; ++i) {
              const int k = 8 * k8 + i;
              if (k >= k_) break;
              dst[(j / 2) * 16 + (j % 2) * 8 + i] = is_uint8_
                  ? static_cast<int8_t>(f_u8[row + k])
                  : f_s8[row + k];
            }
          }
        }
      }
    } else if (byte_panel) {
      // [k/4][block][16][4] (dotprod: one block per slab), written
      // sequentially; the slab's source rows stay in cache across consecutive
      // groups of 4, each group moved as one word (a loop per byte was most
      // of an int8 model's packing time). vnni: uint8 weights as w - 128
      // (signed), i.e. the top bit flipped; dotprod: raw bytes.
      const uint32_t flip = vnni && is_uint8_ ? 0x80808080u : 0u;
      const int whole_groups = k_ / 4;
      for (const Slab& s : slabs_) {
        const int channels = std::min(s.blocks * 16, n_ - s.n0);
        int8_t* dst = weights8_.data() + s.offset;
        for (int k4 = 0; k4 < k_weights_ / 4; ++k4, dst += s.blocks * 64) {
          for (int j = 0; j < channels; ++j) {
            const uint8_t* src = f_u8 + static_cast<size_t>(s.n0 + j) * k_ + 4 * k4;
            if (k4 < whole_groups) {
              uint32_t word;
              std::memcpy(&word, src, 4);
              word ^= flip;
              std::memcpy(dst + j * 4, &word, 4);
              continue;
            }
            for (int i = 0; i < 4 && 4 * k4 + i < k_; ++i)
              dst[j * 4 + i] = static_cast<int8_t>(src[i] ^ static_cast<uint8_t>(flip));
          }
        }
      }
    }
  }
  row_coefficient_ = vnni && is_uint8_ ? 128 - w_zp : dot && is_uint8_ ? -w_zp : 0;
  xor_mask_ = vnni && !is_uint8_ ? 0x80 : 0;
  // uint8 1x1 stride-1 convolutions whose rows need no padding: the input is
  // the panel already (int8 inputs are flipped to x + 128 by the copy; AMX
  // reads whole 64-tap chunks, past a shorter row).
  in_place_rows_ = vnni && is_uint8_ && pointwise_ && k_padded_ == k_ && k_weights_ == k_;
  pad_byte_ = static_cast<uint8_t>(static_cast<uint8_t>(x_zp) ^ xor_mask_);
  if (p.output_scale != nullptr) {
    // Fixed-point constants unused; zeros keep the arrays defined.
    const std::vector<int32_t> zeros(n_, 0);
    requant_.Init(zeros.data(), zeros.data(), n_, padded_n, p.output_zero_point, p.act_min,
                  p.act_max);
    double_rescale_ = true;
    double_scale_.Resize(padded_n);
    for (int c = 0; c < n_; ++c) double_scale_[c] = p.output_scale[c];
  } else {
    requant_.Init(p.multiplier, p.shift, n_, padded_n, p.output_zero_point, p.act_min, p.act_max);
    if (vnni && Requant64Channels::Covers(p.shift, n_)) {
      shift64_requant_ = true;
      requant64_.Init(p.multiplier, p.shift, n_, padded_n, p.output_zero_point, p.act_min,
                      p.act_max, !is_uint8_);
    }
    if (vnni || isa_ == Isa::kAvx2) PrepareMagnitudeRequant(p, padded_n);
  }
  for (Slab& s : slabs_)
    if (s.requant == SlabRequant::kGeneral)
      s.requant = double_rescale_ ? SlabRequant::kDouble
                  : shift64_requant_ ? SlabRequant::kShift64
                                     : SlabRequant::kGeneral;
  // Per-channel constants no slab reads are freed (28 and 24 bytes per
  // channel: a few hundred KB over an EfficientNet). The single-channel
  // kernel (avx2 dot products) reads the general constants.
  const auto any_slab = [&](auto pred) { return std::any_of(slabs_.begin(), slabs_.end(), pred); };
  if (!any_slab([](const Slab& s) { return s.requant == SlabRequant::kShift64; }))
    requant64_ = Requant64Channels();
  if (n_ > 1 && (vnni || isa_ == Isa::kAvx2) && !any_slab([](const Slab& s) {
        return s.requant == SlabRequant::kGeneral || s.requant == SlabRequant::kShift64 ||
               s.requant == SlabRequant::kDouble;
      }))
    requant_.ReleaseChannels();

  // Work split and per-task panel. Small convolutions stay on one thread:
  // below about 5 microseconds of work the hand-off costs more than it saves.
  // That is about 2^19 multiply-adds with vpdpbusd, 2^17 with the int16
  // kernels (AVX2, NEON: a quarter of the rate), 2^15 with scalar code.
  const int64_t min_parallel_macs = vnni || dot ? int64_t{1} << 19
                                    : isa_ == Isa::kScalar ? int64_t{1} << 15
                                                           : int64_t{1} << 17;
  num_tasks_ = m_ * k_ * n_ < min_parallel_macs ? 1 : std::max(1, num_threads);
  split_rows_ = num_tasks_ == 1 || m_ >= 16 * num_tasks_ ||
                static_cast<int>(slabs_.size()) < num_tasks_;
  const size_t elem = byte_panel ? 1 : 2;
  const size_t row_bytes = static_cast<size_t>(k_padded_) * elem;
  int block = static_cast<int>(std::clamp<size_t>(
      kPanelTargetBytes / row_bytes / kPanelRowMultiple * kPanelRowMultiple, kPanelRowMultiple,
      kMaxBlockRows));
  const int64_t rows_per_task = split_rows_ ? (m_ + num_tasks_ - 1) / num_tasks_ : m_;
  block = static_cast<int>(
      std::min<int64_t>(block, RoundUp(static_cast<size_t>(rows_per_task), kPanelRowMultiple)));
  block_rows_ = block;
  panel_bytes_ = RoundUp(static_cast<size_t>(block) * row_bytes, 64) + kIm2colOverwrite;
  per_task_bytes_ = panel_bytes_ + RoundUp(static_cast<size_t>(block) * sizeof(int32_t), 64);
  if (isa_ == Isa::kAvx2 && n_ == 1) {
    // Avx2DotKernel: the one channel's weights contiguous, zero padded to 16
    // (from the packed [k/2][16][2] slab, packed or loaded above).
    dot_weights_.Resize(RoundUp(static_cast<size_t>(k_padded_), 16));  // zeroed
    for (int t = 0; t < k_padded_ / 2; ++t) {
      dot_weights_[2 * static_cast<size_t>(t)] = weights16_[static_cast<size_t>(t) * 32];
      dot_weights_[2 * static_cast<size_t>(t) + 1] = weights16_[static_cast<size_t>(t) * 32 + 1];
    }
  }
}

void QuantConv::PrepareMagnitudeRequant(const QuantConvParams& p, int padded_n) {
#if DELEGATO_X86
  const bool ifma = isa_ == Isa::kAvx512Vnni && CpuHasAvx512Ifma();
  const int64_t deviation = MaxInputDeviation(is_uint8_, p.input_zero_point);
  magnitude_.Init(padded_n, ifma);
  bool any = false;
  for (Slab& s : slabs_) {
    const int end = std::min(n_, s.n0 + 16 * s.blocks);
    int64_t largest = 0;
    bool exact = true;
    for (int c = s.n0; c < end && exact; ++c) {
      const int64_t bias = p.bias != nullptr ? p.bias[c] : 0;
      const int64_t bound = std::abs(bias) + deviation * int64_t{weight_abs_sum_[c]};  // of |acc|
      exact = MagnitudeExact(p.multiplier[c], p.shift[c], bound);
      largest = std::max(largest, bound);
    }
    if (!exact) continue;
    for (int c = s.n0; c < end; ++c) magnitude_.Set(c, p.multiplier[c], p.shift[c]);
    s.requant = ifma && largest < (int64_t{1} << 20) ? SlabRequant::kMagnitudeIfma
                                                     : SlabRequant::kMagnitude;
    any = true;
  }
  if (!any) magnitude_ = MagnitudeChannels();
#else
  (void)p;
  (void)padded_n;
#endif
}

// Rows a kernel may compute for `rows` rows of a block: whole tiles of its
// MR (a divisor of kPanelRowMultiple, at most kMaxTileRows) rows.
int QuantConv::TileRows(int rows) const {
  return static_cast<int>(std::min<size_t>(
      {RoundUp(rows, kPanelRowMultiple), static_cast<size_t>(rows) + kMaxTileRows - 1,
       static_cast<size_t>(block_rows_)}));
}

template <class Ops>
void QuantConv::PackPanel(const uint8_t* input, int64_t m0, int rows, typename Ops::Elem* panel,
                          int32_t* row_terms) const {
  using Elem = typename Ops::Elem;
  const reference::ConvGeometry& g = g_;
  const size_t cin = g.input_depth;
  const size_t kp = k_padded_;
  if (pointwise_) {
    const uint8_t* src = input + static_cast<size_t>(m0) * cin;
    if (kp == cin) {
      Ops::Copy(*this, panel, src, static_cast<size_t>(rows) * cin);
    } else {
      for (int r = 0; r < rows; ++r) {
        Ops::Copy(*this, panel + r * kp, src + r * cin, cin);
        Ops::Zero(panel + r * kp + cin, kp - cin);
      }
    }
  } else if constexpr (Ops::kOwnIm2col) {
    Ops::Im2col(*this, input, m0, rows, panel);
  } else {
    // Geometry in locals: the byte stores below may alias anything, and the
    // compiler would reload every field per row.
    const int32_t out_h = g.output_height, out_w = g.output_width;
    const int32_t in_h = g.input_height, in_w = g.input_width;
    const int32_t filter_h = g.filter_height, filter_w = g.filter_width;
    const int32_t stride_h = g.stride_height, stride_w = g.stride_width;
    const int32_t dilation_h = g.dilation_height, dilation_w = g.dilation_width;
    const int32_t pad_h = g.pad_height, pad_w = g.pad_width;
    const size_t k = static_cast<size_t>(k_);
    const int64_t plane = int64_t{out_h} * out_w;
    const size_t batch_size = static_cast<size_t>(in_h) * in_w * cin;
    const size_t row_taps = static_cast<size_t>(filter_w) * cin;
    const size_t in_row_stride = static_cast<size_t>(in_w) * cin;
    // (batch, y, x) of the first row, then stepped without divisions.
    int64_t b = m0 / plane;
    int32_t oy = static_cast<int32_t>((m0 % plane) / out_w);
    int32_t ox = static_cast<int32_t>((m0 % plane) % out_w);
    for (int r = 0; r < rows; ++r, ++ox) {
      if (ox == out_w) {
        ox = 0;
        if (++oy == out_h) {
          oy = 0;
          ++b;
        }
      }
      const uint8_t* batch_in = input + static_cast<size_t>(b) * batch_size;
      Elem* dst = panel + r * kp;
      const int32_t iy0 = oy * stride_h - pad_h;
      const int32_t ix0 = ox * stride_w - pad_w;
      const bool whole_row = dilation_w == 1 && ix0 >= 0 && ix0 + filter_w <= in_w;
      for (int32_t fy = 0; fy < filter_h; ++fy) {
        const int32_t iy = iy0 + dilation_h * fy;
        if (iy < 0 || iy >= in_h) {
          Ops::Fill(*this, dst, row_taps);
          dst += row_taps;
          continue;
        }
        const uint8_t* in_row = batch_in + static_cast<size_t>(iy) * in_row_stride;
        if (whole_row) {
          Ops::Copy(*this, dst, in_row + static_cast<size_t>(ix0) * cin, row_taps);
          dst += row_taps;
          continue;
        }
        for (int32_t fx = 0; fx < filter_w; ++fx, dst += cin) {
          const int32_t ix = ix0 + dilation_w * fx;
          if (ix < 0 || ix >= in_w)
            Ops::Fill(*this, dst, cin);
          else
            Ops::Copy(*this, dst, in_row + static_cast<size_t>(ix) * cin, cin);
        }
      }
      Ops::Zero(dst, kp - k);
    }
  }
  // Kernels compute whole tiles of rows: give the rows past the end defined
  // (zero) values; their results are never stored.
  const int padded_rows = TileRows(rows);
  if (padded_rows > rows) Ops::Zero(panel + rows * kp, (padded_rows - rows) * kp);
  if (row_coefficient_ != 0) {
    Ops::RowSums(*this, panel, rows, row_terms);
    std::fill(row_terms + rows, row_terms + padded_rows, 0);
  }
}

template <class Ops>
void QuantConv::Run(int task, const uint8_t* input, uint8_t* output, uint8_t* scratch) const {
  using Elem = typename Ops::Elem;
  int64_t m_begin = 0, m_end = m_;
  size_t s_begin = 0, s_end = slabs_.size();
  if (split_rows_) {
    m_begin = m_ * task / num_tasks_;
    m_end = m_ * (task + 1) / num_tasks_;
  } else {
    s_begin = slabs_.size() * task / num_tasks_;
    s_end = slabs_.size() * (task + 1) / num_tasks_;
  }
  if (m_begin >= m_end || s_begin >= s_end) return;
  uint8_t* base = scratch + static_cast<size_t>(task) * per_task_bytes_;
  Elem* panel = reinterpret_cast<Elem*>(base);
  int32_t* row_terms = reinterpret_cast<int32_t*>(base + panel_bytes_);
  Ops::Begin(*this);
  for (int64_t m0 = m_begin; m0 < m_end; m0 += block_rows_) {
    const int rows = static_cast<int>(std::min<int64_t>(block_rows_, m_end - m0));
    const Elem* source = panel;
    const int padded_rows = TileRows(rows);
    if (Ops::kOwnIm2col && in_place_rows_ && m0 + padded_rows <= m_) {
      // The kernels read the input rows where they are (rows past `rows`
      // are computed and dropped, so they must exist: m0 + padded_rows <= m).
      source = reinterpret_cast<const Elem*>(input + static_cast<size_t>(m0) * k_);
      if (row_coefficient_ != 0) {
        Ops::RowSums(*this, source, rows, row_terms);
        std::fill(row_terms + rows, row_terms + padded_rows, 0);
      }
    } else {
      PackPanel<Ops>(input, m0, rows, panel, row_terms);
    }
    uint8_t* out = output + static_cast<size_t>(m0) * n_;
    for (size_t s = s_begin; s < s_end; ++s)
      Ops::Slab(*this, slabs_[s], source, rows, row_terms, out);
  }
  Ops::End(*this);
}

void QuantConv::RunTask(int task, const void* input, void* output, uint8_t* scratch) const {
  const uint8_t* in = static_cast<const uint8_t*>(input);
  uint8_t* out = static_cast<uint8_t*>(output);
  switch (isa_) {
#if DELEGATO_X86
    case Isa::kAvx512Vnni:
      Run<VnniOps>(task, in, out, scratch);
      return;
    case Isa::kAvx2:
      Run<Avx2Ops>(task, in, out, scratch);
      return;
#endif
#if DELEGATO_ARM
    case Isa::kI8mm:
      Run<I8mmOps>(task, in, out, scratch);
      return;
    case Isa::kDotprod:
      Run<DotprodOps>(task, in, out, scratch);
      return;
    case Isa::kNeon:
      Run<NeonOps>(task, in, out, scratch);
      return;
#endif
    default:
      Run<ScalarOps>(task, in, out, scratch);
      return;
  }
}

}  // namespace delegato::optimized
