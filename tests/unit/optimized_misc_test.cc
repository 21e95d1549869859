// The smaller optimized kernels against their reference kernels, bit for
// bit, on every ISA this CPU runs: RESIZE_BILINEAR (uint8 and float32 in
// single precision, int8 in fixed point; align_corners / half_pixel_centers;
// up- and down-scaling; the precomputed-row path and its fallback), ARG_MAX /
// ARG_MIN over 8-bit rows (ties, all-equal rows, 1..64 classes), 8-bit
// requantization tables, float32 -> 8-bit quantization (halves, huge
// values, infinities, NaN) and int8 SQUARED_DIFFERENCE (every byte pair,
// broadcast shapes). Then each op through the interpreter, optimized
// vs reference kernel sets (8-bit RELU, RELU6, LOGISTIC and TANH among them),
// 1 and 2 threads, and PAD's merged rows. Joins and splits of byte blocks
// (CONCATENATION / PACK, SPLIT / UNPACK) of every size up to 70 bytes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/arg_minmax.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/join_bytes.h"
#include "kernels/optimized/quantize.h"
#include "kernels/optimized/resize_bilinear.h"
#include "kernels/optimized/squared_difference8.h"
#include "kernels/optimized/transpose.h"
#include "kernels/quantization.h"
#include "kernels/reference/arg_minmax.h"
#include "kernels/reference/compare.h"
#include "kernels/reference/quantize.h"
#include "kernels/reference/resize.h"
#include "kernels/reference/shape_ops.h"
#include "test_util.h"

namespace delegato {
namespace {

using optimized::Isa;
using testing::SupportedIsas;
using testing::OpModel;
using testing::Q;

// --------------------------------------------------------------------- isa

TEST(OptimizedIsaTest, NamesSupportAndClamping) {
  for (int i = 0; i < optimized::kNumIsas; ++i) {
    const Isa isa = static_cast<Isa>(i);
    Isa parsed = Isa::kScalar;
    ASSERT_TRUE(optimized::ParseIsa(optimized::IsaName(isa), &parsed)) << i;
    EXPECT_EQ(parsed, isa);
  }
  Isa parsed = Isa::kScalar;
  EXPECT_TRUE(optimized::ParseIsa("i8mm", &parsed));
  EXPECT_EQ(parsed, Isa::kI8mm);
  EXPECT_FALSE(optimized::ParseIsa("sve", &parsed));
  EXPECT_TRUE(optimized::IsaSupported(Isa::kScalar));
#if DELEGATO_ARM
  EXPECT_TRUE(optimized::IsaSupported(Isa::kNeon));
  EXPECT_FALSE(optimized::IsaSupported(Isa::kAvx2));
  EXPECT_FALSE(optimized::IsaSupported(Isa::kAvx512Vnni));
  // Every i8mm core has dot products (Armv8.6 includes Armv8.2's).
  if (optimized::IsaSupported(Isa::kI8mm)) EXPECT_TRUE(optimized::IsaSupported(Isa::kDotprod));
#else
  EXPECT_FALSE(optimized::IsaSupported(Isa::kNeon));
  EXPECT_FALSE(optimized::IsaSupported(Isa::kDotprod));
  EXPECT_FALSE(optimized::IsaSupported(Isa::kI8mm));
#endif
  // A forced ISA the CPU lacks runs the best supported one below it.
  for (int i = 0; i < optimized::kNumIsas; ++i) {
    const Isa wanted = static_cast<Isa>(i);
    optimized::ScopedIsaOverride force(wanted);
    const Isa got = optimized::SelectedIsa();
    EXPECT_TRUE(optimized::IsaSupported(got)) << optimized::IsaName(wanted);
    EXPECT_LE(static_cast<int>(got), i) << optimized::IsaName(wanted);
    if (optimized::IsaSupported(wanted)) {
      EXPECT_EQ(got, wanted);
    }
  }
}

// ------------------------------------------------------------------ resize

reference::ResizeGeometry RandomResize(std::mt19937& rng) {
  reference::ResizeGeometry g;
  g.batches = 1 + rng() % 2;
  g.input_height = 1 + rng() % 9;
  g.input_width = 1 + rng() % 11;
  g.depth = std::vector<int>{1, 3, 15, 16, 17, 21, 33}[rng() % 7];
  g.output_height = 1 + rng() % 20;
  g.output_width = 1 + rng() % 23;
  const int mode = rng() % 3;
  g.align_corners = mode == 1;
  g.half_pixel_centers = mode == 2;
  return g;
}

template <class T>
std::vector<T> RandomValues(std::mt19937& rng, size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_same_v<T, float>)
      x = std::uniform_real_distribution<float>(-100.0f, 100.0f)(rng);
    else
      x = static_cast<T>(rng());
  }
  return v;
}

