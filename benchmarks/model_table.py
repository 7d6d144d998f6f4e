"""The memory model per case and mode, before issue 43's kernels and now, as Markdown: the
table issue 43 asks for (store and load efficiency at 32 and 64 lanes, traffic over ideal at
32), written from benchmarks/model.json (the harness's `--model-only --suite all --json`
reports, kept there under a key per kernel state).

    python3 benchmarks/model_table.py > benchmarks/model-by-mode.md

`--before KEY` and `--after KEY` pick two states (default: `before`, b4fa3d5's kernels, and
the newest key).
"""
import argparse
import json
import pathlib

FIELDS = [
    ("store 32", "model_store_eff_32", "{:.2f}"),
    ("load 32", "model_load_eff_32", "{:.2f}"),
    ("store 64", "model_store_eff_64", "{:.2f}"),
    ("load 64", "model_load_eff_64", "{:.2f}"),
    ("traffic 32", "model_traffic_over_ideal_32", "{:.3f}"),
]
# Issue 43's targets: (field, bound, whether the figure must be at least the bound).
TARGETS = {
    "model_store_eff_32": (0.90, True),
    "model_load_eff_32": (0.80, True),
    "model_store_eff_64": (0.85, True),
    "model_load_eff_64": (0.75, True),
    "model_traffic_over_ideal_32": (1.10, False),
}


def main():
    here = pathlib.Path(__file__).parent
    data = json.loads((here / "model.json").read_text())
    keys = [k for k in data if isinstance(data[k], list)]
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="before", choices=keys)
    parser.add_argument("--after", default=keys[-1], choices=keys)
    args = parser.parse_args()
    before = {r["case"] + str(r["pads"]): r for r in data[args.before]}
    print(f"# The memory model per case and mode: `{args.before}` → `{args.after}`\n")
    print("Written by `python3 benchmarks/model_table.py` from benchmarks/model.json; what the")
    print("keys are: that file's `note`. A figure outside issue 43's targets (store ≥ 0.90, load ≥")
    print("0.80 at 32 lanes; ≥ 0.85 / 0.75 at 64; traffic ≤ 1.10) is in bold; BENCHMARKS.md says")
    print("why each remaining one is.\n")
    print("| case | pads | " + " | ".join(name for name, _, _ in FIELDS) + " |")
    print("|---|---|" + "---|" * len(FIELDS))
    for r in data[args.after]:
        old = before[r["case"] + str(r["pads"])]
        cells = []
        for _, field, fmt in FIELDS:
            bound, at_least = TARGETS[field]
            new = fmt.format(r[field])
            met = r[field] >= bound - 1e-9 if at_least else r[field] <= bound + 1e-9
            cells.append(f"{fmt.format(old[field])} → {new if met else '**' + new + '**'}")
        pads = ",".join(map(str, r["pads"]))
        print(f"| {r['case']} | {pads} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
