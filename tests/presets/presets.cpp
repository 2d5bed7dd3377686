// posenc/spec/presets.hpp and posenc/spec/select.hpp: runtime names and head dimensions reach
// the right compile-time types (and unknown ones reach none), the runtime lookups, every preset
// against the fields of its model's published config.json, and each preset's runtime inv_freq
// against the compile-time inv_freq_v, bit for bit.
#include <posenc/frequencies/rope.hpp>
#include <posenc/spec/presets.hpp>
#include <posenc/spec/select.hpp>

#include <rapidcheck/catch.h>
#include <catch2/catch.hpp>

#include <boost/hana/for_each.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "support/check.hpp"
#include "support/ct_args.hpp"

namespace hana = boost::hana;
namespace presets = posenc::presets;
using posenc::rope_config;
using posenc::rope_layout;
using posenc::scaling_type;
using posenc_test::same_bits;

namespace {

using posenc_test::rt;  // read through volatile: nothing below is folded at compile time

std::string rt_string(std::string_view s) {
  std::string out;
  for (char ch : s) out.push_back(rt(ch));
  return out;
}

std::vector<std::string> all_names() {
  std::vector<std::string> out;
  hana::for_each(presets::all, [&](auto t) { out.emplace_back(decltype(t)::type::name); });
  return out;
}

// ---- the published configurations ------------------------------------------------------------
// The raw fields of each model's Hugging Face config.json, as published (repository in `repo`);
// the expected rope_config is derived from them below the way HF transformers derives it, not
// copied from the presets:
//   head_dim   = config.head_dim if given (DeepSeek: qk_rope_head_dim), else
//                hidden_size / num_attention_heads;
//   rotary_dim = config.rotary_dim if given (GPT-J), else int(head_dim * partial_rotary_factor)
//                (GPT-NeoX: rotary_pct, Phi-2: partial_rotary_factor; 1 elsewhere);
//   base       = rope_theta (GPT-NeoX: rotary_emb_base; Llama-2: absent, LlamaConfig's default
//                10000; GPT-J: not a field, modeling_gptj.py uses 10000).
struct published {
  std::string_view name;
  std::string_view repo;
  std::uint32_t hidden_size;
  std::uint32_t num_attention_heads;
  std::uint32_t head_dim;        // 0: absent
  std::uint32_t rotary_dim;      // 0: absent
  double partial_rotary_factor;  // 1: absent
  double rope_theta;
  rope_layout layout;    // HF checkpoint's pairing (docs/formulas.md section 1)
  scaling_type scaling;  // rope_scaling.rope_type / .type
  double factor;         // rope_scaling.factor (1: absent)
  double low_freq_factor, high_freq_factor;
  std::uint32_t original_max_position_embeddings;  // 0: absent
  double beta_fast, beta_slow, mscale, mscale_all_dim;
  std::uint32_t max_position_embeddings;
};
constexpr auto half = rope_layout::half;
constexpr auto inter = rope_layout::interleaved;
constexpr scaling_type none = scaling_type::none;
// clang-format off
const published kPublished[] = {
  {"llama-2-7b", "meta-llama/Llama-2-7b-hf", 4096, 32, 0, 0, 1.0, 10000.0, half, none,
   1.0, 1.0, 4.0, 0, 32.0, 1.0, 0.0, 0.0, 4096},
  {"llama-3-8b", "meta-llama/Meta-Llama-3-8B", 4096, 32, 0, 0, 1.0, 500000.0, half, none,
   1.0, 1.0, 4.0, 0, 32.0, 1.0, 0.0, 0.0, 8192},
  {"llama-3.1-8b", "meta-llama/Llama-3.1-8B", 4096, 32, 0, 0, 1.0, 500000.0, half,
   scaling_type::llama3, 8.0, 1.0, 4.0, 8192, 32.0, 1.0, 0.0, 0.0, 131072},
  {"mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1", 4096, 32, 0, 0, 1.0, 10000.0, half, none,
   1.0, 1.0, 4.0, 0, 32.0, 1.0, 0.0, 0.0, 32768},
  {"qwen2-7b", "Qwen/Qwen2-7B", 3584, 28, 0, 0, 1.0, 1000000.0, half, none,
   1.0, 1.0, 4.0, 0, 32.0, 1.0, 0.0, 0.0, 131072},
  {"codellama-7b", "codellama/CodeLlama-7b-hf", 4096, 32, 0, 0, 1.0, 1000000.0, half, none,
   1.0, 1.0, 4.0, 0, 32.0, 1.0, 0.0, 0.0, 16384},
  {"gpt-j-6b", "EleutherAI/gpt-j-6b", 4096, 16, 0, 64, 1.0, 10000.0, inter, none,
   1.0, 1.0, 4.0, 0, 32.0, 1.0, 0.0, 0.0, 2048},
  {"gpt-neox-20b", "EleutherAI/gpt-neox-20b", 6144, 64, 0, 0, 0.25, 10000.0, half, none,
   1.0, 1.0, 4.0, 0, 32.0, 1.0, 0.0, 0.0, 2048},
  {"phi-2", "microsoft/phi-2", 2560, 32, 0, 0, 0.4, 10000.0, half, none,
   1.0, 1.0, 4.0, 0, 32.0, 1.0, 0.0, 0.0, 2048},
  {"phi-3-mini-128k-instruct", "microsoft/Phi-3-mini-128k-instruct", 3072, 32, 0, 0, 1.0,
   10000.0, half, scaling_type::longrope, 131072.0 / 4096.0, 1.0, 4.0, 4096, 32.0, 1.0, 0.0,
   0.0, 131072},
  {"deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite", 2048, 16, 64, 0, 1.0, 10000.0, inter,
   scaling_type::yarn, 40.0, 1.0, 4.0, 4096, 32.0, 1.0, 0.707, 0.707, 163840},
  {"deepseek-v3", "deepseek-ai/DeepSeek-V3", 7168, 128, 64, 0, 1.0, 10000.0, inter,
   scaling_type::yarn, 40.0, 1.0, 4.0, 4096, 32.0, 1.0, 1.0, 1.0, 163840},
  {"phi-3.5-mini-instruct", "microsoft/Phi-3.5-mini-instruct", 3072, 32, 0, 0, 1.0, 10000.0,
   half, scaling_type::longrope, 131072.0 / 4096.0, 1.0, 4.0, 4096, 32.0, 1.0, 0.0, 0.0, 131072},
};
// clang-format on

rope_config expected_config(const published& p) {
  rope_config c;
  c.head_dim = p.head_dim != 0 ? p.head_dim : p.hidden_size / p.num_attention_heads;
  c.rotary_dim = p.rotary_dim != 0 ? p.rotary_dim
                                   : static_cast<std::uint32_t>(  // Python int() truncates
                                         static_cast<double>(c.head_dim) * p.partial_rotary_factor);
  c.base = p.rope_theta;
  c.layout = p.layout;
  c.scaling.type = p.scaling;
  c.scaling.factor = p.factor;
  c.scaling.low_freq_factor = p.low_freq_factor;
  c.scaling.high_freq_factor = p.high_freq_factor;
  c.scaling.original_max_position_embeddings = p.original_max_position_embeddings;
  c.scaling.beta_fast = p.beta_fast;
  c.scaling.beta_slow = p.beta_slow;
  c.scaling.mscale = p.mscale;
  c.scaling.mscale_all_dim = p.mscale_all_dim;
  if (p.scaling == scaling_type::longrope)
    c.scaling.max_position_embeddings = p.max_position_embeddings;
  return c;
}

}  // namespace

