// The contract between the runtime and an op implementation.
//
// An op is two functions (TFLite's model, minus Init/Free which a
// std::shared_ptr<void> in the node covers):
//   Prepare(ctx, node): every check (types, ranks, shapes, parameters), output
//     dims and types set with ctx.SetOutputDims, quantization multipliers and
//     any other constant work precomputed into node.op_data, scratch memory
//     requested with node.scratch_bytes. Throws via ctx.Fail on bad input.
//   Eval(ctx, node): the arithmetic. No allocation, no checks that Prepare
//     could have made. Reads node.op_data, writes outputs.
// Tensor data pointers are only valid in Eval (the arena is planned after all
// Prepare calls); Prepare may read constant tensors' data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "delegato/packed_weights.h"
#include "model/model.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace delegato {

struct OpKernel;
class InterpreterImpl;

// Thrown by Prepare when the *values* of a tensor computed at run time decide
// output shapes (RESHAPE's shape, WHERE's condition, RANGE's bounds, ...).
// The interpreter then prepares that node during Invoke, once the values
// exist, and sizes its outputs (and everything after them) there.
class RuntimeValuesNeeded : public Error {
 public:
  RuntimeValuesNeeded(const std::string& message, int32_t tensor)
      : Error(message), tensor_(tensor) {}
  int32_t tensor() const { return tensor_; }

 private:
  int32_t tensor_;
};

struct Node {
  int index = 0;  // position in the subgraph's operator list (TFLite's node index)
  const OpKernel* kernel = nullptr;
  const OperatorDef* def = nullptr;  // params, custom options
  std::string op_name;               // "CONV_2D" or the custom code
  int version = 1;
  std::vector<int32_t> inputs;   // tensor indices, -1 = optional input absent
  std::vector<int32_t> outputs;
  std::shared_ptr<void> op_data;  // what Prepare precomputed, owned by the node
  // Set by the interpreter before Prepare (optimized kernels): input `slot`
  // of this node is the output of node `producer`, which nothing else reads,
  // and this node may do the producer's work itself, reading `source` (the
  // producer's input) instead:
  //   CONV_2D / DEPTHWISE_CONV_2D after a PAD of only height and width: the
  //     pads added to the convolution's own;
  //   an 8-bit ADD / SUB / MUL by a constant per-channel operand after another
  //     such: one table of both (QuantBinary::ComposeAfter);
  //   a float32 DEPTHWISE_CONV_2D after a float32 CONV_2D: both run band by
  //     band (optimized::FloatConvDepthwise), `source` the convolution's input.
  // Prepare sets `accepted` when it does; the interpreter then skips the
  // producer and keeps `source` alive up to this node.
  struct FusedProducer {
    int32_t source = -1;  // tensor index, -1 = none offered
    int producer = -1;    // index into the interpreter's nodes
    const Node* producer_node = nullptr;
    int slot = 0;
    int32_t top = 0, bottom = 0, left = 0, right = 0;  // PAD
    bool accepted = false;
  } fused;
  size_t scratch_bytes = 0;       // set by Prepare; the planner gives Eval that much
  uint8_t* scratch = nullptr;     // 64-byte aligned, valid during Eval only

  template <class P>
  const P& params() const {
    return std::get<P>(def->params);
  }
  template <class T>
  T* data() const {
    return static_cast<T*>(op_data.get());
  }
};

class KernelContext {
 public:
  KernelContext(std::vector<Tensor>& tensors, ThreadPool& pool, bool optimized = false)
      : tensors_(tensors), pool_(pool), optimized_(optimized) {}

  // Whether Prepare may pick an optimized kernel (InterpreterOptions::kernels).
  // Ops without one, or whose inputs the optimized kernel does not cover,
  // use the reference kernel.
  bool optimized() const { return optimized_; }

  int num_tensors() const { return static_cast<int>(tensors_.size()); }
  Tensor& tensor(int32_t index) { return tensors_[index]; }
  const Tensor& tensor(int32_t index) const { return tensors_[index]; }

  // Node inputs/outputs by position. input() fails (in Prepare) when the
  // position is missing or marked absent; optional_input() returns nullptr.
  Tensor& input(const Node& node, int i);
  Tensor* optional_input(const Node& node, int i);
  Tensor& output(const Node& node, int i);
  // Fast unchecked accessors for Eval.
  const Tensor& in(const Node& node, int i) const { return tensors_[node.inputs[i]]; }
  Tensor& out(const Node& node, int i) const { return tensors_[node.outputs[i]]; }

