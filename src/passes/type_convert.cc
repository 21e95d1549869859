// Quantized type conversions:
//
// int8-to-uint8: every int8 activation becomes uint8 with zero point + 128
// and the same scale (the real values are unchanged: q + 128 - (zp + 128)).
// Constant int8 operands of converted ops shift the same way (exact). The
// uint8 kernels of TFLite take per-tensor uint8 weights, so per-channel int8
// weights of CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED are requantized to
// one asymmetric uint8 scale over the whole tensor and their int32 biases to
// input_scale * new_weight_scale; the weight error is reported per layer.
// QUANTIZE nodes that become identities are removed. Model inputs and
// outputs keep their types (a QUANTIZE at the boundary converts exactly)
// unless the model's own types are asked for.
//
// uint8-to-int8: the reverse (zero point - 128) for int8-only targets; uint8
// weights (asymmetric, per tensor) become symmetric int8, per output channel
// for convolutions, per tensor for FULLY_CONNECTED.
//
// per-tensor-weights: per-channel int8 weights (and per-channel constants
// behind DEQUANTIZE) requantized to one symmetric int8 scale, for targets
// that only take per-tensor quantization.
#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <map>
#include <set>

#include "core/error.h"
#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace delegato::passes {
namespace {

// Which input slot of an op holds weights / bias, and the weights' channel axis.
struct WeightSlots {
  int weights = -1, bias = -1, channel_axis = 0;
};

WeightSlots SlotsOf(BuiltinOp op) {
  switch (op) {
    case BuiltinOp::kConv2d: return {1, 2, 0};
    case BuiltinOp::kDepthwiseConv2d: return {1, 2, 3};
    case BuiltinOp::kFullyConnected: return {1, 2, 0};
    default: return {};
  }
}


// Ops TFLite runs on uint8 activations (what int8-to-uint8 may hand them).
bool HasUint8Kernel(BuiltinOp op) {
  switch (op) {
    case BuiltinOp::kAdd: case BuiltinOp::kSub: case BuiltinOp::kMul: case BuiltinOp::kDiv:
    case BuiltinOp::kConv2d: case BuiltinOp::kDepthwiseConv2d: case BuiltinOp::kFullyConnected:
    case BuiltinOp::kTransposeConv: case BuiltinOp::kAveragePool2d: case BuiltinOp::kMaxPool2d:
    case BuiltinOp::kConcatenation: case BuiltinOp::kReshape: case BuiltinOp::kSqueeze:
    case BuiltinOp::kExpandDims: case BuiltinOp::kSoftmax: case BuiltinOp::kLogistic: case BuiltinOp::kTanh:
    case BuiltinOp::kRelu: case BuiltinOp::kRelu6: case BuiltinOp::kReluN1To1: case BuiltinOp::kHardSwish:
    case BuiltinOp::kLeakyRelu: case BuiltinOp::kResizeBilinear: case BuiltinOp::kResizeNearestNeighbor:
    case BuiltinOp::kMean: case BuiltinOp::kSum: case BuiltinOp::kReduceMax: case BuiltinOp::kReduceMin:
    case BuiltinOp::kPad: case BuiltinOp::kPadv2: case BuiltinOp::kTranspose: case BuiltinOp::kStridedSlice:
    case BuiltinOp::kSlice: case BuiltinOp::kGather: case BuiltinOp::kGatherNd: case BuiltinOp::kSplit:
    case BuiltinOp::kSplitV: case BuiltinOp::kPack: case BuiltinOp::kUnpack: case BuiltinOp::kArgMax:
    case BuiltinOp::kArgMin: case BuiltinOp::kQuantize: case BuiltinOp::kDequantize: case BuiltinOp::kMaximum:
    case BuiltinOp::kMinimum: case BuiltinOp::kDepthToSpace: case BuiltinOp::kSpaceToDepth:
    case BuiltinOp::kBatchToSpaceNd: case BuiltinOp::kSpaceToBatchNd: case BuiltinOp::kTile:
    case BuiltinOp::kL2Normalization: case BuiltinOp::kCast:
      return true;
    default:
      return false;
  }
}

// Real weight values (scale * (q - zp), per channel when per-axis).
template <class T>
std::vector<double> RealWeights(const GraphEditor& g, int t) {
  const TensorDef& def = g.tensor(t);
  const std::vector<T> q = g.Values<T>(t);
  const Quantization& quant = def.quantization;
  std::vector<double> out(q.size());
  const int rank = static_cast<int>(def.shape.size());
  int64_t inner = 1, channels = 1;
  if (quant.per_axis() && quant.quantized_dimension < rank) {
    channels = def.shape[quant.quantized_dimension];
    for (int d = quant.quantized_dimension + 1; d < rank; ++d) inner *= def.shape[d];
  }
  for (size_t i = 0; i < q.size(); ++i) {
    const size_t c = quant.per_axis() ? static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels) : 0;
    const double scale = quant.scale[std::min(c, quant.scale.size() - 1)];
    const double zp = quant.zero_point.empty() ? 0.0
                                               : static_cast<double>(quant.zero_point[std::min(c, quant.zero_point.size() - 1)]);
    out[i] = scale * (static_cast<double>(q[i]) - zp);
  }
  return out;
}

// Per-channel extents of a weight tensor along `axis`.
struct ChannelView {
  int64_t channels = 1, inner = 1;
  size_t ChannelOf(size_t i) const { return static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels); }
};

ChannelView ViewOf(const TensorDef& def, int axis) {
  ChannelView v;
  const int rank = static_cast<int>(def.shape.size());
  if (axis < 0 || axis >= rank) return v;
  v.channels = def.shape[axis];
  for (int d = axis + 1; d < rank; ++d) v.inner *= def.shape[d];
  return v;
}

std::string Fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

