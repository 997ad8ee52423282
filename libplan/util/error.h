// Recoverable errors for user mistakes (bad files, bad options). Bugs use assert.
#pragma once
#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace zp {

// A one-line, user-facing message. By convention it starts with the file (or
// option) it is about: "zoo.json: $.tasks[0].variants: missing field 'id'".
struct Error {
  std::string message;
};

template <typename... Args>
Error makeError(fmt::format_string<Args...> f, Args&&... args) {
  return Error{fmt::format(f, std::forward<Args>(args)...)};
}

// Either a value or an Error. Minimal on purpose: C++20 has no std::expected.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Expected<void>: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}
  static Status success() { return Status(); }
  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { assert(!ok()); return *error_; }

 private:
  std::optional<Error> error_;
};

}  // namespace zp

// Propagate an error from an Expected/Status expression inside a function that
// returns Expected<...> or Status.
#define ZP_TRY(expr)                         \
  do {                                       \
    auto&& zp_try_result_ = (expr);          \
    if (!zp_try_result_.ok()) return zp_try_result_.error(); \
  } while (0)

#define ZP_CONCAT_INNER(a, b) a##b
#define ZP_CONCAT(a, b) ZP_CONCAT_INNER(a, b)
#define ZP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.error();             \
  lhs = std::move(tmp).value()
// ZP_ASSIGN_OR_RETURN(auto x, f()); binds x to f()'s value or returns its error.
#define ZP_ASSIGN_OR_RETURN(lhs, expr) \
  ZP_ASSIGN_OR_RETURN_IMPL(ZP_CONCAT(zp_aor_, __LINE__), lhs, expr)
