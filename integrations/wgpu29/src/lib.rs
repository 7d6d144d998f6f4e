//! wgpu-pad's pads on wgpu 29. The crate without its `wgpu` feature (no wgpu 30 in the tree)
//! makes each pad's [`Program`]: its WGSL and, per dispatch, uniform bytes, bindings and
//! workgroup counts. [`Host`] runs it with wgpu 29's own calls: the code an engine on wgpu 29
//! copies (docs/HOSTING.md says what each step relies on).

use std::collections::HashMap;
use std::sync::Mutex;

use wgpu::util::DeviceExt;
use wgpu_pad::gpu::{DeviceLimits, PipelineKey, Program};

/// What a [`Program`] must fit, read from the device's limits.
pub fn device_limits(device: &wgpu::Device) -> DeviceLimits {
    let l = device.limits();
    DeviceLimits {
        max_binding: l.max_storage_buffer_binding_size.min(l.max_buffer_size),
        max_buffer: l.max_buffer_size,
        storage_alignment: l.min_storage_buffer_offset_alignment as u64,
        max_groups: l.max_compute_workgroups_per_dimension,
    }
}

/// Runs programs on one wgpu 29 device, a pipeline per [`PipelineKey`].
pub struct Host {
    device: wgpu::Device,
    pipelines: Mutex<HashMap<PipelineKey, wgpu::ComputePipeline>>,
    /// Bound where a dispatch reads no input.
    empty_input: wgpu::Buffer,
}

impl Host {
    /// A host for `device`.
    pub fn new(device: &wgpu::Device) -> Host {
        let empty_input = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-pad empty input"),
            size: Program::EMPTY_INPUT_BYTES,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        Host { device: device.clone(), pipelines: Mutex::new(HashMap::new()), empty_input }
    }

    /// Records `program` into `encoder`: `input` and `output` are the buffers its views were
    /// made for (STORAGE usage).
    pub fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        program: &Program,
        input: &wgpu::Buffer,
        output: &wgpu::Buffer,
    ) {
        if program.dispatches().is_empty() {
            return;
        }
        let pipeline = self.pipeline(program);
        // Every dispatch's parameters in one uniform buffer, at aligned offsets.
        let align = self.device.limits().min_uniform_buffer_offset_alignment as u64;
        let stride = Program::PARAMS_BYTES.next_multiple_of(align);
        let mut params = vec![0u8; (stride * program.dispatches().len() as u64) as usize];
        for (i, d) in program.dispatches().iter().enumerate() {
            let at = i * stride as usize;
            params[at..at + d.params().len()].copy_from_slice(d.params());
        }
        let uniform = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("wgpu-pad params"),
            contents: &params,
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let layout = pipeline.get_bind_group_layout(0);
        let binding = |buffer, (offset, size): (u64, u64)| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: wgpu::BufferSize::new(size) })
        };
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        for (i, d) in program.dispatches().iter().enumerate() {
            let input = match d.input() {
                Some(range) => binding(input, range),
                None => binding(&self.empty_input, (0, Program::EMPTY_INPUT_BYTES)),
            };
            let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("wgpu-pad bind group"),
                layout: &layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: binding(&uniform, (i as u64 * stride, Program::PARAMS_BYTES)),
                    },
                    wgpu::BindGroupEntry { binding: 1, resource: input },
                    wgpu::BindGroupEntry { binding: 2, resource: binding(output, d.output()) },
                ],
            });
            pass.set_bind_group(0, &group, &[]);
            let [x, y, z] = d.workgroups();
            pass.dispatch_workgroups(x, y, z);
        }
    }

    /// The program's pipeline, compiled on first use.
    fn pipeline(&self, program: &Program) -> wgpu::ComputePipeline {
        let mut pipelines = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        let make = || {
            let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&program.label()),
                source: wgpu::ShaderSource::Wgsl(program.wgsl().into()),
            });
            self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&program.label()),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        pipelines.entry(program.pipeline_key()).or_insert_with(make).clone()
    }

    /// Pipelines compiled so far.
    pub fn pipeline_count(&self) -> usize {
        self.pipelines.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}
