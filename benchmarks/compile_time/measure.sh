#!/usr/bin/env bash
# Measures the compile-time cost of a constexpr cos/sin table (64 frequencies x N positions) with
# GCC and Clang: wall seconds and peak memory of one `-O2 -c` of grid_64x4096.cpp, and the smallest
# constexpr limits it needs. Usage: benchmarks/compile_time/measure.sh [positions ...] (default 4096).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
inc="$here/../../include"
src="$here/grid_64x4096.cpp"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
positions=("$@")
[ ${#positions[@]} -gt 0 ] || positions=(4096)

# Limits passed for the timing runs (the smallest sufficient values are reported separately).
declare -A limit_flag=([g++]='-fconstexpr-ops-limit=' [clang++-16]='-fconstexpr-steps=')
declare -A limit_max=([g++]=1099511627776 [clang++-16]=4294967295)

compiles_with() {  # compiler positions limit
  local extra=()
  [ "$1" = g++ ] && extra=(-fconstexpr-loop-limit=16777216)
  "$1" -std=c++20 -fsyntax-only -I"$inc" -DPOSENC_GRID_POSITIONS="$2" "${extra[@]}" \
    "${limit_flag[$1]}$3" "$src" 2>/dev/null
}

needed_limit() {  # smallest limit that compiles, within 2%: doubling, then bisection
  local cxx=$1 n=$2 lo hi mid
  hi=1048576
  until compiles_with "$cxx" "$n" "$hi"; do hi=$((hi * 2)); done
  lo=$((hi / 2))
  while [ $((hi - lo)) -gt $((hi / 50)) ]; do
    mid=$(((lo + hi) / 2))
    if compiles_with "$cxx" "$n" "$mid"; then hi=$mid; else lo=$mid; fi
  done
  echo "$hi"
}

printf '%-11s %-9s %-8s %-9s %-9s %s\n' compiler positions wall_s cpu_s peak_MB 'limit needed (within 2%)'
for n in "${positions[@]}"; do
  for cxx in g++ clang++-16; do
    command -v "$cxx" >/dev/null || { echo "$cxx: not installed"; continue; }
    extra=()
    [ "$cxx" = g++ ] && extra=(-fconstexpr-loop-limit=16777216)
    /usr/bin/time -f '%e %U %S %M' -o "$out/time" "$cxx" -std=c++20 -O2 -c -I"$inc" \
      -DPOSENC_GRID_POSITIONS="$n" "${extra[@]}" "${limit_flag[$cxx]}${limit_max[$cxx]}" \
      "$src" -o "$out/grid.o"
    read -r secs user sys kb <"$out/time"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    if [ "${POSENC_MEASURE_LIMITS:-1}" = 1 ]; then
      need="${limit_flag[$cxx]}$(needed_limit "$cxx" "$n")"
    else
      need='(skipped)'
    fi
    printf '%-11s %-9s %-8s %-9s %-9s %s\n' "$cxx" "$n" "$secs" "$cpu" "$((kb / 1024))" "$need"
  done
done
size -A "$out/grid.o" | awk '$1 == ".rodata" || $1 ~ /^\.rodata\./ {print "  .rodata bytes (last object):", $2}'
