#include "tools/cost.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cctype>
#include <cmath>
#include <limits>
#include <variant>
#include <set>

namespace delegato::tools {
namespace {

double Elements(const TensorDef& t) {
  double n = 1;
  for (int32_t d : t.shape) n *= std::max(d, 0);
  return n;
}

double ElementBytes(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kBool: return 1;
    case DataType::kInt16:
    case DataType::kFloat16: return 2;
    case DataType::kInt64:
    case DataType::kFloat64: return 8;
    default: return 4;
  }
}

bool IsConstant(const ModelDef& model, const TensorDef& t) {
  return t.buffer != 0 && t.buffer < model.buffers.size() && !model.buffers[t.buffer].data.empty();
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void Add(std::vector<std::string>& list, const std::string& what) {
  if (std::find(list.begin(), list.end(), what) == list.end()) list.push_back(what);
}

void AddAll(std::vector<std::string>& list, const std::vector<std::string>& more) {
  for (const auto& m : more) Add(list, m);
}

// The number for `key` in `table`, else the `fallback` key's, else the first.
const CostNumber* Lookup(const CostTable& table, const std::string& key, const std::string& fallback = "") {
  for (const auto& [name, number] : table)
    if (name == key) return &number;
  if (!fallback.empty())
    for (const auto& [name, number] : table)
      if (name == fallback) return &number;
  return table.empty() ? nullptr : &table.front().second;
}

// A number used by an estimate: its value, and its name when it is a placeholder.
double Use(const CostNumber& n, const std::string& name, std::vector<std::string>& placeholders) {
  if (n.placeholder) Add(placeholders, name);
  return n.value;
}

// Efficiency of an op class: the table's entry, 1 when the class is not listed.
double Efficiency(const CostTable& table, const std::string& op_class, const std::string& prefix,
                  std::vector<std::string>& placeholders) {
  for (const auto& [name, number] : table)
    if (name == op_class) return Use(number, prefix + "op_class_efficiency." + name, placeholders);
  return 1;
}

}  // namespace

std::string NodeOpClass(const ModelDef& model, int node) {
  const SubgraphDef& graph = model.subgraphs[0];
  const OperatorDef& op = graph.operators[node];
  switch (model.operator_codes[op.opcode_index].builtin) {
    case BuiltinOp::kConv2d: {
      if (op.inputs.size() < 2 || op.inputs[1] < 0) return "conv_kxk";
      const auto& shape = graph.tensors[op.inputs[1]].shape;  // [out, kh, kw, in]
      return shape.size() == 4 && shape[1] == 1 && shape[2] == 1 ? "conv_1x1" : "conv_kxk";
    }
    case BuiltinOp::kTransposeConv:
    case BuiltinOp::kConv3d: return "conv_kxk";
    case BuiltinOp::kDepthwiseConv2d: return "depthwise";
    case BuiltinOp::kFullyConnected:
    case BuiltinOp::kBatchMatmul: return "fully_connected";
    case BuiltinOp::kAdd: case BuiltinOp::kSub: case BuiltinOp::kMul: case BuiltinOp::kDiv:
    case BuiltinOp::kMaximum: case BuiltinOp::kMinimum: case BuiltinOp::kRelu: case BuiltinOp::kRelu6:
    case BuiltinOp::kReluN1To1: case BuiltinOp::kLogistic: case BuiltinOp::kTanh: case BuiltinOp::kHardSwish:
    case BuiltinOp::kLeakyRelu: case BuiltinOp::kPrelu: case BuiltinOp::kQuantize: case BuiltinOp::kDequantize:
    case BuiltinOp::kSoftmax: case BuiltinOp::kSquaredDifference: case BuiltinOp::kAbs: case BuiltinOp::kExp:
    case BuiltinOp::kRsqrt: case BuiltinOp::kSqrt: case BuiltinOp::kLog: case BuiltinOp::kCast:
      return "elementwise";
    case BuiltinOp::kAveragePool2d: case BuiltinOp::kMaxPool2d: case BuiltinOp::kL2Pool2d: case BuiltinOp::kMean:
    case BuiltinOp::kResizeBilinear: case BuiltinOp::kResizeNearestNeighbor: case BuiltinOp::kSum:
    case BuiltinOp::kReduceMax: case BuiltinOp::kArgMax: case BuiltinOp::kArgMin:
      return "pooling_resize";
    case BuiltinOp::kReshape: case BuiltinOp::kSqueeze: case BuiltinOp::kExpandDims:
    case BuiltinOp::kConcatenation: case BuiltinOp::kPad: case BuiltinOp::kPadv2: case BuiltinOp::kTranspose:
    case BuiltinOp::kStridedSlice: case BuiltinOp::kSlice: case BuiltinOp::kSplit: case BuiltinOp::kSplitV:
    case BuiltinOp::kGather: case BuiltinOp::kPack: case BuiltinOp::kUnpack: case BuiltinOp::kSpaceToDepth:
    case BuiltinOp::kDepthToSpace: case BuiltinOp::kTile:
      return "data_movement";
    default: return "other";
  }
}

NodeWork NodeWorkOf(const ModelDef& model, int node) {
  const SubgraphDef& graph = model.subgraphs[0];
  const OperatorDef& op = graph.operators[node];
  NodeWork w;
  w.op_class = NodeOpClass(model, node);
  for (int32_t t : op.inputs) {
    if (t < 0) continue;
    const TensorDef& def = graph.tensors[t];
    const double bytes = Elements(def) * ElementBytes(def.type);
    if (IsConstant(model, def)) {
      w.weight_bytes += bytes;
    } else {
      w.activation_bytes += bytes;
      if (w.dtype.empty()) w.dtype = Lower(DataTypeName(def.type));
    }
  }
  for (int32_t t : op.outputs) {
    if (t < 0) continue;
    const TensorDef& def = graph.tensors[t];
    w.activation_bytes += Elements(def) * ElementBytes(def.type);
    if (w.dtype.empty()) w.dtype = Lower(DataTypeName(def.type));
  }
  if (w.dtype.empty()) w.dtype = "float32";
  if (op.outputs.empty() || op.outputs[0] < 0) return w;
  const double out = Elements(graph.tensors[op.outputs[0]]);
  auto filter_dim = [&](int i) {
    if (op.inputs.size() < 2 || op.inputs[1] < 0) return 1.0;
    const auto& shape = graph.tensors[op.inputs[1]].shape;
    return i < static_cast<int>(shape.size()) ? static_cast<double>(shape[i]) : 1.0;
  };
  switch (model.operator_codes[op.opcode_index].builtin) {
    case BuiltinOp::kConv2d: w.ops = 2 * out * filter_dim(1) * filter_dim(2) * filter_dim(3); break;
    case BuiltinOp::kDepthwiseConv2d: w.ops = 2 * out * filter_dim(1) * filter_dim(2); break;
    case BuiltinOp::kFullyConnected: w.ops = 2 * out * filter_dim(1); break;
    case BuiltinOp::kArgMax: case BuiltinOp::kArgMin: case BuiltinOp::kMean: case BuiltinOp::kSum:
    case BuiltinOp::kReduceMax:
      // Reductions read every input element once.
      w.ops = op.inputs.empty() || op.inputs[0] < 0 ? out : Elements(graph.tensors[op.inputs[0]]);
      break;
    default: w.ops = out;
  }
  return w;
}

namespace {

// [N, H, W, C] of a tensor: leading 1s for lower ranks, leading dims folded into N.
std::array<double, 4> Shape4(const TensorDef& t) {
  std::array<double, 4> s = {1, 1, 1, 1};
  const int rank = static_cast<int>(t.shape.size());
  for (int i = 0; i < rank; ++i) {
    const double d = std::max(t.shape[i], 1);
    const int slot = 4 - rank + i;
    if (slot <= 0) s[0] *= d; else s[slot] = d;
  }
  return s;
}

double CeilDiv(double a, double b) { return std::ceil(a / b); }

Activation FusedActivation(const OperatorDef& op) {
  return std::visit([](const auto& p) -> Activation {
    if constexpr (requires { p.activation; }) return p.activation; else return Activation::kNone;
  }, op.params);
}

}  // namespace

namespace {

// A per-channel scale and shift: node `mul` is a MUL by a constant of at most
// the output's depth whose output feeds only an ADD of such a constant.
// Returns the ADD's index, else -1.
int ChannelScaleShiftAdd(const ModelDef& model, int mul) {
  const SubgraphDef& graph = model.subgraphs[0];
  auto op_kind = [&](int i) { return model.operator_codes[graph.operators[i].opcode_index].builtin; };
  auto per_channel_operand = [&](int i) {
    const OperatorDef& op = graph.operators[i];
    if (op.inputs.size() != 2 || op.outputs.empty() || op.outputs[0] < 0) return false;
    const double depth = Shape4(graph.tensors[op.outputs[0]])[3];
    for (int32_t t : op.inputs)
      if (t >= 0 && IsConstant(model, graph.tensors[t]) && Elements(graph.tensors[t]) > 1 &&
          Elements(graph.tensors[t]) <= depth)
        return true;
    return false;
  };
  if (op_kind(mul) != BuiltinOp::kMul || !per_channel_operand(mul)) return -1;
  const int32_t out = graph.operators[mul].outputs[0];
  int consumer = -1;
  for (int i = 0; i < static_cast<int>(graph.operators.size()); ++i)
    for (int32_t t : graph.operators[i].inputs)
      if (t == out) {
        if (consumer >= 0 && consumer != i) return -1;
        consumer = i;
      }
  for (int32_t t : graph.outputs)
    if (t == out) return -1;
  if (consumer < 0 || op_kind(consumer) != BuiltinOp::kAdd || !per_channel_operand(consumer)) return -1;
  return consumer;
}

}  // namespace

// The formulas follow Vela's performance model (ethos-u-vela 5.2,
// ethosu/vela/npu_performance.py, _estimate_conv_cycles and
// _estimate_output_cycles_per_element) at the level of one whole operation
// instead of one block: the MAC array works on output micro-blocks
// (ublock_h x ublock_w x ublock_d outputs), 4 cycles per micro-block and
// kernel step; the output unit writes each element at a per-op rate. Memory
// cycles are bytes over each port's bytes per cycle; an operation takes the
// largest of its compute and memory cycles (Vela's per-layer `Op Cycles`).
EthosUCycles EthosUNodeCycles(const ModelDef& model, int node, const EthosUConstants& npu) {
  const SubgraphDef& graph = model.subgraphs[0];
  const OperatorDef& op = graph.operators[node];
  const BuiltinOp kind = model.operator_codes[op.opcode_index].builtin;
  EthosUCycles c;
  if (op.outputs.empty() || op.outputs[0] < 0 || op.inputs.empty() || op.inputs[0] < 0) return c;
  const TensorDef& ofm = graph.tensors[op.outputs[0]];
  const TensorDef& ifm = graph.tensors[op.inputs[0]];
  const std::array<double, 4> out = Shape4(ofm), in = Shape4(ifm);
  const double out_elements = out[0] * out[1] * out[2] * out[3];
  const bool wide = ElementBytes(ifm.type) >= 2;  // 16-bit IFMs take two passes of the 8-bit datapath

  // Memory traffic: non-constant tensors on the feature-map port(s), constant
  // ones (encoded weights, biases) streamed from the off-chip port.
  double fm_sram = 0, fm_off_chip = 0, weights = 0;
  auto off_chip = [&](const TensorDef& t) {
    return npu.feature_maps_off_chip && Elements(t) * ElementBytes(t.type) > npu.sram_cache_bytes;
  };
  auto add_feature_map = [&](const TensorDef& t) {
    (off_chip(t) ? fm_off_chip : fm_sram) += Elements(t) * ElementBytes(t.type);
  };
  // Each operation waits once for its IFM's memory to answer a read and its
  // OFM's to accept a write: 64 cycles in SRAM, 750 in the U65/U85's DRAM
  // (vela.ini). Vela's per-layer cycles for DeepLab's ARG_MAX show it: each of
  // its 65792 max poolings takes 506 cycles on ethos-u55-256 (SRAM) and 1228
  // on ethos-u65-256 (the 5.5 MB map in DRAM), 722 more for 686 of latency.
  c.latency = (off_chip(ifm) ? npu.off_chip_read_latency : npu.sram_read_latency) +
              (off_chip(ofm) ? npu.off_chip_write_latency : npu.sram_write_latency);
  for (int32_t t : op.inputs) {
    if (t < 0) continue;
    if (IsConstant(model, graph.tensors[t])) weights += Elements(graph.tensors[t]) * ElementBytes(graph.tensors[t].type);
    else add_feature_map(graph.tensors[t]);
  }
  for (int32_t t : op.outputs)
    if (t >= 0) add_feature_map(graph.tensors[t]);

  const double ublocks_xy = out[0] * CeilDiv(out[1], npu.ublock_h) * CeilDiv(out[2], npu.ublock_w);
  const double ublocks_z = CeilDiv(out[3], npu.ublock_d);
  // Vela's cycles_wb: a micro-block's weights take 32 * ublock_d / 8 cycles to load.
  const double weight_load = 32 * npu.ublock_d / 8;
  const Activation act = FusedActivation(op);
  double activation_cycles = act == Activation::kNone ? 0 : act == Activation::kTanh ? npu.activation_cycles_lut
                                                                                      : npu.activation_cycles_relu;
  auto output_unit = [&](double per_element) { return out_elements * std::max(per_element, activation_cycles); };
  // Kernel steps of an h x w kernel split into Vela's 8x8 sub-kernels (sub_kernel_limits).
  auto sub_kernels = [&](double kh, double kw, auto&& per_sub_kernel) {
    double steps = 0;
    for (double y = 0; y < kh; y += 8)
      for (double x = 0; x < kw; x += 8) steps += per_sub_kernel(std::min(8.0, kh - y) * std::min(8.0, kw - x));
    return steps;
  };
  auto filter = [&](int axis) {
    if (op.inputs.size() < 2 || op.inputs[1] < 0) return 1.0;
    const auto& s = graph.tensors[op.inputs[1]].shape;
    return axis < static_cast<int>(s.size()) ? std::max<double>(s[axis], 1) : 1.0;
  };
  const double acc_cycles = wide ? npu.output_cycles_mul : npu.output_cycles;  // 40-bit accumulators for 16-bit

  switch (kind) {
    case BuiltinOp::kConv2d: {
      // Depth-first: every kernel element over ifm_block_depth channels per
      // step; part-kernel-first: 4 kernel elements (2 when 16-bit) over 8
      // channels. Vela's block search keeps the cheaper; small IFM depths
      // (an RGB input) make the depth-first order waste most of the array.
      const double ic = in[3];
      const double depth_first = sub_kernels(filter(1), filter(2), [&](double k) { return k; }) *
                                 CeilDiv(ic, npu.ifm_block_depth) * (wide ? 2 : 1);
      const double part_kernel = sub_kernels(filter(1), filter(2), [&](double k) { return CeilDiv(k, wide ? 2 : 4); }) *
                                 CeilDiv(ic, 8);
      c.npu = std::max(ublocks_z * std::max(weight_load, 4 * ublocks_xy) * std::min(depth_first, part_kernel),
                       output_unit(acc_cycles));
      c.unit = EthosUCycles::Unit::kMacArray;
      break;
    }
    case BuiltinOp::kDepthwiseConv2d: {
      const double steps = sub_kernels(filter(1), filter(2), [&](double k) { return CeilDiv(k, 4); });
      c.npu = std::max(ublocks_z * std::max(weight_load, 4 * ublocks_xy * (wide ? 2 : 1)) * steps,
                       output_unit(acc_cycles));
      break;
    }
    case BuiltinOp::kFullyConnected:
    case BuiltinOp::kBatchMatmul: {
      // A vector product: one output row per "pixel", the IFM depth is the
      // filter's (FULLY_CONNECTED) or the left operand's last dimension.
      const double rows = std::max(1.0, out_elements / std::max(out[3], 1.0));
      const double ublocks = CeilDiv(rows, npu.ublock_h * npu.ublock_w);
      const double ic = kind == BuiltinOp::kFullyConnected ? filter(1) : in[3];
      c.npu = std::max(ublocks_z * std::max(weight_load, 4 * ublocks) * CeilDiv(ic, npu.ifm_block_depth) * (wide ? 2 : 1),
                       output_unit(acc_cycles));
      c.unit = EthosUCycles::Unit::kMacArray;
      break;
    }
    case BuiltinOp::kAveragePool2d:
    case BuiltinOp::kMaxPool2d: {
      const auto* pool = std::get_if<Pool2DParams>(&op.params);
      const double kh = pool ? pool->filter_h : 1, kw = pool ? pool->filter_w : 1;
      const double steps = sub_kernels(kh, kw, [](double k) { return std::max(4.0, k); });
      c.npu = std::max(ublocks_xy * ublocks_z * steps * (wide ? 2 : 1),
                       output_unit(kind == BuiltinOp::kMaxPool2d ? npu.output_cycles_max_pool : npu.output_cycles));
      break;
    }
    case BuiltinOp::kResizeBilinear:
    case BuiltinOp::kResizeNearestNeighbor: {
      // Vela upscales with one depthwise convolution per output phase (2x2
      // phases for a 2x upscale) writing a strided output, plus memory copies
      // of the input's edges. Its per-layer cycles show about 6 output-unit
      // cycles per output element for the phases together (a 16x16x8 ->
      // 32x32x8 resize: 4 passes of 3201 cycles on ethos-u55-256).
      c.npu = 6 * output_unit(npu.output_cycles) * (wide ? 2 : 1);
      c.operations = 4;
      break;
    }
    case BuiltinOp::kMean:
    case BuiltinOp::kSum: {
      // Vela turns a spatial mean into a depthwise convolution whose kernel
      // covers the reduced area (its per-layer CSV lists MEAN as
      // DepthwiseConv2D): priced as one.
      const double kh = in[1] / std::max(1.0, out[1]), kw = in[2] / std::max(1.0, out[2]);
      const double steps = sub_kernels(kh, kw, [](double k) { return CeilDiv(k, 4); });
      c.npu = std::max(ublocks_z * std::max(weight_load, 4 * ublocks_xy * (wide ? 2 : 1)) * steps,
                       output_unit(npu.output_cycles));
      break;
    }
    case BuiltinOp::kReshape:
    case BuiltinOp::kSqueeze:
    case BuiltinOp::kExpandDims:
    case BuiltinOp::kPad:
    case BuiltinOp::kPadv2:
      // Memory-only reshapes are removed; a PAD becomes the next
      // convolution's padding. Neither is an NPU operation.
      return EthosUCycles{0, 0, 0, 0};
    case BuiltinOp::kAdd:
    case BuiltinOp::kSub:
      c.npu = output_unit(npu.output_cycles_add_sub);
      c.unit = EthosUCycles::Unit::kElementwise;
      c.operations = 0;  // elementwise passes carry no fixed cost in Vela's per-layer cycles
      break;
    case BuiltinOp::kMul:
      c.npu = output_unit(npu.output_cycles_mul);
      c.unit = EthosUCycles::Unit::kElementwise;
      c.operations = 0;  // elementwise passes carry no fixed cost in Vela's per-layer cycles
      break;
    case BuiltinOp::kMaximum:
    case BuiltinOp::kMinimum:
      c.npu = output_unit(npu.output_cycles_max_pool);
      c.unit = EthosUCycles::Unit::kElementwise;
      c.operations = 0;  // elementwise passes carry no fixed cost in Vela's per-layer cycles
      break;
    case BuiltinOp::kLogistic:
    case BuiltinOp::kTanh:
    case BuiltinOp::kHardSwish:
    case BuiltinOp::kLeakyRelu:
      // Table lookups: the activation unit's LUT rate.
      activation_cycles = npu.activation_cycles_lut;
      c.npu = output_unit(npu.output_cycles);
      c.unit = EthosUCycles::Unit::kElementwise;
      c.operations = 0;  // elementwise passes carry no fixed cost in Vela's per-layer cycles
      break;
    case BuiltinOp::kSoftmax:
      // Vela's int8 softmax is a sequence of about 30 elementwise and
      // reduction operations (ethosu/vela/softmax.py), most over the whole
      // tensor; Vela's per-layer cycles for them show no per-operation cost.
      c.npu = 30 * output_unit(npu.output_cycles);
      c.unit = EthosUCycles::Unit::kElementwise;
      c.operations = 0;  // elementwise passes carry no fixed cost in Vela's per-layer cycles
      fm_sram *= 10;
      break;
    case BuiltinOp::kArgMax:
    case BuiltinOp::kArgMin:
      if (npu.arg_max_cycles_per_element > 0) {
        // The U85 runs ARG_MAX itself, in operations of at most 65536 output
        // positions (Vela's per-layer CSV of DeepLab on ethos-u85-256: 4 of
        // 5507784 cycles for 65536 x 21 input elements, 84 per position).
        c.operations = CeilDiv(out_elements, 65536);
        c.npu = npu.arg_max_cycles_per_element * in[0] * in[1] * in[2] * in[3];
        break;
      }
      // Rewritten into one max pooling per 4 output positions over the depth.
      c.operations = CeilDiv(out_elements, 4);
      c.npu = in[0] * in[1] * in[2] * CeilDiv(in[3], npu.ublock_d) * 4;
      break;
    case BuiltinOp::kUnidirectionalSequenceLstm: {
      // Unrolled per time step into the gates' 8 fully connected layers (input
      // and recurrent weights, read again every step) and ~20 elementwise ops.
      const double steps = in[2] > 1 ? in[2] : in[1];
      const double units = out[3];
      // Only the fully connected layers count as operations of their own: the
      // elementwise ones are short (20-50 cycles each in Vela's per-layer CSV).
      c.operations = steps * 8;
      c.npu = steps * (CeilDiv(4 * units, npu.ublock_d) * weight_load *
                           (CeilDiv(in[3], npu.ifm_block_depth) + CeilDiv(units, npu.ublock_d)) +
                       20 * units * npu.output_cycles_add_sub);
      weights *= steps;
      break;
    }
    case BuiltinOp::kConcatenation:
    case BuiltinOp::kSplit:
    case BuiltinOp::kSplitV:
    case BuiltinOp::kUnpack:
    case BuiltinOp::kPack: {
      // One memory copy per joined input or split output (Vela's per-layer
      // CSV lists a MemoryCopy for each).
      c.npu = output_unit(npu.output_cycles);
      c.unit = EthosUCycles::Unit::kElementwise;
      const bool joins = kind == BuiltinOp::kConcatenation || kind == BuiltinOp::kPack;
      c.operations = 0;
      for (int32_t t : joins ? op.inputs : op.outputs)
        if (t >= 0 && !(joins && IsConstant(model, graph.tensors[t]))) c.operations += 1;
      break;
    }
    default:
      // Copies (slices, transposes), requantization and the
      // other unary ops: one pass of the output unit.
      c.npu = output_unit(npu.output_cycles);
      c.unit = EthosUCycles::Unit::kElementwise;
      break;
  }
  // A constant operand broadcast over the output's positions (a per-channel
  // scale or shift) is fetched again for every output position, in 16-channel
  // bricks, from where the constants live: on the U55 the flash makes such an
  // ADD/MUL memory-bound (Vela's per-layer cycles: about 16 cycles per
  // position for 16 channels). Vela counts the operand's read as one element
  // per OFM element (npu_performance.py, ifm_read[1]) scaled by the port's
  // burst efficiency: an 8-bit brick row fills the 128-byte bursts of the
  // flash / DRAM port, a 16-bit brick (32 bytes) uses a quarter of one, so
  // 16-bit operands cost 4 times their bytes (densenet_small_int16x8 on
  // ethos-u55-256: 73728 flash cycles for a 24x24x16 MUL, 18432 bytes).
  const bool binary = kind == BuiltinOp::kAdd || kind == BuiltinOp::kSub || kind == BuiltinOp::kMul ||
                      kind == BuiltinOp::kMaximum || kind == BuiltinOp::kMinimum;
  // The U85 fuses a per-channel scale and shift (Vela's per-layer CSV of
  // densenet_small_int8 / int16x8 on ethos-u85-256: each batch
  // normalisation's ADD takes 0 cycles, its MUL reads 12-264 bytes of DRAM,
  // the constants once): the MUL's pass does both, the ADD is free.
  bool fused_scale_shift = false;
  if (npu.fuses_channel_scale_shift && kind == BuiltinOp::kAdd) {
    for (int i = 0; i < static_cast<int>(graph.operators.size()); ++i)
      if (ChannelScaleShiftAdd(model, i) == node) return EthosUCycles{0, 0, 0, 0};
  }
  if (npu.fuses_channel_scale_shift && ChannelScaleShiftAdd(model, node) >= 0) {
    fused_scale_shift = true;
    const OperatorDef& add = graph.operators[ChannelScaleShiftAdd(model, node)];
    for (int32_t t : add.inputs)
      if (t >= 0 && IsConstant(model, graph.tensors[t])) weights += Elements(graph.tensors[t]) * ElementBytes(graph.tensors[t].type);
  }
  if (binary && !fused_scale_shift && op.inputs.size() >= 2) {
    for (size_t k = 0; k < 2; ++k) {
      if (op.inputs[k] < 0) continue;
      const TensorDef& operand = graph.tensors[op.inputs[k]];
      const double elements = Elements(operand);
      if (!IsConstant(model, operand) || elements <= 1 || elements > out[3]) continue;
      const double positions = out_elements / std::max(out[3], 1.0);
      const double element_bytes = ElementBytes(operand.type);
      const double burst_waste = element_bytes >= 2 ? 4 : 1;
      weights += positions * CeilDiv(elements, 16) * 16 * element_bytes * burst_waste;
    }
  }
  c.sram = fm_sram / npu.sram_bytes_per_cycle;
  c.off_chip = (fm_off_chip + weights) / npu.off_chip_bytes_per_cycle;
  return c;
}

CostTables BuildCostTables(const ModelDef& model, const Target& target, const Target* cpu_target) {
  CostTables t;
  const SubgraphDef& graph = model.subgraphs[0];
  const int n = static_cast<int>(graph.operators.size());
  const CostModel& acc = target.cost;
  t.accelerator_us.assign(n, 0);
  t.cpu_us.assign(n, 0);
  t.accelerator_placeholders.resize(n);
  t.cpu_placeholders.resize(n);
  for (const TensorDef& def : graph.tensors)
    t.tensor_bytes.push_back(IsConstant(model, def) ? 0 : Elements(def) * ElementBytes(def.type));

  // The board's CPU: a named core class at a clock and core count, else the
  // generic rates of cpu.json.
  const CpuClassCost* cpu_class = nullptr;
  if (!acc.cpu_class.empty()) {
    for (const Target* source : {&target, cpu_target}) {
      if (source == nullptr || cpu_class) continue;
      for (const auto& [name, cls] : source->cost.cpu_classes)
        if (name == acc.cpu_class) cpu_class = &cls;
    }
  }
  std::vector<std::string> cpu_common;
  double cpu_hz = 0;  // cores x clock
  if (cpu_class) {
    cpu_hz = Use(*acc.cpu_cores, "cpu.cores", cpu_common) * Use(*acc.cpu_clock_hz, "cpu.clock_hz", cpu_common);
    char label[96];
    std::snprintf(label, sizeof(label), "%gx %s @ %.3g GHz", acc.cpu_cores->value, acc.cpu_class.c_str(),
                  acc.cpu_clock_hz->value / 1e9);
    t.cpu_label = label;
  } else {
    t.cpu_label = cpu_target ? "generic CPU rates of cpu.json" : "no CPU rates";
  }

  // An Ethos-U NPU: Vela's view of each operation (EthosUNodeCycles).
  std::vector<std::string> ethos_u_used;
  EthosUConstants ethos_u;
  if (!acc.ethos_u.empty()) {
    auto get = [&](const char* key) {
      const CostNumber* number = Lookup(acc.ethos_u, key);
      return Use(*number, std::string("ethos_u.") + key, ethos_u_used);
    };
    ethos_u.clock_hz = get("clock_hz");
    ethos_u.ublock_h = get("ofm_ublock_height");
    ethos_u.ublock_w = get("ofm_ublock_width");
    ethos_u.ublock_d = get("ofm_ublock_depth");
    ethos_u.ifm_block_depth = get("ifm_block_depth");
    ethos_u.output_cycles = get("output_cycles_per_element");
    ethos_u.output_cycles_add_sub = get("output_cycles_add_sub");
    ethos_u.output_cycles_mul = get("output_cycles_mul");
    ethos_u.output_cycles_max_pool = get("output_cycles_max_pool");
    ethos_u.activation_cycles_lut = get("activation_cycles_lut");
    ethos_u.activation_cycles_relu = get("activation_cycles_relu");
    ethos_u.sram_bytes_per_cycle = get("sram_bytes_per_cycle");
    ethos_u.off_chip_bytes_per_cycle = get("off_chip_bytes_per_cycle");
    ethos_u.feature_maps_off_chip = get("feature_maps_off_chip") != 0;
    ethos_u.sram_cache_bytes = get("sram_cache_bytes");
    ethos_u.sram_read_latency = get("sram_read_latency_cycles");
    ethos_u.sram_write_latency = get("sram_write_latency_cycles");
    ethos_u.off_chip_read_latency = get("off_chip_read_latency_cycles");
    ethos_u.off_chip_write_latency = get("off_chip_write_latency_cycles");
    ethos_u.arg_max_cycles_per_element = get("arg_max_cycles_per_element");
    ethos_u.fuses_channel_scale_shift = get("fuses_channel_scale_shift") != 0;
    ethos_u.op_overhead_cycles = get("op_overhead_cycles");
    ethos_u.mac_cycle_scale = get("mac_cycle_scale");
    ethos_u.elementwise_cycle_scale = get("elementwise_cycle_scale");
  }

  for (int i = 0; i < n; ++i) {
    const NodeWork w = NodeWorkOf(model, i);
    if (!acc.ethos_u.empty()) {
      t.ethos_u.push_back(EthosUNodeCycles(model, i, ethos_u));
      t.accelerator_us[i] = t.ethos_u.back().total(ethos_u) / ethos_u.clock_hz * 1e6;
      t.accelerator_placeholders[i] = ethos_u_used;
    } else if (const CostNumber* peak = Lookup(acc.ops_per_second, w.dtype)) {
      // Accelerator: compute at the class's share of the dtype peak, plus traffic.
      auto& ph = t.accelerator_placeholders[i];
      double us = w.ops / (Use(*peak, "ops_per_second." + w.dtype, ph) *
                           Efficiency(acc.op_class_efficiency, w.op_class, "", ph)) * 1e6;
      if (acc.memory_bytes_per_second)
        us += w.activation_bytes / Use(*acc.memory_bytes_per_second, "memory_bytes_per_second", ph) * 1e6;
      if (acc.weight_bytes_per_second)
        us += w.weight_bytes / Use(*acc.weight_bytes_per_second, "weight_bytes_per_second", ph) * 1e6;
      if (acc.node_overhead_us) us += Use(*acc.node_overhead_us, "node_overhead_us", ph);
      t.accelerator_us[i] = us;
    }
    // CPU.
    auto& ph = t.cpu_placeholders[i];
    if (cpu_class) {
      if (const CostNumber* rate = Lookup(cpu_class->ops_per_cycle_per_core, w.dtype, "float32")) {
        const std::string prefix = "cpu_classes." + acc.cpu_class + ".";
        const double ops_per_s = Use(*rate, prefix + "ops_per_cycle_per_core." + w.dtype, ph) * cpu_hz *
                                 Efficiency(cpu_class->op_class_efficiency, w.op_class, prefix, ph);
        t.cpu_us[i] = w.ops / ops_per_s * 1e6;
        AddAll(ph, cpu_common);
      }
    } else if (cpu_target) {
      if (const CostNumber* rate = Lookup(cpu_target->cost.ops_per_second, w.dtype)) {
        const double ops_per_s = Use(*rate, "cpu.json ops_per_second." + w.dtype, ph) *
                                 Efficiency(cpu_target->cost.op_class_efficiency, w.op_class, "cpu.json ", ph);
        t.cpu_us[i] = w.ops / ops_per_s * 1e6;
      }
    }
  }
  if (acc.partition_sync_us) t.sync_us = Use(*acc.partition_sync_us, "partition_sync_us", t.sync_placeholders);
  if (acc.copy_bytes_per_second)
    t.copy_bytes_per_us = Use(*acc.copy_bytes_per_second, "copy_bytes_per_second", t.copy_placeholders) / 1e6;
  if (acc.fallback_slowdown) {
    t.fallback_layer = acc.fallback_layer;
    t.fallback_slowdown = Use(*acc.fallback_slowdown, "driver_fallback.slowdown", t.fallback_placeholders);
  }
  if (acc.first_inference_compile_ms)
    t.compile_ms = Use(*acc.first_inference_compile_ms, "first_inference_compile_ms", t.compile_placeholders);
  return t;
}

bool RunsOnFallback(const CostTables& tables, const NodePlacement& node) {
  if (node.delegated || tables.fallback_layer.empty() || node.reasons.empty()) return false;
  for (const Reason& r : node.reasons)
    if (r.layer != tables.fallback_layer) return false;
  return true;
}

namespace {

// Bytes of the non-constant tensors a delegated subset reads from or writes
// to the rest of the graph (its hand-over traffic).
double CrossingBytes(const CostTables& tables, const NodeSubset& subset) {
  double bytes = 0;
  for (const auto* list : {&subset.input_tensors, &subset.output_tensors})
    for (int tensor : *list)
      if (tensor >= 0 && tensor < static_cast<int>(tables.tensor_bytes.size())) bytes += tables.tensor_bytes[tensor];
  return bytes;
}

}  // namespace

CostEstimate EstimatePlan(const ModelDef& model, const CostTables& tables, const DelegationPlan& plan) {
  (void)model;
  CostEstimate e;
  const int n = static_cast<int>(tables.cpu_us.size());
  for (int i = 0; i < n && i < static_cast<int>(plan.nodes.size()); ++i) {
    const NodePlacement& node = plan.nodes[i];
    if (node.delegated) {
      e.accelerator_us += tables.accelerator_us[i];
      AddAll(e.placeholders, tables.accelerator_placeholders[i]);
    } else if (RunsOnFallback(tables, node)) {
      e.cpu_us += tables.cpu_us[i] * tables.fallback_slowdown;
      AddAll(e.placeholders, tables.cpu_placeholders[i]);
      AddAll(e.placeholders, tables.fallback_placeholders);
    } else {
      e.cpu_us += tables.cpu_us[i];
      AddAll(e.placeholders, tables.cpu_placeholders[i]);
    }
  }
  e.partitions = plan.num_partitions();
  for (int k = 0; k < plan.num_partitions(); ++k) {
    e.sync_us += tables.sync_us;
    AddAll(e.placeholders, tables.sync_placeholders);
    if (tables.copy_bytes_per_us > 0) {
      e.sync_us += CrossingBytes(tables, plan.subsets[plan.partition_subsets[k]]) / tables.copy_bytes_per_us;
      AddAll(e.placeholders, tables.copy_placeholders);
    }
  }
  if (e.partitions > 0) {
    e.first_inference_compile_ms = tables.compile_ms;
    AddAll(e.placeholders, tables.compile_placeholders);
  }
  e.uses_placeholders = !e.placeholders.empty();
  return e;
}

CostEstimate EstimateCpuOnly(const CostTables& tables) {
  CostEstimate e;
  for (size_t i = 0; i < tables.cpu_us.size(); ++i) {
    e.cpu_us += tables.cpu_us[i];
    AddAll(e.placeholders, tables.cpu_placeholders[i]);
  }
  e.uses_placeholders = !e.placeholders.empty();
  return e;
}

std::vector<bool> ChainPartition(const ModelDef& model, const CostTables& tables,
                                 const std::vector<bool>& may_delegate) {
  const SubgraphDef& graph = model.subgraphs[0];
  const int n = static_cast<int>(may_delegate.size());
  const double inf = std::numeric_limits<double>::infinity();
  auto bytes_of = [&](const std::vector<int32_t>& tensors) {  // each distinct tensor once, as EstimatePlan
    std::set<int32_t> distinct(tensors.begin(), tensors.end());
    double b = 0;
    for (int32_t t : distinct)
      if (t >= 0) b += tables.tensor_bytes[t];
    return b;
  };
  auto copy_us = [&](double bytes) { return tables.copy_bytes_per_us > 0 ? bytes / tables.copy_bytes_per_us : 0.0; };
  // cost[i][s]: nodes 0..i placed, node i on s (0 = CPU, 1 = accelerator).
  std::vector<std::array<double, 2>> cost(n, {inf, inf});
  std::vector<std::array<int, 2>> from(n, {0, 0});
  for (int i = 0; i < n; ++i) {
    const double enter = tables.sync_us + copy_us(bytes_of(graph.operators[i].inputs));
    const double leave = i > 0 ? copy_us(bytes_of(graph.operators[i - 1].outputs)) : 0.0;
    for (int s = 0; s < 2; ++s) {
      if (s == 1 && !may_delegate[i]) continue;
      const double own = s ? tables.accelerator_us[i] : tables.cpu_us[i];
      if (i == 0) {
        cost[i][s] = own + (s ? enter : 0.0);
        continue;
      }
      for (int prev = 0; prev < 2; ++prev) {
        if (cost[i - 1][prev] == inf) continue;
        double hand = 0;
        if (prev == 0 && s == 1) hand = enter;
        if (prev == 1 && s == 0) hand = leave;
        const double c = cost[i - 1][prev] + hand + own;
        if (c < cost[i][s]) {
          cost[i][s] = c;
          from[i][s] = prev;
        }
      }
    }
  }
  std::vector<bool> on_accelerator(n, false);
  if (n == 0) return on_accelerator;
  const double exit = copy_us(bytes_of(graph.operators[n - 1].outputs));
  int s = cost[n - 1][1] + exit < cost[n - 1][0] ? 1 : 0;
  for (int i = n - 1; i >= 0; --i) {
    on_accelerator[i] = s == 1;
    s = from[i][s];
  }
  return on_accelerator;
}

std::vector<int> ChooseCpuNodes(const ModelDef& model, const CostTables& tables, const DelegationPlan& greedy,
                                const std::function<DelegationPlan(const std::vector<int>&)>& plan_with) {
  const int n = static_cast<int>(greedy.nodes.size());
  // Nodes refused only by the fallback layer run slower inside the delegate
  // than on the CPU: keeping them away from the delegate never costs more.
  std::vector<int> base;
  if (tables.fallback_slowdown > 1)
    for (int i = 0; i < n; ++i)
      if (RunsOnFallback(tables, greedy.nodes[i])) base.push_back(i);
  auto price = [&](const std::vector<int>& skip) {
    return EstimatePlan(model, tables, plan_with(skip)).total_us();
  };
  auto with_base = [&](std::vector<int> skip) {
    skip.insert(skip.end(), base.begin(), base.end());
    std::sort(skip.begin(), skip.end());
    skip.erase(std::unique(skip.begin(), skip.end()), skip.end());
    return skip;
  };
  std::vector<int> best;  // greedy: skip nothing
  double best_cost = price(best);
  auto consider = [&](const std::vector<int>& skip) {
    const double c = price(skip);
    if (c < best_cost - 1e-9) {
      best_cost = c;
      best = skip;
      return true;
    }
    return false;
  };
  consider(with_base({}));
  // The chain program over the execution order.
  std::vector<bool> may(n, false);
  for (int i = 0; i < n; ++i) may[i] = greedy.nodes[i].delegated;
  const std::vector<bool> chosen = ChainPartition(model, tables, may);
  std::vector<int> dp_skip;
  for (int i = 0; i < n; ++i)
    if (may[i] && !chosen[i]) dp_skip.push_back(i);
  consider(with_base(dp_skip));
  // CPU only.
  std::vector<int> all;
  for (int i = 0; i < n; ++i)
    if (greedy.nodes[i].delegated || RunsOnFallback(tables, greedy.nodes[i])) all.push_back(i);
  consider(with_base(all));
  // Bounded improvement on the real partitioning: drop a whole partition, or
  // its first or last node, while that lowers the estimate (at most 8 rounds).
  for (int round = 0; round < 8; ++round) {
    const DelegationPlan current = plan_with(best);
    bool improved = false;
    for (int k = 0; k < current.num_partitions() && !improved; ++k) {
      const std::vector<int>& nodes = current.subsets[current.partition_subsets[k]].nodes;
      std::vector<int> whole = best;
      whole.insert(whole.end(), nodes.begin(), nodes.end());
      improved = consider(with_base(whole));
      for (int edge : {nodes.front(), nodes.back()}) {
        if (improved || nodes.size() < 2) break;
        std::vector<int> skip = best;
        skip.push_back(edge);
        improved = consider(with_base(skip));
      }
    }
    if (!improved) break;
  }
  return best;
}

}  // namespace delegato::tools
