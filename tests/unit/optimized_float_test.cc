// Optimized float32 CONV_2D / FULLY_CONNECTED (the packed GEMM) and
// DEPTHWISE_CONV_2D (kernels/optimized/float_conv) against the reference
// kernels, within rounding: |fast - reference| <= 1e-5 * (|bias| + sum of
// |x * w|) per output (the bound computed by the reference kernel itself on
// absolute values). Value-parameterised over every ISA (skipped when this
// CPU lacks it) and geometries below, at and above the tile sizes (rows
// around MR = 4/6/8 and the row block, output channels around NR = 16/32,
// depthwise channels around the 8/16-lane vectors and the four-pixel
// interior step), strided, dilated, padded, with and without bias, with
// fused clamps. Then through the interpreter (optimized vs reference kernel
// sets, each ISA forced, 1 and 2 threads).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/float_activations.h"
#include "kernels/optimized/float_binary.h"
#include "kernels/optimized/float_conv.h"
#include "kernels/optimized/repeat_channels.h"
#include "kernels/optimized/float_winograd.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/reduce_mean.h"
#include "kernels/reference/activations.h"
#include "kernels/reference/compare.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/depthwise_conv.h"
#include "kernels/reference/elementwise.h"
#include "kernels/reference/math.h"
#include "kernels/reference/reduce.h"
#include "kernels/reference/softmax.h"
#include "test_util.h"