template <class T>
void CheckResize(const reference::ResizeGeometry& g, optimized::ResizeBilinear::Type type,
                 std::mt19937& rng, const std::string& what) {
  const auto input = RandomValues<T>(
      rng, static_cast<size_t>(g.batches) * g.input_height * g.input_width * g.depth);
  std::vector<T> expected(static_cast<size_t>(g.batches) * g.output_height * g.output_width *
                          g.depth);
  if constexpr (std::is_same_v<T, int8_t>)
    reference::ResizeBilinearFixed(g, input.data(), expected.data());
  else
    reference::ResizeBilinearFloat(g, input.data(), expected.data());
  for (Isa isa : SupportedIsas()) {
    const optimized::ResizeBilinear r(type, g, isa);
    std::vector<T> out(expected.size());
    const int64_t rows = r.rows();
    r.RunRows(rows / 2, rows, input.data(), out.data());
    r.RunRows(0, rows / 2, input.data(), out.data());
    ASSERT_EQ(0, std::memcmp(expected.data(), out.data(), out.size() * sizeof(T)))
        << what << " " << optimized::IsaName(isa);
  }
}

TEST(OptimizedMiscTest, ResizeBilinearMatchesReference) {
  std::mt19937 rng(41);
  for (int trial = 0; trial < 300; ++trial) {
    reference::ResizeGeometry g = RandomResize(rng);
    if (trial % 50 == 0) {  // deeplab's 33x33 -> 513x513, 21 classes
      g = reference::ResizeGeometry{1, 33, 33, 21, 129, 97, trial % 100 == 0, false};
    }
    if (trial % 75 == 1) g.depth = 700;  // rows past the stack buffer: fallback path
    const std::string what = "trial " + std::to_string(trial);
    CheckResize<uint8_t>(g, optimized::ResizeBilinear::Type::kUInt8, rng, what + " uint8");
    CheckResize<float>(g, optimized::ResizeBilinear::Type::kFloat32, rng, what + " float");
    CheckResize<int8_t>(g, optimized::ResizeBilinear::Type::kInt8, rng, what + " int8");
  }
}

// -------------------------------------------------------------- arg max/min

TEST(OptimizedMiscTest, ArgMinMax8MatchesReference) {
  std::mt19937 rng(43);
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t axis = 1 + rng() % 64, outer = 1 + rng() % 40;
    const bool is_signed = trial % 2, is_max = (trial / 2) % 2, index64 = (trial / 4) % 2;
    std::vector<uint8_t> in(outer * axis);
    const int spread = std::vector<int>{2, 5, 256}[rng() % 3];  // small spreads: many ties
    for (auto& v : in) v = static_cast<uint8_t>(rng() % spread + (is_signed ? 126 : 0));
    std::vector<int64_t> expected(outer);
    if (is_signed) {
      const int8_t* p = reinterpret_cast<const int8_t*>(in.data());
      if (is_max) reference::ArgMinMax<int8_t, int64_t, true>(p, outer, axis, 1, expected.data());
      else reference::ArgMinMax<int8_t, int64_t, false>(p, outer, axis, 1, expected.data());
    } else {
      if (is_max) reference::ArgMinMax<uint8_t, int64_t, true>(in.data(), outer, axis, 1, expected.data());
      else reference::ArgMinMax<uint8_t, int64_t, false>(in.data(), outer, axis, 1, expected.data());
    }
    for (Isa isa : SupportedIsas()) {
      optimized::ArgMinMax8 k{is_max, is_signed, index64, axis, isa};
      std::vector<int64_t> got(outer);
      if (index64) {
        k.Run(in.data(), got.data(), 0, outer);
      } else {
        std::vector<int32_t> got32(outer);
        k.Run(in.data(), got32.data(), 0, outer);
        for (int64_t i = 0; i < outer; ++i) got[i] = got32[i];
      }
      ASSERT_EQ(expected, got) << "trial " << trial << " " << optimized::IsaName(isa);
    }
  }
}

// ------------------------------------------------------- squared difference

