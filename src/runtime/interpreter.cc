#include "delegato/interpreter.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "model/model.h"
#include "delegate/partitioner.h"
#include "ops/op_table.h"
#include "runtime/interpreter_impl.h"

namespace delegato {

// ---------------------------------------------------------------- KernelContext

Tensor& KernelContext::input(const Node& node, int i) {
  if (i >= static_cast<int>(node.inputs.size()) || node.inputs[i] < 0)
    Fail(node, "missing input ", i);
  return tensors_[node.inputs[i]];
}

Tensor* KernelContext::optional_input(const Node& node, int i) {
  if (i >= static_cast<int>(node.inputs.size()) || node.inputs[i] < 0) return nullptr;
  return &tensors_[node.inputs[i]];
}

Tensor& KernelContext::output(const Node& node, int i) {
  if (i >= static_cast<int>(node.outputs.size()) || node.outputs[i] < 0)
    Fail(node, "missing output ", i);
  return tensors_[node.outputs[i]];
}

void KernelContext::SetOutputDims(const Node& node, int i, std::vector<int32_t> dims) {
  Tensor& t = output(node, i);
  for (int32_t d : dims) {
    if (d < 0) Fail(node, "output ", i, " (tensor \"", t.name, "\") would get negative dimension ", d);
  }
  try {
    t.bytes = TensorByteSize(t.type, dims);
  } catch (const Error& e) {
    Fail(node, "output ", i, " (tensor \"", t.name, "\"): ", e.what());
  }
  t.dims = std::move(dims);
}

void KernelContext::CheckInputCount(const Node& node, int min_count, int max_count) const {
  const int n = static_cast<int>(node.inputs.size());
  if (n < min_count || n > max_count) {
    if (min_count == max_count) Fail(node, "expects ", min_count, " inputs, has ", n);
    Fail(node, "expects ", min_count, " to ", max_count, " inputs, has ", n);
  }
}

void KernelContext::CheckOutputCount(const Node& node, int count) const {
  const int n = static_cast<int>(node.outputs.size());
  if (n != count) Fail(node, "expects ", count, " outputs, has ", n);
}

void KernelContext::CheckType(const Node& node, const Tensor& t, DataType expected) const {
  if (t.type != expected)
    Fail(node, "tensor \"", t.name, "\" has type ", DataTypeName(t.type), ", expected ",
         DataTypeName(expected));
}

// -------------------------------------------------------------- InterpreterImpl

size_t DefaultMemoryBudget() {
  constexpr uint64_t kCap = uint64_t{4} << 30;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return static_cast<size_t>(kCap);
  const uint64_t half = static_cast<uint64_t>(pages) / 2 * static_cast<uint64_t>(page_size);
  return static_cast<size_t>(std::min(kCap, half));
}

namespace {

std::string ShapeText(const std::vector<int32_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += StrCat(i ? "," : "", dims[i]);
  return text + "]";
}

std::string MiB(size_t bytes) {
  return StrCat(bytes / (1 << 20), bytes % (1 << 20) ? "+" : "", " MiB");
}

// a + b, saturating instead of wrapping (budget sums of untrusted sizes).
size_t SaturatingAdd(size_t a, size_t b) {
  return a > std::numeric_limits<size_t>::max() - b ? std::numeric_limits<size_t>::max() : a + b;
}

// Tensor data, scratch and the arena start on a 64-byte boundary: the arena
// is an AlignedBuffer, other buffers are allocated kTensorAlign bytes larger
// and used from AlignedStart.
constexpr size_t kTensorAlign = 64;
int64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
}

uint8_t* AlignedStart(uint8_t* p) {
  return p + (kTensorAlign - reinterpret_cast<uintptr_t>(p) % kTensorAlign) % kTensorAlign;
}

TensorView MakeView(const Tensor& t, int index) {
  TensorView view;
  view.index = index;
  view.name = t.name;
  view.type = t.type;
  view.dims = t.dims;
  view.data = t.data;
  view.bytes = t.bytes;
  view.scales = t.quantization->scale;
  view.zero_points = t.quantization->zero_point;
  view.quantized_dimension = t.quantization->quantized_dimension;
  view.is_constant = t.is_constant();
  return view;
}

// A delegate node's state: the delegate's kernel and the views handed to it,
// sized in Prepare so Eval only refreshes them.
struct DelegateNodeData {
  std::unique_ptr<DelegateKernel> kernel;
  std::string delegate_name;
  std::vector<TensorView> input_views, output_views;
  std::string eval_error;  // kept alive for KernelContext::SetEvalError
};

// Thrown by a delegate node's Prepare so AllocateTensors can fall back.
class DelegatePrepareError : public Error {
 public:
  DelegatePrepareError(std::string delegate, const std::string& message)
      : Error(message), delegate_name(std::move(delegate)) {}
  std::string delegate_name;
};

void PrepareDelegateNode(KernelContext& ctx, Node& node) {
  auto* data = node.data<DelegateNodeData>();
  data->input_views.clear();
  for (int32_t t : node.inputs) data->input_views.push_back(MakeView(ctx.tensor(t), t));
  std::vector<std::vector<int32_t>> output_dims;
  Status status = data->kernel->Prepare(data->input_views, &output_dims);
  if (!status.ok())
    throw DelegatePrepareError(data->delegate_name,
                               StrCat("node ", node.index, " (", node.op_name,
                                      "): delegate Prepare failed: ", status.message()));
  if (output_dims.size() != node.outputs.size())
    throw DelegatePrepareError(data->delegate_name,
                               StrCat("node ", node.index, " (", node.op_name, "): delegate gave ",
                                      output_dims.size(), " output shapes for ",
                                      node.outputs.size(), " outputs"));
  for (size_t i = 0; i < node.outputs.size(); ++i)
    ctx.SetOutputDims(node, static_cast<int>(i), output_dims[i]);
  data->output_views.assign(node.outputs.size(), TensorView{});
}

void EvalDelegateNode(KernelContext& ctx, const Node& node) {
  auto* data = node.data<DelegateNodeData>();
  for (size_t i = 0; i < node.inputs.size(); ++i)
    data->input_views[i] = MakeView(ctx.tensor(node.inputs[i]), node.inputs[i]);
  for (size_t i = 0; i < node.outputs.size(); ++i)
    data->output_views[i] = MakeView(ctx.tensor(node.outputs[i]), node.outputs[i]);
  Status status = data->kernel->Eval(data->input_views, data->output_views);
  if (!status.ok()) {
    data->eval_error = status.message();
    ctx.SetEvalError(node, data->eval_error.c_str());
  }
}

const OpKernel kDelegateOpKernel{BuiltinOp::kDelegate, nullptr, 1, 1, &PrepareDelegateNode,
                                 &EvalDelegateNode};

}  // namespace


