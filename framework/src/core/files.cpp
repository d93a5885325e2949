#include "phaze/core/files.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "phaze/core/error.hpp"

namespace phaze {

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': no such file or not readable");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteTextFileAtomic(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw Error("cannot write '" + path + "': it is a directory");
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) {
    throw Error("cannot write '" + path + "': cannot create directory '" +
                target.parent_path().string() + "': " + ec.message());
  }
  fs::path tmp = target;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write '" + path + "': cannot open '" + tmp.string() + "'");
    out << text;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw Error("cannot write '" + path + "': write failed (disk full?)");
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = ec.message();  // before remove() reuses ec
    fs::remove(tmp, ec);
    throw Error("cannot write '" + path + "': rename failed: " + why);
  }
}

}  // namespace phaze
