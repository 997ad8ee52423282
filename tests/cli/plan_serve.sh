#!/usr/bin/env bash
# plan-run BUNDLE --serve: the plan's choice alone by default; with --compare
# all, every system the plan carries served on one arrival trace, --json with measured and predicted figures per system, --trace with one
# track per processor and slices of different tasks overlapping in time; bad
# input (arrivals with an unknown task or a negative time, a bundle missing a
# weight cache, a processor's cores not on this machine) is one line, a non-zero
# exit and nothing written.
source "$(dirname "$0")/lib.sh"
use_fixture multitask
"$BIN/plan-solve" "$PROF" -o "$WORK/plan.json" --slo grid --memory-budget 50% >/dev/null
"$BIN/plan-emit" "$WORK/plan.json" -o "$WORK/bundle" >/dev/null

mkdir "$WORK/out"
if "$BIN/plan-run" "$WORK/bundle" --serve --compare all --slo C07,C19 --rate 4000 --count 200 --seed 3 \
     --json "$WORK/out/serve.json" --trace "$WORK/out/serve.trace.json" >"$WORK/table.txt" 2>/dev/null; then
  pass "--serve ran"
else
  fail "--serve failed: $(cat "$WORK/table.txt")"
fi
if $PY - "$WORK/out/serve.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
want = ["zooplan", "Algorithm-1", "SV-AO-P", "SV-AO-NP", "SV-LO-P", "SV-LO-NP", "AV-P", "AV-NP"]
assert sorted(r["systems"]) == sorted(want), sorted(r["systems"])
for name, s in r["systems"].items():
    for side in ("measured", "predicted"):
        for k in ("violation_rate", "p50_ms", "p99_ms", "throughput_qps"):
            v = s[side][k]
            assert isinstance(v, (int, float)) and v >= 0, (name, side, k, v)
        assert s[side]["queries"] == r["queries"] == 800, (name, side, s[side]["queries"])
    assert s["measured"]["peak_rss_bytes"] > 1 << 20, name
    # The prediction is calibrated on the pinned processors; the plan-only one is kept beside it.
    assert s["predicted_from_plan_latencies"]["queries"] == 800, name
    cal = s["calibration"]
    assert 0 < cal["dispatch_ms"] < 1000 and cal["handoff_ms"] >= 0, (name, cal)
    for proc, c in cal["processors"].items():
        assert proc in ("cpu", "npu") and c["slots"] > 0, (name, cal)
        assert c["back_to_back_over_planned"] > 0 and c["after_idle_over_planned"] > 0, (name, cal)
    assert s["measured"]["completed"] == 800, name
