// QUANTIZE (float -> int and requantization), DEQUANTIZE and CAST.
// Expectations were produced by TFLite's reference kernels (LiteRT,
// BUILTIN_REF) for the same inputs and parameters.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OpModel;
using testing::Q;
using testing::QPerAxis;

template <class In, class Out>
std::vector<Out> RunConvert(BuiltinOp op, DataType in_type, DataType out_type,
                            std::vector<int32_t> shape, const std::vector<In>& x,
                            Quantization qin, Quantization qout, int threads = 1) {
  OpModel m;
  const int in = m.AddInput(in_type, shape, qin);
  const int out = m.AddOutput(out_type, qout);
  m.AddOp(op, {in}, {out});
  m.Build(threads);
  m.SetInput<In>(0, x);
  m.Invoke();
  return m.GetOutput<Out>(0);
}

Status BuildConvert(BuiltinOp op, DataType in_type, DataType out_type, std::vector<int32_t> shape,
                    Quantization qin, Quantization qout) {
  OpModel m;
  const int in = m.AddInput(in_type, shape, qin);
  const int out = m.AddOutput(out_type, qout);
  m.AddOp(op, {in}, {out});
  return m.TryBuild();
}

const std::vector<float> kFloats = {-1.0f, -0.26f, 0.0f,   0.25f,  0.26f,
                                    1.0f,  100.0f, -100.0f, 0.125f, -0.125f};

TEST(Quantize, FloatToUInt8Int8Int16) {
  for (int threads : {1, 2})
    EXPECT_THAT((RunConvert<float, uint8_t>(BuiltinOp::kQuantize, DataType::kFloat32,
                                            DataType::kUInt8, {10}, kFloats, {}, Q(0.25f, 128),
                                            threads)),
                ElementsAre(124, 127, 128, 129, 129, 132, 255, 0, 129, 127));
  EXPECT_THAT((RunConvert<float, int8_t>(BuiltinOp::kQuantize, DataType::kFloat32,
                                         DataType::kInt8, {10}, kFloats, {}, Q(0.25f, -1))),
              ElementsAre(-5, -2, -1, 0, 0, 3, 127, -128, 0, -2));
  EXPECT_THAT((RunConvert<float, int16_t>(BuiltinOp::kQuantize, DataType::kFloat32,
                                          DataType::kInt16, {10}, kFloats, {}, Q(0.001f, 0))),
              ElementsAre(-1000, -260, 0, 250, 260, 1000, 32767, -32768, 125, -125));
}

TEST(Quantize, ExtremeFloatsFollowTheReference) {
  // TFLite converts round(x / scale) with a plain int32 cast: NaN and values
  // beyond int32 become INT32_MIN on x86, so they land on the minimum.
  const float nan = std::nanf("");
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_THAT((RunConvert<float, uint8_t>(BuiltinOp::kQuantize, DataType::kFloat32,
                                          DataType::kUInt8, {5}, {1e20f, -1e20f, nan, inf, 3e9f},
                                          {}, Q(1.0f, 3))),
              ElementsAre(0, 0, 0, 0, 0));
  // With a negative zero point INT32_MIN + zp wraps around to the top.
  EXPECT_THAT((RunConvert<float, int8_t>(BuiltinOp::kQuantize, DataType::kFloat32,
                                         DataType::kInt8, {3}, {1e20f, nan, 5.0f}, {},
                                         Q(1.0f, -128))),
              ElementsAre(127, 127, -123));
}

TEST(Quantize, PerAxis) {
  // Shape [2, 3], axis 1: scales per column.
  auto q = QPerAxis({0.5f, 0.25f, 1.0f}, {0, 2, -3}, 1);
  EXPECT_THAT((RunConvert<float, int8_t>(BuiltinOp::kQuantize, DataType::kFloat32,
                                         DataType::kInt8, {2, 3}, {1, 1, 1, -2, 0.3f, 2.5f}, {},
                                         q)),
              ElementsAre(2, 6, -2, -4, 3, 0));
}

TEST(Quantize, RequantizeMatchesReference) {
  const std::vector<uint8_t> u = {0, 1, 127, 128, 129, 255};
  // Same scale, zero point moved by 128: the bit-flip path.
  EXPECT_THAT((RunConvert<uint8_t, int8_t>(BuiltinOp::kQuantize, DataType::kUInt8,
                                           DataType::kInt8, {6}, u, Q(0.5f, 128), Q(0.5f, 0))),
              ElementsAre(-128, -127, -1, 0, 1, 127));
  EXPECT_THAT((RunConvert<uint8_t, int8_t>(BuiltinOp::kQuantize, DataType::kUInt8,
                                           DataType::kInt8, {6}, u, Q(0.5f, 128), Q(0.3f, -5))),
              ElementsAre(-128, -128, -7, -5, -3, 127));
  const std::vector<int8_t> s = {-128, -1, 0, 1, 127, 50};
  EXPECT_THAT((RunConvert<int8_t, int8_t>(BuiltinOp::kQuantize, DataType::kInt8,
                                          DataType::kInt8, {6}, s, Q(0.02f, -1), Q(0.05f, 3))),
              ElementsAre(-48, 3, 4, 4, 54, 24));
  EXPECT_THAT((RunConvert<int8_t, uint8_t>(BuiltinOp::kQuantize, DataType::kInt8,
                                           DataType::kUInt8, {6}, s, Q(0.02f, -1),
                                           Q(0.05f, 130))),
              ElementsAre(79, 130, 131, 131, 181, 151));
}

