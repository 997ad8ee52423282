#include "libplan/util/progress.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>

#include <fmt/format.h>

namespace zp {

namespace {
std::atomic<Progress::Output> gOutput{Progress::Output::Auto};

std::string seconds(double s) {
  return s < 90 ? fmt::format("{:.0f} s", s) : fmt::format("{}:{:02}", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}
}  // namespace

void Progress::setOutput(Output output) { gOutput = output; }

bool Progress::stderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, size_t total, std::string unit, std::chrono::milliseconds logEvery)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      terminal_(stderrIsTerminal()),
      enabled_(gOutput.load() != Output::Off && total > 0),
      logEvery_(logEvery),
      start_(std::chrono::steady_clock::now()),
      lastDraw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::advance(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  done_ += n;
  draw(false);
}

void Progress::set(size_t done) {
  std::lock_guard<std::mutex> lock(mu_);
  done_ = done;
  draw(false);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (!enabled_ || (!terminal_ && !drawn_)) return;  // a log hears of steps that took logEvery_ or more
  if (!terminal_ && drawnDone_ == done_) return;    // its last line already says where it ended
  draw(true);
  if (terminal_) std::fputc('\n', stderr);
}

std::string Progress::line() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const size_t done = std::min(done_, total_);
  std::string s = fmt::format("{}: {}/{}{} ({:.0f}%), {}", label_, done, total_, unit_.empty() ? "" : " " + unit_,
                              100.0 * static_cast<double>(done) / static_cast<double>(total_), seconds(elapsed));
  if (done > 0 && done < total_)
    s += ", ETA " + seconds(elapsed * static_cast<double>(total_ - done) / static_cast<double>(done));
  return s;
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - lastDraw_ < (terminal_ ? std::chrono::steady_clock::duration(std::chrono::milliseconds(100))
                                             : std::chrono::steady_clock::duration(logEvery_)))
    return;
  lastDraw_ = now;
  drawn_ = true;
  drawnDone_ = done_;
  if (terminal_) std::fprintf(stderr, "\r\033[K%s", line().c_str());
  else std::fprintf(stderr, "%s\n", line().c_str());
  std::fflush(stderr);
}

}  // namespace zp
