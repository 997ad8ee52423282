#!/usr/bin/env node
'use strict';
// Top-1 accuracy of a classifier with a batch-1 input, run one sample at a time.
//   node tests/ort/eval_accuracy.js MODEL.onnx X.npy Y.npy [--threads N]
//        [--opt disabled|basic|extended|all] [--logits OUT.npy] [--limit N]
// X: [N, ...] (any supported dtype), Y: [N] int64/int32 class ids. The model's first
// input gets X[i] reshaped to [1, ...]; its first output must hold the class scores.
// Prints one JSON line {"model", "samples", "correct", "top1", "ms_per_sample"};
// --logits writes all first-output rows stacked as float32 [N, C].
const {readNpy, writeNpy} = require('./npy');

const USAGE = 'usage: eval_accuracy.js MODEL.onnx X.npy Y.npy [--threads N] [--opt LEVEL] [--logits OUT.npy] [--limit N]';

function die(msg) {
  process.stderr.write(`eval_accuracy: ${msg}\n`);
  process.exit(1);
}

async function main() {
  const pos = [];
  let threads = 1, opt = 'basic', logitsFile = null, limit = Infinity;
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => { if (i + 1 >= argv.length) die(`option ${k} needs a value`); return argv[++i]; };
    if (k === '--threads') threads = Number(val());
    else if (k === '--opt') opt = val();
    else if (k === '--logits') logitsFile = val();
    else if (k === '--limit') limit = Number(val());
    else if (k === '-h' || k === '--help') { console.log(USAGE); return; }
    else if (k.startsWith('--')) die(`unknown option ${k}\n${USAGE}`);
    else pos.push(k);
  }
  if (pos.length !== 3) die(USAGE);
  if (!Number.isInteger(threads) || threads < 1) die('--threads expects a positive integer');
  if (!['disabled', 'basic', 'extended', 'layout', 'all'].includes(opt)) die(`bad --opt '${opt}'`);
  const [modelPath, xPath, yPath] = pos;
  let ort;
  try { ort = require('onnxruntime-node'); } catch (e) { die(`cannot load onnxruntime-node: ${e.message.split('\n')[0]}`); }
  let x, y;
  try { x = readNpy(xPath); y = readNpy(yPath); } catch (e) { die(e.message); }
  if (!['int64', 'int32'].includes(y.dtype) || y.shape.length !== 1) die(`${yPath}: labels must be int64/int32 [N]`);
  if (x.shape.length < 1 || x.shape[0] !== y.shape[0]) die(`${xPath}: first axis ${x.shape[0]} != ${y.shape[0]} labels in ${yPath}`);
  const n = Math.min(x.shape[0], limit);
  const per = x.shape.slice(1).reduce((a, b) => a * b, 1);
  let session;
  try {
    session = await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: opt});
  } catch (e) { die(`${modelPath}: ORT cannot load the model: ${String(e.message).split('\n')[0]}`); }
  const inName = session.inputNames[0], outName = session.outputNames[0];
  let correct = 0, classes = null, all = null;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const slice = x.data.slice(i * per, (i + 1) * per);
    const out = await session.run({[inName]: new ort.Tensor(x.dtype, slice, [1, ...x.shape.slice(1)])});
    const s = out[outName].data;
    if (classes === null) {
      classes = s.length;
      if (logitsFile) all = new Float32Array(n * classes);
    }
    let best = 0;
    for (let c = 1; c < s.length; c++) if (s[c] > s[best]) best = c;
    if (BigInt(best) === BigInt(y.data[i])) correct++;
    if (all) all.set(s, i * classes);
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await session.release();
  if (all) writeNpy(logitsFile, 'float32', [n, classes], all);
  console.log(JSON.stringify({model: modelPath, samples: n, correct, top1: n ? correct / n : 0,
    ms_per_sample: Number((ms / Math.max(n, 1)).toFixed(4))}));
}

main().catch((e) => die(e.message));
