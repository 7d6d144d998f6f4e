//! An engine-style pipeline on the caller's own device: a producer writes a tensor into a
//! pooled buffer, a prepared pad writes it padded into one slice of a concat (a strided view
//! at an unaligned offset), a consumer reads the concat; all three in one compute pass and
//! one submit. The result is checked against the CPU path.
//!
//! ```text
//! cargo run --release --example embed
//! ```
//!
//! As in wgpu's `hello_compute`: `execute_gpu` makes the device, `execute_gpu_inner` takes
//! `&Device, &Queue` and does the work, which is all an engine does.

// The auto-layout pipeline of a WGSL source, as the tests build theirs.
#[path = "../tests/common/pipeline.rs"]
mod pipeline;

use wgpu_pad::gpu::{BufferRange, PadKernel};
use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};

const SHAPE: [usize; 3] = [2, 16, 16];
const PADS: [i64; 6] = [0, 3, 3, 0, 3, 3];
/// Columns of the concat beyond the padded slice.
const EXTRA: usize = 2;

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
    if (id.x < arrayLength(&z)) { z[id.x] = y[id.x + 3u] * 2.0 + 1.0; }
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

/// One of the engine's own stages: a pipeline and its bind group over buffer ranges.
fn stage(
    device: &wgpu::Device,
    source: &str,
    bindings: &[wgpu::BufferBinding],
) -> (wgpu::ComputePipeline, wgpu::BindGroup) {
    let pipeline = pipeline::compute_pipeline(device, source);
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
    (pipeline, bind_group)
}

async fn execute_gpu_inner(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(), String> {
    let plan = PadPlan::new(DataType::Float32, &SHAPE, &PadRequest::new(PADS.to_vec()).mode(Mode::Reflect))
        .map_err(|e| e.to_string())?;
    let (in_bytes, _) = plan.byte_sizes().expect("fixed width");
    let [c, h, w] = [plan.out_shape()[0], plan.out_shape()[1], plan.out_shape()[2]];

    // One pooled allocation: [unused | x | unused | cat | z]. The padded tensor is one slice
    // of a concat on the innermost axis: cat is [c, h, w + EXTRA], the pad writes columns
    // 0..w through a strided view, the engine fills the rest. Offsets need not be aligned.
    let align = device.limits().min_storage_buffer_offset_alignment as u64;
    let cat_w = w + EXTRA;
    let cat_bytes = (c * h * cat_w * 4) as u64;
    let x_at = align;
    let cat_at = (x_at + in_bytes).next_multiple_of(align) + 12; // 12 bytes past an aligned offset
    let z_at = (cat_at + cat_bytes).next_multiple_of(align);
    let pool = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("engine pool"),
        size: z_at + cat_bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let range = |offset, size| wgpu::BufferBinding { buffer: &pool, offset, size: wgpu::BufferSize::new(size) };

    // Once per model: the kernel; once per buffer assignment: the prepared pad. The prepared
    // pad is tied to these two ranges, not just to the pool: should the engine hand either
    // range to another tensor (a new buffer assignment), it must drop `pad` and prepare again,
    // or the next recording writes into that tensor (see PreparedPad's docs).
    let kernel = PadKernel::new(device).map_err(|e| e.to_string())?;
    let cat_strides = [(h * cat_w) as u64, cat_w as u64, 1];
    let pad = kernel
        .prepare(
            &plan,
            BufferRange::new(&pool, x_at, in_bytes),
            BufferRange::at(&pool, cat_at).with_strides(&cat_strides),
        )
        .map_err(|e| e.to_string())?;
    let producer = stage(device, PRODUCER, &[range(x_at, in_bytes)]);
    // The consumer's bindings must start at aligned offsets: it reads from the aligned
    // offset below cat and skips the 3 floats before it.
    let consumer = stage(device, CONSUMER, &[range(cat_at - 12, cat_bytes + 12), range(z_at, cat_bytes)]);

    // Per inference: the concat's other slice (zeros here), then one compute pass holding
    // the producer, the pad and the consumer, and one submit.
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.clear_buffer(&pool, cat_at - 12, Some(cat_bytes + 12));
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&producer.0);
        pass.set_bind_group(0, &producer.1, &[]);
        pass.dispatch_workgroups((plan.in_len() as u32).div_ceil(64), 1, 1);
        pad.record(&mut pass);
        pass.set_pipeline(&consumer.0);
        pass.set_bind_group(0, &consumer.1, &[]);
        pass.dispatch_workgroups(((c * h * cat_w) as u32).div_ceil(64), 1, 1);
    }
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: cat_bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(&pool, z_at, &readback, 0, cat_bytes);
    queue.submit([encoder.finish()]);
    kernel.pop_errors().await.map_err(|e| e.to_string())?;
    // (Native code without an executor: `kernel.pop_errors_blocking()`.)

    let (tx, rx) = std::sync::mpsc::channel();
    readback.slice(..).map_async(wgpu::MapMode::Read, move |r| tx.send(r).unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| e.to_string())?;
    rx.recv().unwrap().map_err(|e| e.to_string())?;
    let z: Vec<f32> = bytemuck::cast_slice(&readback.slice(..).get_mapped_range().map_err(|e| e.to_string())?).to_vec();

    // The same pipeline on the host: produce, pad on the CPU path, concat, consume.
    let x: Vec<f32> = (0..plan.in_len()).map(|i| i as f32 * 0.25 - 10.0).collect();
    let x = Tensor::from_slice(DataType::Float32, SHAPE.to_vec(), &x).map_err(|e| e.to_string())?;
    let y = cpu::pad(&plan, &x).map_err(|e| e.to_string())?;
    let y = y.as_slice::<f32>().unwrap();
    let want: Vec<f32> = (0..c * h * cat_w)
        .map(|i| {
            let (row, col) = (i / cat_w, i % cat_w);
            let v = if col < w { y[row * w + col] } else { 0.0 };
            v * 2.0 + 1.0
        })
        .collect();

    println!(
        "producer -> pad {:?} {:?} reflect -> {:?} in a concat view {:?} ({} dispatch) -> consumer: one pass, one submit",
        plan.in_shape(),
        PADS,
        plan.out_shape(),
        [c, h, cat_w],
        pad.dispatch_count()
    );
    println!("first row after the consumer: {:?}", &z[..cat_w]);
    if z.iter().map(|v| v.to_bits()).eq(want.iter().map(|v| v.to_bits())) {
        println!("ok: {} elements match the CPU path bit for bit", z.len());
        Ok(())
    } else {
        Err("the GPU pipeline differs from the CPU path".into())
    }
}
