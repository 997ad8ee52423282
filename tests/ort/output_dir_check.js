'use strict';
// What the checks of a tool's output directory against ONNX Runtime share
// (tests/stitch/ort_equivalence.js, tests/mts_flow/ort_mts.js): the command line
// DIR [--samples N] [--tol T], onnxruntime-node from tests/ort, the directory's
// manifest and the zoo it names, and the relative difference of two outputs.
const fs = require('fs');
const path = require('path');

// A function that prints "TOOL: message" and exits 2.
function dieAs(tool) {
  return (msg) => {
    process.stderr.write(`${tool}: ${msg}\n`);
    process.exit(2);
  };
}

// Parses the command line, loads ORT, DIR/manifestName and the zoo its zoo.path names.
function setup({tool, dirName, manifestName, samples}) {
  const die = dieAs(tool);
  const args = process.argv.slice(2);
  if (args.length < 1) die(`usage: ${tool}.js ${dirName} [--samples N] [--tol T]`);
  const dir = args[0];
  let tol = 1e-5;
  for (let i = 1; i < args.length; i++) {
    if (args[i] === '--samples') samples = Number(args[++i]);
    else if (args[i] === '--tol') tol = Number(args[++i]);
    else die(`unknown option ${args[i]}`);
  }
  let ort;
  try { ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node')); }
  catch (e) { die(`cannot load onnxruntime-node (run scripts/bootstrap.sh): ${e.message.split('\n')[0]}`); }
  const readJson = (file) => {
    try { return JSON.parse(fs.readFileSync(file, 'utf8')); }
    catch (e) { die(`${file}: ${e.message.split('\n')[0]}`); }
  };
  const manifest = readJson(path.join(dir, manifestName));
  const zooPath = path.resolve(dir, manifest.zoo.path);
  const zoo = readJson(zooPath);
  return {die, dir, samples, tol, ort, manifest, zoo, zooDir: path.dirname(zooPath),
          options: {intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'disabled'}};
}

// max |a - b| / max(max |b|, floor) over two outputs of the same length.
function relDiff(a, b, floor) {
  let num = 0, den = floor;
  for (let i = 0; i < a.length; i++) {
    num = Math.max(num, Math.abs(a[i] - b[i]));
    den = Math.max(den, Math.abs(b[i]));
  }
  return num / den;
}

module.exports = {setup, relDiff};
