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

// How a 256-entry byte table is looked up.
enum class ByteLookup {
  kBytes,      // one byte at a time
  kAvx2,       // 32 at a time: 16 AVX2 byte shuffles XORed together
  kAvx512Bw,   // 64 at a time: the same with AVX-512BW
  kVbmi,       // 64 at a time: two AVX-512 VBMI two-register byte permutes
  kNeon,       // 16 at a time: NEON four-register table lookups
};

// The fastest lookup `isa` allows on this CPU; SelectByteLookup for the selected ISA.
ByteLookup ByteLookupFor(Isa isa);
ByteLookup SelectByteLookup();
// Whether this CPU can run `kind`.
bool ByteLookupSupported(ByteLookup kind);
const char* ByteLookupName(ByteLookup kind);

// out[i] = table[in[i]] for i in [begin, end); table 64-byte aligned.
void LookupBytes(ByteLookup kind, const uint8_t* table, const uint8_t* in, uint8_t* out,
                 int64_t begin, int64_t end);

struct RequantizeTable8 {
  alignas(64) uint8_t table[256] = {};
  ByteLookup lookup = ByteLookup::kBytes;
  // in/out: uint8 when *_signed is false, else int8.
  void Build(bool in_signed, bool out_signed, int32_t multiplier, int shift,
             int32_t input_zero_point, int32_t output_zero_point);
  // After the caller filled `table` with any other 8-bit -> 8-bit function
  // (RELU, RELU6 computed by the reference): picks the lookup code.
  void SelectLookup() { lookup = SelectByteLookup(); }
  void Run(const uint8_t* in, uint8_t* out, int64_t begin, int64_t end) const {
    LookupBytes(lookup, table, in, out, begin, end);
  }
};

struct QuantizeFloat8 {
  float scale = 1.0f;
  int32_t zero_point = 0;
  bool out_signed = false;
  Isa isa = Isa::kScalar;
  void Run(const float* in, uint8_t* out, int64_t begin, int64_t end) const;
};

}  // namespace delegato::optimized
