#include "phaze/core/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fmt/printf.h>

#include "phaze/core/xml.hpp"

namespace phaze {

namespace {

constexpr double kEmPerChar = 0.64;
constexpr double kAscent = 0.8, kDescent = 0.25;  // of the font size, about the baseline

std::string Num(double v) {
  std::string text = fmt::sprintf("%.2f", v);
  std::string s = text;
  while (s.back() == '0') s.pop_back();  // "12.50" → "12.5", "3.00" → "3."
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

}  // namespace

double SvgCanvas::TextWidth(std::string_view text, double size) {
  std::size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;  // UTF-8 code points
  return static_cast<double>(chars) * kEmPerChar * size;
}

void SvgCanvas::Extend(double x0, double y0, double x1, double y1) {
  min_x_ = std::min({min_x_, x0, x1});
  max_x_ = std::max({max_x_, x0, x1});
  min_y_ = std::min({min_y_, y0, y1});
  max_y_ = std::max({max_y_, y0, y1});
}

void SvgCanvas::Text(double x, double y, std::string_view text, const TextStyle& style) {
  const double w = TextWidth(text, style.size);
  const double before = style.anchor == "middle" ? w / 2 : style.anchor == "end" ? w : 0;
  if (style.vertical) {
    // Reading upwards: the text runs from y + before to y + before − w.
    Extend(x - kAscent * style.size, y + before - w, x + kDescent * style.size, y + before);
  } else {
    Extend(x - before, y - kAscent * style.size, x - before + w, y + kDescent * style.size);
  }
  body_ << "<text x=\"" << Num(x) << "\" y=\"" << Num(y) << "\"";
  if (style.size != 11) body_ << " font-size=\"" << Num(style.size) << "\"";
  if (style.anchor != "start") body_ << " text-anchor=\"" << style.anchor << "\"";
  if (!style.fill.empty()) body_ << " fill=\"" << style.fill << "\"";
  if (style.bold) body_ << " font-weight=\"bold\"";
  if (style.halo) {
    body_
        << " stroke=\"white\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\"";
  }
  if (style.vertical) body_ << " transform=\"rotate(-90 " << Num(x) << " " << Num(y) << ")\"";
  body_ << ">" << XmlEscape(text) << "</text>\n";
}

void SvgCanvas::Rect(double x, double y, double w, double h, std::string_view fill,
                     std::string_view attributes) {
  Extend(x, y, x + w, y + h);
  body_ << "<rect x=\"" << Num(x) << "\" y=\"" << Num(y) << "\" width=\"" << Num(w)
        << "\" height=\"" << Num(h) << "\" fill=\"" << fill << "\"";
  if (!attributes.empty()) body_ << " " << attributes;
  body_ << "/>\n";
}

void SvgCanvas::Circle(double cx, double cy, double r, std::string_view fill,
                       std::string_view tooltip) {
  Extend(cx - r, cy - r, cx + r, cy + r);
  body_ << "<circle cx=\"" << Num(cx) << "\" cy=\"" << Num(cy) << "\" r=\"" << Num(r)
        << "\" fill=\"" << fill << "\"";
  if (tooltip.empty()) {
    body_ << "/>\n";
  } else {
    body_ << "><title>" << XmlEscape(tooltip) << "</title></circle>\n";
  }
}

void SvgCanvas::Line(double x1, double y1, double x2, double y2, std::string_view stroke,
                     std::string_view attributes) {
  Extend(x1 - 1, y1 - 1, x2 + 1, y2 + 1);
  body_ << "<line x1=\"" << Num(x1) << "\" y1=\"" << Num(y1) << "\" x2=\"" << Num(x2) << "\" y2=\""
        << Num(y2) << "\" stroke=\"" << stroke << "\"";
  if (!attributes.empty()) body_ << " " << attributes;
  body_ << "/>\n";
}

void SvgCanvas::BeginGroup(std::string_view tooltip) {
  body_ << "<g><title>" << XmlEscape(tooltip) << "</title>";
}

void SvgCanvas::EndGroup() { body_ << "</g>\n"; }

double SvgCanvas::Legend(double x, double y,
                         const std::vector<std::pair<std::string, std::string>>& entries,
                         double size) {
  const double row = size * 1.6;
  for (const auto& [colour, label] : entries) {
    Rect(x, y - size * 0.85, size, size, colour);
    Text(x + size * 1.5, y, label, {size});
    y += row;
  }
  return y;
}

std::string SvgCanvas::Finish(double margin) const {
  const bool empty = min_x_ > max_x_;
  const double x0 = empty ? 0 : min_x_ - margin, y0 = empty ? 0 : min_y_ - margin;
  const double w = empty ? 2 * margin : max_x_ - min_x_ + 2 * margin;
  const double h = empty ? 2 * margin : max_y_ - min_y_ + 2 * margin;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Num(w) << "\" height=\"" << Num(h)
      << "\" viewBox=\"" << Num(x0) << " " << Num(y0) << " " << Num(w) << " " << Num(h)
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect x=\"" << Num(x0) << "\" y=\"" << Num(y0) << "\" width=\"" << Num(w)
      << "\" height=\"" << Num(h) << "\" fill=\"white\"/>\n"
      << body_.str() << "</svg>\n";
  return svg.str();
}

std::vector<double> NiceTicks(double lo, double hi, int intervals) {
  if (!(hi > lo)) hi = lo + (lo != 0 ? std::abs(lo) : 1);
  const double raw = (hi - lo) / std::max(1, intervals);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (double t = first; ticks.empty() || ticks.back() < hi - 1e-9 * step; t += step) {
    ticks.push_back(std::abs(t) < 1e-12 * step ? 0.0 : t);
    if (ticks.size() > 1000) break;  // a degenerate range
  }
  return ticks;
}

std::string TickLabel(double v) {
  const double a = std::abs(v);
  const char* suffix = "";
  double scaled = v;
  if (a >= 1e12)
    scaled = v / 1e12, suffix = "T";
  else if (a >= 1e9)
    scaled = v / 1e9, suffix = "G";
  else if (a >= 1e6)
    scaled = v / 1e6, suffix = "M";
  else if (a >= 1e4)
    scaled = v / 1e3, suffix = "k";
  std::string text = fmt::sprintf("%.4g%s", scaled, suffix);
  return text;
}

std::vector<std::string> WrapText(std::string_view text, double width, double size) {
  std::vector<std::string> lines;
  std::string line, word;
  auto flush_word = [&] {
    if (word.empty()) return;
    if (!line.empty() && SvgCanvas::TextWidth(line + word, size) > width) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      lines.push_back(line);
      line.clear();
    }
    line += word;
    word.clear();
  };
  for (char c : text) {
    word += c;
    if (c == ' ' || c == '_' || c == '-' || c == '/' || c == ',') flush_word();
  }
  flush_word();
  if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace phaze
