// The .tflite writer: the only code that builds the FlatBuffer. The output is
// what LiteRT loads (both op code fields, the options table each op expects,
// 16-byte aligned buffers) and what ReadModelBuffer turns back into an equal
// ModelDef.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"
#include "model/model.h"
#include "model/options_table.h"
#include "tflite_schema_generated.h"

namespace delegato {
namespace {

using model_internal::IsFieldlessOptions;
using model_internal::OptionsTypeFor;
using BO = tflite::BuiltinOptions;
using flatbuffers::Offset;

// Inline buffers must fit in the FlatBuffer's 32-bit offsets, with room for the graph.
constexpr uint64_t kMaxInlineBufferBytes = (uint64_t{1} << 31) - (uint64_t{64} << 20);
constexpr int32_t kPlaceholderCode = static_cast<int32_t>(BuiltinOp::kPlaceholderForGreaterOpCodes);
constexpr size_t kBufferAlignment = 16;

tflite::Padding ToFb(Padding p) { return static_cast<tflite::Padding>(p); }
tflite::ActivationFunctionType ToFb(Activation a) {
  return static_cast<tflite::ActivationFunctionType>(a);
}
tflite::TensorType ToFb(DataType t) { return static_cast<tflite::TensorType>(t); }

const char* OptionsName(BO type) {
  const char* name = tflite::EnumNameBuiltinOptions(type);
  return (name && *name) ? name : "unknown options";
}

class Writer {
 public:
  explicit Writer(const ModelDef& model) : model_(model) {}

  std::vector<uint8_t> Write() {
    uint64_t buffer_bytes = 0;
    for (const BufferDef& buffer : model_.buffers) buffer_bytes += buffer.size();
    if (buffer_bytes > kMaxInlineBufferBytes) {
      Fail("cannot write model: its buffers hold ", buffer_bytes,
           " bytes, more than a FlatBuffer can store inline (2 GiB)");
    }
    fbb_ = std::make_unique<flatbuffers::FlatBufferBuilder>(
        static_cast<size_t>(buffer_bytes + buffer_bytes / 8 + (1 << 20)));

    // Buffers first: built back to front, their data lands at the end of the file.
    std::vector<Offset<tflite::Buffer>> buffers;
    buffers.reserve(model_.buffers.size());
    for (const BufferDef& buffer : model_.buffers) {
      if (buffer.empty()) {
        buffers.push_back(tflite::CreateBuffer(*fbb_));
        continue;
      }
      fbb_->ForceVectorAlignment(buffer.size(), 1, kBufferAlignment);
      const auto data = fbb_->CreateVector(buffer.data(), buffer.size());
      buffers.push_back(tflite::CreateBuffer(*fbb_, data));
    }
    const auto buffers_vector = fbb_->CreateVector(buffers);

    std::vector<Offset<tflite::OperatorCode>> codes;
    for (size_t i = 0; i < model_.operator_codes.size(); ++i) codes.push_back(WriteOperatorCode(i));
    const auto codes_vector = fbb_->CreateVector(codes);

    std::vector<Offset<tflite::SubGraph>> subgraphs;
    for (size_t s = 0; s < model_.subgraphs.size(); ++s) subgraphs.push_back(WriteSubgraph(s));
    const auto subgraphs_vector = fbb_->CreateVector(subgraphs);

    std::vector<Offset<tflite::Metadata>> metadata;
    for (const MetadataDef& entry : model_.metadata) {
      if (entry.buffer >= model_.buffers.size()) {
        Fail("cannot write model: metadata \"", entry.name, "\" refers to buffer ", entry.buffer,
             " of ", model_.buffers.size());
      }
      metadata.push_back(tflite::CreateMetadata(*fbb_, fbb_->CreateString(entry.name), entry.buffer));
    }
    const auto metadata_vector = metadata.empty() ? 0 : fbb_->CreateVector(metadata);

    std::vector<Offset<tflite::SignatureDef>> signatures;
    for (const SignatureDefinition& signature : model_.signature_defs) {
      signatures.push_back(WriteSignature(signature));
    }
    const auto signatures_vector = signatures.empty() ? 0 : fbb_->CreateVector(signatures);

    const auto description =
        model_.description.empty() ? 0 : fbb_->CreateString(model_.description);
    const auto root = tflite::CreateModel(*fbb_, model_.version, codes_vector, subgraphs_vector,
                                          description, buffers_vector, /*metadata_buffer=*/0,
                                          metadata_vector, signatures_vector);
    tflite::FinishModelBuffer(*fbb_, root);
    return std::vector<uint8_t>(fbb_->GetBufferPointer(),
                                fbb_->GetBufferPointer() + fbb_->GetSize());
  }

