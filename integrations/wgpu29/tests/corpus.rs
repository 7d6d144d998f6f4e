//! The whole conformance corpus through `Program` on wgpu 29 (the core crate without its
//! wgpu), bit for bit: on the device's own limits, and with storage bindings of 1 KiB so that
//! larger cases run as several binding windows; then views at offsets in larger buffers. On
//! lavapipe in CI (`.ci/run`); without an adapter it fails only where WGPU_PAD_REQUIRE_GPU=1.

#[path = "../../../tests/common/corpus.rs"]
#[allow(dead_code)] // the error-word helpers: the command line's tests
mod corpus;

use wgpu_pad::gpu::{BufferView, DeviceLimits, Program};
use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};
use wgpu_pad_wgpu29::{device_limits, Host};

fn device() -> Option<(wgpu::Device, wgpu::Queue)> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = match pollster::block_on(instance.request_adapter(&Default::default())) {
        Ok(a) => a,
        Err(e) if std::env::var("WGPU_PAD_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("WGPU_PAD_REQUIRE_GPU=1 but no adapter: {e}")
        }
        Err(e) => {
            eprintln!("skipping: no adapter ({e})");
            return None;
        }
    };
    eprintln!("adapter: {} (wgpu 29)", adapter.get_info().name);
    Some(pollster::block_on(adapter.request_device(&Default::default())).expect("a device"))
}

fn storage(device: &wgpu::Device, bytes: &[u8]) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    let mut padded = bytes.to_vec();
    padded.resize(bytes.len().next_multiple_of(4).max(4), 0);
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &padded,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    })
}

fn read(device: &wgpu::Device, queue: &wgpu::Queue, buffer: &wgpu::Buffer) -> Vec<u8> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    queue.submit([enc.finish()]);
    staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    let bytes = staging.slice(..).get_mapped_range().to_vec();
    bytes
}

/// Pads `input` (dense) into a buffer of `out_buffer` bytes at `out_offset`, its input at
/// `in_offset` of a buffer of its own, under `limits`; returns the output buffer's bytes and
/// the dispatches.
#[allow(clippy::too_many_arguments)]
fn pad(
    (device, queue, host): (&wgpu::Device, &wgpu::Queue, &Host),
    plan: &PadPlan,
    input: &[u8],
    in_offset: u64,
    out_offset: u64,
    out_buffer: u64,
    fill: u8,
    limits: &DeviceLimits,
) -> (Vec<u8>, usize) {
    let (in_bytes, _) = plan.byte_sizes().unwrap();
    let mut in_data = vec![0xa5u8; in_offset as usize];
    in_data.extend_from_slice(input);
    let in_size = (in_offset + in_bytes).next_multiple_of(4).max(4);
    let in_view = BufferView::dense(in_offset, in_size);
    let out_view = BufferView::dense(out_offset, out_buffer);
    let program = Program::new(plan, &in_view, &out_view, limits).expect("a program");
    let input = storage(device, &in_data);
    let output = storage(device, &vec![fill; out_buffer as usize]);
    let mut enc = device.create_command_encoder(&Default::default());
    host.record(&mut enc, &program, &input, &output).expect("recorded");
    queue.submit([enc.finish()]);
    (read(device, queue, &output), program.dispatches().len())
}

