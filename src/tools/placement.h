// The placement of a model's nodes on a target: what `delegato plan` prints
// and `delegato run --target` executes. Computed from the model alone (no
// kernels needed), so it also explains models the CPU runtime cannot run.
#pragma once

#include <string>
#include <vector>

#include "delegate/partitioner.h"
#include "delegate/target.h"
#include "model/model.h"

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

struct CostEstimate {
  double accelerator_us = 0;
  double cpu_us = 0;
  double sync_us = 0;
  double first_inference_compile_ms = 0;
  bool uses_placeholders = false;  // some number used is a placeholder
  double total_us() const { return accelerator_us + cpu_us + sync_us; }
};

struct Placement {
  Target target;
  DelegateOptions options;
  DelegationPlan plan;
  std::vector<NodeSupport> support;  // the target's raw per-node answer
  std::vector<double> node_ops;      // arithmetic operations per node (2 per MAC)
  CostEstimate estimate;
};

Placement PlaceModel(const ModelDef& model, const std::string& target_id_or_path,
                     const PlacementOptions& options);

// "int8", "uint8", "float32", ... of the node's first activation.
std::string NodeDtypeClass(const ModelDef& model, int node);
// Operation count estimate: 2*MACs for CONV/DEPTHWISE/FC, output elements otherwise.
double NodeOps(const ModelDef& model, int node);

}  // namespace delegato::tools
