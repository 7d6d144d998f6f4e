#!/usr/bin/env python3
"""Writes the interior-padding corpus (cases/) from the definition, independently of the crate.

The definition is numpy's slice assignment, then crops, as JAX documents lax.pad: a tensor
of the constant, big enough for the non-negative pads and the dilated input; the input
assigned at big[L0 : L0 + D0 : k0 + 1, ...]; then the negative pads cropped off each side.
Written in plain Python (no numpy here) over flat lists. Run from anywhere:

    python3 tests/data/interior/generate.py

The cases are deterministic (a fixed seed); the script overwrites cases/. check_numpy.py
checks them against numpy's own slice assignment, where numpy is installed.
"""

import itertools
import json
import random
import shutil
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ONNX type name -> (.npy descr, bytes an element as stored, how to draw one element's bytes).
TYPES = {
    "float32": ("<f4", 4),
    "float64": ("<f8", 8),
    "float16": ("<f2", 2),
    "bfloat16": ("<V2", 2),
    "int8": ("|i1", 1),
    "int32": ("<i4", 4),
    "int64": ("<i8", 8),
    "uint8": ("|u1", 1),
    "uint16": ("<u2", 2),
    "bool": ("|b1", 1),
    "complex64": ("<c8", 8),
    "complex128": ("<c16", 16),
    "float8e4m3fn": ("|V1", 1),
    "int4": ("|V1", 1),
    "uint4": ("|V1", 1),
    "string": (None, None),
}


def draw(rng, dtype):
    """One element: bytes for fixed-width types, a str for strings."""
    if dtype == "string":
        return "".join(rng.choice("abcxyzé漢🙂") for _ in range(rng.randrange(0, 4)))
    if dtype == "bool":
        return bytes([rng.randrange(2)])
    if dtype in ("int4", "uint4"):
        return bytes([rng.randrange(16)])
    if dtype in ("float32", "float64", "float16", "complex64", "complex128"):
        # Ordinary finite values; the pad moves bits, so any would do.
        fmt = {"float32": "<f", "float64": "<d", "float16": "<e", "complex64": "<ff", "complex128": "<dd"}[dtype]
        parts = len(fmt) - 1
        return struct.pack(fmt, *[rng.randrange(-1000, 1000) / 8 for _ in range(parts)])
    return bytes(rng.randrange(256) for _ in range(TYPES[dtype][1]))


def string_width(elements, at_least=1):
    return max([len(s) for s in elements] + [at_least])


def write_npy(path, dtype, shape, elements, width_at_least=1):
    """Strings take the longest element's width, and at least `width_at_least` (an output keeps
    its input's descr, widened where an element needs it)."""
    if dtype == "string":
        width = string_width(elements, width_at_least)
        descr = f"<U{width}"
        data = b"".join(s.ljust(width, "\0").encode("utf-32-le") for s in elements)
    else:
        descr = TYPES[dtype][0]
        data = b"".join(elements)
    shape_text = f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(map(str, shape)) + ")"
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}"
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + data)


def flat_index(shape, index):
    i = 0
    for d, n in zip(index, shape):
        i = i * n + d
    return i


def lax_pad(x, shape, config, value):
    """The definition: slice assignment into the constant, then crops. None if a dimension
    would be negative."""
    dilated = [n + (n - 1) * k if n > 0 else 0 for n, (_, _, k) in zip(shape, config)]
    big_shape = [max(lo, 0) + d + max(hi, 0) for d, (lo, hi, _) in zip(dilated, config)]
    big = [value] * (0 if 0 in big_shape else _prod(big_shape))
    for index in itertools.product(*[range(n) for n in shape]):
        place = [max(lo, 0) + i * (k + 1) for i, (lo, _, k) in zip(index, config)]
        big[flat_index(big_shape, place)] = x[flat_index(shape, index)]
    starts = [max(-lo, 0) for lo, _, _ in config]
    stops = [b - max(-hi, 0) for b, (_, hi, _) in zip(big_shape, config)]
    out_shape = [stop - start for start, stop in zip(starts, stops)]
    if any(n < 0 for n in out_shape):
        return None, None
    out = [big[flat_index(big_shape, [s + o for s, o in zip(starts, index)])]
           for index in itertools.product(*[range(n) for n in out_shape])]
    return out, out_shape


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def write_case(name, dtype, shape, config, rng, value=None, mode="constant", axes=None, interior=None, error=None):
    """One case folder. `config` is one (lo, hi, interior) per axis the request names."""
    folder = HERE / "cases" / name
    folder.mkdir(parents=True)
    x = [draw(rng, dtype) for _ in range(_prod(shape))]
    write_npy(folder / "input.npy", dtype, shape, x)
    if value is not None:
        write_npy(folder / "value.npy", dtype, [], [value])
    zero = "" if dtype == "string" else bytes(TYPES[dtype][1])
    pads = [c[0] for c in config] + [c[1] for c in config]
    case = {"dtype": dtype, "mode": mode, "pads": pads, "axes": axes,
            "interior": interior if interior is not None else [c[2] for c in config]}
    if error is None:
        # Every axis's (lo, hi, interior), the ones not named left alone.
        full = [(0, 0, 0)] * len(shape)
        named = axes if axes is not None else list(range(len(shape)))
        for a, c in zip(named, config):
            full[a % len(shape)] = c
        out, out_shape = lax_pad(x, shape, full, zero if value is None else value)
        assert out is not None, name
        width = string_width(x) if dtype == "string" else 1
        write_npy(folder / "expected.npy", dtype, out_shape, out, width)
        case["expect"] = "ok"
    else:
        case["expect"] = "error"
        case["error_kind"] = error
    case["source"] = "generate.py: slice assignment, then crops"
    (folder / "case.json").write_text(json.dumps(case, indent=1) + "\n")


