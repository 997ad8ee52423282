// Progress of a step that can take more than a few seconds: on a terminal a
// line redrawn in place (phase, done/total, elapsed, ETA); otherwise (a log, a
// CI job) a plain line every 10 s and one when it ends, so that a step
// shorter than that prints nothing there. The tools' --quiet turns it off for
// the whole process.
#pragma once
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace zp {

class Progress {
 public:
  // `unit`: what `total` counts, for the lines ("subgraphs", "ms" for a timed step).
  // `logEvery`: how often a log gets a line (kLogEvery; tests pass less).
  Progress(std::string label, size_t total, std::string unit = "",
           std::chrono::milliseconds logEvery = std::chrono::milliseconds(10000));
  ~Progress();
  void advance(size_t n = 1);
  void set(size_t done);
  void finish();

  enum class Output { Auto, Off };
  // Auto: the terminal form when stderr is one, plain lines otherwise.
  static void setOutput(Output output);
  static bool stderrIsTerminal();

 private:
  void draw(bool force);
  std::string line() const;
  std::string label_, unit_;
  size_t total_;
  size_t done_ = 0, drawnDone_ = 0;
  bool terminal_, enabled_;
  bool finished_ = false, drawn_ = false;
  std::chrono::milliseconds logEvery_;
  std::chrono::steady_clock::time_point start_, lastDraw_{};
  std::mutex mu_;
};

}  // namespace zp
