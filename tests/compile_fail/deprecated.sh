#!/usr/bin/env bash
# The names replaced in commit 1bf87bd still work and say they are deprecated: deprecated.cpp,
# which uses each once on a line marked "// deprecated: <name>", must compile without warnings
# under -Wno-deprecated-declarations, and under -Wdeprecated-declarations must draw a deprecation
# warning on every marked line and on no other line. Clang 16 does not warn for deprecated alias
# templates, so with Clang the lines marked "(alias template)" are not required to warn.
#
#   deprecated.sh <deprecated.cpp> <include dir> <compiler id> <compiler command...>
set -uo pipefail
source "$(dirname "$0")/expect.sh"
source=$1 include=$2 compiler_id=$3
shift 3
name=compile_fail/deprecated_names
compile() { "$@" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I "$include" "$source"; }

must_compile "$name" "with -Wno-deprecated-declarations" compile "$@" -Wno-deprecated-declarations
must_compile "$name" "with -Wdeprecated-declarations" compile "$@" -Wdeprecated-declarations \
  -Wno-error=deprecated-declarations
file=$(basename "$source")
warned=$(grep -E "(^|/)$file:[0-9]+:[0-9]+: warning: .*\[-Wdeprecated-declarations\]" <<< "$output" |
  sed -E "s@^(.*/)?$file:([0-9]+):.*@\2@" | sort -un)
marked=$(grep -n '// deprecated:' "$source" | cut -d: -f1)

status=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  what=$(sed -n "${line}p" "$source" | sed 's@.*// deprecated: @@')
  if [ "$compiler_id" = clang ] && [[ $what == *"(alias template)"* ]]; then
    continue
  fi
  if ! grep -qx -- "$line" <<< "$warned"; then
    printf '%s: no deprecation warning for %s (line %s):\n%s\n' "$name" "$what" "$line" "$output" >&2
    status=1
  fi
done <<< "$marked"
while IFS= read -r line; do
  [ -n "$line" ] || continue
  if ! grep -qx -- "$line" <<< "$marked"; then
    printf '%s: a deprecation warning on unmarked line %s:\n%s\n' "$name" "$line" "$output" >&2
    status=1
  fi
done <<< "$warned"
[ "$status" -eq 0 ] || exit 1
echo "$name: $(wc -l <<< "$marked") old names, each warned about"
