// resize-flags: RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR whose
// align_corners / half_pixel_centers the target refuses, rewritten to flags it
// takes. Candidates, most faithful first; the first one the target accepts wins:
//
//  1. identity: input size == output size is a copy under every flag setting
//     (positions are y * 1, or (y + 0.5) * 1 - 0.5): the node is removed.
//  2. exact geometry (bilinear, align_corners): align_corners samples
//     position y * (in - 1) / (out - 1). Without it the position is
//     y * in / out'. Choosing out' = in * (out - 1) / (in - 1) (when that is
//     an integer) gives the same scale, so resizing to out' and keeping the
//     first `out` rows and columns (STRIDED_SLICE) reproduces the original
//     bit for bit, provided the kernel's scale arithmetic for the dtype gives
//     the same number (float division for float32/uint8, 10-bit fixed point
//     for int8/int16): checked. A size-1 axis samples its only pixel
//     whatever the scale (exact for integer types).
//  3. flags flipped to the closest accepted setting; the numeric change of
//     the op is measured on random inputs and reported.
#include <cmath>

#include "core/error.h"
#include "passes/graph_edit.h"
#include "passes/measure.h"
#include "passes/passes.h"

namespace delegato::passes {
namespace {

float FloatScale(int32_t in, int32_t out, bool align_corners) {
  if (align_corners && out > 1) return static_cast<float>(in - 1) / static_cast<float>(out - 1);
  return static_cast<float>(in) / static_cast<float>(out);
}

int32_t FixedScale10(int32_t in, int32_t out, bool align_corners) {
  if (align_corners && out > 1) return ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
  return ((1 << 10) * in + out / 2) / out;
}

// The size out' that makes a non-aligned resize of `in` sample like an
// aligned resize to `out`; 0 when none exists or the dtype's arithmetic differs.
int32_t ExactAxisSize(int32_t in, int32_t out, DataType type) {
  if (in == out) return out;
  const bool integer = type != DataType::kFloat32;
  if (in == 1) return integer ? out : 0;
  if (out <= 1) return 0;
  const int64_t num = static_cast<int64_t>(in) * (out - 1);
  if (num % (in - 1) != 0) return 0;
  const int64_t wide = num / (in - 1);
  if (wide > (1 << 20)) return 0;
  const int32_t w = static_cast<int32_t>(wide);
  if (type == DataType::kInt8 || type == DataType::kInt16) {
    if (FixedScale10(in, w, false) != FixedScale10(in, out, true)) return 0;
  } else if (FloatScale(in, w, false) != FloatScale(in, out, true)) {
    return 0;
  }
  return w;
}

struct Geometry {
  int32_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  bool valid = false;
};

Geometry ReadGeometry(const GraphEditor& g, int n) {
  Geometry geo;
  const OperatorDef& op = g.graph().operators[n];
  if (op.inputs.empty() || op.outputs.empty() || op.inputs[0] < 0) return geo;
  const auto& in = g.tensor(op.inputs[0]).shape;
  const auto& out = g.tensor(op.outputs[0]).shape;
  if (in.size() != 4 || out.size() != 4) return geo;
  geo.in_h = in[1];
  geo.in_w = in[2];
  geo.out_h = out[1];
  geo.out_w = out[2];
  geo.valid = geo.in_h > 0 && geo.in_w > 0 && geo.out_h > 0 && geo.out_w > 0;
  return geo;
}

std::string Flags(const ResizeParams& p) {
  return StrCat("align_corners=", p.align_corners ? "true" : "false",
                " half_pixel_centers=", p.half_pixel_centers ? "true" : "false");
}

class ResizeFlagsPass : public Pass {
 public:
  std::string name() const override { return "resize-flags"; }
  std::string summary() const override {
    return "RESIZE_BILINEAR/NEAREST align_corners/half_pixel_centers -> what the target accepts "
           "(exact via a larger resize + crop when the geometry allows, else measured)";
  }
  std::vector<ReasonCode> reasons() const override {
    return {ReasonCode::kUnsupportedOperandValue, ReasonCode::kDriverRejected};
  }
  std::vector<BuiltinOp> ops() const override {
    return {BuiltinOp::kResizeBilinear, BuiltinOp::kResizeNearestNeighbor};
  }

  bool Addresses(const ModelDef& model, int node, const Reason& reason) const override {
    if (!Pass::Addresses(model, node, reason)) return false;
    const auto* p = std::get_if<ResizeParams>(&model.subgraphs[0].operators[node].params);
    return p && (p->align_corners || p->half_pixel_centers);
  }

