#include "tools/cost.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
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
  return t.buffer != 0 && t.buffer < model.buffers.size() && !model.buffers[t.buffer].empty();
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

// A binary elementwise node chained onto the CONV_2D just before it: one of
// its inputs is that convolution's output, read by nothing else. Returns the
// convolution's index, else -1.
int ChainedConvolution(const ModelDef& model, int node) {
  const SubgraphDef& graph = model.subgraphs[0];
  if (node <= 0 || node >= static_cast<int>(graph.operators.size())) return -1;
  auto op_kind = [&](int i) { return model.operator_codes[graph.operators[i].opcode_index].builtin; };
  const BuiltinOp kind = op_kind(node);
  if (kind != BuiltinOp::kAdd && kind != BuiltinOp::kSub && kind != BuiltinOp::kMul) return -1;
  const OperatorDef& conv = graph.operators[node - 1];
  if (op_kind(node - 1) != BuiltinOp::kConv2d || conv.outputs.empty() || conv.outputs[0] < 0) return -1;
  const int32_t out = conv.outputs[0];
  const OperatorDef& op = graph.operators[node];
  if (op.inputs.size() != 2 || std::count(op.inputs.begin(), op.inputs.end(), out) != 1) return -1;
  for (int i = 0; i < static_cast<int>(graph.operators.size()); ++i)
    if (i != node && std::count(graph.operators[i].inputs.begin(), graph.operators[i].inputs.end(), out) > 0) return -1;
  for (int32_t t : graph.outputs)
    if (t == out) return -1;
  return node - 1;
}

}  // namespace

