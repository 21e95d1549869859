// Micro-benchmarks of the optimized kernels on MobileNet-shaped layers, per
// ISA this CPU runs, next to the reference kernel (single thread). Reports
// MAC/s as items_per_second. Numbers go into docs/performance.md; they are
// not pass/fail.
//   build/kernels_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/quant_conv.h"
#include "kernels/optimized/quant_depthwise.h"
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

struct Layer {
  int h, w, cin, cout, filter, stride;
};

// MobileNet v2 (224x224) layers.
const Layer kConvLayers[] = {
    {224, 224, 3, 32, 3, 2},    // Conv (first, im2col with 3 channels)
    {112, 112, 32, 16, 1, 1},   // expanded_conv project
    {56, 56, 24, 144, 1, 1},    // expand
    {28, 28, 192, 32, 1, 1},    // project
    {14, 14, 384, 64, 1, 1},    // project
    {7, 7, 960, 320, 1, 1},     // project
    {7, 7, 320, 1280, 1, 1},    // Conv_1
};

const Layer kDepthwiseLayers[] = {
    {112, 112, 32, 32, 3, 1},
    {112, 112, 96, 96, 3, 2},
    {56, 56, 144, 144, 3, 1},
    {28, 28, 192, 192, 3, 1},
    {14, 14, 576, 576, 3, 1},
    {7, 7, 960, 960, 3, 1},
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
  if (isa != kReference && !opt::IsaSupported(static_cast<Isa>(isa))) {
    state.SkipWithError("ISA not supported on this CPU");
    return true;
  }
  return false;
}

void BM_Conv(benchmark::State& state, Layer l) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  ref::ConvGeometry g;
  g.batches = 1;
  g.input_height = l.h;
  g.input_width = l.w;
  g.input_depth = g.filter_depth = l.cin;
  g.output_depth = l.cout;
  g.filter_height = g.filter_width = l.filter;
  g.stride_height = g.stride_width = l.stride;
  const ref::Window2D w = ref::ComputeWindow2D(delegato::Padding::kSame, l.stride, l.stride, 1, 1,
                                               l.h, l.w, l.filter, l.filter);
  g.output_height = w.out_height;
  g.output_width = w.out_width;
  g.pad_height = w.pad_height;
  g.pad_width = w.pad_width;
  const int k = l.filter * l.filter * l.cin;
  const std::vector<uint8_t> input = RandomBytes(size_t{1} * l.h * l.w * l.cin, 1);
  const std::vector<uint8_t> filter = RandomBytes(size_t{1} * k * l.cout, 2);
  std::vector<int32_t> bias(l.cout, 100), mult, shift;
  Multipliers(l.cout, k, &mult, &shift);
  std::vector<uint8_t> output(static_cast<size_t>(g.output_rows()) * g.output_width * l.cout);
  const int64_t macs = g.output_rows() * g.output_width * int64_t{k} * l.cout;

  if (isa == kReference) {
    std::vector<int16_t> packed(g.packed_filter_elements());
    ref::PackConvFilter(g, reinterpret_cast<const int8_t*>(filter.data()), 0, packed.data());
    ref::ConvQuantParams q;
    q.input_offset = 3;
    q.output_offset = -2;
    q.act_min = -128;
    q.act_max = 127;
    q.multiplier = mult.data();
    q.shift = shift.data();
    for (auto _ : state)
      ref::ConvQuantized(g, reinterpret_cast<const int8_t*>(input.data()), packed.data(),
                         bias.data(), q, reinterpret_cast<int8_t*>(output.data()), 0,
                         g.output_rows());
  } else {
    opt::QuantConvParams p;
    p.geometry = g;
    p.input_zero_point = -3;
    p.output_zero_point = -2;
    p.act_min = -128;
    p.act_max = 127;
    p.multiplier = mult.data();
    p.shift = shift.data();
    p.filter = filter.data();
    p.bias = bias.data();
    opt::QuantConv conv(p, static_cast<Isa>(isa), 1);
    opt::AlignedBuffer<uint8_t> scratch(conv.scratch_bytes());
    for (auto _ : state) conv.RunTask(0, input.data(), output.data(), scratch.data());
  }
  benchmark::DoNotOptimize(output.data());
  state.SetItemsProcessed(state.iterations() * macs);
}

void BM_Depthwise(benchmark::State& state, Layer l) {
  const int isa = static_cast<int>(state.range(0));
  if (SkipUnsupported(state, isa)) return;
  ref::DepthwiseGeometry g;
  g.batches = 1;
  g.input_height = l.h;
  g.input_width = l.w;
  g.input_depth = g.output_depth = l.cin;
  g.filter_height = g.filter_width = l.filter;
  g.stride_height = g.stride_width = l.stride;
  const ref::Window2D w = ref::ComputeWindow2D(delegato::Padding::kSame, l.stride, l.stride, 1, 1,
                                               l.h, l.w, l.filter, l.filter);
  g.output_height = w.out_height;
  g.output_width = w.out_width;
  g.pad_height = w.pad_height;
  g.pad_width = w.pad_width;
  const int taps = l.filter * l.filter;
  const std::vector<uint8_t> input = RandomBytes(size_t{1} * l.h * l.w * l.cin, 1);
  const std::vector<uint8_t> filter = RandomBytes(size_t{1} * taps * l.cin, 2);
  std::vector<int32_t> bias(l.cin, 100), mult, shift;
  Multipliers(l.cin, taps, &mult, &shift);
  std::vector<uint8_t> output(static_cast<size_t>(g.output_rows()) * g.output_width * l.cin);
  const int64_t macs = g.output_rows() * g.output_width * int64_t{taps} * l.cin;
  if (isa == kReference) {
    std::vector<int16_t> packed(g.filter_elements());
    ref::PackDepthwiseFilter(g, reinterpret_cast<const int8_t*>(filter.data()), 0, packed.data());
    ref::ConvQuantParams q;
    q.input_offset = 3;
    q.output_offset = -2;
    q.act_min = -128;
    q.act_max = 127;
    q.multiplier = mult.data();
    q.shift = shift.data();
    for (auto _ : state)
      ref::DepthwiseConvQuantized(g, reinterpret_cast<const int8_t*>(input.data()), packed.data(),
                                  bias.data(), q, reinterpret_cast<int8_t*>(output.data()), 0,
                                  g.output_rows());
  } else {
    opt::QuantDepthwiseParams p;
    p.geometry = g;
    p.input_zero_point = -3;
    p.output_zero_point = -2;
    p.act_min = -128;
    p.act_max = 127;
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
#endif

void IsaArgs(benchmark::internal::Benchmark* b) {
  b->ArgName("isa");  // -1 reference, 0 scalar, 1 avx2, 2 avx512vnni
  for (int isa : {kReference, 0, 1, 2}) b->Arg(isa);
  b->Unit(benchmark::kMicrosecond);
}

int RegisterAll() {
  for (const Layer& l : kConvLayers)
    benchmark::RegisterBenchmark(Name(l, "conv_int8").c_str(), BM_Conv, l)->Apply(IsaArgs);
  for (const Layer& l : kDepthwiseLayers)
    benchmark::RegisterBenchmark(Name(l, "depthwise_int8").c_str(), BM_Depthwise, l)
        ->Apply(IsaArgs);
  return 0;
}
const int kRegistered = RegisterAll();

}  // namespace

BENCHMARK_MAIN();
