// CUMSUM, TOPK_V2, SCATTER_ND, DYNAMIC_UPDATE_SLICE, EMBEDDING_LOOKUP,
// SEGMENT_SUM, UNSORTED_SEGMENT_*, MATRIX_DIAG, MATRIX_SET_DIAG, BUCKETIZE,
// REVERSE_SEQUENCE, WHERE, SPARSE_TO_DENSE, BITCAST, NON_MAX_SUPPRESSION_V4/V5, UNIQUE.
// Expected values are worked by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OpModel;

std::string BuildError(OpModel& m) {
  Status s = m.TryBuild();
  EXPECT_FALSE(s.ok());
  return s.message();
}

// ---------------------------------------------------------------- CUMSUM

TEST(Cumsum, ExclusiveReverseBranches) {
  struct Case {
    bool exclusive, reverse;
    std::vector<float> expected;
  };
  // [2, 3] along axis 1: rows 1 2 3 / 4 5 6.
  for (const Case& c : {Case{false, false, {1, 3, 6, 4, 9, 15}},
                        Case{true, false, {0, 1, 3, 0, 4, 9}},
                        Case{false, true, {6, 5, 3, 15, 11, 6}},
                        Case{true, true, {5, 3, 0, 11, 6, 0}}}) {
    OpModel m;
    int in = m.AddInput(DataType::kFloat32, {2, 3});
    int axis = m.AddConst<int32_t>(DataType::kInt32, {}, {-1});
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kCumsum, {in, axis}, {out}, CumsumParams{c.exclusive, c.reverse});
    m.Build();
    m.SetInput<float>(0, {1, 2, 3, 4, 5, 6});
    m.Invoke();
    EXPECT_EQ(m.GetOutput<float>(0), c.expected) << c.exclusive << c.reverse;
  }
}

TEST(Cumsum, Int32Int64Axis0) {
  OpModel m;
  int a = m.AddInput(DataType::kInt32, {3, 2});
  int b = m.AddInput(DataType::kInt64, {3});
  int axis = m.AddConst<int32_t>(DataType::kInt32, {}, {0});
  int oa = m.AddOutput(DataType::kInt32);
  int ob = m.AddOutput(DataType::kInt64);
  m.AddOp(BuiltinOp::kCumsum, {a, axis}, {oa}, CumsumParams{});
  m.AddOp(BuiltinOp::kCumsum, {b, axis}, {ob}, CumsumParams{});
  m.Build();
  m.SetInput<int32_t>(0, {1, 10, 2, 20, 3, 30});
  m.SetInput<int64_t>(1, {int64_t{1} << 40, 1, 2});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(1, 10, 3, 30, 6, 60));
  EXPECT_THAT(m.GetOutput<int64_t>(1),
              ElementsAre(int64_t{1} << 40, (int64_t{1} << 40) + 1, (int64_t{1} << 40) + 3));
}

// ---------------------------------------------------------------- TOPK_V2

TEST(TopkV2, FloatTiesTakeLowerIndex) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 4});
  int k = m.AddConst<int32_t>(DataType::kInt32, {}, {2});
  int values = m.AddOutput(DataType::kFloat32);
  int indices = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kTopkV2, {in, k}, {values, indices}, EmptyParams{});
  m.Build();
  m.SetInput<float>(0, {1, 5, 3, 5, -1, -2, -3, -0.5f});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(5, 5, -0.5f, -1));
  EXPECT_THAT(m.GetOutput<int32_t>(1), ElementsAre(1, 3, 3, 0));
}

