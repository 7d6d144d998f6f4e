//! CPU path against a memcpy of the output's bytes (the CPU's limit), for the harness's
//! default suite and a CNN's last feature maps (f32 [32,256,7,7] padded by 1: many rows of
//! 28 bytes) in every mode: into a preallocated output (`pad_into`),
//! allocating it (`pad`, as most callers do: fresh pages every call), and from an
//! `OutputArena` each output is given back to (`pad_in_arena`: memory reused). Runs back to back, as `benchmarks/ort_pad.py`
//! times ONNX Runtime. Throughput is the output's bytes.
//!
//! `unlucky_distance` pads an input that sits at an offset inside a larger buffer (as an
//! engine's pooled tensors do), once where its block copies land 8 bytes past their source
//! modulo 4 KiB, a distance glibc's `rep movsb` copies are slow at on AMD Zen, and once
//! where they do not.
//!
//! `backward` times the pad's gradient (`pad_backward`, its output allocated as XLA's is;
//! `pad_backward_in`, its memory given back to an arena every step, as a training loop can)
//! beside the forward `pad_into` of the same case, on the cases
//! `benchmarks/jax_backward.py` times XLA's vjp of `jnp.pad` on.
//!
//! `interior` times the interior pad's cells `benchmarks/interior_cells.py` times numpy and
//! XLA on.
//!
//! ```text
//! cargo bench --bench cpu_pad
//! WGPU_PAD_CPU_THREADS=1 cargo bench --bench cpu_pad -- backward/   # one thread, as the script
//! ```

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use wgpu_pad::{cpu, DataType, Mode, OutputArena, PadPlan, PadRequest};

mod backward;
use backward::{backward_case, BACKWARD_CASES};

struct Case {
    name: &'static str,
    dtype: DataType,
    shape: &'static [usize],
    pads: &'static [i64],
}

const CASES: [Case; 6] = [
    Case {
        name: "f32_1x64x512x512",
        dtype: DataType::Float32,
        shape: &[1, 64, 512, 512],
        pads: &[0, 0, 1, 1, 0, 0, 1, 1],
    },
    Case {
        name: "u8_1x1024x1024x3",
        dtype: DataType::Uint8,
        shape: &[1, 1024, 1024, 3],
        pads: &[0, 2, 2, 0, 0, 2, 2, 0],
    },
    Case { name: "f16_8x4096x256", dtype: DataType::Float16, shape: &[8, 4096, 256], pads: &[0, 3, 0, 0, 5, 0] },
    Case { name: "f32_32x256x7x7", dtype: DataType::Float32, shape: &[32, 256, 7, 7], pads: &[0, 0, 1, 1, 0, 0, 1, 1] },
    // The rest of the harness's default suite (ONNX Runtime's side: benchmarks/ort_pad.py).
    Case { name: "i64_2x3x8x8", dtype: DataType::Int64, shape: &[2, 3, 8, 8], pads: &[0, 0, 1, 1, 0, 0, 1, 1] },
    Case {
        name: "f32_1x3x224x224",
        dtype: DataType::Float32,
        shape: &[1, 3, 224, 224],
        pads: &[0, 0, 100, 100, 0, 0, 100, 100],
    },
];

fn bench(c: &mut Criterion) {
    for case in &CASES {
        let mut group = c.benchmark_group(case.name);
        group.sample_size(20);
        group.measurement_time(std::time::Duration::from_secs(4));
        let width = case.dtype.width().bytes().unwrap();
        let input: Vec<u8> = (0..case.shape.iter().product::<usize>() * width).map(|i| i as u8).collect();
        let tensor = wgpu_pad::Tensor::from_bytes(case.dtype, case.shape.to_vec(), input.clone()).unwrap();
        let plan = PadPlan::new(case.dtype, case.shape, &PadRequest::new(case.pads.to_vec())).unwrap();
        let out_bytes = plan.byte_sizes().unwrap().1 as usize;
        group.throughput(Throughput::Bytes(out_bytes as u64));
        let src = vec![1u8; out_bytes];
        let mut dst = vec![0u8; out_bytes];
        group.bench_function("memcpy", |b| b.iter(|| dst.copy_from_slice(black_box(&src))));
        for mode in Mode::ALL {
            let plan = PadPlan::new(case.dtype, case.shape, &PadRequest::new(case.pads.to_vec()).mode(mode)).unwrap();
            group.bench_with_input(BenchmarkId::new("pad_into", mode), &plan, |b, plan| {
                b.iter(|| cpu::pad_into(plan, black_box(&input), &mut dst).unwrap())
            });
            group.bench_with_input(BenchmarkId::new("pad", mode), &plan, |b, plan| {
                b.iter(|| drop(black_box(cpu::pad(plan, &tensor).unwrap())))
            });
            // Each output given back to an arena the caller owns: the next reuses its memory.
            let arena = OutputArena::default();
            group.bench_with_input(BenchmarkId::new("pad_in_arena", mode), &plan, |b, plan| {
                b.iter(|| arena.recycle(black_box(cpu::pad_in(plan, &tensor, &arena).unwrap())))
            });
        }
        group.finish();
    }
}

