// RESHAPE, SQUEEZE, CONCATENATION, PACK, SPLIT, SPLIT_V, UNPACK, PAD, PADV2,
// TRANSPOSE, STRIDED_SLICE. Expected values are worked by hand; the uint8
// requantizing concatenation was confirmed against LiteRT's reference kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::OpModel;
using testing::Q;

template <class T>
std::vector<T> Iota(size_t n, T start = T(0)) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(start + static_cast<T>(i));
  return v;
}

std::string BuildError(OpModel& m) {
  Status s = m.TryBuild();
  EXPECT_FALSE(s.ok());
  return s.message();
}

// ---------------------------------------------------------------- RESHAPE

TEST(Reshape, ShapeTensorWithInferredDim) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 3, 2});
  int shape = m.AddConst<int32_t>(DataType::kInt32, {2}, {-1, 4});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kReshape, {in, shape}, {out});
  m.Build();
  m.SetInput<float>(0, Iota<float>(12));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3, 4));
  EXPECT_EQ(m.GetOutput<float>(0), Iota<float>(12));
}

TEST(Reshape, FromOptionsInt8) {
  OpModel m;
  int in = m.AddInput(DataType::kInt8, {1, 1, 1, 6}, Q(0.5f, -3));
  int out = m.AddOutput(DataType::kInt8, Q(0.5f, -3));
  m.AddOp(BuiltinOp::kReshape, {in}, {out}, ReshapeParams{{1, 6}, true});
  m.Build();
  m.SetInput<int8_t>(0, {-128, -1, 0, 1, 2, 127});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 6));
  EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(-128, -1, 0, 1, 2, 127));
}

TEST(Reshape, LegacyScalarShape) {
  OpModel m;
  int in = m.AddInput(DataType::kInt32, {1, 1});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kReshape, {in}, {out}, ReshapeParams{{0}, true});
  m.Build();
  m.SetInput<int32_t>(0, {42});
  m.Invoke();
  EXPECT_TRUE(m.GetOutputShape(0).empty());
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(42));
}

TEST(Reshape, ElementCountMismatchFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 3});
  int shape = m.AddConst<int32_t>(DataType::kInt32, {2}, {4, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kReshape, {in, shape}, {out});
  EXPECT_THAT(BuildError(m), HasSubstr("has 6 elements, the new shape [4,2] has 8"));
}

TEST(Reshape, TwoInferredDimsFail) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 3});
  int shape = m.AddConst<int32_t>(DataType::kInt32, {2}, {-1, -1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kReshape, {in, shape}, {out});
  EXPECT_THAT(BuildError(m), HasSubstr("more than one -1"));
}

// ---------------------------------------------------------------- SQUEEZE

TEST(Squeeze, AllUnitDims) {
  OpModel m;
  int in = m.AddInput(DataType::kUInt8, {1, 3, 1, 2});
  int out = m.AddOutput(DataType::kUInt8);
  m.AddOp(BuiltinOp::kSqueeze, {in}, {out}, SqueezeParams{});
  m.Build();
  m.SetInput<uint8_t>(0, Iota<uint8_t>(6));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3, 2));
  EXPECT_EQ(m.GetOutput<uint8_t>(0), Iota<uint8_t>(6));
}

TEST(Squeeze, NegativeDim) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 3, 1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSqueeze, {in}, {out}, SqueezeParams{{-1}});
  m.Build();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 3));
}

TEST(Squeeze, NonUnitDimFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 3});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSqueeze, {in}, {out}, SqueezeParams{{1}});
  EXPECT_THAT(BuildError(m), HasSubstr("its size is not 1"));
}

// ---------------------------------------------------------- CONCATENATION

TEST(Concatenation, FloatNegativeAxis) {
  OpModel m;
  int a = m.AddInput(DataType::kFloat32, {2, 1});
  int b = m.AddInput(DataType::kFloat32, {2, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kConcatenation, {a, b}, {out}, ConcatenationParams{-1, Activation::kNone});
  m.Build();
  m.SetInput<float>(0, {1, 2});
  m.SetInput<float>(1, {10, 11, 20, 21});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 3));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(1, 10, 11, 2, 20, 21));
}

