// The compilation cache behind --delegate_serialize_dir / --delegate_serialize_token
// (TFLite's flag names): what a delegate decided and compiled for a model,
// stored on disk so the next run with the same model, target and options
// starts from it.
//
// One entry per (model, target, options, token), in the file
// `<dir>/<token>_<fingerprint>.bin`:
//
//   header (48 bytes, little-endian)
//     magic "DLGCACHE" | format version u32 | header size u32 | fingerprint u64
//     payload size u64 | payload CRC-32 u32 | header CRC-32 u32 (of the 36 bytes before it)
//     section count u32 | reserved u32
//   payload
//     token (u32 length + bytes) | description (u32 length + bytes)
//     sections: type u32 | flags u32 | size u64 | bytes
//
// Sections are typed so new kinds of compiled state (packed weights of the
// fast CPU path, a real driver's blob) are added without a format change:
// a reader skips section types it does not know unless the section is marked
// kSectionRequired, in which case the whole entry is stale for that reader.
//
// The fingerprint (FNV-1a 64) covers the model bytes, the target id and its
// file contents (with the files it extends), the delegate options, the
// accelerator name, the optimized kernels' ISA, delegato's version, this
// format's version and the token.
// Entries are written to a temporary file and renamed (atomic on POSIX), so
// a reader sees a whole entry or none.
//
// Two kinds of entries: a target delegation (placement, partitions, device
// compile record, packed weights) and, without a target, a CPU-only entry
// holding only the optimized kernels' packed weights.
//
// Reading never throws and never trusts the file: a missing file is a miss,
// a foreign, truncated or damaged file (magic, sizes, checksums, section
// bounds) is corrupt, an entry of another key or format version is stale;
// all three are rebuilt and rewritten by the caller.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "delegate/emulated_delegate.h"
#include "delegate/partitioner.h"
#include "delegate/target.h"
#include "delegato/delegate.h"
#include "delegato/interpreter.h"
#include "delegato/packed_weights.h"
#include "model/model.h"

namespace delegato {

// ------------------------------------------------------------ hashing

uint32_t Crc32(std::span<const uint8_t> data, uint32_t crc = 0);  // IEEE 802.3 (zlib's crc32)

// FNV-1a 64, fed piece by piece. Every Add is length-prefixed, so
// ("ab", "c") and ("a", "bc") hash differently. Pieces over kLargePiece
// bytes (model files) are fed as their Hash64 (core/hash.h): byte-wise FNV
// over a 3.4 MB model took 6 ms, more than the work the cache saves.
class Fingerprinter {
 public:
  static constexpr size_t kLargePiece = 4096;
  Fingerprinter& Add(std::span<const uint8_t> bytes);
  Fingerprinter& Add(std::string_view text);
  Fingerprinter& Add(int64_t value);
  uint64_t value() const { return hash_; }

 private:
  void Mix(const uint8_t* data, size_t size);
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

// "00ab..." (16 lowercase hex digits)
std::string FingerprintHex(uint64_t fingerprint);

// ------------------------------------------------------------ entry format

inline constexpr char kCacheMagic[8] = {'D', 'L', 'G', 'C', 'A', 'C', 'H', 'E'};
inline constexpr uint32_t kCacheFormatVersion = 1;
inline constexpr size_t kCacheHeaderSize = 48;

// Section types. Append-only; a number is never reused.
enum class CacheSectionType : uint32_t {
  kPlacement = 1,      // per-node target support, the chosen nodes, final placements
  kPartitions = 2,     // per partition: nodes, ops, boundary tensors (the device-graph description)
  kDeviceCompile = 3,  // per partition: what compiling it produced (device arena plan size, time)
  kPackedWeights = 4,  // PackedWeightStore::Serialize: packed weights of the optimized CPU kernels
};
const char* CacheSectionName(uint32_t type);  // "placement", ..., "unknown"

inline constexpr uint32_t kSectionRequired = 1;  // readers that do not know the type must not use the entry

struct CacheSection {
  uint32_t type = 0;
  uint32_t flags = 0;
  std::vector<uint8_t> data;
};

struct CacheEntry {
  uint64_t fingerprint = 0;
  std::string token;
  std::string description;  // for people: model, target, options, version
  std::vector<CacheSection> sections;

