// libFuzzer target: compilation cache entries (files of --delegate_serialize_dir):
// decode, then read every section a run would use (target placements and
// partitions, the packed-weight store). A torn or hostile entry must be
// reported (kCorrupt/kStale or a false return), never trusted or crashed on.
// Inputs starting with 'S' are section payloads wrapped in a valid entry.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "delegate/compilation_cache.h"
#include "delegato/packed_weights.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace delegato;
  CacheEntry entry;
  std::string detail;
  if (size > 0 && data[0] == 'S') {
    // Section mode: the rest of the input becomes the payload of every
    // section, behind a valid header and CRC, so mutations reach the section
    // readers instead of stopping at the checksum.
    const std::vector<uint8_t> payload(data + 1, data + size);
    CacheEntry built;
    built.fingerprint = 1;
    built.token = "fuzz";
    for (CacheSectionType type : {CacheSectionType::kPlacement, CacheSectionType::kPartitions,
                                  CacheSectionType::kDeviceCompile, CacheSectionType::kPackedWeights})
      built.Set(type, payload);
    const std::vector<uint8_t> bytes = EncodeCacheEntry(built);
    if (DecodeCacheEntry(bytes, 1, &entry, &detail) != CacheStatus::kHit) __builtin_trap();
  } else if (DecodeCacheEntry(std::span<const uint8_t>(data, size), 0, &entry, &detail) !=
             CacheStatus::kHit) {
    return 0;
  }
  // A decoded entry encodes back to a decodable entry.
  const std::vector<uint8_t> again = EncodeCacheEntry(entry);
  CacheEntry round_trip;
  if (DecodeCacheEntry(again, entry.fingerprint, &round_trip, &detail) != CacheStatus::kHit)
    __builtin_trap();
  CachedDelegation delegation;
  LoadDelegation(entry, -1, &delegation, &detail);
  LoadDelegation(entry, 3, &delegation, &detail);
  if (const CacheSection* packed = entry.Find(CacheSectionType::kPackedWeights)) {
    PackedWeightStore store;
    store.Deserialize(std::span<const uint8_t>(packed->data), &detail);
  }
  return 0;
}
