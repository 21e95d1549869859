#include "kernels/optimized/pooling.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#if DELEGATO_X86
#include <immintrin.h>
#endif

namespace delegato::optimized {

bool PoolCovers(Isa isa, const reference::PoolGeometry& g) {
#if DELEGATO_X86
  return (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni) &&
         int64_t{g.filter_height} * g.filter_width <= 65536;
#else
  (void)isa;
  (void)g;
  return false;
#endif
}

#if DELEGATO_X86
namespace {

// The reference's rounded average of one channel.
inline int32_t RoundedAverage(int64_t sum, int32_t count, int32_t act_min, int32_t act_max) {
  const int64_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
  return static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(avg, act_min), act_max));
}

template <bool kSigned>
DLG_TARGET_AVX2 inline __m256i Widen8(const uint8_t* p) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return kSigned ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
}

// (sum + (sum < 0 ? -half : half)) / count, truncated, for 8 lanes (see pooling.h).
DLG_TARGET_AVX2 inline __m256i RoundedDivide(__m256i sum, __m256i half, __m256d divisor) {
  const __m256i negative = _mm256_cmpgt_epi32(_mm256_setzero_si256(), sum);
  const __m256i signed_half = _mm256_sub_epi32(_mm256_xor_si256(half, negative), negative);
  const __m256i n = _mm256_add_epi32(sum, signed_half);
  const __m128i lo = _mm256_cvttpd_epi32(
      _mm256_div_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(n)), divisor));
  const __m128i hi = _mm256_cvttpd_epi32(
      _mm256_div_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(n, 1)), divisor));
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

// One output pixel's window: the first input pixel, the rows and columns
// inside the image, the row pitch and the count. (GCC does not compile
// intrinsics inside lambdas of a target function, so the kernels loop
// themselves instead of using reference::detail::ForEachPoolOutput.)
template <class T>
struct Window {
  const T* first;
  int32_t rows, cols;
  size_t row_pitch, pixel_pitch;
  int32_t count;
};

// Calls kernel(out_pixel, window) for every output pixel of rows [row_begin, row_end).
template <class T, class Kernel>
inline void ForEachWindow(const reference::PoolGeometry& g, const T* input, T* output,
                          int64_t row_begin, int64_t row_end, Kernel& kernel) {
  const size_t depth = g.depth;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const reference::PoolSpan ys =
        reference::PoolWindow(out_y, g.stride_height, g.pad_height, g.filter_height, g.input_height);
    const T* batch_input = input + static_cast<size_t>(batch) * g.input_height * g.input_width * depth;
    for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
      const reference::PoolSpan xs =
          reference::PoolWindow(out_x, g.stride_width, g.pad_width, g.filter_width, g.input_width);
      Window<T> w;
      w.rows = std::max(0, ys.end - ys.begin);
      w.cols = std::max(0, xs.end - xs.begin);
      w.count = w.rows * w.cols;
      w.row_pitch = static_cast<size_t>(g.input_width) * depth;
      w.pixel_pitch = depth;
      w.first = batch_input + (static_cast<size_t>(ys.begin) * g.input_width + xs.begin) * depth;
      kernel.Pixel(output + (static_cast<size_t>(row) * g.output_width + out_x) * depth, w);
    }
  }
}

template <bool kSigned>
struct AveragePool8Kernel {
  int32_t depth, act_min, act_max;
  DLG_TARGET_AVX2 void Pixel(uint8_t* out, const Window<uint8_t>& w) const {
    const __m256i lo = _mm256_set1_epi32(act_min), hi = _mm256_set1_epi32(act_max);
    const __m256d divisor = _mm256_set1_pd(static_cast<double>(w.count));
    const __m256i half = _mm256_set1_epi32(w.count / 2);
    int32_t c = 0;
    for (; c + 16 <= depth; c += 16) {
      __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
      for (int32_t y = 0; y < w.rows; ++y) {
        const uint8_t* in = w.first + y * w.row_pitch + c;
        for (int32_t x = 0; x < w.cols; ++x, in += w.pixel_pitch) {
          acc0 = _mm256_add_epi32(acc0, Widen8<kSigned>(in));
          acc1 = _mm256_add_epi32(acc1, Widen8<kSigned>(in + 8));
        }
      }
      const __m256i v0 =
          _mm256_min_epi32(_mm256_max_epi32(RoundedDivide(acc0, half, divisor), lo), hi);
      const __m256i v1 =
          _mm256_min_epi32(_mm256_max_epi32(RoundedDivide(acc1, half, divisor), lo), hi);
      // Within the type's range after the clamp: the saturating packs are exact.
      const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);
      const __m128i w0 = _mm256_castsi256_si128(words), w1 = _mm256_extracti128_si256(words, 1);
      const __m128i bytes = kSigned ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), bytes);
    }
    for (; c + 8 <= depth; c += 8) {
      __m256i acc = _mm256_setzero_si256();
      for (int32_t y = 0; y < w.rows; ++y) {
        const uint8_t* in = w.first + y * w.row_pitch + c;
        for (int32_t x = 0; x < w.cols; ++x, in += w.pixel_pitch)
          acc = _mm256_add_epi32(acc, Widen8<kSigned>(in));
      }
      const __m256i v =
          _mm256_min_epi32(_mm256_max_epi32(RoundedDivide(acc, half, divisor), lo), hi);
      const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
      const __m128i bytes = kSigned ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + c), bytes);
    }
    for (; c < depth; ++c) {
      int64_t sum = 0;
      for (int32_t y = 0; y < w.rows; ++y) {
        const uint8_t* in = w.first + y * w.row_pitch + c;
        for (int32_t x = 0; x < w.cols; ++x, in += w.pixel_pitch)
          sum += kSigned ? int64_t{static_cast<int8_t>(*in)} : int64_t{*in};
      }
      out[c] = static_cast<uint8_t>(RoundedAverage(sum, w.count, act_min, act_max));
    }
  }
};

