#!/usr/bin/env bash
# A zoo exported with a dynamic batch (torch.onnx.export with dynamic_axes) runs
# through the whole pipeline like its fixed-batch twin: the same cuts and FLOPs,
# a profile, a plan, a bundle that runs; --batch N scales the analysis; stitched
# subgraphs keep the symbolic batch; a symbolic dim that is not the batch is a
# one-line error until --dim binds it.
#
# The twins are made from the digits zoo's fixed-batch models by
# zp_onnx_batch_twin (tests/cli/onnx_batch_twin.cpp): Flatten becomes torch's
# `x.view(x.size(0), -1)` (a Reshape whose shape tensor holds -1 and, in the
# dynamic twin, the batch taken from Shape), and the dynamic twin's inputs and
# outputs get the symbolic leading dim 'batch'.
source "$(dirname "$0")/lib.sh"
TWIN="$BIN/zp_onnx_batch_twin"
VARIANTS=(dense u70 s50 int8)

make_zoo() {  # make_zoo DIR MODE: the digits zoo, four variants, models rewritten by MODE
  mkdir -p "$1/models"
  cp -r "$SRC/testdata/digits/data" "$1/"
  for v in "${VARIANTS[@]}"; do "$TWIN" "$SRC/testdata/digits/models/$v.onnx" "$1/models/$v.onnx" "$2"; done
  $PY - "$SRC/testdata/digits/zoo.json" "$1/zoo.json" "${VARIANTS[@]}" <<'PYEOF'
import json, sys
z = json.load(open(sys.argv[1]))
keep = sys.argv[3:]
z["tasks"][0]["variants"] = [v for v in z["tasks"][0]["variants"] if v["id"] in keep]
json.dump(z, open(sys.argv[2], "w"), indent=1)
PYEOF
}
make_zoo "$WORK/fixed" fixed
make_zoo "$WORK/dynamic" dynamic
make_zoo "$WORK/hw" dynamic-hw

cuts_line() { grep "FLOPs per position" "$1"; }

# --- zoo-stitch: the same cuts, FLOPs and signatures as the fixed-batch twin ---
"$BIN/zoo-stitch" "$WORK/fixed/zoo.json" -o "$WORK/st_fixed" > "$WORK/st_fixed.txt"
"$BIN/zoo-stitch" "$WORK/dynamic/zoo.json" -o "$WORK/st_dyn" > "$WORK/st_dyn.txt"
echo "fixed:   $(cuts_line "$WORK/st_fixed.txt")"
echo "dynamic: $(cuts_line "$WORK/st_dyn.txt")"
if [ "$(cuts_line "$WORK/st_fixed.txt")" = "$(cuts_line "$WORK/st_dyn.txt")" ]; then
  pass "dynamic-batch zoo cuts where its fixed-batch twin does"
else
  fail "cuts differ: $(cuts_line "$WORK/st_fixed.txt") vs $(cuts_line "$WORK/st_dyn.txt")"
fi
cuts_line "$WORK/st_dyn.txt" | grep -q " 0.0%" && fail "a position has 0.0% of the FLOPs" || pass "no position at 0.0%"
if $PY - "$WORK/st_fixed/stitch.json" "$WORK/st_dyn/stitch.json" <<'PYEOF'
import json, sys
f, d = (json.load(open(p)) for p in sys.argv[1:3])
assert d["params"]["batch"] == 1 and d["params"]["dims"] == {}, d["params"]
tf, td = f["tasks"][0], d["tasks"][0]
assert [c["tensor"]["name"] for c in tf["cut_points"]["chosen"]] == [c["tensor"]["name"] for c in td["cut_points"]["chosen"]]
assert [c["tensor"] for c in tf["cut_points"]["chosen"]] == [c["tensor"] for c in td["cut_points"]["chosen"]]
for vf, vd in zip(tf["variants"], td["variants"]):
    assert vf["cost"]["flops"] == vd["cost"]["flops"] > 0, (vf["id"], vf["cost"], vd["cost"])
for pf, pd in zip(tf["positions"], td["positions"]):
    assert pf["reference_flops_share"] == pd["reference_flops_share"]
    for sf, sd in zip(pf["subgraphs"], pd["subgraphs"]):
        assert sf["cost"]["flops"] == sd["cost"]["flops"] > 0, (sf["variant"], sf["cost"], sd["cost"])
        assert sf["inputs"] == sd["inputs"] and sf["outputs"] == sd["outputs"], (sf["inputs"], sd["inputs"])
        assert sd["inputs"][0]["shape"][0] == 1
assert td["combinations"]["total"] == len(td["combinations"]["valid"]) == len(td["variants"]) ** len(td["positions"])
PYEOF
then pass "stitch.json: cuts, FLOPs, shares and bound signatures equal the fixed twin's"; else fail "stitch.json differs"; fi

