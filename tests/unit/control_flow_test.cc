// IF, WHILE, CALL_ONCE (subgraphs run by the interpreter) and the resource
// variable ops VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/model.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OpModel;

// Subgraph `index` computes out = a <op> b on float32 [2] inputs.
void AddBinarySubgraph(OpModel& m, BuiltinOp op) {
  const int a = m.AddInput(DataType::kFloat32, {2});
  const int b = m.AddInput(DataType::kFloat32, {2});
  const int out = m.AddOutput(DataType::kFloat32, {}, {2});
  m.AddOp(op, {a, b}, {out}, ElementwiseParams{});
}

// IF(cond, a, b): then = a + b, else = a * b.
void BuildIfModel(OpModel& m) {
  const int cond = m.AddInput(DataType::kBool, {});
  const int a = m.AddInput(DataType::kFloat32, {2});
  const int b = m.AddInput(DataType::kFloat32, {2});
  const int out = m.AddOutput(DataType::kFloat32, {}, {2});
  m.AddOp(BuiltinOp::kIf, {cond, a, b}, {out}, IfParams{1, 2});
  m.AddSubgraph();
  AddBinarySubgraph(m, BuiltinOp::kAdd);
  m.AddSubgraph();
  AddBinarySubgraph(m, BuiltinOp::kMul);
  m.SetSubgraph(0);
}

TEST(If, ChoosesTheBranchByTheCondition) {
  OpModel m;
  BuildIfModel(m);
  m.Build();
  m.SetInput<uint8_t>(0, {1});
  m.SetInput<float>(1, {2.0f, 3.0f});
  m.SetInput<float>(2, {4.0f, 5.0f});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(6.0f, 8.0f));
  m.SetInput<uint8_t>(0, {0});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(8.0f, 15.0f));
}

TEST(If, BranchesWithDifferentOutputCountsAreRejected) {
  OpModel m;
  const int cond = m.AddInput(DataType::kBool, {});
  const int a = m.AddInput(DataType::kFloat32, {2});
  const int b = m.AddInput(DataType::kFloat32, {2});
  const int out = m.AddOutput(DataType::kFloat32, {}, {2});
  m.AddOp(BuiltinOp::kIf, {cond, a, b}, {out}, IfParams{1, 2});
  m.AddSubgraph();
  AddBinarySubgraph(m, BuiltinOp::kAdd);
  m.AddSubgraph();
  AddBinarySubgraph(m, BuiltinOp::kMul);
  m.model().subgraphs[2].outputs.push_back(0);  // input a, passed through as a second output
  m.SetSubgraph(0);
  const Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("node 0 (IF): else subgraph 2 has 2 outputs, the node has 1"));
}

TEST(If, BranchInputTypeMismatchIsRejected) {
  OpModel m;
  const int cond = m.AddInput(DataType::kBool, {});
  const int a = m.AddInput(DataType::kFloat32, {2});
  const int b = m.AddInput(DataType::kFloat32, {2});
  const int out = m.AddOutput(DataType::kFloat32, {}, {2});
  m.AddOp(BuiltinOp::kIf, {cond, a, b}, {out}, IfParams{1, 2});
  m.AddSubgraph();
  AddBinarySubgraph(m, BuiltinOp::kAdd);
  m.AddSubgraph();
  const int x = m.AddInput(DataType::kInt32, {2});
  const int y = m.AddInput(DataType::kInt32, {2});
  const int z = m.AddOutput(DataType::kInt32, {}, {2});
  m.AddOp(BuiltinOp::kAdd, {x, y}, {z}, ElementwiseParams{});
  m.SetSubgraph(0);
  const Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("node 0 (IF): else subgraph 2 input 0 (\"t0\") is INT32, the node passes "
                        "FLOAT32"));
}

TEST(If, BadSubgraphIndexIsRejected) {
  OpModel m;
  const int cond = m.AddInput(DataType::kBool, {});
  const int a = m.AddInput(DataType::kFloat32, {2});
  const int out = m.AddOutput(DataType::kFloat32, {}, {2});
  m.AddOp(BuiltinOp::kIf, {cond, a}, {out}, IfParams{1, 7});
  m.AddSubgraph();
  const int x = m.AddInput(DataType::kFloat32, {2});
  m.model().subgraphs[1].outputs.push_back(x);
  m.SetSubgraph(0);
  const Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("subgraph 0 node 0 (IF): calls subgraph 7, but the model has 2 subgraphs"));
}