namespace delegato {
namespace {

using optimized::Isa;
using testing::OpModel;

constexpr float kLowest = std::numeric_limits<float>::lowest();
constexpr float kMax = std::numeric_limits<float>::max();

std::vector<float> Random(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<float> Abs(std::vector<float> v) {
  for (float& x : v) x = std::fabs(x);
  return v;
}

void ExpectClose(const std::vector<float>& fast, const std::vector<float>& ref,
                 const std::vector<float>& magnitude, const std::string& what) {
  ASSERT_EQ(fast.size(), ref.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < fast.size() && bad < 5; ++i) {
    const float tol = 1e-5f * magnitude[i] + 1e-30f;
    if (!(std::fabs(fast[i] - ref[i]) <= tol)) {
      ADD_FAILURE() << what << " element " << i << ": " << fast[i] << " vs reference " << ref[i]
                    << " (tolerance " << tol << ")";
      ++bad;
    }
  }
}

// ------------------------------------------------------------------ GEMM

struct ConvCase {
  int batches, height, width, in_depth, filter_h, filter_w, out_depth, stride, dilation;
  Padding padding;
  bool bias;
  bool relu6;
};

std::string Describe(const ConvCase& c) {
  return std::to_string(c.batches) + "x" + std::to_string(c.height) + "x" +
         std::to_string(c.width) + "x" + std::to_string(c.in_depth) + "_f" +
         std::to_string(c.filter_h) + "x" + std::to_string(c.filter_w) + "x" +
         std::to_string(c.out_depth) + "_s" + std::to_string(c.stride) + "_d" +
         std::to_string(c.dilation) + (c.padding == Padding::kSame ? "_same" : "_valid") +
         (c.bias ? "_bias" : "") + (c.relu6 ? "_relu6" : "");
}

reference::ConvGeometry ConvGeometryOf(const ConvCase& c) {
  reference::ConvGeometry g;
  g.batches = c.batches;
  g.input_height = c.height;
  g.input_width = c.width;
  g.input_depth = g.filter_depth = c.in_depth;
  g.filter_height = c.filter_h;
  g.filter_width = c.filter_w;
  g.output_depth = c.out_depth;
  g.stride_height = g.stride_width = c.stride;
  g.dilation_height = g.dilation_width = c.dilation;
  const reference::Window2D w =
      reference::ComputeWindow2D(c.padding, c.stride, c.stride, c.dilation, c.dilation, c.height,
                                 c.width, c.filter_h, c.filter_w);
  g.output_height = w.out_height;
  g.output_width = w.out_width;
  g.pad_height = w.pad_height;
  g.pad_width = w.pad_width;
  return g;
}

std::vector<float> ReferenceConv(const reference::ConvGeometry& g, const std::vector<float>& in,
                                 const std::vector<float>& filter, const float* bias, float lo,
                                 float hi) {
  std::vector<float> packed(g.packed_filter_elements());
  reference::PackConvFilter(g, filter.data(), 0, packed.data());
  std::vector<float> out(static_cast<size_t>(g.output_rows()) * g.output_width * g.output_depth);
  reference::ConvFloat(g, in.data(), packed.data(), bias, lo, hi, out.data(), 0, g.output_rows());
  return out;
}

// A layer's random input, filter and bias, the reference's outputs, the
// per-output bound's magnitude (the reference on absolute values) and the
// kernels' parameters over them.
struct ConvFixture {
  std::vector<float> in, filter, bias, ref, magnitude;
  optimized::FloatConvParams params;
};

ConvFixture MakeConvFixture(const reference::ConvGeometry& g, const ConvCase& c, uint32_t seed) {
  ConvFixture f;
  std::mt19937 rng(seed);
  f.in = Random(rng, static_cast<size_t>(c.batches) * c.height * c.width * c.in_depth);
  f.filter = Random(rng, static_cast<size_t>(c.out_depth) * c.filter_h * c.filter_w * g.filter_depth);
  f.bias = Random(rng, c.out_depth);
  const float lo = c.relu6 ? 0.0f : kLowest, hi = c.relu6 ? 6.0f : kMax;
  const float* b = c.bias ? f.bias.data() : nullptr;
  f.ref = ReferenceConv(g, f.in, f.filter, b, lo, hi);
  const std::vector<float> abs_bias = Abs(f.bias);
  f.magnitude = ReferenceConv(g, Abs(f.in), Abs(f.filter), c.bias ? abs_bias.data() : nullptr,
                              kLowest, kMax);
  f.params.geometry = g;
  f.params.act_min = lo;
  f.params.act_max = hi;
  f.params.filter = f.filter.data();
  f.params.bias = b;
  return f;
}

// Every task of `kernel`, in reverse order (each writes only its own
// outputs), against the fixture's reference.
template <class Kernel>
void ExpectTasksClose(const Kernel& kernel, const ConvFixture& f, const std::string& what) {
  optimized::AlignedBuffer<uint8_t> scratch(kernel.scratch_bytes() + 64);
  std::vector<float> out(f.ref.size(), std::nanf(""));
  for (int t = kernel.num_tasks() - 1; t >= 0; --t)
    kernel.RunTask(t, f.in.data(), out.data(), scratch.data());
  ExpectClose(out, f.ref, f.magnitude, what);
}

class FloatConvTest : public ::testing::TestWithParam<std::tuple<Isa, ConvCase>> {};

TEST_P(FloatConvTest, MatchesReference) {
  const auto [isa, c] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  const reference::ConvGeometry g = ConvGeometryOf(c);
  ASSERT_TRUE(optimized::FloatConv::Covers(g));
  const ConvFixture f = MakeConvFixture(g, c, c.height * 131 + c.in_depth * 7 + c.out_depth);
  for (int threads : {1, 2, 3}) {
    const optimized::FloatConv fast(f.params, isa, threads);
    EXPECT_EQ(fast.isa(), isa);
    ExpectTasksClose(fast, f,
                     std::string(optimized::IsaName(isa)) + " " + Describe(c) + " threads " +
                         std::to_string(threads));
  }
}

std::vector<ConvCase> ConvCases() {
  std::vector<ConvCase> cases;
  const Padding S = Padding::kSame, V = Padding::kValid;
  // 1x1 (direct rows) over row counts around MR and the row block and
  // output channels around NR.
  for (int width : {1, 3, 4, 5, 6, 7, 8, 9, 13})
    for (int out : {1, 15, 16, 17, 32, 33})
      cases.push_back({1, 1, width, 24, 1, 1, out, 1, 1, S, true, false});
  // Rows around AVX2's 12-row block for at most 8 channels.
  for (int width : {11, 12, 23, 24, 25})
    for (int out : {1, 8})
      cases.push_back({1, 1, width, 24, 1, 1, out, 1, 1, S, true, false});
  for (int in : {1, 3, 8, 17, 144})
    cases.push_back({1, 7, 9, in, 1, 1, 24, 1, 1, S, true, true});
  cases.push_back({2, 16, 20, 40, 1, 1, 70, 1, 1, S, true, false});  // > one row block
  cases.push_back({1, 30, 30, 960, 1, 1, 40, 1, 1, V, false, false});  // large k, small block
  cases.push_back({1, 9, 9, 16, 1, 1, 33, 2, 1, S, true, false});      // 1x1 strided
  // 3x3 (gathered rows): padding, strides, dilation, first-layer depth 3.
  for (int stride : {1, 2})
    for (Padding pad : {S, V}) {
      cases.push_back({1, 11, 13, 3, 3, 3, 16, stride, 1, pad, true, true});
      cases.push_back({2, 8, 7, 17, 3, 3, 33, stride, 1, pad, false, false});
    }
  cases.push_back({1, 12, 12, 8, 3, 3, 20, 1, 2, S, true, false});   // dilated
  cases.push_back({1, 15, 14, 5, 3, 3, 9, 1, 3, V, true, false});    // dilated, valid
  cases.push_back({1, 10, 9, 6, 5, 2, 31, 2, 1, S, true, true});     // rectangular filter
  cases.push_back({1, 2, 2, 4, 3, 3, 8, 1, 1, S, true, false});      // filter wider than image
  cases.push_back({1, 1, 1, 1, 1, 1, 1, 1, 1, V, false, false});
  // A lone output row (a squeeze-and-excitation 1x1, a classifier): whole
  // panels four at a time (Gemv), then the rest; direct and gathered.
  cases.push_back({1, 1, 1, 40, 1, 1, 300, 1, 1, S, true, true});
  cases.push_back({1, 1, 1, 24, 1, 1, 64, 1, 1, S, false, false});
  cases.push_back({1, 1, 1, 12, 3, 3, 130, 1, 1, S, true, false});
  // At most 8 output channels (AVX-512 two taps per vector): even and odd
  // runs per filter row, 1x1 (one run of k), dilated (a run per tap).
  for (int out : {1, 5, 8}) {
    cases.push_back({1, 16, 16, 16, 3, 3, out, 1, 1, S, true, true});  // run 48
    cases.push_back({1, 11, 12, 3, 3, 3, out, 2, 1, S, true, false});  // run 9
    cases.push_back({2, 6, 7, 7, 1, 1, out, 1, 1, V, out != 5, false});  // run 7
    cases.push_back({1, 9, 9, 5, 3, 3, out, 1, 2, S, true, false});    // run 5 per tap
  }
  // One output channel, 1x1: dot products of 16 pixels (k below, at and
  // above 16; strided rows; a last group of fewer than 16).
  for (int in : {8, 16, 17, 144}) cases.push_back({1, 5, 7, in, 1, 1, 1, 1, 1, V, true, in == 8});
  cases.push_back({2, 9, 9, 16, 1, 1, 1, 2, 1, V, true, false});
  return cases;
}

// The ISAs with float32 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED paths
// on this architecture (each skips when the CPU lacks it).
std::vector<Isa> FloatConvIsas() {
#if DELEGATO_ARM
  return {Isa::kScalar, Isa::kNeon, Isa::kDotprod, Isa::kI8mm};
#else
  return {Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni};
#endif
}

std::string IsaCaseName(Isa isa, const std::string& what) {
  return std::string(optimized::IsaName(isa)) + "_" + what;
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, FloatConvTest,
    ::testing::Combine(::testing::ValuesIn(FloatConvIsas()),
                       ::testing::ValuesIn(ConvCases())),
    [](const ::testing::TestParamInfo<FloatConvTest::ParamType>& info) {
      return IsaCaseName(std::get<0>(info.param), Describe(std::get<1>(info.param))) + "_" +
             std::to_string(info.index);
    });

// ------------------------------------------------------------------ grouped

// FloatGroupedConv against the reference (the same bound): group counts 2-32,
// group depths 1-17, 1x1 / 3x3 / strided / dilated, 3x3 stride-1 groups of
// 16 (Winograd per group), tasks 1-3 (fewer or more than the groups).
struct GroupedCase {
  ConvCase conv;  // in_depth: the whole input's
  int groups;
};

class FloatGroupedConvTest : public ::testing::TestWithParam<std::tuple<Isa, GroupedCase>> {};

TEST_P(FloatGroupedConvTest, MatchesReference) {
  const auto [isa, gc] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  const ConvCase& c = gc.conv;
  reference::ConvGeometry g = ConvGeometryOf(c);
  g.filter_depth = c.in_depth / gc.groups;
  ASSERT_EQ(g.groups(), gc.groups);
  ASSERT_TRUE(optimized::FloatGroupedConv::Covers(g));
  const ConvFixture f =
      MakeConvFixture(g, c, c.height * 131 + c.in_depth * 7 + c.out_depth + gc.groups);
  reference::ConvGeometry group = g;
  group.input_depth = g.filter_depth;
  group.output_depth = g.filters_per_group();
  for (int threads : {1, 2, 3}) {
    const optimized::FloatGroupedConv fast(f.params, isa, threads);
    EXPECT_EQ(fast.winograd(), optimized::FloatWinograd::Covers(group, isa) &&
                                   optimized::FloatWinograd::Pays(group));
    ExpectTasksClose(fast, f,
                     std::string(optimized::IsaName(isa)) + " " + Describe(c) + " groups " +
                         std::to_string(gc.groups) + " threads " + std::to_string(threads));
  }
}

std::vector<GroupedCase> GroupedCases() {
  const Padding S = Padding::kSame, V = Padding::kValid;
  return {
      {{1, 2, 2, 4, 1, 1, 4, 1, 1, V, true, false}, 2},
      {{1, 9, 7, 32, 3, 3, 32, 1, 1, S, true, true}, 8},     // ResNeXt-style, depth 4
      {{2, 8, 8, 48, 3, 3, 96, 2, 1, S, true, false}, 3},    // depth 16, 32 per group
      {{1, 10, 10, 34, 3, 3, 34, 1, 2, S, false, false}, 2},  // depth 17, dilated
      {{1, 6, 5, 32, 1, 1, 64, 1, 1, V, true, false}, 32},   // 1x1, depth 1
      {{1, 7, 7, 24, 5, 5, 12, 1, 1, S, true, true}, 4},
      {{2, 9, 10, 32, 3, 3, 48, 1, 1, S, true, true}, 2},    // Winograd per group
      {{1, 6, 6, 64, 3, 3, 64, 1, 1, V, true, false}, 4},
  };
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, FloatGroupedConvTest,
    ::testing::Combine(::testing::ValuesIn(FloatConvIsas()), ::testing::ValuesIn(GroupedCases())),
    [](const ::testing::TestParamInfo<FloatGroupedConvTest::ParamType>& info) {
      const GroupedCase& gc = std::get<1>(info.param);
      return IsaCaseName(std::get<0>(info.param), Describe(gc.conv)) + "_g" +
             std::to_string(gc.groups) + "_" + std::to_string(info.index);
    });

// ------------------------------------------------------------------ Winograd

// FloatWinograd (3x3, stride 1) against the reference within the same bound:
// output sizes around the 2x2 tile (odd sizes leave a half tile) and the
// tile blocks (6 / 8 tiles), input channels around the vector width (the
// last vector loaded partly), output channels around the one- and
// two-vector panels, both paddings, batches, clamps, 1-3 tasks.
class FloatWinogradTest : public ::testing::TestWithParam<std::tuple<Isa, ConvCase>> {};

TEST_P(FloatWinogradTest, MatchesReference) {
  const auto [isa, c] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  const reference::ConvGeometry g = ConvGeometryOf(c);
  if (isa == Isa::kScalar) {
    EXPECT_FALSE(optimized::FloatWinograd::Covers(g, isa));
    return;
  }
  ASSERT_TRUE(optimized::FloatWinograd::Covers(g, isa));
  const ConvFixture f = MakeConvFixture(g, c, c.height * 131 + c.in_depth * 7 + c.out_depth);
  for (int threads : {1, 2, 3}) {
    const optimized::FloatWinograd fast(f.params, isa, threads);
    ExpectTasksClose(fast, f,
                     std::string(optimized::IsaName(isa)) + " " + Describe(c) + " threads " +
                         std::to_string(threads));
  }
}

// An infinite or NaN input: every output the reference makes non-finite is
// non-finite here too (Winograd may also spread NaN to the rest of the
// tile, as float_winograd.h says); the outputs of tiles without one stay
// within the bound.
TEST_P(FloatWinogradTest, NonFiniteInputsNeverVanish) {
  const auto [isa, c] = GetParam();
  if (!optimized::IsaSupported(isa) || isa == Isa::kScalar) GTEST_SKIP();
  const reference::ConvGeometry g = ConvGeometryOf(c);
  ConvFixture f = MakeConvFixture(g, c, c.height * 131 + c.in_depth * 7 + c.out_depth);
  const size_t pixels = static_cast<size_t>(c.batches) * c.height * c.width;
  for (size_t px : {size_t{0}, pixels / 2, pixels - 1}) {
    f.in[px * c.in_depth] = std::numeric_limits<float>::infinity();
    if (c.in_depth > 1) f.in[px * c.in_depth + 1] = std::nanf("");
  }
  const std::vector<float> ref = ReferenceConv(g, f.in, f.filter, f.params.bias, f.params.act_min,
                                               f.params.act_max);
  const optimized::FloatWinograd fast(f.params, isa, 1);
  optimized::AlignedBuffer<uint8_t> scratch(fast.scratch_bytes() + 64);
  std::vector<float> out(ref.size(), 0.0f);
  fast.RunTask(0, f.in.data(), out.data(), scratch.data());
  int non_finite = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(ref[i])) {
      ++non_finite;
      EXPECT_FALSE(std::isfinite(out[i])) << "output " << i << ": reference " << ref[i];
    }
  }
  // With one input channel only the infinities are placed, and the clamp to
  // the float range makes their outputs finite in the reference.
  if (c.in_depth > 1) {
    EXPECT_GT(non_finite, 0);
  }
}

// Coverage: 3x3 stride 1 only; transformed weights up to 16 MB, with
// channel counts whose product would overflow refused too.
TEST(FloatWinogradCovers, ShapesAndWeightSize) {
  const Isa isa = Isa::kAvx2;
  ConvCase c{1, 8, 8, 512, 3, 3, 512, 1, 1, Padding::kSame, true, false};
  EXPECT_TRUE(optimized::FloatWinograd::Covers(ConvGeometryOf(c), isa));
  c.out_depth = 513;  // 16 x 512 x 528 floats: past 16 MB
  EXPECT_FALSE(optimized::FloatWinograd::Covers(ConvGeometryOf(c), isa));
  for (int32_t huge : {1 << 30, 2147483647}) {
    reference::ConvGeometry g = ConvGeometryOf({1, 8, 8, 16, 3, 3, 16, 1, 1, Padding::kSame, true, false});
    g.input_depth = g.filter_depth = huge;
    g.output_depth = huge;
    EXPECT_FALSE(optimized::FloatWinograd::Covers(g, isa)) << huge;
  }
  c = {1, 8, 8, 16, 3, 3, 16, 2, 1, Padding::kSame, true, false};  // stride 2
  EXPECT_FALSE(optimized::FloatWinograd::Covers(ConvGeometryOf(c), isa));
  c = {1, 8, 8, 16, 3, 3, 16, 1, 2, Padding::kSame, true, false};  // dilated
  EXPECT_FALSE(optimized::FloatWinograd::Covers(ConvGeometryOf(c), isa));
  c = {1, 8, 8, 16, 5, 5, 16, 1, 1, Padding::kSame, true, false};  // 5x5
  EXPECT_FALSE(optimized::FloatWinograd::Covers(ConvGeometryOf(c), isa));
  c = {1, 8, 8, 16, 3, 3, 16, 1, 1, Padding::kSame, true, false};
  EXPECT_FALSE(optimized::FloatWinograd::Covers(ConvGeometryOf(c), Isa::kScalar));
}

std::vector<ConvCase> WinogradCases() {
  std::vector<ConvCase> cases;
  const Padding S = Padding::kSame, V = Padding::kValid;
  for (int size : {1, 2, 3, 4, 5, 7, 8, 13})
    cases.push_back({1, size, size + 1, 16, 3, 3, 16, 1, 1, S, true, false});
  for (int in : {1, 3, 4, 5, 8, 9, 16, 17, 33})
    cases.push_back({1, 6, 9, in, 3, 3, 12, 1, 1, S, true, false});
  for (int out : {1, 3, 4, 7, 8, 9, 16, 17, 24, 32, 33, 40, 48, 65})
    cases.push_back({1, 5, 7, 11, 3, 3, out, 1, 1, S, out % 2 == 0, out % 3 == 0});
  cases.push_back({2, 9, 6, 20, 3, 3, 24, 1, 1, V, true, false});
  cases.push_back({3, 3, 3, 8, 3, 3, 8, 1, 1, V, false, false});  // one output pixel
  cases.push_back({2, 24, 24, 16, 3, 3, 8, 1, 1, S, true, true});  // DenseNet's growth layer
  cases.push_back({1, 30, 17, 64, 3, 3, 64, 1, 1, S, true, false});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, FloatWinogradTest,
    ::testing::Combine(::testing::ValuesIn(FloatConvIsas()),
                       ::testing::ValuesIn(WinogradCases())),
    [](const ::testing::TestParamInfo<FloatWinogradTest::ParamType>& info) {
      return IsaCaseName(std::get<0>(info.param), Describe(std::get<1>(info.param))) + "_" +
             std::to_string(info.index);
    });

// FULLY_CONNECTED: batches x depth -> units, the GEMM over 1x1 pixels.
struct FcCase {
  int batches, depth, units;
};

class FloatFullyConnectedTest : public ::testing::TestWithParam<std::tuple<Isa, FcCase>> {};

TEST_P(FloatFullyConnectedTest, MatchesReference) {
  const auto [isa, c] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  const ConvCase as_conv{1, c.batches, 1, c.depth, 1, 1, c.units, 1, 1, Padding::kValid, true,
                         false};
  const reference::ConvGeometry g = ConvGeometryOf(as_conv);
  std::mt19937 rng(c.batches * 1000 + c.depth + c.units);
  const std::vector<float> in = Random(rng, static_cast<size_t>(c.batches) * c.depth);
  const std::vector<float> w = Random(rng, static_cast<size_t>(c.units) * c.depth);
  const std::vector<float> bias = Random(rng, c.units);
  const std::vector<float> ref = ReferenceConv(g, in, w, bias.data(), kLowest, kMax);
  const std::vector<float> abs_bias = Abs(bias);
  const std::vector<float> magnitude =
      ReferenceConv(g, Abs(in), Abs(w), abs_bias.data(), kLowest, kMax);
  optimized::FloatConvParams p;
  p.geometry = g;
  p.act_min = kLowest;
  p.act_max = kMax;
  p.filter = w.data();
  p.bias = bias.data();
  for (int threads : {1, 2}) {
    const optimized::FloatConv fast(p, isa, threads);
    optimized::AlignedBuffer<uint8_t> scratch(fast.scratch_bytes() + 64);
    std::vector<float> out(ref.size(), std::nanf(""));
    for (int t = 0; t < fast.num_tasks(); ++t)
      fast.RunTask(t, in.data(), out.data(), scratch.data());
    ExpectClose(out, ref, magnitude,
                std::string(optimized::IsaName(isa)) + " fc " + std::to_string(c.batches) + "x" +
                    std::to_string(c.depth) + "->" + std::to_string(c.units));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, FloatFullyConnectedTest,
    ::testing::Combine(::testing::ValuesIn(FloatConvIsas()),
                       ::testing::Values(FcCase{1, 1, 1}, FcCase{1, 1280, 1001},
                                         FcCase{1, 64, 31}, FcCase{2, 7, 33},
                                         FcCase{5, 100, 16}, FcCase{9, 33, 65},
                                         FcCase{64, 512, 10},
                                         // Few units: one (dot products of 16
                                         // rows), up to 8 (two taps per vector).
                                         FcCase{20, 37, 1}, FcCase{33, 16, 1},
                                         FcCase{3, 9, 5}, FcCase{17, 48, 8})),
    [](const ::testing::TestParamInfo<FloatFullyConnectedTest::ParamType>& info) {
      const FcCase& c = std::get<1>(info.param);
      return IsaCaseName(std::get<0>(info.param), std::to_string(c.batches) + "x" +
                                                      std::to_string(c.depth) + "to" +
                                                      std::to_string(c.units));
    });

// -------------------------------------------------------------- depthwise

struct DwCase {
  int batches, height, width, channels, filter, stride, dilation;
  Padding padding;
  bool bias;
  bool relu6;
};

std::string Describe(const DwCase& c) {
  return std::to_string(c.batches) + "x" + std::to_string(c.height) + "x" +
         std::to_string(c.width) + "x" + std::to_string(c.channels) + "_f" +
         std::to_string(c.filter) + "_s" + std::to_string(c.stride) + "_d" +
         std::to_string(c.dilation) + (c.padding == Padding::kSame ? "_same" : "_valid") +
         (c.bias ? "_bias" : "") + (c.relu6 ? "_relu6" : "");
}

std::vector<float> ReferenceDepthwise(const reference::DepthwiseGeometry& g,
                                      const std::vector<float>& in,
                                      const std::vector<float>& filter, const float* bias,
                                      float lo, float hi) {
  std::vector<float> out(static_cast<size_t>(g.output_rows()) * g.output_width * g.output_depth);
  reference::DepthwiseConvFloat(g, in.data(), filter.data(), bias, lo, hi, out.data(), 0,
                                g.output_rows());
  return out;
}

reference::DepthwiseGeometry DwGeometryOf(const DwCase& c) {
  reference::DepthwiseGeometry g;
  g.batches = c.batches;
  g.input_height = c.height;
  g.input_width = c.width;
  g.input_depth = g.output_depth = c.channels;
  g.filter_height = g.filter_width = c.filter;
  g.stride_height = g.stride_width = c.stride;
  g.dilation_height = g.dilation_width = c.dilation;
  const reference::Window2D w =
      reference::ComputeWindow2D(c.padding, c.stride, c.stride, c.dilation, c.dilation, c.height,
                                 c.width, c.filter, c.filter);
  g.output_height = w.out_height;
  g.output_width = w.out_width;
  g.pad_height = w.pad_height;
  g.pad_width = w.pad_width;
  return g;
}

class FloatDepthwiseTest : public ::testing::TestWithParam<std::tuple<Isa, DwCase>> {};

TEST_P(FloatDepthwiseTest, MatchesReference) {
  const auto [isa, c] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  const reference::DepthwiseGeometry g = DwGeometryOf(c);
  std::mt19937 rng(c.height * 17 + c.channels);
  const std::vector<float> in =
      Random(rng, static_cast<size_t>(c.batches) * c.height * c.width * c.channels);
  const std::vector<float> filter = Random(rng, static_cast<size_t>(c.filter) * c.filter * c.channels);
  const std::vector<float> bias = Random(rng, c.channels);
  const float lo = c.relu6 ? 0.0f : kLowest, hi = c.relu6 ? 6.0f : kMax;
  const float* b = c.bias ? bias.data() : nullptr;
  const std::vector<float> ref = ReferenceDepthwise(g, in, filter, b, lo, hi);
  const std::vector<float> abs_bias = Abs(bias);
  const std::vector<float> magnitude = ReferenceDepthwise(
      g, Abs(in), Abs(filter), c.bias ? abs_bias.data() : nullptr, kLowest, kMax);
  ASSERT_TRUE(optimized::FloatDepthwise::Covers(g));
  optimized::FloatDepthwiseParams p;
  p.geometry = g;
  p.act_min = lo;
  p.act_max = hi;
  p.filter = filter.data();
  p.bias = b;
  const optimized::FloatDepthwise fast(p, isa);
  EXPECT_EQ(fast.isa(), isa);
  // All rows at once, then split at an arbitrary row.
  for (int64_t split : {int64_t{0}, fast.rows() / 3}) {
    std::vector<float> out(ref.size(), std::nanf(""));
    fast.RunRows(split, fast.rows(), in.data(), out.data());
    fast.RunRows(0, split, in.data(), out.data());
    ExpectClose(out, ref, magnitude,
                std::string(optimized::IsaName(isa)) + " " + Describe(c) + " split " +
                    std::to_string(split));
  }
}

std::vector<DwCase> DwCases() {
  std::vector<DwCase> cases;
  const Padding S = Padding::kSame, V = Padding::kValid;
  for (int channels : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 65})
    cases.push_back({1, 9, 11, channels, 3, 1, 1, S, true, true});
  for (int width : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12})
    cases.push_back({1, 5, width, 24, 3, 1, 1, S, true, false});
  for (int stride : {1, 2})
    for (Padding pad : {S, V}) {
      cases.push_back({2, 14, 13, 32, 3, stride, 1, pad, true, true});
      cases.push_back({1, 12, 15, 20, 5, stride, 1, pad, false, false});
    }
  cases.push_back({1, 13, 13, 16, 3, 1, 2, S, true, false});  // dilated
  cases.push_back({1, 16, 17, 40, 3, 2, 3, V, true, false});  // dilated, strided
  cases.push_back({1, 2, 3, 5, 5, 1, 1, S, true, false});     // filter wider than image
  cases.push_back({1, 112, 112, 32, 3, 1, 1, S, true, true});  // MobileNet's first depthwise
  // At most one vector of channels: eight interior pixels at once (full
  // vectors at 8 channels on AVX2, masked below), 3x3 and 5x5, strided.
  for (int channels : {3, 8}) {
    cases.push_back({1, 12, 15, channels, 5, 1, 1, S, true, true});
    cases.push_back({1, 9, 21, channels, 5, 2, 1, V, true, false});
    cases.push_back({2, 7, 20, channels, 3, 2, 1, S, false, true});
    // 7 and 15 interior pixels: the last eight would reach the border.
    cases.push_back({1, 6, 9, channels, 3, 1, 1, S, true, false});
    cases.push_back({1, 6, 17, channels, 3, 1, 1, S, true, false});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, FloatDepthwiseTest,
    ::testing::Combine(::testing::ValuesIn(FloatConvIsas()),
                       ::testing::ValuesIn(DwCases())),
    [](const ::testing::TestParamInfo<FloatDepthwiseTest::ParamType>& info) {
      return IsaCaseName(std::get<0>(info.param), Describe(std::get<1>(info.param))) + "_" +
             std::to_string(info.index);
    });

// ------------------------------------------- convolution + depthwise, fused

// FloatConvDepthwise against the two kernels run apart (the convolution's
// whole output image, then the depthwise layer over it): byte for byte,
// whatever the band size (down to one window of rows, so rows are computed,
// moved and dropped at every step), the task count and the batch.
struct FusedCase {
  int batches, height, width, in_depth, depth;
  int conv_filter, conv_stride;
  int dw_filter, dw_stride, dw_dilation;
  Padding dw_padding;
};

std::string Describe(const FusedCase& c) {
  return std::to_string(c.batches) + "x" + std::to_string(c.height) + "x" +
         std::to_string(c.width) + "x" + std::to_string(c.in_depth) + "_conv" +
         std::to_string(c.conv_filter) + "s" + std::to_string(c.conv_stride) + "_to" +
         std::to_string(c.depth) + "_dw" + std::to_string(c.dw_filter) + "s" +
         std::to_string(c.dw_stride) + "d" + std::to_string(c.dw_dilation) +
         (c.dw_padding == Padding::kSame ? "_same" : "_valid");
}

class FloatConvDepthwiseTest
    : public ::testing::TestWithParam<std::tuple<Isa, FusedCase>> {};

TEST_P(FloatConvDepthwiseTest, EqualsTheLayersApart) {
  const auto [isa, c] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  // The bias and activation fields are unused here (set below).
  const reference::ConvGeometry cg =
      ConvGeometryOf({c.batches, c.height, c.width, c.in_depth, c.conv_filter, c.conv_filter,
                      c.depth, c.conv_stride, 1, Padding::kSame, true, true});
  const reference::DepthwiseGeometry g =
      DwGeometryOf({c.batches, cg.output_height, cg.output_width, c.depth, c.dw_filter,
                    c.dw_stride, c.dw_dilation, c.dw_padding, true, false});

  std::mt19937 rng(c.height * 31 + c.depth);
  const std::vector<float> in =
      Random(rng, static_cast<size_t>(c.batches) * c.height * c.width * c.in_depth);
  const std::vector<float> conv_filter =
      Random(rng, static_cast<size_t>(c.depth) * c.conv_filter * c.conv_filter * c.in_depth);
  const std::vector<float> conv_bias = Random(rng, c.depth);
  const std::vector<float> dw_filter =
      Random(rng, static_cast<size_t>(c.dw_filter) * c.dw_filter * c.depth);
  const std::vector<float> dw_bias = Random(rng, c.depth);
  optimized::FloatConvParams cp;
  cp.geometry = cg;
  cp.act_min = 0.0f;  // RELU6, as in the MobileNets
  cp.act_max = 6.0f;
  cp.filter = conv_filter.data();
  cp.bias = conv_bias.data();
  const optimized::FloatConv conv(cp, isa, 1);
  optimized::FloatDepthwiseParams dp;
  dp.geometry = g;
  dp.act_min = kLowest;
  dp.act_max = kMax;
  dp.filter = dw_filter.data();
  dp.bias = dw_bias.data();
  const optimized::FloatDepthwise depthwise(dp, isa);

  std::vector<float> image(static_cast<size_t>(c.batches) * g.input_height * g.input_width *
                           c.depth);
  optimized::AlignedBuffer<uint8_t> conv_scratch(conv.scratch_bytes() + 64);
  conv.RunTask(0, in.data(), image.data(), conv_scratch.data());
  std::vector<float> want(static_cast<size_t>(depthwise.rows()) * g.output_width * c.depth);
  depthwise.RunRows(0, depthwise.rows(), image.data(), want.data());

  const size_t row_bytes = static_cast<size_t>(g.input_width) * c.depth * sizeof(float);
  for (size_t band_bytes : {size_t{1}, 3 * row_bytes, size_t{1} << 30}) {
    for (int threads : {1, 2, 3}) {
      const optimized::FloatConvDepthwise fused(conv, depthwise, threads, band_bytes);
      optimized::AlignedBuffer<uint8_t> scratch(fused.scratch_bytes());
      std::vector<float> got(want.size(), std::nanf(""));
      for (int task = 0; task < fused.num_tasks(); ++task)
        fused.RunTask(task, in.data(), got.data(), scratch.data());
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
          << optimized::IsaName(isa) << " " << Describe(c) << " band rows " << fused.band_rows()
          << " tasks " << fused.num_tasks();
    }
  }
}

std::vector<FusedCase> FusedCases() {
  const Padding S = Padding::kSame, V = Padding::kValid;
  return {
      {1, 13, 11, 8, 24, 1, 1, 3, 1, 1, S},  // expansion + depthwise, stride 1
      {2, 14, 9, 8, 40, 1, 1, 3, 2, 1, S},   // stride 2, two batches
      {1, 15, 10, 6, 17, 1, 1, 5, 1, 1, S},  // 5x5, channels past the vectors
      {1, 16, 12, 5, 16, 1, 1, 5, 2, 1, V},  // 5x5 stride 2, unpadded
      {1, 17, 9, 4, 16, 1, 1, 3, 1, 2, S},   // dilated
      {2, 21, 13, 3, 32, 3, 2, 3, 1, 1, S},  // a first layer: 3x3 stride 2 gathered
      {1, 12, 12, 8, 8, 1, 2, 3, 1, 1, V},   // a strided 1x1
      {1, 3, 4, 8, 16, 1, 1, 5, 1, 1, S},    // windows taller than the image
  };
}

// (Prefixed "Optimized" so the aarch64 stage runs it.)
INSTANTIATE_TEST_SUITE_P(
    OptimizedSizes, FloatConvDepthwiseTest,
    ::testing::Combine(::testing::ValuesIn(FloatConvIsas()), ::testing::ValuesIn(FusedCases())),
    [](const ::testing::TestParamInfo<FloatConvDepthwiseTest::ParamType>& info) {
      return IsaCaseName(std::get<0>(info.param), Describe(std::get<1>(info.param))) + "_" +
             std::to_string(info.index);
    });

// ------------------------------------------------------------- LOGISTIC

class FloatLogisticTest : public ::testing::TestWithParam<Isa> {};

TEST_P(FloatLogisticTest, WithinUlpsOfReference) {
  const Isa isa = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  if (!optimized::HasFloatLogistic(isa)) GTEST_SKIP() << "no vector LOGISTIC on this ISA";
  std::vector<float> in = {0.0f, -0.0f, 1e-30f, -1e-30f, 16.619047164916992188f,
                           std::nextafter(16.619047164916992188f, 100.0f), -9.0f,
                           std::nextafter(-9.0f, -100.0f), -86.9f, -87.5f, -100.0f, -103.5f,
                           88.5f, 1000.0f, std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), std::nanf("")};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> wide(-110.0f, 30.0f), narrow(-10.0f, 10.0f);
  for (int i = 0; i < 4000; ++i) in.push_back(i % 2 ? wide(rng) : narrow(rng));
  // Lengths around the vector width, at every start.
  for (int64_t begin : {int64_t{0}, int64_t{3}}) {
    for (int64_t end : {static_cast<int64_t>(in.size()), begin + 1, begin + 7, begin + 17}) {
      std::vector<float> ref(in.size(), 0.0f), fast(in.size(), 0.0f);
      reference::LogisticFloat(in.data(), ref.data(), begin, end);
      optimized::FloatLogistic(isa, in.data(), fast.data(), begin, end);
      for (size_t i = 0; i < in.size(); ++i) {
        if (std::isnan(ref[i])) {
          EXPECT_TRUE(std::isnan(fast[i])) << "x = " << in[i];
          continue;
        }
        EXPECT_LE(std::fabs(fast[i] - ref[i]), 1e-6f * std::fabs(ref[i]) + 2e-38f)
            << optimized::IsaName(isa) << " x = " << in[i] << ": " << fast[i] << " vs "
            << ref[i];
      }
    }
  }
}

