#include "kernels/optimized/join_bytes.h"

#include <cstring>

#include "kernels/reference/shape_ops.h"

namespace delegato::optimized {

#if DELEGATO_X86
namespace {

// n bytes, kPiece <= n <= 2 kPiece: the first and the last kPiece of them
// (fixed-size copies, compiled to single loads and stores).
template <size_t kPiece>
DLG_TARGET_AVX2 inline void CopyHeadAndTail(uint8_t* dst, const uint8_t* src, size_t n) {
  uint8_t head[kPiece], tail[kPiece];
  std::memcpy(head, src, kPiece);
  std::memcpy(tail, src + n - kPiece, kPiece);
  std::memcpy(dst, head, kPiece);
  std::memcpy(dst + n - kPiece, tail, kPiece);
}

// n bytes between buffers that do not overlap; see join_bytes.h.
DLG_TARGET_AVX2 inline void CopySmall(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n >= 32) {
    std::memcpy(dst, src, n);
  } else if (n >= 16) {
    CopyHeadAndTail<16>(dst, src, n);
  } else if (n >= 8) {
    CopyHeadAndTail<8>(dst, src, n);
  } else if (n >= 4) {
    CopyHeadAndTail<4>(dst, src, n);
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

DLG_TARGET_AVX2 void ConcatenateAvx2(int num_inputs, const uint8_t* const* inputs,
                                     const int64_t* block_bytes, int64_t outer,
                                     uint8_t* output) {
  for (int64_t k = 0; k < outer; ++k) {
    for (int i = 0; i < num_inputs; ++i) {
      const size_t n = static_cast<size_t>(block_bytes[i]);
      CopySmall(output, inputs[i] + k * block_bytes[i], n);
      output += n;
    }
  }
}

DLG_TARGET_AVX2 void SplitAvx2(const uint8_t* input, int64_t outer, int num_outputs,
                               uint8_t* const* outputs, const int64_t* block_bytes) {
  for (int64_t k = 0; k < outer; ++k) {
    for (int i = 0; i < num_outputs; ++i) {
      const size_t n = static_cast<size_t>(block_bytes[i]);
      CopySmall(outputs[i] + k * block_bytes[i], input, n);
      input += n;
    }
  }
}

}  // namespace
#endif

void ConcatenateBytes(Isa isa, int num_inputs, const uint8_t* const* inputs,
                      const int64_t* block_bytes, int64_t outer, uint8_t* output) {
#if DELEGATO_X86
  if (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni)
    return ConcatenateAvx2(num_inputs, inputs, block_bytes, outer, output);
#endif
  reference::ConcatenateBytes(num_inputs, inputs, block_bytes, outer, output);
}

void SplitBytes(Isa isa, const uint8_t* input, int64_t outer, int num_outputs,
                uint8_t* const* outputs, const int64_t* block_bytes) {
#if DELEGATO_X86
  if (isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni)
    return SplitAvx2(input, outer, num_outputs, outputs, block_bytes);
#endif
  reference::SplitBytes(input, outer, num_outputs, outputs, block_bytes);
}

}  // namespace delegato::optimized
