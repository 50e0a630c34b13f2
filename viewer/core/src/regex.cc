// Regex: parse to a small tree, emit a Thompson NFA, simulate it breadth-first (Pike VM without captures).
#include "gt/viewer/regex.h"

#include <array>
#include <cctype>
#include <memory>

namespace gt::viewer {

namespace {

using Set = std::array<uint64_t, 4>;

void Add(Set& s, unsigned c) {
  s[c >> 6] |= uint64_t{1} << (c & 63);
}
bool Has(const Set& s, unsigned c) {
  return (s[c >> 6] >> (c & 63)) & 1;
}
void AddRange(Set& s, unsigned lo, unsigned hi) {
  for (unsigned c = lo; c <= hi; ++c) Add(s, c);
}
void Invert(Set& s) {
  for (auto& w : s) w = ~w;
}
void Caseless(Set& s) {
  for (unsigned c = 'a'; c <= 'z'; ++c)
    if (Has(s, c) || Has(s, c - 32)) Add(s, c), Add(s, c - 32);
}

struct Node {
  enum Kind { kClass, kCat, kAlt, kRepeat, kBol, kEol } kind = kCat;
  Set set{};
  std::vector<std::unique_ptr<Node>> kids;
  int min = 0, max = -1;  // kRepeat; max -1 = unbounded
};
using NodeP = std::unique_ptr<Node>;

constexpr int kMaxDepth = 64;    // group nesting: bounds the parser's recursion
constexpr int kMaxCount = 1000;  // {n,m}

}  // namespace

class RegexCompiler {
 public:
  RegexCompiler(std::string_view p, bool cs) : p_(p), case_sensitive_(cs) {}

  StatusOr<Regex> Run() {
    if (p_.size() > Regex::kMaxPattern)
      return InvalidArgument("regex: pattern longer than " + std::to_string(Regex::kMaxPattern) + " bytes");
    NodeP root = ParseAlt(0);
    if (!error_.empty()) return InvalidArgument(error_);
    if (i_ < p_.size()) return InvalidArgument("regex: unbalanced ')' at " + std::to_string(i_));
    Emit(*root);
    Push({Regex::Inst::kMatch, 0, 0});
    if (too_big_)
      return InvalidArgument("regex: pattern expands to more than " + std::to_string(Regex::kMaxProgram) +
                             " steps (smaller {n,m} counts)");
    return std::move(re_);
  }

 private:
  bool Fail(std::string m) {
    if (error_.empty()) error_ = "regex: " + m + " at " + std::to_string(i_);
    return false;
  }
  bool More() const { return i_ < p_.size() && error_.empty(); }

  NodeP ParseAlt(int depth) {
    auto alt = std::make_unique<Node>();
    alt->kind = Node::kAlt;
    alt->kids.push_back(ParseCat(depth));
    while (More() && p_[i_] == '|') {
      ++i_;
      alt->kids.push_back(ParseCat(depth));
    }
    if (alt->kids.size() == 1) return std::move(alt->kids[0]);
    return alt;
  }

  NodeP ParseCat(int depth) {
    auto cat = std::make_unique<Node>();
    cat->kind = Node::kCat;
    while (More() && p_[i_] != '|' && p_[i_] != ')') {
      NodeP atom = ParseAtom(depth);
      if (!error_.empty()) break;
      int mn, mx;
      if (More() && ParseQuant(&mn, &mx)) {
        if (atom->kind == Node::kBol || atom->kind == Node::kEol) {
          Fail("nothing to repeat");
          break;
        }
        auto rep = std::make_unique<Node>();
        rep->kind = Node::kRepeat;
        rep->min = mn, rep->max = mx;
        rep->kids.push_back(std::move(atom));
        atom = std::move(rep);
        if (More() && (p_[i_] == '?')) ++i_;  // lazy: same set of matches for a yes/no search
        if (More() && (p_[i_] == '*' || p_[i_] == '+' || p_[i_] == '?')) Fail("nested quantifier");
      }
      cat->kids.push_back(std::move(atom));
    }
    return cat;
  }

  // * + ? {n} {n,} {n,m}; a '{' that does not start a valid count is a literal.
  bool ParseQuant(int* mn, int* mx) {
    char c = p_[i_];
    if (c == '*') return ++i_, *mn = 0, *mx = -1, true;
    if (c == '+') return ++i_, *mn = 1, *mx = -1, true;
    if (c == '?') return ++i_, *mn = 0, *mx = 1, true;
    if (c != '{') return false;
    size_t j = i_ + 1;
    auto num = [&](int* v) {
      size_t s = j;
      long n = 0;
      while (j < p_.size() && std::isdigit(static_cast<unsigned char>(p_[j])) && n <= kMaxCount)
        n = n * 10 + (p_[j++] - '0');
      *v = static_cast<int>(n);
      return j > s;
    };
    int a = 0, b = 0;
    if (!num(&a)) return false;
    b = a;
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      if (!num(&b)) b = -1;
    }
    if (j >= p_.size() || p_[j] != '}') return false;
    if (a > kMaxCount || b > kMaxCount) return Fail("count above " + std::to_string(kMaxCount)), false;
    if (b != -1 && b < a) return Fail("{n,m} with m < n"), false;
    i_ = j + 1;
    *mn = a, *mx = b;
    return true;
  }

