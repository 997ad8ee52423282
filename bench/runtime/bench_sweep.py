#!/usr/bin/python3
"""Warm-speed sweep: the zooplan runtime against ONNX Runtime over torchvision's
classification architectures.

Every model of tests/ort_models/models.py's SWEEP (random init, fixed seed, opset 13,
224x224 or the architecture's own size, batch 1), exported into --work-dir by
/usr/bin/python3 (python3-torch) and reused between runs. Per model and thread count:
ORT and plan-run alternate (which goes first alternates too) in --warm-rounds rounds
over the whole family, each the median of --repeat warm runs in a fresh process pinned
with taskset; the ratio is the median of the per-round ratios (and, as a second view on
a loaded host, the ratio of the two fastest runs).
Per model (--profile-threads): our per-node times (min over --trace-runs
profiled runs of plan-run --trace) with each node's kernel, and ORT's per-node times
from its profiler, both summed by operator type. Geometric means over the family.
Every SIMD target the host runs (plan-run --simd: AVX-512 and AVX2 on an AVX-512 host)
is measured in the same rounds against the same ORT runs, one table each; the per-node
profile is of the best target. The JSON records the host's CPU flags.
With --shared-lines (build/bin/bench-shared-lines), before each model's round on the
two-thread CPUs: what writing 1 MB of lines both cores have read costs over writing
lines only the writer holds. On a shared host that cost changes from minute to minute
(one KVM guest read 1.3x and 8x within an hour), and a parallel loop pays it
wherever a thread writes what the other core read; the table gives each round's cost
beside its two-thread ratios, so a figure says which kind of minute it came from.
Writes table.md and results.json into --out-dir and prints the table.
"""
import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests', 'ort_models'))
import check_ort  # noqa: E402
import models  # noqa: E402
from bench_runtime import write_outputs  # noqa: E402
sys.path.insert(0, os.path.join(HERE, '..'))
from progress import Progress  # noqa: E402


def pinned(cpus, cmd):
    return ['taskset', '-c', cpus, *cmd]


def run_json(cmd, last_line=False):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f'{" ".join(cmd[:6])} ...: {r.stderr.strip()[-400:]}')
    return json.loads(r.stdout.strip().splitlines()[-1] if last_line else r.stdout)


def ort_cmd(a, model, inputs, threads, repeat, extra=()):
    return ['node', os.path.join(HERE, '..', '..', 'tests', 'ort_models', 'ort_run.js'), '--ort-prefix', a.ort_prefix,
            model, *inputs, '--threads', str(threads), '--repeat', str(repeat), *extra]


def ours_cmd(a, model, inputs, threads, repeat, extra=(), simd='best'):
    return [a.plan_run, model, *inputs, '--json', '--threads', str(threads), '--repeat', str(repeat), '--simd', simd,
            *extra]


def host_simd_targets(a, path, inputs):
    """The SIMD targets this build runs on this host, best first (plan-run's report)."""
    return run_json(ours_cmd(a, path, inputs, 1, 0))['simd_targets']


def cpu_flags():
    """The CPU's model name and feature flags as /proc/cpuinfo gives them (x86: flags; ARM: Features)."""
    name, flags = platform.processor(), []
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                key, _, value = line.partition(':')
                key = key.strip()
                if key in ('model name', 'CPU part') and not name:
                    name = value.strip()
                if key in ('flags', 'Features') and not flags:
                    flags = value.split()
    except OSError:
        pass
    return {'model': name, 'flags': sorted(flags)}


def cpus_for(a, threads):
    return a.cpus_1 if threads == 1 else a.cpus_2