TEST(If, UnsupportedNodeInABranchIsNamed) {
  OpModel m;
  const int cond = m.AddInput(DataType::kBool, {});
  const int a = m.AddInput(DataType::kFloat32, {2});
  const int out = m.AddOutput(DataType::kFloat32, {}, {2});
  m.AddOp(BuiltinOp::kIf, {cond, a}, {out}, IfParams{1, 1});
  m.AddSubgraph();
  const int x = m.AddInput(DataType::kFloat32, {2});
  const int y = m.AddOutput(DataType::kFloat32, {}, {2});
  m.AddOp(BuiltinOp::kRfft2d, {x}, {y});
  m.SetSubgraph(0);
  const Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("subgraph 1 node 0 (RFFT2D): op is not supported by this runtime"));
}

TEST(If, RecursiveCallsAreRejected) {
  OpModel m;
  const int cond = m.AddInput(DataType::kBool, {});
  const int a = m.AddInput(DataType::kFloat32, {2});
  const int out = m.AddOutput(DataType::kFloat32, {}, {2});
  m.AddOp(BuiltinOp::kIf, {cond, a}, {out}, IfParams{1, 1});
  m.AddSubgraph();  // subgraph 1 calls itself
  const int c1 = m.AddInput(DataType::kBool, {});
  const int x = m.AddInput(DataType::kFloat32, {2});
  const int y = m.AddOutput(DataType::kFloat32, {}, {2});
  m.AddOp(BuiltinOp::kIf, {c1, x}, {y}, IfParams{1, 1});
  m.SetSubgraph(0);
  const Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("calls subgraph 1 recursively (0 -> 1 -> 1)"));
}

// while (i < 5) { i += 1; x = x + x; }
void BuildCountingLoop(OpModel& m, bool body_concatenates) {
  const int i = m.AddInput(DataType::kInt32, {});
  const int x = m.AddInput(DataType::kFloat32, {2});
  const int i_out = m.AddOutput(DataType::kInt32, {}, {});
  const int x_out = m.AddOutput(DataType::kFloat32, {}, {2});
  m.AddOp(BuiltinOp::kWhile, {i, x}, {i_out, x_out}, WhileParams{1, 2});

  m.AddSubgraph();  // 1: cond
  {
    const int ci = m.AddInput(DataType::kInt32, {});
    m.AddInput(DataType::kFloat32, {2});
    const int limit = m.AddConst<int32_t>(DataType::kInt32, {}, {5});
    const int less = m.AddOutput(DataType::kBool, {}, {});
    m.AddOp(BuiltinOp::kLess, {ci, limit}, {less});
  }
  m.AddSubgraph();  // 2: body
  {
    const int bi = m.AddInput(DataType::kInt32, {});
    const int bx = m.AddInput(DataType::kFloat32, {2});
    const int one = m.AddConst<int32_t>(DataType::kInt32, {}, {1});
    const int next_i = m.AddOutput(DataType::kInt32, {}, {});
    m.AddOp(BuiltinOp::kAdd, {bi, one}, {next_i}, ElementwiseParams{});
    const int next_x = m.AddOutput(DataType::kFloat32, {}, {body_concatenates ? 4 : 2});
    if (body_concatenates)
      m.AddOp(BuiltinOp::kConcatenation, {bx, bx}, {next_x}, ConcatenationParams{});
    else
      m.AddOp(BuiltinOp::kAdd, {bx, bx}, {next_x}, ElementwiseParams{});
  }
  m.SetSubgraph(0);
}

TEST(While, CountingLoop) {
  OpModel m;
  BuildCountingLoop(m, false);
  m.Build();
  m.SetInput<int32_t>(0, {0});
  m.SetInput<float>(1, {1.0f, -2.0f});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(5));
  EXPECT_THAT(m.GetOutput<float>(1), ElementsAre(32.0f, -64.0f));
  // The condition is false at once: the outputs are the inputs.
  m.SetInput<int32_t>(0, {7});
  m.SetInput<float>(1, {3.0f, 4.0f});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(7));
  EXPECT_THAT(m.GetOutput<float>(1), ElementsAre(3.0f, 4.0f));
  m.SetInput<int32_t>(0, {3});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(5));
  EXPECT_THAT(m.GetOutput<float>(1), ElementsAre(12.0f, 16.0f));
}

