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

inline void Gate(const LstmFloatGate& g, LstmActivation act, const float* input,
                 const float* output_state, const float* cell_state, int n_batch, int n_input,
                 int n_output, int n_cell, float* gate) {
  const int n = n_batch * n_cell;
  if (g.layer_norm_weights != nullptr) {
    std::fill_n(gate, n, 0.0f);
  } else {
    for (int b = 0; b < n_batch; ++b) std::copy_n(g.bias, n_cell, gate + b * n_cell);
  }
  MatVecAccumulate(g.input_weights, n_cell, n_input, input, n_batch, gate);
  MatVecAccumulate(g.recurrent_weights, n_cell, n_output, output_state, n_batch, gate);
  if (g.peephole_weights != nullptr) {
    for (int b = 0; b < n_batch; ++b)
      for (int i = 0; i < n_cell; ++i)
        gate[b * n_cell + i] += g.peephole_weights[i] * cell_state[b * n_cell + i];
  }
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
  for (int i = 0; i < n; ++i) gate[i] = Activate(act, gate[i]);
}

inline void StepFloat(const LstmFloatParams& p, int n_batch, int n_input, int n_cell,
                      int n_output, const float* input, float* output_state, float* cell_state,
                      float* output, const LstmFloatScratch& s) {
  const int n = n_batch * n_cell;
  if (!p.use_cifg)
    Gate(p.input_gate, LstmActivation::kSigmoid, input, output_state, cell_state, n_batch,
         n_input, n_output, n_cell, s.input_gate);
  Gate(p.forget_gate, LstmActivation::kSigmoid, input, output_state, cell_state, n_batch,
       n_input, n_output, n_cell, s.forget_gate);
  LstmFloatGate cell_gate = p.cell_gate;
  cell_gate.peephole_weights = nullptr;  // the cell gate has no peephole
  Gate(cell_gate, p.activation, input, output_state, cell_state, n_batch, n_input, n_output,
       n_cell, s.cell_gate);

  for (int i = 0; i < n; ++i) cell_state[i] = s.forget_gate[i] * cell_state[i];
  for (int i = 0; i < n; ++i) {
    const float input_gate = p.use_cifg ? 1.0f - s.forget_gate[i] : s.input_gate[i];
    cell_state[i] += s.cell_gate[i] * input_gate;
  }
  if (p.cell_clip > 0.0f)
    for (int i = 0; i < n; ++i) cell_state[i] = std::max(-p.cell_clip, std::min(cell_state[i], p.cell_clip));

  Gate(p.output_gate, LstmActivation::kSigmoid, input, output_state, cell_state, n_batch,
       n_input, n_output, n_cell, s.output_gate);

  // hidden = output .* act(c), in the cell gate's buffer (free by now).
  float* hidden = s.cell_gate;
  for (int i = 0; i < n; ++i) hidden[i] = Activate(p.activation, cell_state[i]);
  for (int i = 0; i < n; ++i) hidden[i] = s.output_gate[i] * hidden[i];
  const size_t out_n = static_cast<size_t>(n_batch) * n_output;
  if (p.projection_weights != nullptr) {
    for (int b = 0; b < n_batch; ++b) {
      if (p.projection_bias != nullptr)
        std::copy_n(p.projection_bias, n_output, output_state + b * n_output);
      else
        std::fill_n(output_state + b * n_output, n_output, 0.0f);
    }
    MatVecAccumulate(p.projection_weights, n_output, n_cell, hidden, n_batch, output_state);
    if (p.proj_clip > 0.0f)
      for (size_t i = 0; i < out_n; ++i)
        output_state[i] = std::max(-p.proj_clip, std::min(output_state[i], p.proj_clip));
  } else {
    std::copy_n(hidden, out_n, output_state);
  }
  std::copy_n(output_state, out_n, output);
}

}  // namespace lstm_float_internal

// The whole sequence, laid out and stepped as UnidirectionalSequenceLstmInteger.
inline void UnidirectionalSequenceLstmFloat(const LstmFloatParams& p, const LstmShape& shape,
                                            const float* input, float* output_state,
                                            float* cell_state, float* output,
                                            const LstmFloatScratch& scratch) {
  const int n_input = shape.n_input, n_output = shape.n_output, n_cell = shape.n_cell;
  if (shape.time_major) {
    const size_t input_step = static_cast<size_t>(shape.n_batch) * n_input;
    const size_t output_step = static_cast<size_t>(shape.n_batch) * n_output;
    for (int t = 0; t < shape.n_time; ++t)
      lstm_float_internal::StepFloat(p, shape.n_batch, n_input, n_cell, n_output,
                                     input + t * input_step, output_state, cell_state,
                                     output + t * output_step, scratch);
  } else {
    for (int b = 0; b < shape.n_batch; ++b) {
      for (int t = 0; t < shape.n_time; ++t) {
        const size_t row = static_cast<size_t>(b) * shape.n_time + t;
        lstm_float_internal::StepFloat(p, 1, n_input, n_cell, n_output, input + row * n_input,
                                       output_state + static_cast<size_t>(b) * n_output,
                                       cell_state + static_cast<size_t>(b) * n_cell,
                                       output + row * n_output, scratch);
      }
    }
  }
}

}  // namespace delegato::reference
