#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace delegato {

namespace {

// How long a thread spins for the next loop (a worker) or for the last
// chunk (the caller) before it blocks: longer than the gap between two ops'
// loops and between two invocations of a model (a worker asleep at the first
// op of an inference left it to the caller: float32 MobileNet V2's first
// convolution ran alone at 2 threads with a 40 µs spin), short enough that
// an idle interpreter's workers go to sleep almost at once. Measured by the
// clock: PAUSE takes 10 ns on some x86 cores and 140 on others.
constexpr auto kSpinTime = std::chrono::microseconds(200);

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until done() or kSpinTime has passed (the clock read every 64
// rounds); returns done().
template <class Done>
bool SpinUntil(const Done& done) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() - start > kSpinTime) return done();
  }
}

inline uint32_t Generation(uint64_t state) { return static_cast<uint32_t>(state >> 32); }
inline int ChunkCount(uint64_t state) { return static_cast<int>((state >> 16) & 0xFFFF); }
inline int NextChunk(uint64_t state) { return static_cast<int>(state & 0xFFFF); }

// Chunk w of n split into `parts` contiguous ranges.
inline void ChunkRange(int64_t n, int parts, int w, int64_t* begin, int64_t* end) {
  *begin = n * w / parts;
  *end = n * (w + 1) / parts;
}

}  // namespace

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(std::clamp(num_threads, 1, 0xFFFF)) {
  workers_.reserve(num_threads_ - 1);
  for (int w = 1; w < num_threads_; ++w) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true);
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunChunks(uint64_t state) {
  const uint32_t generation = Generation(state);
  for (;;) {
    if (Generation(state) != generation || NextChunk(state) >= ChunkCount(state)) return;
    // Claim the next chunk of this loop; on failure `state` is reloaded
    // (another thread claimed it, or the loop is over and a new one began).
    if (!state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      continue;
    }
    RunChunk(ChunkCount(state), NextChunk(state));
    state = state_.load(std::memory_order_acquire);
  }
}

void ThreadPool::RunChunk(int chunks, int chunk) {
  int64_t begin, end;
  ChunkRange(task_n_, chunks, chunk, &begin, &end);
  if (begin < end) (*task_)(begin, end);
  if (chunks_done_.fetch_add(1) + 1 == chunks && caller_sleeping_.load()) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    work_done_.notify_one();
  }
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (num_threads_ == 1 || n == 1) {
    fn(0, n);
    return;
  }
  const int chunks = static_cast<int>(std::min<int64_t>(n, num_threads_));
  task_ = &fn;
  task_n_ = n;
  chunks_done_.store(0);
  // Chunk 0 is the caller's (not claimable), so consecutive loops keep the
  // first part of their range on the calling thread: an op that consumes the
  // previous op's output in the same split finds its part in this core's
  // cache (workers claim the others; with two threads the worker's is
  // always chunk 1).
  const uint64_t state = ((uint64_t{Generation(state_.load())} + 1) << 32) |
                         (static_cast<uint64_t>(chunks) << 16) | 1u;
  // Sequentially consistent with the workers' sleeping_workers_ increment:
  // either this sees a sleeper and wakes it, or the sleeper sees the new
  // generation before it waits.
  state_.store(state);
  if (sleeping_workers_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    work_ready_.notify_all();
  }

  RunChunk(chunks, 0);
  RunChunks(state);  // every chunk no worker has claimed yet

  if (SpinUntil([&] { return chunks_done_.load(std::memory_order_acquire) == chunks; })) return;
  std::unique_lock<std::mutex> lock(mutex_);
  caller_sleeping_.store(true);
  work_done_.wait(lock, [this, chunks] { return chunks_done_.load() == chunks; });
  caller_sleeping_.store(false);
}

void ThreadPool::WorkerLoop() {
  uint32_t seen_generation = 0;
  for (;;) {
    uint64_t state = state_.load(std::memory_order_acquire);
    SpinUntil([&] {
      state = state_.load(std::memory_order_acquire);
      return Generation(state) != seen_generation || stopping_.load(std::memory_order_relaxed);
    });
    if (Generation(state) == seen_generation) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleeping_workers_.fetch_add(1);
      work_ready_.wait(lock, [&] {
        return stopping_.load() || Generation(state_.load()) != seen_generation;
      });
      sleeping_workers_.fetch_sub(1);
      state = state_.load();
    }
    if (stopping_.load()) return;
    seen_generation = Generation(state);
    RunChunks(state);
  }
}

}  // namespace delegato