  // Sets an output's dims (Prepare only). Fails on negative dims or a size
  // that cannot be represented.
  void SetOutputDims(const Node& node, int i, std::vector<int32_t> dims);

  ThreadPool& pool() const { return pool_; }

  // Where optimized kernels look up and record their packed weights
  // (Interpreter::SetPackedWeightStore); nullptr: pack, record nothing.
  PackedWeightStore* packed_weights() const { return packed_weights_; }
  void set_packed_weights(PackedWeightStore* store) { packed_weights_ = store; }

  // The interpreter running this graph: control-flow and resource-variable
  // ops call other subgraphs and reach the shared state through it.
  InterpreterImpl* interpreter() const { return interpreter_; }
  void set_interpreter(InterpreterImpl* interpreter) { interpreter_ = interpreter; }

  // Eval's only error channel (e.g. an index tensor out of range, an integer
  // division by zero). Takes a string literal, so it cannot allocate; Invoke
  // stops after the node and returns "node N (OP): <message>".
  void SetEvalError(const Node& node, const char* static_message) const {
    if (eval_error_ == nullptr) {
      eval_error_ = static_message;
      eval_error_node_ = node.index;
    }
  }
  const char* eval_error() const { return eval_error_; }
  int eval_error_node() const { return eval_error_node_; }
  void ClearEvalError() { eval_error_ = nullptr; eval_error_node_ = -1; }

  // Throws Error("node <index> (<OP>): <message>").
  template <class... Parts>
  [[noreturn]] void Fail(const Node& node, Parts&&... parts) const {
    ::delegato::Fail("node ", node.index, " (", node.op_name, "): ",
                     std::forward<Parts>(parts)...);
  }
  // Prepare: `t`'s values decide output shapes. A tensor computed at run time
  // throws RuntimeValuesNeeded (the message says why, for when the node cannot
  // be prepared later either).
  template <class... Parts>
  void RequireValues(const Node& node, const Tensor& t, Parts&&... why) const {
    if (t.is_constant()) return;
    throw RuntimeValuesNeeded(
        StrCat("node ", node.index, " (", node.op_name, "): tensor \"", t.name, "\" ",
               std::forward<Parts>(why)...),
        static_cast<int32_t>(&t - tensors_.data()));
  }
  // Checks helpers for Prepare.
  void CheckInputCount(const Node& node, int min_count, int max_count) const;
  void CheckOutputCount(const Node& node, int count) const;
  void CheckType(const Node& node, const Tensor& t, DataType expected) const;

 private:
  std::vector<Tensor>& tensors_;
  ThreadPool& pool_;
  bool optimized_ = false;
  PackedWeightStore* packed_weights_ = nullptr;
  InterpreterImpl* interpreter_ = nullptr;
  mutable const char* eval_error_ = nullptr;
  mutable int eval_error_node_ = -1;
};

// Runs fn(begin, end) over contiguous ranges covering [0, n) on the
// context's thread pool, or on the calling thread alone when n < min_n. The
// pool's std::function holds one pointer to fn, so Eval allocates nothing.
template <class Fn>
void ParallelRange(const KernelContext& ctx, int64_t n, const Fn& fn, int64_t min_n = 2) {
  if (n <= 0) return;
  if (n < min_n || ctx.pool().num_threads() == 1) {
    fn(int64_t{0}, n);
    return;
  }
  const Fn* f = &fn;
  ctx.pool().ParallelFor(n, [f](int64_t begin, int64_t end) { (*f)(begin, end); });
}

#define DLG_NODE_CHECK(ctx, node, cond, ...) \
  do {                                       \
    if (!(cond)) (ctx).Fail((node), __VA_ARGS__); \
  } while (false)

using PrepareFn = void (*)(KernelContext& ctx, Node& node);
using EvalFn = void (*)(KernelContext& ctx, const Node& node);

struct OpKernel {
  BuiltinOp builtin;
  const char* custom_code;  // nullptr for builtins
  int min_version;
  int max_version;
  PrepareFn prepare;
  EvalFn eval;
};

}  // namespace delegato
