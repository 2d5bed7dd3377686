#!/usr/bin/env bash
# Checks the arm-none-eabi (Cortex-M4) build of posenc (tests/freestanding/meson.build):
#   1. no libm symbol anywhere: the objects reference nothing but the ARM EABI run-time helpers of
#      libgcc (__aeabi_*, soft double arithmetic) and the mem* functions GCC may call in any
#      environment; the firmware links with -nostdlib -nostartfiles against libc and libgcc only
#      (no -lm), and the linked image defines no libm function either;
#   2. the cos/sin tables are in .rodata, with the bytes of their formula:
#        compact  2 * (R/2) * P * 4   (+ 8: the attention factor, a double)
#        expanded 2 * R * P * 4       (+ 16: the layout and the attention factor)
#   3. no copy of the tables in .data or .bss, and no dynamic initialization (.init_array,
#      .ctors): the compiler stored the values, nothing computes them at start-up.
# Negative control: negative.o (a table computed at start-up with cosf) must fail checks 1 and 3.
# Usage: check.sh NM OBJDUMP attention.o tables_2048.o attention.elf negative.o
set -euo pipefail

nm=$1
objdump=$2
attention_o=$3
tables_o=$4
elf=$5
negative_o=$6
status=0

fail() {
  echo "FAIL: $*"
  status=1
}

libm='^(a?sin|a?cos|a?tan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|exp|exp2|expm1|exp10|log|log2|log10|log1p|logb|pow|sqrt|cbrt|hypot|fma|fmod|floor|ceil|trunc|round|lround|llround|rint|lrint|nearbyint|ldexp|frexp|scalbn|ilogb|modf|remainder|remquo|copysign|fabs|fmin|fmax|sincos|erf|erfc|tgamma|lgamma)[fl]?$|^__ieee754_|^__kernel_'

# Prints "section size name" for every symbol of an object or image, size in decimal (objdump -t:
# the section is the last field before the tab, the size in hex the first after it).
symbols() {
  local head tail
  "$objdump" -t "$1" | while IFS=$'\t' read -r head tail; do
    [ -n "$tail" ] || continue
    read -r -a h <<< "$head"
    read -r -a t <<< "$tail"
    echo "${h[${#h[@]} - 1]} $((16#${t[0]})) ${t[${#t[@]} - 1]}"
  done
}
# Prints "section size" for every section, size in decimal (objdump -h).
sections() {
  "$objdump" -h "$1" | awk '$1 ~ /^[0-9]+$/ { print $2, $3 }' | while read -r name hex; do
    echo "$name $((16#$hex))"
  done
}

# Undefined symbols of an object other than libgcc's EABI helpers and mem*.
foreign_undefined() {
  "$nm" -u "$1" | awk '{print $2}' |
    grep -Ev '^(__aeabi_[a-z0-9]+|memset|memcpy|memmove|memcmp)$' || true
}
# Table symbols in .data/.bss, dynamic initialization sections, .data bytes.
copies_or_startup() {
  symbols "$1" | awk '$1 ~ /^\.(data|bss)/ && $3 ~ /rope|table|cache_v/ { print "copy:", $3 }'
  sections "$1" | awk '$1 ~ /^\.(init_array|preinit_array|ctors)/ { print "start-up code:", $1 }'
  sections "$1" | awk '$1 ~ /^\.data/ && $2 > 0 { print "data:", $1, $2 }'
}

echo "== 1. undefined symbols (arm-none-eabi-nm -u) =="
for obj in "$attention_o" "$tables_o"; do
  echo "$(basename "$obj"): $("$nm" -u "$obj" | awk '{print $2}' | tr '\n' ' ')"
  bad=$(foreign_undefined "$obj")
  [ -z "$bad" ] || fail "$(basename "$obj") needs more than libgcc's EABI helpers and mem*: $bad"
done
[ -z "$("$nm" -u "$elf")" ] || fail "unresolved symbols in the linked firmware: $("$nm" -u "$elf")"
in_image=$("$nm" "$elf" | awk '{print $NF}' | grep -E "$libm" || true)
[ -z "$in_image" ] || fail "libm functions in the linked firmware: $in_image"
echo "$(basename "$elf"): linked with -nostdlib -nostartfiles, libc + libgcc, no -lm;" \
  "libm functions defined: ${in_image:-none}"

echo "== 2. tables: section and bytes =="
# check_table FILE PATTERN NAME FORMULA_BYTES EXTRA_BYTES
check_table() {
  local line section size
  line=$(symbols "$1" | awk -v p="$2" '$3 ~ p && $2 > 0' | head -1)
  if [ -z "$line" ]; then
    fail "$3: no symbol matching $2 in $(basename "$1")"
    return
  fi
  read -r section size _ <<< "$line"
  echo "$3: section $section, symbol $size bytes = $4 (cos + sin) + $5"
  [[ $section == .rodata* ]] || fail "$3 is in $section, not .rodata"
  [ "$size" -eq $(($4 + $5)) ] || fail "$3: $size bytes, expected $4 + $5"
}
check_table "$attention_o" 'rope_cache_vIN2fw5model' \
  "firmware example, compact, head_dim 64 x 256 positions" $((2 * 32 * 256 * 4)) 8
check_table "$elf" 'rope_cache_vIN2fw5model' \
  "the same, in the linked firmware image" $((2 * 32 * 256 * 4)) 8
check_table "$tables_o" '_ZN6posenc12rope_cache_v.*Lj2048EE' \
  "compact  (rope_cache_v), head_dim 64 x 2048 positions" $((2 * 32 * 2048 * 4)) 8
check_table "$tables_o" 'expanded_rope_cache_v.*Lj2048EE' \
  "expanded (expanded_rope_cache_v), head_dim 64 x 2048 positions" $((2 * 64 * 2048 * 4)) 16

echo "== 3. no .data/.bss copy, no start-up code =="
for obj in "$attention_o" "$tables_o" "$elf"; do
  name=$(basename "$obj")
  bad=$(copies_or_startup "$obj")
  [ -z "$bad" ] || fail "$name: $bad"
  bss=$(symbols "$obj" | awk '$1 ~ /^\.bss/ && $2 > 0 { printf "%s (%d bytes) ", $3, $2 }')
  echo "$name: no .data, no start-up code; .bss objects: ${bss:-none}"
done
sections "$elf" | awk '$1 ~ /^\.(text|rodata|data|bss)$/ { print "firmware image " $1 ": " $2 " bytes" }'
echo "posenc_fw_rope_cos (returns the table's address):"
"$objdump" -d "$elf" --disassemble=posenc_fw_rope_cos | grep -E '^ +[0-9a-f]+:' || true

echo "== negative control: a table computed at start-up with libm (negative.cpp) =="
neg_undefined=$(foreign_undefined "$negative_o")
neg_copies=$(copies_or_startup "$negative_o")
echo "check 1 reports: ${neg_undefined:-nothing}"
echo "check 3 reports: $(echo ${neg_copies:-nothing})"
[ -n "$neg_undefined" ] || fail "check 1 does not detect the libm call of negative.o"
[ -n "$neg_copies" ] || fail "check 3 does not detect the start-up table of negative.o"

[ $status -eq 0 ] && echo "PASS" || echo "FAIL"
exit $status