InterpreterImpl::InterpreterImpl(std::shared_ptr<const ModelDef> model,
                                 const InterpreterOptions& options)
    : InterpreterImpl(std::move(model), options, 0, nullptr) {}

InterpreterImpl::InterpreterImpl(std::shared_ptr<const ModelDef> model,
                                 const InterpreterOptions& options, int subgraph_index,
                                 InterpreterImpl* root)
    : model_(std::move(model)),
      subgraph_index_(subgraph_index),
      root_(root != nullptr ? root : this),
      pool_(options.num_threads),
      context_(tensors_, pool_, options.kernels == KernelSet::kOptimized),
      fuse_nodes_(options.kernels == KernelSet::kOptimized && options.fuse_nodes),
      max_arena_bytes_(options.max_arena_bytes),
      memory_budget_(options.max_memory_bytes != 0 ? options.max_memory_bytes
                                                    : DefaultMemoryBudget()) {
  DLG_CHECK(model_ != nullptr, "no model");
  DLG_CHECK(!model_->subgraphs.empty(), "model has no subgraph");
  context_.set_interpreter(this);
  const SubgraphDef& graph = subgraph();

  // A tensor no node produces, not a graph input, with zero elements and no
  // buffer (an empty MEAN axis list, say) is an empty constant, as in LiteRT.
  std::vector<char> produced_or_input(graph.tensors.size(), 0);
  for (const OperatorDef& op : graph.operators)
    for (int32_t t : op.outputs)
      if (t >= 0) produced_or_input[t] = 1;
  for (int32_t t : graph.inputs) produced_or_input[t] = 1;
  static uint8_t empty_constant_data[1] = {0};

  tensors_.resize(graph.tensors.size());
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const TensorDef& def = graph.tensors[i];
    Tensor& t = tensors_[i];
    t.name = def.name;
    t.type = def.type;
    t.dims = def.shape;
    t.quantization = &def.quantization;
    if (def.has_sparsity)
      Fail("tensor ", i, " (\"", def.name, "\") is sparse; sparse tensors are not supported");
    const bool has_data = def.buffer != 0 && def.buffer < model_->buffers.size() &&
                          !model_->buffers[def.buffer].empty();
    if (has_data) {
      t.storage = TensorStorage::kConstant;
      const std::span<const uint8_t> data = model_->buffers[def.buffer].bytes();
      t.data = const_cast<uint8_t*>(data.data());  // constants are never written
      t.bytes = data.size();
    } else if (def.is_variable) {
      t.storage = TensorStorage::kVariable;
    } else if (!produced_or_input[i] && !def.shape.empty() &&
               std::find(def.shape.begin(), def.shape.end(), 0) != def.shape.end()) {
      t.storage = TensorStorage::kConstant;
      t.data = empty_constant_data;
      t.bytes = 0;
    } else {
      t.storage = TensorStorage::kArena;
    }
  }

  // Every unsupported node is found before failing, so the error can say how
  // many there are; it names the first in full (`delegato inspect` lists all).
  // The root checks every subgraph its control flow reaches (and rejects bad
  // subgraph indices and recursion) before any runner is made.
  std::vector<int> callees;
  std::vector<UnsupportedNode> unsupported;
  if (root == nullptr) {
    callees = ReachableSubgraphs(*model_);
    unsupported = FindUnsupportedNodes(*model_, 0);
    for (int s : callees)
      for (UnsupportedNode& node : FindUnsupportedNodes(*model_, s)) {
        node.message = StrCat("subgraph ", s, " ", node.message);
        unsupported.push_back(std::move(node));
      }
  }
  if (!unsupported.empty()) {
    if (unsupported.size() == 1) Fail(unsupported[0].message);
    Fail(unsupported[0].message, "; ", unsupported.size() - 1,
         " more unsupported node(s) (delegato inspect lists them all)");
  }
  nodes_.resize(graph.operators.size());
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const OperatorDef& op = graph.operators[i];
    Node& node = nodes_[i];
    node.index = static_cast<int>(i);
    node.def = &op;
    node.inputs = op.inputs;
    node.outputs = op.outputs;
    const OperatorCodeDef& code = model_->operator_codes.at(op.opcode_index);
    node.op_name = model_->OpName(op);
    node.version = code.version;
    node.kernel = FindKernel(code.builtin, code.custom_code);
  }

  for (int32_t input : graph.inputs) input_dims_.push_back(graph.tensors[input].shape);
  CheckGraph();
  num_model_nodes_ = static_cast<int>(nodes_.size());
  for (int i = 0; i < num_model_nodes_; ++i) execution_plan_.push_back(i);
  placements_.resize(nodes_.size());

  if (root == nullptr) {
    runners_.resize(model_->subgraphs.size());
    call_once_done_.assign(model_->subgraphs.size(), 0);
    // Callees run on the calling thread: their kernels get a pool of one.
    InterpreterOptions callee_options = options;
    callee_options.num_threads = 1;
    for (int s : callees) {
      try {
        runners_[s].reset(new InterpreterImpl(model_, callee_options, s, this));
      } catch (const Error& e) {
        Fail("subgraph ", s, ": ", e.what());
      }
    }
  }
}

InterpreterImpl& InterpreterImpl::runner(int index) {
  return index == 0 ? *root_ : *root_->runners_[index];
}

void InterpreterImpl::PrepareAsCallee(const Node& caller, const char* role,
                                      const std::vector<const Tensor*>& args) {
  const SubgraphDef& graph = subgraph();
  const std::string where =
      StrCat("node ", caller.index, " (", caller.op_name, "): ", role, " subgraph ", subgraph_index_);
  if (args.size() != graph.inputs.size())
    Fail(where, " has ", graph.inputs.size(), " inputs, the node passes ", args.size());
  for (size_t k = 0; k < args.size(); ++k) {
    const Tensor& in = tensors_[graph.inputs[k]];
    if (in.type != args[k]->type)
      Fail(where, " input ", k, " (\"", in.name, "\") is ", DataTypeName(in.type),
           ", the node passes ", DataTypeName(args[k]->type));
    input_dims_[k] = args[k]->dims;
  }
  try {
    AllocateTensors();
  } catch (const Error& e) {
    Fail(where, ": ", e.what());
  }
}

