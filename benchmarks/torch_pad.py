"""PyTorch's `F.pad` and device copy on the harness's cases, timed the way the harness times
ours (steady clocks): the side-by-side figures of BENCHMARKS.md's real-GPU table.

    python3 benchmarks/torch_pad.py REPORT.json --json torch.json
    python3 benchmarks/torch_table.py REPORT.json torch.json      # ours, torch, roofline

REPORT.json is a harness report (`gpu_vs_cpu --suite default --json REPORT.json`): its
records are the cases, so both sides pad exactly the same tensors. Per case:
- `torch_pad_ms`: `F.pad` (constant, reflect, replicate for edge, circular for wrap; torch has
  no symmetric), output allocated per call as an eager engine does;
- `torch_copy_ms`: `dst.copy_(src)` of the output's bytes, torch's own roofline.
A record of the harness's `--backward` is the pad's gradient: `torch_pad_ms` is then torch's
backward of `F.pad` alone (`torch.autograd.grad` of the padded output, its graph kept), and
`torch_deterministic` says whether `torch.use_deterministic_algorithms(True)` lets it run
(`refused: ...` where torch knows it is not), `torch_same_bits_twice` whether two runs agreed.
Each is warmed up for --warmup-ms of GPU time (CUDA events), then timed in batches of
--batch-ms of back-to-back calls, sized from a warm batch; the median of --reps batches, per
call, with the 95 % interval of order statistics (as the harness's `stats`). Every case's
torch output is checked once against numpy's pad (where the pads are not crops): a mapping
that padded other axes would be a figure of nothing. A case torch cannot run (a mode for its
type, more than three padded trailing axes, pads past the axis) is recorded with its reason.
`--dry-run` prints each case's torch call and needs no torch; `--self-test` checks the
mapping to `F.pad` on known cases (CI runs it).
"""
import argparse
import json
import math
import sys
import time

MODES = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}
NUMPY_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "wrap"}
DTYPES = ["float32", "float16", "bfloat16", "float64", "uint8", "int8", "int16", "int32", "int64", "bool"]
BATCH_MAX = 4096


def torch_call(shape, pads, mode):
    """How `F.pad` pads this case: (the shape the input is viewed as, the pad tuple), or a
    reason it cannot. torch pads the last k axes, last axis first; its non-constant modes take
    k of 1 to 3 on an input of rank k + 1 or k + 2, so leading axes merge into one (or one is
    added)."""
    rank = len(shape)
    if len(pads) != 2 * rank:
        return None, f"{len(pads)} pads for rank {rank} (begins then ends: {2 * rank})"
    begins, ends = pads[:rank], pads[rank:]
    padded = [d for d in range(rank) if begins[d] or ends[d]]
    if not padded:
        return list(shape), []
    k = rank - padded[0]
    flat = []
    for d in reversed(range(rank - k, rank)):
        flat += [begins[d], ends[d]]
    if mode == "constant":
        return list(shape), flat
    if k > 3:
        return None, f"{MODES[mode]} pads at most 3 trailing axes (this case: {k})"
    lead = shape[: rank - k]
    view = [math.prod(lead)] if lead else [1]
    return view + list(shape[rank - k :]), flat


def self_test():
    """torch_call's mapping on known cases, with no torch: CI runs this."""
    cases = [
        (([2, 3], [0, 0, 0, 0, 5, 5], "constant"), (None, "6 pads for rank 2 (begins then ends: 4)")),
        (([2, 3], [0, 1, 0, 2], "constant"), ([2, 3], [1, 2])),
        (([1, 64, 512, 512], [0, 0, 1, 1, 0, 0, 1, 1], "reflect"), ([64, 512, 512], [1, 1, 1, 1])),
        (([8, 4096, 256], [0, 3, 0, 0, 5, 0], "edge"), ([8, 4096, 256], [0, 0, 3, 5])),
        (([2, 3, 4], [1, 0, 0, 2, 0, 0], "wrap"), ([1, 2, 3, 4], [0, 0, 0, 0, 1, 2])),
        (([2, 3, 4, 5], [1, 0, 0, 0, 1, 0, 0, 0], "reflect"), (None, "reflect pads at most 3 trailing axes (this case: 4)")),
        (([5], [0, 0], "reflect"), ([5], [])),
    ]
    for (shape, pads, mode), want in cases:
        got = torch_call(shape, pads, mode)
        assert got == want, f"{shape} {pads} {mode}: {got}, not {want}"
    print("torch_pad: self-test passed")


