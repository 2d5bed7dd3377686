// What the proofs over the presets share (proofs/spec.cpp, proofs/frequencies.cpp): their names
// for the namespaces, bitwise and relative comparisons of doubles and double-doubles, and the
// iteration over presets::all.
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

namespace hana = boost::hana;
namespace pm = posenc::math;
namespace presets = posenc::presets;
using pm::dd;
using posenc::rope_config;
using posenc::rope_scaling;

// The same bits.
constexpr bool same(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}
constexpr bool same(dd a, dd b) {
  return same(a.hi, b.hi) && same(a.lo, b.lo);
}
// |a - b| <= rel |b|, the difference evaluated in double-double.
constexpr bool close_rel(dd a, dd b, double rel) {
  return pm::detail::fabs(pm::to_double(a - b)) <= rel * pm::detail::fabs(b.hi);
}
// a and b round to the same double and to the same float.
constexpr bool same_rounding(dd a, dd b) {
  return same(pm::to_double(a), pm::to_double(b)) &&
         std::bit_cast<std::uint32_t>(pm::to_float(a)) ==
             std::bit_cast<std::uint32_t>(pm::to_float(b));
}

constexpr rope_config with_scaling(rope_config c, const rope_scaling& s) {
  c.scaling = s;
  return c;
}

// law(hana::type_c<P>) for every preset.
template <class Law>
constexpr bool for_every_preset(Law law) {
  bool ok = true;
  hana::for_each(presets::all, [&](auto t) { ok = ok && law(t); });
  return ok;
}

// Whether no preset before P in presets::all has P's rotary_dim and base. Scaled variants built
// from a preset depend on it only through those two, so they are checked on the first of each.
template <class P>
constexpr bool first_of_its_shape() {
  bool reached = false, earlier = false;
  hana::for_each(presets::all, [&](auto t) {
    using Q = typename decltype(t)::type;
    if (std::is_same_v<Q, P>) reached = true;
    if (!reached && Q::config.rotary_dim == P::config.rotary_dim &&
        Q::config.base == P::config.base)
      earlier = true;
  });
  return !earlier;
}

}  // namespace posenc_proofs
