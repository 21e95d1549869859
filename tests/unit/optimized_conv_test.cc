// Optimized quantized CONV_2D (kernels/optimized/quant_conv) against the
// reference kernel, bit for bit: random geometries around the tile sizes
// (16-channel blocks, 64-channel slabs, 4/6/8/12/16-row tiles, 48-row
// panels), odd channel counts, padding, strides, dilations, zero points at
// the extremes, per-tensor and per-channel multipliers, every ISA this CPU
// runs, 1 to 3 tasks run in any order. Then the same through the interpreter
// (optimized vs reference kernel sets, 1 and 2 threads).
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/isa.h"
#include "kernels/optimized/quant_conv.h"
#include "kernels/quantization.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/fully_connected.h"
#include "test_util.h"

namespace delegato {
namespace {

using optimized::Isa;
using testing::SupportedIsas;
using testing::OpModel;
using testing::Q;
using testing::QPerAxis;

struct RandomConv {
  reference::ConvGeometry g;
  bool is_uint8 = false;
  int32_t input_zp = 0, filter_zp = 0, output_zp = 0, act_min = 0, act_max = 0;
  std::vector<int32_t> multipliers, shifts, bias;
  bool has_bias = true;
  std::vector<uint8_t> input, filter;  // raw bytes (uint8 or int8)
  std::string Describe() const {
    return std::string(is_uint8 ? "uint8" : "int8") + " in " + std::to_string(g.batches) + "x" +
           std::to_string(g.input_height) + "x" + std::to_string(g.input_width) + "x" +
           std::to_string(g.input_depth) + " filter " + std::to_string(g.output_depth) + "x" +
           std::to_string(g.filter_height) + "x" + std::to_string(g.filter_width) + " stride " +
           std::to_string(g.stride_height) + "x" + std::to_string(g.stride_width) + " dilation " +
           std::to_string(g.dilation_height) + "x" + std::to_string(g.dilation_width) + " pad " +
           std::to_string(g.pad_height) + "x" + std::to_string(g.pad_width) + " zp in/w/out " +
           std::to_string(input_zp) + "/" + std::to_string(filter_zp) + "/" +
           std::to_string(output_zp);
  }
};

template <class T>
T Pick(std::mt19937& rng, const std::vector<T>& values) {
  return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
}

int32_t PickZeroPoint(std::mt19937& rng, bool is_uint8) {
  const int lo = is_uint8 ? 0 : -128, hi = is_uint8 ? 255 : 127;
  switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
    case 0: return lo;
    case 1: return hi;
    default: return std::uniform_int_distribution<int>(lo, hi)(rng);
  }
}

RandomConv MakeConv(std::mt19937& rng, bool is_uint8) {
  RandomConv c;
  c.is_uint8 = is_uint8;
  reference::ConvGeometry& g = c.g;
  g.batches = Pick(rng, std::vector<int>{1, 1, 1, 2});
  g.input_depth = Pick(rng, std::vector<int>{1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 64, 65, 96});
  g.filter_depth = g.input_depth;
  g.output_depth = Pick(rng, std::vector<int>{1, 3, 8, 15, 16, 17, 24, 31, 32, 33, 47, 48, 49,
                                              63, 64, 65, 80, 96, 97, 129, 144, 193});
  const bool pointwise = std::uniform_int_distribution<int>(0, 2)(rng) == 0;
  g.filter_height = pointwise ? 1 : Pick(rng, std::vector<int>{1, 2, 3, 3, 5});
  g.filter_width = pointwise ? 1 : Pick(rng, std::vector<int>{1, 2, 3, 3, 4});
  g.stride_height = pointwise ? 1 : Pick(rng, std::vector<int>{1, 1, 2, 3});
  g.stride_width = pointwise ? 1 : Pick(rng, std::vector<int>{1, 1, 2, 3});
  g.dilation_height = pointwise ? 1 : Pick(rng, std::vector<int>{1, 1, 1, 2});
  g.dilation_width = pointwise ? 1 : Pick(rng, std::vector<int>{1, 1, 1, 2, 3});
  g.input_height = std::uniform_int_distribution<int>(1, 14)(rng);
  g.input_width = std::uniform_int_distribution<int>(1, 17)(rng);
  const Padding padding = std::uniform_int_distribution<int>(0, 1)(rng) ? Padding::kSame
                                                                         : Padding::kValid;
  reference::Window2D w = reference::ComputeWindow2D(
      padding, g.stride_height, g.stride_width, g.dilation_height, g.dilation_width,
      g.input_height, g.input_width, g.filter_height, g.filter_width);
  if (w.out_height <= 0 || w.out_width <= 0) {
    w = reference::ComputeWindow2D(Padding::kSame, g.stride_height, g.stride_width,
                                   g.dilation_height, g.dilation_width, g.input_height,
                                   g.input_width, g.filter_height, g.filter_width);
  }
  g.output_height = w.out_height;
  g.output_width = w.out_width;
  g.pad_height = w.pad_height;
  g.pad_width = w.pad_width;

  c.input_zp = PickZeroPoint(rng, is_uint8);
  c.filter_zp = is_uint8 ? PickZeroPoint(rng, true) : 0;
  c.output_zp = PickZeroPoint(rng, is_uint8);
  const int lo = is_uint8 ? 0 : -128, hi = is_uint8 ? 255 : 127;
  c.act_min = lo;
  c.act_max = hi;
  if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
    c.act_min = std::uniform_int_distribution<int>(lo, hi)(rng);
    c.act_max = std::uniform_int_distribution<int>(c.act_min, hi)(rng);
  }
  const bool per_channel = !is_uint8 && std::uniform_int_distribution<int>(0, 1)(rng);
  const int k = g.filter_height * g.filter_width * g.input_depth;
  // Effective scales around 1 / (K * 100) keep outputs spread over the range;
  // some channels get larger (left-shift) or tiny multipliers.
  std::uniform_real_distribution<double> log_scale(-3.0, 1.0);
  double base = std::pow(10.0, log_scale(rng)) / (k * 64.0);
  for (int ch = 0; ch < g.output_depth; ++ch) {
    double real = base;
    if (per_channel) real = std::pow(10.0, log_scale(rng)) / (k * 64.0);
    if (std::uniform_int_distribution<int>(0, 15)(rng) == 0) real *= 1 << 20;  // left shifts
    if (std::uniform_int_distribution<int>(0, 31)(rng) == 0) real = 0.0;
    int32_t m;
    int s;
    quant::QuantizeMultiplier(real, &m, &s);
    if (s > 31) s = 31;
    c.multipliers.push_back(m);
    c.shifts.push_back(s);
  }
  c.has_bias = std::uniform_int_distribution<int>(0, 4)(rng) != 0;
  const bool huge_bias = std::uniform_int_distribution<int>(0, 7)(rng) == 0;  // wraparound
  for (int ch = 0; ch < g.output_depth; ++ch) {
    c.bias.push_back(huge_bias ? static_cast<int32_t>(rng())
                               : std::uniform_int_distribution<int32_t>(-20000, 20000)(rng));
  }
  std::uniform_int_distribution<int> byte(0, 255);
  c.input.resize(static_cast<size_t>(g.batches) * g.input_height * g.input_width * g.input_depth);
  for (auto& v : c.input) v = static_cast<uint8_t>(byte(rng));
  c.filter.resize(static_cast<size_t>(g.output_depth) * k);
  // Some filters at the extremes stress the correction terms.
  const int extreme = std::uniform_int_distribution<int>(0, 5)(rng);
  for (auto& v : c.filter) {
    v = static_cast<uint8_t>(byte(rng));
    if (extreme == 0) v = is_uint8 ? 255 : 0x80;  // 255 or -128
    if (extreme == 1) v = is_uint8 ? 0 : 0x7F;
  }
  return c;
}

