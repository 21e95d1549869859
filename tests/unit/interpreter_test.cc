// Interpreter-level behaviour independent of any particular kernel: how
// nodes without kernels, bad indices and API misuse are reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
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

}  // namespace
}  // namespace delegato
