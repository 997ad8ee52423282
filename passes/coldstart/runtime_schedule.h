// A plan's cold section (libplan/plan/cold_plan.h) as the runtime follows it
// (libplan/runtime/cold_schedule.h): what plan-emit writes a bundle's cold caches
// for and plan-run runs.
#pragma once
#include <string>

#include "libplan/plan/cold_plan.h"
#include "libplan/runtime/cold_schedule.h"
#include "libplan/util/error.h"

namespace zp::coldstart {

// `where` names the plan in errors (an unknown GEMM library).
Expected<runtime::ColdSchedule> coldScheduleOf(const plan::ColdPlan& plan, const std::string& where);

}  // namespace zp::coldstart
