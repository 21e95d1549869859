// AVERAGE_POOL_2D and MAX_POOL_2D reference kernels, bit-exact with TFLite's
// reference AveragePool/MaxPool (float, uint8) and their int8 versions.
//
// Only window positions inside the image count. Float average: sum in
// (filter_y, filter_x) order divided by the float count. Quantized average:
// the exact integer sum rounded to nearest with halves away from zero,
//   acc > 0 ? (acc + count/2) / count : (acc - count/2) / count
// (for uint8, whose sums are never negative, the same as TFLite's
// (acc + count/2) / count). Max starts from the type's lowest value. Both then
// clamp to the activation range; quantized outputs keep the input's scale and
// zero point (no requantization, as in TFLite).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace delegato::reference {

struct PoolGeometry {
  int32_t batches = 0;
  int32_t input_height = 0, input_width = 0, depth = 0;
  int32_t filter_height = 1, filter_width = 1;
  int32_t stride_height = 1, stride_width = 1;
  int32_t pad_height = 0, pad_width = 0;
  int32_t output_height = 0, output_width = 0;

  int64_t output_rows() const { return static_cast<int64_t>(batches) * output_height; }
};

// The clipped window [begin, end) along one dimension for output index `out`.
struct PoolSpan {
  int32_t begin = 0, end = 0;
};
inline PoolSpan PoolWindow(int32_t out, int32_t stride, int32_t pad, int32_t filter,
                           int32_t in_size) {
  const int32_t origin = out * stride - pad;
  return PoolSpan{std::max(0, -origin) + origin, std::min(filter, in_size - origin) + origin};
}

// True when some output window contains no input position (TFLite fails such
// an average pool at Eval; the glue rejects it in Prepare).
inline bool PoolHasEmptyWindow(const PoolGeometry& g) {
  for (int32_t y = 0; y < g.output_height; ++y) {
    const PoolSpan s = PoolWindow(y, g.stride_height, g.pad_height, g.filter_height, g.input_height);
    if (s.end <= s.begin) return true;
  }
  for (int32_t x = 0; x < g.output_width; ++x) {
    const PoolSpan s = PoolWindow(x, g.stride_width, g.pad_width, g.filter_width, g.input_width);
    if (s.end <= s.begin) return true;
  }
  return false;
}

namespace detail {

// Calls fn(out_pixel, window_pixel_count, for_each_input_pixel) per output
// pixel of rows [row_begin, row_end); for_each_input_pixel(visit) visits the
// window's input pixels (pointers to `depth` values) in (y, x) order.
template <class T, class Out, class Fn>
inline void ForEachPoolOutput(const PoolGeometry& g, const T* input, Out* output,
                              int64_t row_begin, int64_t row_end, Fn&& fn) {
  const size_t depth = g.depth;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const PoolSpan ys =
        PoolWindow(out_y, g.stride_height, g.pad_height, g.filter_height, g.input_height);
    const T* batch_input =
        input + static_cast<size_t>(batch) * g.input_height * g.input_width * depth;
    for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
      const PoolSpan xs =
          PoolWindow(out_x, g.stride_width, g.pad_width, g.filter_width, g.input_width);
      const int32_t count = std::max(0, ys.end - ys.begin) * std::max(0, xs.end - xs.begin);
      Out* out = output + (static_cast<size_t>(row) * g.output_width + out_x) * depth;
      fn(out, count, [&](auto&& visit) {
        for (int32_t y = ys.begin; y < ys.end; ++y)
          for (int32_t x = xs.begin; x < xs.end; ++x)
            visit(batch_input + (static_cast<size_t>(y) * g.input_width + x) * depth);
      });
    }
  }
}

}  // namespace detail

// Float average pool of output rows [row_begin, row_end) (a row is one
// (batch, out_y) pair). Every window must be non-empty.
inline void AveragePoolFloat(const PoolGeometry& g, const float* input, float act_min,
                             float act_max, float* output, int64_t row_begin, int64_t row_end) {
  const int32_t depth = g.depth;
  detail::ForEachPoolOutput(g, input, output, row_begin, row_end,
                            [&](float* out, int32_t count, auto&& for_each_pixel) {
                              // The output pixel doubles as the per-channel accumulator.
                              for (int32_t c = 0; c < depth; ++c) out[c] = 0.0f;
                              for_each_pixel([&](const float* in) {
                                for (int32_t c = 0; c < depth; ++c) out[c] += in[c];
                              });
                              const float divisor = static_cast<float>(count);
                              for (int32_t c = 0; c < depth; ++c)
                                out[c] = std::min(std::max(out[c] / divisor, act_min), act_max);
                            });
}

// Quantized (uint8, int8 or int16) average pool of output rows [row_begin, row_end).
// Every window must be non-empty.
template <class T>
void AveragePoolQuantized(const PoolGeometry& g, const T* input, int32_t act_min,
                          int32_t act_max, T* output, int64_t row_begin, int64_t row_end) {
  constexpr int kBlock = 64;
  int64_t acc[kBlock];
  const int32_t depth = g.depth;
  detail::ForEachPoolOutput(
      g, input, output, row_begin, row_end, [&](T* out, int32_t count, auto&& for_each_pixel) {
        for (int32_t block = 0; block < depth; block += kBlock) {
          const int n = std::min(kBlock, depth - block);
          for (int j = 0; j < n; ++j) acc[j] = 0;
          for_each_pixel([&](const T* in) {
            for (int j = 0; j < n; ++j) acc[j] += in[block + j];
          });
          for (int j = 0; j < n; ++j) {
            const int64_t sum = acc[j];
            int64_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
            avg = std::min<int64_t>(std::max<int64_t>(avg, act_min), act_max);
            out[block + j] = static_cast<T>(avg);
          }
        }
      });
}

// Float max pool of output rows [row_begin, row_end). An empty window gives
// the lowest float, clamped by the activation.
inline void MaxPoolFloat(const PoolGeometry& g, const float* input, float act_min, float act_max,
                         float* output, int64_t row_begin, int64_t row_end) {
  const int32_t depth = g.depth;
  detail::ForEachPoolOutput(g, input, output, row_begin, row_end,
                            [&](float* out, int32_t, auto&& for_each_pixel) {
                              for (int32_t c = 0; c < depth; ++c)
                                out[c] = std::numeric_limits<float>::lowest();
                              for_each_pixel([&](const float* in) {
                                for (int32_t c = 0; c < depth; ++c)
                                  out[c] = std::max(out[c], in[c]);
                              });
                              for (int32_t c = 0; c < depth; ++c)
                                out[c] = std::min(std::max(out[c], act_min), act_max);
                            });
}

// Quantized (uint8, int8 or int16) max pool of output rows [row_begin, row_end).
template <class T>
void MaxPoolQuantized(const PoolGeometry& g, const T* input, int32_t act_min, int32_t act_max,
                      T* output, int64_t row_begin, int64_t row_end) {
  const int32_t depth = g.depth;
  const T lo = static_cast<T>(act_min);
  const T hi = static_cast<T>(act_max);
  detail::ForEachPoolOutput(g, input, output, row_begin, row_end,
                            [&](T* out, int32_t, auto&& for_each_pixel) {
                              for (int32_t c = 0; c < depth; ++c)
                                out[c] = std::numeric_limits<T>::lowest();
                              for_each_pixel([&](const T* in) {
                                for (int32_t c = 0; c < depth; ++c)
                                  out[c] = std::max(out[c], in[c]);
                              });
                              for (int32_t c = 0; c < depth; ++c)
                                out[c] = std::min(std::max(out[c], lo), hi);
                            });
}

}  // namespace delegato::reference
