//! An engine-style pipeline on the caller's own device: a producer pass writes a tensor
//! into a pooled buffer at an offset, the pad is recorded into the same encoder, a consumer
//! pass reads the padded tensor, and one submit runs all three. The result is checked
//! against the CPU path.
//!
//! ```text
//! cargo run --release --example embed
//! ```
//!
//! As in wgpu's `hello_compute`: `execute_gpu` makes the device, `execute_gpu_inner` takes
//! `&Device, &Queue` and does the work, which is all an engine does.

use wgpu_pad::gpu::{BufferRange, PadKernel};
use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};

const SHAPE: [usize; 3] = [2, 16, 16];
const PADS: [i64; 6] = [0, 3, 3, 0, 3, 3];

const PRODUCER: &str = r#"
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&x)) { x[id.x] = f32(id.x) * 0.25 - 10.0; }
}"#;

const CONSUMER: &str = r#"
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<storage, read_write> z: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&z)) { z[id.x] = y[id.x] * 2.0 + 1.0; }
}"#;

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn,wgpu_hal::gles=off")).init();
    if let Err(e) = pollster::block_on(execute_gpu()) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn execute_gpu() -> Result<(), String> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        })
        .await
        .map_err(|e| format!("no GPU adapter: {e}"))?;
    let info = adapter.get_info();
    let (device, queue) = adapter.request_device(&Default::default()).await.map_err(|e| e.to_string())?;
    println!("adapter: {} ({:?})", info.name, info.backend);
    execute_gpu_inner(&device, &queue).await
}

/// Runs a pass of `source` over `bindings` (buffer ranges) with `n` invocations.
fn pass(
    device: &wgpu::Device,
    encoder: &mut wgpu::CommandEncoder,
    source: &str,
    bindings: &[wgpu::BufferBinding],
    n: u32,
) {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let entries: Vec<_> = bindings
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: wgpu::BindingResource::Buffer(b.clone()) })
        .collect();
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut pass = encoder.begin_compute_pass(&Default::default());
    pass.set_pipeline(&pipeline);
    pass.set_bind_group(0, &bind_group, &[]);
    pass.dispatch_workgroups(n.div_ceil(64), 1, 1);
}

async fn execute_gpu_inner(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(), String> {
    let plan = PadPlan::new(DataType::Float32, &SHAPE, &PadRequest::new(PADS.to_vec()).mode(Mode::Reflect))
        .map_err(|e| e.to_string())?;
    let (in_bytes, out_bytes) = plan.byte_sizes().expect("fixed width");

    // One pooled allocation: [unused | x | padded y | z], each at an aligned offset.
    let align = device.limits().min_storage_buffer_offset_alignment as u64;
    let x_at = align;
    let y_at = (x_at + in_bytes).next_multiple_of(align);
    let z_at = (y_at + out_bytes).next_multiple_of(align);
    let pool_size = z_at + out_bytes;
    let pool = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("engine pool"),
        size: pool_size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let range = |offset, size| wgpu::BufferBinding { buffer: &pool, offset, size: wgpu::BufferSize::new(size) };

    let kernel = PadKernel::new(device).map_err(|e| e.to_string())?;
    let mut encoder = device.create_command_encoder(&Default::default());
    let n_in = plan.in_len() as u32;
    let n_out = plan.out_len() as u32;
    pass(device, &mut encoder, PRODUCER, &[range(x_at, in_bytes)], n_in);
    let recorded = kernel
        .encode(
            &mut encoder,
            &plan,
            BufferRange { size: Some(in_bytes), ..BufferRange::at(&pool, x_at) },
            BufferRange { size: Some(out_bytes), ..BufferRange::at(&pool, y_at) },
        )
        .map_err(|e| e.to_string())?;
    pass(device, &mut encoder, CONSUMER, &[range(y_at, out_bytes), range(z_at, out_bytes)], n_out);
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: out_bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(&pool, z_at, &readback, 0, out_bytes);
    queue.submit([encoder.finish()]);

    let (tx, rx) = std::sync::mpsc::channel();
    readback.slice(..).map_async(wgpu::MapMode::Read, move |r| tx.send(r).unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| e.to_string())?;
    rx.recv().unwrap().map_err(|e| e.to_string())?;
    let z: Vec<f32> = bytemuck::cast_slice(&readback.slice(..).get_mapped_range().map_err(|e| e.to_string())?).to_vec();

    // The same pipeline on the host: produce, pad on the CPU path, consume.
    let x: Vec<f32> = (0..n_in).map(|i| i as f32 * 0.25 - 10.0).collect();
    let x = Tensor::from_slice(DataType::Float32, SHAPE.to_vec(), &x).map_err(|e| e.to_string())?;
    let y = cpu::pad(&plan, &x).map_err(|e| e.to_string())?;
    let want: Vec<f32> = y.as_slice::<f32>().unwrap().iter().map(|v| v * 2.0 + 1.0).collect();

    println!(
        "producer -> pad {:?} {:?} reflect -> {:?} ({} dispatch) -> consumer, one submit",
        plan.in_shape(),
        PADS,
        plan.out_shape(),
        recorded.dispatches
    );
    println!("first padded row after the consumer: {:?}", &z[..plan.out_shape()[2]]);
    if z.iter().map(|v| v.to_bits()).eq(want.iter().map(|v| v.to_bits())) {
        println!("ok: {} elements match the CPU path bit for bit", z.len());
        Ok(())
    } else {
        Err("the GPU pipeline differs from the CPU path".into())
    }
}
