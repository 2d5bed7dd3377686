// Learned absolute position embeddings (docs/formulas.md §7): a table of `rows` trained
// vectors of width `dim`; position p reads row p + offset. There is no extrapolation: a position
// whose row is past the table is an error (kernel_error::position_out_of_range), never a read out
// of bounds.
//
// - BERT (HF BertEmbeddings): 512 rows, positions 0..511.
// - GPT-2 (HF GPT2Model wpe): 1024 rows.
// - RoBERTa / XLM-R (HF create_position_ids_from_input_ids): 514 rows; the position ids already
//   start at padding_idx + 1 = 2, so the offset is 0 and the caller passes those ids.
// - OPT (HF OPTLearnedPositionalEmbedding): 2050 rows, offset 2 (positions 0..2047 read rows
//   2..2049).
#pragma once

#include <cstdint>
#include <string_view>

#include <posenc/spec/rules.hpp>

namespace posenc {

struct learned_config {
  std::uint32_t positions = 0;  // usable positions: 0 .. positions - 1
  std::uint32_t dim = 0;        // width of a row
  std::uint32_t offset = 0;     // position p reads row p + offset; rows = positions + offset
};

enum class learned_error : std::uint8_t {
  ok,
  positions,  // positions must be positive
  dim,        // dim must be positive
  rows,       // positions + offset must fit in 32 bits
  max_positions [[deprecated("posenc: use learned_error::positions")]] = positions,
};

constexpr const char* message(learned_error e) {
  switch (e) {
    case learned_error::ok:
      return "posenc: ok";
    case learned_error::positions:
      return "posenc: learned positions must be positive";
    case learned_error::dim:
      return "posenc: learned dim must be positive";
    case learned_error::rows:
      return "posenc: learned positions + offset must be below 2^32";
  }
  return "posenc: unknown error";
}

constexpr bool satisfies(const learned_config& c, learned_error e) {
  switch (e) {
    case learned_error::ok:
      return true;
    case learned_error::positions:
      return c.positions > 0;
    case learned_error::dim:
      return c.dim > 0;
    case learned_error::rows:
      return std::uint64_t{c.positions} + c.offset <= 0xffffffffu;
  }
  return false;
}

inline constexpr learned_error all_learned_rules[] = {learned_error::positions, learned_error::dim,
                                                      learned_error::rows};

// The first rule c breaks, or learned_error::ok.
constexpr learned_error validate(const learned_config& c) {
  return spec_detail::first_broken_rule(c, all_learned_rules);
}

// Rows of the table: positions + offset.
constexpr std::uint32_t learned_rows(const learned_config& c) {
  return c.positions + c.offset;
}

// Published configurations (HF config.json max_position_embeddings / hidden_size), as specs:
// posenc::presets holds the preset of every encoding (the RoPE ones in spec/presets.hpp).
namespace presets {
struct bert_base {
  static constexpr std::string_view name = "bert-base";
  static constexpr learned_config config{512, 768, 0};
};
struct gpt2 {
  static constexpr std::string_view name = "gpt2";
  static constexpr learned_config config{1024, 768, 0};
};
struct roberta_base {
  static constexpr std::string_view name = "roberta-base";
  static constexpr learned_config config{514, 768, 0};
};
struct opt_125m {
  static constexpr std::string_view name = "opt-125m";
  static constexpr learned_config config{2048, 768, 2};
};
}  // namespace presets

// The configurations above under their earlier names.
namespace [[deprecated("posenc: use posenc::presets::<model>::config")]] learned_presets {
inline constexpr learned_config bert_base = presets::bert_base::config;
inline constexpr learned_config gpt2 = presets::gpt2::config;
inline constexpr learned_config roberta_base = presets::roberta_base::config;
inline constexpr learned_config opt_125m = presets::opt_125m::config;
}  // namespace learned_presets

// A compile-time learned encoding is a type with `static constexpr learned_config config`.
template <class S>
concept learned_spec = spec_detail::spec_of<S, learned_config>;

namespace spec_detail {
template <learned_spec S>
struct learned_spec_check {
  static constexpr learned_config c = S::config;
  static_assert(satisfies(c, learned_error::positions),
                "posenc: learned positions must be positive");
  static_assert(satisfies(c, learned_error::dim), "posenc: learned dim must be positive");
  static_assert(satisfies(c, learned_error::rows),
                "posenc: learned positions + offset must be below 2^32");
  static constexpr bool valid = validate(c) == learned_error::ok;
};
}  // namespace spec_detail

// S::config, validated at compile time (a broken rule stops compilation with its message).
template <learned_spec S>
inline constexpr learned_config checked_learned =
    spec_detail::checked_form<spec_detail::learned_spec_check<S>>;

}  // namespace posenc
