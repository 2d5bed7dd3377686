#include "cli/gguf.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "cli/error.hpp"
#include "cli/input_file.hpp"

namespace posenc::cli {

namespace {

// Names of the value types (docs/gguf.md, gguf_metadata_value_type), for messages.
constexpr const char* type_names[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                      "int32",  "float32", "bool",   "string", "array",
                                      "uint64", "int64",   "float64"};
constexpr std::uint32_t type_count = 13;
constexpr std::uint32_t type_bool = 7;
constexpr std::uint32_t type_string = 8;
constexpr std::uint32_t type_array = 9;

// Sizes of the fixed-size types (0 for string and array).
constexpr std::uint64_t fixed_size(std::uint32_t t) {
  constexpr std::uint64_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  return sizes[t];
}

// Sequential little-endian reads from `in`, at most `limit` bytes in all: the end of the file is
// "the file ends inside WHAT", the limit is its own message.
class reader {
 public:
  reader(std::istream& in, std::string source, std::uint64_t limit, std::string limit_text)
      : in_(in), source_(std::move(source)), limit_(limit), limit_text_(std::move(limit_text)) {}

  [[noreturn]] void fail(const std::string& what) const {
    invalid("posenc: " + source_ + ": " + what);
  }

  // Reads n bytes into dst (nullptr: skips them, in pieces, holding none).
  void bytes(char* dst, std::uint64_t n, const std::string& what) {
    while (n > 0) {
      if (pos_ == limit_)
        fail("the metadata goes on past the first " + limit_text_ +
             " of the file; raise the limit with --max-input-bytes N");
      char scratch[4096];
      std::uint64_t chunk = std::min<std::uint64_t>(n, limit_ - pos_);
      if (dst == nullptr) chunk = std::min<std::uint64_t>(chunk, sizeof scratch);
      in_.read(dst != nullptr ? dst : scratch, static_cast<std::streamsize>(chunk));
      const auto got = static_cast<std::uint64_t>(in_.gcount());
      pos_ += got;
      if (got < chunk) {
        if (in_.bad()) fail("cannot be read");
        fail("the file ends inside " + what + " (at byte " + std::to_string(pos_) + ")");
      }
      if (dst != nullptr) dst += chunk;
      n -= chunk;
    }
  }

  template <class T>
  T little(const std::string& what) {
    unsigned char b[sizeof(T)];
    bytes(reinterpret_cast<char*>(b), sizeof b, what);
    std::uint64_t v = 0;
    for (std::size_t k = sizeof b; k-- > 0;) v = (v << 8) | b[k];
    if constexpr (std::is_same_v<T, float>) {
      const auto bits = static_cast<std::uint32_t>(v);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    } else if constexpr (std::is_same_v<T, double>) {
      double f;
      std::memcpy(&f, &v, sizeof f);
      return f;
    } else {
      return static_cast<T>(v);
    }
  }

  std::uint64_t pos() const { return pos_; }

