// Optimized quantized ADD / SUB / MUL (kernels/optimized/quant_binary)
// against the reference kernels, bit for bit: random broadcast shapes (runs
// shorter and longer than the 8/16 lanes, broadcast scalars on either side),
// scales, zero points at the extremes, fused activations, every ISA this CPU
// runs, outputs split arbitrarily; then through the interpreter with 1 and 2
// threads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#if DELEGATO_X86
#include <immintrin.h>
#endif

#include "kernels/optimized/isa.h"
#include "kernels/optimized/quant_binary.h"
#include "kernels/optimized/quant_binary16.h"
#include "kernels/optimized/requantize_magnitude.h"
#include "kernels/quantization.h"
#include "kernels/reference/elementwise.h"
#include "test_util.h"

namespace delegato {
namespace {

using optimized::Isa;
using testing::SupportedIsas;
using optimized::QuantBinary;
using testing::OpModel;
using testing::Q;

struct Shapes {
  std::vector<int32_t> a, b, out;
};

Shapes RandomShapes(std::mt19937& rng) {
  const int rank = std::uniform_int_distribution<int>(1, 4)(rng);
  Shapes s;
  for (int i = 0; i < rank; ++i) {
    const int d = i == rank - 1 ? std::vector<int>{1, 3, 7, 8, 15, 16, 17, 24, 33, 64, 70}[rng() % 11]
                                : std::uniform_int_distribution<int>(1, 6)(rng);
    s.out.push_back(d);
    const int mode = std::uniform_int_distribution<int>(0, 5)(rng);
    s.a.push_back(mode == 1 ? 1 : d);
    s.b.push_back(mode == 2 ? 1 : d);
  }
  // Sometimes a lower-rank or scalar second input.
  if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) s.b.erase(s.b.begin(), s.b.begin() + rng() % (s.b.size() + 1));
  std::vector<int32_t> out;
  reference::BroadcastShapes(s.a, s.b, &out);
  s.out = out;
  return s;
}

int64_t Count(const std::vector<int32_t>& dims) {
  int64_t n = 1;
  for (int32_t d : dims) n *= d;
  return n;
}

struct Case {
  QuantBinary::Kind kind;
  bool is_uint8;
  float s1, s2, so;
  int32_t z1, z2, zo;
  Activation act;
};

int32_t ZeroPoint(std::mt19937& rng, bool u8) {
  const int lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
  const int pick = std::uniform_int_distribution<int>(0, 3)(rng);
  return pick == 0 ? lo : pick == 1 ? hi : std::uniform_int_distribution<int>(lo, hi)(rng);
}

Case RandomCase(std::mt19937& rng, QuantBinary::Kind kind, bool u8) {
  std::uniform_real_distribution<float> log_scale(-3.0f, 0.0f);
  Case c{kind, u8, std::pow(10.0f, log_scale(rng)), std::pow(10.0f, log_scale(rng)),
         std::pow(10.0f, log_scale(rng)), ZeroPoint(rng, u8), ZeroPoint(rng, u8),
         ZeroPoint(rng, u8), Activation::kNone};
  const int act = std::uniform_int_distribution<int>(0, 3)(rng);
  c.act = act == 1 ? Activation::kRelu : act == 2 ? Activation::kRelu6 : Activation::kNone;
  return c;
}

// Parameters derived as the op's Prepare does (below-one multipliers).
void Params(const Case& c, reference::QuantizedAddParams* add, reference::QuantizedMulDivParams* mul) {
  add->input1_offset = mul->input1_offset = -c.z1;
  add->input2_offset = mul->input2_offset = -c.z2;
  add->output_offset = mul->output_offset = c.zo;
  add->left_shift = 20;
  const double twice_max = 2 * static_cast<double>(std::max(c.s1, c.s2));
  quant::QuantizeMultiplier(c.s1 / twice_max, &add->input1_multiplier, &add->input1_shift);
  quant::QuantizeMultiplier(c.s2 / twice_max, &add->input2_multiplier, &add->input2_shift);
  quant::QuantizeMultiplier(twice_max / ((1 << 20) * static_cast<double>(c.so)),
                            &add->output_multiplier, &add->output_shift);
  quant::QuantizeMultiplier(c.s1 * c.s2 / c.so, &mul->output_multiplier, &mul->output_shift);
  const int lo = c.is_uint8 ? 0 : -128, hi = c.is_uint8 ? 255 : 127;
  int32_t amin = lo, amax = hi;
  if (c.act != Activation::kNone) {
    if (c.is_uint8)
      quant::ActivationRangeQuantized<uint8_t>(c.act, c.so, c.zo, &amin, &amax);
    else
      quant::ActivationRangeQuantized<int8_t>(c.act, c.so, c.zo, &amin, &amax);
  }
  add->act_min = mul->act_min = amin;
  add->act_max = mul->act_max = amax;
}

template <class T>
std::vector<uint8_t> Reference(const Case& c, const reference::BroadcastPlan& plan,
                               const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                               const reference::QuantizedAddParams& add,
                               const reference::QuantizedMulDivParams& mul) {
  std::vector<uint8_t> out(plan.num_elements);
  const T* pa = reinterpret_cast<const T*>(a.data());
  const T* pb = reinterpret_cast<const T*>(b.data());
  T* po = reinterpret_cast<T*>(out.data());
  if (c.kind == QuantBinary::Kind::kMul)
    reference::QuantizedMulBroadcast(plan, pa, pb, po, mul, 0, plan.num_elements);
  else
    reference::QuantizedAdd(plan, pa, pb, po, add, c.kind == QuantBinary::Kind::kSub, 0,
                            plan.num_elements);
  return out;
}

// The kernel on every ISA this CPU runs, the output split `splits` ways (last
// chunk first), against the reference's bytes.
void ExpectEveryIsaMatches(const Case& c, const reference::BroadcastPlan& plan,
                           const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                           const reference::QuantizedAddParams& add,
                           const reference::QuantizedMulDivParams& mul,
                           std::initializer_list<int> split_counts, int trial) {
  const std::vector<uint8_t> expected = c.is_uint8 ? Reference<uint8_t>(c, plan, a, b, add, mul)
                                                   : Reference<int8_t>(c, plan, a, b, add, mul);
  for (Isa isa : SupportedIsas()) {
    const QuantBinary k(c.kind, c.is_uint8, add, mul, isa);
    for (int splits : split_counts) {
      std::vector<uint8_t> out(plan.num_elements, 0xCD);
      for (int i = splits - 1; i >= 0; --i)
        k.Run(plan, a.data(), b.data(), out.data(), plan.num_elements * i / splits,
              plan.num_elements * (i + 1) / splits);
      ASSERT_EQ(expected, out) << optimized::IsaName(isa) << " trial " << trial << " kind "
                               << static_cast<int>(c.kind) << " splits " << splits;
    }
  }
}

TEST(OptimizedBinaryTest, RandomizedMatchesReference) {
  std::mt19937 rng(31);
  const QuantBinary::Kind kinds[] = {QuantBinary::Kind::kAdd, QuantBinary::Kind::kSub,
                                     QuantBinary::Kind::kMul};
  for (int trial = 0; trial < 600; ++trial) {
    const Case c = RandomCase(rng, kinds[trial % 3], (trial / 3) % 2 == 0);
    reference::QuantizedAddParams add;
    reference::QuantizedMulDivParams mul;
    Params(c, &add, &mul);
    ASSERT_TRUE(c.kind == QuantBinary::Kind::kMul ? QuantBinary::CoversMul(mul)
                                                  : QuantBinary::CoversAddSub(add));
    Shapes s = RandomShapes(rng);
    // Short repeated rows (a mean subtracted per channel, either side).
    if (trial % 10 == 3) s = Shapes{{1, 40, 41, 3}, {1, 1, 1, 3}, {1, 40, 41, 3}};
    if (trial % 10 == 6) s = Shapes{{7}, {2, 9, 7}, {2, 9, 7}};
    if (trial % 10 == 9) s = Shapes{{48, 48, 1}, {1, 17}, {48, 48, 17}};
    // Long rows taken several per call (QuantBinary::RunRows): a squeeze-and-
    // excitation scale per channel, one value per row on either side.
    if (trial % 10 == 1) s = Shapes{{1, 6, 5, 149}, {1, 1, 1, 149}, {1, 6, 5, 149}};
    if (trial % 10 == 4) s = Shapes{{1, 1, 7, 1}, {1, 3, 7, 83}, {1, 3, 7, 83}};
    if (trial % 10 == 7) s = Shapes{{2, 1, 96}, {2, 9, 96}, {2, 9, 96}};
    const reference::BroadcastPlan plan = reference::MakeBroadcastPlan(s.a, s.b, s.out);
    std::vector<uint8_t> a(Count(s.a)), b(Count(s.b));
    for (auto& v : a) v = static_cast<uint8_t>(rng());
    for (auto& v : b) v = static_cast<uint8_t>(rng());
    ASSERT_NO_FATAL_FAILURE(ExpectEveryIsaMatches(c, plan, a, b, add, mul, {1, 2, 3, 7}, trial));
  }
}

// int16 MUL (optimized::QuantMul16) against the reference: random broadcast
// shapes, inputs over the whole int16 range (with -32768 * -32768 among
// them), output scales giving right and left shifts (which wrap as the
// reference's do), output offsets, clamps; outputs split arbitrarily.
TEST(OptimizedBinaryTest, Int16MulMatchesReference) {
  if (!optimized::QuantMul16Covers(reference::QuantizedMulDivParams{}, optimized::SelectedIsa()))
    GTEST_SKIP() << "int16 MUL runs the reference on " << optimized::IsaName(optimized::SelectedIsa());
  std::mt19937 rng(47);
  for (int trial = 0; trial < 400; ++trial) {
    reference::QuantizedMulDivParams p;
    // Real output scale s1 * s2 / so from 2^-40 to 2^8.
    const double real = std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(rng),
                                   std::uniform_int_distribution<int>(-39, 9)(rng));
    quant::QuantizeMultiplier(real, &p.output_multiplier, &p.output_shift);
    if (p.output_shift < -31) continue;
    p.output_offset = trial % 4 == 1 ? std::uniform_int_distribution<int>(-300, 300)(rng) : 0;
    p.act_min = -32768;
    p.act_max = 32767;
    if (trial % 3 == 1) {
      p.act_min = std::uniform_int_distribution<int>(-32768, 0)(rng);
      p.act_max = std::uniform_int_distribution<int>(0, 32767)(rng);
    }
    ASSERT_TRUE(optimized::QuantMul16Covers(p, optimized::SelectedIsa()));
    Shapes s = RandomShapes(rng);
    // A squeeze-and-excitation scale: one value per channel, per pixel.
    if (trial % 5 == 2) s = Shapes{{1, 6, 7, 40}, {1, 1, 1, 40}, {1, 6, 7, 40}};
    const reference::BroadcastPlan plan = reference::MakeBroadcastPlan(s.a, s.b, s.out);
    std::vector<int16_t> a(Count(s.a)), b(Count(s.b));
    std::uniform_int_distribution<int> value(-32768, 32767);
    for (auto& v : a) v = static_cast<int16_t>(trial % 7 == 0 ? -32768 : value(rng));
    for (auto& v : b) v = static_cast<int16_t>(trial % 7 == 0 ? -32768 : value(rng));
    const int64_t n = plan.num_elements;
    std::vector<int16_t> want(n), got(n, 0x5555);
    reference::QuantizedMulBroadcast(plan, a.data(), b.data(), want.data(), p, 0, n);
    const int64_t split = n / 3;
    optimized::QuantMul16(plan, a.data(), b.data(), got.data(), p, split, n);
    optimized::QuantMul16(plan, a.data(), b.data(), got.data(), p, 0, split);
    ASSERT_EQ(got, want) << "trial " << trial << " multiplier " << p.output_multiplier
                         << " shift " << p.output_shift;
  }
}

