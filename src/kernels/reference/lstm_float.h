// UNIDIRECTIONAL_SEQUENCE_LSTM in float32, in the order TFLite's float LSTM
// step computes it. Per time step, for all batch rows at once:
//   gate_g = act_g(b_g + W_g x + R_g h + P_g .* c)   (each matmul row summed from
//            column 0 into its own float, then added; with layer norm the gate starts
//            at 0 and is normalized, scaled by its coefficients and given b_g after)
//   c      = forget .* c + input .* cell             (input = 1 - forget with CIFG),
//            then clipped to +-cell_clip when cell_clip > 0
//   h      = output .* act(c), projected (bias + W_p h, clipped to +-proj_clip) if
//            there are projection weights
// The gates use sigmoid; the cell gate and act() use the op's activation.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/reference/hybrid.h"
#include "kernels/reference/lstm.h"

namespace delegato::reference {

struct LstmFloatGate {
  const float* input_weights = nullptr;       // [n_cell, n_input]
  const float* recurrent_weights = nullptr;   // [n_cell, n_output]
  const float* peephole_weights = nullptr;    // [n_cell], optional
  const float* layer_norm_weights = nullptr;  // [n_cell], optional
  const float* bias = nullptr;                // [n_cell]
};

enum class LstmActivation { kNone, kRelu, kReluN1To1, kRelu6, kTanh, kSigmoid };

struct LstmFloatParams {
  LstmFloatGate input_gate;  // unused with CIFG
  LstmFloatGate forget_gate;
  LstmFloatGate cell_gate;
  LstmFloatGate output_gate;
  bool use_cifg = false;
  LstmActivation activation = LstmActivation::kTanh;
  float cell_clip = 0;  // 0 = no clipping
  float proj_clip = 0;
  const float* projection_weights = nullptr;  // [n_output, n_cell], optional
  const float* projection_bias = nullptr;     // [n_output], optional
};

// Four gate buffers of n_batch * n_cell floats each.
struct LstmFloatScratch {
  float* input_gate = nullptr;
  float* forget_gate = nullptr;
  float* cell_gate = nullptr;
  float* output_gate = nullptr;
};

namespace lstm_float_internal {

inline float Activate(LstmActivation act, float x) {
  switch (act) {
    case LstmActivation::kNone:
      return x;
    case LstmActivation::kRelu:
      return std::max(0.0f, x);
    case LstmActivation::kReluN1To1:
      return std::max(-1.0f, std::min(x, 1.0f));
    case LstmActivation::kRelu6:
      return std::max(0.0f, std::min(x, 6.0f));
    case LstmActivation::kTanh:
      return std::tanh(x);
    case LstmActivation::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
  }
  return x;
}

// result[b][r] += sum_c matrix[r][c] * vector[b][c], each row's sum in its own float.
inline void MatVecAccumulate(const float* matrix, int rows, int cols, const float* vector,
                             int n_batch, float* result) {
  for (int b = 0; b < n_batch; ++b) {
    const float* m = matrix;
    const float* v = vector + static_cast<size_t>(b) * cols;
    float* out = result + static_cast<size_t>(b) * rows;
    for (int r = 0; r < rows; ++r) {
      float dot = 0.0f;
      for (int c = 0; c < cols; ++c) dot += *m++ * v[c];
      out[r] += dot;
    }
  }
}

// The step's matrix-vector products and activations as the reference computes
// them. The steps below take them as a parameter: kernels/optimized/lstm.h
// passes vector versions with the same meaning (the products bit-exact, the
// activations within tolerance).
struct LstmFloatOps {
  // result[b][r] += matrix row r . vector row b (MatVecAccumulate).
  void MatVec(const float* matrix, int rows, int cols, const float* vector, int n_batch,
              float* result) const {
    MatVecAccumulate(matrix, rows, cols, vector, n_batch, result);
  }
  // v[i] = act(v[i]) for i < n.
  void Activate(LstmActivation act, float* v, int n) const {
    for (int i = 0; i < n; ++i) v[i] = lstm_float_internal::Activate(act, v[i]);
  }
};

// Layer normalization (if any) and the activation of a gate's pre-activation.
template <class Ops>
void FinishGate(const LstmFloatGate& g, LstmActivation act, int n_batch, int n_cell, float* gate,
                const Ops& ops) {
  const int n = n_batch * n_cell;
  if (g.layer_norm_weights != nullptr) {
    // TFLite's MeanStddevNormalization: the mean, then the mean squared
    // difference, 1 / sqrt(variance + 1e-8).
    for (int b = 0; b < n_batch; ++b) {
      float* row = gate + b * n_cell;
      float sum = 0.0f;
      for (int i = 0; i < n_cell; ++i) sum += row[i];
      const float mean = sum / static_cast<float>(n_cell);
      float sum_diff_sq = 0.0f;
      for (int i = 0; i < n_cell; ++i) {
        const float diff = row[i] - mean;
        sum_diff_sq += diff * diff;
      }
      const float variance = sum_diff_sq / static_cast<float>(n_cell);
      const float inv_stddev = 1.0f / std::sqrt(variance + 1e-8f);
      for (int i = 0; i < n_cell; ++i) row[i] = (row[i] - mean) * inv_stddev;
      for (int i = 0; i < n_cell; ++i) row[i] = g.layer_norm_weights[i] * row[i];
      for (int i = 0; i < n_cell; ++i) row[i] = row[i] + g.bias[i];
    }
  }
  ops.Activate(act, gate, n);
}

// c = forget .* c + input .* cell (input = 1 - forget with CIFG), clipped.
inline void UpdateCell(bool use_cifg, float cell_clip, int n, const LstmFloatScratch& s,
                       float* cell_state) {
  for (int i = 0; i < n; ++i) cell_state[i] = s.forget_gate[i] * cell_state[i];
  for (int i = 0; i < n; ++i) {
    const float input_gate = use_cifg ? 1.0f - s.forget_gate[i] : s.input_gate[i];
    cell_state[i] += s.cell_gate[i] * input_gate;
  }
  if (cell_clip > 0.0f)
    for (int i = 0; i < n; ++i) cell_state[i] = std::max(-cell_clip, std::min(cell_state[i], cell_clip));
}

template <class Ops>
void Gate(const LstmFloatGate& g, LstmActivation act, const float* input,
          const float* output_state, const float* cell_state, int n_batch, int n_input,
          int n_output, int n_cell, float* gate, const Ops& ops) {
  const int n = n_batch * n_cell;
  if (g.layer_norm_weights != nullptr) {
    std::fill_n(gate, n, 0.0f);
  } else {
    for (int b = 0; b < n_batch; ++b) std::copy_n(g.bias, n_cell, gate + b * n_cell);
  }
  ops.MatVec(g.input_weights, n_cell, n_input, input, n_batch, gate);
  ops.MatVec(g.recurrent_weights, n_cell, n_output, output_state, n_batch, gate);
  if (g.peephole_weights != nullptr) {
    for (int b = 0; b < n_batch; ++b)
      for (int i = 0; i < n_cell; ++i)
        gate[b * n_cell + i] += g.peephole_weights[i] * cell_state[b * n_cell + i];
  }
  FinishGate(g, act, n_batch, n_cell, gate, ops);
}

template <class Ops>
void StepFloat(const LstmFloatParams& p, int n_batch, int n_input, int n_cell, int n_output,
               const float* input, float* output_state, float* cell_state, float* output,
               const LstmFloatScratch& s, const Ops& ops) {
  const int n = n_batch * n_cell;
  if (!p.use_cifg)
    Gate(p.input_gate, LstmActivation::kSigmoid, input, output_state, cell_state, n_batch,
         n_input, n_output, n_cell, s.input_gate, ops);
  Gate(p.forget_gate, LstmActivation::kSigmoid, input, output_state, cell_state, n_batch,
       n_input, n_output, n_cell, s.forget_gate, ops);
  LstmFloatGate cell_gate = p.cell_gate;
  cell_gate.peephole_weights = nullptr;  // the cell gate has no peephole
  Gate(cell_gate, p.activation, input, output_state, cell_state, n_batch, n_input, n_output,
       n_cell, s.cell_gate, ops);

  UpdateCell(p.use_cifg, p.cell_clip, n, s, cell_state);

  Gate(p.output_gate, LstmActivation::kSigmoid, input, output_state, cell_state, n_batch,
       n_input, n_output, n_cell, s.output_gate, ops);

  // hidden = output .* act(c), in the cell gate's buffer (free by now).
  float* hidden = s.cell_gate;
  std::copy_n(cell_state, n, hidden);
  ops.Activate(p.activation, hidden, n);
  for (int i = 0; i < n; ++i) hidden[i] = s.output_gate[i] * hidden[i];
  const size_t out_n = static_cast<size_t>(n_batch) * n_output;
  if (p.projection_weights != nullptr) {
    for (int b = 0; b < n_batch; ++b) {
      if (p.projection_bias != nullptr)
        std::copy_n(p.projection_bias, n_output, output_state + b * n_output);
      else
        std::fill_n(output_state + b * n_output, n_output, 0.0f);
    }
    ops.MatVec(p.projection_weights, n_output, n_cell, hidden, n_batch, output_state);
    if (p.proj_clip > 0.0f)
      for (size_t i = 0; i < out_n; ++i)
        output_state[i] = std::max(-p.proj_clip, std::min(output_state[i], p.proj_clip));
  } else {
    std::copy_n(hidden, out_n, output_state);
  }
  std::copy_n(output_state, out_n, output);
}

}  // namespace lstm_float_internal

using LstmFloatOps = lstm_float_internal::LstmFloatOps;

// Hybrid (dynamic-range) LSTM: float activations and states, int8 weights with
// one scale per tensor, as TFLite's hybrid LSTM step computes it. Each step
// quantizes the input and the output state per batch row (symmetric, or
// asymmetric with asymmetric_quantize_inputs), skipping a vector that is all
// zeros; each matmul adds float(int32 dot - row_sum * zero_point) *
// (row_scale * weight_scale) to the gate; peephole weights are dequantized
// (w * scale) first; the rest is the float step. The projection quantizes
// output .* act(c) the same way.
struct LstmHybridGate {
  const int8_t* input_weights = nullptr;
  float input_scale = 0;
  const int32_t* input_row_sums = nullptr;  // for asymmetric inputs
  const int8_t* recurrent_weights = nullptr;
  float recurrent_scale = 0;
  const int32_t* recurrent_row_sums = nullptr;
  const float* peephole_weights = nullptr;  // dequantized, optional
  const float* layer_norm_weights = nullptr;
  const float* bias = nullptr;
};

struct LstmHybridParams {
  LstmHybridGate input_gate, forget_gate, cell_gate, output_gate;
  bool use_cifg = false;
  bool asymmetric = false;
  LstmActivation activation = LstmActivation::kTanh;
  float cell_clip = 0, proj_clip = 0;
  const int8_t* projection_weights = nullptr;
  float projection_scale = 0;
  const int32_t* projection_row_sums = nullptr;
  const float* projection_bias = nullptr;
};

// Float gate buffers as LstmFloatScratch, plus int8 room for the quantized
// input (n_batch * n_input), output state (n_batch * n_output) and hidden
// state (n_batch * n_cell), and per-row scales and zero points (3 x n_batch).
struct LstmHybridScratch {
  LstmFloatScratch gates;
  int8_t* quantized_input = nullptr;
  int8_t* quantized_state = nullptr;
  int8_t* quantized_hidden = nullptr;
  float* input_scales = nullptr;
  float* state_scales = nullptr;
  float* hidden_scales = nullptr;
  int32_t* input_zero_points = nullptr;
  int32_t* state_zero_points = nullptr;
  int32_t* hidden_zero_points = nullptr;
};

namespace lstm_hybrid_internal {

inline bool AllZero(const float* v, int n) {
  for (int i = 0; i < n; ++i)
    if (v[i] != 0.0f) return false;
  return true;
}

inline void QuantizeRows(const float* v, int n_batch, int n, bool asymmetric, int8_t* q,
                         float* scales, int32_t* zero_points) {
  for (int b = 0; b < n_batch; ++b) {
    if (asymmetric) {
      AsymmetricQuantizeRow(v + b * n, n, q + b * n, &scales[b], &zero_points[b]);
    } else {
      SymmetricQuantizeRow(v + b * n, n, q + b * n, &scales[b]);
      zero_points[b] = 0;
    }
  }
}

inline void MatVecAccumulate(const int8_t* matrix, float matrix_scale, const int32_t* row_sums,
                             int rows, int cols, const int8_t* q, const float* scales,
                             const int32_t* zero_points, bool asymmetric, int n_batch,
                             float* result) {
  for (int b = 0; b < n_batch; ++b) {
    const float scale = scales[b] * matrix_scale;
    const int8_t* m = matrix;
    const int8_t* v = q + static_cast<size_t>(b) * cols;
    float* out = result + static_cast<size_t>(b) * rows;
    for (int r = 0; r < rows; ++r) {
      int32_t dot = 0;
      for (int c = 0; c < cols; ++c) dot += int32_t{*m++} * int32_t{v[c]};
      if (asymmetric) dot -= row_sums[r] * zero_points[b];
      out[r] += static_cast<float>(dot) * scale;
    }
  }
}

// The hybrid step's quantization, integer products and activations as the
// reference computes them (see LstmFloatOps).
struct LstmHybridOps : LstmFloatOps {
  void QuantizeRows(const float* v, int n_batch, int n, bool asymmetric, int8_t* q,
                    float* scales, int32_t* zero_points) const {
    lstm_hybrid_internal::QuantizeRows(v, n_batch, n, asymmetric, q, scales, zero_points);
  }
  // result[b][r] += float(matrix row r . (q row b) - row_sums[r] zero_points[b])
  //                 * (scales[b] * matrix_scale)
  void MatVecQuantized(const int8_t* matrix, float matrix_scale, const int32_t* row_sums,
                       int rows, int cols, const int8_t* q, const float* scales,
                       const int32_t* zero_points, bool asymmetric, int n_batch,
                       float* result) const {
    lstm_hybrid_internal::MatVecAccumulate(matrix, matrix_scale, row_sums, rows, cols, q, scales,
                                           zero_points, asymmetric, n_batch, result);
  }
};

template <class Ops>
void Gate(const LstmHybridParams& p, const LstmHybridGate& g, LstmActivation act,
          const LstmHybridScratch& s, bool input_zero, bool state_zero, const float* cell_state,
          int n_batch, int n_input, int n_output, int n_cell, float* gate, const Ops& ops) {
  const int n = n_batch * n_cell;
  if (g.layer_norm_weights != nullptr) {
    std::fill_n(gate, n, 0.0f);
  } else {
    for (int b = 0; b < n_batch; ++b) std::copy_n(g.bias, n_cell, gate + b * n_cell);
  }
  if (!input_zero)
    ops.MatVecQuantized(g.input_weights, g.input_scale, g.input_row_sums, n_cell, n_input,
                        s.quantized_input, s.input_scales, s.input_zero_points, p.asymmetric,
                        n_batch, gate);
  if (!state_zero)
    ops.MatVecQuantized(g.recurrent_weights, g.recurrent_scale, g.recurrent_row_sums, n_cell,
                        n_output, s.quantized_state, s.state_scales, s.state_zero_points,
                        p.asymmetric, n_batch, gate);
  // The float gate's peephole and layer norm steps, then the activation.
  LstmFloatGate rest;
  rest.peephole_weights = g.peephole_weights;
  rest.layer_norm_weights = g.layer_norm_weights;
  rest.bias = g.bias;
  if (rest.peephole_weights != nullptr) {
    for (int b = 0; b < n_batch; ++b)
      for (int i = 0; i < n_cell; ++i)
        gate[b * n_cell + i] += rest.peephole_weights[i] * cell_state[b * n_cell + i];
  }
  lstm_float_internal::FinishGate(rest, act, n_batch, n_cell, gate, ops);
}

template <class Ops>
void StepHybrid(const LstmHybridParams& p, int n_batch, int n_input, int n_cell, int n_output,
                const float* input, float* output_state, float* cell_state, float* output,
                const LstmHybridScratch& s, const Ops& ops) {
  const int n = n_batch * n_cell;
  const bool input_zero = AllZero(input, n_batch * n_input);
  const bool state_zero = AllZero(output_state, n_batch * n_output);
  if (!input_zero)
    ops.QuantizeRows(input, n_batch, n_input, p.asymmetric, s.quantized_input, s.input_scales,
                     s.input_zero_points);
  if (!state_zero)
    ops.QuantizeRows(output_state, n_batch, n_output, p.asymmetric, s.quantized_state,
                     s.state_scales, s.state_zero_points);
  const LstmFloatScratch& g = s.gates;
  if (!p.use_cifg)
    Gate(p, p.input_gate, LstmActivation::kSigmoid, s, input_zero, state_zero, cell_state,
         n_batch, n_input, n_output, n_cell, g.input_gate, ops);
  Gate(p, p.forget_gate, LstmActivation::kSigmoid, s, input_zero, state_zero, cell_state,
       n_batch, n_input, n_output, n_cell, g.forget_gate, ops);
  LstmHybridGate cell_gate = p.cell_gate;
  cell_gate.peephole_weights = nullptr;
  Gate(p, cell_gate, p.activation, s, input_zero, state_zero, cell_state, n_batch, n_input,
       n_output, n_cell, g.cell_gate, ops);

  lstm_float_internal::UpdateCell(p.use_cifg, p.cell_clip, n, g, cell_state);

  Gate(p, p.output_gate, LstmActivation::kSigmoid, s, input_zero, state_zero, cell_state,
       n_batch, n_input, n_output, n_cell, g.output_gate, ops);

  float* hidden = g.cell_gate;
  std::copy_n(cell_state, n, hidden);
  ops.Activate(p.activation, hidden, n);
  for (int i = 0; i < n; ++i) hidden[i] = g.output_gate[i] * hidden[i];
  const size_t out_n = static_cast<size_t>(n_batch) * n_output;
  if (p.projection_weights != nullptr) {
    for (int b = 0; b < n_batch; ++b) {
      if (p.projection_bias != nullptr)
        std::copy_n(p.projection_bias, n_output, output_state + b * n_output);
      else
        std::fill_n(output_state + b * n_output, n_output, 0.0f);
    }
    if (!AllZero(hidden, n)) {
      ops.QuantizeRows(hidden, n_batch, n_cell, p.asymmetric, s.quantized_hidden,
                       s.hidden_scales, s.hidden_zero_points);
      ops.MatVecQuantized(p.projection_weights, p.projection_scale, p.projection_row_sums,
                          n_output, n_cell, s.quantized_hidden, s.hidden_scales,
                          s.hidden_zero_points, p.asymmetric, n_batch, output_state);
    }
    if (p.proj_clip > 0.0f)
      for (size_t i = 0; i < out_n; ++i)
        output_state[i] = std::max(-p.proj_clip, std::min(output_state[i], p.proj_clip));
  } else {
    std::copy_n(hidden, out_n, output_state);
  }
  std::copy_n(output_state, out_n, output);
}

}  // namespace lstm_hybrid_internal

using LstmHybridOps = lstm_hybrid_internal::LstmHybridOps;

// The whole sequence, laid out and stepped as UnidirectionalSequenceLstmInteger.
template <class Ops = LstmFloatOps>
void UnidirectionalSequenceLstmFloat(const LstmFloatParams& p, const LstmShape& shape,
                                     const float* input, float* output_state, float* cell_state,
                                     float* output, const LstmFloatScratch& scratch,
                                     const Ops& ops = Ops()) {
  const int n_input = shape.n_input, n_output = shape.n_output, n_cell = shape.n_cell;
  if (shape.time_major) {
    const size_t input_step = static_cast<size_t>(shape.n_batch) * n_input;
    const size_t output_step = static_cast<size_t>(shape.n_batch) * n_output;
    for (int t = 0; t < shape.n_time; ++t)
      lstm_float_internal::StepFloat(p, shape.n_batch, n_input, n_cell, n_output,
                                     input + t * input_step, output_state, cell_state,
                                     output + t * output_step, scratch, ops);
  } else {
    for (int b = 0; b < shape.n_batch; ++b) {
      for (int t = 0; t < shape.n_time; ++t) {
        const size_t row = static_cast<size_t>(b) * shape.n_time + t;
        lstm_float_internal::StepFloat(p, 1, n_input, n_cell, n_output, input + row * n_input,
                                       output_state + static_cast<size_t>(b) * n_output,
                                       cell_state + static_cast<size_t>(b) * n_cell,
                                       output + row * n_output, scratch, ops);
      }
    }
  }
}

template <class Ops = LstmHybridOps>
void UnidirectionalSequenceLstmHybrid(const LstmHybridParams& p, const LstmShape& shape,
                                      const float* input, float* output_state, float* cell_state,
                                      float* output, const LstmHybridScratch& scratch,
                                      const Ops& ops = Ops()) {
  const int n_input = shape.n_input, n_output = shape.n_output, n_cell = shape.n_cell;
  if (shape.time_major) {
    const size_t input_step = static_cast<size_t>(shape.n_batch) * n_input;
    const size_t output_step = static_cast<size_t>(shape.n_batch) * n_output;
    for (int t = 0; t < shape.n_time; ++t)
      lstm_hybrid_internal::StepHybrid(p, shape.n_batch, n_input, n_cell, n_output,
                                       input + t * input_step, output_state, cell_state,
                                       output + t * output_step, scratch, ops);
  } else {
    for (int b = 0; b < shape.n_batch; ++b) {
      for (int t = 0; t < shape.n_time; ++t) {
        const size_t row = static_cast<size_t>(b) * shape.n_time + t;
        lstm_hybrid_internal::StepHybrid(p, 1, n_input, n_cell, n_output,
                                         input + row * n_input,
                                         output_state + static_cast<size_t>(b) * n_output,
                                         cell_state + static_cast<size_t>(b) * n_cell,
                                         output + row * n_output, scratch, ops);
      }
    }
  }
}

// One direction of BIDIRECTIONAL_SEQUENCE_LSTM (TFLite's EvalFloat with
// forward_sequence, output_offset and output_batch_leading_dim): time runs
// backwards when !forward, and each step's [rows, n_output] result is written
// at column `output_offset` of output rows `output_stride` wide. `step_out`
// holds n_batch * n_output floats.
template <class Ops = LstmFloatOps>
void SequenceLstmFloatDirection(const LstmFloatParams& p, const LstmShape& shape, bool forward,
                                const float* input, float* output_state, float* cell_state,
                                float* output, int output_offset, int output_stride,
                                float* step_out, const LstmFloatScratch& scratch,
                                const Ops& ops = Ops()) {
  const int n_input = shape.n_input, n_output = shape.n_output, n_cell = shape.n_cell;
  auto scatter = [&](int rows, float* out_row0) {
    for (int r = 0; r < rows; ++r)
      std::copy_n(step_out + static_cast<size_t>(r) * n_output, n_output,
                  out_row0 + static_cast<size_t>(r) * output_stride + output_offset);
  };
  if (shape.time_major) {
    for (int i = 0; i < shape.n_time; ++i) {
      const int t = forward ? i : shape.n_time - 1 - i;
      const size_t row0 = static_cast<size_t>(t) * shape.n_batch;
      lstm_float_internal::StepFloat(p, shape.n_batch, n_input, n_cell, n_output,
                                     input + row0 * n_input, output_state, cell_state, step_out,
                                     scratch, ops);
      scatter(shape.n_batch, output + row0 * output_stride);
    }
  } else {
    for (int b = 0; b < shape.n_batch; ++b) {
      for (int i = 0; i < shape.n_time; ++i) {
        const int t = forward ? i : shape.n_time - 1 - i;
        const size_t row = static_cast<size_t>(b) * shape.n_time + t;
        lstm_float_internal::StepFloat(p, 1, n_input, n_cell, n_output, input + row * n_input,
                                       output_state + static_cast<size_t>(b) * n_output,
                                       cell_state + static_cast<size_t>(b) * n_cell, step_out,
                                       scratch, ops);
        scatter(1, output + row * output_stride);
      }
    }
  }
}

}  // namespace delegato::reference
