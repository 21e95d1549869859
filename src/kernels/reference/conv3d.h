// CONV_3D and CONV_3D_TRANSPOSE reference kernels (float32), in the summation
// order of TFLite's reference Conv3D / Conv3DTranspose.
//
// Layouts: input and output NDHWC. CONV_3D's filter is
// [depth][height][width][in_channel][out_channel]; CONV_3D_TRANSPOSE's is
// [depth][height][width][out_channel][in_channel].
//
// CONV_3D gathers: each output sums input * filter over (filter_d, filter_y,
// filter_x, in_channel), skipping taps outside the input, then adds the bias
// and clamps. CONV_3D_TRANSPOSE scatters: every input value times each tap is
// added to the output position it reaches, visiting inputs in (batch, d, y, x,
// in_channel) order and taps in (filter_d, filter_y, filter_x, out_channel)
// order; the bias and the clamp come last.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace delegato::reference {

struct Conv3DGeometry {
  int32_t batches = 0;
  int32_t input_depth = 0, input_height = 0, input_width = 0, input_channels = 0;
  int32_t filter_depth = 0, filter_height = 0, filter_width = 0;
  int32_t output_depth = 0, output_height = 0, output_width = 0, output_channels = 0;
  int32_t stride_depth = 1, stride_height = 1, stride_width = 1;
  int32_t dilation_depth = 1, dilation_height = 1, dilation_width = 1;
  int32_t pad_depth = 0, pad_height = 0, pad_width = 0;
};

inline void Conv3DFloat(const Conv3DGeometry& g, const float* input, const float* filter,
                        const float* bias, float act_min, float act_max, float* output) {
  const size_t in_c = static_cast<size_t>(g.input_channels);
  const size_t out_c = static_cast<size_t>(g.output_channels);
  for (int32_t b = 0; b < g.batches; ++b) {
    for (int32_t od = 0; od < g.output_depth; ++od) {
      const int32_t in_d0 = od * g.stride_depth - g.pad_depth;
      for (int32_t oy = 0; oy < g.output_height; ++oy) {
        const int32_t in_y0 = oy * g.stride_height - g.pad_height;
        for (int32_t ox = 0; ox < g.output_width; ++ox) {
          const int32_t in_x0 = ox * g.stride_width - g.pad_width;
          float* out = output + ((((static_cast<size_t>(b) * g.output_depth + od) *
                                       g.output_height + oy) * g.output_width + ox) * out_c);
          for (size_t oc = 0; oc < out_c; ++oc) {
            float total = 0.0f;
            for (int32_t fd = 0; fd < g.filter_depth; ++fd) {
              const int32_t in_d = in_d0 + fd * g.dilation_depth;
              if (in_d < 0 || in_d >= g.input_depth) continue;
              for (int32_t fy = 0; fy < g.filter_height; ++fy) {
                const int32_t in_y = in_y0 + fy * g.dilation_height;
                if (in_y < 0 || in_y >= g.input_height) continue;
                for (int32_t fx = 0; fx < g.filter_width; ++fx) {
                  const int32_t in_x = in_x0 + fx * g.dilation_width;
                  if (in_x < 0 || in_x >= g.input_width) continue;
                  const float* in = input + ((((static_cast<size_t>(b) * g.input_depth + in_d) *
                                                   g.input_height + in_y) * g.input_width + in_x) *
                                             in_c);
                  const float* f = filter + (((static_cast<size_t>(fd) * g.filter_height + fy) *
                                                  g.filter_width + fx) * in_c) * out_c + oc;
                  for (size_t ic = 0; ic < in_c; ++ic) total += in[ic] * f[ic * out_c];
                }
              }
            }
            const float value = total + (bias != nullptr ? bias[oc] : 0.0f);
            out[oc] = std::min(std::max(value, act_min), act_max);
          }
        }
      }
    }
  }
}

inline void Conv3DTransposeFloat(const Conv3DGeometry& g, const float* input, const float* filter,
                                 const float* bias, float act_min, float act_max, float* output) {
  const size_t in_c = static_cast<size_t>(g.input_channels);
  const size_t out_c = static_cast<size_t>(g.output_channels);
  const size_t out_size = static_cast<size_t>(g.batches) * g.output_depth * g.output_height *
                          g.output_width * out_c;
  std::fill(output, output + out_size, 0.0f);
  for (int32_t b = 0; b < g.batches; ++b) {
    for (int32_t id = 0; id < g.input_depth; ++id) {
      const int32_t out_d0 = id * g.stride_depth - g.pad_depth;
      for (int32_t iy = 0; iy < g.input_height; ++iy) {
        const int32_t out_y0 = iy * g.stride_height - g.pad_height;
        for (int32_t ix = 0; ix < g.input_width; ++ix) {
          const int32_t out_x0 = ix * g.stride_width - g.pad_width;
          const float* in = input + ((((static_cast<size_t>(b) * g.input_depth + id) *
                                           g.input_height + iy) * g.input_width + ix) * in_c);
          for (size_t ic = 0; ic < in_c; ++ic) {
            const float value = in[ic];
            for (int32_t fd = 0; fd < g.filter_depth; ++fd) {
              const int32_t out_d = out_d0 + fd * g.dilation_depth;
              if (out_d < 0 || out_d >= g.output_depth) continue;
              for (int32_t fy = 0; fy < g.filter_height; ++fy) {
                const int32_t out_y = out_y0 + fy * g.dilation_height;
                if (out_y < 0 || out_y >= g.output_height) continue;
                for (int32_t fx = 0; fx < g.filter_width; ++fx) {
                  const int32_t out_x = out_x0 + fx * g.dilation_width;
                  if (out_x < 0 || out_x >= g.output_width) continue;
                  float* out = output + ((((static_cast<size_t>(b) * g.output_depth + out_d) *
                                               g.output_height + out_y) * g.output_width + out_x) *
                                         out_c);
                  const float* f = filter + (((static_cast<size_t>(fd) * g.filter_height + fy) *
                                                  g.filter_width + fx) * out_c) * in_c + ic;
                  for (size_t oc = 0; oc < out_c; ++oc) out[oc] += value * f[oc * in_c];
                }
              }
            }
          }
        }
      }
    }
  }
  for (size_t i = 0; i < out_size; i += out_c) {
    for (size_t oc = 0; oc < out_c; ++oc) {
      const float value = output[i + oc] + (bias != nullptr ? bias[oc] : 0.0f);
      output[i + oc] = std::min(std::max(value, act_min), act_max);
    }
  }
}

}  // namespace delegato::reference
