#include "cli/run.hpp"

#include <posenc/version.hpp>

#include <exception>
#include <new>
#include <string>

#include "cli/accuracy.hpp"
#include "cli/analysis.hpp"
#include "cli/apply.hpp"
#include "cli/compute.hpp"
#include "cli/emit.hpp"
#include "cli/additive.hpp"
#include "cli/error.hpp"
#include "cli/hf_config.hpp"
#include "cli/output.hpp"
#include "cli/presets.hpp"

namespace posenc::cli {

const char* usage_text() {
  return R"(usage: posenc freqs [config] [--seq-len N] [--format json|csv|text]
       posenc table --positions A:B [config] [--seq-len N] [--format json|csv|text]
       posenc apply --input FILE [config] [--seq-len N] [--format json|csv|text]
       posenc alibi --heads H [--length L] [--variant causal|symmetric] [--bloom] [--format F]
       posenc sinusoidal --dim D --positions N [--layout paper|split] [--padding-idx P]
                         [--base B] [--format F]
       posenc decay --max-distance N [config] [--csv | --format F] [--svg FILE]
       posenc dials --context N [config] [--format F] [--svg FILE]
       posenc ramp [config with yarn or llama3] [--format F] [--svg FILE]
       posenc check [config] [--max-distance N] [--format F]
       posenc emit --lang c|cpp --max-pos N [config] [--table compact|simd] [--name PREFIX]
       posenc accuracy [config] [--positions p1,p2,...] [--format F] [--svg FILE]
       posenc --help | --version

Commands:
  freqs   inv_freq of every rotary pair (float32 and float64) and the attention factor
  table   cos and sin of p * inv_freq_i, times the attention factor, as float32, for the
          positions A <= p < B (B <= 2^32, at most 2^20 positions and 2^24 entries per call)
  apply   RoPE applied to the tensor x of a JSON file {"x": [...], "shape": [tokens, heads,
          head_dim], "positions": [...]} (positions optional: 0, 1, ...) -> {"y": [...]};
          head_dim defaults to shape[2]
  alibi   ALiBi slopes of H heads as float32 (the reference get_slopes, or BLOOM's float32
          powers with --bloom); with --length L also each head's L x L bias (row-major, query i,
          key j): -m (i - j) for j <= i and 0 for later keys (causal), or -m |i - j| (symmetric)
  sinusoidal  the sinusoidal position table, rows 0 to N-1 of width D, float32 correctly
          rounded: paper layout (interleaved sin/cos, exponent 2k/D) or split (fairseq/
          tensor2tensor: [sin | cos], exponent k/(D/2-1), zero column for odd D); --padding-idx
          zeroes that row as fairseq does (at most 2^24 values per call for both commands)

  decay   the RoFormer decay bound f(r) for r = 0..N (N <= 2^24) and the means of f over the
          dyadic windows [2^k, 2^(k+1)); text summary, or --csv: distance,bound,window_mean
  dials   per rotary pair: inv_freq, wavelength 2 pi/inv_freq, turns over the context N and
          whether it never completes one, next to the unscaled configuration's values
  ramp    per pair, the weight of inv_freq/factor in the YaRN or llama3 blend (0: unchanged,
          1: divided by the factor) and HF's own ramp_factor / smooth_factor
  check   the laws (orthogonality, norm, relative dependence, decay) on samples of this
          configuration: worst deviation, limit, pass/fail; exit 3 if a law fails
  --svg FILE writes a plot (decay, dials, ramp); docs/analysis.md

  emit    a self-contained C99 (c) or C++20 (cpp) header on stdout: the float32 cos/sin table
          for positions 0 to N-1 (compact: rotary_dim/2 entries a position; simd: rotary_dim,
          by channel), its configuration and measured accuracy in a comment, and an in-place
          rotation function, bit for bit the library's (max_pos x rotary_dim <= 2^21); --name
          sets the prefix (default posenc_rope)
  accuracy  max abs error of float32 cos/sin vs exact at each position (default 1000, 65536,
          1000000): posenc's table, HF's float32 angle, ggml's running product; --svg FILE
          plots a log-spaced sweep from 1 to 10^7 (docs/accuracy.md)

Config (flags override the fields of --preset or --hf-config, wherever they appear):
  --preset NAME                 a published model's configuration
  --hf-config FILE              a Hugging Face config.json
  --head-dim D                  head dimension (at most 65536)
  --rotary-dim R                rotated channels (default D)
  --partial-rotary-factor F     R = int(D * F), F in (0, 1]
  --base B                      rope_theta (default 10000)
  --layout interleaved|half     rotation pairs (2i, 2i+1) or (i, i + R/2) (default half)
  --scaling none|linear|ntk|dynamic|yarn|llama3|longrope   (default none)
  --factor S                    scaling factor
  --original-max N              original_max_position_embeddings (yarn, llama3, longrope)
  --max-position-embeddings N   max_position_embeddings (dynamic, longrope)
  --beta-fast X, --beta-slow X  yarn correction range (default 32, 1)
  --no-truncate, --truncate     yarn: keep the correction range unrounded, or floor/ceil it
  --mscale X, --mscale-all-dim X   yarn (DeepSeek) magnitude pair
  --attention-factor X          yarn, longrope: explicit attention factor
  --low-freq-factor X, --high-freq-factor X   llama3 (default 1, 4)
  --short-factor a,b,...        longrope: R/2 factors each
  --long-factor a,b,...

Run:
  --seq-len N                   HF's seq_len (dynamic: grows the base past
                                max_position_embeddings; longrope: long factors past the
                                original context); default none
  --positions A:B               table: positions A to B-1
  --positions p1,p2,...         accuracy: the positions (each below 2^32, at most 4096)
  --input FILE                  apply: the input JSON file
  --format json|csv|text        output format (default json)

Errors: one line on stderr and nothing on stdout; exit 1 for an invalid configuration or input
file, 2 for a usage error, 3 when `check` finds a law that fails.
)";
}

resolved_config configure(const invocation& inv) {
  config_draft d;
  if (inv.preset) d = preset_draft(*inv.preset);
  if (inv.hf_config) d = load_hf_config(*inv.hf_config);
  return resolve(overlay(std::move(d), inv.flags));
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
    if (inv.cmd == command::alibi) {
      write_alibi(out, compute_alibi(inv), inv.format);
      return exit_ok;
    }
    if (inv.cmd == command::sinusoidal) {
      write_sinusoidal(out, compute_sinusoidal(inv), inv.format);
      return exit_ok;
    }
    if (inv.cmd == command::apply) {
      run_apply(inv, out);
      return exit_ok;
    }
    if (inv.cmd == command::decay) {
      run_decay(inv, out);
      return exit_ok;
    }
    if (inv.cmd == command::dials) {
      run_dials(inv, out);
      return exit_ok;
    }
    if (inv.cmd == command::ramp) {
      run_ramp(inv, out);
      return exit_ok;
    }
    if (inv.cmd == command::check) return run_check(inv, out);
    const resolved_config rc = configure(inv);
    const rope_config c = rc.config();
    if (inv.cmd == command::emit) {
      run_emit(inv, c, out);
      return exit_ok;
    }
    if (inv.cmd == command::accuracy) {
      run_accuracy(inv, c, out);
      return exit_ok;
    }
    if (inv.cmd == command::freqs) {
      const freqs_result r = compute_freqs(c, inv.seq_len);
      write_freqs(out, r, inv.format);
    } else {
      const table_result r = compute_table(c, *inv.positions, inv.seq_len);
      write_table(out, r, inv.format);
    }
    return exit_ok;
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
