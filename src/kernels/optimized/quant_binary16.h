// int16 MUL, ADD and SUB (int16x8 models: activations with zero point 0)
// with broadcasting, vectorized, bit-exact with
// reference::QuantizedMulBroadcast<int16_t> and reference::QuantizedAdd<int16_t>.
//
// The output is walked in runs along the innermost (merged) dimension, as the
// reference does. In a run where each input is contiguous or one broadcast
// value (a squeeze-and-excitation scale: one value per channel, repeated per
// pixel), 8 outputs at a time: the inputs sign-extended to int32, multiplied
// (|product| <= 2^30: exact), the reference's MultiplyByQuantizedMultiplier
// per lane (requantize.h), the output offset, the activation clamp, packed
// back to int16 (exact: the clamp bounds lie inside int16). ADD and SUB
// shift each input left by 15 (|x| <= 2^30), rescale it with its below-one
// multiplier, add or subtract (|sum| < 2^31) and rescale to the output, the
// same fixed-point steps per lane; a broadcast input is rescaled once. Other strides and
// the last < 8 outputs of a run take the reference's scalar steps. x86 with
// AVX2 or AVX-512 (AVX-512 runs the same 8-lane code) and aarch64 (NEON, two
// int32x4 per 8 lanes, sqrdmulh for the fixed-point multiplies); elsewhere
// the reference.
#pragma once

#include <cstdint>

#include "kernels/optimized/isa.h"
#include "kernels/reference/elementwise.h"

namespace delegato::optimized {

// Whether QuantMul16 reproduces these parameters on this ISA: zero input
// offsets (the products then fit int32), a shift in [-31, 31] and a
// non-negative multiplier (as QuantBinary::CoversMul), a vector ISA.
bool QuantMul16Covers(const reference::QuantizedMulDivParams& p, Isa isa);

// Whether QuantAddSub16 reproduces these parameters on this ISA: zero input
// offsets, a left shift of at most 15, right shifts of 0-31 and
// non-negative multipliers, a vector ISA.
bool QuantAddSub16Covers(const reference::QuantizedAddParams& p, Isa isa);

// Output elements [begin, end) of `plan` (any split gives the same values).
void QuantAddSub16(const reference::BroadcastPlan& plan, const int16_t* a, const int16_t* b,
                   int16_t* out, const reference::QuantizedAddParams& p, bool subtract,
                   int64_t begin, int64_t end);

// Output elements [begin, end) of `plan` (any split gives the same values).
void QuantMul16(const reference::BroadcastPlan& plan, const int16_t* a, const int16_t* b,
                int16_t* out, const reference::QuantizedMulDivParams& p, int64_t begin,
                int64_t end);

}  // namespace delegato::optimized
