// The .tflite reader: the only code that reads the FlatBuffer. Nothing in the
// file is trusted: the FlatBuffers verifier checks the structure first, then
// every index, shape, byte size and enum value is checked here before the
// plain ModelDef is handed to the rest of delegato.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "model/model.h"
#include "model/options_table.h"
#include "tflite_schema_generated.h"

namespace delegato {
namespace {

using model_internal::IsFieldlessOptions;
using model_internal::OptionsTypeFor;

// FlatBuffers use 32-bit offsets: the FlatBuffer part of a file is below 2 GiB.
// Larger files keep their big buffers past it, addressed by Buffer.offset.
constexpr uint64_t kMaxFlatBufferBytes = FLATBUFFERS_MAX_BUFFER_SIZE - 1;
// Buffer.offset values 0 and 1 mean "no external data" (1 is a converter placeholder).
constexpr uint64_t kFirstValidOffset = 2;

std::string ShapeText(const std::vector<int32_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string OpCodeName(const OperatorCodeDef& code) {
  if (code.builtin == BuiltinOp::kCustom) return code.custom_code;
  const auto value = static_cast<int32_t>(code.builtin);
  if (value < 0 || value > kMaxBuiltinOp) return StrCat("BUILTIN_", value);
  return std::string(BuiltinOpName(code.builtin));
}

// Copied bytewise: the verifier checks a vector's length field for 4-byte
// alignment, not its elements, so a hostile file can put an int64 vector at
// an address that is not a multiple of 8. (The format is little-endian, as
// are the hosts delegato supports: tensor data is used in place too.)
template <class T>
std::vector<T> ToVector(const flatbuffers::Vector<T>* v) {
  static_assert(std::is_arithmetic_v<T>);
  if (!v) return {};
  std::vector<T> out(v->size());
  if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}

std::string ToString(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

class Reader {
 public:
  // backing: keeps `data` alive for the model's lifetime (a mapped file);
  // buffers are then views of it instead of copies.
  Reader(const uint8_t* data, size_t size, std::string label,
         std::shared_ptr<const MappedFile> backing = nullptr)
      : data_(data), size_(size), label_(std::move(label)), backing_(std::move(backing)) {}

  std::shared_ptr<ModelDef> Read() {
    CheckHeader();
    const size_t flatbuffer_bytes = static_cast<size_t>(std::min<uint64_t>(size_, kMaxFlatBufferBytes));
    flatbuffers::Verifier::Options options;
    options.max_depth = 64;
    options.max_tables = 10'000'000;
    options.check_alignment = true;
    flatbuffers::Verifier verifier(data_, flatbuffer_bytes, options);
    if (!tflite::VerifyModelBuffer(verifier)) {
      Fail(label_, ": the FlatBuffer is malformed (verifier failed: truncated or corrupt file)");
    }
    fb_ = tflite::GetModel(data_);

    model_ = std::make_shared<ModelDef>();
    model_->mapping = backing_;
    model_->version = fb_->version();
    model_->description = ToString(fb_->description());
    ReadBuffers();
    ReadOperatorCodes();
    ReadSubgraphs();
    ReadMetadata();
    ReadSignatureDefs();
    AlignBufferViews();
    if (size_ > kMaxFlatBufferBytes && !uses_offsets_) {
      Fail(label_, ": file is ", size_,
           " bytes, over the 2 GiB FlatBuffer limit, but no buffer is stored by offset");
    }
    return model_;
  }

 private:
  // ------------------------------------------------------------------ header
  void CheckHeader() {
    if (size_ == 0) Fail(label_, ": file is empty");
    if (size_ < 8) Fail(label_, ": file is ", size_, " bytes, too small for a .tflite model");
    const char* id = reinterpret_cast<const char*>(data_ + 4);
    if (std::memcmp(id, tflite::ModelIdentifier(), 4) != 0) {
      std::string shown;
      for (int i = 0; i < 4; ++i) {
        const unsigned char c = static_cast<unsigned char>(id[i]);
        if (c >= 0x20 && c < 0x7f) {
          shown += static_cast<char>(c);
        } else {
          static const char kHex[] = "0123456789abcdef";
          shown += "\\x";
          shown += kHex[c >> 4];
          shown += kHex[c & 15];
        }
      }
      Fail(label_, ": not a .tflite model: file identifier is \"", shown,
           "\", expected \"TFL3\"");
    }
  }

  // Bytes [offset, offset + size) of the file, checked to lie inside it.
  std::span<const uint8_t> BytesAtOffset(uint64_t offset, uint64_t size, const std::string& what) {
    if (offset > size_ || size > size_ - offset) {
      Fail(what, ": offset ", offset, " + size ", size, " lies past the end of the file (",
           size_, " bytes)");
    }
    uses_offsets_ = true;
    return {data_ + offset, static_cast<size_t>(size)};
  }

  // A view of the mapped file when there is one (AlignBufferViews then
  // copies those its tensors cannot read in place); otherwise a copy.
  BufferDef Buffer(std::span<const uint8_t> bytes) const {
    if (backing_) return BufferDef::View(backing_, bytes.data(), bytes.size());
    return BufferDef(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  }

  // Kernels read constants as arrays of their tensor's type: a view not
  // aligned to every such element size (converters align buffers to 4 bytes
  // or 16, not always to 8) is replaced by a copy, which malloc aligns.
  void AlignBufferViews() {
    if (!backing_) return;
    std::vector<size_t> alignment(model_->buffers.size(), 1);
    for (const SubgraphDef& graph : model_->subgraphs)
      for (const TensorDef& t : graph.tensors)
        if (t.buffer < alignment.size())
          alignment[t.buffer] =
              std::max(alignment[t.buffer], std::min<size_t>(DataTypeSize(t.type), 16));
    for (size_t b = 0; b < model_->buffers.size(); ++b) {
      BufferDef& buffer = model_->buffers[b];
      if (buffer.is_view() && reinterpret_cast<uintptr_t>(buffer.data()) % alignment[b] != 0)
        buffer.mutable_bytes();  // copies
    }
  }

  // ------------------------------------------------------------------ buffers
  void ReadBuffers() {
    const auto* buffers = fb_->buffers();
    if (!buffers) return;
    model_->buffers.resize(buffers->size());
    for (uint32_t i = 0; i < buffers->size(); ++i) {
      const tflite::Buffer* buffer = buffers->Get(i);
      BufferDef& out = model_->buffers[i];
      if (buffer->offset() >= kFirstValidOffset) {
        out = Buffer(
            BytesAtOffset(buffer->offset(), buffer->size(), StrCat(label_, ": buffer ", i)));
      } else if (buffer->data() && buffer->data()->size() > 0) {
        out = Buffer({buffer->data()->data(), buffer->data()->size()});
      }
    }
  }

  void CheckBufferIndex(uint32_t index, const std::string& where) {
    if (index != 0 && index >= model_->buffers.size()) {
      Fail(where, ": buffer ", index, " does not exist (the model has ",
           model_->buffers.size(), " buffers)");
    }
  }

  // ------------------------------------------------------------------ operator codes
  void ReadOperatorCodes() {
    const auto* codes = fb_->operator_codes();
    if (!codes) return;
    model_->operator_codes.resize(codes->size());
    for (uint32_t i = 0; i < codes->size(); ++i) {
      const tflite::OperatorCode* code = codes->Get(i);
      OperatorCodeDef& out = model_->operator_codes[i];
      const std::string where = StrCat(label_, ": operator code ", i);
      const int32_t deprecated = code->deprecated_builtin_code();
      const int32_t builtin = code->builtin_code();
      if (deprecated < 0) Fail(where, ": deprecated_builtin_code ", deprecated, " is negative");
      if (builtin < 0) Fail(where, ": builtin_code ", builtin, " is negative");
      // Old files only have the byte-sized deprecated code; newer ones store
      // codes >= 127 in builtin_code with the placeholder 127 in the byte.
      const int32_t resolved = std::max(deprecated, builtin);
      if (resolved == static_cast<int32_t>(BuiltinOp::kPlaceholderForGreaterOpCodes)) {
        Fail(where, ": deprecated_builtin_code is the placeholder 127 but builtin_code is ",
             builtin);
      }
      out.builtin = static_cast<BuiltinOp>(resolved);
      out.version = code->version();
      if (out.version < 1) Fail(where, ": version ", out.version, " is below 1");
      if (out.builtin == BuiltinOp::kCustom) {
        out.custom_code = ToString(code->custom_code());
        if (out.custom_code.empty()) Fail(where, ": CUSTOM op without a custom_code");
      }
    }
  }

  // ------------------------------------------------------------------ subgraphs
  void ReadSubgraphs() {
    const auto* subgraphs = fb_->subgraphs();
    if (!subgraphs || subgraphs->size() == 0) Fail(label_, ": the model has no subgraph");
    model_->subgraphs.resize(subgraphs->size());
    for (uint32_t s = 0; s < subgraphs->size(); ++s) {
      const tflite::SubGraph* fb_subgraph = subgraphs->Get(s);
      SubgraphDef& subgraph = model_->subgraphs[s];
      subgraph.name = ToString(fb_subgraph->name());
      const std::string where = StrCat(label_, ": subgraph ", s);
      if (const auto* tensors = fb_subgraph->tensors()) {
        subgraph.tensors.resize(tensors->size());
        for (uint32_t t = 0; t < tensors->size(); ++t) {
          ReadTensor(*tensors->Get(t), s, t, subgraph.tensors[t]);
        }
      }
      const size_t tensor_count = subgraph.tensors.size();
      subgraph.inputs = ToVector(fb_subgraph->inputs());
      subgraph.outputs = ToVector(fb_subgraph->outputs());
      CheckTensorList(subgraph.inputs, tensor_count, false, StrCat(where, ": graph input"));
      CheckTensorList(subgraph.outputs, tensor_count, false, StrCat(where, ": graph output"));
      if (const auto* operators = fb_subgraph->operators()) {
        subgraph.operators.resize(operators->size());
        for (uint32_t o = 0; o < operators->size(); ++o) {
          ReadOperator(*operators->Get(o), s, o, tensor_count, subgraph.operators[o]);
        }
      }
    }
  }

  static void CheckTensorList(const std::vector<int32_t>& list, size_t tensor_count,
                              bool allow_omitted, const std::string& what) {
    for (size_t i = 0; i < list.size(); ++i) {
      const int32_t index = list[i];
      if (allow_omitted && index == -1) continue;
      if (index < 0 || static_cast<size_t>(index) >= tensor_count) {
        Fail(what, " ", i, " is tensor ", index, ", but the subgraph has ", tensor_count,
             " tensors");
      }
    }
  }

  void ReadTensor(const tflite::Tensor& fb, uint32_t s, uint32_t t, TensorDef& tensor) {
    tensor.name = ToString(fb.name());
    const std::string where = StrCat(label_, ": subgraph ", s, " tensor ", t, " (\"", tensor.name, "\")");

    const int type_value = static_cast<int>(fb.type());
    if (type_value < 0 || type_value > kMaxDataTypeValue) {
      Fail(where, ": tensor type ", type_value, " is not a valid TensorType");
    }
    tensor.type = static_cast<DataType>(type_value);

    tensor.shape = ToVector(fb.shape());
    int64_t element_count = 1;
    for (size_t d = 0; d < tensor.shape.size(); ++d) {
      const int32_t dim = tensor.shape[d];
      if (dim < 0) Fail(where, ": shape ", ShapeText(tensor.shape), " has negative dimension ", d);
      if (dim != 0 && element_count > std::numeric_limits<int64_t>::max() / dim) {
        Fail(where, ": shape ", ShapeText(tensor.shape), " element count overflows");
      }
      element_count *= dim;
    }
    tensor.shape_signature = ToVector(fb.shape_signature());
    if (!tensor.shape_signature.empty()) {
      if (tensor.shape_signature.size() != tensor.shape.size()) {
        Fail(where, ": shape_signature ", ShapeText(tensor.shape_signature),
             " has a different rank than shape ", ShapeText(tensor.shape));
      }
      for (int32_t dim : tensor.shape_signature) {
        if (dim < -1) {
          Fail(where, ": shape_signature ", ShapeText(tensor.shape_signature),
               " has a dimension below -1");
        }
      }
    }

    tensor.is_variable = fb.is_variable();
    tensor.has_sparsity = fb.sparsity() != nullptr;

    tensor.buffer = fb.buffer();
    CheckBufferIndex(tensor.buffer, where);
    if (tensor.buffer != 0 && !tensor.has_sparsity) {
      const size_t bytes = model_->buffers[tensor.buffer].size();
      const size_t element_size = DataTypeSize(tensor.type);
      // Empty buffers mark non-constant tensors; types without a fixed element
      // size (STRING, INT4, ...) are not executed, so their size is not checked.
      if (bytes != 0 && element_size != 0) {
        const bool overflows =
            element_count > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(element_size);
        const int64_t needed = overflows ? -1 : element_count * static_cast<int64_t>(element_size);
        if (overflows || static_cast<uint64_t>(needed) != bytes) {
          Fail(where, ": buffer ", tensor.buffer, " holds ", bytes, " bytes, ",
               DataTypeName(tensor.type), " ", ShapeText(tensor.shape), " needs ",
               overflows ? std::string("more than 2^63") : std::to_string(needed));
        }
      }
    }

    if (const tflite::QuantizationParameters* q = fb.quantization()) {
      Quantization& out = tensor.quantization;
      out.scale = ToVector(q->scale());
      out.zero_point = ToVector(q->zero_point());
      out.min = ToVector(q->min());
      out.max = ToVector(q->max());
      out.quantized_dimension = q->quantized_dimension();
      if (out.scale.size() != out.zero_point.size()) {
        Fail(where, ": quantization has ", out.scale.size(), " scales but ",
             out.zero_point.size(), " zero points");
      }
      if (out.min.size() != out.max.size()) {
        Fail(where, ": quantization has ", out.min.size(), " min values but ", out.max.size(),
             " max values");
      }
      if (out.scale.size() > 1) {
        // Old converters copied the filter's channel axis (e.g. 3) onto rank-1
        // biases; a vector's only axis is 0 (TFLite Micro reads such files).
        if (tensor.shape.size() == 1 && out.quantized_dimension != 0 &&
            static_cast<size_t>(tensor.shape[0]) == out.scale.size()) {
          out.quantized_dimension = 0;
        }
        const int32_t axis = out.quantized_dimension;
        if (axis < 0 || static_cast<size_t>(axis) >= tensor.shape.size()) {
          Fail(where, ": per-axis quantization on dimension ", axis, " of a rank-",
               tensor.shape.size(), " tensor");
        }
        if (static_cast<size_t>(tensor.shape[axis]) != out.scale.size()) {
          Fail(where, ": per-axis quantization has ", out.scale.size(),
               " scales but dimension ", axis, " of ", ShapeText(tensor.shape), " is ",
               tensor.shape[axis]);
        }
      }
    }
  }

  void ReadOperator(const tflite::Operator& fb, uint32_t s, uint32_t o, size_t tensor_count,
                    OperatorDef& op) {
    op.opcode_index = fb.opcode_index();
    if (op.opcode_index >= model_->operator_codes.size()) {
      Fail(label_, ": subgraph ", s, " operator ", o, ": opcode_index ", op.opcode_index,
           " is out of range (the model has ", model_->operator_codes.size(),
           " operator codes)");
    }
    const OperatorCodeDef& code = model_->operator_codes[op.opcode_index];
    const std::string where =
        StrCat(label_, ": subgraph ", s, " operator ", o, " (", OpCodeName(code), ")");

    op.inputs = ToVector(fb.inputs());
    op.outputs = ToVector(fb.outputs());
    op.intermediates = ToVector(fb.intermediates());
    CheckTensorList(op.inputs, tensor_count, true, StrCat(where, ": input"));
    CheckTensorList(op.outputs, tensor_count, false, StrCat(where, ": output"));
    CheckTensorList(op.intermediates, tensor_count, false, StrCat(where, ": intermediate"));

    if (fb.large_custom_options_offset() >= kFirstValidOffset) {
      const std::span<const uint8_t> bytes = BytesAtOffset(
          fb.large_custom_options_offset(), fb.large_custom_options_size(),
          StrCat(where, ": large custom options"));
      op.custom_options.assign(bytes.begin(), bytes.end());
    } else if (fb.custom_options()) {
      op.custom_options.assign(fb.custom_options()->begin(), fb.custom_options()->end());
    }

    ReadBuiltinOptions(fb, code.builtin, where, op);
    if (fb.builtin_options_2_type() != tflite::BuiltinOptions2::NONE) op.unparsed_options = true;
  }

  // ------------------------------------------------------------------ builtin options
  static Padding ToPadding(tflite::Padding value, const std::string& where) {
    const int v = static_cast<int>(value);
    if (v != 0 && v != 1) Fail(where, ": padding ", v, " is neither SAME nor VALID");
    return static_cast<Padding>(v);
  }

  static Activation ToActivation(tflite::ActivationFunctionType value, const std::string& where) {
    const int v = static_cast<int>(value);
    if (v < 0 || v > static_cast<int>(Activation::kSignBit)) {
      Fail(where, ": fused activation ", v, " is not a known activation");
    }
    return static_cast<Activation>(v);
  }

  static DataType ToType(tflite::TensorType value, const char* field, const std::string& where) {
    const int v = static_cast<int>(value);
    if (v < 0 || v > kMaxDataTypeValue) Fail(where, ": ", field, " ", v, " is not a valid TensorType");
    return static_cast<DataType>(v);
  }

  static void ReadBuiltinOptions(const tflite::Operator& fb, BuiltinOp builtin,
                                 const std::string& where, OperatorDef& op) {
    using BO = tflite::BuiltinOptions;
    const BO type = fb.builtin_options_type();
    if (type == BO::NONE) {
      // CAST without options: the kernel takes the types from its tensors.
      if (builtin == BuiltinOp::kCast) op.params = CastParams{};
      return;
    }
    const BO expected = OptionsTypeFor(builtin);
    if (type != expected) {
      // Only a mismatch on an op whose options delegato interprets is an error;
      // anything else is carried as unparsed.
      if (expected != BO::NONE && !IsFieldlessOptions(expected)) {
        const char* found_name = tflite::EnumNameBuiltinOptions(type);
        Fail(where, ": builtin options are ",
             (found_name && *found_name) ? std::string(found_name)
                                         : StrCat("type ", static_cast<int>(type)),
             ", expected ", tflite::EnumNameBuiltinOptions(expected));
      }
      op.unparsed_options = true;
      return;
    }
    if (IsFieldlessOptions(type)) {
      op.params = EmptyParams{};
      return;
    }
    if (fb.builtin_options() == nullptr) {
      Fail(where, ": builtin options type is ", tflite::EnumNameBuiltinOptions(type),
           " but the options table is missing");
    }

    switch (type) {
      case BO::Conv2DOptions: {
        const auto* o = fb.builtin_options_as_Conv2DOptions();
        Conv2DParams p;
        p.padding = ToPadding(o->padding(), where);
        p.stride_w = o->stride_w();
        p.stride_h = o->stride_h();
        p.dilation_w = o->dilation_w_factor();
        p.dilation_h = o->dilation_h_factor();
        p.activation = ToActivation(o->fused_activation_function(), where);
        p.quantized_bias_type = ToType(o->quantized_bias_type(), "quantized_bias_type", where);
        op.params = p;
        break;
      }
      case BO::DepthwiseConv2DOptions: {
        const auto* o = fb.builtin_options_as_DepthwiseConv2DOptions();
        DepthwiseConv2DParams p;
        p.padding = ToPadding(o->padding(), where);
        p.stride_w = o->stride_w();
        p.stride_h = o->stride_h();
        p.depth_multiplier = o->depth_multiplier();
        p.dilation_w = o->dilation_w_factor();
        p.dilation_h = o->dilation_h_factor();
        p.activation = ToActivation(o->fused_activation_function(), where);
        op.params = p;
        break;
      }
      case BO::FullyConnectedOptions: {
        const auto* o = fb.builtin_options_as_FullyConnectedOptions();
        FullyConnectedParams p;
        p.activation = ToActivation(o->fused_activation_function(), where);
        const int format = static_cast<int>(o->weights_format());
        if (format != 0 && format != 1) Fail(where, ": weights_format ", format, " is unknown");
        p.weights_format = static_cast<int8_t>(format);
        p.keep_num_dims = o->keep_num_dims();
        p.asymmetric_quantize_inputs = o->asymmetric_quantize_inputs();
        p.quantized_bias_type = ToType(o->quantized_bias_type(), "quantized_bias_type", where);
        op.params = p;
        // quant_spec is not represented in the params: keep the op unwritable.
        if (o->quant_spec() && o->quant_spec()->size() > 0) op.unparsed_options = true;
        break;
      }
      case BO::Pool2DOptions: {
        const auto* o = fb.builtin_options_as_Pool2DOptions();
        Pool2DParams p;
        p.padding = ToPadding(o->padding(), where);
        p.stride_w = o->stride_w();
        p.stride_h = o->stride_h();
        p.filter_w = o->filter_width();
        p.filter_h = o->filter_height();
        p.activation = ToActivation(o->fused_activation_function(), where);
        op.params = p;
        break;
      }
      case BO::AddOptions: {
        const auto* o = fb.builtin_options_as_AddOptions();
        ElementwiseParams p;
        p.activation = ToActivation(o->fused_activation_function(), where);
        p.pot_scale_int16 = o->pot_scale_int16();
        op.params = p;
        break;
      }
      case BO::SubOptions: {
        const auto* o = fb.builtin_options_as_SubOptions();
        ElementwiseParams p;
        p.activation = ToActivation(o->fused_activation_function(), where);
        p.pot_scale_int16 = o->pot_scale_int16();
        op.params = p;
        break;
      }
      case BO::MulOptions: {
        ElementwiseParams p;
        p.activation = ToActivation(fb.builtin_options_as_MulOptions()->fused_activation_function(), where);
        op.params = p;
        break;
      }
      case BO::DivOptions: {
        ElementwiseParams p;
        p.activation = ToActivation(fb.builtin_options_as_DivOptions()->fused_activation_function(), where);
        op.params = p;
        break;
      }
      case BO::SoftmaxOptions:
        op.params = SoftmaxParams{fb.builtin_options_as_SoftmaxOptions()->beta()};
        break;
      case BO::ConcatenationOptions: {
        const auto* o = fb.builtin_options_as_ConcatenationOptions();
        ConcatenationParams p;
        p.axis = o->axis();
        p.activation = ToActivation(o->fused_activation_function(), where);
        op.params = p;
        break;
      }
      case BO::ReshapeOptions: {
        const auto* o = fb.builtin_options_as_ReshapeOptions();
        ReshapeParams p;
        p.has_new_shape = o->new_shape() != nullptr;
        p.new_shape = ToVector(o->new_shape());
        op.params = std::move(p);
        break;
      }
      case BO::SplitOptions:
        op.params = SplitParams{fb.builtin_options_as_SplitOptions()->num_splits()};
        break;
      case BO::SplitVOptions:
        op.params = SplitParams{fb.builtin_options_as_SplitVOptions()->num_splits()};
        break;
      case BO::ReducerOptions:
        op.params = ReducerParams{fb.builtin_options_as_ReducerOptions()->keep_dims()};
        break;
      case BO::ResizeBilinearOptions: {
        const auto* o = fb.builtin_options_as_ResizeBilinearOptions();
        op.params = ResizeParams{o->align_corners(), o->half_pixel_centers()};
        break;
      }
      case BO::ResizeNearestNeighborOptions: {
        const auto* o = fb.builtin_options_as_ResizeNearestNeighborOptions();
        op.params = ResizeParams{o->align_corners(), o->half_pixel_centers()};
        break;
      }
      case BO::ArgMaxOptions:
        op.params = ArgMinMaxParams{
            ToType(fb.builtin_options_as_ArgMaxOptions()->output_type(), "output_type", where)};
        break;
      case BO::ArgMinOptions:
        op.params = ArgMinMaxParams{
            ToType(fb.builtin_options_as_ArgMinOptions()->output_type(), "output_type", where)};
        break;
      case BO::CastOptions: {
        const auto* o = fb.builtin_options_as_CastOptions();
        CastParams p;
        p.in_type = ToType(o->in_data_type(), "in_data_type", where);
        p.out_type = ToType(o->out_data_type(), "out_data_type", where);
        p.has_types = true;
        op.params = p;
        break;
      }
      case BO::PackOptions: {
        const auto* o = fb.builtin_options_as_PackOptions();
        op.params = PackParams{o->values_count(), o->axis()};
        break;
      }
      case BO::UnpackOptions: {
        const auto* o = fb.builtin_options_as_UnpackOptions();
        op.params = UnpackParams{o->num(), o->axis()};
        break;
      }
      case BO::SqueezeOptions:
        op.params = SqueezeParams{ToVector(fb.builtin_options_as_SqueezeOptions()->squeeze_dims())};
        break;
      case BO::GatherOptions: {
        const auto* o = fb.builtin_options_as_GatherOptions();
        op.params = GatherParams{o->axis(), o->batch_dims()};
        break;
      }
      case BO::StridedSliceOptions: {
        const auto* o = fb.builtin_options_as_StridedSliceOptions();
        StridedSliceParams p;
        p.begin_mask = o->begin_mask();
        p.end_mask = o->end_mask();
        p.ellipsis_mask = o->ellipsis_mask();
        p.new_axis_mask = o->new_axis_mask();
        p.shrink_axis_mask = o->shrink_axis_mask();
        p.offset = o->offset();
        op.params = p;
        break;
      }
      case BO::LeakyReluOptions:
        op.params = LeakyReluParams{fb.builtin_options_as_LeakyReluOptions()->alpha()};
        break;
      case BO::GeluOptions:
        op.params = GeluParams{fb.builtin_options_as_GeluOptions()->approximate()};
        break;
      case BO::L2NormOptions:
        op.params = L2NormParams{
            ToActivation(fb.builtin_options_as_L2NormOptions()->fused_activation_function(), where)};
        break;
      case BO::LocalResponseNormalizationOptions: {
        const auto* o = fb.builtin_options_as_LocalResponseNormalizationOptions();
        op.params = LocalResponseNormParams{o->radius(), o->bias(), o->alpha(), o->beta()};
        break;
      }
      case BO::TransposeConvOptions: {
        const auto* o = fb.builtin_options_as_TransposeConvOptions();
        TransposeConvParams p;
        p.padding = ToPadding(o->padding(), where);
        p.stride_w = o->stride_w();
        p.stride_h = o->stride_h();
        p.activation = ToActivation(o->fused_activation_function(), where);
        // quantized_bias_type is not kept: the bias tensor's own type is authoritative.
        op.params = p;
        break;
      }
      case BO::Conv3DOptions: {
        const auto* o = fb.builtin_options_as_Conv3DOptions();
        Conv3DParams p;
        p.padding = ToPadding(o->padding(), where);
        p.stride_d = o->stride_d();
        p.stride_w = o->stride_w();
        p.stride_h = o->stride_h();
        p.activation = ToActivation(o->fused_activation_function(), where);
        p.dilation_d = o->dilation_d_factor();
        p.dilation_w = o->dilation_w_factor();
        p.dilation_h = o->dilation_h_factor();
        op.params = p;
        break;
      }
      case BO::BatchMatMulOptions: {
        const auto* o = fb.builtin_options_as_BatchMatMulOptions();
        op.params = BatchMatMulParams{o->adj_x(), o->adj_y(), o->asymmetric_quantize_inputs()};
        break;
      }
      case BO::SVDFOptions: {
        const auto* o = fb.builtin_options_as_SVDFOptions();
        SvdfParams p;
        p.rank = o->rank();
        p.activation = ToActivation(o->fused_activation_function(), where);
        p.asymmetric_quantize_inputs = o->asymmetric_quantize_inputs();
        op.params = p;
        break;
      }
      case BO::RNNOptions: {
        const auto* o = fb.builtin_options_as_RNNOptions();
        RnnParams p;
        p.activation = ToActivation(o->fused_activation_function(), where);
        p.asymmetric_quantize_inputs = o->asymmetric_quantize_inputs();
        op.params = p;
        break;
      }
      case BO::BidirectionalSequenceRNNOptions: {
        const auto* o = fb.builtin_options_as_BidirectionalSequenceRNNOptions();
        RnnParams p;
        p.activation = ToActivation(o->fused_activation_function(), where);
        p.asymmetric_quantize_inputs = o->asymmetric_quantize_inputs();
        p.time_major = o->time_major();
        p.merge_outputs = o->merge_outputs();
        op.params = p;
        break;
      }
      case BO::SequenceRNNOptions: {
        const auto* o = fb.builtin_options_as_SequenceRNNOptions();
        RnnParams p;
        p.activation = ToActivation(o->fused_activation_function(), where);
        p.asymmetric_quantize_inputs = o->asymmetric_quantize_inputs();
        p.time_major = o->time_major();
        op.params = p;
        break;
      }
      case BO::LSTMOptions: {
        const auto* o = fb.builtin_options_as_LSTMOptions();
        SequenceLstmParams p;
        p.activation = ToActivation(o->fused_activation_function(), where);
        p.cell_clip = o->cell_clip();
        p.proj_clip = o->proj_clip();
        p.basic_kernel = o->kernel_type() == tflite::LSTMKernelType::BASIC;
        p.asymmetric_quantize_inputs = o->asymmetric_quantize_inputs();
        op.params = p;
        break;
      }
      case BO::BidirectionalSequenceLSTMOptions: {
        const auto* o = fb.builtin_options_as_BidirectionalSequenceLSTMOptions();
        SequenceLstmParams p;
        p.activation = ToActivation(o->fused_activation_function(), where);
        p.cell_clip = o->cell_clip();
        p.proj_clip = o->proj_clip();
        p.merge_outputs = o->merge_outputs();
        p.time_major = o->time_major();
        p.asymmetric_quantize_inputs = o->asymmetric_quantize_inputs();
        op.params = p;
        break;
      }
      case BO::UnidirectionalSequenceLSTMOptions: {
        const auto* o = fb.builtin_options_as_UnidirectionalSequenceLSTMOptions();
        SequenceLstmParams p;
        p.activation = ToActivation(o->fused_activation_function(), where);
        p.cell_clip = o->cell_clip();
        p.proj_clip = o->proj_clip();
        p.time_major = o->time_major();
        p.asymmetric_quantize_inputs = o->asymmetric_quantize_inputs();
        p.diagonal_recurrent_tensors = o->diagonal_recurrent_tensors();
        op.params = p;
        break;
      }
      case BO::ShapeOptions:
        op.params = ShapeParams{
            ToType(fb.builtin_options_as_ShapeOptions()->out_type(), "out_type", where)};
        break;
      case BO::MirrorPadOptions: {
        const int mode = static_cast<int>(fb.builtin_options_as_MirrorPadOptions()->mode());
        if (mode != 0 && mode != 1) Fail(where, ": mirror pad mode ", mode, " is unknown");
        op.params = MirrorPadParams{static_cast<MirrorPadMode>(mode)};
        break;
      }
      case BO::DepthToSpaceOptions:
        op.params = BlockSizeParams{fb.builtin_options_as_DepthToSpaceOptions()->block_size()};
        break;
      case BO::SpaceToDepthOptions:
        op.params = BlockSizeParams{fb.builtin_options_as_SpaceToDepthOptions()->block_size()};
        break;
      case BO::OneHotOptions:
        op.params = OneHotParams{fb.builtin_options_as_OneHotOptions()->axis()};
        break;
      case BO::CumsumOptions: {
        const auto* o = fb.builtin_options_as_CumsumOptions();
        op.params = CumsumParams{o->exclusive(), o->reverse()};
        break;
      }
      case BO::ReverseSequenceOptions: {
        const auto* o = fb.builtin_options_as_ReverseSequenceOptions();
        op.params = ReverseSequenceParams{o->seq_dim(), o->batch_dim()};
        break;
      }
      case BO::SparseToDenseOptions:
        op.params =
            SparseToDenseParams{fb.builtin_options_as_SparseToDenseOptions()->validate_indices()};
        break;
      case BO::BucketizeOptions:
        op.params = BucketizeParams{ToVector(fb.builtin_options_as_BucketizeOptions()->boundaries())};
        break;
      case BO::UniqueOptions:
        op.params = UniqueParams{
            ToType(fb.builtin_options_as_UniqueOptions()->idx_out_type(), "idx_out_type", where)};
        break;
      case BO::IfOptions: {
        const auto* o = fb.builtin_options_as_IfOptions();
        op.params = IfParams{o->then_subgraph_index(), o->else_subgraph_index()};
        break;
      }
      case BO::WhileOptions: {
        const auto* o = fb.builtin_options_as_WhileOptions();
        op.params = WhileParams{o->cond_subgraph_index(), o->body_subgraph_index()};
        break;
      }
      case BO::CallOnceOptions:
        op.params = CallOnceParams{fb.builtin_options_as_CallOnceOptions()->init_subgraph_index()};
        break;
      case BO::VarHandleOptions: {
        const auto* o = fb.builtin_options_as_VarHandleOptions();
        op.params = VarHandleParams{ToString(o->container()), ToString(o->shared_name())};
        break;
      }
      default:
        // An options table this build declares but does not interpret.
        op.unparsed_options = true;
        break;
    }
  }

  // ------------------------------------------------------------------ metadata, signatures
  void ReadMetadata() {
    if (const auto* metadata_buffers = fb_->metadata_buffer()) {
      for (uint32_t i = 0; i < metadata_buffers->size(); ++i) {
        const int32_t index = metadata_buffers->Get(i);
        if (index < 0 || static_cast<size_t>(index) >= model_->buffers.size()) {
          Fail(label_, ": metadata_buffer ", i, " is buffer ", index, ", but the model has ",
               model_->buffers.size(), " buffers");
        }
      }
    }
    const auto* metadata = fb_->metadata();
    if (!metadata) return;
    model_->metadata.resize(metadata->size());
    for (uint32_t i = 0; i < metadata->size(); ++i) {
      const tflite::Metadata* entry = metadata->Get(i);
      MetadataDef& out = model_->metadata[i];
      out.name = ToString(entry->name());
      out.buffer = entry->buffer();
      if (out.buffer >= model_->buffers.size()) {
        Fail(label_, ": metadata ", i, " (\"", out.name, "\"): buffer ", out.buffer,
             " does not exist (the model has ", model_->buffers.size(), " buffers)");
      }
    }
  }

  void ReadSignatureDefs() {
    const auto* signatures = fb_->signature_defs();
    if (!signatures) return;
    model_->signature_defs.resize(signatures->size());
    for (uint32_t i = 0; i < signatures->size(); ++i) {
      const tflite::SignatureDef* fb_signature = signatures->Get(i);
      SignatureDefinition& out = model_->signature_defs[i];
      out.key = ToString(fb_signature->signature_key());
      out.subgraph_index = fb_signature->subgraph_index();
      const std::string where = StrCat(label_, ": signature ", i, " (\"", out.key, "\")");
      if (out.subgraph_index >= model_->subgraphs.size()) {
        Fail(where, ": subgraph ", out.subgraph_index, " does not exist (the model has ",
             model_->subgraphs.size(), " subgraphs)");
      }
      const size_t tensor_count = model_->subgraphs[out.subgraph_index].tensors.size();
      auto read_maps = [&](const flatbuffers::Vector<flatbuffers::Offset<tflite::TensorMap>>* maps,
                           const char* kind, std::vector<SignatureTensor>& list) {
        if (!maps) return;
        list.resize(maps->size());
        for (uint32_t k = 0; k < maps->size(); ++k) {
          list[k].name = ToString(maps->Get(k)->name());
          list[k].tensor_index = maps->Get(k)->tensor_index();
          if (list[k].tensor_index >= tensor_count) {
            Fail(where, ": ", kind, " \"", list[k].name, "\" is tensor ", list[k].tensor_index,
                 ", but subgraph ", out.subgraph_index, " has ", tensor_count, " tensors");
          }
        }
      };
      read_maps(fb_signature->inputs(), "input", out.inputs);
      read_maps(fb_signature->outputs(), "output", out.outputs);
    }
  }

  const uint8_t* data_;
  size_t size_;
  std::string label_;
  std::shared_ptr<const MappedFile> backing_;
  const tflite::Model* fb_ = nullptr;
  std::shared_ptr<ModelDef> model_;
  bool uses_offsets_ = false;
};

}  // namespace

std::shared_ptr<const ModelDef> ReadModelBuffer(const uint8_t* data, size_t size,
                                                const std::string& label) {
  if (size == 0 || data == nullptr) Fail(label, ": file is empty");
  // FlatBuffer accessors read scalars in place: give them aligned storage.
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0) {
    std::vector<uint8_t> aligned(data, data + size);
    return Reader(aligned.data(), aligned.size(), label).Read();
  }
  return Reader(data, size, label).Read();
}

MappedFile::~MappedFile() {
  if (data != nullptr) munmap(const_cast<uint8_t*>(data), size);
}

void ReleaseMappedPages(const ModelDef& model, const uint8_t* data, size_t size) {
  const MappedFile* file = model.mapping.get();
  if (file == nullptr || data == nullptr || data < file->data ||
      data + size > file->data + file->size)
    return;
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) / page * page;
  // The mapping is read-only and private: dropped pages come back unchanged
  // from the file on the next read.
  if (begin < end) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

namespace {

// The file mapped read-only, or null when it cannot be (not a regular file,
// empty, or mmap refused): the caller then reads it.
std::shared_ptr<const MappedFile> MapFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  std::shared_ptr<MappedFile> file;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void* addr = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr != MAP_FAILED) {
      file = std::make_shared<MappedFile>();
      file->data = static_cast<const uint8_t*>(addr);
      file->size = static_cast<size_t>(st.st_size);
    }
  }
  close(fd);
  return file;
}

}  // namespace

