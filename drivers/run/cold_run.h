// plan-run's cold runs that follow a cold-start plan (the cold section of a plan,
// libplan/plan/cold_plan.h): the plan as the runtime's schedule, and what the run
// did per node — read, transform and execute, when and on which core (-1: the
// reader), steals marked — beside what the plan predicted, as JSON, a table and a
// Chrome trace with one track per thread.
#pragma once
#include <filesystem>
#include <string>

#include "libplan/plan/cold_plan.h"
#include "libplan/runtime/session.h"
#include "libplan/util/error.h"
#include "libplan/util/json.h"
#include "passes/coldstart/runtime_schedule.h"

namespace zp::drivers {

// The cold section of plan.json for `model` (named by its stem; the only one when
// the plan has one), refused unless the plan was made from that very file (its
// sha256 among the plan's inputs).
Expected<plan::ColdPlan> readColdPlan(const std::filesystem::path& planFile, const std::filesystem::path& model);

// The cold run of `session` against `plan`: per node and in total.
Json coldRunJson(const runtime::ColdRunReport& report, const runtime::Session& session, const plan::ColdPlan& plan);
std::string coldRunTable(const runtime::ColdRunReport& report, const runtime::Session& session,
                         const plan::ColdPlan& plan);
// Tracks: the reader, core 0 (its executes and what it stole), the other cores.
Json coldRunTrace(const runtime::ColdRunReport& report, const runtime::Session& session, const std::string& title);

}  // namespace zp::drivers
