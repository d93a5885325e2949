#include "phaze/ilp/model_writer.hpp"

#include <fstream>
#include <sstream>

#include "phaze/core/error.hpp"
#include "phaze/core/json.hpp"

namespace phaze {

namespace {

std::string Clean(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (c == ' ' || c == '\t' || c == ':' || c == '*' || c == '\\') c = '_';
  }
  return out;
}

std::string N(double v) { return FormatDouble(v); }

}  // namespace

std::string ToMps(const IlpModel& model) {
  std::ostringstream os;
  // CBC ignores OBJSENSE in free MPS and the readers disagree on the sign of an objective RHS, so
  // a maximisation is written as the minimisation of the negated objective, and the offset as a
  // fixed column `_offset`.
  const bool max = model.Sense() == ObjectiveSense::kMaximize;
  const double sign = max ? -1.0 : 1.0;
  const bool offset = model.ObjectiveOffset() != 0;
  os << "NAME " << Clean(model.Name()) << "\n";
  if (max) os << "* maximisation: the objective below is negated (optimum = -(reported value))\n";
  os << "ROWS\n N obj\n";
  const int m = model.NumRows();
  std::vector<char> type(m);
  for (int r = 0; r < m; ++r) {
    auto row = model.Row(r);
    bool lo = row.lower > -kInfinity, hi = row.upper < kInfinity;
    type[r] = (lo && hi) ? (row.lower == row.upper ? 'E' : 'G') : lo ? 'G' : hi ? 'L' : 'N';
    // A free row is written as L with a huge RHS rather than as a second objective.
    os << " " << (type[r] == 'N' ? 'L' : type[r]) << " " << Clean(row.name) << "\n";
  }
  // Column-major coefficients.
  const int n = model.NumVariables();
  std::vector<std::vector<std::pair<int, double>>> by_col(n);
  for (int r = 0; r < m; ++r) {
    auto row = model.Row(r);
    for (size_t k = 0; k < row.columns.size(); ++k) {
      by_col[row.columns[k]].emplace_back(r, row.coefficients[k]);
    }
  }
  os << "COLUMNS\n";
  bool in_int = false;
  int marker = 0;
  for (int j = 0; j < n; ++j) {
    const auto& v = model.Variable(j);
    if (v.IsIntegral() != in_int) {
      os << "    M" << marker++ << " 'MARKER' " << (v.IsIntegral() ? "'INTORG'" : "'INTEND'")
         << "\n";
      in_int = v.IsIntegral();
    }
    std::string name = Clean(v.name);
    // Every column appears at least once (on the objective row), so readers know it exists.
    os << "    " << name << " obj " << N(sign * v.objective) << "\n";
    for (auto [r, a] : by_col[j]) os << "    " << name << " " << Clean(model.Row(r).name) << " " << N(a) << "\n";
  }
  if (in_int) os << "    M" << marker << " 'MARKER' 'INTEND'\n";
  if (offset) os << "    _offset obj " << N(sign) << "\n";
  os << "RHS\n";
  for (int r = 0; r < m; ++r) {
    auto row = model.Row(r);
    double rhs = type[r] == 'L' ? row.upper : type[r] == 'N' ? 1e30 : row.lower;
    if (rhs != 0) os << "    RHS " << Clean(row.name) << " " << N(rhs) << "\n";
  }
  bool any_range = false;
  for (int r = 0; r < m; ++r) {
    auto row = model.Row(r);
    if (type[r] == 'G' && row.upper < kInfinity) {
      if (!any_range) os << "RANGES\n";
      any_range = true;
      os << "    RNG " << Clean(row.name) << " " << N(row.upper - row.lower) << "\n";
    }
  }
  os << "BOUNDS\n";
  for (int j = 0; j < n; ++j) {
    const auto& v = model.Variable(j);
    std::string name = Clean(v.name);
    if (v.lower == v.upper) {
      os << " FX BND " << name << " " << N(v.lower) << "\n";
      continue;
    }
    if (v.lower == -kInfinity && v.upper == kInfinity) {
      os << " FR BND " << name << "\n";
      continue;
    }
    if (v.lower == -kInfinity) {
      os << " MI BND " << name << "\n";
    } else {
      os << " LO BND " << name << " " << N(v.lower) << "\n";
    }
    if (v.upper == kInfinity) {
      os << " PL BND " << name << "\n";
    } else {
      os << " UP BND " << name << " " << N(v.upper) << "\n";
    }
  }
  if (offset) os << " FX BND _offset " << N(model.ObjectiveOffset()) << "\n";
  os << "ENDATA\n";
  return os.str();
}

