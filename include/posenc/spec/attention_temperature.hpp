// Attention temperature: a per-position factor s(p) >= 1 that multiplies the query row at 0-based
// position p before q.k, sharpening the softmax as the context grows (docs/formulas.md §12).
//
// - llama4 (HF transformers src/transformers/models/llama4/modeling_llama4.py,
//   Llama4TextAttention.forward, `attn_temperature_tuning`; defaults floor_scale 8192 and
//   attn_scale 0.1 from configuration_llama4.py Llama4TextConfig):
//     s(p) = log(floor((p + 1) / floor_scale) + 1) * attn_scale + 1
//   HF applies it on NoPE layers only (spec/layer_plan.hpp marks them). HF forms p + 1 and the
//   quotient in float32, so from p + 1 > 2^24 its floor can differ from the exact one used here.
// - logn (Qwen-7B modeling_qwen.py, QWenAttention: `logn_list`, `use_logn_attn`; L is the
//   config's seq_length, the training length):
//     s(p) = log(p + 1) / log(L)  when p + 1 > L,  1 otherwise
//   Qwen tabulates it for p + 1 < 32768 and applies it only once the key length passes L; the
//   factor itself is the one above.
// YaRN's mscale is not a per-position factor: it is rope_config's attention factor
// (attention_factor in frequencies/rope.hpp), applied to cos and sin of every position.
//
// Both factors are constexpr in double-double (math::log, error ~2^-100 relative) and rounded once
// to float or double; both are >= 1 and non-decreasing in p (the proofs in
// proofs/temperature.cpp check it on tables of every kind).
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include <posenc/math/detail/fp_bits.hpp>
#include <posenc/math/double_double.hpp>
#include <posenc/math/log.hpp>
#include <posenc/math/rounding.hpp>
#include <posenc/spec/rules.hpp>

