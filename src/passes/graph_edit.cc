#include "passes/graph_edit.h"

#include <algorithm>
#include <map>

#include "core/error.h"

namespace delegato::passes {

GraphEditor::GraphEditor(ModelDef& model) : model_(model) {
  DLG_CHECK(!model_.subgraphs.empty(), "the model has no subgraph");
  if (model_.buffers.empty()) model_.buffers.emplace_back();  // the empty sentinel
}

BuiltinOp GraphEditor::code(int node) const {
  return model_.operator_codes[graph().operators[node].opcode_index].builtin;
}

std::string GraphEditor::OpLabel(int node) const {
  const OperatorDef& o = graph().operators[node];
  std::string out = StrCat("node ", node, " (", model_.OpName(o));
  if (!o.outputs.empty() && o.outputs[0] >= 0) out += StrCat(" \"", ShortName(tensor(o.outputs[0]).name), "\"");
  return out + ")";
}

bool GraphEditor::IsConstant(int t) const {
  const TensorDef& def = tensor(t);
  return def.buffer != 0 && def.buffer < model_.buffers.size() &&
         !model_.buffers[def.buffer].empty();
}

bool GraphEditor::IsGraphInput(int t) const {
  return std::find(graph().inputs.begin(), graph().inputs.end(), t) != graph().inputs.end();
}

bool GraphEditor::IsGraphOutput(int t) const {
  return std::find(graph().outputs.begin(), graph().outputs.end(), t) != graph().outputs.end();
}

int GraphEditor::Producer(int t) const {
  for (int n = 0; n < num_ops(); ++n)
    for (int32_t o : graph().operators[n].outputs)
      if (o == t) return n;
  return -1;
}

std::vector<std::pair<int, int>> GraphEditor::Consumers(int t) const {
  std::vector<std::pair<int, int>> out;
  for (int n = 0; n < num_ops(); ++n) {
    const auto& inputs = graph().operators[n].inputs;
    for (size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k] == t) out.emplace_back(n, static_cast<int>(k));
  }
  return out;
}

int GraphEditor::AddTensor(TensorDef t) {
  graph().tensors.push_back(std::move(t));
  return static_cast<int>(graph().tensors.size()) - 1;
}

int GraphEditor::AddConstant(std::string name, DataType type, std::vector<int32_t> shape,
                             std::vector<uint8_t> bytes, Quantization q) {
  model_.buffers.push_back(BufferDef{std::move(bytes)});
  TensorDef t;
  t.name = std::move(name);
  t.type = type;
  t.shape = std::move(shape);
  t.quantization = std::move(q);
  t.buffer = static_cast<uint32_t>(model_.buffers.size() - 1);
  return AddTensor(std::move(t));
}

std::span<const uint8_t> GraphEditor::Data(int t) const {
  const TensorDef& def = tensor(t);
  DLG_CHECK(def.buffer < model_.buffers.size(), "tensor ", t, " has an invalid buffer");
  return model_.buffers[def.buffer].bytes();
}

std::vector<uint8_t>& GraphEditor::MutableData(int t) {
  TensorDef& def = tensor(t);
  DLG_CHECK(def.buffer != 0 && def.buffer < model_.buffers.size(), "tensor \"", def.name,
            "\" is not a constant");
  int sharing = 0;
  for (const TensorDef& other : graph().tensors) sharing += other.buffer == def.buffer;
  if (sharing > 1) {  // copy on write: other tensors keep the old bytes
    model_.buffers.push_back(model_.buffers[def.buffer]);
    def.buffer = static_cast<uint32_t>(model_.buffers.size() - 1);
  }
  return model_.buffers[def.buffer].mutable_bytes();
}

uint32_t GraphEditor::Opcode(BuiltinOp op, int version) {
  for (size_t i = 0; i < model_.operator_codes.size(); ++i) {
    const OperatorCodeDef& c = model_.operator_codes[i];
    if (c.builtin == op && c.custom_code.empty() && c.version == version)
      return static_cast<uint32_t>(i);
  }
  model_.operator_codes.push_back(OperatorCodeDef{op, "", version});
  return static_cast<uint32_t>(model_.operator_codes.size() - 1);
}

int GraphEditor::InsertOp(int position, BuiltinOp op, int version, std::vector<int32_t> inputs,
                          std::vector<int32_t> outputs, OpParams params) {
  OperatorDef def;
  def.opcode_index = Opcode(op, version);
  def.inputs = std::move(inputs);
  def.outputs = std::move(outputs);
  def.params = std::move(params);
  position = std::clamp(position, 0, num_ops());
  graph().operators.insert(graph().operators.begin() + position, std::move(def));
  return position;
}

void GraphEditor::RemoveOp(int node) {
  graph().operators.erase(graph().operators.begin() + node);
}

void GraphEditor::ReplaceUses(int from, int to, bool graph_outputs) {
  for (OperatorDef& o : graph().operators)
    for (int32_t& t : o.inputs)
      if (t == from) t = to;
  if (graph_outputs)
    for (int32_t& t : graph().outputs)
      if (t == from) t = to;
}

