// int16x8 DEPTHWISE_CONV_2D fast path (kernels/optimized/depthwise16x8)
// against reference::DepthwiseConv16x8, bit for bit: channels below, at and
// above the 16-channel block (the copied tail), odd and even tap counts,
// windows up to the 256 taps summed in int32, padding, strides, dilation,
// batches, bias or none, clamps, extreme inputs and weights, row ranges.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/depthwise16x8.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/int16x8.h"
#include "random_requant16.h"

namespace delegato {
namespace {

// The fast path's code runs on x86 with AVX2 (AVX-512 too) and on aarch64.
bool FastPathCpu() { return DELEGATO_ARM || optimized::IsaSupported(optimized::Isa::kAvx2); }
constexpr optimized::Isa kFastIsa = DELEGATO_ARM ? optimized::Isa::kNeon : optimized::Isa::kAvx2;

struct Case {
  int batches, height, width, channels, filter_h, filter_w, stride, dilation;
  bool same, bias, extreme;
  // Biases and scales of real layers (|bias| < 2^24, shifts -14..-2): the
  // requantization in 32-bit lanes; otherwise biases up to 2^40 and shifts
  // down to -30, the 64-bit one.
  bool realistic = false;
};

std::string Describe(const Case& c) {
  return std::to_string(c.batches) + "x" + std::to_string(c.height) + "x" +
         std::to_string(c.width) + "x" + std::to_string(c.channels) + " f" +
         std::to_string(c.filter_h) + "x" + std::to_string(c.filter_w) + " s" +
         std::to_string(c.stride) + " d" + std::to_string(c.dilation) +
         (c.same ? " same" : " valid") + (c.bias ? " bias" : "") + (c.extreme ? " extreme" : "") + (c.realistic ? " realistic" : "");
}

reference::DepthwiseGeometry Geometry(const Case& c) {
  reference::DepthwiseGeometry g;
  g.batches = c.batches;
  g.input_height = c.height;
  g.input_width = c.width;
  g.input_depth = g.output_depth = c.channels;
  g.filter_height = c.filter_h;
  g.filter_width = c.filter_w;
  g.stride_height = g.stride_width = c.stride;
  g.dilation_height = g.dilation_width = c.dilation;
  const reference::Window2D w = reference::ComputeWindow2D(
      c.same ? Padding::kSame : Padding::kValid, c.stride, c.stride, c.dilation, c.dilation,
      c.height, c.width, c.filter_h, c.filter_w);
  g.output_height = w.out_height;
  g.output_width = w.out_width;
  g.pad_height = w.pad_height;
  g.pad_width = w.pad_width;
  return g;
}

void Check(const Case& c, std::mt19937& rng) {
  SCOPED_TRACE(Describe(c));
  const reference::DepthwiseGeometry g = Geometry(c);
  const int taps = c.filter_h * c.filter_w;
  std::uniform_int_distribution<int> x_dist(-32768, 32767), w_dist(-128, 127);
  std::vector<int16_t> input(static_cast<size_t>(c.batches) * c.height * c.width * c.channels);
  std::vector<int8_t> filter(static_cast<size_t>(taps) * c.channels);
  for (auto& v : input) v = static_cast<int16_t>(c.extreme ? -32768 : x_dist(rng));
  for (auto& v : filter) v = static_cast<int8_t>(c.extreme ? -128 : w_dist(rng));
  const testing::Requant16Params rq =
      testing::RandomRequant16(rng, c.channels, c.realistic, c.extreme ? taps : 0);
  const std::vector<int64_t>& bias = rq.bias;
  const std::vector<int32_t>& multiplier = rq.multiplier;
  const std::vector<int32_t>& shift = rq.shift;
  reference::ConvQuantParams q;
  q.multiplier = multiplier.data();
  q.shift = shift.data();
  q.act_min = c.extreme ? -32768 : -20000;
  q.act_max = c.extreme ? 32767 : 25000;
  q.input_offset = q.output_offset = 0;
  std::vector<int16_t> packed(g.filter_elements());
  reference::PackDepthwiseFilter(g, filter.data(), 0, packed.data());
  const int64_t rows = g.output_rows();
  std::vector<int16_t> want(static_cast<size_t>(rows) * g.output_width * c.channels);
  reference::DepthwiseConv16x8(g, input.data(), packed.data(), c.bias ? bias.data() : nullptr, q,
                               want.data(), 0, rows);

  ASSERT_TRUE(optimized::Depthwise16x8::Covers(g, multiplier.data(), shift.data(),
                                               kFastIsa));
  optimized::Depthwise16x8Params p;
  p.geometry = g;
  p.filter = filter.data();
  p.bias = c.bias ? bias.data() : nullptr;
  p.multiplier = multiplier.data();
  p.shift = shift.data();
  p.act_min = q.act_min;
  p.act_max = q.act_max;
  const optimized::Depthwise16x8 fast(p);
  // Which requantization runs follows from the biases and shifts; 256
  // extreme taps (2^30) with the bias undoing them leave int32.
  const bool int32_lanes = c.realistic && !(c.extreme && taps == 256);
  ASSERT_EQ(fast.requantizes_in_int32(), int32_lanes);
  // The output in one call, and in two row ranges run last first.
  std::vector<int16_t> got(want.size(), 0x5555);
  fast.RunRows(0, rows, input.data(), got.data());
  ASSERT_EQ(got, want);
  std::fill(got.begin(), got.end(), int16_t{0x5555});
  fast.RunRows(rows / 2, rows, input.data(), got.data());
  fast.RunRows(0, rows / 2, input.data(), got.data());
  ASSERT_EQ(got, want) << "in two row ranges";
}

TEST(OptimizedDepthwise16x8Test, MatchesReference) {
  if (!FastPathCpu()) GTEST_SKIP() << "the int16x8 fast path needs AVX2 or aarch64";
  std::mt19937 rng(29);
  std::vector<Case> cases;
  for (int channels : {1, 3, 8, 15, 16, 17, 32, 40, 96})
    for (int filter : {1, 2, 3, 5})
      cases.push_back({1, 7, 6, channels, filter, filter, 1 + channels % 2, 1, channels % 3 != 0,
                       filter != 2, false});
  for (bool bias : {false, true}) {
    cases.push_back({2, 9, 11, 24, 3, 3, 2, 1, true, bias, false});  // strided, batches
    cases.push_back({1, 10, 9, 20, 3, 3, 1, 2, true, bias, false});  // dilated
    cases.push_back({1, 6, 8, 33, 1, 7, 1, 1, true, bias, false});   // a row filter, 7 taps
    cases.push_back({1, 5, 4, 18, 2, 3, 1, 1, false, bias, false});  // 6 taps, valid
  }
  // The largest window summed in int32: 16x16 = 256 taps (and 255).
  cases.push_back({1, 18, 17, 19, 16, 16, 1, 1, false, true, false});
  cases.push_back({1, 16, 16, 17, 15, 17, 1, 1, false, true, false});
  // Every product at the extreme: 256 of them sum to 2^30.
  cases.push_back({1, 16, 16, 20, 16, 16, 1, 1, false, true, true});
  cases.push_back({1, 5, 5, 37, 3, 3, 1, 1, true, true, true});
  for (const Case& c : cases) ASSERT_NO_FATAL_FAILURE(Check(c, rng));
  // The same shapes with real layers' biases and scales.
  for (Case c : cases) {
    c.realistic = true;
    ASSERT_NO_FATAL_FAILURE(Check(c, rng));
  }
}

TEST(OptimizedDepthwise16x8Test, CoversOnlyWhatItReproduces) {
  reference::DepthwiseGeometry g = Geometry({1, 20, 20, 8, 16, 16, 1, 1, false, true, false});
  std::vector<int32_t> multiplier(8, 1 << 30), shift(8, -3);
  EXPECT_TRUE(optimized::Depthwise16x8::Covers(g, multiplier.data(), shift.data(),
                                               kFastIsa));
  EXPECT_FALSE(optimized::Depthwise16x8::Covers(g, multiplier.data(), shift.data(),
                                                optimized::Isa::kScalar));
  g.filter_width = 17;  // 272 taps: the reference's 64-bit sums
  EXPECT_FALSE(optimized::Depthwise16x8::Covers(g, multiplier.data(), shift.data(),
                                                kFastIsa));
  g.filter_width = 16;
  g.output_depth = 16;  // depth multiplier 2
  g.depth_multiplier = 2;
  EXPECT_FALSE(optimized::Depthwise16x8::Covers(g, multiplier.data(), shift.data(),
                                                kFastIsa));
  g.output_depth = 8;
  g.depth_multiplier = 1;
  shift[3] = 15;  // a right shift of 0
  EXPECT_FALSE(optimized::Depthwise16x8::Covers(g, multiplier.data(), shift.data(),
                                                kFastIsa));
}

}  // namespace
}  // namespace delegato
