#!/usr/bin/python3
"""Exports the operator sweep the operator-latency predictor also trains on.

nn-Meter's lesson: a latency predictor generalises to an unseen model when it has
seen the operator's configuration space sampled densely, not only the few
configurations of a dozen architectures. Each sweep model holds --branches
independent branches, one per input: input -> ReLU (brings the tensor into cache
as the producer of a real model's operator does) -> one operator under test -> a
mean (the branch's output, so the operator writes an arena tensor as inside a model),
the operator in a
configuration drawn at random (seeded) from the families of the torchvision
classifiers: convolutions (dense, grouped, depthwise; kernel 1-7; stride 1-2;
BatchNorm folded; no, ReLU, ReLU6, SiLU or Hardswish activation; a share with
unstructured random weight sparsity 0.5-0.95), linear layers (Gemm on vectors,
MatMul on token matrices), pools, elementwise Add and squeeze-excitation Mul,
Concat, standalone BatchNorm, LayerNorm over channels-last tensors, channel
shuffles and splits. Exported as tests/ort_models/sweep_torchvision.py exports
(opset 13, constants folded) to WORK_DIR/sweep_<seed>_<i>.onnx; models already
there are kept. Bench only: never run by ctest.
"""
import argparse
import os
import random

HW = [7, 14, 14, 28, 28, 56, 56, 112]
CHANNELS = [8, 16, 24, 32, 40, 48, 64, 72, 96, 112, 128, 160, 192, 256, 320, 384, 512, 768, 1024]
ACTS = ['none', 'relu', 'relu', 'relu6', 'silu', 'hardswish']
MAX_ELEMENTS = 1 << 20  # of one activation tensor
MAX_MACS = 250e6        # of one convolution or linear layer


def pick_shape(rng, max_c=1024):
    while True:
        hw, c = rng.choice(HW), rng.choice(CHANNELS)
        if c <= max_c and c * hw * hw <= MAX_ELEMENTS:
            return c, hw


def act(name):
    import torch.nn as nn
    return {'none': nn.Identity(), 'relu': nn.ReLU(), 'relu6': nn.ReLU6(), 'silu': nn.SiLU(),
            'hardswish': nn.Hardswish()}[name]


def sparsify(module, rng):
    import torch
    if rng.random() < 0.3:
        amount = rng.choice([0.5, 0.8, 0.9, 0.95])
        with torch.no_grad():
            w = module.weight
            w.mul_((torch.rand_like(w) >= amount).float())


def batch_norm(channels):
    """A BatchNorm with non-trivial statistics (torch's draws from the seeded global generator)."""
    import torch
    bn = torch.nn.BatchNorm2d(channels)
    with torch.no_grad():
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    return bn


