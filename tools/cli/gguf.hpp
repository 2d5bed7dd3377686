// Reading the metadata of a llama.cpp GGUF file into a config_draft (`--gguf FILE`).
//
// Layout (ggml-org/ggml, docs/gguf.md): little-endian; the magic "GGUF", a uint32 version (2 and 3
// share this layout; 1 had 32-bit lengths), uint64 tensor_count, uint64 metadata_kv_count, then
// the key/value pairs: a key (gguf_string_t: uint64 length, bytes), a uint32 value type and the
// value. Types: 0 uint8, 1 int8, 2 uint16, 3 int16, 4 uint32, 5 int32, 6 float32, 7 bool (one byte,
// 0 or 1), 8 string, 9 array (uint32 element type, uint64 count, elements), 10 uint64, 11 int64,
// 12 float64. Only the header and the key/value pairs are read: the tensor infos and the tensor
// data that follow are never touched.
//
// Keys (docs/gguf.md, "Standardized key-value pairs"; llama.cpp's names in src/llama-arch.cpp and
// gguf-py/gguf/constants.py), with ARCH = general.architecture:
//   ARCH.rope.freq_base                  base
//   ARCH.attention.key_length            head_dim; else ARCH.embedding_length /
//                                        ARCH.attention.head_count (docs/gguf.md: "If not
//                                        specified, it will be n_embd / n_head"); deepseek2 rotates
//                                        its rope slice only: head_dim = ARCH.rope.dimension_count,
//                                        as --hf-config's qk_rope_head_dim
//   ARCH.rope.dimension_count            rotary_dim
//   ARCH.context_length                  max_position_embeddings
//   ARCH.rope.scaling.type               none, linear, yarn, longrope; absent: linear when a factor
//                                        other than 1 is given (llama.cpp's default), else none
//   ARCH.rope.scaling.factor, else ARCH.rope.scale_linear (older files)   factor
//   ARCH.rope.scaling.original_context_length original_max_position_embeddings
//   ARCH.rope.scaling.yarn_beta_fast, ARCH.rope.scaling.yarn_beta_slow     beta_fast, beta_slow
//   ARCH.rope.dimension_sections         mrope_section (M-RoPE: llama.cpp's
//                                        LLM_KV_ROPE_DIMENSION_SECTIONS, an array of 4 integers
//                                        that convert_hf_to_gguf.py writes from the config's
//                                        mrope_section padded with 0, e.g. [16, 24, 24, 0] for
//                                        Qwen2-VL); 3 entries are read as llama.cpp reads them
//                                        (the rest 0). A non-zero 4th section feeds a 4th position
//                                        stream (ggml_rope_multi's vision mode): refused, posenc's
//                                        M-RoPE has three. The section layout is the
//                                        architecture's, as llama.cpp's llama_model_rope_type:
//                                        interleaved for qwen3vl and qwen3vlmoe (IMROPE),
//                                        contiguous otherwise (qwen2vl: MROPE).
// The layout is not in the file (llama.cpp picks its rotation by architecture and permutes some
// architectures' q/k weights at conversion): it is left unset, HF's half-split, as --hf-config
// gives for the same model, except interleaved for gptj and deepseek2 (as for their config.json).
// LongRoPE's factor lists and Llama 3.1's frequency factors are tensors (rope_factors_long,
// rope_factors_short, rope_freqs), not metadata: --short-factor and --long-factor supply the
// former.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/draft.hpp"
#include "cli/hf_config.hpp"

namespace posenc::cli {

// Limits of the reader. The metadata is read from the first max_gguf_bytes of the file (a real
// model's, its vocabulary included, is a few MiB; --max-input-bytes raises it); at most
// max_gguf_kv_count pairs; an array at most max_gguf_array_length elements (a vocabulary has a few
// hundred thousand), nested at most max_gguf_array_depth levels; a key at most 65535 bytes (the
// format's own limit).
inline constexpr std::uint64_t max_gguf_bytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t max_gguf_kv_count = std::uint64_t{1} << 16;
inline constexpr std::uint64_t max_gguf_array_length = std::uint64_t{1} << 24;
inline constexpr std::uint32_t max_gguf_array_depth = 4;
inline constexpr std::uint64_t max_gguf_key_bytes = 65535;
// String values longer than this are skipped (their length is kept): the keys read are short.
inline constexpr std::uint64_t max_gguf_kept_string = 4096;

// Integer arrays up to this length keep their elements (gguf_value::ints): the rope sections.
inline constexpr std::uint64_t max_gguf_kept_array = 64;

// One metadata value. Arrays keep their element type and length, and the elements of a short
// array of integers.
struct gguf_value {
  enum class kind : std::uint8_t { uint, sint, real, boolean, string, array };
  kind type = kind::uint;
  std::uint32_t gguf_type = 0;  // the file's value type (0 to 12)
  std::uint64_t u = 0;          // uint; array: the length; string: the length in bytes
  std::int64_t i = 0;           // sint
  double x = 0.0;               // real (float32 values widened exactly)
  bool b = false;
  std::string s;                   // string, when at most max_gguf_kept_string bytes
  std::uint32_t element_type = 0;  // array
  // array of integers (uint8 to int64) of at most max_gguf_kept_array elements: the elements
  // (uint64 values above 2^63 - 1 kept as 2^63 - 1).
  std::vector<std::int64_t> ints;
};

struct gguf_metadata {
  std::uint32_t version = 0;
  std::uint64_t tensor_count = 0;
  std::vector<std::pair<std::string, gguf_value>> kv;  // in file order
};

// The header and key/value pairs read from `in`, at most max_bytes of it; `source` names the file
// in messages (already printable), `limit_text` the limit ("64 MiB"). Throws cli_error (exit 1)
// with one line for every malformed or truncated file and every limit exceeded.
gguf_metadata read_gguf_metadata(std::istream& in, const std::string& source,
                                 std::uint64_t max_bytes, const std::string& limit_text);

// The draft the metadata describes (the mapping above). Throws cli_error (exit 1) naming the key
// at fault. `keys`, if given, receives the keys used and the others, with a warning for each
// ARCH.rope.* key that is not used.
config_draft draft_from_gguf(const gguf_metadata& m, const std::string& source,
                             config_keys* keys = nullptr);

// The draft of the GGUF bytes `bytes` (tests, fuzzing) and of the file `path`.
config_draft parse_gguf(std::string_view bytes, std::string_view source,
                        config_keys* keys = nullptr);
config_draft load_gguf(const std::string& path, std::uint64_t max_bytes = max_gguf_bytes,
                       config_keys* keys = nullptr);

}  // namespace posenc::cli
