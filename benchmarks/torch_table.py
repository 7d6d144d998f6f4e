"""One table of ours, PyTorch's and the rooflines per case and mode: a harness report joined
with benchmarks/torch_pad.py's figures for the same cases (matched by type, shape, pads and
mode).

    python3 benchmarks/torch_table.py REPORT.json TORCH.json [--markdown OUT.md]

Columns, all per call at steady clocks, in µs: ours (the kernel's batch figure,
`gpu_kernel_batch_ms`), our roofline copy of the output's bytes (`gpu_roofline_ms`), torch's
`F.pad` and torch's device copy of the same bytes; then ours / roofline, ours / torch and
roofline / torch copy (how our anchor compares with torch's), and a verdict of ours against
torch: SAME where the 95 % intervals overlap, else FASTER or SLOWER. Cases in one file only
are listed at the end; no case in common is an error (exit 1).
"""
import argparse
import json
import sys


def key(r):
    return (r["dtype"], tuple(r["shape"]), tuple(r["pads"]), r["mode"])


def load(path, what):
    try:
        with open(path) as f:
            records = json.load(f)["records"]
        assert isinstance(records, list)
        return {key(r): r for r in records}
    except (OSError, ValueError, KeyError, TypeError, AssertionError) as e:
        sys.exit(f"error: {path}: not a {what} ({type(e).__name__}: {e})")


def verdict(ours, torch):
    """SAME where the intervals overlap, else which is faster."""
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
        ours = x.get("gpu_kernel_batch_ms")
        low = x.get("gpu_kernel_batch_ci_low_ms", ours)
        high = x.get("gpu_kernel_batch_ci_high_ms", ours)
        roof = r.get("gpu_roofline_ms")
        row = {
            "case": f"{r['dtype']} [{','.join(map(str, r['shape']))}] {r['mode']}",
            "out MiB": r["out_bytes"] / 2**20,
            "ours us": ours * 1e3 if ours else None,
            "roofline us": roof * 1e3 if roof else None,
            "torch F.pad us": t["torch_pad_ms"] * 1e3 if "torch_pad_ms" in t else None,
            "torch copy us": t["torch_copy_ms"] * 1e3 if "torch_copy_ms" in t else None,
        }
        row["ours/roofline"] = ours / roof if ours and roof else None
        row["ours/torch"] = ours / t["torch_pad_ms"] if ours and "torch_pad_ms" in t else None
        row["roofline/torch copy"] = roof / t["torch_copy_ms"] if roof and "torch_copy_ms" in t else None
        if ours and "torch_pad_ms" in t:
            row["vs torch"] = verdict(
                (ours, low, high), (t["torch_pad_ms"], t["torch_pad_ci_low_ms"], t["torch_pad_ci_high_ms"])
            )
        else:
            why = t.get("torch", "")  # why torch has no figure (its reason, cut to fit a column)
            row["vs torch"] = why if len(why) <= 40 else why[:39] + "…"
        out.append(row)
    return out


def cell(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}" if v < 100 else f"{v:.0f}"
    return str(v)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report", help="the harness's JSON report")
    p.add_argument("torch", help="benchmarks/torch_pad.py's JSON")
    p.add_argument("--markdown", help="also write the table here as Markdown")
    args = p.parse_args()
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
