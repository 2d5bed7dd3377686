// posenc-bench-kernels: RoPE application on [T, 32 heads, 128] tensors, out of place (q -> y),
// against memcpy of the same bytes, in one binary and one run (docs/benchmarks.md).
//
// clang-format off
//   layouts     half, interleaved
//   storage     f32, bf16, f16 (computed in float32)
//   T           1, 16, 512, 4096 tokens at positions 0..T-1
//   strategies  constexpr_table         rope_cache_v (compile-time, compact) + dispatch::apply_rope
//               runtime_table           runtime_rope_cache (compact) + dispatch::apply_rope
//               runtime_table_expanded  the same cache in the expanded format + dispatch::apply_rope
//               runtime_table_2threads  runtime_table split over 2 threads
//                                       (dispatch::apply_rope_threaded; timed in wall time)
//               runtime_table_one_head  runtime_table on the first head of each token only (a
//                                       [T, 1, 128] view at the tensor's token stride): what a
//                                       call costs besides its heads' arithmetic (argument checks,
//                                       entry, row setup); its ratio is to the memcpy of the
//                                       whole tensor, like every row's
//               scalar_table            runtime_rope_cache (compact) + rope_reference (scalar)
//               on_the_fly              per token, cos/sin of every pair the way ggml's CPU kernel
//                                       makes them (float angle, theta *= theta_scale, cosf/sinf)
//                                       into a stack buffer, then dispatch::apply_rope on that row
//               mrope_table             M-RoPE, Qwen2-VL's contiguous mrope_section [16, 24, 24]
//                                       on the runtime cache + dispatch::apply_multi_axis_rope
//                                       with a multi_axis_map (checked once, like the table),
//                                       streams of an image grid 64 patches wide (temporal 0,
//                                       height t / 64, width t % 64)
//               mrope_interleaved_table the same with Qwen3-VL's interleaved [24, 20, 20]
//               axial_table             2-D axial RoPE (Pixtral's alternating frequencies), height
//                                       and width streams as above
//               memcpy                  std::memcpy of the T * 32 * 128 * sizeof(storage) bytes
//               stream_copy             the same bytes copied with the CPU's widest vector loads
//                                       and ordinary stores (stream_copy.hpp)
//               stream_copy_nt          the same with streaming (non-temporal) stores; the faster
//                                       of the two is the machine's one-thread read+write
//                                       bandwidth for those bytes
//               stream_copy_nt_2threads stream_copy_nt split over 2 threads like
//                                       runtime_table_2threads (timed in wall time): what 2
//                                       threads of the machine can copy, against one
//               convert_copy            f16 and bf16: every element widened to float and
//                                       narrowed back with the dispatched ISA's conversions,
//                                       nothing else (convert_copy.hpp): the floor of any 16-bit
//                                       kernel that converts each element once each way
//               rotation_floor          f32: the multiplies and FMAs of the rotation of every
//                                       element with the dispatched ISA's vectors, on values in
//                                       registers (rotation_floor.hpp): the floor of any f32
//                                       kernel's arithmetic
// clang-format on
// The multi-axis rows print their ratio to runtime_table (same layout, dtype and T) at the end.
// Tables: head_dim 128, base 1e4, no scaling, 4096 positions. dispatch::apply_rope runs the best
// ISA of this CPU (printed in the context as posenc_isa).
//
// The run starts by printing its machine and build facts (machine.hpp) as `# key: value` lines.
// Besides Google Benchmark's output: `--summary FILE` writes those lines and the CSV
//   layout,strategy,dtype,tokens,threads,ns_per_call,ratio_to_memcpy
// (ratio = ns_per_call / ns_per_call of the memcpy row of the same layout, dtype and T of this
// run, empty without one; with --benchmark_repetitions the median of the repetitions, or with
// --summary_stat=min the fastest one). ns_per_call
// is the CPU time of the (single) benchmark thread per call by default, so that time spent
// descheduled by other processes does not count; `--summary_time=real` uses wall time instead. At
// the end the run prints the ratio table with the targets of the SIMD table strategies (f32:
// <= 1.15x memcpy at T = 512 and 4096, <= 2x at T = 1; bf16 and f16: <= 1.5x at T = 4096, <= 3x at
// T = 1; both faster than f32 at T = 4096; 2 threads >= 1.6x one thread's throughput at T = 4096).
// Targets are reported, not asserted; the exit status is non-zero only when a benchmark failed
// (every strategy's output is checked against rope_reference before it is timed).
//
// `--markdown RUN.csv` and `--compare BEFORE.csv AFTER.csv` run no benchmark: they print the
// tables of docs/benchmarks.md from summaries (report.hpp); bad input is one line and exit 1.
//
// One file of ~880 lines: the strategies, the checks before timing and the summary share the
// tensors and the table setup, and Google Benchmark registers them from one translation unit.
#include <posenc/kernels/dispatch.hpp>
#include <posenc/kernels/mrope_reference.hpp>
#include <posenc/kernels/rope_reference.hpp>
#include <posenc/kernels/rope_table.hpp>
#include <posenc/kernels/storage.hpp>
#include <posenc/kernels/tensor.hpp>
#include <posenc/kernels/threads.hpp>
#include <posenc/spec/mrope.hpp>
#include <posenc/spec/rope.hpp>
#include <posenc/tables/mrope.hpp>
#include <posenc/tables/runtime_rope_cache.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "convert_copy.hpp"
#include "machine.hpp"
#include "report.hpp"
#include "rotation_floor.hpp"
#include "stream_copy.hpp"
#include "tables.hpp"

