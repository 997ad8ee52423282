#!/usr/bin/env bash
# zoo-profile on a Slurm cluster: the profiling run split into N shards, one
# job array task each (zoo-profile --shard K/N), then merged into the profile
# directory a single zoo-profile run writes (zoo-profile --merge).
#
#   scripts/slurm_profile.sh [--local-cluster] [--bin DIR] STITCH_DIR OUT_DIR N [ZOO_PROFILE_OPTION...]
#
# With --local-cluster the script first starts a one-node Slurm cluster on
# this machine — MUNGE and slurmctld/slurmd run by hand (no systemd) from a
# generated slurm.conf in a temporary directory, the node with the machine's
# CPUs — submits to it, and stops it (and removes the directory) on exit,
# however the script ends. Without it, sbatch submits to the cluster the
# environment already points at. The shard directories go to OUT_DIR.shards/,
# each task's log to OUT_DIR.shards/logs/. Needs slurm-wlm and munge
# (scripts/bootstrap.sh installs them). --bin: where zoo-profile is
# (default: build/bin of this checkout).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/build/bin"
local_cluster=0
while [ $# -gt 0 ]; do
  case "$1" in
    --local-cluster) local_cluster=1; shift ;;
    --bin) bin="$(cd "$2" && pwd)"; shift 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 3 ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
stitch="$(cd "$1" && pwd)"
out="$(mkdir -p "$(dirname "$2")" && cd "$(dirname "$2")" && pwd)/$(basename "$2")"
shards="$3"
shift 3
case "$shards" in ''|*[!0-9]*) echo "slurm_profile: N must be a positive integer, not '$shards'" >&2; exit 2 ;; esac
[ "$shards" -ge 1 ] || { echo "slurm_profile: N must be at least 1" >&2; exit 2; }
for tool in sbatch "$bin/zoo-profile"; do
  command -v "$tool" >/dev/null || { echo "slurm_profile: $tool not found (scripts/bootstrap.sh, scripts/build.sh)" >&2; exit 1; }
done

cluster=""
cleanup() {
  if [ -n "$cluster" ]; then
    SLURM_CONF="$cluster/slurm.conf" scontrol shutdown >/dev/null 2>&1 || true
    for pidfile in "$cluster/slurmd.pid" "$cluster/slurmctld.pid"; do  # only the daemons this script started
      for _ in $(seq 50); do
        [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null || break
        sleep 0.1
      done
      [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
    done
    munged --stop --socket="$cluster/munge/munge.sock" >/dev/null 2>&1 || true
    rm -rf "$cluster"
  fi
}
trap cleanup EXIT

# Two free TCP ports for slurmctld and slurmd (the defaults may be taken).
free_ports() {
  python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))'
}

start_local_cluster() {
  for tool in munged mungekey slurmctld slurmd scontrol sinfo; do
    command -v "$tool" >/dev/null || { echo "slurm_profile: $tool not found (scripts/bootstrap.sh installs slurm-wlm and munge)" >&2; exit 1; }
  done
  cluster="$(mktemp -d "${TMPDIR:-/tmp}/zp_slurm.XXXXXX")"
  chmod 700 "$cluster"
  mkdir -p "$cluster/munge" "$cluster/state" "$cluster/spool" "$cluster/log"
  chmod 700 "$cluster/munge"
  mungekey --create --keyfile="$cluster/munge/munge.key"
  munged --force --key-file="$cluster/munge/munge.key" --socket="$cluster/munge/munge.sock" \
    --pid-file="$cluster/munge/munged.pid" --log-file="$cluster/log/munged.log" --seed-file="$cluster/munge/munged.seed"
  read -r ctld_port slurmd_port <<<"$(free_ports)"
  local node cpus
  node="$(hostname -s)"
  cpus="$(nproc)"
  cat > "$cluster/slurm.conf" <<EOF
ClusterName=zooplan
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$cluster/munge/munge.sock
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=root
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/slurmctld.pid
SlurmdPidFile=$cluster/slurmd.pid
SlurmctldLogFile=$cluster/log/slurmctld.log
SlurmdLogFile=$cluster/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=zooplan Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$cluster/slurm.conf"
  slurmctld -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF"
  for _ in $(seq 100); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qx idle; then
      echo "slurm_profile: one-node cluster up ($node, $cpus CPUs, $cluster)"
      return
    fi
    sleep 0.2
  done
  echo "slurm_profile: the local Slurm cluster did not come up; logs in $cluster/log:" >&2
  tail -n 5 "$cluster"/log/*.log >&2 || true
  exit 1
}

[ "$local_cluster" -eq 1 ] && start_local_cluster

mkdir -p "$out.shards/logs"
job="$out.shards/job.sh"
{
  echo '#!/usr/bin/env bash'
  echo 'set -euo pipefail'
  printf 'exec %q %q -o %q/s"$SLURM_ARRAY_TASK_ID" --shard "$SLURM_ARRAY_TASK_ID"/%q' \
    "$bin/zoo-profile" "$stitch" "$out.shards" "$shards"
  for a in "$@"; do printf ' %q' "$a"; done
  echo
} > "$job"
chmod +x "$job"
echo "slurm_profile: sbatch --wait --array=0-$((shards - 1)) --cpus-per-task=1 $job"
sbatch --wait --parsable --job-name=zoo-profile --array="0-$((shards - 1))" --cpus-per-task=1 \
  --output="$out.shards/logs/%a.out" "$job"
dirs=()
for ((k = 0; k < shards; k++)); do dirs+=("$out.shards/s$k"); done
"$bin/zoo-profile" --merge "${dirs[@]}" -o "$out"
