// Catch2's main for the aarch64 test executables (Catch2 v2 is header-only; the host's prebuilt
// Catch2WithMain is an x86 library), and the check that they test what they are meant to: the
// build-time architecture of every kernel entry point is xsimd's neon64, and the CPU they run on
// (qemu-aarch64) has it.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <posenc/kernels/rope.hpp>

#include <cstring>
#include <type_traits>

#include <xsimd/xsimd.hpp>

namespace pk = posenc::kernels;

static_assert(std::is_same_v<xsimd::default_arch, xsimd::neon64>,
              "the aarch64 tests must be built for xsimd's neon64 architecture");

TEST_CASE("cross: the kernels under test are the NEON64 ones, on a CPU that has NEON64",
          "[cross]") {
  INFO("build arch " << pk::build_arch_name << ", xsimd default arch "
                     << xsimd::default_arch::name());
  CHECK(std::strcmp(pk::build_arch_name, xsimd::neon64::name()) == 0);
  CHECK(std::strcmp(xsimd::default_arch::name(), xsimd::neon64::name()) == 0);
  CHECK(pk::build_fma_mode == pk::fma_mode::fused);
  CHECK(xsimd::available_architectures().neon64 == 1);
}
