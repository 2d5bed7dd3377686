#!/usr/bin/env python3
"""Writes the GGUF files of tests/tools/gguf.cpp (and the fuzz seeds of tests/fuzz/corpus/gguf).

    make_gguf.py OUTDIR

The layout is the published one (ggml-org/ggml, docs/gguf.md): little-endian; "GGUF", uint32
version, uint64 tensor_count, uint64 metadata_kv_count, then each pair as a gguf_string_t key
(uint64 length, bytes), a uint32 value type and the value; arrays as uint32 element type, uint64
count, elements. Key names are llama.cpp's (src/llama-arch.cpp). Standard library only.

The well-formed files carry the values that tests/tools/gguf.cpp expects (listed there again, not
read from here); the malformed ones each break one rule of the layout.
"""

import os
import struct
import sys

UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
_FIXED = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
          FLOAT32: "<f", BOOL: "<B", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}


def gstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def value(t, v):
    if t == STRING:
        return gstr(v)
    if t == ARRAY:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(value(et, x) for x in items)
    return struct.pack(_FIXED[t], v)


def kv(key, t, v):
    return gstr(key) + struct.pack("<I", t) + value(t, v)


def gguf(pairs, version=3, tensor_count=0, tail=b""):
    body = b"".join(kv(*p) for p in pairs)
    return b"GGUF" + struct.pack("<IQQ", version, tensor_count, len(pairs)) + body + tail


# One tensor info and a few bytes of data after the pairs: the reader must stop before them
# (the tensor info is cut short, so reading it would fail).
TENSOR_TAIL = gstr("token_embd.weight") + struct.pack("<I", 2)

EVERY_TYPE = [
    ("general.name", STRING, "posenc test model"),
    ("test.u8", UINT8, 200),
    ("test.i8", INT8, -100),
    ("test.u16", UINT16, 60000),
    ("test.i16", INT16, -30000),
    ("test.u32", UINT32, 4000000000),
    ("test.i32", INT32, -2000000000),
    ("test.f32", FLOAT32, 0.5),
    ("test.bool", BOOL, 1),
    ("test.u64", UINT64, 2**63),
    ("test.i64", INT64, -(2**62)),
    ("test.f64", FLOAT64, 0.1),
    ("tokenizer.ggml.tokens", ARRAY, (STRING, ["<s>", "</s>", "hello"])),
    ("tokenizer.ggml.scores", ARRAY, (FLOAT32, [0.0, -1.0, -2.5])),
    ("test.flags", ARRAY, (BOOL, [0, 1, 1])),
    ("test.nested", ARRAY, (ARRAY, [(INT32, [1, 2]), (INT32, [])])),
]

# Llama-style with YaRN (head_dim 4096 / 32 = 128), every value type, and a rope key that is not
# used (attn_factor).
LLAMA_YARN = [
    ("general.architecture", STRING, "llama"),
    *EVERY_TYPE,
    ("llama.context_length", UINT32, 131072),
    ("llama.embedding_length", UINT32, 4096),
    ("llama.block_count", UINT32, 2),
    ("llama.attention.head_count", UINT32, 32),
    ("llama.attention.head_count_kv", UINT32, 8),
    ("llama.rope.dimension_count", UINT32, 128),
    ("llama.rope.freq_base", FLOAT32, 500000.0),
    ("llama.rope.scaling.type", STRING, "yarn"),
    ("llama.rope.scaling.factor", FLOAT32, 32.0),
    ("llama.rope.scaling.original_context_length", UINT32, 4096),
    ("llama.rope.scaling.yarn_beta_fast", FLOAT32, 16.0),
    ("llama.rope.scaling.yarn_beta_slow", FLOAT32, 2.0),
    ("llama.rope.scaling.attn_factor", FLOAT32, 1.0),
]

