// One misuse of the kernel API (-DPOSENC_MISUSE_<case>), which must not compile, or with
// -DPOSENC_VALID its corrected twin, which must. Compiled by misuse.sh with -fsyntax-only; the
// cases and the text the compiler's output must contain are listed in meson.build.
#include <posenc/kernels.hpp>
#include <posenc/kernels/dispatch.hpp>
#include <posenc/tables.hpp>

#include <cstdint>
#include <vector>

namespace pk = posenc::kernels;
namespace pd = posenc::kernels::dispatch;

namespace {

[[maybe_unused]] constexpr posenc::rope_config llama_like() {
  return {64, 64, 500000.0, posenc::rope_layout::half, {}};
}

[[maybe_unused]] std::vector<std::int64_t> positions_from_somewhere() {
  return {5, 6, 7};
}

#ifdef POSENC_VALID
constexpr bool valid = true;
#else
constexpr bool valid = false;
#endif

[[maybe_unused]] pk::kernel_error misuse(const posenc::rope_cache_view<float>& cache, float* q) {
  [[maybe_unused]] const pk::token_positions pos0 = pk::token_positions::from(0);
  static_cast<void>(cache);
  static_cast<void>(q);
  static_cast<void>(valid);

#if defined(POSENC_MISUSE_temporary_config_table)
  // The table would keep the address of the temporary config.
#ifdef POSENC_VALID
  static constexpr posenc::rope_config config = llama_like();
  const pk::rope_table table = pk::make_rope_table(cache, config, 0);
#else
  const pk::rope_table table = pk::make_rope_table(cache, llama_like(), 0);
#endif
  return pk::apply_rope(table, pk::dense(q, 3, 1, 64), pos0);

#elif defined(POSENC_MISUSE_temporary_config_on_the_fly)
#ifdef POSENC_VALID
  const posenc::rope_config config = llama_like();
  const pk::rope_table table = pk::on_the_fly_table(config);
#else
  const pk::rope_table table = pk::on_the_fly_table(llama_like());
#endif
  return pk::apply_rope(table, pk::dense(q, 3, 1, 64), pos0);

#elif defined(POSENC_MISUSE_temporary_expanded_cache)
  // table() of a temporary cache would point into it.
#ifdef POSENC_VALID
  static const pk::expanded_rope_cache<4, 64> expanded{};
  const pk::rope_table table = expanded.table();
#else
  const pk::rope_table table = pk::expanded_rope_cache<4, 64>{}.table();
#endif
  return pk::apply_rope(table, pk::dense(q, 3, 1, 64), pos0);

#elif defined(POSENC_MISUSE_unsigned_position_ids)
  // Unsigned ids would wrap instead of being reported as negative.
#ifdef POSENC_VALID
  const std::vector<std::int32_t> ids{5, 6, 7};
#else
  const std::vector<std::uint32_t> ids{5, 6, 7};
#endif
  return pk::apply_rope(pk::make_rope_table(cache, posenc::rope_layout::half),
                        pk::dense(q, 3, 1, 64), pk::token_positions::of(ids));

#elif defined(POSENC_MISUSE_temporary_position_ids)
  // The positions would point into the vector destroyed at the end of the statement.
#ifdef POSENC_VALID
  const std::vector<std::int64_t> ids = positions_from_somewhere();
  const pk::token_positions pos = pk::token_positions::of(ids);
#else
  const pk::token_positions pos = pk::token_positions::of(positions_from_somewhere());
#endif
  return pk::apply_rope(pk::make_rope_table(cache, posenc::rope_layout::half),
                        pk::dense(q, 3, 1, 64), pos);

#elif defined(POSENC_MISUSE_raw_16_bit_storage) || \
    defined(POSENC_MISUSE_raw_16_bit_storage_dispatched)
  // A buffer of uint16_t says nothing of its format (binary16 or bfloat16); the kernels built for
  // this architecture and the dispatched ones both refuse it.
#if !defined(POSENC_VALID)
  std::vector<std::uint16_t> h(3 * 64);
#elif defined(POSENC_MISUSE_raw_16_bit_storage_dispatched) && POSENC_HAS_FLOAT16
  std::vector<_Float16> h(3 * 64);
#else
  std::vector<posenc::f16> h(3 * 64);
#endif
#if defined(POSENC_MISUSE_raw_16_bit_storage_dispatched)
  namespace api = pd;
#else
  namespace api = pk;
#endif
  return api::apply_rope(pk::make_rope_table(cache, posenc::rope_layout::half),
                         pk::dense(h.data(), 3, 1, 64), pos0);

#elif defined(POSENC_MISUSE_temporary_runtime_cache_view)
  // The view would point into the vectors of a cache destroyed at the end of the statement.
#ifdef POSENC_VALID
  const auto runtime_cache = posenc::runtime_rope_cache<float>::make(llama_like(), 16);
  const posenc::rope_cache_view<float> view = runtime_cache.view();
#else
  const posenc::rope_cache_view<float> view =
      posenc::runtime_rope_cache<float>::make(llama_like(), 16).view();
#endif
  return pk::apply_rope(pk::make_rope_table(view, posenc::rope_layout::half),
                        pk::dense(q, 3, 1, 64), pos0);

#elif defined(POSENC_MISUSE_temporary_learned_table_view)
#ifdef POSENC_VALID
  const posenc::runtime_learned_table<float> learned{};
  const posenc::learned_table_view<float> view = learned.view();
#else
  const posenc::learned_table_view<float> view = posenc::runtime_learned_table<float>{}.view();
#endif
  return view.data == nullptr ? pk::kernel_error::null_data : pk::kernel_error::ok;

#elif defined(POSENC_MISUSE_temporary_learned_weights)
  // A loader's returned vector is destroyed at the end of the statement; the view would not be.
  const posenc::learned_config config{4, 64, 0};
#ifdef POSENC_VALID
  const std::vector<float> weights(4 * 64);
  const auto view = posenc::make_learned_view<float>(config, weights);
#else
  const auto view = posenc::make_learned_view<float>(config, std::vector<float>(4 * 64));
#endif
  return view.data == nullptr ? pk::kernel_error::null_data : pk::kernel_error::ok;

#else
#error "compile with -DPOSENC_MISUSE_<case>"
#endif
}

}  // namespace
