//! [`GpuContext`]: pads host tensors on a GPU (upload, pad, download), for headless use.
//! The library half is [`PadKernel`]; this is the `execute_gpu` half.

use std::sync::{Arc, Mutex};

use super::buffers::{describe, pooled_buffer, upload, BufferPool, BufferRange, Role};
use super::kernel::PadKernel;
use crate::cpu;
use crate::error::{PadError, Result};
use crate::memory::OutputArena;
use crate::plan::PadPlan;
use crate::tensor::Tensor;

/// Which path produced a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecPath {
    /// The GPU ran the pad.
    Gpu,
    /// The GPU path cannot run this pad (strings and 4-bit types have no kernel; a size,
    /// rank or index range past the device's limits): the CPU path ran it.
    CpuFallback {
        /// Why.
        reason: String,
    },
}

/// A padded tensor and the path that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Padded {
    /// The output.
    pub tensor: Tensor,
    /// Where it ran.
    pub path: ExecPath,
}

/// A device, its queue and a [`PadKernel`], for padding host tensors.
///
/// [`GpuContext::new`] picks the device by this rule: `WGPU_ADAPTER_NAME` (a substring of
/// the adapter's name) if set; otherwise the high-performance adapter (`WGPU_POWER_PREF`
/// can say `low`); `WGPU_BACKEND` (e.g. `vulkan`, `metal`, `dx12`, `gl`) limits the
/// backends searched, among those the application compiled into wgpu (with none,
/// [`PadError::NoGpu`] says so). The device gets the adapter's own limits, not wgpu's defaults, so
/// large tensors fit where the hardware allows, and timestamp queries where offered; where
/// the CPU and the GPU share memory (a CPU adapter such as lavapipe, an integrated GPU),
/// mappable storage buffers too (`MAPPABLE_PRIMARY_BUFFERS`), so that its pads write their
/// input and read their output through mappings, with no staging copies
/// ([`maps_directly`](Self::maps_directly)).
///
/// Its futures are `Send` on native targets, and wait for their own submission without
/// blocking the executor's thread. It keeps its device buffers between calls (a pool bounded
/// by [`set_buffer_pool_limit`](Self::set_buffer_pool_limit)), so warm calls create none.
/// Host memory for outputs is kept only where the caller gives tensors back to its
/// [`output_arena`](Self::output_arena).
///
/// ```no_run
/// use wgpu_pad::{gpu::GpuContext, DataType, Mode, PadPlan, PadRequest, Tensor};
/// let gpu = GpuContext::new_blocking()?;
/// let x = Tensor::from_slice(DataType::Float32, vec![2, 2], &[1f32, 2., 3., 4.])?;
/// let plan = PadPlan::new(x.dtype(), x.shape(), &PadRequest::new(vec![1, 1, 1, 1]).mode(Mode::Edge))?;
/// let y = gpu.pad_blocking(&plan, &x)?;
/// assert_eq!(y.tensor.shape(), &[4, 4]);
/// # Ok::<(), wgpu_pad::PadError>(())
/// ```
pub struct GpuContext {
    device: wgpu::Device,
    queue: wgpu::Queue,
    kernel: PadKernel,
    info: wgpu::AdapterInfo,
    /// Set by the device-lost callback, where this context made the device; `None` for an
    /// engine's device (its callback is the engine's), where a probe tells instead.
    lost: Option<Arc<Mutex<Option<String>>>>,
    pool: Mutex<BufferPool>,
    /// Host memory for outputs, fed only by the caller's `output_arena().recycle(..)`.
    arena: OutputArena,
    /// The kernel reads and writes mapped buffers (see [`maps_directly`]).
    direct: bool,
}

/// Whether a context pads in buffers it maps itself, with no staging copies: where the CPU
/// and the GPU share memory (a CPU adapter such as lavapipe, an integrated GPU) and the
/// device allows storage buffers to be mapped. On a discrete GPU mapped storage would sit
/// in slow host memory, so there the copies stay even if the feature is on.
fn maps_directly(device: &wgpu::Device, info: &wgpu::AdapterInfo) -> bool {
    shares_memory(info) && device.features().contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS)
}

