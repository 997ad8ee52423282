#!/usr/bin/python3
"""Deployment bench: the deployment zoo (testdata/deployment, one model per planning
technique) through the whole pipeline, planned for its own workload (slo.json:
request rates, camera frames, a device memory budget), then every system the plan
carries served by the executor on the workload's traces (one per seed), and the
single-technique plans' choices (plan-solve --only sparseloom, --only haxconn, --only mts, --only sparoa,
--only nnv12) served in the same plan-run (--with), on the same traces in the same rounds, measured
beside predicted: violation rate, p50/p99, throughput, peak RSS. Also plan-solve's
time (calibration included) and whether reruns give byte-identical plans (without
calibration, which is measured). Prints Markdown tables; writes results.json and table.md.

  bench_deployment.py --bin build/bin --work-dir W --out-dir O
"""
import argparse
import filecmp
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, '..', '..')
sys.path.insert(0, os.path.join(HERE, '..', 'runtime'))
sys.path.insert(0, os.path.join(HERE, '..', 'serve'))
sys.path.insert(0, os.path.join(HERE, '..'))
from bench_runtime import write_outputs  # noqa: E402
from progress import Progress  # noqa: E402
from bench_serve_plans import load_average, run, summarize  # noqa: E402


# Each technique alone on the same profile and workload (plan-solve --only), by the row it gets:
# SparseLoom: Algorithm 1's choice, its preload set resident; MTS: the models as given, whole, or
# the group's unit; SparOA: the models as given, whole or their operators placed; NNV12: the
# models as given, whole, loaded on demand by their cold sections (without --no-cold-profile; else
# as plain loads).
# zooplan's plan served first come first served (plan-run --serving-order first-come): not
# another system, the same choices in the other order.
FIRST_COME = 'zooplan (first come)'
SINGLE_TECHNIQUES = {'sparseloom': 'SparseLoom-alone', 'haxconn': 'HaX-CoNN-alone', 'mts': 'MTS-alone',
                     'sparoa': 'SparOA-alone', 'nnv12': 'NNV12-alone'}


def pipeline(a, p):
    """stitch -> profile (reused when the work dir has one; cold costs too unless --no-cold-profile,
    so the plan's units get NNV12 cold sections that serving loads on-demand units by) -> plan
    (timed) -> bundle; and two plans without calibration, compared byte for byte."""
    w = a.work_dir
    stitch = os.path.join(w, 'stitch')
    profile = os.path.join(w, 'profile-cold' if a.cold_profile else 'profile')
    profiled = os.path.isfile(os.path.join(profile, 'report.json'))
    p.phase('pipeline', 4 + 2 * len(SINGLE_TECHNIQUES) + (0 if profiled else 2))
    if not profiled:
        p.step('zoo-stitch')
        if not os.path.isdir(stitch):  # the other profile's run stitched it
            run([f'{a.bin}/zoo-stitch', a.zoo, '-o', stitch])
        p.step('zoo-profile')
        run([f'{a.bin}/zoo-profile', stitch, '-o', profile, '--quiet'] + (['--cold-profile'] if a.cold_profile else []))
    plan, bundle = os.path.join(w, 'plan.json'), os.path.join(w, 'bundle')
    p.step('plan-solve (timed, calibration included)')
    t0 = time.monotonic()
    run([f'{a.bin}/plan-solve', profile, '-o', plan, '--slo', a.slo, '--seed', '1', '--quiet'])
    solve_s = time.monotonic() - t0
    reruns = [os.path.join(w, f'plan-nocal-{k}.json') for k in (1, 2)]
    for k, r in enumerate(reruns):
        p.step(f'plan-solve without calibration, run {k + 1} of 2')
        run([f'{a.bin}/plan-solve', profile, '-o', r, '--slo', a.slo, '--seed', '1', '--calibration-rounds', '0',
             '--quiet'])
    p.step('plan-emit')
    run([f'{a.bin}/plan-emit', plan, '-o', bundle])
    bundles = {'plan': bundle}
    for technique in SINGLE_TECHNIQUES:
        plan_t, bundle_t = os.path.join(w, f'plan-{technique}.json'), os.path.join(w, f'bundle-{technique}')
        p.step(f'plan-solve --only {technique}')
        run([f'{a.bin}/plan-solve', profile, '-o', plan_t, '--slo', a.slo, '--seed', '1', '--only', technique,
             '--quiet'])
        p.step(f'plan-emit ({SINGLE_TECHNIQUES[technique]})')
        run([f'{a.bin}/plan-emit', plan_t, '-o', bundle_t])
        bundles[technique] = bundle_t
    return bundles, solve_s, filecmp.cmp(*reruns, shallow=False)


