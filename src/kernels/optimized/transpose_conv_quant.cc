#include "kernels/optimized/transpose_conv_quant.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#if DELEGATO_X86
#include <immintrin.h>
#endif

#include "kernels/optimized/transpose_conv_taps.h"

// GCC 12's AVX-512 intrinsics pass an undefined vector through an all-ones
// mask, which it then reports as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace delegato::optimized {

namespace {

struct PixelArgs {
  const reference::TransposeConvGeometry* g;
  const int16_t* packed;       // AVX2 / AVX-512: int16 pairs
  const int32_t* packed_wide;  // portable: int32
  int32_t padded_depth;
  int32_t input_offset;
  const RequantChannels* requant;
  const int32_t* bias;
};

// Where tap (fy, fx)'s weights start in the packed filter (see Pack).
inline int64_t TapOffset(const PixelArgs& a, int32_t fy, int32_t fx) {
  const reference::TransposeConvGeometry& g = *a.g;
  const int64_t pairs = (g.input_depth + 15) / 16 * 8;
  return (int64_t{fy} * g.filter_width + fx) * pairs * 2 * a.padded_depth;
}

#if DELEGATO_X86

// Input channels [ic0, ic0 + 16) of one pixel plus the input offset, as 8
// int32 words of two int16 (channel 2k low, 2k + 1 high): the vpmaddwd
// operand. Channels past the pixel's depth are read as 0 (their weights are
// 0, so any value would do, but reading past the image would not).
template <class T>
DLG_TARGET_AVX2 inline void InputPairs(const T* in, int32_t ic0, int32_t depth, int32_t offset,
                                       int32_t* pairs) {
  __m128i bytes;
  if (ic0 + 16 <= depth) {
    bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + ic0));
  } else {
    alignas(16) T last[16] = {};
    std::memcpy(last, in + ic0, static_cast<size_t>(depth - ic0));
    bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(last));
  }
  const __m256i wide =
      std::is_same_v<T, uint8_t> ? _mm256_cvtepu8_epi16(bytes) : _mm256_cvtepi8_epi16(bytes);
  _mm256_store_si256(reinterpret_cast<__m256i*>(pairs),
                     _mm256_add_epi16(wide, _mm256_set1_epi16(static_cast<int16_t>(offset))));
}