TEST(TopkV2, Int8Uint8Int64) {
  for (DataType type : {DataType::kInt8, DataType::kUInt8, DataType::kInt64}) {
    OpModel m;
    int in = m.AddInput(type, {5});
    int k = m.AddConst<int32_t>(DataType::kInt32, {}, {3});
    int values = m.AddOutput(type);
    int indices = m.AddOutput(DataType::kInt32);
    m.AddOp(BuiltinOp::kTopkV2, {in, k}, {values, indices}, EmptyParams{}, 2);
    m.Build();
    if (type == DataType::kInt64) {
      m.SetInput<int64_t>(0, {7, -9, 100, 7, 3});
      m.Invoke();
      EXPECT_THAT(m.GetOutput<int64_t>(0), ElementsAre(100, 7, 7));
    } else if (type == DataType::kInt8) {
      m.SetInput<int8_t>(0, {7, -9, 100, 7, 3});
      m.Invoke();
      EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(100, 7, 7));
    } else {
      m.SetInput<uint8_t>(0, {7, 200, 100, 7, 3});
      m.Invoke();
      EXPECT_THAT(m.GetOutput<uint8_t>(0), ElementsAre(200, 100, 7));
    }
    if (type != DataType::kUInt8)
      EXPECT_THAT(m.GetOutput<int32_t>(1), ElementsAre(2, 0, 3));
    else
      EXPECT_THAT(m.GetOutput<int32_t>(1), ElementsAre(1, 2, 0));
  }
}

TEST(TopkV2, KTooLarge) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {3});
  int k = m.AddConst<int32_t>(DataType::kInt32, {}, {4});
  int values = m.AddOutput(DataType::kFloat32);
  int indices = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kTopkV2, {in, k}, {values, indices}, EmptyParams{});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (TOPK_V2): k 4"));
}

// ---------------------------------------------------------------- SCATTER_ND