def systems_runs(a, bundles, p):
    """Every system on the plan's own workload, one trace per seed (the same trace for the
    single-technique plans' choices); rows per system and seed."""
    rows = []
    # The single-technique plans' choices served beside the plan's systems (plan-run --with), so
    # every system serves each segment of the trace in the same rounds.
    alongside = [arg for t, row in SINGLE_TECHNIQUES.items() for arg in ('--with', f'{row}={bundles[t]}')]
    # zooplan's own choices served first come first served beside them: what its serving order gains, measured.
    alongside += ['--with', f"{FIRST_COME}={bundles['plan']}", '--serving-order', f'{FIRST_COME}=first-come']
    # The repeat: one seed's trace served again at the end, every system, to show how far
    # two measurements of the same plan on the same trace lie apart on this host.
    passes = [(seed, False) for seed in range(1, a.runs + 1)] + ([(a.repeat_seed, True)] if a.repeat_seed else [])
    p.phase('serving', len(passes))
    for seed, again in passes:
        out = os.path.join(a.work_dir, f"serve-{seed}{'-again' if again else ''}.json")
        p.step(f"seed {seed}{' again' if again else ''}: every system of the plan, every single technique and "
               f"{FIRST_COME}")
        run([f'{a.bin}/plan-run', bundles['plan'], '--serve', '--compare', 'all'] + alongside +
            ['--duration-ms', str(a.duration_ms), '--seed', str(seed), '--rounds', str(a.rounds), '--json', out,
             '--quiet'])
        with open(out) as f:
            r = json.load(f)
        for name, s in sorted(r['systems'].items()):
            rows.append({'system': name, 'seed': seed, 'again': again, 'measured': s['measured'],
                         'predicted': s['predicted'],
                         'predicted_from_plan_latencies': s['predicted_from_plan_latencies'],
                         'calibration': s['calibration']})
    return rows


def repeat_gaps(rows):
    """Per system, |measured - measured again| in violation points on the repeated seed's trace."""
    again = {(r['system'], r['seed']): r['measured']['violation_rate'] for r in rows if r['again']}
    return {r['system']: 100 * abs(r['measured']['violation_rate'] - again[(r['system'], r['seed'])])
            for r in rows if not r['again'] and (r['system'], r['seed']) in again}


