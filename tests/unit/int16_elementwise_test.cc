// int16 ADD, SUB, MUL, SOFTMAX, CONCATENATION, RESIZE_BILINEAR, MEAN,
// QUANTIZE and DEQUANTIZE (and DEQUANTIZE of FLOAT16): small random cases,
// each checked here against the float computation on the dequantized inputs
// (within a few output steps) and saved for the LiteRT replay
// (litert_dump.h), which checks them bit for bit.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "litert_dump.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::delegato::testing::DumpForLiteRt;
using ::delegato::testing::OpModel;
using ::delegato::testing::Q;

std::vector<int16_t> RandomInt16(size_t n, std::mt19937& rng, int lo = -32768, int hi = 32767) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int16_t> v(n);
  for (auto& x : v) x = static_cast<int16_t>(dist(rng));
  return v;
}

size_t Count(const std::vector<int32_t>& dims) {
  size_t n = 1;
  for (int32_t d : dims) n *= d;
  return n;
}

// Output within `steps` quanta of the float result (clamped to the int16 range).
void ExpectNear(const std::vector<int16_t>& got, const std::vector<double>& want, float scale,
                double steps) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double clamped = std::min(std::max(want[i] / scale, -32768.0), 32767.0);
    ASSERT_NEAR(got[i], clamped, steps) << "element " << i;
  }
}

void RunBinary(BuiltinOp op, const char* name, float s1, float s2, float so,
               std::vector<int32_t> d1, std::vector<int32_t> d2, std::vector<int32_t> dout,
               std::mt19937& rng) {
  SCOPED_TRACE(name);
  const auto a = RandomInt16(Count(d1), rng, -12000, 12000);
  const auto b = RandomInt16(Count(d2), rng, -12000, 12000);
  OpModel m;
  const int in1 = m.AddInput(DataType::kInt16, d1, Q(s1, 0));
  const int in2 = m.AddInput(DataType::kInt16, d2, Q(s2, 0));
  const int out = m.AddOutput(DataType::kInt16, Q(so, 0));
  ElementwiseParams p;
  p.pot_scale_int16 = false;
  m.AddOp(op, {in1, in2}, {out}, p, op == BuiltinOp::kMul ? 4 : 3);
  m.Build();
  m.SetInput<int16_t>(0, a);
  m.SetInput<int16_t>(1, b);
  m.Invoke();
  // Broadcast of the second operand along the last dimension only (the cases use it).
  std::vector<double> want(Count(dout));
  for (size_t i = 0; i < want.size(); ++i) {
    const double x = a[i % a.size()] * double(s1), y = b[i % b.size()] * double(s2);
    want[i] = op == BuiltinOp::kAdd ? x + y : op == BuiltinOp::kSub ? x - y : x * y;
  }
  ExpectNear(m.GetOutput<int16_t>(0), want, so, 1.01);
  DumpForLiteRt(m, name);
}

TEST(Int16Elementwise, AddSubMul) {
  std::mt19937 rng(31);
  RunBinary(BuiltinOp::kAdd, "int16_add_0", 0.0013f, 0.0021f, 0.003f, {2, 3, 4}, {2, 3, 4},
            {2, 3, 4}, rng);
  RunBinary(BuiltinOp::kAdd, "int16_add_bcast", 0.001f, 0.0007f, 0.0025f, {2, 3, 4}, {4},
            {2, 3, 4}, rng);
  RunBinary(BuiltinOp::kSub, "int16_sub_0", 0.0013f, 0.0021f, 0.003f, {2, 3, 4}, {2, 3, 4},
            {2, 3, 4}, rng);
  RunBinary(BuiltinOp::kSub, "int16_sub_bcast", 0.002f, 0.0011f, 0.0031f, {3, 5}, {5}, {3, 5},
            rng);
  RunBinary(BuiltinOp::kMul, "int16_mul_0", 0.001f, 0.0015f, 0.004f, {2, 3, 4}, {2, 3, 4},
            {2, 3, 4}, rng);
  RunBinary(BuiltinOp::kMul, "int16_mul_bcast", 0.0009f, 0.002f, 0.005f, {3, 5}, {5}, {3, 5},
            rng);
}

