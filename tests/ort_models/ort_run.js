#!/usr/bin/env node
'use strict';
// ONNX Runtime (onnxruntime-node) runner for the runtime's equivalence checks and benchmarks.
//
//   node ort_run.js --ort-prefix DIR MODEL.onnx [--input NAME=FILE.npy]... [--output-dir DIR]
//                   [--threads N] [--repeat N] [--profile PREFIX]
//
// Prints one JSON line: {"create_ms", "first_run_ms", "warm_median_ms", "warm_p90_ms", "warm_min_ms", "outputs"}.
// --profile turns on ORT's profiler (which slows the runs: time without it) and adds
// "profile": the JSON file it wrote (PREFIX_<date>.json), with per-node kernel times.
// Outputs go to DIR/<name>.npy. ORT is loaded from DIR/node_modules/onnxruntime-node
// (npm install --prefix DIR onnxruntime-node@1.30.0 --ignore-scripts).
const fs = require('fs');
const path = require('path');

function die(msg) { process.stderr.write(`ort_run: ${msg}\n`); process.exit(1); }

const npy = require('../ort/npy');

function readInput(file) {
  try { const t = npy.readNpy(file); return {type: t.dtype, data: t.data, shape: t.shape}; } catch (e) { die(e.message); }
}

async function main() {
  const a = {model: null, inputs: {}, outputDir: null, threads: 1, repeat: 0, ortPrefix: null, profile: null};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => { if (i + 1 >= argv.length) die(`${k} needs a value`); return argv[++i]; };
    if (k === '--input') { const v = val(); const eq = v.indexOf('='); if (eq <= 0) die(`bad --input ${v}`); a.inputs[v.slice(0, eq)] = v.slice(eq + 1); }
    else if (k === '--output-dir') a.outputDir = val();
    else if (k === '--threads') a.threads = Number(val());
    else if (k === '--repeat') a.repeat = Number(val());
    else if (k === '--ort-prefix') a.ortPrefix = val();
    else if (k === '--profile') a.profile = val();
    else if (k.startsWith('--')) die(`unknown option ${k}`);
    else a.model = k;
  }
  if (!a.model || !a.ortPrefix) die('usage: ort_run.js --ort-prefix DIR MODEL.onnx [--input NAME=FILE.npy]... [--output-dir DIR] [--threads N] [--repeat N]');
  let ort;
  try { ort = require(path.resolve(a.ortPrefix, 'node_modules', 'onnxruntime-node')); } catch (e) { die(`cannot load onnxruntime-node from ${a.ortPrefix}: ${e.message.split('\n')[0]}`); }
  const feeds0 = {};
  for (const [name, file] of Object.entries(a.inputs)) feeds0[name] = readInput(file);
  const t0 = process.hrtime.bigint();
  let session;
  try {
    const opts = {intraOpNumThreads: a.threads, interOpNumThreads: 1, executionMode: 'sequential'};
    if (a.profile) Object.assign(opts, {enableProfiling: true, profileFilePrefix: a.profile});
    session = await ort.InferenceSession.create(a.model, opts);
  } catch (e) { die(`${a.model}: ORT cannot load the model: ${String(e.message).split('\n')[0]}`); }
  const t1 = process.hrtime.bigint();
  const feeds = {};
  for (const name of session.inputNames) {
    const f = feeds0[name];
    if (!f) die(`${a.model}: input '${name}' not given`);
    feeds[name] = new ort.Tensor(f.type, f.data, f.shape);
  }
  const out = await session.run(feeds);
  const t2 = process.hrtime.bigint();
  const times = [];
  for (let r = 0; r < a.repeat; r++) {
    const s = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  times.sort((x, y) => x - y);
  const pct = (p) => times.length ? times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)] : null;
  const outputs = {};
  if (a.outputDir) {
    fs.mkdirSync(a.outputDir, {recursive: true});
    for (const [name, t] of Object.entries(out)) {
      const file = path.join(a.outputDir, name.replace(/[/\\:]/g, '_') + '.npy');
      npy.writeNpy(file, t.type, [...t.dims], t.data);
      outputs[name] = file;
    }
  }
  const report = {create_ms: Number(t1 - t0) / 1e6, first_run_ms: Number(t2 - t1) / 1e6,
    cold_total_ms: Number(t2 - t0) / 1e6, warm_median_ms: pct(0.5), warm_p90_ms: pct(0.9),
    warm_min_ms: times.length ? times[0] : null, outputs};
  if (a.profile) {
    // ORT names the file itself (PREFIX_<date>.json); the newest one with the prefix is it.
    session.endProfiling();
    const dir = path.dirname(path.resolve(a.profile)), base = path.basename(a.profile) + '_';
    const files = fs.readdirSync(dir).filter((f) => f.startsWith(base) && f.endsWith('.json'))
      .map((f) => path.join(dir, f)).sort((x, y) => fs.statSync(y).mtimeMs - fs.statSync(x).mtimeMs);
    if (!files.length) die(`${a.profile}: ORT wrote no profile`);
    report.profile = files[0];
  }
  process.stdout.write(JSON.stringify(report) + '\n');
}
main().catch((e) => die(String(e && e.message || e).split('\n')[0]));
