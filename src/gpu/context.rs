//! [`GpuContext`]: pads host tensors on a GPU (upload, pad, download), for headless use.
//! The library half is [`PadKernel`]; this is the `execute_gpu` half.

use std::sync::{Arc, Mutex};

use super::kernel::{BufferRange, PadKernel};
use crate::cpu;
use crate::error::{PadError, Result};
use crate::plan::PadPlan;
use crate::tensor::Tensor;

/// Which path produced a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecPath {
    /// The GPU ran the pad.
    Gpu,
    /// The type has no GPU kernel (strings, 4-bit types): the CPU path ran it.
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
/// backends searched. The device gets the adapter's own limits, not wgpu's defaults, so
/// large tensors fit where the hardware allows, and timestamp queries where offered.
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
    lost: Arc<Mutex<Option<String>>>,
}

impl GpuContext {
    /// Opens the default device (see the type's documentation for the rule).
    pub async fn new() -> Result<GpuContext> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
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
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("wgpu-pad"),
                required_features: adapter.features()
                    & (wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS),
                required_limits: adapter.limits(),
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
        Ok(GpuContext { kernel: PadKernel::new(&device), device, queue, info, lost })
    }

    /// [`new`](Self::new), blocking.
    pub fn new_blocking() -> Result<GpuContext> {
        pollster::block_on(Self::new())
    }

    /// Wraps a device and queue the caller already has.
    pub fn from_device(device: &wgpu::Device, queue: &wgpu::Queue, info: wgpu::AdapterInfo) -> GpuContext {
        GpuContext {
            kernel: PadKernel::new(device),
            device: device.clone(),
            queue: queue.clone(),
            info,
            lost: Arc::new(Mutex::new(None)),
        }
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

    fn check_lost(&self) -> Result<()> {
        // Let wgpu run pending callbacks, the device-lost one among them.
        let _ = self.device.poll(wgpu::PollType::Poll);
        match &*self.lost.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(reason) => Err(PadError::DeviceLost { reason: reason.clone() }),
            None => Ok(()),
        }
    }

    /// Pads `input`: uploads it, runs the pad, downloads the output. Strings and 4-bit
    /// types run on the CPU path instead, logged and reported in [`Padded::path`].
    pub async fn pad(&self, plan: &PadPlan, input: &Tensor) -> Result<Padded> {
        if !plan.dtype().gpu_capable() {
            let reason = format!("{} has no GPU kernel", plan.dtype());
            log::warn!("wgpu-pad: {reason}; padding on the CPU path");
            return Ok(Padded { tensor: cpu::pad(plan, input)?, path: ExecPath::CpuFallback { reason } });
        }
        plan.check_input(input)?;
        self.check_lost()?;
        let (_, out_bytes) = plan.byte_sizes().unwrap_or((0, 0));
        let bytes = self.run(plan, input.bytes().unwrap_or(&[]), out_bytes).await?;
        Ok(Padded { tensor: Tensor::from_bytes(plan.dtype(), plan.out_shape().to_vec(), bytes)?, path: ExecPath::Gpu })
    }

    /// [`pad`](Self::pad), blocking.
    pub fn pad_blocking(&self, plan: &PadPlan, input: &Tensor) -> Result<Padded> {
        pollster::block_on(self.pad(plan, input))
    }

    async fn run(&self, plan: &PadPlan, input: &[u8], out_bytes: u64) -> Result<Vec<u8>> {
        if out_bytes == 0 {
            return Ok(Vec::new());
        }
        let out_size = out_bytes.next_multiple_of(4);
        let max = self.device.limits().max_buffer_size;
        if out_size > max || input.len() as u64 > max {
            return Err(PadError::TooLarge {
                what: format!(
                    "input of {} and output of {out_bytes} bytes; the device's max_buffer_size is {max}",
                    input.len()
                ),
            });
        }
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let in_buf =
            match super::kernel::buffer_with(&self.device, "wgpu-pad input", wgpu::BufferUsages::STORAGE, input) {
                Ok(b) => b,
                Err(e) => {
                    drop(validation);
                    drop(oom);
                    self.check_lost()?;
                    return Err(e);
                }
            };
        let out_buf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-pad output"),
            size: out_size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-pad readback"),
            size: out_size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let encoded = self.kernel.encode(&mut encoder, plan, BufferRange::whole(&in_buf), BufferRange::whole(&out_buf));
        if let Err(e) = encoded {
            drop(validation);
            drop(oom);
            return Err(e);
        }
        encoder.copy_buffer_to_buffer(&out_buf, 0, &readback, 0, out_size);
        self.queue.submit([encoder.finish()]);
        let validation = validation.pop().await;
        let oom = oom.pop().await;
        if let Some(e) = oom {
            return Err(PadError::OutOfMemory { reason: super::kernel::describe(&e) });
        }
        if let Some(e) = validation {
            return Err(PadError::Gpu { reason: super::kernel::describe(&e) });
        }
        let bytes = read_buffer(&self.device, &readback, out_bytes).await;
        self.check_lost()?;
        bytes
    }
}

/// Maps `buffer` (MAP_READ) and copies out its first `len` bytes.
pub(crate) async fn read_buffer(device: &wgpu::Device, buffer: &wgpu::Buffer, len: u64) -> Result<Vec<u8>> {
    let (sender, receiver) = futures_intrusive::channel::shared::oneshot_channel();
    buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        sender.send(r).ok();
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| PadError::DeviceLost { reason: format!("waiting for the pad: {e}") })?;
    match receiver.receive().await {
        Some(Ok(())) => {}
        Some(Err(e)) => return Err(PadError::Gpu { reason: format!("reading the output back: {e}") }),
        None => return Err(PadError::DeviceLost { reason: "the readback was dropped".into() }),
    }
    let bytes = {
        let view = buffer
            .slice(..)
            .get_mapped_range()
            .map_err(|e| PadError::Gpu { reason: format!("reading the output back: {e}") })?;
        view[..len as usize].to_vec()
    };
    buffer.unmap();
    Ok(bytes)
}
