// Built by run.sh against an installed posenc (CMake posenc::kernels, pkg-config posenc-kernels)
// and against posenc as a meson subproject (dependency('posenc-kernels')): runs the
// runtime-dispatch kernels of the linked library and requires the bits of the scalar reference,
// rope_reference(..., fma) with the ISA's multiply-add mode (posenc/kernels/dispatch.hpp promises
// bit identity, so there is no tolerance). Every compiled ISA this CPU supports is run, then the
// dispatcher's own entry point. Exit status 0 when all match, 1 otherwise.
//
// POSENC_EXPECTED_VERSION: the version the build system reported for the package it found; it
// must be the version of the headers the compiler reads.
#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>
#include <posenc/version.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#ifndef POSENC_EXPECTED_VERSION
#error "compile with -DPOSENC_EXPECTED_VERSION=\"X.Y.Z\", the version the build system found"
#endif
static_assert(std::string_view(POSENC_VERSION_STRING) == POSENC_EXPECTED_VERSION,
              "posenc/version.hpp differs from the version of the package the build system found");

namespace {

namespace k = posenc::kernels;
namespace d = posenc::kernels::dispatch;

// [tokens, heads, head_dim] with a partial rotary width (channels >= 96 pass through), positions
// 60..67: the last four rows lie past the 64-row cache and are computed on the fly.
constexpr std::size_t tokens = 8, heads = 3, head_dim = 128, cached_rows = 64;
constexpr std::uint64_t first_position = 60;

std::vector<float> input() {
  std::vector<float> x(tokens * heads * head_dim);
  std::uint32_t s = 0x9e3779b9u;  // xorshift32: values in [-2, 2)
  for (float& v : x) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    v = static_cast<float>(s >> 8) * 0x1p-22f - 2.0f;
  }
  return x;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

int main() {
  const posenc::rope_config c{head_dim, 96, 10000.0, posenc::rope_layout::half, {}};
  const auto cache = posenc::runtime_rope_cache<float>::make(c, cached_rows);
  const k::rope_table table = k::make_rope_table(cache.view(), c);
  const k::token_positions pos = k::token_positions::from(first_position);
  const std::vector<float> x = input();
  const auto in = k::dense(x.data(), tokens, heads, head_dim);

  int failures = 0;
  int ran = 0;
  for (const d::isa_kernels& isa : d::compiled_isas()) {
    if (!isa.supported) {
      std::printf("skipped %s: not supported by this CPU\n", isa.name);
      continue;
    }
    std::vector<float> got(x.size()), want(x.size());
    const k::kernel_error e =
        isa.rope<float>().apply(table, in, k::dense(got.data(), tokens, heads, head_dim), pos);
    const k::kernel_error r = k::rope_reference<float>(
        table, in, k::dense(want.data(), tokens, heads, head_dim), pos, isa.fma);
    const bool ok = e == k::kernel_error::ok && r == k::kernel_error::ok && same_bits(got, want);
    std::printf("%s %s (fma: %s)\n", ok ? "ran" : "MISMATCH", isa.name,
                isa.fma == k::fma_mode::fused ? "yes" : "no");
    failures += ok ? 0 : 1;
    ++ran;
  }

  // The dispatcher's entry point, in place.
  std::vector<float> got = x, want(x.size());
  const k::kernel_error e =
      d::apply_rope(table, k::dense(got.data(), tokens, heads, head_dim), pos);
  const k::kernel_error r = k::rope_reference<float>(
      table, in, k::dense(want.data(), tokens, heads, head_dim), pos, d::active().fma);
  const bool ok = e == k::kernel_error::ok && r == k::kernel_error::ok && same_bits(got, want);
  std::printf("%s dispatch::apply_rope with %s\n", ok ? "ran" : "MISMATCH", d::active_isa());
  failures += ok ? 0 : 1;

  // The scalar entry is always compiled and supported, so at least one ISA ran; and positions
  // 60..67 rotate every pair, so output equal to the input means kernel and reference both did
  // nothing.
  if (ran == 0 || same_bits(got, x)) {
    std::printf("FAIL: %s\n", ran == 0 ? "no ISA ran" : "apply_rope left the input unchanged");
    ++failures;
  }
  std::printf("posenc %s: %s\n", POSENC_VERSION_STRING, failures == 0 ? "OK" : "FAILED");
  return failures == 0 ? 0 : 1;
}
