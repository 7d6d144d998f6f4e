//! GPU support for the tests: the shared contexts (one with small bindings), buffers made
//! and read back, a pad path written once and run on the CPU and the GPU, and the helpers
//! the kernel, window and context tests share.

use wgpu_pad::gpu::{BufferRange, GpuContext};
use wgpu_pad::{DataType, PadError, PadPlan, Tensor};

/// The shared GPU context, or `None` (skip) when no adapter exists — unless
/// `WGPU_PAD_REQUIRE_GPU=1`, when a missing adapter fails the test.
pub fn gpu() -> Option<&'static wgpu_pad::gpu::GpuContext> {
    use std::sync::OnceLock;
    static GPU: OnceLock<Result<wgpu_pad::gpu::GpuContext, String>> = OnceLock::new();
    let ctx = GPU.get_or_init(|| {
        let ctx = wgpu_pad::gpu::GpuContext::new_blocking().map_err(|e| e.to_string())?;
        // The context's own handler only logs, which no test sees: record them instead, for
        // `assert_no_gpu_errors` (and `PadPath::Gpu`) to fail on.
        ctx.device().on_uncaptured_error(std::sync::Arc::new(|e| {
            UNCAPTURED.lock().unwrap_or_else(|e| e.into_inner()).push(e.to_string())
        }));
        Ok(ctx)
    });
    match ctx {
        Ok(ctx) => Some(ctx),
        Err(e) if std::env::var("WGPU_PAD_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("WGPU_PAD_REQUIRE_GPU=1 but no GPU: {e}")
        }
        Err(e) => {
            eprintln!("skipping GPU test: {e}");
            None
        }
    }
}

/// Uncaptured errors of the shared context's device, as they happened.
static UNCAPTURED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Fails if the shared context's device reported an error no scope caught (a test's own
/// submit, say), after letting wgpu deliver what is pending.
pub fn assert_no_gpu_errors() {
    if let Some(ctx) = gpu() {
        let _ = ctx.device().poll(wgpu::PollType::wait_indefinitely());
    }
    let errors = std::mem::take(&mut *UNCAPTURED.lock().unwrap_or_else(|e| e.into_inner()));
    assert!(errors.is_empty(), "uncaptured GPU errors: {errors:#?}");
}

/// A storage buffer (also a copy source and target) holding `bytes`, rounded up to whole
/// words with zeros.
pub fn storage(ctx: &wgpu_pad::gpu::GpuContext, bytes: &[u8]) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    let mut padded = bytes.to_vec();
    padded.resize(bytes.len().next_multiple_of(4).max(4), 0);
    ctx.device().create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &padded,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
    })
}

/// Copies `len` bytes at `offset` of `buffer` back to the host.
pub fn read(ctx: &wgpu_pad::gpu::GpuContext, buffer: &wgpu::Buffer, offset: u64, len: u64) -> Vec<u8> {
    let size = len.next_multiple_of(4);
    let staging = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buffer, offset, &staging, 0, size);
    ctx.queue().submit([enc.finish()]);
    staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
    ctx.device().poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let v = staging.slice(..).get_mapped_range().unwrap()[..len as usize].to_vec();
    staging.unmap();
    v
}

/// Bytes of storage binding for [`gpu_small_bindings`]: small enough that most tests'
/// tensors split into several binding windows.
pub const SMALL_BINDING: u64 = 1024;

/// A second device on the same adapter, asking for storage bindings of only
/// [`SMALL_BINDING`] bytes, so that every test run exercises the splitting into binding
/// windows on small tensors. It is made without `MAPPABLE_PRIMARY_BUFFERS`, so its
/// `GpuContext::pad` goes through staging copies where the shared context on a CPU adapter
/// or an integrated GPU maps its buffers: every test runs both. Skips or fails like [`gpu`].
pub fn gpu_small_bindings() -> Option<&'static wgpu_pad::gpu::GpuContext> {
    use std::sync::OnceLock;
    static GPU: OnceLock<Option<wgpu_pad::gpu::GpuContext>> = OnceLock::new();
    GPU.get_or_init(|| {
        let shared = gpu()?;
        let limits = wgpu::Limits { max_storage_buffer_binding_size: SMALL_BINDING, ..shared.device().limits() };
        let adapter = adapter_of(shared);
        let descriptor = wgpu::DeviceDescriptor { required_limits: limits, ..Default::default() };
        let (device, queue) = pollster::block_on(adapter.request_device(&descriptor)).expect("a small-binding device");
        let ctx = wgpu_pad::gpu::GpuContext::from_device(&device, &queue, adapter.get_info()).unwrap();
        assert!(!ctx.maps_directly(), "a device without MAPPABLE_PRIMARY_BUFFERS cannot map storage");
        Some(ctx)
    })
    .as_ref()
}

