// The interpreter's internals: runtime tensors and nodes of one subgraph, the
// prepare/plan/eval cycle. The public Interpreter forwards to this class.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "delegato/interpreter.h"
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

  void ResizeInput(int input, std::vector<int32_t> dims);
  void AllocateTensors();
  // Returns an error message, or empty on success.
  std::string Invoke(const std::function<void(int)>* after_node);

  const ModelDef& model() const { return *model_; }
  const SubgraphDef& subgraph() const { return model_->subgraphs[0]; }
  std::vector<Tensor>& tensors() { return tensors_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
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

 private:
  void CheckGraph() const;
  void AllocateTensorsOnce();
  // Fails naming `what` (tensor index, name, type, shape, bytes) when a
  // tensor of `bytes` bytes cannot fit in the memory budget.
  void CheckFitsBudget(const std::string& what, int index, size_t bytes) const;

  std::shared_ptr<const ModelDef> model_;
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
  std::unique_ptr<uint8_t[]> arena_storage_;
  std::vector<std::unique_ptr<uint8_t[]>> variable_storage_;
  size_t arena_bytes_ = 0;
  size_t max_arena_bytes_ = 0;
  size_t memory_budget_ = 0;  // InterpreterOptions::max_memory_bytes, resolved
  bool allocated_ = false;
};

}  // namespace delegato
