// RNN and UNIDIRECTIONAL_SEQUENCE_RNN, float32 and hybrid: the hidden state
// carried across steps and invocations, both sequence layouts, the fused
// activations, and refusals of malformed nodes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hybrid_ties.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OpModel;
using testing::FillTieRows;
using testing::Q;

struct RnnGeometry {
  int batch, time, input_size, units;
};

std::vector<float> Pattern(size_t n, float scale, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = scale * static_cast<float>((i * 37 + static_cast<size_t>(seed) * 11) % 19) / 9.0f -
           scale;
  return v;
}

std::vector<int8_t> PatternInt8(size_t n, int seed) {
  std::vector<int8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<int8_t>(static_cast<int>((i * 53 + static_cast<size_t>(seed) * 7) % 255) -
                               127);
  return v;
}

float ApplyActivation(Activation a, double x) {
  switch (a) {
    case Activation::kRelu: return static_cast<float>(std::max(0.0, x));
    case Activation::kReluN1To1: return static_cast<float>(std::min(1.0, std::max(-1.0, x)));
    case Activation::kRelu6: return static_cast<float>(std::min(6.0, std::max(0.0, x)));
    case Activation::kTanh: return static_cast<float>(std::tanh(x));
    default: return static_cast<float>(x);
  }
}

// Plain double-precision cell over (dequantized) float weights.
struct RnnOracle {
  int input_size, units;
  std::vector<float> w, r, bias;
  Activation act;
  std::vector<float> Step(const float* x, std::vector<float>& h) const {
    std::vector<float> out(static_cast<size_t>(units));
    for (int u = 0; u < units; ++u) {
      double sum = bias[u];
      for (int c = 0; c < input_size; ++c) sum += double{w[u * input_size + c]} * x[c];
      for (int c = 0; c < units; ++c) sum += double{r[u * units + c]} * h[c];
      out[u] = ApplyActivation(act, sum);
    }
    h = out;
    return out;
  }
};

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1.0f + std::fabs(want[i]))) << "element " << i;
}

