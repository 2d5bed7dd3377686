// RoPE configurations of published models, one type per model: a `static constexpr rope_config
// config` (so each is a rope_spec, usable as posenc::inv_freq_v<P, float> and in tables), its
// `name` (the key of --preset and of select_preset) and the checkpoint's
// `max_position_embeddings`. Every value comes from the model's Hugging Face config.json; each
// preset cites the repository and the fields it was read from. Layouts are those of the HF
// checkpoints (docs/formulas.md section 1): Llama (whose HF converter permuted Meta's
// interleaved q/k rows), Mistral, Qwen2, Phi and GPT-NeoX checkpoints are half-split; GPT-J and
// DeepSeek-V2's rope slice are interleaved.
//
// `all` is a Boost.Hana tuple of every preset type: iterate it with hana::for_each (proofs/), or
// go from a runtime name to a type with select_preset (spec/select.hpp). docs/presets.md
// lists the presets with their provenance and explains how to add one.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

#include <posenc/spec/layer_plan.hpp>
#include <posenc/spec/mrope.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc::presets {

// meta-llama/Llama-2-7b-hf config.json: hidden_size 4096 / num_attention_heads 32 = head_dim 128;
// no rope_theta field, so LlamaConfig's default 10000.0; rope_scaling null;
// max_position_embeddings 4096.
struct llama_2_7b {
  static constexpr std::string_view name = "llama-2-7b";
  static constexpr std::uint32_t max_position_embeddings = 4096;
  static constexpr rope_config config{128, 128, 10000.0, rope_layout::half, scaling::none()};
};

// meta-llama/Meta-Llama-3-8B config.json: hidden_size 4096 / num_attention_heads 32 = 128;
// rope_theta 500000.0; rope_scaling null; max_position_embeddings 8192.
struct llama_3_8b {
  static constexpr std::string_view name = "llama-3-8b";
  static constexpr std::uint32_t max_position_embeddings = 8192;
  static constexpr rope_config config{128, 128, 500000.0, rope_layout::half, scaling::none()};
};

// meta-llama/Llama-3.1-8B config.json: hidden_size 4096 / num_attention_heads 32 = 128;
// rope_theta 500000.0; rope_scaling {rope_type "llama3", factor 8.0, low_freq_factor 1.0,
// high_freq_factor 4.0, original_max_position_embeddings 8192}; max_position_embeddings 131072.
struct llama_3_1_8b {
  static constexpr std::string_view name = "llama-3.1-8b";
  static constexpr std::uint32_t max_position_embeddings = 131072;
  static constexpr rope_config config{128, 128, 500000.0, rope_layout::half,
                                      scaling::llama3(8.0, 1.0, 4.0, 8192)};
};

// mistralai/Mistral-7B-v0.1 config.json: hidden_size 4096 / num_attention_heads 32 = 128;
// rope_theta 10000.0; max_position_embeddings 32768.
struct mistral_7b_v0_1 {
  static constexpr std::string_view name = "mistral-7b-v0.1";
  static constexpr std::uint32_t max_position_embeddings = 32768;
  static constexpr rope_config config{128, 128, 10000.0, rope_layout::half, scaling::none()};
};

// Qwen/Qwen2-7B config.json: hidden_size 3584 / num_attention_heads 28 = 128;
// rope_theta 1000000.0; max_position_embeddings 131072.
struct qwen2_7b {
  static constexpr std::string_view name = "qwen2-7b";
  static constexpr std::uint32_t max_position_embeddings = 131072;
  static constexpr rope_config config{128, 128, 1000000.0, rope_layout::half, scaling::none()};
};

// codellama/CodeLlama-7b-hf config.json: hidden_size 4096 / num_attention_heads 32 = 128;
// rope_theta 1000000; max_position_embeddings 16384.
struct codellama_7b {
  static constexpr std::string_view name = "codellama-7b";
  static constexpr std::uint32_t max_position_embeddings = 16384;
  static constexpr rope_config config{128, 128, 1000000.0, rope_layout::half, scaling::none()};
};

// EleutherAI/gpt-j-6b config.json: n_embd 4096 / n_head 16 = head_dim 256; rotary_dim 64;
// n_positions 2048. The base is not a config field: HF models/gptj/modeling_gptj.py
// (create_sinusoidal_positions) uses 10000. Pairs are interleaved (rotate_every_two).
struct gpt_j_6b {
  static constexpr std::string_view name = "gpt-j-6b";
  static constexpr std::uint32_t max_position_embeddings = 2048;
  static constexpr rope_config config{256, 64, 10000.0, rope_layout::interleaved, scaling::none()};
};

