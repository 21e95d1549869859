#include "delegate/compilation_cache.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/hash.h"
#include "delegate/graph_view.h"
#include "delegate/partitioner.h"
#include "kernels/optimized/isa.h"

namespace delegato {
namespace {

namespace fs = std::filesystem;

// Entries larger than this are not read (a damaged size field or a stray file).
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;

// ------------------------------------------------------------ little-endian bytes

class ByteWriter {
 public:
  void U32(uint32_t v) { for (int i = 0; i < 4; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i))); }
  void U64(uint64_t v) { for (int i = 0; i < 8; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i))); }
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void F64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    U64(bits);
  }
  void Bytes(std::span<const uint8_t> bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  template <class Int>
  void Ints(const std::vector<Int>& values) {
    U32(static_cast<uint32_t>(values.size()));
    for (Int v : values) I32(static_cast<int32_t>(v));
  }
  std::vector<uint8_t>& bytes() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

// Reads what ByteWriter wrote; any read past the end (or a count that could
// not fit in what is left) turns ok() false and yields zeros from then on.
class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> data) : data_(data) {}
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == data_.size(); }

  uint32_t U32() {
    uint32_t v = 0;
    if (!Need(4)) return 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{data_[pos_ + i]} << (8 * i);
    pos_ += 4;
    return v;
  }
  uint64_t U64() {
    uint64_t v = 0;
    if (!Need(8)) return 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{data_[pos_ + i]} << (8 * i);
    pos_ += 8;
    return v;
  }
  int32_t I32() { return static_cast<int32_t>(U32()); }
  double F64() {
    const uint64_t bits = U64();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  std::span<const uint8_t> Bytes(uint64_t n) {
    if (!Need(n)) return {};
    auto s = data_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::string Str() {
    const uint32_t n = U32();
    auto s = Bytes(n);
    return std::string(s.begin(), s.end());
  }
  // A count of items of at least `min_item_bytes` each.
  uint32_t Count(size_t min_item_bytes) {
    const uint32_t n = U32();
    if (ok_ && static_cast<uint64_t>(n) * std::max<size_t>(1, min_item_bytes) > data_.size() - pos_) ok_ = false;
    return ok_ ? n : 0;
  }
  template <class Int>
  std::vector<Int> Ints() {
    const uint32_t n = Count(4);
    std::vector<Int> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = static_cast<Int>(I32());
    return v;
  }

 private:
  bool Need(uint64_t n) {
    if (!ok_ || n > data_.size() - pos_) {
      ok_ = false;
      return false;
    }
    return true;
  }
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// Slicing-by-8 tables: table[0] is the classic byte table, table[k][b] the
// CRC of byte b followed by k zero bytes, so eight bytes are folded per step
// (several times faster than byte at a time on megabytes of packed weights).
using CrcTables = std::array<std::array<uint32_t, 256>, 8>;
CrcTables MakeCrcTables() {
  CrcTables tables{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    tables[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i)
    for (int k = 1; k < 8; ++k) tables[k][i] = (tables[k - 1][i] >> 8) ^ tables[0][tables[k - 1][i] & 0xFF];
  return tables;
}

bool ReadWholeFile(const std::string& path, std::vector<uint8_t>* bytes, std::string* error) {
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) {
    *error = ec.message();
    return false;
  }
  if (size > kMaxEntryBytes) {
    *error = StrCat("file is ", size, " bytes, larger than any entry");
    return false;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "cannot open";
    return false;
  }
  bytes->resize(size);
  file.read(reinterpret_cast<char*>(bytes->data()), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(file.gcount()) != size) {
    *error = "short read";
    return false;
  }
  return true;
}

bool IsHex16(std::string_view s) {
  return s.size() == 16 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// "<token>_<16 hex>.bin"
bool IsEntryFileName(std::string_view name) {
  constexpr std::string_view kExt = ".bin";
  if (name.size() < 1 + 1 + 16 + kExt.size() || !name.ends_with(kExt)) return false;
  const std::string_view stem = name.substr(0, name.size() - kExt.size());
  return stem[stem.size() - 17] == '_' && IsHex16(stem.substr(stem.size() - 16));
}

// ------------------------------------------------------------ delegation sections

void WriteReasons(ByteWriter& w, const std::vector<Reason>& reasons) {
  w.U32(static_cast<uint32_t>(reasons.size()));
  for (const Reason& r : reasons) {
    w.Str(ReasonCodeName(r.code));  // names, not numbers: they are the stable format
    w.Str(r.layer);
    w.Str(r.message);
    w.Str(r.fix);
  }
}

bool ReadReasons(ByteReader& r, std::vector<Reason>* reasons) {
  const uint32_t n = r.Count(16);
  reasons->resize(n);
  for (Reason& reason : *reasons) {
    const std::string code = r.Str();
    if (!r.ok() || !ParseReasonCode(code, &reason.code)) return false;
    reason.layer = r.Str();
    reason.message = r.Str();
    reason.fix = r.Str();
  }
  return r.ok();
}

bool SameReasons(const std::vector<Reason>& a, const std::vector<Reason>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].code != b[i].code || a[i].message != b[i].message) return false;
  return true;
}

// What differs between a cached and a fresh delegation; empty when nothing.
std::string DescribeDifference(const CachedDelegation& cached, const CachedDelegation& fresh) {
  if (cached.placements.size() != fresh.placements.size())
    return StrCat("node count ", cached.placements.size(), " vs ", fresh.placements.size());
  for (size_t n = 0; n < fresh.placements.size(); ++n) {
    const NodePlacement& a = cached.placements[n];
    const NodePlacement& b = fresh.placements[n];
    if (a.delegated != b.delegated || a.partition != b.partition || !SameReasons(a.reasons, b.reasons))
      return StrCat("placement of node ", n);
  }
  if (cached.num_candidate_partitions != fresh.num_candidate_partitions) return "candidate partition count";
  if (cached.partitions.size() != fresh.partitions.size())
    return StrCat("partition count ", cached.partitions.size(), " vs ", fresh.partitions.size());
  for (size_t k = 0; k < fresh.partitions.size(); ++k) {
    const CachedPartition& a = cached.partitions[k];
    const CachedPartition& b = fresh.partitions[k];
    if (a.nodes != b.nodes || a.inputs != b.inputs || a.outputs != b.outputs)
      return StrCat("nodes or boundary tensors of partition ", k);
    if (a.compiled && b.compiled && a.device_arena_bytes != b.device_arena_bytes)
      return StrCat("device arena of partition ", k, ": ", a.device_arena_bytes, " vs ", b.device_arena_bytes,
                    " bytes");
  }
  return {};
}

std::string FormatOptions(const DelegateOptions& options) {
  std::string skip;
  for (int n : options.skip_nodes) skip += (skip.empty() ? "" : ",") + std::to_string(n);
  return StrCat("max_delegated_partitions=", options.max_delegated_partitions,
                " min_nodes_per_partition=", options.min_nodes_per_partition,
                skip.empty() ? "" : " skip_nodes=" + skip,
                options.first_node >= 0 ? StrCat(" first_node=", options.first_node) : "",
                options.last_node >= 0 ? StrCat(" last_node=", options.last_node) : "",
                options.greedy ? "" : " greedy=false");
}

// Fills `store` from a hit's packed_weights section (moved out of the
// entry). A section that does not parse makes the entry corrupt.
void LoadPackedSection(CacheLookup* lookup, PackedWeightStore* store) {
  if (lookup->status != CacheStatus::kHit) return;
  if (lookup->file_bytes != nullptr) {
    // Decoded in place by CompilationCache::Load: the store keeps the file's
    // bytes (already checked against the payload CRC) instead of a copy.
    std::string error;
    if (!lookup->packed_weights.empty() &&
        !store->Deserialize(lookup->file_bytes, lookup->packed_weights, &error)) {
      lookup->status = CacheStatus::kCorrupt;
      lookup->detail = "packed_weights section: " + error;
    }
    lookup->packed_weights = {};
    lookup->file_bytes.reset();
    return;
  }
  for (CacheSection& s : lookup->entry.sections) {
    if (s.type != static_cast<uint32_t>(CacheSectionType::kPackedWeights)) continue;
    std::string error;
    if (!store->Deserialize(std::move(s.data), &error)) {
      lookup->status = CacheStatus::kCorrupt;
      lookup->detail = "packed_weights section: " + error;
    }
    s.data.clear();
    return;
  }
}

// Puts the store's entries into `entry` (no section when there are none).
void StorePackedSection(const PackedWeightStore& store, CacheEntry* entry) {
  if (store.num_entries() > 0) entry->Set(CacheSectionType::kPackedWeights, store.Serialize());
}

std::string CurrentIsaName() { return optimized::IsaName(optimized::SelectedIsa()); }

}  // namespace

