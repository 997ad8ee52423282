#!/usr/bin/env bash
# scripts/slurm_profile.sh --local-cluster on the digits zoo: a one-node Slurm
# cluster started on this machine, a job array over 3 shards, the merge equal
# to a single zoo-profile run (times masked), and the cluster stopped: no
# daemon it started left running, its directory removed.
source "$(dirname "$0")/lib.sh"
for tool in slurmctld slurmd munged mungekey sbatch scontrol sinfo; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not installed (scripts/bootstrap.sh installs slurm-wlm and munge)"
    exit 77
  fi
done
FAST=(--repeat 3 --warmup 1 --latency-validation 4)
"$BIN/zoo-stitch" "$SRC/testdata/digits/zoo.json" -o "$WORK/st" >/dev/null
"$BIN/zoo-profile" "$WORK/st" -o "$WORK/single" "${FAST[@]}" >/dev/null
daemons() { { pgrep -x slurmctld; pgrep -x slurmd; pgrep -x munged; } | sort || true; }
before="$(daemons)"
if TMPDIR="$WORK" bash "$SRC/scripts/slurm_profile.sh" --local-cluster --bin "$BIN" "$WORK/st" "$WORK/merged" 3 "${FAST[@]}" \
    > "$WORK/slurm.txt" 2>&1; then
  pass "slurm_profile.sh ran: $(grep -c . "$WORK/slurm.txt") lines of output"
else
  fail "slurm_profile.sh failed: $(tail -n 5 "$WORK/slurm.txt" | tr '\n' ' ')"
fi
grep -q "one-node cluster up" "$WORK/slurm.txt" && pass "the cluster came up" || fail "no cluster: $(head -3 "$WORK/slurm.txt")"
n=$(ls "$WORK/merged.shards/logs" 2>/dev/null | wc -l)
[ "$n" -eq 3 ] && pass "the job array ran 3 tasks" || fail "job array logs: $n"
if grep -q "shard 1 of 3: measured" "$WORK/merged.shards/logs/1.out" 2>/dev/null; then pass "array task 1 measured shard 1"
else fail "array task 1: $(cat "$WORK/merged.shards/logs/1.out" 2>/dev/null)"; fi
if $PY "$SRC/tests/cli/compare_profiles.py" "$WORK/single" "$WORK/merged"; then pass "the merge of the Slurm shards == single run"
else fail "the merge differs from the single run"; fi
[ "$(daemons)" = "$before" ] && pass "the cluster it started is stopped" || fail "daemons left: $(daemons | tr '\n' ' ')"
ls "$WORK" | grep -q '^zp_slurm' && fail "cluster directory left in $WORK" || pass "cluster directory removed"
finish
