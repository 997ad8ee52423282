#include "libplan/util/output_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "libplan/util/json.h"

namespace zp {
namespace fs = std::filesystem;

namespace {

// Absolute, symlinks resolved as far as the path exists, no trailing separator.
fs::path canonicalOf(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) abs = p;
  fs::path c = fs::weakly_canonical(abs, ec);
  if (ec) c = abs;
  c = c.lexically_normal();
  if (c.filename().empty() && c.has_parent_path() && c != c.root_path()) c = c.parent_path();
  return c;
}

// `inner` is `outer` or lies below it (both canonical).
bool within(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin(), i = inner.begin();
  for (; o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return true;
}

bool allDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Entries of `dir` named PREFIX<digits>, sorted.
std::vector<fs::path> entriesWithPrefix(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
        allDigits(name.substr(prefix.size())))
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What writeFileAtomic left beside `path` in a run that was killed before it
// renamed ("<name>.tmp.<pid>" of a process that is gone).
void removeStaleTempFiles(const fs::path& path) {
  const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  for (const auto& p : entriesWithPrefix(parent, path.filename().string() + ".tmp.")) {
    const std::string pid = p.filename().string().substr(path.filename().string().size() + 5);
    if (pid.size() > 9) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) {
      std::error_code ec;
      fs::remove(p, ec);
    }
  }
}

Expected<std::set<std::string>> readMarkerEntries(const fs::path& destination, const std::string& tool) {
  const fs::path marker = destination / kOutputMarker;
  ZP_ASSIGN_OR_RETURN(std::string text, readFile(marker));
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("tool") || !j["tool"].is_string() || !j.contains("entries") ||
      !j["entries"].is_array())
    return makeError("{}: unreadable output marker; refusing to replace {}", marker.string(), destination.string());
  const std::string writer = j["tool"].get<std::string>();
  if (writer != tool)
    return makeError("{}: written by {}, not {}; refusing to replace it", destination.string(), writer, tool);
  std::set<std::string> entries;
  for (const auto& e : j["entries"])
    if (e.is_string()) entries.insert(e.get<std::string>());
  return entries;
}

// Removes `dir` and its parents up to `top` (the first one a run created), as
// long as they are empty: a run that does not commit leaves no directories behind.
void removeEmptyParents(const fs::path& dir, const fs::path& top) {
  if (top.empty()) return;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && within(p, top); p = p.parent_path()) {
    if (!fs::remove(p, ec)) return;
    if (p == top) return;
  }
}

}  // namespace

Status checkNoOverlap(const fs::path& output, const std::vector<GuardedPath>& others) {
  const fs::path out = canonicalOf(output);
  for (const auto& g : others) {
    if (g.path.empty()) continue;
    const fs::path in = canonicalOf(g.path);
    if (in == out) return makeError("{}: is the {} {}; refusing to write over it", output.string(), g.role, g.path.string());
    if (within(in, out))
      return makeError("{}: contains the {} {}; refusing to write over it", output.string(), g.role, g.path.string());
    if (within(out, in))
      return makeError("{}: lies inside the {} {}; refusing to write into it", output.string(), g.role,
                       g.path.string());
  }
  return {};
}

Status checkOutputFile(const fs::path& output, const std::vector<GuardedPath>& others) {
  ZP_ASSIGN_OR_RETURN(const fs::path destination, regularFileDestination(output));
  ZP_TRY(checkNoOverlap(output, others));
  removeStaleTempFiles(destination);
  return {};
}

Status checkOutputFiles(const std::vector<fs::path>& outputs, const std::vector<GuardedPath>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].empty()) continue;
    std::vector<GuardedPath> others = inputs;
    for (size_t k = 0; k < outputs.size(); ++k)
      if (k != i && !outputs[k].empty()) others.push_back({outputs[k], "output"});
    ZP_TRY(checkOutputFile(outputs[i], others));
  }
  return {};
}

