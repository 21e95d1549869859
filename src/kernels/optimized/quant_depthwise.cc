#include "kernels/optimized/quant_depthwise.h"

#include "kernels/optimized/requantize64.h"

#include <algorithm>
#include <cstring>

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

// GCC 12 reports false "(may be) used uninitialized" warnings from inside
// its own AVX-512 intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace delegato::optimized {
namespace {

// Taps [*lo, *hi) of one dimension whose input coordinate
// origin + dilation * tap lies in [0, size).
inline void ValidTaps(int32_t origin, int32_t dilation, int32_t filter, int32_t size, int32_t* lo,
                      int32_t* hi) {
  const int32_t l = origin < 0 ? (-origin + dilation - 1) / dilation : 0;
  int32_t h = origin >= size ? 0 : std::min(filter, (size - 1 - origin) / dilation + 1);
  *lo = std::min(l, filter);
  *hi = std::max(h, *lo);
}

inline int32_t WeightOf(int32_t packed) {
  return static_cast<int16_t>(static_cast<uint16_t>(packed & 0xFFFF));
}

// Channels [c_begin, c_end) of output rows [begin, end), one at a time.
void ScalarRows(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* input,
                uint8_t* output, int32_t c_begin, int32_t c_end) {
  const reference::DepthwiseGeometry& g = d.geometry();
  const size_t channels = g.output_depth;
  const size_t in_channels = g.input_depth;
  const int32_t multiplier = g.depth_multiplier;
  const size_t padded = d.padded_channels();
  const bool is_uint8 = d.is_uint8();
  const int32_t x_off = d.input_offset();
  const size_t batch_size = static_cast<size_t>(g.input_height) * g.input_width * in_channels;
  for (int64_t row = begin; row < end; ++row) {
    const int32_t b = static_cast<int32_t>(row / g.output_height);
    const int32_t oy = static_cast<int32_t>(row % g.output_height);
    const int32_t iy0 = oy * g.stride_height - g.pad_height;
    const int32_t fy_lo = d.y_taps()[oy].lo, fy_hi = d.y_taps()[oy].hi;
    const uint8_t* in_batch = input + b * batch_size;
    uint8_t* out_row = output + static_cast<size_t>(row) * g.output_width * channels;
    for (int32_t ox = 0; ox < g.output_width; ++ox) {
      const int32_t ix0 = ox * g.stride_width - g.pad_width;
      const int32_t fx_lo = d.x_taps()[ox].lo, fx_hi = d.x_taps()[ox].hi;
      // Blocks of channels, tap by tap: contiguous inner loops.
      constexpr int32_t kBlock = 64;
      for (int32_t c0 = c_begin; c0 < c_end; c0 += kBlock) {
        const int32_t n = std::min(kBlock, c_end - c0);
        uint32_t acc[kBlock];
        for (int32_t j = 0; j < n; ++j) acc[j] = static_cast<uint32_t>(d.bias_border()[c0 + j]);
        for (int32_t fy = fy_lo; fy < fy_hi; ++fy) {
          const int32_t iy = iy0 + g.dilation_height * fy;
          for (int32_t fx = fx_lo; fx < fx_hi; ++fx) {
            const int32_t ix = ix0 + g.dilation_width * fx;
            const uint8_t* px = in_batch + (static_cast<size_t>(iy) * g.input_width + ix) * in_channels;
            const int32_t* w = d.weights() + (fy * g.filter_width + fx) * padded + c0;
            for (int32_t j = 0; j < n; ++j) {
              const uint8_t raw = px[multiplier == 1 ? c0 + j : (c0 + j) / multiplier];
              const int32_t x = (is_uint8 ? int32_t{raw} : int32_t{static_cast<int8_t>(raw)}) + x_off;
              acc[j] += static_cast<uint32_t>(WeightOf(w[j]) * x);
            }
          }
        }
        uint8_t* out = out_row + static_cast<size_t>(ox) * channels + c0;
        for (int32_t j = 0; j < n; ++j)
          out[j] = static_cast<uint8_t>(RequantizeOne(d.requant(), c0 + j, static_cast<int32_t>(acc[j])));
      }
    }
  }
}

#if DELEGATO_X86

template <bool kSigned>
DLG_TARGET_AVX512 inline __m512i Widen512(__m128i bytes) {
  return kSigned ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
}

// Everything one 16-channel block of one row needs.
struct Block512 {
  const uint8_t* in;  // input at (batch, row 0, column 0, block's first input channel)
  uint8_t* out;       // output at (batch, y, column 0, block's first channel)
  const int32_t* w;   // weights of the block's first channel, tap stride `padded`
  size_t padded, pixel_stride, row_stride, dilated_x, dilated_y;
  int32_t iy0, fy_lo, fy_hi, fw, stride_w, pad_w, dilation_w, dilation_h, channels;
  __mmask16 mask;     // output channels of the block
  __mmask16 in_mask;  // input bytes the block reads
  __m128i expand;     // depth multiplier > 1: byte shuffle input -> output channels
  __m512i bias_border, x_off, lo, hi, offset;
  Requant512 requant;
};

// kFull: 16 output channels, read unmasked (multiplier 1 only). kExpand:
// input channel (cb + j) / multiplier goes to lane j.
template <bool kSigned, bool kFull, bool kExpand>
DLG_TARGET_AVX512 inline __m512i LoadWiden512(const uint8_t* p, const Block512& b) {
  __m128i bytes;
  if constexpr (kFull && !kExpand)
    bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  else
    bytes = _mm_maskz_loadu_epi8(b.in_mask, p);
  if constexpr (kExpand) bytes = _mm_shuffle_epi8(bytes, b.expand);
  return Widen512<kSigned>(bytes);
}

DLG_TARGET_AVX512 inline void StorePixel512(const Block512& b, int32_t ox, __m512i acc) {
  const __m512i v = Requantize512(acc, b.requant, b.lo, b.hi, b.offset);
  _mm_mask_storeu_epi8(b.out + static_cast<size_t>(ox) * b.channels, b.mask,
                       _mm512_cvtepi32_epi8(v));
}

// A pixel with taps outside the image: the input offset is added per tap.
template <bool kSigned, bool kExpand>
DLG_TARGET_AVX512 void BorderPixel512(const Block512& b, int32_t ox, int32_t fx_lo, int32_t fx_hi) {
  const int32_t ix0 = ox * b.stride_w - b.pad_w;
  __m512i acc = b.bias_border;
  for (int32_t fy = b.fy_lo; fy < b.fy_hi; ++fy) {
    const uint8_t* in_row = b.in + static_cast<size_t>(b.iy0 + b.dilation_h * fy) * b.row_stride;
    for (int32_t fx = fx_lo; fx < fx_hi; ++fx) {
      const int32_t ix = ix0 + b.dilation_w * fx;
      const __m512i x = _mm512_add_epi32(
          LoadWiden512<kSigned, false, kExpand>(in_row + static_cast<size_t>(ix) * b.pixel_stride, b),
          b.x_off);
      acc = _mm512_dpwssd_epi32(acc, x, _mm512_load_si512(b.w + (fy * b.fw + fx) * b.padded));
    }
  }
  StorePixel512(b, ox, acc);
}

// Output x in [begin, end), every tap inside the image, two pixels at a
// time (independent accumulation chains), weights in registers.
template <bool kSigned, int FH, int FW, bool kFull, bool kExpand>
DLG_TARGET_AVX512 void InteriorPixels512(const Block512& b, int32_t begin, int32_t end,
                                         __m512i bias_interior) {
  __m512i wv[FH * FW];
#pragma GCC unroll 25
  for (int t = 0; t < FH * FW; ++t) wv[t] = _mm512_load_si512(b.w + t * b.padded);
  const size_t step = static_cast<size_t>(b.stride_w) * b.pixel_stride;
  const uint8_t* origin = b.in + static_cast<size_t>(b.iy0) * b.row_stride +
                          static_cast<size_t>(begin * b.stride_w - b.pad_w) * b.pixel_stride;
  int32_t ox = begin;
  for (; ox + 2 <= end; ox += 2, origin += 2 * step) {
    __m512i acc0 = bias_interior, acc1 = bias_interior;
#pragma GCC unroll 5
    for (int fy = 0; fy < FH; ++fy) {
#pragma GCC unroll 5
      for (int fx = 0; fx < FW; ++fx) {
        const uint8_t* p = origin + fy * b.dilated_y + fx * b.dilated_x;
        acc0 = _mm512_dpwssd_epi32(acc0, LoadWiden512<kSigned, kFull, kExpand>(p, b),
                                   wv[fy * FW + fx]);
        acc1 = _mm512_dpwssd_epi32(acc1, LoadWiden512<kSigned, kFull, kExpand>(p + step, b),
                                   wv[fy * FW + fx]);
      }
    }
    StorePixel512(b, ox, acc0);
    StorePixel512(b, ox + 1, acc1);
  }
  if (ox < end) {
    __m512i acc = bias_interior;
#pragma GCC unroll 5
    for (int fy = 0; fy < FH; ++fy)
#pragma GCC unroll 5
      for (int fx = 0; fx < FW; ++fx)
        acc = _mm512_dpwssd_epi32(
            acc, LoadWiden512<kSigned, kFull, kExpand>(origin + fy * b.dilated_y + fx * b.dilated_x, b),
            wv[fy * FW + fx]);
    StorePixel512(b, ox, acc);
  }
}

// FH/FW: the filter size when known at compile time (0: any size, border
// path everywhere).
template <bool kSigned, int FH, int FW, bool kExpand>
DLG_TARGET_AVX512 void Avx512Rows(const QuantDepthwise& d, int64_t begin, int64_t end,
                                  const uint8_t* input, uint8_t* output) {
  const reference::DepthwiseGeometry g = d.geometry();
  const int32_t channels = g.output_depth;
  const int32_t in_channels = g.input_depth;
  const int32_t multiplier = g.depth_multiplier;
  const size_t row_stride = static_cast<size_t>(g.input_width) * in_channels;
  const size_t batch_size = static_cast<size_t>(g.input_height) * row_stride;
  const QuantDepthwise::TapRange* x_taps = d.x_taps();
  const RequantChannels& rq = d.requant();
  Block512 b;
  b.padded = d.padded_channels();
  b.pixel_stride = in_channels;
  b.row_stride = row_stride;
  b.dilated_x = static_cast<size_t>(g.dilation_width) * in_channels;
  b.dilated_y = static_cast<size_t>(g.dilation_height) * row_stride;
  b.fw = g.filter_width;
  b.stride_w = g.stride_width;
  b.pad_w = g.pad_width;
  b.dilation_w = g.dilation_width;
  b.dilation_h = g.dilation_height;
  b.channels = channels;
  b.x_off = _mm512_set1_epi32(d.input_offset());
  b.lo = _mm512_set1_epi32(rq.clamp_min);
  b.hi = _mm512_set1_epi32(rq.clamp_max);
  b.offset = _mm512_set1_epi32(rq.output_offset);
  const int32_t interior_begin = d.interior_x_begin(), interior_end = d.interior_x_end();
  for (int64_t row = begin; row < end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t oy = static_cast<int32_t>(row % g.output_height);
    b.iy0 = oy * g.stride_height - g.pad_height;
    b.fy_lo = d.y_taps()[oy].lo;
    b.fy_hi = d.y_taps()[oy].hi;
    const bool rows_full = FH > 0 && b.fy_lo == 0 && b.fy_hi == g.filter_height;
    for (int32_t cb = 0; cb < channels; cb += 16) {
      const int32_t count = std::min(16, channels - cb);
      const bool full = count == 16;
      b.mask = static_cast<__mmask16>(_bzhi_u32(0xFFFF, count));
      const int32_t in_first = cb / multiplier;
      b.in_mask = static_cast<__mmask16>(
          _bzhi_u32(0xFFFF, (cb + count - 1) / multiplier - in_first + 1));
      if constexpr (kExpand) {
        alignas(16) uint8_t pattern[16];
        for (int j = 0; j < 16; ++j)
          pattern[j] = static_cast<uint8_t>(std::min(cb + j, channels - 1) / multiplier - in_first);
        b.expand = _mm_load_si128(reinterpret_cast<const __m128i*>(pattern));
      }
      b.requant = LoadRequant512(rq, cb);
      b.bias_border = _mm512_load_si512(d.bias_border() + cb);
      b.w = d.weights() + cb;
      b.in = input + batch * batch_size + in_first;
      b.out = output + static_cast<size_t>(row) * g.output_width * channels + cb;
      int32_t ib = 0, ie = 0;  // interior columns of this row
      if (rows_full) {
        ib = interior_begin;
        ie = interior_end;
      }
      for (int32_t ox = 0; ox < ib; ++ox)
        BorderPixel512<kSigned, kExpand>(b, ox, x_taps[ox].lo, x_taps[ox].hi);
      if constexpr (FH > 0) {
        if (ib < ie) {
          const __m512i bias_interior = _mm512_load_si512(d.bias_interior() + cb);
          if (full)
            InteriorPixels512<kSigned, FH, FW, true, kExpand>(b, ib, ie, bias_interior);
          else
            InteriorPixels512<kSigned, FH, FW, false, kExpand>(b, ib, ie, bias_interior);
        }
      }
      for (int32_t ox = std::max(ie, ib); ox < g.output_width; ++ox)
        if (ox < ib || ox >= ie)
          BorderPixel512<kSigned, kExpand>(b, ox, x_taps[ox].lo, x_taps[ox].hi);
    }
  }
}

template <bool kSigned>
DLG_TARGET_AVX2 inline __m256i Widen256(__m128i bytes) {
  return kSigned ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
}

// Full blocks of 8 channels; the remaining channels go through ScalarRows.
template <bool kSigned>
DLG_TARGET_AVX2 void Avx2Rows(const QuantDepthwise& d, int64_t begin, int64_t end,
                              const uint8_t* input, uint8_t* output) {
  const reference::DepthwiseGeometry g = d.geometry();
  const int32_t channels = g.output_depth;
  const int32_t full = channels / 8 * 8;
  const size_t padded = d.padded_channels();
  const size_t batch_size = static_cast<size_t>(g.input_height) * g.input_width * channels;
  const RequantChannels& rq = d.requant();
  const __m256i lo = _mm256_set1_epi32(rq.clamp_min);
  const __m256i hi = _mm256_set1_epi32(rq.clamp_max);
  const __m256i offset = _mm256_set1_epi32(rq.output_offset);
  const __m256i x_off = _mm256_set1_epi32(d.input_offset());
  for (int64_t row = begin; row < end; ++row) {
    const int32_t b = static_cast<int32_t>(row / g.output_height);
    const int32_t oy = static_cast<int32_t>(row % g.output_height);
    const int32_t iy0 = oy * g.stride_height - g.pad_height;
    const int32_t fy_lo = d.y_taps()[oy].lo, fy_hi = d.y_taps()[oy].hi;
    const bool rows_full = fy_lo == 0 && fy_hi == g.filter_height;
    const uint8_t* in_batch = input + b * batch_size;
    uint8_t* out_row = output + static_cast<size_t>(row) * g.output_width * channels;
    for (int32_t cb = 0; cb < full; cb += 8) {
      const Requant256 p = LoadRequant256(rq, cb);
      const __m256i bias_interior = Load256(d.bias_interior() + cb);
      const __m256i bias_border = Load256(d.bias_border() + cb);
      const int32_t* w = d.weights() + cb;
      for (int32_t ox = 0; ox < g.output_width; ++ox) {
        const int32_t ix0 = ox * g.stride_width - g.pad_width;
        const int32_t fx_lo = d.x_taps()[ox].lo, fx_hi = d.x_taps()[ox].hi;
        const bool interior = rows_full && fx_lo == 0 && fx_hi == g.filter_width;
        __m256i acc = interior ? bias_interior : bias_border;
        for (int32_t fy = fy_lo; fy < fy_hi; ++fy) {
          const int32_t iy = iy0 + g.dilation_height * fy;
          const uint8_t* in_row = in_batch + static_cast<size_t>(iy) * g.input_width * channels + cb;
          for (int32_t fx = fx_lo; fx < fx_hi; ++fx) {
            const int32_t ix = ix0 + g.dilation_width * fx;
            __m256i x = Widen256<kSigned>(
                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in_row + static_cast<size_t>(ix) * channels)));
            if (!interior) x = _mm256_add_epi32(x, x_off);
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, Load256(w + (fy * g.filter_width + fx) * padded)));
          }
        }
        const __m256i v = Requantize256(acc, p, lo, hi, offset);
        // 8 low bytes of the 8 lanes.
        const __m128i bytes = NarrowToBytes256(v, v);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out_row + static_cast<size_t>(ox) * channels + cb), bytes);
      }
    }
  }
  if (full < channels) ScalarRows(d, begin, end, input, output, full, channels);
}