// Out: T (requantized bytes) or int32_t (the raw sums, for the hybrid op).
// P output pixels of one row, stride_width apart, whose contributors are
// the same taps over input columns shifted by one per pixel (rx is pixel
// 0's): each weight vector loaded once serves all P.
template <class T, class Out, int kVectors, int P>
DLG_TARGET_AVX512 void Avx512Block(const PixelArgs& a, const T* image, InputRange ry,
                                   InputRange rx, int32_t out_y, int32_t out_x, int32_t oc0,
                                   __mmask16 last_mask, Out* out) {
  const reference::TransposeConvGeometry& g = *a.g;
  __m512i acc[P][kVectors];
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < kVectors; ++j) acc[p][j] = _mm512_setzero_si512();
  for (int32_t iy = ry.begin; iy < ry.end; ++iy) {
    const int32_t fy = out_y + g.pad_height - iy * g.stride_height;
    for (int32_t ix = rx.begin; ix < rx.end; ++ix) {
      const int32_t fx = out_x + g.pad_width - ix * g.stride_width;
      const T* in = image + (int64_t{iy} * g.input_width + ix) * g.input_depth;
      const int16_t* w = a.packed + TapOffset(a, fy, fx) + 2 * oc0;
      for (int32_t ic0 = 0; ic0 < g.input_depth; ic0 += 16) {
        alignas(32) int32_t pairs[P][8];
        for (int p = 0; p < P; ++p)
          InputPairs(in + p * g.input_depth, ic0, g.input_depth, a.input_offset, pairs[p]);
        // All 8 pairs even in the last chunk: padded pairs have zero weights.
        for (int k = 0; k < 8; ++k, w += 2 * a.padded_depth) {
          __m512i wv[kVectors];
          for (int j = 0; j < kVectors; ++j) wv[j] = _mm512_load_si512(w + 32 * j);
          for (int p = 0; p < P; ++p) {
            const __m512i x = _mm512_set1_epi32(pairs[p][k]);
            for (int j = 0; j < kVectors; ++j)
              acc[p][j] = _mm512_add_epi32(acc[p][j], _mm512_madd_epi16(x, wv[j]));
          }
        }
      }
    }
  }
  const int64_t pixel_step = int64_t{g.stride_width} * g.output_depth;
  if constexpr (std::is_same_v<Out, int32_t>) {
    for (int p = 0; p < P; ++p)
      for (int j = 0; j < kVectors; ++j)
        _mm512_mask_storeu_epi32(out + p * pixel_step + oc0 + 16 * j,
                                 j == kVectors - 1 ? last_mask : static_cast<__mmask16>(0xFFFF),
                                 acc[p][j]);
    return;
  }
  const RequantChannels& rq = *a.requant;
  const __m512i lo = _mm512_set1_epi32(rq.clamp_min), hi = _mm512_set1_epi32(rq.clamp_max),
                offset = _mm512_set1_epi32(rq.output_offset);
  for (int j = 0; j < kVectors; ++j) {
    const int32_t c = oc0 + 16 * j;
    const __mmask16 m = j == kVectors - 1 ? last_mask : static_cast<__mmask16>(0xFFFF);
    const Requant512 r = LoadRequant512(rq, c);
    const __m512i bias =
        a.bias != nullptr ? _mm512_maskz_loadu_epi32(m, a.bias + c) : _mm512_setzero_si512();
    for (int p = 0; p < P; ++p) {
      const __m512i v = Requantize512(_mm512_add_epi32(acc[p][j], bias), r, lo, hi, offset);
      _mm512_mask_cvtepi32_storeu_epi8(out + p * pixel_step + c, m, v);  // in range: the low byte
    }
  }
}

template <class T, class Out>
DLG_TARGET_AVX512 void Avx512Pixel(const PixelArgs& a, const T* image, int32_t out_y,
                                   int32_t out_x, Out* out) {
  const reference::TransposeConvGeometry& g = *a.g;
  const InputRange ry =
      Contributors(out_y, g.pad_height, g.filter_height, g.stride_height, g.input_height);
  const InputRange rx =
      Contributors(out_x, g.pad_width, g.filter_width, g.stride_width, g.input_width);
  for (int32_t oc0 = 0; oc0 < g.output_depth; oc0 += 64) {
    const int32_t left = std::min(64, g.output_depth - oc0);
    const int vectors = (left + 15) / 16;
    const int tail = left - 16 * (vectors - 1);
    const __mmask16 last = static_cast<__mmask16>((1u << tail) - 1);
    switch (vectors) {
      case 4: Avx512Block<T, Out, 4, 1>(a, image, ry, rx, out_y, out_x, oc0, last, out); break;
      case 3: Avx512Block<T, Out, 3, 1>(a, image, ry, rx, out_y, out_x, oc0, last, out); break;
      case 2: Avx512Block<T, Out, 2, 1>(a, image, ry, rx, out_y, out_x, oc0, last, out); break;
      default: Avx512Block<T, Out, 1, 1>(a, image, ry, rx, out_y, out_x, oc0, last, out); break;
    }
  }
}

