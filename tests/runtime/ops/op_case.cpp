#include "tests/runtime/ops/op_case.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <sys/wait.h>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/kernel_policy.h"
#include "libplan/runtime/npy.h"
#include "libplan/util/file.h"
#include "libplan/util/json.h"

namespace zp::runtime::testing {
namespace fs = std::filesystem;

Operand in(std::string name, Shape shape, Fill fill, DType dtype) {
  return Operand{std::move(name), dtype, std::move(shape), false, fill, {}};
}

Operand init(std::string name, Shape shape, Fill fill, DType dtype) {
  return Operand{std::move(name), dtype, std::move(shape), true, fill, {}};
}

Operand fixed(std::string name, DType dtype, Shape shape, std::vector<double> values, bool initializer) {
  return Operand{std::move(name), dtype, std::move(shape), initializer, Fill::Uniform, std::move(values)};
}

const std::vector<std::string>& everyForcedPolicy() {
  static const std::vector<std::string> policies = [] {
    std::vector<std::string> p;
    for (const auto& name : policyNames())
      if (name != "tune") p.push_back(name);
    return p;
  }();
  return policies;
}

namespace {

const char* textType(DType t) {
  switch (t) {
    case DType::F32: return "float";
    case DType::I64: return "int64";
    case DType::I32: return "int32";
    case DType::I8: return "int8";
    case DType::U8: return "uint8";
    case DType::Bool: return "bool";
    case DType::F64: return "double";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::I16: return "int16";
    case DType::U16: return "uint16";
    case DType::U32: return "uint32";
    case DType::U64: return "uint64";
  }
  return "?";
}

double draw(Fill fill, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  switch (fill) {
    case Fill::Uniform: return -1 + 2 * u(rng);
    case Fill::Positive: return 0.1 + 1.9 * u(rng);
    case Fill::AwayFromZero: return (u(rng) < 0.5 ? -1 : 1) * (0.5 + 1.5 * u(rng));
    case Fill::SmallInts: return static_cast<double>(static_cast<int>(rng() % 7) - 3);
    case Fill::Halves: return 0.5 * static_cast<double>(static_cast<int>(rng() % 17) - 8);
    case Fill::Wide: return -30 + 60 * u(rng);
    case Fill::Counts: return static_cast<double>(1 + rng() % 9);
    case Fill::Bools: return static_cast<double>(rng() % 2);
    case Fill::Pruned: return u(rng) < 0.8 ? 0.0 : -1 + 2 * u(rng);
  }
  return 0;
}

Tensor tensorOf(const Operand& o, std::mt19937& rng) {
  Tensor t = Tensor::empty(o.dtype, o.shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    const double v = o.values.empty() ? draw(o.fill, rng) : o.values.at(static_cast<size_t>(i));
    switch (o.dtype) {
      case DType::F32: t.ptr<float>()[i] = static_cast<float>(v); break;
      case DType::I64: t.ptr<int64_t>()[i] = static_cast<int64_t>(std::llround(v)); break;
      case DType::I32: t.ptr<int32_t>()[i] = static_cast<int32_t>(std::lround(v)); break;
      case DType::I8: t.ptr<int8_t>()[i] = static_cast<int8_t>(std::lround(v)); break;
      case DType::U8: case DType::Bool: t.ptr<uint8_t>()[i] = static_cast<uint8_t>(std::lround(v)); break;
      case DType::F64: t.ptr<double>()[i] = v; break;
      case DType::F16: t.ptr<uint16_t>()[i] = floatToHalf(static_cast<float>(v)); break;
      case DType::BF16: t.ptr<uint16_t>()[i] = floatToBf16(static_cast<float>(v)); break;
      case DType::I16: t.ptr<int16_t>()[i] = static_cast<int16_t>(std::lround(v)); break;
      case DType::U16: t.ptr<uint16_t>()[i] = static_cast<uint16_t>(std::lround(v)); break;
      case DType::U32: t.ptr<uint32_t>()[i] = static_cast<uint32_t>(std::llround(v)); break;
      case DType::U64: t.ptr<uint64_t>()[i] = static_cast<uint64_t>(std::llround(v)); break;
    }
  }
  return t;
}

std::string declaration(const Operand& o) {
  std::string d = textType(o.dtype);
  if (!o.shape.empty()) {
    d += "[";
    for (size_t i = 0; i < o.shape.size(); ++i) d += (i ? "," : "") + std::to_string(o.shape[i]);
    d += "]";
  }
  return d + " " + o.name;
}

std::string literal(const Tensor& t) {
  std::string s;
  for (int64_t i = 0; i < t.size(); ++i) {
    s += i ? ", " : "";
    if (t.dtype == DType::F32) s += fmt::format("{:.6f}", t.ptr<float>()[i]);
    else if (t.dtype == DType::F64) s += fmt::format("{:.17g}", t.ptr<double>()[i]);
    else if (t.dtype == DType::F16 || t.dtype == DType::BF16) s += std::to_string(t.ptr<uint16_t>()[i]);  // bit patterns
    else s += std::to_string(t.toI64()[static_cast<size_t>(i)]);
  }
  return s;
}

// The case's model (checked, shapes inferred, outputs of unknown shape) and the
// values of its graph inputs.
Expected<onnx::ModelProto> caseModel(const OpCase& c, uint32_t seed, TensorMap* inputs) {
  std::mt19937 rng(seed);
  std::string sig, inits;
  for (const auto& o : c.operands) {
    Tensor t = tensorOf(o, rng);
    if (o.initializer) {
      inits += (inits.empty() ? "" : ", ") + declaration(o) + " = {" + literal(t) + "}";
    } else {
      sig += (sig.empty() ? "" : ", ") + declaration(o);
      (*inputs)[o.name] = std::move(t);
    }
  }
  std::string outs;
  for (const auto& o : c.outputs) outs += (outs.empty() ? "" : ", ") + o;
  const std::string text = fmt::format("<ir_version: 8, opset_import: [\"\" : {}]>\ng ({}) => ({})\n{}{{\n{}\n}}\n",
                                       c.opset, sig, outs, inits.empty() ? "" : "<" + inits + ">\n", c.body);
  graph::LoadOptions raw;
  raw.check = false;
  raw.inferShapes = false;
  auto m = graph::parseModelText(text, raw);
  if (!m.ok()) return makeError("{}: {}\n{}", c.name(), m.error().message, text);
  for (auto& o : *m->mutable_graph()->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  ZP_TRY(graph::inferShapes(*m, c.name()));
  // The checker wants every output's shape, which inference cannot give when it
  // depends on input values (Reshape by an input, Range, ...).
  bool shaped = true;
  for (const auto& o : m->graph().output()) shaped = shaped && o.type().tensor_type().has_shape();
  if (shaped) ZP_TRY(graph::checkModel(*m, c.name()));
  return m;
}

std::string sanitize(std::string s) {
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.' && ch != '-') ch = '_';
  return s;
}

// ONNX Runtime over every job at once; returns each model's error ("" when it ran).
Expected<std::map<std::string, std::string>> runOrt(const fs::path& jobsFile, const fs::path& dir,
                                                    const std::string& node, const std::string& sourceDir) {
  if (node.empty() || node.find("NOTFOUND") != std::string::npos)
    return makeError("node was not found when the build was configured: the ONNX Runtime reference cannot run");
  const fs::path runner = fs::path(sourceDir) / "tests/ort/run_ort.js";
  const fs::path out = dir / "ort.stdout", err = dir / "ort.stderr";
  const std::string cmd = fmt::format("'{}' '{}' --batch '{}' --opt disabled > '{}' 2> '{}'", node, runner.string(),
                                      jobsFile.string(), out.string(), err.string());
  const int rc = std::system(cmd.c_str());
  ZP_ASSIGN_OR_RETURN(std::string stdoutText, readFile(out));
  std::map<std::string, std::string> errors;
  std::istringstream lines(stdoutText);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    Json j = Json::parse(line);
    errors[j.at("model").get<std::string>()] = j.contains("error") ? j.at("error").get<std::string>() : "";
  }
  if (errors.empty()) {
    auto e = readFile(err);
    return makeError("ONNX Runtime ran no model (exit status {}): {}", WIFEXITED(rc) ? WEXITSTATUS(rc) : -1,
                     e.ok() ? *e : "no stderr");
  }
  return errors;
}

std::string compare(const Tensor& ours, const Tensor& ort, double tolerance) {
  if (ours.dtype != ort.dtype) return fmt::format("dtype {} vs ORT's {}", dtypeName(ours.dtype), dtypeName(ort.dtype));
  if (ours.shape != ort.shape) return fmt::format("shape {} vs ORT's {}", shapeString(ours.shape), shapeString(ort.shape));
  if (!dtypeIsFloat(ours.dtype)) {
    if (ours.bytes() && std::memcmp(ours.data, ort.data, ours.bytes()) != 0) return "values differ";
    return "";
  }
  double worst = 0, scale = 1;
  const std::vector<double> va = ours.toF64(), vb = ort.toF64();
  for (size_t i = 0; i < vb.size(); ++i) {
    const double a = va[i], b = vb[i];
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) return fmt::format("element {}: {} vs ORT's {}", i, a, b);
      continue;
    }
    if (std::isinf(a) || std::isinf(b)) {
      if (a != b) return fmt::format("element {}: {} vs ORT's {}", i, a, b);
      continue;
    }
    worst = std::max(worst, std::fabs(a - b));
    scale = std::max(scale, std::fabs(b));
  }
  if (worst > tolerance * scale) return fmt::format("max |ours - ORT| = {:.3g} > {:.3g}", worst, tolerance * scale);
  return "";
}

