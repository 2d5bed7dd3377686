// `posenc t5-bias` (docs/cli.md, docs/additive.md): the T5 relative position bucket
// (posenc/tables/t5.hpp, t5_bucket; HF T5Attention._relative_position_bucket) of each relative
// position rel = key position - query position, for
//   --relative-positions A:B   rel = A .. B-1 (default -max_distance .. max_distance, which
//                              covers every bucket), or
//   --query-length Q --key-length K   the Q x K matrix of HF's compute_bias (query i, key j,
//                              rel = j - i),
// with --num-buckets (default 32), --max-distance (default 128), --bidirectional (the default,
// encoders) or --causal (decoders), --log hf-float32 (HF's float32 log, the default) or exact.
// --weights FILE: HF's relative_attention_bias.weight as a float32 .npy [num_buckets, heads]
// (row = bucket); then also each head's bias, weights[bucket][h] (compute_bias's values).
//   csv   relative_position,bucket[,bias_0,...]  |  query,key,relative_position,bucket[,bias_0,...]
//   json  {"num_buckets", "max_distance", "direction", "log", "max_exact",
//          "relative_position": [...], "bucket": [...][, "heads", "bias": [[...] per head]]}
//         | ..., "bucket": [[per key] per query][, "heads", "bias": [[[per key] per query]
//         per head]] (HF's [heads, query, key])
//   text  aligned columns (with --weights, one bias column per head)
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

#include <posenc/spec/t5.hpp>

#include "cli/options.hpp"

namespace posenc::cli {

// One call prints at most 2^20 relative positions or 2^24 matrix entries; relative positions
// have |rel| <= 2^32.
inline constexpr std::uint64_t max_t5_relative_positions = std::uint64_t{1} << 20;
inline constexpr std::uint64_t max_t5_matrix_entries = std::uint64_t{1} << 24;
inline constexpr std::int64_t t5_relative_limit = std::int64_t{1} << 32;
// --weights: a file of at most 64 MiB (--max-input-bytes), num_buckets x heads <= 2^24 values; the
// bias output (positions or matrix entries x heads) at most 2^24 values.
inline constexpr std::uint64_t max_t5_weights_bytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t max_t5_bias_values = std::uint64_t{1} << 24;

// --relative-positions A:B with integers -2^32 <= A < B <= 2^32 + 1 and at most
// max_t5_relative_positions of them. Throws cli_error (exit 2).
t5_relative_range parse_t5_relative_range(std::string_view text);

int run_t5_bias(const invocation& inv, std::ostream& out);

}  // namespace posenc::cli
