#include "libplan/runtime/weight_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "libplan/runtime/ops.h"
#include "libplan/util/file.h"
#include "libplan/util/json.h"

namespace zp::runtime {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'Z', 'P', 'W', 'C', 'A', 'C', 'H', 'E'};

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t entries;
  uint64_t tableOffset;
  uint64_t tableBytes;
  uint32_t tableCrc;
  uint8_t pad[28];
};
static_assert(sizeof(Header) == 64);

size_t alignUp(size_t v) { return (v + kWeightCacheAlign - 1) / kWeightCacheAlign * kWeightCacheAlign; }

bool dtypeFromName(const std::string& s, DType* out) {
  for (DType d : {DType::F32, DType::I64, DType::I32, DType::I8, DType::U8, DType::Bool})
    if (s == dtypeName(d)) { *out = d; return true; }
  return false;
}

}  // namespace

Status writeWeightCache(const fs::path& path, const std::vector<CacheEntry>& entries) {
  std::string out(sizeof(Header), '\0');
  Json table = Json::array();
  for (const auto& e : entries) {
    assert(e.packed);
    Json arrays = Json::array();
    for (const auto& a : e.packed->arrays) {
      out.resize(alignUp(out.size()), '\0');
      const size_t off = out.size();
      out.append(static_cast<const char*>(a.data), a.bytes());
      arrays.push_back({{"name", a.name}, {"dtype", dtypeName(a.dtype)}, {"count", a.count}, {"offset", off},
                        {"bytes", a.bytes()}, {"crc", crc32c(a.data, a.bytes())}});
    }
    table.push_back({{"node", e.node}, {"kernel", e.kernel}, {"transform", e.transform},
                     {"source_crc", e.sourceCrc}, {"arrays", arrays}});
  }
  out.resize(alignUp(out.size()), '\0');
  const std::string tableText = table.dump();
  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.version = kWeightCacheVersion;
  h.entries = static_cast<uint32_t>(entries.size());
  h.tableOffset = out.size();
  h.tableBytes = tableText.size();
  h.tableCrc = crc32c(tableText.data(), tableText.size());
  out += tableText;
  std::memcpy(out.data(), &h, sizeof h);
  return writeFileAtomic(path, out);
}

WeightCache::~WeightCache() = default;

Expected<std::unique_ptr<WeightCache>> WeightCache::open(const fs::path& path) {
  const std::string label = path.string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return makeError("{}: cannot open weight cache: {}", label, std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) { ::close(fd); return makeError("{}: cannot stat weight cache", label); }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size < sizeof(Header)) { ::close(fd); return makeError("{}: weight cache is truncated ({} bytes)", label, size); }
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return makeError("{}: cannot map weight cache: {}", label, std::strerror(errno));
  std::unique_ptr<WeightCache> c(new WeightCache());
  c->path_ = path;
  c->size_ = size;
  c->map_ = std::shared_ptr<void>(p, [size](void* q) { munmap(q, size); });
  Header h;
  std::memcpy(&h, p, sizeof h);
  if (std::memcmp(h.magic, kMagic, 8) != 0) return makeError("{}: not a zooplan weight cache (bad magic)", label);
  if (h.version != kWeightCacheVersion)
    return makeError("{}: weight cache version {} (this runtime reads version {})", label, h.version, kWeightCacheVersion);
  if (h.tableOffset + h.tableBytes > size || h.tableOffset < sizeof(Header))
    return makeError("{}: weight cache table lies outside the file", label);
  const char* base = static_cast<const char*>(p);
  std::string_view tableText(base + h.tableOffset, h.tableBytes);
  if (crc32c(tableText.data(), tableText.size()) != h.tableCrc)
    return makeError("{}: weight cache table checksum mismatch", label);
  Json table;
  try {
    table = Json::parse(tableText);
    for (const auto& e : table) {
      Entry entry;
      entry.kernel = e.at("kernel").get<std::string>();
      entry.transform = e.at("transform").get<std::string>();
      entry.sourceCrc = e.at("source_crc").get<uint32_t>();
      for (const auto& a : e.at("arrays")) {
        Array arr;
        arr.name = a.at("name").get<std::string>();
        if (!dtypeFromName(a.at("dtype").get<std::string>(), &arr.dtype))
          return makeError("{}: weight cache array has unknown dtype", label);
        arr.count = a.at("count").get<int64_t>();
        arr.offset = a.at("offset").get<uint64_t>();
        arr.bytes = a.at("bytes").get<uint64_t>();
        arr.crc = a.at("crc").get<uint32_t>();
        if (arr.offset % kWeightCacheAlign != 0 || arr.offset + arr.bytes > h.tableOffset ||
            arr.bytes != static_cast<uint64_t>(arr.count) * dtypeSize(arr.dtype))
          return makeError("{}: weight cache array '{}' has a bad extent", label, arr.name);
        entry.arrays.push_back(arr);
      }
      c->entries_[e.at("node").get<std::string>()] = std::move(entry);
    }
  } catch (const std::exception& ex) {
    return makeError("{}: weight cache table is malformed: {}", label, ex.what());
  }
  if (c->entries_.size() != h.entries) return makeError("{}: weight cache entry count mismatch", label);
  return c;
}

WeightCache::Result WeightCache::lookup(const std::string& node, const std::string& kernel, uint32_t sourceCrc,
                                        PackedWeights* out, std::string* why) {
  auto it = entries_.find(node);
  if (it == entries_.end() || it->second.kernel != kernel) return Result::Miss;
  const Entry& e = it->second;
  if (e.sourceCrc != sourceCrc) {
    *why = "cache entry was made from different weights (source checksum mismatch)";
    return Result::Corrupt;
  }
  PackedWeights pw;
  const char* base = static_cast<const char*>(map_.get());
  for (const auto& a : e.arrays) {
    if (crc32c(base + a.offset, a.bytes) != a.crc) {
      *why = fmt::format("payload '{}' checksum mismatch", a.name);
      return Result::Corrupt;
    }
    WeightArray w;
    w.name = a.name;
    w.dtype = a.dtype;
    w.count = a.count;
    w.data = base + a.offset;
    w.owner = map_;
    pw.arrays.push_back(std::move(w));
  }
  *out = std::move(pw);
  return Result::Hit;
}

}  // namespace zp::runtime
