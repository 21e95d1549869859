#include "kernels/optimized/packed_state.h"

#include <bit>
#include <cstring>

#include "core/error.h"
#include "core/hash.h"

namespace delegato::optimized {
namespace {

constexpr size_t kFixedHeaderBytes = 4 * 4 + 8 + 8 + 4;
constexpr size_t kArrayHeaderBytes = 4 + 8;
constexpr size_t kMaxArrays = 16;
// The arrays are copied as host bytes; the marker keeps a store from a host
// of the other byte order from being taken.
constexpr uint32_t kHostOrder = std::endian::native == std::endian::little ? 1u : 2u;

void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void PutU64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint64_t GetLE(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

}  // namespace

std::vector<uint8_t> WritePackedState(const PackedStateHeader& header,
                                      std::initializer_list<PackedArray> arrays) {
  size_t payload = 0;
  for (const PackedArray& a : arrays) payload += a.element_size * a.count;
  std::vector<uint8_t> out;
  out.reserve(kFixedHeaderBytes + arrays.size() * kArrayHeaderBytes + payload);
  PutU32(out, header.magic);
  PutU32(out, header.layout_version);
  PutU32(out, static_cast<uint32_t>(header.isa));
  PutU32(out, kHostOrder);
  PutU64(out, header.params_fingerprint);
  const size_t hash_at = out.size();
  PutU64(out, 0);  // payload hash, filled below
  PutU32(out, static_cast<uint32_t>(arrays.size()));
  for (const PackedArray& a : arrays) {
    PutU32(out, static_cast<uint32_t>(a.element_size));
    PutU64(out, a.count);
  }
  const size_t payload_at = out.size();
  for (const PackedArray& a : arrays) {
    const uint8_t* p = static_cast<const uint8_t*>(a.data);
    if (a.count > 0) out.insert(out.end(), p, p + a.element_size * a.count);
  }
  const uint64_t hash = Hash64(out.data() + payload_at, out.size() - payload_at);
  for (int i = 0; i < 8; ++i) out[hash_at + i] = static_cast<uint8_t>(hash >> (8 * i));
  return out;
}

std::string ReadPackedState(std::span<const uint8_t> blob, const PackedStateHeader& expected,
                            std::initializer_list<PackedDestination> destinations) {
  if (blob.size() < kFixedHeaderBytes) return "truncated header";
  const uint8_t* p = blob.data();
  if (GetLE(p, 4) != expected.magic) return "another kernel's entry";
  const uint32_t version = static_cast<uint32_t>(GetLE(p + 4, 4));
  if (version != expected.layout_version)
    return StrCat("layout version ", version, ", the kernel packs version ", expected.layout_version);
  const uint32_t isa = static_cast<uint32_t>(GetLE(p + 8, 4));
  if (isa != static_cast<uint32_t>(expected.isa))
    return StrCat("packed for ISA ", isa, ", the kernel runs ", IsaName(expected.isa));
  if (GetLE(p + 12, 4) != kHostOrder) return "packed on a host of another byte order";
  if (GetLE(p + 16, 8) != expected.params_fingerprint)
    return "packed from other weights or parameters (fingerprint mismatch)";
  const uint64_t payload_hash = GetLE(p + 24, 8);
  const uint32_t count = static_cast<uint32_t>(GetLE(p + 32, 4));
  if (count != destinations.size() || count > kMaxArrays)
    return StrCat(count, " arrays, the kernel expects ", destinations.size());
  if (blob.size() - kFixedHeaderBytes < count * kArrayHeaderBytes) return "truncated array table";
  size_t pos = kFixedHeaderBytes;
  uint64_t payload = 0;
  int i = 0;
  for (const PackedDestination& d : destinations) {
    const uint64_t element_size = GetLE(p + pos, 4);
    const uint64_t n = GetLE(p + pos + 4, 8);
    pos += kArrayHeaderBytes;
    if (element_size != d.element_size || n != d.count)
      return StrCat("array ", i, " holds ", n, " elements of ", element_size, " bytes, the kernel needs ",
                    d.count, " of ", d.element_size);
    payload += element_size * n;  // bounded: both equal the kernel's own sizes
    ++i;
  }
  if (payload != blob.size() - pos)
    return StrCat("payload of ", blob.size() - pos, " bytes, the arrays need ", payload);
  if (Hash64(p + pos, payload) != payload_hash) return "damaged packed bytes (payload hash mismatch)";
  for (const PackedDestination& d : destinations) {
    const size_t bytes = d.element_size * d.count;
    if (bytes > 0) std::memcpy(d.data, p + pos, bytes);
    pos += bytes;
  }
  return {};
}

ParamsFingerprint& ParamsFingerprint::Int(int64_t v) {
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
  hash_ = Hash64(bytes, 8, hash_);
  return *this;
}

ParamsFingerprint& ParamsFingerprint::Bytes(const void* data, size_t size) {
  Int(static_cast<int64_t>(size));
  hash_ = Hash64(data, size, hash_);
  return *this;
}

}  // namespace delegato::optimized
