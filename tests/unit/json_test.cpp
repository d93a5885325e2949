#include "phaze/core/json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace phaze {
namespace {

TEST(Json, DumpsInInsertionOrderWithEscapes) {
  Json j;
  j["b"] = 1;
  j["a"] = "x\"y\n";
  j["c"] = Json::MakeArray();
  j["c"].Push(true);
  j["c"].Push(nullptr);
  j["b"] = 2;  // replaced in place, order kept
  EXPECT_EQ(j.Dump(-1), R"({"b":2,"a":"x\"y\n","c":[true,null]})");
  EXPECT_EQ(j.Dump(2), "{\n  \"b\": 2,\n  \"a\": \"x\\\"y\\n\",\n  \"c\": [\n    true,\n    null\n  ]\n}");
}

TEST(Json, DoublesRoundTripShortestAndNonFiniteIsNull) {
  EXPECT_EQ(Json(0.1).Dump(), "0.1");
  EXPECT_EQ(Json(275.25e12).Dump(), "2.7525e+14");
  EXPECT_EQ(Json(4096.0).Dump(), "4096");
  EXPECT_EQ(Json(1e-7).Dump(), "1e-07");
  EXPECT_EQ(Json(1.0 / 0.0).Dump(), "null");
  EXPECT_EQ(std::stod(Json(2.0 / 3.0).Dump()), 2.0 / 3.0);
}

TEST(Json, FindOnObjects) {
  Json j;
  j["k"] = 3.5;
  ASSERT_NE(j.Find("k"), nullptr);
  EXPECT_DOUBLE_EQ(j.Find("k")->AsDouble(), 3.5);
  EXPECT_EQ(j.Find("missing"), nullptr);
  EXPECT_EQ(Json(1).Find("k"), nullptr);
}

// Issue 44: outputs are checked for non-finite numbers before they are written; the path names
// the first one.
TEST(Json, FirstNonFiniteNamesThePath) {
  Json j = Json::MakeObject();
  j["result"]["time_per_batch_s"] = 1.5;
  Json stages = Json::MakeArray();
  Json ok = Json::MakeObject();
  ok["load_s"] = 2.0;
  Json bad = Json::MakeObject();
  bad["load_s"] = std::numeric_limits<double>::infinity();
  stages.Push(ok);
  stages.Push(bad);
  j["result"]["stages"] = stages;
  EXPECT_EQ(j.FirstNonFinite(), "result.stages[1].load_s");
  EXPECT_EQ(j["result"].FirstNonFinite("r"), "r.stages[1].load_s");
  j["result"]["stages"] = Json::MakeArray();
  j["result"]["mfu"] = std::nan("");
  EXPECT_EQ(j.FirstNonFinite(), "result.mfu");
  j["result"]["mfu"] = 0.5;
  EXPECT_EQ(j.FirstNonFinite(), "");
  EXPECT_EQ(Json(std::string("inf")).FirstNonFinite(), "");  // a string is not a number
}

}  // namespace
}  // namespace phaze
