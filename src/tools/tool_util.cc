#include "tools/tool_util.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <random>
#include <sstream>

#include "core/error.h"
#include "tools/flags.h"

namespace delegato::tools {

std::string FormatDims(std::span<const int32_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string FormatQuantization(DataType type, std::span<const float> scales,
                               std::span<const int64_t> zero_points, int32_t axis) {
  std::ostringstream out;
  std::string name(DataTypeName(type));
  for (char& c : name) c = static_cast<char>(std::tolower(c));
  out << name;
  if (scales.size() == 1) {
    out << " scale=" << scales[0] << " zero_point=" << (zero_points.empty() ? 0 : zero_points[0]);
  } else if (scales.size() > 1) {
    out << " per-axis(" << scales.size() << ") dim=" << axis;
  }
  return out.str();
}

std::span<const uint8_t> ModelFileBytes(const ModelDef& model) {
  if (!model.mapping) return {};
  return {model.mapping->data, model.mapping->size};
}

std::shared_ptr<const ModelDef> LoadModelOrDemo(const std::string& path) {
  if (!path.empty()) return ReadModelFile(path);
  std::cerr << "no --graph given: using the built-in demo model (delegato generate writes it)\n";
  // Through the writer and the reader, so the demo exercises the whole path.
  std::vector<uint8_t> bytes = WriteModel(*BuildDemoModel());
  return ReadModelBuffer(bytes.data(), bytes.size(), "<demo model>");
}

void FillRandomInputs(Interpreter& interpreter, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < interpreter.num_inputs(); ++i) {
    TensorView in = interpreter.input(i);
    const size_t n = in.bytes / std::max<size_t>(1, DataTypeSize(in.type));
    switch (in.type) {
      case DataType::kUInt8:
      case DataType::kInt8:
        for (size_t k = 0; k < n; ++k) static_cast<uint8_t*>(in.data)[k] = static_cast<uint8_t>(rng());
        break;
      case DataType::kBool:
        for (size_t k = 0; k < n; ++k) static_cast<uint8_t*>(in.data)[k] = rng() & 1;
        break;
      case DataType::kFloat32: {
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        for (size_t k = 0; k < n; ++k) static_cast<float*>(in.data)[k] = dist(rng);
        break;
      }
      case DataType::kInt16:
        for (size_t k = 0; k < n; ++k) static_cast<int16_t*>(in.data)[k] = static_cast<int16_t>(rng());
        break;
      case DataType::kInt32:
        for (size_t k = 0; k < n; ++k) static_cast<int32_t*>(in.data)[k] = static_cast<int32_t>(rng() % 10);
        break;
      case DataType::kInt64:
        for (size_t k = 0; k < n; ++k) static_cast<int64_t*>(in.data)[k] = static_cast<int64_t>(rng() % 10);
        break;
      default:
        Fail("input ", i, " (\"", in.name, "\"): cannot generate random values of type ",
             DataTypeName(in.type));
    }
  }
}

std::vector<int> ParseIntList(const std::string& flag, const std::string& text) {
  std::vector<int> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) continue;
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (*end != '\0' || v < 0 || v > (1 << 30))
      throw UsageError("--" + flag + ": '" + item + "' is not a node index");
    values.push_back(static_cast<int>(v));
  }
  return values;
}

KernelSet ParseKernelSet(const std::string& text) {
  if (text == "reference") return KernelSet::kReference;
  if (text == "optimized") return KernelSet::kOptimized;
  throw UsageError("--kernels must be 'reference' or 'optimized', got '" + text + "'");
}

const char* const kMaxMemoryHelp =
    "memory budget in MiB for the model's tensors, variables and scratch; a model needing more "
    "is refused before allocating (default: min(4096, half the physical memory))";

size_t MaxMemoryBytes(const Flags& flags) {
  const int64_t mb = flags.GetInt("max_memory_mb", 0, 1, int64_t{1} << 30);
  return static_cast<size_t>(mb) << 20;
}

int RunCommand(const char* name, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << "delegato " << name << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "delegato " << name << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace delegato::tools
