// ADD, SUB, MUL, DIV, FLOOR_DIV and SQRT. Quantized expectations were
// produced by TFLite's reference kernels (LiteRT, BUILTIN_REF resolver) for
// the same inputs and parameters.
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
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::OpModel;
using testing::Q;

template <class T>
struct BinaryCase {
  BuiltinOp op;
  DataType type;
  std::vector<int32_t> shape1, shape2;
  Quantization q1, q2, qout;
  Activation activation = Activation::kNone;
  int version = 1;
};

// Builds the one-op model with both inputs as graph inputs.
template <class T>
void AddBinaryOp(OpModel& m, const BinaryCase<T>& c) {
  const int a = m.AddInput(c.type, c.shape1, c.q1);
  const int b = m.AddInput(c.type, c.shape2, c.q2);
  const int out = m.AddOutput(c.type, c.qout);
  OpParams params = std::monostate{};
  if (c.op != BuiltinOp::kFloorDiv) params = ElementwiseParams{c.activation};
  m.AddOp(c.op, {a, b}, {out}, params, c.version);
}

template <class T>
std::vector<T> RunBinary(const BinaryCase<T>& c, const std::vector<T>& a, const std::vector<T>& b,
                         int threads = 1, std::vector<int32_t>* out_shape = nullptr) {
  OpModel m;
  AddBinaryOp(m, c);
  m.Build(threads);
  m.SetInput<T>(0, a);
  m.SetInput<T>(1, b);
  m.Invoke();
  if (out_shape) *out_shape = m.GetOutputShape(0);
  return m.GetOutput<T>(0);
}

template <class T>
Status BuildBinary(const BinaryCase<T>& c) {
  OpModel m;
  AddBinaryOp(m, c);
  return m.TryBuild();
}

// ------------------------------------------------------------------ float / int

TEST(Add, FloatBroadcastAndRelu6) {
  BinaryCase<float> c{BuiltinOp::kAdd, DataType::kFloat32, {2, 1, 3}, {2, 1}, {}, {}, {},
                      Activation::kRelu6};
  for (int threads : {1, 2}) {
    std::vector<int32_t> shape;
    auto out = RunBinary<float>(c, {1, 2, 3, -4, 5, 6}, {0.5f, 10.0f}, threads, &shape);
    EXPECT_THAT(shape, ElementsAre(2, 2, 3));
    EXPECT_THAT(out, ElementsAre(1.5f, 2.5f, 3.5f, 6, 6, 6, 0, 5.5f, 6, 6, 6, 6));
  }
}

TEST(Add, FloatNoActivationKeepsInfinityClampedToMax) {
  BinaryCase<float> c{BuiltinOp::kAdd, DataType::kFloat32, {3}, {3}, {}, {}, {}};
  const float inf = std::numeric_limits<float>::infinity();
  auto out = RunBinary<float>(c, {inf, -inf, 1}, {1, 1, 2});
  EXPECT_THAT(out, ElementsAre(std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::lowest(), 3.0f));
}

TEST(Add, Int32WrapsAndClamps) {
  BinaryCase<int32_t> c{BuiltinOp::kAdd, DataType::kInt32, {4}, {1}, {}, {}, {}};
  auto out = RunBinary<int32_t>(c, {1, -5, std::numeric_limits<int32_t>::max(), 0}, {1});
  EXPECT_THAT(out, ElementsAre(2, -4, std::numeric_limits<int32_t>::min(), 1));
  c.activation = Activation::kRelu;
  out = RunBinary<int32_t>(c, {1, -5, 7, 0}, {-2});
  EXPECT_THAT(out, ElementsAre(0, 0, 5, 0));
}

TEST(Add, Int64) {
  BinaryCase<int64_t> c{BuiltinOp::kAdd, DataType::kInt64, {2}, {2}, {}, {}, {}};
  auto out = RunBinary<int64_t>(c, {int64_t{1} << 40, -3}, {5, 3});
  EXPECT_THAT(out, ElementsAre((int64_t{1} << 40) + 5, 0));
}