// ------------------------------------------------------------ hashing

uint32_t Crc32(std::span<const uint8_t> data, uint32_t crc) {
  static const CrcTables t = MakeCrcTables();
  crc = ~crc;
  const uint8_t* p = data.data();
  size_t n = data.size();
  for (; n >= 8; n -= 8, p += 8) {
    const uint32_t lo = crc ^ (uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
          t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  for (; n > 0; --n, ++p) crc = t[0][(crc ^ *p) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

void Fingerprinter::Mix(const uint8_t* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    hash_ ^= data[i];
    hash_ *= 0x100000001b3ull;
  }
}

Fingerprinter& Fingerprinter::Add(std::span<const uint8_t> bytes) {
  const uint64_t size = bytes.size();
  uint8_t prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<uint8_t>(size >> (8 * i));
  Mix(prefix, 8);
  if (size <= kLargePiece) {
    Mix(bytes.data(), bytes.size());
    return *this;
  }
  // Megabytes (a model file): byte-wise FNV would cost milliseconds per run.
  const uint64_t digest = Hash64(bytes.data(), bytes.size());
  uint8_t digest_bytes[8];
  for (int i = 0; i < 8; ++i) digest_bytes[i] = static_cast<uint8_t>(digest >> (8 * i));
  Mix(digest_bytes, 8);
  return *this;
}

Fingerprinter& Fingerprinter::Add(std::string_view text) {
  return Add(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Fingerprinter& Fingerprinter::Add(int64_t value) { return Add(std::to_string(value)); }

std::string FingerprintHex(uint64_t fingerprint) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i, fingerprint >>= 4) hex[i] = kDigits[fingerprint & 0xF];
  return hex;
}

// ------------------------------------------------------------ entry format

const char* CacheSectionName(uint32_t type) {
  switch (static_cast<CacheSectionType>(type)) {
    case CacheSectionType::kPlacement: return "placement";
    case CacheSectionType::kPartitions: return "partitions";
    case CacheSectionType::kDeviceCompile: return "device_compile";
    case CacheSectionType::kPackedWeights: return "packed_weights";
  }
  return "unknown";
}

const CacheSection* CacheEntry::Find(CacheSectionType type) const {
  for (const CacheSection& s : sections)
    if (s.type == static_cast<uint32_t>(type)) return &s;
  return nullptr;
}

void CacheEntry::Set(CacheSectionType type, std::vector<uint8_t> data, uint32_t flags) {
  for (CacheSection& s : sections) {
    if (s.type == static_cast<uint32_t>(type)) {
      s.data = std::move(data);
      s.flags = flags;
      return;
    }
  }
  sections.push_back(CacheSection{static_cast<uint32_t>(type), flags, std::move(data)});
}

const char* CacheStatusName(CacheStatus status) {
  switch (status) {
    case CacheStatus::kHit: return "hit";
    case CacheStatus::kMiss: return "miss";
    case CacheStatus::kStale: return "stale";
    case CacheStatus::kCorrupt: return "corrupt";
  }
  return "corrupt";
}

namespace {

// An encoded entry as pieces written one after another: the header, the
// token and description, then per section its 16-byte header and its bytes
// (a view of the entry's, not a copy: packed weights run to megabytes).
struct EncodedPieces {
  std::vector<std::vector<uint8_t>> owned;  // header, strings, section headers
  std::vector<std::span<const uint8_t>> pieces;
  size_t total = 0;
};

EncodedPieces EncodePieces(const CacheEntry& entry) {
  EncodedPieces out;
  out.owned.reserve(2 + entry.sections.size());
  ByteWriter strings;
  strings.Str(entry.token);
  strings.Str(entry.description);
  out.owned.push_back(std::move(strings.bytes()));
  std::vector<std::span<const uint8_t>> payload{out.owned.back()};
  for (const CacheSection& s : entry.sections) {
    ByteWriter section_header;
    section_header.U32(s.type);
    section_header.U32(s.flags);
    section_header.U64(s.data.size());
    out.owned.push_back(std::move(section_header.bytes()));
    payload.push_back(out.owned.back());
    payload.push_back(s.data);
  }
  uint64_t payload_size = 0;
  uint32_t payload_crc = 0;
  for (std::span<const uint8_t> piece : payload) {
    payload_size += piece.size();
    payload_crc = Crc32(piece, payload_crc);
  }
  ByteWriter header;
  header.Bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(kCacheMagic), 8));
  header.U32(kCacheFormatVersion);
  header.U32(kCacheHeaderSize);
  header.U64(entry.fingerprint);
  header.U64(payload_size);
  header.U32(payload_crc);
  header.U32(Crc32(header.bytes()));  // covers the 36 bytes so far
  header.U32(static_cast<uint32_t>(entry.sections.size()));
  header.U32(0);
  out.owned.push_back(std::move(header.bytes()));
  out.pieces.push_back(out.owned.back());
  out.pieces.insert(out.pieces.end(), payload.begin(), payload.end());
  out.total = kCacheHeaderSize + payload_size;
  return out;
}

}  // namespace

std::vector<uint8_t> EncodeCacheEntry(const CacheEntry& entry) {
  const EncodedPieces encoded = EncodePieces(entry);
  std::vector<uint8_t> out;
  out.reserve(encoded.total);
  for (std::span<const uint8_t> piece : encoded.pieces) out.insert(out.end(), piece.begin(), piece.end());
  return out;
}

namespace {

// DecodeCacheEntry; with `packed_in_place`, the packed_weights section's
// bytes are not copied into the entry (its data stays empty) but returned
// there as a view of `bytes`.
CacheStatus DecodeEntry(std::span<const uint8_t> bytes, uint64_t expected_fingerprint, CacheEntry* entry,
                        std::string* detail, std::span<const uint8_t>* packed_in_place) {
  *entry = CacheEntry{};
  if (packed_in_place != nullptr) *packed_in_place = {};
  auto corrupt = [&](std::string why) {
    *detail = std::move(why);
    return CacheStatus::kCorrupt;
  };
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kCacheMagic, 8) != 0)
    return corrupt("not a delegato cache entry (bad magic)");
  if (bytes.size() < kCacheHeaderSize)
    return corrupt(StrCat("truncated header: ", bytes.size(), " of ", kCacheHeaderSize, " bytes"));
  ByteReader h(bytes.first(kCacheHeaderSize));
  h.Bytes(8);
  const uint32_t version = h.U32();
  const uint32_t header_size = h.U32();
  const uint64_t fingerprint = h.U64();
  const uint64_t payload_size = h.U64();
  const uint32_t payload_crc = h.U32();
  const uint32_t header_crc = h.U32();
  const uint32_t section_count = h.U32();
  if (header_crc != Crc32(bytes.first(36))) return corrupt("header checksum mismatch");
  if (version != kCacheFormatVersion) {
    *detail = StrCat("format version ", version, ", this build reads version ", kCacheFormatVersion);
    return CacheStatus::kStale;
  }
  if (header_size != kCacheHeaderSize) return corrupt(StrCat("header size ", header_size));
  if (payload_size != bytes.size() - kCacheHeaderSize)
    return corrupt(StrCat(payload_size > bytes.size() - kCacheHeaderSize ? "truncated: " : "trailing bytes: ",
                          "header announces ", payload_size, " payload bytes, the file holds ",
                          bytes.size() - kCacheHeaderSize));
  const auto payload = bytes.subspan(kCacheHeaderSize);
  if (Crc32(payload) != payload_crc) return corrupt("payload checksum mismatch");

  ByteReader r(payload);
  entry->fingerprint = fingerprint;
  entry->token = r.Str();
  entry->description = r.Str();
  for (uint32_t i = 0; i < section_count && r.ok(); ++i) {
    CacheSection s;
    s.type = r.U32();
    s.flags = r.U32();
    const uint64_t size = r.U64();
    auto data = r.Bytes(size);
    if (packed_in_place != nullptr && s.type == static_cast<uint32_t>(CacheSectionType::kPackedWeights))
      *packed_in_place = data;
    else
      s.data.assign(data.begin(), data.end());
    if (r.ok()) entry->sections.push_back(std::move(s));
  }
  if (!r.ok() || !r.at_end()) return corrupt("sections do not fill the payload exactly");
  if (expected_fingerprint != 0 && fingerprint != expected_fingerprint) {
    *detail = StrCat("entry of another model, target, options or version (fingerprint ",
                     FingerprintHex(fingerprint), ", expected ", FingerprintHex(expected_fingerprint), ")");
    return CacheStatus::kStale;
  }
  for (const CacheSection& s : entry->sections) {
    if ((s.flags & kSectionRequired) && std::string_view(CacheSectionName(s.type)) == "unknown") {
      *detail = StrCat("requires section type ", s.type, ", unknown to this build");
      return CacheStatus::kStale;
    }
  }
  detail->clear();
  return CacheStatus::kHit;
}

}  // namespace