  const CacheSection* Find(CacheSectionType type) const;
  void Set(CacheSectionType type, std::vector<uint8_t> data, uint32_t flags = 0);
};

std::vector<uint8_t> EncodeCacheEntry(const CacheEntry& entry);

enum class CacheStatus { kHit, kMiss, kStale, kCorrupt };
const char* CacheStatusName(CacheStatus status);  // "hit", "miss", "stale", "corrupt"

// Decodes `bytes`. kHit when the file is whole and its fingerprint equals
// `expected_fingerprint` (pass 0 to accept any fingerprint, as `cache ls`
// does); otherwise kCorrupt or kStale with `detail` saying why. Never throws.
CacheStatus DecodeCacheEntry(std::span<const uint8_t> bytes, uint64_t expected_fingerprint,
                             CacheEntry* entry, std::string* detail);

// ------------------------------------------------------------ a cache directory

struct CacheLookup {
  CacheStatus status = CacheStatus::kMiss;
  std::string path;
  std::string detail;  // why stale / corrupt; empty otherwise
  CacheEntry entry;    // valid when status == kHit
  // A hit's packed_weights section is not copied into `entry` (its data is
  // empty there): it is this view of the file's bytes, read once into
  // private memory and checked like the rest (sizes, payload CRC).
  std::shared_ptr<const std::vector<uint8_t>> file_bytes;
  std::span<const uint8_t> packed_weights;
};

class CompilationCache {
 public:
  // `token` is used raw in the fingerprint; in file names, characters other
  // than [A-Za-z0-9._-] become '_' (at most 64 kept), "model" when empty.
  CompilationCache(std::string dir, std::string token);

  const std::string& dir() const { return dir_; }
  const std::string& token() const { return token_; }
  std::string EntryPath(uint64_t fingerprint) const;

  CacheLookup Load(uint64_t fingerprint) const;  // never throws
  // Writes atomically (temporary file + rename), creating the directory.
  // Returns an empty string, or what went wrong (the run goes on without cache).
  std::string Store(const CacheEntry& entry) const;

 private:
  std::string dir_;
  std::string token_;
  std::string file_token_;
};

// The token as it appears in file names.
std::string CacheFileToken(std::string_view token);

// One file of a cache directory, as `delegato cache ls` shows it.
struct CacheFileInfo {
  std::string path;
  uint64_t size = 0;
  CacheStatus status = CacheStatus::kCorrupt;  // kHit = a whole, readable entry
  std::string detail;
  CacheEntry entry;
};
// Files named like entries (`<token>_<16 hex>.bin`), sorted by name.
std::vector<CacheFileInfo> ListCacheDir(const std::string& dir);
// True when `file_name` is an entry or a leftover temporary file of one.
bool IsCacheFileName(std::string_view file_name);

// ------------------------------------------------------------ target delegation entries

// What is cached for a target delegate on a model.
struct CachedPartition {
  int index = 0;
  std::vector<int> nodes;                 // model node indices, execution order
  std::vector<std::string> ops;           // their op names, for people
  std::vector<int32_t> inputs, outputs;   // boundary tensors
  // kDeviceCompile: filled once the partition was compiled.
  bool compiled = false;
  uint64_t device_arena_bytes = 0;
  double compile_us = 0;                  // cold compile time, for `cache ls`
};

struct CachedDelegation {
  std::vector<NodeSupport> support;      // the target's raw answer per model node
  std::vector<NodePlacement> placements;  // per node: delegated?, partition, every reason
  int num_candidate_partitions = 0;
  std::vector<CachedPartition> partitions;