// Error summary of a weight requantization.
std::string WeightErrorText(const std::vector<double>& before, const std::vector<double>& after,
                            const ChannelView& view) {
  double max_abs = 0, max_err = 0, sum_sq = 0, sum_err_sq = 0;
  std::vector<double> channel_max(view.channels, 0.0), channel_err(view.channels, 0.0);
  for (size_t i = 0; i < before.size(); ++i) {
    const double e = std::fabs(after[i] - before[i]);
    max_abs = std::max(max_abs, std::fabs(before[i]));
    max_err = std::max(max_err, e);
    sum_sq += before[i] * before[i];
    sum_err_sq += e * e;
    const size_t c = view.ChannelOf(i);
    channel_max[c] = std::max(channel_max[c], std::fabs(before[i]));
    channel_err[c] = std::max(channel_err[c], e);
  }
  double worst = 0;
  size_t worst_channel = 0;
  for (size_t c = 0; c < channel_max.size(); ++c) {
    const double rel = channel_max[c] > 0 ? channel_err[c] / channel_max[c] : 0;
    if (rel > worst) {
      worst = rel;
      worst_channel = c;
    }
  }
  const double snr = sum_err_sq > 0 ? 10 * std::log10(sum_sq / sum_err_sq) : INFINITY;
  return StrCat("weight error max ", Fmt(max_err), " (", Fmt(100 * max_err / std::max(max_abs, 1e-30)),
                "% of the largest weight), SNR ", std::isinf(snr) ? "inf" : Fmt(snr), " dB; worst channel ",
                worst_channel, ": error up to ", Fmt(100 * worst), "% of its own largest weight");
}

// Per-channel spread: "32 scales from 0.0012 to 0.031 (26x)".
std::string ScaleSpread(const Quantization& q) {
  if (q.scale.empty()) return "no scale";
  const auto [lo, hi] = std::minmax_element(q.scale.begin(), q.scale.end());
  return StrCat(q.scale.size(), " scale(s) from ", Fmt(*lo), " to ", Fmt(*hi), " (",
                Fmt(*lo > 0 ? *hi / *lo : INFINITY), "x)");
}


// Requantizes an int32 bias to per-channel scales input_scale * weight_scale[c].
void RequantizeBias(GraphEditor& g, int bias, float input_scale, const std::vector<float>& weight_scales,
                    int32_t quantized_dimension) {
  if (bias < 0 || !g.IsConstant(bias) || g.tensor(bias).type != DataType::kInt32) return;
  const TensorDef& def = g.tensor(bias);
  const std::vector<int32_t> q = g.Values<int32_t>(bias);
  const Quantization old = def.quantization;
  std::vector<int32_t> out(q.size());
  std::vector<float> scales;
  for (float s : weight_scales) scales.push_back(input_scale * s);
  for (size_t i = 0; i < q.size(); ++i) {
    const double old_scale = old.scale.empty() ? 0.0 : old.scale[std::min(i, old.scale.size() - 1)];
    const double real = old_scale * q[i];
    const double s = scales[std::min(i, scales.size() - 1)];
    const double v = s > 0 ? std::round(real / s) : 0.0;
    out[i] = static_cast<int32_t>(std::clamp(v, -2147483648.0, 2147483647.0));
  }
  g.SetValues(bias, out);
  Quantization& nq = g.tensor(bias).quantization;
  nq.scale = scales;
  nq.zero_point.assign(scales.size(), 0);
  nq.quantized_dimension = quantized_dimension;
}


// ------------------------------------------------------------ channel groups
//
// One scale per weight tensor is what breaks per-tensor MobileNet-style
// models: a depthwise layer's channels span scales hundreds of times apart,
// so small channels keep a few levels (or none). In an inverted-residual
// block P (CONV_2D) -> D (DEPTHWISE_CONV_2D) -> Q (CONV_2D), where P's output
// only feeds D and D's only feeds Q, the C middle channels may be reordered
// freely (P's output rows, D's channels, Q's input columns). Sorting them by
// scale and cutting them into G groups of similar scales, each group becomes
// P_g -> D_g with its own per-tensor scale, and a CONCATENATION feeds Q. In
// int8 this is exact (the same per-channel arithmetic); the requantization
// that follows loses only what a group's scale spread costs.

// Copies constant `t` keeping `channels` (in that order) along `axis`.
int SliceConstant(GraphEditor& g, int t, int axis, const std::vector<int>& channels, const std::string& suffix) {
  const TensorDef def = g.tensor(t);
  const std::span<const uint8_t> data = g.Data(t);
  const std::vector<uint8_t> bytes(data.begin(), data.end());
  const size_t elem = DataTypeSize(def.type);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= def.shape[d];
  for (int d = axis + 1; d < static_cast<int>(def.shape.size()); ++d) inner *= def.shape[d];
  const int64_t c_total = def.shape[axis];
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(outer) * channels.size() * inner * elem);
  for (int64_t o = 0; o < outer; ++o)
    for (int c : channels) {
      const size_t begin = static_cast<size_t>((o * c_total + c) * inner) * elem;
      out.insert(out.end(), bytes.begin() + begin, bytes.begin() + begin + static_cast<size_t>(inner) * elem);
    }
  std::vector<int32_t> shape = def.shape;
  shape[axis] = static_cast<int32_t>(channels.size());
  Quantization q = def.quantization;
  if (q.per_axis() && q.quantized_dimension == axis) {
    Quantization sub;
    sub.quantized_dimension = axis;
    for (int c : channels) {
      sub.scale.push_back(q.scale[c]);
      if (!q.zero_point.empty()) sub.zero_point.push_back(q.zero_point[std::min<size_t>(c, q.zero_point.size() - 1)]);
    }
    q = sub;
  }
  return g.AddConstant(def.name + suffix, def.type, shape, std::move(out), q);
}

