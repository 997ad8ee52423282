"""The weight-shared multitask zoo (testdata/mts), called from scripts/make_testdata.py.

Two groups of task models, each fine-tuned from one backbone so that frozen
parameters are bit-identical across the models (MTZ-style cross-model weight
sharing, the input of MTS stitching):

* digits: a residual CNN (stem, 3 residual blocks with BatchNormalization,
  global average pool, Gemm head) trained on sklearn digits (10 classes) is the
  backbone. Eight tasks derived from the digit label (class, parity, > 4, closed
  loop, prime, mod 3, straight strokes only, < 3) fine-tune different parts:
  only a new head, the last block, the last two or three blocks, the second conv
  of the last block, or keep a block frozen and widen its inner layer by four
  task-specific channels (frozen shared channels U plus trained X and Y blocks).
* tabular: an MLP backbone trained on breast_cancer; wine and iris models get
  their own input layer (bias frozen at zero) and head around the frozen trunk,
  iris also fine-tunes the second trunk layer. Features are standardized with the
  train-split statistics in the .npy files (not in the model).

Fine-tuning runs with BatchNormalization in eval mode (running statistics stay
those of the backbone) and Adam without weight decay, with the gradient of every
frozen element masked to zero, so frozen elements never move; the script checks
that they are bit-identical to the backbone after training.
"""

import json
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn import datasets
from sklearn.model_selection import train_test_split

OPSET = 13
SPLIT_SEED = 0

DIGIT_TASKS = [
    # name, classes, label function, what is trained (module prefixes), widened blocks (block -> extra channels)
    ("digit10", 10, lambda y: y, None, {}),
    ("gt4", 2, lambda y: (y > 4).astype(np.int64), ["fc"], {}),
    ("parity", 2, lambda y: y % 2, ["block3", "fc"], {}),
    ("loops", 2, lambda y: np.isin(y, [0, 6, 8, 9]).astype(np.int64), ["block2", "block3", "fc"], {}),
    ("prime", 2, lambda y: np.isin(y, [2, 3, 5, 7]).astype(np.int64), ["fc"], {"block2": 4}),
    ("mod3", 3, lambda y: y % 3, ["fc"], {"block3": 4}),
    ("straight", 2, lambda y: np.isin(y, [1, 4, 7]).astype(np.int64), ["block3.conv2", "block3.bn2", "fc"], {}),
    ("lt3", 2, lambda y: (y < 3).astype(np.int64), ["block1", "block2", "block3", "fc"], {}),
]
DESCRIPTIONS = {
    "digit10": "digit class (10), the backbone itself",
    "gt4": "digit > 4; new head on the frozen backbone",
    "parity": "digit parity; last residual block and head fine-tuned",
    "loops": "digit has a closed loop (0, 6, 8, 9); last two residual blocks and head fine-tuned",
    "prime": "digit is prime; block2 widened by 4 task channels (frozen shared channels), new head",
    "mod3": "digit mod 3; block3 widened by 4 task channels (frozen shared channels), new head",
    "straight": "digit drawn with straight strokes only (1, 4, 7); block3 second conv and head fine-tuned",
    "lt3": "digit < 3; all residual blocks and head fine-tuned (only the stem shared)",
    "breast_cancer": "breast cancer diagnosis (2 classes), 30 standardized features; the tabular backbone",
    "wine": "wine cultivar (3 classes), 13 standardized features; own input layer and head, frozen trunk",
    "iris": "iris species (3 classes), 4 standardized features; own input layer, second trunk layer and head",
}
TABULAR_TASKS = [
    # name, dataset loader, trained prefixes (None: the backbone)
    ("breast_cancer", datasets.load_breast_cancer, None),
    ("wine", datasets.load_wine, ["inp", "head"]),
    ("iris", datasets.load_iris, ["inp", "fc2", "head"]),
]
BACKBONE_TRAIN = {"epochs": 40, "lr": 2e-3, "batch": 32}
FINETUNE = {"epochs": 15, "lr": 2e-3, "batch": 32}
MLP_TRAIN = {"epochs": 120, "lr": 2e-3, "batch": 16}
MLP_FT = {"epochs": 120, "lr": 3e-3, "batch": 16}


class TabularNet(nn.Module):
    """inp (features -> 32, bias frozen at zero) ReLU, fc1 32->32 ReLU, fc2 32->32 ReLU, head.

    The input layer has a zero bias so that models with their own input layer
    still produce the same neuron space for the shared trunk (MTS stitches the
    input layers as exclusive inputs into shared output neurons, Eq. 3-4)."""

    def __init__(self, features, classes, width=32):
        super().__init__()
        self.inp = nn.Linear(features, width)
        self.relu0 = nn.ReLU()
        self.fc1 = nn.Linear(width, width)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(width, width)
        self.relu2 = nn.ReLU()
        self.head = nn.Linear(width, classes)
        with torch.no_grad():
            self.inp.bias.zero_()

    def forward(self, x):
        x = self.relu0(self.inp(x))
        x = self.relu1(self.fc1(x))
        return self.head(self.relu2(self.fc2(x)))


