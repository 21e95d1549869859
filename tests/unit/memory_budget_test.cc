// Hostile models: every size a model declares is checked before it is
// allocated. Each case runs in a child process under an address-space limit
// (RLIMIT_AS), so a model that makes the runtime allocate what it declares
// kills or fails the child instead of passing; the child's peak RSS is
// checked too. Every case must end in a clear refusal or a bounded run.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/model.h"
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DELEGATO_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DELEGATO_SANITIZED 1
#endif
#endif
#ifndef DELEGATO_SANITIZED
#define DELEGATO_SANITIZED 0
#endif

namespace delegato {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::OpModel;

constexpr size_t kMiB = size_t{1} << 20;
// The bound the issue sets for any input under 100 MB.
constexpr long kMaxRssKb = 256 * 1024;

struct ChildOutcome {
  bool exited_normally = false;
  int exit_code = -1;
  int signal = 0;
  std::string message;  // what the body returned: "" = ran, else the refusal
  long max_rss_kb = 0;
};

// Runs `body` in a child limited to `address_space` bytes of virtual memory
// (not under sanitizers, whose shadow memory needs terabytes of it).
ChildOutcome RunBounded(const std::function<std::string()>& body,
                        size_t address_space = 512 * kMiB) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (!DELEGATO_SANITIZED) {
      rlimit limit{address_space, address_space};
      setrlimit(RLIMIT_AS, &limit);
    }
    std::string message;
    try {
      message = body();
    } catch (const std::exception& e) {
      message = std::string("uncaught exception: ") + e.what();
    }
    if (message.empty()) message = "OK";
    size_t written = 0;
    while (written < message.size()) {
      const ssize_t n = write(fds[1], message.data() + written, message.size() - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  ChildOutcome outcome;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;) outcome.message.append(buffer, n);
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  outcome.exited_normally = WIFEXITED(status);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  outcome.max_rss_kb = usage.ru_maxrss;
  if (outcome.message == "OK") outcome.message.clear();
  return outcome;
}

// Load (from the serialized bytes, through the reader), create, allocate and
// invoke: returns "" when everything succeeded, else the first error.
std::string LoadAndRun(const std::vector<uint8_t>& bytes, size_t budget) {
  std::shared_ptr<const ModelDef> model;
  try {
    model = ReadModelBuffer(bytes.data(), bytes.size(), "hostile.tflite");
  } catch (const std::exception& e) {
    return e.what();
  }
  Status status;
  InterpreterOptions options;
  options.max_memory_bytes = budget;
  auto interpreter = Interpreter::Create(model, options, &status);
  if (!status.ok()) return status.message();
  status = interpreter->AllocateTensors();
  if (!status.ok()) return status.message();
  status = interpreter->Invoke();
  return status.ok() ? "" : status.message();
}

ChildOutcome RunModel(const ModelDef& model, size_t budget) {
  const std::vector<uint8_t> bytes = WriteModel(model);
  return RunBounded([&] { return LoadAndRun(bytes, budget); });
}

void ExpectBounded(const ChildOutcome& outcome) {
  EXPECT_TRUE(outcome.exited_normally) << "child died with signal " << outcome.signal;
  EXPECT_EQ(outcome.exit_code, 0);
  // Sanitizers' shadow memory and quarantine inflate RSS: the bound holds for
  // plain builds.
  if (!DELEGATO_SANITIZED) EXPECT_LT(outcome.max_rss_kb, kMaxRssKb) << "peak RSS over 256 MiB";
  EXPECT_THAT(outcome.message, ::testing::Not(HasSubstr("bad_alloc")));
  EXPECT_THAT(outcome.message, ::testing::Not(HasSubstr("uncaught")));
}

TEST(MemoryBudgetTest, DefaultBudgetIsBounded) {
  const size_t budget = DefaultMemoryBudget();
  EXPECT_GT(budget, 0u);
  EXPECT_LE(budget, size_t{4} << 30);
}

TEST(MemoryBudgetTest, SharedLstmCellStateModelIsRefusedCheaply) {
  REQUIRE_SHARED_MODEL(path, "hostile/keras_lstm_cell_state_771M_elements.tflite");
  for (size_t budget : {size_t{0}, 64 * kMiB}) {
    ChildOutcome outcome = RunBounded([&]() -> std::string {
      std::shared_ptr<const ModelDef> model;
      Status status = LoadModel(path, &model);
      if (!status.ok()) return status.message();
      InterpreterOptions options;
      options.max_memory_bytes = budget;
      auto interpreter = Interpreter::Create(model, options, &status);
      if (!status.ok()) return status.message();
      status = interpreter->AllocateTensors();
      return status.ok() ? "" : status.message();
    }, 256 * kMiB);
    SCOPED_TRACE(budget);
    ExpectBounded(outcome);
    if (budget == 0) {
      // Under the default budget (1.5 GB fits), the LSTM's shape check refuses it first.
      EXPECT_THAT(outcome.message, AllOf(HasSubstr("UNIDIRECTIONAL_SEQUENCE_LSTM"),
                                         HasSubstr("cell state"), HasSubstr("771751956")));
    } else {
      EXPECT_THAT(outcome.message, AllOf(HasSubstr("variable"), HasSubstr("[1,771751956]"),
                                         HasSubstr("1543503912 bytes"),
                                         HasSubstr("memory budget")));
    }
  }
}

TEST(MemoryBudgetTest, HugeInputIsRefusedNamingShapeAndBytes) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1 << 15, 1 << 15}, {}, "big_input");
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kRelu, {in}, {out});
  ChildOutcome outcome = RunModel(m.model(), 128 * kMiB);
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, AllOf(HasSubstr("input 0"), HasSubstr("\"big_input\""),
                                     HasSubstr("[32768,32768]"), HasSubstr("4294967296 bytes"),
                                     HasSubstr("memory budget of 134217728 bytes")));
}

