//! The GPU path as an engine embeds it: caller's device, buffers at offsets, several pads in
//! one submission, misuse refused with errors, threads, large dispatches.

mod common;

use common::{plan, read, storage};

use wgpu_pad::gpu::{BufferRange, GpuContext, PadKernel};
use wgpu_pad::{cpu, DataType, Mode, PadError, PadPlan, PadRequest, Side, Tensor};

fn ctx() -> Option<&'static GpuContext> {
    common::gpu()
}

fn pattern(dtype: DataType, shape: &[usize], seed: u8) -> Tensor {
    let n: usize = shape.iter().product::<usize>() * dtype.width().bytes().unwrap();
    let bytes = (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect();
    Tensor::from_bytes(dtype, shape.to_vec(), bytes).unwrap()
}

/// Engines share one kernel and one context across threads.
#[test]
fn kernel_and_context_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<PadKernel>();
    send_sync::<GpuContext>();
    send_sync::<PadPlan>();
}

#[test]
fn outputs_past_a_single_dispatch_are_bit_exact() {
    let Some(ctx) = ctx() else { return };
    // 1-D f32: 17 million elements, more than 65535 workgroups of 64 in x.
    let p = plan(DataType::Float32, &[17_000_000], &[3, 5], Mode::Reflect);
    let x = pattern(DataType::Float32, &[17_000_000], 1);
    let y = ctx.pad_blocking(&p, &x).unwrap().tensor;
    assert_eq!(y.len(), 17_000_008);
    assert!(y == cpu::pad(&p, &x).unwrap(), "1-D f32 differs from the CPU path");
    // u8 words: 17 million bytes, odd length (a partial last word).
    let p = plan(DataType::Uint8, &[4_250_001, 4], &[0, 1, 1, 2], Mode::Wrap);
    let x = pattern(DataType::Uint8, &[4_250_001, 4], 7);
    let y = ctx.pad_blocking(&p, &x).unwrap().tensor;
    assert!(y.len() > 16_800_000);
    assert!(y == cpu::pad(&p, &x).unwrap(), "u8 differs from the CPU path");
    // Rows longer than the x dimension holds (the flat grid).
    let p = plan(DataType::Float32, &[2, 4_500_000], &[1, 1, 0, 3], Mode::Wrap);
    let x = pattern(DataType::Float32, &[2, 4_500_000], 5);
    assert!(ctx.pad_blocking(&p, &x).unwrap().tensor == cpu::pad(&p, &x).unwrap());
    // More rows than one grid dimension holds (the linear-rows layout).
    let p = plan(DataType::Int64, &[70_000, 3], &[1, 2, 1, 0], Mode::Symmetric);
    let x = pattern(DataType::Int64, &[70_000, 3], 3);
    assert!(ctx.pad_blocking(&p, &x).unwrap().tensor == cpu::pad(&p, &x).unwrap());
}