/// The kernel variants kept until a real GPU decides (`measurement`, the `variants`
/// feature); without that feature the default alone, so that the tests read the same in both
/// builds.
#[cfg(feature = "variants")]
pub use wgpu_pad::gpu::measurement::KernelVariant;

/// The default kernels: the only ones a build without the `variants` feature runs.
#[cfg(not(feature = "variants"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelVariant {
    Default,
}

#[cfg(not(feature = "variants"))]
impl KernelVariant {
    pub const ALL: [KernelVariant; 1] = [KernelVariant::Default];

    pub fn name(self) -> &'static str {
        "default"
    }
}

/// The variant `ctx`'s kernel prepares pads with.
pub fn selected(ctx: &wgpu_pad::gpu::GpuContext) -> KernelVariant {
    #[cfg(feature = "variants")]
    return wgpu_pad::gpu::measurement::selected(ctx.kernel());
    #[cfg(not(feature = "variants"))]
    {
        let _ = ctx;
        KernelVariant::Default
    }
}

/// `Program::new` in `variant`.
pub fn program_in(
    plan: &wgpu_pad::PadPlan,
    input: &wgpu_pad::gpu::BufferView,
    output: &wgpu_pad::gpu::BufferView,
    limits: &wgpu_pad::gpu::DeviceLimits,
    variant: KernelVariant,
) -> wgpu_pad::Result<wgpu_pad::gpu::Program> {
    #[cfg(feature = "variants")]
    return wgpu_pad::gpu::measurement::program(plan, input, output, limits, variant);
    #[cfg(not(feature = "variants"))]
    match variant {
        KernelVariant::Default => wgpu_pad::gpu::Program::new(plan, input, output, limits),
    }
}

/// `Program::backward` in `variant`.
pub fn backward_program_in(
    plan: &wgpu_pad::PadPlan,
    grad_out: &wgpu_pad::gpu::BufferView,
    grad_in: &wgpu_pad::gpu::BufferView,
    limits: &wgpu_pad::gpu::DeviceLimits,
    variant: KernelVariant,
) -> wgpu_pad::Result<wgpu_pad::gpu::Program> {
    #[cfg(feature = "variants")]
    return wgpu_pad::gpu::measurement::backward_program(plan, grad_out, grad_in, limits, variant);
    #[cfg(not(feature = "variants"))]
    match variant {
        KernelVariant::Default => wgpu_pad::gpu::Program::backward(plan, grad_out, grad_in, limits),
    }
}

/// A context per kernel variant other than the default (`KernelVariant`: kept side by side
/// until a real GPU decides), on the shared device and on the small-bindings one, each
/// with its variant selected: every variant passes what the default passes. Empty without
/// an adapter (or fails, like [`gpu`]), and without the `variants` feature.
pub fn gpu_variants() -> &'static [(KernelVariant, wgpu_pad::gpu::GpuContext)] {
    use std::sync::OnceLock;
    static CONTEXTS: OnceLock<Vec<(KernelVariant, wgpu_pad::gpu::GpuContext)>> = OnceLock::new();
    CONTEXTS.get_or_init(|| {
        #[allow(unused_mut)] // nothing to push without the variants feature
        let mut contexts = Vec::new();
        #[cfg(feature = "variants")]
        for base in [gpu(), gpu_small_bindings()].into_iter().flatten() {
            for variant in KernelVariant::ALL.into_iter().filter(|&v| v != KernelVariant::Default) {
                let ctx =
                    wgpu_pad::gpu::GpuContext::from_device(base.device(), base.queue(), base.adapter_info().clone())
                        .unwrap();
                wgpu_pad::gpu::measurement::select(ctx.kernel(), variant);
                assert_eq!(selected(&ctx), variant);
                contexts.push((variant, ctx));
            }
        }
        contexts
    })
}