// ---- Tap pairs (multiplier 1, 3x3 and 5x5; see the header).

// Lane j holds (a[j], b[j]) of channel j in its low and high int16.
template <bool kSigned>
DLG_TARGET_AVX2 inline __m256i Pair8(const uint8_t* a, const uint8_t* b) {
  const __m128i bytes = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)),
                                          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b)));
  return kSigned ? _mm256_cvtepi8_epi16(bytes) : _mm256_cvtepu8_epi16(bytes);
}

// A lone tap: lane j holds a[j] widened to 32 bits; its high int16 (0 or -1)
// meets a zero weight.
template <bool kSigned>
DLG_TARGET_AVX2 inline __m256i Lone8(const uint8_t* a) {
  return Widen256<kSigned>(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)));
}

DLG_TARGET_AVX2 inline __m256i PairMadd(__m256i acc, __m256i x, const int32_t* w) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(x, Load256(w)));
}

// Per-channel requantization of 8 lanes (RequantChannels' values; the
// rounding divide takes |x| + 2^(s-1) >> s with x's sign: round half away
// from zero, like the reference).
struct PairRequant {
  __m256i multiplier, multiplier_odd, left_shift, right_shift, round;
};

DLG_TARGET_AVX2 inline PairRequant LoadPairRequant(const RequantChannels& rq, int c) {
  PairRequant r;
  r.multiplier = Load256(rq.multiplier.data() + c);
  r.multiplier_odd = _mm256_srli_epi64(r.multiplier, 32);
  // Shift counts act modulo 32 like the reference's ShiftLeftWrapping.
  r.left_shift = _mm256_and_si256(Load256(rq.left_shift.data() + c), _mm256_set1_epi32(31));
  r.right_shift = Load256(rq.right_shift.data() + c);
  // 2^(s-1) for s > 0, else 0.
  r.round = _mm256_sub_epi32(Load256(rq.threshold.data() + c),
                             _mm256_cmpgt_epi32(r.right_shift, _mm256_setzero_si256()));
  return r;
}

// MultiplyByQuantizedMultiplier: requantize.h's doubling high multiply, then
// the rounding divide above.
DLG_TARGET_AVX2 inline __attribute__((always_inline)) __m256i PairScale(__m256i acc,
                                                                        const PairRequant& p) {
  const __m256i x = _mm256_sllv_epi32(acc, p.left_shift);
  const __m256i nudge = _mm256_set1_epi64x(int64_t{1} << 30);
  __m256i even = _mm256_add_epi64(_mm256_mul_epi32(x, p.multiplier), nudge);
  __m256i odd =
      _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), p.multiplier_odd), nudge);
  even = _mm256_srli_epi64(even, 31);
  odd = _mm256_slli_epi64(odd, 1);
  const __m256i high = _mm256_blend_epi32(even, odd, 0xAA);
  // |INT32_MIN| + 2^30 still fits in 32 unsigned bits.
  const __m256i magnitude =
      _mm256_srlv_epi32(_mm256_add_epi32(_mm256_abs_epi32(high), p.round), p.right_shift);
  return _mm256_sign_epi32(magnitude, high);
}

// Everything one 8-channel block of one output row needs.
struct PairBlock {
  const uint8_t* rows[5];  // input row of each filter row at the block's first
                           // channel; the zero-point row outside the image
  const uint8_t* zero;     // a pixel of input zero points
  uint8_t* out;            // output at (batch, y, column 0, block's first channel)
  const int32_t* w;        // the block's pair weights
  size_t pixel;            // channels
  int32_t stride_w, pad_w, dilation_w, width;
  __m256i bias;
  __m256i offset;            // output zero point, int16 lanes
  __m256i act_min, act_max;  // bytes
  __m256i gather;            // dwords 0, 4, 1, 5: each pixel's bytes together
  PairRequant rq;
  MagnitudeRequant256 mq;
};

// Output bytes of accumulators a and c: a 0-7 in the low 8 bytes, c 0-7 in
// the next 8. The output zero point is added with int16 saturation, which
// keeps every value outside the output range outside it, so clamping the
// packed bytes gives the reference's clamp.
template <bool kSigned, bool kMag>
DLG_TARGET_AVX2 inline __attribute__((always_inline)) __m128i PairBytes(const PairBlock& b,
                                                                        __m256i a, __m256i c) {
  // a 0-3, c 0-3 | a 4-7, c 4-7
  __m256i words;
  if constexpr (kMag)
    words = _mm256_adds_epi16(_mm256_packs_epi32(_mm256_sign_epi32(Magnitude256(a, b.mq), a),
                                                 _mm256_sign_epi32(Magnitude256(c, b.mq), c)),
                              b.offset);
  else
    words = _mm256_adds_epi16(_mm256_packs_epi32(PairScale(a, b.rq), PairScale(c, b.rq)),
                              b.offset);
  __m256i bytes;
  if constexpr (kSigned)
    bytes = _mm256_min_epi8(_mm256_max_epi8(_mm256_packs_epi16(words, words), b.act_min),
                            b.act_max);
  else
    bytes = _mm256_min_epu8(_mm256_max_epu8(_mm256_packus_epi16(words, words), b.act_min),
                            b.act_max);
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(bytes, b.gather));
}

// One output pixel. kCheck: columns outside the image read the zero pixel.
template <bool kSigned, bool kMag, int FH, int FW, bool kCheck>
DLG_TARGET_AVX2 inline __attribute__((always_inline)) void PairPixel(const PairBlock& b,
                                                                     int32_t ox) {
  constexpr int kRowPairs = FH / 2;
  const int32_t ix0 = ox * b.stride_w - b.pad_w;
  const uint8_t* px[FH][FW];
#pragma GCC unroll 5
  for (int fx = 0; fx < FW; ++fx) {
    const int32_t ix = ix0 + fx * b.dilation_w;
    const bool inside = !kCheck || static_cast<uint32_t>(ix) < static_cast<uint32_t>(b.width);
#pragma GCC unroll 5
    for (int r = 0; r < FH; ++r)
      px[r][fx] = inside ? b.rows[r] + static_cast<size_t>(ix) * b.pixel : b.zero;
  }
  __m256i acc = b.bias;
#pragma GCC unroll 5
  for (int rp = 0; rp < kRowPairs; ++rp)
#pragma GCC unroll 5
    for (int fx = 0; fx < FW; ++fx)
      acc = PairMadd(acc, Pair8<kSigned>(px[2 * rp][fx], px[2 * rp + 1][fx]),
                     b.w + (rp * FW + fx) * 8);
  if constexpr (FH % 2 == 1) {
#pragma GCC unroll 5
    for (int q = 0; q <= FW / 2; ++q) {
      const int32_t* w = b.w + (kRowPairs * FW + q) * 8;
      if (2 * q + 1 < FW)
        acc = PairMadd(acc, Pair8<kSigned>(px[FH - 1][2 * q], px[FH - 1][2 * q + 1]), w);
      else
        acc = PairMadd(acc, Lone8<kSigned>(px[FH - 1][2 * q]), w);
    }
  }
  _mm_storel_epi64(reinterpret_cast<__m128i*>(b.out + static_cast<size_t>(ox) * b.pixel),
                   PairBytes<kSigned, kMag>(b, acc, acc));
}

// Output x in [begin, end) (an even count, every column inside the image),
// stride 1 and dilation 1: pixels x and x + 1 use the interleaved columns
// c .. c + FW, built once and slid by two columns per step. The odd last row
// pairs columns (c, c + 1), (c + 2, c + 3), ...: x takes them with weights
// (w0, w1), (w2, w3), ..., x + 1 with (0, w0), (w1, w2), ...
template <bool kSigned, bool kMag, int FH, int FW>
DLG_TARGET_AVX2 void PairPixels2(const PairBlock& b, int32_t begin, int32_t end) {
  static_assert(FW % 2 == 1, "odd filter widths");
  constexpr int kRowPairs = FH / 2, kLastPairs = FW / 2 + 1, kP = kRowPairs > 0 ? kRowPairs : 1;
  const int32_t* wa = b.w + kRowPairs * FW * 8;  // odd last row, pixel x
  const int32_t* wc = wa + kLastPairs * 8;       // odd last row, pixel x + 1
  const size_t pixel = b.pixel;
  __m256i cols[FW + 1][kP];
  __m256i q[kLastPairs];
  const uint8_t* rows[FH];
  for (int r = 0; r < FH; ++r) rows[r] = b.rows[r] + static_cast<size_t>(begin - b.pad_w) * pixel;
#pragma GCC unroll 5
  for (int j = 0; j < FW - 1; ++j)
#pragma GCC unroll 5
    for (int rp = 0; rp < kRowPairs; ++rp)
      cols[j][rp] = Pair8<kSigned>(rows[2 * rp] + j * pixel, rows[2 * rp + 1] + j * pixel);
  if constexpr (FH % 2 == 1) {
#pragma GCC unroll 5
    for (int k = 0; k < kLastPairs - 1; ++k)
      q[k] = Pair8<kSigned>(rows[FH - 1] + 2 * k * pixel, rows[FH - 1] + (2 * k + 1) * pixel);
  }
  for (int32_t ox = begin; ox + 2 <= end; ox += 2) {
#pragma GCC unroll 5
    for (int rp = 0; rp < kRowPairs; ++rp) {
      cols[FW - 1][rp] = Pair8<kSigned>(rows[2 * rp] + (FW - 1) * pixel,
                                        rows[2 * rp + 1] + (FW - 1) * pixel);
      cols[FW][rp] = Pair8<kSigned>(rows[2 * rp] + FW * pixel, rows[2 * rp + 1] + FW * pixel);
    }
    __m256i a = b.bias, c = b.bias;
#pragma GCC unroll 5
    for (int rp = 0; rp < kRowPairs; ++rp) {
#pragma GCC unroll 5
      for (int fx = 0; fx < FW; ++fx) {
        const int32_t* w = b.w + (rp * FW + fx) * 8;
        a = PairMadd(a, cols[fx][rp], w);
        c = PairMadd(c, cols[fx + 1][rp], w);
      }
    }
    if constexpr (FH % 2 == 1) {
      q[kLastPairs - 1] =
          Pair8<kSigned>(rows[FH - 1] + (FW - 1) * pixel, rows[FH - 1] + FW * pixel);
#pragma GCC unroll 5
      for (int k = 0; k < kLastPairs; ++k) {
        a = PairMadd(a, q[k], wa + k * 8);
        c = PairMadd(c, q[k], wc + k * 8);
      }
    }
    const __m128i bytes = PairBytes<kSigned, kMag>(b, a, c);
    uint8_t* out = b.out + static_cast<size_t>(ox) * pixel;
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), bytes);
    _mm_storeh_pi(reinterpret_cast<__m64*>(out + pixel), _mm_castsi128_ps(bytes));