 private:
  std::istream& in_;
  std::string source_;
  std::uint64_t limit_;
  std::string limit_text_;
  std::uint64_t pos_ = 0;
};

std::string key_name(const std::string& key) {
  std::string out = "'";
  out += printable(key);
  out += '\'';
  return out;
}

// A string (gguf_string_t): kept when at most `keep` bytes, else skipped (s left empty).
std::uint64_t read_string(reader& r, std::string& s, std::uint64_t keep, const std::string& what) {
  const auto n = r.little<std::uint64_t>(what);
  if (n <= keep) {
    s.resize(static_cast<std::size_t>(n));
    r.bytes(s.data(), n, what);
  } else {
    s.clear();
    r.bytes(nullptr, n, what);
  }
  return n;
}

// Skips one value of type t (an array element); arrays nest at most max_gguf_array_depth levels.
void skip_value(reader& r, std::uint32_t t, std::uint32_t depth, const std::string& key,
                const std::string& what);

// Whether value type t is an integer (uint8 to int64).
constexpr bool integer_type(std::uint32_t t) {
  return t <= 5 || t == 10 || t == 11;
}

// One integer element of type t (integer_type(t)).
std::int64_t read_integer(reader& r, std::uint32_t t, const std::string& what) {
  switch (t) {
    case 0:
      return r.little<std::uint8_t>(what);
    case 1:
      return r.little<std::int8_t>(what);
    case 2:
      return r.little<std::uint16_t>(what);
    case 3:
      return r.little<std::int16_t>(what);
    case 4:
      return r.little<std::uint32_t>(what);
    case 5:
      return r.little<std::int32_t>(what);
    case 10: {
      const auto u = r.little<std::uint64_t>(what);
      return u > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(u);
    }
    default:
      return r.little<std::int64_t>(what);
  }
}

// `kept` (top-level arrays only): receives the elements of a short integer array.
void skip_array(reader& r, std::uint32_t depth, const std::string& key, const std::string& what,
                std::uint32_t& element_type, std::uint64_t& length,
                std::vector<std::int64_t>* kept = nullptr) {
  if (depth > max_gguf_array_depth)
    r.fail("key " + key_name(key) + ": arrays nested deeper than " +
           std::to_string(max_gguf_array_depth) + " levels");
  element_type = r.little<std::uint32_t>(what);
  if (element_type >= type_count)
    r.fail("key " + key_name(key) + ": unknown array element type " + std::to_string(element_type));
  length = r.little<std::uint64_t>(what);
  if (length > max_gguf_array_length)
    r.fail("key " + key_name(key) + ": an array of " + std::to_string(length) +
           " elements; at most " + std::to_string(max_gguf_array_length));
  if (kept != nullptr && integer_type(element_type) && length <= max_gguf_kept_array) {
    for (std::uint64_t k = 0; k < length; ++k) kept->push_back(read_integer(r, element_type, what));
    return;
  }
  if (const std::uint64_t size = fixed_size(element_type); size != 0) {
    if (element_type == type_bool) {
      for (std::uint64_t k = 0; k < length; ++k) skip_value(r, element_type, depth, key, what);
    } else {
      r.bytes(nullptr, size * length, what);  // length <= 2^24: no overflow
    }
    return;
  }
  for (std::uint64_t k = 0; k < length; ++k) skip_value(r, element_type, depth, key, what);
}

void skip_value(reader& r, std::uint32_t t, std::uint32_t depth, const std::string& key,
                const std::string& what) {
  if (t == type_string) {
    std::string ignored;
    read_string(r, ignored, 0, what);
  } else if (t == type_array) {
    std::uint32_t element_type = 0;
    std::uint64_t length = 0;
    skip_array(r, depth + 1, key, what, element_type, length);
  } else if (t == type_bool) {
    const auto b = r.little<std::uint8_t>(what);
    if (b > 1) r.fail("key " + key_name(key) + ": a bool is 0 or 1, not " + std::to_string(b));
  } else {
    r.bytes(nullptr, fixed_size(t), what);
  }
}

gguf_value read_value(reader& r, std::uint32_t t, const std::string& key) {
  const std::string what = "the value of " + key_name(key);
  gguf_value v;
  v.gguf_type = t;
  switch (t) {
    case 0:
      v.u = r.little<std::uint8_t>(what);
      break;
    case 2:
      v.u = r.little<std::uint16_t>(what);
      break;
    case 4:
      v.u = r.little<std::uint32_t>(what);
      break;
    case 10:
      v.u = r.little<std::uint64_t>(what);
      break;
    case 1:
      v.type = gguf_value::kind::sint;
      v.i = r.little<std::int8_t>(what);
      break;
    case 3:
      v.type = gguf_value::kind::sint;
      v.i = r.little<std::int16_t>(what);
      break;
    case 5:
      v.type = gguf_value::kind::sint;
      v.i = r.little<std::int32_t>(what);
      break;
    case 11:
      v.type = gguf_value::kind::sint;
      v.i = r.little<std::int64_t>(what);
      break;
    case 6:
      v.type = gguf_value::kind::real;
      v.x = r.little<float>(what);
      break;
    case 12:
      v.type = gguf_value::kind::real;
      v.x = r.little<double>(what);
      break;
    case type_bool: {
      v.type = gguf_value::kind::boolean;
      const auto b = r.little<std::uint8_t>(what);
      if (b > 1) r.fail("key " + key_name(key) + ": a bool is 0 or 1, not " + std::to_string(b));
      v.b = b == 1;
      break;
    }
    case type_string:
      v.type = gguf_value::kind::string;
      v.u = read_string(r, v.s, max_gguf_kept_string, what);
      break;
    case type_array:
      v.type = gguf_value::kind::array;
      skip_array(r, 1, key, what, v.element_type, v.u, &v.ints);
      break;
    default:
      r.fail("key " + key_name(key) + ": unknown value type " + std::to_string(t));
  }
  return v;
}

}  // namespace

gguf_metadata read_gguf_metadata(std::istream& in, const std::string& source,
                                 std::uint64_t max_bytes, const std::string& limit_text) {
  reader r(in, source, max_bytes, limit_text);
  char magic[4];
  r.bytes(magic, 4, "the header");
  if (std::memcmp(magic, "GGUF", 4) != 0) r.fail("not a GGUF file (no \"GGUF\" magic)");
  gguf_metadata m;
  m.version = r.little<std::uint32_t>("the header");
  if (m.version == 1) r.fail("GGUF version 1 is not supported (2 and 3 are)");
  if (m.version != 2 && m.version != 3)
    r.fail("unknown GGUF version " + std::to_string(m.version) + " (2 and 3 are read)");
  m.tensor_count = r.little<std::uint64_t>("the header");
  const auto kv_count = r.little<std::uint64_t>("the header");
  if (kv_count > max_gguf_kv_count)
    r.fail(std::to_string(kv_count) + " metadata key/value pairs; at most " +
           std::to_string(max_gguf_kv_count));
  std::set<std::string> seen;
  for (std::uint64_t k = 0; k < kv_count; ++k) {
    const std::string what = "key/value pair " + std::to_string(k);
    const auto key_length = r.little<std::uint64_t>(what);
    if (key_length > max_gguf_key_bytes)
      r.fail(what + ": a key of " + std::to_string(key_length) + " bytes; at most " +
             std::to_string(max_gguf_key_bytes));
    std::string key(static_cast<std::size_t>(key_length), '\0');
    r.bytes(key.data(), key_length, what);
    if (!seen.insert(key).second) r.fail("duplicate key " + key_name(key));
    const auto type = r.little<std::uint32_t>("the value type of " + key_name(key));
    if (type >= type_count)
      r.fail("key " + key_name(key) + ": unknown value type " + std::to_string(type));
    gguf_value value = read_value(r, type, key);
    m.kv.emplace_back(std::move(key), std::move(value));
  }
  return m;
}

namespace {

// Typed lookups of ARCH keys; every key found is recorded as used.
class gguf_fields {
 public:
  gguf_fields(const gguf_metadata& m, std::string source, std::set<std::string>& used)
      : m_(m), source_(std::move(source)), used_(used) {}

