#!/usr/bin/env bash
# One compile_fail test per rule: each broken spec of the rule (one compiler run per case, so each
# must fail on its own) must not compile, and the compiler's output must contain the rule's message
# exactly as message() gives it at run time, and no posenc message other than those of the rules
# the config breaks; then the valid twins of all the rule's cases must compile (one run).
#
#   run.sh <rule_message> <check_rule.cpp> <include dir> <encoding> <rule> <compiler command...>
set -uo pipefail
source "$(dirname "$0")/expect.sh"
helper=$1 source=$2 include=$3 encoding=$4 rule=$5
shift 5
name=compile_fail/$encoding/$rule
compile() {
  "$@" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I "$include" "-DPOSENC_ENCODING_$encoding" \
    "$source"
}

if ! cases=$("$helper" "$encoding" "$rule") || [ -z "$cases" ]; then
  echo "$name: no cases for this rule" >&2
  exit 1
fi

while IFS=$'\t' read -r number case messages <&3; do
  expected=$(tr '\t' '\n' <<< "$messages")
  first=$(head -n 1 <<< "$expected")
  must_fail "$name ($case)" "the broken spec" "$first" compile "$@" -DPOSENC_CASE="$number"
  # Every posenc message in a failed static assertion must be one of the expected ones.
  status=0
  while IFS= read -r message; do
    if ! grep -qxF -- "$message" <<< "$expected"; then
      printf '%s (%s): unexpected message "%s"\n' "$name" "$case" "$message" >&2
      status=1
    fi
  done < <(grep 'static assert' <<< "$output" | grep -o "posenc: [^\"']*$")
  [ "$status" -eq 0 ] || exit 1
  echo "$name ($case): rejected with \"$first\""
done 3<<< "$cases"

must_compile "$name" "the valid twins' file" compile "$@" -DPOSENC_VALID -DPOSENC_RULE="$rule"