#pragma GCC unroll 5
    for (int j = 0; j < FW - 1; ++j)
#pragma GCC unroll 5
      for (int rp = 0; rp < kP; ++rp) cols[j][rp] = cols[j + 2][rp];
#pragma GCC unroll 5
    for (int k = 0; k < kLastPairs - 1; ++k) q[k] = q[k + 1];
#pragma GCC unroll 5
    for (int r = 0; r < FH; ++r) rows[r] += 2 * pixel;
  }
}

// As PairPixels2 with stride 2: x uses columns c .. c + FW - 1, x + 1 uses
// c + 2 .. c + FW + 1, and the last FW - 2 carry over to the next step. The
// odd last row pairs (c, c + 1), (c + 2, c + 3), ... up to c + FW, weights
// (w0, w1), (w2, w3), ..., (w[FW-1], 0) for x and, one pair on, for x + 1,
// whose last tap c + FW + 1 is lone.
template <bool kSigned, bool kMag, int FH, int FW>
DLG_TARGET_AVX2 void PairPixels2Stride2(const PairBlock& b, int32_t begin, int32_t end) {
  static_assert(FW % 2 == 1 && FW >= 3, "odd filter widths");
  constexpr int kRowPairs = FH / 2, kLastPairs = FW / 2 + 1, kP = kRowPairs > 0 ? kRowPairs : 1;
  const int32_t* wa = b.w + kRowPairs * FW * 8;  // odd last row
  const size_t pixel = b.pixel;
  __m256i cols[FW + 2][kP];
  const uint8_t* rows[FH];
  for (int r = 0; r < FH; ++r)
    rows[r] = b.rows[r] + static_cast<size_t>(2 * begin - b.pad_w) * pixel;
#pragma GCC unroll 5
  for (int j = 0; j < FW - 2; ++j)
#pragma GCC unroll 5
    for (int rp = 0; rp < kRowPairs; ++rp)
      cols[j][rp] = Pair8<kSigned>(rows[2 * rp] + j * pixel, rows[2 * rp + 1] + j * pixel);
  for (int32_t ox = begin; ox + 2 <= end; ox += 2) {
#pragma GCC unroll 5
    for (int j = FW - 2; j < FW + 2; ++j)
#pragma GCC unroll 5
      for (int rp = 0; rp < kRowPairs; ++rp)
        cols[j][rp] = Pair8<kSigned>(rows[2 * rp] + j * pixel, rows[2 * rp + 1] + j * pixel);
    __m256i a = b.bias, c = b.bias;
#pragma GCC unroll 5
    for (int rp = 0; rp < kRowPairs; ++rp) {
#pragma GCC unroll 5
      for (int fx = 0; fx < FW; ++fx) {
        const int32_t* w = b.w + (rp * FW + fx) * 8;
        a = PairMadd(a, cols[fx][rp], w);
        c = PairMadd(c, cols[fx + 2][rp], w);
      }
    }
    if constexpr (FH % 2 == 1) {
      const uint8_t* last = rows[FH - 1];
      __m256i q = Pair8<kSigned>(last, last + pixel);
#pragma GCC unroll 5
      for (int k = 0; k < kLastPairs; ++k) {
        a = PairMadd(a, q, wa + k * 8);
        q = k + 1 < kLastPairs
                ? Pair8<kSigned>(last + (2 * k + 2) * pixel, last + (2 * k + 3) * pixel)
                : Lone8<kSigned>(last + (FW + 1) * pixel);
        c = PairMadd(c, q, wa + k * 8);
      }
    }
    const __m128i bytes = PairBytes<kSigned, kMag>(b, a, c);
    uint8_t* out = b.out + static_cast<size_t>(ox) * pixel;
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), bytes);
    _mm_storeh_pi(reinterpret_cast<__m64*>(out + pixel), _mm_castsi128_ps(bytes));
#pragma GCC unroll 5
    for (int j = 0; j < FW - 2; ++j)
#pragma GCC unroll 5
      for (int rp = 0; rp < kP; ++rp) cols[j][rp] = cols[j + 4][rp];
#pragma GCC unroll 5
    for (int r = 0; r < FH; ++r) rows[r] += 4 * pixel;
  }
}

// Blocks of 8 channels from c_begin up to d.pair_channels(); the rest go
// through ScalarRows.
template <bool kSigned, bool kMag, int FH, int FW>
DLG_TARGET_AVX2 void Avx2PairRows(const QuantDepthwise& d, int64_t begin, int64_t end,
                                  const uint8_t* input, uint8_t* output, int32_t c_begin = 0) {
  const reference::DepthwiseGeometry g = d.geometry();
  const int32_t channels = g.output_depth;
  const size_t row_stride = static_cast<size_t>(g.input_width) * channels;
  const size_t batch_size = static_cast<size_t>(g.input_height) * row_stride;
  const RequantChannels& rq = d.requant();
  const int vectors = QuantDepthwise::PairVectors(FH, FW);
  PairBlock b;
  b.pixel = channels;
  b.stride_w = g.stride_width;
  b.pad_w = g.pad_width;
  b.dilation_w = g.dilation_width;
  b.width = g.input_width;
  b.offset = _mm256_set1_epi16(static_cast<int16_t>(rq.output_offset));
  b.act_min = _mm256_set1_epi8(static_cast<char>(rq.clamp_min + rq.output_offset));
  b.act_max = _mm256_set1_epi8(static_cast<char>(rq.clamp_max + rq.output_offset));
  b.gather = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const int shared = g.dilation_width == 1 && g.stride_width <= 2 ? g.stride_width : 0;
  const int32_t ib = d.interior_x_begin(), ie = d.interior_x_end();
  for (int64_t row = begin; row < end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t oy = static_cast<int32_t>(row % g.output_height);
    const int32_t iy0 = oy * g.stride_height - g.pad_height;
    const uint8_t* in_batch = input + batch * batch_size;
    for (int32_t cb = c_begin; cb < d.pair_channels(); cb += 8) {
      for (int r = 0; r < FH; ++r) {
        const int32_t iy = iy0 + r * g.dilation_height;
        b.rows[r] = static_cast<uint32_t>(iy) < static_cast<uint32_t>(g.input_height)
                        ? in_batch + static_cast<size_t>(iy) * row_stride + cb
                        : d.pair_zero_row() + cb;
      }
      b.zero = d.pair_zero_row() + cb;
      b.w = d.pair_weights() + static_cast<size_t>(cb) * vectors;
      b.bias = Load256(d.bias_interior() + cb);
      if constexpr (kMag)
        b.mq = LoadMagnitudeRequant256(d.magnitude(), cb);
      else
        b.rq = LoadPairRequant(rq, cb);
      b.out = output + static_cast<size_t>(row) * g.output_width * channels + cb;
      for (int32_t ox = 0; ox < ib; ++ox) PairPixel<kSigned, kMag, FH, FW, true>(b, ox);
      int32_t ox = ib;
      if (shared != 0 && ib < ie) {
        ox = ib + (ie - ib) / 2 * 2;
        if (shared == 1)
          PairPixels2<kSigned, kMag, FH, FW>(b, ib, ox);
        else
          PairPixels2Stride2<kSigned, kMag, FH, FW>(b, ib, ox);
      }
      for (; ox < ie; ++ox) PairPixel<kSigned, kMag, FH, FW, false>(b, ox);
      for (ox = std::max(ib, ie); ox < g.output_width; ++ox)
        PairPixel<kSigned, kMag, FH, FW, true>(b, ox);
    }
  }
  if (d.pair_channels() < channels)
    ScalarRows(d, begin, end, input, output, d.pair_channels(), channels);
}

template <bool kSigned, bool kMag>
void Avx2PairDispatch(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* in,
                      uint8_t* out) {
  if (d.geometry().filter_height == 3)
    Avx2PairRows<kSigned, kMag, 3, 3>(d, begin, end, in, out);
  else
    Avx2PairRows<kSigned, kMag, 5, 5>(d, begin, end, in, out);
}

template <bool kSigned>
void Avx2Dispatch(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* in,
                  uint8_t* out) {
  if (d.pair_channels() == 0)
    Avx2Rows<kSigned>(d, begin, end, in, out);
  else if (d.magnitude_requant())
    Avx2PairDispatch<kSigned, true>(d, begin, end, in, out);
  else
    Avx2PairDispatch<kSigned, false>(d, begin, end, in, out);
}

// ---- Tap pairs with 16 channels per 512-bit vector (AVX-512 VNNI): the
// AVX2 pair code above, widened.

// Lane j holds (a[j], b[j]) of channel j in its low and high int16: the 32
// bytes widen to words a 0-15, b 0-15, which `interleave` puts in order.
template <bool kSigned>
DLG_TARGET_AVX512 inline __m512i Pair16(const uint8_t* a, const uint8_t* b, __m512i interleave) {
  const __m256i bytes = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a))),
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)), 1);
  return _mm512_permutexvar_epi16(
      interleave, kSigned ? _mm512_cvtepi8_epi16(bytes) : _mm512_cvtepu8_epi16(bytes));
}

// A lone tap: its high int16 (0 or -1) meets a zero weight.
template <bool kSigned>
DLG_TARGET_AVX512 inline __m512i Lone16(const uint8_t* a) {
  return Widen512<kSigned>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)));
}

DLG_TARGET_AVX512 inline __m512i PairMadd16(__m512i acc, __m512i x, const int32_t* w) {
  return _mm512_dpwssd_epi32(acc, x, _mm512_loadu_si512(w));
}

struct PairRequant512 {
  __m512i multiplier, multiplier_odd, left_shift, right_shift, round;
};

DLG_TARGET_AVX512 inline PairRequant512 LoadPairRequant512(const RequantChannels& rq, int c) {
  PairRequant512 r;
  r.multiplier = _mm512_loadu_si512(rq.multiplier.data() + c);
  r.multiplier_odd = _mm512_srli_epi64(r.multiplier, 32);
  r.left_shift =
      _mm512_and_si512(_mm512_loadu_si512(rq.left_shift.data() + c), _mm512_set1_epi32(31));
  r.right_shift = _mm512_loadu_si512(rq.right_shift.data() + c);
  r.round = _mm512_sub_epi32(
      _mm512_loadu_si512(rq.threshold.data() + c),
      _mm512_movm_epi32(_mm512_cmpgt_epi32_mask(r.right_shift, _mm512_setzero_si512())));
  return r;
}

// As PairScale.
DLG_TARGET_AVX512 inline __attribute__((always_inline)) __m512i PairScale512(
    __m512i acc, const PairRequant512& p) {
  const __m512i x = _mm512_sllv_epi32(acc, p.left_shift);
  const __m512i nudge = _mm512_set1_epi64(int64_t{1} << 30);
  __m512i even = _mm512_add_epi64(_mm512_mul_epi32(x, p.multiplier), nudge);
  __m512i odd =
      _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), p.multiplier_odd), nudge);
  even = _mm512_srli_epi64(even, 31);
  odd = _mm512_slli_epi64(odd, 1);
  const __m512i high = _mm512_mask_blend_epi32(0xAAAA, even, odd);
  const __m512i magnitude =
      _mm512_srlv_epi32(_mm512_add_epi32(_mm512_abs_epi32(high), p.round), p.right_shift);
  const __m512i zero = _mm512_setzero_si512();
  return _mm512_mask_sub_epi32(magnitude, _mm512_cmplt_epi32_mask(high, zero), zero, magnitude);
}

// As PairBlock, 16 channels.
struct PairBlock512 {
  const uint8_t* rows[5];
  const uint8_t* zero;
  uint8_t* out;
  const int32_t* w;
  size_t pixel;
  int32_t stride_w, pad_w, dilation_w, width;
  __m512i bias;
  __m512i offset;            // output zero point, int16 lanes
  __m512i act_min, act_max;  // bytes
  __m512i gather;            // dwords 0, 4, 8, 12, 1, 5, 9, 13: each pixel's bytes together
  __m512i interleave;        // Pair16's word order
  __m512i spread;            // DotColumn's byte order
  PairRequant512 rq;
  MagnitudeRequant512 mq;
  Requant64Block r64;
};

// Output zero point plus or minus the packed magnitudes (saturated at 32767)
// of accumulators a and c, with their signs: int16 saturation keeps values
// outside the output range outside it, so the clamp gives the reference's
// bytes.
DLG_TARGET_AVX512 inline __attribute__((always_inline)) __m512i SignedWords512(
    const PairBlock512& b, __m512i magnitude, __m512i a, __m512i c) {
  const __mmask32 negative = _mm512_movepi16_mask(_mm512_packs_epi32(a, c));
  return _mm512_mask_subs_epi16(_mm512_adds_epi16(magnitude, b.offset), negative, b.offset,
                                magnitude);
}

// Requantized accumulators a and c as int16 with the output zero point
// added (lanes a 0-3, c 0-3, a 4-7, c 4-7, ...).
template <bool kSigned, bool kMag>
DLG_TARGET_AVX512 inline __attribute__((always_inline)) __m512i PairWords512(
    const PairBlock512& b, __m512i a, __m512i c) {
  if constexpr (kMag) {
    const __m512i magnitude = _mm512_packs_epi32(Magnitude512(a, b.mq), Magnitude512(c, b.mq));
    return SignedWords512(b, magnitude, a, c);
  } else {
    return _mm512_adds_epi16(_mm512_packs_epi32(PairScale512(a, b.rq), PairScale512(c, b.rq)),
                             b.offset);
  }
}

