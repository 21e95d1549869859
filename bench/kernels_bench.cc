// Micro-benchmarks of the optimized kernels on MobileNet-shaped layers, per
// ISA this CPU runs, next to the reference kernel (single thread). Reports
// MAC/s as items_per_second. Numbers go into docs/performance.md; they are
// not pass/fail.
//   build/kernels_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/batch_matmul_float.h"
#include "kernels/optimized/batch_matmul_int8.h"
#include "kernels/optimized/float_activations.h"
#include "kernels/optimized/float_binary.h"
#include "kernels/optimized/hybrid_depthwise.h"
#include "kernels/optimized/hybrid_gemm.h"
#include "kernels/optimized/conv16x8.h"
#include "kernels/optimized/depthwise16x8.h"
#include "kernels/optimized/quant_conv.h"
#include "kernels/optimized/arg_minmax.h"
#include "kernels/optimized/pooling.h"
#include "kernels/optimized/quant_binary.h"
#include "kernels/optimized/quant_depthwise.h"
#include "kernels/optimized/quantize.h"
#include "kernels/optimized/reduce_mean.h"
#include "kernels/optimized/float_conv.h"
#include "kernels/optimized/float_winograd.h"
#include "kernels/optimized/resize_bilinear.h"
#include "kernels/optimized/softmax8.h"
#include "kernels/optimized/squared_difference8.h"
#include "kernels/optimized/transpose.h"
#include "kernels/optimized/transpose_conv_float.h"
#include "kernels/optimized/transpose_conv_quant.h"
#include "kernels/reference/activations.h"
#include "kernels/reference/arg_minmax.h"
#include "kernels/reference/compare.h"
#include "kernels/reference/elementwise.h"
#include "kernels/reference/fully_connected.h"
#include "kernels/reference/hybrid.h"
#include "kernels/reference/int16x8.h"
#include "kernels/reference/math.h"
#include "kernels/reference/pooling.h"
#include "kernels/reference/quantize.h"
#include "kernels/reference/reduce.h"
#include "kernels/reference/resize.h"
#include "kernels/reference/softmax.h"
#include "kernels/reference/shape_ops.h"
#include "kernels/reference/transpose_conv.h"
#include "kernels/quantization.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/depthwise_conv.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif

namespace {

using delegato::optimized::Isa;
namespace ref = delegato::reference;
namespace opt = delegato::optimized;

constexpr int kReference = -1;  // "ISA" argument value of the reference kernel
constexpr int kAmx = 3;         // "ISA" argument value of avx512vnni with AMX tiles (GemmIsaArgs)

struct Layer {
  int h, w, cin, cout, filter, stride;
};

// The output size and padding of a layer's SAME window.
template <class Geometry>
void SetSameWindow(const Layer& l, Geometry& g) {
  const ref::Window2D w = ref::ComputeWindow2D(delegato::Padding::kSame, l.stride, l.stride, 1, 1,
                                               l.h, l.w, l.filter, l.filter);
  g.output_height = w.out_height;
  g.output_width = w.out_width;
  g.pad_height = w.pad_height;
  g.pad_width = w.pad_width;
}

// A layer's CONV_2D geometry, SAME padding, batch 1.
ref::ConvGeometry SameConvGeometry(const Layer& l) {
  ref::ConvGeometry g;
  g.batches = 1;
  g.input_height = l.h;
  g.input_width = l.w;
  g.input_depth = g.filter_depth = l.cin;
  g.output_depth = l.cout;
  g.filter_height = g.filter_width = l.filter;
  g.stride_height = g.stride_width = l.stride;
  SetSameWindow(l, g);
  return g;
}

// A depthwise layer's geometry (multiplier cout / cin), SAME padding, batch 1.
ref::DepthwiseGeometry SameDepthwiseGeometry(const Layer& l) {
  ref::DepthwiseGeometry g;
  g.batches = 1;
  g.input_height = l.h;
  g.input_width = l.w;
  g.input_depth = l.cin;
  g.output_depth = l.cout;
  g.depth_multiplier = l.cout / l.cin;
  g.filter_height = g.filter_width = l.filter;
  g.stride_height = g.stride_width = l.stride;
  SetSameWindow(l, g);
  return g;
}

// MobileNet v2 (224x224) layers, then a small DenseNet's.
const Layer kConvLayers[] = {
    {224, 224, 3, 32, 3, 2},    // Conv (first, im2col with 3 channels)
    {112, 112, 32, 16, 1, 1},   // expanded_conv project
    {112, 112, 16, 96, 1, 1},   // expand (K = 16)
    {56, 56, 24, 144, 1, 1},    // expand
    {28, 28, 192, 32, 1, 1},    // project
    {14, 14, 384, 64, 1, 1},    // project
    {7, 7, 960, 320, 1, 1},     // project
    {7, 7, 320, 1280, 1, 1},    // Conv_1
    {24, 24, 16, 8, 3, 1},      // a DenseNet growth layer (8 outputs; not MobileNet v2)
};

// The zoo's small dynamic-range models: few output channels (8, 16), first
// layers over 3 channels.
const Layer kSmallHybridLayers[] = {
    {64, 64, 3, 16, 5, 2},   // ResNet (small) first layer
    {48, 48, 3, 16, 3, 2},   // DenseNet (small) first layer
    {24, 24, 16, 8, 3, 1},   // DenseNet growth layer (8 channels)
    {24, 24, 32, 16, 1, 1},  // DenseNet bottleneck
    {16, 16, 16, 16, 3, 1},  // ResNet block
};

const Layer kDepthwiseLayers[] = {
    {112, 112, 32, 32, 3, 1},
    {112, 112, 96, 96, 3, 2},
    {56, 56, 144, 144, 3, 1},
    {28, 28, 192, 192, 3, 1},
    {14, 14, 576, 576, 3, 1},
    {7, 7, 960, 960, 3, 1},
    {96, 96, 1, 8, 3, 2},  // person_detect's first layer: depth multiplier 8
    // EfficientNetB0 at 96x96: 5x5 filters, small images (most pixels border).
    {24, 24, 144, 144, 5, 2},
    {12, 12, 240, 240, 5, 1},
    {6, 6, 672, 672, 5, 1},
};

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

void Multipliers(int channels, int k, std::vector<int32_t>* m, std::vector<int32_t>* s) {
  for (int c = 0; c < channels; ++c) {
    int32_t mult;
    int shift;
    delegato::quant::QuantizeMultiplier(1.0 / (k * 40.0) * (1 + c % 5), &mult, &shift);
    m->push_back(mult);
    s->push_back(shift);
  }
}

std::string Name(const Layer& l, const char* op) {
  return std::string(op) + "/" + std::to_string(l.h) + "x" + std::to_string(l.w) + "x" +
         std::to_string(l.cin) + "->" + std::to_string(l.cout) + "/k" +
         std::to_string(l.filter) + "s" + std::to_string(l.stride);
}

bool SkipUnsupported(benchmark::State& state, int isa) {
  if (isa == kAmx ? !opt::CpuHasAmxInt8()
                  : isa != kReference && !opt::IsaSupported(static_cast<Isa>(isa))) {
    state.SkipWithError("ISA not supported on this CPU");
    return true;
  }
  return false;
}

// The int8 GEMM's ISA for an "isa" argument: kAmx is avx512vnni with AMX
// tiles, avx512vnni itself runs without them.
Isa GemmIsa(int isa) {
  opt::SetAmxOverride(isa == kAmx);
  return isa == kAmx ? Isa::kAvx512Vnni : static_cast<Isa>(isa);
}

// Per-channel multipliers as a converter computes them from float32 scales
// (input scale * weight scale[c] / output scale): none an exact power of two.
// Multipliers() gives every fifth channel of the K = 16 and K = 32 layers a
// power of two, whose rounding ties the magnitude requantization cannot rule
// out (its slabs fall back to requantize64.h).
void Float32ScaleMultipliers(int channels, int k, std::vector<int32_t>* m,
                             std::vector<int32_t>* s) {
  const float input_scale = 0.0235294f, output_scale = 0.0156863f;
  for (int c = 0; c < channels; ++c) {
    const float weight_scale = 0.9f / (k * 40.0f) * output_scale / input_scale *
                               (1.0f + 0.37f * static_cast<float>((c * 7) % 11));
    int32_t mult;
    int shift;
    delegato::quant::QuantizeMultiplier(
        double{input_scale} * double{weight_scale} / double{output_scale}, &mult, &shift);
    m->push_back(mult);
    s->push_back(shift);
  }
}

// The CONV_2D cases: int8 with fixed-point multipliers, int8 with those of
// float32 scales, and uint8 with a weight zero point (each row's input sum
// corrects for it) and one per-tensor multiplier, as in uint8 MobileNets.
enum class ConvCase { kInt8, kInt8Float32Scales, kUint8 };

void BM_Conv(benchmark::State& state, Layer l, ConvCase kind, int groups) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  ref::ConvGeometry g = SameConvGeometry(l);
  g.filter_depth = l.cin / groups;
  const int k = l.filter * l.filter * g.filter_depth;
  const std::vector<uint8_t> input = RandomBytes(size_t{1} * l.h * l.w * l.cin, 1);
  const std::vector<uint8_t> filter = RandomBytes(size_t{1} * k * l.cout, 2);
  std::vector<int32_t> bias(l.cout, 100), mult, shift;
  const bool is_uint8 = kind == ConvCase::kUint8;
  if (kind == ConvCase::kInt8Float32Scales)
    Float32ScaleMultipliers(l.cout, k, &mult, &shift);
  else
    Multipliers(is_uint8 ? 1 : l.cout, k, &mult, &shift);
  mult.resize(l.cout, mult[0]);
  shift.resize(l.cout, shift[0]);
  std::vector<uint8_t> output(static_cast<size_t>(g.output_rows()) * g.output_width * l.cout);
  const int64_t macs = g.output_rows() * g.output_width * int64_t{k} * l.cout;

