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

#include <concepts>
#include <cstdint>

namespace posenc {

struct learned_config {
  std::uint32_t max_positions = 0;  // usable positions: 0 .. max_positions - 1
  std::uint32_t dim = 0;            // width of a row
  std::uint32_t offset = 0;  // position p reads row p + offset; rows = max_positions + offset
};

enum class learned_error : std::uint8_t {
  ok,
  max_positions,  // max_positions must be positive
  dim,            // dim must be positive
  rows,           // max_positions + offset must fit in 32 bits
};

constexpr const char* message(learned_error e) {
  switch (e) {
    case learned_error::ok:
      return "posenc: ok";
    case learned_error::max_positions:
      return "posenc: learned max_positions must be positive";
    case learned_error::dim:
      return "posenc: learned dim must be positive";
    case learned_error::rows:
      return "posenc: learned max_positions + offset must be below 2^32";
  }
  return "posenc: unknown error";
}

constexpr bool satisfies(const learned_config& c, learned_error e) {
  switch (e) {
    case learned_error::ok:
      return true;
    case learned_error::max_positions:
      return c.max_positions > 0;
    case learned_error::dim:
      return c.dim > 0;
    case learned_error::rows:
      return std::uint64_t{c.max_positions} + c.offset <= 0xffffffffu;
  }
  return false;
}

inline constexpr learned_error all_learned_rules[] = {learned_error::max_positions,
                                                      learned_error::dim, learned_error::rows};

constexpr learned_error validate(const learned_config& c) {
  for (learned_error e : all_learned_rules)
    if (!satisfies(c, e)) return e;
  return learned_error::ok;
}

// Rows of the table: max_positions + offset.
constexpr std::uint32_t learned_rows(const learned_config& c) {
  return c.max_positions + c.offset;
}

// Published configurations (HF config.json max_position_embeddings / hidden_size).
namespace learned_presets {
inline constexpr learned_config bert_base{512, 768, 0};
inline constexpr learned_config gpt2{1024, 768, 0};
inline constexpr learned_config roberta_base{514, 768, 0};
inline constexpr learned_config opt_125m{2048, 768, 2};
}  // namespace learned_presets

// A compile-time learned encoding is a type with `static constexpr learned_config config`.
template <class S>
concept learned_spec = requires {
  { S::config } -> std::convertible_to<learned_config>;
};

namespace detail {
template <learned_spec S>
struct learned_spec_check {
  static constexpr learned_config c = S::config;
  static_assert(satisfies(c, learned_error::max_positions),
                "posenc: learned max_positions must be positive");
  static_assert(satisfies(c, learned_error::dim), "posenc: learned dim must be positive");
  static_assert(satisfies(c, learned_error::rows),
                "posenc: learned max_positions + offset must be below 2^32");
  static constexpr bool valid = validate(c) == learned_error::ok;
};
}  // namespace detail

template <learned_spec S>
inline constexpr learned_config checked_learned =
    (static_cast<void>(detail::learned_spec_check<S>::valid), detail::learned_spec_check<S>::c);

}  // namespace posenc
