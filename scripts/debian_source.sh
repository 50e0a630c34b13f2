# fetch_source NAME SUITE DEST: the upstream sources of Debian's source package NAME in SUITE, unpacked into DEST
# (once: DEST/.fetched). The suite's deb-src entry exists only while it runs. Sourced by setup.sh and
# python_layout.sh; uses $SUDO when set.
fetch_source() {
  local name=$1 suite=$2 dest=$3
  [ -e "$dest/.fetched" ] && return 0
  local list=/etc/apt/sources.list.d/gtrace-src-$suite.sources
  local work; work=$(mktemp -d)
  $SUDO tee "$list" >/dev/null <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  # Only *source* is fetched from the extra suite; the entry is removed right after.
  trap '$SUDO rm -f "$list"' RETURN
  $SUDO apt-get update -qq -o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0
  (cd "$work" && apt-get source -qq --download-only -o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- "$name/$suite" >/dev/null)
  local orig; orig=$(ls "$work"/*.orig.tar.* | head -1)
  rm -rf "$dest"; mkdir -p "$dest"
  tar -xf "$orig" -C "$dest" --strip-components=1
  touch "$dest/.fetched"
  rm -rf "$work"
  $SUDO rm -f "$list"
  $SUDO apt-get update -qq >/dev/null 2>&1 || true
}
