#include "memory/arena_planner.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"

namespace delegato {

int ArenaPlanner::AddBuffer(size_t bytes, int first_use, int last_use) {
  DLG_CHECK(first_use <= last_use, "arena planner: buffer used at ", last_use,
            " before it is defined at ", first_use);
  buffers_.push_back(Buffer{bytes, first_use, last_use});
  return static_cast<int>(buffers_.size()) - 1;
}

void ArenaPlanner::Plan() {
  std::vector<int> order(buffers_.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by earlier definition, so plans are deterministic.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (buffers_[a].bytes != buffers_[b].bytes) return buffers_[a].bytes > buffers_[b].bytes;
    return buffers_[a].first_use < buffers_[b].first_use;
  });

  // Sizes come from untrusted models: sums are checked, never wrapped.
  auto add = [](size_t a, size_t b) {
    size_t sum = 0;
    DLG_CHECK(!__builtin_add_overflow(a, b, &sum), "arena planner: offsets overflow (", a, " + ",
              b, " bytes)");
    return sum;
  };
  auto align_up = [&](size_t x) { return add(x, alignment_ - 1) / alignment_ * alignment_; };
  std::vector<int> placed;  // kept sorted by offset
  arena_bytes_ = 0;
  for (int id : order) {
    Buffer& buffer = buffers_[id];
    size_t candidate = 0;
    for (int other_id : placed) {
      const Buffer& other = buffers_[other_id];
      const bool live_together =
          other.first_use <= buffer.last_use && buffer.first_use <= other.last_use;
      if (!live_together) continue;
      if (other.offset >= add(candidate, buffer.bytes) && buffer.bytes > 0) continue;  // fits before
      candidate = std::max(candidate, align_up(add(other.offset, other.bytes)));
    }
    buffer.offset = candidate;
    arena_bytes_ = std::max(arena_bytes_, align_up(add(candidate, buffer.bytes)));
    placed.insert(std::upper_bound(placed.begin(), placed.end(), id,
                                   [&](int a, int b) { return buffers_[a].offset < buffers_[b].offset; }),
                  id);
  }
}

}  // namespace delegato
