#include "cli/run.hpp"

#include <posenc/version.hpp>

#include <cerrno>
#include <cstring>
#include <exception>
#include <ios>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/compute.hpp"
#include "cli/error.hpp"
#include "cli/gguf.hpp"
#include "cli/hf_config.hpp"
#include "cli/output.hpp"
#include "cli/presets.hpp"
#include "cli/usage.hpp"

namespace posenc::cli {

namespace {
std::string key_list(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) {
    out += ' ';
    out += printable(k);
  }
  return out.empty() ? " (none)" : out;
}
}  // namespace

resolved_config configure(const invocation& inv) {
  config_draft d;
  config_keys keys;
  draft_sources sources;
  const std::string* file = nullptr;
  if (inv.preset) {
    d = preset_draft(*inv.preset);
    sources = label_fields(d, "preset " + printable(*inv.preset));
  }
  if (inv.hf_config) {
    d = load_hf_config(*inv.hf_config, inv.max_input_bytes.value_or(max_config_bytes),
                       inv.max_depth.value_or(max_config_depth),
                       source_options{inv.layer_type.value_or("")}, &keys);
    file = &*inv.hf_config;
  }
  if (inv.gguf) {
    d = load_gguf(*inv.gguf, inv.max_input_bytes.value_or(max_gguf_bytes), &keys);
    file = &*inv.gguf;
  }
  if (file != nullptr) sources = keys.sources;
  // Before the configuration is checked, so that they also explain a rejection.
  if (inv.diagnostics != nullptr && file != nullptr) {
    std::ostream& err = *inv.diagnostics;
    for (const std::string& w : keys.warnings) err << w << '\n';
    if (inv.verbose)
      err << "posenc: " << printable(*file) << ": keys used:" << key_list(keys.used) << '\n'
          << "posenc: " << printable(*file) << ": keys not used:" << key_list(keys.unused) << '\n';
  }
  resolved_config r = resolve(overlay(std::move(d), inv.flags),
                              overlay_sources(std::move(sources), inv.flags, inv.flag_sources));
  check_derived(r.config(), inv.seq_len);
  // HF's seq_len (0: none); apply replaces it with the one it derives.
  r.echo.set_uint("seq_len", inv.seq_len, inv.seq_len_given ? "flag --seq-len" : "default");
  if (file != nullptr) {
    r.echo.file = (inv.gguf ? "gguf " : "config ") + printable(*file);
    r.echo.keys_used = keys.used;
    r.echo.keys_not_used = keys.unused;
  }
  return r;
}

namespace {
// The one line for a failed write to `out`: errno names the cause (ENOSPC, EPIPE) when the write
// was a system call's.
std::string write_failure(int error) {
  std::string m = "posenc: cannot write to standard output";
  if (error != 0) m += std::string(" (") + std::strerror(error) + ")";
  return m;
}

// Sets `out` to throw on its first failed write, so that a command stops at once when standard
// output is a full disk or a closed pipe; restores the stream's own setting when done.
class throw_on_write_failure {
 public:
  explicit throw_on_write_failure(std::ostream& out) : out_(out), saved_(out.exceptions()) {
    out_.exceptions(saved_ | std::ios::badbit);
  }
  ~throw_on_write_failure() {
    try {
      out_.exceptions(saved_);
    } catch (...) {  // the caller's own mask on a stream that failed: its state says so
    }
  }
  throw_on_write_failure(const throw_on_write_failure&) = delete;
  throw_on_write_failure& operator=(const throw_on_write_failure&) = delete;

 private:
  std::ostream& out_;
  std::ios::iostate saved_;
};
}  // namespace

int run(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  // Files a command writes (--svg) appear under their names only if the whole command succeeds,
  // its standard output included (docs/cli.md, "Errors").
  staged_files staged;
  std::optional<throw_on_write_failure> guard;
  std::string message;
  int status = exit_invalid;
  try {
    guard.emplace(out);
    invocation inv = parse_args(args);
    inv.diagnostics = &err;
    for (const std::string& w : inv.warnings) err << w << '\n';
    if (inv.help && inv.cmd != command::none) {
      out << command_help(command_of(inv.cmd));
      out.flush();
      return exit_ok;
    }
    if (inv.help) {
      out << usage_text();
      if (presets_available()) out << '\n' << preset_help();
      out.flush();
      return exit_ok;
    }
    if (inv.version) {
      out << "posenc " << POSENC_VERSION_STRING << '\n';
      out.flush();
      return exit_ok;
    }
    const int command_status = command_of(inv.cmd).run(inv, out);
    out.flush();
    if (out.bad()) throw std::ios::failure("write");
    staged.commit();
    return command_status;
  } catch (const cli_error& e) {
    message = e.what();
    status = e.exit_status();
  } catch (const std::bad_alloc&) {
    message = "posenc: out of memory";
  } catch (const std::exception& e) {
    // A failed write to `out` throws std::ios::failure (of either ABI: caught as std::exception).
    message = out.bad() ? write_failure(errno) : "posenc: internal error: " + printable(e.what());
  } catch (...) {
    message = "posenc: internal error";
  }
  // `err` may flush `out` first (std::cerr is tied to std::cout): `out` must not throw then.
  guard.reset();
  err << message << '\n';
  return status;
}

}  // namespace posenc::cli
