// `posenc entropy` (docs/analysis.md, "Attention entropy"): the expected softmax entropy of one
// query's attention over L keys against the context length L, estimated by
// analysis::expected_entropy (posenc/analysis/entropy.hpp) from seeded random q and k, for
//   scaled    the configuration as given (its scaling and attention factor)
//   unscaled  the same configuration without scaling (analysis::unscaled)
//   tempered  the configuration as given with a query temperature (--temperature llama4|log-n)
// next to log L, the entropy of uniform attention (the largest there is). All curves use the
// same draws of q and k, so their differences are the encoding's, not the sampling's; --qk FILE
// gives one q and k instead of the draws.
//   csv   length,log_length,scaled,scaled_std_error,unscaled,unscaled_std_error
//         [,tempered,tempered_std_error,query_scale]
//   json  {"rotary_dim", "scaling", "samples", "seed", "temperature", ..., "points": [...]}
//   text  a table (the default without --format)
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <posenc/analysis/entropy.hpp>
#include <posenc/spec/attention_temperature.hpp>
#include <posenc/spec/rope.hpp>

#include "cli/options.hpp"
#include "cli/svg.hpp"

namespace posenc::cli {

// --lengths: at most this many context lengths.
inline constexpr std::size_t max_entropy_lengths = 64;
// The default --samples: the acceptance command (llama-3.1-8b, 1k:128k, two curves) runs in a few
// seconds with it (docs/analysis.md gives the times measured).
inline constexpr std::uint32_t default_entropy_samples = 128;
// The work budget in complex rotation steps: samples x curves x longest length x rotary pairs
// (about 1.5 ns a step with the exponentials at -O2, so some 25 s); --work-limit sets another.
inline constexpr std::uint64_t max_entropy_work = std::uint64_t{1} << 34;
// --qk FILE: at most 16 MiB (--max-input-bytes).
inline constexpr std::uint64_t max_qk_bytes = std::uint64_t{16} << 20;

// --lengths A:B (A, 2A, 4A, ... up to B) or a,b,c (strictly increasing); each an integer with an
// optional suffix k (x 1024) or M (x 1048576), 1 <= L <= analysis::max_entropy_length, at most
// max_entropy_lengths of them. Throws cli_error (exit 2) with the rule broken.
std::vector<std::uint64_t> parse_entropy_lengths(std::string_view text);

struct entropy_curve {
  std::string name;  // scaled, unscaled or tempered
  std::vector<analysis::entropy_point> points;
};

struct entropy_result {
  rope_config config{};  // the scaled configuration (its spans are not used after compute)
  std::uint32_t samples = 0;
  std::uint64_t seed = 0;
  std::string qk_file;  // --qk: the given q and k's file (samples 1, seed 0)
  attention_temperature temperature{};
  std::vector<std::uint64_t> lengths;
  std::vector<entropy_curve> curves;  // scaled, unscaled[, tempered]
};

// c must be valid. Throws cli_error: exit 1 beyond work_limit steps or for a rule of the library
// (analysis::message).
entropy_result compute_entropy(const rope_config& c, const attention_temperature& t,
                               const std::vector<std::uint64_t>& lengths, std::uint32_t samples,
                               std::uint64_t seed, std::uint64_t work_limit = max_entropy_work);

// The same curves for one given q and k (head_dim values each; the key k at every position):
// H of softmax(s(L-1) a^2 (R_{L-1} q).(R_j k)/sqrt(head_dim)) over j < L, through
// analysis::shared_key_logits and softmax_entropy, the estimator's own steps for one draw.
// Throws cli_error (exit 1) beyond work_limit steps.
entropy_result compute_entropy_of(const rope_config& c, const attention_temperature& t,
                                  const std::vector<std::uint64_t>& lengths,
                                  const std::vector<double>& q, const std::vector<double>& k,
                                  std::uint64_t work_limit = max_entropy_work);

// --qk FILE: {"q": [head_dim numbers], "k": [head_dim numbers]}, finite. Throws cli_error
// (exit 1).
void load_qk(const std::string& path, std::uint64_t max_bytes, std::uint32_t head_dim,
             std::vector<double>& q, std::vector<double>& k);
// `echo`: the configuration and where each value came from (docs/cli.md, "What was computed").
void write_entropy(std::ostream& out, const entropy_result& r, output_format f, bool text,
                   const config_echo& echo);
// Entropy against L (log2 x axis in tokens): one line per curve and log L dashed.
svg::plot entropy_plot(const entropy_result& r);

int run_entropy(const invocation& inv, std::ostream& out);

}  // namespace posenc::cli
