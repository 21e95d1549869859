// SVDF, full integer: state updates across invocations, requantization, and
// rejection of unsupported or malformed nodes.
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

struct SvdfModel {
  OpModel m;
  int state = -1;
};

// batch 1, input_size 2, two filters of memory 2; units = 2 / rank.
// All scales default to 1, so both multipliers are exactly 1 and the
// arithmetic is plain integer sums.
void BuildSvdf(SvdfModel& sm, int rank, bool with_bias, float input_scale = 1.0f,
               float output_scale = 1.0f, int32_t output_zero_point = 0,
               DataType input_type = DataType::kInt8, bool state_is_variable = true,
               Activation activation = Activation::kRelu) {
  OpModel& m = sm.m;
  const int units = rank > 0 && 2 % rank == 0 ? 2 / rank : 1;
  int in = m.AddInput(input_type, {1, 2}, Q(input_scale, 0));
  int wf = m.AddConst<int8_t>(DataType::kInt8, {2, 2}, {1, 2, 3, -1}, Q(1.0f, 0));
  // Memory runs oldest to newest.
  int wt = m.AddConst<int16_t>(DataType::kInt16, {2, 2}, {1, 2, -1, 1}, Q(1.0f, 0));
  int bias = with_bias ? m.AddConst<int32_t>(DataType::kInt32, {units},
                                             units == 2 ? std::vector<int32_t>{10, -5}
                                                        : std::vector<int32_t>{10},
                                             Q(1.0f, 0))
                       : -1;
  if (state_is_variable) {
    sm.state = m.AddTensor(DataType::kInt16, Q(1.0f, 0), {1, 4});
    m.model().subgraphs[0].tensors[sm.state].is_variable = true;
  } else {
    sm.state = m.AddInput(DataType::kInt16, {1, 4}, Q(1.0f, 0));  // a plain graph input
  }
  int out = m.AddOutput(DataType::kInt8, Q(output_scale, output_zero_point));
  SvdfParams p;
  p.rank = rank;
  p.activation = activation;
  m.AddOp(BuiltinOp::kSvdf, {in, wf, wt, bias, sm.state}, {out}, p, 3);
}

TEST(SvdfInt8, StateCarriesAcrossInvocations) {
  SvdfModel sm;
  BuildSvdf(sm, /*rank=*/1, /*with_bias=*/true);
  sm.m.Build();
  EXPECT_THAT(sm.m.GetOutputShape(0), ElementsAre(1, 2));
  // Step 1: features (1+2, 3-1) = (3, 2) enter the newest slots.
  sm.m.SetInput<int8_t>(0, {1, 1});
  sm.m.Invoke();
  // unit 0: 1*0 + 2*3 + 10; unit 1: -1*0 + 1*2 - 5 (no ReLU is applied).
  EXPECT_THAT(sm.m.GetOutput<int8_t>(0), ElementsAre(16, -3));
  // Step 2: features (2-2, 6+1) = (0, 7); the old values moved one slot back.
  sm.m.SetInput<int8_t>(0, {2, -1});
  sm.m.Invoke();
  EXPECT_THAT(sm.m.GetOutput<int8_t>(0), ElementsAre(1 * 3 + 2 * 0 + 10, -1 * 2 + 1 * 7 - 5));
}

TEST(SvdfInt8, RankTwoSumsFiltersWithoutBias) {
  SvdfModel sm;
  BuildSvdf(sm, /*rank=*/2, /*with_bias=*/false);
  sm.m.Build();
  EXPECT_THAT(sm.m.GetOutputShape(0), ElementsAre(1, 1));
  sm.m.SetInput<int8_t>(0, {1, 1});
  sm.m.Invoke();
  EXPECT_THAT(sm.m.GetOutput<int8_t>(0), ElementsAre(2 * 3 + 1 * 2));
}

TEST(SvdfInt8, RequantizesAndSaturates) {
  SvdfModel sm;
  // Output scale 4 with zero point -100: value / 4 rounded, plus -100.
  BuildSvdf(sm, /*rank=*/1, /*with_bias=*/true, 1.0f, 4.0f, -100);
  sm.m.Build();
  sm.m.SetInput<int8_t>(0, {1, 1});
  sm.m.Invoke();
  // 16 / 4 = 4; -3 / 4 = -0.75 rounds to -1.
  EXPECT_THAT(sm.m.GetOutput<int8_t>(0), ElementsAre(-96, -101));

  SvdfModel big;
  // Input scale 100: features become 300 and 200; unit 0 = 2 * 300 + 10.
  BuildSvdf(big, /*rank=*/1, /*with_bias=*/true, 100.0f);
  big.m.Build();
  big.m.SetInput<int8_t>(0, {1, 1});
  big.m.Invoke();
  EXPECT_THAT(big.m.GetOutput<int8_t>(0), ElementsAre(127, 127));
}

