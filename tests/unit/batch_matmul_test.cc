// BATCH_MATMUL: float, int8, int16 and int8 -> int32; adj_x / adj_y, batch
// broadcasting over ranks 2 to 5, constant and run-time rhs. Expectations come
// from a direct formulation here: numpy-style broadcast indices and
// out[m][n] = sum_k lhs(m, k) * rhs(k, n).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/quantization.h"
#include "litert_dump.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::delegato::testing::DumpForLiteRt;
using ::delegato::testing::OpModel;
using ::delegato::testing::Q;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

struct Case {
  std::vector<int32_t> lhs, rhs;  // stored shapes
  bool adj_x = false, adj_y = false;
  bool rhs_const = false;
};

std::vector<Case> Cases() {
  return {
      {{2, 3}, {3, 4}},
      {{3, 2}, {3, 4}, true, false},
      {{2, 3}, {4, 3}, false, true, true},
      {{3, 2}, {4, 3}, true, true},
      {{2, 2, 3}, {2, 3, 4}},
      {{2, 1, 2, 3}, {3, 3, 4}, false, false, true},    // broadcast both ways
      {{1, 2, 3}, {4, 2, 4, 3}, false, true},           // rank 3 with rank 4
      {{1, 3, 2}, {2, 1, 3, 4}, true, false},           // adj_x with broadcast
      {{2, 3, 1, 2, 5}, {1, 3, 2, 5, 3}, false, false, true},  // rank 5
      {{4, 3, 16}, {4, 16, 2}, false, false},
  };
}

int64_t Numel(const std::vector<int32_t>& d) {
  int64_t n = 1;
  for (int32_t v : d) n *= v;
  return n;
}

// Output shape and a callback over (out index, lhs index fn, rhs index fn).
struct Shapes {
  std::vector<int32_t> out;
  int M, N, K;
};

Shapes ShapesOf(const Case& c) {
  const int r = std::max(c.lhs.size(), c.rhs.size());
  Shapes s;
  s.out.assign(r, 1);
  for (int i = 0; i < r - 2; ++i) {
    const int li = i - (r - static_cast<int>(c.lhs.size())), ri = i - (r - static_cast<int>(c.rhs.size()));
    const int ld = li >= 0 ? c.lhs[li] : 1, rd = ri >= 0 ? c.rhs[ri] : 1;
    s.out[i] = std::max(ld, rd);
  }
  const int l0 = c.lhs[c.lhs.size() - 2], l1 = c.lhs.back();
  const int r0 = c.rhs[c.rhs.size() - 2], r1 = c.rhs.back();
  s.M = c.adj_x ? l1 : l0;
  s.K = c.adj_x ? l0 : l1;
  s.N = c.adj_y ? r0 : r1;
  s.out[r - 2] = s.M;
  s.out[r - 1] = s.N;
  return s;
}

// Calls fn(out_index, lhs_index, rhs_index) for every (out element, k) in k order
// and done(out_index) after each output.
void ForEachTerm(const Case& c, const Shapes& s, const std::function<void(int64_t, int64_t, int64_t)>& fn) {
  const int r = s.out.size();
  const int nb = r - 2;
  std::vector<int> idx(nb, 0);
  const int64_t batches = Numel(std::vector<int32_t>(s.out.begin(), s.out.begin() + nb));
  auto batch_offset = [&](const std::vector<int32_t>& shape) {
    const int lead = r - static_cast<int>(shape.size());
    int64_t off = 0;
    for (int i = 0; i < nb; ++i) {
      const int si = i - lead;
      if (si < 0) continue;
      off = off * shape[si] + (shape[si] == 1 ? 0 : idx[i]);
    }
    return off;
  };
  for (int64_t b = 0; b < batches; ++b) {
    int64_t rem = b;
    for (int i = nb - 1; i >= 0; --i) { idx[i] = rem % s.out[i]; rem /= s.out[i]; }
    const int64_t lbase = batch_offset(c.lhs) * s.M * s.K, rbase = batch_offset(c.rhs) * s.K * s.N;
    for (int m = 0; m < s.M; ++m)
      for (int n = 0; n < s.N; ++n)
        for (int k = 0; k < s.K; ++k) {
          const int64_t li = lbase + (c.adj_x ? int64_t{k} * s.M + m : int64_t{m} * s.K + k);
          const int64_t ri = rbase + (c.adj_y ? int64_t{n} * s.K + k : int64_t{k} * s.N + n);
          fn((b * s.M + m) * s.N + n, li, ri);
        }
  }
}