#[test]
fn the_corpus_runs_bit_for_bit_through_program_on_wgpu_29() {
    let Some((device, queue)) = device() else { return };
    let host = Host::new(&device);
    let limits = device_limits(&device);
    let small = DeviceLimits { max_binding: 1024, ..limits };
    for (name, limits) in [("the device's limits", limits), ("1 KiB bindings", small)] {
        let (mut on_gpu, mut split) = (0, 0);
        let (total, failures) = corpus::run_corpus(|case, plan| {
            if !plan.dtype().gpu_capable() {
                return cpu::pad(plan, &case.input); // strings and 4-bit types: no program
            }
            let (_, out_bytes) = plan.byte_sizes().unwrap();
            let out_size = out_bytes.next_multiple_of(4).max(4);
            let (bytes, dispatches) =
                pad((&device, &queue, &host), plan, case.input.bytes().unwrap(), 0, 0, out_size, 0, &limits);
            on_gpu += 1;
            split += usize::from(dispatches > 1);
            Tensor::from_bytes(plan.dtype(), plan.out_shape().to_vec(), bytes[..out_bytes as usize].to_vec())
        });
        assert!(failures.is_empty(), "{name}: {} of {total} cases failed:\n{}", failures.len(), failures.join("\n"));
        eprintln!("{name}: {total} cases, {on_gpu} through Program on wgpu 29, {split} of them split into windows");
        if corpus::corpus_dir().is_some() {
            corpus::check_count("corpus cases through Program on wgpu 29", on_gpu, 251, 1);
        }
        if limits.max_binding == 1024 && corpus::bundled_corpus() {
            assert!(split >= 20, "only {split} cases split into binding windows");
        }
    }
    assert!(host.pipeline_count() > 10, "{} pipelines", host.pipeline_count());
}

/// The interior-padding corpus (lax.pad's) through `Program` on wgpu 29: its own kernel, and
/// windows on 1 KiB bindings (a case no window can take is refused with a `GpuLimit`, which a
/// host runs on the CPU path).
#[test]
fn the_interior_corpus_runs_through_program_on_wgpu_29() {
    let Some((device, queue)) = device() else { return };
    let host = Host::new(&device);
    let limits = device_limits(&device);
    let cases = corpus::interior_cases();
    for limits in [limits, DeviceLimits { max_binding: 1024, ..limits }] {
        let mut on_gpu = 0;
        let failures = corpus::run_cases(&cases, |case, plan| {
            let (in_bytes, out_bytes) = plan.byte_sizes().unwrap_or((0, 0));
            let dense = |bytes: u64| BufferView::dense(0, bytes.next_multiple_of(4).max(4));
            let program = match Program::new(plan, &dense(in_bytes), &dense(out_bytes), &limits) {
                Err(wgpu_pad::PadError::GpuLimit { .. } | wgpu_pad::PadError::Unsupported { .. }) => {
                    return cpu::pad(plan, &case.input)
                }
                other => other?,
            };
            let input = storage(&device, case.input.bytes().unwrap());
            let output = storage(&device, &vec![0; out_bytes.next_multiple_of(4).max(4) as usize]);
            let mut enc = device.create_command_encoder(&Default::default());
            host.record(&mut enc, &program, &input, &output).expect("recorded");
            queue.submit([enc.finish()]);
            on_gpu += 1;
            let bytes = read(&device, &queue, &output);
            Tensor::from_bytes(plan.dtype(), plan.out_shape().to_vec(), bytes[..out_bytes as usize].to_vec())
        });
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        if !cases.is_empty() {
            corpus::check_count("interior cases through Program on wgpu 29", on_gpu, 40, 0);
        }
    }
}

/// Views at offsets in larger buffers (an engine's pooled tensors): the output lands at its
/// offset, every byte around it is left as it was, in every mode and width.
#[test]
fn views_at_offsets_in_larger_buffers() {
    let Some((device, queue)) = device() else { return };
    let host = Host::new(&device);
    let limits = device_limits(&device);
    for (dtype, shape, pads) in [
        (DataType::Float32, vec![3, 5, 7], vec![0, 1, 2, 0, 2, 3]),
        (DataType::Uint8, vec![4, 9, 3], vec![0, 2, 2, 0, 2, 2]),
        (DataType::Float16, vec![2, 300], vec![1, 5, 0, 7]),
        (DataType::Int64, vec![6, 4], vec![2, 1, 1, 2]),
    ] {
        let n: usize = shape.iter().product::<usize>() * dtype.width().bytes().unwrap();
        let x = Tensor::from_bytes(dtype, shape.clone(), (0..n).map(|i| (i * 37 % 251) as u8).collect()).unwrap();
        for mode in Mode::ALL {
            let plan = PadPlan::new(dtype, &shape, &PadRequest::new(pads.clone()).mode(mode)).unwrap();
            let want = cpu::pad(&plan, &x).unwrap();
            let (_, out_bytes) = plan.byte_sizes().unwrap();
            let (in_offset, out_offset) = (48, 272);
            let out_buffer = (out_offset + out_bytes + 100).next_multiple_of(4);
            let (got, _) = pad(
                (&device, &queue, &host),
                &plan,
                x.bytes().unwrap(),
                in_offset,
                out_offset,
                out_buffer,
                0x5c,
                &limits,
            );
            let at = out_offset as usize..(out_offset + out_bytes) as usize;
            assert_eq!(&got[at.clone()], want.bytes().unwrap(), "{dtype} {shape:?} {mode}");
            let outside = got[..at.start].iter().chain(&got[at.end..]).all(|&b| b == 0x5c);
            assert!(outside, "{dtype} {shape:?} {mode}: a byte outside the view was written");
        }
    }
}

