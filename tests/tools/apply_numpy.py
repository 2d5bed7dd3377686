#!/usr/bin/env python3
"""`posenc apply` on .npy tensors against a NumPy implementation of the rotation written here.

    apply_numpy.py POSENC_BINARY SCRATCH_DIR

The reference computes inv_freq, the attention factor, cos and sin itself in float64 from the
formulas of HF transformers' src/transformers/modeling_rope_utils.py (_compute_default_rope_parameters,
_compute_longrope_parameters, _compute_dynamic_ntk_parameters) and the rotation of
src/transformers/models/llama/modeling_llama.py (rotate_half: pairs (i, i + R/2)) or of
models/gptj/modeling_gptj.py (rotate_every_two: pairs (2i, 2i + 1)); it never calls posenc. seq_len
is HF's, torch.max(position_ids) + 1 over the batch (dynamic_rope_update), which the tool must
derive itself: no case passes --seq-len unless it says so.

Tolerance (docs/cli.md, `posenc apply`), per output channel of pair (a, b), A the attention
factor: float32 results are within E = 3 * 2^-24 * A * (|x_a| + |x_b|) of the float64 reference
(cos and sin each rounded once, 2^-24 A relative; two products and a sum rounded in float32);
float16 results, rounded once more, within E + 2^-11 * (|ref| + E) + 2^-25.

Every case also round-trips through numpy: the inputs are written with np.save (format 1.0, and
2.0 for one case), the outputs read with np.load, and their dtype and shape must be the input's.
Prints one line per case with the largest error as a fraction of the tolerance; exits 1 on the
first failure (missing numpy included: python3-numpy, scripts/deps).
"""
import math
import os
import subprocess
import sys
import zlib

try:
    import numpy as np
except ImportError:
    print("FAIL: numpy is not importable by " + sys.executable + " (Debian: python3-numpy)")
    sys.exit(1)

if len(sys.argv) != 3:
    print("usage: apply_numpy.py POSENC_BINARY SCRATCH_DIR", file=sys.stderr)
    sys.exit(2)
POSENC, SCRATCH = sys.argv[1], sys.argv[2]
os.makedirs(SCRATCH, exist_ok=True)


def inv_freq_and_factor(cfg, seq_len):
    """inv_freq (float64, R/2 of them) and the attention factor, as HF defines them."""
    R, base = cfg["rotary_dim"], float(cfg["base"])
    exponent = np.arange(0, R, 2, dtype=np.float64) / R
    scaling = cfg.get("scaling", "none")
    if scaling == "none":
        return 1.0 / base**exponent, 1.0
    if scaling == "longrope":
        # _compute_longrope_parameters: long factors once seq_len > original_max.
        orig, max_pos = cfg["original_max"], cfg["max_position_embeddings"]
        factor = max_pos / orig
        attention = 1.0 if factor <= 1.0 else math.sqrt(1.0 + math.log(factor) / math.log(orig))
        ext = np.array(cfg["long_factor"] if seq_len > orig else cfg["short_factor"], np.float64)
        return 1.0 / (ext * base**exponent), attention
    if scaling == "dynamic":
        # _compute_dynamic_ntk_parameters: seq_len = max(seq_len, max_position_embeddings).
        max_pos, factor = cfg["max_position_embeddings"], cfg["factor"]
        s = max(seq_len, max_pos)
        base = base * ((factor * s / max_pos) - (factor - 1)) ** (R / (R - 2))
        return 1.0 / base**exponent, 1.0
    raise ValueError(scaling)


def reference(x, positions, cfg, order, scale_cos_sin=True):
    """The rotation of x (any order) in float64; positions [batch, tokens]."""
    x = x.astype(np.float64)
    if order == "THD":
        x4 = x[None]  # [1, T, H, D]
    elif order == "BHTD":
        x4 = x.transpose(0, 2, 1, 3)  # [B, T, H, D]
    else:
        x4 = x
    seq_len = int(positions.max()) + 1
    inv, attention = inv_freq_and_factor(cfg, seq_len)
    if not scale_cos_sin:
        attention = 1.0
    R, half = cfg["rotary_dim"], cfg["rotary_dim"] // 2
    angle = positions.astype(np.float64)[:, :, None] * inv[None, None, :]  # [B, T, R/2]
    cos = (np.cos(angle) * attention)[:, :, None, :]
    sin = (np.sin(angle) * attention)[:, :, None, :]
    y = x4.copy()
    if cfg["layout"] == "half":
        a, b = x4[..., :half], x4[..., half:R]
        y[..., :half] = a * cos - b * sin
        y[..., half:R] = b * cos + a * sin
        partner = np.concatenate([np.arange(half, R), np.arange(0, half)])
    else:
        a, b = x4[..., 0:R:2], x4[..., 1:R:2]
        y[..., 0:R:2] = a * cos - b * sin
        y[..., 1:R:2] = b * cos + a * sin
        partner = np.arange(R) ^ 1
    # |x_a| + |x_b| of each rotated channel's pair; pass-through channels are exact.
    pair_abs = np.zeros_like(x4)
    pair_abs[..., :R] = np.abs(x4[..., :R]) + np.abs(x4[..., partner])
    undo = (lambda t: t[0]) if order == "THD" else (
        (lambda t: t.transpose(0, 2, 1, 3)) if order == "BHTD" else (lambda t: t))
    return undo(y), undo(pair_abs) * attention


