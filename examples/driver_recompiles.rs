//! The smallest program that shows why the gradient's and the interior pad's shaders read
//! their rank through `P.rank + grid_z` (a zero the driver cannot see through): in plain wgpu,
//! one pipeline and one bind group, the same dispatch submitted 100 times, once with the WGSL
//! as shipped and once with the loop bound read straight from the uniform. On lavapipe (Mesa
//! 22, which inlines uniforms that bound loops and compiles the shader again at every dispatch,
//! keeping each copy) the second costs tens of ms and about 1 MB a dispatch; the first, and
//! every other driver we know, neither. Run: `cargo run --release --example driver_recompiles`.

#[path = "../tests/common/pipeline.rs"]
mod pipeline;

use wgpu::util::DeviceExt;
use wgpu_pad::gpu::{BufferView, DeviceLimits, Program};
use wgpu_pad::{DataType, Mode, PadPlan, PadRequest};

fn resident_mb() -> Option<f64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    Some(statm.split_whitespace().nth(1)?.parse::<f64>().ok()? * 4096.0 / 1e6)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))?;
    println!("adapter: {}", adapter.get_info().name);

    // The float32 gradient of [20, 20, 2] wrapped by one on the first two axes: a crop of the
    // bulk, then the borders' sums (the gradient's own pipeline), a dispatch of them here.
    let plan =
        PadPlan::new(DataType::Float32, &[20, 20, 2], &PadRequest::new(vec![1, 1, 0, 1, 1, 0]).mode(Mode::Wrap))?;
    let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
    let program = Program::backward(
        &plan,
        &BufferView::dense(0, out_bytes),
        &BufferView::dense(0, in_bytes),
        &DeviceLimits::WEBGPU_DEFAULT,
    )?;
    let shipped = |d: &&wgpu_pad::gpu::Dispatch| program.wgsl(d.pipeline()).contains("return P.rank + grid_z;");
    let dispatch = program.dispatches().iter().find(shipped).ok_or("no dispatch of the gradient's sums")?;
    let storage = |size| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let (grad_out, grad_in) = (storage(out_bytes), storage(in_bytes));
    let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: dispatch.params(),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let shipped = program.wgsl(dispatch.pipeline());
    let plain = shipped.replace("return P.rank + grid_z;", "return P.rank;");
    assert_ne!(plain, shipped, "the shipped WGSL hides its rank");
    let binding = |buffer, (offset, size): (u64, u64)| {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: wgpu::BufferSize::new(size) })
    };
    for (name, wgsl) in [("as shipped", shipped), ("rank read plainly", plain)] {
        let pipeline = pipeline::compute_pipeline(&device, &wgsl);
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: params.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: binding(&grad_out, dispatch.input().unwrap_or((0, 16))) },
                wgpu::BindGroupEntry { binding: 2, resource: binding(&grad_in, dispatch.output()) },
            ],
        });
        let (mut first, start_mb) = (None, resident_mb());
        let start = std::time::Instant::now();
        for i in 0..101 {
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                let [x, y, z] = dispatch.workgroups();
                pass.dispatch_workgroups(x, y, z);
            }
            queue.submit([encoder.finish()]);
            device.poll(wgpu::PollType::wait_indefinitely())?;
            if i == 0 {
                first = Some((start.elapsed(), resident_mb()));
            }
        }
        let (first_time, first_mb) = first.unwrap();
        let per = (start.elapsed() - first_time) / 100;
        let grown = first_mb.zip(resident_mb()).map(|(a, b)| format!("{:+.1} MB", b - a));
        println!(
            "{name}: first dispatch {first_time:.1?} (resident {} MB before), then {per:.2?} a dispatch, resident {} over 100",
            start_mb.map_or_else(|| "unknown".into(), |mb| format!("{mb:.0}")),
            grown.unwrap_or_else(|| "unknown".into())
        );
    }
    Ok(())
}
