// float-islands: float ops sandwiched in a quantized model,
//   DEQUANTIZE(q) -> float op -> QUANTIZE -> q
// (what post-training quantization leaves where it had no integer kernel or
// no calibration). Every island is reported: its ops, the quantized tensors
// around it, and whether it can become integer. A one-op island becomes the
// quantized op when TFLite has an integer kernel for it and the target takes
// it; parameters come from the surrounding tensors: inputs keep the
// DEQUANTIZE inputs' parameters, the output takes the QUANTIZE output's (or
// the op's fixed output parameters followed by a requantization, for
// LOGISTIC/TANH/SOFTMAX; the input's, for ops that keep parameters). Float
// constant operands are quantized over their own range; float weights of
// CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED symmetric int8 per channel
// (asymmetric uint8 per tensor in uint8 models) with int32 biases.
// Islands of several ops need parameters for their inner tensors (a
// calibration the model does not carry): reported, not converted.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "core/error.h"
#include "passes/graph_edit.h"
#include "passes/measure.h"
#include "passes/passes.h"

namespace delegato::passes {
namespace {

enum class QuantRule {
  kNone,         // no integer kernel for this type
  kRescales,     // any input/output parameters
  kSameParams,   // the output keeps the input's parameters
  kFixedOutput,  // the output parameters are fixed by the op
  kWeights,      // convolution-like: weights and bias to quantize
};

QuantRule RuleFor(BuiltinOp op, DataType type) {
  switch (op) {
    case BuiltinOp::kAdd:
    case BuiltinOp::kSub:
    case BuiltinOp::kMul:
    case BuiltinOp::kMean:
    case BuiltinOp::kDiv: return QuantRule::kRescales;
    case BuiltinOp::kConcatenation:
      return type == DataType::kUInt8 ? QuantRule::kRescales : QuantRule::kSameParams;
    case BuiltinOp::kReshape:
    case BuiltinOp::kSqueeze:
    case BuiltinOp::kMaxPool2d:
    case BuiltinOp::kAveragePool2d:
    case BuiltinOp::kResizeBilinear:
    case BuiltinOp::kResizeNearestNeighbor:
    case BuiltinOp::kTranspose:
    case BuiltinOp::kPad:
    case BuiltinOp::kStridedSlice:
    case BuiltinOp::kRelu:
    case BuiltinOp::kRelu6: return QuantRule::kSameParams;
    case BuiltinOp::kLogistic:
    case BuiltinOp::kTanh:
    case BuiltinOp::kSoftmax: return QuantRule::kFixedOutput;
    case BuiltinOp::kConv2d:
    case BuiltinOp::kDepthwiseConv2d:
    case BuiltinOp::kFullyConnected: return QuantRule::kWeights;
    default: return QuantRule::kNone;
  }
}

Quantization FixedOutput(BuiltinOp op, DataType type) {
  Quantization q;
  const bool u8 = type == DataType::kUInt8;
  if (op == BuiltinOp::kTanh) {
    q.scale = {1.0f / 128};
    q.zero_point = {u8 ? 128 : 0};
  } else {
    q.scale = {1.0f / 256};
    q.zero_point = {u8 ? 0 : -128};
  }
  return q;
}

std::string Fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

struct Island {
  std::vector<int> ops;      // the float ops, in node order
  std::vector<int> entries;  // DEQUANTIZE (or CAST) nodes feeding it
  std::vector<int> exits;    // QUANTIZE nodes reading it
  bool closed = true;        // every float input/output accounted for
  std::string open_reason;
};

bool IsFloatActivation(const GraphEditor& g, int t) {
  return t >= 0 && g.tensor(t).type == DataType::kFloat32 && !g.IsConstant(t);
}

std::vector<Island> FindIslands(const GraphEditor& g) {
  const int n = g.num_ops();
  auto is_entry = [&](int node) {
    const BuiltinOp c = g.code(node);
    const auto& op = g.graph().operators[node];
    return (c == BuiltinOp::kDequantize || c == BuiltinOp::kCast) && op.inputs.size() == 1 &&
           op.inputs[0] >= 0 && op.outputs.size() == 1;
  };
  auto is_float_op = [&](int node) {
    if (is_entry(node) || g.code(node) == BuiltinOp::kQuantize) return false;
    for (int32_t t : g.graph().operators[node].outputs)
      if (IsFloatActivation(g, t)) return true;
    return false;
  };
  // Union-find over float ops connected through float tensors.
  std::vector<int> parent(n);
  for (int i = 0; i < n; ++i) parent[i] = i;
  std::function<int(int)> find = [&](int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); };
  for (int node = 0; node < n; ++node) {
    if (!is_float_op(node)) continue;
    for (int32_t t : g.graph().operators[node].inputs) {
      if (!IsFloatActivation(g, t)) continue;
      const int p = g.Producer(t);
      if (p >= 0 && is_float_op(p)) parent[find(node)] = find(p);
    }
  }
  std::map<int, Island> by_root;
  for (int node = 0; node < n; ++node)
    if (is_float_op(node)) by_root[find(node)].ops.push_back(node);
  std::vector<Island> islands;
  for (auto& [root, island] : by_root) {
    std::set<int> members(island.ops.begin(), island.ops.end());
    std::set<int> entries, exits;
    for (int node : island.ops) {
      for (int32_t t : g.graph().operators[node].inputs) {
        if (!IsFloatActivation(g, t)) continue;
        const int p = g.Producer(t);
        if (p >= 0 && members.count(p)) continue;
        if (p >= 0 && is_entry(p)) {
          entries.insert(p);
        } else {
          island.closed = false;
          island.open_reason = StrCat("reads float tensor \"", g.tensor(t).name, "\"",
                                      p < 0 ? " (a model input)" : StrCat(" from ", g.OpLabel(p)));
        }
      }
      for (int32_t t : g.graph().operators[node].outputs) {
        if (!IsFloatActivation(g, t)) continue;
        if (g.IsGraphOutput(t)) {
          island.closed = false;
          island.open_reason = StrCat("\"", g.tensor(t).name, "\" is a model output");
        }
        for (auto [c, slot] : g.Consumers(t)) {
          if (members.count(c)) continue;
          if (g.code(c) == BuiltinOp::kQuantize && g.graph().operators[c].outputs.size() == 1) {
            exits.insert(c);
          } else {
            island.closed = false;
            island.open_reason = StrCat("\"", g.tensor(t).name, "\" is read by ", g.OpLabel(c));
          }
        }
      }
    }
    if (entries.empty()) continue;  // a float model part, not an island in a quantized model
    island.entries.assign(entries.begin(), entries.end());
    island.exits.assign(exits.begin(), exits.end());
    islands.push_back(std::move(island));
  }
  return islands;
}

std::string Describe(const GraphEditor& g, const Island& island) {
  std::string entries, ops, exits;
  for (int e : island.entries) {
    const int in = g.graph().operators[e].inputs[0];
    entries += StrCat(entries.empty() ? "" : ", ", g.model().OpName(g.graph().operators[e]), "(\"",
                      ShortName(g.tensor(in).name), "\" ", TypeName(g.tensor(in).type), ")");
  }
  for (int o : island.ops) ops += StrCat(ops.empty() ? "" : ", ", g.model().OpName(g.graph().operators[o]), " [node ", o, "]");
  for (int x : island.exits) {
    const int out = g.graph().operators[x].outputs[0];
    exits += StrCat(exits.empty() ? "" : ", ", "QUANTIZE(\"", ShortName(g.tensor(out).name), "\" ", TypeName(g.tensor(out).type), ")");
  }
  return StrCat(entries, " -> ", ops, " -> ", exits.empty() ? "(no QUANTIZE)" : exits);
}

// Quantizes a float constant over its own range (asymmetric 8-bit).
int QuantizeConstant(GraphEditor& g, int t, DataType type) {
  const std::vector<float> values = g.Values<float>(t);
  float lo = 0, hi = 0;
  for (float v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const double scale = hi > lo ? (static_cast<double>(hi) - lo) / 255.0 : 1.0;
  const int64_t qmin = type == DataType::kUInt8 ? 0 : -128;
  const int64_t zp = std::clamp<int64_t>(qmin + static_cast<int64_t>(std::round(-lo / scale)), qmin, qmin + 255);
  std::vector<uint8_t> bytes(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const double q = std::clamp<double>(std::round(values[i] / scale) + zp, qmin, qmin + 255);
    bytes[i] = type == DataType::kUInt8 ? static_cast<uint8_t>(q) : static_cast<uint8_t>(static_cast<int8_t>(q));
  }
  Quantization qp;
  qp.scale = {static_cast<float>(scale)};
  qp.zero_point = {zp};
  return g.AddConstant(g.tensor(t).name + "/quantized", type, g.tensor(t).shape, std::move(bytes), qp);
}

// Quantizes float weights (and a float bias) of a convolution-like op.
// Returns a description, or "" when the op's weights are not float constants.
std::string QuantizeWeights(GraphEditor& g, int node, DataType type, float input_scale) {
  OperatorDef& op = g.op(node);
  if (op.inputs.size() < 2) return "";
  const int w = op.inputs[1];
  if (w < 0 || !g.IsConstant(w) || g.tensor(w).type != DataType::kFloat32) return "";
  const BuiltinOp code = g.code(node);
  const int axis = code == BuiltinOp::kDepthwiseConv2d ? 3 : 0;
  const TensorDef wdef = g.tensor(w);
  const std::vector<float> values = g.Values<float>(w);
  const int rank = static_cast<int>(wdef.shape.size());
  int64_t inner = 1;
  for (int d = axis + 1; d < rank; ++d) inner *= wdef.shape[d];
  const int64_t channels = axis < rank ? wdef.shape[axis] : 1;
  std::vector<float> scales;
  std::vector<int64_t> zps;
  std::vector<uint8_t> bytes(values.size());
  if (type == DataType::kInt8) {
    std::vector<double> m(channels, 0.0);
    for (size_t i = 0; i < values.size(); ++i) {
      const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
      m[c] = std::max(m[c], static_cast<double>(std::fabs(values[i])));
    }
    for (double v : m) scales.push_back(v > 0 ? static_cast<float>(v / 127) : 1.0f);
    zps.assign(scales.size(), 0);
    for (size_t i = 0; i < values.size(); ++i) {
      const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
      bytes[i] = static_cast<uint8_t>(static_cast<int8_t>(std::clamp(std::round(values[i] / scales[c]), -127.0f, 127.0f)));
    }
  } else {
    float lo = 0, hi = 0;
    for (float v : values) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const float s = hi > lo ? (hi - lo) / 255.0f : 1.0f;
    const int64_t zp = std::clamp<int64_t>(static_cast<int64_t>(std::round(-lo / s)), 0, 255);
    scales = {s};
    zps = {zp};
    for (size_t i = 0; i < values.size(); ++i)
      bytes[i] = static_cast<uint8_t>(std::clamp<double>(std::round(values[i] / s) + zp, 0, 255));
  }
  Quantization wq;
  wq.scale = scales;
  wq.zero_point = zps;
  wq.quantized_dimension = scales.size() > 1 ? axis : 0;
  const int new_w = g.AddConstant(wdef.name + "/quantized", type, wdef.shape, std::move(bytes), wq);
  g.op(node).inputs[1] = new_w;
  std::string text = StrCat("weights \"", ShortName(wdef.name), "\" float -> ", TypeName(type), " ",
                            scales.size() > 1 ? StrCat("per-channel (", scales.size(), " scales)") : "per-tensor");
  if (g.op(node).inputs.size() > 2 && g.op(node).inputs[2] >= 0) {
    const int b = g.op(node).inputs[2];
    if (g.IsConstant(b) && g.tensor(b).type == DataType::kFloat32) {
      const std::vector<float> bias = g.Values<float>(b);
      std::vector<int32_t> qb(bias.size());
      std::vector<float> bscales;
      for (float s : scales) bscales.push_back(input_scale * s);
      for (size_t i = 0; i < bias.size(); ++i) {
        const float s = bscales[std::min(i, bscales.size() - 1)];
        qb[i] = static_cast<int32_t>(std::clamp<double>(std::round(bias[i] / s), -2147483648.0, 2147483647.0));
      }
      Quantization bq;
      bq.scale = bscales;
      bq.zero_point.assign(bscales.size(), 0);
      const int new_b = g.AddConstantOf<int32_t>(g.tensor(b).name + "/quantized", DataType::kInt32,
                                                 g.tensor(b).shape, qb, bq);
      g.op(node).inputs[2] = new_b;
      text += ", bias -> int32 at input_scale * weight_scale";
    }
  }
  return text;
}

class FloatIslandsPass : public Pass {
 public:
  std::string name() const override { return "float-islands"; }
  std::string summary() const override {
    return "DEQUANTIZE -> float op -> QUANTIZE replaced by the quantized op where TFLite and the target "
           "support it; every island reported";
  }
  std::vector<ReasonCode> reasons() const override {
    return {ReasonCode::kUnsupportedInputType, ReasonCode::kUnsupportedOutputType,
            ReasonCode::kUnsupportedOp, ReasonCode::kDriverRejected, ReasonCode::kHybridOp,
            ReasonCode::kPartitionLimit};
  }
  std::vector<BuiltinOp> ops() const override { return {}; }

  bool Addresses(const ModelDef& model, int node, const Reason& reason) const override {
    // A node inside (or at the border of) an island, left on the CPU.
    ModelDef& mutable_model = const_cast<ModelDef&>(model);  // GraphEditor only reads here
    GraphEditor g(mutable_model);
    for (const Island& island : FindIslands(g)) {
      if (!island.closed) continue;
      for (const auto* list : {&island.ops, &island.entries, &island.exits})
        if (std::find(list->begin(), list->end(), node) != list->end()) return true;
    }
    (void)reason;
    return false;
  }

  PassResult Run(ModelDef& model, const PassContext& ctx) const override {
    PassResult result;
    // Islands are converted one at a time; indices shift after each.
    std::set<std::string> reported;
    for (int guard = 0; guard < 1000; ++guard) {
      GraphEditor g(model);
      bool converted = false;
      for (const Island& island : FindIslands(g)) {
        const std::string text = Describe(g, island);
        std::string key;  // the island's identity across node renumbering: its ops' output tensors
        for (int o : island.ops) key += g.tensor(g.op(o).outputs[0]).name + "|";
        if (reported.count(key)) continue;
        reported.insert(key);
        std::string why;
        if (TryConvert(model, island, ctx, &result, &why)) {
          converted = true;
          break;
        }
        result.findings.push_back(StrCat("float island: ", text, ": not converted: ", why));
      }
      if (!converted) break;
    }
    // CAST int -> float -> QUANTIZE pairs: integer values entering the quantized domain.
    GraphEditor g(model);
    for (int n = 0; n < g.num_ops(); ++n) {
      if (g.code(n) != BuiltinOp::kCast || g.op(n).outputs.size() != 1) continue;
      const int out = g.op(n).outputs[0];
      if (!IsFloatActivation(g, out)) continue;
      const auto consumers = g.Consumers(out);
      if (consumers.size() == 1 && g.code(consumers[0].first) == BuiltinOp::kQuantize)
        result.findings.push_back(StrCat(
            "integer -> float -> quantized: ", g.OpLabel(n), " then ", g.OpLabel(consumers[0].first),
            ": TFLite's QUANTIZE takes no integer input, so this pair stays (no float op between them)"));
    }
    if (result.changed()) GraphEditor(model).Compact();
    return result;
  }

 private:
  static bool TryConvert(ModelDef& model, const Island& island, const PassContext& ctx, PassResult* result,
                         std::string* why) {
    GraphEditor g(model);
    if (!island.closed) {
      *why = StrCat("the float part is not closed: ", island.open_reason);
      return false;
    }
    if (island.ops.size() != 1) {
      *why = StrCat(island.ops.size(), " float ops: the tensors between them have no quantization "
                    "parameters (the model carries no calibration for them)");
      return false;
    }
    if (island.exits.size() != 1) {
      *why = "the float result is quantized more than once (several QUANTIZE nodes)";
      return false;
    }
    const int op_n = island.ops[0];
    const int exit_n = island.exits[0];
    const int exit_out = g.op(exit_n).outputs[0];
    const DataType type = g.tensor(exit_out).type;
    for (int e : island.entries) {
      if (g.code(e) != BuiltinOp::kDequantize) {
        *why = StrCat(g.OpLabel(e), " brings integer values, not quantized ones");
        return false;
      }
      const DataType in_type = g.tensor(g.op(e).inputs[0]).type;
      if (in_type != type || !IsQuant8(in_type)) {
        *why = StrCat("the DEQUANTIZE input is ", TypeName(in_type), " and the QUANTIZE output ", TypeName(type),
                      " (only 8-bit islands of one type are converted)");
        return false;
      }
    }
    const BuiltinOp code = g.code(op_n);
    const QuantRule rule = RuleFor(code, type);
    const std::string op_name = g.model().OpName(g.op(op_n));
    if (rule == QuantRule::kNone) {
      *why = StrCat(op_name, " has no ", TypeName(type), " kernel among TFLite's builtin ops");
      return false;
    }
    if (g.op(op_n).outputs.size() != 1) {
      *why = StrCat(op_name, " has several outputs");
      return false;
    }

    // Build the candidate.
    auto candidate = std::make_unique<ModelDef>(model);
    GraphEditor c(*candidate);
    std::vector<std::string> details;
    const int float_out = c.op(op_n).outputs[0];
    float first_input_scale = 0;
    int first_input = -1;
    for (size_t k = 0; k < c.op(op_n).inputs.size(); ++k) {
      const int t = c.op(op_n).inputs[k];
      if (t < 0 || c.tensor(t).type != DataType::kFloat32) continue;
      if (c.IsConstant(t)) {
        if (rule == QuantRule::kWeights && k >= 1) continue;  // handled with the weights
        const int q = QuantizeConstant(c, t, type);
        c.op(op_n).inputs[k] = q;
        details.push_back(StrCat("float constant \"", c.tensor(t).name, "\" quantized over its range (scale ",
                                 Fmt(ScaleOf(c.tensor(q))), ", zero point ", ZeroPointOf(c.tensor(q)), ")"));
        continue;
      }
      const int producer = c.Producer(t);
      const int quantized = c.op(producer).inputs[0];
      c.op(op_n).inputs[k] = quantized;
      if (first_input < 0) {
        first_input = quantized;
        first_input_scale = ScaleOf(c.tensor(quantized));
      }
    }
    if (first_input < 0) {
      *why = "no quantized input";
      return false;
    }
    if (rule == QuantRule::kWeights) {
      const std::string text = QuantizeWeights(c, op_n, type, first_input_scale);
      if (text.empty()) {
        *why = StrCat(op_name, "'s weights are not float constants");
        return false;
      }
      details.push_back(text);
    }
    int added = 0;
    if (rule == QuantRule::kFixedOutput || rule == QuantRule::kSameParams) {
      TensorDef mid = c.tensor(exit_out);
      mid.name = c.tensor(float_out).name + StrCat("/", TypeName(type));
      mid.quantization = rule == QuantRule::kFixedOutput ? FixedOutput(code, type) : c.tensor(first_input).quantization;
      if (mid.quantization.scale == c.tensor(exit_out).quantization.scale &&
          mid.quantization.zero_point == c.tensor(exit_out).quantization.zero_point) {
        c.op(op_n).outputs[0] = exit_out;
        c.RemoveOp(exit_n);
      } else {
        const int mid_index = c.AddTensor(mid);
        c.op(op_n).outputs[0] = mid_index;
        c.op(exit_n).inputs[0] = mid_index;  // the QUANTIZE now requantizes
        added = 1;
        details.push_back(StrCat(op_name, " outputs ", TypeName(type), " scale ", Fmt(ScaleOf(mid)), " zero point ",
                                 ZeroPointOf(mid), " (", rule == QuantRule::kFixedOutput ? "fixed by the op" : "the input's",
                                 "); the QUANTIZE stays as a requantization to the island's output parameters"));
      }
    } else {
      c.op(op_n).outputs[0] = exit_out;
      c.RemoveOp(exit_n);
    }
    // DEQUANTIZE nodes nobody reads any more.
    for (int k = static_cast<int>(island.entries.size()) - 1; k >= 0; --k) {
      const int e = island.entries[k];
      const int out = c.op(e).outputs[0];
      if (c.Consumers(out).empty() && !c.IsGraphOutput(out)) c.RemoveOp(e);
    }
    // The converted op (and its requantization) in the candidate.
    const int new_op = c.Producer(added ? c.op(c.Producer(exit_out)).inputs[0] : exit_out);
    std::vector<int> new_nodes = {new_op};
    if (added) new_nodes.push_back(c.Producer(exit_out));
    for (int node : new_nodes) {
      const NodeSupport support = ctx.Evaluate(*candidate, node);
      if (!support.supported) {
        *why = StrCat("the target refuses the quantized ", c.model().OpName(c.op(node)), ": ",
                      support.reasons.empty() ? "refused" : support.reasons[0].message);
        return false;
      }
    }
    // Measure: DEQUANTIZE(s) + op + QUANTIZE before, the quantized op after.
    Region before{&model, {}, {}, {exit_out}, {}};
    for (int e : island.entries) {
      before.nodes.push_back(e);
      const int in = g.op(e).inputs[0];
      if (!g.IsConstant(in) && std::find(before.inputs.begin(), before.inputs.end(), in) == before.inputs.end())
        before.inputs.push_back(in);
    }
    before.nodes.push_back(op_n);
    before.nodes.push_back(exit_n);
    std::sort(before.nodes.begin(), before.nodes.end());
    if (code == BuiltinOp::kDiv && g.op(op_n).inputs.size() > 1) {
      // The divisor's DEQUANTIZE input must not hold zero in the measurement.
      const int divisor = g.Producer(g.op(op_n).inputs[1]);
      if (divisor >= 0) {
        const int src = g.op(divisor).inputs[0];
        for (size_t k = 0; k < before.inputs.size(); ++k)
          if (before.inputs[k] == src) before.nonzero.push_back(static_cast<int>(k));
      }
    }
    Region after{candidate.get(), new_nodes, before.inputs, {exit_out}, {}};
    std::sort(after.nodes.begin(), after.nodes.end());
    std::string measured;
    try {
      measured = DescribeDiff(CompareRegions(before, after, ctx.seed, 3)[0]);
    } catch (const Error& e) {
      *why = StrCat("the quantized ", op_name, " does not prepare: ", e.what());
      return false;
    }
    Change change;
    change.what = StrCat("float island ", Describe(g, island), " -> ", TypeName(type), " ", op_name);
    for (auto& d : details) change.details.push_back(std::move(d));
    change.details.push_back(StrCat("numeric change of the island on random inputs: ", measured));
    result->changes.push_back(std::move(change));
    model = std::move(*candidate);
    return true;
  }
};

}  // namespace

bool HasFloatIslands(const ModelDef& model) {
  ModelDef& m = const_cast<ModelDef&>(model);  // read only
  return !FindIslands(GraphEditor(m)).empty();
}

std::unique_ptr<Pass> MakeFloatIslandsPass() { return std::make_unique<FloatIslandsPass>(); }

}  // namespace delegato::passes
