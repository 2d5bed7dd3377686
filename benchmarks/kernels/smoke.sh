#!/usr/bin/env bash
# benchmarks/kernels_smoke: posenc-bench-kernels on T = 1 and 16, a few iterations per benchmark
# (a build and wiring check, not a measurement). Fails unless the run exits 0 (every strategy's
# output equals rope_reference's, every copy copies), prints its facts first, writes them at the
# top of the summary, the summary has a row for every strategy x dtype x layout x T
# (convert_copy: bf16 and f16; rotation_floor: f32), and the copy, conversion and arithmetic
# baselines follow POSENC_ISA.
#   smoke.sh BENCH SUMMARY.csv
set -u
bench=$1 csv=$2
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
fail() { echo "kernels_smoke: $*" >&2; exit 1; }

# --summary_stat takes median or min only, and says so before running anything.
if "$bench" --summary_stat=mean >"$out" 2>&1; then fail "--summary_stat=mean was accepted"; fi
grep -qx 'posenc-bench-kernels: --summary_stat=median or min' "$out" ||
  fail "--summary_stat=mean: '$(cat "$out")'"
"$bench" '--benchmark_filter=/memcpy/f32/T:1$' --benchmark_min_time=0.001 \
  --benchmark_repetitions=2 --summary_stat=min --summary "$csv" >/dev/null 2>&1 ||
  fail "the --summary_stat=min run failed"
grep -q '^# summary_time: cpu (the 2-thread rows: real), the fastest repetition$' "$csv" ||
  fail "--summary_stat=min: the summary does not say the fastest repetition"

# The threaded strategies are timed in wall time: Google Benchmark names it .../T:1/real_time.
"$bench" '--benchmark_filter=/T:(1|16)(/real_time)?$' --benchmark_min_time=0.001 \
  --summary "$csv" >"$out" 2>&1 || { cat "$out"; fail "the run failed"; }

facts=(cpu logical_cpus load_average isa isa_per_strategy compiler bench_flags kernels_flags
       google_benchmark posenc summary_time)
for i in "${!facts[@]}"; do
  # Line i of stdout and of the summary: `# key: value` with a value.
  line=$(sed -n "$((i + 1))p" "$out")
  [[ $line =~ ^"# ${facts[i]}: ". ]] || fail "stdout line $((i + 1)) is '$line', not # ${facts[i]}: ..."
  [[ $(sed -n "$((i + 1))p" "$csv") == "$line" ]] || fail "$csv line $((i + 1)) differs from stdout's"
done
[[ $(sed -n "$((${#facts[@]} + 1))p" "$csv") == \
   layout,strategy,dtype,tokens,threads,ns_per_call,ratio_to_memcpy ]] || fail "$csv: no header"

for layout in half interleaved; do
  for s in memcpy stream_copy stream_copy_nt stream_copy_nt_2threads constexpr_table \
           runtime_table runtime_table_expanded runtime_table_2threads runtime_table_one_head \
           scalar_table on_the_fly mrope_table mrope_interleaved_table axial_table; do
    threads=1
    [[ $s == *_2threads ]] && threads=2
    for dtype in f32 bf16 f16; do
      for t in 1 16; do
        # ns_per_call a number, the ratio a number (every row has its memcpy row).
        grep -Eq "^$layout,$s,$dtype,$t,$threads,[0-9]+\.[0-9],[0-9]+\.[0-9]{3}\$" "$csv" ||
          fail "$csv: no row $layout,$s,$dtype,$t,$threads"
      done
    done
  done
  # The conversion baseline: bf16 and f16.
  for dtype in bf16 f16; do
    for t in 1 16; do
      grep -Eq "^$layout,convert_copy,$dtype,$t,1,[0-9]+\.[0-9],[0-9]+\.[0-9]{3}\$" "$csv" ||
        fail "$csv: no row $layout,convert_copy,$dtype,$t,1"
    done
  done
  # The arithmetic baseline: f32.
  for t in 1 16; do
    grep -Eq "^$layout,rotation_floor,f32,$t,1,[0-9]+\.[0-9],[0-9]+\.[0-9]{3}\$" "$csv" ||
      fail "$csv: no row $layout,rotation_floor,f32,$t,1"
  done
done
rows=$(grep -vc '^#' "$csv")
[[ $rows == $((1 + 2 * 14 * 3 * 2 + 2 * 2 * 2 + 2 * 2)) ]] || fail "$csv: $rows lines, expected 1 + 180"

# The copy, the conversions and the arithmetic are those of the dispatched ISA: with
# POSENC_ISA=scalar (which every CPU runs) an x86-64 CPU copies with SSE2, converts and rotates
# element by element.
if [[ $(uname -m) == x86_64 ]]; then
  POSENC_ISA=scalar "$bench" '--benchmark_filter=/memcpy/f32/T:1$' --benchmark_min_time=0.001 \
    >"$out" 2>&1 || fail "the POSENC_ISA=scalar run failed"
  grep -Eq '^# isa_per_strategy: .*stream_copy_nt_2threads: sse2; convert_copy: f16 scalar, bf16 scalar; rotation_floor: scalar$' \
    "$out" || fail "POSENC_ISA=scalar: '$(grep '^# isa_per_strategy' "$out")'"
fi
echo "kernels_smoke: facts and $((rows - 1)) rows"