// sequence = false builds RNN (time must be 1); true builds UNIDIRECTIONAL_SEQUENCE_RNN.
// ties: every input row on exact half quantization steps (hybrid_ties.h).
void RunRnn(const RnnGeometry& g, bool sequence, bool time_major, Activation act, bool hybrid,
         bool asymmetric, float tol, bool ties = false) {
  SCOPED_TRACE(::testing::Message() << "batch " << g.batch << " time " << g.time << " input "
                                    << g.input_size << " units " << g.units << " sequence "
                                    << sequence << " time_major " << time_major << " hybrid "
                                    << hybrid << " asym " << asymmetric);
  OpModel m;
  RnnOracle o{g.input_size, g.units, {}, {}, {}, act};
  const std::vector<int32_t> in_dims =
      !sequence ? std::vector<int32_t>{g.batch, g.input_size}
      : time_major ? std::vector<int32_t>{g.time, g.batch, g.input_size}
                   : std::vector<int32_t>{g.batch, g.time, g.input_size};
  int in = m.AddInput(DataType::kFloat32, in_dims);
  int w, r;
  if (hybrid) {
    const float ws = 0.005f, rs = 0.004f;
    auto qw = PatternInt8(static_cast<size_t>(g.units * g.input_size), 1);
    auto qr = PatternInt8(static_cast<size_t>(g.units * g.units), 2);
    for (int8_t v : qw) o.w.push_back(v * ws);
    for (int8_t v : qr) o.r.push_back(v * rs);
    w = m.AddConst<int8_t>(DataType::kInt8, {g.units, g.input_size}, qw, Q(ws, 0));
    r = m.AddConst<int8_t>(DataType::kInt8, {g.units, g.units}, qr, Q(rs, 0));
  } else {
    o.w = Pattern(static_cast<size_t>(g.units * g.input_size), 0.6f, 1);
    o.r = Pattern(static_cast<size_t>(g.units * g.units), 0.4f, 2);
    w = m.AddConst<float>(DataType::kFloat32, {g.units, g.input_size}, o.w);
    r = m.AddConst<float>(DataType::kFloat32, {g.units, g.units}, o.r);
  }
  o.bias = Pattern(static_cast<size_t>(g.units), 0.3f, 3);
  int bias = m.AddConst<float>(DataType::kFloat32, {g.units}, o.bias);
  int hidden = m.AddTensor(DataType::kFloat32, {}, {g.batch, g.units});
  m.model().subgraphs[0].tensors[hidden].is_variable = true;
  int out = m.AddOutput(DataType::kFloat32);
  RnnParams p;
  p.activation = act;
  p.asymmetric_quantize_inputs = asymmetric;
  p.time_major = time_major;
  const int version = hybrid ? (asymmetric ? 3 : 2) : 1;
  m.AddOp(sequence ? BuiltinOp::kUnidirectionalSequenceRnn : BuiltinOp::kRnn,
          {in, w, r, bias, hidden}, {out}, p, version);
  m.Build();
  std::vector<int32_t> out_dims = in_dims;
  out_dims.back() = g.units;
  EXPECT_EQ(m.GetOutputShape(0), out_dims);

  std::vector<std::vector<float>> h(static_cast<size_t>(g.batch),
                                    std::vector<float>(static_cast<size_t>(g.units), 0.0f));
  const size_t n = static_cast<size_t>(g.batch) * g.time * g.input_size;
  for (int invoke = 0; invoke < 3; ++invoke) {
    auto x = Pattern(n, 1.0f + invoke * 0.5f, invoke + 5);
    if (invoke == 1) {
      // The first row all zero (skips its product), the second all positive.
      std::fill(x.begin(), x.begin() + g.input_size, 0.0f);
      if (n >= static_cast<size_t>(2 * g.input_size))
        for (int c = 0; c < g.input_size; ++c) x[g.input_size + c] = std::fabs(x[g.input_size + c]) + 0.5f;
    }
    if (ties) FillTieRows(x, static_cast<size_t>(g.input_size), asymmetric);
    m.SetInput<float>(0, x);
    m.Invoke();
    std::vector<float> want(static_cast<size_t>(g.batch) * g.time * g.units);
    for (int t = 0; t < g.time; ++t)
      for (int b = 0; b < g.batch; ++b) {
        const size_t row = time_major || !sequence ? static_cast<size_t>(t) * g.batch + b
                                                   : static_cast<size_t>(b) * g.time + t;
        auto y = o.Step(x.data() + row * g.input_size, h[b]);
        std::copy(y.begin(), y.end(), want.begin() + static_cast<std::ptrdiff_t>(row * g.units));
      }
    ExpectNear(m.GetOutput<float>(0), want, tol);
  }
}

TEST(RnnFloat, CellCarriesHiddenStateAcrossInvocations) {
  RunRnn({1, 1, 3, 2}, false, false, Activation::kNone, false, false, 1e-5f);
  RunRnn({2, 1, 5, 4}, false, false, Activation::kRelu, false, false, 1e-5f);
  RunRnn({3, 1, 4, 3}, false, false, Activation::kTanh, false, false, 1e-5f);
  RunRnn({2, 1, 6, 5}, false, false, Activation::kRelu6, false, false, 1e-5f);
  RunRnn({2, 1, 2, 3}, false, false, Activation::kReluN1To1, false, false, 1e-5f);
}

TEST(RnnHybrid, CellWithinQuantizationError) {
  RunRnn({1, 1, 3, 2}, false, false, Activation::kNone, true, false, 0.03f);
  RunRnn({2, 1, 5, 4}, false, false, Activation::kRelu, true, false, 0.03f);
  RunRnn({3, 1, 4, 3}, false, false, Activation::kTanh, true, true, 0.03f);
  RunRnn({2, 1, 7, 5}, false, false, Activation::kRelu6, true, true, 0.03f);
}

