#include "tools/placement.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include "core/error.h"
#include "delegate/emulated_delegate.h"
#include "delegate/graph_view.h"

namespace delegato::tools {

std::string TargetsDir() {
  if (const char* dir = std::getenv("DELEGATO_TARGETS_DIR")) return dir;
  if (std::filesystem::is_directory(DELEGATO_TARGETS_DIR)) return DELEGATO_TARGETS_DIR;
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    auto installed = std::filesystem::path(exe).parent_path() / ".." / "share" / "delegato" / "targets";
    if (std::filesystem::is_directory(installed)) return installed.string();
  }
  return DELEGATO_TARGETS_DIR;
}

namespace {

double Elements(const TensorDef& t) {
  double n = 1;
  for (int32_t d : t.shape) n *= std::max(d, 0);
  return n;
}


}  // namespace

std::string NodeDtypeClass(const ModelDef& model, int node) {
  const SubgraphDef& graph = model.subgraphs[0];
  const OperatorDef& op = graph.operators[node];
  for (int32_t t : op.inputs) {
    if (t < 0) continue;
    const TensorDef& def = graph.tensors[t];
    if (def.buffer != 0 && !model.buffers[def.buffer].empty()) continue;
    std::string name(DataTypeName(def.type));
    for (char& c : name) c = static_cast<char>(std::tolower(c));
    return name;
  }
  if (!op.outputs.empty()) {
    std::string name(DataTypeName(graph.tensors[op.outputs[0]].type));
    for (char& c : name) c = static_cast<char>(std::tolower(c));
    return name;
  }
  return "float32";
}

double NodeOps(const ModelDef& model, int node) {
  const SubgraphDef& graph = model.subgraphs[0];
  const OperatorDef& op = graph.operators[node];
  if (op.outputs.empty()) return 0;
  const double out = Elements(graph.tensors[op.outputs[0]]);
  const BuiltinOp code = model.operator_codes[op.opcode_index].builtin;
  auto filter_dim = [&](int i) {
    if (op.inputs.size() < 2 || op.inputs[1] < 0) return 1.0;
    const auto& shape = graph.tensors[op.inputs[1]].shape;
    return i < static_cast<int>(shape.size()) ? static_cast<double>(shape[i]) : 1.0;
  };
  switch (code) {
    case BuiltinOp::kConv2d: return 2 * out * filter_dim(1) * filter_dim(2) * filter_dim(3);
    case BuiltinOp::kDepthwiseConv2d: return 2 * out * filter_dim(1) * filter_dim(2);
    case BuiltinOp::kFullyConnected: return 2 * out * filter_dim(1);
    default: return out;
  }
}

Placement PlaceModel(const ModelDef& model, const std::string& target_id_or_path,
                     const PlacementOptions& options) {
  Placement p;
  const std::string dir = TargetsDir();
  p.target = FindTarget(target_id_or_path, dir);
  p.options = TargetDelegateOptions(p.target, options.max_delegated_partitions,
                                    options.min_nodes_per_partition, options.skip_nodes,
                                    options.first_node, options.last_node);
  p.support = EvaluateTarget(p.target, model, options.accelerator_name);
  p.plan = PlanDelegation(BuildGraphInfo(model), p.support, p.options);

  // Cost: see tools/cost.h and docs/cost_model.md.
  Target cpu;
  bool have_cpu = false;
  try {
    cpu = FindTarget("cpu", dir);
    have_cpu = true;
  } catch (const Error&) {
  }
  const int n = static_cast<int>(model.subgraphs[0].operators.size());
  for (int i = 0; i < n; ++i) p.node_ops.push_back(NodeOps(model, i));
  std::vector<bool> npu_nodes;
  for (const NodeSupport& s : p.support) npu_nodes.push_back(s.supported);
  p.costs = BuildCostTables(model, p.target, have_cpu ? &cpu : nullptr, npu_nodes);
  p.estimate = EstimatePlan(model, p.costs, p.plan);
  return p;
}

std::string NodeRanges(const std::vector<int>& nodes) {
  std::string out;
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(nodes[i]);
    if (j > i) out += "-" + std::to_string(nodes[j]);
    i = j + 1;
  }
  return out;
}

namespace {

std::vector<int> DelegatedNodes(const DelegationPlan& plan) {
  std::vector<int> out;
  for (size_t i = 0; i < plan.nodes.size(); ++i)
    if (plan.nodes[i].delegated) out.push_back(static_cast<int>(i));
  return out;
}

}  // namespace

PlanAlternatives CompareAlternatives(const ModelDef& model, const Placement& greedy) {
  PlanAlternatives a;
  const GraphInfo graph = BuildGraphInfo(model);
  auto plan_with = [&](const std::vector<int>& skip) {
    DelegateOptions options = greedy.options;
    options.skip_nodes.insert(options.skip_nodes.end(), skip.begin(), skip.end());
    return PlanDelegation(graph, greedy.support, options);
  };
  a.greedy = greedy.estimate;
  a.cpu_only = EstimateCpuOnly(greedy.costs);
  a.cost_skip = ChooseCpuNodes(model, greedy.costs, greedy.plan, plan_with);
  a.cost_plan = plan_with(a.cost_skip);
  a.cost = EstimatePlan(model, greedy.costs, a.cost_plan);
  std::vector<int> all_skip = greedy.options.skip_nodes;
  all_skip.insert(all_skip.end(), a.cost_skip.begin(), a.cost_skip.end());
  std::sort(all_skip.begin(), all_skip.end());
  all_skip.erase(std::unique(all_skip.begin(), all_skip.end()), all_skip.end());
  a.cost_skip = all_skip;
  if (a.cost_skip == greedy.options.skip_nodes) {
    a.knobs.push_back("none: the greedy partitioning is already the cheapest the cost model finds");
    return a;
  }
  const std::string list = NodeRanges(a.cost_skip);
  a.knobs.push_back("delegato plan/diff: --skip_nodes=" + list);
  a.knobs.push_back("delegato's TFLite delegate plugin: never_delegate=" + list);
  // The partition options TFLite's delegates take, where one alone gives the same nodes.
  const std::vector<int> want = DelegatedNodes(a.cost_plan);
  bool skips_fallback = false;  // partition options cannot keep those away from the delegate
  for (int node : a.cost_skip) skips_fallback |= RunsOnFallback(greedy.costs, greedy.plan.nodes[node]);
  if (greedy.options.skip_nodes.empty() && !skips_fallback) {
    const int partitions = greedy.plan.num_candidate_partitions;
    for (int k = 1; k <= partitions; ++k) {
      DelegateOptions options = greedy.options;
      options.max_delegated_partitions = k;
      if (DelegatedNodes(PlanDelegation(graph, greedy.support, options)) == want) {
        a.knobs.push_back("benchmark_model / delegate options: max_delegated_partitions=" + std::to_string(k));
        break;
      }
    }
    const int n = static_cast<int>(greedy.plan.nodes.size());
    for (int m = 2; m <= n + 1; ++m) {
      DelegateOptions options = greedy.options;
      options.min_nodes_per_partition = m;
      if (DelegatedNodes(PlanDelegation(graph, greedy.support, options)) == want) {
        a.knobs.push_back("benchmark_model / delegate options: min_nodes_per_partition=" + std::to_string(m));
        break;
      }
    }
    if (want.empty()) a.knobs.push_back("or simply run without the delegate (CPU only)");
  }
  return a;
}

}  // namespace delegato::tools
