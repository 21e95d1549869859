// Several interpreters on several threads at once, all sharing one parsed
// model (ModelDef is immutable and shared by design): every one must give
// the results a lone interpreter gives, invocation after invocation. Run
// under ThreadSanitizer by scripts/test.sh, where any data race on the
// shared model, the op table or static kernel state is reported.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "delegato/interpreter.h"
#include "model/model.h"
#include "test_util.h"
#include "tools/tool_util.h"

namespace delegato {
namespace {

// Outputs of `invocations` runs on seeded inputs (a new seed per run),
// concatenated, or the first error.
std::vector<uint8_t> RunModel(const std::shared_ptr<const ModelDef>& model, int num_threads,
                              KernelSet kernels, int invocations, std::string* error) {
  Status status;
  auto interpreter = Interpreter::Create(model, {.num_threads = num_threads, .kernels = kernels}, &status);
  if (status.ok()) status = interpreter->AllocateTensors();
  std::vector<uint8_t> outputs;
  for (int run = 0; status.ok() && run < invocations; ++run) {
    tools::FillRandomInputs(*interpreter, static_cast<uint64_t>(run));
    status = interpreter->Invoke();
    for (int i = 0; status.ok() && i < interpreter->num_outputs(); ++i) {
      const TensorView out = interpreter->output(i);
      const auto* bytes = static_cast<const uint8_t*>(out.data);
      outputs.insert(outputs.end(), bytes, bytes + out.bytes);
    }
  }
  if (!status.ok()) *error = status.message();
  return outputs;
}

void ExpectSameResultsOnThreads(const std::shared_ptr<const ModelDef>& model, KernelSet kernels) {
  constexpr int kInterpreters = 4;
  constexpr int kInvocations = 3;
  std::string error;
  const std::vector<uint8_t> expected = RunModel(model, 1, kernels, kInvocations, &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_FALSE(expected.empty());

  std::vector<std::vector<uint8_t>> results(kInterpreters);
  std::vector<std::string> errors(kInterpreters);
  std::vector<std::thread> threads;
  for (int i = 0; i < kInterpreters; ++i)
    threads.emplace_back([&, i] {
      // Half the interpreters also run their own thread pool of 2.
      results[i] = RunModel(model, 1 + i % 2, kernels, kInvocations, &errors[i]);
    });
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kInterpreters; ++i) {
    EXPECT_TRUE(errors[i].empty()) << "interpreter " << i << ": " << errors[i];
    EXPECT_EQ(results[i], expected) << "interpreter " << i << " differs from a lone interpreter";
  }
}

TEST(ConcurrencyTest, DemoModelSharedByInterpretersOnThreads) {
  const std::shared_ptr<const ModelDef> model = tools::BuildDemoModel();
  ExpectSameResultsOnThreads(model, KernelSet::kOptimized);
  ExpectSameResultsOnThreads(model, KernelSet::kReference);
}

TEST(ConcurrencyTest, StatefulLstmModelSharedByInterpretersOnThreads) {
  // Variable (state) tensors are per interpreter: sharing the model must not
  // share the state.
  REQUIRE_SHARED_MODEL(path, "keras_lstm_mnist_ptq.tflite");
  std::shared_ptr<const ModelDef> model;
  ASSERT_TRUE(LoadModel(path, &model).ok());
  ExpectSameResultsOnThreads(model, KernelSet::kOptimized);
}

}  // namespace
}  // namespace delegato
