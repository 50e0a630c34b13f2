#include "launcher/output_name.h"

namespace gt::launcher {

StatusOr<std::string> ExpandOutputPattern(const std::string& pattern, const std::string& host, long pid,
                                          const std::function<const char*(const char*)>& getenv) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (i + 1 >= pattern.size())
      return InvalidArgument("-o '" + pattern + "': a lone % at the end (write %% for a literal %)");
    const char c = pattern[++i];
    if (c == '%') {
      out += '%';
    } else if (c == 'h') {
      out += host;
    } else if (c == 'p') {
      out += std::to_string(pid);
    } else if (c == 'q') {
      const size_t close = pattern.find('}', i);
      if (i + 1 >= pattern.size() || pattern[i + 1] != '{' || close == std::string::npos || close == i + 2)
        return InvalidArgument("-o '" + pattern + "': %q needs a variable name in braces, as in %q{RANK}");
      const std::string name = pattern.substr(i + 2, close - i - 2);
      const char* value = getenv(name.c_str());
      if (!value)
        return InvalidArgument("-o '" + pattern + "': %q{" + name + "} names an unset environment variable " +
                               "(run under torchrun/srun/mpirun, or set " + name + ")");
      for (const char* v = value; *v; ++v) out += *v == '/' ? '_' : *v;  // a value never adds a directory
      i = close;
    } else {
      return InvalidArgument("-o '" + pattern + "': unknown %" + std::string(1, c) +
                             " (known: %h host, %p pid, %q{VAR} environment variable, %% a literal %)");
    }
  }
  return out;
}

}  // namespace gt::launcher
