#!/usr/bin/env bash
# Checks docs/cli.md against the tool so that the two cannot drift: for every command, the flags
# its "Flags of each command" line lists (groups expanded from the group lines above it, less a
# flag named as "without `--X`") are exactly the flags `posenc help CMD` lists, and every
# command of `posenc --help` has a line.
#
#   cli_docs.sh POSENC_BINARY CLI_MD
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 POSENC_BINARY CLI_MD" >&2
  exit 2
fi
posenc=$1
doc=$2

fail=0
problem() {
  echo "FAIL: $*" >&2
  fail=1
}

section=$(sed -n '/^### Flags of each command$/,/^## /p' "$doc")
[ -n "$section" ] || {
  echo "FAIL: $doc has no '### Flags of each command' section" >&2
  exit 1
}

# The flags of each group: the backquoted flags of its line "- *NAME*: ...".
declare -A groups
while IFS= read -r line; do
  name=$(sed -E 's/^- \*([a-z]+)\*: .*/\1/' <<< "$line")
  groups[$name]=$(grep -oE '`--[a-z0-9-]+`' <<< "$line" | tr -d '`')
done < <(grep -E '^- \*[a-z]+\*: ' <<< "$section")
group_flags() {
  echo "${groups[$1]:-}"
}

# The flags the document gives command CMD, sorted; "*group* without `--x`" leaves --x out.
doc_flags() {
  local line without
  line=$(grep -E "^- \`$1\`: " <<< "$section" || true)
  [ -n "$line" ] || return 0
  without=$(grep -oE 'without `--[a-z0-9-]+`' <<< "$line" | grep -oE -- '--[a-z0-9-]+' || true)
  {
    sed -E 's/without `--[a-z0-9-]+`//g' <<< "$line" | grep -oE '`--[a-z0-9-]+`' | tr -d '`' || true
    for g in $(grep -oE '\*[a-z]+\*' <<< "$line" | tr -d '*'); do
      [ -n "$(group_flags "$g")" ] || echo "unknown-group-$g"
      group_flags "$g"
    done
  } | { if [ -n "$without" ]; then grep -vxF -- "$without" || true; else cat; fi; } | sort
}

commands=$("$posenc" --help | sed -nE 's/^(usage:)? +posenc ([a-z]+) .*/\2/p' | grep -vx help | sort -u)
[ "$(wc -l <<< "$commands")" -ge 12 ] || problem "found only these commands in --help: $commands"
for c in $commands; do
  help=$("$posenc" help "$c" | grep -oE '^  --[a-z0-9-]+' | sed 's/^  //' | sort)
  docs=$(doc_flags "$c")
  [ -n "$docs" ] || {
    problem "$doc: no line '- \`$c\`: ...' under 'Flags of each command'"
    continue
  }
  [ -z "$(sort <<< "$docs" | uniq -d)" ] || problem "$doc lists twice for $c: $(uniq -d <<< "$docs")"
  only_help=$(comm -23 <(sort -u <<< "$help") <(sort -u <<< "$docs"))
  only_docs=$(comm -13 <(sort -u <<< "$help") <(sort -u <<< "$docs"))
  [ -z "$only_help" ] || problem "posenc help $c lists flags $doc does not: $(tr '\n' ' ' <<< "$only_help")"
  [ -z "$only_docs" ] || problem "$doc lists flags for $c that posenc help $c does not: $(tr '\n' ' ' <<< "$only_docs")"
done
# No line for a command the tool does not have.
for c in $(grep -oE '^- `[a-z]+`:' <<< "$section" | grep -oE '[a-z]+'); do
  grep -qx "$c" <<< "$commands" || problem "$doc has a line for '$c', which is not a command"
done

[ $fail -eq 0 ] || exit 1
echo "cli_docs: OK ($(wc -w <<< "$commands") commands)"
