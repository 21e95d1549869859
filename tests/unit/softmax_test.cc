// SOFTMAX float and 8-bit. Expectations were produced by TFLite's reference
// kernels (LiteRT, BUILTIN_REF) for the same inputs and parameters.
#include <cstdint>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OpModel;
using testing::Q;

template <class In, class Out>
std::vector<Out> RunSoftmax(DataType in_type, DataType out_type, std::vector<int32_t> shape,
                            const std::vector<In>& x, Quantization qin, Quantization qout,
                            float beta, int threads = 1,
                            KernelSet kernels = KernelSet::kOptimized) {
  OpModel m;
  const int in = m.AddInput(in_type, shape, qin);
  const int out = m.AddOutput(out_type, qout);
  m.AddOp(BuiltinOp::kSoftmax, {in}, {out}, SoftmaxParams{beta});
  m.Build(threads, kernels);
  m.SetInput<In>(0, x);
  m.Invoke();
  return m.GetOutput<Out>(0);
}

TEST(Softmax, Float) {
  // TFLite's values from the reference kernel; the optimized kernel (a vector
  // exp, another summation order) is checked against it within rounding below.
  const std::vector<float> x = {1, 2, 3, 4, -1, 0, 100, -50};
  for (int threads : {1, 2})
    EXPECT_THAT((RunSoftmax<float, float>(DataType::kFloat32, DataType::kFloat32, {2, 4}, x, {},
                                          {}, 1.0f, threads, KernelSet::kReference)),
                ElementsAre(0.032058604061603546f, 0.08714432269334793f, 0.23688283562660217f,
                            0.6439142823219299f, 1.401298464324817e-44f, 3.783505853677006e-44f,
                            1.0f, 0.0f));
  EXPECT_THAT((RunSoftmax<float, float>(DataType::kFloat32, DataType::kFloat32, {2, 4}, x, {}, {},
                                        0.5f, 1, KernelSet::kReference)),
              ElementsAre(0.101536326110363f, 0.16740509867668152f, 0.2760043442249298f,
                          0.45505422353744507f, 1.169845886345186e-22f, 1.9287498933537385e-22f,
                          1.0f, 2.678636997114156e-33f));
  for (float beta : {1.0f, 0.5f}) {
    const std::vector<float> ref = RunSoftmax<float, float>(
        DataType::kFloat32, DataType::kFloat32, {2, 4}, x, {}, {}, beta, 1, KernelSet::kReference);
    const std::vector<float> fast = RunSoftmax<float, float>(
        DataType::kFloat32, DataType::kFloat32, {2, 4}, x, {}, {}, beta, 2);
    ASSERT_EQ(fast.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(fast[i], ref[i], 1e-6f * ref[i]) << i;
  }
}

TEST(Softmax, UInt8MatchesReference) {
  for (int threads : {1, 2})
    EXPECT_THAT((RunSoftmax<uint8_t, uint8_t>(DataType::kUInt8, DataType::kUInt8, {2, 5},
                                              {0, 10, 20, 200, 255, 7, 7, 7, 7, 7}, Q(0.05f, 0),
                                              Q(1.0f / 256, 0), 1.0f, threads)),
                ElementsAre(0, 0, 0, 15, 241, 51, 51, 51, 51, 51));
}

TEST(Softmax, Int8MatchesReference) {
  const std::vector<int8_t> x = {-128, -10, 0, 50, 127, -3, -3, -3, -3, -3};
  EXPECT_THAT((RunSoftmax<int8_t, int8_t>(DataType::kInt8, DataType::kInt8, {2, 5}, x,
                                          Q(0.08f, 3), Q(1.0f / 256, -128), 1.0f)),
              ElementsAre(-128, -128, -128, -127, 127, -77, -77, -77, -77, -77));
  EXPECT_THAT((RunSoftmax<int8_t, int8_t>(DataType::kInt8, DataType::kInt8, {2, 5}, x,
                                          Q(0.08f, 3), Q(1.0f / 256, -128), 0.7f)),
              ElementsAre(-128, -128, -128, -125, 124, -77, -77, -77, -77, -77));
  EXPECT_THAT((RunSoftmax<int8_t, int16_t>(DataType::kInt8, DataType::kInt16, {2, 5}, x,
                                           Q(0.08f, 3), Q(1.0f / 32768, 0), 1.0f)),
              ElementsAre(-32768, -32767, -32765, -32630, 32626, -19661, -19661, -19661, -19661,
                          -19661));
}

// ~1000 equal classes put the final shift past 31 bits for 8-bit outputs.
// LiteRT's reference kernel aborts on an assertion there; its default kernels
// give every class the rounded 1/1001 = 0.26/256, i.e. the output minimum.
TEST(Softmax, ManyEqualClassesRoundToZero) {
  for (int depth : {1001, 4000}) {
    for (KernelSet kernels : {KernelSet::kReference, KernelSet::kOptimized}) {
      const int threads = kernels == KernelSet::kReference ? 1 : 2;
      EXPECT_EQ((RunSoftmax<uint8_t, uint8_t>(DataType::kUInt8, DataType::kUInt8, {1, depth},
                                              std::vector<uint8_t>(depth, 5), Q(0.1f, 128),
                                              Q(1.0f / 256, 0), 1.0f, threads, kernels)),
                std::vector<uint8_t>(depth, 0))
          << depth;
      EXPECT_EQ((RunSoftmax<int8_t, int8_t>(DataType::kInt8, DataType::kInt8, {1, depth},
                                            std::vector<int8_t>(depth, 5), Q(0.1f, 0),
                                            Q(1.0f / 256, -128), 1.0f, threads, kernels)),
                std::vector<int8_t>(depth, -128))
          << depth;
    }
  }
}

TEST(Softmax, ManyRowsSameWithTwoThreads) {
  std::vector<int8_t> x(64 * 1001);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 37) % 61);
  auto one = RunSoftmax<int8_t, int8_t>(DataType::kInt8, DataType::kInt8, {64, 1001}, x,
                                        Q(0.1f, 0), Q(1.0f / 256, -128), 1.0f, 1);
  auto two = RunSoftmax<int8_t, int8_t>(DataType::kInt8, DataType::kInt8, {64, 1001}, x,
                                        Q(0.1f, 0), Q(1.0f / 256, -128), 1.0f, 2);
  EXPECT_EQ(one, two);
}

