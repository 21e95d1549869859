// EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL, MINIMUM,
// MAXIMUM, SQUARED_DIFFERENCE, POW, FLOOR_MOD, LOGICAL_AND/OR/NOT, SELECT and
// SELECT_V2. Expectations are computed here from the definitions.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
std::vector<uint8_t> AsBytes(const std::vector<T>& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}
// std::vector<bool> has no data(): tests hold booleans as uint8_t.
using Bools = std::vector<uint8_t>;

struct Operand {
  DataType type;
  std::vector<int32_t> shape;
  std::vector<uint8_t> bytes;
  Quantization q = {};
};

template <class T>
Operand Of(DataType type, std::vector<int32_t> shape, const std::vector<T>& values,
           Quantization q = {}) {
  return Operand{type, std::move(shape), AsBytes(values), std::move(q)};
}

// Runs a one-op model with every operand a graph input; returns the output.
template <class Out>
std::vector<Out> RunOp(BuiltinOp op, const std::vector<Operand>& inputs, DataType out_type,
                     Quantization qo = {}, int version = 1, int threads = 1,
                     std::vector<int32_t>* out_shape = nullptr) {
  OpModel m;
  std::vector<int32_t> ids;
  for (const Operand& in : inputs) ids.push_back(m.AddInput(in.type, in.shape, in.q));
  const int out = m.AddOutput(out_type, qo);
  m.AddOp(op, ids, {out}, EmptyParams{}, version);
  m.Build(threads);
  for (size_t i = 0; i < inputs.size(); ++i) {
    TensorView view = m.interpreter().input(static_cast<int>(i));
    EXPECT_EQ(view.bytes, inputs[i].bytes.size());
    std::memcpy(view.data, inputs[i].bytes.data(), std::min(view.bytes, inputs[i].bytes.size()));
  }
  m.Invoke();
  if (out_shape) *out_shape = m.GetOutputShape(0);
  return m.GetOutput<Out>(0);
}

Status TryBuild(BuiltinOp op, const std::vector<Operand>& inputs, DataType out_type,
                Quantization qo = {}) {
  OpModel m;
  std::vector<int32_t> ids;
  for (const Operand& in : inputs) ids.push_back(m.AddInput(in.type, in.shape, in.q));
  const int out = m.AddOutput(out_type, qo);
  m.AddOp(op, ids, {out}, EmptyParams{});
  return m.TryBuild();
}

constexpr BuiltinOp kCompareOps[] = {BuiltinOp::kEqual,   BuiltinOp::kNotEqual,
                                     BuiltinOp::kLess,    BuiltinOp::kLessEqual,
                                     BuiltinOp::kGreater, BuiltinOp::kGreaterEqual};

template <class T>
bool Expect(BuiltinOp op, T a, T b) {
  switch (op) {
    case BuiltinOp::kEqual: return a == b;
    case BuiltinOp::kNotEqual: return a != b;
    case BuiltinOp::kLess: return a < b;
    case BuiltinOp::kLessEqual: return a <= b;
    case BuiltinOp::kGreater: return a > b;
    default: return a >= b;
  }
}

// ------------------------------------------------------------ comparisons

TEST(Compare, FloatBroadcast) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {2, 5};
  for (BuiltinOp op : kCompareOps) {
    std::vector<int32_t> shape;
    auto y = RunOp<uint8_t>(op, {Of(DataType::kFloat32, {3, 2}, a), Of(DataType::kFloat32, {2}, b)},
                          DataType::kBool, {}, 1, 1, &shape);
    EXPECT_THAT(shape, ElementsAre(3, 2));
    for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], Expect(op, a[i], b[i % 2]) ? 1 : 0) << i;
  }
}