def flags_of(cfg):
    f = ["--head-dim", str(cfg["head_dim"]), "--rotary-dim", str(cfg["rotary_dim"]),
         "--base", repr(float(cfg["base"])), "--layout", cfg["layout"]]
    s = cfg.get("scaling", "none")
    if s == "longrope":
        f += ["--scaling", "longrope", "--original-max", str(cfg["original_max"]),
              "--max-position-embeddings", str(cfg["max_position_embeddings"]),
              "--short-factor", ",".join(repr(v) for v in cfg["short_factor"]),
              "--long-factor", ",".join(repr(v) for v in cfg["long_factor"])]
    elif s == "dynamic":
        f += ["--scaling", "dynamic", "--factor", repr(float(cfg["factor"])),
              "--max-position-embeddings", str(cfg["max_position_embeddings"])]
    return f


failures = 0


def check(name, got, ref, pair_abs, dtype):
    """got within the documented tolerance of ref; prints the worst fraction of it."""
    global failures
    e32 = 3.0 * 2.0**-24 * pair_abs
    tol = e32 if dtype == np.float32 else e32 + 2.0**-11 * (np.abs(ref) + e32) + 2.0**-25
    err = np.abs(got.astype(np.float64) - ref)
    # Channels with tol 0 (pass-through) must be exact.
    worst = float(np.max(np.where(tol > 0, err / np.where(tol > 0, tol, 1), np.where(err > 0, np.inf, 0))))
    ok = worst <= 1.0
    print(f"{'ok  ' if ok else 'FAIL'} {name}: largest error {float(err.max()):.3g}, "
          f"{worst:.3f} of the tolerance")
    if not ok:
        failures += 1


def run(args):
    r = subprocess.run([POSENC, "apply"] + args, capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL: posenc apply " + " ".join(args[:8]) + " ... exited " + str(r.returncode) +
              ": " + r.stderr.strip())
        sys.exit(1)
    return r


def save(name, a, version=None):
    path = os.path.join(SCRATCH, name)
    if version is None:
        np.save(path, a)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, a, version=version)
    return path


def phi3_config_json(cfg, path):
    """A Phi-3-style config.json for cfg: HF v4's longrope with a top-level
    original_max_position_embeddings (factor = max / original)."""
    import json
    with open(path, "w") as f:
        json.dump({"model_type": "phi3", "hidden_size": 24 * cfg["head_dim"],
                   "num_attention_heads": 24, "rope_theta": cfg["base"],
                   "max_position_embeddings": cfg["max_position_embeddings"],
                   "original_max_position_embeddings": cfg["original_max"],
                   "rope_scaling": {"type": "longrope", "short_factor": cfg["short_factor"],
                                    "long_factor": cfg["long_factor"]}}, f)
    return path


