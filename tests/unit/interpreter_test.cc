// Interpreter-level behaviour independent of any particular kernel: how
// nodes without kernels, bad indices and API misuse are reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "test_util.h"
#include "tools/commands.h"

namespace delegato {
namespace {

using ::testing::HasSubstr;
using testing::OpModel;

TEST(InterpreterTest, UnknownCustomOpNamesNodeAndCode) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 4});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddCustomOp("fake-op-double", {in}, {out}, {});
  Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("node 0"));
  EXPECT_THAT(status.message(), HasSubstr("fake-op-double"));
  EXPECT_THAT(status.message(), HasSubstr("not supported"));
}

TEST(InterpreterTest, UnimplementedBuiltinNamesOp) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 4});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kLshProjection, {in}, {out});
  Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("node 0 (LSH_PROJECTION)"));
}

// Two unsupported nodes (an unknown builtin, an unsupported version): Create
// names the first with its version and tensor types and counts the rest;
// `inspect` lists both.
OpModel TwoUnsupportedNodes() {
  OpModel m;
  int in = m.AddInput(DataType::kInt8, {1, 4}, testing::Q(0.5f, 0));
  int mid = m.AddTensor(DataType::kInt8, testing::Q(0.5f, 0), {1, 4});
  int out = m.AddOutput(DataType::kFloat32, {}, {1, 4});
  m.AddOp(BuiltinOp::kLshProjection, {in}, {mid});
  m.AddOp(BuiltinOp::kDequantize, {mid}, {out}, std::monostate{}, 99);
  return m;
}

TEST(InterpreterTest, CreateErrorNamesNodeOpVersionAndTypes) {
  OpModel m = TwoUnsupportedNodes();
  Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("node 0 (LSH_PROJECTION): op is not supported"));
  EXPECT_THAT(status.message(), HasSubstr("version 1; inputs: int8 [1,4]; outputs: int8 [1,4]"));
  EXPECT_THAT(status.message(), HasSubstr("1 more unsupported node(s)"));
}

TEST(InterpreterTest, InspectListsEveryUnsupportedNode) {
  OpModel m = TwoUnsupportedNodes();
  const std::string path = ::testing::TempDir() + "/two_unsupported.tflite";
  WriteModelFile(m.model(), path);
  std::ostringstream captured;
  std::streambuf* saved = std::cout.rdbuf(captured.rdbuf());
  const int code = tools::CmdInspect({path});
  std::cout.rdbuf(saved);
  EXPECT_EQ(code, 1);
  const std::string text = captured.str();
  EXPECT_THAT(text, HasSubstr("unsupported nodes: 2\n"));
  EXPECT_THAT(text, HasSubstr("  node 0 (LSH_PROJECTION): op is not supported by this runtime "
                              "(version 1; inputs: int8 [1,4]; outputs: int8 [1,4])\n"));
  EXPECT_THAT(text, HasSubstr("  node 1 (DEQUANTIZE): op version 99 is not supported (this "
                              "runtime implements versions 1..8) (version 99; inputs: int8 "
                              "[1,4]; outputs: float32 [1,4])\n"));
  std::remove(path.c_str());
}

TEST(InterpreterTest, RejectsBadThreadCount) {
  OpModel m;
  m.AddInput(DataType::kFloat32, {1});
  Status status = m.TryBuild(0);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("num_threads"));
}

TEST(InterpreterTest, GraphWithoutNodesPassesInputThrough) {
  // An output that is also an input: allocation and invoke succeed, data shared.
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2});
  m.model().subgraphs[0].outputs.push_back(in);
  m.Build();
  m.SetInput<float>(0, {1.5f, -2.0f});
  m.Invoke();
  EXPECT_EQ(m.GetOutput<float>(0), (std::vector<float>{1.5f, -2.0f}));
}

TEST(InterpreterTest, EmptyBufferlessTensorIsAnEmptyConstant) {
  // MEAN over an empty axis list: the axis tensor [0] has no buffer and no
  // producer. LiteRT treats it as an empty constant; so do we.
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2});
  int axes = m.AddTensor(DataType::kInt32, {}, {0});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kMean, {in, axes}, {out}, ReducerParams{false});
  m.Build();
  m.SetInput<float>(0, {1.5f, -2.0f});
  m.Invoke();
  EXPECT_EQ(m.GetOutput<float>(0), (std::vector<float>{1.5f, -2.0f}));
}

TEST(InterpreterTest, ResizeInputOutOfRangeFails) {
  OpModel m;
  m.AddInput(DataType::kFloat32, {2});
  m.Build();
  EXPECT_FALSE(m.interpreter().ResizeInput(3, {4}).ok());
  EXPECT_FALSE(m.interpreter().ResizeInput(0, {-1}).ok());
  ASSERT_TRUE(m.interpreter().ResizeInput(0, {5}).ok());
  // Invoke after a resize needs a new AllocateTensors.
  EXPECT_FALSE(m.interpreter().Invoke().ok());
  ASSERT_TRUE(m.interpreter().AllocateTensors().ok());
  EXPECT_EQ(m.interpreter().input(0).bytes, 20u);
}

TEST(InterpreterTest, HugeInputIsRejectedNotAllocated) {
  OpModel m;
  m.AddInput(DataType::kFloat32, {1 << 20, 1 << 20, 1 << 10});
  Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("too large"));
}

