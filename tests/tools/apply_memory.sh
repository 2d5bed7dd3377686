#!/usr/bin/env bash
# apply reads its input with a SAX parser and writes its output in pieces: memory is a small
# multiple of the input. Under a 100 MB address-space limit (ulimit -v), apply of 2^22 elements
# (an 8 MB file of one-digit numbers; x and y as float32 are 32 MB) must succeed; a tree of the
# document (about 26 times the input) or the whole output held as one string (50 MB) needs more.
#
#   apply_memory.sh POSENC_BINARY
set -euo pipefail
posenc=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=4194304
{
  printf '{"shape": [32768, 1, 128], "x": ['
  (set +o pipefail; yes 1 | head -n "$n" | paste -sd, | tr -d '\n')  # yes ends by SIGPIPE
  printf ']}'
} > "$dir/in.json"
for form in json csv; do
  if ! (ulimit -v 100000 && "$posenc" apply --input "$dir/in.json" --format "$form" > "$dir/out"); then
    echo "FAIL: apply of $n elements --format $form under ulimit -v 100000" >&2
    exit 1
  fi
done
# the CSV has the echo's "# " lines, a header and one row per token (32768 tokens x 1 head),
# 128 values each
rows=$(grep -vc '^#' "$dir/out")
[ "$rows" -eq 32769 ] || { echo "FAIL: $rows CSV lines, expected 32769" >&2; exit 1; }
echo "apply of $n elements: json and csv under ulimit -v 100000"
