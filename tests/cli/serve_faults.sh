#!/usr/bin/env bash
# What an adversarial user tried against plan-run --serve, the single-file
# outputs and the newer modes: each case is a one-line error with its exit code
# and nothing changed on disk (rejected), or a bounded behaviour.
source "$(dirname "$0")/lib.sh"
Z="$SRC/testdata/digits"
"$BIN/zoo-stitch" "$Z/zoo.json" -o "$WORK/st" >/dev/null
"$BIN/zoo-profile" "$WORK/st" -o "$WORK/prof" --repeat 2 --warmup 0 --latency-validation 2 >/dev/null
"$BIN/plan-solve" "$WORK/prof" -o "$WORK/plan/plan.json" >/dev/null
"$BIN/plan-emit" "$WORK/plan/plan.json" -o "$WORK/bundle" >/dev/null
SERVE=(--serve --calibration-rounds 0 --count 20 --rate 200)

# --- single-file outputs never replace special files -----------------------------------
mkdir -p "$WORK/devt"
mkfifo "$WORK/devt/fifo"
ln -s fifo "$WORK/devt/to_fifo"
rejected "plan-solve -o FIFO" 1 "devt/fifo: is a FIFO, not a regular file; refusing to replace it" -- \
  "$BIN/plan-solve" "$WORK/prof" -o "$WORK/devt/fifo"
rejected "plan-solve -o symlink to a FIFO" 1 "devt/to_fifo: is a symbolic link to a FIFO" -- \
  "$BIN/plan-solve" "$WORK/prof" -o "$WORK/devt/to_fifo"
rejected "plan-solve --mode opplace -o FIFO" 1 "devt/fifo: is a FIFO, not a regular file" -- \
  "$BIN/plan-solve" --mode opplace "$Z/models/dense.onnx" --zoo "$Z/zoo.json" --profile "$WORK/prof" -o "$WORK/devt/fifo"
rejected "plan-run --serve --json FIFO" 1 "devt/fifo: is a FIFO, not a regular file" -- \
  "$BIN/plan-run" "$WORK/bundle" "${SERVE[@]}" --json "$WORK/devt/fifo"
rejected "plan-run --serve --trace FIFO" 1 "devt/fifo: is a FIFO, not a regular file" -- \
  "$BIN/plan-run" "$WORK/bundle" "${SERVE[@]}" --trace "$WORK/devt/fifo"
if [ "$(id -u)" -eq 0 ]; then
  # As root a rename would replace a device node: where /dev/null was replaced once.
  mknod "$WORK/devt/null" c 1 3
  rejected "plan-solve -o a character device" 1 "devt/null: is a character device, not a regular file" -- \
    "$BIN/plan-solve" "$WORK/prof" -o "$WORK/devt/null"
  rejected "plan-run --serve --json /dev/null" 1 "/dev/null: is a character device, not a regular file" -- \
    "$BIN/plan-run" "$WORK/bundle" "${SERVE[@]}" --json /dev/null
  [ -c /dev/null ] && pass "/dev/null is still a character device" || fail "/dev/null was replaced"
else
  pass "not root: device-node cases skipped (CI runs them as root)"
fi
ln -s ../plan/plan.json "$WORK/devt/to_plan"
"$BIN/plan-solve" "$WORK/prof" -o "$WORK/devt/to_plan" >/dev/null && [ -L "$WORK/devt/to_plan" ] \
  && pass "a symbolic link to a regular file is written through and stays a link" || fail "symlink to a regular file"

# --- every run path verifies what it executes --------------------------------------------
# Serving runs the units the plan's systems choose; a unit only a preload set names is bundled, never run.
run_files="$($PY - "$WORK/bundle/plan.json" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1]))
files = {u["id"]: u["file"] for u in p["units"]}
run = {files["subgraph:%s/%d/%s" % (t["name"], g["position"], g["variant"])] for t in p["stitch"]["tasks"] for g in t["subgraphs"]}
print(" ".join(sorted(f.split("/")[-1] for f in run)))
PYEOF
)"
[ -n "$run_files" ] || fail "no subgraph the plan runs"
for sub in $run_files; do
  rm -rf "$WORK/edited" && cp -r "$WORK/bundle" "$WORK/edited"
  printf 'x' >> "$WORK/edited/subgraphs/$sub"
  rejected "serve with subgraph $sub edited" 1 "subgraphs/$sub: content hash does not match the plan's" -- \
    "$BIN/plan-run" "$WORK/edited" "${SERVE[@]}"
done
cp -r "$WORK/bundle" "$WORK/badcache"
first_run="${run_files%% *}"
cache="$(ls "$WORK/badcache/caches" | grep "^${first_run%.onnx}" | head -1)"
[ -n "$cache" ] || fail "no cache of $first_run"
$PY - "$WORK/badcache/caches/$cache" <<'PYEOF'
import sys
b = bytearray(open(sys.argv[1], 'rb').read()); b[len(b) // 2] ^= 0x5A; open(sys.argv[1], 'wb').write(b)
PYEOF
err="$("$BIN/plan-run" "$WORK/badcache" "${SERVE[@]}" 2>&1 >/dev/null)" \
  && case "$err" in *"caches/$cache: differs from manifest.json"*) pass "a corrupted cache is named when served: $err" ;;
                    *) fail "a corrupted cache served silently: $err" ;; esac || fail "serving a corrupted cache failed: $err"
"$BIN/plan-run" "$WORK/bundle" "${SERVE[@]}" > "$WORK/table.txt" \
  && grep -q "accuracy" "$WORK/table.txt" && pass "the serving table shows accuracy" || fail "no accuracy in: $(head -2 "$WORK/table.txt")"