// Cuts channels (sorted by the first scale list) into groups whose live
// channels stay within `ratio` of each other in every list.
std::vector<std::vector<int>> GroupBySimilarScale(const std::vector<std::vector<float>>& scales, double ratio) {
  const size_t n = scales[0].size();
  std::vector<float> top(scales.size(), 0.0f);
  for (size_t k = 0; k < scales.size(); ++k)
    for (float s : scales[k]) top[k] = std::max(top[k], s);
  auto live = [&](size_t k, int c) { return scales[k][c] > top[k] * 1e-3f; };
  std::vector<int> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return scales[0][a] < scales[0][b]; });
  std::vector<std::vector<int>> groups;
  std::vector<float> lo(scales.size()), hi(scales.size());
  for (int c : order) {
    bool fits = !groups.empty();
    if (fits)
      for (size_t k = 0; k < scales.size(); ++k) {
        if (!live(k, c) || hi[k] == 0) continue;
        const float new_lo = std::min(lo[k], scales[k][c]), new_hi = std::max(hi[k], scales[k][c]);
        if (new_hi > ratio * new_lo) fits = false;
      }
    if (!fits) {
      groups.emplace_back();
      std::fill(lo.begin(), lo.end(), 0.0f);
      std::fill(hi.begin(), hi.end(), 0.0f);
    }
    groups.back().push_back(c);
    for (size_t k = 0; k < scales.size(); ++k) {
      if (!live(k, c)) continue;
      lo[k] = hi[k] == 0 ? scales[k][c] : std::min(lo[k], scales[k][c]);
      hi[k] = std::max(hi[k], scales[k][c]);
    }
  }
  return groups;
}

double LiveSpread(const std::vector<float>& scales) {
  float top = 0;
  for (float s : scales) top = std::max(top, s);
  float lo = top;
  for (float s : scales)
    if (s > top * 1e-3f) lo = std::min(lo, s);
  return lo > 0 ? top / lo : 1.0;
}


// Splits every P -> D -> Q block whose per-channel scales spread more than
// the group ratio. Returns the number of blocks split.
int SplitChannelGroups(ModelDef& model, double group_ratio, int max_groups, PassResult* result) {
  int blocks = 0;
  for (int d = 0; d < static_cast<int>(model.subgraphs[0].operators.size()); ++d) {
    GraphEditor g(model);
    if (g.code(d) != BuiltinOp::kDepthwiseConv2d) continue;
    OperatorDef& dop = g.op(d);
    if (dop.inputs.size() < 3 || dop.inputs[0] < 0 || dop.inputs[1] < 0 || dop.inputs[2] < 0 || dop.outputs.empty())
      continue;
    const int d_in = dop.inputs[0], d_w = dop.inputs[1], d_b = dop.inputs[2], d_out = dop.outputs[0];
    if (g.tensor(d_in).type != DataType::kInt8 || g.tensor(d_w).type != DataType::kInt8 ||
        !g.tensor(d_w).quantization.per_axis() || g.tensor(d_w).shape.size() != 4)
      continue;
    const int p = g.Producer(d_in);
    const auto d_consumers = g.Consumers(d_out);
    const auto p_consumers = g.Consumers(d_in);
    if (p < 0 || g.code(p) != BuiltinOp::kConv2d || p_consumers.size() != 1 || d_consumers.size() != 1 ||
        g.IsGraphOutput(d_in) || g.IsGraphOutput(d_out))
      continue;
    const int q = d_consumers[0].first;
    if (g.code(q) != BuiltinOp::kConv2d || d_consumers[0].second != 0) continue;
    if (g.op(q).inputs.size() < 2 || g.op(q).inputs[1] < 0 || !g.IsConstant(g.op(q).inputs[1])) continue;
    OperatorDef& pop = g.op(p);
    if (pop.inputs.size() < 3 || pop.inputs[1] < 0 || pop.inputs[2] < 0 || !g.IsConstant(pop.inputs[1]) ||
        !g.IsConstant(pop.inputs[2]) || !g.IsConstant(dop.inputs[1]) || !g.IsConstant(dop.inputs[2]))
      continue;
    const int p_w = pop.inputs[1], p_b = pop.inputs[2];
    const int q_w = g.op(q).inputs[1];
    const int channels = g.tensor(d_w).shape[3];
    if (!g.tensor(p_w).quantization.per_axis() || g.tensor(p_w).shape[0] != channels ||
        g.tensor(d_in).shape.size() != 4 || g.tensor(d_in).shape[3] != channels ||
        g.tensor(q_w).shape.size() != 4 || g.tensor(q_w).shape[3] != channels ||
        static_cast<int>(g.tensor(p_w).quantization.scale.size()) != channels ||
        static_cast<int>(g.tensor(d_w).quantization.scale.size()) != channels)
      continue;
    const std::vector<float> d_scales = g.tensor(d_w).quantization.scale;
    const std::vector<float> p_scales = g.tensor(p_w).quantization.scale;
    if (LiveSpread(d_scales) <= group_ratio && LiveSpread(p_scales) <= group_ratio) continue;
    std::vector<std::vector<int>> groups;
    for (double ratio = group_ratio;; ratio *= 1.25) {
      groups = GroupBySimilarScale({d_scales, p_scales}, ratio);
      if (static_cast<int>(groups.size()) <= max_groups) break;
    }
    if (groups.size() < 2) continue;

    const std::string d_label = g.OpLabel(d), p_label = g.OpLabel(p);
    std::vector<int> order;
    for (const auto& grp : groups) order.insert(order.end(), grp.begin(), grp.end());
    // Q reads the middle channels in the new order.
    const int q_w_new = SliceConstant(g, q_w, 3, order, "");
    g.op(q).inputs[1] = q_w_new;

    const OperatorDef p_copy = g.op(p), d_copy = g.op(d);
    const TensorDef mid_def = g.tensor(d_in), out_def = g.tensor(d_out);
    std::vector<int32_t> concat_inputs;
    std::vector<std::pair<OperatorDef, int>> new_ops;  // built below, inserted at p
    for (size_t k = 0; k < groups.size(); ++k) {
      const auto& grp = groups[k];
      const std::string suffix = StrCat("/group", k);
      const int pw = SliceConstant(g, p_w, 0, grp, suffix);
      const int pb = SliceConstant(g, p_b, 0, grp, suffix);
      const int dw = SliceConstant(g, d_w, 3, grp, suffix);
      const int db = SliceConstant(g, d_b, 0, grp, suffix);
      TensorDef mid = mid_def;
      mid.name += suffix;
      mid.shape[3] = static_cast<int32_t>(grp.size());
      mid.shape_signature.clear();
      TensorDef out = out_def;
      out.name += suffix;
      out.shape[3] = static_cast<int32_t>(grp.size());
      out.shape_signature.clear();
      const int mid_t = g.AddTensor(mid), out_t = g.AddTensor(out);
      OperatorDef pk = p_copy;
      pk.inputs = {p_copy.inputs[0], pw, pb};
      pk.outputs = {mid_t};
      OperatorDef dk = d_copy;
      dk.inputs = {mid_t, dw, db};
      dk.outputs = {out_t};
      if (auto* dp = std::get_if<DepthwiseConv2DParams>(&dk.params)) dp->depth_multiplier = 1;
      new_ops.emplace_back(std::move(pk), 0);
      new_ops.emplace_back(std::move(dk), 0);
      concat_inputs.push_back(out_t);
    }
    // Replace P and D (D first: it comes after P) by the groups and a CONCATENATION.
    g.RemoveOp(d);
    g.RemoveOp(p);
    int at = p;
    for (auto& [op, unused] : new_ops) g.graph().operators.insert(g.graph().operators.begin() + at++, std::move(op));
    g.InsertOp(at, BuiltinOp::kConcatenation, 2, concat_inputs, {d_out}, ConcatenationParams{3, Activation::kNone});

    Change change;
    change.exact = true;
    std::string sizes;
    for (const auto& grp : groups) sizes += StrCat(sizes.empty() ? "" : "+", grp.size());
    change.what = StrCat(p_label, " -> ", d_label, ": ", channels, " middle channels (scale spread ",
                         Fmt(LiveSpread(p_scales)), "x / ", Fmt(LiveSpread(d_scales)), "x) reordered by scale and split into ",
                         groups.size(), " groups (", sizes, ") of similar scales, joined by a CONCATENATION; the next "
                         "CONV_2D reads them in the new order");
    change.details.push_back(StrCat("exact in int8 (same per-channel arithmetic); lets one per-tensor scale per group "
                                    "replace the per-channel scales; cost: ", 2 * groups.size() + 1 - 2, " more nodes"));
    result->changes.push_back(std::move(change));
    ++blocks;
    d = at;  // continue after the CONCATENATION
  }
  return blocks;
}