TEST(Concatenation, Int64AxisZeroWithConstant) {
  OpModel m;
  int a = m.AddInput(DataType::kInt64, {1, 2});
  int b = m.AddConst<int64_t>(DataType::kInt64, {2, 2}, {5, 6, 7, 8});
  int out = m.AddOutput(DataType::kInt64);
  m.AddOp(BuiltinOp::kConcatenation, {a, b}, {out}, ConcatenationParams{0, Activation::kNone});
  m.Build();
  m.SetInput<int64_t>(0, {-1, int64_t{1} << 40});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3, 2));
  EXPECT_THAT(m.GetOutput<int64_t>(0), ElementsAre(-1, int64_t{1} << 40, 5, 6, 7, 8));
}

TEST(Concatenation, UInt8Requantizes) {
  // (0 - 128) * 0.5 / 0.3 clamps to 0; 127 * 0.5 / 0.3 clamps to 255;
  // (37 - 100) * 0.25 / 0.3 = -52.5 in exact arithmetic, -52.49999 in float.
  OpModel m;
  int a = m.AddInput(DataType::kUInt8, {1, 2}, Q(0.5f, 128));
  int b = m.AddInput(DataType::kUInt8, {1, 3}, Q(0.25f, 100));
  int out = m.AddOutput(DataType::kUInt8, Q(0.3f, 120));
  m.AddOp(BuiltinOp::kConcatenation, {a, b}, {out}, ConcatenationParams{1, Activation::kNone});
  m.Build();
  m.SetInput<uint8_t>(0, {0, 255});
  m.SetInput<uint8_t>(1, {100, 37, 250});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<uint8_t>(0), ElementsAre(0, 255, 120, 68, 245));
}

// A scale ratio that overflows float (a hostile file): every value of that
// input is NaN or infinite before conversion, which gives INT32_MIN as on x86
// (TFLite's behaviour there), so 0 after the clamp; the other input is
// requantized normally. Defined behaviour (the sanitizer build checks it).
TEST(Concatenation, UInt8AbsurdScaleRatioIsDefined) {
  OpModel m;
  int a = m.AddInput(DataType::kUInt8, {1, 3}, Q(3e38f, 7));
  int b = m.AddInput(DataType::kUInt8, {1, 2}, Q(0.002f, 0));
  int out = m.AddOutput(DataType::kUInt8, Q(0.001f, 0));
  m.AddOp(BuiltinOp::kConcatenation, {a, b}, {out}, ConcatenationParams{1, Activation::kNone});
  m.Build();
  m.SetInput<uint8_t>(0, {0, 7, 255});
  m.SetInput<uint8_t>(1, {3, 200});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<uint8_t>(0), ElementsAre(0, 0, 0, 6, 255));
}

TEST(Concatenation, UInt8SameParamsCopies) {
  OpModel m;
  int a = m.AddInput(DataType::kUInt8, {2}, Q(0.3f, 120));
  int b = m.AddInput(DataType::kUInt8, {1}, Q(0.3f, 120));
  int out = m.AddOutput(DataType::kUInt8, Q(0.3f, 120));
  m.AddOp(BuiltinOp::kConcatenation, {a, b}, {out}, ConcatenationParams{0, Activation::kNone});
  m.Build();
  m.SetInput<uint8_t>(0, {1, 2});
  m.SetInput<uint8_t>(1, {255});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<uint8_t>(0), ElementsAre(1, 2, 255));
}

TEST(Concatenation, Int8DifferentParamsFails) {
  OpModel m;
  int a = m.AddInput(DataType::kInt8, {2}, Q(0.5f, 0));
  int b = m.AddInput(DataType::kInt8, {2}, Q(0.25f, 0));
  int out = m.AddOutput(DataType::kInt8, Q(0.5f, 0));
  m.AddOp(BuiltinOp::kConcatenation, {a, b}, {out}, ConcatenationParams{0, Activation::kNone});
  EXPECT_THAT(BuildError(m), HasSubstr("must have the output's quantization"));
}

