#include "libplan/graph/tensor.h"

#include <cstring>

#include "libplan/util/hash.h"

namespace zp::graph {
using onnx::TensorProto;

int64_t numElements(const TensorProto& t) {
  int64_t n = 1;
  for (auto d : t.dims()) n *= d;
  return n;
}

int64_t elementSize(int32_t elemType) {
  switch (elemType) {
    case TensorProto::FLOAT: case TensorProto::INT32: case TensorProto::UINT32: return 4;
    case TensorProto::DOUBLE: case TensorProto::INT64: case TensorProto::UINT64: return 8;
    case TensorProto::FLOAT16: case TensorProto::BFLOAT16: case TensorProto::INT16: case TensorProto::UINT16: return 2;
    case TensorProto::INT8: case TensorProto::UINT8: case TensorProto::BOOL: return 1;
    default: return 0;
  }
}

int64_t byteSize(const TensorProto& t) { return numElements(t) * elementSize(t.data_type()); }

namespace {
template <typename T>
void appendPod(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) bits = sign;
    else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) { mant <<= 1; --exp; }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) bits = sign | 0x7f800000u | (mant << 13);
  else bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
std::vector<T> decodeRaw(const std::string& raw) {
  std::vector<T> v(raw.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), raw.data(), v.size() * sizeof(T));
  return v;
}
}  // namespace

std::string rawBytes(const TensorProto& t) {
  if (t.has_raw_data()) return t.raw_data();
  std::string out;
  switch (t.data_type()) {
    case TensorProto::FLOAT: for (float v : t.float_data()) appendPod(out, v); break;
    case TensorProto::DOUBLE: for (double v : t.double_data()) appendPod(out, v); break;
    case TensorProto::INT64: for (int64_t v : t.int64_data()) appendPod(out, v); break;
    case TensorProto::UINT64: for (uint64_t v : t.uint64_data()) appendPod(out, v); break;
    case TensorProto::INT32: for (int32_t v : t.int32_data()) appendPod(out, v); break;
    case TensorProto::INT8: for (int32_t v : t.int32_data()) appendPod(out, static_cast<int8_t>(v)); break;
    case TensorProto::UINT8: case TensorProto::BOOL:
      for (int32_t v : t.int32_data()) appendPod(out, static_cast<uint8_t>(v));
      break;
    case TensorProto::INT16: for (int32_t v : t.int32_data()) appendPod(out, static_cast<int16_t>(v)); break;
    case TensorProto::UINT16: case TensorProto::FLOAT16: case TensorProto::BFLOAT16:
      for (int32_t v : t.int32_data()) appendPod(out, static_cast<uint16_t>(v));
      break;
    default:
      for (const auto& s : t.string_data()) out += s;
  }
  return out;
}

std::vector<float> toFloats(const TensorProto& t) {
  std::string raw = rawBytes(t);
  std::vector<float> out;
  auto convert = [&](const auto& v) { out.assign(v.begin(), v.end()); };
  switch (t.data_type()) {
    case TensorProto::FLOAT: return decodeRaw<float>(raw);
    case TensorProto::DOUBLE: convert(decodeRaw<double>(raw)); break;
    case TensorProto::INT64: convert(decodeRaw<int64_t>(raw)); break;
    case TensorProto::INT32: convert(decodeRaw<int32_t>(raw)); break;
    case TensorProto::INT8: convert(decodeRaw<int8_t>(raw)); break;
    case TensorProto::UINT8: case TensorProto::BOOL: convert(decodeRaw<uint8_t>(raw)); break;
    case TensorProto::INT16: convert(decodeRaw<int16_t>(raw)); break;
    case TensorProto::UINT16: convert(decodeRaw<uint16_t>(raw)); break;
    case TensorProto::FLOAT16:
      for (uint16_t h : decodeRaw<uint16_t>(raw)) out.push_back(halfToFloat(h));
      break;
    default: break;
  }
  return out;
}

std::vector<int64_t> toInt64s(const TensorProto& t) {
  if (t.data_type() == TensorProto::INT64) return decodeRaw<int64_t>(rawBytes(t));
  std::vector<int64_t> out;
  for (float f : toFloats(t)) out.push_back(static_cast<int64_t>(f));
  return out;
}

int64_t countZeros(const TensorProto& t) {
  // Exact zeros of the stored value (for quantized weights with zero point 0,
  // this is the same as zeros of the dequantized weight).
  std::string raw = rawBytes(t);
  int64_t size = elementSize(t.data_type());
  if (size == 0) return 0;
  int64_t zeros = 0, n = static_cast<int64_t>(raw.size()) / size;
  if (t.data_type() == TensorProto::FLOAT) {
    for (float v : decodeRaw<float>(raw)) zeros += (v == 0.0f);
    return zeros;
  }
  if (t.data_type() == TensorProto::DOUBLE) {
    for (double v : decodeRaw<double>(raw)) zeros += (v == 0.0);
    return zeros;
  }
  if (t.data_type() == TensorProto::FLOAT16 || t.data_type() == TensorProto::BFLOAT16) {
    for (uint16_t h : decodeRaw<uint16_t>(raw)) zeros += ((h & 0x7fff) == 0);
    return zeros;
  }
  for (int64_t i = 0; i < n; ++i) {
    bool allZero = true;
    for (int64_t b = 0; b < size; ++b) allZero &= (raw[static_cast<size_t>(i * size + b)] == 0);
    zeros += allZero;
  }
  return zeros;
}

std::string contentHash(const TensorProto& t) {
  Sha256 h;
  h.updateField(std::to_string(t.data_type()));
  std::string dims;
  for (auto d : t.dims()) dims += std::to_string(d) + ",";
  h.updateField(dims);
  h.updateField(rawBytes(t));
  return h.finishHex();
}

std::string elemTypeName(int32_t elemType) {
  switch (elemType) {
    case TensorProto::FLOAT: return "float32";
    case TensorProto::DOUBLE: return "float64";
    case TensorProto::FLOAT16: return "float16";
    case TensorProto::BFLOAT16: return "bfloat16";
    case TensorProto::INT8: return "int8";
    case TensorProto::UINT8: return "uint8";
    case TensorProto::INT16: return "int16";
    case TensorProto::UINT16: return "uint16";
    case TensorProto::INT32: return "int32";
    case TensorProto::INT64: return "int64";
    case TensorProto::BOOL: return "bool";
    case TensorProto::STRING: return "string";
    default: return "type" + std::to_string(elemType);
  }
}

}  // namespace zp::graph