namespace {

// Vela's block model of the 256-MAC Ethos-U55 / U65 (ethos-u-vela 5.2 runs
// its compiled core for every configuration; the formulas below restate its
// EthosU55Performance and ArchEthosU55::FindBlockConfig, whose tables for the
// 256-MAC configurations are also in the installed
// ethosu/vela/architecture_features.py: 48 SHRAM banks of 1 KiB, granules
// [8, 8, 8, 8, 16, 8, 16, 20], micro-blocks of 2x2x8, OFM blocks of at most
// 32x64x128 (height x width x depth)).
enum class BlockOp { kConvolution, kDepthwise, kVectorProduct, kPooling, kReduceSum, kElementwise };

struct Hwc {
  double h = 1, w = 1, d = 1;
  double elements() const { return h * w * d; }
  double wh() const { return h * w; }
};

Hwc MinHwc(const Hwc& a, const Hwc& b) { return {std::min(a.h, b.h), std::min(a.w, b.w), std::min(a.d, b.d)}; }
double RoundUp(double a, double b) { return std::ceil(a / b) * b; }

// Where a feature map lives: its memory's latencies, bandwidth and burst.
struct FeatureMapMemory {
  double read_latency = 0, write_latency = 0, bytes_per_cycle = 1, burst_bytes = 32;
  bool brick_format = true;  // NHCWB16 (16-channel bricks) inside the NPU graph, NHWC at its edges
  bool off_chip = false;      // on the off-chip port (DRAM / flash), else SRAM
};

struct BlockQuery {
  BlockOp op = BlockOp::kElementwise;
  Hwc ofm, ifm, ifm2;
  bool has_ifm2 = false;
  double ifm_bits = 8, ofm_bits = 8;
  double kh = 1, kw = 1, stride_h = 1, stride_w = 1, dilated_h = 1, dilated_w = 1;
  double output_cycles_per_element = 0;  // the output unit's rate (op and fused activation)
  bool has_bias = false;
  double bias_read_latency = 0;  // of the memory holding the scales and biases
  FeatureMapMemory ifm_memory, ifm2_memory, ofm_memory;
};

struct BlockConfig {
  Hwc ofm_block, ifm_block;
  bool part_kernel = false;
  bool acc40 = false;
  bool found = false;
};

constexpr double kShramBankBytes = 1024, kShramReservedOutputBanks = 2, kShramReservedEndBanks = 2;
constexpr double kUBlockH = 2, kUBlockW = 2, kUBlockD = 8, kIfmUBlockD = 8;
constexpr Hwc kOfmBlockMax = {32, 64, 128};
// The U85's IFM block depth for part-kernel-first convolutions (ArchEthosU85::FindBlockConfig).
constexpr double kU85PartKernelIfmBlockDepth = 16;
// The NPU's own feature maps are stored in bricks of 16 channels (NHCWB16).
constexpr double kBrickDepth = 16;

// Part-kernel-first when it uses the MAC array better than depth-first
// (Vela's ChooseKernelMethod): always for 8 or fewer input channels.
bool PartKernelFirst(const Hwc& ifm, double ifm_bits, double kernel_elements) {
  if (ifm.d <= 8) return true;
  const double depth_use = ifm.d / RoundUp(ifm.d, ifm_bits == 8 ? 32 : 16);
  const double part_use = ifm.d / RoundUp(ifm.d, 8) * (kernel_elements / RoundUp(kernel_elements, ifm_bits == 8 ? 4 : 2));
  return part_use >= depth_use;
}

// The OFM block Vela's block search picks: every block of micro-block steps
// whose IFM and accumulator buffers fit the SHRAM, the one that fetches the
// fewest IFM and weight elements per output element.
BlockConfig FindBlockConfig(const BlockQuery& q, double shram_banks) {
  BlockConfig config;
  const bool elementwise = q.op == BlockOp::kElementwise;
  const Hwc& ifm = q.has_ifm2 && q.ifm2.elements() > q.ifm.elements() ? q.ifm2 : q.ifm;
  const bool scalar = q.ifm.elements() == 1 || (q.has_ifm2 && q.ifm2.elements() == 1);
  const bool ew_full = elementwise && !(scalar && q.ifm_bits <= 16);
  const bool pooling = q.op == BlockOp::kPooling || q.op == BlockOp::kReduceSum;
  const bool depthwise = q.op == BlockOp::kDepthwise;
  const bool equal_depth = elementwise || (pooling && q.op != BlockOp::kReduceSum) || depthwise;
  config.part_kernel = q.op == BlockOp::kConvolution && PartKernelFirst(ifm, q.ifm_bits, q.kh * q.kw);
  config.acc40 = q.ifm_bits == 16 && (!pooling || q.op == BlockOp::kReduceSum) && !elementwise;
  const double acc_granule = config.acc40 ? 20 : 16, acc_bits = config.acc40 ? 40 : 32;
  const double ifm_granule = q.ifm_bits == 32 ? 16 : 8;
  const double lut_banks = kShramReservedEndBanks;
  const double ifm_repeats = std::ceil(q.dilated_w / 8) * std::ceil(q.dilated_h / 8);
  const double ifm_block_depth = q.ifm_bits == 16 ? RoundUp(std::min(ifm.d, 16.0), 4)
                                                  : RoundUp(std::min(ifm.d, config.part_kernel ? 16.0 : 32.0), kIfmUBlockD);
  const bool has_weights = q.op == BlockOp::kConvolution || depthwise;
  const double weight_fetch_wh = has_weights ? q.kh * q.kw : 0;
  const Hwc search = {RoundUp(std::min(q.ofm.h, kOfmBlockMax.h), kUBlockH), RoundUp(std::min(q.ofm.w, kOfmBlockMax.w), kUBlockW),
                      RoundUp(std::min(q.ofm.d, kOfmBlockMax.d), kUBlockD)};
  auto fits = [&](const Hwc& ofm_block, const Hwc& ifm_block) {
    const double ifm_bytes = ifm_block.wh() * RoundUp(ifm_block.d * q.ifm_bits / 8, 8);
    const double ifm_banks = RoundUp(std::ceil(ifm_bytes / kShramBankBytes) * 2, ifm_granule);
    double ifm_end = kShramReservedOutputBanks + ifm_banks;
    double acc_start = shram_banks - lut_banks;
    if (!elementwise) {
      const double acc_bytes = ofm_block.wh() * RoundUp(ofm_block.d, 8) * acc_bits / 8;
      acc_start -= RoundUp(std::ceil(acc_bytes / kShramBankBytes) * 2, acc_granule);
    } else {
      if (ifm_end + (ew_full ? ifm_banks : 0) > acc_start) return false;
      ifm_end = acc_start;
    }
    return ifm_end <= acc_start;
  };
  double best_cost = std::numeric_limits<double>::infinity(), best_coverage = best_cost;
  double depth = std::max(kUBlockD, std::min(search.d, 16.0));
  if (depth < q.ofm.d) depth = RoundUp(depth, 16);
  std::set<std::pair<double, double>> wont_fit;
  for (; depth <= search.d; depth = depth + kUBlockD < q.ofm.d ? RoundUp(depth + kUBlockD, 16) : depth + kUBlockD) {
    for (double h = kUBlockH; h <= search.h; h += kUBlockH) {
      for (double w = kUBlockW; w <= search.w; w += kUBlockW) {
        if (wont_fit.count({h, w})) continue;
        Hwc ofm_block = {h, w, depth};
        Hwc ifm_block = {RoundUp((h - 1) * q.stride_h + std::min(q.dilated_h, 8.0), kUBlockH),
                         RoundUp((w - 1) * q.stride_w + std::min(q.dilated_w, 8.0), kUBlockW), depth};
        if (!equal_depth) ifm_block.d = ifm_block_depth;
        // The 1-D optimisation: an OFM of height 1 with a 1-high kernel uses blocks of height 1.
        if (q.ofm.h == 1 && q.kh == 1) ofm_block.h = 1;
        if (!fits(ofm_block, ifm_block)) {
          wont_fit.insert({h, w});
          continue;
        }
        const Hwc full = {std::ceil(q.ofm.h / ofm_block.h), std::ceil(q.ofm.w / ofm_block.w), std::ceil(q.ofm.d / ofm_block.d)};
        const Hwc blocks = {q.ofm.h / ofm_block.h, q.ofm.w / ofm_block.w, q.ofm.d / ofm_block.d};
        double weight_fetch = weight_fetch_wh * ifm.d * full.wh();
        if (!depthwise) weight_fetch *= blocks.d * ofm_block.d;
        double ifm_fetch = ifm_block.wh() * ifm.d * ifm_repeats * blocks.h * blocks.w;
        if (!equal_depth) ifm_fetch *= full.d;
        double cost = elementwise ? q.ofm.elements() / (h * w * depth) : (ifm_fetch + weight_fetch) / q.ofm.elements();
        if (ifm.elements() < ifm_block.elements() * 2) cost /= 2;
        if (cost > best_cost) continue;
        bool choose = true;
        if (cost == best_cost) {
          const Hwc covered = MinHwc(ifm, ifm_block);
          const double coverage = ifm.wh() / std::max(covered.wh(), 1.0);
          choose = coverage <= best_coverage && h <= 4 && w <= 4;
          if (choose) best_coverage = coverage;
        } else {
          best_coverage = std::numeric_limits<double>::infinity();
        }
        if (choose) {
          best_cost = cost;
          config.ofm_block = {h, w, depth};
          config.ifm_block = ifm_block;
          config.found = true;
        }
      }
    }
  }
  return config;
}

// Bytes a transfer of `bytes` costs on a memory, given how much of each burst
// the block's layout fills (Vela's EstimateMemoryTransfer).
double TransferBytes(bool read, const FeatureMapMemory& memory, double bits, const Hwc& block, const Hwc& shape,
                     double bytes) {
  double burst_bits = 8;
  if (memory.brick_format) {
    const double z_stride = shape.w * bits * 16 / 8;
    if (z_stride == block.d) burst_bits = bits * block.w * block.d;
    else burst_bits = 16 * bits * block.w;
  } else {
    const double x_stride = shape.d * bits / 8;
    if (read) burst_bits = x_stride == block.d ? bits * block.w * block.d : bits * block.d;
    else if (block.d <= 16 && x_stride == block.d) burst_bits = bits * block.w * block.d;
    else burst_bits = std::min({64.0 * 8, 16 * bits, block.d * bits});
  }
  const double burst = std::max(1.0, std::min(memory.burst_bytes, std::floor(burst_bits / 8)));
  return std::floor(bytes * memory.burst_bytes / burst);
}

// The cycles one OFM block's first IFM read and OFM write wait: each
// memory's latency plus the block's (burst-inflated) bytes.
double MinimumMemoryCycles(const BlockQuery& q, const BlockConfig& config) {
  auto read = [&](const Hwc& shape, const FeatureMapMemory& memory) {
    const double bytes = MinHwc(shape, config.ifm_block).elements() * q.ifm_bits / 8;
    return memory.read_latency +
           std::floor(TransferBytes(true, memory, q.ifm_bits, config.ifm_block, shape, bytes) / memory.bytes_per_cycle);
  };
  double ifm = read(q.ifm, q.ifm_memory);
  if (q.has_ifm2) ifm = std::max(ifm, read(q.ifm2, q.ifm2_memory));
  const double ofm_bytes = MinHwc(q.ofm, config.ofm_block).elements() * q.ofm_bits / 8;
  const double ofm = q.ofm_memory.write_latency +
                     std::floor(TransferBytes(false, q.ofm_memory, q.ofm_bits, config.ofm_block, q.ofm, ofm_bytes) /
                                q.ofm_memory.bytes_per_cycle);
  return ifm + ofm;
}

// A pass's NPU cycles under Vela's block model: the MAC array's cycles per
// OFM block (micro-blocks x kernel steps, at least the weight load of a
// micro-block column), the output unit's per block, and the command-issue
// limit (a quarter of the block's memory wait plus both) that floors each.
struct BlockCost {
  double cycles = 0;
  // Bytes moved on each feature map's memory, burst waste included.
  double ifm_bytes = 0, ifm2_bytes = 0, ofm_bytes = 0;
  double weight_refetch = 1;  // how often the weights are read: once per OFM block position
  double first_weight_share = 1;  // the share of the weights the first OFM block depth needs
};

BlockCost BlockModelCycles(const BlockQuery& q, double shram_banks) {
  BlockCost cost;
  const BlockConfig config = FindBlockConfig(q, shram_banks);
  if (!config.found) return cost;
  const double min_memory = MinimumMemoryCycles(q, config);
  auto stored = [](const Hwc& shape, const FeatureMapMemory& memory) {
    return memory.brick_format ? shape.h * shape.w * RoundUp(shape.d, 16) : shape.elements();
  };
  cost.ofm_bytes = TransferBytes(false, q.ofm_memory, q.ofm_bits, config.ofm_block, q.ofm,
                                 stored(q.ofm, q.ofm_memory) * q.ofm_bits / 8);
  if (q.op == BlockOp::kElementwise) {
    const double elements = stored(q.ofm, q.ofm_memory);
    const double output = std::ceil(q.output_cycles_per_element * elements);
    const double command =
        std::ceil((min_memory / config.ofm_block.elements() + q.output_cycles_per_element) / 4 * elements);
    cost.cycles = std::max(output, command);
    // Each operand is read once per output element unless it is a scalar.
    const double read = stored(q.ofm, q.ifm_memory) * q.ifm_bits / 8;
    if (q.ifm.elements() > 1) cost.ifm_bytes = TransferBytes(true, q.ifm_memory, q.ifm_bits, config.ifm_block, q.ifm, read);
    if (q.has_ifm2 && q.ifm2.elements() > 1)
      cost.ifm2_bytes = TransferBytes(true, q.ifm2_memory, q.ifm_bits, config.ifm_block, q.ifm2, read);
    return cost;
  }
  const Hwc ofm_block = MinHwc(q.ofm, config.ofm_block);
  const Hwc ifm_block = MinHwc(q.ifm, config.ifm_block);
  Hwc ublock = {kUBlockH, kUBlockW, kUBlockD};
  if ((q.op == BlockOp::kConvolution || q.op == BlockOp::kVectorProduct) && q.ofm.h == 1 &&
      std::fmod(q.ofm.w, 2) == 0 && q.kh == 1)
    ublock = {1, 4, kUBlockD};
  const Hwc ublocks = {std::ceil(ofm_block.h / ublock.h), std::ceil(ofm_block.w / ublock.w), std::ceil(ofm_block.d / ublock.d)};
  const double weight_load = 32 * ublock.d / 8;
  const bool vector_like = q.op == BlockOp::kVectorProduct || q.op == BlockOp::kReduceSum;
  const double sub_limit = vector_like ? 1 : 8;
  double mac = 0;
  for (double x = 0; x < q.kw; x += sub_limit) {
    for (double y = 0; y < q.kh; y += sub_limit) {
      const double elements = std::min(q.kh - y, sub_limit) * std::min(q.kw - x, sub_limit);
      double steps = 1, cycles = 0;
      switch (q.op) {
        case BlockOp::kPooling:
          cycles = std::max(4.0, elements) * ublocks.elements() * (q.ifm_bits / 2);
          break;
        case BlockOp::kDepthwise:
          steps = std::ceil(elements / 4);
          cycles = std::max(weight_load, 4 * ublocks.wh() * (q.ifm_bits / 8)) * steps * ublocks.d;
          break;
        default:
          if (q.op == BlockOp::kConvolution && config.part_kernel) {
            steps = std::ceil(elements / (q.ifm_bits == 16 ? 2 : 4));
            cycles = std::max(weight_load, 4 * ublocks.wh()) * steps * ublocks.d * std::ceil(ifm_block.d / 8);
          } else {
            steps = elements;
            cycles = std::max(weight_load, 4 * ublocks.wh()) * steps * ublocks.d;
          }
      }
      // The MAC pipeline stalls when a block is a single micro-block column.
      const double delay_step = 2;
      double delay = 0;
      if (ublocks.wh() == 1) {
        if (ublocks.d == 1) delay = delay_step * steps;
        else if (steps > 1) delay = delay_step * (steps - 1) * ublocks.d;
      }
      if (q.op == BlockOp::kConvolution && config.part_kernel) delay *= std::ceil(ifm_block.d / 8);
      mac += cycles + delay;
    }
  }
  if (q.op == BlockOp::kConvolution || vector_like) mac *= std::ceil(q.ifm.d / ifm_block.d);
  const Hwc all_ublocks = {std::ceil(q.ofm.h / ublock.h), std::ceil(q.ofm.w / ublock.w), std::ceil(q.ofm.d / ublock.d)};
  const double blocks = all_ublocks.elements() / ublocks.elements();
  double output = std::ceil(q.output_cycles_per_element * ofm_block.elements());
  if (q.has_bias && q.op != BlockOp::kPooling && q.op != BlockOp::kReduceSum)
    output = std::max(output, 10 * ofm_block.d * q.bias_read_latency / 256);
  const double command = (min_memory + mac + output) / 4;
  const double mac_balanced = std::max(mac, command), output_balanced = std::max(output, command);
  cost.cycles = mac_balanced > output_balanced ? mac_balanced * blocks + output_balanced
                                               : output_balanced * blocks + mac_balanced;
  // The first block's IFM read and OFM write are not overlapped with
  // anything: Vela's per-layer NPU cycles of mobilenet_v2_1.0_224_quant's
  // depthwise convolutions on ethos-u55-256 exceed the per-block sum by
  // exactly that wait (968 of 968 cycles on the 112x112x32 and 56x56x144 ones).
  cost.cycles += min_memory;
  // The IFM is fetched once per OFM block (its halo included) and sub-kernel;
  // depthwise and pooling blocks span the whole depth.
  const bool whole_depth = q.op == BlockOp::kDepthwise || q.op == BlockOp::kPooling;
  const Hwc ofm_blocks = {std::ceil(q.ofm.h / ofm_block.h), std::ceil(q.ofm.w / ofm_block.w),
                          whole_depth ? 1 : std::ceil(q.ofm.d / ofm_block.d)};
  const double sub_kernels = vector_like ? 1 : std::ceil(q.kw / 8) * std::ceil(q.kh / 8);
  const double ifm_depth = q.ifm_memory.brick_format ? RoundUp(q.ifm.d, 16) : q.ifm.d;
  const double ifm_fetch = ifm_block.wh() * ifm_depth * sub_kernels * ofm_blocks.elements();
  cost.ifm_bytes = TransferBytes(true, q.ifm_memory, q.ifm_bits, config.ifm_block, q.ifm, ifm_fetch * q.ifm_bits / 8);
  if (q.op != BlockOp::kPooling && q.op != BlockOp::kReduceSum) cost.weight_refetch = ofm_blocks.wh();
  cost.first_weight_share = std::min(1.0, config.ofm_block.d / q.ofm.d);
  return cost;
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
namespace {

// Bytes of a weight tensor after Vela's weight encoding: its encoder codes
// each weight's distance from the zero point with Golomb-Rice codes (the
// mlw format of ethosu/mlw_codec), falling back to the raw bytes when that
// is no smaller, in a stream padded to 16 bytes with a 16-byte header.
// The estimate takes the one Rice divisor that codes the whole tensor
// shortest; on mobilenet_v2_1.0_224_quant it comes out 3-8% below the
// codec's own output (mlw_codec.encode), on random weights at the raw size.
double EncodedWeightBytes(const ModelDef& model, const TensorDef& t) {
  const double raw = Elements(t) * ElementBytes(t.type);
  if (!IsConstant(model, t) || (t.type != DataType::kInt8 && t.type != DataType::kUInt8)) return RoundUp(raw, 16) + 16;
  const std::span<const uint8_t> data = model.buffers[t.buffer].bytes();
  const int64_t zero_point = t.quantization.zero_point.size() == 1 ? t.quantization.zero_point[0] : 0;
  std::array<double, 8> bits{};
  for (uint8_t byte : data) {
    const int64_t w = (t.type == DataType::kInt8 ? static_cast<int64_t>(static_cast<int8_t>(byte)) : byte) - zero_point;
    const int64_t u = w >= 0 ? 2 * w : -2 * w - 1;  // zigzag: small magnitudes first
    for (int k = 0; k < 8; ++k) bits[k] += static_cast<double>((u >> k) + 1 + k);
  }
  const double coded = std::ceil(*std::min_element(bits.begin(), bits.end()) / 8);
  return RoundUp(std::min(raw, coded), 16) + 16;
}

}  // namespace

std::vector<bool> NpuEdgeTensors(const ModelDef& model, const std::vector<bool>& npu_nodes) {
  const SubgraphDef& graph = model.subgraphs[0];
  std::vector<bool> edge(graph.tensors.size(), false);
  auto mark = [&](int32_t t) {
    if (t >= 0 && t < static_cast<int32_t>(edge.size())) edge[t] = true;
  };
  for (int32_t t : graph.inputs) mark(t);
  for (int32_t t : graph.outputs) mark(t);
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    if (npu_nodes.empty() || (i < npu_nodes.size() && npu_nodes[i])) continue;
    for (int32_t t : graph.operators[i].inputs) mark(t);
    for (int32_t t : graph.operators[i].outputs) mark(t);
  }
  return edge;
}

namespace {
// A node Vela removes or folds into another: no operation, no cycles.
EthosUCycles NoEthosUCycles() {
  EthosUCycles none;
  none.operations = 0;
  return none;
}
}  // namespace

EthosUCycles EthosUNodeCycles(const ModelDef& model, int node, const EthosUConstants& npu,
                              const std::vector<bool>* arena_tensors) {
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
  // The writes among them: a memory's read and write channels are limited separately.
  double sram_writes = 0, off_chip_writes = 0;
  const std::vector<bool> graph_edges = arena_tensors ? std::vector<bool>{} : NpuEdgeTensors(model, {});
  const std::vector<bool>& edges = arena_tensors ? *arena_tensors : graph_edges;
  auto is_edge = [&](int32_t t) { return t >= 0 && t < static_cast<int32_t>(edges.size()) && edges[t]; };
  // With the arena off chip (U65/U85), a feature map larger than the SRAM
  // cache stays in DRAM; under the block model so do the NPU's edge tensors
  // (Vela's per-layer CSV of keyword_scrambled and hello_world_int8 on
  // ethos-u65-256: the layers next to the CPU or the graph's inputs and
  // outputs access only DRAM).
  const bool block_model = npu.shram_banks > 0;
  auto off_chip = [&](const TensorDef& t) {
    if (!npu.feature_maps_off_chip) return false;
    if (block_model && is_edge(static_cast<int32_t>(&t - graph.tensors.data()))) return true;
    return Elements(t) * ElementBytes(t.type) > npu.sram_cache_bytes;
  };
  auto add_feature_map = [&](const TensorDef& t, bool write) {
    const double bytes = Elements(t) * ElementBytes(t.type);
    (off_chip(t) ? fm_off_chip : fm_sram) += bytes;
    if (write) (off_chip(t) ? off_chip_writes : sram_writes) += bytes;
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
    else add_feature_map(graph.tensors[t], false);
  }
  for (int32_t t : op.outputs)
    if (t >= 0) add_feature_map(graph.tensors[t], true);

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

  // Vela's block model (U55/U65): a pass over `ofm_shape` reading
  // `ifm_shape`, its feature maps where `ifm` / `ofm` live.
  auto memory_of = [&](int32_t t) {
    FeatureMapMemory m;
    const bool far = t >= 0 && off_chip(graph.tensors[t]);
    m.read_latency = far ? npu.off_chip_read_latency : npu.sram_read_latency;
    m.write_latency = far ? npu.off_chip_write_latency : npu.sram_write_latency;
    m.bytes_per_cycle = far ? npu.off_chip_bytes_per_cycle : npu.sram_bytes_per_cycle;
    m.burst_bytes = far ? npu.off_chip_burst_bytes : npu.sram_burst_bytes;
    m.brick_format = !is_edge(t);  // the NPU's own temporaries too
    m.off_chip = far;
    return m;
  };
  // A block-model price replaces the node's plain byte counts with the
  // traffic of its blocks: IFM halos and re-fetches, burst waste, and the
  // weights read from their SRAM buffer once per OFM block position.
  bool block_traffic = false;
  auto use_block = [&](const BlockQuery& q, double repeat = 1) {
    const BlockCost b = BlockModelCycles(q, npu.shram_banks);
    if (!block_traffic) {
      fm_sram = fm_off_chip = sram_writes = off_chip_writes = 0;
      block_traffic = true;
      if (q.op == BlockOp::kConvolution || q.op == BlockOp::kDepthwise || q.op == BlockOp::kVectorProduct) {
        fm_sram += weights * b.weight_refetch;
        // With the arena in DRAM (U65), Vela buffers the weights in SRAM: the
        // pass waits for the DMA of its first OFM block depth's weights, the
        // DRAM's read latency plus their bytes (network_performance.cpp's
        // MemToMemCycles; the per-layer CSV of keras_lstm_mnist_ptq on
        // ethos-u65-256 shows the weights read from SRAM, filled from DRAM).
        if (npu.feature_maps_off_chip) {
          c.weight_dma = npu.off_chip_read_latency + weights * b.first_weight_share / npu.off_chip_bytes_per_cycle;
          // Weights read once may stay in DRAM instead (decided per plan,
          // EthosUBuffersWeights): price that choice too, the scales then
          // read at the DRAM's latency (EthosU55Performance's bias cycles
          // use the weights' staging memory, else their own).
          // Vela's scheduler prices the pass with its feature maps where
          // the arena is, in DRAM, before any is moved into the SRAM cache
          // (its schedule of hello_world_int8 on ethos-u65-256 estimates the
          // middle FULLY_CONNECTED at 1166 cycles, the per-layer CSV at 223).
          BlockQuery in_arena = q;
          for (FeatureMapMemory* m : {&in_arena.ifm_memory, &in_arena.ifm2_memory, &in_arena.ofm_memory}) {
            m->read_latency = npu.off_chip_read_latency, m->write_latency = npu.off_chip_write_latency;
            m->bytes_per_cycle = npu.off_chip_bytes_per_cycle, m->burst_bytes = npu.off_chip_burst_bytes;
            m->off_chip = true;
          }
          c.schedule_npu = BlockModelCycles(in_arena, npu.shram_banks).cycles * repeat;
          if (b.weight_refetch == 1 && weights > 0 && repeat == 1) {
            EthosUWeightChoice& w = c.weight_choice;
            BlockQuery direct = q;
            direct.bias_read_latency = in_arena.bias_read_latency = npu.off_chip_read_latency;
            w.open = true;
            w.npu_direct = BlockModelCycles(direct, npu.shram_banks).cycles;
            w.schedule_buffered = c.schedule_npu;
            w.schedule_direct = BlockModelCycles(in_arena, npu.shram_banks).cycles;
            w.read_direct = npu.off_chip_read_latency + weights / npu.off_chip_bytes_per_cycle;
            w.read_buffered = npu.sram_read_latency + weights / npu.sram_bytes_per_cycle;
            w.transfer = std::max(w.read_direct, npu.sram_write_latency + weights / npu.sram_bytes_per_cycle);
            const double ifm_bytes = BlockModelCycles(in_arena, npu.shram_banks).ifm_bytes;
            w.ifm_read = npu.off_chip_read_latency + ifm_bytes / npu.off_chip_bytes_per_cycle;
            w.depth_slices = std::floor(1 / b.first_weight_share);
          }
        }
      }
    }
    auto port = [&](const FeatureMapMemory& m) -> double& { return m.off_chip ? fm_off_chip : fm_sram; };
    port(q.ifm_memory) += b.ifm_bytes * repeat;
    port(q.ofm_memory) += b.ofm_bytes * repeat;
    (q.ofm_memory.off_chip ? off_chip_writes : sram_writes) += b.ofm_bytes * repeat;
    if (q.has_ifm2) port(q.ifm2_memory) += b.ifm2_bytes * repeat;
    c.latency = 0;
    return b.cycles * repeat;
  };
  auto hwc = [](const std::array<double, 4>& s) { return Hwc{s[0] * s[1], s[2], s[3]}; };
  auto block_pass = [&](BlockOp pass, const Hwc& ofm_shape, const Hwc& ifm_shape, int32_t ifm_tensor, int32_t ofm_tensor,
                        double per_element) {
    BlockQuery q;
    q.op = pass;
    q.ofm = ofm_shape;
    q.ifm = ifm_shape;
    q.ifm_bits = 8 * ElementBytes(ifm_tensor >= 0 ? graph.tensors[ifm_tensor].type : ifm.type);
    q.ofm_bits = 8 * ElementBytes(ofm_tensor >= 0 ? graph.tensors[ofm_tensor].type : ofm.type);
    q.output_cycles_per_element = per_element;
    q.ifm_memory = memory_of(ifm_tensor);
    q.ofm_memory = memory_of(ofm_tensor);
    q.ifm2_memory = q.ifm_memory;
    // Scales and biases are buffered in SRAM with the weights.
    q.bias_read_latency = npu.sram_read_latency;
    return q;
  };
  auto kernel_of = [&](BlockQuery& q, double kh, double kw, double sh, double sw, double dh, double dw) {
    q.kh = kh, q.kw = kw, q.stride_h = sh, q.stride_w = sw;
    q.dilated_h = (kh - 1) * dh + 1, q.dilated_w = (kw - 1) * dw + 1;
  };
  const double output_rate = std::max(acc_cycles, activation_cycles);
  // A convolution's constants as Vela stores them: the encoded weights and
  // 10 bytes of bias, scale and shift per output channel
  // (weight_compressor.py's encode_bias: 40-bit bias, 32-bit scale, 6-bit
  // shift), padded to 16 bytes.
  auto encoded_weights = [&](double out_channels) {
    if (op.inputs.size() < 2 || op.inputs[1] < 0) return weights;
    return EncodedWeightBytes(model, graph.tensors[op.inputs[1]]) + RoundUp(10 * out_channels, 16);
  };

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
      if (block_model) {
        const auto* conv = std::get_if<Conv2DParams>(&op.params);
        BlockQuery q = block_pass(BlockOp::kConvolution, hwc(out), hwc(in), op.inputs[0], op.outputs[0], output_rate);
        kernel_of(q, filter(1), filter(2), conv ? conv->stride_h : 1, conv ? conv->stride_w : 1,
                  conv ? conv->dilation_h : 1, conv ? conv->dilation_w : 1);
        q.has_bias = true;
        weights = encoded_weights(out[3]);
        c.npu = use_block(q);
      } else if (npu.off_chip_read_channel_bytes_per_cycle > 0 && is_edge(op.inputs[0]) &&
                 PartKernelFirst(Hwc{in[1], in[2], ic}, 8 * ElementBytes(ifm.type), filter(1) * filter(2))) {
        // U85: an IFM at the NPU's edge (the graph's input, an RGB image)
        // stays in the DRAM arena in NHWC. Part-kernel-first convolutions
        // read it in IFM blocks 16 channels deep (ArchEthosU85::FindBlockConfig),
        // so each burst carries one block row of a pixel's few channels
        // rather than the 128 bytes of a whole burst
        // (EthosU85Performance's EstimateMemoryTransfer: an NHWC read whose
        // pixel is not the block's depth is a burst of the block depth).
        FeatureMapMemory arena;
        arena.burst_bytes = npu.off_chip_burst_bytes;
        arena.brick_format = false;
        const double bits = 8 * ElementBytes(ifm.type);
        const double bytes = Elements(ifm) * ElementBytes(ifm.type);
        (off_chip(ifm) ? fm_off_chip : fm_sram) -= bytes;
        fm_off_chip += TransferBytes(true, arena, bits, Hwc{1, 1, kU85PartKernelIfmBlockDepth}, hwc(in), bytes);
      }
      break;
    }
    case BuiltinOp::kTransposeConv: {
      c.npu = output_unit(npu.output_cycles);
      c.unit = EthosUCycles::Unit::kElementwise;
      if (block_model || op.inputs.size() < 3 || op.inputs[2] < 0) break;
      // U85: Vela lowers a transposed convolution into one convolution per
      // output phase (stride_h x stride_w of them), each over the whole IFM
      // with the kernel taps of its phase and a strided share of the OFM
      // (Vela's per-layer CSV of encoder_decoder_int8 on ethos-u85-256: a
      // stride-2 3x3 TransposeConv2D is 4 Conv2D layers of 131072, 61440,
      // 61440 and 28800 MACs: 4, 2, 2 and 1 taps over 16 channels).
      // Each phase is priced as a CONV_2D (the cheaper traversal), and each
      // is an operation of its own.
      const auto* tconv = std::get_if<TransposeConvParams>(&op.params);
      const double sh = tconv ? std::max(1, tconv->stride_h) : 1, sw = tconv ? std::max(1, tconv->stride_w) : 1;
      const TensorDef& input = graph.tensors[op.inputs[2]];
      const bool wide_input = ElementBytes(input.type) >= 2;
      const double ic = Shape4(input)[3];
      const double kh = filter(1), kw = filter(2);
      // (Input 0 is the output shape: the IFM's width and memory are input 2's.)
      const double accumulate = wide_input ? npu.output_cycles_mul : npu.output_cycles;
      c.latency = (off_chip(input) ? npu.off_chip_read_latency : npu.sram_read_latency) +
                  (off_chip(ofm) ? npu.off_chip_write_latency : npu.sram_write_latency);
      c.npu = 0;
      c.operations = 0;
      for (double py = 0; py < std::min(sh, kh); ++py) {
        for (double px = 0; px < std::min(sw, kw); ++px) {
          const double taps_h = CeilDiv(kh - py, sh), taps_w = CeilDiv(kw - px, sw);
          const double phase_ublocks = out[0] * CeilDiv(CeilDiv(out[1], sh), npu.ublock_h) *
                                       CeilDiv(CeilDiv(out[2], sw), npu.ublock_w);
          const double depth_first = sub_kernels(taps_h, taps_w, [&](double k) { return k; }) *
                                     CeilDiv(ic, npu.ifm_block_depth) * (wide_input ? 2 : 1);
          const double part_kernel =
              sub_kernels(taps_h, taps_w, [&](double k) { return CeilDiv(k, wide_input ? 2 : 4); }) * CeilDiv(ic, 8);
          c.npu += std::max(ublocks_z * std::max(weight_load, 4 * phase_ublocks) * std::min(depth_first, part_kernel),
                            out_elements / (sh * sw) * std::max(accumulate, activation_cycles));
          c.operations += 1;
        }
      }
      c.unit = EthosUCycles::Unit::kMacArray;
      break;
    }
    case BuiltinOp::kDepthwiseConv2d: {
      const double steps = sub_kernels(filter(1), filter(2), [&](double k) { return CeilDiv(k, 4); });
      c.npu = std::max(ublocks_z * std::max(weight_load, 4 * ublocks_xy * (wide ? 2 : 1)) * steps,
                       output_unit(acc_cycles));
      if (block_model) {
        const auto* dw = std::get_if<DepthwiseConv2DParams>(&op.params);
        BlockQuery q = block_pass(BlockOp::kDepthwise, hwc(out), hwc(in), op.inputs[0], op.outputs[0], output_rate);
        kernel_of(q, filter(1), filter(2), dw ? dw->stride_h : 1, dw ? dw->stride_w : 1, dw ? dw->dilation_h : 1,
                  dw ? dw->dilation_w : 1);
        q.has_bias = true;
        weights = encoded_weights(out[3]);
        c.npu = use_block(q);
      }
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
      if (block_model && kind == BuiltinOp::kFullyConnected) {
        // A vector product over the rows, the filter's depth per row.
        BlockQuery q = block_pass(BlockOp::kVectorProduct, Hwc{1, rows, out[3]}, Hwc{1, rows, ic}, op.inputs[0],
                                  op.outputs[0], output_rate);
        q.has_bias = true;
        weights = encoded_weights(out[3]);
        c.npu = use_block(q);
      } else if (block_model && op.inputs.size() >= 2 && op.inputs[1] >= 0) {
        // Vela's U55/U65 MatMul: for every column of the right operand, an
        // elementwise MUL of the left operand by it into 32-bit products,
        // then a ReduceSum of each row (EthosU55Performance's MatMul cost).
        const std::array<double, 4> rhs = Shape4(graph.tensors[op.inputs[1]]);
        const auto* bmm = std::get_if<BatchMatMulParams>(&op.params);
        const double cols = bmm && bmm->adj_y ? rhs[2] : rhs[3];
        const Hwc lhs = hwc(in);
        BlockQuery mul = block_pass(BlockOp::kElementwise, lhs, lhs, op.inputs[0], -1, npu.output_cycles_mul_32bit);
        mul.has_ifm2 = true;
        mul.ifm2 = lhs;
        mul.ofm_bits = 32;
        BlockQuery sum = block_pass(BlockOp::kReduceSum, Hwc{lhs.h, lhs.w, 1}, lhs, -1, op.outputs[0], npu.output_cycles);
        sum.ifm_bits = 32;
        // The 32-bit products are a scratch tensor of the arena: in DRAM when
        // the arena is (U65). Vela's per-layer CSV of transformer_encoder_int8
        // shows each MatMul reading and writing DRAM there, at 3.4 times its
        // ethos-u55-256 cycles.
        if (npu.feature_maps_off_chip) {
          FeatureMapMemory scratch;
          scratch.read_latency = npu.off_chip_read_latency;
          scratch.write_latency = npu.off_chip_write_latency;
          scratch.bytes_per_cycle = npu.off_chip_bytes_per_cycle;
          scratch.burst_bytes = npu.off_chip_burst_bytes;
          scratch.brick_format = false;
          scratch.off_chip = true;
          mul.ofm_memory = sum.ifm_memory = scratch;
        }
        c.npu = use_block(mul, cols) + use_block(sum, cols);
      }
      break;
    }
    case BuiltinOp::kAveragePool2d:
    case BuiltinOp::kMaxPool2d: {
      const auto* pool = std::get_if<Pool2DParams>(&op.params);
      const double kh = pool ? pool->filter_h : 1, kw = pool ? pool->filter_w : 1;
      const double steps = sub_kernels(kh, kw, [](double k) { return std::max(4.0, k); });
      c.npu = std::max(ublocks_xy * ublocks_z * steps * (wide ? 2 : 1),
                       output_unit(kind == BuiltinOp::kMaxPool2d ? npu.output_cycles_max_pool : npu.output_cycles));
      if (block_model) {
        BlockQuery q = block_pass(BlockOp::kPooling, hwc(out), hwc(in), op.inputs[0], op.outputs[0],
                                  std::max(kind == BuiltinOp::kMaxPool2d ? npu.output_cycles_max_pool : npu.output_cycles,
                                           activation_cycles));
        kernel_of(q, kh, kw, pool ? pool->stride_h : 1, pool ? pool->stride_w : 1, 1, 1);
        c.npu = use_block(q);
      }
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
      if (!block_model) {
        // The U85 resizes natively: one operation that Vela 5.2 prices like
        // an elementwise one, the output unit's rate over the OFM with its
        // depth rounded up to the 16-channel brick and no MAC cycles (its
        // debug database, --enable-debug-db, for encoder_decoder_int8 on
        // ethos-u85-256: ao_cycles 4096 for a 32x32x8 OFM, 32x32x16 x 0.25;
        // the per-layer CSVs of MoveNet, traffic_model and DeepLab agree).
        // Like the other elementwise passes it shows no fixed cost per
        // operation, and Vela's own rate needs no calibrated scale.
        c.npu = out[0] * out[1] * out[2] * RoundUp(out[3], kBrickDepth) * npu.output_cycles * (wide ? 2 : 1);
        c.operations = 0;
      }
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
      if (block_model) {
        // Which axes: the constant second input (int32), else H and W.
        bool channels = false;
        if (op.inputs.size() >= 2 && op.inputs[1] >= 0 && IsConstant(model, graph.tensors[op.inputs[1]]) &&
            graph.tensors[op.inputs[1]].type == DataType::kInt32) {
          const std::span<const uint8_t> data = model.buffers[graph.tensors[op.inputs[1]].buffer].bytes();
          const int rank = static_cast<int>(ifm.shape.size());
          for (size_t k = 0; k + 4 <= data.size(); k += 4) {
            int32_t axis = 0;
            std::memcpy(&axis, data.data() + k, 4);
            if (axis == rank - 1 || axis == -1) channels = true;
          }
        }
        // A mean over the channels (a layer normalisation's) is a depthwise
        // pass along the rows and a multiply by 1/depth per row (Vela's
        // per-layer CSV of transformer_encoder_int8 lists DepthwiseConv2D
        // and Mul for each MEAN); a spatial mean a depthwise pass whose
        // kernel covers the reduced area.
        const double rows = in[0] * in[1] * in[2];
        BlockQuery q = channels ? block_pass(BlockOp::kDepthwise, Hwc{1, rows, 1}, Hwc{1, rows * in[3], 1}, op.inputs[0],
                                             op.outputs[0], npu.output_cycles)
                                : block_pass(BlockOp::kDepthwise, Hwc{in[0], 1, in[3]}, hwc(in), op.inputs[0],
                                             op.outputs[0], npu.output_cycles);
        if (channels) kernel_of(q, 1, in[3], 1, in[3], 1, 1);
        else kernel_of(q, in[1], in[2], 1, 1, 1, 1);
        q.has_bias = true;
        c.npu = use_block(q);
        if (channels) {
          BlockQuery scale = block_pass(BlockOp::kElementwise, Hwc{1, 1, rows}, Hwc{1, 1, rows}, -1, op.outputs[0],
                                        npu.output_cycles_mul);
          c.npu += use_block(scale);
        }
      }
      break;
    }
    case BuiltinOp::kReshape:
    case BuiltinOp::kSqueeze:
    case BuiltinOp::kExpandDims:
    case BuiltinOp::kPad:
    case BuiltinOp::kPadv2:
      // Memory-only reshapes are removed; a PAD becomes the next
      // convolution's padding. Neither is an NPU operation.
      return NoEthosUCycles();
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
      if (block_model) {
        // Each pooling reduces 4 positions' channels, laid along the width,
        // on the 16-bit values the depthwise pass packed (value and index):
        // Vela's per-layer CSV of DeepLab on ethos-u55-256 lists 65792
        // MaxPools of 84 MACs (4 positions x 21 channels), 506 cycles each.
        BlockQuery q = block_pass(BlockOp::kPooling, Hwc{1, 4, 1}, Hwc{1, 4 * in[3], 1}, op.inputs[0], op.outputs[0],
                                  npu.output_cycles_max_pool);
        kernel_of(q, 1, in[3], 1, in[3], 1, 1);
        q.ifm_bits = q.ofm_bits = 16;
        c.npu = use_block(q, c.operations);
        c.operations = 0;
      }
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
      if (block_model) {
        // Vela's per-layer CSV of keras_lstm_mnist_ptq on ethos-u55-256 lists,
        // per time step: 8 FullyConnected (each gate's input and recurrent
        // weights and its 10-byte scales, streamed again every step), 5
        // Add/Mul passes and 7 clamps, LUT activations and copies, each a
        // 1x1 pooling over the units. A fully connected layer takes the
        // longer of its MAC array and its weights' stream.
        const double batch = in[2] > 1 ? in[1] : 1;
        const Hwc gate = {1, batch, units};
        auto stream = [&](double bytes) { return bytes / npu.off_chip_bytes_per_cycle; };
        double step = 0;
        block_traffic = true;  // the weights' traffic is priced here, per layer
        for (double depth : {in[3], units}) {
          BlockQuery fc = block_pass(BlockOp::kVectorProduct, gate, Hwc{1, batch, depth}, op.inputs[0], op.outputs[0],
                                     npu.output_cycles);
          fc.has_bias = true;
          const double bytes = RoundUp(depth * units * ElementBytes(ifm.type), 16) + RoundUp(10 * units, 16);
          // Weights in DRAM are buffered in SRAM first (see use_block); flash weights stream to the MAC array.
          // (Each layer's DMA waits behind the short passes before it: not hidden.)
          const double dma = npu.feature_maps_off_chip ? npu.off_chip_read_latency + bytes / npu.off_chip_bytes_per_cycle : 0;
          step += 4 * std::max(use_block(fc) + dma, npu.feature_maps_off_chip ? 0.0 : stream(bytes));
        }
        BlockQuery add = block_pass(BlockOp::kElementwise, gate, gate, -1, -1, npu.output_cycles_add_sub);
        add.has_ifm2 = true;
        add.ifm2 = gate;
        step += 5 * use_block(add);
        BlockQuery clamp = block_pass(BlockOp::kPooling, gate, gate, -1, -1, npu.activation_cycles_lut);
        step += 7 * use_block(clamp);
        c.npu = steps * step;
        c.operations = steps * 15;
        c.unit = EthosUCycles::Unit::kOther;
        fm_sram = fm_off_chip = weights = sram_writes = off_chip_writes = 0;
      }
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
  // The U85 buffers each layer's encoded weights in SRAM by DMA, and an
  // unrolled LSTM waits for every fully connected layer's DMA of every step:
  // the DRAM's read latency plus its first 16 output channels' weights and
  // scales on the Mem2Mem channel (Vela's EthosU85Performance::MemToMemCycles,
  // NetworkPerformance's initial weight transfer; 16 is the U85's accumulator
  // depth granule). The short passes between the layers hide none of it
  // (Vela's per-layer CSV of keras_lstm_mnist_ptq on ethos-u85-256: 1238 NPU
  // cycles for a 400-MAC recurrent layer). The other layers' waits are not
  // priced this way: the whole-operation model's fitted per-operation cost
  // stands in for them (pricing them so moved the fit to 136 cycles per
  // operation and left memory copies 3 times too cheap).
  if (!block_model && npu.weight_dma_bytes_per_cycle > 0 && kind == BuiltinOp::kUnidirectionalSequenceLstm) {
    const double steps = in[2] > 1 ? in[2] : in[1], units = out[3];
    const double slice = std::min(units, 16.0);
    for (double depth : {in[3], units})
      c.weight_dma += steps * 4 *
                      (npu.off_chip_read_latency +
                       (RoundUp(depth * slice, 16) + RoundUp(10 * slice, 16)) / npu.weight_dma_bytes_per_cycle);
  }
  // On the U85 the fitted per-operation cost stands for the waits of Vela's
  // weight DMA (the LSTM's rule above); a layer waits at most for all of its
  // weights: the DRAM's read latency plus their bytes on the Mem2Mem channel
  // (MemToMemCycles). Vela's debug database of hello_world_int8 on
  // ethos-u85-256 shows such waits (weight_transfer_cycles 704 and 602 for
  // 544 and 272 bytes), below the fitted cost for tiny layers.
  if (!block_model && npu.weight_dma_bytes_per_cycle > 0 && weights > 0 && c.unit == EthosUCycles::Unit::kMacArray &&
      kind != BuiltinOp::kUnidirectionalSequenceLstm)
    c.overhead_cap = npu.off_chip_read_latency + weights / npu.weight_dma_bytes_per_cycle;
  if (block_model) {
    switch (kind) {
      case BuiltinOp::kAdd:
      case BuiltinOp::kSub:
      case BuiltinOp::kMul:
      case BuiltinOp::kMaximum:
      case BuiltinOp::kMinimum: {
        // One elementwise pass; its second operand may be broadcast.
        const double rate = kind == BuiltinOp::kMul ? npu.output_cycles_mul
                            : kind == BuiltinOp::kAdd || kind == BuiltinOp::kSub ? npu.output_cycles_add_sub
                                                                                 : npu.output_cycles;
        BlockQuery q = block_pass(BlockOp::kElementwise, hwc(out), hwc(in), op.inputs[0], op.outputs[0],
                                  std::max(rate, activation_cycles));
        if (op.inputs.size() >= 2 && op.inputs[1] >= 0) {
          const TensorDef& second = graph.tensors[op.inputs[1]];
          q.has_ifm2 = true;
          q.ifm2 = hwc(Shape4(second));
          q.ifm2_memory = memory_of(op.inputs[1]);
          if (IsConstant(model, second)) {
            q.ifm2_memory.read_latency = npu.off_chip_read_latency;
            q.ifm2_memory.bytes_per_cycle = npu.off_chip_bytes_per_cycle;
            q.ifm2_memory.burst_bytes = npu.off_chip_burst_bytes;
            q.ifm2_memory.brick_format = false;
            q.ifm2_memory.off_chip = true;
          }
        }
        c.npu = use_block(q);
        break;
      }
      case BuiltinOp::kLogistic:
      case BuiltinOp::kTanh:
      case BuiltinOp::kHardSwish:
      case BuiltinOp::kLeakyRelu:
      case BuiltinOp::kRelu:
      case BuiltinOp::kRelu6:
      case BuiltinOp::kReluN1To1:
      case BuiltinOp::kQuantize: {
        // A lone clamp or requantization runs as a 1x1 average pooling with
        // the activation fused (Vela's ArchEthosU55::UseAvgPoolNop). Table
        // lookups are priced as an elementwise pass at the LUT rate: as a
        // pooling, the 16-bit sigmoid of encoder_decoder_int16x8 would take
        // 5 times Vela's 1556 cycles on ethos-u55-256.
        const bool lut = kind == BuiltinOp::kLogistic || kind == BuiltinOp::kTanh || kind == BuiltinOp::kHardSwish ||
                         kind == BuiltinOp::kLeakyRelu;
        BlockQuery q = block_pass(lut ? BlockOp::kElementwise : BlockOp::kPooling, hwc(out), hwc(in), op.inputs[0],
                                  op.outputs[0],
                                  std::max(npu.output_cycles, lut ? npu.activation_cycles_lut : npu.activation_cycles_relu));
        c.npu = use_block(q);
        c.operations = 1;
        break;
      }
      case BuiltinOp::kSoftmax: {
        // Vela's int8 softmax (softmax.py, and its per-layer CSV of
        // keyword_scrambled and transformer_encoder_int8 on ethos-u55-256):
        // a max pooling over each row, a subtraction with the exponential's
        // table, a 32-bit shift and a ReduceSum over the full tensor, 22
        // passes over the rows' sums (the reciprocal's Newton-Raphson steps),
        // and a 32-bit multiply and shift over the full tensor again.
        const double depth = in[3], rows = std::max(1.0, in[0] * in[1] * in[2]);
        // (The per-row values are laid along the depth: Vela's per-row passes
        // take 1.125 cycles per row, 72 for the 64 rows of the transformer's.)
        const Hwc full = {rows, 1, depth}, per_row = {1, 1, rows};
        BlockQuery max = block_pass(BlockOp::kPooling, Hwc{1, rows, 1}, Hwc{1, rows * depth, 1}, op.inputs[0], -1,
                                    npu.output_cycles_max_pool);
        kernel_of(max, 1, depth, 1, depth, 1, 1);
        BlockQuery sub = block_pass(BlockOp::kElementwise, full, full, op.inputs[0], -1,
                                    std::max(npu.output_cycles_add_sub, npu.activation_cycles_lut));
        sub.has_ifm2 = true;
        sub.ifm2 = per_row;
        sub.ofm_bits = 32;
        BlockQuery wide_full = block_pass(BlockOp::kElementwise, full, full, -1, -1, npu.output_cycles_32bit_binary);
        wide_full.ifm_bits = wide_full.ofm_bits = 32;
        BlockQuery sum = block_pass(BlockOp::kReduceSum, per_row, full, -1, -1, npu.output_cycles);
        sum.ifm_bits = sum.ofm_bits = 32;
        BlockQuery row = block_pass(BlockOp::kElementwise, per_row, per_row, -1, -1, npu.output_cycles_32bit_binary);
        row.ifm_bits = row.ofm_bits = 32;
        row.has_ifm2 = true;
        row.ifm2 = per_row;
        block_traffic = false;
        c.npu = use_block(max) + use_block(sub) + use_block(wide_full) + use_block(sum) + use_block(row, 22) +
                use_block(wide_full, 2);
        c.unit = EthosUCycles::Unit::kElementwise;
        c.operations = 0;
        break;
      }
      case BuiltinOp::kConcatenation:
      case BuiltinOp::kSplit:
      case BuiltinOp::kSplitV:
      case BuiltinOp::kUnpack:
      case BuiltinOp::kPack: {
        // Each joined input / split output is a MemoryCopy, which the U55/U65
        // run as a 1x1 average pooling (UseAvgPoolNop). A split output read by
        // a single NPU operation is not copied: that operation reads its
        // slice in place (Vela's SplitSliceRead moved onto the consumer).
        const bool joins = kind == BuiltinOp::kConcatenation || kind == BuiltinOp::kPack;
        c.npu = 0;
        c.operations = 0;
        c.latency = 0;
        for (int32_t t : joins ? op.inputs : op.outputs) {
          if (t < 0 || (joins && IsConstant(model, graph.tensors[t]))) continue;
          if (!joins && !is_edge(t)) {
            int consumers = 0;
            for (const OperatorDef& other : graph.operators)
              consumers += std::count(other.inputs.begin(), other.inputs.end(), t) > 0 ? 1 : 0;
            if (consumers == 1) continue;
          }
          const Hwc piece = hwc(Shape4(graph.tensors[t]));
          BlockQuery q = block_pass(BlockOp::kPooling, piece, piece, joins ? t : op.inputs.back(),
                                    joins ? op.outputs[0] : t, npu.output_cycles);
          c.npu += use_block(q);
          c.operations += 1;
        }
        break;
      }
      default:
        break;
    }
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
  // The U85 chains an ADD, SUB or MUL onto the convolution that produces one
  // of its inputs (Vela's per-layer CSV on ethos-u85-256: all 94 ADDs that
  // follow a Conv2D in the shared and zoo models take 0 cycles): the
  // convolution's output unit applies it on the way out and reads the other
  // operand; the elementwise pass disappears.
  if (npu.chains_elementwise_after_convolution) {
    if (ChainedConvolution(model, node) >= 0) return NoEthosUCycles();
    if (ChainedConvolution(model, node + 1) == node) {
      for (int32_t t : graph.operators[node + 1].inputs)
        if (t >= 0 && t != op.outputs[0] && !IsConstant(model, graph.tensors[t])) add_feature_map(graph.tensors[t], false);
    }
  }
  if (npu.fuses_channel_scale_shift && kind == BuiltinOp::kAdd) {
    for (int i = 0; i < static_cast<int>(graph.operators.size()); ++i)
      if (ChannelScaleShiftAdd(model, i) == node) return NoEthosUCycles();
  }
  if (npu.fuses_channel_scale_shift && ChannelScaleShiftAdd(model, node) >= 0) {
    fused_scale_shift = true;
    const OperatorDef& add = graph.operators[ChannelScaleShiftAdd(model, node)];
    for (int32_t t : add.inputs)
      if (t >= 0 && IsConstant(model, graph.tensors[t])) weights += Elements(graph.tensors[t]) * ElementBytes(graph.tensors[t].type);
  }
  // (The block model prices the operand's reads itself, bursts included.)
  if (binary && !fused_scale_shift && !block_model && op.inputs.size() >= 2) {
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
  if (c.weight_choice.open) {
    // Left in DRAM, the weights cross the off-chip port once either way; only their SRAM reads go.
    c.weight_choice.sram_direct = std::max(0.0, fm_sram - weights) / npu.sram_bytes_per_cycle;
    c.weight_choice.off_chip_direct = c.off_chip;
  }
  // A memory's cycles are also bounded by each of its channels (Vela's
  // EthosU85Performance::MeasureAccessCycles: the largest of the total over
  // the port's bandwidth and each channel's bytes over its ChannelBW, which
  // the outstanding transactions and the latency limit: DRAM reads at 500
  // cycles of latency move 3.3 bytes per cycle, not the port's 12).
  if (npu.sram_channel_bytes_per_cycle > 0)
    c.sram = std::max({c.sram, (fm_sram - sram_writes) / npu.sram_channel_bytes_per_cycle,
                       sram_writes / npu.sram_channel_bytes_per_cycle});
  if (npu.off_chip_read_channel_bytes_per_cycle > 0 && npu.off_chip_write_channel_bytes_per_cycle > 0)
    c.off_chip = std::max({c.off_chip, (fm_off_chip - off_chip_writes) / npu.off_chip_read_channel_bytes_per_cycle,
                           weights / npu.off_chip_read_channel_bytes_per_cycle,
                           off_chip_writes / npu.off_chip_write_channel_bytes_per_cycle});
  return c;
}

// Vela's choice for weights read once (Scheduler::ProposeSlicedWeightBuffering
// in its C++ core): buffering is tried only when the buffered read plus the
// DMA's part the previous operation cannot hide beats reading them from DRAM,
// or when the OFM is deeper than two blocks; it is then kept only if the
// operation's estimate, the largest of its NPU cycles, weight reads and IFM
// reads, gets no worse, and the DMA plus the buffered read does not outlast
// the unbuffered estimate. (Op-dominated passes forgive a visible DMA under
// the 1000-cycle STARTUP_DELAY_CYCLES.)
bool EthosUBuffersWeights(const EthosUWeightChoice& w, double slack) {
  if (!w.open) return true;
  const double visible = std::max(0.0, w.transfer - slack);
  if (!(w.read_buffered + visible < w.read_direct || w.depth_slices > 2)) return false;
  const double original = std::max({w.schedule_direct, w.read_direct, w.ifm_read});
  double updated = std::max({w.schedule_buffered + visible, w.read_buffered, w.ifm_read});
  constexpr double kStartupDelayCycles = 1000;
  if (w.schedule_direct > w.read_direct && visible < kStartupDelayCycles) updated -= visible;
  if (original < updated) return false;
  return w.transfer + w.read_buffered <= original;
}

CostTables BuildCostTables(const ModelDef& model, const Target& target, const Target* cpu_target,
                           const std::vector<bool>& npu_nodes) {
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
    auto get_optional = [&](const char* key) {
      for (const auto& [name, number] : acc.ethos_u)
        if (name == key) return Use(number, std::string("ethos_u.") + key, ethos_u_used);
      return 0.0;
    };
    ethos_u.shram_banks = get_optional("shram_banks");
    ethos_u.sram_burst_bytes = get_optional("sram_burst_bytes");
    ethos_u.off_chip_burst_bytes = get_optional("off_chip_burst_bytes");
    ethos_u.output_cycles_mul_32bit = get_optional("output_cycles_mul_32bit");
    ethos_u.output_cycles_32bit_binary = get_optional("output_cycles_32bit_binary");
    ethos_u.weight_dma_bytes_per_cycle = get_optional("weight_dma_bytes_per_cycle");
    ethos_u.chains_elementwise_after_convolution = get_optional("chains_elementwise_after_convolution") != 0;
    ethos_u.sram_channel_bytes_per_cycle = get_optional("sram_channel_bytes_per_cycle");
    ethos_u.off_chip_read_channel_bytes_per_cycle = get_optional("off_chip_read_channel_bytes_per_cycle");
    ethos_u.off_chip_write_channel_bytes_per_cycle = get_optional("off_chip_write_channel_bytes_per_cycle");
    ethos_u.op_overhead_cycles = get("op_overhead_cycles");
    ethos_u.mac_cycle_scale = get("mac_cycle_scale");
    ethos_u.elementwise_cycle_scale = get("elementwise_cycle_scale");
  }

  const std::vector<bool> arena = NpuEdgeTensors(model, npu_nodes);
  for (int i = 0; i < n; ++i) {
    const NodeWork w = NodeWorkOf(model, i);
    if (!acc.ethos_u.empty()) {
      t.ethos_u.push_back(EthosUNodeCycles(model, i, ethos_u, &arena));
      // A weight DMA runs while the previous operation computes (Vela's
      // slack buffering): only what outlasts it is waited for. Weights read
      // once may instead be left in DRAM, when buffering would not pay.
      // The slack is the previous operation's cycles as Vela's scheduler
      // estimates them (Scheduler::ProposeOperatorBuffering's
      // slackBufferingCycles, used again by NetworkPerformance).
      EthosUCycles& c = t.ethos_u[i];
      const EthosUCycles* prev = i > 0 ? &t.ethos_u[i - 1] : nullptr;
      const double slack = prev ? (prev->schedule_npu > 0 ? prev->schedule_npu : prev->npu) : 0;
      if (c.weight_choice.open && !EthosUBuffersWeights(c.weight_choice, slack)) {
        c.npu = c.weight_choice.npu_direct;
        c.schedule_npu = c.weight_choice.schedule_direct;
        c.sram = c.weight_choice.sram_direct;
        c.off_chip = c.weight_choice.off_chip_direct;
        c.weight_dma = 0;
      }
      c.weight_dma = std::max(0.0, c.weight_dma - slack);
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
