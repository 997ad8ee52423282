#!/usr/bin/env bash
# zoo-stitch on the digits zoo: block boundaries, every combination materialized
# and equal in ONNX Runtime to its subgraphs run in sequence, reruns byte-identical.
source "$(dirname "$0")/lib.sh"

"$BIN/zoo-stitch" "$SRC/testdata/digits/zoo.json" -o "$WORK/a" --materialize all >/dev/null
"$BIN/zoo-stitch" "$SRC/testdata/digits/zoo.json" -o "$WORK/b" --materialize all >/dev/null
if diff -r "$WORK/a" "$WORK/b" >/dev/null; then pass "two runs are byte-identical"; else fail "two runs differ"; fi

if $PY - "$WORK/a" <<'PYEOF'
import json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "stitch.json")))
t = m["tasks"][0]
cands = [c["tensor"]["name"] for c in t["cut_points"]["candidates"]]
want = ["/stem/relu/Relu_output_0"] + [f"/block{i}/relu2/Relu_output_0" for i in (1, 2, 3)]
assert all(w in cands for w in want), f"block boundaries {want} not all in {cands}"
# nothing inside a block: every candidate is a block output, the pool or the flatten
assert all(c in want or "pool" in c.lower() or "flatten" in c.lower() for c in cands), cands
assert len(t["positions"]) == 2, len(t["positions"])  # one per processor of the zoo
assert len(t["variants"]) >= 7, len(t["variants"])
c = t["combinations"]
assert c["total"] == len(t["variants"]) ** len(t["positions"])
assert len(c["materialized"]) == len(c["valid"]) == c["total"], (len(c["materialized"]), len(c["valid"]))
for s in c["materialized"]:
    assert os.path.isfile(os.path.join(d, s["file"])), s
for p in t["positions"]:
    for s in p["subgraphs"]:
        assert os.path.isfile(os.path.join(d, s["file"])), s
print(f"{len(t['positions'])} positions, {len(t['variants'])} variants, {c['total']} combinations, cuts {cands}")
PYEOF
then pass "stitch.json has the block boundaries and all combinations"; else fail "stitch.json content"; fi

if out="$(node "$SRC/tests/stitch/ort_equivalence.js" "$WORK/a" --samples 3)"; then
  pass "ONNX Runtime equivalence: $out"
else
  fail "ONNX Runtime equivalence"
fi

# Named cuts: the stem and block-3 outputs give 3 positions with those boundaries.
"$BIN/zoo-stitch" "$SRC/testdata/digits/zoo.json" -o "$WORK/named" \
  --cuts /stem/relu/Relu_output_0,/block3/relu2/Relu_output_0 --materialize dense+u90+int8 >/dev/null
if $PY - "$WORK/named" <<'PYEOF'
import json, sys, os
m = json.load(open(os.path.join(sys.argv[1], "stitch.json")))
t = m["tasks"][0]
chosen = [c["tensor"]["name"] for c in t["cut_points"]["chosen"]]
assert chosen == ["/stem/relu/Relu_output_0", "/block3/relu2/Relu_output_0"], chosen
assert [s["file"] for s in t["combinations"]["materialized"]] == ["stitched/digits/dense+u90+int8.onnx"]
PYEOF
then pass "named cuts"; else fail "named cuts"; fi
node "$SRC/tests/stitch/ort_equivalence.js" "$WORK/named" --samples 3 >/dev/null && pass "named-cut variant equivalence" || fail "named-cut variant equivalence"
finish
