// plan-run BUNDLE --serve for a plan with an MTS section: every stitched group
// is a unit that queries arrive for (one query: one sample for every member
// task, periodic or Poisson from a seed, or an arrivals CSV naming the
// groups). Each system the plan carries is served on the pinned processors by
// the executor (libplan/runtime/serve): zooplan and one-processor run each
// unit's stitched graph once per query, sequential runs the members' own models
// one after another; a query ends when its last member's outputs are ready.
// Before anything is served, the stitched graphs' outputs are checked against
// the members' own on dataset samples. Beside each measurement, the open-loop
// simulator's prediction from the plan's measured costs and from run times
// calibrated as serving sees them.
#pragma once
#include "drivers/run/serve_bundle.h"
#include "libplan/artifacts/bundle_manifest.h"
#include "libplan/plan/plan.h"

namespace zp::drivers {

Expected<ServeBundleResult> serveMtsBundle(const ServeBundleParams& params, const plan::Plan& plan,
                                           const artifacts::BundleManifest& manifest);

}  // namespace zp::drivers
