#!/usr/bin/env bash
# Outputs that cannot destroy data: -o replaces only an earlier output of the
# same tool (the .zooplan-output marker), never writes into or over an input;
# zoo-profile is staged, so failures, Ctrl-C, SIGTERM and SIGKILL leave the old
# output as it was and the next run leaves no debris; concurrent runs into one
# directory end with one run's complete output; readers refuse files of two runs.
# Every refusal: one line on stderr, exit code 1, no file under $T changed.
source "$(dirname "$0")/lib.sh"
T="$WORK/t"        # everything a command could touch lives here
LOG="$WORK/logs"   # the tests' own captures live outside it
mkdir -p "$T" "$LOG"
FAST=(--repeat 1 --warmup 0 --latency-validation 1)

SNAPSHOT_ROOT="$T"  # what "nothing changed" compares (lib.sh snapshot)

# refused NAME WANT -- command...: exit 1, one line on stderr containing WANT, $T unchanged.
refused() { local name="$1" want="$2"; shift 3; rejected "$name" 1 "$want" -- "$@"; }

# no_debris NAME DIR: nothing a run leaves beside DIR (staging trees, old trees, lock file).
no_debris() {
  local left
  left="$(ls -a "$(dirname "$2")" | grep -E "^\.$(basename "$2")\.(staging|old|lock)" || true)"
  [ -z "$left" ] && pass "$1: no debris beside $(basename "$2")" || fail "$1: debris left: $left"
}

# A profile directory is consistent: report.json's hashes match every file beside
# it, the marker lists exactly the entries, plan-solve plans on it.
consistent() {  # consistent NAME DIR
  if $PY - "$2" <<'PYEOF'
import hashlib, json, os, sys
d = sys.argv[1]
r = json.load(open(os.path.join(d, "report.json")))
files = sorted(f for f in os.listdir(d) if f not in ("report.json", ".zooplan-output"))
rec = r["files_sha256"]
assert sorted(rec) == files, (sorted(rec), files)
for f in files:
    assert hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest() == rec[f], f
m = json.load(open(os.path.join(d, ".zooplan-output")))
assert m["tool"] == "zoo-profile" and m["entries"] == sorted(files + ["report.json"]), m
assert "interrupted" not in r
PYEOF
  then
    if "$BIN/plan-solve" "$2" -o "$LOG/consistent_plan.json" >/dev/null 2>"$LOG/consistent.err"; then pass "$1: consistent, plan-solve plans on it"
    else fail "$1: plan-solve refused: $(cat "$LOG/consistent.err")"; fi
  else fail "$1: inconsistent profile directory"; fi
}

# --- fixtures: a two-task zoo (fast to profile), the full multitask zoo (slow enough to interrupt) ---
cp -r "$SRC/testdata/multitask" "$T/zoo"
$PY -c "
import json; p='$T/zoo/zoo.json'; j=json.load(open(p))
j['tasks'] = [t for t in j['tasks'] if t['name'] in ('iris', 'wine')]
json.dump(j, open('$T/zoo/small.json', 'w'), indent=1)"
"$BIN/zoo-stitch" "$T/zoo/small.json" -o "$T/st" >/dev/null
"$BIN/zoo-stitch" "$T/zoo/zoo.json" -o "$T/st_full" >/dev/null
"$BIN/zoo-profile" "$T/st" -o "$T/prof" "${FAST[@]}" >/dev/null
"$BIN/plan-solve" "$T/prof" -o "$T/plan.json" >/dev/null
"$BIN/plan-emit" "$T/plan.json" -o "$T/bundle" --no-caches >/dev/null
[ -f "$T/st/.zooplan-output" ] && [ -f "$T/prof/.zooplan-output" ] && [ -f "$T/bundle/.zooplan-output" ] \
  && pass "every directory output holds the marker" || fail "a directory output lacks the marker"
"$BIN/zoo-stitch" "$T/zoo/small.json" -o "$T/st" >/dev/null && pass "zoo-stitch replaces its own earlier output" \
  || fail "zoo-stitch refused its own earlier output"
"$BIN/plan-emit" "$T/plan.json" -o "$T/bundle" --no-caches >/dev/null && pass "plan-emit replaces its own earlier bundle" \
  || fail "plan-emit refused its own earlier bundle"
mkdir "$T/empty" && "$BIN/zoo-stitch" "$T/zoo/small.json" -o "$T/empty" >/dev/null && [ -f "$T/empty/stitch.json" ] \
  && pass "an empty directory is a valid destination" || fail "empty destination"
