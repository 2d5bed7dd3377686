#!/usr/bin/env python3
"""Negative controls of check_docs.py: run on the fixture tree tests/docs/fixtures, each check must
report exactly the lines that the fixture marks as broken, exit with status 1, and pass the ones
it marks as good; on an empty tree both checks must fail (nothing checked is not a pass).

The expected lines are found here without the checker's parser: a link line is expected when it
holds the word BROKEN; a code block is expected when its body holds "// BROKEN", and it is reported
at its opening fence (the nearest line above that starts with ```).

usage: selftest.py CHECK_DOCS_PY FIXTURES INCLUDE_DIR SCRATCH_DIR COMPILER_WORD...
"""

import os
import re
import subprocess
import sys

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def reported(output):
    """{(file, line)} of the checker's problem lines."""
    out = set()
    for line in output.splitlines():
        m = re.match(r"^(\S+\.md):(\d+): (.*)$", line)
        if m:
            out.add((m.group(1), int(m.group(2))))
    return out


def pages(root, code_only):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if code_only and os.path.relpath(dirpath, root) not in (".",) and \
                not os.path.relpath(dirpath, root).startswith("docs"):
            continue
        if os.path.exists(os.path.join(dirpath, "meson-info")):
            dirnames[:] = []
            continue
        for f in sorted(filenames):
            if f.endswith(".md") and (not code_only or dirpath != root or f == "README.md"):
                out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return out


def expected_links(root):
    out = set()
    for rel in pages(root, False):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if "BROKEN" in line and "// BROKEN" not in line:
                    out.add((rel, n))
    return out


def expected_code(root):
    out = set()
    for rel in pages(root, True):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        for n, line in enumerate(lines):
            if "// BROKEN" in line:
                k = n
                while not lines[k].startswith("```"):
                    k -= 1
                out.add((rel, k + 1))
    return out


def run(args):
    p = subprocess.run([sys.executable] + args, capture_output=True, text=True, timeout=900)
    print("$ check_docs.py " + " ".join(args[1:3]) + "\n" + p.stdout + p.stderr)
    return p


def compare(what, got, want, p, ok_lines):
    if p.returncode != 1:
        fail("%s: exit status %d, expected 1" % (what, p.returncode))
    for miss in sorted(want - got):
        fail("%s: %s:%d is broken but was not reported" % (what, miss[0], miss[1]))
    for extra in sorted(got - want):
        fail("%s: %s:%d was reported but is not broken" % (what, extra[0], extra[1]))
    for needle in ok_lines:
        if needle not in p.stdout:
            fail("%s: the output lacks '%s'" % (what, needle))
    if not want:
        fail("%s: the fixture marks nothing as broken" % what)


def main():
    checker, root, include, scratch = sys.argv[1:5]
    cxx = sys.argv[5:]
    p = run([checker, "links", root])
    compare("links", reported(p.stdout), expected_links(root), p,
            ["links: 23 checked in 4 files, 10 broken"])
    p = run([checker, "code", root, "--scratch", scratch, "--include", include] +
            ["--cxx=" + w for w in cxx])
    compare("code", reported(p.stdout), expected_code(root), p,
            ["ok README.md:34 (compiled)", "ok docs/good.md:9 (compiled)",
             "ok docs/good.md:16 (compiled)", "ok docs/good.md:20 (compiled, linked and run)",
             "exits with status 3", "undeclared_name", "posenc: rotary_dim must be even",
             "code: 10 blocks compiled, 1 excerpts skipped, 7 failed"])
    # A root with nothing to check (a wrong path) must fail too, not pass vacuously.
    empty = os.path.join(scratch, "empty")
    os.makedirs(empty, exist_ok=True)
    for command in (["links", empty], ["code", empty, "--scratch", scratch, "--cxx=" + cxx[0]]):
        p = run([checker] + command)
        if p.returncode != 1:
            fail("%s on an empty tree: exit status %d, expected 1" % (command[0], p.returncode))
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("selftest: every broken link and block of the fixture reported, nothing else")
    return 0


if __name__ == "__main__":
    sys.exit(main())
