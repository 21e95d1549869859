// SHAPE, RANK, EXPAND_DIMS, ZEROS_LIKE, FILL, RANGE, BROADCAST_ARGS,
// BROADCAST_TO, TILE, SLICE, REVERSE_V2, MIRROR_PAD, DEPTH_TO_SPACE,
// SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, ONE_HOT.
// Expected values are worked by hand or by direct index loops written in the
// tests (independent of the kernels' mapped-copy tables).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "model/model.h"
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

// ---------------------------------------------------------------- SHAPE, RANK

TEST(Shape, Int32AndInt64) {
  for (DataType out_type : {DataType::kInt32, DataType::kInt64}) {
    OpModel m;
    int in = m.AddInput(DataType::kInt8, {2, 3, 5}, Q(0.5f, 1));
    int out = m.AddOutput(out_type);
    m.AddOp(BuiltinOp::kShape, {in}, {out}, ShapeParams{out_type});
    m.Build();
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3));
    if (out_type == DataType::kInt32)
      EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(2, 3, 5));
    else
      EXPECT_THAT(m.GetOutput<int64_t>(0), ElementsAre(2, 3, 5));
  }
}

TEST(Shape, ScalarInputGivesEmpty) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kShape, {in}, {out}, ShapeParams{DataType::kInt32});
  m.Build();
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(0));
}

TEST(Shape, BadOutType) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kShape, {in}, {out}, ShapeParams{DataType::kFloat32});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (SHAPE): out_type FLOAT32"));
}

TEST(Shape, TypeMismatch) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kShape, {in}, {out}, ShapeParams{DataType::kInt64});
  EXPECT_THAT(BuildError(m), HasSubstr("out_type says INT64"));
}

TEST(Rank, Values) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 2, 3, 4});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kRank, {in}, {out}, EmptyParams{});
  m.Build();
  m.Invoke();
  EXPECT_TRUE(m.GetOutputShape(0).empty());
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(4));
}

// ---------------------------------------------------------------- EXPAND_DIMS

TEST(ExpandDims, AxesInt32AndInt64) {
  struct Case {
    int64_t axis;
    std::vector<int32_t> dims;
  };
  for (const Case& c : {Case{0, {1, 2, 3}}, Case{1, {2, 1, 3}}, Case{2, {2, 3, 1}},
                        Case{-1, {2, 3, 1}}, Case{-3, {1, 2, 3}}}) {
    for (bool wide : {false, true}) {
      OpModel m;
      int in = m.AddInput(DataType::kInt16, {2, 3});
      int axis = wide ? m.AddConst<int64_t>(DataType::kInt64, {1}, {c.axis})
                      : m.AddConst<int32_t>(DataType::kInt32, {}, {static_cast<int32_t>(c.axis)});
      int out = m.AddOutput(DataType::kInt16);
      m.AddOp(BuiltinOp::kExpandDims, {in, axis}, {out}, EmptyParams{});
      m.Build();
      m.SetInput<int16_t>(0, Iota<int16_t>(6, -3));
      m.Invoke();
      EXPECT_EQ(m.GetOutputShape(0), c.dims) << "axis " << c.axis;
      EXPECT_EQ(m.GetOutput<int16_t>(0), Iota<int16_t>(6, -3));
    }
  }
}

TEST(ExpandDims, AxisOutOfRange) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 3});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {}, {3});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kExpandDims, {in, axis}, {out}, EmptyParams{});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (EXPAND_DIMS): axis 3 is out of range"));
}

// ---------------------------------------------------------------- ZEROS_LIKE

TEST(ZerosLike, Types) {
  OpModel m;
  int a = m.AddInput(DataType::kFloat32, {2, 2});
  int b = m.AddInput(DataType::kInt64, {3});
  int oa = m.AddOutput(DataType::kFloat32);
  int ob = m.AddOutput(DataType::kInt64);
  m.AddOp(BuiltinOp::kZerosLike, {a}, {oa}, EmptyParams{});
  m.AddOp(BuiltinOp::kZerosLike, {b}, {ob}, EmptyParams{});
  m.Build();
  m.SetInput<float>(0, {1.5f, -2, 3, 4});
  m.SetInput<int64_t>(1, {7, 8, 9});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(m.GetOutput<int64_t>(1), ElementsAre(0, 0, 0));
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
}

TEST(ZerosLike, RejectsInt8) {
  OpModel m;
  int a = m.AddInput(DataType::kInt8, {2});
  int o = m.AddOutput(DataType::kInt8);
  m.AddOp(BuiltinOp::kZerosLike, {a}, {o}, EmptyParams{});
  EXPECT_THAT(BuildError(m), HasSubstr("has type INT8; supported: FLOAT32, INT32, INT64"));
}

// ---------------------------------------------------------------- FILL

TEST(Fill, FloatInt64DimsAndInt8) {
  {
    OpModel m;
    int dims = m.AddConst<int64_t>(DataType::kInt64, {2}, {2, 3});
    int value = m.AddInput(DataType::kFloat32, {});
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kFill, {dims, value}, {out}, EmptyParams{});
    m.Build();
    m.SetInput<float>(0, {2.5f});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 3));
    EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(2.5f, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f));
  }
  {
    OpModel m;
    int dims = m.AddConst<int32_t>(DataType::kInt32, {1}, {3});
    int value = m.AddConst<int8_t>(DataType::kInt8, {}, {-7}, Q(0.5f, 2));
    int out = m.AddOutput(DataType::kInt8, Q(0.5f, 2));
    m.AddOp(BuiltinOp::kFill, {dims, value}, {out}, EmptyParams{}, 3);
    m.Build();
    m.Invoke();
    EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(-7, -7, -7));
  }
}

