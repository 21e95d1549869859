// AVERAGE_POOL_2D and MAX_POOL_2D for float32, uint8 and int8. Expected
// values come from TFLite's reference kernels (BUILTIN_REF); border windows
// count only positions inside the image.
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace delegato {
namespace {

using ::delegato::testing::OpModel;
using ::delegato::testing::Q;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

template <class T>
constexpr DataType TypeOf() {
  if constexpr (std::is_same_v<T, float>) return DataType::kFloat32;
  if constexpr (std::is_same_v<T, uint8_t>) return DataType::kUInt8;
  if constexpr (std::is_same_v<T, int8_t>) return DataType::kInt8;
}

Pool2DParams Params(Padding padding, int filter_h, int filter_w, int stride_h, int stride_w,
                    Activation act = Activation::kNone) {
  Pool2DParams p;
  p.padding = padding;
  p.filter_h = filter_h;
  p.filter_w = filter_w;
  p.stride_h = stride_h;
  p.stride_w = stride_w;
  p.activation = act;
  return p;
}

template <class T>
std::vector<T> RunPool(BuiltinOp op, std::vector<int32_t> shape, const std::vector<T>& input,
                       Pool2DParams params, Quantization q, int threads,
                       std::vector<int32_t>* out_shape = nullptr) {
  OpModel m;
  const int in = m.AddInput(TypeOf<T>(), std::move(shape), q);
  const int out = m.AddOutput(TypeOf<T>(), q);
  m.AddOp(op, {in}, {out}, params, 2);
  const Status st = m.TryBuild(threads);
  if (!st.ok()) {
    ADD_FAILURE() << st.message();
    return {};
  }
  m.SetInput<T>(0, input);
  m.Invoke();
  if (out_shape != nullptr) *out_shape = m.GetOutputShape(0);
  return m.GetOutput<T>(0);
}

const std::vector<int32_t> kShape = {1, 5, 5, 2};
const std::vector<float> kFloatInput = {
    -1.5,  0.25, -1.25, 0.5,  -1.0, 0.75, -0.75, 1.0,   -0.5,  1.25,
    -0.25, 1.5,  0.0,   -1.5, 0.25, -1.25, 0.5,  -1.0,  0.75,  -0.75,
    1.0,   -0.5, 1.25,  -0.25, 1.5, 0.0,  -1.5,  0.25,  -1.25, 0.5,
    -1.0,  0.75, -0.75, 1.0,  -0.5, 1.25, -0.25, 1.5,   0.0,   -1.5,
    0.25,  -1.25, 0.5,  -1.0, 0.75, -0.75, 1.0,  -0.5,  1.25,  -0.25};
const std::vector<uint8_t> kU8Input = {
    3,   124, 245, 113, 234, 102, 223, 91,  212, 80,  201, 69, 190, 58,  179, 47,  168,
    36,  157, 25,  146, 14,  135, 3,   124, 245, 113, 234, 102, 223, 91,  212, 80,  201,
    69,  190, 58,  179, 47,  168, 36,  157, 25,  146, 14,  135, 3,   124, 245, 113};
const std::vector<int8_t> kI8Input = {
    -120, 1,   122, -10, 111, -21, 100, -32, 89,   -43, 78,  -54, 67,   -65, 56,  -76, 45,
    -87,  34,  -98, 23,  -109, 12, -120, 1,   122,  -10, 111, -21, 100,  -32, 89,  -43, 78,
    -54,  67,  -65, 56,  -76, 45,  -87,  34,  -98,  23,  -109, 12, -120, 1,   122, -10};

TEST(AveragePool2DFloat, SameBorderWindowsCountOnlyInsidePositions) {
  for (int threads : {1, 2}) {
    std::vector<int32_t> shape;
    EXPECT_THAT(RunPool<float>(BuiltinOp::kAveragePool2d, kShape, kFloatInput,
                               Params(Padding::kSame, 3, 3, 2, 2), {}, threads, &shape),
                ElementsAreArray<float>({-0.75, 0.1875, -0.375, -0.25, 0.0, 0.125,
                                         0.0416666679084301, 0.1666666716337204,
                                         0.0555555559694767, 0.0, -0.2916666567325592,
                                         -0.1666666716337204, -0.25, -0.125, 0.125, 0.25, 0.5,
                                         -0.1875}));
    EXPECT_THAT(shape, ElementsAre(1, 3, 3, 2));
  }
}

TEST(AveragePool2DFloat, ValidRelu) {
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunPool<float>(BuiltinOp::kAveragePool2d, kShape, kFloatInput,
                               Params(Padding::kValid, 2, 2, 1, 1, Activation::kRelu), {},
                               threads),
                ElementsAreArray<float>({0.0,   0.1875, 0.0, 0.0,   0.0,   0.0,  0.0,   0.125,
                                         0.5,   0.0,    0.75, 0.0,  0.1875, 0.0, 0.0,   0.0,
                                         0.125, 0.25,   0.375, 0.5, 0.0,   0.75, 0.0,   0.1875,
                                         0.0,   0.0,    0.0, 0.125, 0.25,  0.375, 0.5,  0.0}));
  }
}

