#!/usr/bin/python3
"""Serving bench on a zoo (default: the realistic one): the whole pipeline, then
every system the plan carries served by the executor on one Poisson trace
(measured beside the calibrated and the plan-only predictions, several runs with
different seeds), and the saturated throughput of the best two-processor plan
against the best plan confined to one processor (plan-solve --processors), both
served the same way. Prints Markdown tables and writes results.json and table.md.

  bench_serve_plans.py --bin build/bin --zoo testdata/realistic/zoo.json --work-dir W --out-dir O
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'runtime'))
sys.path.insert(0, os.path.join(HERE, '..'))
from bench_runtime import write_outputs  # noqa: E402
from progress import Progress  # noqa: E402


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f'{os.path.basename(sys.argv[0])}: {" ".join(cmd)} failed: '
                 f'{r.stderr.strip() or r.stdout.strip()[-500:]}')
    return r.stdout


def load_average():
    with open('/proc/loadavg') as f:
        return [float(x) for x in f.read().split()[:3]]


def pipeline(a, prog):
    """stitch -> profile (reused when the work dir has one) -> plans (every processor, and
    each processor of the zoo alone) -> bundles."""
    w = a.work_dir
    stitch, profile = os.path.join(w, 'stitch'), os.path.join(w, 'profile')
    with open(a.zoo) as f:
        procs = [p['name'] for p in json.load(f)['processors']]
    profiled = os.path.isfile(os.path.join(profile, 'report.json'))
    prog.phase('pipeline', 2 * (1 + len(procs)) + (0 if profiled else 2))
    if not profiled:
        prog.step('zoo-stitch')
        run([f'{a.bin}/zoo-stitch', a.zoo, '-o', stitch])
        prog.step('zoo-profile')
        run([f'{a.bin}/zoo-profile', stitch, '-o', profile, '--quiet'])
    bundles = {}
    for label, restrict in [('all', None)] + [(p, p) for p in procs]:
        plan, bundle = os.path.join(w, f'plan-{label}.json'), os.path.join(w, f'bundle-{label}')
        prog.step(f'plan-solve ({label})')
        run([f'{a.bin}/plan-solve', profile, '-o', plan, '--slo', 'grid', '--rate', str(a.rate), '--seed', '1',
             '--serve-in-turn', a.slos, '--quiet'] + (['--processors', restrict] if restrict else []))
        prog.step(f'plan-emit ({label})')
        run([f'{a.bin}/plan-emit', plan, '-o', bundle])
        bundles[label] = bundle
    return bundles


def serve(a, bundle, extra, out_json):
    run([f'{a.bin}/plan-run', bundle, '--serve', '--json', out_json, '--quiet', *extra])
    with open(out_json) as f:
        return json.load(f)


def systems_runs(a, bundle, prog):
    """Every system, one Poisson trace per seed; rows per system and seed."""
    rows = []
    prog.phase('serving', a.runs)
    for seed in range(1, a.runs + 1):
        prog.step(f'seed {seed}: every system')
        r = serve(a, bundle, ['--compare', 'all', '--slo', a.slos, '--rate', str(a.rate), '--duration-ms', str(a.duration_ms),
                              '--seed', str(seed), '--rounds', str(a.rounds)], os.path.join(a.work_dir, f'serve-{seed}.json'))
        for name, s in sorted(r['systems'].items()):
            rows.append({'system': name, 'seed': seed, 'measured': s['measured'], 'predicted': s['predicted'],
                         'predicted_from_plan_latencies': s['predicted_from_plan_latencies'],
                         'calibration': s['calibration']})
    return rows


def saturated(a, bundles, prog):
    """zooplan's throughput per SLO configuration with queries arriving faster than any plan serves them."""
    out = {}
    prog.phase('saturated', len(bundles) * len(a.slos.split(',')))
    for label, bundle in bundles.items():
        for slo in a.slos.split(','):
            prog.step(f'{label}, {slo}')
            r = serve(a, bundle, ['--slo', slo, '--process', 'periodic', '--rate', '5000',
                                  '--count', str(a.saturating_count), '--seed', '1'],
                      os.path.join(a.work_dir, f'saturated-{label}-{slo}.json'))
            z = r['systems']['zooplan']
            out.setdefault(label, {})[slo] = {'measured_qps': z['measured']['throughput_qps'],
                                              'predicted_qps': z['predicted']['throughput_qps']}
    return out