struct SoftmaxCase {
  const char* name;
  std::vector<int32_t> dims;
  float in_scale, beta;
  int lo, hi;  // input value range
};

TEST(Int16Elementwise, Softmax) {
  std::mt19937 rng(32);
  const SoftmaxCase cases[] = {
      {"int16_softmax_0", {3, 10}, 0.0005f, 1.0f, -12000, 12000},
      {"int16_softmax_beta", {3, 10}, 0.0005f, 0.6f, -12000, 12000},
      {"int16_softmax_wide", {4, 50}, 0.0011f, 1.0f, -32768, 32767},
      {"int16_softmax_rank4", {2, 2, 3, 7}, 0.0003f, 1.7f, -30000, 30000},
      {"int16_softmax_1d", {9}, 0.002f, 1.0f, -3000, 3000},
  };
  for (const SoftmaxCase& sc : cases) {
    SCOPED_TRACE(sc.name);
    const float out_scale = 1.0f / 32768;
    const auto x = RandomInt16(Count(sc.dims), rng, sc.lo, sc.hi);
    OpModel m;
    const int in = m.AddInput(DataType::kInt16, sc.dims, Q(sc.in_scale, 0));
    const int out = m.AddOutput(DataType::kInt16, Q(out_scale, 0));
    m.AddOp(BuiltinOp::kSoftmax, {in}, {out}, SoftmaxParams{sc.beta}, 3);
    m.Build();
    m.SetInput<int16_t>(0, x);
    m.Invoke();
    const int depth = sc.dims.back();
    const int rows = static_cast<int>(x.size()) / depth;
    std::vector<double> want(x.size());
    for (int r = 0; r < rows; ++r) {
      double max = -1e30, sum = 0;
      for (int c = 0; c < depth; ++c) max = std::max(max, x[r * depth + c] * double(sc.in_scale));
      // The kernel's exp table covers [-10, 0] and saturates below.
      auto e = [&](int k) {
        return std::exp(std::max(sc.beta * (x[k] * sc.in_scale - max), -10.0));
      };
      for (int c = 0; c < depth; ++c) sum += e(r * depth + c);
      for (int c = 0; c < depth; ++c) want[r * depth + c] = e(r * depth + c) / sum;
    }
    // The table-based kernel is accurate to about 2^-10.
    ExpectNear(m.GetOutput<int16_t>(0), want, out_scale, 40);
    DumpForLiteRt(m, sc.name);
  }
}

TEST(Int16Elementwise, Concatenation) {
  std::mt19937 rng(33);
  // Same scales and different scales.
  for (bool same : {true, false}) {
    const std::string name = same ? "int16_concat_same" : "int16_concat_rescale";
    SCOPED_TRACE(name);
    const float s1 = 0.001f, s2 = same ? 0.001f : 0.0023f, so = same ? 0.001f : 0.0017f;
    const auto a = RandomInt16(2 * 3 * 2, rng, -15000, 15000);
    const auto b = RandomInt16(2 * 3 * 4, rng, -15000, 15000);
    OpModel m;
    const int in1 = m.AddInput(DataType::kInt16, {2, 3, 2}, Q(s1, 0));
    const int in2 = m.AddInput(DataType::kInt16, {2, 3, 4}, Q(s2, 0));
    const int out = m.AddOutput(DataType::kInt16, Q(so, 0));
    m.AddOp(BuiltinOp::kConcatenation, {in1, in2}, {out}, ConcatenationParams{2}, 3);
    m.Build();
    m.SetInput<int16_t>(0, a);
    m.SetInput<int16_t>(1, b);
    m.Invoke();
    // TFLite's int16 concatenation copies values without rescaling.
    std::vector<int16_t> want;
    for (int r = 0; r < 6; ++r) {
      for (int c = 0; c < 2; ++c) want.push_back(a[r * 2 + c]);
      for (int c = 0; c < 4; ++c) want.push_back(b[r * 4 + c]);
    }
    EXPECT_EQ(m.GetOutput<int16_t>(0), want);
    DumpForLiteRt(m, name);
  }
}

