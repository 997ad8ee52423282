#include "libplan/util/progress.h"

#include <unistd.h>

#include <cstdio>

namespace zp {

bool Progress::stderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, size_t total)
    : label_(std::move(label)), total_(total), enabled_(stderrIsTerminal()) {}

Progress::~Progress() { finish(); }

void Progress::advance(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  done_ += n;
  draw(done_ == total_);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  draw(true);
  std::fputc('\n', stderr);
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (!force && now - lastDraw_ < std::chrono::milliseconds(100)) return;
  lastDraw_ = now;
  constexpr int kWidth = 30;
  int filled = total_ ? static_cast<int>(kWidth * done_ / total_) : kWidth;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r%s [%s] %zu/%zu", label_.c_str(), bar.c_str(), done_, total_);
  std::fflush(stderr);
}

}  // namespace zp