fn shares_memory(info: &wgpu::AdapterInfo) -> bool {
    matches!(info.device_type, wgpu::DeviceType::Cpu | wgpu::DeviceType::IntegratedGpu)
}

/// An error unless some wgpu backend is compiled in (`enabled`: wgpu's backend features).
fn check_backends(enabled: wgpu::Backends) -> Result<()> {
    match enabled.is_empty() {
        true => Err(PadError::NoGpu {
            reason: "no wgpu backend is compiled in: the application enables one through wgpu's features \
                     (its default features, or e.g. \"vulkan\", \"metal\", \"dx12\", \"gles\", \"webgpu\")"
                .into(),
        }),
        false => Ok(()),
    }
}

/// Bytes of device buffers a [`GpuContext`] keeps between calls unless told otherwise.
pub const DEFAULT_BUFFER_POOL_BYTES: u64 = 256 << 20;

impl GpuContext {
    /// Opens the default device (see the type's documentation for the rule).
    pub async fn new() -> Result<GpuContext> {
        Self::with_limits(None).await
    }

    /// Opens the default device with `limits` instead of the adapter's own (for example
    /// WebGPU's defaults, as many engines request); `None` for the adapter's.
    pub async fn with_limits(limits: Option<wgpu::Limits>) -> Result<GpuContext> {
        // wgpu panics making an instance with no backend compiled in; the application picks them.
        check_backends(wgpu::Instance::enabled_backend_features())?;
        check_environment()?;
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        Self::with_instance(&instance, limits).await
    }

