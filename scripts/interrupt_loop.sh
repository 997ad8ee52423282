#!/usr/bin/env bash
# Ctrl-C soak for zoo-profile: scripts/interrupt_loop.sh [--storm] BIN_DIR [RUNS] [MAX_DELAY_S]
#
# Profiles the multitask zoo once into prof/, then RUNS times (default 30)
# starts `zoo-profile --force` over it and sends SIGINT after a random delay in
# [0.2, MAX_DELAY_S] s (default: 0.8 x the time one full run took) on even
# runs and 0-0.6 s after the staging tree appears on odd runs, so the signal
# lands anywhere in the short latency phase and the long accuracy phase. Each run must exit
# 130 (or 0 when it finished first), print nothing that a heap checker or a
# sanitizer prints (glibc "corrupted ...", "double free", AddressSanitizer,
# "runtime error:"), and leave prof/ byte-identical unless it finished. A last
# uninterrupted run must then succeed and leave no staging tree behind.
# Prints one line per run and a summary; exits 1 on any failure. Works on any
# build (Release, build-san, build-fuzz); not part of ctest (it takes minutes).
# --storm: instead of one SIGINT, one every 2 ms until the run exits (a signal
# landing inside a matrix product is then all but certain).
set -euo pipefail
storm=0
if [ "${1:-}" = "--storm" ]; then storm=1; shift; fi
BIN="$(cd "$1" && pwd)"
runs="${2:-30}"
SRC="$(cd "$(dirname "$0")/.." && pwd)"
W="$(mktemp -d "${TMPDIR:-/tmp}/zp_interrupt.XXXXXX")"
trap 'rm -rf "$W"' EXIT
FAST=(--repeat 1 --warmup 0 --latency-validation 1)
cp -r "$SRC/testdata/multitask" "$W/zoo"
"$BIN/zoo-stitch" "$W/zoo/zoo.json" -o "$W/st" >/dev/null
t0=$(date +%s.%N)
"$BIN/zoo-profile" "$W/st" -o "$W/prof" "${FAST[@]}" >/dev/null
full=$(echo "$(date +%s.%N) - $t0" | bc)
max_delay="${3:-$(echo "$full * 0.8" | bc)}"
hash_prof() { (cd "$W/prof" && find . -type f -exec sha256sum {} + | sort); }
before="$(hash_prof)"
bad='corrupted|double free|free\(\)|malloc|AddressSanitizer|LeakSanitizer|runtime error:|Segmentation|Aborted|terminate called'
failures=0 interrupted=0 finished=0
declare -A counts
echo "one full run: ${full} s; SIGINT after a random delay in [0.2, ${max_delay}] s"
for i in $(seq 1 "$runs"); do
  # The tree the previous Ctrl-C kept for resuming goes, so the new run's is the
  # only one (the last one stays for the final run to reuse and remove).
  rm -rf "$W"/.prof.staging.*
  "$BIN/zoo-profile" "$W/st" -o "$W/prof" "${FAST[@]}" --force >"$W/out" 2>"$W/err" &
  pid=$!
  if [ $((i % 2)) -eq 1 ]; then
    # Odd runs aim at the short latency phase: once the staging tree exists, 0-0.6 s more.
    waited=0
    until ls -d "$W"/.prof.staging.* >/dev/null 2>&1 || [ "$waited" -ge 3000 ]; do sleep 0.01; waited=$((waited + 1)); done
    delay=$(/usr/bin/python3 -c "import random; print(round(random.uniform(0, 0.6), 2))")
    when="staging+${delay} s"
  else
    delay=$(/usr/bin/python3 -c "import random; print(round(random.uniform(0.2, $max_delay), 2))")
    when="${delay} s"
  fi
  sleep "$delay"
  # The phase, from what is staged: latency (staging tree only), node_profile
  # (profile.csv checkpointed), accuracy (node_profile.csv staged).
  phase=startup
  ls -d "$W"/.prof.staging.* >/dev/null 2>&1 && phase=latency
  ls "$W"/.prof.staging.*/profile.csv >/dev/null 2>&1 && phase=node_profile
  ls "$W"/.prof.staging.*/node_profile.csv >/dev/null 2>&1 && phase=accuracy
  kill -INT "$pid" 2>/dev/null || true
  if [ "$storm" -eq 1 ]; then
    sent=1
    while kill -INT "$pid" 2>/dev/null; do sent=$((sent + 1)); sleep 0.002; done
    when="$when, $sent signals"
  fi
  rc=0; wait "$pid" || rc=$?
  counts[$phase]=$(( ${counts[$phase]:-0} + 1 ))
  msg="run $i: SIGINT at ${when} ($phase phase), exit $rc"
  if grep -qE "$bad" "$W/err" "$W/out"; then
    echo "FAIL $msg: $(grep -m1 -E "$bad" "$W/err" "$W/out")"; failures=$((failures + 1)); continue
  fi
  if [ "$rc" -eq 0 ]; then
    finished=$((finished + 1)); before="$(hash_prof)"; echo "ok   $msg (finished before the signal)"; continue
  fi
  if [ "$rc" -ne 130 ]; then echo "FAIL $msg: $(head -c 300 "$W/err")"; failures=$((failures + 1)); continue; fi
  if [ "$(hash_prof)" != "$before" ]; then echo "FAIL $msg: prof/ changed"; failures=$((failures + 1)); continue; fi
  interrupted=$((interrupted + 1)); echo "ok   $msg, prof/ unchanged"
done
if "$BIN/zoo-profile" "$W/st" -o "$W/prof" "${FAST[@]}" >"$W/out" 2>"$W/err" \
   && [ -z "$(ls -a "$W" | grep -E '^\.prof\.(staging|old|lock)' || true)" ]; then
  echo "ok   final run completes and leaves no staging tree"
else
  echo "FAIL final run: $(head -c 300 "$W/err") $(ls -a "$W")"; failures=$((failures + 1))
fi
echo "interrupt_loop: $runs runs (signal sent in phase: startup ${counts[startup]:-0}, latency ${counts[latency]:-0}, node_profile ${counts[node_profile]:-0}, accuracy ${counts[accuracy]:-0}), $interrupted interrupted, $finished finished first, $failures failed"
[ "$failures" -eq 0 ]
