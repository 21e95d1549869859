// float32 EXP, LOGISTIC, TANH, SOFTMAX and GELU with a vector exp, and HARD_SWISH
// (AVX-512, AVX2 + FMA; NEON in 4 lanes, the same steps).
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

// Whether `isa` has a vector LOGISTIC (AVX2, AVX-512, the aarch64 ISAs; scalar: no).
bool HasFloatLogistic(Isa isa);
// out[i] = logistic(in[i]) for i in [begin, end); needs HasFloatLogistic(isa).
void FloatLogistic(Isa isa, const float* in, float* out, int64_t begin, int64_t end);
// out[i] = 1 / (1 + exp(-in[i])) with the vector exp, without LOGISTIC's
// cut-offs: the LSTM gates' sigmoid (reference::LstmFloatOps). Within a few
// ulp of the scalar formula. AVX2, AVX-512 and (4 lanes) NEON; scalar: the formula.
void FloatSigmoid(Isa isa, const float* in, float* out, int64_t begin, int64_t end);
// out[i] = in[i] * logistic(in[i]) (swish: a MUL after a LOGISTIC, the same
// two roundings); needs HasFloatLogistic(isa).
void FloatSwish(Isa isa, const float* in, float* out, int64_t begin, int64_t end);

// EXP: the vector exp above (what LOGISTIC uses), within a few ulp of
// std::exp (the reference): 0 below -104, infinity above 89, NaN kept,
// denormal results rounded once. Needs HasFloatLogistic(isa).
void FloatExp(Isa isa, const float* in, float* out, int64_t begin, int64_t end);

// HARD_SWISH: the reference's operations lane by lane (bit-exact).
void FloatHardSwish(Isa isa, const float* in, float* out, int64_t begin, int64_t end);
// TANH: a Taylor polynomial below |x| = 1/16, else sign(x) (1 - e) / (1 + e)
// with e = exp(-2|x|) from the vector exp; within about 2e-6 relative of
// std::tanh. NaN stays NaN. AVX2, AVX-512 and NEON (the LSTMs use it there;
// the TANH op only where HasFloatLogistic).
void FloatTanh(Isa isa, const float* in, float* out, int64_t begin, int64_t end);

// GELU, x * Phi(x), with Phi from the vector exp; needs HasFloatLogistic(isa)
// (the same ISAs). Exact form (the reference's 0.5 x erfc(-x / sqrt 2)):
// erfc(a) for a = |x| / sqrt 2 as t exp(-a^2 + P(t)), t = 1 / (1 + a / 2),
// P the degree-9 Chebyshev fit of Numerical Recipes' erfcc (relative error
// below 1.2e-7 for every a >= 0), a^2 carried as an exact sum of two floats
// into the exp; Phi(x) = erfc(a) / 2 for x <= 0, 1 - erfc(a) / 2 above. The
// tail keeps its relative precision (no 1 - ... cancellation), so results are
// within about 1e-6 relative of the reference. Approximate form (the
// reference's 0.5 x (1 + tanh(u)), u = sqrt(2 / pi) (x + 0.044715 x^3)):
// x / (1 + exp(-2u)), the same function without the reference's
// cancellation in 1 + tanh(u), so they differ by at most a few ulp of 1
// times |x| / 2 plus about 1e-6 relative. NaN stays NaN; -inf gives NaN (as
// -inf * 0 in the reference), +inf gives +inf.
void FloatGelu(Isa isa, bool approximate, const float* in, float* out, int64_t begin,
               int64_t end);

// SOFTMAX over rows [row_begin, row_end) of `depth` values, as
// reference::SoftmaxFloat: the row maximum (exact, NaN inputs skipped as
// there), e = exp((x - max) * beta) with the vector exp above, the sum of e
// (in another order: rounding differs), e / sum (IEEE). Needs
// HasFloatLogistic(isa) (the same ISAs).
void FloatSoftmax(Isa isa, float beta, const float* in, float* out, int64_t depth,
                  int64_t row_begin, int64_t row_end);

}  // namespace delegato::optimized