  if (isa == kReference) {
    std::vector<int16_t> packed(g.packed_filter_elements());
    ref::ConvQuantParams q;
    q.input_offset = is_uint8 ? -128 : 3;
    q.output_offset = is_uint8 ? 128 : -2;
    q.act_min = is_uint8 ? 0 : -128;
    q.act_max = is_uint8 ? 255 : 127;
    q.multiplier = mult.data();
    q.shift = shift.data();
    if (is_uint8) {
      ref::PackConvFilter(g, filter.data(), -120, packed.data());
      for (auto _ : state)
        ref::ConvQuantized(g, input.data(), packed.data(), bias.data(), q, output.data(), 0,
                           g.output_rows());
    } else {
      ref::PackConvFilter(g, reinterpret_cast<const int8_t*>(filter.data()), 0, packed.data());
      for (auto _ : state)
        ref::ConvQuantized(g, reinterpret_cast<const int8_t*>(input.data()), packed.data(),
                           bias.data(), q, reinterpret_cast<int8_t*>(output.data()), 0,
                           g.output_rows());
    }
  } else {
    opt::QuantConvParams p;
    p.geometry = g;
    p.is_uint8 = is_uint8;
    p.filter_zero_point = is_uint8 ? 120 : 0;
    p.input_zero_point = is_uint8 ? 128 : -3;
    p.output_zero_point = is_uint8 ? 128 : -2;
    p.act_min = is_uint8 ? 0 : -128;
    p.act_max = is_uint8 ? 255 : 127;
    p.multiplier = mult.data();
    p.shift = shift.data();
    p.filter = filter.data();
    p.bias = bias.data();
    const auto run = [&](const auto& conv) {
      opt::SetAmxOverride(std::nullopt);  // GemmIsa's choice is made at construction
      opt::AlignedBuffer<uint8_t> scratch(conv.scratch_bytes());
      for (auto _ : state) conv.RunTask(0, input.data(), output.data(), scratch.data());
    };
    if (groups > 1)
      run(opt::QuantGroupedConv(p, GemmIsa(isa), 1));
    else
      run(opt::QuantConv(p, GemmIsa(isa), 1));
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * macs);
}

// tied_multipliers: multipliers with 14 trailing zero bits, as many channels
// of converter-made per-channel models have (the depthwise magnitude
// requantization cannot rule out ties there; requantize64.h's form runs).
// int8 AVERAGE_POOL_2D / MAX_POOL_2D, HxWxC by a 2x2 window at stride 2 (a
// DenseNet transition) or a global window. Every ISA runs the same AVX2 code.
void BM_Pool8(benchmark::State& state, int h, int w, int c, int window, bool average) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  ref::PoolGeometry g;
  g.batches = 1;
  g.input_height = h;
  g.input_width = w;
  g.depth = c;
  g.filter_height = g.filter_width = g.stride_height = g.stride_width = window;
  g.output_height = h / window;
  g.output_width = w / window;
  const std::vector<uint8_t> input = RandomBytes(size_t{1} * h * w * c, 4);
  std::vector<uint8_t> output(static_cast<size_t>(g.output_height) * g.output_width * c);
  const bool fast = isa != kReference && opt::PoolCovers(static_cast<Isa>(isa), g);
  const auto* in8 = reinterpret_cast<const int8_t*>(input.data());
  auto* out8 = reinterpret_cast<int8_t*>(output.data());
  for (auto _ : state) {
    if (fast && average)
      opt::AveragePool8(g, true, input.data(), -128, 127, output.data(), 0, g.output_rows());
    else if (fast)
      opt::MaxPool8(g, true, input.data(), -128, 127, output.data(), 0, g.output_rows());
    else if (average)
      ref::AveragePoolQuantized(g, in8, -128, 127, out8, 0, g.output_rows());
    else
      ref::MaxPoolQuantized(g, in8, -128, 127, out8, 0, g.output_rows());
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(output.size()));
}

// The depthwise cases: int8 with random multipliers, int8 with the trailing
// zero bits of converter-made multipliers, and uint8 with a weight zero point
// (w - w_zp in [-120, 135], past a signed byte, as in uint8 MobileNets).
enum class DepthwiseCase { kInt8, kTied, kUint8 };

void BM_Depthwise(benchmark::State& state, Layer l, DepthwiseCase kind) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::DepthwiseGeometry g = SameDepthwiseGeometry(l);
  const int taps = l.filter * l.filter;
  const std::vector<uint8_t> input = RandomBytes(size_t{1} * l.h * l.w * l.cin, 1);
  const std::vector<uint8_t> filter = RandomBytes(size_t{1} * taps * l.cout, 2);
  std::vector<int32_t> bias(l.cout, 100), mult, shift;
  Multipliers(l.cout, taps, &mult, &shift);
  if (kind == DepthwiseCase::kTied)
    for (int32_t& m : mult) m = m >> 14 << 14;
  const bool is_uint8 = kind == DepthwiseCase::kUint8;
  std::vector<uint8_t> output(static_cast<size_t>(g.output_rows()) * g.output_width * l.cout);
  const int64_t macs = g.output_rows() * g.output_width * int64_t{taps} * l.cout;
  if (isa == kReference) {
    std::vector<int16_t> packed(g.filter_elements());
    ref::ConvQuantParams q;
    q.input_offset = is_uint8 ? -128 : 3;
    q.output_offset = is_uint8 ? 128 : -2;
    q.act_min = is_uint8 ? 0 : -128;
    q.act_max = is_uint8 ? 255 : 127;
    q.multiplier = mult.data();
    q.shift = shift.data();
    if (is_uint8) {
      ref::PackDepthwiseFilter(g, filter.data(), -120, packed.data());
      for (auto _ : state)
        ref::DepthwiseConvQuantized(g, input.data(), packed.data(), bias.data(), q, output.data(),
                                    0, g.output_rows());
    } else {
      ref::PackDepthwiseFilter(g, reinterpret_cast<const int8_t*>(filter.data()), 0,
                               packed.data());
      for (auto _ : state)
        ref::DepthwiseConvQuantized(g, reinterpret_cast<const int8_t*>(input.data()),
                                    packed.data(), bias.data(), q,
                                    reinterpret_cast<int8_t*>(output.data()), 0, g.output_rows());
    }
  } else {
    opt::QuantDepthwiseParams p;
    p.geometry = g;
    p.is_uint8 = is_uint8;
    p.filter_offset = is_uint8 ? -120 : 0;
    p.input_zero_point = is_uint8 ? 128 : -3;
    p.output_zero_point = is_uint8 ? 128 : -2;
    p.act_min = is_uint8 ? 0 : -128;
    p.act_max = is_uint8 ? 255 : 127;
    p.multiplier = mult.data();
    p.shift = shift.data();
    p.filter = filter.data();
    p.bias = bias.data();
    opt::QuantDepthwise dw(p, static_cast<Isa>(isa));
    for (auto _ : state) dw.RunRows(0, dw.rows(), input.data(), output.data());
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * macs);
}

// ----------------------------------------------- the other optimized kernels
// Items are output elements (MACs for FULLY_CONNECTED).

// int8, `rows` x depth -> units: MobileNet v2's classifier (1 x 1280 -> 1001) and
// the transformer encoder's projections (16 x 32 -> 32).
void BM_FullyConnected(benchmark::State& state, int rows, int depth, int units) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const std::vector<uint8_t> input = RandomBytes(size_t{1} * rows * depth, 1),
                             weights = RandomBytes(size_t{1} * depth * units, 2);
  std::vector<int32_t> bias(units, 7);
  std::vector<double> scales(units, 1.0 / (depth * 40.0));
  std::vector<uint8_t> output(size_t{1} * rows * units);
  if (isa == kReference) {
    ref::FullyConnectedGeometry g{rows, depth, units};
    std::vector<int16_t> packed(g.weight_elements());
    ref::PackFullyConnectedWeights(g, reinterpret_cast<const int8_t*>(weights.data()), 0, packed.data());
    ref::FullyConnectedQuantParams q;
    q.input_offset = 3;
    q.act_min = -128;
    q.act_max = 127;
    q.output_scale = scales.data();
    for (auto _ : state)
      ref::FullyConnectedQuantized(g, reinterpret_cast<const int8_t*>(input.data()), packed.data(),
                                   bias.data(), q, reinterpret_cast<int8_t*>(output.data()), 0,
                                   g.work_units());
  } else {
    opt::QuantConvParams p;
    p.geometry.batches = rows;
    p.geometry.input_height = p.geometry.input_width = p.geometry.output_height = p.geometry.output_width = 1;
    p.geometry.filter_height = p.geometry.filter_width = 1;
    p.geometry.input_depth = p.geometry.filter_depth = depth;
    p.geometry.output_depth = units;
    p.input_zero_point = -3;
    p.act_min = -128;
    p.act_max = 127;
    p.output_scale = scales.data();
    p.filter = weights.data();
    p.bias = bias.data();
    opt::QuantConv fc(p, GemmIsa(isa), 1);
    opt::SetAmxOverride(std::nullopt);
    opt::AlignedBuffer<uint8_t> scratch(fc.scratch_bytes());
    for (auto _ : state) fc.RunTask(0, input.data(), output.data(), scratch.data());
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * int64_t{rows} * depth * units);
}

// int8 ADD or SUB of `a_shape` and `b_shape` (broadcast to a_shape), with
// the given input offsets and real multipliers.
void RunInt8AddSub(benchmark::State& state, bool subtract, const std::vector<int32_t>& a_shape,
                   const std::vector<int32_t>& b_shape, int32_t a_offset, int32_t b_offset,
                   int32_t out_offset, double a_scale, double b_scale, double out_scale) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::BroadcastPlan plan = ref::MakeBroadcastPlan(a_shape, b_shape, a_shape);
  int64_t b_elements = 1;
  for (int32_t d : b_shape) b_elements *= d;
  const std::vector<uint8_t> a = RandomBytes(plan.num_elements, 1), b = RandomBytes(b_elements, 2);
  std::vector<uint8_t> out(plan.num_elements);
  ref::QuantizedAddParams p;
  p.input1_offset = a_offset;
  p.input2_offset = b_offset;
  p.output_offset = out_offset;
  delegato::quant::QuantizeMultiplier(a_scale, &p.input1_multiplier, &p.input1_shift);
  delegato::quant::QuantizeMultiplier(b_scale, &p.input2_multiplier, &p.input2_shift);
  delegato::quant::QuantizeMultiplier(out_scale, &p.output_multiplier, &p.output_shift);
  p.act_min = -128;
  p.act_max = 127;
  if (isa == kReference) {
    for (auto _ : state)
      ref::QuantizedAdd(plan, reinterpret_cast<const int8_t*>(a.data()),
                        reinterpret_cast<const int8_t*>(b.data()),
                        reinterpret_cast<int8_t*>(out.data()), p, subtract, 0, plan.num_elements);
  } else {
    const opt::QuantBinary k(subtract ? opt::QuantBinary::Kind::kSub : opt::QuantBinary::Kind::kAdd,
                             false, p, {}, static_cast<Isa>(isa));
    for (auto _ : state) k.Run(plan, a.data(), b.data(), out.data(), 0, plan.num_elements);
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * plan.num_elements);
}