    /// Opens the default device of `instance`, an instance the caller names (and may share
    /// between contexts, or with its own devices), with `limits` (`None`: the adapter's).
    ///
    /// Buffers of one `wgpu::Instance` given to a context of another alias unrelated buffers
    /// by id (a wgpu-core limitation, gfx-rs/wgpu#3927): the pad would silently write into
    /// them, and no check can see it. Contexts that may see each other's buffers should
    /// share one instance: a buffer of another context's device is then refused with a typed
    /// [`PadError::Gpu`]. [`new`](Self::new) and [`with_limits`](Self::with_limits) make an
    /// instance each.
    pub async fn with_instance(instance: &wgpu::Instance, limits: Option<wgpu::Limits>) -> Result<GpuContext> {
        check_environment()?;
        let adapter = match std::env::var("WGPU_ADAPTER_NAME") {
            Ok(name) => {
                let wanted = name.to_lowercase();
                let adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
                adapters
                    .into_iter()
                    .find(|a| a.get_info().name.to_lowercase().contains(&wanted))
                    .ok_or_else(|| PadError::NoGpu { reason: format!("no adapter's name contains {name:?}") })?
            }
            Err(_) => instance
                .request_adapter(&wgpu::RequestAdapterOptions {
                    power_preference: wgpu::PowerPreference::from_env()
                        .unwrap_or(wgpu::PowerPreference::HighPerformance),
                    ..Default::default()
                })
                .await
                .map_err(|e| PadError::NoGpu { reason: e.to_string() })?,
        };
        let info = adapter.get_info();
        if let Err(e) = PadKernel::check_support(&adapter.limits(), &adapter.get_downlevel_capabilities()) {
            return Err(PadError::NoGpu { reason: format!("{} ({:?}): {e}", info.name, info.backend) });
        }
        let shared_memory_features = match shares_memory(&info) {
            true => wgpu::Features::MAPPABLE_PRIMARY_BUFFERS,
            false => wgpu::Features::empty(),
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("wgpu-pad"),
                required_features: adapter.features()
                    & (wgpu::Features::TIMESTAMP_QUERY
                        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
                        | shared_memory_features),
                required_limits: limits.unwrap_or_else(|| adapter.limits()),
                ..Default::default()
            })
            .await
            .map_err(|e| PadError::NoGpu { reason: format!("{} ({:?}): {e}", info.name, info.backend) })?;
        let lost = Arc::new(Mutex::new(None));
        let flag = lost.clone();
        device.set_device_lost_callback(move |reason, message| {
            *flag.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{reason:?}: {message}"));
        });
        // wgpu's default handler panics; errors are caught in scopes where they can occur,
        // and anything else is logged rather than taking the process down.
        device.on_uncaptured_error(Arc::new(|e| log::error!("wgpu-pad: uncaptured GPU error: {e}")));
        log::info!("wgpu-pad: using {} ({:?})", info.name, info.backend);
        Ok(GpuContext {
            kernel: PadKernel::new(&device)?,
            direct: maps_directly(&device, &info),
            device,
            queue,
            info,
            lost: Some(lost),
            pool: Mutex::new(BufferPool::new(DEFAULT_BUFFER_POOL_BYTES)),
            arena: OutputArena::default(),
        })
    }

    /// [`new`](Self::new), blocking.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new_blocking() -> Result<GpuContext> {
        pollster::block_on(Self::new())
    }

    /// Wraps a device and queue the caller already has; fails where the device cannot run
    /// the shaders. Its pads map their buffers directly where `info` says the CPU and the
    /// GPU share memory and the device has `MAPPABLE_PRIMARY_BUFFERS`. The device's lost
    /// callback stays the caller's: a pad on a lost or destroyed device still fails with
    /// [`PadError::DeviceLost`], found by a probe once something has failed.
    pub fn from_device(device: &wgpu::Device, queue: &wgpu::Queue, info: wgpu::AdapterInfo) -> Result<GpuContext> {
        Ok(GpuContext {
            kernel: PadKernel::new(device)?,
            direct: maps_directly(device, &info),
            device: device.clone(),
            queue: queue.clone(),
            info,
            lost: None,
            pool: Mutex::new(BufferPool::new(DEFAULT_BUFFER_POOL_BYTES)),
            arena: OutputArena::default(),
        })
    }

    /// Caps the bytes of device buffers kept between [`pad`](Self::pad) calls (input,
    /// output and readback buffers, by size class; [`DEFAULT_BUFFER_POOL_BYTES`] unless
    /// set). 0 keeps none. Kept buffers are also dropped when the device runs out of memory.
    pub fn set_buffer_pool_limit(&self, bytes: u64) {
        let put_out = self.pool.lock().unwrap_or_else(|e| e.into_inner()).set_limit(bytes);
        drop(put_out); // outside the lock
    }

    /// Drops every device buffer kept between calls.
    pub fn release_buffers(&self) {
        let kept = self.pool.lock().unwrap_or_else(|e| e.into_inner()).clear();
        drop(kept); // outside the lock
    }

    /// Bytes of device buffers kept between calls now.
    pub fn pooled_bytes(&self) -> u64 {
        self.pool.lock().unwrap_or_else(|e| e.into_inner()).held()
    }

    /// The host memory that outputs are read back into where a buffer fits: empty until the
    /// caller gives tensors back (`ctx.output_arena().recycle(y.tensor)`), bounded by
    /// [`DEFAULT_OUTPUT_ARENA_BYTES`](crate::DEFAULT_OUTPUT_ARENA_BYTES) unless set.
    pub fn output_arena(&self) -> &OutputArena {
        &self.arena
    }

    /// Whether [`pad`](Self::pad) writes its input into and reads its output from mapped
    /// storage buffers (CPU and GPU share memory), rather than copying through staging
    /// buffers.
    pub fn maps_directly(&self) -> bool {
        self.direct
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }
    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }
    /// The kernel (for encoding into your own command encoders).
    pub fn kernel(&self) -> &PadKernel {
        &self.kernel
    }
    /// The adapter's name, backend and so on.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// `DeviceLost` where the callback has said so (contexts that made their device).
    fn check_lost(&self) -> Result<()> {
        let Some(lost) = &self.lost else { return Ok(()) };
        // Let wgpu run pending callbacks, the device-lost one among them (never waits).
        let _ = self.device.poll(wgpu::PollType::Poll);
        match &*lost.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(reason) => Err(PadError::DeviceLost { reason: reason.clone() }),
            None => Ok(()),
        }
    }

    /// What a failed pad reports: `DeviceLost` where the device is gone (wgpu reports no
    /// error for a lost device, only the invalid objects it leaves), else `failure`.
    fn explain(&self, failure: PadError) -> PadError {
        if let Err(lost) = self.check_lost() {
            return lost;
        }
        if self.lost.is_none() && device_is_lost(&self.device) {
            return PadError::DeviceLost { reason: format!("the device was destroyed or lost ({failure})") };
        }
        failure
    }

    /// Pads `input`: uploads it, runs the pad, downloads the output. Where the GPU path
    /// cannot run the plan (strings, 4-bit types, sizes or ranks past the device's limits),
    /// the CPU path runs it instead, with a warning, and [`Padded::path`] says why. Sizes are
    /// checked before anything is uploaded. On native targets a short-lived thread drives wgpu
    /// until the output can be read, so the awaiting task never blocks its executor.
    pub async fn pad(&self, plan: &PadPlan, input: &Tensor) -> Result<Padded> {
        self.pad_waiting(plan, input, Wait::OnHelper).await
    }

    /// [`pad`](Self::pad), blocking: the calling thread drives wgpu until the output can be
    /// read (no thread is started).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn pad_blocking(&self, plan: &PadPlan, input: &Tensor) -> Result<Padded> {
        // The caller waits anyway: wgpu is driven on its thread, with no helper to start.
        pollster::block_on(self.pad_waiting(plan, input, Wait::Here))
    }

    /// The gradient of `plan`'s input from `grad_out`, the gradient of its output (of the
    /// plan's type and output shape): each element the sum of `grad_out` over the output
    /// positions that read it, in the one order `wgpu_pad::adjoint` documents, so the bits are
    /// the CPU path's (`cpu::pad_backward`) and the same on every run. float32, complex64,
    /// float16, bfloat16 and the float8s but float8e8m0 run on the GPU (one dispatch, or one a
    /// window of its axes past a storage binding, the sums in parts where a window's reads
    /// would span an axis); float64 and complex128, and gradients no window or part fits or
    /// past a lane's sum, on the CPU path, which says so (`ExecPath::CpuFallback`).
    /// Integer and bool tensors have no gradient.
    pub async fn pad_backward(&self, plan: &PadPlan, grad_out: &Tensor) -> Result<Padded> {
        self.backward_waiting(plan, grad_out, Wait::OnHelper).await
    }

    /// [`pad_backward`](Self::pad_backward), blocking this thread until the result is read.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn pad_backward_blocking(&self, plan: &PadPlan, grad_out: &Tensor) -> Result<Padded> {
        pollster::block_on(self.backward_waiting(plan, grad_out, Wait::Here))
    }

    async fn backward_waiting(&self, plan: &PadPlan, grad_out: &Tensor, wait: Wait) -> Result<Padded> {
        let in_bytes = plan.byte_sizes().map_or(0, |b| b.0);
        let refusal = match self.kernel.check_backward(plan) {
            Ok(_) => None,
            Err(e @ (PadError::GpuLimit { .. } | PadError::Unsupported { .. }))
                if crate::cpu::has_gradient(plan.dtype()) =>
            {
                Some(e.to_string())
            }
            Err(e) => return Err(e),
        };
        if grad_out.dtype() != plan.dtype() || grad_out.shape() != plan.out_shape() || refusal.is_some() {
            // The CPU path checks the gradient's type and shape, and takes every float type.
            let tensor = cpu::pad_backward_in(plan, grad_out, &self.arena)?;
            let reason = refusal.unwrap_or_default();
            log::warn!("wgpu-pad: {reason}; the gradient on the CPU path");
            return Ok(Padded { tensor, path: ExecPath::CpuFallback { reason } });
        }
        self.check_lost()?;
        let bytes = self.run(Work::Gradient(plan), grad_out.bytes().unwrap_or(&[]), in_bytes, wait).await?;
        Ok(Padded { tensor: Tensor::from_bytes(plan.dtype(), plan.in_shape().to_vec(), bytes)?, path: ExecPath::Gpu })
    }

    async fn pad_waiting(&self, plan: &PadPlan, input: &Tensor, wait: Wait) -> Result<Padded> {
        plan.check_input(input)?;
        let refusal = if !plan.dtype().gpu_capable() {
            Some(format!("{} has no GPU kernel", plan.dtype()))
        } else {
            match self.kernel.check_plan(plan) {
                Ok(()) => None,
                Err(e @ PadError::GpuLimit { .. }) => Some(e.to_string()),
                Err(e) => return Err(e),
            }
        };
        if let Some(reason) = refusal {
            log::warn!("wgpu-pad: {reason}; padding on the CPU path");
            let tensor = cpu::pad_in(plan, input, &self.arena)?;
            return Ok(Padded { tensor, path: ExecPath::CpuFallback { reason } });
        }
        self.check_lost()?;
        let (_, out_bytes) = plan.byte_sizes().unwrap_or((0, 0));
        let bytes = self.run(Work::Pad(plan), input.bytes().unwrap_or(&[]), out_bytes, wait).await?;
        Ok(Padded { tensor: Tensor::from_bytes(plan.dtype(), plan.out_shape().to_vec(), bytes)?, path: ExecPath::Gpu })
    }

    async fn run(&self, work: Work<'_>, input: &[u8], out_bytes: u64, wait: Wait) -> Result<Vec<u8>> {
        if out_bytes == 0 {
            return Ok(Vec::new());
        }
        match self.run_once(work, input, out_bytes, wait).await {
            // Kept buffers may be what filled the device: drop them and try once more.
            Err(PadError::OutOfMemory { .. }) if self.pooled_bytes() > 0 => {
                log::warn!("wgpu-pad: the GPU ran out of memory; dropping kept buffers and trying again");
                self.release_buffers();
                self.run_once(work, input, out_bytes, wait).await
            }
            result => result,
        }
    }

    /// Uploads, pads and reads back once, on buffers from the pool (given back when done).
    async fn run_once(&self, work: Work<'_>, input: &[u8], out_bytes: u64, wait: Wait) -> Result<Vec<u8>> {
        let out_size = out_bytes.next_multiple_of(4);
        // Scopes are popped before any await, so the future stays Send.
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        // Where CPU and GPU share memory, the kernel reads and writes mapped buffers: no
        // staging copies.
        let (in_role, out_role) =
            if self.direct { (Role::MappedInput, Role::MappedOutput) } else { (Role::Input, Role::Output) };
        let (in_buf, in_mapped) = pooled_buffer(&self.device, &self.pool, in_role, input.len() as u64);
        let (out_buf, _) = pooled_buffer(&self.device, &self.pool, out_role, out_size);
        let readback = (!self.direct).then(|| pooled_buffer(&self.device, &self.pool, Role::Readback, out_size).0);
        upload(&self.device, &self.queue, &in_buf, input, in_mapped);
        let made = (|| {
            let mut encoder = self.device.create_command_encoder(&Default::default());
            let in_range = BufferRange { size: Some(input.len() as u64), ..BufferRange::whole(&in_buf) };
            let out_range = BufferRange { size: Some(out_size), ..BufferRange::whole(&out_buf) };
            match work {
                Work::Pad(plan) => self.kernel.encode(&mut encoder, plan, in_range, out_range)?,
                Work::Gradient(plan) => self.kernel.encode_backward(&mut encoder, plan, in_range, out_range)?,
            };
            if let Some(readback) = &readback {
                encoder.copy_buffer_to_buffer(&out_buf, 0, readback, 0, out_size);
            }
            Ok::<_, PadError>(self.queue.submit([encoder.finish()]))
        })();
        let (validation, oom) = (validation.pop(), oom.pop());
        let (validation, oom) = (validation.await, oom.await);
        if let Some(e) = oom {
            return Err(PadError::OutOfMemory { reason: format!("GPU: {}", describe(&e)) });
        }
        if let Some(e) = validation {
            return Err(self.explain(PadError::Gpu { reason: describe(&e) }));
        }
        let submission = made.map_err(|e| self.explain(e))?;
        let read_from = readback.as_ref().unwrap_or(&out_buf);
        let bytes = read_buffer(&self.device, read_from, out_bytes, submission, wait, Some(&self.arena)).await;
        let bytes = bytes.map_err(|e| self.explain(e));
        self.check_lost()?;
        if bytes.is_ok() {
            let used = [Some((in_role, in_buf)), Some((out_role, out_buf)), readback.map(|b| (Role::Readback, b))];
            let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
            let put_out: Vec<_> = used.into_iter().flatten().flat_map(|b| pool.give(b)).collect();
            drop(pool);
            drop(put_out); // outside the lock
        }
        bytes
    }
}

