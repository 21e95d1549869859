// libFuzzer target: the delegate plugin's option strings, as a host hands
// them over. The input is benchmark_model's --external_delegate_options text
// ("k:v;k:v"); its pairs go to tflite_plugin_create_delegate (linked in, not
// dlopen'ed, so the plugin's code is instrumented), and a delegate that is
// created is applied to the demo model and run. The CLI's option parser is
// fuzzed on the way.
//
// Values of `report` and `cache_dir` name files the plugin writes; they are
// redirected into a private temporary directory (an empty value stays empty,
// so the plugin's own checks of it are still reached).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "delegato/external_delegate.h"
#include "delegato/interpreter.h"
#include "model/model.h"
#include "tools/tool_util.h"

extern "C" {
delegato::abi::TfLiteDelegate* tflite_plugin_create_delegate(const char* const* keys,
                                                             const char* const* values,
                                                             size_t count,
                                                             void (*report_error)(const char*));
void tflite_plugin_destroy_delegate(delegato::abi::TfLiteDelegate* delegate);
}

namespace {

const std::filesystem::path& ScratchDir() {
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "fuzz_plugin_XXXXXX").string();
    const char* made = mkdtemp(pattern.data());
    std::filesystem::path path = made ? made : std::filesystem::temp_directory_path();
    std::filesystem::create_directories(path / "cache");
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(ScratchDir(), ignored);
    });
    return path;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<delegato::ModelDef> demo = delegato::tools::BuildDemoModel();
  const std::string text(reinterpret_cast<const char*>(data), size);
  delegato::ExternalDelegateOptions options;
  if (!delegato::ParseExternalDelegateOptions(text, &options).ok()) return 0;
  if (options.size() > 64) return 0;  // the plugin bounds the count itself; keep runs fast
  for (auto& [key, value] : options) {
    if (value.empty()) continue;
    if (key == "report") value = (ScratchDir() / "report.json").string();
    if (key == "cache_dir") value = (ScratchDir() / "cache").string();
    // Thread counts the plugin accepts are capped at 2: the cores are for the fuzzer.
    if (key == "num_threads" && value.find_first_not_of("0123456789") == std::string::npos &&
        value.size() < 5 && std::atoi(value.c_str()) > 2)
      value = "2";
  }
  std::unique_ptr<delegato::ExternalDelegate> plugin;
  if (!delegato::ExternalDelegate::FromEntryPoints("fuzz_plugin", tflite_plugin_create_delegate,
                                                   tflite_plugin_destroy_delegate, options,
                                                   &plugin)
           .ok())
    return 0;
  delegato::Status status;
  delegato::InterpreterOptions interpreter_options;
  interpreter_options.max_memory_bytes = 64 << 20;
  auto interpreter = delegato::Interpreter::Create(demo, interpreter_options, &status);
  if (!status.ok()) __builtin_trap();  // the demo model always loads
  if (!interpreter->ModifyGraphWithDelegate(plugin.get()).ok()) return 0;
  if (!interpreter->AllocateTensors().ok()) return 0;
  interpreter->Invoke();
  return 0;
}
