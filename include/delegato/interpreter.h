// The public C++ API: load a model, allocate, set inputs, invoke, read outputs.
//
//   std::shared_ptr<const delegato::ModelDef> model;
//   delegato::Status s = delegato::LoadModel("model.tflite", &model);
//   auto interp = delegato::Interpreter::Create(model, {.num_threads = 2}, &s);
//   s = interp->AllocateTensors();
//   std::memcpy(interp->input(0).data, bytes, interp->input(0).bytes);
//   s = interp->Invoke();
//   delegato::TensorView out = interp->output(0);
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "delegato/delegate.h"
#include "delegato/packed_weights.h"
#include "delegato/status.h"
#include "delegato/types.h"

namespace delegato {

struct ModelDef;  // the parsed model (src/model/model.h); shared, immutable
class InterpreterImpl;

Status LoadModel(const std::string& path, std::shared_ptr<const ModelDef>* model);

// A non-owning view of one tensor. `data` is valid after AllocateTensors and
// until the next ResizeInput/AllocateTensors.
struct TensorView {
  int index = -1;  // tensor index in the subgraph
  std::string_view name;
  DataType type = DataType::kFloat32;
  std::span<const int32_t> dims;
  void* data = nullptr;
  size_t bytes = 0;
  std::span<const float> scales;        // empty when not quantized
  std::span<const int64_t> zero_points;
  int32_t quantized_dimension = 0;
  bool is_constant = false;
};

struct NodeView {
  int index = -1;
  std::string_view op_name;  // "CONV_2D", or the custom code
  int version = 1;
  std::span<const int32_t> inputs;   // tensor indices, -1 = absent optional input
  std::span<const int32_t> outputs;
  // The node this one was folded into (InterpreterOptions::fuse_nodes; its
  // output is then never written), else -1.
  int fused_into = -1;
};

enum class KernelSet : int8_t {
  kReference,  // TFLite's reference arithmetic, the semantic ground truth
  kOptimized,  // optimized kernels where they exist, the reference elsewhere
};

struct InterpreterOptions {
  int num_threads = 1;
  KernelSet kernels = KernelSet::kOptimized;
  // AllocateTensors fails when the planned arena would exceed this (0 = no
  // limit). Lets memory-bounded deployments and the fuzzer refuse huge models.
  size_t max_arena_bytes = 0;
  // Budget for everything the model's declared sizes make the interpreter
  // allocate: graph inputs, variable tensors, every produced tensor, node
  // scratch and the arena holding them. Each is checked (overflow-checked
  // arithmetic) before anything is allocated; a model that cannot fit is
  // refused naming the tensor or node, its shape and its byte count.
  // 0 = DefaultMemoryBudget().
  size_t max_memory_bytes = 0;
  // Optimized kernels: a node whose output only the next one reads is folded
  // into it and skipped (its output tensor is then never written): a PAD of
  // height and width into the CONV_2D or DEPTHWISE_CONV_2D after it (as
  // padding), an 8-bit ADD/SUB/MUL by a constant per-channel operand into
  // another such after it (one table), a LOGISTIC into the MUL of its input
  // by it (swish: one table for 8 bits, one pass for float32), a float32
  // CONV_2D into the DEPTHWISE_CONV_2D after it when the image between them
  // is too large for the cores' L2 (both run band by band, the same values).
  // Per-layer inspection of those tensors (diff --per_layer) turns this off.
  bool fuse_nodes = true;
};

// The budget used when InterpreterOptions::max_memory_bytes is 0:
// min(4 GiB, half of the machine's physical memory).
size_t DefaultMemoryBudget();

class Interpreter {
 public:
  // Builds the runtime graph of subgraph 0, finds a kernel for every node and
  // fails (status set, nullptr returned) naming the first node without one.
  static std::unique_ptr<Interpreter> Create(std::shared_ptr<const ModelDef> model,
                                             const InterpreterOptions& options, Status* status);
  ~Interpreter();

  // Changes an input's dims; AllocateTensors must follow.
  Status ResizeInput(int input, std::vector<int32_t> dims);
  // Runs every node's Prepare, plans the arena, binds data pointers.
  Status AllocateTensors();
  Status Invoke();
  // Invoke with a callback after each node (profiling, per-layer comparison).
  Status Invoke(const std::function<void(int node_index)>& after_node);

  int num_inputs() const;
  int num_outputs() const;
  TensorView input(int i) const;
  TensorView output(int i) const;
  int FindInput(std::string_view name) const;   // -1 when absent
  int FindOutput(std::string_view name) const;  // -1 when absent

  int num_tensors() const;
  TensorView tensor(int index) const;
  int num_nodes() const;
  NodeView node(int index) const;

  size_t arena_bytes() const;  // size of the planned activation arena

  // Where the last AllocateTensors (or ModifyGraphWithDelegate) spent its
  // time, for start-up reports (`bench`'s init phases): every node's Prepare
  // (optimized kernels load or pack their weights there) and the arena's
  // planning and allocation. Wall-clock microseconds.
  struct AllocateTimings {
    int64_t prepare_us = 0;
    int64_t arena_us = 0;
  };
  AllocateTimings allocate_timings() const;

  // Optimized kernels load their packed weights from `store` when it holds
  // a matching entry, and record what they pack into it (the compilation
  // cache saves it between runs). Takes effect at the next AllocateTensors
  // (or ModifyGraphWithDelegate); nullptr detaches. The emulated delegate's
  // device graphs use it through EmulatedDelegate::SetPackedWeightStore.
  void SetPackedWeightStore(std::shared_ptr<PackedWeightStore> store);
  const ModelDef& model() const;

  // Hands supported partitions to `delegate` (which must outlive the
  // interpreter) with TFLite's partitioning semantics, then allocates. When
  // the delegate's Prepare fails, the previous plan is restored, a warning is
  // recorded, and the result is still OK (TFLite's CPU fallback). Delegates
  // applied in turn only see the nodes earlier ones left on the CPU.
  Status ModifyGraphWithDelegate(Delegate* delegate);
  // Node indices in the order Invoke runs them (delegate nodes replace their
  // partitions; their indices follow the model's nodes).
  std::vector<int> execution_plan() const;
  // Per model node: where the last delegate placed it and why.
  struct Placement {
    bool delegated = false;
    int partition = -1;       // index of its DelegatePartition for that delegate
    std::string delegate;     // the delegate's name, when delegated
    std::vector<Reason> reasons;
  };
  const std::vector<Placement>& placements() const;
  // One line per delegate applied, in TFLite's words:
  // "<Name> delegate: N nodes delegated out of M nodes with K partitions."
  const std::vector<std::string>& delegation_log() const;
  const std::vector<std::string>& warnings() const;

 private:
  explicit Interpreter(std::unique_ptr<InterpreterImpl> impl);
  std::unique_ptr<InterpreterImpl> impl_;
};

}  // namespace delegato
