// delegato diff: TFLite's inference_diff. The reference (one thread, the
// reference kernels, CPU only) and the configuration under test (threads,
// kernel set, an accelerator target through the emulated delegate, and/or a
// rewritten model) run on the same seeded random inputs; every output's
// absolute element-wise error on raw values is summarised over the runs.
//
// Beyond inference_diff, --per_layer compares every intermediate tensor of
// the two runs and names the first node whose output diverges: the tensors
// are copied in Invoke's after-node callback (the arena reuses their memory
// once their lifetime ends). For a delegated partition only its boundary
// outputs are observable, so its inner nodes are reported as such.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "delegate/emulated_delegate.h"
#include "tools/commands.h"
#include "tools/external_delegate_flags.h"
#include "tools/flags.h"
#include "tools/placement.h"
#include "tools/tool_util.h"

namespace delegato::tools {
namespace {

Flags DiffFlags() {
  Flags flags;
  flags.Declare("graph", "model .tflite file (default: the built-in demo model)")
      .Declare("model_file", "same as --graph (inference_diff's name)")
      .Declare("test_graph", "run this model as the test (a rewrite with the same inputs and outputs)")
      .Declare("num_runs", "evaluation runs, each on new random inputs (default 50)")
      .Declare("invocations_per_run", "invocations per run, all timed (default 3, as inference_diff)")
      .Declare("seed", "seed of the random inputs (default 0; 0 and 1 give inference_diff's own sequence)")
      .Declare("num_threads", "test: CPU threads (default 1)")
      .Declare("num_interpreter_threads", "same as --num_threads (inference_diff's name)")
      .Declare("kernels", "test: optimized (default) or reference CPU kernels")
      .Declare("target", "test: run through the emulated delegate of this accelerator target (id or .json)")
      .Declare("nnapi_accelerator_name", "with --target: name an accelerator explicitly (NNAPI targets)")
      .Declare("max_delegated_partitions", "with --target: override the target's partition limit (0 = unlimited)")
      .Declare("min_nodes_per_partition", "with --target: partitions with fewer nodes stay on the CPU")
      .Declare("skip_nodes", "with --target: comma-separated node indices never delegated")
      .Declare("max_abs_error", "fail (exit 3) when any output element differs by more than this (raw units)")
      .Declare("per_layer", "compare every intermediate tensor and name the first diverging node", true)
      .Declare("layer_tolerance",
               "per-layer: allowed difference, in raw units (LSB) for integer tensors and relative to "
               "max(|reference|, 1) for float tensors (default 0 and 1e-5)")
      .Declare("format", "text (default) or json")
      .Declare("max_memory_mb", kMaxMemoryHelp)
      .Declare("help", "show this help", true);
  DeclareExternalDelegateFlags(flags);
  return flags;
}

// TFLite's Stat (tensorflow/core/util/stats_calculator.h): population
// standard deviation, 0 when all values are equal.
struct RunningStat {
  int64_t count = 0;
  double sum = 0, squared_sum = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  void Add(double v) {
    ++count;
    sum += v;
    squared_sum += v * v;
    min = std::min(min, v);
    max = std::max(max, v);
  }
  double avg() const { return count ? sum / count : std::numeric_limits<double>::quiet_NaN(); }
  double std_dev() const {
    if (count == 0 || min == max) return 0;
    return std::sqrt(std::max(0.0, squared_sum / count - avg() * avg()));
  }
};

// inference_diff's inputs: a normal distribution (mean 0.5, std 1/3) redrawn
// until in [0, 1), scaled to the type's range as float arithmetic. One engine
// and one distribution for the whole session, as in TFLite (the
// distribution keeps the second value of each pair it draws).
class GaussianInputs {
 public:
  explicit GaussianInputs(uint64_t seed) : engine_(static_cast<std::default_random_engine::result_type>(seed)) {}

  double Next() {
    double r = normal_(engine_);
    while (r < 0 || r >= 1) r = normal_(engine_);
    return r;
  }
  template <class T>
  void Fill(T* data, size_t n, float min, float max) {
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<T>(min + (max - min) * static_cast<float>(Next()));
  }

