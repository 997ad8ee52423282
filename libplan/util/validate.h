// Checks every reader applies to what it takes from a file or an option: numbers
// finite and in range, ids that are safe file names, thread counts the machine
// can run, sizes that cannot overflow. Each check returns the problem as text
// (without a location, for the caller to prefix) or nothing when the value is fine.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zp {

// Latencies (profile rows, importers, workloads) above this are a unit mistake or
// a corrupt file; below it every sum the planners form stays finite.
inline constexpr double kMaxLatencyMs = 1e7;  // about 2.8 hours for one run
// Byte counts (memory, transfers): no edge device has a tebibyte, and sums of
// many such counts stay far from int64 overflow.
inline constexpr int64_t kMaxBytes = int64_t{1} << 40;
// Repetition counts recorded in profiles and asked for on the command line.
inline constexpr int64_t kMaxRuns = 1'000'000'000;
// Threads per core a thread-count option may ask for.
inline constexpr int kThreadsPerCore = 4;
// Longest id (task, variant, processor): ids become parts of file names.
inline constexpr size_t kMaxIdLength = 64;

// v finite and within [lo, hi]: "1.7e+308 is above 1e+07", "nan is not a finite number".
std::optional<std::string> numberProblem(double v, double lo, double hi);
// n within [lo, hi].
std::optional<std::string> integerProblem(int64_t n, int64_t lo, int64_t hi);

// An id that is safe as a file name on its own: letters, digits, '_', '.', '-',
// at most kMaxIdLength characters, and not "." or "..".
bool isSafeId(std::string_view id);
// A character a safe id may hold.
bool isSafeIdChar(char c);
std::optional<std::string> idProblem(std::string_view id);

// A relative path that stays below the directory it is relative to: not empty,
// not absolute, no ".." component.
bool isSafeRelativePath(std::string_view path);

// The most threads any option may ask for: the machine's cores (at least 1)
// times kThreadsPerCore.
int maxThreads();
// n in [1, maxThreads()]: "100000 is above the 8 threads this machine allows (4 per core)".
std::optional<std::string> threadCountProblem(int64_t n);

// a * b, or nothing when it exceeds `limit` (no overflow on the way).
std::optional<uint64_t> checkedMul(uint64_t a, uint64_t b, uint64_t limit = UINT64_MAX);
// base^exponent, or nothing when it exceeds `limit`.
std::optional<uint64_t> checkedPow(uint64_t base, uint64_t exponent, uint64_t limit = UINT64_MAX);

}  // namespace zp
