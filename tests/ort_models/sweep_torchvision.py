#!/usr/bin/python3
"""Operator-coverage sweep: one model per torchvision classification, segmentation and video family.

Exports each (random init, fixed seed, opset 13, 1x3xRxR input, 1x3x16xRxR for video) with python3-torch, runs it
with plan-run (default kernel policy) and onnxruntime-node on the same fixed-seed input, and
prints one line per model: ok with the max relative error, REFUSED with plan-run's message,
or FAIL. Closes with the op types of all the exported models and 'N ok, M refused, K failed'.
Not part of ctest (exporting the whole sweep takes minutes); check_ort.py covers a subset in CI.
"""
import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_ort  # noqa: E402

CLASSIFICATION = ['alexnet', 'convnext_tiny', 'densenet121', 'efficientnet_b0', 'efficientnet_v2_s', 'googlenet',
                  'inception_v3', 'mnasnet0_5', 'mobilenet_v2', 'mobilenet_v3_small', 'regnet_x_400mf',
                  'regnet_y_400mf', 'resnet18', 'resnext50_32x4d', 'shufflenet_v2_x0_5', 'squeezenet1_0',
                  'swin_t', 'swin_v2_t', 'vgg11_bn', 'vit_b_32', 'wide_resnet50_2', 'maxvit_t']
SEGMENTATION = ['deeplabv3_mobilenet_v3_large', 'fcn_resnet50', 'lraspp_mobilenet_v3_large']
# Video classification: 1x3x16xRxR clips.
VIDEO = ['r3d_18', 'mc3_18', 'r2plus1d_18', 's3d']
# Smallest input each family exports at (adaptive pools, patch grids, windows).
MIN_RES = {'alexnet': 224, 'vgg11_bn': 224, 'vit_b_32': 224, 'inception_v3': 299, 'swin_t': 224, 'swin_v2_t': 256,
           'maxvit_t': 224, 's3d': 224}


def build(name):
    import torch
    import torchvision
    torch.manual_seed(0)
    kwargs = {'weights': None}
    if name in ('googlenet', 'inception_v3'):
        kwargs.update(aux_logits=False, init_weights=True)
    if name in SEGMENTATION:
        kwargs.update(weights_backbone=None)
        if not name.startswith('lraspp'):
            kwargs.update(aux_loss=False)
        m = getattr(torchvision.models.segmentation, name)(**kwargs)
    elif name in VIDEO:
        m = getattr(torchvision.models.video, name)(**kwargs)
    else:
        m = getattr(torchvision.models, name)(**kwargs)
    # Variance-preserving Conv weights and non-trivial BatchNorm statistics: with the
    # families' own inits some deep nets (GoogLeNet, S3D) shrink their activations to
    # nothing, and the output is the last bias alone. Zero heads (ViT) get random weights.
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, (torch.nn.Conv2d, torch.nn.Conv3d)):
                torch.nn.init.kaiming_normal_(mod.weight, nonlinearity='relu')
            if isinstance(mod, (torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)):
                mod.running_mean.uniform_(-0.1, 0.1)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.1, 0.1)
        for p in m.parameters():
            if p.dim() >= 2 and not p.any():
                p.normal_(0, 0.05)
    return m


def export(name, res, path):
    if os.path.exists(path):
        return
    import torch
    m = build(name).eval()
    tmp = f'{path}.tmp.{os.getpid()}'
    os.makedirs(os.path.dirname(path), exist_ok=True)
    x = torch.randn(1, 3, 16, res, res) if name in VIDEO else torch.randn(1, 3, res, res)
    # Grad stays enabled: it keeps nn.MultiheadAttention off its fused fast path, which has no ONNX export.
    torch.onnx.export(m, (x,), tmp, opset_version=13, input_names=['input'], do_constant_folding=True)
    os.replace(tmp, path)


def op_types(path):
    import onnx
    return {n.op_type for n in onnx.load(path, load_external_data=False).graph.node}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--plan-run', required=True)
    ap.add_argument('--work-dir', required=True)
    ap.add_argument('--ort-prefix', required=True)
    ap.add_argument('--res', type=int, default=64, help='input side where the family allows it')
    ap.add_argument('--models', nargs='*', default=CLASSIFICATION + SEGMENTATION + VIDEO)
    ap.add_argument('--tolerance', type=float, default=1e-4)
    args = ap.parse_args()
    counts = collections.Counter()
    ops = collections.defaultdict(list)
    for name in args.models:
        res = max(args.res, MIN_RES.get(name, 0))
        path = os.path.join(args.work_dir, 'models', f'{name}_{res}.onnx')
        t0 = time.time()
        try:
            export(name, res, path)
        except Exception as e:  # an export failure is the exporter's, not the runtime's
            print(f'SKIP {name}: export failed: {str(e).splitlines()[0]}', flush=True)
            counts['skipped'] += 1
            continue
        for op in op_types(path):
            ops[op].append(name)
        d = os.path.join(args.work_dir, 'runs', name)
        inputs = check_ort.make_inputs(path, os.path.join(d, 'inputs'))
        try:
            check_ort.run_ort(args.ort_prefix, path, inputs, os.path.join(d, 'ort'))
        except RuntimeError as e:
            print(f'FAIL {name}: ORT: {e}', flush=True)
            counts['failed'] += 1
            continue
        try:
            check_ort.run_ours(args.plan_run, path, inputs, os.path.join(d, 'ours'), 'default')
        except RuntimeError as e:
            print(f'REFUSED {name}: {e}', flush=True)
            counts['refused'] += 1
            continue
        err = check_ort.compare(os.path.join(d, 'ours'), os.path.join(d, 'ort'), 0.0)
        ok = err <= args.tolerance
        counts['ok' if ok else 'failed'] += 1
        print(f'{"ok  " if ok else "FAIL"} {name:30s} {res:4d}px max err {err:.2e} rel {time.time() - t0:.1f}s',
              flush=True)
    print('op types:', ' '.join(sorted(ops)))
    print(f'{counts["ok"]} ok, {counts["refused"]} refused, {counts["failed"]} failed, {counts["skipped"]} skipped')
    return 1 if counts['failed'] or counts['refused'] else 0


if __name__ == '__main__':
    sys.exit(main())
