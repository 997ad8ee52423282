"""The deployment zoo (testdata/deployment), called from scripts/make_testdata.py.

A zoo in which each of five planning techniques has something to decide, on
the two host processors of the other zoos (cpu: default kernels with oneDNN on
core 0; npu: sparse kernels with BLIS on core 1):

* scene (stitching, SparseLoom): a ResNet style CNN on sklearn digits resized
  in the model to 32x32 (realistic.py's ResNet and recipe at another size),
  with variants dense, u50, u80 (gradual global LAMP pruning with masked
  fine-tuning), s50 (block-internal channels removed, the next conv re-fitted)
  and int8 (QDQ weights); identical node names, cut points at block outputs.
* attrs (weight-shared multitask group, MTS): four heads on one frozen digits
  backbone (mts.py's recipe for digit10, parity, gt4, loops on the digits
  zoo's residual CNN), all reading the same images.
* branchy (operator placement, SparOA): an Inception style CNN, digits resized
  in the model to 40x40, three blocks of three parallel branches (1x1 reduce,
  then a 3x3, 5x5 or 7x7 conv of about equal cost) concatenated.
* track (concurrent execution): a tiny CNN on the same 8x8 frames (three
  3x3 convs, GAP, Gemm) that runs after branchy on each frame.
* rare (cold start under a memory budget): a wide MLP on breast_cancer
  (30 -> 640 -> 640 -> 640 -> 2, about 3.4 MB of float32 weights).

Everything is trained single-threaded with fixed seeds; each model is checked
against the numpy ONNX reference of testdata/common.py (extended here by
Concat for branchy) and, when available, ONNX Runtime.
"""

import contextlib
import copy
import json
import os
import types

import numpy as np
import torch
import torch.nn as nn
from onnx import helper

from testdata import mts, realistic
from testdata.common import (CALIB_SAMPLES, IR_VERSIONS, PROCESSORS, check_zoo_json, export_onnx, load_task_data, log,
                             metadata_for, ort_eval, run_onnx_numpy, setup_determinism, top1, torch_logits, train,
                             write_json)

ZOO = "deployment"
DESCRIPTION = ("Deployment zoo: one model per planning technique on the cpu/npu host processors. scene: ResNet style "
               "CNN on digits resized to 32x32 with dense, unstructured (50/80%), structured (50%) and INT8 variants "
               "(stitching); attrs: four weight-shared heads on one frozen digits CNN (MTS); branchy: Inception style "
               "CNN with three parallel branches per block (operator placement); track: tiny CNN run after branchy on "
               "each frame (concurrent execution); rare: wide breast_cancer MLP of 3.4 MB (cold start under a memory "
               "budget).")
NUMPY_CHUNK = 50

# --------------------------------------------------------------------------
# configuration

SCENE = dict(
    seed=31, arch={"kind": "resnet", "size": 32, "stem": 16, "stages": [[16, 2], [32, 2], [64, 2]]},
    train={"epochs": 8, "lr": 2e-3, "batch": 32}, finetune={"epochs": 2, "lr": 5e-4, "batch": 32},
    unstructured=[0.5, 0.8], structured=[0.5],
    description="scene: handwritten digits, input [1,1,8,8] in [0,1] resized in the model to 32x32; ResNet style CNN "
                "(stem + 6 basic blocks, 16/32/64 channels, GAP, Gemm); stitchable variants")

ATTRS = dict(seed=41, stem=16, widths=(16, 32, 32), tasks=["digit10", "parity", "gt4", "loops"])

# (stride, [(reduce width, output width, kernel) per branch]); each branch: 1x1 conv cin->reduce +BN+ReLU,
# kxk conv (stride) reduce->out +BN+ReLU; reduce x kernel^2 is about equal (288, 300, 294) so the branches cost alike.
BRANCHY = dict(
    seed=51, size=40, stem=16,
    blocks=[(1, [(32, 32, 3), (12, 32, 5), (6, 32, 7)]),
            (2, [(32, 48, 3), (12, 48, 5), (6, 48, 7)]),
            (1, [(32, 48, 3), (12, 48, 5), (6, 48, 7)])],
    train={"epochs": 8, "lr": 2e-3, "batch": 32})

