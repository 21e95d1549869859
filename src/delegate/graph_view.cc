#include "delegate/graph_view.h"

#include "core/error.h"

namespace delegato {

bool HasConstantData(const ModelDef& model, const SubgraphDef& subgraph, int tensor) {
  if (tensor < 0 || tensor >= static_cast<int>(subgraph.tensors.size())) return false;
  const uint32_t buffer = subgraph.tensors[tensor].buffer;
  return buffer != 0 && buffer < model.buffers.size() && !model.buffers[buffer].empty();
}

GraphInfo BuildGraphInfo(const ModelDef& model, ConstantInputs constants) {
  DLG_CHECK(!model.subgraphs.empty(), "delegation: the model has no subgraph");
  const SubgraphDef& subgraph = model.subgraphs[0];

  GraphInfo graph;
  graph.num_tensors = static_cast<int>(subgraph.tensors.size());
  graph.graph_inputs.assign(subgraph.inputs.begin(), subgraph.inputs.end());
  graph.graph_outputs.assign(subgraph.outputs.begin(), subgraph.outputs.end());

  // A tensor some node writes is not a constant, whatever the file says.
  std::vector<bool> produced(subgraph.tensors.size(), false);
  for (const OperatorDef& op : subgraph.operators) {
    for (int t : op.outputs) {
      if (t >= 0 && t < graph.num_tensors) produced[t] = true;
    }
  }
  auto is_resource = [&](int t) {
    return t >= 0 && t < graph.num_tensors && subgraph.tensors[t].type == DataType::kResource;
  };

  for (const OperatorDef& op : subgraph.operators) {
    std::vector<int> inputs;
    inputs.reserve(op.inputs.size());
    for (int t : op.inputs) {
      const bool omit = constants == ConstantInputs::kOmit && t >= 0 && t < graph.num_tensors &&
                        !produced[t] && HasConstantData(model, subgraph, t);
      if (!omit) inputs.push_back(t);
    }
    graph.node_inputs.push_back(std::move(inputs));
    graph.node_outputs.emplace_back(op.outputs.begin(), op.outputs.end());

    bool side_effect = false;
    for (int t : op.inputs) side_effect = side_effect || is_resource(t);
    for (int t : op.outputs) side_effect = side_effect || is_resource(t);
    if (op.opcode_index < model.operator_codes.size()) {
      const BuiltinOp builtin = model.operator_codes[op.opcode_index].builtin;
      side_effect = side_effect || builtin == BuiltinOp::kIf || builtin == BuiltinOp::kWhile ||
                    builtin == BuiltinOp::kCallOnce;
    }
    graph.node_has_side_effect.push_back(side_effect);
  }
  return graph;
}

}  // namespace delegato
