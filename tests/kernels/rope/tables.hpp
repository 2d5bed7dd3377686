// The tables of the RoPE kernel tests (equivalence.cpp, semantics.cpp, input_types.cpp): one
// config's cache of P rows in both formats, as kernel tables with or without on-the-fly rows.
// Header-only and free of RapidCheck (input_types.cpp and the cross builds do without it).
#pragma once

#include <posenc/kernels.hpp>
#include <posenc/tables/rope_cache.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace posenc_test::krope {

namespace pk = posenc::kernels;
using posenc::rope_config;
using posenc::rope_layout;

// A config's cache for positions [0, P) in both formats. Not copyable: its rope_tables point at
// the config.
struct Tables {
  rope_config cfg;
  std::size_t positions = 0;
  std::vector<float> cos, sin;    // compact, P * R/2
  std::vector<float> ecos, esin;  // expanded, P * R

  Tables(std::uint32_t head_dim, std::uint32_t rotary_dim, double base, rope_layout layout,
         std::size_t P)
      : positions(P) {
    cfg.head_dim = head_dim;
    cfg.rotary_dim = rotary_dim;
    cfg.base = base;
    cfg.layout = layout;
    const std::size_t h = rotary_dim / 2;
    cos.assign(P * h + 1, 0.0f);  // +1: never empty, so data() is not null for P = 0
    sin.assign(P * h + 1, 0.0f);
    ecos.assign(P * 2 * h + 1, 0.0f);
    esin.assign(P * 2 * h + 1, 0.0f);
    if (posenc::build_rope_cache<float>(cfg, P, cos.data(), sin.data()) != posenc::rope_error::ok)
      throw std::runtime_error("invalid test config");
    pk::expand_rope_cache(view(), layout, ecos.data(), esin.data());
  }
  Tables(const Tables&) = delete;
  Tables& operator=(const Tables&) = delete;

  posenc::rope_cache_view<float> view() const {
    return {cos.data(), sin.data(), positions, cfg.rotary_dim / 2, 1.0};
  }
  // The table in a format, optionally with on-the-fly rows past P.
  pk::rope_table table(pk::rope_table_format format, bool on_the_fly) const {
    pk::rope_table t =
        on_the_fly ? pk::make_rope_table(view(), cfg) : pk::make_rope_table(view(), cfg.layout);
    if (format == pk::rope_table_format::expanded) {
      t.cos = ecos.data();
      t.sin = esin.data();
      t.format = format;
    }
    return t;
  }
  // By kind: 0 the cache, 1 the cache then rows on the fly, 2 rows on the fly only.
  pk::rope_table table_of_kind(pk::rope_table_format format, int kind) const {
    return kind == 2 ? pk::on_the_fly_table(cfg) : table(format, kind == 1);
  }
};

}  // namespace posenc_test::krope