TEST(Concatenation, FusedActivationFails) {
  OpModel m;
  int a = m.AddInput(DataType::kFloat32, {2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kConcatenation, {a, a}, {out}, ConcatenationParams{0, Activation::kRelu});
  EXPECT_THAT(BuildError(m), HasSubstr("fused activation"));
}

TEST(Concatenation, AxisOutOfRangeFails) {
  OpModel m;
  int a = m.AddInput(DataType::kFloat32, {2, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kConcatenation, {a, a}, {out}, ConcatenationParams{2, Activation::kNone});
  EXPECT_THAT(BuildError(m), HasSubstr("axis 2 is out of range for rank 2"));
}

TEST(Concatenation, MismatchedDimsFail) {
  OpModel m;
  int a = m.AddInput(DataType::kFloat32, {2, 2});
  int b = m.AddInput(DataType::kFloat32, {3, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kConcatenation, {a, b}, {out}, ConcatenationParams{1, Activation::kNone});
  EXPECT_THAT(BuildError(m), HasSubstr("does not match input 0"));
}

// ------------------------------------------------------------ PACK / UNPACK

TEST(Pack, NegativeAxis) {
  OpModel m;
  int a = m.AddInput(DataType::kInt32, {2});
  int b = m.AddInput(DataType::kInt32, {2});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kPack, {a, b}, {out}, PackParams{2, -1});
  m.Build();
  m.SetInput<int32_t>(0, {1, 2});
  m.SetInput<int32_t>(1, {3, 4});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(1, 3, 2, 4));
}

TEST(Pack, AxisZeroInt8) {
  OpModel m;
  int a = m.AddInput(DataType::kInt8, {3}, Q(0.1f, 0));
  int b = m.AddInput(DataType::kInt8, {3}, Q(0.1f, 0));
  int out = m.AddOutput(DataType::kInt8, Q(0.1f, 0));
  m.AddOp(BuiltinOp::kPack, {a, b}, {out}, PackParams{2, 0});
  m.Build();
  m.SetInput<int8_t>(0, {1, 2, 3});
  m.SetInput<int8_t>(1, {-1, -2, -3});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 3));
  EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(1, 2, 3, -1, -2, -3));
}

TEST(Pack, ValuesCountMismatchFails) {
  OpModel m;
  int a = m.AddInput(DataType::kFloat32, {2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kPack, {a, a}, {out}, PackParams{3, 0});
  EXPECT_THAT(BuildError(m), HasSubstr("values_count 3"));
}

TEST(Unpack, MiddleAxis) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 2, 2});
  int o0 = m.AddOutput(DataType::kFloat32);
  int o1 = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kUnpack, {in}, {o0, o1}, UnpackParams{2, -2});
  m.Build();
  m.SetInput<float>(0, Iota<float>(8));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(0, 1, 4, 5));
  EXPECT_THAT(m.GetOutput<float>(1), ElementsAre(2, 3, 6, 7));
}

TEST(Unpack, WrongOutputCountFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {3, 2});
  int o0 = m.AddOutput(DataType::kFloat32);
  int o1 = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kUnpack, {in}, {o0, o1}, UnpackParams{2, 0});
  EXPECT_THAT(BuildError(m), HasSubstr("must agree"));
}

// -------------------------------------------------------- SPLIT / SPLIT_V

TEST(Split, NegativeAxisUInt8) {
  OpModel m;
  int axis = m.AddConst<int32_t>(DataType::kInt32, {}, {-1});
  int in = m.AddInput(DataType::kUInt8, {2, 4});
  int o0 = m.AddOutput(DataType::kUInt8);
  int o1 = m.AddOutput(DataType::kUInt8);
  m.AddOp(BuiltinOp::kSplit, {axis, in}, {o0, o1}, SplitParams{2});
  m.Build();
  m.SetInput<uint8_t>(0, Iota<uint8_t>(8));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(1), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<uint8_t>(0), ElementsAre(0, 1, 4, 5));
  EXPECT_THAT(m.GetOutput<uint8_t>(1), ElementsAre(2, 3, 6, 7));
}

TEST(Split, IndivisibleFails) {
  OpModel m;
  int axis = m.AddConst<int32_t>(DataType::kInt32, {}, {1});
  int in = m.AddInput(DataType::kFloat32, {2, 3});
  int o0 = m.AddOutput(DataType::kFloat32);
  int o1 = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSplit, {axis, in}, {o0, o1}, SplitParams{2});
  EXPECT_THAT(BuildError(m), HasSubstr("does not divide into 2 equal parts"));
}

