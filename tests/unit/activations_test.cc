// RELU, RELU6, LOGISTIC and TANH. Quantized and float expectations were
// produced by TFLite's reference kernels (LiteRT, BUILTIN_REF) for the same
// inputs and parameters.
#include <cmath>
#include <cstdint>
#include <limits>
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

template <class T>
std::vector<T> RunUnary(BuiltinOp op, DataType type, const std::vector<T>& x, Quantization qin,
                        Quantization qout, int threads = 1, int version = 1) {
  OpModel m;
  const int in = m.AddInput(type, {static_cast<int32_t>(x.size())}, qin);
  const int out = m.AddOutput(type, qout);
  m.AddOp(op, {in}, {out}, std::monostate{}, version);
  m.Build(threads);
  m.SetInput<T>(0, x);
  m.Invoke();
  return m.GetOutput<T>(0);
}

Status BuildUnary(BuiltinOp op, DataType in_type, DataType out_type, Quantization qin,
                  Quantization qout) {
  OpModel m;
  const int in = m.AddInput(in_type, {4}, qin);
  const int out = m.AddOutput(out_type, qout);
  m.AddOp(op, {in}, {out});
  return m.TryBuild();
}

TEST(Relu, Float) {
  const float nan = std::nanf("");
  auto y = RunUnary<float>(BuiltinOp::kRelu, DataType::kFloat32, {-1, 0, 2.5f, nan}, {}, {});
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 2.5f);
  EXPECT_TRUE(std::isnan(y[3]));
}

TEST(Relu6, FloatNanStaysNan) {
  // As LiteRT's reference kernel (BUILTIN_REF and BUILTIN both give NaN).
  auto y = RunUnary<float>(BuiltinOp::kRelu6, DataType::kFloat32, {-1, 3, 7, std::nanf("")}, {},
                           {});
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 3.0f);
  EXPECT_EQ(y[2], 6.0f);
  EXPECT_TRUE(std::isnan(y[3]));
}

TEST(Relu, UInt8RequantizesMatchesReference) {
  for (int threads : {1, 2})
    EXPECT_THAT(RunUnary<uint8_t>(BuiltinOp::kRelu, DataType::kUInt8,
                                  {0, 1, 64, 127, 128, 129, 200, 255}, Q(0.1f, 128),
                                  Q(0.05f, 10), threads),
                ElementsAre(10, 10, 10, 10, 10, 12, 154, 255));
}

TEST(Relu6, UInt8MatchesReference) {
  EXPECT_THAT(RunUnary<uint8_t>(BuiltinOp::kRelu6, DataType::kUInt8,
                                {0, 1, 64, 127, 128, 129, 200, 255}, Q(0.1f, 128), Q(0.03f, 5)),
              ElementsAre(5, 5, 5, 5, 5, 8, 205, 205));
}

TEST(Relu, Int8MatchesReference) {
  EXPECT_THAT(RunUnary<int8_t>(BuiltinOp::kRelu, DataType::kInt8,
                               {-128, -20, -1, 0, 1, 30, 100, 127}, Q(0.1f, -1), Q(0.07f, -128),
                               1, 2),
              ElementsAre(-128, -128, -128, -127, -125, -84, 16, 55));
  EXPECT_THAT(RunUnary<int8_t>(BuiltinOp::kRelu6, DataType::kInt8,
                               {-128, -20, -1, 0, 1, 30, 100, 127}, Q(0.1f, -1), Q(0.03f, -128),
                               1, 2),
              ElementsAre(-128, -128, -128, -125, -121, -25, 72, 72));
}

TEST(Relu, SameParamsIsIdentityAboveZero) {
  EXPECT_THAT(RunUnary<int8_t>(BuiltinOp::kRelu, DataType::kInt8, {-128, -3, -2, 5, 127},
                               Q(0.5f, -3), Q(0.5f, -3)),
              ElementsAre(-3, -3, -2, 5, 127));
}

