// QUANTIZE fast paths, bit-exact with reference/quantize.h:
//  - 8-bit -> 8-bit requantization as a 256-entry table built in Prepare by
//    the reference function itself (so equal by construction);
//  - float32 -> 8-bit per-tensor quantization vectorized (AVX2, AVX-512, NEON) with the
//    reference's float steps: x / scale (IEEE division), round half away
//    from zero (trunc, then +-1 when the exact remainder is >= 0.5),
//    truncation to int32 with x86's out-of-range result, wrapping zero-point
//    add, clamp.
#pragma once

#include <cstdint>

#include "kernels/optimized/isa.h"

namespace delegato::optimized {

struct RequantizeTable8 {
  alignas(64) uint8_t table[256] = {};
  // Lookups 64 at a time with AVX-512 VBMI byte permutes (chosen by Build
  // when the selected ISA is avx512vnni and the CPU has VBMI), else 32 at a
  // time with AVX2 byte shuffles and blends (the selected ISA avx2 or
  // avx512vnni without VBMI), or 16 at a time with NEON table lookups (an
  // Arm ISA).
  bool vbmi = false;
  bool avx2 = false;
  bool neon = false;
  // in/out: uint8 when *_signed is false, else int8.
  void Build(bool in_signed, bool out_signed, int32_t multiplier, int shift,
             int32_t input_zero_point, int32_t output_zero_point);
  // After the caller filled `table` with any other 8-bit -> 8-bit function
  // (RELU, RELU6 computed by the reference): picks the lookup code.
  void SelectLookup();
  void Run(const uint8_t* in, uint8_t* out, int64_t begin, int64_t end) const;
};

struct QuantizeFloat8 {
  float scale = 1.0f;
  int32_t zero_point = 0;
  bool out_signed = false;
  Isa isa = Isa::kScalar;
  void Run(const float* in, uint8_t* out, int64_t begin, int64_t end) const;
};

}  // namespace delegato::optimized
