#!/usr/bin/env bash
# Bad input: one clear line on stderr, non-zero exit, no output left behind.
source "$(dirname "$0")/lib.sh"
Z="$SRC/testdata/digits"
mkdir -p "$WORK/zoo"
cp -r "$Z/models" "$Z/data" "$WORK/zoo/"
zoo_with() {  # zoo_with PYTHON_EXPR_ON_j > file: edits a copy of the digits zoo.json
  $PY -c "import json,sys; j=json.load(open('$Z/zoo.json')); $1; json.dump(j, sys.stdout)"
}

echo "this is not a protobuf" > "$WORK/zoo/models/garbage.onnx"
zoo_with "j['tasks'][0]['variants'][1]['onnx']='models/garbage.onnx'" > "$WORK/zoo/not_onnx.json"
expect_error "not an ONNX file" "garbage.onnx: not an ONNX model" "$WORK/out" -- \
  "$BIN/zoo-stitch" "$WORK/zoo/not_onnx.json" -o "$WORK/out"

zoo_with "j['tasks'][0]['variants'][2]['onnx']='models/missing.onnx'" > "$WORK/zoo/missing.json"
expect_error "missing model file" '$.tasks[0].variants[2].onnx: file not found' "$WORK/out" -- \
  "$BIN/zoo-stitch" "$WORK/zoo/missing.json" -o "$WORK/out"

zoo_with "del j['tasks'][0]['variants'][0]['kind']" > "$WORK/zoo/nokind.json"
expect_error "missing field" "\$.tasks[0].variants[0]: missing field 'kind'" "$WORK/out" -- \
  "$BIN/zoo-stitch" "$WORK/zoo/nokind.json" -o "$WORK/out"

expect_error "missing zoo.json" "nope.json: cannot open" "$WORK/out" -- \
  "$BIN/zoo-stitch" "$WORK/zoo/nope.json" -o "$WORK/out"

# A model of another task (the wine MLP) cannot be aligned with the digits CNN.
cp "$SRC/testdata/multitask/models/wine/dense.onnx" "$WORK/zoo/models/wine.onnx"
zoo_with "j['tasks'][0]['variants'][3]['onnx']='models/wine.onnx'" > "$WORK/zoo/unaligned.json"
expect_error "unaligned variants" "cannot be aligned: they diverge at main node" "$WORK/out" -- \
  "$BIN/zoo-stitch" "$WORK/zoo/unaligned.json" -o "$WORK/out"

expect_error "S larger than the common cuts" "--subgraphs 12: task 'digits' has only" "$WORK/out" -- \
  "$BIN/zoo-stitch" "$Z/zoo.json" -o "$WORK/out" --subgraphs 12

expect_error "unknown cut" "--cuts: '/block1/conv1/Conv_output_0' is not a cut point" "$WORK/out" -- \
  "$BIN/zoo-stitch" "$Z/zoo.json" -o "$WORK/out" --cuts /block1/conv1/Conv_output_0

touch "$WORK/plainfile"
expect_error "unwritable output directory" "cannot create parent directory" "$WORK/plainfile/out" -- \
  "$BIN/zoo-stitch" "$Z/zoo.json" -o "$WORK/plainfile/out"

# A failed run leaves an existing output directory as it was.
"$BIN/zoo-stitch" "$Z/zoo.json" -o "$WORK/keep" >/dev/null
before="$(cd "$WORK/keep" && find . -type f -exec sha256sum {} + | sort)"
if "$BIN/zoo-stitch" "$WORK/zoo/missing.json" -o "$WORK/keep" 2>/dev/null; then fail "failing run exited 0"; fi
after="$(cd "$WORK/keep" && find . -type f -exec sha256sum {} + | sort)"
[ "$before" = "$after" ] && pass "existing output untouched by a failed run" || fail "existing output changed by a failed run"
finish
