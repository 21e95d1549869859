// delegato bench: TFLite's benchmark_model, with its flag names, defaults,
// run semantics and output lines, so the commands and greps users already
// have keep working. Accelerators are emulated targets (--target), and the
// CPU path can be switched between optimized and reference kernels.
//
// Phases, as benchmark_model: initialization (load, interpreter, delegate,
// allocation; "Init"), warm-up (at least --warmup_runs runs and at least
// --warmup_min_secs seconds), then the measured runs (at least --num_runs and
// at least --min_secs), both phases stopping once --max_secs has passed.
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "delegate/emulated_delegate.h"
#include "model/model.h"
#include "tools/cache_hook.h"
#include "tools/commands.h"
#include "tools/external_delegate_flags.h"
#include "tools/flags.h"
#include "tools/placement.h"
#include "tools/profiler.h"
#include "tools/tool_util.h"

namespace delegato::tools {
namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_interrupted = 0;
void OnInterrupt(int) { g_interrupted = 1; }

// Catches SIGINT while it lives; the previous handler comes back after.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted = 0;
    struct sigaction action {};
    action.sa_handler = OnInterrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_);
  }
  ~InterruptGuard() { sigaction(SIGINT, &previous_, nullptr); }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction previous_ {};
};

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
}

Flags BenchFlags() {
  Flags flags;
  flags.Declare("graph", "model .tflite file (default: the built-in demo model)")
      .Declare("num_threads", "CPU threads (default 1)")
      .Declare("num_runs", "minimum number of measured runs (default 50), see --min_secs, --max_secs")
      .Declare("min_secs", "minimum seconds of measured runs (default 1)")
      .Declare("max_secs", "no new run starts after this many seconds of a phase (default 150)")
      .Declare("warmup_runs", "minimum number of warm-up runs (default 1)")
      .Declare("warmup_min_secs", "minimum seconds of warm-up runs (default 0.5)")
      .Declare("enable_op_profiling", "per-node timing tables (benchmark_model's layout)", true)
      .Declare("op_profiling_output_mode", "stdout (text tables, default) or csv")
      .Declare("op_profiling_output_file", "write the op profile to this file instead of stdout")
      .Declare("input_layer", "input names, comma-separated (e.g. input1,input2)")
      .Declare("input_layer_shape", "shapes of --input_layer, ':'-separated (e.g. 1,224,224,3:1,20)")
      .Declare("input_layer_value_range",
               "integer ranges of random inputs, NAME,LOW,HIGH items ':'-separated (inclusive; "
               "e.g. input1,1,2:input2,0,254)")
      .Declare("input_layer_value_files",
               "raw input bytes, NAME:FILE items ','-separated (e.g. input1:a.bin,input2:b.bin)")
      .Declare("require_full_delegation", "with --target: fail unless the delegate runs the whole graph", true)
      .Declare("max_delegated_partitions", "with --target: override the target's partition limit (0 = unlimited)")
      .Declare("min_nodes_per_partition", "with --target: partitions with fewer nodes stay on the CPU")
      .Declare("delegate_serialize_dir", "directory of the delegate compilation cache")
      .Declare("delegate_serialize_token", "model token of the delegate compilation cache")
      .Declare("report_peak_memory_footprint", "also report the peak memory footprint (VmHWM)", true)
      .Declare("target", "run through the emulated delegate of this accelerator target (id or .json)")
      .Declare("nnapi_accelerator_name", "with --target: name an accelerator explicitly (NNAPI targets)")
      .Declare("skip_nodes", "with --target: comma-separated node indices never delegated")
      .Declare("kernels", "optimized (default: fast kernels where they exist) or reference")
      .Declare("seed", "seed of the random inputs (default 0)")
      .Declare("format", "text (benchmark_model's log, default) or json (one object on stdout)")
      .Declare("max_memory_mb", kMaxMemoryHelp)
      .Declare("help", "show this help", true);
  DeclareExternalDelegateFlags(flags);
  return flags;
}

// benchmark_model flags delegato does not take, with what to use instead.
void RejectForeignFlags(const Args& args, const Flags& flags) {
  static const char* kDelegateFlags[] = {"use_nnapi", "use_gpu", "use_xnnpack", "use_hexagon",
                                         "use_coreml"};
  for (const std::string& arg : args) {
    if (arg.rfind("--", 0) != 0) continue;
    const std::string name = arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos
                                                                               : arg.find('=') - 2);
    for (const char* foreign : kDelegateFlags) {
      if (name != foreign) continue;
      std::string ids;
      for (const std::string& id : ListTargetIds(TargetsDir())) ids += (ids.empty() ? "" : ", ") + id;
      throw UsageError("--" + name + " is a benchmark_model flag delegato bench does not take: "
                       "accelerators are emulated targets, chosen with --target=ID (" + ids +
                       "); the CPU path is chosen with --kernels. Valid flags:\n" + flags.Help());
    }
  }
}

std::vector<std::string> Split(const std::string& text, char delimiter) {
  std::vector<std::string> items;
  if (text.empty()) return items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, delimiter);) items.push_back(item);
  if (text.back() == delimiter) items.emplace_back();
  return items;
}