  NodeP ClassNode(const Set& s) {
    auto n = std::make_unique<Node>();
    n->kind = Node::kClass;
    n->set = s;
    if (!case_sensitive_) Caseless(n->set);
    return n;
  }

  // \d \w \s and their complements; any other escaped byte stands for itself.
  Set EscapeSet(char e) {
    Set s{};
    switch (e) {
      case 'd':
      case 'D':
        AddRange(s, '0', '9');
        break;
      case 'w':
      case 'W':
        AddRange(s, '0', '9'), AddRange(s, 'a', 'z'), AddRange(s, 'A', 'Z'), Add(s, '_');
        break;
      case 's':
      case 'S':
        for (char c : std::string_view(" \t\n\r\f\v")) Add(s, static_cast<unsigned char>(c));
        break;
      case 'n':
        Add(s, '\n');
        return s;
      case 't':
        Add(s, '\t');
        return s;
      default:
        Add(s, static_cast<unsigned char>(e));
        return s;
    }
    if (std::isupper(static_cast<unsigned char>(e))) Invert(s);
    return s;
  }

  NodeP ParseAtom(int depth) {
    char c = p_[i_];
    if (c == '(') {
      if (depth >= kMaxDepth)
        return Fail("groups nested deeper than " + std::to_string(kMaxDepth)), ClassNode({});
      ++i_;
      if (p_.substr(i_, 2) == "?:")
        i_ += 2;
      else if (i_ < p_.size() && p_[i_] == '?')
        return Fail("unsupported group (look-around)"), ClassNode({});
      NodeP inner = ParseAlt(depth + 1);
      if (!error_.empty()) return inner;
      if (i_ >= p_.size() || p_[i_] != ')') return Fail("missing ')'"), ClassNode({});
      ++i_;
      return inner;
    }
    if (c == '*' || c == '+' || c == '?') return Fail("nothing to repeat"), ClassNode({});
    ++i_;
    if (c == '^' || c == '$') {
      auto n = std::make_unique<Node>();
      n->kind = c == '^' ? Node::kBol : Node::kEol;
      return n;
    }
    if (c == '.') {
      Set s{};
      Invert(s);
      s['\n' >> 6] &= ~(uint64_t{1} << ('\n' & 63));
      return ClassNode(s);
    }
    if (c == '\\') {
      if (i_ >= p_.size()) return Fail("trailing '\\'"), ClassNode({});
      char e = p_[i_++];
      if (std::isdigit(static_cast<unsigned char>(e)) && e != '0')
        return Fail("back-references are not supported"), ClassNode({});
      // \b, \B, \x.., \p{..}, ...: a letter escape we do not know would otherwise match the letter itself.
      if (std::isalpha(static_cast<unsigned char>(e)) &&
          std::string_view("dDwWsSnt").find(e) == std::string_view::npos)
        return Fail(std::string("unsupported escape \\") + e), ClassNode({});
      return ClassNode(EscapeSet(e));
    }
    if (c == '[') return ParseClass();
    Set s{};
    Add(s, static_cast<unsigned char>(c));
    return ClassNode(s);
  }

  NodeP ParseClass() {
    Set s{};
    bool negate = false;
    if (i_ < p_.size() && p_[i_] == '^') negate = true, ++i_;
    bool first = true;
    while (true) {
      if (i_ >= p_.size()) return Fail("missing ']'"), ClassNode({});
      char c = p_[i_];
      if (c == ']' && !first) {
        ++i_;
        break;
      }
      first = false;
      ++i_;
      unsigned lo;
      if (c == '\\') {
        if (i_ >= p_.size()) return Fail("trailing '\\'"), ClassNode({});
        char e = p_[i_++];
        if (std::isalpha(static_cast<unsigned char>(e)) &&
            std::string_view("dDwWsSnt").find(e) == std::string_view::npos)
          return Fail(std::string("unsupported escape \\") + e), ClassNode({});
        Set es = EscapeSet(e);
        if (std::string_view("dDwWsS").find(e) != std::string_view::npos) {
          for (int k = 0; k < 4; ++k) s[k] |= es[k];
          continue;
        }
        lo = static_cast<unsigned char>(e == 'n' ? '\n' : e == 't' ? '\t' : e);
      } else {
        lo = static_cast<unsigned char>(c);
      }
      if (i_ + 1 < p_.size() && p_[i_] == '-' && p_[i_ + 1] != ']') {
        ++i_;
        char h = p_[i_++];
        if (h == '\\') {
          if (i_ >= p_.size()) return Fail("trailing '\\'"), ClassNode({});
          h = p_[i_++];
        }
        unsigned hi = static_cast<unsigned char>(h);
        if (hi < lo) return Fail("range out of order"), ClassNode({});
        AddRange(s, lo, hi);
      } else {
        Add(s, lo);
      }
    }
    if (!case_sensitive_) Caseless(s);
    if (negate) Invert(s);
    auto n = std::make_unique<Node>();
    n->kind = Node::kClass;
    n->set = s;
    return n;
  }

