// SVDF, full integer: state updates across invocations, requantization, and
// rejection of unsupported or malformed nodes.
#include <cstdint>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::OpModel;
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
    BuildSvdf(sm, 1, true, 1.0f, 1.0f, 0, DataType::kFloat32);
    Status s = sm.m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("float32 SVDF is not supported"));
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

}  // namespace
}  // namespace delegato