  PassResult Run(ModelDef& model, const PassContext& ctx) const override {
    PassResult result;
    for (int n = 0; n < static_cast<int>(model.subgraphs[0].operators.size()); ++n) {
      GraphEditor g(model);
      const BuiltinOp code = g.code(n);
      if (code != BuiltinOp::kResizeBilinear && code != BuiltinOp::kResizeNearestNeighbor) continue;
      const ResizeParams* params = std::get_if<ResizeParams>(&g.op(n).params);
      const ResizeParams original = params ? *params : ResizeParams{};
      if (!original.align_corners && !original.half_pixel_centers) continue;
      if (ctx.target && ctx.Accepts(model, n)) continue;
      const Geometry geo = ReadGeometry(g, n);
      if (!geo.valid) {
        result.findings.push_back(StrCat(g.OpLabel(n), ": not a rank-4 resize with known sizes; left alone"));
        continue;
      }
      const std::string label = g.OpLabel(n);
      const bool bilinear = code == BuiltinOp::kResizeBilinear;

      // 1. identity
      {
        ModelDef candidate = model;
        GraphEditor c(candidate);
        const int in = c.op(n).inputs[0], out = c.op(n).outputs[0];
        if (geo.in_h == geo.out_h && geo.in_w == geo.out_w && !c.IsGraphOutput(out) &&
            SameQuantization(c.tensor(in), c.tensor(out))) {
          c.ReplaceUses(out, in);
          c.RemoveOp(n);
          model = std::move(candidate);
          Change change;
          change.exact = true;
          change.what = StrCat(label, ": ", geo.in_h, "x", geo.in_w, " -> ", geo.out_h, "x", geo.out_w,
                               " is a copy under any flags; node removed");
          result.changes.push_back(std::move(change));
          --n;
          continue;
        }
      }

      // 2. exact geometry: bilinear align_corners without half_pixel_centers
      const DataType type = g.tensor(g.op(n).inputs[0]).type;
      if (bilinear && original.align_corners && !original.half_pixel_centers) {
        const int32_t wide_h = ExactAxisSize(geo.in_h, geo.out_h, type);
        const int32_t wide_w = ExactAxisSize(geo.in_w, geo.out_w, type);
        if (wide_h > 0 && wide_w > 0) {
          ModelDef candidate = model;
          const int added = BuildCrop(candidate, n, wide_h, wide_w);
          bool accepted = true;
          for (int k = 0; k <= added; ++k) accepted = accepted && ctx.Accepts(candidate, n + k);
          if (accepted) {
            Change change;
            change.exact = true;
            if (added == 0) {
              change.what = StrCat(label, ": ", Flags(original), " -> align_corners=false: the same sample "
                                   "positions for ", geo.in_h, "x", geo.in_w, " -> ", geo.out_h, "x",
                                   geo.out_w, " (exact)");
            } else {
              change.what = StrCat(label, ": align_corners=true ", geo.in_h, "x", geo.in_w, " -> ",
                                   geo.out_h, "x", geo.out_w, " rewritten as align_corners=false ",
                                   geo.in_h, "x", geo.in_w, " -> ", wide_h, "x", wide_w,
                                   " + STRIDED_SLICE to ", geo.out_h, "x", geo.out_w,
                                   " (same sample positions: exact)");
              change.details.push_back(StrCat(
                  "cost: ", wide_h * wide_w - geo.out_h * geo.out_w, " more output pixels computed (+",
                  Percent(wide_h * wide_w, geo.out_h * geo.out_w), ") and one STRIDED_SLICE node"));
            }
            change.details.push_back(Verify(model, candidate, n, added, ctx.seed));
            model = std::move(candidate);
            result.changes.push_back(std::move(change));
            n += added;
            continue;
          }
        }
      }

      // 3. flags flipped: every accepted setting measured, the closest kept.
      std::vector<ResizeParams> settings = {{false, false}, {false, true}, {true, false}};
      std::string best_text;
      double best_error = INFINITY;
      std::unique_ptr<ModelDef> best;
      ResizeParams best_flags;
      std::vector<std::string> rejected;
      for (const ResizeParams& flags : settings) {
        if (flags.align_corners == original.align_corners &&
            flags.half_pixel_centers == original.half_pixel_centers)
          continue;
        if (!bilinear && flags.align_corners && flags.half_pixel_centers) continue;
        auto candidate = std::make_unique<ModelDef>(model);
        candidate->subgraphs[0].operators[n].params = flags;
        if (!ctx.Accepts(*candidate, n)) {
          rejected.push_back(Flags(flags));
          continue;
        }
        const Region a{&model, {n}, {model.subgraphs[0].operators[n].inputs[0]},
                       {model.subgraphs[0].operators[n].outputs[0]}, {}};
        const Region b{candidate.get(), {n}, a.inputs, a.outputs, {}};
        const OutputDiff d = CompareRegions(a, b, ctx.seed, 2)[0];
        if (d.mean_abs < best_error) {
          best_error = d.mean_abs;
          best_text = DescribeDiff(d);
          best = std::move(candidate);
          best_flags = flags;
        }
      }
      if (!best) {
        result.findings.push_back(StrCat(label, ": the target accepts none of the flag settings (",
                                         Join(rejected), "); left alone"));
        continue;
      }
      model = std::move(*best);
      Change change;
      change.what = StrCat(label, ": ", Flags(original), " -> ", Flags(best_flags), " (", geo.in_h, "x",
                           geo.in_w, " -> ", geo.out_h, "x", geo.out_w, ")");
      change.details.push_back(StrCat("numeric change of this op on random inputs: ", best_text));
      change.details.push_back(
          "sample positions move (up to one input pixel at the far edge); the whole-model cost is "
          "measured separately");
      result.changes.push_back(std::move(change));
    }
    if (result.changed()) GraphEditor(model).Compact();
    return result;
  }

