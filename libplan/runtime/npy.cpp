#include "libplan/runtime/npy.h"

#include <charconv>
#include <cstring>
#include <optional>

#include "libplan/util/file.h"
#include "libplan/util/validate.h"

namespace zp::runtime {

namespace {
const char* descr(DType t) {
  switch (t) {
    case DType::F32: return "<f4";
    case DType::I64: return "<i8";
    case DType::I32: return "<i4";
    case DType::I8: return "|i1";
    case DType::U8: return "|u1";
    case DType::Bool: return "|b1";
    case DType::F64: return "<f8";
    case DType::F16: return "<f2";
    case DType::I16: return "<i2";
    case DType::U16: return "<u2";
    case DType::U32: return "<u4";
    case DType::U64: return "<u8";
    case DType::BF16: return "";  // NumPy has no bfloat16
  }
  return "";
}
}  // namespace

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The text after "'key':" in the header dict (leading blanks skipped), or nothing.
std::optional<std::string_view> valueOf(std::string_view header, std::string_view key) {
  for (char quote : {'\'', '"'}) {
    std::string k;
    k += quote;
    k.append(key);
    k += quote;
    size_t p = header.find(k);
    if (p == std::string_view::npos) continue;
    p += k.size();
    while (p < header.size() && isSpace(header[p])) ++p;
    if (p >= header.size() || header[p] != ':') return std::nullopt;
    ++p;
    while (p < header.size() && isSpace(header[p])) ++p;
    return header.substr(p);
  }
  return std::nullopt;
}

std::optional<std::string> quoted(std::string_view v) {
  if (v.empty() || (v[0] != '\'' && v[0] != '"')) return std::nullopt;
  size_t end = v.find(v[0], 1);
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(v.substr(1, end - 1));
}

std::optional<DType> dtypeOfDescr(const std::string& d) {
  if (d == "<f4") return DType::F32;
  if (d == "<i8") return DType::I64;
  if (d == "<i4") return DType::I32;
  if (d == "|i1" || d == "<i1") return DType::I8;
  if (d == "|u1" || d == "<u1") return DType::U8;
  if (d == "|b1") return DType::Bool;
  if (d == "<f8") return DType::F64;
  if (d == "<f2") return DType::F16;
  if (d == "<i2") return DType::I16;
  if (d == "<u2") return DType::U16;
  if (d == "<u4") return DType::U32;
  if (d == "<u8") return DType::U64;
  return std::nullopt;
}

// "(2, 3)", "(3,)", "()": every dimension a non-negative integer.
Expected<Shape> parseShape(std::string_view v, const std::string& label) {
  if (v.empty() || v[0] != '(') return makeError("{}: .npy header: 'shape' is not a tuple", label);
  size_t close = v.find(')');
  if (close == std::string_view::npos) return makeError("{}: .npy header: 'shape' is not a tuple", label);
  std::string_view inner = v.substr(1, close - 1);
  Shape shape;
  size_t start = 0;
  bool trailingComma = false;
  while (start <= inner.size()) {
    size_t comma = inner.find(',', start);
    std::string_view item = inner.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!item.empty() && isSpace(item.front())) item.remove_prefix(1);
    while (!item.empty() && isSpace(item.back())) item.remove_suffix(1);
    if (item.empty()) {
      // Only "(3,)" ends with an empty item; "()" is a scalar.
      const bool endOfTuple = comma == std::string_view::npos;
      if (!endOfTuple || (shape.empty() && trailingComma))
        return makeError("{}: .npy header: 'shape' ({}) has an empty dimension", label, inner);
      break;
    }
    int64_t d = -1;
    auto r = std::from_chars(item.data(), item.data() + item.size(), d);
    if (r.ec == std::errc::result_out_of_range)
      return makeError("{}: .npy header: dimension {} of 'shape' is too large", label, item);
    if (r.ec != std::errc() || r.ptr != item.data() + item.size() || d < 0)
      return makeError("{}: .npy header: dimension '{}' of 'shape' is not a non-negative integer", label, item);
    shape.push_back(d);
    if (comma == std::string_view::npos) break;
    trailingComma = true;
    start = comma + 1;
  }
  return shape;
}

}  // namespace

Expected<NpyHeader> parseNpyHeader(std::string_view bytes, const std::string& label) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY") return makeError("{}: not a .npy file", label);
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen, pos;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(bytes[8]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    pos = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return makeError("{}: truncated .npy header", label);
    uint32_t l;
    std::memcpy(&l, bytes.data() + 8, 4);
    headerLen = l;
    pos = 12;
  } else {
    return makeError("{}: unsupported .npy version {}", label, major);
  }
  if (headerLen > kMaxNpyHeaderBytes) return makeError("{}: .npy header of {} bytes is too large", label, headerLen);
  if (pos + headerLen > bytes.size()) return makeError("{}: truncated .npy header", label);
  const std::string_view header = bytes.substr(pos, headerLen);
  auto descr = valueOf(header, "descr");
  auto order = valueOf(header, "fortran_order");
  auto shapeText = valueOf(header, "shape");
  std::optional<std::string> d = descr ? quoted(*descr) : std::nullopt;
  if (!d || !order || !shapeText) return makeError("{}: malformed .npy header", label);
  if (order->substr(0, 4) == "True") return makeError("{}: Fortran-order arrays are not supported", label);
  if (order->substr(0, 5) != "False") return makeError("{}: malformed .npy header", label);
  NpyHeader h;
  auto dt = dtypeOfDescr(*d);
  if (!dt) return makeError("{}: dtype '{}' is not supported", label, *d);
  h.dtype = *dt;
  ZP_ASSIGN_OR_RETURN(h.shape, parseShape(*shapeText, label));
  h.dataOffset = pos + headerLen;
  const size_t available = bytes.size() - h.dataOffset;
  // Elements x item size must equal the bytes present; computed without overflow.
  uint64_t count = 1;
  for (int64_t dim : h.shape) {
    auto next = checkedMul(count, static_cast<uint64_t>(dim), available);
    if (!next) return makeError("{}: shape {} needs more than the {} data bytes the file holds", label, shapeString(h.shape), available);
    count = *next;
  }
  const uint64_t need = count * dtypeSize(h.dtype);  // count <= the file's size: no overflow
  if (need != available)
    return makeError("{}: holds {} data bytes, shape {} needs {}", label, available, shapeString(h.shape), need);
  h.dataBytes = static_cast<size_t>(need);
  return h;
}

Expected<Tensor> readNpy(const std::filesystem::path& path) {
  const std::string label = path.string();
  ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(path));
  ZP_ASSIGN_OR_RETURN(NpyHeader h, parseNpyHeader(bytes, label));
  Tensor t = Tensor::empty(h.dtype, h.shape);
  if (h.dataBytes) std::memcpy(t.data, bytes.data() + h.dataOffset, h.dataBytes);
  return t;
}

std::string encodeNpy(const Tensor& t) {
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += std::to_string(t.shape[i]) + (t.shape.size() == 1 || i + 1 < t.shape.size() ? "," : "");
  shape += ")";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr(t.dtype), shape);
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(1);
  out += static_cast<char>(0);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(static_cast<const char*>(t.data), t.bytes());
  return out;
}

Status writeNpy(const std::filesystem::path& path, const Tensor& t) {
  if (*descr(t.dtype) == '\0') return makeError("{}: .npy has no element type for {}", path.string(), dtypeName(t.dtype));
  return writeFileAtomic(path, encodeNpy(t));
}

}  // namespace zp::runtime