// EleutherAI/gpt-neox-20b config.json: hidden_size 6144 / num_attention_heads 64 = 96;
// rotary_pct 0.25 (HF: int(96 * 0.25) = 24); rotary_emb_base 10000; max_position_embeddings 2048.
struct gpt_neox_20b {
  static constexpr std::string_view name = "gpt-neox-20b";
  static constexpr std::uint32_t max_position_embeddings = 2048;
  static constexpr rope_config config{96, rotary_dim_from_factor(96, 0.25), 10000.0,
                                      rope_layout::half, scaling::none()};
};

// microsoft/phi-2 config.json: hidden_size 2560 / num_attention_heads 32 = 80;
// partial_rotary_factor 0.4 (HF: int(80 * 0.4) = 32); rope_theta 10000.0;
// max_position_embeddings 2048.
struct phi_2 {
  static constexpr std::string_view name = "phi-2";
  static constexpr std::uint32_t max_position_embeddings = 2048;
  static constexpr rope_config config{80, rotary_dim_from_factor(80, 0.4), 10000.0,
                                      rope_layout::half, scaling::none()};
};

namespace data {
// microsoft/Phi-3-mini-128k-instruct config.json, rope_scaling.short_factor and
// rope_scaling.long_factor (rope_scaling.type "longrope"; the checkpoint as revised by Microsoft's
// June 2024 update; the April 2024 release had type "su" and other lists). Quoted digit for digit;
// the compiler rounds each literal to the nearest double, as Python's json does. R/2 = 48 each.
inline constexpr std::array<double, 48> phi_3_mini_128k_short_factor = {
    1.1,
    1.1,
    1.1,
    1.3000000000000003,
    1.3500000000000003,
    1.3500000000000003,
    1.4000000000000004,
    1.5500000000000005,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.0500000000000007,
    2.0500000000000007,
    2.0500000000000007,
    2.0500000000000007,
    2.0500000000000007,
    2.0500000000000007,
    2.1000000000000005,
    2.1000000000000005,
    2.1500000000000004,
    2.25,
    2.25,
    2.25,
    2.25,
    2.25,
    2.3999999999999995,
    2.4499999999999993,
    2.499999999999999,
    2.6999999999999984,
    2.6999999999999984,
    2.7499999999999982,
    2.799999999999998,
    2.8999999999999977,
    3.049999999999997,
};
inline constexpr std::array<double, 48> phi_3_mini_128k_long_factor = {
    1.0700000524520874, 1.1200000047683716, 1.149999976158142,  1.4199999570846558,
    1.5699999332427979, 1.7999999523162842, 2.129999876022339,  2.129999876022339,
    3.009999990463257,  5.910000324249268,  6.950000286102295,  9.070000648498535,
    9.930000305175781,  10.710000038146973, 11.130000114440918, 14.609999656677246,
    15.409998893737793, 19.809999465942383, 37.279998779296875, 38.279998779296875,
    38.599998474121094, 40.12000274658203,  46.20000457763672,  50.940006256103516,
    53.66000747680664,  54.9373893737793,   56.89738845825195,  57.28738784790039,
    59.98738479614258,  60.86738586425781,  60.887386322021484, 61.71739196777344,
    62.91739273071289,  62.957393646240234, 63.41739273071289,  63.8173942565918,
    63.83739471435547,  63.897396087646484, 63.93739700317383,  64.06739807128906,
    64.11434936523438,  64.12435150146484,  64.15435028076172,  64.19435119628906,
    64.24435424804688,  64.57435607910156,  64.69000244140625,  64.76000213623047,
};
}  // namespace data

// microsoft/Phi-3-mini-128k-instruct config.json: hidden_size 3072 / num_attention_heads 32 = 96;
// rope_theta 10000.0; original_max_position_embeddings 4096; max_position_embeddings 131072
// (longrope factor 131072 / 4096 = 32, attention factor sqrt(1 + ln 32 / ln 4096));
// rope_scaling.short_factor / long_factor as in data:: above.
struct phi_3_mini_128k_instruct {
  static constexpr std::string_view name = "phi-3-mini-128k-instruct";
  static constexpr std::uint32_t max_position_embeddings = 131072;
  static constexpr rope_config config{
      96, 96, 10000.0, rope_layout::half,
      scaling::longrope(data::phi_3_mini_128k_short_factor, data::phi_3_mini_128k_long_factor, 4096,
                        131072)};
};

