// The emulated accelerator delegate: runs a target's partitions on the host
// through the real delegate machinery, so a user can check on a laptop that a
// placement plan computes the same outputs as the CPU and see what crosses
// the CPU/accelerator boundary.
//
// Each partition becomes a "device graph": a sub-model of exactly the
// partition's nodes, compiled (planned and allocated) in the delegate
// kernel's Prepare, with its own device memory. Eval copies the boundary
// inputs into device memory, runs the device graph with delegato's CPU
// kernels, and copies the outputs back. Timings measured here are host
// timings; accelerator latencies are estimates from the target's cost model
// and are always labelled so.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "delegate/target.h"
#include "delegato/delegate.h"
#include "delegato/interpreter.h"

namespace delegato {

struct PartitionStats {
  int partition = 0;
  std::vector<int> nodes;        // model node indices
  double compile_us = 0;         // Prepare: building and planning the device graph
  size_t device_bytes = 0;       // the device graph's arena
  int64_t invocations = 0;
  double last_eval_us = 0;       // host time of the last Eval, copies included
  double total_eval_us = 0;
  size_t bytes_in = 0, bytes_out = 0;  // boundary bytes copied per Eval
  // With EnableNodeProfiling: host time of each device node in the last Eval,
  // aligned with `nodes` (device node i is model node nodes[i]).
  std::vector<double> last_node_us;
};

class EmulatedDelegate : public Delegate {
 public:
  using SupportFn = std::function<NodeSupport(const ModelDef&, int)>;

  EmulatedDelegate(std::string name, SupportFn support, DelegateOptions options,
                   int num_threads = 1);

  std::string name() const override { return name_; }
  NodeSupport Supports(const ModelDef& model, int node_index) override;
  DelegateOptions options() const override { return options_; }
  std::unique_ptr<DelegateKernel> CreateKernel(const ModelDef& model,
                                               const DelegatePartition& partition) override;

  // One entry per partition kernel created, in partition order.
  const std::vector<PartitionStats>& stats() const { return *stats_; }

  // Times every device node of each Eval into PartitionStats::last_node_us
  // (profilers). Takes effect for kernels created afterwards: call it before
  // ModifyGraphWithDelegate.
  void EnableNodeProfiling(bool on) { profile_nodes_ = on; }
  // The CPU kernels device graphs run with (the host's --kernels choice), so
  // a reference run stays reference inside partitions too. Takes effect for
  // kernels created afterwards.
  void UseKernels(KernelSet kernels) { kernels_ = kernels; }
  // The memory budget of each device graph's interpreter
  // (InterpreterOptions::max_memory_bytes; 0 = the default).
  void SetMaxMemoryBytes(size_t bytes) { max_memory_bytes_ = bytes; }
  // Device graphs load and record their kernels' packed weights here, keyed
  // by model node index (the compilation cache). Call before
  // ModifyGraphWithDelegate; nullptr: none.
  void SetPackedWeightStore(std::shared_ptr<PackedWeightStore> store) { packed_weights_ = std::move(store); }

 private:
  std::string name_;
  SupportFn support_;
  DelegateOptions options_;
  int num_threads_;
  bool profile_nodes_ = false;
  KernelSet kernels_ = KernelSet::kOptimized;
  size_t max_memory_bytes_ = 0;
  std::shared_ptr<PackedWeightStore> packed_weights_;
  std::shared_ptr<std::vector<PartitionStats>> stats_;
};

// Per-node support of a target for a whole model, with the target's
// partitioning rule applied: with `single_cut` (Edge TPU compiler), every node
// that depends on a refused node is refused too (kAfterCut); with
// `cut_after_first_mapped`, a refused node with no accepted node upstream does
// not cut (it runs on the CPU ahead of the accelerator's segment).
std::vector<NodeSupport> EvaluateTarget(const Target& target, const ModelDef& model,
                                        const std::string& accelerator_name);

// The delegate options a target implies (its partition limits), with the
// user's choices on top. `user_max_partitions` / `user_min_nodes`: < 0 = not set.
DelegateOptions TargetDelegateOptions(const Target& target, int user_max_partitions,
                                      int user_min_nodes, std::vector<int> skip_nodes,
                                      int first_node, int last_node);

// An emulated delegate answering with a target's rules.
std::unique_ptr<EmulatedDelegate> MakeTargetDelegate(const Target& target, const ModelDef& model,
                                                     const std::string& accelerator_name,
                                                     DelegateOptions options, int num_threads);

}  // namespace delegato
