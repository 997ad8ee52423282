#!/usr/bin/env bash
# Soak test of plan-run --serve's admission control (not in CI's tiers: minutes).
#   scripts/soak_serve.sh [WORK_DIR]
# Builds a bundle of the realistic zoo (zoo-profile with few timed runs), measures
# its capacity (queries per second served back to back), then serves
#   1. Poisson arrivals at 10x that capacity for 60 s,
#   2. 10^6 arrivals at time 0 (an arrivals CSV),
# and prints for each: exit code, queries, dropped, violations and the process's
# peak RSS (plan-run's --json). Exits 1 when a run fails or drops nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
work="${1:-build/soak_serve}"
bin=build/bin
PY=/usr/bin/python3
mkdir -p "$work"
if [ ! -f "$work/bundle/plan.pb" ]; then
  "$bin/zoo-stitch" testdata/realistic/zoo.json -o "$work/stitch" >/dev/null
  "$bin/zoo-profile" "$work/stitch" -o "$work/profile" --repeat 5 --warmup 1 --latency-validation 4 \
    --exhaustive-limit 0 --training-fraction 0.3 --jobs 2 >/dev/null
  "$bin/plan-solve" "$work/profile" -o "$work/plan.json" >/dev/null
  "$bin/plan-emit" "$work/plan.json" -o "$work/bundle" >/dev/null
fi
summary() {  # summary NAME JSON: one line per system
  $PY - "$1" "$2" <<'PYEOF'
import json, sys
name, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
for system, s in sorted(r["systems"].items()):
    m = s["measured"]
    print(f"{name}: {system}: {m['queries']} queries, {m['dropped']} dropped, {m['violations']} violations, "
          f"{m['throughput_qps']:.0f} q/s, peak RSS {m['peak_rss_bytes'] / 1e6:.0f} MB")
PYEOF
}
# Capacity: 2000 queries per task at once, served back to back by zooplan's plan.
"$bin/plan-run" "$work/bundle" --serve --calibration-rounds 0 --rate 1000000 --count 2000 \
  --max-queue 2000 --json "$work/capacity.json" >/dev/null
capacity=$($PY -c "import json; print(json.load(open('$work/capacity.json'))['systems']['zooplan']['measured']['throughput_qps'])")
tasks=$($PY -c "import json; print(len(json.load(open('$work/capacity.json'))['tasks']))" 2>/dev/null || echo 3)
rate=$($PY -c "print(10 * $capacity / $tasks)")
echo "capacity: $capacity q/s over $tasks tasks; serving $rate q/s per task (10x) for 60 s"
status=0
rc=0
"$bin/plan-run" "$work/bundle" --serve --calibration-rounds 0 --rate "$rate" --duration-ms 60000 \
  --json "$work/overload.json" >/dev/null || rc=$?
echo "10x capacity for 60 s: exit $rc"
[ $rc -eq 0 ] && summary "10x capacity" "$work/overload.json" || status=1
$PY - "$work/burst.csv" <<'PYEOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("time_ms,task,sample\n")
    tasks = ["resnet", "mobilenet", "vit"]
    for k in range(1000000):
        f.write(f"0,{tasks[k % 3]},{(k // 3) % 64}\n")
PYEOF
rc=0
"$bin/plan-run" "$work/bundle" --serve --calibration-rounds 0 --arrivals "$work/burst.csv" \
  --json "$work/burst.json" >/dev/null || rc=$?
echo "10^6 arrivals at time 0: exit $rc"
[ $rc -eq 0 ] && summary "burst" "$work/burst.json" || status=1
for f in overload burst; do
  [ -f "$work/$f.json" ] && $PY -c "
import json, sys
r = json.load(open('$work/$f.json'))
sys.exit(0 if all(s['measured']['dropped'] > 0 for s in r['systems'].values()) else 1)" || status=1
done
exit $status