TEST(MaxPool2DFloat, SameNonSquare) {
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunPool<float>(BuiltinOp::kMaxPool2d, kShape, kFloatInput,
                               Params(Padding::kSame, 3, 2, 2, 2), {}, threads),
                ElementsAreArray<float>({0.0, 1.5, 0.5, 1.0, 0.75, 1.25, 1.25, 1.5, 1.5, 1.5,
                                         0.75, 0.5, 0.5, 1.0, 1.0, 1.5, 1.25, -0.25}));
  }
}

TEST(MaxPool2DFloat, ValidReluN1To1) {
  std::vector<int32_t> shape;
  EXPECT_THAT(RunPool<float>(BuiltinOp::kMaxPool2d, kShape, kFloatInput,
                             Params(Padding::kValid, 2, 2, 2, 1, Activation::kReluN1To1), {}, 1,
                             &shape),
              ElementsAreArray<float>({0.0, 1.0, 0.25, 0.75, 0.5, 1.0, 0.75, 1.0, 1.0, 1.0, 1.0,
                                       1.0, 1.0, 1.0, 0.0, 1.0}));
  EXPECT_THAT(shape, ElementsAre(1, 2, 4, 2));
}

TEST(AveragePool2DUint8, Same3x3Stride2) {
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunPool<uint8_t>(BuiltinOp::kAveragePool2d, kShape, kU8Input,
                                 Params(Padding::kSame, 3, 3, 2, 2), Q(0.5f, 100), threads),
                ElementsAreArray<uint8_t>({160, 91, 207, 75, 190, 58, 141, 93, 124, 133, 108,
                                           144, 58, 179, 42, 163, 88, 146}));
  }
}

TEST(AveragePool2DUint8, SameRelu6) {
  const std::vector<uint8_t> expected = {
      160, 100, 212, 100, 201, 100, 190, 100, 185, 100, 168, 100, 157, 100, 146, 141, 135,
      130, 130, 124, 113, 108, 102, 160, 100, 212, 100, 201, 100, 196, 100, 179, 100, 168,
      100, 157, 100, 146, 146, 141, 100, 152, 100, 141, 100, 130, 124, 119, 220, 113};
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunPool<uint8_t>(BuiltinOp::kAveragePool2d, kShape, kU8Input,
                                 Params(Padding::kSame, 2, 2, 1, 1, Activation::kRelu6),
                                 Q(0.05f, 100), threads),
                ElementsAreArray(expected));
  }
}

TEST(MaxPool2DUint8, Same3x3Stride2) {
  EXPECT_THAT(RunPool<uint8_t>(BuiltinOp::kMaxPool2d, kShape, kU8Input,
                               Params(Padding::kSame, 3, 3, 2, 2), Q(0.5f, 100), 2),
              ElementsAreArray<uint8_t>({245, 124, 245, 113, 223, 91, 201, 212, 190, 245, 168,
                                         234, 91, 212, 80, 201, 245, 179}));
}