TEST(Add, RankSixBroadcast) {
  BinaryCase<float> c{BuiltinOp::kAdd, DataType::kFloat32, {2, 1, 1, 1, 1, 2}, {1, 1, 1, 1, 2, 1},
                      {}, {}, {}};
  std::vector<int32_t> shape;
  auto out = RunBinary<float>(c, {1, 2, 3, 4}, {10, 20}, 1, &shape);
  EXPECT_THAT(shape, ElementsAre(2, 1, 1, 1, 2, 2));
  EXPECT_THAT(out, ElementsAre(11, 12, 21, 22, 13, 14, 23, 24));
}

TEST(Sub, FloatScalarMinusTensor) {
  BinaryCase<float> c{BuiltinOp::kSub, DataType::kFloat32, {}, {2, 2}, {}, {}, {},
                      Activation::kReluN1To1};
  auto out = RunBinary<float>(c, {0.5f}, {0, 1, -1, 0.25f});
  EXPECT_THAT(out, ElementsAre(0.5f, -0.5f, 1.0f, 0.25f));
}

TEST(Sub, Int32) {
  BinaryCase<int32_t> c{BuiltinOp::kSub, DataType::kInt32, {3}, {3}, {}, {}, {}};
  EXPECT_THAT(RunBinary<int32_t>(c, {5, -5, std::numeric_limits<int32_t>::min()}, {7, -7, 1}),
              ElementsAre(-2, 2, std::numeric_limits<int32_t>::max()));
}

TEST(Mul, FloatBroadcastRelu) {
  BinaryCase<float> c{BuiltinOp::kMul, DataType::kFloat32, {2, 2}, {2}, {}, {}, {},
                      Activation::kRelu};
  for (int threads : {1, 2})
    EXPECT_THAT(RunBinary<float>(c, {1, 2, 3, 4}, {-1, 0.5f}, threads),
                ElementsAre(0, 1, 0, 2));
}

TEST(Mul, Int32Wraps) {
  BinaryCase<int32_t> c{BuiltinOp::kMul, DataType::kInt32, {2}, {2}, {}, {}, {}};
  EXPECT_THAT(RunBinary<int32_t>(c, {65536, -3}, {65536, 7}), ElementsAre(0, -21));
}

TEST(Div, FloatWithActivationAndZeroDivisor) {
  BinaryCase<float> c{BuiltinOp::kDiv, DataType::kFloat32, {4}, {4}, {}, {}, {}};
  auto out = RunBinary<float>(c, {1, -6, 1, 0}, {4, 2, 0, 5});
  EXPECT_THAT(out, ElementsAre(0.25f, -3.0f, std::numeric_limits<float>::max(), 0.0f));
}

TEST(Div, Int32TruncatesAndClamps) {
  // From the oracle: {7,-7,100,-100,13} / {2,2,-3,3,1} with RELU6.
  BinaryCase<int32_t> c{BuiltinOp::kDiv, DataType::kInt32, {5}, {5}, {}, {}, {},
                        Activation::kRelu6};
  EXPECT_THAT(RunBinary<int32_t>(c, {7, -7, 100, -100, 13}, {2, 2, -3, 3, 1}),
              ElementsAre(3, 0, 0, 0, 6));
  c.activation = Activation::kNone;
  c.shape1 = c.shape2 = {4};
  // INT_MIN / -1 saturates, as LiteRT's reference kernel gives.
  EXPECT_THAT(RunBinary<int32_t>(c, {7, -7, std::numeric_limits<int32_t>::min(), 9},
                                 {2, 2, -1, -4}),
              ElementsAre(3, -3, std::numeric_limits<int32_t>::max(), -2));
}

TEST(Div, Int32ZeroDivisorFailsInvoke) {
  BinaryCase<int32_t> c{BuiltinOp::kDiv, DataType::kInt32, {3}, {3}, {}, {}, {}};
  OpModel m;
  AddBinaryOp(m, c);
  m.Build();
  m.SetInput<int32_t>(0, {1, 2, 3});
  m.SetInput<int32_t>(1, {1, 0, 3});
  Status s = m.TryInvoke();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("division by zero"));
  m.SetInput<int32_t>(1, {1, 2, 3});
  EXPECT_TRUE(m.TryInvoke().ok());
}

