#include "delegato/packed_weights.h"

#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "core/error.h"

namespace delegato {
namespace {

// Serialized form: "DLGPACKW" | version u32 | entry count u32 |
// per entry: node i32 | kind u32 | size u64 | bytes. Little-endian.
constexpr char kMagic[8] = {'D', 'L', 'G', 'P', 'A', 'C', 'K', 'W'};
constexpr uint32_t kStoreFormatVersion = 1;
constexpr size_t kEntryHeaderBytes = 16;

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

struct PackedWeightStore::State {
  mutable std::mutex mutex;
  // Entries point into `serialized` (after Deserialize) or own their bytes
  // (after Record): Blob::owner keeps either alive.
  std::map<std::pair<int, uint32_t>, Blob> entries;
  Counters counters;
  bool modified = false;
};

PackedWeightStore::PackedWeightStore() : state_(std::make_shared<State>()) {}
PackedWeightStore::~PackedWeightStore() = default;

bool PackedWeightStore::Deserialize(std::span<const uint8_t> bytes, std::string* error) {
  return Deserialize(std::vector<uint8_t>(bytes.begin(), bytes.end()), error);
}

bool PackedWeightStore::Deserialize(std::vector<uint8_t>&& bytes, std::string* error) {
  auto owner = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  const std::span<const uint8_t> data(*owner);
  return Deserialize(std::move(owner), data, error);
}

bool PackedWeightStore::Deserialize(std::shared_ptr<const void> owner, std::span<const uint8_t> data,
                                    std::string* error) {
  std::map<std::pair<int, uint32_t>, Blob> entries;
  auto fail = [&](std::string why) {
    if (error) *error = std::move(why);
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->entries.clear();
    state_->modified = false;
    return false;
  };
  if (data.size() < 16 || std::memcmp(data.data(), kMagic, 8) != 0) return fail("not a packed weight store");
  const uint32_t version = static_cast<uint32_t>(GetLE(data.data() + 8, 4));
  if (version != kStoreFormatVersion)
    return fail(StrCat("packed weight store version ", version, ", this build reads ", kStoreFormatVersion));
  const uint32_t count = static_cast<uint32_t>(GetLE(data.data() + 12, 4));
  size_t pos = 16;
  for (uint32_t i = 0; i < count; ++i) {
    if (data.size() - pos < kEntryHeaderBytes) return fail(StrCat("entry ", i, " truncated"));
    const int node = static_cast<int32_t>(static_cast<uint32_t>(GetLE(data.data() + pos, 4)));
    const uint32_t kind = static_cast<uint32_t>(GetLE(data.data() + pos + 4, 4));
    const uint64_t size = GetLE(data.data() + pos + 8, 8);
    pos += kEntryHeaderBytes;
    if (size > data.size() - pos) return fail(StrCat("entry ", i, " runs past the end"));
    if (node < 0) return fail(StrCat("entry ", i, " has node ", node));
    Blob blob{owner, std::span<const uint8_t>(data.data() + pos, static_cast<size_t>(size))};
    if (!entries.emplace(std::make_pair(node, kind), std::move(blob)).second)
      return fail(StrCat("entry ", i, " repeats node ", node, " kind ", kind));
    pos += static_cast<size_t>(size);
  }
  if (pos != data.size()) return fail("trailing bytes after the last entry");
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->entries = std::move(entries);
  state_->counters = Counters{};
  state_->modified = false;
  return true;
}

std::vector<uint8_t> PackedWeightStore::Serialize() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  size_t total = 16;
  for (const auto& [key, blob] : state_->entries) total += kEntryHeaderBytes + blob.bytes.size();
  std::vector<uint8_t> out;
  out.reserve(total);
  out.insert(out.end(), kMagic, kMagic + 8);
  PutU32(out, kStoreFormatVersion);
  PutU32(out, static_cast<uint32_t>(state_->entries.size()));
  for (const auto& [key, blob] : state_->entries) {
    PutU32(out, static_cast<uint32_t>(key.first));
    PutU32(out, key.second);
    PutU64(out, blob.bytes.size());
    out.insert(out.end(), blob.bytes.begin(), blob.bytes.end());
  }
  return out;
}

void PackedWeightStore::Clear() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->entries.clear();
}

int PackedWeightStore::num_entries() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return static_cast<int>(state_->entries.size());
}

size_t PackedWeightStore::packed_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  size_t total = 0;
  for (const auto& [key, blob] : state_->entries) total += blob.bytes.size();
  return total;
}

PackedWeightStore::Counters PackedWeightStore::counters() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->counters;
}

bool PackedWeightStore::modified() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->modified;
}

int PackedWeightStore::KeyOf(int node) const {
  if (!mapped_) return node;
  return node >= 0 && node < static_cast<int>(node_keys_.size()) ? node_keys_[node] : -1;
}

PackedWeightStore::Blob PackedWeightStore::Find(int node, uint32_t kind) const {
  const int key = KeyOf(node);
  if (key < 0) return {};
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto it = state_->entries.find({key, kind});
  return it == state_->entries.end() ? Blob{} : it->second;
}

void PackedWeightStore::Record(int node, uint32_t kind, std::vector<uint8_t> bytes, int64_t micros) {
  const int key = KeyOf(node);
  if (key < 0) return;
  auto owner = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  Blob blob{owner, std::span<const uint8_t>(owner->data(), owner->size())};
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->entries[{key, kind}] = std::move(blob);
  ++state_->counters.packed;
  state_->counters.pack_us += micros;
  state_->modified = true;
}

void PackedWeightStore::CountLoaded(int64_t micros) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  ++state_->counters.loaded;
  state_->counters.load_us += micros;
}

void PackedWeightStore::CountRejected() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  ++state_->counters.rejected;
}

std::shared_ptr<PackedWeightStore> PackedWeightStore::View(std::vector<int> node_keys) const {
  auto view = std::make_shared<PackedWeightStore>();
  view->state_ = state_;
  if (mapped_)
    for (int& k : node_keys) k = KeyOf(k);
  view->node_keys_ = std::move(node_keys);
  view->mapped_ = true;
  return view;
}

}  // namespace delegato
