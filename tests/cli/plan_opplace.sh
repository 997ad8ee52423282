#!/usr/bin/env bash
# The operator-placement flow end to end: plan-solve --mode opplace places a
# branchy (Inception-style) model's operators on the digits zoo's two processors
# (cpu on core 0, npu on core 1) from a per-node profile, plan-emit bundles the
# plan (the model and a weight cache per kernel policy), and plan-run runs the
# bundle with each operator on its processor's pinned worker: outputs equal the
# single-processor run's, measured latency beside predicted, a trace with one
# track per processor. Bad plans and bundles are one-line errors.
source "$(dirname "$0")/lib.sh"
ZOO="$SRC/testdata/digits/zoo.json"

# Four branches from the input (1x1; 3x3; 1x1 -> 3x3; max pool -> 1x1), a Concat,
# a 1x1 conv, global average pool and a Gemm.
$PY - "$WORK/branchy.onnx" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
rng = np.random.default_rng(7)
inits, nodes = [], []
def w(name, *shape):
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name))
    return name
def conv(name, x, cin, cout, k):
    nodes.append(helper.make_node("Conv", [x, w(name + "_w", cout, cin, k, k), w(name + "_b", cout)], [name],
                                  name=name, pads=[k // 2] * 4))
    nodes.append(helper.make_node("Relu", [name], [name + "_r"], name=name + "_relu"))
    return name + "_r"
a = conv("b1", "x", 16, 16, 1)
b = conv("b2", "x", 16, 16, 3)
c = conv("b3b", conv("b3a", "x", 16, 8, 1), 8, 16, 3)
nodes.append(helper.make_node("MaxPool", ["x"], ["pool"], name="pool", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]))
d = conv("b4", "pool", 16, 16, 1)
nodes.append(helper.make_node("Concat", [a, b, c, d], ["cat"], name="cat", axis=1))
e = conv("mix", "cat", 64, 32, 1)
nodes.append(helper.make_node("GlobalAveragePool", [e], ["gap"], name="gap"))
nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flat"))
nodes.append(helper.make_node("Gemm", ["flat", w("fc_w", 10, 32), w("fc_b", 10)], ["y"], name="fc", transB=1))
g = helper.make_graph(nodes, "branchy", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 24, 24])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
PYEOF

# The nodes the runtime executes, in order (a profiled run's trace), then a
# per-node profile that costs every node the same on both processors (1 ms) and
# hand-offs of 0.01 ms: placing the branches apart is what pays.
"$BIN/plan-run" "$WORK/branchy.onnx" --repeat 1 --trace "$WORK/single_trace.json" > /dev/null
mkdir -p "$WORK/prof"
$PY - "$WORK/single_trace.json" "$WORK/prof" <<'PYEOF'
import json, os, sys
events = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
names = [e["name"] for e in sorted(events, key=lambda e: e["ts"])]
cols = ("model,policy,threads,node,op_type,kernel,batch,in_channels,in_h,in_w,out_channels,kernel_h,kernel_w,stride,"
        "groups,flops,intensity,bytes,weight_sparsity,input_sparsity,output_sparsity,ms,ms_odd,ms_even")
rows = [cols]
for policy in ("default", "sparse"):
    for n in names:
        rows.append(f"branchy,{policy},1,{n},Conv,im2col,1,16,24,24,16,1,1,1,1,1000,1000,100,0,0,0,1,1,1")
open(os.path.join(sys.argv[2], "node_profile.csv"), "w").write("\n".join(rows) + "\n")
t = [{"from": a, "to": b, "fixed_ms": 0.01, "ms_per_byte": 1e-9} for a, b in (("cpu", "npu"), ("npu", "cpu"))]
lm = {"schema_version": 1, "tasks": [{"name": "digits", "positions": 1, "boundary_bytes": [], "subgraph_ms": [],
                                      "overhead_ms": {}, "transitions": t}]}
json.dump(lm, open(os.path.join(sys.argv[2], "latency_model.json"), "w"))
PYEOF

"$BIN/plan-solve" --mode opplace "$WORK/branchy.onnx" --zoo "$ZOO" --profile "$WORK/prof" -o "$WORK/plan.json" \
  > "$WORK/solve.txt"
if $PY - "$WORK/plan.json" <<'PYEOF'
import json, sys
plan = json.load(open(sys.argv[1]))
o, ps = plan["opplace"][0], plan["processors"]
assert o["processors"] == ["cpu", "npu"], o["processors"]
assert [p["name"] for p in ps] == ["cpu", "npu"], ps
assert ps[0]["cores"] == [0] and ps[1]["cores"] == [1], ps
assert ps[1]["policy"] == "sparse" and ps[1]["gemm"] == "blis", ps
used = {n["processor"] for n in o["nodes"]}
assert used == {"cpu", "npu"}, used
only = {b["name"]: b["latencyMs"] for b in o["baselines"]}
assert o["latencyMs"] < min(only["cpu-only"], only["npu-only"]), (o["latencyMs"], only)
PYEOF
then pass "plan-solve places the branches on both processors"; else fail "opplace plan: $(cat "$WORK/solve.txt")"; fi

# A mix must beat the best single processor by --min-mix-gain: asked for 99%, the
# plan keeps one processor and records the mix it gave up.
"$BIN/plan-solve" --mode opplace "$WORK/branchy.onnx" --zoo "$ZOO" --profile "$WORK/prof" -o "$WORK/single.json" \
  --min-mix-gain 0.99 > "$WORK/single.txt"
if grep -q "kept one processor" "$WORK/single.txt" && $PY - "$WORK/single.json" "$WORK/plan.json" <<'PYEOF'
import json, sys
o = json.load(open(sys.argv[1]))["opplace"][0]
mixed = json.load(open(sys.argv[2]))["opplace"][0]
assert len({n["processor"] for n in o["nodes"]}) == 1, o["nodes"]
assert o["minMixGain"] == 0.99 and abs(o["mixedLatencyMs"] - mixed["latencyMs"]) < 1e-9, (o["mixedLatencyMs"], mixed["latencyMs"])
assert o["solver"]["status"] == "feasible", o["solver"]
PYEOF
then pass "plan-solve --min-mix-gain keeps one processor when the mix gains too little"
else fail "--min-mix-gain: $(cat "$WORK/single.txt")"; fi

"$BIN/plan-emit" "$WORK/plan.json" -o "$WORK/bundle" > "$WORK/emit.txt"
if [ -n "$(ls "$WORK"/bundle/models/*.onnx 2>/dev/null)" ] && [ "$(ls "$WORK"/bundle/caches | wc -l)" -eq 2 ]; then
  pass "plan-emit bundles the model and one weight cache per kernel policy"
else fail "bundle holds: $(cd "$WORK/bundle" && find . -type f | sort | tr '\n' ' ')"; fi
"$BIN/plan-emit" --check "$WORK/bundle" > "$WORK/check.txt" && grep -q "up to date" "$WORK/check.txt" &&
  pass "plan-emit --check: fresh" || fail "plan-emit --check: $(cat "$WORK/check.txt")"

if "$BIN/plan-run" "$WORK/bundle" --repeat 5 --json --trace "$WORK/trace.json" > "$WORK/run.json" 2> "$WORK/run.err" &&
   $PY - "$WORK/run.json" "$WORK/trace.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
p = r["placed"]
assert r["ok"] and p["match"] and p["max_abs_diff"] <= 1e-5 * max(1, p["reference_scale"]), p
assert p["reference"] == "cpu" and p["processors"] == ["cpu", "npu"] and p["handoffs"] > 0, p
assert p["measured_ms"] > 0 and p["predicted_ms"] > 0 and p["runs"] == 5, p
assert [a["processor"] for a in p["alone"]] == ["cpu", "npu"] and all(a["measured_ms"] > 0 for a in p["alone"]), p
assert p["cache_hits"] > 0 and p["cache_fallbacks"] == 0, p
t = json.load(open(sys.argv[2]))["traceEvents"]
tracks = {e["args"]["name"] for e in t if e.get("name") == "thread_name"}
assert tracks == {"cpu", "npu"}, tracks
ops = [e for e in t if e.get("ph") == "X" and e.get("cat") == "op"]
assert len(ops) == p["nodes"] and len({e["tid"] for e in ops}) == 2, (len(ops), p["nodes"])
PYEOF
then pass "plan-run runs the placed bundle: outputs match, measured beside predicted, one track per processor"
else fail "plan-run placed bundle: $(cat "$WORK/run.err")"; fi
"$BIN/plan-run" "$WORK/bundle" --repeat 2 > "$WORK/run.txt" && grep -q "^opplace " "$WORK/run.txt" &&
  grep -q "^npu-only " "$WORK/run.txt" && grep -q "match" "$WORK/run.txt" &&
  pass "plan-run prints the placed table" || fail "placed table: $(cat "$WORK/run.txt")"
# Served: the operator-placed unit through the serving executor beside each processor alone.
if "$BIN/plan-run" "$WORK/bundle" --serve --compare all --count 30 --rate 200 --calibration-rounds 2 \
     --json "$WORK/serve.json" > "$WORK/serve.txt" 2> "$WORK/serve.err" && $PY - "$WORK/serve.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert list(r["systems"]) == ["cpu-only", "npu-only", "zooplan"] or sorted(r["systems"]) == ["cpu-only", "npu-only", "zooplan"], r["systems"]
for name, s in r["systems"].items():
    m = s["measured"]
    assert m["queries"] == 30 and m["completed"] == 30 and m["p50_ms"] > 0, (name, m)
    assert s["predicted"]["queries"] == 30 and s["planned_ms"] > 0, (name, s)
PYEOF
then pass "plan-run --serve serves the operator-placed unit beside each processor alone"
else fail "placed serve: $(cat "$WORK/serve.err" "$WORK/serve.txt")"; fi

# A zoo's own variant is keyed by its place in the zoo ("digits/digits/dense", its
# costs predicted from branchy's rows): served under a safe id, not refused.
mkdir -p "$WORK/zv"
if "$BIN/plan-solve" --mode opplace "$SRC/testdata/digits/models/dense.onnx" --zoo "$ZOO" --profile "$WORK/prof" \
     -o "$WORK/zv/plan.json" > "$WORK/zv/solve.txt" 2>&1 && grep -q '"model:digits/digits/dense"' "$WORK/zv/plan.json" \
   && "$BIN/plan-emit" "$WORK/zv/plan.json" -o "$WORK/zv/bundle" > /dev/null 2>&1 \
   && "$BIN/plan-run" "$WORK/zv/bundle" --serve --count 10 --rate 100 --calibration-rounds 1 \
        --json "$WORK/zv/serve.json" > "$WORK/zv/serve.txt" 2>&1 \
   && $PY -c "
import json
m = json.load(open('$WORK/zv/serve.json'))['systems']['zooplan']['measured']
assert m['queries'] == m['completed'] == 10, m
"; then pass "plan-run --serve serves a zoo variant's operator placement (task 'digits.digits.dense')"
else fail "zoo variant placed serve: $(tail -2 "$WORK/zv/serve.txt" 2>/dev/null || tail -2 "$WORK/zv/solve.txt")"; fi

# A plan with a third processor on both cores (2 threads) beside cpu and npu: the
# processors sharing a core take turns, the outputs still match.
$PY - "$WORK/plan.json" "$WORK/plan_all.json" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1]))
o = p["opplace"][0]
p["processors"].append({"name": "all", "kind": "cpu", "source": "host", "policy": "default", "threads": 2, "cores": [0, 1]})
o["processors"].append("all")
for i, n in enumerate(o["nodes"]):
    if i % 3 == 2: n["processor"] = "all"