def main():
    shutil.rmtree(HERE / "cases", ignore_errors=True)
    rng = random.Random(71)
    # The cases a reader checks by hand: JAX's documentation example, a stride-2 upsampler
    # (a transposed convolution's input), crops into the dilation, empty and 1-element axes.
    write_case("lax_doc_1d", "int32", [3], [(1, 2, 1)], rng)
    write_case("upsample_nchw_stride2", "float32", [1, 2, 3, 3], [(0, 0, 0), (0, 0, 0), (1, 1, 1), (1, 1, 1)], rng)
    write_case("crop_into_dilation", "int64", [4, 3], [(-3, -2, 2), (1, -1, 1)], rng)
    write_case("crop_past_everything", "uint8", [3], [(-9, 4, 1)], rng)
    write_case("empty_axis_padded", "float16", [0, 3], [(2, 1, 3), (0, 0, 2)], rng)
    write_case("one_element_axis", "bfloat16", [1, 4], [(0, 0, 5), (1, 0, 1)], rng)
    write_case("axes_last_only", "int8", [2, 3], [(0, 1, 2)], rng, axes=[-1])
    write_case("value_given", "float32", [2, 2], [(1, 1, 1), (0, 0, 1)], rng, value=struct.pack("<f", -7.5))
    write_case("strings", "string", [2, 3], [(1, 0, 1), (0, 2, 2)], rng, value="pad")
    write_case("int4_odd", "int4", [3, 3], [(0, 0, 1), (1, 0, 1)], rng, value=bytes([9]))
    write_case("uint4_crop", "uint4", [5], [(-1, 2, 2)], rng)
    write_case("interior_zero_is_onnx", "float32", [2, 3], [(1, -1, 0), (-2, 2, 0)], rng)
    # Refusals.
    write_case("error_negative_interior", "float32", [3], [(0, 0, -1)], rng, error="interior")
    write_case("error_reflect_interior", "float32", [3], [(1, 1, 1)], rng, mode="reflect", error="interior")
    write_case("error_interior_length", "float32", [3, 2], [(1, 1, 1), (0, 0, 0)], rng, interior=[1], error="interior")
    write_case("error_negative_output", "float32", [3], [(-4, -2, 1)], rng, error="interior")
    # Random plans over the types.
    types = list(TYPES)
    for i in range(48):
        dtype = types[i % len(types)]
        rank = rng.randrange(1, 5)
        shape = [rng.choice([0, 1, 1, 2, 3, 4, 5]) if rng.random() < 0.2 else rng.randrange(1, 6) for _ in range(rank)]
        while True:
            config = [(rng.randrange(-5, 5), rng.randrange(-5, 5), rng.choice([0, 0, 1, 2, 3])) for _ in range(rank)]
            dilated = [n + (n - 1) * k if n > 0 else 0 for n, (_, _, k) in zip(shape, config)]
            if all(d + lo + hi >= 0 for d, (lo, hi, _) in zip(dilated, config)):
                break
        value = draw(rng, dtype) if rng.random() < 0.5 else None
        write_case(f"random_{i:02}_{dtype}", dtype, shape, config, rng, value=value)


if __name__ == "__main__":
    main()
