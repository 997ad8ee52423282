'use strict';
// Checks a zoo-mts output directory against ONNX Runtime: for every group in
// mts.json and every member, the stitched graph's outputs on the member's test
// inputs equal the member model's own outputs (max relative difference <= --tol).
// Relative difference = max |a - b| / max(max |b|, 1).
//   node tests/mts_flow/ort_mts.js MTS_DIR [--samples N] [--tol T]
const path = require('path');
const {readNpy} = require('../ort/npy.js');
const {setup, relDiff} = require('../ort/output_dir_check.js');

const {die, dir, samples, tol, ort, manifest, zoo, zooDir, options} =
    setup({tool: 'ort_mts', dirName: 'MTS_DIR', manifestName: 'mts.json', samples: 8});

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
          const d = relDiff(got[m.stitched_outputs[k]].data, own[name].data, 1);
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
