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
    host.record(&mut enc, &program, &input, &output);
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