rm -rf "$T/empty"

# --- -o destroys what it points at: now refused ---
mkdir -p "$T/userdir" && echo "the user's notes" > "$T/userdir/notes.txt"
echo "a file" > "$T/plainfile"
refused "zoo-stitch -o DIR holding a user's file" "userdir: not empty and not written by zoo-stitch" -- \
  "$BIN/zoo-stitch" "$T/zoo/small.json" -o "$T/userdir"
refused "zoo-stitch -o FILE" "plainfile: exists and is not a directory" -- \
  "$BIN/zoo-stitch" "$T/zoo/small.json" -o "$T/plainfile"
refused "zoo-profile -o FILE" "plainfile: exists and is not a directory" -- \
  "$BIN/zoo-profile" "$T/st" -o "$T/plainfile" "${FAST[@]}"
refused "plan-emit -o FILE" "plainfile: exists and is not a directory" -- \
  "$BIN/plan-emit" "$T/plan.json" -o "$T/plainfile"
refused "plan-run --save-outputs FILE" "plainfile: exists and is not a directory" -- \
  "$BIN/plan-run" "$T/zoo/models/iris/dense.onnx" --repeat 0 --save-outputs "$T/plainfile"
# plan-emit pdir/plan.json -o pdir, with the stitch directory and notes beside the plan.
mkdir -p "$T/pdir" && cp -r "$T/st" "$T/pdir/stitch" && echo "notes" > "$T/pdir/notes.txt"
$PY -c "import json; p=json.load(open('$T/plan.json')); p['stitch']['stitch_dir']='stitch'; json.dump(p, open('$T/pdir/plan.json','w'))"
refused "plan-emit pdir/plan.json -o pdir" "pdir: contains the input $T/pdir/plan.json" -- \
  "$BIN/plan-emit" "$T/pdir/plan.json" -o "$T/pdir"
refused "plan-emit -o inside the stitch directory" "lies inside the input $T/pdir/stitch" -- \
  "$BIN/plan-emit" "$T/pdir/plan.json" -o "$T/pdir/stitch/bundle"
refused "zoo-stitch zoo/zoo.json -o zoo" "zoo: contains the input $T/zoo/small.json" -- \
  "$BIN/zoo-stitch" "$T/zoo/small.json" -o "$T/zoo"
refused "zoo-stitch -o the models folder" "contains the input $T/zoo/models/" -- \
  "$BIN/zoo-stitch" "$T/zoo/small.json" -o "$T/zoo/models"
refused "zoo-profile -o STITCH_DIR" "st: is the input $T/st" -- "$BIN/zoo-profile" "$T/st" -o "$T/st" "${FAST[@]}"
refused "zoo-profile -o inside STITCH_DIR" "lies inside the input $T/st" -- \
  "$BIN/zoo-profile" "$T/st" -o "$T/st/prof" "${FAST[@]}"
ln -s "$T/st" "$T/st_link"
refused "zoo-profile -o a symlink to STITCH_DIR" "st_link: is the input $T/st" -- \
  "$BIN/zoo-profile" "$T/st" -o "$T/st_link" "${FAST[@]}"
refused "zoo-profile -o another tool's output" "st_full: written by zoo-stitch, not zoo-profile" -- \
  "$BIN/zoo-profile" "$T/st" -o "$T/st_full" "${FAST[@]}"
refused "zoo-stitch -o zoo-profile's output" "prof: written by zoo-profile, not zoo-stitch" -- \
  "$BIN/zoo-stitch" "$T/zoo/small.json" -o "$T/prof"
refused "plan-run --save-outputs over a bundle" "bundle: written by plan-emit, not plan-run" -- \
  "$BIN/plan-run" "$T/zoo/models/iris/dense.onnx" --repeat 0 --save-outputs "$T/bundle"
cp "$T/plan.json" "$T/prof/my_plan.json"
refused "zoo-profile over its output holding a user's file" "prof: holds 'my_plan.json', which zoo-profile did not write" -- \
  "$BIN/zoo-profile" "$T/st" -o "$T/prof" "${FAST[@]}"
rm "$T/prof/my_plan.json"

# --- single-file outputs: atomic, never a directory, an input or another output ---
refused "plan-solve -o a directory" "userdir: is a directory, not a file" -- "$BIN/plan-solve" "$T/prof" -o "$T/userdir"
refused "plan-solve -o its own report.json" "report.json: is the input $T/prof/report.json" -- \
  "$BIN/plan-solve" "$T/prof" -o "$T/prof/report.json"