// int16 ADD and SUB (zero points 0, left shift 15) from random scales, as
// Prepare derives them: broadcasts, clamps, extreme values, split ranges.
TEST(OptimizedBinaryTest, Int16AddSubMatchesReference) {
  reference::QuantizedAddParams probe;
  probe.left_shift = 15;
  if (!optimized::QuantAddSub16Covers(probe, optimized::SelectedIsa()))
    GTEST_SKIP() << "int16 ADD runs the reference on " << optimized::IsaName(optimized::SelectedIsa());
  // Shifted further, or offset, an int16 input would leave int32.
  probe.left_shift = 16;
  EXPECT_FALSE(optimized::QuantAddSub16Covers(probe, optimized::SelectedIsa()));
  probe.left_shift = 15;
  probe.input2_offset = 1;
  EXPECT_FALSE(optimized::QuantAddSub16Covers(probe, optimized::SelectedIsa()));
  std::mt19937 rng(53);
  for (int trial = 0; trial < 400; ++trial) {
    reference::QuantizedAddParams p;
    p.left_shift = 15;
    auto scale = [&] {
      return std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(rng),
                        std::uniform_int_distribution<int>(-16, 0)(rng));
    };
    const double s1 = scale(), s2 = trial % 6 == 3 ? s1 : scale(), so = scale();
    const double twice_max = 2 * std::max(s1, s2);
    const double real_output = twice_max / (double{1 << 15} * so);
    if (real_output >= 1.0) continue;  // Prepare refuses it
    quant::QuantizeMultiplier(s1 / twice_max, &p.input1_multiplier, &p.input1_shift);
    quant::QuantizeMultiplier(s2 / twice_max, &p.input2_multiplier, &p.input2_shift);
    quant::QuantizeMultiplier(real_output, &p.output_multiplier, &p.output_shift);
    if (p.output_shift < -31) continue;
    p.act_min = -32768;
    p.act_max = 32767;
    if (trial % 3 == 1) {
      p.act_min = std::uniform_int_distribution<int>(-32768, 0)(rng);
      p.act_max = std::uniform_int_distribution<int>(0, 32767)(rng);
    }
    ASSERT_TRUE(optimized::QuantAddSub16Covers(p, optimized::SelectedIsa()));
    const bool subtract = trial % 2 == 1;
    Shapes s = RandomShapes(rng);
    if (trial % 5 == 2) s = Shapes{{1, 6, 7, 40}, {1, 1, 1, 40}, {1, 6, 7, 40}};
    const reference::BroadcastPlan plan = reference::MakeBroadcastPlan(s.a, s.b, s.out);
    std::vector<int16_t> a(Count(s.a)), b(Count(s.b));
    std::uniform_int_distribution<int> value(-32768, 32767);
    const int extreme = trial % 7 == 0 ? -32768 : trial % 7 == 1 ? 32767 : 0;
    for (auto& v : a) v = static_cast<int16_t>(extreme != 0 ? extreme : value(rng));
    for (auto& v : b) v = static_cast<int16_t>(extreme != 0 ? -extreme - 1 : value(rng));
    const int64_t n = plan.num_elements;
    std::vector<int16_t> want(n), got(n, 0x5555);
    reference::QuantizedAdd(plan, a.data(), b.data(), want.data(), p, subtract, 0, n);
    const int64_t split = n / 3;
    optimized::QuantAddSub16(plan, a.data(), b.data(), got.data(), p, subtract, split, n);
    optimized::QuantAddSub16(plan, a.data(), b.data(), got.data(), p, subtract, 0, split);
    ASSERT_EQ(got, want) << "trial " << trial << (subtract ? " SUB" : " ADD");
  }
}

