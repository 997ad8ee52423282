#include "passes/measure/cold_profile_measure.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include "libplan/graph/model_io.h"
#include "libplan/runtime/kernels/gemm.h"
#include "libplan/runtime/measure.h"
#include "libplan/runtime/session.h"
#include "libplan/util/file.h"
#include "libplan/util/stats.h"

namespace zp::measure {
namespace fs = std::filesystem;
using runtime::GemmLibrary;

namespace {

using Clock = std::chrono::steady_clock;
double msSinceStart(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Kernels whose products go through the session's GEMM library.
bool kernelUsesGemm(const std::string& kernel) {
  return kernel == "im2col" || kernel == "gemm1x1" || kernel == "winograd" || kernel == "blas";
}

Expected<double> readEvictedMs(const fs::path& path) {
  ZP_TRY(runtime::evictFromPageCache(path));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return makeError("{}: cannot open: {}", path.string(), std::strerror(errno));
  std::vector<char> buf(size_t{4} << 20);
  const auto t0 = Clock::now();
  while (::read(fd, buf.data(), buf.size()) > 0) {
  }
  const double ms = msSinceStart(t0);
  ::close(fd);
  return ms;
}

int64_t elementBytes(int32_t type) {
  switch (type) {
    case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL: return 1;
    case onnx::TensorProto::INT16: case onnx::TensorProto::UINT16: case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: return 2;
    case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64: case onnx::TensorProto::DOUBLE: return 8;
    default: return 4;
  }
}

std::map<std::string, int64_t> initializerBytes(const onnx::ModelProto& m) {
  std::map<std::string, int64_t> out;
  for (const auto& t : m.graph().initializer()) {
    int64_t n = elementBytes(t.data_type());
    for (int64_t d : t.dims()) n *= d;
    out[t.name()] = n;
  }
  return out;
}

// One policy's session: per heavy node its transform and payload, per node first and warm execute.
struct PolicyRun {
  std::vector<runtime::NodeInfo> nodes;
  std::vector<double> first, warm;
  std::map<std::string, int64_t> cacheBytes, rawBytes;  // by node
};

Expected<PolicyRun> runPolicy(const fs::path& model, const std::string& policy, GemmLibrary gemm,
                              const ColdProfileParams& params, const std::map<std::string, int64_t>& initBytes) {
  runtime::SessionOptions o;
  o.threads = params.threads;
  o.gemm = gemm;
  o.kernels.policy = policy;
  o.computeSourceChecksums = true;
  ZP_ASSIGN_OR_RETURN(auto session, runtime::Session::load(model, o));
  PolicyRun r;
  r.nodes = session->nodes();
  const size_t n = r.nodes.size();
  r.first.assign(n, 0);
  std::vector<std::vector<double>> warm(n);
  runtime::TensorMap in = runtime::randomInputs(*session, 0);
  runtime::RunOptions first;
  first.onNode = [&](const runtime::NodeEvent& e) { r.first[e.step] = e.durMs; };
  ZP_TRY(session->run(in, first));
  runtime::RunOptions again;
  again.onNode = [&](const runtime::NodeEvent& e) { warm[e.step].push_back(e.durMs); };
  for (int i = 0; i < params.warmRepeat; ++i) ZP_TRY(session->run(in, again));
  for (size_t i = 0; i < n; ++i) r.warm.push_back(warm[i].empty() ? r.first[i] : median(warm[i]));
  const fs::path cachePath = params.workDir / fmt::format("cold_profile.{}.zpc", policy);
  ZP_TRY(session->writeCache(cachePath));
  {
    ZP_ASSIGN_OR_RETURN(auto cache, runtime::WeightCache::open(cachePath));
    for (const auto& info : r.nodes) {
      if (!info.hasWeights) continue;
      int64_t bytes = 0;
      for (auto [offset, size] : cache->payloadExtents(info.name)) bytes += static_cast<int64_t>(size);
      r.cacheBytes[info.name] = bytes;
      int64_t raw = 0;
      if (const auto* e = cache->entry(info.name))
        for (const auto& s : e->sources)
          if (auto it = initBytes.find(s); it != initBytes.end()) raw += it->second;
      r.rawBytes[info.name] = raw;
    }
  }
  std::error_code ec;
  fs::remove(cachePath, ec);
  return r;
}

}  // namespace

Status measureColdHost(const ColdProfileParams& params, profile::ColdProfile& out) {
  out.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  out.threads = params.threads;
  for (const auto& key : params.gemmLibraries) {
    GemmLibrary g;
    if (!runtime::parseGemmLibrary(key, &g)) return makeError("unknown GEMM library '{}'", key);
    if (runtime::gemmLibraryStarted(g))
      return makeError("GEMM library '{}' already ran in this process: its start-up cannot be timed", key);
    runtime::useSingleThreadedGemm();
    const auto t0 = Clock::now();
    runtime::startGemmLibrary(g);
    out.gemmStartupMs[key] = msSinceStart(t0);
  }
  std::error_code ec;
  fs::create_directories(params.workDir, ec);
  const fs::path probe = params.workDir / "cold_profile.storage-probe";
  {
    std::string bytes(static_cast<size_t>(params.probeBytes), '\0');
    std::mt19937_64 rng(0);  // incompressible content
    for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
      uint64_t v = rng();
      std::memcpy(&bytes[i], &v, 8);
    }
    ZP_TRY(writeFileAtomic(probe, bytes));
  }
  std::vector<double> ms;
  for (int i = 0; i < 3; ++i) {
    auto t = readEvictedMs(probe);
    if (!t.ok()) {
      fs::remove(probe, ec);
      return t.error();
    }
    ms.push_back(*t);
  }
  fs::remove(probe, ec);
  out.storageProbeBytes = params.probeBytes;
  out.storageMBps = static_cast<double>(params.probeBytes) / 1e6 / (std::max(median(ms), 1e-6) / 1e3);
  return {};
}

Status measureColdModel(const fs::path& model, const std::string& label, const ColdProfileParams& params,
                        profile::ColdProfile& out) {
  ZP_ASSIGN_OR_RETURN(onnx::ModelProto proto, graph::loadModel(model));
  const auto initBytes = initializerBytes(proto);
  std::error_code ec;
  fs::create_directories(params.workDir, ec);
  // Rows by (step, kernel, gemm); light nodes once.
  std::map<std::tuple<int, std::string, std::string>, profile::ColdNodeCost> rows;
  std::vector<std::string> policies = {"default"};
  policies.insert(policies.end(), params.kernels.begin(), params.kernels.end());
  for (size_t li = 0; li < params.gemmLibraries.size(); ++li) {
    GemmLibrary g;
    if (!runtime::parseGemmLibrary(params.gemmLibraries[li], &g))
      return makeError("unknown GEMM library '{}'", params.gemmLibraries[li]);
    for (const auto& policy : policies) {
      if (li > 0 && policy != "default" && !kernelUsesGemm(policy)) continue;  // measured with the first library
      ZP_ASSIGN_OR_RETURN(PolicyRun r, runPolicy(model, policy, g, params, initBytes));
      for (size_t i = 0; i < r.nodes.size(); ++i) {
        const auto& info = r.nodes[i];
        profile::ColdNodeCost c;
        c.model = label, c.step = static_cast<int>(i), c.node = info.name, c.opType = info.opType;
        if (info.hasWeights) {
          c.kernel = info.kernel;
          c.gemm = kernelUsesGemm(info.kernel) ? params.gemmLibraries[li] : "";
          c.rawBytes = r.rawBytes[info.name];
          c.cacheBytes = r.cacheBytes[info.name];
          c.transformMs = info.transformMs;
        }
        c.firstExecMs = r.first[i];
        c.warmExecMs = r.warm[i];
        rows.emplace(std::make_tuple(c.step, c.kernel, c.gemm), c);  // the first measurement stays
      }
    }
  }
  // Setup: a cold load from a cache of the default kernels, first library.
  runtime::SessionOptions o;
  o.threads = params.threads;
  runtime::parseGemmLibrary(params.gemmLibraries.front(), &o.gemm);
  o.computeSourceChecksums = true;
  const fs::path cachePath = params.workDir / "cold_profile.setup.zpc";
  {
    ZP_ASSIGN_OR_RETURN(auto s, runtime::Session::load(model, o));
    ZP_TRY(s->writeCache(cachePath, /*identifyModelFile=*/true));
  }
  o.cache = cachePath;
  auto cold = runtime::measureCold(model, o, {}, nullptr);
  fs::remove(cachePath, ec);
  if (!cold.ok()) return cold.error();
  if (!cold->first.load.fromCache)
    return makeError("{}: the cold load did not use the weight cache written for it", model.string());
  out.models.push_back({label, cold->first.load.totalMs});
  for (auto& [key, row] : rows) out.nodes.push_back(std::move(row));
  return {};
}

}  // namespace zp::measure
