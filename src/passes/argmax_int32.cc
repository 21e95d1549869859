// argmax-int32: ARG_MAX / ARG_MIN with an int64 output -> int32 output.
// Indices are below 2^31 for any tensor a device can hold, so the values are
// identical; what changes is the output tensor's element type. When that
// tensor is a model output, callers must read int32: the change says so.
// Consumers inside the graph that need int64 get a CAST back.
#include "core/error.h"
#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace delegato::passes {
namespace {

class ArgMaxInt32Pass : public Pass {
 public:
  std::string name() const override { return "argmax-int32"; }
  std::string summary() const override {
    return "ARG_MAX/ARG_MIN int64 output -> int32 (same indices; a model output changes type)";
  }
  std::vector<ReasonCode> reasons() const override {
    return {ReasonCode::kUnsupportedOutputType, ReasonCode::kUnsupportedOperandValue,
            ReasonCode::kDriverRejected};
  }
  std::vector<BuiltinOp> ops() const override { return {BuiltinOp::kArgMax, BuiltinOp::kArgMin}; }

  bool Addresses(const ModelDef& model, int node, const Reason& reason) const override {
    if (!Pass::Addresses(model, node, reason)) return false;
    const auto& graph = model.subgraphs[0];
    const auto& op = graph.operators[node];
    return !op.outputs.empty() && graph.tensors[op.outputs[0]].type == DataType::kInt64;
  }

  PassResult Run(ModelDef& model, const PassContext& ctx) const override {
    PassResult result;
    GraphEditor g(model);
    for (int n = 0; n < g.num_ops(); ++n) {
      const BuiltinOp code = g.code(n);
      if (code != BuiltinOp::kArgMax && code != BuiltinOp::kArgMin) continue;
      if (g.op(n).outputs.empty()) continue;
      const int out = g.op(n).outputs[0];
      if (g.tensor(out).type != DataType::kInt64) continue;
      if (ctx.target && ctx.Accepts(model, n)) {
        result.findings.push_back(StrCat(g.OpLabel(n), ": int64 output already accepted by ",
                                         ctx.target->id, "; left alone"));
        continue;
      }

      // Consumers other than graph outputs still read int64 through a CAST.
      const auto consumers = g.Consumers(out);
      g.tensor(out).type = DataType::kInt32;
      if (auto* p = std::get_if<ArgMinMaxParams>(&g.op(n).params)) p->output_type = DataType::kInt32;
      else g.op(n).params = ArgMinMaxParams{DataType::kInt32};

      Change change;
      change.exact = true;
      change.what = StrCat(g.OpLabel(n), ": output type int64 -> int32 (same index values)");
      if (!consumers.empty()) {
        TensorDef wide = g.tensor(out);
        wide.name += "/int64";
        wide.type = DataType::kInt64;
        const int wide_index = g.AddTensor(wide);
        for (auto [node, slot] : consumers) g.op(node).inputs[slot] = wide_index;
        CastParams cast;
        cast.in_type = DataType::kInt32;
        cast.out_type = DataType::kInt64;
        cast.has_types = true;
        g.InsertOp(n + 1, BuiltinOp::kCast, 1, {out}, {wide_index}, cast);
        change.details.push_back(StrCat("added a CAST int32 -> int64 for the ", consumers.size(),
                                        " node(s) that read \"", g.tensor(out).name, "\""));
      }
      if (g.IsGraphOutput(out)) {
        change.changes_interface = true;
        change.details.push_back(StrCat("MODEL OUTPUT \"", g.tensor(out).name,
                                        "\" CHANGES TYPE: int64 -> int32; code reading this "
                                        "output must read int32 values (the indices are the same)"));
      }
      result.changes.push_back(std::move(change));
    }
    if (result.changed()) GraphEditor(model).Compact();
    return result;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeArgMaxInt32Pass() { return std::make_unique<ArgMaxInt32Pass>(); }

}  // namespace delegato::passes
