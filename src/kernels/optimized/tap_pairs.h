// Weights [n][k] in the layout of the 16-bit multiply-add GEMMs (vpmaddwd,
// NEON widening pairs): [ceil(n / kBlock)][ceil(k / 2)][kBlock][2], two
// adjacent taps of a channel side by side, each value w - zero_point. Used by
// the AVX2 int8 GEMM (QuantConv), int16x8 CONV_2D / FULLY_CONNECTED and the
// dynamic-range GEMM.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace delegato::optimized {

// Writes every entry of real channels and taps in destination order, reading
// a block's kBlock source rows while they stay in cache (channel by channel,
// each value landed on another cache line). Padding entries (a last odd tap's
// partner, channels past n) are not written: dst must be zeroed.
template <int kBlock, class Dst, class Src>
void PackTapPairs(const Src* filter, int n, int k, int32_t zero_point, Dst* dst) {
  for (int c0 = 0; c0 < n; c0 += kBlock) {
    const int channels = std::min(kBlock, n - c0);
    for (int t = 0; t < k; t += 2, dst += 2 * kBlock) {
      for (int j = 0; j < channels; ++j) {
        const Src* src = filter + static_cast<size_t>(c0 + j) * k + t;
        dst[2 * j] = static_cast<Dst>(int32_t{src[0]} - zero_point);
        if (t + 1 < k) dst[2 * j + 1] = static_cast<Dst>(int32_t{src[1]} - zero_point);
      }
    }
  }
}

}  // namespace delegato::optimized