int InterpreterImpl::ResourceId(const std::string& container, const std::string& shared_name) {
  auto [it, inserted] = root_->resource_ids_.try_emplace(
      std::make_pair(container, shared_name), static_cast<int>(root_->resources_.size()));
  if (inserted) root_->resources_.emplace_back();
  return it->second;
}

InterpreterImpl::ResourceVariable* InterpreterImpl::resource(int32_t id) {
  std::vector<ResourceVariable>& all = root_->resources_;
  return id >= 0 && static_cast<size_t>(id) < all.size() ? &all[id] : nullptr;
}

// Every tensor a node reads must exist before the node runs: a graph input, a
// constant, a variable, or the output of an earlier node. Each tensor has at
// most one producer. This is what makes the operator order a valid schedule.
void InterpreterImpl::CheckGraph() const {
  const SubgraphDef& graph = subgraph();
  const int n = static_cast<int>(tensors_.size());
  std::vector<char> ready(n, 0);
  for (int32_t input : graph.inputs) ready[input] = 1;
  for (int i = 0; i < n; ++i)
    if (tensors_[i].storage == TensorStorage::kConstant ||
        tensors_[i].storage == TensorStorage::kVariable)
      ready[i] = 1;
  for (const Node& node : nodes_) {
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int32_t t = node.inputs[k];
      if (t < 0) continue;
      if (!ready[t])
        Fail("node ", node.index, " (", node.op_name, "): input ", k, " (tensor ", t, " \"",
             tensors_[t].name, "\") is not produced by any earlier node");
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int32_t t = node.outputs[k];
      if (t < 0) Fail("node ", node.index, " (", node.op_name, "): output ", k, " is missing");
      if (tensors_[t].storage == TensorStorage::kConstant)
        Fail("node ", node.index, " (", node.op_name, "): output ", k, " (tensor ", t, " \"",
             tensors_[t].name, "\") is a constant");
      if (ready[t] && tensors_[t].storage != TensorStorage::kVariable)
        Fail("node ", node.index, " (", node.op_name, "): output ", k, " (tensor ", t, " \"",
             tensors_[t].name, "\") is already produced elsewhere");
      ready[t] = 1;
    }
  }
  for (int32_t output : graph.outputs)
    if (!ready[output])
      Fail("graph output tensor ", output, " (\"", tensors_[output].name,
           "\") is produced by no node");
}

void InterpreterImpl::ResizeInput(int input, std::vector<int32_t> dims) {
  DLG_CHECK(input >= 0 && input < static_cast<int>(input_dims_.size()), "input ", input,
            " out of range (model has ", input_dims_.size(), " inputs)");
  for (int32_t d : dims) DLG_CHECK(d >= 0, "input ", input, ": negative dimension ", d);
  input_dims_[input] = std::move(dims);
  allocated_ = false;
}

void InterpreterImpl::AllocateTensors() {
  for (;;) {
    try {
      AllocateTensorsOnce();
      return;
    } catch (const DelegatePrepareError& e) {
      // TFLite's fallback: restore the plan from before this delegate, so its
      // partitions run on the CPU again, and say so.
      warnings_.push_back(StrCat(e.what(), "; running the graph without delegate '",
                                 e.delegate_name, "'"));
      auto snapshot = std::find_if(plan_snapshots_.begin(), plan_snapshots_.end(),
                                   [&](const PlanSnapshot& p) { return p.delegate == e.delegate_name; });
      if (snapshot == plan_snapshots_.end()) throw;  // cannot happen: every delegate node has one
      execution_plan_ = snapshot->plan;
      placements_ = snapshot->placements;
      plan_snapshots_.erase(snapshot, plan_snapshots_.end());
    }
  }
}

