#!/usr/bin/env node
'use strict';
// Writes the real ONNX Runtime profiling JSON files under testdata/profiles/ort/.
//
//   node testdata/profiles/make_ort_profiles.js      (from the repository root;
//                                                      needs tests/ort/node_modules, see scripts/bootstrap.sh)
//
// For each (model, graph optimization level) below: one InferenceSession on the CPU
// execution provider (1 intra-op thread, sequential), profiling on
// (enableProfiling + profileFilePrefix), WARMUP + RUNS runs on the first sample of
// testdata/digits/data/test_x.npy, endProfiling(); the trace ORT wrote
// (<prefix>_<timestamp>.json) is moved to testdata/profiles/ort/<name>.json.
// The trace therefore holds WARMUP + RUNS model_run events; the importer's
// skipRuns option drops the warm-up ones.
const fs = require('fs');
const os = require('os');
const path = require('path');

const root = path.resolve(__dirname, '..', '..');
const ort = require(path.join(root, 'tests', 'ort', 'node_modules', 'onnxruntime-node'));
const {readNpy} = require(path.join(root, 'tests', 'ort', 'npy.js'));

const WARMUP = 2;
const RUNS = 10;
const JOBS = [
  // graph optimization disabled: node names are exactly the ONNX names
  {name: 'digits_dense_disabled', model: 'testdata/digits/models/dense.onnx', opt: 'disabled'},
  // all optimizations: fused nodes that do not exist in the ONNX file (unmatched-row report)
  {name: 'digits_dense_all', model: 'testdata/digits/models/dense.onnx', opt: 'all'},
  // INT8 QDQ variant, optimization disabled
  {name: 'digits_int8_disabled', model: 'testdata/digits/models/int8.onnx', opt: 'disabled'},
];

async function main() {
  const x = readNpy(path.join(root, 'testdata/digits/data/test_x.npy'));
  const per = x.shape.slice(1).reduce((a, b) => a * b, 1);
  const input = new ort.Tensor('float32', x.data.slice(0, per), [1, ...x.shape.slice(1)]);
  const outDir = path.join(root, 'testdata', 'profiles', 'ort');
  fs.mkdirSync(outDir, {recursive: true});
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'zp-ort-prof-'));
  for (const job of JOBS) {
    const prefix = path.join(tmp, job.name);
    const session = await ort.InferenceSession.create(path.join(root, job.model), {
      intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
      graphOptimizationLevel: job.opt, enableProfiling: true, profileFilePrefix: prefix,
    });
    for (let i = 0; i < WARMUP + RUNS; i++) await session.run({input});
    session.endProfiling();
    await session.release();
    const files = fs.readdirSync(tmp).filter((f) => f.startsWith(job.name + '_') && f.endsWith('.json'));
    if (files.length !== 1) throw new Error(`${job.name}: expected one trace file, found ${files.length}`);
    const dest = path.join(outDir, job.name + '.json');
    fs.copyFileSync(path.join(tmp, files[0]), dest);
    fs.unlinkSync(path.join(tmp, files[0]));
    process.stdout.write(`${path.relative(root, dest)}: ${job.model} opt=${job.opt} ` +
      `warmup=${WARMUP} runs=${RUNS} onnxruntime-node ${require(path.join(root, 'tests/ort/node_modules/onnxruntime-node/package.json')).version}\n`);
  }
  fs.rmdirSync(tmp);
}
main().catch((e) => { process.stderr.write(`make_ort_profiles: ${e.message}\n`); process.exit(1); });