template <class T>
constexpr DataType TypeOf() {
  if constexpr (std::is_same_v<T, float>) return DataType::kFloat32;
  if constexpr (std::is_same_v<T, int8_t>) return DataType::kInt8;
  if constexpr (std::is_same_v<T, int16_t>) return DataType::kInt16;
  if constexpr (std::is_same_v<T, int32_t>) return DataType::kInt32;
}

template <class T, class O>
std::vector<O> RunCase(const Case& c, const std::vector<T>& lhs, const std::vector<T>& rhs,
                   Quantization lq, Quantization rq, Quantization oq, int version,
                   const std::string& name) {
  OpModel m;
  const int l = m.AddInput(TypeOf<T>(), c.lhs, lq);
  const int r = c.rhs_const ? m.AddConst<T>(TypeOf<T>(), c.rhs, rhs, rq) : m.AddInput(TypeOf<T>(), c.rhs, rq);
  const int out = m.AddOutput(TypeOf<O>(), oq);
  BatchMatMulParams p;
  p.adj_x = c.adj_x;
  p.adj_y = c.adj_y;
  m.AddOp(BuiltinOp::kBatchMatmul, {l, r}, {out}, p, version);
  m.Build();
  m.SetInput<T>(0, lhs);
  if (!c.rhs_const) m.SetInput<T>(1, rhs);
  m.Invoke();
  EXPECT_THAT(m.GetOutputShape(0), ElementsAreArray(ShapesOf(c).out));
  DumpForLiteRt(m, name);
  return m.GetOutput<O>(0);
}

std::vector<Case> ValidCases() { return Cases(); }

TEST(BatchMatMulTest, Float) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  int i = 0;
  for (const Case& c : ValidCases()) {
    SCOPED_TRACE(i);
    std::vector<float> lhs(Numel(c.lhs)), rhs(Numel(c.rhs));
    for (float& v : lhs) v = dist(rng);
    for (float& v : rhs) v = dist(rng);
    const Shapes s = ShapesOf(c);
    std::vector<double> expected(Numel(s.out), 0.0);
    ForEachTerm(c, s, [&](int64_t o, int64_t li, int64_t ri) { expected[o] += double(lhs[li]) * rhs[ri]; });
    const auto got = RunCase<float, float>(c, lhs, rhs, {}, {}, {}, 1, "batch_matmul_float_" + std::to_string(i++));
    ASSERT_EQ(got.size(), expected.size());
    for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], expected[k], 1e-5) << k;
  }
}