void InterpreterImpl::AllocateTensorsOnce() {
  const SubgraphDef& graph = subgraph();
  allocated_ = false;
  const int num_steps = static_cast<int>(execution_plan_.size());

  // Inputs and variables get their dims; every produced tensor is reset so a
  // Prepare that forgets to size an output is caught.
  for (size_t k = 0; k < graph.inputs.size(); ++k) {
    Tensor& t = tensors_[graph.inputs[k]];
    if (t.storage == TensorStorage::kConstant) continue;
    t.dims = input_dims_[k];
    try {
      t.bytes = TensorByteSize(t.type, t.dims);
    } catch (const Error& e) {
      Fail("input ", k, " (tensor ", graph.inputs[k], " \"", t.name, "\") ",
           DataTypeName(t.type), " ", ShapeText(t.dims), ": ", e.what());
    }
    CheckFitsBudget(StrCat("input ", k), graph.inputs[k], t.bytes);
  }
  // Tensors folded by the previous Prepare go back to the arena: the input
  // dims they followed from may have changed.
  for (int32_t t : folded_tensors_) {
    tensors_[t].storage = TensorStorage::kArena;
    tensors_[t].data = nullptr;
  }
  folded_tensors_.clear();
  folded_storage_.clear();
  folded_bytes_ = 0;
  folded_.assign(nodes_.size(), 0);
  for (int32_t t : dynamic_tensors_) {
    tensors_[t].storage = TensorStorage::kArena;
    tensors_[t].data = nullptr;
  }
  dynamic_tensors_.clear();
  deferred_.clear();
  deferred_.resize(nodes_.size());
  // Produced tensors are marked unsized so a Prepare that forgets an output is caught.
  constexpr size_t kUnsized = std::numeric_limits<size_t>::max();
  for (int index : execution_plan_)
    for (int32_t t : nodes_[index].outputs)
      if (tensors_[t].storage == TensorStorage::kArena) tensors_[t].bytes = kUnsized;
  // Variables are sized and checked against the budget here, but allocated
  // only after every node's Prepare has validated them (an LSTM checks its
  // state's shape), so a hostile declared shape is refused before it costs memory.
  variable_storage_.clear();
  size_t variable_bytes = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    Tensor& t = tensors_[i];
    if (t.storage != TensorStorage::kVariable) continue;
    t.data = nullptr;
    try {
      t.bytes = TensorByteSize(t.type, t.dims);
    } catch (const Error& e) {
      Fail("variable tensor ", i, " (\"", t.name, "\") ", DataTypeName(t.type), " ",
           ShapeText(t.dims), ": ", e.what());
    }
    CheckFitsBudget("variable", static_cast<int>(i), t.bytes);
    variable_bytes = SaturatingAdd(variable_bytes, t.bytes);
    if (variable_bytes > memory_budget_)
      Fail("the model's variable tensors need ", variable_bytes, " bytes in all (tensor ", i,
           " \"", t.name, "\" brings them over), over the memory budget of ", memory_budget_,
           " bytes (", MiB(memory_budget_), ")");
  }

  OfferFusions();
  const auto prepare_start = std::chrono::steady_clock::now();
  for (int index : execution_plan_) {
    Node& node = nodes_[index];
    if (node.kernel != &kDelegateOpKernel) node.op_data.reset();  // a delegate node keeps its kernel
    node.scratch_bytes = 0;
    bool after_dynamic = false;
    for (int32_t t : node.inputs)
      if (t >= 0 && tensors_[t].storage == TensorStorage::kDynamic) after_dynamic = true;
    if (after_dynamic && node.kernel != &kDelegateOpKernel) {
      Defer(index, -1);
      continue;
    }
    try {
      node.kernel->prepare(context_, node);
    } catch (const RuntimeValuesNeeded& e) {
      if (node.kernel == &kDelegateOpKernel) throw Error(e.what());
      Defer(index, e.tensor());
      continue;
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const Tensor& t = tensors_[node.outputs[k]];
      if (t.storage == TensorStorage::kArena && t.bytes == kUnsized)
        Fail("node ", node.index, " (", node.op_name, "): output ", k, " (tensor \"", t.name,
             "\") was not sized by Prepare");
      if (t.storage == TensorStorage::kArena)
        CheckFitsBudget(StrCat("node ", node.index, " (", node.op_name, "): output ", k),
                        node.outputs[k], t.bytes);
    }
    if (node.scratch_bytes > memory_budget_)
      Fail("node ", node.index, " (", node.op_name, "): needs ", node.scratch_bytes,
           " bytes of scratch memory, over the memory budget of ", memory_budget_, " bytes (",
           MiB(memory_budget_), ")");
    if (TryFoldInPrepare(node)) folded_[index] = 1;
    // The node has read its constants (the packing kernels into their own
    // layout): their pages of the mapped file need not stay resident, so the
    // model's weights are not held twice. A later read (a kernel that reads
    // them in Eval, a resize) brings them back from the file.
    for (int32_t t : node.inputs)
      if (t >= 0 && tensors_[t].storage == TensorStorage::kConstant)
        ReleaseMappedPages(*model_, tensors_[t].data, tensors_[t].bytes);
  }

  fused_into_.assign(nodes_.size(), -1);
  for (int index : execution_plan_) {
    const Node& node = nodes_[index];
    if (node.fused.accepted) fused_into_[node.fused.producer] = index;
  }

  // Pages a node's reads brought in around its own constants (the OS maps
  // neighbours of a faulting page too) go as well: Eval reads back only what
  // it uses.
  if (model_->mapping) ReleaseMappedPages(*model_, model_->mapping->data, model_->mapping->size);
  allocate_timings_.prepare_us = MicrosSince(prepare_start);
  const auto arena_start = std::chrono::steady_clock::now();

  // Lifetimes in steps: graph inputs live from step 0, the plan's step i runs
  // at i + 1, graph outputs live to the end.
  std::vector<int> first_use(tensors_.size(), -1), last_use(tensors_.size(), -1);
  for (int32_t t : graph.inputs) first_use[t] = last_use[t] = 0;
  for (int i = 0; i < num_steps; ++i) {
    const Node& node = nodes_[execution_plan_[i]];
    for (int32_t t : node.inputs)
      if (t >= 0) last_use[t] = std::max(last_use[t], i + 1);
    if (node.fused.accepted)  // reads its producer's input in its place
      last_use[node.fused.source] = std::max(last_use[node.fused.source], i + 1);
    for (int32_t t : node.outputs) {
      if (first_use[t] < 0) first_use[t] = i + 1;
      last_use[t] = std::max(last_use[t], i + 1);
    }
  }
  // Graph inputs and outputs live through the whole Invoke: the caller's
  // inputs must survive it (a second Invoke sees the same values), as in TFLite.
  for (int32_t t : graph.inputs) last_use[t] = num_steps + 1;
  for (int32_t t : graph.outputs) last_use[t] = num_steps + 1;

  ArenaPlanner planner;
  std::vector<int> buffer_of_tensor(tensors_.size(), -1);
  for (size_t t = 0; t < tensors_.size(); ++t) {
    if (tensors_[t].storage != TensorStorage::kArena || first_use[t] < 0) continue;
    buffer_of_tensor[t] = planner.AddBuffer(tensors_[t].bytes, first_use[t], last_use[t]);
  }
  std::vector<int> buffer_of_scratch(num_steps, -1);
  for (int i = 0; i < num_steps; ++i)
    if (nodes_[execution_plan_[i]].scratch_bytes > 0)
      buffer_of_scratch[i] = planner.AddBuffer(nodes_[execution_plan_[i]].scratch_bytes, i + 1, i + 1);
  planner.Plan();

  arena_bytes_ = planner.arena_bytes();
  if (max_arena_bytes_ != 0 && arena_bytes_ > max_arena_bytes_)
    Fail("the planned arena needs ", arena_bytes_, " bytes, over the limit of ", max_arena_bytes_);
  if (SaturatingAdd(arena_bytes_, variable_bytes) > memory_budget_) {
    // Name the largest arena tensor: the likeliest culprit.
    size_t largest = 0;
    for (size_t t = 1; t < tensors_.size(); ++t)
      if (buffer_of_tensor[t] >= 0 &&
          (buffer_of_tensor[largest] < 0 || tensors_[t].bytes > tensors_[largest].bytes))
        largest = t;
    std::string culprit;
    if (!tensors_.empty() && buffer_of_tensor[largest] >= 0)
      culprit = StrCat("; the largest tensor is ", largest, " (\"", tensors_[largest].name, "\") ",
                       DataTypeName(tensors_[largest].type), " ", ShapeText(tensors_[largest].dims),
                       " = ", tensors_[largest].bytes, " bytes");
    Fail("the planned arena (", arena_bytes_, " bytes) and variable tensors (", variable_bytes,
         " bytes) exceed the memory budget of ", memory_budget_, " bytes (", MiB(memory_budget_),
         ")", culprit);
  }
  arena_storage_.Resize(std::max<size_t>(arena_bytes_, kTensorAlign));
  uint8_t* base = arena_storage_.data();
  for (size_t t = 0; t < tensors_.size(); ++t) {
    if (buffer_of_tensor[t] >= 0) tensors_[t].data = base + planner.offset(buffer_of_tensor[t]);
  }
  for (int i = 0; i < num_steps; ++i)
    nodes_[execution_plan_[i]].scratch =
        buffer_of_scratch[i] >= 0 ? base + planner.offset(buffer_of_scratch[i]) : nullptr;
  for (Tensor& t : tensors_) {
    if (t.storage != TensorStorage::kVariable) continue;
    variable_storage_.emplace_back(new uint8_t[t.bytes + 1]());
    t.data = variable_storage_.back().get();
    // TFLite resets int8 variables to their zero point (real 0), others to 0.
    if (t.type == DataType::kInt8 && t.quantization != nullptr &&
        !t.quantization->zero_point.empty())
      std::memset(t.data, static_cast<int8_t>(t.quantization->zero_point[0]), t.bytes);
  }
  // Inputs start zeroed so an un-set input gives deterministic results.
  for (int32_t t : graph.inputs)
    if (tensors_[t].storage == TensorStorage::kArena && tensors_[t].bytes > 0)
      std::memset(tensors_[t].data, 0, tensors_[t].bytes);
  allocate_timings_.arena_us = MicrosSince(arena_start);
  allocated_ = true;
}

