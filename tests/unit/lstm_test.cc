// UNIDIRECTIONAL_SEQUENCE_LSTM, full integer (int8 activations, int16 cell
// state): expected outputs come from LiteRT's reference kernels on the same
// models; state carries across invocations; malformed nodes are rejected.
// Float32: random weights against a double-precision formulation (basic,
// peephole, CIFG + peephole + layer norm + projection + clipping, both
// layouts); hybrid (int8 weights, symmetric and asymmetric inputs) against the
// same formulation on the dequantized weights, loosely. Every case is also
// replayed in LiteRT by test_single_ops.py.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "hybrid_ties.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::OpModel;
using testing::FillTieRows;
using testing::Q;

template <class T>
struct QuantTensor {
  std::vector<T> values;
  float scale = 1.0f;
};

// The LSTM's tensors, in TFLite's input order; absent optional ones are empty.
struct LstmSpec {
  std::vector<int32_t> input_dims;  // [batch, time, n_input] or [time, batch, n_input]
  int batch = 1, n_input = 1, n_cell = 1, n_output = 1;
  float input_scale = 1.0f;
  int32_t input_zp = 0;
  std::optional<QuantTensor<int8_t>> input_to_gate[4];  // input, forget, cell, output
  std::optional<QuantTensor<int8_t>> recurrent_to_gate[4];
  std::optional<QuantTensor<int16_t>> peephole[3];  // input, forget, output
  std::optional<std::vector<int32_t>> gate_bias[4];
  std::optional<QuantTensor<int8_t>> projection_weights;
  std::optional<std::vector<int32_t>> projection_bias;
  std::optional<QuantTensor<int16_t>> layer_norm[4];
  float output_state_scale = 1.0f;
  int32_t output_state_zp = 0;
  float cell_scale = 1.0f / 2048;
  float hidden_scale = 1.0f;
  int32_t hidden_zp = 0;
  float gate_intermediate_scale = 0.0f;  // > 0: quantized gate intermediates (layer norm)
  SequenceLstmParams params;
  int input_count = 24;
  bool states_are_variable = true;
  DataType input_type = DataType::kInt8;
};

void BuildLstm(OpModel& m, const LstmSpec& s) {
  std::vector<int32_t> in(s.input_count, -1);
  in[0] = m.AddInput(s.input_type, s.input_dims, Q(s.input_scale, s.input_zp));
  for (int g = 0; g < 4; ++g) {
    if (const auto& w = s.input_to_gate[g])
      in[1 + g] =
          m.AddConst<int8_t>(DataType::kInt8, {s.n_cell, s.n_input}, w->values, Q(w->scale, 0));
    if (const auto& w = s.recurrent_to_gate[g])
      in[5 + g] =
          m.AddConst<int8_t>(DataType::kInt8, {s.n_cell, s.n_output}, w->values, Q(w->scale, 0));
    if (const auto& b = s.gate_bias[g])
      in[12 + g] = m.AddConst<int32_t>(DataType::kInt32, {s.n_cell}, *b, Q(1.0f, 0));
    if (const auto& ln = s.layer_norm[g])
      in[20 + g] = m.AddConst<int16_t>(DataType::kInt16, {s.n_cell}, ln->values, Q(ln->scale, 0));
  }
  for (int k = 0; k < 3; ++k) {
    if (const auto& p = s.peephole[k])
      in[9 + k] = m.AddConst<int16_t>(DataType::kInt16, {s.n_cell}, p->values, Q(p->scale, 0));
  }
  if (const auto& w = s.projection_weights)
    in[16] = m.AddConst<int8_t>(DataType::kInt8, {s.n_output, s.n_cell}, w->values, Q(w->scale, 0));
  if (const auto& b = s.projection_bias)
    in[17] = m.AddConst<int32_t>(DataType::kInt32, {s.n_output}, *b, Q(1.0f, 0));
  if (s.states_are_variable) {
    in[18] = m.AddTensor(DataType::kInt8, Q(s.output_state_scale, s.output_state_zp),
                         {s.batch, s.n_output});
    in[19] = m.AddTensor(DataType::kInt16, Q(s.cell_scale, 0), {s.batch, s.n_cell});
    m.model().subgraphs[0].tensors[in[18]].is_variable = true;
    m.model().subgraphs[0].tensors[in[19]].is_variable = true;
  } else {
    in[18] = m.AddInput(DataType::kInt8, {s.batch, s.n_output},
                        Q(s.output_state_scale, s.output_state_zp));
    in[19] = m.AddInput(DataType::kInt16, {s.batch, s.n_cell}, Q(s.cell_scale, 0));
  }
  std::vector<int32_t> intermediates;
  for (int g = 0; g < 4; ++g)
    intermediates.push_back(m.AddTensor(
        DataType::kInt16,
        s.gate_intermediate_scale > 0 ? Q(s.gate_intermediate_scale, 0) : Quantization{}, {0}));
  intermediates.push_back(m.AddTensor(DataType::kInt8, Q(s.hidden_scale, s.hidden_zp), {0}));
  const int out = m.AddOutput(DataType::kInt8, Q(s.output_state_scale, s.output_state_zp));
  m.AddOp(BuiltinOp::kUnidirectionalSequenceLstm, in, {out}, s.params, 1);
  m.model().subgraphs[0].operators.back().intermediates = intermediates;
}