namespace data {
// microsoft/Phi-3.5-mini-instruct config.json, rope_scaling.short_factor and
// rope_scaling.long_factor (rope_scaling.type "longrope"; no long_mscale / short_mscale keys).
// Quoted digit for digit as the published file writes them (copies checked against each other:
// an AutoConfig dump of the checkpoint in kevinstephano/thunder_model_blocks hf_phi3/phi3_rope.py,
// sdpython/experimental-experiment torch_models/llm_model_helper.py get_phi_35_mini_instruct, and
// google-ai-edge/ai-edge-torch generative/examples/phi/phi3.py ROPE_SHORT_FACTOR). R/2 = 48 each.
inline constexpr std::array<double, 48> phi_3_5_mini_short_factor = {
    1.0,
    1.0199999809265137,
    1.0299999713897705,
    1.0299999713897705,
    1.0499999523162842,
    1.0499999523162842,
    1.0499999523162842,
    1.0499999523162842,
    1.0499999523162842,
    1.0699999332427979,
    1.0999999046325684,
    1.1099998950958252,
    1.1599998474121094,
    1.1599998474121094,
    1.1699998378753662,
    1.2899998426437378,
    1.339999794960022,
    1.679999828338623,
    1.7899998426437378,
    1.8199998140335083,
    1.8499997854232788,
    1.8799997568130493,
    1.9099997282028198,
    1.9399996995925903,
    1.9899996519088745,
    2.0199997425079346,
    2.0199997425079346,
    2.0199997425079346,
    2.0199997425079346,
    2.0199997425079346,
    2.0199997425079346,
    2.0299997329711914,
    2.0299997329711914,
    2.0299997329711914,
    2.0299997329711914,
    2.0299997329711914,
    2.0299997329711914,
    2.0299997329711914,
    2.0299997329711914,
    2.0299997329711914,
    2.0799996852874756,
    2.0899996757507324,
    2.189999580383301,
    2.2199995517730713,
    2.5899994373321533,
    2.729999542236328,
    2.749999523162842,
    2.8399994373321533,
};
inline constexpr std::array<double, 48> phi_3_5_mini_long_factor = {
    1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601,
    1.5899999141693115, 1.600000023841858,  1.6200000047683716, 2.620000123977661,
    3.2300000190734863, 3.2300000190734863, 4.789999961853027,  7.400000095367432,
    7.700000286102295,  9.09000015258789,   12.199999809265137, 17.670000076293945,
    24.46000099182129,  28.57000160217285,  30.420001983642578, 30.840002059936523,
    32.590003967285156, 32.93000411987305,  42.320003509521484, 44.96000289916992,
    50.340003967285156, 50.45000457763672,  57.55000305175781,  57.93000411987305,
    58.21000289916992,  60.1400032043457,   62.61000442504883,  62.62000274658203,
    62.71000289916992,  63.1400032043457,   63.1400032043457,   63.77000427246094,
    63.93000411987305,  63.96000289916992,  63.970001220703125, 64.02999877929688,
    64.06999969482422,  64.08000183105469,  64.12000274658203,  64.41000366210938,
    64.4800033569336,   64.51000213623047,  64.52999877929688,  64.83999633789062,
};
}  // namespace data

// microsoft/Phi-3.5-mini-instruct config.json: hidden_size 3072 / num_attention_heads 32 = 96;
// rope_theta 10000.0; original_max_position_embeddings 4096 (top level); max_position_embeddings
// 131072 (longrope factor 32, attention factor sqrt(1 + ln 32 / ln 4096) as HF derives it);
// num_hidden_layers 32; rope_scaling.short_factor / long_factor as in data:: above.
struct phi_3_5_mini_instruct {
  static constexpr std::string_view name = "phi-3.5-mini-instruct";
  static constexpr std::uint32_t max_position_embeddings = 131072;
  static constexpr rope_config config{
      96, 96, 10000.0, rope_layout::half,
      scaling::longrope(data::phi_3_5_mini_short_factor, data::phi_3_5_mini_long_factor, 4096,
                        131072)};
};

