#!/usr/bin/env bash
# Checks the manual page of the posenc tool against the tool itself:
#   - every command and flag the parser knows (its tables, tools/cli/commands.cpp and flags.cpp,
#     as written one a line by tests/tools/parser_words.cpp) and every
#     command and flag `posenc --help` prints has an entry in the man page (a .B/.BI/.BR label
#     line; commands in the COMMANDS section);
#   - every flag the man page labels exists in the parser (no stale entries);
#   - the .TH line names the version `posenc --version` prints;
#   - groff renders it without warnings (when groff is installed).
#
#   manpage.sh POSENC_BINARY PARSER_WORDS MAN_PAGE
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 POSENC_BINARY PARSER_WORDS MAN_PAGE" >&2
  exit 2
fi
posenc=$1
parser_words_file=$2
man=$3

fail=0
problem() {
  echo "FAIL: $*" >&2
  fail=1
}

help=$("$posenc" --help)
version_line=$("$posenc" --version)

# Names from the parser: one command or flag a line.
parser_words=$(grep -vE '^\s*$' "$parser_words_file" | sort -u)
parser_flags=$(grep -E '^-' <<< "$parser_words" || true)
parser_commands=$(grep -vE '^-' <<< "$parser_words" || true)
[ "$(wc -l <<< "$parser_flags")" -ge 30 ] || problem "found only these flags in $parser_words_file: $parser_flags"
[ "$(wc -l <<< "$parser_commands")" -ge 10 ] ||
  problem "found only these commands in $parser_words_file: $parser_commands"

# Names from --help: the commands of the usage lines, every --flag anywhere.
help_commands=$(sed -nE 's/^(usage:)? *posenc ([a-z][a-z0-9-]*).*/\2/p' <<< "$help" | sort -u)
help_flags=$(grep -oE -- '--[a-z][a-z0-9-]*' <<< "$help" | sort -u)

# The man page with roff escapes undone: \- is -, font changes and quotes removed.
text=$(sed -E -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f\(..//g' -e 's/"//g' "$man")
labels=$(grep -E '^\.(B|BI|BR|IB) ' <<< "$text")
commands_section=$(sed -n '/^\.SH COMMANDS/,/^\.SH /p' <<< "$text")

for c in $(sort -u <<< "$parser_commands"$'\n'"$help_commands"); do
  grep -qxE "\.B $c" <<< "$commands_section" ||
    problem "command '$c' has no '.B $c' entry in the COMMANDS section of $man"
done
for f in $(sort -u <<< "$parser_flags"$'\n'"$help_flags"); do
  grep -qE -- "(^|[ ,|])$f([ ,|=]|$)" <<< "$labels" ||
    problem "flag $f has no entry (a .B/.BI/.BR label line) in $man"
done
for f in $(grep -oE -- '--[a-z][a-z0-9-]*' <<< "$labels" | sort -u); do
  grep -qxF -- "$f" <<< "$parser_flags" || problem "$man describes $f, which the parser does not know"
done

version=${version_line#posenc }
grep -qE "^\.TH POSENC 1 [^ ]+ posenc $version " <<< "$text" ||
  problem "the .TH line of $man does not name version $version ($(grep '^\.TH' "$man"))"

if command -v groff > /dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$man" 2>&1) || problem "groff failed on $man"
  [ -z "$warnings" ] || problem "groff warns about $man: $warnings"
else
  echo "note: groff is not installed; rendering not checked"
fi

echo "commands: $(sort -u <<< "$parser_commands"$'\n'"$help_commands" | tr '\n' ' ')"
echo "flags: $(sort -u <<< "$parser_flags"$'\n'"$help_flags" | tr '\n' ' ')"
[ $fail -eq 0 ] || exit 1
echo "manpage: OK"
