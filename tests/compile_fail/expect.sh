# The two verdicts of every compile_fail script (sourced by run.sh, misuse.sh, deprecated.sh).
#
#   must_fail <name> <what> <text> <command...>   the command must fail and its output contain
#                                                 <text>; the output is left in $output
#   must_compile <name> <what> <command...>       the command must succeed; its output is left in
#                                                 $output
# Each reports "<name>: ..." and exits 1 on a wrong verdict.

must_fail() {
  local name=$1 what=$2 text=$3
  shift 3
  if output=$("$@" 2>&1); then
    echo "$name: $what compiled" >&2
    exit 1
  fi
  if ! grep -qF -- "$text" <<< "$output"; then
    printf '%s: the output lacks "%s":\n%s\n' "$name" "$text" "$output" >&2
    exit 1
  fi
}

must_compile() {
  local name=$1 what=$2
  shift 2
  if ! output=$("$@" 2>&1); then
    printf '%s: %s did not compile:\n%s\n' "$name" "$what" "$output" >&2
    exit 1
  fi
  echo "$name: $what compiles"
}
