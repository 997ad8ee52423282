"""The realistic-scale zoo (testdata/realistic): three digit classifiers of
different architecture, each sized so that one inference takes milliseconds on
one core, each with dense, unstructured, structured and INT8 variants.

All three read the same data: sklearn's 8x8 digits in [0,1] with the split of
the small digits zoos. Each model starts by resizing its input bilinearly to
its working resolution (64x64, 80x80 or 48x48) with two MatMuls by fixed
interpolation matrices, so the .npy files stay small while the networks work
at a realistic resolution.

* resnet: ResNet-20 style CNN (stem + 3 stages x 3 basic blocks, 16/32/64
  channels) at 64x64;
* mobilenet: MobileNetV2 style CNN (inverted residuals: 1x1 expand, 3x3
  depthwise, 1x1 linear projection; ReLU6) at 80x80 (at 64x64 its
  structured variants took under 2 ms);
* vit: pre-LayerNorm transformer encoder at 48x48 (convolutional patch
  embedding to 12x12 = 144 tokens of width 96, 4 layers, 4 heads, GELU MLP,
  mean pooling).

Variants per task: dense; u50/u75/u90 (gradual global LAMP pruning with masked
fine-tuning); s25/s50 (structured: block-internal channels/units removed,
the next layer re-fitted by ridge least squares); int8 (per-channel INT8
weights in QDQ form).
"""

import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from testdata.common import (CALIB_SAMPLES, IR_VERSIONS, PROCESSORS, BasicBlock, _lstsq_refit, apply_masks, export_onnx,
                             global_lamp_masks, load_task_data, log, metadata_for, node_signature,
                             onnx_weight_sparsity, ort_eval, prunable_modules, quantize_weights_qdq,
                             run_onnx_numpy, setup_determinism, top1, torch_logits, train, with_weights)

ZOO = "realistic"
DESCRIPTION = ("Realistic-scale zoo: sklearn digits classified by a ResNet-20 style CNN (64x64), a MobileNetV2 style "
               "CNN (80x80) and a small vision transformer (48x48), each resized in the model from 8x8; "
               "dense, global unstructured LAMP pruning (50/75/90%), structured pruning of "
               "block-internal channels/units (25/50%) and INT8 QDQ variants.")

STRUCT_RIDGE = 1e-3
REFIT_SAMPLES = 256      # training samples whose activations drive structured pruning
REFIT_ROWS = 32768       # (sample, position) rows of the least-squares re-fit
NUMPY_CHUNK = 50         # test samples per numpy-reference batch (bounds its memory)

# --------------------------------------------------------------------------
# building blocks


def bilinear_matrix(src, dst):
    """[dst, src] matrix M with M @ v = F.interpolate(v, dst, mode="linear",
    align_corners=False) for a length-src vector v (2-D bilinear is separable)."""
    eye = torch.eye(src, dtype=torch.float32).reshape(src, 1, src)
    return F.interpolate(eye, size=dst, mode="linear", align_corners=False)[:, 0, :].T.contiguous()


class Upsample(nn.Module):
    """Bilinear resize of [B,1,8,8] to [B,1,S,S]: rows[S,8] @ x @ cols[8,S]
    (two MatMul nodes with constant matrices)."""

    def __init__(self, src, dst):
        super().__init__()
        m = bilinear_matrix(src, dst)
        self.register_buffer("rows", m)
        self.register_buffer("cols", m.T.contiguous())

    def forward(self, x):
        return torch.matmul(torch.matmul(self.rows, x), self.cols)


class ResNet(nn.Module):
    """Upsample, stem conv3x3+BN+ReLU, stages of basic blocks (the first block
    of every stage after the first has stride 2), GAP, Flatten, Gemm."""

    def __init__(self, size, stem, stages, inner=None, classes=10):
        super().__init__()
        widths = [w for w, n in stages for _ in range(n)]
        inner = list(widths) if inner is None else list(inner)
        self.arch = {"kind": "resnet", "size": size, "stem": stem, "stages": [list(s) for s in stages],
                     "inner": inner, "classes": classes}
        self.upsample = Upsample(8, size)
        self.stem_conv = nn.Conv2d(1, stem, 3, 1, 1, bias=False)
        self.stem_bn = nn.BatchNorm2d(stem)
        self.stem_relu = nn.ReLU()
        cin, i = stem, 0
        for si, (w, n) in enumerate(stages):
            for b in range(n):
                stride = 2 if (si > 0 and b == 0) else 1
                setattr(self, f"block{i + 1}", BasicBlock(cin, inner[i], w, stride))
                cin, i = w, i + 1
        self.nblocks = i
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(cin, classes)

    def blocks(self):
        return [getattr(self, f"block{i + 1}") for i in range(self.nblocks)]

    def forward(self, x):
        x = self.stem_relu(self.stem_bn(self.stem_conv(self.upsample(x))))
        for b in self.blocks():
            x = b(x)
        return self.fc(self.flatten(self.pool(x)))


