#!/usr/bin/python3
"""Generate zooplan's test model zoos (testdata/digits, testdata/multitask, testdata/realistic, testdata/mts, testdata/deployment).

Run from the repository root with Debian's interpreter (it has torch, onnx,
sklearn and numpy as apt packages):

    /usr/bin/python3 scripts/make_testdata.py [--out testdata] [--ort auto|require|skip] [--zoos Z1,Z2] [--jobs N] [--readme-only]

(testdata/mts, the weight-shared multitask zoo, is scripts/testdata/mts.py's; testdata/deployment,
one model per planning technique, is scripts/testdata/deployment.py's.)

What it does, per task:
  * loads a dataset that ships inside scikit-learn (no download), makes a fixed
    stratified 75/25 train/test split (random_state=0);
  * trains a base model with torch (single thread, deterministic algorithms,
    fixed seeds): small CNNs and MLPs here, and in testdata/realistic.py
    ResNet-20, MobileNetV2 and ViT style models of milliseconds per inference;
  * derives variants: unstructured global magnitude pruning (one threshold over
    all Conv/Gemm weights, then a short fine-tune with the mask fixed),
    structured pruning of block-internal channels/units (no retraining; the
    next layer is re-fitted by least squares on the kept units), INT8 weight
    quantization in QDQ form (edited ONNX graph), and for the digits zoo also
    INT8 weights + activations (QDQ);
  * exports each variant to ONNX (opset 13, ir_version 7, batch 1, input
    "input", output "logits", node names identical across variants);
  * checks every model with onnx.checker, checks that a small numpy ONNX
    interpreter (testdata/common.py) reproduces the torch outputs, and (when
    tests/ort/node_modules holds onnxruntime-node) measures accuracy with ONNX
    Runtime too;
  * writes zoo.json (schemas/zoo.schema.json), the data as .npy,
    accuracy_measured.json per zoo, and testdata/README.md.

Re-running it rewrites byte-identical files on the same machine and software.
"""

import argparse
import copy
import glob
import json
import os
import random
import shutil
import sys
import tempfile

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

from testdata import realistic
from testdata.common import (CALIB_SAMPLES, IR_VERSION_MAX, IR_VERSIONS, OPSET, PROCESSORS,
                             BasicBlock, FakeQuantInputs, _lstsq_refit, apply_masks, check_zoo_json, export_onnx,
                             global_magnitude_masks, load_task_data, log, metadata_for, node_signature, onnx_weight_sparsity,
                             ort_available, ort_eval, prunable_modules, quantize_activations_qdq,
                             quantize_weights_qdq, run_onnx_numpy, setup_determinism, top1, torch_logits, train,
                             with_weights, write_json)

# --------------------------------------------------------------------------
# models


class Stem(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


class DigitsCNN(nn.Module):
    def __init__(self, stem=16, widths=(16, 32, 32), inner=None, classes=10):
        super().__init__()
        inner = list(widths) if inner is None else list(inner)
        self.arch = {"kind": "cnn", "stem": stem, "widths": list(widths), "inner": inner, "classes": classes}
        self.stem = Stem(1, stem)
        cin = stem
        for i, (w, e) in enumerate(zip(widths, inner)):
            stride = 2 if (i > 0 and w != cin) else 1
            setattr(self, f"block{i + 1}", BasicBlock(cin, e, w, stride))
            cin = w
        self.nblocks = len(widths)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(cin, classes)

    def blocks(self):
        return [getattr(self, f"block{i + 1}") for i in range(self.nblocks)]

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks():
            x = b(x)
        return self.fc(self.flatten(self.pool(x)))


class Standardize(nn.Module):
    """(x - mean) / std with train-split statistics: exported as Sub, Div."""

    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32).reshape(1, -1))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32).reshape(1, -1))

    def forward(self, x):
        return (x - self.mean) / self.std


class MLPBlock(nn.Module):
    """fc1 (width->inner) ReLU, fc2 (inner->width) ReLU: a residual-free
    bottleneck whose output width stays fixed; structured pruning shrinks inner."""

    def __init__(self, width, inner):
        super().__init__()
        self.fc1 = nn.Linear(width, inner)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(inner, width)
        self.relu2 = nn.ReLU()

    def forward(self, x):
        return self.relu2(self.fc2(self.relu1(self.fc1(x))))


class TabularMLP(nn.Module):
    def __init__(self, features, classes, width=32, inner=(64, 64, 64), mean=None, std=None):
        super().__init__()
        inner = list(inner)
        self.arch = {"kind": "mlp", "features": features, "classes": classes, "width": width, "inner": inner}
        if mean is None:
            mean, std = np.zeros(features, np.float32), np.ones(features, np.float32)
        self.norm = Standardize(mean, std)
        self.stem = nn.Linear(features, width)
        self.stem_relu = nn.ReLU()
        for i, e in enumerate(inner):
            setattr(self, f"block{i + 1}", MLPBlock(width, e))
        self.nblocks = len(inner)
        self.head = nn.Linear(width, classes)

    def blocks(self):
        return [getattr(self, f"block{i + 1}") for i in range(self.nblocks)]

    def forward(self, x):
        x = self.stem_relu(self.stem(self.norm(x)))
        for b in self.blocks():
            x = b(x)
        return self.head(x)


def clone_with_inner(model, inner):
    """A model of the same architecture with other block-internal widths."""
    a = model.arch
    if a["kind"] == "cnn":
        return DigitsCNN(a["stem"], a["widths"], inner, a["classes"])
    return TabularMLP(a["features"], a["classes"], a["width"], inner)


