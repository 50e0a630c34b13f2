// The viewer page from --web-root: MIME types, gzip (precomputed once per file version), caching headers,
// and path handling that never leaves the root (no "..", no dotfiles, no symlink escape).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "gt/status.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace gt::server {

// The Content-Security-Policy of every HTML page: scripts only from this origin (plus hashes of the page's
// own inline scripts, computed when the file is loaded), wasm compilation allowed, no plugins, no framing.
std::string PageCsp(const std::string& inline_script_hashes);

class StaticSite {
 public:
  // An empty root serves a built-in page that says how to build the viewer.
  Status Init(const std::string& root);
  // Answers GET/HEAD for a non-API path; always sets a response (404 for anything outside the root).
  void Serve(const httplib::Request& req, httplib::Response& res);

  struct File;

 private:
  std::shared_ptr<const File> Load(const std::string& rel_path, std::string* error_status);
  std::string root_;  // realpath, no trailing slash
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const File>> cache_;
};

}  // namespace gt::server
