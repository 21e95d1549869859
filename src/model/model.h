// The in-memory model: a plain C++ mirror of what a .tflite file holds.
// Only model/reader.cc and model/writer.cc translate between this and the
// FlatBuffer; everything else (runtime, delegates, passes, tools) reads this.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "delegato/types.h"
#include "model/builtin_op.h"
#include "model/op_params.h"

namespace delegato {

struct Quantization {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int32_t quantized_dimension = 0;
  std::vector<float> min, max;  // kept for round trips; kernels do not use them

  bool empty() const { return scale.empty(); }
  bool per_axis() const { return scale.size() > 1; }
};

struct TensorDef {
  std::string name;
  DataType type = DataType::kFloat32;
  std::vector<int32_t> shape;
  std::vector<int32_t> shape_signature;  // -1 marks a dynamic dimension; empty = same as shape
  uint32_t buffer = 0;                   // 0 = no data (the format's empty sentinel)
  Quantization quantization;
  bool is_variable = false;
  bool has_sparsity = false;             // sparse tensors are recognised, not executed
};

struct OperatorCodeDef {
  BuiltinOp builtin = BuiltinOp::kAdd;  // resolved: max(builtin_code, deprecated_builtin_code)
  std::string custom_code;              // set when builtin == kCustom
  int32_t version = 1;
};

struct OperatorDef {
  uint32_t opcode_index = 0;
  std::vector<int32_t> inputs;  // tensor indices; -1 = optional input left out
  std::vector<int32_t> outputs;
  std::vector<int32_t> intermediates;
  OpParams params;                      // std::monostate when the op has no options
  bool unparsed_options = false;        // options of a type this build does not read
  std::vector<uint8_t> custom_options;  // FlexBuffer bytes of custom ops
};

struct SubgraphDef {
  std::string name;
  std::vector<TensorDef> tensors;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::vector<OperatorDef> operators;
};

// A buffer's bytes: owned (models built or edited in memory, or read from a
// caller's bytes), or a view of the mapped .tflite file the model was read
// from (kept alive by `backing`), so weights are not copied.
class BufferDef {
 public:
  BufferDef() = default;
  explicit BufferDef(std::vector<uint8_t> bytes) : owned_(std::move(bytes)) {}
  static BufferDef View(std::shared_ptr<const void> backing, const uint8_t* data, size_t size) {
    BufferDef b;
    b.backing_ = std::move(backing);
    b.view_ = data;
    b.view_size_ = size;
    return b;
  }

  std::span<const uint8_t> bytes() const {
    return backing_ ? std::span<const uint8_t>(view_, view_size_)
                    : std::span<const uint8_t>(owned_);
  }
  const uint8_t* data() const { return bytes().data(); }
  size_t size() const { return bytes().size(); }
  bool empty() const { return size() == 0; }
  bool is_view() const { return backing_ != nullptr; }
  // The bytes to edit (a view is copied first).
  std::vector<uint8_t>& mutable_bytes() {
    if (backing_) {
      owned_.assign(view_, view_ + view_size_);
      backing_.reset();
      view_ = nullptr;
      view_size_ = 0;
    }
    return owned_;
  }

 private:
  std::vector<uint8_t> owned_;
  std::shared_ptr<const void> backing_;
  const uint8_t* view_ = nullptr;
  size_t view_size_ = 0;
};

struct MetadataDef {
  std::string name;
  uint32_t buffer = 0;
};

struct SignatureTensor {
  std::string name;
  uint32_t tensor_index = 0;
};

struct SignatureDefinition {
  std::string key;
  uint32_t subgraph_index = 0;
  std::vector<SignatureTensor> inputs;
  std::vector<SignatureTensor> outputs;
};

// A .tflite file mapped read-only; unmapped with the last model holding it.
struct MappedFile {
  const uint8_t* data = nullptr;
  size_t size = 0;
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();
};

struct ModelDef {
  uint32_t version = 3;
  std::string description;
  std::vector<OperatorCodeDef> operator_codes;
  std::vector<SubgraphDef> subgraphs;  // subgraph 0 is the main graph
  std::vector<BufferDef> buffers;      // buffer 0 is the empty sentinel
  std::vector<MetadataDef> metadata;
  std::vector<SignatureDefinition> signature_defs;
  // The mapped file the buffers view (ReadModelFile), or null.
  std::shared_ptr<const MappedFile> mapping;

  // Convenience for reports: "CONV_2D", or the custom code for custom ops.
  std::string OpName(const OperatorDef& op) const;
};

// Reads and validates a .tflite file (verifier, then every index, shape and
// byte size). Throws delegato::Error naming the file and what is wrong.
// A regular file is mapped read-only and its buffers are views of the
// mapping, not copies (a buffer misaligned for its tensors' element type is
// copied); ReadModelBuffer copies the bytes it keeps.
std::shared_ptr<const ModelDef> ReadModelFile(const std::string& path);
std::shared_ptr<const ModelDef> ReadModelBuffer(const uint8_t* data, size_t size,
                                                const std::string& label = "<buffer>");

// Lets the OS drop the resident pages of [data, data + size) when they lie
// in the model's mapped file (whole pages only): a kernel that has packed a
// constant into its own layout no longer reads it. A later read brings the
// pages back from the file (the same bytes while the file is unchanged).
// Anything else (owned bytes, no mapping) is left alone.
void ReleaseMappedPages(const ModelDef& model, const uint8_t* data, size_t size);

// Serializes a model back to .tflite bytes that TFLite/LiteRT loads.
std::vector<uint8_t> WriteModel(const ModelDef& model);
void WriteModelFile(const ModelDef& model, const std::string& path);

}  // namespace delegato
