// From runtime values to compile-time instantiations. A command line or a config file names a
// model or a head dimension at run time; tables and kernels are instantiated per type. The
// functions below walk a Boost.Hana list of the types that were compiled in and call a generic
// callable with the one that matches:
//
//   posenc::select_preset("llama-3.1-8b", [](auto t) {
//     using P = typename decltype(t)::type;  // posenc::presets::llama_3_1_8b
//     use(posenc::inv_freq_v<P, float>);
//   });
//   posenc::select_head_dim(128, [](auto d) { run<decltype(d)::value>(); });
//
// Each returns whether something matched (the callable runs at most once, and not at all for an
// unknown value). Only the listed instantiations are compiled, whatever the runtime value.
// find_preset, preset_names and unknown_preset_message are the plain runtime lookups (no
// instantiation per preset at the call site) that a CLI's --preset NAME needs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/hana/for_each.hpp>
#include <boost/hana/integral_constant.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <boost/hana/unpack.hpp>

#include <posenc/spec/layer_plan.hpp>
#include <posenc/spec/presets.hpp>
#include <posenc/spec/rope.hpp>

namespace posenc {

// The head dimensions that select_head_dim instantiates: those of every preset (DeepSeek-V2's
// rope slice 64, Phi-2 80, GPT-NeoX and Phi-3 96, Llama/Mistral/Qwen 128, GPT-J 256).
inline constexpr auto supported_head_dims = boost::hana::tuple_c<int, 64, 80, 96, 128, 256>;

// Calls f(hana::type_c<P>) for the preset P of presets::all whose P::name equals `name`.
// Returns false (and does not call f) when no preset has that name.
template <class F>
constexpr bool select_preset(std::string_view name, F&& f) {
  bool found = false;
  boost::hana::for_each(presets::all, [&](auto t) {
    using P = typename decltype(t)::type;
    if (!found && P::name == name) {
      found = true;
      f(t);
    }
  });
  return found;
}

// Calls f(hana::int_c<D>) for the D of supported_head_dims equal to head_dim.
// Returns false (and does not call f) when head_dim is not in the list.
template <class F>
constexpr bool select_head_dim(std::uint32_t head_dim, F&& f) {
  bool found = false;
  boost::hana::for_each(supported_head_dims, [&](auto d) {
    constexpr int D = decltype(d)::value;
    static_assert(D > 0);
    if (!found && static_cast<std::uint32_t>(D) == head_dim) {
      found = true;
      f(d);
    }
  });
  return found;
}

// Number of presets.
inline constexpr std::size_t preset_count = decltype(boost::hana::length(presets::all))::value;

// Every preset's name, in the order of presets::all.
inline constexpr std::array<std::string_view, preset_count> preset_names =
    boost::hana::unpack(presets::all, [](auto... t) {
      return std::array<std::string_view, preset_count>{decltype(t)::type::name...};
    });

// The configuration of the preset called `name`, or nullptr when there is none. The pointer is
// to the preset's own static constexpr member (valid for the whole program).
constexpr const rope_config* find_preset(std::string_view name) {
  const rope_config* out = nullptr;
  select_preset(name, [&](auto t) { out = &decltype(t)::type::config; });
  return out;
}

// The names of all presets joined by `separator`, e.g. for a usage message.
inline std::string preset_names_joined(std::string_view separator = ", ") {
  std::string out;
  for (std::size_t i = 0; i < preset_names.size(); ++i) {
    if (i > 0) out.append(separator);
    out.append(preset_names[i]);
  }
  return out;
}

// "unknown preset 'NAME'; known presets: a, b, ...", for reporting a --preset that matched none.
inline std::string unknown_preset_message(std::string_view name) {
  std::string out = "unknown preset '";
  out.append(name);
  out.append("'; known presets: ");
  out.append(preset_names_joined(", "));
  return out;
}

// ---- model presets (presets::models, the per-layer plan)
// -----------------------------------------

// Calls f(hana::type_c<P>) for the model preset P of presets::models whose P::name equals `name`.
template <class F>
constexpr bool select_model_preset(std::string_view name, F&& f) {
  bool found = false;
  boost::hana::for_each(presets::models, [&](auto t) {
    using P = typename decltype(t)::type;
    if (!found && P::name == name) {
      found = true;
      f(t);
    }
  });
  return found;
}

inline constexpr std::size_t model_preset_count =
    decltype(boost::hana::length(presets::models))::value;

// Every model preset's name, in the order of presets::models.
inline constexpr std::array<std::string_view, model_preset_count> model_preset_names =
    boost::hana::unpack(presets::models, [](auto... t) {
      return std::array<std::string_view, model_preset_count>{decltype(t)::type::name...};
    });

// The model of the preset called `name`, or nullptr (a pointer to the preset's static member).
constexpr const model_config* find_model_preset(std::string_view name) {
  const model_config* out = nullptr;
  select_model_preset(name, [&](auto t) { out = &decltype(t)::type::model; });
  return out;
}

// The names of all model presets joined by `separator`.
inline std::string model_preset_names_joined(std::string_view separator = ", ") {
  std::string out;
  for (std::size_t i = 0; i < model_preset_names.size(); ++i) {
    if (i > 0) out.append(separator);
    out.append(model_preset_names[i]);
  }
  return out;
}

// Earlier names (the word "dispatch" is kept for choosing an ISA at run time,
// kernels/dispatch.hpp).
template <class F>
[[deprecated("posenc: use posenc::select_preset")]] constexpr bool dispatch_preset(
    std::string_view name, F&& f) {
  return select_preset(name, static_cast<F&&>(f));
}
template <class F>
[[deprecated("posenc: use posenc::select_head_dim")]] constexpr bool dispatch_head_dim(
    std::uint32_t head_dim, F&& f) {
  return select_head_dim(head_dim, static_cast<F&&>(f));
}

}  // namespace posenc
