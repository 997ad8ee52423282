#!/usr/bin/env bash
# plan-solve on the multitask zoo: byte-identical plans, the SLO evaluation
# against the six baselines, preload gaps, infeasible SLOs, bad input.
source "$(dirname "$0")/lib.sh"
use_fixture multitask

"$BIN/plan-solve" "$PROF" -o "$WORK/a/plan.json" --evaluate "$WORK/a/eval.json" --svg-dir "$WORK/a/svg" \
  --trace "$WORK/a/trace.json" > "$WORK/a.txt"
"$BIN/plan-solve" "$PROF" -o "$WORK/b/plan.json" > "$WORK/b.txt"
cmp -s "$WORK/a/plan.json" "$WORK/b/plan.json" && pass "two runs give byte-identical plan.json" || fail "plan.json differs between runs"

# --rate: zooplan's choice made for the workload it will serve; without calibration
# (--calibration-rounds 0) the plan is a pure function of its inputs.
"$BIN/plan-solve" "$PROF" -o "$WORK/r1/plan.json" --rate 40 --calibration-rounds 0 > "$WORK/r1.txt"
"$BIN/plan-solve" "$PROF" -o "$WORK/r2/plan.json" --rate 40 --calibration-rounds 0 > "$WORK/r2.txt"
grep -q "zooplan's choice: served at 40 q/s per task (poisson, 10 s simulated), memory budget [0-9]* bytes (units resident by load cost per byte, the rest loaded on demand), run times as profiled" "$WORK/r1.txt" \
  && grep -q "^predicted at the workload (calibrated serving simulator; and with every calibrated time x1.4, choices compared by the mean of the two)" "$WORK/r1.txt" \
  && grep -q "^zooplan's choice: proven best of every mix of its candidates' decisions in [0-9]* of [0-9]* configuration" "$WORK/r1.txt" \
  && cmp -s "$WORK/r1/plan.json" "$WORK/r2/plan.json" \
  && $PY -c "
import json, sys
st = json.load(open(sys.argv[1]))['stitch']
assert 'arrival rates' in st['systems'][0]['description'], st['systems'][0]['description']
w = st['workload']
assert w['process'] == 'poisson' and set(w['rate_qps'].values()) == {40} and w['calibration']['rounds'] == 0, w
assert w['memory_budget_bytes'] > 0, w  # the first preload budget is the device's
# every system's choice is predicted at the workload; zooplan's, its configurations served in turn as plan-run
# serves them, is never predicted worse than any system's; a configuration's own search never below its bound
# (compared by the judged rate: the mean of the rates as calibrated and with every time slowed down)
judged = lambda p: (p['violation_rate'] + p['slowed_violation_rate']) / 2
assert w['slowdown_judged'] == 1.4, w
zt = st['systems'][0]['predicted_in_turn']
assert zt['search']['judged'] >= 1 and zt['search']['violation_bound'] <= judged(zt) + 1e-8, zt
# plan.json rounds to 9 significant digits: compare within 1e-8
if zt['search']['proven_best']:
    assert judged(zt) <= zt['search']['violation_bound'] + 1e-8, zt
else:
    assert judged(zt) > zt['search']['violation_bound'] - 1e-8, zt
for other in st['systems'][1:]:
    assert judged(zt) <= judged(other['predicted_in_turn']) + 1e-8, other['name']
    assert other['predicted_in_turn']['slowed_violation_rate'] >= 0, other['name']
for c, sel in enumerate(st['systems'][0]['selections']):
    z = sel['predicted']
    if 'search' in z:
        assert z['search']['violation_bound'] <= judged(z) + 1e-8, z
" "$WORK/r1/plan.json" \
  && pass "--rate: the choice is made for the workload, byte-identical without calibration" || fail "--rate: $(cat "$WORK/r1.txt")"
"$BIN/plan-solve" "$PROF" -o "$WORK/r3/plan.json" --rate 40 --calibration-rounds 2 > "$WORK/r3.txt" \
  && grep -q "run times calibrated on this host (dispatch" "$WORK/r3.txt" \
  && pass "--rate calibrates serving on this host" || fail "--rate calibration: $(cat "$WORK/r3.txt")"
# The workload from the SLO file: a rate per task.
$PY - "$WORK/slo_workload.json" "$WORK/slo_noiris.json" <<'PYEOF'
import json, sys
tasks = ["digits", "wine", "breast_cancer", "iris"]
doc = {"schema_version": 1,
       "configurations": [{"id": "MINE", "tasks": {t: {"accuracy": 0.5, "latency_ms": 10} for t in tasks}}],
       "workload": {"process": "periodic", "rate_qps": {"digits": 80, "wine": 10, "breast_cancer": 10, "iris": 5}}}
