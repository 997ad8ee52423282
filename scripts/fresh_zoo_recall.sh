#!/usr/bin/env bash
# Held-out check of zoo-profile's accuracy estimator: makes fresh digits and
# multitask zoos with other seeds and pruning levels (scripts/make_testdata.py
# --fresh SEED), stitches and profiles each (zoo-stitch, zoo-profile with its
# defaults), and prints per task the tie-aware top-10 recall and Spearman of the
# estimator beside the feature-only estimator and the mean-of-sources baseline
# (report.json: tasks[].accuracy_estimator).
#
#   scripts/fresh_zoo_recall.sh OUT_DIR SEED [SEED ...]
set -euo pipefail
if [ $# -lt 2 ]; then echo "usage: $0 OUT_DIR SEED [SEED ...]" >&2; exit 2; fi
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/build/bin"
out="$1"; shift
mkdir -p "$out"
for seed in "$@"; do
  zoos="$out/fresh$seed"
  if [ ! -f "$zoos/multitask/zoo.json" ]; then
    /usr/bin/python3 "$root/scripts/make_testdata.py" --fresh "$seed" --out "$zoos" > "$out/fresh$seed.make.log" 2>&1 \
      || { echo "make_testdata.py --fresh $seed failed: see $out/fresh$seed.make.log" >&2; exit 1; }
  fi
  for zoo in digits multitask; do
    "$bin/zoo-stitch" "$zoos/$zoo/zoo.json" -o "$zoos/$zoo.stitch" > "$zoos/$zoo.stitch.log" 2>&1
    "$bin/zoo-profile" "$zoos/$zoo.stitch" -o "$zoos/$zoo.profile" > "$zoos/$zoo.profile.log" 2>&1
  done
done
/usr/bin/python3 - "$out" "$@" <<'PYEOF'
import json, os, sys
out, seeds = sys.argv[1], sys.argv[2:]
print(f"{'zoo':<18} {'task':<14} {'variants':>8} {'top10':>6} {'composed':>8} {'features':>8} {'mean-src':>8} "
      f"{'spearman':>8} {'mean-src':>8} {'runs/exh':>8}")
worst = 1.0
for seed in seeds:
    for zoo in ("digits", "multitask"):
        report = json.load(open(os.path.join(out, f"fresh{seed}", f"{zoo}.profile", "report.json")))
        for t in report["tasks"]:
            a = t["accuracy_estimator"]
            worst = min(worst, a["top10_recall_tie_aware"])
            alone = a.get("composed_alone", {}).get("top10_recall_tie_aware", float("nan"))
            print(f"{'fresh' + seed + '/' + zoo:<18} {t['name']:<14} {t['valid_combinations']:>8} {a['top10_recall_tie_aware']:>6.2f} "
                  f"{alone:>8.2f} "
                  f"{a['feature_estimator']['top10_recall_tie_aware']:>8.2f} "
                  f"{a['mean_source_accuracy_baseline']['top10_recall_tie_aware']:>8.2f} {a['spearman']:>8.3f} "
                  f"{a['mean_source_accuracy_baseline']['spearman']:>8.3f} "
                  f"{t['contested_samples']['fraction_of_exhaustive']:>8.3f}")
print(f"lowest tie-aware top-10 recall: {worst:.2f} (target 0.95)")
PYEOF
