// ONNX's backend node tests through the runtime. Every case (a directory with
// model.onnx and test_data_set_*/{input,output}_*.pb) runs in its own child
// process and gets one verdict:
//   pass     every output of every data set equals the expected one (dtype, shape,
//            and values within the case's tolerance),
//   refused  load or run failed with a one-line error that names an operator of the
//            model or an input/output,
//   wrong    an output differs, or the error is not such a one-line refusal,
//   crash    the child died (signal, abort, time-out).
// The refused cases must be exactly those of the list file (--refused): a case
// refused anew, or one that passes now, fails the run as much as a wrong answer.
//
//   onnx_conformance DATA_DIR --refused FILE [--only SUBSTRING] [--write-refused FILE] [--verbose]
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/session.h"
#include "libplan/util/file.h"
#include "tests/onnx_conformance/tolerance.h"

namespace zp::conformance {
namespace {
namespace fs = std::filesystem;
using runtime::Tensor;

enum class Verdict { Pass, Refused, Wrong, Crash };

const char* verdictName(Verdict v) {
  switch (v) {
    case Verdict::Pass: return "pass";
    case Verdict::Refused: return "refused";
    case Verdict::Wrong: return "wrong";
    case Verdict::Crash: return "crash";
  }
  return "?";
}

struct Outcome {
  Verdict verdict = Verdict::Crash;
  std::string message;
};

Expected<onnx::TensorProto> readTensorProto(const fs::path& p) {
  ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(p));
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes)) return makeError("{}: not a TensorProto", p.string());
  return t;
}

Expected<onnx::ModelProto> readModel(const fs::path& p) {
  ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(p));
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes)) return makeError("{}: not a ModelProto", p.string());
  return m;
}

// Why `ours` differs from `expected` ("" when it does not).
std::string compareOutput(const Tensor& ours, const Tensor& expected, const std::string& caseName) {
  if (ours.dtype != expected.dtype)
    return fmt::format("dtype {} where {} is expected", runtime::dtypeName(ours.dtype), runtime::dtypeName(expected.dtype));
  if (ours.shape != expected.shape)
    return fmt::format("shape {} where {} is expected", runtime::shapeString(ours.shape),
                       runtime::shapeString(expected.shape));
  if (!runtime::dtypeIsFloat(ours.dtype)) {
    if (ours.bytes() && std::memcmp(ours.data, expected.data, ours.bytes()) != 0) {
      auto a = ours.toF64(), b = expected.toF64();
      for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) return fmt::format("element {}: {} where {} is expected", i, a[i], b[i]);
    }
    return "";
  }
  const Tolerance tol = toleranceFor(caseName, expected.dtype);
  auto a = ours.toF64(), b = expected.toF64();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return fmt::format("element {}: {} where {} is expected", i, a[i], b[i]);
      continue;
    }
    if (std::isinf(a[i]) || std::isinf(b[i])) {
      if (a[i] != b[i]) return fmt::format("element {}: {} where {} is expected", i, a[i], b[i]);
      continue;
    }
    if (std::fabs(a[i] - b[i]) > tol.atol + tol.rtol * std::fabs(b[i]))
      return fmt::format("element {}: {} where {} is expected (rtol {}, atol {})", i, a[i], b[i], tol.rtol, tol.atol);
  }
  return "";
}

// The generator stores bfloat16 data as uint16 (NumPy has no bfloat16): such a
// tensor is read as the bfloat16 the model declares.
Expected<Tensor> tensorOfDeclaredType(const onnx::TensorProto& t, const onnx::ValueInfoProto& declared) {
  ZP_ASSIGN_OR_RETURN(Tensor v, runtime::tensorFromProto(t));
  if (v.dtype == runtime::DType::U16 && declared.type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16)
    v.dtype = runtime::DType::BF16;
  return v;
}

