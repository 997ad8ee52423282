#!/usr/bin/python3
"""Generate zooplan's test model zoos (testdata/digits and testdata/multitask).

Run from the repository root with Debian's interpreter (it has torch, onnx,
sklearn and numpy as apt packages):

    /usr/bin/python3 scripts/make_testdata.py [--out testdata] [--ort auto|require|skip]

What it does, per task:
  * loads a dataset that ships inside scikit-learn (no download), makes a fixed
    stratified 75/25 train/test split (random_state=0);
  * trains a small base model with torch (single thread, deterministic
    algorithms, fixed seeds);
  * derives variants: unstructured global magnitude pruning (one threshold over
    all Conv/Gemm weights, then a short fine-tune with the mask fixed),
    structured pruning of block-internal channels/units (no retraining; the
    removed units' mean activation is folded into the next layer), INT8 weight
    quantization in QDQ form (edited ONNX graph), and for the digits zoo also
    INT8 weights + activations (QDQ);
  * exports each variant to ONNX (opset 13, ir_version 7, batch 1, input
    "input", output "logits", node names identical across variants);
  * checks every model with onnx.checker, checks that a small numpy ONNX
    interpreter in this file reproduces the torch outputs, and (when
    tests/ort/node_modules holds onnxruntime-node) measures accuracy with ONNX
    Runtime too;
  * writes zoo.json (schemas/zoo.schema.json), the data as .npy,
    accuracy_measured.json per zoo, and testdata/README.md.

Re-running it rewrites byte-identical files on the same machine and software.
"""

import argparse
import copy
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper
from sklearn import datasets
from sklearn.model_selection import train_test_split

OPSET = 13
IR_VERSION_MAX = 8
IR_VERSIONS = set()  # seen while writing, for the README
SPLIT_SEED = 0
TEST_FRACTION = 0.25
CALIB_SAMPLES = 64
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROCESSORS = [
    # Two processors on the two cores of a 2-core host, distinct in engine:
    # dense kernels with oneDNN's GEMM on core 0 ("cpu"), sparse kernels
    # wherever they apply with BLIS on core 1 ("npu"). Each is measured, and
    # served, pinned to its own core, so the two really run at the same time
    # and share the caches and memory bandwidth, as an SoC's processors share DRAM.
    {"name": "cpu", "kind": "cpu", "cores": [0], "profile": {"source": "host", "policy": "default", "gemm": "onednn", "threads": 1}},
    {"name": "npu", "kind": "npu", "cores": [1], "profile": {"source": "host", "policy": "sparse", "gemm": "blis", "threads": 1}},
]

T0 = time.time()


def log(msg):
    print(f"[{time.time() - T0:6.1f}s] {msg}", flush=True)


def setup_determinism():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    np.random.seed(0)


# --------------------------------------------------------------------------
# datasets


def load_task_data(name):
    """Return (x_train, x_test, y_train, y_test) as float32 / int64 arrays.

    digits: 8x8 images scaled from 0..16 to [0,1], shape [N,1,8,8].
    tabular sets: raw features (standardization is baked into the model).
    """
    if name == "digits":
        d = datasets.load_digits()
        x = (d.data.astype(np.float32) / np.float32(16.0)).reshape(-1, 1, 8, 8)
    elif name == "wine":
        d = datasets.load_wine()
        x = d.data.astype(np.float32)
    elif name == "breast_cancer":
        d = datasets.load_breast_cancer()
        x = d.data.astype(np.float32)
    elif name == "iris":
        d = datasets.load_iris()
        x = d.data.astype(np.float32)
    else:
        raise ValueError(name)
    y = d.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(
        x, y, test_size=TEST_FRACTION, random_state=SPLIT_SEED, stratify=y)
    return (np.ascontiguousarray(xtr, dtype=np.float32), np.ascontiguousarray(xte, dtype=np.float32),
            ytr.astype(np.int64), yte.astype(np.int64))


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