// A vector whose lanes are all between the cut-offs takes a shorter path (no
// clamp, no blends): its values must be those of the general path, which a
// vector with one lane past a cut-off takes.
TEST_P(FloatLogisticTest, InRangeVectorsMatchTheGeneralPath) {
  const Isa isa = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  if (!optimized::HasFloatLogistic(isa)) GTEST_SKIP() << "no vector LOGISTIC on this ISA";
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> in_range(-9.0f, 16.6f);
  std::vector<float> in(4096);
  for (float& x : in) x = in_range(rng);
  in[0] = -9.0f;  // the cut-offs themselves are inside
  in[1] = 16.619047164916992188f;
  std::vector<float> mixed = in;
  for (size_t i = 7; i < mixed.size(); i += 8) mixed[i] = i % 16 == 7 ? -20.0f : 30.0f;
  for (bool swish : {false, true}) {
    std::vector<float> fast(in.size()), general(in.size());
    const int64_t n = static_cast<int64_t>(in.size());
    if (swish) {
      optimized::FloatSwish(isa, in.data(), fast.data(), 0, n);
      optimized::FloatSwish(isa, mixed.data(), general.data(), 0, n);
    } else {
      optimized::FloatLogistic(isa, in.data(), fast.data(), 0, n);
      optimized::FloatLogistic(isa, mixed.data(), general.data(), 0, n);
    }
    for (size_t i = 0; i < in.size(); ++i) {
      if (i % 8 == 7) continue;
      ASSERT_EQ(0, std::memcmp(&fast[i], &general[i], sizeof(float)))
          << optimized::IsaName(isa) << (swish ? " swish" : " logistic") << " x = " << in[i]
          << ": " << fast[i] << " vs " << general[i];
    }
  }
}