  const gguf_value* find(const std::string& key) const {
    for (const auto& [k, v] : m_.kv)
      if (k == key) {
        used_.insert(k);
        return &v;
      }
    return nullptr;
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    invalid("posenc: " + source_ + ": " + printable(key) + " " + what);
  }

  std::optional<double> number(const std::string& key) const {
    const gguf_value* v = find(key);
    if (v == nullptr) return std::nullopt;
    double x = 0.0;
    switch (v->type) {
      case gguf_value::kind::uint:
        x = static_cast<double>(v->u);
        break;
      case gguf_value::kind::sint:
        x = static_cast<double>(v->i);
        break;
      case gguf_value::kind::real:
        x = v->x;
        break;
      default:
        fail(key, std::string("must be a number, not a ") + type_names[v->gguf_type]);
    }
    if (!std::isfinite(x)) fail(key, "must be a finite number");
    return x;
  }

  std::optional<std::uint32_t> positive_int(const std::string& key,
                                            std::uint32_t max = UINT32_MAX) const {
    const gguf_value* v = find(key);
    if (v == nullptr) return std::nullopt;
    const std::string msg = "must be a positive integer (at most " + std::to_string(max) + ")";
    std::uint64_t n = 0;
    if (v->type == gguf_value::kind::uint) {
      n = v->u;
    } else if (v->type == gguf_value::kind::sint && v->i > 0) {
      n = static_cast<std::uint64_t>(v->i);
    } else {
      fail(key, msg);
    }
    if (n == 0 || n > max) fail(key, msg);
    return static_cast<std::uint32_t>(n);
  }