void BM_Add(benchmark::State& state) {  // residual ADD 56x56x24, int8
  RunInt8AddSub(state, false, {1, 56, 56, 24}, {1, 56, 56, 24}, 5, -9, 3, 0.45, 0.5, 1.7e-6);
}

void BM_SubChannels(benchmark::State& state) {  // movenet's input minus a per-channel mean, int8
  RunInt8AddSub(state, true, {1, 192, 192, 3}, {3}, 128, 4, -2, 0.5, 0.31, 1.9e-6);
}

// int8 MUL by a run-time per-channel scale: an EfficientNet
// squeeze-and-excitation's x * sigmoid(s), `pixels` x `channels` * [channels].
void RunInt8MulChannels(benchmark::State& state, int32_t pixels, int32_t channels) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::BroadcastPlan plan =
      ref::MakeBroadcastPlan({1, pixels, channels}, {1, 1, channels}, {1, pixels, channels});
  const std::vector<uint8_t> a = RandomBytes(plan.num_elements, 1), b = RandomBytes(channels, 2);
  std::vector<uint8_t> out(plan.num_elements);
  ref::QuantizedMulDivParams p;
  p.input1_offset = 7;     // x's zero point -7
  p.input2_offset = 128;   // the sigmoid's output: zero point -128, scale 1/256
  p.output_offset = -3;
  int shift = 0;
  delegato::quant::QuantizeMultiplier(0.06 / 256 / 0.05, &p.output_multiplier, &shift);
  p.output_shift = shift;
  p.act_min = -128;
  p.act_max = 127;
  if (isa == kReference) {
    for (auto _ : state)
      ref::QuantizedMulBroadcast(plan, reinterpret_cast<const int8_t*>(a.data()),
                                 reinterpret_cast<const int8_t*>(b.data()),
                                 reinterpret_cast<int8_t*>(out.data()), p, 0, plan.num_elements);
  } else {
    const opt::QuantBinary k(opt::QuantBinary::Kind::kMul, false, {}, p, static_cast<Isa>(isa));
    for (auto _ : state) k.Run(plan, a.data(), b.data(), out.data(), 0, plan.num_elements);
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * plan.num_elements);
}

// A batch norm's per-channel scale (DenseNet, 24x24x40 * [40]), float32:
// short runs repeated over every pixel.
void BM_MulChannelsFloat(benchmark::State& state) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const std::vector<int32_t> a_dims = {1, 24, 24, 40}, b_dims = {40};
  const ref::BroadcastPlan plan = ref::MakeBroadcastPlan(a_dims, b_dims, a_dims);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(plan.num_elements), b(40), out(plan.num_elements);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  const float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  for (auto _ : state) {
    if (isa == kReference)
      ref::BinaryArithmetic<float>(ref::BinaryOp::kMul, plan, a.data(), b.data(), out.data(),
                                   {lo, hi}, 0, plan.num_elements);
    else
      opt::FloatBinary(static_cast<Isa>(isa), ref::BinaryOp::kMul, plan, a.data(), b.data(),
                       out.data(), lo, hi, 0, plan.num_elements);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * plan.num_elements);
}

void BM_ResizeBilinear(benchmark::State& state) {  // deeplab's logits 33x33x21 -> 513x513, uint8
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::ResizeGeometry g{1, 33, 33, 21, 513, 513, true, false};
  const std::vector<uint8_t> in = RandomBytes(33 * 33 * 21, 1);
  std::vector<uint8_t> out(size_t{513} * 513 * 21);
  if (isa == kReference) {
    for (auto _ : state) ref::ResizeBilinearFloat(g, in.data(), out.data());
  } else {
    const opt::ResizeBilinear r(opt::ResizeBilinear::Type::kUInt8, g, static_cast<Isa>(isa));
    for (auto _ : state) r.RunRows(0, r.rows(), in.data(), out.data());
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}

// The encoder-decoder's int8 upsampling 16x16x8 -> 32x32 (half-pixel centers).
void BM_ResizeBilinearInt8(benchmark::State& state) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::ResizeGeometry g{1, 16, 16, 8, 32, 32, false, true};
  const std::vector<uint8_t> bytes = RandomBytes(16 * 16 * 8, 1);
  const int8_t* in = reinterpret_cast<const int8_t*>(bytes.data());
  std::vector<int8_t> out(size_t{32} * 32 * 8);
  if (isa == kReference) {
    for (auto _ : state) ref::ResizeBilinearFixed(g, in, out.data());
  } else {
    const opt::ResizeBilinear r(opt::ResizeBilinear::Type::kInt8, g, static_cast<Isa>(isa));
    for (auto _ : state) r.RunRows(0, r.rows(), in, out.data());
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}

// The float32 encoder-decoder's upsampling 16x16x8 -> 32x32 (half-pixel centers).
void BM_ResizeBilinearFloat(benchmark::State& state) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::ResizeGeometry g{1, 16, 16, 8, 32, 32, false, true};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> in(16 * 16 * 8), out(size_t{32} * 32 * 8);
  for (float& x : in) x = dist(rng);
  if (isa == kReference) {
    for (auto _ : state) ref::ResizeBilinearFloat(g, in.data(), out.data());
  } else {
    const opt::ResizeBilinear r(opt::ResizeBilinear::Type::kFloat32, g, static_cast<Isa>(isa));
    for (auto _ : state) r.RunRows(0, r.rows(), in.data(), out.data());
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}

// float32 DEPTHWISE_CONV_2D (SAME padding, multiplier 1); the reference as isa -1.
void BM_DepthwiseFloat(benchmark::State& state, Layer l) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::DepthwiseGeometry g = SameDepthwiseGeometry(l);  // multiplier 1: cin == cout
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> input(size_t{1} * l.h * l.w * l.cin), filter(size_t{1} * l.filter * l.filter * l.cin),
      bias(l.cin);
  for (float& x : input) x = dist(rng);
  for (float& x : filter) x = dist(rng);
  for (float& x : bias) x = dist(rng);
  std::vector<float> output(static_cast<size_t>(g.output_rows()) * g.output_width * l.cin);
  const int64_t macs = g.output_rows() * g.output_width * int64_t{l.filter} * l.filter * l.cin;
  const float lo = 0.0f, hi = 6.0f;
  if (isa == kReference) {
    for (auto _ : state)
      ref::DepthwiseConvFloat(g, input.data(), filter.data(), bias.data(), lo, hi, output.data(),
                              0, g.output_rows());
  } else {
    opt::FloatDepthwiseParams p;
    p.geometry = g;
    p.act_min = lo;
    p.act_max = hi;
    p.filter = filter.data();
    p.bias = bias.data();
    const opt::FloatDepthwise dw(p, static_cast<Isa>(isa));
    for (auto _ : state) dw.RunRows(0, dw.rows(), input.data(), output.data());
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * macs);
}

// float32 CONV_2D (SAME padding; `groups` groups of l.cin / groups input
// channels) on the optimized GEMM (FloatGroupedConv when grouped) or, with
// `winograd`, a 3x3 stride-1 layer on FloatWinograd; the reference as isa -1.
// Items: the direct convolution's multiply-adds, so the forms compare.
void BM_ConvFloat(benchmark::State& state, Layer l, int groups, bool winograd) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  ref::ConvGeometry g = SameConvGeometry(l);
  g.filter_depth = l.cin / groups;
  if (winograd && (isa == kReference || !opt::FloatWinograd::Covers(g, static_cast<Isa>(isa)))) {
    state.SkipWithError("not covered");
    return;
  }
  const int k = l.filter * l.filter * g.filter_depth;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> input(size_t{1} * l.h * l.w * l.cin), filter(size_t{1} * k * l.cout),
      bias(l.cout);
  for (float& x : input) x = dist(rng);
  for (float& x : filter) x = dist(rng);
  for (float& x : bias) x = dist(rng);
  std::vector<float> output(static_cast<size_t>(g.output_rows()) * g.output_width * l.cout);
  const int64_t macs = g.output_rows() * g.output_width * int64_t{k} * l.cout;
  const float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (isa == kReference) {
    std::vector<float> packed(g.packed_filter_elements());
    ref::PackConvFilter(g, filter.data(), 0, packed.data());
    for (auto _ : state)
      ref::ConvFloat(g, input.data(), packed.data(), bias.data(), lo, hi, output.data(), 0,
                     g.output_rows());
  } else {
    opt::FloatConvParams p;
    p.geometry = g;
    p.act_min = lo;
    p.act_max = hi;
    p.filter = filter.data();
    p.bias = bias.data();
    const auto run = [&](const auto& conv) {
      opt::AlignedBuffer<uint8_t> scratch(conv.scratch_bytes() + 64);
      for (auto _ : state) conv.RunTask(0, input.data(), output.data(), scratch.data());
    };
    if (winograd)
      run(opt::FloatWinograd(p, static_cast<Isa>(isa), 1));
    else if (groups > 1)
      run(opt::FloatGroupedConv(p, static_cast<Isa>(isa), 1));
    else
      run(opt::FloatConv(p, static_cast<Isa>(isa), 1));
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * macs);
}

// int16x8 CONV_2D (INT64 bias): the reference or optimized::Conv16x8 (one
// AVX2 code path, on AVX-512 CPUs too).
void BM_Conv16x8(benchmark::State& state, Layer l) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::ConvGeometry g = SameConvGeometry(l);
  const int k = l.filter * l.filter * l.cin;
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> x_dist(-32768, 32767), w_dist(-127, 127);
  std::vector<int16_t> input(size_t{1} * l.h * l.w * l.cin);
  std::vector<int8_t> filter(size_t{1} * k * l.cout);
  for (auto& v : input) v = static_cast<int16_t>(x_dist(rng));
  for (auto& v : filter) v = static_cast<int8_t>(w_dist(rng));
  std::vector<int64_t> bias(l.cout, 1000);
  std::vector<int32_t> multiplier(l.cout, 1 << 30), shift(l.cout, -10);
  std::vector<int16_t> output(static_cast<size_t>(g.output_rows()) * g.output_width * l.cout);
  const int64_t macs = g.output_rows() * g.output_width * int64_t{k} * l.cout;
  if (isa == kReference) {
    std::vector<int8_t> packed(g.packed_filter_elements());
    ref::PackConvFilter(g, filter.data(), 0, packed.data());
    ref::ConvQuantParams q;
    q.multiplier = multiplier.data();
    q.shift = shift.data();
    q.act_min = -32768;
    q.act_max = 32767;
    for (auto _ : state)
      ref::Conv16x8(g, input.data(), packed.data(), bias.data(), q, output.data(), 0,
                    g.output_rows());
  } else {
    opt::Conv16x8Params p;
    p.geometry = g;
    p.filter = filter.data();
    p.bias64 = bias.data();
    p.multiplier = multiplier.data();
    p.shift = shift.data();
    const opt::Conv16x8 conv(p, 1);
    opt::AlignedBuffer<uint8_t> scratch(conv.scratch_bytes() + 64);
    for (auto _ : state) conv.RunTask(0, input.data(), output.data(), scratch.data());
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * macs);
}