// while (i < 4) { x = i < 2 ? x + x : x * x; i += 1; } with the choice an IF
// inside the body: subgraphs called from a called subgraph.
TEST(While, BodyWithAnIfInside) {
  OpModel m;
  const int i = m.AddInput(DataType::kInt32, {});
  const int x = m.AddInput(DataType::kFloat32, {2});
  const int i_out = m.AddOutput(DataType::kInt32, {}, {});
  const int x_out = m.AddOutput(DataType::kFloat32, {}, {2});
  m.AddOp(BuiltinOp::kWhile, {i, x}, {i_out, x_out}, WhileParams{1, 2});
  m.AddSubgraph();  // 1: cond
  {
    const int ci = m.AddInput(DataType::kInt32, {});
    m.AddInput(DataType::kFloat32, {2});
    const int limit = m.AddConst<int32_t>(DataType::kInt32, {}, {4});
    const int less = m.AddOutput(DataType::kBool, {}, {});
    m.AddOp(BuiltinOp::kLess, {ci, limit}, {less});
  }
  m.AddSubgraph();  // 2: body
  {
    const int bi = m.AddInput(DataType::kInt32, {});
    const int bx = m.AddInput(DataType::kFloat32, {2});
    const int one = m.AddConst<int32_t>(DataType::kInt32, {}, {1});
    const int two = m.AddConst<int32_t>(DataType::kInt32, {}, {2});
    const int next_i = m.AddOutput(DataType::kInt32, {}, {});
    m.AddOp(BuiltinOp::kAdd, {bi, one}, {next_i}, ElementwiseParams{});
    const int early = m.AddTensor(DataType::kBool, {}, {});
    m.AddOp(BuiltinOp::kLess, {bi, two}, {early});
    const int next_x = m.AddOutput(DataType::kFloat32, {}, {2});
    m.AddOp(BuiltinOp::kIf, {early, bx, bx}, {next_x}, IfParams{3, 4});
  }
  m.AddSubgraph();  // 3
  AddBinarySubgraph(m, BuiltinOp::kAdd);
  m.AddSubgraph();  // 4
  AddBinarySubgraph(m, BuiltinOp::kMul);
  m.SetSubgraph(0);
  m.Build();
  m.SetInput<int32_t>(0, {0});
  m.SetInput<float>(1, {1.5f, -1.0f});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(4));
  EXPECT_THAT(m.GetOutput<float>(1), ElementsAre(1296.0f, 256.0f));
  m.SetInput<int32_t>(0, {3});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(4));
  EXPECT_THAT(m.GetOutput<float>(1), ElementsAre(2.25f, 1.0f));
}

TEST(While, BodyChangingAShapeIsRejected) {
  OpModel m;
  BuildCountingLoop(m, true);
  const Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("node 0 (WHILE): body subgraph 2 changes the shape of loop variable 1 "
                        "from [2] to [4]"));
}

// Subgraph 0: CALL_ONCE(init); v = READ(h); out = v + x; ASSIGN(h, out).
// Init (subgraph 1): ASSIGN(h, [10, 20]).
void BuildAccumulator(OpModel& m, bool with_init) {
  const int x = m.AddInput(DataType::kFloat32, {2});
  const int out = m.AddOutput(DataType::kFloat32, {}, {2});
  if (with_init) m.AddOp(BuiltinOp::kCallOnce, {}, {}, CallOnceParams{1});
  const int handle = m.AddTensor(DataType::kResource, {}, {});
  m.AddOp(BuiltinOp::kVarHandle, {}, {handle}, VarHandleParams{"", "accumulator"});
  const int value = m.AddTensor(DataType::kFloat32, {}, {2});
  m.AddOp(BuiltinOp::kReadVariable, {handle}, {value}, EmptyParams{});
  m.AddOp(BuiltinOp::kAdd, {value, x}, {out}, ElementwiseParams{});
  m.AddOp(BuiltinOp::kAssignVariable, {handle, out}, {}, EmptyParams{});
  if (!with_init) return;
  m.AddSubgraph();
  const int init_handle = m.AddTensor(DataType::kResource, {}, {});
  m.AddOp(BuiltinOp::kVarHandle, {}, {init_handle}, VarHandleParams{"", "accumulator"});
  const int start = m.AddConst<float>(DataType::kFloat32, {2}, {10.0f, 20.0f});
  m.AddOp(BuiltinOp::kAssignVariable, {init_handle, start}, {}, EmptyParams{});
  m.SetSubgraph(0);
}

TEST(CallOnce, InitializesAVariableOnTheFirstInvokeOnly) {
  OpModel m;
  BuildAccumulator(m, true);
  m.Build();
  m.SetInput<float>(0, {1.0f, 2.0f});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(11.0f, 22.0f));
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(12.0f, 24.0f));
  m.SetInput<float>(0, {-0.5f, 0.25f});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(11.5f, 24.25f));
}

TEST(CallOnce, InitSubgraphWithOutputsIsRejected) {
  OpModel m;
  m.AddInput(DataType::kFloat32, {2});
  m.AddOp(BuiltinOp::kCallOnce, {}, {}, CallOnceParams{1});
  m.AddSubgraph();
  const int c = m.AddConst<float>(DataType::kFloat32, {1}, {1.0f});
  m.model().subgraphs[1].outputs.push_back(c);
  m.SetSubgraph(0);
  const Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("node 0 (CALL_ONCE): init subgraph 1 has 1 outputs, expected none"));
}

