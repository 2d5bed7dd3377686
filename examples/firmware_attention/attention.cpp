// The kernel translation unit of the firmware attention example: the model's RoPE tables (compile
// time, .rodata), the laws they obey (static_asserts: building this file is the proof), and the
// forward pass behind a C entry point. Freestanding-clean: it builds with
//   arm-none-eabi-g++ -std=c++20 -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -O2
//     -ffreestanding -fno-exceptions -fno-rtti -I include -I examples/firmware_attention
// and references no libm symbol (tests/freestanding checks the object with arm-none-eabi-nm).
//
// Operation order (main.cpp's error analysis relies on it; every sum is a left-to-right float
// sum, and no step needs libm):
//   q, k, v = x W_q, x W_k, x W_v        dot products of length d_model (exact: attention.hpp)
//   q, k <- RoPE(q, k) at position t     posenc::kernels::apply_rope on the compile-time cache
//   s_j = (q_h . k_h[j]) * 1/8           j = 0 .. t (causal), dot products of length head_dim
//   e_j = exp(s_j - max_j s_j)           posenc::math::exp(float): correctly rounded, constexpr
//   p_j = e_j / sum_j e_j
//   y_h = o_h = sum_j p_j v_h[j]
#include "attention.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

#include <posenc/analysis/decay.hpp>
#include <posenc/analysis/laws.hpp>
#include <posenc/kernels/rope.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/math/exp.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/tables/rope_cache.hpp>

namespace {

namespace pa = posenc::analysis;
namespace pk = posenc::kernels;
using fw::context;
using fw::d_model;
using fw::head_dim;
using fw::heads;

constexpr posenc::rope_config config = posenc::checked_rope<fw::model>;
constexpr std::size_t pairs = head_dim / 2;

// The cos/sin cache of positions [0, context): correctly rounded floats computed by the compiler.
constexpr const auto& cache = posenc::rope_cache_v<fw::model, float, context>;
static_assert(sizeof(cache.cos) == context * pairs * sizeof(float) &&
                  sizeof(cache.sin) == context * pairs * sizeof(float),
              "compact cache: 2 * context * (head_dim / 2) floats");
static_assert(cache.attention_factor == 1.0, "no scaling: cos and sin carry no attention factor");
static_assert(cache.cos_at(0, 0) == 1.0f && cache.sin_at(0, 0) == 0.0f,
              "position 0 is the identity");

// ---- the laws, on the table the kernel reads (posenc/analysis/laws.hpp, docs/laws.md) ---------
constexpr pa::grid_rotation<float, context, pairs> rotation{&cache, config};

// head_dim values in [-1, 1) from the example's hash (attention.hpp).
constexpr std::array<double, head_dim> probe_vector(std::uint32_t seed) {
  std::array<double, head_dim> v{};
  for (std::uint32_t j = 0; j < head_dim; ++j)
    v[j] = static_cast<double>(fw::hash32(seed * 0x10000u + j) >> 8) * 0x1p-23 - 1.0;
  return v;
}

// orthogonality at every position of the table, norm preservation at every eighth (Clang's
// constant evaluator is the slower one: this keeps the file at a few seconds); relative-only
// dependence <R_m q, R_n k> = <R_{m+s} q, R_{n+s} k> for pairs (m, n) shifted across the table; and
// the matrix form R_m^T R_n = R_{n-m}. Each within the error bound derived beside the law.
constexpr bool rotation_laws() {
  constexpr auto q = probe_vector(1);
  constexpr auto k = probe_vector(2);
  const double norm_tol = pa::norm_tolerance<float>(head_dim, pa::vector_norm(q));
  const double rel_tol =
      pa::relative_tolerance<float>(head_dim, pa::vector_norm(q), pa::vector_norm(k));
  for (std::uint64_t m = 0; m < context; ++m) {
    if (!(pa::orthogonality(rotation, m) <= pa::orthogonality_tolerance<float>())) return false;
    if (m % 8 == 7 && !(pa::norm_preservation(rotation, m, q) <= norm_tol)) return false;
  }
  constexpr std::uint64_t last = context - 1;
  const std::uint64_t mns[][3] = {{0, 1, last - 1}, {last - 1, 0, 1}, {3, 17, 200}, {100, 5, 150}};
  for (const auto& t : mns)
    if (!(pa::relative_dependence(rotation, t[0], t[1], t[2], q, k) <= rel_tol)) return false;
  const std::uint64_t ps[] = {1, 7, 100, last};
  for (const std::uint64_t m : ps)
    for (const std::uint64_t n : ps)
      if (!(pa::relative_dependence_blocks(rotation, m, n) <=
            pa::relative_blocks_tolerance<float>()))
        return false;
  return true;
}
static_assert(rotation_laws(),
              "orthogonality, norm preservation and relative-only dependence of the model's "
              "compile-time float table (tolerances: posenc/analysis/laws.hpp)");

// Decay (RoFormer §3.4.3; docs/formulas.md §8): the bound f(r) stays below f(0) at every
// distance the context holds. f is not monotone, so that is the statement proven here.
static_assert(pa::decay_below_origin(pa::thetas_of<pairs>(config), context - 1) <
                  -pa::decay_tolerance(pairs),
              "decay: f(r) < f(0) for 1 <= r < context");

// The kernel's view of the cache: compact rows, half-split pairs.
constexpr pk::rope_table table = pk::make_rope_table(cache.view(), config.layout);
// Its shape, at compile time; apply_rope checks the whole table (pointers included) on every call.
// check_table itself is not asserted here: GCC's -fsanitize=address does not fold the address of a
// global against nullptr, so its pointer checks are no constant expressions in sanitizer builds.
static_assert(table.format == pk::rope_table_format::compact && table.layout == config.layout &&
                  table.rotary_dim == head_dim && table.positions == context,
              "the kernel reads the compact cache of every position in the context");

// ---- the forward pass --------------------------------------------------------------------------
// The KV cache (static: no heap). 2 * context * d_model floats = 512 KiB.
float k_cache[context][d_model];
float v_cache[context][d_model];

// out = in W (W = fw::weight(m, ., .)), each output a left-to-right sum of d_model products.
void project(const float* in, fw::matrix m, float* out) {
  for (std::uint32_t col = 0; col < d_model; ++col) {
    float acc = 0.0f;
    for (std::uint32_t row = 0; row < d_model; ++row) acc += in[row] * fw::weight(m, row, col);
    out[col] = acc;
  }
}

// Causal attention of the query at position t (already rotated) over keys 0 .. t, one head.
void attend(const float* q, std::uint32_t t, std::uint32_t h, float* out) {
  float p[context];
  const std::uint32_t c0 = h * head_dim;
  for (std::uint32_t j = 0; j <= t; ++j) {
    float s = 0.0f;
    for (std::uint32_t i = 0; i < head_dim; ++i) s += q[c0 + i] * k_cache[j][c0 + i];
    p[j] = s * fw::score_scale;
  }
  float mx = p[0];
  for (std::uint32_t j = 1; j <= t; ++j) mx = p[j] > mx ? p[j] : mx;
  float z = 0.0f;
  for (std::uint32_t j = 0; j <= t; ++j) {
    p[j] = posenc::math::exp(p[j] - mx);
    z += p[j];
  }
  for (std::uint32_t j = 0; j <= t; ++j) p[j] = p[j] / z;
  for (std::uint32_t i = 0; i < head_dim; ++i) {
    float acc = 0.0f;
    for (std::uint32_t j = 0; j <= t; ++j) acc += p[j] * v_cache[j][c0 + i];
    out[c0 + i] = acc;
  }
}

}  // namespace

