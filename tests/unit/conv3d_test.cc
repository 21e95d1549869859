// CONV_3D and CONV_3D_TRANSPOSE: hand-computed cases, a depth-1 volume checked
// against delegato's CONV_2D / TRANSPOSE_CONV (the same sums in the same order),
// randomized geometries (stride, dilation, SAME/VALID, bias, activation) whose
// every case the LiteRT replay compares, and the refusals.
#include <random>
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

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(Conv3D, HandComputedDepthSum) {
  // input D=2 values 1, 2; filter KD=2 values 3, 4; VALID: 1*3 + 2*4 + bias 0.5.
  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {1, 2, 1, 1, 1});
  const int w = m.AddConst<float>(DataType::kFloat32, {2, 1, 1, 1, 1}, {3.f, 4.f});
  const int b = m.AddConst<float>(DataType::kFloat32, {1}, {0.5f});
  const int out = m.AddOutput(DataType::kFloat32);
  Conv3DParams p;
  p.padding = Padding::kValid;
  m.AddOp(BuiltinOp::kConv3d, {in, w, b}, {out}, p);
  m.Build();
  m.SetInput<float>(0, {1.f, 2.f});
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(1, 1, 1, 1, 1));
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(11.5f));
}

TEST(Conv3D, CenterTapSameIsIdentityTimesWeight) {
  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {1, 3, 3, 3, 1});
  std::vector<float> filter(27, 0.0f);
  filter[13] = 2.0f;  // the center of 3x3x3
  const int w = m.AddConst<float>(DataType::kFloat32, {3, 3, 3, 1, 1}, filter);
  const int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kConv3d, {in, w}, {out}, Conv3DParams{});
  m.Build();
  std::vector<float> input(27);
  for (int i = 0; i < 27; ++i) input[i] = i - 13.0f;
  m.SetInput<float>(0, input);
  m.Invoke();
  std::vector<float> expected(27);
  for (int i = 0; i < 27; ++i) expected[i] = 2.0f * input[i];
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAreArray(expected));
}

struct Geometry {
  int batches, d, h, w, in_c, out_c, kd, kh, kw;
  int sd, sh, sw, dd, dh, dw;
  Padding padding;
  Activation act;
  bool bias;
};

std::vector<Geometry> Geometries() {
  return {
      {1, 4, 5, 6, 2, 3, 2, 3, 2, 1, 1, 1, 1, 1, 1, Padding::kSame, Activation::kNone, true},
      {2, 5, 4, 4, 3, 2, 3, 2, 2, 2, 1, 2, 1, 1, 1, Padding::kValid, Activation::kRelu, true},
      {1, 6, 6, 5, 1, 4, 2, 2, 3, 2, 2, 1, 1, 2, 1, Padding::kSame, Activation::kRelu6, false},
      {1, 5, 7, 7, 2, 2, 2, 3, 3, 1, 2, 2, 2, 1, 2, Padding::kValid, Activation::kReluN1To1,
       true},
  };
}

TEST(Conv3D, RandomizedGeometries) {
  std::mt19937 rng(3);
  for (const Geometry& g : Geometries()) {
    OpModel m;
    const int in = m.AddInput(DataType::kFloat32, {g.batches, g.d, g.h, g.w, g.in_c});
    const int w = m.AddConst<float>(DataType::kFloat32, {g.kd, g.kh, g.kw, g.in_c, g.out_c},
                                    Random(g.kd * g.kh * g.kw * g.in_c * g.out_c, rng));
    std::vector<int32_t> inputs = {in, w};
    if (g.bias) inputs.push_back(m.AddConst<float>(DataType::kFloat32, {g.out_c}, Random(g.out_c, rng)));
    const int out = m.AddOutput(DataType::kFloat32);
    Conv3DParams p{g.padding, g.sd, g.sw, g.sh, g.act, g.dd, g.dw, g.dh};
    m.AddOp(BuiltinOp::kConv3d, inputs, {out}, p);
    m.Build();
    m.SetInput<float>(0, Random(g.batches * g.d * g.h * g.w * g.in_c, rng));
    m.Invoke();
    const std::vector<int32_t> shape = m.GetOutputShape(0);
    ASSERT_EQ(shape.size(), 5u);
    EXPECT_EQ(shape[4], g.out_c);
  }
}

