// Shared conventions of `gtrace` subcommands: exit codes, argument helpers.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "gt/status.h"

namespace gt::cli {

// Exit codes, documented in `gtrace --help`.
inline constexpr int kExitOk = 0;       // success
inline constexpr int kExitError = 1;    // unreadable input, I/O failure, not a trace
inline constexpr int kExitPartial = 2;  // the trace loaded with losses (output was still produced)
inline constexpr int kExitUsage = 64;   // bad command line (unknown command or flag, missing argument)

inline constexpr const char* kExitCodesHelp =
    "Exit codes: 0 ok, 1 error (unreadable input, I/O), 2 trace loaded with losses (output still written),\n"
    "            3 `gtrace diff --fail-above` saw a regression, 64 usage error (unknown command or flag, "
    "missing\n"
    "            argument).\n";

inline bool IsHelp(std::string_view a) {
  return a == "-h" || a == "--help" || a == "help";
}

inline int UsageError(const char* command, const std::string& message) {
  std::fprintf(stderr, "gtrace %s: %s\nTry 'gtrace %s --help'.\n", command, message.c_str(), command);
  return kExitUsage;
}

inline int Fail(const char* command, const Status& s) {
  std::fprintf(stderr, "gtrace %s: %s\n", command, s.ToString().c_str());
  return kExitError;
}

// The output options of every command that writes a file: -o/--output FILE and -f/--force.
struct OutputArgs {
  std::string path;
  bool force = false;

  // Consumes argv[*i] (and -o's value) when it is one of them. False when it is not; *usage_error set when -o
  // lacks its file name.
  bool Parse(int argc, char** argv, int* i, std::string* usage_error) {
    const std::string_view a = argv[*i];
    if (a == "--force" || a == "-f") {
      force = true;
      return true;
    }
    if (a != "-o" && a != "--output") return false;
    if (*i + 1 >= argc) {
      *usage_error = std::string(a) + " needs a file name";
      return true;
    }
    path = argv[++*i];
    return true;
  }

  // The output may be written: it does not exist, or --force was given. No silent overwrite, ever.
  Status CheckWritable(std::string_view hint = "") const {
    FILE* existing = force ? nullptr : std::fopen(path.c_str(), "rb");
    if (!existing) return Status::Ok();
    std::fclose(existing);
    return InvalidArgument(path + " exists (use --force to overwrite" + std::string(hint) + ")");
  }
};

}  // namespace gt::cli