Expected<DestinationState> inspectDestination(const fs::path& destination, const std::string& tool) {
  std::error_code ec;
  const fs::file_status st = fs::status(destination, ec);
  if (st.type() == fs::file_type::not_found) return DestinationState::Absent;
  if (ec) {
    if (ec == std::errc::not_a_directory) return DestinationState::Absent;  // creating the parent will say why
    return makeError("{}: cannot inspect: {}", destination.string(), ec.message());
  }
  if (!fs::is_directory(st))
    return makeError("{}: exists and is not a directory; refusing to replace it", destination.string());
  std::set<std::string> names;
  for (fs::directory_iterator it(destination, ec), end; !ec && it != end; it.increment(ec))
    names.insert(it->path().filename().string());
  if (ec) return makeError("{}: cannot list: {}", destination.string(), ec.message());
  if (names.empty()) return DestinationState::Empty;
  if (!names.count(kOutputMarker))
    return makeError("{}: not empty and not written by {} (it has no {}); refusing to replace it", destination.string(),
                     tool, kOutputMarker);
  ZP_ASSIGN_OR_RETURN(auto entries, readMarkerEntries(destination, tool));
  for (const auto& n : names)
    if (n != kOutputMarker && !entries.count(n))
      return makeError("{}: holds '{}', which {} did not write; refusing to replace it (move it away first)",
                       destination.string(), n, tool);
  return DestinationState::EarlierRun;
}

// ---------------------------------------------------------------------------

fs::path DirLock::lockPath(const fs::path& destination) {
  std::string name(".");
  name += destination.filename().string();
  name += ".lock";
  return destination.parent_path() / name;
}

Expected<DirLock> DirLock::acquire(const fs::path& destination, const std::atomic<bool>* stop) {
  const fs::path path = lockPath(destination);
  bool told = false;
  for (;;) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return makeError("{}: cannot create lock file: {}", path.string(), std::strerror(errno));
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK) {
        int e = errno;
        ::close(fd);
        return makeError("{}: cannot lock: {}", path.string(), std::strerror(e));
      }
      if (!told) {
        char buf[32] = {};
        ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
        std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
        fmt::print(stderr, "note: {}: waiting for another run writing it{}\n", destination.string(),
                   allDigits(holder) ? " (pid " + holder + ")" : "");
        told = true;
      }
      if (stop && stop->load()) {
        ::close(fd);
        return makeError("{}: interrupted while waiting for another run writing it", destination.string());
      }
      ::usleep(50'000);
    }
    // The holder removes the file when it finishes: a lock on a removed file
    // excludes nobody, so lock the file the path names now.
    struct stat held {}, named {};
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        // The pid only makes the waiting note more helpful.
      }
      return DirLock(fd, path);
    }
    ::close(fd);
  }
}

DirLock::~DirLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still holding it: see acquire()
  ::close(fd_);
}

// ---------------------------------------------------------------------------

Expected<OutputDir> OutputDir::open(const fs::path& destination, const OutputDirOptions& options) {
  assert(!options.tool.empty());
  // Refusals first, before anything is created.
  ZP_TRY(checkNoOverlap(destination, options.inputs));
  std::error_code ec;
  const fs::path real = canonicalOf(destination);
  if (fs::path cwd = fs::current_path(ec); !ec && within(canonicalOf(cwd), real))
    return makeError("{}: contains the current directory; refusing to replace it", destination.string());
  ZP_TRY(inspectDestination(destination, options.tool));

  // Parents this run creates are removed again should it not commit.
  fs::path created;
  for (fs::path p = real.parent_path(); !p.empty() && !fs::exists(p, ec) && p != p.parent_path(); p = p.parent_path())
    created = p;
  fs::create_directories(real.parent_path(), ec);
  if (ec) return makeError("{}: cannot create parent directory: {}", destination.string(), ec.message());
  struct CreatedParents {  // declared before the lock: removed after it is released
    fs::path dir, top;
    bool keep = false;
    ~CreatedParents() {
      if (!keep) removeEmptyParents(dir, top);
    }
  } parents{real.parent_path(), created};
  ZP_ASSIGN_OR_RETURN(DirLock lock, DirLock::acquire(real, options.stop));

  // Under the lock no other run into this destination is under way: whatever a
  // run left beside it is debris. A fallback commit killed between its two
  // renames left the old tree as ".NAME.old.PID": put it back.
  for (const auto& old : entriesWithPrefix(real.parent_path(), StagedDir::oldPrefix(real))) {
    if (fs::symlink_status(real, ec).type() == fs::file_type::not_found) fs::rename(old, real, ec);
    else fs::remove_all(old, ec);
  }
  // The destination may have changed while this run waited.
  ZP_ASSIGN_OR_RETURN(DestinationState state, inspectDestination(destination, options.tool));
  ZP_ASSIGN_OR_RETURN(StagedDir staged, StagedDir::create(real));
  std::vector<fs::path> leftovers;
  for (const auto& p : entriesWithPrefix(real.parent_path(), StagedDir::stagingPrefix(real)))
    if (p != staged.path()) leftovers.push_back(p);
  parents.keep = true;  // from here the OutputDir removes them should it not commit
  OutputDir out(options.tool, state, std::move(lock), std::move(staged), std::move(leftovers));
  out.parentDir_ = real.parent_path();
  out.createdParent_ = created;
  return out;
}

