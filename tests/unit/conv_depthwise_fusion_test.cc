// A float32 DEPTHWISE_CONV_2D that alone reads a float32 CONV_2D's output
// runs both band by band (optimized::FloatConvDepthwise) when each thread's
// share of the image is too large for its core's L2
// (InterpreterOptions::fuse_nodes): the outputs must equal the layers run
// apart byte for byte, and the fold must happen exactly where it is sound
// and pays.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/optimized/float_conv.h"
#include "test_util.h"

namespace delegato {
namespace {

using testing::OpModel;

struct FusionCase {
  int height = 64, width = 64, in_depth = 8, depth = 96;  // 1.5 MB image
  int conv_filter = 1, conv_stride = 1;
  int dw_stride = 1;
  int threads = 1;
  bool second_reader = false;  // an ADD reads the convolution's output too
  bool graph_output = false;   // the convolution's output is a graph output too
  size_t image_bytes() const {
    const int h = (height + conv_stride - 1) / conv_stride, w = (width + conv_stride - 1) / conv_stride;
    return static_cast<size_t>(h) * w * depth * sizeof(float);
  }
  bool expect_fused() const {
    return !second_reader && !graph_output &&
           image_bytes() / threads >= optimized::FloatConvDepthwise::kMinImageBytesPerThread;
  }
  std::string Describe() const {
    return std::to_string(height) + "x" + std::to_string(width) + "x" + std::to_string(in_depth) +
           " conv " + std::to_string(conv_filter) + "s" + std::to_string(conv_stride) + " -> " +
           std::to_string(depth) + " dw s" + std::to_string(dw_stride) + " threads " +
           std::to_string(threads) + (second_reader ? " second reader" : "") +
           (graph_output ? " graph output" : "");
  }
};

void BuildCase(const FusionCase& c, OpModel& m) {
  std::mt19937 rng(static_cast<unsigned>(c.height + c.depth + c.conv_filter));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  const int in = m.AddInput(DataType::kFloat32, {1, c.height, c.width, c.in_depth}, {}, "image");
  const int conv_filter = m.AddConst<float>(
      DataType::kFloat32, {c.depth, c.conv_filter, c.conv_filter, c.in_depth},
      random(static_cast<size_t>(c.depth) * c.conv_filter * c.conv_filter * c.in_depth));
  const int conv_bias =
      m.AddConst<float>(DataType::kFloat32, {c.depth}, random(static_cast<size_t>(c.depth)));
  const int expanded = c.graph_output ? m.AddOutput(DataType::kFloat32, {}, {}, "expanded")
                                      : m.AddTensor(DataType::kFloat32);
  Conv2DParams cp;
  cp.padding = Padding::kSame;
  cp.stride_h = cp.stride_w = c.conv_stride;
  cp.activation = Activation::kRelu6;
  m.AddOp(BuiltinOp::kConv2d, {in, conv_filter, conv_bias}, {expanded}, cp);
  const int dw_filter = m.AddConst<float>(DataType::kFloat32, {1, 3, 3, c.depth},
                                          random(static_cast<size_t>(9) * c.depth));
  const int dw_bias =
      m.AddConst<float>(DataType::kFloat32, {c.depth}, random(static_cast<size_t>(c.depth)));
  const int out = m.AddOutput(DataType::kFloat32, {}, {}, "out");
  DepthwiseConv2DParams dp;
  dp.padding = Padding::kSame;
  dp.stride_h = dp.stride_w = c.dw_stride;
  dp.depth_multiplier = 1;
  dp.activation = Activation::kRelu6;
  m.AddOp(BuiltinOp::kDepthwiseConv2d, {expanded, dw_filter, dw_bias}, {out}, dp);
  if (c.second_reader) {
    const int sum = m.AddOutput(DataType::kFloat32, {}, {}, "sum");
    m.AddOp(BuiltinOp::kAdd, {expanded, expanded}, {sum}, ElementwiseParams{});
  }
}

std::vector<float> Image(const FusionCase& c, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(c.height) * c.width * c.in_depth);
  for (float& x : v) x = dist(rng);
  return v;
}

// Runs the case (two images: nothing may depend on what the first left
// behind); returns the depthwise output's bytes and where the CONV_2D (node 0) went.
std::vector<uint8_t> Run(const FusionCase& c, bool fuse, int* fused_into) {
  OpModel m;
  BuildCase(c, m);
  InterpreterOptions options;
  options.num_threads = c.threads;
  options.fuse_nodes = fuse;
  Status status;
  auto interpreter = Interpreter::Create(
      std::shared_ptr<const ModelDef>(&m.model(), [](const ModelDef*) {}), options, &status);
  EXPECT_TRUE(status.ok()) << status.message();
  if (!status.ok()) return {};
  status = interpreter->AllocateTensors();
  EXPECT_TRUE(status.ok()) << status.message();
  if (!status.ok()) return {};
  for (int seed : {11, 12}) {
    const std::vector<float> image = Image(c, seed);
    TensorView view = interpreter->input(0);
    EXPECT_EQ(view.bytes, image.size() * sizeof(float));
    std::memcpy(view.data, image.data(), view.bytes);
    status = interpreter->Invoke();
    EXPECT_TRUE(status.ok()) << status.message();
  }
  *fused_into = interpreter->node(0).fused_into;
  const int out_index = c.graph_output ? 1 : 0;  // "expanded" comes first when it is an output
  TensorView out = interpreter->output(out_index);
  const uint8_t* bytes = static_cast<const uint8_t*>(out.data);
  return std::vector<uint8_t>(bytes, bytes + out.bytes);
}

void Check(const FusionCase& c) {
  int apart_fused = -2, fused = -2;
  const std::vector<uint8_t> want = Run(c, /*fuse=*/false, &apart_fused);
  EXPECT_EQ(apart_fused, -1) << c.Describe();
  const std::vector<uint8_t> got = Run(c, /*fuse=*/true, &fused);
  EXPECT_EQ(fused, c.expect_fused() ? 1 : -1) << c.Describe();
  ASSERT_EQ(want.size(), got.size()) << c.Describe();
  EXPECT_TRUE(want == got) << "outputs differ: " << c.Describe();
}

TEST(ConvDepthwiseFusion, EqualsTheLayersApart) {
  FusionCase c;  // 64 x 64 x 96: fused at 1 thread, not at 2
  for (int threads : {1, 2}) {
    c.threads = threads;
    for (int stride : {1, 2}) {
      c.dw_stride = stride;
      Check(c);
    }
  }
  // 3 MB: fused at 2 threads too.
  c.height = 128;
  for (int threads : {1, 2}) {
    c.threads = threads;
    Check(c);
  }
  // A first layer: 3x3 stride 2 over 3 channels (rows gathered at the border).
  FusionCase first;
  first.height = first.width = 130;
  first.in_depth = 3;
  first.conv_filter = 3;
  first.conv_stride = 2;
  first.depth = 32;  // 65 x 65 x 32 = 0.5 MB: too small, runs apart
  Check(first);
  first.height = first.width = 226;  // 113 x 113 x 32 = 1.6 MB
  Check(first);
}

TEST(ConvDepthwiseFusion, NotFoldedWhereAnotherReaderNeedsTheImage) {
  for (int which = 0; which < 2; ++which) {
    FusionCase c;
    c.second_reader = which == 0;
    c.graph_output = which == 1;
    Check(c);
  }
}

}  // namespace
}  // namespace delegato