TEST(SvdfInt8, RejectsUnsupportedNodes) {
  {
    SvdfModel sm;
    // Float input with int8 features makes a hybrid node, whose weights_time must be int8.
    BuildSvdf(sm, 1, true, 1.0f, 1.0f, 0, DataType::kFloat32);
    Status s = sm.m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("node 0 (SVDF)"));
    EXPECT_THAT(s.message(), HasSubstr("has type INT16, expected INT8"));
  }
  {
    SvdfModel sm;
    BuildSvdf(sm, 1, true, 1.0f, 1.0f, 0, DataType::kInt8, /*state_is_variable=*/false);
    Status s = sm.m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("must be a variable tensor"));
  }
  {
    SvdfModel sm;
    BuildSvdf(sm, 1, true, 1.0f, 1.0f, 0, DataType::kInt8, true, Activation::kNone);
    Status s = sm.m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("requires RELU"));
  }
  {
    SvdfModel sm;
    BuildSvdf(sm, /*rank=*/3, true);
    Status s = sm.m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("not a multiple of rank"));
  }
  {
    SvdfModel sm;
    BuildSvdf(sm, /*rank=*/0, true);
    Status s = sm.m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("rank must be positive"));
  }
}

// ---------------------------------------------------------------- float, hybrid

struct SvdfGeometry {
  int batch, input_size, filters, memory, rank;
};

std::vector<float> Pattern(size_t n, float scale, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = scale * static_cast<float>(((i * 37 + static_cast<size_t>(seed) * 11) % 19)) / 9.0f -
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

float ApplyActivation(Activation a, float x) {
  switch (a) {
    case Activation::kRelu: return std::max(0.0f, x);
    case Activation::kReluN1To1: return std::min(1.0f, std::max(-1.0f, x));
    case Activation::kRelu6: return std::min(6.0f, std::max(0.0f, x));
    case Activation::kTanh: return std::tanh(x);
    default: return x;
  }
}

// A plain double-precision SVDF over float weights, for the expectations.
struct SvdfOracle {
  SvdfGeometry g;
  std::vector<float> wf, wt, bias;
  Activation act;
  std::vector<double> state;
  std::vector<float> Step(const std::vector<float>& x) {
    if (state.empty()) state.assign(static_cast<size_t>(g.batch * g.filters * g.memory), 0.0);
    std::rotate(state.begin(), state.begin() + 1, state.end());
    for (int b = 0; b < g.batch; ++b)
      for (int f = 0; f < g.filters; ++f) {
        double dot = 0;
        for (int c = 0; c < g.input_size; ++c)
          dot += double{wf[f * g.input_size + c]} * x[b * g.input_size + c];
        state[(b * g.filters + f) * g.memory + g.memory - 1] = dot;
      }
    const int units = g.filters / g.rank;
    std::vector<float> out(static_cast<size_t>(g.batch * units));
    for (int b = 0; b < g.batch; ++b)
      for (int u = 0; u < units; ++u) {
        double sum = bias.empty() ? 0.0 : bias[u];
        for (int r = 0; r < g.rank; ++r) {
          const int f = u * g.rank + r;
          for (int k = 0; k < g.memory; ++k)
            sum += double{wt[f * g.memory + k]} * state[(b * g.filters + f) * g.memory + k];
        }
        out[b * units + u] = ApplyActivation(act, static_cast<float>(sum));
      }
    return out;
  }
};

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1.0f + std::fabs(want[i]))) << "element " << i;
}

