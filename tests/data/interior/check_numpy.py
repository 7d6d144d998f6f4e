#!/usr/bin/env python3
"""Checks the interior corpus (cases/) against numpy, where numpy is installed: each `ok` case's
expected.npy must be numpy's slice assignment into a tensor of the constant, then the crops
(JAX's definition of lax.pad), on the case's own input.npy and value.npy; each `error` case
must be one numpy cannot make (a negative count or output length) or that has a mode other
than constant or a count list of the wrong length. Prints one line a case that differs and
exits 1 if any does.

    python3 tests/data/interior/check_numpy.py

The element types load as numpy loads them (raw bytes for the `V` descrs), which is all
slicing needs: the check moves elements, as the pad does.
"""

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def lax_pad(x, config, value):
    """numpy: np.full of the constant, the input assigned at [L : L + D : k + 1] on each axis
    (L = max(low, 0)), then max(-low, 0) and max(-high, 0) cropped off the two sides."""
    dilated = [n + (n - 1) * k if n > 0 else 0 for n, (_, _, k) in zip(x.shape, config)]
    big_shape = [max(lo, 0) + d + max(hi, 0) for d, (lo, hi, _) in zip(dilated, config)]
    big = np.full(big_shape, value, dtype=x.dtype)
    if x.size:
        big[tuple(slice(max(lo, 0), max(lo, 0) + d, k + 1) for d, (lo, _, k) in zip(dilated, config))] = x
    crop = tuple(slice(max(-lo, 0), b - max(-hi, 0)) for b, (lo, hi, _) in zip(big_shape, config))
    return big[crop]


def main():
    failures, checked = [], 0
    for case in sorted((HERE / "cases").iterdir()):
        spec = json.loads((case / "case.json").read_text())
        x = np.load(case / "input.npy")
        rank = x.ndim
        axes = spec["axes"] if spec["axes"] is not None else list(range(rank))
        k = len(axes)
        pads, interior = spec["pads"], spec["interior"]
        if spec["expect"] == "error":
            valid = (spec["mode"] == "constant" and len(interior) == k and all(i >= 0 for i in interior))
            if valid:
                config = [(pads[i], pads[k + i], interior[i]) for i in range(k)]
                dims = [x.shape[a] + (x.shape[a] - 1) * c[2] if x.shape[a] else 0 for a, c in zip(axes, config)]
                valid = all(d + lo + hi >= 0 for d, (lo, hi, _) in zip(dims, config))
            if valid:
                failures.append(f"{case.name}: an error case numpy can pad")
            checked += 1
            continue
        full = [(0, 0, 0)] * rank
        for i, a in enumerate(axes):
            full[a % rank] = (pads[i], pads[k + i], interior[i])
        value_file = case / "value.npy"
        value = np.load(value_file)[()] if value_file.exists() else np.zeros((), dtype=x.dtype)[()]
        got = lax_pad(x, full, value)
        want = np.load(case / "expected.npy")
        # Strings: numpy's fixed width may differ (the expected keeps the input's); compare values.
        same = got.shape == want.shape and (got.tobytes() == want.tobytes() if got.dtype.kind != "U" else (got == want).all())
        if not same:
            failures.append(f"{case.name}: numpy gives {got.shape}, the corpus {want.shape}")
        checked += 1
    for f in failures:
        print(f)
    print(f"{checked} cases checked against numpy {np.__version__}, {len(failures)} differ")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
