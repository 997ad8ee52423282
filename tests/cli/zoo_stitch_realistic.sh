#!/usr/bin/env bash
# zoo-stitch on the realistic-scale zoo: every task has the variant kinds the
# planner needs, every combination of its variants stitches (all variants share
# node names and cut points) at two and at three positions, and stitched
# variants mixing pruning kinds equal their subgraphs in ONNX Runtime.
source "$(dirname "$0")/lib.sh"
Z="$SRC/testdata/realistic/zoo.json"
for s in 2 3; do
  mix="resnet/s50+int8,mobilenet/u90+s25,vit/int8+s50"
  [ "$s" -eq 3 ] && mix="resnet/u90+s50+int8,mobilenet/s50+int8+u75,vit/s25+u90+dense"
  "$BIN/zoo-stitch" "$Z" -o "$WORK/s$s" --subgraphs "$s" --materialize "$mix" >/dev/null
  if $PY - "$WORK/s$s" "$s" <<'PYEOF'
import json, os, sys
m = json.load(open(os.path.join(sys.argv[1], "stitch.json")))
s = int(sys.argv[2])
assert [t["name"] for t in m["tasks"]] == ["resnet", "mobilenet", "vit"], [t["name"] for t in m["tasks"]]
for t in m["tasks"]:
    kinds = [v["kind"] for v in t["variants"]]
    assert len(kinds) >= 6 and kinds[0] == "dense", (t["name"], kinds)
    assert kinds.count("unstructured") >= 3 and "structured" in kinds and "quantized" in kinds, (t["name"], kinds)
    assert len(t["positions"]) == s, (t["name"], len(t["positions"]))
    c = t["combinations"]
    assert c["total"] == len(kinds) ** s and len(c["valid"]) == c["total"] and not c["invalid"], (t["name"], c["invalid"])
    assert len(c["materialized"]) == 1, (t["name"], c["materialized"])
print(", ".join(f"{t['name']}: {len(t['combinations']['valid'])} valid" for t in m["tasks"]))
PYEOF
  then pass "$s positions: every combination of every task stitches"; else fail "$s positions: stitch.json"; fi
  if out="$(node "$SRC/tests/stitch/ort_equivalence.js" "$WORK/s$s" --samples 2)"; then
    pass "$s positions: ONNX Runtime equivalence: $out"
  else
    fail "$s positions: ONNX Runtime equivalence"
  fi
done
finish