// ADD / SUB / MUL of two contiguous inputs over every pair of bytes (a
// 256 x 256 grid): on x86 the rescales take the magnitude form where the
// kernel finds it exact (QuantBinary::form), else the output that form with
// its tie term; some output multipliers get 16 trailing zero bits, whose
// ties rule the plain form out.
TEST(OptimizedBinaryTest, MagnitudeFormEveryBytePair) {
  std::mt19937 rng(47);
  int magnitude[3] = {}, tie[3] = {};
  std::vector<uint8_t> a(65536), b(65536);
  for (int i = 0; i < 65536; ++i) {
    a[i] = static_cast<uint8_t>(i);
    b[i] = static_cast<uint8_t>(i >> 8);
  }
  const reference::BroadcastPlan plan = reference::MakeBroadcastPlan({65536}, {65536}, {65536});
  const QuantBinary::Kind kinds[] = {QuantBinary::Kind::kAdd, QuantBinary::Kind::kSub,
                                     QuantBinary::Kind::kMul};
  for (int trial = 0; trial < 72; ++trial) {
    const int kind = trial % 3;
    const Case c = RandomCase(rng, kinds[kind], trial % 6 < 3);
    reference::QuantizedAddParams add;
    reference::QuantizedMulDivParams mul;
    Params(c, &add, &mul);
    if (trial % 4 == 2) {
      add.output_multiplier = add.output_multiplier >> 16 << 16;
      mul.output_multiplier = mul.output_multiplier >> 16 << 16;
    }
    ASSERT_NO_FATAL_FAILURE(ExpectEveryIsaMatches(c, plan, a, b, add, mul, {1, 3}, trial));
    const QuantBinary k(c.kind, c.is_uint8, add, mul, Isa::kScalar);
    magnitude[kind] += k.form() == QuantBinary::kMagnitudeForm;
    tie[kind] += k.form() == QuantBinary::kMagnitudeTieForm;
  }
  for (int kind = 0; kind < 3; ++kind) {
    EXPECT_GT(magnitude[kind], 10) << kind;
    EXPECT_GT(tie[kind], 0) << kind;
  }
}

