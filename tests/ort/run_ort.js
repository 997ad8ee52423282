#!/usr/bin/env node
'use strict';
// ONNX Runtime reference runner (onnxruntime-node, CPU).
//
//   node tests/ort/run_ort.js MODEL.onnx --input NAME=FILE.npy [...] --output-dir DIR
//        [--threads N] [--opt disabled|basic|extended|all] [--profile PREFIX]
//   node tests/ort/run_ort.js --batch JOBS.json [--threads N] [--opt ...] [--profile PREFIX]
//
// Each output is written as DIR/<output name>.npy (characters outside [A-Za-z0-9_.-]
// become '_'). One JSON line per model run goes to stdout:
//   {"model", "output_dir", "outputs": {name: {"file", "dtype", "shape"}}, "run_ms", "profile"}
// JOBS.json is a list of {"model", "inputs": {name: file}, "output_dir", "profile"?};
// relative paths in it are resolved against the folder of JOBS.json. All jobs run in one
// process. --profile PREFIX turns on ORT profiling (enableProfiling, profileFilePrefix);
// the trace file written is named in the "profile" field (in batch mode a job's own
// "profile" prefix overrides the option; the PREFIX gets "_<job index>" appended).
// Errors: one line "run_ort: <file>: <problem>" on stderr, exit code 1. In batch mode a
// failed job prints {"model", "output_dir", "error"} instead, the other jobs still run,
// and the exit code is 1 at the end.
const fs = require('fs');
const path = require('path');
const {readNpy, writeNpy} = require('./npy');

const USAGE = 'usage: run_ort.js MODEL.onnx --input NAME=FILE.npy [...] --output-dir DIR ' +
  '[--threads N] [--opt disabled|basic|extended|all] [--profile PREFIX]\n' +
  '       run_ort.js --batch JOBS.json [--threads N] [--opt ...] [--profile PREFIX]';
const OPT_LEVELS = ['disabled', 'basic', 'extended', 'layout', 'all'];

