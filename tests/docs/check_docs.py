#!/usr/bin/env python3
"""Checks of the documentation: links resolve, and C++ examples compile.

usage:
  check_docs.py links ROOT [--exclude DIR]...
  check_docs.py code ROOT --scratch DIR --cxx=WORD... [--include DIR] [--flag=FLAG]...
                [--link=ARG]... [--timeout SECONDS]

links: every *.md file under ROOT (hidden directories, meson build directories, the directories
git ignores when ROOT is in a git work tree (scratch copies such as scripts/mutate's) and the
--exclude directories left out) is scanned outside code, and every relative link must resolve:
  - markdown links and images [text](target), [text](target "title"), reference definitions
    [id]: target, and HTML <a href> / <img src>;
  - target resolved against the file's directory (a leading "/" against ROOT) must stay inside
    ROOT, must not lie in a left-out directory, and must exist (file or directory);
  - "#anchor" (alone or after a .md target) must be the slug of a heading of that file, computed as
    GitHub does: the heading's text lowercased, every character that is not a letter, digit,
    underscore, space or hyphen dropped, spaces turned into hyphens; a repeated slug gets -1, -2...
  - http:, https: and mailto: targets are not followed; any other scheme is reported.

code: every fenced block whose info string starts with cpp or c++ in ROOT/README.md and
ROOT/docs/**/*.md is compiled as written:
  - with "excerpt" after the language (```cpp excerpt) the block is an illustration and is skipped;
  - with "continued" (```cpp continued) it is compiled after all earlier compiled blocks of the
    same page, as one translation unit (for a page that builds an example step by step);
  - a block that defines main() is compiled, linked and run and must exit with status 0; any other
    block is compiled with -fsyntax-only.
The command is the --cxx words, then -std=c++20 -I ROOT/include (or --include), -Wall -Wextra
-Werror (less the warnings about unused names), then the --flag arguments (and the --link
arguments when linking). The compiler's messages name the page and its line (#line).

Each problem is one line "FILE:LINE: what" (compiler output follows, indented); the last line
counts them. The exit status is 1 when there is a problem, and also when nothing was found to
check (a wrong ROOT must not pass).
"""

import argparse
import os
import re
import subprocess
import sys
import unicodedata
import urllib.parse

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# [text](target) or ![alt](target), the target optionally in <>, optionally with a title; one
# level of brackets in the text and of parentheses in the target.
INLINE_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"
                         r"\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
                         r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REF_DEF = re.compile(r"^[ ]{0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)")
HTML_ATTR = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*(\"[^\"]*\"|'[^']*')", re.I)
ATX_HEADING = re.compile(r"^[ ]{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
NOT_FOLLOWED = ("http:", "https:", "mailto:")
# A page's example names values it does not use afterwards; everything else warns as in the build.
WARNINGS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-variable", "-Wno-unused-but-set-variable",
            "-Wno-unused-const-variable", "-Wno-unused-parameter"]


def is_build_dir(path):
    return any(os.path.exists(os.path.join(path, marker))
               for marker in ("meson-private", "meson-info", "build.ninja", "CMakeCache.txt"))


class Tree:
    """The markdown files of ROOT, and which directories are left out."""

    def __init__(self, root, excludes):
        self.root = os.path.realpath(root)
        self.excluded = {os.path.realpath(os.path.join(self.root, e)) for e in excludes}
        self.excluded |= self.git_ignored_dirs()

    def git_ignored_dirs(self):
        """The directories git ignores under ROOT (none outside a git work tree)."""
        try:
            r = subprocess.run(["git", "-C", self.root, "ls-files", "--others", "--ignored",
                                "--exclude-standard", "--directory"],
                               capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            return set()
        if r.returncode != 0:
            return set()
        return {os.path.realpath(os.path.join(self.root, line.rstrip("/")))
                for line in r.stdout.split("\n") if line.endswith("/")}

    def left_out(self, directory):
        d = os.path.realpath(directory)
        if d in self.excluded:
            return True
        if d != self.root and os.path.basename(d).startswith("."):
            return True
        return is_build_dir(d)

    def inside(self, path):
        """Whether path lies in ROOT and in no left-out directory."""
        p = os.path.realpath(path)
        if p != self.root and not p.startswith(self.root + os.sep):
            return False
        d = p if os.path.isdir(p) else os.path.dirname(p)
        while True:
            if self.left_out(d) and d != self.root:
                return False
            if d == self.root:
                return True
            d = os.path.dirname(d)

    def markdown_files(self):
        out = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(n for n in dirnames
                                 if not self.left_out(os.path.join(dirpath, n)))
            out += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".md")]
        return out

    def rel(self, path):
        return os.path.relpath(path, self.root)


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")