TEST(Int16Elementwise, ResizeBilinear) {
  std::mt19937 rng(34);
  int i = 0;
  for (auto [align, half] : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
    const std::string name = "int16_resize_bilinear_" + std::to_string(i++);
    SCOPED_TRACE(name);
    const auto x = RandomInt16(1 * 3 * 4 * 2, rng);
    OpModel m;
    const int in = m.AddInput(DataType::kInt16, {1, 3, 4, 2}, Q(0.001f, 0));
    const int size = m.AddConst<int32_t>(DataType::kInt32, {2}, {5, 7});
    const int out = m.AddOutput(DataType::kInt16, Q(0.001f, 0));
    m.AddOp(BuiltinOp::kResizeBilinear, {in, size}, {out}, ResizeParams{align, half}, 4);
    m.Build();
    m.SetInput<int16_t>(0, x);
    m.Invoke();
    const auto got = m.GetOutput<int16_t>(0);
    ASSERT_EQ(got.size(), 5u * 7 * 2);
    // Every output lies within its input's range.
    const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
    for (int16_t v : got) {
      EXPECT_GE(v, *lo);
      EXPECT_LE(v, *hi);
    }
    DumpForLiteRt(m, name);
  }
}

TEST(Int16Elementwise, Mean) {
  std::mt19937 rng(35);
  int i = 0;
  for (bool keep : {false, true})
    for (bool rescale : {false, true}) {
      const std::string name = "int16_mean_" + std::to_string(i++);
      SCOPED_TRACE(name);
      const float si = 0.001f, so = rescale ? 0.0007f : 0.001f;
      const auto x = RandomInt16(2 * 3 * 4, rng);
      OpModel m;
      const int in = m.AddInput(DataType::kInt16, {2, 3, 4}, Q(si, 0));
      const int axes = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 2});
      const int out = m.AddOutput(DataType::kInt16, Q(so, 0));
      m.AddOp(BuiltinOp::kMean, {in, axes}, {out}, ReducerParams{keep}, 3);
      m.Build();
      m.SetInput<int16_t>(0, x);
      m.Invoke();
      std::vector<double> want(2, 0.0);
      for (int b = 0; b < 2; ++b) {
        for (int k = 0; k < 12; ++k) want[b] += x[b * 12 + k] * double(si);
        want[b] /= 12;
      }
      ExpectNear(m.GetOutput<int16_t>(0), want, so, 1.01);
      DumpForLiteRt(m, name);
    }
}