/// Round six: the host refuses, with typed errors and nothing recorded, what PadKernel
/// refuses: input and output overlapping in one buffer, and a Program made for other limits
/// (larger bindings, a finer alignment) than this device's.
#[test]
fn what_padkernel_refuses_the_host_refuses() {
    let Some((device, _queue)) = device() else { return };
    let host = Host::new(&device);
    let limits = device_limits(&device);
    let plan = PadPlan::new(DataType::Float32, &[64, 64], &PadRequest::new(vec![1, 1, 1, 1])).unwrap();
    let buffer = 64 << 10;
    let shared = storage(&device, &vec![0; buffer as usize]);
    let overlapping =
        Program::new(&plan, &BufferView::dense(0, buffer), &BufferView::dense(256, buffer), &limits).unwrap();
    let mut enc = device.create_command_encoder(&Default::default());
    let e = host.record(&mut enc, &overlapping, &shared, &shared).unwrap_err();
    assert!(matches!(e, wgpu_pad::PadError::Overlap { .. }), "{e}");
    // Made for bindings larger than this device's.
    let input = storage(&device, &vec![0; buffer as usize]);
    let dense = BufferView::dense(0, buffer);
    let big = DeviceLimits { max_binding: 1 << 40, max_buffer: 1 << 40, ..limits };
    let tiny_device_program = Program::new(&plan, &dense, &dense, &big).unwrap();
    let mut tight = wgpu::Limits::downlevel_defaults();
    tight.max_storage_buffer_binding_size = 1024;
    tight.max_compute_workgroups_per_dimension = 2;
    let (small_device, _small_queue) = small_device(tight).expect("a device with 1 KiB bindings");
    let small_host = Host::new(&small_device);
    let (i, o) = (storage(&small_device, &vec![0; buffer as usize]), storage(&small_device, &vec![0; buffer as usize]));
    let mut enc = small_device.create_command_encoder(&Default::default());
    let e = small_host.record(&mut enc, &tiny_device_program, &i, &o).unwrap_err();
    assert!(e.to_string().contains("max_storage_buffer_binding_size is 1024"), "{e}");
    // Made for a finer storage alignment than the small device's (downlevel: 256 bytes).
    assert_eq!(small_device.limits().min_storage_buffer_offset_alignment, 256);
    let fine = DeviceLimits { storage_alignment: 4, max_binding: 1024, ..limits };
    let at_4 = Program::new(&plan, &BufferView::dense(4, buffer), &dense, &fine).unwrap();
    let mut enc = small_device.create_command_encoder(&Default::default());
    let e = small_host.record(&mut enc, &at_4, &i, &o).unwrap_err();
    assert!(e.to_string().contains("min_storage_buffer_offset_alignment is 256"), "{e}");
    // Made for more workgroups a dimension than the small device's 2 (1 KiB bindings, so
    // only the grid is past this device's limits).
    // Rows of 2 elements, 32 to a workgroup: 100 rows a 1 KiB window, 4 workgroups.
    let rows = PadPlan::new(DataType::Float32, &[200, 1], &PadRequest::new(vec![0, 0, 0, 1]).mode(Mode::Edge)).unwrap();
    let wide_grid = DeviceLimits { max_binding: 1024, storage_alignment: 256, ..limits };
    let many = Program::new(&rows, &dense, &dense, &wide_grid).unwrap();
    assert!(many.dispatches().iter().any(|d| d.workgroups().iter().any(|&n| n > 2)));
    let mut enc = small_device.create_command_encoder(&Default::default());
    let e = small_host.record(&mut enc, &many, &i, &o).unwrap_err();
    assert!(e.to_string().contains("max_compute_workgroups_per_dimension is 2"), "{e}");
    // Bindings past a buffer's end: a program for a larger buffer than the one given.
    let small = storage(&device, &vec![0; 1024]);
    let mut enc = device.create_command_encoder(&Default::default());
    let e = host.record(&mut enc, &tiny_device_program, &input, &small).unwrap_err();
    assert!(matches!(e, wgpu_pad::PadError::BufferTooSmall { which: wgpu_pad::Side::Output, .. }), "{e}");
}

