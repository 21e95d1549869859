// float32 LOGISTIC with a vector exp (AVX-512, AVX2 + FMA).
//
// TFLite's float logistic (reference::LogisticValue): 1 above 16.619..., exp(x)
// below -9, otherwise 1 / (1 + exp(-x)). The same cut-offs per lane, with
// exp(t) = 2^n * p(r), n = round(t log2 e), r = t - n ln 2 (two-part ln 2)
// and p the degree-6 Taylor polynomial of e^r on |r| <= ln2 / 2 (relative
// error about 1e-7, so a result is within a few ulp of the reference's).
// exp's argument is clamped to [-87, 88]: below -87 the reference's result
// is a denormal or 0 and this one about 1.6e-38 (the absolute difference is
// below 2e-38). NaN stays NaN. The division is IEEE.
#pragma once

#include <cstdint>

#include "kernels/optimized/isa.h"

namespace delegato::optimized {

// Whether `isa` has a vector LOGISTIC (AVX2 or AVX-512; scalar: no).
bool HasFloatLogistic(Isa isa);
// out[i] = logistic(in[i]) for i in [begin, end); needs HasFloatLogistic(isa).
void FloatLogistic(Isa isa, const float* in, float* out, int64_t begin, int64_t end);

}  // namespace delegato::optimized
