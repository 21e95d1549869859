// One im2col row: the input window of output pixel (batch, oy, ox) of a
// convolution, tap by tap in (filter_y, filter_x, channel) order, padded taps
// zero (the zero point of float32 and int16x8 inputs). A filter row whose
// taps are adjacent pixels is copied as one run, its padded taps at either
// end zeroed as one run each.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/reference/conv.h"

namespace delegato::optimized {

template <class T>
void GatherWindow(const reference::ConvGeometry& g, const T* input, int64_t batch, int64_t oy,
                  int64_t ox, T* dst) {
  const size_t depth = g.input_depth;
  const T* image = input + batch * g.input_height * g.input_width * depth;
  const int64_t ix0 = ox * g.stride_width - g.pad_width;
  const bool x_inside =
      ix0 >= 0 && ix0 + int64_t{g.filter_width - 1} * g.dilation_width < g.input_width;
  const size_t run = g.filter_width * depth;
  // Taps [kx_lo, kx_hi) of a filter row fall inside the image's columns.
  int64_t kx_lo = 0, kx_hi = g.filter_width;
  if (g.dilation_width == 1) {
    kx_lo = std::clamp<int64_t>(-ix0, 0, g.filter_width);
    kx_hi = std::clamp<int64_t>(g.input_width - ix0, kx_lo, g.filter_width);
  }
  for (int ky = 0; ky < g.filter_height; ++ky) {
    const int64_t iy = oy * g.stride_height - g.pad_height + int64_t{ky} * g.dilation_height;
    if (iy < 0 || iy >= g.input_height) {
      std::memset(dst, 0, run * sizeof(T));
      dst += run;
      continue;
    }
    const T* image_row = image + iy * g.input_width * depth;
    if (x_inside && g.dilation_width == 1) {
      std::memcpy(dst, image_row + ix0 * depth, run * sizeof(T));
      dst += run;
      continue;
    }
    if (g.dilation_width == 1) {
      // One zero run, one copy, one zero run (not a call per tap: a first
      // layer's taps are 3 values).
      const size_t left = kx_lo * depth, middle = (kx_hi - kx_lo) * depth;
      if (left > 0) std::memset(dst, 0, left * sizeof(T));
      std::memcpy(dst + left, image_row + (ix0 + kx_lo) * depth, middle * sizeof(T));
      if (left + middle < run) std::memset(dst + left + middle, 0, (run - left - middle) * sizeof(T));
      dst += run;
      continue;
    }
    for (int kx = 0; kx < g.filter_width; ++kx, dst += depth) {
      const int64_t ix = ix0 + int64_t{kx} * g.dilation_width;
      if (ix < 0 || ix >= g.input_width)
        std::memset(dst, 0, depth * sizeof(T));
      else
        std::memcpy(dst, image_row + ix * depth, depth * sizeof(T));
    }
  }
}

}  // namespace delegato::optimized
