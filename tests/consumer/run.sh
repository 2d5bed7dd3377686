#!/usr/bin/env bash
# Uses posenc the way its users do, from outside this build.
#
#   run.sh install | cmake | pkgconfig | subproject
#
# install, cmake and pkgconfig stage this build's own installation: `meson install --no-rebuild
# --destdir STAGE` of the build under test (nothing is compiled again), then point the tools at
# STAGE + prefix.
#   install     lists the installed files; checks that every part is there, that the headers
#               equal include/posenc, the member order of libposenc_kernels.a, that
#               libposenc_kernels.so exports every function of posenc/kernels/dispatch.hpp (and
#               was linked dispatch.o first, ISAs narrow to wide), posenc.pc and posenc-kernels.pc
#               (version, flags), the CMake version rule, the man page, and that the staged
#               `posenc --version` prints VERSION; builds main.cpp with `pkg-config --cflags
#               posenc` only, checks every posenc header it read came from the stage, and runs it.
#   cmake       tests/consumer/cmake: find_package(posenc VERSION CONFIG REQUIRED) with
#               CMAKE_PREFIX_PATH=STAGE+prefix, kernels_main.cpp linked to posenc::kernels, once
#               shared and once static (posenc_USE_STATIC); both must run and match the reference.
#   pkgconfig   tests/consumer/make: a plain Makefile with `pkg-config --cflags --libs
#               posenc-kernels`; the program must load the staged libposenc_kernels.so and match.
#   subproject  tests/consumer/meson-project with SOURCE_ROOT as subprojects/posenc: first only
#               dependency('posenc') (header-only): posenc registers no tests and not one kernel
#               translation unit is compiled; then dependency('posenc-kernels') too: the kernel
#               TUs are compiled and kernels_main.cpp runs and matches.
#
# Environment (tests/consumer/meson.build sets it): POSENC_SOURCE_ROOT, POSENC_BUILD_ROOT, MESON,
# NINJA, POSENC_VERSION, POSENC_PREFIX, POSENC_BINDIR, POSENC_LIBDIR, POSENC_INCLUDEDIR,
# POSENC_DATADIR, POSENC_MANDIR (install directories, relative to the prefix or absolute),
# POSENC_KERNELS_SHARED (the shared library's path in the build directory), POSENC_TOOL (1 when
# the tool is built), POSENC_SANITIZE (b_sanitize), CXX (compiler command), PKG_CONFIG, CMAKE.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 install|cmake|pkgconfig|subproject" >&2
  exit 2
fi
mode=$1
src=$(cd "$POSENC_SOURCE_ROOT" && pwd)
build=$POSENC_BUILD_ROOT
version=$POSENC_VERSION
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
read -r -a cxx <<< "${CXX:-c++}"
pkg_config=${PKG_CONFIG:-pkg-config}

# meson test points LD_LIBRARY_PATH at this build's shared libraries (the tests depend on
# them); a consumer must find nothing but the staged installation.
unset LD_LIBRARY_PATH

