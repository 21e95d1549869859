// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR on NHWC tensors, reproducing
// the index and weight arithmetic of TFLite's reference kernels:
//  - float32 and uint8 bilinear interpolate in single precision; integer
//    outputs add 0.5 and truncate;
//  - int8 and int16 bilinear use 10-bit fixed-point positions and weights and
//    round the 20-bit product half away from zero;
//  - nearest neighbour picks floor(pos) (round(pos) with align_corners).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace delegato::reference {

struct ResizeGeometry {
  int32_t batches = 0, input_height = 0, input_width = 0, depth = 0;
  int32_t output_height = 0, output_width = 0;
  bool align_corners = false;
  bool half_pixel_centers = false;
};

namespace detail {

inline float ResizeScale(int32_t input_size, int32_t output_size, bool align_corners) {
  if (align_corners && output_size > 1)
    return static_cast<float>(input_size - 1) / static_cast<float>(output_size - 1);
  return static_cast<float>(input_size) / static_cast<float>(output_size);
}

// Source position of output coordinate `value` and its two neighbours.
inline void InterpolationFloat(int32_t value, float scale, bool half_pixel_centers,
                               int32_t input_size, float* position, int32_t* lower,
                               int32_t* upper) {
  if (half_pixel_centers) {
    const float scaled = (static_cast<float>(value) + 0.5f) * scale;  // rounded before the sub
    *position = scaled - 0.5f;
  } else {
    *position = static_cast<float>(value) * scale;
  }
  *lower = std::max(static_cast<int32_t>(std::floor(*position)), int32_t{0});
  *upper = std::min(static_cast<int32_t>(std::ceil(*position)), input_size - 1);
}

inline int32_t ResizeScale10(int32_t input_size, int32_t output_size, bool align_corners) {
  if (align_corners && output_size > 1)
    return ((1 << 10) * (input_size - 1) + (output_size - 1) / 2) / (output_size - 1);
  return ((1 << 10) * input_size + output_size / 2) / output_size;
}

// Same in 10-bit fixed point; the divisions truncate toward zero as in C.
inline void InterpolationFixed(int32_t value, int32_t scale_10, bool half_pixel_centers,
                               int32_t input_size, int32_t* position, int32_t* lower,
                               int32_t* upper) {
  *position = half_pixel_centers ? value * scale_10 + scale_10 / 2 - (1 << 9) : value * scale_10;
  *lower = std::max(*position / (1 << 10), int32_t{0});
  *upper = std::min((*position + (1 << 10) - 1) / (1 << 10), input_size - 1);
}

}  // namespace detail

// float32 and uint8.
template <class T>
void ResizeBilinearFloat(const ResizeGeometry& g, const T* input, T* output) {
  const float height_scale =
      detail::ResizeScale(g.input_height, g.output_height, g.align_corners);
  const float width_scale = detail::ResizeScale(g.input_width, g.output_width, g.align_corners);
  const float rounding = std::numeric_limits<T>::is_integer ? 0.5f : 0.0f;
  const int64_t row = static_cast<int64_t>(g.input_width) * g.depth;
  for (int32_t b = 0; b < g.batches; ++b) {
    const T* image = input + static_cast<int64_t>(b) * g.input_height * row;
    for (int32_t y = 0; y < g.output_height; ++y) {
      float in_y;
      int32_t y0, y1;
      detail::InterpolationFloat(y, height_scale, g.half_pixel_centers, g.input_height, &in_y,
                                 &y0, &y1);
      const float dy = in_y - static_cast<float>(y0);
      for (int32_t x = 0; x < g.output_width; ++x) {
        float in_x;
        int32_t x0, x1;
        detail::InterpolationFloat(x, width_scale, g.half_pixel_centers, g.input_width, &in_x,
                                   &x0, &x1);
        const float dx = in_x - static_cast<float>(x0);
        const T* p00 = image + y0 * row + x0 * g.depth;
        const T* p10 = image + y1 * row + x0 * g.depth;
        const T* p01 = image + y0 * row + x1 * g.depth;
        const T* p11 = image + y1 * row + x1 * g.depth;
        for (int32_t c = 0; c < g.depth; ++c) {
          // Evaluation order and grouping as in the reference expression;
          // one operation per statement so no compiler fuses a multiply-add.
          const float t00 = static_cast<float>(p00[c]) * (1 - dy) * (1 - dx);
          const float t10 = static_cast<float>(p10[c]) * dy * (1 - dx);
          const float t01 = static_cast<float>(p01[c]) * (1 - dy) * dx;
          const float t11 = static_cast<float>(p11[c]) * dy * dx;
          float v = t00 + t10;
          v = v + t01;
          v = v + t11;
          v = v + rounding;
          *output++ = static_cast<T>(v);
        }
      }
    }
  }
}

