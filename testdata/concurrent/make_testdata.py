#!/usr/bin/env python3
"""Writes the concurrent-scheduling test inputs in this folder.

googlenet-table2-*.json: the ten GoogleNet layer groups of HaX-CoNN Table 2
(the HaX-CoNN paper, "Table 2. Execution (E) and
transition (T) time of layer groups in GoogleNet"), values AS PRINTED:
GPU ms, DLA ms, transition G->D ms (taken as the GPU group's transition-out),
transition D->G ms (the DLA group's transition-out), memory throughput % (GPU).
The paper prints memory throughput for the GPU only; the DLA figure here is
DERIVED, not printed: the same traffic spread over the DLA's longer time,
GPU% * t_GPU / t_DLA (the paper's §3.3 step 3 derives the DLA throughput from
the GPU's by an EMC-utilisation ratio it does not print).

contention-illustrative.csv: an ILLUSTRATIVE PCCS-shaped contention surface,
not measured on any SoC and not from any paper:
slowdown = 1 + k * (own/100) * min(ext, 120)/100, k = 0.6 (GPU), 0.35 (DLA).

Run: python3 testdata/concurrent/make_testdata.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# (group, GPU ms, DLA ms, D/G ratio, T G->D ms, T D->G ms, memory thr %) -- Table 2 as printed.
TABLE2 = [
    ("0-9", 0.45, 0.75, 1.65, 0.056, 0.15, 41.97),
    ("10-24", 0.19, 0.34, 1.80, 0.075, 0.13, 62.21),
    ("25-38", 0.31, 0.45, 1.44, 0.062, 0.08, 78.49),
    ("39-52", 0.18, 0.37, 2.02, 0.011, 0.03, 53.41),
    ("53-66", 0.16, 0.31, 1.98, 0.055, 0.03, 55.70),
    ("67-80", 0.17, 0.33, 1.96, 0.024, 0.04, 59.24),
    ("81-94", 0.21, 0.31, 1.50, 0.058, 0.05, 62.60),
    ("95-109", 0.25, 0.35, 1.40, 0.030, 0.06, 76.12),
    ("110-123", 0.16, 0.27, 1.66, 0.024, 0.07, 66.95),
    ("124-140", 0.24, 0.36, 1.49, 0.007, 0.05, 47.96),
]


def groups():
    out = []
    for name, g, d, _ratio, g2d, d2g, thr in TABLE2:
        out.append({
            "name": name,
            "timeMs": {"GPU": g, "DLA": d},
            "transitionOutMs": {"GPU": g2d, "DLA": d2g},
            "memThroughput": {"GPU": thr, "DLA": round(thr * g / d, 2)},
        })
    return out


def write(name, doc):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")


SOURCE = ("GoogleNet layer groups from HaX-CoNN Table 2 (Dagli & Belviranli, PPoPP'24), as printed; "
          "DLA memory throughput derived (GPU% * tGPU/tDLA); contention surface illustrative")

write("googlenet-table2-scenario1.json", {
    "version": 1,
    "name": "googlenet-scenario1",
    "source": SOURCE + "; scenario 1 (HaX-CoNN §5.1): two instances on consecutive images, max throughput",
    "accelerators": ["GPU", "DLA"],
    "contention": "contention-illustrative.csv",
    "objective": "throughput",
    "dnns": [{"name": "googlenet", "instances": 2, "groups": groups()}],
})
write("googlenet-table2-pipeline.json", {
    "version": 1,
    "name": "googlenet-pipeline",
    "source": SOURCE + "; scenario 4 shape: a -> b pipeline beside an independent c, min latency",
    "accelerators": ["GPU", "DLA"],
    "contention": "contention-illustrative.csv",
    "objective": "latency",
    "dnns": [
        {"name": "a", "groups": groups()[:5]},
        {"name": "b", "dependsOn": ["a"], "groups": groups()[5:]},
        {"name": "c", "groups": groups()},
    ],
})

with open(os.path.join(HERE, "contention-illustrative.csv"), "w") as f:
    f.write("# ILLUSTRATIVE, not measured: slowdown = 1 + k*(own/100)*min(ext,120)/100, k GPU 0.6, DLA 0.35\n")
    f.write("accelerator,own_demand,external_demand,slowdown\n")
    for acc, k in (("GPU", 0.6), ("DLA", 0.35)):
        for own in (0, 25, 50, 75, 100):
            for ext in (0, 30, 60, 90, 120, 200):
                f.write(f"{acc},{own},{ext},{1 + k * (own / 100) * min(ext, 120) / 100:.6f}\n")