template <bool kSigned>
DLG_TARGET_AVX2 inline __m256i MaxBytes(__m256i a, __m256i b) {
  return kSigned ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
}
template <bool kSigned>
DLG_TARGET_AVX2 inline __m256i MinBytes(__m256i a, __m256i b) {
  return kSigned ? _mm256_min_epi8(a, b) : _mm256_min_epu8(a, b);
}

template <bool kSigned>
struct MaxPool8Kernel {
  int32_t depth, act_min, act_max;
  DLG_TARGET_AVX2 void Pixel(uint8_t* out, const Window<uint8_t>& w) const {
    const __m256i lowest = _mm256_set1_epi8(static_cast<char>(kSigned ? 0x80 : 0x00));
    const __m256i lo = _mm256_set1_epi8(static_cast<char>(act_min));
    const __m256i hi = _mm256_set1_epi8(static_cast<char>(act_max));
    int32_t c = 0;
    for (; c + 16 <= depth; c += 32) {
      const bool full = c + 32 <= depth;  // else 16 channels
      __m256i acc = lowest;
      for (int32_t y = 0; y < w.rows; ++y) {
        const uint8_t* in = w.first + y * w.row_pitch + c;
        for (int32_t x = 0; x < w.cols; ++x, in += w.pixel_pitch) {
          const __m256i v =
              full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in))
                   : _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
          acc = MaxBytes<kSigned>(acc, v);
        }
      }
      const __m256i v = MinBytes<kSigned>(MaxBytes<kSigned>(acc, lo), hi);
      if (full) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + c), v);
      } else {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), _mm256_castsi256_si128(v));
        c -= 16;
      }
    }
    for (; c < depth; ++c) {
      int32_t m = kSigned ? -128 : 0;
      for (int32_t y = 0; y < w.rows; ++y) {
        const uint8_t* in = w.first + y * w.row_pitch + c;
        for (int32_t x = 0; x < w.cols; ++x, in += w.pixel_pitch)
          m = std::max(m, kSigned ? int32_t{static_cast<int8_t>(*in)} : int32_t{*in});
      }
      out[c] = static_cast<uint8_t>(std::min(std::max(m, act_min), act_max));
    }
  }
};

// std::min(std::max(v, lo), hi) per lane, NaN and signed zeros included:
// maxps/minps return their second operand when either is NaN or both are zero.
DLG_TARGET_AVX2 inline __m256 ClampLikeStd(__m256 v, __m256 lo, __m256 hi) {
  return _mm256_min_ps(hi, _mm256_max_ps(lo, v));
}

struct AveragePoolFloatKernel {
  int32_t depth;
  float act_min, act_max;
  DLG_TARGET_AVX2 void Pixel(float* out, const Window<float>& w) const {
    const __m256 lo = _mm256_set1_ps(act_min), hi = _mm256_set1_ps(act_max);
    const float divisor = static_cast<float>(w.count);
    const __m256 divisor8 = _mm256_set1_ps(divisor);
    int32_t c = 0;
    for (; c + 8 <= depth; c += 8) {
      // In the reference's (y, x) order from +0, per lane.
      __m256 acc = _mm256_setzero_ps();
      for (int32_t y = 0; y < w.rows; ++y) {
        const float* in = w.first + y * w.row_pitch + c;
        for (int32_t x = 0; x < w.cols; ++x, in += w.pixel_pitch)
          acc = _mm256_add_ps(acc, _mm256_loadu_ps(in));
      }
      _mm256_storeu_ps(out + c, ClampLikeStd(_mm256_div_ps(acc, divisor8), lo, hi));
    }
    for (; c < depth; ++c) {
      float sum = 0.0f;
      for (int32_t y = 0; y < w.rows; ++y) {
        const float* in = w.first + y * w.row_pitch + c;
        for (int32_t x = 0; x < w.cols; ++x, in += w.pixel_pitch) sum += *in;
      }
      out[c] = std::min(std::max(sum / divisor, act_min), act_max);
    }
  }
};

