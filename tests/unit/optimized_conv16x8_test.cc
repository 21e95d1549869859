// int16x8 CONV_2D fast path (kernels/optimized/conv16x8) against
// reference::Conv16x8, bit for bit: 1x1 read in place and gathered shapes
// (padding, strides, dilation), input channels odd and even, around a run of
// 128 pairs and beyond, output channels around the 16-channel panel, rows
// around the 4-row block, INT64 / INT32 / no bias, clamps, extreme inputs
// whose sums leave int32, 1-3 tasks. FULLY_CONNECTED (the same GEMM with
// its double-precision rescale) against reference::FullyConnected16x8.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/conv16x8.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/aligned_buffer.h"
#include "kernels/reference/int16x8.h"
#include "random_requant16.h"

namespace delegato {
namespace {

// The fast path's code runs on x86 with AVX2 (AVX-512 too) and on aarch64.
bool FastPathCpu() { return DELEGATO_ARM || optimized::IsaSupported(optimized::Isa::kAvx2); }
constexpr optimized::Isa kFastIsa = DELEGATO_ARM ? optimized::Isa::kNeon : optimized::Isa::kAvx2;

struct Case {
  int batches, height, width, in_c, out_c, filter, stride, dilation;
  bool same;
  int bias;  // 0 none, 1 INT64, 2 INT32
  bool extreme;
  // Biases and scales of real layers (|bias| < 2^24, shifts -14..-2): with
  // at most 256 products per output, int32 sums requantized in 32-bit lanes.
  // Otherwise biases up to 2^40 and shifts down to -30: the 64-bit path.
  bool realistic = false;
  int groups = 1;  // above 1: Conv16x8Grouped
};

std::string Describe(const Case& c) {
  return std::to_string(c.batches) + "x" + std::to_string(c.height) + "x" +
         std::to_string(c.width) + "x" + std::to_string(c.in_c) + "->" + std::to_string(c.out_c) +
         " f" + std::to_string(c.filter) + " s" + std::to_string(c.stride) + " d" +
         std::to_string(c.dilation) + (c.same ? " same" : " valid") + " bias" +
         std::to_string(c.bias) + (c.extreme ? " extreme" : "") + (c.realistic ? " realistic" : "") +
         (c.groups > 1 ? " groups " + std::to_string(c.groups) : "");
}

reference::ConvGeometry Geometry(const Case& c) {
  reference::ConvGeometry g;
  g.batches = c.batches;
  g.input_height = c.height;
  g.input_width = c.width;
  g.input_depth = c.in_c;
  g.filter_depth = c.in_c / c.groups;
  g.output_depth = c.out_c;
  g.filter_height = g.filter_width = c.filter;
  g.stride_height = g.stride_width = c.stride;
  g.dilation_height = g.dilation_width = c.dilation;
  const reference::Window2D w = reference::ComputeWindow2D(
      c.same ? Padding::kSame : Padding::kValid, c.stride, c.stride, c.dilation, c.dilation,
      c.height, c.width, c.filter, c.filter);
  g.output_height = w.out_height;
  g.output_width = w.out_width;
  g.pad_height = w.pad_height;
  g.pad_width = w.pad_width;
  return g;
}

void Check(const Case& c, std::mt19937& rng) {
  SCOPED_TRACE(Describe(c));
  const reference::ConvGeometry g = Geometry(c);
  std::uniform_int_distribution<int> x_dist(-32768, 32767), w_dist(-128, 127);
  std::vector<int16_t> input(static_cast<size_t>(c.batches) * c.height * c.width * c.in_c);
  std::vector<int8_t> filter(static_cast<size_t>(c.out_c) * c.filter * c.filter * g.filter_depth);
  for (auto& v : input) v = static_cast<int16_t>(c.extreme ? -32768 : x_dist(rng));
  for (auto& v : filter) v = static_cast<int8_t>(c.extreme ? -128 : w_dist(rng));
  const int64_t products = int64_t{c.filter} * c.filter * g.filter_depth;
  const testing::Requant16Params rq =
      testing::RandomRequant16(rng, c.out_c, c.realistic, c.extreme ? products : 0);
  const std::vector<int64_t>& bias64 = rq.bias;
  const std::vector<int32_t>& multiplier = rq.multiplier;
  const std::vector<int32_t>& shift = rq.shift;
  std::vector<int32_t> bias32(c.out_c);
  for (auto& b : bias32) b = static_cast<int32_t>(rng());
  reference::ConvQuantParams q;
  q.multiplier = multiplier.data();
  q.shift = shift.data();
  q.act_min = c.extreme ? -32768 : -20000;
  q.act_max = c.extreme ? 32767 : 25000;
  q.input_offset = q.output_offset = 0;
  std::vector<int8_t> packed(g.packed_filter_elements());
  reference::PackConvFilter(g, filter.data(), 0, packed.data());
  const int64_t rows = g.output_rows();
  std::vector<int16_t> want(static_cast<size_t>(rows) * g.output_width * c.out_c);
  if (c.bias == 1)
    reference::Conv16x8(g, input.data(), packed.data(), bias64.data(), q, want.data(), 0, rows);
  else if (c.bias == 2)
    reference::Conv16x8(g, input.data(), packed.data(), bias32.data(), q, want.data(), 0, rows);
  else
    reference::Conv16x8<int64_t>(g, input.data(), packed.data(), nullptr, q, want.data(), 0, rows);

  optimized::Conv16x8Params p;
  p.geometry = g;
  p.filter = filter.data();
  if (c.bias == 1) p.bias64 = bias64.data();
  if (c.bias == 2) p.bias32 = bias32.data(), p.sums32 = true;
  p.multiplier = multiplier.data();
  p.shift = shift.data();
  p.act_min = q.act_min;
  p.act_max = q.act_max;
  if (c.groups > 1) {
    ASSERT_TRUE(optimized::Conv16x8Grouped::Covers(g, kFastIsa));
    for (int threads : {1, 3}) {
      const optimized::Conv16x8Grouped fast(p, threads);
      optimized::AlignedBuffer<uint8_t> scratch(fast.scratch_bytes() + 64);
      std::vector<int16_t> got(want.size(), 0x5555);
      for (int task = fast.num_tasks() - 1; task >= 0; --task)
        fast.RunTask(task, input.data(), got.data(), scratch.data());
      ASSERT_EQ(got, want) << threads << " threads, " << fast.num_tasks() << " tasks";
    }
    return;
  }
  for (int threads : {1, 3}) {
    const optimized::Conv16x8 fast(p, threads);
    // Extreme sums with the bias undoing them leave int32 from 256 products.
    const int k = c.filter * c.filter * c.in_c;
    const bool int32_sums =
        c.realistic && c.bias != 2 && k <= 256 && !(c.extreme && k == 256);
    ASSERT_EQ(fast.requantizes_in_int32(), int32_sums);
    optimized::AlignedBuffer<uint8_t> scratch(fast.scratch_bytes() + 64);
    std::vector<int16_t> got(want.size(), 0x5555);
    for (int task = fast.num_tasks() - 1; task >= 0; --task)
      fast.RunTask(task, input.data(), got.data(), scratch.data());
    ASSERT_EQ(got, want) << threads << " threads, " << fast.num_tasks() << " tasks";
  }
}

TEST(OptimizedConv16x8Test, MatchesReference) {
  if (!FastPathCpu()) GTEST_SKIP() << "the int16x8 fast path needs AVX2 or aarch64";
  std::mt19937 rng(23);
  std::vector<Case> cases;
  for (int in_c : {1, 2, 3, 16, 31, 255, 256, 257, 300})
    for (int out_c : {1, 15, 16, 17, 40})
      cases.push_back({1, 3, 5, in_c, out_c, 1, 1, 1, false, (in_c + out_c) % 3, false});
  for (int bias : {0, 1, 2}) {
    cases.push_back({2, 9, 11, 3, 32, 3, 2, 1, true, bias, false});   // a stem
    cases.push_back({1, 7, 6, 24, 20, 3, 1, 1, true, bias, false});   // padded 3x3
    cases.push_back({1, 10, 9, 5, 8, 3, 1, 2, false, bias, false});   // dilated
    cases.push_back({1, 8, 8, 40, 24, 1, 2, 1, false, bias, false});  // strided 1x1
    cases.push_back({1, 6, 7, 19, 18, 5, 1, 1, true, bias, false});
  }
  // Every pair at the extreme: a run of 128 pairs sums to 2^30 x 2.
  cases.push_back({1, 2, 3, 600, 17, 1, 1, 1, false, 1, true});
  cases.push_back({1, 4, 4, 70, 5, 3, 1, 1, true, 1, true});
  // Grouped (Conv16x8Grouped): 2-8 groups of 1-16 channels, 3x3 and 1x1,
  // strided, each bias kind.
  for (int bias : {0, 1, 2}) {
    Case grouped{1, 9, 8, 32, 48, 3, 1, 1, true, bias, false};
    grouped.groups = 8;
    cases.push_back(grouped);
    grouped = {2, 7, 7, 24, 12, 3, 2, 1, true, bias, false};
    grouped.groups = 3;
    cases.push_back(grouped);
    grouped = {1, 5, 6, 4, 8, 1, 1, 1, false, bias, false};
    grouped.groups = 4;
    cases.push_back(grouped);
  }
  for (const Case& c : cases) ASSERT_NO_FATAL_FAILURE(Check(c, rng));
  // The same shapes with real layers' biases and scales, and the extremes
  // at 256 products (1x1 of 256 channels: the bias leaves int32) and 252.
  cases.push_back({1, 2, 3, 256, 17, 1, 1, 1, false, 1, true});
  cases.push_back({1, 3, 3, 28, 20, 3, 1, 1, false, 1, true});
  for (Case c : cases) {
    c.realistic = true;
    ASSERT_NO_FATAL_FAILURE(Check(c, rng));
  }
}

struct FcCase {
  int batches, depth, units;
  int bias;  // 0 none, 1 INT64, 2 INT32 (32-bit sums)
  bool extreme;
};

void CheckFullyConnected(const FcCase& c, std::mt19937& rng) {
  SCOPED_TRACE(std::to_string(c.batches) + "x" + std::to_string(c.depth) + "->" +
               std::to_string(c.units) + " bias" + std::to_string(c.bias) +
               (c.extreme ? " extreme" : ""));
  reference::FullyConnectedGeometry g;
  g.batches = c.batches;
  g.accum_depth = c.depth;
  g.output_depth = c.units;
  std::uniform_int_distribution<int> x_dist(-32768, 32767), w_dist(-128, 127);
  std::vector<int16_t> input(static_cast<size_t>(c.batches) * c.depth);
  std::vector<int8_t> weights(static_cast<size_t>(c.units) * c.depth);
  for (auto& v : input) v = static_cast<int16_t>(c.extreme ? -32768 : x_dist(rng));
  for (auto& v : weights) v = static_cast<int8_t>(c.extreme ? -128 : w_dist(rng));
  std::vector<int64_t> bias64(c.units);
  std::vector<int32_t> bias32(c.units);
  std::vector<double> scale(c.units);
  for (int n = 0; n < c.units; ++n) {
    bias64[n] = std::uniform_int_distribution<int64_t>(-(int64_t{1} << 40), int64_t{1} << 40)(rng);
    if (c.extreme) bias64[n] = -int64_t{32768} * 128 * c.depth + n * 1000;
    bias32[n] = static_cast<int32_t>(rng());
    // Some outputs far out of int32 (INT32_MIN in the reference), most in range.
    scale[n] = std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(rng),
                          std::uniform_int_distribution<int>(-30, n % 7 == 0 ? 4 : -10)(rng));
  }
  reference::FullyConnectedQuantParams q;
  q.output_scale = scale.data();
  q.act_min = c.extreme ? -32768 : -20000;
  q.act_max = c.extreme ? 32767 : 25000;
  std::vector<int16_t> packed(g.weight_elements());
  reference::PackFullyConnectedWeights(g, weights.data(), 0, packed.data());
  std::vector<int16_t> want(static_cast<size_t>(c.batches) * c.units);
  if (c.bias == 1)
    reference::FullyConnected16x8(g, input.data(), packed.data(), bias64.data(), q, want.data(),
                                  0, g.work_units());
  else if (c.bias == 2)
    reference::FullyConnected16x8(g, input.data(), packed.data(), bias32.data(), q, want.data(),
                                  0, g.work_units());
  else
    reference::FullyConnected16x8<int64_t>(g, input.data(), packed.data(), nullptr, q,
                                           want.data(), 0, g.work_units());