/// A device of the same adapter with `limits` requested.
fn small_device(limits: wgpu::Limits) -> Result<(wgpu::Device, wgpu::Queue), wgpu::RequestDeviceError> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).expect("an adapter");
    pollster::block_on(
        adapter.request_device(&wgpu::DeviceDescriptor { required_limits: limits, ..Default::default() }),
    )
}

/// Round six: `device_limits` takes the smaller of the binding and buffer limits (wgpu's
/// defaults: 128 MiB bindings, 256 MiB buffers), so a 150 MiB output splits into windows the
/// device binds, and pads bit for bit.
#[test]
fn outputs_past_the_binding_limit_run_in_windows() {
    let Some((device, queue)) = device() else { return };
    let host = Host::new(&device);
    let limits = device_limits(&device);
    assert!(limits.max_binding <= device.limits().max_storage_buffer_binding_size);
    let n = 150 << 20;
    let plan = PadPlan::new(DataType::Uint8, &[n], &PadRequest::new(vec![3, 5]).mode(Mode::Wrap)).unwrap();
    let input: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let x = Tensor::from_bytes(DataType::Uint8, vec![n], input.clone()).unwrap();
    let out = (n as u64 + 8).next_multiple_of(4);
    let (got, dispatches) = pad((&device, &queue, &host), &plan, &input, 0, 0, out, 0, &limits);
    assert!(dispatches > 1, "one binding of 150 MiB");
    assert!(got[..n + 8] == *cpu::pad(&plan, &x).unwrap().bytes().unwrap(), "150 MiB through windows");
}