# Gemma-3 style, GGUF version 2: key_length 256 (embedding / heads would be 320), linear x8,
# the sliding layers' base in freq_base_swa (not used).
GEMMA3 = [
    ("general.architecture", STRING, "gemma3"),
    ("gemma3.context_length", UINT64, 131072),
    ("gemma3.embedding_length", UINT64, 2560),
    ("gemma3.attention.head_count", UINT64, 8),
    ("gemma3.attention.key_length", UINT32, 256),
    ("gemma3.rope.freq_base", FLOAT64, 1000000.0),
    ("gemma3.rope.freq_base_swa", FLOAT32, 10000.0),
    ("gemma3.rope.scaling.type", STRING, "linear"),
    ("gemma3.rope.scaling.factor", FLOAT32, 8.0),
]

# GPT-NeoX style, as tests/tools/data/neox.json: 6144 / 64 = 96, 24 rotated channels, no scaling
# keys, base 10000.
NEOX = [
    ("general.architecture", STRING, "gptneox"),
    ("gptneox.context_length", UINT32, 2048),
    ("gptneox.embedding_length", UINT32, 6144),
    ("gptneox.attention.head_count", UINT32, 64),
    ("gptneox.rope.dimension_count", UINT32, 24),
    ("gptneox.rope.freq_base", FLOAT32, 10000.0),
]

# DeepSeek-V2 style: the rope slice (dimension_count 64) is the head dimension, not key_length
# 192; interleaved pairs; YaRN x40 from 4096; int32 and uint64 counts.
DEEPSEEK2 = [
    ("general.architecture", STRING, "deepseek2"),
    ("deepseek2.context_length", UINT64, 163840),
    ("deepseek2.embedding_length", UINT32, 5120),
    ("deepseek2.attention.head_count", INT32, 128),
    ("deepseek2.attention.key_length", UINT32, 192),
    ("deepseek2.rope.dimension_count", UINT32, 64),
    ("deepseek2.rope.freq_base", FLOAT32, 10000.0),
    ("deepseek2.rope.scaling.type", STRING, "yarn"),
    ("deepseek2.rope.scaling.factor", FLOAT32, 40.0),
    ("deepseek2.rope.scaling.original_context_length", UINT32, 4096),
    ("deepseek2.rope.scaling.yarn_log_multiplier", FLOAT32, 0.0707),
]

# Qwen2-VL-7B as llama.cpp's convert_hf_to_gguf.py writes it (Qwen2VLModel.set_gguf_parameters:
# the config's mrope_section padded with 0 to 4 entries, add_rope_dimension_sections, an array of
# int32): hidden_size 3584 / 28 heads = 128, rope_theta 1e6, mrope_section [16, 24, 24].
QWEN2VL = [
    ("general.architecture", STRING, "qwen2vl"),
    ("qwen2vl.context_length", UINT32, 32768),
    ("qwen2vl.embedding_length", UINT32, 3584),
    ("qwen2vl.attention.head_count", UINT32, 28),
    ("qwen2vl.rope.dimension_count", UINT32, 128),
    ("qwen2vl.rope.freq_base", FLOAT32, 1000000.0),
    ("qwen2vl.rope.dimension_sections", ARRAY, (INT32, [16, 24, 24, 0])),
]

# Qwen3-VL-8B's text model: head_dim 128, rope_theta 5e6, mrope_section [24, 20, 20] (interleaved:
# llama.cpp's rope type for the qwen3vl architecture), the sections as uint32.
QWEN3VL = [
    ("general.architecture", STRING, "qwen3vl"),
    ("qwen3vl.context_length", UINT32, 262144),
    ("qwen3vl.embedding_length", UINT32, 4096),
    ("qwen3vl.attention.head_count", UINT32, 32),
    ("qwen3vl.attention.key_length", UINT32, 128),
    ("qwen3vl.rope.dimension_count", UINT32, 128),
    ("qwen3vl.rope.freq_base", FLOAT32, 5000000.0),
    ("qwen3vl.rope.dimension_sections", ARRAY, (UINT32, [24, 20, 20, 0])),
]


def with_sections(pairs, sections):
    return [p for p in pairs if not p[0].endswith(".rope.dimension_sections")] + [sections]


# An older file: the linear factor in rope.scale_linear, no scaling type.
OLD_LINEAR = [
    ("general.architecture", STRING, "llama"),
    ("llama.embedding_length", UINT32, 4096),
    ("llama.attention.head_count", UINT32, 32),
    ("llama.rope.scale_linear", FLOAT32, 4.0),
]


