// Proofs for the additive encodings (sinusoidal, learned, ALiBi): static_asserts only; building this
// translation unit is the proof.
#include <posenc/kernels/alibi.hpp>
#include <posenc/kernels/learned.hpp>
#include <posenc/kernels/sinusoidal.hpp>
#include <posenc/spec/alibi.hpp>
#include <posenc/spec/learned.hpp>
#include <posenc/spec/sinusoidal.hpp>
#include <posenc/tables/alibi.hpp>
#include <posenc/tables/learned.hpp>
#include <posenc/tables/sinusoidal.hpp>

#include <cstddef>
#include <cstdint>

namespace {
using namespace posenc;

// ---------------------------------------------------------------------------------------------
// ALiBi: the reference sequence (get_slopes) for any head count.
struct alibi8 {
  static constexpr alibi_config config{8};
};
struct alibi12 {
  static constexpr alibi_config config{12};
};
struct alibi12_bloom {
  static constexpr alibi_config config{12, alibi_variant::causal, alibi_slope_kind::bloom};
};

constexpr double two_pow(int e) {
  double r = 1.0;
  for (; e > 0; --e) r *= 2.0;
  for (; e < 0; ++e) r *= 0.5;
  return r;
}

// n = 8: 2^-1 .. 2^-8, exactly.
constexpr bool slopes_of_8() {
  for (std::size_t h = 0; h < 8; ++h)
    if (alibi_slopes_v<alibi8, double>[h] != two_pow(-static_cast<int>(h) - 1)) return false;
  return true;
}
static_assert(slopes_of_8(), "ALiBi, 8 heads: slopes are 2^-1 .. 2^-8");

// n = 12: the 8 slopes of n = 8, then every other slope of n = 16: 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
// (the odd powers of 2^-1/2). The float64 values are products of rounded factors: start has
// relative error <= 2^-53, start^i <= (i + 1) 2^-53 after its rounding, the product <= (i + 3)
// 2^-53; the square doubles that and rounds once more, so compare squares with the exact
// 2^-(2j+1) (i = 2j) within (4j + 7) 2^-53 relative.
constexpr bool slopes_of_12() {
  for (std::size_t h = 0; h < 8; ++h)
    if (alibi_slopes_v<alibi12, double>[h] != alibi_slopes_v<alibi8, double>[h]) return false;
  for (int j = 0; j < 4; ++j) {
    const double s = alibi_slopes_v<alibi12, double>[8 + static_cast<std::size_t>(j)];
    const double exact_square = two_pow(-(2 * j + 1));
    const double diff = s * s - exact_square;
    if ((diff < 0 ? -diff : diff) > exact_square * (4 * j + 7) * 0x1p-53) return false;
  }
  // Not monotone across heads: head 8 (2^-0.5) is larger than head 0 (2^-1).
  return alibi_slopes_v<alibi12, double>[8] > alibi_slopes_v<alibi12, double>[0];
}
static_assert(slopes_of_12(), "ALiBi, 12 heads: 8 powers of 2^-1, then odd powers of 2^-1/2");

// float32 slopes are the float64 ones rounded once; BLOOM's agree with them for 12 heads (a power
// of two base, and odd powers of fl32(2^-1/2)) to within one float ulp.
constexpr bool float_slopes_12() {
  for (std::size_t h = 0; h < 12; ++h) {
    const float r = alibi_slopes_v<alibi12, float>[h];
    if (r != static_cast<float>(alibi_slopes_v<alibi12, double>[h])) return false;
    const float b = alibi_slopes_v<alibi12_bloom, float>[h];
    const double diff = static_cast<double>(b) - static_cast<double>(r);
    if ((diff < 0 ? -diff : diff) > static_cast<double>(r) * 0x1p-23) return false;
    if (h < 8 && b != r) return false;  // powers of two: exact in both
  }
  return true;
}
static_assert(float_slopes_12(), "ALiBi, 12 heads: float32 and BLOOM slopes");

// Any head count: the first c = 2^floor(log2 n) slopes are those of c heads, and the rest are
// every other slope of 2c heads.
constexpr bool reference_sequence(std::uint32_t n) {
  const std::uint32_t c = alibi_power_of_two_heads(n);
  for (std::uint32_t h = 0; h < c; ++h)
    if (alibi_reference_slope(n, h) != alibi_reference_slope(c, h)) return false;
  for (std::uint32_t j = 0; j < n - c; ++j)
    if (alibi_reference_slope(n, c + j) != alibi_reference_slope(2 * c, 2 * j)) return false;
  return true;
}
static_assert(reference_sequence(5) && reference_sequence(24) && reference_sequence(40) &&
                  reference_sequence(112),
              "ALiBi: non-power-of-two head counts interleave the next power's slopes");

// ---------------------------------------------------------------------------------------------
// Sinusoidal tables.
struct paper_16 {
  static constexpr sinusoidal_config config{16, sinusoidal_layout::paper};
};
struct split_9_pad1 {
  static constexpr sinusoidal_config config{9, sinusoidal_layout::split, 10000.0, 1};
};
struct paper_7 {
  static constexpr sinusoidal_config config{7, sinusoidal_layout::paper};
};

constexpr auto& t16 = sinusoidal_table_v<paper_16, float, 8>;
constexpr auto& t9 = sinusoidal_table_v<split_9_pad1, float, 8>;
constexpr auto& t7 = sinusoidal_table_v<paper_7, float, 4>;

// Row 0 of the paper layout is [0, 1, 0, 1, ...].
constexpr bool paper_row0() {
  for (std::size_t c = 0; c < 16; ++c)
    if (t16.at(0, c) != (c % 2 == 0 ? 0.0f : 1.0f)) return false;
  return true;
}
static_assert(paper_row0(), "sinusoidal paper layout: row 0 is [0, 1, 0, 1, ...]");

// Column 0 is sin(p) (w_0 = 1) and column 1 cos(p), correctly rounded.
static_assert(t16.at(1, 0) == math::sin(1.0f) && t16.at(1, 1) == math::cos(1.0f) &&
                  t16.at(5, 0) == math::sin(5.0f),
              "sinusoidal paper layout: w_0 = 1");

// Split layout, odd d = 9: half = 4, the last column is 0 in every row, the padding row is zero,
// w_{half-1} = 1e-4 (so column 3 is sin(p / 10000), here p = 3).
constexpr bool split_odd() {
  for (std::size_t p = 0; p < 8; ++p) {
    if (t9.at(p, 8) != 0.0f) return false;
    if (p == 1) {
      for (std::size_t c = 0; c < 9; ++c)
        if (t9.at(p, c) != 0.0f) return false;
    }
  }
  return t9.at(0, 0) == 0.0f && t9.at(0, 4) == 1.0f && t9.at(2, 0) == math::sin(2.0f) &&
         t9.at(2, 4) == math::cos(2.0f) &&
         t9.at(3, 3) == math::round_to<float>(math::sincos(math::dd{3.0, 0.0} / 10000.0).sin);
}
static_assert(split_odd(), "sinusoidal split layout: zero column, padding row, w_{half-1} = 1e-4");

// Odd paper d = 7: 4 sin columns, 3 cos columns; the last column is a sin.
static_assert(t7.at(0, 6) == 0.0f && t7.at(0, 5) == 1.0f,
              "sinusoidal paper layout, odd d: the last column is sin");

// Compile-time table == the per-entry definition == the runtime builder run at compile time.
constexpr bool table_matches_entries() {
  float rt[8 * 9]{};
  if (build_sinusoidal_table<float>(split_9_pad1::config, 8, rt) != sinusoidal_error::ok)
    return false;
  for (std::uint32_t p = 0; p < 8; ++p) {
    for (std::uint32_t c = 0; c < 9; ++c) {
      if (t9.at(p, c) != sinusoidal_entry<float>(split_9_pad1::config, p, c)) return false;
      if (rt[p * 9 + c] != t9.at(p, c)) return false;
    }
  }
  return true;
}
static_assert(table_matches_entries(), "sinusoidal: compile-time table == entries == builder");

// PE_{t+D} = T_D PE_t: for each frequency, (sin, cos) at t + D is (sin, cos) at t rotated by D w.
// Float entries are within 2^-25 of exact; the rotation of rounded entries adds at most
// (|sin| + |cos|) 2^-25 <= sqrt(2) 2^-25, and the double arithmetic ~2^-52: bound 3 * 2^-25.
constexpr bool translation_law() {
  for (std::size_t t = 0; t + 3 < 8; ++t) {
    for (std::size_t k = 0; k < 8; ++k) {
      const double s = t16.at(t, 2 * k), c = t16.at(t, 2 * k + 1);
      for (std::size_t dlt = 1; dlt <= 3; ++dlt) {
        const double sd = t16.at(dlt, 2 * k), cd = t16.at(dlt, 2 * k + 1);
        // Rotation by D w from the float table too: its entries add another sqrt(2) 2^-25.
        const double s2 = s * cd + c * sd, c2 = c * cd - s * sd;
        const double es = s2 - t16.at(t + dlt, 2 * k), ec = c2 - t16.at(t + dlt, 2 * k + 1);
        if ((es < 0 ? -es : es) > 5 * 0x1p-25 || (ec < 0 ? -ec : ec) > 5 * 0x1p-25) return false;
      }
    }
  }
  return true;
}
static_assert(translation_law(), "sinusoidal: PE_{t+D} = T_D PE_t");

// ---------------------------------------------------------------------------------------------
// Learned tables: lookups past the end have no row.
constexpr learned_table<float, 4, 2, 2> opt_like{{0, 0, 0, 0, 1, 2, 3, 4}};
static_assert(opt_like.positions() == 2 && opt_like.lookup(0) == opt_like.data + 4 &&
                  opt_like.lookup(1) == opt_like.data + 6 && opt_like.lookup(2) == nullptr,
              "learned: offset 2, position p reads row p + 2, none past the end");
static_assert(validate(presets::opt_125m::config) == learned_error::ok &&
                  learned_rows(presets::opt_125m::config) == 2050 &&
                  validate(learned_config{0, 8, 0}) == learned_error::positions,
              "learned: OPT has 2050 rows; zero positions are rejected");

// Spec rules.
static_assert(validate(sinusoidal_config{0}) == sinusoidal_error::dim &&
                  validate(sinusoidal_config{1, sinusoidal_layout::split}) ==
                      sinusoidal_error::split_dim &&
                  validate(sinusoidal_config{8, sinusoidal_layout::paper, 1.0}) ==
                      sinusoidal_error::base &&
                  validate(alibi_config{0}) == alibi_error::heads,
              "spec rules of the additive encodings");
}  // namespace
