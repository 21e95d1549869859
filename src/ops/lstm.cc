// UNIDIRECTIONAL_SEQUENCE_LSTM, full integer (TFLite's 8x8->16 kernel): int8
// input, weights and output/hidden state, int16 cell state, peephole and layer
// norm weights, int32 biases. CIFG, peephole, layer normalization, projection,
// cell/projection clipping and both time_major layouts are supported.
// Float32 (all tensors float) and hybrid (float activations and states, int8
// per-tensor weights, symmetric or asymmetric input quantization) with the
// same options, in the order of TFLite's float and hybrid LSTM steps
// (kernels/reference/lstm_float.h).
// LSTM (the single-step op, kernel_type FULL) takes the same inputs with input
// [batch, n_input] and output [batch, n_output], float32 and hybrid only.
//
//   inputs (20, or 24 with layer norm; absent optional inputs are -1):
//     0 input [batch, time, n_input] ([time, batch, n_input] when time_major)
//     1-4  input_to_{input,forget,cell,output}_weights [n_cell, n_input]  (1 optional: CIFG)
//     5-8  recurrent_to_{input,forget,cell,output}_weights [n_cell, n_output]
//     9-11 cell_to_{input,forget,output}_weights [n_cell]  (peephole, optional)
//     12-15 {input,forget,cell,output}_gate_bias [n_cell]
//     16 projection_weights [n_output, n_cell], 17 projection_bias [n_output] (optional)
//     18 output_state [batch, n_output], 19 cell_state [batch, n_cell]  (variable tensors)
//     20-23 {input,forget,cell,output}_layer_norm_coefficients [n_cell] (optional)
//   intermediates (5): the gate matmul outputs' quantization (used with layer
//     norm; Q3.12 otherwise) and the hidden state's (effective_hidden_scale).
//   output: input's shape with the last dimension n_output.
#include "kernels/reference/lstm.h"
#include "kernels/reference/lstm_float.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "kernels/fixed_point.h"
#include "kernels/optimized/lstm.h"
#include "kernels/quantization.h"
#include "ops/kernel.h"
#include "ops/layer_quant.h"

