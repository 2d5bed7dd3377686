#!/usr/bin/env bash
# Every JSON file of the golden directory has its section in README.md (a heading "### `NAME`"),
# and every such section has its file: data of unknown provenance, or a description of data that
# is not there, fails.
#
# usage: readme_lists_files.sh GOLDEN_DIR
set -u

if [ $# -ne 1 ]; then
  echo "usage: $0 GOLDEN_DIR" >&2
  exit 2
fi
dir=$1
readme=$dir/README.md
if [ ! -f "$readme" ]; then
  echo "FAIL $readme is missing"
  exit 1
fi

files=$(cd "$dir" && ls -1 -- *.json 2>/dev/null | LC_ALL=C sort)
sections=$(sed -n 's/^### `\([^`]*\.json\)`.*$/\1/p' "$readme" | LC_ALL=C sort)
if [ -z "$files" ]; then
  echo "FAIL no JSON files in $dir"
  exit 1
fi

bad=0
while IFS= read -r f; do
  grep -qxF -- "$f" <<<"$sections" || { echo "FAIL $f has no section in $readme"; bad=1; }
done <<<"$files"
while IFS= read -r s; do
  [ -n "$s" ] || continue
  grep -qxF -- "$s" <<<"$files" || { echo "FAIL $readme describes $s, which is not in $dir"; bad=1; }
done <<<"$sections"
dups=$(uniq -d <<<"$sections")
if [ -n "$dups" ]; then
  echo "FAIL sections listed twice in $readme: $dups"
  bad=1
fi
[ "$bad" -eq 0 ] && echo "ok   $(wc -l <<<"$files") files, each with one section in README.md"
exit "$bad"