TEST(SequenceRnnFloat, BothLayoutsAndActivations) {
  RunRnn({1, 3, 3, 2}, true, false, Activation::kNone, false, false, 1e-5f);
  RunRnn({2, 4, 5, 4}, true, false, Activation::kTanh, false, false, 1e-5f);
  RunRnn({2, 4, 5, 4}, true, true, Activation::kTanh, false, false, 1e-5f);
  RunRnn({3, 2, 4, 3}, true, true, Activation::kRelu, false, false, 1e-5f);
  RunRnn({2, 5, 2, 6}, true, false, Activation::kRelu6, false, false, 1e-5f);
}

TEST(SequenceRnnHybrid, BothLayoutsSymmetricAndAsymmetric) {
  RunRnn({1, 3, 3, 2}, true, false, Activation::kNone, true, false, 0.03f);
  RunRnn({2, 4, 5, 4}, true, false, Activation::kTanh, true, true, 0.03f);
  RunRnn({2, 4, 5, 4}, true, true, Activation::kTanh, true, true, 0.03f);
  RunRnn({3, 2, 6, 3}, true, true, Activation::kRelu, true, false, 0.03f);
}

TEST(RnnFloat, RejectsMalformedNodes) {
  auto build = [](std::vector<int32_t> hidden_dims, bool variable, Activation act,
                  DataType weight_type, int64_t weight_zero_point, std::vector<int32_t> r_dims) {
    OpModel m;
    int in = m.AddInput(DataType::kFloat32, {2, 3});
    const size_t rn = static_cast<size_t>(r_dims[0] * r_dims[1]);
    int w, r;
    if (weight_type == DataType::kFloat32) {
      w = m.AddConst<float>(DataType::kFloat32, {2, 3}, std::vector<float>(6, 0.5f));
      r = m.AddConst<float>(DataType::kFloat32, r_dims, std::vector<float>(rn, 0.5f));
    } else {
      w = m.AddConst<int8_t>(DataType::kInt8, {2, 3}, std::vector<int8_t>(6, 1),
                             Q(0.5f, weight_zero_point));
      r = m.AddConst<int8_t>(DataType::kInt8, r_dims, std::vector<int8_t>(rn, 1), Q(0.5f, 0));
    }
    m.model().subgraphs[0].tensors[w].name = "kernel";
    m.model().subgraphs[0].tensors[r].name = "recurrent";
    int bias = m.AddConst<float>(DataType::kFloat32, {2}, {0.0f, 0.0f});
    int hidden = variable ? m.AddTensor(DataType::kFloat32, {}, hidden_dims)
                          : m.AddInput(DataType::kFloat32, hidden_dims);
    m.model().subgraphs[0].tensors[hidden].is_variable = variable;
    m.model().subgraphs[0].tensors[hidden].name = "h";
    int out = m.AddOutput(DataType::kFloat32);
    RnnParams p;
    p.activation = act;
    m.AddOp(BuiltinOp::kRnn, {in, w, r, bias, hidden}, {out}, p, 1);
    return m.TryBuild();
  };
  const std::vector<int32_t> ok_r = {2, 2};
  EXPECT_TRUE(build({2, 2}, true, Activation::kTanh, DataType::kFloat32, 0, ok_r).ok());
  EXPECT_TRUE(build({2, 2}, true, Activation::kTanh, DataType::kInt8, 0, ok_r).ok());
  Status s = build({2, 3}, true, Activation::kTanh, DataType::kFloat32, 0, ok_r);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (RNN)"));
  EXPECT_THAT(s.message(), HasSubstr("hidden_state \"h\" must have shape [2, 2], has [2, 3]"));
  s = build({2, 2}, false, Activation::kTanh, DataType::kFloat32, 0, ok_r);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("\"h\" must be a variable tensor"));
  s = build({2, 2}, true, Activation::kTanh, DataType::kFloat32, 0, {2, 3});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("recurrent_weights \"recurrent\" must have shape [2, 2]"));
  s = build({2, 2}, true, Activation::kSignBit, DataType::kFloat32, 0, ok_r);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("SIGN_BIT is not supported"));
  s = build({2, 2}, true, Activation::kTanh, DataType::kInt8, 2, ok_r);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("input_weights \"kernel\" must have zero point 0"));
}