// Bytes of two word vectors (PairWords512), clamped: dwords 4l + k of the
// result hold channels 4l..4l+3 of accumulator k (a, c of w0, then of w1).
template <bool kSigned>
DLG_TARGET_AVX512 inline __attribute__((always_inline)) __m512i ClampedBytes512(
    const PairBlock512& b, __m512i w0, __m512i w1) {
  if constexpr (kSigned)
    return _mm512_min_epi8(_mm512_max_epi8(_mm512_packs_epi16(w0, w1), b.act_min), b.act_max);
  else
    return _mm512_min_epu8(_mm512_max_epu8(_mm512_packus_epi16(w0, w1), b.act_min), b.act_max);
}

// Output bytes of accumulators a and c: a in the low 16 bytes, c in the next
// 16 (see PairBytes).
template <bool kSigned, bool kMag>
DLG_TARGET_AVX512 inline __attribute__((always_inline)) __m256i PairBytes512(
    const PairBlock512& b, __m512i a, __m512i c) {
  const __m512i words = PairWords512<kSigned, kMag>(b, a, c);
  return _mm512_castsi512_si256(
      _mm512_permutexvar_epi32(b.gather, ClampedBytes512<kSigned>(b, words, words)));
}

DLG_TARGET_AVX512 inline void StorePair512(uint8_t* out, size_t pixel, __m256i bytes) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(bytes));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + pixel), _mm256_extracti128_si256(bytes, 1));
}

// As PairPixel.
template <bool kSigned, bool kMag, int FH, int FW, bool kCheck>
DLG_TARGET_AVX512 inline __attribute__((always_inline)) void PairPixel512(const PairBlock512& b,
                                                                          int32_t ox) {
  constexpr int kRowPairs = FH / 2;
  const int32_t ix0 = ox * b.stride_w - b.pad_w;
  const uint8_t* px[FH][FW];
#pragma GCC unroll 5
  for (int fx = 0; fx < FW; ++fx) {
    const int32_t ix = ix0 + fx * b.dilation_w;
    const bool inside = !kCheck || static_cast<uint32_t>(ix) < static_cast<uint32_t>(b.width);
#pragma GCC unroll 5
    for (int r = 0; r < FH; ++r)
      px[r][fx] = inside ? b.rows[r] + static_cast<size_t>(ix) * b.pixel : b.zero;
  }
  __m512i acc = b.bias;
#pragma GCC unroll 5
  for (int rp = 0; rp < kRowPairs; ++rp)
#pragma GCC unroll 5
    for (int fx = 0; fx < FW; ++fx)
      acc = PairMadd16(acc, Pair16<kSigned>(px[2 * rp][fx], px[2 * rp + 1][fx], b.interleave),
                       b.w + (rp * FW + fx) * 16);
  if constexpr (FH % 2 == 1) {
#pragma GCC unroll 5
    for (int q = 0; q <= FW / 2; ++q) {
      const int32_t* w = b.w + (kRowPairs * FW + q) * 16;
      if (2 * q + 1 < FW)
        acc = PairMadd16(
            acc, Pair16<kSigned>(px[FH - 1][2 * q], px[FH - 1][2 * q + 1], b.interleave), w);
      else
        acc = PairMadd16(acc, Lone16<kSigned>(px[FH - 1][2 * q]), w);
    }
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b.out + static_cast<size_t>(ox) * b.pixel),
                   _mm256_castsi256_si128(PairBytes512<kSigned, kMag>(b, acc, acc)));
}

// As PairPixels2.
template <bool kSigned, bool kMag, int FH, int FW>
DLG_TARGET_AVX512 void PairPixels2_512(const PairBlock512& b, int32_t begin, int32_t end) {
  static_assert(FW % 2 == 1, "odd filter widths");
  constexpr int kRowPairs = FH / 2, kLastPairs = FW / 2 + 1, kP = kRowPairs > 0 ? kRowPairs : 1;
  const int32_t* wa = b.w + kRowPairs * FW * 16;  // odd last row, pixel x
  const int32_t* wc = wa + kLastPairs * 16;       // odd last row, pixel x + 1
  const size_t pixel = b.pixel;
  const __m512i il = b.interleave;
  __m512i cols[FW + 1][kP];
  __m512i q[kLastPairs];
  const uint8_t* rows[FH];
  for (int r = 0; r < FH; ++r) rows[r] = b.rows[r] + static_cast<size_t>(begin - b.pad_w) * pixel;
#pragma GCC unroll 5
  for (int j = 0; j < FW - 1; ++j)
#pragma GCC unroll 5
    for (int rp = 0; rp < kRowPairs; ++rp)
      cols[j][rp] = Pair16<kSigned>(rows[2 * rp] + j * pixel, rows[2 * rp + 1] + j * pixel, il);
  if constexpr (FH % 2 == 1) {
#pragma GCC unroll 5
    for (int k = 0; k < kLastPairs - 1; ++k)
      q[k] = Pair16<kSigned>(rows[FH - 1] + 2 * k * pixel, rows[FH - 1] + (2 * k + 1) * pixel,
                             il);
  }
  for (int32_t ox = begin; ox + 2 <= end; ox += 2) {
#pragma GCC unroll 5
    for (int rp = 0; rp < kRowPairs; ++rp) {
      cols[FW - 1][rp] = Pair16<kSigned>(rows[2 * rp] + (FW - 1) * pixel,
                                         rows[2 * rp + 1] + (FW - 1) * pixel, il);
      cols[FW][rp] =
          Pair16<kSigned>(rows[2 * rp] + FW * pixel, rows[2 * rp + 1] + FW * pixel, il);
    }
    __m512i a = b.bias, c = b.bias;
#pragma GCC unroll 5
    for (int rp = 0; rp < kRowPairs; ++rp) {
#pragma GCC unroll 5
      for (int fx = 0; fx < FW; ++fx) {
        const int32_t* w = b.w + (rp * FW + fx) * 16;
        a = PairMadd16(a, cols[fx][rp], w);
        c = PairMadd16(c, cols[fx + 1][rp], w);
      }
    }
    if constexpr (FH % 2 == 1) {
      q[kLastPairs - 1] =
          Pair16<kSigned>(rows[FH - 1] + (FW - 1) * pixel, rows[FH - 1] + FW * pixel, il);
#pragma GCC unroll 5
      for (int k = 0; k < kLastPairs; ++k) {
        a = PairMadd16(a, q[k], wa + k * 16);
        c = PairMadd16(c, q[k], wc + k * 16);
      }
    }
    StorePair512(b.out + static_cast<size_t>(ox) * pixel, pixel,
                 PairBytes512<kSigned, kMag>(b, a, c));
#pragma GCC unroll 5
    for (int j = 0; j < FW - 1; ++j)
#pragma GCC unroll 5
      for (int rp = 0; rp < kP; ++rp) cols[j][rp] = cols[j + 2][rp];
#pragma GCC unroll 5
    for (int k = 0; k < kLastPairs - 1; ++k) q[k] = q[k + 1];
#pragma GCC unroll 5
    for (int r = 0; r < FH; ++r) rows[r] += 2 * pixel;
  }
}

// As PairPixels2Stride2.
template <bool kSigned, bool kMag, int FH, int FW>
DLG_TARGET_AVX512 void PairPixels2Stride2_512(const PairBlock512& b, int32_t begin, int32_t end) {
  static_assert(FW % 2 == 1 && FW >= 3, "odd filter widths");
  constexpr int kRowPairs = FH / 2, kLastPairs = FW / 2 + 1, kP = kRowPairs > 0 ? kRowPairs : 1;
  const int32_t* wa = b.w + kRowPairs * FW * 16;  // odd last row
  const size_t pixel = b.pixel;
  const __m512i il = b.interleave;
  __m512i cols[FW + 2][kP];
  const uint8_t* rows[FH];
  for (int r = 0; r < FH; ++r)
    rows[r] = b.rows[r] + static_cast<size_t>(2 * begin - b.pad_w) * pixel;
#pragma GCC unroll 5
  for (int j = 0; j < FW - 2; ++j)
#pragma GCC unroll 5
    for (int rp = 0; rp < kRowPairs; ++rp)
      cols[j][rp] = Pair16<kSigned>(rows[2 * rp] + j * pixel, rows[2 * rp + 1] + j * pixel, il);
  for (int32_t ox = begin; ox + 2 <= end; ox += 2) {
#pragma GCC unroll 5
    for (int j = FW - 2; j < FW + 2; ++j)
#pragma GCC unroll 5
      for (int rp = 0; rp < kRowPairs; ++rp)
        cols[j][rp] =
            Pair16<kSigned>(rows[2 * rp] + j * pixel, rows[2 * rp + 1] + j * pixel, il);
    __m512i a = b.bias, c = b.bias;
#pragma GCC unroll 5
    for (int rp = 0; rp < kRowPairs; ++rp) {
#pragma GCC unroll 5
      for (int fx = 0; fx < FW; ++fx) {
        const int32_t* w = b.w + (rp * FW + fx) * 16;
        a = PairMadd16(a, cols[fx][rp], w);
        c = PairMadd16(c, cols[fx + 2][rp], w);
      }
    }
    if constexpr (FH % 2 == 1) {
      const uint8_t* last = rows[FH - 1];
      __m512i q = Pair16<kSigned>(last, last + pixel, il);
#pragma GCC unroll 5
      for (int k = 0; k < kLastPairs; ++k) {
        a = PairMadd16(a, q, wa + k * 16);
        q = k + 1 < kLastPairs
                ? Pair16<kSigned>(last + (2 * k + 2) * pixel, last + (2 * k + 3) * pixel, il)
                : Lone16<kSigned>(last + (FW + 1) * pixel);
        c = PairMadd16(c, q, wa + k * 16);
      }
    }
    StorePair512(b.out + static_cast<size_t>(ox) * pixel, pixel,
                 PairBytes512<kSigned, kMag>(b, a, c));
#pragma GCC unroll 5
    for (int j = 0; j < FW - 2; ++j)
#pragma GCC unroll 5
      for (int rp = 0; rp < kP; ++rp) cols[j][rp] = cols[j + 4][rp];
#pragma GCC unroll 5
    for (int r = 0; r < FH; ++r) rows[r] += 4 * pixel;
  }
}

// Blocks of 16 channels; a last block of 8 goes through the AVX2 pair code
// and the rest through ScalarRows.
template <bool kSigned, bool kMag, int FH, int FW>
DLG_TARGET_AVX512 void Avx512PairRows(const QuantDepthwise& d, int64_t begin, int64_t end,
                                      const uint8_t* input, uint8_t* output) {
  const reference::DepthwiseGeometry g = d.geometry();
  const int32_t channels = g.output_depth;
  const int32_t full = channels / 16 * 16;
  const size_t row_stride = static_cast<size_t>(g.input_width) * channels;
  const size_t batch_size = static_cast<size_t>(g.input_height) * row_stride;
  const RequantChannels& rq = d.requant();
  const int vectors = QuantDepthwise::PairVectors(FH, FW);
  PairBlock512 b;
  b.pixel = channels;
  b.stride_w = g.stride_width;
  b.pad_w = g.pad_width;
  b.dilation_w = g.dilation_width;
  b.width = g.input_width;
  b.offset = _mm512_set1_epi16(static_cast<int16_t>(rq.output_offset));
  b.act_min = _mm512_set1_epi8(static_cast<char>(rq.clamp_min + rq.output_offset));
  b.act_max = _mm512_set1_epi8(static_cast<char>(rq.clamp_max + rq.output_offset));
  b.gather = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  alignas(64) int16_t order[32];
  for (int j = 0; j < 16; ++j) {
    order[2 * j] = static_cast<int16_t>(j);
    order[2 * j + 1] = static_cast<int16_t>(16 + j);
  }
  b.interleave = _mm512_load_si512(order);
  const int shared = g.dilation_width == 1 && g.stride_width <= 2 ? g.stride_width : 0;
  const int32_t ib = d.interior_x_begin(), ie = d.interior_x_end();
  for (int64_t row = begin; row < end && full > 0; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t oy = static_cast<int32_t>(row % g.output_height);
    const int32_t iy0 = oy * g.stride_height - g.pad_height;
    const uint8_t* in_batch = input + batch * batch_size;
    for (int32_t cb = 0; cb < full; cb += 16) {
      for (int r = 0; r < FH; ++r) {
        const int32_t iy = iy0 + r * g.dilation_height;
        b.rows[r] = static_cast<uint32_t>(iy) < static_cast<uint32_t>(g.input_height)
                        ? in_batch + static_cast<size_t>(iy) * row_stride + cb
                        : d.pair_zero_row() + cb;
      }
      b.zero = d.pair_zero_row() + cb;
      b.w = d.pair_weights() + static_cast<size_t>(cb) * vectors;
      b.bias = _mm512_loadu_si512(d.bias_interior() + cb);
      if constexpr (kMag)
        b.mq = LoadMagnitudeRequant512(d.magnitude(), cb);
      else
        b.rq = LoadPairRequant512(rq, cb);
      b.out = output + static_cast<size_t>(row) * g.output_width * channels + cb;
      for (int32_t ox = 0; ox < ib; ++ox) PairPixel512<kSigned, kMag, FH, FW, true>(b, ox);
      int32_t ox = ib;
      if (shared != 0 && ib < ie) {
        ox = ib + (ie - ib) / 2 * 2;
        if (shared == 1)
          PairPixels2_512<kSigned, kMag, FH, FW>(b, ib, ox);
        else
          PairPixels2Stride2_512<kSigned, kMag, FH, FW>(b, ib, ox);
      }
      for (; ox < ie; ++ox) PairPixel512<kSigned, kMag, FH, FW, false>(b, ox);
      for (ox = std::max(ib, ie); ox < g.output_width; ++ox)
        PairPixel512<kSigned, kMag, FH, FW, true>(b, ox);
    }
  }
  if (full < channels) Avx2PairRows<kSigned, kMag, FH, FW>(d, begin, end, input, output, full);
}