refused "plan-solve -o its profile.csv" "profile.csv: is the input" -- "$BIN/plan-solve" "$T/prof" -o "$T/prof/profile.csv"
refused "plan-solve --trace over the stitch.json" "stitch.json: is the input" -- \
  "$BIN/plan-solve" "$T/prof" -o "$LOG/p.json" --trace "$T/st/stitch.json"
refused "plan-solve --evaluate over the SLO file" "small.json: is the input" -- \
  "$BIN/plan-solve" "$T/prof" -o "$LOG/p.json" --slo "$T/zoo/small.json" --evaluate "$T/zoo/small.json"
refused "plan-solve --stats equal to -o" "is the output" -- \
  "$BIN/plan-solve" "$T/prof" -o "$LOG/same.json" --stats "$LOG/same.json"
refused "plan-solve --svg-dir FILE" "plainfile: exists and is not a directory" -- \
  "$BIN/plan-solve" "$T/prof" -o "$LOG/p.json" --svg-dir "$T/plainfile"
cp -r "$SRC/testdata/concurrent" "$T/concurrent"
W="$T/concurrent/googlenet-table2-scenario1.json"
refused "concurrent plan-solve -o its workload" "scenario1.json: is the input" -- \
  "$BIN/plan-solve" --mode concurrent "$W" -o "$W"
refused "concurrent plan-solve --trace over the contention table" "contention-illustrative.csv: is the input" -- \
  "$BIN/plan-solve" --mode concurrent "$W" -o "$LOG/c.json" --trace "$T/concurrent/contention-illustrative.csv"
refused "concurrent plan-solve --trace a directory" "userdir: is a directory" -- \
  "$BIN/plan-solve" --mode concurrent "$W" -o "$LOG/c.json" --trace "$T/userdir"
refused "plan-run --write-cache over the model" "dense.onnx: is the input" -- \
  "$BIN/plan-run" "$T/zoo/models/iris/dense.onnx" --repeat 0 --write-cache "$T/zoo/models/iris/dense.onnx"
refused "plan-run --trace over an input .npy" "iris_test_x.npy: is the input" -- \
  "$BIN/plan-run" "$T/zoo/models/iris/dense.onnx" --repeat 0 --trace "$T/zoo/data/iris_test_x.npy" \
  --input "x=$T/zoo/data/iris_test_x.npy"
refused "plan-run --save-outputs holding its --trace" "contains the output" -- \
  "$BIN/plan-run" "$T/zoo/models/iris/dense.onnx" --repeat 0 --save-outputs "$LOG/outs" --trace "$LOG/outs/t.json"
echo "old plan" > "$LOG/existing_plan.json"
"$BIN/plan-solve" "$T/prof" -o "$LOG/existing_plan.json" >/dev/null && grep -q '"stitch"' "$LOG/existing_plan.json" \
  && pass "-o over an existing regular file that is not an input replaces it" || fail "-o over an existing file"
ls "$LOG" | grep -q "\.tmp\." && fail "temporary files left beside single-file outputs" || pass "no temporary files left"

# --- zoo-profile is not atomic: now every failure leaves the old output as it was ---
printf 'not,a,profile\n1,2,3\n' > "$T/bad_import.csv"
refused "zoo-profile failing after it started writing" "bad_import.csv" -- \
  "$BIN/zoo-profile" "$T/st" -o "$T/prof" "${FAST[@]}" --import npu=csv:"$T/bad_import.csv"
no_debris "failed zoo-profile" "$T/prof"
refused "zoo-profile failing into a new nested directory leaves no directories" "bad_import.csv" -- \
  "$BIN/zoo-profile" "$T/st" -o "$T/new/deeper/prof" "${FAST[@]}" --import npu=csv:"$T/bad_import.csv"