// Gates with input gate, no peephole / layer norm / projection; batch-major,
// 20 inputs. Weight scales 0.010..0.013 (input) and 0.020..0.023 (recurrent).
LstmSpec BasicSpec() {
  LstmSpec s;
  s.input_dims = {2, 3, 3};
  s.batch = 2;
  s.n_input = 3;
  s.n_cell = 2;
  s.n_output = 2;
  s.input_scale = 1.0f / 64;
  s.input_zp = 5;
  s.input_to_gate[0] = {{-119, -91, 82, 114, -64, -48}, 0.01f};
  s.input_to_gate[1] = {{-58, 84, -62, -23, 37, 13}, 0.011f};
  s.input_to_gate[2] = {{93, 65, 86, 10, 81, -43}, 0.012f};
  s.input_to_gate[3] = {{-96, -50, -96, -12, 122, -93}, 0.013f};
  s.recurrent_to_gate[0] = {{103, -76, 1, -61}, 0.02f};
  s.recurrent_to_gate[1] = {{-112, -56, 0, -4}, 0.021f};
  s.recurrent_to_gate[2] = {{64, 118, -104, 57}, 0.022f};
  s.recurrent_to_gate[3] = {{108, -57, 58, -87}, 0.023f};
  s.gate_bias[0] = std::vector<int32_t>{-1065, 2820};
  s.gate_bias[1] = std::vector<int32_t>{-473, 96};
  s.gate_bias[2] = std::vector<int32_t>{-1242, -2305};
  s.gate_bias[3] = std::vector<int32_t>{-452, 741};
  s.output_state_scale = 1.0f / 128;
  s.output_state_zp = -3;
  s.cell_scale = 1.0f / 2048;
  s.hidden_scale = 1.0f / 128;
  s.hidden_zp = -3;
  s.params.activation = Activation::kTanh;
  s.input_count = 20;
  return s;
}

// CIFG + peephole + layer norm + projection with bias, cell and projection
// clipping, time-major.
LstmSpec FullSpec() {
  LstmSpec s;
  s.input_dims = {2, 2, 3};  // [time, batch, n_input]
  s.batch = 2;
  s.n_input = 3;
  s.n_cell = 4;
  s.n_output = 3;
  s.input_scale = 1.0f / 64;
  s.input_zp = -2;
  s.input_to_gate[1] = {{-51, -12, -104, -42, 26, 80, 58, 126, -80, 97, -113, 15}, 0.011f};
  s.input_to_gate[2] = {{-57, -50, 16, -61, -89, 64, -17, 46, 43, 114, -20, -71}, 0.012f};
  s.input_to_gate[3] = {{34, 94, 47, -31, -28, -117, -80, -43, -39, 20, 3, 49}, 0.013f};
  s.recurrent_to_gate[1] = {{100, 122, -46, 104, 108, -70, -7, 18, 49, 51, -100, -6}, 0.021f};
  s.recurrent_to_gate[2] = {{-101, -13, 98, 6, 46, 0, 89, 24, 37, -12, -24, 24}, 0.022f};
  s.recurrent_to_gate[3] = {{4, -7, 92, -73, -16, -4, 100, -15, 29, -108, 84, -14}, 0.023f};
  s.peephole[1] = {{-127, 8712, -10549, 17640}, 0.0005f};
  s.peephole[2] = {{1496, -15810, -26168, 72}, 0.0006f};
  s.gate_bias[1] = std::vector<int32_t>{-2769, 133, 1212, 476};
  s.gate_bias[2] = std::vector<int32_t>{-261, -1394, 2387, -1069};
  s.gate_bias[3] = std::vector<int32_t>{2011, -337, -690, 1161};
  s.projection_weights = {{121, -100, 68, 73, -24, -35, -77, 123, -84, -2, -81, 73}, 0.01f};
  s.projection_bias = std::vector<int32_t>{1038, -3418, -3874};
  s.layer_norm[1] = {{28210, 27462, 13055, 4158}, 0.0002f};
  s.layer_norm[2] = {{18101, 16518, 20650, 20704}, 0.0003f};
  s.layer_norm[3] = {{15160, 30777, 27051, 24838}, 0.0004f};
  s.output_state_scale = 0.01f;
  s.output_state_zp = 4;
  s.cell_scale = 1.0f / 4096;
  s.hidden_scale = 1.0f / 64;
  s.hidden_zp = -1;
  s.gate_intermediate_scale = 1.0f / 1024;
  s.params.activation = Activation::kTanh;
  s.params.cell_clip = 2.0f;
  s.params.proj_clip = 0.5f;
  s.params.time_major = true;
  return s;
}

// Each case at 1 and 2 threads with every ISA this CPU runs (the vector
// products of kernels/optimized/lstm.h, or the reference's loops).
class LstmThreads : public ::testing::TestWithParam<std::tuple<int, optimized::Isa>> {
 protected:
  void SetUp() override { isa_.emplace(std::get<1>(GetParam())); }
  int Threads() const { return std::get<0>(GetParam()); }

 private:
  std::optional<optimized::ScopedIsaOverride> isa_;
};

TEST_P(LstmThreads, BasicMatchesReferenceAndCarriesState) {
  OpModel m;
  BuildLstm(m, BasicSpec());
  m.Build(Threads());
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 3, 2));
  m.SetInput<int8_t>(
      0, {103, 28, 81, -124, 2, -80, 68, 91, -82, -109, -16, -77, -5, 33, -104, -103, 45, -90});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int8_t>(0),
              ElementsAreArray<int8_t>({-2, -16, -72, -33, -15, 71, -84, -13, -55, 63, -82, 49}));
  // The second sequence starts from the state the first one left.
  m.SetInput<int8_t>(
      0, {-102, -82, 115, -95, 80, 123, -13, 67, -27, -64, -101, -3, 122, -74, -56, -36, -64, 105});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int8_t>(0),
              ElementsAreArray<int8_t>({-8, -3, 10, 8, 26, 34, -66, -3, -12, 2, -12, -4}));
}