TEST(Logistic, FloatUsesTfliteCutoffs) {
  // Below -9 the reference returns exp(x); above ~16.62 exactly 1.
  auto y = RunUnary<float>(BuiltinOp::kLogistic, DataType::kFloat32,
                           {-20.0f, -9.5f, -1.0f, 0.0f, 0.5f, 3.0f, 17.0f}, {}, {});
  EXPECT_THAT(y, ElementsAre(2.06115369216775e-09f, 7.4851828685496e-05f, 0.2689414322376251f,
                             0.5f, 0.622459352016449f, 0.9525741338729858f, 1.0f));
}

TEST(Tanh, Float) {
  // TFLite's values: the reference kernel (the scalar ISA keeps it; the vector
  // tanh is checked within rounding in optimized_float_test).
  optimized::ScopedIsaOverride reference_kernel(optimized::Isa::kScalar);
  auto y = RunUnary<float>(BuiltinOp::kTanh, DataType::kFloat32,
                           {-20.0f, -9.5f, -1.0f, 0.0f, 0.5f, 3.0f, 17.0f}, {}, {});
  EXPECT_THAT(y, ElementsAre(-1.0f, -1.0f, -0.7615941762924194f, 0.0f, 0.46211716532707214f,
                             0.9950547814369202f, 1.0f));
}

TEST(Logistic, UInt8TableMatchesReference) {
  for (int threads : {1, 2})
    EXPECT_THAT(RunUnary<uint8_t>(BuiltinOp::kLogistic, DataType::kUInt8,
                                  {0, 1, 64, 100, 127, 128, 129, 160, 200, 255}, Q(0.07f, 128),
                                  Q(1.0f / 256, 0), threads),
                ElementsAre(0, 0, 3, 32, 124, 128, 132, 231, 254, 255));
}

TEST(Logistic, Int8TableMatchesReference) {
  EXPECT_THAT(RunUnary<int8_t>(BuiltinOp::kLogistic, DataType::kInt8,
                               {-128, -100, -50, -1, 0, 1, 20, 50, 100, 127}, Q(0.08f, -3),
                               Q(1.0f / 256, -128), 1, 2),
              ElementsAre(-128, -128, -122, 10, 15, 20, 93, 124, 127, 127));
}

TEST(Tanh, QuantizedTablesMatchReference) {
  EXPECT_THAT(RunUnary<uint8_t>(BuiltinOp::kTanh, DataType::kUInt8,
                                {0, 1, 64, 100, 127, 128, 129, 160, 200, 255}, Q(0.03f, 128),
                                Q(1.0f / 128, 128)),
              ElementsAre(0, 0, 5, 40, 124, 128, 132, 223, 253, 255));
  EXPECT_THAT(RunUnary<int8_t>(BuiltinOp::kTanh, DataType::kInt8,
                               {-128, -100, -50, -1, 0, 1, 20, 50, 100, 127}, Q(0.04f, 2),
                               Q(1.0f / 128, 0), 1, 2),
              ElementsAre(-128, -128, -124, -15, -10, -5, 79, 123, 127, 127));
}

TEST(Logistic, WrongOutputScaleFails) {
  Status s = BuildUnary(BuiltinOp::kLogistic, DataType::kUInt8, DataType::kUInt8, Q(0.1f, 128),
                        Q(1.0f / 255, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("scale 1/256"));
  EXPECT_FALSE(BuildUnary(BuiltinOp::kLogistic, DataType::kInt8, DataType::kInt8, Q(0.1f, 0),
                          Q(0.01f, -128))
                   .ok());
}

TEST(Activations, TypeMismatchAndUnsupportedTypesFail) {
  EXPECT_FALSE(BuildUnary(BuiltinOp::kRelu, DataType::kFloat32, DataType::kUInt8, {},
                          Q(0.1f, 0))
                   .ok());
  EXPECT_FALSE(BuildUnary(BuiltinOp::kTanh, DataType::kInt32, DataType::kInt32, {}, {}).ok());
  // int16 LOGISTIC needs an output scale of 2^-15.
  EXPECT_FALSE(
      BuildUnary(BuiltinOp::kLogistic, DataType::kInt16, DataType::kInt16, Q(1.0f / 4096, 0),
                 Q(1.0f / 16384, 0))
          .ok());
  // Quantized input without parameters.
  EXPECT_FALSE(BuildUnary(BuiltinOp::kRelu6, DataType::kInt8, DataType::kInt8, {}, {}).ok());
}

}  // namespace
}  // namespace delegato