TEST(Int16Elementwise, QuantizeAndDequantize) {
  std::mt19937 rng(36);
  {
    SCOPED_TRACE("float to int16");
    std::uniform_real_distribution<float> dist(-40.0f, 40.0f);
    std::vector<float> x(37);
    for (float& v : x) v = dist(rng);
    x[0] = 0.0015f;  // a half step
    OpModel m;
    const int in = m.AddInput(DataType::kFloat32, {37});
    const int out = m.AddOutput(DataType::kInt16, Q(0.001f, 0));
    m.AddOp(BuiltinOp::kQuantize, {in}, {out}, std::monostate{}, 4);
    m.Build();
    m.SetInput<float>(0, x);
    m.Invoke();
    std::vector<double> want(x.begin(), x.end());
    ExpectNear(m.GetOutput<int16_t>(0), want, 0.001f, 0.51);
    DumpForLiteRt(m, "int16_quantize_float");
  }
  for (DataType to : {DataType::kInt16, DataType::kInt8}) {
    const std::string name = to == DataType::kInt16 ? "int16_requantize_int16" : "int16_requantize_int8";
    SCOPED_TRACE(name);
    const auto x = RandomInt16(29, rng);
    OpModel m;
    const int in = m.AddInput(DataType::kInt16, {29}, Q(0.001f, 0));
    const float so = to == DataType::kInt16 ? 0.0013f : 0.26f;
    const int out = m.AddOutput(to, Q(so, to == DataType::kInt16 ? 0 : 3));
    m.AddOp(BuiltinOp::kQuantize, {in}, {out}, std::monostate{}, 4);
    m.Build();
    m.SetInput<int16_t>(0, x);
    m.Invoke();
    if (to == DataType::kInt16) {
      std::vector<double> want;
      for (int16_t v : x) want.push_back(v * 0.001);
      ExpectNear(m.GetOutput<int16_t>(0), want, so, 0.51);
    } else {
      const auto got = m.GetOutput<int8_t>(0);
      for (size_t k = 0; k < x.size(); ++k)
        EXPECT_NEAR(got[k], std::min(std::max(x[k] * 0.001 / so + 3, -128.0), 127.0), 0.51);
    }
    DumpForLiteRt(m, name);
  }
  {
    SCOPED_TRACE("int16 to float");
    const auto x = RandomInt16(31, rng);
    OpModel m;
    const int in = m.AddInput(DataType::kInt16, {31}, Q(0.0007f, 0));
    const int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kDequantize, {in}, {out}, std::monostate{}, 4);
    m.Build();
    m.SetInput<int16_t>(0, x);
    m.Invoke();
    const auto got = m.GetOutput<float>(0);
    for (size_t k = 0; k < x.size(); ++k) EXPECT_FLOAT_EQ(got[k], x[k] * 0.0007f);
    DumpForLiteRt(m, "int16_dequantize");
  }
}

// IEEE half to float, written out for the check.
float HalfToFloat(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  float v;
  if (exponent == 0) v = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31) v = mantissa ? NAN : INFINITY;
  else v = std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
  return sign ? -v : v;
}

TEST(Int16Elementwise, DequantizeFloat16Constant) {
  // A FLOAT16 constant (how float16-quantized weights are stored) through
  // DEQUANTIZE into ADD with a float input, so LiteRT runs it as a model
  // does. Values cover normals, subnormals, zeros, infinities, the extremes.
  std::vector<uint16_t> halves = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0xBC00,
                                  0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x3555, 0x4248, 0xC0A0};
  std::mt19937 rng(37);
  std::uniform_int_distribution<int> dist(0, 0x7BFF);
  for (int k = 0; k < 18; ++k) halves.push_back(static_cast<uint16_t>(dist(rng) | (k % 2 ? 0x8000 : 0)));
  const int n = static_cast<int>(halves.size());
  std::vector<uint8_t> bytes(n * 2);
  std::memcpy(bytes.data(), halves.data(), bytes.size());
  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {n});
  const int w = m.AddConstBytes(DataType::kFloat16, {n}, bytes);
  const int deq = m.AddTensor(DataType::kFloat32, {}, {n});
  const int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kDequantize, {w}, {deq}, std::monostate{}, 3);
  m.AddOp(BuiltinOp::kAdd, {in, deq}, {out}, ElementwiseParams{}, 1);
  m.Build();
  m.SetInput<float>(0, std::vector<float>(n, 0.0f));
  m.Invoke();
  const auto got = m.GetOutput<float>(0);
  // ADD clamps to the float range (activation NONE), so infinities end at the extremes.
  for (int k = 0; k < n; ++k) {
    const float want = std::min(std::max(HalfToFloat(halves[k]), -FLT_MAX), FLT_MAX);
    EXPECT_EQ(got[k], want) << k;
  }
  DumpForLiteRt(m, "float16_dequantize_add");
}

}  // namespace
}  // namespace delegato