  optimized::Conv16x8Params p;
  reference::ConvGeometry& cg = p.geometry;
  cg.batches = c.batches;
  cg.input_height = cg.input_width = cg.output_height = cg.output_width = 1;
  cg.filter_height = cg.filter_width = 1;
  cg.input_depth = cg.filter_depth = c.depth;
  cg.output_depth = c.units;
  p.filter = weights.data();
  if (c.bias == 1) p.bias64 = bias64.data();
  if (c.bias == 2) p.bias32 = bias32.data(), p.sums32 = true;
  p.output_scale = scale.data();
  p.act_min = q.act_min;
  p.act_max = q.act_max;
  for (int threads : {1, 3}) {
    const optimized::Conv16x8 fast(p, threads);
    optimized::AlignedBuffer<uint8_t> scratch(fast.scratch_bytes() + 64);
    std::vector<int16_t> got(want.size(), 0x5555);
    for (int task = fast.num_tasks() - 1; task >= 0; --task)
      fast.RunTask(task, input.data(), got.data(), scratch.data());
    ASSERT_EQ(got, want) << threads << " threads";
  }
}

TEST(OptimizedConv16x8Test, FullyConnectedMatchesReference) {
  if (!FastPathCpu()) GTEST_SKIP() << "the int16x8 fast path needs AVX2 or aarch64";
  std::mt19937 rng(31);
  for (int bias : {0, 1, 2}) {
    for (int batches : {1, 3, 4, 5, 9})
      ASSERT_NO_FATAL_FAILURE(CheckFullyConnected({batches, 37, 33, bias, false}, rng));
    ASSERT_NO_FATAL_FAILURE(CheckFullyConnected({2, 256, 16, bias, false}, rng));
    ASSERT_NO_FATAL_FAILURE(CheckFullyConnected({1, 1280, 10, bias, false}, rng));
  }
  // Extreme sums (700 x 2^22): undone by the INT64 bias; beyond int32 with
  // an INT32 bias, where the reference's 32-bit sums wrap.
  ASSERT_NO_FATAL_FAILURE(CheckFullyConnected({2, 700, 17, 1, true}, rng));
  ASSERT_NO_FATAL_FAILURE(CheckFullyConnected({2, 700, 17, 2, true}, rng));
}

}  // namespace
}  // namespace delegato
