// Errors of the kernels. Every kernel checks all of its arguments first and returns the first
// problem found before it writes anything; it never reads or writes out of bounds.
#pragma once

#include <cstdint>

namespace posenc::kernels {

enum class kernel_error : std::uint8_t {
  ok,
  null_data,              // a non-empty tensor or table without data
  shape_mismatch,         // input/output (or q/k) shapes differ, or ids.size() != tokens
  bad_strides,            // strides make elements share an address, or the extent overflows
  overlap,                // an output partly overlaps an input (exact aliasing = in place is fine)
  rotary_dim_mismatch,    // the table's rotary_dim is odd, 0, or larger than head_dim
  dim_mismatch,           // an additive table's width differs from the tensor's channels
  position_out_of_range,  // a position at or past the table's end and nothing to compute it from
  negative_position,      // a negative position id
  invalid_config,         // the configuration given for on-the-fly values is invalid
  invalid_argument,       // any other argument out of its documented range
};

constexpr const char* message(kernel_error e) {
  switch (e) {
    case kernel_error::ok:
      return "posenc: ok";
    case kernel_error::null_data:
      return "posenc: a non-empty tensor or table has no data";
    case kernel_error::shape_mismatch:
      return "posenc: tensor shapes differ (tokens, heads, head_dim), or the number of position "
             "ids is not the number of tokens";
    case kernel_error::bad_strides:
      return "posenc: tensor strides make two elements share an address, or the tensor's extent "
             "overflows";
    case kernel_error::overlap:
      return "posenc: an output tensor partly overlaps an input (in place needs the same view)";
    case kernel_error::rotary_dim_mismatch:
      return "posenc: the table's rotary_dim must be even, >= 2 and <= the tensor's head_dim";
    case kernel_error::dim_mismatch:
      return "posenc: the table's width differs from the tensor's channels";
    case kernel_error::position_out_of_range:
      return "posenc: a position is at or past the end of the table";
    case kernel_error::negative_position:
      return "posenc: a position id is negative";
    case kernel_error::invalid_config:
      return "posenc: the configuration for on-the-fly values is invalid";
    case kernel_error::invalid_argument:
      return "posenc: an argument is outside its documented range";
  }
  return "posenc: unknown kernel error";
}

}  // namespace posenc::kernels