TRACK = dict(seed=61, convs=[(32, 1), (64, 1), (64, 2)], train={"epochs": 30, "lr": 2e-3, "batch": 32})

RARE = dict(seed=71, hidden=(640, 640, 640), train={"epochs": 40, "lr": 5e-4, "batch": 32})

DESCRIPTIONS = {
    "digit10": "attrs: digit class (10), the shared backbone itself",
    "parity": "attrs: digit parity; last residual block and head fine-tuned on the frozen backbone",
    "gt4": "attrs: digit > 4; new head on the frozen backbone",
    "loops": "attrs: digit has a closed loop (0, 6, 8, 9); last two residual blocks and head fine-tuned",
    "branchy": "branchy: handwritten digits, input [1,1,8,8] in [0,1] resized in the model to 40x40; Inception style "
               "CNN (stem, 3 blocks of 3 parallel branches 1x1 reduce -> 3x3 / 5x5 / 7x7 conv, concatenated; GAP, "
               "Gemm)",
    "track": "track: handwritten digits, input [1,1,8,8]; tiny CNN (Conv3x3 1->32, 32->64, 64->64 stride 2, each "
             "+BN+ReLU; GAP, Gemm) at 8x8, run after branchy on each frame",
    "rare": "rare: breast cancer diagnosis (2 classes), input [1,30] raw features, standardization in the model; "
            "wide MLP 30 -> 640 -> 640 -> 640 -> 2 (3.4 MB of weights), rarely queried",
}

ROLES = {"scene": "stitching", "branchy": "operator placement", "track": "concurrent (after branchy)",
         "rare": "cold start, memory budget"}

# --------------------------------------------------------------------------
# models