namespace pk = posenc::kernels;
using posenc::bf16;
using posenc::f16;
using posenc::rope_layout;
using namespace posenc_bench;

namespace {

constexpr std::size_t kTokens[] = {1, 16, 512, 4096};
constexpr std::size_t kRowElems = kHeads * kHeadDim;  // elements per token
constexpr std::size_t kAlign = 64;

// 64-byte aligned, zero-initialised storage (first touch here, not in the timed loop).
template <class T>
struct aligned_buffer {
  struct free_deleter {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<T, free_deleter> ptr;
  explicit aligned_buffer(std::size_t n) {
    const std::size_t bytes = (n * sizeof(T) + kAlign - 1) / kAlign * kAlign;
    void* p = std::aligned_alloc(kAlign, bytes);
    if (p == nullptr) std::abort();
    std::memset(p, 0, bytes);
    ptr.reset(static_cast<T*>(p));
  }
  T* get() const { return ptr.get(); }
};

// Inputs in [-1, 1) (xorshift32), one buffer per storage type, sized for T = 4096; outputs and a
// reference output alike.
template <class T>
struct tensors {
  aligned_buffer<T> in{kMaxPos * kRowElems}, out{kMaxPos * kRowElems}, ref{kMaxPos * kRowElems};
  tensors() {
    std::uint32_t s = 12345u;
    T* x = in.get();
    for (std::size_t e = 0; e < kMaxPos * kRowElems; ++e) {
      s ^= s << 13;
      s ^= s >> 17;
      s ^= s << 5;
      x[e] = posenc::store_as<T>(static_cast<float>(s >> 8) * 0x1p-23f - 1.0f);
    }
  }
};

template <class T>
tensors<T>& tensors_of() {
  static tensors<T> t;
  return t;
}

// The tables of every strategy (built once, before any timing).
struct tables {
  posenc::runtime_rope_cache<float> runtime;
  posenc::rope_cache_view<float> compile_time;
  std::vector<float> exp_cos[2], exp_sin[2];  // expanded rows per layout (half, interleaved)
  // Pair maps of the multi-axis strategies and their position streams (an image grid).
  std::vector<posenc::pair_source> mrope_map, mrope_interleaved_map, axial_map;
  // The same maps checked once (what an engine keeps next to its table).
  pk::multi_axis_map mrope_checked, mrope_interleaved_checked, axial_checked;
  std::vector<std::int64_t> grid_t, grid_h, grid_w;