TEST(MemoryBudgetTest, InputOverSixteenGiBIsRefused) {
  // Over 16 GiB: refused whatever the budget.
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1 << 20, 1 << 20, 1 << 20});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kRelu, {in}, {out});
  ChildOutcome outcome = RunModel(m.model(), ~size_t{0});
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, AllOf(HasSubstr("input 0"), HasSubstr("too large")));

  // Element counts that overflow int64 are refused by the reader.
  OpModel overflow;
  in = overflow.AddInput(DataType::kFloat32, {1 << 30, 1 << 30, 1 << 30});
  out = overflow.AddOutput(DataType::kFloat32);
  overflow.AddOp(BuiltinOp::kRelu, {in}, {out});
  outcome = RunModel(overflow.model(), 0);
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, HasSubstr("element count overflows"));
}

TEST(MemoryBudgetTest, HugeComputedOutputIsRefusedNamingNode) {
  // PAD grows a 4-element input by 100M elements: the output's computed
  // size, not its declared one, is what would be allocated.
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 4});
  int paddings = m.AddConst<int32_t>(DataType::kInt32, {2, 2}, {0, 0, 0, 100'000'000});
  int out = m.AddOutput(DataType::kFloat32, {}, {1, 4}, "padded");
  m.AddOp(BuiltinOp::kPad, {in, paddings}, {out});
  ChildOutcome outcome = RunModel(m.model(), 128 * kMiB);
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, AllOf(HasSubstr("node 0 (PAD): output 0"), HasSubstr("\"padded\""),
                                     HasSubstr("[1,100000004]"), HasSubstr("400000016 bytes")));
}

TEST(MemoryBudgetTest, HugeDeclaredOutputShapeIsNotAllocated) {
  // Declared shapes of produced tensors are replaced by what Prepare computes.
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {4});
  int out = m.AddOutput(DataType::kFloat32, {}, {1 << 30, 1 << 30});
  m.AddOp(BuiltinOp::kRelu, {in}, {out});
  ChildOutcome outcome = RunModel(m.model(), 0);
  ExpectBounded(outcome);
  EXPECT_EQ(outcome.message, "");
}

