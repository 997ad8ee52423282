#include "fuzz/fuzz_util.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "libplan/artifacts/profile_report.h"
#include "libplan/graph/model_io.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json.h"

namespace zp::fuzz {
namespace fs = std::filesystem;

namespace {

struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "zp-fuzz-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
      std::perror("zp-fuzz: mkdtemp");
      std::abort();
    }
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void copyOrDie(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  require(!ec, "cannot copy a fuzzing fixture into the scratch directory");
}

void linkOrDie(const fs::path& target, const fs::path& link) {
  std::error_code ec;
  fs::create_directory_symlink(target, link, ec);
  require(!ec, "cannot link testdata into the scratch directory");
}

const fs::path kFixtureFiles[] = {"prof/report.json", "prof/profile.csv", "prof/accuracy.csv",
                                  "prof/latency_model.json", "st/stitch.json"};

std::string fixtureBytes(const fs::path& file) {
  auto bytes = readFile(sourceDir() / "fuzz/fixtures/profile" / file);
  require(bytes.ok(), "cannot read a file of fuzz/fixtures/profile");
  return *bytes;
}

}  // namespace

fs::path sourceDir() { return ZP_SOURCE_DIR; }

const fs::path& scratchDir() {
  static ScratchDir dir;
  return dir.path;
}

fs::path writeInput(std::string_view bytes, const std::string& name) {
  const fs::path path = scratchDir() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  require(out.good(), "cannot write the fuzz input to the scratch directory");
  return path;
}

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "zp-fuzz: property violated: %s\n", what);
  std::abort();
}

const graph::GraphView& digitsDenseModel() {
  static const auto model = [] {
    auto m = graph::loadModel(sourceDir() / "testdata/digits/models/dense.onnx");
    require(m.ok(), "cannot load testdata/digits/models/dense.onnx");
    return std::make_unique<onnx::ModelProto>(std::move(m).value());
  }();
  static const graph::GraphView view(*model);
  return view;
}

fs::path profileFixture() {
  static const fs::path prof = [] {
    const fs::path root = scratchDir() / "profile";
    fs::create_directories(root / "st");
    fs::create_directories(root / "prof");
    copyOrDie(sourceDir() / "fuzz/fixtures/profile/zoo.json", root / "zoo.json");
    linkOrDie(sourceDir() / "testdata/digits/models", root / "models");
    linkOrDie(sourceDir() / "testdata/digits/data", root / "data");
    for (const auto& f : kFixtureFiles) copyOrDie(sourceDir() / "fuzz/fixtures/profile" / f, root / f);
    return root / "prof";
  }();
  return prof;
}

fs::path putProfileFile(const std::string& file, std::string_view bytes) {
  static const Json fixtureReport = Json::parse(fixtureBytes("prof/report.json"));
  const fs::path prof = profileFixture();
  // A process runs one harness, so the other files stay as profileFixture() copied them.
  writeInput(bytes, (file == "stitch.json" ? "profile/st/" : "profile/prof/") + file);
  Json report = fixtureReport;
  if (file == "stitch.json")
    report["inputs"][artifacts::kReportStitchKey] = sha256Hex(bytes);
  else
    report[artifacts::kReportFilesKey][file] = sha256Hex(bytes);
  writeInput(canonicalJson(report), "profile/prof/report.json");
  return prof;
}

}  // namespace zp::fuzz
