#!/usr/bin/env bash
# A stitched multitask group through the pipeline: zoo-mts -> plan-solve --mode
# mts (measured costs, groups placed as units) -> plan-emit -> plan-run --serve
# (with --compare all, every system the plan carries served on the pinned processors, outputs
# checked against each member's own model first). Bad input: a stitched graph
# that is not the one mts.json records, processors without cores, a model
# changed since planning, a bundle missing a model, an unknown system.
source "$(dirname "$0")/../cli/lib.sh"
cp -r "$SRC/testdata/mts" "$WORK/zoo"
cd "$WORK"

"$BIN/zoo-mts" zoo/zoo.json -o st >/dev/null || fail "zoo-mts"
out="$("$BIN/plan-solve" --mode mts st -o plan.json --repeat 5 --seed 3)" || fail "plan-solve --mode mts: $out"
case "$out" in *zooplan*makespan*sequential*makespan*proven\ optimal*) pass "plan-solve prints units and systems" ;;
  *) fail "plan-solve summary: $out" ;; esac
$PY - plan.json <<'PY' && pass "plan.json: two units measured on both processors, four systems, zooplan optimal" || fail "plan.json"
import json, sys
plan = json.load(open(sys.argv[1]))
m = plan["mts"]
assert [u["group"] for u in m["units"]] == ["digits", "tabular"], m["units"]
assert m["processors"] == ["cpu", "npu"], m["processors"]
assert [p["name"] for p in plan["processors"]] == ["cpu", "npu"] and plan["processors"][1]["cores"] == [1]
for u in m["units"]:
    assert len(u["stitched_ms"]) == 2 and all(v > 0 for v in u["stitched_ms"]), u
    assert all(len(b["ms"]) == 2 for b in u["members"]), u
assert len(m["units"][0]["members"]) == 8 and m["seed"] == 3
assert [s["name"] for s in m["systems"]] == ["zooplan", "mts", "sequential", "one-processor"]
assert m["status"] == "optimal" and m["solver"] == "enumeration" and m["assignments"] == 4
z = m["systems"][0]
assert z["makespan_ms"] <= min(s["makespan_ms"] for s in m["systems"]) + 1e-9, m["systems"]
assert m["systems"][2]["stitched"] == [False, False] and m["systems"][3]["placement"] == ["cpu", "cpu"]
PY

"$BIN/plan-emit" plan.json -o bundle >/dev/null || fail "plan-emit"
[ "$(ls bundle/models | wc -l)" = 13 ] && pass "bundle: 2 stitched graphs + 11 member models" \
  || fail "bundle models: $(ls bundle/models | wc -l)"
# Run (not served): every member task of the plan's choice on its whole dataset, then every system.
"$BIN/plan-run" bundle --repeat 2 --json >run.json || fail "plan-run bundle"
"$BIN/plan-run" bundle --repeat 2 --compare all --json >runall.json || fail "plan-run bundle --compare all"
$PY - run.json runall.json zoo/zoo.json <<'PY' && pass "run: each member task on its whole split, outputs its own model's, every system" || fail "run.json"
import json, sys, numpy as np, os
r, a, z = (json.load(open(f)) for f in sys.argv[1:4])
tasks = {t["name"]: t for t in z["tasks"]}
assert r["ok"] and len(r["tasks"]) == 11 and {t["system"] for t in r["tasks"]} == {"zooplan"}, r["tasks"]
for t in r["tasks"]:
    n = len(np.load(os.path.join("zoo", tasks[t["task"]]["dataset"]["labels"])))
    assert t["samples"] == n and t["inputs"] == "dataset" and t["match"], t
    assert 0.5 < t["accuracy"] <= 1 and t["measured_ms"] > 0, t
assert a["ok"] and len(a["tasks"]) == 44 and [t["system"] for t in a["tasks"][::11]] == ["zooplan", "mts", "sequential", "one-processor"]
# The same weights whichever unit a task runs in: the same accuracy under every system.
acc = {}
for t in a["tasks"]:
    assert acc.setdefault(t["task"], t["accuracy"]) == t["accuracy"], t
    assert t["combination"].startswith("group:" if t["system"] in ("mts", "one-processor") else ("model:", "group:")), t
PY
rejected "--task not a member" 1 "--task nope: no such member task" -- "$BIN/plan-run" bundle --task nope
rejected "--cold on an MTS bundle" 1 "is an MTS plan's bundle" -- "$BIN/plan-run" bundle --cold

table="$("$BIN/plan-run" bundle --serve --compare all --count 12 --rate 200 --calibration-rounds 3 --seed 1 --json serve.json)" \
  || fail "plan-run --serve: $table"
case "$table" in *zooplan*mts*sequential*one-processor*) pass "serve table names every system" ;; *) fail "table: $table" ;; esac
$PY - serve.json <<'PY' && pass "served: outputs match the members' own, every group query completed" || fail "serve.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert [c["group"] for c in r["output_checks"]] == ["digits", "tabular"]
assert all(c["match"] and c["samples"] == 8 for c in r["output_checks"]), r["output_checks"]
assert r["queries"] == 24 and r["notes"] == [], (r["queries"], r["notes"])
for name, s in r["systems"].items():
    assert s["measured"]["completed"] == 24 and s["measured"]["p50_ms"] > 0, (name, s["measured"])
    assert s["predicted"]["queries"] == 24, (name, s["predicted"])
PY
rejected "unknown system" 1 "--compare nope: the plan carries no such system" -- \
  "$BIN/plan-run" bundle --serve --count 2 --compare nope
rejected "--budget on an MTS bundle" 1 "no preload budgets or SLO configurations" -- \
  "$BIN/plan-run" bundle --serve --count 2 --budget 15%

# Bad input.
cp -r st st2 && printf 'x' >> st2/digits.onnx
rejected "stitched graph changed since zoo-mts" 1 "st2/digits.onnx: not the stitched graph st2/mts.json records for group 'digits'" -- \
  "$BIN/plan-solve" --mode mts st2 -o bad.json
$PY -c "import json; j=json.load(open('zoo/zoo.json')); [p.pop('cores') for p in j['processors']]; json.dump(j, open('zoo/nocores.json', 'w'))"
rejected "processors without cores" 1 "zoo/nocores.json: processor 'cpu' names no cores" -- \
  "$BIN/plan-solve" --mode mts st --zoo zoo/nocores.json -o bad.json
cp zoo/models/gt4.onnx gt4.orig && printf 'x' >> zoo/models/gt4.onnx
rejected "member model changed since planning" 1 "zoo/models/gt4.onnx: does not match the hash plan.json records" -- \
  "$BIN/plan-emit" plan.json -o bundle2
cp gt4.orig zoo/models/gt4.onnx
cp -r bundle bundle3 && rm bundle3/models/"$($PY -c "import json; p = json.load(open('plan.json')); print(next(u['sha256'][:16] for u in p['units'] if u['id'] == 'model:' + p['mts']['units'][1]['group'] + '/' + p['mts']['units'][1]['members'][0]['task']))")".onnx
rejected "bundle missing a member model" 1 "bundle3/models/" -- "$BIN/plan-run" bundle3 --serve --count 2
finish
