#!/usr/bin/env bash
# One compile_fail test: the broken spec of a rule must not compile, and the compiler's output must
# contain the rule's message exactly as posenc::message() gives it at run time (and no posenc
# message other than the rules the config breaks); its valid twin must compile.
#
#   run.sh <rule_message> <check_rule.cpp> <include dir> <rule> <compiler command...>
set -uo pipefail
source "$(dirname "$0")/expect.sh"
helper=$1 source=$2 include=$3 rule=$4
shift 4
compile() { "$@" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I "$include" -DPOSENC_RULE="$rule" "$source"; }

if ! expected=$("$helper" "$rule"); then
  echo "compile_fail/$rule: no messages for this rule" >&2
  exit 1
fi
first=$(printf '%s\n' "$expected" | head -n 1)

must_fail "compile_fail/$rule" "the broken spec" "$first" compile "$@"
# Every posenc message in a failed static assertion must be one of the expected ones.
status=0
while IFS= read -r message; do
  if ! grep -qxF -- "$message" <<< "$expected"; then
    printf 'compile_fail/%s: unexpected message "%s"\n' "$rule" "$message" >&2
    status=1
  fi
done < <(grep 'static assert' <<< "$output" | grep -o "posenc: [^\"']*$")
[ "$status" -eq 0 ] || exit 1
echo "compile_fail/$rule: rejected with \"$first\""

must_compile "compile_fail/$rule" "the valid twin" compile "$@" -DPOSENC_VALID
