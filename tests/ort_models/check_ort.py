#!/usr/bin/python3
"""ORT equivalence of the zooplan runtime, under every kernel policy.

For each model (torchvision CNNs and small transformers exported by models.py,
plus every testdata/*/models/*.onnx), runs onnxruntime-node once and plan-run
once per kernel policy on the same fixed-seed inputs, and compares outputs:
max |ours - ort| / max |ort| <= 1e-4 for float32 models, and max |ours - ort|
<= one quantization step (the largest QuantizeLinear scale) for INT8 QDQ models.
It also writes a weight cache, flips one byte of a payload, and checks that the
run warns, falls back and still matches ORT.

--small exports the big CNNs at 96x96 (VGG-11 needs 224x224 for its 7x7 adaptive
pool) to fit the CI budget; without it, everything is 224x224.
Four runs also use BLIS instead of oneDNN for the GEMMs (plan-run --gemm blis).
Prints one line per (model, policy) and closes with 'N passed, M failed'.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

POLICIES = ['default', 'tune', 'naive', 'im2col', 'gemm1x1', 'winograd', 'depthwise', 'sparse', 'blas', 'packed1x1',
            'direct', 'direct_rows']
ORT_VERSION = '1.30.0'
HERE = os.path.dirname(os.path.abspath(__file__))


def ensure_ort(prefix):
    if os.path.isdir(os.path.join(prefix, 'node_modules', 'onnxruntime-node')):
        return
    os.makedirs(prefix, exist_ok=True)
    subprocess.run(['npm', 'install', '--prefix', prefix, f'onnxruntime-node@{ORT_VERSION}', '--ignore-scripts',
                    '--no-audit', '--no-fund'], check=True, stdout=subprocess.DEVNULL)


def input_specs(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    specs = []
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.HasField('dim_value') else 1 for d in tt.shape.dim]
        specs.append((vi.name, tt.elem_type, shape))
    return specs


def quant_step(path):
    """Largest QuantizeLinear scale in the model (0 when it has none)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(path)
    inits = {t.name: t for t in m.graph.initializer}
    consts = {}
    for n in m.graph.node:
        if n.op_type == 'Constant':
            for a in n.attribute:
                if a.name == 'value':
                    consts[n.output[0]] = numpy_helper.to_array(a.t)
    step = 0.0
    for n in m.graph.node:
        if n.op_type == 'QuantizeLinear' and len(n.input) > 1:
            s = inits.get(n.input[1])
            v = numpy_helper.to_array(s) if s is not None else consts.get(n.input[1])
            if v is not None:
                step = max(step, float(np.max(v)))
    return step


def make_inputs(path, out_dir, seed=0):
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.RandomState(seed)
    args = []
    for name, elem, shape in input_specs(path):
        if elem == 1:
            a = rng.standard_normal(shape).astype(np.float32)
        elif elem == 7:
            a = rng.randint(1, 100, size=shape).astype(np.int64)
            if a.ndim == 2 and a.shape[1] > 4:
                a[:, -3:] = 0
        else:
            raise SystemExit(f'{path}: input {name} has element type {elem}, not generated here')
        f = os.path.join(out_dir, name.replace('/', '_') + '.npy')
        np.save(f, a)
        args += ['--input', f'{name}={f}']
    return args


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run_ort(ort_prefix, model, inputs, out_dir, threads=1, repeat=0):
    cmd = ['node', os.path.join(HERE, 'ort_run.js'), '--ort-prefix', ort_prefix, model, *inputs,
           '--output-dir', out_dir, '--threads', str(threads), '--repeat', str(repeat)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout.strip().splitlines()[-1])


def run_ours(plan_run, model, inputs, out_dir, policy, extra=()):
    # plan-run replaces only an output directory it wrote itself: one left in the
    # work dir by an older plan-run (without the marker) would be refused.
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [plan_run, model, *inputs, '--save-outputs', out_dir, '--kernels', policy, '--repeat', '0', '--json', *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout), r.stderr


