#include "libplan/util/validate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

namespace zp {

std::optional<std::string> numberProblem(double v, double lo, double hi) {
  if (!std::isfinite(v)) return fmt::format("{} is not a finite number", v);
  if (v < lo) return fmt::format("{} is below {}", v, lo);
  if (v > hi) return fmt::format("{} is above {}", v, hi);
  return std::nullopt;
}

std::optional<std::string> integerProblem(int64_t n, int64_t lo, int64_t hi) {
  if (n < lo) return fmt::format("{} is below {}", n, lo);
  if (n > hi) return fmt::format("{} is above {}", n, hi);
  return std::nullopt;
}

bool isSafeId(std::string_view id) { return !idProblem(id); }

bool isSafeIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

std::optional<std::string> idProblem(std::string_view id) {
  if (id.empty()) return std::string("an empty id");
  if (!std::all_of(id.begin(), id.end(), isSafeIdChar)) {
    // Quoting control characters would break the one-line message.
    const bool printable = std::all_of(id.begin(), id.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
    return fmt::format("{} is not a safe id (letters, digits, '_', '.' and '-' only)",
                       printable ? fmt::format("'{}'", id) : std::string("an id with control characters"));
  }
  if (id == "." || id == "..") return fmt::format("'{}' is not a safe id (it names a directory)", id);
  if (id.size() > kMaxIdLength)
    return fmt::format("'{}...' is not a safe id (longer than {} characters)", id.substr(0, 16), kMaxIdLength);
  return std::nullopt;
}

bool isSafeRelativePath(std::string_view path) {
  if (path.empty()) return false;
  std::filesystem::path p(path);
  if (p.is_absolute() || p.has_root_name() || p.has_root_directory()) return false;
  for (const auto& part : p)
    if (part == "..") return false;
  return true;
}

int maxThreads() {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(std::min<unsigned>(cores, 4096)) * kThreadsPerCore;
}

std::optional<std::string> threadCountProblem(int64_t n) {
  if (n < 1) return fmt::format("{} threads: at least 1 is needed", n);
  if (n > maxThreads())
    return fmt::format("{} threads is above the {} this machine allows ({} per core)", n, maxThreads(),
                       kThreadsPerCore);
  return std::nullopt;
}

std::optional<uint64_t> checkedMul(uint64_t a, uint64_t b, uint64_t limit) {
  if (a != 0 && b > limit / a) return std::nullopt;
  return a * b;
}

std::optional<uint64_t> checkedPow(uint64_t base, uint64_t exponent, uint64_t limit) {
  if (exponent == 0) return 1 <= limit ? std::optional<uint64_t>(1) : std::nullopt;
  if (base <= 1) return base <= limit ? std::optional<uint64_t>(base) : std::nullopt;
  uint64_t r = 1;
  for (uint64_t i = 0; i < exponent; ++i) {  // base >= 2: at most 64 steps before the limit
    auto next = checkedMul(r, base, limit);
    if (!next) return std::nullopt;
    r = *next;
  }
  return r;
}

}  // namespace zp