TEST(MemoryBudgetTest, HugeVariableIsRefusedBeforeAllocation) {
  // 8 GiB of state, over any default budget, in a model of a few hundred bytes.
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {4});
  int state = m.AddTensor(DataType::kFloat32, {}, {1 << 30, 2});
  m.model().subgraphs[0].tensors[state].is_variable = true;
  m.model().subgraphs[0].tensors[state].name = "huge_state";
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kRelu, {in}, {out});
  ChildOutcome outcome = RunModel(m.model(), 0);
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, AllOf(HasSubstr("variable"), HasSubstr("\"huge_state\""),
                                     HasSubstr("[1073741824,2]"), HasSubstr("8589934592 bytes")));
}

TEST(MemoryBudgetTest, VariablesSummingOverBudgetAreRefused) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {4});
  for (int i = 0; i < 4; ++i) {
    int state = m.AddTensor(DataType::kFloat32, {}, {10 * (1 << 20)});  // 40 MiB each
    m.model().subgraphs[0].tensors[state].is_variable = true;
  }
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kRelu, {in}, {out});
  ChildOutcome outcome = RunModel(m.model(), 128 * kMiB);
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, AllOf(HasSubstr("variable tensors need"), HasSubstr("in all")));
}

TEST(MemoryBudgetTest, ArenaOverBudgetIsRefusedNamingLargestTensor) {
  // Each tensor fits; together (all graph outputs, all live) they do not.
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {8 << 20});  // 32 MiB
  int previous = in;
  for (int i = 0; i < 4; ++i) {
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kRelu, {previous}, {out});
    previous = out;
  }
  ChildOutcome outcome = RunModel(m.model(), 128 * kMiB);
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, AllOf(HasSubstr("planned arena"), HasSubstr("memory budget"),
                                     HasSubstr("largest tensor"), HasSubstr("[8388608]")));
}

TEST(MemoryBudgetTest, HugeConstantWithoutItsBytesIsRefused) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {4});
  int constant = m.AddConst<float>(DataType::kFloat32, {1 << 30}, {1.0f, 2.0f, 3.0f, 4.0f});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kAdd, {in, constant}, {out}, ElementwiseParams{});
  ChildOutcome outcome = RunModel(m.model(), 0);
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, AllOf(HasSubstr("holds 16 bytes"), HasSubstr("[1073741824]"),
                                     HasSubstr("needs 4294967296")));
}

TEST(MemoryBudgetTest, HugeIntermediateIsNeverAllocated) {
  // An operator's `intermediates` list (LSTM quantization holders) declaring
  // a huge tensor: nothing reads or allocates it.
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {4});
  int huge = m.AddTensor(DataType::kFloat32, {}, {1 << 30, 1 << 30});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kRelu, {in}, {out});
  m.model().subgraphs[0].operators[0].intermediates = {huge};
  ChildOutcome outcome = RunModel(m.model(), 0);
  ExpectBounded(outcome);
  EXPECT_EQ(outcome.message, "");
}

TEST(MemoryBudgetTest, OutOfRangeIndicesAreRefused) {
  struct Case {
    const char* what;
    std::function<void(ModelDef&)> corrupt;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"op input", [](ModelDef& m) { m.subgraphs[0].operators[0].inputs[0] = 1'000'000; },
       "input 0 is tensor 1000000"},
      {"op output", [](ModelDef& m) { m.subgraphs[0].operators[0].outputs[0] = -5; },
       "output 0 is tensor -5"},
      {"graph output", [](ModelDef& m) { m.subgraphs[0].outputs[0] = 77; },
       "graph output 0 is tensor 77"},
      {"buffer", [](ModelDef& m) { m.subgraphs[0].tensors[0].buffer = 4000; },
       "buffer 4000 does not exist"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    OpModel m;
    int in = m.AddInput(DataType::kFloat32, {4});
    int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kRelu, {in}, {out});
    c.corrupt(m.model());
    ChildOutcome outcome = RunModel(m.model(), 0);
    ExpectBounded(outcome);
    EXPECT_THAT(outcome.message, HasSubstr(c.expected));
  }
}

