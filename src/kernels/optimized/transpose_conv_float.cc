#include "kernels/optimized/transpose_conv_float.h"

#include <algorithm>

#if DELEGATO_X86
#include <immintrin.h>
#endif

#include "kernels/optimized/transpose_conv_taps.h"

// GCC 12's AVX-512 min/max intrinsics pass an undefined vector through an
// all-ones mask, which it then reports as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace delegato::optimized {

namespace {

int32_t VectorWidth(Isa isa) {
  if (isa == Isa::kAvx512Vnni) return 16;
  if (isa == Isa::kAvx2) return 8;
  return 8;  // the portable loops work in 8-channel groups too
}

// Portable: the same order of operations as the vector kernels.
void ScalarPixel(const reference::TransposeConvGeometry& g, const float* packed,
                 int32_t padded_depth, const float* image, int32_t out_y, int32_t out_x,
                 const float* bias, float act_min, float act_max, float* out) {
  const InputRange ry =
      Contributors(out_y, g.pad_height, g.filter_height, g.stride_height, g.input_height);
  const InputRange rx =
      Contributors(out_x, g.pad_width, g.filter_width, g.stride_width, g.input_width);
  for (int32_t oc = 0; oc < g.output_depth; ++oc) out[oc] = 0.0f;
  for (int32_t iy = ry.begin; iy < ry.end; ++iy) {
    const int32_t fy = out_y + g.pad_height - iy * g.stride_height;
    for (int32_t ix = rx.begin; ix < rx.end; ++ix) {
      const int32_t fx = out_x + g.pad_width - ix * g.stride_width;
      const float* in = image + (int64_t{iy} * g.input_width + ix) * g.input_depth;
      const float* w =
          packed + (int64_t{fy} * g.filter_width + fx) * g.input_depth * padded_depth;
      for (int32_t ic = 0; ic < g.input_depth; ++ic, w += padded_depth) {
        const float x = in[ic];
        for (int32_t oc = 0; oc < g.output_depth; ++oc) out[oc] = out[oc] + x * w[oc];
      }
    }
  }
  for (int32_t oc = 0; oc < g.output_depth; ++oc) {
    float v = out[oc];
    if (bias != nullptr) v += bias[oc];
    out[oc] = std::min(std::max(v, act_min), act_max);
  }
}

#if DELEGATO_X86

// kVectors vectors of 16 output channels from oc0 (the last may be partial:
// `last_mask`) of P output pixels of one row, stride_width apart, whose
// contributors are the same taps over input columns shifted by one per
// pixel (rx is pixel 0's): each weight vector loaded once serves all P, and
// the P pixels' add chains run side by side. Each output's own operations
// and their order are those of one pixel alone.
template <int kVectors, int P>
DLG_TARGET_AVX512 void Avx512Block(const reference::TransposeConvGeometry& g,
                                   const float* packed, int32_t padded_depth,
                                   const float* image, InputRange ry, InputRange rx,
                                   int32_t out_y, int32_t out_x, int32_t oc0,
                                   __mmask16 last_mask, const float* bias, float act_min,
                                   float act_max, float* out) {
  __m512 acc[P][kVectors];
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < kVectors; ++j) acc[p][j] = _mm512_setzero_ps();
  for (int32_t iy = ry.begin; iy < ry.end; ++iy) {
    const int32_t fy = out_y + g.pad_height - iy * g.stride_height;
    for (int32_t ix = rx.begin; ix < rx.end; ++ix) {
      const int32_t fx = out_x + g.pad_width - ix * g.stride_width;
      const float* in = image + (int64_t{iy} * g.input_width + ix) * g.input_depth;
      const float* w = packed +
                       (int64_t{fy} * g.filter_width + fx) * g.input_depth * padded_depth + oc0;
      for (int32_t ic = 0; ic < g.input_depth; ++ic, w += padded_depth) {
        __m512 wv[kVectors];
        for (int j = 0; j < kVectors; ++j) wv[j] = _mm512_load_ps(w + 16 * j);
        for (int p = 0; p < P; ++p) {
          const __m512 x = _mm512_set1_ps(in[p * g.input_depth + ic]);
          for (int j = 0; j < kVectors; ++j)
            acc[p][j] = _mm512_add_ps(acc[p][j], _mm512_mul_ps(x, wv[j]));
        }
      }
    }
  }
  const __m512 lo = _mm512_set1_ps(act_min), hi = _mm512_set1_ps(act_max);
  const int64_t pixel_step = int64_t{g.stride_width} * g.output_depth;
  for (int j = 0; j < kVectors; ++j) {
    const __mmask16 m = j == kVectors - 1 ? last_mask : static_cast<__mmask16>(0xFFFF);
    const __m512 b =
        bias != nullptr ? _mm512_maskz_loadu_ps(m, bias + oc0 + 16 * j) : _mm512_setzero_ps();
    for (int p = 0; p < P; ++p) {
      __m512 v = acc[p][j];
      if (bias != nullptr) v = _mm512_add_ps(v, b);
      // max(lo, v) and min(hi, .) return v for a NaN v, as std::max(v, lo) and
      // std::min(., hi) do.
      v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
      _mm512_mask_storeu_ps(out + p * pixel_step + oc0 + 16 * j, m, v);
    }
  }
}

