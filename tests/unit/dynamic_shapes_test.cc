// Shape subgraphs computed from the input's dims, as the TensorFlow converter
// writes them for models with an unknown batch (or other) dimension:
//
//   input [B,6] --SHAPE--> [B,6] --STRIDED_SLICE [0:1], shrink--> B
//        |                                                        |
//        |                           PACK(B, 3, 2) <--------------+
//        +----------------------------- RESHAPE(input, [B,3,2]) --> output
//
// Prepare folds SHAPE -> STRIDED_SLICE -> PACK, so RESHAPE sees a constant
// shape; a resize of the input re-folds them. Each case is replayed in LiteRT.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OpModel;

// Builds the graph above; returns nothing, the model is `m`.
void BuildReshapeByInputBatch(OpModel& m, DataType shape_type) {
  const int input = m.AddInput(DataType::kFloat32, {2, 6}, {}, "x");
  const int shape = m.AddTensor(shape_type);
  const int begin = m.AddConst<int32_t>(DataType::kInt32, {1}, {0});
  const int end = m.AddConst<int32_t>(DataType::kInt32, {1}, {1});
  const int stride = m.AddConst<int32_t>(DataType::kInt32, {1}, {1});
  const int batch = m.AddTensor(DataType::kInt32);
  const int three = m.AddConst<int32_t>(DataType::kInt32, {}, {3});
  const int two = m.AddConst<int32_t>(DataType::kInt32, {}, {2});
  const int new_shape = m.AddTensor(DataType::kInt32);
  const int output = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kShape, {input}, {shape}, ShapeParams{shape_type});
  StridedSliceParams slice;
  slice.shrink_axis_mask = 1;
  if (shape_type == DataType::kInt32) {
    m.AddOp(BuiltinOp::kStridedSlice, {shape, begin, end, stride}, {batch}, slice);
  } else {  // an INT64 SHAPE is cast first, as the converter does
    const int shape32 = m.AddTensor(DataType::kInt32);
    m.AddOp(BuiltinOp::kCast, {shape}, {shape32});
    m.AddOp(BuiltinOp::kStridedSlice, {shape32, begin, end, stride}, {batch}, slice);
  }
  m.AddOp(BuiltinOp::kPack, {batch, three, two}, {new_shape}, PackParams{3, 0});
  m.AddOp(BuiltinOp::kReshape, {input, new_shape}, {output}, ReshapeParams{});
}

TEST(DynamicShapes, ShapeSubgraphFeedsReshape) {
  for (DataType shape_type : {DataType::kInt32, DataType::kInt64}) {
    OpModel m;
    BuildReshapeByInputBatch(m, shape_type);
    m.Build();
    std::vector<float> values(12);
    for (int i = 0; i < 12; ++i) values[i] = static_cast<float>(i) - 3.5f;
    m.SetInput<float>(0, values);
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 3, 2));
    EXPECT_EQ(m.GetOutput<float>(0), values);
  }
}

TEST(DynamicShapes, ResizeRefoldsTheShapeSubgraph) {
  OpModel m;
  BuildReshapeByInputBatch(m, DataType::kInt32);
  m.Build();
  ASSERT_TRUE(m.interpreter().ResizeInput(0, {5, 6}).ok());
  ASSERT_TRUE(m.interpreter().AllocateTensors().ok());
  std::vector<float> values(30);
  for (int i = 0; i < 30; ++i) values[i] = static_cast<float>(i * 7 % 11);
  m.SetInput<float>(0, values);
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(5, 3, 2));
  EXPECT_EQ(m.GetOutput<float>(0), values);
  // And back down: nothing of the first fold is left over.
  ASSERT_TRUE(m.interpreter().ResizeInput(0, {1, 6}).ok());
  ASSERT_TRUE(m.interpreter().AllocateTensors().ok());
  values.resize(6);
  m.SetInput<float>(0, values);
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 3, 2));
  EXPECT_EQ(m.GetOutput<float>(0), values);
}

TEST(DynamicShapes, ResizeThatTheFoldedShapeCannotTakeNamesTheNode) {
  OpModel m;
  BuildReshapeByInputBatch(m, DataType::kInt32);
  m.Build();
  // [2,5] has 10 elements; the folded shape asks for 2x3x2 = 12.
  ASSERT_TRUE(m.interpreter().ResizeInput(0, {2, 5}).ok());
  const Status status = m.interpreter().AllocateTensors();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("RESHAPE"));
}

}  // namespace
}  // namespace delegato
