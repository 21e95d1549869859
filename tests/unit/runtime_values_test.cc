// Ops whose output shapes depend on the *values* of tensors computed at run
// time (RESHAPE's shape, WHERE's condition, RANGE's bounds, a reduction's
// axis, ...). The interpreter prepares such a node during Invoke, once the
// values exist, sizes its outputs outside the arena, and prepares it again
// only when those values or its inputs' dims change. Every invoked case is
// replayed in LiteRT (which sizes such tensors dynamically too).
#include <cstdint>
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

TEST(RuntimeValues, ReshapeFollowsItsShapeInputAcrossInvokes) {
  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {2, 3});
  const int shape = m.AddInput(DataType::kInt32, {2});
  const int reshaped = m.AddTensor(DataType::kFloat32);
  const int one = m.AddConst<float>(DataType::kFloat32, {}, {1.0f});
  const int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kReshape, {in, shape}, {reshaped});
  // A node after the dynamic tensor is prepared during Invoke as well.
  m.AddOp(BuiltinOp::kAdd, {reshaped, one}, {out}, ElementwiseParams{});
  m.Build();
  const std::vector<float> values = {0, 1, 2, 3, 4, 5};
  m.SetInput<float>(0, values);
  m.SetInput<int32_t>(1, {3, 2});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(1, 2, 3, 4, 5, 6));
  const void* first_data = m.interpreter().output(0).data;
  // Same values: nothing is prepared or allocated again.
  m.Invoke();
  EXPECT_EQ(m.interpreter().output(0).data, first_data);
  m.SetInput<int32_t>(1, {-1, 1});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(6, 1));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(1, 2, 3, 4, 5, 6));
  // A shape the input cannot take: Invoke fails naming the node.
  m.SetInput<int32_t>(1, {4, 2});
  const Status s = m.TryInvoke();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (RESHAPE)"));
  // And recovers with a good shape.
  m.SetInput<int32_t>(1, {1, 6});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 6));
}

TEST(RuntimeValues, WhereOfARunTimeCondition) {
  OpModel m;
  const int cond = m.AddInput(DataType::kBool, {4});
  const int out = m.AddOutput(DataType::kInt64);
  m.AddOp(BuiltinOp::kWhere, {cond}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<uint8_t>(0, {1, 0, 1, 1});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3, 1));
  EXPECT_THAT(m.GetOutput<int64_t>(0), ElementsAre(0, 2, 3));
  m.SetInput<uint8_t>(0, {0, 0, 0, 1});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 1));
  EXPECT_THAT(m.GetOutput<int64_t>(0), ElementsAre(3));
  // (No all-false case here: LiteRT's Python API cannot read the empty result
  // back for the replay.)
}

TEST(RuntimeValues, NonMaxSuppressionWithARunTimeMaximum) {
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f,
                                    0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101};
  const std::vector<float> scores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};
  OpModel m;
  const int b = m.AddInput(DataType::kFloat32, {6, 4});
  const int s = m.AddInput(DataType::kFloat32, {6});
  const int max_out = m.AddInput(DataType::kInt32, {});
  const int iou = m.AddConst<float>(DataType::kFloat32, {}, {0.5f});
  const int score = m.AddConst<float>(DataType::kFloat32, {}, {0.0f});
  const int selected = m.AddOutput(DataType::kInt32);
  const int valid = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kNonMaxSuppressionV4, {b, s, max_out, iou, score}, {selected, valid},
          EmptyParams{});
  m.Build();
  m.SetInput<float>(0, boxes);
  m.SetInput<float>(1, scores);
  m.SetInput<int32_t>(2, {2});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(3, 0));
  EXPECT_THAT(m.GetOutput<int32_t>(1), ElementsAre(2));
  m.SetInput<int32_t>(2, {5});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(3, 0, 5, 0, 0));
  EXPECT_THAT(m.GetOutput<int32_t>(1), ElementsAre(3));
}

TEST(RuntimeValues, UniqueOfARunTimeInput) {
  OpModel m;
  const int a = m.AddInput(DataType::kInt32, {6});
  const int values = m.AddOutput(DataType::kInt32);
  const int index = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kUnique, {a}, {values, index}, UniqueParams{DataType::kInt32});
  m.Build();
  m.SetInput<int32_t>(0, {4, 1, 4, 2, 1, 4});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(4, 1, 2));
  EXPECT_THAT(m.GetOutput<int32_t>(1), ElementsAre(0, 1, 0, 2, 1, 0));
}

