// Optimized quantized DEPTHWISE_CONV_2D (kernels/optimized/quant_depthwise)
// against the reference kernel, bit for bit: random geometries (channel
// counts around the 8/16-lane blocks, 3x3 and 5x5 with their compile-time
// paths and other sizes, strides, dilations, padding, borders; every width up
// to 40 for 3x3 and 5x5), zero points at
// the extremes, per-tensor and per-channel multipliers, every ISA this CPU
// runs, rows split arbitrarily, depth multipliers 1 and above (2..8 over
// input depths 1..5 in particular). Then through the interpreter (optimized vs
// reference kernel sets, 1 and 2 threads, each ISA forced for multipliers > 1).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/isa.h"
#include "kernels/optimized/quant_depthwise.h"
#include "kernels/quantization.h"
#include "kernels/reference/depthwise_conv.h"
#include "test_util.h"

namespace delegato {
namespace {

using optimized::Isa;
using testing::SupportedIsas;
using testing::OpModel;
using testing::Q;
using testing::QPerAxis;

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

struct RandomDepthwise {
  reference::DepthwiseGeometry g;
  Padding padding = Padding::kSame;
  bool is_uint8 = false;
  int32_t input_zp = 0, filter_zp = 0, output_zp = 0, act_min = 0, act_max = 0;
  std::vector<int32_t> multipliers, shifts, bias;
  bool has_bias = true;
  std::vector<uint8_t> input, filter;
  std::string Describe() const {
    return std::string(is_uint8 ? "uint8" : "int8") + " in " + std::to_string(g.batches) + "x" +
           std::to_string(g.input_height) + "x" + std::to_string(g.input_width) + "x" +
           std::to_string(g.input_depth) + " filter " + std::to_string(g.filter_height) + "x" +
           std::to_string(g.filter_width) + "x" + std::to_string(g.output_depth) + " stride " +
           std::to_string(g.stride_height) + "x" + std::to_string(g.stride_width) +
           " dilation " + std::to_string(g.dilation_height) + "x" +
           std::to_string(g.dilation_width) + " zp in/w/out " + std::to_string(input_zp) + "/" +
           std::to_string(filter_zp) + "/" + std::to_string(output_zp);
  }
};

// Fixed parts of a random geometry (0: random).
struct FixedShape {
  int filter = 0, stride_w = 0, dilation_w = 0, height = 0, width = 0;
};

RandomDepthwise MakeDepthwise(std::mt19937& rng, bool is_uint8, int depth_multiplier = 1,
                              int input_depth = 0, const FixedShape& fixed = {}) {
  RandomDepthwise c;
  c.is_uint8 = is_uint8;
  reference::DepthwiseGeometry& g = c.g;
  g.batches = Pick(rng, std::vector<int>{1, 1, 2});
  g.input_depth = Pick(rng, std::vector<int>{1, 3, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 96, 97});
  if (input_depth > 0) g.input_depth = input_depth;
  g.depth_multiplier = depth_multiplier;
  g.output_depth = g.input_depth * depth_multiplier;
  const int kind = std::uniform_int_distribution<int>(0, 5)(rng);
  g.filter_height = kind < 3 ? 3 : kind == 3 ? 5 : Pick(rng, std::vector<int>{1, 2, 4, 7});
  g.filter_width = kind < 3 ? 3 : kind == 3 ? 5 : Pick(rng, std::vector<int>{1, 2, 3, 6});
  g.stride_height = Pick(rng, std::vector<int>{1, 1, 2, 3});
  g.stride_width = Pick(rng, std::vector<int>{1, 1, 2, 3});
  g.dilation_height = Pick(rng, std::vector<int>{1, 1, 1, 2});
  g.dilation_width = Pick(rng, std::vector<int>{1, 1, 1, 2, 3});
  g.input_height = std::uniform_int_distribution<int>(1, 13)(rng);
  g.input_width = std::uniform_int_distribution<int>(1, 15)(rng);
  if (fixed.filter > 0) g.filter_height = g.filter_width = fixed.filter;
  if (fixed.stride_w > 0) g.stride_width = fixed.stride_w;
  if (fixed.dilation_w > 0) g.dilation_width = fixed.dilation_w;
  if (fixed.height > 0) g.input_height = fixed.height;
  if (fixed.width > 0) g.input_width = fixed.width;
  c.padding = std::uniform_int_distribution<int>(0, 2)(rng) ? Padding::kSame : Padding::kValid;
  reference::Window2D w = reference::ComputeWindow2D(
      c.padding, g.stride_height, g.stride_width, g.dilation_height, g.dilation_width,
      g.input_height, g.input_width, g.filter_height, g.filter_width);
  if (w.out_height <= 0 || w.out_width <= 0) {
    c.padding = Padding::kSame;
    w = reference::ComputeWindow2D(c.padding, g.stride_height, g.stride_width, g.dilation_height,
                                   g.dilation_width, g.input_height, g.input_width,
                                   g.filter_height, g.filter_width);
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
  const int taps = g.filter_height * g.filter_width;
  std::uniform_real_distribution<double> log_scale(-2.0, 1.0);
  const double base = std::pow(10.0, log_scale(rng)) / (taps * 64.0);
  for (int ch = 0; ch < g.output_depth; ++ch) {
    double real = per_channel ? std::pow(10.0, log_scale(rng)) / (taps * 64.0) : base;
    if (std::uniform_int_distribution<int>(0, 15)(rng) == 0) real *= 1 << 20;
    int32_t m;
    int s;
    quant::QuantizeMultiplier(real, &m, &s);
    c.multipliers.push_back(m);
    c.shifts.push_back(std::min(s, 31));
  }
  c.has_bias = std::uniform_int_distribution<int>(0, 4)(rng) != 0;
  const bool huge_bias = std::uniform_int_distribution<int>(0, 7)(rng) == 0;
  for (int ch = 0; ch < g.output_depth; ++ch)
    c.bias.push_back(huge_bias ? static_cast<int32_t>(rng())
                               : std::uniform_int_distribution<int32_t>(-5000, 5000)(rng));
  c.input.resize(static_cast<size_t>(g.batches) * g.input_height * g.input_width * g.input_depth);
  for (auto& v : c.input) v = static_cast<uint8_t>(rng());
  c.filter.resize(static_cast<size_t>(taps) * g.output_depth);
  const int extreme = std::uniform_int_distribution<int>(0, 5)(rng);
  for (auto& v : c.filter) {
    v = static_cast<uint8_t>(rng());
    if (extreme == 0) v = is_uint8 ? 255 : 0x80;
    if (extreme == 1) v = is_uint8 ? 0 : 0x7F;
  }
  return c;
}

std::vector<uint8_t> ReferenceOutput(const RandomDepthwise& c) {
  const reference::DepthwiseGeometry& g = c.g;
  std::vector<int16_t> packed(g.filter_elements());
  if (c.is_uint8)
    reference::PackDepthwiseFilter(g, c.filter.data(), -c.filter_zp, packed.data());
  else
    reference::PackDepthwiseFilter(g, reinterpret_cast<const int8_t*>(c.filter.data()), 0,
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
    reference::DepthwiseConvQuantized(g, c.input.data(), packed.data(), bias, q, out.data(), 0,
                                      g.output_rows());
  } else {
    reference::DepthwiseConvQuantized(g, reinterpret_cast<const int8_t*>(c.input.data()),
                                      packed.data(), bias, q,
                                      reinterpret_cast<int8_t*>(out.data()), 0, g.output_rows());
  }
  return out;
}

optimized::QuantDepthwiseParams MakeParams(const RandomDepthwise& c) {
  optimized::QuantDepthwiseParams p;
  p.geometry = c.g;
  p.is_uint8 = c.is_uint8;
  p.input_zero_point = c.input_zp;
  p.filter_offset = c.is_uint8 ? -c.filter_zp : 0;
  p.output_zero_point = c.output_zp;
  p.act_min = c.act_min;
  p.act_max = c.act_max;
  p.multiplier = c.multipliers.data();
  p.shift = c.shifts.data();
  p.filter = c.filter.data();
  p.bias = c.has_bias ? c.bias.data() : nullptr;
  return p;
}

// Channels the tap-pair path runs (0 when another path does).
int PairChannels(const RandomDepthwise& c, Isa isa) {
  return optimized::QuantDepthwise(MakeParams(c), isa).pair_channels();
}

std::vector<uint8_t> OptimizedOutput(const RandomDepthwise& c, Isa isa, int splits) {
  optimized::QuantDepthwise dw(MakeParams(c), isa);
  EXPECT_EQ(dw.isa(), isa);
  std::vector<uint8_t> out(
      static_cast<size_t>(c.g.output_rows()) * c.g.output_width * c.g.output_depth, 0xCD);
  const int64_t rows = dw.rows();
  for (int s = splits - 1; s >= 0; --s)
    dw.RunRows(rows * s / splits, rows * (s + 1) / splits, c.input.data(), out.data());
  return out;
}

void ExpectSame(const std::vector<uint8_t>& expected, const std::vector<uint8_t>& actual,
                const std::string& what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    if (expected[i] != actual[i] && mismatches++ == 0) first = i;
  EXPECT_EQ(mismatches, 0u) << what << ": first mismatch at " << first << " expected "
                            << int{expected[first]} << " got " << int{actual[first]};
}

TEST(OptimizedDepthwiseTest, RandomizedMatchesReference) {
  std::mt19937 rng(11);
  int diverse = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const int multiplier = trial % 5 == 4 ? Pick(rng, std::vector<int>{2, 3, 4, 8, 17}) : 1;
    const RandomDepthwise c = MakeDepthwise(rng, trial % 2 == 0, multiplier);
    ASSERT_TRUE(optimized::QuantDepthwise::Covers(c.g));
    const std::vector<uint8_t> expected = ReferenceOutput(c);
    std::vector<bool> seen(256);
    int distinct = 0;
    for (uint8_t v : expected) distinct += seen[v] ? 0 : (seen[v] = true, 1);
    diverse += distinct >= 8;
    for (Isa isa : SupportedIsas()) {
      for (int splits : {1, 2, 3}) {
        ExpectSame(expected, OptimizedOutput(c, isa, splits),
                   std::string(optimized::IsaName(isa)) + " splits " + std::to_string(splits) +
                       " trial " + std::to_string(trial) + ": " + c.Describe());
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
  EXPECT_GT(diverse, 120) << "outputs should not be mostly clamped";
}

TEST(OptimizedDepthwiseTest, TapPairShapes) {
  // 3x3 and 5x5 with multiplier 1 (taps paired in 8-channel blocks on AVX2,
  // 16-channel blocks on AVX-512, two pixels at a time with stride 1 or 2
  // and dilation 1): every width
  // 1..40 (odd and even interior runs, windows wider than the image), other
  // strides and dilations, channels around the 8- and 16-channel blocks,
  // each border.
  std::mt19937 rng(31);
  int pair_blocks = 0;
  for (int filter : {3, 5}) {
    for (int width = 1; width <= 40; ++width) {
      for (int variant = 0; variant < 4; ++variant) {
        FixedShape fixed;
        fixed.filter = filter;
        fixed.width = width;
        fixed.stride_w =
            variant < 2 ? 1 : variant == 2 ? 2 : Pick(rng, std::vector<int>{1, 2, 3});
        fixed.dilation_w = variant < 3 ? 1 : Pick(rng, std::vector<int>{1, 2});
        fixed.height = std::uniform_int_distribution<int>(1, 9)(rng);
        const int depth = Pick(rng, std::vector<int>{8, 9, 15, 16, 17, 24, 31, 32, 40, 47, 64});
        const RandomDepthwise c = MakeDepthwise(rng, variant % 2 == 0, 1, depth, fixed);
        const std::vector<uint8_t> expected = ReferenceOutput(c);
        pair_blocks += c.g.output_depth / 8;
        for (Isa isa : SupportedIsas()) {
          if (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni) {  // the x86 tap-pair paths
            EXPECT_EQ(PairChannels(c, isa), c.g.output_depth / 8 * 8) << optimized::IsaName(isa);
          }
          for (int splits : {1, 2}) {
            ExpectSame(expected, OptimizedOutput(c, isa, splits),
                       std::string(optimized::IsaName(isa)) + " splits " +
                           std::to_string(splits) + ": " + c.Describe());
            if (::testing::Test::HasFailure()) return;
          }
        }
      }
    }
  }
  EXPECT_GT(pair_blocks, 500);
}

TEST(OptimizedDepthwiseTest, TapPairChannelTails) {
  // AVX-512 pairs taps in 16-channel blocks; a last block of 8 channels runs
  // the AVX2 pair code and the last channels % 8 the scalar loop. Channel
  // counts on each side of those blocks, every stride, dilation and border
  // kind, uint8 and int8 (per-tensor and per-channel).
  std::mt19937 rng(47);
  for (int depth : {8, 9, 15, 16, 17, 23, 24, 25, 31, 33, 39, 40, 41, 47, 56, 72, 73, 88, 104}) {
    for (int trial = 0; trial < 16; ++trial) {
      FixedShape fixed;
      fixed.filter = trial % 4 < 2 ? 3 : 5;
      fixed.stride_w = trial < 8 ? 1 + trial % 2 : Pick(rng, std::vector<int>{1, 2, 3});
      fixed.dilation_w = trial < 12 ? 1 : Pick(rng, std::vector<int>{1, 2});
      fixed.height = std::uniform_int_distribution<int>(1, 11)(rng);
      fixed.width = std::uniform_int_distribution<int>(1, 23)(rng);
      const RandomDepthwise c = MakeDepthwise(rng, trial % 3 == 0, 1, depth, fixed);
      const std::vector<uint8_t> expected = ReferenceOutput(c);
      for (Isa isa : SupportedIsas()) {
        if (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni) {  // the x86 tap-pair paths
          EXPECT_EQ(PairChannels(c, isa), depth / 8 * 8) << optimized::IsaName(isa);
        }
        for (int splits : {1, 3}) {
          ExpectSame(expected, OptimizedOutput(c, isa, splits),
                     std::string(optimized::IsaName(isa)) + " splits " + std::to_string(splits) +
                         ": " + c.Describe());
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

// The byte dot-product path's extra AVX-512 features.
bool CpuHasDotPath() {
  return optimized::CpuHasAvx512Vbmi() && optimized::CpuHasAvx512Ifma();
}

// 3x3 or 5x5 (`filter`), multiplier 1, stride 1 or 2, dilation 1 across:
// AVX-512 with VBMI and IFMA runs 16-channel blocks as byte dot products (a
// filter column per lane; 5x5: rows 0-3 so, row 4 by four columns and one),
// four, then two, then one interior pixel at a time: every width 1..40
// (interior runs of every length modulo 4, windows wider than the image),
// heights from 1, dilated rows, channels around the 16-channel blocks, int8
// and uint8 (weights within 128 of their zero point; else, within [-256,
// 254], split into two signed bytes; else the tap-pair path), the four
// requantizations (the magnitude form, with 52-bit multiply-adds when every
// |acc| < 2^20, else with 64-bit products; without it requantize64.h's
// 64-bit rounding shift when every channel shifts right, else the general
// one).
void CheckDotProductShapes(int filter, unsigned seed) {
  std::mt19937 rng(seed);
  int dot_cases = 0, split_cases = 0, uint8_pair_cases = 0, ifma_cases = 0, magnitude_cases = 0,
      requant64_cases = 0, general_cases = 0;
  for (int width = 1; width <= 40; ++width) {
    for (int variant = 0; variant < 6; ++variant) {
      FixedShape fixed;
      fixed.filter = filter;
      fixed.width = width;
      fixed.stride_w = 1 + variant % 2;
      fixed.dilation_w = 1;
      fixed.height = std::uniform_int_distribution<int>(1, 9)(rng);
      const int depth = Pick(rng, std::vector<int>{16, 17, 24, 31, 32, 40, 48, 64});
      const bool is_uint8 = variant >= 4;
      RandomDepthwise c = MakeDepthwise(rng, is_uint8, 1, depth, fixed);
      if (width % 3 != 0) {  // scales below 1 (MakeDepthwise's sometimes exceed it)
        c.has_bias = true;
        for (int ch = 0; ch < c.g.output_depth; ++ch) {
          quant::QuantizeMultiplier(
              std::pow(10.0, std::uniform_real_distribution<double>(-4.0, -1.0)(rng)),
              &c.multipliers[ch], &c.shifts[ch]);
          c.bias[ch] = std::uniform_int_distribution<int32_t>(-5000, 5000)(rng);
        }
      }
      if (width % 3 == 1)  // |acc| up to about 2^21: not the 52-bit multiply-adds
        for (auto& b : c.bias) b = std::uniform_int_distribution<int32_t>(-1 << 21, 1 << 21)(rng);
      if (width % 6 == 4) {  // 14 trailing zero bits: first-rounding ties in the bound, but
                             // not both roundings at once (the magnitude form); or a
                             // channel where both can tie (0.375: 3 * 2^29, shift -1)
        for (auto& m : c.multipliers) m = m >> 14 << 14;
        if (variant % 2 == 0) {
          c.multipliers[0] = 3 << 29;
          c.shifts[0] = -1;
        }
      }
      const bool narrow = is_uint8 && variant == 4;
      if (narrow)
        for (auto& v : c.filter)
          v = static_cast<uint8_t>(std::clamp<int>(
              c.filter_zp + std::uniform_int_distribution<int>(-128, 127)(rng), 0, 255));
      // Wide uint8 weights at the split's ends: w - w_zp of -255 and 254, and
      // 255 (zero point 0), which no two signed bytes sum to.
      if (variant == 5 && width % 4 != 3) {
        c.filter_zp = width % 4 == 0 ? 0 : width % 4 == 1 ? 255 : 1;
        c.filter[c.filter.size() / 2] = width % 4 == 1 ? 0 : 255;
      }
      const bool splittable = std::none_of(c.filter.begin(), c.filter.end(), [&](uint8_t v) {
        return v - c.filter_zp > 254;
      });
      const std::vector<uint8_t> expected = ReferenceOutput(c);
      for (Isa isa : SupportedIsas()) {
        if (isa == Isa::kAvx512Vnni && CpuHasDotPath()) {
          const optimized::QuantDepthwise dw(MakeParams(c), isa);
          const int dots = dw.dot_channels();
          if (!is_uint8 || narrow || splittable) {
            EXPECT_EQ(dots, depth / 16 * 16) << c.Describe();
            const bool wide = is_uint8 && std::any_of(c.filter.begin(), c.filter.end(), [&](uint8_t v) {
              return v - c.filter_zp < -128 || v - c.filter_zp > 127;
            });
            EXPECT_EQ(dw.dot_split(), wide) << c.Describe();
            ++dot_cases;
            split_cases += dw.dot_split();
            (dw.dot_ifma()              ? ifma_cases
             : dw.magnitude_requant()   ? magnitude_cases
             : dw.dot_requant64()       ? requant64_cases
                                        : general_cases) += 1;
          } else if (dots == 0) {
            ++uint8_pair_cases;
          }
        }
        for (int splits : {1, 3}) {
          ExpectSame(expected, OptimizedOutput(c, isa, splits),
                     std::string(optimized::IsaName(isa)) + " splits " + std::to_string(splits) +
                         ": " + c.Describe());
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
  if (CpuHasDotPath()) {
    EXPECT_GT(dot_cases, 190);
    EXPECT_GT(split_cases, 20);
    EXPECT_GT(uint8_pair_cases, 8);
    EXPECT_GT(ifma_cases, 60);
    EXPECT_GT(magnitude_cases, 5);
    EXPECT_GT(requant64_cases, 8);
    EXPECT_GT(general_cases, 10);
  }
}

TEST(OptimizedDepthwiseTest, DotProductShapes3x3) { CheckDotProductShapes(3, 61); }
TEST(OptimizedDepthwiseTest, DotProductShapes5x5) { CheckDotProductShapes(5, 67); }

TEST(OptimizedDepthwiseTest, MagnitudeExactIsExactlyWhenNoAccumulatorDiffers) {
  // The magnitude form sign(acc) * ((|acc| * M + 2^30 + r * 2^31) >> (31 + e))
  // against quant::MultiplyByQuantizedMultiplier for every acc in [-bound,
  // bound]: MagnitudeExact must say true exactly when none differs.
  // Multipliers with 0..30 trailing zero bits, right shifts 0..12.
  std::mt19937 rng(71);
  int exact = 0, inexact = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int v = std::uniform_int_distribution<int>(0, 30)(rng);
    const int32_t m = static_cast<int32_t>(
        ((static_cast<uint32_t>(rng()) | 1u) << v & 0x3FFFFFFFu) | 0x40000000u);
    const int32_t shift = -std::uniform_int_distribution<int>(0, 12)(rng);
    const int64_t bound = std::uniform_int_distribution<int64_t>(1, 1 << 13)(rng);
    const int e = -shift;
    const uint64_t round = (uint64_t{1} << 30) + (e > 0 ? uint64_t{1} << (30 + e) : 0);
    bool differs = false;
    for (int64_t acc = -bound; acc <= bound && !differs; ++acc) {
      const uint64_t magnitude =
          (static_cast<uint64_t>(acc < 0 ? -acc : acc) * static_cast<uint64_t>(m) + round) >>
          (31 + e);
      const int64_t ours = acc < 0 ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
      differs = ours != quant::MultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), m, shift);
    }
    const bool claimed = optimized::MagnitudeExact(m, shift, bound);
    ASSERT_EQ(claimed, !differs) << "multiplier " << m << " shift " << shift << " bound " << bound;
    (claimed ? exact : inexact) += 1;
  }
  EXPECT_GT(exact, 500);
  EXPECT_GT(inexact, 300);
}

TEST(OptimizedDepthwiseTest, MagnitudeRequantization) {
  // The tap-pair paths' magnitude requantization (one rounding on |acc|,
  // see quant_depthwise.h) against the reference's two, bit for bit:
  // multipliers from 1/4096 to just below 1 (right shifts 0..12, where ties
  // of the second rounding are frequent), images large enough for many
  // accumulator values per channel; and the layers Prepare must keep on the
  // general requantization: a power-of-two scale (multiplier 2^30, whose
  // first and second roundings can tie together), a scale above 1 (left
  // shift), a bias that puts the |acc| bound past 2^31.
  std::mt19937 rng(53);
  int magnitude = 0, general = 0;
  for (int trial = 0; trial < 120; ++trial) {
    FixedShape fixed;
    fixed.filter = trial % 5 == 4 ? 5 : 3;
    fixed.stride_w = 1 + trial % 2;
    fixed.dilation_w = 1;
    fixed.height = std::uniform_int_distribution<int>(6, 16)(rng);
    fixed.width = std::uniform_int_distribution<int>(6, 24)(rng);
    const int depth = Pick(rng, std::vector<int>{8, 16, 24, 32, 48});
    RandomDepthwise c = MakeDepthwise(rng, trial % 3 == 0, 1, depth, fixed);
    const int kind = trial % 8;
    for (int ch = 0; ch < c.g.output_depth; ++ch) {
      const double real = kind == 5   ? 0.25                                   // 2^30, shift -1
                          : kind == 6 ? 1.5 + 0.01 * ch                        // left shift
                                      : std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(rng),
                                                   -std::uniform_int_distribution<int>(0, 12)(rng));
      int32_t m;
      int s;
      quant::QuantizeMultiplier(real, &m, &s);
      c.multipliers[ch] = m;
      c.shifts[ch] = s;
      c.bias[ch] = kind == 7 && ch == 0 ? std::numeric_limits<int32_t>::max() - 1000
                                        : std::uniform_int_distribution<int32_t>(-3000, 3000)(rng);
    }
    c.has_bias = true;
    c.act_min = c.is_uint8 ? 0 : -128;
    c.act_max = c.is_uint8 ? 255 : 127;
    const std::vector<uint8_t> expected = ReferenceOutput(c);
    for (Isa isa : SupportedIsas()) {
      if (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni) {
        const bool used = optimized::QuantDepthwise(MakeParams(c), isa).magnitude_requant();
        EXPECT_EQ(used, kind < 5) << optimized::IsaName(isa) << " " << c.Describe();
        (used ? magnitude : general) += 1;
      }
      for (int splits : {1, 2}) {
        ExpectSame(expected, OptimizedOutput(c, isa, splits),
                   std::string(optimized::IsaName(isa)) + " splits " + std::to_string(splits) +
                       " kind " + std::to_string(kind) + ": " + c.Describe());
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
  if (optimized::IsaSupported(Isa::kAvx2)) {
    EXPECT_GT(magnitude, 70);
    EXPECT_GT(general, 40);
  }
}

TEST(OptimizedDepthwiseTest, SingleInputChannelWideMultiplier) {
  // person_detect's first layer: one input channel, multiplier 8.
  std::mt19937 rng(3);
  for (int trial = 0; trial < 30; ++trial) {
    const RandomDepthwise c =
        MakeDepthwise(rng, trial % 2 == 0, Pick(rng, std::vector<int>{8, 16, 19, 33}), 1);
    const std::vector<uint8_t> expected = ReferenceOutput(c);
    for (Isa isa : SupportedIsas())
      ExpectSame(expected, OptimizedOutput(c, isa, 2),
                 std::string(optimized::IsaName(isa)) + " " + c.Describe());
  }
}

TEST(OptimizedDepthwiseTest, SmallInputDepthMultipliers) {
  // Depth multipliers 2..8 over input depths 1..5: output channels below,
  // at and past the 8-lane AVX2 blocks, loads at the end of each pixel.
  std::mt19937 rng(23);
  int blocks = 0, tails = 0;
  for (int multiplier = 2; multiplier <= 8; ++multiplier) {
    for (int depth = 1; depth <= 5; ++depth) {
      for (int trial = 0; trial < 6; ++trial) {
        const RandomDepthwise c = MakeDepthwise(rng, trial % 2 == 1, multiplier, depth);
        ASSERT_TRUE(optimized::QuantDepthwise::Covers(c.g));
        blocks += c.g.output_depth >= 8;
        tails += c.g.output_depth % 8 != 0;
        const std::vector<uint8_t> expected = ReferenceOutput(c);
        for (Isa isa : SupportedIsas()) {
          for (int splits : {1, 3}) {
            ExpectSame(expected, OptimizedOutput(c, isa, splits),
                       std::string(optimized::IsaName(isa)) + " splits " +
                           std::to_string(splits) + " multiplier " + std::to_string(multiplier) +
                           ": " + c.Describe());
            if (::testing::Test::HasFailure()) return;
          }
        }
      }
    }
  }
  EXPECT_GT(blocks, 100);
  EXPECT_GT(tails, 100);
}

template <class T>
std::vector<T> RunModel(const RandomDepthwise& c, bool per_channel_q, KernelSet kernels,
                        int threads) {
  const DataType type = c.is_uint8 ? DataType::kUInt8 : DataType::kInt8;
  const reference::DepthwiseGeometry& g = c.g;
  OpModel m;
  const int in = m.AddInput(type, {g.batches, g.input_height, g.input_width, g.input_depth},
                            Q(0.5f, c.input_zp));
  Quantization fq = Q(0.01f, c.filter_zp);
  if (per_channel_q) {
    std::vector<float> scales(g.output_depth);
    for (int ch = 0; ch < g.output_depth; ++ch) scales[ch] = 0.002f * (1 + ch % 5);
    fq = QPerAxis(scales, std::vector<int64_t>(g.output_depth, 0), 3);
  }
  std::vector<T> filter(c.filter.size());
  std::memcpy(filter.data(), c.filter.data(), filter.size());
  const int f =
      m.AddConst<T>(type, {1, g.filter_height, g.filter_width, g.output_depth}, filter, fq);
  const int b = m.AddConst<int32_t>(DataType::kInt32, {g.output_depth}, c.bias, Q(0.005f, 0));
  const int out = m.AddOutput(type, Q(0.05f, c.output_zp));
  DepthwiseConv2DParams params;
  params.padding = c.padding;
  params.stride_h = g.stride_height;
  params.stride_w = g.stride_width;
  params.dilation_h = g.dilation_height;
  params.dilation_w = g.dilation_width;
  params.depth_multiplier = g.depth_multiplier;
  params.activation = Activation::kRelu6;
  m.AddOp(BuiltinOp::kDepthwiseConv2d, {in, f, b}, {out}, params, 3);
  m.Build(threads, kernels);
  std::vector<T> input(c.input.size());
  std::memcpy(input.data(), c.input.data(), input.size());
  m.SetInput<T>(0, input);
  m.Invoke();
  return m.GetOutput<T>(0);
}

TEST(OptimizedDepthwiseTest, InterpreterOptimizedEqualsReference) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 48; ++trial) {
    const int multiplier = trial % 6 == 5 ? 2 + trial % 3 : 1;
    RandomDepthwise c = MakeDepthwise(rng, trial % 2 == 0, multiplier);
    const bool per_channel = !c.is_uint8 && trial % 4 == 1;
    for (int threads : {1, 2}) {
      if (c.is_uint8) {
        EXPECT_EQ(RunModel<uint8_t>(c, per_channel, KernelSet::kReference, threads),
                  RunModel<uint8_t>(c, per_channel, KernelSet::kOptimized, threads))
            << c.Describe() << " threads " << threads;
      } else {
        EXPECT_EQ(RunModel<int8_t>(c, per_channel, KernelSet::kReference, threads),
                  RunModel<int8_t>(c, per_channel, KernelSet::kOptimized, threads))
            << c.Describe() << " threads " << threads;
      }
    }
  }
}

TEST(OptimizedDepthwiseTest, InterpreterMultiplierEachIsa) {
  // Depth multiplier > 1 through the interpreter with each ISA forced (the
  // op picks the AVX2 kernel only when AVX-512 is unavailable or overridden).
  std::mt19937 rng(29);
  for (int trial = 0; trial < 24; ++trial) {
    const RandomDepthwise c = MakeDepthwise(rng, trial % 2 == 0, 2 + trial % 7, 1 + trial / 7 % 5);
    const bool per_channel = !c.is_uint8 && trial % 4 == 1;
    for (Isa isa : SupportedIsas()) {
      optimized::ScopedIsaOverride force(isa);
      for (int threads : {1, 2}) {
        const std::string what =
            std::string(optimized::IsaName(isa)) + " " + c.Describe() + " threads " +
            std::to_string(threads);
        if (c.is_uint8) {
          EXPECT_EQ(RunModel<uint8_t>(c, per_channel, KernelSet::kReference, threads),
                    RunModel<uint8_t>(c, per_channel, KernelSet::kOptimized, threads))
              << what;
        } else {
          EXPECT_EQ(RunModel<int8_t>(c, per_channel, KernelSet::kReference, threads),
                    RunModel<int8_t>(c, per_channel, KernelSet::kOptimized, threads))
              << what;
        }
      }
    }
  }
}

}  // namespace
}  // namespace delegato
