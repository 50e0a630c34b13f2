// Where `gtrace serve` keeps uploaded traces. The HTTP layer only talks to TraceStore, so a team can swap the
// embedded local directory for an S3-compatible bucket (docs/server.md "Object stores" maps every method to
// PUT / GET-with-Range / DELETE / HEAD and the staging step to a multipart upload).
//
// Ids are opaque to the store: the HTTP layer derives them (keyed hash of the content, see ids.h) and
// validates their spelling before any store call, so no store method ever sees a path separator or "..".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gt/status.h"

namespace gt::server {

// What the store keeps next to each trace's bytes.
struct TraceMeta {
  uint64_t bytes = 0;
  int64_t uploaded_unix = 0;              // first upload of this content
  int64_t accessed_unix = 0;              // last download or re-upload (throttled, see ShareServer)
  std::vector<std::string> owner_hashes;  // SHA-256 (hex) of each uploader's delete token
  std::string format;                     // "gtrace"
  std::string name;  // the first uploader's file name (SanitizeTraceName), "" when none was given
};

// The bytes of one stored trace, readable in ranges. Stays valid after the trace is deleted (a download in
// flight finishes), like an open file on POSIX.
class TraceBlob {
 public:
  virtual ~TraceBlob() = default;
  virtual uint64_t size() const = 0;
  // Hands [offset, offset + length) to `write` in pieces; stops early (returns false) when `write` does.
  virtual bool Read(uint64_t offset, uint64_t length,
                    const std::function<bool(const char*, size_t)>& write) const = 0;
};

// An upload being received: appended to as the body streams in, then either committed under an id or dropped.
// Destroying an uncommitted staging object removes every trace of it (a cut-off upload leaves nothing).
class UploadStaging {
 public:
  virtual ~UploadStaging() = default;
  virtual Status Append(const char* data, size_t size) = 0;
  virtual uint64_t size() const = 0;
  // Makes the bytes durable (fsync) and readable as one contiguous span for validation. Call once, last.
  virtual StatusOr<std::span<const uint8_t>> Finish() = 0;
};

struct CommitResult {
  bool created = false;  // false: the same content was already stored (dedup); the owner was added to it
  TraceMeta meta;
};

class TraceStore {
 public:
  virtual ~TraceStore() = default;

  // The server's key for trace ids: created (random) on first use and persisted, so ids survive restarts.
  virtual StatusOr<std::string> LoadOrCreateSecret() = 0;

  virtual StatusOr<std::unique_ptr<UploadStaging>> BeginUpload() = 0;
  // Atomically publishes the staged bytes under `id` (after Finish()). When `id` exists already the staged
  // bytes are dropped and `owner_hash` is added to the existing trace's owners. Safe from many threads.
  // `name`: the uploader's file name, already sanitized ("" = none); a trace keeps the first one it got.
  virtual StatusOr<CommitResult> Commit(UploadStaging& staging, const std::string& id,
                                        const std::string& owner_hash, const std::string& format,
                                        const std::string& name, int64_t now_unix) = 0;

  virtual StatusOr<TraceMeta> Head(const std::string& id) = 0;  // kNotFound when absent
  virtual StatusOr<std::shared_ptr<const TraceBlob>> Open(const std::string& id) = 0;
  virtual Status Touch(const std::string& id, int64_t now_unix) = 0;
  // Removes one owner; the trace itself goes when its last owner does (or always, when owner_hash is empty:
  // expiry). Returns whether the trace is gone.
  virtual StatusOr<bool> RemoveOwner(const std::string& id, const std::string& owner_hash) = 0;
  // Every stored id with its metadata, for the TTL sweep. Never reachable over HTTP (there is no listing).
  virtual Status ForEach(const std::function<void(const std::string& id, const TraceMeta& meta)>& visit) = 0;

  // Saved view states: a share link's view too long for a URL (notes) is stored and the link names it by id
  // (POST/GET /api/views, docs/server.md). Small text under a content-derived id, like traces; written
  // atomically, never listed. A store without them answers Unsupported (the server then says 501).
  virtual Status PutView(const std::string& id, const std::string& text) {
    (void)id, (void)text;
    return Unsupported("this store keeps no view states");
  }
  virtual StatusOr<std::string> GetView(const std::string& id) {
    (void)id;
    return Unsupported("this store keeps no view states");
  }

  // Where a stored trace's bytes and its viewer index (a cache built from them, docs/format.md "The viewer
  // index") are on this machine, for the index builder. The index goes with the trace (delete, expiry). A
  // store without local files answers Unsupported (an object store keeps a local cache instead:
  // docs/server.md).
  struct LocalFiles {
    std::string trace, index;
  };
  virtual StatusOr<LocalFiles> Local(const std::string& id) {
    (void)id;
    return Unsupported("this store keeps no local files");
  }
};

// The embedded default: one directory on a local file system.
//   DIR/secret.key              server key (0600)
//   DIR/lock                    flock()ed while a server uses the store (one server per directory)
//   DIR/tmp/                    uploads in flight (emptied at open: leftovers of a crash)
//   DIR/traces/<xy>/<id>.gtrace the bytes, written to tmp/ + fsync + rename
//   DIR/traces/<xy>/<id>.json   TraceMeta, replaced atomically
//   DIR/traces/<xy>/<id>.gtindex the viewer index, built by `gtrace serve` (removed with the trace)
// `exclusive` takes the lock (the server does; short-lived tools that only read may not).
StatusOr<std::unique_ptr<TraceStore>> OpenLocalDirStore(const std::string& dir, bool exclusive = true);

}  // namespace gt::server
