// File helpers: whole-file reads and atomic writes (temporary file + rename), so an interrupted
// run never leaves a truncated results file that looks complete.
#pragma once

#include <string>

namespace phaze {

// Throws phaze::Error naming the path when the file cannot be read.
std::string ReadTextFile(const std::string& path);
// Writes `text` to `path` atomically; creates missing parent directories.
void WriteTextFileAtomic(const std::string& path, const std::string& text);

}  // namespace phaze
