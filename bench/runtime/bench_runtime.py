#!/usr/bin/python3
"""Runtime benchmark: ONNX Runtime vs the zooplan runtime, warm and cold, 1 and 2 threads.

Per model: ORT warm (median of N runs) and cold (fresh node process, model evicted
from the page cache: session creation + first run); ours warm (median of N; oneDNN
and BLIS as the GEMM library), cold from raw ONNX weights and cold from a weight
cache of post-transformed weights, with oneDNN and with BLIS (fresh plan-run --cold
processes, files evicted with posix_fadvise DONTNEED).
Per kernel policy: total weight-transform time, cache size and the warm execute
time of the heaviest nodes. For pruned models: sparse vs the best dense kernel on
every pruned convolution. Prints Markdown tables and writes results.json beside them.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests', 'ort_models'))
import check_ort  # noqa: E402
import models  # noqa: E402
sys.path.insert(0, os.path.join(HERE, '..'))
from progress import Progress  # noqa: E402

KERNEL_POLICIES = ['default', 'im2col', 'gemm1x1', 'winograd', 'depthwise', 'sparse']


def plan_run(exe, model, inputs, extra):
    r = subprocess.run([exe, model, *inputs, '--json', *extra], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout)


def read_evicted(path):
    """ms to read a file sequentially after evicting it from the page cache: the
    storage's share of any cold start that needs the file's bytes."""
    check_ort.evict(path)
    t0 = time.perf_counter()
    with open(path, 'rb', buffering=0) as f:
        while f.read(1 << 22):
            pass
    return (time.perf_counter() - t0) * 1000.0


def node_times(exe, model, inputs, policy, threads, trace, reps=3):
    """Per-node execute ms (min over `reps` profiled runs) under a policy."""
    best = {}
    for _ in range(reps):
        plan_run(exe, model, inputs, ['--kernels', policy, '--repeat', '2', '--threads', str(threads), '--trace', trace])
        with open(trace) as f:
            for e in json.load(f)['traceEvents']:
                if e.get('ph') == 'X':
                    best[e['name']] = min(best.get(e['name'], 1e18), e['dur'] / 1000.0)
    return best


def bench_model(a, label, path, out):
    d = os.path.join(a.work_dir, 'bench', label)
    inputs = check_ort.make_inputs(path, os.path.join(d, 'inputs'))
    row = {'model': label, 'path': path, 'threads': {}}
    cache = os.path.join(d, 'default.zpwc')
    plan_run(a.plan_run, path, inputs, ['--repeat', '0', '--write-cache', cache])
    row['cache_bytes_default'] = os.path.getsize(cache)
    row['cache_read_evicted_ms'] = statistics.median(read_evicted(cache) for _ in range(a.cold_runs))
    for t in a.threads:
        r = {}
        ort_cold = []
        for _ in range(a.cold_runs):
            check_ort.evict(path)
            ort_cold.append(check_ort.run_ort(a.ort_prefix, path, inputs, os.path.join(d, 'ort'), t, 0)['cold_total_ms'])
        r['ort_cold_ms'] = statistics.median(ort_cold)
        # Warm: ORT and ours alternate for --warm-rounds rounds, so a drift of the shared
        # machine hits both; the ratio is the median of the per-round ratios.
        # Ours with oneDNN (the default) and with BLIS (the cold-start GEMM library).
        rounds = []
        for _ in range(a.warm_rounds):
            ow = check_ort.run_ort(a.ort_prefix, path, inputs, os.path.join(d, 'ort'), t, a.repeat)
            w = plan_run(a.plan_run, path, inputs, ['--repeat', str(a.repeat), '--threads', str(t)])
            wb = plan_run(a.plan_run, path, inputs, ['--repeat', str(a.repeat), '--threads', str(t), '--gemm', 'blis'])
            rounds.append((ow['warm_median_ms'], ow['warm_p90_ms'], w['warm']['median_ms'], w['warm']['p90_ms'],
                           wb['warm']['median_ms']))
        r['ort_warm_ms'] = statistics.median(x[0] for x in rounds)
        r['ort_warm_p90_ms'] = statistics.median(x[1] for x in rounds)
        r['ours_warm_ms'] = statistics.median(x[2] for x in rounds)
        r['ours_warm_p90_ms'] = statistics.median(x[3] for x in rounds)
        r['ours_warm_blis_ms'] = statistics.median(x[4] for x in rounds)
        r['warm_ratio'] = statistics.median(x[2] / x[0] for x in rounds)
        r['warm_ratios'] = [x[2] / x[0] for x in rounds]
        for kind, extra in [('raw', []), ('cached', ['--cache', cache]),
                            ('cached_blis', ['--cache', cache, '--gemm', 'blis'])]:
            runs = [plan_run(a.plan_run, path, inputs, ['--cold', '--repeat', '0', '--threads', str(t), *extra])['cold']
                    for _ in range(a.cold_runs)]
            med = sorted(runs, key=lambda c: c['total_ms'])[len(runs) // 2]
            r[f'ours_cold_{kind}'] = med
        row['threads'][str(t)] = r
    # Per kernel policy: transform cost, cache size, heavy-node execute times (1 thread).
    row['kernels'] = {}
    for policy in KERNEL_POLICIES:
        c = os.path.join(d, f'{policy}.zpwc')
        rep = plan_run(a.plan_run, path, inputs, ['--kernels', policy, '--repeat', '0', '--write-cache', c])
        times = node_times(a.plan_run, path, inputs, policy, 1, os.path.join(d, f'{policy}.trace.json'))
        heavy = [{'node': n['name'], 'kernel': n['kernel'], 'transform_ms': n['transform_ms'],
                  'packed_bytes': n['packed_bytes'], 'zero_fraction': n['weight_zero_fraction'],
                  'exec_ms': times.get(n['name'])} for n in rep['heavy_nodes']]
        row['kernels'][policy] = {'transform_ms': sum(h['transform_ms'] for h in heavy),
                                  'cache_bytes': os.path.getsize(c),
                                  'exec_ms': sum(h['exec_ms'] or 0 for h in heavy), 'nodes': heavy}
        os.remove(c)
    # Sparse vs best dense kernel on every pruned conv (zero fraction >= 0.5).
    k = row['kernels']
    pruned = []
    for i, h in enumerate(k['sparse']['nodes']):
        if h['zero_fraction'] < 0.5 or 'Conv' not in h['node']:
            continue
        dense = [(k[p]['nodes'][i]['exec_ms'], k[p]['nodes'][i]['kernel']) for p in ['im2col', 'gemm1x1', 'winograd']
                 if k[p]['nodes'][i]['kernel'] != 'sparse' and k[p]['nodes'][i]['exec_ms'] is not None]
        best = min(dense)
        pruned.append({'node': h['node'], 'zero_fraction': h['zero_fraction'], 'sparse_ms': h['exec_ms'],
                       'dense_ms': best[0], 'dense_kernel': best[1], 'speedup': best[0] / max(h['exec_ms'], 1e-9)})
    row['pruned_convs'] = pruned
    if pruned:
        row['pruned_sum_speedup'] = sum(p['dense_ms'] for p in pruned) / max(sum(p['sparse_ms'] for p in pruned), 1e-9)
    out.append(row)
    return row


def fmt_ms(v):
    return '-' if v is None else (f'{v:.2f}' if v < 100 else f'{v:.0f}')


def tables(rows, threads):
    lines = ['## Warm latency (ms): ORT vs zooplan runtime', '',
             '| model | thr | ORT warm | ours warm (oneDNN) | ratio (per round) | ours warm with BLIS |',
             '|---|---|---|---|---|---|']
    for r in rows:
        for t in threads:
            x = r['threads'][str(t)]
            lines.append(
                f"| {r['model']} | {t} | {fmt_ms(x['ort_warm_ms'])} | {fmt_ms(x['ours_warm_ms'])} | "
                f"{x['warm_ratio']:.2f} ({', '.join(f'{v:.2f}' for v in x['warm_ratios'])}) | "
                f"{fmt_ms(x['ours_warm_blis_ms'])} |")
    lines += ['', '## Cold latency (ms): session creation + first run, files evicted from the page cache', '',
              'Ours: total (read/transform/execute); the GEMM library starts up on a helper thread during load '
              '(oneDNN generates its kernels). Ratios use the better cached cold and our oneDNN warm.', '',
              '| model | thr | ORT cold | ours raw, oneDNN | ours cached, oneDNN | oneDNN start-up | '
              'ours cached, BLIS | BLIS start-up | reading the cache file alone | cached cold / own warm | '
              'cached cold / ORT cold |',
              '|---|---|---|---|---|---|---|---|---|---|---|']
    for r in rows:
        for t in threads:
            x = r['threads'][str(t)]
            raw, cac, cb = x['ours_cold_raw'], x['ours_cold_cached'], x['ours_cold_cached_blis']
            best = min(cac['total_ms'], cb['total_ms'])

            def cold(c):
                return (f"{fmt_ms(c['total_ms'])} ({fmt_ms(c['read_ms'])}/{fmt_ms(c['transform_ms'])}/"
                        f"{fmt_ms(c['execute_ms'])})")
            lines.append(
                f"| {r['model']} | {t} | {fmt_ms(x['ort_cold_ms'])} | {cold(raw)} | {cold(cac)} | "
                f"{fmt_ms(cac.get('gemm_init_ms'))} | {cold(cb)} | {fmt_ms(cb.get('gemm_init_ms'))} | "
                f"{fmt_ms(r['cache_read_evicted_ms'])} ({r['cache_bytes_default'] / 1e6:.1f} MB) | "
                f"{best / x['ours_warm_ms']:.2f} | {best / x['ort_cold_ms']:.2f} |")
    lines += ['', '## Kernel policies (1 thread): weight transform, cache size, warm execute of heavy nodes', '',
              '| model | policy | transform ms | cache MB | heavy-node exec ms | top node (kernel: exec ms) |', '|---|---|---|---|---|---|']
    for r in rows:
        for p, k in r['kernels'].items():
            top = max(k['nodes'], key=lambda n: n['exec_ms'] or 0) if k['nodes'] else None
            tops = f"{top['node']} ({top['kernel']}: {fmt_ms(top['exec_ms'])})" if top else '-'
            lines.append(f"| {r['model']} | {p} | {k['transform_ms']:.2f} | {k['cache_bytes'] / 1e6:.2f} | "
                         f"{fmt_ms(k['exec_ms'])} | {tops} |")
    lines += ['', '## Sparse vs best dense kernel on pruned convolutions (1 thread)', '',
              '| model | pruned convs | zero fraction | dense ms (sum) | sparse ms (sum) | speedup (sum) | min / max per node |',
              '|---|---|---|---|---|---|---|']
    for r in rows:
        p = r['pruned_convs']
        if not p:
            continue
        sp = [x['speedup'] for x in p]
        lines.append(f"| {r['model']} | {len(p)} | {min(x['zero_fraction'] for x in p):.2f}-{max(x['zero_fraction'] for x in p):.2f} | "
                     f"{sum(x['dense_ms'] for x in p):.3f} | {sum(x['sparse_ms'] for x in p):.3f} | "
                     f"{r['pruned_sum_speedup']:.2f}x | {min(sp):.2f}x / {max(sp):.2f}x |")
    return '\n'.join(lines) + '\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--plan-run', required=True)
    ap.add_argument('--work-dir', required=True)
    ap.add_argument('--ort-prefix', required=True)
    ap.add_argument('--source-dir', required=True)
    ap.add_argument('--testdata-dir', help='a checkout whose testdata/digits/models to use (default: --source-dir)')
    ap.add_argument('--out-dir', required=True)
    ap.add_argument('--models', nargs='*',
                    default=['digits/dense', 'digits/u90', 'digits/u95', 'digits/int8', 'resnet18', 'resnet18_p90',
                             'mobilenet_v2', 'squeezenet1_1', 'googlenet', 'vit_small'])
    ap.add_argument('--resolution', type=int, default=224)
    ap.add_argument('--threads', type=int, nargs='*', default=[1, 2])
    ap.add_argument('--repeat', type=int, default=20)
    ap.add_argument('--warm-rounds', type=int, default=3, help='alternating ORT/ours warm measurements')
    ap.add_argument('--cold-runs', type=int, default=3)
    ap.add_argument('--quiet', action='store_true', help='no progress lines on stderr')
    a = ap.parse_args()
    check_ort.ensure_ort(a.ort_prefix)
    td = a.testdata_dir or a.source_dir
    rows = []
    t0 = time.time()
    prog = Progress('bench-runtime', quiet=a.quiet)
    prog.phase('models', len(a.models))
    for m in a.models:
        if m.startswith('digits/'):
            path = os.path.join(td, 'testdata', 'digits', 'models', m.split('/')[1] + '.onnx')
            if not os.path.exists(path):
                print(f'skip {m}: {path} not found', file=sys.stderr)
                continue
            label = m
        elif m == 'resnet18_p90':
            path = os.path.join(a.work_dir, 'models', f'resnet18_p90_{a.resolution}.onnx')
            models.export('resnet18', a.resolution, path, prune=0.9)
            label = f'resnet18 90%-pruned {a.resolution}'
        else:
            res = models.resolution(m, False) if m in models.TRANSFORMERS else a.resolution
            path = os.path.join(a.work_dir, 'models', f'{m}_{res}.onnx')
            models.export(m, res, path)
            label = f'{m} {res}'
        prog.step(label)
        bench_model(a, label, path, rows)
    prog.done()
    text = tables(rows, a.threads)
    text += (f'\nMeasured on this host in {time.time() - t0:.0f} s; warm = median over {a.warm_rounds} alternating rounds '
             f'of the median of {a.repeat} runs, cold = median of {a.cold_runs} fresh processes.\n')
    write_outputs(a.out_dir, {'rows': rows}, text)
    print(text)


def write_outputs(out_dir, doc, table):
    """results.json (`doc`) and table.md into out_dir, each through a temporary
    file renamed into place, so an interrupted run leaves no half-written file."""
    os.makedirs(out_dir, exist_ok=True)
    for name, content in [('results.json', json.dumps(doc, indent=1, sort_keys=True) + '\n'), ('table.md', table)]:
        tmp = os.path.join(out_dir, f'.{name}.tmp')
        with open(tmp, 'w') as f:
            f.write(content)
        os.replace(tmp, os.path.join(out_dir, name))


if __name__ == '__main__':
    main()