// deepseek-ai/DeepSeek-V2-Lite config.json: the rotary slice of each head is qk_rope_head_dim 64
// (the qk_nope_head_dim 128 channels carry no position); rope_theta 10000; rope_scaling {type
// "yarn", factor 40, original_max_position_embeddings 4096, beta_fast 32, beta_slow 1, mscale
// 0.707, mscale_all_dim 0.707}; max_position_embeddings 163840. The rope slice is interleaved
// (HF's modeling_deepseek permutes q/k pairs before rotate_half; vLLM is_neox_style=False). The
// softmax-scale mscale^2 correction lives in DeepSeek's attention, not in RoPE.
struct deepseek_v2_lite {
  static constexpr std::string_view name = "deepseek-v2-lite";
  static constexpr std::uint32_t max_position_embeddings = 163840;
  static constexpr rope_config config{64, 64, 10000.0, rope_layout::interleaved,
                                      scaling::yarn(40.0, 4096, 32.0, 1.0, true, 0.707, 0.707)};
};

// deepseek-ai/DeepSeek-V3 config.json: qk_rope_head_dim 64 (as DeepSeek-V2-Lite above, the rope
// slice is interleaved); rope_theta 10000; rope_scaling {type "yarn", factor 40,
// original_max_position_embeddings 4096, beta_fast 32, beta_slow 1, mscale 1.0, mscale_all_dim
// 1.0}; max_position_embeddings 163840; num_hidden_layers 61. With mscale == mscale_all_dim the
// attention factor is 1.
struct deepseek_v3 {
  static constexpr std::string_view name = "deepseek-v3";
  static constexpr std::uint32_t max_position_embeddings = 163840;
  static constexpr rope_config config{64, 64, 10000.0, rope_layout::interleaved,
                                      scaling::yarn(40.0, 4096, 32.0, 1.0, true, 1.0, 1.0)};
  static constexpr model_config model{.num_hidden_layers = 61, .rope = config};
};

// Every preset, as Boost.Hana types.
inline constexpr auto all = boost::hana::make_tuple(
    boost::hana::type_c<llama_2_7b>, boost::hana::type_c<llama_3_8b>,
    boost::hana::type_c<llama_3_1_8b>, boost::hana::type_c<mistral_7b_v0_1>,
    boost::hana::type_c<qwen2_7b>, boost::hana::type_c<codellama_7b>, boost::hana::type_c<gpt_j_6b>,
    boost::hana::type_c<gpt_neox_20b>, boost::hana::type_c<phi_2>,
    boost::hana::type_c<phi_3_mini_128k_instruct>, boost::hana::type_c<deepseek_v2_lite>,
    boost::hana::type_c<deepseek_v3>, boost::hana::type_c<phi_3_5_mini_instruct>);

// ---- models: the per-layer plan (spec/layer_plan.hpp) ------------------------------------------
// One type per published model with `static constexpr model_config model`, its `name` and
// `max_position_embeddings`. Models whose layers differ (Gemma-3, Llama-4) or whose rotation is
// multi-axis (Qwen2-VL, Pixtral) have no single `config` and are not in `all`; DeepSeek-V3 is in
// both.

// Qwen/Qwen2-VL-7B-Instruct config.json: hidden_size 3584 / num_attention_heads 28 = 128;
// num_hidden_layers 28; rope_theta 1000000.0; rope_scaling {type "mrope", mrope_section
// [16, 24, 24]} (contiguous sections, HF modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb);
// max_position_embeddings 32768; use_sliding_window false (every layer full attention).
struct qwen2_vl_7b {
  static constexpr std::string_view name = "qwen2-vl-7b";
  static constexpr std::uint32_t max_position_embeddings = 32768;
  static constexpr model_config model{
      .num_hidden_layers = 28,
      .rope = {128, 128, 1000000.0, rope_layout::half, scaling::none()},
      .form = rotary_form::mrope,
      .mrope_section = {16, 24, 24},
      .section_layout = mrope_layout::contiguous};
};

// Qwen/Qwen2.5-VL-7B-Instruct config.json: as Qwen2-VL-7B (3584 / 28 = 128, 28 layers,
// rope_theta 1000000.0, mrope_section [16, 24, 24], use_sliding_window false) with
// max_position_embeddings 128000.
struct qwen2_5_vl_7b {
  static constexpr std::string_view name = "qwen2.5-vl-7b";
  static constexpr std::uint32_t max_position_embeddings = 128000;
  static constexpr model_config model{
      .num_hidden_layers = 28,
      .rope = {128, 128, 1000000.0, rope_layout::half, scaling::none()},
      .form = rotary_form::mrope,
      .mrope_section = {16, 24, 24},
      .section_layout = mrope_layout::contiguous};
};