  uint32_t Push(Regex::Inst in) {
    if (re_.prog_.size() >= Regex::kMaxProgram + 1) {
      too_big_ = true;
      return static_cast<uint32_t>(re_.prog_.size() - 1);
    }
    re_.prog_.push_back(in);
    return static_cast<uint32_t>(re_.prog_.size() - 1);
  }
  uint32_t Here() const { return static_cast<uint32_t>(re_.prog_.size()); }

  void Emit(const Node& n) {
    if (too_big_) return;
    switch (n.kind) {
      case Node::kClass: {
        re_.classes_.push_back({n.set.begin(), n.set.end()});
        Push({Regex::Inst::kClass, static_cast<uint32_t>(re_.classes_.size() - 1), 0});
        break;
      }
      case Node::kBol:
        Push({Regex::Inst::kBol, 0, 0});
        break;
      case Node::kEol:
        Push({Regex::Inst::kEol, 0, 0});
        break;
      case Node::kCat:
        for (auto& k : n.kids) Emit(*k);
        break;
      case Node::kAlt: {
        std::vector<uint32_t> jumps;
        for (size_t k = 0; k < n.kids.size(); ++k) {
          if (k + 1 < n.kids.size()) {
            uint32_t split = Push({Regex::Inst::kSplit, 0, 0});
            Patch(split, true, Here());
            Emit(*n.kids[k]);
            jumps.push_back(Push({Regex::Inst::kJmp, 0, 0}));
            Patch(split, false, Here());
          } else {
            Emit(*n.kids[k]);
          }
        }
        for (uint32_t j : jumps) Patch(j, true, Here());
        break;
      }
      case Node::kRepeat: {
        const Node& body = *n.kids[0];
        for (int k = 0; k < n.min && !too_big_; ++k) Emit(body);
        if (n.max == -1) {
          uint32_t split = Push({Regex::Inst::kSplit, 0, 0});
          Patch(split, true, Here());
          Emit(body);
          uint32_t j = Push({Regex::Inst::kJmp, 0, 0});
          Patch(j, true, split);
          Patch(split, false, Here());
        } else {
          std::vector<uint32_t> splits;
          for (int k = n.min; k < n.max && !too_big_; ++k) {
            uint32_t split = Push({Regex::Inst::kSplit, 0, 0});
            Patch(split, true, Here());
            splits.push_back(split);
            Emit(body);
          }
          for (uint32_t s : splits) Patch(s, false, Here());
        }
        break;
      }
    }
  }
  void Patch(uint32_t at, bool first, uint32_t target) {
    if (at >= re_.prog_.size()) return;
    (first ? re_.prog_[at].x : re_.prog_[at].y) = target;
  }

  std::string_view p_;
  bool case_sensitive_;
  size_t i_ = 0;
  std::string error_;
  bool too_big_ = false;
  Regex re_;
};

StatusOr<Regex> Regex::Compile(std::string_view pattern, bool case_sensitive) {
  return RegexCompiler(pattern, case_sensitive).Run();
}

bool Regex::Search(std::string_view s) const {
  const size_t n = prog_.size();
  if (n == 0) return false;
  // Sparse sets of program counters (clist: threads at position i; nlist: at i + 1); `mark` de-duplicates a
  // position's epsilon closure, which is what keeps (a*)* from looping.
  std::vector<uint32_t> clist, nlist, stack;
  std::vector<size_t> mark(n, SIZE_MAX);
  clist.reserve(n), nlist.reserve(n);
  size_t gen = 0;
  auto add = [&](std::vector<uint32_t>& list, uint32_t pc0, size_t pos) -> bool {
    stack.clear();
    stack.push_back(pc0);
    while (!stack.empty()) {
      uint32_t pc = stack.back();
      stack.pop_back();
      if (mark[pc] == gen) continue;
      mark[pc] = gen;
      const Inst& in = prog_[pc];
      switch (in.op) {
        case Inst::kMatch:
          return true;
        case Inst::kJmp:
          stack.push_back(in.x);
          break;
        case Inst::kSplit:
          stack.push_back(in.y), stack.push_back(in.x);
          break;
        case Inst::kBol:
          if (pos == 0) stack.push_back(pc + 1);
          break;
        case Inst::kEol:
          if (pos == s.size()) stack.push_back(pc + 1);
          break;
        case Inst::kClass:
          list.push_back(pc);
          break;
      }
    }
    return false;
  };
  for (size_t i = 0;; ++i) {
    // Unanchored: a new thread starts at every position (same generation as the threads stepped into i).
    if (add(clist, 0, i)) return true;
    if (i == s.size()) return false;
    const unsigned c = static_cast<unsigned char>(s[i]);
    nlist.clear();
    ++gen;
    for (uint32_t pc : clist) {
      const auto& set = classes_[prog_[pc].x];
      if ((set[c >> 6] >> (c & 63)) & 1)
        if (add(nlist, pc + 1, i + 1)) return true;
    }
    std::swap(clist, nlist);
  }
}

}  // namespace gt::viewer