TEST(Conv3DTranspose, RandomizedGeometries) {
  std::mt19937 rng(5);
  for (const Geometry& g : Geometries()) {
    // The transpose of the forward geometry: its input is the forward output size.
    const int od = g.d * g.sd, oh = g.h * g.sh, ow = g.w * g.sw;
    OpModel m;
    const int shape = m.AddConst<int32_t>(DataType::kInt32, {5}, {g.batches, od, oh, ow, g.out_c});
    const int w = m.AddConst<float>(DataType::kFloat32, {g.kd, g.kh, g.kw, g.out_c, g.in_c},
                                    Random(g.kd * g.kh * g.kw * g.in_c * g.out_c, rng));
    const int in = m.AddInput(DataType::kFloat32, {g.batches, g.d, g.h, g.w, g.in_c});
    std::vector<int32_t> inputs = {shape, w, in};
    if (g.bias) inputs.push_back(m.AddConst<float>(DataType::kFloat32, {g.out_c}, Random(g.out_c, rng)));
    const int out = m.AddOutput(DataType::kFloat32);
    Conv3DParams p{Padding::kSame, g.sd, g.sw, g.sh, g.act, 1, 1, 1};
    m.AddOp(BuiltinOp::kConv3dTranspose, inputs, {out}, p);
    m.Build();
    m.SetInput<float>(0, Random(g.batches * g.d * g.h * g.w * g.in_c, rng));
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAre(g.batches, od, oh, ow, g.out_c));
  }
}

TEST(Conv3D, DepthOneEqualsConv2D) {
  std::mt19937 rng(11);
  const int h = 6, w = 5, c = 3, oc = 4, kh = 3, kw = 2;
  const std::vector<float> filter3d = Random(kh * kw * c * oc, rng);  // [1,KH,KW,C,OC]
  std::vector<float> filter2d(filter3d.size());                      // [OC,KH,KW,C]
  for (int y = 0; y < kh; ++y)
    for (int x = 0; x < kw; ++x)
      for (int i = 0; i < c; ++i)
        for (int o = 0; o < oc; ++o)
          filter2d[((o * kh + y) * kw + x) * c + i] = filter3d[((y * kw + x) * c + i) * oc + o];
  const std::vector<float> bias = Random(oc, rng), input = Random(h * w * c, rng);

  OpModel m3;
  const int in3 = m3.AddInput(DataType::kFloat32, {1, 1, h, w, c});
  const int w3 = m3.AddConst<float>(DataType::kFloat32, {1, kh, kw, c, oc}, filter3d);
  const int b3 = m3.AddConst<float>(DataType::kFloat32, {oc}, bias);
  const int out3 = m3.AddOutput(DataType::kFloat32);
  Conv3DParams p3;
  p3.stride_h = 2;
  m3.AddOp(BuiltinOp::kConv3d, {in3, w3, b3}, {out3}, p3);
  m3.Build();
  m3.SetInput<float>(0, input);
  m3.Invoke();

  OpModel m2;
  const int in2 = m2.AddInput(DataType::kFloat32, {1, h, w, c});
  const int w2 = m2.AddConst<float>(DataType::kFloat32, {oc, kh, kw, c}, filter2d);
  const int b2 = m2.AddConst<float>(DataType::kFloat32, {oc}, bias);
  const int out2 = m2.AddOutput(DataType::kFloat32);
  Conv2DParams p2;
  p2.stride_h = 2;
  m2.AddOp(BuiltinOp::kConv2d, {in2, w2, b2}, {out2}, p2);
  m2.Build(1, KernelSet::kReference);
  m2.SetInput<float>(0, input);
  m2.Invoke();

  const std::vector<float> got = m3.GetOutput<float>(0), want = m2.GetOutput<float>(0);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << i;
}

TEST(Conv3D, Refusals) {
  {  // int8 input: TFLite's CONV_3D is float only
    OpModel m;
    const int in = m.AddInput(DataType::kInt8, {1, 2, 2, 2, 1}, testing::Q(0.5f, 0));
    const int w = m.AddConst<int8_t>(DataType::kInt8, {1, 1, 1, 1, 1}, {1}, testing::Q(0.5f, 0));
    const int out = m.AddOutput(DataType::kInt8, testing::Q(0.5f, 0));
    m.AddOp(BuiltinOp::kConv3d, {in, w}, {out}, Conv3DParams{});
    const Status s = m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("FLOAT32 only"));
  }
  {  // channel mismatch
    OpModel m;
    const int in = m.AddInput(DataType::kFloat32, {1, 2, 2, 2, 3});
    const int w = m.AddConst<float>(DataType::kFloat32, {1, 1, 1, 2, 1}, {1.f, 1.f});
    const int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kConv3d, {in, w}, {out}, Conv3DParams{});
    const Status s = m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("input channels"));
  }
  {  // zero stride
    OpModel m;
    const int in = m.AddInput(DataType::kFloat32, {1, 2, 2, 2, 1});
    const int w = m.AddConst<float>(DataType::kFloat32, {1, 1, 1, 1, 1}, {1.f});
    const int out = m.AddOutput(DataType::kFloat32);
    Conv3DParams p;
    p.stride_d = 0;
    m.AddOp(BuiltinOp::kConv3d, {in, w}, {out}, p);
    const Status s = m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("strides must be positive"));
  }
}

}  // namespace
}  // namespace delegato
