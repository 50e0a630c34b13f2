#!/usr/bin/env bash
# Checks the CPU sampler's CPython frame layouts (collector/inject/cpu_sampler.cc, kLayouts) against a CPython
# built from Debian's source package, for an interpreter this machine does not have:
#   bash scripts/python_layout.sh PACKAGE SUITE   e.g. python3.13 trixie
# (3.14's sources were not downloadable when its row was made: the same program was compiled against the headers
# of sid's libpython3.14-dev binary package, -I its usr/include and usr/include/python3.14, and the test binary
# built against its libpython3.14 ran on the GPU host, whose glibc is new enough.)
# 1. fetches PACKAGE's source from SUITE (deb-src, removed right after), configures it and prints the offsets a
#    kLayouts row needs (offsetof() on the interpreter's own headers);
# 2. builds and installs it under build/PACKAGE (a few minutes on 2 cores);
# 3. builds test_cpu_sampler against that libpython (build/PACKAGE-sampler) and runs its embedded-interpreter
#    test, which samples a running script and checks file, function and line of its frames.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PKG=${1:?package, e.g. python3.13}
SUITE=${2:?suite, e.g. trixie}
WORK=$ROOT/build/$PKG-src
PREFIX=$ROOT/build/$PKG
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
JOBS=${JOBS:-$(nproc)}

source scripts/debian_source.sh
fetch_source "$PKG" "$SUITE" "$WORK"
if [ ! -e "$WORK/pyconfig.h" ]; then
  (cd "$WORK" && ./configure --prefix="$PREFIX" --enable-shared --without-ensurepip >/dev/null)
fi

# The offsets, in kLayouts' order.
cat >"$WORK/gt_layout.c" <<'C'
#define Py_BUILD_CORE 1
#include "Python.h"
#include "internal/pycore_frame.h"
#include "internal/pycore_runtime.h" /* 3.13: _Py_DebugOffsets */
#if PY_MINOR_VERSION >= 14
#include "internal/pycore_debug_offsets.h"
#include "internal/pycore_interpframe_structs.h"
#define GT_FIRST_SHIM FRAME_OWNED_BY_INTERPRETER /* 3.14: entry frames (3), then C-stack shims (4) */
#define GT_TAG_BITS 1                            /* f_executable: a _PyStackRef, Py_TAG_BITS */
#else
#define GT_FIRST_SHIM FRAME_OWNED_BY_CSTACK
#define GT_TAG_BITS 0
#endif
#include <stddef.h>
#include <stdio.h>
int main(void) {
  printf("{%d, %zu, kNoCFrame, %zu, %zu, %zu, %zu, %d, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %d}\n", PY_MINOR_VERSION,
         offsetof(PyThreadState, current_frame), offsetof(_PyInterpreterFrame, f_executable),
         offsetof(_PyInterpreterFrame, previous), offsetof(_PyInterpreterFrame, instr_ptr),
         offsetof(_PyInterpreterFrame, owner), (int)GT_FIRST_SHIM, offsetof(PyCodeObject, co_firstlineno),
         offsetof(PyCodeObject, co_filename), offsetof(PyCodeObject, co_qualname),
         offsetof(PyCodeObject, co_linetable), offsetof(PyCodeObject, co_code_adaptive), sizeof(PyASCIIObject),
         sizeof(PyCompactUnicodeObject), offsetof(PyCompactUnicodeObject, utf8), GT_TAG_BITS);
#if PY_MINOR_VERSION >= 13
#define D(f) offsetof(_Py_DebugOffsets, f)
  printf("{%d, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu}\n", PY_MINOR_VERSION,
         D(thread_state.current_frame), D(interpreter_frame.previous), D(interpreter_frame.executable),
         D(interpreter_frame.instr_ptr), D(interpreter_frame.owner), D(code_object.filename),
         D(code_object.qualname), D(code_object.linetable), D(code_object.firstlineno),
         D(code_object.co_code_adaptive), sizeof(_Py_DebugOffsets));
#endif
  return 0;
}
C
gcc -I"$WORK" -I"$WORK/Include" -I"$WORK/Include/internal" "$WORK/gt_layout.c" -o "$WORK/gt_layout"
echo "python_layout: $PKG's row for kLayouts, then (3.13+) for kDebugOffsetsAt (3.13's and 3.14's field names;"
echo "  other versions may need the program edited):"
"$WORK/gt_layout"

minor=$(sed -n 's/^#define PY_MINOR_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$WORK/Include/patchlevel.h")
if [ ! -e "$PREFIX/lib/libpython3.$minor.so" ]; then
  (cd "$WORK" && make -j"$JOBS" >/dev/null && make altinstall >/dev/null)
fi
# The embed lookup would find the system's libpython first: named outright.
export LD_LIBRARY_PATH="$PREFIX/lib"
cmake -S . -B "build/$PKG-sampler" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGT_BUILD_UI=OFF -DGT_BUILD_BENCH=OFF \
  -DGT_BUILD_KERNELS=OFF -DPython3_ROOT_DIR="$PREFIX" -DPython3_FIND_STRATEGY=LOCATION \
  -DPython3_EXECUTABLE="$PREFIX/bin/python3.$minor" -DPython3_LIBRARY="$PREFIX/lib/libpython3.$minor.so" \
  -DPython3_INCLUDE_DIR="$PREFIX/include/python3.$minor" >/dev/null
cmake --build "build/$PKG-sampler" -j "$JOBS" --target test_cpu_sampler
# Catch2 reads commas as "or": one argument, four patterns.
"build/$PKG-sampler/tests/collector/test_cpu_sampler" "*embedded interpreter*,*location tables*,*freed*,*debug offsets*"