class FloatActivationTest : public ::testing::TestWithParam<Isa> {};

std::vector<float> ActivationInputs() {
  std::vector<float> in = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-6f, 0.0624f, 0.0625f, -0.0625f,
                           -3.0f, 3.0f, 6.0f, -9.5f, 9.5f, 100.0f, -100.0f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), std::nanf("")};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> wide(-20.0f, 20.0f), narrow(-0.2f, 0.2f);
  for (int i = 0; i < 4000; ++i) in.push_back(i % 2 ? wide(rng) : narrow(rng));
  return in;
}

TEST_P(FloatActivationTest, HardSwishBitExact) {
  const Isa isa = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  const std::vector<float> in = ActivationInputs();
  for (int64_t begin : {int64_t{0}, int64_t{5}}) {
    std::vector<float> ref(in.size(), 0.0f), fast(in.size(), 0.0f);
    reference::HardSwishFloat(in.data(), ref.data(), begin, static_cast<int64_t>(in.size()));
    optimized::FloatHardSwish(isa, in.data(), fast.data(), begin,
                              static_cast<int64_t>(in.size()));
    EXPECT_EQ(0, std::memcmp(ref.data(), fast.data(), ref.size() * sizeof(float)))
        << optimized::IsaName(isa);
  }
}

TEST_P(FloatActivationTest, TanhWithinUlpsOfReference) {
  const Isa isa = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  const std::vector<float> in = ActivationInputs();
  for (int64_t end : {static_cast<int64_t>(in.size()), int64_t{3}, int64_t{13}}) {
    std::vector<float> ref(in.size(), 0.0f), fast(in.size(), 0.0f);
    reference::TanhFloat(in.data(), ref.data(), 0, end);
    optimized::FloatTanh(isa, in.data(), fast.data(), 0, end);
    for (size_t i = 0; i < in.size(); ++i) {
      if (std::isnan(ref[i])) {
        EXPECT_TRUE(std::isnan(fast[i])) << "x = " << in[i];
        continue;
      }
      EXPECT_LE(std::fabs(fast[i] - ref[i]), 3e-6f * std::fabs(ref[i]) + 1e-38f)
          << optimized::IsaName(isa) << " x = " << in[i] << ": " << fast[i] << " vs " << ref[i];
      EXPECT_EQ(std::signbit(fast[i]), std::signbit(ref[i])) << "x = " << in[i];
    }
  }
}

