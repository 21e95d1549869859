#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace delegato {
namespace {

// Unique per process and call, so concurrent writers of one path (threads or
// processes) never share a temporary file.
std::string TemporaryPathFor(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
}

// write(2) until done; false with errno set on failure (ENOSPC, EFBIG, EIO...).
bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

}  // namespace

void WriteFileAtomically(const std::string& path, std::initializer_list<std::string_view> parts) {
  const std::string temp = TemporaryPathFor(path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Fail(path, ": cannot write: ", std::strerror(errno));
  bool ok = true;
  for (std::string_view part : parts) {
    if (!WriteAll(fd, part)) {
      ok = false;
      break;
    }
  }
  int error = ok ? 0 : errno;
  // close() reports delayed write errors (NFS, some full file systems).
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    std::remove(temp.c_str());
    Fail(path, ": write failed: ", std::strerror(error));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    error = errno;
    std::remove(temp.c_str());
    Fail(path, ": cannot write: ", std::strerror(error));
  }
}

}  // namespace delegato
