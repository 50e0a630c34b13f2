#!/usr/bin/env bash
# From a fresh clone to an installed gtrace, on the GPU machine: installs the build tools (scripts/setup.sh),
# builds the collector, the CLI and the viewer page, then builds the Debian package gtrace_<version>_amd64.deb
# and installs it with apt (gcollect, gtrace, gtrace-counters, gtrace-ui in /usr/bin; docs/user-guide.md).
#   bash scripts/install.sh                 the package, installed system-wide (root or sudo)
#   bash scripts/install.sh --prefix DIR    `cmake --install` into DIR instead (no package; put DIR/bin on PATH)
#   bash scripts/install.sh --deb-only      build the package, print its path, install nothing
# Recording needs NVIDIA's driver and CUDA 13 toolkit (CUPTI) on the machine; the package does not bring them.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs  # emcc's JS optimizer needs Debian's node modules
JOBS=${JOBS:-$(nproc)}
PREFIX=""
DEB_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX=$2; shift ;;
    --deb-only) DEB_ONLY=1 ;;
    *) echo "install: unknown argument $1 (use --prefix DIR or --deb-only)" >&2; exit 2 ;;
  esac
  shift
done
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo

bash scripts/setup.sh

# The viewer page `gtrace serve` serves (share/gtrace/web in the install), as scripts/main.sh builds it.
echo "install: building the viewer page (build/wasm, build/wasm-mt -> build/wasm/web)"
cmake --preset wasm >/dev/null
cmake --build build/wasm -j "$JOBS" --target gtrace_web
cmake --preset wasm-mt >/dev/null
cmake --build build/wasm-mt -j "$JOBS" --target gtrace_web

echo "install: building gcollect, libgtrace_inject.so, gtrace, gtrace-counters, gtrace-ui (build/native)"
cmake --preset native >/dev/null
cmake --build build/native -j "$JOBS" --target gcollect gtrace_inject gtrace gtrace-counters gtrace-ui

if [ -n "$PREFIX" ]; then
  cmake --install build/native --prefix "$PREFIX"
  echo "install: installed into $PREFIX; add $PREFIX/bin to PATH"
  "$PREFIX/bin/gcollect" --version
  exit 0
fi

rm -f build/native/gtrace_*.deb
(cd build/native && cpack -G DEB >/dev/null)
DEB=$(ls "$PWD"/build/native/gtrace_*_amd64.deb)
echo "install: package $DEB"
if [ "$DEB_ONLY" = 1 ]; then exit 0; fi
# --reinstall: a rebuilt package of the same version replaces the installed one.
$SUDO apt-get install -y --reinstall "$DEB"
gcollect --version
echo "install: done. Record with: gcollect -o step.gtrace -- python train.py; view with: gtrace serve --open step.gtrace"