TEST(SplitV, InferredSize) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {5, 1});
  int sizes = m.AddConst<int32_t>(DataType::kInt32, {3}, {1, -1, 2});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {}, {0});
  int o0 = m.AddOutput(DataType::kFloat32);
  int o1 = m.AddOutput(DataType::kFloat32);
  int o2 = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSplitV, {in, sizes, axis}, {o0, o1, o2}, SplitParams{3});
  m.Build();
  m.SetInput<float>(0, Iota<float>(5));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(1), ElementsAre(2, 1));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(0));
  EXPECT_THAT(m.GetOutput<float>(1), ElementsAre(1, 2));
  EXPECT_THAT(m.GetOutput<float>(2), ElementsAre(3, 4));
}

TEST(SplitV, BadSumFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {5});
  int sizes = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 2});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {}, {0});
  int o0 = m.AddOutput(DataType::kFloat32);
  int o1 = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSplitV, {in, sizes, axis}, {o0, o1}, SplitParams{2});
  EXPECT_THAT(BuildError(m), HasSubstr("does not equal dim 0 of size 5"));
}

// ------------------------------------------------------------ PAD / PADV2

TEST(Pad, FloatPadsWithZero) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 2});
  int pads = m.AddConst<int32_t>(DataType::kInt32, {2, 2}, {1, 0, 1, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kPad, {in, pads}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<float>(0, {1, 2});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 5));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(0, 0, 0, 0, 0, 0, 1, 2, 0, 0));
}

TEST(Pad, Int8PadsWithOutputZeroPoint) {
  OpModel m;
  int in = m.AddInput(DataType::kInt8, {1, 1, 1, 1}, Q(0.5f, -7));
  int pads = m.AddConst<int64_t>(DataType::kInt64, {4, 2}, {0, 0, 1, 0, 0, 1, 0, 0});
  int out = m.AddOutput(DataType::kInt8, Q(0.5f, -7));
  m.AddOp(BuiltinOp::kPad, {in, pads}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<int8_t>(0, {5});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 2, 2, 1));
  EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(-7, -7, 5, -7));
}

TEST(Pad, Rank5) {
  OpModel m;
  int in = m.AddInput(DataType::kInt16, {1, 1, 1, 1, 2});
  int pads = m.AddConst<int32_t>(DataType::kInt32, {5, 2}, {1, 0, 0, 0, 0, 0, 0, 0, 0, 1});
  int out = m.AddOutput(DataType::kInt16);
  m.AddOp(BuiltinOp::kPad, {in, pads}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<int16_t>(0, {300, -300});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 1, 1, 1, 3));
  EXPECT_THAT(m.GetOutput<int16_t>(0), ElementsAre(0, 0, 0, 300, -300, 0));
}

TEST(Padv2, ConstantValueUInt8) {
  OpModel m;
  int in = m.AddInput(DataType::kUInt8, {2}, Q(1.0f, 10));
  int pads = m.AddConst<int32_t>(DataType::kInt32, {1, 2}, {2, 1});
  int value = m.AddConst<uint8_t>(DataType::kUInt8, {}, {99}, Q(1.0f, 10));
  int out = m.AddOutput(DataType::kUInt8, Q(1.0f, 10));
  m.AddOp(BuiltinOp::kPadv2, {in, pads, value}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<uint8_t>(0, {1, 2});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<uint8_t>(0), ElementsAre(99, 99, 1, 2, 99));
}

TEST(Padv2, NonConstantValueFloat) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1});
  int pads = m.AddConst<int32_t>(DataType::kInt32, {1, 2}, {1, 1});
  int value = m.AddInput(DataType::kFloat32, {});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kPadv2, {in, pads, value}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<float>(0, {1.5f});
  m.SetInput<float>(1, {-9.0f});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(-9.0f, 1.5f, -9.0f));
}