  // Types inference_diff supports use its ranges; the others are ours:
  // int16 over its full range, int32/int64 in [0, 10) (indices, lengths), bool 0/1.
  void Fill(const TensorView& t) {
    const size_t n = t.bytes / std::max<size_t>(1, DataTypeSize(t.type));
    switch (t.type) {
      case DataType::kUInt8: Fill(static_cast<uint8_t*>(t.data), n, 0.0f, 255.0f); break;
      case DataType::kInt8: Fill(static_cast<int8_t*>(t.data), n, -128.0f, 127.0f); break;
      case DataType::kInt16: Fill(static_cast<int16_t*>(t.data), n, -32768.0f, 32767.0f); break;
      case DataType::kFloat32: Fill(static_cast<float*>(t.data), n, -1.0f, 1.0f); break;
      case DataType::kInt32: Fill(static_cast<int32_t*>(t.data), n, 0.0f, 10.0f); break;
      case DataType::kInt64: Fill(static_cast<int64_t*>(t.data), n, 0.0f, 10.0f); break;
      case DataType::kBool:
        for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(t.data)[i] = Next() >= 0.5 ? 1 : 0;
        break;
      default:
        Fail("input \"", t.name, "\": cannot generate random values of type ", DataTypeName(t.type));
    }
  }

