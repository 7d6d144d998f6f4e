//! CPU path against a memcpy of the output's bytes (the CPU's limit), for large f32 and u8
//! tensors in every mode. Throughput is the output's bytes.
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

const CASES: [Case; 2] = [
    Case {
        name: "f32_1x64x512x512",
        dtype: DataType::Float32,
        shape: &[1, 64, 512, 512],
        pads: &[0, 0, 1, 1, 0, 0, 1, 1],
    },
    Case {
        name: "u8_1x2048x2048x4",
        dtype: DataType::Uint8,
        shape: &[1, 2048, 2048, 4],
        pads: &[0, 2, 2, 0, 0, 2, 2, 0],
    },
];

fn bench(c: &mut Criterion) {
    for case in &CASES {
        let mut group = c.benchmark_group(case.name);
        group.sample_size(20);
        group.measurement_time(std::time::Duration::from_secs(4));
        let width = case.dtype.width().bytes().unwrap();
        let input: Vec<u8> = (0..case.shape.iter().product::<usize>() * width).map(|i| i as u8).collect();
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
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
