//! A pad run from its `Program` through plain wgpu calls, without `PadKernel`: what any
//! WebGPU host (another wgpu major, Dawn, a JavaScript engine) does with the crate's
//! kernels. The program is plain data: its pipelines' WGSL, and per dispatch its pipeline,
//! uniform bytes, bindings and workgroup counts. Bindings are capped at 64 KiB here so that the pad takes several
//! dispatches. Checks the result against the CPU path, bit for bit. It runs on the crate
//! without its `wgpu` feature, the host bringing its own wgpu (CI runs it so):
//!
//!     cargo run --release --example program --no-default-features

use wgpu::util::DeviceExt;
use wgpu_pad::gpu::{BufferView, DeviceLimits, Program};
use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))?;
    println!("adapter: {}", adapter.get_info().name);

    // An f16 image batch padded by 3 on each side of H and W, reflect.
    let shape = [2, 3, 100, 120];
    let x: Vec<u16> = (0..shape.iter().product::<usize>()).map(|i| half::f16::from_f32(i as f32).to_bits()).collect();
    let x = Tensor::from_slice(DataType::Float16, shape.to_vec(), &x)?;
    let plan = PadPlan::new(x.dtype(), &shape, &PadRequest::new(vec![0, 0, 3, 3, 0, 0, 3, 3]).mode(Mode::Reflect))?;
    let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
    let (in_size, out_size) = (in_bytes.next_multiple_of(4), out_bytes.next_multiple_of(4));

    // The program: no device needed to make it, only the limits it must fit (read here from
    // the host's own wgpu, whichever major; bindings capped at 64 KiB to show the windows).
    let l = device.limits();
    let limits = DeviceLimits {
        max_binding: l.max_storage_buffer_binding_size.min(l.max_buffer_size).min(64 << 10),
        max_buffer: l.max_buffer_size,
        storage_alignment: l.min_storage_buffer_offset_alignment as u64,
        max_groups: l.max_compute_workgroups_per_dimension,
    };
    let program = Program::new(&plan, &BufferView::dense(0, in_size), &BufferView::dense(0, out_size), &limits)?;

    // The host's half: buffers, its pipelines (a pad has one), a uniform slot and a bind group
    // per dispatch.
    let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let mut input = x.bytes().unwrap().to_vec();
    input.resize(in_size as usize, 0);
    let input =
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: &input, usage: storage });
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: out_size,
        usage: storage,
        mapped_at_creation: false,
    });
    let pipelines: Vec<wgpu::ComputePipeline> = (0..program.pipeline_count())
        .map(|i| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(program.wgsl(i).into()),
            });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&program.label(i)),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            })
        })
        .collect();
    let slot = Program::PARAMS_BYTES.next_multiple_of(device.limits().min_uniform_buffer_offset_alignment as u64);
    let mut params = vec![0u8; slot as usize * program.dispatches().len()];
    for (i, d) in program.dispatches().iter().enumerate() {
        params[i * slot as usize..][..d.params().len()].copy_from_slice(d.params());
    }
    let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &params,
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let binding = |buffer, (offset, size): (u64, u64)| {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: wgpu::BufferSize::new(size) })
    };
    let placeholder = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: Program::EMPTY_INPUT_BYTES,
        usage: storage,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        for (i, d) in program.dispatches().iter().enumerate() {
            let pipeline = &pipelines[d.pipeline()];
            pass.set_pipeline(pipeline);
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: binding(&params, (i as u64 * slot, Program::PARAMS_BYTES)),
                    },
                    // A dispatch that reads nothing binds any EMPTY_INPUT_BYTES of storage.
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: match d.input() {
                            Some(range) => binding(&input, range),
                            None => placeholder.as_entire_binding(),
                        },
                    },
                    wgpu::BindGroupEntry { binding: 2, resource: binding(&output, d.output()) },
                ],
            });
            pass.set_bind_group(0, &bind_group, &[]);
            let [x, y, z] = d.workgroups();
            pass.dispatch_workgroups(x, y, z);
        }
    }
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: out_size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(&output, 0, &readback, 0, out_size);
    queue.submit([encoder.finish()]);
    readback.slice(..).map_async(wgpu::MapMode::Read, |r| r.expect("mapping the readback"));
    device.poll(wgpu::PollType::wait_indefinitely())?;
    let got = readback.slice(..).get_mapped_range()?[..out_bytes as usize].to_vec();

    let want = cpu::pad(&plan, &x)?;
    println!(
        "{:?} -> {:?} reflect: {} dispatches of {} pipeline(s)",
        plan.in_shape(),
        plan.out_shape(),
        program.dispatches().len(),
        program.pipeline_count()
    );
    if got == want.bytes().unwrap() {
        println!("ok: {out_bytes} bytes equal the CPU path's");
        Ok(())
    } else {
        Err("the program's output differs from the CPU path".into())
    }
}