assert r["slo_configurations"] == ["C07", "C19"]
assert r["calibration_rounds"] == 15
PYEOF
then pass "--json: measured and predicted per system"; else fail "--json content"; fi
if $PY - "$WORK/out/serve.trace.json" "$WORK/plan.json" <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
tracks = {e["tid"]: e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
assert sorted(tracks.values()) == ["cpu", "npu"], tracks
runs = [e for e in ev if e["ph"] == "X" and e["cat"] == "run"]
# The plan's choice (made from latencies measured on this host) decides which processors run:
# each processor it places a position on runs, and no other.
zooplan = next(s for s in json.load(open(sys.argv[2]))["stitch"]["systems"] if s["name"] == "zooplan")
placed = {p for sel in zooplan["selections"] if sel["slo"] in ("C07", "C19") for t in sel["tasks"] for p in t["placement"]}
assert {tracks[e["tid"]] for e in runs} == placed, ("runs on", {tracks[e["tid"]] for e in runs}, "placed on", placed)
if len(placed) < 2:
    sys.exit(0)  # one processor: nothing runs at the same time
runs.sort(key=lambda e: e["ts"])
overlap = 0
for i, a in enumerate(runs):
    for b in runs[i + 1:]:
        if b["ts"] >= a["ts"] + a["dur"]: break
        if b["tid"] != a["tid"] and b["args"]["task"].split("@")[0] != a["args"]["task"].split("@")[0]: overlap += 1
assert overlap > 0, "no two tasks ran at the same time on the two processors"
PYEOF
then pass "--trace: one track per processor, tasks overlapping"; else fail "--trace content"; fi

# --rounds: the trace in segments, every system serving each in turn; every query measured once; the
# calibration's runs spread over the rounds (4 in pieces of 2, 1, 1) and pooled.
if "$BIN/plan-run" "$WORK/bundle" --serve --compare SV-LO-NP,AV-NP --slo C07 --count 30 --rate 300 --rounds 3 \
     --calibration-rounds 4 --json "$WORK/rounds.json" > "$WORK/rounds.txt" 2>&1 && $PY - "$WORK/rounds.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert sorted(r["systems"]) == ["AV-NP", "SV-LO-NP", "zooplan"], sorted(r["systems"])
for name, s in r["systems"].items():
    m = s["measured"]
    assert m["queries"] == r["queries"] == 120 and m["completed"] == 120 and m["p50_ms"] > 0, (name, m)
    c = s["calibration"]
    assert c["runs_per_slot"] == 4 and c["dispatch_ms"] > 0 and c["processors"], (name, c)
    assert s["predicted"]["queries"] == 120, (name, s["predicted"])
PYEOF
then pass "--serve --rounds 3: each system serves the trace in three interleaved segments, calibrated in pieces"
else fail "--rounds: $(cat "$WORK/rounds.txt")"; fi

# A plan made for one workload, served at another: a note says so.
"$BIN/plan-solve" "$PROF" -o "$WORK/rate/plan.json" --slo grid --rate 40 --calibration-rounds 0 >/dev/null
"$BIN/plan-emit" "$WORK/rate/plan.json" -o "$WORK/rate/bundle" >/dev/null
"$BIN/plan-run" "$WORK/rate/bundle" --serve --slo C07 --count 5 --rate 80 --calibration-rounds 0 > /dev/null 2> "$WORK/rate.err" \
  && grep -q "note: the plan's choice was made for breast_cancer 40 q/s, digits 40 q/s, iris 40 q/s, wine 40 q/s, memory budget [0-9]* bytes (poisson); served here at 80 q/s per task (poisson)" "$WORK/rate.err" \
  && "$BIN/plan-run" "$WORK/rate/bundle" --serve --slo C07 --count 5 --rate 40 --calibration-rounds 0 > /dev/null 2> "$WORK/rate2.err" \
  && ! grep -q "was made for" "$WORK/rate2.err" \
  && pass "serving at another rate than the plan was made for is noted" || fail "workload note: $(cat "$WORK/rate.err" "$WORK/rate2.err")"
# --with: another plan's choice (here SparseLoom alone, of the same profile and workload) served
# beside the plan's in the same rounds, on the same trace; a plan for another workload is refused.
"$BIN/plan-solve" "$PROF" -o "$WORK/only/plan.json" --slo grid --rate 40 --calibration-rounds 0 --only sparseloom \
  >/dev/null && "$BIN/plan-emit" "$WORK/only/plan.json" -o "$WORK/only/bundle" >/dev/null
if "$BIN/plan-run" "$WORK/rate/bundle" --serve --slo C07 --duration-ms 300 --calibration-rounds 0 --rounds 2 \
     --with "SparseLoom-alone=$WORK/only/bundle" --json "$WORK/with.json" > "$WORK/with.txt" 2>&1 && $PY -c "
import json, sys
r = json.load(open(sys.argv[1]))
s = r['systems']
assert sorted(s) == ['SparseLoom-alone', 'zooplan'], sorted(s)
w, z = s['SparseLoom-alone'], s['zooplan']
assert w['measured']['queries'] == z['measured']['queries'] > 0, (w['measured'], z['measured'])
assert w['bundle'].endswith('only/bundle') and 'only/bundle' in w['description'], w
" "$WORK/with.json"; then pass "--with: another bundle's choice served beside the plan's on the same trace"
else fail "--with: $(cat "$WORK/with.txt")"; fi
rejected "--with a plan for another workload" 1 "its plan serves another trace than" -- \
  "$BIN/plan-run" "$WORK/rate/bundle" --serve --slo C07 --duration-ms 300 --calibration-rounds 0 \
  --with "other=$WORK/bundle"
rejected "--with a name served already" 1 "--with zooplan=$WORK/only/bundle: a system of that name is served already" -- \
  "$BIN/plan-run" "$WORK/rate/bundle" --serve --slo C07 --duration-ms 300 --calibration-rounds 0 \
  --with "zooplan=$WORK/only/bundle"
rejected "--with without a name" 2 "--with: expected NAME=BUNDLE, got" -- \
  "$BIN/plan-run" "$WORK/rate/bundle" --serve --slo C07 --duration-ms 300 --with "$WORK/only/bundle"
# --serving-order NAME=ORDER: one system's order; here the plan's own choice served again beside
# itself (--with its own bundle), first come first served, in the same rounds.
if "$BIN/plan-run" "$WORK/rate/bundle" --serve --slo C07 --duration-ms 300 --calibration-rounds 0 \
     --with "own (first come)=$WORK/rate/bundle" --serving-order "own (first come)=first-come" \
     --serving-order zooplan=earliest-deadline --json "$WORK/own.json" > "$WORK/own.txt" 2>&1 && $PY -c "
import json, sys
s = json.load(open(sys.argv[1]))['systems']
assert sorted(s) == ['own (first come)', 'zooplan'], sorted(s)
assert s['own (first come)']['serving_order'] == 'first-come', s['own (first come)']['serving_order']
assert s['zooplan']['serving_order'] == 'earliest-deadline', s['zooplan']['serving_order']
assert s['own (first come)']['measured']['queries'] == s['zooplan']['measured']['queries'] > 0
" "$WORK/own.json"; then pass "--serving-order NAME=ORDER: one system's order, beside the others'"
else fail "--serving-order NAME=ORDER: $(cat "$WORK/own.txt")"; fi
rejected "--serving-order for a system not served" 1 "--serving-order nobody=first-come: not among the systems served (zooplan)" -- \
  "$BIN/plan-run" "$WORK/rate/bundle" --serve --slo C07 --duration-ms 300 --calibration-rounds 0 \
  --serving-order nobody=first-come
rejected "--serving-order NAME=ORDER with an unknown order" 2 "--serving-order zooplan=shortest: expected ORDER or NAME=ORDER" -- \
  "$BIN/plan-run" "$WORK/rate/bundle" --serve --slo C07 --duration-ms 300 --serving-order zooplan=shortest
rejected "--serving-order twice for one system" 2 "--serving-order zooplan=first-come: given twice for system 'zooplan'" -- \
  "$BIN/plan-run" "$WORK/rate/bundle" --serve --slo C07 --duration-ms 300 --serving-order zooplan=earliest-deadline \
  --serving-order zooplan=first-come

# Without --rate, --process or --arrivals, the plan is served at the workload it was made for.
"$BIN/plan-run" "$WORK/rate/bundle" --serve --slo C07 --duration-ms 500 --calibration-rounds 0 --json "$WORK/rate3.json" \
  > /dev/null 2> "$WORK/rate3.err" \
  && grep -q "note: served at the workload the plan's choice was made for: breast_cancer 40 q/s" "$WORK/rate3.err" \
  && $PY -c "
import json, sys
a = json.load(open(sys.argv[1]))['arrivals']
assert a['process'] == 'poisson' and a['rate_qps'] == {'breast_cancer': 40, 'digits': 40, 'iris': 40, 'wine': 40}, a
" "$WORK/rate3.json" && pass "a plan is served at its own workload by default" || fail "plan workload default: $(cat "$WORK/rate3.err")"
# --serve-in-turn: the configurations the plan is made to serve in turn; plan-run serves them without --slo.
"$BIN/plan-solve" "$PROF" -o "$WORK/turn/plan.json" --slo grid --rate 40 --calibration-rounds 0 \
  --serve-in-turn C19,C07 > "$WORK/turn.txt" \
  && grep -q "served in turn as plan-run --serve serves them (C19, C07)" "$WORK/turn.txt" \
  && "$BIN/plan-emit" "$WORK/turn/plan.json" -o "$WORK/turn/bundle" >/dev/null \
  && "$BIN/plan-run" "$WORK/turn/bundle" --serve --duration-ms 300 --calibration-rounds 0 --json "$WORK/turn.json" \
    > /dev/null 2>&1 \
  && $PY -c "
import json, sys
plan = json.load(open(sys.argv[1]))['stitch']
assert plan['workload']['served_in_turn'] == ['C19', 'C07'], plan['workload']
assert json.load(open(sys.argv[2]))['slo_configurations'] == ['C19', 'C07']
" "$WORK/turn/plan.json" "$WORK/turn.json" \
  && pass "--serve-in-turn: recorded in the plan and served in that order without --slo" \
  || fail "--serve-in-turn: $(cat "$WORK/turn.txt")"
for bad in "C99|--serve-in-turn C99: no such SLO configuration in --slo grid (it has C01 .. C25)" \
           "C07,C07|--serve-in-turn C07: named twice"; do
  if "$BIN/plan-solve" "$PROF" -o "$WORK/turnbad/plan.json" --slo grid --rate 40 --calibration-rounds 0 \
       --serve-in-turn "${bad%%|*}" > /dev/null 2> "$WORK/turnbad.err"; then fail "--serve-in-turn ${bad%%|*} accepted"
  elif grep -qF -e "${bad#*|}" "$WORK/turnbad.err" && [ "$(wc -l < "$WORK/turnbad.err")" = 1 ] && [ ! -e "$WORK/turnbad" ]; then
    pass "--serve-in-turn ${bad%%|*}: one line, nothing written"
  else fail "--serve-in-turn ${bad%%|*}: $(cat "$WORK/turnbad.err")"; fi
done

# Frames and a device memory budget in the workload: the frame's DNN chain is served as queries beside the
# tasks' (each later DNN on its own input), the units kept resident as the planner kept them.
$PY - "$WORK/frames_slo.json" <<'PYEOF'
import json, sys
tasks = ["digits", "wine", "breast_cancer", "iris"]
json.dump({"schema_version": 1,
           "configurations": [{"id": "F", "tasks": {t: {"accuracy": 0.5, "latency_ms": 20} for t in tasks}}],
           "workload": {"rate_qps": {"digits": 60, "iris": 5},
                        "frames": [{"name": "cam", "period_ms": 10, "dnns": ["breast_cancer", "wine"],
                                    "depends_on": {"wine": ["breast_cancer"]}}],
                        "memory_budget": "50%"}}, open(sys.argv[1], "w"))
PYEOF
"$BIN/plan-solve" "$PROF" -o "$WORK/frames/plan.json" --slo "$WORK/frames_slo.json" --calibration-rounds 0 >/dev/null \
  && "$BIN/plan-emit" "$WORK/frames/plan.json" -o "$WORK/frames/bundle" >/dev/null \
  && "$BIN/plan-run" "$WORK/frames/bundle" --serve --duration-ms 1000 --calibration-rounds 0 --json "$WORK/frames.json" \
       >/dev/null 2>"$WORK/frames.err" \
  && $PY - "$WORK/frames.json" <<'PYEOF' && pass "frames served as DNN chains beside the tasks, residency as planned" || fail "frames: $(cat "$WORK/frames.err")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["frames"] == [{"chain": "cam.0", "dnns": ["breast_cancer", "wine"], "latency_ms": 10, "period_ms": 10}], r["frames"]
assert r["residency"].startswith("by load cost per byte"), r["residency"]
m = r["systems"]["zooplan"]["measured"]
# 1 s: 100 frames, about 60 + 5 task queries (Poisson); wine and breast_cancer have no queries of their own.
assert 130 <= r["queries"] <= 200 and m["completed"] == r["queries"], (r["queries"], m)
assert r["systems"]["zooplan"]["measured"]["accuracy"] > 0.8, r["systems"]["zooplan"]["measured"]
# Where the queries (and violations) are, per task and frame chain, measured beside predicted.
per = r["systems"]["zooplan"]["tasks"]
assert sorted(per) == ["cam.0", "digits", "iris"], sorted(per)
assert sum(t["measured"]["queries"] for t in per.values()) == r["queries"], per
assert per["cam.0"]["measured"]["queries"] == per["cam.0"]["predicted"]["queries"] == 100, per["cam.0"]
PYEOF

# By default only the plan's choice is served.
if "$BIN/plan-run" "$WORK/bundle" --serve --slo C07 --count 20 --calibration-rounds 0 --json "$WORK/only.json" \
     >"$WORK/only.txt" 2>&1 && $PY -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert sorted(r['systems']) == ['zooplan'], sorted(r['systems'])" "$WORK/only.json"; then
  pass "--serve without --compare serves the plan's choice only"
else
  fail "default --serve: $(cat "$WORK/only.txt")"
fi

# plan-run BUNDLE: the plan's choice per task, scored on the task's whole test
# split; --compare all adds every other system's rows.
if "$BIN/plan-run" "$WORK/bundle" --slo C19 --repeat 1 --json >"$WORK/run.json" 2>"$WORK/run.err" &&
   "$BIN/plan-run" "$WORK/bundle" --slo C19 --repeat 1 --compare all --json >"$WORK/compare.json" 2>>"$WORK/run.err" &&
   $PY - "$WORK/run.json" "$WORK/compare.json" "$WORK/plan.json" "$SRC/testdata/multitask" <<'PYEOF'
import json, os, sys
import numpy as np
run, compare, plan = (json.load(open(f)) for f in sys.argv[1:4])
zoo = json.load(open(os.path.join(sys.argv[4], "zoo.json")))
split = {t["name"]: len(np.load(os.path.join(sys.argv[4], t["dataset"]["inputs"]))) for t in zoo["tasks"] if "dataset" in t}
st = plan["stitch"]
assert st["chosen_system"] == "zooplan"
assert {t["system"] for t in run["tasks"]} == {"zooplan"}, run["tasks"]
assert [t["task"] for t in run["tasks"]] == [t["name"] for t in st["tasks"]]
for t in run["tasks"]:
    chosen = next(s for s in st["systems"] if s["name"] == st["chosen_system"])
    sel = next(c for s in chosen["selections"] if s["slo"] == "C19" for c in s["tasks"] if c["task"] == t["task"])
    if not t["ran"]:
        assert not sel["feasible"], t
        continue
    assert t["combination"] == sel["combination"] and t["processors"] == sel["placement"], (t, sel)
    assert t["samples"] == split[t["task"]] and t["accuracy"] is not None, (t, split)
systems = [s["name"] for s in st["systems"]]
assert [t["system"] for t in compare["tasks"][::len(st["tasks"])]] == systems, compare["tasks"]
PYEOF
then pass "plan-run BUNDLE runs the plan's choice on the whole test split; --compare all adds the others"
else fail "plan-run BUNDLE: $(cat "$WORK/run.err")"; fi
# --input TASK=FILE.npy on a bundle: the plan's choice for that task runs on
# it; --save-outputs writes TASK.OUTPUT.npy, equal to the reference chain's.
$PY - "$SRC/testdata/multitask" "$WORK/digit.npy" <<'PYEOF'
import json, os, sys
import numpy as np
zoo = json.load(open(os.path.join(sys.argv[1], "zoo.json")))
t = next(t for t in zoo["tasks"] if t["name"] == "digits")
x = np.load(os.path.join(sys.argv[1], t["dataset"]["inputs"]))[:1].astype(np.float32)
np.save(sys.argv[2], x)
PYEOF
if "$BIN/plan-run" "$WORK/bundle" --slo C19 --repeat 1 --input "digits=$WORK/digit.npy" --save-outputs "$WORK/saved" \
     --json >"$WORK/input.json" 2>"$WORK/input.err" && $PY - "$WORK/input.json" "$WORK/saved" <<'PYEOF'
import json, os, sys
import numpy as np
r = json.load(open(sys.argv[1]))
assert [t["task"] for t in r["tasks"]] == ["digits"], r["tasks"]
t = r["tasks"][0]
assert t["ran"] and t["match"] and t["samples"] == 1 and t["inputs"].endswith("digit.npy"), t
files = [f for f in os.listdir(sys.argv[2]) if f.endswith(".npy")]
assert len(files) == 1 and files[0].startswith("digits."), files
assert np.load(os.path.join(sys.argv[2], files[0])).shape[0] == 1
PYEOF
then pass "--input TASK=FILE.npy and --save-outputs on a bundle"; else fail "bundle --input: $(cat "$WORK/input.err")"; fi
rejected "--input naming no task" 1 "--input nosuch=$WORK/digit.npy: the plan has no task 'nosuch' (its tasks: digits," -- \
  "$BIN/plan-run" "$WORK/bundle" --input "nosuch=$WORK/digit.npy" --save-outputs "$WORK/saved2"

# A plan written before the plan named its choice is refused.
$PY - "$WORK/plan.json" "$WORK/old.json" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1]))
del p["stitch"]["chosen_system"]
json.dump(p, open(sys.argv[2], "w"))
PYEOF
rejected "a plan of the old shape" 1 "written by an older plan-solve (its selections are not the plan's choice); re-run plan-solve" -- \
  "$BIN/plan-emit" "$WORK/old.json" -o "$WORK/oldbundle"

