// What the proofs over the presets share (proofs/spec.cpp, proofs/frequencies.cpp): bitwise and
// relative comparisons of doubles and double-doubles, and the iteration over presets::all.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include <boost/hana/for_each.hpp>

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/spec/presets.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc_proofs {

using posenc::math::dd;

// The same bits.
constexpr bool same(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}
constexpr bool same(dd a, dd b) {
  return same(a.hi, b.hi) && same(a.lo, b.lo);
}
// |a - b| <= rel |b|, the difference evaluated in double-double.
constexpr bool close_rel(dd a, dd b, double rel) {
  using posenc::math::detail::fabs;
  return fabs(posenc::math::to_double(a - b)) <= rel * fabs(b.hi);
}
// a and b round to the same double and to the same float.
constexpr bool same_rounding(dd a, dd b) {
  return same(posenc::math::to_double(a), posenc::math::to_double(b)) &&
         std::bit_cast<std::uint32_t>(posenc::math::to_float(a)) ==
             std::bit_cast<std::uint32_t>(posenc::math::to_float(b));
}

constexpr posenc::rope_config with_scaling(posenc::rope_config c, const posenc::rope_scaling& s) {
  c.scaling = s;
  return c;
}

// law(hana::type_c<P>) for every preset.
template <class Law>
constexpr bool for_every_preset(Law law) {
  bool ok = true;
  boost::hana::for_each(posenc::presets::all, [&](auto t) { ok = ok && law(t); });
  return ok;
}

// Whether no preset before P in presets::all has P's rotary_dim and base. Scaled variants built
// from a preset depend on it only through those two, so they are checked on the first of each.
template <class P>
constexpr bool first_of_its_shape() {
  bool reached = false, earlier = false;
  boost::hana::for_each(posenc::presets::all, [&](auto t) {
    using Q = typename decltype(t)::type;
    if (std::is_same_v<Q, P>) reached = true;
    if (!reached && Q::config.rotary_dim == P::config.rotary_dim &&
        Q::config.base == P::config.base)
      earlier = true;
  });
  return !earlier;
}

}  // namespace posenc_proofs
