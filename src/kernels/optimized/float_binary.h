// float32 ADD, SUB, MUL, DIV and SQUARED_DIFFERENCE with broadcasting and the
// fused clamp, in vectors (AVX-512, AVX2, NEON). Each output is the reference's IEEE
// operation (a subtract then a multiply for SQUARED_DIFFERENCE) followed by its
// clamp (Min(hi, Max(lo, x)) in the vector instructions' operand order is
// TFLite's ClampWithMinMax, NaN included), so results are bit-exact with
// reference::BinaryArithmetic. The broadcast walk is the reference's; each
// innermost run (both operands contiguous, or one of them repeated) is one
// vector loop, and rows of short runs are one call.
#pragma once

#include <cstdint>

#include "kernels/optimized/isa.h"
#include "kernels/reference/elementwise.h"

namespace delegato::optimized {

// Whether `isa` has vector float ADD/SUB/MUL/DIV/SQUARED_DIFFERENCE (AVX2, AVX-512, NEON).
bool HasFloatBinary(Isa isa);
// Outputs [begin, end) of `plan`; op is not kFloorDiv; needs HasFloatBinary(isa).
void FloatBinary(Isa isa, reference::BinaryOp op, const reference::BroadcastPlan& plan,
                 const float* a, const float* b, float* out, float lo, float hi, int64_t begin,
                 int64_t end);

}  // namespace delegato::optimized