TEST(Compare, Int32Int64AndInt16Raw) {
  const std::vector<int32_t> a = {-5, 0, 7, std::numeric_limits<int32_t>::max()};
  const std::vector<int32_t> b = {0};
  const std::vector<int64_t> a64 = {-(int64_t{1} << 40), 3, int64_t{1} << 40, 0};
  const std::vector<int16_t> a16 = {-300, 0, 300, 5};
  for (BuiltinOp op : kCompareOps) {
    auto y = RunOp<uint8_t>(op, {Of(DataType::kInt32, {4}, a), Of(DataType::kInt32, {1}, b)},
                          DataType::kBool, {}, 2);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], Expect(op, a[i], 0)) << i;
    y = RunOp<uint8_t>(op, {Of(DataType::kInt64, {4}, a64), Of(DataType::kInt64, {4}, a64)},
                     DataType::kBool, {}, 2);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], Expect(op, a64[i], a64[i])) << i;
    if (op == BuiltinOp::kNotEqual) continue;  // needs quantized INT16
    y = RunOp<uint8_t>(op, {Of(DataType::kInt16, {4}, a16), Of(DataType::kInt16, {1}, std::vector<int16_t>{5})},
                     DataType::kBool, {}, 2);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], Expect<int16_t>(op, a16[i], 5)) << i;
  }
}

TEST(Compare, BoolEquality) {
  const Bools a = {0, 0, 1, 1}, b = {0, 1, 0, 1};
  EXPECT_THAT(RunOp<uint8_t>(BuiltinOp::kEqual, {Of(DataType::kBool, {4}, a), Of(DataType::kBool, {4}, b)},
                           DataType::kBool),
              ElementsAre(1, 0, 0, 1));
  EXPECT_THAT(RunOp<uint8_t>(BuiltinOp::kNotEqual,
                           {Of(DataType::kBool, {4}, a), Of(DataType::kBool, {4}, b)}, DataType::kBool),
              ElementsAre(0, 1, 1, 0));
  Status s = TryBuild(BuiltinOp::kLess, {Of(DataType::kBool, {4}, a), Of(DataType::kBool, {4}, b)},
                      DataType::kBool);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (LESS)"));
}

// Scales in a power-of-two ratio keep equal real values equal after TFLite's
// rescaling, so the expectation compares dequantized values.
TEST(Compare, QuantizedRescalesBothInputs) {
  std::vector<uint8_t> au;
  for (int i = 0; i < 256; ++i) au.push_back(static_cast<uint8_t>(i));
  std::vector<int8_t> as;
  for (int i = -128; i < 128; ++i) as.push_back(static_cast<int8_t>(i));
  for (BuiltinOp op : kCompareOps) {
    for (uint8_t bu : {uint8_t{0}, uint8_t{100}, uint8_t{140}, uint8_t{255}}) {
      auto y = RunOp<uint8_t>(op, {Of(DataType::kUInt8, {256}, au, Q(0.1f, 128)),
                                 Of(DataType::kUInt8, {1}, std::vector<uint8_t>{bu}, Q(0.05f, 120))},
                            DataType::kBool);
      for (int i = 0; i < 256; ++i) {
        const double ra = 0.1f * (i - 128), rb = 0.05f * (bu - 120);
        EXPECT_EQ(y[i], Expect(op, ra, rb)) << i << " vs " << int(bu);
      }
    }
    auto y = RunOp<uint8_t>(op, {Of(DataType::kInt8, {256}, as, Q(0.25f, -3)),
                               Of(DataType::kInt8, {256}, std::vector<int8_t>(256, 10), Q(0.5f, 4))},
                          DataType::kBool, {}, 2);
    for (int i = 0; i < 256; ++i) {
      const double ra = 0.25 * (as[i] + 3), rb = 0.5 * (10 - 4);
      EXPECT_EQ(y[i], Expect(op, ra, rb)) << int(as[i]);
    }
  }
  // Quantized INT16 equality.
  const std::vector<int16_t> a16 = {-200, 0, 200, 400};
  auto y = RunOp<uint8_t>(BuiltinOp::kEqual,
                        {Of(DataType::kInt16, {4}, a16, Q(0.01f, 0)),
                         Of(DataType::kInt16, {1}, std::vector<int16_t>{100}, Q(0.02f, 0))},
                        DataType::kBool, {}, 3);
  EXPECT_THAT(y, ElementsAre(0, 0, 1, 0));
  y = RunOp<uint8_t>(BuiltinOp::kNotEqual,
                   {Of(DataType::kInt16, {4}, a16, Q(0.01f, 0)),
                    Of(DataType::kInt16, {1}, std::vector<int16_t>{100}, Q(0.02f, 0))},
                   DataType::kBool, {}, 3);
  EXPECT_THAT(y, ElementsAre(1, 1, 0, 1));
}

