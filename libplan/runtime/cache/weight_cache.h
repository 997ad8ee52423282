// Weight cache files: for one kernel choice per node, the weights of every heavy
// node (Conv, Gemm/MatMul with a constant matrix) in the layout its kernel reads —
// transformed (Winograd, CSR, BN folded, packed) or a copy of the ONNX weights for
// kernels that read them as they are (transform "none") — plus a model skeleton,
// so that a session can be built from the cache alone without reading the ONNX
// file. Payloads are mapped with mmap and used in place.
//
// Layout of version 4 (little-endian):
//   [0, 128)  header: magic "ZPWCACHE", u32 version (4), u32 entry count,
//             u64 table offset, u64 table bytes, u32 table CRC-32C,
//             u32 header CRC-32C (of the 128 header bytes with this field zero),
//             u64 model file bytes, i64 model file mtime (ns since the epoch) —
//             both 0 when the cache names no model file (then loads never use
//             the skeleton: reproducible artifacts such as bundles),
//             u64 skeleton offset, u64 skeleton bytes, u32 CRC-32C of the
//             skeleton, zero padding (version 2, read too, has the skeleton's
//             SHA-256 in those 32 bytes instead)
//   skeleton  the serialized ModelProto the cache was written from, checked and
//             shape-inferred, in which every initializer larger than 4 KiB whose
//             consumers are all heavy nodes with an entry has no data: its
//             data_location is EXTERNAL with location "zooplan-weight-cache"
//             (name, dims and data_type are kept). A cache written for a cold-start
//             plan may instead point such an initializer at its bytes in the model
//             file (location "zooplan-model-file", see skeleton.h): the weights of
//             nodes the plan transforms at load are read from the model, not cached.
//   payloads  each array 64-byte aligned, entries in table order (execution order;
//             a cold-start plan's cache lists the warm kernels' entries after the
//             cold run's)
//   table     JSON array, one object per entry: node, kernel,
//             transform, sources (the initializer names the payload was made
//             from, in order), source_crc (CRC-32C chained over those tensors),
//             zero_fraction (of the ONNX weight, for kernel choice), arrays: per
//             array name, dtype, count, offset, bytes, crc (CRC-32C of the payload)
// A node may have several entries, for distinct kernels (version 4; versions 1-3
// have at most one per node and no model-file references, and are still read).
// The first 36 header bytes are laid out as in version 1 (64-byte header, no
// skeleton, no zero_fraction/sources, entries only for transformed weights),
// which this runtime still reads for its entries.
//
// A bad header, version, table or skeleton rejects the whole file; a payload
// whose CRC does not match rejects that node's entry. Either way the runtime falls
// back to the raw ONNX weights and says which nodes it did that for.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "libplan/runtime/kernels/kernels.h"
#include "libplan/util/error.h"

namespace zp::runtime {

inline constexpr uint32_t kWeightCacheVersion = 4;
inline constexpr size_t kWeightCacheAlign = 64;
// Initializers above this size are left out of the skeleton when the cache holds
// the weights of every node that reads them.
inline constexpr size_t kSkeletonStripBytes = 4096;
// The external-data location that marks an initializer left out of the skeleton.
inline constexpr const char* kSkeletonStrippedLocation = "zooplan-weight-cache";

// Which version of a model file a cache was written from.
struct ModelIdentity {
  uint64_t bytes = 0;
  int64_t mtimeNs = 0;
  bool known() const { return bytes != 0; }
  bool operator==(const ModelIdentity&) const = default;
};
Expected<ModelIdentity> modelIdentity(const std::filesystem::path& model);

struct CacheEntry {
  std::string node, kernel, transform;
  std::vector<std::string> sources;
  uint32_t sourceCrc = 0;
  double zeroFraction = 0;
  const PackedWeights* packed = nullptr;
};

// The skeleton section: the model identity and the serialized, stripped ModelProto.
struct CacheModel {
  ModelIdentity identity;
  std::string skeleton;
};

// Writes atomically (temp file + rename). Entries in execution order.
Status writeWeightCache(const std::filesystem::path& path, const std::vector<CacheEntry>& entries,
                        const CacheModel& model);

class WeightCache {
 public:
  enum class Result { Hit, Miss, Corrupt };
  struct Entry {
    std::string kernel, transform;
    std::vector<std::string> sources;
    uint32_t sourceCrc = 0;
    double zeroFraction = 0;
    bool hasZeroFraction = false;  // version 1 entries do not record it
  };

