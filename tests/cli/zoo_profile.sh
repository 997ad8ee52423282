#!/usr/bin/env bash
# zoo-profile on the digits and multitask zoos: every output file, the report's
# figures, reuse of unchanged measurements, an imported real ORT profile, errors.
source "$(dirname "$0")/lib.sh"
"$BIN/zoo-stitch" "$SRC/testdata/digits/zoo.json" -o "$WORK/st" >/dev/null
"$BIN/zoo-stitch" "$SRC/testdata/multitask/zoo.json" -o "$WORK/mst" >/dev/null
FAST=(--repeat 5 --warmup 1 --latency-validation 6)

"$BIN/zoo-profile" "$WORK/st" -o "$WORK/prof" "${FAST[@]}" > "$WORK/out1.txt"
for f in profile.csv node_profile.csv accuracy.csv latency_model.json report.json; do
  [ -s "$WORK/prof/$f" ] && pass "digits: $f written" || fail "digits: $f missing"
done
# The estimators live only as long as the run: their predictions are in
# accuracy.csv, which is what plan-solve reads.
extra=$(cd "$WORK/prof" && ls | grep -vxE 'profile.csv|node_profile.csv|accuracy.csv|latency_model.json|report.json' || true)
[ -z "$extra" ] && pass "digits: nothing but the five files" || fail "digits: unexpected files: $extra"
if $PY - "$WORK/prof" "$SRC/testdata/digits/zoo.json" <<'PYEOF'
import csv, json, os, sys
d = sys.argv[1]
r = json.load(open(os.path.join(d, "report.json")))
t = r["tasks"][0]
assert t["exhaustive"] and t["valid_combinations"] == 81, t["valid_combinations"]  # 9 variants, 2 positions
assert t["training_fraction"] <= 0.15, t["training_fraction"]
q = t["accuracy_estimator"]
assert q["method"] == "contested: features and composed" and "contested_samples" in t, q
for k in ("top10_recall_tie_aware", "spearman", "mae"):
    assert 0 <= q[k] <= 1 or k == "spearman", (k, q[k])
curve = q["topk_recall_tie_aware"]
assert sorted(curve) == [f"{k:02d}" for k in range(1, 21)] and curve["10"] == q["top10_recall_tie_aware"], curve
assert q["spearman"] > q["mean_source_accuracy_baseline"]["spearman"], q  # better than Eq. 2 alone
assert t["original_vs_chained_subgraph_mismatches"] == 0
lat = t["latency_estimator"]
assert lat["validated_measurements"] > 0 and lat["mape"] < 0.5, lat
cost = r["profiling_cost"]["paper_units"]
assert cost["exhaustive_T_V^S_(P!+1)"] == 81 * 3 and cost["with_estimators_T_V+T_S_V_P"] == 9 + 2 * 9 * 2, cost
rows = list(csv.DictReader(open(os.path.join(d, "profile.csv"))))
sub = [x for x in rows if x["kind"] == "subgraph"]
assert len(sub) == 2 * 9 * 2, len(sub)  # positions x variants x processors
assert all(float(x["median_ms"]) > 0 for x in sub)
assert any(x["kind"] == "transition" for x in rows)
# The calibrated latency model plan-solve reads: every subgraph on every
# processor, the calibrated overheads, a hand-over between every two processors;
# every valid variant is estimated under every placement order.
lm = json.load(open(os.path.join(d, "latency_model.json")))["tasks"][0]
assert lm["name"] == "digits" and lm["positions"] == 2 and len(lm["boundary_bytes"]) == 1, lm["boundary_bytes"]
assert len(lm["subgraph_ms"]) == 2 * 9 * 2, len(lm["subgraph_ms"])
assert all(s["ms"] > 0 for s in lm["subgraph_ms"])
cal = t["latency_estimator"]["run_overhead_ms_calibrated_on_originals"]  # report.json rounds to 9 digits
assert sorted(lm["overhead_ms"]) == sorted(cal) and all(abs(lm["overhead_ms"][k] - cal[k]) <= 1e-8 * max(1e-3, cal[k]) for k in cal), (lm["overhead_ms"], cal)
assert len(lm["transitions"]) == 2 and all(x["ms_per_byte"] > 0 for x in lm["transitions"]), lm["transitions"]
assert t["placements"] == 2 and t["variant_placements_without_estimate"] == 0, t
# node_profile.csv: every variant model of the zoo under every host processor
# (one per policy and thread count), keyed as plan-solve --mode opplace looks it up.
nodes = list(csv.DictReader(open(os.path.join(d, "node_profile.csv"))))
zoo = json.load(open(sys.argv[2]))
want = {(f"{zoo['name']}/{t['name']}/{v['id']}", p["profile"].get("policy", "default"), str(p["profile"].get("threads", 1)))
        for t in zoo["tasks"] for v in t["variants"] for p in zoo["processors"] if p.get("profile", {}).get("source") == "host"}