// Any other CONV_2D whose output channels spread: the channels sorted by
// scale and cut into groups, one CONV_2D per group on the same input, a
// CONCATENATION, and a GATHER putting the channels back in their order
// (exact in int8).
int SplitOutputGroups(ModelDef& model, double ratio_limit, int max_groups, PassResult* result) {
  int convs = 0;
  for (int n = 0; n < static_cast<int>(model.subgraphs[0].operators.size()); ++n) {
    GraphEditor g(model);
    if (g.code(n) != BuiltinOp::kConv2d) continue;
    const OperatorDef& op = g.op(n);
    if (op.inputs.size() < 3 || op.inputs[2] < 0) continue;
    if (op.inputs[0] < 0 || op.inputs[1] < 0 || op.outputs.empty() || !g.IsConstant(op.inputs[1]) ||
        !g.IsConstant(op.inputs[2]))
      continue;
    const int in = op.inputs[0], w = op.inputs[1], b = op.inputs[2], out = op.outputs[0];
    if (g.tensor(in).type != DataType::kInt8 || g.tensor(w).type != DataType::kInt8 ||
        !g.tensor(w).quantization.per_axis() || g.tensor(out).shape.size() != 4)
      continue;
    const std::vector<float> scales = g.tensor(w).quantization.scale;
    const int channels = g.tensor(w).shape[0];
    if (static_cast<int>(scales.size()) != channels || g.tensor(out).shape[3] != channels) continue;
    if (LiveSpread(scales) <= ratio_limit) continue;
    // Expansions feeding a depthwise layer are the blocks' business (grouped with it, or not at all).
    const auto readers = g.Consumers(out);
    if (readers.size() == 1 && g.code(readers[0].first) == BuiltinOp::kDepthwiseConv2d) continue;
    std::vector<std::vector<int>> groups;
    for (double ratio = ratio_limit;; ratio *= 1.25) {
      groups = GroupBySimilarScale({scales}, ratio);
      if (static_cast<int>(groups.size()) <= max_groups) break;
    }
    if (groups.size() < 2) continue;
    const std::string label = g.OpLabel(n);
    const OperatorDef copy = g.op(n);
    const TensorDef out_def = g.tensor(out);
    std::vector<int32_t> parts, order, inverse(channels);
    std::vector<OperatorDef> ops;
    for (size_t k = 0; k < groups.size(); ++k) {
      const std::string suffix = StrCat("/group", k);
      TensorDef part = out_def;
      part.name += suffix;
      part.shape[3] = static_cast<int32_t>(groups[k].size());
      part.shape_signature.clear();
      const int part_t = g.AddTensor(part);
      OperatorDef ok = copy;
      ok.inputs = {in, SliceConstant(g, w, 0, groups[k], suffix), SliceConstant(g, b, 0, groups[k], suffix)};
      ok.outputs = {part_t};
      ops.push_back(std::move(ok));
      parts.push_back(part_t);
      order.insert(order.end(), groups[k].begin(), groups[k].end());
    }
    for (int j = 0; j < channels; ++j) inverse[order[j]] = j;
    TensorDef joined = out_def;
    joined.name += "/grouped";
    joined.shape_signature.clear();
    const int joined_t = g.AddTensor(joined);
    const int positions = g.AddConstantOf<int32_t>(out_def.name + "/channel_order", DataType::kInt32, {channels}, inverse);
    g.RemoveOp(n);
    int at = n;
    for (auto& o : ops) g.graph().operators.insert(g.graph().operators.begin() + at++, std::move(o));
    g.InsertOp(at++, BuiltinOp::kConcatenation, 2, parts, {joined_t}, ConcatenationParams{3, Activation::kNone});
    g.InsertOp(at, BuiltinOp::kGather, 2, {joined_t, positions}, {out}, GatherParams{3, 0});
    Change change;
    change.exact = true;
    std::string sizes;
    for (const auto& grp : groups) sizes += StrCat(sizes.empty() ? "" : "+", grp.size());
    change.what = StrCat(label, ": ", channels, " output channels (scale spread ", Fmt(LiveSpread(scales)),
                         "x) split into ", groups.size(), " groups (", sizes, ") of similar scales, joined by a "
                         "CONCATENATION and a GATHER restoring the channel order");
    change.details.push_back(StrCat("exact in int8; cost: ", groups.size() + 1, " more nodes"));
    result->changes.push_back(std::move(change));
    ++convs;
    n = at;
  }
  return convs;
}