// int16x8 FULLY_CONNECTED (INT64 bias): the reference or optimized::Conv16x8
// in its FULLY_CONNECTED mode.
void BM_FullyConnected16x8(benchmark::State& state, int batches, int depth, int units) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> x_dist(-32768, 32767), w_dist(-127, 127);
  std::vector<int16_t> input(static_cast<size_t>(batches) * depth);
  std::vector<int8_t> weights(static_cast<size_t>(units) * depth);
  for (auto& v : input) v = static_cast<int16_t>(x_dist(rng));
  for (auto& v : weights) v = static_cast<int8_t>(w_dist(rng));
  std::vector<int64_t> bias(units, 1000);
  std::vector<double> scale(units, 1.0 / (1 << 20));
  std::vector<int16_t> output(static_cast<size_t>(batches) * units);
  if (isa == kReference) {
    ref::FullyConnectedGeometry g;
    g.batches = batches;
    g.accum_depth = depth;
    g.output_depth = units;
    std::vector<int16_t> packed(g.weight_elements());
    ref::PackFullyConnectedWeights(g, weights.data(), 0, packed.data());
    ref::FullyConnectedQuantParams q;
    q.output_scale = scale.data();
    q.act_min = -32768;
    q.act_max = 32767;
    for (auto _ : state)
      ref::FullyConnected16x8(g, input.data(), packed.data(), bias.data(), q, output.data(), 0,
                              g.work_units());
  } else {
    opt::Conv16x8Params p;
    p.geometry.batches = batches;
    p.geometry.input_height = p.geometry.input_width = 1;
    p.geometry.output_height = p.geometry.output_width = 1;
    p.geometry.filter_height = p.geometry.filter_width = 1;
    p.geometry.input_depth = p.geometry.filter_depth = depth;
    p.geometry.output_depth = units;
    p.filter = weights.data();
    p.bias64 = bias.data();
    p.output_scale = scale.data();
    const opt::Conv16x8 fc(p, 1);
    opt::AlignedBuffer<uint8_t> scratch(fc.scratch_bytes() + 64);
    for (auto _ : state) fc.RunTask(0, input.data(), output.data(), scratch.data());
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * int64_t{batches} * depth * units);
}

// int16x8 DEPTHWISE_CONV_2D (SAME padding, multiplier 1, INT64 bias): the
// reference or optimized::Depthwise16x8 (one AVX2 code path).
void BM_Depthwise16x8(benchmark::State& state, Layer l) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::DepthwiseGeometry g = SameDepthwiseGeometry(l);
  std::mt19937 rng(6);
  std::uniform_int_distribution<int> x_dist(-32768, 32767), w_dist(-127, 127);
  std::vector<int16_t> input(size_t{1} * l.h * l.w * l.cin);
  std::vector<int8_t> filter(size_t{1} * l.filter * l.filter * l.cin);
  for (auto& v : input) v = static_cast<int16_t>(x_dist(rng));
  for (auto& v : filter) v = static_cast<int8_t>(w_dist(rng));
  std::vector<int64_t> bias(l.cin, 1000);
  std::vector<int32_t> multiplier(l.cin, 1 << 30), shift(l.cin, -10);
  std::vector<int16_t> output(static_cast<size_t>(g.output_rows()) * g.output_width * l.cin);
  const int64_t macs = g.output_rows() * g.output_width * int64_t{l.filter} * l.filter * l.cin;
  if (isa == kReference) {
    std::vector<int16_t> packed(g.filter_elements());
    ref::PackDepthwiseFilter(g, filter.data(), 0, packed.data());
    ref::ConvQuantParams q;
    q.multiplier = multiplier.data();
    q.shift = shift.data();
    q.act_min = -32768;
    q.act_max = 32767;
    for (auto _ : state)
      ref::DepthwiseConv16x8(g, input.data(), packed.data(), bias.data(), q, output.data(), 0,
                             g.output_rows());
  } else {
    opt::Depthwise16x8Params p;
    p.geometry = g;
    p.filter = filter.data();
    p.bias = bias.data();
    p.multiplier = multiplier.data();
    p.shift = shift.data();
    const opt::Depthwise16x8 dw(p);
    for (auto _ : state) dw.RunRows(0, dw.rows(), input.data(), output.data());
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * macs);
}

void BM_ArgMax(benchmark::State& state) {  // deeplab's 513x513 map over 21 classes, uint8
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const int64_t pixels = 513 * 513;
  const std::vector<uint8_t> in = RandomBytes(pixels * 21, 1);
  std::vector<int64_t> out(pixels);
  if (isa == kReference) {
    for (auto _ : state) ref::ArgMinMax<uint8_t, int64_t, true>(in.data(), pixels, 21, 1, out.data());
  } else {
    const opt::ArgMinMax8 k{true, false, true, 21, static_cast<Isa>(isa)};
    for (auto _ : state) k.Run(in.data(), out.data(), 0, pixels);
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * pixels);
}

void BM_QuantizeFloat(benchmark::State& state) {  // movenet's input 192x192x3 float -> int8
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const int64_t n = 192 * 192 * 3;
  std::vector<float> in(n);
  std::mt19937 rng(1);
  for (auto& x : in) x = std::uniform_real_distribution<float>(0, 255)(rng);
  std::vector<uint8_t> out(n);
  if (isa == kReference) {
    for (auto _ : state) ref::AffineQuantize(1.0f, -128, in.data(), reinterpret_cast<int8_t*>(out.data()), 0, n);
  } else {
    const opt::QuantizeFloat8 q{1.0f, -128, true, static_cast<Isa>(isa)};
    for (auto _ : state) q.Run(in.data(), out.data(), 0, n);
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * n);
}

// MobileNet v2's float input 224x224x3 in [-1, 1] -> int8 (scale 1/127.5:
// the multiply-and-check path).
void BM_QuantizeFloatImage(benchmark::State& state) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const int64_t n = 224 * 224 * 3;
  std::vector<float> in(n);
  std::mt19937 rng(1);
  for (auto& x : in) x = std::uniform_real_distribution<float>(-1, 1)(rng);
  std::vector<uint8_t> out(n);
  const float scale = 1.0f / 127.5f;
  if (isa == kReference) {
    for (auto _ : state)
      ref::AffineQuantize(scale, -1, in.data(), reinterpret_cast<int8_t*>(out.data()), 0, n);
  } else {
    const opt::QuantizeFloat8 q{scale, -1, true, static_cast<Isa>(isa)};
    for (auto _ : state) q.Run(in.data(), out.data(), 0, n);
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Softmax(benchmark::State& state) {  // MobileNet's 1x1001 int8 logits
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const int64_t depth = 1001;
  const std::vector<uint8_t> in = RandomBytes(depth, 1);
  std::vector<uint8_t> out(depth);
  ref::QuantizedSoftmaxParams p;
  ref::PrepareQuantizedSoftmax(1.0, 0.1, &p);
  const int8_t* x = reinterpret_cast<const int8_t*>(in.data());
  if (isa == kReference) {
    for (auto _ : state)
      ref::SoftmaxQuantized(p, x, reinterpret_cast<int8_t*>(out.data()), depth, 0, 1);
  } else {
    opt::QuantSoftmax8 table;  // the same table kernel for every ISA
    table.Build(p, true, opt::QuantSoftmax8::Output::kInt8);
    for (auto _ : state) table.Run(x, out.data(), depth, 0, 1);
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * depth);
}

void BM_Mean(benchmark::State& state) {  // MobileNet's global pool 7x7x1280 int8 over H, W
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const int32_t dims[4] = {1, 7, 7, 1280};
  const bool reduced[4] = {false, true, true, false};
  const ref::ReduceShape shape = ref::MakeReduceShape(4, dims, reduced);
  const std::vector<uint8_t> in = RandomBytes(shape.input_count, 1);
  std::vector<int32_t> sums(shape.output_count);
  std::vector<int8_t> out(shape.output_count);
  int32_t m;
  int shift;
  delegato::quant::QuantizeMultiplier(0.9, &m, &shift);
  const int8_t* x = reinterpret_cast<const int8_t*>(in.data());
  if (isa == kReference) {
    for (auto _ : state) ref::MeanQuantized(shape, x, -128, m, shift, -128, sums.data(), out.data());
  } else {
    opt::MeanSum8 kernel;
    kernel.Plan(shape);
    kernel.is_signed = true;
    kernel.isa = static_cast<Isa>(isa);
    for (auto _ : state) {
      kernel.Run(in.data(), sums.data());
      ref::MeanRescale(shape, sums.data(), -128, m, shift, -128, out.data());
    }
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * shape.input_count);
}

// float32 MEAN over the last axis of [1, 16, 32] (the zoo transformer's layer
// norm): one row sum per output.
void BM_MeanFloatLastAxis(benchmark::State& state) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const int32_t dims[3] = {1, 16, 32};
  const bool reduced[3] = {false, false, true};
  const ref::ReduceShape shape = ref::MakeReduceShape(3, dims, reduced);
  std::vector<float> in(static_cast<size_t>(shape.input_count)), out(shape.output_count);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (float& x : in) x = dist(rng);
  opt::MeanSum8 plan;
  plan.Plan(shape);
  plan.isa = static_cast<Isa>(isa < 0 ? 0 : isa);
  const float count = static_cast<float>(shape.reduced_count);
  for (auto _ : state) {
    if (isa == kReference)
      ref::MeanFloat(shape, in.data(), out.data());
    else
      opt::MeanFloatContiguous(plan, count, in.data(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * shape.input_count);
}

// float32 TRANSPOSE_CONV 3x3 stride 2: [1, h, w, cin] -> [1, 2h, 2w, cout], no
// padding at the top and left (the zoo encoder-decoder's layer is 8x8x16 ->
// 16x16x8). The reference scatter against the gather kernel on one thread.
void BM_TransposeConvFloat(benchmark::State& state, int h, int w, int cin, int cout) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  ref::TransposeConvGeometry g;
  g.batches = 1;
  g.input_height = h;
  g.input_width = w;
  g.input_depth = cin;
  g.output_depth = cout;
  g.filter_height = g.filter_width = 3;
  g.stride_height = g.stride_width = 2;
  g.output_height = 2 * h;
  g.output_width = 2 * w;
  g.pad_height = g.pad_width = 0;
  std::vector<float> in(size_t{1} * h * w * cin), filter(size_t{9} * cin * cout), bias(cout),
      out(g.output_elements());
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& x : in) x = dist(rng);
  for (float& x : filter) x = dist(rng);
  for (float& x : bias) x = dist(rng);
  const float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  opt::TransposeConvFloat kernel;
  if (isa != kReference) kernel.Prepare(static_cast<Isa>(isa), g, filter.data());
  for (auto _ : state) {
    if (isa == kReference)
      ref::TransposeConvFloat(g, in.data(), filter.data(), bias.data(), lo, hi, out.data());
    else
      kernel.Run(in.data(), bias.data(), lo, hi, out.data(), 0, kernel.rows());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * int64_t{h} * w * cin * cout * 9);  // MACs
}