struct MaxPoolFloatKernel {
  int32_t depth;
  float act_min, act_max;
  DLG_TARGET_AVX2 void Pixel(float* out, const Window<float>& w) const {
    const __m256 lo = _mm256_set1_ps(act_min), hi = _mm256_set1_ps(act_max);
    int32_t c = 0;
    for (; c + 8 <= depth; c += 8) {
      __m256 acc = _mm256_set1_ps(std::numeric_limits<float>::lowest());
      for (int32_t y = 0; y < w.rows; ++y) {
        const float* in = w.first + y * w.row_pitch + c;
        // std::max(acc, in): maxps(in, acc) returns acc for a NaN input and for equal zeros.
        for (int32_t x = 0; x < w.cols; ++x, in += w.pixel_pitch)
          acc = _mm256_max_ps(_mm256_loadu_ps(in), acc);
      }
      _mm256_storeu_ps(out + c, ClampLikeStd(acc, lo, hi));
    }
    for (; c < depth; ++c) {
      float m = std::numeric_limits<float>::lowest();
      for (int32_t y = 0; y < w.rows; ++y) {
        const float* in = w.first + y * w.row_pitch + c;
        for (int32_t x = 0; x < w.cols; ++x, in += w.pixel_pitch) m = std::max(m, *in);
      }
      out[c] = std::min(std::max(m, act_min), act_max);
    }
  }
};

// The 8-bit kernels for int8 or uint8 data.
template <template <bool> class Kernel>
void Run8(const reference::PoolGeometry& g, bool is_signed, const uint8_t* input,
          int32_t act_min, int32_t act_max, uint8_t* output, int64_t row_begin, int64_t row_end) {
  if (is_signed) {
    Kernel<true> k{g.depth, act_min, act_max};
    ForEachWindow(g, input, output, row_begin, row_end, k);
  } else {
    Kernel<false> k{g.depth, act_min, act_max};
    ForEachWindow(g, input, output, row_begin, row_end, k);
  }
}

}  // namespace
#endif  // DELEGATO_X86

void AveragePool8(const reference::PoolGeometry& g, bool is_signed, const uint8_t* input,
                  int32_t act_min, int32_t act_max, uint8_t* output, int64_t row_begin,
                  int64_t row_end) {
#if DELEGATO_X86
  Run8<AveragePool8Kernel>(g, is_signed, input, act_min, act_max, output, row_begin, row_end);
#else
  if (is_signed)
    reference::AveragePoolQuantized(g, reinterpret_cast<const int8_t*>(input), act_min, act_max,
                                    reinterpret_cast<int8_t*>(output), row_begin, row_end);
  else
    reference::AveragePoolQuantized(g, input, act_min, act_max, output, row_begin, row_end);
#endif
}

void MaxPool8(const reference::PoolGeometry& g, bool is_signed, const uint8_t* input,
              int32_t act_min, int32_t act_max, uint8_t* output, int64_t row_begin,
              int64_t row_end) {
#if DELEGATO_X86
  Run8<MaxPool8Kernel>(g, is_signed, input, act_min, act_max, output, row_begin, row_end);
#else
  if (is_signed)
    reference::MaxPoolQuantized(g, reinterpret_cast<const int8_t*>(input), act_min, act_max,
                                reinterpret_cast<int8_t*>(output), row_begin, row_end);
  else
    reference::MaxPoolQuantized(g, input, act_min, act_max, output, row_begin, row_end);
#endif
}

void AveragePoolFloat(const reference::PoolGeometry& g, const float* input, float act_min,
                      float act_max, float* output, int64_t row_begin, int64_t row_end) {
#if DELEGATO_X86
  AveragePoolFloatKernel k{g.depth, act_min, act_max};
  ForEachWindow(g, input, output, row_begin, row_end, k);
#else
  reference::AveragePoolFloat(g, input, act_min, act_max, output, row_begin, row_end);
#endif
}

void MaxPoolFloat(const reference::PoolGeometry& g, const float* input, float act_min,
                  float act_max, float* output, int64_t row_begin, int64_t row_end) {
#if DELEGATO_X86
  MaxPoolFloatKernel k{g.depth, act_min, act_max};
  ForEachWindow(g, input, output, row_begin, row_end, k);
#else
  reference::MaxPoolFloat(g, input, act_min, act_max, output, row_begin, row_end);
#endif
}

}  // namespace delegato::optimized
