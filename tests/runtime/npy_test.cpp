// .npy headers: shapes and sizes checked before anything is allocated.
#include <gtest/gtest.h>

#include <cstring>

#include "libplan/runtime/npy.h"

namespace zp::runtime {
namespace {

// A version-1 .npy file with `header` (padded like NumPy) and `dataBytes` zero bytes.
std::string npyFile(const std::string& header, size_t dataBytes, int version = 1) {
  std::string h = header;
  const size_t prefix = version == 1 ? 10 : 12;
  h.append((64 - (prefix + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  if (version == 1) {
    out += static_cast<char>(h.size() & 0xff);
    out += static_cast<char>((h.size() >> 8) & 0xff);
  } else {
    uint32_t n = static_cast<uint32_t>(h.size());
    out.append(reinterpret_cast<const char*>(&n), 4);
  }
  return out + h + std::string(dataBytes, '\0');
}

std::string dict(const std::string& shape, const std::string& descr = "<f4", const std::string& order = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
}

std::string error(const std::string& bytes) {
  auto h = parseNpyHeader(bytes, "x.npy");
  return h.ok() ? "" : h.error().message;
}

TEST(NpyHeader, ShapesNumPyWrites) {
  auto a = parseNpyHeader(npyFile(dict("(2, 3)"), 24), "x.npy");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->shape, (Shape{2, 3}));
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_EQ(a->dataBytes, 24u);
  EXPECT_EQ(a->dataOffset % 64, 0u);
  auto v = parseNpyHeader(npyFile(dict("(5,)", "<i8"), 40), "x.npy");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->shape, (Shape{5}));
  auto s = parseNpyHeader(npyFile(dict("()", "|u1"), 1), "x.npy");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->shape.empty());
  auto z = parseNpyHeader(npyFile(dict("(0, 7)"), 0), "x.npy");
  ASSERT_TRUE(z.ok()) << z.error().message;
  EXPECT_EQ(z->dataBytes, 0u);
  auto v2 = parseNpyHeader(npyFile(dict("(1, 2)"), 8, 2), "x.npy");
  ASSERT_TRUE(v2.ok()) << v2.error().message;
  // The double-quoted form is also a Python dict.
  auto dq = parseNpyHeader(npyFile("{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,), }", 8), "x.npy");
  ASSERT_TRUE(dq.ok()) << dq.error().message;
  EXPECT_EQ(dq->dtype, DType::I32);
}

TEST(NpyHeader, RoundTripsWhatEncodeNpyWrites) {
  Tensor t = Tensor::fromFloats({1, 2, 3, 4, 5, 6}, {3, 1, 2});
  const std::string bytes = encodeNpy(t);
  auto h = parseNpyHeader(bytes, "x.npy");
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->shape, t.shape);
  EXPECT_EQ(std::memcmp(bytes.data() + h->dataOffset, t.data, t.bytes()), 0);
}

TEST(NpyHeader, BadDimensionsAreErrorsBeforeAllocation) {
  EXPECT_EQ(error(npyFile(dict("(-1, 64)"), 256)),
            "x.npy: .npy header: dimension '-1' of 'shape' is not a non-negative integer");
  EXPECT_EQ(error(npyFile(dict("(12345678901234567890123, 64)"), 256)),
            "x.npy: .npy header: dimension 12345678901234567890123 of 'shape' is too large");
  // 2^32 x 2^32 elements overflow a 64-bit byte count: refused against the file size.
  EXPECT_EQ(error(npyFile(dict("(4294967296, 4294967296)"), 256)),
            "x.npy: shape [4294967296,4294967296] needs more than the 256 data bytes the file holds");
  EXPECT_EQ(error(npyFile(dict("(4294967296, 4294967296, 0)"), 0)),
            "x.npy: shape [4294967296,4294967296,0] needs more than the 0 data bytes the file holds");
  EXPECT_EQ(error(npyFile(dict("(2, x)"), 8)), "x.npy: .npy header: dimension 'x' of 'shape' is not a non-negative integer");
  EXPECT_EQ(error(npyFile(dict("(2,,3)"), 24)), "x.npy: .npy header: 'shape' (2,,3) has an empty dimension");
  EXPECT_EQ(error(npyFile(dict("(,)"), 4)), "x.npy: .npy header: 'shape' (,) has an empty dimension");
  EXPECT_EQ(error(npyFile(dict("2, 3"), 24)), "x.npy: .npy header: 'shape' is not a tuple");
  EXPECT_EQ(error(npyFile(dict("(2, 3"), 24)), "x.npy: .npy header: 'shape' is not a tuple");
}

TEST(NpyHeader, SizeMustMatchTheData) {
  EXPECT_EQ(error(npyFile(dict("(2, 3)"), 23)), "x.npy: holds 23 data bytes, shape [2,3] needs 24");
  EXPECT_EQ(error(npyFile(dict("(2, 3)"), 25)), "x.npy: holds 25 data bytes, shape [2,3] needs 24");
}

TEST(NpyHeader, MalformedHeaders) {
  EXPECT_EQ(error("not numpy"), "x.npy: not a .npy file");
  EXPECT_EQ(error(std::string("\x93NUMPY\x01\x00\xff\x00{", 11)), "x.npy: truncated .npy header");
  EXPECT_EQ(error(std::string("\x93NUMPY\x04\x00\x10\x00", 10)), "x.npy: unsupported .npy version 4");
  std::string huge = "\x93NUMPY";
  huge += '\x02';
  huge += '\0';
  const uint32_t len = 0xffffffffu;
  huge.append(reinterpret_cast<const char*>(&len), 4);
  EXPECT_EQ(error(huge), "x.npy: .npy header of 4294967295 bytes is too large");
  EXPECT_EQ(error(npyFile(dict("(2,)", "<c8"), 16)), "x.npy: dtype '<c8' is not supported");
  EXPECT_EQ(error(npyFile(dict("(2,)", "<f4", "True"), 8)), "x.npy: Fortran-order arrays are not supported");
  EXPECT_EQ(error(npyFile("{'descr': '<f4', 'fortran_order': False, }", 8)), "x.npy: malformed .npy header");
  EXPECT_EQ(error(npyFile("{'descr': '<f4, 'shape': (2,), 'fortran_order': Maybe, }", 8)), "x.npy: malformed .npy header");
}

}  // namespace
}  // namespace zp::runtime
