#!/usr/bin/env bash
# zoo-stitch on the multi-task zoo: every task partitions, every stitched
# variant equals its subgraphs in ONNX Runtime.
source "$(dirname "$0")/lib.sh"
"$BIN/zoo-stitch" "$SRC/testdata/multitask/zoo.json" -o "$WORK/mt" --materialize all >/dev/null
if $PY - "$WORK/mt" <<'PYEOF'
import json, sys, os
m = json.load(open(os.path.join(sys.argv[1], "stitch.json")))
assert len(m["tasks"]) >= 3
for t in m["tasks"]:
    assert len(t["positions"]) == 2, (t["name"], len(t["positions"]))  # one per processor
    assert len(t["variants"]) >= 5, t["name"]
    assert len(t["combinations"]["materialized"]) == len(t["combinations"]["valid"]) > 0
print(", ".join(f"{t['name']}: {len(t['combinations']['valid'])} valid" for t in m["tasks"]))
PYEOF
then pass "every task stitched"; else fail "multitask stitch.json"; fi
if out="$(node "$SRC/tests/stitch/ort_equivalence.js" "$WORK/mt" --samples 2)"; then
  pass "ONNX Runtime equivalence: $out"
else
  fail "ONNX Runtime equivalence"
fi
finish
