#include "libplan/artifacts/profile_shard.h"

#include <algorithm>
#include <charconv>

#include "libplan/util/json_reader.h"
#include "libplan/util/validate.h"
#include "libplan/zoo/stitch_manifest.h"

namespace zp::artifacts {
namespace {

constexpr int kMaxShards = 1'000'000;

std::string correctText(const std::vector<uint8_t>& c) {
  std::string s;
  for (uint8_t x : c) s += x ? '1' : '0';
  return s;
}

Json shardJson(const ProfileShard& s) {
  Json j{{"schema_version", 1}, {"tool", s.tool}, {"shard", Json{{"index", s.index}, {"count", s.count}}},
         {"units", Json{{"run", s.runUnits}, {"shard", s.units}}}, {"stitch_dir", s.stitchDir},
         {"inputs", s.inputs}, {"params", s.params}};
  for (const char* k : {"overheads", "subgraphs", "transitions", "nodes", "originals", "combinations", "wholes"})
    j[k] = Json::array();
  for (const auto& o : s.overheads) j["overheads"].push_back(Json{{"config", o.config}, {"ms", o.ms}});
  for (const auto& g : s.subgraphs)
    j["subgraphs"].push_back(Json{{"hash", g.hash}, {"config", g.config}, {"median_ms", g.medianMs}, {"p90_ms", g.p90Ms},
                                  {"runs", g.runs}, {"memory_bytes", g.memoryBytes}});
  for (const auto& t : s.transitions)
    j["transitions"].push_back(Json{{"task", t.task}, {"boundary", t.boundary}, {"ms", t.ms}});
  for (const auto& n : s.nodes)
    j["nodes"].push_back(Json{{"task", n.task}, {"variant", n.variant}, {"config", n.config},
                              {"csv", formatNodeProfileCsv(n.rows)}});
  for (const auto& o : s.originals)
    j["originals"].push_back(Json{{"task", o.task}, {"variant", o.variant}, {"accuracy", o.accuracy},
                                  {"correct", correctText(o.correct)}});
  for (const auto& c : s.combinations)
    j["combinations"].push_back(Json{{"task", c.task}, {"combination", c.combination}, {"accuracy", c.accuracy}});
  for (const auto& w : s.wholes)
    j["wholes"].push_back(Json{{"task", w.task}, {"combination", w.combination}, {"processor", w.processor}, {"ms", w.ms}});
  return j;
}

// Short and printable: safe to quote in a one-line message.
bool printable(const std::string& s) {
  return s.size() < 100 && std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// "POLICY@THREADS", as Processor::label() writes it.
Expected<std::string> configLabel(const JsonAt& j) {
  ZP_ASSIGN_OR_RETURN(std::string s, j.string("config"));
  const auto at = s.find('@');
  int64_t threads = 0;
  const char* end = s.data() + s.size();
  if (at == std::string::npos || !isSafeId(s.substr(0, at)) ||
      std::from_chars(s.data() + at + 1, end, threads).ptr != end || threads < 1 || threads > 100000)
    return j.error(printable(s) ? fmt::format("config: '{}' is not POLICY@THREADS", s)
                                : std::string("config: not POLICY@THREADS"));
  return s;
}

Expected<std::string> contentHash(const JsonAt& j) {
  ZP_ASSIGN_OR_RETURN(std::string h, j.string("hash"));
  if (h.size() != 64 || h.find_first_not_of("0123456789abcdef") != std::string::npos)
    return j.error("hash: not a SHA-256 in lowercase hex");
  return h;
}

Expected<std::string> combinationId(const JsonAt& j) {
  ZP_ASSIGN_OR_RETURN(std::string id, j.string("combination"));
  if (zoo::combinationIdProblem(id)) return j.error("combination: not variant ids joined by '+'");
  return id;
}

Expected<double> latency(const JsonAt& j, const char* key) { return j.number(key, 0, kMaxLatencyMs); }

Status parseMeasurements(const JsonAt& root, ProfileShard& s) {
  ZP_ASSIGN_OR_RETURN(auto overheads, root.array("overheads"));
  for (const auto& o : overheads) {
    ZP_TRY(o.onlyKeys({"config", "ms"}));
    ShardOverhead x;
    ZP_ASSIGN_OR_RETURN(x.config, configLabel(o));
    ZP_ASSIGN_OR_RETURN(x.ms, latency(o, "ms"));
    s.overheads.push_back(x);
  }
  ZP_ASSIGN_OR_RETURN(auto subgraphs, root.array("subgraphs"));
  for (const auto& g : subgraphs) {
    ZP_TRY(g.onlyKeys({"hash", "config", "median_ms", "p90_ms", "runs", "memory_bytes"}));
    ShardSubgraph x;
    ZP_ASSIGN_OR_RETURN(x.hash, contentHash(g));
    ZP_ASSIGN_OR_RETURN(x.config, configLabel(g));
    ZP_ASSIGN_OR_RETURN(x.medianMs, latency(g, "median_ms"));
    ZP_ASSIGN_OR_RETURN(x.p90Ms, latency(g, "p90_ms"));
    ZP_ASSIGN_OR_RETURN(int64_t runs, g.integer("runs", 1, 1'000'000));
    x.runs = static_cast<int>(runs);
    ZP_ASSIGN_OR_RETURN(x.memoryBytes, g.integer("memory_bytes", 0, int64_t{1} << 50));
    s.subgraphs.push_back(x);
  }
  ZP_ASSIGN_OR_RETURN(auto transitions, root.array("transitions"));
  for (const auto& t : transitions) {
    ZP_TRY(t.onlyKeys({"task", "boundary", "ms"}));
    ShardTransition x;
    ZP_ASSIGN_OR_RETURN(x.task, t.id("task"));
    ZP_ASSIGN_OR_RETURN(int64_t boundary, t.integer("boundary", 0, 1000));
    x.boundary = static_cast<int>(boundary);
    ZP_ASSIGN_OR_RETURN(x.ms, latency(t, "ms"));
    s.transitions.push_back(x);
  }
  return {};
}

Status parseAccuracyAndWholes(const JsonAt& root, ProfileShard& s) {
  ZP_ASSIGN_OR_RETURN(auto nodes, root.array("nodes"));
  for (const auto& n : nodes) {
    ZP_TRY(n.onlyKeys({"task", "variant", "config", "csv"}));
    ShardNodes x;
    ZP_ASSIGN_OR_RETURN(x.task, n.id("task"));
    ZP_ASSIGN_OR_RETURN(x.variant, n.id("variant"));
    ZP_ASSIGN_OR_RETURN(x.config, configLabel(n));
    ZP_ASSIGN_OR_RETURN(std::string csv, n.string("csv"));
    ZP_ASSIGN_OR_RETURN(x.rows, parseNodeProfileCsv(csv, n.file() + ": " + n.path() + ".csv"));
    s.nodes.push_back(std::move(x));
  }
  ZP_ASSIGN_OR_RETURN(auto originals, root.array("originals"));
  for (const auto& o : originals) {
    ZP_TRY(o.onlyKeys({"task", "variant", "accuracy", "correct"}));
    ShardOriginal x;
    ZP_ASSIGN_OR_RETURN(x.task, o.id("task"));
    ZP_ASSIGN_OR_RETURN(x.variant, o.id("variant"));
    ZP_ASSIGN_OR_RETURN(x.accuracy, o.number("accuracy", 0, 1));
    ZP_ASSIGN_OR_RETURN(std::string correct, o.string("correct"));
    if (correct.find_first_not_of("01") != std::string::npos) return o.error("correct: not a string of '0' and '1'");
    for (char c : correct) x.correct.push_back(c == '1');
    s.originals.push_back(std::move(x));
  }
  ZP_ASSIGN_OR_RETURN(auto combinations, root.array("combinations"));
  for (const auto& c : combinations) {
    ZP_TRY(c.onlyKeys({"task", "combination", "accuracy"}));
    ShardCombination x;
    ZP_ASSIGN_OR_RETURN(x.task, c.id("task"));
    ZP_ASSIGN_OR_RETURN(x.combination, combinationId(c));
    ZP_ASSIGN_OR_RETURN(x.accuracy, c.number("accuracy", 0, 1));
    s.combinations.push_back(x);
  }
  ZP_ASSIGN_OR_RETURN(auto wholes, root.array("wholes"));
  for (const auto& w : wholes) {
    ZP_TRY(w.onlyKeys({"task", "combination", "processor", "ms"}));
    ShardWhole x;
    ZP_ASSIGN_OR_RETURN(x.task, w.id("task"));
    ZP_ASSIGN_OR_RETURN(x.combination, combinationId(w));
    ZP_ASSIGN_OR_RETURN(x.processor, w.id("processor"));
    ZP_ASSIGN_OR_RETURN(x.ms, latency(w, "ms"));
    s.wholes.push_back(x);
  }
  return {};
}

}  // namespace

std::string formatProfileShard(const ProfileShard& shard) { return canonicalJsonExact(shardJson(shard)); }

Expected<ProfileShard> parseProfileShard(std::string_view text, const std::string& label) {
  ZP_ASSIGN_OR_RETURN(Json j, parseJson(text, label));
  JsonAt root(j, label);
  ZP_TRY(root.onlyKeys({"schema_version", "tool", "shard", "units", "stitch_dir", "inputs", "params", "overheads",
                        "subgraphs", "transitions", "nodes", "originals", "combinations", "wholes"}));
  ZP_ASSIGN_OR_RETURN(int64_t version, root.integer("schema_version"));
  if (version != 1) return root.error(fmt::format("unsupported schema_version {} (expected 1)", version));
  ProfileShard s;
  ZP_ASSIGN_OR_RETURN(s.tool, root.string("tool"));
  ZP_ASSIGN_OR_RETURN(JsonAt shard, root.at("shard"));
  ZP_TRY(shard.onlyKeys({"index", "count"}));
  ZP_ASSIGN_OR_RETURN(int64_t count, shard.integer("count", 1, kMaxShards));
  ZP_ASSIGN_OR_RETURN(int64_t index, shard.integer("index", 0, count - 1));
  s.count = static_cast<int>(count);
  s.index = static_cast<int>(index);
  ZP_ASSIGN_OR_RETURN(JsonAt units, root.at("units"));
  ZP_TRY(units.onlyKeys({"run", "shard"}));
  ZP_ASSIGN_OR_RETURN(int64_t runUnits, units.integer("run", 0, int64_t{1} << 50));
  ZP_ASSIGN_OR_RETURN(int64_t shardUnits, units.integer("shard", 0, runUnits));
  s.runUnits = static_cast<uint64_t>(runUnits);
  s.units = static_cast<uint64_t>(shardUnits);
  ZP_ASSIGN_OR_RETURN(s.stitchDir, root.string("stitch_dir"));
  if (s.stitchDir.empty()) return root.error("stitch_dir: empty");
  for (const char* k : {"inputs", "params"}) {
    ZP_ASSIGN_OR_RETURN(JsonAt o, root.at(k));
    if (!o.json().is_object()) return o.error("expected an object");
    (std::string(k) == "inputs" ? s.inputs : s.params) = o.json();
  }
  ZP_TRY(parseMeasurements(root, s));
  ZP_TRY(parseAccuracyAndWholes(root, s));
  return s;
}

}  // namespace zp::artifacts
