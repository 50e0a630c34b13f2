// Output names that expand per process, the way nsys users write them, so one command line launched on every
// rank (srun, mpirun, a torchrun wrapper) writes one file per rank: `-o run_%q{RANK}`, `-o job_%h_%p`.
#pragma once

#include <functional>
#include <string>

#include "gt/status.h"

namespace gt::launcher {

// %h host name, %p gcollect's pid, %q{NAME} the environment variable NAME (an error when unset: a file name
// that silently lost its rank would make every rank write the same file), %% a literal %. Any other %
// sequence is an error, so a typo never lands in a file name.
StatusOr<std::string> ExpandOutputPattern(const std::string& pattern, const std::string& host, long pid,
                                          const std::function<const char*(const char*)>& getenv);

}  // namespace gt::launcher