def order_interval(samples):
    """Median and 95 % interval from order statistics, as the harness's stats.rs."""
    v = sorted(samples)
    n = len(v)
    median = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    half = 1.96 * math.sqrt(n)
    j = min(max(math.floor((n - half) / 2), 1), n)
    k = min(max(math.ceil(1 + (n + half) / 2), 1), n)
    return median, v[j - 1], v[k - 1]


class Timer:
    """GPU time of n back-to-back calls, per call: CUDA events where the device is CUDA."""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device.startswith("cuda")

    def per_call(self, f, n):
        torch = self.torch
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(n):
                f()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / n
        t = time.perf_counter()
        for _ in range(n):
            f()
        return (time.perf_counter() - t) * 1e3 / n

    def steady(self, f, args):
        """Warm-up, batch size, then --reps batches: (median, low, high, batch)."""
        spent, n = 0.0, 1
        for _ in range(32):
            if spent >= args.warmup_ms:
                break
            spent += self.per_call(f, n) * n
            n = min(n * 2, BATCH_MAX)
        t = self.per_call(f, min(max(n, 1), 16))
        batch = BATCH_MAX if t <= 0 else min(max(math.ceil(args.batch_ms / t), 1), BATCH_MAX)
        samples = [self.per_call(f, batch) for _ in range(args.reps)]
        return (*order_interval(samples), batch)


def backward_call(torch, F, x, flat, mode):
    """torch's backward of F.pad alone: (a call, what was seen of its determinism), or (None,
    why not). The graph is built once and kept, so each call is the backward's kernels only."""
    if not x.dtype.is_floating_point:
        return None, f"{x.dtype}: no gradient"
    x = x.detach().requires_grad_(True)
    y = F.pad(x, flat, mode=mode)
    g = torch.randn(y.shape, generator=torch.Generator().manual_seed(11)).to(y.dtype).to(y.device)
    call = lambda: torch.autograd.grad(y, x, g, retain_graph=True)[0]  # noqa: E731
    bits = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16, torch.bfloat16: torch.int16}
    a, b = call(), call()
    same = bool(torch.equal(a.view(bits[a.dtype]), b.view(bits[b.dtype])))
    torch.use_deterministic_algorithms(True)
    try:
        call()
        deterministic = "ran"
    except RuntimeError as e:
        deterministic = "refused: " + str(e).splitlines()[0][:160]
    finally:
        torch.use_deterministic_algorithms(False)
    return call, {"torch_deterministic": deterministic, "torch_same_bits_twice": same}


