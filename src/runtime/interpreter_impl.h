// The interpreter's internals: runtime tensors and nodes of one subgraph, the
// prepare/plan/eval cycle. The public Interpreter forwards to this class.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "memory/arena_planner.h"
#include "ops/kernel.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace delegato {

class InterpreterImpl {
 public:
  // Throws Error naming the first problem (node without a kernel, tensor
  // used before it is produced, ...).
  InterpreterImpl(std::shared_ptr<const ModelDef> model, int num_threads, size_t max_arena_bytes);

  void ResizeInput(int input, std::vector<int32_t> dims);
  void AllocateTensors();
  // Returns an error message, or empty on success.
  std::string Invoke(const std::function<void(int)>* after_node);

  const ModelDef& model() const { return *model_; }
  const SubgraphDef& subgraph() const { return model_->subgraphs[0]; }
  std::vector<Tensor>& tensors() { return tensors_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  bool allocated() const { return allocated_; }
  size_t arena_bytes() const { return arena_bytes_; }

 private:
  void CheckGraph() const;

  std::shared_ptr<const ModelDef> model_;
  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;
  std::vector<std::vector<int32_t>> input_dims_;  // current dims of each graph input
  ThreadPool pool_;
  KernelContext context_;
  std::unique_ptr<uint8_t[]> arena_storage_;
  std::vector<std::unique_ptr<uint8_t[]>> variable_storage_;
  size_t arena_bytes_ = 0;
  size_t max_arena_bytes_ = 0;
  bool allocated_ = false;
};

}  // namespace delegato