tmp=$(mktemp -d "${TMPDIR:-/tmp}/posenc-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

strict=(-std=c++20 -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror)
# The reference must not have its multiply-adds contracted where the target has FMA (aarch64):
# the same flag as posenc's own kernel tests.
kernels_flags=(-ffp-contract=off)
if [ "${POSENC_SANITIZE:-none}" != none ]; then
  kernels_flags+=("-fsanitize=$POSENC_SANITIZE")
fi

# A directory option as a path under the staged prefix.
staged() {
  case $1 in
  /*) echo "$stage$1" ;;
  *) echo "$stage$POSENC_PREFIX/$1" ;;
  esac
}

stage_install() {
  stage=$tmp/stage
  "$MESON" install -C "$build" --no-rebuild --destdir "$stage" > "$tmp/install.log" ||
    { cat "$tmp/install.log"; fail "meson install --destdir failed"; }
  prefix_dir=$stage$POSENC_PREFIX
  include_dir=$(staged "$POSENC_INCLUDEDIR")
  lib_dir=$(staged "$POSENC_LIBDIR")
  data_dir=$(staged "$POSENC_DATADIR")
  # Only the staged .pc files are visible: no system or uninstalled posenc can stand in.
  # PKG_CONFIG_SYSROOT_DIR puts the stage in front of the paths the .pc files name.
  export PKG_CONFIG_LIBDIR="$lib_dir/pkgconfig:$data_dir/pkgconfig"
  export PKG_CONFIG_PATH=
  export PKG_CONFIG_SYSROOT_DIR=$stage
}

# Every posenc header a compiler read (its -MD depfile) must come from the staged prefix.
check_headers_from_stage() {
  grep -oE '[^ ]*/posenc/[^ ]*\.hpp' "$1" > "$tmp/used-headers" || fail "no posenc header used"
  if grep -v "^$include_dir/posenc/" "$tmp/used-headers"; then
    fail "the headers above were not taken from the staged install"
  fi
}

# Kernel translation units compiled in a meson build directory (.ninja_log: one line per output).
kernel_tus_compiled() {
  awk -F'\t' 'NR > 1 && $4 ~ /subprojects\/posenc\/src\/kernels\/.*\.o$/ { print $4 }' \
    "$1/.ninja_log" | sort -u
}

case $mode in
install)
  stage_install
  echo "installed files (under $stage):"
  (cd "$stage" && find . \( -type f -o -type l \) | sed 's|^\./|/|' | sort)

  for f in "$include_dir/posenc/posenc.hpp" "$include_dir/posenc/version.hpp" \
    "$lib_dir/libposenc_kernels.a" "$lib_dir/libposenc_kernels.so" \
    "$data_dir/pkgconfig/posenc.pc" "$lib_dir/pkgconfig/posenc-kernels.pc" \
    "$lib_dir/cmake/posenc/posencConfig.cmake" "$lib_dir/cmake/posenc/posencConfigVersion.cmake" \
    "$data_dir/doc/posenc/LICENSE"; do
    [ -e "$f" ] || fail "${f#"$stage"} is not installed"
  done
  diff -r "$src/include/posenc" "$include_dir/posenc" ||
    fail "installed headers differ from include/posenc in the source tree"

  # libposenc_kernels.a: dispatch.o first, then the ISA objects from the narrowest to the widest
  # (src/kernels/meson.build, one-definition caveat).
  members=$(ar t "$lib_dir/libposenc_kernels.a" | sed 's|.*/||')
  echo "libposenc_kernels.a members: $(tr '\n' ' ' <<< "$members")"
  expected_members=$(for m in dispatch isa_sse4_2 isa_avx2 isa_avx512bw isa_avx512bf16; do
    grep -x "$m.cpp.o" <<< "$members" || true
  done)
  [ "$members" = "$expected_members" ] ||
    fail "libposenc_kernels.a members are not dispatch.cpp.o followed by the ISAs, narrow to wide"
  # The shared library's link line: the same order (the linker keeps the first copy of an inline
  # function).
  link=$("$NINJA" -C "$build" -t commands "$POSENC_KERNELS_SHARED" | tail -n 1)
  link_objects=$(grep -oE '[^ ]+\.cpp\.o' <<< "$link" | sed 's|.*/||')
  [ "$link_objects" = "$members" ] ||
    fail "libposenc_kernels.so was linked from '$(tr '\n' ' ' <<< "$link_objects")'"

  # Every function that posenc/kernels/dispatch.hpp declares out of line at namespace scope, with
  # its number of overloads, must be exported by the shared library: the functions written out (a
  # line at column 0 that starts with a type and opens a parameter list, not inline, constexpr or
  # a template, which the header defines itself), and the entry points it declares from the kernel
  # list, one per entry for each of float, bf16 and f16 (the staged
  # posenc/kernels/detail/kernel_list.hpp, expanded by the preprocessor).
  exports=$(nm -D -C --defined-only "$lib_dir/libposenc_kernels.so" | cut -d' ' -f3-)
  written=$(awk '
    /^template/ { template_line = NR }
    /^[A-Za-z_][A-Za-z0-9_:<>, ]*[ *&]+[a-z_][a-z0-9_]*\(/ &&
      !/^(inline|constexpr|static|using|struct|enum|namespace|return|template) / &&
      template_line != NR - 1 {
      sub(/\(.*/, ""); sub(/.*[ *&]/, ""); print
    }' "$include_dir/posenc/kernels/dispatch.hpp")
  [ "$(wc -l <<< "$written")" -ge 5 ] || fail "found too few declarations in dispatch.hpp: $written"
  listed=$(printf '%s\n' '#include <posenc/kernels/detail/kernel_list.hpp>' \
      '#define POSENC_ENTRY_NAME(T, group, member, function, ...) posenc_entry_point function' \
      'POSENC_DISPATCHED_KERNELS(POSENC_ENTRY_NAME, float, POSENC_NO_DEFAULT_ARGUMENT)' |
    "${cxx[@]}" -std=c++20 -E -P -I"$include_dir" -x c++ - |
    grep -oE 'posenc_entry_point [a-z_0-9]+' | cut -d' ' -f2) ||
    fail "could not expand the kernel list of posenc/kernels/detail/kernel_list.hpp"
  [ "$(wc -l <<< "$listed")" -ge 8 ] || fail "found too few kernels in the kernel list: $listed"
  declared=$written
  for type in float bf16 f16; do
    grep -qE "^POSENC_DISPATCHED_KERNELS\([A-Z_]+, $type, " "$include_dir/posenc/kernels/dispatch.hpp" ||
      fail "dispatch.hpp does not declare the entry points of the kernel list for $type"
    declared+=$'\n'$listed
  done
  declared=$(sort <<< "$declared" | uniq -c)
  while read -r count name; do
    got=$(grep -cE "^posenc::kernels::dispatch::$name\(" <<< "$exports" || true)
    echo "exported: $name x$got (declared x$count)"
    [ "$got" -ge "$count" ] ||
      fail "libposenc_kernels.so exports $got of the $count declarations of dispatch::$name"
  done <<< "$declared"
  # Nothing else than posenc::kernels::dispatch (the headers' inline code stays local).
  if grep -vE '^posenc::kernels::dispatch::' <<< "$exports" | grep -vE '^(_init|_fini|[A-Z_]+)$'; then
    fail "libposenc_kernels.so exports the symbols above"
  fi
  soname=$(readelf -d "$lib_dir/libposenc_kernels.so" | sed -nE 's/.*SONAME.*\[(.*)\]/\1/p')
  echo "soname: $soname"
  [ -e "$lib_dir/$soname" ] || fail "no $soname next to libposenc_kernels.so"

  # pkg-config: both files, their versions, flags and the dependency between them.
  for pc in posenc posenc-kernels; do
    got=$("$pkg_config" --modversion $pc) || fail "pkg-config does not know $pc"
    [ "$got" = "$version" ] || fail "$pc.pc has version '$got', expected '$version'"
  done
  [ -z "$("$pkg_config" --libs posenc)" ] || fail "posenc.pc (header-only) has Libs"
  read -r -a cflags <<< "$("$pkg_config" --cflags posenc)"
  read -r -a kernel_libs <<< "$("$pkg_config" --libs posenc-kernels)"
  echo "posenc cflags:$(printf ' %s' "${cflags[@]}"); posenc-kernels libs:$(printf ' %s' "${kernel_libs[@]}")"
  [[ " ${cflags[*]} " == *" -I$include_dir "* ]] ||
    fail "pkg-config --cflags posenc does not name $include_dir"
  [[ " ${kernel_libs[*]} " == *" -L$lib_dir "* && " ${kernel_libs[*]} " == *" -lposenc_kernels "* ]] ||
    fail "pkg-config --libs posenc-kernels is not -L$lib_dir -lposenc_kernels"
  "$pkg_config" --print-requires posenc-kernels | grep -qx posenc ||
    fail "posenc-kernels.pc does not require posenc"

  # CMake's version rule (posencConfigVersion.cmake): same major, and the same minor while the
  # major is 0; the version itself or older within that series.
  IFS=. read -r major minor patch <<< "$version"
  version_case() {  # REQUEST|RANGE EXPECTED(TRUE|FALSE)
    local args=(-DPACKAGE_FIND_VERSION="$1")
    if [[ $1 == *...* ]]; then
      local lo=${1%%...*} hi=${1##*...} max=INCLUDE
      [[ $hi == '<'* ]] && { max=EXCLUDE; hi=${hi#<}; }
      IFS=. read -r lo_major lo_minor _ <<< "$lo"
      args=(-DPACKAGE_FIND_VERSION_RANGE="$1" -DPACKAGE_FIND_VERSION_MIN="$lo"
            -DPACKAGE_FIND_VERSION_MIN_MAJOR="$lo_major" -DPACKAGE_FIND_VERSION_MIN_MINOR="${lo_minor:-}"
            -DPACKAGE_FIND_VERSION_MAX="$hi" -DPACKAGE_FIND_VERSION_RANGE_MAX=$max)
    else
      IFS=. read -r req_major req_minor _ <<< "$1"
      args+=(-DPACKAGE_FIND_VERSION_MAJOR="$req_major" -DPACKAGE_FIND_VERSION_MINOR="${req_minor:-}")
    fi
    got=$("$CMAKE" "${args[@]}" -DCMAKE_SIZEOF_VOID_P=8 -DFILE="$lib_dir/cmake/posenc/posencConfigVersion.cmake" \
      -P "$here/cmake/version_check.cmake" 2>&1)
    echo "find_package(posenc $1): compatible=$got"
    [ "$got" = "$2" ] || fail "posencConfigVersion.cmake: request $1 gave '$got', expected $2"
  }
  version_case "$version" TRUE
  version_case "$major.$minor" TRUE
  version_case "$major.$((minor + 1))" FALSE
  version_case "$((major + 1)).0" FALSE
  version_case "$major.$minor.$((patch + 1))" FALSE
  if [ "$minor" -gt 0 ]; then
    version_case "$major.$((minor - 1))" "$([ "$major" -eq 0 ] && echo FALSE || echo TRUE)"
  fi
  version_case "$major.$minor...<$major.$((minor + 1))" TRUE
  version_case "$major.$((minor + 1))...$major.$((minor + 2))" FALSE

  if [ "${POSENC_TOOL:-0}" = 1 ]; then
    tool=$(staged "$POSENC_BINDIR")/posenc
    got=$("$tool" --version) || fail "the staged posenc --version failed"
    echo "staged posenc --version: $got"
    [ "$got" = "posenc $version" ] || fail "posenc --version printed '$got', expected 'posenc $version'"
    cmp "$src/docs/man/posenc.1" "$(staged "$POSENC_MANDIR")/man1/posenc.1" ||
      fail "the installed man page differs from docs/man/posenc.1"
  fi

  # A header-only consumer with nothing but pkg-config's flags.
  cd "$tmp"
  "${cxx[@]}" "${strict[@]}" "${cflags[@]}" -MD -MF main.d -o consumer "$here/main.cpp"
  check_headers_from_stage main.d
  ./consumer || fail "header-only consumer exited with $?"
  ;;

cmake)
  stage_install
  for kind in shared static; do
    use_static=$([ $kind = static ] && echo ON || echo OFF)
    cmake_build=$tmp/cmake-$kind
    CXX="${cxx[*]}" "$CMAKE" -S "$here/cmake" -B "$cmake_build" \
      -DCMAKE_PREFIX_PATH="$prefix_dir" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
      -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE=Release \
      -DPOSENC_REQUEST="$version" -DPOSENC_STAGE="$prefix_dir" -Dposenc_USE_STATIC=$use_static \
      -DPOSENC_KERNELS_MAIN="$here/kernels_main.cpp" \
      -DPOSENC_EXTRA_FLAGS="${kernels_flags[*]}" > "$tmp/cmake-$kind.log" 2>&1 ||
      { cat "$tmp/cmake-$kind.log"; fail "cmake configure ($kind) failed"; }
    grep -E '^-- posenc' "$tmp/cmake-$kind.log"
    "$CMAKE" --build "$cmake_build" -- VERBOSE=1 > "$tmp/cmake-build-$kind.log" 2>&1 ||
      { cat "$tmp/cmake-build-$kind.log"; fail "cmake build ($kind) failed"; }
    depfile=$(find "$cmake_build/CMakeFiles" -name 'kernels_main.cpp.o.d' | head -n 1)
    [ -n "$depfile" ] || fail "CMake left no depfile of kernels_main.cpp"
    check_headers_from_stage "$depfile"
    libs=$(ldd "$cmake_build/consumer" | grep posenc_kernels || true)
    echo "$kind: ldd: ${libs:-(no libposenc_kernels)}"
    if [ $kind = shared ]; then
      [[ $libs == *"=> $lib_dir/libposenc_kernels.so."* ]] ||
        fail "the shared consumer does not load the staged libposenc_kernels.so"
    else
      [ -z "$libs" ] || fail "the static consumer needs libposenc_kernels.so"
    fi
    "$cmake_build/consumer" || fail "CMake consumer ($kind) exited with $?"
  done
  ;;

pkgconfig)
  stage_install
  cp "$here/make/Makefile" "$here/kernels_main.cpp" "$tmp/"
  make -C "$tmp" CXX="${cxx[*]}" PKG_CONFIG="$pkg_config" \
    EXTRA_FLAGS="${kernels_flags[*]}" || fail "make failed"
  check_headers_from_stage "$tmp/consumer.d"
  libs=$(LD_LIBRARY_PATH=$lib_dir ldd "$tmp/consumer" | grep posenc_kernels || true)
  echo "ldd: $libs"
  [[ $libs == *"=> $lib_dir/libposenc_kernels.so."* ]] ||
    fail "the consumer does not load the staged libposenc_kernels.so"
  LD_LIBRARY_PATH=$lib_dir "$tmp/consumer" || fail "pkg-config consumer exited with $?"
  ;;

subproject)
  proj=$tmp/proj
  mkdir -p "$proj/subprojects"
  ln -s "$src" "$proj/subprojects/posenc"
  cp "$here/meson-project/meson.build" "$here/meson-project/meson_options.txt" "$here/main.cpp" \
    "$here/kernels_main.cpp" "$proj/"
  sanitize=()
  if [ "${POSENC_SANITIZE:-none}" != none ]; then
    sanitize=(-Db_sanitize="$POSENC_SANITIZE" -Db_lundef=false)
  fi
  # --force-fallback-for: take subprojects/posenc even if a posenc is installed on the system.
  CXX="${cxx[*]}" "$MESON" setup "$tmp/build" "$proj" --force-fallback-for=posenc \
    -Dkernels=false "${sanitize[@]}"
  tests=$("$MESON" introspect --tests "$tmp/build")
  [ "$tests" = "[]" ] || fail "posenc registered tests although it is a subproject: $tests"
  "$MESON" compile -C "$tmp/build"
  compiled=$(kernel_tus_compiled "$tmp/build")
  echo "kernel TUs compiled for the header-only consumer: $(grep -c . <<< "$compiled" || true)"
  [ -z "$compiled" ] || fail "a header-only consumer compiled posenc's kernel TUs: $compiled"
  "$tmp/build/consumer" || fail "header-only consumer exited with $?"

  "$MESON" configure "$tmp/build" -Dkernels=true
  "$MESON" compile -C "$tmp/build"
  compiled=$(kernel_tus_compiled "$tmp/build")
  echo "kernel TUs compiled for the kernels consumer:"
  echo "$compiled"
  grep -q '/dispatch\.cpp\.o$' <<< "$compiled" || fail "dependency('posenc-kernels') built no kernels"
  "$tmp/build/consumer-kernels" || fail "kernels consumer exited with $?"
  ;;

*)
  fail "unknown mode '$mode'"
  ;;
esac
echo "consumer-$mode: OK"
