//! [`PadKernel`]: records pads into a caller's command encoder, on the caller's device and
//! buffers. The library half of wgpu's `execute_gpu_inner`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::launch::{launch, shader_source, width_of, Kernel, Launch};
use crate::dtype::ElementWidth;
use crate::error::{PadError, Result};
use crate::plan::{Mode, PadPlan};

/// What a pipeline is specialised for: mode, moved width, grid shape, one-period pads.
type PipelineKey = (Mode, ElementWidth, u32, bool);

/// A range of a caller's buffer: where a pad reads its input or writes its output.
///
/// The offset must be a multiple of the device's `min_storage_buffer_offset_alignment`
/// (256 on most devices). The range read or written is the plan's byte size rounded up to
/// a multiple of 4; on output, bytes past the plan's size in a last partial word are kept.
#[derive(Debug, Clone, Copy)]
pub struct BufferRange<'a> {
    /// The buffer; it needs `STORAGE` usage.
    pub buffer: &'a wgpu::Buffer,
    /// Byte offset into it.
    pub offset: u64,
    /// The range's size in bytes, if the caller bounds it; `None` for the rest of the buffer.
    pub size: Option<u64>,
}

impl<'a> BufferRange<'a> {
    /// The whole buffer, from offset 0.
    pub fn whole(buffer: &'a wgpu::Buffer) -> Self {
        BufferRange { buffer, offset: 0, size: None }
    }

    /// The rest of the buffer from `offset`.
    pub fn at(buffer: &'a wgpu::Buffer, offset: u64) -> Self {
        BufferRange { buffer, offset, size: None }
    }
}

/// Records ONNX Pad into command encoders on one `wgpu::Device`.
///
/// Made once per device and shared (it is `Send + Sync`); pipelines compile lazily, once per
/// (mode, element width), and are cached. Each [`encode`](Self::encode) owns its small
/// uniform buffer, so several pads may be encoded into one encoder and submitted together.
///
/// ```no_run
/// # fn demo(device: &wgpu::Device, queue: &wgpu::Queue, input: &wgpu::Buffer, output: &wgpu::Buffer) -> wgpu_pad::Result<()> {
/// use wgpu_pad::{gpu::{BufferRange, PadKernel}, DataType, Mode, PadPlan, PadRequest};
/// let kernel = PadKernel::new(device);
/// let plan = PadPlan::new(DataType::Float16, &[1, 3, 224, 224], &PadRequest::new(vec![0, 0, 2, 2, 0, 0, 2, 2]).mode(Mode::Reflect))?;
/// let mut encoder = device.create_command_encoder(&Default::default());
/// kernel.encode(&mut encoder, &plan, BufferRange::whole(input), BufferRange::at(output, 256))?;
/// queue.submit([encoder.finish()]);
/// # Ok(()) }
/// ```
pub struct PadKernel {
    device: wgpu::Device,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    pipelines: Mutex<HashMap<PipelineKey, wgpu::ComputePipeline>>,
    compiles: AtomicUsize,
    /// Bound in place of an empty input (constant pads of an empty tensor).
    empty_input: wgpu::Buffer,
    limits: wgpu::Limits,
}

/// What one [`PadKernel::encode`] recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoded {
    /// Workgroups dispatched (all zero for an empty output: nothing recorded).
    pub workgroups: [u32; 3],
    /// Bytes the pad writes.
    pub out_bytes: u64,
}

fn storage_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: false },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

impl PadKernel {
    /// A kernel for `device`. Compiles nothing yet.
    pub fn new(device: &wgpu::Device) -> PadKernel {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("wgpu-pad bind group layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                storage_entry(1),
                storage_entry(2),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("wgpu-pad pipeline layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let empty_input = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-pad empty input"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        PadKernel {
            device: device.clone(),
            layout,
            pipeline_layout,
            pipelines: Mutex::new(HashMap::new()),
            compiles: AtomicUsize::new(0),
            empty_input,
            limits: device.limits(),
        }
    }

    /// The device this kernel records for.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// How many pipelines this kernel has compiled so far (warm calls compile none). There is
    /// one per mode, moved width and grid shape (see `shaders/wide.wgsl`), compiled on first use.
    pub fn compile_count(&self) -> usize {
        self.compiles.load(Ordering::Relaxed)
    }

    /// Compiles (or fetches) the pipeline for a key (see `shaders/`).
    fn pipeline(&self, key: PipelineKey) -> Result<wgpu::ComputePipeline> {
        let mut cache = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = cache.get(&key) {
            return Ok(p.clone());
        }
        let (mode, width, grid, one_period) = key;
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("wgpu-pad shader"),
            source: wgpu::ShaderSource::Wgsl(shader_source(mode, width, grid, one_period).into()),
        });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("wgpu-pad pipeline"),
            layout: Some(&self.pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(PadError::Gpu {
                reason: format!("compiling the {mode} shader for {width:?}: {}", describe(&e)),
            });
        }
        self.compiles.fetch_add(1, Ordering::Relaxed);
        log::debug!("wgpu-pad: compiled the {mode} pipeline for {width:?}, grid {grid}, one period {one_period}");
        cache.insert(key, pipeline.clone());
        Ok(pipeline)
    }

    /// Compiles every pipeline the plan's mode and type need, ahead of time.
    pub fn prepare(&self, plan: &PadPlan) -> Result<()> {
        if plan.dtype().gpu_capable() && plan.out_len() > 0 {
            let l = launch(plan, self.limits.max_compute_workgroups_per_dimension)?;
            self.pipeline((plan.mode(), width_of(l.word_bytes), l.params.grid, l.one_period))?;
        }
        Ok(())
    }

