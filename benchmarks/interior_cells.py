# The interior pad's two slow cells (issue 84; benches/cpu_pad.rs's `interior` group):
# u8 [1,1024,1024,3] dilated by 1 on H and W, f16 [8,4096,256] dilated by 3 on its last axis.
# numpy's slice assignment into a kept output (`y[...] = x`, the zeros already there: the
# least numpy does) and XLA's `lax.pad` (jitted, its output allocated), medians of 15 after 3
# warm-ups, one thread. Run alternated with the bench, both on one core:
#   XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
#     taskset -c 1 python3 benchmarks/interior_cells.py
#   WGPU_PAD_CPU_THREADS=1 taskset -c 1 cargo bench --bench cpu_pad -- interior/
import time
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

CASES = [
    ("u8_1x1024x1024x3_hw1", np.uint8, (1, 1024, 1024, 3), (0, 1, 1, 0)),
    ("f16_8x4096x256_last3", np.float16, (8, 4096, 256), (0, 0, 3)),
]


def median_ms(f):
    for _ in range(3):
        f()
    ts = []
    for _ in range(15):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return 1e3 * ts[7], 1e3 * ts[0], 1e3 * ts[-1]


print("jax", jax.__version__, jax.devices(), "numpy", np.__version__)
for name, dtype, shape, interior in CASES:
    x = (np.arange(np.prod(shape)) % 251).reshape(shape).astype(dtype)
    out = tuple((n - 1) * (k + 1) + 1 for n, k in zip(shape, interior))
    y = np.zeros(out, dtype)
    where = tuple(slice(None, None, k + 1) for k in interior)

    def assign():
        y[where] = x

    xj = jnp.asarray(x)
    pad = jax.jit(lambda x: lax.pad(x, jnp.zeros((), x.dtype), [(0, 0, k) for k in interior]))
    for label, f in (("numpy_kept", assign), ("xla", lambda: pad(xj).block_until_ready())):
        m, lo, hi = median_ms(f)
        print(f"{name} {label}: median {m:.3f} ms (min {lo:.3f}, max {hi:.3f})")