std::vector<uint8_t> ReferenceOutput(const RandomConv& c) {
  const reference::ConvGeometry& g = c.g;
  std::vector<int16_t> packed(g.packed_filter_elements());
  if (c.is_uint8)
    reference::PackConvFilter(g, c.filter.data(), -c.filter_zp, packed.data());
  else
    reference::PackConvFilter(g, reinterpret_cast<const int8_t*>(c.filter.data()), 0,
                              packed.data());
  reference::ConvQuantParams q;
  q.input_offset = -c.input_zp;
  q.output_offset = c.output_zp;
  q.act_min = c.act_min;
  q.act_max = c.act_max;
  q.multiplier = c.multipliers.data();
  q.shift = c.shifts.data();
  std::vector<uint8_t> out(static_cast<size_t>(g.output_rows()) * g.output_width * g.output_depth);
  const int32_t* bias = c.has_bias ? c.bias.data() : nullptr;
  if (c.is_uint8) {
    reference::ConvQuantized(g, c.input.data(), packed.data(), bias, q, out.data(), 0,
                             g.output_rows());
  } else {
    reference::ConvQuantized(g, reinterpret_cast<const int8_t*>(c.input.data()), packed.data(),
                             bias, q, reinterpret_cast<int8_t*>(out.data()), 0, g.output_rows());
  }
  return out;
}

void ExpectSame(const std::vector<uint8_t>& expected, const std::vector<uint8_t>& actual,
                const std::string& what);

// The kernel's parameters for the case (pointers into it).
optimized::QuantConvParams ParamsOf(const RandomConv& c) {
  optimized::QuantConvParams p;
  p.geometry = c.g;
  p.is_uint8 = c.is_uint8;
  p.input_zero_point = c.input_zp;
  p.filter_zero_point = c.filter_zp;
  p.output_zero_point = c.output_zp;
  p.act_min = c.act_min;
  p.act_max = c.act_max;
  p.multiplier = c.multipliers.data();
  p.shift = c.shifts.data();
  p.filter = c.filter.data();
  p.bias = c.has_bias ? c.bias.data() : nullptr;
  return p;
}

std::vector<uint8_t> OptimizedOutput(const RandomConv& c, Isa isa, int tasks) {
  const optimized::QuantConvParams p = ParamsOf(c);
  const auto run = [&] {
    optimized::QuantConv conv(p, isa, tasks);
    // One output channel runs AVX2's dot kernel on vnni CPUs.
    const Isa expected_isa =
        isa == Isa::kAvx512Vnni && c.g.output_depth == 1 ? Isa::kAvx2 : isa;
    EXPECT_EQ(conv.isa(), expected_isa);
    const int k = c.g.filter_height * c.g.filter_width * c.g.input_depth;
    EXPECT_EQ(conv.uses_amx(), expected_isa == Isa::kAvx512Vnni && optimized::AmxSelected() &&
                                   k >= optimized::QuantConv::kAmxMinTaps);
    optimized::AlignedBuffer<uint8_t> scratch(conv.scratch_bytes());
    std::vector<uint8_t> out(
        static_cast<size_t>(c.g.output_rows()) * c.g.output_width * c.g.output_depth, 0xCD);
    for (int t = conv.num_tasks() - 1; t >= 0; --t)  // any order
      conv.RunTask(t, c.input.data(), out.data(), scratch.data());
    return out;
  };
  if (isa != Isa::kAvx512Vnni || !optimized::CpuHasAmxInt8()) return run();
  // With AMX: both the vnni kernels and the AMX tiles, which must agree.
  std::vector<uint8_t> vnni, amx;
  {
    optimized::SetAmxOverride(false);
    vnni = run();
    optimized::SetAmxOverride(true);
    amx = run();
    optimized::SetAmxOverride(std::nullopt);
  }
  ExpectSame(vnni, amx, "vnni against AMX tiles");
  return amx;
}

void ExpectSame(const std::vector<uint8_t>& expected, const std::vector<uint8_t>& actual,
                const std::string& what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != actual[i] && mismatches++ == 0) first = i;
  }
  EXPECT_EQ(mismatches, 0u) << what << ": first mismatch at " << first << " expected "
                            << int{expected[first]} << " got " << int{actual[first]};
}

