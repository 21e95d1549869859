// libFuzzer target: arbitrary bytes through the whole path a user's model
// takes: read (verifier + checks) -> interpreter -> allocate -> invoke.
// Any crash, sanitizer report, hang or huge allocation is a bug; an Error
// (a clean rejection) is the expected outcome for most inputs.
#include <cstddef>
#include <cstdint>

#include "delegato/interpreter.h"
#include "model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::shared_ptr<const delegato::ModelDef> model;
  try {
    model = delegato::ReadModelBuffer(data, size, "fuzz");
  } catch (const std::exception&) {
    return 0;
  }
  delegato::Status status;
  delegato::InterpreterOptions options;
  options.max_arena_bytes = 64 << 20;  // keep each run small and fast
  options.max_memory_bytes = 64 << 20;  // variables and scratch too
  auto interpreter = delegato::Interpreter::Create(model, options, &status);
  if (!status.ok()) return 0;
  if (!interpreter->AllocateTensors().ok()) return 0;
  interpreter->Invoke();
  return 0;
}
