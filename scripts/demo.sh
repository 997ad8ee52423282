#!/usr/bin/env bash
# The README's main command: bootstrap, build, then the whole pipeline on the
# bundled multi-task zoo — zoo-stitch -> zoo-profile -> plan-solve -> plan-emit
# -> plan-run — ending with the SLO-violation and throughput table of zooplan
# against the six baselines. Outputs go to out/ (or the directory given).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out}"
bash scripts/bootstrap.sh
bash scripts/build.sh >/dev/null
bin=build/bin
zoo=testdata/multitask/zoo.json

step() { echo; echo "== $*"; }
step "zoo-stitch $zoo -> $out/stitch"
"$bin/zoo-stitch" "$zoo" -o "$out/stitch"
step "zoo-profile $out/stitch -> $out/profile"
"$bin/zoo-profile" "$out/stitch" -o "$out/profile"
step "plan-solve $out/profile -> $out/plan.json"
"$bin/plan-solve" "$out/profile" -o "$out/plan.json" --slo grid --evaluate "$out/evaluation.json" \
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
echo "plots:      $out/svg/<task>.svg (accuracy-latency space, Pareto front, chosen variant)"
