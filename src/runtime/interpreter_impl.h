// The interpreter's internals: runtime tensors and nodes of one subgraph, the
// prepare/plan/eval cycle. The public Interpreter forwards to the instance for
// subgraph 0 (the root); it owns one instance per other subgraph its control
// flow reaches (IF, WHILE, CALL_ONCE), each with its own tensors, plan and
// arena, and the state shared by all of them (resource variables, CALL_ONCE).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "delegato/interpreter.h"
#include "kernels/optimized/aligned_buffer.h"
#include "memory/arena_planner.h"
#include "ops/kernel.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace delegato {

class InterpreterImpl {
 public:
  // Throws Error naming the first problem (node without a kernel, tensor
  // used before it is produced, ...).
  InterpreterImpl(std::shared_ptr<const ModelDef> model, const InterpreterOptions& options);

  // ---- control flow: several subgraphs
  // The runner of subgraph `index` (this one for 0); the index was checked at creation.
  InterpreterImpl& runner(int index);
  int subgraph_index() const { return subgraph_index_; }
  // Sizes this subgraph's inputs like `args` (types must match) and plans it.
  // Fails naming `caller` on a mismatch. Used by a calling node's Prepare.
  void PrepareAsCallee(const Node& caller, const char* role, const std::vector<const Tensor*>& args);
  // The tensors of this subgraph's inputs / outputs, in order.
  Tensor& graph_input(int k) { return tensors_[subgraph().inputs[k]]; }
  Tensor& graph_output(int k) { return tensors_[subgraph().outputs[k]]; }
  // Whether CALL_ONCE already ran subgraph `index` (shared by all runners).
  uint8_t& call_once_done(int index) { return root_->call_once_done_[index]; }

  // ---- resource variables, keyed by (container, shared_name), shared by all runners
  struct ResourceVariable {
    bool assigned = false;
    DataType type = DataType::kFloat32;
    std::vector<int32_t> dims;
    std::vector<uint8_t> data;
  };
  int ResourceId(const std::string& container, const std::string& shared_name);
  // nullptr for an id no VAR_HANDLE made.
  ResourceVariable* resource(int32_t id);

  void ResizeInput(int input, std::vector<int32_t> dims);
  void AllocateTensors();
  // Returns an error message, or empty on success.
  std::string Invoke(const std::function<void(int)>* after_node);