DLG_TARGET_AVX512 void Avx512Pixel(const reference::TransposeConvGeometry& g,
                                   const float* packed, int32_t padded_depth,
                                   const float* image, int32_t out_y, int32_t out_x,
                                   const float* bias, float act_min, float act_max, float* out) {
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
      case 4: Avx512Block<4, 1>(g, packed, padded_depth, image, ry, rx, out_y, out_x, oc0, last,
                             bias, act_min, act_max, out); break;
      case 3: Avx512Block<3, 1>(g, packed, padded_depth, image, ry, rx, out_y, out_x, oc0, last,
                             bias, act_min, act_max, out); break;
      case 2: Avx512Block<2, 1>(g, packed, padded_depth, image, ry, rx, out_y, out_x, oc0, last,
                             bias, act_min, act_max, out); break;
      default: Avx512Block<1, 1>(g, packed, padded_depth, image, ry, rx, out_y, out_x, oc0, last,
                              bias, act_min, act_max, out); break;
    }
  }
}

// Avx512Block with 8-channel vectors.
template <int kVectors, int P>
DLG_TARGET_AVX2 void Avx2Block(const reference::TransposeConvGeometry& g, const float* packed,
                               int32_t padded_depth, const float* image, InputRange ry,
                               InputRange rx, int32_t out_y, int32_t out_x, int32_t oc0,
                               int last_count, const float* bias, float act_min, float act_max,
                               float* out) {
  __m256 acc[P][kVectors];
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < kVectors; ++j) acc[p][j] = _mm256_setzero_ps();
  for (int32_t iy = ry.begin; iy < ry.end; ++iy) {
    const int32_t fy = out_y + g.pad_height - iy * g.stride_height;
    for (int32_t ix = rx.begin; ix < rx.end; ++ix) {
      const int32_t fx = out_x + g.pad_width - ix * g.stride_width;
      const float* in = image + (int64_t{iy} * g.input_width + ix) * g.input_depth;
      const float* w = packed +
                       (int64_t{fy} * g.filter_width + fx) * g.input_depth * padded_depth + oc0;
      for (int32_t ic = 0; ic < g.input_depth; ++ic, w += padded_depth) {
        __m256 wv[kVectors];
        for (int j = 0; j < kVectors; ++j) wv[j] = _mm256_load_ps(w + 8 * j);
        for (int p = 0; p < P; ++p) {
          const __m256 x = _mm256_set1_ps(in[p * g.input_depth + ic]);
          for (int j = 0; j < kVectors; ++j)
            acc[p][j] = _mm256_add_ps(acc[p][j], _mm256_mul_ps(x, wv[j]));
        }
      }
    }
  }
  const __m256 lo = _mm256_set1_ps(act_min), hi = _mm256_set1_ps(act_max);
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const int64_t pixel_step = int64_t{g.stride_width} * g.output_depth;
  for (int j = 0; j < kVectors; ++j) {
    const int count = j == kVectors - 1 ? last_count : 8;
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(count), lanes);
    const __m256 b = bias != nullptr ? _mm256_maskload_ps(bias + oc0 + 8 * j, m)
                                     : _mm256_setzero_ps();
    for (int p = 0; p < P; ++p) {
      __m256 v = acc[p][j];
      if (bias != nullptr) v = _mm256_add_ps(v, b);
      v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
      _mm256_maskstore_ps(out + p * pixel_step + oc0 + 8 * j, m, v);
    }
  }
}

