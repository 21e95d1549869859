// RESIZE_BILINEAR (uint8 / int8 / float32) and 8-bit ARG_MAX / ARG_MIN against the
// reference kernels, bit for bit, on every ISA this CPU runs: deeplab's
// 33x33 -> 513x513 map, rows computed one at a time in reverse order (a row
// that wrote past its end would corrupt the row after it), small depths and
// widths around the vector width, and every class count 1..64 with ties at
// the byte extremes.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/arg_minmax.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/resize_bilinear.h"
#include "kernels/reference/arg_minmax.h"
#include "kernels/reference/resize.h"
#include "test_util.h"

namespace delegato {
namespace {

using optimized::Isa;
using testing::SupportedIsas;

template <class T>
std::vector<T> Values(std::mt19937& rng, size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_same_v<T, float>)
      x = std::uniform_real_distribution<float>(-300.0f, 300.0f)(rng);
    else if constexpr (std::is_same_v<T, int8_t>)
      x = static_cast<T>(rng() % 4 == 0 ? (rng() % 2 ? 127 : -128) : rng());  // extremes often
    else
      x = static_cast<T>(rng() % 4 == 0 ? (rng() % 2 ? 255 : 0) : rng());
  }
  return v;
}

// Runs rows one by one from the last (reverse = true) or in two uneven parts.
template <class T>
void CheckResize(const reference::ResizeGeometry& g, std::mt19937& rng, bool reverse,
                 const std::string& what) {
  const auto type = std::is_same_v<T, float>    ? optimized::ResizeBilinear::Type::kFloat32
                    : std::is_same_v<T, int8_t> ? optimized::ResizeBilinear::Type::kInt8
                                                : optimized::ResizeBilinear::Type::kUInt8;
  const auto input =
      Values<T>(rng, static_cast<size_t>(g.batches) * g.input_height * g.input_width * g.depth);
  std::vector<T> expected(static_cast<size_t>(g.batches) * g.output_height * g.output_width *
                          g.depth);
  if constexpr (std::is_same_v<T, int8_t>)
    reference::ResizeBilinearFixed(g, input.data(), expected.data());
  else
    reference::ResizeBilinearFloat(g, input.data(), expected.data());
  for (Isa isa : SupportedIsas()) {
    const optimized::ResizeBilinear r(type, g, isa);
    if (std::is_same_v<T, uint8_t> && (isa == Isa::kAvx2 || optimized::IsArmIsa(isa)) &&
        g.align_corners &&
        g.input_width == 33 && g.output_width == 513) {
      EXPECT_TRUE(r.sixteenths()) << what;  // deeplab's scale is 1/16: the integer path
    }
    if (std::is_same_v<T, int8_t> &&
        (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni || optimized::IsArmIsa(isa)) &&
        g.half_pixel_centers &&
        g.output_width == 2 * g.input_width && g.output_height == 2 * g.input_height) {
      EXPECT_TRUE(r.sixteenths()) << what;  // 2x upsampling: weights 1/4 and 3/4
    }
    std::vector<T> out(expected.size(), T{7});
    const int64_t rows = r.rows();
    if (reverse) {
      for (int64_t row = rows - 1; row >= 0; --row) r.RunRows(row, row + 1, input.data(), out.data());
    } else {
      const int64_t split = rows / 3;
      r.RunRows(split, rows, input.data(), out.data());
      r.RunRows(0, split, input.data(), out.data());
    }
    ASSERT_EQ(0, std::memcmp(expected.data(), out.data(), out.size() * sizeof(T)))
        << what << " " << optimized::IsaName(isa);
  }
}

TEST(OptimizedResizeArgMaxTest, DeeplabResize) {
  std::mt19937 rng(5);
  for (bool align : {true, false}) {
    const reference::ResizeGeometry g{1, 33, 33, 21, 513, 513, align, false};
    CheckResize<uint8_t>(g, rng, false, align ? "uint8 aligned" : "uint8");
    CheckResize<float>(g, rng, false, align ? "float aligned" : "float");
  }
}

TEST(OptimizedResizeArgMaxTest, ResizeRowEnds) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 600; ++trial) {
    reference::ResizeGeometry g;
    g.batches = 1 + rng() % 2;
    g.input_height = 1 + rng() % 6;
    g.input_width = 1 + rng() % 9;
    g.depth = 1 + rng() % 26;
    g.output_height = 1 + rng() % 7;
    g.output_width = 1 + rng() % 12;
    const int mode = rng() % 3;
    g.align_corners = mode == 1;
    g.half_pixel_centers = mode == 2;
    const std::string what = "trial " + std::to_string(trial);
    CheckResize<uint8_t>(g, rng, true, what + " uint8");
    CheckResize<int8_t>(g, rng, true, what + " int8");
    CheckResize<float>(g, rng, true, what + " float");
  }
}