 private:
  Offset<tflite::OperatorCode> WriteOperatorCode(size_t index) {
    const OperatorCodeDef& code = model_.operator_codes[index];
    const int32_t value = static_cast<int32_t>(code.builtin);
    if (value < 0 || value == kPlaceholderCode) {
      Fail("cannot write model: operator code ", index, " has invalid builtin code ", value);
    }
    Offset<flatbuffers::String> custom_code = 0;
    if (code.builtin == BuiltinOp::kCustom) {
      if (code.custom_code.empty()) {
        Fail("cannot write model: operator code ", index, " is CUSTOM without a custom code");
      }
      custom_code = fbb_->CreateString(code.custom_code);
    }
    // Readers predating builtin_code look only at the byte-sized field.
    const auto deprecated = static_cast<int8_t>(std::min(value, kPlaceholderCode));
    return tflite::CreateOperatorCode(*fbb_, deprecated, custom_code, code.version, value);
  }

  Offset<tflite::SubGraph> WriteSubgraph(size_t s) {
    const SubgraphDef& subgraph = model_.subgraphs[s];
    std::vector<Offset<tflite::Tensor>> tensors;
    tensors.reserve(subgraph.tensors.size());
    for (size_t t = 0; t < subgraph.tensors.size(); ++t) tensors.push_back(WriteTensor(s, t));
    const auto tensors_vector = fbb_->CreateVector(tensors);
    const auto inputs = fbb_->CreateVector(subgraph.inputs);
    const auto outputs = fbb_->CreateVector(subgraph.outputs);
    std::vector<Offset<tflite::Operator>> operators;
    operators.reserve(subgraph.operators.size());
    for (size_t o = 0; o < subgraph.operators.size(); ++o) operators.push_back(WriteOperator(s, o));
    const auto operators_vector = fbb_->CreateVector(operators);
    const auto name = subgraph.name.empty() ? 0 : fbb_->CreateString(subgraph.name);
    return tflite::CreateSubGraph(*fbb_, tensors_vector, inputs, outputs, operators_vector, name);
  }

  Offset<tflite::Tensor> WriteTensor(size_t s, size_t t) {
    const TensorDef& tensor = model_.subgraphs[s].tensors[t];
    if (tensor.has_sparsity) {
      Fail("cannot write model: subgraph ", s, " tensor ", t, " (\"", tensor.name,
           "\") is sparse, and sparsity parameters are not kept");
    }
    const auto shape = fbb_->CreateVector(tensor.shape);
    const auto name = fbb_->CreateString(tensor.name);
    Offset<tflite::QuantizationParameters> quantization = 0;
    const Quantization& q = tensor.quantization;
    if (!q.scale.empty() || !q.zero_point.empty() || !q.min.empty() || !q.max.empty() ||
        q.quantized_dimension != 0) {
      const auto min = q.min.empty() ? 0 : fbb_->CreateVector(q.min);
      const auto max = q.max.empty() ? 0 : fbb_->CreateVector(q.max);
      const auto scale = q.scale.empty() ? 0 : fbb_->CreateVector(q.scale);
      const auto zero_point = q.zero_point.empty() ? 0 : fbb_->CreateVector(q.zero_point);
      quantization = tflite::CreateQuantizationParameters(
          *fbb_, min, max, scale, zero_point, tflite::QuantizationDetails::NONE, 0,
          q.quantized_dimension);
    }
    const auto signature =
        tensor.shape_signature.empty() ? 0 : fbb_->CreateVector(tensor.shape_signature);
    return tflite::CreateTensor(*fbb_, shape, ToFb(tensor.type), tensor.buffer, name, quantization,
                                tensor.is_variable, /*sparsity=*/0, signature);
  }

