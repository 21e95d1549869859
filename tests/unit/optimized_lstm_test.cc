// The LSTM steps' vector operations (kernels/optimized/lstm.h) against the
// reference's, for every ISA: float32 products bit for bit (sizes below, at
// and above the 16-row vectors and the 4-vector blocks, several batch rows),
// the vector sigmoid and tanh within tolerance, the hybrid row quantization
// and products, the integer products with requantization and the 16-bit
// fixed-point sigmoid and tanh (every input) bit for bit, a
// matrix the packing does not know through the reference loop. Whole
// sequences with every LSTM option run per ISA in lstm_test.cc.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/lstm.h"
#include "kernels/reference/lstm.h"
#include "kernels/reference/lstm_float.h"

namespace delegato {
namespace {

using optimized::Isa;

class LstmKernelTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!optimized::IsaSupported(GetParam()))
      GTEST_SKIP() << optimized::IsaName(GetParam()) << " unsupported";
    if (!optimized::LstmVectorIsa(GetParam()))
      GTEST_SKIP() << optimized::IsaName(GetParam()) << " runs the reference LSTM";
  }
};

std::vector<float> RandomFloats(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

template <class T>
std::vector<T> RandomInts(std::mt19937& rng, size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(rng));
  return v;
}

template <class T>
bool SameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

const int kRows[] = {1, 5, 8, 15, 16, 17, 33, 48, 63, 64, 65, 100, 130};
const int kCols[] = {1, 2, 3, 24, 48, 67};

TEST_P(LstmKernelTest, FloatMatVecIsTheReferenceBitForBit) {
  std::mt19937 rng(3);
  for (int rows : kRows) {
    for (int cols : kCols) {
      for (int batch : {1, 3}) {
        const std::vector<float> matrix = RandomFloats(rng, size_t(rows) * cols, -1.0f, 1.0f);
        const std::vector<float> vec = RandomFloats(rng, size_t(batch) * cols, -2.0f, 2.0f);
        const std::vector<float> start = RandomFloats(rng, size_t(batch) * rows, -1.0f, 1.0f);
        optimized::LstmPackedWeights packed(GetParam());
        packed.AddFloat(matrix.data(), rows, cols);
        optimized::FloatLstmOps ops;
        ops.weights = &packed;
        std::vector<float> want = start, got = start;
        reference::LstmFloatOps().MatVec(matrix.data(), rows, cols, vec.data(), batch,
                                         want.data());
        ops.MatVec(matrix.data(), rows, cols, vec.data(), batch, got.data());
        EXPECT_TRUE(SameBytes(want, got)) << rows << "x" << cols << ", batch " << batch;
      }
    }
  }
}

TEST_P(LstmKernelTest, FloatMatVecOfAnUnknownMatrixIsTheReferenceLoop) {
  std::mt19937 rng(4);
  const std::vector<float> known = RandomFloats(rng, 48 * 24, -1.0f, 1.0f);
  const std::vector<float> other = RandomFloats(rng, 48 * 24, -1.0f, 1.0f);
  const std::vector<float> vec = RandomFloats(rng, 24, -1.0f, 1.0f);
  optimized::LstmPackedWeights packed(GetParam());
  packed.AddFloat(known.data(), 48, 24);
  optimized::FloatLstmOps ops;
  ops.weights = &packed;
  std::vector<float> want(48, 0.5f), got(48, 0.5f);
  reference::LstmFloatOps().MatVec(other.data(), 48, 24, vec.data(), 1, want.data());
  ops.MatVec(other.data(), 48, 24, vec.data(), 1, got.data());
  EXPECT_TRUE(SameBytes(want, got));
}

