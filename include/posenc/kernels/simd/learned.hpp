// The xsimd kernel adding learned position embeddings, for one architecture Arch (explicitly
// instantiable per ISA: template <class Arch, storage_type T> simd::add_learned): the additive
// SIMD loop (detail/additive_simd.hpp) over the table's rows, bit-identical to
// add_learned_reference.
#pragma once

#include <posenc/kernels/detail/additive_simd.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/learned_reference.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/learned.hpp>

namespace posenc::kernels::simd {

template <class Arch, storage_type T>
kernel_error add_learned(const learned_table_view<T>& table, const tensor_view<const T>& in,
                         const tensor_view<T>& out, const token_positions& pos) {
  return detail::add_table<Arch>(kernels::detail::rows_of(table), in, out, pos);
}

template <class Arch, storage_type T>
kernel_error add_learned(const learned_table_view<T>& table, const tensor_view<T>& x,
                         const token_positions& pos) {
  return add_learned<Arch, T>(table, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels::simd
