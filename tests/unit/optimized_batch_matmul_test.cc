// float32 and int8 BATCH_MATMUL fast paths against the reference kernel, byte
// for byte, for every ISA: column counts below, at and above the 8-, 16- and
// 32-lane steps, adj_x / adj_y, broadcast batch dimensions; int8 also with
// extreme bytes, zero points and requantization shifts.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/batch_matmul_float.h"
#include "kernels/optimized/batch_matmul_int8.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/batch_matmul.h"

namespace delegato {
namespace {

using optimized::Isa;

class FloatBatchMatMulTest : public ::testing::TestWithParam<Isa> {};

TEST_P(FloatBatchMatMulTest, EqualsReference) {
  const Isa isa = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  // Rows around the 4-row tile, columns around the 16- and 8-column steps.
  for (int rows : {1, 3, 4, 7, 16}) {
    for (int cols : {1, 7, 8, 9, 16, 31, 32, 33, 72}) {
      for (int depth : {1, 5, 16}) {
        for (int variant = 0; variant < 8; ++variant) {
          reference::BatchMatMulGeometry g;
          g.rows = rows;
          g.cols = cols;
          g.depth = depth;
          g.adj_x = (variant & 1) != 0;
          g.adj_y = (variant & 2) != 0;
          // Batches [2, 3] x [1, 3] (broadcast lhs over rhs) or [1] x [2].
          if ((variant & 4) != 0) {
            g.lhs_batch[1] = 2; g.lhs_batch[2] = 3;
            g.rhs_batch[2] = 3;
            g.out_batch[1] = 2; g.out_batch[2] = 3;
          } else {
            g.rhs_batch[2] = 2;
            g.out_batch[2] = 2;
          }
          auto count = [](const int32_t* b) { return int64_t{b[0]} * b[1] * b[2]; };
          std::vector<float> lhs(count(g.lhs_batch) * rows * depth);
          std::vector<float> rhs(count(g.rhs_batch) * depth * cols);
          for (float& x : lhs) x = dist(rng);
          for (float& x : rhs) x = dist(rng);
          lhs[0] = -0.0f;
          const size_t out_size = count(g.out_batch) * rows * cols;
          std::vector<float> ref(out_size, -1.0f), fast(out_size, -2.0f);
          std::vector<float> scratch(optimized::BatchMatMulFloatScratchBytes(g) / sizeof(float) + 1);
          reference::BatchMatMulFloat(g, lhs.data(), rhs.data(), ref.data());
          optimized::BatchMatMulFloat(isa, g, lhs.data(), rhs.data(), fast.data(), scratch.data());
          EXPECT_EQ(0, std::memcmp(ref.data(), fast.data(), out_size * sizeof(float)))
              << optimized::IsaName(isa) << " " << rows << "x" << depth << "x" << cols
              << " variant " << variant;
        }
      }
    }
  }
}

class Int8BatchMatMulTest : public ::testing::TestWithParam<Isa> {};

TEST_P(Int8BatchMatMulTest, EqualsReference) {
  const Isa isa = GetParam();
  if (!optimized::IsaSupported(isa)) GTEST_SKIP() << optimized::IsaName(isa) << " unsupported";
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> byte(-128, 127);
  for (int rows : {1, 3, 16}) {
    for (int cols : {1, 7, 8, 9, 15, 16, 17, 33}) {
      for (int depth : {1, 5, 16}) {
        for (int variant = 0; variant < 8; ++variant) {
          reference::BatchMatMulGeometry g;
          g.rows = rows;
          g.cols = cols;
          g.depth = depth;
          g.adj_x = (variant & 1) != 0;
          g.adj_y = (variant & 2) != 0;
          if ((variant & 4) != 0) {
            g.lhs_batch[1] = 2; g.lhs_batch[2] = 3;
            g.rhs_batch[2] = 3;
            g.out_batch[1] = 2; g.out_batch[2] = 3;
          } else {
            g.rhs_batch[2] = 2;
            g.out_batch[2] = 2;
          }
          auto count = [](const int32_t* b) { return int64_t{b[0]} * b[1] * b[2]; };
          std::vector<int8_t> lhs(count(g.lhs_batch) * rows * depth);
          std::vector<int8_t> rhs(count(g.rhs_batch) * depth * cols);
          for (int8_t& x : lhs) x = static_cast<int8_t>(byte(rng));
          for (int8_t& x : rhs) x = static_cast<int8_t>(byte(rng));
          lhs[0] = -128;
          rhs[0] = 127;
          reference::BatchMatMulQuantParams q;
          q.lhs_offset = (variant & 1) ? 128 : -7;
          q.rhs_offset = (variant & 2) ? -127 : 3;
          q.output_offset = (variant & 4) ? -5 : 12;
          q.multiplier = 1234567890 + variant * 99991;
          q.shift = (rows + cols + depth) % 2 ? -9 : 1;
          q.act_min = -128;
          q.act_max = (variant & 1) ? 100 : 127;
          const size_t out_size = count(g.out_batch) * rows * cols;
          std::vector<int8_t> ref(out_size, 1), fast(out_size, 2);
          std::vector<int32_t> scratch(optimized::BatchMatMulInt8ScratchBytes(g) /
                                       sizeof(int32_t) + 1);
          reference::BatchMatMulQuantized<int8_t, int32_t>(g, q, lhs.data(), rhs.data(),
                                                           ref.data());
          optimized::BatchMatMulInt8(isa, g, q, lhs.data(), rhs.data(), fast.data(),
                                     scratch.data());
          EXPECT_EQ(ref, fast) << optimized::IsaName(isa) << " " << rows << "x" << depth
                               << "x" << cols << " variant " << variant;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, Int8BatchMatMulTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(optimized::IsaName(info.param));
                         });

INSTANTIATE_TEST_SUITE_P(Isas, FloatBatchMatMulTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(optimized::IsaName(info.param));
                         });

}  // namespace
}  // namespace delegato