json.dump(doc, open(sys.argv[1], "w"))
del doc["workload"]["rate_qps"]["iris"]
json.dump(doc, open(sys.argv[2], "w"))
PYEOF
"$BIN/plan-solve" "$PROF" -o "$WORK/s1/plan.json" --slo "$WORK/slo_workload.json" --calibration-rounds 0 > "$WORK/s1.txt" \
  && grep -q "zooplan's choice: served at breast_cancer 10 q/s, digits 80 q/s, iris 5 q/s, wine 10 q/s (periodic" "$WORK/s1.txt" \
  && $PY -c "
import json, sys
w = json.load(open(sys.argv[1]))['stitch']['workload']
assert w['process'] == 'periodic' and w['rate_qps'] == {'digits': 80, 'wine': 10, 'breast_cancer': 10, 'iris': 5}, w
" "$WORK/s1/plan.json" && pass "the SLO file's workload: zooplan's choice made for its rates" \
  || fail "SLO file workload: $(cat "$WORK/s1.txt")"
rejected "an SLO file's workload without a task's rate" 1 "slo_noiris.json: \$.workload: task 'iris' has no rate (rate_qps) and runs in no frame" -- \
  "$BIN/plan-solve" "$PROF" -o "$WORK/s2/plan.json" --slo "$WORK/slo_noiris.json" --calibration-rounds 0
# Frames and the device's memory budget from the SLO file; a budget no plan fits, and an arrivals file, refused.
$PY - "$WORK/slo_workload.json" "$WORK/slo_frames.json" "$WORK/slo_tiny.json" "$WORK/slo_arrivals.json" <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
w = doc["workload"]
del w["rate_qps"]["wine"], w["rate_qps"]["breast_cancer"]
w["frames"] = [{"name": "cam", "period_ms": 20, "dnns": ["breast_cancer", "wine"], "depends_on": {"wine": ["breast_cancer"]}}]
w["memory_budget"] = "40%"
json.dump(doc, open(sys.argv[2], "w"))
w["memory_budget"] = 10
json.dump(doc, open(sys.argv[3], "w"))
w["memory_budget"] = "40%"
del w["rate_qps"]
w["arrivals"] = "arrivals.csv"
json.dump(doc, open(sys.argv[4], "w"))
PYEOF
"$BIN/plan-solve" "$PROF" -o "$WORK/f1/plan.json" --slo "$WORK/slo_frames.json" --calibration-rounds 0 > "$WORK/f1.txt" \
  && grep -q "served at digits 80 q/s, iris 5 q/s, frames cam.0 every 20 ms (periodic, 10 s simulated), memory budget" "$WORK/f1.txt" \
  && "$BIN/plan-solve" "$PROF" -o "$WORK/f2/plan.json" --slo "$WORK/slo_frames.json" --calibration-rounds 0 >/dev/null \
  && cmp -s "$WORK/f1/plan.json" "$WORK/f2/plan.json" \
  && pass "frames and a memory budget: zooplan's choice made for them, byte-identical reruns" || fail "frames: $(cat "$WORK/f1.txt")"
# "40%" is the same bytes in the workload and as a preload budget (one base: every subgraph once).
"$BIN/plan-solve" "$PROF" -o "$WORK/f3/plan.json" --slo "$WORK/slo_frames.json" --calibration-rounds 0 \
  --memory-budget 40% > /dev/null && $PY -c "
import json
st = json.load(open('$WORK/f3/plan.json'))['stitch']
assert st['workload']['memory_budget_bytes'] == st['preload'][0]['budget_bytes'] > 0, (st['workload'], st['preload'][0])
" && pass "a percentage budget is of one total, in the workload and in --memory-budget" || fail "percentage budgets differ"
rejected "a memory budget no plan fits" 1 "slo_tiny.json: \$.workload.memory_budget: 10 bytes holds no plan: task '" -- \
  "$BIN/plan-solve" "$PROF" -o "$WORK/f3/plan.json" --slo "$WORK/slo_tiny.json" --calibration-rounds 0
rejected "an arrivals file to plan for" 1 "slo_arrivals.json: \$.workload.arrivals: an arrivals file is served by plan-run" -- \
  "$BIN/plan-solve" "$PROF" -o "$WORK/f4/plan.json" --slo "$WORK/slo_arrivals.json" --calibration-rounds 0
rejected "a rate below zero" 2 "--rate: Value -5 not in range" -- "$BIN/plan-solve" "$PROF" -o "$WORK/r4/plan.json" --rate -5

