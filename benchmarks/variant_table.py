"""Every run of one suite side by side: the kernel's steady time per case and mode for each
build and kernel variant device-ab.sh ran, over the first run's (the baseline: the first
build's default kernels), with the roofline and, where torch ran, PyTorch's F.pad.

    python3 benchmarks/variant_table.py DIR SUITE [--round N] [--markdown OUT.md]
    python3 benchmarks/variant_table.py --self-test

DIR holds device-ab.sh's reports, RUN-SUITE-ROUND.json where RUN is BUILD@VARIANT (the
baseline: BUILD@default of the first build in name order, else the first run) and
torch-SUITE.json. Each run's cell: its µs, its ratio to the baseline and a mark, + where its
95 % interval lies wholly below the baseline's (faster), - wholly above (slower), nothing
where they overlap. A case missing from a run is '-'. No report for the suite: exit 1.
"""
import argparse
import glob
import json
import os
import sys

from torch_table import key, load as load_report  # the reports' case key and reader, shared


def load(path):
    return load_report(path, "harness report")


def runs_of(directory, suite, rnd):
    """The runs' reports, the baseline first."""
    tail = f"-{suite}-{rnd}.json"
    paths = sorted(p for p in glob.glob(os.path.join(directory, f"*@*{tail}")))
    runs = [(os.path.basename(p)[: -len(tail)], p) for p in paths]
    if not runs:
        sys.exit(f"error: {directory}: no report of suite {suite!r}, round {rnd} (*@*{tail})")
    builds = sorted({name.split("@")[0] for name, _ in runs})
    first = f"{builds[0]}@default"
    runs.sort(key=lambda r: (r[0] != first, r[0]))
    return [(name, load(p)) for name, p in runs]


def mark(x, base):
    """+ faster, - slower where the 95 % intervals do not overlap."""
    if x["gpu_kernel_batch_ci_high_ms"] < base["gpu_kernel_batch_ci_low_ms"]:
        return "+"
    if x["gpu_kernel_batch_ci_low_ms"] > base["gpu_kernel_batch_ci_high_ms"]:
        return "-"
    return ""


def table(runs, torch):
    """Header and rows of text cells."""
    names = [name for name, _ in runs]
    head = ["case", "out MiB", "roofline us", "torch F.pad us"] + names
    rows = []
    base = runs[0][1]
    for k, b in base.items():
        t = torch.get(k, {}).get("torch_pad_ms")
        roof = b.get("gpu_roofline_ms")
        row = [
            f"{k[0]} {list(k[1])} {k[3]}",
            f"{b['out_bytes'] / 2**20:.2f}",
            f"{roof * 1e3:.2f}" if roof else "-",
            f"{t * 1e3:.2f}" if t else "-",
        ]
        for i, (_, report) in enumerate(runs):
            x = report.get(k)
            if x is None or not x.get("gpu_kernel_batch_ms"):
                row.append("-")
                continue
            ms = x["gpu_kernel_batch_ms"]
            cell = f"{ms * 1e3:.2f}"
            if i > 0:
                cell += f" {ms / b['gpu_kernel_batch_ms']:.2f}{mark(x, b)}"
            row.append(cell)
        rows.append(row)
    return head, rows


def render(head, rows, markdown):
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows)]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([fmt(head)] + [fmt(r) for r in rows]) + "\n"


def self_test():
    import tempfile

    def rec(mode, ms, low, high):
        return {
            "dtype": "float32", "shape": [4], "pads": [1, 1], "mode": mode, "out_bytes": 24,
            "gpu_kernel_batch_ms": ms, "gpu_kernel_batch_ci_low_ms": low,
            "gpu_kernel_batch_ci_high_ms": high, "gpu_roofline_ms": 0.008,
        }

    with tempfile.TemporaryDirectory() as d:
        reports = {
            "a@default": [rec("edge", 0.010, 0.0099, 0.0101), rec("wrap", 0.010, 0.0099, 0.0101)],
            "a@flat-u8": [rec("edge", 0.008, 0.0079, 0.0081), rec("wrap", 0.012, 0.0119, 0.0121)],
            "a@reference": [rec("edge", 0.0100, 0.0095, 0.0105)],
            "a@cold": [rec("edge", 0.0100, 0.0095, 0.0105)],  # sorts before the baseline
        }
        for name, records in reports.items():
            with open(os.path.join(d, f"{name}-engine-1.json"), "w") as f:
                json.dump({"records": records}, f)
        runs = runs_of(d, "engine", 1)
        assert [n for n, _ in runs] == ["a@default", "a@cold", "a@flat-u8", "a@reference"], runs
        head, rows = table(runs, {})
        assert head[4:] == ["a@default", "a@cold", "a@flat-u8", "a@reference"], head
        edge, wrap = rows
        assert edge[4:] == ["10.00", "10.00 1.00", "8.00 0.80+", "10.00 1.00"], edge
        assert wrap[4:] == ["10.00", "-", "12.00 1.20-", "-"], wrap
        assert "| a@flat-u8 |" in render(head, rows, True)
    print("variant_table: self-test passed")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("directory", nargs="?")
    p.add_argument("suite", nargs="?")
    p.add_argument("--round", type=int, default=1)
    p.add_argument("--markdown")
    p.add_argument("--self-test", action="store_true")
    a = p.parse_args()
    if a.self_test:
        return self_test()
    if not a.directory or not a.suite:
        p.error("DIR and SUITE are needed")
    runs = runs_of(a.directory, a.suite, a.round)
    torch_path = os.path.join(a.directory, f"torch-{a.suite}.json")
    torch = {}
    if os.path.exists(torch_path):
        with open(torch_path) as f:
            torch = {key(r): r for r in json.load(f).get("records", [])}
    head, rows = table(runs, torch)
    print(render(head, rows, False), end="")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(render(head, rows, True))


if __name__ == "__main__":
    main()