// QUANTIZE nodes whose input and output have the same type and parameters
// copy their input: removed, with the graph's tensor names kept.
void RemoveIdentityQuantizesImpl(ModelDef& model, PassResult* result) {
  GraphEditor g(model);
  for (int n = 0; n < g.num_ops(); ++n) {
    if (g.code(n) != BuiltinOp::kQuantize) continue;
    if (g.op(n).inputs.size() != 1 || g.op(n).outputs.size() != 1 || g.op(n).inputs[0] < 0) continue;
    const int in = g.op(n).inputs[0], out = g.op(n).outputs[0];
    if (!SameQuantization(g.tensor(in), g.tensor(out))) continue;
    const std::string label = g.OpLabel(n);
    const bool in_is_input = g.IsGraphInput(in) || g.IsConstant(in);
    const bool out_is_output = g.IsGraphOutput(out);
    if (out_is_output && in_is_input) continue;  // the model would have no node left to produce it
    if (out_is_output) {
      // The producer of `in` writes the graph output directly.
      const int producer = g.Producer(in);
      if (producer < 0 || g.IsGraphOutput(in)) continue;
      for (int32_t& t : g.op(producer).outputs)
        if (t == in) t = out;
      g.ReplaceUses(in, out);
    } else {
      g.ReplaceUses(out, in);
    }
    g.RemoveOp(n);
    Change change;
    change.exact = true;
    change.what = StrCat(label, ": QUANTIZE between identical types and parameters (",
                         TypeName(g.tensor(out_is_output ? out : in).type), " scale ",
                         Fmt(ScaleOf(g.tensor(out_is_output ? out : in))), " zero point ",
                         ZeroPointOf(g.tensor(out_is_output ? out : in)), ") is a copy: removed");
    result->changes.push_back(std::move(change));
    --n;
  }
}

class TypeConvertPass : public Pass {
 public:
  TypeConvertPass(DataType from, DataType to) : from_(from), to_(to) {}
  std::string name() const override {
    return from_ == DataType::kInt8 ? "int8-to-uint8" : "uint8-to-int8";
  }
  std::string summary() const override {
    return from_ == DataType::kInt8
               ? "int8 activations -> uint8 (zero point + 128, same scale); per-channel int8 weights -> "
                 "per-tensor uint8 (error per layer); identity QUANTIZE removed; I/O types kept"
               : "uint8 activations -> int8 (zero point - 128); uint8 weights -> symmetric int8 (per "
                 "channel for convolutions; error per layer); identity QUANTIZE removed; I/O types kept";
  }
  std::vector<ReasonCode> reasons() const override {
    return {ReasonCode::kUnsupportedInputType, ReasonCode::kUnsupportedOutputType,
            ReasonCode::kUnsupportedQuantization, ReasonCode::kDriverRejected};
  }
  std::vector<BuiltinOp> ops() const override { return {}; }

  bool Addresses(const ModelDef& model, int node, const Reason& reason) const override {
    if (!Pass::Addresses(model, node, reason)) return false;
    // The node must touch an activation of the type to convert, and the
    // reason must be about types (the message names the dtype).
    const auto& g = model.subgraphs[0];
    const auto& op = g.operators[node];
    bool touches = false;
    for (const auto* list : {&op.inputs, &op.outputs})
      for (int32_t t : *list)
        if (t >= 0 && g.tensors[t].type == from_ &&
            (g.tensors[t].buffer == 0 || model.buffers[g.tensors[t].buffer].empty()))
          touches = true;
    if (from_ == DataType::kUInt8) {
      // Only for uint8 models: a model with int8 activations is not turned back.
      for (size_t t = 0; t < g.tensors.size(); ++t)
        if (g.tensors[t].type == DataType::kInt8 &&
            (g.tensors[t].buffer == 0 || model.buffers[g.tensors[t].buffer].empty()))
          return false;
    }
    const std::string type = TypeName(from_);
    return touches && (reason.message.find(type) != std::string::npos ||
                       reason.message.find(from_ == DataType::kInt8 ? "SIGNED" : "ASYMM") != std::string::npos);
  }