class InvertedResidual(nn.Module):
    """1x1 expand (cin->hidden) BN ReLU6, 3x3 depthwise (stride) BN ReLU6, 1x1
    project (hidden->cout) BN, + x when stride 1 and cin == cout. Structured
    pruning changes hidden."""

    def __init__(self, cin, hidden, cout, stride):
        super().__init__()
        self.expand_conv = nn.Conv2d(cin, hidden, 1, 1, 0, bias=False)
        self.expand_bn = nn.BatchNorm2d(hidden)
        self.expand_relu = nn.ReLU6()
        self.dw_conv = nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False)
        self.dw_bn = nn.BatchNorm2d(hidden)
        self.dw_relu = nn.ReLU6()
        self.project_conv = nn.Conv2d(hidden, cout, 1, 1, 0, bias=False)
        self.project_bn = nn.BatchNorm2d(cout)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        h = self.expand_relu(self.expand_bn(self.expand_conv(x)))
        h = self.dw_relu(self.dw_bn(self.dw_conv(h)))
        h = self.project_bn(self.project_conv(h))
        return h + x if self.residual else h


class MobileNet(nn.Module):
    """Upsample, stem conv3x3+BN+ReLU6, inverted residual blocks given as
    (cout, expansion, repeats, first stride), 1x1 head conv+BN+ReLU6, GAP,
    Flatten, Gemm."""

    def __init__(self, size, stem, blocks, head, inner=None, classes=10):
        super().__init__()
        plan, cin = [], stem
        for cout, t, n, s in blocks:
            for r in range(n):
                plan.append((cin, cin * t, cout, s if r == 0 else 1))
                cin = cout
        inner = [p[1] for p in plan] if inner is None else list(inner)
        self.arch = {"kind": "mobilenet", "size": size, "stem": stem, "blocks": [list(b) for b in blocks],
                     "head": head, "inner": inner, "classes": classes}
        self.upsample = Upsample(8, size)
        self.stem_conv = nn.Conv2d(1, stem, 3, 1, 1, bias=False)
        self.stem_bn = nn.BatchNorm2d(stem)
        self.stem_relu = nn.ReLU6()
        for i, ((ci, _, co, st), hid) in enumerate(zip(plan, inner)):
            setattr(self, f"block{i + 1}", InvertedResidual(ci, hid, co, st))
        self.nblocks = len(plan)
        self.head_conv = nn.Conv2d(cin, head, 1, 1, 0, bias=False)
        self.head_bn = nn.BatchNorm2d(head)
        self.head_relu = nn.ReLU6()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(head, classes)

    def blocks(self):
        return [getattr(self, f"block{i + 1}") for i in range(self.nblocks)]

    def forward(self, x):
        x = self.stem_relu(self.stem_bn(self.stem_conv(self.upsample(x))))
        for b in self.blocks():
            x = b(x)
        x = self.head_relu(self.head_bn(self.head_conv(x)))
        return self.fc(self.flatten(self.pool(x)))


class Attention(nn.Module):
    """Multi-head self-attention over tokens kept as a [B*T, d] matrix, so that
    every projection exports as one Gemm (transB=1); reshapes use constant
    shapes (no Shape nodes)."""

    def __init__(self, d, heads, tokens):
        super().__init__()
        self.d, self.h, self.t, self.dk = d, heads, tokens, d // heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        q = self.q(x).reshape(-1, self.t, self.h, self.dk).transpose(1, 2)     # [B,h,T,dk]
        k = self.k(x).reshape(-1, self.t, self.h, self.dk).permute(0, 2, 3, 1)  # [B,h,dk,T]
        v = self.v(x).reshape(-1, self.t, self.h, self.dk).transpose(1, 2)     # [B,h,T,dk]
        a = torch.softmax(torch.matmul(q, k) * (self.dk ** -0.5), dim=-1)
        y = torch.matmul(a, v).transpose(1, 2).reshape(-1, self.d)
        return self.out(y)