  tables()
      : runtime(posenc::runtime_rope_cache<float>::make(
            posenc::rope_config{kHeadDim, kHeadDim, kBase, rope_layout::half,
                                posenc::scaling::none()},
            kMaxPos)),
        compile_time(constexpr_cache()) {
    for (const rope_layout l : {rope_layout::half, rope_layout::interleaved}) {
      const int k = l == rope_layout::half ? 0 : 1;
      exp_cos[k].resize(kMaxPos * kHeadDim);
      exp_sin[k].resize(kMaxPos * kHeadDim);
      pk::expand_rope_cache(runtime.view(), l, exp_cos[k].data(), exp_sin[k].data());
    }
    const posenc::rope_config rope{kHeadDim, kHeadDim, kBase, rope_layout::half,
                                   posenc::scaling::none()};
    mrope_map.resize(kHeadDim / 2);
    mrope_interleaved_map.resize(kHeadDim / 2);
    axial_map.resize(kHeadDim / 2);
    if (posenc::build_mrope_pair_sources({rope, {16, 24, 24}, posenc::mrope_layout::contiguous},
                                         mrope_map.data()) != posenc::mrope_error::ok ||
        posenc::build_mrope_pair_sources({rope, {24, 20, 20}, posenc::mrope_layout::interleaved},
                                         mrope_interleaved_map.data()) != posenc::mrope_error::ok ||
        posenc::build_axial_pair_sources({rope, posenc::axial_frequencies::alternating},
                                         axial_map.data()) != posenc::axial_rope_error::ok ||
        pk::multi_axis_map::try_make(mrope_map, kHeadDim, 3, mrope_checked) !=
            pk::kernel_error::ok ||
        pk::multi_axis_map::try_make(mrope_interleaved_map, kHeadDim, 3,
                                     mrope_interleaved_checked) != pk::kernel_error::ok ||
        pk::multi_axis_map::try_make(axial_map, kHeadDim, 2, axial_checked) != pk::kernel_error::ok)
      std::abort();
    for (std::size_t t = 0; t < kMaxPos; ++t) {
      grid_t.push_back(0);
      grid_h.push_back(static_cast<std::int64_t>(t / 64));
      grid_w.push_back(static_cast<std::int64_t>(t % 64));
    }
  }
  // The streams of the first `tokens` tokens: temporal, height, width (M-RoPE) or height, width.
  std::array<pk::token_positions, 3> streams(std::size_t tokens) const {
    const auto of = [&](const std::vector<std::int64_t>& v) {
      return pk::token_positions::of(std::span<const std::int64_t>(v.data(), tokens));
    };
    return {of(grid_t), of(grid_h), of(grid_w)};
  }
  // The pair map and stream count of a multi-axis strategy.
  struct multi_axis_call {
    std::span<const posenc::pair_source> map;
    const pk::multi_axis_map* checked;
    std::size_t first_stream, n_streams;
  };
  pk::rope_table expanded(rope_layout l) const {
    const int k = l == rope_layout::half ? 0 : 1;
    pk::rope_table t;
    t.cos = exp_cos[k].data();
    t.sin = exp_sin[k].data();
    t.positions = kMaxPos;
    t.rotary_dim = kHeadDim;
    t.layout = l;
    t.format = pk::rope_table_format::expanded;
    return t;
  }
};

const tables& tables_of() {
  static const tables t;
  return t;
}

enum class strategy : std::uint8_t {
  constexpr_table,
  runtime_table,
  runtime_table_expanded,
  runtime_table_2threads,
  runtime_table_one_head,
  scalar_table,
  on_the_fly,
  mrope_table,
  mrope_interleaved_table,
  axial_table,
  memcpy_copy,
  stream_copy,
  stream_copy_nt,
  stream_copy_nt_2threads,
};

const char* strategy_name(strategy s) {
  switch (s) {
    case strategy::constexpr_table:
      return "constexpr_table";
    case strategy::runtime_table:
      return "runtime_table";
    case strategy::runtime_table_expanded:
      return "runtime_table_expanded";
    case strategy::runtime_table_2threads:
      return "runtime_table_2threads";
    case strategy::runtime_table_one_head:
      return "runtime_table_one_head";
    case strategy::scalar_table:
      return "scalar_table";
    case strategy::on_the_fly:
      return "on_the_fly";
    case strategy::mrope_table:
      return "mrope_table";
    case strategy::mrope_interleaved_table:
      return "mrope_interleaved_table";
    case strategy::axial_table:
      return "axial_table";
    case strategy::memcpy_copy:
      return "memcpy";
    case strategy::stream_copy:
      return "stream_copy";
    case strategy::stream_copy_nt:
      return "stream_copy_nt";
    case strategy::stream_copy_nt_2threads:
      return "stream_copy_nt_2threads";
  }
  return "?";
}

bool is_multi_axis(strategy s) {
  return s == strategy::mrope_table || s == strategy::mrope_interleaved_table ||
         s == strategy::axial_table;
}

// A multi-axis strategy's pair map and streams (axial: height and width).
tables::multi_axis_call multi_axis_of(strategy s) {
  const tables& tb = tables_of();
  if (s == strategy::mrope_table) return {tb.mrope_map, &tb.mrope_checked, 0, 3};
  if (s == strategy::mrope_interleaved_table)
    return {tb.mrope_interleaved_map, &tb.mrope_interleaved_checked, 0, 3};
  return {tb.axial_map, &tb.axial_checked, 1, 2};
}

// ggml's CPU way (ggml-cpu/ops.cpp, ggml_rope_cache_init; docs/formulas.md §3): a float
// angle, multiplied by theta_scale = powf(base, -2/n_dims) from pair to pair, and cosf/sinf of it.
// Written here from that description: one token's compact row into caller (stack) storage.
inline void ggml_style_row(std::uint64_t p, float theta_scale, float* c, float* s) {
  float theta = static_cast<float>(p);
  for (std::size_t i = 0; i < kHeadDim / 2; ++i) {
    c[i] = std::cos(theta);
    s[i] = std::sin(theta);
    theta *= theta_scale;
  }
}

// ggml's theta_scale = powf(freq_base, -2.0f / n_dims).
float on_the_fly_theta_scale() {
  static const float theta_scale =
      std::pow(static_cast<float>(kBase), -2.0f / static_cast<float>(kHeadDim));
  return theta_scale;
}

// A one-row compact table over caller storage (the on-the-fly strategy's stack buffers).
pk::rope_table on_the_fly_row_table(rope_layout l, const float* c, const float* s) {
  pk::rope_table row;
  row.cos = c;
  row.sin = s;
  row.positions = 1;
  row.rotary_dim = kHeadDim;
  row.layout = l;
  return row;
}

// The first head of each token of v, at v's token stride (runtime_table_one_head).
template <class T>
pk::tensor_view<T> one_head(const pk::tensor_view<T>& v) {
  return {v.data, v.tokens, 1, v.head_dim, v.token_stride, v.head_stride};
}

template <class T>
pk::kernel_error run_once(strategy s, rope_layout l, std::size_t tokens, const T* in, T* out) {
  const tables& tb = tables_of();
  const auto vin = pk::dense<const T>(in, tokens, kHeads, kHeadDim);
  const auto vout = pk::dense<T>(out, tokens, kHeads, kHeadDim);
  const pk::token_positions pos = pk::token_positions::from(0);
  switch (s) {
    case strategy::constexpr_table:
      return pk::dispatch::apply_rope(pk::make_rope_table(tb.compile_time, l), vin, vout, pos);
    case strategy::runtime_table:
      return pk::dispatch::apply_rope(pk::make_rope_table(tb.runtime.view(), l), vin, vout, pos);
    case strategy::runtime_table_expanded:
      return pk::dispatch::apply_rope(tb.expanded(l), vin, vout, pos);
    case strategy::runtime_table_2threads:
      return pk::dispatch::apply_rope_threaded<T>(2, pk::make_rope_table(tb.runtime.view(), l), vin,
                                                  vout, pos);
    case strategy::runtime_table_one_head:
      return pk::dispatch::apply_rope(pk::make_rope_table(tb.runtime.view(), l), one_head(vin),
                                      one_head(vout), pos);
    case strategy::scalar_table:
      return pk::rope_reference<T>(pk::make_rope_table(tb.runtime.view(), l), vin, vout, pos);
    case strategy::on_the_fly: {
      const float theta_scale = on_the_fly_theta_scale();
      alignas(kAlign) float c[kHeadDim / 2];
      alignas(kAlign) float sn[kHeadDim / 2];
      const pk::rope_table row = on_the_fly_row_table(l, c, sn);
      for (std::size_t t = 0; t < tokens; ++t) {
        ggml_style_row(pos.at(t), theta_scale, c, sn);
        const pk::kernel_error e = pk::dispatch::apply_rope(
            row, pk::dense<const T>(in + t * kRowElems, 1, kHeads, kHeadDim),
            pk::dense<T>(out + t * kRowElems, 1, kHeads, kHeadDim), pk::token_positions::from(0));
        if (e != pk::kernel_error::ok) return e;
      }
      return pk::kernel_error::ok;
    }
    case strategy::mrope_table:
    case strategy::mrope_interleaved_table:
    case strategy::axial_table: {
      const tables::multi_axis_call m = multi_axis_of(s);
      const auto st = tb.streams(tokens);
      return pk::dispatch::apply_multi_axis_rope(
          pk::make_rope_table(tb.runtime.view(), l), *m.checked, vin, vout,
          std::span<const pk::token_positions>(st.data() + m.first_stream, m.n_streams));
    }
    case strategy::memcpy_copy:
      std::memcpy(out, in, tokens * kRowElems * sizeof(T));
      return pk::kernel_error::ok;
    case strategy::stream_copy:
    case strategy::stream_copy_nt:
      posenc_bench::stream_copy(
          out, in, tokens * kRowElems * sizeof(T),
          s == strategy::stream_copy ? store_kind::temporal : store_kind::non_temporal);
      return pk::kernel_error::ok;
    case strategy::stream_copy_nt_2threads: {
      // apply_rope_threaded's split (kernels/threads.hpp): split_tokens' ranges, no more parts
      // than tokens, part 1 on a new thread per call and part 0 on the caller's.
      const std::size_t parts = tokens < 2 ? 1 : 2;
      const auto part = [=](std::size_t i) {
        const pk::token_range r = pk::split_tokens(tokens, parts, i);
        posenc_bench::stream_copy(out + r.begin * kRowElems, in + r.begin * kRowElems,
                                  r.size() * kRowElems * sizeof(T), store_kind::non_temporal);
      };
      if (parts == 1) {
        part(0);
        return pk::kernel_error::ok;
      }
      std::thread second;
      try {
        second = std::thread(part, std::size_t{1});
      } catch (const std::system_error&) {
        part(1);  // as for_each_token_range: a thread that cannot start leaves its part here
      }
      part(0);
      if (second.joinable()) second.join();
      return pk::kernel_error::ok;
    }
  }
  return pk::kernel_error::invalid_argument;
}

template <class T>
bool same_bits(const T* a, const T* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(T)) == 0;
}

// Before timing: every strategy must give rope_reference's bits (unfused or fused order, the
// kernel's ISA decides) on the same rows (on_the_fly: its ggml-style rows); the copies must copy.
template <class T>
std::string verify(strategy s, rope_layout l, std::size_t tokens) {
  tensors<T>& x = tensors_of<T>();
  const std::size_t n = tokens * kRowElems;
  const bool copy = s == strategy::memcpy_copy || s == strategy::stream_copy ||
                    s == strategy::stream_copy_nt || s == strategy::stream_copy_nt_2threads;
  // Not the previous benchmark's output: a copy that skips bytes must not pass. One head: the
  // other heads must keep these bytes (the reference is computed over the same ones).
  const bool one = s == strategy::runtime_table_one_head;
  if (copy || one) std::memset(static_cast<void*>(x.out.get()), 0xa5, n * sizeof(T));
  if (run_once<T>(s, l, tokens, x.in.get(), x.out.get()) != pk::kernel_error::ok)
    return "the kernel returned an error";
  if (copy) return same_bits(x.in.get(), x.out.get(), n) ? "" : "bad copy";
  const auto table = pk::make_rope_table(tables_of().runtime.view(), l);
  for (const pk::fma_mode m : {pk::fma_mode::unfused, pk::fma_mode::fused}) {
    if (one) {
      std::memset(static_cast<void*>(x.ref.get()), 0xa5, n * sizeof(T));
      if (pk::rope_reference<T>(table,
                                one_head(pk::dense<const T>(x.in.get(), tokens, kHeads, kHeadDim)),
                                one_head(pk::dense<T>(x.ref.get(), tokens, kHeads, kHeadDim)),
                                pk::token_positions::from(0), m) != pk::kernel_error::ok)
        return "rope_reference failed";
    } else if (is_multi_axis(s)) {
      const tables::multi_axis_call ma = multi_axis_of(s);
      const auto st = tables_of().streams(tokens);
      if (pk::multi_axis_rope_reference<T>(
              table, ma.map, pk::dense<const T>(x.in.get(), tokens, kHeads, kHeadDim),
              pk::dense<T>(x.ref.get(), tokens, kHeads, kHeadDim),
              std::span<const pk::token_positions>(st.data() + ma.first_stream, ma.n_streams),
              m) != pk::kernel_error::ok)
        return "multi_axis_rope_reference failed";
    } else if (s == strategy::on_the_fly) {
      // The reference on the same ggml-style rows, token by token.
      float c[kHeadDim / 2], sn[kHeadDim / 2];
      pk::rope_table row = on_the_fly_row_table(l, c, sn);
      for (std::size_t t = 0; t < tokens; ++t) {
        ggml_style_row(t, on_the_fly_theta_scale(), c, sn);
        if (pk::rope_reference<T>(
                row, pk::dense<const T>(x.in.get() + t * kRowElems, 1, kHeads, kHeadDim),
                pk::dense<T>(x.ref.get() + t * kRowElems, 1, kHeads, kHeadDim),
                pk::token_positions::from(0), m) != pk::kernel_error::ok)
          return "rope_reference failed";
      }
    } else if (pk::rope_reference<T>(table,
                                     pk::dense<const T>(x.in.get(), tokens, kHeads, kHeadDim),
                                     pk::dense<T>(x.ref.get(), tokens, kHeads, kHeadDim),
                                     pk::token_positions::from(0), m) != pk::kernel_error::ok) {
      return "rope_reference failed";
    }
    if (same_bits(x.out.get(), x.ref.get(), n)) return {};
  }
  return is_multi_axis(s) ? "the output differs from multi_axis_rope_reference (both FMA modes)"
                          : "the output differs from rope_reference (both FMA modes)";
}

struct row_key {
  std::string layout, strategy, dtype;
  std::size_t tokens;
  std::size_t threads;
};

// Threads of a strategy's call (the threaded one is timed in wall time: CPU time would count only
// the calling thread's part).
std::size_t threads_of(strategy s) {
  return s == strategy::runtime_table_2threads || s == strategy::stream_copy_nt_2threads ? 2 : 1;
}

std::map<std::string, row_key>& registry() {
  static std::map<std::string, row_key> r;
  return r;
}

template <class T>
void register_one(rope_layout l, strategy s, std::size_t tokens) {
  const std::string name = std::string("rope/") + layout_name(l) + "/" + strategy_name(s) + "/" +
                           posenc::storage_name<T>() + "/T:" + std::to_string(tokens);
  registry()[name] = {layout_name(l), strategy_name(s), posenc::storage_name<T>(), tokens,
                      threads_of(s)};
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [l, s, tokens](benchmark::State& state) {
    const std::string err = verify<T>(s, l, tokens);
    if (!err.empty()) {
      state.SkipWithError(err.c_str());
      return;
    }
    tensors<T>& x = tensors_of<T>();
    const T* in = x.in.get();
    T* out = x.out.get();
    for (auto _ : state) {
      benchmark::DoNotOptimize(run_once<T>(s, l, tokens, in, out));
      benchmark::ClobberMemory();
    }
    const auto bytes = static_cast<std::int64_t>(tokens * kRowElems * sizeof(T));
    state.SetBytesProcessed(state.iterations() * bytes);
  });
  b->Unit(benchmark::kNanosecond);
  if (threads_of(s) > 1) b->UseRealTime();
}

