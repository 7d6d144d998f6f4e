//! [`PadKernel`]: records pads into a caller's command encoder or open compute pass, on the
//! caller's device and buffers. The library half of wgpu's `execute_gpu_inner`.
//!
//! Nothing here waits: requests are validated on the host before anything is created, and
//! the few errors only wgpu can see (a shader a driver rejects, memory running out) are
//! caught in error scopes whose results are checked without blocking. On native backends
//! they are known at once and returned; where they arrive later (WebGPU), they wait for
//! [`PadKernel::pop_errors`].

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
#[cfg(feature = "variants")]
use std::sync::atomic::AtomicU8;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use super::buffers::{describe, BufferRange};
use super::params::{params_stride, WORKGROUP};
use super::program::{BufferView, DeviceLimits, Dispatch, Program};
use super::shader::{PipelineKey, ProgramKind};
use super::variant::KernelVariant;
use crate::dtype::DataType;
use crate::error::{PadError, Result, Side};
use crate::mode::Mode;
use crate::plan::PadPlan;

#[cfg(not(target_arch = "wasm32"))]
type ErrorFuture = Pin<Box<dyn Future<Output = Option<wgpu::Error>> + Send>>;
#[cfg(target_arch = "wasm32")]
type ErrorFuture = Pin<Box<dyn Future<Output = Option<wgpu::Error>>>>;

/// Records ONNX Pad on one `wgpu::Device`.
///
/// Made once per device and shared (it is `Send + Sync`). Pipelines depend on mode, moved
/// word width and two fixed variants, never on shape ([`PadKernel::PIPELINES`] exist for the
/// ONNX pads; a gradient's and an interior pad's have their own, by type); they compile on
/// first use, or ahead of time with [`precompile`](Self::precompile), into an optional
/// `wgpu::PipelineCache`.
///
/// Each pad's parameters go into a small uniform buffer that is never written again; the
/// kernel keeps the last few hundred by content, so a pad repeated on the same shapes makes
/// no buffer (it holds none of the caller's buffers).
///
/// Bad buffers are errors, not panics: wrong usage, too small, misaligned, overlapping,
/// still mapped ([`PadError::BufferMapped`]), destroyed or of another device of the same
/// wgpu instance (a [`PadError::Gpu`] from a validation scope). One exception is wgpu's own:
/// a buffer of another wgpu *instance* makes wgpu 30 panic looking it up, and it offers no
/// way to ask a buffer for its device beforehand.
///
/// Two ways to record:
/// - [`encode`](Self::encode): one call, its own compute pass in the caller's encoder.
/// - [`prepare`](Self::prepare) once, then [`PreparedPad::record`] into any compute pass
///   the engine has open, as often as it likes while the buffers stay the same.
///
/// ```no_run
/// # fn demo(device: &wgpu::Device, queue: &wgpu::Queue, input: &wgpu::Buffer, output: &wgpu::Buffer) -> wgpu_pad::Result<()> {
/// use wgpu_pad::{gpu::{BufferRange, PadKernel}, DataType, Mode, PadPlan, PadRequest};
/// let kernel = PadKernel::new(device)?;
/// let plan = PadPlan::new(DataType::Float16, &[1, 3, 224, 224], &PadRequest::new(vec![0, 0, 2, 2, 0, 0, 2, 2]).mode(Mode::Reflect))?;
/// let pad = kernel.prepare(&plan, BufferRange::whole(input), BufferRange::at(output, 64))?;
/// let mut encoder = device.create_command_encoder(&Default::default());
/// {
///     let mut pass = encoder.begin_compute_pass(&Default::default());
///     // ... the engine's own dispatches ...
///     pad.record(&mut pass);
/// }
/// queue.submit([encoder.finish()]);
/// # Ok(()) }
/// ```
pub struct PadKernel {
    device: wgpu::Device,
    bind_layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    pipelines: Mutex<HashMap<PipelineKey, wgpu::ComputePipeline>>,
    compiles: AtomicUsize,
    #[cfg(feature = "variants")]
    measurement: Measurement,
    cache: Option<wgpu::PipelineCache>,
    /// Bound in place of an input a window does not read.
    empty_input: wgpu::Buffer,
    limits: DeviceLimits,
    uniform_alignment: u32,
    /// Error-scope results not known yet (WebGPU).
    pending: Mutex<Vec<ErrorFuture>>,
    /// Uniform buffers of recent pads, keyed by their contents (see `uniform_buffer`).
    uniforms: Mutex<HashMap<Vec<u8>, wgpu::Buffer>>,
}