TEST(RuntimeValues, SparseToDenseAndSegmentSum) {
  {
    OpModel m;
    const int idx = m.AddInput(DataType::kInt32, {1});
    const int shape = m.AddInput(DataType::kInt32, {1});
    const int values = m.AddInput(DataType::kInt32, {1});
    const int def = m.AddConst<int32_t>(DataType::kInt32, {}, {-1});
    const int out = m.AddOutput(DataType::kInt32);
    m.AddOp(BuiltinOp::kSparseToDense, {idx, shape, values, def}, {out}, SparseToDenseParams{});
    m.Build();
    m.SetInput<int32_t>(0, {2});
    m.SetInput<int32_t>(1, {4});
    m.SetInput<int32_t>(2, {7});
    m.Invoke();
    EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(-1, -1, 7, -1));
  }
  {
    OpModel m;
    const int data = m.AddInput(DataType::kInt32, {4});
    const int ids = m.AddInput(DataType::kInt32, {4});
    const int out = m.AddOutput(DataType::kInt32);
    m.AddOp(BuiltinOp::kSegmentSum, {data, ids}, {out}, EmptyParams{});
    m.Build();
    m.SetInput<int32_t>(0, {5, 6, 7, 8});
    m.SetInput<int32_t>(1, {0, 0, 1, 1});  // LiteRT takes ids that step by 0 or 1 only
    m.Invoke();
    EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(11, 15));
  }
}

TEST(RuntimeValues, ShapeOperandsOfDataMovementOps) {
  {  // EXPAND_DIMS
    OpModel m;
    const int in = m.AddInput(DataType::kFloat32, {2, 3});
    const int axis = m.AddInput(DataType::kInt32, {});
    const int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kExpandDims, {in, axis}, {out}, EmptyParams{});
    m.Build();
    m.SetInput<float>(0, {1, 2, 3, 4, 5, 6});
    m.SetInput<int32_t>(1, {1});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 1, 3));
    m.SetInput<int32_t>(1, {-1});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 3, 1));
  }
  {  // FILL, then a refused negative dimension at Invoke
    OpModel m;
    const int dims = m.AddInput(DataType::kInt32, {2});
    const int value = m.AddInput(DataType::kFloat32, {});
    const int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kFill, {dims, value}, {out}, EmptyParams{});
    m.Build();
    m.SetInput<int32_t>(0, {2, 3});
    m.SetInput<float>(1, {1.5f});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 3));
    EXPECT_THAT(m.GetOutput<float>(0), ElementsAreArray(std::vector<float>(6, 1.5f)));
    m.SetInput<int32_t>(0, {2, -1});
    const Status s = m.TryInvoke();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("node 0 (FILL): dims[1] is -1"));
  }
  {  // RANGE, then a zero delta at Invoke
    OpModel m;
    const int start = m.AddInput(DataType::kInt32, {});
    const int limit = m.AddConst<int32_t>(DataType::kInt32, {}, {5});
    const int delta = m.AddInput(DataType::kInt32, {});
    const int out = m.AddOutput(DataType::kInt32);
    m.AddOp(BuiltinOp::kRange, {start, limit, delta}, {out}, EmptyParams{});
    m.Build();
    m.SetInput<int32_t>(0, {2});
    m.SetInput<int32_t>(1, {1});
    m.Invoke();
    EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(2, 3, 4));
    m.SetInput<int32_t>(0, {0});
    m.SetInput<int32_t>(1, {2});
    m.Invoke();
    EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(0, 2, 4));
    m.SetInput<int32_t>(1, {0});
    const Status s = m.TryInvoke();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("delta must not be 0"));
  }
  {  // PAD
    OpModel m;
    const int in = m.AddInput(DataType::kFloat32, {2});
    const int pads = m.AddInput(DataType::kInt32, {1, 2});
    const int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kPad, {in, pads}, {out}, EmptyParams{});
    m.Build();
    m.SetInput<float>(0, {1, 2});
    m.SetInput<int32_t>(1, {1, 2});
    m.Invoke();
    EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(0, 1, 2, 0, 0));
  }
  {  // SPLIT along a run-time axis
    OpModel m;
    const int axis = m.AddInput(DataType::kInt32, {});
    const int in = m.AddInput(DataType::kFloat32, {2, 4});
    const int o0 = m.AddOutput(DataType::kFloat32);
    const int o1 = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kSplit, {axis, in}, {o0, o1}, SplitParams{2});
    m.Build();
    m.SetInput<int32_t>(0, {1});
    m.SetInput<float>(1, {0, 1, 2, 3, 4, 5, 6, 7});
    m.Invoke();
    EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(0, 1, 4, 5));
    EXPECT_THAT(m.GetOutput<float>(1), ElementsAre(2, 3, 6, 7));
    m.SetInput<int32_t>(0, {0});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 4));
    EXPECT_THAT(m.GetOutput<float>(1), ElementsAre(4, 5, 6, 7));
  }
}