#[test]
fn several_encodes_in_one_submission_at_offsets_in_one_pool() {
    let Some(ctx) = ctx() else { return };
    let kernel = PadKernel::new(ctx.device()).unwrap();
    let align = ctx.device().limits().min_storage_buffer_offset_alignment as u64;
    let jobs = [
        (plan(DataType::Float32, &[3, 5], &[1, 2, 0, 1], Mode::Reflect), 1u8),
        (plan(DataType::Uint8, &[7, 3], &[0, 1, 2, 0], Mode::Edge), 2),
        (plan(DataType::Float16, &[5], &[-1, 4], Mode::Wrap), 3),
        (plan(DataType::Complex128, &[2, 2], &[1, 0, 0, 1], Mode::Constant), 4),
        (plan(DataType::Uint8, &[3], &[2, 0], Mode::Symmetric), 5),
        // Rows ending mid-word, and outputs that do (55 and 54 bytes).
        (plan(DataType::Uint8, &[5, 9], &[0, 1, 0, 1], Mode::Reflect), 6),
        (plan(DataType::Float16, &[3, 7], &[0, 1, 0, 1], Mode::Symmetric), 7),
    ];
    // One pool holds every input and output, each at an aligned offset, the rest 0xAA.
    let mut layout = Vec::new();
    let mut next = align; // nothing at offset 0
    for (p, _) in &jobs {
        let (i, o) = p.byte_sizes().unwrap();
        let in_at = next;
        let out_at = (in_at + i).next_multiple_of(align);
        next = (out_at + o + 4).next_multiple_of(align);
        layout.push((in_at, out_at));
    }
    let mut pool = vec![0xAAu8; next as usize];
    let inputs: Vec<Tensor> = jobs.iter().map(|(p, s)| pattern(p.dtype(), p.in_shape(), *s)).collect();
    for ((_, x), (in_at, _)) in jobs.iter().zip(&inputs).zip(&layout) {
        let b = x.bytes().unwrap();
        pool[*in_at as usize..*in_at as usize + b.len()].copy_from_slice(b);
    }
    let buffer = storage(ctx, &pool);
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    for ((p, _), (in_at, out_at)) in jobs.iter().zip(&layout) {
        kernel.encode(&mut encoder, p, BufferRange::at(&buffer, *in_at), BufferRange::at(&buffer, *out_at)).unwrap();
    }
    ctx.queue().submit([encoder.finish()]);
    common::assert_no_gpu_errors();
    let after = read(ctx, &buffer, 0, next);
    let mut expected = pool.clone();
    for (((p, _), x), (_, out_at)) in jobs.iter().zip(&inputs).zip(&layout) {
        let y = cpu::pad(p, x).unwrap();
        let b = y.bytes().unwrap();
        expected[*out_at as usize..*out_at as usize + b.len()].copy_from_slice(b);
    }
    // Every output is right, every input and every byte between them untouched.
    assert_eq!(after, expected);
}

#[test]
fn misuse_is_an_error_not_a_panic() {
    let Some(ctx) = ctx() else { return };
    let kernel = PadKernel::new(ctx.device()).unwrap();
    let device = ctx.device();
    let align = device.limits().min_storage_buffer_offset_alignment as u64;
    let p = plan(DataType::Float32, &[4], &[1, 1], Mode::Edge); // 16 bytes in, 24 out
                                                                // Distinct input values, so that a pad that ran is told from one that did not.
    let mut bytes = vec![0u8; 4096];
    bytes[..16].copy_from_slice(bytemuck::cast_slice(&[1f32, 2., 3., 4.]));
    let good = storage(ctx, &bytes);
    let uniform_only = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256,
        usage: wgpu::BufferUsages::UNIFORM,
        mapped_at_creation: false,
    });
    let small = storage(ctx, &[0u8; 20]);
    let mut enc = device.create_command_encoder(&Default::default());
    let mut check = |input: BufferRange, output: BufferRange, p: &PadPlan, want: &str| {
        let e = kernel.encode(&mut enc, p, input, output).unwrap_err();
        let ok = match want {
            "usage" => matches!(e, PadError::BufferUsage { usage: "STORAGE", .. }),
            "align" => matches!(e, PadError::MisalignedOffset { offset: 2, alignment: 4, .. }),
            "small" => matches!(e, PadError::BufferTooSmall { which: Side::Output, .. }),
            "overlap" => matches!(e, PadError::Overlap { .. }),
            "unsupported" => matches!(e, PadError::Unsupported { .. }),
            _ => false,
        };
        assert!(ok, "expected {want}, got {e:?}");
        assert!(!e.to_string().is_empty());
    };
    check(BufferRange::whole(&uniform_only), BufferRange::whole(&good), &p, "usage");
    check(BufferRange::at(&good, 2), BufferRange::at(&good, align), &p, "align");
    check(BufferRange::whole(&good), BufferRange::whole(&small), &p, "small");
    check(BufferRange::whole(&good), BufferRange { size: Some(16), ..BufferRange::at(&good, align) }, &p, "small");
    check(BufferRange::whole(&good), BufferRange::at(&good, 0), &p, "overlap");
    let strings = PadPlan::new(DataType::String, &[2], &PadRequest::new(vec![1, 1])).unwrap();
    check(BufferRange::whole(&good), BufferRange::at(&good, align), &strings, "unsupported");
    let int4 = PadPlan::new(DataType::Int4, &[2], &PadRequest::new(vec![1, 1])).unwrap();
    check(BufferRange::whole(&good), BufferRange::at(&good, align), &int4, "unsupported");
    // After all that, the same encoder still records a good pad, and it runs.
    let input = BufferRange { size: Some(16), ..BufferRange::whole(&good) };
    kernel.encode(&mut enc, &p, input, BufferRange::at(&good, align)).unwrap();
    ctx.queue().submit([enc.finish()]);
    common::assert_no_gpu_errors();
    let want: &[u8] = bytemuck::cast_slice(&[1f32, 1., 2., 3., 4., 4.]);
    assert_eq!(read(ctx, &good, align, 24), want);
}