bool ParseInt64(const std::string& text, int64_t* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return false;
  *value = v;
  return true;
}

// What the flags say about one input, before the model is known.
struct InputLayerSpec {
  std::string name;
  std::vector<int32_t> shape;  // empty: keep the model's
  bool has_range = false;
  int64_t low = 0, high = 0;
  std::string file;
};

// Parses --input_layer* with benchmark_model's syntax. Throws UsageError on
// malformed text; names are checked against the model later.
std::vector<InputLayerSpec> ParseInputLayers(const Flags& flags) {
  std::vector<InputLayerSpec> specs;
  auto find = [&](const std::string& name) -> InputLayerSpec& {
    for (InputLayerSpec& s : specs)
      if (s.name == name) return s;
    InputLayerSpec spec;
    spec.name = name;
    specs.push_back(std::move(spec));
    return specs.back();
  };
  const std::vector<std::string> names = Split(flags.GetString("input_layer"), ',');
  const std::vector<std::string> shapes = Split(flags.GetString("input_layer_shape"), ':');
  if (!shapes.empty() && names.size() != shapes.size())
    throw UsageError("the number of items in --input_layer_shape (" + flags.GetString("input_layer_shape") +
                     ", with " + std::to_string(shapes.size()) +
                     " items) must match the number of items in --input_layer (" +
                     flags.GetString("input_layer") + ", with " + std::to_string(names.size()) +
                     " items). For example --input_layer=input1,input2 --input_layer_shape=1,224,224,4:1,20");
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) throw UsageError("--input_layer has an empty name: '" + flags.GetString("input_layer") + "'");
    for (const InputLayerSpec& s : specs)
      if (s.name == names[i]) throw UsageError("--input_layer names '" + names[i] + "' twice");
    InputLayerSpec& spec = find(names[i]);
    if (shapes.empty()) continue;
    for (const std::string& dim : Split(shapes[i], ',')) {
      int64_t v = 0;
      if (!ParseInt64(dim, &v) || v < -1 || v > std::numeric_limits<int32_t>::max())
        throw UsageError("--input_layer_shape: '" + shapes[i] + "' is not a comma-separated list of sizes");
      if (v == -1)
        throw UsageError("--input_layer_shape: any unknown sizes in the shapes (-1's) must be replaced "
                         "with the size you want to benchmark with ('" + shapes[i] + "')");
      spec.shape.push_back(static_cast<int32_t>(v));
    }
  }
  for (const std::string& item : Split(flags.GetString("input_layer_value_range"), ':')) {
    const std::vector<std::string> parts = Split(item, ',');
    int64_t low = 0, high = 0;
    if (parts.size() != 3 || parts[0].empty())
      throw UsageError("--input_layer_value_range: wrong item '" + item +
                       "', expected NAME,LOW,HIGH (items separated by ':', e.g. input1,1,2:input2,0,254)");
    if (!ParseInt64(parts[1], &low) || !ParseInt64(parts[2], &high) || low > high)
      throw UsageError("--input_layer_value_range: wrong low and high values in '" + item +
                       "' (integers, low <= high)");
    InputLayerSpec& spec = find(parts[0]);
    spec.has_range = true;
    spec.low = low;
    spec.high = high;
  }
  for (const std::string& item : Split(flags.GetString("input_layer_value_files"), ',')) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
      throw UsageError("--input_layer_value_files: wrong item '" + item +
                       "', expected NAME:FILE (items separated by ',', e.g. input1:a.bin,input2:b.bin)");
    find(item.substr(0, colon)).file = item.substr(colon + 1);
  }
  return specs;
}

std::string InputNames(const Interpreter& interpreter) {
  std::string names;
  for (int i = 0; i < interpreter.num_inputs(); ++i)
    names += StrCat(i ? ", " : "", "'", interpreter.input(i).name, "'");
  return names;
}

int ResolveInputLayer(const Interpreter& interpreter, const std::string& name) {
  const int index = interpreter.FindInput(name);
  if (index < 0)
    Fail("--input_layer*: the model has no input named '", name, "' (its inputs: ", InputNames(interpreter), ")");
  return index;
}