def summarize(rows):
    by = {}
    for r in rows:
        by.setdefault(r['system'], []).append(r)
    summary = {}
    for name, rs in by.items():
        med = lambda side, k: statistics.median(x[side][k] for x in rs)  # noqa: E731
        summary[name] = {side: {k: med(side, k) for k in ('violation_rate', 'p50_ms', 'p99_ms', 'throughput_qps')}
                         for side in ('measured', 'predicted', 'predicted_from_plan_latencies')}
        summary[name]['violation_gap_points'] = [100 * abs(x['measured']['violation_rate'] - x['predicted']['violation_rate']) for x in rs]
        summary[name]['throughput_gap'] = [abs(x['measured']['throughput_qps'] / x['predicted']['throughput_qps'] - 1) for x in rs]
    return summary


def tables(summary, sat, runs):
    t = [f'Per system, median over {runs} runs (one Poisson trace per seed); m measured, p predicted (calibrated), '
         'p(plan) from the plan\'s latencies; gaps per run in violation points.\n',
         '| system | violation m | p | p(plan) | gap per run (points) | p50 ms m / p | p99 ms m / p | q/s m / p |',
         '|---|---|---|---|---|---|---|---|']
    for name, s in summary.items():
        m, p, pp = s['measured'], s['predicted'], s['predicted_from_plan_latencies']
        t.append(f"| {name} | {100*m['violation_rate']:.1f}% | {100*p['violation_rate']:.1f}% | {100*pp['violation_rate']:.1f}% | "
                 f"{', '.join(f'{g:.1f}' for g in s['violation_gap_points'])} | {m['p50_ms']:.2f} / {p['p50_ms']:.2f} | "
                 f"{m['p99_ms']:.2f} / {p['p99_ms']:.2f} | {m['throughput_qps']:.1f} / {p['throughput_qps']:.1f} |")
    z = summary['zooplan']['measured']['violation_rate']
    best_name = min((n for n in summary if n != 'zooplan'), key=lambda n: summary[n]['measured']['violation_rate'])
    best = summary[best_name]['measured']['violation_rate']
    t += ['', f"zooplan's median measured violation rate over the best other system's ({best_name}): "
              f"{z / best:.2f}" if best > 0 else "no other system violates"]
    t += ['', 'Saturated throughput of zooplan\'s plan (q/s, measured / predicted):', '',
          '| plan | ' + ' | '.join(next(iter(sat.values())).keys()) + ' |', '|---|' + '---|' * len(next(iter(sat.values())))]
    for label, per in sat.items():
        t.append(f'| {label} | ' + ' | '.join(f"{v['measured_qps']:.1f} / {v['predicted_qps']:.1f}" for v in per.values()) + ' |')
    return '\n'.join(t) + '\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bin', required=True)
    ap.add_argument('--zoo', required=True)
    ap.add_argument('--work-dir', required=True)
    ap.add_argument('--out-dir', required=True)
    ap.add_argument('--slos', default='C07,C13,C19')
    ap.add_argument('--rate', type=float, default=50)
    ap.add_argument('--duration-ms', type=float, default=10000)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--rounds', type=int, default=5, help='plan-run --serve --rounds: segments every system serves in turn')
    ap.add_argument('--saturating-count', type=int, default=300)
    ap.add_argument('--quiet', action='store_true', help='no progress lines on stderr')
    a = ap.parse_args()
    prog = Progress('bench-serve-plans', quiet=a.quiet)
    os.makedirs(a.work_dir, exist_ok=True)
    before = load_average()
    bundles = pipeline(a, prog)
    rows = systems_runs(a, bundles['all'], prog)
    sat = saturated(a, bundles, prog)
    prog.done()
    summary = summarize(rows)
    best_single = {slo: max(sat[l][slo]['measured_qps'] for l in sat if l != 'all') for slo in sat['all']}
    ratio = {slo: sat['all'][slo]['measured_qps'] / best_single[slo] for slo in sat['all']}
    doc = {'zoo': a.zoo, 'rate_qps_per_task': a.rate, 'duration_ms': a.duration_ms, 'runs': a.runs, 'slos': a.slos,
           'rows': rows, 'systems': summary, 'saturated': sat,
           'two_over_best_single_processor': ratio, 'load_average_before': before, 'load_average_after': load_average()}
    table = tables(summary, sat, a.runs)
    table += '\nTwo processors over the best single processor (saturated, measured): ' + \
        ', '.join(f'{slo} {r:.2f}x' for slo, r in ratio.items()) + '\n'
    table += f"\nload average before {before}, after {doc['load_average_after']}\n"
    print(table)
    write_outputs(a.out_dir, doc, table)


if __name__ == '__main__':
    main()
