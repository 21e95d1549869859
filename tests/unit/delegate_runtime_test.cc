// The interpreter's delegate machinery: partitions replaced by delegate
// nodes numbered after the model's, boundary tensors handed over, CPU
// fallback when the delegate's Prepare fails, placements with reasons.
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delegate/emulated_delegate.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OpModel;

// in -> ADD(+c) -> RELU -> ADD(+c) -> out, all float32:
//   node 0 ADD, node 1 RELU, node 2 ADD.
void BuildChain(OpModel& m) {
  int in = m.AddInput(DataType::kFloat32, {4}, {}, "in");
  int c = m.AddConst<float>(DataType::kFloat32, {4}, {1.0f, -2.0f, 3.0f, -4.0f});
  int a = m.AddTensor(DataType::kFloat32);
  int r = m.AddTensor(DataType::kFloat32);
  int out = m.AddOutput(DataType::kFloat32, {}, {}, "out");
  m.AddOp(BuiltinOp::kAdd, {in, c}, {a}, ElementwiseParams{});
  m.AddOp(BuiltinOp::kRelu, {a}, {r});
  m.AddOp(BuiltinOp::kAdd, {r, c}, {out}, ElementwiseParams{});
}

NodeSupport SupportAdds(const ModelDef& model, int node) {
  const auto& op = model.subgraphs[0].operators[node];
  if (model.operator_codes[op.opcode_index].builtin == BuiltinOp::kAdd) return {true, {}};
  return {false, {{ReasonCode::kUnsupportedOp, "delegate", "only ADD", "none"}}};
}

TEST(DelegateRuntimeTest, PartitionsBecomeDelegateNodesWithSameResults) {
  OpModel m;
  BuildChain(m);
  m.Build();
  m.SetInput<float>(0, {0.5f, 0.5f, -9.0f, 1.0f});
  m.Invoke();
  const std::vector<float> cpu = m.GetOutput<float>(0);

  EmulatedDelegate delegate("adds", SupportAdds, DelegateOptions{});
  ASSERT_TRUE(m.interpreter().ModifyGraphWithDelegate(&delegate).ok());
  // Nodes 0 and 2 are delegated in two partitions (RELU sits between them);
  // delegate nodes take indices 3 and 4, after the model's three nodes.
  EXPECT_THAT(m.interpreter().execution_plan(), ElementsAre(3, 1, 4));
  EXPECT_EQ(m.interpreter().node(3).op_name, "adds");
  ASSERT_EQ(m.interpreter().delegation_log().size(), 1u);
  EXPECT_EQ(m.interpreter().delegation_log()[0],
            "adds delegate: 2 nodes delegated out of 3 nodes with 2 partitions.");
  const auto& placements = m.interpreter().placements();
  EXPECT_TRUE(placements[0].delegated);
  EXPECT_FALSE(placements[1].delegated);
  ASSERT_EQ(placements[1].reasons.size(), 1u);
  EXPECT_EQ(placements[1].reasons[0].message, "only ADD");

  m.SetInput<float>(0, {0.5f, 0.5f, -9.0f, 1.0f});
  m.Invoke();
  EXPECT_EQ(m.GetOutput<float>(0), cpu);
  ASSERT_EQ(delegate.stats().size(), 2u);
  EXPECT_EQ(delegate.stats()[0].bytes_in, 16u);  // the 4-float input; the constant stays on the device
  EXPECT_EQ(delegate.stats()[0].invocations, 1);
}

TEST(DelegateRuntimeTest, PartitionLimitKeepsLargestAndSaysWhy) {
  OpModel m;
  BuildChain(m);
  m.Build();
  DelegateOptions options;
  options.max_delegated_partitions = 1;
  EmulatedDelegate delegate("adds", SupportAdds, options);
  ASSERT_TRUE(m.interpreter().ModifyGraphWithDelegate(&delegate).ok());
  // Two equal partitions: the first is kept, the second falls back.
  EXPECT_TRUE(m.interpreter().placements()[0].delegated);
  ASSERT_FALSE(m.interpreter().placements()[2].delegated);
  EXPECT_EQ(m.interpreter().placements()[2].reasons.back().code, ReasonCode::kPartitionLimit);
}

class FailingKernel : public DelegateKernel {
 public:
  Status Prepare(std::span<const TensorView>, std::vector<std::vector<int32_t>>*) override {
    return Status::Error("device out of memory");
  }
  Status Eval(std::span<const TensorView>, std::span<const TensorView>) override {
    return Status::Error("not reached");
  }
};

class FailingDelegate : public Delegate {
 public:
  std::string name() const override { return "failing"; }
  NodeSupport Supports(const ModelDef&, int) override { return {true, {}}; }
  std::unique_ptr<DelegateKernel> CreateKernel(const ModelDef&, const DelegatePartition&) override {
    return std::make_unique<FailingKernel>();
  }
};

TEST(DelegateRuntimeTest, FailedPrepareFallsBackToCpuWithWarning) {
  OpModel m;
  BuildChain(m);
  m.Build();
  FailingDelegate delegate;
  ASSERT_TRUE(m.interpreter().ModifyGraphWithDelegate(&delegate).ok());
  EXPECT_THAT(m.interpreter().execution_plan(), ElementsAre(0, 1, 2));
  ASSERT_EQ(m.interpreter().warnings().size(), 1u);
  EXPECT_THAT(m.interpreter().warnings()[0], HasSubstr("device out of memory"));
  EXPECT_THAT(m.interpreter().warnings()[0], HasSubstr("without delegate 'failing'"));
  m.SetInput<float>(0, {1.0f, 1.0f, 1.0f, 1.0f});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(3.0f, -2.0f, 7.0f, -4.0f));
}

