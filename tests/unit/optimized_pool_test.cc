// The vectorized AVERAGE_POOL_2D / MAX_POOL_2D kernels (optimized/pooling.h)
// against the reference kernels, byte for byte: random geometries (windows
// clipped at every border, channel counts below, at and past the vector
// widths), extreme 8-bit values, and float inputs with NaN, infinities and
// signed zeros.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/optimized/pooling.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/pooling.h"
#include "test_util.h"

namespace delegato {
namespace {

using optimized::Isa;

reference::PoolGeometry RandomGeometry(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  reference::PoolGeometry g;
  g.batches = pick(1, 2);
  g.input_height = pick(1, 9);
  g.input_width = pick(1, 11);
  const int depths[] = {1, 3, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 48, 64, 70};
  g.depth = depths[pick(0, 15)];
  g.filter_height = pick(1, 4);
  g.filter_width = pick(1, 4);
  g.stride_height = pick(1, 3);
  g.stride_width = pick(1, 3);
  const reference::Window2D w = reference::ComputeWindow2D(
      pick(0, 1) ? Padding::kSame : Padding::kValid, g.stride_height, g.stride_width, 1, 1,
      g.input_height, g.input_width, g.filter_height, g.filter_width);
  g.output_height = std::max(1, w.out_height);
  g.output_width = std::max(1, w.out_width);
  g.pad_height = w.pad_height;
  g.pad_width = w.pad_width;
  return g;
}

size_t InputCount(const reference::PoolGeometry& g) {
  return static_cast<size_t>(g.batches) * g.input_height * g.input_width * g.depth;
}
size_t OutputCount(const reference::PoolGeometry& g) {
  return static_cast<size_t>(g.output_rows()) * g.output_width * g.depth;
}

TEST(OptimizedPoolTest, EightBitMatchesReference) {
  if (!optimized::PoolCovers(optimized::BestIsa(), reference::PoolGeometry{}))
    GTEST_SKIP() << "no vector pooling kernels on this CPU";
  std::mt19937 rng(5);
  for (int trial = 0; trial < 400; ++trial) {
    const reference::PoolGeometry g = RandomGeometry(rng);
    if (reference::PoolHasEmptyWindow(g)) continue;
    const bool is_signed = trial % 2 == 0;
    std::vector<uint8_t> in(InputCount(g));
    for (auto& v : in) v = static_cast<uint8_t>(rng());
    if (trial % 5 == 0)  // all at one extreme: the largest sums and roundings
      std::fill(in.begin(), in.end(), static_cast<uint8_t>(trial % 10 == 0 ? 0x80 : 0x7F));
    const int32_t type_lo = is_signed ? -128 : 0, type_hi = is_signed ? 127 : 255;
    int32_t act_min = type_lo, act_max = type_hi;
    if (trial % 3 == 1) {
      act_min = std::uniform_int_distribution<int32_t>(type_lo, type_hi)(rng);
      act_max = std::uniform_int_distribution<int32_t>(act_min, type_hi)(rng);
    }
    std::vector<uint8_t> want(OutputCount(g)), got(OutputCount(g), 0xCD);
    const std::string what = "trial " + std::to_string(trial) + " depth " + std::to_string(g.depth);
    const int64_t rows = g.output_rows();
    // Average.
    if (is_signed)
      reference::AveragePoolQuantized(g, reinterpret_cast<const int8_t*>(in.data()), act_min,
                                      act_max, reinterpret_cast<int8_t*>(want.data()), 0, rows);
    else
      reference::AveragePoolQuantized(g, in.data(), act_min, act_max, want.data(), 0, rows);
    optimized::AveragePool8(g, is_signed, in.data(), act_min, act_max, got.data(), rows / 2, rows);
    optimized::AveragePool8(g, is_signed, in.data(), act_min, act_max, got.data(), 0, rows / 2);
    ASSERT_EQ(want, got) << "average " << what;
    // Max.
    if (is_signed)
      reference::MaxPoolQuantized(g, reinterpret_cast<const int8_t*>(in.data()), act_min, act_max,
                                  reinterpret_cast<int8_t*>(want.data()), 0, rows);
    else
      reference::MaxPoolQuantized(g, in.data(), act_min, act_max, want.data(), 0, rows);
    std::fill(got.begin(), got.end(), 0xCD);
    optimized::MaxPool8(g, is_signed, in.data(), act_min, act_max, got.data(), 0, rows);
    ASSERT_EQ(want, got) << "max " << what;
  }
}

TEST(OptimizedPoolTest, FloatMatchesReferenceBitForBit) {
  if (!optimized::PoolCovers(optimized::BestIsa(), reference::PoolGeometry{}))
    GTEST_SKIP() << "no vector pooling kernels on this CPU";
  std::mt19937 rng(6);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 0.0f, -0.0f,
                            std::numeric_limits<float>::lowest(), 3e38f, 1e-40f};
  for (int trial = 0; trial < 400; ++trial) {
    const reference::PoolGeometry g = RandomGeometry(rng);
    if (reference::PoolHasEmptyWindow(g)) continue;
    std::vector<float> in(InputCount(g));
    for (auto& v : in) v = std::uniform_real_distribution<float>(-3.0f, 3.0f)(rng);
    for (size_t i = 0; i < in.size(); i += 1 + rng() % 13)
      if (trial % 2 == 0) in[i] = specials[rng() % 8];
    float act_min = std::numeric_limits<float>::lowest(), act_max = std::numeric_limits<float>::max();
    if (trial % 3 == 1) {
      act_min = trial % 6 == 1 ? 0.0f : -1.0f;
      act_max = 6.0f;
    }
    const int64_t rows = g.output_rows();
    std::vector<float> want(OutputCount(g)), got(OutputCount(g), 1234.5f);
    const std::string what = "trial " + std::to_string(trial) + " depth " + std::to_string(g.depth);
    reference::AveragePoolFloat(g, in.data(), act_min, act_max, want.data(), 0, rows);
    optimized::AveragePoolFloat(g, in.data(), act_min, act_max, got.data(), 0, rows);
    ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float))) << "average " << what;
    reference::MaxPoolFloat(g, in.data(), act_min, act_max, want.data(), 0, rows);
    optimized::MaxPoolFloat(g, in.data(), act_min, act_max, got.data(), 0, rows);
    ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float))) << "max " << what;
  }
}

}  // namespace
}  // namespace delegato