// Our outputs of case `c` under `policy`, each compared with ORT's files in `ortDir`.
void checkPolicy(const OpCase& c, const onnx::ModelProto& model, const TensorMap& inputs, const std::string& policy,
                 const fs::path& ortDir, CaseResult* result) {
  SessionOptions o;
  o.kernels.policy = policy;
  auto s = Session::fromModel(model, c.name(), o);
  if (!s.ok()) return result->failures.push_back(policy + ": " + s.error().message);
  auto outs = (*s)->run(inputs);
  if (!outs.ok()) return result->failures.push_back(policy + ": " + outs.error().message);
  for (const auto& [name, t] : *outs) {
    auto ref = readNpy(ortDir / (sanitize(name) + ".npy"));
    if (!ref.ok()) return result->failures.push_back(ref.error().message);
    const std::string why = compare(t, *ref, c.tolerance);
    if (!why.empty()) result->failures.push_back(fmt::format("{}: output {}: {}", policy, name, why));
  }
}

}  // namespace

namespace {

struct BuiltCases {
  std::vector<onnx::ModelProto> models;
  std::vector<TensorMap> inputs;
};

// Every case's model and inputs, seeded by its index (the same on every machine).
Expected<BuiltCases> buildCases(const std::vector<OpCase>& cases) {
  BuiltCases b;
  b.models.resize(cases.size());
  b.inputs.resize(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    ZP_ASSIGN_OR_RETURN(b.models[i], caseModel(cases[i], static_cast<uint32_t>(1000 + i), &b.inputs[i]));
  }
  return b;
}

fs::path caseDir(const fs::path& dir, size_t i) { return dir / fmt::format("case{}", i); }

// Every case's model and inputs under dir/case<i>; ORT's jobs file.
Expected<Json> writeCases(const BuiltCases& b, const fs::path& dir) {
  Json jobs = Json::array();
  for (size_t i = 0; i < b.models.size(); ++i) {
    const fs::path cd = caseDir(dir, i);
    fs::create_directories(cd);
    ZP_TRY(graph::saveModel(b.models[i], cd / "model.onnx"));
    Json feeds = Json::object();
    for (const auto& [name, t] : b.inputs[i]) {
      const fs::path file = cd / (sanitize(name) + ".npy");
      ZP_TRY(writeNpy(file, t));
      feeds[name] = file.string();
    }
    jobs.push_back({{"model", (cd / "model.onnx").string()}, {"inputs", feeds}, {"output_dir", (cd / "ort").string()}});
  }
  return jobs;
}

// Our outputs under each policy against ORT's in ortDir/case<i>/ort; ORT's error per
// case ("" for none; no entry: ORT did not report the case).
std::vector<CaseResult> checkCases(const std::vector<OpCase>& cases, const BuiltCases& b, const fs::path& ortDir,
                                   const std::map<std::string, std::string>& ortErrors) {
  std::vector<CaseResult> results;
  for (size_t i = 0; i < cases.size(); ++i) {
    CaseResult r;
    r.name = cases[i].name();
    auto it = ortErrors.find(r.name);
    if (it == ortErrors.end()) r.failures.push_back("ONNX Runtime did not report this model");
    else if (!it->second.empty()) r.failures.push_back("ONNX Runtime: " + it->second);
    else
      for (const auto& policy : cases[i].policies)
        checkPolicy(cases[i], b.models[i], b.inputs[i], policy, caseDir(ortDir, i) / "ort", &r);
    results.push_back(std::move(r));
  }
  return results;
}

constexpr const char* kOrtErrorsFile = "ort_errors.json";  // per case name: ORT's error, "" for none

}  // namespace