def measure(torch, F, np, record, args, timer):
    shape, pads, mode, dtype = record["shape"], record["pads"], record["mode"], record["dtype"]
    out = {k: record[k] for k in ("dtype", "shape", "pads", "mode", "out_bytes")}
    backward = bool(record.get("backward"))
    if backward:
        out["backward"] = True
    if mode not in MODES:
        return {**out, "torch": f"torch has no {mode}"}
    if dtype not in DTYPES:
        return {**out, "torch": f"{dtype}: not in this script's types"}
    view, flat = torch_call(shape, pads, mode)
    if view is None:
        return {**out, "torch": flat}
    n = math.prod(shape)
    gen = torch.Generator().manual_seed(7)
    if dtype == "bool":
        x = torch.randint(0, 2, (n,), generator=gen).bool()
    elif dtype.startswith("float") or dtype == "bfloat16":
        x = torch.randn(n, generator=gen).to(getattr(torch, dtype))
    else:
        x = torch.randint(0, 100, (n,), generator=gen).to(getattr(torch, dtype))
    x = x.reshape(view).to(args.device)
    call = lambda: F.pad(x, flat, mode=MODES[mode])  # noqa: E731
    try:
        y = call()
    except Exception as e:  # torch refuses some types and sizes per mode
        return {**out, "torch": f"{type(e).__name__}: {str(e).splitlines()[0]}"}
    out_shape = [s + b + e for s, b, e in zip(shape, pads[: len(shape)], pads[len(shape) :])]
    if list(y.reshape(-1).shape) != [math.prod(out_shape)]:
        return {**out, "torch": f"torch's output has {y.numel()} elements, not {math.prod(out_shape)}"}
    if min(pads) >= 0 and np is not None:
        host = x.reshape(shape).cpu()
        if dtype == "bfloat16":
            host = host.float()
        ref = np.pad(host.numpy(), list(zip(pads[: len(shape)], pads[len(shape) :])), mode=NUMPY_MODES[mode])
        got = y.reshape(out_shape).cpu()
        if dtype == "bfloat16":
            got = got.float()
        if not np.array_equal(got.numpy(), ref, equal_nan=dtype != "bool" and dtype.startswith(("float", "bfloat"))):
            return {**out, "torch": "torch's output differs from numpy.pad: the mapping is wrong"}
    del y
    if backward:
        call, extra = backward_call(torch, F, x, flat, MODES[mode])
        if call is None:
            return {**out, "torch": extra}
        out.update(extra)
    pad_ms, pad_low, pad_high, pad_batch = timer.steady(call, args)
    src = torch.empty(record["out_bytes"], dtype=torch.uint8, device=args.device)
    dst = torch.empty_like(src)
    copy_ms, copy_low, copy_high, copy_batch = timer.steady(lambda: dst.copy_(src), args)
    return {
        **out,
        "torch": f"F.pad(x{list(view)}, {tuple(flat)}, mode={MODES[mode]!r})",
        "torch_pad_ms": pad_ms,
        "torch_pad_ci_low_ms": pad_low,
        "torch_pad_ci_high_ms": pad_high,
        "torch_pad_batch": pad_batch,
        "torch_copy_ms": copy_ms,
        "torch_copy_ci_low_ms": copy_low,
        "torch_copy_ci_high_ms": copy_high,
        "torch_copy_batch": copy_batch,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report", nargs="?", help="a gpu_vs_cpu JSON report: its records are the cases")
    p.add_argument("--json", help="write the figures here")
    p.add_argument("--device", default="cuda")
    p.add_argument("--batch-ms", type=float, default=20.0)
    p.add_argument("--warmup-ms", type=float, default=100.0)
    p.add_argument("--reps", type=int, default=11)
    p.add_argument("--dry-run", action="store_true", help="print each case's torch call; needs no torch")
    p.add_argument("--self-test", action="store_true", help="check the mapping to F.pad; needs no torch")
    args = p.parse_args()
    if args.self_test:
        return self_test()
    if not args.report:
        p.error("REPORT is needed")
    finite = math.isfinite(args.batch_ms) and math.isfinite(args.warmup_ms)
    if args.reps < 1 or not finite or not args.batch_ms > 0 or not args.warmup_ms >= 0:
        sys.exit("error: --reps takes at least 1, --batch-ms a finite positive number, --warmup-ms a finite 0 or more")
    try:
        with open(args.report) as f:
            records = json.load(f)["records"]
        assert isinstance(records, list) and records
    except (OSError, ValueError, KeyError, TypeError, AssertionError) as e:
        sys.exit(f"error: {args.report}: not a harness report with records ({type(e).__name__}: {e})")
    if args.dry_run:
        for r in records:
            if r["mode"] not in MODES:
                print(f"{r['dtype']} {r['shape']} {r['mode']}: torch has no {r['mode']}")
                continue
            view, flat = torch_call(r["shape"], r["pads"], r["mode"])
            call = flat if view is None else f"F.pad(x{view}, {tuple(flat)}, mode={MODES[r['mode']]!r})"
            print(f"{r['dtype']} {r['shape']} {r['mode']}: {'the backward of ' if r.get('backward') else ''}{call}")
        return
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        sys.exit(f"error: no torch here ({e}); --dry-run needs none")

    try:
        import numpy as np
    except ImportError:
        np = None
        print("warning: no numpy: torch's outputs are not checked", file=sys.stderr)
    timer = Timer(torch, args.device)
    name = torch.cuda.get_device_name() if args.device.startswith("cuda") else args.device
    results = []
    for i, r in enumerate(records):
        result = measure(torch, F, np, r, args, timer)
        results.append(result)
        what = "F.pad's backward" if result.get("backward") else "F.pad"
        figure = (
            f"{what} {result['torch_pad_ms'] * 1e3:.1f} us, copy {result['torch_copy_ms'] * 1e3:.1f} us"
            if "torch_pad_ms" in result
            else result["torch"]
        )
        if "torch_deterministic" in result:
            figure += f"; deterministic: {result['torch_deterministic']}, same bits twice: {result['torch_same_bits_twice']}"
        print(f"[{i + 1}/{len(records)}] {r['dtype']} {r['shape']} {r['mode']}: {figure}", flush=True)
    report = {"torch": torch.__version__, "device": name, "batch_ms": args.batch_ms, "warmup_ms": args.warmup_ms, "records": results}
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(report, f, indent=1)
        import os

        os.replace(tmp, args.json)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
