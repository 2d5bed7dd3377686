#!/usr/bin/env bash
# Builds tests/consumer/main.cpp against posenc the way a user would.
#
#   run.sh install    SOURCE_ROOT MESON VERSION
#   run.sh subproject SOURCE_ROOT MESON VERSION
#
# install:    configures a separate build of SOURCE_ROOT with every optional part disabled,
#             `meson install`s it into a temporary prefix, checks the installed headers equal the
#             source headers and posenc.pc has VERSION, then compiles main.cpp with only the flags
#             `pkg-config --cflags posenc` gives, checks every posenc header came from the prefix,
#             and runs the program.
# subproject: a fresh meson project with SOURCE_ROOT as subprojects/posenc, using
#             dependency('posenc'); checks that posenc registered no tests there (optional parts
#             default to off in a subproject), then builds and runs main.cpp.
#
# Environment: CXX (compiler command, default c++), PKG_CONFIG (default pkg-config).
set -euo pipefail

if [ $# -ne 4 ]; then
  echo "usage: $0 install|subproject SOURCE_ROOT MESON VERSION" >&2
  exit 2
fi
mode=$1
src=$(cd "$2" && pwd)
meson=$3
version=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
read -r -a cxx <<< "${CXX:-c++}"
pkg_config=${PKG_CONFIG:-pkg-config}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/posenc-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

strict=(-std=c++20 -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror)
parts_off=(-Dtests=disabled -Dproofs=disabled -Dbenchmarks=disabled -Dtools=disabled
           -Dexamples=disabled)

case $mode in
install)
  "$meson" setup "$tmp/build" "$src" --prefix="$tmp/prefix" "${parts_off[@]}"
  "$meson" install -C "$tmp/build"

  [ -f "$tmp/prefix/include/posenc/posenc.hpp" ] ||
    fail "include/posenc/posenc.hpp is not installed"
  diff -r "$src/include/posenc" "$tmp/prefix/include/posenc" ||
    fail "installed headers differ from include/posenc in the source tree"

  pc=$(find "$tmp/prefix" -name posenc.pc -print -quit)
  [ -n "$pc" ] || fail "posenc.pc is not installed"
  echo "posenc.pc: ${pc#"$tmp/prefix/"}"
  # Only the installed .pc file is visible: no system or uninstalled posenc can stand in.
  export PKG_CONFIG_LIBDIR
  PKG_CONFIG_LIBDIR=$(dirname "$pc")
  export PKG_CONFIG_PATH=
  got=$("$pkg_config" --modversion posenc) || fail "pkg-config does not know posenc"
  [ "$got" = "$version" ] || fail "posenc.pc has version '$got', expected '$version'"
  read -r -a cflags <<< "$("$pkg_config" --cflags posenc)"
  printf 'cflags:'; printf ' %s' "${cflags[@]}"; echo
  [[ " ${cflags[*]} " == *" -I$tmp/prefix/include "* ]] ||
    fail "pkg-config --cflags posenc does not name $tmp/prefix/include"

  cd "$tmp"
  "${cxx[@]}" "${strict[@]}" "${cflags[@]}" -MD -MF main.d -o consumer "$here/main.cpp"
  # Every posenc header the compiler read must be the installed one.
  grep -oE '[^ ]*/posenc/[^ ]*\.hpp' main.d > used-headers ||
    fail "main.cpp used no posenc header"
  if grep -v "^$tmp/prefix/include/posenc/" used-headers; then
    fail "the headers above were not taken from the install prefix"
  fi
  ./consumer || fail "consumer program exited with $?"
  ;;

subproject)
  proj=$tmp/proj
  mkdir -p "$proj/subprojects"
  ln -s "$src" "$proj/subprojects/posenc"
  cp "$here/main.cpp" "$proj/main.cpp"
  cat > "$proj/meson.build" <<'MESON'
project('posenc-consumer', 'cpp', meson_version: '>=1.0',
  default_options: ['cpp_std=c++20', 'warning_level=3', 'werror=true'])
add_project_arguments('-Wconversion', '-Wshadow', language: 'cpp')
posenc_dep = dependency('posenc', version: '>=0.1')
executable('consumer', 'main.cpp', dependencies: posenc_dep)
MESON
  # --force-fallback-for: take subprojects/posenc even if a posenc is installed on the system.
  "$meson" setup "$tmp/build" "$proj" --force-fallback-for=posenc
  tests=$("$meson" introspect --tests "$tmp/build")
  [ "$tests" = "[]" ] || fail "posenc registered tests although it is a subproject: $tests"
  "$meson" compile -C "$tmp/build"
  "$tmp/build/consumer" || fail "consumer program exited with $?"
  ;;

*)
  fail "unknown mode '$mode'"
  ;;
esac
echo "consumer-$mode: OK"