TEST(Fill, Int16Int32Int64Bool) {
  OpModel m;
  int dims = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 2});
  int v16 = m.AddConst<int16_t>(DataType::kInt16, {}, {-300});
  int v32 = m.AddConst<int32_t>(DataType::kInt32, {}, {123456});
  int v64 = m.AddConst<int64_t>(DataType::kInt64, {}, {int64_t{1} << 40});
  int vb = m.AddConst<uint8_t>(DataType::kBool, {}, {1});
  int o16 = m.AddOutput(DataType::kInt16);
  int o32 = m.AddOutput(DataType::kInt32);
  int o64 = m.AddOutput(DataType::kInt64);
  int ob = m.AddOutput(DataType::kBool);
  m.AddOp(BuiltinOp::kFill, {dims, v16}, {o16}, EmptyParams{});
  m.AddOp(BuiltinOp::kFill, {dims, v32}, {o32}, EmptyParams{});
  m.AddOp(BuiltinOp::kFill, {dims, v64}, {o64}, EmptyParams{});
  m.AddOp(BuiltinOp::kFill, {dims, vb}, {ob}, EmptyParams{});
  m.Build();
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int16_t>(0), ElementsAre(-300, -300));
  EXPECT_THAT(m.GetOutput<int32_t>(1), ElementsAre(123456, 123456));
  EXPECT_THAT(m.GetOutput<int64_t>(2), ElementsAre(int64_t{1} << 40, int64_t{1} << 40));
  EXPECT_THAT(m.GetOutput<uint8_t>(3), ElementsAre(1, 1));
}

TEST(Fill, Float16Uint16Uint32) {
  OpModel m;
  int dims = m.AddConst<int32_t>(DataType::kInt32, {1}, {3});
  int vh = m.AddConst<uint16_t>(DataType::kFloat16, {}, {0xC100});  // -2.5 in float16
  int vu16 = m.AddConst<uint16_t>(DataType::kUInt16, {}, {65000});
  int vu32 = m.AddConst<uint32_t>(DataType::kUInt32, {}, {4000000000u});
  int oh = m.AddOutput(DataType::kFloat16);
  int ou16 = m.AddOutput(DataType::kUInt16);
  int ou32 = m.AddOutput(DataType::kUInt32);
  m.AddOp(BuiltinOp::kFill, {dims, vh}, {oh}, EmptyParams{});
  m.AddOp(BuiltinOp::kFill, {dims, vu16}, {ou16}, EmptyParams{});
  m.AddOp(BuiltinOp::kFill, {dims, vu32}, {ou32}, EmptyParams{});
  m.Build();
  m.Invoke();
  EXPECT_THAT(m.GetOutput<uint16_t>(0), ElementsAre(0xC100, 0xC100, 0xC100));
  EXPECT_THAT(m.GetOutput<uint16_t>(1), ElementsAre(65000, 65000, 65000));
  EXPECT_THAT(m.GetOutput<uint32_t>(2), ElementsAre(4000000000u, 4000000000u, 4000000000u));
}

TEST(Fill, BadInputs) {
  {
    OpModel m;
    int dims = m.AddConst<int32_t>(DataType::kInt32, {2}, {2, -1});
    int value = m.AddInput(DataType::kFloat32, {});
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kFill, {dims, value}, {out}, EmptyParams{});
    EXPECT_THAT(BuildError(m), HasSubstr("node 0 (FILL): dims[1] is -1"));
  }
  {
    OpModel m;
    int dims = m.AddConst<int32_t>(DataType::kInt32, {1}, {2});
    int value = m.AddInput(DataType::kFloat32, {1});
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kFill, {dims, value}, {out}, EmptyParams{});
    EXPECT_THAT(BuildError(m), HasSubstr("must be a scalar"));
  }
}

// ---------------------------------------------------------------- RANGE

TEST(Range, Int32Int64Float) {
  OpModel m;
  int s32 = m.AddConst<int32_t>(DataType::kInt32, {}, {10});
  int l32 = m.AddConst<int32_t>(DataType::kInt32, {}, {1});
  int d32 = m.AddConst<int32_t>(DataType::kInt32, {}, {-3});
  int s64 = m.AddConst<int64_t>(DataType::kInt64, {}, {0});
  int l64 = m.AddConst<int64_t>(DataType::kInt64, {}, {5});
  int d64 = m.AddConst<int64_t>(DataType::kInt64, {}, {2});
  int sf = m.AddConst<float>(DataType::kFloat32, {}, {0.5f});
  int lf = m.AddConst<float>(DataType::kFloat32, {}, {2.0f});
  int df = m.AddConst<float>(DataType::kFloat32, {}, {0.4f});
  int o32 = m.AddOutput(DataType::kInt32);
  int o64 = m.AddOutput(DataType::kInt64);
  int of = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kRange, {s32, l32, d32}, {o32}, EmptyParams{});
  m.AddOp(BuiltinOp::kRange, {s64, l64, d64}, {o64}, EmptyParams{});
  m.AddOp(BuiltinOp::kRange, {sf, lf, df}, {of}, EmptyParams{});
  m.Build();
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(10, 7, 4));
  EXPECT_THAT(m.GetOutput<int64_t>(1), ElementsAre(0, 2, 4));
  // ceil(1.5 / 0.4) = 4 values, accumulated in float.
  float v = 0.5f;
  std::vector<float> expected;
  for (int i = 0; i < 4; ++i, v += 0.4f) expected.push_back(v);
  EXPECT_EQ(m.GetOutput<float>(2), expected);
}

TEST(Range, QuantizedInt8) {
  // start 1.0, limit 3.0, delta 0.5 at scale 0.25, zero point -4: values
  // 1.0, 1.5, 2.0, 2.5 -> q = v / 0.25 - 4.
  OpModel m;
  int s = m.AddConst<int8_t>(DataType::kInt8, {}, {0}, Q(0.25f, -4));
  int l = m.AddConst<int8_t>(DataType::kInt8, {}, {8}, Q(0.25f, -4));
  int d = m.AddConst<int8_t>(DataType::kInt8, {}, {-2}, Q(0.25f, -4));
  int o = m.AddOutput(DataType::kInt8, Q(0.25f, -4));
  m.AddOp(BuiltinOp::kRange, {s, l, d}, {o}, EmptyParams{});
  m.Build();
  m.Invoke();
  // TFLite's count for integer types: (|3 - 1| + 0.5 - 1) / 0.5 = 3 (truncated).
  EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(0, 2, 4));
}

