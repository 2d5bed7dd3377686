// posenc tables: RoPE cos/sin caches (compile time and run time, bit-identical) and the rotation
// matrices R_m with their scalar reference application.
#pragma once

#include <posenc/tables/alibi.hpp>
#include <posenc/tables/learned.hpp>
#include <posenc/tables/mrope.hpp>
#include <posenc/tables/rope_cache.hpp>
#include <posenc/tables/rotation.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>
#include <posenc/tables/sinusoidal.hpp>
#include <posenc/tables/t5.hpp>
