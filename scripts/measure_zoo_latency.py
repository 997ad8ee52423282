#!/usr/bin/python3
"""Measure the warm latency of every variant of a zoo on each of its host processors.

    /usr/bin/python3 scripts/measure_zoo_latency.py testdata/realistic [--plan-run build/bin/plan-run]
        [--core 1] [--repeat 50] [--rounds 3] [--out testdata/realistic/latency_measured.json]

For each task, variant and host processor (its kernel policy and threads from
zoo.json), runs `taskset -c CORE plan-run MODEL --kernels POLICY --threads N
--repeat R --json` ROUNDS times (separate processes, one after another) and
records each round's median and p90 and the median of the round medians. The
file names each model's SHA-256, so scripts/make_testdata.py can tell when a
figure no longer belongs to the model on disk. Timings depend on the machine
and on what else runs on it: the file records the CPU and the load average
before and after.
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def measure(plan_run, core, model, policy, threads, gemm, repeat):
    cmd = ["taskset", "-c", str(core), plan_run, model, "--kernels", policy, "--threads", str(threads),
           "--repeat", str(repeat), "--json"] + (["--gemm", gemm] if gemm else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"measure_zoo_latency: {model}: plan-run failed: {r.stderr.strip().splitlines()[-1:]}")
    rep = json.loads(r.stdout)
    return rep["warm"], rep["gemm_library"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("zoo_dir")
    ap.add_argument("--plan-run", default="build/bin/plan-run")
    ap.add_argument("--core", type=int, default=1, help="CPU core to pin to (taskset -c)")
    ap.add_argument("--repeat", type=int, default=50, help="timed runs per plan-run process")
    ap.add_argument("--rounds", type=int, default=3, help="plan-run processes per (variant, processor)")
    ap.add_argument("--out", help="default: ZOO_DIR/latency_measured.json")
    args = ap.parse_args()
    zoo_json = os.path.join(args.zoo_dir, "zoo.json")
    try:
        with open(zoo_json) as f:
            zoo = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"measure_zoo_latency: {zoo_json}: {e}")
    procs = [p for p in zoo["processors"] if p.get("profile", {}).get("source") == "host"]
    if not procs:
        sys.exit(f"measure_zoo_latency: {zoo_json}: no host processors")
    out_path = args.out or os.path.join(args.zoo_dir, "latency_measured.json")
    load_before = os.getloadavg()
    gemm = None
    tasks = []
    for t in zoo["tasks"]:
        rows = []
        for v in t["variants"]:
            model = os.path.join(args.zoo_dir, v["onnx"])
            per_proc = {}
            for p in procs:
                policy, threads = p["profile"].get("policy", "default"), p["profile"].get("threads", 1)
                proc_gemm = p["profile"].get("gemm")
                rounds = []
                for _ in range(args.rounds):
                    warm, gemm = measure(args.plan_run, args.core, model, policy, threads, proc_gemm, args.repeat)
                    rounds.append({"median_ms": round(warm["median_ms"], 4), "p90_ms": round(warm["p90_ms"], 4)})
                per_proc[p["name"]] = {"policy": policy, "threads": threads,
                                       "median_ms": round(statistics.median(r["median_ms"] for r in rounds), 4),
                                       "rounds": rounds}
            rows.append({"id": v["id"], "onnx": v["onnx"], "onnx_sha256": sha256(model), "processors": per_proc})
            print(f"{t['name']}/{v['id']}: " + ", ".join(f"{n} {r['median_ms']:.3f} ms" for n, r in per_proc.items()),
                  flush=True)
        tasks.append({"task": t["name"], "variants": rows})
    rec = {"zoo": zoo["name"], "made_by": "scripts/measure_zoo_latency.py",
           "command": f"taskset -c {args.core} plan-run MODEL --kernels POLICY --threads THREADS "
                      f"--repeat {args.repeat} --json (x{args.rounds} processes; median of the round medians)",
           "measured_at": time.strftime("%Y-%m-%d", time.gmtime()), "cpu": cpu_name(), "gemm_library": gemm,
           "load_average_before": [round(x, 2) for x in load_before],
           "load_average_after": [round(x, 2) for x in os.getloadavg()], "tasks": tasks}
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rec, f, indent=2)
        f.write("\n")
    os.replace(tmp, out_path)
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
