#include "libplan/util/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace zp {
namespace fs = std::filesystem;

Expected<std::string> readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError("{}: cannot open: {}", path.string(), std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return makeError("{}: read failed", path.string());
  return ss.str();
}

Status writeFileAtomic(const fs::path& path, std::string_view bytes) {
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

Expected<StagedDir> StagedDir::create(const fs::path& destination) {
  fs::path dest = destination.lexically_normal();
  if (dest.filename().empty()) dest = dest.parent_path();
  fs::path parent = dest.parent_path().empty() ? fs::path(".") : dest.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return makeError("{}: cannot create parent directory: {}", dest.string(), ec.message());
  fs::path staging = parent / ("." + dest.filename().string() + ".staging." + std::to_string(::getpid()));
  fs::remove_all(staging, ec);
  fs::create_directory(staging, ec);
  if (ec) return makeError("{}: cannot write output directory: {}", dest.string(), ec.message());
  return StagedDir(dest, staging);
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

Status StagedDir::commit() {
  std::error_code ec;
  if (fs::exists(destination_, ec)) {
    fs::path old = destination_;
    old += ".old." + std::to_string(::getpid());
    fs::rename(destination_, old, ec);
    if (ec) return makeError("{}: cannot replace existing directory: {}", destination_.string(), ec.message());
    fs::rename(staging_, destination_, ec);
    if (ec) {
      fs::rename(old, destination_, ec);
      return makeError("{}: cannot move output into place", destination_.string());
    }
    fs::remove_all(old, ec);
  } else {
    fs::rename(staging_, destination_, ec);
    if (ec) return makeError("{}: cannot move output into place: {}", destination_.string(), ec.message());
  }
  committed_ = true;
  return {};
}

}  // namespace zp
