// Plan <-> planpb::Plan (schemas/plan.proto), field by field, and the
// deterministic binary form plan-emit writes as plan.pb.
#pragma once
#include <string>
#include <string_view>

#include "libplan/plan/plan.h"
#include "libplan/util/error.h"
#include "schemas/plan.pb.h"

namespace zp::emit {

planpb::Plan toProto(const plan::Plan& p);
// `label` names the source in errors (a file path).
Expected<plan::Plan> fromProto(const planpb::Plan& m, const std::string& label);

// Deterministic serialization: identical plans give identical bytes.
std::string serializePlan(const plan::Plan& p);
Expected<plan::Plan> parsePlan(std::string_view bytes, const std::string& label);

}  // namespace zp::emit
