//! Host cost of recording a small pad with warm caches (target: at most 25 µs, compiling
//! nothing), and device time of a large pad measured around a device sync.
//!
//! ```text
//! cargo bench --bench gpu_encode
//! ```

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use wgpu_pad::gpu::{BufferRange, GpuContext};
use wgpu_pad::{DataType, Mode, PadPlan, PadRequest};

fn bench(c: &mut Criterion) {
    let ctx = match GpuContext::new_blocking() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("no GPU, skipping the GPU benches: {e}");
            return;
        }
    };
    let device = ctx.device();
    let kernel = ctx.kernel();
    let buffer = |size| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };

    // A small pad: the per-call overhead an engine pays.
    let small = PadPlan::new(
        DataType::Float32,
        &[1, 3, 8, 8],
        &PadRequest::new(vec![0, 0, 1, 1, 0, 0, 1, 1]).mode(Mode::Reflect),
    )
    .unwrap();
    let (input, output) = (buffer(4096), buffer(4096));
    kernel.prepare(&small, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
    let compiled = kernel.compile_count();
    c.bench_function("encode_small_warm", |b| {
        b.iter_batched(
            || device.create_command_encoder(&Default::default()),
            |mut encoder| {
                kernel.encode(&mut encoder, &small, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
                encoder
            },
            BatchSize::SmallInput,
        )
    });
    assert_eq!(kernel.compile_count(), compiled, "a warm encode compiled a shader");

    c.bench_function("plan_small", |b| {
        let req = PadRequest::new(vec![0, 0, 1, 1, 0, 0, 1, 1]).mode(Mode::Reflect);
        b.iter(|| PadPlan::new(DataType::Float32, &[1, 3, 8, 8], &req).unwrap())
    });

    // A large pad, timed around a device sync (submit, then wait).
    let large = PadPlan::new(
        DataType::Float32,
        &[1, 64, 512, 512],
        &PadRequest::new(vec![0, 0, 1, 1, 0, 0, 1, 1]).mode(Mode::Edge),
    )
    .unwrap();
    let (in_bytes, out_bytes) = large.byte_sizes().unwrap();
    let (input, output) = (buffer(in_bytes), buffer(out_bytes));
    let mut group = c.benchmark_group("gpu_pad_f32_1x64x512x512_edge");
    group.throughput(Throughput::Bytes(out_bytes));
    group.sample_size(10);
    group.bench_function("submit_and_wait", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                let mut encoder = device.create_command_encoder(&Default::default());
                kernel.encode(&mut encoder, &large, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
                ctx.queue().submit([encoder.finish()]);
            }
            device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
            start.elapsed().max(Duration::from_nanos(1))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