// Collects every run while the console shows it.
class collecting_reporter : public benchmark::ConsoleReporter {
 public:
  struct result {
    double ns = 0.0;
    bool median = false;  // from a median aggregate (--benchmark_repetitions)
    int samples = 0;
  };
  std::map<std::string, result> results;
  bool failed = false;
  bool use_cpu_time = true;
  // --summary_stat=min: the fastest repetition instead of the median, for a host whose other
  // tenants slow some repetitions down (the slower ones measure them, not the kernel).
  bool use_min = false;

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) {
        failed = true;
        continue;
      }
      // UseRealTime() benchmarks (the threaded strategy) carry "/real_time" in their run name and
      // are summarised in wall time.
      std::string name = r.run_name.str();
      const bool real_time = !r.run_name.time_type.empty();
      if (real_time) name = r.run_name.function_name;
      const double ns =
          (use_cpu_time && !real_time ? r.GetAdjustedCPUTime() : r.GetAdjustedRealTime()) *
          to_ns(r.time_unit);
      result& res = results[name];
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "median" && !use_min) res = {ns, true, 1};
      } else if (use_min) {
        res.ns = res.samples == 0 ? ns : std::min(res.ns, ns);
        ++res.samples;
      } else if (!res.median) {
        // Repetitions without aggregates: the mean of the repetitions.
        res.ns = (res.ns * res.samples + ns) / (res.samples + 1);
        ++res.samples;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

 private:
  static double to_ns(benchmark::TimeUnit u) {
    switch (u) {
      case benchmark::kNanosecond:
        return 1.0;
      case benchmark::kMicrosecond:
        return 1e3;
      case benchmark::kMillisecond:
        return 1e6;
      case benchmark::kSecond:
        return 1e9;
    }
    return 1.0;
  }
};