CacheStatus DecodeCacheEntry(std::span<const uint8_t> bytes, uint64_t expected_fingerprint,
                             CacheEntry* entry, std::string* detail) {
  return DecodeEntry(bytes, expected_fingerprint, entry, detail, nullptr);
}

// ------------------------------------------------------------ a cache directory

std::string CacheFileToken(std::string_view token) {
  std::string out;
  for (char c : token) {
    const bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    if (safe) out += c;
    else if (out.empty() || out.back() != '_') out += '_';
    if (out.size() == 64) break;
  }
  while (!out.empty() && out.front() == '.') out.erase(out.begin());  // no hidden files
  return out.empty() ? "model" : out;
}

CompilationCache::CompilationCache(std::string dir, std::string token)
    : dir_(std::move(dir)), token_(std::move(token)), file_token_(CacheFileToken(token_)) {}

std::string CompilationCache::EntryPath(uint64_t fingerprint) const {
  return (fs::path(dir_) / (file_token_ + "_" + FingerprintHex(fingerprint) + ".bin")).string();
}

CacheLookup CompilationCache::Load(uint64_t fingerprint) const {
  CacheLookup lookup;
  lookup.path = EntryPath(fingerprint);
  std::error_code ec;
  if (!fs::exists(lookup.path, ec)) {
    lookup.status = CacheStatus::kMiss;
    return lookup;
  }
  // One read into private memory, which the packed weights are then used
  // from without another copy. The file is not mapped: a mapping stays tied
  // to the file, and another process truncating it after the checks would
  // make reading the packed weights fault (SIGBUS); read bytes cannot change.
  auto bytes = std::make_shared<std::vector<uint8_t>>();
  std::string error;
  if (!ReadWholeFile(lookup.path, bytes.get(), &error)) {
    lookup.status = CacheStatus::kCorrupt;
    lookup.detail = "unreadable: " + error;
    return lookup;
  }
  lookup.status = DecodeEntry(*bytes, fingerprint, &lookup.entry, &lookup.detail, &lookup.packed_weights);
  if (lookup.status == CacheStatus::kHit && lookup.entry.token != token_) {
    lookup.status = CacheStatus::kStale;
    lookup.detail = "entry of token '" + lookup.entry.token + "'";
  }
  if (lookup.status != CacheStatus::kHit) {
    lookup.entry = CacheEntry{};
    lookup.packed_weights = {};
  } else {
    lookup.file_bytes = std::move(bytes);
  }
  return lookup;
}