TEST(Range, BadInputs) {
  {
    OpModel m;
    int s = m.AddConst<int32_t>(DataType::kInt32, {}, {0});
    int l = m.AddConst<int32_t>(DataType::kInt32, {}, {5});
    int d = m.AddConst<int32_t>(DataType::kInt32, {}, {-1});
    int o = m.AddOutput(DataType::kInt32);
    m.AddOp(BuiltinOp::kRange, {s, l, d}, {o}, EmptyParams{});
    EXPECT_THAT(BuildError(m), HasSubstr("node 0 (RANGE): delta has the wrong sign"));
  }
  {
    OpModel m;
    int s = m.AddConst<int32_t>(DataType::kInt32, {}, {0});
    int l = m.AddConst<int32_t>(DataType::kInt32, {}, {5});
    int d = m.AddConst<int32_t>(DataType::kInt32, {}, {0});
    int o = m.AddOutput(DataType::kInt32);
    m.AddOp(BuiltinOp::kRange, {s, l, d}, {o}, EmptyParams{});
    EXPECT_THAT(BuildError(m), HasSubstr("delta must not be 0"));
  }
}

// ---------------------------------------------------------------- BROADCAST_ARGS

TEST(BroadcastArgs, Int32AndInt64) {
  OpModel m;
  int a = m.AddInput(DataType::kInt32, {3});
  int b = m.AddInput(DataType::kInt32, {2});
  int o = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kBroadcastArgs, {a, b}, {o});
  m.Build();
  m.SetInput<int32_t>(0, {2, 1, 4});
  m.SetInput<int32_t>(1, {3, 1});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(2, 3, 4));
  m.SetInput<int32_t>(0, {2, 2, 4});
  EXPECT_THAT(m.TryInvoke().message(), HasSubstr("not broadcast-compatible"));

  OpModel m64;
  int c = m64.AddConst<int64_t>(DataType::kInt64, {1}, {5});
  int d = m64.AddInput(DataType::kInt64, {2});
  int o64 = m64.AddOutput(DataType::kInt64);
  m64.AddOp(BuiltinOp::kBroadcastArgs, {c, d}, {o64});
  m64.Build();
  m64.SetInput<int64_t>(0, {7, 1});
  m64.Invoke();
  EXPECT_THAT(m64.GetOutput<int64_t>(0), ElementsAre(7, 5));
}

// ---------------------------------------------------------------- BROADCAST_TO

TEST(BroadcastTo, FloatAndBool) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {3, 1});
  int shape = m.AddConst<int32_t>(DataType::kInt32, {3}, {2, 3, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kBroadcastTo, {in, shape}, {out}, EmptyParams{}, 2);
  m.Build();
  m.SetInput<float>(0, {1, 2, 3});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 3, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));

  OpModel mb;
  int inb = mb.AddInput(DataType::kBool, {2});
  int shapeb = mb.AddConst<int64_t>(DataType::kInt64, {2}, {2, 2});
  int outb = mb.AddOutput(DataType::kBool);
  mb.AddOp(BuiltinOp::kBroadcastTo, {inb, shapeb}, {outb}, EmptyParams{}, 3);
  mb.Build();
  mb.SetInput<uint8_t>(0, {1, 0});
  mb.Invoke();
  EXPECT_THAT(mb.GetOutput<uint8_t>(0), ElementsAre(1, 0, 1, 0));
}

TEST(BroadcastTo, Incompatible) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {3});
  int shape = m.AddConst<int32_t>(DataType::kInt32, {2}, {2, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kBroadcastTo, {in, shape}, {out}, EmptyParams{}, 2);
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (BROADCAST_TO): input"));
}

// ---------------------------------------------------------------- TILE

template <class T>
std::vector<T> TileByLoops(const std::vector<T>& in, int rows, int cols, int mr, int mc) {
  std::vector<T> out;
  for (int r = 0; r < rows * mr; ++r)
    for (int c = 0; c < cols * mc; ++c) out.push_back(in[(r % rows) * cols + (c % cols)]);
  return out;
}

TEST(Tile, TypesAndMultipleTypes) {
  const std::vector<int32_t> values = {1, -2, 3, 4, -5, 6};
  for (DataType type : {DataType::kFloat32, DataType::kInt8, DataType::kUInt8, DataType::kInt16,
                        DataType::kInt32, DataType::kInt64, DataType::kBool}) {
    for (bool wide : {false, true}) {
      OpModel m;
      int in = m.AddInput(type, {2, 3});
      int mult = wide ? m.AddConst<int64_t>(DataType::kInt64, {2}, {2, 3})
                      : m.AddConst<int32_t>(DataType::kInt32, {2}, {2, 3});
      int out = m.AddOutput(type);
      m.AddOp(BuiltinOp::kTile, {in, mult}, {out}, EmptyParams{}, 2);
      m.Build();
      EXPECT_THAT(m.GetOutputShape(0), ElementsAre(4, 9));
      switch (type) {
        case DataType::kFloat32: {
          std::vector<float> v(values.begin(), values.end());
          m.SetInput<float>(0, v);
          m.Invoke();
          EXPECT_EQ(m.GetOutput<float>(0), TileByLoops(v, 2, 3, 2, 3));
          break;
        }
        case DataType::kInt16: {
          std::vector<int16_t> v(values.begin(), values.end());
          m.SetInput<int16_t>(0, v);
          m.Invoke();
          EXPECT_EQ(m.GetOutput<int16_t>(0), TileByLoops(v, 2, 3, 2, 3));
          break;
        }
        case DataType::kInt32: {
          m.SetInput<int32_t>(0, values);
          m.Invoke();
          EXPECT_EQ(m.GetOutput<int32_t>(0), TileByLoops(values, 2, 3, 2, 3));
          break;
        }
        case DataType::kInt64: {
          std::vector<int64_t> v(values.begin(), values.end());
          m.SetInput<int64_t>(0, v);
          m.Invoke();
          EXPECT_EQ(m.GetOutput<int64_t>(0), TileByLoops(v, 2, 3, 2, 3));
          break;
        }
        default: {  // 1-byte types
          std::vector<uint8_t> v = {1, 0, 200, 3, 0, 1};
          m.SetInput<uint8_t>(0, v);
          m.Invoke();
          EXPECT_EQ(m.GetOutput<uint8_t>(0), TileByLoops(v, 2, 3, 2, 3));
          break;
        }
      }
    }
  }
}

