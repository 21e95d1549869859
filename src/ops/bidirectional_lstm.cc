// BIDIRECTIONAL_SEQUENCE_LSTM, float32: two float LSTMs over the same
// sequence, the backward one reading time in reverse, as TFLite's kernel
// (CIFG, peephole, projection, clipping, both time_major layouts, merged or
// separate outputs). Hybrid weights, the auxiliary input, backward sizes that
// differ from the forward ones and merged outputs of a batch-major input with
// more than one batch row are rejected.
//   inputs (48; absent optional inputs are -1):
//     0 input [time, batch, n_input] ([batch, time, n_input] unless time_major)
//     1-17  forward weights, as UNIDIRECTIONAL_SEQUENCE_LSTM's inputs 1-17
//     18-34 backward weights, the same layout
//     35, 36 forward output state [batch, fw_output] and cell state [batch, fw_cell]
//     37, 38 backward output and cell states (all four variable tensors)
//     39 aux input, 40-47 aux weights (must be absent)
//   outputs: merge_outputs: one [.., .., fw_output + bw_output];
//            otherwise forward [.., .., fw_output] and backward [.., .., bw_output]
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "kernels/optimized/lstm.h"
#include "kernels/reference/lstm_float.h"
#include "ops/kernel.h"

namespace delegato {
namespace {

constexpr int kInput = 0;
constexpr int kDirectionStride = 17;  // backward weights = forward index + 17
constexpr int kInputToGate = 1;       // + gate
constexpr int kRecurrentToGate = 5;   // + gate
constexpr int kGateBias = 12;         // + gate
constexpr int kProjection = 16;
constexpr int kProjectionBias = 17;
constexpr int kFwOutputState = 35;
constexpr int kFwCellState = 36;
constexpr int kBwOutputState = 37;
constexpr int kBwCellState = 38;
constexpr int kAuxInput = 39;
constexpr int kInputCount = 48;
constexpr const char* kGateNames[4] = {"input", "forget", "cell", "output"};
constexpr const char* kDirectionNames[2] = {"forward", "backward"};

int Peephole(int gate) { return gate == 0 ? 9 : gate == 1 ? 10 : 11; }

struct Direction {
  reference::LstmShape shape;
  reference::LstmFloatParams params;  // weight pointers filled by Eval
  bool use_peephole = false;
  bool use_projection = false;
  bool use_projection_bias = false;
  size_t gate_bytes = 0;
  size_t scratch_offset = 0;  // four gate buffers, then the step output
};

struct BidiData {
  std::array<Direction, 2> dir;
  bool merge = false;
  // Both directions' packed weights for the vector products
  // (kernels/optimized/lstm.h); null: the reference's loops.
  std::unique_ptr<optimized::LstmPackedWeights> packed;
};

std::string DimsString(const std::vector<int32_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

void CheckFloat(const KernelContext& ctx, const Node& node, const Tensor& t, const std::string& role,
                const std::vector<int32_t>& dims) {
  DLG_NODE_CHECK(ctx, node, t.type == DataType::kFloat32, role, " \"", t.name, "\" has type ",
                 DataTypeName(t.type),
                 "; only the float32 BIDIRECTIONAL_SEQUENCE_LSTM is supported");
  DLG_NODE_CHECK(ctx, node, t.dims == dims, role, " \"", t.name, "\" must have shape ",
                 DimsString(dims), ", has ", DimsString(t.dims));
}

reference::LstmActivation ToActivation(const KernelContext& ctx, const Node& node, Activation a) {
  switch (a) {
    case Activation::kNone: return reference::LstmActivation::kNone;
    case Activation::kRelu: return reference::LstmActivation::kRelu;
    case Activation::kReluN1To1: return reference::LstmActivation::kReluN1To1;
    case Activation::kRelu6: return reference::LstmActivation::kRelu6;
    case Activation::kTanh: return reference::LstmActivation::kTanh;
    default: break;
  }
  ctx.Fail(node, "activation SIGN_BIT is not supported by the LSTM");
  return reference::LstmActivation::kNone;
}

void PrepareDirection(KernelContext& ctx, Node& node, const SequenceLstmParams& params, int k,
                      int n_batch, int n_time, int n_input, Direction& d) {
  const int base = k * kDirectionStride;
  const std::string dir = kDirectionNames[k];
  const Tensor* output_w = ctx.optional_input(node, base + kInputToGate + 3);
  const Tensor* recurrent_output_w = ctx.optional_input(node, base + kRecurrentToGate + 3);
  DLG_NODE_CHECK(ctx, node, output_w != nullptr && output_w->rank() == 2, dir,
                 " input-to-output weights must be present with rank 2");
  DLG_NODE_CHECK(ctx, node, recurrent_output_w != nullptr && recurrent_output_w->rank() == 2, dir,
                 " recurrent-to-output weights must be present with rank 2");
  reference::LstmShape& s = d.shape;
  s.n_batch = n_batch;
  s.n_time = n_time;
  s.n_input = n_input;
  s.n_cell = output_w->dim(0);
  s.n_output = recurrent_output_w->dim(1);
  s.time_major = params.time_major;
  reference::LstmFloatParams& p = d.params;
  p.use_cifg = ctx.optional_input(node, base + kInputToGate) == nullptr;
  p.cell_clip = params.cell_clip;
  p.proj_clip = params.proj_clip;
  p.activation = ToActivation(ctx, node, params.activation);
  d.use_peephole = ctx.optional_input(node, base + Peephole(1)) != nullptr;
  for (int g = 0; g < 4; ++g) {
    const std::string gate = dir + " " + kGateNames[g];
    if (g == 0 && p.use_cifg) {
      DLG_NODE_CHECK(ctx, node, ctx.optional_input(node, base + kRecurrentToGate) == nullptr &&
                                    ctx.optional_input(node, base + kGateBias) == nullptr,
                     dir, " CIFG (no input-to-input weights) needs no input gate weights or bias");
      continue;
    }
    CheckFloat(ctx, node, ctx.input(node, base + kInputToGate + g), gate + " input weights",
               {s.n_cell, s.n_input});
    CheckFloat(ctx, node, ctx.input(node, base + kRecurrentToGate + g),
               gate + " recurrent weights", {s.n_cell, s.n_output});
    CheckFloat(ctx, node, ctx.input(node, base + kGateBias + g), gate + " bias", {s.n_cell});
    if (g == 2) continue;
    const Tensor* peephole = ctx.optional_input(node, base + Peephole(g));
    DLG_NODE_CHECK(ctx, node, (peephole != nullptr) == d.use_peephole, dir,
                   " peephole weights must be all present or all absent");
    if (peephole) CheckFloat(ctx, node, *peephole, gate + " peephole weights", {s.n_cell});
  }
  const Tensor* projection = ctx.optional_input(node, base + kProjection);
  const Tensor* projection_bias = ctx.optional_input(node, base + kProjectionBias);
  d.use_projection = projection != nullptr;
  d.use_projection_bias = projection_bias != nullptr;
  if (projection) CheckFloat(ctx, node, *projection, dir + " projection weights",
                             {s.n_output, s.n_cell});
  if (projection_bias) {
    DLG_NODE_CHECK(ctx, node, projection != nullptr, dir,
                   " projection bias needs projection weights");
    CheckFloat(ctx, node, *projection_bias, dir + " projection bias", {s.n_output});
  }
  if (!projection)
    DLG_NODE_CHECK(ctx, node, s.n_output == s.n_cell, dir, " output size ", s.n_output,
                   " differs from the cell count ", s.n_cell, " without projection weights");
  const int state = k == 0 ? kFwOutputState : kBwOutputState;
  const int cell = k == 0 ? kFwCellState : kBwCellState;
  const Tensor& output_state = ctx.input(node, state);
  const Tensor& cell_state = ctx.input(node, cell);
  CheckFloat(ctx, node, output_state, dir + " output state", {s.n_batch, s.n_output});
  CheckFloat(ctx, node, cell_state, dir + " cell state", {s.n_batch, s.n_cell});
  DLG_NODE_CHECK(ctx, node,
                 output_state.storage == TensorStorage::kVariable &&
                     cell_state.storage == TensorStorage::kVariable,
                 dir, " output state \"", output_state.name, "\" and cell state \"",
                 cell_state.name, "\" must be variable tensors");
  d.gate_bytes = (static_cast<size_t>(s.n_batch) * s.n_cell * sizeof(float) + 63) / 64 * 64;
}

}  // namespace

void PrepareBidirectionalSequenceLstm(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, kInputCount, kInputCount);
  const auto* params = std::get_if<SequenceLstmParams>(&node.def->params);
  DLG_NODE_CHECK(ctx, node, params != nullptr, "missing BidirectionalSequenceLSTMOptions");
  DLG_NODE_CHECK(ctx, node, params->cell_clip >= 0.0f && params->proj_clip >= 0.0f,
                 "cell_clip and proj_clip must be >= 0");
  ctx.CheckOutputCount(node, params->merge_outputs ? 1 : 2);
  for (int i = kAuxInput; i < kInputCount; ++i)
    DLG_NODE_CHECK(ctx, node, ctx.optional_input(node, i) == nullptr,
                   "the auxiliary input and its weights (inputs 39-47) are not supported");
  const Tensor& input = ctx.input(node, kInput);
  DLG_NODE_CHECK(ctx, node, input.rank() == 3, "input \"", input.name,
                 "\" must have rank 3, has rank ", input.rank());
  DLG_NODE_CHECK(ctx, node, input.type == DataType::kFloat32, "input \"", input.name,
                 "\" has type ", DataTypeName(input.type),
                 "; only the float32 BIDIRECTIONAL_SEQUENCE_LSTM is supported");
  const int n_time = params->time_major ? input.dim(0) : input.dim(1);
  const int n_batch = params->time_major ? input.dim(1) : input.dim(0);
  // With merged outputs and a batch-major input, LiteRT offsets each batch
  // row's output state by the merged width instead of the direction's output
  // size, reaching past the state buffer for every row after the first.
  DLG_NODE_CHECK(ctx, node, !params->merge_outputs || params->time_major || n_batch == 1,
                 "merge_outputs with a batch-major input is supported for batch 1 only (got ",
                 n_batch, "): LiteRT indexes the output state past its end for later rows");
  auto data = std::make_shared<BidiData>();
  data->merge = params->merge_outputs;
  size_t offset = 0;
  int max_output = 0;
  for (int k = 0; k < 2; ++k) {
    Direction& d = data->dir[k];
    PrepareDirection(ctx, node, *params, k, n_batch, n_time, input.dim(2), d);
    d.scratch_offset = offset;
    offset += 4 * d.gate_bytes;
    max_output = std::max(max_output, d.shape.n_output);
  }
  // LiteRT checks the backward weights against the forward sizes.
  DLG_NODE_CHECK(ctx, node,
                 data->dir[1].shape.n_cell == data->dir[0].shape.n_cell &&
                     data->dir[1].shape.n_output == data->dir[0].shape.n_output,
                 "backward cell and output sizes (", data->dir[1].shape.n_cell, ", ",
                 data->dir[1].shape.n_output, ") must equal the forward ones (",
                 data->dir[0].shape.n_cell, ", ", data->dir[0].shape.n_output, ")");
  for (int o = 0; o < (data->merge ? 1 : 2); ++o)
    ctx.CheckType(node, ctx.output(node, o), DataType::kFloat32);
  if (ctx.optimized() && optimized::LstmVectorIsa(optimized::SelectedIsa())) {
    data->packed = std::make_unique<optimized::LstmPackedWeights>(optimized::SelectedIsa());
    for (int base : {0, kDirectionStride}) {
      for (int i = base + kInputToGate; i <= base + kProjection; ++i) {
        const Tensor* t = ctx.optional_input(node, i);
        if (t != nullptr && t->is_constant() && t->type == DataType::kFloat32 && t->rank() == 2)
          data->packed->AddFloat(t->data_as<float>(), t->dim(0), t->dim(1));
      }
    }
  }
  node.scratch_bytes = offset + static_cast<size_t>(n_batch) * max_output * sizeof(float);
  std::vector<int32_t> dims = input.dims;
  if (data->merge) {
    dims[2] = data->dir[0].shape.n_output + data->dir[1].shape.n_output;
    ctx.SetOutputDims(node, 0, dims);
  } else {
    dims[2] = data->dir[0].shape.n_output;
    ctx.SetOutputDims(node, 0, dims);
    dims[2] = data->dir[1].shape.n_output;
    ctx.SetOutputDims(node, 1, dims);
  }
  node.op_data = std::move(data);
}

void EvalBidirectionalSequenceLstm(KernelContext& ctx, const Node& node) {
  const BidiData& data = *node.data<BidiData>();
  const float* input = ctx.in(node, kInput).data_as<float>();
  float* step_out = reinterpret_cast<float*>(
      node.scratch + data.dir[1].scratch_offset + 4 * data.dir[1].gate_bytes);
  const int merged_width = data.dir[0].shape.n_output + data.dir[1].shape.n_output;
  for (int k = 0; k < 2; ++k) {
    const Direction& d = data.dir[k];
    const int base = k * kDirectionStride;
    reference::LstmFloatParams p = d.params;
    std::array<reference::LstmFloatGate*, 4> gates = {&p.input_gate, &p.forget_gate,
                                                      &p.cell_gate, &p.output_gate};
    for (int g = 0; g < 4; ++g) {
      if (g == 0 && p.use_cifg) continue;
      gates[g]->input_weights = ctx.in(node, base + kInputToGate + g).data_as<float>();
      gates[g]->recurrent_weights = ctx.in(node, base + kRecurrentToGate + g).data_as<float>();
      gates[g]->bias = ctx.in(node, base + kGateBias + g).data_as<float>();
      if (g != 2 && d.use_peephole)
        gates[g]->peephole_weights = ctx.in(node, base + Peephole(g)).data_as<float>();
    }
    if (d.use_projection) {
      p.projection_weights = ctx.in(node, base + kProjection).data_as<float>();
      if (d.use_projection_bias)
        p.projection_bias = ctx.in(node, base + kProjectionBias).data_as<float>();
    }
    reference::LstmFloatScratch scratch;
    uint8_t* s = node.scratch + d.scratch_offset;
    scratch.input_gate = reinterpret_cast<float*>(s);
    scratch.forget_gate = reinterpret_cast<float*>(s + d.gate_bytes);
    scratch.cell_gate = reinterpret_cast<float*>(s + 2 * d.gate_bytes);
    scratch.output_gate = reinterpret_cast<float*>(s + 3 * d.gate_bytes);
    float* output_state = ctx.tensor(node.inputs[k == 0 ? kFwOutputState : kBwOutputState])
                              .data_as<float>();
    float* cell_state =
        ctx.tensor(node.inputs[k == 0 ? kFwCellState : kBwCellState]).data_as<float>();
    float* output = ctx.out(node, data.merge ? 0 : k).data_as<float>();
    const int offset = data.merge && k == 1 ? data.dir[0].shape.n_output : 0;
    const int stride = data.merge ? merged_width : d.shape.n_output;
    auto run = [&](const auto& ops) {
      reference::SequenceLstmFloatDirection(p, d.shape, /*forward=*/k == 0, input, output_state,
                                            cell_state, output, offset, stride, step_out, scratch,
                                            ops);
    };
    if (data.packed) {
      optimized::FloatLstmOps ops;
      ops.weights = data.packed.get();
      run(ops);
    } else {
      run(reference::LstmFloatOps());
    }
  }
}

}  // namespace delegato