std::string CompilationCache::Store(const CacheEntry& entry) const {
  static std::atomic<uint64_t> counter{0};
  const std::string path = EntryPath(entry.fingerprint);
  const fs::path final_path(path);
  const fs::path temp_path = final_path.parent_path() /
                             StrCat(".", final_path.filename().string(), ".tmp.", ::getpid(), ".", counter++);
  try {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) return "cannot create directory " + dir_ + ": " + ec.message();
    const EncodedPieces encoded = EncodePieces(entry);  // views of the entry's sections, no copy
    {
      std::ofstream file(temp_path, std::ios::binary | std::ios::trunc);
      if (!file) return "cannot write " + temp_path.string();
      for (std::span<const uint8_t> piece : encoded.pieces)
        file.write(reinterpret_cast<const char*>(piece.data()), static_cast<std::streamsize>(piece.size()));
      file.flush();
      if (!file) {
        fs::remove(temp_path, ec);
        return "write failed: " + temp_path.string();
      }
    }
    fs::rename(temp_path, final_path, ec);
    if (ec) {
      fs::remove(temp_path, ec);
      return "cannot rename into " + path + ": " + ec.message();
    }
    return {};
  } catch (const std::exception& e) {
    std::error_code ec;
    fs::remove(temp_path, ec);
    return e.what();
  }
}