TEST(Tile, ZeroMultipleAndBadShape) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2});
  int mult = m.AddConst<int32_t>(DataType::kInt32, {1}, {0});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kTile, {in, mult}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<float>(0, {1, 2});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(0));

  OpModel bad;
  int in2 = bad.AddInput(DataType::kFloat32, {2, 2});
  int mult2 = bad.AddConst<int32_t>(DataType::kInt32, {1}, {2});
  int out2 = bad.AddOutput(DataType::kFloat32);
  bad.AddOp(BuiltinOp::kTile, {in2, mult2}, {out2}, EmptyParams{});
  EXPECT_THAT(BuildError(bad), HasSubstr("node 0 (TILE): multiples"));
}

// ---------------------------------------------------------------- SLICE

TEST(Slice, Int32BeginMinusOneSize) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {3, 4});
  int begin = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 1});
  int size = m.AddConst<int32_t>(DataType::kInt32, {2}, {-1, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSlice, {in, begin, size}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<float>(0, Iota<float>(12));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(5, 6, 9, 10));
}

TEST(Slice, Int64BeginInt8And4D) {
  OpModel m;
  int in = m.AddInput(DataType::kInt8, {2, 2, 3, 2}, Q(1.0f, 0));
  int begin = m.AddConst<int64_t>(DataType::kInt64, {4}, {1, 0, 1, 1});
  int size = m.AddConst<int64_t>(DataType::kInt64, {4}, {1, 2, 2, -1});
  int out = m.AddOutput(DataType::kInt8, Q(1.0f, 0));
  m.AddOp(BuiltinOp::kSlice, {in, begin, size}, {out}, EmptyParams{}, 2);
  m.Build();
  m.SetInput<int8_t>(0, Iota<int8_t>(24, -12));
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 2, 2, 1));
  std::vector<int8_t> expected;
  for (int b = 1; b < 2; ++b)
    for (int h = 0; h < 2; ++h)
      for (int w = 1; w < 3; ++w)
        for (int c = 1; c < 2; ++c) expected.push_back(static_cast<int8_t>(((b * 2 + h) * 3 + w) * 2 + c - 12));
  EXPECT_EQ(m.GetOutput<int8_t>(0), expected);
}

TEST(Slice, BoolInt16Int64) {
  OpModel m;
  int a = m.AddInput(DataType::kBool, {4});
  int b = m.AddInput(DataType::kInt16, {4});
  int c = m.AddInput(DataType::kInt64, {4});
  int begin = m.AddConst<int32_t>(DataType::kInt32, {1}, {2});
  int size = m.AddConst<int32_t>(DataType::kInt32, {1}, {2});
  int oa = m.AddOutput(DataType::kBool);
  int ob = m.AddOutput(DataType::kInt16);
  int oc = m.AddOutput(DataType::kInt64);
  m.AddOp(BuiltinOp::kSlice, {a, begin, size}, {oa}, EmptyParams{});
  m.AddOp(BuiltinOp::kSlice, {b, begin, size}, {ob}, EmptyParams{});
  m.AddOp(BuiltinOp::kSlice, {c, begin, size}, {oc}, EmptyParams{});
  m.Build();
  m.SetInput<uint8_t>(0, {1, 0, 0, 1});
  m.SetInput<int16_t>(1, {-1, -2, -3, -4});
  m.SetInput<int64_t>(2, {10, 20, 30, 40});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<uint8_t>(0), ElementsAre(0, 1));
  EXPECT_THAT(m.GetOutput<int16_t>(1), ElementsAre(-3, -4));
  EXPECT_THAT(m.GetOutput<int64_t>(2), ElementsAre(30, 40));
}

// Unsigned 16- and 32-bit tensors, moved as any other element of their size.
TEST(Slice, BroadcastToAndMirrorPadUint16Uint32) {
  for (DataType type : {DataType::kUInt16, DataType::kUInt32}) {
    SCOPED_TRACE(DataTypeName(type));
    const bool wide = type == DataType::kUInt32;
    auto set = [&](OpModel& m, std::vector<uint32_t> v) {
      if (wide) m.SetInput<uint32_t>(0, v);
      else m.SetInput<uint16_t>(0, std::vector<uint16_t>(v.begin(), v.end()));
    };
    auto get = [&](OpModel& m) {
      if (wide) return m.GetOutput<uint32_t>(0);
      const std::vector<uint16_t> v = m.GetOutput<uint16_t>(0);
      return std::vector<uint32_t>(v.begin(), v.end());
    };
    const uint32_t big = wide ? 4000000000u : 65000u;
    {
      OpModel m;
      int in = m.AddInput(type, {4});
      int begin = m.AddConst<int32_t>(DataType::kInt32, {1}, {1});
      int size = m.AddConst<int32_t>(DataType::kInt32, {1}, {2});
      int out = m.AddOutput(type);
      m.AddOp(BuiltinOp::kSlice, {in, begin, size}, {out}, EmptyParams{});
      m.Build();
      set(m, {1, big, 3, 4});
      m.Invoke();
      EXPECT_THAT(get(m), ElementsAre(big, 3));
    }
    {
      OpModel m;
      int in = m.AddInput(type, {2});
      int shape = m.AddConst<int32_t>(DataType::kInt32, {2}, {2, 2});
      int out = m.AddOutput(type);
      m.AddOp(BuiltinOp::kBroadcastTo, {in, shape}, {out}, EmptyParams{});
      m.Build();
      set(m, {big, 7});
      m.Invoke();
      EXPECT_THAT(get(m), ElementsAre(big, 7, big, 7));
    }
    {
      OpModel m;
      int in = m.AddInput(type, {3});
      int pads = m.AddConst<int32_t>(DataType::kInt32, {1, 2}, {1, 2});
      int out = m.AddOutput(type);
      m.AddOp(BuiltinOp::kMirrorPad, {in, pads}, {out}, MirrorPadParams{MirrorPadMode::kReflect});
      m.Build();
      set(m, {1, big, 3});
      m.Invoke();
      EXPECT_THAT(get(m), ElementsAre(big, 1, big, 3, big, 1));
    }
  }
}

