#include "delegate/emulated_delegate.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "core/error.h"
#include "model/model.h"

namespace delegato {
namespace {

double MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

// A model holding exactly the partition's nodes: its tensors renumbered, its
// constants copied, the boundary tensors as graph inputs and outputs.
std::shared_ptr<ModelDef> BuildDeviceGraph(const ModelDef& model, const DelegatePartition& partition) {
  const SubgraphDef& source = model.subgraphs[0];
  auto device = std::make_shared<ModelDef>();
  device->description = "device graph of partition " + std::to_string(partition.index);
  device->operator_codes = model.operator_codes;
  device->buffers.emplace_back();
  device->subgraphs.emplace_back();
  SubgraphDef& graph = device->subgraphs[0];

  std::map<int32_t, int32_t> remap;
  auto map_tensor = [&](int32_t t) -> int32_t {
    if (t < 0) return t;
    auto it = remap.find(t);
    if (it != remap.end()) return it->second;
    TensorDef def = source.tensors[t];
    if (def.buffer != 0) {
      device->buffers.push_back(model.buffers[def.buffer]);
      def.buffer = static_cast<uint32_t>(device->buffers.size() - 1);
    }
    graph.tensors.push_back(std::move(def));
    const int32_t index = static_cast<int32_t>(graph.tensors.size()) - 1;
    remap[t] = index;
    return index;
  };
  for (int32_t t : partition.inputs) graph.inputs.push_back(map_tensor(t));
  for (int node : partition.nodes) {
    OperatorDef op = source.operators[node];
    for (int32_t& t : op.inputs) t = map_tensor(t);
    for (int32_t& t : op.outputs) t = map_tensor(t);
    for (int32_t& t : op.intermediates) t = map_tensor(t);
    graph.operators.push_back(std::move(op));
  }
  for (int32_t t : partition.outputs) graph.outputs.push_back(map_tensor(t));
  return device;
}

class EmulatedKernel : public DelegateKernel {
 public:
  EmulatedKernel(std::shared_ptr<ModelDef> device_graph, InterpreterOptions options,
                 std::shared_ptr<std::vector<PartitionStats>> stats, size_t stats_index,
                 bool profile_nodes)
      : device_graph_(std::move(device_graph)),
        options_(options),
        stats_(std::move(stats)),
        stats_index_(stats_index),
        profile_nodes_(profile_nodes) {
    // Variable (state) tensors the partition reads: the device graph updates
    // them in place, and Eval writes them back so the host's state tensor
    // stays the one truth across invocations (TFLite's NNAPI delegate does
    // the same with its state outputs).
    const SubgraphDef& graph = device_graph_->subgraphs[0];
    for (int32_t t : graph.inputs) state_input_.push_back(t >= 0 && graph.tensors[t].is_variable);
  }

  Status Prepare(std::span<const TensorView> inputs,
                 std::vector<std::vector<int32_t>>* output_dims) override {
    const auto start = std::chrono::steady_clock::now();
    Status status;
    device_ = Interpreter::Create(device_graph_, options_, &status);
    if (!status.ok()) return status;
    if (packed_weights_) device_->SetPackedWeightStore(packed_weights_);
    for (size_t i = 0; i < inputs.size(); ++i) {
      status = device_->ResizeInput(static_cast<int>(i),
                                    std::vector<int32_t>(inputs[i].dims.begin(), inputs[i].dims.end()));
      if (!status.ok()) return status;
    }
    status = device_->AllocateTensors();
    if (!status.ok()) return status;
    output_dims->clear();
    for (int i = 0; i < device_->num_outputs(); ++i) {
      const TensorView out = device_->output(i);
      output_dims->emplace_back(out.dims.begin(), out.dims.end());
    }
    PartitionStats& stats = (*stats_)[stats_index_];
    stats.compile_us = MicrosSince(start);
    stats.device_bytes = device_->arena_bytes();
    return Status::Ok();
  }

  Status Eval(std::span<const TensorView> inputs, std::span<const TensorView> outputs) override {
    const auto start = std::chrono::steady_clock::now();
    PartitionStats& stats = (*stats_)[stats_index_];
    stats.bytes_in = stats.bytes_out = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorView device_in = device_->input(static_cast<int>(i));
      if (device_in.bytes != inputs[i].bytes) return Status::Error("input size changed after Prepare");
      std::memcpy(device_in.data, inputs[i].data, inputs[i].bytes);
      stats.bytes_in += inputs[i].bytes;
    }
    Status status;
    if (profile_nodes_) {
      // The device graph's node i is the partition's i-th node.
      stats.last_node_us.assign(stats.nodes.size(), 0.0);
      auto node_start = std::chrono::steady_clock::now();
      status = device_->Invoke([&](int node) {
        const auto now = std::chrono::steady_clock::now();
        if (node >= 0 && node < static_cast<int>(stats.last_node_us.size()))
          stats.last_node_us[node] = std::chrono::duration<double, std::micro>(now - node_start).count();
        node_start = now;
      });
    } else {
      status = device_->Invoke();
    }
    if (!status.ok()) return Status::Error("on the device graph: " + status.message());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!state_input_[i]) continue;
      std::memcpy(inputs[i].data, device_->input(static_cast<int>(i)).data, inputs[i].bytes);
      stats.bytes_out += inputs[i].bytes;
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      const TensorView device_out = device_->output(static_cast<int>(i));
      std::memcpy(outputs[i].data, device_out.data, outputs[i].bytes);
      stats.bytes_out += outputs[i].bytes;
    }
    stats.last_eval_us = MicrosSince(start);
    stats.total_eval_us += stats.last_eval_us;
    ++stats.invocations;
    return Status::Ok();
  }

 private:
  std::shared_ptr<ModelDef> device_graph_;
  InterpreterOptions options_;
  std::vector<bool> state_input_;  // per device input: a variable tensor to write back
 public:
  // Device node i is model node partition.nodes[i] (EmulatedDelegate::SetPackedWeightStore).
  std::shared_ptr<PackedWeightStore> packed_weights_;
 private:
  std::unique_ptr<Interpreter> device_;
  std::shared_ptr<std::vector<PartitionStats>> stats_;
  size_t stats_index_;
  bool profile_nodes_;
};

}  // namespace