// int8 TRANSPOSE_CONV, the same layer as BM_TransposeConvFloat, per-channel
// multipliers.
void BM_TransposeConvInt8(benchmark::State& state, int h, int w, int cin, int cout) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  ref::TransposeConvGeometry g;
  g.batches = 1;
  g.input_height = h;
  g.input_width = w;
  g.input_depth = cin;
  g.output_depth = cout;
  g.filter_height = g.filter_width = 3;
  g.stride_height = g.stride_width = 2;
  g.output_height = 2 * h;
  g.output_width = 2 * w;
  const std::vector<uint8_t> in = RandomBytes(size_t{1} * h * w * cin, 1);
  const std::vector<uint8_t> filter = RandomBytes(size_t{9} * cin * cout, 2);
  std::vector<int32_t> bias(cout, 100), multipliers(cout, 1 << 30), shifts(cout, -7),
      scratch(g.output_elements());
  std::vector<int8_t> out(g.output_elements());
  ref::TransposeConvQuantParams q;
  q.input_offset = 3;
  q.output_offset = -1;
  q.act_min = -128;
  q.act_max = 127;
  q.multiplier = multipliers.data();
  q.shift = shifts.data();
  const int8_t* x = reinterpret_cast<const int8_t*>(in.data());
  const int8_t* f = reinterpret_cast<const int8_t*>(filter.data());
  opt::TransposeConvQuant kernel;
  if (isa != kReference) kernel.Prepare(static_cast<Isa>(isa), g, q, false, f);
  for (auto _ : state) {
    if (isa == kReference)
      ref::TransposeConvQuantized<int8_t, int32_t, int32_t>(g, q, x, f, bias.data(),
                                                            scratch.data(), out.data());
    else
      kernel.Run(x, bias.data(), out.data(), 0, kernel.rows());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * int64_t{h} * w * cin * cout * 9);  // MACs
}

// An image's uint8 input -> int8 with a new scale. (With the same scale and
// zero points 128 apart the op keeps the reference kernel: a sign flip.)
void BM_RequantizeImage(benchmark::State& state) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const int64_t n = 224 * 224 * 3;
  const std::vector<uint8_t> in = RandomBytes(n, 1);
  std::vector<uint8_t> out(n);
  int32_t m;
  int shift;
  delegato::quant::QuantizeMultiplier(1.37, &m, &shift);
  if (isa == kReference) {
    for (auto _ : state)
      ref::Requantize(in.data(), reinterpret_cast<int8_t*>(out.data()), m, shift, 127, -9, 0, n);
  } else {
    const opt::ScopedIsaOverride override_isa(static_cast<Isa>(isa));
    opt::RequantizeTable8 table;
    table.Build(false, true, m, shift, 127, -9);
    for (auto _ : state) table.Run(in.data(), out.data(), 0, n);
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Requantize(benchmark::State& state) {  // deeplab's 33x33x256 uint8 -> uint8
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const int64_t n = 33 * 33 * 256;
  const std::vector<uint8_t> in = RandomBytes(n, 1);
  std::vector<uint8_t> out(n);
  int32_t m;
  int shift;
  delegato::quant::QuantizeMultiplier(0.83, &m, &shift);
  if (isa == kReference) {
    for (auto _ : state) ref::Requantize(in.data(), out.data(), m, shift, 128, 120, 0, n);
  } else {
    const opt::ScopedIsaOverride override_isa(static_cast<Isa>(isa));  // avx512vnni: VBMI lookups
    opt::RequantizeTable8 table;
    table.Build(false, false, m, shift, 128, 120);
    for (auto _ : state) table.Run(in.data(), out.data(), 0, n);
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * n);
}

// Each 256-entry byte lookup (quantize.h) over 64 KiB, by ByteLookup value.
void BM_LookupBytes(benchmark::State& state) {
  const auto kind = static_cast<opt::ByteLookup>(state.range(0));
  state.SetLabel(opt::ByteLookupName(kind));
  if (!opt::ByteLookupSupported(kind)) {
    state.SkipWithError("lookup not supported on this CPU");
    return;
  }
  const int64_t n = 65536;
  const std::vector<uint8_t> in = RandomBytes(n, 1);
  std::vector<uint8_t> out(n);
  alignas(64) uint8_t table[256];
  for (int i = 0; i < 256; ++i) table[i] = static_cast<uint8_t>(i * 37 + 11);
  for (auto _ : state) opt::LookupBytes(kind, table, in.data(), out.data(), 0, n);
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * n);
}

#if DELEGATO_X86
// The machine's int8 compute limit: 24 independent vpdpbusd per iteration
// on zmm registers (64 u8 x s8 multiply-adds each), nothing else but the
// loop counter, written in assembly so no compiler spills get in the way.
DLG_TARGET_AVX512 void DpbusdLoop(int64_t iterations) {
  __asm__ volatile(
      "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"
      "vpternlogd $0xff, %%zmm1, %%zmm1, %%zmm1\n\t"
      "1:\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm8\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm9\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm10\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm11\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm12\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm13\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm14\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm15\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm16\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm17\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm18\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm19\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm20\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm21\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm22\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm23\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm24\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm25\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm26\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm27\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm28\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm29\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm30\n\t"
      "vpdpbusd %%zmm1, %%zmm0, %%zmm31\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "cc", "xmm0", "xmm1", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
        "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24",
        "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");
}

void BM_PeakVpdpbusd(benchmark::State& state) {
  if (!opt::IsaSupported(Isa::kAvx512Vnni)) {
    state.SkipWithError("no AVX-512 VNNI");
    return;
  }
  constexpr int64_t kIterations = 1 << 16;
  for (auto _ : state) DpbusdLoop(kIterations);
  state.SetItemsProcessed(state.iterations() * kIterations * 24 * 64);  // MACs
}
BENCHMARK(BM_PeakVpdpbusd)->Unit(benchmark::kMicrosecond);

// The AVX2 int8 peak as both engines' AVX2 GEMMs reach it: vpmaddwd on
// int16-widened operands, 16 multiply-adds per ymm instruction (vpmaddubsw
// would do 32 but saturates its pair sums, so exact kernels do not use it).
DLG_TARGET_AVX2 void PmaddwdLoop(int64_t iterations) {
  __asm__ volatile(
      "vpxor %%ymm0, %%ymm0, %%ymm0\n\t"
      "vpcmpeqd %%ymm1, %%ymm1, %%ymm1\n\t"
      "1:\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm4\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm5\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm6\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm7\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm8\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm9\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm10\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm11\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm12\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm13\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm14\n\t"
      "vpmaddwd %%ymm1, %%ymm0, %%ymm15\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "cc", "xmm0", "xmm1", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

void BM_PeakVpmaddwd(benchmark::State& state) {
  if (!opt::IsaSupported(Isa::kAvx2)) {
    state.SkipWithError("no AVX2");
    return;
  }
  constexpr int64_t kIterations = 1 << 16;
  for (auto _ : state) PmaddwdLoop(kIterations);
  state.SetItemsProcessed(state.iterations() * kIterations * 12 * 16);  // MACs
}
BENCHMARK(BM_PeakVpmaddwd)->Unit(benchmark::kMicrosecond);
#endif

void IsaArgs(benchmark::internal::Benchmark* b) {
  b->ArgName("isa");  // -1 reference, 0 scalar, 1 avx2, 2 avx512vnni
  for (int isa : {kReference, 0, 1, 2}) b->Arg(isa);
  b->Unit(benchmark::kMicrosecond);
}

// The int8 GEMM (CONV_2D, FULLY_CONNECTED): also 3, avx512vnni with AMX tiles.
void GemmIsaArgs(benchmark::internal::Benchmark* b) {
  IsaArgs(b);
  b->Arg(kAmx);
}

// Hybrid CONV_2D (float input, per-channel int8 weights) as the op runs it:
// the image quantized, then the convolution. Reference: QuantizeConvInput +
// HybridConv; others: HybridQuantizeRow + HybridConvKernel on one thread.
void BM_HybridConv(benchmark::State& state, Layer l) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::ConvGeometry g = SameConvGeometry(l);
  const size_t image = size_t{1} * l.h * l.w * l.cin;
  std::vector<float> input(image);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 3.0f);
  for (float& x : input) x = dist(rng);
  const std::vector<uint8_t> filter = RandomBytes(g.packed_filter_elements(), 2);
  const auto* f = reinterpret_cast<const int8_t*>(filter.data());
  std::vector<float> scales_w(l.cout, 0.01f), bias(l.cout, 0.5f);
  std::vector<float> output(static_cast<size_t>(g.output_rows()) * g.output_width * l.cout);
  std::vector<int8_t> quantized(image);
  float scale = 0;
  int32_t zero_point = 0;
  const int64_t macs = g.output_rows() * g.output_width * int64_t{g.filter_height} *
                       g.filter_width * l.cin * l.cout;
  if (isa == kReference) {
    ref::HybridConvParams p;
    p.per_channel = true;
    p.weight_scales = scales_w.data();
    p.act_min = 0.0f;
    p.act_max = 6.0f;
    for (auto _ : state) {
      ref::QuantizeConvInput(g, true, 0.0f, input.data(), quantized.data(), &scale, &zero_point, 0,
                             1);
      ref::HybridConv(g, p, quantized.data(), &scale, &zero_point, f, bias.data(), output.data(),
                      0, g.output_rows());
    }
  } else {
    opt::HybridConvKernelParams p;
    p.geometry = g;
    p.filter = f;
    p.per_channel = true;
    p.weight_scales = scales_w.data();
    p.act_min = 0.0f;
    p.act_max = 6.0f;
    const opt::HybridConvKernel kernel(p, static_cast<Isa>(isa), 1);
    opt::AlignedBuffer<uint8_t> scratch(kernel.scratch_bytes());
    for (auto _ : state) {
      opt::HybridQuantizeRow(static_cast<Isa>(isa), input.data(), static_cast<int32_t>(image),
                             true, quantized.data(), &scale, &zero_point);
      kernel.WidenImage(0, quantized.data(), zero_point, scratch.data());
      kernel.RunTask(0, &scale, bias.data(), output.data(), scratch.data());
    }
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * macs);
}

