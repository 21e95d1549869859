// A grouped convolution's channel slices: a group's input channels gathered
// from every pixel into a contiguous image, and its output channels
// scattered back, so that an ungrouped kernel can run each group
// (FloatGroupedConv, QuantGroupedConv).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace delegato::optimized {

// dst[p][0..run) = src[p * stride + offset ..][0..run) for `pixels` pixels;
// sizes in bytes.
inline void GatherChannels(const uint8_t* src, int64_t pixels, size_t stride, size_t offset,
                           size_t run, uint8_t* dst) {
  src += offset;
  for (int64_t px = 0; px < pixels; ++px) std::memcpy(dst + px * run, src + px * stride, run);
}

// dst[p * stride + offset ..][0..run) = src[p][0..run): GatherChannels' inverse.
inline void ScatterChannels(const uint8_t* src, int64_t pixels, size_t stride, size_t offset,
                            size_t run, uint8_t* dst) {
  dst += offset;
  for (int64_t px = 0; px < pixels; ++px) std::memcpy(dst + px * stride, src + px * run, run);
}

}  // namespace delegato::optimized