/// A storage buffer of `bytes` on `device` (wgpu zeroes it), left mapped if asked.
fn storage_of(device: &wgpu::Device, bytes: u64, mapped_at_creation: bool) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation,
    })
}

/// The first `len` bytes of `buffer`, read back on a device of the test's own.
fn read_with(device: &wgpu::Device, queue: &wgpu::Queue, buffer: &wgpu::Buffer, len: u64) -> Vec<u8> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: len,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buffer, 0, &staging, 0, len);
    queue.submit([enc.finish()]);
    staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let bytes = staging.slice(..).get_mapped_range().unwrap().to_vec();
    bytes
}

/// Round three: a destroyed buffer is a typed error from `prepare` and `encode`, never a
/// panic, on a device whose uncaptured errors would panic (wgpu's default, an engine's
/// device) as on the shared test context's.
#[test]
fn destroyed_buffers_are_errors_not_panics() {
    let Some(ctx) = ctx() else { return };
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).unwrap();
    let (engine_device, engine_queue) = pollster::block_on(adapter.request_device(&Default::default())).unwrap();
    let p = plan(DataType::Float32, &[4], &[1, 1], Mode::Edge);
    for (name, device) in [("a default device", &engine_device), ("the shared context's", ctx.device())] {
        let kernel = PadKernel::new(device).unwrap();
        let (input, output) = (storage_of(device, 16, false), storage_of(device, 24, false));
        input.destroy();
        let e = kernel.prepare(&p, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap_err();
        assert!(matches!(&e, PadError::Gpu { reason } if reason.contains("destroyed")), "{name}: {e:?}");
        let mut enc = device.create_command_encoder(&Default::default());
        let e = kernel.encode(&mut enc, &p, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap_err();
        assert!(matches!(&e, PadError::Gpu { .. }), "{name}: {e:?}");
        assert!(pollster::block_on(kernel.pop_errors()).is_ok(), "{name}: reported twice");
    }
    // A buffer still mapped (mapped_at_creation): refused before anything is recorded, where
    // the engine's submit would otherwise fail; once unmapped, the pad runs.
    // Round four: the output and the input, with the engine holding a view of the buffer's
    // first 16 bytes (the probe tries other words too), and of all of it; once unmapped, the
    // pad runs and writes what the CPU path does.
    let kernel = PadKernel::new(&engine_device).unwrap();
    for (which, held_bytes) in [(Side::Output, 16), (Side::Input, 16), (Side::Output, 64), (Side::Input, 64)] {
        let input = storage_of(&engine_device, 64, which == Side::Input);
        let output = storage_of(&engine_device, 64, which == Side::Output);
        let mapped = if which == Side::Input { &input } else { &output };
        {
            let held = mapped.slice(0..held_bytes).get_mapped_range_mut();
            let e = kernel.prepare(&p, BufferRange::new(&input, 0, 16), BufferRange::whole(&output)).unwrap_err();
            assert!(
                matches!(e, PadError::BufferMapped { which: w } if w == which),
                "{which}, {held_bytes} bytes held: {e:?}"
            );
            drop(held);
        }
        if which == Side::Input {
            input
                .slice(0..16)
                .get_mapped_range_mut()
                .unwrap()
                .copy_from_slice(bytemuck::cast_slice(&[1f32, 2., 3., 4.]));
        }
        mapped.unmap();
        let pad = kernel.prepare(&p, BufferRange::new(&input, 0, 16), BufferRange::new(&output, 0, 24)).unwrap();
        let mut enc = engine_device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pad.record(&mut pass);
        }
        engine_queue.submit([enc.finish()]);
        let got = read_with(&engine_device, &engine_queue, &output, 24);
        let x = if which == Side::Input { [1f32, 2., 3., 4.] } else { [0f32; 4] };
        let want = [x[0], x[0], x[1], x[2], x[3], x[3]];
        assert_eq!(bytemuck::cast_slice::<u8, f32>(&got), want, "{which}: once unmapped");
    }
    // Buffers of another device of the same instance: an error, not an overlap or a panic.
    // (Of another instance, wgpu 30 itself panics looking the buffer up, and offers no way to
    // ask a buffer for its device beforehand.)
    let kernel = PadKernel::new(&engine_device).unwrap();
    let (other, _) = pollster::block_on(adapter.request_device(&Default::default())).unwrap();
    let (input, output) = (storage_of(&other, 16, false), storage_of(&other, 24, false));
    match kernel.prepare(&p, BufferRange::whole(&input), BufferRange::whole(&output)) {
        Err(PadError::Gpu { reason }) => assert!(!reason.is_empty()),
        other => panic!("buffers of another device: {other:?}"),
    }
}

