#include "phaze/core/parallel.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace phaze {
namespace {

// Every index exactly once, whatever the thread count (more threads than items included).
TEST(ForEachIndex, EveryIndexOnce) {
  for (int threads : {0, 1, 2, 3, 8}) {
    for (std::size_t count : {0u, 1u, 2u, 7u, 100u}) {
      std::vector<std::atomic<int>> seen(count);
      ForEachIndex(count, threads, [&](std::size_t i) { seen[i].fetch_add(1); });
      for (std::size_t i = 0; i < count; ++i) {
        EXPECT_EQ(seen[i].load(), 1) << i << " of " << count << " on " << threads;
      }
    }
  }
}

// Work runs beside the caller: two items that each wait for the other finish only when two
// threads hold them at once.
TEST(ForEachIndex, ItemsRunTogether) {
  std::atomic<int> arrived{0};
  ForEachIndex(2, 2, [&](std::size_t) {
    arrived.fetch_add(1);
    while (arrived.load() < 2) std::this_thread::yield();
  });
  EXPECT_EQ(arrived.load(), 2);
}

// A stop hands out nothing more; an exception reaches the caller, after which no index starts.
TEST(ForEachIndex, StopsAndRethrows) {
  std::atomic<bool> stop{false};
  std::atomic<int> ran{0};
  ForEachIndex(
      50, 1,
      [&](std::size_t i) {
        ran.fetch_add(1);
        if (i == 4) stop = true;
      },
      &stop);
  EXPECT_EQ(ran.load(), 5);  // one thread: indices 0..4 in order

  ran = 0;
  try {
    ForEachIndex(50, 1, [&](std::size_t i) {
      ran.fetch_add(1);
      if (i == 2) throw std::runtime_error("item 2 failed");
    });
    ADD_FAILURE() << "the item's exception was lost";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "item 2 failed");
  }
  EXPECT_EQ(ran.load(), 3);
}

}  // namespace
}  // namespace phaze
