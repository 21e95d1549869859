// MEAN, ARG_MAX, ARG_MIN. The quantized MEAN values were confirmed against
// LiteRT's reference kernel (its multiplier folds 1/count in before rounding).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OpModel;
using testing::Q;

std::string BuildError(OpModel& m) {
  Status s = m.TryBuild();
  EXPECT_FALSE(s.ok());
  return s.message();
}

// ---------------------------------------------------------------------- MEAN

TEST(Mean, FloatLastAxis) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 3});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {1}, {-1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kMean, {in, axis}, {out}, ReducerParams{false});
  m.Build();
  m.SetInput<float>(0, {1, 2, 4, 0.1f, 0.2f, 0.4f});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2));
  // Summed in order, then divided in float.
  EXPECT_THAT(m.GetOutput<float>(0),
              ElementsAre(7.0f / 3.0f, ((0.1f + 0.2f) + 0.4f) / 3.0f));
}

TEST(Mean, FloatKeepDimsSpatial) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 2, 2, 2});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kMean, {in, axis}, {out}, ReducerParams{true});
  m.Build();
  m.SetInput<float>(0, {1, 10, 2, 20, 3, 30, 4, 40});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 1, 1, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(2.5f, 25.0f));
}

TEST(Mean, FloatDuplicateAndNegativeAxesReduceOnce) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 2});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {3}, {0, -2, 1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kMean, {in, axis}, {out}, ReducerParams{false});
  m.Build();
  m.SetInput<float>(0, {1, 2, 3, 6});
  m.Invoke();
  EXPECT_TRUE(m.GetOutputShape(0).empty());
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(3.0f));
}

TEST(Mean, Int8KeepDimsRescales) {
  OpModel m;
  int in = m.AddInput(DataType::kInt8, {1, 2, 2, 2}, Q(0.5f, -3));
  int axis = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 2});
  int out = m.AddOutput(DataType::kInt8, Q(0.3f, 2));
  m.AddOp(BuiltinOp::kMean, {in, axis}, {out}, ReducerParams{true}, 2);
  m.Build();
  m.SetInput<int8_t>(0, {-128, -50, 0, 7, 13, 100, 127, -3});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 1, 1, 2));
  EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(12, 30));
}

TEST(Mean, Int8SameParamsNegativeAxis) {
  OpModel m;
  int in = m.AddInput(DataType::kInt8, {2, 4}, Q(0.5f, -3));
  int axis = m.AddConst<int32_t>(DataType::kInt32, {1}, {-1});
  int out = m.AddOutput(DataType::kInt8, Q(0.5f, -3));
  m.AddOp(BuiltinOp::kMean, {in, axis}, {out}, ReducerParams{false}, 2);
  m.Build();
  m.SetInput<int8_t>(0, {-128, -50, 0, 7, 13, 100, 127, -3});
  m.Invoke();
  // Centred sums -159 and 249 over 4 elements, multiplier 1 folded into
  // 2^30 * 2^-1. Row 0: -39.75 -> -40, -40 - 3 = -43. Row 1 shows TFLite's
  // double rounding: the high multiply gives 124.5 -> 125, the shift 62.5 ->
  // 63 (not 62.25 -> 62), so 63 - 3 = 60.
  EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(-43, 60));
}

TEST(Mean, UInt8FirstAxis) {
  OpModel m;
  int in = m.AddInput(DataType::kUInt8, {2, 4}, Q(0.1f, 128));
  int axis = m.AddConst<int32_t>(DataType::kInt32, {1}, {0});
  int out = m.AddOutput(DataType::kUInt8, Q(0.05f, 100));
  m.AddOp(BuiltinOp::kMean, {in, axis}, {out}, ReducerParams{false});
  m.Build();
  m.SetInput<uint8_t>(0, {0, 255, 128, 17, 3, 99, 200, 250});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<uint8_t>(0), ElementsAre(0, 198, 172, 111));
}

TEST(Mean, AxisOutOfRangeFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 2});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {1}, {2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kMean, {in, axis}, {out}, ReducerParams{false});
  EXPECT_THAT(BuildError(m), HasSubstr("axis 2 is out of range for rank 2"));
}

TEST(Mean, Int32InputFails) {
  OpModel m;
  int in = m.AddInput(DataType::kInt32, {2, 2});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {1}, {0});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kMean, {in, axis}, {out}, ReducerParams{false});
  EXPECT_THAT(BuildError(m), HasSubstr("MEAN supports"));
}

// ------------------------------------------------------- ARG_MAX / ARG_MIN

TEST(ArgMax, FloatTiesTakeFirstInt32Output) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 3});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {1}, {1});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kArgMax, {in, axis}, {out}, ArgMinMaxParams{DataType::kInt32});
  m.Build();
  m.SetInput<float>(0, {1, 5, 5, -2, -3, -2});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2));
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(1, 0));
}

TEST(ArgMax, UInt8NegativeAxisInt64Output) {
  OpModel m;
  int in = m.AddInput(DataType::kUInt8, {1, 2, 2, 3});
  int axis = m.AddConst<int64_t>(DataType::kInt64, {1}, {-1});
  int out = m.AddOutput(DataType::kInt64);
  m.AddOp(BuiltinOp::kArgMax, {in, axis}, {out}, ArgMinMaxParams{DataType::kInt64});
  m.Build();
  m.SetInput<uint8_t>(0, {0, 9, 3, 255, 1, 255, 7, 7, 7, 2, 3, 4});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 2, 2));
  EXPECT_THAT(m.GetOutput<int64_t>(0), ElementsAre(1, 0, 0, 2));
}

TEST(ArgMin, Int8FirstAxis) {
  OpModel m;
  int in = m.AddInput(DataType::kInt8, {3, 2}, Q(0.1f, 0));
  int axis = m.AddConst<int32_t>(DataType::kInt32, {}, {0});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kArgMin, {in, axis}, {out}, ArgMinMaxParams{DataType::kInt32});
  m.Build();
  m.SetInput<int8_t>(0, {5, -1, -128, -1, -128, -7});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(1, 2));
}

TEST(ArgMax, OutputTypeMismatchFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {1}, {0});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kArgMax, {in, axis}, {out}, ArgMinMaxParams{DataType::kInt64});
  EXPECT_THAT(BuildError(m), HasSubstr("options ask for INT64"));
}

TEST(ArgMin, AxisOutOfRangeFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 2});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {1}, {-3});
  int out = m.AddOutput(DataType::kInt64);
  m.AddOp(BuiltinOp::kArgMin, {in, axis}, {out}, ArgMinMaxParams{DataType::kInt64});
  EXPECT_THAT(BuildError(m), HasSubstr("axis -3 is out of range"));
}

}  // namespace
}  // namespace delegato
