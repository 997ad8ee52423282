#include "libplan/runtime/cache/weight_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <limits>
#include <cstring>
#include <set>
#include <system_error>

#include "libplan/runtime/cache/crc32c.h"
#include "libplan/util/file.h"
#include "libplan/util/hash.h"
#include "libplan/util/json.h"
#include "libplan/util/json_reader.h"
#include "libplan/util/signals.h"

namespace zp::runtime {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'Z', 'P', 'W', 'C', 'A', 'C', 'H', 'E'};

// Versions 2 and 3. Version 1's header is the first 64 bytes: the fields through
// tableCrc, then zeros.
struct Header {
  char magic[8];
  uint32_t version;
  uint32_t entries;
  uint64_t tableOffset;
  uint64_t tableBytes;
  uint32_t tableCrc;
  uint32_t headerCrc;
  uint64_t modelBytes;
  int64_t modelMtimeNs;
  uint64_t skeletonOffset;
  uint64_t skeletonBytes;
  // Version 3: the skeleton's CRC-32C in the first 4 bytes, the rest zero.
  // Version 2: its SHA-256 (OpenSSL's start-up slowed every cold load; see README.md).
  uint8_t skeletonCheck[32];
  uint8_t pad[24];
};
static_assert(sizeof(Header) == 128);
constexpr size_t kHeaderV1Bytes = 64;

// The skeleton check field as version 3 writes it.
std::array<uint8_t, 32> skeletonCheckV3(std::string_view skeleton) {
  std::array<uint8_t, 32> check{};
  const uint32_t crc = crc32c(skeleton.data(), skeleton.size());
  std::memcpy(check.data(), &crc, sizeof crc);
  return check;
}

uint32_t headerCrc(Header h) {
  h.headerCrc = 0;
  return crc32c(&h, sizeof h);
}

// Asks the kernel to read [offset, offset + bytes) of the mapping ahead.
// Linux reads at most one readahead window per call, so larger extents go in
// window-sized pieces, in order. `stop` ends it early.
void readAhead(const void* map, uint64_t offset, uint64_t bytes, const std::atomic<bool>* stop = nullptr) {
  if (bytes == 0) return;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  constexpr uintptr_t kPiece = uintptr_t{2} << 20;
  const uintptr_t base = reinterpret_cast<uintptr_t>(map);
  const uintptr_t end = base + offset + bytes;
  for (uintptr_t b = (base + offset) / page * page; b < end && !(stop && *stop); b += kPiece)
    ::madvise(reinterpret_cast<void*>(b), std::min(kPiece, end - b), MADV_WILLNEED);
}

size_t alignUp(size_t v) { return (v + kWeightCacheAlign - 1) / kWeightCacheAlign * kWeightCacheAlign; }

bool dtypeFromName(const std::string& s, DType* out) {
  for (DType d : {DType::F32, DType::I64, DType::I32, DType::I8, DType::U8, DType::Bool})
    if (s == dtypeName(d)) { *out = d; return true; }
  return false;
}

}  // namespace

Expected<ModelIdentity> modelIdentity(const fs::path& model) {
  struct stat st {};
  if (::stat(model.c_str(), &st) != 0) return makeError("{}: cannot stat: {}", model.string(), std::strerror(errno));
  ModelIdentity id;
  id.bytes = static_cast<uint64_t>(st.st_size);
  id.mtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return id;
}

Status writeWeightCache(const fs::path& path, const std::vector<CacheEntry>& entries, const CacheModel& model) {
  std::string out(sizeof(Header), '\0');
  const size_t skeletonOffset = out.size();
  out += model.skeleton;
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
    table.push_back({{"node", e.node}, {"kernel", e.kernel}, {"transform", e.transform}, {"sources", e.sources},
                     {"source_crc", e.sourceCrc}, {"zero_fraction", e.zeroFraction}, {"arrays", arrays}});
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
  h.modelBytes = model.identity.bytes;
  h.modelMtimeNs = model.identity.mtimeNs;
  h.skeletonOffset = skeletonOffset;
  h.skeletonBytes = model.skeleton.size();
  const auto check = skeletonCheckV3(model.skeleton);
  std::memcpy(h.skeletonCheck, check.data(), check.size());
  h.headerCrc = headerCrc(h);
  out += tableText;
  std::memcpy(out.data(), &h, sizeof h);
  return writeFileAtomic(path, out);
}

