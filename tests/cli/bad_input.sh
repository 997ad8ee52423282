#!/usr/bin/env bash
# Malformed input to every tool: each case gives one line on stderr naming the
# file or option, exit code 2 for an option error and 1 for bad file contents,
# and leaves every file under the work directory as it was (nothing changed,
# nothing created: no output, no staging directory).
source "$(dirname "$0")/lib.sh"
Z="$SRC/testdata/digits"
"$BIN/zoo-stitch" "$Z/zoo.json" -o "$WORK/st" >/dev/null
"$BIN/zoo-profile" "$WORK/st" -o "$WORK/prof" --repeat 3 --warmup 1 --latency-validation 2 >/dev/null
"$BIN/plan-solve" "$WORK/prof" -o "$WORK/plan/plan.json" >/dev/null
"$BIN/plan-emit" "$WORK/plan/plan.json" -o "$WORK/bundle" --no-caches >/dev/null
MODEL="$Z/models/dense.onnx"

# copy_dir SRC NAME: a copy of a directory to corrupt, as $WORK/NAME.
copy_dir() { rm -rf "${WORK:?}/$2"; cp -r "$1" "$WORK/$2"; }
# edit_json FILE PYTHON: runs PYTHON with the document as j, writes it back.
edit_json() {
  $PY - "$1" "$2" <<'PYEOF'
import json, sys
path, code = sys.argv[1], sys.argv[2]
j = json.load(open(path))
exec(code)
open(path, "w").write(json.dumps(j) if not isinstance(j, str) else j)
PYEOF
}
# set_csv_cell FILE ROW COLUMN VALUE: replaces one cell (ROW 1 = first data row).
# A report.json beside FILE that records FILE's hash records the new one, so
# the bad value reaches the CSV reader instead of the consistency check.
set_csv_cell() {
  $PY - "$@" <<'PYEOF'
import csv, hashlib, json, os, sys
path, row, col, value = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rows = list(csv.reader(open(path)))
rows[row][rows[0].index(col)] = value
csv.writer(open(path, "w"), lineterminator="\n").writerows(rows)
report = os.path.join(os.path.dirname(path), "report.json")
if os.path.exists(report):
    j = json.load(open(report))
    files = j.get("files_sha256", {})
    if os.path.basename(path) in files:
        files[os.path.basename(path)] = hashlib.sha256(open(path, "rb").read()).hexdigest()
        json.dump(j, open(report, "w"))
PYEOF
}
# write_npy FILE HEADER_DICT DATA_BYTES: a .npy file with a hand-written header.
write_npy() {
  $PY - "$@" <<'PYEOF'
import struct, sys
path, header, nbytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
h = header.encode()
h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + b"\0" * nbytes)
PYEOF
}

# --- numbers out of range that crashed a tool ---------------------------------
copy_dir "$WORK/prof" huge
sub_row=$($PY -c "import csv; r=list(csv.DictReader(open('$WORK/huge/profile.csv'))); print(1+[x['kind'] for x in r].index('subgraph'))")
set_csv_cell "$WORK/huge/profile.csv" "$sub_row" median_ms 1.7e308
rejected "profile.csv latency 1.7e308 (plan-solve)" 1 "huge/profile.csv:$((sub_row + 1)): column 'median_ms': 1.7e+308 is above" -- \
  "$BIN/plan-solve" "$WORK/huge" -o "$WORK/out/plan.json"

cp "$SRC/testdata/profiles/csv/digits_example.csv" "$WORK/import.csv"
set_csv_cell "$WORK/import.csv" 1 median_ms 1.7e308
rejected "imported CSV latency 1.7e308 (zoo-profile --import)" 1 "import.csv:2: column 'median_ms': 1.7e+308 is above" -- \
  "$BIN/zoo-profile" "$WORK/st" -o "$WORK/out" --import "npu=csv:$WORK/import.csv"