@torch.no_grad()
def block_inner_activations(model, x, block):
    """Post-ReLU activations of block.relu1 over x (eval mode)."""
    acts = []
    h = block.relu1.register_forward_hook(lambda mod, i, o: acts.append(o.detach().clone()))
    model.eval()
    model(torch.from_numpy(x))
    h.remove()
    return acts[0]


@torch.no_grad()
def structured_prune(model, fraction, x_train, refit=True, ridge=1e-3):
    """Remove `fraction` of the inner channels/units of every block.

    Per block (sequentially, so later blocks see the already pruned earlier
    ones): score each inner unit c by Var(a_c) * ||W2[:, c]||^2 (the output
    error of replacing it by its mean) and drop the lowest-scoring ones.
    Compensation in the next layer (fc2 / conv2), with no gradient training:
      * refit=False: fold the removed units' mean contribution (mean over
        training samples and positions of next_layer(a_removed)) into the next
        layer's bias;
      * refit=True: additionally re-fit the next layer's weights on the kept
        units by (ridge) least squares so that it reproduces the original
        next-layer output over the training set (channel-pruning
        reconstruction, He et al. 2017); its bias term generalizes the mean
        fold.
    The bias goes into the Gemm bias for MLPs and into the following
    BatchNormalization's running_mean for CNNs (conv2 has no bias; lowering
    running_mean by c equals adding bias c to conv2)."""
    model = copy.deepcopy(model).eval()
    info = []
    for bi in range(model.nblocks):
        block = model.blocks()[bi]
        a = block_inner_activations(model, x_train, block)  # [N, E] or [N, E, H, W]
        cnn = a.dim() == 4
        red = (0, 2, 3) if cnn else (0,)
        mean = a.mean(dim=red)
        var = ((a - mean.reshape((1, -1) + (1,) * (a.dim() - 2))) ** 2).mean(dim=red)
        w2 = (block.conv2.weight if cnn else block.fc2.weight).detach()
        wnorm = (w2 ** 2).sum(dim=tuple(d for d in range(w2.dim()) if d != 1))
        score = (var * wnorm).numpy()
        e = a.shape[1]
        n_remove = int(round(fraction * e))
        order = np.argsort(score, kind="stable")
        removed = np.sort(order[:n_remove])
        keep = np.sort(order[n_remove:])
        rm = torch.from_numpy(removed)
        kp = torch.from_numpy(keep)
        if refit:
            if cnn:
                target = F.conv2d(a, w2, None, 1, 1)                      # [N, O, H, W]
                o = target.shape[1]
                xs = F.unfold(a[:, kp], 3, padding=1)                     # [N, k*9, HW]
                xs = xs.permute(0, 2, 1).reshape(-1, xs.shape[1])
                ys = target.permute(0, 2, 3, 1).reshape(-1, o)
                wfit, bias = _lstsq_refit(xs, ys, ridge)
                new_w2 = wfit.T.reshape(o, len(keep), 3, 3).contiguous()
            else:
                target = a @ w2.T
                wfit, bias = _lstsq_refit(a[:, kp], target, ridge)
                new_w2 = wfit.T.contiguous()
        else:
            new_w2 = w2[:, kp]
            if cnn:
                bias = F.conv2d(a[:, rm], w2[:, rm], None, 1, 1).mean(dim=(0, 2, 3))
            else:
                bias = (a[:, rm] @ w2[:, rm].T).mean(dim=0)
        new_inner = list(model.arch["inner"])
        new_inner[bi] = len(keep)
        new_model = clone_with_inner(model, new_inner)
        sd = {k: v.clone() for k, v in model.state_dict().items()}
        p = f"block{bi + 1}."
        if cnn:
            sd[p + "conv1.weight"] = sd[p + "conv1.weight"][kp]
            for k in ("weight", "bias", "running_mean", "running_var"):
                sd[p + "bn1." + k] = sd[p + "bn1." + k][kp]
            sd[p + "conv2.weight"] = new_w2
            sd[p + "bn2.running_mean"] = sd[p + "bn2.running_mean"] - bias
        else:
            sd[p + "fc1.weight"] = sd[p + "fc1.weight"][kp]
            sd[p + "fc1.bias"] = sd[p + "fc1.bias"][kp]
            sd[p + "fc2.weight"] = new_w2
            sd[p + "fc2.bias"] = sd[p + "fc2.bias"] + bias
        new_model.load_state_dict(sd)
        model = new_model.eval()
        info.append({"block": f"block{bi + 1}", "inner_before": int(e), "inner_after": int(len(keep)),
                     "removed": [int(r) for r in removed]})
    return model, info