TEST(OptimizedConvTest, RequantizationMatchesReference) {
  // The vector requantization against quant::MultiplyByQuantizedMultiplier
  // over extreme and random accumulators, multipliers and shifts.
  std::mt19937 rng(7);
  std::vector<int32_t> accs = {0, 1, -1, 2, -2, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1,
                               1 << 30, -(1 << 30), 12345, -12345};
  for (int i = 0; i < 2000; ++i) accs.push_back(static_cast<int32_t>(rng()));
  // Small ones too, whose results land inside the clamp bounds.
  for (int i = 0; i < 2000; ++i) accs.push_back(std::uniform_int_distribution<int32_t>(-4000, 4000)(rng));
  for (Isa isa : SupportedIsas()) {
    for (int trial = 0; trial < 200; ++trial) {
      RandomConv c;
      // Both output types and narrowed activation bounds: the clamp, offset
      // and narrowing to bytes run after the multiply.
      c.is_uint8 = trial % 2 == 1;
      reference::ConvGeometry& g = c.g;
      g.batches = 1;
      g.input_height = g.input_width = 1;
      g.output_height = g.output_width = 1;
      g.filter_height = g.filter_width = 1;
      g.input_depth = g.filter_depth = 1;
      g.output_depth = trial % 4 == 3 ? 8 : 16;  // 8: the AVX2 8-channel kernel
      c.input_zp = 0;
      c.output_zp = PickZeroPoint(rng, c.is_uint8);
      c.act_min = c.is_uint8 ? 0 : -128;
      c.act_max = c.is_uint8 ? 255 : 127;
      if (trial % 3 == 1) {
        c.act_min = std::max(c.act_min, c.output_zp);  // RELU
        c.act_max = std::min(c.act_max, c.output_zp + 6 * (trial % 5 + 1));
      }
      c.input = {0};
      c.filter.assign(g.output_depth, 1);  // x = 0: the accumulator is the bias itself
      for (int ch = 0; ch < g.output_depth; ++ch) {
        int32_t m = static_cast<int32_t>((1u << 30) + (rng() & 0x3FFFFFFF));
        if (trial % 17 == 0) m = ch == 0 ? 0 : INT32_MAX;
        c.multipliers.push_back(m);
        c.shifts.push_back(std::uniform_int_distribution<int>(-31, 31)(rng));
        c.bias.push_back(accs[rng() % accs.size()]);
      }
      ExpectSame(ReferenceOutput(c), OptimizedOutput(c, isa, 1),
                 std::string(optimized::IsaName(isa)) + " trial " + std::to_string(trial));
    }
  }
}

TEST(OptimizedConvTest, Shift64RequantizationMatchesReference) {
  // Shifts inside requantize64.h's range (right shifts up to 22, left
  // shifts, zero multipliers), extreme accumulators and zero points, int8
  // and uint8 outputs, narrow activation ranges: the vnni kernels take the
  // 64-bit rounding-shift path and must agree with the reference.
  if (!optimized::IsaSupported(Isa::kAvx512Vnni)) GTEST_SKIP() << "no AVX-512 VNNI";
  std::mt19937 rng(11);
  std::vector<int32_t> accs = {0, 1, -1, 2, -2, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1,
                               1 << 30, -(1 << 30), (1 << 30) - 1, -(1 << 30) + 1, 12345, -12345};
  for (int i = 0; i < 2000; ++i) accs.push_back(static_cast<int32_t>(rng()));
  for (int trial = 0; trial < 400; ++trial) {
    RandomConv c;
    c.is_uint8 = trial % 3 == 0;
    reference::ConvGeometry& g = c.g;
    g.batches = 1;
    g.input_height = g.input_width = 1;
    g.output_height = g.output_width = 1;
    g.filter_height = g.filter_width = 1;
    g.input_depth = g.filter_depth = 1;
    g.output_depth = std::vector<int>{16, 32, 48, 64, 7, 33}[trial % 6];
    c.input_zp = 0;
    c.filter_zp = c.is_uint8 ? 1 : 0;  // w - w_zp = 0: the accumulator is the bias itself
    c.output_zp = PickZeroPoint(rng, c.is_uint8);
    const int lo = c.is_uint8 ? 0 : -128, hi = c.is_uint8 ? 255 : 127;
    c.act_min = lo;
    c.act_max = hi;
    if (trial % 4 == 1) {
      c.act_min = std::uniform_int_distribution<int>(lo, hi)(rng);
      c.act_max = std::uniform_int_distribution<int>(c.act_min, hi)(rng);
    }
    c.input = {0};
    c.filter.assign(g.output_depth, c.is_uint8 ? 1 : 0);
    // Right shifts near the rounding-tie scale of the accumulators: a tie
    // needs acc * m to end in exactly the right bits, so also build some.
    const int max_left = trial % 5 == 0 ? 31 : 0;
    for (int ch = 0; ch < g.output_depth; ++ch) {
      int32_t m = static_cast<int32_t>((1u << 30) + (rng() & 0x3FFFFFFF));
      if (trial % 17 == 0) m = ch == 0 ? 0 : INT32_MAX;
      if (trial % 13 == 0) m = 1 << 30;
      const int shift = std::uniform_int_distribution<int>(-22, max_left)(rng);
      int32_t acc = accs[rng() % accs.size()];
      if (ch % 3 == 0 && shift < 0 && m == (1 << 30)) {
        // acc * 2^30 / 2^(31 + r) lands on a half: acc = odd * 2^r.
        acc = static_cast<int32_t>(static_cast<uint32_t>(rng() | 1u) << -shift);
      }
      c.multipliers.push_back(m);
      c.shifts.push_back(shift);
      c.bias.push_back(acc);
    }
    optimized::QuantConvParams p;
    p.geometry = c.g;
    p.shift = c.shifts.data();
    p.multiplier = c.multipliers.data();
    p.is_uint8 = c.is_uint8;
    p.filter = c.filter.data();
    p.filter_zero_point = c.filter_zp;
    ASSERT_TRUE(optimized::QuantConv(p, Isa::kAvx512Vnni, 1).shift64_requant());
    const std::vector<uint8_t> expected = ReferenceOutput(c);
    const std::vector<uint8_t> got = OptimizedOutput(c, Isa::kAvx512Vnni, 1);
    for (int ch = 0; ch < g.output_depth; ++ch)
      EXPECT_EQ(expected[ch], got[ch]) << "trial " << trial << " channel " << ch
                                       << " multiplier " << c.multipliers[ch] << " shift "
                                       << c.shifts[ch] << " accumulator " << c.bias[ch] << ": "
                                       << c.Describe();
    if (::testing::Test::HasFailure()) return;
  }
}