// google/gemma-3-4b-it config.json, text_config: head_dim 256 (Gemma3TextConfig's default),
// num_hidden_layers 34, sliding_window 1024, rope_scaling {rope_type "linear", factor 8.0};
// rope_theta 1000000.0, rope_local_base_freq 10000.0, sliding_window_pattern 6 and
// max_position_embeddings 131072 are Gemma3TextConfig's defaults (configuration_gemma3.py), which
// the checkpoint leaves unset. The same settings are those of tests/golden/hf_gemma3_rope.json.
struct gemma_3_4b {
  static constexpr std::string_view name = "gemma-3-4b";
  static constexpr std::uint32_t max_position_embeddings = 131072;
  static constexpr model_config model{
      .num_hidden_layers = 34,
      .rope = {256, 256, 1000000.0, rope_layout::half, scaling::linear(8.0)},
      .sliding_window = 1024,
      .sliding_window_pattern = 6,
      .rope_local_base_freq = 10000.0};
};

// google/gemma-3-27b-it config.json, text_config: head_dim 128, hidden_size 5376,
// num_attention_heads 32, num_hidden_layers 62, sliding_window 1024, rope_scaling {rope_type
// "linear", factor 8.0}; rope_theta 1000000.0, rope_local_base_freq 10000.0,
// sliding_window_pattern 6, max_position_embeddings 131072 (Gemma3TextConfig's defaults, as
// above).
struct gemma_3_27b {
  static constexpr std::string_view name = "gemma-3-27b";
  static constexpr std::uint32_t max_position_embeddings = 131072;
  static constexpr model_config model{
      .num_hidden_layers = 62,
      .rope = {128, 128, 1000000.0, rope_layout::half, scaling::linear(8.0)},
      .sliding_window = 1024,
      .sliding_window_pattern = 6,
      .rope_local_base_freq = 10000.0};
};

// meta-llama/Llama-4-Scout-17B-16E config.json, text_config: head_dim 128, num_hidden_layers 48,
// rope_theta 500000.0, rope_scaling {rope_type "llama3", factor 16.0, low_freq_factor 1.0,
// high_freq_factor 1.0, original_max_position_embeddings 8192}, attention_chunk_size 8192,
// attn_temperature_tuning 4 (read as true), floor_scale 8192, attn_scale 0.1,
// max_position_embeddings 10485760; no_rope_layers empty, so Llama4TextConfig derives it from
// no_rope_layer_interval 4 (its default; configuration_llama4.py): layers 3, 7, ..., 47 are NoPE.
// Pairs are adjacent channels (HF modeling_llama4.py rotates view_as_complex(x.reshape(..., -1,
// 2))): interleaved.
struct llama_4_scout {
  static constexpr std::string_view name = "llama-4-scout";
  static constexpr std::uint32_t max_position_embeddings = 10485760;
  static constexpr model_config model{
      .num_hidden_layers = 48,
      .rope = {128, 128, 500000.0, rope_layout::interleaved, scaling::llama3(16.0, 1.0, 1.0, 8192)},
      .no_rope_layer_interval = 4,
      .attention_chunk_size = 8192,
      .attn_temperature_tuning = true,
      .floor_scale = 8192.0,
      .attn_scale = 0.1};
};

// mistral-community/pixtral-12b config.json, vision_config (the 2-D part; the text model is 1-D
// RoPE): hidden_size 1024 / num_attention_heads 16 = head_dim 64, num_hidden_layers 24,
// rope_theta 10000.0, image_size 1024 / patch_size 16 = 64 positions per axis (stored as
// max_position_embeddings). HF PixtralRotaryEmbedding: rows take freqs[::2], columns freqs[1::2]
// (axial_frequencies::alternating).
struct pixtral_12b {
  static constexpr std::string_view name = "pixtral-12b";
  static constexpr std::uint32_t max_position_embeddings = 64;
  static constexpr model_config model{.num_hidden_layers = 24,
                                      .rope = {64, 64, 10000.0, rope_layout::half, scaling::none()},
                                      .form = rotary_form::axial,
                                      .frequencies = axial_frequencies::alternating};
};

// Every model preset, as Boost.Hana types.
inline constexpr auto models =
    boost::hana::make_tuple(boost::hana::type_c<qwen2_vl_7b>, boost::hana::type_c<qwen2_5_vl_7b>,
                            boost::hana::type_c<gemma_3_4b>, boost::hana::type_c<gemma_3_27b>,
                            boost::hana::type_c<llama_4_scout>, boost::hana::type_c<pixtral_12b>,
                            boost::hana::type_c<deepseek_v3>);

}  // namespace posenc::presets