// EXP: within 1e-6 relative of std::exp (the reference) over the whole
// range, the ends too: underflow to 0 and denormal results (x below -87.3,
// compared to float's smallest denormal), overflow to infinity from 88.73,
// +-infinity, NaN; tails of 3, 13 and 17 values.
TEST_P(FloatActivationTest, ExpWithinRoundingOfReference) {
  const Isa isa = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  std::vector<float> in = ActivationInputs();
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> full(-110.0f, 95.0f);
  for (int i = 0; i < 4000; ++i) in.push_back(full(rng));
  for (float x : {-103.9f, -103.28f, -100.0f, -87.5f, -87.33f, -87.3f, 88.72f, 88.73f, 89.5f,
                  -1e-8f, 1e-8f, 0.693359375f, -0.34657359f, 0.34657359f})
    in.push_back(x);
  for (int64_t end : {static_cast<int64_t>(in.size()), int64_t{3}, int64_t{13}, int64_t{17}}) {
    std::vector<float> ref(in.size(), 0.0f), fast(in.size(), 0.0f);
    for (int64_t i = 0; i < end; ++i) ref[i] = std::exp(in[i]);
    optimized::FloatExp(isa, in.data(), fast.data(), 0, end);
    for (size_t i = 0; i < in.size(); ++i) {
      if (std::isnan(ref[i])) {
        EXPECT_TRUE(std::isnan(fast[i])) << "x = " << in[i];
        continue;
      }
      if (std::isinf(ref[i]) || ref[i] == 0.0f) {
        EXPECT_EQ(fast[i], ref[i]) << optimized::IsaName(isa) << " x = " << in[i];
        continue;
      }
      EXPECT_LE(std::fabs(fast[i] - ref[i]),
                1e-6f * ref[i] + std::numeric_limits<float>::denorm_min())
          << optimized::IsaName(isa) << " x = " << in[i] << ": " << fast[i] << " vs " << ref[i];
    }
  }
}

