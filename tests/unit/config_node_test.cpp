// The config layer's located errors: FILE:LINE:COL: key.path: expected …, found ….
#include "phaze/core/config_node.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "phaze/core/error.hpp"
#include "phaze/core/json.hpp"
#include "test_util.hpp"

namespace phaze {
namespace {

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no ConfigError>";
}

TEST(ConfigNode, TypedReadsAndPaths) {
  auto root = ConfigNode::ParseString("a:\n  b: 3\n  c: [1.5, 2]\n  d: true\n  e: 1e9\n", "t.yaml");
  EXPECT_EQ(root.Child("a").Child("b").AsInt(), 3);
  EXPECT_EQ(root.Child("a").Child("b").Path(), "a.b");
  auto c = root.Child("a").Child("c").Elements();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_DOUBLE_EQ(c[0].AsDouble(), 1.5);
  EXPECT_EQ(c[1].Path(), "a.c[1]");
  EXPECT_TRUE(root.Child("a").Child("d").AsBool());
  EXPECT_EQ(root.Child("a").Child("e").AsInt(), 1000000000);  // exact integral doubles accepted
  EXPECT_FALSE(root.Optional("zzz").has_value());
}

TEST(ConfigNode, WrongTypeNamesFileLineColumnKeyAndBothSides) {
  auto root = ConfigNode::ParseString("cluster:\n  num_accelerators: many\n", "run.yaml");
  EXPECT_EQ(ErrorOf([&] { root.Child("cluster").Child("num_accelerators").AsInt(); }),
            "run.yaml:2:21: cluster.num_accelerators: expected an integer, found 'many'");
  EXPECT_EQ(ErrorOf([&] { root.Child("cluster").AsInt(); }),
            "run.yaml:2:3: cluster: expected a single value, found a map");
}

TEST(ConfigNode, MissingKeyIsReportedAtItsParent) {
  auto root = ConfigNode::ParseString("solver:\n  threads: 2\n", "run.yaml");
  EXPECT_EQ(ErrorOf([&] { root.Child("solver").Child("backend"); }),
            "run.yaml:2:3: solver: missing required key 'backend'");
}

TEST(ConfigNode, UnknownKeyHasDidYouMeanAndAllowedList) {
  auto root = ConfigNode::ParseString("solver:\n  backend: cbc\n  time_limt_s: 5\n", "run.yaml");
  std::string msg = ErrorOf([&] { root.Child("solver").ExpectKeys({"backend", "time_limit_s"}); });
  EXPECT_EQ(msg,
            "run.yaml:3:3: solver.time_limt_s: unknown key 'time_limt_s'; did you mean "
            "'time_limit_s'? (allowed keys: backend, time_limit_s)");
}

TEST(ConfigNode, DuplicateKeysAreRejected) {
  auto root = ConfigNode::ParseString("a: 1\nb: 2\na: 3\n", "dup.yaml");
  EXPECT_EQ(ErrorOf([&] { root.ExpectKeys({"a", "b"}); }), "dup.yaml:3:1: a: duplicate key 'a'");
}

TEST(ConfigNode, BadValuesExplainTheRange) {
  auto root = ConfigNode::ParseString("n: 0\nx: -1.5\nmode: fastest\nflag: maybe\n", "v.yaml");
  EXPECT_EQ(ErrorOf([&] { root.Child("n").AsPositiveInt(); }),
            "v.yaml:1:4: n: expected a positive integer (>= 1), found 0");
  EXPECT_EQ(ErrorOf([&] { root.Child("x").AsNonNegativeDouble(); }),
            "v.yaml:2:4: x: expected a non-negative number (>= 0), found -1.5");
  EXPECT_EQ(ErrorOf([&] { root.Child("mode").AsChoice({"hysteresis", "exhaustive"}); }),
            "v.yaml:3:7: mode: expected one of hysteresis, exhaustive; found 'fastest'");
  EXPECT_EQ(ErrorOf([&] { root.Child("flag").AsBool(); }),
            "v.yaml:4:7: flag: expected true or false, found 'maybe'");
}

TEST(ConfigNode, SyntaxErrorsAndMissingFilesAreLocated) {
  std::string msg = ErrorOf([] { ConfigNode::ParseString("a: [1, 2\nb: 3\n", "broken.yaml"); });
  EXPECT_EQ(msg.rfind("broken.yaml:", 0), 0u) << msg;
  EXPECT_NE(msg.find("syntax error"), std::string::npos) << msg;
  EXPECT_EQ(ErrorOf([] { ConfigNode::ParseFile("/nonexistent/run.yaml"); }),
            "/nonexistent/run.yaml: cannot read the file: no such file");
  // A directory or a FIFO is refused before it is opened (reading a FIFO would block).
  const testing::TempDir tmp;
  const std::string dir = tmp.path().string();
  EXPECT_EQ(ErrorOf([&] { ConfigNode::ParseFile(dir); }),
            dir + ": cannot read the file: it is a directory");
  const std::string fifo = (tmp / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ErrorOf([&] { ConfigNode::ParseFile(fifo); }),
            fifo + ": cannot read the file: it is not a regular file (a FIFO); give a file");
}

TEST(ConfigNode, AliasExpansionAndNestingAreBounded) {
  // A "billion laughs": 10 levels of ten aliases each expand to 10^10 nodes; refused after at
  // most limits::kDocumentNodes steps, at the node where the count ran over.
  std::string laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) laughs += (k ? ", " : "") + prev;
    laughs += "]\n";
  }
  const std::string msg = ErrorOf([&] { ConfigNode::ParseString(laughs, "laughs.yaml"); });
  EXPECT_EQ(msg.rfind("laughs.yaml:", 0), 0u) << msg;
  EXPECT_NE(msg.find("expands to more than 4194304 nodes"), std::string::npos) << msg;
  // A few aliases of a small map are fine: 1 + 2 + 4·(1 + 2·(1 + 2)) nodes.
  EXPECT_NO_THROW(ConfigNode::ParseString("a: &m {k: [1, 2]}\nb: [*m, *m, *m]\n", "ok.yaml"));
  // Nesting: 256 levels below the root are accepted, 257 are not.
  auto nested = [](int depth) {
    return "x: " + std::string(static_cast<size_t>(depth), '[') +
           std::string(static_cast<size_t>(depth), ']') + "\n";
  };
  EXPECT_NO_THROW(ConfigNode::ParseString(nested(256), "deep.yaml"));
  EXPECT_NE(ErrorOf([&] { ConfigNode::ParseString(nested(257), "deep.yaml"); })
                .find("deep.yaml:1:260: maps and sequences nest deeper than 256 levels"),
            std::string::npos);
}

TEST(ConfigNode, ParsesJsonToo) {
  auto root = ConfigNode::ParseString("{\"widths\": {\"1\": {\"k\": 2.5}}}", "t.json");
  EXPECT_DOUBLE_EQ(root.Child("widths").Child("1").Child("k").AsDouble(), 2.5);
  EXPECT_EQ(root.ToJson().Dump(-1), R"({"widths":{"1":{"k":2.5}}})");
}

TEST(ConfigNode, DidYouMeanOnlyForCloseWords) {
  EXPECT_EQ(DidYouMean("lpslove", {"cbc", "lpsolve"}).value_or(""), "lpsolve");
  EXPECT_FALSE(DidYouMean("gurobi", {"cbc", "lpsolve"}).has_value());
}

}  // namespace
}  // namespace phaze
