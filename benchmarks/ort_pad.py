"""ONNX Runtime's CPU Pad on the harness's large cases, against a memcpy of the output's
bytes in the same process: the figure our CPU path is compared with in BENCHMARKS.md.

    python3 -m pip install onnxruntime onnx numpy
    python3 benchmarks/ort_pad.py

The cases are the harness's default suite (examples/gpu_vs_cpu/cases.rs SUITE), named as
benches/cpu_pad.rs names them. Each is
timed two ways: `ort bound` pads into an output bound once (io_binding), as our `cpu ms`
does into a preallocated output; `ort new` is a plain `sess.run`, whose output is allocated
per run, as a user's is and as our `fresh ms` (cpu::pad) does. Median of 9 runs after a
warm-up.

`--case`, `--mode` and `--threads` pick a part and `--reps` sets the runs per median, so
that short runs can alternate with our own (benchmarks/cpu_vs_ort.sh does):
"""
import argparse
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

CASES = [
    ("f32_1x64x512x512", np.float32, TensorProto.FLOAT, [1, 64, 512, 512], [0, 0, 1, 1, 0, 0, 1, 1]),
    ("u8_1x1024x1024x3", np.uint8, TensorProto.UINT8, [1, 1024, 1024, 3], [0, 2, 2, 0, 0, 2, 2, 0]),
    ("f16_8x4096x256", np.float16, TensorProto.FLOAT16, [8, 4096, 256], [0, 3, 0, 0, 5, 0]),
    ("i64_2x3x8x8", np.int64, TensorProto.INT64, [2, 3, 8, 8], [0, 0, 1, 1, 0, 0, 1, 1]),
    ("f32_1x3x224x224", np.float32, TensorProto.FLOAT, [1, 3, 224, 224], [0, 0, 100, 100, 0, 0, 100, 100]),
]
MODES = ["constant", "reflect", "edge", "wrap"]  # ONNX has no symmetric


def median_ms(f, reps):
    f()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[len(times) // 2]


def model(elem, shape, mode):
    x = helper.make_tensor_value_info("x", elem, shape)
    y = helper.make_tensor_value_info("y", elem, None)
    pads = helper.make_tensor("pads", TensorProto.INT64, [2 * len(shape)], [0] * 2 * len(shape))
    node = helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)
    graph = helper.make_graph([node], "pad", [x], [y], initializer=[pads])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--case", choices=[c[0] for c in CASES], help="only this case")
parser.add_argument("--mode", choices=MODES, help="only this mode")
parser.add_argument("--threads", type=int, choices=[1, 2], help="only this many threads")
parser.add_argument("--reps", type=int, default=9, help="runs timed per figure (median taken)")
args = parser.parse_args()

print(f"onnxruntime {ort.__version__}, median of {args.reps}")
print(f"{'case':<34} {'threads':>7} {'ort bound':>9} {'ort new':>8} {'memcpy ms':>9} {'bound/mc':>8}")
for name, dtype, elem, shape, pads in CASES:
    if args.case not in (None, name):
        continue
    x = (np.arange(np.prod(shape)) % 251).astype(dtype).reshape(shape)
    out_shape = [n + pads[i] + pads[i + len(shape)] for i, n in enumerate(shape)]
    src = np.ones(out_shape, dtype)
    dst = np.empty_like(src)
    memcpy = median_ms(lambda: np.copyto(dst, src), args.reps)
    for mode in MODES:
        if args.mode not in (None, mode):
            continue
        m = model(elem, shape, mode)
        m.graph.initializer[0].CopyFrom(helper.make_tensor("pads", TensorProto.INT64, [len(pads)], pads))
        for threads in (1, 2):
            if args.threads not in (None, threads):
                continue
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
            out = np.empty(out_shape, dtype)
            io = sess.io_binding()
            io.bind_cpu_input("x", x)
            io.bind_output("y", "cpu", 0, dtype, out_shape, out.ctypes.data)
            ms = median_ms(lambda: sess.run_with_iobinding(io), args.reps)
            new_ms = median_ms(lambda: sess.run(None, {"x": x}), args.reps)
            case = f"{name} {shape} {mode}"
            print(f"{case:<34} {threads:>7} {ms:>9.4f} {new_ms:>8.4f} {memcpy:>9.4f} {ms / memcpy:>8.2f}")