TEST(Div, Int32ConstantZeroDivisorFailsBuild) {
  OpModel m;
  const int a = m.AddInput(DataType::kInt32, {2});
  const int b = m.AddConst<int32_t>(DataType::kInt32, {2}, {4, 0});
  const int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kDiv, {a, b}, {out}, ElementwiseParams{});
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("division by zero"));
}

TEST(FloorDiv, Int32FloorsTowardNegativeInfinity) {
  BinaryCase<int32_t> c{BuiltinOp::kFloorDiv, DataType::kInt32, {7}, {7}, {}, {}, {}};
  // Oracle values, including INT_MIN / -1.
  EXPECT_THAT(RunBinary<int32_t>(c, {7, -7, 7, -7, std::numeric_limits<int32_t>::min(),
                                     std::numeric_limits<int32_t>::max(), 0},
                                 {2, 2, -2, -2, -1, -1, 5}),
              ElementsAre(3, -4, -4, 3, std::numeric_limits<int32_t>::min(), -2147483647, 0));
}

TEST(FloorDiv, FloatAndBroadcast) {
  BinaryCase<float> c{BuiltinOp::kFloorDiv, DataType::kFloat32, {5}, {5}, {}, {}, {}};
  auto out = RunBinary<float>(c, {7.5f, -7.5f, 1.0f, -0.0f, 1e30f}, {2, 2, 3, 5, 1e-10f});
  EXPECT_THAT(out, ElementsAre(3.0f, -4.0f, 0.0f, -0.0f, std::numeric_limits<float>::infinity()));
  EXPECT_TRUE(std::signbit(out[3]));
  BinaryCase<int32_t> b{BuiltinOp::kFloorDiv, DataType::kInt32, {2, 2}, {2}, {}, {}, {}};
  EXPECT_THAT(RunBinary<int32_t>(b, {9, -9, 10, 11}, {4, -4}), ElementsAre(2, 2, 2, -3));
}

TEST(FloorDiv, ZeroDivisorFails) {
  BinaryCase<float> c{BuiltinOp::kFloorDiv, DataType::kFloat32, {2}, {2}, {}, {}, {}};
  OpModel m;
  AddBinaryOp(m, c);
  m.Build();
  m.SetInput<float>(0, {1, 2});
  m.SetInput<float>(1, {1, -0.0f});
  EXPECT_FALSE(m.TryInvoke().ok());

  OpModel k;
  const int a = k.AddInput(DataType::kInt32, {2});
  const int z = k.AddConst<int32_t>(DataType::kInt32, {1}, {0});
  const int out = k.AddOutput(DataType::kInt32);
  k.AddOp(BuiltinOp::kFloorDiv, {a, z}, {out});
  EXPECT_FALSE(k.TryBuild().ok());
}

// ------------------------------------------------------------------ quantized

TEST(Add, UInt8BroadcastMatchesReference) {
  BinaryCase<uint8_t> c{BuiltinOp::kAdd, DataType::kUInt8, {2, 3}, {3}, Q(0.05f, 128),
                        Q(0.02f, 100), Q(0.04f, 60), Activation::kRelu6};
  for (int threads : {1, 2})
    EXPECT_THAT(RunBinary<uint8_t>(c, {0, 50, 100, 150, 200, 255}, {10, 128, 250}, threads),
                ElementsAre(60, 60, 100, 60, 164, 210));
  c.activation = Activation::kNone;
  EXPECT_THAT(RunBinary<uint8_t>(c, {0, 50, 100, 150, 200, 255}, {10, 128, 250}),
              ElementsAre(0, 0, 100, 42, 164, 255));
}