// Per-slab requantization modes on vnni (QuantConv::SlabRequant): a layer
// built so that Prepare must pick `mode` for every channel, or (kMixed) one
// whose 16-channel groups alternate between the magnitude form and forms it
// rules out.
enum class ModeCase { kMagnitudeSmall, kMagnitudeLarge, kShift64, kGeneral, kTies, kMixed };

RandomConv MakeModeConv(std::mt19937& rng, bool is_uint8, ModeCase mode) {
  RandomConv c;
  c.is_uint8 = is_uint8;
  reference::ConvGeometry& g = c.g;
  g.batches = 1;
  const bool pointwise = mode == ModeCase::kMagnitudeSmall || rng() % 2 == 0;
  g.input_depth = g.filter_depth = Pick(rng, std::vector<int>{1, 3, 8, 16, 17, 24});
  g.output_depth = Pick(rng, std::vector<int>{8, 16, 17, 24, 33, 48, 64, 80, 144, 193});
  g.filter_height = g.filter_width = pointwise ? 1 : 3;
  g.stride_height = g.stride_width = pointwise ? 1 : 1 + static_cast<int>(rng() % 2);
  g.dilation_height = g.dilation_width = 1;
  g.input_height = std::uniform_int_distribution<int>(1, 13)(rng);
  g.input_width = std::uniform_int_distribution<int>(1, 13)(rng);
  const reference::Window2D w = reference::ComputeWindow2D(
      Padding::kSame, g.stride_height, g.stride_width, 1, 1, g.input_height, g.input_width,
      g.filter_height, g.filter_width);
  g.output_height = w.out_height;
  g.output_width = w.out_width;
  g.pad_height = w.pad_height;
  g.pad_width = w.pad_width;
  c.input_zp = PickZeroPoint(rng, is_uint8);
  c.filter_zp = is_uint8 ? PickZeroPoint(rng, true) : 0;
  c.output_zp = PickZeroPoint(rng, is_uint8);
  c.act_min = is_uint8 ? 0 : -128;
  c.act_max = is_uint8 ? 255 : 127;
  if (rng() % 3 == 0) {
    c.act_min = std::max(c.act_min, c.output_zp);  // RELU6-like
    c.act_max = std::min(c.act_max, c.act_min + 40);
  }
  const int k = g.filter_height * g.filter_width * g.input_depth;
  c.input.resize(static_cast<size_t>(g.input_height) * g.input_width * g.input_depth);
  for (auto& v : c.input) v = static_cast<uint8_t>(rng());
  c.filter.resize(static_cast<size_t>(g.output_depth) * k);
  for (auto& v : c.filter) v = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<double> spread(-1.0, 1.0);
  for (int ch = 0; ch < g.output_depth; ++ch) {
    ModeCase m = mode;
    if (mode == ModeCase::kMixed)
      m = std::vector<ModeCase>{ModeCase::kMagnitudeSmall, ModeCase::kShift64,
                                ModeCase::kMagnitudeLarge, ModeCase::kGeneral}[(ch / 16) % 4];
    int32_t multiplier = 0, bias = 0;
    int shift = 0;
    if (m == ModeCase::kShift64 || m == ModeCase::kGeneral) {
      // M = 2^30 (valuation 30) ties both roundings at |acc| = 2^e - 1,
      // inside the bound: the magnitude form is ruled out.
      multiplier = 1 << 30;
      shift = m == ModeCase::kShift64 ? -std::uniform_int_distribution<int>(1, 22)(rng)
                                      : -std::uniform_int_distribution<int>(23, 30)(rng);
      bias = std::uniform_int_distribution<int32_t>(-(1 << 30), 1 << 30)(rng);
    } else {
      const bool large = m == ModeCase::kMagnitudeLarge;
      bias = large ? std::uniform_int_distribution<int32_t>(1 << 21, 1 << 29)(rng)
                   : std::uniform_int_distribution<int32_t>(0, 20000)(rng);
      if (rng() % 2) bias = -bias;
      const double range = large ? std::abs(static_cast<double>(bias)) : 128.0 * k * 64.0;
      quant::QuantizeMultiplier(std::pow(10.0, spread(rng)) * 100.0 / range, &multiplier, &shift);
      // An odd multiplier can only tie at |acc| >= 2^30, so the form is exact;
      // kTies keeps the converter's trailing zero bits instead, which some
      // bounds reach.
      if (m == ModeCase::kTies)
        multiplier &= ~((1 << std::uniform_int_distribution<int>(8, 22)(rng)) - 1);
      else
        multiplier |= 1;
      if (shift > 0) shift = 0;
    }
    c.multipliers.push_back(multiplier);
    c.shifts.push_back(shift);
    c.bias.push_back(bias);
  }
  return c;
}

