// Weight cache files as plan-run --cache and bundle runs open them
// (WeightCache::open), then every (node, kernel) entry as a kernel gets it (lookup), whose
// arrays must lie within their extents in the file.
//
// Header, table and skeleton are guarded by checksums, which random bytes
// almost never match; so unless the last header padding byte (127) is non-zero,
// the harness first rewrites the checksums of whatever extents the header names
// (the layout is documented in libplan/runtime/cache/weight_cache.h) and the fuzzer
// reaches the code behind them.
#include <cstring>

#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/runtime/cache/crc32c.h"
#include "libplan/runtime/cache/weight_cache.h"
#include "libplan/runtime/kernels/kernels.h"
#include "libplan/util/hash.h"
#include "libplan/util/json.h"

namespace {

constexpr size_t kHeaderBytes = 128;

template <typename T>
T load(const std::string& b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}
template <typename T>
void store(std::string& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

bool inside(const std::string& b, uint64_t offset, uint64_t bytes) {
  return offset <= b.size() && bytes <= b.size() - offset;
}

void repairChecksums(std::string& b) {
  if (b.size() < kHeaderBytes || b[kHeaderBytes - 1] != 0) return;
  const auto version = load<uint32_t>(b, 8);
  const auto tableOffset = load<uint64_t>(b, 16), tableBytes = load<uint64_t>(b, 24);
  if (inside(b, tableOffset, tableBytes)) store(b, 32, zp::runtime::crc32c(b.data() + tableOffset, tableBytes));
  if (version < 2) return;
  const auto skeletonOffset = load<uint64_t>(b, 56), skeletonBytes = load<uint64_t>(b, 64);
  if (inside(b, skeletonOffset, skeletonBytes)) {
    const std::string_view skeleton(b.data() + skeletonOffset, skeletonBytes);
    std::memset(b.data() + 72, 0, 32);
    if (version == 2) {
      const auto digest = zp::sha256(skeleton);
      std::memcpy(b.data() + 72, digest.data(), digest.size());
    } else {
      store(b, 72, zp::runtime::crc32c(skeleton.data(), skeleton.size()));
    }
  }
  store<uint32_t>(b, 36, 0);
  store(b, 36, zp::runtime::crc32c(b.data(), kHeaderBytes));
}

}  // namespace

ZP_FUZZ_TARGET(weight_cache) {
  using namespace zp;
  std::string bytes(fuzz::asText(data, size));
  repairChecksums(bytes);
  auto cache = runtime::WeightCache::open(fuzz::writeInput(bytes, "cache.zwc"));
  if (!cache.ok()) return 0;
  // The reader accepted the table, so it is JSON: its node names reach every entry.
  const auto tableOffset = load<uint64_t>(bytes, 16), tableBytes = load<uint64_t>(bytes, 24);
  const Json table = Json::parse(std::string_view(bytes).substr(tableOffset, tableBytes));
  for (const auto& e : table) {
    const std::string node = e.at("node").get<std::string>();
    const std::string kernel = e.at("kernel").get<std::string>();
    fuzz::require((*cache)->entry(node, kernel) != nullptr, "weight cache: an entry of the table is not found");
    runtime::PackedWeights weights;
    std::string why;
    if ((*cache)->lookup(node, kernel, e.at("source_crc").get<uint32_t>(), &weights, &why) !=
        runtime::WeightCache::Result::Hit)
      continue;
    // What a kernel reads: every element of every array, which must be the array's extent in the file.
    const auto extents = (*cache)->payloadExtents(node, kernel);
    fuzz::require(extents.size() == weights.arrays.size(), "weight cache: arrays and extents differ in number");
    uint8_t sum = 0;
    for (size_t i = 0; i < extents.size(); ++i) {
      const auto& a = weights.arrays[i];
      const uint64_t size = runtime::dtypeSize(a.dtype);
      fuzz::require(a.count >= 0 && static_cast<uint64_t>(a.count) <= extents[i].second / size &&
                        static_cast<uint64_t>(a.count) * size == extents[i].second,
                    "weight cache: an array's element count does not fit its extent");
      for (size_t b = 0; b < a.bytes(); ++b) sum = static_cast<uint8_t>(sum + a.as<uint8_t>()[b]);
    }
    (void)sum;
  }
  return 0;
}