TEST(SequenceRnnFloat, RejectsInputOfWrongRank) {
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {2, 3});
  m.model().subgraphs[0].tensors[in].name = "x";
  int w = m.AddConst<float>(DataType::kFloat32, {2, 3}, std::vector<float>(6, 0.5f));
  int r = m.AddConst<float>(DataType::kFloat32, {2, 2}, std::vector<float>(4, 0.5f));
  int bias = m.AddConst<float>(DataType::kFloat32, {2}, {0.0f, 0.0f});
  int hidden = m.AddTensor(DataType::kFloat32, {}, {2, 2});
  m.model().subgraphs[0].tensors[hidden].is_variable = true;
  int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kUnidirectionalSequenceRnn, {in, w, r, bias, hidden}, {out}, RnnParams{},
          1);
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (UNIDIRECTIONAL_SEQUENCE_RNN)"));
  EXPECT_THAT(s.message(), HasSubstr("input \"x\" must have rank 3, has rank 2"));
}

// ------------------------------------------------ BIDIRECTIONAL_SEQUENCE_RNN

void RunBidiRnn(const RnnGeometry& g, int bw_units, bool time_major, bool merge, Activation act,
                bool hybrid, bool asymmetric, float tol, bool ties = false) {
  SCOPED_TRACE(::testing::Message() << "batch " << g.batch << " time " << g.time << " units "
                                    << g.units << "/" << bw_units << " time_major " << time_major
                                    << " merge " << merge << " hybrid " << hybrid);
  OpModel m;
  const std::vector<int32_t> in_dims = time_major
                                           ? std::vector<int32_t>{g.time, g.batch, g.input_size}
                                           : std::vector<int32_t>{g.batch, g.time, g.input_size};
  std::vector<int32_t> in(12, -1);
  in[0] = m.AddInput(DataType::kFloat32, in_dims);
  RnnOracle o[2];
  const int units[2] = {g.units, bw_units};
  for (int k = 0; k < 2; ++k) {
    o[k] = RnnOracle{g.input_size, units[k], {}, {}, {}, act};
    const int u = units[k];
    if (hybrid) {
      const float ws = 0.005f, rs = 0.004f;
      auto qw = PatternInt8(static_cast<size_t>(u * g.input_size), 1 + 3 * k);
      auto qr = PatternInt8(static_cast<size_t>(u * u), 2 + 3 * k);
      for (int8_t v : qw) o[k].w.push_back(v * ws);
      for (int8_t v : qr) o[k].r.push_back(v * rs);
      in[1 + 4 * k] = m.AddConst<int8_t>(DataType::kInt8, {u, g.input_size}, qw, Q(ws, 0));
      in[2 + 4 * k] = m.AddConst<int8_t>(DataType::kInt8, {u, u}, qr, Q(rs, 0));
    } else {
      o[k].w = Pattern(static_cast<size_t>(u * g.input_size), 0.6f, 1 + 3 * k);
      o[k].r = Pattern(static_cast<size_t>(u * u), 0.4f, 2 + 3 * k);
      in[1 + 4 * k] = m.AddConst<float>(DataType::kFloat32, {u, g.input_size}, o[k].w);
      in[2 + 4 * k] = m.AddConst<float>(DataType::kFloat32, {u, u}, o[k].r);
    }
    o[k].bias = Pattern(static_cast<size_t>(u), 0.3f, 3 + 3 * k);
    in[3 + 4 * k] = m.AddConst<float>(DataType::kFloat32, {u}, o[k].bias);
    in[4 + 4 * k] = m.AddTensor(DataType::kFloat32, {}, {g.batch, u});
    m.model().subgraphs[0].tensors[in[4 + 4 * k]].is_variable = true;
  }
  std::vector<int32_t> outs = {m.AddOutput(DataType::kFloat32)};
  if (!merge) outs.push_back(m.AddOutput(DataType::kFloat32));
  RnnParams p;
  p.activation = act;
  p.time_major = time_major;
  p.merge_outputs = merge;
  p.asymmetric_quantize_inputs = asymmetric;
  m.AddOp(BuiltinOp::kBidirectionalSequenceRnn, in, outs, p,
          hybrid ? (asymmetric ? 3 : 2) : 1);
  m.Build();
  std::vector<std::vector<float>> h[2];
  for (int k = 0; k < 2; ++k)
    h[k].assign(static_cast<size_t>(g.batch), std::vector<float>(static_cast<size_t>(units[k]), 0.0f));
  const size_t rows = static_cast<size_t>(g.batch) * g.time;
  for (int invoke = 0; invoke < 2; ++invoke) {
    auto x = Pattern(rows * g.input_size, 1.0f + invoke * 0.5f, invoke + 5);
    if (ties) FillTieRows(x, static_cast<size_t>(g.input_size), asymmetric);
    m.SetInput<float>(0, x);
    m.Invoke();
    std::vector<float> want[2];
    for (int k = 0; k < 2; ++k) {
      want[k].assign(rows * units[k], 0.0f);
      for (int b = 0; b < g.batch; ++b)
        for (int i = 0; i < g.time; ++i) {
          const int t = k == 0 ? i : g.time - 1 - i;
          const size_t row = time_major ? static_cast<size_t>(t) * g.batch + b
                                        : static_cast<size_t>(b) * g.time + t;
          auto y = o[k].Step(x.data() + row * g.input_size, h[k][b]);
          std::copy(y.begin(), y.end(), want[k].begin() + static_cast<std::ptrdiff_t>(row * units[k]));
        }
    }
    if (merge) {
      const int width = g.units + bw_units;
      std::vector<float> merged(rows * width);
      for (size_t r = 0; r < rows; ++r) {
        std::copy_n(want[0].begin() + r * g.units, g.units, merged.begin() + r * width);
        std::copy_n(want[1].begin() + r * bw_units, bw_units, merged.begin() + r * width + g.units);
      }
      ExpectNear(m.GetOutput<float>(0), merged, tol);
    } else {
      ExpectNear(m.GetOutput<float>(0), want[0], tol);
      ExpectNear(m.GetOutput<float>(1), want[1], tol);
    }
  }
}