TEST_CASE("presets/select_preset: every name reaches its own type, once", "[presets]") {
  hana::for_each(presets::all, [](auto t) {
    using P = typename decltype(t)::type;
    const std::string name = rt_string(P::name);
    int calls = 0;
    bool right_type = false;
    const bool found = posenc::select_preset(name, [&](auto u) {
      ++calls;
      right_type = std::is_same_v<typename decltype(u)::type, P>;
    });
    INFO(name);
    CHECK(found);
    CHECK(calls == 1);
    CHECK(right_type);
  });
}

TEST_CASE("presets/select_preset: unknown names reach nothing", "[presets]") {
  for (const char* s : {"", "llama", "LLAMA-2-7B", "llama-2-7b ", " llama-2-7b", "llama-2-7", "phi",
                        "phi2", "llama-3.1-8b-instruct", "deepseek-v2", "gpt-j", "qwen2-7b\n"}) {
    const std::string name = rt_string(s);
    int calls = 0;
    INFO("name '" << name << "'");
    CHECK_FALSE(posenc::select_preset(name, [&](auto) { ++calls; }));
    CHECK(calls == 0);
    CHECK(posenc::find_preset(name) == nullptr);
  }
}

TEST_CASE("presets/select_preset: random strings match exactly the known names", "[presets]") {
  const std::vector<std::string> names = all_names();
  rc::prop("select_preset(s) is true iff s is a preset name", [&] {
    // Half the cases: a name with one character changed, inserted or removed; the others: any
    // string (which is almost never a name).
    std::string s;
    if (*rc::gen::arbitrary<bool>()) {
      s = *rc::gen::elementOf(names);
      const std::size_t at = *rc::gen::inRange<std::size_t>(0, s.size());
      const int op = *rc::gen::inRange(0, 3);
      const char ch = *rc::gen::inRange<char>(32, 127);
      if (op == 0 && at < s.size()) s[at] = ch;
      if (op == 1) s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), ch);
      if (op == 2 && at < s.size()) s.erase(at, 1);
    } else {
      s = *rc::gen::arbitrary<std::string>();
    }
    const bool known = std::find(names.begin(), names.end(), s) != names.end();
    int calls = 0;
    RC_ASSERT(posenc::select_preset(s, [&](auto) { ++calls; }) == known);
    RC_ASSERT(calls == (known ? 1 : 0));
    RC_ASSERT((posenc::find_preset(s) != nullptr) == known);
  });
}

