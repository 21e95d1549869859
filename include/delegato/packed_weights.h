// Packed weights of the optimized CPU kernels, kept across interpreters and
// runs (the compilation cache stores them; see docs/tools.md).
//
//   auto store = std::make_shared<delegato::PackedWeightStore>();
//   store->Deserialize(bytes_from_last_run, &error);   // optional
//   interpreter->SetPackedWeightStore(store);            // before AllocateTensors
//   interpreter->AllocateTensors();                      // kernels load or pack, and record
//   save(store->Serialize());
//
// Each entry is what one kernel of one node packed, keyed by the node index
// and the kernel kind. A kernel only takes an entry after checking it fully
// (its own layout version, the ISA, a fingerprint of the weights and
// parameters it was packed from, sizes and a checksum of the packed bytes);
// anything else is counted as rejected and the kernel packs again, so a
// stale or damaged store costs time, never correctness.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace delegato {

class PackedWeightStore {
 public:
  // What kernels did with the store since it was made or deserialized.
  struct Counters {
    int loaded = 0;    // took a stored entry instead of packing
    int packed = 0;    // packed and recorded a new entry
    int rejected = 0;  // found an entry that did not fit (then packed)
    // Time the kernels spent building their packed state (wall-clock
    // microseconds): from stored entries, and by packing.
    int64_t load_us = 0;
    int64_t pack_us = 0;
  };

  PackedWeightStore();
  ~PackedWeightStore();

  // Replaces the contents with what Serialize wrote. On malformed bytes the
  // store is left empty and false returned with `error`. Never throws for
  // bad bytes.
  bool Deserialize(std::span<const uint8_t> bytes, std::string* error);
  // Moves `bytes` in instead of copying them.
  bool Deserialize(std::vector<uint8_t>&& bytes, std::string* error);
  // Uses `bytes` in place, kept alive by `owner` (a compilation cache
  // entry's file, read once): no copy.
  bool Deserialize(std::shared_ptr<const void> owner, std::span<const uint8_t> bytes, std::string* error);
  // Drops every entry and the bytes behind it; counters() and modified()
  // stay. Kernels hold their own packed copies after Prepare, so once the
  // entries were saved this returns their memory; a later Prepare (after a
  // resize) packs again.
  void Clear();
  std::vector<uint8_t> Serialize() const;

  int num_entries() const;
  size_t packed_bytes() const;  // sum of the entries' sizes
  Counters counters() const;
  // Whether entries were added or replaced since the last Deserialize.
  bool modified() const;

  // ---- for kernels (Prepare): `node` is the interpreter's node index.
  struct Blob {
    std::shared_ptr<const void> owner;  // keeps `bytes` alive
    std::span<const uint8_t> bytes;
  };
  // The entry of (node, kind); empty bytes when there is none.
  Blob Find(int node, uint32_t kind) const;
  // `micros`: how long the kernel took to pack (for Counters).
  void Record(int node, uint32_t kind, std::vector<uint8_t> bytes, int64_t micros = 0);
  void CountLoaded(int64_t micros = 0);
  void CountRejected();

  // A store whose node i is node `node_keys[i]` of this one, sharing its
  // entries and counters (a device graph holding some of a model's nodes).
  std::shared_ptr<PackedWeightStore> View(std::vector<int> node_keys) const;

 private:
  struct State;
  int KeyOf(int node) const;
  std::shared_ptr<State> state_;
  std::vector<int> node_keys_;  // when mapped_: key of each node, -1 = none
  bool mapped_ = false;
};

}  // namespace delegato
