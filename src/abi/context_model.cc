#include "abi/context_model.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "abi/builtin_params.h"
#include "core/error.h"

namespace delegato::abi {

namespace {

bool ToDataType(TfLiteType type, DataType* out) {
  switch (type) {
    case kTfLiteFloat32: *out = DataType::kFloat32; return true;
    case kTfLiteInt32: *out = DataType::kInt32; return true;
    case kTfLiteUInt8: *out = DataType::kUInt8; return true;
    case kTfLiteInt64: *out = DataType::kInt64; return true;
    case kTfLiteString: *out = DataType::kString; return true;
    case kTfLiteBool: *out = DataType::kBool; return true;
    case kTfLiteInt16: *out = DataType::kInt16; return true;
    case kTfLiteComplex64: *out = DataType::kComplex64; return true;
    case kTfLiteInt8: *out = DataType::kInt8; return true;
    case kTfLiteFloat16: *out = DataType::kFloat16; return true;
    case kTfLiteFloat64: *out = DataType::kFloat64; return true;
    case kTfLiteComplex128: *out = DataType::kComplex128; return true;
    case kTfLiteUInt64: *out = DataType::kUInt64; return true;
    case kTfLiteResource: *out = DataType::kResource; return true;
    case kTfLiteVariant: *out = DataType::kVariant; return true;
    case kTfLiteUInt32: *out = DataType::kUInt32; return true;
    case kTfLiteUInt16: *out = DataType::kUInt16; return true;
    case kTfLiteInt4: *out = DataType::kInt4; return true;
    case kTfLiteBFloat16: *out = DataType::kBFloat16; return true;
    default: return false;
  }
}

std::vector<int32_t> IntArray(const TfLiteIntArray* array) {
  if (array == nullptr || array->size <= 0) return {};
  return std::vector<int32_t>(array->data, array->data + array->size);
}

// Per-axis scales behind TfLiteAffineQuantization::scale. Released runtimes
// store {int size; float data[]}; newer TF trees {float* data; int size; ...}.
// The expected count (1, or the quantized dimension's size) tells them apart.
bool ReadScales(const void* array, size_t expected, std::vector<float>* scales) {
  if (array == nullptr) return false;
  const auto* classic = static_cast<const TfLiteFloatArrayClassic*>(array);
  const auto* pointer = static_cast<const TfLiteFloatArrayPointer*>(array);
  const bool classic_fits = classic->size > 0 && static_cast<size_t>(classic->size) == expected;
  if (classic_fits) {
    scales->assign(classic->data, classic->data + classic->size);
    return true;
  }
  if (pointer->data != nullptr && pointer->size > 0 && static_cast<size_t>(pointer->size) == expected) {
    scales->assign(pointer->data, pointer->data + pointer->size);
    return true;
  }
  return false;
}

Activation ToActivation(TfLiteFusedActivation a, bool* ok) {
  switch (a) {
    case kTfLiteActNone: return Activation::kNone;
    case kTfLiteActRelu: return Activation::kRelu;
    case kTfLiteActReluN1To1: return Activation::kReluN1To1;
    case kTfLiteActRelu6: return Activation::kRelu6;
    case kTfLiteActTanh: return Activation::kTanh;
    case kTfLiteActSignBit: return Activation::kSignBit;
    default: *ok = false; return Activation::kNone;
  }
}

Padding ToPadding(TfLitePadding p, bool* ok) {
  if (p == kTfLitePaddingSame) return Padding::kSame;
  if (p == kTfLitePaddingValid) return Padding::kValid;
  *ok = false;
  return Padding::kSame;
}

DataType ToTypeOr(TfLiteType type, DataType fallback) {
  DataType out;
  return ToDataType(type, &out) ? out : fallback;
}

// Fills op.params from the host's builtin_data; returns "" or why not.
std::string ReadParams(BuiltinOp op, const void* data, OperatorDef* def) {
  bool ok = true;
  auto need = [&]() { return data != nullptr; };
  switch (op) {
    case BuiltinOp::kConv2d: {
      if (!need()) return "CONV_2D without parameters";
      const auto& p = *static_cast<const TfLiteConvParams*>(data);
      Conv2DParams out;
      out.padding = ToPadding(p.padding, &ok);
      out.stride_w = p.stride_width, out.stride_h = p.stride_height;
      out.dilation_w = p.dilation_width_factor, out.dilation_h = p.dilation_height_factor;
      out.activation = ToActivation(p.activation, &ok);
      out.quantized_bias_type =
          p.quantized_bias_type == kTfLiteNoType ? DataType::kFloat32 : ToTypeOr(p.quantized_bias_type, DataType::kFloat32);
      def->params = out;
      break;
    }
    case BuiltinOp::kDepthwiseConv2d: {
      if (!need()) return "DEPTHWISE_CONV_2D without parameters";
      const auto& p = *static_cast<const TfLiteDepthwiseConvParams*>(data);
      DepthwiseConv2DParams out;
      out.padding = ToPadding(p.padding, &ok);
      out.stride_w = p.stride_width, out.stride_h = p.stride_height;
      out.depth_multiplier = p.depth_multiplier;
      out.dilation_w = p.dilation_width_factor, out.dilation_h = p.dilation_height_factor;
      out.activation = ToActivation(p.activation, &ok);
      def->params = out;
      break;
    }
    case BuiltinOp::kAveragePool2d:
    case BuiltinOp::kMaxPool2d: {
      if (!need()) return "pooling without parameters";
      const auto& p = *static_cast<const TfLitePoolParams*>(data);
      Pool2DParams out;
      out.padding = ToPadding(p.padding, &ok);
      out.stride_w = p.stride_width, out.stride_h = p.stride_height;
      out.filter_w = p.filter_width, out.filter_h = p.filter_height;
      out.activation = ToActivation(p.activation, &ok);
      def->params = out;
      break;
    }
    case BuiltinOp::kFullyConnected: {
      if (!need()) return "FULLY_CONNECTED without parameters";
      const auto& p = *static_cast<const TfLiteFullyConnectedParams*>(data);
      FullyConnectedParams out;
      out.activation = ToActivation(p.activation, &ok);
      out.weights_format = static_cast<int8_t>(p.weights_format);
      out.keep_num_dims = p.keep_num_dims;
      out.asymmetric_quantize_inputs = p.asymmetric_quantize_inputs;
      out.quantized_bias_type =
          p.quantized_bias_type == kTfLiteNoType ? DataType::kFloat32 : ToTypeOr(p.quantized_bias_type, DataType::kFloat32);
      def->params = out;
      break;
    }
    case BuiltinOp::kAdd:
    case BuiltinOp::kSub: {
      ElementwiseParams out;
      if (data) {
        const auto& p = *static_cast<const TfLiteAddSubParams*>(data);
        out.activation = ToActivation(p.activation, &ok);
        out.pot_scale_int16 = p.pot_scale_int16;
      }
      def->params = out;
      break;
    }
    case BuiltinOp::kMul:
    case BuiltinOp::kDiv: {
      ElementwiseParams out;
      if (data) out.activation = ToActivation(static_cast<const TfLiteActivationParams*>(data)->activation, &ok);
      def->params = out;
      break;
    }
    case BuiltinOp::kSoftmax: {
      if (!need()) return "SOFTMAX without parameters";
      def->params = SoftmaxParams{static_cast<const TfLiteSoftmaxParams*>(data)->beta};
      break;
    }
    case BuiltinOp::kConcatenation: {
      if (!need()) return "CONCATENATION without parameters";
      const auto& p = *static_cast<const TfLiteConcatenationParams*>(data);
      ConcatenationParams out;
      out.axis = p.axis;
      out.activation = ToActivation(p.activation, &ok);
      def->params = out;
      break;
    }
    case BuiltinOp::kReshape: {
      ReshapeParams out;
      if (data) {
        const auto& p = *static_cast<const TfLiteReshapeParams*>(data);
        if (p.num_dimensions < 0 || p.num_dimensions > kTfLiteMaxReshapeDims) return "RESHAPE parameters out of range";
        out.new_shape.assign(p.shape, p.shape + p.num_dimensions);
        out.has_new_shape = p.num_dimensions > 0;
      }
      def->params = out;
      break;
    }
    case BuiltinOp::kSqueeze: {
      SqueezeParams out;
      if (data) {
        const auto& p = *static_cast<const TfLiteSqueezeParams*>(data);
        if (p.num_squeeze_dims < 0 || p.num_squeeze_dims > 8) return "SQUEEZE parameters out of range";
        out.squeeze_dims.assign(p.squeeze_dims, p.squeeze_dims + p.num_squeeze_dims);
      }
      def->params = out;
      break;
    }
    case BuiltinOp::kSplit:
    case BuiltinOp::kSplitV: {
      if (!need()) return "SPLIT without parameters";
      def->params = SplitParams{static_cast<const TfLiteSplitParams*>(data)->num_splits};
      break;
    }
    case BuiltinOp::kMean: {
      if (!need()) return "MEAN without parameters";
      def->params = ReducerParams{static_cast<const TfLiteReducerParams*>(data)->keep_dims};
      break;
    }
    case BuiltinOp::kResizeBilinear:
    case BuiltinOp::kResizeNearestNeighbor: {
      ResizeParams out;
      if (data) {
        const auto& p = *static_cast<const TfLiteResizeParams*>(data);
        out.align_corners = p.align_corners;
        out.half_pixel_centers = p.half_pixel_centers;
      }
      def->params = out;
      break;
    }
    case BuiltinOp::kArgMax:
    case BuiltinOp::kArgMin: {
      if (!need()) return "ARG_MAX/ARG_MIN without parameters";
      ArgMinMaxParams out;
      if (!ToDataType(static_cast<const TfLiteArgMinMaxParams*>(data)->output_type, &out.output_type))
        return "ARG_MAX/ARG_MIN output type unknown";
      def->params = out;
      break;
    }
    case BuiltinOp::kCast: {
      CastParams out;
      if (data) {
        const auto& p = *static_cast<const TfLiteCastParams*>(data);
        out.in_type = ToTypeOr(p.in_data_type, DataType::kFloat32);
        out.out_type = ToTypeOr(p.out_data_type, DataType::kFloat32);
        out.has_types = true;
      }
      def->params = out;
      break;
    }
    case BuiltinOp::kPack: {
      if (!need()) return "PACK without parameters";
      const auto& p = *static_cast<const TfLitePackParams*>(data);
      def->params = PackParams{p.values_count, p.axis};
      break;
    }
    case BuiltinOp::kUnpack: {
      if (!need()) return "UNPACK without parameters";
      const auto& p = *static_cast<const TfLiteUnpackParams*>(data);
      def->params = UnpackParams{p.num, p.axis};
      break;
    }
    case BuiltinOp::kGather: {
      GatherParams out;
      if (data) {
        const auto& p = *static_cast<const TfLiteGatherParams*>(data);
        out.axis = p.axis;
        out.batch_dims = p.batch_dims;
      }
      def->params = out;
      break;
    }
    case BuiltinOp::kStridedSlice: {
      if (!need()) return "STRIDED_SLICE without parameters";
      const auto& p = *static_cast<const TfLiteStridedSliceParams*>(data);
      StridedSliceParams out;
      out.begin_mask = p.begin_mask, out.end_mask = p.end_mask, out.ellipsis_mask = p.ellipsis_mask;
      out.new_axis_mask = p.new_axis_mask, out.shrink_axis_mask = p.shrink_axis_mask;
      out.offset = p.offset;
      def->params = out;
      break;
    }
    case BuiltinOp::kSvdf: {
      if (!need()) return "SVDF without parameters";
      const auto& p = *static_cast<const TfLiteSVDFParams*>(data);
      SvdfParams out;
      out.rank = p.rank;
      out.activation = ToActivation(p.activation, &ok);
      out.asymmetric_quantize_inputs = p.asymmetric_quantize_inputs;
      def->params = out;
      break;
    }
    case BuiltinOp::kUnidirectionalSequenceLstm: {
      if (!need()) return "UNIDIRECTIONAL_SEQUENCE_LSTM without parameters";
      const auto& p = *static_cast<const TfLiteUnidirectionalSequenceLSTMParams*>(data);
      SequenceLstmParams out;
      out.activation = ToActivation(p.activation, &ok);
      out.cell_clip = p.cell_clip, out.proj_clip = p.proj_clip;
      out.time_major = p.time_major;
      out.asymmetric_quantize_inputs = p.asymmetric_quantize_inputs;
      out.diagonal_recurrent_tensors = p.diagonal_recurrent_tensors;
      def->params = out;
      break;
    }
    // Ops without parameters in TFLite's C structs.
    case BuiltinOp::kFloorDiv: case BuiltinOp::kSqrt: case BuiltinOp::kRelu: case BuiltinOp::kRelu6:
    case BuiltinOp::kLogistic: case BuiltinOp::kTanh: case BuiltinOp::kQuantize:
    case BuiltinOp::kDequantize: case BuiltinOp::kPad: case BuiltinOp::kPadv2:
    case BuiltinOp::kTranspose: case BuiltinOp::kGatherNd:
      def->params = EmptyParams{};
      break;
    default:
      return "parameters of this op are not read by the plugin";
  }
  return ok ? "" : "a padding or fused activation value delegato does not run";
}

}  // namespace

ContextGraph ReadContextGraph(TfLiteContext* context) {
  ContextGraph graph;
  auto model = std::make_shared<ModelDef>();
  model->buffers.emplace_back();  // the empty sentinel
  model->subgraphs.emplace_back();
  SubgraphDef& sub = model->subgraphs[0];
  DLG_CHECK(context->tensors != nullptr || context->tensors_size == 0, "the host context has no tensors");
  sub.tensors.resize(context->tensors_size);
  std::vector<bool> type_known(context->tensors_size, true);
  for (size_t t = 0; t < context->tensors_size; ++t) {
    const TfLiteTensor& host = context->tensors[t];
    TensorDef& def = sub.tensors[t];
    def.name = host.name ? host.name : "";
    type_known[t] = ToDataType(host.type, &def.type);
    def.shape = IntArray(host.dims);
    if (host.dims_signature && host.dims_signature->size == static_cast<int>(def.shape.size()))
      def.shape_signature = IntArray(host.dims_signature);
    def.is_variable = host.is_variable;
    def.has_sparsity = host.sparsity != nullptr;
    if (host.quantization.type == kTfLiteAffineQuantization && host.quantization.params) {
      const auto* q = static_cast<const TfLiteAffineQuantization*>(host.quantization.params);
      std::vector<int32_t> zero_points = IntArray(q->zero_point);
      const size_t count = zero_points.empty() ? 1 : zero_points.size();
      if (ReadScales(q->scale, count, &def.quantization.scale)) {
        def.quantization.zero_point.assign(zero_points.begin(), zero_points.end());
        if (def.quantization.zero_point.empty()) def.quantization.zero_point.assign(count, 0);
        def.quantization.quantized_dimension = q->quantized_dimension;
      } else {
        type_known[t] = false;
      }
    } else if (host.params.scale != 0) {
      def.quantization.scale = {host.params.scale};
      def.quantization.zero_point = {host.params.zero_point};
    }
    // Constants: read-only data the host mapped from the model file.
    if ((host.allocation_type == kTfLiteMmapRo || host.allocation_type == kTfLitePersistentRo) &&
        host.data != nullptr && host.bytes > 0) {
      const auto* bytes = static_cast<const uint8_t*>(host.data);
      def.buffer = static_cast<uint32_t>(model->buffers.size());
      model->buffers.push_back(BufferDef{std::vector<uint8_t>(bytes, bytes + host.bytes)});
    }
  }

  TfLiteIntArray* plan = nullptr;
  DLG_CHECK(context->GetExecutionPlan(context, &plan) == kTfLiteOk && plan, "GetExecutionPlan failed");
  graph.plan_nodes = IntArray(plan);
  std::map<std::pair<int, std::string>, uint32_t> opcodes;  // (builtin, custom) -> index per version below
  std::vector<bool> produced(context->tensors_size, false), consumed(context->tensors_size, false);
  for (int host_node : graph.plan_nodes) {
    TfLiteNode* node = nullptr;
    TfLiteRegistration* reg = nullptr;
    DLG_CHECK(context->GetNodeAndRegistration(context, host_node, &node, &reg) == kTfLiteOk && node && reg,
              "GetNodeAndRegistration failed for node ", host_node);
    OperatorDef op;
    op.inputs = IntArray(node->inputs);
    op.outputs = IntArray(node->outputs);
    op.intermediates = IntArray(node->intermediates);
    std::string why;
    for (int32_t t : op.inputs) DLG_CHECK(t >= -1 && t < static_cast<int>(context->tensors_size), "node ", host_node, ": tensor index ", t, " out of range");
    for (int32_t t : op.outputs) DLG_CHECK(t >= 0 && t < static_cast<int>(context->tensors_size), "node ", host_node, ": tensor index ", t, " out of range");
    for (int32_t t : op.intermediates) DLG_CHECK(t >= 0 && t < static_cast<int>(context->tensors_size), "node ", host_node, ": tensor index ", t, " out of range");
    OperatorCodeDef code;
    code.version = reg->version;
    if (reg->builtin_code == kTfLiteBuiltinCustom) {
      code.builtin = BuiltinOp::kCustom;
      code.custom_code = reg->custom_name ? reg->custom_name : "";
      if (node->custom_initial_data && node->custom_initial_data_size > 0) {
        const auto* bytes = static_cast<const uint8_t*>(node->custom_initial_data);
        op.custom_options.assign(bytes, bytes + node->custom_initial_data_size);
      }
    } else if (reg->builtin_code == kTfLiteBuiltinDelegate) {
      code.builtin = BuiltinOp::kCustom;
      code.custom_code = reg->custom_name ? reg->custom_name : "DELEGATE";
      why = "a kernel of another delegate";
    } else {
      code.builtin = static_cast<BuiltinOp>(reg->builtin_code);
      why = ReadParams(code.builtin, node->builtin_data, &op);
      if (!why.empty()) op.unparsed_options = true;
    }
    for (auto list : {&op.inputs, &op.outputs})
      for (int32_t t : *list)
        if (t >= 0 && !type_known[t] && why.empty())
          why = StrCat("tensor ", t, " has a type or quantization the plugin does not read");
    const auto key = std::make_pair(static_cast<int>(code.builtin) * 1000 + code.version, code.custom_code);
    auto found = opcodes.find(key);
    if (found == opcodes.end()) {
      found = opcodes.emplace(key, static_cast<uint32_t>(model->operator_codes.size())).first;
      model->operator_codes.push_back(code);
    }
    op.opcode_index = found->second;
    for (int32_t t : op.inputs) if (t >= 0) consumed[t] = true;
    for (int32_t t : op.outputs) produced[t] = true;
    sub.operators.push_back(std::move(op));
    graph.unreadable.push_back(why);
  }
  // The context does not list the graph's inputs and outputs: activations no
  // node produces are inputs, results no node reads are outputs.
  for (size_t t = 0; t < context->tensors_size; ++t) {
    const bool constant = sub.tensors[t].buffer != 0;
    if (consumed[t] && !produced[t] && !constant && !sub.tensors[t].is_variable) sub.inputs.push_back(static_cast<int32_t>(t));
    if (produced[t] && !consumed[t]) sub.outputs.push_back(static_cast<int32_t>(t));
  }
  graph.model = std::move(model);
  return graph;
}

std::shared_ptr<ModelDef> ExtractPartition(const ContextGraph& graph, const std::vector<int>& nodes,
                                           const std::vector<int>& outputs,
                                           std::vector<int>* input_host_tensors) {
  const ModelDef& full = *graph.model;
  const SubgraphDef& source = full.subgraphs[0];
  auto part = std::make_shared<ModelDef>();
  part->buffers.emplace_back();
  part->subgraphs.emplace_back();
  SubgraphDef& sub = part->subgraphs[0];
  std::map<int, int32_t> remap;
  std::map<uint32_t, uint32_t> opcode_remap;
  auto tensor = [&](int32_t t) -> int32_t {
    if (t < 0) return t;
    auto it = remap.find(t);
    if (it != remap.end()) return it->second;
    TensorDef def = source.tensors[t];
    if (def.buffer != 0) {
      const uint32_t buffer = def.buffer;
      def.buffer = static_cast<uint32_t>(part->buffers.size());
      part->buffers.push_back(full.buffers[buffer]);
    }
    const auto index = static_cast<int32_t>(sub.tensors.size());
    sub.tensors.push_back(std::move(def));
    remap.emplace(t, index);
    return index;
  };
  std::set<int> produced;
  for (int n : nodes)
    for (int32_t t : source.operators[n].outputs) produced.insert(t);
  input_host_tensors->clear();
  for (int n : nodes) {
    const OperatorDef& op = source.operators[n];
    for (int32_t t : op.inputs) {
      if (t < 0 || produced.count(t) || source.tensors[t].buffer != 0 || source.tensors[t].is_variable) continue;
      if (std::find(input_host_tensors->begin(), input_host_tensors->end(), t) == input_host_tensors->end())
        input_host_tensors->push_back(t);
    }
  }
  for (int t : *input_host_tensors) sub.inputs.push_back(tensor(t));
  for (int n : nodes) {
    OperatorDef op = source.operators[n];
    for (int32_t& t : op.inputs) t = tensor(t);
    for (int32_t& t : op.outputs) t = tensor(t);
    for (int32_t& t : op.intermediates) t = tensor(t);
    auto it = opcode_remap.find(op.opcode_index);
    if (it == opcode_remap.end()) {
      it = opcode_remap.emplace(op.opcode_index, static_cast<uint32_t>(part->operator_codes.size())).first;
      part->operator_codes.push_back(full.operator_codes[op.opcode_index]);
    }
    op.opcode_index = it->second;
    sub.operators.push_back(std::move(op));
  }
  for (int t : outputs) {
    DLG_CHECK(remap.count(t), "partition output tensor ", t, " is not produced by the partition");
    sub.outputs.push_back(remap[t]);
  }
  return part;
}

}  // namespace delegato::abi