/// f32 [48,32,32,16] padded by 1 on axis 1: 48 blocks of 64 KiB, each copied to 4 KiB further
/// from its source than the one before, so all at one distance modulo 4 KiB, set by where the
/// input starts in its buffer: 8 bytes (`unlucky`) or 2 KiB (`lucky`).
fn bench_unlucky_distance(c: &mut Criterion) {
    let shape = [48usize, 32, 32, 16];
    let plan = PadPlan::new(DataType::Float32, &shape, &PadRequest::new(vec![0, 1, 0, 0, 0, 1, 0, 0])).unwrap();
    let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
    let (in_bytes, out_bytes) = (in_bytes as usize, out_bytes as usize);
    let buffer: Vec<u8> = (0..in_bytes + 4096).map(|i| i as u8).collect();
    let mut out = vec![0u8; out_bytes];
    let mut group = c.benchmark_group("unlucky_distance");
    group.sample_size(20);
    group.measurement_time(std::time::Duration::from_secs(4));
    group.throughput(Throughput::Bytes(out_bytes as u64));
    let src = vec![1u8; out_bytes];
    group.bench_function("memcpy", |b| b.iter(|| out.copy_from_slice(black_box(&src))));
    for (name, distance) in [("lucky", 2048), ("unlucky", 8)] {
        // Block i goes from in i * 64 KiB to out (i * 34 + 1) * 2 KiB.
        let at = (out.as_ptr() as usize + 2048 - distance).wrapping_sub(buffer.as_ptr() as usize) % 4096;
        let input = &buffer[at..at + in_bytes];
        group.bench_function(BenchmarkId::new("pad_into", name), |b| {
            b.iter(|| cpu::pad_into(&plan, black_box(input), &mut out).unwrap())
        });
    }
    group.finish();
}

/// f32 [16,64,4,4] padded by 12 on H and W (out [16,64,28,28], 3.1 MiB): pads three times
/// the axis long, so after the first period (4 blocks for wrap, 6 for reflect, 8 for
/// symmetric) every mode repeats whole periods.
fn bench_many_periods(c: &mut Criterion) {
    let shape = [16usize, 64, 4, 4];
    let pads = vec![0, 0, 12, 12, 0, 0, 12, 12];
    let input: Vec<u8> = (0..shape.iter().product::<usize>() * 4).map(|i| i as u8).collect();
    let mut group = c.benchmark_group("many_periods");
    group.sample_size(20);
    group.measurement_time(std::time::Duration::from_secs(4));
    let out_bytes = 16 * 64 * 28 * 28 * 4;
    group.throughput(Throughput::Bytes(out_bytes as u64));
    let (src, mut out) = (vec![1u8; out_bytes], vec![0u8; out_bytes]);
    group.bench_function("memcpy", |b| b.iter(|| out.copy_from_slice(black_box(&src))));
    for mode in [Mode::Wrap, Mode::Reflect, Mode::Symmetric] {
        let plan = PadPlan::new(DataType::Float32, &shape, &PadRequest::new(pads.clone()).mode(mode)).unwrap();
        assert_eq!(plan.byte_sizes().unwrap().1 as usize, out_bytes);
        group.bench_with_input(BenchmarkId::new("pad_into", mode), &plan, |b, plan| {
            b.iter(|| cpu::pad_into(plan, black_box(&input), &mut out).unwrap())
        });
    }
    group.finish();
}

/// The gradient's cases (issue 84's table; benchmarks/jax_backward.py keeps the same list):
fn bench_backward(c: &mut Criterion) {
    for case in &BACKWARD_CASES {
        let (name, mode) = (case.0, case.4);
        let mut group = c.benchmark_group(format!("backward/{name}/{mode}"));
        group.sample_size(15);
        group.measurement_time(std::time::Duration::from_secs(2));
        let (plan, grad, input) = backward_case(case);
        let (_, out_bytes) = plan.byte_sizes().unwrap();
        let mut out = vec![0u8; out_bytes as usize];
        group.bench_function("pad_backward", |b| b.iter(|| drop(black_box(cpu::pad_backward(&plan, &grad).unwrap()))));
        // A training loop's way: the gradient's memory given back to an arena every step.
        let arena = wgpu_pad::OutputArena::new(1 << 30);
        group.bench_function("pad_backward_in", |b| {
            b.iter(|| arena.recycle(black_box(cpu::pad_backward_in(&plan, &grad, &arena).unwrap())))
        });
        group.bench_function("pad_into", |b| b.iter(|| cpu::pad_into(&plan, black_box(&input), &mut out).unwrap()));
        group.finish();
    }
}

/// The interior pad's two slow cells (issue 84): u8 RGB dilated by 1 on H and W (3-byte
/// pieces), f16 dilated by 3 on its last axis (2-byte pieces 8 bytes apart), into a kept output,
/// as `benchmarks/interior_cells.py` times numpy's slice assignment and XLA's `lax.pad`.
fn bench_interior(c: &mut Criterion) {
    let cases: [(&str, DataType, &[usize], Vec<i64>); 2] = [
        ("u8_1x1024x1024x3_hw1", DataType::Uint8, &[1, 1024, 1024, 3], vec![0, 1, 1, 0]),
        ("f16_8x4096x256_last3", DataType::Float16, &[8, 4096, 256], vec![0, 0, 3]),
    ];
    for (name, dtype, shape, interior) in cases {
        let mut group = c.benchmark_group(format!("interior/{name}"));
        group.sample_size(15);
        group.measurement_time(std::time::Duration::from_secs(2));
        let request = PadRequest::new(vec![0; 2 * shape.len()]).interior(interior);
        let plan = PadPlan::new(dtype, shape, &request).unwrap();
        let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
        let input: Vec<u8> = (0..in_bytes as usize).map(|i| (i % 251) as u8).collect();
        let mut out = vec![0u8; out_bytes as usize];
        group.throughput(Throughput::Bytes(out_bytes));
        group.bench_function("pad_into", |b| b.iter(|| cpu::pad_into(&plan, black_box(&input), &mut out).unwrap()));
        group.finish();
    }
}

criterion_group!(benches, bench, bench_unlucky_distance, bench_many_periods, bench_backward, bench_interior);
criterion_main!(benches);