# Interrupted runs into an existing output: the old output stays, the next run cleans up.
# The signal is sent once the run has got as far as WHEN: "latency" (its staging tree
# exists: the latency phase) or "accuracy" (node_profile.csv is staged: the accuracy phase).
staged_file() { ls "$T"/.prof_full.staging.*/"$1" >/dev/null 2>&1; }
interrupt() {  # interrupt NAME SIGNAL WHEN WANT_RC
  local name="$1" sig="$2" when="$3" want_rc="$4" after rc=0 pid waited=0 debris
  "$BIN/zoo-profile" "$T/st_full" -o "$T/prof_full" "${FAST[@]}" --force >"$LOG/int.out" 2>"$LOG/int.err" &
  pid=$!
  if [ "$when" = accuracy ]; then
    until staged_file node_profile.csv || [ "$waited" -ge 600 ]; do sleep 0.1; waited=$((waited + 1)); done
  else
    until staged_file . || [ "$waited" -ge 600 ]; do sleep 0.1; waited=$((waited + 1)); done
  fi
  kill "-$sig" "$pid" 2>/dev/null || true
  { wait "$pid"; } 2>/dev/null || rc=$?
  if [ "$rc" -ne "$want_rc" ]; then fail "$name: exit code $rc, expected $want_rc ($(cat "$LOG/int.err"))"; return; fi
  after="$(cd "$T/prof_full" && find . -type f -exec sha256sum {} + | sort)"
  debris="$(ls -a "$T" | grep -c "^\.prof_full\." || true)"
  [ "$after" = "$PROF_FULL_BEFORE" ] && [ "$debris" -gt 0 ] \
    && pass "$name in the $when phase: exit $rc, the old output is unchanged, $debris entries left beside it" \
    || fail "$name: the old output changed, or nothing was staged ($debris entries beside it)"
  if "$BIN/zoo-profile" "$T/st_full" -o "$T/prof_full" "${FAST[@]}" >"$LOG/next.out" 2>"$LOG/next.err"; then
    pass "$name: the next run completes ($(grep -o '[0-9]* subgraph rows reused' "$LOG/next.out" || echo 'nothing reused'))"
  else fail "$name: the next run failed: $(cat "$LOG/next.err")"; fi
  no_debris "$name: after the next run" "$T/prof_full"
  consistent "$name: after the next run" "$T/prof_full"
  PROF_FULL_BEFORE="$(cd "$T/prof_full" && find . -type f -exec sha256sum {} + | sort)"
}
"$BIN/zoo-profile" "$T/st_full" -o "$T/prof_full" "${FAST[@]}" >/dev/null
PROF_FULL_BEFORE="$(cd "$T/prof_full" && find . -type f -exec sha256sum {} + | sort)"
interrupt "Ctrl-C" INT latency 130
interrupt "Ctrl-C" INT accuracy 130
interrupt "SIGTERM" TERM accuracy 143
interrupt "SIGKILL" KILL latency 137
interrupt "SIGKILL" KILL accuracy 137

# A Ctrl-C run's measured rows are kept beside the output, then reused and removed.
# The signal goes once the latency rows are measured (node_profile.csv is staged,
# the accuracy phase has begun): a fixed delay is too long on an idle machine.
rm -rf "$T/prof_resume"
"$BIN/zoo-profile" "$T/st_full" -o "$T/prof_resume" "${FAST[@]}" >"$LOG/r1.out" 2>&1 &
pid=$!; waited=0
until ls "$T"/.prof_resume.staging.*/node_profile.csv >/dev/null 2>&1 || [ "$waited" -ge 600 ]; do sleep 0.05; waited=$((waited + 1)); done
kill -INT "$pid" 2>/dev/null || true; rc=0; wait "$pid" || rc=$?
kept="$(ls -d "$T"/.prof_resume.staging.* 2>/dev/null | head -1)"
if [ "$rc" -eq 130 ] && [ ! -e "$T/prof_resume" ] && [ -f "$kept/profile.csv" ] && grep -q "is unchanged" "$LOG/r1.out"; then
  kept_rows=$(grep -c "^subgraph," "$kept/profile.csv" || true)
  "$BIN/zoo-profile" "$T/st_full" -o "$T/prof_resume" "${FAST[@]}" >"$LOG/r2.out" 2>&1
  reused=$(grep -o "[0-9]* subgraph rows reused" "$LOG/r2.out" | grep -o "^[0-9]*" || echo 0)
  [ "$reused" -eq "$kept_rows" ] && [ "$kept_rows" -gt 0 ] \
    && pass "resume: the interrupted run's $kept_rows subgraph rows are reused by the next run" \
    || fail "resume: $kept_rows rows kept, $reused reused: $(cat "$LOG/r2.out")"
  no_debris "resume" "$T/prof_resume"
  consistent "resume" "$T/prof_resume"
else
  fail "resume: interrupted run: exit $rc, kept '$kept', output: $(cat "$LOG/r1.out")"
fi

