#include "passes/pass.h"

#include <algorithm>

#include "passes/passes.h"

namespace delegato::passes {

bool PassContext::Accepts(const ModelDef& model, int node) const {
  return Evaluate(model, node).supported;
}

NodeSupport PassContext::Evaluate(const ModelDef& model, int node) const {
  if (target == nullptr) return NodeSupport{true, {}};
  return EvaluateNode(*target, model, node, accelerator_name);
}

bool Pass::Addresses(const ModelDef& model, int node, const Reason& reason) const {
  const auto listed = reasons();
  if (std::find(listed.begin(), listed.end(), reason.code) == listed.end()) return false;
  const auto op_list = ops();
  if (op_list.empty()) return true;
  const BuiltinOp op =
      model.operator_codes[model.subgraphs[0].operators[node].opcode_index].builtin;
  return std::find(op_list.begin(), op_list.end(), op) != op_list.end();
}

const std::vector<std::unique_ptr<Pass>>& AllPasses() {
  static const std::vector<std::unique_ptr<Pass>> passes = [] {
    std::vector<std::unique_ptr<Pass>> list;
    list.push_back(MakeInt8ToUint8Pass());
    list.push_back(MakeUint8ToInt8Pass());
    list.push_back(MakePerTensorWeightsPass());
    list.push_back(MakeFloatIslandsPass());
    list.push_back(MakeArgMaxInt32Pass());
    list.push_back(MakeResizeFlagsPass());
    list.push_back(MakeAvgPoolSplitPass());
    list.push_back(MakeFoldRequantizePass());
    return list;
  }();
  return passes;
}

const Pass* FindPass(std::string_view name) {
  for (const auto& p : AllPasses())
    if (p->name() == name) return p.get();
  return nullptr;
}

std::string PassNames() {
  std::string out;
  for (const auto& p : AllPasses()) out += (out.empty() ? "" : ", ") + p->name();
  return out;
}

}  // namespace delegato::passes
