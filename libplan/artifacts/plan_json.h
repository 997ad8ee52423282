// plan.json: the plan's canonical JSON rendering (sorted keys, stable floats,
// byte-identical for identical plans), its writer and its checked reader
// (types, ranges, ids, thread counts; errors name the file and the JSON path).
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "libplan/plan/plan.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"
#include "libplan/util/json_reader.h"

namespace zp::artifacts {

// A processor as the stitch and operator-placement sections record it.
Json toJson(const Processor& p);
Expected<Processor> processorFromJson(const JsonAt& p);
// A section's "processors": the names of plan processors it uses, at least one, each once.
Expected<std::vector<std::string>> processorNamesFromJson(const JsonAt& section);
// A weight-shared group's member as the stitch and MTS sections record it: its
// input and outputs in its own model and in the stitched graph.
Json toJson(const plan::GroupMember& m);
Expected<plan::GroupMember> groupMemberFromJson(const JsonAt& j);
Json toJson(const plan::StitchPlan& s);
Expected<plan::StitchPlan> stitchPlanFromJson(const Json& j, const std::string& label);
Json toJson(const plan::ConcurrentSchedule& c);
Expected<plan::ConcurrentSchedule> concurrentFromJson(const Json& j, const std::string& label, const std::string& path);
Json toJson(const plan::OpPlacement& o);
Expected<plan::OpPlacement> opPlacementFromJson(const Json& j, const std::string& label, const std::string& path);
Json toJson(const plan::ColdPlan& c);
Expected<plan::ColdPlan> coldPlanFromJson(const JsonAt& j);
Json toJson(const plan::MtsPlan& m);
Expected<plan::MtsPlan> mtsPlanFromJson(const JsonAt& j);
Json toJson(const plan::Plan& p);
Expected<plan::Plan> planFromJson(const Json& j, const std::string& label);

// Canonical bytes (util/json.h canonicalJson) and atomic write / checked read.
std::string planToText(const plan::Plan& p);
Status writePlan(const plan::Plan& p, const std::filesystem::path& path);
Expected<plan::Plan> readPlan(const std::filesystem::path& path);
Expected<plan::Plan> parsePlanJson(std::string_view text, const std::string& label);

}  // namespace zp::artifacts