TEST(Compare, Rejects) {
  const std::vector<float> f = {1, 2};
  const std::vector<int32_t> i = {1, 2};
  Status s = TryBuild(BuiltinOp::kGreater,
                      {Of(DataType::kFloat32, {2}, f), Of(DataType::kInt32, {2}, i)}, DataType::kBool);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (GREATER)"));
  EXPECT_THAT(s.message(), HasSubstr("input types differ"));
  s = TryBuild(BuiltinOp::kEqual, {Of(DataType::kFloat32, {2}, f), Of(DataType::kFloat32, {2}, f)},
               DataType::kFloat32);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("expected BOOL"));
  s = TryBuild(BuiltinOp::kLess,
               {Of(DataType::kFloat32, {2}, f), Of(DataType::kFloat32, {3}, std::vector<float>{1, 2, 3})},
               DataType::kBool);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot broadcast"));
  // A quantized scale of 1 or more has no form in TFLite's rescaling.
  s = TryBuild(BuiltinOp::kLess,
               {Of(DataType::kInt8, {2}, std::vector<int8_t>{1, 2}, Q(2.0f, 0)),
                Of(DataType::kInt8, {2}, std::vector<int8_t>{1, 2}, Q(0.5f, 0))},
               DataType::kBool);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("input 1 scale"));
}

// ------------------------------------------------------------ MINIMUM / MAXIMUM

TEST(MinMax, FloatIntAndQuantizedRaw) {
  const std::vector<float> a = {1, -2, 3, 4, -5, 6};
  auto y = RunOp<float>(BuiltinOp::kMaximum,
                      {Of(DataType::kFloat32, {2, 3}, a), Of(DataType::kFloat32, {3}, std::vector<float>{0, 0, 5})},
                      DataType::kFloat32);
  EXPECT_THAT(y, ElementsAre(1, 0, 5, 4, 0, 6));
  y = RunOp<float>(BuiltinOp::kMinimum,
                 {Of(DataType::kFloat32, {2, 3}, a), Of(DataType::kFloat32, {2, 1}, std::vector<float>{0, 5})},
                 DataType::kFloat32);
  EXPECT_THAT(y, ElementsAre(0, -2, 0, 4, -5, 5));
  auto yi = RunOp<int32_t>(BuiltinOp::kMinimum,
                         {Of(DataType::kInt32, {3}, std::vector<int32_t>{-7, 8, 0}),
                          Of(DataType::kInt32, {3}, std::vector<int32_t>{3, 2, 0})},
                         DataType::kInt32, {}, 4);
  EXPECT_THAT(yi, ElementsAre(-7, 2, 0));
  auto y64 = RunOp<int64_t>(BuiltinOp::kMaximum,
                          {Of(DataType::kInt64, {2}, std::vector<int64_t>{int64_t{1} << 40, -1}),
                           Of(DataType::kInt64, {1}, std::vector<int64_t>{0})},
                          DataType::kInt64, {}, 2);
  EXPECT_THAT(y64, ElementsAre(int64_t{1} << 40, 0));
  auto y8 = RunOp<int8_t>(BuiltinOp::kMaximum,
                        {Of(DataType::kInt8, {3}, std::vector<int8_t>{-100, 5, 127}, Q(0.1f, 0)),
                         Of(DataType::kInt8, {1}, std::vector<int8_t>{0}, Q(0.1f, 0))},
                        DataType::kInt8, Q(0.1f, 0), 2);
  EXPECT_THAT(y8, ElementsAre(0, 5, 127));
  auto yu = RunOp<uint8_t>(BuiltinOp::kMinimum,
                         {Of(DataType::kUInt8, {3}, std::vector<uint8_t>{0, 128, 255}, Q(0.1f, 128)),
                          Of(DataType::kUInt8, {1}, std::vector<uint8_t>{130}, Q(0.1f, 128))},
                         DataType::kUInt8, Q(0.1f, 128));
  EXPECT_THAT(yu, ElementsAre(0, 128, 130));
  auto y16 = RunOp<int16_t>(BuiltinOp::kMaximum,
                          {Of(DataType::kInt16, {2}, std::vector<int16_t>{-300, 300}),
                           Of(DataType::kInt16, {1}, std::vector<int16_t>{0})},
                          DataType::kInt16, {}, 4);
  EXPECT_THAT(y16, ElementsAre(0, 300));
}