// Runs one data set; "" when every output matches.
Expected<std::string> runDataSet(runtime::Session& s, const onnx::ModelProto& m, const fs::path& dir,
                                 const std::string& caseName) {
  runtime::TensorMap inputs;
  for (int j = 0; fs::exists(dir / fmt::format("input_{}.pb", j)); ++j) {
    if (j >= m.graph().input_size()) return makeError("{}: more inputs than the model has", dir.string());
    ZP_ASSIGN_OR_RETURN(onnx::TensorProto t, readTensorProto(dir / fmt::format("input_{}.pb", j)));
    ZP_ASSIGN_OR_RETURN(inputs[m.graph().input(j).name()], tensorOfDeclaredType(t, m.graph().input(j)));
  }
  ZP_ASSIGN_OR_RETURN(runtime::TensorMap outs, s.run(inputs));
  for (int j = 0; j < m.graph().output_size(); ++j) {
    const fs::path file = dir / fmt::format("output_{}.pb", j);
    if (!fs::exists(file)) continue;
    ZP_ASSIGN_OR_RETURN(onnx::TensorProto t, readTensorProto(file));
    auto expected = tensorOfDeclaredType(t, m.graph().output(j));
    if (!expected.ok()) return fmt::format("expected output {}: {}", j, expected.error().message);
    const std::string& name = m.graph().output(j).name();
    auto it = outs.find(name);
    if (it == outs.end()) return fmt::format("output '{}' is missing", name);
    std::string why = compareOutput(it->second, *expected, caseName);
    if (!why.empty()) return fmt::format("{}: output '{}': {}", dir.filename().string(), name, why);
  }
  return std::string();
}

// A refusal names an operator of the model, or an input or output, on one line.
bool cleanRefusal(const std::string& msg, const onnx::ModelProto& m) {
  if (msg.empty() || msg.find('\n') != std::string::npos) return false;
  if (msg.find("input '") != std::string::npos || msg.find("output '") != std::string::npos) return true;
  for (const auto& n : m.graph().node())
    if (msg.find(n.op_type()) != std::string::npos) return true;
  return false;
}

// The verdict of one case, computed in the child process.
Outcome runCase(const fs::path& dir) {
  auto model = readModel(dir / "model.onnx");
  if (!model.ok()) return {Verdict::Wrong, model.error().message};
  auto refusal = [&](const std::string& msg) {
    return Outcome{cleanRefusal(msg, *model) ? Verdict::Refused : Verdict::Wrong, msg};
  };
  runtime::SessionOptions o;
  auto s = runtime::Session::fromModel(*model, dir.filename().string(), o);
  if (!s.ok()) return refusal(s.error().message);
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {Verdict::Wrong, "no test_data_set_* directory"};
  for (const auto& set : sets) {
    auto r = runDataSet(**s, *model, set, dir.filename().string());
    if (!r.ok()) return refusal(r.error().message);
    if (!r->empty()) return {Verdict::Wrong, *r};
  }
  return {Verdict::Pass, ""};
}

// Runs runCase in a child process so that a crash is a verdict, not the end of the run.
Outcome runIsolated(const fs::path& dir, int timeoutSeconds) {
  int fds[2];
  if (::pipe(fds) != 0) return {Verdict::Crash, "pipe failed"};
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    Outcome o = runCase(dir);
    std::string line = std::string(verdictName(o.verdict)) + "\t" + o.message;
    (void)!::write(fds[1], line.data(), line.size());
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  bool timedOut = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) { timedOut = true; break; }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timedOut) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (timedOut) return {Verdict::Crash, fmt::format("no verdict within {} s", timeoutSeconds)};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got.empty())
    return {Verdict::Crash, WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status)) : "no verdict"};
  const size_t tab = got.find('\t');
  const std::string v = got.substr(0, tab), msg = tab == std::string::npos ? "" : got.substr(tab + 1);
  for (Verdict k : {Verdict::Pass, Verdict::Refused, Verdict::Wrong})
    if (v == verdictName(k)) return {k, msg};
  return {Verdict::Crash, "unreadable verdict: " + got};
}

// The refused-case list: one case name per line; '#' starts a comment.
Expected<std::set<std::string>> readRefusedList(const fs::path& p) {
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(p));
  std::set<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    line = line.substr(0, line.find('#'));
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) names.insert(line);
  }
  return names;
}

// The operator a case is about: the type of its model's nodes, most frequent first.
std::string mainOp(const fs::path& dir) {
  auto m = readModel(dir / "model.onnx");
  if (!m.ok() || m->graph().node_size() == 0) return "?";
  std::map<std::string, int> count;
  for (const auto& n : m->graph().node()) ++count[n.op_type()];
  if (m->graph().node_size() == 1) return m->graph().node(0).op_type();
  std::string name = dir.filename().string();
  for (const auto& [op, n] : count) {
    std::string lower = op;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name.find("_" + lower) != std::string::npos) return op;
  }
  return std::max_element(count.begin(), count.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
}

// The operator a refusal names: "... (OpType): ..." or "operator 'OpType'"; else the case's.
std::string refusedOp(const std::string& msg, const fs::path& dir) {
  const size_t op = msg.find("operator '");
  if (op != std::string::npos) {
    const size_t b = op + 10, e = msg.find('\'', b);
    if (e != std::string::npos) return msg.substr(b, e - b);
  }
  const size_t close = msg.find("): ");
  const size_t open = close == std::string::npos ? std::string::npos : msg.rfind('(', close);
  if (open != std::string::npos) return msg.substr(open + 1, close - open - 1);
  if (msg.find("input '") != std::string::npos) return "(model inputs the runtime does not take)";
  return mainOp(dir);
}