TEST(Quantize, RequantizeWideTypesMatchesReference) {
  const std::vector<int16_t> x = {-32768, -1000, -1, 0, 1, 999, 32767};
  EXPECT_THAT((RunConvert<int16_t, int8_t>(BuiltinOp::kQuantize, DataType::kInt16,
                                           DataType::kInt8, {7}, x, Q(0.001f, 0), Q(0.05f, 3))),
              ElementsAre(-128, -17, 3, 3, 3, 23, 127));
  EXPECT_THAT((RunConvert<int16_t, int32_t>(BuiltinOp::kQuantize, DataType::kInt16,
                                            DataType::kInt32, {7}, x, Q(0.001f, 0),
                                            Q(0.0003f, 0))),
              ElementsAre(-109227, -3333, -3, 0, 3, 3330, 109223));
  EXPECT_THAT((RunConvert<int16_t, int16_t>(BuiltinOp::kQuantize, DataType::kInt16,
                                            DataType::kInt16, {7}, x, Q(0.001f, 0),
                                            Q(0.0025f, 0))),
              ElementsAre(-13107, -400, -1, 0, 1, 400, 13107));
  EXPECT_THAT((RunConvert<int32_t, int8_t>(BuiltinOp::kQuantize, DataType::kInt32,
                                           DataType::kInt8, {7},
                                           {-2147483647 - 1, -100000, -1, 0, 7, 123456, 2147483647},
                                           Q(0.0001f, 0), Q(0.5f, -1))),
              ElementsAre(-128, -21, -1, -1, -1, 24, 127));
}

TEST(Quantize, BadParametersFail) {
  Status s = BuildConvert(BuiltinOp::kQuantize, DataType::kFloat32, DataType::kInt8, {4}, {}, {});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("no quantization parameters"));
  EXPECT_FALSE(BuildConvert(BuiltinOp::kQuantize, DataType::kFloat32, DataType::kInt32, {4}, {},
                            Q(0.1f, 0))
                   .ok());
  EXPECT_FALSE(BuildConvert(BuiltinOp::kQuantize, DataType::kFloat32, DataType::kInt8, {4}, {},
                            Q(-0.1f, 0))
                   .ok());
  // Per-axis with the wrong number of scales.
  EXPECT_FALSE(BuildConvert(BuiltinOp::kQuantize, DataType::kFloat32, DataType::kInt8, {2, 3},
                            {}, QPerAxis({0.1f, 0.2f}, {0, 0}, 1))
                   .ok());
  EXPECT_FALSE(BuildConvert(BuiltinOp::kQuantize, DataType::kFloat32, DataType::kInt8, {2, 3},
                            {}, QPerAxis({0.1f, 0.2f}, {0, 0}, 5))
                   .ok());
  // Requantizing across unsupported types.
  EXPECT_FALSE(BuildConvert(BuiltinOp::kQuantize, DataType::kUInt8, DataType::kInt16, {4},
                            Q(0.1f, 0), Q(0.1f, 0))
                   .ok());
  // A scale ratio past 32-bit fixed point is accepted as TFLite accepts it
  // (MultiplyByQuantizedMultiplier reproduces its arithmetic).
  EXPECT_TRUE(BuildConvert(BuiltinOp::kQuantize, DataType::kInt8, DataType::kInt8, {4},
                           Q(1e10f, 0), Q(1e-10f, 0))
                  .ok());
}

TEST(Dequantize, PerTensor) {
  EXPECT_THAT((RunConvert<uint8_t, float>(BuiltinOp::kDequantize, DataType::kUInt8,
                                          DataType::kFloat32, {4}, {0, 127, 128, 255}, Q(0.5f, 128),
                                          {})),
              ElementsAre(-64.0f, -0.5f, 0.0f, 63.5f));
  EXPECT_THAT((RunConvert<int8_t, float>(BuiltinOp::kDequantize, DataType::kInt8,
                                         DataType::kFloat32, {3}, {-128, 0, 127}, Q(0.1f, -3),
                                         {}, 2)),
              ElementsAre(static_cast<float>(0.1f * -125.0), static_cast<float>(0.1f * 3.0),
                          static_cast<float>(0.1f * 130.0)));
  EXPECT_THAT((RunConvert<int16_t, float>(BuiltinOp::kDequantize, DataType::kInt16,
                                          DataType::kFloat32, {2}, {-32768, 1000},
                                          Q(1.0f / 1024, 0), {})),
              ElementsAre(-32.0f, 1000.0f / 1024));
}

