// Placing one model's operators on a zoo's host processors: the graph of
// executed nodes (with fused nodes' outputs followed) and the bytes on each
// edge from ONNX shape inference, per-node costs per processor from the
// per-node profile (measured when the model is in it, else predicted by the
// processor's latency predictor trained on the profile's other models),
// hand-off costs per processor pair, then passes/opplace and the plan section.
#pragma once
#include <string>
#include <vector>

#include "libplan/artifacts/node_profile_csv.h"
#include "libplan/estimate/latency_model.h"
#include "libplan/estimate/op_latency.h"
#include "libplan/plan/plan.h"
#include "libplan/zoo/zoo.h"
#include "passes/measure/host_measure.h"
#include "passes/opplace/opplace.h"

namespace zp::drivers::opplace_flow {

// The zoo's host processors, in zoo order (each with its kernel policy, threads,
// GEMM library and cores: how its per-node costs were measured; when every
// processor names its cores, processors sharing a core take turns in the cost
// model, e.g. one with all cores beside single-core ones).
std::vector<Processor> placeProcessors(const zoo::Zoo& zoo);

struct PlaceInputs {
  std::string modelKey;  // the model's name in the profile
  std::vector<Processor> processors;
  std::vector<artifacts::NodeProfileRow> profile;
  std::vector<std::vector<estimate::TransitionCost>> handoff;  // [from][to] over processors
  // Configurations that only run the whole model (baselines), e.g. default@2: costs as for processors.
  std::vector<Processor> alone;
  estimate::XgbParams predictor = estimate::defaultOpLatencyParams();
  uint64_t seed = 0;  // random inputs of the feature run of a model not in the profile
};

// Hand-off costs [from][to] between the processors named, from a latency
// model's measured transitions; an error (naming `source`) when one is missing.
Expected<std::vector<std::vector<estimate::TransitionCost>>> handOffCosts(const estimate::LatencyModel& model,
                                                                          const std::vector<std::string>& names,
                                                                          const std::string& source);

struct PlaceProblem {
  opplace::Problem problem;
  std::string costSource;  // "measured" when every cost was, else "predicted"
};

// `model` is shape-inferred.
Expected<PlaceProblem> buildPlaceProblem(const onnx::ModelProto& model, const PlaceInputs& inputs);

// `processors`: as problem.processors, in its order.
plan::OpPlacement placementSection(const opplace::Problem& problem, const opplace::PlacementResult& result,
                                   const std::vector<Processor>& processors, const plan::UnitId& unit,
                                   const std::string& costSource, const opplace::SolveParams& params);

}  // namespace zp::drivers::opplace_flow
