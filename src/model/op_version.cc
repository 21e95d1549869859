#include "model/op_version.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <variant>

#include "ops/op_table.h"

namespace delegato {
namespace {

// Stands for an input the node leaves out (index -1) or does not have.
constexpr DataType kAbsent = static_cast<DataType>(-1);

// What the rules look at: tensor types, ranks, quantization, and the options.
class NodeView {
 public:
  NodeView(const SubgraphDef& g, const OperatorDef& op) : g_(g), op_(op) {}

  size_t num_inputs() const { return op_.inputs.size(); }
  const TensorDef* Input(size_t i) const { return Tensor(op_.inputs, i); }
  const TensorDef* Output(size_t i) const { return Tensor(op_.outputs, i); }
  DataType In(size_t i) const { return Input(i) ? Input(i)->type : kAbsent; }
  DataType Out(size_t i) const { return Output(i) ? Output(i)->type : kAbsent; }
  size_t InRank(size_t i) const { return Input(i) ? Input(i)->shape.size() : 0; }
  bool InPerChannel(size_t i) const { return Input(i) && Input(i)->quantization.scale.size() > 1; }
  bool OutPerChannel(size_t i) const { return Output(i) && Output(i)->quantization.scale.size() > 1; }
  bool InQuantized(size_t i) const { return Input(i) && !Input(i)->quantization.empty(); }
  float InScale(size_t i) const { return Scale(Input(i)); }
  float OutScale(size_t i) const { return Scale(Output(i)); }
  size_t MaxInputRank() const {
    size_t rank = 0;
    for (size_t i = 0; i < num_inputs(); ++i) rank = std::max(rank, InRank(i));
    return rank;
  }
  // Two inputs of different shapes: the kernel broadcasts.
  bool Broadcasts() const {
    return Input(0) && Input(1) && Input(0)->shape != Input(1)->shape;
  }
  template <class P>
  const P* Params() const {
    return std::get_if<P>(&op_.params);
  }

 private:
  const TensorDef* Tensor(const std::vector<int32_t>& list, size_t i) const {
    if (i >= list.size() || list[i] < 0 || static_cast<size_t>(list[i]) >= g_.tensors.size()) return nullptr;
    return &g_.tensors[static_cast<size_t>(list[i])];
  }
  static float Scale(const TensorDef* t) {
    return t && !t->quantization.scale.empty() ? t->quantization.scale[0] : 0.0f;
  }

