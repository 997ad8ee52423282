#!/usr/bin/env bash
# A workload's frames scheduled as HaX-CoNN schedules concurrent DNNs, inside the
# composed planner and alone: the deployment zoo's branch-rich CNN and tracker
# (as a zoo of their own) run every frame. plan-solve on the profile prints where
# the frame's concurrent schedule (layer groups from zoo-profile's per-node
# profile) runs each DNN; --only haxconn runs them there and is predicted no
# better than the composed plan; the plan is bundled and served frame by frame.
source "$(dirname "$0")/lib.sh"
D="$WORK/frames"
mkdir -p "$D"
$PY "$(dirname "$0")/sub_zoo.py" "$SRC/testdata/deployment" "$D" camera branchy track
# slo_loose.json: 8 ms, every plan meets it; slo.json (written below from the
# profile): a bound just below branchy's whole run where the frame's schedule puts
# it, so that HaX-CoNN alone misses it and the composed plan may do better.
write_slo() {  # NAME BOUND_MS [DEPENDS]
  $PY - "$D/$1" "$2" "${3:-}" <<'PYEOF'
import json, sys
path, bound, deps = sys.argv[1], float(sys.argv[2]), sys.argv[3]
frame = {"name": "camera", "period_ms": 10, "latency_ms": bound, "dnns": ["branchy", "track"]}
if deps:
    frame["depends_on"] = {"track": ["branchy"]}
tasks = {t: {"accuracy": 0.9, "latency_ms": bound} for t in ("branchy", "track")}
json.dump({"schema_version": 1, "configurations": [{"id": "steady", "tasks": tasks}],
           "workload": {"frames": [frame], "memory_budget": 20000000}}, open(path, "w"), indent=1)
PYEOF
}
write_slo slo_loose.json 8
write_slo slo_chain.json 8 chain
"$BIN/zoo-stitch" "$D/zoo.json" -o "$D/stitch" >/dev/null
"$BIN/zoo-profile" "$D/stitch" -o "$D/profile" --quiet >/dev/null

# The composed plan and HaX-CoNN alone, on zoo-profile's figures (no calibration:
# the same every run), at a bound just below the whole CNN where HaX-CoNN runs it.
"$BIN/plan-solve" "$D/profile" -o "$D/loose.json" --slo "$D/slo_loose.json" --calibration-rounds 0 --quiet >"$D/loose.txt"
bound="$($PY - "$D/loose.txt" "$D/profile/profile.csv" <<'PYEOF'
import csv, re, sys
text = open(sys.argv[1]).read()
proc = re.search(r"^frame camera: .* runs branchy on (\w+) \(", text, re.M).group(1)
# Whole on the schedule's processor as the plan costs it: its subgraphs' profiled runs.
whole = sum(float(r["median_ms"]) for r in csv.DictReader(open(sys.argv[2]))
            if r["kind"] == "subgraph" and r["task"] == "branchy" and r["variant"] == "dense" and r["processor"] == proc)
print(0.95 * whole)
PYEOF
)"
write_slo slo.json "$bound"
"$BIN/plan-solve" "$D/profile" -o "$D/plan.json" --slo "$D/slo.json" --calibration-rounds 0 --quiet >"$D/solve.txt"
"$BIN/plan-solve" "$D/profile" -o "$D/haxconn.json" --slo "$D/slo.json" --calibration-rounds 0 --only haxconn \
  --quiet >"$D/haxconn.txt"
if $PY - "$D/solve.txt" "$D/haxconn.txt" "$D/haxconn.json" <<'PYEOF'
import json, re, sys
solve, alone = open(sys.argv[1]).read(), open(sys.argv[2]).read()
line = re.search(r"^frame camera: the concurrent schedule \((\S+) (optimal|feasible), frame latency ([0-9.]+) ms\) "
                 r"runs (.*)$", alone, re.M)
assert line, alone
assert line.group(0) in solve, "the composed plan schedules the frame the same way"
where = dict(re.match(r"(\w+) on (\S+) \(", part).groups() for part in line.group(4).split(", "))
assert set(where) == {"branchy", "track"}, where
p = json.load(open(sys.argv[3]))
st = p["stitch"]
z = next(s for s in st["systems"] if s["name"] == st["chosen_system"])
assert "HaX-CoNN alone" in z["description"], z["description"]
for c in z["selections"][0]["tasks"]:
    procs = where[c["task"]].split("+")
    if len(procs) == 1:  # kept whole by the schedule: run whole there
        assert c["combination"] == "dense+dense" and set(c["placement"]) == set(procs), (c, where)
    else:  # its layer groups over several processors: the model under that placement
        assert c["combination"] == f"model:camera/{c['task']}/dense" and c["placement"] == procs, (c, where)
def violations(text):
    return float(re.search(r"^zooplan\s+([0-9.]+)%", text, re.M).group(1))
assert violations(alone) >= 49, violations(alone)  # branchy's chain, half the frame's DNNs, misses
assert violations(solve) <= violations(alone), (violations(solve), violations(alone))
print(line.group(0), "| composed", violations(solve), "HaX-CoNN alone", violations(alone))
PYEOF
then pass "plan-solve schedules the frame's DNNs as HaX-CoNN does; --only haxconn runs them there, predicted no better than the composed plan"
else fail "the frame's concurrent schedule: $(cat "$D/solve.txt" "$D/haxconn.txt")"; fi

# A frame whose tracker waits for the CNN: the schedule follows the dependency.
"$BIN/plan-solve" "$D/profile" -o "$D/chain.json" --slo "$D/slo_chain.json" --calibration-rounds 0 --only haxconn \
  --quiet >"$D/chain.txt"
if grep -q "^frame camera: the concurrent schedule (.*) runs branchy on .*, track on " "$D/chain.txt"
then pass "plan-solve --only haxconn schedules a frame with a dependency, the CNN first"
else fail "a frame with a dependency: $(cat "$D/chain.txt")"; fi

# The HaX-CoNN plan as a bundle, served frame by frame.
"$BIN/plan-emit" "$D/haxconn.json" -o "$D/bundle" >/dev/null
"$BIN/plan-run" "$D/bundle" --serve --duration-ms 1000 --seed 1 --json "$D/serve.json" >/dev/null 2>&1
if $PY - "$D/serve.json" <<'PYEOF'
import json, sys
z = json.load(open(sys.argv[1]))["systems"]["zooplan"]
for chain in ("camera.0", "camera.1"):  # the frame's two DNNs, independent: a chain each
    assert z["tasks"][chain]["measured"]["completed"] >= 90, (chain, z["tasks"][chain])
print(f"measured {z['measured']['violation_rate']:.3f}, predicted {z['predicted']['violation_rate']:.3f}")
PYEOF
then pass "plan-run --serve serves the HaX-CoNN plan's frames"
else fail "plan-run --serve on the HaX-CoNN plan"; fi
finish