// Avx2Block's epilogue: bias, requantization and T stores of P pixels.
template <class T, int kVectors, int P>
DLG_TARGET_AVX2 void Avx2Requantize(const PixelArgs& a, const __m256i (&acc)[P][kVectors],
                                    int32_t oc0, int last_count, int64_t pixel_step, T* out) {
  const RequantChannels& rq = *a.requant;
  const __m256i lo = _mm256_set1_epi32(rq.clamp_min), hi = _mm256_set1_epi32(rq.clamp_max),
                offset = _mm256_set1_epi32(rq.output_offset);
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int j = 0; j < kVectors; ++j) {
    const int32_t c = oc0 + 8 * j;
    const int count = j == kVectors - 1 ? last_count : 8;
    const Requant256 r = LoadRequant256(rq, c);
    __m256i bias = _mm256_setzero_si256();
    if (a.bias != nullptr)
      bias = _mm256_maskload_epi32(a.bias + c, _mm256_cmpgt_epi32(_mm256_set1_epi32(count), lanes));
    for (int p = 0; p < P; ++p) {
      const __m256i v = Requantize256(_mm256_add_epi32(acc[p][j], bias), r, lo, hi, offset);
      T* dst = out + p * pixel_step + c;
      if (count == 8) {  // lanes are in T's range: the saturating packs are exact
        const __m256i words = _mm256_packs_epi32(v, v);
        const __m256i bytes = std::is_same_v<T, uint8_t> ? _mm256_packus_epi16(words, words)
                                                         : _mm256_packs_epi16(words, words);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(dst),
                         _mm_unpacklo_epi32(_mm256_castsi256_si128(bytes),
                                            _mm256_extracti128_si256(bytes, 1)));
        continue;
      }
      alignas(32) int32_t lanes_out[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes_out), v);
      for (int i = 0; i < count; ++i) dst[i] = static_cast<T>(lanes_out[i]);
    }
  }
}

// Avx512Block with 8-channel vectors.
template <class T, class Out, int kVectors, int P>
DLG_TARGET_AVX2 void Avx2Block(const PixelArgs& a, const T* image, InputRange ry, InputRange rx,
                               int32_t out_y, int32_t out_x, int32_t oc0, int last_count,
                               Out* out) {
  const reference::TransposeConvGeometry& g = *a.g;
  __m256i acc[P][kVectors];
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < kVectors; ++j) acc[p][j] = _mm256_setzero_si256();
  for (int32_t iy = ry.begin; iy < ry.end; ++iy) {
    const int32_t fy = out_y + g.pad_height - iy * g.stride_height;
    for (int32_t ix = rx.begin; ix < rx.end; ++ix) {
      const int32_t fx = out_x + g.pad_width - ix * g.stride_width;
      const T* in = image + (int64_t{iy} * g.input_width + ix) * g.input_depth;
      const int16_t* w = a.packed + TapOffset(a, fy, fx) + 2 * oc0;
      for (int32_t ic0 = 0; ic0 < g.input_depth; ic0 += 16) {
        alignas(32) int32_t pairs[P][8];
        for (int p = 0; p < P; ++p)
          InputPairs(in + p * g.input_depth, ic0, g.input_depth, a.input_offset, pairs[p]);
        // All 8 pairs even in the last chunk: padded pairs have zero weights.
        for (int k = 0; k < 8; ++k, w += 2 * a.padded_depth) {
          __m256i wv[kVectors];
          for (int j = 0; j < kVectors; ++j)
            wv[j] = _mm256_load_si256(reinterpret_cast<const __m256i*>(w + 16 * j));
          for (int p = 0; p < P; ++p) {
            const __m256i x = _mm256_set1_epi32(pairs[p][k]);
            for (int j = 0; j < kVectors; ++j)
              acc[p][j] = _mm256_add_epi32(acc[p][j], _mm256_madd_epi16(x, wv[j]));
          }
        }
      }
    }
  }
  const int64_t pixel_step = int64_t{g.stride_width} * g.output_depth;
  if constexpr (std::is_same_v<Out, int32_t>) {
    alignas(32) int32_t sums[8];
    for (int p = 0; p < P; ++p)
      for (int j = 0; j < kVectors; ++j) {
        const int count = j == kVectors - 1 ? last_count : 8;
        _mm256_store_si256(reinterpret_cast<__m256i*>(sums), acc[p][j]);
        for (int i = 0; i < count; ++i) out[p * pixel_step + oc0 + 8 * j + i] = sums[i];
      }
  } else {
    Avx2Requantize<T, kVectors, P>(a, acc, oc0, last_count, pixel_step, out);
  }
}