TEST(BidirectionalRnnFloat, LayoutsAndMerging) {
  RunBidiRnn({2, 3, 4, 3}, 3, false, false, Activation::kTanh, false, false, 1e-5f);
  RunBidiRnn({2, 3, 4, 3}, 5, true, false, Activation::kRelu, false, false, 1e-5f);
  RunBidiRnn({3, 4, 5, 2}, 4, true, true, Activation::kTanh, false, false, 1e-5f);
  RunBidiRnn({3, 4, 5, 4}, 2, false, true, Activation::kNone, false, false, 1e-5f);
}

TEST(BidirectionalRnnHybrid, SymmetricAndAsymmetric) {
  RunBidiRnn({2, 3, 4, 3}, 3, false, false, Activation::kTanh, true, false, 0.03f);
  RunBidiRnn({3, 4, 5, 2}, 4, false, true, Activation::kRelu6, true, true, 0.03f);
  RunBidiRnn({2, 3, 6, 4}, 3, false, true, Activation::kTanh, true, true, 0.03f);
}

TEST(RnnHybrid, InputsOnHalfQuantizationSteps) {
  for (bool asymmetric : {false, true}) {
    RunRnn({3, 1, 12, 4}, false, false, Activation::kTanh, true, asymmetric, 0.05f, true);
    RunRnn({2, 3, 12, 4}, true, false, Activation::kTanh, true, asymmetric, 0.05f, true);
    RunRnn({2, 3, 12, 4}, true, true, Activation::kNone, true, asymmetric, 0.05f, true);
    RunBidiRnn({2, 3, 12, 3}, 4, false, true, Activation::kTanh, true, asymmetric, 0.05f, true);
  }
}

