#include "phaze/core/files.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "phaze/core/error.hpp"
#include "phaze/core/limits.hpp"

namespace phaze {

std::string ReadInputFile(const std::string& path) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& why) -> void {
    throw ConfigError(path + ": cannot read the file: " + why);
  };
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) fail("no such file");
  if (ec) fail(ec.message());
  if (fs::is_directory(st)) fail("it is a directory");
  if (!fs::is_regular_file(st)) {
    fail(std::string("it is not a regular file (") +
         (fs::is_fifo(st) ? "a FIFO" : fs::is_socket(st) ? "a socket" : "a device") +
         "); give a file");
  }
  const auto size = fs::file_size(path, ec);
  if (ec) fail(ec.message());
  if (size > static_cast<std::uintmax_t>(limits::kInputFileBytes)) {
    fail("it has " + std::to_string(size) + " bytes, more than phaze's limit of " +
         std::to_string(limits::kInputFileBytes) + " (share/config/README.md, Limits)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("permission denied or unreadable");
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) fail("read error");
  return text;
}

std::string WriteFileStream(const std::string& file,
                            const std::function<void(std::ostream&)>& write) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) return "cannot open '" + file + "'";
  try {
    write(out);
  } catch (...) {
    out.close();
    throw;
  }
  out.flush();
  return out ? "" : "write failed (disk full?)";
}

void WriteTextFileAtomic(const std::string& path, const std::string& text) {
  WriteTextFileAtomic(path, [&](std::ostream& out) { out << text; });
}

void WriteTextFileAtomic(const std::string& path,
                         const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw Error("cannot write '" + path + "': it is a directory");
  // (is_directory sets ec for a file that does not exist yet: only create_directories' counts.)
  if (target.has_parent_path() && (fs::create_directories(target.parent_path(), ec), ec)) {
    throw Error("cannot write '" + path + "': cannot create directory '" +
                target.parent_path().string() + "': " + ec.message());
  }
  fs::path tmp = target;
  tmp += ".tmp." + std::to_string(::getpid());
  std::string failed;
  try {
    failed = WriteFileStream(tmp.string(), write);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  if (!failed.empty()) {
    fs::remove(tmp, ec);
    throw Error("cannot write '" + path + "': " + failed);
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = ec.message();  // before remove() reuses ec
    fs::remove(tmp, ec);
    throw Error("cannot write '" + path + "': rename failed: " + why);
  }
}

}  // namespace phaze