// Large pads run split by rows on the pool: the same bytes as one thread,
// for pads on every dim (rows padded whole, and inside rows).
TEST(Pad, LargePadSameOnTwoThreads) {
  const std::vector<std::vector<int32_t>> paddings = {
      {0, 0, 1, 1, 1, 1, 0, 0}, {0, 0, 0, 2, 3, 0, 0, 0}, {1, 0, 2, 1, 0, 3, 2, 1}};
  for (const auto& pad : paddings) {
    std::vector<std::vector<int8_t>> results;
    for (int threads : {1, 2}) {
      OpModel m;
      int in = m.AddInput(DataType::kInt8, {1, 57, 61, 24}, Q(0.5f, -3));
      int pads = m.AddConst<int32_t>(DataType::kInt32, {4, 2}, pad);
      int out = m.AddOutput(DataType::kInt8, Q(0.5f, -3));
      m.AddOp(BuiltinOp::kPad, {in, pads}, {out}, EmptyParams{});
      m.Build(threads);
      std::vector<int8_t> x(57 * 61 * 24);
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(i * 7 + i / 13);
      m.SetInput<int8_t>(0, x);
      m.Invoke();
      results.push_back(m.GetOutput<int8_t>(0));
    }
    EXPECT_EQ(results[0], results[1]);
    const size_t expected = static_cast<size_t>(1 + pad[0] + pad[1]) * (57 + pad[2] + pad[3]) *
                            (61 + pad[4] + pad[5]) * (24 + pad[6] + pad[7]);
    EXPECT_EQ(results[0].size(), expected);
  }
}

TEST(Pad, WrongPaddingsShapeFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 2});
  int pads = m.AddConst<int32_t>(DataType::kInt32, {1, 2}, {1, 1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kPad, {in, pads}, {out}, EmptyParams{});
  EXPECT_THAT(BuildError(m), HasSubstr("expected [2,2]"));
}

TEST(Pad, NegativePaddingFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2});
  int pads = m.AddConst<int32_t>(DataType::kInt32, {1, 2}, {-1, 1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kPad, {in, pads}, {out}, EmptyParams{});
  EXPECT_THAT(BuildError(m), HasSubstr("must not be negative"));
}

// -------------------------------------------------------------- TRANSPOSE

TEST(Transpose, Rank3) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 3, 4});
  int perm = m.AddConst<int32_t>(DataType::kInt32, {3}, {2, 0, 1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kTranspose, {in, perm}, {out});
  m.Build();
  m.SetInput<float>(0, Iota<float>(24));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(4, 2, 3));
  // out[k][i][j] = in[i][j][k] = 12 i + 4 j + k
  std::vector<float> expected;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) expected.push_back(static_cast<float>(12 * i + 4 * j + k));
  EXPECT_EQ(m.GetOutput<float>(0), expected);
}

TEST(Transpose, Rank6Int8) {
  OpModel m;
  int in = m.AddInput(DataType::kInt8, {1, 2, 1, 1, 1, 3});
  int perm = m.AddConst<int32_t>(DataType::kInt32, {6}, {5, 4, 3, 2, 0, 1});
  int out = m.AddOutput(DataType::kInt8);
  m.AddOp(BuiltinOp::kTranspose, {in, perm}, {out}, std::monostate{}, 2);
  m.Build();
  m.SetInput<int8_t>(0, {0, 1, 2, 3, 4, 5});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3, 1, 1, 1, 1, 2));
  EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(0, 3, 1, 4, 2, 5));
}

// Every permutation of ranks 1 to 4 and random rank 5-6 ones, against the
// definition, on 1 and 2 threads (large inputs split by rows on the pool).
TEST(Transpose, EveryPermutationMatchesDefinition) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 120; ++trial) {
    const int rank = 1 + trial % 6;
    std::vector<int32_t> dims(rank), perm(rank);
    for (auto& d : dims) d = 1 + static_cast<int32_t>(rng() % (rank <= 3 ? 40 : 9));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    int64_t total = 1;
    for (int32_t d : dims) total *= d;
    std::vector<int16_t> x(total);
    for (int64_t i = 0; i < total; ++i) x[i] = static_cast<int16_t>(i * 31 + i / 7);
    // The definition: walk output indices, map each to its input offset.
    std::vector<int32_t> out_dims(rank);
    for (int d = 0; d < rank; ++d) out_dims[d] = dims[perm[d]];
    std::vector<int16_t> expected(total);
    std::vector<int32_t> idx(rank, 0);
    for (int64_t o = 0; o < total; ++o) {
      int64_t in_offset = 0;
      for (int d = 0; d < rank; ++d) {
        int64_t stride = 1;
        for (int e = perm[d] + 1; e < rank; ++e) stride *= dims[e];
        in_offset += idx[d] * stride;
      }
      expected[o] = x[in_offset];
      for (int d = rank - 1; d >= 0; --d) {
        if (++idx[d] < out_dims[d]) break;
        idx[d] = 0;
      }
    }
    for (int threads : {1, 2}) {
      OpModel m;
      int in = m.AddInput(DataType::kInt16, dims, Q(1.0f, 0));
      int p = m.AddConst<int32_t>(DataType::kInt32, {rank}, perm);
      int out = m.AddOutput(DataType::kInt16, Q(1.0f, 0));
      m.AddOp(BuiltinOp::kTranspose, {in, p}, {out}, std::monostate{}, 6);
      m.Build(threads);
      m.SetInput<int16_t>(0, x);
      m.Invoke();
      ASSERT_EQ(m.GetOutput<int16_t>(0), expected) << "trial " << trial << " threads " << threads;
    }
  }
}

