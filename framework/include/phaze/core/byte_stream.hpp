// A compact binary encoding for messages between processes of one run (the MPI scale-out): fixed
// little-endian 64-bit integers, IEEE doubles by their bits (so every value crosses exactly and a
// distributed run's results are byte-identical to a local one), length-prefixed strings. Both ends
// are the same phaze build, so there is no versioning; a truncated or overlong message is an Error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace phaze {

class ByteWriter {
 public:
  void Int(std::int64_t v);
  void Double(double v);
  void Bool(bool v) { Int(v ? 1 : 0); }
  void String(std::string_view s);
  const std::string& Bytes() const { return bytes_; }
  std::string Take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  std::int64_t Int();
  double Double();
  bool Bool() { return Int() != 0; }
  std::string String();
  // A count about to size a container: rejects negative values and counts the rest of the
  // message cannot hold (each element takes at least `min_element_bytes`).
  std::size_t Count(std::size_t min_element_bytes = 8);
  bool AtEnd() const { return at_ == bytes_.size(); }
  // Throws unless every byte was read.
  void ExpectEnd() const;

 private:
  std::string_view Read(std::size_t n);
  std::string_view bytes_;
  std::size_t at_ = 0;
};

}  // namespace phaze