namespace {

// Whether `t` holds 8-bit values with one scale and zero point (per tensor).
bool IsPerTensor8Bit(const Tensor& t) {
  return (t.type == DataType::kInt8 || t.type == DataType::kUInt8) && t.quantization != nullptr &&
         t.quantization->scale.size() == 1;
}

}  // namespace

void InterpreterImpl::OfferFusions() {
  for (Node& node : nodes_) node.fused = Node::FusedProducer();
  if (!fuse_nodes_) return;
  const SubgraphDef& graph = subgraph();
  std::vector<int> readers(tensors_.size(), 0);
  for (int index : execution_plan_)
    for (int32_t t : nodes_[index].inputs)
      if (t >= 0) ++readers[t];
  std::vector<int> producer(tensors_.size(), -1);
  for (int index : execution_plan_)
    for (int32_t t : nodes_[index].outputs) producer[t] = index;
  const auto builtin = [&](const Node& node, BuiltinOp op) {
    return node.kernel != &kDelegateOpKernel && node.kernel->custom_code == nullptr &&
           node.kernel->builtin == op;
  };
  // The producer of `t` when this node alone reads it and it is no graph output.
  const auto sole_producer = [&](int32_t t) -> Node* {
    if (t < 0 || readers[t] != 1 || producer[t] < 0 ||
        std::find(graph.outputs.begin(), graph.outputs.end(), t) != graph.outputs.end())
      return nullptr;
    return &nodes_[producer[t]];
  };
  const auto offer = [&](Node& consumer, int slot, const Node& from, int32_t source) {
    Node::FusedProducer& f = consumer.fused;
    f.source = source;
    f.producer = producer[consumer.inputs[slot]];
    f.producer_node = &from;
    f.slot = slot;
  };
  const auto binary_8bit = [&](const Node& node) {
    return (builtin(node, BuiltinOp::kAdd) || builtin(node, BuiltinOp::kSub) ||
            builtin(node, BuiltinOp::kMul)) &&
           node.inputs.size() == 2 && node.outputs.size() == 1 && node.inputs[0] >= 0 &&
           node.inputs[1] >= 0 && IsPerTensor8Bit(tensors_[node.inputs[0]]) &&
           IsPerTensor8Bit(tensors_[node.inputs[1]]);
  };
  // The non-constant input slot of a binary node with exactly one constant input.
  const auto variable_slot = [&](const Node& node) {
    const bool c0 = tensors_[node.inputs[0]].storage == TensorStorage::kConstant;
    const bool c1 = tensors_[node.inputs[1]].storage == TensorStorage::kConstant;
    return c0 == c1 ? -1 : c0 ? 1 : 0;
  };
  for (int index : execution_plan_) {
    Node& node = nodes_[index];
    const auto float32 = [&](int32_t t) { return tensors_[t].type == DataType::kFloat32; };
    const bool float_mul = builtin(node, BuiltinOp::kMul) && node.inputs.size() == 2 &&
                           node.outputs.size() == 1 && node.inputs[0] >= 0 &&
                           node.inputs[1] >= 0 && float32(node.inputs[0]) &&
                           float32(node.inputs[1]);
    if ((binary_8bit(node) || float_mul) && builtin(node, BuiltinOp::kMul) &&
        variable_slot(node) < 0 && node.inputs[0] != node.inputs[1]) {
      // MUL(x, LOGISTIC(x)) (swish, either order): an 8-bit MUL tabulates
      // the pair, one output byte per byte of x, a float32 one computes both
      // in one pass (its Prepare checks the shapes).
      for (int slot = 0; slot < 2; ++slot) {
        const Node* logistic = sole_producer(node.inputs[slot]);
        if (logistic != nullptr && builtin(*logistic, BuiltinOp::kLogistic) &&
            logistic->inputs.size() == 1 && logistic->outputs.size() == 1 &&
            logistic->inputs[0] == node.inputs[1 - slot]) {
          offer(node, slot, *logistic, logistic->inputs[0]);
          break;
        }
      }
      if (node.fused.source >= 0) continue;
    }
    if (binary_8bit(node)) {
      // ADD/SUB/MUL by a constant after another: the consumer composes the
      // tables (its Prepare checks that both are tabulated and compatible).
      const int slot = variable_slot(node);
      if (slot < 0) continue;
      const Node* first = sole_producer(node.inputs[slot]);
      if (first == nullptr || !binary_8bit(*first)) continue;
      const int first_slot = variable_slot(*first);
      if (first_slot < 0) continue;
      offer(node, slot, *first, first->inputs[first_slot]);
      continue;
    }
    if (!builtin(node, BuiltinOp::kConv2d) && !builtin(node, BuiltinOp::kDepthwiseConv2d)) continue;
    if (node.inputs.empty() || node.inputs[0] < 0) continue;
    const int32_t padded = node.inputs[0];
    const Node* input_producer = sole_producer(padded);
    if (input_producer == nullptr) continue;
    const Node& first = *input_producer;
    if (builtin(node, BuiltinOp::kDepthwiseConv2d) && builtin(first, BuiltinOp::kConv2d) &&
        first.inputs.size() >= 2 && first.inputs[0] >= 0 && first.outputs.size() == 1 &&
        float32(padded) && float32(first.inputs[0])) {
      // DEPTHWISE_CONV_2D after a float32 CONV_2D: the depthwise node runs
      // both band by band (its Prepare decides).
      offer(node, 0, first, first.inputs[0]);
      continue;
    }
    const Node& pad = first;
    // PAD (its value the output's zero point, or 0) with a constant paddings [4, 2].
    if (!builtin(pad, BuiltinOp::kPad) || pad.inputs.size() != 2 || pad.outputs.size() != 1 ||
        pad.inputs[0] < 0 || pad.inputs[1] < 0)
      continue;
    const Tensor& in = tensors_[pad.inputs[0]];
    const Tensor& out = tensors_[padded];
    const Tensor& paddings = tensors_[pad.inputs[1]];
    if (in.storage == TensorStorage::kDynamic || in.storage == TensorStorage::kVariable ||
        in.type != out.type || paddings.storage != TensorStorage::kConstant ||
        paddings.dims != std::vector<int32_t>{4, 2})
      continue;
    // The padded value must be the convolution's own padding value: the
    // input's quantization equals the output's, so its zero point is it.
    const Quantization* in_q = in.quantization;
    const Quantization* out_q = out.quantization;
    const bool in_quantized = in_q != nullptr && !in_q->empty();
    const bool out_quantized = out_q != nullptr && !out_q->empty();
    if (in_quantized != out_quantized ||
        (in_quantized && (in_q->scale != out_q->scale || in_q->zero_point != out_q->zero_point)))
      continue;
    int64_t p[8];
    if (paddings.type == DataType::kInt32 && paddings.bytes >= 8 * sizeof(int32_t)) {
      for (int k = 0; k < 8; ++k) {
        int32_t v;
        std::memcpy(&v, paddings.data + k * sizeof(int32_t), sizeof v);
        p[k] = v;
      }
    } else if (paddings.type == DataType::kInt64 && paddings.bytes >= 8 * sizeof(int64_t)) {
      std::memcpy(p, paddings.data, sizeof p);
    } else {
      continue;
    }
    // Height and width only, each side within int32 (PAD's Prepare checks the rest).
    if (p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0) continue;
    bool in_range = true;
    for (int k = 2; k < 6; ++k) in_range = in_range && p[k] >= 0 && p[k] <= (1 << 20);
    if (!in_range) continue;
    offer(node, 0, pad, pad.inputs[0]);
    Node::FusedProducer& f = node.fused;
    f.top = static_cast<int32_t>(p[2]);
    f.bottom = static_cast<int32_t>(p[3]);
    f.left = static_cast<int32_t>(p[4]);
    f.right = static_cast<int32_t>(p[5]);
  }
}