def split(x, y):
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=SPLIT_SEED, stratify=y)
    return (np.ascontiguousarray(xtr, np.float32), np.ascontiguousarray(xte, np.float32),
            ytr.astype(np.int64), yte.astype(np.int64))


def frozen_masks(model, trained, widened, backbone_inner):
    """name -> bool tensor, True where the element is frozen (equal to the backbone)."""
    masks = {}
    for name, p in model.named_parameters():
        free = trained is not None and any(name == t or name.startswith(t + ".") for t in trained)
        m = torch.zeros_like(p, dtype=torch.bool) if free else torch.ones_like(p, dtype=torch.bool)
        for block in widened:
            inner = backbone_inner[block]
            if name in (f"{block}.conv1.weight", f"{block}.bn1.weight", f"{block}.bn1.bias"):
                m[inner:] = False  # X: the new output channels of conv1 (and their BN affine)
            elif name == f"{block}.conv2.weight":
                m[:, inner:] = False  # Y: conv2's weights from the new channels
        masks[name] = m
    return masks


def copy_backbone(model, backbone):
    """Copies every backbone tensor into the model's leading slice (widened blocks are larger)."""
    src = backbone.state_dict()
    with torch.no_grad():
        for name, t in model.state_dict().items():
            if name not in src or name.endswith("num_batches_tracked"):
                continue
            s = src[name]
            if s.shape == t.shape:
                t.copy_(s)
            elif all(sd <= td for sd, td in zip(s.shape, t.shape)):
                t[tuple(slice(0, d) for d in s.shape)] = s
            # else: a smaller head (fewer classes) is initialized afresh by the caller


