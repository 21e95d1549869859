#include "ops/op_table.h"

#include <cctype>

namespace delegato {

#define DLG_BUILTIN(op, Name, min_v, max_v)         \
  void Prepare##Name(KernelContext& ctx, Node& node); \
  void Eval##Name(KernelContext& ctx, const Node& node);
#define DLG_CUSTOM(code, Name, min_v, max_v) DLG_BUILTIN(_, Name, min_v, max_v)
#include "ops/op_list.inc"
#undef DLG_BUILTIN
#undef DLG_CUSTOM

namespace {

#define DLG_BUILTIN(op, Name, min_v, max_v) \
  OpKernel{BuiltinOp::op, nullptr, min_v, max_v, &Prepare##Name, &Eval##Name},
#define DLG_CUSTOM(code, Name, min_v, max_v) \
  OpKernel{BuiltinOp::kCustom, code, min_v, max_v, &Prepare##Name, &Eval##Name},
// A leading sentinel keeps the array non-empty while the list grows.
const OpKernel kKernels[] = {
    OpKernel{BuiltinOp::kCustom, "", 0, -1, nullptr, nullptr},
#include "ops/op_list.inc"
};
#undef DLG_BUILTIN
#undef DLG_CUSTOM

}  // namespace

std::span<const OpKernel> AllKernels() {
  return std::span<const OpKernel>(kKernels + 1, std::size(kKernels) - 1);
}

const OpKernel* FindKernel(BuiltinOp builtin, std::string_view custom_code) {
  for (const OpKernel& kernel : AllKernels()) {
    if (kernel.builtin != builtin) continue;
    if (builtin == BuiltinOp::kCustom && custom_code != kernel.custom_code) continue;
    return &kernel;
  }
  return nullptr;
}

namespace {

// "int8 [1,4,4,3]", "float32 []"; "none" for an absent optional input.
std::string TensorText(const SubgraphDef& graph, int32_t t) {
  if (t < 0 || static_cast<size_t>(t) >= graph.tensors.size()) return "none";
  const TensorDef& def = graph.tensors[t];
  std::string text(DataTypeName(def.type));
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  text += " [";
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on
  // inlined concatenations of temporaries here.
  for (size_t d = 0; d < def.shape.size(); ++d) {
    if (d) text += ',';
    text += std::to_string(def.shape[d]);
  }
  text += ']';
  return text;
}

std::string TensorListText(const SubgraphDef& graph, const std::vector<int32_t>& tensors) {
  std::string text;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i) text += ", ";
    text += TensorText(graph, tensors[i]);
  }
  return text;
}

}  // namespace

std::vector<UnsupportedNode> FindUnsupportedNodes(const ModelDef& model, size_t subgraph) {
  std::vector<UnsupportedNode> found;
  if (subgraph >= model.subgraphs.size()) return found;
  const SubgraphDef& graph = model.subgraphs[subgraph];
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const OperatorDef& op = graph.operators[i];
    if (op.opcode_index >= model.operator_codes.size()) continue;  // the reader rejects these
    const OperatorCodeDef& code = model.operator_codes[op.opcode_index];
    const OpKernel* kernel = FindKernel(code.builtin, code.custom_code);
    std::string reason;
    if (kernel == nullptr) {
      reason = code.builtin == BuiltinOp::kCustom
                   ? "custom op '" + code.custom_code + "' is not supported by this runtime"
                   : std::string("op is not supported by this runtime");
    } else if (code.version < kernel->min_version || code.version > kernel->max_version) {
      reason = "op version " + std::to_string(code.version) +
               " is not supported (this runtime implements versions " +
               std::to_string(kernel->min_version) + ".." + std::to_string(kernel->max_version) + ")";
    } else if (op.unparsed_options) {
      reason = "builtin options of this op are not understood";
    } else {
      continue;
    }
    UnsupportedNode node;
    node.index = static_cast<int>(i);
    node.op_name = model.OpName(op);
    node.version = code.version;
    node.message = "node " + std::to_string(i) + " (" + node.op_name + "): " + reason +
                   " (version " + std::to_string(code.version) + "; inputs: " +
                   TensorListText(graph, op.inputs) + "; outputs: " +
                   TensorListText(graph, op.outputs) + ")";
    found.push_back(std::move(node));
  }
  return found;
}

}  // namespace delegato