# --- bad input ---
printf 'time_ms,task,sample\n0,digits,100\n' > "$WORK/sample100.csv"
rejected "an arrival's sample beyond --samples" 1 "sample 100 is outside the 8 samples of task 'digits' (serving reads the first 8 of its dataset: raise --samples)" -- \
  "$BIN/plan-run" "$WORK/bundle" --serve --samples 8 --arrivals "$WORK/sample100.csv" --json "$WORK/out/x.json"
rejected "--json FILE without --serve" 2 "--json FILE: a file is for --serve's report; without --serve, --json alone prints" -- \
  "$BIN/plan-run" "$WORK/bundle" --json "$WORK/out/x.json"
rejected "--compare naming no system" 1 "--compare nope: the plan carries no such system (it carries: zooplan, Algorithm-1," -- \
  "$BIN/plan-run" "$WORK/bundle" --serve --compare nope --json "$WORK/out/x.json"
printf 'time_ms,task,sample\n0,digits,0\n1,nosuchtask,0\n' > "$WORK/unknown.csv"
rejected "arrivals with an unknown task" 1 "unknown.csv:3: task 'nosuchtask' is not known" -- \
  "$BIN/plan-run" "$WORK/bundle" --serve --arrivals "$WORK/unknown.csv" --json "$WORK/out/x.json"