template <class T, class Out>
DLG_TARGET_AVX2 void Avx2Pixel(const PixelArgs& a, const T* image, int32_t out_y, int32_t out_x,
                               Out* out) {
  const reference::TransposeConvGeometry& g = *a.g;
  const InputRange ry =
      Contributors(out_y, g.pad_height, g.filter_height, g.stride_height, g.input_height);
  const InputRange rx =
      Contributors(out_x, g.pad_width, g.filter_width, g.stride_width, g.input_width);
  for (int32_t oc0 = 0; oc0 < g.output_depth; oc0 += 32) {
    const int32_t left = std::min(32, g.output_depth - oc0);
    const int vectors = (left + 7) / 8;
    const int tail = left - 8 * (vectors - 1);
    switch (vectors) {
      case 4: Avx2Block<T, Out, 4, 1>(a, image, ry, rx, out_y, out_x, oc0, tail, out); break;
      case 3: Avx2Block<T, Out, 3, 1>(a, image, ry, rx, out_y, out_x, oc0, tail, out); break;
      case 2: Avx2Block<T, Out, 2, 1>(a, image, ry, rx, out_y, out_x, oc0, tail, out); break;
      default: Avx2Block<T, Out, 1, 1>(a, image, ry, rx, out_y, out_x, oc0, tail, out); break;
    }
  }
}

// kBatch pixels of one output row at a time where they share their taps
// (Avx2Block / Avx512Block with P = kBatch): output channels up to two
// vectors (more already reuse each broadcast input over several weight
// vectors). Returns false when the geometry is not batched.
constexpr int kBatch = 4;

inline bool Batched(Isa isa, const reference::TransposeConvGeometry& g) {
  return (isa == Isa::kAvx2 && g.output_depth <= 16) ||
         (isa == Isa::kAvx512Vnni && g.output_depth <= 32);
}

// Output row `out_y` (out: its first pixel) in phases: pixels x, x + stride,
// ... have contributors shifted by one input column each while no border
// clips them, so runs of kBatch such pixels go through one block; the rest
// one by one.
template <class T, class Out>
DLG_TARGET_AVX2 void BatchedRow(Isa isa, const PixelArgs& a, const T* image, int32_t out_y,
                                Out* out) {
  const reference::TransposeConvGeometry& g = *a.g;
  const int32_t s = g.stride_width;
  const InputRange ry =
      Contributors(out_y, g.pad_height, g.filter_height, g.stride_height, g.input_height);
  const int vectors = isa == Isa::kAvx2 ? (g.output_depth + 7) / 8 : (g.output_depth + 15) / 16;
  const int tail = isa == Isa::kAvx2 ? g.output_depth - 8 * (vectors - 1)
                                     : g.output_depth - 16 * (vectors - 1);
  for (int32_t phase = 0; phase < s && phase < g.output_width; ++phase) {
    for (int32_t x = phase; x < g.output_width;) {
      const InputRange rx = Contributors(x, g.pad_width, g.filter_width, s, g.input_width);
      const bool batch = SharedTapsRun(x, kBatch, rx, g.pad_width, g.filter_width, s,
                                       g.input_width, g.output_width);
      Out* o = out + int64_t{x} * g.output_depth;
      if (!batch) {
        if (isa == Isa::kAvx2)
          Avx2Pixel<T, Out>(a, image, out_y, x, o);
        else
          Avx512Pixel<T, Out>(a, image, out_y, x, o);
        x += s;
        continue;
      }
      if (isa == Isa::kAvx2) {
        if (vectors == 2)
          Avx2Block<T, Out, 2, kBatch>(a, image, ry, rx, out_y, x, 0, tail, o);
        else
          Avx2Block<T, Out, 1, kBatch>(a, image, ry, rx, out_y, x, 0, tail, o);
      } else {
        const __mmask16 m = static_cast<__mmask16>((1u << tail) - 1);
        if (vectors == 2)
          Avx512Block<T, Out, 2, kBatch>(a, image, ry, rx, out_y, x, 0, m, o);
        else
          Avx512Block<T, Out, 1, kBatch>(a, image, ry, rx, out_y, x, 0, m, o);
      }
      x += kBatch * s;
    }
  }
}