TEST(AveragePool2DInt8, Same3x3Stride2) {
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunPool<int8_t>(BuiltinOp::kAveragePool2d, kShape, kI8Input,
                                Params(Padding::kSame, 3, 3, 2, 2), Q(0.5f, -10), threads),
                ElementsAreArray<int8_t>({37, -32, 84, -49, 67, -65, 18, -30, 1, 10, -16, 21, -65,
                                          56, -82, 40, -35, 23}));
  }
}

TEST(AveragePool2DInt8, ValidNonSquareRelu) {
  EXPECT_THAT(RunPool<int8_t>(BuiltinOp::kAveragePool2d, kShape, kI8Input,
                              Params(Padding::kValid, 2, 3, 1, 1, Activation::kRelu),
                              Q(0.5f, -10), 2),
              ElementsAreArray<int8_t>({52, -10, 84, -10, 73, -10, 40, -10, 29, -10, 18, 12,
                                        -10, 21, -10, 52, -10, 84, -10, 51, -10, 40, -10, 29}));
}

// Rounding of the quantized average: halves go away from zero
// (sum -3 over 2 -> -2, sum 3 over 2 -> 2, sum -10 over 4 -> -3).
TEST(AveragePool2DInt8, RoundsHalvesAwayFromZero) {
  auto avg = [](std::vector<int8_t> values) {
    const int n = static_cast<int>(values.size());
    return RunPool<int8_t>(BuiltinOp::kAveragePool2d, {1, 1, n, 1}, values,
                           Params(Padding::kValid, 1, n, 1, 1), Q(1.0f, 0), 1);
  };
  EXPECT_THAT(avg({-1, -2}), ElementsAre(-2));
  EXPECT_THAT(avg({1, 2}), ElementsAre(2));
  EXPECT_THAT(avg({-1, 0}), ElementsAre(-1));
  EXPECT_THAT(avg({-2, -3, -3, -2}), ElementsAre(-3));
  EXPECT_THAT(RunPool<uint8_t>(BuiltinOp::kAveragePool2d, {1, 1, 2, 1}, {1, 2},
                               Params(Padding::kValid, 1, 2, 1, 1), Q(1.0f, 0), 1),
              ElementsAre(2));
}

TEST(MaxPool2DInt8, SameRelu) {
  EXPECT_THAT(RunPool<int8_t>(BuiltinOp::kMaxPool2d, kShape, kI8Input,
                              Params(Padding::kSame, 2, 2, 2, 2, Activation::kRelu),
                              Q(0.5f, -10), 2),
              ElementsAreArray<int8_t>({122, 1, 111, -10, 89, -10, 23, 89, 1, 122, -10, 100,
                                        -10, 34, -10, 12, 122, -10}));
}

TEST(MaxPool2DInt8, Valid3x3) {
  EXPECT_THAT(RunPool<int8_t>(BuiltinOp::kMaxPool2d, kShape, kI8Input,
                              Params(Padding::kValid, 3, 3, 1, 1), Q(0.5f, -10), 1),
              ElementsAreArray<int8_t>({122, 122, 122, 122, 111, 122, 78, 122, 67, 122, 56,
                                        122, 23, 122, 12, 122, 122, 122}));
}

