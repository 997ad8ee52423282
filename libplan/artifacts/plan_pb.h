// plan.pb: Plan <-> planpb::Plan (schemas/plan.proto), field by field, and the
// deterministic binary form plan-emit writes beside plan.json (plan_json.h).
#pragma once
#include <string>
#include <string_view>

#include "libplan/plan/plan.h"
#include "libplan/util/error.h"
#include "schemas/plan.pb.h"

namespace zp::artifacts {

planpb::Plan toProto(const plan::Plan& p);
// `label` names the source in errors (a file path).
Expected<plan::Plan> fromProto(const planpb::Plan& m, const std::string& label);

// Deterministic serialization: identical plans give identical bytes.
std::string serializePlanPb(const plan::Plan& p);
Expected<plan::Plan> parsePlanPb(std::string_view bytes, const std::string& label);

}  // namespace zp::artifacts
