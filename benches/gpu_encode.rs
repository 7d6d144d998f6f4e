//! Host cost of recording a small pad with warm caches, beside the engine's own baseline:
//! a bare compute pass with one pipeline and one bind group (target: a warm `encode` at
//! most 2x the bare pass with its bind group made per call; a prepared pad recorded into
//! a pass at most 2x the bare pass), compiling nothing; and device time of a large pad
//! measured around a device sync.
//!
//! ```text
//! cargo bench --bench gpu_encode
//! ```

use std::time::{Duration, Instant};

#[path = "../tests/common/pipeline.rs"]
mod pipeline;

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
    // The engine's baseline: a trivial shader with one bind group of two storage buffers.
    let pipeline = pipeline::compute_pipeline(
        device,
        "@group(0) @binding(0) var<storage, read_write> a: array<u32>;\n\
         @group(0) @binding(1) var<storage, read_write> b: array<u32>;\n\
         @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {\n\
             if (g.x < arrayLength(&b)) { b[g.x] = a[g.x]; }\n\
         }",
    );
    let bind_group = || {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: input.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: output.as_entire_binding() },
            ],
        })
    };
    let made = bind_group();
    c.bench_function("bare_pass", |b| {
        b.iter_batched(
            || device.create_command_encoder(&Default::default()),
            |mut encoder| {
                {
                    let mut pass = encoder.begin_compute_pass(&Default::default());
                    pass.set_pipeline(&pipeline);
                    pass.set_bind_group(0, &made, &[]);
                    pass.dispatch_workgroups(4, 1, 1);
                }
                encoder
            },
            BatchSize::SmallInput,
        )
    });
    c.bench_function("bare_pass_new_bind_group", |b| {
        b.iter_batched(
            || device.create_command_encoder(&Default::default()),
            |mut encoder| {
                {
                    let group = bind_group();
                    let mut pass = encoder.begin_compute_pass(&Default::default());
                    pass.set_pipeline(&pipeline);
                    pass.set_bind_group(0, &group, &[]);
                    pass.dispatch_workgroups(4, 1, 1);
                }
                encoder
            },
            BatchSize::SmallInput,
        )
    });
    let prepared = kernel.prepare(&small, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
    c.bench_function("prepared_record", |b| {
        b.iter_batched(
            || device.create_command_encoder(&Default::default()),
            |mut encoder| {
                {
                    let mut pass = encoder.begin_compute_pass(&Default::default());
                    prepared.record(&mut pass);
                }
                encoder
            },
            BatchSize::SmallInput,
        )
    });
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
