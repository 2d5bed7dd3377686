#!/usr/bin/env bash
# benchmarks/kernels_report: posenc-bench-kernels --markdown and --compare (no benchmark runs).
#   report_test.sh BENCH TESTDATA
# testdata/before.csv and after.csv are small summaries written by hand (rows out of order, a
# strategy in one run only, an empty ratio, ratios on both sides of each target and on it);
# markdown.md and compare.md are the tables expected from them, written by hand. Then bad input:
# each case must exit 1 with one line on stderr that says what is wrong, and print nothing.
set -u
bench=$1 data=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "kernels_report: $*" >&2; failures=$((failures + 1)); }

expect_tables() {  # NAME EXPECTED.md ARGS...
  local name=$1 expected=$2
  shift 2
  if ! "$bench" "$@" >"$tmp/out" 2>"$tmp/err"; then
    fail "$name: exit status $? ($(cat "$tmp/err"))"
  elif [[ -s $tmp/err ]]; then
    fail "$name: wrote to stderr: $(cat "$tmp/err")"
  elif ! diff -u "$expected" "$tmp/out"; then
    fail "$name: the tables differ from $expected"
  fi
}

expect_error() {  # NAME MESSAGE-PART ARGS...
  local name=$1 message=$2 rc=0
  shift 2
  "$bench" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  if [[ $rc != 1 ]]; then
    fail "$name: exit status $rc, expected 1"
  elif [[ -s $tmp/out ]]; then
    fail "$name: printed tables: $(head -c 200 "$tmp/out")"
  elif [[ $(wc -l <"$tmp/err") != 1 ]]; then
    fail "$name: stderr is not one line: $(cat "$tmp/err")"
  elif ! grep -qF -- "posenc-bench-kernels: $message" "$tmp/err"; then
    fail "$name: stderr '$(cat "$tmp/err")' does not say '$message'"
  fi
}

expect_tables markdown "$data/markdown.md" --markdown "$data/before.csv"
expect_tables compare "$data/compare.md" --compare "$data/before.csv" "$data/after.csv"

# A summary written before the threads column: the same tables as with threads.
sed -e 's/^layout,strategy,dtype,tokens,threads,/layout,strategy,dtype,tokens,/' \
    -e '/^[a-z]/s/^\([^,]*,[^,]*,[^,]*,[^,]*\),[12],/\1,/' "$data/before.csv" >"$tmp/legacy.csv"
expect_tables legacy_header "$data/markdown.md" --markdown "$tmp/legacy.csv"

header=layout,strategy,dtype,tokens,threads,ns_per_call,ratio_to_memcpy
bad() {  # FILE LINES...: a summary with these lines
  local f=$tmp/$1
  shift
  printf '%s\n' "$@" >"$f"
}
bad bad_header.csv '# cpu: x' 'layout,strategy,dtype,tokens,ns,ratio' 'half,memcpy,f32,1,1.0,1.0'
bad fields.csv "$header" 'half,memcpy,f32,1,1,120.0'
bad ns.csv "$header" 'half,memcpy,f32,1,1,12O.0,1.000'
bad ns_nan.csv "$header" 'half,memcpy,f32,1,1,nan,1.000'
bad ns_control.csv "$header" $'half,memcpy,f32,1,1,1\e[2J,1.000'
bad ns_inf.csv "$header" 'half,memcpy,f32,1,1,inf,1.000'
bad ns_negative.csv "$header" 'half,memcpy,f32,1,1,-1.0,1.000'
bad ratio.csv "$header" 'half,memcpy,f32,1,1,120.0,1.0x'
bad tokens.csv "$header" 'half,memcpy,f32,1.5,1,120.0,1.000'
bad threads.csv "$header" 'half,memcpy,f32,1,0,120.0,1.000'
bad empty_field.csv "$header" ',memcpy,f32,1,1,120.0,1.000'
bad duplicate.csv "$header" 'half,memcpy,f32,1,1,120.0,1.000' 'half,memcpy,f32,1,1,121.0,1.000'
bad no_rows.csv '# cpu: x' "$header"
: >"$tmp/empty.csv"

expect_error missing_file "cannot read $tmp/missing.csv: No such file or directory" \
  --markdown "$tmp/missing.csv"
expect_error missing_after "cannot read $tmp/missing.csv: No such file or directory" \
  --compare "$data/before.csv" "$tmp/missing.csv"
expect_error directory "$tmp: is a directory" --markdown "$tmp"
expect_error empty "$tmp/empty.csv: no header line" --markdown "$tmp/empty.csv"
expect_error bad_header "$tmp/bad_header.csv:2: expected the header $header" \
  --markdown "$tmp/bad_header.csv"
expect_error fields "$tmp/fields.csv:2: 6 fields, expected 7" --markdown "$tmp/fields.csv"
expect_error ns "$tmp/ns.csv:2: ns_per_call '12O.0' is not a non-negative number" \
  --compare "$tmp/ns.csv" "$data/after.csv"
expect_error ns_nan "$tmp/ns_nan.csv:2: ns_per_call 'nan'" --markdown "$tmp/ns_nan.csv"
# A control character of the input is not written to the terminal.
expect_error ns_control "$tmp/ns_control.csv:2: ns_per_call '1?[2J' is not" \
  --markdown "$tmp/ns_control.csv"
expect_error ns_inf "$tmp/ns_inf.csv:2: ns_per_call 'inf'" --markdown "$tmp/ns_inf.csv"
expect_error ns_negative "$tmp/ns_negative.csv:2: ns_per_call '-1.0'" \
  --markdown "$tmp/ns_negative.csv"
expect_error ratio "$tmp/ratio.csv:2: ratio_to_memcpy '1.0x'" --markdown "$tmp/ratio.csv"
expect_error tokens "$tmp/tokens.csv:2: tokens '1.5' is not a count" --markdown "$tmp/tokens.csv"
expect_error threads "$tmp/threads.csv:2: threads '0' is not a positive count" \
  --markdown "$tmp/threads.csv"
expect_error empty_field "$tmp/empty_field.csv:2: empty layout" --markdown "$tmp/empty_field.csv"
expect_error duplicate "$tmp/duplicate.csv:3: a second row for half/memcpy/f32/T:1" \
  --markdown "$tmp/duplicate.csv"
expect_error no_rows "$tmp/no_rows.csv: no rows" --markdown "$tmp/no_rows.csv"
expect_error compare_one_file "usage: --compare BEFORE.csv AFTER.csv" --compare "$data/before.csv"
expect_error markdown_two_files "usage: --markdown RUN.csv" \
  --markdown "$data/before.csv" "$data/after.csv"

if [[ $failures != 0 ]]; then
  echo "kernels_report: $failures failed" >&2
  exit 1
fi
echo "kernels_report: tables and 19 error cases as expected"