WeightCache::~WeightCache() {
  stopReader_ = true;
  if (reader_.joinable()) reader_.join();
  if (fd_ >= 0) ::close(fd_);
}

// The table: one entry per (node, kernel) (per node before version 4), each array's extent inside the payload area
// [headerBytes, tableOffset). Numbers are checked as integers in range (a float
// such as 1e12 where a CRC belongs is an error, not a conversion).
Expected<WeightCache::Table> WeightCache::readTable(std::string_view tableText, const std::string& label,
                                                   uint64_t headerBytes, uint64_t tableOffset, uint32_t version) {
  const std::string file = label + ": weight cache table";
  ZP_ASSIGN_OR_RETURN(const Json table, parseJson(tableText, file));
  ZP_ASSIGN_OR_RETURN(auto rows, JsonAt(table, file).array());
  constexpr int64_t kMaxCrc = std::numeric_limits<uint32_t>::max();
  Table entries;
  for (const auto& e : rows) {
    Stored entry;
    ZP_ASSIGN_OR_RETURN(entry.info.kernel, e.string("kernel"));
    ZP_ASSIGN_OR_RETURN(entry.info.transform, e.string("transform"));
    ZP_ASSIGN_OR_RETURN(const int64_t sourceCrc, e.integer("source_crc", 0, kMaxCrc));
    entry.info.sourceCrc = static_cast<uint32_t>(sourceCrc);
    if (e.has("zero_fraction")) {
      ZP_ASSIGN_OR_RETURN(entry.info.zeroFraction, e.number("zero_fraction"));
      entry.info.hasZeroFraction = true;
    }
    if (e.has("sources")) {
      ZP_ASSIGN_OR_RETURN(entry.info.sources, e.strings("sources"));
    }
    ZP_ASSIGN_OR_RETURN(auto arrays, e.array("arrays"));
    for (const auto& a : arrays) {
      Array arr;
      ZP_ASSIGN_OR_RETURN(arr.name, a.string("name"));
      ZP_ASSIGN_OR_RETURN(const std::string dtype, a.string("dtype"));
      if (!dtypeFromName(dtype, &arr.dtype)) return a.error(fmt::format("unknown dtype '{}'", dtype));
      ZP_ASSIGN_OR_RETURN(arr.count, a.integer("count", 0));
      ZP_ASSIGN_OR_RETURN(const int64_t offset, a.integer("offset", 0));
      ZP_ASSIGN_OR_RETURN(const int64_t bytes, a.integer("bytes", 0));
      ZP_ASSIGN_OR_RETURN(const int64_t crc, a.integer("crc", 0, kMaxCrc));
      arr.offset = static_cast<uint64_t>(offset);
      arr.bytes = static_cast<uint64_t>(bytes);
      arr.crc = static_cast<uint32_t>(crc);
      // Written so that no sum or product can wrap around.
      if (arr.offset % kWeightCacheAlign != 0 || arr.offset < headerBytes || arr.bytes > tableOffset ||
          arr.offset > tableOffset - arr.bytes || static_cast<uint64_t>(arr.count) > arr.bytes ||
          arr.bytes != static_cast<uint64_t>(arr.count) * dtypeSize(arr.dtype))
        return a.error("the array's extent lies outside the payloads or does not match its count");
      entry.arrays.push_back(arr);
    }
    ZP_ASSIGN_OR_RETURN(const std::string node, e.string("node"));
    auto& same = entries[node];
    if (!same.empty() && version < 4) return e.error(fmt::format("a second entry for node '{}'", node));
    for (const auto& other : same)
      if (other.info.kernel == entry.info.kernel)
        return e.error(fmt::format("a second entry for node '{}' and kernel '{}'", node, entry.info.kernel));
    same.push_back(std::move(entry));
  }
  return entries;
}

