#include "cli/run.hpp"

#include <posenc/version.hpp>

#include <exception>
#include <new>
#include <string>

#include "cli/commands.hpp"
#include "cli/compute.hpp"
#include "cli/error.hpp"
#include "cli/hf_config.hpp"
#include "cli/presets.hpp"
#include "cli/usage.hpp"

namespace posenc::cli {

resolved_config configure(const invocation& inv) {
  config_draft d;
  if (inv.preset) d = preset_draft(*inv.preset);
  if (inv.hf_config) d = load_hf_config(*inv.hf_config);
  resolved_config r = resolve(overlay(std::move(d), inv.flags));
  check_derived(r.config(), inv.seq_len);
  return r;
}

int run(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  try {
    const invocation inv = parse_args(args);
    if (inv.help) {
      out << usage_text();
      if (presets_available()) out << "\nPresets: " << preset_list() << '\n';
      return exit_ok;
    }
    if (inv.version) {
      out << "posenc " << POSENC_VERSION_STRING << '\n';
      return exit_ok;
    }
    return command_of(inv.cmd).run(inv, out);
  } catch (const cli_error& e) {
    err << e.what() << '\n';
    return e.exit_status();
  } catch (const std::bad_alloc&) {
    err << "posenc: out of memory\n";
    return exit_invalid;
  } catch (const std::exception& e) {
    err << "posenc: internal error: " << printable(e.what()) << '\n';
    return exit_invalid;
  }
}

}  // namespace posenc::cli