copy_dir "$WORK/prof" rtype
edit_json "$WORK/rtype/report.json" "j['stitch_dir'] = 5"
rejected "report.json stitch_dir: 5" 1 "rtype/report.json: \$.stitch_dir: expected a string" -- \
  "$BIN/plan-solve" "$WORK/rtype" -o "$WORK/out/plan.json"
edit_json "$WORK/rtype/report.json" "j['stitch_dir'] = '../st'; j['inputs'] = 'x'"
rejected "report.json inputs: \"x\"" 1 "rtype/report.json: \$.inputs: expected an object" -- \
  "$BIN/plan-solve" "$WORK/rtype" -o "$WORK/out/plan.json"

copy_dir "$WORK/st" nopos
edit_json "$WORK/nopos/stitch.json" "j['tasks'][0]['positions'] = []"
rejected "stitch.json positions: []" 1 "nopos/stitch.json: \$.tasks[0]: 0 positions" -- \
  "$BIN/zoo-profile" "$WORK/nopos" -o "$WORK/out"

copy_dir "$WORK/st" twelve
edit_json "$WORK/twelve/stitch.json" "
import copy
t = j['tasks'][0]
p0 = t['positions'][0]
t['positions'] = [dict(copy.deepcopy(p0), position=i) for i in range(12)]
t['cut_points']['chosen'] = [t['cut_points']['candidates'][0]] * 11
t['combinations']['total'] = 9 ** 12"
rejected "stitch.json claiming 12 positions" 1 "twelve/stitch.json: \$.tasks[0]: 9 variants at 12 positions make more than 100000 combinations" -- \
  "$BIN/zoo-profile" "$WORK/twelve" -o "$WORK/out"

copy_dir "$WORK/st" bigjson
sed -i '0,/"flops": [0-9.e+]*/s//"flops": 1e400/' "$WORK/bigjson/stitch.json"
rejected "stitch.json number beyond DBL_MAX" 1 "bigjson/stitch.json: not valid JSON: number overflow" -- \
  "$BIN/zoo-profile" "$WORK/bigjson" -o "$WORK/out"
mkdir -p "$WORK/zoo"
cp -r "$Z/models" "$Z/data" "$WORK/zoo/"
sed 's/"threads": 1/"threads": 1e400/' "$Z/zoo.json" > "$WORK/zoo/big.json"
rejected "zoo.json number beyond DBL_MAX" 1 "zoo/big.json: not valid JSON: number overflow" -- \
  "$BIN/zoo-stitch" "$WORK/zoo/big.json" -o "$WORK/out"

# --- thread counts -----------------------------------------------------------------
rejected "plan-run --threads 100000" 2 "plan-run: error: --threads: 100000 threads is above" -- \
  "$BIN/plan-run" "$MODEL" --threads 100000
rejected "plan-run --simd mmx" 2 "plan-run: error: --simd: mmx not in" -- \
  "$BIN/plan-run" "$MODEL" --simd mmx

# --simd: the narrowest target this CPU runs is the one the report names.
targets=$("$BIN/plan-run" "$MODEL" --repeat 0 --json | /usr/bin/python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["simd_targets"]))')
narrowest=${targets##* }
used=$("$BIN/plan-run" "$MODEL" --repeat 1 --simd "$narrowest" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["simd_target"])')
if [ -n "$narrowest" ] && [ "$used" = "$narrowest" ]; then pass "plan-run --simd $narrowest runs it (this CPU: $targets)"
else fail "plan-run --simd $narrowest: the report names '$used' (this CPU: $targets)"; fi
# A target the build knows but this CPU lacks (when it lacks one): one line naming what it runs.
for t in avx512-dl avx512 avx2; do
  case " $targets " in *" $t "*) ;; *)
    rejected "plan-run --simd $t on a CPU without it" 1 "SIMD target '$t' is not one this CPU runs" -- \
      "$BIN/plan-run" "$MODEL" --repeat 1 --simd "$t"
    break ;;
  esac
done
rejected "zoo-profile --jobs 100000" 2 "zoo-profile: error: --jobs: 100000 threads is above" -- \
  "$BIN/zoo-profile" "$WORK/st" -o "$WORK/out" --jobs 100000
