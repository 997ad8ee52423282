'use strict';
// Checks a zoo-mts output directory against ONNX Runtime: for every group in
// mts.json and every member, the stitched graph's outputs on the member's test
// inputs equal the member model's own outputs (max relative difference <= --tol).
// Relative difference = max |a - b| / max(max |b|, 1).
//   node tests/mts/ort_mts.js MTS_DIR [--samples N] [--tol T]
const fs = require('fs');
const path = require('path');
const {readNpy} = require('../ort/npy.js');

function die(msg) {
  process.stderr.write(`ort_mts: ${msg}\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.length < 1) die('usage: ort_mts.js MTS_DIR [--samples N] [--tol T]');
const dir = args[0];
let samples = 8, tol = 1e-5;
for (let i = 1; i < args.length; i++) {
  if (args[i] === '--samples') samples = Number(args[++i]);
  else if (args[i] === '--tol') tol = Number(args[++i]);
  else die(`unknown option ${args[i]}`);
}
let ort;
try { ort = require(path.join(__dirname, '..', 'ort', 'node_modules', 'onnxruntime-node')); }
catch (e) { die(`cannot load onnxruntime-node (run scripts/bootstrap.sh): ${e.message.split('\n')[0]}`); }

const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'mts.json'), 'utf8'));
const zooPath = path.resolve(dir, manifest.zoo.path);
const zoo = JSON.parse(fs.readFileSync(zooPath, 'utf8'));
const zooDir = path.dirname(zooPath);
const options = {intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'disabled'};

function relDiff(a, b) {
  let num = 0, den = 1;
  for (let i = 0; i < a.length; i++) {
    num = Math.max(num, Math.abs(a[i] - b[i]));
    den = Math.max(den, Math.abs(b[i]));
  }
  return num / den;
}

function sample(x, i) {
  const n = x.data.length / x.shape[0];
  return new ort.Tensor('float32', Float32Array.from(x.data.subarray(i * n, (i + 1) * n)), [1, ...x.shape.slice(1)]);
}

async function main() {
  let worst = 0, checks = 0;
  for (const g of manifest.groups) {
    const stitched = await ort.InferenceSession.create(path.join(dir, g.file), options);
    const members = [];
    for (const m of g.members) {
      const task = zoo.tasks.find((t) => t.name === m.task);
      const variant = task.variants.find((v) => v.id === m.variant);
      members.push({m, session: await ort.InferenceSession.create(path.join(zooDir, variant.onnx), options),
                    x: readNpy(path.join(zooDir, task.dataset.inputs))});
    }
    for (let i = 0; i < samples; i++) {
      const feeds = {};
      for (const {m, x} of members) feeds[m.stitched_input] = sample(x, i % x.shape[0]);
      const got = await stitched.run(feeds);
      for (const {m, session} of members) {
        const own = await session.run({[m.input]: feeds[m.stitched_input]});
        m.outputs.forEach((name, k) => {
          const d = relDiff(got[m.stitched_outputs[k]].data, own[name].data);
          worst = Math.max(worst, d);
          checks++;
          if (!(d <= tol)) die(`${g.name}/${m.task}: output ${name} differs (relative ${d}) at sample ${i}`);
        });
      }
    }
  }
  console.log(JSON.stringify({checks, worst_relative_difference: worst, tol}));
}
main().catch((e) => die(e.message.split('\n')[0]));