// GELU: within 2e-6 relative of the reference (exact form: its erfc; the
// approximate form: plus the reference's own cancellation in 1 + tanh(u), at
// most 2 ulp of 1 times |x| / 2), the sign kept, NaN kept; scalar is the
// reference itself. Inputs include the erfc tail (x down to -14, results near
// float's smallest normals), the cut-over at 0 and the tile tails.
TEST_P(FloatActivationTest, GeluWithinRoundingOfReference) {
  const Isa isa = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  std::vector<float> in = ActivationInputs();
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> tail(-14.0f, -3.0f), unit(-3.0f, 3.0f);
  for (int i = 0; i < 4000; ++i) in.push_back(i % 2 ? tail(rng) : unit(rng));
  for (float x : {-13.0f, -12.5f, -10.0f, -5.0f, -1e-3f, 1e-3f, 5.0f, 13.0f})
    in.push_back(x);
  for (bool approximate : {false, true}) {
    for (int64_t end : {static_cast<int64_t>(in.size()), int64_t{3}, int64_t{13}, int64_t{17}}) {
      std::vector<float> ref(in.size(), 0.0f), fast(in.size(), 0.0f);
      reference::GeluFloat(approximate, in.data(), ref.data(), 0, end);
      optimized::FloatGelu(isa, approximate, in.data(), fast.data(), 0, end);
      for (size_t i = 0; i < in.size(); ++i) {
        if (std::isnan(ref[i])) {
          EXPECT_TRUE(std::isnan(fast[i])) << "x = " << in[i];
          continue;
        }
        if (std::isinf(ref[i])) {
          EXPECT_EQ(fast[i], ref[i]) << "x = " << in[i];
          continue;
        }
        const float cancellation =
            approximate && i < static_cast<size_t>(end) ? 1.2e-7f * std::fabs(in[i]) : 0.0f;
        EXPECT_LE(std::fabs(fast[i] - ref[i]),
                  2e-6f * std::fabs(ref[i]) + cancellation + 1e-37f)
            << optimized::IsaName(isa) << (approximate ? " approximate" : " exact")
            << " x = " << in[i] << ": " << fast[i] << " vs " << ref[i];
        if (ref[i] != 0.0f) {
          EXPECT_EQ(std::signbit(fast[i]), std::signbit(ref[i])) << "x = " << in[i];
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, FloatActivationTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni,
                                           Isa::kNeon),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(optimized::IsaName(info.param));
                         });

INSTANTIATE_TEST_SUITE_P(Isas, FloatLogisticTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni,
                                           Isa::kNeon),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(optimized::IsaName(info.param));
                         });

// --------------------------------------------------------------- SOFTMAX

class FloatSoftmaxTest : public ::testing::TestWithParam<std::tuple<Isa, int>> {};

