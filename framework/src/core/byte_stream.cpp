#include "phaze/core/byte_stream.hpp"

#include <bit>
#include <cstring>

#include "phaze/core/error.hpp"

namespace phaze {

void ByteWriter::Int(std::int64_t v) {
  auto u = static_cast<std::uint64_t>(v);
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}

void ByteWriter::Double(double v) { Int(static_cast<std::int64_t>(std::bit_cast<std::uint64_t>(v))); }

void ByteWriter::String(std::string_view s) {
  Int(static_cast<std::int64_t>(s.size()));
  bytes_.append(s);
}

std::string_view ByteReader::Read(std::size_t n) {
  if (n > bytes_.size() - at_) {
    throw Error("malformed message: " + std::to_string(n) + " bytes wanted at offset " +
                std::to_string(at_) + " of " + std::to_string(bytes_.size()));
  }
  const std::string_view s = bytes_.substr(at_, n);
  at_ += n;
  return s;
}

std::int64_t ByteReader::Int() {
  const std::string_view s = Read(8);
  std::uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[i])) << (8 * i);
  return static_cast<std::int64_t>(u);
}

double ByteReader::Double() { return std::bit_cast<double>(static_cast<std::uint64_t>(Int())); }

std::string ByteReader::String() { return std::string(Read(Count(1))); }

std::size_t ByteReader::Count(std::size_t min_element_bytes) {
  const std::int64_t n = Int();
  const std::size_t left = bytes_.size() - at_;
  if (n < 0 || (min_element_bytes > 0 && static_cast<std::uint64_t>(n) > left / min_element_bytes)) {
    throw Error("malformed message: count " + std::to_string(n) + " at offset " +
                std::to_string(at_ - 8) + " exceeds the " + std::to_string(left) + " bytes left");
  }
  return static_cast<std::size_t>(n);
}

void ByteReader::ExpectEnd() const {
  if (!AtEnd()) {
    throw Error("malformed message: " + std::to_string(bytes_.size() - at_) +
                " unread bytes at offset " + std::to_string(at_));
  }
}

}  // namespace phaze
