// Weight cache files: the post-transformed weights of a model's heavy nodes for
// one kernel choice per node, mapped with mmap and used in place. Nodes whose kernel
// reads the ONNX weights in place (transform "none") have no entry.
//
// Layout (little-endian):
//   [0, 64)   header: magic "ZPWCACHE", u32 version, u32 entry count,
//             u64 table offset, u64 table bytes, u32 table CRC-32C, zero padding
//   payloads  each array 64-byte aligned
//   table     canonical JSON: per entry node, kernel, transform, source_crc (of
//             the raw ONNX weights it was made from) and per array name, dtype,
//             count, offset, bytes, crc (CRC-32C of the payload)
// A bad header, version or table rejects the whole file; a payload whose CRC does
// not match rejects that node's entry. Either way the runtime falls back to
// transforming the raw ONNX weights and says which nodes it did that for.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "libplan/runtime/kernels.h"
#include "libplan/util/error.h"

namespace zp::runtime {

inline constexpr uint32_t kWeightCacheVersion = 1;
inline constexpr size_t kWeightCacheAlign = 64;

struct CacheEntry {
  std::string node, kernel, transform;
  uint32_t sourceCrc = 0;
  const PackedWeights* packed = nullptr;
};

// Writes atomically (temp file + rename).
Status writeWeightCache(const std::filesystem::path& path, const std::vector<CacheEntry>& entries);

class WeightCache {
 public:
  enum class Result { Hit, Miss, Corrupt };
  ~WeightCache();
  WeightCache(const WeightCache&) = delete;
  WeightCache& operator=(const WeightCache&) = delete;

  // Maps the file and checks header, version and table; payloads are checked on lookup.
  static Expected<std::unique_ptr<WeightCache>> open(const std::filesystem::path& path);

  // Hit: `out` views the mapped payloads. Miss: no entry for (node, kernel).
  // Corrupt: entry present but its source or a payload checksum does not match; `why` says which.
  Result lookup(const std::string& node, const std::string& kernel, uint32_t sourceCrc, PackedWeights* out,
                std::string* why);

  const std::filesystem::path& path() const { return path_; }
  size_t fileBytes() const { return size_; }
  size_t entryCount() const { return entries_.size(); }

 private:
  struct Array { std::string name; DType dtype; int64_t count; uint64_t offset, bytes; uint32_t crc; };
  struct Entry { std::string kernel, transform; uint32_t sourceCrc; std::vector<Array> arrays; };
  WeightCache() = default;
  std::filesystem::path path_;
  std::shared_ptr<void> map_;
  size_t size_ = 0;
  std::map<std::string, Entry> entries_;  // by node name
};

}  // namespace zp::runtime