// ---- 3x3 filters as byte dot products (AVX-512 VNNI + VBMI, and IFMA for
// the magnitude requantization when |acc| < 2^20; see the header): one 4-byte lane per channel holds a filter column's three input
// bytes, vpdpbusd multiplies them by the column's three weights at once.

#define DLG_TARGET_AVX512_VBMI                                                                \
  __attribute__((target("avx2,fma,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni," \
                        "avx512vbmi,avx512ifma")))

// Lane j: bytes (r0[j], r1[j], r2[j], r0[j]) of one column, 16 channels; the
// fourth meets a zero weight. int8 inputs are offset by 128 to unsigned
// (the dot bias takes 128 * the weights' sum back).
template <bool kSigned>
DLG_TARGET_AVX512_VBMI inline __attribute__((always_inline)) __m512i DotColumn(
    const uint8_t* r0, const uint8_t* r1, const uint8_t* r2, __m512i spread) {
  __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r0)));
  v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1)), 1);
  v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(r2)), 2);
  v = _mm512_permutexvar_epi8(spread, v);
  if constexpr (kSigned) v = _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
  return v;
}

// Requantization modes of the dot path: the general one, the magnitude one
// (as the pair paths), the magnitude one with 52-bit multiply-adds, and
// requantize64.h's single 64-bit rounding shift (zero point included).
enum DotRequant { kDotGeneral = 0, kDotMagnitude = 1, kDotMagnitudeIfma = 2, kDotRequant64 = 3 };

template <bool kSigned, int kMode>
DLG_TARGET_AVX512_VBMI inline __attribute__((always_inline)) __m512i DotWords512(
    const PairBlock512& b, __m512i a, __m512i c) {
  if constexpr (kMode == kDotMagnitudeIfma) {
    return SignedWords512(
        b, _mm512_packs_epi32(MagnitudeIfma512(a, b.mq), MagnitudeIfma512(c, b.mq)), a, c);
  } else if constexpr (kMode == kDotRequant64) {
    const Requant64Bounds unused{};  // read only by the wide variant
    return _mm512_packs_epi32(Requant64<false>(a, b.r64, unused),
                              Requant64<false>(c, b.r64, unused));
  } else {
    return PairWords512<kSigned, kMode == kDotMagnitude>(b, a, c);
  }
}

// acc + the column times its weights (both halves when split: the block's
// second set of kVectors vectors holds the second).
template <bool kSplit, int kVectors = 3>
DLG_TARGET_AVX512_VBMI inline __attribute__((always_inline)) __m512i DotTap(
    __m512i acc, __m512i column, const int32_t* w) {
  acc = _mm512_dpbusd_epi32(acc, column, _mm512_load_si512(w));
  if constexpr (kSplit)
    acc = _mm512_dpbusd_epi32(acc, column, _mm512_load_si512(w + 16 * kVectors));
  return acc;
}

// One output pixel. kCheck: columns outside the image read the zero pixel.
template <bool kSigned, int kMode, bool kSplit, bool kCheck>
DLG_TARGET_AVX512_VBMI inline __attribute__((always_inline)) void DotPixel512(
    const PairBlock512& b, int32_t ox) {
  const int32_t ix0 = ox * b.stride_w - b.pad_w;
  __m512i acc = b.bias;
#pragma GCC unroll 3
  for (int fx = 0; fx < 3; ++fx) {
    const int32_t ix = ix0 + fx;
    const bool inside = !kCheck || static_cast<uint32_t>(ix) < static_cast<uint32_t>(b.width);
    const size_t at = static_cast<size_t>(ix) * b.pixel;
    const __m512i column = DotColumn<kSigned>(inside ? b.rows[0] + at : b.zero,
                                              inside ? b.rows[1] + at : b.zero,
                                              inside ? b.rows[2] + at : b.zero, b.spread);
    acc = DotTap<kSplit>(acc, column, b.w + fx * 16);
  }
  const __m512i words = DotWords512<kSigned, kMode>(b, acc, acc);
  const __m512i bytes = _mm512_permutexvar_epi32(b.gather, ClampedBytes512<kSigned>(b, words, words));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b.out + static_cast<size_t>(ox) * b.pixel),
                   _mm512_castsi512_si128(bytes));
}

// kPixels (2 or 4) adjacent output pixels' accumulators requantized, their
// words clamped, packed and reordered together, and stored.
template <bool kSigned, int kMode, int kPixels>
DLG_TARGET_AVX512_VBMI inline __attribute__((always_inline)) void StoreDotPixels512(
    const PairBlock512& b, const __m512i (&acc)[kPixels], uint8_t* out) {
  const size_t pixel = b.pixel;
  const __m512i w01 = DotWords512<kSigned, kMode>(b, acc[0], acc[1]);
  const __m512i w23 =
      kPixels == 4 ? DotWords512<kSigned, kMode>(b, acc[kPixels - 2], acc[kPixels - 1]) : w01;
  const __m512i bytes = _mm512_permutexvar_epi32(b.gather, ClampedBytes512<kSigned>(b, w01, w23));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_castsi512_si128(bytes));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + pixel), _mm512_extracti32x4_epi32(bytes, 1));
  if constexpr (kPixels == 4) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * pixel),
                     _mm512_extracti32x4_epi32(bytes, 2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 3 * pixel),
                     _mm512_extracti32x4_epi32(bytes, 3));
  }
}

// Row r's bytes at input column ix: in place, or (kCheck) the zero pixel
// outside the image.
template <bool kCheck>
DLG_TARGET_AVX512_VBMI inline __attribute__((always_inline)) const uint8_t* ColumnAt(
    const PairBlock512& b, int r, int32_t ix) {
  if constexpr (kCheck) {
    if (static_cast<uint32_t>(ix) >= static_cast<uint32_t>(b.width)) return b.zero;
  }
  return b.rows[r] + static_cast<ptrdiff_t>(ix) * static_cast<ptrdiff_t>(b.pixel);
}

// Output x in [begin, end) (a multiple of kPixels; kCheck: columns outside the image read
// the zero pixel, else every column is inside it), kPixels at a time: pixel i reads columns kStride * i + 0..2, so a
// step loads kStride * kPixels new columns and keeps the last 3 - kStride.
template <bool kSigned, int kMode, bool kSplit, int kStride, int kPixels, bool kCheck>
DLG_TARGET_AVX512_VBMI void DotPixels512(const PairBlock512& b, int32_t begin, int32_t end) {
  static_assert((kPixels == 2 || kPixels == 4) && (kStride == 1 || kStride == 2),
                "2 or 4 pixels, stride 1 or 2");
  constexpr int kColumns = kStride * (kPixels - 1) + 3, kCarry = 3 - kStride;
  const size_t pixel = b.pixel;
  int32_t ix = begin * kStride - b.pad_w;  // the step's first column
  const __m512i w0 = _mm512_load_si512(b.w), w1 = _mm512_load_si512(b.w + 16),
                w2 = _mm512_load_si512(b.w + 32);
  __m512i col[kColumns];
#pragma GCC unroll 2
  for (int k = 0; k < kCarry; ++k)
    col[k] = DotColumn<kSigned>(ColumnAt<kCheck>(b, 0, ix + k), ColumnAt<kCheck>(b, 1, ix + k),
                                ColumnAt<kCheck>(b, 2, ix + k), b.spread);
  uint8_t* out = b.out + static_cast<size_t>(begin) * pixel;
  for (int32_t ox = begin; ox + kPixels <= end; ox += kPixels) {
#pragma GCC unroll 16
    for (int k = kCarry; k < kColumns; ++k)
      col[k] = DotColumn<kSigned>(ColumnAt<kCheck>(b, 0, ix + k), ColumnAt<kCheck>(b, 1, ix + k),
                                  ColumnAt<kCheck>(b, 2, ix + k), b.spread);
    __m512i acc[kPixels];
#pragma GCC unroll 8
    for (int i = 0; i < kPixels; ++i) {
      acc[i] = _mm512_dpbusd_epi32(b.bias, col[kStride * i], w0);
      acc[i] = _mm512_dpbusd_epi32(acc[i], col[kStride * i + 1], w1);
      acc[i] = _mm512_dpbusd_epi32(acc[i], col[kStride * i + 2], w2);
      if constexpr (kSplit) {
        acc[i] = _mm512_dpbusd_epi32(acc[i], col[kStride * i], _mm512_load_si512(b.w + 48));
        acc[i] = _mm512_dpbusd_epi32(acc[i], col[kStride * i + 1], _mm512_load_si512(b.w + 64));
        acc[i] = _mm512_dpbusd_epi32(acc[i], col[kStride * i + 2], _mm512_load_si512(b.w + 80));
      }
    }
    StoreDotPixels512<kSigned, kMode, kPixels>(b, acc, out);
#pragma GCC unroll 2
    for (int k = 0; k < kCarry; ++k) col[k] = col[k + kStride * kPixels];
    ix += kStride * kPixels;
    out += kPixels * pixel;
  }
}

// ---- 5x5 as byte dot products: seven per output pixel. The filter's rows
// 0-3 go by columns, a lane holding one column's four bytes (DotQuad of the
// four rows); row 4 by a lane of its columns 0-3 (DotQuad of four pixels of
// that row) and one of column 4 alone against weights (w, 0, 0, 0)
// (DotSingle). Per 16 channels the weights are 7 vectors in that order
// (14 when split).
constexpr int kDot5Vectors = 7;

// Lane j: bytes (p0[j], p1[j], p2[j], p3[j]) (int8 offset to unsigned).
template <bool kSigned>
DLG_TARGET_AVX512_VBMI inline __attribute__((always_inline)) __m512i DotQuad(
    const uint8_t* p0, const uint8_t* p1, const uint8_t* p2, const uint8_t* p3, __m512i spread) {
  __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p0)));
  v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p1)), 1);
  v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p2)), 2);
  v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p3)), 3);
  v = _mm512_permutexvar_epi8(spread, v);
  if constexpr (kSigned) v = _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
  return v;
}

// Lane j: (p[j], 0, 0, 0) (int8 offset to unsigned).
template <bool kSigned>
DLG_TARGET_AVX512_VBMI inline __attribute__((always_inline)) __m512i DotSingle(const uint8_t* p) {
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (kSigned) v = _mm_xor_si128(v, _mm_set1_epi8(static_cast<char>(0x80)));
  return _mm512_cvtepu8_epi32(v);
}

// Row 4's two terms of the pixel whose window starts at column pointer c
// (column k at c[k]).
template <bool kSigned, bool kSplit>
DLG_TARGET_AVX512_VBMI inline __attribute__((always_inline)) __m512i DotLastRow5(
    __m512i acc, const uint8_t* const (&c)[5], const PairBlock512& b) {
  acc = DotTap<kSplit, kDot5Vectors>(acc, DotQuad<kSigned>(c[0], c[1], c[2], c[3], b.spread),
                                     b.w + 5 * 16);
  return DotTap<kSplit, kDot5Vectors>(acc, DotSingle<kSigned>(c[4]), b.w + 6 * 16);
}

// One output pixel. kCheck: columns outside the image read the zero pixel.
template <bool kSigned, int kMode, bool kSplit, bool kCheck>
DLG_TARGET_AVX512_VBMI inline __attribute__((always_inline)) void Dot5Pixel512(
    const PairBlock512& b, int32_t ox) {
  const int32_t ix0 = ox * b.stride_w - b.pad_w;
  __m512i acc = b.bias;
  const uint8_t* last[5];
#pragma GCC unroll 5
  for (int fx = 0; fx < 5; ++fx) {
    const int32_t ix = ix0 + fx;
    const bool inside = !kCheck || static_cast<uint32_t>(ix) < static_cast<uint32_t>(b.width);
    const size_t at = static_cast<size_t>(ix) * b.pixel;
    const __m512i column = DotQuad<kSigned>(
        inside ? b.rows[0] + at : b.zero, inside ? b.rows[1] + at : b.zero,
        inside ? b.rows[2] + at : b.zero, inside ? b.rows[3] + at : b.zero, b.spread);
    acc = DotTap<kSplit, kDot5Vectors>(acc, column, b.w + fx * 16);
    last[fx] = inside ? b.rows[4] + at : b.zero;
  }
  acc = DotLastRow5<kSigned, kSplit>(acc, last, b);
  const __m512i words = DotWords512<kSigned, kMode>(b, acc, acc);
  const __m512i bytes = _mm512_permutexvar_epi32(b.gather, ClampedBytes512<kSigned>(b, words, words));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b.out + static_cast<size_t>(ox) * b.pixel),
                   _mm512_castsi512_si128(bytes));
}