// Random values of one input with benchmark_model's default ranges (float in
// [-0.5, 0.5), int32/int64/int16 in [0, 99], uint8 in [0, 254], int8 in
// [-127, 127], bool 0/1), or an integer range from the flags.
std::vector<uint8_t> RandomInput(const TensorView& in, const InputLayerSpec* spec, std::mt19937_64& rng,
                                 std::vector<std::string>* warnings) {
  const size_t element = DataTypeSize(in.type);
  if (element == 0)
    Fail("input '", in.name, "' has type ", DataTypeName(in.type),
         ": cannot generate random values, give --input_layer_value_files");
  const size_t n = in.bytes / element;
  std::vector<uint8_t> bytes(in.bytes);
  const bool ranged = spec != nullptr && spec->has_range;
  auto integers = [&](auto* out, int64_t low, int64_t high) {
    using T = std::remove_pointer_t<decltype(out)>;
    if (ranged) {
      low = spec->low;
      high = spec->high;
      if (low < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          high > static_cast<int64_t>(std::numeric_limits<T>::max()))
        Fail("--input_layer_value_range: ", low, ",", high, " is outside the range of input '", in.name,
             "' (", DataTypeName(in.type), ")");
    }
    std::uniform_int_distribution<int64_t> dist(low, high);
    for (size_t k = 0; k < n; ++k) out[k] = static_cast<T>(dist(rng));
  };
  switch (in.type) {
    case DataType::kFloat32: {
      if (ranged)
        warnings->push_back(StrCat("--input_layer_value_range applies to integer inputs: ignored for '",
                                   in.name, "' (FLOAT32)"));
      std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
      auto* out = reinterpret_cast<float*>(bytes.data());
      for (size_t k = 0; k < n; ++k) out[k] = dist(rng);
      break;
    }
    case DataType::kInt32: integers(reinterpret_cast<int32_t*>(bytes.data()), 0, 99); break;
    case DataType::kInt64: integers(reinterpret_cast<int64_t*>(bytes.data()), 0, 99); break;
    case DataType::kInt16: integers(reinterpret_cast<int16_t*>(bytes.data()), 0, 99); break;
    case DataType::kUInt8: integers(reinterpret_cast<uint8_t*>(bytes.data()), 0, 254); break;
    case DataType::kInt8: integers(reinterpret_cast<int8_t*>(bytes.data()), -127, 127); break;
    case DataType::kBool: integers(reinterpret_cast<uint8_t*>(bytes.data()), 0, 1); break;
    default:
      Fail("input '", in.name, "' has type ", DataTypeName(in.type),
           ": cannot generate random values, give --input_layer_value_files");
  }
  return bytes;
}

std::vector<uint8_t> ReadValueFile(const TensorView& in, const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) Fail("failed to read the input_layer_value_file '", path, "' (input '", in.name, "')");
  const auto size = static_cast<int64_t>(file.tellg());
  if (size != static_cast<int64_t>(in.bytes))
    Fail("the size of ", path, " is ", size, " bytes. It should be ", in.bytes, " bytes (input '", in.name,
         "', ", DataTypeName(in.type), " ", FormatDims(in.dims), ")");
  std::vector<uint8_t> bytes(in.bytes);
  file.seekg(0);
  file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!file) Fail("failed to read ", in.bytes, " bytes from ", path);
  return bytes;
}

// Resident and peak memory of this process in kB (/proc/self/status); -1
// where the file does not exist.
struct MemorySample {
  int64_t rss_kb = -1;
  int64_t hwm_kb = -1;
  bool ok() const { return rss_kb >= 0; }
};

MemorySample SampleMemory() {
  MemorySample sample;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    int64_t* field = line.rfind("VmRSS:", 0) == 0   ? &sample.rss_kb
                     : line.rfind("VmHWM:", 0) == 0 ? &sample.hwm_kb
                                                    : nullptr;
    if (field != nullptr) *field = std::strtoll(line.c_str() + 6, nullptr, 10);
  }
  return sample;
}

