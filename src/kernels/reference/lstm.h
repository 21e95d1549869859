// UNIDIRECTIONAL_SEQUENCE_LSTM, full integer ("8x8->16"): int8 input, weights
// and hidden state, int16 cell state and gates, int32 biases, as TFLite's
// integer LSTM computes it. Per time step and batch row:
//   gate_g   = act_g(W_g x + R_g h + P_g .* c + b_g)   g in {input, forget, cell, output}
//              (each matmul requantized to Q3.12 and added with int16 saturation;
//               optional layer normalization; act = sigmoid, tanh for the cell gate)
//   c        = clip(forget .* c + input .* cell)        (input = 1 - forget with CIFG)
//   h        = requant(output .* tanh(c))               (optionally projected: W_p h)
// Zero points of x and h are folded into the matmul biases ahead of time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/fixed_point.h"
#include "kernels/quantization.h"

namespace delegato::reference {

struct LstmShape {
  int n_batch = 0;
  int n_time = 0;
  int n_input = 0;
  int n_cell = 0;
  int n_output = 0;
  bool time_major = false;
};

// One gate's operands. Optional parts are null.
struct LstmIntegerGate {
  const int8_t* input_weights = nullptr;  // [n_cell, n_input]
  const int32_t* input_bias = nullptr;    // [n_cell] effective (zero point folded in)
  int32_t input_multiplier = 0;
  int input_shift = 0;
  const int8_t* recurrent_weights = nullptr;  // [n_cell, n_output]
  const int32_t* recurrent_bias = nullptr;    // [n_cell] effective
  int32_t recurrent_multiplier = 0;
  int recurrent_shift = 0;
  const int16_t* peephole_weights = nullptr;  // [n_cell], optional
  int32_t peephole_multiplier = 0;
  int peephole_shift = 0;
  const int16_t* layer_norm_weights = nullptr;  // [n_cell], optional
  const int32_t* layer_norm_bias = nullptr;     // the gate bias, applied after normalization
  int32_t layer_norm_multiplier = 0;
  int layer_norm_shift = 0;
  int32_t variance_guard = 1;
};

struct LstmIntegerParams {
  LstmIntegerGate input_gate;  // unused with CIFG
  LstmIntegerGate forget_gate;
  LstmIntegerGate cell_gate;
  LstmIntegerGate output_gate;
  bool use_cifg = false;
  int cell_scale_log2 = -15;  // cell state scale is 2^cell_scale_log2, <= -9
  int16_t cell_clip = 0;      // 0 = no clipping
  int8_t projection_clip = 0;
  int32_t hidden_multiplier = 0;  // output_gate .* tanh(c) (Q0.15 x Q0.15) to the hidden scale
  int hidden_shift = 0;
  int32_t hidden_zero_point = 0;
  const int8_t* projection_weights = nullptr;  // [n_output, n_cell], optional
  const int32_t* projection_bias = nullptr;    // [n_output] effective
  int32_t projection_multiplier = 0;
  int projection_shift = 0;
  int32_t output_state_zero_point = 0;
};

// Scratch for one step over n_batch rows: each array holds n_batch * n_cell.
struct LstmIntegerScratch {
  int16_t* input_gate = nullptr;
  int16_t* forget_gate = nullptr;
  int16_t* cell_gate = nullptr;
  int16_t* output_gate = nullptr;
  int8_t* hidden = nullptr;  // used with projection
};

namespace lstm_internal {

inline int16_t SaturateToInt16(int32_t x) {
  return static_cast<int16_t>(std::clamp<int32_t>(x, std::numeric_limits<int16_t>::min(),
                                                  std::numeric_limits<int16_t>::max()));
}

// output[b, r] = clamp(requant(bias[r] + sum_c x[b, c] w[r, c]) + zero_point + output[b, r]).
// Accumulates onto what output already holds, saturating to T.
template <class T>
void MatMulRequantAccumulate(const int8_t* x, const int32_t* bias, const int8_t* weights,
                             int32_t multiplier, int shift, int n_batch, int n_in, int n_out,
                             int32_t zero_point, T* output) {
  for (int b = 0; b < n_batch; ++b) {
    const int8_t* x_row = x + static_cast<size_t>(b) * n_in;
    for (int r = 0; r < n_out; ++r) {
      const int8_t* w_row = weights + static_cast<size_t>(r) * n_in;
      int32_t acc = bias[r];
      for (int c = 0; c < n_in; ++c)
        acc = fixed_point::WrappingAdd(acc, int32_t{x_row[c]} * int32_t{w_row[c]});
      acc = quant::MultiplyByQuantizedMultiplier(acc, multiplier, shift);
      T& out = output[static_cast<size_t>(b) * n_out + r];
      acc = fixed_point::WrappingAdd(fixed_point::WrappingAdd(acc, zero_point), int32_t{out});
      out = static_cast<T>(
          std::clamp<int32_t>(acc, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
    }
  }
}

// Integer layer normalization of each row of n rows x n_cell values (Q3.12 in
// and out): mean and variance in fixed point with 10 extra fractional bits.
inline void LayerNorm(const LstmIntegerGate& g, int n_batch, int n_cell, int16_t* gate) {
  constexpr int64_t kTwoToPower20 = int64_t{1} << 20;
  for (int b = 0; b < n_batch; ++b) {
    int16_t* row = gate + static_cast<size_t>(b) * n_cell;
    int64_t sum = 0;
    int64_t sum_sq = 0;
    for (int j = 0; j < n_cell; ++j) {
      const int32_t v = row[j];
      sum += v;
      sum_sq += v * v;
    }
    const int32_t mean = static_cast<int32_t>(sum * 1024 / n_cell);
    const int32_t reciprocal_n = static_cast<int32_t>(kTwoToPower20 / n_cell);
    const int64_t variance = sum_sq * reciprocal_n - int64_t{mean} * int64_t{mean};
    int32_t variance_q = static_cast<int32_t>(variance / kTwoToPower20);
    if (variance_q < 1) variance_q = g.variance_guard;
    int32_t inv_stddev_multiplier = 0;
    int inv_stddev_shift = 0;
    fixed_point::GetInvSqrtQuantizedMultiplierExp(variance_q, -1, &inv_stddev_multiplier,
                                                  &inv_stddev_shift);
    for (int j = 0; j < n_cell; ++j) {
      const int32_t shifted =
          fixed_point::WrappingSub(fixed_point::WrappingMul(1024, row[j]), mean);
      const int32_t rescaled =
          quant::MultiplyByQuantizedMultiplier(shifted, inv_stddev_multiplier, inv_stddev_shift);
      // 32-bit product and sum (wrapping), widened afterwards.
      const int64_t weighted = fixed_point::WrappingAdd(
          fixed_point::WrappingMul(rescaled, g.layer_norm_weights[j]), g.layer_norm_bias[j]);
      const int32_t unscaled =
          static_cast<int32_t>((weighted > 0 ? weighted + 512 : weighted - 512) / 1024);
      row[j] = SaturateToInt16(quant::MultiplyByQuantizedMultiplier(
          unscaled, g.layer_norm_multiplier, g.layer_norm_shift + 12));
    }
  }
}

template <int IntegerBits>
void TanhQ(const int16_t* in, int n, int16_t* out) {
  for (int i = 0; i < n; ++i)
    out[i] = fixed_point::Tanh(fixed_point::FixedPoint16<IntegerBits>::FromRaw(in[i])).raw;
}

// tanh of values with a runtime number of integer bits in [0, 6].
inline void TanhQ(int integer_bits, const int16_t* in, int n, int16_t* out) {
  switch (integer_bits) {
    case 0:
      TanhQ<0>(in, n, out);
      break;
    case 1:
      TanhQ<1>(in, n, out);
      break;
    case 2:
      TanhQ<2>(in, n, out);
      break;
    case 3:
      TanhQ<3>(in, n, out);
      break;
    case 4:
      TanhQ<4>(in, n, out);
      break;
    case 5:
      TanhQ<5>(in, n, out);
      break;
    case 6:
      TanhQ<6>(in, n, out);
      break;
    default:
      break;  // excluded by Prepare
  }
}

// The integer step's matrix products and activations as the reference
// computes them. The steps below take them as a parameter:
// kernels/optimized/lstm.h passes vector versions with the same results.
struct LstmIntegerOps {
  // MatMulRequantAccumulate for int16 (gates) and int8 (projection) outputs.
  template <class T>
  void MatMulRequant(const int8_t* x, const int32_t* bias, const int8_t* weights,
                     int32_t multiplier, int shift, int n_batch, int n_in, int n_out,
                     int32_t zero_point, T* output) const {
    MatMulRequantAccumulate(x, bias, weights, multiplier, shift, n_batch, n_in, n_out, zero_point,
                            output);
  }
  // gate[i] = logistic(gate[i]), Q3.12 in, Q0.15 out.
  void Sigmoid(int16_t* gate, int n) const {
    for (int i = 0; i < n; ++i)
      gate[i] = fixed_point::Logistic(fixed_point::FixedPoint16<3>::FromRaw(gate[i])).raw;
  }
  // out[i] = tanh(in[i]), in with `integer_bits` in [0, 6], out Q0.15.
  void Tanh(int integer_bits, const int16_t* in, int n, int16_t* out) const {
    TanhQ(integer_bits, in, n, out);
  }
};

// One gate for n_batch rows; the result (Q0.15) overwrites gate.
template <class Ops>
void IntegerGate(const LstmIntegerGate& g, bool is_cell_gate, const int8_t* input,
                 const int8_t* output_state, const int16_t* cell_state, int n_batch, int n_input,
                 int n_output, int n_cell, int16_t* gate, const Ops& ops) {
  const int n = n_batch * n_cell;
  std::fill_n(gate, n, int16_t{0});
  ops.MatMulRequant(input, g.input_bias, g.input_weights, g.input_multiplier, g.input_shift,
                    n_batch, n_input, n_cell, 0, gate);
  ops.MatMulRequant(output_state, g.recurrent_bias, g.recurrent_weights, g.recurrent_multiplier,
                    g.recurrent_shift, n_batch, n_output, n_cell, 0, gate);
  if (g.peephole_weights != nullptr) {
    // TFLite walks the peephole vector with a stride of n_output (equal to n_cell
    // unless there is a projection); reproduced as is, Prepare keeps it in bounds.
    const int16_t* c = cell_state;
    int16_t* out = gate;
    for (int b = 0; b < n_batch; ++b) {
      for (int v = 0; v < n_output; ++v) {
        const int32_t product =
            quant::MultiplyByQuantizedMultiplier(int32_t{g.peephole_weights[v]} * int32_t{*c++},
                                                 g.peephole_multiplier, g.peephole_shift);
        *out = SaturateToInt16(product + *out);
        ++out;
      }
    }
  }
  if (g.layer_norm_weights != nullptr) LayerNorm(g, n_batch, n_cell, gate);
  if (is_cell_gate) {
    ops.Tanh(3, gate, n, gate);
  } else {
    ops.Sigmoid(gate, n);
  }
}

inline int16_t RoundingShiftedProduct(int16_t a, int16_t b, int shift) {
  return static_cast<int16_t>(quant::RoundingDivideByPOT(int32_t{a} * int32_t{b}, shift));
}

// One time step for n_batch rows; updates output_state and cell_state, and
// copies the new output state to output.
template <class Ops>
void LstmStepInteger(const LstmIntegerParams& p, int n_batch, int n_input, int n_cell,
                     int n_output, const int8_t* input, int8_t* output_state, int16_t* cell_state,
                     int8_t* output, const LstmIntegerScratch& s, const Ops& ops) {
  const int n = n_batch * n_cell;
  if (!p.use_cifg)
    IntegerGate(p.input_gate, false, input, output_state, cell_state, n_batch, n_input, n_output,
                n_cell, s.input_gate, ops);
  IntegerGate(p.forget_gate, false, input, output_state, cell_state, n_batch, n_input, n_output,
              n_cell, s.forget_gate, ops);
  IntegerGate(p.cell_gate, true, input, output_state, cell_state, n_batch, n_input, n_output,
              n_cell, s.cell_gate, ops);

  // c = forget .* c + input .* cell_gate, in the cell state's Q format.
  const int input_times_cell_shift = 30 + p.cell_scale_log2;
  for (int i = 0; i < n; ++i) {
    const int16_t kept = RoundingShiftedProduct(s.forget_gate[i], cell_state[i], 15);
    const int16_t input_gate =
        p.use_cifg ? static_cast<int16_t>(32767 - s.forget_gate[i]) : s.input_gate[i];
    const int16_t added =
        RoundingShiftedProduct(input_gate, s.cell_gate[i], input_times_cell_shift);
    int16_t c = SaturateToInt16(int32_t{kept} + int32_t{added});
    if (p.cell_clip > 0)
      c = std::clamp<int16_t>(c, static_cast<int16_t>(-p.cell_clip), p.cell_clip);
    cell_state[i] = c;
  }

  // The output gate's peephole sees the updated cell state.
  IntegerGate(p.output_gate, false, input, output_state, cell_state, n_batch, n_input, n_output,
              n_cell, s.output_gate, ops);

  // tanh(c) reuses the input gate's buffer, free by now. LiteRT's integer
  // LSTM has tanh for 0..6 integer bits only: with a cell state scale below
  // 2^-15 it skips it, and the buffer's input gate stands in for tanh(c).
  // Reproduced as is (Prepare refuses that scale with CIFG).
  int16_t* tanh_cell = s.input_gate;
  if (15 + p.cell_scale_log2 >= 0) ops.Tanh(15 + p.cell_scale_log2, cell_state, n, tanh_cell);
  auto hidden_value = [&](int i, int32_t zero_point) {
    int32_t v = int32_t{s.output_gate[i]} * int32_t{tanh_cell[i]};
    v = quant::MultiplyByQuantizedMultiplier(v, p.hidden_multiplier, p.hidden_shift) + zero_point;
    return static_cast<int8_t>(std::clamp<int32_t>(v, -128, 127));
  };
  if (p.projection_weights != nullptr) {
    // TFLite subtracts the hidden zero point here and folds +zero_point * row
    // sums into the projection bias; kept as is for bit-exactness.
    for (int i = 0; i < n; ++i) s.hidden[i] = hidden_value(i, -p.hidden_zero_point);
    std::fill_n(output_state, static_cast<size_t>(n_batch) * n_output, int8_t{0});
    ops.MatMulRequant(s.hidden, p.projection_bias, p.projection_weights, p.projection_multiplier,
                      p.projection_shift, n_batch, n_cell, n_output, p.output_state_zero_point,
                      output_state);
    if (p.projection_clip > 0) {
      for (int i = 0; i < n_batch * n_output; ++i)
        output_state[i] = std::clamp<int8_t>(
            output_state[i], static_cast<int8_t>(-p.projection_clip), p.projection_clip);
    }
  } else {
    for (int i = 0; i < n; ++i) output_state[i] = hidden_value(i, p.hidden_zero_point);
  }
  std::copy_n(output_state, static_cast<size_t>(n_batch) * n_output, output);
}

}  // namespace lstm_internal

using LstmIntegerOps = lstm_internal::LstmIntegerOps;

// The whole sequence. input: [time, batch, n_input] when time_major, else
// [batch, time, n_input]; output likewise with n_output. output_state
// [n_batch, n_output] and cell_state [n_batch, n_cell] carry over between calls.
// Time-major runs all batch rows per step; batch-major runs one row at a time,
// as TFLite does (the two orders differ only through the peephole stride).
template <class Ops = LstmIntegerOps>
void UnidirectionalSequenceLstmInteger(const LstmIntegerParams& p, const LstmShape& shape,
                                       const int8_t* input, int8_t* output_state,
                                       int16_t* cell_state, int8_t* output,
                                       const LstmIntegerScratch& scratch, const Ops& ops = Ops()) {
  const int n_input = shape.n_input;
  const int n_output = shape.n_output;
  const int n_cell = shape.n_cell;
  if (shape.time_major) {
    const size_t input_step = static_cast<size_t>(shape.n_batch) * n_input;
    const size_t output_step = static_cast<size_t>(shape.n_batch) * n_output;
    for (int t = 0; t < shape.n_time; ++t) {
      lstm_internal::LstmStepInteger(p, shape.n_batch, n_input, n_cell, n_output,
                                     input + t * input_step, output_state, cell_state,
                                     output + t * output_step, scratch, ops);
    }
  } else {
    for (int b = 0; b < shape.n_batch; ++b) {
      for (int t = 0; t < shape.n_time; ++t) {
        const size_t row = static_cast<size_t>(b) * shape.n_time + t;
        lstm_internal::LstmStepInteger(p, 1, n_input, n_cell, n_output, input + row * n_input,
                                       output_state + static_cast<size_t>(b) * n_output,
                                       cell_state + static_cast<size_t>(b) * n_cell,
                                       output + row * n_output, scratch, ops);
      }
    }
  }
}

}  // namespace delegato::reference
