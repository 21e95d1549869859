// A fixed pool of worker threads for data-parallel loops inside Eval.
// ParallelFor splits [0, n) into contiguous chunks, one per thread, and blocks
// until all are done. Kernels that use it must write disjoint outputs per
// index, so results do not depend on the thread count.
//
// Hand-off: a model issues one ParallelFor per op, tens to hundreds per
// inference, microseconds apart, and a condition-variable wake-up per op
// (tens of microseconds on a VM) costs more than a second thread gains. So
// workers spin on the pool's state for a bounded time after each loop before
// they block, and chunks are claimed, not assigned (except the first, always
// the caller's, which keeps each op's first part on one core): the caller
// takes every chunk no worker has started, so a worker that is not running
// (a loaded machine) never holds the loop up.
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
  void WorkerLoop();
  // Claims and runs chunks of the loop `state` names while any are left.
  void RunChunks(uint64_t state);
  // Runs chunk `chunk` of the current loop's `chunks` and counts it done.
  void RunChunk(int chunks, int chunk);

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  // The loop: written by the caller before it publishes a new state_
  // (release), read by a thread only after it claimed a chunk of that loop,
  // which keeps the loop (and these fields) alive until the chunk is done.
  const std::function<void(int64_t, int64_t)>* task_ = nullptr;
  int64_t task_n_ = 0;
  // generation (bits 63-32) | chunk count (31-16) | next unclaimed chunk (15-0).
  std::atomic<uint64_t> state_{0};
  std::atomic<int> chunks_done_{0};
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace delegato
