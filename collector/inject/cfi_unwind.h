// The CPU sampler's native unwinder (x86-64): from the registers of the interrupted frame (the signal's
// context), each frame's rule to its caller is read from the module's .eh_frame (found through glibc's
// lock-free _dl_find_object and the .eh_frame_hdr search table) and kept in a per-thread cache keyed by
// address, so a return address seen before costs a hash probe and two loads from the stack.
//
// Only the rules compilers emit for ordinary code are followed: the CFA is rsp or rbp plus an offset, the
// return address and rbp are saved at offsets from it (or rbp is unchanged), and GCC's two expressions for a
// function that realigns its stack. A frame with anything else
// (DWARF expressions, another CFA register, a signal trampoline) makes the unwind give up (kComplex), and the
// caller unwinds that sample with libgcc instead. A frame without unwind information ends the stack there,
// as libgcc's does: no frame is guessed. Async-signal-safe: no allocation, lock or system call.
//
// No CUDA or CUPTI dependency (tests and bench_cpu_sampler drive it through the sampler).
#pragma once

#include <cstddef>
#include <cstdint>

struct dl_find_object;

namespace gt::inject::cpu {

// How a frame's caller is found. Packed: one cache entry is 16 bytes.
struct FrameRule {
  enum Kind : uint8_t {
    kEmpty = 0,     // (a free cache entry)
    kStandard = 1,  // CFA = (rsp or rbp) + cfa_offset; return address at CFA + ra_offset
    kOutermost,     // the return address is undefined: the thread's first frame
    kNoInfo,        // no unwind information covers the address
    kComplex,       // a rule this reader does not follow
  };
  uint8_t kind = kEmpty;
  uint8_t cfa_rbp = 0;   // the CFA: 0 rsp + cfa_offset, 1 rbp + cfa_offset, 2 *(rbp + cfa_offset)
  uint8_t rbp_rule = 0;  // the caller's rbp: 0 unchanged, 1 saved at CFA + rbp_offset, 2 undefined, 4 saved
                         // at rbp + rbp_offset (GCC's stack realignment, whose CFA is mode 2)
  // kComplex: why (the sampler counts samples given to libgcc by reason).
  enum Why : uint8_t {
    kWhyNone = 0,
    kWhyTable,          // .eh_frame_hdr without the usual sorted table
    kWhyEntry,          // an FDE or CIE this reader cannot parse
    kWhyInstruction,    // a call frame instruction it does not know
    kWhySignalFrame,    // a signal trampoline
    kWhyCfa,            // the CFA from another register or an expression
    kWhyReturnAddress,  // the return address not saved at an offset from the CFA
    kWhyRbp,            // rbp kept another way (another register, an expression)
    kWhyRbpUnknown,     // a rule needs rbp where the frame below left it undefined
    kWhyCount,
  };
  uint8_t why = kWhyNone;
  int32_t cfa_offset = 0;
  int16_t ra_offset = -8;
  int16_t rbp_offset = 0;
};
static_assert(sizeof(FrameRule) == 12);

// Reads the rule for `pc` (an address inside the function: the interrupted address itself, or a return
// address minus one) from its module's .eh_frame.
using FindObjectFn = int (*)(void*, dl_find_object*);
FrameRule ReadFrameRule(FindObjectFn find_object, uintptr_t pc);

// A thread's cache of rules (2-way, by address); owned by that thread's handler. Zeroed memory is empty.
struct RuleCache {
  static constexpr uint32_t kSets = 2048;
  struct Entry {
    uint64_t pc;
    FrameRule rule;
    uint32_t pad;
  };
  static_assert(sizeof(Entry) == 24);
  uint64_t generation = 0;  // the loaded modules it was filled under (see UnwindFromContext)
  Entry entries[kSets * 2];
};

struct UnwindResult {
  int frames = 0;            // addresses written: the interrupted one first, then return addresses
  bool complex = false;      // a frame needs rules not followed here: unwind this sample another way
  bool not_unwound = false;  // nothing beyond the interrupted address (no unwind information there)
  bool truncated = false;    // more frames than `max`
  int rules_read = 0;        // frames whose rule was not in the cache (read from .eh_frame)
  uint8_t why = 0;           // complex: FrameRule::Why
  uintptr_t complex_pc = 0;  // complex: the address whose rule was not followed
};
// Unwinds from the interrupted frame's rip, rsp and rbp into out[0..max). Stops after a frame whose address
// (the interrupted one, or a return address minus one) lies in [stop_lo, stop_hi). `generation` changes when
// modules were unloaded (or loaded): the cache is emptied first. Stack slots are read only in
// [rsp, stack_end): the end of the readable mapping holding rsp (0: unknown, then 256 MiB above rsp).
UnwindResult UnwindFromContext(FindObjectFn find_object, RuleCache& cache, uint64_t generation, uintptr_t rip,
                               uintptr_t rsp, uintptr_t rbp, uintptr_t stack_end, uintptr_t stop_lo,
                               uintptr_t stop_hi, uint64_t* out, int max);

}  // namespace gt::inject::cpu
