// fuzz_replay HARNESS PATH...: runs a harness on every file given (directories:
// every file in them, sorted), the way libFuzzer runs a corpus, and prints how
// many inputs ran. Lets any build (GCC, sanitized or not) run the seed and
// regression corpora without libFuzzer.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"

namespace zp::fuzz {

namespace {
std::map<std::string, TargetFn>& targets() {
  static std::map<std::string, TargetFn> t;
  return t;
}
}  // namespace

bool registerTarget(const char* name, TargetFn fn) {
  targets()[name] = fn;
  return true;
}

}  // namespace zp::fuzz

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  auto& targets = zp::fuzz::targets();
  if (argc < 2 || !targets.count(argv[1])) {
    std::fprintf(stderr, "usage: fuzz_replay HARNESS PATH...\nharnesses:");
    for (const auto& [name, fn] : targets) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  const auto fn = targets.at(argv[1]);
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    if (fs::is_directory(argv[i])) {
      std::vector<fs::path> dir;
      for (const auto& e : fs::directory_iterator(argv[i]))
        if (e.is_regular_file()) dir.push_back(e.path());
      std::sort(dir.begin(), dir.end());
      files.insert(files.end(), dir.begin(), dir.end());
    } else if (fs::is_regular_file(argv[i])) {
      files.emplace_back(argv[i]);
    } else {
      std::fprintf(stderr, "fuzz_replay: %s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%s: %zu inputs ran\n", argv[1], files.size());
  return 0;
}