def conv_branch(rng, kind):
    import torch.nn as nn
    while True:
        cin, hw = pick_shape(rng)
        k = rng.choice([1, 1, 3, 3, 3, 5, 7])
        stride = rng.choice([1, 1, 1, 2])
        if kind == 'depthwise':
            cout, groups, k = cin, cin, rng.choice([3, 3, 5])
        elif kind == 'grouped':
            groups = rng.choice([2, 4, 8, 16, 32])
            cout = rng.choice(CHANNELS)
            if cin % groups or cout % groups:
                continue
        else:
            cout, groups = rng.choice(CHANNELS), 1
            if k == 7 and cin > 16:
                continue
        out_hw = (hw + 2 * (k // 2) - k) // stride + 1
        if cout * out_hw * out_hw > MAX_ELEMENTS or cout * out_hw * out_hw * k * k * cin / groups > MAX_MACS:
            continue
        conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)
        if kind != 'depthwise':
            sparsify(conv, rng)
        return (cin, hw), on_relu(nn.Sequential(conv, batch_norm(cout), act(rng.choice(ACTS))))


class Lambda:
    """A branch from a function of the raw input x, its ReLU r and modules."""

    def __new__(cls, fn, *modules):
        import torch.nn as nn

        class _L(nn.Module):
            def __init__(self):
                super().__init__()
                self.mods = nn.ModuleList(modules)

            def forward(self, x, r):
                return fn(x, r, *self.mods)
        return _L()


def on_relu(module):
    return Lambda(lambda x, r, m: m(r), module)


def branch(rng):
    import torch
    import torch.nn as nn
    kind = rng.choices(['conv', 'depthwise', 'grouped', 'gemm', 'matmul', 'maxpool', 'avgpool', 'gap', 'add', 'se',
                        'concat', 'bn', 'layernorm', 'shuffle'],
                       weights=[30, 10, 4, 4, 5, 4, 2, 4, 7, 5, 6, 4, 4, 4])[0]
    if kind in ('conv', 'depthwise', 'grouped'):
        return conv_branch(rng, kind)
    if kind == 'gemm':
        k, n = rng.choice([256, 512, 576, 768, 1024, 1280, 2048, 4096]), rng.choice([10, 100, 1000, 1024, 4096])
        if k * n > MAX_MACS:
            return branch(rng)
        lin = nn.Linear(k, n)
        sparsify(lin, rng)
        return (k, 1), Lambda(lambda x, r, lin: lin(torch.flatten(r, 1)), lin)
    if kind == 'matmul':
        c, hw = pick_shape(rng, 768)
        n = c * rng.choice([1, 4])
        if hw * hw * c * n > MAX_MACS:
            return branch(rng)
        lin = nn.Linear(c, n)
        sparsify(lin, rng)
        return (c, hw), Lambda(lambda x, r, lin: lin(r.permute(0, 2, 3, 1)), lin)
    c, hw = pick_shape(rng)
    if kind == 'maxpool':
        k, s = rng.choice([(3, 2), (2, 2), (3, 1)])
        return (c, hw), on_relu(nn.MaxPool2d(k, s, k // 2 if s == 1 or k == 3 else 0, ceil_mode=rng.random() < 0.5))
    if kind == 'avgpool':
        k, s = rng.choice([(2, 2), (3, 1)])
        return (c, hw), on_relu(nn.AvgPool2d(k, s, k // 2 if s == 1 else 0))
    if kind == 'gap':
        return (c, hw), on_relu(nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten()))
    if kind == 'add':
        return (c, hw), Lambda(lambda x, r: r + x)
    if kind == 'se':
        squeeze = max(8, c // 4)
        se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, squeeze, 1), nn.ReLU(), nn.Conv2d(squeeze, c, 1),
                           rng.choice([nn.Sigmoid(), nn.Hardsigmoid()]))
        return (c, hw), Lambda(lambda x, r, se: r * se(r), se)
    if kind == 'concat':
        parts = rng.choice([2, 3, 4])
        return (c, hw), Lambda(lambda x, r: torch.cat([r] + [x] * (parts - 1), 1))
    if kind == 'bn':
        bn = batch_norm(2 * c)
        return (c, hw), Lambda(lambda x, r, bn: bn(torch.cat([r, x], 1)), bn)
    if kind == 'layernorm':
        ln = nn.LayerNorm(c, eps=1e-6)
        return (c, hw), Lambda(lambda x, r, ln: ln(r.permute(0, 2, 3, 1)).permute(0, 3, 1, 2), ln)
    # shuffle: ShuffleNet's channel split and shuffle
    c = c - c % 2
    return (c, hw), Lambda(lambda x, r: torch.cat(r.chunk(2, 1), 1).view(1, 2, c // 2, hw, hw).transpose(1, 2)
                           .reshape(1, c, hw, hw))


def export(seed, index, branches, path):
    import torch
    import torch.nn as nn
    rng = random.Random(seed * 100003 + index)
    torch.manual_seed(seed * 100003 + index)
    shapes, mods = [], []
    for _ in range(branches):
        shape, mod = branch(rng)
        shapes.append(shape)
        mods.append(mod)

    class Sweep(nn.Module):
        def __init__(self):
            super().__init__()
            self.branches = nn.ModuleList(mods)

        def forward(self, *xs):
            # Each branch ends in a mean: a graph output is a fresh buffer every run, and
            # the operator writing it would pay its page faults (2-3x its time inside a model).
            return tuple(b(x, torch.relu(x)).mean() for b, x in zip(self.branches, xs))

    inputs = tuple(torch.randn(1, c, hw, hw) for c, hw in shapes)
    tmp = f'{path}.tmp.{os.getpid()}'
    torch.onnx.export(Sweep().eval(), inputs, tmp, opset_version=13, do_constant_folding=True,
                      input_names=[f'x{i}' for i in range(branches)], output_names=[f'y{i}' for i in range(branches)])
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--work-dir', required=True)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--count', type=int, default=64, help='sweep models')
    ap.add_argument('--branches', type=int, default=16, help='operators under test per model')
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    for i in range(args.count):
        path = os.path.join(args.work_dir, f'sweep_{args.seed}_{i:03d}.onnx')
        if not os.path.exists(path):
            export(args.seed, i, args.branches, path)
        print(path, flush=True)


if __name__ == '__main__':
    main()
