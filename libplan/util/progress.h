// A one-line progress bar on stderr when stderr is a terminal; silent when piped.
#pragma once
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace zp {

class Progress {
 public:
  Progress(std::string label, size_t total);
  ~Progress();
  void advance(size_t n = 1);
  void finish();
  static bool stderrIsTerminal();

 private:
  void draw(bool force);
  std::string label_;
  size_t total_;
  size_t done_ = 0;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point lastDraw_{};
  std::mutex mu_;
};

}  // namespace zp
