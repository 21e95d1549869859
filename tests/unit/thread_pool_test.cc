// The thread pool's hand-off: every index covered exactly once, chunks
// contiguous, results visible to the caller, across many back-to-back calls
// (workers spinning, chunks after the first claimed by whichever thread
// comes first, the first always the caller's) and
// calls after idle gaps (workers asleep), for 1 to 4 threads; and destruction
// with workers in either state. (Also clean under -fsanitize=thread.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "runtime/thread_pool.h"

namespace delegato {
namespace {

void CheckCoverage(ThreadPool& pool, int64_t n, std::vector<int>& hits) {
  hits.assign(static_cast<size_t>(n), 0);
  std::atomic<int> calls{0};
  pool.ParallelFor(n, [&](int64_t begin, int64_t end) {
    ASSERT_LE(0, begin);
    ASSERT_LT(begin, end);
    ASSERT_LE(end, n);
    for (int64_t i = begin; i < end; ++i) ++hits[i];  // plain writes, disjoint ranges
    calls.fetch_add(1);
  });
  // Plain writes made by the workers are visible once ParallelFor returns.
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "index " << i << " of " << n;
  EXPECT_LE(calls.load(), pool.num_threads());
}

TEST(ThreadPoolTest, BackToBackCallsCoverEveryIndexOnce) {
  std::vector<int> hits;
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int round = 0; round < 3000; ++round) CheckCoverage(pool, 1 + round % 37, hits);
  }
}

TEST(ThreadPoolTest, CallsAfterIdleGapsWakeSleepingWorkers) {
  std::vector<int> hits;
  ThreadPool pool(2);
  for (int round = 0; round < 12; ++round) {
    // Longer than the workers' spin, so they are asleep at the next call.
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 3 == 0 ? 5 : 0));
    CheckCoverage(pool, 1000 + round, hits);
  }
}

TEST(ThreadPoolTest, UnevenChunksWaitForTheSlowestThread) {
  ThreadPool pool(2);
  std::vector<int> out(2, 0);
  for (int round = 0; round < 20; ++round) {
    out.assign(2, 0);
    pool.ParallelFor(2, [&](int64_t begin, int64_t) {
      // Chunk 1 outlasts the other thread's spin, whichever thread claimed it.
      if (begin == 1) std::this_thread::sleep_for(std::chrono::milliseconds(round % 2 ? 2 : 0));
      out[begin] = static_cast<int>(begin) + 10;
    });
    EXPECT_EQ(out, (std::vector<int>{10, 11}));
  }
}

TEST(ThreadPoolTest, FirstChunkAlwaysRunsOnTheCaller) {
  // Consecutive ops split the same way keep their first part on one core.
  const auto caller = std::this_thread::get_id();
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    for (int round = 0; round < 500; ++round) {
      std::atomic<bool> first_on_caller{false};
      std::atomic<int> first_calls{0};
      pool.ParallelFor(64, [&](int64_t begin, int64_t) {
        if (begin == 0) {
          first_calls.fetch_add(1);
          first_on_caller.store(std::this_thread::get_id() == caller);
        }
      });
      ASSERT_EQ(first_calls.load(), 1);
      ASSERT_TRUE(first_on_caller.load()) << threads << " threads, round " << round;
    }
  }
}

TEST(ThreadPoolTest, EmptyAndSingleRangesRunInline) {
  ThreadPool pool(2);
  int calls = 0;
  pool.ParallelFor(0, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  const auto caller = std::this_thread::get_id();
  pool.ParallelFor(1, [&](int64_t begin, int64_t end) {
    ++calls;
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 1);
    EXPECT_EQ(std::this_thread::get_id(), caller);
  });
  EXPECT_EQ(calls, 1);
}

TEST(ThreadPoolTest, DestroysWithWorkersSpinningOrAsleep) {
  for (int wait_ms : {0, 5}) {
    ThreadPool pool(3);
    std::vector<int> hits;
    CheckCoverage(pool, 100, hits);
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }  // joins without hanging
}

}  // namespace
}  // namespace delegato
