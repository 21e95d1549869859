#include "memory/arena_planner.h"

#include <gtest/gtest.h>

#include <random>

namespace delegato {
namespace {

bool Overlap(size_t a_off, size_t a_len, size_t b_off, size_t b_len) {
  return a_len > 0 && b_len > 0 && a_off < b_off + b_len && b_off < a_off + a_len;
}

TEST(ArenaPlannerTest, DisjointLifetimesShareMemory) {
  // A chain a -> b -> c: a and c are never live together, so they share.
  ArenaPlanner planner;
  int a = planner.AddBuffer(1000, 0, 1);
  int b = planner.AddBuffer(1000, 1, 2);
  int c = planner.AddBuffer(1000, 2, 3);
  planner.Plan();
  EXPECT_EQ(planner.offset(a), planner.offset(c));
  EXPECT_NE(planner.offset(a), planner.offset(b));
  EXPECT_EQ(planner.arena_bytes(), 2048u);  // two 64-byte aligned slots of 1000
}

TEST(ArenaPlannerTest, OffsetsAreAligned) {
  ArenaPlanner planner(64);
  for (int i = 0; i < 5; ++i) planner.AddBuffer(3 + i, 0, 5);
  planner.Plan();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(planner.offset(i) % 64, 0u);
}

TEST(ArenaPlannerTest, RejectsInvertedLifetime) {
  ArenaPlanner planner;
  EXPECT_ANY_THROW(planner.AddBuffer(8, 3, 2));
}

TEST(ArenaPlannerTest, RandomPlansNeverOverlapLiveBuffers) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    ArenaPlanner planner(16);
    struct B { size_t bytes; int first, last; };
    std::vector<B> bs;
    for (int i = 0; i < 40; ++i) {
      int first = rng() % 30;
      int last = first + rng() % 10;
      size_t bytes = rng() % 5000;
      bs.push_back({bytes, first, last});
      planner.AddBuffer(bytes, first, last);
    }
    planner.Plan();
    size_t total = 0;
    for (size_t i = 0; i < bs.size(); ++i) {
      total += bs[i].bytes;
      EXPECT_LE(planner.offset(i) + bs[i].bytes, planner.arena_bytes());
      for (size_t j = i + 1; j < bs.size(); ++j) {
        bool live = bs[i].first <= bs[j].last && bs[j].first <= bs[i].last;
        if (live)
          EXPECT_FALSE(Overlap(planner.offset(i), bs[i].bytes, planner.offset(j), bs[j].bytes))
              << "round " << round << " buffers " << i << " and " << j;
      }
    }
    EXPECT_LE(planner.arena_bytes(), total + 16 * bs.size());
  }
}

}  // namespace
}  // namespace delegato
