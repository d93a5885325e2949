// ParetoFront against the definition checked pair by pair on random configs (with ties).
#include "phaze/search/pareto_front.hpp"

#include <gtest/gtest.h>

#include <random>

namespace phaze {
namespace {

TEST(ParetoFront, ByHand) {
  // Areas 3, 1, 2, 2, 4; throughputs 5, 1, 4, 3, 5: config 3 loses to 2 at the same area,
  // config 4 to 0 with more area; 1, 2, 0 remain, by increasing area.
  EXPECT_EQ(ParetoFront({3, 1, 2, 2, 4}, {5, 1, 4, 3, 5}), (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_TRUE(ParetoFront({1, 2}, {0, 0}).empty());  // nothing feasible
}

TEST(ParetoFront, MatchesTheDefinitionOnRandomConfigs) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 12);
    std::vector<double> area(n), thr(n);
    for (int i = 0; i < n; ++i) {
      area[i] = static_cast<double>(rng() % 5);  // few values: many ties
      thr[i] = static_cast<double>(rng() % 4);
    }
    std::vector<std::size_t> expected;
    for (int i = 0; i < n; ++i) {
      bool dominated = thr[i] <= 0;
      for (int j = 0; j < n && !dominated; ++j) {
        if (j == i) continue;
        const bool better =
            area[j] <= area[i] && thr[j] >= thr[i] && (area[j] < area[i] || thr[j] > thr[i]);
        const bool same_earlier = area[j] == area[i] && thr[j] == thr[i] && j < i;
        dominated = better || same_earlier;
      }
      if (!dominated) expected.push_back(i);
    }
    std::vector<std::size_t> got = ParetoFront(area, thr);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, expected) << "trial " << trial;
  }
}

}  // namespace
}  // namespace phaze
