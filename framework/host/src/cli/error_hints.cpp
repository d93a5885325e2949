// What phaze adds to two kinds of error a new user meets first: a file of one kind given where
// another is read (a recipe as --model, a system as --arch), and a malformed number.
#include <algorithm>
#include <array>
#include <boost/program_options/value_semantic.hpp>
#include <filesystem>
#include <regex>
#include <set>
#include <string_view>

#include "commands.hpp"
#include "phaze/core/config_node.hpp"

namespace phaze::cli {
namespace {

// The kinds of phaze input file, each with the top-level keys only it has (the first kind some
// key matches wins) and where it goes.
struct FileKind {
  std::string_view name;
  std::vector<std::string_view> keys;
  std::string_view where;
};

const std::array<FileKind, 6>& FileKinds() {
  static const std::array<FileKind, 6> kinds{{
      {"a system description (share/systems/)",
       {"levels"},
       "give it with --system, or as a run config's cluster: system"},
      {"a run config (share/runs/)",
       {"models", "cluster", "search", "solver", "output"},
       "give it with --config"},
      {"a training recipe (share/recipes/)",
       {"training"},
       "give it with --recipe, or as a run config's training: recipe"},
      {"an architecture space (share/arch/*-space.yaml)",
       {"area_budget", "min_area_fraction", "device"},
       "name it in a run config's arch: space"},
      {"a device (share/arch/)",
       {"num_tc", "num_vc", "hbm_gib", "hbm_bytes", "tdp_w"},
       "give it with --arch, or as a run config's arch: presets"},
      {"a model (workloads/)",
       {"layers", "hidden", "heads", "num_hidden_layers", "hidden_size", "model_type"},
       "give it with --model, or in a run config's models"},
  }};
  return kinds;
}

// The kind whose keys `keys` holds, or none.
const FileKind* KindOf(const std::set<std::string>& keys) {
  for (const FileKind& kind : FileKinds()) {
    if (std::any_of(kind.keys.begin(), kind.keys.end(),
                    [&](std::string_view k) { return keys.count(std::string(k)) > 0; })) {
      return &kind;
    }
  }
  return nullptr;
}

std::set<std::string> Split(const std::string& list) {
  std::set<std::string> out;
  std::size_t at = 0;
  while (at < list.size()) {
    std::size_t end = list.find(", ", at);
    if (end == std::string::npos) end = list.size();
    out.insert(list.substr(at, end - at));
    at = end + 2;
  }
  return out;
}

}  // namespace

std::string OtherFileKindHint(const std::string& message) {
  // "FILE:LINE:COLUMN: KEY: unknown key 'KEY'[; did you mean …] (allowed keys: A, B, …)", a key
  // at the top of the file (ConfigNode::ExpectKeys).
  static const std::regex kUnknownTopKey(
      R"(([^\s:][^:]*):[0-9]+:[0-9]+: [A-Za-z0-9_]+: unknown key '[^']*'(?:; did you mean '[^']*'\?)? \(allowed keys: ([^)]*)\))");
  std::smatch m;
  if (!std::regex_search(message, m, kUnknownTopKey)) return "";
  const std::string file = m[1].str();
  const FileKind* expected = KindOf(Split(m[2].str()));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return "";
  std::set<std::string> keys;
  try {
    const ConfigNode root = ConfigNode::ParseFile(file);
    if (!root.IsMap()) return "";
    for (const auto& [key, value] : root.Entries()) keys.insert(key);
  } catch (const Error&) {
    return "";
  }
  const FileKind* found = KindOf(keys);
  if (!found || found == expected) return "";
  return file + " looks like " + std::string(found->name) + ": " + std::string(found->where);
}

std::string InvalidValueMessage(const boost::program_options::invalid_option_value& e,
                                const boost::program_options::options_description& options) {
  namespace po = boost::program_options;
  const std::string name = e.get_option_name();  // "--accelerators"
  const po::option_description* option =
      options.find_nothrow(name.rfind("--", 0) == 0 ? name.substr(2) : name, false);
  if (!option) return e.what();
  const po::value_semantic* v = option->semantic().get();
  const char* expected = dynamic_cast<const po::typed_value<int>*>(v) ||
                                 dynamic_cast<const po::typed_value<std::int64_t>*>(v)
                             ? "an integer"
                         : dynamic_cast<const po::typed_value<double>*>(v) ? "a number"
                                                                           : nullptr;
  // Boost's text: "the argument ('VALUE') for option '--NAME' is invalid".
  static const std::regex kValue(R"(\('(.*)'\) for option)");
  std::smatch m;
  const std::string what = e.what();
  if (!expected || !std::regex_search(what, m, kValue)) return what;
  return name + ": expected " + expected + ", found '" + m[1].str() + "'";
}

}  // namespace phaze::cli