TEST(OptimizedConvTest, RequantizationModesMatchReference) {
  // Each requantization mode forced by the layer's parameters (magnitude with
  // IFMA when the CPU has it and every |acc| bound is below 2^20, magnitude
  // without, requantize64's shift, the general form, and mixed slabs), checked
  // to have run on vnni and avx2 (magnitude or general there), and every ISA
  // against the reference, 1 and 2 tasks.
  using Mode = optimized::QuantConv::SlabRequant;
  const bool ifma = optimized::CpuHasAvx512Ifma();
  const bool vnni = optimized::IsaSupported(Isa::kAvx512Vnni);
  std::mt19937 rng(17);
  int seen[5] = {};
  int seen_avx2[2] = {};  // magnitude, general
  for (ModeCase mode : {ModeCase::kMagnitudeSmall, ModeCase::kMagnitudeLarge, ModeCase::kShift64,
                        ModeCase::kGeneral, ModeCase::kTies, ModeCase::kMixed}) {
    for (int trial = 0; trial < 40; ++trial) {
      const RandomConv c = MakeModeConv(rng, trial % 3 == 0, mode);
      const std::string what = "mode " + std::to_string(static_cast<int>(mode)) + " trial " +
                                std::to_string(trial) + ": " + c.Describe();
      const optimized::QuantConvParams p = ParamsOf(c);
      if (optimized::IsaSupported(Isa::kAvx2) && c.g.output_depth > 1) {
        // avx2 has the magnitude form and the general one (one output
        // channel takes the dot-product kernel, with the general form).
        // Its slabs have 16 channels: where vnni's slab of up to 64 is
        // forced off the magnitude form by one channel, one of them is.
        const optimized::QuantConv conv(p, Isa::kAvx2, 1);
        bool any_general = false;
        for (int s = 0; s < conv.num_slabs(); ++s) {
          const Mode got = conv.slab_requant(s);
          EXPECT_TRUE(got == Mode::kMagnitude || got == Mode::kGeneral) << "avx2 " << what;
          if (mode == ModeCase::kMagnitudeSmall || mode == ModeCase::kMagnitudeLarge) {
            EXPECT_EQ(got, Mode::kMagnitude) << "avx2 " << what;
          }
          any_general = any_general || got == Mode::kGeneral;
          ++seen_avx2[got == Mode::kMagnitude ? 0 : 1];
        }
        if (mode == ModeCase::kShift64 || mode == ModeCase::kGeneral) {
          EXPECT_TRUE(any_general) << "avx2 " << what;
        }
      }
      if (vnni) {
        const optimized::QuantConv conv(p, Isa::kAvx512Vnni, 1);
        std::vector<Mode> modes;
        for (int s = 0; s < conv.num_slabs(); ++s) {
          modes.push_back(conv.slab_requant(s));
          ++seen[static_cast<int>(modes.back())];
        }
        for (Mode got : modes) {
          switch (mode) {
            case ModeCase::kMagnitudeSmall:  // IFMA only when every bound is below 2^20
              EXPECT_TRUE(got == Mode::kMagnitude || (ifma && got == Mode::kMagnitudeIfma)) << what;
              break;
            case ModeCase::kMagnitudeLarge: EXPECT_EQ(got, Mode::kMagnitude) << what; break;
            case ModeCase::kShift64: EXPECT_EQ(got, Mode::kShift64) << what; break;
            case ModeCase::kGeneral: EXPECT_EQ(got, Mode::kGeneral) << what; break;
            default: break;
          }
        }
      }
      const std::vector<uint8_t> expected = ReferenceOutput(c);
      for (Isa isa : SupportedIsas())
        for (int tasks : {1, 2})
          ExpectSame(expected, OptimizedOutput(c, isa, tasks),
                     std::string(optimized::IsaName(isa)) + " tasks " + std::to_string(tasks) +
                         " " + what);
      if (::testing::Test::HasFailure()) return;
    }
  }
  // Accumulators on the ties themselves (|acc| = 2^e - 1 modulo 2^(e+1) with
  // M = 2^30, where the magnitude form would round a negative acc away from
  // zero): x = x_zp, so each channel's accumulator is its bias.
  for (int trial = 0; trial < 40; ++trial) {
    RandomConv c = MakeModeConv(rng, trial % 2 == 0, ModeCase::kShift64);
    c.g.input_height = c.g.input_width = c.g.output_height = c.g.output_width = 2;
    c.g.filter_height = c.g.filter_width = 1;
    c.g.stride_height = c.g.stride_width = 1;
    c.g.pad_height = c.g.pad_width = 0;
    c.input.assign(static_cast<size_t>(4) * c.g.input_depth, static_cast<uint8_t>(c.input_zp));
    c.filter.resize(static_cast<size_t>(c.g.output_depth) * c.g.input_depth);
    for (int ch = 0; ch < c.g.output_depth; ++ch) {
      const int e = -c.shifts[ch];
      const int64_t j = std::uniform_int_distribution<int>(0, 50)(rng);
      const int64_t tie = (int64_t{1} << e) - 1 + j * (int64_t{2} << e);
      c.bias[ch] = static_cast<int32_t>(ch % 2 == 0 ? -tie : tie);
    }
    const std::string what = "tie trial " + std::to_string(trial) + ": " + c.Describe();
    const std::vector<uint8_t> expected = ReferenceOutput(c);
    for (Isa isa : SupportedIsas())
      ExpectSame(expected, OptimizedOutput(c, isa, 1), std::string(optimized::IsaName(isa)) + " " + what);
    if (::testing::Test::HasFailure()) return;
  }
  if (vnni) {
    EXPECT_GT(seen[static_cast<int>(Mode::kGeneral)], 0);
    EXPECT_GT(seen[static_cast<int>(Mode::kShift64)], 0);
    EXPECT_GT(seen[static_cast<int>(Mode::kMagnitude)], 0);
    if (ifma) {
      EXPECT_GT(seen[static_cast<int>(Mode::kMagnitudeIfma)], 0);
    }
  }
  if (optimized::IsaSupported(Isa::kAvx2)) {
    EXPECT_GT(seen_avx2[0], 0);
    EXPECT_GT(seen_avx2[1], 0);
  }
}

TEST(OptimizedConvTest, FirstLayerShapes) {
  // Few input channels with 3x3 stride-2 windows over wide rows (the
  // first-layer im2col), SAME and VALID, odd sizes, K just around 4-tap groups.
  std::mt19937 rng(5);
  for (int trial = 0; trial < 24; ++trial) {
    RandomConv c = MakeConv(rng, trial % 4 == 0);
    reference::ConvGeometry& g = c.g;
    g.batches = 1 + trial % 2;
    g.input_height = 9 + trial % 7;
    g.input_width = 20 + 3 * trial;
    g.input_depth = g.filter_depth = std::vector<int>{1, 2, 3, 4, 5}[trial % 5];
    g.filter_height = g.filter_width = trial % 6 == 5 ? 5 : 3;
    g.stride_height = g.stride_width = 1 + trial % 2;
    g.dilation_height = g.dilation_width = trial % 8 == 7 ? 2 : 1;
    const reference::Window2D w = reference::ComputeWindow2D(
        trial % 3 == 0 ? Padding::kValid : Padding::kSame, g.stride_height, g.stride_width,
        g.dilation_height, g.dilation_width, g.input_height, g.input_width, g.filter_height,
        g.filter_width);
    g.output_height = w.out_height;
    g.output_width = w.out_width;
    g.pad_height = w.pad_height;
    g.pad_width = w.pad_width;
    const int k = g.filter_height * g.filter_width * g.input_depth;
    c.input.resize(static_cast<size_t>(g.batches) * g.input_height * g.input_width *
                   g.input_depth);
    for (auto& v : c.input) v = static_cast<uint8_t>(rng());
    c.filter.resize(static_cast<size_t>(g.output_depth) * k);
    for (auto& v : c.filter) v = static_cast<uint8_t>(rng());
    const std::vector<uint8_t> expected = ReferenceOutput(c);
    for (Isa isa : SupportedIsas())
      for (int tasks : {1, 2})
        ExpectSame(expected, OptimizedOutput(c, isa, tasks),
                   std::string(optimized::IsaName(isa)) + " " + c.Describe());
  }
}

