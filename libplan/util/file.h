// File helpers: whole-file reads, atomic writes (temp file + rename in the same
// directory, so a reader never sees half a file), and staging directories.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "libplan/util/error.h"

namespace zp {

// The largest file read whole: protobuf's 2 GiB message limit, which bounds
// ONNX models and plan.pb; the text artifacts are far below it.
inline constexpr size_t kMaxReadBytes = size_t{2} << 30;

// A regular file's bytes (a directory, device, FIFO or socket is refused, and
// a file above maxBytes, before anything is read).
Expected<std::string> readFile(const std::filesystem::path& path, size_t maxBytes = kMaxReadBytes);

// Where a single-file output named `path` lands: the path itself when it is
// absent or a regular file; the file a symbolic link names when that is a
// regular file (the link stays); an error for anything a rename would destroy
// (a directory, a device, a FIFO, a socket, a link to one or to nothing).
Expected<std::filesystem::path> regularFileDestination(const std::filesystem::path& path);

// Writes to "<file>.tmp.<pid>" beside the destination (regularFileDestination),
// fsyncs, then renames.
Status writeFileAtomic(const std::filesystem::path& path, std::string_view bytes);
// The folder a file output goes into, made when it is missing (called once the
// inputs are checked, so that a refused run leaves no folder behind).
Status createParentDirectories(const std::filesystem::path& file);

// A directory tree built under a temporary sibling name (".NAME.staging.PID")
// and moved into place by commit(). If commit() is never called, the destructor
// removes it, so a failed run leaves nothing behind. commit() swaps the tree with
// an existing destination in one atomic exchange, so a reader (or a crash) sees
// either the old tree or the new one, never a mixture or no tree at all; it
// replaces whatever is there, so callers decide first whether it may be replaced
// (OutputDir in output_dir.h does).
class StagedDir {
 public:
  static Expected<StagedDir> create(const std::filesystem::path& destination);
  StagedDir(StagedDir&&) noexcept;
  StagedDir& operator=(StagedDir&&) = delete;
  StagedDir(const StagedDir&) = delete;
  ~StagedDir();

  // Where to write files while staging.
  const std::filesystem::path& path() const { return staging_; }
  const std::filesystem::path& destination() const { return destination_; }
  Status commit();
  // Leaves the staging directory where it is (e.g. an interrupted run's partial
  // results for the next run) and returns its path.
  std::filesystem::path release();

  // The names staging directories (and the fallback commit's ".NAME.old.PID")
  // for `destination` start with, beside it.
  static std::string stagingPrefix(const std::filesystem::path& destination);
  static std::string oldPrefix(const std::filesystem::path& destination);

 private:
  StagedDir(std::filesystem::path destination, std::filesystem::path staging)
      : destination_(std::move(destination)), staging_(std::move(staging)) {}
  std::filesystem::path destination_;
  std::filesystem::path staging_;
  bool committed_ = false;
};

}  // namespace zp
