// avgpool-split: an AVERAGE_POOL_2D whose window the target refuses (NNAPI:
// quantized filter_w * filter_h > 256 without a named accelerator) replaced by
// ops computing the same average. Handled: global pools (one output pixel
// whose window covers the whole input), the case of real models (DeepLab's
// image pooling: 33x33 -> 1x1). Candidates:
//
//  - MEAN over H and W (keep_dims). For quantized tensors the pass compares
//    the two integer formulas over every possible window sum (pool: the sum
//    rounded to nearest, halves away from zero, clamped to the activation
//    range; MEAN: (sum - zp * count) times a fixed-point multiplier folding
//    in_scale / out_scale / count, rounded, plus zp): when they agree
//    everywhere the rewrite is exact.
//  - two AVERAGE_POOL_2D in a chain, the first with stride = window
//    (a1 x b1), the second over what remains (a2 x b2), a1*a2 = H, b1*b2 = W;
//    including the separable H-then-W split. Each stage rounds, so the result
//    can differ by a step; the error is measured on random windows.
//
// The target decides which candidates are possible; among those the exact
// one wins, else the one with the smallest measured error, then the fewest
// nodes. Every candidate considered is reported with its cost.
#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "kernels/quantization.h"
#include "passes/graph_edit.h"
#include "passes/measure.h"
#include "passes/passes.h"

