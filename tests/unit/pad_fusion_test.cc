// A PAD of height and width read only by a CONV_2D or DEPTHWISE_CONV_2D is
// folded into the convolution's padding with the optimized kernels
// (InterpreterOptions::fuse_nodes): the results must equal the
// reference kernels' (which never fold) bit for bit, and the fold must happen
// exactly where it is sound.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace delegato {
namespace {

using testing::OpModel;
using testing::Q;

struct FusionCase {
  DataType type = DataType::kInt8;
  bool depthwise = false;
  std::vector<int32_t> pads = {1, 1, 1, 1};  // top, bottom, left, right
  Padding padding = Padding::kValid;
  int stride = 1;
  int filter = 3;
  // What must keep the fold from happening:
  bool second_reader = false;   // the PAD's output also feeds an ADD
  bool graph_output = false;    // the PAD's output is a graph output too
  bool channel_pad = false;     // the PAD also pads channels
  bool requantizing_pad = false;  // PAD output quantized unlike its input
  bool node_between = false;    // another node runs between PAD and conv
  bool expect_fused() const {
    return !second_reader && !graph_output && !channel_pad && !requantizing_pad;
  }
  std::string Describe() const {
    return std::string(DataTypeName(type)) + (depthwise ? " depthwise" : " conv") + " pads " +
           std::to_string(pads[0]) + std::to_string(pads[1]) + std::to_string(pads[2]) +
           std::to_string(pads[3]) + (padding == Padding::kSame ? " SAME" : " VALID") +
           " stride " + std::to_string(stride) + " filter " + std::to_string(filter) +
           (second_reader ? " second reader" : "") + (graph_output ? " graph output" : "") +
           (channel_pad ? " channel pad" : "") + (requantizing_pad ? " requantizing" : "") +
           (node_between ? " node between" : "");
  }
};

constexpr int kH = 9, kW = 7, kC = 8;

struct Built {
  OpModel model;
  int pad_node = -1, conv_node = -1;
};

Quantization ActQ(const FusionCase& c, float scale, int zp) {
  if (c.type == DataType::kFloat32) return {};
  return Q(scale, c.type == DataType::kUInt8 ? zp + 128 : zp);
}

void BuildCase(const FusionCase& c, Built& b) {
  OpModel& m = b.model;
  std::mt19937 rng(static_cast<unsigned>(c.pads[0] * 7 + c.stride * 3 + c.filter));
  const Quantization in_q = ActQ(c, 0.05f, -3);
  const int in = m.AddInput(c.type, {1, kH, kW, kC}, in_q, "image");
  // A node before the PAD, so the PAD's input is an arena tensor the planner
  // could reuse; with node_between, another node runs between PAD and conv.
  int pad_in = in;
  if (c.node_between) {
    pad_in = m.AddTensor(c.type, in_q);
    m.AddOp(BuiltinOp::kRelu, {in}, {pad_in});
  }
  const int cpad = c.channel_pad ? 1 : 0;
  const std::vector<int32_t> paddings = {0, 0, c.pads[0], c.pads[1], c.pads[2], c.pads[3], 0, cpad};
  const int paddings_t = m.AddConst<int32_t>(DataType::kInt32, {4, 2}, paddings);
  const Quantization padded_q = c.requantizing_pad ? ActQ(c, 0.05f, 5) : in_q;
  const int padded = c.graph_output ? m.AddOutput(c.type, padded_q, {}, "padded")
                                    : m.AddTensor(c.type, padded_q);
  b.pad_node = c.node_between ? 1 : 0;
  m.AddOp(BuiltinOp::kPad, {pad_in, paddings_t}, {padded});
  int between = -1;
  if (c.node_between) {
    // A tensor of the same size and other values, made and consumed
    // between PAD and conv: the planner's candidate for the PAD input's bytes.
    between = m.AddTensor(c.type, in_q);
    m.AddOp(BuiltinOp::kAdd, {in, in}, {between}, ElementwiseParams{});
  }
  const int channels = kC + cpad;
  const int out_channels = c.depthwise ? channels : 5;
  std::vector<int32_t> filter_dims = c.depthwise
                                         ? std::vector<int32_t>{1, c.filter, c.filter, channels}
                                         : std::vector<int32_t>{out_channels, c.filter, c.filter, channels};
  const size_t filter_count = static_cast<size_t>(c.filter) * c.filter * channels *
                              (c.depthwise ? 1 : out_channels);
  int filter = -1, bias = -1;
  if (c.type == DataType::kFloat32) {
    // Multiples of 1/8: every product and sum is exact, so the order of
    // summation (LiteRT's, the reference's, a fast kernel's) cannot matter.
    std::uniform_int_distribution<int> eighths(-8, 8);
    std::vector<float> w(filter_count), bv(out_channels);
    for (float& v : w) v = eighths(rng) / 8.0f;
    for (float& v : bv) v = eighths(rng) / 8.0f;
    filter = m.AddConst<float>(DataType::kFloat32, filter_dims, w);
    bias = m.AddConst<float>(DataType::kFloat32, {out_channels}, bv);
  } else {
    std::uniform_int_distribution<int> byte(c.type == DataType::kUInt8 ? 0 : -127,
                                            c.type == DataType::kUInt8 ? 255 : 127);
    std::vector<uint8_t> w(filter_count);
    for (uint8_t& v : w) v = static_cast<uint8_t>(byte(rng));
    const Quantization wq = c.type == DataType::kUInt8 ? Q(0.02f, 120) : Q(0.02f, 0);
    filter = m.AddConstBytes(c.type, filter_dims, w, wq);
    std::vector<int32_t> bv(out_channels);
    for (int32_t& v : bv) v = std::uniform_int_distribution<int32_t>(-300, 300)(rng);
    bias = m.AddConst<int32_t>(DataType::kInt32, {out_channels}, bv, Q(0.05f * 0.02f, 0));
  }
  const int out = m.AddOutput(c.type, ActQ(c, 0.2f, 2), {}, "out");
  b.conv_node = b.pad_node + 1 + (c.node_between ? 1 : 0);
  if (c.depthwise) {
    DepthwiseConv2DParams p;
    p.padding = c.padding;
    p.stride_h = p.stride_w = c.stride;
    p.depth_multiplier = 1;
    m.AddOp(BuiltinOp::kDepthwiseConv2d, {padded, filter, bias}, {out}, p);
  } else {
    Conv2DParams p;
    p.padding = c.padding;
    p.stride_h = p.stride_w = c.stride;
    m.AddOp(BuiltinOp::kConv2d, {padded, filter, bias}, {out}, p);
  }
  if (c.second_reader) {
    const int sum = m.AddOutput(c.type, padded_q, {}, "sum");
    m.AddOp(BuiltinOp::kAdd, {padded, padded}, {sum}, ElementwiseParams{});
  }
  if (between >= 0) {
    const int sum = m.AddOutput(c.type, in_q, {}, "between_sum");
    m.AddOp(BuiltinOp::kAdd, {between, between}, {sum}, ElementwiseParams{});
  }
}

std::vector<uint8_t> Image(const FusionCase& c, int seed) {
  std::mt19937 rng(seed);
  const size_t n = static_cast<size_t>(kH) * kW * kC;
  if (c.type == DataType::kFloat32) {
    std::vector<float> v(n);
    for (float& x : v) x = std::uniform_int_distribution<int>(-16, 16)(rng) / 8.0f;
    std::vector<uint8_t> bytes(n * sizeof(float));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return bytes;
  }
  std::vector<uint8_t> bytes(n);
  for (uint8_t& x : bytes) x = static_cast<uint8_t>(rng());
  return bytes;
}

// Runs the case with `kernels`; returns output 0's bytes.
std::vector<uint8_t> Run(const FusionCase& c, KernelSet kernels, int threads, int* fused_into) {
  Built b;
  BuildCase(c, b);
  b.model.Build(threads, kernels);
  if (::testing::Test::HasFailure()) return {};
  b.model.SetInput<uint8_t>(0, Image(c, 11));
  b.model.Invoke();
  // A second image: nothing may depend on what the first left behind.
  b.model.SetInput<uint8_t>(0, Image(c, 12));
  b.model.Invoke();
  *fused_into = b.model.interpreter().node(b.pad_node).fused_into;
  return b.model.GetOutput<uint8_t>(0);
}

void ExpectEqualOutputs(const FusionCase& c, const std::vector<uint8_t>& want,
                        const std::vector<uint8_t>& got) {
  ASSERT_EQ(want.size(), got.size()) << c.Describe();
  // Float32 too: its values make every sum exact (BuildCase, Image).
  EXPECT_EQ(want, got) << c.Describe();
}

void Check(const FusionCase& c) {
  int ref_fused = -2, fused = -2;
  const std::vector<uint8_t> want = Run(c, KernelSet::kReference, 1, &ref_fused);
  EXPECT_EQ(ref_fused, -1) << "the reference kernels never fold: " << c.Describe();
  for (int threads : {1, 2}) {
    const std::vector<uint8_t> got = Run(c, KernelSet::kOptimized, threads, &fused);
    ExpectEqualOutputs(c, want, got);
    const int conv_node = c.node_between ? 3 : 1;  // see BuildCase
    EXPECT_EQ(fused, c.expect_fused() ? conv_node : -1) << c.Describe();
  }
}

TEST(PadFusion, FoldedPadsGiveTheReferenceResults) {
  for (DataType type : {DataType::kInt8, DataType::kUInt8, DataType::kFloat32})
    for (bool depthwise : {false, true})
      for (const std::vector<int32_t>& pads : std::vector<std::vector<int32_t>>{
               {1, 1, 1, 1}, {0, 1, 0, 1}, {2, 0, 1, 3}, {0, 0, 0, 0}, {3, 3, 0, 0}})
        for (Padding padding : {Padding::kValid, Padding::kSame})
          for (int stride : {1, 2}) {
            FusionCase c;
            c.type = type;
            c.depthwise = depthwise;
            c.pads = pads;
            c.padding = padding;
            c.stride = stride;
            c.filter = stride == 2 ? 3 : 5 - 2 * (pads[0] % 2);
            Check(c);
            if (::testing::Test::HasFailure()) return;
          }
}

TEST(PadFusion, NotFoldedWhereItWouldChangeResults) {
  for (DataType type : {DataType::kInt8, DataType::kUInt8}) {
    for (int which = 0; which < 4; ++which) {
      FusionCase c;
      c.type = type;
      c.depthwise = which % 2 == 1;
      c.second_reader = which == 0;
      c.graph_output = which == 1;
      c.channel_pad = which == 2;
      c.requantizing_pad = which == 3;
      if (c.channel_pad) c.depthwise = false;  // the filter follows the padded channels
      Check(c);
    }
  }
}

TEST(PadFusion, SourceOutlivesNodesBetweenPadAndConv) {
  // The conv reads the PAD's input after another node ran: the planner must
  // keep the PAD's input alive until the conv (it would otherwise give its
  // bytes to the node between).
  for (DataType type : {DataType::kInt8, DataType::kFloat32}) {
    FusionCase c;
    c.type = type;
    c.node_between = true;
    c.pads = {2, 1, 1, 2};
    Check(c);
  }
}

TEST(PadFusion, OptionTurnsItOff) {
  FusionCase c;
  Built b;
  BuildCase(c, b);
  Status status;
  InterpreterOptions options;
  options.fuse_nodes = false;
  auto interpreter = Interpreter::Create(std::shared_ptr<const ModelDef>(
                                             &b.model.model(), [](const ModelDef*) {}),
                                         options, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(interpreter->AllocateTensors().ok());
  EXPECT_EQ(interpreter->node(b.pad_node).fused_into, -1);
  options.fuse_nodes = true;
  interpreter = Interpreter::Create(
      std::shared_ptr<const ModelDef>(&b.model.model(), [](const ModelDef*) {}), options, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(interpreter->AllocateTensors().ok());
  EXPECT_EQ(interpreter->node(b.pad_node).fused_into, b.conv_node);
}

}  // namespace
}  // namespace delegato