/// What only measurement uses (the `variants` feature): the kernel variant pads are prepared
/// with (a `KernelVariant` as u8), and the layouts of a pipeline whose input is read-only
/// (`KernelVariant::read_only_input`).
#[cfg(feature = "variants")]
struct Measurement {
    variant: AtomicU8,
    read_only_bind_layout: wgpu::BindGroupLayout,
    read_only_pipeline_layout: wgpu::PipelineLayout,
}

impl From<&wgpu::Limits> for DeviceLimits {
    /// What a [`Program`] needs of a device's limits, read from wgpu's (the largest storage
    /// binding capped by the largest buffer).
    fn from(limits: &wgpu::Limits) -> DeviceLimits {
        DeviceLimits {
            max_binding: limits.max_storage_buffer_binding_size.min(limits.max_buffer_size),
            max_buffer: limits.max_buffer_size,
            storage_alignment: limits.min_storage_buffer_offset_alignment as u64,
            max_groups: limits.max_compute_workgroups_per_dimension,
        }
    }
}

/// Whether `buffer` is mapped. wgpu 30 has no map state to ask: a view of a word is had only
/// while the buffer is mapped (and asking is no error where it is not), but not of a word
/// under a view the engine holds. So the first, middle and last words are tried, and a
/// refusal because a view already covers the word also says the buffer is mapped (wgpu 30
/// names that refusal in its message; were the wording to change, a buffer whose every
/// probed word is under the engine's views would pass, and its submit fail, as without the
/// check).
fn is_mapped(buffer: &wgpu::Buffer) -> bool {
    let size = buffer.size();
    if size < 4 {
        return false;
    }
    // Views start at multiples of wgpu::MAP_ALIGNMENT and are whole words.
    let aligned = |o: u64| o / wgpu::MAP_ALIGNMENT * wgpu::MAP_ALIGNMENT;
    [0, aligned(size / 2), aligned(size - 4)].iter().any(|&o| match buffer.slice(o..o + 4).get_mapped_range() {
        Ok(_) => true,
        Err(e) => e.to_string().contains("already been mapped"),
    })
}

/// Uniform buffers a kernel keeps (a few KiB each at most); past this many it drops them all.
const UNIFORM_CACHE_ENTRIES: usize = 256;

/// A pad ready to record: its pipeline, bind groups and workgroup counts, for fixed
/// buffers. Recording it costs a few calls on the pass and allocates nothing.
///
/// # The buffers' lifetime
///
/// The bind groups hold the input and output *buffers* alive (wgpu reference-counts
/// them), but not the meaning of the bytes in them. When the ranges given to
/// [`PadKernel::prepare`] are sub-allocations of an engine's pool, a `PreparedPad` may be
/// recorded only while both ranges still belong to the tensors it was prepared for: once
/// the engine frees a range and hands it to another tensor, recording the pad again reads
/// or writes that tensor. Keep it beside the tensors it was made for and drop it with
/// them (or prepare again: preparing costs a few small allocations, the pipeline is
/// cached). Submissions already recorded are safe: wgpu orders them on the queue.
#[derive(Debug, Clone)]
pub struct PreparedPad {
    pipelines: Vec<wgpu::ComputePipeline>,
    /// Each dispatch's pipeline (an index into `pipelines`), bind group and workgroups.
    dispatches: Vec<(usize, wgpu::BindGroup, [u32; 3])>,
    out_bytes: u64,
}