class ResBlock(nn.Module):
    """conv1(3x3, cin->inner, stride) BN ReLU, conv2(3x3, inner->cout) BN, + skip, ReLU.

    The skip is the identity, or a 1x1 conv + BN projection when the shape
    changes. Structured pruning changes only `inner`."""

    def __init__(self, cin, inner, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, inner, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(inner)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(inner, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        if stride != 1 or cin != cout:
            self.proj_conv = nn.Conv2d(cin, cout, 1, stride, 0, bias=False)
            self.proj_bn = nn.BatchNorm2d(cout)
        else:
            self.proj_conv = None
        self.relu2 = nn.ReLU()

    def forward(self, x):
        h = self.relu1(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        s = x if self.proj_conv is None else self.proj_bn(self.proj_conv(x))
        return self.relu2(h + s)


class DigitsCNN(nn.Module):
    def __init__(self, stem=16, widths=(16, 32, 32), inner=None, classes=10):
        super().__init__()
        inner = list(widths) if inner is None else list(inner)
        self.arch = {"kind": "cnn", "stem": stem, "widths": list(widths), "inner": inner, "classes": classes}
        self.stem = Stem(1, stem)
        cin = stem
        for i, (w, e) in enumerate(zip(widths, inner)):
            stride = 2 if (i > 0 and w != cin) else 1
            setattr(self, f"block{i + 1}", ResBlock(cin, e, w, stride))
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


def prunable_modules(model):
    """(name, module) of every Conv/Gemm, in module order."""
    return [(n, m) for n, m in model.named_modules() if isinstance(m, (nn.Conv2d, nn.Linear))]


# --------------------------------------------------------------------------
# training / evaluation


def train(model, x, y, *, epochs, lr, batch, seed, wd=1e-4, masks=None):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    n = len(xt)
    steps = epochs * ((n + batch - 1) // batch)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=wd)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    for _ in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=g)
        for i in range(0, n, batch):
            idx = perm[i:i + batch]
            if len(idx) < 2:
                continue
            loss = F.cross_entropy(model(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            if masks is not None:
                apply_masks(model, masks)
    model.eval()
    return model


@torch.no_grad()
def torch_logits(model, x):
    model.eval()
    return model(torch.from_numpy(x)).numpy()


def top1(logits, y):
    return float(np.mean(np.argmax(logits, axis=1) == y))


# --------------------------------------------------------------------------
# pruning


def global_magnitude_masks(model, fraction):
    """One global threshold over all Conv/Gemm weights: the `fraction` of
    weights with the smallest |w| (ties broken by position) are masked."""
    mods = prunable_modules(model)
    flat = np.concatenate([m.weight.detach().numpy().ravel() for _, m in mods])
    k = int(round(fraction * flat.size))
    order = np.argsort(np.abs(flat), kind="stable")
    keep = np.ones(flat.size, dtype=bool)
    keep[order[:k]] = False
    masks, off = {}, 0
    for name, m in mods:
        n = m.weight.numel()
        masks[name] = torch.from_numpy(keep[off:off + n].reshape(tuple(m.weight.shape)).astype(np.float32))
        off += n
    threshold = float(np.abs(flat[order[k - 1]])) if k > 0 else 0.0
    return masks, threshold


@torch.no_grad()
def apply_masks(model, masks):
    for name, m in prunable_modules(model):
        if name in masks:
            m.weight.mul_(masks[name])


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
def _lstsq_refit(x, y, ridge):
    """Least squares [W; b] minimizing ||x W + b - y||^2 + ridge * mean(diag(x'x)) * ||W||^2
    (float64; the bias is not regularized)."""
    x = x.double()
    y = y.double()
    xa = torch.cat([x, torch.ones(x.shape[0], 1, dtype=torch.float64)], dim=1)
    g = xa.T @ xa
    reg = ridge * torch.diagonal(g)[:-1].mean()
    idx = torch.arange(x.shape[1])
    g[idx, idx] += reg
    theta = torch.linalg.solve(g, xa.T @ y)
    return theta[:-1].float(), theta[-1].float()


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


# --------------------------------------------------------------------------
# ONNX export and editing


def export_onnx(model, input_shape, graph_name, metadata):
    """torch.onnx.export in eval mode with BatchNormalization kept as separate
    nodes (TrainingMode.PRESERVE on an eval-mode model; TrainingMode.EVAL would
    fold BN into the Conv weights), then clean up:
      * torch de-duplicates equal initializers and re-creates them with
        Identity nodes: replace those by plain initializers;
      * drop doc strings, set a stable graph name and metadata."""
    model.eval()
    f = io.BytesIO()
    torch.onnx.export(model, torch.zeros(*input_shape), f, opset_version=OPSET,
                      input_names=["input"], output_names=["logits"],
                      do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE,
                      export_params=True, keep_initializers_as_inputs=False)
    m = onnx.load_from_string(f.getvalue())
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    keep_nodes = []
    for node in g.node:
        if node.op_type == "Identity" and node.input[0] in inits:
            t = copy.deepcopy(inits[node.input[0]])
            t.name = node.output[0]
            g.initializer.append(t)
            inits[t.name] = t
        else:
            keep_nodes.append(copy.deepcopy(node))
    del g.node[:]
    g.node.extend(keep_nodes)
    used = {i for n in g.node for i in n.input}
    kept_inits = [copy.deepcopy(i) for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept_inits)
    return finalize(m, graph_name, metadata)


def finalize(m, graph_name, metadata):
    g = m.graph
    g.name = graph_name
    g.doc_string = ""
    for n in g.node:
        n.doc_string = ""
    if m.ir_version > IR_VERSION_MAX:
        m.ir_version = IR_VERSION_MAX
    del m.metadata_props[:]
    for k in sorted(metadata):
        p = m.metadata_props.add()
        p.key, p.value = k, str(metadata[k])
    onnx.checker.check_model(m, full_check=True)
    return m


def weight_inputs(m):
    """(node, weight initializer name) of every Conv/Gemm whose weight is an initializer."""
    inits = {i.name for i in m.graph.initializer}
    return [(n, n.input[1]) for n in m.graph.node if n.op_type in ("Conv", "Gemm") and n.input[1] in inits]


def quantize_weights_qdq(dense, graph_name, metadata):
    """Copy of `dense` where every Conv/Gemm weight W becomes
        W_quantized (int8) , W_scale (fp32 [O]), W_zero_point (int8 [O] zeros)
          -> DequantizeLinear (axis 0, node "<W>_DequantizeLinear") -> W_dequantized
    consumed by the unchanged Conv/Gemm node (same name, same attributes).
    Symmetric per-output-channel scale = max|W| / 127, values in [-127, 127].
    Returns (model, {W: dequantized float32 array})."""
    m = copy.deepcopy(dense)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    deq = {}
    new_nodes = []
    replaced = set()
    for node in g.node:
        if node.op_type in ("Conv", "Gemm") and node.input[1] in inits:
            wname = node.input[1]
            w = numpy_helper.to_array(inits[wname])
            axis = 0
            if node.op_type == "Gemm":
                tb = [a.i for a in node.attribute if a.name == "transB"]
                assert tb and tb[0] == 1, "Gemm weight expected as [out, in] (transB=1)"
            amax = np.abs(w.reshape(w.shape[axis], -1)).max(axis=1).astype(np.float32)
            scale = np.where(amax > 0, amax / np.float32(127.0), np.float32(1.0)).astype(np.float32)
            bshape = (-1,) + (1,) * (w.ndim - 1)
            q = np.clip(np.round(w / scale.reshape(bshape)), -127, 127).astype(np.int8)
            zp = np.zeros(w.shape[axis], dtype=np.int8)
            deq[wname] = (q.astype(np.float32) * scale.reshape(bshape)).astype(np.float32)
            g.initializer.append(numpy_helper.from_array(q, wname + "_quantized"))
            g.initializer.append(numpy_helper.from_array(scale, wname + "_scale"))
            g.initializer.append(numpy_helper.from_array(zp, wname + "_zero_point"))
            new_nodes.append(helper.make_node(
                "DequantizeLinear", [wname + "_quantized", wname + "_scale", wname + "_zero_point"],
                [wname + "_dequantized"], name=wname + "_DequantizeLinear", axis=axis))
            node = copy.deepcopy(node)
            node.input[1] = wname + "_dequantized"
            replaced.add(wname)
        new_nodes.append(node)
    del g.node[:]
    g.node.extend(new_nodes)
    kept = [copy.deepcopy(i) for i in g.initializer if i.name not in replaced]
    del g.initializer[:]
    g.initializer.extend(kept)
    return finalize(m, graph_name, metadata), deq


def quantize_activations_qdq(m_in, ranges, graph_name, metadata):
    """Insert QuantizeLinear -> DequantizeLinear (uint8, per-tensor, asymmetric)
    on the data input of every Conv/Gemm. `ranges` maps tensor -> (min, max)
    from calibration. Returns (model, {tensor: (scale, zero_point)})."""
    m = copy.deepcopy(m_in)
    g = m.graph
    qparams = {}
    for node in g.node:
        if node.op_type in ("Conv", "Gemm"):
            t = node.input[0]
            if t in qparams:
                continue
            lo, hi = ranges[t]
            lo, hi = min(0.0, float(lo)), max(0.0, float(hi))
            scale = np.float32((hi - lo) / 255.0 if hi > lo else 1.0)
            zp = np.uint8(np.clip(np.round(-lo / scale), 0, 255))
            qparams[t] = (scale, zp)
    new_nodes = []
    for node in g.node:
        if node.op_type in ("Conv", "Gemm") and node.input[0] in qparams:
            t = node.input[0]
            if not any(n.name == t + "_QuantizeLinear" for n in new_nodes):
                scale, zp = qparams[t]
                g.initializer.append(numpy_helper.from_array(np.array(scale, np.float32), t + "_scale"))
                g.initializer.append(numpy_helper.from_array(np.array(zp, np.uint8), t + "_zero_point"))
                new_nodes.append(helper.make_node("QuantizeLinear", [t, t + "_scale", t + "_zero_point"],
                                                  [t + "_quantized"], name=t + "_QuantizeLinear"))
                new_nodes.append(helper.make_node("DequantizeLinear",
                                                  [t + "_quantized", t + "_scale", t + "_zero_point"],
                                                  [t + "_dequantized"], name=t + "_DequantizeLinear"))
            node = copy.deepcopy(node)
            node.input[0] = t + "_dequantized"
        new_nodes.append(node)
    del g.node[:]
    g.node.extend(new_nodes)
    return finalize(m, graph_name, metadata), qparams


def onnx_weight_sparsity(m):
    """Fraction of exact zeros over all Conv/Gemm weights (int8 weights of QDQ
    models are counted on their quantized values; zero point is 0)."""
    inits = {i.name: i for i in m.graph.initializer}
    producers = {o: n for n in m.graph.node for o in n.output}
    zeros = total = 0
    for n in m.graph.node:
        if n.op_type not in ("Conv", "Gemm"):
            continue
        w = n.input[1]
        if w in producers and producers[w].op_type == "DequantizeLinear":
            w = producers[w].input[0]
        if w not in inits:
            continue
        a = numpy_helper.to_array(inits[w])
        zeros += int(np.count_nonzero(a == 0))
        total += a.size
    return zeros / total


def node_signature(m, skip_qdq=True):
    return [(n.name, n.op_type) for n in m.graph.node
            if not (skip_qdq and n.op_type in ("QuantizeLinear", "DequantizeLinear"))]


# --------------------------------------------------------------------------
# a small numpy ONNX interpreter (reference for the ops these zoos use)


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def np_conv(x, w, b, at):
    assert at.get("group", 1) == 1 and list(at.get("dilations", [1, 1])) == [1, 1]
    sh, sw = at.get("strides", [1, 1])
    pt, pl, pb, pr = at.get("pads", [0, 0, 0, 0])
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    ho = (h + pt + pb - kh) // sh + 1
    wo = (wd + pl + pr - kw) // sw + 1
    cols = np.empty((n, c, kh, kw, ho, wo), dtype=np.float32)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + sh * ho:sh, j:j + sw * wo:sw]
    y = np.matmul(w.reshape(o, -1), cols.reshape(n, c * kh * kw, ho * wo)).reshape(n, o, ho, wo)
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


def run_onnx_numpy(m, feeds, want=None):
    """Evaluate `m` on `feeds` (batch may exceed the declared batch of 1).
    Returns the graph outputs, or all tensors named in `want`."""
    env = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    env.update(feeds)
    for node in m.graph.node:
        at = _attrs(node)
        x = [env[i] if i else None for i in node.input]
        op = node.op_type
        if op == "Conv":
            y = np_conv(x[0], x[1], x[2] if len(x) > 2 else None, at)
        elif op == "BatchNormalization":
            s = (x[1] / np.sqrt(x[4] + np.float32(at.get("epsilon", 1e-5)))).astype(np.float32)
            shp = (1, -1) + (1,) * (x[0].ndim - 2)
            y = (x[0] - x[3].reshape(shp)) * s.reshape(shp) + x[2].reshape(shp)
        elif op == "Relu":
            y = np.maximum(x[0], 0)
        elif op == "Add":
            y = x[0] + x[1]
        elif op == "Sub":
            y = x[0] - x[1]
        elif op == "Mul":
            y = x[0] * x[1]
        elif op == "Div":
            y = x[0] / x[1]
        elif op == "GlobalAveragePool":
            y = x[0].mean(axis=(2, 3), keepdims=True)
        elif op == "Flatten":
            ax = at.get("axis", 1)
            y = x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)
        elif op == "Gemm":
            a = x[0].T if at.get("transA", 0) else x[0]
            bm = x[1].T if at.get("transB", 0) else x[1]
            y = np.float32(at.get("alpha", 1.0)) * (a @ bm)
            if len(x) > 2 and x[2] is not None:
                y = y + np.float32(at.get("beta", 1.0)) * x[2]
        elif op == "MatMul":
            y = x[0] @ x[1]
        elif op == "Identity":
            y = x[0]
        elif op == "DequantizeLinear":
            ax = at.get("axis", 1)
            sc, zp = x[1], x[2]
            if sc.ndim == 1 and x[0].ndim > 1:
                shp = [1] * x[0].ndim
                shp[ax] = -1
                sc, zp = sc.reshape(shp), zp.reshape(shp)
            y = (x[0].astype(np.int32) - zp.astype(np.int32)).astype(np.float32) * sc
        elif op == "QuantizeLinear":
            sc, zp = x[1], x[2]
            assert sc.ndim == 0
            lo, hi = (0, 255) if zp.dtype == np.uint8 else (-128, 127)
            y = np.clip(np.round(x[0] / sc) + zp.astype(np.float32), lo, hi).astype(zp.dtype)
        else:
            raise NotImplementedError(f"numpy reference: op {op}")
        env[node.output[0]] = y.astype(np.float32) if y.dtype == np.float64 else y
    names = want if want is not None else [o.name for o in m.graph.output]
    return [env[n] for n in names]


# --------------------------------------------------------------------------
# torch equivalents of the quantized variants


def with_weights(model, new_weights):
    """Deep copy of `model` with Conv/Gemm weights replaced, keyed by parameter name."""
    mm = copy.deepcopy(model).eval()
    with torch.no_grad():
        for name, mod in prunable_modules(mm):
            key = name + ".weight"
            if key in new_weights:
                mod.weight.copy_(torch.from_numpy(new_weights[key]))
    return mm


class FakeQuantInputs:
    """Forward pre-hooks that apply uint8 per-tensor quantize-dequantize to the
    input of each Conv/Linear (the torch equivalent of the activation QDQ)."""

    def __init__(self, model, per_module):
        self.handles = []
        for name, mod in prunable_modules(model):
            scale, zp = per_module[name]
            s = torch.tensor(float(scale))
            z = float(zp)

            def hook(mod, inp, s=s, z=z):
                x = inp[0]
                q = torch.clamp(torch.round(x / s) + z, 0, 255)
                return ((q - z) * s,)
            self.handles.append(mod.register_forward_pre_hook(hook))


# --------------------------------------------------------------------------
# ORT cross-check through tests/ort/eval_accuracy.js


def ort_available(mode):
    if mode == "skip":
        return False
    ok = shutil.which("node") is not None and os.path.isdir(
        os.path.join(REPO_ROOT, "tests", "ort", "node_modules", "onnxruntime-node"))
    if not ok and mode == "require":
        sys.exit("make_testdata: --ort require, but node or tests/ort/node_modules/onnxruntime-node is missing "
                 "(npm install --prefix tests/ort --ignore-scripts)")
    return ok


def ort_eval(model_path, x_path, y_path, tmpdir):
    logits_path = os.path.join(tmpdir, "ort_logits.npy")
    out = subprocess.run(["node", os.path.join(REPO_ROOT, "tests", "ort", "eval_accuracy.js"),
                          model_path, x_path, y_path, "--logits", logits_path],
                         check=True, capture_output=True, text=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return res, np.load(logits_path)


# --------------------------------------------------------------------------
# building one task


def metadata_for(zoo, task, vid, kind, how):
    return {"zooplan.zoo": zoo, "zooplan.task": task, "zooplan.variant": vid, "zooplan.kind": kind,
            "zooplan.made_by": "scripts/make_testdata.py", "zooplan.how": how}


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
# zoo.json check (hand-written subset of schemas/zoo.schema.json)


def check_zoo_json(z, zoo_dir):
    import re
    name_re = re.compile(r"^[A-Za-z0-9_.-]+$")
    assert set(z) <= {"schema_version", "name", "description", "processors", "tasks"}
    assert z["schema_version"] == 1 and name_re.match(z["name"])
    assert z["processors"]
    for p in z["processors"]:
        assert set(p) <= {"name", "kind", "profile"} and name_re.match(p["name"])
        assert p["kind"] in ("cpu", "gpu", "npu", "dla", "dsp")
        assert set(p["profile"]) <= {"source", "file", "threads", "policy"}
        assert p["profile"]["source"] in ("host", "ort-json", "trtexec", "openvino-csv", "csv")
    assert z["tasks"]
    for t in z["tasks"]:
        assert set(t) <= {"name", "description", "variants", "dataset"} and name_re.match(t["name"])
        assert t["variants"] and t["variants"][0]["kind"] == "dense"
        for v in t["variants"]:
            assert set(v) <= {"id", "onnx", "kind", "sparsity", "precision", "accuracy"}
            assert name_re.match(v["id"]) and isinstance(v["onnx"], str)
            assert v["kind"] in ("dense", "unstructured", "structured", "quantized")
            assert 0 <= v["sparsity"] <= 1 and v["precision"] in ("fp32", "fp16", "int8")
            assert os.path.isfile(os.path.join(zoo_dir, v["onnx"])), v["onnx"]
        d = t["dataset"]
        assert set(d) <= {"inputs", "labels", "calibration", "metric"} and d["metric"] == "top1"
        for k in ("inputs", "labels", "calibration"):
            assert os.path.isfile(os.path.join(zoo_dir, d[k])), d[k]


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, sort_keys=False)
        f.write("\n")


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


def readme_text(results, ort_used, ir_versions):
    L = []
    L.append("# testdata\n")
    L.append("Small real model zoos for zooplan's tests and demo. Everything here is written by\n"
             "`scripts/make_testdata.py`; do not edit by hand. Re-create with (from the repository root)\n")
    L.append("```\nnpm install --prefix tests/ort --ignore-scripts   # optional: ORT cross-check\n"
             "/usr/bin/python3 scripts/make_testdata.py\n```\n")
    L.append("Debian's `/usr/bin/python3` with the apt packages python3-torch, python3-onnx, python3-sklearn\n"
             "and python3-numpy. The datasets ship inside scikit-learn (nothing is downloaded). Training runs\n"
             "single-threaded with deterministic algorithms and fixed seeds, so a re-run rewrites byte-identical\n"
             "files on the same machine and software (another CPU or torch build may round differently).\n")
    L.append("## Layout\n")
    L.append("| path | what |\n| --- | --- |\n"
             "| `digits/zoo.json` | manifest (schemas/zoo.schema.json): processors cpu/gpu/npu (profile source `host`: kernel policy default/im2col/sparse, one thread each), task `digits` |\n"
             "| `digits/models/<id>.onnx` | the variants of the digits residual CNN |\n"
             "| `digits/data/test_x.npy`, `test_y.npy` | held-out test split: float32 [N,1,8,8] in [0,1], int64 [N] |\n"
             "| `digits/data/calib_x.npy` | calibration inputs: the first 64 training samples, float32 |\n"
             "| `digits/accuracy_measured.json` | accuracies measured by the script (torch, numpy ONNX reference, ORT) and how each variant was made |\n"
             "| `multitask/zoo.json` | manifest with tasks digits, wine, breast_cancer, iris |\n"
             "| `multitask/models/<task>/<id>.onnx` | the variants of each task's base model |\n"
             "| `multitask/data/<task>_test_x.npy`, `<task>_test_y.npy`, `<task>_calib_x.npy` | per task test split and calibration inputs |\n"
             "| `multitask/accuracy_measured.json` | as for digits |\n")
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
             "  round differently during training and so write other weights (and accuracies).\n")
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="testdata", help="output folder (default: testdata)")
    ap.add_argument("--ort", choices=["auto", "require", "skip"], default="auto",
                    help="cross-check with onnxruntime-node via tests/ort (default: auto = when installed)")
    ap.add_argument("--zoos", default="all", choices=["all", "mts"],
                    help="all zoos (default), or only the weight-shared multitask zoo testdata/mts")
    args = ap.parse_args()
    setup_determinism()
    use_ort = ort_available(args.ort)
    log(f"torch {torch.__version__}, onnx {onnx.__version__}, numpy {np.__version__}; ORT cross-check: {use_ort}")
    results = []
    tmpdir = tempfile.mkdtemp(prefix="make_testdata.")
    try:
        for zoo, zcfg in (ZOOS.items() if args.zoos == "all" else []):
            zoo_dir = os.path.join(args.out, zoo)
            os.makedirs(zoo_dir, exist_ok=True)
            tasks, accs = [], []
            for task, cfg in zcfg["tasks"].items():
                te, ar = build_task(zoo_dir, zoo, task, cfg, use_ort, tmpdir)
                tasks.append(te)
                accs.append(ar)
            z = {"schema_version": 1, "name": zoo, "description": zcfg["description"],
                 "processors": copy.deepcopy(PROCESSORS), "tasks": tasks}
            check_zoo_json(z, zoo_dir)
            write_json(os.path.join(zoo_dir, "zoo.json"), z)
            write_json(os.path.join(zoo_dir, "accuracy_measured.json"),
                       {"zoo": zoo, "made_by": "scripts/make_testdata.py",
                        "ort": "onnxruntime-node 1.30.0, 1 thread, graph optimization basic, batch 1"
                        if use_ort else None,
                        "tasks": accs})
            results.append((zoo, accs))
        # After the others: it re-seeds the global generators for itself.
        from testdata import mts  # scripts/testdata/mts.py: the weight-shared zoo
        mts.build(sys.modules[__name__], args.out, use_ort, tmpdir)
        if args.zoos == "all":
            with open(os.path.join(args.out, "README.md"), "w") as f:
                f.write(readme_text(results, use_ort, sorted(IR_VERSIONS)))
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    log("done")


if __name__ == "__main__":
    main()