// ------------------------------------------------------------ SQUARED_DIFFERENCE

TEST(SquaredDifference, FloatInt32AndInt8) {
  auto y = RunOp<float>(BuiltinOp::kSquaredDifference,
                      {Of(DataType::kFloat32, {2, 2}, std::vector<float>{1, -2, 3.5f, 0}),
                       Of(DataType::kFloat32, {2}, std::vector<float>{0.5f, 2})},
                      DataType::kFloat32);
  EXPECT_THAT(y, ElementsAre(0.25f, 16, 9, 4));
  auto yi = RunOp<int32_t>(BuiltinOp::kSquaredDifference,
                         {Of(DataType::kInt32, {3}, std::vector<int32_t>{5, -5, 100}),
                          Of(DataType::kInt32, {3}, std::vector<int32_t>{2, 5, -100})},
                         DataType::kInt32);
  EXPECT_THAT(yi, ElementsAre(9, 100, 40000));
  std::vector<int8_t> a;
  for (int i = -128; i < 128; ++i) a.push_back(static_cast<int8_t>(i));
  const std::vector<int8_t> b = {-30, 0, 25, 90};
  std::vector<int8_t> aa, bb;
  for (int8_t x : a)
    for (int8_t v : b) {
      aa.push_back(x);
      bb.push_back(v);
    }
  const int n = static_cast<int>(aa.size());
  auto y8 = RunOp<int8_t>(BuiltinOp::kSquaredDifference,
                        {Of(DataType::kInt8, {n}, aa, Q(0.02f, 4)), Of(DataType::kInt8, {n}, bb, Q(0.03f, -2))},
                        DataType::kInt8, Q(0.05f, -128), 2, 2);
  for (int i = 0; i < n; ++i) {
    const double d = 0.02f * (aa[i] - 4) - 0.03f * (bb[i] + 2);
    const double q = std::clamp(std::round(d * d / 0.05f) - 128, -128.0, 127.0);
    EXPECT_NEAR(y8[i], q, 1) << int(aa[i]) << " " << int(bb[i]);
  }
  Status s = TryBuild(BuiltinOp::kSquaredDifference,
                      {Of(DataType::kUInt8, {1}, std::vector<uint8_t>{1}, Q(0.1f, 0)),
                       Of(DataType::kUInt8, {1}, std::vector<uint8_t>{1}, Q(0.1f, 0))},
                      DataType::kUInt8, Q(0.1f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (SQUARED_DIFFERENCE)"));
}

// ------------------------------------------------------------ POW, FLOOR_MOD

TEST(Pow, FloatAndInt32) {
  auto y = RunOp<float>(BuiltinOp::kPow,
                      {Of(DataType::kFloat32, {4}, std::vector<float>{2, 9, 0.5f, -2}),
                       Of(DataType::kFloat32, {4}, std::vector<float>{3, 0.5f, -1, 2})},
                      DataType::kFloat32);
  EXPECT_THAT(y, ElementsAre(8, 3, 2, 4));
  auto yi = RunOp<int32_t>(BuiltinOp::kPow,
                         {Of(DataType::kInt32, {4}, std::vector<int32_t>{2, -3, 7, 0}),
                          Of(DataType::kInt32, {1}, std::vector<int32_t>{3})},
                         DataType::kInt32);
  EXPECT_THAT(yi, ElementsAre(8, -27, 343, 0));
  OpModel m;
  const int a = m.AddInput(DataType::kInt32, {2});
  const int b = m.AddInput(DataType::kInt32, {2});
  const int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kPow, {a, b}, {out});
  m.Build();
  m.SetInput<int32_t>(0, {2, 2});
  m.SetInput<int32_t>(1, {1, -1});
  Status s = m.TryInvoke();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("non-negative"));
}