#if DELEGATO_X86
// GCC 12 reports false "used uninitialized" warnings from inside its own
// AVX-512 intrinsic headers here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// The vector magnitude forms with the tie term, the sign applied: 16 lanes
// through MagnitudeTie512, or two halves of 8 through MagnitudeTie256.
DLG_TARGET_AVX512 void VectorTie512(const int32_t* acc, const optimized::MagnitudeChannels& mc,
                                    int32_t* out) {
  const __m512i v = _mm512_loadu_si512(acc);
  const __m512i m = optimized::MagnitudeTie512(v, optimized::LoadMagnitudeRequant512(mc, 0));
  _mm512_storeu_si512(out, _mm512_mask_sub_epi32(m, _mm512_movepi32_mask(v),
                                                 _mm512_setzero_si512(), m));
}
DLG_TARGET_AVX2 void VectorTie256(const int32_t* acc, const optimized::MagnitudeChannels& mc,
                                  int32_t* out) {
  for (int half = 0; half < 2; ++half) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + 8 * half));
    const __m256i m =
        optimized::MagnitudeTie256(v, optimized::LoadMagnitudeRequant256(mc, 8 * half));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * half), _mm256_sign_epi32(m, v));
  }
}
#pragma GCC diagnostic pop
#endif

// The magnitude form with its tie term, sign(acc) * ((|acc| M + 2^30 +
// r 2^31 - [acc < 0]) >> (31 + e)), is MultiplyByQuantizedMultiplier for
// every acc: random values and the ties (|acc| M = 2^30 mod 2^31, both
// roundings at once), multipliers with 0..30 trailing zero bits, right
// shifts 0..31.
TEST(OptimizedBinaryTest, MagnitudeTieTermIsTheReference) {
  std::mt19937 rng(53);
  int ties = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int v = std::uniform_int_distribution<int>(0, 30)(rng);
    const int32_t m = static_cast<int32_t>(
        ((static_cast<uint32_t>(rng()) | 1u) << v & 0x3FFFFFFFu) | 0x40000000u);
    const int32_t shift = -std::uniform_int_distribution<int>(0, 31)(rng);
    int64_t magnitude = std::uniform_int_distribution<int64_t>(0, (int64_t{1} << 31) - 1)(rng);
    if (trial % 2 == 0) {
      // Both roundings tie (MagnitudeExact's derivation): |acc| = 2^z q, z =
      // 30 - v, q odd with q m = 2^e - 1 modulo 2^(e + 1) (m: M's odd part);
      // for e = 0 any odd q.
      const int z = 30 - v, e = -shift;
      const uint64_t odd = static_cast<uint64_t>(m) >> v;
      uint64_t inverse = odd;
      for (int i = 0; i < 5; ++i) inverse *= 2 - odd * inverse;
      const uint64_t period = uint64_t{1} << (e + 1);
      uint64_t q = e == 0 ? 1 : (((uint64_t{1} << e) - 1) * inverse) & (period - 1);
      q += (rng() % 8) * (e == 0 ? 2 : period);
      magnitude = static_cast<int64_t>(q << z);
      if (magnitude >= (int64_t{1} << 31)) continue;
    }
    int32_t lanes[16], expected[16];
    ties += trial % 2 == 0 && optimized::MagnitudeValue(-static_cast<int32_t>(magnitude), m, shift) !=
                                  quant::MultiplyByQuantizedMultiplier(
                                      -static_cast<int32_t>(magnitude), m, shift);
    for (int sign : {1, -1}) {
      const int32_t acc = static_cast<int32_t>(sign * magnitude);
      ASSERT_EQ(optimized::MagnitudeValue(acc, m, shift, /*tie=*/true),
                quant::MultiplyByQuantizedMultiplier(acc, m, shift))
          << "acc " << acc << " m " << m << " shift " << shift;
    }
#if DELEGATO_X86
    // Every lane (even and odd ones differ): this value and neighbours,
    // each with either sign in both kinds of lane.
    for (int i = 0; i < 16; ++i) {
      const int64_t value = magnitude + (i / 4) - 1;
      lanes[i] = static_cast<int32_t>((i / 2 % 2 == 0 ? 1 : -1) *
                                      std::clamp<int64_t>(value, 0, (int64_t{1} << 31) - 1));
      expected[i] = quant::MultiplyByQuantizedMultiplier(lanes[i], m, shift);
    }
    optimized::MagnitudeChannels mc;
    mc.Init(16);
    for (int c = 0; c < 16; ++c) mc.Set(c, m, shift);
    for (Isa isa : SupportedIsas()) {
      int32_t got[16];
      if (isa == Isa::kAvx512Vnni)
        VectorTie512(lanes, mc, got);
      else if (isa == Isa::kAvx2)
        VectorTie256(lanes, mc, got);
      else
        continue;
      for (int i = 0; i < 16; ++i)
        ASSERT_EQ(got[i], expected[i]) << optimized::IsaName(isa) << " lane " << i << " acc "
                                       << lanes[i] << " m " << m << " shift " << shift;
    }
#endif
  }
  EXPECT_GT(ties, 1000);  // values where the plain form differs
}