DLG_TARGET_AVX2 void Avx2Pixel(const reference::TransposeConvGeometry& g, const float* packed,
                               int32_t padded_depth, const float* image, int32_t out_y,
                               int32_t out_x, const float* bias, float act_min, float act_max,
                               float* out) {
  const InputRange ry =
      Contributors(out_y, g.pad_height, g.filter_height, g.stride_height, g.input_height);
  const InputRange rx =
      Contributors(out_x, g.pad_width, g.filter_width, g.stride_width, g.input_width);
  for (int32_t oc0 = 0; oc0 < g.output_depth; oc0 += 32) {
    const int32_t left = std::min(32, g.output_depth - oc0);
    const int vectors = (left + 7) / 8;
    const int tail = left - 8 * (vectors - 1);
    switch (vectors) {
      case 4: Avx2Block<4, 1>(g, packed, padded_depth, image, ry, rx, out_y, out_x, oc0, tail,
                           bias, act_min, act_max, out); break;
      case 3: Avx2Block<3, 1>(g, packed, padded_depth, image, ry, rx, out_y, out_x, oc0, tail,
                           bias, act_min, act_max, out); break;
      case 2: Avx2Block<2, 1>(g, packed, padded_depth, image, ry, rx, out_y, out_x, oc0, tail,
                           bias, act_min, act_max, out); break;
      default: Avx2Block<1, 1>(g, packed, padded_depth, image, ry, rx, out_y, out_x, oc0, tail,
                            bias, act_min, act_max, out); break;
    }
  }
}

// Runs of kBatch pixels sharing their taps, for outputs of up to two
// vectors (more already reuse each broadcast input over several weight
// vectors); see BatchedRow.
constexpr int kBatch = 4;

bool Batched(Isa isa, const reference::TransposeConvGeometry& g) {
  return (isa == Isa::kAvx2 && g.output_depth <= 16) ||
         (isa == Isa::kAvx512Vnni && g.output_depth <= 32);
}

