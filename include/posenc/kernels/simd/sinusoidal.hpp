// xsimd kernel adding a sinusoidal table, for one architecture Arch (explicitly instantiable per
// ISA: template <class Arch, storage_type T> simd::add_sinusoidal). Same loop as add_learned
// (kernels/simd/learned.hpp) over float table rows; bit-identical to the scalar reference.
#pragma once

#include <xsimd/xsimd.hpp>

#include <posenc/kernels/error.hpp>
#include <posenc/kernels/simd/learned.hpp>
#include <posenc/kernels/sinusoidal.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/tables/sinusoidal.hpp>

namespace posenc::kernels::simd {

template <class Arch, storage_type T>
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<const T> in,
                            tensor_view<T> out, token_positions pos) {
  const kernels::detail::table_rows<float> rows = kernels::detail::rows_of(table);
  if (const kernel_error e = kernels::detail::check_add(rows, in, out, pos); e != kernel_error::ok)
    return e;
  detail::add_rows<Arch>(rows, in, out, pos);
  return kernel_error::ok;
}

template <class Arch, storage_type T>
kernel_error add_sinusoidal(const sinusoidal_table_view<float>& table, tensor_view<T> x,
                            token_positions pos) {
  return add_sinusoidal<Arch, T>(table, tensor_view<const T>(x), x, pos);
}

}  // namespace posenc::kernels::simd