TEST(Add, Int8TwoSidedBroadcastMatchesReference) {
  BinaryCase<int8_t> c{BuiltinOp::kAdd, DataType::kInt8, {2, 1, 2}, {1, 3, 1}, Q(0.1f, -10),
                       Q(0.07f, 5), Q(0.15f, -3), Activation::kRelu, 2};
  std::vector<int32_t> shape;
  for (int threads : {1, 2}) {
    auto out = RunBinary<int8_t>(c, {-128, -1, 0, 127}, {-100, 0, 100}, threads, &shape);
    EXPECT_THAT(shape, ElementsAre(2, 3, 2));
    EXPECT_THAT(out, ElementsAre(-3, -3, -3, 1, -3, 47, -3, 39, 1, 86, 48, 127));
  }
}

TEST(Add, LargeTensorSameResultWithTwoThreads) {
  const int n = 70000;
  std::vector<int8_t> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<int8_t>(i * 7);
    b[i] = static_cast<int8_t>(i * 13 + 5);
  }
  BinaryCase<int8_t> c{BuiltinOp::kAdd, DataType::kInt8, {n}, {n}, Q(0.1f, -10), Q(0.07f, 5),
                       Q(0.15f, -3)};
  EXPECT_EQ(RunBinary<int8_t>(c, a, b, 1), RunBinary<int8_t>(c, a, b, 2));
}

TEST(Sub, Int8AndUInt8MatchReference) {
  BinaryCase<int8_t> c{BuiltinOp::kSub, DataType::kInt8, {6}, {6}, Q(0.02f, 3), Q(0.03f, -7),
                       Q(0.05f, 1)};
  EXPECT_THAT(RunBinary<int8_t>(c, {-128, -60, 0, 90, 127, 3}, {127, -60, 30, -90, -128, 3}),
              ElementsAre(-128, 8, -22, 86, 123, -5));
  BinaryCase<uint8_t> u{BuiltinOp::kSub, DataType::kUInt8, {6}, {6}, Q(0.02f, 128),
                        Q(0.03f, 120), Q(0.05f, 128)};
  EXPECT_THAT(RunBinary<uint8_t>(u, {0, 60, 128, 200, 255, 3}, {255, 60, 30, 90, 0, 3}),
              ElementsAre(0, 137, 182, 175, 251, 148));
}

TEST(Mul, UInt8AndInt8MatchReference) {
  BinaryCase<uint8_t> u{BuiltinOp::kMul, DataType::kUInt8, {2, 3}, {2, 1}, Q(0.03f, 128),
                        Q(0.02f, 127), Q(0.1f, 120)};
  EXPECT_THAT(RunBinary<uint8_t>(u, {0, 64, 128, 192, 255, 17}, {3, 250}),
              ElementsAre(215, 168, 120, 167, 214, 38));
  BinaryCase<int8_t> c{BuiltinOp::kMul, DataType::kInt8, {6}, {1}, Q(0.05f, -2), Q(0.5f, 1),
                       Q(0.2f, 4), Activation::kRelu};
  EXPECT_THAT(RunBinary<int8_t>(c, {-128, -5, 0, 7, 127, 64}, {-3}),
              ElementsAre(67, 6, 4, 4, 4, 4));
}

TEST(Div, UInt8MatchesReference) {
  BinaryCase<uint8_t> c{BuiltinOp::kDiv, DataType::kUInt8, {6}, {6}, Q(0.1f, 128),
                        Q(0.05f, 128), Q(0.2f, 100), Activation::kNone, 2};
  EXPECT_THAT(RunBinary<uint8_t>(c, {0, 10, 128, 129, 200, 255}, {1, 255, 64, 129, 130, 127}),
              ElementsAre(110, 91, 101, 110, 255, 0));
}

TEST(Div, QuantizedDivisorAtZeroPointFailsInvoke) {
  BinaryCase<uint8_t> c{BuiltinOp::kDiv, DataType::kUInt8, {2}, {2}, Q(0.1f, 128),
                        Q(0.05f, 128), Q(0.2f, 100)};
  OpModel m;
  AddBinaryOp(m, c);
  m.Build();
  m.SetInput<uint8_t>(0, {1, 2});
  m.SetInput<uint8_t>(1, {128, 3});
  EXPECT_FALSE(m.TryInvoke().ok());
}