// Hybrid FULLY_CONNECTED (asymmetric rows, per-channel weights), rows x depth -> units.
void BM_HybridFullyConnected(benchmark::State& state, int rows, int depth, int units) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  std::vector<float> input(static_cast<size_t>(rows) * depth);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 3.0f);
  for (float& x : input) x = dist(rng);
  const std::vector<uint8_t> weights = RandomBytes(static_cast<size_t>(units) * depth, 2);
  const auto* wt = reinterpret_cast<const int8_t*>(weights.data());
  std::vector<float> scales_w(units, 0.01f), bias(units, 0.5f);
  std::vector<int32_t> row_sums(units, 0);
  for (int u = 0; u < units; ++u)
    for (int k = 0; k < depth; ++k) row_sums[u] += wt[static_cast<size_t>(u) * depth + k];
  std::vector<float> output(static_cast<size_t>(rows) * units);
  if (isa == kReference) {
    ref::HybridFullyConnectedParams p;
    p.batches = rows;
    p.depth = depth;
    p.units = units;
    p.weights = wt;
    p.weight_scales = scales_w.data();
    p.per_channel = true;
    p.asymmetric = true;
    p.row_sums = row_sums.data();
    std::vector<int8_t> quantized(input.size());
    for (auto _ : state)
      ref::HybridFullyConnected(p, input.data(), bias.data(), quantized.data(), output.data(), 0,
                                rows, false);
  } else {
    opt::HybridFullyConnectedKernelParams p;
    p.depth = depth;
    p.units = units;
    p.weights = wt;
    p.weight_scales = scales_w.data();
    p.per_channel = true;
    p.asymmetric = true;
    const opt::HybridFullyConnectedKernel kernel(p, static_cast<Isa>(isa));
    opt::AlignedBuffer<uint8_t> scratch(kernel.scratch_bytes(rows));
    for (auto _ : state) kernel.Run(input.data(), bias.data(), output.data(), 0, rows, scratch.data());
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * int64_t{rows} * depth * units);
}

// Hybrid BATCH_MATMUL (asymmetric lhs rows, constant int8 rhs): batches x
// [rows x depth] x [depth x cols], the lhs quantization included.
void BM_HybridBatchMatMul(benchmark::State& state, int batches, int rows, int depth, int cols) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  ref::BatchMatMulGeometry g;
  g.lhs_batch[2] = g.out_batch[2] = batches;
  g.rows = rows;
  g.depth = depth;
  g.cols = cols;
  std::vector<float> lhs(static_cast<size_t>(batches) * rows * depth);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 3.0f);
  for (float& x : lhs) x = dist(rng);
  const std::vector<uint8_t> rhs_bytes = RandomBytes(static_cast<size_t>(depth) * cols, 2);
  const auto* rhs = reinterpret_cast<const int8_t*>(rhs_bytes.data());
  std::vector<int32_t> sums(cols, 0);
  for (int k = 0; k < depth; ++k)
    for (int n = 0; n < cols; ++n) sums[n] += rhs[static_cast<size_t>(k) * cols + n];
  ref::HybridBatchMatMulParams p;
  p.asymmetric = true;
  p.rhs_scale = 0.01f;
  p.column_sums = sums.data();
  const size_t lhs_rows = static_cast<size_t>(batches) * rows;
  std::vector<int8_t> quantized(lhs.size());
  std::vector<float> scales(lhs_rows), row(depth);
  std::vector<int32_t> zero_points(lhs_rows);
  std::vector<float> output(lhs_rows * cols);
  if (isa == kReference) {
    for (auto _ : state) {
      ref::QuantizeBatchMatMulLhs(g, p, lhs.data(), row.data(), quantized.data(), scales.data(),
                                  zero_points.data(), 0, batches);
      ref::HybridBatchMatMul(g, p, quantized.data(), scales.data(), zero_points.data(), rhs,
                             output.data());
    }
  } else {
    const opt::HybridBatchMatMulKernel kernel(g, rhs, static_cast<Isa>(isa));
    opt::AlignedBuffer<uint8_t> scratch(kernel.scratch_bytes());
    for (auto _ : state) {
      kernel.QuantizeLhs(p, lhs.data(), row.data(), quantized.data(), scales.data(),
                         zero_points.data(), 0, batches);
      kernel.Run(p, quantized.data(), scales.data(), zero_points.data(), output.data(),
                 scratch.data());
    }
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * int64_t{batches} * rows * depth * cols);
}

// Hybrid DEPTHWISE_CONV_2D (multiplier 1) with its per-call image quantization.
void BM_HybridDepthwise(benchmark::State& state, Layer l) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::DepthwiseGeometry g = SameDepthwiseGeometry(l);  // multiplier 1: cin == cout
  const size_t image = size_t{1} * l.h * l.w * l.cin;
  std::vector<float> input(image);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 3.0f);
  for (float& x : input) x = dist(rng);
  const std::vector<uint8_t> filter = RandomBytes(g.filter_elements(), 2);
  const auto* f = reinterpret_cast<const int8_t*>(filter.data());
  std::vector<float> scales_c(l.cin, 0.01f), bias(l.cin, 0.5f);
  std::vector<float> output(static_cast<size_t>(g.output_rows()) * g.output_width * l.cin);
  std::vector<int8_t> quantized(image);
  float scale = 0;
  int32_t zero_point = 0;
  if (isa == kReference) {
    ref::HybridDepthwiseParams p;
    p.channel_scales = scales_c.data();
    p.act_min = 0.0f;
    p.act_max = 6.0f;
    for (auto _ : state) {
      ref::QuantizeDepthwiseInput(g, input.data(), quantized.data(), &scale, &zero_point, 0, 1);
      ref::HybridDepthwiseConv(g, p, quantized.data(), &scale, &zero_point, f, bias.data(),
                               output.data(), 0, g.output_rows());
    }
  } else {
    const opt::HybridDepthwiseKernel kernel(g, f, scales_c.data(), 0.0f, 6.0f,
                                            static_cast<Isa>(isa));
    opt::AlignedBuffer<uint8_t> widened(kernel.scratch_bytes());
    for (auto _ : state) {
      opt::HybridQuantizeRow(static_cast<Isa>(isa), input.data(), static_cast<int32_t>(image),
                             true, quantized.data(), &scale, &zero_point);
      kernel.WidenImage(0, quantized.data(), zero_point, widened.data());
      kernel.Run(widened.data(), &scale, bias.data(), output.data(), 0, g.output_rows());
    }
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * g.output_rows() * g.output_width * l.cin *
                          int64_t{l.filter} * l.filter);
}

// float32 BATCH_MATMUL, batches x [rows x depth] x [depth x cols] (adj_y: rhs [cols x depth]).
// float32 EXP over n values in [-10, 10].
void BM_FloatExp(benchmark::State& state, int64_t n) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  std::vector<float> in(static_cast<size_t>(n)), out(in.size());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  for (float& x : in) x = dist(rng);
  for (auto _ : state) {
    if (isa == kReference)
      ref::UnaryMathRange(ref::UnaryMath::kExp, in.data(), out.data(), 0, n);
    else
      opt::FloatExp(static_cast<Isa>(isa), in.data(), out.data(), 0, n);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// float32 GELU over n values in [-6, 6] (the zoo transformer's 16x64 hidden
// layer: n = 1024); `approximate` picks the tanh form.
void BM_FloatGelu(benchmark::State& state, int64_t n, bool approximate) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  std::vector<float> in(static_cast<size_t>(n)), out(in.size());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-6.0f, 6.0f);
  for (float& x : in) x = dist(rng);
  for (auto _ : state) {
    if (isa == kReference)
      ref::GeluFloat(approximate, in.data(), out.data(), 0, n);
    else
      opt::FloatGelu(static_cast<Isa>(isa), approximate, in.data(), out.data(), 0, n);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// float32 SOFTMAX over short rows: the transformer's attention scores
// (2 heads x 16 queries, 16 keys each).
void BM_FloatSoftmax(benchmark::State& state, int64_t rows, int64_t depth) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  std::vector<float> in(static_cast<size_t>(rows * depth)), out(in.size());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-6.0f, 6.0f);
  for (float& x : in) x = dist(rng);
  for (auto _ : state) {
    if (isa == kReference)
      ref::SoftmaxFloat(1.0f, in.data(), out.data(), depth, 0, rows);
    else
      opt::FloatSoftmax(static_cast<Isa>(isa), 1.0f, in.data(), out.data(), depth, 0, rows);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * depth);
}

// TRANSPOSE of float32 [1, a, b, c] by perm: the reference's tile walk against
// the simplified plan (optimized/transpose.h).
void BM_TransposeFloat(benchmark::State& state, std::vector<int32_t> dims,
                       std::vector<int32_t> perm) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const int rank = static_cast<int>(dims.size());
  int64_t count = 1;
  for (int32_t d : dims) count *= d;
  std::vector<float> in(static_cast<size_t>(count)), out(in.size());
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  const auto* src = reinterpret_cast<const uint8_t*>(in.data());
  auto* dst = reinterpret_cast<uint8_t*>(out.data());
  const opt::TransposePlan plan = opt::PlanTranspose(
      isa == kReference ? Isa::kScalar : static_cast<Isa>(isa), 4, rank, dims.data(), perm.data());
  for (auto _ : state) {
    if (isa == kReference)
      ref::Transpose(4, rank, dims.data(), perm.data(), src, dst);
    else
      opt::Transpose(plan, src, dst, 0, opt::TransposeRows(plan));
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * count);
}