printf 'time_ms,task,sample\n-2,digits,0\n' > "$WORK/negative.csv"
rejected "arrivals with a negative time" 1 "negative.csv:2: time -2 is negative" -- \
  "$BIN/plan-run" "$WORK/bundle" --serve --arrivals "$WORK/negative.csv" --json "$WORK/out/x.json"
cp -r "$WORK/bundle" "$WORK/nocache"
# The cache of a unit the plan's choice runs (the first task's first position, on its processor).
rm "$($PY - "$WORK/nocache" <<'PYEOF'
import json, os, sys
b = sys.argv[1]
plan = json.load(open(os.path.join(b, "plan.json")))
st = plan["stitch"]
chosen = next(s for s in st["systems"] if s["name"] == st["chosen_system"])
choice = next(c for sel in chosen["selections"] for c in sel["tasks"] if c["feasible"])
unit = next(u for u in plan["units"] if u["id"] == "subgraph:%s/0/%s" % (choice["task"], choice["combination"].split("+")[0]))
policy = next(p["policy"] for p in plan["processors"] if p["name"] == choice["placement"][0])
print(os.path.join(b, "caches", "%s.%s.zwc" % (unit["sha256"][:16], policy)))
PYEOF
)"
rejected "a bundle missing a weight cache" 1 "missing from the bundle" -- \
  "$BIN/plan-run" "$WORK/nocache" --serve --compare all --json "$WORK/out/x.json" --trace "$WORK/out/x.trace.json"
$PY - "$SRC/testdata/multitask/zoo.json" "$WORK/bigzoo.json" "$SRC/testdata/multitask" <<'PYEOF'
import json, os, sys
z = json.load(open(sys.argv[1]))
z["processors"][1]["cores"] = [4095]
root = os.path.abspath(sys.argv[3])
for t in z["tasks"]:
    for v in t["variants"]: v["onnx"] = os.path.join(root, v["onnx"])
    if "dataset" in t:
        for k in ("inputs", "labels", "calibration"):
            if k in t["dataset"]: t["dataset"][k] = os.path.join(root, t["dataset"][k])
json.dump(z, open(sys.argv[2], "w"))
PYEOF
"$BIN/zoo-stitch" "$WORK/bigzoo.json" -o "$WORK/bigstitch" >/dev/null
rejected "a processor's cores not on this machine" 1 "processor 'npu': core 4095 is not on this machine" -- \
  "$BIN/zoo-profile" "$WORK/bigstitch" -o "$WORK/bigprofile"
finish