  PassResult Run(ModelDef& model, const PassContext& ctx) const override {
    PassResult result;
    const int delta = to_ == DataType::kUInt8 ? 128 : -128;
    // Ops to convert: those with an activation of type `from`.
    std::vector<bool> converted_op;
    std::vector<int> activations;
    auto collect = [&] {
      GraphEditor e(model);
      activations.clear();
      converted_op.assign(e.num_ops(), false);
      for (int t = 0; t < static_cast<int>(e.graph().tensors.size()); ++t)
        if (e.tensor(t).type == from_ && !e.IsConstant(t)) activations.push_back(t);
      std::set<int> activation_set(activations.begin(), activations.end());
      for (int n = 0; n < e.num_ops(); ++n)
        for (const auto* list : {&e.op(n).inputs, &e.op(n).outputs})
          for (int32_t t : *list)
            if (t >= 0 && activation_set.count(t)) converted_op[n] = true;
    };
    collect();
    if (activations.empty()) {
      result.findings.push_back(StrCat("no ", TypeName(from_), " activations; nothing to convert"));
      return result;
    }
    // Every op touching a converted tensor must have a uint8 kernel (and a
    // QUANTIZE from int16 cannot produce uint8): otherwise the model is left alone.
    if (to_ == DataType::kUInt8) {
      GraphEditor e(model);
      std::vector<std::string> blockers;
      for (int n = 0; n < e.num_ops(); ++n) {
        if (!converted_op[n]) continue;
        const BuiltinOp code = e.code(n);
        bool ok = HasUint8Kernel(code);
        if (code == BuiltinOp::kQuantize && !e.op(n).inputs.empty() && e.op(n).inputs[0] >= 0 &&
            e.tensor(e.op(n).inputs[0]).type == DataType::kInt16)
          ok = false;
        if (!ok && blockers.size() < 5) blockers.push_back(e.OpLabel(n));
      }
      if (!blockers.empty()) {
        std::string list;
        for (const auto& b : blockers) list += (list.empty() ? "" : ", ") + b;
        result.findings.push_back(StrCat("not converted: TFLite has no uint8 kernel for ", list,
                                         "; the model is left in int8"));
        return result;
      }
    }
    // Per-channel weights going per-tensor: first give similar scales their own tensors.
    if (from_ == DataType::kInt8 && ctx.max_groups > 1) {
      if (ctx.block_group_ratio > 1) SplitChannelGroups(model, ctx.block_group_ratio, ctx.max_groups, &result);
      if (ctx.output_group_ratio > 1) SplitOutputGroups(model, ctx.output_group_ratio, ctx.max_groups, &result);
      collect();
    }
    GraphEditor g(model);
    const int n_tensors = static_cast<int>(g.graph().tensors.size());

    // Original I/O, to restore the user's types afterwards.
    const SubgraphDef original_graph = g.graph();

    // Weights and biases of converted convolutions.
    std::set<int> handled;
    int requantized_layers = 0;
    for (int n = 0; n < g.num_ops(); ++n) {
      if (!converted_op[n]) continue;
      const WeightSlots slots = SlotsOf(g.code(n));
      if (slots.weights < 0 || static_cast<int>(g.op(n).inputs.size()) <= slots.weights) continue;
      const int w = g.op(n).inputs[slots.weights];
      if (w < 0 || g.op(n).inputs[0] < 0 || !g.IsConstant(w) || g.tensor(w).type != from_ || handled.count(w)) continue;
      handled.insert(w);
      const int bias = static_cast<int>(g.op(n).inputs.size()) > slots.bias ? g.op(n).inputs[slots.bias] : -1;
      const float in_scale = ScaleOf(g.tensor(g.op(n).inputs[0]));
      Change change = ConvertWeights(g, n, w, bias, in_scale, slots);
      if (!change.exact) ++requantized_layers;
      result.changes.push_back(std::move(change));
      if (bias >= 0) handled.insert(bias);
    }

    // Other constants of converted ops: shifted (exact).
    int shifted_constants = 0;
    for (int t = 0; t < n_tensors; ++t) {
      if (handled.count(t) || g.tensor(t).type != from_ || !g.IsConstant(t)) continue;
      const auto consumers = g.Consumers(t);
      if (consumers.empty()) continue;
      bool all_converted = true;
      for (auto [node, slot] : consumers) all_converted = all_converted && converted_op[node];
      if (!all_converted) continue;
      ShiftConstant(g, t, delta);
      ++shifted_constants;
    }

    // Activations.
    for (int t : activations) {
      TensorDef& def = g.tensor(t);
      def.type = to_;
      for (int64_t& zp : def.quantization.zero_point) zp += delta;
    }
    // Versions of converted convolutions when going to int8.
    if (to_ == DataType::kInt8) {
      for (int n = 0; n < g.num_ops(); ++n) {
        if (!converted_op[n]) continue;
        const BuiltinOp code = g.code(n);
        const int current = g.model().operator_codes[g.op(n).opcode_index].version;
        // Per-channel int8 weights need these versions; other ops keep theirs.
        int wanted = current;
        if (code == BuiltinOp::kConv2d || code == BuiltinOp::kDepthwiseConv2d) wanted = std::max(current, 3);
        if (code == BuiltinOp::kFullyConnected) wanted = std::max(current, 4);
        if (wanted != current) g.op(n).opcode_index = g.Opcode(code, wanted);
      }
    }

    {
      Change change;
      change.exact = true;
      change.what = StrCat(activations.size(), " ", TypeName(from_), " activation tensors -> ", TypeName(to_),
                           " (zero point ", delta > 0 ? "+" : "", delta, ", same scale: the same real values)");
      if (shifted_constants)
        change.details.push_back(StrCat(shifted_constants, " constant operand(s) shifted the same way (exact)"));
      change.details.push_back(StrCat(requantized_layers, " weight tensor(s) requantized (see each layer)"));
      change.details.push_back(StrCat(
          "kernels: ", TypeName(to_), " and ", TypeName(from_),
          " versions of some ops round differently (average pooling, bilinear resize, logistic); "
          "the whole-model cost is measured separately"));
      result.changes.insert(result.changes.begin(), std::move(change));
    }

    RemoveIdentityQuantizesImpl(model, &result);
    RestoreIoTypes(model, original_graph, ctx, &result);
    GraphEditor(model).Compact();
    return result;
  }