/// Whether `device` is lost or destroyed, for a device whose lost callback is not ours: a
/// 4-byte buffer mapped at creation cannot be viewed there (wgpu makes an invalid buffer and
/// reports nothing, as WebGPU asks). Run only after a failure: it costs a buffer.
fn device_is_lost(device: &wgpu::Device) -> bool {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let probe = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("wgpu-pad device probe"),
        size: 4,
        usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: true,
    });
    let lost = probe.slice(..).get_mapped_range_mut().is_err();
    probe.destroy();
    // Popped now (the scope holds what the probe made the device say); the future is not needed.
    drop(scope.pop());
    lost
}

/// What a run dispatches: a pad, or a pad's gradient (its input the output's gradient).
#[derive(Clone, Copy)]
enum Work<'a> {
    Pad(&'a PadPlan),
    Gradient(&'a PadPlan),
}

/// Who drives wgpu until a readback is mapped, on native targets (in the browser, the event
/// loop does).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wait {
    /// A short-lived thread, so that the awaiting task never blocks its executor.
    OnHelper,
    /// The calling thread, which blocks until then (its caller blocks anyway).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Here,
}

/// Maps `buffer` (MAP_READ) once `submission` is done and copies out its first `len` bytes.
pub(crate) async fn read_buffer(
    device: &wgpu::Device,
    buffer: &wgpu::Buffer,
    len: u64,
    submission: wgpu::SubmissionIndex,
    wait: Wait,
    arena: Option<&OutputArena>,
) -> Result<Vec<u8>> {
    let (sender, receiver) = futures_intrusive::channel::shared::oneshot_channel();
    let mapped = ..len.next_multiple_of(4);
    buffer.slice(mapped).map_async(wgpu::MapMode::Read, move |r| {
        sender.send(r).ok();
    });
    #[cfg(not(target_arch = "wasm32"))]
    {
        let poll = move |device: &wgpu::Device| {
            let wait = wgpu::PollType::Wait { submission_index: Some(submission), timeout: None };
            if let Err(e) = device.poll(wait) {
                log::warn!("wgpu-pad: waiting for the pad: {e}");
            }
        };
        match wait {
            Wait::Here => poll(device),
            Wait::OnHelper => {
                let device = device.clone();
                std::thread::Builder::new().name("wgpu-pad wait".into()).spawn(move || poll(&device)).map_err(|e| {
                    PadError::Gpu { reason: format!("cannot start the thread that waits for the GPU: {e}") }
                })?;
            }
        }
    }
    #[cfg(target_arch = "wasm32")]
    let _ = (device, submission, wait);
    match receiver.receive().await {
        Some(Ok(())) => {}
        Some(Err(e)) => return Err(PadError::Gpu { reason: format!("reading the output back: {e}") }),
        None => return Err(PadError::DeviceLost { reason: "the readback was dropped".into() }),
    }
    let bytes = {
        let view = buffer
            .slice(mapped)
            .get_mapped_range()
            .map_err(|e| PadError::Gpu { reason: format!("reading the output back: {e}") })?;
        crate::copy::copy_to_new_vec(&view[..len as usize], "the output read back from the GPU", arena)?
    };
    buffer.unmap();
    Ok(bytes)
}

/// wgpu ignores a `WGPU_POWER_PREF` it cannot read; a typo there would pick an adapter
/// other than the one asked for, without a word. Refused instead, saying what it takes.
fn check_environment() -> Result<()> {
    match std::env::var("WGPU_POWER_PREF") {
        Ok(v) if wgpu::PowerPreference::from_env().is_none() && !v.is_empty() => Err(PadError::NoGpu {
            reason: format!("WGPU_POWER_PREF={v:?} is none of low, high or none (wgpu's spellings)"),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An application that compiled in no wgpu backend gets an error saying so, not wgpu's panic.
    #[test]
    fn no_backend_is_an_error() {
        let e = check_backends(wgpu::Backends::empty()).unwrap_err();
        assert!(matches!(&e, PadError::NoGpu { reason } if reason.contains("no wgpu backend")), "{e}");
        assert!(check_backends(wgpu::Backends::VULKAN).is_ok());
    }
}
