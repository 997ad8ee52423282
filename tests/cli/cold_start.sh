#!/usr/bin/env bash
# Cold-start planning from the command line: plan-solve --mode cold measuring a
# model's cold profile or reading one, plan-run following the plan (per knob
# combination), zoo-profile --cold-profile on the digits zoo feeding plan-solve in
# both modes, plan-emit's cold caches and plan-run BUNDLE --cold, and bad input
# (one line, non-zero exit, nothing written).
source "$(dirname "$0")/lib.sh"
MODEL="$SRC/testdata/digits/models/dense.onnx"

# check_plan PLAN MODEL_LABEL: plan.json's cold section is complete and consistent.
check_plan() {
  $PY - "$1" "$2" <<'PYEOF'
import json, sys
plan = json.load(open(sys.argv[1]))
assert len(plan["cold"]) == 1, plan.keys()
c = plan["cold"][0]
assert c["unit"] == "model:" + sys.argv[2], c["unit"]
assert [u["id"] for u in plan["units"] if u["residency"] == "cold"] == [c["unit"]], plan["units"]
assert c["status"] in ("optimal", "heuristic") and c["solver"], (c["status"], c["solver"])
names = [k["name"] for k in c["configurations"]]
assert names == ["none", "K", "C", "P", "K+C", "K+P", "C+P", "K+C+P"], names
full = c["configurations"][-1]
assert abs(full["predicted_ms"] - c["predicted_cold_ms"]) <= 1e-9 * max(1.0, full["predicted_ms"]), (full, c["predicted_cold_ms"])
# Each knob only widens the search space: never predicted slower than without it.
by = {k["name"]: k["predicted_ms"] for k in c["configurations"]}
for less, more in (("none", "K"), ("none", "C"), ("none", "P"), ("K", "K+C"), ("K+C", "K+C+P"), ("C+P", "K+C+P")):
    assert by[more] <= by[less] * (1 + 1e-9), (less, by[less], more, by[more])
assert c["lower_bound_ms"] <= c["predicted_cold_ms"] * (1 + 1e-9)
assert c["nodes"] and all(n["exec_ms"][0] <= n["exec_ms"][1] for n in c["nodes"])
assert c["predicted_cold_ms"] > 0 and c["storage_mb_per_s"] > 0 and c["cores"] >= 1
PYEOF
}

# plan-solve measures the model, keeps the profile, writes the plan.
"$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/a/plan.json" --write-cold-profile "$WORK/a/cold_profile.csv" \
  --warm-repeat 2 > "$WORK/a.txt"
check_plan "$WORK/a/plan.json" dense && pass "measured: plan.json has the cold section" || fail "measured: cold section"
grep -q "PREDICTED by the cost model" "$WORK/a.txt" && grep -q "^  K+C+P " "$WORK/a.txt" \
  && pass "predicted ablation table printed, labelled" || fail "no labelled ablation table"
grep -q "^host,,,gemm_startup_ms" "$WORK/a/cold_profile.csv" && grep -q "^model,dense," "$WORK/a/cold_profile.csv" \
  && pass "--write-cold-profile kept the measurement" || fail "cold_profile.csv lacks host or model rows"
ls -a "$WORK/a" | grep -q "cold-profile" && fail "measurement scratch left beside the plan" || pass "no scratch left"

# From a profile the plan is a pure function of its inputs: byte-identical twice.
"$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/b/plan.json" --cold-profile "$WORK/a/cold_profile.csv" >/dev/null
"$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/c/plan.json" --cold-profile "$WORK/a/cold_profile.csv" >/dev/null
cmp -s "$WORK/b/plan.json" "$WORK/c/plan.json" && pass "plans from one profile are byte-identical" \
  || fail "plans from one profile differ"
check_plan "$WORK/b/plan.json" dense && pass "plan from --cold-profile" || fail "plan from --cold-profile"
"$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/d/plan.json" --cold-profile "$WORK/a/cold_profile.csv" --cores 1 >/dev/null
$PY -c "import json,sys; c=json.load(open('$WORK/d/plan.json'))['cold'][0]; sys.exit(c['cores'] != 1)" \
  && pass "--cores 1 is recorded" || fail "--cores 1 not in the plan"

# zoo-profile --cold-profile: one model row per subgraph, labelled task/position/variant.
use_fixture digits
"$BIN/zoo-profile" "$ST" -o "$WORK/prof" --repeat 3 --warmup 1 --latency-validation 4 --cold-profile \
  --cold-warm-repeat 2 > "$WORK/zp.txt"