TEST_P(LstmThreads, CifgPeepholeLayerNormProjectionTimeMajor) {
  OpModel m;
  BuildLstm(m, FullSpec());
  m.Build(Threads());
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(2, 2, 3));
  m.SetInput<int8_t>(0, {26, -31, 70, -37, 101, 63, 28, -29, 68, -42, -113, 14});
  m.Invoke();
  // Projection clipping at 0.5 / 0.01 = 50 LSB around the zero point.
  EXPECT_THAT(m.GetOutput<int8_t>(0),
              ElementsAreArray<int8_t>({-22, -8, -11, -29, -50, -50, 14, -49, -50, -50, -50, -46}));
  m.SetInput<int8_t>(0, {-37, -81, 90, -98, 74, 87, 105, -25, -8, 109, -83, -39});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int8_t>(0),
              ElementsAreArray<int8_t>({-30, 0, -3, -15, -50, -50, 26, 25, 3, 50, -31, -50}));
}

// A cell state scale of 2^-16, as the converter picks for small cell
// ranges: LiteRT has no tanh for -1 integer bits and uses the input gate in
// place of tanh(c); the expected outputs are LiteRT's reference kernels'.
TEST_P(LstmThreads, CellScaleBelowTwoToMinus15AsLiteRt) {
  LstmSpec s = BasicSpec();
  s.cell_scale = 1.0f / 65536;
  OpModel m;
  BuildLstm(m, s);
  m.Build(Threads());
  m.SetInput<int8_t>(
      0, {103, 28, 81, -124, 2, -80, 68, 91, -82, -109, -16, -77, -5, 33, -104, -103, 45, -90});
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int8_t>(0),
              ElementsAreArray<int8_t>({-2, 25, 85, 17, 4, 94, 94, 30, 41, 74, 54, 12}));
}


TEST(LstmInt8, InitialOutputStateIsItsZeroPoint) {
  // Input weights and biases zero: each gate sees only R (h - zp). A fresh
  // output state holds its zero point (real 0, as TFLite resets int8
  // variables), so every gate input is 0: the cell gate tanh(0) = 0 leaves
  // c = 0 and h = 0.5 * tanh(0) = 0, the zero point, at every step.
  LstmSpec s = BasicSpec();
  for (int g = 0; g < 4; ++g) {
    s.input_to_gate[g]->values.assign(6, 0);
    s.gate_bias[g] = std::vector<int32_t>{0, 0};
  }
  OpModel m;
  BuildLstm(m, s);
  m.Build();
  m.SetInput<int8_t>(0, std::vector<int8_t>(18, 77));
  m.Invoke();
  EXPECT_THAT(m.GetOutput<int8_t>(0), ::testing::Each(int8_t{-3}));
}

Status TryBuildLstm(const LstmSpec& s) {
  OpModel m;
  BuildLstm(m, s);
  return m.TryBuild();
}

TEST(LstmInt8, RejectsMalformedNodes) {
  {
    LstmSpec s = BasicSpec();
    s.states_are_variable = false;
    Status st = TryBuildLstm(s);
    EXPECT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr("must be a variable tensor"));
  }
  {
    LstmSpec s = BasicSpec();
    s.input_count = 21;
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("expects 20 or 24 inputs"));
  }
  {
    LstmSpec s = BasicSpec();
    s.recurrent_to_gate[0].reset();  // input gate half present
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("both present or both absent"));
  }
  {
    LstmSpec s = BasicSpec();
    s.cell_scale = 0.0003f;  // not a power of two
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("not a power of two"));
  }
  {
    LstmSpec s = BasicSpec();
    s.cell_scale = 1.0f / 256;  // 2^-8: tanh would need 7 integer bits
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("is above 2^-9"));
  }
  {
    LstmSpec s = FullSpec();  // CIFG: no input gate to stand in for tanh(c)
    s.cell_scale = 1.0f / 65536;
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("below 2^-15 in a CIFG LSTM"));
  }
  {
    LstmSpec s = BasicSpec();  // 2^-32: the cell update's shift 30 + log2 would be -2
    s.cell_scale = std::ldexp(1.0f, -32);
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("is below 2^-30"));
  }
  {
    LstmSpec s = BasicSpec();
    s.gate_bias[2] = std::vector<int32_t>{1, 2, 3};  // declared [2]
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("holds 12 bytes, its shape needs 8"));
  }
  {
    LstmSpec s = BasicSpec();
    s.input_dims = {2, 3, 4};  // 4 features, weights built for 3
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("must have shape [2, 4], has [2, 3]"));
  }
  {
    LstmSpec s = BasicSpec();
    s.input_dims = {2, 9};
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("must have rank 3"));
  }
  {
    LstmSpec s = BasicSpec();
    s.params.cell_clip = -1.0f;
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("cell_clip"));
  }
  {
    LstmSpec s = BasicSpec();
    s.input_type = DataType::kInt16;
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("INT8 input and weights expected"));
  }
}

