#!/usr/bin/env bash
# A concurrent schedule run for real: plan-solve --mode concurrent schedules a
# pipeline of real models (the realistic zoo's resnet, then mobilenet on its
# result, with vit beside them) on the workload's two host processors,
# plan-emit bundles the plan with its models, and plan-run executes the plan's
# schedule and every baseline's: each DNN's layer groups on their processor's
# pinned worker, the pipeline's second DNN only after the first, measured
# makespan, per-DNN latency and throughput beside the simulated ones, every
# DNN's outputs equal to the DNN run alone, a trace.
# Plans that cannot run are one-line errors.
source "$(dirname "$0")/lib.sh"
DATA="$SRC/testdata/concurrent"

"$BIN/plan-solve" --mode concurrent "$DATA/realistic-resnet-to-mobilenet+vit.json" -o "$WORK/plan.json" \
  > "$WORK/solve.txt" 2>&1 || fail "plan-solve: $(cat "$WORK/solve.txt")"
"$BIN/plan-emit" "$WORK/plan.json" -o "$WORK/bundle" > "$WORK/emit.txt" 2>&1 || fail "plan-emit: $(cat "$WORK/emit.txt")"
if [ "$(ls "$WORK/bundle/models" | wc -l)" -eq 3 ]; then pass "the bundle holds the three models"
else fail "bundle models: $(ls "$WORK/bundle/models" 2>&1 | tr '\n' ' ')"; fi

if "$BIN/plan-run" "$WORK/bundle" --compare all --rounds 2 --repeat 3 --json --trace "$WORK/trace.json" > "$WORK/run.json" \
  2> "$WORK/run.err"; then pass "plan-run runs the concurrent bundle"
else fail "plan-run concurrent bundle: $(cat "$WORK/run.err")"; fi

$PY - "$WORK/plan.json" "$WORK/run.json" "$WORK/trace.json" <<'PYEOF' && pass "every schedule measured beside its prediction; the pipeline holds" || fail "concurrent run report"
import json, sys
plan = json.load(open(sys.argv[1]))["concurrent"]
run = json.load(open(sys.argv[2]))["concurrent"]
trace = json.load(open(sys.argv[3]))
names = [r["schedule"] for r in run["schedules"]]
assert names == ["zooplan"] + [b["name"] for b in plan["baselines"]], names
assert run["dnns"] == ["resnet", "mobilenet", "vit"], run["dnns"]
assert run["rounds"] == 2 and run["repeat"] == 3
assert json.load(open(sys.argv[2]))["ok"]
for r in run["schedules"]:
    assert r["measured_makespan_ms"] > 0 and len(r["measured_round_makespan_ms"]) == 2, r
    assert len(r["measured_dnn_ms"]) == 3 and all(x > 0 for x in r["measured_dnn_ms"]), r
    assert r["measured_throughput"] > 0, r
    assert r["match"] and r["max_abs_diff"] <= 1e-5 * max(1, r["reference_scale"]), r  # outputs = each DNN alone
zp = run["schedules"][0]
assert abs(zp["predicted_makespan_ms"] - plan["latencyMs"]) < 1e-9, (zp, plan["latencyMs"])
assert [round(x, 9) for x in zp["predicted_dnn_ms"]] == [round(d["endMs"] - d["releaseMs"], 9) for d in plan["dnns"]]
# The plan's schedule moves between processors: hand-offs happen.
transitions = sum(len([t for t in d["transitions"] if t["afterGroup"] >= 0]) for d in plan["dnns"])
assert transitions == 0 or zp["handoffs"] > 0, zp
ops = [e for e in trace["traceEvents"] if e.get("cat") == "op"]
def span(dnn):
    xs = [e for e in ops if e["name"].startswith(dnn + "/")]
    assert xs, dnn
    return min(e["ts"] for e in xs), max(e["ts"] + e["dur"] for e in xs)
assert span("mobilenet")[0] >= span("resnet")[1], (span("resnet"), span("mobilenet"))
tracks = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
assert tracks == {"cpu", "npu"}, tracks
PYEOF

"$BIN/plan-run" "$WORK/bundle" --rounds 1 --repeat 2 --compare cpu-only > "$WORK/table.txt" 2>&1 || true
if grep -q "^zooplan " "$WORK/table.txt" && grep -q "^cpu-only " "$WORK/table.txt" \
   && ! grep -q "^h2h-like " "$WORK/table.txt" && grep -q "best measured by latency" "$WORK/table.txt"
