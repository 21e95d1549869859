// libdelegato_delegate.so: delegato as a TFLite external delegate plugin.
//
// A host (LiteRT's Python load_delegate, benchmark_model's
// --external_delegate_path) calls tflite_plugin_create_delegate with string
// options and applies the returned TfLiteDelegate. Its Prepare rebuilds the
// host's graph as a delegato model (abi/context_model.h), decides per node
// with the target engine and partitioner `delegato plan` uses, and replaces
// each partition by a kernel that runs it with delegato's own interpreter.
// Nothing here throws across the C boundary or aborts the host.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "abi/context_model.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/hash.h"
#include "delegate/emulated_delegate.h"
#include "delegate/graph_view.h"
#include "delegate/partitioner.h"
#include "delegate/target.h"
#include "delegato/interpreter.h"
#include "ops/op_table.h"
#include "tools/placement.h"

namespace delegato::abi {
namespace {

// Whether a file could be written at `path`: its directory exists and is
// writable, and the path itself is not a directory.
bool CanCreateFileAt(const std::string& path) {
  if (path.empty()) return false;
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return false;
  const size_t slash = path.find_last_of('/');
  const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  return stat(directory.c_str(), &info) == 0 && S_ISDIR(info.st_mode) && access(directory.c_str(), W_OK) == 0;
}

constexpr const char* kPluginName = "delegato";
constexpr const char* kKernelName = "DelegatoDelegate";

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kVerbose = 3 };

struct PluginOptions {
  std::string target = "cpu";
  KernelSet kernels = KernelSet::kOptimized;
  int num_threads = 1;
  std::string cache_dir;
  std::vector<std::pair<int, int>> never_delegate;  // inclusive host node ranges
  std::string report;
  LogLevel log = LogLevel::kWarning;
};

// One delegated partition, ready to run.
struct PartitionKernel {
  std::vector<int> host_nodes;    // sorted
  std::vector<int> outputs;       // host tensor indices, as the sub-model's outputs
  std::vector<int> inputs;        // host tensor indices of the sub-model's inputs
  std::shared_ptr<const ModelDef> model;
  std::unique_ptr<Interpreter> interpreter;
  std::shared_ptr<PackedWeightStore> packed;
  std::string cache_file;         // "" without cache_dir
  bool allocated = false;
};

struct PluginState {
  PluginOptions options;
  Target target;
  TfLiteDelegate delegate{};
  std::mutex mutex;  // one Prepare at a time; kernels handed over under it
  // Built by Prepare, taken by the kernels' init (keyed by sorted host nodes).
  std::map<std::vector<int>, std::unique_ptr<PartitionKernel>> prepared;
  const ContextGraph* graph = nullptr;  // valid during Prepare only
};

// `message` already names the delegate when `bare` (TFLite's summary line).
void Log(const PluginOptions& options, LogLevel level, const std::string& message, bool bare = false) {
  if (level > options.log) return;
  static const char* names[] = {"ERROR", "WARNING", "INFO", "VERBOSE"};
  std::cerr << names[static_cast<int>(level)] << (bare ? ": " : ": delegato delegate: ") << message << "\n";
}

void ReportToHost(TfLiteContext* context, const std::string& message) {
  if (context && context->ReportError) context->ReportError(context, "%s", message.c_str());
}

// ------------------------------------------------------------------ options

bool ParseInt(const std::string& text, long min, long max, long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < min || value > max) return false;
  *out = value;
  return true;
}

// "3", "1,4,7-9" -> inclusive ranges; false on anything else.
bool ParseNodeRanges(const std::string& text, std::vector<std::pair<int, int>>* ranges) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    const size_t dash = item.find('-', 1);
    long first = 0, last = 0;
    if (dash == std::string::npos) {
      if (!ParseInt(item, 0, 1 << 30, &first)) return false;
      last = first;
    } else if (!ParseInt(item.substr(0, dash), 0, 1 << 30, &first) ||
               !ParseInt(item.substr(dash + 1), 0, 1 << 30, &last) || last < first) {
      return false;
    }
    ranges->emplace_back(static_cast<int>(first), static_cast<int>(last));
  }
  return !ranges->empty();
}

