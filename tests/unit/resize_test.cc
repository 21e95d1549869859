// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR. uint8 and float bilinear use
// single-precision weights (uint8 adds 0.5 and truncates); int8 uses 10-bit
// fixed point. Expected values were confirmed against LiteRT's reference kernels.
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
std::vector<T> RunResize(BuiltinOp op, DataType type, std::vector<int32_t> in_dims,
                         std::vector<T> input, int32_t out_h, int32_t out_w,
                         ResizeParams params, int threads = 1) {
  OpModel m;
  const Quantization q = type == DataType::kFloat32 ? Quantization{} : Q(0.1f, 0);
  int in = m.AddInput(type, in_dims, q);
  int size = m.AddConst<int32_t>(DataType::kInt32, {2}, {out_h, out_w});
  int out = m.AddOutput(type, q);
  m.AddOp(op, {in, size}, {out}, params, 3);
  m.Build(threads);
  m.SetInput<T>(0, input);
  m.Invoke();
  EXPECT_EQ(m.GetOutputShape(0),
            (std::vector<int32_t>{in_dims[0], out_h, out_w, in_dims[3]}));
  return m.GetOutput<T>(0);
}

// ----------------------------------------------------------- RESIZE_BILINEAR

TEST(ResizeBilinear, FloatHalfPixelCenters) {
  EXPECT_THAT(RunResize<float>(BuiltinOp::kResizeBilinear, DataType::kFloat32, {1, 2, 2, 1},
                               {0, 1, 2, 4}, 3, 3, ResizeParams{false, true}),
              ElementsAre(0.0f, 0.5f, 1.0f, 1.0f, 1.75f, 2.5f, 2.0f, 3.0f, 4.0f));
}

TEST(ResizeBilinear, FloatAlignCorners) {
  EXPECT_THAT(RunResize<float>(BuiltinOp::kResizeBilinear, DataType::kFloat32, {1, 2, 2, 1},
                               {0, 1, 2, 4}, 3, 3, ResizeParams{true, false}),
              ElementsAre(0.0f, 0.5f, 1.0f, 1.0f, 1.75f, 2.5f, 2.0f, 3.0f, 4.0f));
}

TEST(ResizeBilinear, FloatDefaultTwoChannels) {
  // Scale 0.5: output x=1 sits at input 0.5, x=3 at 1.5 (clamped to 1).
  EXPECT_THAT(RunResize<float>(BuiltinOp::kResizeBilinear, DataType::kFloat32, {1, 1, 2, 2},
                               {0, 10, 4, 20}, 1, 4, ResizeParams{}),
              ElementsAre(0, 10, 2, 15, 4, 20, 4, 20));
}

TEST(ResizeBilinear, UInt8AlignCorners) {
  EXPECT_THAT(RunResize<uint8_t>(BuiltinOp::kResizeBilinear, DataType::kUInt8, {1, 2, 2, 1},
                                 {0, 100, 255, 7}, 3, 3, ResizeParams{true, false}),
              ElementsAre(0, 50, 100, 128, 91, 54, 255, 131, 7));
}

TEST(ResizeBilinear, UInt8Default) {
  EXPECT_THAT(RunResize<uint8_t>(BuiltinOp::kResizeBilinear, DataType::kUInt8, {1, 2, 2, 1},
                                 {0, 100, 255, 7}, 3, 3, ResizeParams{}),
              ElementsAre(0, 67, 100, 170, 82, 38, 255, 90, 7));
}

TEST(ResizeBilinear, Int8HalfPixelCenters) {
  EXPECT_THAT(RunResize<int8_t>(BuiltinOp::kResizeBilinear, DataType::kInt8, {1, 2, 2, 1},
                                {-128, 100, 127, -7}, 3, 3, ResizeParams{false, true}),
              ElementsAre(-128, -14, 100, -1, 23, 47, 127, 60, -7));
}

TEST(ResizeBilinear, Int8Default) {
  EXPECT_THAT(RunResize<int8_t>(BuiltinOp::kResizeBilinear, DataType::kInt8, {1, 2, 2, 1},
                                {-128, 100, 127, -7}, 3, 3, ResizeParams{}),
              ElementsAre(-128, 24, 100, 42, 33, 29, 127, 38, -7));
}

TEST(ResizeBilinear, BothFlagsFail) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 2, 2, 1});
  int size = m.AddConst<int32_t>(DataType::kInt32, {2}, {3, 3});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kResizeBilinear, {in, size}, {out}, ResizeParams{true, true});
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot both be set"));
}

TEST(ResizeBilinear, NotFourDFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 2, 1});
  int size = m.AddConst<int32_t>(DataType::kInt32, {2}, {3, 3});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kResizeBilinear, {in, size}, {out}, ResizeParams{});
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("must be 4-D"));
}

TEST(ResizeBilinear, NonPositiveSizeFails) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 2, 2, 1});
  int size = m.AddConst<int32_t>(DataType::kInt32, {2}, {0, 3});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kResizeBilinear, {in, size}, {out}, ResizeParams{});
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("must be positive"));
}

// --------------------------------------------------- RESIZE_NEAREST_NEIGHBOR

std::vector<float> Grid3x3() { return {0, 1, 2, 3, 4, 5, 6, 7, 8}; }

TEST(ResizeNearestNeighbor, Default) {
  EXPECT_THAT(RunResize<float>(BuiltinOp::kResizeNearestNeighbor, DataType::kFloat32,
                               {1, 3, 3, 1}, Grid3x3(), 2, 5, ResizeParams{}),
              ElementsAre(0, 0, 1, 1, 2, 3, 3, 4, 4, 5));
}

TEST(ResizeNearestNeighbor, AlignCorners) {
  EXPECT_THAT(RunResize<float>(BuiltinOp::kResizeNearestNeighbor, DataType::kFloat32,
                               {1, 3, 3, 1}, Grid3x3(), 2, 5, ResizeParams{true, false}),
              ElementsAre(0, 1, 1, 2, 2, 6, 7, 7, 8, 8));
}

TEST(ResizeNearestNeighbor, HalfPixelCenters) {
  EXPECT_THAT(RunResize<float>(BuiltinOp::kResizeNearestNeighbor, DataType::kFloat32,
                               {1, 3, 3, 1}, Grid3x3(), 2, 5, ResizeParams{false, true}),
              ElementsAre(0, 0, 1, 2, 2, 6, 6, 7, 8, 8));
}

TEST(ResizeNearestNeighbor, BothFlags) {
  // Allowed for nearest neighbour: rounds (value + 0.5) * scale.
  EXPECT_THAT(RunResize<float>(BuiltinOp::kResizeNearestNeighbor, DataType::kFloat32,
                               {1, 3, 3, 1}, Grid3x3(), 2, 5, ResizeParams{true, true}),
              ElementsAre(3, 4, 4, 5, 5, 6, 7, 7, 8, 8));
}

TEST(ResizeNearestNeighbor, UInt8Channels) {
  EXPECT_THAT(RunResize<uint8_t>(BuiltinOp::kResizeNearestNeighbor, DataType::kUInt8,
                                 {1, 1, 2, 2}, {1, 2, 3, 4}, 2, 4, ResizeParams{}),
              ElementsAre(1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4));
}

TEST(ResizeNearestNeighbor, Int8Downscale) {
  EXPECT_THAT(RunResize<int8_t>(BuiltinOp::kResizeNearestNeighbor, DataType::kInt8,
                                {2, 2, 2, 1}, {1, 2, 3, 4, -1, -2, -3, -4}, 1, 1,
                                ResizeParams{}),
              ElementsAre(1, -1));
}

}  // namespace
}  // namespace delegato
