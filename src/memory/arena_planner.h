// Lifetime-based arena planning (TFLite's greedy-by-size strategy).
// Buffers are described by size and the [first_use, last_use] interval of
// execution steps in which they are live; the planner returns offsets in one
// arena such that buffers with overlapping lifetimes never overlap in memory.
// Knows nothing of tensors or kernels, so it is testable on its own.
#pragma once

#include <cstddef>
#include <vector>

namespace delegato {

class ArenaPlanner {
 public:
  explicit ArenaPlanner(size_t alignment = 64) : alignment_(alignment) {}

  // Returns the buffer's id. first_use <= last_use.
  int AddBuffer(size_t bytes, int first_use, int last_use);
  // Assigns offsets: largest buffers first, each at the lowest aligned offset
  // that does not collide with an already placed, simultaneously live buffer.
  void Plan();

  size_t offset(int id) const { return buffers_[id].offset; }
  size_t arena_bytes() const { return arena_bytes_; }
  int num_buffers() const { return static_cast<int>(buffers_.size()); }

 private:
  struct Buffer {
    size_t bytes;
    int first_use;
    int last_use;
    size_t offset = 0;
  };
  size_t alignment_;
  std::vector<Buffer> buffers_;
  size_t arena_bytes_ = 0;
};

}  // namespace delegato