function die(msg) {
  process.stderr.write(`run_ort: ${msg}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const a = {model: null, inputs: {}, outputDir: null, threads: 1, opt: 'basic', profile: null, batch: null};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) die(`option ${k} needs a value\n${USAGE}`);
      return argv[++i];
    };
    if (k === '--input') {
      const v = val();
      const eq = v.indexOf('=');
      if (eq <= 0) die(`--input expects NAME=FILE.npy, got '${v}'`);
      a.inputs[v.slice(0, eq)] = v.slice(eq + 1);
    } else if (k === '--output-dir') a.outputDir = val();
    else if (k === '--threads') {
      a.threads = Number(val());
      if (!Number.isInteger(a.threads) || a.threads < 1) die('--threads expects a positive integer');
    } else if (k === '--opt') {
      a.opt = val();
      if (!OPT_LEVELS.includes(a.opt)) die(`--opt expects one of ${OPT_LEVELS.join('|')}, got '${a.opt}'`);
    } else if (k === '--profile') a.profile = val();
    else if (k === '--batch') a.batch = val();
    else if (k === '-h' || k === '--help') { process.stdout.write(USAGE + '\n'); process.exit(0); }
    else if (k.startsWith('--')) die(`unknown option ${k}\n${USAGE}`);
    else if (a.model === null) a.model = k;
    else die(`unexpected argument '${k}'\n${USAGE}`);
  }
  if (a.batch === null) {
    if (!a.model) die(`no model given\n${USAGE}`);
    if (!a.outputDir) die(`--output-dir is required\n${USAGE}`);
  } else if (a.model) die('give either MODEL.onnx or --batch JOBS.json, not both');
  return a;
}

function loadOrt() {
  try { return require('onnxruntime-node'); } catch (e) {
    die(`cannot load onnxruntime-node (npm install --prefix ${__dirname} --ignore-scripts): ${e.message.split('\n')[0]}`);
  }
}

function sanitize(name) { return name.replace(/[^A-Za-z0-9_.-]/g, '_'); }

function listProfiles(prefix) {
  const dir = path.dirname(path.resolve(prefix));
  const base = path.basename(prefix);
  try {
    return new Set(fs.readdirSync(dir).filter((f) => f.startsWith(base) && f.endsWith('.json'))
      .map((f) => path.join(dir, f)));
  } catch (e) { return new Set(); }
}

async function runOne(ort, job, opts) {
  const model = job.model;
  if (!fs.existsSync(model)) throw new Error(`${model}: no such file`);
  const so = {
    intraOpNumThreads: opts.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: opts.opt,
  };
  const profile = job.profile || null;
  let before = null;
  if (profile) {
    const dir = path.dirname(path.resolve(profile));
    fs.mkdirSync(dir, {recursive: true});
    so.enableProfiling = true;
    so.profileFilePrefix = path.resolve(profile);
    before = listProfiles(profile);
  }
  let session;
  try { session = await ort.InferenceSession.create(model, so); } catch (e) {
    throw new Error(`${model}: ORT cannot load the model: ${String(e.message).split('\n')[0]}`);
  }
  const feeds = {};
  for (const [name, file] of Object.entries(job.inputs || {})) {
    if (!session.inputNames.includes(name))
      throw new Error(`${model}: model has no input '${name}' (inputs: ${session.inputNames.join(', ')})`);
    const a = readNpy(file);
    feeds[name] = new ort.Tensor(a.dtype, a.data, a.shape);
  }
  for (const name of session.inputNames)
    if (!(name in feeds)) throw new Error(`${model}: input '${name}' not given (--input ${name}=FILE.npy)`);
  const t0 = process.hrtime.bigint();
  let out;
  try { out = await session.run(feeds); } catch (e) {
    throw new Error(`${model}: ORT run failed: ${String(e.message).split('\n')[0]}`);
  }
  const runMs = Number(process.hrtime.bigint() - t0) / 1e6;
  fs.mkdirSync(job.output_dir, {recursive: true});
  const outputs = {};
  for (const name of session.outputNames) {
    const t = out[name];
    const file = path.join(job.output_dir, sanitize(name) + '.npy');
    writeNpy(file, t.type, t.dims.map(Number), t.data);
    outputs[name] = {file, dtype: t.type, shape: t.dims.map(Number)};
  }
  let profFile = null;
  if (profile) {
    if (typeof session.endProfiling === 'function') session.endProfiling();
    await session.release();
    const after = listProfiles(profile);
    const fresh = [...after].filter((f) => !before.has(f)).sort();
    profFile = fresh.length ? fresh[fresh.length - 1] : null;
  } else {
    await session.release();
  }
  return {model, output_dir: job.output_dir, outputs, run_ms: Number(runMs.toFixed(3)), profile: profFile};
}

function loadJobs(file) {
  let jobs;
  try { jobs = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (e) {
    die(`${file}: cannot read jobs: ${e.code || e.message}`);
  }
  if (!Array.isArray(jobs)) die(`${file}: expected a JSON list of jobs`);
  const base = path.dirname(path.resolve(file));
  const res = (p) => (path.isAbsolute(p) ? p : path.join(base, p));
  return jobs.map((j, i) => {
    if (!j || typeof j.model !== 'string' || typeof j.output_dir !== 'string' ||
        (j.inputs !== undefined && (typeof j.inputs !== 'object' || Array.isArray(j.inputs))))
      die(`${file}: job ${i} needs "model" (string), "inputs" ({name: file}) and "output_dir" (string)`);
    const inputs = {};
    for (const [k, v] of Object.entries(j.inputs || {})) inputs[k] = res(String(v));
    return {model: res(j.model), inputs, output_dir: res(j.output_dir),
      profile: j.profile ? res(j.profile) : null, index: i};
  });
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const opts = {threads: a.threads, opt: a.opt};
  let jobs;
  if (a.batch !== null) {
    jobs = loadJobs(a.batch);
    if (a.profile) for (const j of jobs) if (!j.profile) j.profile = `${a.profile}_${j.index}`;
  } else {
    jobs = [{model: a.model, inputs: a.inputs, output_dir: a.outputDir, profile: a.profile}];
  }
  let failed = 0;
  for (const job of jobs) {
    let r;
    try { r = await runOne(ort, job, opts); } catch (e) {
      if (a.batch === null) die(e.message);
      // batch mode: report, go on with the other jobs, exit 1 at the end
      failed++;
      process.stderr.write(`run_ort: ${e.message}\n`);
      r = {model: job.model, output_dir: job.output_dir, error: e.message};
    }
    process.stdout.write(JSON.stringify(r) + '\n');
  }
  if (failed) die(`${failed} of ${jobs.length} jobs failed`);
}

main().catch((e) => die(e.message));