#endif  // DELEGATO_X86

// Out: T, or int32_t for the raw sums; batch_offsets (raw sums only): the
// input offset of each batch, else a.input_offset for all.
template <class T, class Out>
void RunRows(Isa isa, const PixelArgs& args, const T* input, Out* output, int64_t row_begin,
             int64_t row_end, const int32_t* batch_offsets = nullptr) {
  PixelArgs a = args;
  const reference::TransposeConvGeometry& g = *a.g;
  const int64_t image_size = int64_t{g.input_height} * g.input_width * g.input_depth;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t b = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const T* image = input + b * image_size;
    if (batch_offsets != nullptr) a.input_offset = batch_offsets[b];
    Out* out = output + row * g.output_width * g.output_depth;
#if DELEGATO_X86
    if (Batched(isa, g)) {
      BatchedRow<T, Out>(isa, a, image, out_y, out);
      continue;
    }
#endif
    for (int32_t out_x = 0; out_x < g.output_width; ++out_x, out += g.output_depth) {
#if DELEGATO_X86
      if (isa == Isa::kAvx512Vnni) {
        Avx512Pixel<T, Out>(a, image, out_y, out_x, out);
        continue;
      }
      if (isa == Isa::kAvx2) {
        Avx2Pixel<T, Out>(a, image, out_y, out_x, out);
        continue;
      }
#endif
      // Portable: sums in 64-channel pieces on the stack (Eval allocates nothing).
      int32_t acc[64];
      for (int32_t oc0 = 0; oc0 < g.output_depth; oc0 += 64) {
        const int32_t depth = std::min(64, g.output_depth - oc0);
        std::fill(acc, acc + depth, 0);
        const InputRange ry = Contributors(out_y, g.pad_height, g.filter_height,
                                           g.stride_height, g.input_height);
        const InputRange rx =
            Contributors(out_x, g.pad_width, g.filter_width, g.stride_width, g.input_width);
        for (int32_t iy = ry.begin; iy < ry.end; ++iy) {
          const int32_t fy = out_y + g.pad_height - iy * g.stride_height;
          for (int32_t ix = rx.begin; ix < rx.end; ++ix) {
            const int32_t fx = out_x + g.pad_width - ix * g.stride_width;
            const T* in = image + (int64_t{iy} * g.input_width + ix) * g.input_depth;
            const int32_t* w = a.packed_wide +
                               (int64_t{fy} * g.filter_width + fx) * g.input_depth *
                                   a.padded_depth +
                               oc0;
            for (int32_t ic = 0; ic < g.input_depth; ++ic, w += a.padded_depth) {
              const uint32_t x = static_cast<uint32_t>(int32_t{in[ic]} + a.input_offset);
              for (int32_t k = 0; k < depth; ++k)  // wrapping, as int32 sums do
                acc[k] = static_cast<int32_t>(static_cast<uint32_t>(acc[k]) +
                                              x * static_cast<uint32_t>(w[k]));
            }
          }
        }
        if constexpr (std::is_same_v<Out, int32_t>) {
          std::copy(acc, acc + depth, out + oc0);
          continue;
        }
        for (int32_t k = 0; k < depth; ++k) {
          int32_t v = acc[k];
          if (a.bias != nullptr)
            v = static_cast<int32_t>(static_cast<uint32_t>(v) +
                                     static_cast<uint32_t>(a.bias[oc0 + k]));
          out[oc0 + k] = static_cast<T>(RequantizeOne(*a.requant, oc0 + k, v));
        }
      }
    }
  }
}

}  // namespace

void TransposeConvQuant::Prepare(Isa isa, const reference::TransposeConvGeometry& g,
                                 const reference::TransposeConvQuantParams& q, bool is_uint8,
                                 const void* filter) {
  Pack(isa, g, q, is_uint8, filter);
  requant_.Init(q.multiplier, q.shift, g.output_depth, padded_depth_, q.output_offset,
                q.act_min, q.act_max);
}