// Output row `out_y` (out: its first pixel) in phases: pixels x, x + stride,
// ... have contributors shifted by one input column each while no border
// clips them, so runs of kBatch such pixels go through one block; the rest
// one by one.
DLG_TARGET_AVX2 void BatchedRow(Isa isa, const reference::TransposeConvGeometry& g,
                                const float* packed, int32_t padded_depth, const float* image,
                                int32_t out_y, const float* bias, float act_min, float act_max,
                                float* out) {
  const int32_t s = g.stride_width;
  const InputRange ry =
      Contributors(out_y, g.pad_height, g.filter_height, g.stride_height, g.input_height);
  const int width = isa == Isa::kAvx2 ? 8 : 16;
  const int vectors = (g.output_depth + width - 1) / width;
  const int tail = g.output_depth - width * (vectors - 1);
  for (int32_t phase = 0; phase < s && phase < g.output_width; ++phase) {
    for (int32_t x = phase; x < g.output_width;) {
      const InputRange rx = Contributors(x, g.pad_width, g.filter_width, s, g.input_width);
      const bool batch = SharedTapsRun(x, kBatch, rx, g.pad_width, g.filter_width, s,
                                       g.input_width, g.output_width);
      float* o = out + int64_t{x} * g.output_depth;
      if (!batch) {
        if (isa == Isa::kAvx2)
          Avx2Pixel(g, packed, padded_depth, image, out_y, x, bias, act_min, act_max, o);
        else
          Avx512Pixel(g, packed, padded_depth, image, out_y, x, bias, act_min, act_max, o);
        x += s;
        continue;
      }
      if (isa == Isa::kAvx2) {
        if (vectors == 2)
          Avx2Block<2, kBatch>(g, packed, padded_depth, image, ry, rx, out_y, x, 0, tail, bias,
                               act_min, act_max, o);
        else
          Avx2Block<1, kBatch>(g, packed, padded_depth, image, ry, rx, out_y, x, 0, tail, bias,
                               act_min, act_max, o);
      } else {
        const __mmask16 m = static_cast<__mmask16>((1u << tail) - 1);
        if (vectors == 2)
          Avx512Block<2, kBatch>(g, packed, padded_depth, image, ry, rx, out_y, x, 0, m, bias,
                                 act_min, act_max, o);
        else
          Avx512Block<1, kBatch>(g, packed, padded_depth, image, ry, rx, out_y, x, 0, m, bias,
                                 act_min, act_max, o);
      }
      x += kBatch * s;
    }
  }
}

#endif  // DELEGATO_X86

}  // namespace

void TransposeConvFloat::Prepare(Isa isa, const reference::TransposeConvGeometry& g,
                                 const float* filter) {
  // Up to 8 channels AVX2's full 8-lane vectors beat half-masked 16-lane
  // ones (kernels_bench transpose_conv_float 8x8x16 -> 16x16x8, batched:
  // 4.1 against 5.6 µs); at 16 the 16-lane ones win (33.9 against 37.8).
  if (isa == Isa::kAvx512Vnni && g.output_depth <= 8) isa = Isa::kAvx2;
  isa_ = isa;
  g_ = g;
  const int32_t width = VectorWidth(isa);
  padded_depth_ = (g.output_depth + width - 1) / width * width;
  const int64_t taps = int64_t{g.filter_height} * g.filter_width;
  packed_.Resize(static_cast<size_t>(taps * g.input_depth * padded_depth_));  // zeroed
  float* p = packed_.data();
  for (int32_t oc = 0; oc < g.output_depth; ++oc)
    for (int64_t tap = 0; tap < taps; ++tap)
      for (int32_t ic = 0; ic < g.input_depth; ++ic)
        p[(tap * g.input_depth + ic) * padded_depth_ + oc] =
            filter[(oc * taps + tap) * g.input_depth + ic];
}

void TransposeConvFloat::Run(const float* input, const float* bias, float act_min,
                             float act_max, float* output, int64_t row_begin,
                             int64_t row_end) const {
  const reference::TransposeConvGeometry& g = g_;
  const int64_t image_size = int64_t{g.input_height} * g.input_width * g.input_depth;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t b = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const float* image = input + b * image_size;
    float* out = output + row * g.output_width * g.output_depth;
#if DELEGATO_X86
    if (Batched(isa_, g)) {
      BatchedRow(isa_, g, packed_.data(), padded_depth_, image, out_y, bias, act_min, act_max,
                 out);
      continue;
    }
#endif
    for (int32_t out_x = 0; out_x < g.output_width; ++out_x, out += g.output_depth) {
#if DELEGATO_X86
      if (isa_ == Isa::kAvx512Vnni) {
        Avx512Pixel(g, packed_.data(), padded_depth_, image, out_y, out_x, bias, act_min,
                    act_max, out);
        continue;
      }
      if (isa_ == Isa::kAvx2) {
        Avx2Pixel(g, packed_.data(), padded_depth_, image, out_y, out_x, bias, act_min, act_max,
                  out);
        continue;
      }
#endif
      ScalarPixel(g, packed_.data(), padded_depth_, image, out_y, out_x, bias, act_min, act_max,
                  out);
    }
  }
}

}  // namespace delegato::optimized