grep -q "report.json, cold_profile.csv}" "$WORK/zp.txt" && pass "zoo-profile names cold_profile.csv" || fail "zoo-profile does not name cold_profile.csv"
if $PY - "$ST" "$WORK/prof" > "$WORK/subgraph.txt" <<'PYEOF'
import csv, json, os, sys
st = json.load(open(os.path.join(sys.argv[1], "stitch.json")))
want = {}
for t in st["tasks"]:
    for p in t["positions"]:
        for g in p["subgraphs"]:
            want[f"{t['name']}/{p['position']}/{g['variant']}"] = g["file"]
rows = list(csv.DictReader(open(os.path.join(sys.argv[2], "cold_profile.csv"))))
models = [r["model"] for r in rows if r["kind"] == "model"]
assert sorted(models) == sorted(want), (len(models), len(want))
for label in want:
    assert any(r["kind"] == "node" and r["model"] == label for r in rows), label
assert {r["gemm"] for r in rows if r["kind"] == "host" and r["node"] == "gemm_startup_ms"} == {"onednn", "blis"}
report = json.load(open(os.path.join(sys.argv[2], "report.json")))
assert report["cold_profile"]["subgraphs"] == len(want), report["cold_profile"]
label = "digits/0/dense"
print(label, os.path.join(sys.argv[1], want[label]))
PYEOF
then pass "zoo-profile: cold_profile.csv covers every subgraph"; else fail "zoo-profile cold_profile.csv"; fi
read -r LABEL SUBGRAPH < "$WORK/subgraph.txt" || true
"$BIN/plan-solve" --mode cold "$SUBGRAPH" --cold-profile "$WORK/prof/cold_profile.csv" --profile-model "$LABEL" \
  -o "$WORK/z/plan.json" >/dev/null
check_plan "$WORK/z/plan.json" "$LABEL" && pass "plan-solve plans a subgraph from zoo-profile's profile" \
  || fail "plan from zoo-profile's profile"

# plan-run follows a cold plan: the cache it runs from, then the cold run reported per
# node (read / transform / execute and the core of each), its outputs those of a plain
# run, and the trace of the cold run with one track per thread.
"$BIN/plan-run" "$MODEL" --cold-plan "$WORK/b/plan.json" --write-cache "$WORK/b/cold.zwc" --repeat 0 >/dev/null \
  && pass "plan-run --cold-plan --write-cache" || fail "plan-run --cold-plan --write-cache"
"$BIN/plan-run" "$MODEL" --save-outputs "$WORK/plain" --repeat 0 >/dev/null
"$BIN/plan-run" "$MODEL" --cold --cold-plan "$WORK/b/plan.json" --cache "$WORK/b/cold.zwc" --repeat 3 --json \
  --save-outputs "$WORK/coldout" --trace "$WORK/b/trace.json" > "$WORK/b/run.json"
if $PY - "$WORK/b/plan.json" "$WORK/b/run.json" "$WORK/plain" "$WORK/coldout" "$WORK/b/trace.json" <<'PYEOF'
import glob, json, os, sys
import numpy as np
plan = json.load(open(sys.argv[1]))["cold"][0]
run = json.load(open(sys.argv[2]))
c = run["cold_plan_run"]
assert c["configuration"] == "K+C+P" and c["cores"] == plan["cores"], c["configuration"]
assert len(c["nodes"]) == len(plan["nodes"])
for n, p in zip(c["nodes"], plan["nodes"]):
    assert n["node"] == p["node"] and n["kernel"] == p["kernel"] and n["weights"] == p["weights"], (n, p)
    assert (n["read"] is None) == (p["weights"] == "none"), n
    assert (n["transform"] is None) == (p["weights"] != "transform"), n
    if n["transform"]:
        assert n["read"]["end_ms"] <= n["transform"]["start_ms"] <= n["transform"]["end_ms"] <= n["execute"]["start_ms"]
        assert n["transform"]["core"] >= 0 and n["transform"]["stolen"] == (n["transform"]["core"] != n["transform"]["planned_core"])
    if n["read"]:
        assert n["read"]["end_ms"] <= n["execute"]["start_ms"] and n["read"]["core"] >= -1