// int8 and int16.
template <class T>
void ResizeBilinearFixed(const ResizeGeometry& g, const T* input, T* output) {
  const int32_t height_scale_10 =
      detail::ResizeScale10(g.input_height, g.output_height, g.align_corners);
  const int32_t width_scale_10 =
      detail::ResizeScale10(g.input_width, g.output_width, g.align_corners);
  const int64_t row = static_cast<int64_t>(g.input_width) * g.depth;
  for (int32_t b = 0; b < g.batches; ++b) {
    const T* image = input + static_cast<int64_t>(b) * g.input_height * row;
    for (int32_t y = 0; y < g.output_height; ++y) {
      int32_t in_y, y0, y1;
      detail::InterpolationFixed(y, height_scale_10, g.half_pixel_centers, g.input_height, &in_y,
                                 &y0, &y1);
      const int64_t wy = in_y - (1 << 10) * y0;  // weight of row y1, 10-bit
      for (int32_t x = 0; x < g.output_width; ++x) {
        int32_t in_x, x0, x1;
        detail::InterpolationFixed(x, width_scale_10, g.half_pixel_centers, g.input_width, &in_x,
                                   &x0, &x1);
        const int64_t wx = in_x - (1 << 10) * x0;
        const T* p00 = image + y0 * row + x0 * g.depth;
        const T* p10 = image + y1 * row + x0 * g.depth;
        const T* p01 = image + y0 * row + x1 * g.depth;
        const T* p11 = image + y1 * row + x1 * g.depth;
        for (int32_t c = 0; c < g.depth; ++c) {
          const int64_t v20 = static_cast<int64_t>(p00[c]) * ((1 << 10) - wy) * ((1 << 10) - wx) +
                              static_cast<int64_t>(p10[c]) * wy * ((1 << 10) - wx) +
                              static_cast<int64_t>(p01[c]) * ((1 << 10) - wy) * wx +
                              static_cast<int64_t>(p11[c]) * wy * wx;
          const int64_t round = v20 > 0 ? (1 << 19) : -(1 << 19);
          *output++ = static_cast<T>((v20 + round) / (1 << 20));
        }
      }
    }
  }
}

inline int32_t NearestNeighborIndex(int32_t value, int32_t input_size, int32_t output_size,
                                    bool align_corners, bool half_pixel_centers) {
  const float scale = detail::ResizeScale(input_size, output_size, align_corners);
  const float offset = half_pixel_centers ? 0.5f : 0.0f;
  const float position = (static_cast<float>(value) + offset) * scale;
  int32_t index = align_corners ? static_cast<int32_t>(std::round(position))
                                : static_cast<int32_t>(std::floor(position));
  index = std::min(index, input_size - 1);
  if (half_pixel_centers) index = std::max(index, int32_t{0});
  return index;
}

// Any element type: whole pixels (depth * element_size bytes) are copied.
inline void ResizeNearestNeighbor(const ResizeGeometry& g, size_t element_size,
                                  const uint8_t* input, uint8_t* output) {
  const size_t pixel = static_cast<size_t>(g.depth) * element_size;
  const int64_t row = static_cast<int64_t>(g.input_width) * pixel;
  for (int32_t b = 0; b < g.batches; ++b) {
    const uint8_t* image = input + static_cast<int64_t>(b) * g.input_height * row;
    for (int32_t y = 0; y < g.output_height; ++y) {
      const int32_t in_y = NearestNeighborIndex(y, g.input_height, g.output_height,
                                                g.align_corners, g.half_pixel_centers);
      for (int32_t x = 0; x < g.output_width; ++x) {
        const int32_t in_x = NearestNeighborIndex(x, g.input_width, g.output_width,
                                                  g.align_corners, g.half_pixel_centers);
        if (pixel != 0) std::memcpy(output, image + in_y * row + in_x * pixel, pixel);
        output += pixel;
      }
    }
  }
}

}  // namespace delegato::reference