impl PreparedPad {
    /// Records the pad into an open compute pass: sets the pipeline and bind group and
    /// dispatches, once per binding window (a gradient's bulk and borders: their own
    /// pipelines). The pass's pipeline and bind group 0 are left set to the last dispatch's.
    /// An empty output records nothing.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        let mut set = None;
        for (pipeline, bind_group, [x, y, z]) in &self.dispatches {
            if set != Some(*pipeline) {
                pass.set_pipeline(&self.pipelines[*pipeline]);
                set = Some(*pipeline);
            }
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups(*x, *y, *z);
        }
    }

    /// Dispatches recorded per [`record`](Self::record): one per binding window.
    pub fn dispatch_count(&self) -> usize {
        self.dispatches.len()
    }

    /// Bytes of output the pad writes.
    pub fn out_bytes(&self) -> u64 {
        self.out_bytes
    }
}

/// What one [`PadKernel::encode`] recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoded {
    /// Dispatches recorded: one per binding window (none for an empty output).
    pub dispatches: usize,
    /// Bytes the pad writes.
    pub out_bytes: u64,
}

fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Polls a future once without blocking.
fn poll_now<F: Future + ?Sized>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

fn gpu_error(e: wgpu::Error, doing: &str) -> PadError {
    match e {
        wgpu::Error::OutOfMemory { .. } => PadError::OutOfMemory { reason: format!("GPU, {doing}: {}", describe(&e)) },
        e => PadError::Gpu { reason: format!("{doing}: {}", describe(&e)) },
    }
}

impl PadKernel {
    /// How many pipelines exist in all: what [`precompile`](Self::precompile) of every
    /// kind, mode and type compiles, and the most a kernel ever holds (a kind's own count:
    /// [`ProgramKind::pipelines`]).
    pub const PIPELINES: usize = super::shader::PIPELINES;

    /// A kernel for `device`. Compiles nothing yet. Fails with
    /// [`PadError::DeviceUnsupported`] where the device's limits cannot run the shaders
    /// (WebGL2's, say: no storage buffers in compute).
    pub fn new(device: &wgpu::Device) -> Result<PadKernel> {
        Self::with_pipeline_cache(device, None)
    }

