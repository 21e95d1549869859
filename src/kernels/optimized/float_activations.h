// float32 LOGISTIC, TANH and SOFTMAX with a vector exp, and HARD_SWISH
// (AVX-512, AVX2 + FMA).
//
// TFLite's float logistic (reference::LogisticValue): 1 above 16.619..., exp(x)
// below -9, otherwise 1 / (1 + exp(-x)). The same cut-offs per lane, with
// exp(t) = 2^n * p(r), n = round(t log2 e), r = t - n ln 2 (two-part ln 2)
// and p the degree-6 Taylor polynomial of e^r on |r| <= ln2 / 2 (relative
// error about 1e-7, so a result is within a few ulp of the reference's),
// scaled by 2^n without leaving float's range early: denormal results are
// rounded once (AVX-512 vscalefps; AVX2 two exact-then-rounding products),
// below -104 the result is 0 and above 89 infinity, as std::exp's. NaN stays
// NaN. The division is IEEE.
#pragma once

#include <cstdint>

#include "kernels/optimized/isa.h"

namespace delegato::optimized {

// Whether `isa` has a vector LOGISTIC (AVX2 or AVX-512; scalar: no).
bool HasFloatLogistic(Isa isa);
// out[i] = logistic(in[i]) for i in [begin, end); needs HasFloatLogistic(isa).
void FloatLogistic(Isa isa, const float* in, float* out, int64_t begin, int64_t end);

// HARD_SWISH: the reference's operations lane by lane (bit-exact).
void FloatHardSwish(Isa isa, const float* in, float* out, int64_t begin, int64_t end);
// TANH: a Taylor polynomial below |x| = 1/16, else sign(x) (1 - e) / (1 + e)
// with e = exp(-2|x|) from the vector exp; within about 2e-6 relative of
// std::tanh. NaN stays NaN.
void FloatTanh(Isa isa, const float* in, float* out, int64_t begin, int64_t end);

// SOFTMAX over rows [row_begin, row_end) of `depth` values, as
// reference::SoftmaxFloat: the row maximum (exact, NaN inputs skipped as
// there), e = exp((x - max) * beta) with the vector exp above, the sum of e
// (in another order: rounding differs), e / sum (IEEE). Needs
// HasFloatLogistic(isa) (the same ISAs).
void FloatSoftmax(Isa isa, float beta, const float* in, float* out, int64_t depth,
                  int64_t row_begin, int64_t row_end);

}  // namespace delegato::optimized