// Output x in [begin, end) (a multiple of kPixels, every column inside the
// image), kPixels at a time, sharing the rows-0-3 columns of their windows
// as DotPixels512 does.
template <bool kSigned, int kMode, bool kSplit, int kStride, int kPixels, bool kCheck>
DLG_TARGET_AVX512_VBMI void Dot5Pixels512(const PairBlock512& b, int32_t begin, int32_t end) {
  static_assert((kPixels == 2 || kPixels == 4) && (kStride == 1 || kStride == 2),
                "2 or 4 pixels, stride 1 or 2");
  constexpr int kColumns = kStride * (kPixels - 1) + 5, kCarry = 5 - kStride;
  const size_t pixel = b.pixel;
  int32_t ix = begin * kStride - b.pad_w;  // the step's first column
  __m512i col[kColumns];
#pragma GCC unroll 4
  for (int k = 0; k < kCarry; ++k)
    col[k] = DotQuad<kSigned>(ColumnAt<kCheck>(b, 0, ix + k), ColumnAt<kCheck>(b, 1, ix + k),
                              ColumnAt<kCheck>(b, 2, ix + k), ColumnAt<kCheck>(b, 3, ix + k),
                              b.spread);
  uint8_t* out = b.out + static_cast<size_t>(begin) * pixel;
  for (int32_t ox = begin; ox + kPixels <= end; ox += kPixels) {
#pragma GCC unroll 16
    for (int k = kCarry; k < kColumns; ++k)
      col[k] = DotQuad<kSigned>(ColumnAt<kCheck>(b, 0, ix + k), ColumnAt<kCheck>(b, 1, ix + k),
                                ColumnAt<kCheck>(b, 2, ix + k), ColumnAt<kCheck>(b, 3, ix + k),
                                b.spread);
    __m512i acc[kPixels];
#pragma GCC unroll 4
    for (int i = 0; i < kPixels; ++i) {
      acc[i] = b.bias;
#pragma GCC unroll 5
      for (int fx = 0; fx < 5; ++fx)
        acc[i] = DotTap<kSplit, kDot5Vectors>(acc[i], col[kStride * i + fx], b.w + fx * 16);
      const int32_t c0 = ix + kStride * i;
      const uint8_t* const columns[5] = {ColumnAt<kCheck>(b, 4, c0), ColumnAt<kCheck>(b, 4, c0 + 1),
                                         ColumnAt<kCheck>(b, 4, c0 + 2),
                                         ColumnAt<kCheck>(b, 4, c0 + 3),
                                         ColumnAt<kCheck>(b, 4, c0 + 4)};
      acc[i] = DotLastRow5<kSigned, kSplit>(acc[i], columns, b);
    }
    StoreDotPixels512<kSigned, kMode, kPixels>(b, acc, out);
#pragma GCC unroll 4
    for (int k = 0; k < kCarry; ++k) col[k] = col[k + kStride * kPixels];
    ix += kStride * kPixels;
    out += kPixels * pixel;
  }
}

// One output pixel of a kFilter x kFilter window (3 or 5).
template <bool kSigned, int kMode, bool kSplit, bool kCheck, int kFilter>
DLG_TARGET_AVX512_VBMI inline __attribute__((always_inline)) void DotAnyPixel512(
    const PairBlock512& b, int32_t ox) {
  if constexpr (kFilter == 3)
    DotPixel512<kSigned, kMode, kSplit, kCheck>(b, ox);
  else
    Dot5Pixel512<kSigned, kMode, kSplit, kCheck>(b, ox);
}

// Output x in [begin, end): four, then two, then one pixel at a time
// (kCheck: as DotPixels512).
template <bool kSigned, int kMode, bool kSplit, int kStride, int kFilter, bool kCheck>
DLG_TARGET_AVX512_VBMI void DotRun512(const PairBlock512& b, int32_t begin, int32_t end) {
  const int32_t quads = begin + (end - begin) / 4 * 4;
  int32_t ox = quads;
  if constexpr (kFilter == 3) {
    DotPixels512<kSigned, kMode, kSplit, kStride, 4, kCheck>(b, begin, quads);
    if (end - ox >= 2) {
      DotPixels512<kSigned, kMode, kSplit, kStride, 2, kCheck>(b, ox, ox + 2);
      ox += 2;
    }
  } else {
    Dot5Pixels512<kSigned, kMode, kSplit, kStride, 4, kCheck>(b, begin, quads);
    if (end - ox >= 2) {
      Dot5Pixels512<kSigned, kMode, kSplit, kStride, 2, kCheck>(b, ox, ox + 2);
      ox += 2;
    }
  }
  if (ox < end) DotAnyPixel512<kSigned, kMode, kSplit, kCheck, kFilter>(b, ox);
}

// 3x3, multiplier 1, stride 1 or 2, dilation 1 across: blocks of 16
// channels; a last block of 8 goes through the AVX2 pair code and the rest
// through ScalarRows.
template <bool kSigned, int kMode, bool kSplit, int kFilter>
DLG_TARGET_AVX512_VBMI void Avx512DotRows(const QuantDepthwise& d, int64_t begin, int64_t end,
                                          const uint8_t* input, uint8_t* output) {
  const reference::DepthwiseGeometry g = d.geometry();
  const int32_t channels = g.output_depth;
  const int32_t full = channels / 16 * 16;
  const size_t row_stride = static_cast<size_t>(g.input_width) * channels;
  const size_t batch_size = static_cast<size_t>(g.input_height) * row_stride;
  const RequantChannels& rq = d.requant();
  PairBlock512 b;
  b.pixel = channels;
  b.stride_w = g.stride_width;
  b.pad_w = g.pad_width;
  b.dilation_w = 1;
  b.width = g.input_width;
  b.offset = _mm512_set1_epi16(static_cast<int16_t>(rq.output_offset));
  b.act_min = _mm512_set1_epi8(static_cast<char>(rq.clamp_min + rq.output_offset));
  b.act_max = _mm512_set1_epi8(static_cast<char>(rq.clamp_max + rq.output_offset));
  b.gather = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  // Byte k of lane j: byte j of the k-th loaded 16 (3x3: the fourth repeats
  // the first, against a zero weight).
  alignas(64) uint8_t spread[64];
  for (int j = 0; j < 16; ++j)
    for (int k = 0; k < 4; ++k)
      spread[4 * j + k] = static_cast<uint8_t>(16 * (kFilter == 3 ? k % 3 : k) + j);
  b.spread = _mm512_load_si512(spread);
  constexpr int kVectors = kFilter == 3 ? 3 : kDot5Vectors;
  const int32_t ib = d.interior_x_begin(), ie = d.interior_x_end();
  // Small images, many border pixels (EfficientNet's 6x6 to 24x24 with 5x5
  // windows, 7x7 with 3x3): every pixel in groups, each column checked,
  // rather than the border pixels one at a time (kernels_bench: 6x6x672 5x5
  // 20.4 -> 11.4 us, 12x12x240 18.1 -> 12.8, 7x7x960 3x3 13.9 -> 13.1; at
  // 112x112 3x3 the checks cost 7%).
  const bool checked_rows =
      (kFilter == 5 && g.output_width <= 32) || 4 * (ie - ib) < 3 * g.output_width;
  for (int64_t row = begin; row < end && full > 0; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t oy = static_cast<int32_t>(row % g.output_height);
    const int32_t iy0 = oy * g.stride_height - g.pad_height;
    const uint8_t* in_batch = input + batch * batch_size;
    for (int32_t cb = 0; cb < full; cb += 16) {
      for (int r = 0; r < kFilter; ++r) {
        const int32_t iy = iy0 + r * g.dilation_height;
        b.rows[r] = static_cast<uint32_t>(iy) < static_cast<uint32_t>(g.input_height)
                        ? in_batch + static_cast<size_t>(iy) * row_stride + cb
                        : d.pair_zero_row() + cb;
      }
      b.zero = d.pair_zero_row() + cb;
      b.w = d.dot_weights() + static_cast<size_t>(cb) * (kSplit ? 2 : 1) * kVectors;
      b.bias = _mm512_load_si512(d.dot_bias() + cb);
      if constexpr (kMode == kDotGeneral) {
        b.rq = LoadPairRequant512(rq, cb);
      } else if constexpr (kMode == kDotRequant64) {
        b.r64 = LoadRequant64Block(d.requant64(), cb);
      } else {
        b.mq = LoadMagnitudeRequant512(d.magnitude(), cb, kMode == kDotMagnitudeIfma);
      }
      b.out = output + static_cast<size_t>(row) * g.output_width * channels + cb;
      if (checked_rows) {
        if (g.stride_width == 1)
          DotRun512<kSigned, kMode, kSplit, 1, kFilter, true>(b, 0, g.output_width);
        else
          DotRun512<kSigned, kMode, kSplit, 2, kFilter, true>(b, 0, g.output_width);
        continue;
      }
      for (int32_t ox = 0; ox < ib; ++ox)
        DotAnyPixel512<kSigned, kMode, kSplit, true, kFilter>(b, ox);
      if (ib < ie) {
        if (g.stride_width == 1)
          DotRun512<kSigned, kMode, kSplit, 1, kFilter, false>(b, ib, ie);
        else
          DotRun512<kSigned, kMode, kSplit, 2, kFilter, false>(b, ib, ie);
      }
      for (int32_t ox = std::max(ib, ie); ox < g.output_width; ++ox)
        DotAnyPixel512<kSigned, kMode, kSplit, true, kFilter>(b, ox);
    }
  }
  if (full < channels) {
    if (d.magnitude_requant())
      Avx2PairRows<kSigned, true, kFilter, kFilter>(d, begin, end, input, output, full);
    else
      Avx2PairRows<kSigned, false, kFilter, kFilter>(d, begin, end, input, output, full);
  }
}

template <bool kSigned, bool kSplit, int kFilter>
void Avx512DotDispatch(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* in,
                       uint8_t* out) {
  if (d.dot_ifma())
    Avx512DotRows<kSigned, kDotMagnitudeIfma, kSplit, kFilter>(d, begin, end, in, out);
  else if (d.magnitude_requant())
    Avx512DotRows<kSigned, kDotMagnitude, kSplit, kFilter>(d, begin, end, in, out);
  else if (d.dot_requant64())
    Avx512DotRows<kSigned, kDotRequant64, kSplit, kFilter>(d, begin, end, in, out);
  else
    Avx512DotRows<kSigned, kDotGeneral, kSplit, kFilter>(d, begin, end, in, out);
}

template <int kFilter>
void Avx512DotFilter(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* in,
                     uint8_t* out) {
  if (!d.is_uint8() && !d.dot_split())
    Avx512DotDispatch<true, false, kFilter>(d, begin, end, in, out);
  else if (d.is_uint8() && d.dot_split())
    Avx512DotDispatch<false, true, kFilter>(d, begin, end, in, out);
  else if (d.is_uint8())
    Avx512DotDispatch<false, false, kFilter>(d, begin, end, in, out);
  else  // int8 weights with a zero point (not from TFLite converters)
    Avx512DotDispatch<true, true, kFilter>(d, begin, end, in, out);
}

// Depth multiplier > 1: output channel cb + j of an 8-channel block reads
// input channel (cb + j) / multiplier. Those input channels span at most 4
// bytes (multiplier >= 2), so one load of kWidth = min(4, input depth) bytes,
// placed inside the pixel so no read passes the end of the input, holds them
// all; a byte shuffle then sends each to its lane.
template <bool kSigned, int kWidth>
DLG_TARGET_AVX2 inline __m256i LoadExpand256(const uint8_t* p, __m128i expand) {
  if constexpr (kWidth == 1) {
    return _mm256_set1_epi32(kSigned ? int32_t{static_cast<int8_t>(*p)} : int32_t{*p});
  } else {
    uint32_t v = 0;
    if constexpr (kWidth == 3) {
      uint16_t low;
      std::memcpy(&low, p, 2);
      v = low | uint32_t{p[2]} << 16;
    } else {
      std::memcpy(&v, p, kWidth);
    }
    return Widen256<kSigned>(_mm_shuffle_epi8(_mm_cvtsi32_si128(static_cast<int>(v)), expand));
  }
}

// Everything one 8-channel block of one row needs (depth multiplier > 1).
struct Block256 {
  const uint8_t* in;  // input at (batch, row 0, column 0, first byte loaded)
  uint8_t* out;       // output at (batch, y, column 0, block's first channel)
  const int32_t* w;   // weights of the block's first channel, tap stride `padded`
  size_t padded, pixel_stride, row_stride, dilated_x, dilated_y;
  int32_t iy0, fy_lo, fy_hi, fw, stride_w, pad_w, dilation_w, dilation_h, channels;
  __m128i expand;  // loaded bytes -> lanes
  __m256i x_off, lo, hi, offset;
  Requant256 requant;
};

DLG_TARGET_AVX2 inline void StorePixel256(const Block256& b, int32_t ox, __m256i acc) {
  const __m256i v = Requantize256(acc, b.requant, b.lo, b.hi, b.offset);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(b.out + static_cast<size_t>(ox) * b.channels),
                   NarrowToBytes256(v, v));
}

// One pixel, taps [fy_lo, fy_hi) x [fx_lo, fx_hi). kInterior: every tap
// inside the image and `acc` starts at the interior bias; otherwise the
// input offset is added per tap.
template <bool kSigned, int kWidth, bool kInterior>
DLG_TARGET_AVX2 void ExpandPixel256(const Block256& b, int32_t ox, int32_t fx_lo, int32_t fx_hi,
                                    __m256i acc) {
  const int32_t ix0 = ox * b.stride_w - b.pad_w;
  for (int32_t fy = b.fy_lo; fy < b.fy_hi; ++fy) {
    const uint8_t* in_row = b.in + static_cast<size_t>(b.iy0 + b.dilation_h * fy) * b.row_stride;
    for (int32_t fx = fx_lo; fx < fx_hi; ++fx) {
      const int32_t ix = ix0 + b.dilation_w * fx;
      __m256i x = LoadExpand256<kSigned, kWidth>(in_row + static_cast<size_t>(ix) * b.pixel_stride,
                                                 b.expand);
      if constexpr (!kInterior) x = _mm256_add_epi32(x, b.x_off);
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, Load256(b.w + (fy * b.fw + fx) * b.padded)));
    }
  }
  StorePixel256(b, ox, acc);
}