# --only sparseloom: one technique, for ablation: zooplan's choice is Algorithm 1's.
"$BIN/plan-solve" "$PROF" -o "$WORK/only/plan.json" --rate 40 --calibration-rounds 0 --only sparseloom > "$WORK/only.txt" \
  && grep -q "^--only sparseloom: no cold-start sections" "$WORK/only.txt" \
  && $PY -c "
import json, sys
st = json.load(open(sys.argv[1]))['stitch']
z, a1 = st['systems'][0], st['systems'][1]
assert a1['name'] == 'Algorithm-1' and 'SparseLoom alone' in z['description'], z['description']
for zs, a1s in zip(z['selections'], a1['selections']):
    assert [t['combination'] for t in zs['tasks']] == [t['combination'] for t in a1s['tasks']], zs['slo']
    assert 'search' not in zs['predicted'], zs['predicted']
assert st['workload']['memory_budget_bytes'] == 0, 'SparseLoom alone keeps its preload set resident'
" "$WORK/only/plan.json" \
  && pass "--only sparseloom plans with Algorithm 1 alone" || fail "--only sparseloom"
# --check PLAN: the plan against the inputs it records, down to zoo.json, the ONNX
# files and the datasets (a copy of the fixture beside a copy of its zoo, where
# stitch.json's relative zoo path leads).
R="$WORK/fresh"
mkdir -p "$R/testdata" "$R/a/b/c"
cp -r "$SRC/testdata/multitask" "$R/testdata/"
cp -r "$ST" "$R/a/b/c/st"
cp -r "$PROF" "$R/a/b/c/prof"
cp "$WORK/slo_workload.json" "$R/slo.json"
"$BIN/plan-solve" "$R/a/b/c/prof" -o "$R/plan.json" --slo "$R/slo.json" --calibration-rounds 0 > /dev/null
rc0=0; "$BIN/plan-solve" --check "$R/plan.json" > "$WORK/check0.txt" || rc0=$?
printf 'x' >> "$R/testdata/multitask/models/digits/u50.onnx"
printf 'x' >> "$R/testdata/multitask/data/wine_test_y.npy"
printf ' ' >> "$R/slo.json"
rc1=0; "$BIN/plan-solve" --check "$R/plan.json" > "$WORK/check1.txt" || rc1=$?
[ $rc0 -eq 0 ] && grep -q "plan.json: up to date ([0-9]* inputs checked)" "$WORK/check0.txt" \
  && [ $rc1 -eq 1 ] && grep -q "plan.json: stale (3 of [0-9]* inputs changed):" "$WORK/check1.txt" \
  && grep -q "slo.json: changed: re-run plan-solve$" "$WORK/check1.txt" \
  && grep -q "data/wine_test_y.npy: changed: re-run zoo-profile and plan-solve$" "$WORK/check1.txt" \
  && grep -q "models/digits/u50.onnx: changed: re-run zoo-stitch, zoo-profile and plan-solve$" "$WORK/check1.txt" \
  && pass "--check: up to date, then the SLO file, an ONNX file and a dataset changed" \
  || fail "--check: rc $rc0/$rc1: $(cat "$WORK/check0.txt" "$WORK/check1.txt" | tr '\n' ' ')"
rejected "--check of a plan that is not there" 1 "no-plan.json" -- "$BIN/plan-solve" --check "$WORK/no-plan.json"
rejected "--check with a profile" 2 "--check PLAN takes no input and no -o: the plan records its inputs" -- \
  "$BIN/plan-solve" "$R/a/b/c/prof" --check "$R/plan.json"
rejected "--check in another mode" 2 "--check compares a stitch plan with its inputs, not --mode mts" -- \
  "$BIN/plan-solve" --check "$R/plan.json" --mode mts
rejected "plan-solve without input" 2 "plan-solve: error: input is required" -- "$BIN/plan-solve" -o "$WORK/x/plan.json"
rejected "--only with another mode" 2 "--only sparseloom plans in --mode stitch, not --mode concurrent: drop --mode" -- \
  "$BIN/plan-solve" "$PROF" -o "$WORK/only2/plan.json" --only sparseloom --mode concurrent
rejected "--only an unknown technique" 2 "--only: sparse not in {sparseloom,haxconn,sparoa,nnv12,mts}" -- \
  "$BIN/plan-solve" "$PROF" -o "$WORK/only3/plan.json" --only sparse

if $PY - "$WORK/a" <<'PYEOF'
import json, os, sys
d = sys.argv[1]
plan = json.load(open(os.path.join(d, "plan.json")))
st = plan["stitch"]
assert len(st["placement_order"]) == 2 and st["orders_evaluated"] == 2
assert len(st["slo_configurations"]) == 25
chosen = next(s for s in st["systems"] if s["name"] == st["chosen_system"])
assert len(chosen["selections"]) == 25
for sel in chosen["selections"]:
    assert len(sel["tasks"]) == len(st["tasks"])
    for c in sel["tasks"]:
        assert c["feasible"] or "miss" in c, c
