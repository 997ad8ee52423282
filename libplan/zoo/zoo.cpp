#include "libplan/zoo/zoo.h"

namespace zp::zoo {
namespace fs = std::filesystem;

fs::path Zoo::resolve(const std::string& relative) const {
  fs::path p(relative);
  if (p.is_absolute()) return p;
  return (file.parent_path() / p).lexically_normal();
}

std::vector<fs::path> Zoo::files() const {
  std::vector<fs::path> out{file};
  for (const auto& p : processors)
    if (!p.profileFile.empty()) out.push_back(resolve(p.profileFile));
  for (const auto& t : tasks) {
    for (const auto& v : t.variants) out.push_back(resolve(v.onnx));
    if (t.dataset)
      for (const auto* f : {&t.dataset->inputs, &t.dataset->labels, &t.dataset->calibration})
        if (!f->empty()) out.push_back(resolve(*f));
  }
  return out;
}

}  // namespace zp::zoo