// float32 swish: MUL(x, LOGISTIC(x)) in one pass (the LOGISTIC fused into
// the MUL); the reference as LOGISTIC then the multiply.
void BM_FloatSwish(benchmark::State& state, int64_t n) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  std::vector<float> in(static_cast<size_t>(n)), out(in.size());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  for (float& x : in) x = dist(rng);
  for (auto _ : state) {
    if (isa == kReference) {
      ref::LogisticFloat(in.data(), out.data(), 0, n);
      for (int64_t i = 0; i < n; ++i) out[i] *= in[i];
    } else {
      opt::FloatSwish(static_cast<Isa>(isa), in.data(), out.data(), 0, n);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// int8 SQUARED_DIFFERENCE of [rows, cols] against [rows, 1] (the zoo
// transformer's variance step: 16 tokens x 32 features minus their mean).
void BM_SquaredDifferenceInt8(benchmark::State& state, int rows, int cols) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  ref::QuantizedSquaredDifferenceParams p;
  p.input1_offset = 5;
  p.input2_offset = -7;
  p.output_offset = -128;
  delegato::quant::QuantizeMultiplier(0.5, &p.input1_multiplier, &p.input1_shift);
  delegato::quant::QuantizeMultiplier(0.375, &p.input2_multiplier, &p.input2_shift);
  delegato::quant::QuantizeMultiplier(0.04, &p.output_multiplier, &p.output_shift);
  const ref::BroadcastPlan plan = ref::MakeBroadcastPlan({rows, cols}, {rows, 1}, {rows, cols});
  std::vector<int8_t> a(static_cast<size_t>(rows) * cols), b(rows), out(a.size());
  std::mt19937 rng(9);
  for (int8_t& v : a) v = static_cast<int8_t>(rng());
  for (int8_t& v : b) v = static_cast<int8_t>(rng());
  const opt::QuantSquaredDifference8 fast(p, static_cast<Isa>(isa == kReference ? 0 : isa));
  for (auto _ : state) {
    if (isa == kReference)
      ref::QuantizedSquaredDifference(p, plan, a.data(), b.data(), out.data(), 0, plan.num_elements);
    else
      fast.Run(plan, a.data(), b.data(), out.data(), 0, plan.num_elements);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * plan.num_elements);
}

// int8 BATCH_MATMUL [b, m, k] x [b, k, n] (the zoo transformer's attention:
// 4 heads, 16 tokens, 8 values per head), requantized.
void BM_BatchMatMulInt8(benchmark::State& state, int batches, int rows, int depth, int cols) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  ref::BatchMatMulGeometry g;
  g.rows = rows;
  g.cols = cols;
  g.depth = depth;
  g.lhs_batch[2] = g.rhs_batch[2] = g.out_batch[2] = batches;
  const std::vector<uint8_t> lhs = RandomBytes(size_t{1} * batches * rows * depth, 1);
  const std::vector<uint8_t> rhs = RandomBytes(size_t{1} * batches * depth * cols, 2);
  std::vector<int8_t> out(size_t{1} * batches * rows * cols);
  ref::BatchMatMulQuantParams q;
  q.lhs_offset = 3;
  q.rhs_offset = -1;
  q.multiplier = 1 << 30;
  q.shift = -6;
  q.act_min = -128;
  q.act_max = 127;
  std::vector<int32_t> scratch(opt::BatchMatMulInt8ScratchBytes(g) / sizeof(int32_t) + 1);
  const int8_t* a = reinterpret_cast<const int8_t*>(lhs.data());
  const int8_t* b = reinterpret_cast<const int8_t*>(rhs.data());
  for (auto _ : state) {
    if (isa == kReference)
      ref::BatchMatMulQuantized<int8_t, int32_t>(g, q, a, b, out.data());
    else
      opt::BatchMatMulInt8(static_cast<Isa>(isa), g, q, a, b, out.data(), scratch.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * int64_t{batches} * rows * depth * cols);  // MACs
}

void BM_BatchMatMulFloat(benchmark::State& state, int batches, int rows, int depth, int cols,
                         bool adj_y) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  ref::BatchMatMulGeometry g;
  g.lhs_batch[2] = g.rhs_batch[2] = g.out_batch[2] = batches;
  g.rows = rows;
  g.depth = depth;
  g.cols = cols;
  g.adj_y = adj_y;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> lhs(static_cast<size_t>(batches) * rows * depth);
  std::vector<float> rhs(static_cast<size_t>(batches) * depth * cols);
  for (float& x : lhs) x = dist(rng);
  for (float& x : rhs) x = dist(rng);
  std::vector<float> out(static_cast<size_t>(batches) * rows * cols);
  std::vector<float> scratch(opt::BatchMatMulFloatScratchBytes(g) / sizeof(float) + 1);
  if (isa == kReference) {
    for (auto _ : state) ref::BatchMatMulFloat(g, lhs.data(), rhs.data(), out.data());
  } else {
    for (auto _ : state)
      opt::BatchMatMulFloat(static_cast<Isa>(isa), g, lhs.data(), rhs.data(), out.data(),
                            scratch.data());
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * int64_t{batches} * rows * depth * cols);
}

// uint8 resize whose weights are not sixteenths (half-pixel centres, 33 -> 129):
// the float AVX2 path.
void BM_ResizeBilinearHalfPixel(benchmark::State& state) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  const ref::ResizeGeometry g{1, 33, 33, 21, 129, 129, false, true};
  const std::vector<uint8_t> in = RandomBytes(33 * 33 * 21, 1);
  std::vector<uint8_t> out(size_t{129} * 129 * 21);
  if (isa == kReference) {
    for (auto _ : state) ref::ResizeBilinearFloat(g, in.data(), out.data());
  } else {
    const opt::ResizeBilinear r(opt::ResizeBilinear::Type::kUInt8, g, static_cast<Isa>(isa));
    for (auto _ : state) r.RunRows(0, r.rows(), in.data(), out.data());
  }
  benchmark::DoNotOptimize(out.data());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}

