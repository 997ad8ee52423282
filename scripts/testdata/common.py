"""Helpers shared by the test-zoo builders of scripts/make_testdata.py: determinism,
training, global magnitude pruning, ONNX export and editing (INT8 QDQ), a small
numpy ONNX interpreter used as an export check, the ORT cross-check, and the
zoo.json checks and writers."""

import copy
import io
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
import scipy.special
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import helper, numpy_helper
from sklearn import datasets
from sklearn.model_selection import train_test_split

OPSET = 13
IR_VERSION_MAX = 8
IR_VERSIONS = set()  # seen while writing, for the README
SPLIT_SEED = 0
TEST_FRACTION = 0.25
CALIB_SAMPLES = 64
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

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

PROCESSORS = [
    # Two processors on the two cores of a 2-core host, distinct in engine:
    # dense kernels with oneDNN's GEMM on core 0 ("cpu"), sparse kernels
    # wherever they apply with BLIS on core 1 ("npu"). Each is measured, and
    # served, pinned to its own core, so the two really run at the same time
    # and share the caches and memory bandwidth, as an SoC's processors share DRAM.
    {"name": "cpu", "kind": "cpu", "cores": [0], "profile": {"source": "host", "policy": "default", "gemm": "onednn", "threads": 1}},
    {"name": "npu", "kind": "npu", "cores": [1], "profile": {"source": "host", "policy": "sparse", "gemm": "blis", "threads": 1}},
]


class BasicBlock(nn.Module):
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


def prunable_modules(model):
    """(name, module) of every Conv/Gemm, in module order."""
    return [(n, m) for n, m in model.named_modules() if isinstance(m, (nn.Conv2d, nn.Linear))]


# --------------------------------------------------------------------------
# training / evaluation


