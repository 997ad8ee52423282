#!/usr/bin/python3
"""Exports the models the operator-placement bench places.

GoogLeNet, an Inception-v3-style model (torchvision's Inception-v3 at a reduced
input), SqueezeNet 1.0, ResNet-18 and ResNet-18 with 90% of its Conv and Linear
weights pruned (global unstructured L1 magnitude pruning), built as
tests/ort_models/sweep_torchvision.py builds them (random init, fixed seed,
opset 13), to WORK_DIR/<name>.onnx; models already there are kept. Bench only:
never run by ctest.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'ort_models'))
import sweep_torchvision as sweep  # noqa: E402


def export_module(m, res, path):
    import torch
    tmp = f'{path}.tmp.{os.getpid()}'
    torch.onnx.export(m.eval(), (torch.randn(1, 3, res, res),), tmp, opset_version=13, input_names=['input'],
                      do_constant_folding=True)
    os.replace(tmp, path)


def pruned(m, amount):
    import torch
    import torch.nn.utils.prune as prune
    params = [(mod, 'weight') for mod in m.modules() if isinstance(mod, (torch.nn.Conv2d, torch.nn.Linear))]
    prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=amount)
    for mod, name in params:
        prune.remove(mod, name)
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--work-dir', required=True)
    ap.add_argument('--res', type=int, default=224, help='input size of GoogLeNet, SqueezeNet and the ResNets')
    ap.add_argument('--inception-res', type=int, default=139, help='input size of the Inception-v3-style model')
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    wanted = [
        (f'googlenet_{args.res}', 'googlenet', args.res, None),
        (f'inception_v3_{args.inception_res}', 'inception_v3', args.inception_res, None),
        (f'squeezenet1_0_{args.res}', 'squeezenet1_0', args.res, None),
        (f'resnet18_{args.res}', 'resnet18', args.res, None),
        (f'resnet18_p90_{args.res}', 'resnet18', args.res, 0.9),
    ]
    for out, name, res, amount in wanted:
        path = os.path.join(args.work_dir, out + '.onnx')
        if not os.path.exists(path):
            import torch
            torch.manual_seed(0)
            m = sweep.build(name)
            if amount:
                m = pruned(m, amount)
            with torch.no_grad():
                export_module(m, res, path)
        print(path, flush=True)


if __name__ == '__main__':
    main()