// Short inner rows repeating or spread along the output: a [P] row against
// [..., R, P], [R, 1] against [P] or [R, P], scalars, [..., 1] against
// [..., C]; either side, odd sizes, outer dimensions broadcast too.
Shapes ShortPeriodShapes(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int period = pick(0, 9) == 0 ? std::vector<int>{31, 32, 33, 62, 63, 64, 65}[rng() % 7] : pick(1, 20);
  // Sometimes long enough for the outputs to be tabulated per phase.
  const int size = pick(0, 5);
  const int rows = size == 0 ? pick(1, 5) : size == 1 ? pick(2040, 4100) : pick(6, 90);
  const int outer_rank = pick(0, 2);
  Shapes s;
  for (int i = 0; i < outer_rank; ++i) {
    const int d = pick(1, 4);
    const int mode = pick(0, 3);
    s.a.push_back(mode == 1 ? 1 : d);
    s.b.push_back(mode == 2 ? 1 : d);
  }
  switch (pick(0, 4)) {
    case 0:  // [.., R, P] and a repeating [P] row
      s.a.insert(s.a.end(), {rows, period});
      s.b.insert(s.b.end(), {1, period});
      break;
    case 1:  // [.., R, 1] against [P]
      s.a.insert(s.a.end(), {rows, 1});
      s.b.insert(s.b.end(), {1, period});
      break;
    case 2:  // [.., R, 1] against [.., R, P]
      s.a.insert(s.a.end(), {rows, 1});
      s.b.insert(s.b.end(), {rows, period});
      break;
    case 3:  // a scalar
      s.a.insert(s.a.end(), {rows, period});
      s.b.assign(1, 1);
      break;
    default:  // a lower-rank row
      s.a.insert(s.a.end(), {rows, period});
      s.b.assign(1, period);
      break;
  }
  if (pick(0, 1) == 1) std::swap(s.a, s.b);
  reference::BroadcastShapes(s.a, s.b, &s.out);
  return s;
}

