#!/usr/bin/python3
"""Does work beside the execution slow it down in a cold run?

Reads the cold runs bench_coldstart.py leaves in its work directory
(WORK/coldstart/MODEL/cold_run.KNOBS.ROUND.I.json, plan-run --cold --json) with the
cold profile they were planned from, and asks per model whether the runs' summed
execute time is explained better by the profiled first executions alone
(execute = f * profiled) or with the reading or transforming done on other threads
at the same time (execute = f * profiled + rho * ms of that work), fitted by least
squares over the pipelined runs. A rho near zero, or an error no smaller, says the
cost model's one execute factor is not missing a per-plan interference term; the
execute spread of one plan is then noise the model cannot price.

Also the execute factor (measured / profiled, ratio of sums) per knob combination
(`none` runs read and transform before executing, `P` runs the same kernels
pipelined) and per kernel (each node's median over every run that chose it).

    /usr/bin/python3 bench/coldstart/interference.py build/ort_models/coldstart
"""
import argparse
import csv
import glob
import json
import os
import sys

import numpy as np

PIPELINED = ('P', 'K+P', 'C+P', 'K+C+P')


def load_profile(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r['kind'] != 'host' and r['step']:
                rows[(int(r['step']), r['kernel'], r['gemm'])] = r
    return rows


def run_sums(report, profile, source):
    """Summed execute ms, profiled first-execute ms, and the ms of reads and of
    transforms done by threads other than the executor."""
    execute = profiled = reads = transforms = 0.0
    for n in report['nodes']:
        key = (n['step'], n['kernel'], n['gemm'])
        if key not in profile:
            sys.exit(f"{source}: step {n['step']} ('{n['node']}', kernel '{n['kernel']}') is not in the cold profile")
        execute += n['execute']['end_ms'] - n['execute']['start_ms']
        profiled += float(profile[key]['first_exec_ms'])
        r, t = n.get('read'), n.get('transform')
        if r and r.get('done') and r.get('core') != 0:
            reads += r['end_ms'] - r['start_ms']
        if t and t.get('done') and t.get('core') != 0 and n['weights'] == 'transform':
            transforms += t['end_ms'] - t['start_ms']
    return execute, profiled, reads, transforms


def kernel_factors(reports, profile):
    """Per kernel (and GEMM library): the nodes' median measured execute over their
    profiled first execute, summed over the nodes that ran it in any run."""
    spans = {}
    for report in reports:
        for n in report['nodes']:
            spans.setdefault((n['step'], n['kernel'], n['gemm']), []).append(
                n['execute']['end_ms'] - n['execute']['start_ms'])
    sums = {}
    for (step, kernel, gemm), ms in sorted(spans.items()):
        name = (kernel or 'light') + ('/' + gemm if gemm else '')
        s = sums.setdefault(name, [0.0, 0.0, 0])
        s[0] += float(np.median(ms))
        s[1] += float(profile[(step, kernel, gemm)]['first_exec_ms'])
        s[2] += 1
    return {k: (m / p if p > 0 else float('nan'), n, p) for k, (m, p, n) in sorted(sums.items())}


def rmse(y, fitted):
    return float(np.sqrt(np.mean((y - fitted) ** 2)))


def analyse(model_dir):
    profile = load_profile(os.path.join(model_dir, 'cold_profile.csv'))
    by_knobs, reports = {}, []
    for path in sorted(glob.glob(os.path.join(model_dir, 'cold_run.*.json'))):
        knobs = os.path.basename(path)[len('cold_run.'):].rsplit('.', 3)[0]
        with open(path) as f:
            reports.append(json.load(f)['cold_plan_run'])
        by_knobs.setdefault(knobs, []).append(run_sums(reports[-1], profile, path))
    factors = {k: sum(r[0] for r in v) / sum(r[1] for r in v) for k, v in sorted(by_knobs.items())}
    runs = np.array([r for k in PIPELINED for r in by_knobs.get(k, [])])
    if len(runs) < 3:
        return None
    y, x = runs[:, 0], runs[:, 1]
    f = y.sum() / x.sum()
    fits = {'factor_only': {'f': f, 'rmse_ms': rmse(y, f * x)}}
    for name, col in (('reads', 2), ('transforms', 3)):
        design = np.stack([x, runs[:, col]], axis=1)
        (fa, rho), *_ = np.linalg.lstsq(design, y, rcond=None)
        fits[name] = {'f': float(fa), 'rho': float(rho), 'rmse_ms': rmse(y, design @ np.array([fa, rho])),
                      'range_ms': [float(runs[:, col].min()), float(runs[:, col].max())]}
    return {'runs': len(runs), 'execute_ms_mean': float(y.mean()), 'fits': fits, 'execute_factor_by_knobs': factors,
            'execute_factor_by_kernel': kernel_factors(reports, profile)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('coldstart_dir', help="bench_coldstart.py's WORK/coldstart directory")
    a = ap.parse_args()
    models = sorted(d for d in glob.glob(os.path.join(a.coldstart_dir, '*'))
                    if os.path.exists(os.path.join(d, 'cold_profile.csv')) and glob.glob(os.path.join(d, 'cold_run.*.json')))
    if not models:
        sys.exit(f'{a.coldstart_dir}: no model directory with a cold profile and cold runs')
    results = [(os.path.basename(d), r) for d in models if (r := analyse(d)) is not None]
    print('| model | pipelined runs | mean execute ms | f alone: rmse ms | + reads beside: f, rho, rmse ms (read ms) '
          '| + transforms beside: f, rho, rmse ms (transform ms) | execute factor by knobs |')
    print('|---|---|---|---|---|---|---|')
    for name, r in results:
        fo, rd, tr = r['fits']['factor_only'], r['fits']['reads'], r['fits']['transforms']
        knobs = ', '.join(f'{k} {v:.2f}' for k, v in r['execute_factor_by_knobs'].items())
        print(f"| {name} | {r['runs']} | {r['execute_ms_mean']:.1f} | {fo['f']:.3f}: {fo['rmse_ms']:.2f} | "
              f"{rd['f']:.3f}, {rd['rho']:+.3f}, {rd['rmse_ms']:.2f} ({rd['range_ms'][0]:.0f}-{rd['range_ms'][1]:.0f}) | "
              f"{tr['f']:.3f}, {tr['rho']:+.3f}, {tr['rmse_ms']:.2f} ({tr['range_ms'][0]:.0f}-{tr['range_ms'][1]:.0f}) | "
              f"{knobs} |")
    print()
    print('| model | execute factor by kernel: factor (nodes, profiled ms) |')
    print('|---|---|')
    for name, r in results:
        cells = ', '.join(f'{k} {f:.2f} ({n}, {p:.1f})' for k, (f, n, p) in r['execute_factor_by_kernel'].items())
        print(f'| {name} | {cells} |')


if __name__ == '__main__':
    main()
