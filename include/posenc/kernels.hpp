// posenc/kernels: applying positional encodings to tensors at run time (docs/kernels.md).
// Umbrella header of the kernels layer.
#pragma once

#include <posenc/kernels/alibi.hpp>
#include <posenc/kernels/alibi_reference.hpp>
#include <posenc/kernels/error.hpp>
#include <posenc/kernels/learned.hpp>
#include <posenc/kernels/learned_reference.hpp>
#include <posenc/kernels/mrope.hpp>
#include <posenc/kernels/mrope_reference.hpp>
#include <posenc/kernels/rope.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/sinusoidal.hpp>
#include <posenc/kernels/sinusoidal_reference.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/t5.hpp>
#include <posenc/kernels/t5_reference.hpp>
#include <posenc/kernels/temperature.hpp>
#include <posenc/kernels/temperature_reference.hpp>
#include <posenc/kernels/tensor.hpp>