# Stitched subgraphs keep the symbolic batch: the first one runs a batch of 3.
first="$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["tasks"][0]["positions"][0]["subgraphs"][0]["file"])' "$WORK/st_dyn/stitch.json")"
$PY -c 'import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(0).random((3, 1, 8, 8), dtype=np.float32))' "$WORK/x3.npy"
if "$BIN/plan-run" "$WORK/st_dyn/$first" --input input="$WORK/x3.npy" --save-outputs "$WORK/out3" --repeat 1 >/dev/null &&
   $PY -c 'import numpy as np, glob, sys; a = np.load(glob.glob(sys.argv[1] + "/*.npy")[0]); assert a.shape[0] == 3, a.shape' "$WORK/out3"; then
  pass "subgraph $first runs at batch 3"
else
  fail "subgraph $first does not run at batch 3"
fi

# plan-run --batch: random inputs of a dynamic-batch model at batch 5.
if "$BIN/plan-run" "$WORK/dynamic/models/dense.onnx" --batch 5 --save-outputs "$WORK/out5" --repeat 1 >/dev/null &&
   $PY -c 'import numpy as np, sys; a = np.load(sys.argv[1] + "/logits.npy"); assert a.shape == (5, 10), a.shape' "$WORK/out5"; then
  pass "plan-run --batch 5 runs the dynamic model at batch 5"
else
  fail "plan-run --batch 5"
fi

# --- --batch 4: the same cuts and shares, FLOPs and signatures at batch 4 ---
"$BIN/zoo-stitch" "$WORK/dynamic/zoo.json" -o "$WORK/st_dyn4" --batch 4 > "$WORK/st_dyn4.txt"
if [ "$(cuts_line "$WORK/st_dyn4.txt")" = "$(cuts_line "$WORK/st_fixed.txt")" ] &&
   $PY - "$WORK/st_dyn/stitch.json" "$WORK/st_dyn4/stitch.json" <<'PYEOF'
import json, sys
one, four = (json.load(open(p)) for p in sys.argv[1:3])
assert four["params"]["batch"] == 4
# Every node's work scales with the batch, except the int8 variant's weight
# DequantizeLinear nodes (constants, counted once): fp32 variants scale exactly.
for v1, v4 in zip(one["tasks"][0]["variants"], four["tasks"][0]["variants"]):
    f1, f4 = v1["cost"]["flops"], v4["cost"]["flops"]
    if v1["cost"]["precision"] == "fp32":
        assert abs(f4 - 4 * f1) <= 1e-9 * f4, (v1["id"], f1, f4)
    else:
        assert 3 * f1 < f4 < 4 * f1, (v1["id"], f1, f4)
for p in four["tasks"][0]["positions"]:
    for s in p["subgraphs"]:
        assert all(t["shape"][0] == 4 for t in s["inputs"] + s["outputs"]), s["inputs"]
PYEOF
then pass "--batch 4: same cuts, 4x FLOPs (fp32 variants), signatures at batch 4"; else fail "--batch 4"; fi

# --- a symbolic dim that is not the batch ---
expect_error "symbolic height without --dim" \
  "models/dense.onnx: input 'input' dimension 2 is symbolic ('height') and not the batch; bind it with --dim height=VALUE" \
  "$WORK/st_hw_bad" -- "$BIN/zoo-stitch" "$WORK/hw/zoo.json" -o "$WORK/st_hw_bad"
expect_error "--dim without a value" "--dim 'height': expected NAME=VALUE" "$WORK/st_hw_bad" -- \
  "$BIN/zoo-stitch" "$WORK/hw/zoo.json" -o "$WORK/st_hw_bad" --dim height
"$BIN/zoo-stitch" "$WORK/hw/zoo.json" -o "$WORK/st_hw" --dim height=8 --dim width=8 > "$WORK/st_hw.txt"
if [ "$(cuts_line "$WORK/st_hw.txt")" = "$(cuts_line "$WORK/st_fixed.txt")" ] &&
   $PY -c 'import json,sys; p = json.load(open(sys.argv[1]))["params"]; assert p["dims"] == {"height": 8, "width": 8}, p' "$WORK/st_hw/stitch.json"; then
  pass "--dim height=8 --dim width=8: the fixed twin's cuts, dims recorded"
else
  fail "--dim binding"
fi

# --- zoo-profile, plan-solve, plan-emit, plan-run on the dynamic twin ---
FAST=(--repeat 3 --warmup 1 --latency-validation 4)
"$BIN/zoo-profile" "$WORK/st_fixed" -o "$WORK/prof_fixed" "${FAST[@]}" >/dev/null
if "$BIN/zoo-profile" "$WORK/st_dyn" -o "$WORK/prof_dyn" "${FAST[@]}" > "$WORK/prof_dyn.txt" 2> "$WORK/prof_dyn.err"; then
  pass "zoo-profile profiles the dynamic-batch zoo"
else
  fail "zoo-profile: $(cat "$WORK/prof_dyn.err")"
