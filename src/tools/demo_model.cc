// The demo model the project generates itself, so the README's first command
// runs end to end without any downloaded model: a small uint8 MobileNet-style
// block (CONV_2D, DEPTHWISE_CONV_2D, a residual ADD, AVERAGE_POOL_2D, RESHAPE,
// FULLY_CONNECTED, SOFTMAX) on a 32x32x3 input, 10 classes, with weights
// drawn from a fixed seed.
#include <cstring>
#include <random>

#include "tools/tool_util.h"

namespace delegato::tools {
namespace {

class DemoBuilder {
 public:
  DemoBuilder() : model_(std::make_shared<ModelDef>()), rng_(2024) {
    model_->description = "delegato demo model";
    model_->subgraphs.emplace_back();
    model_->subgraphs[0].name = "main";
    model_->buffers.emplace_back();
  }

  int Tensor(const std::string& name, DataType type, std::vector<int32_t> shape, float scale,
             int64_t zero_point) {
    TensorDef t;
    t.name = name;
    t.type = type;
    t.shape = std::move(shape);
    t.quantization.scale = {scale};
    t.quantization.zero_point = {zero_point};
    graph().tensors.push_back(std::move(t));
    return static_cast<int>(graph().tensors.size()) - 1;
  }

  int Weights(const std::string& name, std::vector<int32_t> shape, float scale) {
    int t = Tensor(name, DataType::kUInt8, shape, scale, 128);
    size_t n = 1;
    for (int32_t d : shape) n *= d;
    std::vector<uint8_t> data(n);
    std::uniform_int_distribution<int> dist(128 - 60, 128 + 60);
    for (uint8_t& v : data) v = static_cast<uint8_t>(dist(rng_));
    SetData(t, std::move(data));
    return t;
  }

  int Bias(const std::string& name, int32_t channels, float scale) {
    int t = Tensor(name, DataType::kInt32, {channels}, scale, 0);
    std::vector<int32_t> values(channels);
    std::uniform_int_distribution<int32_t> dist(-200, 200);
    for (int32_t& v : values) v = dist(rng_);
    std::vector<uint8_t> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    SetData(t, std::move(bytes));
    return t;
  }

  int Int32Const(const std::string& name, std::vector<int32_t> values) {
    TensorDef t;
    t.name = name;
    t.type = DataType::kInt32;
    t.shape = {static_cast<int32_t>(values.size())};
    graph().tensors.push_back(std::move(t));
    int index = static_cast<int>(graph().tensors.size()) - 1;
    std::vector<uint8_t> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    SetData(index, std::move(bytes));
    return index;
  }

  void Op(BuiltinOp op, int version, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
          OpParams params) {
    uint32_t code = 0;
    for (; code < model_->operator_codes.size(); ++code)
      if (model_->operator_codes[code].builtin == op) break;
    if (code == model_->operator_codes.size()) model_->operator_codes.push_back({op, "", version});
    OperatorDef def;
    def.opcode_index = code;
    def.inputs = std::move(inputs);
    def.outputs = std::move(outputs);
    def.params = std::move(params);
    graph().operators.push_back(std::move(def));
  }

  SubgraphDef& graph() { return model_->subgraphs[0]; }
  std::shared_ptr<ModelDef> model() { return model_; }

 private:
  void SetData(int tensor, std::vector<uint8_t> bytes) {
    model_->buffers.push_back(BufferDef{std::move(bytes)});
    graph().tensors[tensor].buffer = static_cast<uint32_t>(model_->buffers.size() - 1);
  }

  std::shared_ptr<ModelDef> model_;
  std::mt19937 rng_;
};

}  // namespace

std::shared_ptr<ModelDef> BuildDemoModel() {
  DemoBuilder b;
  const float in_s = 1.0f / 128, w_s = 0.01f, act_s = 6.0f / 255;
  int input = b.Tensor("input", DataType::kUInt8, {1, 32, 32, 3}, in_s, 128);
  int conv1 = b.Tensor("conv1", DataType::kUInt8, {1, 16, 16, 16}, act_s, 0);
  b.Op(BuiltinOp::kConv2d, 1,
       {input, b.Weights("conv1/weights", {16, 3, 3, 3}, w_s), b.Bias("conv1/bias", 16, in_s * w_s)},
       {conv1}, Conv2DParams{Padding::kSame, 2, 2, 1, 1, Activation::kRelu6});
  int dw = b.Tensor("dw", DataType::kUInt8, {1, 16, 16, 16}, act_s, 0);
  b.Op(BuiltinOp::kDepthwiseConv2d, 1,
       {conv1, b.Weights("dw/weights", {1, 3, 3, 16}, w_s), b.Bias("dw/bias", 16, act_s * w_s)},
       {dw}, DepthwiseConv2DParams{Padding::kSame, 1, 1, 1, 1, 1, Activation::kRelu6});
  int proj = b.Tensor("project", DataType::kUInt8, {1, 16, 16, 16}, act_s, 0);
  b.Op(BuiltinOp::kConv2d, 1,
       {dw, b.Weights("project/weights", {16, 1, 1, 16}, w_s), b.Bias("project/bias", 16, act_s * w_s)},
       {proj}, Conv2DParams{Padding::kValid, 1, 1, 1, 1, Activation::kRelu6});
  int sum = b.Tensor("residual", DataType::kUInt8, {1, 16, 16, 16}, 2 * act_s, 0);
  b.Op(BuiltinOp::kAdd, 1, {conv1, proj}, {sum}, ElementwiseParams{Activation::kNone});
  int pool = b.Tensor("pool", DataType::kUInt8, {1, 1, 1, 16}, 2 * act_s, 0);
  b.Op(BuiltinOp::kAveragePool2d, 1, {sum}, {pool},
       Pool2DParams{Padding::kValid, 16, 16, 16, 16, Activation::kNone});
  int flat = b.Tensor("flatten", DataType::kUInt8, {1, 16}, 2 * act_s, 0);
  b.Op(BuiltinOp::kReshape, 1, {pool, b.Int32Const("flatten/shape", {1, 16})}, {flat},
       ReshapeParams{{1, 16}, true});
  int logits = b.Tensor("logits", DataType::kUInt8, {1, 10}, 0.1f, 128);
  b.Op(BuiltinOp::kFullyConnected, 1,
       {flat, b.Weights("fc/weights", {10, 16}, w_s), b.Bias("fc/bias", 10, 2 * act_s * w_s)},
       {logits}, FullyConnectedParams{});
  int probs = b.Tensor("probabilities", DataType::kUInt8, {1, 10}, 1.0f / 256, 0);
  b.Op(BuiltinOp::kSoftmax, 1, {logits}, {probs}, SoftmaxParams{1.0f});
  b.graph().inputs = {input};
  b.graph().outputs = {probs};
  return b.model();
}

}  // namespace delegato::tools
