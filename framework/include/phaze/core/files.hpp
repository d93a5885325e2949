// File helpers: whole-file reads of inputs (checked to be regular files of a bounded size) and
// atomic writes (temporary file + rename), so an interrupted run never leaves a truncated results
// file that looks complete.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace phaze {

// The contents of the input file `path`. Throws ConfigError "PATH: cannot read …: WHY" when it
// does not exist, is a directory, a FIFO, a device or a socket (reading one could block forever),
// is unreadable, or is larger than limits::kInputFileBytes.
std::string ReadInputFile(const std::string& path);
// Writes `text` to `path` atomically; creates missing parent directories.
void WriteTextFileAtomic(const std::string& path, const std::string& text);
// The same, with the text written by `write` as it is made (never whole in memory).
void WriteTextFileAtomic(const std::string& path, const std::function<void(std::ostream&)>& write);
// Creates or truncates `file`, lets `write` fill it and flushes it: "" when that worked, else why
// not. When `write` throws, the file is closed and the exception propagates. Either way, what is
// left is the caller's to remove (WriteTextFileAtomic's temporary, OutputDirectory's staging).
std::string WriteFileStream(const std::string& file,
                            const std::function<void(std::ostream&)>& write);

}  // namespace phaze
