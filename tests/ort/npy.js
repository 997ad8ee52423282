'use strict';
// Minimal .npy reader/writer (format versions 1.0-3.0 read, 1.0 written; C order,
// little-endian): float32, float64, float16, int64, int32, int16, int8, uint64, uint32,
// uint16, uint8, bool.
const fs = require('fs');

const DTYPES = {
  '<f4': {type: 'float32', Array: Float32Array},
  '<f8': {type: 'float64', Array: Float64Array},
  '<i8': {type: 'int64', Array: BigInt64Array},
  '<i4': {type: 'int32', Array: Int32Array},
  '<i2': {type: 'int16', Array: Int16Array},
  '<u8': {type: 'uint64', Array: BigUint64Array},
  '<u4': {type: 'uint32', Array: Uint32Array},
  '<u2': {type: 'uint16', Array: Uint16Array},
  '<f2': {type: 'float16', Array: Uint16Array},
  '|i1': {type: 'int8', Array: Int8Array},
  '|u1': {type: 'uint8', Array: Uint8Array},
  '|b1': {type: 'bool', Array: Uint8Array},
};
const BY_TYPE = {};
for (const [descr, d] of Object.entries(DTYPES)) BY_TYPE[d.type] = descr;
// numpy also spells the one-byte types with '<' or '='
const ALIASES = {'<i1': '|i1', '<u1': '|u1', '=i1': '|i1', '=u1': '|u1', '<b1': '|b1', '=b1': '|b1'};

function fail(file, msg) {
  const e = new Error(`${file}: ${msg}`);
  e.npy = true;
  throw e;
}

function parseNpy(buf, file = '<buffer>') {
  if (buf.length < 10 || buf[0] !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY')
    fail(file, 'not a .npy file (bad magic)');
  const major = buf[6];
  let headerLen, off;
  if (major === 1) { headerLen = buf.readUInt16LE(8); off = 10; }
  else if (major === 2 || major === 3) {
    if (buf.length < 12) fail(file, 'truncated header');
    headerLen = buf.readUInt32LE(8); off = 12;
  } else fail(file, `unsupported .npy version ${major}.${buf[7]}`);
  if (off + headerLen > buf.length) fail(file, 'truncated header');
  const header = buf.toString(major === 3 ? 'utf8' : 'latin1', off, off + headerLen);
  const dm = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const fm = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const sm = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!dm || !fm || !sm) fail(file, `cannot parse header ${JSON.stringify(header.trim())}`);
  let descr = ALIASES[dm[1]] || dm[1];
  const dt = DTYPES[descr];
  if (!dt) fail(file, `unsupported dtype '${dm[1]}' (supported: ${Object.keys(DTYPES).join(', ')})`);
  if (fm[1] === 'True') fail(file, 'Fortran-order arrays are not supported');
  const shape = sm[1].split(',').map((s) => s.trim()).filter((s) => s.length).map((s) => {
    if (!/^\d+$/.test(s)) fail(file, `bad shape entry '${s}'`);
    return Number(s);
  });
  const count = shape.reduce((a, b) => a * b, 1);
  const start = off + headerLen;
  const bytes = count * dt.Array.BYTES_PER_ELEMENT;
  if (buf.length - start < bytes) fail(file, `truncated data: need ${bytes} bytes, have ${buf.length - start}`);
  // copy into an aligned buffer
  const ab = new ArrayBuffer(bytes);
  new Uint8Array(ab).set(buf.subarray(start, start + bytes));
  let data = new dt.Array(ab);
  if (dt.type === 'bool') data = Uint8Array.from(data, (v) => (v ? 1 : 0));
  return {dtype: dt.type, shape, data};
}

function readNpy(file) {
  let buf;
  try { buf = fs.readFileSync(file); } catch (e) { fail(file, `cannot read: ${e.code || e.message}`); }
  return parseNpy(buf, file);
}

function formatShape(shape) {
  if (shape.length === 0) return '()';
  if (shape.length === 1) return `(${shape[0]},)`;
  return `(${shape.join(', ')})`;
}

function encodeNpy(dtype, shape, data) {
  const descr = BY_TYPE[dtype];
  if (!descr) throw new Error(`npy: cannot write dtype ${dtype}`);
  const count = shape.reduce((a, b) => a * b, 1);
  if (data.length !== count) throw new Error(`npy: ${data.length} values for shape ${formatShape(shape)}`);
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${formatShape(shape)}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre[0] = 0x93; pre.write('NUMPY', 1, 'latin1'); pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const Arr = DTYPES[descr].Array;
  const typed = data instanceof Arr ? data : Arr.from(data);
  const body = Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength);
  return Buffer.concat([pre, Buffer.from(header, 'latin1'), body]);
}

// Write atomically: temp file in the same folder, then rename.
function writeNpy(file, dtype, shape, data) {
  const buf = encodeNpy(dtype, shape, data);
  const tmp = `${file}.tmp.${process.pid}`;
  fs.writeFileSync(tmp, buf);
  fs.renameSync(tmp, file);
}

module.exports = {parseNpy, readNpy, encodeNpy, writeNpy};