TEST(LstmInt8, RejectsMissingIntermediatesAndUnsupportedTypes) {
  {
    OpModel m;
    BuildLstm(m, BasicSpec());
    m.model().subgraphs[0].operators.back().intermediates.resize(3);
    Status st = m.TryBuild();
    EXPECT_THAT(st.message(), HasSubstr("5 intermediate tensors"));
  }
  {
    OpModel m;
    BuildLstm(m, BasicSpec());
    // The hidden state intermediate without quantization.
    auto& op = m.model().subgraphs[0].operators.back();
    m.model().subgraphs[0].tensors[op.intermediates[4]].quantization = Quantization{};
    EXPECT_THAT(m.TryBuild().message(), HasSubstr("hidden state intermediate"));
  }
  {
    // Float input with int8 weights is a hybrid LSTM, whose states must be float.
    LstmSpec s = BasicSpec();
    s.input_type = DataType::kFloat32;
    EXPECT_THAT(TryBuildLstm(s).message(), HasSubstr("has type INT8, expected FLOAT32"));
  }
}



// ------------------------------------------------------------------ float32

namespace float_lstm {

// A float LSTM with random weights; the expected outputs come from a
// straightforward double-precision formulation, per batch row and time step.
struct FloatSpec {
  int batch = 2, time = 3, n_input = 3, n_cell = 4, n_output = 4;
  bool cifg = false, peephole = false, layer_norm = false, projection = false;
  bool time_major = false;
  float cell_clip = 0, proj_clip = 0;
  bool single_step = false;  // the LSTM op: input [batch, n_input], time must be 1
  bool ties = false;  // hybrid: inputs on exact half quantization steps (hybrid_ties.h)
};

std::vector<int32_t> InputDims(const FloatSpec& s) {
  if (s.single_step) return {s.batch, s.n_input};
  return s.time_major ? std::vector<int32_t>{s.time, s.batch, s.n_input}
                      : std::vector<int32_t>{s.batch, s.time, s.n_input};
}

BuiltinOp OpOf(const FloatSpec& s) {
  return s.single_step ? BuiltinOp::kLstm : BuiltinOp::kUnidirectionalSequenceLstm;
}

struct FloatWeights {
  std::vector<float> w[4], r[4], p[4], ln[4], b[4], proj, proj_bias;
};

FloatWeights RandomWeights(const FloatSpec& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-0.6f, 0.6f);
  auto fill = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  FloatWeights w;
  for (int g = 0; g < 4; ++g) {
    if (g == 0 && s.cifg) continue;
    w.w[g] = fill(size_t(s.n_cell) * s.n_input);
    w.r[g] = fill(size_t(s.n_cell) * s.n_output);
    w.b[g] = fill(s.n_cell);
    if (s.peephole && g != 2) w.p[g] = fill(s.n_cell);
    if (s.layer_norm) w.ln[g] = fill(s.n_cell);
  }
  if (s.projection) {
    w.proj = fill(size_t(s.n_output) * s.n_cell);
    w.proj_bias = fill(s.n_output);
  }
  return w;
}

void BuildFloatLstm(OpModel& m, const FloatSpec& s, const FloatWeights& w) {
  std::vector<int32_t> in(s.layer_norm ? 24 : 20, -1);
  const std::vector<int32_t> dims = InputDims(s);
  in[0] = m.AddInput(DataType::kFloat32, dims);
  for (int g = 0; g < 4; ++g) {
    if (g == 0 && s.cifg) continue;
    in[1 + g] = m.AddConst<float>(DataType::kFloat32, {s.n_cell, s.n_input}, w.w[g]);
    in[5 + g] = m.AddConst<float>(DataType::kFloat32, {s.n_cell, s.n_output}, w.r[g]);
    in[12 + g] = m.AddConst<float>(DataType::kFloat32, {s.n_cell}, w.b[g]);
    if (!w.p[g].empty()) in[g == 0 ? 9 : g == 1 ? 10 : 11] = m.AddConst<float>(DataType::kFloat32, {s.n_cell}, w.p[g]);
    if (s.layer_norm) in[20 + g] = m.AddConst<float>(DataType::kFloat32, {s.n_cell}, w.ln[g]);
  }
  if (s.projection) {
    in[16] = m.AddConst<float>(DataType::kFloat32, {s.n_output, s.n_cell}, w.proj);
    in[17] = m.AddConst<float>(DataType::kFloat32, {s.n_output}, w.proj_bias);
  }
  in[18] = m.AddTensor(DataType::kFloat32, {}, {s.batch, s.n_output});
  in[19] = m.AddTensor(DataType::kFloat32, {}, {s.batch, s.n_cell});
  m.model().subgraphs[0].tensors[in[18]].is_variable = true;
  m.model().subgraphs[0].tensors[in[19]].is_variable = true;
  const int out = m.AddOutput(DataType::kFloat32);
  SequenceLstmParams p;
  p.activation = Activation::kTanh;
  p.cell_clip = s.cell_clip;
  p.proj_clip = s.proj_clip;
  p.time_major = s.time_major;
  m.AddOp(OpOf(s), in, {out}, p, 1);
}