ex = [n["execute"] for n in c["nodes"]]
assert all(a["end_ms"] <= b["start_ms"] for a, b in zip(ex, ex[1:]))
assert run["cold"]["from_cache"] and run["second_run"]["ms"] > 0 and run["warm"]["runs"] == 3
for f in glob.glob(os.path.join(sys.argv[3], "*.npy")):
    want, got = np.load(f), np.load(os.path.join(sys.argv[4], os.path.basename(f)))
    assert np.abs(got - want).max() <= 1e-5 * max(1.0, np.abs(want).max()), f
events = json.load(open(sys.argv[5]))["traceEvents"]
threads = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
assert {"reader", "core 0 (executes)"} <= threads, threads
assert any(e.get("cat") == "execute" for e in events) and any(e.get("cat") == "read" for e in events)
PYEOF
then pass "cold run follows the plan, reported per node, outputs equal a plain run's, trace per thread"
else fail "cold run following the plan"; fi

# Calibration: the measured run above calibrates the cost model (plan-solve --calibrate);
# the plan records it and its prediction, and the calibrated plan runs.
"$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/cal/plan.json" --cold-profile "$WORK/a/cold_profile.csv" \
  --calibrate "$WORK/b/run.json" --calibrate "$WORK/b/run.json" > "$WORK/cal.txt"
if grep -q "calibrated against 2 measured cold run(s)" "$WORK/cal.txt" && $PY - "$WORK/cal/plan.json" "$WORK/b/run.json" <<'PYEOF'
import json, sys
plan = json.load(open(sys.argv[1]))
c = plan["cold"][0]["calibration"]
assert c["runs"] == 2 and c["execute_factor"] > 0 and c["transform_factor"] > 0, c
assert sys.argv[2] in plan["header"]["inputs"], plan["header"]["inputs"]
PYEOF
then pass "plan-solve --calibrate: calibration recorded"; else fail "plan-solve --calibrate"; fi
"$BIN/plan-run" "$MODEL" --cold-plan "$WORK/cal/plan.json" --write-cache "$WORK/cal/cold.zwc" --repeat 0 >/dev/null \
  && "$BIN/plan-run" "$MODEL" --cold --cold-plan "$WORK/cal/plan.json" --cache "$WORK/cal/cold.zwc" --repeat 0 \
       --json > "$WORK/cal/run.json" && pass "the calibrated plan runs" || fail "the calibrated plan does not run"

# Each knob combination's plan runs: not pipelined, kernels not chosen, nothing cached.
for k in none K C P; do
  "$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/k$k/plan.json" --cold-profile "$WORK/a/cold_profile.csv" \
    --knobs "$k" >/dev/null
  "$BIN/plan-run" "$MODEL" --cold-plan "$WORK/k$k/plan.json" --write-cache "$WORK/k$k/cold.zwc" --repeat 0 >/dev/null
  if "$BIN/plan-run" "$MODEL" --cold --cold-plan "$WORK/k$k/plan.json" --cache "$WORK/k$k/cold.zwc" --repeat 0 \
       --json > "$WORK/k$k/run.json" && $PY -c "
import json, sys
p = json.load(open('$WORK/k$k/plan.json'))['cold'][0]
r = json.load(open('$WORK/k$k/run.json'))['cold_plan_run']
assert p['configuration'] == '$k' and r['pipelined'] == ('P' in '$k'), (p['configuration'], r['pipelined'])
if 'C' not in '$k':
    assert all(n['weights'] != 'cache' for n in p['nodes']), 'a plan without caching caches'
"; then pass "plan of --knobs $k runs"; else fail "plan of --knobs $k"; fi
done

# The stitch flow: plan-solve gives every subgraph of the feasible selections a cold
# section (the profile above has cold_profile.csv), plan-emit writes their cold
# caches only, plan-run BUNDLE --cold starts each chain cold and checks it.
# Its first preload budget, 1%, holds no subgraph: every query served from it loads its
# subgraphs (whatever the measured profile made the preload sets of the others).
"$BIN/plan-solve" "$WORK/prof" -o "$WORK/sp/plan.json" --slo grid --memory-budget 1% 15% 55% 100% > "$WORK/sp.txt" \
  && grep -q "cold-start sections:" "$WORK/sp.txt" && pass "plan-solve stitch: cold sections" \
  || fail "plan-solve stitch: cold sections"
