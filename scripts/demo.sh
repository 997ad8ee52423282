#!/usr/bin/env bash
# The README's main command: bootstrap, build, then run the pipeline on the
# bundled zoos and print a summary. Outputs go to out/ (override with $1).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out}"
bash scripts/bootstrap.sh
bash scripts/build.sh >/dev/null
bin=build/bin

for zoo in digits multitask; do
  echo
  echo "== zoo-stitch testdata/$zoo/zoo.json -> $out/$zoo/stitch"
  "$bin/zoo-stitch" "testdata/$zoo/zoo.json" -o "$out/$zoo/stitch" --materialize all
done
echo
echo "outputs under $out/: stitch.json, subgraphs/ and stitched/ per zoo"