// Many channels and a batch of 2, checked against a direct computation, with
// one and two threads.
TEST(Pool2D, LargeInt8MatchesDirectComputation) {
  const int batches = 2, h = 9, w = 7, c = 150;
  std::vector<int8_t> input(static_cast<size_t>(batches) * h * w * c);
  uint32_t state = 17;
  for (int8_t& v : input) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<int8_t>(static_cast<int>(state >> 24) - 128);
  }
  const Pool2DParams params = Params(Padding::kSame, 3, 2, 2, 2);
  const int out_h = 5, out_w = 4, pad_h = 1, pad_w = 0;
  std::vector<int8_t> expected_avg, expected_max;
  for (int b = 0; b < batches; ++b)
    for (int oy = 0; oy < out_h; ++oy)
      for (int ox = 0; ox < out_w; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          int sum = 0, count = 0, mx = -128;
          for (int fy = 0; fy < 3; ++fy)
            for (int fx = 0; fx < 2; ++fx) {
              const int y = oy * 2 - pad_h + fy, x = ox * 2 - pad_w + fx;
              if (y < 0 || y >= h || x < 0 || x >= w) continue;
              const int v = input[((static_cast<size_t>(b) * h + y) * w + x) * c + ch];
              sum += v;
              ++count;
              mx = std::max(mx, v);
            }
          expected_avg.push_back(static_cast<int8_t>(
              sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count));
          expected_max.push_back(static_cast<int8_t>(mx));
        }
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunPool<int8_t>(BuiltinOp::kAveragePool2d, {batches, h, w, c}, input, params,
                                Q(0.1f, 0), threads),
                ElementsAreArray(expected_avg));
    EXPECT_THAT(RunPool<int8_t>(BuiltinOp::kMaxPool2d, {batches, h, w, c}, input, params,
                                Q(0.1f, 0), threads),
                ElementsAreArray(expected_max));
  }
}

// ------------------------------------------------------------- bad input

Status BuildPool(BuiltinOp op, DataType in_type, DataType out_type, std::vector<int32_t> shape,
                 OpParams params) {
  OpModel m;
  const int in = m.AddInput(in_type, std::move(shape), Q(0.5f, 0));
  const int out = m.AddOutput(out_type, Q(0.5f, 0));
  m.AddOp(op, {in}, {out}, std::move(params), 2);
  return m.TryBuild();
}

void ExpectFailure(const Status& st, const std::string& op, const std::string& fragment) {
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr(op));
  EXPECT_THAT(st.message(), HasSubstr(fragment));
}

TEST(Pool2DErrors, WrongRank) {
  ExpectFailure(BuildPool(BuiltinOp::kMaxPool2d, DataType::kInt8, DataType::kInt8, {5, 5, 2},
                          Params(Padding::kSame, 2, 2, 2, 2)),
                "MAX_POOL_2D", "must have rank 4, has rank 3");
}

TEST(Pool2DErrors, TypeMismatch) {
  ExpectFailure(BuildPool(BuiltinOp::kAveragePool2d, DataType::kInt8, DataType::kUInt8,
                          {1, 5, 5, 2}, Params(Padding::kSame, 2, 2, 2, 2)),
                "AVERAGE_POOL_2D", "has type UINT8");
}

TEST(Pool2DErrors, UnsupportedType) {
  ExpectFailure(BuildPool(BuiltinOp::kAveragePool2d, DataType::kInt32, DataType::kInt32,
                          {1, 5, 5, 2}, Params(Padding::kSame, 2, 2, 2, 2)),
                "AVERAGE_POOL_2D", "unsupported type INT32");
}

TEST(Pool2DErrors, ZeroStride) {
  ExpectFailure(BuildPool(BuiltinOp::kMaxPool2d, DataType::kFloat32, DataType::kFloat32,
                          {1, 5, 5, 2}, Params(Padding::kSame, 2, 2, 0, 2)),
                "MAX_POOL_2D", "must be positive");
}

TEST(Pool2DErrors, MissingOptions) {
  ExpectFailure(BuildPool(BuiltinOp::kMaxPool2d, DataType::kFloat32, DataType::kFloat32,
                          {1, 5, 5, 2}, std::monostate{}),
                "MAX_POOL_2D", "missing Pool2DOptions");
}

TEST(Pool2DErrors, TanhActivation) {
  ExpectFailure(BuildPool(BuiltinOp::kMaxPool2d, DataType::kInt8, DataType::kInt8, {1, 5, 5, 2},
                          Params(Padding::kSame, 2, 2, 2, 2, Activation::kTanh)),
                "MAX_POOL_2D", "fused activation TANH is not supported");
}

}  // namespace
}  // namespace delegato