bool IsCacheFileName(std::string_view name) {
  if (IsEntryFileName(name)) return true;
  // ".<entry name>.tmp.<pid>.<n>", left by a writer that died before renaming
  if (name.empty() || name.front() != '.') return false;
  const size_t tmp = name.find(".tmp.");
  return tmp != std::string_view::npos && IsEntryFileName(name.substr(1, tmp - 1));
}

std::vector<CacheFileInfo> ListCacheDir(const std::string& dir) {
  std::vector<CacheFileInfo> files;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  DLG_CHECK(!ec, dir, ": cannot list the cache directory: ", ec.message());
  for (const fs::directory_entry& e : it) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file(ec) || !IsEntryFileName(name)) continue;
    CacheFileInfo info;
    info.path = e.path().string();
    info.size = e.file_size(ec);
    std::vector<uint8_t> bytes;
    std::string error;
    if (!ReadWholeFile(info.path, &bytes, &error)) {
      info.status = CacheStatus::kCorrupt;
      info.detail = "unreadable: " + error;
    } else {
      info.status = DecodeCacheEntry(bytes, 0, &info.entry, &info.detail);
      const std::string named = name.substr(name.size() - 4 - 16, 16);
      if (info.status == CacheStatus::kHit && named != FingerprintHex(info.entry.fingerprint)) {
        info.status = CacheStatus::kStale;
        info.detail = "the file name says fingerprint " + named + ", the entry holds " +
                      FingerprintHex(info.entry.fingerprint) + " (renamed or swapped file)";
      }
    }
    files.push_back(std::move(info));
  }
  std::sort(files.begin(), files.end(),
            [](const CacheFileInfo& a, const CacheFileInfo& b) { return a.path < b.path; });
  return files;
}

// ------------------------------------------------------------ target delegation entries

std::vector<int> CachedDelegation::delegated_nodes() const {
  std::vector<int> nodes;
  for (size_t n = 0; n < placements.size(); ++n)
    if (placements[n].delegated) nodes.push_back(static_cast<int>(n));
  return nodes;
}

void StoreDelegation(const CachedDelegation& d, CacheEntry* entry) {
  ByteWriter placement;
  placement.U32(static_cast<uint32_t>(d.support.size()));
  for (const NodeSupport& s : d.support) {
    placement.U32(s.supported ? 1 : 0);
    WriteReasons(placement, s.reasons);
  }
  placement.U32(static_cast<uint32_t>(d.placements.size()));
  for (const NodePlacement& p : d.placements) {
    placement.U32(p.delegated ? 1 : 0);
    placement.I32(p.partition);
    WriteReasons(placement, p.reasons);
  }
  placement.I32(d.num_candidate_partitions);
  entry->Set(CacheSectionType::kPlacement, std::move(placement.bytes()), kSectionRequired);

  ByteWriter partitions;
  partitions.U32(static_cast<uint32_t>(d.partitions.size()));
  for (const CachedPartition& p : d.partitions) {
    partitions.I32(p.index);
    partitions.Ints(p.nodes);
    partitions.U32(static_cast<uint32_t>(p.ops.size()));
    for (const std::string& op : p.ops) partitions.Str(op);
    partitions.Ints(p.inputs);
    partitions.Ints(p.outputs);
  }
  entry->Set(CacheSectionType::kPartitions, std::move(partitions.bytes()), kSectionRequired);

  const bool compiled = !d.partitions.empty() &&
                        std::all_of(d.partitions.begin(), d.partitions.end(),
                                    [](const CachedPartition& p) { return p.compiled; });
  if (compiled) {
    ByteWriter compile;
    compile.U32(static_cast<uint32_t>(d.partitions.size()));
    for (const CachedPartition& p : d.partitions) {
      compile.I32(p.index);
      compile.U64(p.device_arena_bytes);
      compile.F64(p.compile_us);
    }
    entry->Set(CacheSectionType::kDeviceCompile, std::move(compile.bytes()));
  }
}