def fenced_blocks(lines):
    """(first line number, info string, body lines) of each fenced code block; and the set of
    line indexes that are inside fences (fence lines included)."""
    blocks, fenced = [], set()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m.group("fence")[0] == "`" and "`" in m.group("info")):
            i += 1
            continue
        indent, fence, info = len(m.group("indent")), m.group("fence"), m.group("info").strip()
        start = i
        body = []
        i += 1
        while i < len(lines):
            close = re.match(r"^[ \t]*(`{3,}|~{3,})[ \t]*$", lines[i])
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                break
            line = lines[i]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            i += 1
        fenced.update(range(start, min(i, len(lines) - 1) + 1))
        blocks.append((start + 1, info, body))
        i += 1
    return blocks, fenced


def strip_code_spans(text):
    """Replaces inline code spans by a neutral word, so that nothing inside them counts. A span
    opens with a run of backticks and closes at the next run of the same length."""
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    out, pos, k = [], 0, 0
    while k < len(runs):
        start, end = runs[k]
        close = next((j for j in range(k + 1, len(runs))
                      if runs[j][1] - runs[j][0] == end - start), None)
        if close is None:  # literal backticks
            k += 1
            continue
        out += [text[pos:start], "code"]
        pos = runs[close][1]
        k = close + 1
    out.append(text[pos:])
    return "".join(out)


def heading_text(raw):
    """The text GitHub renders for a heading's markdown source."""
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)  # links and images: their text
    t = re.sub(r"`+([^`]*)`+", r"\1", t)                # code spans: their content
    t = re.sub(r"<[^>]+>", "", t)                        # HTML tags
    t = re.sub(r"(\*+|~~)", "", t)                       # emphasis markers
    t = re.sub(r"(?<![^\W_])_+|_+(?![^\W_])", "", t)     # _emphasis_ (not snake_case)
    return t.strip()


def slug_base(text):
    s = text.lower()
    s = "".join(c for c in s
                if c.isalnum() or c in "_- " or unicodedata.category(c).startswith("M"))
    return s.replace(" ", "-")


def heading_slugs(lines):
    _, fenced = fenced_blocks(lines)
    slugs, seen = set(), {}
    for i, line in enumerate(lines):
        if i in fenced:
            continue
        m = ATX_HEADING.match(line)
        if not m:
            continue
        base = slug_base(heading_text(m.group(2) or ""))
        n = seen.get(base, 0)
        seen[base] = n + 1
        slugs.add(base if n == 0 else "%s-%d" % (base, n))
    return slugs


def links_of(lines):
    """(line number, target) of every link outside code."""
    _, fenced = fenced_blocks(lines)
    out = []
    for i, line in enumerate(lines):
        if i in fenced:
            continue
        text = strip_code_spans(line)
        m = REF_DEF.match(text)
        if m:
            out.append((i + 1, m.group(2)))
            continue
        for m in INLINE_LINK.finditer(text):
            out.append((i + 1, m.group(3)))
        for m in HTML_ATTR.finditer(text):
            out.append((i + 1, m.group(1)[1:-1]))
    return out


def check_link(tree, source, target, slug_cache):
    """None if target resolves, else why not."""
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    if target == "":
        return "empty link target"
    if SCHEME.match(target):
        if target.lower().startswith(NOT_FOLLOWED):
            return None
        return "not a relative link"
    path_part, _, anchor = target.partition("#")
    path_part = urllib.parse.unquote(path_part.partition("?")[0])
    anchor = urllib.parse.unquote(anchor)
    if path_part == "":
        resolved = source
    elif path_part.startswith("/"):
        resolved = os.path.join(tree.root, path_part.lstrip("/"))
    else:
        resolved = os.path.join(os.path.dirname(source), path_part)
    resolved = os.path.normpath(resolved)
    if not tree.inside(resolved):
        where = os.path.relpath(resolved, tree.root)
        if where.startswith(os.pardir):
            return "points outside the repository (%s)" % where
        return "points into a build, hidden or left-out directory (%s)" % where
    if not os.path.exists(resolved):
        return "no such file or directory"
    if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
        if resolved not in slug_cache:
            slug_cache[resolved] = heading_slugs(read_lines(resolved))
        if anchor not in slug_cache[resolved]:
            return "no heading with the anchor #%s in %s" % (anchor, tree.rel(resolved))
    return None