  const SubgraphDef& g_;
  const OperatorDef& op_;
};

// The common ladder: version 2 for int8, 3 for int16 (input 0), else 1.
int Int8Int16Ladder(const NodeView& n) {
  if (n.In(0) == DataType::kInt16) return 3;
  if (n.In(0) == DataType::kInt8) return 2;
  return 1;
}

bool IsHybrid(const NodeView& n, size_t weight) {
  return n.In(0) == DataType::kFloat32 && n.In(weight) == DataType::kInt8 && n.Out(0) == DataType::kFloat32;
}

bool IsInt16x8(const NodeView& n) {
  return n.In(0) == DataType::kInt16 && n.In(1) == DataType::kInt8 && n.Out(0) == DataType::kInt16;
}

bool HasQuantizedBias(DataType quantized_bias_type) { return quantized_bias_type != DataType::kFloat32; }

// TFLite's own rule table compares the *filter* with int16 to find 16-bit
// activation convolutions, which int16x8 models (int8 filters) never match;
// the versions below are the ones that introduced 16-bit activations
// (CONV_2D 4, DEPTHWISE_CONV_2D 5, FULLY_CONNECTED 7), which LiteRT registers.
int Conv2DVersion(const NodeView& n) {
  const auto* p = n.Params<Conv2DParams>();
  if (IsInt16x8(n) && p && HasQuantizedBias(p->quantized_bias_type)) return 8;
  // Grouped convolution: the filter covers fewer input channels than the input has.
  if (n.InRank(0) == 4 && n.InRank(1) == 4 && n.Input(0)->shape[3] != n.Input(1)->shape[3]) return 6;
  if (n.In(0) == DataType::kInt16) return 4;
  if (n.In(0) == DataType::kInt8 && n.In(1) == DataType::kInt8) return 3;
  if (n.In(0) == DataType::kInt8 && n.In(1) == DataType::kInt4) return 7;
  if (IsHybrid(n, 1)) return n.InPerChannel(1) ? 5 : 2;
  return 1;
}

int DepthwiseConv2DVersion(const NodeView& n) {
  if (n.In(0) == DataType::kInt16) return 5;
  if (IsHybrid(n, 1)) return n.InPerChannel(1) ? 6 : 4;
  if (n.In(0) == DataType::kInt8 && n.In(1) == DataType::kInt8) return 3;
  if (n.In(0) == DataType::kInt8 && n.In(1) == DataType::kInt4) return 7;
  const auto* p = n.Params<DepthwiseConv2DParams>();
  if (p && (p->dilation_w != 1 || p->dilation_h != 1)) return 2;
  return 1;
}

int FullyConnectedVersion(const NodeView& n) {
  const auto* p = n.Params<FullyConnectedParams>();
  if (n.In(0) == DataType::kInt16 && n.In(1) == DataType::kInt4) return 13;
  if (IsHybrid(n, 1) && n.InPerChannel(1)) return 12;
  if (IsInt16x8(n) && p && HasQuantizedBias(p->quantized_bias_type)) return 11;
  if (n.Input(1) && n.Input(1)->has_sparsity) return 8;
  if (n.In(0) == DataType::kInt16) return 7;
  // Without a bias input at all (not an optional -1), version 6.
  if (n.num_inputs() == 2) return 6;
  if (p && p->keep_num_dims) return 5;
  if (n.In(0) == DataType::kInt8 && n.In(1) == DataType::kInt8) return 4;
  if (n.In(0) == DataType::kInt8 && n.In(1) == DataType::kInt4) return 10;
  if (IsHybrid(n, 1)) return p && p->asymmetric_quantize_inputs ? 9 : 3;
  if (p && p->weights_format != 0) return 2;
  return 1;
}

int MulVersion(const NodeView& n) {
  const DataType t = n.In(0);
  if ((t == DataType::kInt16 && !n.InQuantized(0)) || t == DataType::kUInt32) return 7;
  if (t == DataType::kComplex64) return 6;
  if (t == DataType::kInt64) return 5;
  if (t == DataType::kInt16) return 4;
  const float s1 = n.InScale(0), s2 = n.InScale(1), so = n.OutScale(0);
  if (s1 != 0 && s2 != 0 && so != 0 && s1 * s2 / so >= 1.0f) return 3;
  if (t == DataType::kInt8) return 2;
  return 1;
}

int AddVersion(const NodeView& n) {
  const DataType t = n.In(0);
  if (t == DataType::kInt16 && !n.InQuantized(0)) return 5;
  if (t == DataType::kInt64) return 4;
  const auto* p = n.Params<ElementwiseParams>();
  if (t == DataType::kInt16 && n.Out(0) == DataType::kInt16 && p && !p->pot_scale_int16) return 3;
  if (t == DataType::kInt8) return 2;
  return 1;
}

int SubVersion(const NodeView& n) {
  const DataType t = n.In(0);
  const auto* p = n.Params<ElementwiseParams>();
  if (t == DataType::kInt16 && n.Out(0) == DataType::kInt16 && p && !p->pot_scale_int16) return 5;
  if (t == DataType::kInt64) return 4;
  if (n.Broadcasts() && n.MaxInputRank() > 4) return 3;
  if (t == DataType::kInt8) return 2;
  return 1;
}

int CastVersion(const NodeView& n) {
  auto either = [&](DataType t) { return n.In(0) == t || n.Out(0) == t; };
  if (either(DataType::kBFloat16)) return 7;
  if (n.In(0) == DataType::kInt4 && n.Out(0) == DataType::kFloat32) return 6;
  if (either(DataType::kFloat64) || either(DataType::kFloat16)) return 5;
  if (either(DataType::kUInt16)) return 4;
  if (either(DataType::kInt8)) return 3;
  if (either(DataType::kUInt32)) return 2;
  return 1;
}

int StridedSliceVersion(const NodeView& n) {
  const auto* p = n.Params<StridedSliceParams>();
  if (p && p->offset) return 8;
  if (n.In(0) == DataType::kUInt32) return 7;
  if (p && (p->ellipsis_mask != 0 || p->new_axis_mask != 0)) return 6;
  if (n.In(0) == DataType::kString) return 5;
  if (n.InRank(0) > 4) return 4;
  if (n.In(0) == DataType::kBool) return 3;
  if (n.In(0) == DataType::kInt8) return 2;
  return 1;
}

int Version(BuiltinOp code, const NodeView& n) {
  const DataType in0 = n.In(0);
  switch (code) {
    case BuiltinOp::kConv2d: return Conv2DVersion(n);
    case BuiltinOp::kDepthwiseConv2d: return DepthwiseConv2DVersion(n);
    case BuiltinOp::kFullyConnected: return FullyConnectedVersion(n);
    case BuiltinOp::kMul: return MulVersion(n);
    case BuiltinOp::kAdd: return AddVersion(n);
    case BuiltinOp::kSub: return SubVersion(n);
    case BuiltinOp::kCast: return CastVersion(n);
    case BuiltinOp::kStridedSlice: return StridedSliceVersion(n);

    case BuiltinOp::kEmbeddingLookup:
      return n.In(1) == DataType::kInt4 || n.InPerChannel(1) ? 4 : 1;
    case BuiltinOp::kGather: {
      if (in0 == DataType::kInt4) return 7;
      if (n.In(1) == DataType::kInt16) return 6;
      const auto* p = n.Params<GatherParams>();
      if (p && p->batch_dims != 0) return 5;
      if (in0 == DataType::kInt16) return 4;
      if (in0 == DataType::kBool) return 3;
      if (in0 == DataType::kInt8) return 2;
      return 1;
    }
    case BuiltinOp::kSvdf: {
      if (in0 == DataType::kInt8) return 3;
      if (IsHybrid(n, 1)) {
        const auto* p = n.Params<SvdfParams>();
        return p && p->asymmetric_quantize_inputs ? 4 : 2;
      }
      return 1;
    }
    case BuiltinOp::kSign: return in0 == DataType::kInt32 ? 2 : 1;
    case BuiltinOp::kMaxPool2d:
    case BuiltinOp::kAveragePool2d:
      if (in0 == DataType::kInt16 && n.Out(0) == DataType::kInt16) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kTranspose:
      if (in0 == DataType::kInt4) return 7;
      if (n.InRank(0) > 5) return 6;
      if (in0 == DataType::kInt16) return 5;
      if (n.InRank(0) > 4) return 4;
      if (in0 == DataType::kBool) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kTransposeConv: {
      // Inputs: output shape, filter, input, optional bias. Version 5 (the
      // quantized_bias_type option) is not reached: TransposeConvParams does not
      // carry that option.
      const auto* p = n.Params<TransposeConvParams>();
      if (p && p->activation != Activation::kNone) return 4;
      if (n.num_inputs() == 4 && n.In(3) != kAbsent) return 3;
      return n.In(1) == DataType::kInt8 ? 2 : 1;
    }
    case BuiltinOp::kLstm: {
      const auto* p = n.Params<SequenceLstmParams>();
      const bool full = !(p && p->basic_kernel);
      if (full && in0 == DataType::kInt16 && n.In(2) == DataType::kInt8 && n.Out(0) == DataType::kInt16) return 5;
      if (full && IsHybrid(n, 2)) return p && p->asymmetric_quantize_inputs ? 4 : 3;
      return full ? 1 : 2;
    }
    case BuiltinOp::kUnidirectionalSequenceLstm: {
      const auto* p = n.Params<SequenceLstmParams>();
      if (in0 == DataType::kInt16 && n.In(2) == DataType::kInt8 && n.Out(0) == DataType::kInt16) return 5;
      if (p && p->diagonal_recurrent_tensors) return 4;
      if (IsHybrid(n, 2)) return p && p->asymmetric_quantize_inputs ? 3 : 2;
      return 1;
    }
    case BuiltinOp::kBidirectionalSequenceLstm: {
      if (n.In(1) == DataType::kInt8 && n.Out(0) == DataType::kFloat32) {
        const auto* p = n.Params<SequenceLstmParams>();
        return p && p->asymmetric_quantize_inputs ? 3 : 2;
      }
      return 1;
    }
    case BuiltinOp::kRnn:
    case BuiltinOp::kUnidirectionalSequenceRnn:
    case BuiltinOp::kBidirectionalSequenceRnn: {
      if (n.In(1) == DataType::kInt8 && n.Out(0) == DataType::kFloat32) {
        const auto* p = n.Params<RnnParams>();
        return p && p->asymmetric_quantize_inputs ? 3 : 2;
      }
      return 1;
    }
    case BuiltinOp::kSplit:  // input 0 is the axis, 1 the data
      if (n.In(1) == DataType::kInt16) return 4;
      if (n.In(1) == DataType::kInt32) return 3;
      return n.In(1) == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kSparseToDense:
      if (n.In(2) == DataType::kInt8 || n.In(2) == DataType::kUInt8) return 3;
      return n.In(2) == DataType::kInt64 ? 2 : 1;
    case BuiltinOp::kSlice:
      if (in0 == DataType::kUInt32) return 6;
      if (n.InRank(0) > 4) return 5;
      if (in0 == DataType::kInt16) return 4;
      if (in0 == DataType::kString) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kUnpack:
      if (in0 == DataType::kInt8 || in0 == DataType::kUInt8) return 2;
      if (in0 == DataType::kBool) return 3;
      if (in0 == DataType::kInt16 && n.Out(0) == DataType::kInt16) return 4;
      return 1;
    case BuiltinOp::kDequantize:
      if (in0 == DataType::kInt4) return 6;
      if (in0 == DataType::kInt16 || in0 == DataType::kFloat16) return 3;
      if (in0 == DataType::kInt8) return n.InPerChannel(0) ? 5 : 2;
      return 1;
    case BuiltinOp::kQuantize:
      if (in0 == DataType::kInt4 || n.Out(0) == DataType::kInt4) return 4;
      if (n.OutPerChannel(0)) return 3;
      return n.Out(0) == DataType::kInt16 ? 2 : 1;
    case BuiltinOp::kFloorDiv:
      if (in0 == DataType::kInt16 || in0 == DataType::kInt8) return 3;
      return in0 == DataType::kFloat32 ? 2 : 1;
    case BuiltinOp::kFloorMod:
      return in0 == DataType::kInt16 || in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kL2Normalization:
      return n.Out(0) == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kAbs:
      if (in0 == DataType::kInt32) return 5;
      if (in0 == DataType::kInt16) return n.InQuantized(0) ? 3 : 4;
      return in0 == DataType::kInt8 || in0 == DataType::kUInt8 ? 2 : 1;
    case BuiltinOp::kRelu:
      if (in0 == DataType::kInt16) return 3;
      return in0 == DataType::kInt8 || in0 == DataType::kUInt8 ? 2 : 1;
    case BuiltinOp::kReverseV2:
      if (in0 == DataType::kInt8) return 3;
      return in0 == DataType::kBool ? 2 : 1;
    case BuiltinOp::kResizeBilinear: {
      if (in0 == DataType::kInt16) return 4;
      const auto* p = n.Params<ResizeParams>();
      if (p && p->half_pixel_centers) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    }
    case BuiltinOp::kResizeNearestNeighbor: {
      if (in0 == DataType::kInt16) return 4;
      const auto* p = n.Params<ResizeParams>();
      if (p && (p->half_pixel_centers || p->align_corners)) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    }
    case BuiltinOp::kMaximum:
    case BuiltinOp::kMinimum:
      if (in0 == DataType::kInt16 && n.Out(0) == DataType::kInt16) return 4;
      if (n.Broadcasts() && n.MaxInputRank() > 4) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kPack:
      if (in0 == DataType::kInt8) return 2;
      if (in0 == DataType::kInt16 && n.Out(0) == DataType::kInt16) return 3;
      return in0 == DataType::kUInt32 ? 4 : 1;
    case BuiltinOp::kTile:
      if (in0 == DataType::kInt8) return 3;
      return in0 == DataType::kString ? 2 : 1;
    case BuiltinOp::kSqueeze:
      return in0 == DataType::kString ? 2 : 1;
    case BuiltinOp::kSpaceToBatchNd:
    case BuiltinOp::kBatchToSpaceNd:
      if (in0 == DataType::kInt16) return 4;
      if (n.InRank(0) != 4) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kGatherNd:
      if (in0 == DataType::kBool) return 5;
      if (n.In(1) == DataType::kInt16) return 4;
      if (in0 == DataType::kInt16) return 3;
      return in0 == DataType::kString ? 2 : 1;
    case BuiltinOp::kDiv:
      return n.Broadcasts() && n.MaxInputRank() > 4 ? 2 : 1;
    case BuiltinOp::kTanh:
    case BuiltinOp::kLogistic:
      if (in0 == DataType::kInt16 && n.Out(0) == DataType::kInt16) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kFill: {
      const DataType value = n.In(1);
      if (value == DataType::kFloat16) return 4;
      if (value == DataType::kInt8 || value == DataType::kInt16) return 3;
      return value == DataType::kBool || value == DataType::kString ? 2 : 1;
    }
    case BuiltinOp::kEqual:
      if (in0 == DataType::kInt16) return 4;
      if (in0 == DataType::kString) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kNotEqual:
      if (in0 == DataType::kString) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kLeakyRelu:
      return in0 == DataType::kInt16 ? 2 : 1;
    case BuiltinOp::kRange:
      return in0 == DataType::kInt64 ? 2 : 1;
    case BuiltinOp::kBatchMatmul: {
      if (in0 == DataType::kInt16) return 3;
      if (in0 == DataType::kInt8) return 2;
      const auto* p = n.Params<BatchMatMulParams>();
      return IsHybrid(n, 1) && p && p->asymmetric_quantize_inputs ? 4 : 1;
    }
    case BuiltinOp::kPad:
    case BuiltinOp::kPadv2:
      if (in0 == DataType::kBool) return 5;
      if (n.InRank(0) > 4) return 4;
      return Int8Int16Ladder(n);
    case BuiltinOp::kConcatenation:
      if (in0 == DataType::kUInt32) return 4;
      return Int8Int16Ladder(n);
    case BuiltinOp::kSoftmax:
    case BuiltinOp::kMean:
    case BuiltinOp::kMirrorPad:
    case BuiltinOp::kReduceMax:
    case BuiltinOp::kReduceMin:
    case BuiltinOp::kRelu6:
    case BuiltinOp::kRsqrt:
      return Int8Int16Ladder(n);
    case BuiltinOp::kArgMax:
    case BuiltinOp::kArgMin:
      if (in0 == DataType::kBool) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kSelect:
      if (in0 == DataType::kUInt32) return 4;
      if (n.InRank(0) == 5 || n.InRank(1) == 5 || n.InRank(2) == 5) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kLess:
    case BuiltinOp::kGreaterEqual:
      return Int8Int16Ladder(n);
    case BuiltinOp::kSelectV2:
      return in0 == DataType::kUInt32 ? 2 : 1;
    case BuiltinOp::kSpaceToDepth:
    case BuiltinOp::kSplitV:
    case BuiltinOp::kSum:
    case BuiltinOp::kLogSoftmax:
    case BuiltinOp::kGreater:
    case BuiltinOp::kLessEqual:
    case BuiltinOp::kSquaredDifference:
    case BuiltinOp::kDepthToSpace:
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kTopkV2:
      if (in0 == DataType::kInt16 || n.In(1) == DataType::kInt16 || n.Out(1) == DataType::kInt16) return 3;
      return in0 == DataType::kInt8 ? 2 : 1;
    case BuiltinOp::kExp:
    case BuiltinOp::kLog:
    case BuiltinOp::kReduceProd:
      return in0 == DataType::kInt8 || in0 == DataType::kInt16 ? 2 : 1;
    case BuiltinOp::kDynamicUpdateSlice:
      if (in0 == DataType::kInt16) return 4;
      if (in0 == DataType::kFloat16) return 3;
      return n.In(2) == DataType::kInt64 ? 2 : 1;
    case BuiltinOp::kBroadcastTo:  // version 1 was withdrawn; 2 is the first
      return in0 == DataType::kInt8 || in0 == DataType::kInt16 ? 3 : 2;
    case BuiltinOp::kWhere:
      return in0 == DataType::kBool ? 1 : 2;
    case BuiltinOp::kGelu:
      return in0 == DataType::kInt8 || in0 == DataType::kUInt8 ? 2 : 1;
    default:
      return 1;
  }
}

BuiltinOp CodeOf(const ModelDef& model, const OperatorDef& op) {
  return model.operator_codes.at(op.opcode_index).builtin;
}

}  // namespace

int MinimumOpVersion(const ModelDef& model, const SubgraphDef& subgraph, const OperatorDef& op) {
  const BuiltinOp code = CodeOf(model, op);
  if (code == BuiltinOp::kCustom) return 1;
  return Version(code, NodeView(subgraph, op));
}

int StampedOpVersion(BuiltinOp code, const SubgraphDef& subgraph, const OperatorDef& op) {
  if (code == BuiltinOp::kCustom) return 1;
  const int version = Version(code, NodeView(subgraph, op));
  const OpKernel* kernel = FindKernel(code, "");
  return kernel ? std::min(version, kernel->max_version) : version;
}

int StampOpVersions(ModelDef& model, VersionStamp mode) {
  std::vector<OperatorCodeDef> codes;
  std::map<std::tuple<BuiltinOp, std::string, int32_t>, uint32_t> index_of;
  int changed = 0;
  for (SubgraphDef& g : model.subgraphs) {
    for (OperatorDef& op : g.operators) {
      OperatorCodeDef code = model.operator_codes.at(op.opcode_index);
      if (code.builtin != BuiltinOp::kCustom) {
        int version = StampedOpVersion(code.builtin, g, op);
        if (mode == VersionStamp::kRaise) version = std::max(version, code.version);
        changed += version != code.version;
        code.version = version;
      }
      const auto key = std::make_tuple(code.builtin, code.custom_code, code.version);
      auto it = index_of.find(key);
      if (it == index_of.end()) {
        it = index_of.emplace(key, static_cast<uint32_t>(codes.size())).first;
        codes.push_back(code);
      }
      op.opcode_index = it->second;
    }
  }
  model.operator_codes = std::move(codes);
  return changed;
}

}  // namespace delegato