def build_task(zoo_dir, zoo, task, cfg, use_ort, tmpdir):
    """Train, derive variants, export, check. Returns (zoo.json task entry, accuracy record)."""
    xtr, xte, ytr, yte = load_task_data(task)
    is_cnn = cfg["model"] == "cnn"
    data_dir = os.path.join(zoo_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    prefix = "" if zoo == "digits" else task + "_"
    rel = {"inputs": f"data/{prefix}test_x.npy", "labels": f"data/{prefix}test_y.npy",
           "calibration": f"data/{prefix}calib_x.npy"}
    np.save(os.path.join(zoo_dir, rel["inputs"]), xte)
    np.save(os.path.join(zoo_dir, rel["labels"]), yte)
    calib = np.ascontiguousarray(xtr[:CALIB_SAMPLES])
    np.save(os.path.join(zoo_dir, rel["calibration"]), calib)
    input_shape = (1,) + xte.shape[1:]
    model_dir = os.path.join(zoo_dir, "models") if zoo == "digits" else os.path.join(zoo_dir, "models", task)
    os.makedirs(model_dir, exist_ok=True)
    model_rel_dir = os.path.relpath(model_dir, zoo_dir)

    setup_determinism()
    torch.manual_seed(cfg["seed"])
    if is_cnn:
        dense = DigitsCNN(cfg["stem"], cfg["widths"], None, int(ytr.max()) + 1)
    else:
        mean = xtr.mean(axis=0)
        std = xtr.std(axis=0)
        std = np.where(std > 0, std, 1.0).astype(np.float32)
        dense = TabularMLP(xtr.shape[1], int(ytr.max()) + 1, cfg["width"], cfg["inner"], mean, std)
    log(f"{zoo}/{task}: training dense {dense.arch} on {len(xtr)} samples")
    train(dense, xtr, ytr, **cfg["train"], seed=cfg["seed"])

    variants = []  # (id, kind, precision, onnx model, torch-equivalent logits fn, how, extra)

    def add(vid, kind, precision, m, logits, how, extra=None):
        variants.append({"id": vid, "kind": kind, "precision": precision, "model": m,
                         "logits": logits, "how": how, "extra": extra or {}})

    gname = f"{zoo}_{task}"
    how = (f"trained from scratch: Adam lr={cfg['train']['lr']} (cosine), weight_decay=1e-4, "
           f"{cfg['train']['epochs']} epochs, batch {cfg['train']['batch']}, seed {cfg['seed']}")
    m_dense = export_onnx(dense, input_shape, gname, metadata_for(zoo, task, "dense", "dense", how))
    add("dense", "dense", "fp32", m_dense, torch_logits(dense, xte), how)

    n_weights = sum(m.weight.numel() for _, m in prunable_modules(dense))
    # gradual magnitude pruning: each level starts from the previous level's
    # pruned + fine-tuned model (masks are nested), one global threshold each time
    prev, prev_id = dense, "dense"
    for frac in sorted(cfg["unstructured"]):
        vid = f"u{int(round(frac * 100))}"
        oneshot_model = copy.deepcopy(dense)
        apply_masks(oneshot_model, global_magnitude_masks(oneshot_model, frac)[0])
        oneshot = top1(torch_logits(oneshot_model, xte), yte)
        pm = copy.deepcopy(prev)
        masks, thr = global_magnitude_masks(pm, frac)
        apply_masks(pm, masks)
        before_ft = top1(torch_logits(pm, xte), yte)
        ft = cfg["finetune"]
        train(pm, xtr, ytr, **ft, seed=cfg["seed"] + 1000 + int(round(frac * 100)), masks=masks)
        apply_masks(pm, masks)
        how = (f"gradual global magnitude pruning from {prev_id}: one |w| threshold ({thr:.6g}) over all "
               f"{n_weights} Conv/Gemm weights zeroes {frac:.0%} of them; then fine-tune {ft['epochs']} epochs "
               f"with the mask fixed (Adam lr={ft['lr']} cosine, batch {ft['batch']})")
        m = export_onnx(pm, input_shape, gname, metadata_for(zoo, task, vid, "unstructured", how))
        add(vid, "unstructured", "fp32", m, torch_logits(pm, xte), how,
            {"pruned_from": prev_id, "threshold": thr, "accuracy_before_finetune": before_ft,
             "accuracy_oneshot_from_dense_no_finetune": oneshot})
        prev, prev_id = pm, vid

    for frac in cfg["structured"]:
        vid = f"s{int(round(frac * 100))}"
        sm, info = structured_prune(dense, frac, xtr, refit=True, ridge=STRUCT_RIDGE)
        meanfold = top1(torch_logits(structured_prune(dense, frac, xtr, refit=False)[0], xte), yte)
        n_after = sum(m.weight.numel() for _, m in prunable_modules(sm))
        how = (f"structured: removed {frac:.0%} of the inner channels/units of every block "
               f"(lowest Var(a)*||W_next||^2); next layer re-fit on the kept ones by ridge least squares "
               f"(ridge {STRUCT_RIDGE:g}) to reproduce its original output over the training set, bias into "
               f"{'BN running_mean' if is_cnn else 'the Gemm bias'}; no gradient training")
        m = export_onnx(sm, input_shape, gname, metadata_for(zoo, task, vid, "structured", how))
        add(vid, "structured", "fp32", m, torch_logits(sm, xte), how,
            {"blocks": [{k: v for k, v in b.items() if k != "removed"} for b in info],
             "weights_removed_fraction": 1.0 - n_after / n_weights,
             "accuracy_meanfold_only_no_refit": meanfold})

    how = ("INT8 weights in QDQ form: per-output-channel symmetric scale max|W|/127, int8 zero point 0, "
           "DequantizeLinear(axis=0) before each Conv/Gemm; activations fp32")
    m_int8, deq = quantize_weights_qdq(m_dense, gname, metadata_for(zoo, task, "int8", "quantized", how))
    q_model = with_weights(dense, deq)
    add("int8", "quantized", "int8", m_int8, torch_logits(q_model, xte), how)

    if cfg.get("int8a"):
        # calibration ranges of every Conv/Gemm data input, on the dense model
        tensors = sorted({n.input[0] for n in m_int8.graph.node if n.op_type in ("Conv", "Gemm")})
        vals = run_onnx_numpy(m_int8, {"input": calib}, want=tensors)
        ranges = {t: (float(v.min()), float(v.max())) for t, v in zip(tensors, vals)}
        how = ("INT8 weights (as int8) plus uint8 per-tensor asymmetric QuantizeLinear/DequantizeLinear on the "
               f"data input of every Conv/Gemm, ranges = min/max over the {len(calib)} calibration samples")
        m_a, qp = quantize_activations_qdq(m_int8, ranges, gname,
                                           metadata_for(zoo, task, "int8a", "quantized", how))
        node_by_name = {n.name: n for n in m_int8.graph.node}
        per_module = {}
        for name, mod in prunable_modules(q_model):
            op = "Conv" if isinstance(mod, nn.Conv2d) else "Gemm"
            per_module[name] = qp[node_by_name["/" + name.replace(".", "/") + "/" + op].input[0]]
        qa_model = copy.deepcopy(q_model)
        FakeQuantInputs(qa_model, per_module)
        add("int8a", "quantized", "int8", m_a, torch_logits(qa_model, xte), how)

    # ---- check, save, measure
    ref_sig = node_signature(m_dense)
    task_entry = {"name": task, "description": cfg["description"], "variants": [],
                  "dataset": {"inputs": rel["inputs"], "labels": rel["labels"],
                              "calibration": rel["calibration"], "metric": "top1"}}
    acc_rec = {"task": task, "test_samples": int(len(yte)), "train_samples": int(len(ytr)),
               "architecture": dense.arch, "variants": []}
    for v in variants:
        m = v["model"]
        assert m.ir_version <= IR_VERSION_MAX
        assert node_signature(m) == ref_sig, f"{task}/{v['id']}: node names differ from dense"
        onnx_logits = run_onnx_numpy(m, {"input": xte})[0]
        diff = float(np.max(np.abs(onnx_logits - v["logits"])))
        agree = float(np.mean(np.argmax(onnx_logits, 1) == np.argmax(v["logits"], 1)))
        tol = 1e-3 if v["id"] != "int8a" else 5e-2
        if diff > tol * max(1.0, float(np.max(np.abs(v["logits"])))) or (v["id"] != "int8a" and agree < 1.0):
            raise SystemExit(f"make_testdata: {task}/{v['id']}: ONNX (numpy reference) differs from torch: "
                             f"max |diff| {diff:.3g}, argmax agreement {agree:.4f}")
        path = os.path.join(model_dir, v["id"] + ".onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        sparsity = onnx_weight_sparsity(m)
        IR_VERSIONS.add(m.ir_version)
        rec = {"id": v["id"], "kind": v["kind"], "precision": v["precision"],
               "sparsity": round(sparsity, 6),
               "top1_torch": round(top1(v["logits"], yte), 6),
               "top1_onnx_numpy": round(top1(onnx_logits, yte), 6),
               "top1_ort": None, "ort_logits_close_to_torch": None,
               "how": v["how"]}
        for k, val in v["extra"].items():
            rec[k] = round(val, 6) if isinstance(val, float) else val
        if use_ort:
            res, ort_logits = ort_eval(path, os.path.join(zoo_dir, rel["inputs"]),
                                       os.path.join(zoo_dir, rel["labels"]), tmpdir)
            odiff = float(np.max(np.abs(ort_logits - v["logits"])))
            rec["top1_ort"] = round(res["top1"], 6)
            rec["ort_logits_close_to_torch"] = bool(np.allclose(ort_logits, v["logits"],
                                                                atol=tol, rtol=tol))
            log(f"  {task}/{v['id']}: torch {rec['top1_torch']:.4f}  onnx-numpy {rec['top1_onnx_numpy']:.4f}  "
                f"ORT {rec['top1_ort']:.4f}  sparsity {sparsity:.4f}  max|ORT-torch| {odiff:.2e}")
        else:
            log(f"  {task}/{v['id']}: torch {rec['top1_torch']:.4f}  onnx-numpy {rec['top1_onnx_numpy']:.4f}  "
                f"sparsity {sparsity:.4f}  (ORT skipped)")
        acc_rec["variants"].append(rec)
        task_entry["variants"].append({"id": v["id"], "onnx": f"{model_rel_dir}/{v['id']}.onnx",
                                       "kind": v["kind"], "sparsity": round(sparsity, 6),
                                       "precision": v["precision"]})
    return task_entry, acc_rec


# --------------------------------------------------------------------------
# configurations

CNN_TRAIN = {"epochs": 40, "lr": 2e-3, "batch": 32}
CNN_FT = {"epochs": 10, "lr": 5e-4, "batch": 32}
MLP_TRAIN = {"epochs": 150, "lr": 2e-3, "batch": 16}
MLP_FT = {"epochs": 40, "lr": 5e-4, "batch": 16}
STRUCT_RIDGE = 1e-3

ZOOS = {
    "digits": {
        "description": "sklearn digits (8x8 grayscale, 10 classes) on a small residual CNN: dense, global "
                       "unstructured magnitude pruning, structured block-internal channel pruning, INT8 QDQ.",
        "tasks": {
            "digits": {"model": "cnn", "stem": 16, "widths": [16, 32, 32], "seed": 1,
                       "train": CNN_TRAIN, "finetune": CNN_FT,
                       "unstructured": [0.5, 0.7, 0.9, 0.95], "structured": [0.25, 0.5], "int8a": True,
                       "description": "handwritten digit classification, input [1,1,8,8] in [0,1], "
                                      "residual CNN (stem + 3 residual blocks + GAP + Gemm)"},
        },
    },
    "multitask": {
        "description": "four small classifiers on sklearn-bundled datasets (digits CNN, wine/breast_cancer/iris "
                       "MLPs), each with dense, pruned and INT8 variants.",
        "tasks": {
            "digits": {"model": "cnn", "stem": 8, "widths": [8, 16, 16], "seed": 11,
                       "train": CNN_TRAIN, "finetune": CNN_FT,
                       "unstructured": [0.5, 0.8, 0.9], "structured": [0.25, 0.5],
                       "description": "digits, input [1,1,8,8] in [0,1], narrow residual CNN"},
            "wine": {"model": "mlp", "width": 32, "inner": [64, 64, 64], "seed": 12,
                     "train": MLP_TRAIN, "finetune": MLP_FT,
                     "unstructured": [0.5, 0.8, 0.9], "structured": [0.25, 0.5],
                     "description": "wine cultivar (3 classes), input [1,13] raw features, standardization "
                                    "baked into the model (Sub, Div), MLP with 3 bottleneck blocks"},
            "breast_cancer": {"model": "mlp", "width": 32, "inner": [64, 64, 64], "seed": 13,
                              "train": MLP_TRAIN, "finetune": MLP_FT,
                              "unstructured": [0.5, 0.8, 0.9], "structured": [0.25, 0.5],
                              "description": "breast cancer diagnosis (2 classes), input [1,30] raw features, "
                                             "standardization in the model, MLP with 3 bottleneck blocks"},
            "iris": {"model": "mlp", "width": 32, "inner": [64, 64, 64], "seed": 14,
                     "train": MLP_TRAIN, "finetune": MLP_FT,
                     "unstructured": [0.5, 0.8, 0.9], "structured": [0.25, 0.5],
                     "description": "iris species (3 classes), input [1,4] raw features, standardization "
                                    "in the model, MLP with 3 bottleneck blocks"},
        },
    },
}


# --------------------------------------------------------------------------
# README


def readme_text(results, ort_used, ir_versions, out):
    L = []
    L.append("# testdata\n")
    L.append("Real model zoos for zooplan's tests and demo: two small ones (`digits`, `multitask`; models of\n"
             "0.01-0.04 ms) for fast tests, and a realistic-scale one (`realistic`; models of milliseconds) for\n"
             "the demo; besides them `mts` (weight-shared task models, MTS input) and `deployment` (one model per\n"
             "planning technique: stitchable variants, a weight-shared group, a branchy CNN for operator\n"
             "placement, a small follower for concurrent execution, a large rarely queried MLP for cold start),\n"
             "each with its own README.md. Everything here is written by `scripts/make_testdata.py` (the realistic\n"
             "zoo's latency figures by `scripts/measure_zoo_latency.py`); do not edit by hand. Re-create with (from\n"
             "the repository root)\n")
    L.append("```\nnpm install --prefix tests/ort --ignore-scripts   # optional: ORT cross-check\n"
             "/usr/bin/python3 scripts/make_testdata.py [--zoos digits,multitask,realistic,mts,deployment] [--jobs 3]\n"
             "/usr/bin/python3 scripts/measure_zoo_latency.py testdata/realistic --plan-run build/bin/plan-run\n"
             "/usr/bin/python3 scripts/make_testdata.py --readme-only   # README with the new latencies\n```\n")
    L.append("`--zoos` rebuilds only the zoos named (the README takes the others' figures from their\n"
             "`accuracy_measured.json`). `--jobs 3` trains the realistic zoo's three tasks in three processes\n"
             "(each single-threaded and seeded from its own configuration alone, so the number of processes\n"
             "does not enter the files).\nThe realistic zoo takes " + realistic.README_TRAINING_TIME + ";\nthe small ones and `deployment` a few minutes.\n")
    L.append("Debian's `/usr/bin/python3` with the apt packages python3-torch, python3-onnx, python3-sklearn\n"
             "and python3-numpy. The datasets ship inside scikit-learn (nothing is downloaded). Training runs\n"
             "single-threaded with deterministic algorithms and fixed seeds, so a re-run rewrites byte-identical\n"
             "files on the same machine and software (another CPU or torch build may round differently).\n")
    L.append("## Layout\n")
    L.append("| path | what |\n| --- | --- |\n"
             "| `digits/zoo.json` | manifest (schemas/zoo.schema.json): processors cpu/npu (profile source `host`: kernel policy default/sparse, GEMM oneDNN/BLIS, one thread each, pinned to cores 0/1), task `digits` |\n"
             "| `digits/models/<id>.onnx` | the variants of the digits residual CNN |\n"
             "| `digits/data/test_x.npy`, `test_y.npy` | held-out test split: float32 [N,1,8,8] in [0,1], int64 [N] |\n"
             "| `digits/data/calib_x.npy` | calibration inputs: the first 64 training samples, float32 |\n"
             "| `digits/accuracy_measured.json` | accuracies measured by the script (torch, numpy ONNX reference, ORT) and how each variant was made |\n"
             "| `multitask/zoo.json` | manifest with tasks digits, wine, breast_cancer, iris |\n"
             "| `multitask/models/<task>/<id>.onnx` | the variants of each task's base model |\n"
             "| `multitask/data/<task>_test_x.npy`, `<task>_test_y.npy`, `<task>_calib_x.npy` | per task test split and calibration inputs |\n"
             "| `multitask/accuracy_measured.json` | as for digits |\n" + realistic.README_LAYOUT +
             "| `mts/` | weight-shared task models and their `multitask_groups` (`scripts/testdata/mts.py`; see `mts/README.md`) |\n"
             "| `deployment/zoo.json` | manifest with processors cpu/npu as above, tasks scene (dense/u50/u80/s50/int8), digit10, parity, gt4, loops (multitask group `attrs`, shared input), branchy, track, rare |\n"
             "| `deployment/models/<task>/<id>.onnx`, `deployment/data/*.npy`, `deployment/accuracy_measured.json` | its models, test splits and calibration inputs, accuracies (`scripts/testdata/deployment.py`; see `deployment/README.md`) |\n")
    L.append("## Models\n")
    L.append(f"All models: ONNX opset {OPSET}, ir_version {'/'.join(str(v) for v in ir_versions)}, static batch 1, one input `input` (float32) and one\n"
             "output `logits` (float32 [1, classes]). Exported with `torch.onnx.export` from an eval-mode model\n"
             "with `training=TrainingMode.PRESERVE` and no constant folding, so Conv, BatchNormalization and\n"
             "Relu stay separate nodes (TrainingMode.EVAL would fold BN into the Conv). Node names come from\n"
             "the torch module path (`/block1/conv1/Conv`, `/block1/bn1/BatchNormalization`, `/block1/Add`,\n"
             "`/block1/relu2/Relu`, `/fc/Gemm`, ...) and are identical across all variants of a task; the INT8\n"
             "variants only add `QuantizeLinear`/`DequantizeLinear` nodes. Weight initializers are named after\n"
             "the torch parameters (`block1.conv1.weight`). Every model passes `onnx.checker.check_model(full_check=True)`.\n")
    L.append("* **digits CNN** (`digits` zoo): stem Conv3x3(1->16)+BN+ReLU; block1 16->16, block2 16->32\n"
             "  (stride 2, 1x1 conv + BN projection on the skip), block3 32->32; each block Conv3x3+BN+ReLU,\n"
             "  Conv3x3+BN, Add skip, ReLU; GlobalAveragePool, Flatten, Gemm(->10). Natural cut points are the\n"
             "  block outputs `/stem/relu/Relu_output_0`, `/block{1,2,3}/relu2/Relu_output_0`.\n"
             "* **multitask digits**: the same CNN at widths stem 8, blocks 8, 16, 16.\n"
             "* **wine / breast_cancer / iris MLPs**: `Sub`, `Div` (standardization with train-split mean and\n"
             "  std, baked into the model; the .npy files hold raw features), stem Gemm(->32)+Relu, three\n"
             "  bottleneck blocks Gemm(32->64)+Relu, Gemm(64->32)+Relu (no residual), head Gemm(->classes).\n"
             "  Cut points: `/stem_relu/Relu_output_0`, `/block{1,2,3}/relu2/Relu_output_0`.\n")
    L.append(realistic.README_MODELS)
    L.append("## Variants\n")
    L.append("* `dense`: the trained base model (Adam, cosine schedule, weight decay 1e-4).\n"
             "* `uNN` (kind unstructured): gradual global magnitude pruning. For each level in increasing\n"
             "  order, starting from the previous level's model (u50 from dense, u70 from u50, ...), ONE global\n"
             "  magnitude threshold over all Conv/Gemm weights together (stem, block convs, projections and\n"
             "  the classifier; no per-layer quotas) sets NN% of them to exact zeros, then a short fine-tune\n"
             "  with the mask fixed (re-applied after every step; BN statistics update). accuracy_measured.json\n"
             "  also has the accuracy right after pruning (`accuracy_before_finetune`) and of a one-shot\n"
             "  global prune of dense with no fine-tune at all (`accuracy_oneshot_from_dense_no_finetune`).\n"
             "* `sNN` (kind structured): NN% of the inner channels (CNN: output channels of conv1 of every\n"
             "  residual block, with their BN entries and the matching input channels of conv2; MLP: the units\n"
             "  between fc1 and fc2 of every block) are removed, block by block. A unit's score is\n"
             "  Var(activation) x ||next-layer weights of it||^2; the lowest go. No gradient training: the next\n"
             "  layer (conv2 / fc2) is re-fitted on the kept units by ridge least squares (ridge 1e-3 x mean\n"
             "  diagonal) to reproduce its original output over the training set (He et al. 2017 style channel\n"
             "  pruning reconstruction); the fitted constant term generalizes folding the removed units' mean\n"
             "  activation into the bias, and goes into fc2's bias for MLPs and into bn2's running_mean for the\n"
             "  CNN (conv2 has no bias; subtracting c from running_mean equals adding bias c to conv2). The\n"
             "  accuracy with the mean fold alone (no re-fit) is `accuracy_meanfold_only_no_refit`.\n"
             "  Block input/output widths do not change, so blocks of different variants are interchangeable.\n"
             "  Their `sparsity` in zoo.json is the fraction of exact zeros (about 0): the weights are removed,\n"
             "  not zeroed; `weights_removed_fraction` in accuracy_measured.json says how many.\n"
             "* `int8` (kind quantized): the dense ONNX graph edited with the onnx package: each Conv/Gemm\n"
             "  weight `W` becomes `W_quantized` (int8), `W_scale` (float32, per output channel, max|W|/127),\n"
             "  `W_zero_point` (int8 zeros) -> `DequantizeLinear` (axis 0, node `W_DequantizeLinear`, output\n"
             "  `W_dequantized`) -> the unchanged Conv/Gemm. Activations stay float32. `sparsity` counts int8 zeros.\n"
             "* `int8a` (digits zoo only, kind quantized): `int8` plus uint8 per-tensor\n"
             "  `QuantizeLinear`/`DequantizeLinear` (nodes `<tensor>_QuantizeLinear`/`_DequantizeLinear`) on the\n"
             "  data input of every Conv/Gemm, asymmetric ranges from min/max over `calib_x.npy`.\n")
    L.append(realistic.README_VARIANTS)
    L.append("## Accuracy (top-1 on the held-out test split, measured by the script)\n")
    L.append("`torch` is the torch model (for int8/int8a: with the dequantized weights / fake-quantized inputs),\n"
             "`onnx` is the exported file run by the numpy ONNX interpreter in the script (whole test set at once),\n"
             "`ORT` is the exported file run by onnxruntime-node 1.30.0 one sample at a time\n"
             "(`node tests/ort/eval_accuracy.js`)" + ("" if ort_used else " — not run when these files were made") + ".\n")
    for zoo, accs in results:
        for t in accs:
            L.append(f"### {zoo} / {t['task']} ({t['test_samples']} test samples, {t['train_samples']} train)\n")
            L.append("| variant | kind | precision | sparsity | torch | onnx | ORT | notes |\n"
                     "| --- | --- | --- | --- | --- | --- | --- | --- |")
            for v in t["variants"]:
                notes = []
                if "accuracy_before_finetune" in v:
                    notes.append(f"from {v['pruned_from']}; before fine-tune {v['accuracy_before_finetune']:.4f}; "
                                 f"one-shot from dense, no fine-tune {v['accuracy_oneshot_from_dense_no_finetune']:.4f}")
                if "accuracy_meanfold_only_no_refit" in v:
                    notes.append(f"mean fold only (no re-fit) {v['accuracy_meanfold_only_no_refit']:.4f}")
                if "weights_removed_fraction" in v:
                    notes.append(f"{v['weights_removed_fraction']:.1%} of Conv/Gemm weights removed")
                ort = "-" if v["top1_ort"] is None else f"{v['top1_ort']:.4f}"
                L.append(f"| {v['id']} | {v['kind']} | {v['precision']} | {v['sparsity']:.4f} | "
                         f"{v['top1_torch']:.4f} | {v['top1_onnx_numpy']:.4f} | {ort} | {'; '.join(notes)} |")
            L.append("")
    L += realistic.readme_latency(out, dict(results).get(realistic.ZOO, []))
    L.append(realistic.README_PIPELINE)
    L.append("## Limits\n")
    L.append("* The tabular test splits are tiny (wine 45, iris 38, breast_cancer 143 samples): one sample is\n"
             "  2-3 accuracy points there, and a pruned variant scoring above dense is noise, not a gain.\n"
             "* `sparsity` follows the zoo.json definition (exact zeros among Conv/Gemm weights), so structured\n"
             "  variants show about 0 (a few exact zeros can appear where the least-squares re-fit meets a\n"
             "  kept unit that is never active on the training set).\n"
             "* Unstructured variants are fine-tuned (see above); they are not one-shot prunes of dense. The\n"
             "  one-shot numbers show that 80-90% one-shot global pruning of these tiny models collapses.\n"
             "* Activation quantization (`int8a`) exists only in the digits zoo.\n"
             "* Byte-identical re-runs hold for one machine and software stack; torch on another CPU may\n"
             "  round differently during training and so write other weights (and accuracies).\n"
             + realistic.README_LIMITS)
    L.append("## ORT reference runner (tests/ort)\n")
    L.append("`npm install --prefix tests/ort --ignore-scripts` installs onnxruntime-node (its CPU library ships\n"
             "inside the package). Then:\n\n"
             "```\nnode tests/ort/run_ort.js MODEL.onnx --input input=X.npy --output-dir OUT [--threads 1] "
             "[--opt disabled|basic|extended|all] [--profile PREFIX]\n"
             "node tests/ort/run_ort.js --batch JOBS.json   # [{\"model\", \"inputs\": {name: file}, \"output_dir\"}]\n"
             "node tests/ort/eval_accuracy.js MODEL.onnx X.npy Y.npy [--logits OUT.npy]\n```\n")
    L.append("## Other test data (not made by this script)\n\n"
             "- `profiles/`: real ONNX Runtime profiles of digits models and hand-written TensorRT, OpenVINO and\n"
             "  generic-CSV examples for the importers; `profiles/README.md` says how each was made.\n"
             "- `concurrent/`: workloads for `plan-solve --mode concurrent` (HaX-CoNN Table 2 GoogleNet groups)\n"
             "  and a contention CSV; `concurrent/README.md` and `concurrent/make_testdata.py` say how.\n")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------


def write_zoo(zoo_dir, z, accs, use_ort):
    check_zoo_json(z, zoo_dir)
    write_json(os.path.join(zoo_dir, "zoo.json"), z)
    write_json(os.path.join(zoo_dir, "accuracy_measured.json"),
               {"zoo": z["name"], "made_by": "scripts/make_testdata.py",
                "ort": "onnxruntime-node 1.30.0, 1 thread, graph optimization basic, batch 1" if use_ort else None,
                "tasks": accs})


def recorded_results(out, zoo):
    """(accuracy records, whether ORT was used) of a zoo written by an earlier run."""
    with open(os.path.join(out, zoo, "accuracy_measured.json")) as f:
        rec = json.load(f)
    return rec["tasks"], rec["ort"] is not None


def ir_versions_on_disk(out, zoos):
    paths = sorted(glob.glob(os.path.join(out, "*", "models", "**", "*.onnx"), recursive=True))
    return sorted({onnx.load(p, load_external_data=False).ir_version for p in paths
                   if os.path.relpath(p, out).split(os.sep)[0] in zoos})


MTS_ZOO = "mts"  # scripts/testdata/mts.py
DEPLOYMENT_ZOO = "deployment"  # scripts/testdata/deployment.py

# Pruning levels a fresh zoo draws its schedule from.
FRESH_UNSTRUCTURED = [0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]
FRESH_STRUCTURED = [0.125, 0.25, 0.375, 0.5, 0.625]


def fresh_zoos(seed):
    """The digits and multitask zoos as other seeds and pruning schedules make them: every
    task's seed shifted by `seed`, its pruning levels (as many as the bundled zoo's) drawn
    from FRESH_* by a generator seeded with the seed, zoo and task."""
    zoos = copy.deepcopy(ZOOS)
    for zoo, zcfg in zoos.items():
        zcfg["description"] += f" Fresh zoo (scripts/make_testdata.py --fresh {seed}): other seeds and pruning levels."
        for task, cfg in zcfg["tasks"].items():
            rng = random.Random(f"{seed}/{zoo}/{task}")
            cfg["seed"] += seed
            cfg["unstructured"] = sorted(rng.sample(FRESH_UNSTRUCTURED, len(cfg["unstructured"])))
            cfg["structured"] = sorted(rng.sample(FRESH_STRUCTURED, len(cfg["structured"])))
    return zoos


def main():
    all_zoos = list(ZOOS) + [realistic.ZOO, MTS_ZOO, DEPLOYMENT_ZOO]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="testdata", help="output folder (default: testdata)")
    ap.add_argument("--ort", choices=["auto", "require", "skip"], default="auto",
                    help="cross-check with onnxruntime-node via tests/ort (default: auto = when installed)")
    ap.add_argument("--zoos", default=",".join(all_zoos),
                    help=f"zoos to (re)build, comma-separated (default: all = {','.join(all_zoos)}); the README "
                         "takes the others' figures from their accuracy_measured.json")
    ap.add_argument("--readme-only", action="store_true",
                    help="rebuild no zoo, only README.md from the recorded accuracy_measured.json and "
                         "latency_measured.json files (e.g. after scripts/measure_zoo_latency.py)")
    ap.add_argument("--fresh", type=int, metavar="SEED",
                    help="make fresh digits/multitask zoos under --out (not testdata) for held-out checks of the "
                         "accuracy estimator: other seeds and pruning levels drawn with SEED; no README")
    ap.add_argument("--jobs", type=int, default=1,
                    help="realistic zoo: tasks trained at once, one process each (the files do not depend on it)")
    args = ap.parse_args()
    build = [] if args.readme_only else args.zoos.split(",")
    for z in build:
        if z not in all_zoos:
            ap.error(f"--zoos: unknown zoo '{z}' (known: {', '.join(all_zoos)})")
    zoos = ZOOS
    if args.fresh is not None and args.zoos == ",".join(all_zoos):
        build = list(ZOOS)
    if args.fresh is not None:
        if os.path.realpath(args.out) == os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "testdata")):
            ap.error("--fresh: give --out a folder other than testdata")
        if args.readme_only or any(z not in ZOOS for z in build):
            ap.error(f"--fresh: makes only {', '.join(ZOOS)} (give --zoos from those)")
        zoos = fresh_zoos(args.fresh)
    setup_determinism()
    use_ort = ort_available("skip" if args.readme_only else args.ort)
    log(f"torch {torch.__version__}, onnx {onnx.__version__}, numpy {np.__version__}; ORT cross-check: {use_ort}")
    results, ort_used = {}, {}
    tmpdir = tempfile.mkdtemp(prefix="make_testdata.")
    try:
        for zoo, zcfg in zoos.items():
            if zoo not in build:
                continue
            zoo_dir = os.path.join(args.out, zoo)
            os.makedirs(zoo_dir, exist_ok=True)
            tasks, accs = [], []
            for task, cfg in zcfg["tasks"].items():
                te, ar = build_task(zoo_dir, zoo, task, cfg, use_ort, tmpdir)
                tasks.append(te)
                accs.append(ar)
            z = {"schema_version": 1, "name": zoo, "description": zcfg["description"],
                 "processors": copy.deepcopy(PROCESSORS), "tasks": tasks}
            write_zoo(zoo_dir, z, accs, use_ort)
            results[zoo], ort_used[zoo] = accs, use_ort
        if realistic.ZOO in build:
            z, accs = realistic.build_zoo(args.out, use_ort, tmpdir, jobs=args.jobs)
            write_zoo(os.path.join(args.out, realistic.ZOO), z, accs, use_ort)
            results[realistic.ZOO], ort_used[realistic.ZOO] = accs, use_ort
        if MTS_ZOO in build:
            # After the others: it re-seeds the global generators for itself.
            from testdata import mts  # scripts/testdata/mts.py: the weight-shared zoo
            mts.build(sys.modules[__name__], args.out, use_ort, tmpdir)
        if DEPLOYMENT_ZOO in build:
            # After the others: it re-seeds the global generators for each of its tasks.
            from testdata import deployment  # scripts/testdata/deployment.py: one model per planning technique
            deployment.build(sys.modules[__name__], args.out, use_ort, tmpdir)
        if args.fresh is not None:
            log(f"fresh zoos in {args.out}: {', '.join(build)}")
            return
        # The weight-shared and deployment zoos have their own README.md, not a table here.
        present = [z for z in all_zoos if z not in (MTS_ZOO, DEPLOYMENT_ZOO) and (z in results or os.path.isfile(os.path.join(args.out, z, "accuracy_measured.json")))]
        for zoo in present:
            if zoo not in results:
                results[zoo], ort_used[zoo] = recorded_results(args.out, zoo)
        text = readme_text([(z, results[z]) for z in present], all(ort_used.values()),
                           ir_versions_on_disk(args.out, present), args.out)
        with open(os.path.join(args.out, "README.md"), "w") as f:
            f.write(text)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    log("done")


if __name__ == "__main__":
    main()