std::string ToLp(const IlpModel& model) {
  std::ostringstream os;
  os << "\\ Phaze ILP '" << model.Name() << "': " << model.NumVariables() << " variables, "
     << model.NumRows() << " rows\n";
  os << (model.Sense() == ObjectiveSense::kMaximize ? "Maximize\n" : "Minimize\n") << " obj:";
  auto term = [&](double a, const std::string& name) {
    os << (a < 0 ? " - " : " + ") << N(a < 0 ? -a : a) << " " << name;
  };
  bool any = false;
  for (const auto& v : model.Variables()) {
    if (v.objective != 0) {
      term(v.objective, Clean(v.name));
      any = true;
    }
  }
  bool offset = model.ObjectiveOffset() != 0;
  if (offset) term(1.0, "_offset");
  if (!any && !offset && model.NumVariables() > 0) term(0.0, Clean(model.Variable(0).name));
  os << "\nSubject To\n";
  for (int r = 0; r < model.NumRows(); ++r) {
    auto row = model.Row(r);
    auto lhs = [&](const std::string& name) {
      os << " " << name << ":";
      if (row.columns.empty() && model.NumVariables() > 0) {
        term(0.0, Clean(model.Variable(0).name));
      }
      for (size_t k = 0; k < row.columns.size(); ++k) {
        term(row.coefficients[k], Clean(model.Variable(row.columns[k]).name));
      }
    };
    std::string name = Clean(row.name);
    if (row.lower == row.upper) {
      lhs(name);
      os << " = " << N(row.lower) << "\n";
      continue;
    }
    bool lo = row.lower > -kInfinity, hi = row.upper < kInfinity;
    if (lo) {
      lhs(hi ? name + "_lo" : name);
      os << " >= " << N(row.lower) << "\n";
    }
    if (hi) {
      lhs(lo ? name + "_hi" : name);
      os << " <= " << N(row.upper) << "\n";
    }
  }
  os << "Bounds\n";
  for (const auto& v : model.Variables()) {
    std::string name = Clean(v.name);
    if (v.lower == v.upper) {
      os << " " << name << " = " << N(v.lower) << "\n";
    } else if (v.lower == -kInfinity && v.upper == kInfinity) {
      os << " " << name << " free\n";
    } else {
      os << " " << (v.lower == -kInfinity ? "-inf" : N(v.lower)) << " <= " << name << " <= "
         << (v.upper == kInfinity ? "+inf" : N(v.upper)) << "\n";
    }
  }
  if (offset) os << " _offset = " << N(model.ObjectiveOffset()) << "\n";
  bool header = false;
  for (const auto& v : model.Variables()) {
    if (!v.IsIntegral()) continue;
    if (!header) os << "General\n";
    header = true;
    os << " " << Clean(v.name) << "\n";
  }
  os << "End\n";
  return os.str();
}

void WriteModel(const IlpModel& model, const std::string& path) {
  std::string text;
  if (path.size() >= 4 && path.substr(path.size() - 4) == ".mps") {
    text = ToMps(model);
  } else if (path.size() >= 3 && path.substr(path.size() - 3) == ".lp") {
    text = ToLp(model);
  } else {
    throw Error("cannot write ILP model to '" + path + "': the name must end in .mps or .lp");
  }
  std::ofstream out(path);
  if (!out) throw Error("cannot write ILP model to '" + path + "': cannot open the file");
  out << text;
  if (!out) throw Error("cannot write ILP model to '" + path + "': write failed");
}

}  // namespace phaze