// hybrid: weights are int8 with the given scales, the oracle uses their dequantized values.
// ties: every input row on exact half quantization steps (hybrid_ties.h).
void RunFloatOrHybrid(const SvdfGeometry& g, Activation act, bool with_bias, bool hybrid,
                      bool asymmetric, float tol, bool ties = false) {
  SCOPED_TRACE(::testing::Message() << "batch " << g.batch << " input " << g.input_size
                                  << " filters " << g.filters << " memory " << g.memory
                                  << " rank " << g.rank << " hybrid " << hybrid << " asym "
                                  << asymmetric);
  OpModel m;
  const int units = g.filters / g.rank;
  SvdfOracle o{g, {}, {}, {}, act, {}};
  const float wf_scale = 0.004f, wt_scale = 0.006f;
  int in = m.AddInput(DataType::kFloat32, {g.batch, g.input_size});
  int wf, wt;
  if (hybrid) {
    auto qf = PatternInt8(static_cast<size_t>(g.filters * g.input_size), 1);
    auto qt = PatternInt8(static_cast<size_t>(g.filters * g.memory), 2);
    for (int8_t v : qf) o.wf.push_back(v * wf_scale);
    for (int8_t v : qt) o.wt.push_back(v * wt_scale);
    wf = m.AddConst<int8_t>(DataType::kInt8, {g.filters, g.input_size}, qf, Q(wf_scale, 0));
    wt = m.AddConst<int8_t>(DataType::kInt8, {g.filters, g.memory}, qt, Q(wt_scale, 0));
  } else {
    o.wf = Pattern(static_cast<size_t>(g.filters * g.input_size), 0.5f, 1);
    o.wt = Pattern(static_cast<size_t>(g.filters * g.memory), 0.7f, 2);
    wf = m.AddConst<float>(DataType::kFloat32, {g.filters, g.input_size}, o.wf);
    wt = m.AddConst<float>(DataType::kFloat32, {g.filters, g.memory}, o.wt);
  }
  int bias = -1;
  if (with_bias) {
    o.bias = Pattern(static_cast<size_t>(units), 0.3f, 3);
    bias = m.AddConst<float>(DataType::kFloat32, {units}, o.bias);
  }
  int state = m.AddTensor(DataType::kFloat32, {}, {g.batch, g.filters * g.memory});
  m.model().subgraphs[0].tensors[state].is_variable = true;
  int out = m.AddOutput(DataType::kFloat32);
  SvdfParams p;
  p.rank = g.rank;
  p.activation = act;
  p.asymmetric_quantize_inputs = asymmetric;
  m.AddOp(BuiltinOp::kSvdf, {in, wf, wt, bias, state}, {out}, p,
          hybrid ? (asymmetric ? 4 : 2) : 1);
  m.Build();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAre(g.batch, units));
  for (int step = 0; step < 4; ++step) {
    auto x = Pattern(static_cast<size_t>(g.batch * g.input_size), 1.0f + step * 0.5f, step + 5);
    if (asymmetric && step == 1)
      for (float& v : x) v = std::fabs(v) + 0.25f;  // all positive: a nonzero zero point
    if (step == 2) std::fill(x.begin(), x.end(), 0.0f);  // the all-zero input path
    if (ties) FillTieRows(x, static_cast<size_t>(g.input_size), asymmetric);
    m.SetInput<float>(0, x);
    m.Invoke();
    ExpectNear(m.GetOutput<float>(0), o.Step(x), tol);
  }
}

TEST(SvdfFloat, MatchesPlainArithmeticAcrossSteps) {
  RunFloatOrHybrid({1, 3, 2, 3, 1}, Activation::kNone, true, false, false, 1e-5f);
  RunFloatOrHybrid({2, 5, 4, 4, 2}, Activation::kRelu, true, false, false, 1e-5f);
  RunFloatOrHybrid({3, 4, 6, 2, 3}, Activation::kTanh, false, false, false, 1e-5f);
  RunFloatOrHybrid({2, 7, 3, 5, 1}, Activation::kRelu6, true, false, false, 1e-5f);
  RunFloatOrHybrid({1, 2, 4, 1, 2}, Activation::kReluN1To1, false, false, false, 1e-5f);
}

TEST(SvdfHybrid, MatchesDequantizedArithmeticWithinQuantizationError) {
  // The input is quantized to 8 bits per batch row, so the product carries its error.
  RunFloatOrHybrid({1, 3, 2, 3, 1}, Activation::kNone, true, true, false, 0.03f);
  RunFloatOrHybrid({2, 5, 4, 4, 2}, Activation::kRelu, true, true, false, 0.03f);
  RunFloatOrHybrid({3, 4, 6, 2, 3}, Activation::kTanh, false, true, true, 0.03f);
  RunFloatOrHybrid({2, 7, 3, 5, 1}, Activation::kRelu6, true, true, true, 0.03f);
}