 private:
  static std::string Percent(int64_t a, int64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.1f%%", 100.0 * static_cast<double>(a - b) / static_cast<double>(b));
    return buf;
  }
  static std::string Join(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
    return out;
  }

  // Rewrites node n of `model` to align_corners=false with output wide_h x
  // wide_w, followed by a STRIDED_SLICE back to the original size when that
  // differs. Returns the number of nodes added (0 or 1).
  static int BuildCrop(ModelDef& model, int n, int32_t wide_h, int32_t wide_w) {
    GraphEditor g(model);
    OperatorDef& op = g.op(n);
    op.params = ResizeParams{false, false};
    const int out = op.outputs[0];
    const TensorDef out_def = g.tensor(out);
    if (wide_h == out_def.shape[1] && wide_w == out_def.shape[2]) return 0;
    const int size = g.AddConstantOf<int32_t>(out_def.name + "/wide_size", DataType::kInt32, {2},
                                              {wide_h, wide_w});
    TensorDef wide = out_def;
    wide.name += "/wide";
    wide.shape = {out_def.shape[0], wide_h, wide_w, out_def.shape[3]};
    wide.shape_signature.clear();
    const int wide_index = g.AddTensor(wide);
    g.op(n).inputs[1] = size;
    g.op(n).outputs[0] = wide_index;
    const int begin = g.AddConstantOf<int32_t>(out_def.name + "/crop_begin", DataType::kInt32, {4},
                                               {0, 0, 0, 0});
    const int end = g.AddConstantOf<int32_t>(out_def.name + "/crop_end", DataType::kInt32, {4},
                                             {out_def.shape[0], out_def.shape[1], out_def.shape[2],
                                              out_def.shape[3]});
    const int strides = g.AddConstantOf<int32_t>(out_def.name + "/crop_strides", DataType::kInt32, {4},
                                                 {1, 1, 1, 1});
    g.InsertOp(n + 1, BuiltinOp::kStridedSlice, VersionFor(BuiltinOp::kStridedSlice, out_def.type),
               {wide_index, begin, end, strides}, {out}, StridedSliceParams{});
    return 1;
  }

  static std::string Verify(const ModelDef& before, const ModelDef& after, int n, int added,
                            uint64_t seed) {
    const auto& op = before.subgraphs[0].operators[n];
    const Region a{&before, {n}, {op.inputs[0]}, {op.outputs[0]}, {}};
    std::vector<int> nodes;
    for (int k = 0; k <= added; ++k) nodes.push_back(n + k);
    const auto& last = after.subgraphs[0].operators[n + added];
    const Region b{&after, nodes, {after.subgraphs[0].operators[n].inputs[0]}, {last.outputs[0]}, {}};
    const OutputDiff d = CompareRegions(a, b, seed, 2)[0];
    return StrCat("checked on random inputs: ", DescribeDiff(d));
  }
};

}  // namespace

std::unique_ptr<Pass> MakeResizeFlagsPass() { return std::make_unique<ResizeFlagsPass>(); }

}  // namespace delegato::passes
