#!/usr/bin/env bash
# A golden test whose data is missing or damaged must fail and say which file it could not read:
# passing, or reporting "skipped" (exit 77, meson's convention), would let an interop comparison
# disappear unnoticed.
#
# usage: missing_data_fails.sh GOLDEN_DIR FILE[,FILE...] -- COMMAND [ARG...]
#
# For each FILE and each damage (the file deleted; the file replaced by text that is not JSON) the
# script copies GOLDEN_DIR to a scratch directory, damages the copy, and runs COMMAND there with
# POSENC_GOLDEN_DIR set to the copy and "@GOLDEN_DIR@" in any ARG replaced by the copy's path. It
# requires an exit status other than 0 and 77, and the damaged file's path in the copy in the
# output (so the failure is about that file, and the command did read the copy; white space is
# ignored there, since Catch2 wraps long messages, and the scratch path has none). Exit status:
# 0 when every run failed as required, 1 otherwise, 2 on bad usage.
set -u

if [ $# -lt 4 ] || [ "$3" != "--" ]; then
  echo "usage: $0 GOLDEN_DIR FILE[,FILE...] -- COMMAND [ARG...]" >&2
  exit 2
fi
golden=$1
IFS=, read -r -a names <<<"$2"
shift 3

scratch=$(mktemp -d "${TMPDIR:-/tmp}/posenc-golden.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT

bad=0
for name in "${names[@]}"; do
  if [ ! -f "$golden/$name" ]; then
    echo "FAIL $golden/$name does not exist: nothing to damage (is the check configured right?)"
    bad=1
    continue
  fi
  for damage in deleted not_json; do
    copy=$scratch/$damage-${name%.json}
    mkdir "$copy" && cp -- "$golden"/*.json "$copy"/ || exit 2
    case $damage in
      deleted) rm -- "$copy/$name" ;;
      not_json) printf '{"truncated": [0.5, ' >"$copy/$name" ;;
    esac
    args=()
    for a in "$@"; do args+=("${a//@GOLDEN_DIR@/$copy}"); done
    out=$(POSENC_GOLDEN_DIR=$copy "${args[@]}" 2>&1)
    status=$?
    if [ "$status" -eq 0 ] || [ "$status" -eq 77 ]; then
      echo "FAIL $name $damage: exit status $status, expected a failure; output:"
      printf '%s\n' "$out"
      bad=1
    elif [[ ${out//[[:space:]]/} != *"$copy/$name"* ]]; then
      echo "FAIL $name $damage: exit status $status, but the output does not name $copy/$name:"
      printf '%s\n' "$out"
      bad=1
    else
      echo "ok   $name $damage: exit status $status; the output names the file"
    fi
  done
done
exit "$bad"