    /// [`new`](Self::new), compiling pipelines through `cache` (see
    /// `wgpu::Device::create_pipeline_cache`; engines save its data between runs).
    pub fn with_pipeline_cache(device: &wgpu::Device, cache: Option<wgpu::PipelineCache>) -> Result<PadKernel> {
        let limits = device.limits();
        Self::check_limits(&limits)?;
        let layouts = |read_only_input: bool| {
            let bind_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("wgpu-pad bind group layout"),
                entries: &[
                    wgpu::BindGroupLayoutEntry {
                        binding: 0,
                        visibility: wgpu::ShaderStages::COMPUTE,
                        ty: wgpu::BindingType::Buffer {
                            ty: wgpu::BufferBindingType::Uniform,
                            has_dynamic_offset: false,
                            min_binding_size: wgpu::BufferSize::new(Program::PARAMS_BYTES),
                        },
                        count: None,
                    },
                    storage_entry(1, read_only_input),
                    storage_entry(2, false),
                ],
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("wgpu-pad pipeline layout"),
                bind_group_layouts: &[Some(&bind_layout)],
                immediate_size: 0,
            });
            (bind_layout, pipeline_layout)
        };
        let (bind_layout, pipeline_layout) = layouts(false);
        #[cfg(feature = "variants")]
        let measurement = {
            let (read_only_bind_layout, read_only_pipeline_layout) = layouts(true);
            let variant = AtomicU8::new(KernelVariant::Default as u8);
            Measurement { variant, read_only_bind_layout, read_only_pipeline_layout }
        };
        let empty_input = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-pad empty input"),
            size: Program::EMPTY_INPUT_BYTES,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        Ok(PadKernel {
            device: device.clone(),
            bind_layout,
            pipeline_layout,
            pipelines: Mutex::new(HashMap::new()),
            compiles: AtomicUsize::new(0),
            #[cfg(feature = "variants")]
            measurement,
            cache,
            empty_input,
            limits: DeviceLimits::from(&limits),
            uniform_alignment: limits.min_uniform_buffer_offset_alignment,
            pending: Mutex::new(Vec::new()),
            uniforms: Mutex::new(HashMap::new()),
        })
    }

    /// Checks, without a device, that an adapter with these limits and capabilities can run
    /// the shaders (pass `adapter.limits()` and `adapter.get_downlevel_capabilities()`, or
    /// the limits an engine will request).
    pub fn check_support(limits: &wgpu::Limits, downlevel: &wgpu::DownlevelCapabilities) -> Result<()> {
        if !downlevel.flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS) {
            return Err(PadError::DeviceUnsupported {
                missing: "compute shaders (DownlevelFlags::COMPUTE_SHADERS)".into(),
            });
        }
        Self::check_limits(limits)
    }

    fn check_limits(l: &wgpu::Limits) -> Result<()> {
        let needs: [(&str, u64, u64); 7] = [
            ("max_storage_buffers_per_shader_stage", l.max_storage_buffers_per_shader_stage as u64, 2),
            ("max_uniform_buffers_per_shader_stage", l.max_uniform_buffers_per_shader_stage as u64, 1),
            ("max_bind_groups", l.max_bind_groups as u64, 1),
            ("max_compute_workgroup_size_x", l.max_compute_workgroup_size_x as u64, WORKGROUP as u64),
            ("max_compute_invocations_per_workgroup", l.max_compute_invocations_per_workgroup as u64, WORKGROUP as u64),
            ("max_uniform_buffer_binding_size", l.max_uniform_buffer_binding_size, Program::PARAMS_BYTES),
            (
                "max_storage_buffer_binding_size",
                l.max_storage_buffer_binding_size,
                2 * l.min_storage_buffer_offset_alignment as u64 + 16,
            ),
        ];
        for (name, has, need) in needs {
            if has < need {
                return Err(PadError::DeviceUnsupported {
                    missing: format!("{name} is {has}, at least {need} needed"),
                });
            }
        }
        Ok(())
    }

    /// Pads prepared from now on use kernel `variant` (`measurement::select`).
    #[cfg(feature = "variants")]
    pub(super) fn select_variant(&self, variant: KernelVariant) {
        self.measurement.variant.store(variant as u8, Ordering::Relaxed);
    }

    /// The kernel variant pads are prepared with now: the default, but where measurement
    /// selected another (the `variants` feature).
    pub(super) fn variant(&self) -> KernelVariant {
        #[cfg(feature = "variants")]
        return KernelVariant::from_u8(self.measurement.variant.load(Ordering::Relaxed));
        #[cfg(not(feature = "variants"))]
        KernelVariant::Default
    }

    /// The layouts of a pipeline whose shader declares its input read-only or not (only
    /// measurement's `read-only-input` variant does).
    fn layouts(&self, read_only_input: bool) -> (&wgpu::BindGroupLayout, &wgpu::PipelineLayout) {
        #[cfg(feature = "variants")]
        if read_only_input {
            return (&self.measurement.read_only_bind_layout, &self.measurement.read_only_pipeline_layout);
        }
        debug_assert!(!read_only_input, "a read-only input without the variants feature");
        (&self.bind_layout, &self.pipeline_layout)
    }

    /// What a program needs of this kernel's device.
    #[cfg(feature = "variants")]
    pub(super) fn limits(&self) -> DeviceLimits {
        self.limits
    }

    /// The device this kernel records for.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// How many pipelines this kernel has compiled so far (warm calls compile none).
    pub fn compile_count(&self) -> usize {
        self.compiles.load(Ordering::Relaxed)
    }

    /// Records an error-scope result: returned now if known, else kept for `pop_errors`.
    fn settle(&self, mut future: ErrorFuture, doing: &str) -> Result<()> {
        match poll_now(future.as_mut()) {
            Poll::Ready(None) => Ok(()),
            Poll::Ready(Some(e)) => Err(gpu_error(e, doing)),
            Poll::Pending => {
                self.pending.lock().unwrap_or_else(|e| e.into_inner()).push(future);
                Ok(())
            }
        }
    }

    /// Errors wgpu reported after the calls that caused them returned (on WebGPU, where
    /// error scopes resolve later): the first one, or `Ok` if none. Await it when you want
    /// to know, e.g. after a submit; it never blocks a thread.
    pub async fn pop_errors(&self) -> Result<()> {
        let pending = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        let mut first = None;
        for f in pending {
            if let Some(e) = f.await {
                first.get_or_insert(gpu_error(e, "an earlier pad"));
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// [`pop_errors`](Self::pop_errors), waiting on this thread: for native code that has
    /// no executor. On native backends error scopes resolve at once, so this does not wait
    /// for the GPU. Not on wasm32, where nothing may block.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn pop_errors_blocking(&self) -> Result<()> {
        pollster::block_on(self.pop_errors())
    }

    /// The pipeline for a key, compiled on first use.
    fn pipeline(&self, key: PipelineKey) -> Result<wgpu::ComputePipeline> {
        let mut pipelines = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = pipelines.get(&key) {
            return Ok(p.clone());
        }
        let label = key.label();
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&label),
            source: wgpu::ShaderSource::Wgsl(key.wgsl().into()),
        });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&label),
            layout: Some(self.layouts(key.read_only_input).1),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: self.cache.as_ref(),
        });
        self.settle(Box::pin(scope.pop()), &format!("compiling {label}"))?;
        self.compiles.fetch_add(1, Ordering::Relaxed);
        log::debug!("wgpu-pad: compiled {label}");
        pipelines.insert(key, pipeline.clone());
        Ok(pipeline)
    }

    /// Compiles, ahead of time, every pipeline that programs of these kinds (pads, interior
    /// pads, gradients) can need in these modes and types (those a kind does not run on the
    /// GPU are skipped), and waits for the driver's verdict without blocking: preparing them
    /// then compiles nothing. Returns how many pipelines it compiled.
    ///
    /// ```no_run
    /// # async fn f(kernel: &wgpu_pad::gpu::PadKernel) -> wgpu_pad::Result<()> {
    /// use wgpu_pad::{gpu::ProgramKind, DataType, Mode};
    /// // An engine that trains with reflect and constant pads of float16 tensors.
    /// let kinds = [ProgramKind::Pad, ProgramKind::Gradient];
    /// kernel.precompile(&kinds, &[Mode::Reflect, Mode::Constant], &[DataType::Float16]).await?;
    /// # Ok(()) }
    /// ```
    pub async fn precompile(&self, kinds: &[ProgramKind], modes: &[Mode], dtypes: &[DataType]) -> Result<usize> {
        let before = self.compile_count();
        for &kind in kinds {
            for &mode in modes {
                for &dtype in dtypes {
                    for key in PipelineKey::all_of(kind, mode, dtype, self.variant()) {
                        self.pipeline(key)?;
                    }
                }
            }
        }
        self.pop_errors().await?;
        Ok(self.compile_count() - before)
    }

    /// Checks that the GPU path can run `plan` with dense buffers on this device, before
    /// any buffer is made: a [`PadError::GpuLimit`] (or `Unsupported` for strings and 4-bit
    /// types) says why not.
    pub fn check_plan(&self, plan: &PadPlan) -> Result<()> {
        let dense = BufferView { offset: 0, strides: None, end: u64::MAX, buffer_size: u64::MAX };
        super::layout::program(plan, &dense, &dense, &self.limits, self.variant()).map(drop)
    }

    /// Checks that the GPU can take `plan`'s gradient with dense buffers on this device, before
    /// any buffer is made ([`Program::backward`] says what it refuses: types other than
    /// float32, complex64, float16, bfloat16 and the float8s, views past one binding, sums
    /// past a lane's bound).
    pub fn check_backward(&self, plan: &PadPlan) -> Result<()> {
        let (i, o) = plan.byte_sizes().unwrap_or((0, 0));
        let dense = |n: u64| BufferView { offset: 0, strides: None, end: n, buffer_size: n.next_multiple_of(4).max(4) };
        Program::backward(plan, &dense(o), &dense(i), &self.limits).map(drop)
    }

    /// The program of `plan` on these buffers, with the checks only buffers allow (usages,
    /// overlap, bindings inside the buffers).
    fn program(&self, plan: &PadPlan, input: &BufferRange<'_>, output: &BufferRange<'_>) -> Result<Program> {
        self.program_of(input, output, |i, o, variant| super::layout::program(plan, i, o, &self.limits, variant))
    }

    /// A program from `make` (given the two views and the variant), with the checks only
    /// buffers allow (usages, mapping, overlap); bindings inside the buffers `make` checks.
    fn program_of(
        &self,
        input: &BufferRange<'_>,
        output: &BufferRange<'_>,
        make: impl FnOnce(&BufferView, &BufferView, KernelVariant) -> Result<Program>,
    ) -> Result<Program> {
        for (which, r) in [(Side::Input, input), (Side::Output, output)] {
            let usage = r.buffer.usage();
            if !usage.contains(wgpu::BufferUsages::STORAGE) {
                return Err(PadError::BufferUsage { which, usage: "STORAGE", has: format!("{usage:?}") });
            }
            if is_mapped(r.buffer) {
                return Err(PadError::BufferMapped { which });
            }
        }
        fn view<'a>(which: Side, r: &BufferRange<'a>) -> Result<BufferView<'a>> {
            Ok(BufferView { offset: r.offset, strides: r.strides, end: r.end(which)?, buffer_size: r.buffer.size() })
        }
        // As any host would, through `Program::new` (which is this in the default variant).
        let (input_view, output_view) = (view(Side::Input, input)?, view(Side::Output, output)?);
        // wgpu refuses one buffer bound read-only and writable in one dispatch: a read-only
        // variant reads a shared buffer as the writable one does.
        let variant = match input.buffer == output.buffer {
            true => self.variant().with_writable_input(),
            false => self.variant(),
        };
        let l = make(&input_view, &output_view, variant)?;
        if let (true, Some((a0, a1)), Some((b0, b1))) = (input.buffer == output.buffer, l.input_span(), l.output_span())
        {
            if a0 < b1 && b0 < a1 {
                return Err(PadError::Overlap { input_start: a0, input_end: a1, output_start: b0, output_end: b1 });
            }
        }
        // Bindings inside the buffers: Program::new checked them against buffer_size.
        Ok(l)
    }

    /// Prepares `plan` reading `input` and writing `output`: validates everything (type,
    /// usages, sizes, views, overlap, device limits), compiles the pipeline if needed, and
    /// finds or makes the uniform buffer, and makes the bind groups. Record the result with
    /// [`PreparedPad::record`] as often as you like while the buffers stay the same.
    pub fn prepare(&self, plan: &PadPlan, input: BufferRange<'_>, output: BufferRange<'_>) -> Result<PreparedPad> {
        let l = self.program(plan, &input, &output)?;
        self.prepare_program(l, plan.byte_sizes().map_or(0, |b| b.1), input, output)
    }

    /// Prepares `plan`'s gradient: reads `grad_out` (the gradient of the pad's output, of the
    /// plan's output shape) and writes `grad_in` (of its input shape), strided views included,
    /// each element the sum of `grad_out` over the positions that read it in the order
    /// `wgpu_pad::adjoint` documents: the bits of `cpu::pad_backward`, on every run. float32,
    /// complex64, float16, bfloat16 and the float8s (not float8e8m0); one dispatch, or windows
    /// of its axes past a binding ([`Program::backward`] says what it
    /// refuses). Record it as a pad.
    pub fn prepare_backward(
        &self,
        plan: &PadPlan,
        grad_out: BufferRange<'_>,
        grad_in: BufferRange<'_>,
    ) -> Result<PreparedPad> {
        let l =
            self.program_of(&grad_out, &grad_in, |o, i, v| super::backward::program(plan, o, i, &self.limits, v))?;
        self.prepare_program(l, plan.byte_sizes().map_or(0, |b| b.0), grad_out, grad_in)
    }

    /// Records `plan`'s gradient into `encoder` in a compute pass of its own
    /// ([`prepare_backward`](Self::prepare_backward)).
    pub fn encode_backward(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        plan: &PadPlan,
        grad_out: BufferRange<'_>,
        grad_in: BufferRange<'_>,
    ) -> Result<Encoded> {
        let pad = self.prepare_backward(plan, grad_out, grad_in)?;
        if pad.dispatch_count() > 0 {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("wgpu-pad gradient"),
                timestamp_writes: None,
            });
            pad.record(&mut pass);
        }
        Ok(Encoded { dispatches: pad.dispatch_count(), out_bytes: pad.out_bytes })
    }

    /// Bind groups and the pipeline for a program; `out_bytes` its output's.
    fn prepare_program(
        &self,
        l: Program,
        out_bytes: u64,
        input: BufferRange<'_>,
        output: BufferRange<'_>,
    ) -> Result<PreparedPad> {
        if l.dispatches().is_empty() {
            return Ok(PreparedPad { pipelines: Vec::new(), dispatches: Vec::new(), out_bytes });
        }
        let pipelines =
            (0..l.pipeline_count()).map(|i| self.pipeline(l.pipeline_key(i))).collect::<Result<Vec<_>>>()?;
        let stride = params_stride(self.uniform_alignment);
        let uniform = self.uniform_buffer(l.dispatches(), stride)?;
        // What only wgpu can see of the caller's buffers (destroyed, from another device) is a
        // validation error here: caught, not left to the device's handler (whose default
        // panics), and returned, or kept for `pop_errors` where it arrives later.
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let dispatches = l
            .dispatches()
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let input_binding = match w.input() {
                    Some((offset, size)) => {
                        wgpu::BufferBinding { buffer: input.buffer, offset, size: wgpu::BufferSize::new(size) }
                    }
                    None => wgpu::BufferBinding { buffer: &self.empty_input, offset: 0, size: None },
                };
                let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("wgpu-pad bind group"),
                    layout: self.layouts(l.pipeline_key(w.pipeline()).read_only_input).0,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &uniform,
                                offset: i as u64 * stride,
                                size: wgpu::BufferSize::new(Program::PARAMS_BYTES),
                            }),
                        },
                        wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Buffer(input_binding) },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: output.buffer,
                                offset: w.output().0,
                                size: wgpu::BufferSize::new(w.output().1),
                            }),
                        },
                    ],
                });
                (w.pipeline(), bind_group, w.workgroups())
            })
            .collect();
        self.settle(Box::pin(scope.pop()), "binding the pad's buffers")?;
        Ok(PreparedPad { pipelines, dispatches, out_bytes })
    }

    /// A uniform buffer holding the windows' parameters, `stride` bytes apart.
    ///
    /// Made buffers are never written again, so one can serve every pad whose parameters are
    /// the same: they are kept by content, and a pad repeated on the same shapes (an engine's
    /// steady state, whatever buffers it binds) makes no buffer. The cache holds only this
    /// kernel's own small buffers, never a caller's.
    fn uniform_buffer(&self, windows: &[Dispatch], stride: u64) -> Result<wgpu::Buffer> {
        // The key: each window's parameters up to their trailing zeros (the axes past the
        // rank), with their length, so that different windows never run together.
        let mut key = Vec::new();
        for w in windows {
            let params = w.params();
            let used = params.len() - params.iter().rev().take_while(|&&b| b == 0).count();
            key.extend_from_slice(&(used as u32).to_le_bytes());
            key.extend_from_slice(&params[..used]);
        }
        let mut uniforms = self.uniforms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(buffer) = uniforms.get(&key) {
            return Ok(buffer.clone());
        }
        let mut bytes = vec![0u8; (stride * windows.len() as u64) as usize];
        for (i, w) in windows.iter().enumerate() {
            let at = i * stride as usize;
            bytes[at..at + w.params().len()].copy_from_slice(w.params());
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = super::buffers::buffer_with(&self.device, "wgpu-pad params", wgpu::BufferUsages::UNIFORM, &bytes);
        self.settle(Box::pin(scope.pop()), "making the pad's parameters")?;
        let buffer = buffer?;
        if uniforms.len() >= UNIFORM_CACHE_ENTRIES {
            uniforms.clear();
        }
        uniforms.insert(key, buffer.clone());
        Ok(buffer)
    }

    /// Records `plan` into `encoder` in a compute pass of its own: reads `input`, writes
    /// `output`. Everything is validated first; an error records nothing.
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
        let pad = self.prepare(plan, input, output)?;
        if pad.dispatch_count() > 0 || timestamp_writes.is_some() {
            let mut pass =
                encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("wgpu-pad"), timestamp_writes });
            pad.record(&mut pass);
        }
        Ok(Encoded { dispatches: pad.dispatch_count(), out_bytes: pad.out_bytes })
    }
}
