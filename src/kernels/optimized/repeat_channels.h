// A depthwise layer with a depth multiplier above 1 runs a multiplier-1
// kernel on its input with every channel repeated `multiplier` times
// (output channel c reads input channel c / multiplier): float32
// (FloatDepthwise) and int16x8 (Depthwise16x8). Copies, so the same values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace delegato::optimized {

namespace repeat_detail {

// With the multiplier a constant the compiler turns the copies into vector
// shuffles (a run-time multiplier kept them one element per store).
template <class T, int kMultiplier>
void RepeatOf(const T* in, int64_t begin, int64_t end, int depth, T* out) {
  const int64_t first = begin * depth, last = end * depth;
  for (int64_t i = first; i < last; ++i)
    for (int j = 0; j < kMultiplier; ++j) out[i * kMultiplier + j] = in[i];
}

}  // namespace repeat_detail

// out[p][c] = in[p][c / multiplier] for pixels [begin, end) of `depth` input
// channels (out has depth * multiplier per pixel).
template <class T>
void RepeatChannels(const T* in, int64_t begin, int64_t end, int depth, int multiplier, T* out) {
  switch (multiplier) {
    case 2: return repeat_detail::RepeatOf<T, 2>(in, begin, end, depth, out);
    case 3: return repeat_detail::RepeatOf<T, 3>(in, begin, end, depth, out);
    case 4: return repeat_detail::RepeatOf<T, 4>(in, begin, end, depth, out);
    default: break;
  }
  const size_t out_depth = static_cast<size_t>(depth) * multiplier;
  for (int64_t px = begin; px < end; ++px) {
    const T* src = in + px * depth;
    T* dst = out + px * out_depth;
    for (int c = 0; c < depth; ++c)
      for (int j = 0; j < multiplier; ++j) *dst++ = src[c];
  }
}

// Whether the repeated image of a layer (`element` bytes per value) stays
// near the output's size (strides up to 2) and below 256 MB; otherwise the
// reference kernel runs it.
inline bool RepeatedInputFits(int64_t batches, int64_t height, int64_t width, int64_t out_depth,
                              int stride_height, int stride_width, size_t element) {
  const double bytes = static_cast<double>(batches) * height * width * out_depth * element;
  return stride_height <= 2 && stride_width <= 2 && bytes <= 256.0 * (1 << 20);
}

}  // namespace delegato::optimized