TEST(BidirectionalRnnHybrid, RejectsTimeMajorInput) {
  OpModel m;
  std::vector<int32_t> in(12, -1);
  in[0] = m.AddInput(DataType::kFloat32, {4, 3, 5});  // time-major: batch 3
  for (int k = 0; k < 2; ++k) {
    in[1 + 4 * k] = m.AddConst<int8_t>(DataType::kInt8, {2, 5}, std::vector<int8_t>(10, 1), Q(0.1f, 0));
    in[2 + 4 * k] = m.AddConst<int8_t>(DataType::kInt8, {2, 2}, std::vector<int8_t>(4, 1), Q(0.1f, 0));
    in[3 + 4 * k] = m.AddConst<float>(DataType::kFloat32, {2}, {0.0f, 0.0f});
    in[4 + 4 * k] = m.AddTensor(DataType::kFloat32, {}, {3, 2});
    m.model().subgraphs[0].tensors[in[4 + 4 * k]].is_variable = true;
  }
  RnnParams p;
  p.time_major = true;
  p.merge_outputs = true;
  p.asymmetric_quantize_inputs = true;
  m.AddOp(BuiltinOp::kBidirectionalSequenceRnn, in, {m.AddOutput(DataType::kFloat32)}, p, 3);
  Status s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (BIDIRECTIONAL_SEQUENCE_RNN)"));
  EXPECT_THAT(s.message(), HasSubstr("batch-major inputs only"));
}

TEST(BidirectionalRnnFloat, RejectsAuxInputAndBadHiddenState) {
  auto build = [](bool aux, std::vector<int32_t> bw_hidden_dims) {
    OpModel m;
    std::vector<int32_t> in(12, -1);
    in[0] = m.AddInput(DataType::kFloat32, {2, 3, 4});
    for (int k = 0; k < 2; ++k) {
      in[1 + 4 * k] = m.AddConst<float>(DataType::kFloat32, {3, 4}, std::vector<float>(12, 0.1f));
      in[2 + 4 * k] = m.AddConst<float>(DataType::kFloat32, {3, 3}, std::vector<float>(9, 0.1f));
      in[3 + 4 * k] = m.AddConst<float>(DataType::kFloat32, {3}, std::vector<float>(3, 0.1f));
      in[4 + 4 * k] = m.AddTensor(DataType::kFloat32, {}, k == 0 ? std::vector<int32_t>{2, 3}
                                                                 : bw_hidden_dims);
      m.model().subgraphs[0].tensors[in[4 + 4 * k]].is_variable = true;
    }
    m.model().subgraphs[0].tensors[in[8]].name = "bw_h";
    if (aux) in[9] = m.AddInput(DataType::kFloat32, {2, 3, 4});
    RnnParams p;
    p.activation = Activation::kTanh;
    p.merge_outputs = true;
    m.AddOp(BuiltinOp::kBidirectionalSequenceRnn, in, {m.AddOutput(DataType::kFloat32)}, p, 1);
    return m.TryBuild();
  };
  EXPECT_TRUE(build(false, {2, 3}).ok());
  Status s = build(true, {2, 3});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (BIDIRECTIONAL_SEQUENCE_RNN)"));
  EXPECT_THAT(s.message(), HasSubstr("auxiliary input"));
  s = build(false, {3, 3});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("backward hidden_state \"bw_h\" must have shape [2, 3]"));
}

}  // namespace
}  // namespace delegato