TEST(OptimizedBinaryTest, ShortPeriodsMatchReference) {
  std::mt19937 rng(57);
  const QuantBinary::Kind kinds[] = {QuantBinary::Kind::kAdd, QuantBinary::Kind::kSub,
                                     QuantBinary::Kind::kMul};
  for (int trial = 0; trial < 900; ++trial) {
    Case c = RandomCase(rng, kinds[trial % 3], (trial / 3) % 2 == 0);
    // Extreme scale ratios: tiny input multipliers, MUL multipliers above one.
    if (trial % 7 == 0) {
      c.s1 = 1.0f;
      c.s2 = 1e-4f;
      c.so = 1e-4f;
    } else if (trial % 7 == 1) {
      c.s1 = 2e-4f;
      c.s2 = 0.9f;
      c.so = 3e-4f;
    }
    reference::QuantizedAddParams add;
    reference::QuantizedMulDivParams mul;
    Params(c, &add, &mul);
    if (trial % 5 == 2) add.left_shift = static_cast<int>(rng() % 21);
    ASSERT_TRUE(c.kind == QuantBinary::Kind::kMul ? QuantBinary::CoversMul(mul)
                                                  : QuantBinary::CoversAddSub(add));
    Shapes s = ShortPeriodShapes(rng);
    if (trial == 0) s = Shapes{{1, 192, 192, 3}, {3}, {1, 192, 192, 3}};
    if (trial == 1) s = Shapes{{1, 48, 48, 1}, {1, 1, 1, 17}, {1, 48, 48, 17}};
    const reference::BroadcastPlan plan = reference::MakeBroadcastPlan(s.a, s.b, s.out);
    std::vector<uint8_t> a(Count(s.a)), b(Count(s.b));
    for (auto& v : a) v = static_cast<uint8_t>(rng());
    for (auto& v : b) v = static_cast<uint8_t>(rng());
    // Extreme values as well as random ones.
    for (auto* v : {&a, &b})
      for (size_t i = 0; i < v->size(); i += 1 + rng() % 5) (*v)[i] = (rng() & 1) ? 0x7F : 0x80;
    ASSERT_NO_FATAL_FAILURE(ExpectEveryIsaMatches(c, plan, a, b, add, mul, {1, 2, 3, 7}, trial));
  }
}

