// Storage types of the kernels: float32 is computed in, and stored as float32, bfloat16 or
// IEEE binary16. bf16 and f16 are 16-bit bit containers (no arithmetic of their own): kernels
// widen to float exactly, compute in float, and narrow once with round-to-nearest-even.
//
// bfloat16 is the top half of a binary32 (Google Brain's format; the rounding is the one of
// PyTorch's c10/util/BFloat16.h round_to_nearest_even, NaN kept quiet). binary16 is IEEE 754-2008
// binary16 with subnormals; float -> f16 rounds to nearest even, overflows to infinity, keeps NaN.
//
// Where the compiler has the arithmetic type _Float16 in C++ (POSENC_HAS_FLOAT16 below), it is a
// storage type too, so that tensors an engine already holds as _Float16 need no cast: the kernels
// read and write its bits exactly as they do an f16's (same widening, same rounding, the same
// bits). There is no such alternative for bf16: GCC 12 has no __bf16 on x86-64, and Clang 16's
// __bf16 converts to nothing, so posenc::bf16 is the only bfloat16 storage type.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

// POSENC_HAS_FLOAT16: 1 where _Float16 can be used in C++, else 0. Clang defines the __FLT16_*
// macros exactly where it accepts the type (x86 with SSE2, ARM, AArch64, ...). GCC defines them
// wherever C has the type, but before GCC 13 its C++ front end accepts _Float16 on x86 only
// (GCC 12: with SSE2); aarch64-linux-gnu-g++ 12, for one, defines the macros and rejects the type.
#if defined(__FLT16_MANT_DIG__) && defined(__clang__)
#define POSENC_HAS_FLOAT16 1
#elif defined(__FLT16_MANT_DIG__) && defined(__GNUC__) && \
    (__GNUC__ >= 13 || (__GNUC__ == 12 && (defined(__x86_64__) || defined(__i386__))))
#define POSENC_HAS_FLOAT16 1
#else
#define POSENC_HAS_FLOAT16 0
#endif

namespace posenc {

struct bf16 {
  std::uint16_t bits = 0;
  friend constexpr bool operator==(bf16, bf16) = default;
};

struct f16 {
  std::uint16_t bits = 0;
  friend constexpr bool operator==(f16, f16) = default;
};

// Exact: every bf16 is a float.
constexpr float to_float(bf16 h) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h.bits) << 16);
}

// Round to nearest even; NaN stays NaN (quiet), infinities stay infinite.
constexpr bf16 to_bf16(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((u >> 16) | 0x0040u)};
  const std::uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
  return {static_cast<std::uint16_t>(rounded >> 16)};
}

// Exact: every binary16 is a float.
constexpr float to_float(f16 h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h.bits & 0x8000u) << 16;
  const std::uint32_t exp = (h.bits >> 10) & 0x1fu;
  std::uint32_t mant = h.bits & 0x3ffu;
  if (exp == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);
  // Subnormal: mant * 2^-24, normalised.
  std::uint32_t e = 113u;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

// Round to nearest even (subnormal results included); overflow gives infinity; NaN stays NaN.
constexpr f16 to_f16(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) {
    return {static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu))};
  }
  if (a >= 0x477ff000u) return {static_cast<std::uint16_t>(sign | 0x7c00u)};  // >= 65520: inf
  if (a < 0x38800000u) {
    // Result subnormal or zero: value = a_float; units of 2^-24.
    if (a < 0x33000000u) return {sign};  // < 2^-25: rounds to 0 (2^-25 itself ties to even 0)
    const std::uint32_t e = a >> 23;     // biased exponent, 102..112
    const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - e;  // m * 2^(e-150) / 2^-24 = m >> (126 - e)
    const std::uint32_t q = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    const std::uint32_t r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
    return {static_cast<std::uint16_t>(sign | r)};
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest even.
  const std::uint32_t v = a - 0x38000000u;
  const std::uint32_t r = (v + 0xfffu + ((v >> 13) & 1u)) >> 13;
  return {static_cast<std::uint16_t>(sign | r)};
}

#if POSENC_HAS_FLOAT16
static_assert(sizeof(_Float16) == sizeof(f16) && alignof(_Float16) == alignof(f16),
              "posenc: _Float16 and f16 must both be 2 bytes, 2-byte aligned");
#endif

namespace kernels::detail {
template <class T>
inline constexpr bool is_float16 =
#if POSENC_HAS_FLOAT16
    std::is_same_v<T, _Float16>;
#else
    false;
#endif
}  // namespace kernels::detail

// The element types kernels store: float, bf16 and f16, and _Float16 where POSENC_HAS_FLOAT16.
template <class T>
concept storage_type = std::is_same_v<T, float> || std::is_same_v<T, bf16> ||
    std::is_same_v<T, f16> || kernels::detail::is_float16<T>;

// Storage-generic load and store (float is the identity).
constexpr float load_float(float x) {
  return x;
}
constexpr float load_float(bf16 x) {
  return to_float(x);
}
constexpr float load_float(f16 x) {
  return to_float(x);
}
#if POSENC_HAS_FLOAT16
// Through the bits, so that a _Float16 and an f16 holding the same bits give the same float (a
// signalling NaN included, which a hardware conversion would make quiet).
constexpr float load_float(_Float16 x) {
  return to_float(f16{std::bit_cast<std::uint16_t>(x)});
}
#endif

template <storage_type T>
constexpr T store_as(float x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else if constexpr (std::is_same_v<T, bf16>) {
    return to_bf16(x);
  } else if constexpr (std::is_same_v<T, f16>) {
    return to_f16(x);
  } else {
    // _Float16: to_f16's bits (the same rounding as the compiler's conversion, which the tests
    // check, and the same NaN as f16 storage gets).
    return std::bit_cast<T>(to_f16(x).bits);
  }
}

// Name of a storage type, for messages and benchmark labels.
template <storage_type T>
constexpr const char* storage_name() {
  if constexpr (std::is_same_v<T, float>) {
    return "f32";
  } else if constexpr (std::is_same_v<T, bf16>) {
    return "bf16";
  } else {
    return "f16";
  }
}

}  // namespace posenc