def case(name, cfg, shape, order, dtype, positions=None, k_heads=None, version=None,
         scale_cos_sin=True, extra=(), hf_config=False):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.uniform(-4, 4, size=shape).astype(dtype)
    B = 1 if order == "THD" else shape[0]
    T = shape[0] if order == "THD" else (shape[2] if order == "BHTD" else shape[1])
    args = ["--input", save(name + "_q.npy", x, version), "--output",
            os.path.join(SCRATCH, name + "_yq.npy")]
    if order != "THD":
        args += ["--shape-order", order]
    if positions is None:
        pos = np.tile(np.arange(T, dtype=np.int64), (B, 1))
    else:
        pos = np.asarray(positions, dtype=np.int64).reshape(B, T)
        args += ["--position-ids", save(name + "_pos.npy", pos)]
    k = None
    if k_heads is not None:
        kshape = list(shape)
        kshape[1 if order == "BHTD" else (1 if order == "THD" else 2)] = k_heads
        k = rng.uniform(-4, 4, size=kshape).astype(dtype)
        args += ["--input-k", save(name + "_k.npy", k, version), "--output-k",
                 os.path.join(SCRATCH, name + "_yk.npy")]
    if not scale_cos_sin:
        args.append("--no-scale-cos-sin")
    if hf_config:
        config = ["--hf-config", phi3_config_json(cfg, os.path.join(SCRATCH, name + ".json"))]
    else:
        config = flags_of(cfg)
    run(args + config + list(extra))
    for tensor, out in ((x, "_yq.npy"), (k, "_yk.npy")):
        if tensor is None:
            continue
        y = np.load(os.path.join(SCRATCH, name + out))
        if y.dtype != tensor.dtype or y.shape != tensor.shape:
            print(f"FAIL {name}{out}: dtype {y.dtype} shape {y.shape}, input {tensor.dtype} "
                  f"{tensor.shape}")
            sys.exit(1)
        ref, pair_abs = reference(tensor, pos, cfg, order, scale_cos_sin)
        check(name + out[:-4], y, ref, pair_abs, dtype)


# Phi-3-style LongRoPE: head_dim 128, short factors near 1, long factors rising to about 60
# (a smooth made-up profile, not a published checkpoint's), original context 4096 of 131072.
pairs = np.arange(64)
phi3 = {"head_dim": 128, "rotary_dim": 128, "base": 10000.0, "layout": "half",
        "scaling": "longrope", "original_max": 4096, "max_position_embeddings": 131072,
        "short_factor": [float(round(1.0 + 0.05 * (i / 63) ** 2, 6)) for i in pairs],
        "long_factor": [float(round(1.0 + 59.0 * (i / 63) ** 3, 6)) for i in pairs]}

# The acceptance case: HF layout [2, 8, 16, 128] float16, a Phi-3-style config.json, no
# --seq-len. Row 1 runs past the original context, so the call's seq_len (5016) selects the long
# factors for both rows.
case("longrope_bhtd_f16_long", phi3, (2, 8, 16, 128), "BHTD", np.float16,
     positions=[list(range(16)), list(range(5000, 5016))], k_heads=2, hf_config=True)
# Every position within the original context: the short factors.
case("longrope_bhtd_f16_short", phi3, (2, 8, 16, 128), "BHTD", np.float16,
     positions=[list(range(16)), list(range(4000, 4016))])
# The boundary: max position 4096 gives seq_len 4097 > 4096, the long factors; 4095 the short.
case("longrope_bhtd_f32_edge_long", phi3, (1, 2, 16, 128), "BHTD", np.float32,
     positions=[list(range(4081, 4097))])
case("longrope_bhtd_f32_edge_short", phi3, (1, 2, 16, 128), "BHTD", np.float32,
     positions=[list(range(4080, 4096))])
# The attention factor left out (--no-scale-cos-sin): the unit rotation.
case("longrope_bthd_f32_unscaled", phi3, (2, 16, 4, 128), "BTHD", np.float32,
     positions=[list(range(4090, 4106)), list(range(16))], scale_cos_sin=False)
# Both layouts, every order, partial rotary, format 2.0 input.
plain = {"head_dim": 64, "rotary_dim": 48, "base": 500000.0, "layout": "interleaved"}
case("interleaved_thd_f32", plain, (9, 3, 64), "THD", np.float32,
     positions=[0, 1, 2, 100, 1000, 65535, 70000, 3, 4])
case("interleaved_bthd_f16_v2", plain, (3, 5, 2, 64), "BTHD", np.float16, version=(2, 0),
     k_heads=1)
half = dict(plain, layout="half")
case("half_bhtd_f32", half, (2, 4, 7, 64), "BHTD", np.float32,
     positions=[[5, 6, 7, 8, 9, 10, 11], [0, 0, 1, 1, 2, 2, 3]])
# Dynamic NTK: the base grows only once max(position_ids) + 1 exceeds max_position_embeddings.
dynamic = {"head_dim": 32, "rotary_dim": 32, "base": 10000.0, "layout": "half",
           "scaling": "dynamic", "factor": 2.0, "max_position_embeddings": 64}
case("dynamic_thd_f32_grown", dynamic, (6, 2, 32), "THD", np.float32,
     positions=[0, 1, 2, 50, 99, 7])
case("dynamic_thd_f32_within", dynamic, (6, 2, 32), "THD", np.float32,
     positions=[0, 1, 2, 50, 63, 7])

print(f"{failures} failed")
sys.exit(1 if failures else 0)