assert {(x["model"], x["policy"], x["threads"]) for x in nodes} == want, sorted({(x["model"], x["policy"]) for x in nodes})
assert all(float(x["ms"]) > 0 and float(x["flops"]) >= 0 for x in nodes)
assert any(float(x["flops"]) > 0 for x in nodes) and any(x["op_type"] == "Conv" for x in nodes)
assert any(float(x["output_sparsity"]) > 0.2 for x in nodes)  # ReLU outputs are sparse
print(f"top10 {q['top10_recall_tie_aware']}, spearman {q['spearman']:.3f}, latency MAPE {lat['mape']:.3f}")
PYEOF
then pass "digits report figures"; else fail "digits report figures"; fi

# plan-solve --mode opplace places a zoo variant's operators from zoo-profile's
# directory alone: node_profile.csv (measured per-node costs) and latency_model.json.
if "$BIN/plan-solve" --mode opplace "$SRC/testdata/digits/models/dense.onnx" --zoo "$SRC/testdata/digits/zoo.json" \
     --profile "$WORK/prof" -o "$WORK/opplace_plan.json" > "$WORK/opplace.txt" 2> "$WORK/opplace.err" &&
   $PY - "$WORK/opplace_plan.json" "$WORK/prof/node_profile.csv" <<'PYEOF'
import csv, json, sys
plan = json.load(open(sys.argv[1]))
o, ps = plan["opplace"][0], plan["processors"]
assert o["costSource"] == "measured" and o["processors"] == ["cpu", "npu"], (o["costSource"], o["processors"])
assert [p["name"] for p in ps] == ["cpu", "npu"] and ps[1]["cores"] == [1] and ps[1]["gemm"] == "blis", ps
rows = {r["node"] for r in csv.DictReader(open(sys.argv[2])) if r["model"] == "digits/digits/dense"}
assert o["nodes"] and {n["node"] for n in o["nodes"]} <= rows and o["latencyMs"] > 0, o["nodes"]
PYEOF
then pass "plan-solve --mode opplace reads zoo-profile's node_profile.csv"; else fail "opplace from zoo-profile: $(cat "$WORK/opplace.err")"; fi

# The contested-sample estimator (the default): stitched variants run only
# where their sources disagree (and on an audit of the rest). With stitched
# variants in the training sample the composed accuracy is one more feature of
# the feature estimator ($WORK/prof); with originals only (--training-fraction
# 0) it is the prediction itself; --accuracy-estimator features leaves it out.
"$BIN/zoo-profile" "$WORK/st" -o "$WORK/prof_composed" "${FAST[@]}" --training-fraction 0 > /dev/null
"$BIN/zoo-profile" "$WORK/st" -o "$WORK/prof_features" "${FAST[@]}" --accuracy-estimator features > /dev/null
if $PY - "$WORK/prof" "$WORK/prof_composed" "$WORK/prof_features" <<'PYEOF'
import csv, json, os, sys
for d, mode in ((sys.argv[1], "features and composed"), (sys.argv[2], "composed"), (sys.argv[3], None)):
    r = json.load(open(os.path.join(d, "report.json")))
    t = r["tasks"][0]
    q = t["accuracy_estimator"]
    rows = [x for x in csv.DictReader(open(os.path.join(d, "accuracy.csv")))]
    # accuracy.csv holds the predictions the report scores.
    mae = sum(abs(float(x["predicted_accuracy"]) - float(x["measured_accuracy"])) for x in rows) / len(rows)
    assert abs(mae - q["mae"]) < 1e-6, (mae, q["mae"])
    assert all(0 <= float(x["predicted_accuracy"]) <= 1 for x in rows)
    if mode is None:
        assert r["params"]["accuracy_estimator"] == "features" and q["method"] == "features", q
        assert "contested_samples" not in t and "accuracy_prediction" not in t, t
        continue
    assert r["params"]["accuracy_estimator"] == "contested", r["params"]
    assert t["accuracy_prediction"] == mode + ", the predicted top measured", (d, t["accuracy_prediction"])
    a = t["active_measurement"]
    assert a["top"] == 10 and a["accuracy_work_fraction_of_exhaustive"] <= 0.15 + 1e-9, a
    assert q["method"] == "contested: " + mode and "held_out" in q["feature_estimator"], q
    c = t["contested_samples"]
    assert 0 < c["subgraph_runs"] < c["exhaustive_subgraph_runs"], c
    assert abs(c["fraction_of_exhaustive"] - c["subgraph_runs"] / c["exhaustive_subgraph_runs"]) < 1e-6, c
    if mode == "composed":  # each original predicts what it measured
        assert all(x["predicted_accuracy"] == x["measured_accuracy"] for x in rows if x["kind"] == "original")