bool InterpreterImpl::TryFoldInPrepare(Node& node) {
  // Shape computations are a few integers; the bounds keep folding from
  // materializing large constants (which the budget does not plan for).
  constexpr size_t kMaxFoldedTensorBytes = 64 << 10;
  constexpr size_t kMaxFoldedBytes = 4 << 20;
  if (node.kernel == &kDelegateOpKernel || node.kernel->custom_code != nullptr) return false;
  const BuiltinOp op = node.kernel->builtin;
  switch (op) {
    // State, randomness, other subgraphs and custom code are never folded.
    case BuiltinOp::kCustom:
    case BuiltinOp::kIf:
    case BuiltinOp::kWhile:
    case BuiltinOp::kCallOnce:
    case BuiltinOp::kVarHandle:
    case BuiltinOp::kReadVariable:
    case BuiltinOp::kAssignVariable:
    case BuiltinOp::kRandomStandardNormal:
    case BuiltinOp::kRandomUniform:
    case BuiltinOp::kMultinomial:
      return false;
    default:
      break;
  }
  const bool dims_only = op == BuiltinOp::kShape || op == BuiltinOp::kRank;
  for (int32_t t : node.inputs) {
    if (t < 0) continue;
    const Tensor& in = tensors_[t];
    if (in.storage == TensorStorage::kVariable) return false;
    if (!dims_only && in.storage != TensorStorage::kConstant) return false;
  }
  size_t bytes = 0;
  for (int32_t t : node.outputs) {
    const Tensor& out = tensors_[t];
    if (out.storage != TensorStorage::kArena || out.bytes > kMaxFoldedTensorBytes) return false;
    bytes += out.bytes;
  }
  if (folded_bytes_ + bytes + node.scratch_bytes > kMaxFoldedBytes) return false;
  // Graph outputs stay in the arena, where callers expect them.
  const SubgraphDef& graph = subgraph();
  for (int32_t t : node.outputs)
    if (std::find(graph.outputs.begin(), graph.outputs.end(), t) != graph.outputs.end())
      return false;

  auto aligned = [&](size_t size) {
    folded_storage_.emplace_back(new uint8_t[size + kTensorAlign]());
    return AlignedStart(folded_storage_.back().get());
  };
  for (int32_t t : node.outputs) {
    tensors_[t].storage = TensorStorage::kConstant;
    tensors_[t].data = aligned(tensors_[t].bytes);
    folded_tensors_.push_back(t);
  }
  node.scratch = node.scratch_bytes > 0 ? aligned(node.scratch_bytes) : nullptr;
  folded_bytes_ += bytes + node.scratch_bytes;
  context_.ClearEvalError();
  node.kernel->eval(context_, node);
  if (context_.eval_error() != nullptr)
    Fail("node ", node.index, " (", node.op_name, "): ", context_.eval_error());
  node.scratch_bytes = 0;  // used up: the arena plans none for it
  return true;
}

uint8_t* InterpreterImpl::DynamicBuffer::Reserve(size_t bytes) {
  if (capacity < bytes || !data) {
    data.reset(new uint8_t[bytes + kTensorAlign]());
    capacity = bytes;
  }
  return AlignedStart(data.get());
}

void InterpreterImpl::Defer(int index, int32_t value_tensor) {
  DeferredNode& d = deferred_[index];
  d.active = true;
  // Prepared during Invoke, after the arena is planned: no producer folded in.
  nodes_[index].fused = Node::FusedProducer();
  if (value_tensor >= 0) d.value_inputs.push_back(value_tensor);
  for (int32_t t : nodes_[index].outputs) {
    Tensor& out = tensors_[t];
    if (out.storage != TensorStorage::kArena) continue;
    out.storage = TensorStorage::kDynamic;
    out.bytes = 0;
    out.data = nullptr;
    dynamic_tensors_.push_back(t);
  }
}