// Parameters as SQUARED_DIFFERENCE's Prepare derives them from the scales.
reference::QuantizedSquaredDifferenceParams SquaredDifferenceParams(float s1, int zp1, float s2,
                                                                    int zp2, float so, int zpo) {
  reference::QuantizedSquaredDifferenceParams p;
  p.input1_offset = -zp1;
  p.input2_offset = -zp2;
  p.output_offset = zpo;
  const double twice_max = 2.0 * std::max(s1, s2);
  quant::QuantizeMultiplier(s1 / twice_max, &p.input1_multiplier, &p.input1_shift);
  quant::QuantizeMultiplier(s2 / twice_max, &p.input2_multiplier, &p.input2_shift);
  quant::QuantizeMultiplier(twice_max * twice_max / ((1 << 14) * double{so}), &p.output_multiplier,
                            &p.output_shift);
  return p;
}

TEST(OptimizedMiscTest, SquaredDifference8MatchesReference) {
  std::mt19937 rng(61);
  const auto dims = [](std::initializer_list<int32_t> d) { return std::vector<int32_t>(d); };
  for (int trial = 0; trial < 60; ++trial) {
    const float s1 = std::uniform_real_distribution<float>(0.002f, 0.2f)(rng);
    const float s2 = trial % 3 == 0 ? s1 : std::uniform_real_distribution<float>(0.002f, 0.2f)(rng);
    const float so = std::uniform_real_distribution<float>(1e-5f, 0.05f)(rng);
    const int zp1 = static_cast<int>(rng() % 256) - 128, zp2 = static_cast<int>(rng() % 256) - 128;
    const int zpo = static_cast<int>(rng() % 256) - 128;
    const auto p = SquaredDifferenceParams(s1, zp1, s2, zp2, so, zpo);
    // Every byte pair once (a [256, 256] against b [256, 1]: a broadcast b per
    // row), then shapes around the vector widths with each kind of broadcast.
    const int32_t n = 1 + static_cast<int32_t>(rng() % 70), r = 1 + static_cast<int32_t>(rng() % 9);
    const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> shapes = {
        {dims({256, 256}), dims({256, 1})}, {dims({r, n}), dims({r, n})},
        {dims({r, n}), dims({r, 1})},       {dims({r, 1}), dims({r, n})},
        {dims({r, n}), dims({1, n})},       {dims({r, 1}), dims({1, n})},
        {dims({1}), dims({r, n})}};
    for (const auto& [da, db] : shapes) {
      std::vector<int32_t> out_dims;
      ASSERT_TRUE(reference::BroadcastShapes(da, db, &out_dims));
      const reference::BroadcastPlan plan = reference::MakeBroadcastPlan(da, db, out_dims);
      std::vector<int8_t> a(plan.num_elements), b(plan.num_elements);  // large enough
      for (size_t i = 0; i < a.size(); ++i) {
        a[i] = static_cast<int8_t>(da[0] == 256 ? i : rng());
        b[i] = static_cast<int8_t>(da[0] == 256 ? i : rng());
      }
      std::vector<int8_t> expected(plan.num_elements);
      reference::QuantizedSquaredDifference(p, plan, a.data(), b.data(), expected.data(), 0,
                                            plan.num_elements);
      for (Isa isa : SupportedIsas()) {
        const optimized::QuantSquaredDifference8 k(p, isa);
        std::vector<int8_t> got(plan.num_elements, 0x55);
        const int64_t split = plan.num_elements / 3;  // any split gives the same bytes
        k.Run(plan, a.data(), b.data(), got.data(), 0, split);
        k.Run(plan, a.data(), b.data(), got.data(), split, plan.num_elements);
        ASSERT_EQ(expected, got) << "trial " << trial << " " << optimized::IsaName(isa) << " a "
                                 << da.size() << "d b " << db.size() << "d n " << n;
      }
    }
  }
}

// ---------------------------------------------------------------- quantize

TEST(OptimizedMiscTest, RequantizeTableMatchesReference) {
  std::mt19937 rng(47);
  for (int trial = 0; trial < 200; ++trial) {
    const bool in_signed = trial % 2, out_signed = (trial / 2) % 2;
    int32_t m;
    int s;
    quant::QuantizeMultiplier(std::pow(10.0, std::uniform_real_distribution<double>(-2, 2)(rng)),
                              &m, &s);
    if (trial % 20 == 0) { m = 1 << 30; s = 1; }  // same scale
    const int32_t in_zp = in_signed ? static_cast<int>(rng() % 256) - 128 : rng() % 256;
    int32_t out_zp = out_signed ? static_cast<int>(rng() % 256) - 128 : rng() % 256;
    if (trial % 20 == 0 && in_signed != out_signed) out_zp = in_zp + (in_signed ? 128 : -128);
    optimized::RequantizeTable8 table;
    table.Build(in_signed, out_signed, m, s, in_zp, out_zp);
    std::vector<uint8_t> in(256), expected(256), got(256);
    for (int i = 0; i < 256; ++i) in[i] = static_cast<uint8_t>(i);
    auto run = [&](auto* x, auto* y) { reference::Requantize(x, y, m, s, in_zp, out_zp, 0, 256); };
    if (in_signed && out_signed) run(reinterpret_cast<int8_t*>(in.data()), reinterpret_cast<int8_t*>(expected.data()));
    else if (in_signed) run(reinterpret_cast<int8_t*>(in.data()), expected.data());
    else if (out_signed) run(in.data(), reinterpret_cast<int8_t*>(expected.data()));
    else run(in.data(), expected.data());
    table.Run(in.data(), got.data(), 0, 256);
    ASSERT_EQ(expected, got) << "trial " << trial;
  }
}