"$BIN/plan-emit" "$WORK/sp/plan.json" -o "$WORK/bundle" > "$WORK/emit.txt" && pass "plan-emit" || fail "plan-emit"
if $PY - "$WORK/sp/plan.json" "$WORK/bundle" <<'PYEOF'
import json, os, sys
plan = json.load(open(sys.argv[1]))
labels = set()
chosen = next(s for s in plan["stitch"]["systems"] if s["name"] == plan["stitch"]["chosen_system"])
for sel in chosen["selections"]:
    for c in sel["tasks"]:
        if c["feasible"]:
            for pos, v in enumerate(c["combination"].split("+")):
                labels.add(f"{c['task']}/{pos}/{v}")
assert labels and {"subgraph:" + l for l in labels} == {c["unit"] for c in plan["cold"]}, (labels, plan["cold"])
units = {u["id"]: u for u in plan["units"]}
assert all(units[c["unit"]]["residency"] == "preload-set" for c in plan["cold"]), plan["units"]
assert "profile/cold_profile.csv" in plan["header"]["inputs"]
caches = os.listdir(os.path.join(sys.argv[2], "caches"))
files = {}
for t in plan["stitch"]["tasks"]:
    for g in t["subgraphs"]:
        label = f"{t['name']}/{g['position']}/{g['variant']}"
        files[label] = units["subgraph:" + label]["sha256"][:16]
for label in labels:
    assert files[label] + ".cold.zwc" in caches, label
    assert not any(c.startswith(files[label]) and not c.endswith(".cold.zwc") for c in caches), label
PYEOF
then pass "a cold section per chosen subgraph; plan-emit wrote their cold caches only"
else fail "cold sections / cold caches"; fi
"$BIN/plan-run" "$WORK/bundle" --cold --json --repeat 2 --samples 2 > "$WORK/bundle_run.json" \
  && $PY -c "
import json
r = json.load(open('$WORK/bundle_run.json'))
ran = [t for t in r['tasks'] if t['ran']]
assert ran and r['ok'], r
for t in ran:
    assert t['match'] and t['cold']['cold_ms'] > 0 and t['cold']['predicted_cold_ms'] > 0, t
    assert len(t['cold']['positions']) == len(t['processors'])
    assert all(p['pipelined'] is not None and p['nodes'] and p['cold_ms'] > 0 for p in t['cold']['positions']), t
" && pass "plan-run BUNDLE --cold: cold chains checked against the reference" || fail "plan-run BUNDLE --cold"
# Served: the subgraphs with a cold section load following it (from their cold caches) when a query needs them.
if "$BIN/plan-run" "$WORK/bundle" --serve --slo C13 --count 20 --rate 100 --calibration-rounds 0 \
     --json "$WORK/cold_serve.json" > "$WORK/cold_serve.txt" 2>&1 && $PY -c "
import json
r = json.load(open('$WORK/cold_serve.json'))
m = r['systems']['zooplan']['measured']
assert m['completed'] == m['queries'] == 20 and m['loads'] > 0 and m['accuracy'] is not None, m
assert m['loads'] == r['systems']['zooplan']['predicted']['loads'], (m['loads'], r['systems']['zooplan']['predicted'])
"; then pass "plan-run BUNDLE --serve: cold-sectioned subgraphs load following their cold sections"
else fail "cold serve: $(cat "$WORK/cold_serve.txt")"; fi

# At a workload (calibrated on this host): each candidate subgraph is loaded both ways, and only
# the chosen ones whose loads by cold section took less than from their weight caches get a
# section; plan-solve says how many and the plan holds exactly those.
if "$BIN/plan-solve" "$WORK/prof" -o "$WORK/spw/plan.json" --slo grid --rate 20 --calibration-rounds 2 \
     > "$WORK/spw.txt" && $PY - "$WORK/spw/plan.json" "$WORK/spw.txt" <<'PYEOF'
import json, re, sys
plan = json.load(open(sys.argv[1]))
plan.setdefault("cold", [])  # plan.json leaves an empty list out: no unit loaded faster by its cold section
text = open(sys.argv[2]).read()
m = re.search(r"loads by cold section \(NNV12\) calibrated for (\d+) subgraph unit\(s\): (\d+) load so, faster so", text)
assert m and int(m.group(1)) > 0 and int(m.group(2)) <= int(m.group(1)), text
s = re.search(r"cold-start sections: (\d+) of the (\d+) subgraph\(s\) of the feasible selections, those whose loads", text)
assert s and int(s.group(1)) == len(plan["cold"]) <= int(s.group(2)), text
chosen = next(x for x in plan["stitch"]["systems"] if x["name"] == plan["stitch"]["chosen_system"])
labels = {f"subgraph:{c['task']}/{pos}/{v}" for sel in chosen["selections"] for c in sel["tasks"] if c["feasible"]
          for pos, v in enumerate(c["combination"].split("+"))}