TEST(InterpreterTest, ArenaLimitIsEnforced) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1024});
  m.model().subgraphs[0].outputs.push_back(in);
  Status status;
  InterpreterOptions options;
  options.max_arena_bytes = 1000;
  auto interpreter = Interpreter::Create(
      std::shared_ptr<const ModelDef>(&m.model(), [](const ModelDef*) {}), options, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  status = interpreter->AllocateTensors();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("over the limit"));
}

}  // namespace
}  // namespace delegato

namespace delegato {
namespace {

TEST(InterpreterLifetimeTest, InputsSurviveInvoke) {
  // in -> RELU -> a -> RELU -> out: without a whole-Invoke lifetime for the
  // input, the planner could hand its memory to `out`, and a second Invoke
  // would read the first one's results.
  testing::OpModel m;
  int in = m.AddInput(DataType::kFloat32, {4});
  int a = m.AddTensor(DataType::kFloat32);
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kRelu, {in}, {a});
  m.AddOp(BuiltinOp::kRelu, {a}, {out});
  m.Build();
  m.SetInput<float>(0, {-1.0f, 2.0f, -3.0f, 4.0f});
  m.Invoke();
  EXPECT_EQ(m.interpreter().input(0).data == m.interpreter().output(0).data, false);
  const std::vector<float> first = m.GetOutput<float>(0);
  m.Invoke();
  EXPECT_EQ(m.GetOutput<float>(0), first);
  const float* input = static_cast<const float*>(m.interpreter().input(0).data);
  EXPECT_EQ(input[0], -1.0f);
}


// The resident kB of the mapping that starts at `start` (/proc/self/smaps),
// or -1 when it is not found.
int64_t ResidentKb(const void* start) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_mapping = false;
  while (std::getline(smaps, line)) {
    const size_t dash = line.find('-');
    if (dash != std::string::npos && dash < 17 && line.find(' ') > dash) {
      in_mapping =
          std::stoull(line.substr(0, dash), nullptr, 16) == reinterpret_cast<uintptr_t>(start);
      continue;
    }
    if (in_mapping && line.rfind("Rss:", 0) == 0) return std::stoll(line.substr(4));
  }
  return -1;
}

// A model read from a file views its mapped weights, and the interpreter
// lets the OS drop their pages once Prepare has packed them; a constant read
// in Eval (ADD's) comes back from the file. Outputs are those of the same
// model held in memory, invocation after invocation, with both kernel sets.
TEST(InterpreterTest, MappedModelRunsLikeTheModelInMemory) {
  OpModel m;
  std::vector<float> weights(256 * 64), addend(64 * 64);
  for (size_t i = 0; i < weights.size(); ++i)
    weights[i] = static_cast<float>(i % 13) * 0.01f - 0.06f;
  for (size_t i = 0; i < addend.size(); ++i) addend[i] = static_cast<float>(i % 7) * 0.5f;
  const int in = m.AddInput(DataType::kFloat32, {64, 256});
  const int w = m.AddConst<float>(DataType::kFloat32, {64, 256}, weights);
  const int fc = m.AddTensor(DataType::kFloat32);
  const int a = m.AddConst<float>(DataType::kFloat32, {64, 64}, addend);
  const int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kFullyConnected, {in, w, -1}, {fc}, FullyConnectedParams{});
  m.AddOp(BuiltinOp::kAdd, {fc, a}, {out}, ElementwiseParams{});
  const std::string path = ::testing::TempDir() + "/mapped_weights.tflite";
  WriteModelFile(m.model(), path);
  std::vector<float> input(64 * 256);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i % 11) - 5.0f;
  for (KernelSet kernels : {KernelSet::kOptimized, KernelSet::kReference}) {
    std::shared_ptr<const ModelDef> mapped;
    ASSERT_TRUE(LoadModel(path, &mapped).ok());
    ASSERT_NE(mapped->mapping, nullptr);
    auto run = [&](std::shared_ptr<const ModelDef> model) {
      InterpreterOptions options;
      options.kernels = kernels;
      Status status;
      const MappedFile* file = model->mapping.get();
      auto interpreter = Interpreter::Create(std::move(model), options, &status);
      EXPECT_TRUE(status.ok()) << status.message();
      EXPECT_TRUE(interpreter->AllocateTensors().ok());
      // Prepare has read every constant (80 kB); at most the pages the
      // weights share with the FlatBuffer's tables stay mapped in (84 kB
      // when nothing is dropped).
      if (file != nullptr) EXPECT_LT(ResidentKb(file->data), 32);
      std::vector<std::vector<float>> outputs;
      for (int r = 0; r < 2; ++r) {
        TensorView view = interpreter->input(0);
        std::memcpy(view.data, input.data(), view.bytes);
        EXPECT_TRUE(interpreter->Invoke().ok());
        TensorView result = interpreter->output(0);
        const float* values = reinterpret_cast<const float*>(result.data);
        outputs.emplace_back(values, values + result.bytes / sizeof(float));
      }
      return outputs;
    };
    const auto from_file = run(mapped);
    const auto in_memory = run(std::make_shared<ModelDef>(m.model()));
    ASSERT_EQ(from_file.size(), 2u);
    EXPECT_EQ(from_file[0], in_memory[0]);
    EXPECT_EQ(from_file[1], in_memory[0]);
    EXPECT_EQ(in_memory[1], in_memory[0]);
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace delegato
