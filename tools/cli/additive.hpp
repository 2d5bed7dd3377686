// The `alibi` and `sinusoidal` commands: ALiBi slopes (and bias matrices) and sinusoidal position
// tables, computed by the library (posenc/tables, posenc/kernels) in full before anything is
// written, then printed as JSON, CSV or text.
//   alibi       json  {"heads": H, "variant": "causal", "slopes_kind": "reference",
//                      "slopes": [f32], "length": L,
//                      "bias": [[L*L values, row-major: query i, key j] per head]}
//                      (length and bias only with --length)
//               csv   head,slope                      (without --length)
//                     head,slope,query,key,bias       (with --length)
//   sinusoidal  json  {"dim": D, "layout": "paper", "padding_idx": P or null,
//                      "table": [[D values] per position 0..N-1]}
//               csv   position,column,value
//   text        aligned columns with a header line.
// The bias of head h is what posenc::kernels::add_alibi_bias adds to a block of zero scores with
// queries and keys at positions 0..L-1: -m_h (i - j) for j <= i; later keys are left untouched
// (0) in the causal variant; -m_h |i - j| everywhere in the symmetric one.
#pragma once

#include <posenc/spec/alibi.hpp>
#include <posenc/spec/sinusoidal.hpp>

#include <cstdint>
#include <ostream>
#include <vector>

#include "cli/options.hpp"

namespace posenc::cli {

// One call prints at most this many bias values (heads x L x L) or table entries (N x D).
inline constexpr std::uint64_t max_additive_entries = std::uint64_t{1} << 24;

struct alibi_result {
  alibi_config config;
  std::vector<float> slopes;
  std::uint64_t length = 0;  // 0: no bias
  std::vector<float> bias;   // [head][i * length + j]
};

// inv: an alibi invocation as parse_args accepts it. Throws cli_error (exit 1) when the bias would
// exceed max_additive_entries.
alibi_result compute_alibi(const invocation& inv);
// The parameters of an alibi or sinusoidal invocation with their sources, as the RoPE commands
// echo their configuration (docs/cli.md, "What was computed").
config_echo alibi_echo(const invocation& inv, const alibi_result& r);
void write_alibi(std::ostream& out, const alibi_result& r, output_format f,
                 const config_echo& echo);

struct sinusoidal_result {
  sinusoidal_config config;
  std::uint64_t positions = 0;
  std::vector<float> table;  // [p * dim + column]
};

// inv: a sinusoidal invocation. Throws cli_error (exit 1) for an invalid configuration (e.g.
// --base 1) or a table beyond max_additive_entries.
sinusoidal_result compute_sinusoidal(const invocation& inv);
config_echo sinusoidal_echo(const invocation& inv, const sinusoidal_result& r);
void write_sinusoidal(std::ostream& out, const sinusoidal_result& r, output_format f,
                      const config_echo& echo);

// The whole commands (compute, then write); return exit_ok. Throw cli_error.
int run_alibi(const invocation& inv, std::ostream& out);
int run_sinusoidal(const invocation& inv, std::ostream& out);

}  // namespace posenc::cli
