// The float32 and 8-bit TRANSPOSE_CONV gather kernels against the reference
// scatter, byte for byte, for every ISA: output channels below, at and above the
// 8/16-lane vectors and the 32/64-channel blocks, strides 1-3, filters 1x1 to
// 4x4 (taps larger and smaller than the stride), padding that cuts taps off
// at every border, output sizes one beyond the input's reach, several
// batches, with and without bias, clamps, special values (float), per-channel
// multipliers and shifts, filter and input offsets (at their extremes),
// input channels below, at and past the 16-channel chunks, extreme bytes (8-bit),
// 1-3 tasks.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/isa.h"
#include "kernels/optimized/transpose_conv_float.h"
#include "kernels/optimized/transpose_conv_quant.h"
#include "kernels/reference/transpose_conv.h"

namespace delegato {
namespace {

using optimized::Isa;

struct Case {
  int batches, in_h, in_w, in_c, out_c, filter_h, filter_w, stride, pad, extra;
};

class TransposeConvFloatTest : public ::testing::TestWithParam<std::tuple<Isa, Case>> {};

TEST_P(TransposeConvFloatTest, BitExactWithReference) {
  const auto [isa, c] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  reference::TransposeConvGeometry g;
  g.batches = c.batches;
  g.input_height = c.in_h;
  g.input_width = c.in_w;
  g.input_depth = c.in_c;
  g.output_depth = c.out_c;
  g.filter_height = c.filter_h;
  g.filter_width = c.filter_w;
  g.stride_height = g.stride_width = c.stride;
  g.pad_height = c.pad;
  g.pad_width = c.pad == 0 ? 0 : c.pad - 1;
  g.output_height = (c.in_h - 1) * c.stride + c.filter_h - 2 * g.pad_height + c.extra;
  g.output_width = (c.in_w - 1) * c.stride + c.filter_w - 2 * g.pad_width + c.extra;
  ASSERT_GT(g.output_height, 0);
  ASSERT_GT(g.output_width, 0);

  std::mt19937 rng(static_cast<uint32_t>(c.in_c * 131 + c.out_c * 7 + c.stride));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> input(static_cast<size_t>(g.batches) * c.in_h * c.in_w * c.in_c);
  std::vector<float> filter(static_cast<size_t>(c.out_c) * c.filter_h * c.filter_w * c.in_c);
  std::vector<float> bias(static_cast<size_t>(c.out_c));
  for (float& x : input) x = dist(rng);
  for (float& x : filter) x = dist(rng);
  for (float& x : bias) x = dist(rng);
  // Values whose sums depend on the order of addition, signed zeros, NaN.
  for (size_t i = 0; i < input.size(); i += 53) input[i] = i % 2 ? 1e30f : -0.0f;
  if (input.size() > 100) input[100] = std::nanf("");
  for (size_t i = 0; i < filter.size(); i += 61) filter[i] = -1e-30f;

  optimized::TransposeConvFloat kernel;
  kernel.Prepare(isa, g, filter.data());
  const float clamps[][2] = {{std::numeric_limits<float>::lowest(),
                              std::numeric_limits<float>::max()},
                             {0.0f, 6.0f}};
  for (const auto& clamp : clamps) {
    for (const float* b : {static_cast<const float*>(bias.data()),
                           static_cast<const float*>(nullptr)}) {
      std::vector<float> ref(g.output_elements()), fast(g.output_elements(), 7.0f);
      reference::TransposeConvFloat(g, input.data(), filter.data(), b, clamp[0], clamp[1],
                                    ref.data());
      // 1-3 tasks over the output rows.
      for (int tasks = 1; tasks <= 3; ++tasks) {
        std::fill(fast.begin(), fast.end(), 7.0f);
        const int64_t rows = kernel.rows();
        for (int t = 0; t < tasks; ++t)
          kernel.Run(input.data(), b, clamp[0], clamp[1], fast.data(), rows * t / tasks,
                     rows * (t + 1) / tasks);
        EXPECT_EQ(0, std::memcmp(ref.data(), fast.data(), ref.size() * sizeof(float)))
            << optimized::IsaName(isa) << " tasks " << tasks << (b ? " bias" : " no bias")
            << " clamp " << clamp[1];
      }
    }
  }
}

reference::TransposeConvGeometry Geometry(const Case& c) {
  reference::TransposeConvGeometry g;
  g.batches = c.batches;
  g.input_height = c.in_h;
  g.input_width = c.in_w;
  g.input_depth = c.in_c;
  g.output_depth = c.out_c;
  g.filter_height = c.filter_h;
  g.filter_width = c.filter_w;
  g.stride_height = g.stride_width = c.stride;
  g.pad_height = c.pad;
  g.pad_width = c.pad == 0 ? 0 : c.pad - 1;
  g.output_height = (c.in_h - 1) * c.stride + c.filter_h - 2 * g.pad_height + c.extra;
  g.output_width = (c.in_w - 1) * c.stride + c.filter_w - 2 * g.pad_width + c.extra;
  return g;
}

class TransposeConvQuantTest
    : public ::testing::TestWithParam<std::tuple<Isa, Case, bool /*uint8*/>> {};

template <class T>
void CheckQuant(Isa isa, const Case& c) {
  constexpr bool kUint8 = std::is_same_v<T, uint8_t>;
  const reference::TransposeConvGeometry g = Geometry(c);
  ASSERT_GT(g.output_height, 0);
  ASSERT_GT(g.output_width, 0);
  std::mt19937 rng(static_cast<uint32_t>(c.in_c * 17 + c.out_c * 3 + c.stride));
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<T> input(static_cast<size_t>(g.batches) * c.in_h * c.in_w * c.in_c);
  std::vector<T> filter(static_cast<size_t>(c.out_c) * c.filter_h * c.filter_w * c.in_c);
  for (T& x : input) x = static_cast<T>(byte(rng));
  for (T& x : filter) x = static_cast<T>(byte(rng));
  // Extreme bytes at both ends.
  for (size_t i = 0; i < input.size(); i += 7) input[i] = static_cast<T>(i % 2 ? 0 : 255);
  for (size_t i = 0; i < filter.size(); i += 5) filter[i] = static_cast<T>(i % 2 ? 0x80 : 0x7F);
  std::vector<int32_t> bias(static_cast<size_t>(c.out_c)), multipliers(bias.size()),
      shifts(bias.size());
  std::uniform_int_distribution<int32_t> bias_dist(-20000, 20000);
  std::uniform_int_distribution<int32_t> mult_dist(1 << 30, INT32_MAX);
  std::uniform_int_distribution<int> shift_dist(-12, 1);
  for (size_t i = 0; i < bias.size(); ++i) {
    bias[i] = bias_dist(rng);
    multipliers[i] = mult_dist(rng);
    shifts[i] = shift_dist(rng);
  }
  reference::TransposeConvQuantParams q;
  // Offsets at their extremes in some cases: factors of -255 and 255, the
  // int16 pairs' largest products.
  q.input_offset = kUint8 ? (c.in_c % 2 ? -255 : -131) : (c.in_c % 2 ? 128 : 5);
  q.filter_offset = kUint8 ? (c.out_c % 2 ? -255 : -120) : 0;
  q.output_offset = kUint8 ? 128 : -3;
  q.act_min = kUint8 ? 10 : -128;
  q.act_max = kUint8 ? 250 : 127;
  q.multiplier = multipliers.data();
  q.shift = shifts.data();

  optimized::TransposeConvQuant kernel;
  kernel.Prepare(isa, g, q, kUint8, filter.data());
  std::vector<int32_t> scratch(g.output_elements());
  for (const int32_t* b : {static_cast<const int32_t*>(bias.data()),
                           static_cast<const int32_t*>(nullptr)}) {
    std::vector<T> ref(g.output_elements()), fast(g.output_elements());
    reference::TransposeConvQuantized<T, int32_t, int32_t>(g, q, input.data(), filter.data(), b,
                                                           scratch.data(), ref.data());
    for (int tasks = 1; tasks <= 3; ++tasks) {
      std::fill(fast.begin(), fast.end(), T{7});
      const int64_t rows = kernel.rows();
      for (int t = 0; t < tasks; ++t)
        kernel.Run(input.data(), b, fast.data(), rows * t / tasks, rows * (t + 1) / tasks);
      EXPECT_EQ(ref, fast) << optimized::IsaName(isa) << " tasks " << tasks
                           << (b ? " bias" : " no bias");
    }
  }
}

TEST_P(TransposeConvQuantTest, BitExactWithReference) {
  const auto [isa, c, is_uint8] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  if (is_uint8)
    CheckQuant<uint8_t>(isa, c);
  else
    CheckQuant<int8_t>(isa, c);
}

// The hybrid op's int32 sums: per batch its own input offset (minus the
// quantized image's zero point), filter without offset.
class TransposeConvSumsTest : public ::testing::TestWithParam<std::tuple<Isa, Case>> {};

TEST_P(TransposeConvSumsTest, EqualToReferenceAccumulators) {
  const auto [isa, c] = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  reference::TransposeConvGeometry g = Geometry(c);
  g.batches = 2;
  std::mt19937 rng(static_cast<uint32_t>(c.in_c * 29 + c.out_c));
  std::uniform_int_distribution<int> byte(-128, 127);
  const int64_t in_size = int64_t{c.in_h} * c.in_w * c.in_c;
  const int64_t out_size = int64_t{g.output_height} * g.output_width * c.out_c;
  std::vector<int8_t> input(static_cast<size_t>(2 * in_size));
  std::vector<int8_t> filter(static_cast<size_t>(c.out_c) * c.filter_h * c.filter_w * c.in_c);
  for (int8_t& x : input) x = static_cast<int8_t>(byte(rng));
  for (int8_t& x : filter) x = static_cast<int8_t>(byte(rng));
  input[0] = -128;
  filter[0] = -128;
  const int32_t offsets[2] = {128, -37};
  std::vector<int32_t> ref(g.output_elements()), fast(g.output_elements(), 7);
  reference::TransposeConvGeometry one = g;
  one.batches = 1;
  for (int b = 0; b < 2; ++b) {
    const int32_t off = offsets[b];
    reference::TransposeConvScatter(one, input.data() + b * in_size, filter.data(),
                                    ref.data() + b * out_size, [off](int8_t x, int8_t w) {
                                      return (int32_t{x} + off) * int32_t{w};
                                    });
  }
  optimized::TransposeConvQuant kernel;
  kernel.PrepareSums(isa, g, filter.data());
  const int64_t rows = kernel.rows();
  for (int t = 0; t < 3; ++t)
    kernel.Sums(input.data(), offsets, fast.data(), rows * t / 3, rows * (t + 1) / 3);
  EXPECT_EQ(ref, fast) << optimized::IsaName(isa);
}

const Case kCases[] = {
    {1, 4, 4, 8, 16, 3, 3, 2, 1, 1},    // the encoder-decoder's shape class
    {2, 3, 5, 3, 1, 2, 2, 2, 0, 0},     // one output channel, 2x2 stride 2
    {1, 5, 4, 7, 7, 3, 3, 1, 1, 0},     // below a vector
    {1, 3, 3, 5, 8, 4, 4, 2, 2, 1},
    {1, 3, 4, 4, 9, 3, 3, 3, 0, 2},     // taps smaller than the stride: gaps
    {1, 2, 3, 6, 17, 4, 3, 2, 1, 0},
    {1, 4, 3, 2, 32, 3, 3, 2, 1, 1},
    {1, 2, 2, 3, 33, 1, 1, 1, 0, 0},
    {1, 3, 2, 5, 64, 3, 3, 2, 0, 1},
    {2, 2, 3, 9, 65, 2, 2, 2, 0, 0},
    {1, 3, 3, 4, 70, 3, 3, 1, 2, 0},    // padding larger than the reach of some taps
    {1, 4, 4, 16, 8, 3, 3, 2, 1, 1},    // the encoder-decoder's 16 input channels
    {1, 3, 3, 17, 9, 3, 3, 2, 1, 0},    // input channels past a 16-channel chunk, odd
    {1, 2, 3, 33, 24, 2, 2, 2, 0, 1},
    // Rows wide enough for runs of 4 pixels sharing their taps (one or two
    // vectors, channel tails, strides 1-3), between clipped border pixels.
    {1, 3, 9, 5, 12, 3, 3, 2, 1, 1},
    {2, 2, 11, 16, 24, 4, 4, 3, 1, 2},
    {1, 2, 12, 6, 16, 3, 3, 1, 1, 0},
    {1, 2, 10, 3, 5, 2, 2, 2, 0, 1},
};

INSTANTIATE_TEST_SUITE_P(
    Shapes, TransposeConvFloatTest,
    ::testing::Combine(::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni),
                       ::testing::ValuesIn(kCases)),
    [](const ::testing::TestParamInfo<TransposeConvFloatTest::ParamType>& info) {
      return std::string(optimized::IsaName(std::get<0>(info.param))) + "_" +
             std::to_string(info.index);
    });

INSTANTIATE_TEST_SUITE_P(
    Shapes, TransposeConvSumsTest,
    ::testing::Combine(::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni),
                       ::testing::ValuesIn(kCases)),
    [](const ::testing::TestParamInfo<TransposeConvSumsTest::ParamType>& info) {
      return std::string(optimized::IsaName(std::get<0>(info.param))) + "_" +
             std::to_string(info.index);
    });

INSTANTIATE_TEST_SUITE_P(
    Shapes, TransposeConvQuantTest,
    ::testing::Combine(::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni),
                       ::testing::ValuesIn(kCases), ::testing::Bool()),
    [](const ::testing::TestParamInfo<TransposeConvQuantTest::ParamType>& info) {
      return std::string(optimized::IsaName(std::get<0>(info.param))) +
             (std::get<2>(info.param) ? "_uint8_" : "_int8_") + std::to_string(info.index);
    });

}  // namespace
}  // namespace delegato
