// Outputs that cannot destroy data.
//
// A directory output (-o DIR) may replace only what an earlier run of the same
// tool wrote there: DIR must be absent, an empty directory, or a directory
// holding the marker file ".zooplan-output" that names the tool and the entries
// it wrote (and nothing else). It never equals, contains or lies inside one of
// the tool's inputs. The new tree is built in a staging directory beside DIR and
// swapped into place at the end; a lock beside DIR keeps a second run into the
// same DIR waiting from the moment it opens DIR until the first run commits.
//
// A single-file output is written atomically (writeFileAtomic) and must not be a
// directory, one of the tool's inputs, or another output of the same run.
#pragma once
#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libplan/util/error.h"
#include "libplan/util/file.h"

namespace zp {

inline constexpr const char* kOutputMarker = ".zooplan-output";

// A path a tool reads, or another of its outputs: an output must keep clear of it.
struct GuardedPath {
  std::filesystem::path path;
  std::string role;  // how messages name it: "input", "output"
};

// Refuses `output` when it is, contains, or lies inside one of `others`
// (compared as canonical paths, symlinks resolved). Errors start with `output`.
Status checkNoOverlap(const std::filesystem::path& output, const std::vector<GuardedPath>& others);

// A single-file output: refused when it exists as anything but a regular file
// (or a link to one: regularFileDestination), overlaps one
// of `others`, or its parent exists as a non-directory.
Status checkOutputFile(const std::filesystem::path& output, const std::vector<GuardedPath>& others);

// The single-file outputs of one run (empty paths skipped): each checked as
// above against `inputs` and against the run's other outputs.
Status checkOutputFiles(const std::vector<std::filesystem::path>& outputs, const std::vector<GuardedPath>& inputs);

// What `destination` holds now, for `tool`: absent, an empty directory, or an
// earlier output of `tool`. Anything else is an error saying why it is refused.
enum class DestinationState { Absent, Empty, EarlierRun };
Expected<DestinationState> inspectDestination(const std::filesystem::path& destination, const std::string& tool);

struct OutputDirOptions {
  std::string tool;                          // recorded in the marker, e.g. "zoo-profile"
  std::vector<GuardedPath> inputs;           // never written into or over
  const std::atomic<bool>* stop = nullptr;   // set (Ctrl-C): give up waiting for another run's lock
};

// An exclusive lock on a file beside the destination (".NAME.lock"), taken with
// flock and removed on release. Waits (polling, so `stop` is honoured) while
// another process holds it, saying so once on stderr.
class DirLock {
 public:
  static Expected<DirLock> acquire(const std::filesystem::path& destination, const std::atomic<bool>* stop);
  static std::filesystem::path lockPath(const std::filesystem::path& destination);
  DirLock(DirLock&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }
  DirLock& operator=(DirLock&&) = delete;
  DirLock(const DirLock&) = delete;
  ~DirLock();

 private:
  DirLock(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::filesystem::path path_;
};

// A guarded directory output: checks the destination and the inputs, takes the
// lock, removes (or recovers) what killed runs left beside it, and stages the
// new tree. commit() writes the marker and swaps the tree into place. Without a
// commit nothing at the destination changes.
class OutputDir {
 public:
  static Expected<OutputDir> open(const std::filesystem::path& destination, const OutputDirOptions& options);
  OutputDir(OutputDir&&) noexcept;
  OutputDir& operator=(OutputDir&&) = delete;
  OutputDir(const OutputDir&) = delete;
  ~OutputDir();

  // Where to write the new tree.
  const std::filesystem::path& path() const { return staged_->path(); }
  // The destination as it will be (symlinks resolved).
  const std::filesystem::path& destination() const { return staged_->destination(); }
  // The destination holds an earlier run's output (readable until commit()).
  bool replacesEarlierRun() const { return state_ == DestinationState::EarlierRun; }
  // Staging directories of earlier runs into this destination that did not
  // commit (killed, or kept by keepUnfinished()), oldest name first. They are
  // removed when this run commits or fails; a tool may read them before.
  const std::vector<std::filesystem::path>& leftovers() const { return leftovers_; }

  // Writes the marker now, naming what the staged tree holds and
  // `laterEntries` (still to be written), for a tool that lists its own files
  // in a manifest. Optional: commit() writes it otherwise.
  Status writeMarker(const std::vector<std::string>& laterEntries = {});
  // Writes the marker (unless written), swaps the staged tree into place,
  // removes the old tree and the leftovers, releases the lock.
  Status commit();
  // Leaves the staged tree beside the destination for a later run (the
  // leftovers stay too); the destination is unchanged. Returns the tree's path.
  std::filesystem::path keepUnfinished();

 private:
  OutputDir(std::string tool, DestinationState state, DirLock lock, StagedDir staged,
            std::vector<std::filesystem::path> leftovers)
      : tool_(std::move(tool)), state_(state), lock_(std::move(lock)), staged_(std::move(staged)),
        leftovers_(std::move(leftovers)) {}
  void removeLeftovers();
  std::string tool_;
  DestinationState state_;
  std::optional<DirLock> lock_;
  std::optional<StagedDir> staged_;
  std::vector<std::filesystem::path> leftovers_;
  bool done_ = false;
  bool markerWritten_ = false;
  std::vector<std::string> markerEntries_;  // as written by writeMarker()
  std::filesystem::path parentDir_;         // where the destination lives
  std::filesystem::path createdParent_;     // the first parent this run created (empty: none)
};

}  // namespace zp