std::string InterpreterImpl::PrepareDeferred(int index) {
  DeferredNode& d = deferred_[index];
  Node& node = nodes_[index];
  // Unchanged inputs (dims, and the values Prepare reads): the last Prepare holds.
  bool changed = !d.prepared || d.seen_dims.size() != node.inputs.size() ||
                 d.seen_values.size() != d.value_inputs.size();
  for (size_t k = 0; !changed && k < node.inputs.size(); ++k)
    changed = node.inputs[k] >= 0 && tensors_[node.inputs[k]].dims != d.seen_dims[k];
  for (size_t k = 0; !changed && k < d.value_inputs.size(); ++k) {
    const Tensor& t = tensors_[d.value_inputs[k]];
    changed = t.bytes != d.seen_values[k].size() ||
              (t.bytes != 0 && std::memcmp(t.data, d.seen_values[k].data(), t.bytes) != 0);
  }
  if (!changed) return {};

  constexpr size_t kUnsized = std::numeric_limits<size_t>::max();
  d.prepared = false;
  // Prepare reads the value inputs as it reads constants; each RuntimeValuesNeeded
  // names one more (bounded by the node's inputs).
  for (size_t attempt = 0;; ++attempt) {
    std::vector<std::pair<int32_t, TensorStorage>> saved;
    for (int32_t t : d.value_inputs) {
      saved.emplace_back(t, tensors_[t].storage);
      tensors_[t].storage = TensorStorage::kConstant;
    }
    auto restore = [&] {
      for (const auto& [t, storage] : saved) tensors_[t].storage = storage;
    };
    for (int32_t t : node.outputs)
      if (tensors_[t].storage == TensorStorage::kDynamic) tensors_[t].bytes = kUnsized;
    node.op_data.reset();
    node.scratch_bytes = 0;
    try {
      node.kernel->prepare(context_, node);
      restore();
      break;
    } catch (const RuntimeValuesNeeded& e) {
      restore();
      const bool known = std::find(d.value_inputs.begin(), d.value_inputs.end(), e.tensor()) !=
                         d.value_inputs.end();
      if (known || e.tensor() < 0 || attempt >= node.inputs.size()) return e.what();
      d.value_inputs.push_back(e.tensor());
    } catch (const std::exception& e) {
      restore();
      return e.what();
    }
  }
  try {
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int32_t t = node.outputs[k];
      Tensor& out = tensors_[t];
      if (out.storage != TensorStorage::kDynamic) continue;
      if (out.bytes == kUnsized)
        Fail("node ", node.index, " (", node.op_name, "): output ", k, " (tensor \"", out.name,
             "\") was not sized by Prepare");
      CheckFitsBudget(StrCat("node ", node.index, " (", node.op_name, "): output ", k), t,
                      out.bytes);
      out.data = dynamic_storage_[t].Reserve(out.bytes);
    }
    if (node.scratch_bytes > memory_budget_)
      Fail("node ", node.index, " (", node.op_name, "): needs ", node.scratch_bytes,
           " bytes of scratch memory, over the memory budget of ", memory_budget_, " bytes");
    node.scratch = d.scratch.Reserve(node.scratch_bytes);
  } catch (const std::exception& e) {
    return e.what();
  }
  d.seen_dims.assign(node.inputs.size(), {});
  for (size_t k = 0; k < node.inputs.size(); ++k)
    if (node.inputs[k] >= 0) d.seen_dims[k] = tensors_[node.inputs[k]].dims;
  d.seen_values.assign(d.value_inputs.size(), {});
  for (size_t k = 0; k < d.value_inputs.size(); ++k) {
    const Tensor& t = tensors_[d.value_inputs[k]];
    d.seen_values[k].assign(t.data, t.data + t.bytes);
  }
  d.prepared = true;
  return {};
}

void InterpreterImpl::CheckFitsBudget(const std::string& what, int index, size_t bytes) const {
  if (bytes <= memory_budget_) return;
  const Tensor& t = tensors_[index];
  Fail(what, " (tensor ", index, " \"", t.name, "\") ", DataTypeName(t.type), " ",
       ShapeText(t.dims), " needs ", bytes, " bytes, over the memory budget of ", memory_budget_,
       " bytes (", MiB(memory_budget_), "; raise it with InterpreterOptions::max_memory_bytes or --max_memory_mb)");
}

void InterpreterImpl::ModifyGraphWithDelegate(Delegate* delegate) {
  DLG_CHECK(delegate != nullptr, "no delegate given");
  const std::string name = delegate->name();
  for (const PlanSnapshot& snapshot : plan_snapshots_)
    DLG_CHECK(snapshot.delegate != name, "delegate '", name, "' is already applied");

  // The partitioner sees the current plan: position p is node execution_plan_[p].
  const int steps = static_cast<int>(execution_plan_.size());
  GraphInfo graph;
  graph.num_tensors = static_cast<int>(tensors_.size());
  graph.graph_inputs = subgraph().inputs;
  graph.graph_outputs = subgraph().outputs;
  std::vector<NodeSupport> support(steps);
  for (int p = 0; p < steps; ++p) {
    const Node& node = nodes_[execution_plan_[p]];
    graph.node_inputs.push_back(node.inputs);
    graph.node_outputs.push_back(node.outputs);
    if (node.index >= num_model_nodes_) {
      support[p].reasons.push_back({ReasonCode::kClaimedByEarlierDelegate, "framework",
                                    "already delegated to " + node.op_name, ""});
      continue;
    }
    try {
      support[p] = delegate->Supports(model(), node.index);
    } catch (const std::exception& e) {
      Fail("delegate '", name, "' failed on node ", node.index, " (", node.op_name, "): ", e.what());
    }
  }
  const DelegationPlan plan = PlanDelegation(graph, support, delegate->options());

  plan_snapshots_.push_back(PlanSnapshot{name, execution_plan_, placements_});
  std::vector<int> new_plan;
  for (const NodeSubset& subset : plan.subsets) {
    if (!subset.delegated) {
      for (int p : subset.nodes) new_plan.push_back(execution_plan_[p]);
      continue;
    }
    DelegatePartition partition;
    partition.index = static_cast<int>(std::find(plan.partition_subsets.begin(),
                                                 plan.partition_subsets.end(),
                                                 &subset - plan.subsets.data()) -
                                       plan.partition_subsets.begin());
    for (int p : subset.nodes) partition.nodes.push_back(execution_plan_[p]);
    for (int t : subset.input_tensors)
      if (t >= 0 && !tensors_[t].is_constant()) partition.inputs.push_back(t);
    for (int t : subset.output_tensors) partition.outputs.push_back(t);

    auto data = std::make_shared<DelegateNodeData>();
    data->delegate_name = name;
    data->kernel = delegate->CreateKernel(model(), partition);
    DLG_CHECK(data->kernel != nullptr, "delegate '", name, "' created no kernel for partition ",
              partition.index);
    Node node;
    node.index = static_cast<int>(nodes_.size());
    node.kernel = &kDelegateOpKernel;
    node.op_name = name;
    node.inputs = partition.inputs;
    node.outputs = partition.outputs;
    node.op_data = std::move(data);
    nodes_.push_back(std::move(node));
    new_plan.push_back(nodes_.back().index);
  }
  execution_plan_ = std::move(new_plan);

  int total = 0;
  for (int p = 0; p < steps; ++p) {
    const int index = plan_snapshots_.back().plan[p];
    if (index >= num_model_nodes_) continue;
    ++total;
    Interpreter::Placement& placement = placements_[index];
    placement.delegated = plan.nodes[p].delegated;
    placement.partition = plan.nodes[p].partition;
    placement.delegate = plan.nodes[p].delegated ? name : "";
    if (!plan.nodes[p].delegated) placement.reasons = plan.nodes[p].reasons;
    else placement.reasons.clear();
  }
  delegation_log_.push_back(
      SummaryLine(name, plan.num_delegated_nodes, total, plan.num_candidate_partitions));
  AllocateTensors();
}