json.dump(p, open(sys.argv[2], "w"))
PYEOF
"$BIN/plan-emit" "$WORK/plan_all.json" -o "$WORK/bundle_all" > /dev/null
if "$BIN/plan-run" "$WORK/bundle_all" --repeat 3 --json > "$WORK/run_all.json" 2> "$WORK/run_all.err" &&
   $PY -c 'import json,sys; p=json.load(open(sys.argv[1]))["placed"]; assert p["match"] and p["processors"] == ["cpu", "npu", "all"], p' "$WORK/run_all.json"
then pass "plan-run: a processor on both cores takes turns with the single-core ones"
else fail "plan-run with an all-cores processor: $(cat "$WORK/run_all.err")"; fi

# --- bad input ---
rejected "placed bundle: --task" 1 "has no tasks or SLO configurations" -- "$BIN/plan-run" "$WORK/bundle" --task x
# A processor on a core this machine does not have.
MISSING=$(( $(nproc --all) + 3 ))
$PY - "$WORK/plan.json" "$WORK/plan_badcore.json" "$MISSING" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1]))
p["processors"][1]["cores"] = [int(sys.argv[3])]
json.dump(p, open(sys.argv[2], "w"))
PYEOF
"$BIN/plan-emit" "$WORK/plan_badcore.json" -o "$WORK/bundle_badcore" --no-caches > /dev/null
rejected "placed bundle: core not on this machine" 1 "processor 'npu': core $MISSING is not on this machine" -- \
  "$BIN/plan-run" "$WORK/bundle_badcore"