def finetune(model, masks, x, y, *, epochs, lr, batch, seed):
    """Adam without weight decay, BN in eval mode, frozen gradients zeroed: frozen elements never move."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    params = [p for n, p in model.named_parameters() if not bool(masks[n].all())]
    for n, p in model.named_parameters():
        p.requires_grad_(not bool(masks[n].all()))
    opt = torch.optim.Adam(params, lr=lr, weight_decay=0.0)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    model.eval()
    for _ in range(epochs):
        perm = torch.randperm(len(xt), generator=g)
        for i in range(0, len(xt), batch):
            idx = perm[i:i + batch]
            loss = F.cross_entropy(model(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            for n, p in model.named_parameters():
                if p.grad is not None:
                    p.grad[masks[n]] = 0.0
            opt.step()
    for p in model.parameters():
        p.requires_grad_(True)
    return model


def check_frozen(model, backbone, masks, task):
    src = backbone.state_dict()
    for name, t in model.state_dict().items():
        if name.endswith("num_batches_tracked") or name not in src:
            continue
        s = src[name]
        if any(sd > td for sd, td in zip(s.shape, t.shape)):
            continue  # a new, smaller head
        view = t[tuple(slice(0, d) for d in s.shape)]
        m = masks.get(name)
        m = torch.ones_like(view, dtype=torch.bool) if m is None else m[tuple(slice(0, d) for d in s.shape)]
        if not torch.equal(view[m], s[m]):
            raise AssertionError(f"mts: {task}: frozen part of {name} moved during fine-tuning")


def build_digits(mt, out_dir, use_ort, tmpdir):
    d = datasets.load_digits()
    x = (d.data.astype(np.float32) / np.float32(16.0)).reshape(-1, 1, 8, 8)
    xtr, xte, ytr, yte = split(x, d.target)
    np.save(os.path.join(out_dir, "data", "digits_test_x.npy"), xte)
    backbone = mt.DigitsCNN(stem=8, widths=(8, 16, 16), classes=10)
    mt.train(backbone, xtr, ytr, seed=101, **BACKBONE_TRAIN)
    inner = {f"block{i + 1}": w for i, w in enumerate(backbone.arch["inner"])}
    tasks, accs = [], []
    for k, (name, classes, label, trained, widened) in enumerate(DIGIT_TASKS):
        ytr_t, yte_t = label(ytr), label(yte)
        np.save(os.path.join(out_dir, "data", f"{name}_test_y.npy"), yte_t.astype(np.int64))
        if trained is None:
            model, masks = backbone, {}
        else:
            widths = [inner[f"block{i + 1}"] + widened.get(f"block{i + 1}", 0) for i in range(3)]
            model = mt.DigitsCNN(stem=8, widths=(8, 16, 16), inner=widths, classes=classes)
            copy_backbone(model, backbone)
            if classes != 10:  # a new head: fresh seeded init instead of the backbone's 10-class one
                torch.manual_seed(200 + k)
                model.fc = nn.Linear(16, classes)
            masks = frozen_masks(model, trained, widened, inner)
            finetune(model, masks, xtr, ytr_t, seed=300 + k, **FINETUNE)
            check_frozen(model, backbone, masks, name)
        tasks.append(finish_task(mt, out_dir, name, model, (1, 1, 8, 8), xte, yte_t, "data/digits_test_x.npy",
                                 f"data/{name}_test_y.npy", use_ort, tmpdir, accs,
                                 {"trained": trained or "backbone", "widened": widened}))
    return tasks, accs


def build_tabular(mt, out_dir, use_ort, tmpdir):
    tasks, accs = [], []
    backbone = None
    for k, (name, loader, trained) in enumerate(TABULAR_TASKS):
        d = loader()
        xtr, xte, ytr, yte = split(d.data.astype(np.float32), d.target)
        mean, std = xtr.mean(axis=0), xtr.std(axis=0) + np.float32(1e-6)
        xtr = ((xtr - mean) / std).astype(np.float32)
        xte = ((xte - mean) / std).astype(np.float32)
        np.save(os.path.join(out_dir, "data", f"{name}_test_x.npy"), xte)
        np.save(os.path.join(out_dir, "data", f"{name}_test_y.npy"), yte)
        classes = int(d.target.max()) + 1
        torch.manual_seed(400 + k)
        model = TabularNet(xtr.shape[1], classes)
        if trained is None:
            masks = {n: torch.zeros_like(p, dtype=torch.bool) for n, p in model.named_parameters()}
            masks["inp.bias"][:] = True
            finetune(model, masks, xtr, ytr, seed=500 + k, **MLP_TRAIN)
            backbone = model
        else:
            with torch.no_grad():
                for part in ("fc1", "fc2"):
                    getattr(model, part).load_state_dict(getattr(backbone, part).state_dict())
            masks = {n: torch.ones_like(p, dtype=torch.bool) for n, p in model.named_parameters()}
            for n in masks:
                if any(n.startswith(t + ".") for t in trained) and n != "inp.bias":
                    masks[n][:] = False
            finetune(model, masks, xtr, ytr, seed=500 + k, **MLP_FT)
            for part in ("fc1", "fc2"):
                if part not in trained and not all(torch.equal(a, b) for a, b in zip(
                        getattr(model, part).parameters(), getattr(backbone, part).parameters())):
                    raise AssertionError(f"mts: {name}: frozen {part} moved")
        assert float(model.inp.bias.abs().max()) == 0.0
        tasks.append(finish_task(mt, out_dir, name, model, (1, xtr.shape[1]), xte, yte, f"data/{name}_test_x.npy",
                                 f"data/{name}_test_y.npy", use_ort, tmpdir, accs,
                                 {"trained": trained or "backbone", "widened": {}}))
    return tasks, accs


def finish_task(mt, out_dir, name, model, shape, xte, yte, x_rel, y_rel, use_ort, tmpdir, accs, how):
    meta = {"zooplan.zoo": "mts", "zooplan.task": name, "zooplan.variant": "dense", "zooplan.kind": "dense",
            "zooplan.made_by": "scripts/make_testdata.py (scripts/testdata/mts.py)",
            "zooplan.how": json.dumps(how, sort_keys=True)}
    m = mt.export_onnx(model, shape, f"mts_{name}", meta)
    rel = f"models/{name}.onnx"
    path = os.path.join(out_dir, rel)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    logits = mt.torch_logits(model, xte)
    acc = mt.top1(logits, yte)
    ref = mt.run_onnx_numpy(m, {"input": xte})[0]
    if not np.allclose(ref, logits, rtol=1e-4, atol=1e-4):
        raise AssertionError(f"mts: {name}: numpy ONNX reference differs from torch")
    entry = {"task": name, "accuracy_torch": round(acc, 6), "test_samples": int(len(yte)),
             "trained": how["trained"], "widened": how["widened"],
             "params": int(sum(p.numel() for p in model.parameters()))}
    if use_ort:
        res, _ = mt.ort_eval(path, os.path.join(out_dir, x_rel), os.path.join(out_dir, y_rel), tmpdir)
        entry["accuracy_ort"] = round(res["top1"], 6)
    accs.append(entry)
    log = getattr(mt, "log")
    log(f"mts/{name}: top1 {acc:.4f} ({how['trained']}, widened {how['widened']})")
    return {"name": name, "description": DESCRIPTIONS[name],
            "variants": [{"id": "dense", "onnx": rel, "kind": "dense", "sparsity": 0.0, "precision": "fp32",
                          "accuracy": round(acc, 6)}],
            "dataset": {"inputs": x_rel, "labels": y_rel, "metric": "top1"}}


def readme(accs, use_ort):
    rows = "\n".join(
        f"| {a['task']} | {DESCRIPTIONS[a['task']]} | {a['trained'] if isinstance(a['trained'], str) else ', '.join(a['trained'])} "
        f"| {', '.join(f'{k} +{v}' for k, v in a['widened'].items()) or '-'} | {a['params']} | {a['accuracy_torch']:.4f} "
        f"| {a.get('accuracy_ort', float('nan')):.4f} |" for a in accs)
    return f"""# testdata/mts: weight-shared task models (MTS input)

