#include "ops/op_table.h"

#include <algorithm>
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

std::vector<int> SubgraphsCalledBy(const OperatorDef& op) {
  if (const auto* p = std::get_if<IfParams>(&op.params))
    return {p->then_subgraph_index, p->else_subgraph_index};
  if (const auto* p = std::get_if<WhileParams>(&op.params))
    return {p->cond_subgraph_index, p->body_subgraph_index};
  if (const auto* p = std::get_if<CallOnceParams>(&op.params)) return {p->init_subgraph_index};
  return {};
}

namespace {

// Depth-first over the call graph; `path` is the chain of subgraphs being
// called, so meeting one of them again is recursion.
// Deeper nesting than any converter writes; it bounds the recursion here and
// in the runners' nested Prepare and Invoke.
constexpr size_t kMaxCallDepth = 64;

void VisitCalls(const ModelDef& model, int subgraph, std::vector<int>& path,
                std::vector<char>& done) {
  if (path.size() >= kMaxCallDepth)
    Fail("subgraph ", subgraph, ": subgraph calls nest deeper than ", kMaxCallDepth, " levels");
  path.push_back(subgraph);
  const SubgraphDef& graph = model.subgraphs[subgraph];
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const OperatorDef& op = graph.operators[i];
    for (int callee : SubgraphsCalledBy(op)) {
      const std::string where = "subgraph " + std::to_string(subgraph) + " node " +
                                std::to_string(i) + " (" + model.OpName(op) + ")";
      if (callee < 0 || static_cast<size_t>(callee) >= model.subgraphs.size())
        Fail(where, ": calls subgraph ", callee, ", but the model has ", model.subgraphs.size(),
             " subgraphs");
      if (std::find(path.begin(), path.end(), callee) != path.end()) {
        std::string chain;
        for (int s : path) chain += std::to_string(s) + " -> ";
        Fail(where, ": calls subgraph ", callee, " recursively (", chain, callee,
             "); recursive subgraph calls are not supported");
      }
      if (!done[callee]) VisitCalls(model, callee, path, done);
    }
  }
  path.pop_back();
  done[subgraph] = 1;
}

}  // namespace

std::vector<int> ReachableSubgraphs(const ModelDef& model) {
  std::vector<int> reached;
  if (model.subgraphs.empty()) return reached;
  std::vector<char> done(model.subgraphs.size(), 0);
  std::vector<int> path;
  VisitCalls(model, 0, path, done);
  for (size_t s = 1; s < done.size(); ++s)
    if (done[s]) reached.push_back(static_cast<int>(s));
  return reached;
}

}  // namespace delegato
