// `posenc apply`: RoPE applied to tensors read from JSON or .npy files (docs/cli.md), with the
// runtime-dispatch kernels (posenc/kernels/dispatch.hpp; the ISA this CPU supports best, or
// POSENC_ISA).
//
// Input:  {"x": [flat numbers], "shape": [3 or 4 dims], "positions": [ints]}, or a .npy of float32
//         or float16 (npy.hpp); the dimensions by --shape-order (THD, BHTD, BTHD); positions
//         optional (default 0 .. tokens-1 in every batch row), one per token or per batch row and
//         token, each 0 <= p < 2^32. No other keys. q and k (--input-k) in one call.
// Output: {"y": [...]} in the same order (json), or a .npy of the input's dtype (--output); csv
//         and text: one row per (batch row, token, head).
// Multi-axis RoPE (spec/mrope.hpp): an M-RoPE configuration (a model preset such as qwen2-vl-7b,
// a config.json with rope_scaling.mrope_section, or --mrope-section) takes three position streams
// (temporal, height, width), 2-D axial RoPE (pixtral-12b) two (height, width): "positions" holds
// S x tokens or S x batch x tokens integers, stream-major (HF's position_ids [3, batch, tokens]
// flattened in C order), and --position-ids a .npy [S, tokens] or [S, batch, tokens]. Without
// positions M-RoPE takes 0, 1, ... on every stream (HF's get_rope_index for text only); 2-D needs
// them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <posenc/spec/layer_plan.hpp>
#include <posenc/spec/mrope.hpp>
#include <posenc/spec/rope.hpp>

#include <posenc/kernels/storage.hpp>

#include "cli/npy.hpp"
#include "cli/options.hpp"

namespace posenc::cli {

// Default limits of one call: at most 2^24 elements in x, input files of at most 1 GiB
// (--max-elements, --max-input-bytes).
inline constexpr std::uint64_t max_apply_elements = std::uint64_t{1} << 24;
inline constexpr std::uint64_t max_apply_file_bytes = std::uint64_t{1} << 30;

// One tensor of `apply` (x or q; k), with its positions. The dimensions are those of the shape
// order: THD [tokens, heads, head_dim], BHTD [batch, heads, tokens, head_dim] (HF's query_states),
// BTHD [batch, tokens, heads, head_dim]; batch is 1 for THD.
struct apply_input {
  shape_order order = shape_order::thd;
  std::vector<std::uint64_t> shape;  // as given: 3 or 4 dimensions
  std::size_t batch = 1;
  std::size_t tokens = 0;
  std::size_t heads = 0;
  std::size_t head_dim = 0;
  npy_dtype dtype = npy_dtype::f32;  // f32 for JSON
  std::vector<float> x;              // f32: the elements in the file's order, finite
  std::vector<f16> x16;              // f16: the same, finite
  // streams * batch * tokens: stream s's row b's token t at [(s * batch + b) * tokens + t]
  std::vector<std::int64_t> positions;
  bool positions_given = false;  // from the file or --position-ids (else 0, 1, ...)
  std::size_t streams = 1;       // position streams: 1 (RoPE), 3 (M-RoPE), 2 (2-D axial)
};

// The multi-axis form of apply's configuration (none: 1-D RoPE).
struct multi_axis {
  rotary_form form = rotary_form::one_d;
  std::array<std::uint32_t, 3> mrope_section{};                    // mrope
  mrope_layout section_layout = mrope_layout::contiguous;          // mrope
  axial_frequencies frequencies = axial_frequencies::alternating;  // axial
  std::size_t streams() const {
    return form == rotary_form::mrope   ? mrope_streams
           : form == rotary_form::axial ? axial_streams
                                        : 1;
  }
};

// Parses and checks JSON input text (`name` is the file name for messages), with at most
// max_elements numbers in x. `order` is --shape-order: a 3-D shape is THD unless it says
// otherwise, a 4-D one needs it. Throws cli_error (exit 1) with a one-line message on the first
// problem.
apply_input parse_apply_input(std::string_view text, const std::string& name,
                              std::uint64_t max_elements = max_apply_elements,
                              std::optional<shape_order> order = {}, std::size_t streams = 1);

// An unknown POSENC_ISA, or one this CPU cannot run, is an error (exit 1) naming the ISAs this
// machine can run: the library's dispatcher would fall back to its own choice without a word.
void require_valid_isa_request();

// Reads and parses the file, JSON or .npy (told apart by the .npy magic; at most max_bytes;
// --max-input-bytes, --max-elements). Throws cli_error (exit 1).
apply_input load_apply_input(const std::string& path,
                             std::uint64_t max_bytes = max_apply_file_bytes,
                             std::uint64_t max_elements = max_apply_elements,
                             std::optional<shape_order> order = {}, std::size_t streams = 1);

// Sets in.positions from a .npy of int32 or int64 ids, [tokens] (every batch row) or
// [batch, tokens] (HF's position_ids), each 0 <= p < 2^32; with in.streams = S > 1,
// [S, tokens] or [S, batch, tokens]. Throws cli_error (exit 1).
void load_position_ids(apply_input& in, const std::string& path, std::uint64_t max_bytes,
                       std::uint64_t max_elements);

struct apply_result {
  shape_order order = shape_order::thd;
  std::vector<std::uint64_t> shape;
  std::size_t batch = 1;
  std::size_t tokens = 0;
  std::size_t heads = 0;
  std::size_t head_dim = 0;
  std::vector<std::int64_t> positions;  // streams * batch * tokens
  multi_axis axes;                      // the positions' streams
  npy_dtype dtype = npy_dtype::f32;
  std::vector<float> y;  // f32
  std::vector<f16> y16;  // f16: each rounded once from the float32 rotation
  const char* isa = "";  // the kernels that ran (dispatch::active_isa())
};

// HF's seq_len for one call: the largest position + 1 (LlamaRotaryEmbedding's dynamic_rope_update
// and longrope_frequency_update, src/transformers/modeling_rope_utils.py, take
// torch.max(position_ids) + 1 over the whole batch).
std::uint64_t hf_seq_len(const apply_input& in);

// RoPE of c applied to in's tensor, batch row by batch row with the row's positions: a cos/sin
// table for positions [0, max + 1) when that has at most 2^24 entries
// (runtime_rope_cache<float>), else every row computed on the fly (the same bits). c must be
// valid. Throws cli_error (exit 1) if in does not fit c (head_dim, rotary_dim) or a result is not
// finite in the tensor's dtype.
// With a multi-axis form m, pair i turns by the position of its stream (tables/mrope.hpp's pair
// sources); m must fit c (checked: exit 1 with the library's message) and in.streams be
// m.streams().
apply_result compute_apply(const rope_config& c, const apply_input& in, std::uint64_t seq_len,
                           const multi_axis& m = {});

// JSON {"config": {...}, "y": [...]} (and "y_k" for k), CSV or text (after the echo's header).
// csv and text take one tensor (k null).
void write_apply(std::ostream& out, const apply_result& r, output_format f, const config_echo& echo,
                 const apply_result* k = nullptr);

// The whole `apply` command: input, configuration (head_dim defaults to shape[2] when no flag,
// preset or config.json gives one), kernels, output. Returns exit_ok; throws cli_error.
int run_apply(const invocation& inv, std::ostream& out);

}  // namespace posenc::cli