TEST(ScatterNd, SlicesAddDuplicates) {
  OpModel m;
  int idx = m.AddInput(DataType::kInt32, {3, 1});
  int upd = m.AddInput(DataType::kFloat32, {3, 2});
  int shape = m.AddConst<int32_t>(DataType::kInt32, {2}, {4, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kScatterNd, {idx, upd, shape}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<int32_t>(0, {2, 0, 2});
  m.SetInput<float>(1, {1, 2, 3, 4, 5, 6});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(4, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(3, 4, 0, 0, 6, 8, 0, 0));
  m.SetInput<int32_t>(0, {4, 0, 0});
  EXPECT_THAT(m.TryInvoke().message(), HasSubstr("out of bounds"));
}

TEST(ScatterNd, ElementsInt64IndicesInt32Values) {
  OpModel m;
  int idx = m.AddConst<int64_t>(DataType::kInt64, {2, 2}, {0, 1, 1, 0});
  int upd = m.AddInput(DataType::kInt32, {2});
  int shape = m.AddConst<int64_t>(DataType::kInt64, {2}, {2, 2});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kScatterNd, {idx, upd, shape}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<int32_t>(0, {7, -8});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(0, 7, -8, 0));
}

TEST(ScatterNd, BadUpdatesShape) {
  OpModel m;
  int idx = m.AddInput(DataType::kInt32, {3, 1});
  int upd = m.AddInput(DataType::kFloat32, {3, 3});
  int shape = m.AddConst<int32_t>(DataType::kInt32, {2}, {4, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kScatterNd, {idx, upd, shape}, {out}, EmptyParams{});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (SCATTER_ND): updates"));
}

// ---------------------------------------------------------------- DYNAMIC_UPDATE_SLICE

TEST(DynamicUpdateSlice, ClampedStartRuntimeIndices) {
  OpModel m;
  int operand = m.AddInput(DataType::kFloat32, {3, 3});
  int update = m.AddInput(DataType::kFloat32, {2, 1});
  int start = m.AddInput(DataType::kInt32, {2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kDynamicUpdateSlice, {operand, update, start}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<float>(0, {0, 0, 0, 0, 0, 0, 0, 0, 0});
  m.SetInput<float>(1, {1, 2});
  m.SetInput<int32_t>(2, {1, 1});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(0, 0, 0, 0, 1, 0, 0, 2, 0));
  // Row start 5 clamps to 1, column -3 to 0.
  m.SetInput<int32_t>(2, {5, -3});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(0, 0, 0, 1, 0, 0, 2, 0, 0));
}

TEST(DynamicUpdateSlice, Int8Int64Bool) {
  OpModel m;
  int a = m.AddInput(DataType::kInt8, {4});
  int ua = m.AddConst<int8_t>(DataType::kInt8, {2}, {-5, 6});
  int b = m.AddInput(DataType::kBool, {3});
  int ub = m.AddConst<uint8_t>(DataType::kBool, {1}, {1});
  int start = m.AddConst<int64_t>(DataType::kInt64, {1}, {2});
  int oa = m.AddOutput(DataType::kInt8);
  int ob = m.AddOutput(DataType::kBool);
  m.AddOp(BuiltinOp::kDynamicUpdateSlice, {a, ua, start}, {oa}, EmptyParams{});
  m.AddOp(BuiltinOp::kDynamicUpdateSlice, {b, ub, start}, {ob}, EmptyParams{});
  m.Build();
  m.SetInput<int8_t>(0, {1, 2, 3, 4});
  m.SetInput<uint8_t>(1, {0, 0, 0});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int8_t>(0), ElementsAre(1, 2, -5, 6));
  EXPECT_THAT(m.GetOutput<uint8_t>(1), ElementsAre(0, 0, 1));
}

// UINT16 / UINT32 (and FLOAT16 as its bit patterns) through the copy ops, as
// uint32_t values in and out.
void SetWide(OpModel& m, int index, DataType type, const std::vector<uint32_t>& v) {
  if (type == DataType::kUInt32) m.SetInput<uint32_t>(index, v);
  else m.SetInput<uint16_t>(index, std::vector<uint16_t>(v.begin(), v.end()));
}
std::vector<uint32_t> GetWide(OpModel& m, int index, DataType type) {
  if (type == DataType::kUInt32) return m.GetOutput<uint32_t>(index);
  const std::vector<uint16_t> v = m.GetOutput<uint16_t>(index);
  return {v.begin(), v.end()};
}

TEST(DynamicUpdateSlice, Uint16Uint32) {
  for (DataType type : {DataType::kUInt16, DataType::kUInt32}) {
    SCOPED_TRACE(DataTypeName(type));
    const uint32_t big = type == DataType::kUInt32 ? 4000000000u : 65000u;
    OpModel m;
    int a = m.AddInput(type, {4});
    int u = m.AddInput(type, {2});
    int start = m.AddConst<int32_t>(DataType::kInt32, {1}, {1});
    int out = m.AddOutput(type);
    m.AddOp(BuiltinOp::kDynamicUpdateSlice, {a, u, start}, {out}, EmptyParams{});
    m.Build();
    SetWide(m, 0, type, {1, 2, 3, 4});
    SetWide(m, 1, type, {big, 9});
    m.Invoke();
    EXPECT_THAT(GetWide(m, 0, type), ElementsAre(1, big, 9, 4));
  }
}

// ---------------------------------------------------------------- EMBEDDING_LOOKUP

TEST(EmbeddingLookup, FloatRowsAndOutOfRange) {
  OpModel m;
  int lookup = m.AddInput(DataType::kInt32, {3});
  int value = m.AddConst<float>(DataType::kFloat32, {3, 2}, {0, 1, 10, 11, 20, 21});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kEmbeddingLookup, {lookup, value}, {out});
  m.Build();
  m.SetInput<int32_t>(0, {2, 0, 2});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(20, 21, 0, 1, 20, 21));
  m.SetInput<int32_t>(0, {3, 0, 0});
  EXPECT_THAT(m.TryInvoke().message(), HasSubstr("out of bounds"));
}

