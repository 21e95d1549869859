// libFuzzer target: compilation cache entries (files of --delegate_serialize_dir):
// decode, then read every section a run would use (target placements and
// partitions, the packed-weight store). A torn or hostile entry must be
// reported (kCorrupt/kStale or a false return), never trusted or crashed on.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "delegate/compilation_cache.h"
#include "delegato/packed_weights.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace delegato;
  CacheEntry entry;
  std::string detail;
  const CacheStatus status =
      DecodeCacheEntry(std::span<const uint8_t>(data, size), 0, &entry, &detail);
  if (status != CacheStatus::kHit) return 0;
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