  Offset<tflite::Operator> WriteOperator(size_t s, size_t o) {
    const OperatorDef& op = model_.subgraphs[s].operators[o];
    if (op.opcode_index >= model_.operator_codes.size()) {
      Fail("cannot write model: subgraph ", s, " operator ", o, ": opcode_index ",
           op.opcode_index, " is out of range (", model_.operator_codes.size(), " codes)");
    }
    const std::string where =
        StrCat("cannot write model: subgraph ", s, " operator ", o, " (", model_.OpName(op), ")");
    if (op.unparsed_options) {
      Fail(where, ": its options were not parsed when reading, so they cannot be written");
    }
    const BuiltinOp builtin = model_.operator_codes[op.opcode_index].builtin;
    const auto [options_type, options] = WriteOptions(builtin, op.params, where);
    const auto inputs = fbb_->CreateVector(op.inputs);
    const auto outputs = fbb_->CreateVector(op.outputs);
    const auto custom_options =
        op.custom_options.empty() ? 0 : fbb_->CreateVector(op.custom_options);
    const auto intermediates = op.intermediates.empty() ? 0 : fbb_->CreateVector(op.intermediates);
    return tflite::CreateOperator(*fbb_, op.opcode_index, inputs, outputs, options_type, options,
                                  custom_options, tflite::CustomOptionsFormat::FLEXBUFFERS,
                                  /*mutating_variable_inputs=*/0, intermediates);
  }

  Offset<tflite::SignatureDef> WriteSignature(const SignatureDefinition& signature) {
    auto maps = [&](const std::vector<SignatureTensor>& list) {
      std::vector<Offset<tflite::TensorMap>> out;
      for (const SignatureTensor& entry : list) {
        out.push_back(tflite::CreateTensorMap(*fbb_, fbb_->CreateString(entry.name),
                                              entry.tensor_index));
      }
      return fbb_->CreateVector(out);
    };
    const auto inputs = maps(signature.inputs);
    const auto outputs = maps(signature.outputs);
    const auto key = fbb_->CreateString(signature.key);
    return tflite::CreateSignatureDef(*fbb_, inputs, outputs, key, signature.subgraph_index);
  }