def warm_round(a, path, inputs, threads, ort_first, targets):
    """One round for one model: ORT and ours on each SIMD target, each a fresh pinned
    process; whether ORT goes first or last alternates between rounds, so that drift
    cancels. Per target: (ORT median, ours median), (ORT min, ours min)."""
    cpus = cpus_for(a, threads)
    def ort():
        return run_json(pinned(cpus, ort_cmd(a, path, inputs, threads, a.repeat)), True)
    def ours(t):
        return run_json(pinned(cpus, ours_cmd(a, path, inputs, threads, a.repeat, simd=t)))['warm']
    o = ort() if ort_first else None
    w = {t: ours(t) for t in (targets if ort_first else reversed(targets))}
    if o is None:
        o = ort()
    return {t: ((o['warm_median_ms'], w[t]['median_ms']), (o['warm_min_ms'], w[t]['min_ms'])) for t in targets}


def cross_core_cost(a):
    """bench-shared-lines on the two-thread CPUs: at 1 MB, writing lines both cores read
    and writing lines only this core holds (microseconds), and their ratio."""
    cpus = [c for c in a.cpus_2.split(',') if c]
    cmd = [a.shared_lines, '--reps', '20'] + (['--cpus', cpus[0], cpus[1]] if len(cpus) == 2 else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if cells and cells[0] == '1024':
            own, shared = float(cells[3]), float(cells[4])
            return {'write_own_us': own, 'write_shared_us': shared, 'ratio': shared / own}
    raise SystemExit(f'{a.shared_lines}: no 1024 KB row in its output')


def cross_core_table(rows, a, targets):
    """Per round: the median cross-core cost over its models and the two-thread
    geometric mean ours/ORT of that round (best target)."""
    two = [t for t in a.threads if t > 1]
    if not a.shared_lines or not two or not rows or not rows[0]['cross_core']:
        return []
    t = str(two[0])
    lines = ['', f'## Cross-core cost per round and the {t}-thread ratio (bench-shared-lines, 1 MB)', '',
             'Writing lines both cores read over writing lines only the writer holds, measured before each '
             "model's round (median over the round's models), beside the round's geometric mean ours/ORT.", '',
             f'| round | write both read / write own | {t}t geomean ours/ORT ({targets[0]}) |', '|---|---|---|']
    for r in range(len(rows[0]['cross_core'])):
        cost = statistics.median(row['cross_core'][r]['ratio'] for row in rows)
        ratios = [row['by_target'][targets[0]][t]['rounds'][r] for row in rows]
        g = geomean([x[1] / x[0] for x in ratios])
        lines.append(f'| {r + 1} | {cost:.1f}x | {g:.3f} |')
    return lines + ['']


def summarize(rounds, mins):
    # The fastest run of either over all rounds: what each does when it has the core
    # to itself, a second view on a shared, loaded host (the medians stay the measure).
    best = (min(m[0] for m in mins), min(m[1] for m in mins))
    return {'ort_ms': statistics.median(r[0] for r in rounds), 'ours_ms': statistics.median(r[1] for r in rounds),
            'ratio': statistics.median(r[1] / r[0] for r in rounds), 'rounds': [list(r) for r in rounds],
            'ort_min_ms': best[0], 'ours_min_ms': best[1], 'min_ratio': best[1] / best[0],
            'round_mins': [list(m) for m in mins]}


def our_nodes(a, path, inputs, threads, trace):
    """Per node: min execute ms over --trace-runs profiled runs, op type and kernel."""
    best = {}
    for _ in range(a.trace_runs):
        run_json(pinned(cpus_for(a, threads), ours_cmd(a, path, inputs, threads, 2, ['--trace', trace])))
        with open(trace) as f:
            for e in json.load(f)['traceEvents']:
                if e.get('ph') != 'X':
                    continue
                n = best.setdefault(e['name'], {'node': e['name'], 'op': e['args']['op'], 'kernel': e['args']['kernel'],
                                                'ms': 1e18})
                n['ms'] = min(n['ms'], e['dur'] / 1000.0)
    os.remove(trace)
    return sorted(best.values(), key=lambda n: -n['ms'])


def ort_nodes(a, path, inputs, threads, prefix):
    """ORT's profiler: per node, the median over the profiled runs of its kernel time."""
    r = run_json(pinned(cpus_for(a, threads), ort_cmd(a, path, inputs, threads, a.trace_runs, ['--profile', prefix])),
                 True)
    with open(r['profile']) as f:
        events = json.load(f)
    os.remove(r['profile'])
    per = {}
    for e in events:
        if e.get('cat') == 'Node' and e['name'].endswith('_kernel_time'):
            per.setdefault((e['name'][:-len('_kernel_time')], e['args'].get('op_name', '?')), []).append(e['dur'] / 1000.0)
    # The first run of a session is in the profile too: the median drops it.
    nodes = [{'node': k[0], 'op': k[1], 'ms': statistics.median(v)} for k, v in per.items()]
    return sorted(nodes, key=lambda n: -n['ms'])


def by_op(nodes):
    out = {}
    for n in nodes:
        out[n['op']] = out.get(n['op'], 0.0) + n['ms']
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(v):
    return '-' if v is None else (f'{v:.2f}' if v < 100 else f'{v:.0f}')


def tables(rows, a, targets, cpu):
    lines = []
    for target in targets:
        lines += warm_table(rows, a, target, target == targets[0], cpu)
    return profile_tables(rows, a, lines)


def warm_table(rows, a, target, best, cpu):
    th = a.threads
    head = '| model | input | export s | ' + ' | '.join(f'ORT {t}t ms | ours {t}t ms | ours/ORT {t}t | min ratio {t}t'
                                                        for t in th) + ' |'
    lines = [f'## Warm latency (ms), ours on the {target} kernels{" (the best this CPU runs)" if best else ""} vs '
             f'ONNX Runtime', '', f'Host CPU: {cpu["model"]}; ORT picks its own kernels for this CPU in every table.', '',
             head, '|' + '---|' * (3 + 4 * len(th))]
    for r in rows:
        cells = []
        for t in th:
            x = r['by_target'][target].get(str(t))
            cells += ([fmt(x['ort_ms']), fmt(x['ours_ms']), f"{x['ratio']:.2f}", f"{x['min_ratio']:.2f}"] if x
                      else ['-', '-', '-', '-'])
        lines.append(f"| {r['model']} | {r['res']} | {r['export_s']:.1f} | " + ' | '.join(cells) + ' |')
    gm = ['', '', '']
    summary = []
    for t in th:
        per = [r['by_target'][target][str(t)] for r in rows if str(t) in r['by_target'][target]]
        ratios = [x['ratio'] for x in per]
        g = geomean(ratios)
        gmin = geomean([x['min_ratio'] for x in per])
        worst = max(rows, key=lambda r: r['by_target'][target][str(t)]['ratio'])
        gm += ['', '', f'**{g:.2f}**', f'{gmin:.2f}']
        summary.append(f"{target}, {t} thread{'s' if t > 1 else ''}: geometric mean ours/ORT {g:.3f} over "
                       f"{len(ratios)} models, {sum(x > 1.2 for x in ratios)} above 1.2x, "
                       f"{sum(x <= 1.0 for x in ratios)} at or below 1.0x, worst {worst['model']} "
                       f"{worst['by_target'][target][str(t)]['ratio']:.2f}x; ratio of the fastest runs: "
                       f"geometric mean {gmin:.3f}")
    lines.append('| **geometric mean** | ' + ' | '.join(gm[1:]) + ' |')
    lines += [''] + [f'- {s}' for s in summary] + ['']
    return lines


def profile_tables(rows, a, lines):
    for t in a.profile_threads:
        lines += ['', f'## Where the time goes ({t} thread{"s" if t > 1 else ""}): top nodes and operator types', '',
                  'Ours: per node min over profiled runs (plan-run --trace), kernel in brackets; ORT: its profiler '
                  '(per node median; its own fusions and layouts, so node names differ).', '',
                  '| model | ours: top nodes (kernel: ms) | ours by op (ms) | ORT by op (ms) |', '|---|---|---|---|']
        for r in rows:
            p = r.get('profile', {}).get(str(t))
            if not p:
                continue
            top = ', '.join(f"{n['node']} ({n['kernel'] or n['op']}: {n['ms']:.2f})" for n in p['ours_top'])
            ours = ', '.join(f'{k} {v:.1f}' for k, v in list(p['ours_by_op'].items())[:6])
            ort = ', '.join(f'{k} {v:.1f}' for k, v in list(p['ort_by_op'].items())[:6])
            lines.append(f"| {r['model']} | {top} | {ours} | {ort} |")
    return '\n'.join(lines) + '\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--plan-run', required=True)
    ap.add_argument('--work-dir', required=True, help='exported models and inputs (outside git)')
    ap.add_argument('--ort-prefix', required=True)
    ap.add_argument('--out-dir', required=True)
    ap.add_argument('--models', nargs='*', default=models.SWEEP)
    ap.add_argument('--threads', type=int, nargs='*', default=[1, 2])
    ap.add_argument('--repeat', type=int, default=10, help='warm runs per process (median)')
    ap.add_argument('--warm-rounds', type=int, default=5,
                    help='rounds over the family; per round and model one ORT and one plan-run process per thread count')
    ap.add_argument('--profile-threads', type=int, nargs='*', default=[1], help='thread counts to profile per node')
    ap.add_argument('--trace-runs', type=int, default=3)
    ap.add_argument('--top', type=int, default=5, help='our slowest nodes listed per model')
    ap.add_argument('--cpus-1', default='0', help='taskset CPU list for 1-thread runs')
    ap.add_argument('--cpus-2', default='0,1', help='taskset CPU list for 2-thread runs')
    ap.add_argument('--simd-targets', nargs='*', default=[],
                    help='SIMD targets to measure (plan-run --simd); default: every one this host runs')
    ap.add_argument('--shared-lines', default='',
                    help='bench-shared-lines binary: measure the cross-core cost before each model\'s round')
    ap.add_argument('--quiet', action='store_true', help='no progress lines on stderr')
    a = ap.parse_args()
    prog = Progress('bench-sweep', quiet=a.quiet)
    for m in a.models:
        if m not in models.SWEEP:
            raise SystemExit(f'--models: {m} is not in the sweep ({", ".join(models.SWEEP)})')
    check_ort.ensure_ort(a.ort_prefix)
    load0 = os.getloadavg()
    t_start = time.time()
    rows = []
    export_total = 0.0
    prepared = []
    for m in a.models:
        res = models.resolution(m, False)
        path = os.path.join(a.work_dir, 'models', f'{m}_{res}.onnx')
        t0 = time.time()
        fresh = not os.path.exists(path)
        models.export(m, res, path)
        export_s = time.time() - t0
        export_total += export_s
        d = os.path.join(a.work_dir, 'sweep', f'{m}_{res}')
        inputs = check_ort.make_inputs(path, os.path.join(d, 'inputs'))
        if fresh:
            print(f'exported {m} {res}x{res} in {export_s:.1f} s', file=sys.stderr, flush=True)
        prepared.append((m, res, path, d, inputs))
        rows.append({'model': m, 'res': res, 'path': path, 'export_s': export_s, 'exported_now': fresh, 'threads': {},
                     'profile': {}, 'measure_s': 0.0, 'cross_core': []})
    # Rounds go over the whole family, so a model's rounds lie minutes apart: a slow
    # spell of the shared host (seconds to a minute) then lands in one of them, not all.
    targets = host_simd_targets(a, prepared[0][2], prepared[0][4])
    if a.simd_targets:
        unknown = [t for t in a.simd_targets if t not in targets]
        if unknown:
            raise SystemExit(f'--simd-targets: {", ".join(unknown)} not run by this host ({", ".join(targets)})')
        targets = a.simd_targets
    samples = {(m, t, s): ([], []) for m, *_ in prepared for t in a.threads for s in targets}
    prog.phase('warm rounds', a.warm_rounds * len(prepared))
    for r in range(a.warm_rounds):
        for (m, res, path, d, inputs), row in zip(prepared, rows):
            prog.step(f'round {r + 1} of {a.warm_rounds}, {m}')
            t1 = time.time()
            if a.shared_lines:
                row['cross_core'].append(cross_core_cost(a))
            for t in a.threads:
                for s, (med, mn) in warm_round(a, path, inputs, t, (r % 2 == 0), targets).items():
                    samples[(m, t, s)][0].append(med)
                    samples[(m, t, s)][1].append(mn)
            row['measure_s'] += time.time() - t1
    prog.phase('node profiles', len(prepared))
    for (m, res, path, d, inputs), row in zip(prepared, rows):
        prog.step(m)
        t1 = time.time()
        row['by_target'] = {s: {str(t): summarize(*samples[(m, t, s)]) for t in a.threads} for s in targets}
        row['threads'] = row['by_target'][targets[0]]
        for t in a.profile_threads:
            ours = our_nodes(a, path, inputs, t, os.path.join(d, f'trace_{t}.json'))
            ort = ort_nodes(a, path, inputs, t, os.path.join(d, f'ort_profile_{t}'))
            row['profile'][str(t)] = {'ours_top': ours[:a.top], 'ours_by_op': by_op(ours), 'ort_by_op': by_op(ort),
                                      'ours_nodes': ours, 'ort_nodes': ort}
        row['measure_s'] += time.time() - t1
        if not a.quiet:
            print(f'{m}: ' + ', '.join(f"{t}t: ORT {x['ort_ms']:.2f} ms, ours {x['ours_ms']:.2f} ms, {x['ratio']:.2f}x"
                                       for t, x in row['threads'].items()), file=sys.stderr, flush=True)
    prog.done()
    total = time.time() - t_start
    summary = {s: {str(t): {'geomean_ratio': geomean([r['by_target'][s][str(t)]['ratio'] for r in rows]),
                            'geomean_min_ratio': geomean([r['by_target'][s][str(t)]['min_ratio'] for r in rows]),
                            'max_ratio': max(r['by_target'][s][str(t)]['ratio'] for r in rows),
                            'above_1_2': [r['model'] for r in rows if r['by_target'][s][str(t)]['ratio'] > 1.2]}
                        for t in a.threads}
               for s in targets}
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    meta = {'host': platform.node(), 'load_avg_at_start': load0, 'load_avg_at_end': load, 'total_s': total, 'export_s': export_total,
            'repeat': a.repeat, 'warm_rounds': a.warm_rounds, 'trace_runs': a.trace_runs, 'cpus_1': a.cpus_1,
            'cpus_2': a.cpus_2, 'seed': 0, 'opset': 13, 'cpu': cpu_flags(), 'simd_targets': targets}
    text = tables(rows, a, targets, meta['cpu'])
    text += '\n'.join(cross_core_table(rows, a, targets))
    text += (f'\nMeasured in {total:.0f} s (of which exporting {export_total:.0f} s); warm = median over {a.warm_rounds} '
             f'rounds over the family, ORT and ours alternating (fresh processes, taskset -c {a.cpus_1} / {a.cpus_2}) of the median of {a.repeat} '
             f'runs; ratio = median of the per-round ratios; min ratio = our fastest run over ORT\'s fastest. '
             f'Load average at the start: {", ".join(f"{x:.2f}" for x in load0)}, at the end: '
             f'{", ".join(f"{x:.2f}" for x in load) if load else "unknown"}.\n')
    write_outputs(a.out_dir, {'rows': rows, 'summary': summary, 'meta': meta}, text)
    print(text)


if __name__ == '__main__':
    main()