def tables(summary, rows, a, solve_s, identical):
    repeat = repeat_gaps(rows)
    rows = [r for r in rows if not r['again']]
    seeds = sorted({r['seed'] for r in rows})
    rss = {}
    for r in rows:
        rss.setdefault(r['system'], []).append(r['measured']['peak_rss_bytes'] / 1e6)
    t = [f'Per system, median over {a.runs} seeds (one trace of the workload per seed, {a.duration_ms / 1000:.0f} s, '
         f'{a.rounds} rounds); m measured, p predicted (calibrated); gaps per seed in violation points; m again: seed {a.repeat_seed}\'s trace served again at the end, '
         f'|m - m again| in points.\n',
         '| system | violation m | p | gap per seed (points) | m again | p50 ms m / p | p99 ms m / p | '
         'q/s m / p | peak RSS MB |',
         '|---|---|---|---|---|---|---|---|---|']
    order = ['zooplan'] + ([FIRST_COME] if FIRST_COME in summary else []) + \
        sorted(n for n in summary if n not in ('zooplan', FIRST_COME))
    for name in order:
        s = summary[name]
        m, p = s['measured'], s['predicted']
        t.append(f"| {name} | {100*m['violation_rate']:.1f}% | {100*p['violation_rate']:.1f}% | "
                 f"{', '.join(f'{g:.1f}' for g in s['violation_gap_points'])} | "
                 f"{f'{repeat[name]:.1f}' if name in repeat else '-'} | {m['p50_ms']:.2f} / {p['p50_ms']:.2f} | "
                 f"{m['p99_ms']:.2f} / {p['p99_ms']:.2f} | {m['throughput_qps']:.1f} / {p['throughput_qps']:.1f} | "
                 f"{statistics.median(rss[name]):.0f} |")
    per_seed = []
    for seed in seeds:
        v = {r['system']: r['measured']['violation_rate'] for r in rows if r['seed'] == seed}
        per_seed.append(all(v['zooplan'] <= x for n, x in v.items() if n not in ('zooplan', FIRST_COME)))
    z = summary['zooplan']['measured']['violation_rate']
    best_name = min((n for n in summary if n not in ('zooplan', FIRST_COME)), key=lambda n: summary[n]['measured']['violation_rate'])
    best = summary[best_name]['measured']['violation_rate']
    worst_gap = max(max(s['violation_gap_points']) for s in summary.values())
    # The simulator given the executor's own times, in the order they ran: what is left is its queueing model's error.
    replay = [100 * abs(r['measured']['violation_rate'] - r['predicted']['replaying_served_times']['violation_rate'])
              for r in rows if 'replaying_served_times' in r['predicted']]
    t += ['', f"zooplan lowest (or tied) on every seed: {'yes' if all(per_seed) else 'no'} "
              f"({', '.join('yes' if x else 'no' for x in per_seed)})",
          f"zooplan's median over the best other system's ({best_name}): " +
          (f'{z / best:.2f}' if best > 0 else ('0 violations each' if z == 0 else 'the other has none')),
          f'largest |predicted - measured| over systems and seeds: {worst_gap:.1f} points',
          (f'replaying the measured times in the simulator (its queueing model alone): |replay - measured| at most '
           f'{max(replay):.1f} points, median {statistics.median(replay):.1f}, within 3 points in {sum(g <= 3 for g in replay)} '
           f'of {len(replay)}' if replay else 'no replay (plan-run without served times)'),
          (f"zooplan's choices served first come first served instead of in its plan's order: "
           f"{100 * summary[FIRST_COME]['measured']['violation_rate']:.1f}% measured against {100 * z:.1f}%"
           if FIRST_COME in summary else 'zooplan not served first come'),
          (f'largest |measured - measured again| on the same trace: {max(repeat.values()):.1f} points (median '
           f'{statistics.median(repeat.values()):.1f}): how far this host lets two measurements of one plan lie apart'
           if repeat else 'no trace served again (--repeat-seed 0)'),
          f'plan-solve (calibration included): {solve_s:.1f} s; reruns without calibration byte-identical: '
          f"{'yes' if identical else 'no'}"]
    return '\n'.join(t) + '\n', {'zooplan_lowest_every_seed': all(per_seed), 'per_seed': per_seed,
                                 'best_other': best_name, 'ratio_to_best_other': z / best if best > 0 else None,
                                 'largest_gap_points': worst_gap, 'measured_again_gap_points': repeat,
                                 'replay_gap_points': {'largest': max(replay) if replay else None,
                                                       'median': statistics.median(replay) if replay else None}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bin', required=True)
    ap.add_argument('--zoo', default=os.path.join(ROOT, 'testdata', 'deployment', 'zoo.json'))
    ap.add_argument('--slo', default=os.path.join(ROOT, 'testdata', 'deployment', 'slo.json'))
    ap.add_argument('--work-dir', required=True)
    ap.add_argument('--out-dir', required=True)
    ap.add_argument('--duration-ms', type=float, default=10000)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--rounds', type=int, default=3, help='plan-run --serve --rounds: segments every system serves in turn')
    ap.add_argument('--repeat-seed', type=int, default=1,
                    help="serve this seed's trace again at the end, every system (0: none): the host's repeatability")
    ap.add_argument('--no-cold-profile', dest='cold_profile', action='store_false',
                    help='profile without cold costs: no NNV12 cold sections (by default zoo-profile --cold-profile, '
                         'and plan-solve loads a unit by its cold section where that calibrated faster than from its '
                         'weight cache; NNV12 alone, every unit loaded on demand so)')
    ap.add_argument('--quiet', action='store_true', help='no progress lines on stderr')
    a = ap.parse_args()
    os.makedirs(a.work_dir, exist_ok=True)
    before = load_average()
    p = Progress('bench-deployment', quiet=a.quiet)
    bundles, solve_s, identical = pipeline(a, p)
    rows = systems_runs(a, bundles, p)
    p.done()
    summary = summarize([r for r in rows if not r['again']])
    table, verdict = tables(summary, rows, a, solve_s, identical)
    with open('/proc/cpuinfo') as f:
        flags = 'AVX-512' if ' avx512f' in f.read() else 'AVX2 only (no avx512f)'
    doc = {'zoo': a.zoo, 'slo': a.slo, 'duration_ms': a.duration_ms, 'runs': a.runs, 'rounds': a.rounds,
           'cold_profile': a.cold_profile, 'rows': rows,
           'systems': summary, 'verdict': verdict, 'plan_solve_s': solve_s, 'reruns_byte_identical': identical,
           'cpu': flags, 'load_average_before': before, 'load_average_after': load_average()}
    table += f"\nhost: {flags}; load average before {before}, after {doc['load_average_after']}\n"
    print(table)
    write_outputs(a.out_dir, doc, table)


if __name__ == '__main__':
    main()
