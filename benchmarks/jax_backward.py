# XLA's gradient of a pad on the CPU: jax.jit(jax.vjp(jnp.pad)) on the eleven cases of
# benches/cpu_pad.rs's `backward` group (BENCHMARKS.md, "The gradient on the CPU"), on one
# thread, medians of 15 after 3 warm-ups, the output allocated each call (as pad_backward's).
# Run alternated with the bench, both on one core:
#   XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
#     taskset -c 1 python3 benchmarks/jax_backward.py
#   WGPU_PAD_CPU_THREADS=1 taskset -c 1 cargo bench --bench cpu_pad -- backward/
import time
import jax
import jax.numpy as jnp
import numpy as np

CASES = [
    ("f32_1x64x256x256_hw2", np.float32, (1, 64, 256, 256), ((0, 0), (0, 0), (2, 2), (2, 2)), mode)
    for mode in ("constant", "reflect", "edge", "wrap", "symmetric")
] + [
    ("f32_1x3x224x224_hw100", np.float32, (1, 3, 224, 224), ((0, 0), (0, 0), (100, 100), (100, 100)), mode)
    for mode in ("reflect", "edge")
] + [
    ("f16_8x4096x256_last8", np.float16, (8, 4096, 256), ((0, 0), (0, 0), (0, 8)), "reflect"),
    ("f32_16000_512", np.float32, (16000,), ((512, 512),), "reflect"),
    ("f16_1x64x256x256_hw2", np.float16, (1, 64, 256, 256), ((0, 0), (0, 0), (2, 2), (2, 2)), "reflect"),
    ("bf16_1x64x256x256_hw2", jnp.bfloat16, (1, 64, 256, 256), ((0, 0), (0, 0), (2, 2), (2, 2)), "edge"),
]

print("jax", jax.__version__, jax.devices())
for name, dtype, shape, pads, mode in CASES:
    x = jnp.zeros(shape, dtype)
    out = tuple(n + a + b for n, (a, b) in zip(shape, pads))
    # Small integers, as the bench's: no sum overflows, nothing subnormal.
    g = jnp.asarray((np.arange(np.prod(out)) % 7 - 3).reshape(out).astype(dtype))
    grad = jax.jit(lambda x, g, pads=pads, mode=mode: jax.vjp(lambda x: jnp.pad(x, pads, mode=mode), x)[1](g)[0])
    for _ in range(3):
        grad(x, g).block_until_ready()
    ts = []
    for _ in range(15):
        t = time.perf_counter()
        grad(x, g).block_until_ready()
        ts.append(time.perf_counter() - t)
    ts.sort()
    print(f"{name} {mode}: median {1e3 * ts[7]:.3f} ms (min {1e3 * ts[0]:.3f}, max {1e3 * ts[-1]:.3f})")
