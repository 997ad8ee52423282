#!/usr/bin/env bash
# The README's main command: bootstrap, build, then the whole pipeline on a zoo
# — zoo-stitch -> zoo-profile -> plan-solve -> plan-emit -> plan-run — ending
# with the measured table: every system the plan carries (zooplan, Algorithm-1,
# the six SparseLoom baselines) served by the executor on one arrival trace,
# measured beside predicted. Then the deployment zoo (testdata/deployment: one
# model per technique) through the same pipeline, planned for its own workload
# (slo.json: request rates, camera frames, a device memory budget), ending with
# its measured table, the plan's choice first.
#   scripts/demo.sh [OUT_DIR] [ZOO_JSON] [RATE_QPS_PER_TASK]
# The zoo defaults to the realistic-scale one (testdata/realistic: a ResNet-20,
# a MobileNetV2 and a small vision transformer on digits, seven variants each,
# on two processors pinned to cores 0 and 1); the rate to 50 queries per second
# per task. Outputs go to OUT_DIR (out/). On two idle cores the whole job takes
# about 10 minutes after the build (zoo-profile about 3 of them).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out}"
zoo="${2:-testdata/realistic/zoo.json}"
rate="${3:-50}"
bash scripts/bootstrap.sh
echo "== building the tools (not the test suite; the first build takes minutes on 2 cores)"
bash scripts/build.sh --tools
bin=build/bin

step() { echo; echo "== $*"; }
step "zoo-stitch $zoo -> $out/stitch"
"$bin/zoo-stitch" "$zoo" -o "$out/stitch"
step "zoo-profile $out/stitch -> $out/profile"
"$bin/zoo-profile" "$out/stitch" -o "$out/profile"
step "plan-solve $out/profile -> $out/plan.json (zooplan's choice made for $rate q/s per task, C07, C13, C19 served in turn)"
"$bin/plan-solve" "$out/profile" -o "$out/plan.json" --slo grid --rate "$rate" --serve-in-turn C07,C13,C19 --evaluate "$out/evaluation.json" \
  --trace "$out/schedule.trace.json" --svg-dir "$out/svg" | grep -v "^  infeasible"
if [ -x "$bin/plan-emit" ]; then
  step "plan-emit $out/plan.json -> $out/bundle"
  "$bin/plan-emit" "$out/plan.json" -o "$out/bundle"
  step "plan-run $out/bundle"
  "$bin/plan-run" "$out/bundle"
fi
echo
echo "plan:       $out/plan.json"
echo "bundle:     $out/bundle"
echo "evaluation: $out/evaluation.json"
echo "trace:      $out/schedule.trace.json (open in ui.perfetto.dev or chrome://tracing)"
echo "serving:    $out/serve.json (measured and predicted per system), $out/serve.trace.json (measured timeline, one track per processor)"
echo "plots:      $out/svg/<task>.svg (accuracy-latency space, Pareto front, chosen variant)"
if [ -x "$bin/plan-emit" ]; then
  step "plan-run $out/bundle --serve: every system on one Poisson trace ($rate q/s per task), SLO configurations C07, C13, C19 in turn"
  "$bin/plan-run" "$out/bundle" --serve --compare all --slo C07,C13,C19 --rate "$rate" --duration-ms 10000 --seed 1 --rounds 5 \
    --json "$out/serve.json" --trace "$out/serve.trace.json"
fi

# The deployment zoo, planned for its workload file: the choice is made for its rates, its camera
# frames and its memory budget, and served the same way (frames as DNN chains, units kept resident
# under the budget as the planner kept them, the others loaded on demand, by their NNV12 cold
# sections where those loads calibrated faster than from the weight caches).
dep="$out/deployment"
step "deployment zoo: zoo-stitch, zoo-profile, plan-solve --slo testdata/deployment/slo.json, plan-emit -> $dep"
"$bin/zoo-stitch" testdata/deployment/zoo.json -o "$dep/stitch" >/dev/null
"$bin/zoo-profile" "$dep/stitch" -o "$dep/profile" --cold-profile | tail -1
"$bin/plan-solve" "$dep/profile" -o "$dep/plan.json" --slo testdata/deployment/slo.json | sed -n 1,2p
"$bin/plan-emit" "$dep/plan.json" -o "$dep/bundle" >/dev/null
# Each technique alone (plan-solve --only) on the same profile and workload, served beside the
# composed plan's systems on the same trace in the same rounds (plan-run --with).
alone=()
for t in sparseloom:SparseLoom haxconn:HaX-CoNN mts:MTS sparoa:SparOA nnv12:NNV12; do
  "$bin/plan-solve" "$dep/profile" -o "$dep/plan-${t%%:*}.json" --slo testdata/deployment/slo.json --only "${t%%:*}" --quiet >/dev/null
  "$bin/plan-emit" "$dep/plan-${t%%:*}.json" -o "$dep/bundle-${t%%:*}" >/dev/null
  alone+=(--with "${t#*:}-alone=$dep/bundle-${t%%:*}")
done
step "plan-run $dep/bundle --serve: every system and each technique alone on the workload the plan was made for (10 s, 3 rounds)"
"$bin/plan-run" "$dep/bundle" --serve --compare all "${alone[@]}" --duration-ms 10000 --seed 1 --rounds 3 \
  --json "$dep/serve.json" --trace "$dep/serve.trace.json"