assert {c["unit"] for c in plan["cold"]} <= labels, (plan["cold"], labels)
# Planned for the processors' own cores (one each in this zoo).
assert all(c["cores"] == 1 for c in plan["cold"]), [c["cores"] for c in plan["cold"]]
PYEOF
then pass "plan-solve at a workload: cold sections where the calibrated cold loads were faster"
else fail "plan-solve at a workload: cold sections ($(grep -i cold "$WORK/spw.txt"))"; fi

# Bad input: one line naming the file, exit 1, nothing written (not even the profile).
sed '0,/^node,/s/^\(node,.*\),$/\1,abc/' "$WORK/a/cold_profile.csv" > "$WORK/bad.csv"
grep -q ",abc$" "$WORK/bad.csv" || fail "could not plant the malformed row"
awk -F, -v OFS=, '$1 == "node" && !done { $12 = "fast"; done = 1 } 1' "$WORK/a/cold_profile.csv" > "$WORK/nan.csv"
printf 'kind,model\n' > "$WORK/header.csv"
rejected "missing model" 1 "nope.onnx: cannot open" -- \
  "$BIN/plan-solve" --mode cold "$WORK/nope.onnx" -o "$WORK/e/plan.json" --write-cold-profile "$WORK/e/cold_profile.csv"
rejected "malformed cold_profile.csv" 1 "bad.csv:" -- \
  "$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/e/plan.json" --cold-profile "$WORK/bad.csv"
rejected "non-number in cold_profile.csv" 1 "nan.csv:" -- \
  "$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/e/plan.json" --cold-profile "$WORK/nan.csv"
rejected "cold_profile.csv with a wrong header" 1 "header.csv: unexpected header" -- \
  "$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/e/plan.json" --cold-profile "$WORK/header.csv"
rejected "missing cold_profile.csv" 1 "missing.csv: cannot open" -- \
  "$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/e/plan.json" --cold-profile "$WORK/missing.csv"
rejected "profile without the model" 1 "no model 'dense'" -- \
  "$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/e/plan.json" --cold-profile "$WORK/prof/cold_profile.csv"
rejected "--calibrate with a file that is not a cold run" 1 "plan.json: \$: no 'cold_plan_run' section" -- \
  "$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/e/plan.json" --cold-profile "$WORK/a/cold_profile.csv" \
  --calibrate "$WORK/b/plan.json"
$PY -c "
import json
r = json.load(open('$WORK/b/run.json'))
r['cold_plan_run']['nodes'][0]['node'] = '/another/Node'
json.dump(r, open('$WORK/other_run.json', 'w'))"
rejected "--calibrate with another model's run" 1 "other_run.json: step 0 runs '/another/Node'" -- \
  "$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/e/plan.json" --cold-profile "$WORK/a/cold_profile.csv" \
  --calibrate "$WORK/other_run.json"
rejected "zero cores" 2 "--cores" -- \
  "$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/e/plan.json" --cold-profile "$WORK/a/cold_profile.csv" --cores 0
rejected "unknown knobs" 2 "--knobs" -- \
  "$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/e/plan.json" --cold-profile "$WORK/a/cold_profile.csv" --knobs P+K
rejected "cold plan run without its cache" 2 "give --cache" -- \
  "$BIN/plan-run" "$MODEL" --cold --cold-plan "$WORK/b/plan.json"
rejected "cold plan with --kernels" 2 "not with --kernels" -- \
  "$BIN/plan-run" "$MODEL" --cold-plan "$WORK/b/plan.json" --kernels im2col
rejected "cold plan of another model" 1 "b/plan.json: planned for another model" -- \
  "$BIN/plan-run" "$SRC/testdata/digits/models/u95.onnx" --cold --cold-plan "$WORK/b/plan.json" --cache "$WORK/b/cold.zwc"
rejected "plan without a cold section for the model" 1 "no cold section for 'dense'" -- \
  "$BIN/plan-run" "$MODEL" --cold-plan "$WORK/sp/plan.json" --write-cache "$WORK/e/x.zwc"
finish