TEST(OptimizedMiscTest, RequantizeTableSelectsTheIsasLookup) {
  for (Isa isa : SupportedIsas()) {
    optimized::ScopedIsaOverride override_isa(isa);
    optimized::RequantizeTable8 table;
    table.Build(false, true, 1 << 30, 0, 3, -5);
    EXPECT_EQ(table.lookup, optimized::ByteLookupFor(isa)) << optimized::IsaName(isa);
    EXPECT_EQ(table.lookup == optimized::ByteLookup::kBytes, isa == Isa::kScalar)
        << optimized::IsaName(isa);
    EXPECT_TRUE(optimized::ByteLookupSupported(table.lookup));
  }
}

TEST(OptimizedMiscTest, ByteLookupsRunAnyRange) {
  // Every lookup this CPU can run (VBMI byte permutes, AVX-512BW and AVX2
  // XORed byte shuffles, NEON table lookups, bytes) over ranges that start
  // and end anywhere, on random tables and on each single-entry table (a
  // wrong row or window in the shuffles' XOR shows there), against the table
  // itself; the bytes outside [begin, end) stay untouched.
  using optimized::ByteLookup;
  std::mt19937 rng(48);
  for (ByteLookup kind : {ByteLookup::kBytes, ByteLookup::kAvx2, ByteLookup::kAvx512Bw,
                          ByteLookup::kVbmi, ByteLookup::kNeon}) {
    if (!optimized::ByteLookupSupported(kind)) continue;
    for (int trial = 0; trial < 356; ++trial) {
      alignas(64) uint8_t table[256];
      if (trial < 256) {
        for (int i = 0; i < 256; ++i) table[i] = i == trial ? static_cast<uint8_t>(0x5A ^ trial) : 0;
      } else {
        for (auto& v : table) v = static_cast<uint8_t>(rng());
      }
      const int64_t n = trial < 256 ? 256 + 64 : 1 + rng() % 700;
      const int64_t begin = trial < 256 ? trial % 64 : rng() % n;
      const int64_t end = trial < 256 ? n - trial % 7 : begin + rng() % (n - begin + 1);
      std::vector<uint8_t> in(n), got(n, 0xA5), expected(n, 0xA5);
      for (int64_t i = 0; i < n; ++i) in[i] = trial < 256 ? static_cast<uint8_t>(i) : static_cast<uint8_t>(rng());
      for (int64_t i = begin; i < end; ++i) expected[i] = table[in[i]];
      optimized::LookupBytes(kind, table, in.data(), got.data(), begin, end);
      ASSERT_EQ(expected, got) << optimized::ByteLookupName(kind) << " trial " << trial << " ["
                               << begin << ", " << end << ") of " << n;
    }
  }
}

