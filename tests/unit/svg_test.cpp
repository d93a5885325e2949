// SvgCanvas against hand-computed geometry: the canvas is the drawn bounds plus the margin, text
// is bounded by its estimated width on the side its anchor says, ticks are 1-2-5 steps.
#include "phaze/core/svg.hpp"

#include <gtest/gtest.h>

namespace phaze {
namespace {

TEST(Svg, CanvasIsTheDrawnBoundsPlusTheMargin) {
  SvgCanvas svg;
  svg.Rect(10, 20, 100, 50, "red");
  svg.Text(200, 100, "abcd", {10, "end"});  // 4 × 0.64 × 10 = 25.6 px, ending at x = 200
  EXPECT_DOUBLE_EQ(SvgCanvas::TextWidth("abcd", 10), 25.6);
  EXPECT_DOUBLE_EQ(SvgCanvas::TextWidth("µs²", 10), 3 * 6.4);  // code points, not bytes
  EXPECT_DOUBLE_EQ(svg.Left(), 10);
  EXPECT_DOUBLE_EQ(svg.Top(), 20);
  EXPECT_DOUBLE_EQ(svg.Right(), 200);
  EXPECT_DOUBLE_EQ(svg.Bottom(), 102.5);  // baseline + 0.25 em
  const std::string doc = svg.Finish(5);
  EXPECT_NE(doc.find("width=\"200\" height=\"92.5\" viewBox=\"5 15 200 92.5\""), std::string::npos)
      << doc;
  // A text anchored at its middle and one reading upwards.
  SvgCanvas v;
  v.Text(100, 50, "abcd", {10, "middle", "", true});
  EXPECT_DOUBLE_EQ(v.Top(), 50 - 12.8);
  EXPECT_DOUBLE_EQ(v.Bottom(), 50 + 12.8);
  EXPECT_DOUBLE_EQ(v.Left(), 92);
  EXPECT_NE(v.Finish().find("transform=\"rotate(-90 100 50)\""), std::string::npos);
}

TEST(Svg, TextIsEscaped) {
  SvgCanvas svg;
  svg.Text(0, 0, "a<b & \"c\"");
  svg.Circle(0, 0, 1, "red", "x > y");
  const std::string doc = svg.Finish();
  EXPECT_NE(doc.find(">a&lt;b &amp; &quot;c&quot;</text>"), std::string::npos) << doc;
  EXPECT_NE(doc.find("<title>x &gt; y</title>"), std::string::npos);
}

TEST(Svg, NiceTicksAreWholeStepsCoveringTheRange) {
  const auto unit = NiceTicks(0, 1);
  ASSERT_EQ(unit.size(), 6u);
  for (int k = 0; k <= 5; ++k) EXPECT_NEAR(unit[k], 0.2 * k, 1e-12);
  EXPECT_EQ(NiceTicks(201.2, 278.8), (std::vector<double>{200, 220, 240, 260, 280}));
  EXPECT_EQ(NiceTicks(0, 4.2e5, 4), (std::vector<double>{0, 2e5, 4e5, 6e5}));
  EXPECT_EQ(NiceTicks(3, 3), (std::vector<double>{3, 4, 5, 6}));  // a degenerate range: [3, 6]
  EXPECT_EQ(TickLabel(0), "0");
  EXPECT_EQ(TickLabel(250), "250");
  EXPECT_EQ(TickLabel(1.5e4), "15k");
  EXPECT_EQ(TickLabel(2e7), "20M");
  EXPECT_EQ(TickLabel(0.25), "0.25");
}

TEST(Svg, WrapBreaksLongNamesAtSeparators) {
  const auto lines = WrapText("tc8x128x64-vc2x128-glb128MiB block backward", 100, 10);
  ASSERT_GE(lines.size(), 2u);
  std::string joined;
  for (const auto& l : lines) {
    EXPECT_LE(SvgCanvas::TextWidth(l, 10), 100.0 + 6.4 * 20) << l;  // a single word may overrun
    joined += l + (l.back() == '-' ? "" : " ");
  }
  EXPECT_EQ(joined.substr(0, joined.size() - 1), "tc8x128x64-vc2x128-glb128MiB block backward");
}

}  // namespace
}  // namespace phaze