/// The pad's gradient as plain data (`Program::backward`) on wgpu 29: every mode, float32 and
/// float16 (two to a word, stored by atomics), views at offsets in larger buffers, a wrap long
/// enough to split over a workgroup's lanes; the bits of `cpu::pad_backward`, the bytes around
/// the view untouched.
#[test]
fn the_gradient_runs_through_program_on_wgpu_29() {
    let Some((device, queue)) = device() else { return };
    let host = Host::new(&device);
    let limits = device_limits(&device);
    let mut ran = 0;
    for dtype in [DataType::Float32, DataType::Float16] {
        for mode in Mode::ALL {
            for (shape, pads) in
                [(vec![3usize, 5], vec![1i64, 2, 2, 4]), (vec![2, 3], vec![-1, 1, 3, 2]), (vec![2], vec![600, 600])]
            {
                let Ok(plan) = PadPlan::new(dtype, &shape, &PadRequest::new(pads.clone()).mode(mode)) else { continue };
                let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
                let g: Vec<f32> = (0..plan.out_len()).map(|i| ((i * 7919) % 1013) as f32 / 7.0 - 60.0).collect();
                let grad_bytes: Vec<u8> = match dtype {
                    DataType::Float16 => g.iter().flat_map(|&x| half::f16::from_f32(x).to_le_bytes()).collect(),
                    _ => g.iter().flat_map(|x| x.to_le_bytes()).collect(),
                };
                let grad = Tensor::from_bytes(dtype, plan.out_shape().to_vec(), grad_bytes.clone()).unwrap();
                let want = cpu::pad_backward(&plan, &grad).unwrap();
                // grad_out 256 bytes in, grad_in 512 bytes in, 100 bytes after it.
                let (src_at, dst_at) = (256u64, 512u64);
                let mut src = vec![0xa5u8; src_at as usize];
                src.extend_from_slice(&grad_bytes);
                let dst_size = (dst_at + in_bytes + 100).next_multiple_of(4);
                let program = Program::backward(
                    &plan,
                    &BufferView::dense(src_at, (src_at + out_bytes).next_multiple_of(4)),
                    &BufferView::dense(dst_at, dst_size),
                    &limits,
                )
                .expect("a program");
                let (input, output) = (storage(&device, &src), storage(&device, &vec![0x5c; dst_size as usize]));
                let mut enc = device.create_command_encoder(&Default::default());
                host.record(&mut enc, &program, &input, &output).expect("recorded");
                queue.submit([enc.finish()]);
                let got = read(&device, &queue, &output);
                let at = dst_at as usize..(dst_at + in_bytes) as usize;
                let what = format!("{dtype} {mode} {shape:?} {pads:?}");
                assert_eq!(&got[at.clone()], want.bytes().unwrap(), "{what}");
                assert!(got[..at.start].iter().chain(&got[at.end..]).all(|&b| b == 0x5c), "{what}: outside the view");
                ran += 1;
            }
        }
    }
    assert!(ran >= 24, "{ran}");
    // Past a binding (Programs made for bindings of 1 and 4 KiB): windows of the axes the pad
    // leaves alone, a dispatch each; a wrap of both axes in parts, the first writing every
    // element (the output starts as garbage), the others adding to what it stored; parts of
    // sums split over a workgroup's lanes, on the part axis (an index's 8 images a part, of 40,
    // times 250 on the other axis) and on the axis inside it (1,200 images in 5 blocks, times
    // the part axis's 2 in the pad after, added to the pad before's sum).
    for (dtype, shape, pads, mode, binding) in [
        (DataType::Float32, &[3usize, 4, 5, 6][..], &[0i64, 0, 1, 2, 0, 0, 2, 1][..], Mode::Reflect, 1024),
        (DataType::Float32, &[20, 20], &[1, 1, 1, 1], Mode::Wrap, 1024),
        (DataType::Float16, &[1, 1], &[20, 125, 19, 124], Mode::Wrap, 4096),
        (DataType::Float16, &[1, 1], &[1, 600, 2, 599], Mode::Wrap, 8192),
    ] {
        let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
        let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
        let g: Vec<f32> = (0..plan.out_len()).map(|i| ((i * 7919) % 1013) as f32 / 7.0 - 60.0).collect();
        let grad_bytes: Vec<u8> = match dtype {
            DataType::Float16 => g.iter().flat_map(|&x| half::f16::from_f32(x).to_le_bytes()).collect(),
            _ => g.iter().flat_map(|x| x.to_le_bytes()).collect(),
        };
        let grad = Tensor::from_bytes(dtype, plan.out_shape().to_vec(), grad_bytes).unwrap();
        let small = DeviceLimits { max_binding: binding, ..limits };
        let (src_size, dst_size) = (out_bytes.next_multiple_of(4), in_bytes.next_multiple_of(4));
        let program =
            Program::backward(&plan, &BufferView::dense(0, src_size), &BufferView::dense(0, dst_size), &small).unwrap();
        let what = format!("{dtype} {mode} {shape:?} {pads:?}");
        assert!(program.dispatches().len() > 1, "{what}: {} dispatches", program.dispatches().len());
        let mut src = grad.bytes().unwrap().to_vec();
        src.resize(src_size as usize, 0);
        let (input, output) = (storage(&device, &src), storage(&device, &vec![0x5c; dst_size as usize]));
        let mut enc = device.create_command_encoder(&Default::default());
        host.record(&mut enc, &program, &input, &output).expect("recorded");
        queue.submit([enc.finish()]);
        let want = cpu::pad_backward(&plan, &grad).unwrap();
        assert_eq!(&read(&device, &queue, &output)[..in_bytes as usize], want.bytes().unwrap(), "{what}");
    }
}