// A one-line progress report on stderr, only when it is a terminal.
class Progress {
 public:
  Progress() : enabled_(isatty(STDERR_FILENO) != 0) {}
  void Update(const char* phase, int runs, int64_t elapsed_us) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    std::fprintf(stderr, "\r\033[K%s: %d runs, %.1f s", phase, runs, static_cast<double>(elapsed_us) / 1e6);
    std::fflush(stderr);
  }
  void Clear() {
    if (!enabled_ || !shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  Clock::time_point last_;
};

// benchmark_model's log: "INFO: " lines on stdout; silent in JSON mode.
class Log {
 public:
  explicit Log(bool enabled) : enabled_(enabled) {}
  void Info(const std::string& text) { Line("INFO: ", text); }
  void Warn(const std::string& text) { Line("WARNING: ", text); }
  void Verbose(const std::string& text) { Line("VERBOSE: ", text); }
  void Raw(const std::string& text) {
    if (enabled_) std::cout << text << std::flush;
  }

 private:
  void Line(const char* level, const std::string& text) {
    if (enabled_) std::cout << level << text << "\n";
  }
  bool enabled_;
};

template <typename T>
std::string Streamed(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

double KbToMb(int64_t kb) { return static_cast<double>(kb) / 1024.0; }

int Bench(const Args& args) {
  const MemorySample tool_start_memory = SampleMemory();
  Flags flags = BenchFlags();
  RejectForeignFlags(args, flags);
  flags.Parse(args);
  if (flags.GetBool("help")) {
    std::cout << "usage: delegato bench [--graph MODEL] [flags]   (benchmark_model's flags and output)\n"
              << flags.Help();
    return 0;
  }
  if (!flags.positional().empty()) throw UsageError("unexpected argument '" + flags.positional()[0] + "'");

  // Every flag is validated before any work starts.
  const std::string graph_path = flags.GetString("graph");
  int num_threads = static_cast<int>(flags.GetInt("num_threads", 1, -1, 256));
  if (num_threads <= 0) num_threads = 1;  // benchmark_model's -1: the default
  const int num_runs = static_cast<int>(flags.GetInt("num_runs", 50, 0, std::numeric_limits<int32_t>::max()));
  const int warmup_runs = static_cast<int>(flags.GetInt("warmup_runs", 1, 0, std::numeric_limits<int32_t>::max()));
  // Seconds are floats in benchmark_model, and printed as floats.
  const auto min_secs = static_cast<float>(flags.GetDouble("min_secs", 1.0));
  const auto max_secs = static_cast<float>(flags.GetDouble("max_secs", 150.0));
  const auto warmup_min_secs = static_cast<float>(flags.GetDouble("warmup_min_secs", 0.5));
  for (const char* name : {"min_secs", "max_secs", "warmup_min_secs"})
    if (!std::isfinite(flags.GetDouble(name, 0))) throw UsageError(StrCat("--", name, " must be a finite number"));
  const bool op_profiling = flags.GetBool("enable_op_profiling");
  const std::string profiling_mode = flags.GetString("op_profiling_output_mode", "stdout");
  if (profiling_mode != "stdout" && profiling_mode != "csv")
    throw UsageError("--op_profiling_output_mode must be 'stdout' or 'csv', got '" + profiling_mode + "'");
  const std::string profiling_file = flags.GetString("op_profiling_output_file");
  const bool require_full_delegation = flags.GetBool("require_full_delegation");
  const bool report_peak_memory = flags.GetBool("report_peak_memory_footprint");
  const std::string format = flags.GetString("format", "text");
  if (format != "text" && format != "json")
    throw UsageError("--format must be 'text' or 'json', got '" + format + "'");
  const KernelSet kernels = ParseKernelSet(flags.GetString("kernels", "optimized"));
  const uint64_t seed = static_cast<uint64_t>(flags.GetInt("seed", 0, 0, INT64_MAX));
  const bool has_target = flags.Has("target");
  for (const char* name : {"nnapi_accelerator_name", "max_delegated_partitions", "min_nodes_per_partition",
                           "skip_nodes"})
    if (flags.Has(name) && !has_target)
      throw UsageError(StrCat("--", name, " needs --target (the emulated accelerator to delegate to)"));
  const int max_partitions = static_cast<int>(flags.GetInt("max_delegated_partitions", -1, 0, 1 << 20));
  const int min_nodes = static_cast<int>(flags.GetInt("min_nodes_per_partition", -1, 0, 1 << 20));
  const std::vector<int> skip_nodes = ParseIntList("skip_nodes", flags.GetString("skip_nodes"));
  if (flags.Has("delegate_serialize_token") && !flags.Has("delegate_serialize_dir"))
    throw UsageError("--delegate_serialize_token needs --delegate_serialize_dir");
  std::vector<InputLayerSpec> input_specs = ParseInputLayers(flags);
  const bool json_output = format == "json";

  Log log(!json_output);
  Progress progress;
  std::vector<std::string> warnings;

  // ---- the header: benchmark_model logs the parameters given.
  log.Info("STARTING!");
  log.Info(StrCat("delegato version : ", DELEGATO_VERSION));
  log.Info("Log parameter values verbosely: [0]");
  struct Logged {
    const char* flag;
    const char* label;
    std::string value;
  };
  const std::vector<Logged> logged = {
      {"num_runs", "Min num runs", std::to_string(num_runs)},
      {"min_secs", "Min runs duration (seconds)", Streamed(min_secs)},
      {"max_secs", "Max runs duration (seconds)", Streamed(max_secs)},
      {"num_threads", "Num threads", std::to_string(num_threads)},
      {"warmup_runs", "Min warmup runs", std::to_string(warmup_runs)},
      {"warmup_min_secs", "Min warmup runs duration (seconds)", Streamed(warmup_min_secs)},
      {"report_peak_memory_footprint", "Report the peak memory footprint", report_peak_memory ? "1" : "0"},
      {"graph", "Graph", graph_path},
      {"input_layer", "Input layers", flags.GetString("input_layer")},
      {"input_layer_shape", "Input shapes", flags.GetString("input_layer_shape")},
      {"input_layer_value_range", "Input value ranges", flags.GetString("input_layer_value_range")},
      {"input_layer_value_files", "Input value files", flags.GetString("input_layer_value_files")},
      {"require_full_delegation", "Require full delegation", require_full_delegation ? "1" : "0"},
      {"enable_op_profiling", "Enable op profiling", op_profiling ? "1" : "0"},
      {"op_profiling_output_mode", "Op profiling output mode", profiling_mode},
      {"op_profiling_output_file", "Op profiling output file", profiling_file},
      {"max_delegated_partitions", "Max number of delegated partitions", std::to_string(max_partitions)},
      {"min_nodes_per_partition", "Min nodes per partition", std::to_string(min_nodes)},
      {"delegate_serialize_dir", "Directory for delegate serialization", flags.GetString("delegate_serialize_dir")},
      {"delegate_serialize_token", "Model-specific token/key for delegate serialization",
       flags.GetString("delegate_serialize_token")},
      {"target", "Target (emulated accelerator)", flags.GetString("target")},
      {"nnapi_accelerator_name", "NNAPI accelerator name", flags.GetString("nnapi_accelerator_name")},
      {"skip_nodes", "Skip nodes", flags.GetString("skip_nodes")},
      {"kernels", "CPU kernels", flags.GetString("kernels")},
      {"seed", "Random input seed", std::to_string(seed)},
  };
  for (const Logged& p : logged)
    if (flags.Has(p.flag) || std::strcmp(p.flag, "graph") == 0) log.Info(StrCat(p.label, ": [", p.value, "]"));

  // ---- initialization, timed as benchmark_model's "Init".
  std::error_code size_error;
  int64_t model_bytes = graph_path.empty() ? 0
                                           : static_cast<int64_t>(std::filesystem::file_size(graph_path, size_error));
  if (size_error) model_bytes = 0;
  const int64_t init_start_us = NowMicros();

  // Where Init's time goes (JSON "init_phases"): reading the model, making
  // the interpreter, the compilation cache's lookup and commit, and
  // AllocateTensors / ModifyGraphWithDelegate split into Prepare (of which
  // the packed weights) and the arena.
  nlohmann::json init_phases = nlohmann::json::object();
  int64_t phase_start_us = init_start_us;
  auto end_phase = [&](const char* name) {
    const int64_t now = NowMicros();
    init_phases[name] = now - phase_start_us;
    phase_start_us = now;
  };
  auto model = LoadModelOrDemo(graph_path);
  // The cache's key hashes the mapped file (read once).
  const std::span<const uint8_t> model_file_bytes = ModelFileBytes(*model);
  end_phase("load_us");
  if (graph_path.empty()) model_bytes = static_cast<int64_t>(WriteModel(*model).size());
  log.Info("Loaded model " + (graph_path.empty() ? std::string("<demo model>") : graph_path));
  Status status;
  InterpreterOptions interpreter_options;
  interpreter_options.num_threads = num_threads;
  interpreter_options.kernels = kernels;
  interpreter_options.max_memory_bytes = MaxMemoryBytes(flags);
  auto interpreter = Interpreter::Create(model, interpreter_options, &status);
  if (!status.ok()) Fail(status.message());
  end_phase("create_us");
  log.Info("Initialized delegato runtime.");

  // Input layers: names against the model, then resizes (before the
  // delegate, which allocates).
  std::vector<const InputLayerSpec*> spec_of_input(interpreter->num_inputs(), nullptr);
  for (const InputLayerSpec& spec : input_specs) {
    const int index = ResolveInputLayer(*interpreter, spec.name);
    spec_of_input[index] = &spec;
    if (spec.shape.empty()) continue;
    const TensorView in = interpreter->input(index);
    if (spec.shape.size() != in.dims.size())
      Fail("--input_layer_shape: input '", spec.name, "' has ", in.dims.size(), " dimensions ",
           FormatDims(in.dims), ", the flag gives ", spec.shape.size(), " ", FormatDims(spec.shape));
    status = interpreter->ResizeInput(index, spec.shape);
    if (!status.ok()) Fail("--input_layer_shape: input '", spec.name, "': ", status.message());
  }

  OpProfile init_profile, run_profile, delegate_profile;
  std::unique_ptr<EmulatedDelegate> delegate;
  std::optional<Target> target;
  nlohmann::json delegation_json = nullptr;
  std::string cache_line;
  std::shared_ptr<PackedWeightStore> interpreter_packed_weights;  // the cache's, when one is used
  const int num_model_nodes = static_cast<int>(model->subgraphs.at(0).operators.size());
  if (has_target) {
    target = FindTarget(flags.GetString("target"), TargetsDir());
    DelegateOptions options = TargetDelegateOptions(*target, max_partitions, min_nodes, skip_nodes, -1, -1);
    // With a cache directory, a hit answers from the cache entry instead of
    // evaluating the target's rules (src/tools/cache_hook.h).
    std::unique_ptr<CompilationCacheSession> cache;
    if (flags.Has("delegate_serialize_dir") || flags.Has("delegate_serialize_token")) {
      cache = std::make_unique<CompilationCacheSession>(
          flags.GetString("delegate_serialize_dir"), flags.GetString("delegate_serialize_token"), graph_path,
          *model, *target, flags.GetString("nnapi_accelerator_name"), options, model_file_bytes);
      interpreter_packed_weights = cache->packed_weights();
      interpreter->SetPackedWeightStore(interpreter_packed_weights);
      end_phase("cache_lookup_us");
      delegate = cache->MakeDelegate(num_threads);
    } else {
      delegate = MakeTargetDelegate(*target, *model, flags.GetString("nnapi_accelerator_name"), std::move(options),
                                    num_threads);
    }
    delegate->EnableNodeProfiling(op_profiling);
    delegate->UseKernels(kernels);
    delegate->SetMaxMemoryBytes(interpreter_options.max_memory_bytes);
    log.Info(StrCat("Created emulated delegate for target ", target->id, "."));
    const MemorySample before = SampleMemory();
    phase_start_us = NowMicros();
    const int64_t start_us = phase_start_us;
    status = interpreter->ModifyGraphWithDelegate(delegate.get());
    const int64_t elapsed_us = NowMicros() - start_us;
    end_phase("allocate_us");
    if (!status.ok()) Fail("failed to apply the ", target->id, " delegate: ", status.message());
    if (cache) {
      cache_line = cache->Commit(*interpreter, delegate.get());
      end_phase("cache_commit_us");
    }
    init_profile.Add("ModifyGraphWithDelegate/0", "ModifyGraphWithDelegate", elapsed_us,
                     before.ok() ? (SampleMemory().rss_kb - before.rss_kb) * 1000 : 0);

    const std::vector<int> plan = interpreter->execution_plan();
    int delegate_kernels = 0, cpu_runs = 0, nodes_delegated = 0;
    for (size_t p = 0; p < plan.size(); ++p) {
      if (plan[p] >= num_model_nodes) ++delegate_kernels;
      else if (p == 0 || plan[p - 1] >= num_model_nodes) ++cpu_runs;
    }
    for (const Interpreter::Placement& placement : interpreter->placements())
      nodes_delegated += placement.delegated ? 1 : 0;
    const bool fully_delegated = delegate_kernels == 1 && plan.size() == 1;
    if (nodes_delegated > 0)
      log.Verbose(StrCat("Replacing ", nodes_delegated, " out of ", num_model_nodes,
                         " node(s) with delegate (", target->id, ") node, yielding ",
                         delegate_kernels + cpu_runs, " partitions for the whole graph."));
    for (const std::string& line : interpreter->delegation_log()) log.Info(line);
    for (const std::string& warning : interpreter->warnings()) {
      log.Warn(warning);
      warnings.push_back(warning);
    }
    if (!cache_line.empty()) log.Info(cache_line);
    std::string how;
    if (fully_delegated) {
      how = "the model graph will be completely executed by the delegate.";
    } else if (delegate_kernels > 0) {
      how = StrCat("the model graph will be partially executed by the delegate w/ ", delegate_kernels,
                   " delegate kernels.");
    }
    if (require_full_delegation && !fully_delegated)
      Fail("Disallowed CPU fallback detected: --require_full_delegation is set and ",
           delegate_kernels > 0 ? how : std::string("the model graph will not be executed by the delegate."),
           " (", nodes_delegated, " of ", num_model_nodes, " nodes delegated; `delegato plan --graph ... --target ",
           target->id, "` says why the others are not)");
    if (delegate_kernels > 0)
      log.Info(StrCat("Explicitly applied ", target->id, " delegate, and ", how));
    else
      log.Info(StrCat("Though ", target->id,
                      " delegate is explicitly applied, the model graph will not be executed by the delegate."));
    log.Info(StrCat("Note: ", target->id, " is emulated on the host CPU: delegated partitions are timed as "
                    "host work, not as accelerator latency."));
    nlohmann::json log_lines = interpreter->delegation_log();
    delegation_json = {{"target", target->id},
                       {"delegate", delegate->name()},
                       {"nodes_total", num_model_nodes},
                       {"nodes_delegated", nodes_delegated},
                       {"delegate_kernels", delegate_kernels},
                       {"partitions", delegate_kernels + cpu_runs},
                       {"fully_delegated", fully_delegated},
                       {"log", log_lines},
                       {"warnings", interpreter->warnings()}};
  } else {
    // CPU only: the cache holds the optimized kernels' packed weights.
    std::unique_ptr<CompilationCacheSession> cache;
    if (flags.Has("delegate_serialize_dir") || flags.Has("delegate_serialize_token")) {
      cache = std::make_unique<CompilationCacheSession>(flags.GetString("delegate_serialize_dir"),
                                                        flags.GetString("delegate_serialize_token"), graph_path,
                                                        *model, kernels, model_file_bytes);
      interpreter_packed_weights = cache->packed_weights();
      interpreter->SetPackedWeightStore(interpreter_packed_weights);
      end_phase("cache_lookup_us");
    }
    const MemorySample before = SampleMemory();
    phase_start_us = NowMicros();
    const int64_t start_us = phase_start_us;
    status = interpreter->AllocateTensors();
    const int64_t elapsed_us = NowMicros() - start_us;
    end_phase("allocate_us");
    if (!status.ok()) Fail(status.message());
    if (cache) {
      cache_line = cache->Commit(*interpreter, nullptr);
      end_phase("cache_commit_us");
      log.Info(cache_line);
    }
    init_profile.Add("AllocateTensors/0", "AllocateTensors", elapsed_us,
                     before.ok() ? (SampleMemory().rss_kb - before.rss_kb) * 1000 : 0);
  }
  // --external_delegate_path: a TFLite plugin takes what is left, timed as TFLite does.
  std::unique_ptr<ExternalDelegate> external;
  if (flags.Has("external_delegate_path")) {
    const MemorySample before = SampleMemory();
    const int64_t start_us = NowMicros();
    external = ApplyExternalDelegate(flags, *interpreter);
    init_profile.Add("ModifyGraphWithDelegate/1", "ModifyGraphWithDelegate", NowMicros() - start_us,
                     before.ok() ? (SampleMemory().rss_kb - before.rss_kb) * 1000 : 0);
  }
  init_profile.EndRun();
  const int64_t init_us = NowMicros() - init_start_us;
  {
    // The subgraph-0 interpreter's last allocation (with a target: its CPU
    // nodes and delegate nodes, whose Prepare compiles the device graphs).
    const Interpreter::AllocateTimings timings = interpreter->allocate_timings();
    init_phases["prepare_us"] = timings.prepare_us;
    init_phases["arena_us"] = timings.arena_us;
    if (const std::shared_ptr<PackedWeightStore>& store = interpreter_packed_weights) {
      const PackedWeightStore::Counters c = store->counters();
      init_phases["weights_loaded_us"] = c.load_us;
      init_phases["weights_packed_us"] = c.pack_us;
    }
  }
  const MemorySample init_end_memory = SampleMemory();

  if (model_bytes > 0)
    log.Info("The input model file size (MB): " + FormatDefault(static_cast<double>(model_bytes) / 1e6));
  else
    log.Warn("Failed to get the input model file size.");
  log.Info("Initialized session in " + FormatDefault(static_cast<double>(init_us) / 1e3) + "ms.");

  // ---- input data, prepared once and copied in before every run.
  std::vector<std::vector<uint8_t>> input_data;
  std::mt19937_64 rng(seed);
  const size_t warnings_before_inputs = warnings.size();
  for (int i = 0; i < interpreter->num_inputs(); ++i) {
    const TensorView in = interpreter->input(i);
    const InputLayerSpec* spec = spec_of_input[i];
    if (spec != nullptr && !spec->file.empty()) {
      if (spec->has_range)
        warnings.push_back(StrCat("input '", in.name, "' appears both in --input_layer_value_files and "
                                  "--input_layer_value_range: the range is ignored"));
      input_data.push_back(ReadValueFile(in, spec->file));
    } else {
      input_data.push_back(RandomInput(in, spec, rng, &warnings));
    }
  }
  for (size_t w = warnings_before_inputs; w < warnings.size(); ++w) log.Warn(warnings[w]);

  // ---- profile names: "[output tensor names]:node_index", type = op or delegate.
  std::vector<std::string> node_names(interpreter->num_nodes()), node_types(interpreter->num_nodes());
  for (int n = 0; n < interpreter->num_nodes(); ++n) {
    const NodeView node = interpreter->node(n);
    std::string name = "[";
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int32_t t = node.outputs[k];
      name += (k ? ", " : "") + (t >= 0 ? std::string(interpreter->tensor(t).name) : std::string("Unknown"));
    }
    node_names[n] = name + "]:" + std::to_string(n);
    node_types[n] = std::string(node.op_name);
  }
  std::vector<std::pair<int, int64_t>> node_times;
  node_times.reserve(interpreter->num_nodes());

  // ---- SIGINT ends the loop after the invocation in flight: the run stops
  // with an error and writes no results (no partial profile or JSON).
  const InterruptGuard interrupt_guard;

  // ---- one phase: benchmark_model's loop.
  auto run_phase = [&](const char* phase, int min_runs, float phase_min_secs, bool regular) {
    log.Info(StrCat("Running benchmark for at least ", min_runs, " iterations and at least ",
                    Streamed(phase_min_secs), " seconds but terminate if exceeding ", Streamed(max_secs),
                    " seconds."));
    TimingStat stat;
    const int64_t phase_start_us = NowMicros();
    int64_t now_us = phase_start_us;
    const int64_t min_finish_us = now_us + static_cast<int64_t>(phase_min_secs * 1.e6f);
    const int64_t max_finish_us = now_us + static_cast<int64_t>(max_secs * 1.e6f);
    const bool profile = regular && op_profiling;
    for (int run = 0; (run < min_runs || now_us < min_finish_us) && now_us <= max_finish_us; ++run) {
      if (g_interrupted) {
        progress.Clear();
        Fail("interrupted (SIGINT) during the ", phase, " phase after ", run,
             " runs; no results written");
      }
      for (int i = 0; i < interpreter->num_inputs(); ++i) {
        const TensorView in = interpreter->input(i);
        std::memcpy(in.data, input_data[i].data(), std::min(in.bytes, input_data[i].size()));
      }
      node_times.clear();
      const int64_t start_us = NowMicros();
      if (profile) {
        auto last = Clock::now();
        status = interpreter->Invoke([&](int node) {
          const auto now = Clock::now();
          node_times.emplace_back(node, std::chrono::duration_cast<std::chrono::microseconds>(now - last).count());
          last = now;
        });
      } else {
        status = interpreter->Invoke();
      }
      const int64_t end_us = NowMicros();
      if (!status.ok()) {
        progress.Clear();
        Fail("Invoke failed in ", phase, " run ", run, ": ", status.message());
      }
      stat.Add(end_us - start_us);
      if (profile) {
        for (const auto& [node, us] : node_times) run_profile.Add(node_names[node], node_types[node], us);
        run_profile.EndRun();
        if (delegate) {
          for (const PartitionStats& p : delegate->stats())
            for (size_t k = 0; k < p.nodes.size() && k < p.last_node_us.size(); ++k)
              delegate_profile.Add(StrCat("Delegate/", node_types[p.nodes[k]], ":", p.nodes[k]), "DelegateOpInvoke",
                                   static_cast<int64_t>(p.last_node_us[k]));
          delegate_profile.EndRun();
        }
      }
      now_us = NowMicros();
      progress.Update(phase, run + 1, now_us - phase_start_us);
    }
    progress.Clear();
    log.Info(stat.ToString());
    log.Raw("\n");
    return stat;
  };
  const TimingStat warmup = run_phase("warm-up", warmup_runs, warmup_min_secs, false);
  const TimingStat inference = run_phase("benchmark", num_runs, min_secs, true);
  const MemorySample end_memory = SampleMemory();

  // ---- results, as benchmark_model's logging listener prints them.
  log.Info(StrCat("Inference timings in us: Init: ", init_us, ", First inference: ", warmup.first(),
                  ", Warmup (avg): ", FormatDefault(warmup.avg()), ", Inference (avg): ",
                  FormatDefault(inference.avg())));
  const bool memory_known = tool_start_memory.ok() && init_end_memory.ok() && end_memory.ok();
  if (memory_known) {
    log.Info("Note: as the benchmark tool itself affects memory footprint, the following is only APPROXIMATE "
             "to the actual memory footprint of the model at runtime. Take the information at your discretion.");
    log.Info("Memory footprint delta from the start of the tool (MB): init=" +
             FormatDefault(KbToMb(init_end_memory.rss_kb - tool_start_memory.rss_kb)) +
             " overall=" + FormatDefault(KbToMb(end_memory.rss_kb - tool_start_memory.rss_kb)));
    if (report_peak_memory)
      log.Info("Peak memory footprint (MB): init=" +
               FormatDefault(KbToMb(init_end_memory.hwm_kb - tool_start_memory.hwm_kb)) +
               " overall=" + FormatDefault(KbToMb(end_memory.hwm_kb - tool_start_memory.hwm_kb)));
  }

  // ---- op profile: stdout, or a file, in text or CSV.
  if (op_profiling) {
    const OpProfile::Format profile_format =
        profiling_mode == "csv" ? OpProfile::Format::kCsv : OpProfile::Format::kText;
    std::string report;
    if (!init_profile.empty())
      report += FormatProfileSection("Profiling Info for Benchmark Initialization:", init_profile, nullptr,
                                     profile_format);
    if (!run_profile.empty())
      report += FormatProfileSection("Operator-wise Profiling Info for Regular Benchmark Runs:", run_profile,
                                     &delegate_profile, profile_format);
    if (!profiling_file.empty()) {
      // A temporary file renamed into place: never a partial profile under its name.
      try {
        WriteFileAtomically(profiling_file, {report});
      } catch (const Error& e) {
        Fail("--op_profiling_output_file: ", e.what());
      }
      log.Info("Op profile written to " + profiling_file);
    } else {
      log.Raw(report);
    }
  }

  if (json_output) {
    auto mb_or_null = [&](int64_t kb_delta) -> nlohmann::json {
      if (!memory_known) return nullptr;
      return KbToMb(kb_delta);
    };
    nlohmann::json params = {{"graph", graph_path},
                             {"num_threads", num_threads},
                             {"num_runs", num_runs},
                             {"min_secs", min_secs},
                             {"max_secs", max_secs},
                             {"warmup_runs", warmup_runs},
                             {"warmup_min_secs", warmup_min_secs},
                             {"kernels", flags.GetString("kernels", "optimized")},
                             {"seed", seed},
                             {"enable_op_profiling", op_profiling}};
    if (has_target) params["target"] = flags.GetString("target");
    nlohmann::json profile = nullptr;
    if (op_profiling)
      profile = {{"init", init_profile.ToJson()},
                 {"runs", run_profile.ToJson()},
                 {"delegate_internal", delegate_profile.empty() ? nlohmann::json(nullptr) : delegate_profile.ToJson()}};
    const nlohmann::json result = {
        {"tool", "delegato bench"},
        {"version", DELEGATO_VERSION},
        {"model", graph_path.empty() ? std::string("<demo model>") : graph_path},
        {"model_size_mb", static_cast<double>(model_bytes) / 1e6},
        {"params", params},
        {"init_us", init_us},
        {"first_inference_us", warmup.empty() ? nlohmann::json(nullptr) : nlohmann::json(warmup.first())},
        {"init_phases", init_phases},
        {"warmup", warmup.ToJson()},
        {"inference", inference.ToJson()},
        {"memory",
         {{"init_mb", mb_or_null(init_end_memory.rss_kb - tool_start_memory.rss_kb)},
          {"overall_mb", mb_or_null(end_memory.rss_kb - tool_start_memory.rss_kb)},
          {"peak_init_mb", mb_or_null(init_end_memory.hwm_kb - tool_start_memory.hwm_kb)},
          {"peak_overall_mb", mb_or_null(end_memory.hwm_kb - tool_start_memory.hwm_kb)},
          {"peak_vmhwm_mb", memory_known ? nlohmann::json(KbToMb(end_memory.hwm_kb)) : nlohmann::json(nullptr)}}},
        {"delegation", delegation_json},
        {"cache", cache_line.empty() ? nlohmann::json(nullptr) : nlohmann::json(cache_line)},
        {"warnings", warnings},
        {"profile", profile}};
    std::cout << result.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

int CmdBench(const Args& args) {
  return RunCommand("bench", [&] { return Bench(args); });
}

}  // namespace delegato::tools