void TransposeConvQuant::Pack(Isa isa, const reference::TransposeConvGeometry& g,
                              const reference::TransposeConvQuantParams& q, bool is_uint8,
                              const void* filter) {
  // Up to 8 output channels AVX2's full vector beats a half-masked AVX-512
  // one (kernels_bench transpose_conv_int8 8x8x16 -> 16x16x8: 9.8 against
  // 10.8 µs).
  if (isa == Isa::kAvx512Vnni && g.output_depth <= 8) isa = Isa::kAvx2;
  isa_ = isa;
  g_ = g;
  is_uint8_ = is_uint8;
  input_offset_ = q.input_offset;
  padded_depth_ = (g.output_depth + 15) / 16 * 16;
  // Vector ISAs: [tap][input channel pair][output channel][2] int16 (input
  // channels padded to 16, output channels to padded_depth_, with zeros): a
  // pair's two weights for one output channel are the vpmaddwd partner of
  // the input's pair. Filter bytes plus their offset lie in [-255, 255].
  // Portable: [tap][input channel][output channel] int32, which compilers
  // vectorize better than the pairs (8x8x16 -> 16x16x8: 34 against 37 µs,
  // 16x16x32 -> 32x32x16: 336 against 512 µs with SSE2).
  const int64_t taps = int64_t{g.filter_height} * g.filter_width;
  const bool pairs_layout = isa != Isa::kScalar;
  const int64_t pairs = (g.input_depth + 15) / 16 * 8;
  if (pairs_layout)
    packed_.Resize(static_cast<size_t>(taps * pairs * 2 * padded_depth_));  // zeroed
  else
    packed_wide_.Resize(static_cast<size_t>(taps * g.input_depth * padded_depth_));
  for (int32_t oc = 0; oc < g.output_depth; ++oc)
    for (int64_t tap = 0; tap < taps; ++tap)
      for (int32_t ic = 0; ic < g.input_depth; ++ic) {
        const int64_t from = (oc * taps + tap) * g.input_depth + ic;
        const int32_t f = (is_uint8 ? int32_t{static_cast<const uint8_t*>(filter)[from]}
                                    : int32_t{static_cast<const int8_t*>(filter)[from]}) +
                          q.filter_offset;
        if (pairs_layout)
          packed_[((tap * pairs + ic / 2) * padded_depth_ + oc) * 2 + ic % 2] =
              static_cast<int16_t>(f);
        else
          packed_wide_[(tap * g.input_depth + ic) * padded_depth_ + oc] = f;
      }
}

void TransposeConvQuant::PrepareSums(Isa isa, const reference::TransposeConvGeometry& g,
                                     const int8_t* filter) {
  reference::TransposeConvQuantParams q;  // filter offset 0, no requantization
  Pack(isa, g, q, false, filter);
}

void TransposeConvQuant::Sums(const int8_t* input, const int32_t* batch_offsets, int32_t* sums,
                              int64_t row_begin, int64_t row_end) const {
  const PixelArgs a{&g_, packed_.data(), packed_wide_.data(), padded_depth_, 0, &requant_, nullptr};
  RunRows(isa_, a, input, sums, row_begin, row_end, batch_offsets);
}

void TransposeConvQuant::Run(const void* input, const int32_t* bias, void* output,
                             int64_t row_begin, int64_t row_end) const {
  const PixelArgs a{&g_, packed_.data(), packed_wide_.data(), padded_depth_, input_offset_, &requant_, bias};
  if (is_uint8_)
    RunRows(isa_, a, static_cast<const uint8_t*>(input), static_cast<uint8_t*>(output),
            row_begin, row_end);
  else
    RunRows(isa_, a, static_cast<const int8_t*>(input), static_cast<int8_t*>(output), row_begin,
            row_end);
}

}  // namespace delegato::optimized
