// Hybrid (float activations, int8 weights) fast kernels against the reference
// kernels, byte for byte, for every ISA: the row quantizer, CONV_2D and
// FULLY_CONNECTED over sizes below, at and above the tiles (16-channel
// blocks, 4/6/8-row tiles, the row panel), odd depths (the int16 pair tail),
// padding, strides, several batches (a zero point per image or row) and
// 1-3 tasks.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/hybrid_depthwise.h"
#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/hybrid_gemm.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/batch_matmul.h"
#include "kernels/reference/hybrid.h"

namespace delegato {
namespace {

using optimized::Isa;

class HybridKernelTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!optimized::IsaSupported(GetParam()))
      GTEST_SKIP() << optimized::IsaName(GetParam()) << " unsupported";
  }
};

std::vector<float> RandomFloats(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<int8_t> RandomWeights(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

bool SameBytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// ------------------------------------------------------------ row quantization

// HybridGemm's int32 sums against a plain loop: channel counts around the
// 16-channel blocks and the half block, and row counts around every tile
// (one or two rows take several blocks at once; the last rows of a block
// one tile).
TEST_P(HybridKernelTest, GemmSumsEqualPlainLoop) {
  const Isa isa = GetParam();
  std::mt19937 rng(12);
  for (int n : {1, 8, 9, 16, 24, 40, 64, 72, 130, 150}) {
    for (int k : {1, 2, 7, 33}) {
      std::vector<int8_t> w(static_cast<size_t>(n) * k);
      for (auto& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
      const optimized::HybridGemm gemm(w.data(), n, k, isa);
      for (int rows : {1, 2, 3, 5, 6, 7, 8, 9, 13, 17}) {
        std::vector<int16_t> a(static_cast<size_t>(rows) * gemm.k_padded(), 0);
        for (int r = 0; r < rows; ++r)
          for (int i = 0; i < k; ++i)
            a[static_cast<size_t>(r) * gemm.k_padded() + i] =
                static_cast<int16_t>(static_cast<int>(rng() % 511) - 255);
        std::vector<int32_t> acc(static_cast<size_t>(rows) * gemm.n_padded(), -7);
        gemm.Multiply(a.data(), rows, acc.data());
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < n; ++c) {
            int32_t sum = 0;
            for (int i = 0; i < k; ++i)
              sum += int32_t{w[static_cast<size_t>(c) * k + i]} *
                     a[static_cast<size_t>(r) * gemm.k_padded() + i];
            ASSERT_EQ(acc[static_cast<size_t>(r) * gemm.n_padded() + c], sum)
                << "n " << n << " k " << k << " rows " << rows << " row " << r << " channel " << c;
          }
      }
    }
  }
}

TEST_P(HybridKernelTest, QuantizeRowEqualsReference) {
  const Isa isa = GetParam();
  std::mt19937 rng(7);
  std::vector<std::vector<float>> rows;
  for (int n : {1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1000}) {
    rows.push_back(RandomFloats(rng, n, -3.0f, 5.0f));
    rows.push_back(RandomFloats(rng, n, 0.0f, 2.0f));   // no negative values
    rows.push_back(RandomFloats(rng, n, -1.0f, 0.0f));  // no positive values
  }
  rows.push_back(std::vector<float>(40, 0.0f));  // an empty range
  // Ties of the rounding: with extremes -127 and 127 (symmetric scale 1) or
  // -128 and 127 (asymmetric scale 1) the values land on k + 0.5.
  std::vector<float> ties = {-127.0f, 127.0f};
  for (int k = -100; k < 100; k += 3) ties.push_back(static_cast<float>(k) + 0.5f);
  rows.push_back(ties);
  ties[0] = -128.0f;
  rows.push_back(ties);
  std::vector<float> special = RandomFloats(rng, 50, -1.0f, 1.0f);
  special[3] = -0.0f;
  rows.push_back(special);
  special[17] = std::numeric_limits<float>::quiet_NaN();  // the reference's own handling
  rows.push_back(special);
  special[17] = std::numeric_limits<float>::infinity();
  rows.push_back(special);
  special[17] = 0.5f;
  special[49] = std::numeric_limits<float>::quiet_NaN();  // in the vector loops' tail
  rows.push_back(special);
  special[49] = -std::numeric_limits<float>::infinity();
  rows.push_back(special);
  std::vector<float> large = RandomFloats(rng, 70, -1.0f, 1.0f);
  large[40] = std::numeric_limits<float>::quiet_NaN();  // in a full vector
  rows.push_back(large);
  for (const std::vector<float>& row : rows) {
    const auto n = static_cast<int32_t>(row.size());
    for (bool asymmetric : {false, true}) {
      std::vector<int8_t> ref(n), fast(n);
      float ref_scale = 0, fast_scale = 0;
      int32_t ref_zp = 0, fast_zp = 0;
      if (asymmetric)
        reference::AsymmetricQuantizeRow(row.data(), n, ref.data(), &ref_scale, &ref_zp);
      else
        reference::SymmetricQuantizeRow(row.data(), n, ref.data(), &ref_scale);
      optimized::HybridQuantizeRow(isa, row.data(), n, asymmetric, fast.data(), &fast_scale,
                                   &fast_zp);
      EXPECT_EQ(ref, fast) << "n " << n << " asymmetric " << asymmetric;
      EXPECT_EQ(std::memcmp(&ref_scale, &fast_scale, sizeof(float)), 0);
      EXPECT_EQ(ref_zp, fast_zp);
    }
  }
}

// Rows quantized together (scales and zero points 8 at a time) against the
// reference row by row: row counts around the 8-lane groups, and rows whose
// extremes put the asymmetric zero point on a tie (-27.5: -100.5 and 154.5,
// scale 1), below -128 or above 127 (no negative or no positive values), an
// empty range, a NaN and infinities among ordinary rows.
TEST_P(HybridKernelTest, QuantizeRowsEqualReferenceRowByRow) {
  const Isa isa = GetParam();
  std::mt19937 rng(8);
  for (int n : {1, 5, 32, 64, 70}) {
    for (int rows : {1, 7, 8, 9, 16, 17}) {
      const int64_t stride = n + 3;  // rows apart, as BATCH_MATMUL's gathered ones are not
      std::vector<float> values =
          RandomFloats(rng, static_cast<size_t>(stride) * rows, -3.0f, 5.0f);
      for (int r = 0; r < rows; ++r) {
        float* row = values.data() + r * stride;
        switch (r % 9) {
          case 1: std::fill(row, row + n, 0.0f); break;  // empty range
          case 2: for (int i = 0; i < n; ++i) row[i] = std::fabs(row[i]); break;
          case 3: for (int i = 0; i < n; ++i) row[i] = -std::fabs(row[i]); break;
          case 4: row[0] = -100.5f; if (n > 1) row[n - 1] = 154.5f; break;
          case 5: row[n / 2] = std::numeric_limits<float>::quiet_NaN(); break;
          case 6: row[n - 1] = std::numeric_limits<float>::infinity(); break;
          case 7: row[0] = -std::numeric_limits<float>::infinity(); break;
          default: break;
        }
      }
      for (bool asymmetric : {false, true}) {
        std::vector<int8_t> fast(static_cast<size_t>(n) * rows, 99);
        std::vector<float> fast_scales(rows, -1.0f);
        std::vector<int32_t> fast_zps(rows, -1);
        optimized::HybridQuantizeRows(isa, values.data(), stride, rows, n, asymmetric,
                                      fast.data(), fast_scales.data(), fast_zps.data());
        for (int r = 0; r < rows; ++r) {
          std::vector<int8_t> ref(n);
          float ref_scale = 0;
          int32_t ref_zp = 0;
          if (asymmetric)
            reference::AsymmetricQuantizeRow(values.data() + r * stride, n, ref.data(), &ref_scale,
                                             &ref_zp);
          else
            reference::SymmetricQuantizeRow(values.data() + r * stride, n, ref.data(), &ref_scale);
          const std::vector<int8_t> got(fast.begin() + r * n, fast.begin() + (r + 1) * n);
          EXPECT_EQ(ref, got) << "n " << n << " rows " << rows << " row " << r << " asymmetric "
                              << asymmetric;
          EXPECT_EQ(std::memcmp(&ref_scale, &fast_scales[r], sizeof(float)), 0)
              << "n " << n << " row " << r << ": " << ref_scale << " vs " << fast_scales[r];
          EXPECT_EQ(ref_zp, fast_zps[r]) << "n " << n << " row " << r;
        }
      }
    }
  }
}

// ------------------------------------------------------------ CONV_2D

struct ConvCase {
  int batches, height, width, in_depth, out_depth, filter, stride, pad;
};

// The kernel's parameters for the reference's.
optimized::HybridConvKernelParams KernelParamsOf(const reference::ConvGeometry& g,
                                                 const int8_t* filter,
                                                 const reference::HybridConvParams& p) {
  optimized::HybridConvKernelParams kp;
  kp.geometry = g;
  kp.filter = filter;
  kp.per_channel = p.per_channel;
  kp.weight_scales = p.weight_scales;
  kp.act_min = p.act_min;
  kp.act_max = p.act_max;
  return kp;
}

// The case's geometry in `groups` groups (explicit padding).
reference::ConvGeometry GeometryOf(const ConvCase& c, int groups) {
  reference::ConvGeometry g;
  g.batches = c.batches;
  g.input_height = c.height;
  g.input_width = c.width;
  g.input_depth = c.in_depth;
  g.filter_depth = c.in_depth / groups;
  g.filter_height = g.filter_width = c.filter;
  g.output_depth = c.out_depth;
  g.stride_height = g.stride_width = c.stride;
  g.pad_height = g.pad_width = c.pad;
  g.output_height = (c.height + 2 * c.pad - c.filter) / c.stride + 1;
  g.output_width = (c.width + 2 * c.pad - c.filter) / c.stride + 1;
  return g;
}

TEST_P(HybridKernelTest, ConvEqualsReference) {
  const Isa isa = GetParam();
  std::mt19937 rng(11);
  const std::vector<ConvCase> cases = {
      {1, 1, 1, 1, 1, 1, 1, 0},    {1, 3, 3, 16, 16, 1, 1, 0},  {2, 5, 4, 17, 15, 1, 1, 0},
      {1, 4, 6, 8, 17, 1, 1, 0},   {1, 9, 11, 3, 33, 3, 2, 1},  {2, 7, 7, 5, 32, 3, 1, 1},
      {1, 6, 6, 16, 48, 3, 1, 0},  {1, 12, 12, 24, 64, 1, 1, 0}, {1, 8, 8, 2, 31, 5, 2, 2},
      {1, 10, 10, 96, 24, 1, 1, 0}, {2, 3, 5, 1, 80, 3, 1, 1},
      // The zoo's small models: 8 or 16 channels, first layers over 3;
      // 1x1 over an odd depth or with a stride (rows not read in place).
      {1, 24, 24, 16, 8, 3, 1, 1}, {1, 16, 16, 3, 16, 5, 2, 2}, {2, 9, 7, 3, 16, 3, 2, 1},
      {1, 6, 6, 7, 16, 1, 2, 0},   {1, 5, 5, 9, 8, 1, 1, 0},    {3, 4, 4, 32, 16, 1, 1, 0},
      {2, 16, 16, 16, 16, 3, 1, 1},  // above the size split across tasks, blocks at images
      {1, 24, 24, 16, 72, 1, 1, 0}};
  for (const ConvCase& c : cases) {
    const reference::ConvGeometry g = GeometryOf(c, 1);
    ASSERT_TRUE(optimized::HybridConvKernel::Covers(g));
    const size_t image = static_cast<size_t>(c.height) * c.width * c.in_depth;
    const std::vector<float> input = RandomFloats(rng, image * c.batches, -2.0f, 3.0f);
    const std::vector<int8_t> filter =
        RandomWeights(rng, g.packed_filter_elements());
    const std::vector<float> bias = RandomFloats(rng, c.out_depth, -1.0f, 1.0f);
    std::vector<float> weight_scales = RandomFloats(rng, c.out_depth, 0.001f, 0.02f);
    const size_t out_size =
        static_cast<size_t>(c.batches) * g.output_height * g.output_width * c.out_depth;
    for (bool per_channel : {true, false}) {
      for (bool with_bias : {true, false}) {
        reference::HybridConvParams p;
        p.per_channel = per_channel;
        p.weight_scales = weight_scales.data();
        p.act_min = per_channel ? 0.0f : -std::numeric_limits<float>::max();
        p.act_max = per_channel ? 6.0f : std::numeric_limits<float>::max();
        std::vector<int8_t> quantized(image * c.batches);
        std::vector<float> scales(c.batches);
        std::vector<int32_t> zero_points(c.batches);
        reference::QuantizeConvInput(g, per_channel, weight_scales[0], input.data(),
                                     quantized.data(), scales.data(), zero_points.data(), 0,
                                     c.batches);
        const float* b = with_bias ? bias.data() : nullptr;
        std::vector<float> ref(out_size, -1.0f);
        reference::HybridConv(g, p, quantized.data(), scales.data(), zero_points.data(),
                              filter.data(), b, ref.data(), 0, g.output_rows());
        const optimized::HybridConvKernelParams kp = KernelParamsOf(g, filter.data(), p);
        for (int threads : {1, 2, 3}) {
          optimized::HybridConvKernel kernel(kp, isa, threads);
          std::vector<uint8_t> scratch(kernel.scratch_bytes());
          std::vector<float> fast(out_size, -2.0f);
          for (int batch = 0; batch < c.batches; ++batch)
            kernel.WidenImage(batch, quantized.data() + batch * image, zero_points[batch],
                              scratch.data());
          for (int task = kernel.num_tasks() - 1; task >= 0; --task)
            kernel.RunTask(task, scales.data(), b, fast.data(), scratch.data());
          EXPECT_TRUE(SameBytes(ref, fast))
              << optimized::IsaName(isa) << " case " << c.batches << "x" << c.height << "x"
              << c.width << "x" << c.in_depth << " -> " << c.out_depth << " k" << c.filter
              << " s" << c.stride << " p" << c.pad << " per_channel " << per_channel
              << " bias " << with_bias << " threads " << threads;
        }
      }
    }
  }
}

// Grouped, per-channel weights (HybridGroupedConv): groups of 1-16 input
// and 1-24 output channels, strided and padded, batches, 1-3 tasks; bit for
// bit the reference's grouped HybridConv.
TEST_P(HybridKernelTest, GroupedConvEqualsReference) {
  const Isa isa = GetParam();
  std::mt19937 rng(23);
  struct GroupedCase {
    ConvCase conv;  // in_depth and out_depth: the whole layer's
    int groups;
  };
  const std::vector<GroupedCase> cases = {
      {{1, 5, 6, 4, 4, 1, 1, 0}, 2},    {{2, 7, 7, 24, 12, 3, 1, 1}, 3},
      {{1, 9, 8, 64, 64, 3, 1, 1}, 8},  {{1, 10, 10, 128, 96, 3, 2, 1}, 8},
      {{2, 6, 5, 32, 32, 1, 1, 0}, 32}, {{1, 8, 8, 48, 48, 5, 2, 2}, 2}};
  for (const GroupedCase& gc : cases) {
    const ConvCase& c = gc.conv;
    const reference::ConvGeometry g = GeometryOf(c, gc.groups);
    ASSERT_TRUE(optimized::HybridGroupedConv::Covers(g));
    const size_t image = static_cast<size_t>(c.height) * c.width * c.in_depth;
    const std::vector<float> input = RandomFloats(rng, image * c.batches, -2.0f, 3.0f);
    const std::vector<int8_t> filter = RandomWeights(rng, g.packed_filter_elements());
    const std::vector<float> bias = RandomFloats(rng, c.out_depth, -1.0f, 1.0f);
    const std::vector<float> weight_scales = RandomFloats(rng, c.out_depth, 0.001f, 0.02f);
    reference::HybridConvParams p;
    p.per_channel = true;
    p.weight_scales = weight_scales.data();
    p.act_min = -1.0f;
    p.act_max = 4.0f;
    std::vector<int8_t> quantized(image * c.batches);
    std::vector<float> scales(c.batches);
    std::vector<int32_t> zero_points(c.batches);
    reference::QuantizeConvInput(g, true, weight_scales[0], input.data(), quantized.data(),
                                 scales.data(), zero_points.data(), 0, c.batches);
    const size_t out_size =
        static_cast<size_t>(c.batches) * g.output_height * g.output_width * c.out_depth;
    std::vector<float> ref(out_size, -1.0f);
    reference::HybridConv(g, p, quantized.data(), scales.data(), zero_points.data(),
                          filter.data(), bias.data(), ref.data(), 0, g.output_rows());
    const optimized::HybridConvKernelParams kp = KernelParamsOf(g, filter.data(), p);
    for (int threads : {1, 2, 3}) {
      const optimized::HybridGroupedConv kernel(kp, isa, threads);
      optimized::AlignedBuffer<uint8_t> scratch(kernel.scratch_bytes() + 64);
      std::vector<float> fast(out_size, -2.0f);
      for (int task = kernel.num_tasks() - 1; task >= 0; --task)
        kernel.RunTask(task, quantized.data(), zero_points.data(), scales.data(), bias.data(),
                       fast.data(), scratch.data());
      EXPECT_TRUE(SameBytes(ref, fast))
          << optimized::IsaName(isa) << " groups " << gc.groups << " case " << c.batches << "x"
          << c.height << "x" << c.width << "x" << c.in_depth << " -> " << c.out_depth << " k"
          << c.filter << " s" << c.stride << " threads " << threads;
    }
  }
}

// ------------------------------------------------------------ DEPTHWISE_CONV_2D

struct DepthwiseCase {
  int batches, height, width, depth, filter, stride, dilation, pad;
  int multiplier = 1;  // output channels: depth * multiplier
};

TEST_P(HybridKernelTest, DepthwiseEqualsReference) {
  const Isa isa = GetParam();
  std::mt19937 rng(17);
  const std::vector<DepthwiseCase> cases = {
      {1, 1, 1, 1, 1, 1, 1, 0},  {1, 5, 5, 7, 3, 1, 1, 1},  {2, 6, 7, 8, 3, 2, 1, 1},
      {1, 9, 9, 9, 3, 1, 2, 2},  {1, 8, 8, 17, 5, 2, 1, 2}, {2, 4, 4, 32, 3, 1, 1, 0},
      {1, 7, 5, 40, 3, 2, 1, 0}, {1, 3, 3, 16, 3, 1, 1, 1},
      // Channels around the 8/16-lane groups and the four-group step.
      {1, 6, 6, 64, 3, 1, 1, 1}, {1, 5, 5, 72, 3, 2, 1, 1}, {1, 4, 4, 100, 3, 1, 1, 1},
      {2, 5, 6, 144, 3, 1, 1, 1}, {1, 4, 4, 23, 3, 1, 1, 1}, {1, 9, 9, 33, 5, 1, 1, 2},
      {1, 6, 6, 24, 3, 2, 1, 0},
      // Four groups after the last whole step (49-63 channels past 64, 25-31
      // past 32): MobileNet V3's 120 channels, 5x5.
      {1, 6, 6, 120, 5, 1, 1, 2}, {1, 5, 5, 60, 3, 1, 1, 1}, {1, 4, 4, 30, 3, 1, 1, 1},
      // AVX-512 pairs of channels, 32 at a time: four groups then three, or one.
      {1, 3, 4, 224, 3, 1, 1, 1}, {1, 4, 3, 160, 5, 1, 1, 2},
      // Depth multipliers: the widening repeats each input channel.
      {1, 5, 5, 3, 3, 1, 1, 1, 2}, {2, 6, 7, 16, 3, 2, 1, 1, 2}, {1, 4, 4, 5, 3, 1, 1, 1, 3},
      {1, 6, 6, 1, 5, 1, 1, 2, 8}, {1, 5, 4, 12, 3, 1, 2, 2, 4}};
  for (const DepthwiseCase& c : cases) {
    reference::DepthwiseGeometry g;
    g.batches = c.batches;
    g.input_height = c.height;
    g.input_width = c.width;
    const int out_depth = c.depth * c.multiplier;
    g.input_depth = c.depth;
    g.output_depth = out_depth;
    g.depth_multiplier = c.multiplier;
    g.filter_height = g.filter_width = c.filter;
    g.stride_height = g.stride_width = c.stride;
    g.dilation_height = g.dilation_width = c.dilation;
    g.pad_height = g.pad_width = c.pad;
    const int extent = c.dilation * (c.filter - 1) + 1;
    g.output_height = (c.height + 2 * c.pad - extent) / c.stride + 1;
    g.output_width = (c.width + 2 * c.pad - extent) / c.stride + 1;
    ASSERT_GT(g.output_height, 0);
    ASSERT_GT(g.output_width, 0);
    const size_t image = static_cast<size_t>(c.height) * c.width * c.depth;
    const std::vector<float> input = RandomFloats(rng, image * c.batches, -2.0f, 3.0f);
    const std::vector<int8_t> filter = RandomWeights(rng, g.filter_elements());
    const std::vector<float> bias = RandomFloats(rng, out_depth, -1.0f, 1.0f);
    const std::vector<float> channel_scales = RandomFloats(rng, out_depth, 0.001f, 0.02f);
    std::vector<int8_t> quantized(image * c.batches);
    std::vector<float> scales(c.batches);
    std::vector<int32_t> zero_points(c.batches);
    reference::QuantizeDepthwiseInput(g, input.data(), quantized.data(), scales.data(),
                                      zero_points.data(), 0, c.batches);
    const size_t out_size =
        static_cast<size_t>(c.batches) * g.output_height * g.output_width * out_depth;
    for (bool with_bias : {true, false}) {
      reference::HybridDepthwiseParams p;
      p.channel_scales = channel_scales.data();
      p.act_min = with_bias ? 0.0f : -std::numeric_limits<float>::max();
      p.act_max = with_bias ? 6.0f : std::numeric_limits<float>::max();
      const float* b = with_bias ? bias.data() : nullptr;
      std::vector<float> ref(out_size, -1.0f), fast(out_size, -2.0f);
      reference::HybridDepthwiseConv(g, p, quantized.data(), scales.data(), zero_points.data(),
                                     filter.data(), b, ref.data(), 0, g.output_rows());
      optimized::HybridDepthwiseKernel kernel(g, filter.data(), channel_scales.data(), p.act_min,
                                              p.act_max, isa);
      std::vector<uint8_t> scratch(kernel.scratch_bytes() + 64);
      uint8_t* widened = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
      for (int batch = 0; batch < c.batches; ++batch)
        kernel.WidenImage(batch, quantized.data() + batch * image, zero_points[batch], widened);
      // Two row ranges, as two tasks would run them.
      const int64_t split = g.output_rows() / 2;
      kernel.Run(widened, scales.data(), b, fast.data(), split, g.output_rows());
      kernel.Run(widened, scales.data(), b, fast.data(), 0, split);
      EXPECT_TRUE(SameBytes(ref, fast))
          << optimized::IsaName(isa) << " " << c.batches << "x" << c.height << "x" << c.width
          << "x" << c.depth << " k" << c.filter << " s" << c.stride << " d" << c.dilation
          << " p" << c.pad << " multiplier " << c.multiplier << " bias " << with_bias;
    }
  }
}

// ------------------------------------------------------------ FULLY_CONNECTED

TEST_P(HybridKernelTest, FullyConnectedEqualsReference) {
  const Isa isa = GetParam();
  std::mt19937 rng(13);
  for (int batches : {1, 3, 16, 17, 40}) {
    for (int depth : {1, 2, 31, 64, 100}) {
      for (int units : {1, 15, 16, 17, 40}) {
        const std::vector<float> input =
            RandomFloats(rng, static_cast<size_t>(batches) * depth, -2.0f, 4.0f);
        const std::vector<int8_t> weights = RandomWeights(rng, static_cast<size_t>(units) * depth);
        const std::vector<float> bias = RandomFloats(rng, units, -1.0f, 1.0f);
        const std::vector<float> weight_scales = RandomFloats(rng, units, 0.001f, 0.02f);
        std::vector<int32_t> row_sums(units, 0);
        for (int u = 0; u < units; ++u)
          for (int k = 0; k < depth; ++k) row_sums[u] += weights[static_cast<size_t>(u) * depth + k];
        for (int variant = 0; variant < 8; ++variant) {
          reference::HybridFullyConnectedParams p;
          p.batches = batches;
          p.depth = depth;
          p.units = units;
          p.weights = weights.data();
          p.weight_scales = weight_scales.data();
          p.per_channel = (variant & 1) != 0;
          p.asymmetric = (variant & 2) != 0;
          p.row_sums = row_sums.data();
          const bool clamp = (variant & 4) != 0;
          p.act_min = -1.0f;
          p.act_max = 1.0f;
          const float* b = variant % 3 == 0 ? nullptr : bias.data();
          std::vector<int8_t> quantized(static_cast<size_t>(batches) * depth);
          std::vector<float> ref(static_cast<size_t>(batches) * units, -1.0f);
          reference::HybridFullyConnected(p, input.data(), b, quantized.data(), ref.data(), 0,
                                          batches, clamp);
          optimized::HybridFullyConnectedKernelParams kp;
          kp.depth = depth;
          kp.units = units;
          kp.weights = weights.data();
          kp.weight_scales = weight_scales.data();
          kp.per_channel = p.per_channel;
          kp.asymmetric = p.asymmetric;
          kp.clamp = clamp;
          kp.act_min = p.act_min;
          kp.act_max = p.act_max;
          optimized::HybridFullyConnectedKernel kernel(kp, isa);
          std::vector<uint8_t> scratch(kernel.scratch_bytes(batches));
          std::vector<float> fast(ref.size(), -2.0f);
          // Two calls over split rows, as two tasks would make them.
          const int split = batches / 2;
          kernel.Run(input.data(), b, fast.data(), split, batches, scratch.data());
          kernel.Run(input.data(), b, fast.data(), 0, split, scratch.data());
          EXPECT_TRUE(SameBytes(ref, fast))
              << optimized::IsaName(isa) << " " << batches << "x" << depth << " -> " << units
              << " variant " << variant;
        }
      }
    }
  }
}

// ------------------------------------------------------------ BATCH_MATMUL

TEST_P(HybridKernelTest, BatchMatMulEqualsReference) {
  const Isa isa = GetParam();
  std::mt19937 rng(17);
  struct Batches {
    int32_t lhs, rhs;
  };
  for (Batches batches : {Batches{1, 1}, Batches{2, 1}, Batches{1, 3}, Batches{3, 3}}) {
    for (int rows : {1, 5, 16, 17, 33}) {
      for (int depth : {1, 3, 4, 31, 65}) {
        for (int cols : {1, 5, 16, 17, 40}) {
          for (int variant = 0; variant < 8; ++variant) {
            reference::BatchMatMulGeometry g;
            g.lhs_batch[2] = batches.lhs;
            g.rhs_batch[2] = batches.rhs;
            g.out_batch[2] = std::max(batches.lhs, batches.rhs);
            g.rows = rows;
            g.cols = cols;
            g.depth = depth;
            g.adj_x = (variant & 1) != 0;
            g.adj_y = (variant & 2) != 0;
            reference::HybridBatchMatMulParams p;
            p.asymmetric = (variant & 4) != 0;
            p.rhs_scale = 0.013f;
            const size_t lhs_rows = static_cast<size_t>(batches.lhs) * rows;
            const std::vector<float> lhs = RandomFloats(rng, lhs_rows * depth, -2.0f, 4.0f);
            const std::vector<int8_t> rhs =
                RandomWeights(rng, static_cast<size_t>(batches.rhs) * depth * cols);
            // Column sums as Prepare computes them.
            std::vector<int32_t> sums(static_cast<size_t>(batches.rhs) * cols, 0);
            for (int32_t mat = 0; mat < batches.rhs; ++mat)
              for (int n = 0; n < cols; ++n)
                for (int k = 0; k < depth; ++k)
                  sums[mat * cols + n] += rhs[static_cast<size_t>(mat) * depth * cols +
                                              (g.adj_y ? n * depth + k : k * cols + n)];
            p.column_sums = sums.data();
            const size_t out_size = static_cast<size_t>(g.out_batch[2]) * rows * cols;
            std::vector<float> row(depth);
            std::vector<int8_t> q_ref(lhs_rows * depth), q_fast(lhs_rows * depth);
            std::vector<float> s_ref(lhs_rows), s_fast(lhs_rows);
            std::vector<int32_t> z_ref(lhs_rows), z_fast(lhs_rows, 5);
            std::vector<float> ref(out_size, -1.0f), fast(out_size, -2.0f);
            reference::QuantizeBatchMatMulLhs(g, p, lhs.data(), row.data(), q_ref.data(),
                                              s_ref.data(), z_ref.data(), 0, batches.lhs);
            reference::HybridBatchMatMul(g, p, q_ref.data(), s_ref.data(), z_ref.data(),
                                         rhs.data(), ref.data());
            optimized::HybridBatchMatMulKernel kernel(g, rhs.data(), isa);
            optimized::AlignedBuffer<uint8_t> scratch(kernel.scratch_bytes());
            kernel.QuantizeLhs(p, lhs.data(), row.data(), q_fast.data(), s_fast.data(),
                               z_fast.data(), 0, batches.lhs);
            kernel.Run(p, q_fast.data(), s_fast.data(), z_fast.data(), fast.data(),
                       scratch.data());
            EXPECT_TRUE(SameBytes(s_ref, s_fast) && z_ref == z_fast && q_ref == q_fast);
            EXPECT_TRUE(SameBytes(ref, fast))
                << optimized::IsaName(isa) << " batches " << batches.lhs << "/" << batches.rhs
                << ", " << rows << "x" << depth << "x" << cols << " variant " << variant;
          }
        }
      }
    }
  }
}

// kNeon runs the NEON GEMM on aarch64 builds (under qemu in CI) and the
// scalar loops on x86, as kAvx2 / kAvx512Vnni do the other way round.
INSTANTIATE_TEST_SUITE_P(Isas, HybridKernelTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni,
                                           Isa::kNeon),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(optimized::IsaName(info.param));
                         });

}  // namespace
}  // namespace delegato