TEST(EmbeddingLookup, HybridPerTensorAndPerRow) {
  {
    OpModel m;
    int lookup = m.AddInput(DataType::kInt32, {2});
    int value = m.AddConst<int8_t>(DataType::kInt8, {2, 2}, {1, -2, 3, 127}, testing::Q(0.5f, 0));
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kEmbeddingLookup, {lookup, value}, {out});
    m.Build();
    m.SetInput<int32_t>(0, {1, 0});
    m.Invoke();
    EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(1.5f, 63.5f, 0.5f, -1.0f));
  }
  {
    // UINT8 bytes are read as INT8 (200 -> -56), scale per row.
    OpModel m;
    int lookup = m.AddInput(DataType::kInt32, {2});
    int value = m.AddConst<uint8_t>(DataType::kUInt8, {2, 2}, {1, 200, 4, 8},
                                    testing::QPerAxis({0.5f, 0.25f}, {0, 0}, 0));
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kEmbeddingLookup, {lookup, value}, {out});
    m.Build();
    m.SetInput<int32_t>(0, {0, 1});
    m.Invoke();
    EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(0.5f, -28.0f, 1.0f, 2.0f));
  }
}

TEST(EmbeddingLookup, HybridNeedsSymmetricTable) {
  OpModel m;
  int lookup = m.AddInput(DataType::kInt32, {1});
  int value = m.AddConst<int8_t>(DataType::kInt8, {2, 2}, {1, 2, 3, 4}, testing::Q(0.5f, 3));
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kEmbeddingLookup, {lookup, value}, {out});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (EMBEDDING_LOOKUP): hybrid lookup"));
}

// ---------------------------------------------------------------- segments

TEST(SegmentSum, ConstantIds) {
  OpModel m;
  int data = m.AddInput(DataType::kFloat32, {4, 2});
  int ids = m.AddConst<int32_t>(DataType::kInt32, {4}, {0, 0, 1, 3});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSegmentSum, {data, ids}, {out}, EmptyParams{});
  m.Build();
  m.SetInput<float>(0, {1, 2, 3, 4, 5, 6, 7, 8});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(4, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(4, 6, 5, 6, 0, 0, 7, 8));
}

TEST(SegmentSum, UnsortedRejected) {
  {
    OpModel m;
    int data = m.AddInput(DataType::kInt32, {2});
    int ids = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 0});
    int out = m.AddOutput(DataType::kInt32);
    m.AddOp(BuiltinOp::kSegmentSum, {data, ids}, {out}, EmptyParams{});
    EXPECT_THAT(BuildError(m), HasSubstr("sorted ascending"));
  }
}

TEST(UnsortedSegment, SumMaxMinProd) {
  struct Case {
    BuiltinOp op;
    std::vector<int32_t> expected;
  };
  // data rows [1 2] [3 4] [5 6] [7 8], ids 2 0 2 -1 (skipped), 3 segments.
  const int32_t lo = std::numeric_limits<int32_t>::lowest();
  const int32_t hi = std::numeric_limits<int32_t>::max();
  for (const Case& c : {Case{BuiltinOp::kUnsortedSegmentSum, {3, 4, 0, 0, 6, 8}},
                        Case{BuiltinOp::kUnsortedSegmentMax, {3, 4, lo, lo, 5, 6}},
                        Case{BuiltinOp::kUnsortedSegmentMin, {3, 4, hi, hi, 1, 2}},
                        Case{BuiltinOp::kUnsortedSegmentProd, {3, 4, 1, 1, 5, 12}}}) {
    OpModel m;
    int data = m.AddInput(DataType::kInt32, {4, 2});
    int ids = m.AddInput(DataType::kInt32, {4});
    int num = m.AddConst<int32_t>(DataType::kInt32, {}, {3});
    int out = m.AddOutput(DataType::kInt32);
    m.AddOp(c.op, {data, ids, num}, {out}, EmptyParams{});
    m.Build();
    m.SetInput<int32_t>(0, {1, 2, 3, 4, 5, 6, 7, 8});
    m.SetInput<int32_t>(1, {2, 0, 2, -1});
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3, 2));
    EXPECT_EQ(m.GetOutput<int32_t>(0), c.expected);
    m.SetInput<int32_t>(1, {3, 0, 0, 0});
    EXPECT_THAT(m.TryInvoke().message(), HasSubstr("segment id"));
  }
}

