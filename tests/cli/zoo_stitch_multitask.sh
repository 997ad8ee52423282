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

# A zoo with multitask groups: zoo-stitch stitches each group as zoo-mts does, into OUT/groups/.
if "$BIN/zoo-stitch" "$SRC/testdata/mts/zoo.json" -o "$WORK/mtsst" >/dev/null \
  && "$BIN/zoo-mts" "$SRC/testdata/mts/zoo.json" -o "$WORK/mtsmts" >/dev/null \
  && cmp -s "$WORK/mtsst/groups/digits.onnx" "$WORK/mtsmts/digits.onnx" \
  && cmp -s "$WORK/mtsst/groups/tabular.onnx" "$WORK/mtsmts/tabular.onnx" \
  && $PY - "$WORK/mtsst/groups/mts.json" "$WORK/mtsmts/mts.json" <<'PYEOF'
import json, os, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["tool"] == "zoo-stitch" and [g["name"] for g in a["groups"]] == ["digits", "tabular"], a["tool"]
assert a["groups"] == b["groups"], "the groups as zoo-mts records them"
zoo = os.path.normpath(os.path.join(os.path.dirname(sys.argv[1]), a["zoo"]["path"]))
assert os.path.samefile(zoo, os.path.join(os.path.dirname(sys.argv[2]), b["zoo"]["path"])), zoo
PYEOF
then pass "zoo-stitch stitches the zoo's multitask groups into groups/ (the files zoo-mts writes)"
else fail "zoo-stitch groups"; fi
# A group over its memory budget: one line naming the group, nothing written.
cp -r "$SRC/testdata/mts" "$WORK/mtsbudget"
$PY - "$WORK/mtsbudget/zoo.json" <<'PYEOF'
import json, sys
z = json.load(open(sys.argv[1]))
z["multitask_groups"][0]["memory_budget_bytes"] = 1
json.dump(z, open(sys.argv[1], "w"))
PYEOF
SNAPSHOT_ROOT="$WORK/mtsbudget"
rejected "a group over its memory budget" 1 "group 'digits' needs" -- \
  "$BIN/zoo-stitch" "$WORK/mtsbudget/zoo.json" -o "$WORK/mtsbudget/out"
finish