/// How many tests a kernel-variant test is split into ([`variant_shard_tests`]).
pub const VARIANT_SHARDS: usize = 4;

/// Every [`VARIANT_SHARDS`]th of [`gpu_variants`]' contexts, from the `shard`th: the shards
/// together are all of them, each once.
pub fn gpu_variant_shard(shard: usize) -> impl Iterator<Item = &'static (KernelVariant, wgpu_pad::gpu::GpuContext)> {
    gpu_variants().iter().skip(shard).step_by(VARIANT_SHARDS)
}

/// One test for each shard of the kernel variants' contexts, `shard_0` to `shard_3`, each
/// calling `$run(shard)`: a variant's run is one thread's work (lavapipe's included), so
/// libtest runs the shards side by side where one test for them all kept a core idle.
/// Without the `variants` feature there are no variants' contexts: no tests (`$run` named
/// only, so that it is not dead code).
#[cfg(not(feature = "variants"))]
macro_rules! variant_shard_tests {
    ($name:ident, $run:ident) => {
        const _: fn(usize) = $run;
    };
}
#[cfg(feature = "variants")]
macro_rules! variant_shard_tests {
    ($name:ident, $run:ident) => {
        mod $name {
            #[test]
            fn shard_0() {
                super::$run(0)
            }
            #[test]
            fn shard_1() {
                super::$run(1)
            }
            #[test]
            fn shard_2() {
                super::$run(2)
            }
            #[test]
            fn shard_3() {
                super::$run(3)
            }
        }
    };
}
pub(crate) use variant_shard_tests;

/// Whether a variant's context would run `plan` exactly as the default does (the same
/// program: `measurement::runs_the_default`), so that its tests skip it: the default's
/// own run covers it. Never for the default's contexts.
pub fn runs_the_default(ctx: &wgpu_pad::gpu::GpuContext, plan: &wgpu_pad::PadPlan) -> bool {
    #[cfg(feature = "variants")]
    return wgpu_pad::gpu::measurement::runs_the_default(ctx.kernel(), plan);
    #[cfg(not(feature = "variants"))]
    {
        let _ = (ctx, plan);
        false
    }
}

/// The adapter a context's device came from, found again by its info (to make other
/// devices on it).
pub fn adapter_of(ctx: &wgpu_pad::gpu::GpuContext) -> wgpu::Adapter {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
        .into_iter()
        .find(|a| a.get_info() == *ctx.adapter_info())
        .expect("the context's adapter")
}

/// A path to run a pad on, so a test is written once and run on each (cubecl/candle style).
#[derive(Clone, Copy)]
pub enum PadPath {
    Cpu,
    Gpu(&'static wgpu_pad::gpu::GpuContext),
}

impl PadPath {
    pub fn pad(&self, plan: &PadPlan, input: &Tensor) -> Result<Tensor, PadError> {
        match self {
            PadPath::Cpu => wgpu_pad::cpu::pad(plan, input),
            PadPath::Gpu(ctx) => {
                let padded = ctx.pad_blocking(plan, input)?;
                // A plan the GPU path can run must have run there, not fallen back quietly. The
                // rule is this test's own, not the product's check_plan (a mutant of which
                // would pass itself): a fixed-width type, a rank the shaders hold before any
                // merging, and a size far inside any device's limits.
                let small = plan.byte_sizes().is_some_and(|(i, o)| i + o < 1 << 26);
                if plan.dtype().gpu_capable() && plan.in_shape().len() <= wgpu_pad::gpu::MAX_RANK && small {
                    assert_eq!(padded.path, wgpu_pad::gpu::ExecPath::Gpu, "{plan:?} fell back");
                }
                assert_no_gpu_errors();
                Ok(padded.tensor)
            }
        }
    }
}

/// Defines `mod $name { fn cpu(); fn gpu(); fn gpu_small_bindings(); }`, running `$body(path)` on each path (the
/// GPU one skips without an adapter unless `WGPU_PAD_REQUIRE_GPU=1`).
#[macro_export]
macro_rules! test_each_path {
    ($name:ident, $body:expr) => {
        mod $name {
            use super::*;
            #[test]
            fn cpu() {
                ($body)(common::PadPath::Cpu)
            }
            #[test]
            fn gpu() {
                if let Some(ctx) = common::gpu() {
                    ($body)(common::PadPath::Gpu(ctx))
                }
            }
            #[test]
            fn gpu_small_bindings() {
                if let Some(ctx) = common::gpu_small_bindings() {
                    ($body)(common::PadPath::Gpu(ctx))
                }
            }
        }
    };
}

pub fn pattern(dtype: DataType, shape: &[usize], seed: u8) -> Tensor {
    let n: usize = shape.iter().product::<usize>() * dtype.width().bytes().unwrap();
    let bytes = (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed ^ (i >> 12) as u8)).collect();
    Tensor::from_bytes(dtype, shape.to_vec(), bytes).unwrap()
}