TEST(FloorMod, IntegerAndFloatSigns) {
  const std::vector<int32_t> a = {7, -7, 7, -7, 0, 6};
  const std::vector<int32_t> b = {3, 3, -3, -3, 5, 3};
  auto y = RunOp<int32_t>(BuiltinOp::kFloorMod, {Of(DataType::kInt32, {6}, a), Of(DataType::kInt32, {6}, b)},
                        DataType::kInt32);
  EXPECT_THAT(y, ElementsAre(1, 2, -2, -1, 0, 0));
  auto y64 = RunOp<int64_t>(BuiltinOp::kFloorMod,
                          {Of(DataType::kInt64, {2}, std::vector<int64_t>{-10, 10}),
                           Of(DataType::kInt64, {1}, std::vector<int64_t>{4})},
                          DataType::kInt64, {}, 2);
  EXPECT_THAT(y64, ElementsAre(2, 2));
  auto y8 = RunOp<int8_t>(BuiltinOp::kFloorMod,
                        {Of(DataType::kInt8, {2}, std::vector<int8_t>{-128, 100}),
                         Of(DataType::kInt8, {2}, std::vector<int8_t>{-1, -7})},
                        DataType::kInt8, {}, 2);
  EXPECT_THAT(y8, ElementsAre(0, -5));
  auto yf = RunOp<float>(BuiltinOp::kFloorMod,
                       {Of(DataType::kFloat32, {3}, std::vector<float>{5.5f, -5.5f, 5.5f}),
                        Of(DataType::kFloat32, {3}, std::vector<float>{2, 2, -2})},
                       DataType::kFloat32, {}, 2);
  EXPECT_THAT(yf, ElementsAre(1.5f, 0.5f, -0.5f));
  OpModel m;
  const int ia = m.AddInput(DataType::kInt32, {2});
  const int ib = m.AddInput(DataType::kInt32, {2});
  const int out = m.AddOutput(DataType::kInt32);
  m.AddOp(BuiltinOp::kFloorMod, {ia, ib}, {out});
  m.Build();
  m.SetInput<int32_t>(0, {2, 2});
  m.SetInput<int32_t>(1, {1, 0});
  Status s = m.TryInvoke();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("division by zero"));
}

// ------------------------------------------------------------ logic

TEST(Logical, AndOrNotBroadcast) {
  const Bools a = {0, 1, 0, 1}, b = {0, 1};
  EXPECT_THAT(RunOp<uint8_t>(BuiltinOp::kLogicalAnd,
                           {Of(DataType::kBool, {2, 2}, a), Of(DataType::kBool, {2}, b)}, DataType::kBool),
              ElementsAre(0, 1, 0, 1));
  EXPECT_THAT(RunOp<uint8_t>(BuiltinOp::kLogicalOr,
                           {Of(DataType::kBool, {2, 2}, a), Of(DataType::kBool, {2, 1}, b)},
                           DataType::kBool),
              ElementsAre(0, 1, 1, 1));
  EXPECT_THAT(RunOp<uint8_t>(BuiltinOp::kLogicalNot, {Of(DataType::kBool, {4}, a)}, DataType::kBool),
              ElementsAre(1, 0, 1, 0));
  Status s = TryBuild(BuiltinOp::kLogicalAnd,
                      {Of(DataType::kInt32, {1}, std::vector<int32_t>{1}),
                       Of(DataType::kInt32, {1}, std::vector<int32_t>{1})},
                      DataType::kBool);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (LOGICAL_AND)"));
}

// ------------------------------------------------------------ SELECT