template <class T>
void RunQuantized(const char* name, int seed) {
  constexpr bool is16 = std::is_same_v<T, int16_t>;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  const float ls = is16 ? 1.0f / 2048 : 0.03f, rs = is16 ? 1.0f / 4096 : 0.02f, os = is16 ? 1.0f / 512 : 0.1f;
  const int32_t lz = is16 ? 0 : 4, rz = is16 ? 0 : -7, oz = is16 ? 0 : -2;
  int32_t mult;
  int shift;
  quant::QuantizeMultiplier(static_cast<double>(ls * rs) / os, &mult, &shift);
  int i = 0;
  for (const Case& c : ValidCases()) {
    SCOPED_TRACE(i);
    std::vector<T> lhs(Numel(c.lhs)), rhs(Numel(c.rhs));
    for (T& v : lhs) v = static_cast<T>(dist(rng));
    for (T& v : rhs) v = static_cast<T>(dist(rng));
    const Shapes s = ShapesOf(c);
    std::vector<int64_t> acc(Numel(s.out), 0);
    ForEachTerm(c, s, [&](int64_t o, int64_t li, int64_t ri) { acc[o] += int64_t{lhs[li] - lz} * (rhs[ri] - rz); });
    const auto got = RunCase<T, T>(c, lhs, rhs, Q(ls, lz), Q(rs, rz), Q(os, oz), is16 ? 3 : 2,
                               std::string("batch_matmul_") + name + "_" + std::to_string(i++));
    ASSERT_EQ(got.size(), acc.size());
    for (size_t k = 0; k < got.size(); ++k) {
      int32_t v;
      if (is16) {
        const int64_t reduced = mult < 0x7FFF0000 ? ((mult + (1 << 15)) >> 16) : 0x7FFF;
        v = static_cast<int32_t>((acc[k] * reduced + (int64_t{1} << (14 - shift))) >> (15 - shift));
      } else {
        v = quant::MultiplyByQuantizedMultiplier(static_cast<int32_t>(acc[k]), mult, shift);
      }
      v = std::clamp<int32_t>(v + oz, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
      EXPECT_EQ(int32_t{got[k]}, v) << k;
    }
  }
}

TEST(BatchMatMulTest, Int8) { RunQuantized<int8_t>("int8", 12); }
TEST(BatchMatMulTest, Int16) { RunQuantized<int16_t>("int16", 13); }

TEST(BatchMatMulTest, Int8ToInt32) {
  std::mt19937 rng(14);
  std::uniform_int_distribution<int> dist(-128, 127);
  int i = 0;
  for (const Case& c : ValidCases()) {
    SCOPED_TRACE(i);
    std::vector<int8_t> lhs(Numel(c.lhs)), rhs(Numel(c.rhs));
    for (auto& v : lhs) v = static_cast<int8_t>(dist(rng));
    for (auto& v : rhs) v = static_cast<int8_t>(dist(rng));
    const Shapes s = ShapesOf(c);
    std::vector<int32_t> expected(Numel(s.out), 0);
    ForEachTerm(c, s, [&](int64_t o, int64_t li, int64_t ri) { expected[o] += int32_t{lhs[li]} * rhs[ri]; });
    const auto got = RunCase<int8_t, int32_t>(c, lhs, rhs, Q(0.5f, 0), Q(0.25f, 0), {}, 4,
                                          "batch_matmul_int8_int32_" + std::to_string(i++));
    EXPECT_EQ(got, expected);
  }
}

TEST(BatchMatMulTest, RejectsBadInput) {
  auto try_build = [](std::vector<int32_t> l, std::vector<int32_t> r, DataType lt, DataType rt,
                      DataType ot, Quantization lq = {}, Quantization rq = {}, Quantization oq = {}) {
    OpModel m;
    const int a = m.AddInput(lt, l, lq);
    const int b = m.AddInput(rt, r, rq);
    const int out = m.AddOutput(ot, oq);
    m.AddOp(BuiltinOp::kBatchMatmul, {a, b}, {out}, BatchMatMulParams{}, 1);
    return m.TryBuild();
  };
  const auto F = DataType::kFloat32;
  EXPECT_TRUE(try_build({2, 3}, {3, 4}, F, F, F).ok());
  EXPECT_THAT(try_build({2, 3}, {2, 4}, F, F, F).message(), HasSubstr("contracts"));
  EXPECT_THAT(try_build({2, 2, 3}, {3, 3, 4}, F, F, F).message(), HasSubstr("does not broadcast"));
  EXPECT_THAT(try_build({3}, {3, 4}, F, F, F).message(), HasSubstr("rank 2 to 5"));
  EXPECT_THAT(try_build({1, 1, 1, 1, 1, 2, 3}, {3, 4}, F, F, F).message(), HasSubstr("rank 2 to 5"));
  EXPECT_THAT(try_build({2, 3}, {3, 4}, F, DataType::kInt8, F, {}, Q(0.5f, 0)).message(),
              HasSubstr("hybrid"));
  EXPECT_THAT(try_build({2, 3}, {3, 4}, DataType::kInt16, DataType::kInt16, DataType::kInt16,
                        Q(0.5f, 1), Q(0.5f, 0), Q(0.5f, 0)).message(),
              HasSubstr("zero point 0"));
  EXPECT_THAT(try_build({2, 3}, {3, 4}, DataType::kInt8, DataType::kInt16, DataType::kInt8,
                        Q(0.5f, 1), Q(0.5f, 0), Q(0.5f, 0)).message(),
              HasSubstr("unsupported types"));
}

}  // namespace
}  // namespace delegato