then pass "--compare runs the plan's schedule and the ones named"; else fail "--compare table: $(cat "$WORK/table.txt")"; fi
"$BIN/plan-run" "$WORK/bundle" --rounds 1 --repeat 2 > "$WORK/table.txt" 2>&1 || true
if grep -q "^zooplan " "$WORK/table.txt" && ! grep -q "^cpu-only " "$WORK/table.txt"
then pass "without --compare only the plan's schedule runs"; else fail "default table: $(cat "$WORK/table.txt")"; fi

rejected "unknown schedule" 1 "--compare nope: the plan carries no such system (it carries: zooplan, cpu-only" -- \
  "$BIN/plan-run" "$WORK/bundle" --compare nope
rejected "--rounds on a model" 2 "--rounds does not apply to a single model" -- \
  "$BIN/plan-run" "$WORK/bundle/models/$(ls "$WORK/bundle/models" | head -1)" --rounds 2

# A workload without host processors gives a plan that is simulated only.
$PY - "$DATA/realistic-resnet+mobilenet.json" "$WORK/sim_only.json" "$DATA" <<'PYEOF'
import json, os, sys
w = json.load(open(sys.argv[1]))
del w["processors"]
base = os.path.abspath(sys.argv[3])
w["contention"] = os.path.join(base, w["contention"])
for d in w["dnns"]:
    d["model"] = os.path.normpath(os.path.join(base, d["model"]))
    d["profile"] = os.path.join(base, d["profile"])
json.dump(w, open(sys.argv[2], "w"))
PYEOF
"$BIN/plan-solve" --mode concurrent "$WORK/sim_only.json" -o "$WORK/sim_plan.json" > /dev/null 2>&1 \
  || fail "plan-solve of the workload without processors"
$PY - "$WORK/sim_plan.json" <<'PYEOF' && pass "a plan without processors records none, nor baseline schedules" || fail "simulated-only plan"
import json, sys
c = json.load(open(sys.argv[1]))["concurrent"]
assert "processors" not in c and all("dnns" not in b for b in c["baselines"]), c.keys()
units = {u["id"]: u for u in json.load(open(sys.argv[1]))["units"]}
assert all(d.get("unit") in units and all(g.get("nodes") for g in d["groups"]) for d in c["dnns"])
PYEOF
"$BIN/plan-emit" "$WORK/sim_plan.json" -o "$WORK/sim_bundle" > /dev/null 2>&1 || fail "plan-emit of the simulated-only plan"
rejected "plan without processors" 1 "names no host processors" -- "$BIN/plan-run" "$WORK/sim_bundle"

# Bad processors in the workload: one line naming the file and the field.
$PY - "$DATA/realistic-resnet+mobilenet.json" "$WORK" "$DATA" <<'PYEOF'
import json, os, sys
w = json.load(open(sys.argv[1]))
base = os.path.abspath(sys.argv[3])
w["contention"] = os.path.join(base, w["contention"])
for d in w["dnns"]:
    d["model"] = os.path.normpath(os.path.join(base, d["model"]))
    d["profile"] = os.path.join(base, d["profile"])
bad = dict(w, processors=w["processors"][:1])
json.dump(bad, open(os.path.join(sys.argv[2], "missing_proc.json"), "w"))
bad = dict(w, processors=[dict(w["processors"][0], policy="fastest"), w["processors"][1]])
json.dump(bad, open(os.path.join(sys.argv[2], "bad_policy.json"), "w"))
bad = dict(w, processors=[dict(w["processors"][0], name="gpu"), w["processors"][1]])
json.dump(bad, open(os.path.join(sys.argv[2], "unknown_acc.json"), "w"))
PYEOF
rejected "a processor missing" 1 "missing_proc.json: \$.processors: no processor for accelerator 'npu'" -- \
  "$BIN/plan-solve" --mode concurrent "$WORK/missing_proc.json" -o "$WORK/x.json"
rejected "unknown kernel policy" 1 "bad_policy.json: \$.processors[0].policy: unknown kernel policy 'fastest'" -- \
  "$BIN/plan-solve" --mode concurrent "$WORK/bad_policy.json" -o "$WORK/x.json"
rejected "processor of no accelerator" 1 "unknown_acc.json: \$.processors[0].name: 'gpu' is not an accelerator" -- \
  "$BIN/plan-solve" --mode concurrent "$WORK/unknown_acc.json" -o "$WORK/x.json"
finish