#[test]
fn warm_calls_compile_nothing() {
    let Some(ctx) = ctx() else { return };
    let kernel = PadKernel::new(ctx.device()).unwrap();
    let p = plan(DataType::Float32, &[8, 8], &[1, 1, 1, 1], Mode::Reflect);
    let input = storage(ctx, &[0u8; 256]);
    let output = storage(ctx, &[0u8; 512]);
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    kernel.encode(&mut enc, &p, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
    assert_eq!(kernel.compile_count(), 1);
    // Same mode, width, grid and one-period pads: the same pipeline.
    let q = plan(DataType::Int32, &[3, 9], &[0, 2, 1, 0], Mode::Reflect);
    for _ in 0..10 {
        kernel.encode(&mut enc, &q, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
    }
    assert_eq!(kernel.compile_count(), 1);
    // Pads past one period take the modulo variant: one more, once.
    let r = plan(DataType::Int32, &[3, 9], &[0, 2, 4, 0], Mode::Reflect);
    kernel.prepare(&r, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
    for _ in 0..3 {
        kernel.encode(&mut enc, &r, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
    }
    assert_eq!(kernel.compile_count(), 2);
    ctx.queue().submit([enc.finish()]);
    common::assert_no_gpu_errors();
}

#[test]
fn four_threads_pad_on_one_device() {
    let Some(ctx) = ctx() else { return };
    std::thread::scope(|s| {
        for t in 0..4u8 {
            s.spawn(move || {
                for i in 0..12u8 {
                    let mode = Mode::ALL[(t + i) as usize % 5];
                    let dtype = [DataType::Uint8, DataType::Float16, DataType::Float32, DataType::Int64][t as usize];
                    let shape = [3 + i as usize % 4, 5 + t as usize];
                    let p = plan(dtype, &shape, &[1, 2, i as i64 % 3, 1], mode);
                    let x = pattern(dtype, &shape, t * 16 + i);
                    let y = ctx.pad_blocking(&p, &x).unwrap();
                    assert!(y.tensor == cpu::pad(&p, &x).unwrap(), "thread {t} pad {i} differs");
                }
            });
        }
    });
}

/// Rows far longer than a binding window, so that windows start in a row's pad before, in
/// its kept part and in its pad after (narrow.wgsl finds each row's run of kept words from
/// where its window starts), on every mode, 8- and 16-bit.
#[test]
fn windows_that_start_in_a_rows_pads_are_bit_exact() {
    let Some(ctx) = common::gpu_small_bindings() else { return };
    for (dtype, shape, pads) in [
        (DataType::Uint8, [2, 512], [0, 512, 0, 2560]),
        (DataType::Uint8, [3, 256], [1, 1301, 0, 1500]),
        (DataType::Float16, [2, 1024], [0, 1024, 1, 4096]),
        (DataType::Float16, [3, 256], [0, 1301, 0, 1500]),
    ] {
        let x = pattern(dtype, &shape, 9);
        for mode in Mode::ALL {
            let p = plan(dtype, &shape, &pads, mode);
            let y = ctx.pad_blocking(&p, &x).unwrap().tensor;
            assert!(y == cpu::pad(&p, &x).unwrap(), "{dtype:?} {shape:?} {pads:?} {mode:?} differs from the CPU path");
        }
    }
}

#[test]
fn empty_inputs_and_outputs() {
    let Some(ctx) = ctx() else { return };
    // Constant pad of an empty input: the output is all constant.
    let v = Tensor::from_slice(DataType::Int32, vec![], &[7i32]).unwrap();
    let p = PadPlan::new(DataType::Int32, &[0, 2], &PadRequest::new(vec![1, 0, 1, 0]).constant(v)).unwrap();
    let x = Tensor::zeros(DataType::Int32, vec![0, 2]).unwrap();
    let y = ctx.pad_blocking(&p, &x).unwrap().tensor;
    assert_eq!(y.as_slice::<i32>().unwrap(), &[7; 4]);
    // An empty output.
    let p = plan(DataType::Uint16, &[0, 3], &[0, 1, 0, 1], Mode::Wrap);
    let y = ctx.pad_blocking(&p, &Tensor::zeros(DataType::Uint16, vec![0, 3]).unwrap()).unwrap().tensor;
    assert_eq!(y.shape(), &[0, 5]);
}

/// `GpuContext` keeps its device buffers between calls: warm calls of sizes in the same
/// classes take them from the pool (stale bytes never show in an output), the pool keeps
/// within its limit, and can be emptied.
#[test]
fn pooled_buffers_are_reused_within_their_limit() {
    let Some(shared) = ctx() else { return };
    // Its own pool, on the shared device (other tests use the shared context's pool).
    let ctx = GpuContext::from_device(shared.device(), shared.queue(), shared.adapter_info().clone()).unwrap();
    assert_eq!(ctx.pooled_bytes(), 0);
    let big = plan(DataType::Float32, &[100, 1000], &[1, 2, 3, 4], Mode::Constant);
    let x = pattern(DataType::Float32, &[100, 1000], 1);
    assert!(ctx.pad_blocking(&big, &x).unwrap().tensor == cpu::pad(&big, &x).unwrap());
    let held = ctx.pooled_bytes();
    // Input and output, and a readback buffer unless they are mapped directly.
    let kept = if ctx.maps_directly() { 2 } else { 3 };
    assert!(held >= kept * 400_000, "{held} bytes kept after a 400 kB pad");
    for (i, mode) in Mode::ALL.into_iter().enumerate() {
        // Slightly smaller inputs and outputs: the same size classes, the same buffers.
        let p = plan(DataType::Float32, &[99, 1000], &[0, 1, 0, 2], mode);
        let x = pattern(DataType::Float32, &[99, 1000], 10 + i as u8);
        assert!(ctx.pad_blocking(&p, &x).unwrap().tensor == cpu::pad(&p, &x).unwrap(), "{mode} on reused buffers");
        assert_eq!(ctx.pooled_bytes(), held, "{mode}: a warm call made new buffers");
    }
    ctx.set_buffer_pool_limit(held / 2);
    assert!(ctx.pooled_bytes() <= held / 2);
    assert!(ctx.pad_blocking(&big, &x).unwrap().tensor == cpu::pad(&big, &x).unwrap());
    assert!(ctx.pooled_bytes() <= held / 2, "the pool grew past its limit");
    ctx.release_buffers();
    assert_eq!(ctx.pooled_bytes(), 0);
    ctx.set_buffer_pool_limit(0);
    assert!(ctx.pad_blocking(&big, &x).unwrap().tensor == cpu::pad(&big, &x).unwrap());
    assert_eq!(ctx.pooled_bytes(), 0, "a pool limited to 0 kept buffers");
}

/// Where the CPU and the GPU share memory (lavapipe, an integrated GPU) and the adapter
/// offers mappable storage buffers, `GpuContext::new` and `with_limits` ask for them and pad
/// through mappings; elsewhere, through staging copies. Both come out as the CPU path's,
/// warm calls included (a kept input buffer is mapped again for writing), for inputs of
/// whole words, of a partial last word, and empty.
#[test]
fn contexts_map_buffers_directly_where_memory_is_shared() {
    let Some(shared) = ctx() else { return };
    let info = shared.adapter_info();
    let shares = matches!(info.device_type, wgpu::DeviceType::Cpu | wgpu::DeviceType::IntegratedGpu);
    let adapter = common::adapter_of(shared);
    let offered = adapter.features().contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS);
    assert_eq!(shared.maps_directly(), shares && offered, "{info:?}");
    let webgpu = pollster::block_on(GpuContext::with_limits(Some(wgpu::Limits::defaults()))).unwrap();
    assert_eq!(webgpu.maps_directly(), shares && offered);
    // The same device, asked for the feature by its owner: mapped only where memory is shared.
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: adapter.features() & wgpu::Features::MAPPABLE_PRIMARY_BUFFERS,
        ..Default::default()
    }))
    .unwrap();
    let mut discrete = info.clone();
    discrete.device_type = wgpu::DeviceType::DiscreteGpu;
    assert!(!GpuContext::from_device(&device, &queue, discrete).unwrap().maps_directly());
    let owned = GpuContext::from_device(&device, &queue, info.clone()).unwrap();
    assert_eq!(owned.maps_directly(), shares && offered);

    for ctx in [shared, &webgpu, &owned, common::gpu_small_bindings().unwrap()] {
        for round in 0..2 {
            for (dtype, shape, pads) in [
                (DataType::Float32, vec![3, 70], vec![1, 2, 0, 3]),
                (DataType::Uint8, vec![5, 3], vec![0, 2, 1, 1]),
                (DataType::Float16, vec![7], vec![2, 1]),
                (DataType::Int64, vec![2, 2, 3], vec![0, 1, 1, 1, 0, 2]),
            ] {
                for mode in Mode::ALL {
                    let p = plan(dtype, &shape, &pads, mode);
                    let x = pattern(dtype, &shape, 5 + round);
                    let y = ctx.pad_blocking(&p, &x).unwrap().tensor;
                    assert!(
                        y == cpu::pad(&p, &x).unwrap(),
                        "{dtype} {mode}, round {round}, direct {}",
                        ctx.maps_directly()
                    );
                }
            }
        }
        let v = Tensor::from_slice(DataType::Int32, vec![], &[9i32]).unwrap();
        let p = PadPlan::new(DataType::Int32, &[0, 2], &PadRequest::new(vec![1, 0, 1, 0]).constant(v)).unwrap();
        let y = ctx.pad_blocking(&p, &Tensor::zeros(DataType::Int32, vec![0, 2]).unwrap()).unwrap().tensor;
        assert_eq!(y.as_slice::<i32>().unwrap(), &[9; 4]);
    }
}