std::string InterpreterImpl::Invoke(const std::function<void(int)>* after_node) {
  if (!allocated_) return "AllocateTensors() must succeed before Invoke()";
  context_.ClearEvalError();
  for (int index : execution_plan_) {
    const Node& node = nodes_[index];
    // Folded: computed in Prepare, its outputs are constants now. Elided: a
    // producer the node after it took in (a PAD, a tabulated ADD/SUB/MUL).
    if (folded_[index] || fused_into_[index] >= 0) {
      if (after_node != nullptr) (*after_node)(node.index);
      continue;
    }
    if (deferred_[index].active) {
      const std::string error = PrepareDeferred(index);
      if (!error.empty()) return error;
    }
    node.kernel->eval(context_, node);
    if (context_.eval_error() != nullptr)
      return StrCat("node ", node.index, " (", node.op_name, "): ", context_.eval_error());
    if (after_node != nullptr) (*after_node)(node.index);
  }
  return {};
}

// ------------------------------------------------------------------ Interpreter

Status LoadModel(const std::string& path, std::shared_ptr<const ModelDef>* model) {
  try {
    *model = ReadModelFile(path);
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::Error(e.what());
  }
}

Interpreter::Interpreter(std::unique_ptr<InterpreterImpl> impl) : impl_(std::move(impl)) {}
Interpreter::~Interpreter() = default;

std::unique_ptr<Interpreter> Interpreter::Create(std::shared_ptr<const ModelDef> model,
                                                 const InterpreterOptions& options,
                                                 Status* status) {
  try {
    if (options.num_threads < 1 || options.num_threads > 256)
      Fail("num_threads must be in 1..256, got ", options.num_threads);
    auto impl = std::make_unique<InterpreterImpl>(std::move(model), options);
    if (status) *status = Status::Ok();
    return std::unique_ptr<Interpreter>(new Interpreter(std::move(impl)));
  } catch (const std::exception& e) {
    if (status) *status = Status::Error(e.what());
    return nullptr;
  }
}

Status Interpreter::ResizeInput(int input, std::vector<int32_t> dims) {
  try {
    impl_->ResizeInput(input, std::move(dims));
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::Error(e.what());
  }
}

Status Interpreter::AllocateTensors() {
  try {
    impl_->AllocateTensors();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::Error(e.what());
  }
}

Status Interpreter::Invoke() { return Invoke(std::function<void(int)>()); }

Status Interpreter::Invoke(const std::function<void(int)>& after_node) {
  std::string error = impl_->Invoke(after_node ? &after_node : nullptr);
  return error.empty() ? Status::Ok() : Status::Error(std::move(error));
}

int Interpreter::num_inputs() const { return static_cast<int>(impl_->subgraph().inputs.size()); }
int Interpreter::num_outputs() const {
  return static_cast<int>(impl_->subgraph().outputs.size());
}

TensorView Interpreter::tensor(int index) const {
  return MakeView(impl_->tensors().at(index), index);
}

TensorView Interpreter::input(int i) const { return tensor(impl_->subgraph().inputs.at(i)); }
TensorView Interpreter::output(int i) const { return tensor(impl_->subgraph().outputs.at(i)); }

int Interpreter::FindInput(std::string_view name) const {
  const auto& inputs = impl_->subgraph().inputs;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (impl_->tensors()[inputs[i]].name == name) return static_cast<int>(i);
  return -1;
}

int Interpreter::FindOutput(std::string_view name) const {
  const auto& outputs = impl_->subgraph().outputs;
  for (size_t i = 0; i < outputs.size(); ++i)
    if (impl_->tensors()[outputs[i]].name == name) return static_cast<int>(i);
  return -1;
}

int Interpreter::num_tensors() const { return static_cast<int>(impl_->tensors().size()); }
int Interpreter::num_nodes() const { return static_cast<int>(impl_->nodes().size()); }

NodeView Interpreter::node(int index) const {
  const Node& n = impl_->nodes().at(index);
  return NodeView{n.index, n.op_name, n.version, n.inputs, n.outputs, impl_->fused_into(index)};
}

size_t Interpreter::arena_bytes() const { return impl_->arena_bytes(); }
Interpreter::AllocateTimings Interpreter::allocate_timings() const { return impl_->allocate_timings(); }

void Interpreter::SetPackedWeightStore(std::shared_ptr<PackedWeightStore> store) {
  impl_->SetPackedWeightStore(std::move(store));
}

Status Interpreter::ModifyGraphWithDelegate(Delegate* delegate) {
  try {
    impl_->ModifyGraphWithDelegate(delegate);
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::Error(e.what());
  }
}

std::vector<int> Interpreter::execution_plan() const { return impl_->execution_plan(); }
const std::vector<Interpreter::Placement>& Interpreter::placements() const {
  return impl_->placements();
}
const std::vector<std::string>& Interpreter::delegation_log() const {
  return impl_->delegation_log();
}
const std::vector<std::string>& Interpreter::warnings() const { return impl_->warnings(); }
const ModelDef& Interpreter::model() const { return impl_->model(); }

}  // namespace delegato