extern "C" int posenc_fw_attention_forward(const float* x, std::uint32_t tokens, float* y) {
  if (tokens > context) return posenc_fw_too_many_tokens;
  if (tokens > 0 && (x == nullptr || y == nullptr)) return posenc_fw_null_pointer;
  float q[d_model];
  for (std::uint32_t t = 0; t < tokens; ++t) {
    const float* xt = x + static_cast<std::size_t>(t) * d_model;
    project(xt, fw::matrix::wq, q);
    project(xt, fw::matrix::wk, k_cache[t]);
    project(xt, fw::matrix::wv, v_cache[t]);
    const pk::token_positions pos = pk::token_positions::from(t);
    if (pk::apply_rope<float>(table, pk::dense(q, 1, heads, head_dim), pos) !=
            pk::kernel_error::ok ||
        pk::apply_rope<float>(table, pk::dense(k_cache[t], 1, heads, head_dim), pos) !=
            pk::kernel_error::ok)
      return posenc_fw_kernel_error;
    float* yt = y + static_cast<std::size_t>(t) * d_model;
    for (std::uint32_t h = 0; h < heads; ++h) attend(q, t, h, yt);
  }
  return posenc_fw_ok;
}

extern "C" int posenc_fw_rotated_query(const float* x_t, std::uint32_t position, float* q) {
  if (position >= context) return posenc_fw_too_many_tokens;
  if (x_t == nullptr || q == nullptr) return posenc_fw_null_pointer;
  project(x_t, fw::matrix::wq, q);
  if (pk::apply_rope<float>(table, pk::dense(q, 1, heads, head_dim),
                            pk::token_positions::from(position)) != pk::kernel_error::ok)
    return posenc_fw_kernel_error;
  return posenc_fw_ok;
}

extern "C" const float* posenc_fw_rope_cos(void) {
  return cache.cos;
}
extern "C" const float* posenc_fw_rope_sin(void) {
  return cache.sin;
}
extern "C" std::size_t posenc_fw_rope_table_bytes(void) {
  return sizeof(cache.cos) + sizeof(cache.sin);
}