TEST(Slice, OutOfRange) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {3});
  int begin = m.AddConst<int32_t>(DataType::kInt32, {1}, {2});
  int size = m.AddConst<int32_t>(DataType::kInt32, {1}, {2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSlice, {in, begin, size}, {out}, EmptyParams{});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (SLICE): dim 0: begin 2 and size 2"));
}

// ---------------------------------------------------------------- REVERSE_V2

TEST(ReverseV2, SingleAndContiguousAxes) {
  struct Case {
    std::vector<int32_t> axes;
    std::vector<float> expected;
  };
  // Input [2, 3]: 0 1 2 / 3 4 5.
  for (const Case& c : {Case{{0}, {3, 4, 5, 0, 1, 2}}, Case{{1}, {2, 1, 0, 5, 4, 3}},
                        Case{{-1}, {2, 1, 0, 5, 4, 3}}, Case{{1, 0}, {5, 4, 3, 2, 1, 0}}}) {
    OpModel m;
    int in = m.AddInput(DataType::kFloat32, {2, 3});
    int axis = m.AddConst<int32_t>(DataType::kInt32, {static_cast<int32_t>(c.axes.size())}, c.axes);
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kReverseV2, {in, axis}, {out}, EmptyParams{});
    m.Build();
    m.SetInput<float>(0, Iota<float>(6));
    m.Invoke();
    EXPECT_EQ(m.GetOutput<float>(0), c.expected);
  }
}

TEST(ReverseV2, Int8Int16Int64Bool) {
  OpModel m;
  int a = m.AddInput(DataType::kUInt8, {3});
  int b = m.AddInput(DataType::kInt16, {3});
  int c = m.AddInput(DataType::kInt64, {3});
  int d = m.AddInput(DataType::kBool, {3});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {1}, {0});
  int oa = m.AddOutput(DataType::kUInt8);
  int ob = m.AddOutput(DataType::kInt16);
  int oc = m.AddOutput(DataType::kInt64);
  int od = m.AddOutput(DataType::kBool);
  m.AddOp(BuiltinOp::kReverseV2, {a, axis}, {oa}, EmptyParams{}, 2);
  m.AddOp(BuiltinOp::kReverseV2, {b, axis}, {ob}, EmptyParams{}, 2);
  m.AddOp(BuiltinOp::kReverseV2, {c, axis}, {oc}, EmptyParams{}, 2);
  m.AddOp(BuiltinOp::kReverseV2, {d, axis}, {od}, EmptyParams{}, 2);
  m.Build();
  m.SetInput<uint8_t>(0, {1, 2, 255});
  m.SetInput<int16_t>(1, {-1, 0, 300});
  m.SetInput<int64_t>(2, {5, 6, 7});
  m.SetInput<uint8_t>(3, {1, 1, 0});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<uint8_t>(0), ElementsAre(255, 2, 1));
  EXPECT_THAT(m.GetOutput<int16_t>(1), ElementsAre(300, 0, -1));
  EXPECT_THAT(m.GetOutput<int64_t>(2), ElementsAre(7, 6, 5));
  EXPECT_THAT(m.GetOutput<uint8_t>(3), ElementsAre(0, 1, 1));
}

TEST(ReverseV2, NonContiguousAxesRejected) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 2, 2});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {2}, {0, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kReverseV2, {in, axis}, {out}, EmptyParams{});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (REVERSE_V2): axes must be contiguous"));
}

// ---------------------------------------------------------------- MIRROR_PAD

TEST(MirrorPad, Reflect2D) {
  // [[1,2,3],[4,5,6]] padded (1,1) rows, (2,2) cols, REFLECT.
  OpModel m;
  int in = m.AddInput(DataType::kInt32, {2, 3});
  int pads = m.AddConst<int32_t>(DataType::kInt32, {2, 2}, {1, 1, 2, 2});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kMirrorPad, {in, pads}, {out}, MirrorPadParams{MirrorPadMode::kReflect});
  m.Build();
  m.SetInput<int32_t>(0, {1, 2, 3, 4, 5, 6});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(4, 7));
  EXPECT_THAT(m.GetOutput<int32_t>(0),
              ElementsAreArray({6, 5, 4, 5, 6, 5, 4,  //
                                3, 2, 1, 2, 3, 2, 1,  //
                                6, 5, 4, 5, 6, 5, 4,  //
                                3, 2, 1, 2, 3, 2, 1}));
}

TEST(MirrorPad, SymmetricInt64PaddingsFloatAndInt8) {
  {
    OpModel m;
    int in = m.AddInput(DataType::kFloat32, {3});
    int pads = m.AddConst<int64_t>(DataType::kInt64, {1, 2}, {3, 2});
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kMirrorPad, {in, pads}, {out}, MirrorPadParams{MirrorPadMode::kSymmetric});
    m.Build();
    m.SetInput<float>(0, {1, 2, 3});
    m.Invoke();
    EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(3, 2, 1, 1, 2, 3, 3, 2));
  }
  {
    OpModel m;
    int in = m.AddInput(DataType::kInt8, {1, 2}, Q(0.5f, -1));
    int pads = m.AddConst<int32_t>(DataType::kInt32, {2, 2}, {0, 0, 1, 2});
    int out = m.AddOutput(DataType::kInt8, Q(0.5f, -1));
    m.AddOp(BuiltinOp::kMirrorPad, {in, pads}, {out}, MirrorPadParams{MirrorPadMode::kSymmetric}, 2);
    m.Build();
    m.SetInput<int8_t>(0, {-100, 100});
    m.Invoke();
    EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(-100, -100, 100, 100, -100));
  }
}