rejected "zoo-profile --processor cpu=host:default@100000" 2 "--processor 'cpu=host:default@100000': 100000 threads is above" -- \
  "$BIN/zoo-profile" "$WORK/st" -o "$WORK/out" --processor cpu=host:default@100000
sed '0,/"threads": 1/s//"threads": 100000/' "$Z/zoo.json" > "$WORK/zoo/threads.json"
rejected "zoo.json processor threads 100000" 1 "zoo/threads.json: \$.processors[0].profile.threads: 100000 threads is above" -- \
  "$BIN/zoo-stitch" "$WORK/zoo/threads.json" -o "$WORK/out"
copy_dir "$WORK/plan" pthreads
edit_json "$WORK/pthreads/plan.json" "j['processors'][0]['threads'] = 100000"
rejected "plan.json processor threads 100000" 1 "pthreads/plan.json: \$.processors[0].threads: 100000 threads is above" -- \
  "$BIN/plan-emit" "$WORK/pthreads/plan.json" -o "$WORK/out"

# --- .npy shapes --------------------------------------------------------------------
write_npy "$WORK/digits23.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (12345678901234567890123, 64), }" 256
rejected ".npy dimension of 23 digits" 1 "digits23.npy: .npy header: dimension 12345678901234567890123 of 'shape' is too large" -- \
  "$BIN/plan-run" "$MODEL" --input input="$WORK/digits23.npy"
write_npy "$WORK/overflow.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }" 256
rejected ".npy shape 2^32 x 2^32" 1 "overflow.npy: shape [4294967296,4294967296] needs more than the 256 data bytes" -- \
  "$BIN/plan-run" "$MODEL" --input input="$WORK/overflow.npy"
write_npy "$WORK/minus.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 64), }" 256
rejected ".npy shape with -1" 1 "minus.npy: .npy header: dimension '-1' of 'shape' is not a non-negative integer" -- \
  "$BIN/plan-run" "$MODEL" --input input="$WORK/minus.npy"
write_npy "$WORK/wrong_shape.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" 24
rejected "--input of the wrong shape names the .npy" 1 "wrong_shape.npy: --input input: shape [2,3], the input 'input' is [1,1,8,8]" -- \
  "$BIN/plan-run" "$MODEL" --input input="$WORK/wrong_shape.npy"

# --- ids that would leave their folder ------------------------------------------------
sed '0,/"id": "dense"/s//"id": ".."/' "$Z/zoo.json" > "$WORK/zoo/dotdot.json"
rejected "zoo.json variant id '..'" 1 "zoo/dotdot.json: \$.tasks[0].variants[0].id: '..' is not a safe id" -- \
  "$BIN/zoo-stitch" "$WORK/zoo/dotdot.json" -o "$WORK/out"
cp "$Z/zoo.json" "$WORK/zoo/dotdot_task.json"
edit_json "$WORK/zoo/dotdot_task.json" "j['tasks'][0]['name'] = '..'"
rejected "zoo.json task name '..'" 1 "zoo/dotdot_task.json: \$.tasks[0].name: '..' is not a safe id" -- \
  "$BIN/zoo-stitch" "$WORK/zoo/dotdot_task.json" -o "$WORK/out"
copy_dir "$WORK/st" sdotdot
edit_json "$WORK/sdotdot/stitch.json" "j['tasks'][0]['variants'][1]['id'] = '..'"
rejected "stitch.json variant id '..'" 1 "sdotdot/stitch.json: \$.tasks[0].variants[1].id: '..' is not a safe id" -- \
  "$BIN/zoo-profile" "$WORK/sdotdot" -o "$WORK/out"
copy_dir "$WORK/prof" pdotdot
set_csv_cell "$WORK/pdotdot/profile.csv" 1 variant ..
rejected "profile.csv variant '..'" 1 "pdotdot/profile.csv:2: column 'variant': '..' is not a safe id" -- \
  "$BIN/plan-solve" "$WORK/pdotdot" -o "$WORK/out/plan.json"
