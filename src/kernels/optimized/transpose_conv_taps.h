// Which input positions reach an output position of a transposed
// convolution: shared by the float and the quantized gather kernels.
#pragma once

#include <algorithm>
#include <cstdint>

namespace delegato::optimized {

struct InputRange {
  int32_t begin = 0, end = 0;
};

inline int32_t FloorDiv(int32_t a, int32_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Input positions i in [0, size) with i * stride - pad + f = out for some
// tap f in [0, taps): i in [ceil((out + pad - taps + 1) / stride),
// floor((out + pad) / stride)].
inline InputRange Contributors(int32_t out, int32_t pad, int32_t taps, int32_t stride, int32_t size) {
  InputRange r;
  r.begin = std::max(0, FloorDiv(out + pad - taps, stride) + 1);
  r.end = std::min(size, FloorDiv(out + pad, stride) + 1);
  if (r.end < r.begin) r.end = r.begin;
  return r;
}

// Whether output positions out, out + stride, ..., out + (count - 1) stride
// (all below out_size) have as contributors `first` (out's) shifted by one
// input position each: no border clips them, so they share their taps (the
// gather kernels run them together). Contributors are monotone in out, so
// checking the last suffices.
inline bool SharedTapsRun(int32_t out, int count, const InputRange& first, int32_t pad,
                          int32_t taps, int32_t stride, int32_t size, int32_t out_size) {
  const int32_t last = out + (count - 1) * stride;
  if (last >= out_size) return false;
  const InputRange r = Contributors(last, pad, taps, stride, size);
  return r.begin == first.begin + (count - 1) && r.end == first.end + (count - 1);
}

}  // namespace delegato::optimized
