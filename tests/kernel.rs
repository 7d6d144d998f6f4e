//! `PadKernel` on the caller's device and buffers, as an engine embeds it: several encodes
//! in one submission at offsets in one pool, prepared pads recorded into an open pass,
//! pipelines compiled once (and ahead of time), the placeholder binding, futures that can
//! be spawned, and misuse (destroyed buffers, wrong usages, unsupported devices) refused
//! with errors. Windows and views have `windows.rs`; `GpuContext`, `context.rs`.

mod common;

use common::*;

use wgpu_pad::gpu::{BufferRange, GpuContext, PadKernel, ProgramKind};
use wgpu_pad::{cpu, DataType, Mode, PadError, PadPlan, PadRequest, Side, Tensor};

/// Engines share one kernel and one context across threads.
#[test]
fn kernel_and_context_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<PadKernel>();
    send_sync::<GpuContext>();
    send_sync::<PadPlan>();
}

#[test]
fn several_encodes_in_one_submission_at_offsets_in_one_pool() {
    let Some(ctx) = gpu() else { return };
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
    let Some(ctx) = gpu() else { return };
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
    let dilated = PadPlan::new(DataType::Float32, &[4], &PadRequest::new(vec![0, 0]).interior(vec![1])).unwrap();
    check(BufferRange::whole(&good), BufferRange::at(&good, 0), &dilated, "overlap");
    // A gradient's views overlapping where its borders are (grad_in's element 0), not its bulk
    // (elements 1 and 2, a crop of its own): refused too.
    let grad_out = BufferRange { size: Some(24), ..BufferRange::at(&good, 236) };
    let grad_in = BufferRange { size: Some(16), ..BufferRange::at(&good, 256) };
    let e = kernel.prepare_backward(&p, grad_out, grad_in).err();
    assert!(matches!(e, Some(PadError::Overlap { .. })), "expected an overlap, got {e:?}");
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

/// A destroyed buffer is a typed error from `prepare` and `encode`, never a
/// panic, on a device whose uncaptured errors would panic (wgpu's default, an engine's
/// device) as on the shared test context's.
#[test]
fn destroyed_buffers_are_errors_not_panics() {
    let Some(ctx) = gpu() else { return };
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
    // The output and the input, with the engine holding a view of the buffer's
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
    let Some(ctx) = gpu() else { return };
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

/// A kernel keeps the parameter buffers of recent pads by content: pads with the same
/// parameters on other buffers reuse them, and more distinct pads than it keeps still come
/// out right (each batch checked against the CPU path, then the first pads again).
#[test]
fn repeated_and_many_distinct_pads_share_parameters_safely() {
    let Some(ctx) = gpu() else { return };
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

/// Many prepared pads recorded into one compute pass the engine has open, between its own
/// dispatches, and the same prepared pads reused in a second submission on new data.
#[test]
fn prepared_pads_in_one_open_pass_and_across_submissions() {
    let Some(ctx) = common::gpu() else { return };
    let kernel = ctx.kernel();
    let plans: Vec<PadPlan> = (0..12)
        .map(|i| {
            let dtype = [DataType::Float32, DataType::Uint8, DataType::Float16, DataType::Int64][i % 4];
            plan(dtype, &[3 + i % 3, 5 + i % 4], &[1, 0, i as i64 % 3, 2], Mode::ALL[i % 5])
        })
        .collect();
    let mut buffers = Vec::new();
    for (i, p) in plans.iter().enumerate() {
        let x = pattern(p.dtype(), p.in_shape(), i as u8);
        let (_, o) = p.byte_sizes().unwrap();
        buffers.push((storage(ctx, x.bytes().unwrap()), storage(ctx, &vec![0u8; o as usize])));
    }
    let prepared: Vec<_> = plans
        .iter()
        .zip(&buffers)
        .map(|(p, (i, o))| kernel.prepare(p, BufferRange::whole(i), BufferRange::whole(o)).unwrap())
        .collect();
    let compiled = kernel.compile_count();
    for round in 0..2u8 {
        if round == 1 {
            // New inputs, same buffers: the prepared pads are reused as they are.
            for (i, (p, (input, _))) in plans.iter().zip(&buffers).enumerate() {
                let x = pattern(p.dtype(), p.in_shape(), 100 + i as u8);
                ctx.queue().write_buffer(input, 0, &{
                    let mut b = x.bytes().unwrap().to_vec();
                    b.resize(b.len().next_multiple_of(4), 0);
                    b
                });
            }
        }
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for pad in &prepared {
                pad.record(&mut pass);
            }
        }
        ctx.queue().submit([enc.finish()]);
        common::assert_no_gpu_errors();
        for (i, (p, (_, output))) in plans.iter().zip(&buffers).enumerate() {
            let seed = if round == 0 { i as u8 } else { 100 + i as u8 };
            let want = cpu::pad(p, &pattern(p.dtype(), p.in_shape(), seed)).unwrap();
            let got = read_whole(ctx, output);
            assert!(got[..want.bytes().unwrap().len()] == *want.bytes().unwrap(), "round {round}, pad {i} differs");
        }
    }
    assert_eq!(kernel.compile_count(), compiled, "recording compiled something");
    pollster::block_on(kernel.pop_errors()).unwrap();
}

/// What an engine has, taken as it has it: (before, after) pairs, a numeric constant in a
/// type the tensor is not (f64 for a float16 tensor, an exact i64 for an int64 one), ranges
/// of a pool bounded by size; errors popped without an executor. Bytes around the ranges
/// stay as they were, and a bounded range too small for the tensor is refused.
#[test]
fn pairs_numeric_constants_and_sized_ranges_as_an_engine_gives_them() {
    let Some(ctx) = common::gpu() else { return };
    let cases = [
        (DataType::Float16, wgpu_pad::Scalar::Float(-2.5)),
        (DataType::Int64, wgpu_pad::Scalar::Int(i64::MIN + 1)),
        (DataType::Uint8, wgpu_pad::Scalar::Float(200.0)),
    ];
    for (dtype, value) in cases {
        for mode in Mode::ALL {
            let request = PadRequest::from_pairs(&[(1, 2), (-1, 3)]).mode(mode).constant(value);
            let p = PadPlan::new(dtype, &[3, 4], &request).unwrap();
            let x = pattern(dtype, &[3, 4], 7);
            let (i, o) = p.byte_sizes().unwrap();
            // [sentinel | x | sentinel | y | sentinel], ranges at element-aligned offsets.
            let (x_at, y_at) = (256 + 8, 512 + 256 + 8);
            let mut pool = vec![0xa5u8; (y_at + o + 256) as usize];
            pool[x_at as usize..(x_at + i) as usize].copy_from_slice(x.bytes().unwrap());
            let pool = storage(ctx, &pool);
            let before = read_whole(ctx, &pool);
            let pad =
                ctx.kernel().prepare(&p, BufferRange::new(&pool, x_at, i), BufferRange::new(&pool, y_at, o)).unwrap();
            let mut enc = ctx.device().create_command_encoder(&Default::default());
            pad.record(&mut enc.begin_compute_pass(&Default::default()));
            ctx.queue().submit([enc.finish()]);
            ctx.kernel().pop_errors_blocking().unwrap();
            common::assert_no_gpu_errors();
            let after = read_whole(ctx, &pool);
            let want = cpu::pad(&p, &x).unwrap();
            let (y_at, o) = (y_at as usize, o as usize);
            assert_eq!(&after[y_at..y_at + o], want.bytes().unwrap(), "{dtype} {mode}");
            assert!(after[..y_at] == before[..y_at] && after[y_at + o..] == before[y_at + o..], "{dtype} {mode}");
            if mode == Mode::Constant {
                let c = value.to_tensor(dtype).unwrap();
                assert_eq!(&after[y_at..y_at + c.bytes().unwrap().len()], c.bytes().unwrap(), "{dtype}: corner");
            }
            // One byte short of the output: refused, naming the range.
            let short = ctx.kernel().prepare(
                &p,
                BufferRange::new(&pool, x_at, i),
                BufferRange::new(&pool, y_at as u64, o as u64 - 1),
            );
            assert!(matches!(short, Err(PadError::BufferTooSmall { which: Side::Output, .. })), "{short:?}");
        }
    }
}

/// The pipeline set depends on mode, word width and fixed variants only: all 5 modes and 8
/// types of every width compile every pad's pipeline (`ProgramKind::Pad.pipelines()`) ahead
/// of time, and pads then compile none.
#[test]
fn precompiled_pipelines_are_bounded_and_enough() {
    let Some(ctx) = common::gpu() else { return };
    // Made only where the device has the feature: elsewhere making one is a validation error
    // (which the shared context's error record caught when this made it regardless).
    let cache = ctx.device().features().contains(wgpu::Features::PIPELINE_CACHE).then(|| unsafe {
        ctx.device().create_pipeline_cache(&wgpu::PipelineCacheDescriptor { label: None, data: None, fallback: true })
    });
    let kernel = PadKernel::with_pipeline_cache(ctx.device(), cache).unwrap();
    let types = [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
        DataType::Complex128,
        DataType::Bool,
        DataType::String,
        DataType::Int4,
    ];
    let n = pollster::block_on(kernel.precompile(&[ProgramKind::Pad], &Mode::ALL, &types)).unwrap();
    assert_eq!(n, ProgramKind::Pad.pipelines());
    let before = kernel.compile_count();
    for (i, dtype) in types.iter().filter(|d| d.gpu_capable()).enumerate() {
        for mode in Mode::ALL {
            for shape in [[1usize, 3, 9, 8], [4, 5, 6, 7]] {
                let p = plan(*dtype, &shape, &[0, 1, 2, 0, 0, 1, i as i64 % 3, 9], mode);
                let (i_b, o_b) = p.byte_sizes().unwrap();
                let (ib, ob) = (storage(ctx, &vec![0; i_b as usize]), storage(ctx, &vec![0; o_b as usize]));
                kernel.prepare(&p, BufferRange::whole(&ib), BufferRange::whole(&ob)).unwrap();
            }
        }
    }
    assert_eq!(kernel.compile_count(), before, "a precompiled kernel compiled more");
}

/// An engine that dilates and trains precompiles those kinds too: gradients (reflect and
/// constant, of one, two and three axes of several images, a long sum split over lanes, a crop
/// and borders and a whole plan) and interior pads then prepare without compiling; a second
/// precompile compiles nothing.
#[test]
fn precompiled_gradients_and_interior_pads_compile_nothing_more() {
    let Some(ctx) = common::gpu() else { return };
    let kernel = PadKernel::new(ctx.device()).unwrap();
    let (kinds, types) = ([ProgramKind::InteriorPad, ProgramKind::Gradient], [DataType::Float32, DataType::Uint8]);
    let modes = [Mode::Reflect, Mode::Constant, Mode::Edge];
    let n = pollster::block_on(kernel.precompile(&kinds, &modes, &types)).unwrap();
    // uint8 has no gradient; float32's: a constant pad's 6 (4-byte words and wider: its crops)
    // and its own, constant's 1 and 2 x 5 for reflect and edge each; an interior pad a type.
    assert_eq!(n, 6 + 21 + 2);
    assert_eq!(pollster::block_on(kernel.precompile(&kinds, &modes, &types)).unwrap(), 0);
    let before = kernel.compile_count();
    let prepare = |p: &PadPlan, backward: bool| {
        let (i, o) = p.byte_sizes().unwrap();
        let (a, b) = if backward { (o, i) } else { (i, o) };
        let (src, dst) = (storage(ctx, &vec![0; a as usize]), storage(ctx, &vec![0; b as usize]));
        let (src, dst) = (BufferRange::whole(&src), BufferRange::whole(&dst));
        match backward {
            true => kernel.prepare_backward(p, src, dst).map(drop),
            false => kernel.prepare(p, src, dst).map(drop),
        }
        .unwrap_or_else(|e| panic!("{p:?}: {e}"));
    };
    let f32 = DataType::Float32;
    for mode in [Mode::Reflect, Mode::Constant] {
        for (shape, pads) in
            [(vec![2, 9, 8], vec![0, 2, 1, 0, 3, 2]), (vec![5, 6, 7], vec![1, 1, 1, 2, 2, 2]), (vec![40], vec![30, 0])]
        {
            prepare(&plan(f32, &shape, &pads, mode), true);
        }
    }
    // Edge by 300 on one axis: its first index's sum is split over a workgroup's lanes.
    prepare(&plan(f32, &[3, 4], &[0, 300, 0, 0], Mode::Edge), true);
    for dtype in types {
        let dilated = PadRequest::new(vec![0, 1, 1, 0]).interior(vec![0, 1]);
        let p = PadPlan::new(dtype, &[3, 8], &dilated).unwrap();
        prepare(&p, false);
        if dtype == f32 {
            prepare(&p, true);
        }
    }
    assert_eq!(kernel.compile_count(), before, "a precompiled kernel compiled more");
}

/// A kernel variant selected for measurement is what the kernel prepares with: its pipeline
/// is another than the default's (a variant silently run as the default would pass every
/// correctness test), and selecting the default again reuses the default's.
#[cfg(feature = "variants")]
#[test]
fn a_selected_kernel_variant_is_the_one_prepared() {
    use wgpu_pad::gpu::measurement::KernelVariant;
    let Some(ctx) = common::gpu() else { return };
    let kernel = PadKernel::new(ctx.device()).unwrap();
    assert_eq!(wgpu_pad::gpu::measurement::selected(&kernel), KernelVariant::Default);
    let p = plan(DataType::Float32, &[4, 300], &[0, 1, 0, 2], Mode::Reflect);
    let (i_b, o_b) = p.byte_sizes().unwrap();
    let (ib, ob) = (storage(ctx, &vec![0; i_b as usize]), storage(ctx, &vec![0; o_b as usize]));
    let prepare = || kernel.prepare(&p, BufferRange::whole(&ib), BufferRange::whole(&ob)).unwrap();
    prepare();
    assert_eq!(kernel.compile_count(), 1);
    wgpu_pad::gpu::measurement::select(&kernel, KernelVariant::Reference);
    prepare();
    assert_eq!(kernel.compile_count(), 2, "the reference prepared the default's pipeline");
    // The narrow-spread variant changes nothing for 32-bit words: the default's pipeline.
    wgpu_pad::gpu::measurement::select(&kernel, KernelVariant::NarrowSpread);
    prepare();
    wgpu_pad::gpu::measurement::select(&kernel, KernelVariant::Default);
    prepare();
    assert_eq!(kernel.compile_count(), 2);
    // The flat grids and the read-only input are pipelines of their own too.
    let own = [
        KernelVariant::FlatU4,
        KernelVariant::ReadOnlyInput,
        KernelVariant::DeviceGrid,
        KernelVariant::DeviceGrid256,
        KernelVariant::Rows16,
    ];
    for (n, variant) in own.into_iter().enumerate() {
        wgpu_pad::gpu::measurement::select(&kernel, variant);
        prepare();
        assert_eq!(kernel.compile_count(), 3 + n, "{variant:?} prepared another variant's pipeline");
    }
    // Input and output in one buffer: wgpu refuses it bound read-only and writable at once,
    // so the read-only variant reads it writable (the default's pipeline).
    let shared = storage(ctx, &vec![0; (i_b + 256 + o_b) as usize]);
    wgpu_pad::gpu::measurement::select(&kernel, KernelVariant::ReadOnlyInput);
    kernel.prepare(&p, BufferRange::new(&shared, 0, i_b), BufferRange::at(&shared, i_b.next_multiple_of(256))).unwrap();
    assert_eq!(kernel.compile_count(), 7, "the read-only variant compiled a read-only pipeline for one buffer");
    common::assert_no_gpu_errors();
}

/// The variants' tests skip a case only where the variant's program is the default's: a
/// variant is not skipped where it changes the pipeline or the grid, the default never.
#[cfg(feature = "variants")]
#[test]
fn a_variant_runs_the_default_only_where_its_program_is_the_defaults() {
    use wgpu_pad::gpu::measurement::KernelVariant::*;
    let Some(ctx) = common::gpu() else { return };
    let kernel = PadKernel::new(ctx.device()).unwrap();
    let f32_rows = plan(DataType::Float32, &[4, 300], &[0, 1, 0, 2], Mode::Reflect);
    let u8_rows = plan(DataType::Uint8, &[2, 9000], &[0, 3, 0, 5], Mode::Wrap); // long rows: pairs
    let u8_short = plan(DataType::Uint8, &[7, 9], &[0, 1, 0, 2], Mode::Wrap);
    let cases = [
        (Default, &f32_rows, false),
        (Default, &u8_rows, false),
        (NarrowSpread, &f32_rows, true),
        (NarrowSpread, &u8_rows, false),
        (NarrowLoadsFirst, &f32_rows, true),
        (NarrowLoadsFirst, &u8_rows, false),
        (DeviceGrid, &f32_rows, false),
        (DeviceGrid256, &u8_rows, true),
        (FlatU4, &f32_rows, false), // the flat grid: another grid, the same variant in the key
        (FlatU4, &u8_rows, true),   // for wide words only
        (ReadOnlyInput, &u8_short, false),
        (Rows16, &f32_rows, false),
        (Rows16, &u8_rows, false),
        (Rows16, &u8_short, true), // rows of 12 bytes: under two 16-byte words
        (Reference, &f32_rows, false),
    ];
    for (variant, p, runs_default) in cases {
        wgpu_pad::gpu::measurement::select(&kernel, variant);
        assert_eq!(
            wgpu_pad::gpu::measurement::runs_the_default(&kernel, p),
            runs_default,
            "{variant:?} on {:?}",
            p.out_shape()
        );
    }
}

#[test]
fn unsupported_devices_are_refused_up_front() {
    let Some(ctx) = common::gpu() else { return };
    let no_compute = wgpu::DownlevelCapabilities { flags: wgpu::DownlevelFlags::empty(), ..Default::default() };
    let e = PadKernel::check_support(&ctx.device().limits(), &no_compute).unwrap_err();
    assert!(matches!(e, PadError::DeviceUnsupported { .. }) && e.to_string().contains("compute shaders"), "{e}");
    // WebGL2-like limits: no storage buffers in compute. Making the kernel fails, no panic.
    let limits = wgpu::Limits { max_storage_buffers_per_shader_stage: 0, ..ctx.device().limits() };
    let e = PadKernel::check_support(&limits, &wgpu::DownlevelCapabilities::default()).unwrap_err();
    assert!(e.to_string().contains("max_storage_buffers_per_shader_stage is 0"), "{e}");
    let e = pollster::block_on(GpuContext::with_limits(Some(limits))).err().expect("a device without storage buffers");
    assert!(matches!(e, PadError::DeviceUnsupported { .. }), "{e}");
}

#[test]
fn futures_are_send() {
    fn spawnable<F: std::future::Future + Send>(f: F) -> F {
        f
    }
    let Some(ctx) = common::gpu() else { return };
    let p = plan(DataType::Float32, &[3, 3], &[1, 1, 1, 1], Mode::Wrap);
    let x = pattern(DataType::Float32, &[3, 3], 1);
    // Polled on another thread, as a multi-threaded executor would.
    let y = std::thread::scope(|s| s.spawn(|| pollster::block_on(spawnable(ctx.pad(&p, &x)))).join().unwrap());
    assert!(y.unwrap().tensor == cpu::pad(&p, &x).unwrap());
    pollster::block_on(spawnable(ctx.kernel().pop_errors())).unwrap();
    pollster::block_on(spawnable(ctx.kernel().precompile(&[ProgramKind::Pad], &[Mode::Edge], &[DataType::Uint8])))
        .unwrap();
}

/// A dispatch that reads nothing (an input cropped away) binds a placeholder of
/// `Program::EMPTY_INPUT_BYTES`, as `Program`'s docs say, on a pipeline with wgpu's automatic
/// layout (the minimum binding sizes taken from the WGSL), for every moved width; a host
/// following the docs gets no validation error and the constant, bit for bit.
#[test]
fn a_dispatch_reading_nothing_binds_the_documented_placeholder() {
    use wgpu::util::DeviceExt;
    use wgpu_pad::gpu::{BufferView, DeviceLimits, Program};
    let Some(ctx) = common::gpu() else { return };
    let device = ctx.device();
    let limits = DeviceLimits::from(&device.limits());
    for dtype in [DataType::Uint8, DataType::Float16, DataType::Float32, DataType::Int64, DataType::Complex128] {
        let x = pattern(dtype, &[4, 6], 5);
        let request = PadRequest::new(vec![0, -6, 0, 3])
            .constant(Tensor::from_bytes(dtype, vec![], vec![0x5a; dtype.width().bytes().unwrap()]).unwrap());
        let p = PadPlan::new(dtype, x.shape(), &request).unwrap();
        let (in_bytes, out_bytes) = p.byte_sizes().unwrap();
        let program = Program::new(
            &p,
            &BufferView::dense(0, in_bytes.next_multiple_of(4)),
            &BufferView::dense(0, out_bytes.next_multiple_of(4)),
            &limits,
        )
        .unwrap();
        assert!(program.dispatches().iter().all(|d| d.input().is_none()), "{dtype}: a dispatch reads input");
        let pipeline = common::compute_pipeline(device, &program.wgsl(0));
        let placeholder = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: Program::EMPTY_INPUT_BYTES,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let output = storage(ctx, &vec![0u8; out_bytes as usize]);
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            for d in program.dispatches() {
                let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: d.params(),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let (offset, size) = d.output();
                let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &[
                        wgpu::BindGroupEntry { binding: 0, resource: params.as_entire_binding() },
                        wgpu::BindGroupEntry { binding: 1, resource: placeholder.as_entire_binding() },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &output,
                                offset,
                                size: wgpu::BufferSize::new(size),
                            }),
                        },
                    ],
                });
                pass.set_bind_group(0, &bind, &[]);
                let [gx, gy, gz] = d.workgroups();
                pass.dispatch_workgroups(gx, gy, gz);
            }
        }
        ctx.queue().submit([enc.finish()]);
        common::assert_no_gpu_errors();
        let mut y = read_whole(ctx, &output);
        y.truncate(out_bytes as usize);
        assert_eq!(y, cpu::pad(&p, &x).unwrap().bytes().unwrap(), "{dtype}");
    }
}

/// CI runs the README's test command, and that command turns the kernel variants on: without
/// the `variants` feature their shard tests compile to nothing, so a command that dropped it
/// would pass with none of them run.
#[test]
fn ci_runs_the_readmes_test_command_with_the_variants_on() {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |path: &str| std::fs::read_to_string(format!("{root}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (readme, ci) = (read("README.md"), read(".ci/run"));
    let test = readme.lines().map(str::trim).find(|l| l.starts_with("cargo test")).expect("the README's test command");
    assert!(ci.lines().any(|l| l.trim() == test), ".ci/run does not run the README's `{test}`");
    let features = test.split_once("--features ").and_then(|(_, f)| f.split_whitespace().next()).unwrap_or("");
    assert!(features.split(',').any(|f| f == "variants"), "`{test}` leaves the kernel variants' tests out");
}