TEST_P(FloatSoftmaxTest, WithinRoundingOfReference) {
  const auto [isa, depth] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  if (!optimized::HasFloatLogistic(isa)) GTEST_SKIP() << "no vector exp on this ISA";
  const int rows = 5;
  std::mt19937 rng(depth);
  std::uniform_real_distribution<float> dist(-30.0f, 30.0f);
  std::vector<float> in(static_cast<size_t>(rows) * depth);
  for (float& x : in) x = dist(rng);
  if (depth > 3) {
    in[1] = -std::numeric_limits<float>::infinity();  // row 0: exp gives (about) 0
    in[depth + 2] = std::nanf("");                    // row 1: NaN everywhere, as the reference
    // Row 2: one large value among very small ones, in lane 1, which a
    // reduction that misses lanes would not see (exp(x - max) then overflows).
    // Row 3 the same with it in lane 6 (the upper half of a vector).
    for (int c = 0; c < depth; ++c) in[2 * depth + c] = in[3 * depth + c] = -95.0f;
    in[2 * depth + 1] = 95.0f;
    in[3 * depth + std::min(6, depth - 1)] = 95.0f;
  }
  for (float beta : {1.0f, 0.3f}) {
    std::vector<float> ref(in.size()), fast(in.size());
    reference::SoftmaxFloat(beta, in.data(), ref.data(), depth, 0, rows);
    optimized::FloatSoftmax(isa, beta, in.data(), fast.data(), depth, 2, rows);
    optimized::FloatSoftmax(isa, beta, in.data(), fast.data(), depth, 0, 2);
    for (size_t i = 0; i < ref.size(); ++i) {
      if (std::isnan(ref[i])) {
        EXPECT_TRUE(std::isnan(fast[i])) << i;
        continue;
      }
      EXPECT_LE(std::fabs(fast[i] - ref[i]), 1e-5f * ref[i] + 1e-37f)
          << optimized::IsaName(isa) << " depth " << depth << " beta " << beta << " element "
          << i << ": " << fast[i] << " vs " << ref[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Depths, FloatSoftmaxTest,
                         ::testing::Combine(::testing::Values(Isa::kScalar, Isa::kAvx2,
                                                              Isa::kAvx512Vnni, Isa::kNeon),
                                            ::testing::Values(1, 3, 7, 8, 9, 16, 17, 33, 1001)),
                         [](const ::testing::TestParamInfo<FloatSoftmaxTest::ParamType>& info) {
                           return std::string(optimized::IsaName(std::get<0>(info.param))) +
                                  "_" + std::to_string(std::get<1>(info.param));
                         });

// ------------------------------- ADD / SUB / MUL / DIV / SQUARED_DIFFERENCE

struct BinaryCase {
  std::vector<int32_t> a, b;  // shapes; the output is their broadcast
};

class FloatBinaryTest : public ::testing::TestWithParam<std::tuple<Isa, BinaryCase>> {};

TEST_P(FloatBinaryTest, BitExactWithReference) {
  const auto [isa, c] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  if (!optimized::HasFloatBinary(isa)) GTEST_SKIP() << "no vector float binary on this ISA";
  const size_t rank = std::max(c.a.size(), c.b.size());
  std::vector<int32_t> out_dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int32_t da = i < rank - c.a.size() ? 1 : c.a[i - (rank - c.a.size())];
    const int32_t db = i < rank - c.b.size() ? 1 : c.b[i - (rank - c.b.size())];
    out_dims[i] = std::max(da, db);
  }
  const reference::BroadcastPlan plan = reference::MakeBroadcastPlan(c.a, c.b, out_dims);
  auto count = [](const std::vector<int32_t>& d) {
    size_t n = 1;
    for (int32_t x : d) n *= x;
    return n;
  };
  std::mt19937 rng(static_cast<uint32_t>(count(c.a) * 7 + count(c.b)));
  std::vector<float> a = Random(rng, count(c.a)), b = Random(rng, count(c.b));
  // Special values: signed zeros, infinities, NaN, values at the clamp.
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::nanf(""), 6.0f, 1e-40f};
  for (size_t i = 0; i < a.size(); i += 5) a[i] = specials[(i / 5) % 7];
  for (size_t i = 1; i < b.size(); i += 7) b[i] = specials[(i / 7 + 3) % 7];
  using reference::BinaryOp;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,
                      BinaryOp::kSquaredDifference}) {
    for (bool relu6 : {false, true}) {
      // SQUARED_DIFFERENCE has no activation: the op passes the infinite range
      // and the result must be the op's own reference, inf and NaN included.
      const bool squared = op == BinaryOp::kSquaredDifference;
      if (squared && relu6) continue;
      const float lo = relu6 ? 0.0f : squared ? -kInf : kLowest;
      const float hi = relu6 ? 6.0f : squared ? kInf : kMax;
      std::vector<float> ref(plan.num_elements, 1.0f), fast(plan.num_elements, 1.0f);
      if (squared)
        reference::SquaredDifference(plan, a.data(), b.data(), ref.data(), 0, plan.num_elements);
      else
        reference::BinaryArithmetic<float>(op, plan, a.data(), b.data(), ref.data(), {lo, hi}, 0,
                                           plan.num_elements);
      // In two ranges split inside a run (or at a row of runs).
      for (const int64_t split : {plan.num_elements / 3, plan.num_elements / 2 + 1}) {
        std::fill(fast.begin(), fast.end(), 1.0f);
        optimized::FloatBinary(isa, op, plan, a.data(), b.data(), fast.data(), lo, hi, split,
                               plan.num_elements);
        optimized::FloatBinary(isa, op, plan, a.data(), b.data(), fast.data(), lo, hi, 0, split);
        ASSERT_EQ(0, std::memcmp(ref.data(), fast.data(), ref.size() * sizeof(float)))
            << optimized::IsaName(isa) << " op " << static_cast<int>(op) << " relu6 " << relu6
            << " split " << split;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FloatBinaryTest,
    ::testing::Combine(
        ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni, Isa::kNeon),
        ::testing::Values(BinaryCase{{1, 7, 9, 33}, {1, 7, 9, 33}},  // same shape
                          BinaryCase{{1, 5, 6, 17}, {17}},           // per channel
                          BinaryCase{{2, 4, 4, 40}, {2, 1, 1, 40}},  // squeeze-excite
                          BinaryCase{{1}, {3, 5, 19}},               // scalar first
                          BinaryCase{{4, 1, 23}, {1, 6, 1}},         // both broadcast
                          BinaryCase{{1000}, {1}}, BinaryCase{{15}, {15}},
                          // Rows of short runs: per-channel scale and shift of a
                          // DenseNet's batch norm, rows carried into outer dims.
                          BinaryCase{{1, 24, 24, 16}, {16}}, BinaryCase{{40}, {1, 12, 12, 40}},
                          BinaryCase{{3, 5, 8}, {3, 1, 8}}, BinaryCase{{2, 3, 4, 5}, {2, 3, 1, 5}},
                          // A layer norm's x - mean: one value per row of 32.
                          BinaryCase{{1, 16, 32}, {1, 16, 1}})),
    [](const ::testing::TestParamInfo<FloatBinaryTest::ParamType>& info) {
      return std::string(optimized::IsaName(std::get<0>(info.param))) + "_" +
             std::to_string(info.index);
    });

// ------------------------------------------------------------------ MEAN

struct MeanCase {
  std::vector<int32_t> dims;
  std::vector<int> axes;
};

class FloatMeanTest : public ::testing::TestWithParam<std::tuple<Isa, MeanCase>> {};

TEST_P(FloatMeanTest, BitExactWithReference) {
  const auto [isa, c] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  bool reduced[reference::kMaxReduceRank] = {};
  for (int a : c.axes) reduced[a] = true;
  const reference::ReduceShape shape =
      reference::MakeReduceShape(static_cast<int>(c.dims.size()), c.dims.data(), reduced);
  optimized::MeanSum8 plan;
  ASSERT_TRUE(plan.Plan(shape));
  plan.isa = isa;
  std::mt19937 rng(static_cast<uint32_t>(shape.input_count));
  std::vector<float> in = Random(rng, shape.input_count);
  for (size_t i = 0; i < in.size(); i += 97) in[i] = i % 2 ? -0.0f : 1e30f;
  std::vector<float> ref(shape.output_count), fast(shape.output_count);
  reference::MeanFloat(shape, in.data(), ref.data());
  optimized::MeanFloatContiguous(plan, static_cast<float>(shape.reduced_count), in.data(),
                                 fast.data());
  EXPECT_EQ(0, std::memcmp(ref.data(), fast.data(), ref.size() * sizeof(float)))
      << optimized::IsaName(isa);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FloatMeanTest,
    ::testing::Combine(::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni, Isa::kNeon),
                       ::testing::Values(MeanCase{{1, 7, 7, 1280}, {1, 2}},
                                         MeanCase{{2, 5, 3, 17}, {1, 2}},
                                         MeanCase{{3, 4, 65}, {1}}, MeanCase{{9, 33}, {0}},
                                         MeanCase{{6, 7}, {1}}, MeanCase{{1, 1, 1, 8}, {1, 2}},
                                         // Over the last axis: rows below, at and above
                                         // the 8 / 16 lanes of the row-sum kernels.
                                         MeanCase{{8, 2}, {1}}, MeanCase{{1, 16, 64}, {2}},
                                         MeanCase{{23, 5}, {1}},
                                         MeanCase{{2, 3, 5, 33}, {3}})),
    [](const ::testing::TestParamInfo<FloatMeanTest::ParamType>& info) {
      return std::string(optimized::IsaName(std::get<0>(info.param))) + "_" +
             std::to_string(info.index);
    });

// ------------------------------------------------------------ interpreter

