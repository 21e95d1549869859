// int16 LOGISTIC and TANH (reference/activations16.h) 8 lanes at a time on
// AVX2, bit-exact: the input scaling, magnitude and table index per lane, the
// two neighbouring table entries in one 32-bit gather (a table of entry pairs
// made once), the interpolation, saturation and sign steps of the reference.
// x86 with AVX2 or AVX-512 (16 lanes; the gather of 16 took a third of the
// time of two of 8 per element) and aarch64 (NEON, 4
// lanes per vector, the pairs read lane by lane: NEON has no gather);
// elsewhere the reference.
#pragma once

#include <cstdint>

#include "kernels/optimized/isa.h"
#include "kernels/reference/activations16.h"

namespace delegato::optimized {

bool Int16SigmoidTanhCovers(Isa isa);

// out[i] for i in [begin, end): LOGISTIC, or TANH when `tanh`; `isa` one
// Int16SigmoidTanhCovers accepts (AVX-512: 16 lanes, AVX2 and NEON: 8).
void Int16SigmoidTanh(Isa isa, bool tanh, const reference::Int16ActivationParams& p,
                      const int16_t* in, int16_t* out, int64_t begin, int64_t end);

}  // namespace delegato::optimized