TEST(DelegateRuntimeTest, SecondDelegateOnlySeesWhatTheFirstLeft) {
  OpModel m;
  BuildChain(m);
  m.Build();
  EmulatedDelegate adds("adds", SupportAdds, DelegateOptions{});
  EmulatedDelegate everything("everything", [](const ModelDef&, int) { return NodeSupport{true, {}}; },
                              DelegateOptions{});
  ASSERT_TRUE(m.interpreter().ModifyGraphWithDelegate(&adds).ok());
  ASSERT_TRUE(m.interpreter().ModifyGraphWithDelegate(&everything).ok());
  // RELU goes to the second delegate; the ADD partitions stay with the first.
  EXPECT_TRUE(m.interpreter().placements()[1].delegated);
  EXPECT_EQ(m.interpreter().placements()[1].delegate, "everything");
  EXPECT_EQ(m.interpreter().placements()[0].delegate, "adds");
  m.SetInput<float>(0, {1.0f, 1.0f, 1.0f, 1.0f});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(3.0f, -2.0f, 7.0f, -4.0f));
}

TEST(DelegateRuntimeTest, SameDelegateTwiceIsRejected) {
  OpModel m;
  BuildChain(m);
  m.Build();
  EmulatedDelegate adds("adds", SupportAdds, DelegateOptions{});
  ASSERT_TRUE(m.interpreter().ModifyGraphWithDelegate(&adds).ok());
  Status status = m.interpreter().ModifyGraphWithDelegate(&adds);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("already applied"));
}

// Stateful models (LSTM and SVDF keep state in variable tensors): a
// partition holding the stateful node must carry the updated state back, so
// every invocation after the first still matches the CPU.
std::vector<std::vector<uint8_t>> InvokeWithSeed(Interpreter& interpreter, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int i = 0; i < interpreter.num_inputs(); ++i) {
    const TensorView in = interpreter.input(i);
    auto* bytes = static_cast<uint8_t*>(in.data);
    for (size_t b = 0; b < in.bytes; ++b) bytes[b] = static_cast<uint8_t>(rng());
    if (in.type == DataType::kFloat32)  // finite values in [-1, 1)
      for (size_t e = 0; e < in.bytes / 4; ++e)
        reinterpret_cast<float*>(bytes)[e] = static_cast<float>(rng() % 2000) / 1000.0f - 1.0f;
  }
  EXPECT_TRUE(interpreter.Invoke().ok());
  std::vector<std::vector<uint8_t>> outputs;
  for (int i = 0; i < interpreter.num_outputs(); ++i) {
    const TensorView out = interpreter.output(i);
    const auto* bytes = static_cast<const uint8_t*>(out.data);
    outputs.emplace_back(bytes, bytes + out.bytes);
  }
  return outputs;
}

void ExpectStateSurvivesDelegation(const std::string& path, EmulatedDelegate::SupportFn support) {
  std::shared_ptr<const ModelDef> model;
  ASSERT_TRUE(LoadModel(path, &model).ok());
  Status status;
  auto cpu = Interpreter::Create(model, InterpreterOptions{}, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(cpu->AllocateTensors().ok());
  auto delegated = Interpreter::Create(model, InterpreterOptions{}, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  EmulatedDelegate delegate("device", std::move(support), DelegateOptions{});
  ASSERT_TRUE(delegated->ModifyGraphWithDelegate(&delegate).ok());
  ASSERT_TRUE(delegated->warnings().empty()) << delegated->warnings()[0];
  ASSERT_FALSE(delegate.stats().empty());
  // The host's state tensors too: an output may not show a lost state at once.
  std::vector<int> state_tensors;
  for (size_t t = 0; t < model->subgraphs[0].tensors.size(); ++t)
    if (model->subgraphs[0].tensors[t].is_variable) state_tensors.push_back(static_cast<int>(t));
  ASSERT_FALSE(state_tensors.empty()) << path;
  auto state_bytes = [&](const Interpreter& interpreter) {
    std::vector<std::vector<uint8_t>> bytes;
    for (int t : state_tensors) {
      const TensorView view = interpreter.tensor(t);
      const auto* p = static_cast<const uint8_t*>(view.data);
      bytes.emplace_back(p, p + view.bytes);
    }
    return bytes;
  };
  for (uint32_t run = 0; run < 4; ++run) {
    EXPECT_EQ(InvokeWithSeed(*delegated, run), InvokeWithSeed(*cpu, run)) << path << " run " << run;
    EXPECT_EQ(state_bytes(*delegated), state_bytes(*cpu)) << path << " state after run " << run;
  }
}

bool HasVariableInput(const ModelDef& model, int node) {
  const SubgraphDef& graph = model.subgraphs[0];
  for (int32_t t : graph.operators[node].inputs)
    if (t >= 0 && graph.tensors[t].is_variable) return true;
  return false;
}

TEST(DelegateRuntimeTest, LstmStateSurvivesDelegationAcrossInvocations) {
  REQUIRE_SHARED_MODEL(path, "keras_lstm_mnist_ptq.tflite");
  ExpectStateSurvivesDelegation(path, [](const ModelDef&, int) { return NodeSupport{true, {}}; });
}

TEST(DelegateRuntimeTest, SvdfStateSurvivesWhenOnlyStatefulNodesAreDelegated) {
  REQUIRE_SHARED_MODEL(path, "keyword_scrambled.tflite");
  ExpectStateSurvivesDelegation(path, [](const ModelDef& model, int node) {
    if (HasVariableInput(model, node)) return NodeSupport{true, {}};
    return NodeSupport{false, {{ReasonCode::kUnsupportedOp, "delegate", "stateless", "none"}}};
  });
}

}  // namespace
}  // namespace delegato