Expected<std::vector<CaseResult>> runAgainstOnnxRuntime(const std::vector<OpCase>& cases, const fs::path& dir,
                                                        const std::string& node, const std::string& sourceDir) {
  ZP_ASSIGN_OR_RETURN(const BuiltCases built, buildCases(cases));
  ZP_ASSIGN_OR_RETURN(Json jobs, writeCases(built, dir));
  ZP_TRY(writeFileAtomic(dir / "jobs.json", jobs.dump(1)));
  ZP_ASSIGN_OR_RETURN(auto byModel, runOrt(dir / "jobs.json", dir, node, sourceDir));
  std::map<std::string, std::string> ortErrors;
  for (size_t i = 0; i < cases.size(); ++i)
    if (auto it = byModel.find((caseDir(dir, i) / "model.onnx").string()); it != byModel.end())
      ortErrors[cases[i].name()] = it->second;
  ZP_TRY(writeFileAtomic(dir / kOrtErrorsFile, Json(ortErrors).dump(1)));
  return checkCases(cases, built, dir, ortErrors);
}

Expected<std::vector<CaseResult>> checkAgainstOrtOutputs(const std::vector<OpCase>& cases,
                                                         const fs::path& references) {
  const fs::path errorsFile = references / kOrtErrorsFile;
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(errorsFile));
  const Json record = Json::parse(text, nullptr, false);
  if (!record.is_object())
    return makeError("{}: not the {} that runtime_ops_test --write-references writes", errorsFile.string(),
                     kOrtErrorsFile);
  ZP_ASSIGN_OR_RETURN(const BuiltCases built, buildCases(cases));
  return checkCases(cases, built, references, record.get<std::map<std::string, std::string>>());
}

}  // namespace zp::runtime::testing
