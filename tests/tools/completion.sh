#!/usr/bin/env bash
# Checks the bash completion script of posenc (tools/completion/posenc.bash) in a bash of its own:
#   - `complete -p posenc` names its function;
#   - the commands complete (every command of `posenc --help`'s usage lines, and help), and a
#     prefix completes to its command;
#   - for every command, `posenc CMD --<TAB>` offers exactly the flags `posenc help CMD` lists
#     (and --help): the script cannot drift from the tool's flag tables;
#   - the values of the flags with a fixed set of words are the words `posenc help CMD` shows,
#     --layout's with the aliases; a flag's free value (--head-dim N) offers nothing;
#   - --preset offers the presets `posenc --help` lists for that command.
#
#   completion.sh POSENC_BINARY COMPLETION_SCRIPT
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 POSENC_BINARY COMPLETION_SCRIPT" >&2
  exit 2
fi
posenc=$1
script=$2

fail=0
problem() {
  echo "FAIL: $*" >&2
  fail=1
}

# shellcheck source=/dev/null
source "$script"

# The completions of the words "$@" (the last one is the word under the cursor), sorted, one line.
complete_words() {
  COMP_WORDS=("$posenc" "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _posenc
  if [ ${#COMPREPLY[@]} -gt 0 ]; then printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '; fi
  echo
}

expect() {
  local want=$1
  shift
  local got
  got=$(complete_words "$@")
  [ "$got" = "$want" ] || problem "posenc $* <TAB>: expected '$want', got '$got'"
}

[ "$(complete -p posenc)" = "complete -F _posenc posenc" ] ||
  problem "complete -p posenc: $(complete -p posenc 2>&1)"

commands=$("$posenc" --help | sed -nE 's/^(usage:)? +posenc ([a-z]+) .*/\2/p' | grep -vx help | sort -u)
[ "$(wc -l <<< "$commands")" -ge 12 ] || problem "found only these commands in --help: $commands"
expect "accuracy alibi apply check decay dials emit entropy freqs help layers ramp sinusoidal t5-bias table " ""
expect "table " ta
expect "decay dials " d
expect "sinusoidal " help si
expect "--help --version " --

for c in $commands; do
  want=$({ "$posenc" help "$c" | grep -oE '^  --[a-z0-9-]+' | sed 's/^  //'; echo --help; } |
    sort | tr '\n' ' ')
  [ "$(wc -w <<< "$want")" -ge 4 ] || problem "posenc help $c lists only: $want"
  expect "$want" "$c" --
  expect "$want" "$c" --head-dim 8 --
done

# The words of each flag with a fixed set of values, as `posenc help CMD` labels them
# ("--scaling none|linear|...").
for pair in "freqs --scaling" "freqs --format" "apply --shape-order" "emit --lang" "emit --table" \
  "alibi --variant"; do
  read -r c f <<< "$pair"
  label=$("$posenc" help "$c" | sed -nE "s/^  $f ([^ ]+).*/\1/p")
  [ -n "$label" ] || problem "posenc help $c has no line for $f"
  expect "$(tr '|' '\n' <<< "$label" | sort | tr '\n' ' ')" "$c" "$f" ""
done
expect "gptj half interleaved neox norm rotate_half " freqs --layout ""
expect "paper split " sinusoidal --layout ""
expect "gptj half interleaved neox norm paper rotate_half split " --layout ""
expect "neox norm " table --layout n
expect "csv json text " table --format ""
expect "yarn " freqs --scaling y
expect "" freqs --head-dim ""
expect "--positions " table --bloom --po
# --preset: the names of `posenc --help`'s "Presets:" (1-D, every RoPE command) and "Model
# presets:" lines (layers; apply and entropy take both).
expect "llama-3.1-8b " freqs --preset llama-3.
expect "" freqs --preset llama-4
expect "llama-4-scout " layers --preset llama
expect "" layers --preset phi
expect "pixtral-12b " entropy --preset pix
expect "gemma-3-27b " apply --preset gemma-3-2
expect "phi-2 " apply --preset phi-2

[ $fail -eq 0 ] || exit 1
echo "completion: OK ($(wc -w <<< "$commands") commands)"
