#include "libplan/util/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace zp {
namespace fs = std::filesystem;

namespace {
const char* fileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}
}  // namespace

Expected<std::string> readFile(const fs::path& path, size_t maxBytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return makeError("{}: cannot open: {}", path.string(), std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return makeError("{}: cannot inspect: {}", path.string(), std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return makeError("{}: is a directory, not a file", path.string());
  if (!S_ISREG(st.st_mode)) return makeError("{}: is {}, not a regular file", path.string(), fileKind(st.st_mode));
  const auto size = static_cast<size_t>(st.st_size);
  if (size > maxBytes) return makeError("{}: {} bytes is above the {} bytes read here", path.string(), size, maxBytes);
  std::string bytes(size, '\0');
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return makeError("{}: read failed: {}", path.string(), std::strerror(errno));
    if (n == 0) break;  // shrank while read: what is there
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

Expected<fs::path> regularFileDestination(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return path;
    return makeError("{}: cannot inspect: {}", path.string(), std::strerror(errno));
  }
  if (S_ISREG(st.st_mode)) return path;
  if (S_ISDIR(st.st_mode)) return makeError("{}: is a directory, not a file", path.string());
  if (!S_ISLNK(st.st_mode))
    return makeError("{}: is {}, not a regular file; refusing to replace it (write to a file path)", path.string(),
                     fileKind(st.st_mode));
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0)
    return makeError("{}: is a symbolic link to a missing file; refusing to write through it", path.string());
  if (!S_ISREG(target.st_mode))
    return makeError("{}: is a symbolic link to {}, not to a regular file; refusing to replace it (write to a file path)",
                     path.string(), fileKind(target.st_mode));
  std::error_code ec;
  fs::path resolved = fs::canonical(path, ec);
  if (ec) return makeError("{}: cannot resolve the symbolic link: {}", path.string(), ec.message());
  return resolved;
}

Status createParentDirectories(const fs::path& file) {
  if (file.empty() || file.parent_path().empty()) return {};
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) return makeError("{}: cannot create its folder: {}", file.string(), ec.message());
  return {};
}

Status writeFileAtomic(const fs::path& destination, std::string_view bytes) {
  ZP_ASSIGN_OR_RETURN(const fs::path path, regularFileDestination(destination));
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return makeError("{}: cannot write: {}", path.string(), std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return makeError("{}: write failed: {}", path.string(), std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return makeError("{}: cannot rename into place: {}", path.string(), std::strerror(e));
  }
  return {};
}

namespace {
fs::path normalDestination(const fs::path& destination) {
  fs::path dest = destination.lexically_normal();
  if (dest.filename().empty()) dest = dest.parent_path();
  return dest;
}

// ".NAME<suffix>" (appended piecewise: GCC 12 warns falsely about "." + string).
std::string hiddenSibling(const fs::path& destination, const char* suffix) {
  std::string s(".");
  s += normalDestination(destination).filename().string();
  s += suffix;
  return s;
}
}  // namespace

std::string StagedDir::stagingPrefix(const fs::path& destination) { return hiddenSibling(destination, ".staging."); }

std::string StagedDir::oldPrefix(const fs::path& destination) { return hiddenSibling(destination, ".old."); }

Expected<StagedDir> StagedDir::create(const fs::path& destination) {
  fs::path dest = normalDestination(destination);
  fs::path parent = dest.parent_path().empty() ? fs::path(".") : dest.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return makeError("{}: cannot create parent directory: {}", dest.string(), ec.message());
  // A fresh name: a directory of that name may be an earlier run's, kept for
  // the next run to read (see OutputDir::keepUnfinished).
  for (int k = 0;; ++k) {
    fs::path staging = parent / (stagingPrefix(dest) + std::to_string(::getpid()) + (k ? std::to_string(k) : ""));
    if (fs::create_directory(staging, ec)) return StagedDir(dest, staging);
    if (ec) return makeError("{}: cannot write output directory: {}", dest.string(), ec.message());
  }
}

StagedDir::StagedDir(StagedDir&& other) noexcept
    : destination_(std::move(other.destination_)),
      staging_(std::move(other.staging_)),
      committed_(other.committed_) {
  other.committed_ = true;  // the moved-from object owns nothing
}

StagedDir::~StagedDir() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

fs::path StagedDir::release() {
  committed_ = true;
  return staging_;
}

Status StagedDir::commit() {
  assert(!committed_);
  std::error_code ec;
  if (fs::symlink_status(destination_, ec).type() == fs::file_type::not_found) {
    if (::rename(staging_.c_str(), destination_.c_str()) != 0)
      return makeError("{}: cannot move output into place: {}", destination_.string(), std::strerror(errno));
    committed_ = true;
    return {};
  }
  // One atomic exchange: the old tree lands at the staging path and is removed.
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, destination_.c_str(), RENAME_EXCHANGE) == 0) {
    committed_ = true;
    fs::remove_all(staging_, ec);
    return {};
  }
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    return makeError("{}: cannot replace existing directory: {}", destination_.string(), std::strerror(errno));
  // File systems without the exchange: move the old tree aside first. A crash
  // between the two renames leaves it as ".NAME.old.PID", which OutputDir
  // moves back.
  fs::path old = destination_.parent_path() / (oldPrefix(destination_) + std::to_string(::getpid()));
  fs::rename(destination_, old, ec);
  if (ec) return makeError("{}: cannot replace existing directory: {}", destination_.string(), ec.message());
  fs::rename(staging_, destination_, ec);
  if (ec) {
    std::error_code back;
    fs::rename(old, destination_, back);
    return makeError("{}: cannot move output into place: {}", destination_.string(), ec.message());
  }
  committed_ = true;
  fs::remove_all(old, ec);
  return {};
}

}  // namespace zp
