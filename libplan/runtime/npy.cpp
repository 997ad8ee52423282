#include "libplan/runtime/npy.h"

#include <cstring>
#include <regex>

#include "libplan/util/file.h"

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
  }
  return "";
}
}  // namespace

Expected<Tensor> readNpy(const std::filesystem::path& path) {
  const std::string label = path.string();
  ZP_ASSIGN_OR_RETURN(std::string bytes, readFile(path));
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return makeError("{}: not a .npy file", label);
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
  if (pos + headerLen > bytes.size()) return makeError("{}: truncated .npy header", label);
  const std::string header = bytes.substr(pos, headerLen);
  std::smatch mDescr, mOrder, mShape;
  if (!std::regex_search(header, mDescr, std::regex("'descr'\\s*:\\s*'([^']+)'")) ||
      !std::regex_search(header, mOrder, std::regex("'fortran_order'\\s*:\\s*(True|False)")) ||
      !std::regex_search(header, mShape, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
    return makeError("{}: malformed .npy header", label);
  if (mOrder[1] == "True") return makeError("{}: Fortran-order arrays are not supported", label);
  DType dt;
  const std::string d = mDescr[1];
  if (d == "<f4") dt = DType::F32;
  else if (d == "<i8") dt = DType::I64;
  else if (d == "<i4") dt = DType::I32;
  else if (d == "|i1" || d == "<i1") dt = DType::I8;
  else if (d == "|u1" || d == "<u1") dt = DType::U8;
  else if (d == "|b1") dt = DType::Bool;
  else return makeError("{}: dtype '{}' is not supported", label, d);
  Shape shape;
  const std::string dims = mShape[1];
  std::regex num("\\d+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator(); ++it)
    shape.push_back(std::stoll(it->str()));
  Tensor t = Tensor::empty(dt, shape);
  const size_t dataPos = pos + headerLen;
  if (bytes.size() - dataPos != t.bytes())
    return makeError("{}: holds {} data bytes, shape {} needs {}", label, bytes.size() - dataPos, shapeString(shape), t.bytes());
  if (t.bytes()) std::memcpy(t.data, bytes.data() + dataPos, t.bytes());
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

Status writeNpy(const std::filesystem::path& path, const Tensor& t) { return writeFileAtomic(path, encodeNpy(t)); }

}  // namespace zp::runtime