// Output x in [begin, end), every tap inside the image, two pixels at a
// time, weights in registers.
template <bool kSigned, int kWidth, int FH, int FW>
DLG_TARGET_AVX2 void ExpandInterior256(const Block256& b, int32_t begin, int32_t end,
                                       __m256i bias_interior) {
  __m256i wv[FH * FW];
#pragma GCC unroll 25
  for (int t = 0; t < FH * FW; ++t) wv[t] = Load256(b.w + t * b.padded);
  const size_t step = static_cast<size_t>(b.stride_w) * b.pixel_stride;
  const uint8_t* origin = b.in + static_cast<size_t>(b.iy0) * b.row_stride +
                          static_cast<size_t>(begin * b.stride_w - b.pad_w) * b.pixel_stride;
  int32_t ox = begin;
  for (; ox + 2 <= end; ox += 2, origin += 2 * step) {
    __m256i acc0 = bias_interior, acc1 = bias_interior;
#pragma GCC unroll 5
    for (int fy = 0; fy < FH; ++fy) {
#pragma GCC unroll 5
      for (int fx = 0; fx < FW; ++fx) {
        const uint8_t* p = origin + fy * b.dilated_y + fx * b.dilated_x;
        const __m256i w = wv[fy * FW + fx];
        acc0 = _mm256_add_epi32(
            acc0, _mm256_madd_epi16(LoadExpand256<kSigned, kWidth>(p, b.expand), w));
        acc1 = _mm256_add_epi32(
            acc1, _mm256_madd_epi16(LoadExpand256<kSigned, kWidth>(p + step, b.expand), w));
      }
    }
    StorePixel256(b, ox, acc0);
    StorePixel256(b, ox + 1, acc1);
  }
  if (ox < end) {
    __m256i acc = bias_interior;
#pragma GCC unroll 5
    for (int fy = 0; fy < FH; ++fy)
#pragma GCC unroll 5
      for (int fx = 0; fx < FW; ++fx)
        acc = _mm256_add_epi32(
            acc, _mm256_madd_epi16(LoadExpand256<kSigned, kWidth>(
                                       origin + fy * b.dilated_y + fx * b.dilated_x, b.expand),
                                   wv[fy * FW + fx]));
    StorePixel256(b, ox, acc);
  }
}

// Full blocks of 8 channels with depth multiplier > 1; the remaining channels
// go through ScalarRows. FH/FW: the filter size when known at compile time
// (0: any size).
template <bool kSigned, int kWidth, int FH, int FW>
DLG_TARGET_AVX2 void Avx2ExpandRows(const QuantDepthwise& d, int64_t begin, int64_t end,
                                    const uint8_t* input, uint8_t* output) {
  const reference::DepthwiseGeometry g = d.geometry();
  const int32_t channels = g.output_depth;
  const int32_t full = channels / 8 * 8;
  const int32_t in_channels = g.input_depth;
  const int32_t multiplier = g.depth_multiplier;
  const size_t row_stride = static_cast<size_t>(g.input_width) * in_channels;
  const size_t batch_size = static_cast<size_t>(g.input_height) * row_stride;
  const QuantDepthwise::TapRange* x_taps = d.x_taps();
  const RequantChannels& rq = d.requant();
  Block256 b;
  b.padded = d.padded_channels();
  b.pixel_stride = in_channels;
  b.row_stride = row_stride;
  b.dilated_x = static_cast<size_t>(g.dilation_width) * in_channels;
  b.dilated_y = static_cast<size_t>(g.dilation_height) * row_stride;
  b.fw = g.filter_width;
  b.stride_w = g.stride_width;
  b.pad_w = g.pad_width;
  b.dilation_w = g.dilation_width;
  b.dilation_h = g.dilation_height;
  b.channels = channels;
  b.x_off = _mm256_set1_epi32(d.input_offset());
  b.lo = _mm256_set1_epi32(rq.clamp_min);
  b.hi = _mm256_set1_epi32(rq.clamp_max);
  b.offset = _mm256_set1_epi32(rq.output_offset);
  const int32_t interior_begin = d.interior_x_begin(), interior_end = d.interior_x_end();
  for (int64_t row = begin; row < end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t oy = static_cast<int32_t>(row % g.output_height);
    b.iy0 = oy * g.stride_height - g.pad_height;
    b.fy_lo = d.y_taps()[oy].lo;
    b.fy_hi = d.y_taps()[oy].hi;
    const bool rows_full = b.fy_lo == 0 && b.fy_hi == g.filter_height;
    for (int32_t cb = 0; cb < full; cb += 8) {
      // First byte loaded: the block's first input channel, moved back when
      // the load would pass the end of the pixel.
      const int32_t first = std::min(cb / multiplier, in_channels - kWidth);
      alignas(16) uint8_t pattern[16];
      for (int j = 0; j < 16; ++j)
        pattern[j] = j < 8 ? static_cast<uint8_t>((cb + j) / multiplier - first) : 0x80;
      b.expand = _mm_load_si128(reinterpret_cast<const __m128i*>(pattern));
      b.requant = LoadRequant256(rq, cb);
      const __m256i bias_border = Load256(d.bias_border() + cb);
      b.w = d.weights() + cb;
      b.in = input + batch * batch_size + first;
      b.out = output + static_cast<size_t>(row) * g.output_width * channels + cb;
      int32_t ib = 0, ie = 0;  // interior columns of this row
      if (rows_full) {
        ib = interior_begin;
        ie = interior_end;
      }
      for (int32_t ox = 0; ox < ib; ++ox)
        ExpandPixel256<kSigned, kWidth, false>(b, ox, x_taps[ox].lo, x_taps[ox].hi, bias_border);
      if (ib < ie) {
        const __m256i bias_interior = Load256(d.bias_interior() + cb);
        if constexpr (FH > 0) {
          ExpandInterior256<kSigned, kWidth, FH, FW>(b, ib, ie, bias_interior);
        } else {
          for (int32_t ox = ib; ox < ie; ++ox)
            ExpandPixel256<kSigned, kWidth, true>(b, ox, 0, g.filter_width, bias_interior);
        }
      }
      for (int32_t ox = std::max(ie, ib); ox < g.output_width; ++ox)
        ExpandPixel256<kSigned, kWidth, false>(b, ox, x_taps[ox].lo, x_taps[ox].hi, bias_border);
    }
  }
  if (full < channels) ScalarRows(d, begin, end, input, output, full, channels);
}

template <bool kSigned, int kWidth>
void Avx2ExpandFilter(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* in,
                      uint8_t* out) {
  const reference::DepthwiseGeometry& g = d.geometry();
  if (g.filter_height == 3 && g.filter_width == 3)
    Avx2ExpandRows<kSigned, kWidth, 3, 3>(d, begin, end, in, out);
  else if (g.filter_height == 5 && g.filter_width == 5)
    Avx2ExpandRows<kSigned, kWidth, 5, 5>(d, begin, end, in, out);
  else
    Avx2ExpandRows<kSigned, kWidth, 0, 0>(d, begin, end, in, out);
}

template <bool kSigned>
void Avx2ExpandDispatch(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* in,
                        uint8_t* out) {
  switch (std::min(d.geometry().input_depth, 4)) {
    case 1: Avx2ExpandFilter<kSigned, 1>(d, begin, end, in, out); return;
    case 2: Avx2ExpandFilter<kSigned, 2>(d, begin, end, in, out); return;
    case 3: Avx2ExpandFilter<kSigned, 3>(d, begin, end, in, out); return;
    default: Avx2ExpandFilter<kSigned, 4>(d, begin, end, in, out); return;
  }
}

template <bool kSigned, bool kExpand>
void Avx512Dispatch(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* in,
                    uint8_t* out) {
  const reference::DepthwiseGeometry& g = d.geometry();
  if (g.filter_height == 3 && g.filter_width == 3)
    Avx512Rows<kSigned, 3, 3, kExpand>(d, begin, end, in, out);
  else if (g.filter_height == 5 && g.filter_width == 5)
    Avx512Rows<kSigned, 5, 5, kExpand>(d, begin, end, in, out);
  else
    Avx512Rows<kSigned, 0, 0, kExpand>(d, begin, end, in, out);
}

template <bool kSigned, bool kMag>
void Avx512PairFilter(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* in,
                      uint8_t* out) {
  if (d.geometry().filter_height == 3)
    Avx512PairRows<kSigned, kMag, 3, 3>(d, begin, end, in, out);
  else
    Avx512PairRows<kSigned, kMag, 5, 5>(d, begin, end, in, out);
}

template <bool kSigned>
void Avx512PairDispatch(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* in,
                        uint8_t* out) {
  if (d.magnitude_requant())
    Avx512PairFilter<kSigned, true>(d, begin, end, in, out);
  else
    Avx512PairFilter<kSigned, false>(d, begin, end, in, out);
}

#endif  // DELEGATO_X86

#if DELEGATO_ARM

// Multiplier 1: blocks of 4 * NB channels (16, then one of 8); the remaining
// channels go through ScalarRows. Inputs widen to int16 (x, or x - x_zp at
// the border, both within [-255, 255]); the weights' low int16 halves come
// out of their int32 lanes with a de-interleaving load (vld2q_s16); each
// product is exact in int32 (smlal) and sums wrap modulo 2^32.
template <bool kSigned, int NB>
void NeonRowsBlock(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* input,
                   uint8_t* output, int32_t c_begin, int32_t c_end) {
  const reference::DepthwiseGeometry g = d.geometry();
  const int32_t channels = g.output_depth;
  const size_t padded = d.padded_channels();
  const size_t batch_size = static_cast<size_t>(g.input_height) * g.input_width * channels;
  const RequantChannels& rq = d.requant();
  const int32x4_t lo = vdupq_n_s32(rq.clamp_min);
  const int32x4_t hi = vdupq_n_s32(rq.clamp_max);
  const int32x4_t offset = vdupq_n_s32(rq.output_offset);
  const int16x8_t x_off = vdupq_n_s16(static_cast<int16_t>(d.input_offset()));
  for (int64_t row = begin; row < end; ++row) {
    const int32_t b = static_cast<int32_t>(row / g.output_height);
    const int32_t oy = static_cast<int32_t>(row % g.output_height);
    const int32_t iy0 = oy * g.stride_height - g.pad_height;
    const int32_t fy_lo = d.y_taps()[oy].lo, fy_hi = d.y_taps()[oy].hi;
    const bool rows_full = fy_lo == 0 && fy_hi == g.filter_height;
    const uint8_t* in_batch = input + b * batch_size;
    uint8_t* out_row = output + static_cast<size_t>(row) * g.output_width * channels;
    for (int32_t cb = c_begin; cb + 4 * NB <= c_end; cb += 4 * NB) {
      RequantNeon p[NB];
      int32x4_t bias_interior[NB], bias_border[NB];
      for (int j = 0; j < NB; ++j) {
        p[j] = LoadRequantNeon(rq, cb + 4 * j);
        bias_interior[j] = vld1q_s32(d.bias_interior() + cb + 4 * j);
        bias_border[j] = vld1q_s32(d.bias_border() + cb + 4 * j);
      }
      const int32_t* w = d.weights() + cb;
      for (int32_t ox = 0; ox < g.output_width; ++ox) {
        const int32_t ix0 = ox * g.stride_width - g.pad_width;
        const int32_t fx_lo = d.x_taps()[ox].lo, fx_hi = d.x_taps()[ox].hi;
        const bool interior = rows_full && fx_lo == 0 && fx_hi == g.filter_width;
        int32x4_t acc[NB];
        for (int j = 0; j < NB; ++j) acc[j] = interior ? bias_interior[j] : bias_border[j];
        for (int32_t fy = fy_lo; fy < fy_hi; ++fy) {
          const int32_t iy = iy0 + g.dilation_height * fy;
          const uint8_t* in_row = in_batch + static_cast<size_t>(iy) * g.input_width * channels + cb;
          for (int32_t fx = fx_lo; fx < fx_hi; ++fx) {
            const int32_t ix = ix0 + g.dilation_width * fx;
            const uint8_t* px = in_row + static_cast<size_t>(ix) * channels;
            const int16_t* wt =
                reinterpret_cast<const int16_t*>(w + (fy * g.filter_width + fx) * padded);
            int16x8_t x[NB / 2];
            if constexpr (NB == 4) {
              const uint8x16_t bytes = vld1q_u8(px);
              if constexpr (kSigned) {
                x[0] = vmovl_s8(vget_low_s8(vreinterpretq_s8_u8(bytes)));
                x[1] = vmovl_high_s8(vreinterpretq_s8_u8(bytes));
              } else {
                x[0] = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(bytes)));
                x[1] = vreinterpretq_s16_u16(vmovl_high_u8(bytes));
              }
            } else {
              const uint8x8_t bytes = vld1_u8(px);
              x[0] = kSigned ? vmovl_s8(vreinterpret_s8_u8(bytes))
                             : vreinterpretq_s16_u16(vmovl_u8(bytes));
            }
            for (int h = 0; h < NB / 2; ++h) {
              const int16x8_t xv = interior ? x[h] : vaddq_s16(x[h], x_off);
              const int16x8_t wv = vld2q_s16(wt + 16 * h).val[0];  // 8 channels' low halves
              acc[2 * h] = vmlal_s16(acc[2 * h], vget_low_s16(xv), vget_low_s16(wv));
              acc[2 * h + 1] = vmlal_high_s16(acc[2 * h + 1], xv, wv);
            }
          }
        }
        uint8_t* dst = out_row + static_cast<size_t>(ox) * channels + cb;
        int32x4_t v[4];
        for (int j = 0; j < NB; ++j) v[j] = RequantizeNeon(acc[j], p[j], lo, hi, offset);
        if constexpr (NB == 4) {
          vst1q_u8(dst, NarrowToBytesNeon(v[0], v[1], v[2], v[3]));
        } else {
          vst1_u8(dst, vget_low_u8(NarrowToBytesNeon(v[0], v[1], v[0], v[1])));
        }
      }
    }
  }
}

template <bool kSigned>
void NeonRows(const QuantDepthwise& d, int64_t begin, int64_t end, const uint8_t* input,
              uint8_t* output) {
  const int32_t channels = d.geometry().output_depth;
  const int32_t full16 = channels / 16 * 16;
  if (full16 > 0) NeonRowsBlock<kSigned, 4>(d, begin, end, input, output, 0, full16);
  int32_t done = full16;
  if (channels - full16 >= 8) {
    NeonRowsBlock<kSigned, 2>(d, begin, end, input, output, full16, full16 + 8);
    done = full16 + 8;
  }
  if (done < channels) ScalarRows(d, begin, end, input, output, done, channels);
}

