// The sampler's cached unwinder (cfi_unwind.h): a reader of the .eh_frame_hdr table, CIEs, FDEs and the call
// frame instructions compilers emit for x86-64 (DWARF 5 section 6.4, the LSB's .eh_frame pointer encodings).
#include "inject/cfi_unwind.h"

#include <dlfcn.h>

#include <cstring>

namespace gt::inject::cpu {
namespace {

constexpr int kRegRbp = 6, kRegRsp = 7, kRegRa = 16;

// A cursor over mapped unwind data. Reads never go past `end` (a bad table ends the read, `ok` false).
struct Reader {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;
  bool Need(size_t n) {
    if (ok && size_t(end - p) >= n) return true;
    ok = false;
    return false;
  }
  template <class T>
  T Fixed() {
    T v{};
    if (Need(sizeof v)) std::memcpy(&v, p, sizeof v), p += sizeof v;
    return v;
  }
  uint64_t Uleb() {
    uint64_t v = 0;
    for (int shift = 0; Need(1); shift += 7) {
      const uint8_t b = *p++;
      if (shift < 64) v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    return 0;
  }
  int64_t Sleb() {
    int64_t v = 0;
    int shift = 0;
    for (; Need(1); shift += 7) {
      const uint8_t b = *p++;
      if (shift < 64) v |= int64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        if (shift + 7 < 64 && (b & 0x40)) v |= -(int64_t(1) << (shift + 7));
        return v;
      }
    }
    return 0;
  }
  // A pointer in DW_EH_PE encoding `enc`; `datarel` is the base of DW_EH_PE_datarel. Indirect and aligned
  // encodings are refused (ok false): compilers do not use them in FDEs.
  uint64_t Encoded(uint8_t enc, uintptr_t datarel = 0) {
    if (enc == 0xff) return 0;  // DW_EH_PE_omit
    const uintptr_t at = reinterpret_cast<uintptr_t>(p);
    uint64_t v = 0;
    switch (enc & 0x0f) {
      case 0x00:
        v = Fixed<uint64_t>();
        break;
      case 0x01:
        v = Uleb();
        break;
      case 0x02:
        v = Fixed<uint16_t>();
        break;
      case 0x03:
        v = Fixed<uint32_t>();
        break;
      case 0x04:
        v = Fixed<uint64_t>();
        break;
      case 0x09:
        v = uint64_t(Sleb());
        break;
      case 0x0a:
        v = uint64_t(int64_t(Fixed<int16_t>()));
        break;
      case 0x0b:
        v = uint64_t(int64_t(Fixed<int32_t>()));
        break;
      case 0x0c:
        v = Fixed<uint64_t>();
        break;
      default:
        ok = false;
        return 0;
    }
    switch (enc & 0x70) {
      case 0x00:
        break;
      case 0x10:
        v += at;
        break;  // pcrel
      case 0x30:
        v += datarel;
        break;  // datarel
      default:
        ok = false;
        return 0;
    }
    if (enc & 0x80) ok = false;  // indirect
    return v;
  }
};

// What the call frame instructions say at one address, for the registers the unwinder follows.
struct RegRule {
  uint8_t kind = 0;  // 0 unspecified/same value, 1 saved at CFA + offset, 2 undefined, 3 anything else
  int64_t offset = 0;
};
struct CfaState {
  int cfa_reg = kRegRsp;
  int64_t cfa_offset = 8;
  bool cfa_complex = false;
  bool cfa_deref = false;  // CFA = *(cfa_reg + cfa_offset): GCC's stack realignment (DRAP), see DrapBlock
  RegRule rbp, ra;
};

// The two DWARF expressions GCC emits for a function that realigns its stack (a DRAP register: locals aligned
// beyond 16 bytes with a dynamic allocation): the CFA is the DRAP value the function saved below its frame
// pointer, "DW_OP_breg6 (rbp) N; DW_OP_deref", and rbp is saved where rbp points, "DW_OP_breg6 (rbp) N".
// Returns whether [p, p + n) is exactly that (with the deref when `deref`), with N in *offset.
bool DrapBlock(const uint8_t* p, uint64_t n, bool deref, int64_t* offset) {
  Reader r{p, p + n};
  if (r.Fixed<uint8_t>() != 0x76) return false;  // DW_OP_breg6
  *offset = r.Sleb();
  if (deref && r.Fixed<uint8_t>() != 0x06) return false;  // DW_OP_deref
  return r.ok && r.p == r.end;
}

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = -8;
  uint64_t ra_reg = kRegRa;
  uint8_t fde_enc = 0;  // DW_EH_PE_absptr unless 'R'
  bool has_aug_data = false;
  bool signal_frame = false;
  const uint8_t* insns = nullptr;
  const uint8_t* insns_end = nullptr;
};

bool ParseCie(const uint8_t* at, Cie* cie) {
  Reader r{at, at + 16};
  uint64_t length = r.Fixed<uint32_t>();
  if (!r.ok || length == 0 || length == 0xffffffff || length > (1u << 20)) return false;
  r.end = at + 4 + length;
  if (r.Fixed<uint32_t>() != 0) return false;  // a CIE's id
  const uint8_t version = r.Fixed<uint8_t>();
  if (version != 1 && version != 3) return false;
  const char* aug = reinterpret_cast<const char*>(r.p);
  const size_t aug_len = strnlen(aug, size_t(r.end - r.p));
  if (!r.Need(aug_len + 1)) return false;
  r.p += aug_len + 1;
  if (aug_len > 0 && aug[0] != 'z') return false;  // ("eh" and other pre-'z' forms: not emitted today)
  cie->code_align = r.Uleb();
  cie->data_align = r.Sleb();
  cie->ra_reg = version == 1 ? r.Fixed<uint8_t>() : r.Uleb();
  if (aug_len > 0) {
    cie->has_aug_data = true;
    const uint64_t aug_data = r.Uleb();
    if (!r.Need(aug_data)) return false;
    const uint8_t* aug_end = r.p + aug_data;
    for (size_t i = 1; i < aug_len && r.ok; ++i) {
      switch (aug[i]) {
        case 'R':
          cie->fde_enc = r.Fixed<uint8_t>();
          break;
        case 'L':
          r.Fixed<uint8_t>();
          break;  // the LSDA's encoding (its pointer is in the FDE)
        case 'P': {
          const uint8_t enc = r.Fixed<uint8_t>();
          r.Encoded(uint8_t(enc & 0x7f));  // the personality routine (indirect: read, not followed)
          break;
        }
        case 'S':
          cie->signal_frame = true;
          break;
        default:
          r.p = aug_end;
          i = aug_len;
          break;  // unknown letters: the data length lets us skip them
      }
    }
    r.p = aug_end;
  }
  cie->insns = r.p;
  cie->insns_end = r.end;
  return r.ok && r.p <= r.end;
}

// Runs call frame instructions [p, end) while the location stays at or below `pc`.
bool Execute(const Cie& cie, const uint8_t* p, const uint8_t* end, uint64_t loc, uint64_t pc,
             const CfaState& initial, CfaState* st) {
  Reader r{p, end};
  CfaState stack[8];
  int depth = 0;
  const auto reg_rule = [&](uint64_t reg) -> RegRule* {
    if (reg == kRegRbp) return &st->rbp;
    if (reg == cie.ra_reg) return &st->ra;
    return nullptr;  // not followed
  };
  const auto set_offset = [&](uint64_t reg, int64_t offset) {
    if (RegRule* x = reg_rule(reg)) x->kind = 1, x->offset = offset;
  };
  const auto set_kind = [&](uint64_t reg, uint8_t kind) {
    if (RegRule* x = reg_rule(reg)) x->kind = kind, x->offset = 0;
  };
  while (r.p < r.end && r.ok) {
    const uint8_t op = r.Fixed<uint8_t>();
    const uint8_t hi = op & 0xc0, low = op & 0x3f;
    if (hi == 0x40) {  // DW_CFA_advance_loc
      loc += low * cie.code_align;
      if (loc > pc) return true;
      continue;
    }
    if (hi == 0x80) {  // DW_CFA_offset
      set_offset(low, int64_t(r.Uleb()) * cie.data_align);
      continue;
    }
    if (hi == 0xc0) {  // DW_CFA_restore
      if (low == kRegRbp) st->rbp = initial.rbp;
      if (low == cie.ra_reg) st->ra = initial.ra;
      continue;
    }
    uint64_t delta = 0;
    switch (op) {
      case 0x00:
        break;      // nop
      case 0x01: {  // set_loc
        loc = r.Encoded(cie.fde_enc);
        if (loc > pc) return true;
        break;
      }
      case 0x02:
        delta = r.Fixed<uint8_t>();
        goto advance;
      case 0x03:
        delta = r.Fixed<uint16_t>();
        goto advance;
      case 0x04:
        delta = r.Fixed<uint32_t>();
      advance:
        loc += delta * cie.code_align;
        if (loc > pc) return true;
        break;
      case 0x05: {  // offset_extended
        const uint64_t reg = r.Uleb();
        set_offset(reg, int64_t(r.Uleb()) * cie.data_align);
        break;
      }
      case 0x06: {  // restore_extended
        const uint64_t reg = r.Uleb();
        if (reg == kRegRbp) st->rbp = initial.rbp;
        if (reg == cie.ra_reg) st->ra = initial.ra;
        break;
      }
      case 0x07:
        set_kind(r.Uleb(), 2);
        break;  // undefined
      case 0x08:
        set_kind(r.Uleb(), 0);
        break;      // same_value
      case 0x09: {  // register: the value lives in another register
        const uint64_t reg = r.Uleb();
        r.Uleb();
        set_kind(reg, 3);
        break;
      }
      case 0x0a:  // remember_state
        if (depth == 8) return false;
        stack[depth++] = *st;
        break;
      case 0x0b:  // restore_state: the CFA rule too, as libgcc does (GCC brackets an epilogue's "CFA = rsp +
                  // 8" between remember and restore, and the code after it needs the CFA from before)
        if (depth == 0) return false;
        *st = stack[--depth];
        break;
      case 0x0c:  // def_cfa
        st->cfa_reg = int(r.Uleb());
        st->cfa_offset = int64_t(r.Uleb());
        st->cfa_complex = st->cfa_deref = false;
        break;
      case 0x0d:  // def_cfa_register
        st->cfa_reg = int(r.Uleb());
        st->cfa_complex = st->cfa_deref = false;
        break;
      case 0x0e:  // def_cfa_offset
        st->cfa_offset = int64_t(r.Uleb());
        break;
      case 0x0f: {  // def_cfa_expression
        const uint64_t n = r.Uleb();
        int64_t offset = 0;
        if (!r.Need(n)) break;
        if (DrapBlock(r.p, n, /*deref=*/true, &offset)) {
          st->cfa_reg = kRegRbp, st->cfa_offset = offset;
          st->cfa_deref = true, st->cfa_complex = false;
        } else {
          st->cfa_complex = true;
        }
        r.p += n;
        break;
      }
      case 0x10:    // expression
      case 0x16: {  // val_expression
        const uint64_t reg = r.Uleb();
        const uint64_t n = r.Uleb();
        int64_t offset = 0;
        if (!r.Need(n)) break;
        if (op == 0x10 && reg == kRegRbp && DrapBlock(r.p, n, /*deref=*/false, &offset))
          st->rbp.kind = 4, st->rbp.offset = offset;  // saved at (this frame's rbp) + offset
        else
          set_kind(reg, 3);
        r.p += n;
        break;
      }
      case 0x11: {  // offset_extended_sf
        const uint64_t reg = r.Uleb();
        set_offset(reg, r.Sleb() * cie.data_align);
        break;
      }
      case 0x12:  // def_cfa_sf
        st->cfa_reg = int(r.Uleb());
        st->cfa_offset = r.Sleb() * cie.data_align;
        st->cfa_complex = false;
        break;
      case 0x13:
        st->cfa_offset = r.Sleb() * cie.data_align;
        break;      // def_cfa_offset_sf
      case 0x14:    // val_offset
      case 0x15: {  // val_offset_sf
        const uint64_t reg = r.Uleb();
        if (op == 0x14)
          r.Uleb();
        else
          r.Sleb();
        set_kind(reg, 3);
        break;
      }
      case 0x2e:
        r.Uleb();
        break;      // GNU_args_size
      case 0x2f: {  // GNU_negative_offset_extended
        const uint64_t reg = r.Uleb();
        set_offset(reg, -int64_t(r.Uleb()) * cie.data_align);
        break;
      }
      default:
        return false;  // an instruction this reader does not know
    }
  }
  return r.ok;
}

}  // namespace