def run_links(args):
    tree = Tree(args.root, args.exclude)
    files = tree.markdown_files()
    problems, checked, slug_cache = 0, 0, {}
    for path in files:
        for line, target in links_of(read_lines(path)):
            checked += 1
            why = check_link(tree, os.path.realpath(path), target, slug_cache)
            if why:
                problems += 1
                print("%s:%d: broken link '%s': %s" % (tree.rel(path), line, target, why))
    print("links: %d checked in %d files, %d broken" % (checked, len(files), problems))
    if checked == 0:  # a wrong root, not a tree without links
        print("no link found under %s" % tree.root)
        return 1
    return 1 if problems else 0


def code_files(root):
    out = []
    readme = os.path.join(root, "README.md")
    if os.path.isfile(readme):
        out.append(readme)
    docs = os.path.join(root, "docs")
    for dirpath, dirnames, filenames in os.walk(docs):
        dirnames.sort()
        out += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".md")]
    return out


def has_main(source):
    return re.search(r"\bint\s+main\s*\(", source) is not None


def indent(text):
    return "".join("    " + line + "\n" for line in text.rstrip("\n").split("\n"))


def run_bounded(cmd, timeout):
    """cmd's result; one that runs past the timeout counts as a failure with status 124."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", "timed out after %d s\n" % timeout)


def run_code(args):
    root = os.path.realpath(args.root)
    os.makedirs(args.scratch, exist_ok=True)
    include = args.include or os.path.join(root, "include")
    base = list(args.cxx) + ["-std=c++20", "-I", include] + WARNINGS
    base += args.flag
    problems, compiled, skipped = 0, 0, 0
    for path in code_files(root):
        rel = os.path.relpath(path, root)
        blocks, _ = fenced_blocks(read_lines(path))
        earlier = ""  # the page's compiled blocks so far
        for line, info, body in blocks:
            words = info.split()
            if not words or words[0].lower() not in ("cpp", "c++"):
                continue
            if "excerpt" in words[1:]:
                skipped += 1
                continue
            # #line: the compiler's messages name the page and its line (and quote that line).
            source = '#line %d "%s"\n' % (line + 1, path) + "\n".join(body) + "\n"
            block = source
            if "continued" in words[1:]:
                if not earlier:
                    problems += 1
                    print("%s:%d: a 'continued' block follows no compiled block" % (rel, line))
                    continue
                source = earlier + source
            earlier += block
            compiled += 1
            stem = re.sub(r"[^A-Za-z0-9]+", "_", rel) + "_%d" % line
            src = os.path.join(args.scratch, stem + ".cpp")
            with open(src, "w", encoding="utf-8") as f:
                f.write(source)
            if has_main(source):
                exe = os.path.join(args.scratch, stem)
                cmd = base + [src, "-o", exe] + args.link
            else:
                exe = None
                cmd = base + ["-fsyntax-only", src]
            p = run_bounded(cmd, args.timeout)
            if p.returncode != 0:
                problems += 1
                print("%s:%d: cpp block does not compile (%s):" % (rel, line, src))
                print(indent(p.stdout + p.stderr))
                continue
            if exe is not None:
                r = run_bounded([exe], args.timeout)
                if r.returncode != 0:
                    problems += 1
                    print("%s:%d: cpp block's program exits with status %d:" %
                          (rel, line, r.returncode))
                    print(indent(r.stdout + r.stderr))
                    continue
            print("ok %s:%d (%s)" % (rel, line, "compiled, linked and run" if exe else "compiled"))
    print("code: %d blocks compiled, %d excerpts skipped, %d failed" % (compiled, skipped, problems))
    if compiled == 0:  # a wrong root, not pages without examples
        print("no C++ block found in %s/README.md or %s/docs" % (root, root))
        return 1
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    links = sub.add_parser("links")
    links.add_argument("root")
    links.add_argument("--exclude", action="append", default=[])
    code = sub.add_parser("code")
    code.add_argument("root")
    code.add_argument("--scratch", required=True)
    code.add_argument("--include", help="posenc's include directory (default: ROOT/include)")
    code.add_argument("--cxx", action="append", required=True)
    code.add_argument("--flag", action="append", default=[])
    code.add_argument("--link", action="append", default=[])
    code.add_argument("--timeout", type=int, default=600)
    args = parser.parse_args()
    return run_links(args) if args.command == "links" else run_code(args)


if __name__ == "__main__":
    sys.exit(main())