namespace delegato::passes {
namespace {

constexpr int kDefaultWindowLimit = 256;  // NNAPI's quantized limit, used without a target

struct PoolShape {
  int32_t batch = 0, h = 0, w = 0, c = 0;
};

int32_t PadBefore(Padding padding, int32_t in, int32_t filter, int32_t stride, int32_t out) {
  if (padding != Padding::kSame) return 0;
  return std::max<int32_t>(0, ((out - 1) * stride + filter - in) / 2);
}

// The activation clamp of a quantized pool output, as TFLite computes it.
void ClampRange(DataType type, Activation act, float scale, int32_t zp, int32_t* lo, int32_t* hi) {
  *lo = type == DataType::kUInt8 ? 0 : -128;
  *hi = type == DataType::kUInt8 ? 255 : 127;
  auto q = [&](float v) { return zp + static_cast<int32_t>(std::round(v / scale)); };
  if (act == Activation::kRelu) *lo = std::max(*lo, q(0.0f));
  if (act == Activation::kRelu6) {
    *lo = std::max(*lo, q(0.0f));
    *hi = std::min(*hi, q(6.0f));
  }
  if (act == Activation::kReluN1To1) {
    *lo = std::max(*lo, q(-1.0f));
    *hi = std::min(*hi, q(1.0f));
  }
}

int64_t PoolRound(int64_t sum, int64_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

// MEAN's integer arithmetic for a given window sum (see kernels/reference/reduce.h).
int32_t MeanOfSum(int64_t sum, int64_t count, int32_t in_zp, int32_t multiplier, int shift,
                  int32_t out_zp, int32_t qmin, int32_t qmax) {
  int k = 63 - __builtin_clzll(static_cast<uint64_t>(count));
  k = std::min(k, 32);
  k = std::max(0, std::min(k, 31 + shift));
  const int32_t mean_multiplier = static_cast<int32_t>((static_cast<int64_t>(multiplier) << k) / count);
  const int32_t centered = static_cast<int32_t>(sum - static_cast<int64_t>(in_zp) * count);
  const int32_t v = quant::MultiplyByQuantizedMultiplier(centered, mean_multiplier, shift - k) + out_zp;
  return std::clamp(v, qmin, qmax);
}

struct ExactCheck {
  int64_t sums = 0, mismatches = 0;
  int32_t max_diff = 0;
};

ExactCheck CheckMeanAgainstPool(DataType type, int64_t count, float in_scale, int32_t in_zp,
                                float out_scale, int32_t out_zp, Activation act) {
  ExactCheck check;
  const int32_t qmin = type == DataType::kUInt8 ? 0 : -128;
  const int32_t qmax = type == DataType::kUInt8 ? 255 : 127;
  int32_t act_lo, act_hi;
  ClampRange(type, act, out_scale, out_zp, &act_lo, &act_hi);
  int32_t multiplier;
  int shift;
  quant::QuantizeMultiplier(static_cast<double>(in_scale) / static_cast<double>(out_scale), &multiplier,
                            &shift);
  for (int64_t sum = count * qmin; sum <= count * qmax; ++sum) {
    const int64_t pool = std::clamp<int64_t>(PoolRound(sum, count), act_lo, act_hi);
    const int32_t mean = MeanOfSum(sum, count, in_zp, multiplier, shift, out_zp, qmin, qmax);
    ++check.sums;
    if (pool != mean) {
      ++check.mismatches;
      check.max_diff = std::max<int32_t>(check.max_diff, std::abs(static_cast<int32_t>(pool) - mean));
    }
  }
  return check;
}

struct ChainError {
  double max_steps = 0;
  double differing = 0;  // fraction of windows
  double mean_steps = 0;
};

// Two-stage average of random windows vs the one-stage average, in steps.
ChainError MeasureChain(DataType type, int32_t h, int32_t w, int32_t a1, int32_t b1, uint64_t seed) {
  ChainError e;
  const bool integer = type != DataType::kFloat32;
  const int32_t a2 = h / a1, b2 = w / b1;
  std::mt19937_64 rng(seed);
  const int windows = 400;
  std::vector<double> x(static_cast<size_t>(h) * w);
  int64_t differ = 0;
  double total = 0;
  for (int k = 0; k < windows; ++k) {
    // Half the windows uniform noise, half smooth gradients plus noise.
    const bool smooth = k % 2;
    const double base = static_cast<double>(rng() % 256), slope = (static_cast<double>(rng() % 200) - 100) / 100.0;
    for (int32_t y = 0; y < h; ++y)
      for (int32_t xx = 0; xx < w; ++xx) {
        double v = smooth ? base + slope * (y + xx) + static_cast<double>(rng() % 9) - 4
                          : static_cast<double>(rng() % 256);
        v = std::clamp(std::round(v), 0.0, 255.0);
        if (type == DataType::kInt8) v -= 128;
        if (!integer) v = v / 128.0;
        x[static_cast<size_t>(y) * w + xx] = v;
      }
    double one = 0;
    for (double v : x) one += v;
    one = integer ? static_cast<double>(PoolRound(static_cast<int64_t>(one), static_cast<int64_t>(h) * w))
                  : one / (static_cast<double>(h) * w);
    double two = 0;
    for (int32_t by = 0; by < a2; ++by)
      for (int32_t bx = 0; bx < b2; ++bx) {
        double s = 0;
        for (int32_t y = 0; y < a1; ++y)
          for (int32_t xx = 0; xx < b1; ++xx) s += x[static_cast<size_t>(by * a1 + y) * w + bx * b1 + xx];
        two += integer ? static_cast<double>(PoolRound(static_cast<int64_t>(s), static_cast<int64_t>(a1) * b1))
                       : s / (static_cast<double>(a1) * b1);
      }
    two = integer ? static_cast<double>(PoolRound(static_cast<int64_t>(two), static_cast<int64_t>(a2) * b2))
                  : two / (static_cast<double>(a2) * b2);
    const double d = std::fabs(one - two) * (integer ? 1.0 : 128.0);
    differ += d > 0;
    total += d;
    e.max_steps = std::max(e.max_steps, d);
  }
  e.differing = static_cast<double>(differ) / windows;
  e.mean_steps = total / windows;
  return e;
}

struct Candidate {
  std::string description;
  std::unique_ptr<ModelDef> model;
  int added = 0;          // nodes added beyond the replaced one
  bool exact = false;
  double error = 0;       // share of outputs that differ (estimated; 0 when exact)
  std::string error_text;
  bool accepted = false;
  std::string refusal;
};

class AvgPoolSplitPass : public Pass {
 public:
  std::string name() const override { return "avgpool-split"; }
  std::string summary() const override {
    return "AVERAGE_POOL_2D with a window over the target's limit -> MEAN over H,W (exact when "
           "checked so) or a chain of smaller pools (measured)";
  }
  std::vector<ReasonCode> reasons() const override {
    return {ReasonCode::kUnsupportedOperandValue, ReasonCode::kUnsupportedShape,
            ReasonCode::kDriverRejected};
  }
  std::vector<BuiltinOp> ops() const override { return {BuiltinOp::kAveragePool2d}; }

  bool Addresses(const ModelDef& model, int node, const Reason& reason) const override {
    // Only refusals about the window, not about types.
    return Pass::Addresses(model, node, reason) && reason.code != ReasonCode::kDriverRejected &&
           reason.message.find("filter") != std::string::npos;
  }

  PassResult Run(ModelDef& model, const PassContext& ctx) const override {
    PassResult result;
    for (int n = 0; n < static_cast<int>(model.subgraphs[0].operators.size()); ++n) {
      GraphEditor g(model);
      if (g.code(n) != BuiltinOp::kAveragePool2d) continue;
      const Pool2DParams* params = std::get_if<Pool2DParams>(&g.op(n).params);
      if (!params || g.op(n).inputs.empty() || g.op(n).outputs.empty()) continue;
      const std::string label = g.OpLabel(n);
      const int in = g.op(n).inputs[0], out = g.op(n).outputs[0];
      const TensorDef& in_def = g.tensor(in);
      const TensorDef& out_def = g.tensor(out);
      if (ctx.target ? ctx.Accepts(model, n)
                     : params->filter_w * params->filter_h <= kDefaultWindowLimit)
        continue;
      if (in_def.shape.size() != 4 || out_def.shape.size() != 4) continue;
      const PoolShape s{in_def.shape[0], in_def.shape[1], in_def.shape[2], in_def.shape[3]};
      const bool global =
          out_def.shape[1] == 1 && out_def.shape[2] == 1 &&
          PadBefore(params->padding, s.h, params->filter_h, params->stride_h, 1) == 0 &&
          PadBefore(params->padding, s.w, params->filter_w, params->stride_w, 1) == 0 &&
          params->filter_h >= s.h && params->filter_w >= s.w;
      if (!global) {
        result.findings.push_back(StrCat(label, ": window ", params->filter_h, "x", params->filter_w,
                                         " over ", s.h, "x", s.w, " is not a global pool; only global "
                                         "pools are decomposed; left on the CPU"));
        continue;
      }
      const DataType type = in_def.type;
      const bool quantized = IsQuant8(type);
      if (!quantized && type != DataType::kFloat32) continue;

      std::vector<Candidate> candidates;
      // MEAN
      {
        Candidate c;
        c.model = std::make_unique<ModelDef>(model);
        GraphEditor e(*c.model);
        const int axes = e.AddConstantOf<int32_t>(out_def.name + "/mean_axes", DataType::kInt32, {2}, {1, 2});
        OperatorDef& op = e.op(n);
        op.opcode_index = e.Opcode(BuiltinOp::kMean, VersionFor(BuiltinOp::kMean, type));
        op.inputs = {in, axes};
        op.params = ReducerParams{true};
        c.description = StrCat("MEAN over H,W (keep_dims) of ", s.h, "x", s.w);
        if (quantized) {
          const ExactCheck check = CheckMeanAgainstPool(
              type, static_cast<int64_t>(s.h) * s.w, ScaleOf(in_def), static_cast<int32_t>(ZeroPointOf(in_def)),
              ScaleOf(out_def), static_cast<int32_t>(ZeroPointOf(out_def)), params->activation);
          c.exact = check.mismatches == 0;
          char share[32];
          std::snprintf(share, sizeof(share), "%.3f%%", 100.0 * check.mismatches / check.sums);
          c.error_text = c.exact ? StrCat("exact: the integer formulas agree on all ", check.sums,
                                          " possible window sums")
                                 : StrCat(check.mismatches, " of ", check.sums, " possible window sums (",
                                          share, ") round differently, by at most ", check.max_diff,
                                          " step(s): MEAN's fixed-point multiplier rounds twice");
          c.error = static_cast<double>(check.mismatches) / static_cast<double>(check.sums);
        } else if (params->activation == Activation::kNone) {
          c.error_text = "float: the same average summed in another order (last-bit differences)";
          c.error = 1e-6;
        } else {
          c.error_text = "float with a fused activation MEAN cannot apply";
          c.error = INFINITY;
        }
        candidates.push_back(std::move(c));
      }
      // Chains of two pools.
      for (int32_t a1 = 1; a1 <= s.h; ++a1) {
        if (s.h % a1) continue;
        for (int32_t b1 = 1; b1 <= s.w; ++b1) {
          if (s.w % b1) continue;
          const int32_t a2 = s.h / a1, b2 = s.w / b1;
          if (a1 * b1 == 1 || a2 * b2 == 1) continue;  // one stage would be the original pool
          Candidate c;
          c.model = std::make_unique<ModelDef>(model);
          c.added = 1;
          GraphEditor e(*c.model);
          TensorDef mid = in_def;
          mid.name = out_def.name + StrCat("/pool_", a1, "x", b1);
          mid.shape = {s.batch, a2, b2, s.c};
          mid.shape_signature.clear();
          const int mid_index = e.AddTensor(mid);
          Pool2DParams first{Padding::kValid, b1, a1, b1, a1, Activation::kNone};
          Pool2DParams second{Padding::kValid, b2, a2, b2, a2, params->activation};
          OperatorDef& op = e.op(n);
          op.params = second;
          op.inputs[0] = mid_index;
          const int version = e.model().operator_codes[op.opcode_index].version;
          e.InsertOp(n, BuiltinOp::kAveragePool2d, version, {in}, {mid_index}, first);
          const ChainError err = MeasureChain(type, s.h, s.w, a1, b1, ctx.seed);
          c.description = StrCat("AVERAGE_POOL_2D ", a1, "x", b1, " stride ", a1, "x", b1, " -> ", a2, "x", b2,
                                 ", then AVERAGE_POOL_2D ", a2, "x", b2);
          c.error = err.differing;
          char buf[200];
          std::snprintf(buf, sizeof(buf),
                        "double rounding: on 400 random windows max %.3g step(s), mean %.3g, %.1f%% differ",
                        err.max_steps, err.mean_steps, 100 * err.differing);
          c.error_text = buf;
          c.exact = err.max_steps == 0 && !quantized;
          candidates.push_back(std::move(c));
        }
      }
      // Which ones the target takes (every node of the replacement).
      for (Candidate& c : candidates) {
        if (std::isinf(c.error)) {
          c.refusal = "not applicable";
          continue;
        }
        c.accepted = true;
        for (int k = 0; k <= c.added; ++k) {
          const NodeSupport support = ctx.Evaluate(*c.model, n + k);
          if (!support.supported) {
            c.accepted = false;
            c.refusal = support.reasons.empty() ? "refused" : support.reasons[0].message;
          }
        }
      }
      Candidate* best = nullptr;
      for (Candidate& c : candidates) {
        if (!c.accepted) continue;
        auto key = [](const Candidate& x) { return std::make_tuple(!x.exact, x.error, x.added); };
        if (!best || key(c) < key(*best)) best = &c;
      }
      if (!best) {
        result.findings.push_back(StrCat(label, ": no decomposition the target accepts; left on the CPU"));
        continue;
      }
      Change change;
      change.exact = best->exact;
      change.what = StrCat(label, ": global ", params->filter_h, "x", params->filter_w, " average over ",
                           s.h, "x", s.w, " -> ", best->description);
      change.details.push_back(best->error_text);
      change.details.push_back(best->added ? StrCat("cost: ", best->added, " more node(s)")
                                           : "cost: none (one node replaces one node)");
      if (quantized || best->added) {
        const Region a{&model, {n}, {in}, {out}, {}};
        std::vector<int> nodes;
        for (int k = 0; k <= best->added; ++k) nodes.push_back(n + k);
        const Region b{best->model.get(), nodes, {in}, {out}, {}};
        change.details.push_back(StrCat("checked on random inputs: ", DescribeDiff(CompareRegions(a, b, ctx.seed, 3)[0])));
      }
      // The alternatives: MEAN and the three closest accepted chains, then a count.
      std::vector<const Candidate*> others;
      for (const Candidate& c : candidates)
        if (&c != best && (c.accepted || &c == &candidates[0])) others.push_back(&c);
      std::stable_sort(others.begin() + (others.empty() || others[0] != &candidates[0] ? 0 : 1),
                       others.end(), [](const Candidate* x, const Candidate* y) { return x->error < y->error; });
      int shown = 0, refused = 0;
      for (const Candidate* c : others) {
        if (shown++ >= 4) break;
        change.details.push_back(StrCat("also considered: ", c->description, ": ", c->error_text,
                                        c->accepted ? "" : StrCat(" [target refuses: ", c->refusal, "]")));
      }
      for (const Candidate& c : candidates) refused += !c.accepted && &c != &candidates[0];
      if (refused)
        change.details.push_back(StrCat(refused, " other split(s) refused by the target (window still too large)"));
      const int added = best->added;
      model = std::move(*best->model);
      result.changes.push_back(std::move(change));
      n += added;
    }
    if (result.changed()) GraphEditor(model).Compact();
    return result;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeAvgPoolSplitPass() { return std::make_unique<AvgPoolSplitPass>(); }

}  // namespace delegato::passes
