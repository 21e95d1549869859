// The serialized form of an optimized kernel's packed state (what its
// Prepare computes from the weights), for PackedWeightStore:
//
//   magic u32 (the kernel's) | layout version u32 | ISA u32 | reserved u32
//   params fingerprint u64 (geometry, zero points, a hash of the weights
//     and bias it was packed from) | payload hash u64 (of the arrays)
//   array count u32 | per array: element size u32, element count u64
//   the arrays' bytes, little-endian, one after another
//
// ReadPackedState validates every field against what the kernel being
// prepared expects before copying anything; on any mismatch it says why and
// the kernel packs instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "kernels/optimized/isa.h"

namespace delegato::optimized {

// Store kinds (PackedWeightStore keys); never reused.
enum class PackedKind : uint32_t {
  kQuantConv = 1,       // CONV_2D and FULLY_CONNECTED through QuantConv
  kQuantDepthwise = 2,
};

struct PackedStateHeader {
  uint32_t magic = 0;
  uint32_t layout_version = 0;
  Isa isa = Isa::kScalar;
  uint64_t params_fingerprint = 0;
};

struct PackedArray {
  const void* data;
  size_t element_size;
  size_t count;
};
struct PackedDestination {
  void* data;
  size_t element_size;
  size_t count;
};

std::vector<uint8_t> WritePackedState(const PackedStateHeader& header,
                                      std::initializer_list<PackedArray> arrays);
// Empty string when `blob` matched `expected` and the arrays were copied;
// otherwise why not (nothing copied).
std::string ReadPackedState(std::span<const uint8_t> blob, const PackedStateHeader& expected,
                            std::initializer_list<PackedDestination> destinations);

// Incremental fingerprint of what a kernel packs from.
class ParamsFingerprint {
 public:
  ParamsFingerprint& Int(int64_t v);
  ParamsFingerprint& Bytes(const void* data, size_t size);
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0x6a09e667f3bcc909ull;
};

}  // namespace delegato::optimized