  std::optional<std::string> string(const std::string& key) const {
    const gguf_value* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (v->type != gguf_value::kind::string) fail(key, "must be a string");
    if (v->u > max_gguf_kept_string) fail(key, "is too long");
    return v->s;
  }

 private:
  const gguf_metadata& m_;
  std::string source_;
  std::set<std::string>& used_;
};

}  // namespace

config_draft draft_from_gguf(const gguf_metadata& m, const std::string& source, config_keys* keys) {
  std::set<std::string> used;
  const gguf_fields f(m, source, used);
  const auto arch = f.string("general.architecture");
  if (!arch) invalid("posenc: " + source + ": no general.architecture");
  const std::string a = *arch + ".";
  std::vector<std::string> warnings;

  config_draft d;
  draft_sources src;
  // The echo's source of each field: "gguf FILE KEY".
  const std::string g = "gguf " + source + " ";
  d.base = f.number(a + "rope.freq_base");
  if (d.base) src.base = g + a + "rope.freq_base";
  const auto rotary = f.positive_int(a + "rope.dimension_count", max_head_dim);
  if (rotary) {
    d.rotary = rotary_width::absolute(*rotary);
    src.rotary = g + a + "rope.dimension_count";
  }
  if (*arch == "deepseek2" && rotary) {
    d.head_dim = rotary;
    src.head_dim = g + a + "rope.dimension_count";
  } else if (const auto k = f.positive_int(a + "attention.key_length", max_head_dim)) {
    d.head_dim = k;
    src.head_dim = g + a + "attention.key_length";
  } else {
    const auto embedding = f.positive_int(a + "embedding_length");
    const gguf_value* heads_value = f.find(a + "attention.head_count");
    // A per-layer array of head counts (some architectures) gives no single head_dim.
    const auto heads = heads_value != nullptr && heads_value->type != gguf_value::kind::array
                           ? f.positive_int(a + "attention.head_count")
                           : std::nullopt;
    if (!embedding || !heads)
      invalid("posenc: " + source + ": no " + printable(a) + "attention.key_length, and no " +
              printable(a) + "embedding_length and " + printable(a) +
              "attention.head_count to derive the head dimension");
    const std::uint32_t hd = *embedding / *heads;
    if (hd == 0 || hd > max_head_dim)
      invalid("posenc: " + source + ": embedding_length / attention.head_count must be in [1, " +
              std::to_string(max_head_dim) + "]");
    d.head_dim = hd;
    src.head_dim = g + a + "embedding_length / " + a + "attention.head_count";
  }
  if (*arch == "gptj" || *arch == "deepseek2") {
    d.layout = rope_layout::interleaved;
    src.layout = g + "general.architecture";
  }
  d.max_position_embeddings = f.positive_int(a + "context_length");
  if (d.max_position_embeddings) src.max_position_embeddings = g + a + "context_length";

  const auto type = f.string(a + "rope.scaling.type");
  auto factor = f.number(a + "rope.scaling.factor");
  std::string factor_key = a + "rope.scaling.factor";
  if (!factor) {
    factor = f.number(a + "rope.scale_linear");
    factor_key = a + "rope.scale_linear";
  }
  // llama.cpp reads a missing type as linear and a missing or zero factor as 1 (no scaling).
  if (factor && *factor == 0.0) factor.reset();
  const std::string t = type ? *type : (factor && *factor != 1.0 ? "linear" : "none");
  if (t == "none" || (t == "linear" && !factor)) {
    d.scaling = scaling_type::none;
  } else if (t == "linear") {
    d.scaling = scaling_type::linear;
    d.factor = factor;
  } else if (t == "yarn" || t == "longrope") {
    d.scaling = t == "yarn" ? scaling_type::yarn : scaling_type::longrope;
    d.factor = factor;
    d.original_max_position_embeddings = f.positive_int(a + "rope.scaling.original_context_length");
    if (t == "yarn") {
      d.beta_fast = f.number(a + "rope.scaling.yarn_beta_fast");
      d.beta_slow = f.number(a + "rope.scaling.yarn_beta_slow");
    } else {
      warnings.push_back("posenc: warning: " + source +
                         ": longrope's factor lists are tensors of the file, not read; give "
                         "--short-factor and --long-factor");
    }
  } else {
    f.fail(a + "rope.scaling.type",
           "'" + printable(t) + "' is not supported (none, linear, yarn, longrope)");
  }
  if (type)
    src.scaling = g + a + "rope.scaling.type";
  else if (d.factor)
    src.scaling = g + factor_key;
  if (d.factor) src.factor = g + factor_key;
  if (d.original_max_position_embeddings)
    src.original_max_position_embeddings = g + a + "rope.scaling.original_context_length";
  if (d.beta_fast) src.beta_fast = g + a + "rope.scaling.yarn_beta_fast";
  if (d.beta_slow) src.beta_slow = g + a + "rope.scaling.yarn_beta_slow";

  // M-RoPE (the mapping above): llama.cpp reads the sections with get_key_or_arr(..., 4, true)
  // (src/llama-model.cpp) and ggml_rope_multi feeds section k from position stream k.
  const std::string sections_key = a + "rope.dimension_sections";
  if (const gguf_value* v = f.find(sections_key)) {
    const std::string what =
        "must be an array of 3 or 4 integers in [0, 65536] (temporal, height, width pairs, "
        "then 0)";
    if (v->type != gguf_value::kind::array || !integer_type(v->element_type) ||
        (v->u != 3 && v->u != 4) || v->ints.size() != v->u)
      f.fail(sections_key, what);
    for (const std::int64_t x : v->ints)
      if (x < 0 || x > 65536) f.fail(sections_key, what);
    if (v->u == 4 && v->ints[3] != 0)
      f.fail(sections_key, "has a fourth section of " + std::to_string(v->ints[3]) +
                               " pairs: a fourth position stream (llama.cpp's vision M-RoPE) is "
                               "not supported; M-RoPE here has three (temporal, height, width)");
    d.mrope_section = std::array<std::uint32_t, 3>{static_cast<std::uint32_t>(v->ints[0]),
                                                   static_cast<std::uint32_t>(v->ints[1]),
                                                   static_cast<std::uint32_t>(v->ints[2])};
    src.mrope_section = g + sections_key;
    // llama_model_rope_type: LLAMA_ROPE_TYPE_IMROPE (interleaved sections) for Qwen3-VL.
    if (*arch == "qwen3vl" || *arch == "qwen3vlmoe") {
      d.mrope_interleaved = true;
      src.mrope_interleaved = g + "general.architecture";
    }
  }

  if (keys != nullptr) {
    *keys = {};
    keys->sources = src;
    for (const auto& [k, v] : m.kv) {
      if (used.count(k) != 0) {
        keys->used.push_back(k);
        continue;
      }
      keys->unused.push_back(k);
      if (k.starts_with(a + "rope.") && k != a + "rope.scaling.finetuned")
        keys->warnings.push_back("posenc: warning: " + source + ": rope key " + printable(k) +
                                 " is not used");
    }
    keys->warnings.insert(keys->warnings.end(), warnings.begin(), warnings.end());
  }
  return d;
}

config_draft parse_gguf(std::string_view bytes, std::string_view source, config_keys* keys) {
  const std::string shown = printable(source);
  std::istringstream in{std::string(bytes)};
  return draft_from_gguf(read_gguf_metadata(in, shown, max_gguf_bytes, "64 MiB"), shown, keys);
}

config_draft load_gguf(const std::string& path, std::uint64_t max_bytes, config_keys* keys) {
  const std::string shown = printable(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    invalid("posenc: cannot read " + shown + " (a directory)");
  std::ifstream in(path, std::ios::binary);
  if (!in) invalid("posenc: cannot open " + shown);
  return draft_from_gguf(read_gguf_metadata(in, shown, max_bytes,
                                            byte_limit_text(max_bytes, max_gguf_bytes, "64 MiB")),
                         shown, keys);
}

}  // namespace posenc::cli
