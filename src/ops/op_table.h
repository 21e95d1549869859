// The op table: the single list of every op this runtime executes, with the
// range of versions each kernel accepts. Names come from the model (builtin
// names in model/builtin_op.cc), parameters from model/op_params.h.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ops/kernel.h"

namespace delegato {

std::span<const OpKernel> AllKernels();

// nullptr when no kernel exists for the op at all; a kernel whose version
// range excludes `version` is returned too, so the caller can say
// "version N not supported (1..M)".
const OpKernel* FindKernel(BuiltinOp builtin, std::string_view custom_code);

// A node of a model this runtime cannot run: no kernel for its op, its version
// outside the kernel's range, or options the reader did not understand.
struct UnsupportedNode {
  int index = 0;
  std::string op_name;
  int version = 1;
  // "node 3 (SHAPE): op is not supported by this runtime (version 1; inputs:
  // float32 [1,4]; outputs: int32 [2])"
  std::string message;
};

// Every unsupported node of subgraph `subgraph`, in node order (all of them,
// not only the first, so a user sees at once what a model needs).
std::vector<UnsupportedNode> FindUnsupportedNodes(const ModelDef& model, size_t subgraph = 0);

// The subgraphs a node calls (IF's branches, WHILE's cond and body,
// CALL_ONCE's init), in that order; empty for other ops.
std::vector<int> SubgraphsCalledBy(const OperatorDef& op);

// Every subgraph that subgraph 0 reaches through calls, directly or not,
// without 0 itself, ascending. Fails naming the node on an index out of range
// and on recursion (a subgraph that ends up calling itself).
std::vector<int> ReachableSubgraphs(const ModelDef& model);

}  // namespace delegato