TEST(CallOnce, TooDeeplyNestedCallsAreRejected) {
  OpModel m;
  m.AddInput(DataType::kFloat32, {1});
  for (int s = 1; s <= 70; ++s) {
    m.AddOp(BuiltinOp::kCallOnce, {}, {}, CallOnceParams{s});
    m.AddSubgraph();
  }
  m.SetSubgraph(0);
  const Status status = m.TryBuild();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("subgraph calls nest deeper than 64 levels"));
}

TEST(ResourceVariable, AssignThenReadAcrossInvokes) {
  // Subgraph 0: v = READ(h) (the previous invoke's x); ASSIGN(h, x). A first
  // CALL_ONCE gives the variable its initial value.
  OpModel m;
  const int x = m.AddInput(DataType::kInt32, {3});
  const int previous = m.AddOutput(DataType::kInt32, {}, {3});
  m.AddOp(BuiltinOp::kCallOnce, {}, {}, CallOnceParams{1});
  const int handle = m.AddTensor(DataType::kResource, {}, {});
  m.AddOp(BuiltinOp::kVarHandle, {}, {handle}, VarHandleParams{"state", "last"});
  m.AddOp(BuiltinOp::kReadVariable, {handle}, {previous}, EmptyParams{});
  m.AddOp(BuiltinOp::kAssignVariable, {handle, x}, {}, EmptyParams{});
  m.AddSubgraph();
  const int init_handle = m.AddTensor(DataType::kResource, {}, {});
  m.AddOp(BuiltinOp::kVarHandle, {}, {init_handle}, VarHandleParams{"state", "last"});
  const int zeros = m.AddConst<int32_t>(DataType::kInt32, {3}, {0, 0, 0});
  m.AddOp(BuiltinOp::kAssignVariable, {init_handle, zeros}, {}, EmptyParams{});
  m.SetSubgraph(0);
  m.Build();
  m.SetInput<int32_t>(0, {1, 2, 3});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(0, 0, 0));
  m.SetInput<int32_t>(0, {4, 5, 6});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(1, 2, 3));
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int32_t>(0), ElementsAre(4, 5, 6));
}

TEST(ResourceVariable, ReadBeforeAssignIsAnInvokeError) {
  OpModel m;
  BuildAccumulator(m, false);
  m.Build();
  m.SetInput<float>(0, {1.0f, 2.0f});
  const Status status = m.TryInvoke();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("node 1 (READ_VARIABLE): the variable is read before"));
}

TEST(ResourceVariable, ReadOfADifferentShapeIsAnInvokeError) {
  OpModel m;
  const int x = m.AddInput(DataType::kFloat32, {3});
  const int out = m.AddOutput(DataType::kFloat32, {}, {2});
  const int handle = m.AddTensor(DataType::kResource, {}, {});
  m.AddOp(BuiltinOp::kVarHandle, {}, {handle}, VarHandleParams{"", "v"});
  m.AddOp(BuiltinOp::kAssignVariable, {handle, x}, {}, EmptyParams{});
  m.AddOp(BuiltinOp::kReadVariable, {handle}, {out}, EmptyParams{});
  m.Build();
  const Status status = m.TryInvoke();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("node 2 (READ_VARIABLE): the variable's type or size"));
}

TEST(ControlFlowOptions, SurviveWriteAndRead) {
  OpModel m;
  BuildCountingLoop(m, false);
  m.AddOp(BuiltinOp::kIf, {0, 1}, {}, IfParams{2, 1});
  m.AddOp(BuiltinOp::kCallOnce, {}, {}, CallOnceParams{2});
  m.AddOp(BuiltinOp::kVarHandle, {}, {}, VarHandleParams{"box", "name"});
  const std::vector<uint8_t> bytes = WriteModel(m.model());
  const auto read = ReadModelBuffer(bytes.data(), bytes.size(), "control_flow.tflite");
  const auto& ops = read->subgraphs[0].operators;
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(std::get<WhileParams>(ops[0].params).cond_subgraph_index, 1);
  EXPECT_EQ(std::get<WhileParams>(ops[0].params).body_subgraph_index, 2);
  EXPECT_EQ(std::get<IfParams>(ops[1].params).then_subgraph_index, 2);
  EXPECT_EQ(std::get<IfParams>(ops[1].params).else_subgraph_index, 1);
  EXPECT_EQ(std::get<CallOnceParams>(ops[2].params).init_subgraph_index, 2);
  EXPECT_EQ(std::get<VarHandleParams>(ops[3].params).container, "box");
  EXPECT_EQ(std::get<VarHandleParams>(ops[3].params).shared_name, "name");
  EXPECT_EQ(read->subgraphs.size(), 3u);
}

}  // namespace
}  // namespace delegato