EmulatedDelegate::EmulatedDelegate(std::string name, SupportFn support, DelegateOptions options,
                                   int num_threads)
    : name_(std::move(name)),
      support_(std::move(support)),
      options_(std::move(options)),
      num_threads_(num_threads),
      stats_(std::make_shared<std::vector<PartitionStats>>()) {}

NodeSupport EmulatedDelegate::Supports(const ModelDef& model, int node_index) {
  return support_(model, node_index);
}

std::unique_ptr<DelegateKernel> EmulatedDelegate::CreateKernel(const ModelDef& model,
                                                               const DelegatePartition& partition) {
  PartitionStats stats;
  stats.partition = partition.index;
  stats.nodes = partition.nodes;
  stats_->push_back(stats);
  InterpreterOptions device_options;
  device_options.num_threads = num_threads_;
  device_options.kernels = kernels_;
  device_options.max_memory_bytes = max_memory_bytes_;
  auto kernel = std::make_unique<EmulatedKernel>(BuildDeviceGraph(model, partition), device_options, stats_,
                                                 stats_->size() - 1, profile_nodes_);
  if (packed_weights_) kernel->packed_weights_ = packed_weights_->View(partition.nodes);
  return kernel;
}

std::vector<NodeSupport> EvaluateTarget(const Target& target, const ModelDef& model,
                                        const std::string& accelerator_name) {
  const SubgraphDef& graph = model.subgraphs.at(0);
  const int num_nodes = static_cast<int>(graph.operators.size());
  std::vector<NodeSupport> support(num_nodes);
  if (!target.partitioning.single_cut) {
    for (int i = 0; i < num_nodes; ++i) support[i] = EvaluateNode(target, model, i, accelerator_name);
    return support;
  }
  // Single cut, followed through the data flow (the Edge TPU compiler's
  // behaviour on the shared compiled pairs): a refused node cuts the graph and
  // every node that depends on it runs on the CPU; nodes that do not depend on
  // a cut stay mapped even when they come later in execution order. With
  // cut_after_first_mapped, a refused node with no mapped node upstream does
  // not cut: it runs on the CPU ahead of the accelerator's segment.
  const size_t num_tensors = graph.tensors.size();
  std::vector<int> cut_origin(num_tensors, -1);       // the refused node a tensor depends on
  std::vector<char> mapped_upstream(num_tensors, 0);  // produced after some mapped node
  for (int i = 0; i < num_nodes; ++i) {
    const OperatorDef& op = graph.operators[i];
    int origin = -1;
    bool after_mapped = false;
    for (int t : op.inputs) {
      if (t < 0 || static_cast<size_t>(t) >= num_tensors) continue;
      if (origin < 0 && cut_origin[t] >= 0) origin = cut_origin[t];
      after_mapped = after_mapped || mapped_upstream[t];
    }
    bool mapped = false;
    if (origin >= 0) {
      support[i].reasons.push_back(
          {ReasonCode::kAfterCut, "framework",
           StrCat("depends on node ", origin, " (", model.OpName(graph.operators[origin]), "), which ", target.id,
                  " refuses: this compiler cuts the graph once and everything downstream of the cut runs on "
                  "the CPU"),
           StrCat("make node ", origin, " supported, or move it to the end of the graph")});
    } else {
      support[i] = EvaluateNode(target, model, i, accelerator_name);
      mapped = support[i].supported;
      if (!mapped && (after_mapped || !target.partitioning.cut_after_first_mapped)) origin = i;
    }
    for (int t : op.outputs) {
      if (t < 0 || static_cast<size_t>(t) >= num_tensors) continue;
      cut_origin[t] = origin;
      mapped_upstream[t] = mapped || after_mapped;
    }
  }
  return support;
}

DelegateOptions TargetDelegateOptions(const Target& target, int user_max_partitions,
                                      int user_min_nodes, std::vector<int> skip_nodes,
                                      int first_node, int last_node) {
  DelegateOptions options;
  options.max_delegated_partitions = user_max_partitions >= 0
                                         ? user_max_partitions
                                         : target.partitioning.max_delegated_partitions;
  options.min_nodes_per_partition =
      user_min_nodes >= 0 ? user_min_nodes : target.partitioning.min_nodes_per_partition;
  options.skip_nodes = std::move(skip_nodes);
  options.first_node = first_node;
  options.last_node = last_node;
  return options;
}

std::unique_ptr<EmulatedDelegate> MakeTargetDelegate(const Target& target, const ModelDef& model,
                                                     const std::string& accelerator_name,
                                                     DelegateOptions options, int num_threads) {
  auto support = std::make_shared<std::vector<NodeSupport>>(
      EvaluateTarget(target, model, accelerator_name));
  const ModelDef* evaluated = &model;
  return std::make_unique<EmulatedDelegate>(
      target.id,
      [support, evaluated, id = target.id](const ModelDef& m, int node) -> NodeSupport {
        DLG_CHECK(&m == evaluated, "the ", id, " delegate was made for another model");
        return (*support)[node];
      },
      std::move(options), num_threads);
}

}  // namespace delegato
