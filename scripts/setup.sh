#!/usr/bin/env bash
# Installs everything gtrace needs, from Debian's packages (binary and source) and the npm registry only.
# Idempotent: a second run on a machine that has everything finishes in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
THIRD=$ROOT/third_party   # git-ignored: sources fetched from Debian, npm modules
mkdir -p "$THIRD"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

PKGS=(build-essential cmake ninja-build clang lld libclang-rt-14-dev clang-format
      libzstd-dev zstd zlib1g-dev libisal-dev nlohmann-json3-dev catch2 libcpp-httplib-dev libssl-dev libsqlite3-dev
      emscripten libglfw3-dev libgl-dev chromium dpkg-dev file curl ca-certificates
      python3-dev python3-pybind11 python3-numpy python3-pandas python3-pytest python3-setuptools python3-pip
      python3-wheel python3-venv tcl)
missing=()
for p in "${PKGS[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian source packages: Dear ImGui (trixie's 1.90.1: fixed and reproducible) and zstd (for the wasm decoder).
source "$ROOT/scripts/debian_source.sh"  # fetch_source
fetch_source imgui trixie "$THIRD/imgui"
fetch_source libzstd bookworm "$THIRD/zstd"
fetch_source zlib bookworm "$THIRD/zlib"   # gzip import in the wasm viewer (no Emscripten ports here)
# SQLite for the wasm page (Nsight Systems .sqlite import, viewer/nsys): Debian's source package, whose
# amalgamation (sqlite3.c + sqlite3.h) its own build generates with tclsh. Natively gtrace links libsqlite3.
if [ ! -e "$THIRD/sqlite3/sqlite3.c" ]; then
  fetch_source sqlite3 bookworm "$THIRD/sqlite3-src"
  (cd "$THIRD/sqlite3-src" && mkdir -p bld && cd bld && ../configure --disable-tcl >/dev/null && make sqlite3.c >/dev/null)
  mkdir -p "$THIRD/sqlite3"
  cp "$THIRD/sqlite3-src/bld/sqlite3.c" "$THIRD/sqlite3-src/bld/sqlite3.h" "$THIRD/sqlite3/"
fi

# nlohmann headers alone, so em++ never sees /usr/include.
if [ ! -e "$THIRD/nlohmann-include/nlohmann/json.hpp" ]; then
  mkdir -p "$THIRD/nlohmann-include"; cp -r /usr/include/nlohmann "$THIRD/nlohmann-include/"
fi

# Catch2's single header alone, for the wasm unit tests (tests/wasm), for the same reason.
if [ ! -e "$THIRD/catch2-include/catch2/catch.hpp" ]; then
  mkdir -p "$THIRD/catch2-include/catch2"; cp /usr/include/catch2/catch.hpp "$THIRD/catch2-include/catch2/"
fi

# playwright-core from the npm registry (never its browser download: we use Debian's chromium).
if [ ! -d "$ROOT/web/tests/node_modules/playwright-core" ]; then
  (cd "$ROOT/web/tests" && npm install --no-audit --no-fund --silent)
fi
echo "setup: ok"
