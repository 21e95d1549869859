// The delegate vocabulary: what a delegate answers per node, why a node stays on
// the CPU, and the options that shape which supported nodes are handed over.
//
// A delegate only answers "supported or not, and why" for each node; the
// framework partitions the graph (src/delegate/partitioner.h) and decides
// which partitions are delegated. Every node left on the CPU carries at least
// one typed Reason, so a placement report can always say why.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "delegato/status.h"

namespace delegato {

// Why a node is not delegated. Values are append-only: reports store the
// snake_case name (ReasonCodeName), never the number.
enum class ReasonCode {
  // The delegate cannot run the node.
  kUnsupportedOp,            // the op (builtin or custom code) is unknown to the delegate
  kUnsupportedOpVersion,     // the op is known, this version of it is not
  kFeatureLevelTooLow,       // the op (or this use of it) needs a newer API / feature level
  kUnsupportedInputType,     // an input's element type
  kUnsupportedOutputType,    // an output's element type
  kUnsupportedOperandValue,  // an option or constant operand value (stride, axis, flag...)
  kUnsupportedQuantization,  // per-channel, zero point, scale relation...
  kUnsupportedRank,          // a tensor's rank
  kUnsupportedShape,         // a dimension's size or a shape relation
  kDynamicShape,             // a tensor whose shape is only known at run time
  kHybridOp,                 // float activations with quantized weights
  kNonConstantInput,         // an input that must be constant (weights, shape) is not
  kDriverRejected,           // the delegate accepted it, the driver/compiler refused it
  kPrepareFailed,            // the delegate's Prepare failed; the whole graph fell back
  kClaimedByEarlierDelegate, // an earlier delegate already took the node
  // The delegate could run the node; a framework or user choice keeps it on the CPU.
  kUserExcluded,             // --skip_nodes or outside the first/last node range
  kPartitionLimit,           // its partition is not among the N largest
  kBelowMinNodes,            // its partition has fewer than min_nodes_per_partition nodes
  kAfterCut,                 // after the first unsupported node (compilers that cut the graph once)
};

// Stable snake_case name for reports and JSON, e.g. "unsupported_input_type".
const char* ReasonCodeName(ReasonCode code);
// The inverse of ReasonCodeName; false when `name` is not a known code.
bool ParseReasonCode(std::string_view name, ReasonCode* code);

struct Reason {
  ReasonCode code = ReasonCode::kUnsupportedOp;
  std::string layer;    // who decided: "delegate", "driver" or "framework"
  std::string message;  // what is wrong, naming the tensor/option and its value
  std::string fix;      // what the user can change; empty when nothing helps
};

// A delegate's answer for one node.
struct NodeSupport {
  bool supported = false;
  std::vector<Reason> reasons;  // why not, when !supported
};

struct DelegateOptions {
  int max_delegated_partitions = 0;  // <= 0: unlimited
  int min_nodes_per_partition = 0;   // partitions with fewer nodes stay on the CPU
  std::vector<int> skip_nodes;       // node indices never handed to the delegate
  int first_node = -1, last_node = -1;  // optional inclusive range of delegable nodes; -1 = open
  // false: subsets follow the original execution order ([0..i1), [i1..i2), ...);
  // true: a subset takes every ready node of its kind (TFLite's default).
  bool greedy = true;
};

// ------------------------------------------------------------------ delegates
//
// A delegate takes over partitions of a graph (TFLite's model): the
// interpreter asks it about every node, partitions the graph with TFLite's
// semantics and the delegate's options, and replaces each delegated partition
// by one node that runs a DelegateKernel. Delegate nodes are numbered after
// the model's own nodes, as in TFLite's profiles ("TfLiteNnapiDelegate ...:64").

struct ModelDef;
struct TensorView;

struct DelegatePartition {
  int index = 0;                 // 0-based, in execution order
  std::vector<int> nodes;        // the model's node indices it replaces, in order
  std::vector<int32_t> inputs;   // boundary tensors read (activations; constants excluded)
  std::vector<int32_t> outputs;  // boundary tensors written
};

// Runs one partition. Prepare is called from AllocateTensors with the input
// dims known and must report every output's dims; Eval moves data through
// the device. A failing Prepare makes the interpreter restore the CPU plan.
class DelegateKernel {
 public:
  virtual ~DelegateKernel() = default;
  virtual Status Prepare(std::span<const TensorView> inputs,
                         std::vector<std::vector<int32_t>>* output_dims) = 0;
  virtual Status Eval(std::span<const TensorView> inputs,
                      std::span<const TensorView> outputs) = 0;
};

class Delegate {
 public:
  virtual ~Delegate() = default;
  // Shown as the node type of delegate nodes in profiles and logs.
  virtual std::string name() const = 0;
  // Whether the delegate can run node `node_index` of subgraph 0, and why not.
  virtual NodeSupport Supports(const ModelDef& model, int node_index) = 0;
  virtual DelegateOptions options() const { return {}; }
  virtual std::unique_ptr<DelegateKernel> CreateKernel(const ModelDef& model,
                                                       const DelegatePartition& partition) = 0;
};

}  // namespace delegato