TEST(SvdfHybrid, InputsOnHalfQuantizationSteps) {
  RunFloatOrHybrid({2, 12, 4, 3, 1}, Activation::kNone, true, true, false, 0.05f, true);
  RunFloatOrHybrid({3, 12, 6, 2, 3}, Activation::kRelu, true, true, true, 0.05f, true);
}

TEST(SvdfHybrid, ExactOnInputsThatQuantizeExactly) {
  // Input row (127, -127): symmetric scale 1, products are exact.
  OpModel m;
  int in = m.AddInput(DataType::kFloat32, {1, 2});
  int wf = m.AddConst<int8_t>(DataType::kInt8, {2, 2}, {1, 2, 3, -1}, Q(0.5f, 0));
  int wt = m.AddConst<int8_t>(DataType::kInt8, {2, 2}, {1, 2, -1, 1}, Q(0.25f, 0));
  int bias = m.AddConst<float>(DataType::kFloat32, {2}, {1.0f, -1.0f});
  int state = m.AddTensor(DataType::kFloat32, {}, {1, 4});
  m.model().subgraphs[0].tensors[state].is_variable = true;
  int out = m.AddOutput(DataType::kFloat32);
  SvdfParams p;
  p.rank = 1;
  m.AddOp(BuiltinOp::kSvdf, {in, wf, wt, bias, state}, {out}, p, 2);
  m.Build();
  m.SetInput<float>(0, {127.0f, -127.0f});
  m.Invoke();
  // features: 0.5 * (127 - 254) = -63.5, 0.5 * (381 + 127) = 254; weights_time newest: 0.5, 0.25.
  EXPECT_THAT(m.GetOutput<float>(0), ElementsAre(-63.5f * 0.5f + 1.0f, 254.0f * 0.25f - 1.0f));
}

TEST(SvdfFloat, RejectsBadTypesAndShapes) {
  auto build = [](DataType state_type, std::vector<int32_t> state_dims, Activation act,
                  DataType wt_type, float wt_zero_point) {
    OpModel m;
    int in = m.AddInput(DataType::kFloat32, {1, 2});
    int wf = wt_type == DataType::kFloat32
                 ? m.AddConst<float>(DataType::kFloat32, {2, 2}, {1, 2, 3, 4})
                 : m.AddConst<int8_t>(DataType::kInt8, {2, 2}, {1, 2, 3, 4}, Q(1.0f, 0));
    int wt = wt_type == DataType::kFloat32
                 ? m.AddConst<float>(DataType::kFloat32, {2, 2}, {1, 2, 3, 4})
                 : m.AddConst<int8_t>(DataType::kInt8, {2, 2}, {1, 2, 3, 4},
                                      Q(1.0f, static_cast<int64_t>(wt_zero_point)));
    m.model().subgraphs[0].tensors[wt].name = "wtime";
    int state = m.AddTensor(state_type, {}, state_dims);
    m.model().subgraphs[0].tensors[state].is_variable = true;
    m.model().subgraphs[0].tensors[state].name = "svdf_state";
    int out = m.AddOutput(DataType::kFloat32);
    SvdfParams p;
    p.rank = 1;
    p.activation = act;
    m.AddOp(BuiltinOp::kSvdf, {in, wf, wt, -1, state}, {out}, p, 1);
    return m.TryBuild();
  };
  Status s = build(DataType::kFloat32, {1, 3}, Activation::kNone, DataType::kFloat32, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (SVDF)"));
  EXPECT_THAT(s.message(), HasSubstr("state \"svdf_state\" must be [1, 4]"));
  s = build(DataType::kInt16, {1, 4}, Activation::kNone, DataType::kFloat32, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("\"svdf_state\" has type INT16, expected FLOAT32"));
  s = build(DataType::kFloat32, {1, 4}, Activation::kSignBit, DataType::kFloat32, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("SIGN_BIT is not supported"));
  s = build(DataType::kFloat32, {1, 4}, Activation::kNone, DataType::kInt8, 3);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("weights_time \"wtime\" must have zero point 0"));
  EXPECT_TRUE(build(DataType::kFloat32, {1, 4}, Activation::kNone, DataType::kInt8, 0).ok());
}

}  // namespace
}  // namespace delegato