bool LoadDelegation(const CacheEntry& entry, int num_nodes, CachedDelegation* d, std::string* detail) {
  *d = CachedDelegation{};
  const CacheSection* placement = entry.Find(CacheSectionType::kPlacement);
  const CacheSection* partitions = entry.Find(CacheSectionType::kPartitions);
  if (placement == nullptr || partitions == nullptr) {
    *detail = "the entry holds no delegation (placement/partitions sections missing)";
    return false;
  }
  auto bad = [&](std::string why) {
    *detail = std::move(why);
    *d = CachedDelegation{};
    return false;
  };

  ByteReader r(placement->data);
  const uint32_t support_count = r.Count(8);
  if (r.ok() && num_nodes >= 0 && support_count != static_cast<uint32_t>(num_nodes))
    return bad(StrCat("placement section has ", support_count, " nodes, the model ", num_nodes));
  num_nodes = static_cast<int>(support_count);
  d->support.resize(support_count);
  for (NodeSupport& s : d->support) {
    s.supported = r.U32() != 0;
    if (!ReadReasons(r, &s.reasons)) return bad("placement section: unreadable support");
  }
  const uint32_t placement_count = r.Count(12);
  if (r.ok() && placement_count != static_cast<uint32_t>(num_nodes))
    return bad("placement section: node count mismatch");
  d->placements.resize(placement_count);
  for (NodePlacement& p : d->placements) {
    p.delegated = r.U32() != 0;
    p.partition = r.I32();
    if (!ReadReasons(r, &p.reasons)) return bad("placement section: unreadable placements");
  }
  d->num_candidate_partitions = r.I32();
  if (!r.ok() || !r.at_end()) return bad("placement section: malformed");

  ByteReader q(partitions->data);
  const uint32_t partition_count = q.Count(20);
  d->partitions.resize(partition_count);
  for (CachedPartition& p : d->partitions) {
    p.index = q.I32();
    p.nodes = q.Ints<int>();
    const uint32_t op_count = q.Count(4);
    for (uint32_t i = 0; i < op_count; ++i) p.ops.push_back(q.Str());
    p.inputs = q.Ints<int32_t>();
    p.outputs = q.Ints<int32_t>();
    for (int n : p.nodes)
      if (n < 0 || n >= num_nodes || !d->placements[n].delegated || d->placements[n].partition != p.index)
        return bad(StrCat("partitions section: node ", n, " of partition ", p.index,
                          " disagrees with the placements"));
  }
  if (!q.ok() || !q.at_end()) return bad("partitions section: malformed");
  for (int n = 0; n < num_nodes; ++n) {
    const int k = d->placements[n].partition;
    if (d->placements[n].delegated && (k < 0 || k >= static_cast<int>(partition_count)))
      return bad(StrCat("placement of node ", n, " names partition ", k, " of ", partition_count));
  }

  if (const CacheSection* compile = entry.Find(CacheSectionType::kDeviceCompile)) {
    ByteReader c(compile->data);
    const uint32_t count = c.Count(20);
    if (c.ok() && count != partition_count) return bad("device_compile section: partition count mismatch");
    for (CachedPartition& p : d->partitions) {
      const int index = c.I32();
      p.device_arena_bytes = c.U64();
      p.compile_us = c.F64();
      p.compiled = index == p.index;
    }
    if (!c.ok() || !c.at_end()) return bad("device_compile section: malformed");
  }
  return true;
}

CachedDelegation PlanTargetDelegation(const ModelDef& model, std::vector<NodeSupport> support,
                                      const DelegateOptions& options) {
  const GraphInfo graph = BuildGraphInfo(model);
  const DelegationPlan plan = PlanDelegation(graph, support, options);
  const SubgraphDef& subgraph = model.subgraphs[0];
  CachedDelegation d;
  d.support = std::move(support);
  d.placements = plan.nodes;
  d.num_candidate_partitions = plan.num_candidate_partitions;
  for (int k = 0; k < plan.num_partitions(); ++k) {
    const NodeSubset& subset = plan.subsets[plan.partition_subsets[k]];
    CachedPartition p;
    p.index = k;
    p.nodes = subset.nodes;  // the plan before any delegate: position = node index
    for (int n : p.nodes) p.ops.push_back(model.OpName(subgraph.operators[n]));
    for (int t : subset.input_tensors)
      if (t >= 0 && !HasConstantData(model, subgraph, t)) p.inputs.push_back(t);
    p.outputs.assign(subset.output_tensors.begin(), subset.output_tensors.end());
    d.partitions.push_back(std::move(p));
  }
  return d;
}

std::string TargetFileContents(const Target& target) {
  std::string contents;
  std::vector<std::string> seen;
  std::string path = target.path;
  while (!path.empty() && std::find(seen.begin(), seen.end(), path) == seen.end() && seen.size() < 16) {
    seen.push_back(path);
    std::ifstream file(path, std::ios::binary);
    if (!file) {
      contents += "\n<unreadable " + path + ">";
      break;
    }
    std::stringstream text;
    text << file.rdbuf();
    const std::string json = text.str();
    contents += "\n<" + fs::path(path).filename().string() + ">\n" + json;
    // "extends": "<id>" names a file in the same folder (target.h).
    const size_t key = json.find("\"extends\"");
    if (key == std::string::npos) break;
    const size_t open = json.find('"', json.find(':', key) + 1);
    const size_t close = open == std::string::npos ? open : json.find('"', open + 1);
    if (close == std::string::npos) break;
    path = (fs::path(path).parent_path() / (json.substr(open + 1, close - open - 1) + ".json")).string();
  }
  return contents;
}

