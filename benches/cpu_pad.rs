//! CPU path against a memcpy of the output's bytes (the CPU's limit), for the harness's
//! large f32, u8 and f16 tensors in every mode: into a preallocated output (`pad_into`) and
//! allocating it (`pad`, as most callers do). Runs back to back, as `benchmarks/ort_pad.py`
//! times ONNX Runtime. Throughput is the output's bytes.
//!
//! ```text
//! cargo bench --bench cpu_pad
//! ```

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest};

struct Case {
    name: &'static str,
    dtype: DataType,
    shape: &'static [usize],
    pads: &'static [i64],
}

const CASES: [Case; 3] = [
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
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
