#!/usr/bin/env bash
# Controls of missing_data_fails.sh, run on stand-in readers of hf_rope_params.json: a reader
# that fails and names the file is accepted; readers that pass without their data, skip (exit 77)
# or fail without naming the file are each rejected, for the stated reason.
#
# usage: missing_data_fails_controls.sh GOLDEN_DIR
set -u

if [ $# -ne 1 ]; then
  echo "usage: $0 GOLDEN_DIR" >&2
  exit 2
fi
check=$(dirname -- "${BASH_SOURCE[0]}")/missing_data_fails.sh
bad=0

# control NAME EXPECTED_STATUS EXPECTED_TEXT SCRIPT: runs the check on `bash -c SCRIPT _ DIR`.
control() {
  local out status
  out=$(bash "$check" "$1" hf_rope_params.json -- bash -c "$4" stand-in @GOLDEN_DIR@ 2>&1)
  status=$?
  if [ "$status" -ne "$2" ] || [[ $out != *"$3"* ]]; then
    echo "FAIL control '$5': status $status (expected $2), output:"
    printf '%s\n' "$out"
    bad=1
  else
    echo "ok   control '$5': status $status"
  fi
}

dir=$1
control "$dir" 0 "the output names the file" \
  'echo "cannot read $1/hf_rope_params.json"; exit 1' "fails, naming the file"
control "$dir" 1 "exit status 0, expected a failure" \
  'exit 0' "passes without its data"
control "$dir" 1 "exit status 77, expected a failure" \
  'echo "$1/hf_rope_params.json not found; skipped"; exit 77' "skips (77)"
control "$dir" 1 "but the output does not name" \
  'echo "some error"; exit 1' "fails without naming the file"
exit "$bad"