fi
if $PY - "$WORK/prof_fixed" "$WORK/prof_dyn" <<'PYEOF'
import csv, json, os, sys
f, d = sys.argv[1:3]
rf, rd = (json.load(open(os.path.join(p, "report.json"))) for p in (f, d))
assert rd["batch"] == 1 and rd["inputs"]["batch"] == 1, rd["batch"]
# The same accuracy on the same dataset: the models compute the same function.
assert rf["tasks"][0]["original_accuracy"] == rd["tasks"][0]["original_accuracy"], (rf["tasks"][0]["original_accuracy"], rd["tasks"][0]["original_accuracy"])
assert rd["tasks"][0]["original_vs_chained_subgraph_mismatches"] == 0
# node_profile.csv's measured FLOPs, per variant model and processor, and per
# Conv/Gemm node: the dynamic twin's symbolic batch is bound to the batch it ran at.
def flops(p):
    out, heavy = {}, {}
    for r in csv.DictReader(open(os.path.join(p, "node_profile.csv"))):
        k = (r["model"], r["policy"], r["threads"])
        out[k] = out.get(k, 0.0) + float(r["flops"])
        if r["op_type"] in ("Conv", "Gemm"): heavy[k + (r["node"],)] = float(r["flops"])
    return out, heavy
(ff, hf), (fd, hd) = flops(f), flops(d)
assert len(ff) == 4 * 2, ff.keys()  # variants x host processors
assert ff.keys() == fd.keys() and all(abs(ff[k] - fd[k]) <= 1e-9 * max(1.0, ff[k]) and ff[k] > 0 for k in ff), (ff, fd)
assert hf and hf.keys() == hd.keys() and all(hf[k] == hd[k] > 0 for k in hf), (hf, hd)
rows = [r for r in csv.DictReader(open(os.path.join(d, "profile.csv"))) if r["kind"] == "subgraph"]
task = json.load(open(os.path.join(os.path.dirname(d), "st_dyn", "stitch.json")))["tasks"][0]
processors = {r["processor"] for r in rows}
assert len(processors) >= 2, processors
assert len(rows) == len(task["positions"]) * len(task["variants"]) * len(processors) and all(float(r["median_ms"]) > 0 for r in rows), len(rows)
PYEOF
then pass "profile: batch recorded, accuracy and per-model, per-node FLOPs equal the fixed twin's"; else fail "profile figures"; fi

"$BIN/plan-solve" "$WORK/prof_dyn" -o "$WORK/plan/plan.json" >/dev/null 2> "$WORK/solve.err" \
  && pass "plan-solve plans the dynamic-batch zoo" || fail "plan-solve: $(cat "$WORK/solve.err")"
$PY -c 'import json,sys; s = json.load(open(sys.argv[1]))["stitch"]; assert s["batch"] == 1 and s["dims"] == {}, s["batch"]' \
  "$WORK/plan/plan.json" && pass "plan records batch 1" || fail "plan lacks the batch"
"$BIN/plan-emit" "$WORK/plan/plan.json" -o "$WORK/bundle" >/dev/null 2> "$WORK/emit.err" \
  && pass "plan-emit bundles it" || fail "plan-emit: $(cat "$WORK/emit.err")"
if "$BIN/plan-run" "$WORK/bundle" > "$WORK/run.txt" 2> "$WORK/run.err"; then
  pass "plan-run runs the bundle: $(grep -m1 -i "accuracy\|max" "$WORK/run.txt" | tr -s ' ')"
else
  fail "plan-run: $(cat "$WORK/run.err")"
fi

# zoo-profile --batch: latency at batch 2 from the batch-1 stitch directory, recorded in the plan.
"$BIN/zoo-profile" "$WORK/st_dyn" -o "$WORK/prof_dyn2" "${FAST[@]}" --batch 2 > /dev/null 2> "$WORK/prof2.err" \
  || fail "zoo-profile --batch 2: $(cat "$WORK/prof2.err")"
"$BIN/plan-solve" "$WORK/prof_dyn2" -o "$WORK/plan2/plan.json" >/dev/null
if $PY - "$WORK/prof_dyn" "$WORK/prof_dyn2" "$WORK/plan2/plan.json" <<'PYEOF'
import json, os, sys
one, two, plan = sys.argv[1:4]
r2 = json.load(open(os.path.join(two, "report.json")))
assert r2["batch"] == 2, r2["batch"]
assert json.load(open(plan))["stitch"]["batch"] == 2
t1, t2 = (json.load(open(os.path.join(p, "latency_model.json")))["tasks"][0] for p in (one, two))
b1, b2 = t1["boundary_bytes"], t2["boundary_bytes"]
assert [2 * b for b in b1] == b2, (b1, b2)  # the hand-over moves twice the bytes
PYEOF
then pass "zoo-profile --batch 2: report, boundary bytes and plan at batch 2"; else fail "zoo-profile --batch 2"; fi

finish
