#!/usr/bin/env bash
# Cold-start planning from the command line: plan-solve --mode cold measuring a
# model's cold profile or reading one, zoo-profile --cold-profile on the digits
# zoo feeding plan-solve, and bad input (one line, non-zero exit, nothing written).
source "$(dirname "$0")/lib.sh"
MODEL="$SRC/testdata/digits/models/dense.onnx"

# check_plan PLAN MODEL_LABEL: plan.json's cold section is complete and consistent.
check_plan() {
  $PY - "$1" "$2" <<'PYEOF'
import json, sys
plan = json.load(open(sys.argv[1]))
assert len(plan["cold"]) == 1, plan.keys()
c = plan["cold"][0]
assert c["model"] == sys.argv[2], c["model"]
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
"$BIN/zoo-stitch" "$SRC/testdata/digits/zoo.json" -o "$WORK/st" >/dev/null
"$BIN/zoo-profile" "$WORK/st" -o "$WORK/prof" --repeat 3 --warmup 1 --latency-validation 4 --cold-profile \
  --cold-warm-repeat 2 > "$WORK/zp.txt"
grep -q "report.json, cold_profile.csv}" "$WORK/zp.txt" && pass "zoo-profile names cold_profile.csv" || fail "zoo-profile does not name cold_profile.csv"
if $PY - "$WORK/st" "$WORK/prof" > "$WORK/subgraph.txt" <<'PYEOF'
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
rejected "zero cores" 2 "--cores" -- \
  "$BIN/plan-solve" --mode cold "$MODEL" -o "$WORK/e/plan.json" --cold-profile "$WORK/a/cold_profile.csv" --cores 0
finish