#endif  // DELEGATO_ARM

}  // namespace

bool QuantDepthwise::Covers(const reference::DepthwiseGeometry& g) {
  // Empty tensors stay with the reference loop: Prepare sizes per-column
  // tables by the output width, which an empty tensor does not bound.
  if (g.batches <= 0 || g.output_height <= 0 || g.output_width <= 0 || g.input_height <= 0 ||
      g.input_width <= 0)
    return false;
  return g.depth_multiplier >= 1 && g.input_depth > 0 &&
         int64_t{g.input_depth} * g.depth_multiplier == g.output_depth &&
         g.filter_height > 0 && g.filter_width > 0 &&
         int64_t{g.filter_height} * g.filter_width <= 4096;
}

QuantDepthwise::QuantDepthwise(const QuantDepthwiseParams& p, Isa isa)
    : g_(p.geometry), isa_(isa), is_uint8_(p.is_uint8) {
  const int channels = g_.output_depth;
  const int taps = g_.filter_height * g_.filter_width;
  padded_channels_ = static_cast<int>(RoundUp(channels, 16));
  input_offset_ = -p.input_zero_point;
  weights_.Resize(static_cast<size_t>(taps) * padded_channels_);
  bias_interior_.Resize(padded_channels_);
  bias_border_.Resize(padded_channels_);
  const uint8_t* f_u8 = static_cast<const uint8_t*>(p.filter);
  const int8_t* f_s8 = static_cast<const int8_t*>(p.filter);
  for (int c = 0; c < channels; ++c) {
    uint32_t sum = 0;
    for (int t = 0; t < taps; ++t) {
      const size_t i = static_cast<size_t>(t) * channels + c;
      const int32_t w = (is_uint8_ ? int32_t{f_u8[i]} : int32_t{f_s8[i]}) + p.filter_offset;
      sum += static_cast<uint32_t>(w);
      weights_[static_cast<size_t>(t) * padded_channels_ + c] =
          static_cast<int32_t>(static_cast<uint16_t>(static_cast<int16_t>(w)));
    }
    const uint32_t bias = p.bias != nullptr ? static_cast<uint32_t>(p.bias[c]) : 0u;
    bias_border_[c] = static_cast<int32_t>(bias);
    bias_interior_[c] = static_cast<int32_t>(bias + static_cast<uint32_t>(input_offset_) * sum);
  }
  requant_.Init(p.multiplier, p.shift, channels, padded_channels_, p.output_zero_point,
                p.act_min, p.act_max);
  x_taps_.resize(g_.output_width);
  for (int32_t ox = 0; ox < g_.output_width; ++ox)
    ValidTaps(ox * g_.stride_width - g_.pad_width, g_.dilation_width, g_.filter_width,
              g_.input_width, &x_taps_[ox].lo, &x_taps_[ox].hi);
  interior_x_begin_ = interior_x_end_ = 0;
  for (int32_t ox = 0; ox < g_.output_width; ++ox) {
    if (x_taps_[ox].lo != 0 || x_taps_[ox].hi != g_.filter_width) continue;
    if (interior_x_end_ == 0) interior_x_begin_ = ox;
    interior_x_end_ = ox + 1;  // interior columns are contiguous
  }
  y_taps_.resize(g_.output_height);
  for (int32_t oy = 0; oy < g_.output_height; ++oy)
    ValidTaps(oy * g_.stride_height - g_.pad_height, g_.dilation_height, g_.filter_height,
              g_.input_height, &y_taps_[oy].lo, &y_taps_[oy].hi);
  const int fh = g_.filter_height, fw = g_.filter_width;
  if ((isa_ == Isa::kAvx2 || isa_ == Isa::kAvx512Vnni) && g_.depth_multiplier == 1 && channels >= 8 && fh == fw &&
      (fh == 3 || fh == 5)) {
    PreparePairs(p);
    PrepareMagnitudeRequant(p);
    PrepareDots(p);
  }
}

void QuantDepthwise::PrepareDots(const QuantDepthwiseParams& p) {
#if DELEGATO_X86
  const int channels = g_.output_depth;
  const int filter = g_.filter_height;
  if (isa_ != Isa::kAvx512Vnni || (filter != 3 && filter != 5) || g_.filter_width != filter ||
      g_.dilation_width != 1 || g_.stride_width > 2 || channels < 16)
    return;
  if (!CpuHasAvx512Vbmi() || !CpuHasAvx512Ifma()) return;
  // Weights (w + w_off) as signed bytes: always for int8, for uint8 when
  // every weight lies within 128 of the zero point. Otherwise (uint8 weights
  // in [-256, 254]) each splits into two signed bytes, ceil(w / 2) and
  // floor(w / 2), and every column takes a second vpdpbusd.
  bool split = false;
  for (int t = 0; t < filter * filter; ++t)
    for (int c = 0; c < channels; ++c) {
      const int32_t w = WeightOf(weights_[static_cast<size_t>(t) * padded_channels_ + c]);
      if (w < -256 || w > 254) return;
      split = split || w < -128 || w > 127;
    }
  const int full = channels / 16 * 16;
  // Per 16 channels: 3x3, 3 columns; 5x5, kDot5Vectors; twice when split.
  const int set = filter == 3 ? 3 : kDot5Vectors, vectors = split ? 2 * set : set;
  dot_weights_.Resize(static_cast<size_t>(full) * vectors);
  dot_bias_.Resize(padded_channels_);
  int8_t* bytes = reinterpret_cast<int8_t*>(dot_weights_.data());
  for (int c = 0; c < full; ++c) {
    const int cb = c / 16 * 16, j = c % 16;
    int8_t* block = bytes + static_cast<size_t>(cb) * 4 * vectors;
    uint32_t sum = 0;
    for (int fy = 0; fy < filter; ++fy)
      for (int fx = 0; fx < filter; ++fx) {
        const int32_t w =
            WeightOf(weights_[static_cast<size_t>(fy * filter + fx) * padded_channels_ + c]);
        const int32_t low = split ? w >> 1 : 0;  // floor
        // Its vector and byte: 3x3, column fx, row fy; 5x5, rows 0-3 as
        // 3x3, row 4's columns 0-3 in vector 5, its column 4 in vector 6.
        const int vector = fy < 4 ? fx : fx < 4 ? 5 : 6;
        const int byte = fy < 4 ? fy : fx < 4 ? fx : 0;
        block[vector * 64 + 4 * j + byte] = static_cast<int8_t>(w - low);
        if (split) block[(set + vector) * 64 + 4 * j + byte] = static_cast<int8_t>(low);
        sum += static_cast<uint32_t>(w);
      }
    // int8 inputs enter as x + 128.
    dot_bias_[c] = static_cast<int32_t>(static_cast<uint32_t>(bias_interior_[c]) -
                                        (is_uint8_ ? 0u : 128u * sum));
  }
  dot_channels_ = full;
  dot_split_ = split;
  dot_ifma_ = magnitude_requant_ && magnitude_bound_ < (int64_t{1} << 20);
  // Without the magnitude form, the single 64-bit rounding shift (exact for
  // any accumulator) when every channel has a right shift (no 64-bit clamp).
  if (!magnitude_requant_ && Requant64Channels::Covers(p.shift, channels)) {
    requant64_.Init(p.multiplier, p.shift, channels, padded_channels_, p.output_zero_point,
                    p.act_min, p.act_max, !is_uint8_);
    dot_requant64_ = !requant64_.wide;
    if (!dot_requant64_) requant64_ = Requant64Channels();
  }
#else
  (void)p;
#endif
}

void QuantDepthwise::PrepareMagnitudeRequant(const QuantDepthwiseParams& p) {
  const int channels = g_.output_depth, taps = g_.filter_height * g_.filter_width;
  const int64_t deviation = MaxInputDeviation(is_uint8_, p.input_zero_point);
  MagnitudeChannels magnitude;
  magnitude.Init(padded_channels_);
  int64_t largest = 0;
  for (int c = 0; c < channels; ++c) {
    const int32_t m = p.multiplier[c], shift = p.shift[c];
    int64_t weight_sum = 0;
    for (int t = 0; t < taps; ++t)
      weight_sum += std::abs(WeightOf(weights_[static_cast<size_t>(t) * padded_channels_ + c]));
    const int64_t bias = p.bias != nullptr ? p.bias[c] : 0;
    const int64_t bound = std::abs(bias) + deviation * weight_sum;  // of |acc|
    if (!MagnitudeExact(m, shift, bound)) return;
    largest = std::max(largest, bound);
    magnitude.Set(c, m, shift);
  }
  magnitude_bound_ = largest;
  magnitude_ = std::move(magnitude);
  magnitude_requant_ = true;
}

void QuantDepthwise::PreparePairs(const QuantDepthwiseParams& p) {
  const int fh = g_.filter_height, fw = g_.filter_width, channels = g_.output_depth;
  const int vectors = PairVectors(fh, fw), last_pairs = fw / 2 + 1;
  pair_channels_ = channels / 8 * 8;
  pair_weights_.Resize(static_cast<size_t>(pair_channels_) * vectors);
  const int block_width = isa_ == Isa::kAvx512Vnni ? 16 : 8;
  // w + w_off as uint16; 0 outside the filter.
  auto weight = [&](int fy, int fx, int c) -> uint32_t {
    if (fx < 0 || fx >= fw) return 0;
    return static_cast<uint32_t>(
               weights_[static_cast<size_t>(fy * fw + fx) * padded_channels_ + c]) &
           0xFFFFu;
  };
  for (int cb = 0; cb < pair_channels_; cb += block_width) {
    const int n = std::min(block_width, pair_channels_ - cb);  // 16 or 8
    int32_t* block = pair_weights_.data() + static_cast<size_t>(cb) * vectors;
    for (int k = 0; k < n; ++k) {
      const int c = cb + k;
      auto set = [&](int v, uint32_t a, uint32_t b) {
        block[v * n + k] = static_cast<int32_t>(a | b << 16);
      };
      for (int rp = 0; rp < fh / 2; ++rp)
        for (int fx = 0; fx < fw; ++fx)
          set(rp * fw + fx, weight(2 * rp, fx, c), weight(2 * rp + 1, fx, c));
      if (fh % 2 == 1) {
        const int r = fh - 1, base = fh / 2 * fw;
        for (int q = 0; q < last_pairs; ++q) {
          set(base + q, weight(r, 2 * q, c), weight(r, 2 * q + 1, c));
          set(base + last_pairs + q, weight(r, 2 * q - 1, c), weight(r, 2 * q, c));
        }
      }
    }
  }
  pair_zero_row_.Resize(static_cast<size_t>(g_.input_width) * channels);
  if (pair_zero_row_.bytes() > 0)  // empty for an empty input (hostile shapes)
    std::memset(pair_zero_row_.data(), static_cast<uint8_t>(p.input_zero_point),
                pair_zero_row_.bytes());
}

void QuantDepthwise::RunRows(int64_t begin, int64_t end, const void* input, void* output) const {
  const uint8_t* in = static_cast<const uint8_t*>(input);
  uint8_t* out = static_cast<uint8_t*>(output);
  switch (isa_) {
#if DELEGATO_X86
    case Isa::kAvx512Vnni:
      // 8 output channels fill half a 512-bit vector; the AVX2
      // expansion path is faster there (person_detect's first layer:
      // 96x96x1 x8, 15 vs 21 us).
      if (g_.depth_multiplier != 1 && g_.output_depth == 8) {
        if (is_uint8_)
          Avx2ExpandDispatch<false>(*this, begin, end, in, out);
        else
          Avx2ExpandDispatch<true>(*this, begin, end, in, out);
        return;
      }
      if (dot_channels_ > 0) {
        if (g_.filter_height == 3)
          Avx512DotFilter<3>(*this, begin, end, in, out);
        else
          Avx512DotFilter<5>(*this, begin, end, in, out);
      } else if (pair_channels_ > 0) {
        if (is_uint8_)
          Avx512PairDispatch<false>(*this, begin, end, in, out);
        else
          Avx512PairDispatch<true>(*this, begin, end, in, out);
      } else if (g_.depth_multiplier == 1) {
        if (is_uint8_)
          Avx512Dispatch<false, false>(*this, begin, end, in, out);
        else
          Avx512Dispatch<true, false>(*this, begin, end, in, out);
      } else {
        if (is_uint8_)
          Avx512Dispatch<false, true>(*this, begin, end, in, out);
        else
          Avx512Dispatch<true, true>(*this, begin, end, in, out);
      }
      return;
    case Isa::kAvx2:
      if (g_.depth_multiplier != 1) {
        if (is_uint8_)
          Avx2ExpandDispatch<false>(*this, begin, end, in, out);
        else
          Avx2ExpandDispatch<true>(*this, begin, end, in, out);
      } else if (is_uint8_)
        Avx2Dispatch<false>(*this, begin, end, in, out);
      else
        Avx2Dispatch<true>(*this, begin, end, in, out);
      return;
#endif
#if DELEGATO_ARM
    case Isa::kNeon:
    case Isa::kDotprod:  // no dot-product variant: the Armv8.0 loop
    case Isa::kI8mm:
      if (g_.depth_multiplier != 1) break;
      if (is_uint8_)
        NeonRows<false>(*this, begin, end, in, out);
      else
        NeonRows<true>(*this, begin, end, in, out);
      return;
#endif
    default:
      break;
  }
  ScalarRows(*this, begin, end, in, out, 0, g_.output_depth);
}

}  // namespace delegato::optimized