TEST_P(LstmKernelTest, SigmoidAndTanhWithinTolerance) {
  std::mt19937 rng(5);
  std::vector<float> x = RandomFloats(rng, 997, -20.0f, 20.0f);
  for (float v : {0.0f, -0.0f, 1e-8f, -1e-8f, 0.03f, -0.06f, 9.5f, -9.5f, 16.7f, -17.0f, 40.0f,
                  -40.0f, 87.0f, -87.0f, 88.5f, -88.5f, 95.0f, -95.0f, 200.0f, -200.0f})
    x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  optimized::LstmPackedWeights packed(GetParam());
  optimized::FloatLstmOps ops;
  ops.weights = &packed;
  for (auto act : {reference::LstmActivation::kSigmoid, reference::LstmActivation::kTanh}) {
    std::vector<float> want = x, got = x;
    reference::LstmFloatOps().Activate(act, want.data(), static_cast<int>(want.size()));
    ops.Activate(act, got.data(), static_cast<int>(got.size()));
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 4e-6 * std::abs(want[i]) + 1e-37)
          << "activation " << static_cast<int>(act) << " of " << x[i];
  }
  // NaN stays NaN; the clamping activations are the reference's.
  std::vector<float> nan = {std::numeric_limits<float>::quiet_NaN()};
  ops.Activate(reference::LstmActivation::kSigmoid, nan.data(), 1);
  EXPECT_TRUE(std::isnan(nan[0]));
  for (auto act : {reference::LstmActivation::kNone, reference::LstmActivation::kRelu,
                   reference::LstmActivation::kReluN1To1, reference::LstmActivation::kRelu6}) {
    std::vector<float> want = x, got = x;
    reference::LstmFloatOps().Activate(act, want.data(), static_cast<int>(want.size()));
    ops.Activate(act, got.data(), static_cast<int>(got.size()));
    EXPECT_TRUE(SameBytes(want, got)) << "activation " << static_cast<int>(act);
  }
}

TEST_P(LstmKernelTest, HybridQuantizationAndProductsAreTheReference) {
  std::mt19937 rng(6);
  for (int rows : kRows) {
    for (int cols : kCols) {
      for (bool asymmetric : {false, true}) {
        const int batch = rows % 2 == 0 ? 3 : 1;
        const std::vector<int8_t> matrix = RandomInts<int8_t>(rng, size_t(rows) * cols, -128, 127);
        std::vector<int32_t> row_sums(rows, 0);
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < cols; ++c) row_sums[r] += matrix[size_t(r) * cols + c];
        // Rows of one sign, of both, and one all zero.
        std::vector<float> values = RandomFloats(rng, size_t(batch) * cols, -3.0f, 1.0f);
        if (batch > 1)
          for (int c = 0; c < cols; ++c) values[c] = 0.0f;
        std::vector<int8_t> q_want(values.size()), q_got(values.size());
        std::vector<float> s_want(batch), s_got(batch);
        std::vector<int32_t> z_want(batch, 7), z_got(batch, 7);
        optimized::LstmPackedWeights packed(GetParam());
        packed.AddInt8(matrix.data(), rows, cols);
        optimized::AlignedBuffer<uint8_t> scratch(packed.scratch_bytes());
        optimized::HybridLstmOps ops;
        ops.weights = &packed;
        ops.scratch = scratch.data();
        reference::LstmHybridOps().QuantizeRows(values.data(), batch, cols, asymmetric,
                                                q_want.data(), s_want.data(), z_want.data());
        ops.QuantizeRows(values.data(), batch, cols, asymmetric, q_got.data(), s_got.data(),
                         z_got.data());
        ASSERT_TRUE(SameBytes(q_want, q_got)) << rows << "x" << cols;
        ASSERT_TRUE(SameBytes(s_want, s_got));
        ASSERT_TRUE(SameBytes(z_want, z_got));

        const std::vector<float> start = RandomFloats(rng, size_t(batch) * rows, -1.0f, 1.0f);
        std::vector<float> want = start, got = start;
        reference::LstmHybridOps().MatVecQuantized(matrix.data(), 0.02f, row_sums.data(), rows,
                                                   cols, q_want.data(), s_want.data(),
                                                   z_want.data(), asymmetric, batch, want.data());
        ops.MatVecQuantized(matrix.data(), 0.02f, row_sums.data(), rows, cols, q_got.data(),
                            s_got.data(), z_got.data(), asymmetric, batch, got.data());
        EXPECT_TRUE(SameBytes(want, got))
            << rows << "x" << cols << ", asymmetric " << asymmetric;
      }
    }
  }
}

