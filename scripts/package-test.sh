#!/usr/bin/env bash
# The install rules and the Debian package end to end, from the native build that is already there (CI: after
# the native build and scripts/web-test.sh, which built the viewer page into build/wasm/web; nothing is built
# twice):
#   1. `cmake --install` into a temporary prefix: that gcollect uses the prefix's injection library, also after
#      the prefix is moved (never a build-tree path).
#   2. cpack -> gtrace_<version>_amd64.deb: its dependencies (Debian's, no NVIDIA library) and files.
#   3. apt-get install ./gtrace_*.deb, then the installed tools: gcollect --version, gcollect -- /bin/true (the
#      no-GPU warning and the app's exit status), gtrace info on a fixture, gtrace serve answering /api/health
#      and serving the installed page.
#   4. apt-get remove: every file of the package is gone.
# Needs root or sudo. Refuses to run where a gtrace package is already installed (it would replace and remove it).
#   scripts/package-test.sh
set -euo pipefail
# No `grep -q` after a pipe: it exits at the first match, and under pipefail the writer's SIGPIPE fails the
# check (CI failed "the description does not state the CUDA version" on a description that states it).
cd "$(dirname "$0")/.."
ROOT=$(pwd)
NATIVE=${GT_NATIVE_BUILD:-build/native}
JOBS=${JOBS:-2}
WEB=${GT_WEB_DIR:-build/wasm/web}
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
fail() { echo "package-test: FAIL: $*" >&2; exit 1; }
step() { echo "package-test: $*"; }

[ -f "$WEB/index.html" ] && [ -f "$WEB/gtrace.wasm" ] ||
  fail "no viewer page in $WEB (scripts/web-test.sh builds it; CI runs this script after it)"
if dpkg-query -W -f='${Status}' gtrace 2>/dev/null | grep "ok installed" >/dev/null; then
  fail "a gtrace package is installed here; this test would replace and remove it (apt-get remove gtrace first)"
fi
# A no-op after CI's full native build; what the install rules need, otherwise.
cmake --build "$NATIVE" -j "$JOBS" --target gcollect gtrace_inject gtrace gtrace-counters gtrace-ui >/dev/null

TMP=$(mktemp -d /tmp/gtrace-package-test.XXXXXX)
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

# --- 1. cmake --install into a prefix ----------------------------------------------------------------------------
step "cmake --install into a temporary prefix"
cmake --install "$NATIVE" --prefix "$TMP/prefix" >/dev/null
for f in bin/gcollect bin/gtrace bin/gtrace-counters lib/gtrace/libgtrace_inject.so share/gtrace/web/index.html \
         share/gtrace/web/gtrace.wasm lib/systemd/system/gtrace-serve.service; do
  [ -f "$TMP/prefix/$f" ] || fail "cmake --install did not install $f"
done
"$TMP/prefix/bin/gcollect" --version | grep -x "injection library: $TMP/prefix/lib/gtrace/libgtrace_inject.so" >/dev/null ||
  fail "installed gcollect does not use its prefix's injection library: $("$TMP/prefix/bin/gcollect" --version)"
mv "$TMP/prefix" "$TMP/moved"  # relocatable: the path is found from the binary, not compiled in
"$TMP/moved/bin/gcollect" --version | grep -x "injection library: $TMP/moved/lib/gtrace/libgtrace_inject.so" >/dev/null ||
  fail "a moved prefix's gcollect does not find its injection library"
# Only what the program can read at run time: DWARF keeps the compile directory (DW_AT_comp_dir), which names
# the build tree by design and is stripped from the package (CPACK_STRIP_FILES).
for f in bin/gcollect lib/gtrace/libgtrace_inject.so; do
  objcopy --strip-debug "$TMP/moved/$f" "$TMP/no-debug-info"
  strings "$TMP/no-debug-info" | grep "$ROOT/$NATIVE" >/dev/null && fail "the installed $f holds a build-tree path"
done
rm -f "$TMP/no-debug-info"

# --- 2. the package ----------------------------------------------------------------------------------------------
step "cpack"
(cd "$NATIVE" && cpack -G DEB -B "$TMP/deb" >/dev/null)
DEB=$(ls "$TMP"/deb/gtrace_*_amd64.deb 2>/dev/null | head -1)
[ -n "$DEB" ] || fail "cpack made no gtrace_<version>_amd64.deb"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
for d in libc6 libzstd1 libstdc++6 libcpp-httplib; do
  echo "$DEPENDS" | grep "$d" >/dev/null || fail "Depends lacks $d: $DEPENDS"
done
echo "$DEPENDS" | grep -i "cupti\|cuda\|nvidia" >/dev/null && fail "Depends names an NVIDIA library: $DEPENDS"
dpkg-deb -f "$DEB" Description | grep "Built with CUDA 13" >/dev/null || fail "the description does not state the CUDA version"
dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|' | grep -v '/$' | sort > "$TMP/files"
for f in /usr/bin/gcollect /usr/lib/gtrace/libgtrace_inject.so /usr/share/gtrace/web/index.html \
         /usr/lib/systemd/system/gtrace-serve.service; do
  grep -qx "$f" "$TMP/files" || fail "the package lacks $f"
done

# --- 3. installed -----------------------------------------------------------------------------------------------
step "apt-get install $(basename "$DEB")"
cp "$DEB" "$TMP/"  # apt's sandbox user must be able to read it
$SUDO apt-get install -y -qq "$TMP/$(basename "$DEB")" >/dev/null
dpkg-query -W -f='${Status}' gtrace | grep "ok installed" >/dev/null || fail "gtrace is not installed after apt-get install"
removed=0
remove_pkg() { [ "$removed" = 1 ] || { $SUDO apt-get remove -y -qq gtrace >/dev/null; removed=1; }; }
trap 'remove_pkg || true; cleanup' EXIT