def header(version=3, tensors=0, kvs=0):
    return b"GGUF" + struct.pack("<IQQ", version, tensors, kvs)


def files():
    arch = kv("general.architecture", STRING, "llama")
    out = {
        "llama_yarn.gguf": gguf(LLAMA_YARN, tensor_count=1, tail=TENSOR_TAIL),
        "gemma3.gguf": gguf(GEMMA3, version=2),
        "neox.gguf": gguf(NEOX),
        "old_linear.gguf": gguf(OLD_LINEAR),
        "deepseek2.gguf": gguf(DEEPSEEK2),
        "qwen2vl.gguf": gguf(QWEN2VL),
        "qwen3vl.gguf": gguf(QWEN3VL),
        # three sections (llama.cpp reads them, the fourth 0)
        "qwen2vl_three_sections.gguf": gguf(with_sections(
            QWEN2VL, ("qwen2vl.rope.dimension_sections", ARRAY, (UINT16, [16, 24, 24])))),
        # malformed
        "bad_magic.gguf": b"GGML" + gguf(NEOX)[4:],
        "version1.gguf": gguf(NEOX, version=1),
        "version4.gguf": gguf(NEOX, version=4),
        "truncated_header.gguf": gguf(NEOX)[:14],
        # a string value whose length runs past the end of the file
        "string_beyond_file.gguf": header(kvs=1) + gstr("general.architecture") +
                                   struct.pack("<IQ", STRING, 1 << 40) + b"llama",
        "huge_kv_count.gguf": header(kvs=1 << 62) + arch,
        "unknown_type.gguf": header(kvs=2) + arch + gstr("test.x") + struct.pack("<IQ", 13, 0),
        "huge_array.gguf": header(kvs=2) + arch + gstr("test.tokens") +
                           struct.pack("<IIQ", ARRAY, UINT8, 1 << 62),
        # an array of int64 whose declared elements run past the end of the file
        "array_beyond_file.gguf": header(kvs=2) + arch + gstr("test.ids") +
                                  struct.pack("<IIQ", ARRAY, INT64, 1000) + b"\0" * 80,
        "bad_bool.gguf": header(kvs=2) + arch + gstr("test.flag") + struct.pack("<IB", BOOL, 2),
        "deep_array.gguf": header(kvs=1) + gstr("test.deep") +
                           struct.pack("<I", ARRAY) + struct.pack("<IQ", ARRAY, 1) * 5 +
                           struct.pack("<IQ", UINT8, 0),
        "long_key.gguf": header(kvs=1) + struct.pack("<Q", 70000) + b"k" * 70000,
        "duplicate_key.gguf": header(kvs=2) + arch + arch,
        "truncated_kv.gguf": gguf(NEOX)[:-3],
        "no_architecture.gguf": gguf(NEOX[1:]),
        "bad_scaling.gguf": gguf(NEOX + [("gptneox.rope.scaling.type", STRING, "mrope")]),
        "string_base.gguf": gguf([NEOX[0], NEOX[2], NEOX[3], ("gptneox.rope.freq_base", STRING, "1e4")]),
        # a fourth section: a fourth position stream (llama.cpp's vision M-RoPE)
        "qwen2vl_fourth_section.gguf": gguf(with_sections(
            QWEN2VL, ("qwen2vl.rope.dimension_sections", ARRAY, (INT32, [16, 24, 16, 8])))),
        "qwen2vl_float_sections.gguf": gguf(with_sections(
            QWEN2VL, ("qwen2vl.rope.dimension_sections", ARRAY, (FLOAT32, [16.0, 24.0, 24.0, 0.0])))),
        "qwen2vl_negative_section.gguf": gguf(with_sections(
            QWEN2VL, ("qwen2vl.rope.dimension_sections", ARRAY, (INT32, [16, -24, 24, 0])))),
        "qwen2vl_five_sections.gguf": gguf(with_sections(
            QWEN2VL, ("qwen2vl.rope.dimension_sections", ARRAY, (INT32, [16, 24, 24, 0, 0])))),
    }
    return out


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: make_gguf.py OUTDIR  (writes the test GGUF files into OUTDIR)")
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name, data in files().items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
