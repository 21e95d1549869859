// A fixed pool of worker threads for data-parallel loops inside Eval.
// ParallelFor splits [0, n) into contiguous chunks, one per thread, and blocks
// until all are done. Kernels that use it must write disjoint outputs per
// index, so results do not depend on the thread count.
//
// Hand-off is by spinning first, then sleeping: a model issues one
// ParallelFor per op, tens to hundreds per inference, microseconds apart, and
// a condition-variable wake-up (tens of microseconds on a VM) per op costs
// more than the second thread gains. Workers spin on the generation counter
// for a bounded time after each task, then block; the caller spins on the
// pending count the same way.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace delegato {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);  // num_threads >= 1; the caller is one of them
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // fn(begin, end) over contiguous ranges covering [0, n). Runs inline when
  // n is small or the pool has one thread. Does not allocate. Not reentrant:
  // one ParallelFor at a time per pool.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void WorkerLoop(int worker);

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  // Written by the caller before generation_ is bumped (release), read by
  // workers after they see the new generation (acquire).
  const std::function<void(int64_t, int64_t)>* task_ = nullptr;
  int64_t task_n_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace delegato
