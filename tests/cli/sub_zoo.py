"""A zoo of some of a testdata zoo's tasks, for a suite that plans them alone:
writes OUT/zoo.json with the tasks named (in the zoo's order), the zoo renamed, every
path made absolute so that it reads from OUT, and only the multitask groups whose
members are all kept.

  sub_zoo.py SRC_ZOO_DIR OUT_DIR NAME TASK...
"""
import json
import os
import sys

src, out, name, keep = sys.argv[1], sys.argv[2], sys.argv[3], set(sys.argv[4:])
zoo = json.load(open(os.path.join(src, "zoo.json")))
zoo["name"] = name
zoo["tasks"] = [t for t in zoo["tasks"] if t["name"] in keep]
missing = keep - {t["name"] for t in zoo["tasks"]}
if missing:
    sys.exit(f"{src}/zoo.json: no task {sorted(missing)}")
for t in zoo["tasks"]:
    for v in t["variants"]:
        v["onnx"] = os.path.join(src, v["onnx"])
    for k in ("inputs", "labels", "calibration"):
        t["dataset"][k] = os.path.join(src, t["dataset"][k])
groups = [g for g in zoo.get("multitask_groups", []) if set(g["members"]) <= keep]
if groups:
    zoo["multitask_groups"] = groups
else:
    zoo.pop("multitask_groups", None)
json.dump(zoo, open(os.path.join(out, "zoo.json"), "w"), indent=1)