TEST(Select, V1SameShapeScalarAndRowCondition) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6}, y = {-1, -2, -3, -4, -5, -6};
  auto out = RunOp<float>(BuiltinOp::kSelect,
                        {Of(DataType::kBool, {2, 3}, Bools{1, 0, 1, 0, 1, 0}),
                         Of(DataType::kFloat32, {2, 3}, x), Of(DataType::kFloat32, {2, 3}, y)},
                        DataType::kFloat32);
  EXPECT_THAT(out, ElementsAre(1, -2, 3, -4, 5, -6));
  // A vector over the first dimension picks whole rows.
  out = RunOp<float>(BuiltinOp::kSelect,
                   {Of(DataType::kBool, {2}, Bools{0, 1}), Of(DataType::kFloat32, {2, 3}, x),
                    Of(DataType::kFloat32, {2, 3}, y)},
                   DataType::kFloat32, {}, 2);
  EXPECT_THAT(out, ElementsAre(-1, -2, -3, 4, 5, 6));
  auto outi = RunOp<int32_t>(BuiltinOp::kSelect,
                           {Of(DataType::kBool, {}, Bools{1}),
                            Of(DataType::kInt32, {3}, std::vector<int32_t>{7, 8, 9}),
                            Of(DataType::kInt32, {3}, std::vector<int32_t>{0, 0, 0})},
                           DataType::kInt32, {}, 2);
  EXPECT_THAT(outi, ElementsAre(7, 8, 9));
  Status s = TryBuild(BuiltinOp::kSelect,
                      {Of(DataType::kBool, {3}, Bools{1, 0, 1}), Of(DataType::kFloat32, {2, 3}, x),
                       Of(DataType::kFloat32, {2, 3}, y)},
                      DataType::kFloat32);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (SELECT)"));
}

TEST(Select, V2BroadcastsAllThree) {
  std::vector<int32_t> shape;
  auto out = RunOp<int8_t>(BuiltinOp::kSelectV2,
                         {Of(DataType::kBool, {2, 1}, Bools{1, 0}),
                          Of(DataType::kInt8, {1, 3}, std::vector<int8_t>{1, 2, 3}, Q(0.1f, 0)),
                          Of(DataType::kInt8, {1}, std::vector<int8_t>{-9}, Q(0.1f, 0))},
                         DataType::kInt8, Q(0.1f, 0), 1, 1, &shape);
  EXPECT_THAT(shape, ElementsAre(2, 3));
  EXPECT_THAT(out, ElementsAre(1, 2, 3, -9, -9, -9));
  // Large enough to run on several threads.
  const int n = 3 * 4096;
  Bools c(n);
  std::vector<float> x(n), y(1, -1.0f);
  for (int i = 0; i < n; ++i) {
    c[i] = i % 3 == 0;
    x[i] = static_cast<float>(i);
  }
  auto big = RunOp<float>(BuiltinOp::kSelectV2,
                        {Of(DataType::kBool, {n}, c), Of(DataType::kFloat32, {n}, x),
                         Of(DataType::kFloat32, {}, y)},
                        DataType::kFloat32, {}, 1, 2);
  for (int i = 0; i < n; ++i) ASSERT_EQ(big[i], i % 3 == 0 ? x[i] : -1.0f) << i;
  Status s = TryBuild(BuiltinOp::kSelectV2,
                      {Of(DataType::kInt32, {1}, std::vector<int32_t>{1}),
                       Of(DataType::kFloat32, {1}, std::vector<float>{1}),
                       Of(DataType::kFloat32, {1}, std::vector<float>{1})},
                      DataType::kFloat32);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("must be BOOL"));
}

// ------------------------------------------------------------ bitwise, ATAN2, ADD_N

TEST(RightShift, SignedUnsignedAndClampedShifts) {
  auto y = RunOp<int32_t>(BuiltinOp::kRightShift,
                          {Of(DataType::kInt32, {5}, std::vector<int32_t>{-16, 16, 1 << 30, -1, 7}),
                           Of(DataType::kInt32, {5}, std::vector<int32_t>{2, 2, 40, 3, -1})},
                          DataType::kInt32);
  EXPECT_THAT(y, ElementsAre(-4, 4, 0, -1, 7));
  auto y8 = RunOp<uint8_t>(BuiltinOp::kRightShift,
                           {Of(DataType::kUInt8, {3}, std::vector<uint8_t>{255, 128, 9}),
                            Of(DataType::kUInt8, {1}, std::vector<uint8_t>{3})},
                           DataType::kUInt8);
  EXPECT_THAT(y8, ElementsAre(31, 16, 1));
  auto y16 = RunOp<int16_t>(BuiltinOp::kRightShift,
                            {Of(DataType::kInt16, {2}, std::vector<int16_t>{-32768, 1000}),
                             Of(DataType::kInt16, {2}, std::vector<int16_t>{20, 1})},
                            DataType::kInt16);
  EXPECT_THAT(y16, ElementsAre(-1, 500));
  Status s = TryBuild(BuiltinOp::kRightShift,
                      {Of(DataType::kFloat32, {1}, std::vector<float>{1}),
                       Of(DataType::kFloat32, {1}, std::vector<float>{1})},
                      DataType::kFloat32);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (RIGHT_SHIFT)"));
}

