// What every tool's main shares: option checks with one-line messages, and
// parsing that turns any option error into "TOOL: error: ..." and exit code 2.
#pragma once
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "libplan/util/error.h"
#include "libplan/util/progress.h"
#include "libplan/util/validate.h"

namespace zp::cli {

// Exit codes: option errors 2, bad input files or failed runs 1.
inline constexpr int kOptionError = 2;
inline constexpr int kInputError = 1;

// Prints "TOOL: error: MESSAGE" as one line on stderr (line ends inside become spaces).
inline void printError(std::string_view tool, std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  fmt::print(stderr, "{}: error: {}\n", tool, message);
}

// A driver's error: printed as printError prints it; gives kInputError.
inline int inputError(std::string_view tool, const Error& error) {
  printError(tool, error.message);
  return kInputError;
}

// An option that must be an integer in [lo, hi]: "--threads: 0 is below 1".
inline CLI::Validator integerIn(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        int64_t v = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return fmt::format("'{}' is not an integer", s);
        return integerProblem(v, lo, hi).value_or("");
      },
      fmt::format("INT in [{}, {}]", lo, hi));
}

// A number in [lo, hi] (finite).
inline CLI::Validator numberIn(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        double v = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v))
          return fmt::format("'{}' is not a finite number", s);
        return numberProblem(v, lo, hi).value_or("");
      },
      fmt::format("NUMBER in [{}, {}]", lo, hi));
}

// A thread count this machine can run (util/validate.h maxThreads).
inline CLI::Validator threadCount() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        int64_t v = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return fmt::format("'{}' is not an integer", s);
        return threadCountProblem(v).value_or("");
      },
      fmt::format("INT in [1, {}]", maxThreads()));
}

// "a,b,c" -> {a, b, c}; "" -> {} (empty items dropped).
inline std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// An allocation that fails ends the tool with one line "TOOL: error: out of
// memory ..." and exit code 1, from whichever thread it happens on, instead of
// an uncaught std::bad_alloc or a write through a null pointer. Outputs are
// staged, so nothing half-written is left in place (the next run removes the
// staging). Only async-signal-safe calls: the heap is what failed.
inline std::string_view& outOfMemoryTool() {
  static std::string_view tool = "zooplan";
  return tool;
}
[[noreturn]] inline void exitOutOfMemory() {
  static constexpr std::string_view kMessage =
      ": error: out of memory (fewer queries or threads, a smaller --max-queue or model, or more memory)\n";
  const std::string_view tool = outOfMemoryTool();
  [[maybe_unused]] ssize_t n = ::write(2, tool.data(), tool.size());
  n = ::write(2, kMessage.data(), kMessage.size());
  ::_exit(kInputError);
}

// Parses the command line. --help prints the help and gives 0; any option error
// prints one line "TOOL: error: ..." and gives kOptionError; nothing: carry on.
// Every tool parses first: from here on an allocation failure ends it as
// exitOutOfMemory says.
// Every tool takes --quiet: no progress lines on stderr (libplan/util/progress.h).
inline std::optional<int> parse(CLI::App& app, int argc, char** argv, std::string_view tool) {
  outOfMemoryTool() = tool;
  std::set_new_handler(exitOutOfMemory);
  app.add_flag_callback("--quiet", [] { Progress::setOutput(Progress::Output::Off); },
                        "no progress lines on stderr (on a terminal: a line redrawn in place; in a log: one every "
                        "10 s of a long step)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    printError(tool, e.what());
    return kOptionError;
  }
  return std::nullopt;
}

}  // namespace zp::cli