TEST(UnsortedSegment, FloatConstantIdOutOfRange) {
  OpModel m;
  int data = m.AddInput(DataType::kFloat32, {2});
  int ids = m.AddConst<int32_t>(DataType::kInt32, {2}, {0, 2});
  int num = m.AddConst<int32_t>(DataType::kInt32, {}, {2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kUnsortedSegmentSum, {data, ids, num}, {out}, EmptyParams{});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (UNSORTED_SEGMENT_SUM): segment id 2"));
}

// ---------------------------------------------------------------- MATRIX_DIAG / SET_DIAG

TEST(MatrixDiag, BatchedFloatAndInt8) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kMatrixDiag, {in}, {out});
  m.Build();
  m.SetInput<float>(0, {1, 2, 3, 4});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2, 2));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(1, 0, 0, 2, 3, 0, 0, 4));

  OpModel q;
  int qin = q.AddInput(DataType::kInt8, {3});
  int qout = q.AddOutput(DataType::kInt8);
  q.AddOp(BuiltinOp::kMatrixDiag, {qin}, {qout});
  q.Build();
  q.SetInput<int8_t>(0, {-1, 2, -3});
  q.Invoke();
  EXPECT_THAT(q.GetOutput<int8_t>(0), ElementsAre(-1, 0, 0, 0, 2, 0, 0, 0, -3));
}

TEST(MatrixDiag, Uint32) {
  const DataType type = DataType::kUInt32;
  const std::vector<uint32_t> v = {4000000000u, 2};
  OpModel m;
  int in = m.AddInput(type, {2});
  int out = m.AddOutput(type);
  m.AddOp(BuiltinOp::kMatrixDiag, {in}, {out});
  m.Build();
  SetWide(m, 0, type, v);
  m.Invoke();
  EXPECT_THAT(GetWide(m, 0, type), ElementsAre(v[0], 0, 0, v[1]));

  OpModel set;
  int sin = set.AddInput(type, {2, 2});
  int sdiag = set.AddInput(type, {2});
  int sout = set.AddOutput(type);
  set.AddOp(BuiltinOp::kMatrixSetDiag, {sin, sdiag}, {sout});
  set.Build();
  SetWide(set, 0, type, {7, 8, 9, 10});
  SetWide(set, 1, type, v);
  set.Invoke();
  EXPECT_THAT(GetWide(set, 0, type), ElementsAre(v[0], 8, 9, v[1]));
}

TEST(MatrixDiag, RefusesSixteenBitTypesLiteRtPlacesOffTheDiagonal) {
  for (DataType type : {DataType::kFloat16, DataType::kUInt16}) {
    OpModel m;
    int in = m.AddInput(type, {2});
    int out = m.AddOutput(type);
    m.AddOp(BuiltinOp::kMatrixDiag, {in}, {out});
    EXPECT_THAT(BuildError(m), HasSubstr("MATRIX_DIAG"));
  }
}

TEST(MatrixSetDiag, NonSquare) {
  OpModel m;
  int in = m.AddInput(DataType::kInt32, {2, 3});
  int diag = m.AddInput(DataType::kInt32, {2});
  int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kMatrixSetDiag, {in, diag}, {out});
  m.Build();
  m.SetInput<int32_t>(0, {1, 2, 3, 4, 5, 6});
  m.SetInput<int32_t>(1, {-1, -5});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(-1, 2, 3, 4, -5, 6));

  OpModel bad;
  int bin = bad.AddInput(DataType::kInt32, {2, 3});
  int bdiag = bad.AddInput(DataType::kInt32, {3});
  int bout = bad.AddOutput(DataType::kInt32);
  bad.AddOp(BuiltinOp::kMatrixSetDiag, {bin, bdiag}, {bout});
  EXPECT_THAT(BuildError(bad), HasSubstr("node 0 (MATRIX_SET_DIAG): diagonal"));
}

// ---------------------------------------------------------------- BUCKETIZE

