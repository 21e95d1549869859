// GATHER and GATHER_ND: constant out-of-range indices fail in Prepare; others
// make Invoke fail (their output slices are zero-filled, never read out of
// bounds), as TFLite's reference kernels fail the invocation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OpModel;
using testing::Q;

TEST(Gather, Axis0Int32Indices) {
  OpModel m;
  int params = m.AddInput(DataType::kFloat32, {3, 2});
  int indices = m.AddInput(DataType::kInt32, {2, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kGather, {params, indices}, {out}, GatherParams{0, 0});
  m.Build();
  m.SetInput<float>(0, {0, 1, 10, 11, 20, 21});
  m.SetInput<int32_t>(1, {2, 0, 1, 1});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(20, 21, 0, 1, 10, 11, 10, 11));
}

TEST(Gather, NegativeAxisInt64IndicesInt8) {
  OpModel m;
  int params = m.AddInput(DataType::kInt8, {2, 3}, Q(0.5f, 1));
  int indices = m.AddConst<int64_t>(DataType::kInt64, {2}, {2, 0});
  int out = m.AddOutput(DataType::kInt8, Q(0.5f, 1));
  m.AddOp(BuiltinOp::kGather, {params, indices}, {out}, GatherParams{-1, 0});
  m.Build();
  m.SetInput<int8_t>(0, {1, 2, 3, -1, -2, -3});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(3, 1, -3, -1));
}

TEST(Gather, ScalarIndexDropsAxis) {
  OpModel m;
  int params = m.AddInput(DataType::kInt32, {2, 3});
  int indices = m.AddConst<int32_t>(DataType::kInt32, {}, {1});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kGather, {params, indices}, {out}, GatherParams{0, 0});
  m.Build();
  m.SetInput<int32_t>(0, {1, 2, 3, 4, 5, 6});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3));
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(4, 5, 6));
}

TEST(Gather, BatchDims) {
  OpModel m;
  int params = m.AddInput(DataType::kFloat32, {2, 3});
  int indices = m.AddInput(DataType::kInt32, {2, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kGather, {params, indices}, {out}, GatherParams{1, 1});
  m.Build();
  m.SetInput<float>(0, {0, 1, 2, 10, 11, 12});
  m.SetInput<int32_t>(1, {2, 1, 0, 0});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(2, 1, 10, 10));
}

TEST(Gather, ConstantIndexOutOfRangeFailsInPrepare) {
  OpModel m;
  int params = m.AddInput(DataType::kFloat32, {3});
  int indices = m.AddConst<int32_t>(DataType::kInt32, {1}, {3});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kGather, {params, indices}, {out}, GatherParams{0, 0});
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("out of range [0, 3)"));
}

TEST(Gather, RuntimeIndexOutOfRangeFailsInvoke) {
  OpModel m;
  int params = m.AddInput(DataType::kFloat32, {3});
  int indices = m.AddInput(DataType::kInt32, {2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kGather, {params, indices}, {out}, GatherParams{0, 0});
  m.Build();
  m.SetInput<float>(0, {1, 2, 3});
  m.SetInput<int32_t>(1, {1, -1});
  Status s = m.TryInvoke();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("index is out of range"));
}

TEST(Gather, AxisOutOfRangeFails) {
  OpModel m;
  int params = m.AddInput(DataType::kFloat32, {3});
  int indices = m.AddInput(DataType::kInt32, {1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kGather, {params, indices}, {out}, GatherParams{1, 0});
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("axis 1 is out of range"));
}

TEST(Gather, FloatIndicesFail) {
  OpModel m;
  int params = m.AddInput(DataType::kFloat32, {3});
  int indices = m.AddInput(DataType::kFloat32, {1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kGather, {params, indices}, {out}, GatherParams{0, 0});
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("must be INT16, INT32 or INT64"));
}

TEST(GatherNd, Slices) {
  OpModel m;
  int params = m.AddInput(DataType::kInt8, {2, 2, 2}, Q(0.1f, 0));
  int indices = m.AddInput(DataType::kInt32, {2, 1});
  int out = m.AddOutput(DataType::kInt8, Q(0.1f, 0));
  m.AddOp(BuiltinOp::kGatherNd, {params, indices}, {out});
  m.Build();
  m.SetInput<int8_t>(0, {0, 1, 2, 3, 4, 5, 6, 7});
  m.SetInput<int32_t>(1, {1, 0});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2, 2));
  EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(4, 5, 6, 7, 0, 1, 2, 3));
}

TEST(GatherNd, ElementsInt64Indices) {
  OpModel m;
  int params = m.AddInput(DataType::kFloat32, {2, 3});
  int indices = m.AddInput(DataType::kInt64, {3, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kGatherNd, {params, indices}, {out});
  m.Build();
  m.SetInput<float>(0, {0, 1, 2, 10, 11, 12});
  m.SetInput<int64_t>(1, {1, 2, 0, 0, 1, 0});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(12, 0, 10));
}

TEST(GatherNd, RuntimeIndexOutOfRangeFailsInvoke) {
  // [0, 5] addresses flat element 5, inside the buffer: still out of range.
  OpModel m;
  int params = m.AddInput(DataType::kFloat32, {2, 3});
  int indices = m.AddInput(DataType::kInt32, {1, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kGatherNd, {params, indices}, {out});
  m.Build();
  m.SetInput<float>(0, {0, 1, 2, 3, 4, 5});
  m.SetInput<int32_t>(1, {0, 5});
  Status s = m.TryInvoke();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("index is out of range"));
}

TEST(GatherNd, ConstantIndexOutOfRangeFailsInPrepare) {
  OpModel m;
  int params = m.AddInput(DataType::kFloat32, {2, 3});
  int indices = m.AddConst<int32_t>(DataType::kInt32, {1, 2}, {2, 0});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kGatherNd, {params, indices}, {out});
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("out of range [0, 2)"));
}

TEST(GatherNd, IndexDepthTooLargeFails) {
  OpModel m;
  int params = m.AddInput(DataType::kFloat32, {2});
  int indices = m.AddInput(DataType::kInt32, {1, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kGatherNd, {params, indices}, {out});
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("exceeds params rank 1"));
}

}  // namespace
}  // namespace delegato
