#!/usr/bin/env bash
# Long fuzzing runs: scripts/fuzz.sh [-j JOBS] [SECONDS] [HARNESS...]
#
# Builds build-fuzz/ (scripts/build_fuzz.sh, needs clang) and runs each harness
# (default: every one in fuzz/CMakeLists.txt) for SECONDS (default 300) at low
# priority, JOBS at a time (default 1). New inputs accumulate in
# build-fuzz/fuzz-corpus/HARNESS across runs (the seeds in fuzz/corpus and the
# reproducers in fuzz/regressions are read, never written); a crashing input is
# kept in build-fuzz/fuzz-artifacts/HARNESS/ and logs in build-fuzz/fuzz-logs/.
# Prints one row per harness (executions, crashes, new corpus entries) and exits
# 1 when any harness crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=1
if [ "${1:-}" = "-j" ]; then jobs="$2"; shift 2; fi
seconds=300
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then seconds="$1"; shift; fi
all=$(sed -n '/^set(zp_fuzz_harnesses/,/)/p' fuzz/CMakeLists.txt | sed 's/set(zp_fuzz_harnesses//' | tr -d '()')
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && read -r -a harnesses <<<"$(echo $all)"
for h in "${harnesses[@]}"; do
  [[ " $(echo $all) " == *" $h "* ]] || { echo "fuzz.sh: unknown harness '$h' (known: $(echo $all))" >&2; exit 2; }
done

bash scripts/build_fuzz.sh >/dev/null
out=build-fuzz
mkdir -p "$out/fuzz-logs"

# Runs one harness; writes "executions crashes new_entries" to its .result file.
run_one() {
  local h="$1" corpus="$out/fuzz-corpus/$h" artifacts="$out/fuzz-artifacts/$h" log="$out/fuzz-logs/$h.log"
  mkdir -p "$corpus" "$artifacts"
  local dirs=("$corpus" "fuzz/corpus/$h")
  [ -d "fuzz/regressions/$h" ] && dirs+=("fuzz/regressions/$h")
  local opts=(-max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$artifacts/")
  [ -f "fuzz/dict/$h.dict" ] && opts+=(-dict="fuzz/dict/$h.dict")
  local before_corpus before_crashes
  before_corpus=$(find "$corpus" -type f | wc -l)
  before_crashes=$(find "$artifacts" -type f | wc -l)
  local rc=0
  nice -n 10 "$out/bin/fuzz_$h" "${opts[@]}" "${dirs[@]}" >"$log" 2>&1 || rc=$?
  local execs crashes
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(( $(find "$artifacts" -type f | wc -l) - before_crashes ))
  # libFuzzer stops at the first crash; an input found before counts again by the exit code.
  [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1
  echo "${execs:-?} $crashes $(( $(find "$corpus" -type f | wc -l) - before_corpus ))" >"$out/fuzz-logs/$h.result"
}

running=0
for h in "${harnesses[@]}"; do
  run_one "$h" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

status=0
printf '%-16s %12s %8s %12s\n' harness executions crashes new-inputs
for h in "${harnesses[@]}"; do
  read -r execs crashes added <"$out/fuzz-logs/$h.result"
  printf '%-16s %12s %8s %12s\n' "$h" "$execs" "$crashes" "$added"
  if [ "$crashes" != 0 ]; then
    status=1
    echo "  $(grep -m1 -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error:|property violated' \
      "$out/fuzz-logs/$h.log" || echo 'see the log')"
    echo "  input: $(ls -t "$out/fuzz-artifacts/$h" | head -1 | sed "s|^|$out/fuzz-artifacts/$h/|")"
  fi
done
echo "fuzz.sh: ${seconds} s per harness; logs in $out/fuzz-logs/"
exit "$status"
