// PackedWeightStore (include/delegato/packed_weights.h): the optimized
// kernels' packed weights kept between interpreters and runs. A store is
// only ever a shortcut: whatever it holds (valid, damaged, another node's or
// another model's entries), outputs stay those of an interpreter without one.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delegato/interpreter.h"
#include "delegato/packed_weights.h"
#include "test_util.h"
#include "tools/tool_util.h"

namespace delegato {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kKind = 1;  // optimized::PackedKind::kQuantConv

std::vector<uint8_t> Bytes(std::span<const uint8_t> s) { return {s.begin(), s.end()}; }

TEST(PackedWeightStoreTest, SerializedEntriesRoundTrip) {
  PackedWeightStore store;
  store.Record(3, kKind, {1, 2, 3});
  store.Record(7, kKind, {});
  store.Record(3, 2, {9});
  EXPECT_EQ(store.num_entries(), 3);
  EXPECT_EQ(store.packed_bytes(), 4u);
  EXPECT_EQ(store.counters().packed, 3);
  EXPECT_TRUE(store.modified());

  PackedWeightStore copy;
  std::string error;
  ASSERT_TRUE(copy.Deserialize(store.Serialize(), &error)) << error;
  EXPECT_FALSE(copy.modified());
  EXPECT_EQ(copy.counters().packed, 0);
  EXPECT_EQ(Bytes(copy.Find(3, kKind).bytes), (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(Bytes(copy.Find(3, 2).bytes), (std::vector<uint8_t>{9}));
  EXPECT_TRUE(copy.Find(7, kKind).bytes.empty());
  EXPECT_TRUE(copy.Find(4, kKind).bytes.empty());
  EXPECT_EQ(copy.Serialize(), store.Serialize());
}

TEST(PackedWeightStoreTest, MalformedBytesLeaveTheStoreEmpty) {
  PackedWeightStore store;
  store.Record(0, kKind, {1, 2, 3, 4});
  store.Record(1, kKind, {5});
  const std::vector<uint8_t> good = store.Serialize();

  std::vector<uint8_t> bad_magic = good;
  bad_magic[0] ^= 1;
  std::vector<uint8_t> truncated(good.begin(), good.end() - 1);
  std::vector<uint8_t> trailing = good;
  trailing.push_back(0);
  std::vector<uint8_t> huge_size = good;
  huge_size[16 + 8 + 7] = 0x7f;  // first entry's size: far past the end
  std::vector<uint8_t> negative_node = good;
  negative_node[16 + 3] = 0xff;
  const std::pair<std::vector<uint8_t>, std::string> cases[] = {
      {{}, "not a packed weight store"},
      {bad_magic, "not a packed weight store"},
      {truncated, "runs past the end"},
      {trailing, "trailing bytes"},
      {huge_size, "runs past the end"},
      {negative_node, "has node"},
  };
  for (const auto& [bytes, expected] : cases) {
    PackedWeightStore target;
    target.Record(9, kKind, {1});
    std::string error;
    EXPECT_FALSE(target.Deserialize(bytes, &error)) << expected;
    EXPECT_THAT(error, HasSubstr(expected));
    EXPECT_EQ(target.num_entries(), 0) << expected;
  }
}

TEST(PackedWeightStoreTest, ViewMapsDeviceNodesToModelNodes) {
  auto store = std::make_shared<PackedWeightStore>();
  store->Record(10, kKind, {42});
  auto view = store->View({4, 10, 12});
  EXPECT_EQ(Bytes(view->Find(1, kKind).bytes), std::vector<uint8_t>{42});
  EXPECT_TRUE(view->Find(0, kKind).bytes.empty());
  EXPECT_TRUE(view->Find(3, kKind).bytes.empty());  // outside the view: no entry, no crash
  view->Record(2, kKind, {7});
  view->Record(5, kKind, {8});                       // outside the view: ignored
  EXPECT_EQ(Bytes(store->Find(12, kKind).bytes), std::vector<uint8_t>{7});
  EXPECT_EQ(store->num_entries(), 2);
  view->CountLoaded();
  EXPECT_EQ(store->counters().loaded, 1);  // counters are shared
}

// ------------------------------------------------------------ through the interpreter

struct RunResult {
  std::vector<std::vector<uint8_t>> outputs;
  PackedWeightStore::Counters counters;
};

RunResult RunWithStore(std::shared_ptr<const ModelDef> model, std::shared_ptr<PackedWeightStore> store,
                       int num_threads = 1) {
  RunResult result;
  Status status;
  InterpreterOptions options;
  options.num_threads = num_threads;
  auto interpreter = Interpreter::Create(model, options, &status);
  EXPECT_TRUE(status.ok()) << status.message();
  if (!status.ok()) return result;
  if (store) interpreter->SetPackedWeightStore(store);
  status = interpreter->AllocateTensors();
  EXPECT_TRUE(status.ok()) << status.message();
  if (!status.ok()) return result;
  tools::FillRandomInputs(*interpreter, 11);
  status = interpreter->Invoke();
  EXPECT_TRUE(status.ok()) << status.message();
  for (int i = 0; i < interpreter->num_outputs(); ++i) {
    const TensorView out = interpreter->output(i);
    const auto* p = static_cast<const uint8_t*>(out.data);
    result.outputs.emplace_back(p, p + out.bytes);
  }
  if (store) result.counters = store->counters();
  return result;
}

std::shared_ptr<PackedWeightStore> Reloaded(const PackedWeightStore& store) {
  auto copy = std::make_shared<PackedWeightStore>();
  std::string error;
  EXPECT_TRUE(copy->Deserialize(store.Serialize(), &error)) << error;
  return copy;
}

// Packs once, then: reuse (all loaded), damaged payloads, entries moved to
// other nodes (stale), and a store packed with another thread count.
void ExpectStoreIsOnlyAShortcut(std::shared_ptr<const ModelDef> model) {
  const RunResult plain = RunWithStore(model, nullptr);
  auto first = std::make_shared<PackedWeightStore>();
  const RunResult cold = RunWithStore(model, first);
  const int packed = cold.counters.packed;
  ASSERT_GT(packed, 0) << "the model has no kernel that packs weights";
  EXPECT_EQ(cold.counters.loaded, 0);
  EXPECT_EQ(cold.outputs, plain.outputs);

  auto warm_store = Reloaded(*first);
  const RunResult warm = RunWithStore(model, warm_store);
  EXPECT_EQ(warm.counters.loaded, packed);
  EXPECT_EQ(warm.counters.packed, 0);
  EXPECT_EQ(warm.counters.rejected, 0);
  EXPECT_FALSE(warm_store->modified());
  EXPECT_EQ(warm.outputs, plain.outputs);

  const RunResult two_threads = RunWithStore(model, Reloaded(*first), 2);
  EXPECT_EQ(two_threads.counters.loaded, packed);
  EXPECT_EQ(two_threads.outputs, RunWithStore(model, nullptr, 2).outputs);

  // Damaged: one byte of every entry's packed arrays flipped (the entry's
  // own hash catches it). Stale: each entry stored under the next node.
  PackedWeightStore damaged, moved;
  std::vector<int> nodes;
  for (int node = 0; node < 10000 && static_cast<int>(nodes.size()) < packed; ++node)
    if (!first->Find(node, kKind).bytes.empty()) nodes.push_back(node);
  ASSERT_EQ(static_cast<int>(nodes.size()), packed);
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<uint8_t> bytes = Bytes(first->Find(nodes[i], kKind).bytes);
    moved.Record(nodes[(i + 1) % nodes.size()], kKind, bytes);
    bytes[bytes.size() - 1] ^= 0x5a;
    damaged.Record(nodes[i], kKind, bytes);
  }
  for (PackedWeightStore* bad : {&damaged, &moved}) {
    auto store = Reloaded(*bad);
    const RunResult result = RunWithStore(model, store);
    EXPECT_EQ(result.counters.loaded, bad == &moved && packed == 1 ? 1 : 0);
    if (bad == &damaged) EXPECT_EQ(result.counters.rejected, packed);
    EXPECT_EQ(result.outputs, plain.outputs);
    EXPECT_TRUE(store->modified() || packed == 1);  // repacked entries replace the bad ones
  }
}

TEST(PackedWeightStoreTest, DemoModelReusesDamagedAndStaleStoresSafely) {
  ExpectStoreIsOnlyAShortcut(tools::BuildDemoModel());
}

TEST(PackedWeightStoreTest, SharedMobilenetReusesDamagedAndStaleStoresSafely) {
  REQUIRE_SHARED_MODEL(path, "mobilenet_v1_0.25_128_quant.tflite");
  std::shared_ptr<const ModelDef> model;
  const Status status = LoadModel(path, &model);
  ASSERT_TRUE(status.ok()) << status.message();
  ExpectStoreIsOnlyAShortcut(model);
}

TEST(PackedWeightStoreTest, ReferenceKernelsIgnoreTheStore) {
  auto store = std::make_shared<PackedWeightStore>();
  Status status;
  InterpreterOptions options;
  options.kernels = KernelSet::kReference;
  auto interpreter = Interpreter::Create(tools::BuildDemoModel(), options, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  interpreter->SetPackedWeightStore(store);
  ASSERT_TRUE(interpreter->AllocateTensors().ok());
  EXPECT_EQ(store->num_entries(), 0);
}

}  // namespace
}  // namespace delegato