 private:
  Change ConvertWeights(GraphEditor& g, int n, int w, int bias, float in_scale, const WeightSlots& slots) const {
    const std::string label = g.OpLabel(n);
    TensorDef& def = g.tensor(w);
    Change change;
    const Quantization before_q = def.quantization;
    if (from_ == DataType::kInt8 && !before_q.per_axis()) {
      // Per-tensor int8 weights: the same shift as activations is exact.
      ShiftConstant(g, w, 128);
      change.exact = true;
      change.what = StrCat(label, ": weights \"", ShortName(def.name), "\" per-tensor int8 -> uint8 (zero point + 128, exact)");
      return change;
    }
    const std::vector<double> real = from_ == DataType::kInt8 ? RealWeights<int8_t>(g, w) : RealWeights<uint8_t>(g, w);
    const ChannelView view = ViewOf(def, slots.channel_axis);
    std::vector<double> after(real.size());
    std::vector<float> new_scales;
    if (to_ == DataType::kUInt8) {
      double lo = 0, hi = 0;
      for (double v : real) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      const double scale = hi > lo ? (hi - lo) / 255.0 : 1.0;
      const int64_t zp = std::clamp<int64_t>(static_cast<int64_t>(std::round(-lo / scale)), 0, 255);
      const float fscale = static_cast<float>(scale);
      std::vector<uint8_t> q(real.size());
      for (size_t i = 0; i < real.size(); ++i) {
        const double v = std::clamp(std::round(real[i] / fscale) + static_cast<double>(zp), 0.0, 255.0);
        q[i] = static_cast<uint8_t>(v);
        after[i] = fscale * (v - static_cast<double>(zp));
      }
      g.SetValues(w, q);
      TensorDef& d = g.tensor(w);
      d.type = DataType::kUInt8;
      d.quantization.scale = {fscale};
      d.quantization.zero_point = {zp};
      d.quantization.quantized_dimension = 0;
      new_scales = {fscale};
      change.what = StrCat(label, ": weights \"", ShortName(d.name), "\" int8 per-channel (", ScaleSpread(before_q),
                           ") -> uint8 per-tensor scale ", Fmt(fscale), " zero point ", zp);
      RequantizeBias(g, bias, in_scale, new_scales, 0);
    } else {
      // Symmetric int8: per output channel for convolutions, per tensor for FC.
      const bool per_channel = g.code(n) != BuiltinOp::kFullyConnected;
      const ChannelView cv = per_channel ? view : ChannelView{};
      std::vector<double> channel_max(cv.channels, 0.0);
      for (size_t i = 0; i < real.size(); ++i)
        channel_max[cv.ChannelOf(i)] = std::max(channel_max[cv.ChannelOf(i)], std::fabs(real[i]));
      for (double m : channel_max) new_scales.push_back(m > 0 ? static_cast<float>(m / 127.0) : 1.0f);
      std::vector<int8_t> q(real.size());
      for (size_t i = 0; i < real.size(); ++i) {
        const float s = new_scales[cv.ChannelOf(i)];
        const double v = std::clamp(std::round(real[i] / s), -127.0, 127.0);
        q[i] = static_cast<int8_t>(v);
        after[i] = s * v;
      }
      g.SetValues(w, q);
      TensorDef& d = g.tensor(w);
      d.type = DataType::kInt8;
      d.quantization.scale = new_scales;
      d.quantization.zero_point.assign(new_scales.size(), 0);
      d.quantization.quantized_dimension = per_channel ? slots.channel_axis : 0;
      change.what = StrCat(label, ": weights \"", ShortName(d.name), "\" uint8 per-tensor (scale ", Fmt(before_q.scale.empty() ? 0 : before_q.scale[0]),
                           " zero point ", before_q.zero_point.empty() ? 0 : before_q.zero_point[0], ") -> int8 symmetric ",
                           per_channel ? StrCat("per-channel (", ScaleSpread(d.quantization), ")") : "per-tensor");
      RequantizeBias(g, bias, in_scale, new_scales, 0);
    }
    change.details.push_back(WeightErrorText(real, after, view));
    if (bias >= 0) change.details.push_back(StrCat("bias \"", ShortName(g.tensor(bias).name), "\" requantized to input_scale * new weight scale"));
    return change;
  }

  void ShiftConstant(GraphEditor& g, int t, int delta) const {
    TensorDef& def = g.tensor(t);
    if (from_ == DataType::kInt8) {
      std::vector<int8_t> q = g.Values<int8_t>(t);
      std::vector<uint8_t> out(q.size());
      for (size_t i = 0; i < q.size(); ++i) out[i] = static_cast<uint8_t>(q[i] + 128);
      g.SetValues(t, out);
    } else {
      std::vector<uint8_t> q = g.Values<uint8_t>(t);
      std::vector<int8_t> out(q.size());
      for (size_t i = 0; i < q.size(); ++i) out[i] = static_cast<int8_t>(static_cast<int>(q[i]) - 128);
      g.SetValues(t, out);
    }
    TensorDef& d = g.tensor(t);
    d.type = to_;
    for (int64_t& zp : d.quantization.zero_point) zp += delta;
    (void)def;
  }

  // Puts back the user's input/output types with exact boundary QUANTIZE nodes.
  void RestoreIoTypes(ModelDef& model, const SubgraphDef& original, const PassContext& ctx,
                      PassResult* result) const {
    GraphEditor g(model);
    for (size_t i = 0; i < g.graph().inputs.size() && i < original.inputs.size(); ++i) {
      const int t = g.graph().inputs[i];
      const TensorDef& user = original.tensors[original.inputs[i]];
      if (g.tensor(t).type == user.type) continue;
      if (ctx.io_types == IoTypes::kModel) {
        Change c;
        c.changes_interface = true;
        c.exact = true;
        c.what = StrCat("MODEL INPUT \"", user.name, "\" CHANGES TYPE: ", TypeName(user.type), " -> ",
                        TypeName(g.tensor(t).type), " (zero point ", ZeroPointOf(user), " -> ",
                        ZeroPointOf(g.tensor(t)), "; --io_types=model)");
        result->changes.push_back(std::move(c));
        continue;
      }
      TensorDef outer = user;
      outer.shape_signature = g.tensor(t).shape_signature;
      g.tensor(t).name += StrCat("/", TypeName(g.tensor(t).type));
      const int outer_index = g.AddTensor(outer);
      g.graph().inputs[i] = outer_index;
      RetargetSignature(model, t, outer_index, true);
      g.InsertOp(0, BuiltinOp::kQuantize, 2, {outer_index}, {t}, EmptyParams{});
      Change c;
      c.exact = true;
      c.what = StrCat("model input \"", user.name, "\" keeps type ", TypeName(user.type),
                      ": a QUANTIZE ", TypeName(user.type), " -> ", TypeName(g.tensor(t).type),
                      " added at the start (exact: same scale, zero point shifted)");
      result->changes.push_back(std::move(c));
    }
    for (size_t i = 0; i < g.graph().outputs.size() && i < original.outputs.size(); ++i) {
      const int t = g.graph().outputs[i];
      const TensorDef& user = original.tensors[original.outputs[i]];
      if (g.tensor(t).type == user.type) continue;
      if (ctx.io_types == IoTypes::kModel) {
        Change c;
        c.changes_interface = true;
        c.exact = true;
        c.what = StrCat("MODEL OUTPUT \"", user.name, "\" CHANGES TYPE: ", TypeName(user.type), " -> ",
                        TypeName(g.tensor(t).type), " (zero point ", ZeroPointOf(user), " -> ",
                        ZeroPointOf(g.tensor(t)), "; --io_types=model)");
        result->changes.push_back(std::move(c));
        continue;
      }
      TensorDef outer = user;
      outer.shape_signature = g.tensor(t).shape_signature;
      g.tensor(t).name += StrCat("/", TypeName(g.tensor(t).type));
      const int outer_index = g.AddTensor(outer);
      g.graph().outputs[i] = outer_index;
      RetargetSignature(model, t, outer_index, false);
      g.InsertOp(g.num_ops(), BuiltinOp::kQuantize, 2, {t}, {outer_index}, EmptyParams{});
      Change c;
      c.exact = true;
      c.what = StrCat("model output \"", user.name, "\" keeps type ", TypeName(user.type),
                      ": a QUANTIZE ", TypeName(g.tensor(t).type), " -> ", TypeName(user.type),
                      " added at the end (exact)");
      result->changes.push_back(std::move(c));
    }
  }

