#include "runtime/thread_pool.h"

#include <algorithm>

namespace delegato {

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  workers_.reserve(num_threads_ - 1);
  for (int w = 1; w < num_threads_; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

namespace {
// Chunk w of n split into `parts` contiguous ranges.
inline void ChunkRange(int64_t n, int parts, int w, int64_t* begin, int64_t* end) {
  *begin = n * w / parts;
  *end = n * (w + 1) / parts;
}
}  // namespace

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (num_threads_ == 1 || n == 1) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &fn;
    task_n_ = n;
    pending_ = num_threads_ - 1;
    ++generation_;
  }
  work_ready_.notify_all();
  int64_t begin, end;
  ChunkRange(n, num_threads_, 0, &begin, &end);
  if (begin < end) fn(begin, end);
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [this] { return pending_ == 0; });
  task_ = nullptr;
}

void ThreadPool::WorkerLoop(int worker) {
  uint64_t seen_generation = 0;
  for (;;) {
    const std::function<void(int64_t, int64_t)>* task;
    int64_t n;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen_generation; });
      if (stopping_) return;
      seen_generation = generation_;
      task = task_;
      n = task_n_;
    }
    int64_t begin, end;
    ChunkRange(n, num_threads_, worker, &begin, &end);
    if (begin < end) (*task)(begin, end);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) work_done_.notify_one();
    }
  }
}

}  // namespace delegato