# --- concurrent runs into one directory: one run's complete output, never a mixture ---
for trial in 1 2 3; do
  rm -rf "$T/prof_conc"
  [ "$trial" -eq 3 ] && "$BIN/zoo-profile" "$T/st" -o "$T/prof_conc" "${FAST[@]}" >/dev/null  # also over an earlier output
  "$BIN/zoo-profile" "$T/st" -o "$T/prof_conc" "${FAST[@]}" --force --seed 1 >"$LOG/c1.out" 2>"$LOG/c1.err" &
  p1=$!
  "$BIN/zoo-profile" "$T/st" -o "$T/prof_conc" "${FAST[@]}" --force --seed 2 >"$LOG/c2.out" 2>"$LOG/c2.err" &
  p2=$!
  rc1=0; rc2=0; wait "$p1" || rc1=$?; wait "$p2" || rc2=$?
  if [ "$rc1" -ne 0 ] || [ "$rc2" -ne 0 ]; then fail "concurrent trial $trial: exit codes $rc1 $rc2: $(cat "$LOG/c1.err" "$LOG/c2.err")"; continue; fi
  seed=$($PY -c "import json; print(json.load(open('$T/prof_conc/report.json'))['params']['seed'])")
  consistent "concurrent trial $trial (output of the seed-$seed run)" "$T/prof_conc"
  no_debris "concurrent trial $trial" "$T/prof_conc"
done
grep -qh "waiting for another run writing" "$LOG/c1.err" "$LOG/c2.err" \
  && pass "the second run said it waited for the first" || fail "no run waited for the other"

# --- consistency checked where it is read ---
"$BIN/zoo-profile" "$T/st" -o "$T/prof_b" "${FAST[@]}" --force --seed 3 >/dev/null
cp -r "$T/prof" "$T/mixed" && cp "$T/prof_b/profile.csv" "$T/mixed/profile.csv"
refused "plan-solve on a mixture of two runs' files" "mixed/profile.csv: does not match the hash $T/mixed/report.json recorded" -- \
  "$BIN/plan-solve" "$T/mixed" -o "$LOG/mixed_plan.json"
cp "$T/prof/profile.csv" "$T/mixed/profile.csv" && cp "$T/prof_b/accuracy.csv" "$T/mixed/accuracy.csv"
# Two positions give few combinations, all measured: the seed-3 run's accuracy.csv
# may equal this one's, so the other run's file is made to differ in one estimate.
$PY -c "import sys; p='$T/mixed/accuracy.csv'; L=open(p).read().split(chr(10)); f=L[1].split(','); f[4]='0.123456789'; L[1]=','.join(f); open(p,'w').write(chr(10).join(L))"
refused "plan-solve on another run's accuracy.csv" "mixed/accuracy.csv: does not match the hash" -- \
  "$BIN/plan-solve" "$T/mixed" -o "$LOG/mixed_plan.json"
$PY -c "import json; p='$T/mixed/report.json'; r=json.load(open(p)); del r['files_sha256']; json.dump(r, open(p,'w'))"
refused "plan-solve on a report without file hashes" "records no hashes of the files beside it" -- \
  "$BIN/plan-solve" "$T/mixed" -o "$LOG/mixed_plan.json"
# zoo-stitch ran again (other cut points) after zoo-profile: the profile no longer matches.
cp -r "$T/st" "$T/st2" && cp -r "$T/prof" "$T/prof2"
$PY -c "import json; p='$T/prof2/report.json'; r=json.load(open(p)); r['stitch_dir']='../st2'; json.dump(r, open(p,'w'))"
"$BIN/zoo-stitch" "$T/zoo/small.json" -o "$T/st2" --subgraphs 3 >/dev/null
refused "plan-solve after zoo-stitch rewrote the stitch directory" "st2/stitch.json: does not match the hash $T/prof2/report.json recorded" -- \
  "$BIN/plan-solve" "$T/prof2" -o "$LOG/p2.json"
# plan-emit: the plan recorded the stitch.json it was solved from.
"$BIN/plan-solve" "$T/prof" -o "$T/plan_fresh.json" >/dev/null
cp -r "$T/st" "$T/st_keep"
"$BIN/zoo-stitch" "$T/zoo/small.json" -o "$T/st" --subgraphs 3 >/dev/null
refused "plan-emit after zoo-stitch rewrote the stitch directory" "st/stitch.json: does not match the hash $T/plan_fresh.json recorded" -- \
  "$BIN/plan-emit" "$T/plan_fresh.json" -o "$T/bundle_new"
finish