uint64_t TargetCacheFingerprint(std::span<const uint8_t> model_bytes, const Target& target,
                                const std::string& accelerator_name, const DelegateOptions& options,
                                const std::string& token) {
  Fingerprinter f;
  f.Add("delegato compilation cache").Add(int64_t{kCacheFormatVersion}).Add(DELEGATO_VERSION);
  f.Add(model_bytes);
  f.Add(target.id).Add(TargetFileContents(target)).Add(accelerator_name);
  f.Add(int64_t{options.max_delegated_partitions}).Add(int64_t{options.min_nodes_per_partition});
  f.Add(int64_t(options.skip_nodes.size()));
  for (int n : options.skip_nodes) f.Add(int64_t{n});
  f.Add(int64_t{options.first_node}).Add(int64_t{options.last_node}).Add(int64_t{options.greedy});
  f.Add(CurrentIsaName());  // packed weights differ per ISA: machines sharing a directory keep their own
  f.Add(token);
  const uint64_t value = f.value();
  return value == 0 ? 1 : value;  // 0 means "any" to DecodeCacheEntry
}

// ------------------------------------------------------------ TargetDelegationCache

TargetDelegationCache::TargetDelegationCache(const std::string& dir, const std::string& token,
                                             std::span<const uint8_t> model_bytes,
                                             const std::string& model_label, const Target& target,
                                             const std::string& accelerator_name, DelegateOptions options)
    : cache_(dir, token),
      target_(target),
      accelerator_name_(accelerator_name),
      options_(std::move(options)) {
  fingerprint_ = TargetCacheFingerprint(model_bytes, target, accelerator_name, options_, token);
  description_ = StrCat("model=", model_label, " (", model_bytes.size(), " bytes) target=", target.id,
                        accelerator_name.empty() ? "" : " accelerator=" + accelerator_name, " ",
                        FormatOptions(options_), " delegato=", DELEGATO_VERSION);
  lookup_ = cache_.Load(fingerprint_);
  packed_weights_ = std::make_shared<PackedWeightStore>();
  LoadPackedSection(&lookup_, packed_weights_.get());
}

void TargetDelegationCache::LoadCached(const ModelDef& model) {
  if (cached_loaded_) return;
  cached_loaded_ = true;
  if (lookup_.status != CacheStatus::kHit) return;
  const int num_nodes = static_cast<int>(model.subgraphs.at(0).operators.size());
  std::string detail;
  cached_valid_ = LoadDelegation(lookup_.entry, num_nodes, &cached_, &detail);
  if (!cached_valid_) {
    lookup_.status = CacheStatus::kCorrupt;
    lookup_.detail = detail;
  }
}

std::unique_ptr<EmulatedDelegate> TargetDelegationCache::MakeDelegate(const ModelDef& model, int num_threads) {
  LoadCached(model);
  support_ = cached_valid_ ? cached_.support : EvaluateTarget(target_, model, accelerator_name_);
  auto support = std::make_shared<std::vector<NodeSupport>>(support_);
  const ModelDef* made_for = &model;
  auto delegate = std::make_unique<EmulatedDelegate>(
      target_.id,
      [support, made_for, id = target_.id](const ModelDef& m, int node) -> NodeSupport {
        DLG_CHECK(&m == made_for, "the ", id, " delegate was made for another model");
        DLG_CHECK(node >= 0 && node < static_cast<int>(support->size()), "node ", node, " out of range");
        return (*support)[node];
      },
      options_, num_threads);
  delegate->SetPackedWeightStore(packed_weights_);
  return delegate;
}

std::string TargetDelegationCache::Commit(const Interpreter& interpreter, EmulatedDelegate& delegate) {
  const ModelDef& model = interpreter.model();
  LoadCached(model);
  const int num_nodes = static_cast<int>(model.subgraphs.at(0).operators.size());
  if (static_cast<int>(support_.size()) != num_nodes) {
    support_.assign(num_nodes, NodeSupport{});
    for (int n = 0; n < num_nodes; ++n) support_[n] = delegate.Supports(model, n);
  }
  CachedDelegation fresh = PlanTargetDelegation(model, support_, options_);
  // The interpreter must have done what the plan says (it restores the CPU
  // plan when a delegate's Prepare fails): never record anything else.
  const auto& placements = interpreter.placements();
  bool agrees = placements.size() == fresh.placements.size();
  for (size_t n = 0; agrees && n < placements.size(); ++n)
    agrees = placements[n].delegated == fresh.placements[n].delegated &&
             (!placements[n].delegated || placements[n].partition == fresh.placements[n].partition);
  const auto& stats = delegate.stats();
  agrees = agrees && stats.size() == fresh.partitions.size();
  for (size_t k = 0; agrees && k < stats.size(); ++k) {
    agrees = stats[k].nodes == fresh.partitions[k].nodes;
    fresh.partitions[k].compiled = true;
    fresh.partitions[k].device_arena_bytes = stats[k].device_bytes;
    fresh.partitions[k].compile_us = stats[k].compile_us;
  }
  if (!agrees)
    return StrCat("cache: ", CacheStatusName(lookup_.status), " ", lookup_.path,
                  " (not written: the delegate was not applied as planned",
                  interpreter.warnings().empty() ? "" : ": " + interpreter.warnings().back(), ")");
  return Finish(std::move(fresh));
}