def train(model, x, y, *, epochs, lr, batch, seed, wd=1e-4, masks=None, name=None, log_every=10,
          channels_last=False):
    """Adam with a cosine schedule; `masks` are re-applied after every step.
    With `name`, logs the mean training loss every `log_every` epochs.
    `channels_last` trains with NHWC weights (depthwise convolutions train about
    1.5x faster on CPU that way) and returns the model in the default layout."""
    if channels_last:
        model.to(memory_format=torch.channels_last)
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    n = len(xt)
    steps = epochs * ((n + batch - 1) // batch)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=wd)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=g)
        total = 0.0
        for i in range(0, n, batch):
            idx = perm[i:i + batch]
            if len(idx) < 2:
                continue
            loss = F.cross_entropy(model(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss) * len(idx)
            if masks is not None:
                apply_masks(model, masks)
        if name and ((epoch + 1) % log_every == 0 or epoch + 1 == epochs):
            log(f"  {name}: epoch {epoch + 1}/{epochs}, mean training loss {total / n:.4f}")
    if channels_last:
        model.to(memory_format=torch.contiguous_format)
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
    return _masks_below_global_threshold(
        mods, np.abs(np.concatenate([m.weight.detach().numpy().ravel() for _, m in mods])), fraction)


def global_lamp_masks(model, fraction):
    """LAMP (layer-adaptive magnitude pruning, Lee et al. 2021): within each
    Conv/Gemm weight, sorted by |w| ascending, a weight's score is w^2 over the
    sum of w'^2 of the layer's weights not smaller than it; ONE global threshold
    on the scores masks the `fraction` of all weights with the lowest scores
    (ties broken by position). Unlike a global threshold on |w|, it does not
    empty layers whose weights are small only because a BatchNormalization
    after them rescales. Returns (masks, threshold on the score)."""
    mods = prunable_modules(model)
    scores = []
    for _, m in mods:
        w2 = m.weight.detach().numpy().ravel().astype(np.float64) ** 2
        order = np.argsort(w2, kind="stable")
        suffix = np.cumsum(w2[order][::-1])[::-1]
        s = np.empty_like(w2)
        s[order] = w2[order] / np.maximum(suffix, np.finfo(np.float64).tiny)
        scores.append(s)
    return _masks_below_global_threshold(mods, np.concatenate(scores), fraction)


def _masks_below_global_threshold(mods, scores, fraction):
    """Masks over the weights of `mods` (concatenated in order, one score per
    weight in `scores`) that drop the `fraction` with the lowest scores, ties
    broken by position. Returns (masks, the highest score dropped)."""
    k = int(round(fraction * scores.size))
    order = np.argsort(scores, kind="stable")
    keep = np.ones(scores.size, dtype=bool)
    keep[order[:k]] = False
    masks, off = {}, 0
    for name, m in mods:
        n = m.weight.numel()
        masks[name] = torch.from_numpy(keep[off:off + n].reshape(tuple(m.weight.shape)).astype(np.float32))
        off += n
    threshold = float(scores[order[k - 1]]) if k > 0 else 0.0
    return masks, threshold


@torch.no_grad()
def apply_masks(model, masks):
    for name, m in prunable_modules(model):
        if name in masks:
            m.weight.mul_(masks[name])


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
    assert list(at.get("dilations", [1, 1])) == [1, 1]
    groups = at.get("group", 1)
    sh, sw = at.get("strides", [1, 1])
    pt, pl, pb, pr = at.get("pads", [0, 0, 0, 0])
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    ho = (h + pt + pb - kh) // sh + 1
    wo = (wd + pl + pr - kw) // sw + 1
    cols = np.empty((n, c, kh, kw, ho, wo), dtype=np.float32)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + sh * ho:sh, j:j + sw * wo:sw]
    if groups == 1:
        y = np.matmul(w.reshape(o, -1), cols.reshape(n, c * kh * kw, ho * wo)).reshape(n, o, ho, wo)
    else:
        cols = cols.reshape(n, groups, cg * kh * kw, ho * wo)
        y = np.matmul(w.reshape(groups, o // groups, cg * kh * kw), cols).reshape(n, o, ho, wo)
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
        elif op == "Constant":
            y = numpy_helper.to_array(at["value"])
        elif op == "Clip":
            lo = x[1] if len(x) > 1 and x[1] is not None else -np.inf
            hi = x[2] if len(x) > 2 and x[2] is not None else np.inf
            y = np.clip(x[0], lo, hi)
        elif op == "Reshape":
            shape = [x[0].shape[i] if d == 0 else int(d) for i, d in enumerate(x[1])]
            y = x[0].reshape(shape)
        elif op == "Transpose":
            y = np.transpose(x[0], at.get("perm"))
        elif op == "Softmax":
            e = np.exp(x[0] - x[0].max(axis=at.get("axis", -1), keepdims=True))
            y = e / e.sum(axis=at.get("axis", -1), keepdims=True)
        elif op == "ReduceMean":
            y = x[0].mean(axis=tuple(at["axes"]), keepdims=bool(at.get("keepdims", 1)))
        elif op == "Pow":
            y = np.power(x[0], x[1])
        elif op == "Sqrt":
            y = np.sqrt(x[0])
        elif op == "Erf":
            y = scipy.special.erf(x[0])
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


def metadata_for(zoo, task, vid, kind, how):
    return {"zooplan.zoo": zoo, "zooplan.task": task, "zooplan.variant": vid, "zooplan.kind": kind,
            "zooplan.made_by": "scripts/make_testdata.py", "zooplan.how": how}


# --------------------------------------------------------------------------
# zoo.json check (hand-written subset of schemas/zoo.schema.json)


def check_zoo_json(z, zoo_dir):
    import re
    name_re = re.compile(r"^[A-Za-z0-9_.-]+$")
    assert set(z) <= {"schema_version", "name", "description", "processors", "tasks"}
    assert z["schema_version"] == 1 and name_re.match(z["name"])
    assert z["processors"]
    for p in z["processors"]:
        assert set(p) <= {"name", "kind", "cores", "profile"} and name_re.match(p["name"])
        assert p["kind"] in ("cpu", "gpu", "npu", "dla", "dsp")
        cores = p.get("cores", [0])
        assert cores and len(set(cores)) == len(cores) and all(isinstance(c, int) and 0 <= c <= 4095 for c in cores)
        assert set(p["profile"]) <= {"source", "file", "threads", "policy", "gemm"}
        assert p["profile"]["source"] in ("host", "ort-json", "trtexec", "openvino-csv", "csv")
        assert p["profile"].get("gemm", "onednn") in ("onednn", "blis")
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