struct summary_row {
  row_key key;
  double ns, ratio;
};

std::string target_of(const row_key& k, double ratio) {
  const std::optional<double> limit = report::ratio_target(k.strategy, k.dtype, k.tokens);
  if (!limit) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "<=%.2f %s", *limit, ratio <= *limit ? "PASS" : "MISS");
  return buf;
}

// --markdown RUN.csv, --compare BEFORE.csv AFTER.csv: the tables on stdout, or one line on stderr
// and exit 1.
int print_report(int argc, char** argv) {
  const std::string mode = argv[1];
  const int files = mode == "--compare" ? 2 : 1;
  if (argc != 2 + files) {
    std::fprintf(stderr, "posenc-bench-kernels: usage: %s\n",
                 files == 2 ? "--compare BEFORE.csv AFTER.csv" : "--markdown RUN.csv");
    return 1;
  }
  try {
    const report::run first = report::read_summary(argv[2]);
    const std::string md = files == 2
                               ? report::markdown_compare(first, report::read_summary(argv[3]))
                               : report::markdown(first);
    if (std::fwrite(md.data(), 1, md.size(), stdout) != md.size() || std::fflush(stdout) != 0) {
      std::fprintf(stderr, "posenc-bench-kernels: cannot write the tables\n");
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posenc-bench-kernels: %s\n", e.what());
    return 1;
  }
  return 0;
}

// convert_copy (f16 and bf16), registered on its own rather than as a strategy of run_once, and
// defined after the code the other strategies time: the scalar_table rows depend on where their
// loop lands. With this function among run_once's neighbours, the same run_once<float>
// instructions took 2.3-2.5 us per f32 scalar_table call at T = 1 instead of 1.8 us (AMD Zen 5).
template <class T>
void register_convert_copy(rope_layout l, std::size_t tokens) {
  const std::string name = std::string("rope/") + layout_name(l) + "/convert_copy/" +
                           posenc::storage_name<T>() + "/T:" + std::to_string(tokens);
  registry()[name] = {layout_name(l), "convert_copy", posenc::storage_name<T>(), tokens, 1};
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [tokens](benchmark::State& state) {
    tensors<T>& x = tensors_of<T>();
    const std::size_t n = tokens * kRowElems;
    // Checked first, like every strategy: the round trip through float gives every value back
    // (the inputs hold no NaN and no subnormal), over a buffer that is not the previous
    // benchmark's output.
    std::memset(static_cast<void*>(x.out.get()), 0xa5, n * sizeof(T));
    posenc_bench::convert_copy(x.out.get(), x.in.get(), n);
    if (!same_bits(x.in.get(), x.out.get(), n)) {
      state.SkipWithError("bad conversion round trip");
      return;
    }
    for (auto _ : state) {
      posenc_bench::convert_copy(x.out.get(), x.in.get(), n);
      benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n * sizeof(T)));
  });
  b->Unit(benchmark::kNanosecond);
}