// An attention layer's head split and merge on float32: [B, S, H, D] <->
// [B, H, S, D], whose tile rows are runs of D floats (16, 32 and 48 bytes:
// copied in 16-byte pieces), and the key transpose [B, S, H, D] -> [B, H, D, S].
TEST(Transpose, AttentionHeadsFloat) {
  struct Case {
    std::vector<int32_t> dims, perm;
  };
  const std::vector<Case> cases = {{{1, 16, 4, 8}, {0, 2, 1, 3}}, {{1, 4, 16, 8}, {0, 2, 1, 3}},
                                   {{2, 3, 5, 4}, {0, 2, 1, 3}},  {{1, 6, 2, 12}, {0, 2, 1, 3}},
                                   {{1, 16, 4, 8}, {0, 2, 3, 1}}, {{3, 7, 2, 8}, {0, 2, 1, 3}}};
  for (const Case& c : cases) {
    int64_t total = 1;
    for (int32_t d : c.dims) total *= d;
    std::vector<float> x(total);
    for (int64_t i = 0; i < total; ++i) x[i] = static_cast<float>(i) * 0.5f - 7.0f;
    std::vector<float> expected;
    const int32_t* d = c.dims.data();
    const int32_t* pm = c.perm.data();
    int64_t in_stride[4];
    in_stride[3] = 1;
    for (int k = 2; k >= 0; --k) in_stride[k] = in_stride[k + 1] * d[k + 1];
    for (int32_t a = 0; a < d[pm[0]]; ++a)
      for (int32_t b = 0; b < d[pm[1]]; ++b)
        for (int32_t e = 0; e < d[pm[2]]; ++e)
          for (int32_t f = 0; f < d[pm[3]]; ++f)
            expected.push_back(x[a * in_stride[pm[0]] + b * in_stride[pm[1]] +
                                 e * in_stride[pm[2]] + f * in_stride[pm[3]]]);
    for (int threads : {1, 2}) {
      OpModel m;
      int in = m.AddInput(DataType::kFloat32, c.dims);
      int p = m.AddConst<int32_t>(DataType::kInt32, {4}, c.perm);
      int out = m.AddOutput(DataType::kFloat32);
      m.AddOp(BuiltinOp::kTranspose, {in, p}, {out});
      m.Build(threads);
      m.SetInput<float>(0, x);
      m.Invoke();
      ASSERT_EQ(m.GetOutput<float>(0), expected) << "case " << &c - cases.data() << " threads " << threads;
    }
  }
}

// NCHW -> NHWC of an image, the first op of PyTorch-converted models.
TEST(Transpose, NchwToNhwcOnTwoThreads) {
  const int c = 3, h = 67, w = 229;
  std::vector<uint8_t> x(c * h * w);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 13 + i / 251);
  OpModel m;
  int in = m.AddInput(DataType::kUInt8, {1, c, h, w}, Q(0.1f, 3));
  int p = m.AddConst<int32_t>(DataType::kInt32, {4}, {0, 2, 3, 1});
  int out = m.AddOutput(DataType::kUInt8, Q(0.1f, 3));
  m.AddOp(BuiltinOp::kTranspose, {in, p}, {out});
  m.Build(2);
  m.SetInput<uint8_t>(0, x);
  m.Invoke();
  const std::vector<uint8_t> y = m.GetOutput<uint8_t>(0);
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < w; ++j)
      for (int k = 0; k < c; ++k)
        ASSERT_EQ(y[(i * w + j) * c + k], x[(k * h + i) * w + j]) << i << " " << j << " " << k;
}

