// What every run of plan-run shares besides the bundle (drivers/run/bundle.h):
// a task's dataset samples, the systems --compare names, the user's inputs
// checked against a model's, and outputs compared against a reference.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libplan/artifacts/bundle_manifest.h"
#include "libplan/plan/plan.h"
#include "libplan/runtime/serve/processor.h"
#include "libplan/runtime/session.h"
#include "libplan/zoo/zoo.h"

namespace zp::drivers {

struct Dataset {
  std::vector<runtime::Tensor> samples;
  std::vector<int64_t> labels;  // empty: none
  std::string source;           // "dataset" | "random"
};

// The input's shape with dynamic dimensions set to 1.
runtime::Shape staticShape(const runtime::IoInfo& io);

// The first `limit` samples of the task's dataset, each reshaped to the
// chain's input (batch 1); empty when there is none (then `why` says so).
Expected<Dataset> datasetSamples(const zoo::Zoo& zoo, const std::string& task, const runtime::IoInfo& input,
                                 int limit, std::string* why);

// What a run executes: the plan's chosen system first, then the systems
// --compare names ("all": every other one, in the plan's order). An unknown
// name is an error naming the ones the plan carries.
Expected<std::vector<std::string>> systemsToRun(const std::vector<std::string>& planSystems, const std::string& chosen,
                                                const std::vector<std::string>& compare);
// The same over a plan's systems (anything with a `name`): the ones to run, in order.
template <typename System>
Expected<std::vector<const System*>> selectSystems(const std::vector<System>& systems, const std::string& chosen,
                                                   const std::vector<std::string>& compare) {
  std::vector<std::string> names;
  for (const auto& s : systems) names.push_back(s.name);
  ZP_ASSIGN_OR_RETURN(const auto run, systemsToRun(names, chosen, compare));
  std::vector<const System*> out;
  for (const auto& name : run)
    for (const auto& s : systems)
      if (s.name == name) out.push_back(&s);
  return out;
}

// Why a user's tensor cannot feed `input` (dtype, rank or a fixed dim differs); nothing: it can.
std::optional<std::string> inputMismatch(const runtime::IoInfo& input, const runtime::Tensor& t);
// An output's file name under --save-outputs: NAME.npy, path separators replaced.
std::string npyFileName(std::string name);

// Index of the largest element.
int64_t argmax(const runtime::Tensor& t);

// The largest |got - want| over the outputs `want` names (infinite when one is
// missing, has another shape or is NaN), and the largest |want|: a run matches
// its reference when maxAbsDiff <= tolerance * max(1, refScale).
struct OutputDiff {
  double maxAbsDiff = 0, refScale = 0;
  void add(const runtime::TensorMap& got, const runtime::TensorMap& want);
  bool within(double tolerance) const;
};

}  // namespace zp::drivers
