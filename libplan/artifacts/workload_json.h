// workload.json (schemas/workload.schema.json), parsed only: the DNNs to run
// concurrently and where each one's layer groups come from (inline rows, a
// group rows CSV, or an ONNX model with a profile to group), the accelerators,
// how the DNNs relate (independent, pipeline via dependsOn, several instances),
// the contention CSV, the objective, and optionally the host processors the
// accelerators are when plan-run executes a schedule. Nothing is loaded here: the files it
// names are read, and models grouped, by the concurrent flow's driver.
// Errors name the file and the JSON path.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libplan/plan/stitch_plan.h"
#include "libplan/sim/concurrent/problem.h"
#include "libplan/util/error.h"

namespace zp::artifacts {

// A model DNN's "grouping" options; unset: the grouping pass's defaults.
struct GroupingOptions {
  std::optional<double> minTimeToTransition, transitionOverheadMs, transitionBandwidthGBs, peakBandwidthGBs;
  std::optional<int> maxGroups;
};

struct WorkloadDnn {
  enum class Source { Groups, GroupsCsv, Model, ZooVariant };
  std::string name;
  std::string jsonPath;  // "$.dnns[N]", where messages about it point
  int instances = 1;
  std::vector<std::string> dependsOn;  // DNNs listed before this one
  Source source = Source::Groups;
  std::vector<sim::GroupCost> groups;  // Source::Groups: the rows as written
  std::filesystem::path groupsCsv;     // Source::GroupsCsv: resolved against the workload's folder
  std::filesystem::path model, profile;  // Source::Model: ONNX model and profile CSV (resolved)
  std::string task, variant;             // Source::Model: which node rows of the profile; ZooVariant: which variant
  // Source::ZooVariant: a variant of a zoo (its ONNX file) with the per-node
  // profile zoo-profile measured of it (PROFILE_DIR/node_profile.csv); the
  // accelerators are the zoo's processors, by name.
  std::filesystem::path zoo, profileDir;
  GroupingOptions grouping;              // Source::Model
};

struct WorkloadSpec {
  std::string name;
  std::vector<std::string> accelerators;
  sim::Objective objective = sim::Objective::Latency;
  std::optional<std::filesystem::path> contention;  // resolved against the workload's folder
  // The host processor of each accelerator (in accelerator order) when a
  // schedule runs for real: its cores, kernel policy, GEMM library and threads.
  // Empty: none given (plans of the workload are simulated only).
  std::vector<Processor> processors;
  std::vector<WorkloadDnn> dnns;
};

// `label` names the document in errors; relative paths resolve against `baseDir`.
Expected<WorkloadSpec> parseWorkloadJson(const std::string& text, const std::string& label,
                                         const std::filesystem::path& baseDir);
Expected<WorkloadSpec> readWorkloadJson(const std::filesystem::path& path);

// workload.json for `spec`; paths are written relative to `baseDir` (the folder
// the file goes to) when they lie under it, so parsing the text with the same
// `baseDir` gives `spec` back. Numbers in full; keys sorted.
std::string formatWorkloadJson(const WorkloadSpec& spec, const std::filesystem::path& baseDir);

}  // namespace zp::artifacts