assert all("selections" not in t for t in st["tasks"]), "the plan's choice is its chosen system's, once"
assert [p["budget"] for p in st["preload"]] == ["15%", "55%", "100%"]
for p in st["preload"]:
    assert p["exact"]["optimal"] and p["exact"]["hotness"] >= p["greedy"]["hotness"] - 1e-9 and 0 <= p["gap"] <= 1
ev = json.load(open(os.path.join(d, "eval.json")))
for s in ev["sets"]:
    z = s["summary"]["zooplan"]["violation_rate"]
    for name, v in s["summary"].items():
        assert z <= v["violation_rate"] + 1e-8, (s["name"], name, z, v)
assert ev["arrival_orders"] == 24
trace = json.load(open(os.path.join(d, "trace.json")))
assert any(e.get("ph") == "X" for e in trace["traceEvents"])
for t in st["tasks"]:
    svg = open(os.path.join(d, "svg", t["name"] + ".svg")).read()
    assert svg.startswith("<svg") and "Pareto" in svg and "chosen" in svg
print("placement", st["placement_order"], "grid violation zooplan", ev["sets"][0]["summary"]["zooplan"]["violation_rate"])
PYEOF
then pass "plan, evaluation, trace and SVGs"; else fail "plan content"; fi
grep -q "zooplan's violation rate is" "$WORK/a.txt" && pass "evaluation table printed" || fail "no evaluation table"

# An SLO no variant can meet is reported with the closest variant.
$PY - "$PROF" > "$WORK/slo.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
tasks = {t["name"]: {"accuracy": 0.999999, "latency_ms": 1e-6} for t in r["tasks"]}
print(json.dumps({"schema_version": 1, "configurations": [{"id": "impossible", "tasks": tasks}]}))
PYEOF
"$BIN/plan-solve" "$PROF" -o "$WORK/c/plan.json" --slo "$WORK/slo.json" > "$WORK/c.txt"
grep -q "infeasible: wine under impossible: closest" "$WORK/c.txt" && pass "infeasible SLO reported with the closest variant" \
  || fail "infeasible SLO not reported"

$PY -c "import json; j=json.load(open('$WORK/slo.json')); del j['configurations'][0]['tasks']['iris']; print(json.dumps(j))" > "$WORK/bad_slo.json"
expect_error "SLO without a task" "no SLO for task 'iris'" "$WORK/d/plan.json" -- \
  "$BIN/plan-solve" "$PROF" -o "$WORK/d/plan.json" --slo "$WORK/bad_slo.json"
expect_error "not a profile directory" "report.json: cannot open" "$WORK/e/plan.json" -- \
  "$BIN/plan-solve" "$WORK/nope" -o "$WORK/e/plan.json"
# Confined to one processor: every position of every choice on it; naming all
# processors (in any order) plans as without the option.
"$BIN/plan-solve" "$PROF" -o "$WORK/one/plan.json" --processors cpu >/dev/null
"$BIN/plan-solve" "$PROF" -o "$WORK/b2/plan.json" --processors "$(python3 -c "
import json; print(','.join(reversed(json.load(open('$WORK/b/plan.json'))['stitch']['processors'])))")" >/dev/null
cmp -s "$WORK/b/plan.json" "$WORK/b2/plan.json" && pass "--processors naming every processor plans as without it" \
  || fail "--processors with every processor changed the plan"
if $PY - "$WORK/one/plan.json" <<'PYEOF'
import json, sys
plan = json.load(open(sys.argv[1]))
st = plan["stitch"]
assert st["processors"] == ["cpu"] and [p["name"] for p in plan["processors"]] == ["cpu"], st["processors"]
assert set(st["placement_order"]) == {"cpu"}, st["placement_order"]
for s in st["systems"]:
    for sel in s["selections"]:
        for t in sel["tasks"]:
            assert set(t["placement"]) == {"cpu"}, (s["name"], t)
PYEOF
then pass "--processors cpu: every choice on cpu"; else fail "--processors cpu plan"; fi
expect_error "unknown --processors" "--processors: 'gpu' is not a processor of the profile" "$WORK/g/plan.json" -- \
  "$BIN/plan-solve" "$PROF" -o "$WORK/g/plan.json" --processors gpu
expect_error "bad budget" "--memory-budget 'lots'" "$WORK/f/plan.json" -- \
  "$BIN/plan-solve" "$PROF" -o "$WORK/f/plan.json" --memory-budget lots
finish
