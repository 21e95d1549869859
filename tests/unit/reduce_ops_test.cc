// SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_ANY, REDUCE_ALL.
// Expected values are worked by hand (quantized cases use scale ratios whose
// products are exact, so the fixed-point result is the real one).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

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

// One reduction node over a [2, 3] (or given) input with constant axes.
struct ReduceModel {
  OpModel m;
  ReduceModel(BuiltinOp op, DataType type, std::vector<int32_t> dims, std::vector<int32_t> axes,
              bool keep_dims, Quantization in_q = {}, Quantization out_q = {},
              bool scalar_axis = false) {
    int in = m.AddInput(type, std::move(dims), in_q);
    std::vector<int32_t> axis_dims;
    if (!scalar_axis) axis_dims = {static_cast<int32_t>(axes.size())};
    int axis = m.AddConst<int32_t>(DataType::kInt32, axis_dims, axes);
    int out = m.AddOutput(type, out_q);
    m.AddOp(op, {in, axis}, {out}, ReducerParams{keep_dims});
  }
};

// ---------------------------------------------------------------- SUM

TEST(Sum, FloatAxesKeepDimsNegativeDuplicate) {
  {
    ReduceModel r(BuiltinOp::kSum, DataType::kFloat32, {2, 3}, {1}, false);
    r.m.Build();
    r.m.SetInput<float>(0, {1, 2, 3, 4, 5, 6});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutputShape(0), ElementsAre(2));
    EXPECT_THAT(r.m.GetOutput<float>(0), ElementsAre(6, 15));
  }
  {
    ReduceModel r(BuiltinOp::kSum, DataType::kFloat32, {2, 3}, {-2, 0}, true);
    r.m.Build();
    r.m.SetInput<float>(0, {1, 2, 3, 4, 5, 6});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutputShape(0), ElementsAre(1, 3));
    EXPECT_THAT(r.m.GetOutput<float>(0), ElementsAre(5, 7, 9));
  }
  {
    ReduceModel r(BuiltinOp::kSum, DataType::kFloat32, {2, 3}, {0, 1}, false);
    r.m.Build();
    r.m.SetInput<float>(0, {1, 2, 3, 4, 5, 6.5f});
    r.m.Invoke();
    EXPECT_TRUE(r.m.GetOutputShape(0).empty());
    EXPECT_THAT(r.m.GetOutput<float>(0), ElementsAre(21.5f));
  }
  {
    ReduceModel r(BuiltinOp::kSum, DataType::kFloat32, {2, 3}, {1}, false, {}, {}, true);
    r.m.Build();
    r.m.SetInput<float>(0, {1, 2, 3, 4, 5, 6});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<float>(0), ElementsAre(6, 15));
  }
}

TEST(Sum, AllDimsKeepsNegativeZero) {
  // Reducing every dim starts from the first element: -0 + -0 stays -0.
  ReduceModel r(BuiltinOp::kSum, DataType::kFloat32, {2}, {0}, false);
  r.m.Build();
  r.m.SetInput<float>(0, {-0.0f, -0.0f});
  r.m.Invoke();
  EXPECT_TRUE(std::signbit(r.m.GetOutput<float>(0)[0]));
}

TEST(Sum, Int32WrapsAndInt64) {
  {
    ReduceModel r(BuiltinOp::kSum, DataType::kInt32, {1, 2}, {1}, false);
    r.m.Build();
    r.m.SetInput<int32_t>(0, {std::numeric_limits<int32_t>::max(), 1});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<int32_t>(0), ElementsAre(std::numeric_limits<int32_t>::min()));
  }
  {
    ReduceModel r(BuiltinOp::kSum, DataType::kInt64, {3, 2}, {0}, false);
    r.m.Build();
    r.m.SetInput<int64_t>(0, {int64_t{1} << 40, 1, 2, 3, -5, 4});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<int64_t>(0), ElementsAre((int64_t{1} << 40) - 3, 8));
  }
}