TEST(MemoryBudgetTest, CycleIsRefused) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {4});
  int a = m.AddTensor(DataType::kFloat32);
  int b = m.AddTensor(DataType::kFloat32);
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kAdd, {in, b}, {a}, ElementwiseParams{});
  m.AddOp(BuiltinOp::kRelu, {a}, {b});
  m.AddOp(BuiltinOp::kRelu, {b}, {out});
  ChildOutcome outcome = RunModel(m.model(), 0);
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, HasSubstr("not produced by any earlier node"));
}

TEST(MemoryBudgetTest, DeepSubgraphReferencesAreRefused) {
  // A WHILE whose body refers to the next subgraph, 500 deep: the call chain
  // is refused at a fixed depth, before any subgraph is prepared.
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {4});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kWhile, {in}, {out}, WhileParams{1, 1});
  for (int i = 0; i < 500; ++i) {
    m.model().subgraphs.push_back(m.model().subgraphs[0]);
    m.model().subgraphs.back().operators[0].params = WhileParams{i + 2, i + 2};
  }
  ChildOutcome outcome = RunModel(m.model(), 0);
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, HasSubstr("subgraph calls nest deeper than 64 levels"));

  // Without options a WHILE names no subgraph: refused naming the node.
  OpModel no_options;
  int in2 = no_options.AddInput(DataType::kFloat32, {4});
  int out2 = no_options.AddOutput(DataType::kFloat32);
  no_options.AddOp(BuiltinOp::kWhile, {in2}, {out2});
  outcome = RunModel(no_options.model(), 0);
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, HasSubstr("node 0 (WHILE): the node has no WhileOptions"));
}

TEST(MemoryBudgetTest, ZeroSizedTensorsRun) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {0, 4});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kRelu, {in}, {out});
  ChildOutcome outcome = RunModel(m.model(), 0);
  ExpectBounded(outcome);
  EXPECT_EQ(outcome.message, "");
}

TEST(MemoryBudgetTest, NegativeDimensionsAreRefused) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, -3});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kRelu, {in}, {out});
  ChildOutcome outcome = RunModel(m.model(), 0);
  ExpectBounded(outcome);
  EXPECT_THAT(outcome.message, HasSubstr("negative dimension"));

  // And through ResizeInput.
  OpModel ok;
  int in2 = ok.AddInput(DataType::kFloat32, {2});
  int out2 = ok.AddOutput(DataType::kFloat32);
  ok.AddOp(BuiltinOp::kRelu, {in2}, {out2});
  ok.Build();
  Status status = ok.interpreter().ResizeInput(0, {4, -1});
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("negative dimension -1"));
}

TEST(MemoryBudgetTest, ResizeOverBudgetIsRefusedAndRecoverable) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2});
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kRelu, {in}, {out});
  Status status;
  InterpreterOptions options;
  options.max_memory_bytes = kMiB;
  auto interpreter = Interpreter::Create(
      std::shared_ptr<const ModelDef>(&m.model(), [](const ModelDef*) {}), options, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(interpreter->ResizeInput(0, {1 << 20}).ok());
  status = interpreter->AllocateTensors();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), AllOf(HasSubstr("input 0"), HasSubstr("[1048576]"),
                                      HasSubstr("4194304 bytes"), HasSubstr("1048576 bytes")));
  ASSERT_TRUE(interpreter->ResizeInput(0, {8}).ok());
  EXPECT_TRUE(interpreter->AllocateTensors().ok());
  EXPECT_TRUE(interpreter->Invoke().ok());
}

}  // namespace
}  // namespace delegato
