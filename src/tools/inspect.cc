// delegato inspect: what a model holds (inputs, outputs, ops, quantization
// kinds) and what running it costs (arena bytes), or why it cannot run.
#include <iostream>
#include <map>

#include "core/error.h"
#include "ops/op_table.h"
#include "tools/commands.h"
#include "tools/flags.h"
#include "tools/tool_util.h"

namespace delegato::tools {
namespace {

// The quantization kind of a tensor, as users speak of it.
std::string QuantKind(const TensorDef& t) {
  std::string type(DataTypeName(t.type));
  for (char& c : type) c = static_cast<char>(std::tolower(c));
  if (t.quantization.empty()) return type;
  return type + (t.quantization.per_axis() ? " per-axis" : " per-tensor");
}

void PrintTensorLine(const SubgraphDef& graph, int32_t index) {
  const TensorDef& t = graph.tensors[index];
  std::cout << "  " << index << " \"" << t.name << "\" " << FormatDims(t.shape) << " "
            << FormatQuantization(t.type, t.quantization.scale, t.quantization.zero_point,
                                  t.quantization.quantized_dimension)
            << "\n";
}

int Inspect(const Args& args) {
  Flags flags;
  flags.Declare("graph", "model .tflite file (default: the built-in demo model)")
      .Declare("max_memory_mb", kMaxMemoryHelp)
      .Declare("help", "show this help", true);
  flags.Parse(args);
  if (flags.GetBool("help")) {
    std::cout << "usage: delegato inspect [--graph] MODEL\n" << flags.Help();
    return 0;
  }
  std::string path = flags.GetString("graph");
  if (path.empty() && !flags.positional().empty()) path = flags.positional()[0];
  auto model = LoadModelOrDemo(path);
  const SubgraphDef& graph = model->subgraphs[0];

  std::cout << "model: " << (path.empty() ? "<demo model>" : path) << "\n";
  if (!model->description.empty()) std::cout << "description: " << model->description << "\n";
  std::cout << "subgraphs: " << model->subgraphs.size() << ", tensors: " << graph.tensors.size()
            << ", nodes: " << graph.operators.size() << ", buffers: " << model->buffers.size()
            << "\n";
  for (const SignatureDefinition& sig : model->signature_defs)
    std::cout << "signature: \"" << sig.key << "\" (subgraph " << sig.subgraph_index << ", "
              << sig.inputs.size() << " inputs, " << sig.outputs.size() << " outputs)\n";

  std::cout << "inputs:\n";
  for (int32_t t : graph.inputs) PrintTensorLine(graph, t);
  std::cout << "outputs:\n";
  for (int32_t t : graph.outputs) PrintTensorLine(graph, t);

  std::map<std::string, int> ops;
  for (const OperatorDef& op : graph.operators) {
    const int version = model->operator_codes[op.opcode_index].version;
    ops[model->OpName(op) + " v" + std::to_string(version)]++;
  }
  std::cout << "ops:\n";
  for (const auto& [name, count] : ops) std::cout << "  " << name << ": " << count << "\n";

  std::map<std::string, int> weights, activations;
  for (const TensorDef& t : graph.tensors) {
    const bool constant = t.buffer != 0 && !model->buffers[t.buffer].empty();
    (constant ? weights : activations)[QuantKind(t)]++;
  }
  std::cout << "quantization (constant tensors):\n";
  for (const auto& [kind, count] : weights) std::cout << "  " << kind << ": " << count << "\n";
  std::cout << "quantization (activations):\n";
  for (const auto& [kind, count] : activations) std::cout << "  " << kind << ": " << count << "\n";

  // Every node without a kernel, not only the first Create stops at.
  // Subgraphs that IF, WHILE, CALL_ONCE reach count too; a bad call (index out
  // of range, recursion) is reported by Create below.
  std::vector<UnsupportedNode> unsupported = FindUnsupportedNodes(*model, 0);
  try {
    for (int s : ReachableSubgraphs(*model))
      for (UnsupportedNode& node : FindUnsupportedNodes(*model, s)) {
        node.message = "subgraph " + std::to_string(s) + " " + node.message;
        unsupported.push_back(std::move(node));
      }
  } catch (const Error&) {
  }
  if (!unsupported.empty()) {
    std::cout << "unsupported nodes: " << unsupported.size() << "\n";
    for (const UnsupportedNode& node : unsupported) std::cout << "  " << node.message << "\n";
  }

  Status status;
  InterpreterOptions options;
  options.max_memory_bytes = MaxMemoryBytes(flags);
  auto interpreter = Interpreter::Create(model, options, &status);
  if (status.ok()) status = interpreter->AllocateTensors();
  if (status.ok()) {
    std::cout << "arena: " << interpreter->arena_bytes() << " bytes\n";
    return 0;
  }
  std::cout << "runnable: no: " << status.message() << "\n";
  return 1;
}

int Generate(const Args& args) {
  Flags flags;
  flags.Declare("o", "output .tflite path").Declare("output", "output .tflite path");
  flags.Parse(args);
  std::string path = flags.GetString("o", flags.GetString("output"));
  if (path.empty()) throw UsageError("generate needs -o OUT.tflite");
  WriteModelFile(*BuildDemoModel(), path);
  std::cout << "wrote the demo model to " << path << "\n";
  return 0;
}

}  // namespace

int CmdInspect(const Args& args) {
  return RunCommand("inspect", [&] { return Inspect(args); });
}

int CmdGenerate(const Args& args) {
  return RunCommand("generate", [&] { return Generate(args); });
}

}  // namespace delegato::tools
