// CONCATENATION / PACK and SPLIT / UNPACK: reference::ConcatenateBytes and
// SplitBytes with small blocks copied inline.
//
// Joining along the channel axis copies one block per input per pixel, a
// few bytes each for 8-bit tensors (a densenet's 8-32 channels), where a
// library call costs more than the copy. With AVX2, blocks below 32 bytes
// are moved inline in 16-, 8- and 4-byte pieces, the last piece overlapping
// the one before it (int8 densenet 194 -> 186 us with AVX2). Larger blocks,
// and other ISAs, use memcpy: inline 32-byte pieces up to 64 bytes did not
// make the float32 densenet faster (its copies are bound by the bytes
// moved).
#pragma once

#include <cstdint>

#include "kernels/optimized/isa.h"

namespace delegato::optimized {

void ConcatenateBytes(Isa isa, int num_inputs, const uint8_t* const* inputs,
                      const int64_t* block_bytes, int64_t outer, uint8_t* output);

void SplitBytes(Isa isa, const uint8_t* input, int64_t outer, int num_outputs,
                uint8_t* const* outputs, const int64_t* block_bytes);

}  // namespace delegato::optimized