  // The options table for `builtin` built from `params`; NONE for std::monostate.
  std::pair<BO, Offset<void>> WriteOptions(BuiltinOp builtin, const OpParams& params,
                                           const std::string& where) {
    const BO expected = OptionsTypeFor(builtin);
    auto require = [&](bool fits, const char* params_name) {
      if (!fits) {
        Fail(where, ": ", params_name, " do not fit this op (it takes ",
             expected == BO::NONE ? "no options" : OptionsName(expected), ")");
      }
    };
    auto& fbb = *fbb_;
    return std::visit(
        [&](const auto& p) -> std::pair<BO, Offset<void>> {
          using P = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<P, std::monostate>) {
            return {BO::NONE, 0};
          } else if constexpr (std::is_same_v<P, EmptyParams>) {
            require(IsFieldlessOptions(expected), "empty params");
            const auto start = fbb.StartTable();
            return {expected, Offset<void>(fbb.EndTable(start))};
          } else if constexpr (std::is_same_v<P, Conv2DParams>) {
            require(expected == BO::Conv2DOptions, "Conv2DParams");
            return {expected, tflite::CreateConv2DOptions(
                                  fbb, ToFb(p.padding), p.stride_w, p.stride_h,
                                  ToFb(p.activation), p.dilation_w, p.dilation_h,
                                  ToFb(p.quantized_bias_type))
                                  .Union()};
          } else if constexpr (std::is_same_v<P, DepthwiseConv2DParams>) {
            require(expected == BO::DepthwiseConv2DOptions, "DepthwiseConv2DParams");
            return {expected, tflite::CreateDepthwiseConv2DOptions(
                                  fbb, ToFb(p.padding), p.stride_w, p.stride_h,
                                  p.depth_multiplier, ToFb(p.activation), p.dilation_w,
                                  p.dilation_h)
                                  .Union()};
          } else if constexpr (std::is_same_v<P, FullyConnectedParams>) {
            require(expected == BO::FullyConnectedOptions, "FullyConnectedParams");
            return {expected,
                    tflite::CreateFullyConnectedOptions(
                        fbb, ToFb(p.activation),
                        static_cast<tflite::FullyConnectedOptionsWeightsFormat>(p.weights_format),
                        p.keep_num_dims, p.asymmetric_quantize_inputs,
                        ToFb(p.quantized_bias_type))
                        .Union()};
          } else if constexpr (std::is_same_v<P, Pool2DParams>) {
            require(expected == BO::Pool2DOptions, "Pool2DParams");
            return {expected, tflite::CreatePool2DOptions(fbb, ToFb(p.padding), p.stride_w,
                                                          p.stride_h, p.filter_w, p.filter_h,
                                                          ToFb(p.activation))
                                  .Union()};
          } else if constexpr (std::is_same_v<P, ElementwiseParams>) {
            switch (expected) {
              case BO::AddOptions:
                return {expected,
                        tflite::CreateAddOptions(fbb, ToFb(p.activation), p.pot_scale_int16).Union()};
              case BO::SubOptions:
                return {expected,
                        tflite::CreateSubOptions(fbb, ToFb(p.activation), p.pot_scale_int16).Union()};
              case BO::MulOptions:
                return {expected, tflite::CreateMulOptions(fbb, ToFb(p.activation)).Union()};
              case BO::DivOptions:
                return {expected, tflite::CreateDivOptions(fbb, ToFb(p.activation)).Union()};
              default:
                require(false, "ElementwiseParams");
                return {BO::NONE, 0};
            }
          } else if constexpr (std::is_same_v<P, SoftmaxParams>) {
            require(expected == BO::SoftmaxOptions, "SoftmaxParams");
            return {expected, tflite::CreateSoftmaxOptions(fbb, p.beta).Union()};
          } else if constexpr (std::is_same_v<P, ConcatenationParams>) {
            require(expected == BO::ConcatenationOptions, "ConcatenationParams");
            return {expected,
                    tflite::CreateConcatenationOptions(fbb, p.axis, ToFb(p.activation)).Union()};
          } else if constexpr (std::is_same_v<P, ReshapeParams>) {
            require(expected == BO::ReshapeOptions, "ReshapeParams");
            const auto new_shape = p.has_new_shape ? fbb.CreateVector(p.new_shape) : 0;
            return {expected, tflite::CreateReshapeOptions(fbb, new_shape).Union()};
          } else if constexpr (std::is_same_v<P, SplitParams>) {
            if (expected == BO::SplitOptions) {
              return {expected, tflite::CreateSplitOptions(fbb, p.num_splits).Union()};
            }
            require(expected == BO::SplitVOptions, "SplitParams");
            return {expected, tflite::CreateSplitVOptions(fbb, p.num_splits).Union()};
          } else if constexpr (std::is_same_v<P, ReducerParams>) {
            require(expected == BO::ReducerOptions, "ReducerParams");
            return {expected, tflite::CreateReducerOptions(fbb, p.keep_dims).Union()};
          } else if constexpr (std::is_same_v<P, ResizeParams>) {
            if (expected == BO::ResizeBilinearOptions) {
              return {expected, tflite::CreateResizeBilinearOptions(fbb, p.align_corners,
                                                                    p.half_pixel_centers)
                                    .Union()};
            }
            require(expected == BO::ResizeNearestNeighborOptions, "ResizeParams");
            return {expected, tflite::CreateResizeNearestNeighborOptions(fbb, p.align_corners,
                                                                         p.half_pixel_centers)
                                  .Union()};
          } else if constexpr (std::is_same_v<P, ArgMinMaxParams>) {
            if (expected == BO::ArgMaxOptions) {
              return {expected, tflite::CreateArgMaxOptions(fbb, ToFb(p.output_type)).Union()};
            }
            require(expected == BO::ArgMinOptions, "ArgMinMaxParams");
            return {expected, tflite::CreateArgMinOptions(fbb, ToFb(p.output_type)).Union()};
          } else if constexpr (std::is_same_v<P, CastParams>) {
            require(expected == BO::CastOptions, "CastParams");
            if (!p.has_types) return {BO::NONE, 0};
            return {expected,
                    tflite::CreateCastOptions(fbb, ToFb(p.in_type), ToFb(p.out_type)).Union()};
          } else if constexpr (std::is_same_v<P, PackParams>) {
            require(expected == BO::PackOptions, "PackParams");
            return {expected, tflite::CreatePackOptions(fbb, p.values_count, p.axis).Union()};
          } else if constexpr (std::is_same_v<P, UnpackParams>) {
            require(expected == BO::UnpackOptions, "UnpackParams");
            return {expected, tflite::CreateUnpackOptions(fbb, p.num, p.axis).Union()};
          } else if constexpr (std::is_same_v<P, SqueezeParams>) {
            require(expected == BO::SqueezeOptions, "SqueezeParams");
            const auto dims = fbb.CreateVector(p.squeeze_dims);
            return {expected, tflite::CreateSqueezeOptions(fbb, dims).Union()};
          } else if constexpr (std::is_same_v<P, GatherParams>) {
            require(expected == BO::GatherOptions, "GatherParams");
            return {expected, tflite::CreateGatherOptions(fbb, p.axis, p.batch_dims).Union()};
          } else if constexpr (std::is_same_v<P, StridedSliceParams>) {
            require(expected == BO::StridedSliceOptions, "StridedSliceParams");
            return {expected, tflite::CreateStridedSliceOptions(
                                  fbb, p.begin_mask, p.end_mask, p.ellipsis_mask,
                                  p.new_axis_mask, p.shrink_axis_mask, p.offset)
                                  .Union()};
          } else if constexpr (std::is_same_v<P, LeakyReluParams>) {
            require(expected == BO::LeakyReluOptions, "LeakyReluParams");
            return {expected, tflite::CreateLeakyReluOptions(fbb, p.alpha).Union()};
          } else if constexpr (std::is_same_v<P, TransposeConvParams>) {
            require(expected == BO::TransposeConvOptions, "TransposeConvParams");
            return {expected,
                    tflite::CreateTransposeConvOptions(fbb, ToFb(p.padding), p.stride_w,
                                                       p.stride_h, ToFb(p.activation))
                        .Union()};
          } else if constexpr (std::is_same_v<P, Conv3DParams>) {
            require(expected == BO::Conv3DOptions, "Conv3DParams");
            return {expected,
                    tflite::CreateConv3DOptions(fbb, ToFb(p.padding), p.stride_d, p.stride_w,
                                                p.stride_h, ToFb(p.activation), p.dilation_d,
                                                p.dilation_w, p.dilation_h)
                        .Union()};
          } else if constexpr (std::is_same_v<P, SvdfParams>) {
            require(expected == BO::SVDFOptions, "SvdfParams");
            return {expected, tflite::CreateSVDFOptions(fbb, p.rank, ToFb(p.activation),
                                                        p.asymmetric_quantize_inputs)
                                  .Union()};
          } else if constexpr (std::is_same_v<P, RnnParams>) {
            if (expected == BO::BidirectionalSequenceRNNOptions) {
              return {expected, tflite::CreateBidirectionalSequenceRNNOptions(
                                    fbb, p.time_major, ToFb(p.activation), p.merge_outputs,
                                    p.asymmetric_quantize_inputs)
                                    .Union()};
            }
            if (expected == BO::SequenceRNNOptions) {
              return {expected,
                      tflite::CreateSequenceRNNOptions(fbb, p.time_major, ToFb(p.activation),
                                                       p.asymmetric_quantize_inputs)
                          .Union()};
            }
            require(expected == BO::RNNOptions, "RnnParams");
            return {expected, tflite::CreateRNNOptions(fbb, ToFb(p.activation),
                                                       p.asymmetric_quantize_inputs)
                                  .Union()};
          } else if constexpr (std::is_same_v<P, SequenceLstmParams>) {
            if (expected == BO::BidirectionalSequenceLSTMOptions) {
              return {expected, tflite::CreateBidirectionalSequenceLSTMOptions(
                                    fbb, ToFb(p.activation), p.cell_clip, p.proj_clip,
                                    p.merge_outputs, p.time_major, p.asymmetric_quantize_inputs)
                                    .Union()};
            }
            if (expected == BO::LSTMOptions) {
              return {expected,
                      tflite::CreateLSTMOptions(fbb, ToFb(p.activation), p.cell_clip, p.proj_clip,
                                                p.basic_kernel ? tflite::LSTMKernelType::BASIC
                                                               : tflite::LSTMKernelType::FULL,
                                                p.asymmetric_quantize_inputs)
                          .Union()};
            }
            require(expected == BO::UnidirectionalSequenceLSTMOptions, "SequenceLstmParams");
            return {expected, tflite::CreateUnidirectionalSequenceLSTMOptions(
                                  fbb, ToFb(p.activation), p.cell_clip, p.proj_clip,
                                  p.time_major, p.asymmetric_quantize_inputs,
                                  p.diagonal_recurrent_tensors)
                                  .Union()};
          } else if constexpr (std::is_same_v<P, BatchMatMulParams>) {
            require(expected == BO::BatchMatMulOptions, "BatchMatMulParams");
            return {expected, tflite::CreateBatchMatMulOptions(fbb, p.adj_x, p.adj_y,
                                                               p.asymmetric_quantize_inputs)
                                  .Union()};
          } else if constexpr (std::is_same_v<P, GeluParams>) {
            require(expected == BO::GeluOptions, "GeluParams");
            return {expected, tflite::CreateGeluOptions(fbb, p.approximate).Union()};
          } else if constexpr (std::is_same_v<P, L2NormParams>) {
            require(expected == BO::L2NormOptions, "L2NormParams");
            return {expected, tflite::CreateL2NormOptions(fbb, ToFb(p.activation)).Union()};
          } else if constexpr (std::is_same_v<P, LocalResponseNormParams>) {
            require(expected == BO::LocalResponseNormalizationOptions, "LocalResponseNormParams");
            return {expected, tflite::CreateLocalResponseNormalizationOptions(
                                  fbb, p.radius, p.bias, p.alpha, p.beta)
                                  .Union()};
          } else if constexpr (std::is_same_v<P, ShapeParams>) {
            require(expected == BO::ShapeOptions, "ShapeParams");
            return {expected, tflite::CreateShapeOptions(fbb, ToFb(p.out_type)).Union()};
          } else if constexpr (std::is_same_v<P, MirrorPadParams>) {
            require(expected == BO::MirrorPadOptions, "MirrorPadParams");
            return {expected, tflite::CreateMirrorPadOptions(
                                  fbb, static_cast<tflite::MirrorPadMode>(p.mode))
                                  .Union()};
          } else if constexpr (std::is_same_v<P, BlockSizeParams>) {
            if (expected == BO::DepthToSpaceOptions) {
              return {expected, tflite::CreateDepthToSpaceOptions(fbb, p.block_size).Union()};
            }
            require(expected == BO::SpaceToDepthOptions, "BlockSizeParams");
            return {expected, tflite::CreateSpaceToDepthOptions(fbb, p.block_size).Union()};
          } else if constexpr (std::is_same_v<P, OneHotParams>) {
            require(expected == BO::OneHotOptions, "OneHotParams");
            return {expected, tflite::CreateOneHotOptions(fbb, p.axis).Union()};
          } else if constexpr (std::is_same_v<P, CumsumParams>) {
            require(expected == BO::CumsumOptions, "CumsumParams");
            return {expected, tflite::CreateCumsumOptions(fbb, p.exclusive, p.reverse).Union()};
          } else if constexpr (std::is_same_v<P, ReverseSequenceParams>) {
            require(expected == BO::ReverseSequenceOptions, "ReverseSequenceParams");
            return {expected,
                    tflite::CreateReverseSequenceOptions(fbb, p.seq_dim, p.batch_dim).Union()};
          } else if constexpr (std::is_same_v<P, SparseToDenseParams>) {
            require(expected == BO::SparseToDenseOptions, "SparseToDenseParams");
            return {expected,
                    tflite::CreateSparseToDenseOptions(fbb, p.validate_indices).Union()};
          } else if constexpr (std::is_same_v<P, BucketizeParams>) {
            require(expected == BO::BucketizeOptions, "BucketizeParams");
            const auto boundaries = fbb.CreateVector(p.boundaries);
            return {expected, tflite::CreateBucketizeOptions(fbb, boundaries).Union()};
          } else if constexpr (std::is_same_v<P, UniqueParams>) {
            require(expected == BO::UniqueOptions, "UniqueParams");
            return {expected, tflite::CreateUniqueOptions(fbb, ToFb(p.idx_out_type)).Union()};
          } else if constexpr (std::is_same_v<P, IfParams>) {
            require(expected == BO::IfOptions, "IfParams");
            return {expected, tflite::CreateIfOptions(fbb, p.then_subgraph_index,
                                                      p.else_subgraph_index).Union()};
          } else if constexpr (std::is_same_v<P, WhileParams>) {
            require(expected == BO::WhileOptions, "WhileParams");
            return {expected, tflite::CreateWhileOptions(fbb, p.cond_subgraph_index,
                                                         p.body_subgraph_index).Union()};
          } else if constexpr (std::is_same_v<P, CallOnceParams>) {
            require(expected == BO::CallOnceOptions, "CallOnceParams");
            return {expected, tflite::CreateCallOnceOptions(fbb, p.init_subgraph_index).Union()};
          } else if constexpr (std::is_same_v<P, VarHandleParams>) {
            require(expected == BO::VarHandleOptions, "VarHandleParams");
            const auto container = fbb.CreateString(p.container);
            const auto shared_name = fbb.CreateString(p.shared_name);
            return {expected,
                    tflite::CreateVarHandleOptions(fbb, container, shared_name).Union()};
          } else {
            static_assert(!sizeof(P), "every OpParams alternative needs a writer");
          }
        },
        params);
  }

  const ModelDef& model_;
  std::unique_ptr<flatbuffers::FlatBufferBuilder> fbb_;
};

}  // namespace

std::vector<uint8_t> WriteModel(const ModelDef& model) { return Writer(model).Write(); }

void WriteModelFile(const ModelDef& model, const std::string& path) {
  const std::vector<uint8_t> bytes = WriteModel(model);
  WriteFileAtomically(path, {std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
}

}  // namespace delegato
