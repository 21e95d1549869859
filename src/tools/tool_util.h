// Helpers shared by the CLI subcommands.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/atomic_file.h"
#include "delegato/interpreter.h"
#include "model/model.h"

namespace delegato::tools {

class Flags;

// "[1,224,224,3]"
std::string FormatDims(std::span<const int32_t> dims);
// "uint8 scale=0.0078125 zero_point=128", "int8 per-axis(32) dim=0", "float32"
std::string FormatQuantization(DataType type, std::span<const float> scales,
                               std::span<const int64_t> zero_points, int32_t axis);

// Loads --graph, or builds the demo model when `path` is empty (printing a note).
std::shared_ptr<const ModelDef> LoadModelOrDemo(const std::string& path);
// The bytes of the file `model` was read from (its mapping; empty for the
// demo model): the compilation cache's key hashes them, so the file is read
// once. Pages the hash brings in are dropped again at the end of Prepare.
std::span<const uint8_t> ModelFileBytes(const ModelDef& model);

// Fills every input with seeded random values: 8-bit types over their full
// range, float32 uniform in [-1, 1), int32/int64 in [0, 10), bool 0/1.
void FillRandomInputs(Interpreter& interpreter, uint64_t seed);

// The model the project generates itself: a small uint8 CNN (see demo_model.cc).
std::shared_ptr<ModelDef> BuildDemoModel();

// The tools write every output file whole or not at all (core/atomic_file.h).
using ::delegato::WriteFileAtomically;

// "3,7,12" -> {3, 7, 12}; throws UsageError naming --flag on anything else.
std::vector<int> ParseIntList(const std::string& flag, const std::string& text);

// "reference" / "optimized" -> KernelSet; UsageError otherwise.
KernelSet ParseKernelSet(const std::string& text);

// --max_memory_mb: the help text every command that builds an interpreter
// declares, and its value in bytes (0 when absent: DefaultMemoryBudget()).
extern const char* const kMaxMemoryHelp;
size_t MaxMemoryBytes(const Flags& flags);

// Runs a subcommand body, turning Error into "delegato <cmd>: msg" + exit 1 and
// UsageError into exit 2.
int RunCommand(const char* name, const std::function<int()>& body);

}  // namespace delegato::tools
