// The compilation cache: entry format (checksums, typed sections), and a
// target delegation through it on the demo model. Whatever is on disk (a
// hit, a corrupt, truncated, foreign or garbage file, another model's
// entry), the run's outputs equal those of a run without cache, and every
// bad file is reported and rewritten.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "delegate/compilation_cache.h"
#include "tools/tool_util.h"
#include "test_util.h"

namespace delegato {
namespace {

namespace fs = std::filesystem;

using testing::SourceDir;

std::vector<uint8_t> ReadBytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

void WriteBytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// ------------------------------------------------------------ format

TEST(CompilationCacheFormat, Crc32MatchesTheStandardCheckValue) {
  EXPECT_EQ(Crc32(AsBytes("123456789")), 0xCBF43926u);
  EXPECT_EQ(Crc32(AsBytes("")), 0u);
  // Incremental use gives the same value.
  EXPECT_EQ(Crc32(AsBytes("6789"), Crc32(AsBytes("12345"))), 0xCBF43926u);
}

TEST(CompilationCacheFormat, FingerprintSeparatesPiecesAndIsStable) {
  EXPECT_EQ(Fingerprinter().Add("ab").Add("c").value(), Fingerprinter().Add("ab").Add("c").value());
  EXPECT_NE(Fingerprinter().Add("ab").Add("c").value(), Fingerprinter().Add("a").Add("bc").value());
  EXPECT_NE(Fingerprinter().Add(int64_t{1}).value(), Fingerprinter().Add(int64_t{2}).value());
  EXPECT_EQ(FingerprintHex(0x0123456789abcdefull), "0123456789abcdef");
  EXPECT_EQ(FingerprintHex(1), "0000000000000001");
}

CacheEntry SampleEntry() {
  CacheEntry entry;
  entry.fingerprint = 0x1234;
  entry.token = "tok";
  entry.description = "sample";
  entry.Set(CacheSectionType::kPlacement, {1, 2, 3}, kSectionRequired);
  entry.Set(CacheSectionType::kPackedWeights, std::vector<uint8_t>(100, 7));
  return entry;
}

TEST(CompilationCacheFormat, RoundTripKeepsEverySection) {
  const std::vector<uint8_t> bytes = EncodeCacheEntry(SampleEntry());
  ASSERT_GT(bytes.size(), kCacheHeaderSize);
  EXPECT_EQ(std::memcmp(bytes.data(), "DLGCACHE", 8), 0);
  CacheEntry decoded;
  std::string detail;
  ASSERT_EQ(DecodeCacheEntry(bytes, 0x1234, &decoded, &detail), CacheStatus::kHit) << detail;
  EXPECT_EQ(decoded.token, "tok");
  EXPECT_EQ(decoded.description, "sample");
  ASSERT_EQ(decoded.sections.size(), 2u);
  EXPECT_EQ(decoded.Find(CacheSectionType::kPlacement)->data, (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(decoded.Find(CacheSectionType::kPlacement)->flags, kSectionRequired);
  EXPECT_EQ(decoded.Find(CacheSectionType::kPackedWeights)->data.size(), 100u);
}

TEST(CompilationCacheFormat, StoredFileIsTheEncodingAndLoadKeepsPackedWeightsInPlace) {
  const fs::path dir = fs::temp_directory_path() / ("delegato_cache_format_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CompilationCache cache(dir.string(), "tok");
  ASSERT_EQ(cache.Store(SampleEntry()), "");
  // Store writes the sections piece by piece: the same bytes as the encoding.
  EXPECT_EQ(ReadBytes(cache.EntryPath(0x1234)), EncodeCacheEntry(SampleEntry()));
  const CacheLookup lookup = cache.Load(0x1234);
  ASSERT_EQ(lookup.status, CacheStatus::kHit) << lookup.detail;
  // The packed weights are a view of the file's bytes, not a copy in the entry.
  ASSERT_NE(lookup.file_bytes, nullptr);
  EXPECT_EQ(lookup.packed_weights.size(), 100u);
  EXPECT_GE(lookup.packed_weights.data(), lookup.file_bytes->data());
  EXPECT_LE(lookup.packed_weights.data() + 100, lookup.file_bytes->data() + lookup.file_bytes->size());
  EXPECT_EQ(lookup.packed_weights[0], 7);
  EXPECT_TRUE(lookup.entry.Find(CacheSectionType::kPackedWeights)->data.empty());
  EXPECT_EQ(lookup.entry.Find(CacheSectionType::kPlacement)->data, (std::vector<uint8_t>{1, 2, 3}));
  // Not a hit: no view.
  const CacheLookup other = cache.Load(0x9999);
  EXPECT_EQ(other.status, CacheStatus::kMiss);
  EXPECT_EQ(other.file_bytes, nullptr);
  EXPECT_TRUE(other.packed_weights.empty());
  fs::remove_all(dir);
}

TEST(CompilationCacheFormat, EveryDamageIsDetected) {
  const std::vector<uint8_t> good = EncodeCacheEntry(SampleEntry());
  CacheEntry decoded;
  std::string detail;
  // Every single flipped byte, header or payload, makes the entry unusable.
  for (size_t i = 0; i < good.size(); ++i) {
    if (i >= 44 && i < 48) continue;  // the reserved word is not checked
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x5A;
    EXPECT_NE(DecodeCacheEntry(bad, 0x1234, &decoded, &detail), CacheStatus::kHit) << "byte " << i;
  }
  // Every truncation.
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> bad(good.begin(), good.begin() + n);
    EXPECT_EQ(DecodeCacheEntry(bad, 0x1234, &decoded, &detail), CacheStatus::kCorrupt) << "size " << n;
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_EQ(DecodeCacheEntry(longer, 0x1234, &decoded, &detail), CacheStatus::kCorrupt);
  EXPECT_NE(detail.find("trailing"), std::string::npos) << detail;
  // A foreign file.
  EXPECT_EQ(DecodeCacheEntry(AsBytes("PK\x03\x04 not ours at all, but long enough to have a header..."), 0x1234,
                             &decoded, &detail),
            CacheStatus::kCorrupt);
  EXPECT_NE(detail.find("magic"), std::string::npos) << detail;
  // Another key: stale, not corrupt.
  EXPECT_EQ(DecodeCacheEntry(good, 0x9999, &decoded, &detail), CacheStatus::kStale);
}

TEST(CompilationCacheFormat, UnknownSectionsAreSkippedUnlessRequired) {
  CacheEntry entry = SampleEntry();
  entry.sections.push_back(CacheSection{999, 0, {1, 2}});
  CacheEntry decoded;
  std::string detail;
  EXPECT_EQ(DecodeCacheEntry(EncodeCacheEntry(entry), 0x1234, &decoded, &detail), CacheStatus::kHit);
  entry.sections.back().flags = kSectionRequired;
  EXPECT_EQ(DecodeCacheEntry(EncodeCacheEntry(entry), 0x1234, &decoded, &detail), CacheStatus::kStale);
  EXPECT_NE(detail.find("999"), std::string::npos) << detail;
}

TEST(CompilationCacheFormat, FileTokensAreSafeFileNames) {
  EXPECT_EQ(CacheFileToken("mobilenet_v1.0-a"), "mobilenet_v1.0-a");
  EXPECT_EQ(CacheFileToken("a67461dd *../../etc/passwd"), "a67461dd_.._.._etc_passwd");
  EXPECT_EQ(CacheFileToken(""), "model");
  EXPECT_EQ(CacheFileToken("..."), "model");
  EXPECT_EQ(CacheFileToken(std::string(200, 'x')).size(), 64u);
  EXPECT_TRUE(IsCacheFileName("tok_0123456789abcdef.bin"));
  EXPECT_TRUE(IsCacheFileName(".tok_0123456789abcdef.bin.tmp.42.0"));
  EXPECT_FALSE(IsCacheFileName("tok_0123456789ABCDEF.bin"));
  EXPECT_FALSE(IsCacheFileName("notes.txt"));
  EXPECT_FALSE(IsCacheFileName("_0123456789abcdef.bin"));
}

// ------------------------------------------------------------ target delegation through the cache

class CompilationCacheRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("delegato_cache_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    model_bytes_ = WriteModel(*tools::BuildDemoModel());
    model_ = ReadModelBuffer(model_bytes_.data(), model_bytes_.size(), "demo");
    target_ = FindTarget("nnapi-1.2", (SourceDir() / "targets").string());
    // Node 2 kept on the CPU: two delegated partitions with a CPU node between.
    options_ = TargetDelegateOptions(target_, -1, -1, {2}, -1, -1);
    expected_ = Outputs(*CpuInterpreter());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Interpreter> CpuInterpreter() {
    Status status;
    auto interpreter = Interpreter::Create(model_, {}, &status);
    EXPECT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(interpreter->AllocateTensors().ok());
    return interpreter;
  }

  std::vector<std::vector<uint8_t>> Outputs(Interpreter& interpreter) {
    tools::FillRandomInputs(interpreter, 7);
    EXPECT_TRUE(interpreter.Invoke().ok());
    std::vector<std::vector<uint8_t>> outputs;
    for (int i = 0; i < interpreter.num_outputs(); ++i) {
      const TensorView out = interpreter.output(i);
      outputs.emplace_back(static_cast<const uint8_t*>(out.data), static_cast<const uint8_t*>(out.data) + out.bytes);
    }
    return outputs;
  }

  // One `run --target` with the cache: returns the cache line; outputs must
  // equal the CPU's.
  std::string RunWithCache(const std::vector<uint8_t>& model_bytes, std::shared_ptr<const ModelDef> model,
                           const std::string& token = "demo") {
    TargetDelegationCache cache(dir_.string(), token, model_bytes, "demo", target_, "", options_);
    auto delegate = cache.MakeDelegate(*model, 1);
    Status status;
    auto interpreter = Interpreter::Create(model, {}, &status);
    EXPECT_TRUE(status.ok());
    interpreter->SetPackedWeightStore(cache.packed_weights());
    EXPECT_TRUE(interpreter->ModifyGraphWithDelegate(delegate.get()).ok());
    const std::string line = cache.Commit(*interpreter, *delegate);
    EXPECT_EQ(delegate->stats().size(), 2u) << "two delegated partitions expected";
    if (model == model_) {
      EXPECT_EQ(Outputs(*interpreter), expected_) << line;
    }
    path_ = cache.lookup().path;
    return line;
  }

  // A hit that loaded every packed weight and packed nothing.
  std::string Hit(const fs::path& path) const {
    return "cache: hit " + path.string() + " (packed weights: " + std::to_string(kPackingNodes) +
           " loaded, 0 packed)";
  }
  static constexpr int kPackingNodes = 3;  // the demo model's CONV_2D and FULLY_CONNECTED nodes

  fs::path dir_, path_;
  std::vector<uint8_t> model_bytes_;
  std::shared_ptr<const ModelDef> model_;
  Target target_;
  DelegateOptions options_;
  std::vector<std::vector<uint8_t>> expected_;
};

TEST_F(CompilationCacheRun, MissWritesThenHitReadsWithTheSameOutputs) {
  const std::string first = RunWithCache(model_bytes_, model_);
  EXPECT_EQ(first.rfind("cache: miss " + path_.string() + " (packed weights: 0 loaded, " +
                           std::to_string(kPackingNodes) + " packed; written", 0),
            0u) << first;
  ASSERT_TRUE(fs::exists(path_));
  EXPECT_EQ(path_.filename().string().rfind("demo_", 0), 0u);
  EXPECT_EQ(RunWithCache(model_bytes_, model_), Hit(path_));
  EXPECT_EQ(RunWithCache(model_bytes_, model_), Hit(path_));

  // What the entry holds: the decisions and both partitions' compile records.
  CacheEntry entry;
  std::string detail;
  ASSERT_EQ(DecodeCacheEntry(ReadBytes(path_), 0, &entry, &detail), CacheStatus::kHit) << detail;
  CachedDelegation d;
  ASSERT_TRUE(LoadDelegation(entry, static_cast<int>(model_->subgraphs[0].operators.size()), &d, &detail)) << detail;
  ASSERT_EQ(d.partitions.size(), 2u);
  EXPECT_FALSE(d.placements[2].delegated);
  ASSERT_FALSE(d.placements[2].reasons.empty());
  EXPECT_EQ(d.placements[2].reasons[0].code, ReasonCode::kUserExcluded);
  for (const CachedPartition& p : d.partitions) {
    EXPECT_TRUE(p.compiled);
    EXPECT_GT(p.device_arena_bytes, 0u);
    EXPECT_EQ(p.nodes.size(), p.ops.size());
  }
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1);
}

TEST_F(CompilationCacheRun, CorruptByteIsDetectedAndRebuilt) {
  RunWithCache(model_bytes_, model_);
  std::vector<uint8_t> bytes = ReadBytes(path_);
  bytes[bytes.size() / 2] ^= 0x01;  // one bit in the payload
  WriteBytes(path_, bytes);
  const std::string line = RunWithCache(model_bytes_, model_);
  EXPECT_EQ(line.rfind("cache: corrupt " + path_.string(), 0), 0u) << line;
  EXPECT_NE(line.find("checksum"), std::string::npos) << line;
  EXPECT_NE(line.find("rewritten"), std::string::npos) << line;
  EXPECT_EQ(RunWithCache(model_bytes_, model_), Hit(path_));

  bytes = ReadBytes(path_);
  bytes[20] ^= 0xFF;  // the fingerprint field of the header
  WriteBytes(path_, bytes);
  EXPECT_EQ(RunWithCache(model_bytes_, model_).rfind("cache: corrupt", 0), 0u);
  EXPECT_EQ(RunWithCache(model_bytes_, model_), Hit(path_));
}

TEST_F(CompilationCacheRun, TruncatedAndEmptyFilesAreCorrupt) {
  RunWithCache(model_bytes_, model_);
  const std::vector<uint8_t> bytes = ReadBytes(path_);
  for (size_t size : {size_t{0}, size_t{5}, size_t{47}, size_t{48}, bytes.size() - 1}) {
    WriteBytes(path_, std::vector<uint8_t>(bytes.begin(), bytes.begin() + size));
    const std::string line = RunWithCache(model_bytes_, model_);
    EXPECT_EQ(line.rfind("cache: corrupt " + path_.string(), 0), 0u) << size << ": " << line;
    EXPECT_EQ(RunWithCache(model_bytes_, model_), Hit(path_)) << size;
  }
}

TEST_F(CompilationCacheRun, AnotherModelsEntryIsStale) {
  // A second model: the demo with one weight byte changed.
  auto other = std::make_shared<ModelDef>(*model_);
  for (BufferDef& b : other->buffers)
    if (b.size() > 16) {
      b.mutable_bytes()[3] ^= 1;
      break;
    }
  const std::vector<uint8_t> other_bytes = WriteModel(*other);
  auto other_model = ReadModelBuffer(other_bytes.data(), other_bytes.size(), "other");
  RunWithCache(other_bytes, other_model);
  const fs::path other_path = path_;
  RunWithCache(model_bytes_, model_);
  ASSERT_NE(other_path, path_);

  fs::copy_file(other_path, path_, fs::copy_options::overwrite_existing);  // swapped files
  const std::string line = RunWithCache(model_bytes_, model_);
  EXPECT_EQ(line.rfind("cache: stale " + path_.string(), 0), 0u) << line;
  EXPECT_NE(line.find("another model"), std::string::npos) << line;
  EXPECT_EQ(RunWithCache(model_bytes_, model_), Hit(path_));

  // `cache ls` sees a swapped file for what it is.
  fs::copy_file(other_path, path_, fs::copy_options::overwrite_existing);
  const auto files = ListCacheDir(dir_.string());
  ASSERT_EQ(files.size(), 2u);
  int stale = 0;
  for (const CacheFileInfo& f : files) stale += f.status == CacheStatus::kStale ? 1 : 0;
  EXPECT_EQ(stale, 1);
}

TEST_F(CompilationCacheRun, GarbageIsCorruptAndOtherFilesAreIgnored) {
  RunWithCache(model_bytes_, model_);
  std::vector<uint8_t> garbage(5000);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 131 + 7);
  WriteBytes(path_, garbage);
  EXPECT_EQ(RunWithCache(model_bytes_, model_).rfind("cache: corrupt " + path_.string(), 0), 0u);
  // Garbage behind a valid-looking magic.
  std::memcpy(garbage.data(), "DLGCACHE", 8);
  WriteBytes(path_, garbage);
  EXPECT_EQ(RunWithCache(model_bytes_, model_).rfind("cache: corrupt " + path_.string(), 0), 0u);
  EXPECT_EQ(RunWithCache(model_bytes_, model_), Hit(path_));
  WriteBytes(dir_ / "notes.txt", {1, 2, 3});
  EXPECT_EQ(ListCacheDir(dir_.string()).size(), 1u);
}

TEST_F(CompilationCacheRun, WellFormedEntryThatDoesNotFitTheModelIsCorrupt) {
  RunWithCache(model_bytes_, model_);
  CacheEntry entry;
  std::string detail;
  ASSERT_EQ(DecodeCacheEntry(ReadBytes(path_), 0, &entry, &detail), CacheStatus::kHit);
  // Checksums are right, contents are not: the placement section lost its nodes.
  CachedDelegation d;
  ASSERT_TRUE(LoadDelegation(entry, -1, &d, &detail));
  d.support.pop_back();
  d.placements.pop_back();
  StoreDelegation(d, &entry);
  WriteBytes(path_, EncodeCacheEntry(entry));
  const std::string line = RunWithCache(model_bytes_, model_);
  EXPECT_EQ(line.rfind("cache: corrupt " + path_.string(), 0), 0u) << line;
  EXPECT_EQ(RunWithCache(model_bytes_, model_), Hit(path_));
}

TEST_F(CompilationCacheRun, KeyCoversTokenOptionsAndTarget) {
  const uint64_t base = TargetCacheFingerprint(model_bytes_, target_, "", options_, "demo");
  EXPECT_EQ(base, TargetCacheFingerprint(model_bytes_, target_, "", options_, "demo"));
  EXPECT_NE(base, TargetCacheFingerprint(model_bytes_, target_, "", options_, "other"));
  EXPECT_NE(base, TargetCacheFingerprint(model_bytes_, target_, "npu", options_, "demo"));
  DelegateOptions more = options_;
  more.skip_nodes.push_back(3);
  EXPECT_NE(base, TargetCacheFingerprint(model_bytes_, target_, "", more, "demo"));
  const Target other = FindTarget("nnapi-1.3", (SourceDir() / "targets").string());
  EXPECT_NE(base, TargetCacheFingerprint(model_bytes_, other, "", options_, "demo"));
  // nnapi-1.3 extends nnapi-1.2: the key reads both files.
  EXPECT_NE(TargetFileContents(other).find("<nnapi-1.2.json>"), std::string::npos);
  // Another token is another file; the first one stays a hit.
  RunWithCache(model_bytes_, model_, "demo");
  const fs::path first = path_;
  EXPECT_EQ(RunWithCache(model_bytes_, model_, "v2").rfind("cache: miss", 0), 0u);
  EXPECT_NE(first, path_);
  EXPECT_EQ(RunWithCache(model_bytes_, model_, "demo"), Hit(first));
}

TEST_F(CompilationCacheRun, BeforeApplyRecordsDecisionsAndAfterApplyAddsCompile) {
  TargetDelegationCache before(dir_.string(), "demo", model_bytes_, "demo", target_, "", options_);
  auto delegate = MakeTargetDelegate(target_, *model_, "", options_, 1);
  const std::string line = before.CommitBeforeApply(*model_, *delegate);
  EXPECT_EQ(line.rfind("cache: miss", 0), 0u) << line;
  CacheEntry entry;
  std::string detail;
  ASSERT_EQ(DecodeCacheEntry(ReadBytes(before.lookup().path), 0, &entry, &detail), CacheStatus::kHit);
  EXPECT_EQ(entry.Find(CacheSectionType::kDeviceCompile), nullptr);
  // A later run with an applied delegate is a hit that adds the compile record.
  const std::string after = RunWithCache(model_bytes_, model_);
  EXPECT_EQ(after, "cache: hit " + path_.string() + " (packed weights: 0 loaded, " +
                       std::to_string(kPackingNodes) + " packed; compile record added)");
  ASSERT_EQ(DecodeCacheEntry(ReadBytes(path_), 0, &entry, &detail), CacheStatus::kHit);
  EXPECT_NE(entry.Find(CacheSectionType::kDeviceCompile), nullptr);
  EXPECT_EQ(RunWithCache(model_bytes_, model_), Hit(path_));
}

TEST_F(CompilationCacheRun, EntryTruncatedOrOverwrittenAfterTheChecksIsNeverRead) {
  RunWithCache(model_bytes_, model_);
  const std::vector<uint8_t> good = ReadBytes(path_);
  for (int damage = 0; damage < 2; ++damage) {
    WriteBytes(path_, good);
    TargetDelegationCache cache(dir_.string(), "demo", model_bytes_, "demo", target_, "", options_);
    ASSERT_EQ(cache.lookup().status, CacheStatus::kHit) << cache.lookup().detail;
    // After the checks, before any kernel reads the packed weights: the file
    // shrinks to nothing (a mapping of it would fault) or is overwritten.
    if (damage == 0) fs::resize_file(path_, 0);
    else WriteBytes(path_, std::vector<uint8_t>(good.size(), 0xA5));
    auto delegate = cache.MakeDelegate(*model_, 1);
    Status status;
    auto interpreter = Interpreter::Create(model_, {}, &status);
    ASSERT_TRUE(status.ok());
    interpreter->SetPackedWeightStore(cache.packed_weights());
    ASSERT_TRUE(interpreter->ModifyGraphWithDelegate(delegate.get()).ok());
    // Every kernel took the checked bytes, read before the damage.
    EXPECT_EQ(cache.packed_weights()->counters().loaded, kPackingNodes) << damage;
    EXPECT_EQ(cache.packed_weights()->counters().rejected, 0) << damage;
    EXPECT_EQ(Outputs(*interpreter), expected_) << damage;
  }
}

TEST_F(CompilationCacheRun, CpuOnlyHitLoadsInPlaceAndClearReturnsTheStoresMemory) {
  auto run = [&]() {
    CpuCompilationCache cache(dir_.string(), "demo", model_bytes_, "demo");
    Status status;
    auto interpreter = Interpreter::Create(model_, {}, &status);
    EXPECT_TRUE(status.ok());
    interpreter->SetPackedWeightStore(cache.packed_weights());
    EXPECT_TRUE(interpreter->AllocateTensors().ok());
    const std::string line = cache.Commit();
    std::shared_ptr<PackedWeightStore> store = cache.packed_weights();
    const PackedWeightStore::Counters before = store->counters();
    EXPECT_EQ(store->num_entries(), kPackingNodes) << line;
    store->Clear();
    EXPECT_EQ(store->num_entries(), 0);
    EXPECT_EQ(store->packed_bytes(), 0u);
    EXPECT_EQ(store->counters().loaded, before.loaded);  // counters survive Clear
    EXPECT_EQ(store->counters().packed, before.packed);
    EXPECT_EQ(Outputs(*interpreter), expected_) << line;
    // A later Prepare finds nothing stored and packs again, with the same outputs.
    EXPECT_TRUE(interpreter->AllocateTensors().ok());
    EXPECT_EQ(store->counters().packed, before.packed + kPackingNodes);
    EXPECT_EQ(Outputs(*interpreter), expected_) << line;
    return line;
  };
  const std::string miss = run();
  EXPECT_EQ(miss.rfind("cache: miss", 0), 0u) << miss;
  const std::string hit = run();
  EXPECT_EQ(hit.rfind("cache: hit", 0), 0u) << hit;
  EXPECT_NE(hit.find(std::to_string(kPackingNodes) + " loaded, 0 packed"), std::string::npos) << hit;
}

TEST_F(CompilationCacheRun, UnwritableDirectoryDoesNotFailTheRun) {
  WriteBytes(dir_.string() + ".file", {1});
  TargetDelegationCache cache(dir_.string() + ".file/sub", "demo", model_bytes_, "demo", target_, "", options_);
  auto delegate = cache.MakeDelegate(*model_, 1);
  Status status;
  auto interpreter = Interpreter::Create(model_, {}, &status);
  ASSERT_TRUE(interpreter->ModifyGraphWithDelegate(delegate.get()).ok());
  const std::string line = cache.Commit(*interpreter, *delegate);
  EXPECT_NE(line.find("not written"), std::string::npos) << line;
  EXPECT_EQ(Outputs(*interpreter), expected_);
  fs::remove(dir_.string() + ".file");
}

}  // namespace
}  // namespace delegato
