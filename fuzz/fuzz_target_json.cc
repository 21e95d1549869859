// libFuzzer target: accelerator target files (--target FILE.json): parse and
// validate, then evaluate the parsed target on the demo model, as `plan` does.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "delegate/emulated_delegate.h"
#include "delegate/target.h"
#include "tools/tool_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<delegato::ModelDef> demo = delegato::tools::BuildDemoModel();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // "extends" resolves against a directory that holds no targets.
    const delegato::Target target = delegato::ParseTarget(text, "fuzz.json", "/nonexistent");
    delegato::EvaluateTarget(target, *demo, "");
  } catch (const delegato::Error&) {
  }
  return 0;
}
