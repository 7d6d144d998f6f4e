//! `GpuContext`: host tensors up and back on its own device, its buffer pool and output
//! arena, buffers mapped directly where memory is shared, contexts sharing an instance,
//! threads on one device, empty tensors, and refused plans falling back to the CPU visibly.

mod common;

use common::*;

use wgpu_pad::gpu::{BufferRange, ExecPath, GpuContext};
use wgpu_pad::{cpu, DataType, GpuLimit, Mode, PadError, PadPlan, PadRequest, Tensor};

#[test]
fn four_threads_pad_on_one_device() {
    let Some(ctx) = gpu() else { return };
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

#[test]
fn empty_inputs_and_outputs() {
    let Some(ctx) = gpu() else { return };
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
    let Some(shared) = gpu() else { return };
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
    let Some(shared) = gpu() else { return };
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

/// Contexts can share an instance the caller names, and a buffer of one such
/// context given to another's kernel is a typed error (of another instance it would alias an
/// unrelated buffer by id, silently).
#[test]
fn contexts_sharing_an_instance_refuse_each_others_buffers() {
    if gpu().is_none() {
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

/// `GpuContext::output_arena` feeds the readbacks: an output given back is the
/// memory the next pad of its size reads back into (the arena holds it in between, and not
/// after), bit for bit.
#[test]
fn readbacks_reuse_what_is_given_back_to_the_context_arena() {
    let Some(ctx) = gpu() else { return };
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

/// Where the GPU path cannot run a plan, `GpuContext::pad` runs it on the CPU and says so,
/// before uploading anything; the kernel returns the typed cause.
#[test]
fn refused_plans_fall_back_visibly() {
    let Some(main) = common::gpu() else { return };
    let limits = wgpu::Limits { max_buffer_size: 1 << 20, ..main.device().limits() };
    let ctx = pollster::block_on(GpuContext::with_limits(Some(limits))).unwrap();
    let p = plan(DataType::Float32, &[600, 600], &[1, 1, 1, 1], Mode::Reflect); // 1.4 MB
    let x = pattern(DataType::Float32, &[600, 600], 2);
    let padded = ctx.pad_blocking(&p, &x).unwrap();
    let ExecPath::CpuFallback { reason } = &padded.path else { panic!("ran on {:?}", padded.path) };
    assert!(reason.contains("max_buffer_size"), "{reason}");
    assert!(padded.tensor == cpu::pad(&p, &x).unwrap());
    let e = ctx.kernel().check_plan(&p).unwrap_err();
    assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::BufferSize, .. }), "{e}");
    // More padded axes than the shaders hold.
    let shape = vec![1usize; 17];
    let mut pads = vec![1i64; 17];
    pads.extend([0; 17]);
    let q = PadPlan::new(DataType::Int8, &shape, &PadRequest::new(pads).mode(Mode::Edge)).unwrap();
    let x = pattern(DataType::Int8, &shape, 1);
    let padded = main.pad_blocking(&q, &x).unwrap();
    assert!(
        matches!(&padded.path, ExecPath::CpuFallback { reason } if reason.contains("17 axes")),
        "{:?}",
        padded.path
    );
    assert!(padded.tensor == cpu::pad(&q, &x).unwrap());
    assert!(matches!(main.kernel().check_plan(&q), Err(PadError::GpuLimit { limit: GpuLimit::Rank, .. })));
}