    /// Records `plan` into `encoder`: reads `input`, writes `output`. Everything is
    /// validated first (type, usages, sizes, alignment, overlap, device limits); an error
    /// records nothing.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &PadPlan,
        input: BufferRange<'_>,
        output: BufferRange<'_>,
    ) -> Result<Encoded> {
        self.encode_with_timestamps(encoder, plan, input, output, None)
    }

    /// [`encode`](Self::encode), writing the compute pass's begin and end timestamps.
    pub fn encode_with_timestamps(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &PadPlan,
        input: BufferRange<'_>,
        output: BufferRange<'_>,
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<Encoded> {
        let (in_bytes, out_bytes) = plan.byte_sizes().ok_or_else(|| PadError::Unsupported {
            dtype: plan.dtype().name(),
            reason: "strings run on the CPU path (cpu::pad, or GpuContext::pad which falls back)".into(),
        })?;
        let width = plan.dtype().width();
        if width.bytes().is_none() {
            return Err(PadError::Unsupported {
                dtype: plan.dtype().name(),
                reason: "4-bit types run on the CPU path (cpu::pad, or GpuContext::pad which falls back)".into(),
            });
        }
        let in_bind = self.check_range("input", &input, in_bytes)?;
        let out_bind = self.check_range("output", &output, out_bytes)?;
        if input.buffer == output.buffer && in_bytes > 0 && out_bytes > 0 {
            let (a0, a1) = (input.offset, input.offset + in_bind);
            let (b0, b1) = (output.offset, output.offset + out_bind);
            if a0 < b1 && b0 < a1 {
                return Err(PadError::Overlap { input_start: a0, input_end: a1, output_start: b0, output_end: b1 });
            }
        }
        if out_bytes == 0 {
            return Ok(Encoded { workgroups: [0; 3], out_bytes });
        }
        let Launch { params, workgroups, kernel, word_bytes, one_period } =
            launch(plan, self.limits.max_compute_workgroups_per_dimension)?;
        debug_assert_eq!(kernel == Kernel::Narrow, word_bytes < 4);
        let pipeline = self.pipeline((plan.mode(), width_of(word_bytes), params.grid, one_period))?;

        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let uniform =
            buffer_with(&self.device, "wgpu-pad params", wgpu::BufferUsages::UNIFORM, bytemuck::bytes_of(&params))?;
        let input_binding = if in_bytes == 0 {
            wgpu::BufferBinding { buffer: &self.empty_input, offset: 0, size: None }
        } else {
            wgpu::BufferBinding { buffer: input.buffer, offset: input.offset, size: wgpu::BufferSize::new(in_bind) }
        };
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("wgpu-pad bind group"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Buffer(input_binding) },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: output.buffer,
                        offset: output.offset,
                        size: wgpu::BufferSize::new(out_bind),
                    }),
                },
            ],
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(PadError::OutOfMemory { reason: describe(&e) });
        }
        let mut pass =
            encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("wgpu-pad"), timestamp_writes });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(workgroups[0], workgroups[1], workgroups[2]);
        Ok(Encoded { workgroups, out_bytes })
    }

    /// Checks one buffer range for `bytes` of data; returns the binding size (rounded up
    /// to 4 bytes).
    fn check_range(&self, which: &'static str, r: &BufferRange<'_>, bytes: u64) -> Result<u64> {
        let usage = r.buffer.usage();
        if !usage.contains(wgpu::BufferUsages::STORAGE) {
            return Err(PadError::BufferUsage { which, usage: "STORAGE", has: format!("{usage:?}") });
        }
        let alignment = self.limits.min_storage_buffer_offset_alignment as u64;
        if !r.offset.is_multiple_of(alignment) {
            return Err(PadError::MisalignedOffset { which, offset: r.offset, alignment });
        }
        let bind = bytes.next_multiple_of(4);
        let size = r.buffer.size();
        let available = match r.size {
            Some(s) if r.offset.checked_add(s).is_some_and(|end| end <= size) => s,
            Some(s) => {
                return Err(PadError::BufferTooSmall { which, needed: s, offset: r.offset, size });
            }
            None => size.saturating_sub(r.offset),
        };
        if bytes > 0 && (bind > available || r.offset > size) {
            return Err(PadError::BufferTooSmall { which, needed: bind, offset: r.offset, size: available.min(size) });
        }
        let max = self.limits.max_storage_buffer_binding_size;
        if bind > max {
            return Err(PadError::TooLarge {
                what: format!("{which} of {bind} bytes exceeds the device's max_storage_buffer_binding_size of {max}"),
            });
        }
        Ok(bind)
    }
}

/// A wgpu error on one line: its description (several lines, with the causes) joined.
pub(crate) fn describe(e: &wgpu::Error) -> String {
    e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A buffer holding `bytes` (rounded up to 4 with zeros). Unlike wgpu's `create_buffer_init`,
/// which panics when the device is lost, a failure here is an error.
pub(crate) fn buffer_with(
    device: &wgpu::Device,
    label: &str,
    usage: wgpu::BufferUsages,
    bytes: &[u8],
) -> Result<wgpu::Buffer> {
    let size = (bytes.len() as u64).next_multiple_of(4).max(4);
    let buffer =
        device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: true });
    {
        let mut view = buffer.slice(..).get_mapped_range_mut().map_err(|e| PadError::DeviceLost {
            reason: format!(
                "cannot fill the {label} buffer: {}",
                e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
            ),
        })?;
        let mut padded = bytes.to_vec();
        padded.resize(size as usize, 0);
        view.copy_from_slice(&padded);
    }
    buffer.unmap();
    Ok(buffer)
}