TEST(Bucketize, FloatAndInt) {
  OpModel m;
  int a = m.AddInput(DataType::kFloat32, {5});
  int b = m.AddInput(DataType::kInt32, {3});
  int oa = m.AddOutput(DataType::kInt32);
  int ob = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kBucketize, {a}, {oa}, BucketizeParams{{0.0f, 10.0f, 100.0f}});
  m.AddOp(BuiltinOp::kBucketize, {b}, {ob}, BucketizeParams{{0.0f, 10.0f, 100.0f}});
  m.Build();
  m.SetInput<float>(0, {-5, 0, 9.5f, 10, 1000});
  m.SetInput<int32_t>(1, {-1, 10, 99});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(0, 1, 1, 2, 3));
  EXPECT_THAT(m.GetOutput<int32_t>(1), ElementsAre(0, 2, 2));
}

TEST(Bucketize, UnsortedBoundariesRejected) {
  OpModel m;
  int a = m.AddInput(DataType::kFloat32, {1});
  int oa = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kBucketize, {a}, {oa}, BucketizeParams{{1.0f, 0.0f}});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (BUCKETIZE): boundaries must be sorted"));
}

// ---------------------------------------------------------------- REVERSE_SEQUENCE

TEST(ReverseSequence, SeqDim1BatchDim0) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 4});
  int lengths = m.AddInput(DataType::kInt32, {2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kReverseSequence, {in, lengths}, {out}, ReverseSequenceParams{1, 0});
  m.Build();
  m.SetInput<float>(0, {1, 2, 3, 4, 5, 6, 7, 8});
  m.SetInput<int32_t>(1, {3, 4});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(3, 2, 1, 4, 8, 7, 6, 5));
  m.SetInput<int32_t>(1, {5, 0});
  EXPECT_THAT(m.TryInvoke().message(), HasSubstr("sequence length"));
}

TEST(ReverseSequence, SeqDim0BatchDim1Int64Lengths) {
  OpModel m;
  int in = m.AddInput(DataType::kInt16, {3, 2});
  int lengths = m.AddConst<int64_t>(DataType::kInt64, {2}, {2, 3});
  int out = m.AddOutput(DataType::kInt16);
  m.AddOp(BuiltinOp::kReverseSequence, {in, lengths}, {out}, ReverseSequenceParams{0, 1});
  m.Build();
  // Columns are the batches: col 0 = 1 3 5 (len 2), col 1 = 2 4 6 (len 3).
  m.SetInput<int16_t>(0, {1, 2, 3, 4, 5, 6});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int16_t>(0), ElementsAre(3, 6, 1, 4, 5, 2));
}

// ---------------------------------------------------------------- WHERE

TEST(Where, ConstantCondition) {
  OpModel m;
  int cond = m.AddConst<uint8_t>(DataType::kBool, {2, 3}, {0, 1, 0, 1, 0, 1});
  int out = m.AddOutput(DataType::kInt64);
  m.AddOp(BuiltinOp::kWhere, {cond}, {out}, EmptyParams{});
  m.Build();
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(3, 2));
  EXPECT_THAT(m.GetOutput<int64_t>(0), ElementsAre(0, 1, 1, 0, 1, 2));
}

// ---------------------------------------------------------------- SPARSE_TO_DENSE

TEST(SparseToDense, TwoDIndicesVectorValues) {
  OpModel m;
  int idx = m.AddInput(DataType::kInt32, {2, 2});
  int shape = m.AddConst<int32_t>(DataType::kInt32, {2}, {2, 3});
  int values = m.AddInput(DataType::kFloat32, {2});
  int def = m.AddConst<float>(DataType::kFloat32, {}, {-1.0f});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kSparseToDense, {idx, shape, values, def}, {out}, SparseToDenseParams{});
  m.Build();
  m.SetInput<int32_t>(0, {0, 2, 1, 0});
  m.SetInput<float>(1, {5, 6});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 3));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(-1, -1, 5, 6, -1, -1));
  m.SetInput<int32_t>(0, {0, 3, 1, 0});
  EXPECT_THAT(m.TryInvoke().message(), HasSubstr("out of bounds"));
}

