#include "phaze/core/progress.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace phaze {
namespace {

TEST(Progress, FormatsDoneTotalElapsedAndEta) {
  // 25 of 100 in 10 s → 75 remaining at 2.5/s → ETA 30 s.
  EXPECT_EQ(StderrProgress::FormatLine("configs", 25, 100, 10.0, "best 12.5 samples/s"),
            "configs 25/100 (25%) elapsed 10s ETA 30s  best 12.5 samples/s");
  EXPECT_EQ(StderrProgress::FormatLine("ilp", 3, 0, 61.0, ""), "ilp 3 elapsed 1m01s");
  EXPECT_EQ(StderrProgress::FormatDuration(7325), "2h02m");
}

TEST(Progress, ThrottlesAndEndsWithNewline) {
  double now = 0;
  std::ostringstream out;
  StderrProgress p(out, 1.0, [&] { return now; });
  p.Begin("work", 4);
  now = 0.5;
  p.Update(1);  // throttled: < 1 s since the last draw
  now = 2.0;
  p.Update(2);
  p.End();
  std::string s = out.str();
  EXPECT_EQ(s.find("work 1/4"), std::string::npos);
  EXPECT_NE(s.find("work 2/4 (50%) elapsed 2s ETA 2s"), std::string::npos);
  EXPECT_EQ(s.back(), '\n');
}

}  // namespace
}  // namespace phaze