TEST(Transpose, BadPermFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 3});
  int perm = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kTranspose, {in, perm}, {out});
  EXPECT_THAT(BuildError(m), HasSubstr("not a permutation"));
}

// ---------------------------------------------------------- STRIDED_SLICE

OpModel StridedSliceModel(std::vector<int32_t> dims, std::vector<int32_t> begin,
                          std::vector<int32_t> end, std::vector<int32_t> strides,
                          StridedSliceParams params) {
  OpModel m;
  const int32_t n = static_cast<int32_t>(begin.size());
  int in = m.AddInput(DataType::kFloat32, dims);
  int b = m.AddConst<int32_t>(DataType::kInt32, {n}, begin);
  int e = m.AddConst<int32_t>(DataType::kInt32, {n}, end);
  int s = m.AddConst<int32_t>(DataType::kInt32, {n}, strides);
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kStridedSlice, {in, b, e, s}, {out}, params);
  return m;
}

TEST(StridedSlice, NegativeIndicesAndStride) {
  OpModel m = StridedSliceModel({6}, {-1}, {0}, {-2}, {});
  m.Build();
  m.SetInput<float>(0, Iota<float>(6));
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(5, 3, 1));
}

TEST(StridedSlice, BeginEndMasks) {
  StridedSliceParams p;
  p.begin_mask = 1;
  p.end_mask = 2;
  OpModel m = StridedSliceModel({3, 4}, {2, 1}, {2, 0}, {1, 2}, p);
  m.Build();
  m.SetInput<float>(0, Iota<float>(12));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(1, 3, 5, 7));
}

TEST(StridedSlice, ShrinkAxis) {
  StridedSliceParams p;
  p.shrink_axis_mask = 1;
  OpModel m = StridedSliceModel({3, 2}, {-1, 0}, {0, 2}, {1, 1}, p);
  m.Build();
  m.SetInput<float>(0, Iota<float>(6));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(4, 5));
}

TEST(StridedSlice, OffsetMakesEndASize) {
  StridedSliceParams p;
  p.offset = true;
  OpModel m = StridedSliceModel({2, 3}, {0, 1}, {2, 2}, {1, 1}, p);
  m.Build();
  m.SetInput<float>(0, Iota<float>(6));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(1, 2, 4, 5));
}

TEST(StridedSlice, ShortBeginTakesTrailingDimsWhole) {
  OpModel m = StridedSliceModel({3, 2}, {1}, {3}, {1}, {});
  m.Build();
  m.SetInput<float>(0, Iota<float>(6));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(2, 3, 4, 5));
}

TEST(StridedSlice, EllipsisStandsForTheLeadingDims) {
  // x[..., 1:3] of a [2, 3] input: the ellipsis covers dim 0 whole.
  StridedSliceParams p;
  p.ellipsis_mask = 1;
  OpModel m = StridedSliceModel({2, 3}, {0, 1}, {0, 3}, {1, 1}, p);
  m.Build();
  m.SetInput<float>(0, Iota<float>(6));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(1, 2, 4, 5));
}

TEST(StridedSlice, NewAxisAndEllipsisTogether) {
  // x[1, tf.newaxis, ...] of a [2, 3] input: shrink dim 0, add a new axis, keep dim 1.
  StridedSliceParams p;
  p.shrink_axis_mask = 1;
  p.new_axis_mask = 2;
  p.ellipsis_mask = 4;
  OpModel m = StridedSliceModel({2, 3}, {1, 0, 0}, {2, 0, 0}, {1, 1, 1}, p);
  m.Build();
  m.SetInput<float>(0, Iota<float>(6));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 3));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(3, 4, 5));
}

TEST(StridedSlice, SpecNamingTooManyDimsFails) {
  OpModel m = StridedSliceModel({3}, {0, 0}, {1, 1}, {1, 1}, {});
  EXPECT_THAT(BuildError(m), HasSubstr("names more dims than input"));
}

TEST(StridedSlice, ZeroStrideFails) {
  OpModel m = StridedSliceModel({3}, {0}, {1}, {0}, {});
  EXPECT_THAT(BuildError(m), HasSubstr("strides[0] is 0"));
}

}  // namespace
}  // namespace delegato