Expected<std::unique_ptr<WeightCache>> WeightCache::open(const fs::path& path, const ModelIdentity* readAheadFor) {
  const std::string label = path.string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return makeError("{}: cannot open weight cache: {}", label, std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) { ::close(fd); return makeError("{}: cannot stat weight cache", label); }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size < kHeaderV1Bytes) { ::close(fd); return makeError("{}: weight cache is truncated ({} bytes)", label, size); }
  // The header through read(): a fault on the mapping would read a whole
  // readahead window around it before anything is known.
  char head[sizeof(Header)] = {};
  const ssize_t got = ::pread(fd, head, std::min(sizeof head, size), 0);
  if (got < static_cast<ssize_t>(kHeaderV1Bytes)) {
    ::close(fd);
    return makeError("{}: cannot read the weight cache header", label);
  }
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    ::close(fd);
    return makeError("{}: cannot map weight cache: {}", label, std::strerror(errno));
  }
  std::unique_ptr<WeightCache> c(new WeightCache());
  c->fd_ = fd;
  c->path_ = path;
  c->size_ = size;
  c->map_ = std::shared_ptr<void>(p, [size](void* q) { munmap(q, size); });
  const char* base = static_cast<const char*>(p);
  Header h;  // a version-1 header leaves the fields after tableCrc unread
  std::memcpy(&h, head, sizeof h);
  if (std::memcmp(h.magic, kMagic, 8) != 0) return makeError("{}: not a zooplan weight cache (bad magic)", label);
  if (h.version < 1 || h.version > kWeightCacheVersion)
    return makeError("{}: weight cache version {} (this runtime reads versions 1 to {})", label, h.version,
                     kWeightCacheVersion);
  c->version_ = h.version;
  size_t headerBytes = kHeaderV1Bytes;
  bool readPayloadsAhead = false;
  if (h.version >= 2) {
    if (size < sizeof(Header)) return makeError("{}: weight cache is truncated ({} bytes)", label, size);
    if (headerCrc(h) != h.headerCrc) return makeError("{}: weight cache header checksum mismatch", label);
    headerBytes = sizeof(Header);
    // Written so that no sum can wrap around (the header CRC does not stop a crafted file).
    if (h.skeletonOffset < headerBytes || h.skeletonBytes > h.tableOffset ||
        h.skeletonOffset > h.tableOffset - h.skeletonBytes || h.tableBytes > size || h.tableOffset > size - h.tableBytes)
      return makeError("{}: weight cache skeleton lies outside the file", label);
    // Skeleton and table are read next (both requested at once); the payloads follow
    // once they are checked.
    readAhead(p, h.skeletonOffset, h.skeletonBytes);
    readAhead(p, h.tableOffset, h.tableBytes);
    c->payloadsBegin_ = alignUp(h.skeletonOffset + h.skeletonBytes);
    c->payloadsEnd_ = std::max(c->payloadsBegin_, h.tableOffset);
    readPayloadsAhead = readAheadFor && *readAheadFor == ModelIdentity{h.modelBytes, h.modelMtimeNs};
    c->identity_ = {h.modelBytes, h.modelMtimeNs};
    c->skeleton_ = std::string_view(base + h.skeletonOffset, h.skeletonBytes);
    const auto expect = h.version == 2 ? sha256(c->skeleton_) : skeletonCheckV3(c->skeleton_);
    if (std::memcmp(expect.data(), h.skeletonCheck, expect.size()) != 0)
      return makeError("{}: weight cache skeleton checksum mismatch", label);
  }
  if (h.tableBytes > size || h.tableOffset > size - h.tableBytes || h.tableOffset < headerBytes)
    return makeError("{}: weight cache table lies outside the file", label);
  std::string_view tableText(base + h.tableOffset, h.tableBytes);
  if (crc32c(tableText.data(), tableText.size()) != h.tableCrc)
    return makeError("{}: weight cache table checksum mismatch", label);
  auto entries = readTable(tableText, label, headerBytes, h.tableOffset, h.version);
  if (!entries.ok()) return entries.error();
  c->entries_ = std::move(*entries);
  for (const auto& [node, list] : c->entries_) c->entryCount_ += list.size();
  if (c->entryCount_ != h.entries) return makeError("{}: weight cache entry count mismatch", label);
  if (readPayloadsAhead && c->payloadsEnd_ > c->payloadsBegin_) {
    // Submitting blocks once the device queue is full: a helper thread keeps it full
    // while the session is built and run.
    std::atomic<bool>* stop = &c->stopReader_;
    const uint64_t begin = c->payloadsBegin_, bytes = c->payloadsEnd_ - begin;
    try {
      const AsyncSignalsBlocked quiet;
      c->reader_ = std::thread([p, begin, bytes, stop] { readAhead(p, begin, bytes, stop); });
    } catch (const std::system_error&) {
      readAhead(p, begin, std::min<uint64_t>(bytes, uint64_t{8} << 20));
    }
  }
  return c;
}