TEST(OptimizedResizeArgMaxTest, Int8Upsampling) {
  // The encoder-decoder's 16x16x8 -> 32x32x8, and depths around the 8- and
  // 16-lane vectors, in every sampling mode; float32 too (whole vectors and
  // masked channel tails, the last pixel of the last row included).
  std::mt19937 rng(11);
  for (int trial = 0; trial < 24; ++trial) {
    const int depth = std::vector<int>{8, 7, 9, 16, 17, 24, 1, 33}[trial % 8];
    const int mode = trial % 3;
    const reference::ResizeGeometry g{1, 16, 16, depth, 32, 32, mode == 1, mode == 2};
    CheckResize<int8_t>(g, rng, trial % 2 == 0, "int8 depth " + std::to_string(depth));
    CheckResize<float>(g, rng, trial % 2 == 0, "float depth " + std::to_string(depth));
  }
  // Every pixel at one extreme: the 16-bit path's largest magnitudes
  // (s = -32768 and 32512) and the rounding at both ends.
  for (int8_t value : {int8_t{-128}, int8_t{127}, int8_t{-1}, int8_t{1}}) {
    const reference::ResizeGeometry g{1, 5, 7, 19, 10, 14, false, true};
    const std::vector<int8_t> input(5 * 7 * 19, value);
    std::vector<int8_t> expected(10 * 14 * 19), out(expected.size());
    reference::ResizeBilinearFixed(g, input.data(), expected.data());
    for (Isa isa : SupportedIsas()) {
      const optimized::ResizeBilinear r(optimized::ResizeBilinear::Type::kInt8, g, isa);
      r.RunRows(0, r.rows(), input.data(), out.data());
      ASSERT_EQ(expected, out) << int{value} << " " << optimized::IsaName(isa);
    }
  }
}

template <class Index>
void CheckArgMinMax(const std::vector<uint8_t>& in, int64_t outer, int64_t axis, bool is_max,
                    bool is_signed, const std::string& what) {
  std::vector<Index> expected(outer);
  const int8_t* s = reinterpret_cast<const int8_t*>(in.data());
  if (is_signed && is_max) reference::ArgMinMax<int8_t, Index, true>(s, outer, axis, 1, expected.data());
  if (is_signed && !is_max) reference::ArgMinMax<int8_t, Index, false>(s, outer, axis, 1, expected.data());
  if (!is_signed && is_max) reference::ArgMinMax<uint8_t, Index, true>(in.data(), outer, axis, 1, expected.data());
  if (!is_signed && !is_max) reference::ArgMinMax<uint8_t, Index, false>(in.data(), outer, axis, 1, expected.data());
  for (Isa isa : SupportedIsas()) {
    const optimized::ArgMinMax8 k{is_max, is_signed, sizeof(Index) == 8, axis, isa};
    std::vector<Index> got(outer, Index{-1});
    // Exactly sized input: the kernel must not read past the last row.
    std::vector<uint8_t> exact(in);
    for (int64_t r = outer - 1; r >= 0; --r) k.Run(exact.data(), got.data(), r, r + 1);
    ASSERT_EQ(expected, got) << what << " " << optimized::IsaName(isa);
  }
}

TEST(OptimizedResizeArgMaxTest, ArgMinMaxEveryAxis) {
  std::mt19937 rng(11);
  for (int64_t axis = 1; axis <= 64; ++axis) {
    for (int variant = 0; variant < 8; ++variant) {
      const bool is_max = variant % 2, is_signed = (variant / 2) % 2, index64 = variant / 4;
      const int64_t outer = 1 + rng() % 50;
      std::vector<uint8_t> in(outer * axis);
      // Values drawn from a small set around both extremes: many ties.
      const uint8_t pool[] = {0, 1, 127, 128, 129, 254, 255};
      for (auto& v : in) v = rng() % 3 ? pool[rng() % 7] : static_cast<uint8_t>(rng());
      for (int64_t r = 0; r < outer; r += 4)  // some all-equal rows
        std::fill(in.begin() + r * axis, in.begin() + (r + 1) * axis, pool[rng() % 7]);
      const std::string what = "axis " + std::to_string(axis) + " variant " + std::to_string(variant);
      if (index64) CheckArgMinMax<int64_t>(in, outer, axis, is_max, is_signed, what);
      else CheckArgMinMax<int32_t>(in, outer, axis, is_max, is_signed, what);
    }
  }
}

}  // namespace
}  // namespace delegato