TEST(SparseToDense, OneDIndicesScalarValueInt64) {
  OpModel m;
  int idx = m.AddConst<int64_t>(DataType::kInt64, {3}, {4, 0, 2});
  int shape = m.AddConst<int64_t>(DataType::kInt64, {1}, {5});
  int values = m.AddConst<int64_t>(DataType::kInt64, {}, {9});
  int def = m.AddConst<int64_t>(DataType::kInt64, {}, {0});
  int out = m.AddOutput(DataType::kInt64);
  m.AddOp(BuiltinOp::kSparseToDense, {idx, shape, values, def}, {out}, SparseToDenseParams{});
  m.Build();
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int64_t>(0), ElementsAre(9, 0, 9, 0, 9));
}

// ---------------------------------------------------------------- BITCAST

TEST(Bitcast, WidenNarrowSame) {
  OpModel m;
  int a = m.AddInput(DataType::kInt32, {2});
  int b = m.AddInput(DataType::kUInt8, {1, 4});
  int c = m.AddInput(DataType::kFloat32, {1});
  int oa = m.AddOutput(DataType::kInt16);
  int ob = m.AddOutput(DataType::kUInt32);
  int oc = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kBitcast, {a}, {oa}, EmptyParams{});
  m.AddOp(BuiltinOp::kBitcast, {b}, {ob}, EmptyParams{});
  m.AddOp(BuiltinOp::kBitcast, {c}, {oc}, EmptyParams{});
  m.Build();
  m.SetInput<int32_t>(0, {0x00020001, -1});
  m.SetInput<uint8_t>(1, {1, 2, 3, 4});
  m.SetInput<float>(2, {1.0f});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2));
  EXPECT_THAT(m.GetOutput<int16_t>(0), ElementsAre(1, 2, -1, -1));
  EXPECT_THAT(m.GetOutputShape(1), ElementsAre(1));
  EXPECT_THAT(m.GetOutput<uint32_t>(1), ElementsAre(0x04030201u));
  EXPECT_THAT(m.GetOutput<int32_t>(2), ElementsAre(0x3f800000));
}

TEST(Bitcast, NarrowToWideNeedsLastDim) {
  OpModel m;
  int a = m.AddInput(DataType::kInt8, {3});
  int oa = m.AddOutput(DataType::kInt16);
  m.AddOp(BuiltinOp::kBitcast, {a}, {oa}, EmptyParams{});
  EXPECT_THAT(BuildError(m), HasSubstr("node 0 (BITCAST): input"));
}

// ---------------------------------------------------------------- NON_MAX_SUPPRESSION

