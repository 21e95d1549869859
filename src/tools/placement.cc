#include "tools/placement.h"

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

// Throughput of a dtype class, falling back to any number the model has.
const CostNumber* Throughput(const CostModel& cost, const std::string& dtype) {
  for (const auto& [name, number] : cost.ops_per_second)
    if (name == dtype) return &number;
  return cost.ops_per_second.empty() ? nullptr : &cost.ops_per_second.front().second;
}

}  // namespace

std::string NodeDtypeClass(const ModelDef& model, int node) {
  const SubgraphDef& graph = model.subgraphs[0];
  const OperatorDef& op = graph.operators[node];
  for (int32_t t : op.inputs) {
    if (t < 0) continue;
    const TensorDef& def = graph.tensors[t];
    if (def.buffer != 0 && !model.buffers[def.buffer].data.empty()) continue;
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

  // Cost: accelerator nodes at the target's throughput, CPU nodes at the cpu
  // target's, one hand-over per delegated partition.
  Target cpu;
  bool have_cpu = false;
  try {
    cpu = FindTarget("cpu", dir);
    have_cpu = true;
  } catch (const Error&) {
  }
  const int n = static_cast<int>(model.subgraphs[0].operators.size());
  for (int i = 0; i < n; ++i) {
    p.node_ops.push_back(NodeOps(model, i));
    const bool delegated = p.plan.nodes[i].delegated;
    const CostModel* cost = delegated ? &p.target.cost : (have_cpu ? &cpu.cost : nullptr);
    const CostNumber* speed = cost ? Throughput(*cost, NodeDtypeClass(model, i)) : nullptr;
    if (speed == nullptr || speed->value <= 0) continue;
    (delegated ? p.estimate.accelerator_us : p.estimate.cpu_us) += p.node_ops[i] / speed->value * 1e6;
    p.estimate.uses_placeholders |= speed->placeholder;
  }
  if (p.target.cost.partition_sync_us) {
    p.estimate.sync_us = p.plan.num_partitions() * p.target.cost.partition_sync_us->value;
    p.estimate.uses_placeholders |= p.target.cost.partition_sync_us->placeholder && p.plan.num_partitions() > 0;
  }
  if (p.target.cost.first_inference_compile_ms && p.plan.num_partitions() > 0) {
    p.estimate.first_inference_compile_ms = p.target.cost.first_inference_compile_ms->value;
    p.estimate.uses_placeholders |= p.target.cost.first_inference_compile_ms->placeholder;
  }
  return p;
}

}  // namespace delegato::tools
