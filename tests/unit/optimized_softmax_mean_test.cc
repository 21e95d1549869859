// The 8-bit SOFTMAX exp-table kernel (kernels/optimized/softmax8) and the
// 8-bit MEAN sums (kernels/optimized/reduce_mean) against their reference
// kernels, bit for bit: random betas and input scales (up to the
// fixed-point radius and past it), rows of equal values, 1 to 1100 classes,
// every output type; MEAN over every contiguous block of dims of random
// shapes (size-1 dims anywhere), extreme zero points, every ISA this CPU
// runs. Then both ops through the interpreter, optimized vs reference kernel
// sets, 1 and 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/optimized/isa.h"
#include "kernels/optimized/reduce_mean.h"
#include "kernels/optimized/softmax8.h"
#include "kernels/quantization.h"
#include "kernels/reference/reduce.h"
#include "kernels/reference/softmax.h"
#include "test_util.h"

namespace delegato {
namespace {

using optimized::Isa;
using testing::SupportedIsas;
using testing::OpModel;
using testing::Q;

// ---------------------------------------------------------------- softmax

template <class In, class Out>
void CheckSoftmax(const reference::QuantizedSoftmaxParams& p, const std::vector<uint8_t>& bytes,
                  int64_t depth, optimized::QuantSoftmax8::Output output, const std::string& what) {
  const int64_t rows = static_cast<int64_t>(bytes.size()) / depth;
  std::vector<In> in(bytes.size());
  std::memcpy(in.data(), bytes.data(), bytes.size());
  std::vector<Out> expected(bytes.size()), got(bytes.size(), Out(7));
  reference::SoftmaxQuantized(p, in.data(), expected.data(), depth, 0, rows);
  optimized::QuantSoftmax8 kernel;
  kernel.Build(p, std::is_signed_v<In>, output);
  // Two calls over a split of the rows, as the thread pool runs them.
  kernel.Run(in.data(), got.data(), depth, 0, rows / 2);
  kernel.Run(in.data(), got.data(), depth, rows / 2, rows);
  ASSERT_EQ(expected, got) << what;
}

TEST(OptimizedSoftmaxTest, TableMatchesReference) {
  std::mt19937 rng(71);
  int tested = 0;
  for (int trial = 0; tested < 300 && trial < 2000; ++trial) {
    // beta * input_scale from just above the minimum the fixed-point scheme
    // takes to large (every difference beyond the radius).
    const double input_scale =
        std::pow(10.0, std::uniform_real_distribution<double>(-3.5, 0.5)(rng));
    const double beta =
        trial % 4 == 0 ? 1.0 : std::pow(10.0, std::uniform_real_distribution<double>(-1, 1)(rng));
    reference::QuantizedSoftmaxParams p;
    if (!reference::PrepareQuantizedSoftmax(beta, input_scale, &p)) continue;
    ++tested;
    const int64_t depth =
        std::vector<int64_t>{1, 2, 5, 16, 17, 255, 256, 257, 1001, 1100}[trial % 10];
    const int64_t rows = 1 + rng() % 4;
    std::vector<uint8_t> bytes(rows * depth);
    const int mode = trial % 5;
    for (auto& b : bytes) {
      b = static_cast<uint8_t>(rng());
      if (mode == 1) b = 0x80;                                       // all equal (minimum int8)
      if (mode == 2) b = static_cast<uint8_t>(rng() % 2 ? 0 : 255);  // extremes
      if (mode == 3) b = static_cast<uint8_t>(100 + rng() % 8);      // narrow spread
    }
    const std::string what = "trial " + std::to_string(trial) + " depth " + std::to_string(depth) +
                             " scale " + std::to_string(input_scale) + " beta " +
                             std::to_string(beta);
    using Output = optimized::QuantSoftmax8::Output;
    CheckSoftmax<int8_t, int8_t>(p, bytes, depth, Output::kInt8, what + " int8->int8");
    CheckSoftmax<int8_t, int16_t>(p, bytes, depth, Output::kInt16, what + " int8->int16");
    CheckSoftmax<uint8_t, uint8_t>(p, bytes, depth, Output::kUInt8, what + " uint8->uint8");
    CheckSoftmax<uint8_t, int16_t>(p, bytes, depth, Output::kInt16, what + " uint8->int16");
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GE(tested, 300);
}

// ------------------------------------------------------------------- mean

template <class T>
void CheckMean(const reference::ReduceShape& s, const std::vector<uint8_t>& bytes, int32_t in_zp,
               int32_t out_zp, int32_t multiplier, int shift, Isa isa, const std::string& what) {
  std::vector<T> in(bytes.size());
  std::memcpy(in.data(), bytes.data(), bytes.size());
  std::vector<int32_t> sums(s.output_count + 1);
  std::vector<T> expected(s.output_count), got(s.output_count, T(3));
  reference::MeanQuantized(s, in.data(), in_zp, multiplier, shift, out_zp, sums.data(),
                           expected.data());
  optimized::MeanSum8 kernel;
  ASSERT_TRUE(kernel.Plan(s)) << what;
  kernel.is_signed = std::is_signed_v<T>;
  kernel.isa = isa;
  std::vector<int32_t> fast_sums(s.output_count + 1, 0x5A5A5A5A);
  kernel.Run(bytes.data(), fast_sums.data());
  EXPECT_EQ(fast_sums.back(), 0x5A5A5A5A) << what << ": wrote past the sums";
  // Sums over consecutive row ranges (one per thread), added with wrapping.
  for (int64_t parts : {2, 3}) {
    if (kernel.reduced < parts) continue;
    std::vector<int32_t> total(s.output_count, 0), part(s.output_count + 1, 0x5A5A5A5A);
    for (int64_t p = 0; p < parts; ++p) {
      kernel.RunRows(bytes.data(), kernel.reduced * p / parts, kernel.reduced * (p + 1) / parts,
                     part.data());
      ASSERT_EQ(part.back(), 0x5A5A5A5A) << what << ": wrote past the partial sums";
      for (int64_t i = 0; i < s.output_count; ++i)
        total[i] = static_cast<int32_t>(static_cast<uint32_t>(total[i]) +
                                        static_cast<uint32_t>(part[i]));
    }
    EXPECT_TRUE(std::equal(total.begin(), total.end(), fast_sums.begin()))
        << what << ": " << parts << " row parts";
  }
  reference::MeanRescale(s, fast_sums.data(), in_zp, multiplier, shift, out_zp, got.data());
  ASSERT_EQ(expected, got) << what;
}

TEST(OptimizedMeanTest, SumsMatchReference) {
  std::mt19937 rng(73);
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = 1 + trial % 5;
    int32_t dims[reference::kMaxReduceRank];
    bool reduced[reference::kMaxReduceRank] = {};
    const int first = static_cast<int>(rng() % rank);
    const int last = first + static_cast<int>(rng() % (rank - first));
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      dims[d] = std::vector<int>{1, 1, 2, 3, 7, 16, 17, 33, 64, 65}[rng() % 10];
      if (trial % 7 == 0 && d == rank - 1) dims[d] = 1280;  // MobileNet's pooled channels
      reduced[d] = d >= first && d <= last;
      // A kept dim of size 1 inside the block, or a reduced size-1 dim outside
      // it.
      if (d > first && d < last && rng() % 5 == 0) {
        reduced[d] = false;
        dims[d] = 1;
      }
      if ((d < first || d > last) && dims[d] == 1 && rng() % 2) reduced[d] = true;
      count *= dims[d];
    }
    if (count > 400000) continue;
    const reference::ReduceShape s = reference::MakeReduceShape(rank, dims, reduced);
    std::vector<uint8_t> bytes(count);
    const int mode = trial % 4;
    for (auto& b : bytes) b = static_cast<uint8_t>(mode == 1 ? 0x80 : mode == 2 ? 0x7F : rng());
    int32_t multiplier;
    int shift;
    quant::QuantizeMultiplier(std::pow(10.0, std::uniform_real_distribution<double>(-1, 1)(rng)),
                              &multiplier, &shift);
    const int32_t zp_s = trial % 6 == 0   ? -128
                         : trial % 6 == 1 ? 127
                                          : static_cast<int>(rng() % 256) - 128;
    const int32_t zp_u = trial % 6 == 0 ? 0 : trial % 6 == 1 ? 255 : static_cast<int>(rng() % 256);
    for (Isa isa : SupportedIsas()) {
      const std::string what = "trial " + std::to_string(trial) + " rank " + std::to_string(rank) +
                               " block " + std::to_string(first) + ".." + std::to_string(last) +
                               " " + optimized::IsaName(isa);
      CheckMean<int8_t>(s, bytes, zp_s, -zp_s / 2, multiplier, shift, isa, what + " int8");
      CheckMean<uint8_t>(s, bytes, zp_u, 255 - zp_u, multiplier, shift, isa, what + " uint8");
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(OptimizedMeanTest, PlanRejectsSplitReductions) {
  const int32_t dims[4] = {2, 3, 4, 5};
  const bool split[4] = {true, false, true, false};
  optimized::MeanSum8 kernel;
  EXPECT_FALSE(kernel.Plan(reference::MakeReduceShape(4, dims, split)));
  const bool hw[4] = {false, true, true, false};
  ASSERT_TRUE(kernel.Plan(reference::MakeReduceShape(4, dims, hw)));
  EXPECT_EQ(kernel.outer, 2);
  EXPECT_EQ(kernel.reduced, 12);
  EXPECT_EQ(kernel.inner, 5);
  const int32_t empty_dims[2] = {0, 4};
  const bool first[2] = {true, false};
  EXPECT_FALSE(kernel.Plan(reference::MakeReduceShape(2, empty_dims, first)));
}

// ------------------------------------------------------ through the runtime

template <class T>
std::vector<uint8_t> RunOp(const std::function<void(OpModel&)>& build, const std::vector<T>& input,
                           int threads, KernelSet kernels) {
  OpModel m;
  build(m);
  m.Build(threads, kernels);
  m.SetInput<T>(0, input);
  m.Invoke();
  return m.GetOutput<uint8_t>(0);
}

template <class T>
void ExpectKernelSetsAgree(const std::function<void(OpModel&)>& build, const std::vector<T>& input,
                           const std::string& what) {
  for (int threads : {1, 2})
    EXPECT_EQ(RunOp(build, input, threads, KernelSet::kReference),
              RunOp(build, input, threads, KernelSet::kOptimized))
        << what << " threads " << threads;
}

TEST(OptimizedSoftmaxMeanTest, InterpreterOptimizedEqualsReference) {
  std::mt19937 rng(79);
  for (int trial = 0; trial < 8; ++trial) {
    const bool u8 = trial % 2 == 0;
    const DataType type = u8 ? DataType::kUInt8 : DataType::kInt8;
    std::vector<int8_t> values(3 * 1001);
    for (auto& v : values) v = static_cast<int8_t>(rng());
    const float scale = std::vector<float>{0.1f, 0.02f, 0.25f, 0.0039f}[trial % 4];
    const bool wide_out = trial % 3 == 2;
    ExpectKernelSetsAgree<int8_t>(
        [&](OpModel& m) {
          const int in = m.AddInput(type, {3, 1001}, Q(scale, u8 ? 128 : -3));
          const int out =
              m.AddOutput(wide_out ? DataType::kInt16 : type, wide_out ? Q(1.0f / 32768, -32768)
                                                              : u8     ? Q(1.0f / 256, 0)
                                                                       : Q(1.0f / 256, -128));
          m.AddOp(BuiltinOp::kSoftmax, {in}, {out}, SoftmaxParams{trial % 4 == 3 ? 0.7f : 1.0f});
        },
        values, "softmax trial " + std::to_string(trial));
    std::vector<int8_t> pixels(2 * 7 * 7 * 130);
    for (auto& v : pixels) v = static_cast<int8_t>(rng());
    ExpectKernelSetsAgree<int8_t>(
        [&](OpModel& m) {
          const int in = m.AddInput(type, {2, 7, 7, 130}, Q(0.05f, u8 ? 120 : -9));
          const int axis = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 2});
          const int out = m.AddOutput(type, Q(0.03f, u8 ? 100 : 4));
          m.AddOp(BuiltinOp::kMean, {in, axis}, {out}, ReducerParams{trial % 2 == 0});
        },
        pixels, "mean trial " + std::to_string(trial));
    // A global average pool large enough to be split across threads by rows.
    std::vector<int8_t> image(24 * 24 * 40);
    for (auto& v : image) v = static_cast<int8_t>(rng());
    ExpectKernelSetsAgree<int8_t>(
        [&](OpModel& m) {
          const int in = m.AddInput(type, {1, 24, 24, 40}, Q(0.05f, u8 ? 120 : -9));
          const int axis = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 2});
          const int out = m.AddOutput(type, Q(0.03f, u8 ? 100 : 4));
          m.AddOp(BuiltinOp::kMean, {in, axis}, {out}, ReducerParams{true});
        },
        image, "global mean trial " + std::to_string(trial));
  }
}

}  // namespace
}  // namespace delegato
