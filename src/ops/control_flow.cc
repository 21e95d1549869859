// Control flow and state: IF, WHILE, CALL_ONCE run other subgraphs of the
// model (each planned by its own runner, see runtime/interpreter_impl.h);
// VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE work on the interpreter's
// resource variables.
//
// Shapes are static: a called subgraph is planned in the caller's Prepare for
// the caller's input shapes, so Eval only copies tensors and runs plans. A
// WHILE body must keep every loop variable's shape, and IF's branches must
// agree on their output shapes; otherwise Prepare fails naming the node.
#include <cstring>

#include "ops/kernel.h"
#include "runtime/interpreter_impl.h"

namespace delegato {

namespace {

std::string DimsText(const std::vector<int32_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

// What a calling node keeps: the message of a callee's failure, alive for
// KernelContext::SetEvalError (written on the error path only).
struct CallData {
  std::string error;
};

// Runs a planned callee; false (with the node's error set) when it fails.
bool RunCallee(KernelContext& ctx, const Node& node, InterpreterImpl& callee, const char* role) {
  std::string error = callee.Invoke(nullptr);
  if (error.empty()) return true;
  auto* data = node.data<CallData>();
  data->error = StrCat(role, " subgraph ", callee.subgraph_index(), ": ", error);
  ctx.SetEvalError(node, data->error.c_str());
  return false;
}

// Copies between equally sized tensors; the sizes were matched in Prepare,
// but a subgraph called by two nodes with different shapes is re-planned by
// the later Prepare, which this catches.
bool CopyTensor(KernelContext& ctx, const Node& node, const Tensor& from, Tensor& to) {
  if (from.bytes != to.bytes) {
    ctx.SetEvalError(node,
                     "a called subgraph was planned for other shapes (is it called by two nodes "
                     "with different input shapes?)");
    return false;
  }
  if (from.bytes > 0 && from.data != to.data) std::memcpy(to.data, from.data, from.bytes);
  return true;
}

std::vector<const Tensor*> NodeInputs(KernelContext& ctx, const Node& node, int first) {
  std::vector<const Tensor*> args;
  for (int i = first; i < static_cast<int>(node.inputs.size()); ++i)
    args.push_back(&ctx.input(node, i));
  return args;
}

bool SingleTrue(const Tensor& cond) { return cond.data != nullptr && cond.data[0] != 0; }

void CheckCondition(KernelContext& ctx, const Node& node, const Tensor& cond, const char* what) {
  if (cond.type != DataType::kBool || cond.NumElements() != 1)
    ctx.Fail(node, what, " must be one bool, is ", DataTypeName(cond.type), " ",
             DimsText(cond.dims));
}

// The node's options; a file may leave them out, which names no subgraph.
template <class P>
const P& OptionsOf(KernelContext& ctx, const Node& node, const char* options_name) {
  const P* params = std::get_if<P>(&node.def->params);
  if (params == nullptr) ctx.Fail(node, "the node has no ", options_name);
  return *params;
}

}  // namespace

// ------------------------------------------------------------------------- IF

void PrepareIf(KernelContext& ctx, Node& node) {
  const auto& params = OptionsOf<IfParams>(ctx, node, "IfOptions");
  DLG_NODE_CHECK(ctx, node, node.inputs.size() >= 1, "expects a condition input");
  CheckCondition(ctx, node, ctx.input(node, 0), "the condition");
  node.op_data = std::make_shared<CallData>();
  InterpreterImpl& self = *ctx.interpreter();
  const std::vector<const Tensor*> args = NodeInputs(ctx, node, 1);
  InterpreterImpl* branches[2] = {&self.runner(params.then_subgraph_index),
                                  &self.runner(params.else_subgraph_index)};
  const char* roles[2] = {"then", "else"};
  for (int b = 0; b < 2; ++b) {
    InterpreterImpl& branch = *branches[b];
    branch.PrepareAsCallee(node, roles[b], args);
    const size_t outputs = branch.subgraph().outputs.size();
    if (outputs != node.outputs.size())
      ctx.Fail(node, roles[b], " subgraph ", branch.subgraph_index(), " has ", outputs,
               " outputs, the node has ", node.outputs.size());
    for (size_t k = 0; k < outputs; ++k) {
      const Tensor& from = branch.graph_output(static_cast<int>(k));
      const Tensor& to = ctx.output(node, static_cast<int>(k));
      if (from.type != to.type)
        ctx.Fail(node, roles[b], " subgraph ", branch.subgraph_index(), " output ", k, " is ",
                 DataTypeName(from.type), ", the node's output is ", DataTypeName(to.type));
    }
  }
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    const Tensor& then_out = branches[0]->graph_output(static_cast<int>(k));
    const Tensor& else_out = branches[1]->graph_output(static_cast<int>(k));
    if (then_out.dims != else_out.dims)
      ctx.Fail(node, "output ", k, " has shape ", DimsText(then_out.dims), " in the then subgraph ",
               params.then_subgraph_index, " but ", DimsText(else_out.dims),
               " in the else subgraph ", params.else_subgraph_index,
               "; outputs whose shape depends on the branch taken are not supported");
    ctx.SetOutputDims(node, static_cast<int>(k), then_out.dims);
  }
}

void EvalIf(KernelContext& ctx, const Node& node) {
  const auto& params = node.params<IfParams>();
  const bool take_then = SingleTrue(ctx.in(node, 0));
  InterpreterImpl& branch = ctx.interpreter()->runner(take_then ? params.then_subgraph_index
                                                                : params.else_subgraph_index);
  for (size_t i = 1; i < node.inputs.size(); ++i)
    if (!CopyTensor(ctx, node, ctx.in(node, static_cast<int>(i)),
                    branch.graph_input(static_cast<int>(i - 1))))
      return;
  if (!RunCallee(ctx, node, branch, take_then ? "then" : "else")) return;
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (!CopyTensor(ctx, node, branch.graph_output(static_cast<int>(k)),
                    ctx.out(node, static_cast<int>(k))))
      return;
}

// ---------------------------------------------------------------------- WHILE

void PrepareWhile(KernelContext& ctx, Node& node) {
  const auto& params = OptionsOf<WhileParams>(ctx, node, "WhileOptions");
  const int n = static_cast<int>(node.inputs.size());
  ctx.CheckOutputCount(node, n);
  node.op_data = std::make_shared<CallData>();
  InterpreterImpl& self = *ctx.interpreter();
  const std::vector<const Tensor*> args = NodeInputs(ctx, node, 0);
  for (int i = 0; i < n; ++i) {
    if (args[i]->type != ctx.output(node, i).type)
      ctx.Fail(node, "input ", i, " is ", DataTypeName(args[i]->type), " but output ", i, " is ",
               DataTypeName(ctx.output(node, i).type));
  }

  InterpreterImpl& cond = self.runner(params.cond_subgraph_index);
  cond.PrepareAsCallee(node, "cond", args);
  if (cond.subgraph().outputs.size() != 1)
    ctx.Fail(node, "cond subgraph ", params.cond_subgraph_index, " has ",
             cond.subgraph().outputs.size(), " outputs, expected 1");
  CheckCondition(ctx, node, cond.graph_output(0), "the cond subgraph's output");

  InterpreterImpl& body = self.runner(params.body_subgraph_index);
  body.PrepareAsCallee(node, "body", args);
  if (static_cast<int>(body.subgraph().outputs.size()) != n)
    ctx.Fail(node, "body subgraph ", params.body_subgraph_index, " has ",
             body.subgraph().outputs.size(), " outputs, the loop has ", n, " variables");
  for (int i = 0; i < n; ++i) {
    const Tensor& next = body.graph_output(i);
    if (next.type != args[i]->type)
      ctx.Fail(node, "body subgraph ", params.body_subgraph_index, " output ", i, " is ",
               DataTypeName(next.type), ", loop variable ", i, " is ",
               DataTypeName(args[i]->type));
    if (next.dims != args[i]->dims)
      ctx.Fail(node, "body subgraph ", params.body_subgraph_index,
               " changes the shape of loop variable ", i, " from ", DimsText(args[i]->dims),
               " to ", DimsText(next.dims),
               "; loops whose variables change shape are not supported");
    ctx.SetOutputDims(node, i, args[i]->dims);
  }
}

// The node's outputs hold the loop variables: each iteration feeds them to
// cond, then to body, and copies body's results back.
void EvalWhile(KernelContext& ctx, const Node& node) {
  const auto& params = node.params<WhileParams>();
  InterpreterImpl& self = *ctx.interpreter();
  InterpreterImpl& cond = self.runner(params.cond_subgraph_index);
  InterpreterImpl& body = self.runner(params.body_subgraph_index);
  const int n = static_cast<int>(node.inputs.size());
  for (int i = 0; i < n; ++i)
    if (!CopyTensor(ctx, node, ctx.in(node, i), ctx.out(node, i))) return;
  for (;;) {
    for (int i = 0; i < n; ++i)
      if (!CopyTensor(ctx, node, ctx.out(node, i), cond.graph_input(i))) return;
    if (!RunCallee(ctx, node, cond, "cond")) return;
    if (!SingleTrue(cond.graph_output(0))) return;
    for (int i = 0; i < n; ++i)
      if (!CopyTensor(ctx, node, ctx.out(node, i), body.graph_input(i))) return;
    if (!RunCallee(ctx, node, body, "body")) return;
    for (int i = 0; i < n; ++i)
      if (!CopyTensor(ctx, node, body.graph_output(i), ctx.out(node, i))) return;
  }
}

// ------------------------------------------------------------------ CALL_ONCE

void PrepareCallOnce(KernelContext& ctx, Node& node) {
  const auto& params = OptionsOf<CallOnceParams>(ctx, node, "CallOnceOptions");
  ctx.CheckInputCount(node, 0, 0);
  ctx.CheckOutputCount(node, 0);
  node.op_data = std::make_shared<CallData>();
  InterpreterImpl& init = ctx.interpreter()->runner(params.init_subgraph_index);
  if (!init.subgraph().outputs.empty())
    ctx.Fail(node, "init subgraph ", params.init_subgraph_index, " has ",
             init.subgraph().outputs.size(), " outputs, expected none");
  init.PrepareAsCallee(node, "init", {});
}

// Runs the init subgraph on the first Invoke only (the flag is per init
// subgraph and shared by every runner, as in TFLite).
void EvalCallOnce(KernelContext& ctx, const Node& node) {
  const auto& params = node.params<CallOnceParams>();
  InterpreterImpl& self = *ctx.interpreter();
  uint8_t& done = self.call_once_done(params.init_subgraph_index);
  if (done) return;
  if (!RunCallee(ctx, node, self.runner(params.init_subgraph_index), "init")) return;
  done = 1;
}

// ---------------------------------------------------------- resource variables

struct VarHandleData {
  int32_t resource_id = 0;
};

void PrepareVarHandle(KernelContext& ctx, Node& node) {
  const auto& params = OptionsOf<VarHandleParams>(ctx, node, "VarHandleOptions");
  ctx.CheckInputCount(node, 0, 0);
  ctx.CheckOutputCount(node, 1);
  ctx.CheckType(node, ctx.output(node, 0), DataType::kResource);
  auto data = std::make_shared<VarHandleData>();
  data->resource_id = ctx.interpreter()->ResourceId(params.container, params.shared_name);
  node.op_data = std::move(data);
  ctx.SetOutputDims(node, 0, {});  // one int32 id
}

void EvalVarHandle(KernelContext& ctx, const Node& node) {
  const int32_t id = node.data<VarHandleData>()->resource_id;
  std::memcpy(ctx.out(node, 0).data, &id, sizeof(id));
}

namespace {

InterpreterImpl::ResourceVariable* VariableOf(KernelContext& ctx, const Node& node) {
  const Tensor& handle = ctx.in(node, 0);
  int32_t id = -1;
  std::memcpy(&id, handle.data, sizeof(id));
  InterpreterImpl::ResourceVariable* variable = ctx.interpreter()->resource(id);
  if (variable == nullptr) ctx.SetEvalError(node, "the handle names no resource variable");
  return variable;
}

void CheckHandle(KernelContext& ctx, const Node& node) {
  const Tensor& handle = ctx.input(node, 0);
  ctx.CheckType(node, handle, DataType::kResource);
  if (handle.bytes != sizeof(int32_t))
    ctx.Fail(node, "the resource handle must hold one id, has shape ", DimsText(handle.dims));
}

}  // namespace

// The value's shape is not known before the variable is assigned, so the
// output takes the shape the model declares; Eval checks that they agree.
void PrepareReadVariable(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  CheckHandle(ctx, node);
  const SubgraphDef& graph = ctx.interpreter()->subgraph();
  ctx.SetOutputDims(node, 0, graph.tensors[node.outputs[0]].shape);
}

void EvalReadVariable(KernelContext& ctx, const Node& node) {
  const InterpreterImpl::ResourceVariable* variable = VariableOf(ctx, node);
  if (variable == nullptr) return;
  if (!variable->assigned) {
    ctx.SetEvalError(node, "the variable is read before any ASSIGN_VARIABLE gave it a value");
    return;
  }
  Tensor& out = ctx.out(node, 0);
  if (variable->type != out.type || variable->data.size() != out.bytes) {
    ctx.SetEvalError(node,
                     "the variable's type or size differs from the output's declared type and "
                     "shape (variables that change shape are not supported)");
    return;
  }
  if (out.bytes > 0) std::memcpy(out.data, variable->data.data(), out.bytes);
}

void PrepareAssignVariable(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 0);
  CheckHandle(ctx, node);
  ctx.input(node, 1);
}

// The variable's storage is (re)sized when its first value arrives or its
// size changes; assignments of the same size copy only.
void EvalAssignVariable(KernelContext& ctx, const Node& node) {
  InterpreterImpl::ResourceVariable* variable = VariableOf(ctx, node);
  if (variable == nullptr) return;
  const Tensor& value = ctx.in(node, 1);
  if (variable->assigned && variable->type != value.type) {
    ctx.SetEvalError(node, "the value's type differs from the variable's");
    return;
  }
  variable->type = value.type;
  if (variable->dims != value.dims) variable->dims = value.dims;
  variable->data.resize(value.bytes);
  if (value.bytes > 0) std::memcpy(variable->data.data(), value.data, value.bytes);
  variable->assigned = true;
}

}  // namespace delegato
