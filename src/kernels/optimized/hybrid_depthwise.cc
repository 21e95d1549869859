#include "kernels/optimized/hybrid_depthwise.h"

#include <algorithm>

#if DELEGATO_X86
#include <immintrin.h>
#endif

namespace delegato::optimized {

namespace {

// One channel, as the reference computes it.
inline float ChannelOutput(int32_t acc, float channel_scale, float image_scale, const float* bias,
                           int32_t c, float act_min, float act_max) {
  float v = static_cast<float>(acc);
  v *= channel_scale * image_scale;
  if (bias != nullptr) v += bias[c];
  return std::min(std::max(v, act_min), act_max);
}

#if DELEGATO_X86
DLG_TARGET_AVX2 void PixelAvx2(const reference::DepthwiseGeometry& g, const int8_t* image,
                               int32_t zero_point, float image_scale, const int32_t* weights,
                               const float* channel_scales, const float* bias, float act_min,
                               float act_max, int32_t out_y, int32_t out_x, float* out) {
  const int32_t depth = g.input_depth;
  const int32_t y0 = out_y * g.stride_height - g.pad_height;
  const int32_t x0 = out_x * g.stride_width - g.pad_width;
  // The valid taps of this pixel, once for all channel groups.
  int32_t taps[64];
  const int8_t* pixels[64];
  int count = 0;
  for (int32_t fy = 0; fy < g.filter_height; ++fy) {
    const int32_t y = y0 + g.dilation_height * fy;
    if (y < 0 || y >= g.input_height) continue;
    for (int32_t fx = 0; fx < g.filter_width; ++fx) {
      const int32_t x = x0 + g.dilation_width * fx;
      if (x < 0 || x >= g.input_width) continue;
      taps[count] = fy * g.filter_width + fx;
      pixels[count] = image + (static_cast<size_t>(y) * g.input_width + x) * depth;
      ++count;
    }
  }
  const __m256i zp = _mm256_set1_epi32(zero_point);
  const __m256 scale = _mm256_set1_ps(image_scale);
  const __m256 lo = _mm256_set1_ps(act_min), hi = _mm256_set1_ps(act_max);
  int32_t c = 0;
  for (; c + 8 <= depth; c += 8) {
    __m256i acc = _mm256_setzero_si256();
    for (int t = 0; t < count; ++t) {
      const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(pixels[t] + c));
      const __m256i x = _mm256_sub_epi32(_mm256_cvtepi8_epi32(bytes), zp);
      const __m256i w = _mm256_load_si256(
          reinterpret_cast<const __m256i*>(weights + static_cast<size_t>(taps[t]) * g.output_depth + c));
      acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(x, w));
    }
    // float(acc) * (channel_scale * image_scale) + bias, then max(lo, .) and
    // min(hi, .) in the operand order of std::max(v, lo) / std::min(v, hi).
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc),
                             _mm256_mul_ps(_mm256_loadu_ps(channel_scales + c), scale));
    if (bias != nullptr) v = _mm256_add_ps(v, _mm256_loadu_ps(bias + c));
    v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
    _mm256_storeu_ps(out + c, v);
  }
  for (; c < depth; ++c) {
    int32_t acc = 0;
    for (int t = 0; t < count; ++t)
      acc += weights[static_cast<size_t>(taps[t]) * g.output_depth + c] *
             (int32_t{pixels[t][c]} - zero_point);
    out[c] = ChannelOutput(acc, channel_scales[c], image_scale, bias, c, act_min, act_max);
  }
}
#endif

}  // namespace

HybridDepthwiseKernel::HybridDepthwiseKernel(const reference::DepthwiseGeometry& g,
                                             const int8_t* filter, const float* channel_scales,
                                             float act_min, float act_max, Isa isa)
    : g_(g), channel_scales_(channel_scales), act_min_(act_min), act_max_(act_max) {
  // Vector variant on AVX2 and AVX-512 CPUs when every pixel's taps fit the
  // kernel's tap list; otherwise the per-lane loop.
  const bool vector = (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni) && DELEGATO_X86 &&
                      g.filter_height * g.filter_width <= 64;
  isa_ = vector ? Isa::kAvx2 : Isa::kScalar;
  const size_t depth = g.output_depth;
  // Rows padded to 8 channels so vector loads stay aligned per tap.
  g_.output_depth = static_cast<int32_t>(RoundUp(depth, 8));
  weights_.Resize(static_cast<size_t>(g.filter_height) * g.filter_width * g_.output_depth);
  for (size_t tap = 0; tap < static_cast<size_t>(g.filter_height) * g.filter_width; ++tap)
    for (size_t c = 0; c < depth; ++c) weights_[tap * g_.output_depth + c] = filter[tap * depth + c];
}

void HybridDepthwiseKernel::Run(const int8_t* quantized, const float* scales,
                                const int32_t* zero_points, const float* bias, float* output,
                                int64_t row_begin, int64_t row_end) const {
  const reference::DepthwiseGeometry& g = g_;
  const int32_t depth = g.input_depth;
  const size_t image_size = static_cast<size_t>(g.input_height) * g.input_width * depth;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const int8_t* image = quantized + batch * image_size;
    for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
      float* out = output + (static_cast<size_t>(row) * g.output_width + out_x) * depth;
#if DELEGATO_X86
      if (isa_ == Isa::kAvx2) {
        PixelAvx2(g, image, zero_points[batch], scales[batch], weights_.data(), channel_scales_,
                  bias, act_min_, act_max_, out_y, out_x, out);
        continue;
      }
#endif
      for (int32_t c = 0; c < depth; ++c) {
        int32_t acc = 0;
        reference::detail::ForEachDepthwiseTap(g, image, out_y, out_x,
                                               [&](int32_t tap, const int8_t* in) {
          acc += weights_[static_cast<size_t>(tap) * g.output_depth + c] *
                 (int32_t{in[c]} - zero_points[batch]);
        });
        out[c] = ChannelOutput(acc, channel_scales_[c], scales[batch], bias, c, act_min_,
                               act_max_);
      }
    }
  }
}

}  // namespace delegato::optimized
