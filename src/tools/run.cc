// delegato run: feed a model inputs (.npy files, a BMP image, or seeded
// random values), invoke it, write outputs as .npy and print top-K labels.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>

#include "core/error.h"
#include "tools/commands.h"
#include "tools/flags.h"
#include "tools/cache_hook.h"
#include "tools/external_delegate_flags.h"
#include "tools/image.h"
#include "delegate/emulated_delegate.h"
#include "tools/npy.h"
#include "tools/placement.h"
#include "tools/tool_util.h"

namespace delegato::tools {
namespace {

Flags RunFlags() {
  Flags flags;
  flags.Declare("graph", "model .tflite file (default: the built-in demo model)")
      .Declare("input", "IDX_OR_NAME=FILE.npy: value of one input, of the input's (resized) shape and type (repeatable)", false, true)
      .Declare("resize", "IDX_OR_NAME=D1,D2,...: run with this input shape instead of the model's (repeatable)", false, true)
      .Declare("image", "24/32-bit BMP resized into the (single) image input")
      .Declare("labels", "label file, one per line, to name the top-K classes of output 0")
      .Declare("top_k", "how many classes to print with --labels (default 5)")
      .Declare("output_dir", "write each output as DIR/output_<i>.npy")
      .Declare("save_inputs", "also write the inputs fed as DIR/input_<i>.npy", true)
      .Declare("num_threads", "CPU threads (default 1)")
      .Declare("kernels", "optimized (default: fast kernels where they exist) or reference")
      .Declare("seed", "seed of the random inputs (default 0)")
      .Declare("target", "run through the emulated delegate of this accelerator target (id or .json)")
      .Declare("nnapi_accelerator_name", "with --target: name an accelerator explicitly (NNAPI targets)")
      .Declare("max_delegated_partitions", "with --target: override the target's partition limit (0 = unlimited)")
      .Declare("min_nodes_per_partition", "with --target: partitions with fewer nodes stay on the CPU")
      .Declare("skip_nodes", "with --target: comma-separated node indices never delegated")
      .Declare("delegate_serialize_dir", "with --target: compilation cache directory (reused across runs)")
      .Declare("delegate_serialize_token", "with --target: token naming this model's cache entries (default: the model's file name)")
      .Declare("max_memory_mb", kMaxMemoryHelp)
      .Declare("help", "show this help", true);
  DeclareExternalDelegateFlags(flags);
  return flags;
}

int ResolveInput(const Interpreter& interpreter, const std::string& key) {
  int index = interpreter.FindInput(key);
  if (index >= 0) return index;
  if (!key.empty() && std::all_of(key.begin(), key.end(), ::isdigit)) {
    index = std::stoi(key);
    if (index < interpreter.num_inputs()) return index;
  }
  std::string names;
  for (int i = 0; i < interpreter.num_inputs(); ++i)
    names += StrCat(i ? ", " : "", i, "=\"", interpreter.input(i).name, "\"");
  Fail("--input ", key, ": no such input (model inputs: ", names, ")");
}

// "4,1,28" -> {4, 1, 28}; UsageError naming --resize on anything else.
std::vector<int32_t> ParseDims(const std::string& spec, const std::string& text) {
  std::vector<int32_t> dims;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    char* end = nullptr;
    errno = 0;
    const long v = item.empty() ? -1 : std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno == ERANGE || v < 0 || v > INT32_MAX)
      throw UsageError("--resize " + spec + ": '" + item +
                       "' is not a dimension (expected IDX_OR_NAME=D1,D2,... with each D >= 0)");
    dims.push_back(static_cast<int32_t>(v));
    start = comma + 1;
  }
  return dims;
}