  static void RetargetSignature(ModelDef& model, int from, int to, bool inputs) {
    for (SignatureDefinition& sig : model.signature_defs) {
      if (sig.subgraph_index != 0) continue;
      for (SignatureTensor& s : inputs ? sig.inputs : sig.outputs)
        if (s.tensor_index == static_cast<uint32_t>(from)) s.tensor_index = static_cast<uint32_t>(to);
    }
  }

  DataType from_, to_;
};

// per-tensor-weights: per-channel int8 constants -> per-tensor symmetric int8.
class PerTensorWeightsPass : public Pass {
 public:
  std::string name() const override { return "per-tensor-weights"; }
  std::string summary() const override {
    return "per-channel int8 weights (and per-channel constants behind DEQUANTIZE) -> one symmetric "
           "int8 scale per tensor; error per layer";
  }
  std::vector<ReasonCode> reasons() const override { return {ReasonCode::kUnsupportedQuantization}; }
  std::vector<BuiltinOp> ops() const override { return {}; }
  bool Addresses(const ModelDef& model, int node, const Reason& reason) const override {
    return Pass::Addresses(model, node, reason) &&
           (reason.message.find("per-channel") != std::string::npos ||
            reason.message.find("per-axis") != std::string::npos ||
            reason.message.find("per_axis") != std::string::npos);
  }

  PassResult Run(ModelDef& model, const PassContext& ctx) const override {
    PassResult result;
    GraphEditor g(model);
    std::set<int> done;
    for (int n = 0; n < g.num_ops(); ++n) {
      const BuiltinOp code = g.code(n);
      WeightSlots slots = SlotsOf(code);
      if (code == BuiltinOp::kDequantize) slots = {0, -1, 0};
      if (slots.weights < 0 || static_cast<int>(g.op(n).inputs.size()) <= slots.weights) continue;
      const int w = g.op(n).inputs[slots.weights];
      if (w < 0 || g.op(n).inputs[0] < 0 || done.count(w) || !g.IsConstant(w) || g.tensor(w).type != DataType::kInt8 ||
          !g.tensor(w).quantization.per_axis())
        continue;
      if (ctx.target && ctx.Accepts(model, n)) continue;
      done.insert(w);
      const std::vector<double> real = RealWeights<int8_t>(g, w);
      const ChannelView view = ViewOf(g.tensor(w), g.tensor(w).quantization.quantized_dimension);
      const Quantization before = g.tensor(w).quantization;
      double m = 0;
      for (double v : real) m = std::max(m, std::fabs(v));
      const float scale = m > 0 ? static_cast<float>(m / 127.0) : 1.0f;
      std::vector<int8_t> q(real.size());
      std::vector<double> after(real.size());
      for (size_t i = 0; i < real.size(); ++i) {
        const double v = std::clamp(std::round(real[i] / scale), -127.0, 127.0);
        q[i] = static_cast<int8_t>(v);
        after[i] = scale * v;
      }
      g.SetValues(w, q);
      Quantization& nq = g.tensor(w).quantization;
      nq.scale = {scale};
      nq.zero_point = {0};
      nq.quantized_dimension = 0;
      Change change;
      change.what = StrCat(g.OpLabel(n), ": \"", ShortName(g.tensor(w).name), "\" int8 per-channel (", ScaleSpread(before),
                           ") -> per-tensor scale ", Fmt(scale));
      change.details.push_back(WeightErrorText(real, after, view));
      const int bias = slots.bias >= 0 && static_cast<int>(g.op(n).inputs.size()) > slots.bias ? g.op(n).inputs[slots.bias] : -1;
      if (bias >= 0) {
        RequantizeBias(g, bias, ScaleOf(g.tensor(g.op(n).inputs[0])), {scale}, 0);
        change.details.push_back(StrCat("bias \"", ShortName(g.tensor(bias).name), "\" requantized to one scale"));
      }
      result.changes.push_back(std::move(change));
    }
    return result;
  }
};

}  // namespace

void RemoveIdentityQuantizes(ModelDef& model, PassResult* result) { RemoveIdentityQuantizesImpl(model, result); }

std::unique_ptr<Pass> MakeInt8ToUint8Pass() {
  return std::make_unique<TypeConvertPass>(DataType::kInt8, DataType::kUInt8);
}
std::unique_ptr<Pass> MakeUint8ToInt8Pass() {
  return std::make_unique<TypeConvertPass>(DataType::kUInt8, DataType::kInt8);
}
std::unique_ptr<Pass> MakePerTensorWeightsPass() { return std::make_unique<PerTensorWeightsPass>(); }

}  // namespace delegato::passes