  ~WeightCache();
  WeightCache(const WeightCache&) = delete;
  WeightCache& operator=(const WeightCache&) = delete;

  // Maps the file and checks header, version, table and skeleton; payloads are
  // checked on lookup (or by verify()). When the cache was written from the model
  // file `readAheadFor` identifies, every page is about to be used: the kernel is
  // asked to read the skeleton and table and then all payloads — in file order,
  // which is execution order — ahead, asynchronously (madvise WILLNEED), as soon
  // as the header has been read.
  static Expected<std::unique_ptr<WeightCache>> open(const std::filesystem::path& path,
                                                     const ModelIdentity* readAheadFor = nullptr);

  // Hit: `out` views the mapped payloads (checked now). Miss: no entry for (node, kernel).
  // Corrupt: entry present but its source or a payload checksum does not match; `why` says which.
  Result lookup(const std::string& node, const std::string& kernel, uint32_t sourceCrc, PackedWeights* out,
                std::string* why);

  // For sessions built from the skeleton: the entry for (node, kernel, sources)
  // viewed without reading the payloads, which verify() checks later.
  bool mapped(const std::string& node, const std::string& kernel, const std::vector<std::string>& sources,
              PackedWeights* out) const;
  // Asks the storage for [offset, offset + bytes) of the file (a payloadExtents()
  // extent), exactly and asynchronously (posix_fadvise WILLNEED): a fault on the
  // mapping of a page not yet read reads a whole read-around window instead.
  void requestExtent(uint64_t offset, uint64_t bytes) const;
  // The same for the first `bytes` of the payload area (in execution order).
  void requestPayloadHead(uint64_t bytes) const;
  // CRC-32C of the payloads of the (node, kernel) entry; false with `why` on a mismatch.
  bool verify(const std::string& node, const std::string& kernel, std::string* why) const;

  // The (node, kernel) entry; with an empty kernel the node's first entry (every
  // entry of a node records the same sources' zero fraction). Null when absent.
  const Entry* entry(const std::string& node, const std::string& kernel = {}) const;
  // The kernels the node has entries for, in table order.
  std::vector<std::string> kernels(const std::string& node) const;
  // Where the payload arrays of the (node, kernel) entry lie in the file (empty
  // kernel: of every entry of the node). Tests flip bytes there.
  std::vector<std::pair<uint64_t, uint64_t>> payloadExtents(const std::string& node,
                                                            const std::string& kernel = {}) const;

  uint32_t version() const { return version_; }
  bool hasSkeleton() const { return !skeleton_.empty(); }
  std::string_view skeleton() const { return skeleton_; }
  const ModelIdentity& modelIdentity() const { return identity_; }
  const std::filesystem::path& path() const { return path_; }
  size_t fileBytes() const { return size_; }
  size_t entryCount() const { return entryCount_; }

 private:
  struct Array { std::string name; DType dtype; int64_t count; uint64_t offset, bytes; uint32_t crc; };
  struct Stored { Entry info; std::vector<Array> arrays; };
  using Table = std::map<std::string, std::vector<Stored>>;  // by node, entries in table order
  static Expected<Table> readTable(std::string_view tableText, const std::string& label, uint64_t headerBytes,
                                   uint64_t tableOffset, uint32_t version);
  WeightCache() = default;
  void view(const Stored& e, PackedWeights* out) const;
  const Stored* find(const std::string& node, const std::string& kernel) const;
  std::filesystem::path path_;
  std::shared_ptr<void> map_;
  int fd_ = -1;  // kept for requests to the storage
  size_t size_ = 0;
  uint64_t payloadsBegin_ = 0, payloadsEnd_ = 0;
  uint32_t version_ = 0;
  ModelIdentity identity_;
  std::string_view skeleton_;
  Table entries_;
  size_t entryCount_ = 0;
  std::thread reader_;                     // asks for the payloads ahead (see open)
  std::atomic<bool> stopReader_{false};
};

}  // namespace zp::runtime
