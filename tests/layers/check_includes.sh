#!/usr/bin/env bash
# The include rules of the layers (docs/design.md, "Layers"), checked on every header of the
# library: a header under include/posenc/<layer>/ includes
#   - no umbrella header (posenc/math.hpp, posenc/spec.hpp, ...: they are for users; the library
#     includes exactly the headers it uses), and
#   - only headers of its own layer or of the layers above it:
#       math -> spec -> frequencies -> tables -> kernels; analysis reads math, spec, frequencies
#       and tables.
# posenc/version.hpp (macros only) may be included by any layer. A directory under
# include/posenc/ that is not a layer is an error too, so that a new layer must be added here.
# Prints "<file>:<line>: <include>: <why>" for each broken rule and exits 1 if there is any.
#
#   check_includes.sh <include dir>
set -uo pipefail
root=${1:?usage: check_includes.sh <include dir>}
root=${root%/}

layers=(math spec frequencies tables kernels analysis)
declare -A allowed=(
  [math]="math"
  [spec]="math spec"
  [frequencies]="math spec frequencies"
  [tables]="math spec frequencies tables"
  [kernels]="math spec frequencies tables kernels"
  [analysis]="math spec frequencies tables analysis"
)

if [ ! -d "$root/posenc" ]; then
  echo "check_includes: no $root/posenc" >&2
  exit 2
fi

status=0
report() {  # file line include why
  echo "${1#"$root"/}:$2: $3: $4"
  status=1
}

headers=0
while IFS= read -r -d '' file; do
  rel=${file#"$root"/posenc/}
  layer=${rel%%/*}
  headers=$((headers + 1))
  if [ -z "${allowed[$layer]+x}" ]; then
    report "$file" 1 "posenc/$layer/" "not a layer (the layers: ${layers[*]})"
    continue
  fi
  while IFS= read -r match; do
    line=${match%%:*}
    text=${match#*:}
    [[ $text =~ include[[:space:]]*([<\"])([^>\"]+) ]] || continue
    target=${BASH_REMATCH[2]}
    if [ "${BASH_REMATCH[1]}" = '"' ] && [[ $target != posenc/* ]]; then
      # A quoted include relative to the file: resolve it against the file's directory.
      target=$(realpath -m --relative-to="$root" "$(dirname "$file")/$target")
    fi
    [[ $target == posenc/* ]] || continue
    inner=${target#posenc/}
    if [[ $inner != */* ]]; then
      [ "$inner" = version.hpp ] && continue
      report "$file" "$line" "$target" "an umbrella header (for users only; include what is used)"
      continue
    fi
    to=${inner%%/*}
    if [[ " ${allowed[$layer]} " != *" $to "* ]]; then
      report "$file" "$line" "$target" "$layer may include only ${allowed[$layer]// /, }"
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$file")
done < <(find "$root/posenc" -mindepth 2 -type f \( -name '*.hpp' -o -name '*.h' \) -print0 | sort -z)

if [ "$headers" -eq 0 ]; then
  echo "check_includes: no headers under $root/posenc/<layer>/" >&2
  exit 2
fi
[ "$status" -eq 0 ] && echo "check_includes: $headers headers, every include within the layer rules"
exit "$status"