// ------------------------------------------------------------------ bad input

TEST(Binary, MismatchedInputTypesFail) {
  OpModel m;
  const int a = m.AddInput(DataType::kFloat32, {2});
  const int b = m.AddInput(DataType::kInt32, {2});
  const int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kAdd, {a, b}, {out}, ElementwiseParams{});
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("input types differ"));
}

TEST(Binary, OutputTypeMismatchFails) {
  BinaryCase<float> c{BuiltinOp::kMul, DataType::kFloat32, {2}, {2}, {}, {}, {}};
  OpModel m;
  const int a = m.AddInput(DataType::kFloat32, {2});
  const int b = m.AddInput(DataType::kFloat32, {2});
  const int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kMul, {a, b}, {out}, ElementwiseParams{});
  EXPECT_FALSE(m.TryBuild().ok());
}

TEST(Binary, IncompatibleShapesFail) {
  BinaryCase<float> c{BuiltinOp::kAdd, DataType::kFloat32, {2, 3}, {2}, {}, {}, {}};
  Status s = BuildBinary(c);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot broadcast"));
  c.shape1 = {1, 1, 1, 1, 1, 1, 1, 1, 2};  // rank 9
  c.shape2 = {2};
  EXPECT_FALSE(BuildBinary(c).ok());
}

TEST(Binary, WrongInputCountFails) {
  OpModel m;
  const int a = m.AddInput(DataType::kFloat32, {2});
  const int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSub, {a}, {out}, ElementwiseParams{});
  EXPECT_FALSE(m.TryBuild().ok());
}

TEST(Binary, QuantizedNeedsParameters) {
  BinaryCase<uint8_t> c{BuiltinOp::kAdd, DataType::kUInt8, {2}, {2}, {}, Q(0.1f, 0),
                        Q(0.1f, 0)};
  Status s = BuildBinary(c);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("no quantization parameters"));
  c.q1 = Q(0.0f, 0);
  EXPECT_FALSE(BuildBinary(c).ok());
  c.q1 = Q(0.1f, 300);  // zero point outside uint8
  EXPECT_FALSE(BuildBinary(c).ok());
}

TEST(Binary, QuantizedTanhActivationFails) {
  BinaryCase<int8_t> c{BuiltinOp::kMul, DataType::kInt8, {2}, {2}, Q(0.1f, 0), Q(0.1f, 0),
                       Q(0.1f, 0), Activation::kTanh};
  EXPECT_FALSE(BuildBinary(c).ok());
}

TEST(Binary, UnsupportedTypesFail) {
  BinaryCase<int8_t> c{BuiltinOp::kDiv, DataType::kInt16, {2}, {2}, Q(0.1f, 0), Q(0.1f, 0),
                       Q(0.1f, 0)};
  EXPECT_FALSE(BuildBinary(c).ok());
  BinaryCase<uint8_t> b{BuiltinOp::kAdd, DataType::kBool, {2}, {2}, {}, {}, {}};
  EXPECT_FALSE(BuildBinary(b).ok());
}

// ------------------------------------------------------------------ SQRT

TEST(Sqrt, Float) {
  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {4});
  const int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSqrt, {in}, {out});
  m.Build();
  m.SetInput<float>(0, {4, 2, 0, -1});
  m.Invoke();
  auto y = m.GetOutput<float>(0);
  EXPECT_EQ(y[0], 2.0f);
  EXPECT_EQ(y[1], std::sqrt(2.0f));
  EXPECT_EQ(y[2], 0.0f);
  EXPECT_TRUE(std::isnan(y[3]));
}

TEST(Sqrt, NonFloatFails) {
  OpModel m;
  const int in = m.AddInput(DataType::kInt32, {4});
  const int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kSqrt, {in}, {out});
  EXPECT_FALSE(m.TryBuild().ok());
}

}  // namespace
}  // namespace delegato
