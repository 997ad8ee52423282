#!/usr/bin/python3
"""Exports the torchvision set the operator-latency predictor is trained on.

Each model as tests/ort_models/sweep_torchvision.py builds it (random init,
fixed seed, opset 13), at --res (or the family's smallest input), to
WORK_DIR/<name>_<res>.onnx; models already there are kept. Bench only: the
export takes minutes and is never run by ctest.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'ort_models'))
import sweep_torchvision as sweep  # noqa: E402

MODELS = ['resnet18', 'mobilenet_v2', 'mobilenet_v3_small', 'squeezenet1_0', 'shufflenet_v2_x0_5', 'mnasnet0_5',
          'efficientnet_b0', 'regnet_x_400mf', 'regnet_y_400mf', 'googlenet', 'densenet121', 'resnext50_32x4d',
          'alexnet', 'convnext_tiny']


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--work-dir', required=True)
    ap.add_argument('--res', type=int, default=112)
    ap.add_argument('--models', nargs='*', default=MODELS)
    args = ap.parse_args()
    for name in args.models:
        res = max(args.res, sweep.MIN_RES.get(name, 0))
        path = os.path.join(args.work_dir, f'{name}_{res}.onnx')
        try:
            sweep.export(name, res, path)
            print(path, flush=True)
        except Exception as e:  # an exporter failure skips the model
            print(f'SKIP {name}: {str(e).splitlines()[0]}', file=sys.stderr, flush=True)


if __name__ == '__main__':
    main()