OutputDir::OutputDir(OutputDir&& other) noexcept
    : tool_(std::move(other.tool_)),
      state_(other.state_),
      lock_(std::move(other.lock_)),
      staged_(std::move(other.staged_)),
      leftovers_(std::move(other.leftovers_)),
      done_(other.done_),
      markerWritten_(other.markerWritten_),
      markerEntries_(std::move(other.markerEntries_)),
      parentDir_(std::move(other.parentDir_)),
      createdParent_(std::move(other.createdParent_)) {
  other.done_ = true;
  other.lock_.reset();
  other.staged_.reset();
}

OutputDir::~OutputDir() {
  if (done_) return;
  staged_.reset();  // removes the staged tree
  removeLeftovers();
  lock_.reset();
  removeEmptyParents(parentDir_, createdParent_);
}

void OutputDir::removeLeftovers() {
  std::error_code ec;
  for (const auto& p : leftovers_) fs::remove_all(p, ec);
  leftovers_.clear();
}

namespace {
Expected<std::vector<std::string>> topLevelEntries(const fs::path& dir) {
  std::vector<std::string> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != kOutputMarker) entries.push_back(it->path().filename().string());
  if (ec) return makeError("{}: cannot list: {}", dir.string(), ec.message());
  std::sort(entries.begin(), entries.end());
  return entries;
}
}  // namespace

Status OutputDir::writeMarker(const std::vector<std::string>& laterEntries) {
  assert(!done_ && !markerWritten_);
  ZP_ASSIGN_OR_RETURN(auto entries, topLevelEntries(path()));
  entries.insert(entries.end(), laterEntries.begin(), laterEntries.end());
  std::sort(entries.begin(), entries.end());
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  Json marker{{"format", 1}, {"tool", tool_}, {"entries", entries}};
  ZP_TRY(writeFileAtomic(path() / kOutputMarker, canonicalJson(marker)));
  markerEntries_ = entries;
  markerWritten_ = true;
  return {};
}

Status OutputDir::commit() {
  assert(!done_);
  if (!markerWritten_) {
    ZP_TRY(writeMarker());
  } else {
    ZP_ASSIGN_OR_RETURN(auto entries, topLevelEntries(path()));
    for (const auto& e : entries)
      if (!std::binary_search(markerEntries_.begin(), markerEntries_.end(), e))
        return makeError("{}: '{}' was written after the output marker", destination().string(), e);
  }
  // The lock keeps other runs out, not people: look once more right before the swap.
  ZP_TRY(inspectDestination(destination(), tool_));
  ZP_TRY(staged_->commit());
  done_ = true;
  removeLeftovers();
  lock_.reset();
  return {};
}

fs::path OutputDir::keepUnfinished() {
  assert(!done_);
  done_ = true;
  fs::path kept = staged_->release();
  lock_.reset();
  return kept;
}

}  // namespace zp
