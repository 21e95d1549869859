// RNN, UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN (below),
// float32 and hybrid (float activations,
// constant per-tensor int8 weights with zero point 0, symmetric or asymmetric
// input quantization), as TFLite's basic_rnn and unidirectional_sequence_rnn.
//   inputs: 0 input [batch, input_size] (RNN),
//             [batch, time, input_size] or [time, batch, input_size] when
//             time_major (UNIDIRECTIONAL_SEQUENCE_RNN)
//           1 input_weights [units, input_size], 2 recurrent_weights [units, units],
//           3 bias [units] (float32), 4 hidden_state [batch, units] (a variable tensor)
//   output: [batch, units] / [batch, time, units] / [time, batch, units]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "kernels/reference/rnn.h"
#include "ops/kernel.h"

namespace delegato {
namespace {

constexpr int kInput = 0;
constexpr int kInputWeights = 1;
constexpr int kRecurrentWeights = 2;
constexpr int kBias = 3;
constexpr int kHidden = 4;

struct RnnData {
  bool sequence = false;
  bool time_major = false;
  int32_t time = 1;
  reference::RnnShape shape;
  bool hybrid = false;
  reference::RnnFloatParams float_params;   // weight pointers filled by Eval
  reference::RnnHybridParams hybrid_params;  // weight pointers filled by Eval
  std::vector<int32_t> input_row_sums, recurrent_row_sums;
  size_t hidden_offset = 0, scales_offset = 0, zero_points_offset = 0;
};

size_t AlignUp(size_t n) { return (n + 15) / 16 * 16; }

std::string DimsString(const std::vector<int32_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

void CheckDims(const KernelContext& ctx, const Node& node, const Tensor& t, const char* role,
               const std::vector<int32_t>& expected) {
  DLG_NODE_CHECK(ctx, node, t.dims == expected, role, " \"", t.name, "\" must have shape ",
                 DimsString(expected), ", has ", DimsString(t.dims));
}

float HybridWeightScale(const KernelContext& ctx, const Node& node, const Tensor& w,
                        const char* role) {
  ctx.CheckType(node, w, DataType::kInt8);
  DLG_NODE_CHECK(ctx, node, w.is_constant(), role, " \"", w.name,
                 "\" must be a constant in a hybrid RNN");
  DLG_NODE_CHECK(ctx, node, w.quantization && w.quantization->scale.size() == 1, role, " \"",
                 w.name, "\" must be quantized per tensor");
  const float scale = w.quantization->scale[0];
  DLG_NODE_CHECK(ctx, node, scale > 0.0f && std::isfinite(scale), role, " \"", w.name,
                 "\" has invalid scale ", scale);
  DLG_NODE_CHECK(ctx, node, w.zero_point() == 0, role, " \"", w.name,
                 "\" must have zero point 0, has ", w.zero_point());
  DLG_NODE_CHECK(ctx, node, w.bytes == TensorByteSize(w.type, w.dims), role, " \"", w.name,
                 "\" holds ", w.bytes, " bytes, its shape needs ",
                 TensorByteSize(w.type, w.dims));
  return scale;
}

std::vector<int32_t> RowSums(const Tensor& w) {
  const int32_t rows = w.dim(0), cols = w.dim(1);
  const int8_t* v = w.data_as<int8_t>();
  std::vector<int32_t> sums(static_cast<size_t>(rows), 0);
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c) sums[r] += v[static_cast<int64_t>(r) * cols + c];
  return sums;
}

void Prepare(KernelContext& ctx, Node& node, bool sequence) {
  ctx.CheckInputCount(node, 5, 5);
  ctx.CheckOutputCount(node, 1);
  const auto* params = std::get_if<RnnParams>(&node.def->params);
  DLG_NODE_CHECK(ctx, node, params != nullptr,
                 sequence ? "missing SequenceRNNOptions" : "missing RNNOptions");
  const Tensor& input = ctx.input(node, kInput);
  const Tensor& input_weights = ctx.input(node, kInputWeights);
  const Tensor& recurrent_weights = ctx.input(node, kRecurrentWeights);
  const Tensor& bias = ctx.input(node, kBias);
  const Tensor& hidden = ctx.input(node, kHidden);
  Tensor& output = ctx.output(node, 0);

  auto d = std::make_shared<RnnData>();
  d->sequence = sequence;
  d->time_major = sequence && params->time_major;
  reference::RnnShape& s = d->shape;
  const int want_rank = sequence ? 3 : 2;
  DLG_NODE_CHECK(ctx, node, input.rank() == want_rank, "input \"", input.name,
                 "\" must have rank ", want_rank, ", has rank ", input.rank());
  if (sequence) {
    s.batch = d->time_major ? input.dim(1) : input.dim(0);
    d->time = d->time_major ? input.dim(0) : input.dim(1);
    s.input_size = input.dim(2);
  } else {
    s.batch = input.dim(0);
    s.input_size = input.dim(1);
  }
  DLG_NODE_CHECK(ctx, node, input_weights.rank() == 2, "input_weights \"", input_weights.name,
                 "\" must have rank 2, has rank ", input_weights.rank());
  s.units = input_weights.dim(0);
  DLG_NODE_CHECK(ctx, node, s.units > 0, "input_weights \"", input_weights.name,
                 "\" has no rows");
  CheckDims(ctx, node, input_weights, "input_weights", {s.units, s.input_size});
  CheckDims(ctx, node, recurrent_weights, "recurrent_weights", {s.units, s.units});
  CheckDims(ctx, node, bias, "bias", {s.units});
  CheckDims(ctx, node, hidden, "hidden_state", {s.batch, s.units});
  DLG_NODE_CHECK(ctx, node, hidden.storage == TensorStorage::kVariable, "hidden_state \"",
                 hidden.name, "\" must be a variable tensor");
  ctx.CheckType(node, input, DataType::kFloat32);
  ctx.CheckType(node, bias, DataType::kFloat32);
  ctx.CheckType(node, hidden, DataType::kFloat32);
  ctx.CheckType(node, output, DataType::kFloat32);

  reference::LstmActivation act = reference::LstmActivation::kNone;
  switch (params->activation) {
    case Activation::kNone: act = reference::LstmActivation::kNone; break;
    case Activation::kRelu: act = reference::LstmActivation::kRelu; break;
    case Activation::kReluN1To1: act = reference::LstmActivation::kReluN1To1; break;
    case Activation::kRelu6: act = reference::LstmActivation::kRelu6; break;
    case Activation::kTanh: act = reference::LstmActivation::kTanh; break;
    default: ctx.Fail(node, "activation SIGN_BIT is not supported by RNN");
  }

  // Scratch for the hybrid path, sized for the rows of one step.
  const size_t rows = static_cast<size_t>(d->time_major || !sequence ? s.batch : 1);
  size_t scratch = 0;
  if (input_weights.type == DataType::kFloat32) {
    ctx.CheckType(node, recurrent_weights, DataType::kFloat32);
    d->float_params.activation = act;
  } else {
    d->hybrid = true;
    reference::RnnHybridParams& h = d->hybrid_params;
    h.activation = act;
    h.asymmetric = params->asymmetric_quantize_inputs;
    h.input_scale = HybridWeightScale(ctx, node, input_weights, "input_weights");
    h.recurrent_scale = HybridWeightScale(ctx, node, recurrent_weights, "recurrent_weights");
    d->input_row_sums = RowSums(input_weights);
    d->recurrent_row_sums = RowSums(recurrent_weights);
    h.input_row_sums = d->input_row_sums.data();
    h.recurrent_row_sums = d->recurrent_row_sums.data();
    d->hidden_offset = AlignUp(rows * static_cast<size_t>(s.input_size));
    d->scales_offset = AlignUp(d->hidden_offset + rows * static_cast<size_t>(s.units));
    d->zero_points_offset = AlignUp(d->scales_offset + rows * 4);
    scratch = d->zero_points_offset + rows * 4;
  }

  if (!sequence) {
    ctx.SetOutputDims(node, 0, {s.batch, s.units});
  } else if (d->time_major) {
    ctx.SetOutputDims(node, 0, {d->time, s.batch, s.units});
  } else {
    ctx.SetOutputDims(node, 0, {s.batch, d->time, s.units});
  }
  node.scratch_bytes = scratch;
  node.op_data = std::move(d);
}

void Eval(KernelContext& ctx, const Node& node) {
  const RnnData& d = *node.data<RnnData>();
  const Tensor& input = ctx.in(node, kInput);
  const Tensor& bias = ctx.in(node, kBias);
  float* hidden = ctx.tensor(node.inputs[kHidden]).data_as<float>();
  float* output = ctx.out(node, 0).data_as<float>();
  const bool time_major = d.time_major || !d.sequence;
  if (!d.hybrid) {
    reference::RnnFloatParams p = d.float_params;
    p.input_weights = ctx.in(node, kInputWeights).data_as<float>();
    p.recurrent_weights = ctx.in(node, kRecurrentWeights).data_as<float>();
    p.bias = bias.data_as<float>();
    reference::RnnSequence(d.shape, d.time, time_major, input.data_as<float>(), hidden, output,
                           [&](int32_t rows, const float* x, float* h, float* y) {
                             reference::RnnShape s = d.shape;
                             s.batch = rows;
                             reference::RnnStepFloat(s, p, x, h, y);
                           });
    return;
  }
  reference::RnnHybridParams p = d.hybrid_params;
  p.input_weights = ctx.in(node, kInputWeights).data_as<int8_t>();
  p.recurrent_weights = ctx.in(node, kRecurrentWeights).data_as<int8_t>();
  p.bias = bias.data_as<float>();
  uint8_t* scratch = node.scratch;
  reference::RnnHybridScratch t;
  t.quantized_input = reinterpret_cast<int8_t*>(scratch);
  t.quantized_hidden = reinterpret_cast<int8_t*>(scratch + d.hidden_offset);
  t.scales = reinterpret_cast<float*>(scratch + d.scales_offset);
  t.zero_points = reinterpret_cast<int32_t*>(scratch + d.zero_points_offset);
  reference::RnnSequence(d.shape, d.time, time_major, input.data_as<float>(), hidden, output,
                         [&](int32_t rows, const float* x, float* h, float* y) {
                           reference::RnnShape s = d.shape;
                           s.batch = rows;
                           reference::RnnStepHybrid(s, p, t, x, h, y);
                         });
}

}  // namespace

void PrepareRnn(KernelContext& ctx, Node& node) { Prepare(ctx, node, /*sequence=*/false); }
void EvalRnn(KernelContext& ctx, const Node& node) { Eval(ctx, node); }

void PrepareUnidirectionalSequenceRnn(KernelContext& ctx, Node& node) {
  Prepare(ctx, node, /*sequence=*/true);
}
void EvalUnidirectionalSequenceRnn(KernelContext& ctx, const Node& node) { Eval(ctx, node); }

// ------------------------------------------------ BIDIRECTIONAL_SEQUENCE_RNN
// inputs: 0 input (rank 3), 1-4 forward input_weights, recurrent_weights, bias,
// hidden_state; 5-8 the backward ones; 9 aux input, 10-11 aux weights (must be
// absent). outputs: merge_outputs: one [.., .., fw_units + bw_units]; otherwise
// forward and backward outputs. The backward cell reads time in reverse.
namespace {

constexpr int kBidiInputs = 12;

struct BidiCell {
  reference::RnnShape shape;
  bool hybrid = false;
  reference::RnnFloatParams float_params;
  reference::RnnHybridParams hybrid_params;
  std::vector<int32_t> input_row_sums, recurrent_row_sums;
};

struct BidiRnnData {
  BidiCell cell[2];
  bool time_major = false;
  bool merge = false;
  int32_t time = 0;
  size_t hidden_offset = 0, scales_offset = 0, zero_points_offset = 0, step_out_offset = 0;
};

void PrepareBidiCell(KernelContext& ctx, Node& node, const RnnParams& params, int k,
                     int32_t batch, int32_t input_size, BidiCell& c) {
  const char* dir = k == 0 ? "forward" : "backward";
  const int base = 1 + 4 * k;
  const Tensor& w = ctx.input(node, base);
  const Tensor& r = ctx.input(node, base + 1);
  const Tensor& bias = ctx.input(node, base + 2);
  const Tensor& hidden = ctx.input(node, base + 3);
  const std::string role = dir;
  DLG_NODE_CHECK(ctx, node, w.rank() == 2, dir, " input_weights \"", w.name,
                 "\" must have rank 2, has rank ", w.rank());
  reference::RnnShape& s = c.shape;
  s.batch = batch;
  s.input_size = input_size;
  s.units = w.dim(0);
  CheckDims(ctx, node, w, (role + " input_weights").c_str(), {s.units, s.input_size});
  CheckDims(ctx, node, r, (role + " recurrent_weights").c_str(), {s.units, s.units});
  CheckDims(ctx, node, bias, (role + " bias").c_str(), {s.units});
  CheckDims(ctx, node, hidden, (role + " hidden_state").c_str(), {s.batch, s.units});
  DLG_NODE_CHECK(ctx, node, hidden.storage == TensorStorage::kVariable, dir,
                 " hidden_state \"", hidden.name, "\" must be a variable tensor");
  ctx.CheckType(node, bias, DataType::kFloat32);
  ctx.CheckType(node, hidden, DataType::kFloat32);
  reference::LstmActivation act = reference::LstmActivation::kNone;
  switch (params.activation) {
    case Activation::kNone: act = reference::LstmActivation::kNone; break;
    case Activation::kRelu: act = reference::LstmActivation::kRelu; break;
    case Activation::kReluN1To1: act = reference::LstmActivation::kReluN1To1; break;
    case Activation::kRelu6: act = reference::LstmActivation::kRelu6; break;
    case Activation::kTanh: act = reference::LstmActivation::kTanh; break;
    default: ctx.Fail(node, "activation SIGN_BIT is not supported by RNN");
  }
  if (w.type == DataType::kFloat32) {
    ctx.CheckType(node, r, DataType::kFloat32);
    c.float_params.activation = act;
    return;
  }
  c.hybrid = true;
  reference::RnnHybridParams& h = c.hybrid_params;
  h.activation = act;
  h.asymmetric = params.asymmetric_quantize_inputs;
  h.input_scale = HybridWeightScale(ctx, node, w, (role + " input_weights").c_str());
  h.recurrent_scale = HybridWeightScale(ctx, node, r, (role + " recurrent_weights").c_str());
  c.input_row_sums = RowSums(w);
  c.recurrent_row_sums = RowSums(r);
  h.input_row_sums = c.input_row_sums.data();
  h.recurrent_row_sums = c.recurrent_row_sums.data();
}

}  // namespace

void PrepareBidirectionalSequenceRnn(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 9, kBidiInputs);
  const auto* params = std::get_if<RnnParams>(&node.def->params);
  DLG_NODE_CHECK(ctx, node, params != nullptr, "missing BidirectionalSequenceRNNOptions");
  ctx.CheckOutputCount(node, params->merge_outputs ? 1 : 2);
  for (int i = 9; i < static_cast<int>(node.inputs.size()); ++i)
    DLG_NODE_CHECK(ctx, node, ctx.optional_input(node, i) == nullptr,
                   "the auxiliary input and its weights (inputs 9-11) are not supported");
  const Tensor& input = ctx.input(node, kInput);
  DLG_NODE_CHECK(ctx, node, input.rank() == 3, "input \"", input.name,
                 "\" must have rank 3, has rank ", input.rank());
  ctx.CheckType(node, input, DataType::kFloat32);
  auto d = std::make_shared<BidiRnnData>();
  d->time_major = params->time_major;
  d->merge = params->merge_outputs;
  const int32_t batch = d->time_major ? input.dim(1) : input.dim(0);
  d->time = d->time_major ? input.dim(0) : input.dim(1);
  const int32_t input_size = input.dim(2);
  for (int k = 0; k < 2; ++k) PrepareBidiCell(ctx, node, *params, k, batch, input_size, d->cell[k]);
  // LiteRT's hybrid kernel with a time-major input is not a usable reference:
  // its results for asymmetric inputs do not follow its own per-row arithmetic
  // and its symmetric path aborts for three batch rows. Batch-major inputs agree.
  DLG_NODE_CHECK(ctx, node, !(d->cell[0].hybrid || d->cell[1].hybrid) || !d->time_major,
                 "hybrid BIDIRECTIONAL_SEQUENCE_RNN is supported for batch-major inputs only "
                 "(time_major is set)");
  for (int o = 0; o < (d->merge ? 1 : 2); ++o)
    ctx.CheckType(node, ctx.output(node, o), DataType::kFloat32);
  const size_t rows = static_cast<size_t>(d->time_major ? batch : 1);
  const size_t units = static_cast<size_t>(std::max(d->cell[0].shape.units, d->cell[1].shape.units));
  d->hidden_offset = AlignUp(rows * static_cast<size_t>(input_size));
  d->scales_offset = AlignUp(d->hidden_offset + rows * units);
  d->zero_points_offset = AlignUp(d->scales_offset + rows * 4);
  d->step_out_offset = AlignUp(d->zero_points_offset + rows * 4);
  node.scratch_bytes = d->step_out_offset + rows * units * sizeof(float);
  std::vector<int32_t> dims = input.dims;
  if (d->merge) {
    dims[2] = d->cell[0].shape.units + d->cell[1].shape.units;
    ctx.SetOutputDims(node, 0, dims);
  } else {
    dims[2] = d->cell[0].shape.units;
    ctx.SetOutputDims(node, 0, dims);
    dims[2] = d->cell[1].shape.units;
    ctx.SetOutputDims(node, 1, dims);
  }
  node.op_data = std::move(d);
}