// Six boxes: three overlapping around x = 0, two around x = 10, one at x = 100.
const std::vector<float> kBoxes = {0, 0,    1, 1,    0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                   0, 10,   1, 11,   0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

TEST(NonMaxSuppression, V4HardSuppressionPadsWithZeros) {
  struct Case {
    int32_t max_output;
    float score_threshold;
    std::vector<int32_t> indices;
    int32_t valid;
  };
  for (const Case& c : {Case{3, 0.0f, {3, 0, 5}, 3}, Case{6, 0.0f, {3, 0, 5, 0, 0, 0}, 3},
                        Case{3, 0.4f, {3, 0, 0}, 2}, Case{0, 0.0f, {}, 0}}) {
    OpModel m;
    int boxes = m.AddInput(DataType::kFloat32, {6, 4});
    int scores = m.AddInput(DataType::kFloat32, {6});
    int max_out = m.AddConst<int32_t>(DataType::kInt32, {}, {c.max_output});
    int iou = m.AddConst<float>(DataType::kFloat32, {}, {0.5f});
    int score = m.AddConst<float>(DataType::kFloat32, {}, {c.score_threshold});
    int selected = m.AddOutput(DataType::kInt32);
    int valid = m.AddOutput(DataType::kInt32);
    m.AddOp(BuiltinOp::kNonMaxSuppressionV4, {boxes, scores, max_out, iou, score},
            {selected, valid}, EmptyParams{});
    m.Build();
    m.SetInput<float>(0, kBoxes);
    m.SetInput<float>(1, kScores);
    m.Invoke();
    EXPECT_EQ(m.GetOutput<int32_t>(0), c.indices) << c.max_output << " " << c.score_threshold;
    EXPECT_THAT(m.GetOutput<int32_t>(1), ElementsAre(c.valid));
  }
}

TEST(NonMaxSuppression, V5ScoresAndSoftSuppression) {
  for (float sigma : {0.0f, 0.5f}) {
    OpModel m;
    int boxes = m.AddInput(DataType::kFloat32, {6, 4});
    int scores = m.AddInput(DataType::kFloat32, {6});
    int max_out = m.AddConst<int32_t>(DataType::kInt32, {}, {6});
    int iou = m.AddConst<float>(DataType::kFloat32, {}, {sigma > 0 ? 1.0f : 0.5f});
    int score = m.AddConst<float>(DataType::kFloat32, {}, {0.0f});
    int sig = m.AddConst<float>(DataType::kFloat32, {}, {sigma});
    int selected = m.AddOutput(DataType::kInt32);
    int selected_scores = m.AddOutput(DataType::kFloat32);
    int valid = m.AddOutput(DataType::kInt32);
    m.AddOp(BuiltinOp::kNonMaxSuppressionV5, {boxes, scores, max_out, iou, score, sig},
            {selected, selected_scores, valid}, EmptyParams{});
    m.Build();
    m.SetInput<float>(0, kBoxes);
    m.SetInput<float>(1, kScores);
    m.Invoke();
    if (sigma == 0.0f) {
      EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(3, 0, 5, 0, 0, 0));
      EXPECT_THAT(m.GetOutput<float>(1), ElementsAre(0.95f, 0.9f, 0.3f, 0, 0, 0));
      EXPECT_THAT(m.GetOutput<int32_t>(2), ElementsAre(3));
    } else {
      // Nothing is hard-suppressed (iou threshold 1): all six come out, the
      // disjoint ones with their own scores, overlapping ones decayed by
      // exp(-iou^2 / (2 sigma)) and re-queued, so later in the order.
      const std::vector<int32_t> idx = m.GetOutput<int32_t>(0);
      const std::vector<float> sc = m.GetOutput<float>(1);
      EXPECT_THAT(m.GetOutput<int32_t>(2), ElementsAre(6));
      EXPECT_EQ(idx[0], 3);
      EXPECT_EQ(sc[0], 0.95f);
      EXPECT_EQ(idx[1], 0);
      EXPECT_EQ(sc[1], 0.9f);
      for (size_t i = 1; i < sc.size(); ++i) EXPECT_LE(sc[i], sc[i - 1]);
      // Box 1 overlaps box 0 with iou 0.9 / 1.1: its score decays below 0.75.
      for (size_t i = 0; i < idx.size(); ++i)
        if (idx[i] == 1) EXPECT_LT(sc[i], 0.75f);
    }
  }
}

// ---------------------------------------------------------------- UNIQUE

TEST(Unique, ConstantInputInt32AndFloat) {
  OpModel m;
  int a = m.AddConst<int32_t>(DataType::kInt32, {6}, {4, 1, 4, -2, 1, 7});
  int b = m.AddConst<float>(DataType::kFloat32, {3}, {0.0f, -0.0f, 2.5f});
  int va = m.AddOutput(DataType::kInt32);
  int ia = m.AddOutput(DataType::kInt64);
  int vb = m.AddOutput(DataType::kFloat32);
  int ib = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kUnique, {a}, {va, ia}, UniqueParams{DataType::kInt64});
  m.AddOp(BuiltinOp::kUnique, {b}, {vb, ib}, UniqueParams{DataType::kInt32});
  m.Build();
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(4, 1, -2, 7));
  EXPECT_THAT(m.GetOutput<int64_t>(1), ElementsAre(0, 1, 0, 2, 1, 3));
  EXPECT_THAT(m.GetOutputShape(2), ElementsAre(2));
  EXPECT_THAT(m.GetOutput<int32_t>(3), ElementsAre(0, 0, 1));
}

}  // namespace
}  // namespace delegato