// Runs the sequence from the given states (updated), returns the outputs in
// the input's layout.
std::vector<double> Expected(const FloatSpec& s, const FloatWeights& w,
                             const std::vector<float>& input, std::vector<double>& h,
                             std::vector<double>& c) {
  std::vector<double> out(size_t(s.batch) * s.time * s.n_output);
  auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  for (int b = 0; b < s.batch; ++b) {
    for (int t = 0; t < s.time; ++t) {
      const size_t row = s.time_major ? size_t(t) * s.batch + b : size_t(b) * s.time + t;
      const float* x = input.data() + row * s.n_input;
      double* hb = h.data() + size_t(b) * s.n_output;
      double* cb = c.data() + size_t(b) * s.n_cell;
      std::vector<double> gate[4];
      for (int g = 0; g < 4; ++g) {
        if (g == 0 && s.cifg) continue;
        gate[g].assign(s.n_cell, 0.0);
        for (int i = 0; i < s.n_cell; ++i) {
          double v = s.layer_norm ? 0.0 : w.b[g][i];
          for (int k = 0; k < s.n_input; ++k) v += double(w.w[g][i * s.n_input + k]) * x[k];
          for (int k = 0; k < s.n_output; ++k) v += double(w.r[g][i * s.n_output + k]) * hb[k];
          if (g != 3 && !w.p[g].empty()) v += double(w.p[g][i]) * cb[i];
          gate[g][i] = v;
        }
      }
      auto finish = [&](int g, bool is_cell) {
        if (s.layer_norm) {
          double mean = 0, var = 0;
          for (double v : gate[g]) mean += v;
          mean /= s.n_cell;
          for (double v : gate[g]) var += (v - mean) * (v - mean);
          var /= s.n_cell;
          for (int i = 0; i < s.n_cell; ++i)
            gate[g][i] = (gate[g][i] - mean) / std::sqrt(var + 1e-8) * w.ln[g][i] + w.b[g][i];
        }
        for (double& v : gate[g]) v = is_cell ? std::tanh(v) : sigmoid(v);
      };
      if (!s.cifg) finish(0, false);
      finish(1, false);
      finish(2, true);
      for (int i = 0; i < s.n_cell; ++i) {
        const double ig = s.cifg ? 1.0 - gate[1][i] : gate[0][i];
        cb[i] = gate[1][i] * cb[i] + ig * gate[2][i];
        if (s.cell_clip > 0) cb[i] = std::clamp<double>(cb[i], -s.cell_clip, s.cell_clip);
      }
      // The output gate's peephole sees the new cell state.
      for (int i = 0; i < s.n_cell; ++i)
        if (!w.p[3].empty()) gate[3][i] += double(w.p[3][i]) * cb[i];
      finish(3, false);
      std::vector<double> hidden(s.n_cell);
      for (int i = 0; i < s.n_cell; ++i) hidden[i] = gate[3][i] * std::tanh(cb[i]);
      for (int k = 0; k < s.n_output; ++k) {
        double v = hidden[k < s.n_cell ? k : 0];
        if (s.projection) {
          v = w.proj_bias[k];
          for (int i = 0; i < s.n_cell; ++i) v += double(w.proj[k * s.n_cell + i]) * hidden[i];
          if (s.proj_clip > 0) v = std::clamp<double>(v, -s.proj_clip, s.proj_clip);
        }
        hb[k] = v;
        out[row * s.n_output + k] = v;
      }
    }
  }
  return out;
}

void RunFloat(const FloatSpec& s, int seed, int threads) {
  std::mt19937 rng(seed);
  const FloatWeights w = RandomWeights(s, rng);
  OpModel m;
  BuildFloatLstm(m, s, w);
  m.Build(threads);
  std::vector<double> h(size_t(s.batch) * s.n_output, 0.0), c(size_t(s.batch) * s.n_cell, 0.0);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int invoke = 0; invoke < 2; ++invoke) {  // the second starts from the first's state
    std::vector<float> input(size_t(s.batch) * s.time * s.n_input);
    for (float& v : input) v = dist(rng);
    m.SetInput<float>(0, input);
    m.Invoke();
    const std::vector<float> got = m.GetOutput<float>(0);
    const std::vector<double> expected = Expected(s, w, input, h, c);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], expected[i], 1e-5) << "invoke " << invoke << ", output " << i;
  }
}