TEST(RuntimeValues, ReductionAxesAndResizeSizes) {
  {  // REDUCE_MIN and MEAN over a run-time axis
    for (BuiltinOp op : {BuiltinOp::kReduceMin, BuiltinOp::kMean}) {
      OpModel m;
      const int in = m.AddInput(DataType::kFloat32, {2, 3});
      const int axis = m.AddInput(DataType::kInt32, {1});
      const int out = m.AddOutput(DataType::kFloat32);
      m.AddOp(op, {in, axis}, {out}, ReducerParams{false});
      m.Build();
      m.SetInput<float>(0, {1, 5, 3, 4, 2, 6});
      m.SetInput<int32_t>(1, {1});
      m.Invoke();
      EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2));
      m.SetInput<int32_t>(1, {0});
      m.Invoke();
      EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3));
      if (op == BuiltinOp::kReduceMin) EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(1, 2, 3));
    }
  }
  {  // ARG_MAX
    OpModel m;
    const int in = m.AddInput(DataType::kFloat32, {2, 3});
    const int axis = m.AddInput(DataType::kInt32, {1});
    const int out = m.AddOutput(DataType::kInt64);
    m.AddOp(BuiltinOp::kArgMax, {in, axis}, {out}, ArgMinMaxParams{DataType::kInt64});
    m.Build();
    m.SetInput<float>(0, {1, 5, 3, 4, 2, 6});
    m.SetInput<int32_t>(1, {1});
    m.Invoke();
    EXPECT_THAT(m.GetOutput<int64_t>(0), ElementsAre(1, 2));
    m.SetInput<int32_t>(1, {0});
    m.Invoke();
    EXPECT_THAT(m.GetOutput<int64_t>(0), ElementsAre(1, 0, 1));
  }
  {  // RESIZE_BILINEAR to a run-time size
    OpModel m;
    const int in = m.AddInput(DataType::kFloat32, {1, 2, 2, 1});
    const int size = m.AddInput(DataType::kInt32, {2});
    const int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kResizeBilinear, {in, size}, {out}, ResizeParams{});
    m.Build();
    m.SetInput<float>(0, {0, 4, 8, 12});
    m.SetInput<int32_t>(1, {4, 4});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 4, 4, 1));
    m.SetInput<int32_t>(1, {2, 3});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 2, 3, 1));
  }
}

TEST(RuntimeValues, TransposeConvolutionOutputShapes) {
  {  // TRANSPOSE_CONV
    OpModel m;
    const int shape = m.AddInput(DataType::kInt32, {4});
    const int w = m.AddConst<float>(DataType::kFloat32, {2, 3, 3, 2}, std::vector<float>(36, 0.5f));
    const int in = m.AddInput(DataType::kFloat32, {1, 2, 2, 2});
    const int bias = m.AddConst<float>(DataType::kFloat32, {2}, {1, 2});
    const int out = m.AddOutput(DataType::kFloat32);
    TransposeConvParams p;
    p.stride_w = p.stride_h = 2;
    m.AddOp(BuiltinOp::kTransposeConv, {shape, w, in, bias}, {out}, p, 3);
    m.Build();
    m.SetInput<int32_t>(0, {1, 4, 4, 2});
    m.SetInput<float>(1, {1, 2, 3, 4, 5, 6, 7, 8});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 4, 4, 2));
    m.SetInput<int32_t>(0, {1, 3, 3, 2});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 3, 3, 2));
  }
  {  // CONV_3D_TRANSPOSE
    OpModel m;
    const int shape = m.AddInput(DataType::kInt32, {5});
    const int w = m.AddConst<float>(DataType::kFloat32, {2, 2, 2, 1, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
    const int in = m.AddInput(DataType::kFloat32, {1, 2, 2, 2, 1});
    const int out = m.AddOutput(DataType::kFloat32);
    Conv3DParams p;
    p.stride_d = p.stride_h = p.stride_w = 2;
    m.AddOp(BuiltinOp::kConv3dTranspose, {shape, w, in}, {out}, p);
    m.Build();
    m.SetInput<int32_t>(0, {1, 4, 4, 4, 1});
    m.SetInput<float>(1, {1, -1, 2, -2, 3, -3, 4, -4});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 4, 4, 4, 1));
  }
}

}  // namespace
}  // namespace delegato