/// A storage buffer of `bytes` on `device` (wgpu zeroes it), left mapped if asked.
pub fn storage_of(device: &wgpu::Device, bytes: u64, mapped_at_creation: bool) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation,
    })
}

/// The first `len` bytes of `buffer`, read back on a device of the test's own.
pub fn read_with(device: &wgpu::Device, queue: &wgpu::Queue, buffer: &wgpu::Buffer, len: u64) -> Vec<u8> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: len,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buffer, 0, &staging, 0, len);
    queue.submit([enc.finish()]);
    staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let bytes = staging.slice(..).get_mapped_range().unwrap().to_vec();
    bytes
}

/// Reads a whole buffer back to the host.
pub fn read_whole(ctx: &GpuContext, buffer: &wgpu::Buffer) -> Vec<u8> {
    read(ctx, buffer, 0, buffer.size())
}

/// Runs one pad with the kernel (dispatches counted), returns (output, dispatches).
pub fn pad_on_kernel(ctx: &GpuContext, p: &PadPlan, x: &Tensor) -> (Vec<u8>, usize) {
    let (_, out_bytes) = p.byte_sizes().unwrap();
    let input = storage(ctx, x.bytes().unwrap());
    let output = storage(ctx, &vec![0u8; out_bytes as usize]);
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    let e = ctx.kernel().encode(&mut enc, p, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
    ctx.queue().submit([enc.finish()]);
    assert_no_gpu_errors();
    let mut y = read_whole(ctx, &output);
    y.truncate(out_bytes as usize);
    (y, e.dispatches)
}

/// The program of `p` on dense buffers under WebGPU's default limits (128 MiB bindings):
/// its dispatches, and the largest input binding.
pub fn webgpu_program(p: &PadPlan) -> wgpu_pad::gpu::Program {
    use wgpu_pad::gpu::{BufferView, DeviceLimits, Program};
    let (i, o) = p.byte_sizes().unwrap();
    let limits = DeviceLimits { max_buffer: 1 << 40, ..DeviceLimits::WEBGPU_DEFAULT };
    let view = |bytes: u64| BufferView::dense(0, bytes.next_multiple_of(4));
    Program::new(p, &view(i), &view(o), &limits).unwrap()
}

pub fn webgpu_dispatches(p: &PadPlan) -> usize {
    webgpu_program(p).dispatches().len()
}

/// The tensor of `shape` that a view with element `strides` over `stored` (elements of `e`
/// bytes) shows, gathered densely on the host.
pub fn gather(stored: &[u8], e: usize, shape: &[usize], strides: &[u64]) -> Vec<u8> {
    let mut dense = Vec::new();
    for i in 0..shape.iter().product::<usize>() {
        let (mut rest, mut at) = (i, 0usize);
        for (&n, &s) in shape.iter().zip(strides).rev() {
            at += (rest % n) * s as usize;
            rest /= n;
        }
        dense.extend_from_slice(&stored[at * e..(at + 1) * e]);
    }
    dense
}