// The refused cases grouped by the operator refused, each with its reason, as a list file.
std::string refusedListText(const std::map<std::string, Outcome>& results, const fs::path& data) {
  std::map<std::string, std::vector<std::string>> byOp;
  for (const auto& [name, o] : results)
    if (o.verdict == Verdict::Refused) byOp[refusedOp(o.message, data / name)].push_back(name + "  # " + o.message);
  std::string text =
      "# ONNX backend node test cases the runtime refuses, grouped by the operator refused.\n"
      "# tests/onnx_conformance checks that exactly these are refused: a case refused anew,\n"
      "# or one that passes now, fails the test. Regenerate with onnx_conformance --write-refused.\n";
  for (const auto& [op, cases] : byOp) {
    text += fmt::format("\n# {} ({} cases)\n", op, cases.size());
    for (const auto& c : cases) text += c + "\n";
  }
  return text;
}

struct Args {
  fs::path data, refused, writeRefused;
  std::string only;
  bool verbose = false;
  int timeout = 120;
};

Expected<Args> parseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> Expected<std::string> {
      if (i + 1 >= argc) return makeError("{} needs a value", arg);
      return std::string(argv[++i]);
    };
    if (arg == "--refused") { ZP_ASSIGN_OR_RETURN(std::string v, next()); a.refused = v; }
    else if (arg == "--write-refused") { ZP_ASSIGN_OR_RETURN(std::string v, next()); a.writeRefused = v; }
    else if (arg == "--only") { ZP_ASSIGN_OR_RETURN(a.only, next()); }
    else if (arg == "--verbose") a.verbose = true;
    else if (!arg.empty() && arg[0] == '-') return makeError("unknown option {}", arg);
    else a.data = arg;
  }
  if (a.data.empty()) return makeError("usage: onnx_conformance DATA_DIR --refused FILE [--only SUBSTRING] "
                                       "[--write-refused FILE] [--verbose]");
  return a;
}

int run(const Args& args) {
  const fs::path nodeDir = args.data / "node";
  if (!fs::is_directory(nodeDir)) {
    std::cerr << nodeDir.string() << ": no such directory (generate_node_tests.py writes it)\n";
    return 2;
  }
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(nodeDir))
    if (e.is_directory() && e.path().filename().string().find(args.only) != std::string::npos) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  std::map<std::string, Outcome> results;
  std::map<Verdict, int> count;
  for (const auto& dir : cases) {
    Outcome o = runIsolated(dir, args.timeout);
    ++count[o.verdict];
    const std::string name = dir.filename().string();
    if (o.verdict == Verdict::Wrong || o.verdict == Verdict::Crash || args.verbose)
      std::cout << fmt::format("{:8s} {} {}\n", verdictName(o.verdict), name, o.message);
    results[name] = std::move(o);
  }
  int failures = count[Verdict::Wrong] + count[Verdict::Crash];
  if (!args.writeRefused.empty()) {
    auto st = writeFileAtomic(args.writeRefused, refusedListText(results, nodeDir));
    if (!st.ok()) { std::cerr << st.error().message << "\n"; return 2; }
  }
  if (!args.refused.empty()) {
    auto listed = readRefusedList(args.refused);
    if (!listed.ok()) { std::cerr << listed.error().message << "\n"; return 2; }
    for (const auto& [name, o] : results) {
      const bool isListed = listed->count(name) > 0;
      if (o.verdict == Verdict::Refused && !isListed) {
        std::cout << fmt::format("REFUSED ANEW {} {} (not in {})\n", name, o.message, args.refused.string());
        ++failures;
      } else if (o.verdict == Verdict::Pass && isListed) {
        std::cout << fmt::format("PASSES NOW {} (remove it from {})\n", name, args.refused.string());
        ++failures;
      }
    }
  }
  std::cout << fmt::format("{} cases: {} pass, {} refused, {} wrong, {} crashed\n", cases.size(),
                           count[Verdict::Pass], count[Verdict::Refused], count[Verdict::Wrong], count[Verdict::Crash]);
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace zp::conformance

int main(int argc, char** argv) {
  auto args = zp::conformance::parseArgs(argc, argv);
  if (!args.ok()) {
    std::cerr << "onnx_conformance: " << args.error().message << "\n";
    return 2;
  }
  return zp::conformance::run(*args);
}