// Hybrid: the same weights quantized to int8 per tensor (symmetric); the
// expected outputs use the dequantized weights, so they differ from the
// kernel's by the on-the-fly quantization of the input and output state
// (checked loosely here; test_single_ops.py replays each case in LiteRT).
void RunHybrid(const FloatSpec& s, bool asymmetric, int seed, int threads) {
  std::mt19937 rng(seed);
  FloatWeights w = RandomWeights(s, rng);
  struct QW {
    std::vector<int8_t> q;
    float scale = 1;
  };
  auto quantize = [](std::vector<float>& v) {
    QW r;
    float m = 0;
    for (float x : v) m = std::max(m, std::fabs(x));
    r.scale = m / 127.0f;
    for (float& x : v) {
      const int q = static_cast<int>(std::round(x / r.scale));
      r.q.push_back(static_cast<int8_t>(std::clamp(q, -127, 127)));
      x = r.q.back() * r.scale;  // the reference uses the dequantized value
    }
    return r;
  };
  OpModel m;
  std::vector<int32_t> in(s.layer_norm ? 24 : 20, -1);
  const std::vector<int32_t> dims = InputDims(s);
  in[0] = m.AddInput(DataType::kFloat32, dims);
  for (int g = 0; g < 4; ++g) {
    if (g == 0 && s.cifg) continue;
    QW qw = quantize(w.w[g]), qr = quantize(w.r[g]);
    in[1 + g] = m.AddConst<int8_t>(DataType::kInt8, {s.n_cell, s.n_input}, qw.q, Q(qw.scale, 0));
    in[5 + g] = m.AddConst<int8_t>(DataType::kInt8, {s.n_cell, s.n_output}, qr.q, Q(qr.scale, 0));
    in[12 + g] = m.AddConst<float>(DataType::kFloat32, {s.n_cell}, w.b[g]);
    if (!w.p[g].empty()) {
      QW qp = quantize(w.p[g]);
      in[g == 0 ? 9 : g == 1 ? 10 : 11] =
          m.AddConst<int8_t>(DataType::kInt8, {s.n_cell}, qp.q, Q(qp.scale, 0));
    }
    if (s.layer_norm) in[20 + g] = m.AddConst<float>(DataType::kFloat32, {s.n_cell}, w.ln[g]);
  }
  if (s.projection) {
    QW qp = quantize(w.proj);
    in[16] = m.AddConst<int8_t>(DataType::kInt8, {s.n_output, s.n_cell}, qp.q, Q(qp.scale, 0));
    in[17] = m.AddConst<float>(DataType::kFloat32, {s.n_output}, w.proj_bias);
  }
  in[18] = m.AddTensor(DataType::kFloat32, {}, {s.batch, s.n_output});
  in[19] = m.AddTensor(DataType::kFloat32, {}, {s.batch, s.n_cell});
  m.model().subgraphs[0].tensors[in[18]].is_variable = true;
  m.model().subgraphs[0].tensors[in[19]].is_variable = true;
  const int out = m.AddOutput(DataType::kFloat32);
  SequenceLstmParams p;
  p.activation = Activation::kTanh;
  p.cell_clip = s.cell_clip;
  p.proj_clip = s.proj_clip;
  p.time_major = s.time_major;
  p.asymmetric_quantize_inputs = asymmetric;
  if (s.single_step) {
    m.AddOp(BuiltinOp::kLstm, in, {out}, p, asymmetric ? 4 : 3);
  } else {
    m.AddOp(BuiltinOp::kUnidirectionalSequenceLstm, in, {out}, p, asymmetric ? 3 : 2);
  }
  m.Build(threads);
  std::vector<double> h(size_t(s.batch) * s.n_output, 0.0), c(size_t(s.batch) * s.n_cell, 0.0);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int invoke = 0; invoke < 2; ++invoke) {
    std::vector<float> input(size_t(s.batch) * s.time * s.n_input);
    for (float& v : input) v = dist(rng);
    if (s.ties) FillTieRows(input, static_cast<size_t>(s.n_input), asymmetric);
    m.SetInput<float>(0, input);
    m.Invoke();
    const std::vector<float> got = m.GetOutput<float>(0);
    const std::vector<double> expected = Expected(s, w, input, h, c);
    ASSERT_EQ(got.size(), expected.size());
    // Tie inputs reach 2.5, past the random ones' 1, and carry more error.
    const double tolerance = s.ties ? 0.06 : 0.03;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], expected[i], tolerance) << "invoke " << invoke << ", output " << i;
  }
}

// BIDIRECTIONAL_SEQUENCE_LSTM (float): forward and backward weights from two
// specs sharing batch, time, n_input and layout; the backward expectation runs
// the time-reversed sequence.
void AddDirection(OpModel& m, const FloatSpec& s, const FloatWeights& w, int base,
                  std::vector<int32_t>& in) {
  for (int g = 0; g < 4; ++g) {
    if (g == 0 && s.cifg) continue;
    in[base + 1 + g] = m.AddConst<float>(DataType::kFloat32, {s.n_cell, s.n_input}, w.w[g]);
    in[base + 5 + g] = m.AddConst<float>(DataType::kFloat32, {s.n_cell, s.n_output}, w.r[g]);
    in[base + 12 + g] = m.AddConst<float>(DataType::kFloat32, {s.n_cell}, w.b[g]);
    if (!w.p[g].empty())
      in[base + (g == 0 ? 9 : g == 1 ? 10 : 11)] =
          m.AddConst<float>(DataType::kFloat32, {s.n_cell}, w.p[g]);
  }
  if (s.projection) {
    in[base + 16] = m.AddConst<float>(DataType::kFloat32, {s.n_output, s.n_cell}, w.proj);
    in[base + 17] = m.AddConst<float>(DataType::kFloat32, {s.n_output}, w.proj_bias);
  }
}

std::vector<float> ReverseTime(const FloatSpec& s, const std::vector<float>& x, int width) {
  std::vector<float> y(x.size());
  for (int b = 0; b < s.batch; ++b)
    for (int t = 0; t < s.time; ++t) {
      auto row = [&](int tt) {
        return s.time_major ? size_t(tt) * s.batch + b : size_t(b) * s.time + tt;
      };
      std::copy_n(x.begin() + row(t) * width, width, y.begin() + row(s.time - 1 - t) * width);
    }
  return y;
}