TEST(OptimizedBinaryTest, ConstantTablesMatchReference) {
  // A constant per-channel operand (periods 1 to 64, on either side) against
  // an image: Prepare's table must give the reference's bytes; period 65,
  // a constant that varies along another dimension, or an image that is
  // itself broadcast, must not be tabulated.
  std::mt19937 rng(77);
  const QuantBinary::Kind kinds[] = {QuantBinary::Kind::kAdd, QuantBinary::Kind::kSub,
                                     QuantBinary::Kind::kMul};
  int tabulated = 0;
  for (int trial = 0; trial < 240; ++trial) {
    Case c = RandomCase(rng, kinds[trial % 3], (trial / 3) % 2 == 0);
    reference::QuantizedAddParams add;
    reference::QuantizedMulDivParams mul;
    Params(c, &add, &mul);
    const int32_t channels = std::vector<int32_t>{1, 3, 16, 24, 40, 64, 65}[trial % 7];
    const int shape = (trial / 7) % 4;  // 0, 1: tabulable; 2: [H, 1, C] constant; 3: image broadcast
    Shapes sh{{1, 5, 7, channels}, {channels}, {1, 5, 7, channels}};
    if (shape == 2) sh.b = {5, 1, channels};
    if (shape == 3) sh = Shapes{{1, 5, 1, channels}, {7, channels}, {1, 5, 7, channels}};
    const bool constant_is_a = trial % 2 == 1;
    if (constant_is_a) std::swap(sh.a, sh.b);
    const reference::BroadcastPlan plan = reference::MakeBroadcastPlan(sh.a, sh.b, sh.out);
    std::vector<uint8_t> a(Count(sh.a)), b(Count(sh.b));
    for (auto& v : a) v = static_cast<uint8_t>(rng());
    for (auto& v : b) v = static_cast<uint8_t>(rng());
    const std::vector<uint8_t> expected = c.is_uint8 ? Reference<uint8_t>(c, plan, a, b, add, mul)
                                                     : Reference<int8_t>(c, plan, a, b, add, mul);
    for (Isa isa : SupportedIsas()) {
      QuantBinary k(c.kind, c.is_uint8, add, mul, isa);
      const bool did = k.TabulateConstant(plan, constant_is_a ? a.data() : b.data(), constant_is_a);
      const bool vector_isa = isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni;
      EXPECT_EQ(did, vector_isa && shape <= 1 && channels <= 64)
          << optimized::IsaName(isa) << " trial " << trial;
      tabulated += did;
      for (int splits : {1, 3}) {
        std::vector<uint8_t> out(plan.num_elements, 0xCD);
        for (int i = splits - 1; i >= 0; --i)
          k.Run(plan, a.data(), b.data(), out.data(), plan.num_elements * i / splits,
                plan.num_elements * (i + 1) / splits);
        ASSERT_EQ(expected, out) << optimized::IsaName(isa) << " trial " << trial << " channels "
                                 << channels << " shape " << shape << " splits " << splits;
      }
    }
  }
  if (optimized::IsaSupported(Isa::kAvx2)) {
    EXPECT_GT(tabulated, 0);
  }
}