def compare(ours_dir, ort_dir, qstep):
    worst = 0.0
    files = sorted(glob.glob(os.path.join(ort_dir, '*.npy')))
    if not files:
        raise RuntimeError(f'{ort_dir}: ORT wrote no outputs')
    for f in files:
        ref = np.load(f)
        mine_path = os.path.join(ours_dir, os.path.basename(f))
        if not os.path.exists(mine_path):
            raise RuntimeError(f'{mine_path}: missing output')
        mine = np.load(mine_path)
        if mine.shape != ref.shape:
            raise RuntimeError(f'{mine_path}: shape {mine.shape} vs ORT {ref.shape}')
        diff = float(np.max(np.abs(mine.astype(np.float64) - ref.astype(np.float64)))) if ref.size else 0.0
        if qstep > 0:
            worst = max(worst, diff / qstep)  # in quantization steps
        else:
            worst = max(worst, diff / max(float(np.max(np.abs(ref))), 1e-12))
    return worst


def payload_middle(path):
    """Offset of the middle byte of the largest payload of a weight cache (header + JSON table)."""
    import struct
    with open(path, 'rb') as f:
        head = f.read(64)
        magic, _version, _entries, table_off, table_bytes, _crc = struct.unpack_from('<8sIIQQI', head)
        if magic != b'ZPWCACHE':
            raise RuntimeError(f'{path}: not a weight cache')
        f.seek(table_off)
        table = json.loads(f.read(table_bytes))
    arrays = [a for e in table for a in e['arrays']]
    if not arrays:
        raise RuntimeError(f'{path}: weight cache has no payloads')
    big = max(arrays, key=lambda a: a['bytes'])
    return big['offset'] + big['bytes'] // 2


def flip_byte(path, offset):
    with open(path, 'r+b') as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x5A]))


# The realistic zoo's other variants share their layers' shapes with its dense variants
# (INT8 weights are dequantized at load), which go through every kernel: the others only
# need the two policies the zoo's processors use (default and sparse), which keeps their
# CI time small.
REDUCED_POLICIES = ('default', 'sparse')


def policy_runs(label, policies):
    """(policy, threads, GEMM library) runs for one model: every policy single-threaded with
    oneDNN, the default and sparse policies on 2 threads, and the policies whose products
    all go through GEMM with BLIS; the realistic zoo's variants other than dense only the
    two single-threaded oneDNN runs of REDUCED_POLICIES."""
    zoo, _, variant = label.partition('/')
    variant = variant.rsplit('/', 1)[-1]
    if zoo == 'realistic' and variant != 'dense':
        return [(p, 1, 'onednn') for p in REDUCED_POLICIES if p in policies]
    return ([(p, 1, 'onednn') for p in policies] +
            [(p, 2, 'onednn') for p in ('default', 'sparse') if p in policies] +
            [(p, t, 'blis') for p, t in (('default', 1), ('im2col', 1), ('winograd', 1), ('default', 2))
             if p in policies])


