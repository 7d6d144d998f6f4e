"""One table of ours, PyTorch's and the rooflines per case and mode: a harness report joined
with benchmarks/torch_pad.py's figures for the same cases (matched by type, shape, pads and
mode).

    python3 benchmarks/torch_table.py REPORT.json TORCH.json [--markdown OUT.md]

Columns, all per call at steady clocks, in µs: ours (the kernel's batch figure,
`gpu_kernel_batch_ms`), our roofline copy of the output's bytes (`gpu_roofline_ms`), torch's
`F.pad` and torch's device copy of the same bytes; then ours / roofline, ours / torch and
roofline / torch copy (how our anchor compares with torch's), and a verdict of ours against
torch: SAME where the 95 % intervals overlap, else FASTER or SLOWER; a figure missing, not a
number, zero or negative gives no ratio and no verdict ("no figure", or torch's reason). Cases
in one file only are listed at the end; no case in common is an error (exit 1).
`--self-test` checks the verdicts on made-up figures, with no torch (CI runs it).
"""
import argparse
import json
import math
import sys


def key(r):
    """A case: a pad's figures and its gradient's (`backward`) are of different cases."""
    return (r["dtype"], tuple(r["shape"]), tuple(r["pads"]), r["mode"], bool(r.get("backward")))


def load(path, what):
    try:
        with open(path) as f:
            records = json.load(f)["records"]
        assert isinstance(records, list)
        return {key(r): r for r in records}
    except (OSError, ValueError, KeyError, TypeError, AssertionError) as e:
        sys.exit(f"error: {path}: not a {what} ({type(e).__name__}: {e})")


def figure(d, name):
    """A figure of the record: a positive finite number, else None (missing, NaN, 0, a string)."""
    v = d.get(name)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        return None
    return float(v)


def verdict(ours, torch):
    """SAME where the intervals overlap, else which is faster; None where a figure is missing."""
    if None in ours or None in torch:
        return None
    (o, o_low, o_high), (t, t_low, t_high) = ours, torch
    if o_high < t_low:
        return "FASTER"
    if o_low > t_high:
        return "SLOWER"
    return "SAME"


def rows(harness, torch):
    out = []
    for k, r in harness.items():
        t = torch.get(k)
        if t is None:
            continue
        x = r.get("extra", r)  # the harness flattens extra figures into the record
        ours = figure(x, "gpu_kernel_batch_ms")
        roof = figure(r, "gpu_roofline_ms")
        pad, copy = figure(t, "torch_pad_ms"), figure(t, "torch_copy_ms")
        row = {
            "case": f"{r['dtype']} [{','.join(map(str, r['shape']))}] {r['mode']}",
            "out MiB": r["out_bytes"] / 2**20,
            "ours us": ours * 1e3 if ours else None,
            "roofline us": roof * 1e3 if roof else None,
            "torch F.pad us": pad * 1e3 if pad else None,
            "torch copy us": copy * 1e3 if copy else None,
        }
        row["ours/roofline"] = ours / roof if ours and roof else None
        row["ours/torch"] = ours / pad if ours and pad else None
        row["roofline/torch copy"] = roof / copy if roof and copy else None
        v = verdict(
            (ours, figure(x, "gpu_kernel_batch_ci_low_ms"), figure(x, "gpu_kernel_batch_ci_high_ms")),
            (pad, figure(t, "torch_pad_ci_low_ms"), figure(t, "torch_pad_ci_high_ms")),
        )
        if v is None:
            # Why there is no verdict: torch's reason where it gave one, cut to fit a column.
            why = t.get("torch", "") if not pad else ""
            why = why if isinstance(why, str) and why else "no figure"
            v = why if len(why) <= 40 else why[:39] + "…"
        row["vs torch"] = v
        out.append(row)
    return out


def self_test():
    """The verdicts and the refusals, with no torch: CI runs this."""
    def rec(mode, **figs):
        return {"dtype": "float32", "shape": [4], "pads": [1, 1], "mode": mode, "out_bytes": 24, **figs}

    ours = {"gpu_kernel_batch_ms": 0.010, "gpu_kernel_batch_ci_low_ms": 0.0099, "gpu_kernel_batch_ci_high_ms": 0.0101,
            "gpu_roofline_ms": 0.008}
    harness = {key(r): r for r in [rec(m, **ours) for m in ["a", "b", "c", "d", "e", "f", "g"]]}

    def t(mode, ms, low, high):
        return rec(mode, torch_pad_ms=ms, torch_pad_ci_low_ms=low, torch_pad_ci_high_ms=high, torch_copy_ms=0.005)

    torch = {key(r): r for r in [
        t("a", 0.020, 0.019, 0.021),  # torch slower: ours FASTER
        t("b", 0.005, 0.0049, 0.0051),  # torch faster: ours SLOWER
        t("c", 0.010, 0.009, 0.011),  # overlapping: SAME
        t("d", float("nan"), float("nan"), float("nan")),  # NaN: no verdict, never SAME
        t("e", 0.0, 0.0, 0.0),  # zero: no ratio, no division by it
        rec("f", torch="torch has no symmetric"),  # missing figures: torch's reason
        t("g", "fast", None, 0.01),  # a string figure
    ]}
    got = {r["case"].split()[-1]: r for r in rows(harness, torch)}
    verdicts = {m: got[m]["vs torch"] for m in got}
    assert verdicts == {"a": "FASTER", "b": "SLOWER", "c": "SAME", "d": "no figure", "e": "no figure",
                        "f": "torch has no symmetric", "g": "no figure"}, verdicts
    assert abs(got["a"]["ours/torch"] - 0.5) < 1e-9 and got["e"]["ours/torch"] is None, got
    print("torch_table: self-test passed")


def cell(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}" if v < 100 else f"{v:.0f}"
    return str(v)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report", nargs="?", help="the harness's JSON report")
    p.add_argument("torch", nargs="?", help="benchmarks/torch_pad.py's JSON")
    p.add_argument("--markdown", help="also write the table here as Markdown")
    p.add_argument("--self-test", action="store_true", help="check the verdicts on made-up figures (no torch)")
    args = p.parse_args()
    if args.self_test:
        return self_test()
    if not args.report or not args.torch:
        p.error("REPORT and TORCH are needed")
    harness, torch = load(args.report, "harness report"), load(args.torch, "torch_pad.py report")
    table = rows(harness, torch)
    if not table:
        sys.exit(f"error: {args.report} and {args.torch} have no case in common")
    heads = list(table[0])
    widths = [max(len(h), *(len(cell(r[h])) for r in table)) for h in heads]
    print("  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(heads, widths))))
    for r in table:
        print("  ".join(cell(r[h]).ljust(w) if i == 0 else cell(r[h]).rjust(w) for i, (h, w) in enumerate(zip(heads, widths))))
    for which, mine, other in ((args.report, harness, torch), (args.torch, torch, harness)):
        alone = [k for k in mine if k not in other]
        if alone:
            print(f"only in {which}: {len(alone)} cases")
    if args.markdown:
        md = "| " + " | ".join(heads) + " |\n|" + "---|" * len(heads) + "\n"
        md += "".join("| " + " | ".join(cell(r[h]) for h in heads) + " |\n" for r in table)
        with open(args.markdown, "w") as f:
            f.write(md)
        print(f"wrote {args.markdown}")


if __name__ == "__main__":
    main()