# plan.json and plan.pb edited alike agree with each other, not with the manifest.
"$BIN/plan-solve" "$WORK/prof" -o "$WORK/plan2/plan.json" --memory-budget 50% >/dev/null
"$BIN/plan-emit" "$WORK/plan2/plan.json" -o "$WORK/bundle2" >/dev/null
cp -r "$WORK/bundle" "$WORK/swapped"
cp "$WORK/bundle2/plan.json" "$WORK/bundle2/plan.pb" "$WORK/swapped/"
if ! cmp -s "$WORK/bundle/plan.pb" "$WORK/swapped/plan.pb"; then
  rejected "plan.json and plan.pb swapped together" 1 "plan.pb: content hash does not match manifest.json" -- \
    "$BIN/plan-run" "$WORK/swapped"
else
  fail "the second plan equals the first: the swap test tests nothing"
fi

# --- bounded inputs -----------------------------------------------------------------------
printf 'time_ms,task,sample\n1e15,digits,0\n' > "$WORK/far.csv"
rejected "arrival at 1e15 ms" 1 "far.csv:2: time 1e15 is above 1e+07 ms, the longest trace served" -- \
  "$BIN/plan-run" "$WORK/bundle" --serve --arrivals "$WORK/far.csv"
rejected "--arrivals /dev/zero" 1 "/dev/zero: is a character device, not a regular file" -- \
  "$BIN/plan-run" "$WORK/bundle" --serve --arrivals /dev/zero
rejected "--arrivals DIR" 1 "devt: is a directory, not a file" -- \
  "$BIN/plan-run" "$WORK/bundle" --serve --arrivals "$WORK/devt"
rejected "plan-run /dev/zero" 1 "/dev/zero: is a character device, not a regular file" -- "$BIN/plan-run" /dev/zero
rejected "plan-solve --mode concurrent /dev/zero" 1 "/dev/zero: is a character device, not a regular file" -- \
  "$BIN/plan-solve" --mode concurrent /dev/zero -o "$WORK/out/plan.json"

# --- cold plans belong to one model --------------------------------------------------------
"$BIN/plan-solve" --mode cold "$Z/models/dense.onnx" -o "$WORK/cold/plan.json" --warm-repeat 2 >/dev/null
rejected "a cold plan run on another model" 1 "cold/plan.json: planned for another model" -- \
  "$BIN/plan-run" "$Z/models/s50.onnx" --cold-plan "$WORK/cold/plan.json" --write-cache "$WORK/c.zwc"
rejected "plan-solve --mode cold --cores beyond the machine" 2 "--cores" -- \
  "$BIN/plan-solve" --mode cold "$Z/models/dense.onnx" -o "$WORK/out/plan.json" --cores 4096

# --- admission control: bounded memory, drops counted ---------------------------------------
# 200,000 arrivals in 0.2 s: about 100 MB measured here for one system, its records included.
if "$BIN/plan-run" "$WORK/bundle" --serve --calibration-rounds 0 --rate 1000000 --duration-ms 200 --max-queue 8 \
     --json "$WORK/flood.json" > "$WORK/flood.txt" 2>&1 && $PY - "$WORK/flood.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
for name, s in r["systems"].items():
    m = s["measured"]
    assert m["dropped"] > 0 and m["violations"] >= m["dropped"], (name, m)
    assert m["peak_rss_bytes"] < 300 << 20, (name, m["peak_rss_bytes"])
PYEOF
then pass "a flood beyond --max-queue is dropped, counted as violations, in bounded memory"
else fail "flood: $(tail -3 "$WORK/flood.txt")"; fi

# --- option and file mistakes ---------------------------------------------------------------
rejected "--trace-system not served" 1 "--trace-system nosuch: not among the systems served" -- \
  "$BIN/plan-run" "$WORK/bundle" "${SERVE[@]}" --trace "$WORK/out/t.json" --trace-system nosuch
rejected "--arrivals with --count" 2 "--arrivals and --count: the trace gives the arrivals" -- \
  "$BIN/plan-run" "$WORK/bundle" --serve --arrivals "$WORK/far.csv" --count 5
rejected "--duration-ms too short for any arrival" 1 "no query arrives within 0.001 ms" -- \
  "$BIN/plan-run" "$WORK/bundle" --serve --duration-ms 0.001 --rate 1
rejected "--duration-ms beyond the longest trace" 2 "--duration-ms" -- \
  "$BIN/plan-run" "$WORK/bundle" --serve --duration-ms 1e8
rejected "--serving-order not known" 2 "--serving-order" -- \
  "$BIN/plan-run" "$WORK/bundle" "${SERVE[@]}" --serving-order shortest-first
rejected "--serving-order without --serve" 2 "--serving-order applies only with --serve" -- \
  "$BIN/plan-run" "$WORK/bundle" --serving-order first-come
# Every system served earliest deadline first: the report says so per system.
if "$BIN/plan-run" "$WORK/bundle" "${SERVE[@]}" --compare AV-NP --serving-order earliest-deadline \
     --json "$WORK/edf.json" > "$WORK/edf.txt" 2>&1 && $PY - "$WORK/edf.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert sorted(r["systems"]) == ["AV-NP", "zooplan"], sorted(r["systems"])
for name, s in r["systems"].items():
    assert s["serving_order"] == "earliest-deadline", (name, s.get("serving_order"))
PYEOF
then pass "--serving-order serves every system in that order"
else fail "--serving-order: $(tail -3 "$WORK/edf.txt")"; fi
printf '{"configurations": [{"id": "A", "id": "B", "tasks": {}}]}\n' > "$WORK/dup.json"
rejected "duplicate JSON keys" 1 "dup.json: key 'id' appears twice in one object" -- \
  "$BIN/plan-solve" "$WORK/prof" -o "$WORK/out/plan.json" --slo "$WORK/dup.json"
finish