TEST(OptimizedMiscTest, QuantizeFloatMatchesReference) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  constexpr float kDenorm = std::numeric_limits<float>::denorm_min();
  // Values the conversions treat specially: signed zeros, denormals, the
  // int32 range limits and their float neighbours, the 2^23 / 2^24 edges of
  // exact integers, and halves around them.
  const float kSpecial[] = {kNaN, -kNaN, kInf, -kInf, 0.0f, -0.0f, kDenorm, -kDenorm,
                            std::numeric_limits<float>::min(), -std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                            2147483648.0f, -2147483648.0f, 2147483520.0f, -2147483904.0f,
                            3e9f, -3e9f, 8388607.5f, -8388607.5f, 8388608.0f, 16777215.0f,
                            0.5f, -0.5f, 1.5f, -1.5f, 0.49999997f, -0.49999997f, 127.5f, -128.5f,
                            255.5f, 1e20f, -1e20f};
  std::mt19937 rng(53);
  for (int trial = 0; trial < 1000; ++trial) {
    const bool out_signed = trial % 2;
    float scale = std::pow(10.0f, std::uniform_real_distribution<float>(-4, 1)(rng));
    switch (trial % 10) {
      case 7: scale = std::pow(10.0f, std::uniform_real_distribution<float>(-38, 38)(rng)); break;
      case 8:  // huge, or denormal (x / scale overflows to inf)
        scale = trial % 20 == 8 ? 3e38f : kDenorm * static_cast<float>(1 + rng() % 8);
        break;
      default: break;
    }
    int32_t zp = out_signed ? static_cast<int>(rng() % 256) - 128 : rng() % 256;
    if (trial % 10 == 9) {  // wrapping zero-point add, far-out clamps
      const int32_t extreme[] = {std::numeric_limits<int32_t>::min(),
                                 std::numeric_limits<int32_t>::max(), -100000, 100000, -300, 300};
      zp = extreme[rng() % 6];
    }
    std::vector<float> in(1 + rng() % 100);
    for (auto& x : in) {
      switch (rng() % 8) {
        case 0: x = (static_cast<int>(rng() % 400) - 200 + 0.5f) * scale; break;  // ties
        case 1: x = std::uniform_real_distribution<float>(-3e9f, 3e9f)(rng); break;
        case 2: x = kSpecial[rng() % std::size(kSpecial)]; break;
        case 3: {  // any bit pattern
          const uint32_t bits = static_cast<uint32_t>(rng());
          std::memcpy(&x, &bits, sizeof(x));
          break;
        }
        case 4:  // products of ties near their float neighbours
          x = std::nextafter((static_cast<int>(rng() % 600) - 300 + 0.5f) * scale,
                             rng() % 2 ? kInf : -kInf);
          break;
        default: x = std::uniform_real_distribution<float>(-200, 200)(rng) * scale; break;
      }
    }
    in[0] = kNaN;
    if (in.size() > 2) {
      in[1] = kInf;
      in[2] = -kInf;
    }
    // A sub-range, so vectors start unaligned and end in any tail length;
    // bytes outside it must stay untouched.
    const int64_t n = static_cast<int64_t>(in.size());
    const int64_t begin = trial % 3 == 0 ? rng() % n : 0;
    const int64_t end = trial % 3 == 0 ? begin + 1 + rng() % (n - begin) : n;
    std::vector<uint8_t> expected(in.size(), 0xA5);
    if (out_signed)
      reference::AffineQuantize(scale, zp, in.data(), reinterpret_cast<int8_t*>(expected.data()),
                                begin, end);
    else
      reference::AffineQuantize(scale, zp, in.data(), expected.data(), begin, end);
    for (Isa isa : SupportedIsas()) {
      optimized::QuantizeFloat8 q{scale, zp, out_signed, isa};
      std::vector<uint8_t> got(in.size(), 0xA5);
      q.Run(in.data(), got.data(), begin, end);
      ASSERT_EQ(expected, got) << "trial " << trial << " " << optimized::IsaName(isa) << " scale "
                               << scale << " zp " << zp << " [" << begin << ", " << end << ")";
    }
  }
}

// ------------------------------------------------------ through the runtime

template <class T>
void ExpectKernelSetsAgree(const std::function<void(OpModel&)>& build,
                           const std::vector<std::vector<uint8_t>>& inputs, const std::string& what) {
  std::vector<uint8_t> outputs[2][2];
  for (int threads : {1, 2}) {
    for (int opt : {0, 1}) {
      OpModel m;
      build(m);
      m.Build(threads, opt ? KernelSet::kOptimized : KernelSet::kReference);
      for (size_t i = 0; i < inputs.size(); ++i) {
        std::vector<T> values(inputs[i].size() / sizeof(T));
        std::memcpy(values.data(), inputs[i].data(), inputs[i].size());
        m.SetInput<T>(static_cast<int>(i), values);
      }
      m.Invoke();
      const auto out = m.GetOutput<uint8_t>(0);
      outputs[threads - 1][opt] = out;
    }
    EXPECT_EQ(outputs[threads - 1][0], outputs[threads - 1][1]) << what << " threads " << threads;
  }
}

