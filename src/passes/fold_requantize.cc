// fold-requantize: requantizations that do nothing, or that two nodes do
// where one would, folded:
//  - QUANTIZE between identical types and parameters: a copy, removed;
//  - DEQUANTIZE -> QUANTIZE (the float value used only there): one QUANTIZE
//    requantizing directly, or nothing when the parameters are equal;
//  - QUANTIZE -> QUANTIZE (the middle value used only there): one QUANTIZE.
// A fold is applied only when it gives the same output for every one of the
// 256 possible 8-bit inputs (run through the reference kernels both ways);
// otherwise it is reported with the number of inputs that would change.
#include <algorithm>

#include "core/error.h"
#include "delegato/interpreter.h"
#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace delegato::passes {
namespace {

// Runs a chain of ops of the given codes over all 256 values of `in` and
// returns the raw outputs. `chain` lists (op, output tensor def).
std::vector<double> RunAll8Bit(const TensorDef& in, const std::vector<std::pair<BuiltinOp, TensorDef>>& chain) {
  auto model = std::make_shared<ModelDef>();
  model->subgraphs.emplace_back();
  model->buffers.emplace_back();
  GraphEditor g(*model);
  TensorDef input = in;
  input.shape = {256};
  input.shape_signature.clear();
  input.buffer = 0;
  int prev = g.AddTensor(input);
  g.graph().inputs = {prev};
  for (const auto& [op, def] : chain) {
    TensorDef t = def;
    t.shape = {256};
    t.shape_signature.clear();
    t.buffer = 0;
    const int next = g.AddTensor(t);
    g.InsertOp(g.num_ops(), op, op == BuiltinOp::kDequantize ? 2 : 2, {prev}, {next},
               op == BuiltinOp::kQuantize ? OpParams{EmptyParams{}} : OpParams{std::monostate{}});
    prev = next;
  }
  g.graph().outputs = {prev};
  Status status;
  InterpreterOptions options;
  options.kernels = KernelSet::kReference;
  auto interpreter = Interpreter::Create(model, options, &status);
  if (!status.ok()) Fail(status.message());
  status = interpreter->AllocateTensors();
  if (!status.ok()) Fail(status.message());
  TensorView x = interpreter->input(0);
  for (int v = 0; v < 256; ++v) static_cast<uint8_t*>(x.data)[v] = static_cast<uint8_t>(v);
  status = interpreter->Invoke();
  if (!status.ok()) Fail(status.message());
  TensorView y = interpreter->output(0);
  std::vector<double> out(256);
  for (int v = 0; v < 256; ++v) {
    switch (y.type) {
      case DataType::kUInt8: out[v] = static_cast<const uint8_t*>(y.data)[v]; break;
      case DataType::kInt8: out[v] = static_cast<const int8_t*>(y.data)[v]; break;
      case DataType::kInt16: out[v] = static_cast<const int16_t*>(y.data)[v]; break;
      default: Fail("unexpected type ", DataTypeName(y.type));
    }
  }
  return out;
}

int Mismatches(const std::vector<double>& a, const std::vector<double>& b) {
  int n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

std::string Params(const TensorDef& t) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%s scale %.4g zero point %lld", TypeName(t.type).c_str(), ScaleOf(t),
                static_cast<long long>(ZeroPointOf(t)));
  return buf;
}

class FoldRequantizePass : public Pass {
 public:
  std::string name() const override { return "fold-requantize"; }
  std::string summary() const override {
    return "identity and back-to-back requantizations (QUANTIZE/DEQUANTIZE pairs) folded when exact "
           "for all 256 inputs";
  }
  std::vector<ReasonCode> reasons() const override {
    return {ReasonCode::kUnsupportedInputType, ReasonCode::kUnsupportedOutputType,
            ReasonCode::kUnsupportedOp, ReasonCode::kDriverRejected, ReasonCode::kUnsupportedQuantization};
  }
  std::vector<BuiltinOp> ops() const override { return {BuiltinOp::kQuantize, BuiltinOp::kDequantize}; }

  PassResult Run(ModelDef& model, const PassContext& ctx) const override {
    PassResult result;
    RemoveIdentityQuantizes(model, &result);
    for (bool again = true; again;) {
      again = false;
      GraphEditor g(model);
      for (int n = 0; n < g.num_ops() && !again; ++n) {
        const BuiltinOp first = g.code(n);
        if (first != BuiltinOp::kDequantize && first != BuiltinOp::kQuantize) continue;
        if (g.op(n).inputs.size() != 1 || g.op(n).outputs.size() != 1 || g.op(n).inputs[0] < 0) continue;
        const int in = g.op(n).inputs[0], mid = g.op(n).outputs[0];
        if (!IsQuant8(g.tensor(in).type) || g.IsConstant(in)) continue;
        if (first == BuiltinOp::kQuantize && !IsQuant8(g.tensor(mid).type)) continue;
        const auto consumers = g.Consumers(mid);
        if (consumers.size() != 1 || g.IsGraphOutput(mid)) continue;
        const int next = consumers[0].first;
        if (g.code(next) != BuiltinOp::kQuantize || g.op(next).outputs.size() != 1) continue;
        const int out = g.op(next).outputs[0];
        if (!IsQuant8(g.tensor(out).type)) continue;
        const std::string label = StrCat(g.OpLabel(n), " -> ", g.OpLabel(next));
        const auto two = RunAll8Bit(g.tensor(in), {{first, g.tensor(mid)}, {BuiltinOp::kQuantize, g.tensor(out)}});
        const bool identity = SameQuantization(g.tensor(in), g.tensor(out));
        std::vector<double> one;
        if (identity) {
          one.resize(256);
          for (int v = 0; v < 256; ++v)
            one[v] = g.tensor(in).type == DataType::kUInt8 ? v : static_cast<int8_t>(static_cast<uint8_t>(v));
        } else {
          one = RunAll8Bit(g.tensor(in), {{BuiltinOp::kQuantize, g.tensor(out)}});
        }
        const int differ = Mismatches(two, one);
        if (differ) {
          std::string key = label;
          if (std::find(reported_.begin(), reported_.end(), key) == reported_.end())
            result.findings.push_back(StrCat(label, ": folding into one requantization would change ", differ,
                                             " of 256 input values; kept"));
          continue;
        }
        Change change;
        change.exact = true;
        if (identity && !g.IsGraphOutput(out)) {
          g.ReplaceUses(out, in);
          g.RemoveOp(next);
          g.RemoveOp(n);
          change.what = StrCat(label, ": ", Params(g.tensor(in)), " there and back: both removed (exact)");
        } else {
          // One QUANTIZE from `in` straight to `out`.
          g.op(next).inputs[0] = in;
          g.RemoveOp(n);
          change.what = StrCat(label, ": folded into one QUANTIZE ", Params(g.tensor(in)), " -> ",
                               Params(g.tensor(out)), " (same output for all 256 inputs)");
        }
        result.changes.push_back(std::move(change));
        again = true;
      }
    }
    if (result.changed()) GraphEditor(model).Compact();
    (void)ctx;
    return result;
  }

 private:
  std::vector<std::string> reported_;
};

}  // namespace

std::unique_ptr<Pass> MakeFoldRequantizePass() { return std::make_unique<FoldRequantizePass>(); }

}  // namespace delegato::passes
