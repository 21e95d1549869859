// One im2col row: the input window of output pixel (batch, oy, ox) of a
// convolution, tap by tap in (filter_y, filter_x, channel) order, padded taps
// zero (the zero point of float32 and int16x8 inputs). A filter row whose
// taps are adjacent pixels inside the image is copied as one run.
#pragma once

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
  for (int ky = 0; ky < g.filter_height; ++ky) {
    const int64_t iy = oy * g.stride_height - g.pad_height + int64_t{ky} * g.dilation_height;
    if (x_inside && g.dilation_width == 1 && iy >= 0 && iy < g.input_height) {
      std::memcpy(dst, image + (iy * g.input_width + ix0) * depth, run * sizeof(T));
      dst += run;
      continue;
    }
    for (int kx = 0; kx < g.filter_width; ++kx, dst += depth) {
      const int64_t ix = ix0 + int64_t{kx} * g.dilation_width;
      if (iy < 0 || iy >= g.input_height || ix < 0 || ix >= g.input_width)
        std::memset(dst, 0, depth * sizeof(T));
      else
        std::memcpy(dst, image + (iy * g.input_width + ix) * depth, depth * sizeof(T));
    }
  }
}

}  // namespace delegato::optimized