void GraphEditor::Compact() {
  SubgraphDef& g = graph();
  const int n = static_cast<int>(g.tensors.size());
  std::vector<bool> used(n, false);
  auto mark = [&](int32_t t) {
    if (t >= 0 && t < n) used[t] = true;
  };
  for (const OperatorDef& o : g.operators) {
    for (int32_t t : o.inputs) mark(t);
    for (int32_t t : o.outputs) mark(t);
    for (int32_t t : o.intermediates) mark(t);
  }
  for (int32_t t : g.inputs) mark(t);
  for (int32_t t : g.outputs) mark(t);
  std::vector<int32_t> remap(n, -1);
  std::vector<TensorDef> kept;
  for (int t = 0; t < n; ++t) {
    if (!used[t]) continue;
    remap[t] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(g.tensors[t]));
  }
  g.tensors = std::move(kept);
  auto apply = [&](std::vector<int32_t>& list) {
    for (int32_t& t : list)
      if (t >= 0) t = remap[t];
  };
  for (OperatorDef& o : g.operators) {
    apply(o.inputs);
    apply(o.outputs);
    apply(o.intermediates);
  }
  apply(g.inputs);
  apply(g.outputs);
  for (SignatureDefinition& sig : model_.signature_defs) {
    if (sig.subgraph_index != 0) continue;
    auto fix = [&](std::vector<SignatureTensor>& list) {
      std::vector<SignatureTensor> out;
      for (SignatureTensor s : list) {
        if (s.tensor_index >= static_cast<uint32_t>(n) || remap[s.tensor_index] < 0) continue;
        s.tensor_index = static_cast<uint32_t>(remap[s.tensor_index]);
        out.push_back(s);
      }
      list = std::move(out);
    };
    fix(sig.inputs);
    fix(sig.outputs);
  }

  // Buffers: keep 0, those tensors of any subgraph use, and metadata buffers.
  std::vector<bool> buffer_used(model_.buffers.size(), false);
  if (!buffer_used.empty()) buffer_used[0] = true;
  for (const SubgraphDef& sg : model_.subgraphs)
    for (const TensorDef& t : sg.tensors)
      if (t.buffer < buffer_used.size()) buffer_used[t.buffer] = true;
  for (const MetadataDef& m : model_.metadata)
    if (m.buffer < buffer_used.size()) buffer_used[m.buffer] = true;
  std::vector<uint32_t> buffer_remap(model_.buffers.size(), 0);
  std::vector<BufferDef> buffers;
  for (size_t b = 0; b < model_.buffers.size(); ++b) {
    if (!buffer_used[b]) continue;
    buffer_remap[b] = static_cast<uint32_t>(buffers.size());
    buffers.push_back(std::move(model_.buffers[b]));
  }
  model_.buffers = std::move(buffers);
  for (SubgraphDef& sg : model_.subgraphs)
    for (TensorDef& t : sg.tensors)
      if (t.buffer < buffer_remap.size()) t.buffer = buffer_remap[t.buffer];
  for (MetadataDef& m : model_.metadata)
    if (m.buffer < buffer_remap.size()) m.buffer = buffer_remap[m.buffer];

  // Operator codes: keep those an operator of any subgraph uses.
  std::vector<bool> code_used(model_.operator_codes.size(), false);
  for (const SubgraphDef& sg : model_.subgraphs)
    for (const OperatorDef& o : sg.operators)
      if (o.opcode_index < code_used.size()) code_used[o.opcode_index] = true;
  std::vector<uint32_t> code_remap(model_.operator_codes.size(), 0);
  std::vector<OperatorCodeDef> codes;
  for (size_t c = 0; c < model_.operator_codes.size(); ++c) {
    if (!code_used[c]) continue;
    code_remap[c] = static_cast<uint32_t>(codes.size());
    codes.push_back(std::move(model_.operator_codes[c]));
  }
  model_.operator_codes = std::move(codes);
  for (SubgraphDef& sg : model_.subgraphs)
    for (OperatorDef& o : sg.operators)
      if (o.opcode_index < code_remap.size()) o.opcode_index = code_remap[o.opcode_index];
}

std::string ShortName(const std::string& name, size_t width) {
  if (name.size() <= width || width < 8) return name;
  const size_t head = (width - 3) / 2, tail = width - 3 - head;
  return name.substr(0, head) + "..." + name.substr(name.size() - tail);
}

int64_t NumElements(std::span<const int32_t> shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= std::max<int32_t>(d, 0);
  return n;
}

std::string TypeName(DataType t) {
  std::string name(DataTypeName(t));
  for (char& c : name) c = static_cast<char>(std::tolower(c));
  return name;
}

float ScaleOf(const TensorDef& t) {
  return t.quantization.scale.empty() ? 0.0f : t.quantization.scale[0];
}

int64_t ZeroPointOf(const TensorDef& t) {
  return t.quantization.zero_point.empty() ? 0 : t.quantization.zero_point[0];
}

bool SameQuantization(const TensorDef& a, const TensorDef& b) {
  return a.type == b.type && a.quantization.scale == b.quantization.scale &&
         a.quantization.zero_point == b.quantization.zero_point;
}

int VersionFor(BuiltinOp op, DataType type) {
  if (type != DataType::kInt8) return 1;
  switch (op) {
    case BuiltinOp::kCast: return 1;
    default: return 2;
  }
}

}  // namespace delegato::passes
