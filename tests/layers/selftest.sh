#!/usr/bin/env bash
# The negative control of check_includes.sh: on the fixture tree it must exit 1 and report exactly
# the lines marked BROKEN there (file and line), no more and no fewer.
#
#   selftest.sh <check_includes.sh> <fixture include dir>
set -uo pipefail
check=$1 fixture=${2%/}

output=$(bash "$check" "$fixture")
rc=$?
if [ "$rc" -ne 1 ]; then
  printf 'layers/selftest: the check exited %s on the fixtures, not 1:\n%s\n' "$rc" "$output" >&2
  exit 1
fi
reported=$(cut -d: -f1,2 <<< "$output" | sort -u)
expected=$(cd "$fixture" && grep -rn '// BROKEN:' . | cut -d: -f1,2 | sed 's@^\./@@' | sort -u)
if [ "$reported" != "$expected" ]; then
  printf 'layers/selftest: reported\n%s\n\nexpected (the BROKEN lines)\n%s\n\nfull output:\n%s\n' \
    "$reported" "$expected" "$output" >&2
  exit 1
fi
echo "layers/selftest: the $(wc -l <<< "$expected") broken includes of the fixtures are reported, and nothing else"