copy_dir "$WORK/plan" plandotdot
edit_json "$WORK/plandotdot/plan.json" "j['stitch']['tasks'][0]['subgraphs'][0]['variant'] = '..'"
rejected "plan.json variant '..'" 1 "plandotdot/plan.json: \$.stitch.tasks[0].subgraphs[0].variant: '..' is not a safe id" -- \
  "$BIN/plan-emit" "$WORK/plandotdot/plan.json" -o "$WORK/out"
copy_dir "$WORK/bundle" bdotdot
edit_json "$WORK/bdotdot/manifest.json" "j['artifacts'][0]['path'] = '../../escape'"
rejected "bundle manifest path '../../escape'" 2 "bdotdot/manifest.json: \$.artifacts[0].path: '../../escape' is not a path inside the bundle" -- \
  "$BIN/plan-emit" --check "$WORK/bdotdot"
cat > "$WORK/workload.json" <<EOF
{"version": 1, "accelerators": ["GPU"], "dnns": [{"name": "a", "model": "$MODEL", "profile": "$WORK/prof/profile.csv",
 "task": "digits", "variant": ".."}]}
EOF
rejected "workload.json variant '..'" 1 "workload.json: \$.dnns[0].variant: '..' is not a safe id" -- \
  "$BIN/plan-solve" --mode concurrent "$WORK/workload.json" -o "$WORK/out/plan.json"

# --- values accepted silently before --------------------------------------------------
for n in 0 -1; do
  rejected "zoo-stitch --subgraphs $n" 2 "zoo-stitch: error: --subgraphs: $n is below 1" -- \
    "$BIN/zoo-stitch" "$Z/zoo.json" -o "$WORK/out" --subgraphs "$n"
done
rejected "plan-solve --queries -1" 2 "plan-solve: error: --queries: -1 is below 1" -- \
  "$BIN/plan-solve" "$WORK/prof" -o "$WORK/out/plan.json" --queries -1
rejected "plan-solve --max-transitions -5" 2 "plan-solve: error: --max-transitions: -5 is below -1" -- \
  "$BIN/plan-solve" --mode concurrent "$SRC/testdata/concurrent/googlenet-table2-scenario1.json" -o "$WORK/out/plan.json" \
  --max-transitions -5
copy_dir "$WORK/prof" nan
set_csv_cell "$WORK/nan/accuracy.csv" 1 measured_accuracy nan
rejected "accuracy.csv nan" 1 "nan/accuracy.csv:2: column 'measured_accuracy': 'nan' is not a number in [0, 1]" -- \
  "$BIN/plan-solve" "$WORK/nan" -o "$WORK/out/plan.json"
echo '{"configurations": [{"id": "c", "tasks": {"digits": {"accuracy": 1.5, "latency_ms": 1}}}]}' > "$WORK/slo.json"
rejected "slo.json accuracy 1.5" 1 "slo.json: \$.configurations[0].tasks.digits.accuracy: 1.5 is above 1" -- \
  "$BIN/plan-solve" "$WORK/prof" -o "$WORK/out/plan.json" --slo "$WORK/slo.json"
rejected "plan-solve --memory-budget 'lots'" 2 "plan-solve: error: --memory-budget 'lots'" -- \
  "$BIN/plan-solve" "$WORK/prof" -o "$WORK/out/plan.json" --memory-budget lots

# --- option errors: one line, exit code 2; --help still works -------------------------
for tool in zoo-stitch zoo-profile plan-solve plan-emit plan-run; do
  args=(x -o "$WORK/out" --bogus)
  [ "$tool" = plan-run ] && args=("$MODEL" --bogus)
  rejected "$tool unknown option" 2 "$tool: error: The following argument was not expected: --bogus" -- \
    "$BIN/$tool" "${args[@]}"
  if help_text=$("$BIN/$tool" --help) && grep -q "Usage" <<<"$help_text"; then pass "$tool --help exits 0"; else fail "$tool --help"; fi
