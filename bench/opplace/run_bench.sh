#!/usr/bin/env bash
# ninja bench-opplace: PYTHON BIN_DIR BENCH SOURCE_DIR OUT_DIR.
# Exports the placed models (GoogLeNet, Inception-v3-style, SqueezeNet, ResNet-18,
# 90%-pruned ResNet-18), the torchvision training set of the latency predictor and
# its operator sweep (seeded random single-operator configurations),
# stitches the realistic zoo and takes one stitched variant, then runs bench_opplace
# pinned to this host's cores 0 and 1. Exported models and the node profile are
# kept in OUT_DIR and reused (run bench_opplace itself with --remeasure to profile again).
set -euo pipefail
PY="$1"; BIN="$2"; BENCH="$3"; SRC="$4"; OUT="$5"
mkdir -p "$OUT"
"$PY" "$SRC/bench/opplace/export_bench_models.py" --work-dir "$OUT/models"
"$PY" "$SRC/bench/opplace/export_models.py" --work-dir "$OUT/train_models"
"$PY" "$SRC/bench/opplace/export_sweep_models.py" --work-dir "$OUT/sweep_models" --seed 0
if [ ! -f "$OUT/realistic_stitch/stitch.json" ]; then
  "$BIN/zoo-stitch" "$SRC/testdata/realistic/zoo.json" -o "$OUT/realistic_stitch" --materialize resnet/u90+dense >/dev/null
fi
STITCHED="$(ls "$OUT"/realistic_stitch/stitched/resnet/*.onnx | head -1)"
cp "$STITCHED" "$OUT/models/realistic_resnet_$(basename "$STITCHED" .onnx | tr '+' '_').onnx"
"$BENCH" --models "$OUT"/models/*.onnx --train-models "$OUT"/train_models/*.onnx \
  --sweep-models "$OUT"/sweep_models/sweep_0_*.onnx --out "$OUT" "${@:6}"
