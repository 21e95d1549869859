// Basic RNN cell, TFLite's RnnBatchStep: for every batch row,
//   output = activation(bias + input_weights * input + recurrent_weights * hidden)
//   hidden = output
// in float (each weight row's dot product summed in its own float, added to
// the bias in order: input product, then recurrent product), or hybrid: int8
// weights with per-tensor scales; the input rows and the hidden-state rows are
// quantized to int8 on the fly (symmetric, or asymmetric with row sums
// correcting the zero point) and the int32 products scaled back in float. An
// all-zero input (or hidden state) skips its product, as TFLite does.
//
// Shapes: input [batch, input_size], input_weights [units, input_size],
// recurrent_weights [units, units], bias [units], hidden [batch, units],
// output [batch, units].
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/reference/hybrid.h"
#include "kernels/reference/lstm_float.h"

namespace delegato::reference {

struct RnnShape {
  int32_t batch = 0;
  int32_t input_size = 0;
  int32_t units = 0;
};

struct RnnFloatParams {
  LstmActivation activation = LstmActivation::kNone;
  const float* input_weights = nullptr;
  const float* recurrent_weights = nullptr;
  const float* bias = nullptr;
};

namespace rnn_internal {

inline void BiasAssign(const float* bias, int32_t batch, int32_t units, float* out) {
  for (int32_t b = 0; b < batch; ++b)
    std::copy(bias, bias + units, out + static_cast<int64_t>(b) * units);
}

inline void ActivateAndCopy(LstmActivation act, int32_t n, float* out, float* hidden) {
  for (int32_t i = 0; i < n; ++i) out[i] = lstm_float_internal::Activate(act, out[i]);
  std::copy(out, out + n, hidden);
}

}  // namespace rnn_internal

// One step over `s.batch` rows; `hidden` is updated in place.
inline void RnnStepFloat(const RnnShape& s, const RnnFloatParams& p, const float* input,
                         float* hidden, float* output) {
  rnn_internal::BiasAssign(p.bias, s.batch, s.units, output);
  lstm_float_internal::MatVecAccumulate(p.input_weights, s.units, s.input_size, input, s.batch,
                                        output);
  lstm_float_internal::MatVecAccumulate(p.recurrent_weights, s.units, s.units, hidden, s.batch,
                                        output);
  rnn_internal::ActivateAndCopy(p.activation, s.batch * s.units, output, hidden);
}

struct RnnHybridParams {
  LstmActivation activation = LstmActivation::kNone;
  bool asymmetric = false;
  const int8_t* input_weights = nullptr;
  float input_scale = 1.0f;
  const int32_t* input_row_sums = nullptr;  // units values, used when asymmetric
  const int8_t* recurrent_weights = nullptr;
  float recurrent_scale = 1.0f;
  const int32_t* recurrent_row_sums = nullptr;
  const float* bias = nullptr;
};

// Scratch for one step of `batch` rows: quantized input (batch * input_size),
// quantized hidden (batch * units), row scales and zero points (batch each).
struct RnnHybridScratch {
  int8_t* quantized_input = nullptr;
  int8_t* quantized_hidden = nullptr;
  float* scales = nullptr;
  int32_t* zero_points = nullptr;
};

inline void RnnStepHybrid(const RnnShape& s, const RnnHybridParams& p, const RnnHybridScratch& t,
                          const float* input, float* hidden, float* output) {
  rnn_internal::BiasAssign(p.bias, s.batch, s.units, output);
  if (!lstm_hybrid_internal::AllZero(input, s.batch * s.input_size)) {
    BatchQuantizeRows(input, s.batch, s.input_size, p.asymmetric, t.quantized_input, t.scales,
                      t.zero_points);
    lstm_hybrid_internal::MatVecAccumulate(p.input_weights, p.input_scale, p.input_row_sums,
                                           s.units, s.input_size, t.quantized_input, t.scales,
                                           t.zero_points, p.asymmetric, s.batch, output);
  }
  if (!lstm_hybrid_internal::AllZero(hidden, s.batch * s.units)) {
    BatchQuantizeRows(hidden, s.batch, s.units, p.asymmetric, t.quantized_hidden, t.scales,
                      t.zero_points);
    lstm_hybrid_internal::MatVecAccumulate(p.recurrent_weights, p.recurrent_scale,
                                           p.recurrent_row_sums, s.units, s.units,
                                           t.quantized_hidden, t.scales, t.zero_points,
                                           p.asymmetric, s.batch, output);
  }
  rnn_internal::ActivateAndCopy(p.activation, s.batch * s.units, output, hidden);
}

// UNIDIRECTIONAL_SEQUENCE_RNN: `step(rows, input, hidden, output)` runs the
// cell on `rows` consecutive batch rows. Time-major input [time, batch, in]
// steps all batch rows at once; batch-major [batch, time, in] runs each batch
// row through its whole sequence, one row at a time (TFLite's order).
template <class Step>
void RnnSequence(const RnnShape& s, int32_t time, bool time_major, const float* input,
                 float* hidden, float* output, Step step) {
  if (time_major) {
    for (int32_t t = 0; t < time; ++t)
      step(s.batch, input + static_cast<int64_t>(t) * s.batch * s.input_size, hidden,
           output + static_cast<int64_t>(t) * s.batch * s.units);
    return;
  }
  for (int32_t b = 0; b < s.batch; ++b)
    for (int32_t t = 0; t < time; ++t)
      step(1, input + (static_cast<int64_t>(b) * time + t) * s.input_size,
           hidden + static_cast<int64_t>(b) * s.units,
           output + (static_cast<int64_t>(b) * time + t) * s.units);
}

// One direction of BIDIRECTIONAL_SEQUENCE_RNN: as RnnSequence, time running
// backwards when !forward, each step's [rows, units] result (computed into
// `step_out`) written at column `output_offset` of output rows
// `output_stride` wide.
template <class Step>
void RnnSequenceDirection(const RnnShape& s, int32_t time, bool time_major, bool forward,
                          const float* input, float* hidden, float* output,
                          int32_t output_offset, int32_t output_stride, float* step_out,
                          Step step) {
  auto scatter = [&](int32_t rows, float* out_row0) {
    for (int32_t r = 0; r < rows; ++r)
      std::copy_n(step_out + static_cast<int64_t>(r) * s.units, s.units,
                  out_row0 + static_cast<int64_t>(r) * output_stride + output_offset);
  };
  if (time_major) {
    for (int32_t i = 0; i < time; ++i) {
      const int32_t t = forward ? i : time - 1 - i;
      const int64_t row0 = static_cast<int64_t>(t) * s.batch;
      step(s.batch, input + row0 * s.input_size, hidden, step_out);
      scatter(s.batch, output + row0 * output_stride);
    }
    return;
  }
  for (int32_t b = 0; b < s.batch; ++b)
    for (int32_t i = 0; i < time; ++i) {
      const int32_t t = forward ? i : time - 1 - i;
      const int64_t row = static_cast<int64_t>(b) * time + t;
      step(1, input + row * s.input_size, hidden + static_cast<int64_t>(b) * s.units, step_out);
      scatter(1, output + row * output_stride);
    }
}

}  // namespace delegato::reference