// Fills `options` from the host's strings; returns "" or the error message.
std::string ParseOptions(const char* const* keys, const char* const* values, size_t count,
                         PluginOptions* options) {
  static const char* known = "target, kernels, num_threads, cache_dir, never_delegate, report, log";
  for (size_t i = 0; i < count; ++i) {
    if (keys == nullptr || values == nullptr || keys[i] == nullptr || values[i] == nullptr)
      return StrCat("option ", i, " is NULL");
    const std::string key = keys[i], value = values[i];  // copies: the host's strings stay untouched
    long number = 0;
    if (key == "target") {
      if (value.empty()) return "option target: empty (give a target id such as cpu, imx8mp-vx, nnapi-1.2, edgetpu)";
      options->target = value;
    } else if (key == "kernels") {
      if (value == "optimized") options->kernels = KernelSet::kOptimized;
      else if (value == "reference") options->kernels = KernelSet::kReference;
      else return "option kernels: '" + value + "' is not one of optimized, reference";
    } else if (key == "num_threads") {
      if (!ParseInt(value, 1, 1024, &number))
        return "option num_threads: '" + value + "' is not an integer from 1 to 1024";
      options->num_threads = static_cast<int>(number);
    } else if (key == "cache_dir") {
      struct stat info {};
      if (value.empty() || stat(value.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
        return "option cache_dir: '" + value + "' is not an existing directory";
      options->cache_dir = value;
    } else if (key == "never_delegate") {
      options->never_delegate.clear();
      if (!ParseNodeRanges(value, &options->never_delegate))
        return "option never_delegate: '" + value + "' is not a list of node indices and ranges (e.g. 0,4-7)";
    } else if (key == "report") {
      // Checked without creating anything: parsing options has no side
      // effects (the report is written whole, later, by WriteFileAtomically).
      if (!CanCreateFileAt(value)) return "option report: cannot write '" + value + "'";
      options->report = value;
    } else if (key == "log") {
      if (value == "error") options->log = LogLevel::kError;
      else if (value == "warning") options->log = LogLevel::kWarning;
      else if (value == "info") options->log = LogLevel::kInfo;
      else if (value == "verbose") options->log = LogLevel::kVerbose;
      else return "option log: '" + value + "' is not one of error, warning, info, verbose";
    } else {
      return "unknown option '" + key + "' (known: " + known + ")";
    }
  }
  return "";
}

// ------------------------------------------------------------------ kernels

std::string CacheFile(const PluginOptions& options, const ModelDef& model) {
  if (options.cache_dir.empty()) return "";
  const std::vector<uint8_t> bytes = WriteModel(model);
  char name[64];
  std::snprintf(name, sizeof(name), "/partition-%016llx.dlgpw",
                static_cast<unsigned long long>(Hash64(bytes.data(), bytes.size())));
  return options.cache_dir + name;
}

// Builds and allocates the interpreter of one partition; throws Error.
std::unique_ptr<PartitionKernel> BuildKernel(const PluginOptions& options, const ContextGraph& graph,
                                             const std::vector<int>& nodes, const std::vector<int>& outputs) {
  auto kernel = std::make_unique<PartitionKernel>();
  for (int n : nodes) kernel->host_nodes.push_back(graph.plan_nodes[n]);
  std::sort(kernel->host_nodes.begin(), kernel->host_nodes.end());
  kernel->outputs = outputs;
  kernel->model = ExtractPartition(graph, nodes, outputs, &kernel->inputs);
  Status status;
  kernel->interpreter = Interpreter::Create(kernel->model, {.num_threads = options.num_threads, .kernels = options.kernels}, &status);
  if (!kernel->interpreter) Fail(status.message());
  kernel->cache_file = CacheFile(options, *kernel->model);
  if (!kernel->cache_file.empty()) {
    kernel->packed = std::make_shared<PackedWeightStore>();
    std::ifstream in(kernel->cache_file, std::ios::binary);
    if (in) {
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::string error;
      if (!kernel->packed->Deserialize(std::move(bytes), &error))
        Log(options, LogLevel::kWarning, kernel->cache_file + ": ignored (" + error + ")");
    }
    kernel->interpreter->SetPackedWeightStore(kernel->packed);
  }
  status = kernel->interpreter->AllocateTensors();
  if (!status.ok()) Fail(status.message());
  kernel->allocated = true;
  if (kernel->packed && kernel->packed->modified()) {
    const std::vector<uint8_t> bytes = kernel->packed->Serialize();
    // Whole or absent: a process killed mid-write, or a full disk, must not
    // leave a torn file for the next run to read.
    try {
      WriteFileAtomically(kernel->cache_file,
                          {std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
    } catch (const std::exception& e) {
      Log(options, LogLevel::kWarning, std::string("cache not written: ") + e.what());
    }
  }
  return kernel;
}

std::vector<int> Sorted(const TfLiteIntArray* array) {
  std::vector<int> out;
  if (array) out.assign(array->data, array->data + array->size);
  std::sort(out.begin(), out.end());
  return out;
}

void* KernelInit(TfLiteContext* context, const char* buffer, size_t) {
  try {
    const auto* params = reinterpret_cast<const TfLiteDelegateParams*>(buffer);
    auto* state = static_cast<PluginState*>(params->delegate->data_);
    const std::vector<int> nodes = Sorted(params->nodes_to_replace);
    std::vector<int> outputs;
    if (params->output_tensors)
      outputs.assign(params->output_tensors->data, params->output_tensors->data + params->output_tensors->size);
    auto found = state->prepared.find(nodes);
    if (found != state->prepared.end()) {
      std::vector<int> a = found->second->outputs, b = outputs;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      if (a == b) {
        PartitionKernel* kernel = found->second.release();
        state->prepared.erase(found);
        return kernel;
      }
    }
    // The host partitioned differently than planned: build from its lists.
    DLG_CHECK(state->graph, "kernel init outside the delegate's Prepare");
    std::vector<int> positions;
    for (size_t i = 0; i < state->graph->plan_nodes.size(); ++i)
      if (std::binary_search(nodes.begin(), nodes.end(), state->graph->plan_nodes[i]))
        positions.push_back(static_cast<int>(i));
    return BuildKernel(state->options, *state->graph, positions, outputs).release();
  } catch (const std::exception& e) {
    ReportToHost(context, StrCat("delegato delegate: kernel init failed: ", e.what()));
    return nullptr;
  }
}

void KernelFree(TfLiteContext*, void* buffer) { delete static_cast<PartitionKernel*>(buffer); }

bool SameDims(const TfLiteIntArray* dims, std::span<const int32_t> ours) {
  if (dims == nullptr) return ours.empty();
  if (dims->size != static_cast<int>(ours.size())) return false;
  return std::equal(ours.begin(), ours.end(), dims->data);
}

TfLiteStatus KernelPrepare(TfLiteContext* context, TfLiteNode* node) {
  auto* kernel = static_cast<PartitionKernel*>(node->user_data);
  if (kernel == nullptr) {
    ReportToHost(context, "delegato delegate: the kernel was not initialised");
    return kTfLiteError;
  }
  try {
    Interpreter& interp = *kernel->interpreter;
    bool resized = !kernel->allocated;
    for (size_t i = 0; i < kernel->inputs.size(); ++i) {
      const TfLiteTensor& host = context->tensors[kernel->inputs[i]];
      if (SameDims(host.dims, interp.input(static_cast<int>(i)).dims)) continue;
      DLG_CHECK(host.dims != nullptr, "input tensor ", kernel->inputs[i], " has no dims");
      std::vector<int32_t> dims(host.dims->data, host.dims->data + host.dims->size);
      Status s = interp.ResizeInput(static_cast<int>(i), dims);
      if (!s.ok()) Fail(s.message());
      resized = true;
    }
    if (resized) {
      Status s = interp.AllocateTensors();
      if (!s.ok()) Fail(s.message());
      kernel->allocated = true;
    }
    for (size_t i = 0; i < kernel->outputs.size(); ++i) {
      TfLiteTensor* host = &context->tensors[kernel->outputs[i]];
      const TensorView ours = interp.output(static_cast<int>(i));
      if (SameDims(host->dims, ours.dims)) continue;
      TfLiteIntArray* dims = MallocIntArray(static_cast<int>(ours.dims.size()));
      DLG_CHECK(dims, "out of memory");
      std::copy(ours.dims.begin(), ours.dims.end(), dims->data);
      if (context->ResizeTensor(context, host, dims) != kTfLiteOk)
        Fail("ResizeTensor failed for tensor ", kernel->outputs[i]);
    }
    return kTfLiteOk;
  } catch (const std::exception& e) {
    ReportToHost(context, StrCat("delegato delegate: prepare failed: ", e.what()));
    return kTfLiteError;
  }
}

TfLiteStatus InvokePartition(TfLiteContext* context, TfLiteNode* node);

TfLiteStatus KernelInvoke(TfLiteContext* context, TfLiteNode* node) {
  try {
    return InvokePartition(context, node);
  } catch (const std::exception& e) {
    ReportToHost(context, StrCat("delegato delegate: invoke failed: ", e.what()));
    return kTfLiteError;
  }
}

TfLiteStatus InvokePartition(TfLiteContext* context, TfLiteNode* node) {
  auto* kernel = static_cast<PartitionKernel*>(node->user_data);
  if (kernel == nullptr || !kernel->allocated) {
    ReportToHost(context, "delegato delegate: invoke before prepare");
    return kTfLiteError;
  }
  Interpreter& interp = *kernel->interpreter;
  for (size_t i = 0; i < kernel->inputs.size(); ++i) {
    const TfLiteTensor& host = context->tensors[kernel->inputs[i]];
    const TensorView ours = interp.input(static_cast<int>(i));
    if (host.bytes != ours.bytes || (ours.bytes && host.data == nullptr)) {
      ReportToHost(context, StrCat("delegato delegate: input tensor ", kernel->inputs[i], " has ", host.bytes,
                                   " bytes, the partition expects ", ours.bytes));
      return kTfLiteError;
    }
    if (ours.bytes) std::memcpy(ours.data, host.data, ours.bytes);
  }
  Status s = interp.Invoke();
  if (!s.ok()) {
    ReportToHost(context, "delegato delegate: " + s.message());
    return kTfLiteError;
  }
  for (size_t i = 0; i < kernel->outputs.size(); ++i) {
    TfLiteTensor& host = context->tensors[kernel->outputs[i]];
    const TensorView ours = interp.output(static_cast<int>(i));
    if (host.bytes != ours.bytes || (ours.bytes && host.data == nullptr)) {
      ReportToHost(context, StrCat("delegato delegate: output tensor ", kernel->outputs[i], " has ", host.bytes,
                                   " bytes, the partition produced ", ours.bytes));
      return kTfLiteError;
    }
    if (ours.bytes) std::memcpy(host.data, ours.data, ours.bytes);
  }
  return kTfLiteOk;
}

// ------------------------------------------------------------------ Prepare

bool Runnable(const ModelDef& model, int node, std::string* why) {
  const OperatorDef& op = model.subgraphs[0].operators[node];
  const OperatorCodeDef& code = model.operator_codes[op.opcode_index];
  const OpKernel* kernel = FindKernel(code.builtin, code.custom_code);
  if (kernel == nullptr) {
    *why = "delegato has no kernel for " + model.OpName(op);
    return false;
  }
  if (code.version < kernel->min_version || code.version > kernel->max_version) {
    *why = StrCat(model.OpName(op), " version ", code.version, " is not supported (", kernel->min_version, "..",
                  kernel->max_version, ")");
    return false;
  }
  return true;
}

void WriteReport(const PluginState& state, const ContextGraph& graph, const DelegationPlan& plan) {
  using nlohmann::json;
  const ModelDef& model = *graph.model;
  json nodes = json::array();
  for (size_t i = 0; i < graph.plan_nodes.size(); ++i) {
    json reasons = json::array();
    for (const Reason& r : plan.nodes[i].reasons)
      reasons.push_back({{"code", ReasonCodeName(r.code)}, {"layer", r.layer}, {"message", r.message}, {"fix", r.fix}});
    nodes.push_back({{"index", graph.plan_nodes[i]},
                     {"op", model.OpName(model.subgraphs[0].operators[i])},
                     {"placement", plan.nodes[i].delegated ? "delegate" : "cpu"},
                     {"partition", plan.nodes[i].partition},
                     {"reasons", reasons}});
  }
  json steps = json::array();
  for (const NodeSubset& subset : plan.subsets) {
    std::vector<int> host;
    for (int n : subset.nodes) host.push_back(graph.plan_nodes[n]);
    steps.push_back({{"kind", subset.delegated ? "delegate" : "cpu"}, {"nodes", host}});
  }
  const int total = static_cast<int>(graph.plan_nodes.size());
  json report = {{"target", state.target.id},
                 {"nodes_total", total},
                 {"nodes_delegated", plan.num_delegated_nodes},
                 {"delegate_kernels", plan.num_partitions()},
                 {"candidate_partitions", plan.num_candidate_partitions},
                 {"summary", SummaryLine(kPluginName, plan.num_delegated_nodes, total, plan.num_candidate_partitions)},
                 {"nodes", nodes},
                 {"execution_plan", steps}};
  try {
    WriteFileAtomically(state.options.report, {report.dump(2), "\n"});
  } catch (const std::exception& e) {
    Log(state.options, LogLevel::kWarning, std::string("report not written: ") + e.what());
  }
}

TfLiteStatus DelegatePrepare(TfLiteContext* context, TfLiteDelegate* delegate) {
  auto* state = static_cast<PluginState*>(delegate->data_);
  std::lock_guard<std::mutex> lock(state->mutex);
  const PluginOptions& options = state->options;
  try {
    const ContextGraph graph = ReadContextGraph(context);
    const ModelDef& model = *graph.model;
    const int n = static_cast<int>(graph.plan_nodes.size());

    // Per node: the target's answer, then whether delegato's kernels can run it.
    std::vector<NodeSupport> support;
    const bool cpu = state->target.id == "cpu";
    if (cpu) support.resize(n);
    else support = EvaluateTarget(state->target, model, "");
    for (int i = 0; i < n; ++i) {
      std::string why = graph.unreadable[i];
      const bool runnable = why.empty() && Runnable(model, i, &why);
      if (cpu) support[i].supported = runnable;
      if (!runnable && (cpu || support[i].supported)) {
        if (support[i].supported)
          Log(options, LogLevel::kWarning, StrCat("node ", graph.plan_nodes[i], " (", model.OpName(model.subgraphs[0].operators[i]),
                                                  "): the target accepts it but ", why, "; it stays with the host"));
        support[i].supported = false;
        support[i].reasons.push_back({ReasonCode::kUnsupportedOp, "delegate", why, ""});
      }
    }
    std::vector<int> skip;
    for (int i = 0; i < n; ++i)
      for (auto [first, last] : options.never_delegate)
        if (graph.plan_nodes[i] >= first && graph.plan_nodes[i] <= last) skip.push_back(i);
    const DelegateOptions delegate_options = TargetDelegateOptions(state->target, -1, -1, skip, -1, -1);
    const GraphInfo info = BuildGraphInfo(model);

    // Build every partition's kernel; a partition delegato cannot prepare
    // goes back to the host and the plan is made again without it.
    DelegationPlan plan;
    state->prepared.clear();
    for (int attempt = 0;; ++attempt) {
      plan = PlanDelegation(info, support, delegate_options);
      bool failed = false;
      for (int k = 0; k < plan.num_partitions() && !failed; ++k) {
        const NodeSubset& subset = plan.subsets[plan.partition_subsets[k]];
        try {
          auto kernel = BuildKernel(options, graph, subset.nodes, subset.output_tensors);
          auto key = kernel->host_nodes;
          state->prepared[key] = std::move(kernel);
        } catch (const std::exception& e) {
          Log(options, LogLevel::kWarning, StrCat("partition of nodes ", graph.plan_nodes[subset.nodes.front()], "..",
                                                  graph.plan_nodes[subset.nodes.back()], " stays with the host: ", e.what()));
          for (int node : subset.nodes) {
            support[node].supported = false;
            support[node].reasons.push_back({ReasonCode::kPrepareFailed, "delegate", e.what(), ""});
          }
          failed = true;
        }
      }
      if (!failed) break;
      state->prepared.clear();
      DLG_CHECK(attempt < n, "partition preparation did not converge");
    }
    if (!options.report.empty()) WriteReport(*state, graph, plan);
    Log(options, LogLevel::kInfo, SummaryLine(kPluginName, plan.num_delegated_nodes, n, plan.num_candidate_partitions), true);
    if (plan.num_delegated_nodes == 0) return kTfLiteOk;

    std::vector<int> host_nodes;
    for (int i = 0; i < n; ++i)
      if (plan.nodes[i].delegated) host_nodes.push_back(graph.plan_nodes[i]);
    TfLiteIntArray* array = MallocIntArray(static_cast<int>(host_nodes.size()));
    DLG_CHECK(array, "out of memory");
    std::copy(host_nodes.begin(), host_nodes.end(), array->data);
    TfLiteRegistration registration{};
    registration.init = KernelInit;
    registration.free = KernelFree;
    registration.prepare = KernelPrepare;
    registration.invoke = KernelInvoke;
    registration.builtin_code = kTfLiteBuiltinDelegate;
    registration.custom_name = kKernelName;
    registration.version = 1;
    state->graph = &graph;
    const TfLiteStatus status = context->ReplaceNodeSubsetsWithDelegateKernels(context, registration, array, delegate);
    state->graph = nullptr;
    std::free(array);
    state->prepared.clear();
    if (status != kTfLiteOk) Log(options, LogLevel::kError, "ReplaceNodeSubsetsWithDelegateKernels failed");
    return status;
  } catch (const std::exception& e) {
    state->graph = nullptr;
    state->prepared.clear();
    Log(options, LogLevel::kError, std::string("Prepare failed: ") + e.what());
    ReportToHost(context, std::string("delegato delegate: ") + e.what());
    return kTfLiteDelegateError;
  }
}

}  // namespace
}  // namespace delegato::abi

extern "C" {

__attribute__((visibility("default"))) delegato::abi::TfLiteDelegate* tflite_plugin_create_delegate(
    const char* const* options_keys, const char* const* options_values, size_t num_options,
    void (*report_error)(const char*)) {
  using namespace delegato::abi;
  auto fail = [&](const std::string& message) -> TfLiteDelegate* {
    const std::string text = "delegato delegate: " + message;
    if (report_error) report_error(text.c_str());
    else std::cerr << "ERROR: " << text << "\n";  // hosts such as benchmark_model pass no callback
    return nullptr;
  };
  try {
    // Python declares the count as a C int: bound it before trusting it.
    if (num_options > 4096) return fail("implausible option count " + std::to_string(num_options));
    auto state = std::make_unique<PluginState>();
    const std::string error = ParseOptions(options_keys, options_values, num_options, &state->options);
    if (!error.empty()) return fail(error);
    try {
      state->target = delegato::FindTarget(state->options.target, delegato::tools::TargetsDir());
    } catch (const std::exception& e) {
      return fail(std::string("option target: ") + e.what());
    }
    state->delegate.data_ = state.get();
    state->delegate.Prepare = DelegatePrepare;
    state->delegate.flags = kTfLiteDelegateFlagsNone;  // resizes re-run Prepare
    Log(state->options, LogLevel::kInfo, "created for target " + state->target.id);
    return &state.release()->delegate;
  } catch (const std::exception& e) {
    return fail(e.what());
  } catch (...) {
    return fail("unexpected error");
  }
}

__attribute__((visibility("default"))) void tflite_plugin_destroy_delegate(delegato::abi::TfLiteDelegate* delegate) {
  if (delegate == nullptr) return;
  delete static_cast<delegato::abi::PluginState*>(delegate->data_);
}

}  // extern "C"