// rotation_floor (f32), registered on its own like convert_copy and for the same reason.
void register_rotation_floor(rope_layout l, std::size_t tokens) {
  const std::string name =
      std::string("rope/") + layout_name(l) + "/rotation_floor/f32/T:" + std::to_string(tokens);
  registry()[name] = {layout_name(l), "rotation_floor", "f32", tokens, 1};
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [tokens](benchmark::State& state) {
    const std::size_t n = tokens * kRowElems;
    // Checked first, like every strategy: every element's step ran (steps * lanes == n), and
    // x * 0.75 + x * 0.25 gave each x back (1 + 2 + ... + 8 = 36 in every lane).
    const posenc_bench::rotation_floor_result r = posenc_bench::rotation_floor(n);
    if (r.steps * r.lanes != n || r.good_lanes != r.lanes) {
      state.SkipWithError("bad rotation floor");
      return;
    }
    for (auto _ : state) benchmark::DoNotOptimize(posenc_bench::rotation_floor(n));
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n * sizeof(float)));
  });
  b->Unit(benchmark::kNanosecond);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 &&
      (std::strcmp(argv[1], "--compare") == 0 || std::strcmp(argv[1], "--markdown") == 0))
    return print_report(argc, argv);
  // Our own flags first (Google Benchmark rejects flags it does not know).
  std::string summary_path, time_kind = "cpu", stat = "median";
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--summary" && i + 1 < argc) {
      summary_path = argv[++i];
    } else if (a.rfind("--summary=", 0) == 0) {
      summary_path = a.substr(10);
    } else if (a.rfind("--summary_time=", 0) == 0) {
      time_kind = a.substr(15);
      if (time_kind != "cpu" && time_kind != "real") {
        std::fprintf(stderr, "posenc-bench-kernels: --summary_time=cpu or real\n");
        return 1;
      }
    } else if (a.rfind("--summary_stat=", 0) == 0) {
      stat = a.substr(15);
      if (stat != "median" && stat != "min") {
        std::fprintf(stderr, "posenc-bench-kernels: --summary_stat=median or min\n");
        return 1;
      }
    } else {
      args.push_back(argv[i]);
    }
  }
  int bargc = static_cast<int>(args.size());
  args.push_back(nullptr);

  for (const rope_layout l : {rope_layout::half, rope_layout::interleaved}) {
    for (const std::size_t t : kTokens) {
      for (const strategy s :
           {strategy::memcpy_copy, strategy::stream_copy, strategy::stream_copy_nt,
            strategy::stream_copy_nt_2threads, strategy::constexpr_table, strategy::runtime_table,
            strategy::runtime_table_expanded, strategy::runtime_table_2threads,
            strategy::runtime_table_one_head, strategy::scalar_table, strategy::on_the_fly,
            strategy::mrope_table, strategy::mrope_interleaved_table, strategy::axial_table}) {
        register_one<float>(l, s, t);
        register_one<bf16>(l, s, t);
        register_one<f16>(l, s, t);
      }
      register_convert_copy<bf16>(l, t);
      register_convert_copy<f16>(l, t);
      register_rotation_floor(l, t);
    }
  }

  benchmark::Initialize(&bargc, args.data());
  if (benchmark::ReportUnrecognizedArguments(bargc, args.data())) return 1;
  auto facts = run_facts();
  facts.emplace_back("summary_time",
                     std::string(time_kind == "cpu" ? "cpu (the 2-thread rows: real)" : "real") +
                         (stat == "min" ? ", the fastest repetition" : ""));
  for (const auto& [key, value] : facts) std::printf("# %s: %s\n", key.c_str(), value.c_str());
  std::fflush(stdout);
  benchmark::AddCustomContext("posenc_isa", pk::dispatch::active_isa());
  benchmark::AddCustomContext("posenc_shape", "[T, 32 heads, 128], out of place, positions 0..T-1");
  benchmark::AddCustomContext("posenc_table", "head_dim 128, base 1e4, 4096 positions, float32");
  benchmark::AddCustomContext("posenc_bytes_per_second", "bytes of q (T*32*128*sizeof) per call");
  static_cast<void>(tables_of());  // build every table before the first timing
  static_cast<void>(tensors_of<float>());
  static_cast<void>(tensors_of<bf16>());
  static_cast<void>(tensors_of<f16>());

  collecting_reporter reporter;
  reporter.use_cpu_time = time_kind == "cpu";
  reporter.use_min = stat == "min";
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  // Ratios against the memcpy row of the same layout, dtype and T.
  std::vector<summary_row> rows;
  std::map<std::string, double> memcpy_ns;
  for (const auto& [name, r] : reporter.results) {
    const auto it = registry().find(name);
    if (it == registry().end()) continue;
    if (it->second.strategy == "memcpy")
      memcpy_ns[it->second.layout + "/" + it->second.dtype + "/" +
                std::to_string(it->second.tokens)] = r.ns;
  }
  for (const auto& [name, key] : registry()) {
    const auto r = reporter.results.find(name);
    if (r == reporter.results.end()) continue;
    const auto m = memcpy_ns.find(key.layout + "/" + key.dtype + "/" + std::to_string(key.tokens));
    const double ratio = m == memcpy_ns.end() ? std::nan("") : r->second.ns / m->second;
    rows.push_back({key, r->second.ns, ratio});
  }
  const auto strategy_rank = [](const std::string& s) {
    const strategy order[] = {strategy::memcpy_copy,
                              strategy::stream_copy,
                              strategy::stream_copy_nt,
                              strategy::stream_copy_nt_2threads,
                              strategy::constexpr_table,
                              strategy::runtime_table,
                              strategy::runtime_table_expanded,
                              strategy::runtime_table_2threads,
                              strategy::runtime_table_one_head,
                              strategy::scalar_table,
                              strategy::on_the_fly,
                              strategy::mrope_table,
                              strategy::mrope_interleaved_table,
                              strategy::axial_table};
    for (std::size_t i = 0; i < std::size(order); ++i)
      if (s == strategy_name(order[i])) return i;
    return std::size(order);
  };
  const auto dtype_rank = [](const std::string& d) { return d == "f32" ? 0 : d == "bf16" ? 1 : 2; };
  std::sort(rows.begin(), rows.end(), [&](const summary_row& a, const summary_row& b) {
    if (a.key.layout != b.key.layout) return a.key.layout < b.key.layout;
    if (a.key.tokens != b.key.tokens) return a.key.tokens < b.key.tokens;
    if (a.key.dtype != b.key.dtype) return dtype_rank(a.key.dtype) < dtype_rank(b.key.dtype);
    return strategy_rank(a.key.strategy) < strategy_rank(b.key.strategy);
  });

  if (!summary_path.empty()) {
    std::ofstream csv(summary_path);
    for (const auto& [key, value] : facts) csv << "# " << key << ": " << value << "\n";
    csv << report::kHeader << "\n";
    for (const summary_row& r : rows) {
      char line[256];
      std::snprintf(line, sizeof line, "%s,%s,%s,%zu,%zu,%.1f,", r.key.layout.c_str(),
                    r.key.strategy.c_str(), r.key.dtype.c_str(), r.key.tokens, r.key.threads, r.ns);
      csv << line;
      if (!std::isnan(r.ratio)) {
        std::snprintf(line, sizeof line, "%.3f", r.ratio);
        csv << line;
      }
      csv << "\n";
    }
    if (!csv) {
      std::fprintf(stderr, "posenc-bench-kernels: cannot write %s\n", summary_path.c_str());
      return 1;
    }
  }

  // bf16 and f16 against f32 at T = 4096, per layout and strategy.
  std::map<std::string, double> f32_ns;
  for (const summary_row& r : rows)
    if (r.key.dtype == "f32")
      f32_ns[r.key.layout + "/" + r.key.strategy + "/" + std::to_string(r.key.tokens)] = r.ns;

  std::printf(
      "\nRoPE [T, 32, 128] out of place, ratio to memcpy of the same bytes (isa %s, %s time)\n",
      pk::dispatch::active_isa(), time_kind.c_str());
  std::printf("%-12s %-23s %-5s %5s %14s %9s %8s %-14s %s\n", "layout", "strategy", "dtype", "T",
              "ns/call", "GB/s", "ratio", "target", "16-bit<f32@4096 / threads");
  for (const summary_row& r : rows) {
    const double gbs = static_cast<double>(r.key.tokens * kRowElems *
                                           (r.key.dtype == "f32" ? sizeof(float) : sizeof(bf16))) /
                       r.ns;
    std::string bf = "-";
    // Not for one head per token: its time is mostly the per-call and per-token setup.
    if (r.key.dtype != "f32" && r.key.tokens == 4096 && r.key.strategy != "memcpy" &&
        r.key.strategy.rfind("stream_copy", 0) != 0 && r.key.threads == 1 &&
        r.key.strategy != "runtime_table_one_head") {
      const auto f = f32_ns.find(r.key.layout + "/" + r.key.strategy + "/4096");
      if (f != f32_ns.end()) bf = r.ns < f->second ? "PASS" : "MISS";
    }
    if (r.key.threads > 1) {
      // Throughput against the same strategy on one thread (the name without _2threads), same
      // layout, dtype and T; the target is runtime_table's.
      const std::string one_thread = r.key.strategy.substr(0, r.key.strategy.rfind("_2threads"));
      const bool target = r.key.strategy == report::kThreadsStrategy &&
                          r.key.tokens == report::kThreadsTargetTokens;
      for (const summary_row& one : rows)
        if (one.key.strategy == one_thread && one.key.layout == r.key.layout &&
            one.key.dtype == r.key.dtype && one.key.tokens == r.key.tokens) {
          char buf[48];
          const double speedup = one.ns / r.ns;
          std::snprintf(
              buf, sizeof buf, "%.2fx 1 thread%s", speedup,
              target ? (speedup >= report::kThreadsSpeedupTarget ? " >=1.6 PASS" : " >=1.6 MISS")
                     : "");
          bf = buf;
        }
    }
    std::printf("%-12s %-23s %-5s %5zu %14.1f %9.2f %8.3f %-14s %s\n", r.key.layout.c_str(),
                r.key.strategy.c_str(), r.key.dtype.c_str(), r.key.tokens, r.ns, gbs, r.ratio,
                target_of(r.key, r.ratio).c_str(), bf.c_str());
  }

  // The multi-axis kernels against the 1-D kernel on the same layout, dtype and T (target:
  // report::kMultiAxisTarget).
  std::map<std::string, double> one_d_ns;
  for (const summary_row& r : rows)
    if (r.key.strategy == "runtime_table")
      one_d_ns[r.key.layout + "/" + r.key.dtype + "/" + std::to_string(r.key.tokens)] = r.ns;
  std::printf("\nMulti-axis RoPE, ratio to runtime_table (1-D) of the same layout, dtype and T\n");
  std::printf("%-12s %-23s %-5s %5s %14s %8s %s\n", "layout", "strategy", "dtype", "T", "ns/call",
              "ratio", "target");
  for (const summary_row& r : rows) {
    const auto one =
        one_d_ns.find(r.key.layout + "/" + r.key.dtype + "/" + std::to_string(r.key.tokens));
    if (r.key.strategy.find("mrope") == std::string::npos && r.key.strategy != "axial_table")
      continue;
    const double ratio = one == one_d_ns.end() ? std::nan("") : r.ns / one->second;
    std::printf("%-12s %-23s %-5s %5zu %14.1f %8.3f %s\n", r.key.layout.c_str(),
                r.key.strategy.c_str(), r.key.dtype.c_str(), r.key.tokens, r.ns, ratio,
                std::isnan(ratio)                   ? "-"
                : ratio <= report::kMultiAxisTarget ? "<=1.20 PASS"
                                                    : "<=1.20 MISS");
  }
  std::fflush(stdout);
  return reporter.failed ? 1 : 0;
}
