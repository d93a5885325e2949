// An SVG drawing that sizes its own canvas: every element extends the bounding box of what is
// drawn (text by a generous estimate of its width), and Finish() makes the canvas that box plus a
// margin, so no label is ever cut off however long a model or architecture name is. Used by every
// plot phaze writes (search plots, schedule Gantt charts); tests render each one to PNG and check
// that nothing is drawn outside the canvas (tests/plots/).
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phaze {

struct TextStyle {
  TextStyle(double size_ = 11, std::string anchor_ = "start", std::string fill_ = "",
            bool vertical_ = false, bool bold_ = false)
      : size(size_),
        anchor(std::move(anchor_)),
        fill(std::move(fill_)),
        vertical(vertical_),
        bold(bold_) {}
  double size;         // px
  std::string anchor;  // start | middle | end
  std::string fill;    // "" = black
  bool vertical;       // rotated -90° about (x, y), reading upwards
  bool bold;
  bool halo = false;  // a white outline under the glyphs, for labels over data
};

class SvgCanvas {
 public:
  // Width of `text` at `size` px in the sans-serif font, over-estimated: 0.64 em per character
  // (DejaVu Sans, what Debian renders "sans-serif" with: digits 0.636 em, lower case 0.5–0.63,
  // capitals up to 0.8 — a long run of capitals can exceed it, so plots keep a margin).
  static double TextWidth(std::string_view text, double size);

  void Text(double x, double y, std::string_view text, const TextStyle& style = {});
  // `attributes` are extra raw attributes ("stroke=\"white\"").
  void Rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view attributes = "");
  void Circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip = "");
  void Line(double x1, double y1, double x2, double y2, std::string_view stroke,
            std::string_view attributes = "");
  // A group whose elements share a tooltip (<title>).
  void BeginGroup(std::string_view tooltip);
  void EndGroup();

  // A legend: one row per entry, a swatch of its colour then its label, from (x, y) downwards.
  // Returns the y below the last row.
  double Legend(double x, double y, const std::vector<std::pair<std::string, std::string>>& entries,
                double size = 11);

  // The document: canvas = drawn bounds + margin, white background.
  std::string Finish(double margin = 10) const;

  // Bounds of what is drawn so far.
  double Left() const { return min_x_; }
  double Right() const { return max_x_; }
  double Top() const { return min_y_; }
  double Bottom() const { return max_y_; }

 private:
  void Extend(double x0, double y0, double x1, double y1);
  std::ostringstream body_;
  double min_x_ = 1e300, min_y_ = 1e300, max_x_ = -1e300, max_y_ = -1e300;
};

// Axis ticks at steps of 1, 2 or 5 × 10^k, about `intervals` of them, from the last step at or
// below lo to the first at or above hi (so the axis spans whole steps).
std::vector<double> NiceTicks(double lo, double hi, int intervals = 5);

// A tick value in few characters: "0", "0.25", "250", "1.5k", "20M".
std::string TickLabel(double v);

// "a long name" → lines of at most `width` px at `size` px, broken at spaces, '_', '-', '/', ','.
std::vector<std::string> WrapText(std::string_view text, double width, double size);

}  // namespace phaze