namespace delegato {
namespace {

constexpr int kInput = 0;
constexpr int kInputToGateWeights = 1;      // + gate
constexpr int kRecurrentToGateWeights = 5;  // + gate
constexpr int kPeepholeWeights = 9;         // + gate - 1 (no cell gate peephole)
constexpr int kGateBias = 12;               // + gate
constexpr int kProjectionWeights = 16;
constexpr int kProjectionBias = 17;
constexpr int kOutputState = 18;
constexpr int kCellState = 19;
constexpr int kLayerNorm = 20;  // + gate

// Gate order used throughout (matches the input tensor order).
enum Gate { kInputGate = 0, kForgetGate = 1, kCellGate = 2, kOutputGate = 3 };
constexpr const char* kGateNames[4] = {"input", "forget", "cell", "output"};

int PeepholeIndex(int gate) { return gate == kInputGate ? 9 : gate == kForgetGate ? 10 : 11; }

struct LstmData {
  reference::LstmShape shape;
  reference::LstmIntegerParams params;  // weight pointers are filled in by Eval
  bool use_layer_norm = false;
  bool use_peephole = false;
  // Effective biases: gate bias (unless layer norm) plus zero point x row sums.
  std::array<std::vector<int32_t>, 4> input_bias, recurrent_bias;
  std::vector<int32_t> projection_bias;
  size_t gate_scratch_bytes = 0;  // one int16 gate buffer, rounded up for alignment
  bool is_float = false;
  reference::LstmFloatParams float_params;  // weight pointers are filled in by Eval
  // Hybrid: scales and row sums per weight tensor, dequantized peepholes.
  bool is_hybrid = false;
  reference::LstmHybridParams hybrid_params;  // weight pointers are filled in by Eval
  std::array<std::vector<int32_t>, 4> input_row_sums, recurrent_row_sums;
  std::vector<int32_t> projection_row_sums;
  std::array<std::vector<float>, 4> peephole_float;
  size_t hybrid_offsets[4] = {0, 0, 0, 0};  // quantized input, state, hidden; per-row arrays
  // The vector products' packed weights (kernels/optimized/lstm.h) and their
  // scratch after the step's own; null: the reference's loops.
  std::unique_ptr<optimized::LstmPackedWeights> packed;
  size_t packed_scratch_offset = 0;
};

// Packs the node's constant weight matrices (gates, projection) for the
// vector products when the optimized kernels are on and this CPU has them.
void PackWeights(KernelContext& ctx, Node& node, LstmData& d, DataType weight_type) {
  if (!ctx.optimized() || !optimized::LstmVectorIsa(optimized::SelectedIsa())) return;
  auto packed = std::make_unique<optimized::LstmPackedWeights>(optimized::SelectedIsa());
  auto add = [&](int index) {
    const Tensor* t = ctx.optional_input(node, index);
    if (t == nullptr || !t->is_constant() || t->type != weight_type || t->rank() != 2) return;
    if (weight_type == DataType::kFloat32)
      packed->AddFloat(t->data_as<float>(), t->dim(0), t->dim(1));
    else
      packed->AddInt8(t->data_as<int8_t>(), t->dim(0), t->dim(1));
  };
  for (int g = 0; g < 4; ++g) {
    add(kInputToGateWeights + g);
    add(kRecurrentToGateWeights + g);
  }
  add(kProjectionWeights);
  d.packed_scratch_offset = (node.scratch_bytes + 63) / 64 * 64;
  node.scratch_bytes = d.packed_scratch_offset + packed->scratch_bytes();
  d.packed = std::move(packed);
}

std::string Describe(const Tensor& t) { return "\"" + t.name + "\""; }

std::string DimsString(const std::vector<int32_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

void CheckDims(const KernelContext& ctx, const Node& node, const Tensor& t, const char* role,
               std::vector<int32_t> expected) {
  DLG_NODE_CHECK(ctx, node, t.dims == expected, role, " ", Describe(t), " must have shape ",
                 DimsString(expected), ", has ", DimsString(t.dims));
}

// Weights and biases are read in Prepare (zero-point folding), so they must be
// constants whose buffers hold exactly what their shapes say.
void CheckConstant(const KernelContext& ctx, const Node& node, const Tensor& t, const char* role,
                   DataType type) {
  ctx.CheckType(node, t, type);
  DLG_NODE_CHECK(ctx, node, t.is_constant(), role, " ", Describe(t), " must be a constant");
  const size_t expected = TensorByteSize(t.type, t.dims);
  DLG_NODE_CHECK(ctx, node, t.bytes == expected, role, " ", Describe(t), " holds ", t.bytes,
                 " bytes, its shape needs ", expected);
}

// TFLite reads a single (per-tensor) scale for every LSTM tensor.
float PerTensorScale(const KernelContext& ctx, const Node& node, const Tensor& t,
                     const char* role) {
  const Quantization& q = *t.quantization;
  DLG_NODE_CHECK(ctx, node, q.scale.size() == 1, role, " ", Describe(t),
                 q.scale.empty() ? " has no quantization parameters"
                                 : " must be quantized per tensor, not per axis");
  const float scale = q.scale[0];
  DLG_NODE_CHECK(ctx, node, scale > 0.0f && std::isfinite(scale), role, " ", Describe(t),
                 " has invalid scale ", scale);
  return scale;
}

int32_t ZeroPointIn(const KernelContext& ctx, const Node& node, const Tensor& t, const char* role,
                    int32_t lo, int32_t hi) {
  const Quantization& q = *t.quantization;
  const int64_t zp = q.zero_point.empty() ? 0 : q.zero_point[0];
  DLG_NODE_CHECK(ctx, node, zp >= lo && zp <= hi, role, " ", Describe(t), " zero point ", zp,
                 " is outside [", lo, ", ", hi, "]");
  return static_cast<int32_t>(zp);
}

// TFLite's CheckedLog2: log2 of x if x is a power of two (within 1e-3).
bool CheckedLog2(float x, int* log2_result) {
  const float x_log2 = std::log(x) * (1.0f / std::log(2.0f));
  const float x_log2_rounded = std::round(x_log2);
  *log2_result = static_cast<int>(x_log2_rounded);
  return std::abs(x_log2 - x_log2_rounded) < 1e-3f;
}

// bias (or zeros) + zero_point * row sums of weights [rows, cols], 32-bit wrapping.
std::vector<int32_t> FoldZeroPoint(const Tensor& weights, const Tensor* bias, int32_t zero_point) {
  const int rows = weights.dim(0);
  const int cols = weights.dim(1);
  std::vector<int32_t> out(rows, 0);
  if (bias != nullptr)
    for (int r = 0; r < rows; ++r) out[r] = bias->data_as<int32_t>()[r];
  const int8_t* w = weights.data_as<int8_t>();
  for (int r = 0; r < rows; ++r) {
    int32_t row_sum = 0;
    for (int c = 0; c < cols; ++c) row_sum += w[static_cast<size_t>(r) * cols + c];
    out[r] = fixed_point::WrappingAdd(out[r], fixed_point::WrappingMul(row_sum, zero_point));
  }
  return out;
}

void QuantizeScale(const KernelContext& ctx, const Node& node, const char* what, float real,
                   int32_t* multiplier, int* shift) {
  DLG_NODE_CHECK(ctx, node, std::isfinite(real), "the ", what,
                 " rescale factor is not finite (extreme tensor scales)");
  quant::QuantizeMultiplier(static_cast<double>(real), multiplier, shift);
}

void PrepareInteger(KernelContext& ctx, Node& node, const SequenceLstmParams& params, LstmData& d) {
  const reference::LstmShape& s = d.shape;
  const bool use_cifg = d.params.use_cifg;
  const bool use_projection = ctx.optional_input(node, kProjectionWeights) != nullptr;
  const Tensor& input = ctx.input(node, kInput);
  const Tensor& output_state = ctx.input(node, kOutputState);
  const Tensor& cell_state = ctx.input(node, kCellState);
  const Tensor& output = ctx.output(node, 0);

  ctx.CheckType(node, output_state, DataType::kInt8);
  ctx.CheckType(node, cell_state, DataType::kInt16);
  ctx.CheckType(node, output, DataType::kInt8);
  for (int g = 0; g < 4; ++g) {
    if (g == kInputGate && use_cifg) continue;
    CheckConstant(ctx, node, ctx.input(node, kInputToGateWeights + g), "input-to-gate weights",
                  DataType::kInt8);
    CheckConstant(ctx, node, ctx.input(node, kRecurrentToGateWeights + g),
                  "recurrent-to-gate weights", DataType::kInt8);
    CheckConstant(ctx, node, ctx.input(node, kGateBias + g), "gate bias", DataType::kInt32);
    if (g != kCellGate && d.use_peephole)
      CheckConstant(ctx, node, ctx.input(node, PeepholeIndex(g)), "peephole weights",
                    DataType::kInt16);
    if (d.use_layer_norm)
      CheckConstant(ctx, node, ctx.input(node, kLayerNorm + g), "layer norm coefficients",
                    DataType::kInt16);
  }
  if (use_projection) {
    CheckConstant(ctx, node, ctx.input(node, kProjectionWeights), "projection weights",
                  DataType::kInt8);
    if (const Tensor* bias = ctx.optional_input(node, kProjectionBias))
      CheckConstant(ctx, node, *bias, "projection bias", DataType::kInt32);
  }

  // Quantization of the gate matmul outputs (intermediates 0-3) and the hidden state (4).
  const std::vector<int32_t>& intermediates = node.def->intermediates;
  DLG_NODE_CHECK(ctx, node, intermediates.size() == 5,
                 "integer LSTM needs 5 intermediate tensors (gate and hidden quantization), has ",
                 intermediates.size());
  for (int32_t index : intermediates)
    DLG_NODE_CHECK(ctx, node, index >= 0 && index < ctx.num_tensors(), "intermediate tensor index ",
                   index, " out of range");
  std::array<float, 5> intermediate_scale{};
  for (int g = 0; g < 4; ++g) {
    // Without layer norm the gates are always Q3.12.
    intermediate_scale[g] = static_cast<float>(std::pow(2.0, -12));
    if (d.use_layer_norm)
      intermediate_scale[g] =
          PerTensorScale(ctx, node, ctx.tensor(intermediates[g]), "gate intermediate");
  }
  const Tensor& hidden = ctx.tensor(intermediates[4]);
  intermediate_scale[4] = PerTensorScale(ctx, node, hidden, "hidden state intermediate");
  const int32_t hidden_zero_point =
      ZeroPointIn(ctx, node, hidden, "hidden state intermediate", -128, 127);

  const float input_scale = PerTensorScale(ctx, node, input, "input");
  const float output_state_scale = PerTensorScale(ctx, node, output_state, "output state");
  const float cell_state_scale = PerTensorScale(ctx, node, cell_state, "cell state");
  const float output_scale = PerTensorScale(ctx, node, output, "output");
  const int32_t input_zero_point = ZeroPointIn(ctx, node, input, "input", -128, 127);
  const int32_t output_state_zero_point =
      ZeroPointIn(ctx, node, output_state, "output state", -128, 127);

  reference::LstmIntegerParams& p = d.params;
  int cell_scale_log2 = 0;
  DLG_NODE_CHECK(ctx, node, CheckedLog2(cell_state_scale, &cell_scale_log2), "cell state ",
                 Describe(cell_state), " scale ", cell_state_scale, " is not a power of two");
  // tanh(cell state) supports 0 to 6 integer bits. Below 2^-15 (negative
  // integer bits) LiteRT computes no tanh and uses the input gate in its place
  // (see LstmStepInteger); without an input gate (CIFG) its buffer holds
  // nothing defined, so that case is refused.
  DLG_NODE_CHECK(ctx, node, cell_scale_log2 <= -9, "cell state ", Describe(cell_state),
                 " scale 2^", cell_scale_log2,
                 " is above 2^-9 (tanh of the cell state takes at most 6 integer bits)");
  DLG_NODE_CHECK(ctx, node, cell_scale_log2 >= -15 || !p.use_cifg, "cell state ",
                 Describe(cell_state), " scale 2^", cell_scale_log2,
                 " is below 2^-15 in a CIFG LSTM (no input gate): LiteRT's result is undefined");
  // The input gate times the cell gate is shifted right by 30 + log2(scale)
  // into the cell state's format (TFLite's CwiseMul); a negative shift has no
  // defined result in LiteRT either.
  DLG_NODE_CHECK(ctx, node, cell_scale_log2 >= -30, "cell state ", Describe(cell_state),
                 " scale 2^", cell_scale_log2,
                 " is below 2^-30: the input gate x cell gate product would need a negative "
                 "shift, for which LiteRT's result is undefined");
  p.cell_scale_log2 = cell_scale_log2;
  p.cell_clip = params.cell_clip > 0.0f
                    ? static_cast<int16_t>(std::min(
                          std::max(params.cell_clip / cell_state_scale, -32768.0f), 32767.0f))
                    : int16_t{0};
  p.projection_clip = params.proj_clip > 0.0f
                          ? static_cast<int8_t>(std::min(
                                std::max(params.proj_clip / output_scale, -128.0f), 127.0f))
                          : int8_t{0};

  // Effective scales, computed in float like TFLite, then decomposed.
  std::array<reference::LstmIntegerGate*, 4> gates = {&p.input_gate, &p.forget_gate, &p.cell_gate,
                                                      &p.output_gate};
  for (int g = 0; g < 4; ++g) {
    if (g == kInputGate && use_cifg) continue;
    reference::LstmIntegerGate& gate = *gates[g];
    const float input_weight_scale = PerTensorScale(
        ctx, node, ctx.input(node, kInputToGateWeights + g), "input-to-gate weights");
    const float recurrent_weight_scale = PerTensorScale(
        ctx, node, ctx.input(node, kRecurrentToGateWeights + g), "recurrent-to-gate weights");
    const float input_product = input_weight_scale * input_scale;
    const float recurrent_product = recurrent_weight_scale * output_state_scale;
    QuantizeScale(ctx, node, "input-to-gate", input_product / intermediate_scale[g],
                  &gate.input_multiplier, &gate.input_shift);
    QuantizeScale(ctx, node, "recurrent-to-gate", recurrent_product / intermediate_scale[g],
                  &gate.recurrent_multiplier, &gate.recurrent_shift);
    if (g != kCellGate && d.use_peephole) {
      const float peephole_scale =
          PerTensorScale(ctx, node, ctx.input(node, PeepholeIndex(g)), "peephole weights");
      const float effective =
          static_cast<float>(std::pow(2.0, cell_scale_log2) * static_cast<double>(peephole_scale) /
                             static_cast<double>(intermediate_scale[g]));
      QuantizeScale(ctx, node, "peephole", effective, &gate.peephole_multiplier,
                    &gate.peephole_shift);
    }
    if (d.use_layer_norm) {
      const float layer_norm_scale =
          PerTensorScale(ctx, node, ctx.input(node, kLayerNorm + g), "layer norm coefficients");
      QuantizeScale(ctx, node, "layer norm", layer_norm_scale, &gate.layer_norm_multiplier,
                    &gate.layer_norm_shift);
      // TFLite's guard against a zero variance (10000 keeps the arithmetic in range).
      gate.variance_guard = std::max(1, fixed_point::TruncateToInt32(10000 * layer_norm_scale));
    }
  }
  const float hidden_scale = static_cast<float>(
      std::pow(2.0, -15) / static_cast<double>(intermediate_scale[4]) * std::pow(2.0, -15));
  QuantizeScale(ctx, node, "hidden state", hidden_scale, &p.hidden_multiplier, &p.hidden_shift);
  p.hidden_zero_point = hidden_zero_point;
  p.output_state_zero_point = output_state_zero_point;
  if (use_projection) {
    const float projection_weight_scale =
        PerTensorScale(ctx, node, ctx.input(node, kProjectionWeights), "projection weights");
    const float product = projection_weight_scale * intermediate_scale[4];
    QuantizeScale(ctx, node, "projection", product / output_state_scale, &p.projection_multiplier,
                  &p.projection_shift);
  }

  // Zero points folded into the biases. With layer norm the gate bias is
  // added after normalization instead.
  for (int g = 0; g < 4; ++g) {
    if (g == kInputGate && use_cifg) continue;
    const Tensor* gate_bias = d.use_layer_norm ? nullptr : &ctx.input(node, kGateBias + g);
    d.input_bias[g] =
        FoldZeroPoint(ctx.input(node, kInputToGateWeights + g), gate_bias, -input_zero_point);
    d.recurrent_bias[g] = FoldZeroPoint(ctx.input(node, kRecurrentToGateWeights + g), nullptr,
                                        -output_state_zero_point);
  }
  if (use_projection) {
    // TFLite folds +hidden_zero_point here and subtracts it from the hidden
    // values (the sign is its convention, reproduced as is).
    d.projection_bias = FoldZeroPoint(ctx.input(node, kProjectionWeights),
                                      ctx.optional_input(node, kProjectionBias), hidden_zero_point);
  }

  // Scratch: four int16 gate buffers and one int8 hidden buffer of batch x n_cell
  // (batch-major runs one row at a time but uses the same layout).
  const size_t gate_elements = static_cast<size_t>(s.n_batch) * static_cast<size_t>(s.n_cell);
  d.gate_scratch_bytes = (gate_elements * sizeof(int16_t) + 63) / 64 * 64;
  node.scratch_bytes = 4 * d.gate_scratch_bytes + gate_elements;
}

}  // namespace

void PrepareFloat(KernelContext& ctx, Node& node, const SequenceLstmParams& params, LstmData& d) {
  const reference::LstmShape& s = d.shape;
  ctx.CheckType(node, ctx.input(node, kOutputState), DataType::kFloat32);
  ctx.CheckType(node, ctx.input(node, kCellState), DataType::kFloat32);
  ctx.CheckType(node, ctx.output(node, 0), DataType::kFloat32);
  const int input_count = static_cast<int>(node.inputs.size());
  for (int i = 1; i < input_count; ++i) {
    if (i == kOutputState || i == kCellState) continue;
    if (const Tensor* t = ctx.optional_input(node, i)) ctx.CheckType(node, *t, DataType::kFloat32);
  }
  reference::LstmFloatParams& p = d.float_params;
  p.use_cifg = d.params.use_cifg;
  p.cell_clip = params.cell_clip;
  p.proj_clip = params.proj_clip;
  switch (params.activation) {
    case Activation::kNone:
      p.activation = reference::LstmActivation::kNone;
      break;
    case Activation::kRelu:
      p.activation = reference::LstmActivation::kRelu;
      break;
    case Activation::kReluN1To1:
      p.activation = reference::LstmActivation::kReluN1To1;
      break;
    case Activation::kRelu6:
      p.activation = reference::LstmActivation::kRelu6;
      break;
    case Activation::kTanh:
      p.activation = reference::LstmActivation::kTanh;
      break;
    default:
      ctx.Fail(node, "activation ", layer_quant::ActivationName(params.activation),
               " is not supported by the float LSTM");
  }
  d.is_float = true;
  // Scratch: four float gate buffers of batch x n_cell.
  const size_t gate_elements = static_cast<size_t>(s.n_batch) * static_cast<size_t>(s.n_cell);
  d.gate_scratch_bytes = (gate_elements * sizeof(float) + 63) / 64 * 64;
  node.scratch_bytes = 4 * d.gate_scratch_bytes;
}

std::vector<int32_t> RowSums(const Tensor& w) {
  const int rows = w.dim(0), cols = w.dim(1);
  const int8_t* v = w.data_as<int8_t>();
  std::vector<int32_t> sums(rows, 0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) sums[r] += v[static_cast<size_t>(r) * cols + c];
  return sums;
}

float HybridWeightScale(const KernelContext& ctx, const Node& node, const Tensor& w,
                        const char* role) {
  DLG_NODE_CHECK(ctx, node, w.type == DataType::kInt8, role, " ", Describe(w), " has type ",
                 DataTypeName(w.type), ", INT8 expected in a hybrid LSTM");
  DLG_NODE_CHECK(ctx, node, w.is_constant(), role, " ", Describe(w), " must be constant");
  const float scale = PerTensorScale(ctx, node, w, role);
  DLG_NODE_CHECK(ctx, node, w.zero_point() == 0, role, " ", Describe(w),
                 " must have zero point 0, has ", w.zero_point());
  return scale;
}

void PrepareHybrid(KernelContext& ctx, Node& node, const SequenceLstmParams& params,
                   LstmData& d) {
  // The float checks and activation first (they accept any weight type here).
  const reference::LstmShape& s = d.shape;
  ctx.CheckType(node, ctx.input(node, kOutputState), DataType::kFloat32);
  ctx.CheckType(node, ctx.input(node, kCellState), DataType::kFloat32);
  ctx.CheckType(node, ctx.output(node, 0), DataType::kFloat32);
  reference::LstmHybridParams& p = d.hybrid_params;
  p.use_cifg = d.params.use_cifg;
  p.asymmetric = params.asymmetric_quantize_inputs;
  p.cell_clip = params.cell_clip;
  p.proj_clip = params.proj_clip;
  switch (params.activation) {
    case Activation::kNone: p.activation = reference::LstmActivation::kNone; break;
    case Activation::kRelu: p.activation = reference::LstmActivation::kRelu; break;
    case Activation::kReluN1To1: p.activation = reference::LstmActivation::kReluN1To1; break;
    case Activation::kRelu6: p.activation = reference::LstmActivation::kRelu6; break;
    case Activation::kTanh: p.activation = reference::LstmActivation::kTanh; break;
    default:
      ctx.Fail(node, "activation ", layer_quant::ActivationName(params.activation),
               " is not supported by the hybrid LSTM");
  }
  std::array<reference::LstmHybridGate*, 4> gates = {&p.input_gate, &p.forget_gate, &p.cell_gate,
                                                     &p.output_gate};
  for (int g = 0; g < 4; ++g) {
    if (g == kInputGate && p.use_cifg) continue;
    const std::string gate = kGateNames[g];
    const Tensor& w = ctx.input(node, kInputToGateWeights + g);
    const Tensor& r = ctx.input(node, kRecurrentToGateWeights + g);
    gates[g]->input_scale = HybridWeightScale(ctx, node, w, ("input-to-" + gate + " weights").c_str());
    gates[g]->recurrent_scale =
        HybridWeightScale(ctx, node, r, ("recurrent-to-" + gate + " weights").c_str());
    d.input_row_sums[g] = RowSums(w);
    d.recurrent_row_sums[g] = RowSums(r);
    ctx.CheckType(node, ctx.input(node, kGateBias + g), DataType::kFloat32);
    if (d.use_layer_norm) ctx.CheckType(node, ctx.input(node, kLayerNorm + g), DataType::kFloat32);
    if (g != kCellGate && d.use_peephole) {
      const Tensor& pw = ctx.input(node, PeepholeIndex(g));
      const float scale = HybridWeightScale(ctx, node, pw, ("cell-to-" + gate + " weights").c_str());
      d.peephole_float[g].resize(s.n_cell);
      for (int i = 0; i < s.n_cell; ++i)
        d.peephole_float[g][i] = static_cast<float>(pw.data_as<int8_t>()[i]) * scale;
    }
  }
  if (const Tensor* proj = ctx.optional_input(node, kProjectionWeights)) {
    p.projection_scale = HybridWeightScale(ctx, node, *proj, "projection weights");
    d.projection_row_sums = RowSums(*proj);
    if (const Tensor* pb = ctx.optional_input(node, kProjectionBias))
      ctx.CheckType(node, *pb, DataType::kFloat32);
  }
  d.is_hybrid = true;
  // Scratch: four float gate buffers, the quantized input, output state and
  // hidden state, then scales and zero points per batch row for each.
  const size_t batch = static_cast<size_t>(s.n_batch);
  const size_t gate_elements = batch * static_cast<size_t>(s.n_cell);
  auto round64 = [](size_t n) { return (n + 63) / 64 * 64; };
  d.gate_scratch_bytes = round64(gate_elements * sizeof(float));
  d.hybrid_offsets[0] = 4 * d.gate_scratch_bytes;
  d.hybrid_offsets[1] = d.hybrid_offsets[0] + round64(batch * s.n_input);
  d.hybrid_offsets[2] = d.hybrid_offsets[1] + round64(batch * s.n_output);
  d.hybrid_offsets[3] = d.hybrid_offsets[2] + round64(batch * s.n_cell);
  node.scratch_bytes = d.hybrid_offsets[3] + 6 * batch * sizeof(float);
}

namespace {

// sequence: UNIDIRECTIONAL_SEQUENCE_LSTM (input rank 3); otherwise LSTM, one
// step of input [batch, n_input] (kernel_type FULL, float32 or hybrid).
void PrepareLstmNode(KernelContext& ctx, Node& node, bool sequence) {
  const int input_count = static_cast<int>(node.inputs.size());
  DLG_NODE_CHECK(ctx, node, input_count == 20 || input_count == 24, "expects 20 or 24 inputs, has ",
                 input_count);
  ctx.CheckOutputCount(node, 1);
  SequenceLstmParams params;
  if (const auto* p = std::get_if<SequenceLstmParams>(&node.def->params)) params = *p;
  DLG_NODE_CHECK(ctx, node, params.cell_clip >= 0.0f, "cell_clip must be >= 0, got ",
                 params.cell_clip);
  DLG_NODE_CHECK(ctx, node, params.proj_clip >= 0.0f, "proj_clip must be >= 0, got ",
                 params.proj_clip);

  auto data = std::make_shared<LstmData>();
  LstmData& d = *data;
  reference::LstmShape& s = d.shape;

  const Tensor& input = ctx.input(node, kInput);
  if (sequence) {
    DLG_NODE_CHECK(ctx, node, input.rank() == 3, "input ", Describe(input),
                   " must have rank 3 (batch, time, features), has rank ", input.rank());
    s.time_major = params.time_major;
    s.n_time = s.time_major ? input.dim(0) : input.dim(1);
    s.n_batch = s.time_major ? input.dim(1) : input.dim(0);
    s.n_input = input.dim(2);
  } else {
    DLG_NODE_CHECK(ctx, node, !params.basic_kernel,
                   "kernel_type BASIC is not supported (FULL only)");
    DLG_NODE_CHECK(ctx, node, input.rank() == 2, "input ", Describe(input),
                   " must have rank 2 (batch, features), has rank ", input.rank());
    s.time_major = true;
    s.n_time = 1;
    s.n_batch = input.dim(0);
    s.n_input = input.dim(1);
  }

  const Tensor& input_to_output = ctx.input(node, kInputToGateWeights + kOutputGate);
  const Tensor& recurrent_to_output = ctx.input(node, kRecurrentToGateWeights + kOutputGate);
  DLG_NODE_CHECK(ctx, node, input_to_output.rank() == 2, "input-to-output weights ",
                 Describe(input_to_output), " must have rank 2, has rank ", input_to_output.rank());
  DLG_NODE_CHECK(ctx, node, recurrent_to_output.rank() == 2, "recurrent-to-output weights ",
                 Describe(recurrent_to_output),
                 " must have rank 2 (diagonal recurrent weights are not supported), has rank ",
                 recurrent_to_output.rank());
  s.n_cell = input_to_output.dim(0);
  s.n_output = recurrent_to_output.dim(1);
  DLG_NODE_CHECK(ctx, node, s.n_input > 0 && s.n_cell > 0 && s.n_output > 0,
                 "input size, cell count and output size must be positive, got ", s.n_input, ", ",
                 s.n_cell, ", ", s.n_output);

  // CIFG (no input gate) is all or nothing.
  const bool has_input_weights = ctx.optional_input(node, kInputToGateWeights) != nullptr;
  const bool has_recurrent_input_weights =
      ctx.optional_input(node, kRecurrentToGateWeights) != nullptr;
  DLG_NODE_CHECK(
      ctx, node, has_input_weights == has_recurrent_input_weights,
      "input-to-input and recurrent-to-input weights must be both present or both absent");
  const bool use_cifg = !has_input_weights;
  d.params.use_cifg = use_cifg;

  // Peephole weights: all present (the input one only without CIFG) or none.
  const bool has_peephole[3] = {ctx.optional_input(node, 9) != nullptr,
                                ctx.optional_input(node, 10) != nullptr,
                                ctx.optional_input(node, 11) != nullptr};
  const bool all_peephole = (has_peephole[0] || use_cifg) && has_peephole[1] && has_peephole[2];
  const bool no_peephole = !has_peephole[0] && !has_peephole[1] && !has_peephole[2];
  DLG_NODE_CHECK(ctx, node, all_peephole || no_peephole,
                 "peephole (cell-to-gate) weights must be all present or all absent");
  DLG_NODE_CHECK(ctx, node, !(use_cifg && has_peephole[0]),
                 "cell-to-input weights given for a CIFG LSTM (no input gate)");
  d.use_peephole = all_peephole && !no_peephole;

  d.use_layer_norm = input_count == 24 && ctx.optional_input(node, kLayerNorm + kForgetGate);

  for (int g = 0; g < 4; ++g) {
    const std::string gate = kGateNames[g];
    if (g == kInputGate && use_cifg) {
      DLG_NODE_CHECK(ctx, node, ctx.optional_input(node, kGateBias) == nullptr,
                     "input gate bias given for a CIFG LSTM (no input gate)");
      if (d.use_layer_norm)
        DLG_NODE_CHECK(ctx, node, ctx.optional_input(node, kLayerNorm) == nullptr,
                       "input layer norm coefficients given for a CIFG LSTM (no input gate)");
      continue;
    }
    CheckDims(ctx, node, ctx.input(node, kInputToGateWeights + g),
              ("input-to-" + gate + " weights").c_str(), {s.n_cell, s.n_input});
    CheckDims(ctx, node, ctx.input(node, kRecurrentToGateWeights + g),
              ("recurrent-to-" + gate + " weights").c_str(), {s.n_cell, s.n_output});
    CheckDims(ctx, node, ctx.input(node, kGateBias + g), (gate + " gate bias").c_str(), {s.n_cell});
    if (g != kCellGate && d.use_peephole)
      CheckDims(ctx, node, ctx.input(node, PeepholeIndex(g)),
                ("cell-to-" + gate + " weights").c_str(), {s.n_cell});
    if (d.use_layer_norm)
      CheckDims(ctx, node, ctx.input(node, kLayerNorm + g),
                (gate + " layer norm coefficients").c_str(), {s.n_cell});
  }

  const Tensor* projection_weights = ctx.optional_input(node, kProjectionWeights);
  const Tensor* projection_bias = ctx.optional_input(node, kProjectionBias);
  DLG_NODE_CHECK(ctx, node, projection_weights != nullptr || projection_bias == nullptr,
                 "projection bias given without projection weights");
  if (projection_weights != nullptr) {
    CheckDims(ctx, node, *projection_weights, "projection weights", {s.n_output, s.n_cell});
    if (projection_bias != nullptr)
      CheckDims(ctx, node, *projection_bias, "projection bias", {s.n_output});
  } else {
    // Without projection the hidden state is the output state.
    DLG_NODE_CHECK(ctx, node, s.n_output == s.n_cell, "without projection the output size (",
                   s.n_output, ") must equal the cell count (", s.n_cell, ")");
  }
  // TFLite walks peephole weights with the output size as stride.
  DLG_NODE_CHECK(ctx, node, !d.use_peephole || s.n_output <= s.n_cell,
                 "peephole weights with an output size (", s.n_output,
                 ") larger than the cell count (", s.n_cell, ") are not supported");

  const Tensor& output_state = ctx.input(node, kOutputState);
  const Tensor& cell_state = ctx.input(node, kCellState);
  DLG_NODE_CHECK(ctx, node, output_state.storage == TensorStorage::kVariable, "output state ",
                 Describe(output_state), " must be a variable tensor");
  DLG_NODE_CHECK(ctx, node, cell_state.storage == TensorStorage::kVariable, "cell state ",
                 Describe(cell_state), " must be a variable tensor");
  DLG_NODE_CHECK(ctx, node,
                 output_state.NumElements() == static_cast<int64_t>(s.n_batch) * s.n_output,
                 "output state ", Describe(output_state),
                 " must hold batch x output = ", static_cast<int64_t>(s.n_batch) * s.n_output,
                 " elements, has ", output_state.NumElements());
  DLG_NODE_CHECK(ctx, node, cell_state.NumElements() == static_cast<int64_t>(s.n_batch) * s.n_cell,
                 "cell state ", Describe(cell_state),
                 " must hold batch x cells = ", static_cast<int64_t>(s.n_batch) * s.n_cell,
                 " elements, has ", cell_state.NumElements());

  const DataType weight_type = input_to_output.type;
  if (input.type == DataType::kInt8 && weight_type == DataType::kInt8) {
    DLG_NODE_CHECK(ctx, node, sequence,
                   "integer LSTM is not supported (float32 and hybrid only); "
                   "UNIDIRECTIONAL_SEQUENCE_LSTM has the integer kernel");
    PrepareInteger(ctx, node, params, d);
  } else if (input.type == DataType::kFloat32 && weight_type == DataType::kInt8) {
    PrepareHybrid(ctx, node, params, d);
  } else if (input.type == DataType::kFloat32 && weight_type != DataType::kFloat32) {
    ctx.Fail(node, "hybrid LSTM (float input, ", DataTypeName(weight_type),
             " weights) is not supported (INT8 weights only)");
  } else if (input.type == DataType::kFloat32) {
    PrepareFloat(ctx, node, params, d);
  } else {
    ctx.Fail(node, "input ", Describe(input), " has type ", DataTypeName(input.type), " with ",
             DataTypeName(weight_type), " weights; INT8 input and weights expected");
  }

  PackWeights(ctx, node, d, weight_type);

  std::vector<int32_t> output_dims = input.dims;
  output_dims.back() = s.n_output;
  ctx.SetOutputDims(node, 0, std::move(output_dims));
  node.op_data = std::move(data);
}

}  // namespace

void PrepareUnidirectionalSequenceLstm(KernelContext& ctx, Node& node) {
  PrepareLstmNode(ctx, node, /*sequence=*/true);
}

void PrepareLstm(KernelContext& ctx, Node& node) { PrepareLstmNode(ctx, node, /*sequence=*/false); }

// Runs step(ops) with the node's vector Ops when its weights are packed
// (kernels/optimized/lstm.h), else with the reference's.
template <class VectorOps, class ReferenceOps, class Step>
void WithOps(const Node& node, const LstmData& d, const Step& step) {
  if (!d.packed) return step(ReferenceOps());
  VectorOps ops;
  ops.weights = d.packed.get();
  if constexpr (requires { ops.scratch; }) ops.scratch = node.scratch + d.packed_scratch_offset;
  step(ops);
}

void EvalFloat(KernelContext& ctx, const Node& node, const LstmData& d) {
  reference::LstmFloatParams p = d.float_params;
  std::array<reference::LstmFloatGate*, 4> gates = {&p.input_gate, &p.forget_gate, &p.cell_gate,
                                                    &p.output_gate};
  for (int g = 0; g < 4; ++g) {
    if (g == kInputGate && p.use_cifg) continue;
    reference::LstmFloatGate& gate = *gates[g];
    gate.input_weights = ctx.in(node, kInputToGateWeights + g).data_as<float>();
    gate.recurrent_weights = ctx.in(node, kRecurrentToGateWeights + g).data_as<float>();
    gate.bias = ctx.in(node, kGateBias + g).data_as<float>();
    if (g != kCellGate && d.use_peephole)
      gate.peephole_weights = ctx.in(node, PeepholeIndex(g)).data_as<float>();
    if (d.use_layer_norm) gate.layer_norm_weights = ctx.in(node, kLayerNorm + g).data_as<float>();
  }
  if (node.inputs[kProjectionWeights] >= 0) {
    p.projection_weights = ctx.in(node, kProjectionWeights).data_as<float>();
    if (node.inputs[kProjectionBias] >= 0)
      p.projection_bias = ctx.in(node, kProjectionBias).data_as<float>();
  }
  reference::LstmFloatScratch scratch;
  uint8_t* base = node.scratch;
  scratch.input_gate = reinterpret_cast<float*>(base);
  scratch.forget_gate = reinterpret_cast<float*>(base + d.gate_scratch_bytes);
  scratch.cell_gate = reinterpret_cast<float*>(base + 2 * d.gate_scratch_bytes);
  scratch.output_gate = reinterpret_cast<float*>(base + 3 * d.gate_scratch_bytes);
  Tensor& output_state = ctx.tensor(node.inputs[kOutputState]);
  Tensor& cell_state = ctx.tensor(node.inputs[kCellState]);
  WithOps<optimized::FloatLstmOps, reference::LstmFloatOps>(node, d, [&](const auto& ops) {
    reference::UnidirectionalSequenceLstmFloat(
        p, d.shape, ctx.in(node, kInput).data_as<float>(), output_state.data_as<float>(),
        cell_state.data_as<float>(), ctx.out(node, 0).data_as<float>(), scratch, ops);
  });
}

void EvalHybrid(KernelContext& ctx, const Node& node, const LstmData& d) {
  reference::LstmHybridParams p = d.hybrid_params;
  std::array<reference::LstmHybridGate*, 4> gates = {&p.input_gate, &p.forget_gate, &p.cell_gate,
                                                     &p.output_gate};
  for (int g = 0; g < 4; ++g) {
    if (g == kInputGate && p.use_cifg) continue;
    reference::LstmHybridGate& gate = *gates[g];
    gate.input_weights = ctx.in(node, kInputToGateWeights + g).data_as<int8_t>();
    gate.input_row_sums = d.input_row_sums[g].data();
    gate.recurrent_weights = ctx.in(node, kRecurrentToGateWeights + g).data_as<int8_t>();
    gate.recurrent_row_sums = d.recurrent_row_sums[g].data();
    gate.bias = ctx.in(node, kGateBias + g).data_as<float>();
    if (g != kCellGate && d.use_peephole) gate.peephole_weights = d.peephole_float[g].data();
    if (d.use_layer_norm) gate.layer_norm_weights = ctx.in(node, kLayerNorm + g).data_as<float>();
  }
  if (node.inputs[kProjectionWeights] >= 0) {
    p.projection_weights = ctx.in(node, kProjectionWeights).data_as<int8_t>();
    p.projection_row_sums = d.projection_row_sums.data();
    if (node.inputs[kProjectionBias] >= 0)
      p.projection_bias = ctx.in(node, kProjectionBias).data_as<float>();
  }
  reference::LstmHybridScratch scratch;
  uint8_t* base = node.scratch;
  scratch.gates.input_gate = reinterpret_cast<float*>(base);
  scratch.gates.forget_gate = reinterpret_cast<float*>(base + d.gate_scratch_bytes);
  scratch.gates.cell_gate = reinterpret_cast<float*>(base + 2 * d.gate_scratch_bytes);
  scratch.gates.output_gate = reinterpret_cast<float*>(base + 3 * d.gate_scratch_bytes);
  scratch.quantized_input = reinterpret_cast<int8_t*>(base + d.hybrid_offsets[0]);
  scratch.quantized_state = reinterpret_cast<int8_t*>(base + d.hybrid_offsets[1]);
  scratch.quantized_hidden = reinterpret_cast<int8_t*>(base + d.hybrid_offsets[2]);
  float* rows = reinterpret_cast<float*>(base + d.hybrid_offsets[3]);
  const int batch = d.shape.n_batch;
  scratch.input_scales = rows;
  scratch.state_scales = rows + batch;
  scratch.hidden_scales = rows + 2 * batch;
  int32_t* zero_points = reinterpret_cast<int32_t*>(rows + 3 * batch);
  scratch.input_zero_points = zero_points;
  scratch.state_zero_points = zero_points + batch;
  scratch.hidden_zero_points = zero_points + 2 * batch;
  Tensor& output_state = ctx.tensor(node.inputs[kOutputState]);
  Tensor& cell_state = ctx.tensor(node.inputs[kCellState]);
  WithOps<optimized::HybridLstmOps, reference::LstmHybridOps>(node, d, [&](const auto& ops) {
    reference::UnidirectionalSequenceLstmHybrid(
        p, d.shape, ctx.in(node, kInput).data_as<float>(), output_state.data_as<float>(),
        cell_state.data_as<float>(), ctx.out(node, 0).data_as<float>(), scratch, ops);
  });
}

void EvalUnidirectionalSequenceLstm(KernelContext& ctx, const Node& node) {
  const LstmData& d = *node.data<LstmData>();
  if (d.is_hybrid) {
    EvalHybrid(ctx, node, d);
    return;
  }
  if (d.is_float) {
    EvalFloat(ctx, node, d);
    return;
  }
  reference::LstmIntegerParams p = d.params;
  std::array<reference::LstmIntegerGate*, 4> gates = {&p.input_gate, &p.forget_gate, &p.cell_gate,
                                                      &p.output_gate};
  for (int g = 0; g < 4; ++g) {
    if (g == kInputGate && p.use_cifg) continue;
    reference::LstmIntegerGate& gate = *gates[g];
    gate.input_weights = ctx.in(node, kInputToGateWeights + g).data_as<int8_t>();
    gate.input_bias = d.input_bias[g].data();
    gate.recurrent_weights = ctx.in(node, kRecurrentToGateWeights + g).data_as<int8_t>();
    gate.recurrent_bias = d.recurrent_bias[g].data();
    if (g != kCellGate && d.use_peephole)
      gate.peephole_weights = ctx.in(node, PeepholeIndex(g)).data_as<int16_t>();
    if (d.use_layer_norm) {
      gate.layer_norm_weights = ctx.in(node, kLayerNorm + g).data_as<int16_t>();
      gate.layer_norm_bias = ctx.in(node, kGateBias + g).data_as<int32_t>();
    }
  }
  if (node.inputs[kProjectionWeights] >= 0) {
    p.projection_weights = ctx.in(node, kProjectionWeights).data_as<int8_t>();
    p.projection_bias = d.projection_bias.data();
  }

  reference::LstmIntegerScratch scratch;
  uint8_t* base = node.scratch;
  scratch.input_gate = reinterpret_cast<int16_t*>(base);
  scratch.forget_gate = reinterpret_cast<int16_t*>(base + d.gate_scratch_bytes);
  scratch.cell_gate = reinterpret_cast<int16_t*>(base + 2 * d.gate_scratch_bytes);
  scratch.output_gate = reinterpret_cast<int16_t*>(base + 3 * d.gate_scratch_bytes);
  scratch.hidden = reinterpret_cast<int8_t*>(base + 4 * d.gate_scratch_bytes);

  Tensor& output_state = ctx.tensor(node.inputs[kOutputState]);
  Tensor& cell_state = ctx.tensor(node.inputs[kCellState]);
  WithOps<optimized::IntegerLstmOps, reference::LstmIntegerOps>(node, d, [&](const auto& ops) {
    reference::UnidirectionalSequenceLstmInteger(
        p, d.shape, ctx.in(node, kInput).data_as<int8_t>(), output_state.data_as<int8_t>(),
        cell_state.data_as<int16_t>(), ctx.out(node, 0).data_as<int8_t>(), scratch, ops);
  });
}

// LSTM runs the same step functions with one time step.
void EvalLstm(KernelContext& ctx, const Node& node) { EvalUnidirectionalSequenceLstm(ctx, node); }

}  // namespace delegato