TEST(MirrorPad, BadInputs) {
  {
    OpModel m;
    int in = m.AddInput(DataType::kFloat32, {3});
    int pads = m.AddConst<int32_t>(DataType::kInt32, {1, 2}, {3, 0});
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kMirrorPad, {in, pads}, {out}, MirrorPadParams{MirrorPadMode::kReflect});
    EXPECT_THAT(BuildError(m), HasSubstr("node 0 (MIRROR_PAD): paddings of dim 0 (3, 0)"));
  }
  {
    OpModel m;
    int in = m.AddInput(DataType::kUInt8, {3}, Q(1.0f, 3));
    int pads = m.AddConst<int32_t>(DataType::kInt32, {1, 2}, {1, 0});
    int out = m.AddOutput(DataType::kUInt8, Q(2.0f, 3));
    m.AddOp(BuiltinOp::kMirrorPad, {in, pads}, {out}, MirrorPadParams{MirrorPadMode::kReflect});
    EXPECT_THAT(BuildError(m), HasSubstr("must have the quantization"));
  }
}

// ---------------------------------------------------- DEPTH_TO_SPACE, SPACE_TO_DEPTH

// out[b, h, w, c] of DEPTH_TO_SPACE, by TFLite's definition.
template <class T>
std::vector<T> DepthToSpaceByLoops(const std::vector<T>& in, int B, int H, int W, int C, int bs) {
  const int oc = C / (bs * bs);
  std::vector<T> out;
  for (int b = 0; b < B; ++b)
    for (int oh = 0; oh < H * bs; ++oh)
      for (int ow = 0; ow < W * bs; ++ow)
        for (int c = 0; c < oc; ++c) {
          const int ic = ((oh % bs) * bs + ow % bs) * oc + c;
          out.push_back(in[((b * H + oh / bs) * W + ow / bs) * C + ic]);
        }
  return out;
}

TEST(DepthToSpace, FloatAndUint8) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 2, 3, 8});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kDepthToSpace, {in}, {out}, BlockSizeParams{2});
  m.Build();
  const std::vector<float> x = Iota<float>(2 * 2 * 3 * 8);
  m.SetInput<float>(0, x);
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 4, 6, 2));
  EXPECT_EQ(m.GetOutput<float>(0), DepthToSpaceByLoops(x, 2, 2, 3, 8, 2));

  OpModel q;
  int qin = q.AddInput(DataType::kUInt8, {1, 1, 1, 4}, Q(1.0f, 0));
  int qout = q.AddOutput(DataType::kUInt8, Q(1.0f, 0));
  q.AddOp(BuiltinOp::kDepthToSpace, {qin}, {qout}, BlockSizeParams{2});
  q.Build();
  q.SetInput<uint8_t>(0, {1, 2, 3, 4});
  q.Invoke();
  EXPECT_THAT(q.GetOutputShape(0), ElementsAre(1, 2, 2, 1));
  EXPECT_THAT(q.GetOutput<uint8_t>(0), ElementsAre(1, 2, 3, 4));
}

TEST(SpaceToDepth, RoundTripsDepthToSpaceInt8Int32Int64) {
  for (DataType type : {DataType::kInt8, DataType::kInt32, DataType::kInt64}) {
    OpModel m;
    int in = m.AddInput(type, {1, 4, 6, 2});
    int mid = m.AddTensor(type);
    int out = m.AddOutput(type);
    m.AddOp(BuiltinOp::kSpaceToDepth, {in}, {mid}, BlockSizeParams{2});
    m.AddOp(BuiltinOp::kDepthToSpace, {mid}, {out}, BlockSizeParams{2});
    m.Build();
    if (type == DataType::kInt8) {
      m.SetInput<int8_t>(0, Iota<int8_t>(48, -24));
      m.Invoke();
      EXPECT_EQ(m.GetOutput<int8_t>(0), Iota<int8_t>(48, -24));
    } else if (type == DataType::kInt32) {
      m.SetInput<int32_t>(0, Iota<int32_t>(48));
      m.Invoke();
      EXPECT_EQ(m.GetOutput<int32_t>(0), Iota<int32_t>(48));
    } else {
      m.SetInput<int64_t>(0, Iota<int64_t>(48));
      m.Invoke();
      EXPECT_EQ(m.GetOutput<int64_t>(0), Iota<int64_t>(48));
    }
  }
}

TEST(SpaceToDepth, Values) {
  // [1, 2, 2, 1] block 2 -> [1, 1, 1, 4] in (h, w) order.
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 4, 2, 1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSpaceToDepth, {in}, {out}, BlockSizeParams{2});
  m.Build();
  m.SetInput<float>(0, {1, 2, 3, 4, 5, 6, 7, 8});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 2, 1, 4));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
}

TEST(SpaceToDepth, BadInputs) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 3, 2, 1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSpaceToDepth, {in}, {out}, BlockSizeParams{2});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (SPACE_TO_DEPTH): input height 3"));

  OpModel big;
  int bin = big.AddInput(DataType::kFloat32, {1, 0, 0, 2});
  int bout = big.AddOutput(DataType::kFloat32);
  big.AddOp(BuiltinOp::kSpaceToDepth, {bin}, {bout}, BlockSizeParams{1 << 30});
  EXPECT_THAT(BuildError(big), HasSubstr("block_size 1073741824 must be in [1, 46340]"));

  OpModel d;
  int din = d.AddInput(DataType::kFloat32, {1, 1, 1, 6});
  int dout = d.AddOutput(DataType::kFloat32);
  d.AddOp(BuiltinOp::kDepthToSpace, {din}, {dout}, BlockSizeParams{2});
  EXPECT_THAT(BuildError(d), HasSubstr("node 0 (DEPTH_TO_SPACE): input depth 6"));
}

// ------------------------------------------------ SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND

TEST(SpaceToBatchNd, PaddedFloat) {
  // [1, 3, 2, 1] with paddings ((1, 0), (0, 0)) and block (2, 2) -> [4, 2, 1, 1].
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 3, 2, 1});
  int block = m.AddConst<int32_t>(DataType::kInt32, {2}, {2, 2});
  int pads = m.AddConst<int32_t>(DataType::kInt32, {2, 2}, {1, 0, 0, 0});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSpaceToBatchNd, {in, block, pads}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<float>(0, {1, 2, 3, 4, 5, 6});
  m.Invoke();
  // Padded rows: [0 0] [1 2] [3 4] [5 6]; batch (sh, sw) takes rows sh, sh+2, column sw.
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(4, 2, 1, 1));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(0, 3, 0, 4, 1, 5, 2, 6));
}

