//! wgpu-pad's pads on wgpu 29. The crate without its `wgpu` feature (no wgpu 30 in the tree)
//! makes each pad's [`Program`]: its WGSL and, per dispatch, uniform bytes, bindings and
//! workgroup counts. [`Host`] runs it with wgpu 29's own calls: the code an engine on wgpu 29
//! copies (docs/HOSTING.md says what each step relies on).

use std::collections::HashMap;
use std::sync::Mutex;

use wgpu::util::DeviceExt;
use wgpu_pad::gpu::{DeviceLimits, PipelineKey, Program};
use wgpu_pad::{PadError, Side};

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
    /// made for (STORAGE usage). Refused, with nothing recorded, as `PadKernel::prepare`
    /// refuses: a program made for other limits than this device's
    /// ([`PadError::DeviceUnsupported`] naming the limit: make it with [`device_limits`]),
    /// bindings past a buffer's end ([`PadError::BufferTooSmall`]), input and output
    /// overlapping in one buffer ([`PadError::Overlap`]).
    pub fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        program: &Program,
        input: &wgpu::Buffer,
        output: &wgpu::Buffer,
    ) -> Result<(), PadError> {
        self.check(program, input, output)?;
        if program.dispatches().is_empty() {
            return Ok(());
        }
        let pipelines: Vec<wgpu::ComputePipeline> =
            (0..program.pipeline_count()).map(|i| self.pipeline(program, i)).collect();
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
        // Each pipeline's own layout (derived from its WGSL: one pipeline's does not bind another's).
        let layouts: Vec<wgpu::BindGroupLayout> = pipelines.iter().map(|p| p.get_bind_group_layout(0)).collect();
        let binding = |buffer, (offset, size): (u64, u64)| {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: wgpu::BufferSize::new(size) })
        };
        let mut pass = encoder.begin_compute_pass(&Default::default());
        for (i, d) in program.dispatches().iter().enumerate() {
            pass.set_pipeline(&pipelines[d.pipeline()]);
            let input = match d.input() {
                Some(range) => binding(input, range),
                None => binding(&self.empty_input, (0, Program::EMPTY_INPUT_BYTES)),
            };
            let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("wgpu-pad bind group"),
                layout: &layouts[d.pipeline()],
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
        Ok(())
    }

    /// What wgpu would otherwise meet with a validation error (its default handler panics).
    fn check(&self, program: &Program, input: &wgpu::Buffer, output: &wgpu::Buffer) -> Result<(), PadError> {
        let limits = device_limits(&self.device);
        let unsupported = |what: String| PadError::DeviceUnsupported {
            missing: format!("{what} (the Program was made for other limits: make it with device_limits)"),
        };
        for d in program.dispatches() {
            for (which, buffer, bind) in [(Side::Input, input, d.input()), (Side::Output, output, Some(d.output()))] {
                let Some((offset, size)) = bind else { continue };
                if size > limits.max_binding {
                    return Err(unsupported(format!(
                        "a binding of {size} bytes; max_storage_buffer_binding_size is {}",
                        limits.max_binding
                    )));
                }
                if offset % limits.storage_alignment != 0 {
                    return Err(unsupported(format!(
                        "a binding at byte {offset}; min_storage_buffer_offset_alignment is {}",
                        limits.storage_alignment
                    )));
                }
                if offset.saturating_add(size) > buffer.size() {
                    let start = if which == Side::Input { program.input_span() } else { program.output_span() };
                    let view = start.map_or(offset, |s| s.0);
                    return Err(PadError::BufferTooSmall {
                        which,
                        needed: (offset + size).saturating_sub(view),
                        offset: view,
                        size: buffer.size(),
                    });
                }
            }
            if let Some(&n) = d.workgroups().iter().find(|&&n| n > limits.max_groups) {
                return Err(unsupported(format!(
                    "{n} workgroups in one dimension; max_compute_workgroups_per_dimension is {}",
                    limits.max_groups
                )));
            }
        }
        if let (true, Some((a0, a1)), Some((b0, b1))) = (input == output, program.input_span(), program.output_span()) {
            if a0 < b1 && b0 < a1 {
                return Err(PadError::Overlap { input_start: a0, input_end: a1, output_start: b0, output_end: b1 });
            }
        }
        Ok(())
    }

    /// The program's pipeline `i`, compiled on first use.
    fn pipeline(&self, program: &Program, i: usize) -> wgpu::ComputePipeline {
        let mut pipelines = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        let make = || {
            let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&program.label(i)),
                source: wgpu::ShaderSource::Wgsl(program.wgsl(i).into()),
            });
            self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&program.label(i)),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        pipelines.entry(program.pipeline_key(i)).or_insert_with(make).clone()
    }

    /// Pipelines compiled so far.
    pub fn pipeline_count(&self) -> usize {
        self.pipelines.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}
