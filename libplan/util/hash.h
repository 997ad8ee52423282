// Content hashes (SHA-256 via OpenSSL). Hex strings are what every artifact records.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace zp {

using Digest = std::array<uint8_t, 32>;

Digest sha256(std::string_view bytes);
std::string toHex(const Digest& d);
inline std::string sha256Hex(std::string_view bytes) { return toHex(sha256(bytes)); }
// What sha256Hex writes: 64 lowercase hex digits.
inline bool isSha256Hex(std::string_view s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// Incremental hashing for content assembled from several parts.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  // Length-prefixed, so ("ab","c") and ("a","bc") hash differently.
  void updateField(std::string_view bytes);
  Digest finish();
  std::string finishHex() { return toHex(finish()); }

 private:
  void* ctx_;
};

}  // namespace zp
