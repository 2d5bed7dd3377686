// posenc specs: the configuration of every encoding (RoPE, sinusoidal, learned, ALiBi), its rules
// (validate at run time, checked_<encoding><S> at compile time) and the learned presets. The RoPE
// presets and select_preset (spec/presets.hpp, spec/select.hpp) need Boost.Hana: include them by
// name.
#pragma once

#include <posenc/spec/alibi.hpp>
#include <posenc/spec/attention_temperature.hpp>
#include <posenc/spec/learned.hpp>
#include <posenc/spec/mrope.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/spec/sinusoidal.hpp>
#include <posenc/spec/t5.hpp>