void EvalBidirectionalSequenceRnn(KernelContext& ctx, const Node& node) {
  const BidiRnnData& d = *node.data<BidiRnnData>();
  const float* input = ctx.in(node, kInput).data_as<float>();
  uint8_t* scratch = node.scratch;
  reference::RnnHybridScratch t;
  t.quantized_input = reinterpret_cast<int8_t*>(scratch);
  t.quantized_hidden = reinterpret_cast<int8_t*>(scratch + d.hidden_offset);
  t.scales = reinterpret_cast<float*>(scratch + d.scales_offset);
  t.zero_points = reinterpret_cast<int32_t*>(scratch + d.zero_points_offset);
  float* step_out = reinterpret_cast<float*>(scratch + d.step_out_offset);
  const int32_t merged = d.cell[0].shape.units + d.cell[1].shape.units;
  for (int k = 0; k < 2; ++k) {
    const BidiCell& c = d.cell[k];
    const int base = 1 + 4 * k;
    float* hidden = ctx.tensor(node.inputs[base + 3]).data_as<float>();
    float* output = ctx.out(node, d.merge ? 0 : k).data_as<float>();
    const int32_t offset = d.merge && k == 1 ? d.cell[0].shape.units : 0;
    const int32_t stride = d.merge ? merged : c.shape.units;
    reference::RnnFloatParams fp = c.float_params;
    reference::RnnHybridParams hp = c.hybrid_params;
    if (c.hybrid) {
      hp.input_weights = ctx.in(node, base).data_as<int8_t>();
      hp.recurrent_weights = ctx.in(node, base + 1).data_as<int8_t>();
      hp.bias = ctx.in(node, base + 2).data_as<float>();
    } else {
      fp.input_weights = ctx.in(node, base).data_as<float>();
      fp.recurrent_weights = ctx.in(node, base + 1).data_as<float>();
      fp.bias = ctx.in(node, base + 2).data_as<float>();
    }
    reference::RnnSequenceDirection(
        c.shape, d.time, d.time_major, /*forward=*/k == 0, input, hidden, output, offset, stride,
        step_out, [&](int32_t rows, const float* x, float* h, float* y) {
          reference::RnnShape s = c.shape;
          s.batch = rows;
          if (c.hybrid) {
            reference::RnnStepHybrid(s, hp, t, x, h, y);
          } else {
            reference::RnnStepFloat(s, fp, x, h, y);
          }
        });
  }
}

}  // namespace delegato