template <class T>
std::vector<T> RunModel(const Case& c, const Shapes& s, const std::vector<uint8_t>& a,
                        const std::vector<uint8_t>& b, KernelSet kernels, int threads) {
  const DataType type = c.is_uint8 ? DataType::kUInt8 : DataType::kInt8;
  OpModel m;
  const int in1 = m.AddInput(type, s.a, Q(c.s1, c.z1));
  const int in2 = m.AddInput(type, s.b, Q(c.s2, c.z2));
  const int out = m.AddOutput(type, Q(c.so, c.zo));
  ElementwiseParams params;
  params.activation = c.act;
  const BuiltinOp op = c.kind == QuantBinary::Kind::kAdd   ? BuiltinOp::kAdd
                       : c.kind == QuantBinary::Kind::kSub ? BuiltinOp::kSub
                                                           : BuiltinOp::kMul;
  m.AddOp(op, {in1, in2}, {out}, params, 2);
  m.Build(threads, kernels);
  std::vector<T> va(a.size()), vb(b.size());
  std::memcpy(va.data(), a.data(), a.size());
  std::memcpy(vb.data(), b.data(), b.size());
  m.SetInput<T>(0, va);
  m.SetInput<T>(1, vb);
  m.Invoke();
  return m.GetOutput<T>(0);
}

TEST(OptimizedBinaryTest, InterpreterOptimizedEqualsReference) {
  std::mt19937 rng(8);
  const QuantBinary::Kind kinds[] = {QuantBinary::Kind::kAdd, QuantBinary::Kind::kSub,
                                     QuantBinary::Kind::kMul};
  for (int trial = 0; trial < 60; ++trial) {
    const Case c = RandomCase(rng, kinds[trial % 3], (trial / 3) % 2 == 0);
    Shapes s = RandomShapes(rng);
    if (trial % 10 == 0) s = Shapes{{1, 56, 56, 24}, {1, 56, 56, 24}, {1, 56, 56, 24}};  // threads split
    if (trial % 10 == 5) s = ShortPeriodShapes(rng);
    std::vector<uint8_t> a(Count(s.a)), b(Count(s.b));
    for (auto& v : a) v = static_cast<uint8_t>(rng());
    for (auto& v : b) v = static_cast<uint8_t>(rng());
    for (int threads : {1, 2}) {
      if (c.is_uint8)
        EXPECT_EQ((RunModel<uint8_t>(c, s, a, b, KernelSet::kReference, threads)),
                  (RunModel<uint8_t>(c, s, a, b, KernelSet::kOptimized, threads)))
            << "trial " << trial;
      else
        EXPECT_EQ((RunModel<int8_t>(c, s, a, b, KernelSet::kReference, threads)),
                  (RunModel<int8_t>(c, s, a, b, KernelSet::kOptimized, threads)))
            << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace delegato