// CONV_2D 3x3 -> DEPTHWISE 3x3 stride 2 -> CONV_2D 1x1 -> FULLY_CONNECTED.
std::vector<float> RunFloatModel(KernelSet kernels, int threads, const std::vector<float>& input,
                                 std::mt19937 rng) {
  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {1, 20, 18, 3});
  const int f1 = m.AddConst<float>(DataType::kFloat32, {24, 3, 3, 3}, Random(rng, 24 * 27));
  const int b1 = m.AddConst<float>(DataType::kFloat32, {24}, Random(rng, 24));
  const int t1 = m.AddTensor(DataType::kFloat32);
  Conv2DParams conv;
  conv.padding = Padding::kSame;
  conv.stride_h = conv.stride_w = 1;
  conv.activation = Activation::kRelu6;
  m.AddOp(BuiltinOp::kConv2d, {in, f1, b1}, {t1}, conv);
  const int f2 = m.AddConst<float>(DataType::kFloat32, {1, 3, 3, 24}, Random(rng, 9 * 24));
  const int b2 = m.AddConst<float>(DataType::kFloat32, {24}, Random(rng, 24));
  const int t2 = m.AddTensor(DataType::kFloat32);
  DepthwiseConv2DParams dw;
  dw.padding = Padding::kSame;
  dw.stride_h = dw.stride_w = 2;
  dw.depth_multiplier = 1;
  dw.activation = Activation::kRelu;
  m.AddOp(BuiltinOp::kDepthwiseConv2d, {t1, f2, b2}, {t2}, dw);
  const int f3 = m.AddConst<float>(DataType::kFloat32, {40, 1, 1, 24}, Random(rng, 40 * 24));
  // A bias everywhere: LiteRT's float CONV_2D refuses a node without one, and
  // every case here is replayed there.
  const int b3 = m.AddConst<float>(DataType::kFloat32, {40}, Random(rng, 40));
  const int t3 = m.AddTensor(DataType::kFloat32);
  Conv2DParams pw;
  pw.padding = Padding::kValid;
  pw.stride_h = pw.stride_w = 1;
  m.AddOp(BuiltinOp::kConv2d, {t2, f3, b3}, {t3}, pw);
  const int f4 = m.AddConst<float>(DataType::kFloat32, {10, 10 * 9 * 40},
                                   Random(rng, 10 * 10 * 9 * 40));
  const int b4 = m.AddConst<float>(DataType::kFloat32, {10}, Random(rng, 10));
  const int out = m.AddOutput(DataType::kFloat32);
  FullyConnectedParams fc;
  m.AddOp(BuiltinOp::kFullyConnected, {t3, f4, b4}, {out}, fc);
  m.Build(threads, kernels);
  m.SetInput<float>(0, input);
  m.Invoke();
  return m.GetOutput<float>(0);
}

TEST(OptimizedFloatTest, InterpreterOptimizedCloseToReference) {
  std::mt19937 rng(5);
  const std::vector<float> input = Random(rng, 20 * 18 * 3);
  const std::vector<float> ref = RunFloatModel(KernelSet::kReference, 1, input, rng);
  float scale = 0;
  for (float v : ref) scale = std::max(scale, std::fabs(v));
  for (Isa isa : testing::SupportedIsas()) {
    optimized::ScopedIsaOverride force(isa);
    for (int threads : {1, 2}) {
      const std::vector<float> fast = RunFloatModel(KernelSet::kOptimized, threads, input, rng);
      ASSERT_EQ(fast.size(), ref.size());
      // Four layers of rounding differences: relative to the largest output.
      for (size_t i = 0; i < ref.size(); ++i)
        EXPECT_NEAR(fast[i], ref[i], 1e-4f * scale)
            << optimized::IsaName(isa) << " threads " << threads << " output " << i;
      if (isa == Isa::kScalar) {
        EXPECT_EQ(fast, ref) << "scalar runs the reference kernels";
      }
    }
  }
}

TEST(OptimizedFloatTest, RepeatChannelsRepeatsEachChannel) {
  // The constant-multiplier copies (2, 3, 4) and the general loop, over
  // pixel ranges that start and end anywhere; pixels outside stay untouched.
  for (int multiplier = 1; multiplier <= 5; ++multiplier) {
    for (int depth : {1, 3, 8, 17}) {
      const int pixels = 7;
      std::vector<float> in(static_cast<size_t>(pixels) * depth);
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) + 0.5f;
      for (int begin = 0; begin <= pixels; begin += 3) {
        for (int end = begin; end <= pixels; end += 2) {
          const size_t out_depth = static_cast<size_t>(depth) * multiplier;
          std::vector<float> got(pixels * out_depth, -1.0f), expected(got);
          for (int px = begin; px < end; ++px)
            for (int c = 0; c < depth; ++c)
              for (int j = 0; j < multiplier; ++j)
                expected[px * out_depth + c * multiplier + j] = in[px * depth + c];
          optimized::RepeatChannels(in.data(), begin, end, depth, multiplier, got.data());
          ASSERT_EQ(expected, got) << "multiplier " << multiplier << " depth " << depth
                                   << " pixels [" << begin << ", " << end << ")";
        }
      }
    }
  }
}

// DEPTHWISE 3x3 with depth multiplier 4 (3 -> 12 channels) -> CONV_2D 3x3
// stride 1 (Winograd: 12 -> 16) -> grouped CONV_2D 3x3 (4 groups of 4 -> 24).
// Inputs and weights in [0, 1): no cancellation, so three layers of
// rounding stay within the 1e-5 relative tolerance of the LiteRT replay
// (signed values are the kernel tests' above).
std::vector<float> RunWinogradGroupedModel(KernelSet kernels, int threads,
                                           const std::vector<float>& input, std::mt19937 rng) {
  const auto NonNegative = [](std::mt19937& r, size_t n) {
    std::uniform_real_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(r);
    return v;
  };
  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {2, 13, 11, 3});
  const int f1 = m.AddConst<float>(DataType::kFloat32, {1, 3, 3, 12}, NonNegative(rng, 9 * 12));
  const int b1 = m.AddConst<float>(DataType::kFloat32, {12}, NonNegative(rng, 12));
  const int t1 = m.AddTensor(DataType::kFloat32);
  DepthwiseConv2DParams dw;
  dw.padding = Padding::kSame;
  dw.stride_h = dw.stride_w = 1;
  dw.depth_multiplier = 4;
  dw.activation = Activation::kRelu6;
  m.AddOp(BuiltinOp::kDepthwiseConv2d, {in, f1, b1}, {t1}, dw);
  const int f2 = m.AddConst<float>(DataType::kFloat32, {16, 3, 3, 12}, NonNegative(rng, 16 * 9 * 12));
  const int b2 = m.AddConst<float>(DataType::kFloat32, {16}, NonNegative(rng, 16));
  const int t2 = m.AddTensor(DataType::kFloat32);
  Conv2DParams conv;
  conv.padding = Padding::kSame;
  conv.stride_h = conv.stride_w = 1;
  conv.activation = Activation::kRelu;
  m.AddOp(BuiltinOp::kConv2d, {t1, f2, b2}, {t2}, conv);
  const int f3 = m.AddConst<float>(DataType::kFloat32, {24, 3, 3, 4}, NonNegative(rng, 24 * 9 * 4));
  const int b3 = m.AddConst<float>(DataType::kFloat32, {24}, NonNegative(rng, 24));
  const int out = m.AddOutput(DataType::kFloat32);
  Conv2DParams grouped;
  grouped.padding = Padding::kValid;
  grouped.stride_h = grouped.stride_w = 1;
  m.AddOp(BuiltinOp::kConv2d, {t2, f3, b3}, {out}, grouped);
  m.Build(threads, kernels);
  m.SetInput<float>(0, input);
  m.Invoke();
  return m.GetOutput<float>(0);
}

TEST(OptimizedFloatTest, InterpreterWinogradGroupedDepthMultiplierCloseToReference) {
  std::mt19937 rng(9);
  std::vector<float> input = Random(rng, 2 * 13 * 11 * 3);
  for (float& x : input) x = std::fabs(x);
  const std::vector<float> ref = RunWinogradGroupedModel(KernelSet::kReference, 1, input, rng);
  float scale = 0;
  for (float v : ref) scale = std::max(scale, std::fabs(v));
  for (Isa isa : testing::SupportedIsas()) {
    optimized::ScopedIsaOverride force(isa);
    for (int threads : {1, 2}) {
      const std::vector<float> fast =
          RunWinogradGroupedModel(KernelSet::kOptimized, threads, input, rng);
      ASSERT_EQ(fast.size(), ref.size());
      for (size_t i = 0; i < ref.size(); ++i)
        EXPECT_NEAR(fast[i], ref[i], 1e-4f * scale)
            << optimized::IsaName(isa) << " threads " << threads << " output " << i;
    }
  }
}

}  // namespace
}  // namespace delegato