std::vector<uint8_t> RandomBytes(std::mt19937& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Every block size 0..70 (the inline pieces' boundaries at 4, 8, 16, 32
// and the library copy beyond), three inputs of different sizes, the output
// exactly sized: a copy that wrote past a block would overwrite its
// neighbour or run off the end (ASan).
TEST(OptimizedMiscTest, JoinAndSplitBytesMatchReference) {
  std::mt19937 rng(17);
  for (int64_t size = 0; size <= 70; ++size) {
    const int64_t blocks[3] = {size, (size * 7 + 3) % 71, 1 + size % 5};
    const int64_t outer = 1 + size % 4;
    std::vector<std::vector<uint8_t>> inputs(3);
    const uint8_t* input_ptrs[3];
    for (int i = 0; i < 3; ++i) {
      inputs[i].resize(static_cast<size_t>(blocks[i] * outer));
      for (auto& b : inputs[i]) b = static_cast<uint8_t>(rng());
      input_ptrs[i] = inputs[i].data();
    }
    const size_t total = static_cast<size_t>((blocks[0] + blocks[1] + blocks[2]) * outer);
    std::vector<uint8_t> expected(total);
    reference::ConcatenateBytes(3, input_ptrs, blocks, outer, expected.data());
    for (Isa isa : SupportedIsas()) {
      std::vector<uint8_t> joined(total, 0xEE);
      optimized::ConcatenateBytes(isa, 3, input_ptrs, blocks, outer, joined.data());
      ASSERT_EQ(expected, joined) << "size " << size << " " << optimized::IsaName(isa);
      std::vector<std::vector<uint8_t>> parts(3);
      uint8_t* part_ptrs[3];
      for (int i = 0; i < 3; ++i) {
        parts[i].assign(inputs[i].size(), 0xEE);
        part_ptrs[i] = parts[i].data();
      }
      optimized::SplitBytes(isa, joined.data(), outer, 3, part_ptrs, blocks);
      for (int i = 0; i < 3; ++i)
        ASSERT_EQ(inputs[i], parts[i]) << "size " << size << " part " << i << " "
                                       << optimized::IsaName(isa);
    }
  }
}

void ExpectPlan(const optimized::TransposePlan& plan, int rank, int64_t element_bytes,
                std::vector<int64_t> dims, std::vector<int64_t> steps) {
  ASSERT_EQ(plan.rank, rank);
  EXPECT_EQ(plan.element_bytes, element_bytes);
  for (int d = 0; d < rank; ++d) {
    EXPECT_EQ(plan.dims[d], dims[d]) << "dim " << d;
    EXPECT_EQ(plan.steps[d], steps[d]) << "dim " << d;
  }
}

// The plan's simplification of an attention layer's transposes: the head
// split is a 2-D transpose of whole D-value runs, the key transpose one of
// single values over merged dims; the identity one copy.
TEST(OptimizedMiscTest, TransposePlanMergesAndFoldsDims) {
  const int32_t dims[4] = {1, 16, 4, 8};
  const int32_t split[4] = {0, 2, 1, 3}, key[4] = {0, 2, 3, 1}, same[4] = {0, 1, 2, 3};
  ExpectPlan(optimized::PlanTranspose(Isa::kScalar, 4, 4, dims, split), 2, 32, {4, 16}, {1, 4});
  ExpectPlan(optimized::PlanTranspose(Isa::kScalar, 4, 4, dims, key), 2, 4, {32, 16}, {1, 32});
  ExpectPlan(optimized::PlanTranspose(Isa::kScalar, 2, 4, dims, same), 0, 2 * 16 * 4 * 8, {}, {});
}

// Random shapes (unit dims, sizes around the 8x8 and 16-row blocks),
// permutations and element sizes against the reference, whole and split at
// random rows; outputs exactly sized (ASan catches a store past the end).
TEST(OptimizedMiscTest, TransposeMatchesReference) {
  std::mt19937 rng(23);
  const size_t element_sizes[5] = {1, 2, 4, 8, 16};
  const int sizes[] = {1, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 24, 33};
  struct Case {
    std::vector<int32_t> dims, perm;
  };
  std::vector<Case> cases = {
      {{1, 16, 4, 8}, {0, 2, 1, 3}}, {{1, 16, 4, 8}, {0, 2, 3, 1}},
      {{1, 4, 16, 8}, {0, 2, 1, 3}}, {{1, 3, 17, 19}, {0, 2, 3, 1}},
      {{20, 19}, {1, 0}},           {{64, 40}, {1, 0}},
      {{2, 0, 3}, {2, 0, 1}},       {{5}, {0}},
      {{3, 9, 1, 10, 2, 4}, {3, 1, 5, 0, 2, 4}}};
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 6);
    Case c;
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      int size = sizes[rng() % std::size(sizes)];
      if (count * size > 6000) size = 1;
      count *= size;
      c.dims.push_back(size);
      c.perm.push_back(d);
    }
    std::shuffle(c.perm.begin(), c.perm.end(), rng);
    cases.push_back(c);
  }
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const int rank = static_cast<int>(c.dims.size());
    int64_t count = 1;
    for (int32_t d : c.dims) count *= d;
    for (size_t element_size : element_sizes) {
      const std::vector<uint8_t> input =
          RandomBytes(rng, static_cast<size_t>(count) * element_size);
      std::vector<uint8_t> expected(input.size());
      reference::Transpose(element_size, rank, c.dims.data(), c.perm.data(), input.data(),
                           expected.data());
      for (Isa isa : SupportedIsas()) {
        const optimized::TransposePlan plan =
            optimized::PlanTranspose(isa, element_size, rank, c.dims.data(), c.perm.data());
        const int64_t rows = optimized::TransposeRows(plan);
        std::vector<uint8_t> whole(input.size(), 0xEE);
        optimized::Transpose(plan, input.data(), whole.data(), 0, rows);
        ASSERT_EQ(expected, whole) << "case " << k << " element " << element_size << " "
                                   << optimized::IsaName(isa);
        // Three pieces, as threads would split the rows.
        int64_t cut1 = rows > 0 ? static_cast<int64_t>(rng() % (rows + 1)) : 0;
        int64_t cut2 = rows > 0 ? static_cast<int64_t>(rng() % (rows + 1)) : 0;
        if (cut1 > cut2) std::swap(cut1, cut2);
        std::vector<uint8_t> pieces(input.size(), 0xEE);
        optimized::Transpose(plan, input.data(), pieces.data(), cut2, rows);
        optimized::Transpose(plan, input.data(), pieces.data(), 0, cut1);
        optimized::Transpose(plan, input.data(), pieces.data(), cut1, cut2);
        ASSERT_EQ(expected, pieces) << "case " << k << " element " << element_size
                                    << " cuts " << cut1 << " " << cut2 << " "
                                    << optimized::IsaName(isa);
      }
    }
  }
}