void RunBidirectional(const FloatSpec& fw, const FloatSpec& bw, bool merge, int seed,
                      int threads) {
  std::mt19937 rng(seed);
  const FloatWeights wf = RandomWeights(fw, rng), wb = RandomWeights(bw, rng);
  OpModel m;
  std::vector<int32_t> in(48, -1);
  in[0] = m.AddInput(DataType::kFloat32, InputDims(fw));
  AddDirection(m, fw, wf, 0, in);
  AddDirection(m, bw, wb, 17, in);
  in[35] = m.AddTensor(DataType::kFloat32, {}, {fw.batch, fw.n_output});
  in[36] = m.AddTensor(DataType::kFloat32, {}, {fw.batch, fw.n_cell});
  in[37] = m.AddTensor(DataType::kFloat32, {}, {bw.batch, bw.n_output});
  in[38] = m.AddTensor(DataType::kFloat32, {}, {bw.batch, bw.n_cell});
  for (int i = 35; i <= 38; ++i) m.model().subgraphs[0].tensors[in[i]].is_variable = true;
  std::vector<int32_t> outs = {m.AddOutput(DataType::kFloat32)};
  if (!merge) outs.push_back(m.AddOutput(DataType::kFloat32));
  SequenceLstmParams p;
  p.activation = Activation::kTanh;
  p.cell_clip = fw.cell_clip;
  p.proj_clip = fw.proj_clip;
  p.time_major = fw.time_major;
  p.merge_outputs = merge;
  m.AddOp(BuiltinOp::kBidirectionalSequenceLstm, in, outs, p, 1);
  m.Build(threads);
  std::vector<double> hf(size_t(fw.batch) * fw.n_output, 0.0), cf(size_t(fw.batch) * fw.n_cell, 0.0);
  std::vector<double> hb(size_t(bw.batch) * bw.n_output, 0.0), cb(size_t(bw.batch) * bw.n_cell, 0.0);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const size_t rows = size_t(fw.batch) * fw.time;
  for (int invoke = 0; invoke < 2; ++invoke) {
    std::vector<float> input(rows * fw.n_input);
    for (float& v : input) v = dist(rng);
    m.SetInput<float>(0, input);
    m.Invoke();
    const std::vector<double> ef = Expected(fw, wf, input, hf, cf);
    const std::vector<float> reversed = ReverseTime(fw, input, fw.n_input);
    const std::vector<double> eb_rev = Expected(bw, wb, reversed, hb, cb);
    std::vector<float> eb_rev_f(eb_rev.begin(), eb_rev.end());
    const std::vector<float> eb = ReverseTime(bw, eb_rev_f, bw.n_output);
    auto check = [&](const std::vector<float>& got, int width, int offset, int n,
                     const std::vector<float>& want) {
      for (size_t r = 0; r < rows; ++r)
        for (int k = 0; k < n; ++k)
          EXPECT_NEAR(got[r * width + offset + k], want[r * n + k], 1e-5)
              << "invoke " << invoke << ", row " << r << ", column " << offset + k;
    };
    const std::vector<float> ef_f(ef.begin(), ef.end());
    if (merge) {
      const std::vector<float> got = m.GetOutput<float>(0);
      const int width = fw.n_output + bw.n_output;
      ASSERT_EQ(got.size(), rows * width);
      check(got, width, 0, fw.n_output, ef_f);
      check(got, width, fw.n_output, bw.n_output, eb);
    } else {
      const std::vector<float> got_f = m.GetOutput<float>(0), got_b = m.GetOutput<float>(1);
      ASSERT_EQ(got_f.size(), rows * fw.n_output);
      ASSERT_EQ(got_b.size(), rows * bw.n_output);
      check(got_f, fw.n_output, 0, fw.n_output, ef_f);
      check(got_b, bw.n_output, 0, bw.n_output, eb);
    }
  }
}

}  // namespace float_lstm

TEST_P(LstmThreads, FloatBasic) {
  float_lstm::FloatSpec s;
  float_lstm::RunFloat(s, 11, Threads());
}

TEST_P(LstmThreads, FloatCifgPeepholeLayerNormProjectionClipTimeMajor) {
  float_lstm::FloatSpec s;
  s.cifg = s.peephole = s.layer_norm = s.projection = s.time_major = true;
  s.n_output = 3;
  s.cell_clip = 0.8f;
  s.proj_clip = 0.4f;
  float_lstm::RunFloat(s, 12, Threads());
}

TEST_P(LstmThreads, FloatPeepholeBatchMajor) {
  float_lstm::FloatSpec s;
  s.peephole = true;
  s.batch = 3;
  float_lstm::RunFloat(s, 13, Threads());
}

TEST_P(LstmThreads, HybridSymmetric) {
  float_lstm::FloatSpec s;
  float_lstm::RunHybrid(s, false, 21, Threads());
}

TEST_P(LstmThreads, HybridAsymmetricPeepholeProjectionTimeMajor) {
  float_lstm::FloatSpec s;
  s.peephole = s.projection = s.time_major = true;
  s.n_output = 3;
  s.proj_clip = 0.5f;
  float_lstm::RunHybrid(s, true, 22, Threads());
}

TEST_P(LstmThreads, HybridCifgLayerNormCellClip) {
  float_lstm::FloatSpec s;
  s.cifg = s.layer_norm = true;
  s.cell_clip = 0.7f;
  float_lstm::RunHybrid(s, false, 23, Threads());
}

TEST_P(LstmThreads, HybridInputsOnHalfQuantizationSteps) {
  for (bool single_step : {false, true})
    for (bool asymmetric : {false, true}) {
      float_lstm::FloatSpec s;
      s.ties = true;
      s.n_input = 12;
      s.single_step = single_step;
      if (single_step) s.time = 1;
      float_lstm::RunHybrid(s, asymmetric, 51, Threads());
    }
}

// The LSTM op (one step per invocation, the state carried between them).
TEST_P(LstmThreads, SingleStepFloat) {
  float_lstm::FloatSpec s;
  s.single_step = true;
  s.time = 1;
  float_lstm::RunFloat(s, 31, Threads());
  s.cifg = s.peephole = s.layer_norm = s.projection = true;
  s.n_output = 3;
  s.batch = 3;
  s.cell_clip = 0.8f;
  s.proj_clip = 0.4f;
  float_lstm::RunFloat(s, 32, Threads());
}

TEST_P(LstmThreads, SingleStepHybrid) {
  float_lstm::FloatSpec s;
  s.single_step = true;
  s.time = 1;
  float_lstm::RunHybrid(s, false, 41, Threads());
  s.peephole = s.projection = true;
  s.n_output = 3;
  s.proj_clip = 0.5f;
  float_lstm::RunHybrid(s, true, 42, Threads());
  s.projection = s.peephole = false;
  s.n_output = 4;
  s.cifg = s.layer_norm = true;
  s.cell_clip = 0.7f;
  float_lstm::RunHybrid(s, true, 43, Threads());
}

