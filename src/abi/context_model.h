// Rebuilds a delegato model from what a TFLite host shows a delegate: the
// TfLiteContext's tensors and the nodes of its execution plan, with each
// node's builtin parameters read from TfLiteNode::builtin_data. The model
// feeds the same target engine and partitioner `delegato plan` uses, and
// partitions of it become the sub-models the delegate kernels run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "abi/tflite_abi.h"
#include "model/model.h"

namespace delegato::abi {

struct ContextGraph {
  // Subgraph 0 holds every host tensor at its host index, and one operator
  // per execution-plan entry (operator i is host node plan_nodes[i]).
  std::shared_ptr<ModelDef> model;
  std::vector<int> plan_nodes;
  // Per operator: why delegato cannot run it as read ("" when it can be
  // tried): params it does not decode, a host delegate node, an unknown type.
  std::vector<std::string> unreadable;
};

// Throws delegato::Error when the host's graph cannot be read at all.
ContextGraph ReadContextGraph(TfLiteContext* context);

// The operators `nodes` (indices into graph.model's operators) as a model of
// their own: inputs are the activations they read from outside, outputs are
// `outputs` (host tensor indices); constants keep their data.
std::shared_ptr<ModelDef> ExtractPartition(const ContextGraph& graph, const std::vector<int>& nodes,
                                           const std::vector<int>& outputs,
                                           std::vector<int>* input_host_tensors);

}  // namespace delegato::abi