class ConvBNReLU(nn.Module):
    def __init__(self, cin, cout, k, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


class Branch(nn.Module):
    """1x1 reduce conv, then a kxk conv (with the block's stride)."""

    def __init__(self, cin, reduce, cout, k, stride):
        super().__init__()
        self.reduce = ConvBNReLU(cin, reduce, 1)
        self.conv = ConvBNReLU(reduce, cout, k, stride)

    def forward(self, x):
        return self.conv(self.reduce(x))


class InceptionBlock(nn.Module):
    """Parallel branches on one input, concatenated along channels (node /blockN/Concat)."""

    def __init__(self, cin, stride, branches):
        super().__init__()
        for i, (r, w, k) in enumerate(branches):
            setattr(self, f"branch{i + 1}", Branch(cin, r, w, k, stride))
        self.nbranches = len(branches)
        self.cout = sum(w for _, w, _ in branches)

    def forward(self, x):
        return torch.cat([getattr(self, f"branch{i + 1}")(x) for i in range(self.nbranches)], dim=1)


class Branchy(nn.Module):
    def __init__(self, size, stem, blocks, classes=10):
        super().__init__()
        self.arch = {"kind": "inception", "size": size, "stem": stem,
                     "blocks": [[s, [list(b) for b in br]] for s, br in blocks], "classes": classes}
        self.upsample = realistic.Upsample(8, size)
        self.stem = ConvBNReLU(1, stem, 3)
        cin = stem
        for i, (stride, branches) in enumerate(blocks):
            blk = InceptionBlock(cin, stride, branches)
            setattr(self, f"block{i + 1}", blk)
            cin = blk.cout
        self.nblocks = len(blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.stem(self.upsample(x))
        for i in range(self.nblocks):
            x = getattr(self, f"block{i + 1}")(x)
        return self.fc(self.flatten(self.pool(x)))


class TinyCNN(nn.Module):
    """conv1..convN (3x3 +BN+ReLU, (width, stride) each) at the input's 8x8, GAP, Flatten, Gemm."""

    def __init__(self, convs, classes=10):
        super().__init__()
        self.arch = {"kind": "tinycnn", "convs": [list(c) for c in convs], "classes": classes}
        cin = 1
        for i, (w, s) in enumerate(convs):
            setattr(self, f"conv{i + 1}", ConvBNReLU(cin, w, 3, s))
            cin = w
        self.nconvs = len(convs)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        for i in range(self.nconvs):
            x = getattr(self, f"conv{i + 1}")(x)
        return self.fc(self.flatten(self.pool(x)))


class MLP(nn.Module):
    """norm (Sub, Div), fc1 ReLU, ..., head."""

    def __init__(self, features, hidden, classes, norm):
        super().__init__()
        self.arch = {"kind": "mlp", "features": features, "hidden": list(hidden), "classes": classes}
        self.norm = norm
        cin = features
        for i, h in enumerate(hidden):
            setattr(self, f"fc{i + 1}", nn.Linear(cin, h))
            setattr(self, f"relu{i + 1}", nn.ReLU())
            cin = h
        self.nlayers = len(hidden)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.norm(x)
        for i in range(self.nlayers):
            x = getattr(self, f"relu{i + 1}")(getattr(self, f"fc{i + 1}")(x))
        return self.head(x)


# --------------------------------------------------------------------------
# numpy reference with Concat


def run_onnx_numpy_concat(m, feeds):
    """common.run_onnx_numpy extended by Concat: every run of other nodes goes to
    it, each Concat is np.concatenate. Returns the graph outputs."""
    env = dict(feeds)
    run = []

    def flush():
        if run:
            g = types.SimpleNamespace(initializer=m.graph.initializer, node=list(run), output=[])
            outs = [n.output[0] for n in run]
            env.update(zip(outs, run_onnx_numpy(types.SimpleNamespace(graph=g), env, want=outs)))
            run.clear()

    for n in m.graph.node:
        if n.op_type == "Concat":
            flush()
            axis = {a.name: helper.get_attribute_value(a) for a in n.attribute}["axis"]
            env[n.output[0]] = np.concatenate([env[i] for i in n.input], axis=axis)
        else:
            run.append(n)
    flush()
    return [env[o.name] for o in m.graph.output]


def numpy_logits(m, x):
    return np.concatenate([run_onnx_numpy_concat(m, {"input": x[i:i + NUMPY_CHUNK]})[0]
                           for i in range(0, len(x), NUMPY_CHUNK)])


# --------------------------------------------------------------------------
# single-variant tasks


def finish(zoo_dir, task, model, shape, xte, yte, dataset, how, use_ort, tmpdir, extra=None):
    """Export `model` as the task's one dense variant, check it against the numpy
    reference (and ORT), write it. Returns (zoo.json task entry, accuracy record)."""
    m = export_onnx(model, shape, f"{ZOO}_{task}", metadata_for(ZOO, task, "dense", "dense", json.dumps(how, sort_keys=True)
                                                                if not isinstance(how, str) else how))
    rel = f"models/{task}/dense.onnx"
    path = os.path.join(zoo_dir, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    logits = torch_logits(model, xte)
    ref = numpy_logits(m, xte)
    diff = float(np.max(np.abs(ref - logits)))
    agree = float(np.mean(np.argmax(ref, 1) == np.argmax(logits, 1)))
    tol = 1e-3
    if diff > tol * max(1.0, float(np.max(np.abs(logits)))) or agree < 1.0:
        raise SystemExit(f"make_testdata: {ZOO}/{task}: ONNX (numpy reference) differs from torch: "
                         f"max |diff| {diff:.3g}, argmax agreement {agree:.4f}")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    IR_VERSIONS.add(m.ir_version)
    acc = top1(logits, yte)
    r = {"id": "dense", "kind": "dense", "precision": "fp32", "sparsity": 0.0, "onnx_bytes": os.path.getsize(path),
         "top1_torch": round(acc, 6), "top1_onnx_numpy": round(top1(ref, yte), 6),
         "top1_ort": None, "ort_logits_close_to_torch": None,
         "how": how if isinstance(how, str) else json.dumps(how, sort_keys=True)}
    if use_ort:
        res, ort_logits = ort_eval(path, os.path.join(zoo_dir, dataset["inputs"]),
                                   os.path.join(zoo_dir, dataset["labels"]), tmpdir)
        r["top1_ort"] = round(res["top1"], 6)
        r["ort_logits_close_to_torch"] = bool(np.allclose(ort_logits, logits, atol=tol, rtol=tol))
    ort = "skipped" if r["top1_ort"] is None else f"{r['top1_ort']:.4f}"
    log(f"  {task}/dense: torch {r['top1_torch']:.4f}  onnx-numpy {r['top1_onnx_numpy']:.4f}  ORT {ort}")
    rec = {"task": task, "test_samples": int(len(yte)), "architecture": getattr(model, "arch", None),
           "parameters": int(sum(p.numel() for p in model.parameters())), "variants": [r]}
    rec.update(extra or {})
    entry = {"name": task, "description": DESCRIPTIONS[task],
             "variants": [{"id": "dense", "onnx": rel, "kind": "dense", "sparsity": 0.0, "precision": "fp32",
                           "accuracy": round(acc, 6)}],
             "dataset": dict(dataset, metric="top1")}
    return entry, rec


def train_how(cfg):
    tr = cfg["train"]
    return (f"trained from scratch: Adam lr={tr['lr']} (cosine), weight_decay=1e-4, {tr['epochs']} epochs, "
            f"batch {tr['batch']}, seed {cfg['seed']}")


# --------------------------------------------------------------------------
# tasks


@contextlib.contextmanager
def _zoo_name_in_realistic():
    """realistic.make_variants names graphs and metadata after realistic.ZOO."""
    old = realistic.ZOO
    realistic.ZOO = ZOO
    try:
        yield
    finally:
        realistic.ZOO = old


def build_scene(zoo_dir, data, use_ort, tmpdir):
    with _zoo_name_in_realistic():
        entry, rec = realistic.build_task(zoo_dir, "scene", SCENE, data, use_ort, tmpdir)
    for v, r in zip(entry["variants"], rec["variants"]):
        v["accuracy"] = r["top1_torch"]
    return entry, rec


def build_attrs(mt, zoo_dir, data, use_ort, tmpdir):
    """mts.py's digits recipe for ATTRS['tasks'] on the digits zoo's CNN: backbone
    trained on digit10, the others fine-tuned from it with frozen elements
    bit-identical."""
    xtr, xte, ytr, yte, rel = data
    cfg = ATTRS
    setup_determinism()
    torch.manual_seed(cfg["seed"])
    backbone = mt.DigitsCNN(stem=cfg["stem"], widths=cfg["widths"], classes=10)
    log(f"{ZOO}/attrs: training backbone {backbone.arch}")
    train(backbone, xtr, ytr, seed=cfg["seed"], **mts.BACKBONE_TRAIN)
    recipe = {t[0]: (k, t) for k, t in enumerate(mts.DIGIT_TASKS)}
    entries, recs = [], []
    for name in cfg["tasks"]:
        k, (_, classes, label, trained, widened) = recipe[name]
        assert not widened
        ytr_t, yte_t = label(ytr), label(yte)
        y_rel = f"data/{name}_test_y.npy"
        np.save(os.path.join(zoo_dir, y_rel), yte_t.astype(np.int64))
        if trained is None:
            model = backbone
        else:
            model = mt.DigitsCNN(stem=cfg["stem"], widths=cfg["widths"], classes=classes)
            mts.copy_backbone(model, backbone)
            if classes != 10:  # a new head: fresh seeded init
                torch.manual_seed(cfg["seed"] + 100 + k)
                model.fc = nn.Linear(model.fc.in_features, classes)
            masks = mts.frozen_masks(model, trained, {}, {})
            mts.finetune(model, masks, xtr, ytr_t, seed=cfg["seed"] + 200 + k, **mts.FINETUNE)
            mts.check_frozen(model, backbone, masks, name)
        how = {"group": "attrs", "trained": trained or "backbone",
               "recipe": "scripts/testdata/mts.py DIGIT_TASKS / BACKBONE_TRAIN / FINETUNE"}
        e, r = finish(zoo_dir, name, model, (1, 1, 8, 8), xte, yte_t,
                      {"inputs": rel["inputs"], "labels": y_rel, "calibration": rel["calibration"]}, how, use_ort, tmpdir,
                      {"train_samples": int(len(ytr)), "trained": trained or "backbone"})
        entries.append(e)
        recs.append(r)
    return entries, recs


def build_branchy(zoo_dir, data, use_ort, tmpdir):
    xtr, xte, ytr, yte, rel = data
    cfg = BRANCHY
    setup_determinism()
    torch.manual_seed(cfg["seed"])
    model = Branchy(cfg["size"], cfg["stem"], cfg["blocks"])
    log(f"{ZOO}/branchy: training {model.arch} ({sum(p.numel() for p in model.parameters())} parameters)")
    train(model, xtr, ytr, seed=cfg["seed"], name="branchy", log_every=1, **cfg["train"])
    return finish(zoo_dir, "branchy", model, (1, 1, 8, 8), xte, yte, rel, train_how(cfg), use_ort, tmpdir,
                  {"train_samples": int(len(ytr))})


def build_track(zoo_dir, data, use_ort, tmpdir):
    xtr, xte, ytr, yte, rel = data
    cfg = TRACK
    setup_determinism()
    torch.manual_seed(cfg["seed"])
    model = TinyCNN(cfg["convs"])
    log(f"{ZOO}/track: training {model.arch}")
    train(model, xtr, ytr, seed=cfg["seed"], **cfg["train"])
    return finish(zoo_dir, "track", model, (1, 1, 8, 8), xte, yte, rel, train_how(cfg), use_ort, tmpdir,
                  {"train_samples": int(len(ytr))})


def build_rare(mt, zoo_dir, use_ort, tmpdir):
    xtr, xte, ytr, yte = load_task_data("breast_cancer")
    rel = {"inputs": "data/breast_cancer_test_x.npy", "labels": "data/breast_cancer_test_y.npy",
           "calibration": "data/breast_cancer_calib_x.npy"}
    np.save(os.path.join(zoo_dir, rel["inputs"]), xte)
    np.save(os.path.join(zoo_dir, rel["labels"]), yte)
    np.save(os.path.join(zoo_dir, rel["calibration"]), np.ascontiguousarray(xtr[:CALIB_SAMPLES]))
    cfg = RARE
    setup_determinism()
    torch.manual_seed(cfg["seed"])
    std = xtr.std(axis=0)
    norm = mt.Standardize(xtr.mean(axis=0), np.where(std > 0, std, 1.0).astype(np.float32))
    model = MLP(xtr.shape[1], cfg["hidden"], 2, norm=norm)
    log(f"{ZOO}/rare: training {model.arch} ({sum(p.numel() for p in model.parameters())} parameters)")
    train(model, xtr, ytr, seed=cfg["seed"], **cfg["train"])
    return finish(zoo_dir, "rare", model, (1, xtr.shape[1]), xte, yte, rel, train_how(cfg), use_ort, tmpdir,
                  {"train_samples": int(len(ytr))})


# --------------------------------------------------------------------------
# zoo


def check_groups(z, zoo_dir):
    check_zoo_json({k: v for k, v in z.items() if k != "multitask_groups"}, zoo_dir)
    names = {t["name"] for t in z["tasks"]}
    for g in z["multitask_groups"]:
        assert set(g) <= {"name", "members", "shared", "shared_input", "memory_budget_bytes"}
        assert len(g["members"]) >= 2 and all(m in names for m in g["members"]), g


def readme(z, recs, use_ort):
    by_task = {r["task"]: r for r in recs}
    group = z["multitask_groups"][0]
    rows = []
    for t in z["tasks"]:
        r = by_task[t["name"]]
        for v in r["variants"]:
            ort = "-" if v["top1_ort"] is None else f"{v['top1_ort']:.4f}"
            role = "MTS (group attrs)" if t["name"] in group["members"] else ROLES[t["name"]]
            rows.append(f"| {t['name']} | {role} | {v['id']} | {v['kind']} | {v['sparsity']:.4f} | {r['parameters']} | "
                        f"{v['onnx_bytes'] / 1024:.0f} | {v['top1_torch']:.4f} | {v['top1_onnx_numpy']:.4f} | {ort} |")
    table = "\n".join(rows)
    blocks = "; ".join(f"block{i + 1} (stride {s}): " + ", ".join(f"1x1->{r}, {k}x{k}->{w}" for r, w, k in br)
                       for i, (s, br) in enumerate(BRANCHY["blocks"]))
    return f"""# testdata/deployment: one model per planning technique

Written by `scripts/make_testdata.py` (`--zoos deployment` runs only this zoo; code in
`scripts/testdata/deployment.py`); do not edit by hand. Re-running it rewrites byte-identical files
on the same machine and software (Debian's `/usr/bin/python3` with python3-torch, python3-onnx,
python3-sklearn, python3-numpy; training single-threaded, deterministic algorithms, fixed seeds;
nothing is downloaded).

Processors `cpu` and `npu` as in the other zoos (profile source `host`: kernel policy
default/sparse, GEMM oneDNN/BLIS, one thread each, pinned to cores 0/1). The tasks, and the
technique each one is there for:

* **scene** (stitching, SparseLoom): the ResNet of `realistic` (`scripts/testdata/realistic.py`,
  reused as is) at 32x32 instead of 64x64 and with 2 basic blocks per stage: the 8x8 digits are
  resized bilinearly in the model (`/upsample/MatMul`, `/upsample/MatMul_1`), stem
  Conv3x3(1->16)+BN+ReLU, 6 basic blocks (16/32/64 channels, stride 2 and 1x1 projection at the
  start of stages 2 and 3), GAP, Gemm. Variants as in the realistic zoo: `dense`; `u50`, `u80`
  gradual global LAMP pruning (u80 from u50) with {SCENE['finetune']['epochs']} masked fine-tuning epochs each; `s50`
  structured (half the conv1 channels of every block removed, conv2 re-fitted by ridge least
  squares, no training); `int8` (per-channel INT8 weights, QDQ). Node names are identical across
  variants; cut points are the block outputs `/block{{1..6}}/relu2/Relu_output_0` (and the stem's).
* **attrs** (MTS, `multitask_groups` entry `attrs`, `shared_input: true`): four tasks on the same
  images, made with `scripts/testdata/mts.py`'s recipe on the digits zoo's residual CNN (stem 16,
  blocks 16, 32 (stride 2), 32): `digit10` is the backbone (trained on the digit class), `gt4` a new
  head on it, `parity` fine-tunes block3 and the head, `loops` block2, block3 and the head; frozen
  elements stay bit-identical (asserted), so `zoo-mts` finds the shared layers by content. Inputs
  `data/digits_test_x.npy` (shared), labels `data/<task>_test_y.npy`.
* **branchy** (operator placement, SparOA): Inception style CNN: resize to {BRANCHY['size']}x{BRANCHY['size']}, stem
  Conv3x3(1->{BRANCHY['stem']})+BN+ReLU, three blocks of three parallel branches (each a 1x1 conv +BN+ReLU
  then a kxk conv +BN+ReLU; reduce width x k^2 about equal, so the branches cost about the same),
  concatenated (`/block{{1,2,3}}/Concat`): {blocks}; GAP, Gemm. The branches of a block can run on the
  two processors at once. Cut points include `/stem/relu/Relu_output_0`, `/block{{1,2,3}}/Concat_output_0`.
* **track** (concurrent execution): a tiny CNN on the same 8x8 frames, run after branchy on each
  frame: Conv3x3(1->32), Conv3x3(32->64), Conv3x3(64->64, stride 2), each +BN+ReLU; GAP, Gemm(->10).
  (An MLP 64 -> 512 -> 256 -> 10 took 0.017 ms on `cpu`; the convolutions bring it to about
  0.05-0.1 ms.)
* **rare** (cold start under a memory budget): `Sub`, `Div` (train-split standardization in the
  model; the .npy files hold raw features), Gemm(30->640)+ReLU, two Gemm(640->640)+ReLU,
  Gemm(->2): {by_task['rare']['parameters']} parameters, {by_task['rare']['variants'][0]['onnx_bytes'] / 1e6:.1f} MB on disk. Meant to stay out of a memory
  budget and be loaded cold when queried.

All models: ONNX opset 13, static batch 1, input `input`, output `logits`, exported with
`torch.onnx.export` (eval mode, `training=TrainingMode.PRESERVE`, no constant folding; BN stays
separate), node names from the torch module path, weight initializers named after the torch
parameters; every model passes `onnx.checker.check_model(full_check=True)`. Test split of every
dataset: `train_test_split(test_size=0.25, random_state=0, stratify=y)` (digits: 450 test / 1347
train; breast_cancer: 143 / 426). Calibration inputs (`*_calib_x.npy`: the first 64 training
samples) for every task (the attrs members share the digits ones).

| task | for | variant | kind | sparsity | params (dense) | file (KB) | top-1 torch | top-1 numpy ONNX | top-1 ORT |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
{table}

`torch`: the torch model (int8: with the dequantized weights); `numpy ONNX`: the exported file
run by the numpy ONNX interpreter of `scripts/testdata/common.py` (Concat added in
deployment.py); `ORT`: onnxruntime-node one sample at a time (`tests/ort/eval_accuracy.js`){'' if use_ort else ', not run when these files were made'}.
zoo.json records the torch value as each variant's `accuracy`; accuracy_measured.json has how
each model was made.

Latencies are not recorded here (they depend on the machine); measure them with
`build/bin/plan-run MODEL.onnx --repeat 20 [--kernels sparse --gemm blis]` or `zoo-profile`.
`slo.json` is the deployment's workload (schemas/slo.schema.json), written from `WORKLOAD` and
`WORKLOAD_SLOS` in deployment.py: two SLO configurations (`steady`: scene within 6 ms, `tight`:
within 3 ms; scene's accuracy floor 0.98 rules out s50; the attrs heads 0.95 within 5 ms; rare
0.9 within 250 ms), scene queried at 250 q/s, each attrs head at 40 q/s, rare at 0.5 q/s (Poisson),
camera frames every 15 ms running branchy then track (within 15 ms), and a memory budget of
6 MB: less than rare's 6.7 MB alone and less than the other tasks' chosen units together
(weights and their transformed copies), so units are loaded on demand under it; the four attrs
heads' own units (some 0.35 MB each) take more room than their group's one stitched unit
(some 0.8 MB), which answers all four.
"""


# The deployment's workload (slo.json, schemas/slo.schema.json): what plan-solve makes the plan
# for. Each technique has its part: scene's queries choose among stitched variants (its
# accuracy floor rules out s50); the four attrs heads are queried together at one rate; branchy
# and track run on camera frames, track after branchy; rare is queried rarely and is larger than
# what the memory budget leaves beside the others, so it is loaded on demand. Latency bounds are
# set from the warm latencies on the 2-core host the zoo was made on (scene 0.6-1.8 ms, attrs heads
# ~0.06 ms, branchy ~2.5 ms, track ~0.1 ms, rare 0.4 ms warm and 56-118 ms loaded cold).
ATTRS_FLOOR = 0.95
WORKLOAD_SLOS = [
    ("steady", {"scene": (0.98, 6.0), "branchy": (0.95, 15.0), "track": (0.95, 15.0), "rare": (0.9, 250.0)}),
    ("tight", {"scene": (0.98, 3.0), "branchy": (0.95, 15.0), "track": (0.95, 15.0), "rare": (0.9, 250.0)}),
]
WORKLOAD = {"process": "poisson",
            "rate_qps": {"scene": 250, "digit10": 40, "parity": 40, "gt4": 40, "loops": 40, "rare": 0.5},
            "frames": [{"name": "camera", "period_ms": 15, "latency_ms": 15, "dnns": ["branchy", "track"],
                        "depends_on": {"track": ["branchy"]}}],
            "memory_budget": 6000000}


def write_slo(zoo_dir):
    configs = []
    for cid, slos in WORKLOAD_SLOS:
        tasks = {t: {"accuracy": ATTRS_FLOOR, "latency_ms": 5.0} for t in ATTRS["tasks"]}
        tasks.update({t: {"accuracy": a, "latency_ms": l} for t, (a, l) in slos.items()})
        configs.append({"id": cid, "tasks": tasks})
    write_json(os.path.join(zoo_dir, "slo.json"),
               {"schema_version": 1, "configurations": configs, "workload": WORKLOAD})


def build(mt, out_root, use_ort, tmpdir):
    """Writes OUT_ROOT/deployment: zoo.json (tasks + multitask_groups), models/, data/,
    accuracy_measured.json, README.md. Returns the zoo.json object."""
    zoo_dir = os.path.join(out_root, ZOO)
    os.makedirs(os.path.join(zoo_dir, "models"), exist_ok=True)
    data = realistic.write_data(zoo_dir)  # digits split, shared by scene, attrs, branchy and track
    scene_e, scene_r = build_scene(zoo_dir, data, use_ort, tmpdir)
    attr_e, attr_r = build_attrs(mt, zoo_dir, data, use_ort, tmpdir)
    br_e, br_r = build_branchy(zoo_dir, data, use_ort, tmpdir)
    tr_e, tr_r = build_track(zoo_dir, data, use_ort, tmpdir)
    ra_e, ra_r = build_rare(mt, zoo_dir, use_ort, tmpdir)
    z = {"schema_version": 1, "name": ZOO, "description": DESCRIPTION,
         "processors": copy.deepcopy(PROCESSORS),
         "tasks": [scene_e] + attr_e + [br_e, tr_e, ra_e],
         "multitask_groups": [{"name": "attrs", "members": list(ATTRS["tasks"]), "shared": ["stem.conv.weight"],
                               "shared_input": True}]}
    check_groups(z, zoo_dir)
    recs = [scene_r] + attr_r + [br_r, tr_r, ra_r]
    write_json(os.path.join(zoo_dir, "zoo.json"), z)
    write_slo(zoo_dir)
    write_json(os.path.join(zoo_dir, "accuracy_measured.json"),
               {"zoo": ZOO, "made_by": "scripts/make_testdata.py (scripts/testdata/deployment.py)",
                "ort": "onnxruntime-node 1.30.0, 1 thread, graph optimization basic, batch 1" if use_ort else None,
                "tasks": recs})
    with open(os.path.join(zoo_dir, "README.md"), "w") as f:
        f.write(readme(z, recs, use_ort))
    return z