FrameRule ReadFrameRule(FindObjectFn find_object, uintptr_t pc) {
  FrameRule out;
  out.kind = FrameRule::kNoInfo;
  const auto Complex = [&](uint8_t why) {
    out.kind = FrameRule::kComplex;
    out.why = why;
    return out;
  };
  dl_find_object fo;
  if (!find_object || find_object(reinterpret_cast<void*>(pc), &fo) != 0 || !fo.dlfo_eh_frame) return out;
  // .eh_frame_hdr: version 1, then the encodings of eh_frame_ptr, fde_count and the table.
  const auto* hdr = static_cast<const uint8_t*>(fo.dlfo_eh_frame);
  const uintptr_t hdr_addr = reinterpret_cast<uintptr_t>(hdr);
  if (hdr[0] != 1) return out;
  const uint8_t ptr_enc = hdr[1], count_enc = hdr[2], table_enc = hdr[3];
  Reader r{hdr + 4, hdr + 4 + 32};
  r.Encoded(ptr_enc, hdr_addr);
  const uint64_t count = r.Encoded(count_enc, hdr_addr);
  // The search table as every linker writes it: pairs of 4-byte offsets from the header, sorted.
  if (!r.ok || table_enc != 0x3b || count == 0)
    return Complex(FrameRule::kWhyTable);  // (libgcc searches
                                           // .eh_frame itself)
  const auto* table = reinterpret_cast<const int32_t*>(r.p);
  // The last entry whose start is at or below pc.
  uint64_t lo = 0, hi = count;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (hdr_addr + int64_t(table[2 * mid]) <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return out;
  const uint8_t* fde = hdr + table[2 * (lo - 1) + 1];
  Reader f{fde, fde + 8};
  const uint64_t length = f.Fixed<uint32_t>();
  if (!f.ok || length == 0 || length == 0xffffffff || length > (1u << 20))
    return Complex(FrameRule::kWhyEntry);
  f.end = fde + 4 + length;
  const uint8_t* cie_field = f.p;
  const uint32_t cie_offset = f.Fixed<uint32_t>();
  Cie cie;
  if (!f.ok || cie_offset == 0 || !ParseCie(cie_field - cie_offset, &cie))
    return Complex(FrameRule::kWhyEntry);
  const uint64_t begin = f.Encoded(cie.fde_enc);
  const uint64_t range = f.Encoded(uint8_t(cie.fde_enc & 0x0f));
  if (!f.ok) return Complex(FrameRule::kWhyEntry);
  if (pc < begin || pc >= begin + range) return out;  // between functions: no information
  if (cie.has_aug_data) {
    const uint64_t n = f.Uleb();
    if (!f.Need(n)) return Complex(FrameRule::kWhyEntry);
    f.p += n;
  }
  CfaState st;  // before the CIE's instructions: nothing known
  st.cfa_reg = -1;
  if (!Execute(cie, cie.insns, cie.insns_end, begin, ~uint64_t(0), st, &st))
    return Complex(FrameRule::kWhyInstruction);
  const CfaState initial = st;
  if (!Execute(cie, f.p, f.end, begin, pc, initial, &st)) return Complex(FrameRule::kWhyInstruction);
  if (cie.signal_frame) return Complex(FrameRule::kWhySignalFrame);
  if (st.cfa_complex || (st.cfa_reg != kRegRsp && st.cfa_reg != kRegRbp) || st.cfa_offset < INT32_MIN ||
      st.cfa_offset > INT32_MAX)
    return Complex(FrameRule::kWhyCfa);
  if (st.ra.kind == 2) {
    out.kind = FrameRule::kOutermost;
    return out;
  }
  if (st.ra.kind != 1 || st.ra.offset < INT16_MIN || st.ra.offset > INT16_MAX)
    return Complex(FrameRule::kWhyReturnAddress);
  if (st.rbp.kind == 3 || st.rbp.offset < INT16_MIN || st.rbp.offset > INT16_MAX)
    return Complex(FrameRule::kWhyRbp);
  out.kind = FrameRule::kStandard;
  out.cfa_rbp = st.cfa_deref ? 2 : st.cfa_reg == kRegRbp ? 1 : 0;
  out.cfa_offset = int32_t(st.cfa_offset);
  out.ra_offset = int16_t(st.ra.offset);
  out.rbp_rule = st.rbp.kind;  // 0 unchanged, 1 saved at CFA + offset, 2 undefined, 4 saved at rbp + offset
  out.rbp_offset = int16_t(st.rbp.offset);
  return out;
}

// Not instrumented by ASan: it reads the interrupted frames' stack slots (return addresses, saved rbp), which
// may lie next to the redzones of their locals.
__attribute__((no_sanitize("address"))) UnwindResult UnwindFromContext(
    FindObjectFn find_object, RuleCache& cache, uint64_t generation, uintptr_t rip, uintptr_t rsp,
    uintptr_t rbp, uintptr_t stack_end, uintptr_t stop_lo, uintptr_t stop_hi, uint64_t* out, int max) {
  UnwindResult res;
  if (cache.generation != generation) {  // modules came or went: addresses may mean other code now
    for (RuleCache::Entry& e : cache.entries) e.pc = 0;
    cache.generation = generation;
  }
  const uintptr_t rsp0 = rsp;
  // Every read is of a stack slot: between the interrupted rsp and the stack's end. 256 MiB where the end is
  // not known: further than any thread's stack.
  const uintptr_t end = stack_end > rsp0                              ? stack_end
                        : rsp0 < UINTPTR_MAX - (uintptr_t(256) << 20) ? rsp0 + (uintptr_t(256) << 20)
                                                                      : UINTPTR_MAX;
  auto on_stack = [rsp0, end](uintptr_t p) { return p >= rsp0 && p < end && end - p >= 8 && (p & 7) == 0; };
  bool rbp_known = true;
  uintptr_t ip = rip;
  for (;;) {
    if (res.frames == max) {
      res.truncated = true;
      return res;
    }
    out[res.frames++] = ip;
    const uintptr_t at = res.frames == 1 ? ip : ip - 1;  // a return address points after its call
    if (at >= stop_lo && at < stop_hi) return res;
    // The cache: two entries per set, the second the older.
    const uint32_t set = uint32_t((at * 0x9e3779b97f4a7c15ull) >> 40) & (RuleCache::kSets - 1);
    RuleCache::Entry* e = &cache.entries[2 * set];
    FrameRule rule;
    if (e[0].pc == at) {
      rule = e[0].rule;
    } else if (e[1].pc == at) {
      rule = e[1].rule;
    } else {
      rule = ReadFrameRule(find_object, at);
      ++res.rules_read;
      e[1] = e[0];
      e[0] = RuleCache::Entry{at, rule, 0};
    }
    switch (rule.kind) {
      case FrameRule::kStandard:
        break;
      case FrameRule::kOutermost:
        return res;
      case FrameRule::kNoInfo:
        res.not_unwound = res.frames == 1;
        return res;
      default:
        res.complex = true, res.why = rule.why, res.complex_pc = at;
        return res;
    }
    if (rule.cfa_rbp && !rbp_known) {
      res.complex = true, res.why = FrameRule::kWhyRbpUnknown, res.complex_pc = at;
      return res;
    }
    uintptr_t cfa = (rule.cfa_rbp ? rbp : rsp) + intptr_t(rule.cfa_offset);
    if (rule.cfa_rbp == 2) {  // the DRAP value saved in this frame, below rbp
      if (cfa <= rsp || !on_stack(cfa)) return res;
      cfa = *reinterpret_cast<const uintptr_t*>(cfa);
    }
    // The stack grows down: each caller's frame lies above the last (a wrong rule or a corrupt frame ends
    // the stack rather than looping or leaving it).
    const uintptr_t ra_at = cfa + intptr_t(rule.ra_offset);
    if (cfa <= rsp || (cfa & 7) != 0 || !on_stack(ra_at)) return res;
    const uintptr_t ra = *reinterpret_cast<const uintptr_t*>(ra_at);
    if (rule.rbp_rule == 1) {
      const uintptr_t rbp_at = cfa + intptr_t(rule.rbp_offset);
      if (!on_stack(rbp_at)) return res;
      rbp = *reinterpret_cast<const uintptr_t*>(rbp_at);
    } else if (rule.rbp_rule == 4) {  // where this frame's rbp points
      if (!rbp_known) {
        res.complex = true, res.why = FrameRule::kWhyRbpUnknown, res.complex_pc = at;
        return res;
      }
      const uintptr_t rbp_at = rbp + intptr_t(rule.rbp_offset);
      if (!on_stack(rbp_at)) return res;
      rbp = *reinterpret_cast<const uintptr_t*>(rbp_at);
    } else if (rule.rbp_rule == 2) {
      rbp_known = false;
    }
    rsp = cfa;
    if (ra < 4096) return res;  // the end of the chain (a null return address)
    ip = ra;
  }
}

}  // namespace gt::inject::cpu