// Types moved by their element size; the padding is all-zero bits (+0.0 in float16, false).
TEST(SpaceToBatchNd, Float16Uint16Uint32Bool) {
  for (DataType type : {DataType::kFloat16, DataType::kUInt16, DataType::kUInt32, DataType::kBool}) {
    SCOPED_TRACE(DataTypeName(type));
    // float16 bit patterns of 1..6; the others the values themselves (bool: 0/1).
    std::vector<uint32_t> v = {0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600};
    if (type == DataType::kUInt16) v = {1, 2, 65000, 4, 5, 6};
    if (type == DataType::kUInt32) v = {1, 4000000000u, 3, 4, 5, 6};
    if (type == DataType::kBool) v = {1, 0, 1, 1, 0, 1};
    OpModel m;
    int in = m.AddInput(type, {1, 3, 2, 1});
    int block = m.AddConst<int32_t>(DataType::kInt32, {2}, {2, 2});
    int pads = m.AddConst<int32_t>(DataType::kInt32, {2, 2}, {1, 0, 0, 0});
    int out = m.AddOutput(type);
    m.AddOp(BuiltinOp::kSpaceToBatchNd, {in, block, pads}, {out}, EmptyParams{});
    m.Build();
    std::vector<uint32_t> got;
    if (type == DataType::kUInt32) {
      m.SetInput<uint32_t>(0, v);
      m.Invoke();
      got = m.GetOutput<uint32_t>(0);
    } else if (type == DataType::kBool) {
      m.SetInput<uint8_t>(0, std::vector<uint8_t>(v.begin(), v.end()));
      m.Invoke();
      const std::vector<uint8_t> o = m.GetOutput<uint8_t>(0);
      got.assign(o.begin(), o.end());
    } else {
      m.SetInput<uint16_t>(0, std::vector<uint16_t>(v.begin(), v.end()));
      m.Invoke();
      const std::vector<uint16_t> o = m.GetOutput<uint16_t>(0);
      got.assign(o.begin(), o.end());
    }
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(4, 2, 1, 1));
    EXPECT_THAT(got, ElementsAre(0, v[2], 0, v[3], v[0], v[4], v[1], v[5]));
  }
}

TEST(SpaceToBatchNd, Uint8PadsWithZeroPointAnd3D) {
  OpModel m;
  int in = m.AddInput(DataType::kUInt8, {1, 2, 1}, Q(0.5f, 128));
  int block = m.AddConst<int32_t>(DataType::kInt32, {1}, {2});
  int pads = m.AddConst<int32_t>(DataType::kInt32, {1, 2}, {1, 1});
  int out = m.AddOutput(DataType::kUInt8, Q(0.5f, 128));
  m.AddOp(BuiltinOp::kSpaceToBatchNd, {in, block, pads}, {out}, EmptyParams{}, 2);
  m.Build();
  m.SetInput<uint8_t>(0, {7, 9});
  m.Invoke();
  // Padded: [zp 7 9 zp]; batch 0 takes positions 0, 2; batch 1 takes 1, 3.
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2, 1));
  EXPECT_THAT(m.GetOutput<uint8_t>(0), ElementsAre(128, 9, 7, 128));
}

TEST(BatchToSpaceNd, InvertsSpaceToBatchWithCropsInt16Int64) {
  {
    OpModel m;
    int in = m.AddInput(DataType::kInt16, {4, 2, 1, 1}, Q(1.0f, 0));
    int block = m.AddConst<int32_t>(DataType::kInt32, {2}, {2, 2});
    int crops = m.AddConst<int32_t>(DataType::kInt32, {2, 2}, {1, 0, 0, 0});
    int out = m.AddOutput(DataType::kInt16, Q(1.0f, 0));
    m.AddOp(BuiltinOp::kBatchToSpaceNd, {in, block, crops}, {out}, EmptyParams{}, 3);
    m.Build();
    m.SetInput<int16_t>(0, {0, 3, 0, 4, 1, 5, 2, 6});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 3, 2, 1));
    EXPECT_THAT(m.GetOutput<int16_t>(0), ElementsAre(1, 2, 3, 4, 5, 6));
  }
  {
    OpModel m;
    int in = m.AddInput(DataType::kInt64, {1, 4, 4, 2});
    int block = m.AddConst<int32_t>(DataType::kInt32, {2}, {2, 2});
    int pads = m.AddConst<int32_t>(DataType::kInt32, {2, 2}, {0, 0, 0, 0});
    int mid = m.AddTensor(DataType::kInt64);
    int out = m.AddOutput(DataType::kInt64);
    m.AddOp(BuiltinOp::kSpaceToBatchNd, {in, block, pads}, {mid}, EmptyParams{});
    m.AddOp(BuiltinOp::kBatchToSpaceNd, {mid, block, pads}, {out}, EmptyParams{});
    m.Build();
    m.SetInput<int64_t>(0, Iota<int64_t>(32));
    m.Invoke();
    EXPECT_EQ(m.GetOutput<int64_t>(0), Iota<int64_t>(32));
  }
}

TEST(SpaceToBatchNd, BadInputs) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 3, 2, 1});
  int block = m.AddConst<int32_t>(DataType::kInt32, {2}, {2, 2});
  int pads = m.AddConst<int32_t>(DataType::kInt32, {2, 2}, {0, 0, 0, 0});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSpaceToBatchNd, {in, block, pads}, {out}, EmptyParams{});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (SPACE_TO_BATCH_ND): padded spatial dim 0 (3)"));

  OpModel b;
  int bin = b.AddInput(DataType::kFloat32, {3, 1, 1, 1});
  int bblock = b.AddConst<int32_t>(DataType::kInt32, {2}, {2, 1});
  int bcrops = b.AddConst<int32_t>(DataType::kInt32, {2, 2}, {0, 0, 0, 0});
  int bout = b.AddOutput(DataType::kFloat32);
  b.AddOp(BuiltinOp::kBatchToSpaceNd, {bin, bblock, bcrops}, {bout}, EmptyParams{});
  EXPECT_THAT(BuildError(b), HasSubstr("node 0 (BATCH_TO_SPACE_ND): input batch 3"));
}