# A plan of another model: a node the runtime executes is not placed.
$PY - "$WORK/plan.json" "$WORK/plan_badnode.json" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1]))
p["opplace"][0]["nodes"][0]["node"] = "renamed"
json.dump(p, open(sys.argv[2], "w"))
PYEOF
"$BIN/plan-emit" "$WORK/plan_badnode.json" -o "$WORK/bundle_badnode" --no-caches > /dev/null
rejected "placed bundle: node not in the plan" 1 "which the plan does not place" -- "$BIN/plan-run" "$WORK/bundle_badnode"
# The bundle's model modified after emit.
cp -r "$WORK/bundle" "$WORK/bundle_mod"
chmod u+w "$WORK"/bundle_mod/models/*.onnx
printf 'x' >> "$(ls "$WORK"/bundle_mod/models/*.onnx)"
rejected "placed bundle: model modified" 1 "content hash does not match" -- "$BIN/plan-run" "$WORK/bundle_mod"
# plan-emit: the model changed since planning.
cp "$WORK/branchy.onnx" "$WORK/branchy.keep"
printf 'x' >> "$WORK/branchy.onnx"
expect_error "plan-emit: model changed since planning" "model changed since planning" "$WORK/bundle2" -- \
  "$BIN/plan-emit" "$WORK/plan.json" -o "$WORK/bundle2"
mv "$WORK/branchy.keep" "$WORK/branchy.onnx"
finish