TEST(Dequantize, PerAxisInt8) {
  auto q = QPerAxis({0.5f, 2.0f}, {0, 1}, 0);
  EXPECT_THAT((RunConvert<int8_t, float>(BuiltinOp::kDequantize, DataType::kInt8,
                                         DataType::kFloat32, {2, 2}, {2, -2, 3, 1}, q, {})),
              ElementsAre(1.0f, -1.0f, 4.0f, 0.0f));
}

TEST(Dequantize, Float16) {
  // 1.0, -2.0, 65504 (max), smallest subnormal, +inf.
  const std::vector<uint16_t> h = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00};
  auto y = RunConvert<uint16_t, float>(BuiltinOp::kDequantize, DataType::kFloat16,
                                       DataType::kFloat32, {5}, h, {}, {});
  EXPECT_THAT(y, ElementsAre(1.0f, -2.0f, 65504.0f, std::ldexp(1.0f, -24),
                             std::numeric_limits<float>::infinity()));
}

TEST(Dequantize, BadTypesFail) {
  EXPECT_FALSE(BuildConvert(BuiltinOp::kDequantize, DataType::kInt32, DataType::kFloat32, {4},
                            Q(0.1f, 0), {})
                   .ok());
  EXPECT_FALSE(BuildConvert(BuiltinOp::kDequantize, DataType::kInt8, DataType::kInt32, {4},
                            Q(0.1f, 0), {})
                   .ok());
}

TEST(Cast, FloatToIntegersSaturateAndTruncate) {
  const float nan = std::nanf("");
  const std::vector<float> x = {1e10f, -1e10f, nan, 300.7f, -300.7f, -1.5f, 2.9f, 0.0f};
  EXPECT_THAT((RunConvert<float, int32_t>(BuiltinOp::kCast, DataType::kFloat32, DataType::kInt32,
                                          {8}, x, {}, {})),
              ElementsAre(2147483647, -2147483647 - 1, 2147483647, 300, -300, -1, 2, 0));
  EXPECT_THAT((RunConvert<float, uint8_t>(BuiltinOp::kCast, DataType::kFloat32, DataType::kUInt8,
                                          {8}, x, {}, {})),
              ElementsAre(255, 0, 255, 255, 0, 0, 2, 0));
  EXPECT_THAT((RunConvert<float, int8_t>(BuiltinOp::kCast, DataType::kFloat32, DataType::kInt8,
                                         {8}, x, {}, {})),
              ElementsAre(127, -128, 127, 127, -128, -1, 2, 0));
  EXPECT_THAT((RunConvert<float, int64_t>(BuiltinOp::kCast, DataType::kFloat32, DataType::kInt64,
                                          {8}, x, {}, {})),
              ElementsAre(10000000000, -10000000000, std::numeric_limits<int64_t>::max(), 300,
                          -300, -1, 2, 0));
}

TEST(Cast, IntegersWrapAndBools) {
  EXPECT_THAT((RunConvert<int32_t, uint8_t>(BuiltinOp::kCast, DataType::kInt32, DataType::kUInt8,
                                            {4}, {300, -1, 255, 256}, {}, {})),
              ElementsAre(44, 255, 255, 0));
  EXPECT_THAT((RunConvert<int64_t, int32_t>(BuiltinOp::kCast, DataType::kInt64, DataType::kInt32,
                                            {2}, {(int64_t{1} << 40) + 5, -1}, {}, {})),
              ElementsAre(5, -1));
  // bool is one byte: 0 or 1.
  auto b = RunConvert<float, uint8_t>(BuiltinOp::kCast, DataType::kFloat32, DataType::kBool, {4},
                                      {0.0f, -0.0f, 0.5f, std::nanf("")}, {}, {});
  EXPECT_THAT(b, ElementsAre(0, 0, 1, 1));
  EXPECT_THAT((RunConvert<uint8_t, float>(BuiltinOp::kCast, DataType::kBool, DataType::kFloat32,
                                          {2}, {0, 1}, {}, {})),
              ElementsAre(0.0f, 1.0f));
  EXPECT_THAT((RunConvert<int16_t, float>(BuiltinOp::kCast, DataType::kInt16, DataType::kFloat32,
                                          {2}, {-32768, 7}, {}, {})),
              ElementsAre(-32768.0f, 7.0f));
}

TEST(Cast, UnsupportedTypesFail) {
  EXPECT_FALSE(BuildConvert(BuiltinOp::kCast, DataType::kString, DataType::kInt32, {4}, {}, {})
                   .ok());
  EXPECT_FALSE(BuildConvert(BuiltinOp::kCast, DataType::kFloat32, DataType::kComplex64, {4}, {},
                            {})
                   .ok());
}

}  // namespace
}  // namespace delegato