/// A kernel keeps the parameter buffers of recent pads by content: pads with the same
/// parameters on other buffers reuse them, and more distinct pads than it keeps still come
/// out right (each batch checked against the CPU path, then the first pads again).
#[test]
fn repeated_and_many_distinct_pads_share_parameters_safely() {
    let Some(ctx) = ctx() else { return };
    let kernel = PadKernel::new(ctx.device()).unwrap();
    let lengths: Vec<usize> = (1..=300).chain(1..=20).collect();
    for batch in lengths.chunks(64) {
        let mut encoder = ctx.device().create_command_encoder(&Default::default());
        let mut jobs = Vec::new();
        for (i, &n) in batch.iter().enumerate() {
            let modes = [Mode::Reflect, Mode::Wrap, Mode::Symmetric, Mode::Edge, Mode::Constant];
            let mode = if n < 3 { Mode::Edge } else { modes[n % 5] };
            let p = plan(DataType::Float32, &[n], &[1, 2], mode);
            // The same parameters twice, on two inputs and two outputs.
            for seed in [i as u8, i as u8 ^ 0x55] {
                let x = pattern(DataType::Float32, &[n], seed);
                let input = storage(ctx, x.bytes().unwrap());
                let output = storage(ctx, &vec![0xAA; p.byte_sizes().unwrap().1 as usize]);
                kernel.encode(&mut encoder, &p, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
                jobs.push((p.clone(), x, output));
            }
        }
        ctx.queue().submit([encoder.finish()]);
        common::assert_no_gpu_errors();
        for (p, x, output) in jobs {
            let expected = cpu::pad(&p, &x).unwrap();
            let got = read(ctx, &output, 0, p.byte_sizes().unwrap().1);
            assert_eq!(got, expected.bytes().unwrap(), "{:?} length {}", p.mode(), p.in_shape()[0]);
        }
    }
}

/// Round four: contexts can share an instance the caller names, and a buffer of one such
/// context given to another's kernel is a typed error (of another instance it would alias an
/// unrelated buffer by id, silently).
#[test]
fn contexts_sharing_an_instance_refuse_each_others_buffers() {
    if ctx().is_none() {
        return;
    }
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let a = pollster::block_on(GpuContext::with_instance(&instance, None)).unwrap();
    let b = pollster::block_on(GpuContext::with_instance(&instance, None)).unwrap();
    let p = plan(DataType::Float32, &[4], &[1, 1], Mode::Edge);
    let (input, output) = (storage_of(b.device(), 16, false), storage_of(b.device(), 24, false));
    match a.kernel().prepare(&p, BufferRange::whole(&input), BufferRange::whole(&output)) {
        Err(PadError::Gpu { reason }) => assert!(!reason.is_empty()),
        other => panic!("a buffer of another context's device: {other:?}"),
    }
    // Each pads its own.
    let x = wgpu_pad::Tensor::from_slice(DataType::Float32, vec![4], &[1f32, 2., 3., 4.]).unwrap();
    for c in [&a, &b] {
        let y = c.pad_blocking(&p, &x).unwrap();
        assert_eq!(y.tensor.as_slice::<f32>().unwrap(), &[1., 1., 2., 3., 4., 4.]);
    }
}

/// Round four: rank 16, the shaders' most, on the GPU: every other axis padded, so no axes
/// merge; every mode, bit for bit against the CPU path, and it ran on the GPU.
#[test]
fn rank_sixteen_pads_run_on_the_gpu() {
    let Some(ctx) = ctx() else { return };
    let shape = [2usize; 16];
    let pads: Vec<i64> = (0..32).map(|i| i64::from(i % 16 % 2 == 0 && i < 16)).collect();
    let n = 1 << 16;
    let x = Tensor::from_bytes(DataType::Uint8, shape.to_vec(), (0..n).map(|i| (i * 7 % 251) as u8).collect()).unwrap();
    for mode in Mode::ALL {
        let p = PadPlan::new(DataType::Uint8, &shape, &PadRequest::new(pads.clone()).mode(mode)).unwrap();
        let y = ctx.pad_blocking(&p, &x).unwrap();
        assert_eq!(y.path, wgpu_pad::gpu::ExecPath::Gpu, "{mode}: rank 16 fell back");
        assert!(y.tensor == cpu::pad(&p, &x).unwrap(), "{mode}");
    }
}

/// Round four: `GpuContext::output_arena` feeds the readbacks: an output given back is the
/// memory the next pad of its size reads back into (the arena holds it in between, and not
/// after), bit for bit.
#[test]
fn readbacks_reuse_what_is_given_back_to_the_context_arena() {
    let Some(ctx) = ctx() else { return };
    ctx.output_arena().release();
    // 16 MiB and more: smaller buffers the allocator serves cheaply and the arena drops.
    let p = plan(DataType::Float32, &[1024, 4096], &[1, 0, 1, 0], Mode::Reflect);
    let x = Tensor::from_bytes(
        DataType::Float32,
        vec![1024, 4096],
        (0..1024 * 4096 * 4).map(|i| (i % 253) as u8).collect(),
    )
    .unwrap();
    let first = ctx.pad_blocking(&p, &x).unwrap().tensor;
    assert!(first == cpu::pad(&p, &x).unwrap());
    let at = first.bytes().unwrap().as_ptr() as usize;
    ctx.output_arena().recycle(first);
    assert!(ctx.output_arena().held_bytes() >= 1024 * 4096 * 4, "the arena kept nothing");
    let second = ctx.pad_blocking(&p, &x).unwrap().tensor;
    assert_eq!(ctx.output_arena().held_bytes(), 0, "the readback did not take the arena's buffer");
    assert_eq!(second.bytes().unwrap().as_ptr() as usize, at, "the readback went elsewhere");
    assert!(second == cpu::pad(&p, &x).unwrap());
}
