// Fuzz harness: the input file of `posenc apply` (tools/cli/apply.hpp), parsed, then (when small)
// rotated by the dispatch kernels and written as JSON, as `posenc apply` does. Expected outcomes:
// output, or cli_error. A finding: any other exception, a sanitizer report, or a non-finite output
// value where none can overflow (every |x| <= 2^126 and attention factor 1: a rotation's
// |y| <= |x_a| + |x_b| <= 2^127 < FLT_MAX).
#include <cmath>
#include <sstream>
#include <string>

#include <posenc/spec/rope.hpp>

#include "cli/apply.hpp"
#include "cli/error.hpp"
#include "fuzz.hpp"

namespace {
// Keeps one input's work in the microseconds: a few thousand elements, and either a small cos/sin
// table or, past positions 2^20, rows on the fly.
constexpr std::size_t max_elements = 4096;
constexpr std::int64_t max_cached_position = 4096;
constexpr std::int64_t first_on_the_fly_position = std::int64_t{1} << 20;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posenc::cli;
  try {
    const apply_input in = parse_apply_input(posenc_fuzz::as_text(data, size), "input.json");
    if (in.x.size() != in.tokens * in.heads * in.head_dim || in.positions.size() != in.tokens)
      posenc_fuzz::finding("parse_apply_input returned an inconsistent shape");
    if (in.x.size() > max_elements || in.head_dim < 2) return 0;
    for (const std::int64_t p : in.positions)
      if (p < 0 || (p > max_cached_position && p < first_on_the_fly_position)) return 0;
    posenc::rope_config c;
    c.head_dim = static_cast<std::uint32_t>(in.head_dim);
    c.rotary_dim = c.head_dim & ~std::uint32_t{1};
    if (posenc::validate(c) != posenc::rope_error::ok) return 0;
    const apply_result r = compute_apply(c, in, 0);
    bool small = true;
    for (const float v : in.x) small = small && std::fabs(v) <= 0x1p126f;
    for (const float v : r.y)
      if (small && !std::isfinite(v)) posenc_fuzz::finding("apply gave a non-finite value");
    std::ostringstream out;
    write_apply(out, r, output_format::json, config_echo{});
  } catch (const cli_error&) {
    // The expected rejection of invalid input.
  }
  return 0;
}