  std::vector<int> delegated_nodes() const;
};

// Encodes into / decodes from an entry's sections. Decode returns false
// with `detail` when a section is missing or inconsistent with `num_nodes`
// (< 0: take the entry's node count, as `cache ls` does).
void StoreDelegation(const CachedDelegation& delegation, CacheEntry* entry);
bool LoadDelegation(const CacheEntry& entry, int num_nodes, CachedDelegation* delegation,
                    std::string* detail);

// The decision a target delegate makes on `model` (what ModifyGraphWithDelegate
// will do with it), computed without an interpreter.
CachedDelegation PlanTargetDelegation(const ModelDef& model, std::vector<NodeSupport> support,
                                      const DelegateOptions& options);

// The key of a target delegation entry. `model_bytes`: the .tflite file as read.
uint64_t TargetCacheFingerprint(std::span<const uint8_t> model_bytes, const Target& target,
                                const std::string& accelerator_name, const DelegateOptions& options,
                                const std::string& token);

// A target's file contents with those of the files it extends (the key must
// change when any of them does). Unreadable files contribute their path only.
std::string TargetFileContents(const Target& target);

// The key of a CPU-only entry (packed weights only): the model, the token,
// the optimized kernels' ISA, delegato's and the format's version.
uint64_t CpuCacheFingerprint(std::span<const uint8_t> model_bytes, const std::string& token);

// "packed weights: 52 loaded, 0 packed" (what the kernels did with `store`),
// empty when no kernel used it.
std::string PackedWeightsSummary(const PackedWeightStore& store);

// The cache around a CPU-only run: the optimized kernels' packed weights.
//
//   CpuCompilationCache cache(dir, token, model_bytes, model_label);
//   interpreter->SetPackedWeightStore(cache.packed_weights());
//   interpreter->AllocateTensors();
//   std::cerr << cache.Commit() << "\n";   // writes the entry when anything was packed
class CpuCompilationCache {
 public:
  CpuCompilationCache(const std::string& dir, const std::string& token, std::span<const uint8_t> model_bytes,
                      const std::string& model_label);
  const CacheLookup& lookup() const { return lookup_; }
  uint64_t fingerprint() const { return fingerprint_; }
  // Filled from the entry on a hit; kernels record into it.
  const std::shared_ptr<PackedWeightStore>& packed_weights() const { return packed_weights_; }
  // After AllocateTensors: writes the entry unless a hit left nothing new.
  std::string Commit();

 private:
  CompilationCache cache_;
  std::string description_;
  uint64_t fingerprint_ = 0;
  CacheLookup lookup_;
  std::shared_ptr<PackedWeightStore> packed_weights_;
};

// The cache around one target delegation:
//
//   TargetDelegationCache cache(dir, token, model_bytes, model_label, target, accel, options);
//   auto delegate = cache.MakeDelegate(model, num_threads);  // cached support on a hit
//   interpreter->ModifyGraphWithDelegate(delegate.get());
//   std::cerr << cache.Commit(*interpreter, *delegate) << "\n";  // "cache: hit <path>"...
//
// A hit skips the target's rule evaluation (the delegate answers from the
// entry); the interpreter then partitions from those answers and Commit
// checks the result against the entry's partitions and compile record. Any
// difference makes the entry stale: it is rewritten from this run, whose
// results never depend on the entry being right. The entry also holds the
// packed weights of every optimized kernel (CPU nodes and device graphs):
// give packed_weights() to the interpreter (SetPackedWeightStore);
// MakeDelegate gives it to the delegate's device graphs.
class TargetDelegationCache {
 public:
  TargetDelegationCache(const std::string& dir, const std::string& token,
                        std::span<const uint8_t> model_bytes, const std::string& model_label,
                        const Target& target, const std::string& accelerator_name,
                        DelegateOptions options);

  const CacheLookup& lookup() const { return lookup_; }
  uint64_t fingerprint() const { return fingerprint_; }
  const std::shared_ptr<PackedWeightStore>& packed_weights() const { return packed_weights_; }

  std::unique_ptr<EmulatedDelegate> MakeDelegate(const ModelDef& model, int num_threads);
  // The per-node support of the last MakeDelegate / Plan call.
  const std::vector<NodeSupport>& support() const { return support_; }

  // After the delegate was applied: verifies a hit or writes the entry.
  // Returns the status line "cache: <status> <path>[ (detail)]". Without a
  // MakeDelegate call first, the support is asked from `delegate`.
  std::string Commit(const Interpreter& interpreter, EmulatedDelegate& delegate);
  // Without an applied delegate (the delegate exists, not yet applied):
  // checks `support` against a hit or writes placement and partitions.
  std::string CommitBeforeApply(const ModelDef& model, Delegate& delegate);

 private:
  // Loads the hit's sections for `model`; a hit that does not fit becomes corrupt.
  void LoadCached(const ModelDef& model);
  std::string Finish(CachedDelegation fresh);

  CompilationCache cache_;
  const Target& target_;
  std::string accelerator_name_;
  DelegateOptions options_;
  std::string description_;
  uint64_t fingerprint_ = 0;
  CacheLookup lookup_;
  bool cached_loaded_ = false;  // LoadCached ran
  bool cached_valid_ = false;
  CachedDelegation cached_;
  std::vector<NodeSupport> support_;
  std::shared_ptr<PackedWeightStore> packed_weights_;
};

}  // namespace delegato