// ---------------------------------------------------------------- ONE_HOT

TEST(OneHot, LastAxisFloat) {
  OpModel m;
  int idx = m.AddInput(DataType::kInt32, {3});
  int depth = m.AddConst<int32_t>(DataType::kInt32, {}, {3});
  int on = m.AddConst<float>(DataType::kFloat32, {}, {5.0f});
  int off = m.AddConst<float>(DataType::kFloat32, {}, {-1.0f});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kOneHot, {idx, depth, on, off}, {out}, OneHotParams{-1});
  m.Build();
  m.SetInput<int32_t>(0, {0, 2, 7});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3, 3));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(5, -1, -1, -1, -1, 5, -1, -1, -1));
}

TEST(OneHot, Axis0Int64IndicesAndTypes) {
  // indices [2, 2] = [[0, 1], [1, -1]], depth 2, axis 0 -> [2, 2, 2].
  for (DataType type : {DataType::kInt8, DataType::kUInt8, DataType::kInt16, DataType::kInt32,
                        DataType::kInt64, DataType::kBool}) {
    OpModel m;
    int idx = m.AddInput(DataType::kInt64, {2, 2});
    int depth = m.AddConst<int32_t>(DataType::kInt32, {}, {2});
    const size_t size = DataTypeSize(type);
    std::vector<uint8_t> one(size, 0), zero(size, 0);
    one[0] = 1;
    int on = m.AddConstBytes(type, {}, one);
    int off = m.AddConstBytes(type, {}, zero);
    int out = m.AddOutput(type);
    m.AddOp(BuiltinOp::kOneHot, {idx, depth, on, off}, {out}, OneHotParams{0});
    m.Build();
    m.SetInput<int64_t>(0, {0, 1, 1, -1});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2, 2));
    // out[d, i, j] = indices[i, j] == d.
    const std::vector<int> expected = {1, 0, 0, 0, 0, 1, 1, 0};
    const std::vector<uint8_t> bytes = m.GetOutput<uint8_t>(0);
    for (size_t e = 0; e < expected.size(); ++e)
      EXPECT_EQ(bytes[e * size], expected[e]) << DataTypeName(type) << " element " << e;
  }
}

TEST(OneHot, BadAxis) {
  OpModel m;
  int idx = m.AddInput(DataType::kInt32, {3});
  int depth = m.AddConst<int32_t>(DataType::kInt32, {}, {3});
  int on = m.AddConst<float>(DataType::kFloat32, {}, {1.0f});
  int off = m.AddConst<float>(DataType::kFloat32, {}, {0.0f});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kOneHot, {idx, depth, on, off}, {out}, OneHotParams{2});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (ONE_HOT): axis 2 is out of range"));
}

// ---------------------------------------------------------------- options round trip

// The options tables these ops (and index_ops) carry survive write -> read.
TEST(OpOptions, RoundTripThroughWriterAndReader) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kShape, {in}, {out}, ShapeParams{DataType::kInt64});
  m.AddOp(BuiltinOp::kMirrorPad, {in}, {out}, MirrorPadParams{MirrorPadMode::kSymmetric});
  m.AddOp(BuiltinOp::kDepthToSpace, {in}, {out}, BlockSizeParams{3});
  m.AddOp(BuiltinOp::kSpaceToDepth, {in}, {out}, BlockSizeParams{4});
  m.AddOp(BuiltinOp::kOneHot, {in}, {out}, OneHotParams{-1});
  m.AddOp(BuiltinOp::kCumsum, {in}, {out}, CumsumParams{true, false});
  m.AddOp(BuiltinOp::kReverseSequence, {in}, {out}, ReverseSequenceParams{2, 1});
  m.AddOp(BuiltinOp::kSparseToDense, {in}, {out}, SparseToDenseParams{true});
  m.AddOp(BuiltinOp::kBucketize, {in}, {out}, BucketizeParams{{-1.5f, 0.0f, 2.0f}});
  m.AddOp(BuiltinOp::kUnique, {in}, {out}, UniqueParams{DataType::kInt64});
  const std::vector<uint8_t> bytes = WriteModel(m.model());
  const auto read = ReadModelBuffer(bytes.data(), bytes.size(), "options.tflite");
  const auto& ops = read->subgraphs[0].operators;
  ASSERT_EQ(ops.size(), 10u);
  EXPECT_EQ(std::get<ShapeParams>(ops[0].params).out_type, DataType::kInt64);
  EXPECT_EQ(std::get<MirrorPadParams>(ops[1].params).mode, MirrorPadMode::kSymmetric);
  EXPECT_EQ(std::get<BlockSizeParams>(ops[2].params).block_size, 3);
  EXPECT_EQ(std::get<BlockSizeParams>(ops[3].params).block_size, 4);
  EXPECT_EQ(std::get<OneHotParams>(ops[4].params).axis, -1);
  EXPECT_TRUE(std::get<CumsumParams>(ops[5].params).exclusive);
  EXPECT_FALSE(std::get<CumsumParams>(ops[5].params).reverse);
  EXPECT_EQ(std::get<ReverseSequenceParams>(ops[6].params).seq_dim, 2);
  EXPECT_EQ(std::get<ReverseSequenceParams>(ops[6].params).batch_dim, 1);
  EXPECT_TRUE(std::get<SparseToDenseParams>(ops[7].params).validate_indices);
  EXPECT_EQ(std::get<BucketizeParams>(ops[8].params).boundaries,
            (std::vector<float>{-1.5f, 0.0f, 2.0f}));
  EXPECT_EQ(std::get<UniqueParams>(ops[9].params).idx_out_type, DataType::kInt64);
}

}  // namespace
}  // namespace delegato