std::shared_ptr<const ModelDef> ReadModelFile(const std::string& path) {
  std::error_code status_error;
  const auto status = std::filesystem::status(path, status_error);
  if (!std::filesystem::exists(status)) Fail(path, ": cannot open: no such file");
  if (std::filesystem::is_directory(status)) Fail(path, ": cannot open: is a directory");
  if (std::shared_ptr<const MappedFile> file = MapFile(path)) {
    const uint8_t* data = file->data;
    const size_t size = file->size;
    std::shared_ptr<const ModelDef> model = Reader(data, size, path, file).Read();
    // Everything but the buffers is parsed into the model: the file's pages
    // need not stay resident; the kernels read their constants back in Prepare.
    ReleaseMappedPages(*model, data, size);
    return model;
  }
  errno = 0;
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) Fail(path, ": cannot open: ", errno ? std::strerror(errno) : "unknown error");
  const std::streamoff end = file.tellg();
  if (end < 0) Fail(path, ": cannot determine the file size");
  std::vector<uint8_t> bytes(static_cast<size_t>(end));
  file.seekg(0);
  if (!bytes.empty() &&
      !file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
    Fail(path, ": read error");
  }
  return ReadModelBuffer(bytes.data(), bytes.size(), path);
}

std::string ModelDef::OpName(const OperatorDef& op) const {
  if (op.opcode_index >= operator_codes.size()) {
    return StrCat("<invalid opcode ", op.opcode_index, ">");
  }
  return OpCodeName(operator_codes[op.opcode_index]);
}

}  // namespace delegato
