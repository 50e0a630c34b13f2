#!/usr/bin/env python3
"""Enforces the module dependency table of docs/architecture.md on every #include.

Each source file belongs to the module of its folder (longest prefix in MODULES). A quoted include is resolved
to the repository file it names (same folder first, then the one file whose path ends with it, nearest folder on
ties) and must belong to a module the includer may use; an include that names no repository file (a library or
system header) must not match the includer's forbidden patterns. Perfetto's include checker is the model: the
table lives here, in one place, and CI fails on the first new arrow that points the wrong way.

  python3 scripts/check_includes.py            # check the tree, exit 1 on a violation
  python3 scripts/check_includes.py --self-test  # prove the checker catches a planted violation
"""
import os
import re
import sys
import tempfile

# module -> the modules whose headers it may include (itself implied).
MODULES = {
    "common": [],
    "collector/config": ["common"],
    "collector/decode": ["common"],
    "collector/cupti": ["common"],
    "collector/counters": ["common", "collector/decode", "collector/cupti"],
    "collector/inject": ["common", "collector/config", "collector/decode", "collector/cupti", "collector/counters",
                         "collector/osrt"],
    "collector/osrt": [],  # preloaded into every process gcollect starts: libc only
    "collector/launcher": ["common", "collector/config", "collector/counters", "collector/osrt"],
    "collector/tools": ["common"],
    "viewer/core": ["common"],
    "viewer/nsys": ["common", "viewer/core"],
    "viewer/ui": ["common", "viewer/core", "viewer/platform", "viewer/nsys"],
    "viewer/platform": ["viewer/ui"],
    "viewer/cli": ["common", "viewer/core", "viewer/nsys", "web/server"],
    "web/server": ["common"],
    "python": ["common", "viewer/core", "viewer/nsys"],
    "kernels": [],
}

# Library and system headers a module must never include (regexes on the include's text).
GPU = r"(cupti|cuda|nvToolsExt|nvtx3|nvml|nvperf|generated_nvtx)"
UI = r"(imgui|GLFW|GL/|GLES|emscripten)"
FORBIDDEN = {
    "common": [GPU, UI, r"nlohmann", r"httplib", r"openssl", r"zlib", r"sqlite"],
    "collector/config": [UI, r"nlohmann", r"httplib", r"openssl"],
    "collector/decode": [UI, r"nlohmann", r"httplib", r"openssl"],
    "collector/cupti": [UI, r"nlohmann", r"httplib", r"openssl"],
    "collector/counters": [UI, r"nlohmann", r"httplib", r"openssl"],
    "collector/inject": [UI, r"nlohmann", r"httplib", r"openssl"],
    "collector/osrt": [GPU, UI, r"^gt/", r"nlohmann", r"httplib", r"openssl", r"^(string|vector|map|memory|atomic)$"],
    "collector/launcher": [UI, r"nlohmann", r"httplib", r"openssl"],
    "collector/tools": [GPU, UI, r"nlohmann", r"httplib"],
    "viewer/core": [GPU, UI, r"httplib", r"openssl", r"sqlite"],
    "viewer/nsys": [GPU, UI, r"httplib", r"openssl", r"nlohmann"],
    "viewer/ui": [GPU, r"httplib", r"openssl", r"sqlite"],
    "viewer/platform": [GPU, r"httplib", r"nlohmann", r"sqlite"],
    "viewer/cli": [GPU, UI],
    "web/server": [GPU, UI],
    "python": [GPU, UI, r"httplib", r"openssl"],
    "kernels": [r"^gt/"],
}

SOURCE_EXT = (".h", ".hpp", ".c", ".cc", ".cpp", ".cu", ".cuh", ".inc")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)


def module_of(path):
    best = None
    for m in MODULES:
        if path == m or path.startswith(m + "/"):
            if best is None or len(m) > len(best):
                best = m
    return best


def list_files(root):
    out = []
    for top in sorted(set(m.split("/")[0] for m in MODULES)):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d not in ("node_modules", "third_party") and not d.startswith("build")]
            for f in filenames:
                if f.endswith(SOURCE_EXT):
                    out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return out


def resolve(includer, text, files, by_suffix):
    local = os.path.normpath(os.path.join(os.path.dirname(includer), text))
    if local in files:
        return local
    cands = by_suffix.get(text.split("/")[-1], [])
    cands = [c for c in cands if c == text or c.endswith("/" + text)]
    if not cands:
        return None
    # Nearest folder wins: a module's own header shadows a same-named one elsewhere.
    return max(cands, key=lambda c: len(os.path.commonpath([c, includer])))


def check(root):
    files = set(list_files(root))
    by_suffix = {}
    for f in files:
        by_suffix.setdefault(os.path.basename(f), []).append(f)
    problems = []
    for f in sorted(files):
        mod = module_of(f)
        if mod is None:
            continue
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for m in INCLUDE_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            inc = m.group(2)
            target = resolve(f, inc, files, by_suffix) if m.group(1) == '"' else None
            if target:
                tmod = module_of(target)
                if tmod and tmod != mod and tmod not in MODULES[mod]:
                    problems.append(f"{f}:{line}: {mod} may not include {tmod} ({inc})")
                continue
            for pat in FORBIDDEN.get(mod, []):
                if re.search(pat, inc):
                    problems.append(f"{f}:{line}: {mod} may not include <{inc}>")
                    break
    return len(files), problems


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def put(path, body):
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as fh:
                fh.write(body)
        put("common/include/gt/model.h", "#include <vector>\n")
        put("viewer/core/src/q.cc", '#include "gt/model.h"\n')
        put("viewer/ui/app.h", '#include "imgui.h"\n')
        _, ok = check(root)
        assert not ok, ok
        put("viewer/core/src/bad.cc", '#include "ui/app.h"\n#include <imgui.h>\n')
        put("common/src/bad.cc", '#include <cupti.h>\n')
        put("collector/launcher/bad.cc", '#include "inject/x.h"\n')
        put("collector/inject/x.h", "\n")
        _, bad = check(root)
        assert len(bad) == 4, bad
        assert any("viewer/core may not include viewer/ui" in p for p in bad), bad
        assert any("collector/launcher may not include collector/inject" in p for p in bad), bad
    print("check_includes self-test: ok (4 planted violations found, clean tree passes)")
    return 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    n, problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_includes: {len(problems)} include(s) break docs/architecture.md's dependency table")
        return 1
    print(f"check_includes: {n} files follow the dependency table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