GCOLLECT=$(command -v gcollect) || fail "gcollect is not on PATH"
[ "$GCOLLECT" = /usr/bin/gcollect ] || fail "gcollect on PATH is $GCOLLECT, not the package's"
/usr/bin/gcollect --version | grep "^gcollect [0-9]" >/dev/null || fail "gcollect --version"
/usr/bin/gcollect --version | grep -x "injection library: /usr/lib/gtrace/libgtrace_inject.so" >/dev/null ||
  fail "installed gcollect does not use /usr/lib/gtrace/libgtrace_inject.so: $(/usr/bin/gcollect --version)"

step "gcollect -- /bin/true"
set +e
(cd "$TMP" && /usr/bin/gcollect -o true.gtrace -- /bin/true) 2>"$TMP/gcollect.err"
rc=$?
set -e
[ "$rc" = 0 ] || fail "gcollect -- /bin/true exited $rc, not the app's 0: $(cat "$TMP/gcollect.err")"
[ -f "$TMP/true.gtrace" ] || fail "gcollect -- /bin/true wrote no trace"
if ldconfig -p | grep "libcuda\.so\.1 " >/dev/null; then  # a GPU machine: no warning about the driver
  grep -q "no NVIDIA driver" "$TMP/gcollect.err" && fail "a driver is installed, yet: $(cat "$TMP/gcollect.err")"
else
  grep -q "gcollect: warning: no NVIDIA driver on this machine (libcuda.so.1 cannot be loaded)" "$TMP/gcollect.err" ||
    fail "no clear no-GPU message: $(cat "$TMP/gcollect.err")"
  /usr/bin/gtrace info "$TMP/true.gtrace" | grep "gpu_unavailable" >/dev/null || fail "the trace does not record why it has no GPU activity"
fi
grep -qi "error\|cannot be preloaded" "$TMP/gcollect.err" && fail "gcollect -- /bin/true: $(cat "$TMP/gcollect.err")"

step "gtrace info tests/data/h200_torch_train.gtrace"
/usr/bin/gtrace info tests/data/h200_torch_train.gtrace >"$TMP/info.txt" || fail "gtrace info exited $?"
grep -q "H200" "$TMP/info.txt" || fail "gtrace info does not list the H200: $(head -20 "$TMP/info.txt")"

step "gtrace serve --open (installed page, default store of a fresh account)"
mkdir -p "$TMP/home"
env -u XDG_DATA_HOME -u GTRACE_STORE -u GTRACE_WEB_ROOT HOME="$TMP/home" /usr/bin/gtrace serve --bind 127.0.0.1 \
  --port 0 --open tests/data/h200_torch_train.gtrace >"$TMP/serve.log" 2>&1 &
SERVER_PID=$!
URL=""
for _ in $(seq 100); do
  URL=$(sed -n 's|^gtrace serve: listening on \(http://[^ ]*\).*|\1|p' "$TMP/serve.log")
  [ -n "$URL" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || fail "gtrace serve exited: $(cat "$TMP/serve.log")"
  sleep 0.1
done
[ -n "$URL" ] || fail "gtrace serve did not start: $(cat "$TMP/serve.log")"
for _ in $(seq 50); do grep -q "^open: " "$TMP/serve.log" && break; sleep 0.1; done
grep -q "^open: ${URL%/}/?trace=[a-z2-7]*$" "$TMP/serve.log" || fail "gtrace serve --open printed no link: $(cat "$TMP/serve.log")"
[ -d "$TMP/home/.local/share/gtrace/store/traces" ] || fail "the default store was not created"
grep -q "viewer page from /usr/share/gtrace/web" "$TMP/serve.log" || fail "gtrace serve does not use the installed page: $(cat "$TMP/serve.log")"
curl -fsS "${URL%/}/api/health" | grep '"ok":true' >/dev/null || fail "GET /api/health"
curl -fsS "${URL%/}/" -o "$TMP/index.html" || fail "GET /"
cmp -s "$TMP/index.html" /usr/share/gtrace/web/index.html || fail "GET / is not the installed index.html"
curl -fsS "${URL%/}/gtrace.wasm" -o /dev/null || fail "GET /gtrace.wasm"
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""

# --- 4. removed --------------------------------------------------------------------------------------------------
step "apt-get remove gtrace"
remove_pkg
dpkg-query -W -f='${Status}' gtrace 2>/dev/null | grep "ok installed" >/dev/null && fail "gtrace still installed"
left=$(while read -r f; do [ -e "$f" ] && echo "$f"; done <"$TMP/files" || true)
[ -z "$left" ] || fail "files left after apt-get remove: $left"
for d in /usr/lib/gtrace /usr/share/gtrace /usr/share/doc/gtrace; do
  [ -e "$d" ] && fail "$d left after apt-get remove"
done
command -v gcollect >/dev/null && fail "gcollect still on PATH: $(command -v gcollect)"
dpkg -L gtrace 2>/dev/null | grep "^/usr/" >/dev/null && fail "dpkg -L gtrace still lists files"
# CPack's postrm (an ldconfig call, for the library under /usr/lib) keeps a 'config-files' record until purge.
$SUDO apt-get purge -y -qq gtrace >/dev/null
step "ok"