int RegisterAll() {
  for (const Layer& l : kConvLayers)
    benchmark::RegisterBenchmark(Name(l, "conv_int8").c_str(), BM_Conv, l, ConvCase::kInt8, 1)
        ->Apply(GemmIsaArgs);
  // One output channel (the encoder-decoder's last layer).
  benchmark::RegisterBenchmark(Name(Layer{32, 32, 8, 1, 1, 1}, "conv_int8").c_str(), BM_Conv,
                               Layer{32, 32, 8, 1, 1, 1}, ConvCase::kInt8, 1)
      ->Apply(GemmIsaArgs);
  // Grouped int8 3x3: ResNeXt-50's first stage (32 groups of 4) and 6 groups of 16.
  benchmark::RegisterBenchmark("conv_int8_grouped/56x56x128->128/k3s1/g32", BM_Conv,
                               Layer{56, 56, 128, 128, 3, 1}, ConvCase::kInt8, 32)
      ->Apply(GemmIsaArgs);
  benchmark::RegisterBenchmark("conv_int8_grouped/28x28x96->96/k3s1/g6", BM_Conv,
                               Layer{28, 28, 96, 96, 3, 1}, ConvCase::kInt8, 6)
      ->Apply(GemmIsaArgs);
  for (const Layer& l : {kConvLayers[1], kConvLayers[2], kConvLayers[3], kConvLayers[4]}) {
    benchmark::RegisterBenchmark(Name(l, "conv_int8_f32scales").c_str(), BM_Conv, l,
                                 ConvCase::kInt8Float32Scales, 1)
        ->Apply(GemmIsaArgs);
    benchmark::RegisterBenchmark(Name(l, "conv_uint8").c_str(), BM_Conv, l, ConvCase::kUint8, 1)
        ->Apply(GemmIsaArgs);
  }
  // float32: a MobileNet expand layer, few output channels (the
  // encoder-decoder's 3x3 and final 1x1, DenseNet's growth layer), a
  // first layer on 3 channels (ResNet's 5x5 stride 2),
  // and a lone row (MobileNet v3's 1x1 head on its pooled 1x1 image, an
  // EfficientNet squeeze-and-excitation expansion).
  for (const Layer& l : {kConvLayers[2], kConvLayers[3], kConvLayers[8], Layer{16, 16, 16, 8, 3, 1},
                         Layer{32, 32, 8, 1, 1, 1}, Layer{128, 128, 3, 8, 3, 2},
                         Layer{64, 64, 3, 16, 5, 2}, Layer{1, 1, 432, 1024, 1, 1}, Layer{1, 1, 48, 1152, 1, 1}})
    benchmark::RegisterBenchmark(Name(l, "conv_float").c_str(), BM_ConvFloat, l, 1, false)
        ->Apply(IsaArgs);
  // float32 3x3 stride 1: the zoo DenseNet's growth layers, the zoo ResNet's
  // blocks, a ResNet-18/50 stage and a VGG-style layer, the GEMM and Winograd
  // (the 24x24 DenseNet layer's GEMM is registered above).
  benchmark::RegisterBenchmark(Name(kConvLayers[8], "conv_float_winograd").c_str(), BM_ConvFloat,
                               kConvLayers[8], 1, true)
      ->Apply(IsaArgs);
  for (const Layer& l : {Layer{12, 12, 16, 8, 3, 1},
                         Layer{16, 16, 16, 16, 3, 1}, Layer{8, 8, 32, 32, 3, 1},
                         Layer{4, 4, 64, 64, 3, 1}, Layer{56, 56, 64, 64, 3, 1},
                         Layer{28, 28, 128, 128, 3, 1}, Layer{32, 32, 8, 8, 3, 1},
                         Layer{32, 32, 32, 16, 3, 1}}) {
    benchmark::RegisterBenchmark(Name(l, "conv_float").c_str(), BM_ConvFloat, l, 1, false)
        ->Apply(IsaArgs);
    benchmark::RegisterBenchmark(Name(l, "conv_float_winograd").c_str(), BM_ConvFloat, l, 1, true)
        ->Apply(IsaArgs);
  }
  // float32 grouped: a ResNeXt-50 stage-1 3x3 (32 groups of 4 channels) and a
  // RegNet-style 3x3 (groups of 16 channels).
  benchmark::RegisterBenchmark("conv_float_grouped/56x56x128->128/k3s1/g32", BM_ConvFloat,
                               Layer{56, 56, 128, 128, 3, 1}, 32, false)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("conv_float_grouped/28x28x96->96/k3s1/g6", BM_ConvFloat,
                               Layer{28, 28, 96, 96, 3, 1}, 6, false)
      ->Apply(IsaArgs);
  // int16x8: a MobileNet expand layer and a 3x3 layer, the reference and AVX2.
  for (const Layer& l : {kConvLayers[3], Layer{24, 24, 32, 32, 3, 1}})
    benchmark::RegisterBenchmark(Name(l, "conv_16x8").c_str(), BM_Conv16x8, l)
        ->ArgName("isa")
        ->Arg(kReference)
        ->Arg(1)
        ->Unit(benchmark::kMicrosecond);
  // int16x8 FULLY_CONNECTED: a transformer's projection and a classifier.
  benchmark::RegisterBenchmark("fully_connected_16x8/16x128->256", BM_FullyConnected16x8, 16, 128,
                               256)
      ->ArgName("isa")
      ->Arg(kReference)
      ->Arg(1)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("fully_connected_16x8/1x1280->1000", BM_FullyConnected16x8, 1,
                               1280, 1000)
      ->ArgName("isa")
      ->Arg(kReference)
      ->Arg(1)
      ->Unit(benchmark::kMicrosecond);
  // int16x8 depthwise: MobileNet v2's 56x56 3x3 and an EfficientNet 5x5.
  for (const Layer& l : {kDepthwiseLayers[2], kDepthwiseLayers[8]})
    benchmark::RegisterBenchmark(Name(l, "depthwise_16x8").c_str(), BM_Depthwise16x8, l)
        ->ArgName("isa")
        ->Arg(kReference)
        ->Arg(1)
        ->Unit(benchmark::kMicrosecond);
  // float32 depthwise: MobileNet v2's 56x56 and 28x28 layers (the larger
  // ones are memory-bound; see FloatConvDepthwise), a 7x7, an EfficientNet 5x5,
  // MobileNet v1 0.25's first (8 channels: one AVX2 vector), 16 channels
  // (one AVX-512 vector) and a 5x5 on 8.
  for (const Layer& l : {kDepthwiseLayers[2], kDepthwiseLayers[3], kDepthwiseLayers[5],
                         kDepthwiseLayers[8], Layer{64, 64, 8, 8, 3, 1}, Layer{64, 64, 16, 16, 3, 1},
                         Layer{32, 32, 8, 8, 5, 1}})
    benchmark::RegisterBenchmark(Name(l, "depthwise_float").c_str(), BM_DepthwiseFloat, l)
        ->Apply(IsaArgs);
  for (const Layer& l : kDepthwiseLayers)
    benchmark::RegisterBenchmark(Name(l, "depthwise_int8").c_str(), BM_Depthwise, l,
                                 DepthwiseCase::kInt8)
        ->Apply(IsaArgs);
  for (const Layer& l : {kDepthwiseLayers[0], kDepthwiseLayers[1], kDepthwiseLayers[2]}) {
    benchmark::RegisterBenchmark(Name(l, "depthwise_int8_tied").c_str(), BM_Depthwise, l,
                                 DepthwiseCase::kTied)
        ->Apply(IsaArgs);
    benchmark::RegisterBenchmark(Name(l, "depthwise_uint8").c_str(), BM_Depthwise, l,
                                 DepthwiseCase::kUint8)
        ->Apply(IsaArgs);
  }
  benchmark::RegisterBenchmark("fully_connected_int8/1280->1001", BM_FullyConnected, 1, 1280, 1001)
      ->Apply(GemmIsaArgs);
  benchmark::RegisterBenchmark("fully_connected_int8/16x32->32", BM_FullyConnected, 16, 32, 32)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("average_pool_int8/24x24x24/2x2s2", BM_Pool8, 24, 24, 24, 2, true)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("max_pool_int8/56x56x64/2x2s2", BM_Pool8, 56, 56, 64, 2, false)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("average_pool_int8/7x7x1280/7x7", BM_Pool8, 7, 7, 1280, 7, true)
      ->Apply(IsaArgs);
  // A small transformer's projections: few rows, 64-256 taps.
  benchmark::RegisterBenchmark("fully_connected_int8/8x64->64", BM_FullyConnected, 8, 64, 64)
      ->Apply(GemmIsaArgs);
  benchmark::RegisterBenchmark("fully_connected_int8/16x128->256", BM_FullyConnected, 16, 128, 256)
      ->Apply(GemmIsaArgs);
  for (const Layer& l : {kConvLayers[0], kConvLayers[3], kConvLayers[5], kConvLayers[7]})
    benchmark::RegisterBenchmark(Name(l, "conv_hybrid").c_str(), BM_HybridConv, l)
        ->Apply(IsaArgs);
  for (const Layer& l : kSmallHybridLayers)
    benchmark::RegisterBenchmark(Name(l, "conv_hybrid").c_str(), BM_HybridConv, l)
        ->Apply(IsaArgs);
  for (const Layer& l : {kDepthwiseLayers[2], kDepthwiseLayers[4]})
    benchmark::RegisterBenchmark(Name(l, "depthwise_hybrid").c_str(), BM_HybridDepthwise, l)
        ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("exp_float/1024", BM_FloatExp, 1024)->Apply(IsaArgs);
  benchmark::RegisterBenchmark("gelu_float/1024", BM_FloatGelu, 1024, false)->Apply(IsaArgs);
  // EfficientNet-B0's (96 x 96) first expanded activation, 48 x 48 x 96.
  benchmark::RegisterBenchmark("swish_float/48x48x96", BM_FloatSwish, 48 * 48 * 96)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("gelu_float_approximate/1024", BM_FloatGelu, 1024, true)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("softmax_float/32x16", BM_FloatSoftmax, 32, 16)->Apply(IsaArgs);
  benchmark::RegisterBenchmark("softmax_float/4x1001", BM_FloatSoftmax, 4, 1001)->Apply(IsaArgs);
  // An attention layer's head split and key transpose, and an image's NCHW -> NHWC.
  benchmark::RegisterBenchmark("transpose_float/1x16x4x8_0213", BM_TransposeFloat,
                               std::vector<int32_t>{1, 16, 4, 8}, std::vector<int32_t>{0, 2, 1, 3})
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("transpose_float/1x16x4x8_0231", BM_TransposeFloat,
                               std::vector<int32_t>{1, 16, 4, 8}, std::vector<int32_t>{0, 2, 3, 1})
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("transpose_float/1x3x224x224_0231", BM_TransposeFloat,
                               std::vector<int32_t>{1, 3, 224, 224},
                               std::vector<int32_t>{0, 2, 3, 1})
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("transpose_float/1x64x56x56_0231", BM_TransposeFloat,
                               std::vector<int32_t>{1, 64, 56, 56},
                               std::vector<int32_t>{0, 2, 3, 1})
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("squared_difference_int8/16x32", BM_SquaredDifferenceInt8, 16, 32)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("batch_matmul_int8/4x16x8x16", BM_BatchMatMulInt8, 4, 16, 8, 16)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("batch_matmul_float/4x16x16x8", BM_BatchMatMulFloat, 4, 16, 16, 8,
                               false)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("batch_matmul_float/4x16x8x16_adj_y", BM_BatchMatMulFloat, 4, 16,
                               8, 16, true)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("batch_matmul_float/8x128x64x128", BM_BatchMatMulFloat, 8, 128,
                               64, 128, false)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("fully_connected_hybrid/1x1280->1001", BM_HybridFullyConnected, 1,
                               1280, 1001)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("fully_connected_hybrid/64x128->256", BM_HybridFullyConnected, 64,
                               128, 256)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("batch_matmul_hybrid/8x128x64x128", BM_HybridBatchMatMul, 8, 128,
                               64, 128)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("add_int8/56x56x24", BM_Add)->Apply(IsaArgs);
  for (const auto& [pixels, channels] : {std::pair{48 * 48, 32}, std::pair{24 * 24, 144},
                                         std::pair{12 * 12, 240}})
    benchmark::RegisterBenchmark(
        ("mul_int8/" + std::to_string(pixels) + "x" + std::to_string(channels) + "*" +
         std::to_string(channels)).c_str(),
        RunInt8MulChannels, pixels, channels)
        ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("mul_float/24x24x40*40", BM_MulChannelsFloat)->Apply(IsaArgs);
  benchmark::RegisterBenchmark("sub_int8/192x192x3-3", BM_SubChannels)->Apply(IsaArgs);
  benchmark::RegisterBenchmark("resize_bilinear_int8/16x16x8->32x32", BM_ResizeBilinearInt8)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("resize_bilinear_uint8/33x33x21->513x513", BM_ResizeBilinear)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("resize_bilinear_float/16x16x8->32x32", BM_ResizeBilinearFloat)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("arg_max_uint8/513x513x21", BM_ArgMax)->Apply(IsaArgs);
  benchmark::RegisterBenchmark("quantize_float_int8/192x192x3", BM_QuantizeFloat)->Apply(IsaArgs);
  benchmark::RegisterBenchmark("requantize_uint8/33x33x256", BM_Requantize)->Apply(IsaArgs);
  benchmark::RegisterBenchmark("lookup_bytes/64k", BM_LookupBytes)->DenseRange(0, 4);
  benchmark::RegisterBenchmark("requantize_uint8_int8/224x224x3", BM_RequantizeImage)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("quantize_float_int8/224x224x3", BM_QuantizeFloatImage)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("transpose_conv_int8/8x8x16->16x16x8", BM_TransposeConvInt8, 8, 8, 16,
                               8)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("transpose_conv_int8/16x16x32->32x32x16", BM_TransposeConvInt8,
                               16, 16, 32, 16)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("softmax_int8/1x1001", BM_Softmax)->Apply(IsaArgs);
  benchmark::RegisterBenchmark("mean_int8/7x7x1280", BM_Mean)->Apply(IsaArgs);
  benchmark::RegisterBenchmark("transpose_conv_float/8x8x16->16x16x8", BM_TransposeConvFloat, 8, 8, 16,
                               8)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("transpose_conv_float/16x16x32->32x32x16", BM_TransposeConvFloat,
                               16, 16, 32, 16)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("mean_float_last_axis/16x32", BM_MeanFloatLastAxis)
      ->Apply(IsaArgs);
  benchmark::RegisterBenchmark("resize_bilinear_uint8_half_pixel/33x33x21->129x129",
                               BM_ResizeBilinearHalfPixel)
      ->Apply(IsaArgs);
  return 0;
}
const int kRegistered = RegisterAll();

}  // namespace

BENCHMARK_MAIN();
