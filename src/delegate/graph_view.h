// Builds the partitioner's GraphInfo from a model's main graph (subgraph 0).
// Node i of the GraphInfo is operator i of the subgraph: the execution plan
// before any delegate is applied.
#pragma once

#include "delegate/partitioner.h"
#include "model/model.h"

namespace delegato {

// What to do with constant inputs (tensors holding data in the file that no
// node produces). They are ready from the start, so they never change which
// node lands in which subset; only the subsets' input lists differ.
enum class ConstantInputs {
  kOmit,  // subset inputs are the activations that cross subset boundaries
  kKeep,  // subset inputs also list weights, exactly as TFLite's partitioner does
};

// True when tensor `tensor` of `subgraph` has data in the file.
bool HasConstantData(const ModelDef& model, const SubgraphDef& subgraph, int tensor);

// A node has side effects when it reads or writes a RESOURCE tensor, or is
// IF, WHILE or CALL_ONCE (their bodies may have any). No control edges are
// given, so the partitioner chains such nodes in plan order.
// Throws delegato::Error when the model has no subgraph.
GraphInfo BuildGraphInfo(const ModelDef& model, ConstantInputs constants = ConstantInputs::kOmit);

}  // namespace delegato