TEST(LstmSingleStep, RejectsBasicKernelAndSequenceInput) {
  float_lstm::FloatSpec s;
  s.single_step = true;
  s.time = 1;
  std::mt19937 rng(5);
  const float_lstm::FloatWeights w = float_lstm::RandomWeights(s, rng);
  {
    OpModel m;
    float_lstm::BuildFloatLstm(m, s, w);
    auto& op = m.model().subgraphs[0].operators.back();
    std::get<SequenceLstmParams>(op.params).basic_kernel = true;
    Status st = m.TryBuild();
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr("node 0 (LSTM)"));
    EXPECT_THAT(st.message(), HasSubstr("kernel_type BASIC is not supported"));
  }
  {
    OpModel m;
    float_lstm::BuildFloatLstm(m, s, w);
    auto& graph = m.model().subgraphs[0];
    graph.tensors[graph.operators.back().inputs[0]].shape = {s.batch, 1, s.n_input};
    graph.tensors[graph.operators.back().inputs[0]].name = "seq";
    Status st = m.TryBuild();
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr("input \"seq\" must have rank 2"));
  }
}

TEST_P(LstmThreads, BidirectionalSeparateOutputsBatchMajor) {
  float_lstm::FloatSpec fw, bw;
  float_lstm::RunBidirectional(fw, bw, /*merge=*/false, 51, Threads());
}

TEST_P(LstmThreads, BidirectionalMergedOutputsTimeMajorPeepholeProjectionCifg) {
  float_lstm::FloatSpec fw, bw;
  fw.time_major = bw.time_major = true;
  fw.peephole = fw.projection = bw.projection = true;
  fw.n_output = bw.n_output = 3;
  bw.cifg = true;
  fw.cell_clip = bw.cell_clip = 0.8f;
  fw.proj_clip = bw.proj_clip = 0.4f;
  float_lstm::RunBidirectional(fw, bw, /*merge=*/true, 52, Threads());
}

TEST_P(LstmThreads, BidirectionalMergedOutputsBatchMajorOneRow) {
  float_lstm::FloatSpec fw, bw;
  fw.batch = bw.batch = 1;
  fw.time = bw.time = 4;
  float_lstm::RunBidirectional(fw, bw, /*merge=*/true, 53, Threads());
}

TEST_P(LstmThreads, BidirectionalSeparateOutputsTimeMajorThreeRows) {
  float_lstm::FloatSpec fw, bw;
  fw.batch = bw.batch = 3;
  fw.time = bw.time = 4;
  fw.time_major = bw.time_major = true;
  fw.peephole = bw.peephole = true;
  float_lstm::RunBidirectional(fw, bw, /*merge=*/false, 54, Threads());
}

TEST(BidirectionalLstmFloat, RejectsAuxInputAndHybridWeights) {
  auto base = [](OpModel& m, std::vector<int32_t>& in) {
    float_lstm::FloatSpec s;
    std::mt19937 rng(7);
    const float_lstm::FloatWeights w = float_lstm::RandomWeights(s, rng);
    in.assign(48, -1);
    in[0] = m.AddInput(DataType::kFloat32, float_lstm::InputDims(s));
    float_lstm::AddDirection(m, s, w, 0, in);
    float_lstm::AddDirection(m, s, w, 17, in);
    for (int i = 35; i <= 38; ++i) {
      in[i] = m.AddTensor(DataType::kFloat32, {}, {s.batch, s.n_cell});
      m.model().subgraphs[0].tensors[in[i]].is_variable = true;
    }
  };
  SequenceLstmParams p;
  p.activation = Activation::kTanh;
  p.merge_outputs = true;
  {
    OpModel m;
    std::vector<int32_t> in;
    base(m, in);
    in[39] = m.AddInput(DataType::kFloat32, {2, 3, 3});
    m.AddOp(BuiltinOp::kBidirectionalSequenceLstm, in, {m.AddOutput(DataType::kFloat32)}, p, 1);
    Status st = m.TryBuild();
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr("node 0 (BIDIRECTIONAL_SEQUENCE_LSTM)"));
    EXPECT_THAT(st.message(), HasSubstr("auxiliary input"));
  }
  {
    OpModel m;
    std::vector<int32_t> in;
    base(m, in);
    in[18 + 2] = m.AddConst<int8_t>(DataType::kInt8, {4, 3}, std::vector<int8_t>(12, 1), Q(0.1f, 0));
    m.model().subgraphs[0].tensors[in[20]].name = "bw_cell_w";
    SequenceLstmParams separate = p;
    separate.merge_outputs = false;
    m.AddOp(BuiltinOp::kBidirectionalSequenceLstm, in,
            {m.AddOutput(DataType::kFloat32), m.AddOutput(DataType::kFloat32)}, separate, 1);
    Status st = m.TryBuild();
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr("backward cell input weights \"bw_cell_w\" has type INT8"));
  }
  {
    // Merged outputs of a batch-major input with two batch rows.
    OpModel m;
    std::vector<int32_t> in;
    base(m, in);
    m.AddOp(BuiltinOp::kBidirectionalSequenceLstm, in, {m.AddOutput(DataType::kFloat32)}, p, 1);
    Status st = m.TryBuild();
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr("supported for batch 1 only (got 2)"));
  }
}

INSTANTIATE_TEST_SUITE_P(ThreadsIsas, LstmThreads,
                         ::testing::Combine(::testing::Values(1, 2),
                                            ::testing::ValuesIn(testing::SupportedIsas())),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "_" +
                                  optimized::IsaName(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace delegato