class EncoderLayer(nn.Module):
    """Pre-LN: x + attn(ln1(x)), then x + fc2(gelu(fc1(ln2(x)))). Structured
    pruning changes the MLP width (fc1 outputs, fc2 inputs)."""

    def __init__(self, d, heads, mlp, tokens):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads, tokens)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, mlp)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(mlp, d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class ViT(nn.Module):
    """Upsample, convolutional patch embedding (two 3x3 stride-2 convs: one
    token per 4x4 patch, each seeing 7x7 pixels; early convolutions make a
    transformer trainable on a dataset this small), learned position embedding, pre-LN encoder
    layers, final LayerNorm, mean over tokens, Gemm."""

    def __init__(self, size, stem, d, heads, mlp, layers, inner=None, classes=10):
        super().__init__()
        inner = [mlp] * layers if inner is None else list(inner)
        self.arch = {"kind": "vit", "size": size, "stem": stem, "d": d, "heads": heads, "mlp": mlp,
                     "layers": layers, "inner": inner, "classes": classes}
        self.d, self.t = d, (size // 4) ** 2
        self.upsample = Upsample(8, size)
        self.patch_conv1 = nn.Conv2d(1, stem, 3, 2, 1, bias=False)
        self.patch_bn = nn.BatchNorm2d(stem)
        self.patch_relu = nn.ReLU()
        self.patch_conv2 = nn.Conv2d(stem, d, 3, 2, 1)
        self.pos = nn.Parameter(torch.randn(self.t, d) * 0.02)
        for i, f in enumerate(inner):
            setattr(self, f"layer{i + 1}", EncoderLayer(d, heads, f, self.t))
        self.nblocks = layers
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def blocks(self):
        return [getattr(self, f"layer{i + 1}") for i in range(self.nblocks)]

    def forward(self, x):
        x = self.patch_relu(self.patch_bn(self.patch_conv1(self.upsample(x))))
        x = self.patch_conv2(x).reshape(-1, self.d, self.t).transpose(1, 2) + self.pos
        x = x.reshape(-1, self.d)
        for b in self.blocks():
            x = b(x)
        x = self.ln(x).reshape(-1, self.t, self.d).mean(dim=1)
        return self.head(x)


def build_model(arch, inner=None):
    a = arch
    if a["kind"] == "resnet":
        return ResNet(a["size"], a["stem"], a["stages"], inner)
    if a["kind"] == "mobilenet":
        return MobileNet(a["size"], a["stem"], a["blocks"], a["head"], inner)
    return ViT(a["size"], a["stem"], a["d"], a["heads"], a["mlp"], a["layers"], inner)


# --------------------------------------------------------------------------
# structured pruning


def _parts(model, block):
    """(module whose output feeds the re-fitted layer, the re-fitted layer,
    its kernel size and padding) of one block."""
    kind = model.arch["kind"]
    if kind == "resnet":
        return block.relu1, block.conv2, 3, 1
    if kind == "mobilenet":
        return block.dw_relu, block.project_conv, 1, 0
    return block.act, block.fc2, 1, 0


@torch.no_grad()
def _activations(model, x, module):
    acts = []
    h = module.register_forward_hook(lambda mod, i, o: acts.append(o.detach().clone()))
    model.eval()
    for i in range(0, len(x), 64):
        model(torch.from_numpy(x[i:i + 64]))
    h.remove()
    return torch.cat(acts)


@torch.no_grad()
def _refit_rows(a, kp, w, k, pad, gen):
    """Rows (inputs of the kept units, original output) for the least-squares
    re-fit of layer weight `w` reading activations `a`, on REFIT_ROWS random
    (sample, position) pairs."""
    if a.dim() == 2:  # tokens x units
        sel = torch.randperm(a.shape[0], generator=gen)[:REFIT_ROWS].sort().values
        return a[sel][:, kp], a[sel] @ w.T
    n, _, hh, ww = a.shape
    per = max(1, REFIT_ROWS // n)
    xs, ys = [], []
    for i in range(0, n, 16):
        chunk = a[i:i + 16]
        target = F.conv2d(chunk, w, None, 1, pad).flatten(2)                  # [c, O, HW]
        cols = F.unfold(chunk[:, kp], k, padding=pad) if k > 1 else chunk[:, kp].flatten(2)
        for j in range(chunk.shape[0]):
            pos = torch.randperm(hh * ww, generator=gen)[:per].sort().values
            xs.append(cols[j][:, pos].T)
            ys.append(target[j][:, pos].T)
    return torch.cat(xs), torch.cat(ys)


def _fold_bias(sd, kind, p, bias):
    """Add `bias` to the output of the re-fitted layer of block prefix `p`."""
    if kind == "resnet":
        sd[p + "bn2.running_mean"] = sd[p + "bn2.running_mean"] - bias
    elif kind == "mobilenet":
        sd[p + "project_bn.running_mean"] = sd[p + "project_bn.running_mean"] - bias
    else:
        sd[p + "fc2.bias"] = sd[p + "fc2.bias"] + bias


def _select(sd, kind, p, kp):
    """Keep units `kp` in every parameter of block prefix `p` that has one
    entry per inner unit (the producers' outputs, BN entries, depthwise filters)."""
    if kind == "resnet":
        names = ["conv1.weight"] + [f"bn1.{s}" for s in ("weight", "bias", "running_mean", "running_var")]
    elif kind == "mobilenet":
        names = ["expand_conv.weight", "dw_conv.weight"] + [
            f"{bn}.{s}" for bn in ("expand_bn", "dw_bn") for s in ("weight", "bias", "running_mean", "running_var")]
    else:
        names = ["fc1.weight", "fc1.bias"]
    for n in names:
        sd[p + n] = sd[p + n][kp]


@torch.no_grad()
def structured_prune(model, fraction, x_train, refit=True, seed=0):
    """Remove `fraction` of the inner units of every block, block by block (later
    blocks see the already pruned earlier ones). A unit's score is Var(a_c) *
    ||W_next[:, c]||^2 over REFIT_SAMPLES training samples; the lowest go. The
    next layer (resnet conv2, mobilenet project_conv, vit fc2) is then re-fitted
    on the kept units by ridge least squares to reproduce its original output
    (refit=True), or only the removed units' mean contribution is folded into
    its bias (refit=False). No gradient training."""
    model = copy.deepcopy(model).eval()
    kind = model.arch["kind"]
    gen = torch.Generator().manual_seed(seed)
    xs = x_train[:REFIT_SAMPLES]
    info = []
    for bi in range(model.nblocks):
        block = model.blocks()[bi]
        if kind == "mobilenet" and not block.residual:
            # A block without a skip has cut points inside it (its expanded tensor is the one
            # tensor crossing there); keeping its width the same in every variant keeps every
            # stitched combination valid wherever the partition cuts.
            continue
        act_mod, nxt, k, pad = _parts(model, block)
        a = _activations(model, xs, act_mod)
        red = (0,) if a.dim() == 2 else (0, 2, 3)
        var = a.var(dim=red, unbiased=False)
        w = nxt.weight.detach()
        wnorm = (w ** 2).sum(dim=tuple(d for d in range(w.dim()) if d != 1))
        e = a.shape[1]
        order = np.argsort((var * wnorm).numpy(), kind="stable")
        n_remove = int(round(fraction * e))
        kp = torch.from_numpy(np.sort(order[n_remove:]))
        rm = torch.from_numpy(np.sort(order[:n_remove]))
        if refit:
            xr, yr = _refit_rows(a, kp, w, k, pad, gen)
            wfit, bias = _lstsq_refit(xr, yr, STRUCT_RIDGE)
            new_w = wfit.T.reshape((w.shape[0], len(kp)) + tuple(w.shape[2:])).contiguous()
        else:
            new_w = w[:, kp].contiguous()
            if a.dim() == 2:
                bias = (a[:, rm] @ w[:, rm].T).mean(dim=0)
            else:
                bias = F.conv2d(a[:, rm], w[:, rm], None, 1, pad).mean(dim=(0, 2, 3))
        inner = list(model.arch["inner"])
        inner[bi] = len(kp)
        new_model = build_model(model.arch, inner)
        sd = {key: v.clone() for key, v in model.state_dict().items()}
        p = f"{'layer' if kind == 'vit' else 'block'}{bi + 1}."
        _select(sd, kind, p, kp)
        sd[p + ("fc2.weight" if kind == "vit" else
                "conv2.weight" if kind == "resnet" else "project_conv.weight")] = new_w
        _fold_bias(sd, kind, p, bias)
        new_model.load_state_dict(sd)
        model = new_model.eval()
        info.append({"block": p[:-1], "inner_before": int(e), "inner_after": int(len(kp))})
    return model, info


# --------------------------------------------------------------------------
# one task


def numpy_logits(m, x):
    return np.concatenate([run_onnx_numpy(m, {"input": x[i:i + NUMPY_CHUNK]})[0]
                           for i in range(0, len(x), NUMPY_CHUNK)])


def make_variants(task, cfg, xtr, ytr, xte, yte):
    """Train the dense model and derive the variants. Returns a list of dicts
    (id, kind, precision, model, logits, how, extra)."""
    zoo, gname, shape = ZOO, f"{ZOO}_{task}", (1, 1, 8, 8)
    setup_determinism()
    torch.manual_seed(cfg["seed"])
    dense = build_model(cfg["arch"])
    log(f"{zoo}/{task}: training dense {dense.arch} "
        f"({sum(p.numel() for p in dense.parameters())} parameters) on {len(xtr)} samples")
    tr = cfg["train"]
    train(dense, xtr, ytr, **tr, seed=cfg["seed"], name=f"{task}/dense", log_every=1)
    variants = []

    def add(vid, kind, precision, m, logits, how, extra=None):
        variants.append({"id": vid, "kind": kind, "precision": precision, "model": m,
                         "logits": logits, "how": how, "extra": extra or {}})
        log(f"  {task}/{vid}: torch top-1 {top1(logits, yte):.4f}")

    how = (f"trained from scratch: Adam lr={tr['lr']} (cosine), weight_decay=1e-4, {tr['epochs']} epochs, "
           f"batch {tr['batch']}, seed {cfg['seed']}")
    m_dense = export_onnx(dense, shape, gname, metadata_for(zoo, task, "dense", "dense", how))
    add("dense", "dense", "fp32", m_dense, torch_logits(dense, xte), how)

    n_weights = sum(m.weight.numel() for _, m in prunable_modules(dense))
    prev, prev_id = dense, "dense"
    for frac in cfg["unstructured"]:
        vid = f"u{int(round(frac * 100))}"
        oneshot_model = copy.deepcopy(dense)
        apply_masks(oneshot_model, global_lamp_masks(oneshot_model, frac)[0])
        oneshot = top1(torch_logits(oneshot_model, xte), yte)
        pm = copy.deepcopy(prev)
        masks, thr = global_lamp_masks(pm, frac)
        apply_masks(pm, masks)
        before_ft = top1(torch_logits(pm, xte), yte)
        ft = cfg["finetune"]
        train(pm, xtr, ytr, **ft, seed=cfg["seed"] + 1000 + int(round(frac * 100)), masks=masks, name=f"{task}/{vid}",
              log_every=1)
        apply_masks(pm, masks)
        how = (f"gradual global LAMP pruning from {prev_id}: one threshold ({thr:.6g}) on the layer-adaptive "
               f"magnitude scores w^2/sum(w'^2 >= w^2 in its layer) of all {n_weights} Conv/Gemm weights zeroes "
               f"{frac:.0%} of them; then fine-tune {ft['epochs']} epochs "
               f"with the mask fixed (Adam lr={ft['lr']} cosine, batch {ft['batch']})")
        m = export_onnx(pm, shape, gname, metadata_for(zoo, task, vid, "unstructured", how))
        add(vid, "unstructured", "fp32", m, torch_logits(pm, xte), how,
            {"pruned_from": prev_id, "threshold": thr, "accuracy_before_finetune": before_ft,
             "accuracy_oneshot_from_dense_no_finetune": oneshot})
        prev, prev_id = pm, vid

    what = {"resnet": "conv1 output channels of every basic block (conv2 re-fitted, bias into bn2)",
            "mobilenet": "expanded channels of every inverted residual block with a skip connection (expand conv, "
                         "depthwise conv and their BN; project conv re-fitted, bias into project_bn)",
            "vit": "MLP hidden units of every encoder layer (fc1 outputs; fc2 re-fitted, bias into fc2)"}
    for frac in cfg["structured"]:
        vid = f"s{int(round(frac * 100))}"
        sm, info = structured_prune(dense, frac, xtr, refit=True, seed=cfg["seed"])
        meanfold = top1(torch_logits(structured_prune(dense, frac, xtr, refit=False)[0], xte), yte)
        n_after = sum(m.weight.numel() for _, m in prunable_modules(sm))
        how = (f"structured: removed {frac:.0%} of the {what[cfg['arch']['kind']]}, lowest Var(a)*||W_next||^2 "
               f"first; the next layer re-fitted on the kept units by ridge least squares (ridge {STRUCT_RIDGE:g}, "
               f"{REFIT_ROWS} sample-position rows from {REFIT_SAMPLES} training samples) to reproduce its "
               f"original output; no gradient training")
        m = export_onnx(sm, shape, gname, metadata_for(zoo, task, vid, "structured", how))
        add(vid, "structured", "fp32", m, torch_logits(sm, xte), how,
            {"blocks": info, "weights_removed_fraction": 1.0 - n_after / n_weights,
             "accuracy_meanfold_only_no_refit": meanfold})

    how = ("INT8 weights in QDQ form: per-output-channel symmetric scale max|W|/127, int8 zero point 0, "
           "DequantizeLinear(axis=0) before each Conv/Gemm; activations fp32")
    m_int8, deq = quantize_weights_qdq(m_dense, gname, metadata_for(zoo, task, "int8", "quantized", how))
    add("int8", "quantized", "int8", m_int8, torch_logits(with_weights(dense, deq), xte), how)
    return dense, variants


def build_task(zoo_dir, task, cfg, data, use_ort, tmpdir):
    """Train, derive, check, write one task. Returns (zoo.json task entry, accuracy record)."""
    xtr, xte, ytr, yte, rel = data
    model_dir = os.path.join(zoo_dir, "models", task)
    os.makedirs(model_dir, exist_ok=True)
    dense, variants = make_variants(task, cfg, xtr, ytr, xte, yte)
    ref_sig = node_signature(variants[0]["model"])
    entry = {"name": task, "description": cfg["description"], "variants": [],
             "dataset": {"inputs": rel["inputs"], "labels": rel["labels"], "calibration": rel["calibration"],
                         "metric": "top1"}}
    rec = {"task": task, "test_samples": int(len(yte)), "train_samples": int(len(xtr)),
           "architecture": dense.arch, "parameters": int(sum(p.numel() for p in dense.parameters())),
           "variants": []}
    for v in variants:
        m = v["model"]
        assert node_signature(m) == ref_sig, f"{task}/{v['id']}: node names differ from dense"
        onnx_logits = numpy_logits(m, xte)
        diff = float(np.max(np.abs(onnx_logits - v["logits"])))
        agree = float(np.mean(np.argmax(onnx_logits, 1) == np.argmax(v["logits"], 1)))
        tol = 1e-3
        if diff > tol * max(1.0, float(np.max(np.abs(v["logits"])))) or agree < 1.0:
            raise SystemExit(f"make_testdata: {task}/{v['id']}: ONNX (numpy reference) differs from torch: "
                             f"max |diff| {diff:.3g}, argmax agreement {agree:.4f}")
        path = os.path.join(model_dir, v["id"] + ".onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        IR_VERSIONS.add(m.ir_version)
        sparsity = onnx_weight_sparsity(m)
        r = {"id": v["id"], "kind": v["kind"], "precision": v["precision"], "sparsity": round(sparsity, 6),
             "onnx_bytes": os.path.getsize(path),
             "top1_torch": round(top1(v["logits"], yte), 6), "top1_onnx_numpy": round(top1(onnx_logits, yte), 6),
             "top1_ort": None, "ort_logits_close_to_torch": None, "how": v["how"]}
        for key, val in v["extra"].items():
            r[key] = round(val, 6) if isinstance(val, float) else val
        if use_ort:
            res, ort_logits = ort_eval(path, os.path.join(zoo_dir, rel["inputs"]),
                                       os.path.join(zoo_dir, rel["labels"]), tmpdir)
            r["top1_ort"] = round(res["top1"], 6)
            r["ort_logits_close_to_torch"] = bool(np.allclose(ort_logits, v["logits"], atol=tol, rtol=tol))
            log(f"  {task}/{v['id']}: torch {r['top1_torch']:.4f}  onnx-numpy {r['top1_onnx_numpy']:.4f}  "
                f"ORT {r['top1_ort']:.4f}  sparsity {sparsity:.4f}  "
                f"max|ORT-torch| {float(np.max(np.abs(ort_logits - v['logits']))):.2e}")
        rec["variants"].append(r)
        entry["variants"].append({"id": v["id"], "onnx": f"models/{task}/{v['id']}.onnx", "kind": v["kind"],
                                  "sparsity": round(sparsity, 6), "precision": v["precision"]})
    return entry, rec


def write_data(zoo_dir):
    """The digits split of the small zoos, as [N,1,8,8] float32 in [0,1]."""
    xtr, xte, ytr, yte = load_task_data("digits")
    data_dir = os.path.join(zoo_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    rel = {"inputs": "data/digits_test_x.npy", "labels": "data/digits_test_y.npy",
           "calibration": "data/digits_calib_x.npy"}
    np.save(os.path.join(zoo_dir, rel["inputs"]), xte)
    np.save(os.path.join(zoo_dir, rel["labels"]), yte)
    np.save(os.path.join(zoo_dir, rel["calibration"]), np.ascontiguousarray(xtr[:CALIB_SAMPLES]))
    return xtr, xte, ytr, yte, rel


# --------------------------------------------------------------------------
# configuration

LEVELS = {"unstructured": [0.5, 0.75, 0.9], "structured": [0.25, 0.5]}

TASKS = {
    "resnet": dict(
        seed=21, arch={"kind": "resnet", "size": 64, "stem": 16, "stages": [[16, 3], [32, 3], [64, 3]]},
        train={"epochs": 4, "lr": 2e-3, "batch": 32}, finetune={"epochs": 1, "lr": 5e-4, "batch": 32},
        description="handwritten digits, input [1,1,8,8] in [0,1] resized in the model to 64x64; ResNet-20 style "
                    "CNN (stem + 9 basic blocks, 16/32/64 channels, GAP, Gemm)", **LEVELS),
    "mobilenet": dict(
        seed=22, arch={"kind": "mobilenet", "size": 80, "stem": 32,
                       "blocks": [[16, 1, 1, 1], [24, 6, 2, 2], [32, 6, 3, 2], [64, 6, 3, 2], [96, 6, 2, 1]],
                       "head": 256},
        train={"epochs": 3, "lr": 2e-3, "batch": 32, "channels_last": True},
        finetune={"epochs": 1, "lr": 5e-4, "batch": 32, "channels_last": True},
        description="handwritten digits, input [1,1,8,8] in [0,1] resized in the model to 80x80; MobileNetV2 style "
                    "CNN (11 inverted residual blocks with depthwise 3x3 convs, ReLU6, 1x1 head, GAP, Gemm)",
        **LEVELS),
    "vit": dict(
        seed=23, arch={"kind": "vit", "size": 48, "stem": 32, "d": 96, "heads": 4, "mlp": 192, "layers": 4},
        train={"epochs": 12, "lr": 1e-3, "batch": 32}, finetune={"epochs": 2, "lr": 3e-4, "batch": 32},
        description="handwritten digits, input [1,1,8,8] in [0,1] resized in the model to 48x48; vision "
                    "transformer encoder (convolutional patch embedding to 144 tokens of width 96, 4 pre-LN layers "
                    "with 4 heads and a GELU MLP of 192, mean pooling, Gemm)", **LEVELS),
}


def _build_task_job(args):
    zoo_dir, task, data, use_ort, tmpdir = args
    task_tmp = os.path.join(tmpdir, task)
    os.makedirs(task_tmp, exist_ok=True)
    return build_task(zoo_dir, task, TASKS[task], data, use_ort, task_tmp)


def build_zoo(out_dir, use_ort, tmpdir, tasks=None, jobs=1):
    """Writes testdata/realistic (models, data, zoo.json, accuracy_measured.json).
    With jobs > 1 the tasks train in that many processes at once (each single-
    threaded and seeded from its own configuration alone, so the files do not
    depend on jobs). Returns (zoo.json object, accuracy records)."""
    zoo_dir = os.path.join(out_dir, ZOO)
    os.makedirs(zoo_dir, exist_ok=True)
    data = write_data(zoo_dir)
    work = [(zoo_dir, task, data, use_ort, tmpdir) for task in TASKS if not tasks or task in tasks]
    if jobs > 1:
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(min(jobs, len(work))) as pool:
            results = pool.map(_build_task_job, work, chunksize=1)
    else:
        results = [_build_task_job(w) for w in work]
    entries = [e for e, _ in results]
    recs = [r for _, r in results]
    z = {"schema_version": 1, "name": ZOO, "description": DESCRIPTION,
         "processors": copy.deepcopy(PROCESSORS), "tasks": entries}
    return z, recs


# --------------------------------------------------------------------------
# README parts


README_LAYOUT = (
    "| `realistic/zoo.json` | manifest with processors cpu/npu (profile source `host`: kernel policy default/sparse, GEMM oneDNN/BLIS, one thread each, pinned to cores 0/1 as in the other zoos) and tasks resnet, mobilenet, vit |\n"
    "| `realistic/models/<task>/<id>.onnx` | the variants of each task's model |\n"
    "| `realistic/data/digits_test_x.npy`, `digits_test_y.npy`, `digits_calib_x.npy` | the digits split above (8x8 inputs; the models resize them), shared by all three tasks |\n"
    "| `realistic/accuracy_measured.json` | as for digits, plus each model's parameter count, file size and structured-pruning widths |\n"
    "| `realistic/latency_measured.json` | warm latency of every variant on each processor (written by `scripts/measure_zoo_latency.py`, not by this script) |\n")

README_MODELS = (
    "* **realistic zoo** (`scripts/testdata/realistic.py`): three digit classifiers sized so that one\n"
    "  inference takes milliseconds on one core. Each takes the 8x8 digits and first resizes them\n"
    "  bilinearly (align_corners=False) inside the model with two `MatMul` nodes by constant\n"
    "  interpolation matrices (`/upsample/MatMul`, `/upsample/MatMul_1`; the runtime has no `Resize`),\n"
    "  so the data files stay small while the networks work at 64x64, 80x80 or 48x48.\n"
    "  * `resnet`: ResNet-20 style at 64x64: stem Conv3x3(1->16)+BN+ReLU, 9 basic blocks (3 per stage,\n"
    "    16/32/64 channels, stride 2 and 1x1 conv + BN projection at the start of stages 2 and 3), GAP,\n"
    "    Gemm. Cut points are the block outputs `/block{1..9}/relu2/Relu_output_0` (and the stem's and\n"
    "    upsampling's outputs, as in every task).\n"
    "  * `mobilenet`: MobileNetV2 style at 80x80: stem Conv3x3(1->32)+BN+ReLU6 (Clip), 11 inverted\n"
    "    residual blocks (1x1 expand conv+BN+ReLU6, 3x3 depthwise conv (group = channels)+BN+ReLU6,\n"
    "    1x1 linear projection+BN, Add skip where shapes match; (out, expansion, repeats, stride) =\n"
    "    (16,1,1,1) (24,6,2,2) (32,6,3,2) (64,6,3,2) (96,6,2,1)), 1x1 head conv to 256+BN+ReLU6, GAP, Gemm.\n"
    "    Cut points (one tensor crossing) are the block outputs (`/block{i}/Add_output_0` or\n"
    "    `/block{i}/project_bn/BatchNormalization_output_0`) and, in the 5 blocks without a skip, also\n"
    "    the expand and depthwise ReLU6 outputs inside them (`/block{i}/expand_relu/Clip_output_0`, ...).\n"
    "  * `vit`: vision transformer at 48x48: convolutional patch embedding (Conv3x3(1->32, stride 2)+BN+ReLU,\n"
    "    Conv3x3(32->96, stride 2): 12x12 = 144 tokens, one per 4x4 patch; a plain 4x4 stride-4 patch Conv\n"
    "    trained to only ~95% on these 1347 samples), learned position embedding (`pos`), 4 pre-LN\n"
    "    encoder layers (LayerNorm exported at opset 13 as\n"
    "    ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add; 4-head attention with q/k/v/out projections; GELU (Erf) MLP\n"
    "    96->192->96; residual Adds), final LayerNorm, mean over tokens (ReduceMean), Gemm. Tokens are\n"
    "    kept as a [144, 96] matrix so every projection is a `Gemm` (transB=1). Cut points include the\n"
    "    layer outputs `/layer{1..4}/Add_1_output_0`, the attention residuals `/layer{1..4}/Add_output_0`\n"
    "    and the patch embedding's outputs.\n"
    "  All variants of a task have the same node names and the same cut points (structured pruning\n"
    "  changes only widths inside blocks no cut point lies in), so `zoo-stitch` partitions and stitches\n"
    "  them at any of the common cut points.\n")

README_VARIANTS = (
    "* realistic zoo: u50/u75/u90 are gradual as above over all Conv/Gemm weights (depthwise convs,\n"
    "  patch embedding and classifier included; not the constant upsampling matrices), but the one\n"
    "  global threshold is on LAMP scores (Lee et al. 2021: within a layer, sorted by |w|, w^2 over the\n"
    "  sum of w'^2 of the layer's weights not smaller), not on |w|: with BatchNormalization after most\n"
    "  convs, a layer's weight scale is arbitrary, and a global |w| threshold emptied MobileNet's\n"
    "  projection convs (99.9% zeros; u90 fell to 47% after fine-tuning). s25/s50 and int8 as above,\n"
    "  except that structured pruning removes, block by block: resnet the conv1 output channels of every\n"
    "  basic block (conv2 re-fitted, bias into bn2); mobilenet the expanded channels of the 6 inverted\n"
    "  residuals with a skip connection (expand conv, depthwise conv and both BNs; project conv re-fitted,\n"
    "  bias into project_bn; the 5 blocks without a skip keep their width because cut points lie inside\n"
    "  them, so every stitched combination stays valid);\n"
    "  vit the MLP hidden units of every layer (fc1 outputs; fc2 re-fitted, bias into fc2; attention is\n"
    "  untouched). Scores and re-fit use 256 training samples, the least squares 32768 random\n"
    "  (sample, position) rows. Block and layer input/output widths do not change.\n")

README_TRAINING_TIME = (
    "1 h 55 min with `--jobs 3` on the shared 2-core machine it was made on (load average 10-17 from\n"
    "other work, and a second regeneration running at the same time to check that the files come out\n"
    "byte-identical; they did); the MobileNet is the slowest task (depthwise convolutions train slowly\n"
    "on CPU, and the numpy reference check of each of its variants takes minutes)")

README_PIPELINE = (
    "## Pipeline on the realistic zoo\n\n"
    "```\n"
    "build/bin/zoo-stitch testdata/realistic/zoo.json -o out/stitch   # 2 positions (one per processor): 49 combinations per task\n"
    "build/bin/zoo-profile out/stitch -o out/profile --jobs 2         # full profile\n"
    "build/bin/plan-solve out/profile -o out/plan.json --slo grid\n"
    "build/bin/plan-emit out/plan.json -o out/bundle\n"
    "build/bin/plan-run out/bundle\n"
    "```\n\n"
    "zoo-profile's time goes mostly into accuracy: by default (under `--exhaustive-limit`) it runs every\n"
    "stitched variant on all 450 test digits, (7 + 49) x 450 subgraph passes per task besides the 7\n"
    "originals whole, and one pass takes milliseconds here. Measured on the 2-core machine this zoo was\n"
    "made on, with other work running (load average 5-12): the full profile with `--jobs 2` took\n"
    "582 s (227 s of CPU time); the quick settings of `tests/cli/pipeline_realistic.sh` (`--repeat 5\n"
    "--warmup 1 --latency-validation 4 --exhaustive-limit 0 --training-fraction 0.3 --jobs 2`) took\n"
    "420 s with the full profile running beside them, and 199 s with `--training-fraction 0.15`.\n"
    "The knobs, largest saving first: `--exhaustive-limit 0` (measure only the training sample,\n"
    "the XGBoost estimator predicts the rest), `--training-fraction` (0.15 keeps only the 7\n"
    "originals at 49 combinations: in one run the plan then chose mobilenet s50+u90 at a predicted\n"
    "0.958 that scored 0.60 on 40 digits; with 0.3 the chosen variants came within 0.12 of their\n"
    "prediction), `--repeat`/`--warmup` (timed and untimed runs per latency row),\n"
    "`--latency-validation` (stitched variants timed end to end), `--jobs` (accuracy threads).\n\n"
    "ctest: `cli.zoo_stitch_realistic` (label `realistic`, in the default suite: stitching at 2 and 3\n"
    "positions, ONNX Runtime equivalence, an accuracy sanity check) and `cli.pipeline_realistic` (labels\n"
    "`realistic;slow`, the whole pipeline with the quick knobs; `ctest -LE slow` leaves it out).\n")

README_LIMITS = (
    "* realistic zoo: the three tasks share one test split (450 digits; one sample is 0.22 points), and\n"
    "  the digits are 8x8 images upsampled in the model: the networks are realistic in size and cost,\n"
    "  not in the information their inputs carry.\n"
    "* realistic zoo: training is short (resnet 4 epochs, mobilenet 3, vit 12; one fine-tuning epoch\n"
    "  per pruning level for the CNNs, two for the ViT) so that the zoo regenerates within about two\n"
    "  hours on a shared 2-core machine. The ViT (about 90% dense) and MobileNet's u90 would gain from\n"
    "  longer training, and resnet's s50 loses most of all because its re-fit is followed by no\n"
    "  training (see the accuracy tables). The spread is useful to the planner: SLO configurations\n"
    "  that only some variants meet.\n"
    "* realistic zoo: its processors `cpu` and `npu` are two kernel policies of zooplan's runtime on\n"
    "  the host CPU (dense GEMM-based `default` with oneDNN on core 0, CSR `sparse` with BLIS on core 1),\n"
    "  one thread each, as in the other zoos; `npu` stands in for a\n"
    "  sparsity-exploiting accelerator and is no device. Under `sparse`, dense weights run slower than\n"
    "  with `default` (most of all for the ViT's Gemms), so that processor pays off only for highly\n"
    "  sparse variants. Latencies were measured on a 2-core machine shared with other work; the\n"
    "  latency file records the load average before and after. They were measured before the\n"
    "  processors were pinned to cores and `npu` took BLIS as its GEMM (its sparse kernels do not use\n"
    "  it; its dense fallbacks do): `scripts/measure_zoo_latency.py` now passes each processor's GEMM.\n"
    "* realistic zoo: MobileNet's structured variants thin only the 6 inverted residuals with a skip\n"
    "  (cut points lie inside the other 5), so they remove fewer weights than the level suggests\n"
    "  (`weights_removed_fraction`).\n")


def _sha256(path):
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def readme_latency(out_dir, accs):
    """The latency section, from latency_measured.json (written by
    scripts/measure_zoo_latency.py); figures of models that changed since are
    marked stale."""
    zoo_dir = os.path.join(out_dir, ZOO)
    path = os.path.join(zoo_dir, "latency_measured.json")
    L = ["## Latency (realistic zoo)\n"]
    if not os.path.isfile(path):
        L.append("Not measured yet: run `/usr/bin/python3 scripts/measure_zoo_latency.py testdata/realistic`.\n")
        return L
    import json
    with open(path) as f:
        lat = json.load(f)
    procs = [p["name"] for p in PROCESSORS]
    L.append(f"Warm latency of one inference (batch 1), measured by `scripts/measure_zoo_latency.py`: "
             f"`{lat['command']}` on {lat['cpu']} with {lat['gemm_library']}, {lat['measured_at']}; load "
             f"average (1/5/15 min) {'/'.join(str(x) for x in lat['load_average_before'])} before and "
             f"{'/'.join(str(x) for x in lat['load_average_after'])} after (other work shared the two cores). "
             "Processor `cpu` is kernel policy `default`, `npu` is `sparse`; both one thread.\n")
    params = {r["task"]: r for r in accs}
    for t in lat["tasks"]:
        rec = params.get(t["task"], {})
        L.append(f"### realistic / {t['task']} ({rec.get('parameters', '?')} parameters)\n")
        L.append("| variant | file (KB) | " + " | ".join(f"{p} ms (median)" for p in procs) +
                 " | rounds (" + ", ".join(procs) + ") |\n| --- | --- | " + " | ".join("---" for _ in procs) + " | --- |")
        sizes = {v["id"]: v.get("onnx_bytes", 0) for v in rec.get("variants", [])}
        for v in t["variants"]:
            model = os.path.join(zoo_dir, v["onnx"])
            stale = not os.path.isfile(model) or _sha256(model) != v["onnx_sha256"]
            cells = [f"{v['processors'][p]['median_ms']:.2f}" + (" (stale)" if stale else "") for p in procs]
            rounds = "; ".join(",".join(f"{r['median_ms']:.2f}" for r in v["processors"][p]["rounds"]) for p in procs)
            L.append(f"| {v['id']} | {sizes.get(v['id'], 0) / 1024:.0f} | " + " | ".join(cells) + f" | {rounds} |")
        L.append("")
    return L