done
rejected "plan-run --repeat abc" 2 "plan-run: error: --repeat: 'abc' is not an integer" -- "$BIN/plan-run" "$MODEL" --repeat abc
rejected "zoo-profile missing -o" 2 "zoo-profile: error: --out is required" -- "$BIN/zoo-profile" "$WORK/st"
# Range and type checks of CLI11 validators: one line naming the option, exit 2.
rejected "zoo-profile --training-fraction 2" 2 "zoo-profile: error: --training-fraction: 2 is above 1" -- \
  "$BIN/zoo-profile" "$WORK/st" -o "$WORK/out" --training-fraction 2
rejected "zoo-profile --training-fraction nan" 2 "zoo-profile: error: --training-fraction: 'nan' is not a finite number" -- \
  "$BIN/zoo-profile" "$WORK/st" -o "$WORK/out" --training-fraction nan
rejected "plan-run --repeat beyond int64" 2 "plan-run: error: --repeat: '99999999999999999999' is not an integer" -- \
  "$BIN/plan-run" "$MODEL" --repeat 99999999999999999999
rejected "plan-run --threads -1" 2 "plan-run: error: --threads: -1 threads: at least 1 is needed" -- \
  "$BIN/plan-run" "$MODEL" --threads -1
rejected "plan-solve --mode bogus" 2 "plan-solve: error: --mode: bogus not in {stitch,concurrent,opplace,cold,mts}" -- \
  "$BIN/plan-solve" "$WORK/prof" -o "$WORK/out/plan.json" --mode bogus

# --- the bundle manifest records paths relative to the bundle -------------------------
if $PY - "$WORK/bundle/manifest.json" <<'PYEOF'
import json, os, sys
m = json.load(open(sys.argv[1]))
paths = [i["path"] for i in m["inputs"]]
assert paths and not any(os.path.isabs(p) for p in paths), paths
assert all(os.path.exists(os.path.join(os.path.dirname(sys.argv[1]), p)) for p in paths), paths
PYEOF
then pass "manifest input paths are relative to the bundle"; else fail "manifest input paths: $(grep '"path"' "$WORK/bundle/manifest.json" | head -3)"; fi
out="$("$BIN/plan-emit" --check "$WORK/bundle")" && [ "${out%% (*}" = "bundle is up to date" ] \
  && pass "plan-emit --check reads the relative paths" || fail "plan-emit --check: $out"
# plan-solve never lists combinations but does list placement orders: a zoo
# that grew to 102 processors after profiling has more than it searches.
mkdir -p "$WORK/many"
cp -r "$Z/models" "$Z/data" "$Z/zoo.json" "$WORK/many/"
"$BIN/zoo-stitch" "$WORK/many/zoo.json" -o "$WORK/many/st" >/dev/null
"$BIN/zoo-profile" "$WORK/many/st" -o "$WORK/many/prof" --repeat 2 --warmup 0 --latency-validation 2 >/dev/null
edit_json "$WORK/many/zoo.json" "j['processors'] += [dict(j['processors'][0], name='extra%d' % i) for i in range(100)]"
rejected "102 processors: too many placement orders" 1 \
  "many/st/stitch.json: 2 positions on 102 processors make more than the 10000 placement orders plan-solve searches" -- \
  "$BIN/plan-solve" "$WORK/many/prof" -o "$WORK/out/plan.json"

mkdir -p "$WORK/moved"
mv "$WORK/st" "$WORK/prof" "$WORK/plan" "$WORK/bundle" "$WORK/moved/"
# The bundle's own inputs moved with it and check; the zoo did not move, so the
# plan's chain cannot reach it: stale, and the line names the zoo.json it looked for.
rc=0; out="$("$BIN/plan-emit" --check "$WORK/moved/bundle")" || rc=$?
[ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$out" | grep -c '^  ')" -eq 1 ] \
  && printf '%s\n' "$out" | grep -q "the plan's inputs cannot be checked: .*zoo.json: cannot open" \
  && pass "a bundle moved with its plan but not its zoo: only the zoo it cannot reach is named" \
  || fail "moved bundle: rc $rc $(printf "%s" "$out" | tr "\n" "|")"
finish
