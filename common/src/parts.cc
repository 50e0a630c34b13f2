#include "gt/parts.h"

#include "gt/reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace gt {
namespace {

// A part that cannot be read is skipped; a failed write (a full disk) fails the whole concatenation, so its
// caller keeps the parts instead of a cut-short copy.
Status AppendFile(int out_fd, const std::string& path, uint64_t* bytes, bool* write_failed) {
  int in = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return IoError("open " + path + ": " + std::strerror(errno));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      close(in);
      return IoError("read " + path + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(out_fd, buf + off, n - off);
      if (w < 0) {
        if (errno == EINTR) continue;
        close(in);
        *write_failed = true;
        return IoError(std::strerror(errno));
      }
      off += w;
      *bytes += static_cast<uint64_t>(w);
    }
  }
  close(in);
  return Status::Ok();
}

}  // namespace

std::vector<std::string> ListParts(const std::string& parts_dir) {
  std::vector<std::pair<unsigned long, std::string>> found;  // (pid, path); gcollect's own part sorts first
  if (DIR* d = opendir(parts_dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() <= 7 || name.compare(name.size() - 7, 7, ".gtrace") != 0) continue;
      found.emplace_back(name == "gcollect.gtrace" ? 0 : std::strtoul(name.c_str(), nullptr, 10) + 1,
                         parts_dir + "/" + name);
    }
    closedir(d);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [key, path] : found) out.push_back(std::move(path));
  return out;
}

StatusOr<ConcatResult> ConcatenateParts(const std::vector<std::string>& parts, const std::string& output,
                                        bool overwrite) {
  ConcatResult result;
  std::string tmp = output + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create " + tmp + ": " + std::strerror(errno));
  auto fail = [&](Status s) -> StatusOr<ConcatResult> {
    close(fd);
    unlink(tmp.c_str());
    return s;
  };
  for (const std::string& path : parts) {
    bool write_failed = false;
    Status s = AppendFile(fd, path, &result.bytes, &write_failed);
    if (write_failed) return fail(IoError("cannot write " + tmp + ": " + s.message()));
    if (!s.ok()) {
      result.problems.push_back(s.ToString());
      continue;
    }
    ++result.parts;
  }
  // fsync reports what the writes could not (a full disk on filesystems that allocate late).
  if (fsync(fd) != 0) return fail(IoError("cannot write " + tmp + ": fsync: " + std::strerror(errno)));
  close(fd);
  if (overwrite) {
    if (rename(tmp.c_str(), output.c_str()) != 0) {
      unlink(tmp.c_str());
      return IoError("cannot write " + output + ": " + std::strerror(errno));
    }
  } else {
    // link() fails when the name exists: no silent overwrite even if someone created it meanwhile.
    if (link(tmp.c_str(), output.c_str()) != 0) {
      int err = errno;
      if (err == EEXIST) {
        return IoError(output + " appeared while the app ran; the trace was kept as " + tmp);
      }
      // Filesystems without hard links: fall back to rename after a final existence check.
      if (access(output.c_str(), F_OK) == 0 || rename(tmp.c_str(), output.c_str()) != 0) {
        return IoError("cannot write " + output + ": " + std::strerror(err) + "; the trace was kept as " +
                       tmp);
      }
    } else {
      unlink(tmp.c_str());
    }
  }
  return result;
}

StatusOr<std::string> ReadTraceOrParts(const std::string& path, bool* was_parts) {
  struct stat st {};
  const bool dir = stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (was_parts) *was_parts = dir;
  if (!dir) return ReadFileBytes(path);
  const std::vector<std::string> parts = ListParts(path);
  if (parts.empty()) return NotFound(path + " is a directory without part files (*.gtrace)");
  std::string all;
  for (const std::string& p : parts) {
    auto b = ReadFileBytes(p);
    if (b.ok()) all += *b;  // an unreadable part is left out, as gtrace recover leaves it out
  }
  return all;
}

}  // namespace gt
