#!/usr/bin/env bash
# One compile_fail test of a table or preset case (table_cases.cpp, preset_cases.cpp): the case
# (-DPOSENC_CASE_<case>) must not compile, and the compiler's output must contain the expected
# text. The text rule:<encoding>/<rule> stands for that rule's message as message() gives it at run
# time (from rule_message), which must then be the only posenc message of a failed static
# assertion. The case valid_twins compiles every case's valid twin at once (-DPOSENC_VALID), which
# must succeed.
#
#   case.sh <rule_message> <source> <include dir> <case> <expected text> <compiler command...>
set -uo pipefail
source "$(dirname "$0")/expect.sh"
helper=$1 source=$2 include=$3 case=$4 expected=$5
shift 5
group=$(basename "$source" .cpp)
name=compile_fail/${group%_cases}s/$case
compile() { "$@" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I "$include" "$source"; }

if [ "$case" = valid_twins ]; then
  must_compile "$name" "the valid twins' file" compile "$@" -DPOSENC_VALID
  exit 0
fi

only=
if [[ $expected == rule:* ]]; then
  rule=${expected#rule:}
  if ! only=$("$helper" "${rule%%/*}" "${rule#*/}" | head -n 1 | cut -f 3) || [ -z "$only" ]; then
    echo "$name: no message for $expected" >&2
    exit 1
  fi
  expected=$only
fi

must_fail "$name" "the case" "$expected" compile "$@" "-DPOSENC_CASE_$case"
if [ -n "$only" ]; then
  status=0
  while IFS= read -r message; do
    if [ "$message" != "$only" ]; then
      printf '%s: unexpected message "%s"\n' "$name" "$message" >&2
      status=1
    fi
  done < <(grep 'static assert' <<< "$output" | grep -o "posenc: [^\"']*$")
  [ "$status" -eq 0 ] || exit 1
fi
echo "$name: rejected with \"$expected\""