Status BuildSoftmax(DataType in_type, DataType out_type, std::vector<int32_t> shape,
                    Quantization qin, Quantization qout, float beta = 1.0f) {
  OpModel m;
  const int in = m.AddInput(in_type, shape, qin);
  const int out = m.AddOutput(out_type, qout);
  m.AddOp(BuiltinOp::kSoftmax, {in}, {out}, SoftmaxParams{beta});
  return m.TryBuild();
}

TEST(Softmax, BadParametersFail) {
  Status s = BuildSoftmax(DataType::kInt8, DataType::kInt8, {1, 4}, Q(0.1f, 0), Q(1.0f / 256, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("zero point -128"));
  EXPECT_FALSE(
      BuildSoftmax(DataType::kInt8, DataType::kInt8, {1, 4}, Q(0.1f, 0), Q(1.0f / 128, -128))
          .ok());
  EXPECT_FALSE(BuildSoftmax(DataType::kUInt8, DataType::kInt8, {1, 4}, Q(0.1f, 0),
                            Q(1.0f / 256, -128))
                   .ok());
  EXPECT_FALSE(BuildSoftmax(DataType::kFloat32, DataType::kFloat32, {}, {}, {}).ok());  // rank 0
  EXPECT_FALSE(BuildSoftmax(DataType::kFloat32, DataType::kUInt8, {1, 4}, {}, Q(1.0f / 256, 0))
                   .ok());
  // beta * scale so small the fixed-point multiplier would be below 1.
  EXPECT_FALSE(BuildSoftmax(DataType::kUInt8, DataType::kUInt8, {1, 4}, Q(1e-9f, 0),
                            Q(1.0f / 256, 0))
                   .ok());
}

}  // namespace
}  // namespace delegato
