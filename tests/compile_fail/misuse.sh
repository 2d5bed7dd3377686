#!/usr/bin/env bash
# One compile_fail test of the kernel API: the misuse must not compile, and the compiler's output
# must contain the expected text (for a deleted function, the comment on the line that declares
# it, which the compiler quotes); its corrected twin (-DPOSENC_VALID) must compile.
#
#   misuse.sh <misuse.cpp> <include dir> <case> <expected text> <compiler command...>
set -uo pipefail
source "$(dirname "$0")/expect.sh"
source=$1 include=$2 case=$3 expected=$4
shift 4
compile() {
  "$@" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I "$include" "-DPOSENC_MISUSE_$case" "$source"
}

must_fail "compile_fail/$case" "the misuse" "$expected" compile "$@"
# The misuse itself must be what failed, not something else in the file.
if grep -q "#error\|was not declared\|does not name a type\|undeclared identifier\|is not a member of\|no member named" <<< "$output"; then
  printf 'compile_fail/%s: failed for another reason:\n%s\n' "$case" "$output" >&2
  exit 1
fi
echo "compile_fail/$case: rejected with \"$expected\""

must_compile "compile_fail/$case" "the valid twin" compile "$@" -DPOSENC_VALID
