// Hosting a TFLite external delegate plugin (delegato's own, built next to
// this test): one delegate object applied to several interpreters and models,
// option parsing, and load errors.
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "delegato/external_delegate.h"
#include "delegato/interpreter.h"
#include "model/model.h"
#include "tools/tool_util.h"

#if defined(__SANITIZE_ADDRESS__)
// The plugin carries its own (hidden) copy of delegato's globals, which
// ASan's one-definition check would count twice.
extern "C" const char* __asan_default_options() { return "detect_odr_violation=0"; }
#endif

namespace delegato {
namespace {

std::string PluginPath() {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "";
  exe[n] = '\0';
  return (std::filesystem::path(exe).parent_path() / "libdelegato_delegate.so").string();
}

std::unique_ptr<Interpreter> Make(std::shared_ptr<const ModelDef> model) {
  Status status;
  auto interpreter = Interpreter::Create(std::move(model), {}, &status);
  EXPECT_TRUE(interpreter) << status.message();
  return interpreter;
}

std::vector<uint8_t> RunOnce(Interpreter& interpreter) {
  for (int i = 0; i < interpreter.num_inputs(); ++i) {
    TensorView in = interpreter.input(i);
    auto* bytes = static_cast<uint8_t*>(in.data);
    for (size_t b = 0; b < in.bytes; ++b) bytes[b] = static_cast<uint8_t>(b * 7 + i);
  }
  EXPECT_TRUE(interpreter.Invoke().ok());
  TensorView out = interpreter.output(0);
  const auto* bytes = static_cast<const uint8_t*>(out.data);
  return std::vector<uint8_t>(bytes, bytes + out.bytes);
}

TEST(ExternalDelegateTest, ParsesBenchmarkModelOptions) {
  ExternalDelegateOptions options;
  ASSERT_TRUE(ParseExternalDelegateOptions("target:cpu;num_threads:2;", &options).ok());
  ASSERT_EQ(options.size(), 2u);
  EXPECT_EQ(options[1], (std::pair<std::string, std::string>{"num_threads", "2"}));
  EXPECT_FALSE(ParseExternalDelegateOptions("target", &options).ok());
  EXPECT_FALSE(ParseExternalDelegateOptions("path:C:/x", &options).ok());
}

TEST(ExternalDelegateTest, LoadErrorsNameTheLibrary) {
  std::unique_ptr<ExternalDelegate> delegate;
  Status status = ExternalDelegate::Load("/nonexistent/libplugin.so", {}, &delegate);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/nonexistent/libplugin.so"), std::string::npos) << status.message();
}

TEST(ExternalDelegateTest, OneDelegateServesSeveralInterpretersAndModels) {
  const std::string path = PluginPath();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not built";
  std::unique_ptr<ExternalDelegate> delegate;
  Status status = ExternalDelegate::Load(path, {{"target", "cpu"}}, &delegate);
  ASSERT_TRUE(status.ok()) << status.message();
  std::shared_ptr<const ModelDef> demo = tools::BuildDemoModel();
  const std::vector<uint8_t> bytes = WriteModel(*demo);
  std::shared_ptr<const ModelDef> copy = ReadModelBuffer(bytes.data(), bytes.size());

  auto reference = Make(demo);
  ASSERT_TRUE(reference->AllocateTensors().ok());
  const std::vector<uint8_t> expected = RunOnce(*reference);

  // Same model twice, then another ModelDef: each application gets its own context.
  std::vector<std::unique_ptr<Interpreter>> interpreters;
  for (auto model : {demo, demo, copy}) {
    interpreters.push_back(Make(model));
    ASSERT_TRUE(interpreters.back()->ModifyGraphWithDelegate(delegate.get()).ok());
    EXPECT_TRUE(delegate->prepare_error().empty()) << delegate->prepare_error();
    EXPECT_TRUE(interpreters.back()->warnings().empty());
    EXPECT_TRUE(interpreters.back()->placements()[0].delegated);
  }
  for (int round = 0; round < 2; ++round)
    for (auto& interpreter : interpreters) EXPECT_EQ(RunOnce(*interpreter), expected);
  // The delegate object may go before the interpreters: kernels keep what they use.
  delegate.reset();
  for (auto& interpreter : interpreters) EXPECT_EQ(RunOnce(*interpreter), expected);
}

}  // namespace
}  // namespace delegato