 private:
  std::default_random_engine engine_;
  std::normal_distribution<double> normal_{0.5, 1.0 / 3};
};

// Element i of a tensor as a double (raw value, not dequantized).
double ElementAt(DataType type, const void* data, size_t i) {
  switch (type) {
    case DataType::kFloat32: return static_cast<const float*>(data)[i];
    case DataType::kUInt8: return static_cast<const uint8_t*>(data)[i];
    case DataType::kInt8: return static_cast<const int8_t*>(data)[i];
    case DataType::kInt16: return static_cast<const int16_t*>(data)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(data)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DataType::kBool: return static_cast<const uint8_t*>(data)[i] ? 1 : 0;
    case DataType::kUInt16: return static_cast<const uint16_t*>(data)[i];
    case DataType::kUInt32: return static_cast<const uint32_t*>(data)[i];
    case DataType::kFloat64: return static_cast<const double*>(data)[i];
    default: return 0;
  }
}

bool Comparable(DataType type) {
  switch (type) {
    case DataType::kFloat32: case DataType::kUInt8: case DataType::kInt8: case DataType::kInt16:
    case DataType::kInt32: case DataType::kInt64: case DataType::kBool: case DataType::kUInt16:
    case DataType::kUInt32: case DataType::kFloat64:
      return true;
    default:
      return false;
  }
}

bool IsFloat(DataType type) { return type == DataType::kFloat32 || type == DataType::kFloat64; }

double AbsError(double reference, double test) {
  const bool nan_r = std::isnan(reference), nan_t = std::isnan(test);
  if (nan_r || nan_t) return nan_r && nan_t ? 0 : std::numeric_limits<double>::infinity();
  if (reference == test) return 0;  // also equal infinities
  return std::abs(test - reference);
}

std::string LowerTypeName(DataType type) {
  std::string name(DataTypeName(type));
  for (char& c : name) c = static_cast<char>(std::tolower(c));
  return name;
}

// A number as TFLite's LOG prints it (ostream defaults: 6 significant digits).
std::string Num(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// ------------------------------------------------------------------ per-layer capture

// Tensor bytes copied after the node that wrote them, for the last
// invocation of a run.
struct Capture {
  std::map<int, std::vector<uint8_t>> tensors;  // tensor index -> bytes

  void Take(const Interpreter& interpreter, int node_index) {
    for (int32_t t : interpreter.node(node_index).outputs) {
      if (t < 0) continue;
      const TensorView view = interpreter.tensor(t);
      auto& bytes = tensors[t];
      bytes.assign(static_cast<const uint8_t*>(view.data), static_cast<const uint8_t*>(view.data) + view.bytes);
    }
  }
};

struct LayerRow {
  int node = -1;                // reference model node
  std::string op;
  int tensor = -1;              // reference tensor index
  std::string tensor_name;
  DataType type = DataType::kFloat32;
  int test_tensor = -1;         // -1: not observable in the test run
  std::string note;             // where the test computed it / why not compared
  int partition = -1;           // test delegate partition producing it, -1 = CPU
  double max_abs = 0;
  double sum_abs = 0;
  int64_t elements = 0;         // compared, over all runs
  int64_t differing = 0;        // beyond the tolerance, over all runs
  bool compared() const { return test_tensor >= 0; }
  double mean_abs() const { return elements ? sum_abs / elements : 0; }
};

// ------------------------------------------------------------------ one side of the diff

struct Side {
  std::shared_ptr<const ModelDef> model;
  std::unique_ptr<Interpreter> interpreter;
  std::unique_ptr<EmulatedDelegate> delegate;
  RunningStat latency_us;
  Capture capture;
};

std::string DescribeTensor(const TensorView& t) {
  return StrCat(LowerTypeName(t.type), " ", FormatDims(t.dims));
}

// The test graph must take and give the same tensors as the reference model.
void CheckSameInterface(const Interpreter& reference, const Interpreter& test) {
  auto fail = [](const std::string& what) {
    Fail("--test_graph: ", what, ": the test graph must have the same inputs and outputs as --graph");
  };
  if (reference.num_inputs() != test.num_inputs())
    fail(StrCat("it has ", test.num_inputs(), " inputs, the reference model ", reference.num_inputs()));
  if (reference.num_outputs() != test.num_outputs())
    fail(StrCat("it has ", test.num_outputs(), " outputs, the reference model ", reference.num_outputs()));
  for (int i = 0; i < reference.num_inputs(); ++i) {
    const TensorView a = reference.input(i), b = test.input(i);
    if (a.type != b.type || !std::equal(a.dims.begin(), a.dims.end(), b.dims.begin(), b.dims.end()))
      fail(StrCat("input ", i, " (\"", b.name, "\") is ", DescribeTensor(b), ", the reference model's (\"", a.name,
                  "\") is ", DescribeTensor(a)));
  }
  for (int i = 0; i < reference.num_outputs(); ++i) {
    const TensorView a = reference.output(i), b = test.output(i);
    if (a.type != b.type || a.bytes != b.bytes)
      fail(StrCat("output ", i, " (\"", b.name, "\") is ", DescribeTensor(b), ", the reference model's (\"", a.name,
                  "\") is ", DescribeTensor(a)));
  }
}

struct OutputDiff {
  std::string name;
  DataType type = DataType::kFloat32;
  RunningStat per_run;      // inference_diff's: mean |error| of each run
  double max_abs = 0;       // largest element error over all runs
  int64_t elements = 0, differing = 0;
};

int Diff(const Args& args) {
  Flags flags = DiffFlags();
  flags.Parse(args);
  if (flags.GetBool("help")) {
    std::cout << "usage: delegato diff --graph MODEL [--test_graph MODEL2] [--target T] [flags]\n"
              << "Runs the reference (1 thread, reference kernels, CPU) and the configuration under test on the\n"
              << "same random inputs and reports each output's error (TFLite's inference_diff).\n"
              << flags.Help();
    return 0;
  }
  if (!flags.positional().empty()) throw UsageError("unexpected argument '" + flags.positional()[0] + "'");
  if (flags.Has("graph") && flags.Has("model_file")) throw UsageError("give --graph or --model_file, not both");
  if (flags.Has("num_threads") && flags.Has("num_interpreter_threads"))
    throw UsageError("give --num_threads or --num_interpreter_threads, not both");
  const std::string format = flags.GetString("format", "text");
  if (format != "text" && format != "json") throw UsageError("--format must be text or json, got '" + format + "'");
  const bool json = format == "json";
  const std::string graph = flags.Has("model_file") ? flags.GetString("model_file") : flags.GetString("graph");
  const int num_runs = static_cast<int>(flags.GetInt("num_runs", 50, 1, 1 << 24));
  const int invocations = static_cast<int>(flags.GetInt("invocations_per_run", 3, 1, 1000));
  const uint64_t seed = static_cast<uint64_t>(flags.GetInt("seed", 0, 0, INT64_MAX));
  const int num_threads = static_cast<int>(flags.Has("num_interpreter_threads")
                                               ? flags.GetInt("num_interpreter_threads", 1, 1, 256)
                                               : flags.GetInt("num_threads", 1, 1, 256));
  const KernelSet test_kernels = ParseKernelSet(flags.GetString("kernels", "optimized"));
  const bool per_layer = flags.GetBool("per_layer");
  const bool has_max_abs = flags.Has("max_abs_error");
  const double max_abs_limit = flags.GetDouble("max_abs_error", 0);
  if (has_max_abs && !(max_abs_limit >= 0)) throw UsageError("--max_abs_error must be >= 0");
  const bool has_tolerance = flags.Has("layer_tolerance");
  const double layer_tolerance = flags.GetDouble("layer_tolerance", 0);
  if (has_tolerance && !(layer_tolerance >= 0)) throw UsageError("--layer_tolerance must be >= 0");
  if (has_tolerance && !per_layer) throw UsageError("--layer_tolerance needs --per_layer");
  for (const char* f : {"nnapi_accelerator_name", "max_delegated_partitions", "min_nodes_per_partition", "skip_nodes"})
    if (flags.Has(f) && !flags.Has("target")) throw UsageError(StrCat("--", f, " needs --target"));
  auto tolerance_for = [&](DataType type) { return has_tolerance ? layer_tolerance : IsFloat(type) ? 1e-5 : 0.0; };

  // ---- the two interpreters
  Side reference, test;
  reference.model = LoadModelOrDemo(graph);
  Status status;
  const size_t max_memory_bytes = MaxMemoryBytes(flags);
  reference.interpreter = Interpreter::Create(
      reference.model,
      {.num_threads = 1, .kernels = KernelSet::kReference, .max_memory_bytes = max_memory_bytes}, &status);
  if (!status.ok()) Fail("reference: ", status.message());
  status = reference.interpreter->AllocateTensors();
  if (!status.ok()) Fail("reference: ", status.message());

  test.model = flags.Has("test_graph") ? ReadModelFile(flags.GetString("test_graph")) : reference.model;
  test.interpreter = Interpreter::Create(
      test.model,
      {.num_threads = num_threads,
       .kernels = test_kernels,
       .max_memory_bytes = max_memory_bytes,
       .fuse_nodes = !per_layer},  // a folded node's output is never written
      &status);
  if (!status.ok()) Fail("test: ", status.message());
  std::string target_id;
  if (flags.Has("target")) {
    const Target target = FindTarget(flags.GetString("target"), TargetsDir());
    target_id = target.id;
    DelegateOptions options = TargetDelegateOptions(
        target, static_cast<int>(flags.GetInt("max_delegated_partitions", -1, 0, 1 << 20)),
        static_cast<int>(flags.GetInt("min_nodes_per_partition", -1, 0, 1 << 20)),
        ParseIntList("skip_nodes", flags.GetString("skip_nodes")), -1, -1);
    test.delegate = MakeTargetDelegate(target, *test.model, flags.GetString("nnapi_accelerator_name"),
                                       std::move(options), num_threads);
    test.delegate->UseKernels(test_kernels);
    test.delegate->SetMaxMemoryBytes(max_memory_bytes);
    status = test.interpreter->ModifyGraphWithDelegate(test.delegate.get());
    if (!status.ok()) Fail("test: ", status.message());
    if (!json) {
      for (const std::string& line : test.interpreter->delegation_log()) std::cerr << line << "\n";
      for (const std::string& w : test.interpreter->warnings()) std::cerr << "WARNING: " << w << "\n";
    }
  } else {
    status = test.interpreter->AllocateTensors();
    if (!status.ok()) Fail("test: ", status.message());
  }
  // --external_delegate_path: a TFLite plugin runs (part of) the test side.
  const std::unique_ptr<ExternalDelegate> external = ApplyExternalDelegate(flags, *test.interpreter);
  if (flags.Has("test_graph")) CheckSameInterface(*reference.interpreter, *test.interpreter);

  Interpreter& ref = *reference.interpreter;
  Interpreter& tst = *test.interpreter;
  std::vector<OutputDiff> outputs(ref.num_outputs());
  for (int i = 0; i < ref.num_outputs(); ++i) {
    const TensorView out = ref.output(i);
    outputs[i].name = std::string(out.name);
    outputs[i].type = out.type;
    if (!Comparable(out.type))
      Fail("output ", i, " (\"", out.name, "\") has type ", DataTypeName(out.type), ", which diff cannot compare");
  }

  // ---- per-layer rows: every output of every reference node, mapped to the test run's tensor
  std::vector<LayerRow> rows;
  const int num_ref_nodes = static_cast<int>(reference.model->subgraphs[0].operators.size());
  const int num_test_model_nodes = static_cast<int>(test.model->subgraphs[0].operators.size());
  const bool same_model = test.model == reference.model;
  if (per_layer) {
    // Which test tensors the test run exposes, and who computes them.
    // A delegate node's outputs are written by nodes of its partition; the
    // placement of the model node producing the tensor names the partition.
    std::map<int, int> producer;  // test tensor -> test model node
    for (int n = 0; n < num_test_model_nodes; ++n)
      for (int32_t t : test.model->subgraphs[0].operators[n].outputs) producer[t] = n;
    std::map<int, int> observable_partition;  // test tensor -> partition (-1 = a CPU node)
    for (int node : tst.execution_plan()) {
      for (int32_t t : tst.node(node).outputs) {
        if (t < 0) continue;
        int partition = -1;
        if (node >= num_test_model_nodes && producer.count(t))
          partition = tst.placements().at(producer[t]).partition;
        observable_partition[t] = partition;
      }
    }
    std::map<std::string, int> test_by_name;
    std::map<std::string, int> name_count;
    for (int t = 0; t < tst.num_tensors(); ++t) {
      const std::string name(tst.tensor(t).name);
      test_by_name[name] = t;
      ++name_count[name];
    }
    const auto& placements = tst.placements();
    for (int n = 0; n < num_ref_nodes; ++n) {
      const NodeView v = ref.node(n);
      for (int32_t t : v.outputs) {
        if (t < 0) continue;
        const TensorView rt = ref.tensor(t);
        LayerRow row;
        row.node = n;
        row.op = std::string(v.op_name);
        row.tensor = t;
        row.tensor_name = std::string(rt.name);
        row.type = rt.type;
        int candidate = -1;
        if (same_model) {
          candidate = t;
        } else if (name_count[row.tensor_name] == 1) {
          candidate = test_by_name[row.tensor_name];
        } else {
          row.note = name_count[row.tensor_name] == 0 ? "no tensor of this name in the test graph"
                                                      : "tensor name not unique in the test graph";
        }
        if (candidate >= 0) {
          const TensorView tt = tst.tensor(candidate);
          auto it = observable_partition.find(candidate);
          if (it == observable_partition.end()) {
            const bool inside = same_model && n < static_cast<int>(placements.size()) && placements[n].delegated;
            row.note = inside ? StrCat("inside delegate partition ", placements[n].partition, ": not observable")
                              : "not produced by a node of the test run";
          } else if (tt.type != rt.type || tt.bytes != rt.bytes) {
            row.note = StrCat("test tensor is ", DescribeTensor(tt), ", not ", DescribeTensor(rt));
          } else if (!Comparable(rt.type)) {
            row.note = StrCat("type ", LowerTypeName(rt.type), " not compared");
          } else {
            row.test_tensor = candidate;
            row.partition = it->second;
            if (row.partition >= 0) row.note = StrCat("boundary of delegate partition ", row.partition);
          }
        }
        rows.push_back(std::move(row));
      }
    }
  }

  // ---- the runs
  GaussianInputs inputs(seed);
  std::vector<std::vector<uint8_t>> input_values(ref.num_inputs());
  for (int run = 0; run < num_runs; ++run) {
    for (int i = 0; i < ref.num_inputs(); ++i) {
      const TensorView a = ref.input(i);
      inputs.Fill(a);
      input_values[i].assign(static_cast<const uint8_t*>(a.data), static_cast<const uint8_t*>(a.data) + a.bytes);
    }
    // Every invocation is timed (integer microseconds, as TFLite's NowMicros
    // differences); with --per_layer the last one of the run is captured.
    auto invoke = [&](Side& side) {
      side.capture.tensors.clear();
      for (int k = 0; k < invocations; ++k) {
        // Inputs are copied before every invocation: nothing may assume a
        // graph input survives an Invoke (its arena space can be reused).
        for (int i = 0; i < side.interpreter->num_inputs(); ++i)
          std::memcpy(side.interpreter->input(i).data, input_values[i].data(), input_values[i].size());
        const bool capture = per_layer && k + 1 == invocations;
        const auto start = std::chrono::steady_clock::now();
        Status s = capture ? side.interpreter->Invoke([&](int node) { side.capture.Take(*side.interpreter, node); })
                           : side.interpreter->Invoke();
        const auto end = std::chrono::steady_clock::now();
        if (!s.ok()) Fail(&side == &reference ? "reference: " : "test: ", s.message());
        side.latency_us.Add(static_cast<double>(
            std::chrono::duration_cast<std::chrono::microseconds>(end - start).count()));
      }
    };
    invoke(test);
    invoke(reference);

    for (int i = 0; i < ref.num_outputs(); ++i) {
      const TensorView a = ref.output(i), b = tst.output(i);
      OutputDiff& d = outputs[i];
      const size_t n = a.bytes / DataTypeSize(a.type);
      float run_error = 0;  // inference_diff accumulates in float
      for (size_t k = 0; k < n; ++k) {
        const double e = AbsError(ElementAt(a.type, a.data, k), ElementAt(b.type, b.data, k));
        run_error += static_cast<float>(e);
        d.max_abs = std::max(d.max_abs, e);
        d.differing += e > 0 ? 1 : 0;
      }
      d.elements += static_cast<int64_t>(n);
      d.per_run.Add(n ? run_error / static_cast<float>(n) : 0.0f);
    }

    for (LayerRow& row : rows) {
      if (!row.compared()) continue;
      auto ra = reference.capture.tensors.find(row.tensor);
      auto tb = test.capture.tensors.find(row.test_tensor);
      if (ra == reference.capture.tensors.end() || tb == test.capture.tensors.end()) continue;
      const size_t n = ra->second.size() / DataTypeSize(row.type);
      const double tolerance = tolerance_for(row.type);
      for (size_t k = 0; k < n; ++k) {
        const double r = ElementAt(row.type, ra->second.data(), k);
        const double e = AbsError(r, ElementAt(row.type, tb->second.data(), k));
        row.max_abs = std::max(row.max_abs, e);
        row.sum_abs += e;
        const double allowed = IsFloat(row.type) ? tolerance * std::max(std::abs(r), 1.0) : tolerance;
        row.differing += e > allowed ? 1 : 0;
      }
      row.elements += static_cast<int64_t>(n);
    }
  }

  // ---- report
  const LayerRow* first_divergence = nullptr;
  for (const LayerRow& row : rows)
    if (row.differing > 0) {
      first_divergence = &row;
      break;
    }
  double worst = 0;
  for (const OutputDiff& d : outputs) worst = std::max(worst, d.max_abs);
  const bool exceeded = has_max_abs && worst > max_abs_limit;

  std::string test_description = StrCat(
      flags.Has("test_graph") ? "model " + flags.GetString("test_graph") : std::string("same model"), ", ",
      num_threads, " thread", num_threads == 1 ? "" : "s", ", ",
      test_kernels == KernelSet::kReference ? "reference" : "optimized", " kernels",
      target_id.empty() ? "" : ", target " + target_id + " (emulated delegate)");

  if (json) {
    nlohmann::json j;
    j["num_runs"] = num_runs;
    j["invocations_per_run"] = invocations;
    j["seed"] = seed;
    j["reference"] = "1 thread, reference kernels, CPU";
    j["test"] = test_description;
    j["reference_latency_us"] = {{"avg", reference.latency_us.avg()}, {"std_dev", reference.latency_us.std_dev()}};
    j["test_latency_us"] = {{"avg", test.latency_us.avg()}, {"std_dev", test.latency_us.std_dev()}};
    nlohmann::json outs = nlohmann::json::array();
    for (size_t i = 0; i < outputs.size(); ++i) {
      const OutputDiff& d = outputs[i];
      outs.push_back({{"index", i}, {"name", d.name}, {"dtype", LowerTypeName(d.type)},
                      {"avg_error", d.per_run.avg()}, {"std_dev", d.per_run.std_dev()},
                      {"min_error", d.per_run.min}, {"max_error", d.per_run.max},
                      {"max_abs_error", d.max_abs}, {"elements", d.elements}, {"differing", d.differing}});
    }
    j["outputs"] = outs;
    if (!target_id.empty()) j["delegation_log"] = tst.delegation_log();
    if (per_layer) {
      nlohmann::json layers = nlohmann::json::array();
      for (const LayerRow& row : rows) {
        nlohmann::json r = {{"node", row.node}, {"op", row.op}, {"tensor", row.tensor},
                            {"tensor_name", row.tensor_name}, {"dtype", LowerTypeName(row.type)},
                            {"compared", row.compared()}};
        if (row.compared()) {
          r["max_abs_error"] = row.max_abs;
          r["mean_abs_error"] = row.mean_abs();
          r["elements"] = row.elements;
          r["differing"] = row.differing;
          r["delegate_partition"] = row.partition >= 0 ? nlohmann::json(row.partition) : nlohmann::json(nullptr);
        }
        if (!row.note.empty()) r["note"] = row.note;
        layers.push_back(r);
      }
      nlohmann::json first = nullptr;
      if (first_divergence)
        first = {{"node", first_divergence->node}, {"op", first_divergence->op},
                 {"tensor", first_divergence->tensor}, {"tensor_name", first_divergence->tensor_name},
                 {"max_abs_error", first_divergence->max_abs}};
      j["per_layer"] = {{"first_divergence", first},
                        {"tolerance", has_tolerance ? nlohmann::json(layer_tolerance)
                                                    : nlohmann::json({{"integer", 0}, {"float_relative", 1e-5}})},
                        {"nodes", layers}};
    }
    if (has_max_abs) j["max_abs_error_limit"] = max_abs_limit;
    j["passed"] = !exceeded;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "INFO: Reference: 1 thread, reference kernels, CPU. Test: " << test_description << ".\n";
    std::cout << "INFO: Num evaluation runs: " << num_runs << "\n";
    std::cout << "INFO: Reference run latency: avg=" << Num(reference.latency_us.avg())
              << "(us), std_dev=" << static_cast<int64_t>(reference.latency_us.std_dev()) << "(us)\n";
    std::cout << "INFO: Test run latency: avg=" << Num(test.latency_us.avg())
              << "(us), std_dev=" << static_cast<int64_t>(test.latency_us.std_dev()) << "(us)\n";
    for (size_t i = 0; i < outputs.size(); ++i) {
      const OutputDiff& d = outputs[i];
      std::cout << "INFO: OutputDiff[" << i << "]: avg_error=" << Num(d.per_run.avg())
                << ", std_dev=" << Num(static_cast<float>(d.per_run.std_dev())) << ", min_error=" << Num(d.per_run.min)
                << ", max_error=" << Num(d.per_run.max) << ", max_abs_error=" << Num(d.max_abs)
                << ", differing=" << d.differing << "/" << d.elements << "\n";
    }
    if (per_layer) {
      std::cout << "\nPer-layer comparison (" << num_runs << " runs; tolerance: "
                << (has_tolerance ? Num(layer_tolerance) + " (LSB for integer tensors, relative for float)"
                                  : std::string("0 LSB for integer tensors, 1e-5 relative for float"))
                << ")\n";
      std::cout << std::left << std::setw(6) << "node" << std::setw(22) << "op" << std::setw(40) << "output tensor"
                << std::setw(9) << "dtype" << std::right << std::setw(13) << "max abs err" << std::setw(14)
                << "mean abs err" << std::setw(22) << "differing" << "  note\n";
      for (const LayerRow& row : rows) {
        std::string tensor = StrCat(row.tensor, " ", row.tensor_name);
        if (tensor.size() > 38) tensor = tensor.substr(0, 35) + "...";
        std::cout << std::left << std::setw(6) << row.node << std::setw(22) << row.op << std::setw(40) << tensor
                  << std::setw(9) << LowerTypeName(row.type) << std::right;
        if (row.compared()) {
          std::cout << std::setw(13) << Num(row.max_abs) << std::setw(14) << Num(row.mean_abs()) << std::setw(22)
                    << StrCat(row.differing, "/", row.elements);
        } else {
          std::cout << std::setw(13) << "-" << std::setw(14) << "-" << std::setw(22) << "-";
        }
        std::string note = row.note;
        if (&row == first_divergence) note = "<- first divergence" + (note.empty() ? "" : "; " + note);
        std::cout << (note.empty() ? "" : "  " + note) << "\n";
      }
      if (first_divergence) {
        std::cout << "First divergence: node " << first_divergence->node << " (" << first_divergence->op
                  << "), output tensor " << first_divergence->tensor << " \"" << first_divergence->tensor_name
                  << "\": max abs error " << Num(first_divergence->max_abs) << ", " << first_divergence->differing
                  << " of " << first_divergence->elements << " elements beyond tolerance";
        if (first_divergence->partition >= 0)
          std::cout << " (a boundary output of delegate partition " << first_divergence->partition
                    << ": the cause may be any node of that partition)";
        std::cout << "\n";
      } else {
        std::cout << "No divergence: every compared tensor is within tolerance.\n";
      }
    }
  }
  if (exceeded) {
    std::cerr << "delegato diff: max abs error " << Num(worst) << " exceeds --max_abs_error=" << Num(max_abs_limit)
              << "\n";
    return 3;
  }
  return 0;
}

}  // namespace

int CmdDiff(const Args& args) {
  return RunCommand("diff", [&] { return Diff(args); });
}

}  // namespace delegato::tools