TEST(OptimizedConvTest, RandomizedMatchesReference) {
  std::mt19937 rng(2024);
  const std::vector<Isa> isas = SupportedIsas();
  for (int trial = 0; trial < 300; ++trial) {
    const RandomConv c = MakeConv(rng, trial % 2 == 0);
    ASSERT_TRUE(optimized::QuantConv::Covers(c.g));
    const std::vector<uint8_t> expected = ReferenceOutput(c);
    for (Isa isa : isas) {
      for (int tasks : {1, 2, 3}) {
        ExpectSame(expected, OptimizedOutput(c, isa, tasks),
                   std::string(optimized::IsaName(isa)) + " tasks " + std::to_string(tasks) +
                       " trial " + std::to_string(trial) + ": " + c.Describe());
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

// Grouped layers (QuantGroupedConv: the GEMM per group): MakeConv's
// geometry, zero points and multipliers with the channels split into 2-8
// groups of 1-17 input and 1-33 output channels, every ISA, 1-3 tasks.
TEST(OptimizedConvTest, GroupedMatchesReference) {
  std::mt19937 rng(77);
  const std::vector<Isa> isas = SupportedIsas();
  for (int trial = 0; trial < 60; ++trial) {
    RandomConv c = MakeConv(rng, trial % 2 == 0);
    reference::ConvGeometry& g = c.g;
    const int groups = Pick(rng, std::vector<int>{2, 3, 4, 8});
    g.filter_depth = Pick(rng, std::vector<int>{1, 2, 3, 4, 8, 16, 17});
    g.input_depth = g.filter_depth * groups;
    g.output_depth = Pick(rng, std::vector<int>{1, 4, 8, 16, 17, 33}) * groups;
    std::uniform_int_distribution<int> byte(0, 255);
    c.input.resize(static_cast<size_t>(g.batches) * g.input_height * g.input_width * g.input_depth);
    for (auto& v : c.input) v = static_cast<uint8_t>(byte(rng));
    c.filter.resize(g.packed_filter_elements());
    for (auto& v : c.filter) v = static_cast<uint8_t>(byte(rng));
    for (std::vector<int32_t>* v : {&c.multipliers, &c.shifts, &c.bias}) {
      const std::vector<int32_t> first = *v;
      v->resize(g.output_depth);
      for (int ch = 0; ch < g.output_depth; ++ch) (*v)[ch] = first[ch % first.size()];
    }
    ASSERT_TRUE(optimized::QuantGroupedConv::Covers(g));
    const std::vector<uint8_t> expected = ReferenceOutput(c);
    const optimized::QuantConvParams p = ParamsOf(c);
    for (Isa isa : isas) {
      for (int tasks : {1, 2, 3}) {
        const optimized::QuantGroupedConv conv(p, isa, tasks);
        optimized::AlignedBuffer<uint8_t> scratch(conv.scratch_bytes());
        std::vector<uint8_t> out(expected.size(), 0xCD);
        for (int t = conv.num_tasks() - 1; t >= 0; --t)
          conv.RunTask(t, c.input.data(), out.data(), scratch.data());
        ExpectSame(expected, out,
                   std::string(optimized::IsaName(isa)) + " tasks " + std::to_string(tasks) +
                       " groups " + std::to_string(groups) + " trial " + std::to_string(trial) +
                       ": " + c.Describe());
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

TEST(OptimizedConvTest, LargePanelsAndManyRows) {
  // Enough rows for several panel blocks per task, and K past the panel
  // target so blocks are at their minimum.
  std::mt19937 rng(99);
  for (int trial = 0; trial < 6; ++trial) {
    RandomConv c = MakeConv(rng, trial % 2 == 0);
    reference::ConvGeometry& g = c.g;
    g.input_height = 40;
    g.input_width = 37;
    g.input_depth = g.filter_depth = trial < 3 ? 24 : 1100;
    g.filter_height = g.filter_width = trial < 3 ? 3 : 1;
    g.stride_height = g.stride_width = 1;
    g.dilation_height = g.dilation_width = 1;
    g.batches = 1;
    const reference::Window2D w = reference::ComputeWindow2D(
        Padding::kSame, 1, 1, 1, 1, g.input_height, g.input_width, g.filter_height,
        g.filter_width);
    g.output_height = w.out_height;
    g.output_width = w.out_width;
    g.pad_height = w.pad_height;
    g.pad_width = w.pad_width;
    const int k = g.filter_height * g.filter_width * g.input_depth;
    c.input.resize(static_cast<size_t>(g.input_height) * g.input_width * g.input_depth);
    for (auto& v : c.input) v = static_cast<uint8_t>(rng());
    c.filter.resize(static_cast<size_t>(g.output_depth) * k);
    for (auto& v : c.filter) v = static_cast<uint8_t>(rng());
    const std::vector<uint8_t> expected = ReferenceOutput(c);
    for (Isa isa : SupportedIsas())
      for (int tasks : {1, 2})
        ExpectSame(expected, OptimizedOutput(c, isa, tasks),
                   std::string(optimized::IsaName(isa)) + " " + c.Describe());
  }
}

TEST(OptimizedConvTest, AmxTilesMatchReference) {
  // Shapes around the AMX tiles: K below, at and past multiples of 64 taps
  // (the weights' zero padding), rows below, at and past 16 (the last tile's
  // rows past the end), and 1 to 4 blocks of 16 channels with partial ones.
  if (!optimized::CpuHasAmxInt8()) GTEST_SKIP() << "this CPU or kernel offers no AMX-INT8";
  std::mt19937 rng(64);
  int trial = 0;
  for (int cin : {64, 68, 100, 128, 132, 200}) {
    for (int cout : {1, 16, 17, 33, 48, 64, 65, 100}) {
      RandomConv c = MakeConv(rng, trial++ % 3 == 0);
      reference::ConvGeometry& g = c.g;
      g.batches = 1;
      g.input_height = 1 + static_cast<int>(rng() % 3);
      g.input_width = Pick(rng, std::vector<int>{1, 7, 15, 16, 17, 31, 33});
      g.input_depth = g.filter_depth = cin;
      g.output_depth = cout;
      g.filter_height = g.filter_width = 1;
      g.stride_height = g.stride_width = 1;
      g.dilation_height = g.dilation_width = 1;
      g.output_height = g.input_height;
      g.output_width = g.input_width;
      g.pad_height = g.pad_width = 0;
      c.input.resize(static_cast<size_t>(g.input_height) * g.input_width * cin);
      for (auto& v : c.input) v = static_cast<uint8_t>(rng());
      c.filter.resize(static_cast<size_t>(cout) * cin);
      for (auto& v : c.filter) v = static_cast<uint8_t>(rng());
      c.multipliers.resize(cout, c.multipliers.empty() ? 1 << 30 : c.multipliers[0]);
      c.shifts.resize(cout, c.shifts.empty() ? -12 : c.shifts[0]);
      c.bias.resize(cout, 0);
      const optimized::ScopedIsaOverride isa(Isa::kAvx512Vnni);
      // OptimizedOutput checks that AMX ran and agrees with the vnni kernels.
      ExpectSame(ReferenceOutput(c), OptimizedOutput(c, Isa::kAvx512Vnni, 1 + trial % 2),
                 "AMX " + c.Describe());
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// ------------------------------------------------------ through the runtime

template <class T>
std::vector<T> RunModel(const RandomConv& c, bool per_channel_q, KernelSet kernels, int threads) {
  const DataType type = c.is_uint8 ? DataType::kUInt8 : DataType::kInt8;
  OpModel m;
  const reference::ConvGeometry& g = c.g;
  const int in = m.AddInput(type, {g.batches, g.input_height, g.input_width, g.input_depth},
                            Q(0.5f, c.input_zp));
  Quantization fq = Q(0.01f, c.filter_zp);
  if (per_channel_q) {
    std::vector<float> scales(g.output_depth);
    for (int ch = 0; ch < g.output_depth; ++ch) scales[ch] = 0.001f * (1 + ch % 7);
    fq = QPerAxis(scales, std::vector<int64_t>(g.output_depth, 0), 0);
  }
  std::vector<T> filter(c.filter.size());
  std::memcpy(filter.data(), c.filter.data(), filter.size());
  const int f = m.AddConst<T>(type, {g.output_depth, g.filter_height, g.filter_width, g.input_depth},
                              filter, fq);
  const int b = m.AddConst<int32_t>(DataType::kInt32, {g.output_depth}, c.bias, Q(0.005f, 0));
  const int out = m.AddOutput(type, Q(0.02f * g.filter_height * g.filter_width, c.output_zp));
  Conv2DParams params;
  params.padding = g.pad_height > 0 || g.pad_width > 0 ? Padding::kSame : Padding::kValid;
  params.stride_h = g.stride_height;
  params.stride_w = g.stride_width;
  params.dilation_h = g.dilation_height;
  params.dilation_w = g.dilation_width;
  params.activation = Activation::kRelu6;
  m.AddOp(BuiltinOp::kConv2d, {in, f, b}, {out}, params, 3);
  m.Build(threads, kernels);
  std::vector<T> input(c.input.size());
  std::memcpy(input.data(), c.input.data(), input.size());
  m.SetInput<T>(0, input);
  m.Invoke();
  return m.GetOutput<T>(0);
}

TEST(OptimizedConvTest, InterpreterOptimizedEqualsReference) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    RandomConv c = MakeConv(rng, trial % 2 == 0);
    // Valid padding leaves no pad; SAME with pad 0 is re-derived identically.
    const bool per_channel = !c.is_uint8 && trial % 4 == 1;
    for (int bias_i = 0; bias_i < static_cast<int>(c.bias.size()); ++bias_i)
      c.bias[bias_i] = c.bias[bias_i] % 5000;
    // Every ISA this CPU runs, selected as the interpreter selects it (on
    // vnni these layers' multipliers mostly take the magnitude form).
    for (Isa isa : SupportedIsas()) {
      const optimized::ScopedIsaOverride override_isa(isa);
      for (int threads : {1, 2}) {
        if (c.is_uint8) {
          EXPECT_EQ(RunModel<uint8_t>(c, per_channel, KernelSet::kReference, threads),
                    RunModel<uint8_t>(c, per_channel, KernelSet::kOptimized, threads))
              << optimized::IsaName(isa) << " " << c.Describe() << " threads " << threads;
        } else {
          EXPECT_EQ(RunModel<int8_t>(c, per_channel, KernelSet::kReference, threads),
                    RunModel<int8_t>(c, per_channel, KernelSet::kOptimized, threads))
              << optimized::IsaName(isa) << " " << c.Describe() << " threads " << threads;
        }
      }
    }
  }
}

// ----------------------------------------------------- FULLY_CONNECTED mode

TEST(OptimizedConvTest, FullyConnectedDoubleRescaleMatchesReference) {
  std::mt19937 rng(77);
  for (int trial = 0; trial < 200; ++trial) {
    const bool is_uint8 = trial % 2 == 0;
    reference::FullyConnectedGeometry g;
    g.batches = Pick(rng, std::vector<int>{1, 1, 2, 3, 7, 20});
    g.accum_depth = Pick(rng, std::vector<int>{1, 3, 4, 5, 16, 33, 64, 100, 1280});
    g.output_depth = Pick(rng, std::vector<int>{1, 2, 10, 16, 17, 64, 65, 200, 1001});
    const int32_t x_zp = PickZeroPoint(rng, is_uint8);
    const int32_t w_zp = is_uint8 ? PickZeroPoint(rng, true) : 0;
    const int32_t out_zp = PickZeroPoint(rng, is_uint8);
    std::vector<uint8_t> input(static_cast<size_t>(g.batches) * g.accum_depth);
    std::vector<uint8_t> weights(static_cast<size_t>(g.output_depth) * g.accum_depth);
    for (auto& v : input) v = static_cast<uint8_t>(rng());
    for (auto& v : weights) v = static_cast<uint8_t>(rng());
    std::vector<int32_t> bias(g.output_depth);
    for (auto& b : bias) b = std::uniform_int_distribution<int32_t>(-30000, 30000)(rng);
    if (trial % 13 == 0) for (auto& b : bias) b = static_cast<int32_t>(rng());  // wraparound
    std::vector<double> scales(g.output_depth);
    const double base = std::pow(10.0, std::uniform_real_distribution<double>(-3, 0)(rng)) / (g.accum_depth * 64.0);
    for (auto& sc : scales) sc = trial % 3 == 0 ? base * (1 + rng() % 7) : base;
    if (trial % 17 == 0) scales[0] = 1e6;  // out of int32 range -> INT32_MIN, clamped
    // Powers of two: many products end in exactly one half (rounded away from zero).
    if (trial % 5 == 2)
      for (auto& sc : scales) sc = std::ldexp(1.0, -1 - static_cast<int>(rng() % 10));
    const int lo = is_uint8 ? 0 : -128, hi = is_uint8 ? 255 : 127;
    const int32_t act_min = trial % 4 == 1 ? lo + 10 : lo, act_max = trial % 4 == 1 ? hi - 20 : hi;

    std::vector<int16_t> packed(g.weight_elements());
    if (is_uint8)
      reference::PackFullyConnectedWeights(g, weights.data(), -w_zp, packed.data());
    else
      reference::PackFullyConnectedWeights(g, reinterpret_cast<const int8_t*>(weights.data()), 0,
                                           packed.data());
    reference::FullyConnectedQuantParams q;
    q.input_offset = -x_zp;
    q.output_offset = out_zp;
    q.act_min = act_min;
    q.act_max = act_max;
    q.output_scale = scales.data();
    std::vector<uint8_t> expected(static_cast<size_t>(g.batches) * g.output_depth);
    if (is_uint8)
      reference::FullyConnectedQuantized(g, input.data(), packed.data(), bias.data(), q,
                                         expected.data(), 0, g.work_units());
    else
      reference::FullyConnectedQuantized(g, reinterpret_cast<const int8_t*>(input.data()),
                                         packed.data(), bias.data(), q,
                                         reinterpret_cast<int8_t*>(expected.data()), 0,
                                         g.work_units());

    optimized::QuantConvParams p;
    p.geometry.batches = g.batches;
    p.geometry.input_height = p.geometry.input_width = 1;
    p.geometry.output_height = p.geometry.output_width = 1;
    p.geometry.filter_height = p.geometry.filter_width = 1;
    p.geometry.input_depth = p.geometry.filter_depth = g.accum_depth;
    p.geometry.output_depth = g.output_depth;
    p.is_uint8 = is_uint8;
    p.input_zero_point = x_zp;
    p.filter_zero_point = w_zp;
    p.output_zero_point = out_zp;
    p.act_min = act_min;
    p.act_max = act_max;
    p.output_scale = scales.data();
    p.filter = weights.data();
    p.bias = bias.data();
    for (Isa isa : SupportedIsas()) {
      for (int tasks : {1, 2}) {
        optimized::QuantConv fc(p, isa, tasks);
        optimized::AlignedBuffer<uint8_t> scratch(fc.scratch_bytes());
        std::vector<uint8_t> out(expected.size(), 0xCD);
        for (int t = 0; t < fc.num_tasks(); ++t) fc.RunTask(t, input.data(), out.data(), scratch.data());
        ExpectSame(expected, out, std::string(optimized::IsaName(isa)) + " fc trial " +
                                      std::to_string(trial));
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

TEST(OptimizedConvTest, FullyConnectedInterpreterOptimizedEqualsReference) {
  std::mt19937 rng(78);
  for (int trial = 0; trial < 12; ++trial) {
    const bool is_uint8 = trial % 2 == 0;
    const DataType type = is_uint8 ? DataType::kUInt8 : DataType::kInt8;
    const int batches = 1 + trial % 3, depth = 1280, units = 1001;
    std::vector<uint8_t> weights(static_cast<size_t>(units) * depth), input(batches * depth);
    for (auto& v : weights) v = static_cast<uint8_t>(rng());
    for (auto& v : input) v = static_cast<uint8_t>(rng());
    std::vector<int32_t> bias(units);
    for (auto& b : bias) b = std::uniform_int_distribution<int32_t>(-3000, 3000)(rng);
    std::vector<uint8_t> results[2][2];
    for (int threads : {1, 2}) {
      for (int opt : {0, 1}) {
        OpModel m;
        const int in = m.AddInput(type, {batches, depth}, Q(0.05f, is_uint8 ? 120 : -5));
        int w;
        if (is_uint8) {
          w = m.AddConst<uint8_t>(type, {units, depth}, weights, Q(0.002f, 131));
        } else {
          std::vector<int8_t> w8(weights.size());
          std::memcpy(w8.data(), weights.data(), w8.size());
          std::vector<float> scales(units);
          for (int u = 0; u < units; ++u) scales[u] = 0.001f * (1 + u % 3);
          w = trial % 4 == 1
                  ? m.AddConst<int8_t>(type, {units, depth}, w8,
                                       QPerAxis(scales, std::vector<int64_t>(units, 0), 0))
                  : m.AddConst<int8_t>(type, {units, depth}, w8, Q(0.002f, 0));
        }
        const int b = m.AddConst<int32_t>(DataType::kInt32, {units}, bias, Q(0.0001f, 0));
        const int out = m.AddOutput(type, Q(0.3f, is_uint8 ? 128 : 3));
        FullyConnectedParams params;
        params.activation = trial % 3 == 0 ? Activation::kRelu : Activation::kNone;
        m.AddOp(BuiltinOp::kFullyConnected, {in, w, b}, {out}, params, 4);
        m.Build(threads, opt ? KernelSet::kOptimized : KernelSet::kReference);
        if (is_uint8) {
          m.SetInput<uint8_t>(0, input);
        } else {
          std::vector<int8_t> i8(input.size());
          std::memcpy(i8.data(), input.data(), i8.size());
          m.SetInput<int8_t>(0, i8);
        }
        m.Invoke();
        results[threads - 1][opt] = m.GetOutput<uint8_t>(0);
      }
      EXPECT_EQ(results[threads - 1][0], results[threads - 1][1]) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace delegato
