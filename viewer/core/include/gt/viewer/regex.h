// A linear-time regular-expression matcher for the search bar (Thompson NFA, simulated breadth-first; no
// backtracking). std::regex backtracks: `(a*)*b` against a long name of a's takes exponential time, and a
// long subject overflows its recursion. Here matching is O(|subject| x |program|) whatever the pattern, and
// the program is bounded (kMaxPattern bytes, kMaxProgram instructions), so a hostile pattern costs a bounded
// time.
//
// Syntax (a subset of ECMAScript/PCRE, no back-references or look-around: they need backtracking):
//   literals, `.`, `[abc]` `[^a-z]` classes, `\d \w \s \D \W \S`, `\` escapes of any punctuation,
//   groups `( )` and `(?: )`, alternation `|`, quantifiers `* + ? {n} {n,} {n,m}` (counts up to 1000),
//   anchors
//   `^ $`. Search semantics: a match anywhere in the subject (anchor with ^ and $ for a whole-name match).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gt/status.h"

namespace gt::viewer {

class Regex {
 public:
  static constexpr size_t kMaxPattern = 1024;   // bytes of pattern text
  static constexpr size_t kMaxProgram = 20000;  // NFA instructions after expanding {n,m}

  // InvalidArgument naming the problem and its position ("regex: unbalanced ')' at 4").
  static StatusOr<Regex> Compile(std::string_view pattern, bool case_sensitive = false);
  bool Search(std::string_view subject) const;  // a match anywhere in subject
  size_t program_size() const { return prog_.size(); }

  struct Inst {
    enum Op : uint8_t { kClass, kSplit, kJmp, kBol, kEol, kMatch } op = kMatch;
    uint32_t x = 0, y = 0;  // kSplit: both targets; kJmp: x; kClass: index into classes_
  };

 private:
  std::vector<Inst> prog_;
  std::vector<std::vector<uint64_t>> classes_;  // 256-bit sets (4 words each)
  friend class RegexCompiler;
};

}  // namespace gt::viewer
