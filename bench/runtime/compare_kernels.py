#!/usr/bin/python3
"""Two kernel policies node by node: where the default policy's rules come from.

For each model of the sweep's family (tests/ort_models/models.py; exported into
--work-dir as bench_sweep.py does), plan-run runs under each policy (plan-run --kernels:
a policy name such as default, onednn, direct, winograd, or a JSON file; with "+planes", plan-run --planes:
every value in planes) with --trace,
--runs times in fresh processes pinned with taskset; per node the fastest run is kept.
Prints, per model, the Conv nodes' summed times under each policy and under the better
of the two per node, then every Conv node whose time differs by more than --show-ms,
with its shape-free name, both kernels and both times. --json writes the rows.

    /usr/bin/python3 bench/runtime/compare_kernels.py --plan-run build/bin/plan-run \\
      --work-dir build/ort_models --models inception_v3 resnet50 --policies default onednn
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests', 'ort_models'))
import check_ort  # noqa: E402
import models  # noqa: E402
from bench_sweep import ours_cmd, pinned, run_json  # noqa: E402


def node_minima(a, path, inputs, policies, trace):
    """Per policy and node: its op, kernel and fastest execute time (ms) over a.runs profiled
    runs, the policies' runs alternating so that a slow spell of the host hits both."""
    best = [{} for _ in policies]
    cpus = '0' if a.threads == 1 else '0,1'
    for _ in range(a.runs):
        for policy, nodes in zip(policies, best):
            kernels, _, planes = policy.partition('+')
            extra = ['--kernels', kernels, '--trace', trace] + (['--planes'] if planes == 'planes' else [])
            run_json(pinned(cpus, ours_cmd(a, path, inputs, a.threads, 2, extra, simd=a.simd)))
            with open(trace) as f:
                for e in json.load(f)['traceEvents']:
                    if e.get('ph') != 'X':
                        continue
                    n = nodes.setdefault(e['name'], {'op': e['args']['op'], 'kernel': e['args']['kernel'],
                                                     'ms': 1e18})
                    n['ms'] = min(n['ms'], e['dur'] / 1000.0)
    os.remove(trace)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--plan-run', required=True)
    ap.add_argument('--work-dir', required=True, help='exported models and inputs (outside git)')
    ap.add_argument('--models', nargs='+', required=True)
    ap.add_argument('--policies', nargs=2, default=['default', 'onednn'], metavar=('A', 'B'))
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--runs', type=int, default=3, help='profiled runs per policy (fastest kept per node)')
    ap.add_argument('--simd', default='best', help='plan-run --simd')
    ap.add_argument('--show-ms', type=float, default=0.02, help='list nodes whose times differ by more')
    ap.add_argument('--json', help='write every Conv node of every model here')
    a = ap.parse_args()
    unknown = [m for m in a.models if m not in models.SWEEP]
    if unknown:
        raise SystemExit(f'--models: {", ".join(unknown)} not in the sweep ({", ".join(models.SWEEP)})')
    pa, pb = a.policies
    out = []
    for m in a.models:
        res = models.resolution(m, False)
        path = os.path.join(a.work_dir, 'models', f'{m}_{res}.onnx')
        models.export(m, res, path)
        inputs = check_ort.make_inputs(path, os.path.join(a.work_dir, 'sweep', f'{m}_{res}', 'inputs'))
        trace = os.path.join(a.work_dir, f'compare_{m}.trace.json')
        first, second = node_minima(a, path, inputs, [pa, pb], trace)
        rows = [{'model': m, 'node': k, 'kernel_a': v['kernel'], 'ms_a': v['ms'], 'kernel_b': second[k]['kernel'],
                 'ms_b': second[k]['ms']} for k, v in first.items() if v['op'] == 'Conv' and k in second]
        rows.sort(key=lambda r: r['ms_a'] - r['ms_b'])
        sa, sb = sum(r['ms_a'] for r in rows), sum(r['ms_b'] for r in rows)
        best = sum(min(r['ms_a'], r['ms_b']) for r in rows)
        alla = sum(v['ms'] for v in first.values())
        allb = sum(v['ms'] for k, v in second.items() if k in first)
        print(f'{m} ({a.threads} thread{"s" if a.threads > 1 else ""}, {a.simd}): Conv nodes {pa} {sa:.2f} ms, '
              f'{pb} {sb:.2f} ms, the better per node {best:.2f} ms; all nodes {pa} {alla:.2f} ms, {pb} {allb:.2f} ms')
        for r in rows:
            if abs(r['ms_a'] - r['ms_b']) > a.show_ms:
                print(f'  {r["ms_b"] / r["ms_a"]:5.2f}x  {r["kernel_a"]:>10} {r["ms_a"]:7.3f}  {r["kernel_b"]:>10} '
                      f'{r["ms_b"]:7.3f}  {r["node"]}')
        out.extend(rows)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump({'policies': a.policies, 'threads': a.threads, 'simd': a.simd, 'runs': a.runs, 'rows': out}, f,
                      indent=1)


if __name__ == '__main__':
    main()