namespace posenc {

enum class temperature_kind : std::uint8_t { none, llama4, logn };

struct attention_temperature {
  temperature_kind kind = temperature_kind::none;
  double floor_scale = 8192.0;   // llama4; HF Llama4TextConfig default
  double attn_scale = 0.1;       // llama4; HF Llama4TextConfig default
  std::uint64_t seq_length = 0;  // logn: the training length L (Qwen config seq_length)
  friend constexpr bool operator==(const attention_temperature&,
                                   const attention_temperature&) = default;
};

namespace temperature {
constexpr attention_temperature none() {
  return {};
}
constexpr attention_temperature llama4(double floor_scale = 8192.0, double attn_scale = 0.1) {
  return {temperature_kind::llama4, floor_scale, attn_scale, 0};
}
constexpr attention_temperature logn(std::uint64_t seq_length) {
  return {temperature_kind::logn, 8192.0, 0.1, seq_length};
}
}  // namespace temperature

// ---- rules -----------------------------------------------------------------------------------

// Positions p with p + 1 <= 2^51 (exact in a double, and within detail::floor's range).
inline constexpr std::uint64_t max_temperature_position = (std::uint64_t{1} << 51) - 1;

enum class temperature_error : std::uint8_t {
  ok,
  kind,
  floor_scale,
  attn_scale,
  seq_length,
  position,
};

constexpr const char* message(temperature_error e) {
  switch (e) {
    case temperature_error::ok:
      return "ok";
    case temperature_error::kind:
      return "posenc: unknown attention temperature kind";
    case temperature_error::floor_scale:
      return "posenc: llama4 temperature needs a finite floor_scale >= 1";
    case temperature_error::attn_scale:
      return "posenc: llama4 temperature needs a finite attn_scale >= 0";
    case temperature_error::seq_length:
      return "posenc: logn temperature needs a training length seq_length >= 2 and < 2^51";
    case temperature_error::position:
      return "posenc: attention temperature positions must satisfy p + 1 <= 2^51";
  }
  return "posenc: unknown temperature error";
}

constexpr bool satisfies(const attention_temperature& t, temperature_error e) {
  using math::detail::is_finite;
  const bool llama4 = t.kind == temperature_kind::llama4;
  switch (e) {
    case temperature_error::ok:
    case temperature_error::position:
      return true;
    case temperature_error::kind:
      return t.kind == temperature_kind::none || llama4 || t.kind == temperature_kind::logn;
    case temperature_error::floor_scale:
      return !llama4 || (is_finite(t.floor_scale) && t.floor_scale >= 1.0);
    case temperature_error::attn_scale:
      return !llama4 || (is_finite(t.attn_scale) && t.attn_scale >= 0.0);
    case temperature_error::seq_length:
      return t.kind != temperature_kind::logn ||
             (t.seq_length >= 2 && t.seq_length <= max_temperature_position);
  }
  return false;
}

inline constexpr temperature_error all_temperature_rules[] = {
    temperature_error::kind,
    temperature_error::floor_scale,
    temperature_error::attn_scale,
    temperature_error::seq_length,
};

constexpr temperature_error validate(const attention_temperature& t) {
  return spec_detail::first_broken_rule(t, all_temperature_rules);
}

// ---- the factor ------------------------------------------------------------------------------

namespace spec_detail {
// floor((p + 1) / f) exactly for p + 1 <= 2^51, f >= 1: the double-double quotient is within
// 2^-104 relative, so its floor is off by at most one near an integer; q f is exact as a
// two_prod, and the comparisons with p + 1 settle it.
constexpr double llama4_floor(std::uint64_t p, double f) {
  const double n = static_cast<double>(p + 1);
  double q = math::detail::floor(math::to_double(math::dd{n} / f));
  if (math::dd{n} < math::two_prod(q, f)) q -= 1.0;
  if (!(math::dd{n} < math::two_prod(q + 1.0, f))) q += 1.0;
  return q;
}
}  // namespace spec_detail

// s(p) in double-double; t must be valid and p <= max_temperature_position.
constexpr math::dd query_scale_dd(const attention_temperature& t, std::uint64_t p) {
  switch (t.kind) {
    case temperature_kind::none:
      return math::dd{1.0};
    case temperature_kind::llama4: {
      const double q = spec_detail::llama4_floor(p, t.floor_scale);
      if (q == 0.0) return math::dd{1.0};
      return math::log(math::dd{q} + 1.0) * t.attn_scale + 1.0;
    }
    case temperature_kind::logn: {
      if (p + 1 <= t.seq_length) return math::dd{1.0};
      return math::log(math::dd{static_cast<double>(p + 1)}) /
             math::log(math::dd{static_cast<double>(t.seq_length)});
    }
  }
  return math::dd{1.0};
}

// s(p) rounded once to T (float or double).
template <class T>
constexpr T query_scale(const attention_temperature& t, std::uint64_t p) {
  return math::round_to<T>(query_scale_dd(t, p));
}

// Writes s(first), ..., s(first + out.size() - 1) to out, or nothing and the broken rule when t
// breaks one or a position passes max_temperature_position.
template <class T>
constexpr temperature_error query_scale_table(const attention_temperature& t, std::uint64_t first,
                                              std::span<T> out) {
  if (const temperature_error e = validate(t); e != temperature_error::ok) return e;
  if (first > max_temperature_position ||
      out.size() > max_temperature_position - first + 1)  // last position past the limit
    return temperature_error::position;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = query_scale<T>(t, first + i);
  return temperature_error::ok;
}

// ---- compile-time specs ----------------------------------------------------------------------

// A type with `static constexpr attention_temperature config`.
template <class S>
concept temperature_spec = spec_detail::spec_of<S, attention_temperature>;

namespace spec_detail {
template <temperature_spec S>
struct temperature_check {
  static constexpr attention_temperature c = S::config;
  static_assert(satisfies(c, temperature_error::kind),
                "posenc: unknown attention temperature kind");
  static_assert(satisfies(c, temperature_error::floor_scale),
                "posenc: llama4 temperature needs a finite floor_scale >= 1");
  static_assert(satisfies(c, temperature_error::attn_scale),
                "posenc: llama4 temperature needs a finite attn_scale >= 0");
  static_assert(satisfies(c, temperature_error::seq_length),
                "posenc: logn temperature needs a training length seq_length >= 2 and < 2^51");
  static constexpr bool valid = validate(c) == temperature_error::ok;
};
}  // namespace spec_detail

template <temperature_spec S>
inline constexpr attention_temperature checked_temperature =
    spec_detail::checked_form<spec_detail::temperature_check<S>>;

// s(First), ..., s(First + N - 1) of S as a constexpr array of T.
template <temperature_spec S, class T, std::size_t N, std::uint64_t First = 0>
inline constexpr std::array<T, N> query_scale_table_v = [] {
  constexpr attention_temperature t = checked_temperature<S>;
  static_assert(First <= max_temperature_position && N <= max_temperature_position - First + 1,
                "posenc: attention temperature positions must satisfy p + 1 <= 2^51");
  std::array<T, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = query_scale<T>(t, First + i);
  return out;
}();

}  // namespace posenc