TEST_CASE("presets/select_head_dim: supported sizes reach their constant, others nothing",
          "[presets]") {
  for (std::uint32_t d : {64u, 80u, 96u, 128u, 256u}) {
    int got = -1, calls = 0;
    CHECK(posenc::select_head_dim(rt(d), [&](auto c) {
      ++calls;
      got = decltype(c)::value;
      static_assert(std::is_same_v<std::remove_cv_t<decltype(decltype(c)::value)>, int>);
    }));
    CHECK(calls == 1);
    CHECK(got == static_cast<int>(d));
  }
  for (std::uint32_t d : {0u, 1u, 2u, 32u, 63u, 65u, 127u, 129u, 192u, 255u, 512u,
                          std::numeric_limits<std::uint32_t>::max()}) {
    int calls = 0;
    INFO("head_dim " << d);
    CHECK_FALSE(posenc::select_head_dim(rt(d), [&](auto) { ++calls; }));
    CHECK(calls == 0);
  }
  // Every preset's head_dim dispatches.
  hana::for_each(presets::all, [](auto t) {
    using P = typename decltype(t)::type;
    INFO(P::name);
    CHECK(posenc::select_head_dim(rt(P::config.head_dim), [](auto) {}));
  });
}

TEST_CASE("presets/find_preset and the name list", "[presets]") {
  const std::vector<std::string> names = all_names();
  REQUIRE(posenc::preset_names.size() == names.size());
  REQUIRE(posenc::preset_count == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(posenc::preset_names[i] == names[i]);

  hana::for_each(presets::all, [](auto t) {
    using P = typename decltype(t)::type;
    CHECK(posenc::find_preset(rt_string(P::name)) == &P::config);
  });

  std::string joined;
  for (const std::string& n : names) joined += (joined.empty() ? "" : ", ") + n;
  CHECK(posenc::preset_names_joined() == joined);
  CHECK(posenc::preset_names_joined(" | ").find("llama-2-7b | llama-3-8b") == 0);

  const std::string msg = posenc::unknown_preset_message("llama-4");
  CHECK(msg == "unknown preset 'llama-4'; known presets: " + joined);
}

TEST_CASE("presets/values: each preset is its model's published config.json", "[presets]") {
  // The table covers every preset and nothing else.
  std::vector<std::string> table_names;
  for (const published& p : kPublished) table_names.emplace_back(p.name);
  CHECK(table_names == all_names());

  for (const published& p : kPublished) {
    INFO(p.name << " (" << p.repo << " config.json)");
    const rope_config* got = posenc::find_preset(p.name);
    REQUIRE(got != nullptr);
    const rope_config want = expected_config(p);
    CHECK(got->head_dim == want.head_dim);
    CHECK(got->rotary_dim == want.rotary_dim);
    CHECK(got->base == want.base);
    CHECK(got->layout == want.layout);
    CHECK(got->scaling.type == want.scaling.type);
    if (want.scaling.type != scaling_type::none) {
      CHECK(got->scaling.factor == want.scaling.factor);
      CHECK(got->scaling.original_max_position_embeddings ==
            want.scaling.original_max_position_embeddings);
    }
    if (want.scaling.type == scaling_type::llama3) {
      CHECK(got->scaling.low_freq_factor == want.scaling.low_freq_factor);
      CHECK(got->scaling.high_freq_factor == want.scaling.high_freq_factor);
    }
    if (want.scaling.type == scaling_type::yarn) {
      CHECK(got->scaling.beta_fast == want.scaling.beta_fast);
      CHECK(got->scaling.beta_slow == want.scaling.beta_slow);
      CHECK(got->scaling.mscale == want.scaling.mscale);
      CHECK(got->scaling.mscale_all_dim == want.scaling.mscale_all_dim);
      CHECK(got->scaling.truncate);
    }
    if (want.scaling.type == scaling_type::longrope)
      CHECK(got->scaling.max_position_embeddings == want.scaling.max_position_embeddings);
    CHECK(got->scaling.attention_factor == 0.0);  // no preset sets an explicit one
    CHECK(posenc::validate(*got) == posenc::rope_error::ok);
    bool max_pos_ok = false;
    posenc::select_preset(p.name, [&](auto t) {
      max_pos_ok = decltype(t)::type::max_position_embeddings == p.max_position_embeddings;
    });
    CHECK(max_pos_ok);
  }
  // The partial rotary widths, spelled out: GPT-NeoX-20B int(96 * 0.25), Phi-2 int(80 * 0.4).
  CHECK(posenc::find_preset("gpt-neox-20b")->rotary_dim == 24);
  CHECK(posenc::find_preset("phi-2")->rotary_dim == 32);
  CHECK(posenc::find_preset("gpt-j-6b")->rotary_dim == 64);
}

TEST_CASE("presets/values: Phi-3.5-mini longrope factor lists", "[presets]") {
  // microsoft/Phi-3.5-mini-instruct config.json rope_scaling.short_factor / long_factor (48 each),
  // restated from the published file: both ends and pairs 17 and 30 of each list.
  const rope_config& c = presets::phi_3_5_mini_instruct::config;
  REQUIRE(c.scaling.short_factor.size() == 48);
  REQUIRE(c.scaling.long_factor.size() == 48);
  const auto& s = c.scaling.short_factor;
  const auto& l = c.scaling.long_factor;
  CHECK(s[0] == 1.0);
  CHECK(s[47] == 2.8399994373321533);
  CHECK(l[0] == 1.0800000429153442);
  CHECK(l[47] == 64.83999633789062);
  CHECK(s[17] == 1.679999828338623);
  CHECK(l[17] == 28.57000160217285);
  CHECK(s[30] == 2.0199997425079346);
  CHECK(l[30] == 62.61000442504883);
}

TEST_CASE("presets/values: Phi-3-mini-128k longrope factor lists", "[presets]") {
  // microsoft/Phi-3-mini-128k-instruct config.json rope_scaling.short_factor / long_factor (48
  // each = rotary_dim / 2). The ends are restated from the config; pairs 17 and 30 as an
  // independent source quotes them (an inference-bug fixture built on this model's published
  // table: short 2.000000000000001 / long 19.809999465942383 at pair 17, short 2.0500000000000007
  // / long 60.887386322021484 at pair 30).
  const rope_config& c = presets::phi_3_mini_128k_instruct::config;
  REQUIRE(c.scaling.short_factor.size() == 48);
  REQUIRE(c.scaling.long_factor.size() == 48);
  const auto& s = c.scaling.short_factor;
  const auto& l = c.scaling.long_factor;
  CHECK(s[0] == 1.1);
  CHECK(s[47] == 3.049999999999997);
  CHECK(l[0] == 1.0700000524520874);
  CHECK(l[47] == 64.76000213623047);
  CHECK(s[17] == 2.000000000000001);
  CHECK(l[17] == 19.809999465942383);
  CHECK(s[30] == 2.0500000000000007);
  CHECK(l[30] == 60.887386322021484);
  // The long list holds float32 values printed as doubles (1.0700000524520874 = float(1.07)).
  for (double x : l) CHECK(static_cast<double>(static_cast<float>(x)) == x);
}

namespace {
// For each pair i: runtime inv_freq<T>(config, i) (config found by name at run time, i through a
// volatile) == inv_freq_v<P, T>[i], bit for bit.
template <class P, class T>
void check_runtime_equals_constexpr() {
  const rope_config* c = posenc::find_preset(rt_string(P::name));
  REQUIRE(c != nullptr);
  const auto& ct = posenc::inv_freq_v<P, T>;
  REQUIRE(ct.size() == c->rotary_dim / 2);
  std::uint32_t mismatches = 0;
  for (std::uint32_t i = 0; i < ct.size(); ++i) {
    const T r = posenc::inv_freq<T>(*c, rt(i));
    if (!same_bits(r, ct[i])) {
      ++mismatches;
      UNSCOPED_INFO("pair " << i << ": run time " << r << ", compile time " << ct[i]);
    }
  }
  CHECK(mismatches == 0);
}
}  // namespace

TEST_CASE("presets/inv_freq: run time == compile-time inv_freq_v, bit for bit", "[presets]") {
  hana::for_each(presets::all, [](auto t) {
    using P = typename decltype(t)::type;
    INFO(P::name);
    check_runtime_equals_constexpr<P, float>();
    check_runtime_equals_constexpr<P, double>();
    constexpr double af = posenc::attention_factor(P::config);
    CHECK(same_bits(posenc::attention_factor(*posenc::find_preset(rt_string(P::name))), af));
  });
}

TEST_CASE(
    "presets/inv_freq: Phi-3 long factors past the original context, run time == compile time",
    "[presets]") {
  using P = presets::phi_3_mini_128k_instruct;
  static constexpr auto ct = [] {
    std::array<float, 48> out{};
    for (std::uint32_t i = 0; i < 48; ++i) out[i] = posenc::inv_freq<float>(P::config, i, 4097);
    return out;
  }();
  const rope_config* c = posenc::find_preset(rt_string(P::name));
  REQUIRE(c != nullptr);
  for (std::uint32_t i = 0; i < 48; ++i) {
    INFO("pair " << i);
    CHECK(same_bits(posenc::inv_freq<float>(*c, rt(i), rt<std::uint64_t>(4097)), ct[i]));
    // The long factors shrink every frequency at least as much as the short ones past pair 0.
    if (i > 0) CHECK(ct[i] <= posenc::inv_freq_v<P, float>[i]);
  }
}