TEST(Sum, QuantizedUint8Int8Int16) {
  {
    // in scale 0.5 zp 10 -> out scale 1 zp 5: out = sum(x - 10) / 2 + 5.
    ReduceModel r(BuiltinOp::kSum, DataType::kUInt8, {2, 3}, {1}, false, Q(0.5f, 10), Q(1.0f, 5),
                  false);
    r.m.Build();
    r.m.SetInput<uint8_t>(0, {12, 14, 16, 11, 11, 12});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<uint8_t>(0), ElementsAre(11, 7));
    // Saturates at 255.
    r.m.SetInput<uint8_t>(0, {255, 255, 255, 10, 10, 10});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<uint8_t>(0), ElementsAre(255, 5));
  }
  {
    // in scale 0.25 zp -3 -> out scale 0.5 zp 1.
    ReduceModel r(BuiltinOp::kSum, DataType::kInt8, {3, 2}, {0}, true, Q(0.25f, -3), Q(0.5f, 1));
    r.m.Build();
    r.m.SetInput<int8_t>(0, {-1, -3, 1, -7, 3, -9});
    r.m.Invoke();
    // columns: (2 + 4 + 6) / 2 + 1 = 7; (0 - 4 - 6) / 2 + 1 = -4.
    EXPECT_THAT(r.m.GetOutputShape(0), ElementsAre(1, 2));
    EXPECT_THAT(r.m.GetOutput<int8_t>(0), ElementsAre(7, -4));
  }
  {
    // int16, scale 1 -> 0.5: out = 2 * sum.
    ReduceModel r(BuiltinOp::kSum, DataType::kInt16, {4}, {0}, false, Q(1.0f, 0), Q(0.5f, 0));
    r.m.Build();
    r.m.SetInput<int16_t>(0, {100, -300, 50, 1000});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<int16_t>(0), ElementsAre(1700));
  }
}

// ---------------------------------------------------------------- REDUCE_MAX / MIN

TEST(ReduceMaxMin, FloatAndIntegers) {
  {
    ReduceModel r(BuiltinOp::kReduceMax, DataType::kFloat32, {2, 3}, {-1}, true);
    r.m.Build();
    r.m.SetInput<float>(0, {1, -2, 3, -4, -5, -6});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutputShape(0), ElementsAre(2, 1));
    EXPECT_THAT(r.m.GetOutput<float>(0), ElementsAre(3, -4));
  }
  {
    ReduceModel r(BuiltinOp::kReduceMin, DataType::kInt64, {2, 3}, {0}, false);
    r.m.Build();
    r.m.SetInput<int64_t>(0, {1, -2, 3, -4, 5, int64_t{-1} << 50});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<int64_t>(0), ElementsAre(-4, -2, int64_t{-1} << 50));
  }
  {
    ReduceModel r(BuiltinOp::kReduceMax, DataType::kInt8, {2, 2}, {0, 1}, false, Q(0.5f, -1),
                  Q(0.5f, -1));
    r.m.Build();
    r.m.SetInput<int8_t>(0, {-128, 5, 127, -3});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<int8_t>(0), ElementsAre(127));
  }
  {
    ReduceModel r(BuiltinOp::kReduceMin, DataType::kUInt8, {2, 2}, {1}, false, Q(0.5f, 3),
                  Q(0.5f, 3));
    r.m.Build();
    r.m.SetInput<uint8_t>(0, {9, 4, 200, 255});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<uint8_t>(0), ElementsAre(4, 200));
  }
  {
    ReduceModel r(BuiltinOp::kReduceMax, DataType::kInt16, {3}, {0}, false, Q(1.0f, 0),
                  Q(1.0f, 0));
    r.m.Build();
    r.m.SetInput<int16_t>(0, {-300, -200, -32768});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<int16_t>(0), ElementsAre(-200));
  }
  {
    ReduceModel r(BuiltinOp::kReduceMin, DataType::kInt32, {2, 2}, {}, false);
    r.m.Build();
    r.m.SetInput<int32_t>(0, {4, 3, 2, 1});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutputShape(0), ElementsAre(2, 2));
    EXPECT_THAT(r.m.GetOutput<int32_t>(0), ElementsAre(4, 3, 2, 1));
  }
}

TEST(ReduceMaxMin, EmptyReductionGivesIdentity) {
  ReduceModel r(BuiltinOp::kReduceMax, DataType::kFloat32, {2, 0}, {1}, false);
  r.m.Build();
  r.m.Invoke();
  EXPECT_THAT(r.m.GetOutput<float>(0), ElementsAre(std::numeric_limits<float>::lowest(),
                                                   std::numeric_limits<float>::lowest()));
}

TEST(ReduceMaxMin, RequantizationRejected) {
  ReduceModel r(BuiltinOp::kReduceMax, DataType::kInt8, {2}, {0}, false, Q(0.5f, 0), Q(1.0f, 0));
  EXPECT_THAT(BuildError(r.m), HasSubstr("node 0 (REDUCE_MAX): output"));
}

// ---------------------------------------------------------------- REDUCE_PROD

