// The placement of a model's nodes on a target: what `delegato plan` prints
// and `delegato run --target` executes. Computed from the model alone (no
// kernels needed), so it also explains models the CPU runtime cannot run.
#pragma once

#include <string>
#include <vector>

#include "delegate/partitioner.h"
#include "delegate/target.h"
#include "model/model.h"
#include "tools/cost.h"

namespace delegato::tools {

// Where delegato looks for target ids: $DELEGATO_TARGETS_DIR, else the source
// tree's targets/ (compiled in), else <exe>/../share/delegato/targets.
std::string TargetsDir();

struct PlacementOptions {
  std::string accelerator_name;
  int max_delegated_partitions = -1;  // < 0: the target's default
  int min_nodes_per_partition = -1;
  std::vector<int> skip_nodes;
  int first_node = -1, last_node = -1;
};

struct Placement {
  Target target;
  DelegateOptions options;
  DelegationPlan plan;
  std::vector<NodeSupport> support;  // the target's raw per-node answer
  std::vector<double> node_ops;      // arithmetic operations per node (2 per MAC)
  CostTables costs;                  // per-node times on this target
  CostEstimate estimate;             // of `plan`
};

Placement PlaceModel(const ModelDef& model, const std::string& target_id_or_path,
                     const PlacementOptions& options);

// The three ways to run a plan, priced by the same cost model: greedy (what
// TFLite's partitioner does with the target's options), cost-aware (the
// supported nodes ChooseCpuNodes keeps on the CPU), everything on the CPU.
struct PlanAlternatives {
  CostEstimate greedy, cost, cpu_only;
  DelegationPlan cost_plan;
  std::vector<int> cost_skip;       // the never_delegate list realising cost_plan (with the user's skip_nodes)
  std::vector<std::string> knobs;   // options that realise cost_plan, one per line
};
PlanAlternatives CompareAlternatives(const ModelDef& model, const Placement& greedy);

// "0,4-7" for sorted node indices.
std::string NodeRanges(const std::vector<int>& nodes);

// "int8", "uint8", "float32", ... of the node's first activation.
std::string NodeDtypeClass(const ModelDef& model, int node);
// Operation count estimate: 2*MACs for CONV/DEPTHWISE/FC, output elements otherwise (the
// cost model's NodeWorkOf counts reductions by their input).
double NodeOps(const ModelDef& model, int node);

}  // namespace delegato::tools
