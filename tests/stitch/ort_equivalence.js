'use strict';
// Checks a zoo-stitch output directory against ONNX Runtime:
//  - every materialized stitched variant gives the same outputs as its
//    subgraphs run one after another (max relative difference <= --tol);
//  - a stitched variant made of one original variant at every position gives
//    exactly (bit for bit) that variant's outputs.
// Relative difference = max |a - b| / max(max |b|, 1e-12) over an output.
//   node tests/stitch/ort_equivalence.js STITCH_DIR [--samples N] [--tol T]
const path = require('path');
const {readNpy} = require('../ort/npy.js');
const {setup, relDiff} = require('../ort/output_dir_check.js');

const {die, dir, samples, tol, ort, manifest, zoo, zooDir, options} =
    setup({tool: 'ort_equivalence', dirName: 'STITCH_DIR', manifestName: 'stitch.json', samples: 4});
const sessions = new Map();
async function session(file) {
  if (!sessions.has(file)) sessions.set(file, await ort.InferenceSession.create(file, options));
  return sessions.get(file);
}

function bitEqual(a, b) {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

// Inputs: the task's dataset, first `samples` rows, or seeded pseudo-random data.
function taskInputs(taskName, inputShape) {
  const task = zoo.tasks.find((t) => t.name === taskName);
  const per = inputShape.reduce((a, b) => a * b, 1);
  const out = [];
  if (task && task.dataset) {
    const x = readNpy(path.resolve(zooDir, task.dataset.inputs));
    const n = Math.min(samples, x.shape[0]);
    for (let s = 0; s < n; s++) out.push(Float32Array.from(x.data.subarray(s * per, (s + 1) * per)));
  } else {
    let seed = 12345;
    for (let s = 0; s < samples; s++) {
      const v = new Float32Array(per);
      for (let i = 0; i < per; i++) { seed = (seed * 1103515245 + 12345) % 2147483648; v[i] = seed / 2147483648; }
      out.push(v);
    }
  }
  return out;
}

async function runChain(files, inputName, x, shape) {
  let feeds = {[inputName]: new ort.Tensor('float32', x, shape)};
  let result;
  for (const f of files) {
    const s = await session(f);
    // Each part has exactly one input: the previous part's single output (or the model input).
    const given = Object.values(feeds)[0];
    result = await s.run({[s.inputNames[0]]: given});
    feeds = result;
  }
  return result;
}

async function main() {
  let checked = 0, exact = 0, worst = 0, failures = [];
  for (const task of manifest.tasks) {
    const first = task.positions[0].subgraphs[0].inputs[0];
    const inputs = taskInputs(task.name, first.shape);
    const ids = task.variants.map((v) => v.id);
    for (const m of task.combinations.materialized) {
      const parts = m.id.split('+');
      const stitched = await session(path.join(dir, m.file));
      const subFiles = parts.map((v, p) => path.join(dir, task.positions[p].subgraphs[ids.indexOf(v)].file));
      const uniform = parts.every((v) => v === parts[0]);
      for (const x of inputs) {
        const tx = new ort.Tensor('float32', x, first.shape);
        const got = await stitched.run({[stitched.inputNames[0]]: tx});
        const want = await runChain(subFiles, first.name, x, first.shape);
        const outName = stitched.outputNames[0];
        const wantOut = Object.values(want)[0].data;
        const d = relDiff(got[outName].data, wantOut, 1e-12);
        worst = Math.max(worst, d);
        if (!(d <= tol)) failures.push(`${task.name}/${m.id}: stitched vs subgraphs rel diff ${d}`);
        if (uniform) {
          const variant = task.variants[ids.indexOf(parts[0])];
          const orig = await session(path.resolve(zooDir, variant.onnx));
          const o = await orig.run({[orig.inputNames[0]]: tx});
          if (!bitEqual(got[outName].data, o[orig.outputNames[0]].data))
            failures.push(`${task.name}/${m.id}: outputs differ from the original variant '${parts[0]}'`);
          else exact++;
        }
      }
      checked++;
    }
  }
  console.log(JSON.stringify({stitched_variants_checked: checked, samples_per_variant: samples,
    max_relative_difference: worst, tolerance: tol, exact_matches_with_originals: exact,
    failures: failures.length}));
  if (checked === 0) die(`${dir}: no materialized stitched variants to check`);
  if (failures.length) {
    for (const f of failures.slice(0, 20)) process.stderr.write(`FAIL ${f}\n`);
    process.exit(1);
  }
}

main().catch((e) => die(e.message.split('\n')[0]));