TEST(ReduceProd, FloatInt32Int64) {
  {
    ReduceModel r(BuiltinOp::kReduceProd, DataType::kFloat32, {2, 3}, {1}, false);
    r.m.Build();
    r.m.SetInput<float>(0, {1, 2, 3, -4, 0.5f, 2});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<float>(0), ElementsAre(6, -4));
  }
  {
    ReduceModel r(BuiltinOp::kReduceProd, DataType::kInt32, {3}, {0}, false);
    r.m.Build();
    r.m.SetInput<int32_t>(0, {65536, 65536, 3});  // 2^32 * 3 wraps to 0
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<int32_t>(0), ElementsAre(0));
  }
  {
    ReduceModel r(BuiltinOp::kReduceProd, DataType::kInt64, {2, 2}, {0}, true);
    r.m.Build();
    r.m.SetInput<int64_t>(0, {int64_t{1} << 31, 3, 4, -5});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<int64_t>(0), ElementsAre(int64_t{1} << 33, -15));
  }
}

TEST(ReduceProd, QuantizedInt8AndInt16) {
  {
    // scale 0.5 zp 1 -> 0.25 zp 0 over 2 elements: per-step scaling
    // 0.5 / sqrt(0.25) = 1, so out = (x0 - 1) * (x1 - 1).
    ReduceModel r(BuiltinOp::kReduceProd, DataType::kInt8, {2, 2}, {1}, false, Q(0.5f, 1),
                  Q(0.25f, 0));
    r.m.Build();
    r.m.SetInput<int8_t>(0, {4, -3, 6, 5});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<int8_t>(0), ElementsAre(-12, 20));
    r.m.SetInput<int8_t>(0, {101, 101, 1, 1});  // 100 * 100 saturates
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<int8_t>(0), ElementsAre(127, 0));
  }
  {
    ReduceModel r(BuiltinOp::kReduceProd, DataType::kInt16, {3}, {0}, false, Q(1.0f, 0),
                  Q(1.0f, 0));
    r.m.Build();
    r.m.SetInput<int16_t>(0, {-7, 3, 10});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<int16_t>(0), ElementsAre(-210));
  }
}

TEST(ReduceProd, QuantizedUint8Rejected) {
  ReduceModel r(BuiltinOp::kReduceProd, DataType::kUInt8, {2}, {0}, false, Q(0.5f, 0),
                Q(0.5f, 0));
  EXPECT_THAT(BuildError(r.m), HasSubstr("quantized REDUCE_PROD supports INT8 and INT16"));
}

// ---------------------------------------------------------------- REDUCE_ANY / ALL

TEST(ReduceAnyAll, Bool) {
  {
    ReduceModel r(BuiltinOp::kReduceAny, DataType::kBool, {2, 3}, {1}, false);
    r.m.Build();
    r.m.SetInput<uint8_t>(0, {0, 0, 1, 0, 0, 0});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<uint8_t>(0), ElementsAre(1, 0));
  }
  {
    ReduceModel r(BuiltinOp::kReduceAll, DataType::kBool, {2, 3}, {0}, true);
    r.m.Build();
    r.m.SetInput<uint8_t>(0, {1, 0, 1, 1, 1, 0});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutputShape(0), ElementsAre(1, 3));
    EXPECT_THAT(r.m.GetOutput<uint8_t>(0), ElementsAre(1, 0, 0));
  }
  {
    ReduceModel r(BuiltinOp::kReduceAll, DataType::kBool, {2, 2}, {1, 0, -1}, false);
    r.m.Build();
    r.m.SetInput<uint8_t>(0, {1, 1, 1, 1});
    r.m.Invoke();
    EXPECT_THAT(r.m.GetOutput<uint8_t>(0), ElementsAre(1));
  }
}

TEST(ReduceAnyAll, RejectsNonBool) {
  ReduceModel r(BuiltinOp::kReduceAny, DataType::kFloat32, {2}, {0}, false);
  EXPECT_THAT(BuildError(r.m), HasSubstr("node 0 (REDUCE_ANY): input"));
}

// ---------------------------------------------------------------- axis errors

TEST(Reduce, AxisErrors) {
  {
    ReduceModel r(BuiltinOp::kSum, DataType::kFloat32, {2, 3}, {2}, false);
    EXPECT_THAT(BuildError(r.m), HasSubstr("node 0 (SUM): axis 2 is out of range"));
  }
  {
    OpModel m;
    int in = m.AddInput(DataType::kFloat32, {2, 3});
    int axis = m.AddConst<int64_t>(DataType::kInt64, {1}, {0});
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kReduceMax, {in, axis}, {out}, ReducerParams{false});
    EXPECT_THAT(BuildError(m), HasSubstr("INT32"));
  }
}

}  // namespace
}  // namespace delegato