std::string TargetDelegationCache::CommitBeforeApply(const ModelDef& model, Delegate& delegate) {
  LoadCached(model);
  const int num_nodes = static_cast<int>(model.subgraphs.at(0).operators.size());
  support_.assign(num_nodes, NodeSupport{});
  for (int n = 0; n < num_nodes; ++n) support_[n] = delegate.Supports(model, n);
  return Finish(PlanTargetDelegation(model, support_, options_));
}

std::string TargetDelegationCache::Finish(CachedDelegation fresh) {
  const std::string& path = lookup_.path;
  const std::string packed = PackedWeightsSummary(*packed_weights_);
  if (lookup_.status == CacheStatus::kHit && cached_valid_) {
    const std::string difference = DescribeDifference(cached_, fresh);
    if (difference.empty()) {
      // Same decisions. Keep the cold compile record; add one when the entry
      // had none; rewrite the packed weights when kernels packed anything.
      bool adds_compile = false;
      for (size_t k = 0; k < fresh.partitions.size(); ++k) {
        if (cached_.partitions[k].compiled) fresh.partitions[k] = cached_.partitions[k];
        else adds_compile = adds_compile || fresh.partitions[k].compiled;
      }
      const bool repacked = packed_weights_->modified();
      if (!adds_compile && !repacked)
        return StrCat("cache: hit ", path, packed.empty() ? "" : " (" + packed + ")");
      CacheEntry entry = lookup_.entry;
      StoreDelegation(fresh, &entry);
      StorePackedSection(*packed_weights_, &entry);
      const std::string error = cache_.Store(entry);
      return StrCat("cache: hit ", path, " (", packed.empty() ? "" : packed + "; ",
                    error.empty() ? (adds_compile ? "compile record added" : "packed weights rewritten")
                                  : "update failed: " + error,
                    ")");
    }
    lookup_.status = CacheStatus::kStale;
    lookup_.detail = "cached decisions differ from this run's: " + difference;
  }
  CacheEntry entry;
  entry.fingerprint = fingerprint_;
  entry.token = cache_.token();
  entry.description = description_;
  StoreDelegation(fresh, &entry);
  StorePackedSection(*packed_weights_, &entry);
  const std::string error = cache_.Store(entry);
  std::string line = StrCat("cache: ", CacheStatusName(lookup_.status), " ", path, " (");
  if (!lookup_.detail.empty()) line += lookup_.detail + "; ";
  if (!packed.empty()) line += packed + "; ";
  if (!error.empty()) return line + "not written: " + error + ")";
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return line + (lookup_.status == CacheStatus::kMiss ? "written, " : "rebuilt and rewritten, ") +
         std::to_string(ec ? 0 : size) + " bytes)";
}

}  // namespace delegato

namespace delegato {

// ------------------------------------------------------------ CPU-only entries

uint64_t CpuCacheFingerprint(std::span<const uint8_t> model_bytes, const std::string& token) {
  Fingerprinter f;
  f.Add("delegato compilation cache, cpu").Add(int64_t{kCacheFormatVersion}).Add(DELEGATO_VERSION);
  f.Add(model_bytes).Add(CurrentIsaName()).Add(token);
  const uint64_t value = f.value();
  return value == 0 ? 1 : value;
}

std::string PackedWeightsSummary(const PackedWeightStore& store) {
  const PackedWeightStore::Counters c = store.counters();
  if (c.loaded == 0 && c.packed == 0 && c.rejected == 0) return {};
  return StrCat("packed weights: ", c.loaded, " loaded, ", c.packed, " packed",
                c.rejected > 0 ? StrCat(" (", c.rejected, " stored entries rejected)") : "");
}

CpuCompilationCache::CpuCompilationCache(const std::string& dir, const std::string& token,
                                         std::span<const uint8_t> model_bytes, const std::string& model_label)
    : cache_(dir, token), packed_weights_(std::make_shared<PackedWeightStore>()) {
  fingerprint_ = CpuCacheFingerprint(model_bytes, token);
  description_ = StrCat("model=", model_label, " (", model_bytes.size(), " bytes) cpu isa=", CurrentIsaName(),
                        " delegato=", DELEGATO_VERSION);
  lookup_ = cache_.Load(fingerprint_);
  LoadPackedSection(&lookup_, packed_weights_.get());
}

std::string CpuCompilationCache::Commit() {
  const std::string& path = lookup_.path;
  const std::string packed = PackedWeightsSummary(*packed_weights_);
  if (lookup_.status == CacheStatus::kHit && !packed_weights_->modified())
    return StrCat("cache: hit ", path, packed.empty() ? "" : " (" + packed + ")");
  CacheEntry entry;
  entry.fingerprint = fingerprint_;
  entry.token = cache_.token();
  entry.description = description_;
  StorePackedSection(*packed_weights_, &entry);
  const std::string error = cache_.Store(entry);
  std::string line = StrCat("cache: ", CacheStatusName(lookup_.status), " ", path, " (");
  if (!lookup_.detail.empty()) line += lookup_.detail + "; ";
  if (!packed.empty()) line += packed + "; ";
  if (!error.empty()) return line + "not written: " + error + ")";
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return line + (lookup_.status == CacheStatus::kMiss ? "written, "
                 : lookup_.status == CacheStatus::kHit ? "packed weights rewritten, "
                                                       : "rebuilt and rewritten, ") +
         std::to_string(ec ? 0 : size) + " bytes)";
}

}  // namespace delegato
