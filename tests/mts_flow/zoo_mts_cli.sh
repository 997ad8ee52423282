#!/usr/bin/env bash
# zoo-mts on the bundled weight-shared zoo: writes one stitched graph per group
# whose outputs equal every member's own in ONNX Runtime, byte-identical on a
# re-run; bad groups give one line on stderr, a non-zero exit and no output.
source "$(dirname "$0")/../cli/lib.sh"
Z="$SRC/testdata/mts"

out="$("$BIN/zoo-mts" "$Z/zoo.json" -o "$WORK/out")" || fail "zoo-mts exited non-zero"
case "$out" in *digits*mts*8*tabular*mts*3*) pass "summary names both groups" ;; *) fail "summary: $out" ;; esac
for f in digits.onnx tabular.onnx mts.json; do
  [ -s "$WORK/out/$f" ] && pass "wrote $f" || fail "missing $f"
done
res="$(node "$SRC/tests/mts_flow/ort_mts.js" "$WORK/out" --samples 16)" && pass "ORT: stitched outputs equal each member's ($res)" \
  || fail "ORT equivalence: $res"
$PY - "$WORK/out/mts.json" <<'PY' && pass "mts.json: weights = shared + exclusive < members' own" || fail "mts.json accounting"
import json, sys
m = json.load(open(sys.argv[1]))
for g in m["groups"]:
    assert g["weight_bytes"] == g["shared_bytes"] + g["exclusive_bytes"], g
    assert g["shared_bytes"] > 0 and g["weight_bytes"] < g["member_folded_bytes"], g
PY
"$BIN/zoo-mts" "$Z/zoo.json" -o "$WORK/again" >/dev/null
cmp -s "$WORK/out/digits.onnx" "$WORK/again/digits.onnx" && cmp -s "$WORK/out/mts.json" "$WORK/again/mts.json" \
  && pass "re-run writes byte-identical files" || fail "re-run differs"
"$BIN/zoo-mts" "$Z/zoo.json" -o "$WORK/shared" --shared-input >/dev/null && \
  node "$SRC/tests/mts_flow/ort_mts.js" "$WORK/shared" --samples 8 >/dev/null && \
  [ "$($PY -c "import json; g=json.load(open('$WORK/shared/mts.json'))['groups'][0]; print(len({m['stitched_input'] for m in g['members']}))")" = 1 ] \
  && pass "--shared-input: one input for the digit tasks, equivalent in ORT" || fail "--shared-input"
"$BIN/zoo-mts" "$Z/zoo.json" -o "$WORK/netfuse" --netfuse --group digits >/dev/null && \
  node "$SRC/tests/mts_flow/ort_mts.js" "$WORK/netfuse" --samples 4 >/dev/null && pass "NetFuse baseline equivalent in ORT" \
  || fail "NetFuse baseline"

# Bad input, on an edited copy of the zoo.
mkdir -p "$WORK/zoo"
cp -r "$Z/models" "$Z/data" "$WORK/zoo/"
cp "$SRC/testdata/digits/models/dense.onnx" "$WORK/zoo/models/wide_stem.onnx"
zoo_with() {  # zoo_with PYTHON_ON_j > file
  $PY -c "import json,sys; j=json.load(open('$Z/zoo.json')); $1; json.dump(j, sys.stdout)"
}
$PY - "$WORK/zoo/models/lt3.onnx" <<'PY'
import sys, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
for t in m.graph.initializer:
    if t.name == "stem.conv.weight":
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * 1.5, t.name))
onnx.save(m, sys.argv[1])
PY
zoo_with "j['multitask_groups']=[{'name': 'g', 'members': ['digit10', 'gt4', 'lt3']}]" > "$WORK/zoo/noshare.json"
expect_error "members sharing no weights" "noshare.json: group 'g': 'lt3' shares no weights with the other members" \
  "$WORK/bad" -- "$BIN/zoo-mts" "$WORK/zoo/noshare.json" -o "$WORK/bad"

zoo_with "j['tasks'].append({'name': 'wide', 'variants': [{'id': 'dense', 'onnx': 'models/wide_stem.onnx', 'kind': 'dense'}]}); \
j['multitask_groups']=[{'name': 'g', 'members': ['digit10', 'wide'], 'shared': ['stem.conv.weight']}]" > "$WORK/zoo/shapes.json"
expect_error "shared tensors of different shapes" \
  "shapes.json: group 'g': shared tensor 'stem.conv.weight' has shape [8,1,3,3] in 'digit10' but [16,1,3,3] in 'wide'" \
  "$WORK/bad" -- "$BIN/zoo-mts" "$WORK/zoo/shapes.json" -o "$WORK/bad"

expect_error "group over the memory budget (option)" "zoo.json: group 'digits' needs" "$WORK/bad" -- \
  "$BIN/zoo-mts" "$Z/zoo.json" -o "$WORK/bad" --memory-budget 100000
zoo_with "j['multitask_groups'][1]['memory_budget_bytes']=1000" > "$WORK/zoo/budget.json"
expect_error "group over the memory budget (zoo.json)" "over the memory budget of 1000 bytes" "$WORK/bad" -- \
  "$BIN/zoo-mts" "$WORK/zoo/budget.json" -o "$WORK/bad" --group tabular
expect_error "no groups" "declares no multitask_groups" "$WORK/bad" -- \
  "$BIN/zoo-mts" "$SRC/testdata/digits/zoo.json" -o "$WORK/bad"
expect_error "unknown group" "--group: " "$WORK/bad" -- "$BIN/zoo-mts" "$Z/zoo.json" -o "$WORK/bad" --group nope
finish