// Top-K of output 0 as "index score label" lines; scores dequantized.
void PrintTopK(const Interpreter& interpreter, const std::string& labels_path, int top_k) {
  std::vector<std::string> labels;
  std::ifstream file(labels_path);
  DLG_CHECK(file, labels_path, ": cannot open label file");
  for (std::string line; std::getline(file, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    labels.push_back(line);
  }
  TensorView out = interpreter.output(0);
  const size_t n = out.bytes / std::max<size_t>(1, DataTypeSize(out.type));
  std::vector<float> scores(n);
  const float scale = out.scales.empty() ? 1.0f : out.scales[0];
  const int64_t zp = out.zero_points.empty() ? 0 : out.zero_points[0];
  for (size_t i = 0; i < n; ++i) {
    switch (out.type) {
      case DataType::kUInt8: scores[i] = scale * (static_cast<const uint8_t*>(out.data)[i] - zp); break;
      case DataType::kInt8: scores[i] = scale * (static_cast<const int8_t*>(out.data)[i] - zp); break;
      case DataType::kFloat32: scores[i] = static_cast<const float*>(out.data)[i]; break;
      default: Fail("--labels: output 0 has type ", DataTypeName(out.type), ", not class scores");
    }
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  const size_t k = std::min<size_t>(top_k, n);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](size_t a, size_t b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
  for (size_t i = 0; i < k; ++i)
    std::cout << order[i] << " " << scores[order[i]] << " "
              << (order[i] < labels.size() ? labels[order[i]] : "") << "\n";
}

int Run(const Args& args) {
  Flags flags = RunFlags();
  flags.Parse(args);
  if (flags.GetBool("help")) {
    std::cout << "usage: delegato run [--graph MODEL] [flags]\n" << flags.Help();
    return 0;
  }
  if (!flags.positional().empty()) throw UsageError("unexpected argument '" + flags.positional()[0] + "'");
  const int num_threads = static_cast<int>(flags.GetInt("num_threads", 1, 1, 256));
  const int top_k = static_cast<int>(flags.GetInt("top_k", 5, 1, 1 << 20));
  const uint64_t seed = static_cast<uint64_t>(flags.GetInt("seed", 0, 0, INT64_MAX));

  auto model = LoadModelOrDemo(flags.GetString("graph"));
  // The cache's key hashes the mapped file (read once).
  const std::span<const uint8_t> model_file_bytes = ModelFileBytes(*model);
  Status status;
  InterpreterOptions interpreter_options;
  interpreter_options.num_threads = num_threads;
  interpreter_options.kernels = ParseKernelSet(flags.GetString("kernels", "optimized"));
  interpreter_options.max_memory_bytes = MaxMemoryBytes(flags);
  auto interpreter = Interpreter::Create(model, interpreter_options, &status);
  if (!status.ok()) Fail(status.message());

  // Shapes change only when asked (--resize, like LiteRT's
  // resize_tensor_input); every .npy must then match its input exactly.
  std::string resized;  // "input 0 (\"x\") from [1,1] to [4,1], ..." for errors of later nodes
  std::map<int, std::vector<int32_t>> resized_dims;
  for (const std::string& spec : flags.GetAll("resize")) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) throw UsageError("--resize expects IDX_OR_NAME=D1,D2,..., got '" + spec + "'");
    const int index = ResolveInput(*interpreter, spec.substr(0, eq));
    std::vector<int32_t> dims = ParseDims(spec, spec.substr(eq + 1));
    const TensorView in = interpreter->input(index);
    if (dims.size() != in.dims.size())
      throw UsageError(StrCat("--resize ", spec, ": input ", index, " (\"", in.name, "\") has rank ",
                              in.dims.size(), " (shape ", FormatDims(in.dims), "), the new shape ",
                              FormatDims(dims), " has rank ", dims.size()));
    resized_dims[index] = dims;
    resized += StrCat(resized.empty() ? "" : ", ", "input ", index, " (\"", in.name, "\") from ",
                      FormatDims(in.dims), " to ", FormatDims(dims));
    status = interpreter->ResizeInput(index, dims);
    if (!status.ok()) Fail("--resize ", spec, ": ", status.message());
  }
  std::vector<std::pair<int, NpyArray>> npy_inputs;
  for (const std::string& spec : flags.GetAll("input")) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) throw UsageError("--input expects IDX_OR_NAME=FILE.npy, got '" + spec + "'");
    const std::string key = spec.substr(0, eq), file = spec.substr(eq + 1);
    const int index = ResolveInput(*interpreter, key);
    NpyArray array = ReadNpy(file);
    const TensorView in = interpreter->input(index);
    // Resizes are pending until AllocateTensors: the shape to match is the requested one.
    const std::vector<int32_t> expected =
        resized_dims.count(index) ? resized_dims[index] : std::vector<int32_t>(in.dims.begin(), in.dims.end());
    DLG_CHECK(array.type == in.type, file, ": dtype mismatch: the file holds ",
              DataTypeName(array.type), ", input ", index, " (\"", in.name, "\") is ",
              DataTypeName(in.type));
    std::vector<int32_t> dims(array.shape.begin(), array.shape.end());
    if (dims != expected)
      Fail(file, ": dimension mismatch: the file holds shape ", FormatDims(dims), ", input ", index,
           " (\"", in.name, "\") has shape ", FormatDims(expected),
           "; to run the model with the file's shape, resize the input first: --resize ", key, "=",
           [&] {
             std::string text;
             for (size_t i = 0; i < dims.size(); ++i) text += StrCat(i ? "," : "", dims[i]);
             return text;
           }());
    npy_inputs.emplace_back(index, std::move(array));
  }
  // A resize can make a later node invalid: its error names the node, this the resize.
  auto check_allocation = [&](const Status& s) {
    if (s.ok()) return;
    if (!resized.empty()) Fail(s.message(), " (after --resize of ", resized, ")");
    Fail(s.message());
  };
  // With --target, the target's emulated delegate takes its partitions
  // (ModifyGraphWithDelegate allocates); otherwise everything runs on the CPU.
  std::unique_ptr<EmulatedDelegate> delegate;
  if (flags.Has("target")) {
    const Target target = FindTarget(flags.GetString("target"), TargetsDir());
    DelegateOptions options = TargetDelegateOptions(
        target, static_cast<int>(flags.GetInt("max_delegated_partitions", -1, 0, 1 << 20)),
        static_cast<int>(flags.GetInt("min_nodes_per_partition", -1, 0, 1 << 20)),
        ParseIntList("skip_nodes", flags.GetString("skip_nodes")), -1, -1);
    // With a cache directory, a hit answers from the entry instead of evaluating the target.
    std::unique_ptr<CompilationCacheSession> cache;
    if (flags.Has("delegate_serialize_dir") || flags.Has("delegate_serialize_token")) {
      cache = std::make_unique<CompilationCacheSession>(
          flags.GetString("delegate_serialize_dir"), flags.GetString("delegate_serialize_token"),
          flags.GetString("graph"), *model, target, flags.GetString("nnapi_accelerator_name"), options,
          model_file_bytes);
      interpreter->SetPackedWeightStore(cache->packed_weights());
      delegate = cache->MakeDelegate(num_threads);
    } else {
      delegate = MakeTargetDelegate(target, *model, flags.GetString("nnapi_accelerator_name"),
                                    std::move(options), num_threads);
    }
    delegate->UseKernels(interpreter_options.kernels);
    delegate->SetMaxMemoryBytes(interpreter_options.max_memory_bytes);
    status = interpreter->ModifyGraphWithDelegate(delegate.get());
    check_allocation(status);
    if (cache) std::cerr << cache->Commit(*interpreter, delegate.get()) << "\n";
    for (const std::string& line : interpreter->delegation_log()) std::cerr << line << "\n";
    for (const std::string& warning : interpreter->warnings()) std::cerr << "WARNING: " << warning << "\n";
  } else {
    // CPU only: the cache holds the optimized kernels' packed weights.
    std::unique_ptr<CompilationCacheSession> cache;
    if (flags.Has("delegate_serialize_dir") || flags.Has("delegate_serialize_token")) {
      cache = std::make_unique<CompilationCacheSession>(flags.GetString("delegate_serialize_dir"),
                                                        flags.GetString("delegate_serialize_token"),
                                                        flags.GetString("graph"), *model, interpreter_options.kernels,
                                                        model_file_bytes);
      interpreter->SetPackedWeightStore(cache->packed_weights());
    }
    status = interpreter->AllocateTensors();
    check_allocation(status);
    if (cache) std::cerr << cache->Commit(*interpreter, nullptr) << "\n";
  }

  // A plugin applies after --target's delegate, to the nodes it left.
  const std::unique_ptr<ExternalDelegate> external = ApplyExternalDelegate(flags, *interpreter);

  FillRandomInputs(*interpreter, seed);
  for (auto& [index, array] : npy_inputs) {
    TensorView in = interpreter->input(index);
    DLG_CHECK(array.data.size() == in.bytes, "input ", index, " (\"", in.name, "\"): .npy holds ",
              array.data.size(), " bytes, the input needs ", in.bytes);
    std::memcpy(in.data, array.data.data(), in.bytes);
  }
  if (flags.Has("image")) {
    RgbImage image = ReadBmp(flags.GetString("image"));
    DLG_CHECK(interpreter->num_inputs() >= 1, "--image: the model has no input");
    FillInputFromImage(image, interpreter->input(0));
  }

  const std::string output_dir = flags.GetString("output_dir");
  if (!output_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(output_dir, error);
    if (error || !std::filesystem::is_directory(output_dir))
      Fail("--output_dir ", output_dir, ": cannot create the directory: ",
           error ? error.message() : "a file of that name exists");
  }
  if (flags.GetBool("save_inputs")) {
    if (output_dir.empty()) throw UsageError("--save_inputs needs --output_dir");
    for (int i = 0; i < interpreter->num_inputs(); ++i) {
      TensorView in = interpreter->input(i);
      WriteNpy(output_dir + "/input_" + std::to_string(i) + ".npy", in.type,
               std::vector<int32_t>(in.dims.begin(), in.dims.end()), in.data, in.bytes);
    }
  }

  status = interpreter->Invoke();
  if (!status.ok()) Fail(status.message());

  for (int i = 0; i < interpreter->num_outputs(); ++i) {
    TensorView out = interpreter->output(i);
    std::cout << "output " << i << " \"" << out.name << "\" " << FormatDims(out.dims) << " "
              << FormatQuantization(out.type, out.scales, out.zero_points, out.quantized_dimension)
              << "\n";
    if (!output_dir.empty())
      WriteNpy(output_dir + "/output_" + std::to_string(i) + ".npy", out.type,
               std::vector<int32_t>(out.dims.begin(), out.dims.end()), out.data, out.bytes);
  }
  if (flags.Has("labels")) PrintTopK(*interpreter, flags.GetString("labels"), top_k);
  if (delegate) {
    for (const PartitionStats& p : delegate->stats())
      std::cerr << "partition " << p.partition << " (" << p.nodes.size() << " nodes, emulated on the host): compile "
                << p.compile_us / 1000 << " ms, invoke " << p.last_eval_us / 1000 << " ms host time, "
                << p.bytes_in << " bytes in, " << p.bytes_out << " bytes out, device arena "
                << p.device_bytes << " bytes\n";
  }
  return 0;
}

}  // namespace

int CmdRun(const Args& args) {
  return RunCommand("run", [&] { return Run(args); });
}

}  // namespace delegato::tools
