// File helpers: whole-file reads, atomic writes (temp file + rename in the same
// directory, so a reader never sees half a file), and staging directories.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "libplan/util/error.h"

namespace zp {

Expected<std::string> readFile(const std::filesystem::path& path);

// Writes to "<path>.tmp.<pid>" beside the target, fsyncs, then renames.
Status writeFileAtomic(const std::filesystem::path& path, std::string_view bytes);

// A directory tree built under a temporary sibling name and moved into place by
// commit(). If commit() is never called, the destructor removes it, so a failed
// run leaves nothing behind. An existing destination is replaced on commit.
class StagedDir {
 public:
  static Expected<StagedDir> create(const std::filesystem::path& destination);
  StagedDir(StagedDir&&) noexcept;
  StagedDir& operator=(StagedDir&&) = delete;
  StagedDir(const StagedDir&) = delete;
  ~StagedDir();

  // Where to write files while staging.
  const std::filesystem::path& path() const { return staging_; }
  Status commit();

 private:
  StagedDir(std::filesystem::path destination, std::filesystem::path staging)
      : destination_(std::move(destination)), staging_(std::move(staging)) {}
  std::filesystem::path destination_;
  std::filesystem::path staging_;
  bool committed_ = false;
};

}  // namespace zp