TEST(BitwiseXor, Broadcast) {
  auto y = RunOp<int32_t>(BuiltinOp::kBitwiseXor,
                          {Of(DataType::kInt32, {2, 2}, std::vector<int32_t>{0, 1, -1, 0x0F0F}),
                           Of(DataType::kInt32, {2}, std::vector<int32_t>{0xFF, -1})},
                          DataType::kInt32);
  EXPECT_THAT(y, ElementsAre(0xFF, -2, -256, ~0x0F0F));
  auto yu = RunOp<uint32_t>(BuiltinOp::kBitwiseXor,
                            {Of(DataType::kUInt32, {2}, std::vector<uint32_t>{0xFFFFFFFFu, 5}),
                             Of(DataType::kUInt32, {1}, std::vector<uint32_t>{1})},
                            DataType::kUInt32);
  EXPECT_THAT(yu, ElementsAre(0xFFFFFFFEu, 4u));
}

TEST(Atan2, FloatQuadrants) {
  const std::vector<float> y = {1, 1, -1, -1, 0, 2}, x = {1, -1, -1, 1, -1, 0};
  auto out = RunOp<float>(BuiltinOp::kAtan2,
                          {Of(DataType::kFloat32, {2, 3}, y), Of(DataType::kFloat32, {2, 3}, x)},
                          DataType::kFloat32);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(out[i], std::atan2(double(y[i]), double(x[i])), 1e-6) << i;
  Status s = TryBuild(BuiltinOp::kAtan2,
                      {Of(DataType::kFloat32, {2}, std::vector<float>{1, 2}),
                       Of(DataType::kFloat32, {1}, std::vector<float>{1})},
                      DataType::kFloat32);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (ATAN2)"));
}

TEST(AddN, FloatAndInt32) {
  auto y = RunOp<float>(BuiltinOp::kAddN,
                        {Of(DataType::kFloat32, {2, 2}, std::vector<float>{1, 2, 3, 4}),
                         Of(DataType::kFloat32, {2, 2}, std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f}),
                         Of(DataType::kFloat32, {2, 2}, std::vector<float>{-1, -2, -3, 10})},
                        DataType::kFloat32);
  EXPECT_THAT(y, ElementsAre(0.5f, 0.5f, 0.5f, 14.5f));
  auto yi = RunOp<int32_t>(BuiltinOp::kAddN,
                           {Of(DataType::kInt32, {3}, std::vector<int32_t>{1, 2, 3}),
                            Of(DataType::kInt32, {3}, std::vector<int32_t>{10, 20, 30})},
                           DataType::kInt32);
  EXPECT_THAT(yi, ElementsAre(11, 22, 33));
  Status s = TryBuild(BuiltinOp::kAddN,
                      {Of(DataType::kFloat32, {2}, std::vector<float>{1, 2}),
                       Of(DataType::kFloat32, {3}, std::vector<float>{1, 2, 3})},
                      DataType::kFloat32);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (ADD_N)"));
}

// Exact outputs of LiteRT's reference kernels for the same model and inputs.
TEST(LiteRtValues, QuantizedSquaredDifference) {
  auto y = RunOp<int8_t>(BuiltinOp::kSquaredDifference,
                         {Of(DataType::kInt8, {5}, std::vector<int8_t>{-128, -50, 0, 20, 127}, Q(0.05f, 2)),
                          Of(DataType::kInt8, {1}, std::vector<int8_t>{3}, Q(0.04f, -1))},
                         DataType::kInt8, Q(0.1f, -128), 2);
  EXPECT_THAT(y, ElementsAreArray(std::vector<int8_t>{127, -52, -127, -123, 127}));
}

}  // namespace
}  // namespace delegato
