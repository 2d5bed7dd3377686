#!/usr/bin/env bash
# decay streams: its memory does not grow with --max-distance. Under a 100 MB address-space limit
# (ulimit -v), decay over 4M distances (2 pairs) must succeed in every output form, --svg
# included; keeping the 4M + 1 values (8 bytes each, several times over, as the plot's series
# did) would need more than 100 MB. The plot keeps a few points per pixel column.
#
#   decay_memory.sh POSENC_BINARY
set -euo pipefail
posenc=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ulimit -v 100000
n=4194304
for form in "" "--csv" "--format json" "--svg $dir/plot.svg"; do
  # shellcheck disable=SC2086
  if ! lines=$("$posenc" decay --head-dim 4 --max-distance "$n" $form | wc -l); then
    echo "FAIL: decay --max-distance $n $form under ulimit -v 100000" >&2
    exit 1
  fi
  echo "decay $form: $lines lines"
done
# the CSV has the echo's "# " lines, a header and one row per distance 0..N
rows=$("$posenc" decay --head-dim 4 --max-distance "$n" --csv | grep -vc '^#')
[ "$rows" -eq $((n + 2)) ] || { echo "FAIL: $rows CSV lines, expected $((n + 2))" >&2; exit 1; }