PYEOF
then pass "contested-sample and feature estimators"; else fail "contested-sample and feature estimators"; fi

# With the whole budget, the variants predicted in the top 10 are measured on
# every sample, round after round: each of the final top 10 predicts what it measured.
"$BIN/zoo-profile" "$WORK/st" -o "$WORK/prof_active" "${FAST[@]}" --accuracy-budget 1 > /dev/null
if $PY - "$WORK/prof_active" "$WORK/prof" <<'PYEOF'
import csv, json, os, sys
r = json.load(open(os.path.join(sys.argv[1], "report.json")))
t = r["tasks"][0]
a = t["active_measurement"]
assert r["params"]["accuracy_budget"] == 1 and a["rounds"] >= 1 and a["variants_measured"] >= 1, a
assert not a["budget_spent"] and a["subgraph_runs"] > 0, a
rows = sorted(csv.DictReader(open(os.path.join(sys.argv[1], "accuracy.csv"))), key=lambda x: -float(x["predicted_accuracy"]))
assert all(x["predicted_accuracy"] == x["measured_accuracy"] for x in rows[:10]), rows[:10]
base = json.load(open(os.path.join(sys.argv[2], "report.json")))["tasks"][0]["accuracy_estimator"]
assert t["accuracy_estimator"]["top10_recall_tie_aware"] >= base["top10_recall_tie_aware"], (t["accuracy_estimator"], base)
PYEOF
then pass "--accuracy-budget 1: the predicted top is measured"; else fail "active measurement of the predicted top"; fi

# Unchanged inputs: measured rows are reused and the tool says so.
"$BIN/zoo-profile" "$WORK/st" -o "$WORK/prof" "${FAST[@]}" > "$WORK/out2.txt"
grep -q "reused from the previous run" "$WORK/out2.txt" && pass "rerun reuses measured rows" || fail "rerun did not reuse rows"
"$BIN/zoo-profile" "$WORK/st" -o "$WORK/prof" "${FAST[@]}" --force > "$WORK/out3.txt"
grep -q "reused" "$WORK/out3.txt" && fail "--force still reused rows" || pass "--force re-measures"

# A real ORT profile imported for one processor, mapped onto subgraphs.
"$BIN/zoo-profile" "$WORK/st" -o "$WORK/prof_imp" "${FAST[@]}" \
  --import npu=ort-json:"$SRC/testdata/profiles/ort/digits_dense_disabled.json@digits/dense" >/dev/null
if $PY - "$WORK/prof_imp" <<'PYEOF'
import json, os, sys, csv
r = json.load(open(os.path.join(sys.argv[1], "report.json")))
imp = r["imports"][0]
assert imp["subgraph_coverage"] >= 0.95, imp
rows = [x for x in csv.DictReader(open(os.path.join(sys.argv[1], "profile.csv")))
        if x["kind"] == "subgraph" and x["processor"] == "npu"]
assert len(rows) == 2 and all(x["source"] == "ort-json" for x in rows), rows
PYEOF
then pass "ORT import maps onto subgraphs"; else fail "ORT import"; fi

"$BIN/zoo-profile" "$WORK/mst" -o "$WORK/mprof" "${FAST[@]}" >/dev/null
$PY -c "import json,sys; r=json.load(open('$WORK/mprof/report.json')); assert len(r['tasks'])==4" \
  && pass "multitask profiled" || fail "multitask profile"

expect_error "unknown processor" "--processor: the zoo has no processor 'tpu'" "$WORK/nope" -- \
  "$BIN/zoo-profile" "$WORK/st" -o "$WORK/nope" --processor tpu=host
expect_error "import without a variant" "say which variant" "$WORK/nope" -- \
  "$BIN/zoo-profile" "$WORK/st" -o "$WORK/nope" --import npu=ort-json:x.json
expect_error "not a stitch directory" "stitch.json: cannot open" "$WORK/nope" -- \
  "$BIN/zoo-profile" "$WORK/missing" -o "$WORK/nope"
finish