template <class T>
void CheckIntegerProducts(Isa isa, std::mt19937& rng, int32_t zero_point) {
  for (int rows : kRows) {
    for (int cols : kCols) {
      const int batch = rows % 2 == 0 ? 2 : 1;
      const std::vector<int8_t> matrix = RandomInts<int8_t>(rng, size_t(rows) * cols, -128, 127);
      const std::vector<int8_t> x = RandomInts<int8_t>(rng, size_t(batch) * cols, -128, 127);
      const std::vector<int32_t> bias = RandomInts<int32_t>(rng, rows, -40000, 40000);
      const std::vector<T> start = RandomInts<T>(rng, size_t(batch) * rows,
                                                 std::numeric_limits<T>::min(),
                                                 std::numeric_limits<T>::max());
      optimized::LstmPackedWeights packed(isa);
      packed.AddInt8(matrix.data(), rows, cols);
      optimized::AlignedBuffer<uint8_t> scratch(packed.scratch_bytes());
      optimized::IntegerLstmOps ops;
      ops.weights = &packed;
      ops.scratch = scratch.data();
      for (auto [multiplier, shift] : {std::pair{1518500250, -8}, std::pair{1073741824, 2}}) {
        std::vector<T> want = start, got = start;
        reference::LstmIntegerOps().MatMulRequant(x.data(), bias.data(), matrix.data(), multiplier,
                                                  shift, batch, cols, rows, zero_point,
                                                  want.data());
        ops.MatMulRequant(x.data(), bias.data(), matrix.data(), multiplier, shift, batch, cols,
                          rows, zero_point, got.data());
        EXPECT_TRUE(SameBytes(want, got)) << rows << "x" << cols << ", shift " << shift;
      }
    }
  }
}

TEST_P(LstmKernelTest, IntegerProductsAreTheReference) {
  std::mt19937 rng(8);
  CheckIntegerProducts<int16_t>(GetParam(), rng, 0);
  CheckIntegerProducts<int8_t>(GetParam(), rng, -3);
}

// Every int16 input, with lengths that leave every tail size of both vector widths.
TEST_P(LstmKernelTest, FixedPointSigmoidAndTanhAreTheReferenceForEveryInput) {
  std::vector<int16_t> all(65536 + 31);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int16_t>(i - 32768);
  optimized::LstmPackedWeights packed(GetParam());
  optimized::IntegerLstmOps ops;
  ops.weights = &packed;
  for (int n : {65536 + 31, 65536 + 17, 65536 + 1}) {
    std::vector<int16_t> want(all.begin(), all.begin() + n), got = want;
    reference::LstmIntegerOps().Sigmoid(want.data(), n);
    ops.Sigmoid(got.data(), n);
    ASSERT_EQ(want, got) << "sigmoid, n " << n;
  }
  for (int bits = 0; bits <= 6; ++bits) {
    const int n = 65536 + 5 + bits;
    std::vector<int16_t> want(n, 7), got(n, 7);
    reference::LstmIntegerOps().Tanh(bits, all.data(), n, want.data());
    ops.Tanh(bits, all.data(), n, got.data());
    EXPECT_EQ(want, got) << "tanh with " << bits << " integer bits";
  }
  // Out-of-range integer bits leave the output as the reference does (untouched).
  std::vector<int16_t> want(40, 9), got(40, 9);
  reference::LstmIntegerOps().Tanh(7, all.data(), 40, want.data());
  ops.Tanh(7, all.data(), 40, got.data());
  EXPECT_EQ(want, got);
}

// "Optimized..." names: the aarch64 stage (scripts/test_aarch64.sh) runs these.
INSTANTIATE_TEST_SUITE_P(OptimizedLstm, LstmKernelTest,
                         ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni, Isa::kNeon,
                                           Isa::kDotprod, Isa::kI8mm),
                         [](const auto& info) { return optimized::IsaName(info.param); });

}  // namespace
}  // namespace delegato
