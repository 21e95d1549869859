// The cost model behind `delegato plan`'s latency estimate (docs/cost_model.md):
// per node, the accelerator's time from the node's work and the target's
// throughput for its op class and dtype, plus its memory traffic; the board
// CPU's time from its core class, clock and core count; per delegated
// partition, a fixed hand-over plus the bytes crossing it over a copy
// bandwidth. And the cost-aware partitioning that chooses which supported
// nodes to leave on the CPU. Everything here is an estimate, not a measurement.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "delegate/partitioner.h"
#include "delegate/target.h"
#include "model/model.h"

namespace delegato::tools {

// What one node does, as the cost model sees it.
struct NodeWork {
  double ops = 0;               // 2 per MAC for convolutions / FC, output elements otherwise
  double activation_bytes = 0;  // non-constant inputs + outputs
  double weight_bytes = 0;      // constant inputs
  std::string dtype;            // "int8", "uint8", "float32", ...
  std::string op_class;         // one of CostOpClassNames()
};

std::string NodeOpClass(const ModelDef& model, int node);
NodeWork NodeWorkOf(const ModelDef& model, int node);

struct CostEstimate {
  double accelerator_us = 0;
  double cpu_us = 0;
  double sync_us = 0;
  double first_inference_compile_ms = 0;
  int partitions = 0;
  bool uses_placeholders = false;  // some number used is a placeholder
  std::vector<std::string> placeholders;  // which ("ops_per_second.int8", ...), unique
  double total_us() const { return accelerator_us + cpu_us + sync_us; }
};

// Per-node times of one model on one target; built once, then any plan of
// that model is priced by EstimatePlan.
struct CostTables {
  std::vector<double> accelerator_us, cpu_us;
  std::vector<std::vector<std::string>> accelerator_placeholders, cpu_placeholders;
  std::vector<double> tensor_bytes;    // per tensor; 0 for constants
  double sync_us = 0;
  double copy_bytes_per_us = 0;        // 0 = copies not modelled
  std::vector<std::string> sync_placeholders, copy_placeholders;
  std::string fallback_layer;          // nodes refused by this layer run on the runtime's CPU fallback
  double fallback_slowdown = 1;
  std::vector<std::string> fallback_placeholders;
  double compile_ms = 0;
  std::vector<std::string> compile_placeholders;
  std::string cpu_label;               // "4x cortex-a53 @ 1.8 GHz" or "generic (cpu.json)"
};

// `cpu_target`: the shipped cpu.json (its cpu_classes and generic rates), or
// nullptr when there is none.
CostTables BuildCostTables(const ModelDef& model, const Target& target, const Target* cpu_target);

// Whether a CPU node of `plan` runs on the delegate runtime's CPU fallback
// (refused only by the fallback layer, and not excluded by the user).
bool RunsOnFallback(const CostTables& tables, const NodePlacement& node);

CostEstimate EstimatePlan(const ModelDef& model, const CostTables& tables, const DelegationPlan& plan);
// Every node on the board's CPU through the TFLite runtime, nothing delegated.
CostEstimate EstimateCpuOnly(const CostTables& tables);

// Cost-aware choice of the supported nodes to keep on the CPU: a dynamic
// program over the execution order (exact when the graph is a chain), then
// bounded improvement on the real partitioning (dropping whole partitions,
// moving single nodes at partition edges). Returns the skip list; `plan_with`
// builds the plan a skip list gives.
std::vector<int> ChooseCpuNodes(const ModelDef& model, const CostTables& tables, const DelegationPlan& greedy,
                                const std::function<DelegationPlan(const std::vector<int>&)>& plan_with);

// The chain dynamic program alone: per node in execution order, accelerator
// (only where `may_delegate`) or CPU, minimising node times plus one hand-over
// (sync + bytes of the crossing tensor) at every CPU->accelerator entry.
// Returns which nodes to place on the accelerator.
std::vector<bool> ChainPartition(const ModelDef& model, const CostTables& tables,
                                 const std::vector<bool>& may_delegate);

}  // namespace delegato::tools
