// Graph surgery on subgraph 0 of a ModelDef, for the rewrite passes: find
// producers and consumers, add tensors, constants and operators, remove
// operators, redirect tensor uses, and drop what nothing refers to any more.
// Everything works on the IR; the FlatBuffer is only produced by the writer.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"

namespace delegato::passes {

class GraphEditor {
 public:
  explicit GraphEditor(ModelDef& model);

  ModelDef& model() { return model_; }
  const ModelDef& model() const { return model_; }
  SubgraphDef& graph() { return model_.subgraphs[0]; }
  const SubgraphDef& graph() const { return model_.subgraphs[0]; }
  TensorDef& tensor(int t) { return graph().tensors[t]; }
  const TensorDef& tensor(int t) const { return graph().tensors[t]; }
  OperatorDef& op(int node) { return graph().operators[node]; }
  int num_ops() const { return static_cast<int>(graph().operators.size()); }
  BuiltinOp code(int node) const;
  std::string OpLabel(int node) const;  // "node 61 (AVERAGE_POOL_2D \"AvgPool2D/AvgPool\")"

  // A tensor backed by a non-empty buffer.
  bool IsConstant(int t) const;
  bool IsGraphInput(int t) const;
  bool IsGraphOutput(int t) const;
  // The node writing `t`, or -1 (graph input, constant).
  int Producer(int t) const;
  // (node, input slot) pairs reading `t`, in node order.
  std::vector<std::pair<int, int>> Consumers(int t) const;

  int AddTensor(TensorDef t);
  int AddConstant(std::string name, DataType type, std::vector<int32_t> shape,
                  std::vector<uint8_t> bytes, Quantization q = {});
  template <class T>
  int AddConstantOf(std::string name, DataType type, std::vector<int32_t> shape,
                    const std::vector<T>& values, Quantization q = {}) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return AddConstant(std::move(name), type, std::move(shape), std::move(bytes), std::move(q));
  }

  // The constant's bytes; Mutable copies the buffer first when other tensors share it.
  std::span<const uint8_t> Data(int t) const;
  std::vector<uint8_t>& MutableData(int t);
  template <class T>
  std::vector<T> Values(int t) const {
    const std::span<const uint8_t> bytes = Data(t);
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }
  template <class T>
  void SetValues(int t, const std::vector<T>& values) {
    std::vector<uint8_t>& bytes = MutableData(t);
    bytes.resize(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  }

  // Operator codes are shared: returns the index of (op, version), adding it when new.
  uint32_t Opcode(BuiltinOp op, int version);
  // Inserts an operator before node `position` (num_ops() appends); returns its index.
  int InsertOp(int position, BuiltinOp op, int version, std::vector<int32_t> inputs,
               std::vector<int32_t> outputs, OpParams params);
  void RemoveOp(int node);
  // Every operator input (and graph output, when `graph_outputs`) reading `from` reads `to`.
  void ReplaceUses(int from, int to, bool graph_outputs = false);

  // Drops tensors, buffers and operator codes nothing refers to and renumbers
  // the rest (graph inputs/outputs and signature defs follow).
  void Compact();

 private:
  ModelDef& model_;
};

// A tensor name cut to `width` characters for messages ("abc...xyz").
std::string ShortName(const std::string& name, size_t width = 48);
// Element count of a shape (0 for a dim < 0).
int64_t NumElements(std::span<const int32_t> shape);
// The 8-bit quantized types.
inline bool IsQuant8(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }
// Lower-case dtype name for messages: "int8".
std::string TypeName(DataType t);
// Per-tensor scale / zero point (first entries; 0 when absent).
float ScaleOf(const TensorDef& t);
int64_t ZeroPointOf(const TensorDef& t);
bool SameQuantization(const TensorDef& a, const TensorDef& b);
// A default op version for a new operator working on `type` (int8 needs 2 for most ops).
int VersionFor(BuiltinOp op, DataType type);

}  // namespace delegato::passes