Written by `scripts/make_testdata.py` (`--zoos mts` runs only this zoo; code in
`scripts/testdata/mts.py`); do not edit by hand. Re-running it rewrites byte-identical files
on the same machine and software.

Two multitask groups (`multitask_groups` in zoo.json), each fine-tuned from one backbone so that
frozen parameters are bit-identical across the members' ONNX files (found by content when
stitching; `shared` names initializers that must be shared, as a check):

* **digits** (8 members): a residual CNN (stem Conv+BN+ReLU 8 ch, residual blocks of widths 8,
  16 (stride 2, 1x1 projection), 16, each Conv+BN+ReLU, Conv+BN, Add, ReLU; GAP, Flatten, Gemm)
  trained on sklearn digits is the backbone (`digit10`). The other tasks relabel the same images
  and fine-tune different depths; `prime` and `mod3` keep a block frozen but widen its inner
  layer by 4 task channels (frozen shared channels U, trained X into the new channels and Y from
  them). Inputs `data/digits_test_x.npy` (shared by all eight), labels `data/<task>_test_y.npy`.
* **tabular** (3 members): an MLP (input layer with a zero, frozen bias; two 32-wide trunk
  layers; head) trained on breast_cancer; wine and iris get their own input layer and head
  around the frozen trunk (iris also fine-tunes the second trunk layer). Features are
  standardized with train-split statistics in the .npy files.

Fine-tuning: Adam without weight decay, BatchNormalization in eval mode, gradients of frozen
elements masked to zero; the script asserts frozen elements are unchanged. Test split: sklearn's
`train_test_split(test_size=0.25, random_state=0, stratify=y)`.

| task | what | trained (rest frozen) | widened | params | top-1 torch | top-1 ORT |
| --- | --- | --- | --- | --- | --- | --- |
{rows}

Accuracy on the test split, measured by the script with torch and{'' if use_ort else ' (not run)'} with ONNX Runtime
(`tests/ort/eval_accuracy.js`); zoo.json records the torch value.
"""


def build(mt, out_root, use_ort, tmpdir):
    """Writes OUT_ROOT/mts: zoo.json (tasks + multitask_groups), models/, data/, accuracy_measured.json."""
    out_dir = os.path.join(out_root, "mts")
    os.makedirs(os.path.join(out_dir, "models"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "data"), exist_ok=True)
    mt.setup_determinism()
    digit_tasks, digit_accs = build_digits(mt, out_dir, use_ort, tmpdir)
    tab_tasks, tab_accs = build_tabular(mt, out_dir, use_ort, tmpdir)
    zoo = {"schema_version": 1, "name": "mts",
           "description": "weight-shared task models (MTS stitching input): eight digit tasks fine-tuned from one "
                          "residual CNN backbone, three tabular tasks around one frozen MLP trunk",
           "processors": json.loads(json.dumps(mt.PROCESSORS)),
           "tasks": digit_tasks + tab_tasks,
           "multitask_groups": [
               {"name": "digits", "members": [t["name"] for t in digit_tasks],
                "shared": ["stem.conv.weight"]},
               {"name": "tabular", "members": [t["name"] for t in tab_tasks],
                "shared": ["fc1.weight", "fc1.bias"]},
           ]}
    mt.write_json(os.path.join(out_dir, "zoo.json"), zoo)
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write(readme(digit_accs + tab_accs, use_ort))
    mt.write_json(os.path.join(out_dir, "accuracy_measured.json"),
                  {"zoo": "mts", "made_by": "scripts/make_testdata.py (scripts/testdata/mts.py)",
                   "ort": "onnxruntime-node, 1 thread, batch 1" if use_ort else None,
                   "tasks": digit_accs + tab_accs})
    return zoo
