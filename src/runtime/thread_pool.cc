#include "runtime/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace delegato {

namespace {

// About 50-100 microseconds of PAUSE on current x86 cores: longer than the
// gap between two ops' ParallelFor calls, short enough that an idle
// interpreter's workers go to sleep almost at once.
constexpr int kSpinIterations = 1 << 12;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Chunk w of n split into `parts` contiguous ranges.
inline void ChunkRange(int64_t n, int parts, int w, int64_t* begin, int64_t* end) {
  *begin = n * w / parts;
  *end = n * (w + 1) / parts;
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  workers_.reserve(num_threads_ - 1);
  for (int w = 1; w < num_threads_; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true);
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (num_threads_ == 1 || n == 1) {
    fn(0, n);
    return;
  }
  task_ = &fn;
  task_n_ = n;
  pending_.store(num_threads_ - 1);
  // Sequentially consistent with the workers' sleeping_workers_ increment:
  // either this sees a sleeper and wakes it, or the sleeper sees the new
  // generation before it waits.
  generation_.fetch_add(1);
  if (sleeping_workers_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    work_ready_.notify_all();
  }

  int64_t begin, end;
  ChunkRange(n, num_threads_, 0, &begin, &end);
  if (begin < end) fn(begin, end);

  for (int spin = 0; spin < kSpinIterations; ++spin) {
    if (pending_.load(std::memory_order_acquire) == 0) return;
    CpuRelax();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  caller_sleeping_.store(true);
  work_done_.wait(lock, [this] { return pending_.load() == 0; });
  caller_sleeping_.store(false);
}

void ThreadPool::WorkerLoop(int worker) {
  uint64_t seen_generation = 0;
  for (;;) {
    uint64_t generation = generation_.load(std::memory_order_acquire);
    for (int spin = 0; generation == seen_generation && spin < kSpinIterations; ++spin) {
      CpuRelax();
      generation = generation_.load(std::memory_order_acquire);
    }
    if (generation == seen_generation) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleeping_workers_.fetch_add(1);
      work_ready_.wait(lock, [&] {
        return stopping_.load() || generation_.load() != seen_generation;
      });
      sleeping_workers_.fetch_sub(1);
      generation = generation_.load();
    }
    if (stopping_.load()) return;
    seen_generation = generation;

    int64_t begin, end;
    ChunkRange(task_n_, num_threads_, worker, &begin, &end);
    if (begin < end) (*task_)(begin, end);

    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      { std::lock_guard<std::mutex> lock(mutex_); }
      work_done_.notify_one();
    }
  }
}

}  // namespace delegato
