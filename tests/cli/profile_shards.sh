#!/usr/bin/env bash
# zoo-profile --shard K/N and --merge: shards of the digits zoo (every
# stitched variant measured) and of the multitask zoo (a sampled training set,
# its second round measured at the merge) run with GNU parallel and merged give
# the profile directory a single run writes, times masked
# (compare_profiles.py); merges of wrong shard sets are refused naming both files.
source "$(dirname "$0")/lib.sh"
use_fixture multitask
MST="$ST"
use_fixture digits
FAST=(--repeat 3 --warmup 1 --latency-validation 4)
SAMPLED=(--repeat 3 --warmup 1 --latency-validation 4 --exhaustive-limit 0 --training-fraction 0.6)
command -v parallel >/dev/null || { echo "FAIL: GNU parallel not installed (scripts/bootstrap.sh)"; exit 1; }

# digits: 3 shards, exhaustive accuracy.
"$BIN/zoo-profile" "$ST" -o "$WORK/single/d" "${FAST[@]}" >/dev/null
parallel -j2 "$BIN/zoo-profile" "$ST" -o "$WORK/sh/d{}" "${FAST[@]}" --shard {}/3 ::: 0 1 2 > "$WORK/parallel.txt"
grep -q "shard 2 of 3: measured" "$WORK/parallel.txt" && pass "three shards measured" || fail "shards: $(cat "$WORK/parallel.txt")"
"$BIN/zoo-profile" --merge "$WORK/sh/d0" "$WORK/sh/d1" "$WORK/sh/d2" -o "$WORK/merged/d" > "$WORK/merge.txt"
grep -q "merged 3 shards" "$WORK/merge.txt" && pass "merge reports its shards" || fail "merge output: $(cat "$WORK/merge.txt")"
if $PY "$SRC/tests/cli/compare_profiles.py" "$WORK/single/d" "$WORK/merged/d"; then pass "digits: merged == single run"
else fail "digits: merged differs from the single run"; fi

# digits with the feature estimator alone (the default composes from contested samples).
"$BIN/zoo-profile" "$ST" -o "$WORK/single/c" "${FAST[@]}" --accuracy-estimator features >/dev/null
parallel -j2 "$BIN/zoo-profile" "$ST" -o "$WORK/sh/c{}" "${FAST[@]}" --accuracy-estimator features --shard {}/2 ::: 0 1 >/dev/null
"$BIN/zoo-profile" --merge "$WORK/sh/c0" "$WORK/sh/c1" -o "$WORK/merged/c" >/dev/null
if $PY "$SRC/tests/cli/compare_profiles.py" "$WORK/single/c" "$WORK/merged/c"; then pass "features only: merged == single run"
else fail "features only: merged differs from the single run"; fi

# multitask: 4 shards, sampled training set (the second round is measured by the merge).
"$BIN/zoo-profile" "$MST" -o "$WORK/single/m" "${SAMPLED[@]}" >/dev/null
parallel -j2 "$BIN/zoo-profile" "$MST" -o "$WORK/sh/m{}" "${SAMPLED[@]}" --shard {}/4 ::: 0 1 2 3 >/dev/null
"$BIN/zoo-profile" --merge "$WORK"/sh/m0 "$WORK"/sh/m1 "$WORK"/sh/m2 "$WORK"/sh/m3 -o "$WORK/merged/m" >/dev/null
if $PY "$SRC/tests/cli/compare_profiles.py" "$WORK/single/m" "$WORK/merged/m"; then pass "multitask: merged == single run"
else fail "multitask: merged differs from the single run"; fi
# The comparison can fail: a single run with another seed differs.
"$BIN/zoo-profile" "$MST" -o "$WORK/single/m7" "${SAMPLED[@]}" --seed 7 >/dev/null
if $PY "$SRC/tests/cli/compare_profiles.py" "$WORK/single/m" "$WORK/single/m7" 2>/dev/null; then
  fail "compare_profiles accepted profiles of two seeds"
else pass "compare_profiles tells profiles of two seeds apart"; fi

# Shard sets a merge refuses, nothing written.
"$BIN/zoo-profile" "$ST" -o "$WORK/sh/x1" "${FAST[@]}" --seed 3 --shard 1/3 >/dev/null
rejected "a missing shard" 1 "shard 1 of 3 is missing (2 of 3 given)" -- \
  "$BIN/zoo-profile" --merge "$WORK/sh/d0" "$WORK/sh/d2" -o "$WORK/out"
rejected "a shard twice" 1 "sh/d1/shard.json and $WORK/sh/d1/shard.json: both are shard 1 of 3" -- \
  "$BIN/zoo-profile" --merge "$WORK/sh/d0" "$WORK/sh/d1" "$WORK/sh/d1" -o "$WORK/out"
rejected "shards of other parameters" 1 "sh/d0/shard.json and $WORK/sh/x1/shard.json: shards of different runs: parameters (\$.seed)" -- \
  "$BIN/zoo-profile" --merge "$WORK/sh/d0" "$WORK/sh/x1" "$WORK/sh/d2" -o "$WORK/out"
rejected "shards of two stitch directories" 1 "shards of different runs: stitch directories" -- \
  "$BIN/zoo-profile" --merge "$WORK/sh/d0" "$WORK/sh/m1" -o "$WORK/out"
rejected "a directory without shard.json" 1 "single/d/shard.json: cannot open" -- \
  "$BIN/zoo-profile" --merge "$WORK/single/d" -o "$WORK/out"
cp -r "$WORK/sh/d0" "$WORK/bad"
sed -i 's/"index": 0/"index": 5/' "$WORK/bad/shard.json"
rejected "a shard index out of range" 1 "bad/shard.json: \$.shard.index: 5 is above 2" -- \
  "$BIN/zoo-profile" --merge "$WORK/bad" -o "$WORK/out"
# Shards that agree with each other but not with what the merge sees (made by another build).
for k in 0 1 2; do
  cp -r "$WORK/sh/d$k" "$WORK/sh/forged$k"
  $PY - "$WORK/sh/forged$k/shard.json" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
j["inputs"]["tool_sha256"] = "0" * 64
json.dump(j, open(sys.argv[1], "w"))
PYEOF
done
rejected "shards of another build" 1 "forged0/shard.json: the shards were measured from other inputs than this merge sees (\$.tool_sha256 differs)" -- \
  "$BIN/zoo-profile" --merge "$WORK/sh/forged0" "$WORK/sh/forged1" "$WORK/sh/forged2" -o "$WORK/out"
rejected "measurement options with --merge" 2 "--seed: not with --merge" -- \
  "$BIN/zoo-profile" --merge "$WORK/sh/d0" -o "$WORK/out" --seed 2
rejected "--shard K out of range" 2 "--shard '3/3': K must be in [0, N)" -- \
  "$BIN/zoo-profile" "$ST" -o "$WORK/out" --shard 3/3
rejected "--shard not K/N" 2 "--shard 'half': expected K/N" -- \
  "$BIN/zoo-profile" "$ST" -o "$WORK/out" --shard half
rejected "merge into a shard it reads" 1 "" -- \
  "$BIN/zoo-profile" --merge "$WORK/sh/d0" "$WORK/sh/d1" "$WORK/sh/d2" -o "$WORK/sh/d1"
finish