TEST(OptimizedMiscTest, InterpreterOptimizedEqualsReference) {
  std::mt19937 rng(59);
  for (int trial = 0; trial < 6; ++trial) {
    // RESIZE_BILINEAR uint8 / int8.
    const bool u8 = trial % 2 == 0;
    const DataType type = u8 ? DataType::kUInt8 : DataType::kInt8;
    ExpectKernelSetsAgree<uint8_t>(
        [&](OpModel& m) {
          const int in = m.AddInput(type, {1, 33, 33, 21}, Q(0.1f, u8 ? 128 : 0));
          const int size = m.AddConst<int32_t>(DataType::kInt32, {2}, {129, 129});
          const int out = m.AddOutput(type, Q(0.1f, u8 ? 128 : 0));
          ResizeParams p;
          p.align_corners = trial % 3 == 0;
          m.AddOp(BuiltinOp::kResizeBilinear, {in, size}, {out}, p, 3);
        },
        {RandomBytes(rng, 33 * 33 * 21)}, "resize trial " + std::to_string(trial));
    // ARG_MAX over 21 classes.
    ExpectKernelSetsAgree<uint8_t>(
        [&](OpModel& m) {
          const int in = m.AddInput(type, {1, 65, 65, 21}, Q(0.1f, 0));
          const int axis = m.AddConst<int32_t>(DataType::kInt32, {}, {3});
          const int out = m.AddOutput(DataType::kInt64);
          ArgMinMaxParams p;
          p.output_type = DataType::kInt64;
          m.AddOp(BuiltinOp::kArgMax, {in, axis}, {out}, p, 2);
        },
        {RandomBytes(rng, 65 * 65 * 21)}, "arg_max trial " + std::to_string(trial));
    // QUANTIZE 8-bit -> 8-bit.
    ExpectKernelSetsAgree<uint8_t>(
        [&](OpModel& m) {
          const int in = m.AddInput(type, {1, 40, 40, 16}, Q(0.05f, u8 ? 100 : -3));
          const int out = m.AddOutput(trial % 3 == 1 ? DataType::kInt8 : type, Q(0.07f, 5));
          m.AddOp(BuiltinOp::kQuantize, {in}, {out}, std::monostate{}, 2);
        },
        {RandomBytes(rng, 40 * 40 * 16)}, "requantize trial " + std::to_string(trial));
    // QUANTIZE float -> 8-bit.
    std::vector<float> floats(40 * 40 * 3);
    for (auto& f : floats) f = std::uniform_real_distribution<float>(-3, 3)(rng);
    std::vector<uint8_t> float_bytes(floats.size() * 4);
    std::memcpy(float_bytes.data(), floats.data(), float_bytes.size());
    ExpectKernelSetsAgree<float>(
        [&](OpModel& m) {
          const int in = m.AddInput(DataType::kFloat32, {1, 40, 40, 3});
          const int out = m.AddOutput(type, Q(0.0235f, u8 ? 128 : 0));
          m.AddOp(BuiltinOp::kQuantize, {in}, {out}, std::monostate{}, 1);
        },
        {float_bytes}, "quantize trial " + std::to_string(trial));
    // RELU / RELU6 8-bit, rescaling (the optimized set looks the reference's bytes up).
    for (BuiltinOp relu : {BuiltinOp::kRelu, BuiltinOp::kRelu6}) {
      ExpectKernelSetsAgree<uint8_t>(
          [&](OpModel& m) {
            const int in = m.AddInput(type, {1, 16, 16, 33}, Q(0.05f, u8 ? 120 : -9));
            const int out = m.AddOutput(type, Q(trial % 3 == 2 ? 0.05f : 0.031f, u8 ? 3 : -125));
            m.AddOp(relu, {in}, {out}, std::monostate{}, 2);
          },
          {RandomBytes(rng, 16 * 16 * 33)},
          std::string(relu == BuiltinOp::kRelu ? "relu" : "relu6") + " trial " +
              std::to_string(trial));
    }
    // LOGISTIC / TANH 8-bit (their table, looked up by the optimized set's code).
    for (BuiltinOp act : {BuiltinOp::kLogistic, BuiltinOp::kTanh}) {
      const bool logistic = act == BuiltinOp::kLogistic;
      ExpectKernelSetsAgree<uint8_t>(
          [&](OpModel& m) {
            const int in = m.AddInput(type, {1, 16, 16, 33}, Q(0.06f, u8 ? 128 : 3));
            const int out = m.AddOutput(
                type, logistic ? Q(1.0f / 256, u8 ? 0 : -128) : Q(1.0f / 128, u8 ? 128 : 0));
            m.AddOp(act, {in}, {out}, std::monostate{}, 2);
          },
          {RandomBytes(rng, 16 * 16 * 33)},
          std::string(logistic ? "logistic" : "tanh") + " trial " + std::to_string(trial));
    }
    // SQUARED_DIFFERENCE int8, a transformer's variance step: x against its row mean.
    ExpectKernelSetsAgree<uint8_t>(
        [&](OpModel& m) {
          const int x = m.AddInput(DataType::kInt8, {1, 16, 32}, Q(0.04f, -5));
          const int mean = m.AddInput(DataType::kInt8, {1, 16, 1}, Q(0.03f, 7));
          const int out = m.AddOutput(DataType::kInt8, Q(0.01f, -128));
          m.AddOp(BuiltinOp::kSquaredDifference, {x, mean}, {out}, std::monostate{}, 2);
        },
        {RandomBytes(rng, 16 * 32), RandomBytes(rng, 16)},
        "squared_difference trial " + std::to_string(trial));
  }
}