def collect_models(args, shard=0, shards=1):
    """(label, path) of every model this shard checks; exported on the way (cached in the work dir)."""
    out = []
    names = [] if args.zoos else args.models or models.ALL
    for name in names:
        if name not in models.ALL:
            raise SystemExit(f'--models: unknown model {name}')
    for i, name in enumerate(names):
        if i % shards != shard:
            continue
        res = models.resolution(name, args.small)
        path = os.path.join(args.work_dir, 'models', f'{name}_{res}.onnx')
        t0 = time.time()
        models.export(name, res, path)
        dt = time.time() - t0
        if dt > 1:
            print(f'exported {name} at {res} in {dt:.1f} s', flush=True)
        out.append((f'{name}_{res}', path))
    if not args.models:
        testdata = []
        roots = [args.source_dir] + (args.extra_testdata or [])
        for root in roots:
            for p in sorted(glob.glob(os.path.join(root, 'testdata', '*', 'models', '**', '*.onnx'), recursive=True)):
                rel = os.path.relpath(p, os.path.join(root, 'testdata'))
                if args.zoos and rel.split(os.sep)[0] not in args.zoos:
                    continue
                testdata.append((rel.replace('/models/', '/').replace('.onnx', ''), p))
        out += testdata[shard::shards]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--plan-run', required=True)
    ap.add_argument('--work-dir', required=True, help='cache of exported models and outputs (outside git)')
    ap.add_argument('--ort-prefix', required=True, help='where onnxruntime-node is (or gets) installed')
    ap.add_argument('--source-dir', required=True)
    ap.add_argument('--extra-testdata', action='append', help='another checkout whose testdata/ to include')
    ap.add_argument('--small', action='store_true', help='96x96 inputs for the big CNNs (CI)')
    ap.add_argument('--models', nargs='*', help=f'subset of {models.ALL} (testdata models are then skipped)')
    ap.add_argument('--zoos', nargs='*', help='only the models of these testdata zoos (no exported models)')
    ap.add_argument('--policies', nargs='*', default=POLICIES)
    ap.add_argument('--tolerance', type=float, default=1e-4)
    ap.add_argument('--shard', help='K/N: only every N-th model starting at the K-th (0-based), so that N '
                                     'processes check the whole set between them')
    args = ap.parse_args()
    shard, shards = 0, 1
    if args.shard:
        try:
            shard, shards = (int(x) for x in args.shard.split('/'))
        except ValueError:
            raise SystemExit(f"--shard: '{args.shard}' is not K/N")
        if not 0 <= shard < shards:
            raise SystemExit(f'--shard: {args.shard}: K must be in [0, N)')

    ensure_ort(args.ort_prefix)
    passed = failed = 0
    t_start = time.time()
    for label, path in collect_models(args, shard, shards):
        d = os.path.join(args.work_dir, 'runs', label)
        inputs = make_inputs(path, os.path.join(d, 'inputs'))
        qstep = quant_step(path)
        tol = 1.0 if qstep > 0 else args.tolerance
        unit = 'steps' if qstep > 0 else 'rel'
        try:
            run_ort(args.ort_prefix, path, inputs, os.path.join(d, 'ort'))
        except RuntimeError as e:
            print(f'FAIL {label}: ORT: {e}', flush=True)
            failed += 1
            continue
        runs = policy_runs(label, args.policies)
        for policy, threads, gemm in runs:
            t0 = time.time()
            tag = policy + ('' if threads == 1 else f'@{threads}t') + ('' if gemm == 'onednn' else f'+{gemm}')
            try:
                report, _ = run_ours(args.plan_run, path, inputs, os.path.join(d, tag), policy,
                                     ['--threads', str(threads), '--gemm', gemm])
                err = compare(os.path.join(d, tag), os.path.join(d, 'ort'), qstep)
                kernels = sorted({n['kernel'] for n in report['heavy_nodes']})
                ok = err <= tol
                print(f'{"ok  " if ok else "FAIL"} {label:28s} {tag:16s} max err {err:.2e} {unit} '
                      f'(kernels {",".join(kernels)}) {time.time() - t0:.1f}s', flush=True)
            except RuntimeError as e:
                ok = False
                print(f'FAIL {label} {tag}: {e}', flush=True)
            passed += ok
            failed += not ok

        # Corrupted cache: one flipped payload byte must be detected and fall back. The sparse
        # policy gives every Conv/Gemm/MatMul a transformed (CSR) entry in the cache.
        if label.startswith('resnet18') or label.endswith('dense'):
            cache = os.path.join(d, 'weights.zpwc')
            try:
                run_ours(args.plan_run, path, inputs, os.path.join(d, 'cache_write'), 'sparse',
                         ['--write-cache', cache])
                report, _ = run_ours(args.plan_run, path, inputs, os.path.join(d, 'cache_ok'), 'sparse',
                                     ['--cache', cache])
                hits = report['load']['cache_hits']
                flip_byte(cache, payload_middle(cache))
                report2, stderr = run_ours(args.plan_run, path, inputs, os.path.join(d, 'cache_bad'), 'sparse',
                                           ['--cache', cache])
                err = compare(os.path.join(d, 'cache_bad'), os.path.join(d, 'ort'), qstep)
                warned = 'checksum mismatch' in stderr and "node '" in stderr
                ok = hits > 0 and report2['load']['cache_fallbacks'] >= 1 and warned and err <= tol
                print(f'{"ok  " if ok else "FAIL"} {label:28s} corrupt-cache: {hits} hits before, '
                      f'{report2["load"]["cache_fallbacks"]} fallback(s) after, warning: '
                      f'{stderr.strip().splitlines()[0] if stderr.strip() else "none"}; max err {err:.2e} {unit}',
                      flush=True)
            except RuntimeError as e:
                ok = False
                print(f'FAIL {label} corrupt-cache: {e}', flush=True)
            passed += ok
            failed += not ok
            os.remove(cache) if os.path.exists(cache) else None
    print(f'ORT equivalence took {time.time() - t_start:.0f} s')
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