  const ModelDef& model() const { return *model_; }
  const SubgraphDef& subgraph() const { return model_->subgraphs[subgraph_index_]; }
  std::vector<Tensor>& tensors() { return tensors_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  int fused_into(int index) const {
    return index >= 0 && index < static_cast<int>(fused_into_.size()) ? fused_into_[index] : -1;
  }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int>& execution_plan() const { return execution_plan_; }
  int num_model_nodes() const { return num_model_nodes_; }

  // See Interpreter::ModifyGraphWithDelegate.
  void ModifyGraphWithDelegate(Delegate* delegate);
  const std::vector<Interpreter::Placement>& placements() const { return placements_; }
  const std::vector<std::string>& delegation_log() const { return delegation_log_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  bool allocated() const { return allocated_; }
  void SetPackedWeightStore(std::shared_ptr<PackedWeightStore> store) {
    packed_weights_ = std::move(store);
    context_.set_packed_weights(packed_weights_.get());
  }
  size_t arena_bytes() const { return arena_bytes_; }
  const Interpreter::AllocateTimings& allocate_timings() const { return allocate_timings_; }

 private:
  void CheckGraph() const;
  void AllocateTensorsOnce();
  // Runs `node` now, in Prepare, when its outputs are small and follow from
  // constants (or, for SHAPE and RANK, from dims alone): its outputs become
  // constants for the nodes after it, so shape subgraphs (SHAPE ->
  // STRIDED_SLICE -> PACK -> RESHAPE) resolve whenever the input dims are
  // known. Returns whether it did.
  bool TryFoldInPrepare(Node& node);
  // A node whose shapes depend on run-time values (or on such a node's
  // outputs) is prepared during Invoke: Defer marks it and makes its outputs
  // dynamic; PrepareDeferred prepares it again when its inputs' dims or the
  // values it reads changed, and sizes its outputs. Returns "" or the error.
  // Offers a node its sole-reader producer's work (Node::FusedProducer): a
  // convolution the spatial-only PAD before it, an 8-bit ADD/SUB/MUL by a
  // constant the one before it.
  void OfferFusions();

  void Defer(int index, int32_t value_tensor);
  std::string PrepareDeferred(int index);
  // Fails naming `what` (tensor index, name, type, shape, bytes) when a
  // tensor of `bytes` bytes cannot fit in the memory budget.
  void CheckFitsBudget(const std::string& what, int index, size_t bytes) const;

  // A callee runner, made by the root for each subgraph its control flow reaches.
  InterpreterImpl(std::shared_ptr<const ModelDef> model, const InterpreterOptions& options,
                  int subgraph_index, InterpreterImpl* root);
  void SetUpTensorsAndNodes();

  std::shared_ptr<const ModelDef> model_;
  int subgraph_index_ = 0;
  InterpreterImpl* root_ = this;
  // Root only: runners by subgraph index (null for 0 and unreached ones),
  // CALL_ONCE flags, resource variables.
  std::vector<std::unique_ptr<InterpreterImpl>> runners_;
  std::vector<uint8_t> call_once_done_;
  std::map<std::pair<std::string, std::string>, int> resource_ids_;
  std::vector<ResourceVariable> resources_;
  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;           // the model's nodes, then delegate nodes
  std::vector<int> execution_plan_;  // node indices in run order
  int num_model_nodes_ = 0;
  std::vector<Interpreter::Placement> placements_;
  std::vector<std::string> delegation_log_;
  std::vector<std::string> warnings_;
  // The plan before each delegate was applied, to fall back to.
  struct PlanSnapshot {
    std::string delegate;
    std::vector<int> plan;
    std::vector<Interpreter::Placement> placements;
  };
  std::vector<PlanSnapshot> plan_snapshots_;
  std::vector<std::vector<int32_t>> input_dims_;  // current dims of each graph input
  ThreadPool pool_;
  KernelContext context_;
  std::shared_ptr<PackedWeightStore> packed_weights_;
  // 64-byte aligned; large arenas arrive with their pages mapped (the first
  // Invoke does not fault them in one at a time).
  optimized::AlignedBuffer<uint8_t> arena_storage_;
  std::vector<std::unique_ptr<uint8_t[]>> variable_storage_;
  // Nodes folded by the last Prepare, and the tensors they made constant
  // (restored to the arena before the next Prepare).
  std::vector<uint8_t> folded_;
  // Per node: the node it was folded into (Node::FusedProducer; Invoke skips
  // it), else -1.
  std::vector<int> fused_into_;
  bool fuse_nodes_ = false;
  std::vector<int32_t> folded_tensors_;
  std::vector<std::unique_ptr<uint8_t[]>> folded_storage_;
  size_t folded_bytes_ = 0;
  // Storage of a dynamic tensor or a deferred node's scratch: grows only when a
  // shape needs more, else is reused.
  struct DynamicBuffer {
    std::unique_ptr<uint8_t[]> data;
    size_t capacity = 0;
    uint8_t* Reserve(size_t bytes);  // aligned start of at least `bytes`
  };
  struct DeferredNode {
    bool active = false;
    bool prepared = false;
    std::vector<int32_t> value_inputs;              // tensors whose values Prepare reads
    std::vector<std::vector<int32_t>> seen_dims;    // every input's dims at the last Prepare
    std::vector<std::vector<uint8_t>> seen_values;  // value_inputs' bytes at the last Prepare
    DynamicBuffer scratch;
  };
  std::vector<DeferredNode> deferred_;
  std::vector<int32_t> dynamic_tensors_;
  std::map<int32_t, DynamicBuffer> dynamic_storage_;
  Interpreter::AllocateTimings allocate_timings_;
  size_t arena_bytes_ = 0;
  size_t max_arena_bytes_ = 0;
  size_t memory_budget_ = 0;  // InterpreterOptions::max_memory_bytes, resolved
  bool allocated_ = false;
};

}  // namespace delegato