void WeightCache::view(const Stored& e, PackedWeights* out) const {
  PackedWeights pw;
  const char* base = static_cast<const char*>(map_.get());
  for (const auto& a : e.arrays) {
    WeightArray w;
    w.name = a.name;
    w.dtype = a.dtype;
    w.count = a.count;
    w.data = base + a.offset;
    w.owner = map_;
    pw.arrays.push_back(std::move(w));
  }
  *out = std::move(pw);
}

const WeightCache::Stored* WeightCache::find(const std::string& node, const std::string& kernel) const {
  auto it = entries_.find(node);
  if (it == entries_.end() || it->second.empty()) return nullptr;
  if (kernel.empty()) return &it->second.front();
  for (const auto& e : it->second)
    if (e.info.kernel == kernel) return &e;
  return nullptr;
}

WeightCache::Result WeightCache::lookup(const std::string& node, const std::string& kernel, uint32_t sourceCrc,
                                        PackedWeights* out, std::string* why) {
  const Stored* e = kernel.empty() ? nullptr : find(node, kernel);
  if (!e) return Result::Miss;
  if (e->info.sourceCrc != sourceCrc) {
    *why = "cache entry was made from different weights (source checksum mismatch)";
    return Result::Corrupt;
  }
  if (!verify(node, kernel, why)) return Result::Corrupt;
  view(*e, out);
  return Result::Hit;
}

bool WeightCache::mapped(const std::string& node, const std::string& kernel, const std::vector<std::string>& sources,
                         PackedWeights* out) const {
  const Stored* e = kernel.empty() ? nullptr : find(node, kernel);
  if (!e || e->info.sources != sources) return false;
  view(*e, out);
  return true;
}

void WeightCache::requestExtent(uint64_t offset, uint64_t bytes) const {
  if (fd_ >= 0 && bytes > 0)
    ::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(bytes), POSIX_FADV_WILLNEED);
}

void WeightCache::requestPayloadHead(uint64_t bytes) const {
  if (payloadsEnd_ > payloadsBegin_) requestExtent(payloadsBegin_, std::min(bytes, payloadsEnd_ - payloadsBegin_));
}

bool WeightCache::verify(const std::string& node, const std::string& kernel, std::string* why) const {
  const Stored* e = find(node, kernel);
  if (!e) {  // a schedule naming a kernel the cache was not written with
    *why = fmt::format("no payload for kernel '{}'", kernel);
    return false;
  }
  const char* base = static_cast<const char*>(map_.get());
  for (const auto& a : e->arrays) {
    // The pages in one call (MADV_POPULATE_READ: read and mapped by the kernel)
    // rather than a fault per page as the checksum reaches it; nothing on kernels without it.
    static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t begin = reinterpret_cast<uintptr_t>(base + a.offset) / page * page;
    const uintptr_t end = reinterpret_cast<uintptr_t>(base + a.offset + a.bytes);
    if (a.bytes >= (uint64_t{64} << 10)) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
    if (crc32c(base + a.offset, a.bytes) != a.crc) {
      *why = fmt::format("payload '{}' checksum mismatch", a.name);
      return false;
    }
  }
  return true;
}

const WeightCache::Entry* WeightCache::entry(const std::string& node, const std::string& kernel) const {
  const Stored* e = find(node, kernel);
  return e ? &e->info : nullptr;
}

std::vector<std::string> WeightCache::kernels(const std::string& node) const {
  std::vector<std::string> out;
  if (auto it = entries_.find(node); it != entries_.end())
    for (const auto& e : it->second) out.push_back(e.info.kernel);
  return out;
}

std::vector<std::pair<uint64_t, uint64_t>> WeightCache::payloadExtents(const std::string& node,
                                                                      const std::string& kernel) const {
  std::vector<std::pair<uint64_t, uint64_t>> r;
  auto it = entries_.find(node);
  if (it == entries_.end()) return r;
  for (const auto& e : it->second)
    if (kernel.empty() || e.info.kernel == kernel)
      for (const auto& a : e.arrays) r.push_back({a.offset, a.bytes});
  return r;
}

}  // namespace zp::runtime