TEST(OptimizedMiscTest, PadMergedRowsEqualReference) {
  // The optimized kernel set merges unpadded trailing dims into rows.
  std::mt19937 rng(61);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = 1 + trial % 5;
    std::vector<int32_t> dims(rank), pads(2 * rank);
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      dims[d] = 1 + rng() % 6;
      count *= dims[d];
      const bool padded = rng() % 2;
      pads[2 * d] = padded ? rng() % 3 : 0;
      pads[2 * d + 1] = padded ? rng() % 3 : 0;
    }
    const bool wide = trial % 3 == 0;  // int32 elements
    const DataType type = wide ? DataType::kInt32 : DataType::kUInt8;
    auto build = [&](OpModel& m) {
      const int in = m.AddInput(type, dims, wide ? Quantization{} : Q(0.5f, 7));
      const int p = m.AddConst<int32_t>(DataType::kInt32, {rank, 2}, pads);
      const int out = m.AddOutput(type, wide ? Quantization{} : Q(0.5f, 7));
      m.AddOp(BuiltinOp::kPad, {in, p}, {out}, EmptyParams{});
    };
    const std::vector<uint8_t> bytes = RandomBytes(rng, count * (wide ? 4 : 1));
    if (wide)
      ExpectKernelSetsAgree<int32_t>(build, {bytes}, "pad trial " + std::to_string(trial));
    else
      ExpectKernelSetsAgree<uint8_t>(build, {bytes}, "pad trial " + std::to_string(trial));
  }
}

}  // namespace
}  // namespace delegato
