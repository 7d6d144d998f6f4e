//! The measurements: a case on every path (CPU into a buffer, fresh, from an arena, a
//! memcpy; the GPU kernel, a buffer copy, end to end pooled and fresh; at steady clocks the
//! kernel, the buffer copy and the roofline copy shader as batches back to back), each figure
//! sampled until its interval is narrow (`stats`), and the cold start.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use wgpu::util::DeviceExt;
use wgpu_pad::gpu::{BufferRange, GpuContext};
use wgpu_pad::{cpu, Mode, OutputArena, PadPlan, PadRequest, Tensor};

use crate::cases::{COLD_MIX, COLD_MIX_TYPES};
use crate::stats::{sample, Policy, Summary};
pub use crate::timer::{steady_batch, Failed, GpuTimer, Steady};

#[derive(Serialize, Deserialize, Clone, Copy)]
pub struct ColdStart {
    pub pads: usize,
    pub pipelines: usize,
    pub cold_ms: f64,
    pub warm_ms: f64,
}

/// Cold start: every pad of the mix encoded and submitted once on a fresh kernel (pipelines
/// compile on first use), then again; each pass ends with a device sync.
pub fn cold_start(ctx: &GpuContext) -> Result<ColdStart, Box<dyn std::error::Error>> {
    let device = ctx.device();
    let kernel = wgpu_pad::gpu::PadKernel::new(device)?;
    let mut jobs = Vec::new();
    for mode in Mode::ALL {
        for dtype in COLD_MIX_TYPES {
            for (shape, pads) in COLD_MIX {
                let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode))?;
                let (i, o) = plan.byte_sizes().ok_or("fixed-width types only")?;
                let buffer = |size: u64| {
                    device.create_buffer(&wgpu::BufferDescriptor {
                        label: None,
                        size: size.next_multiple_of(4).max(4),
                        usage: wgpu::BufferUsages::STORAGE,
                        mapped_at_creation: false,
                    })
                };
                jobs.push((plan, buffer(i), buffer(o)));
            }
        }
    }
    let pass = || -> Result<f64, Box<dyn std::error::Error>> {
        let start = Instant::now();
        for (plan, input, output) in &jobs {
            let mut encoder = device.create_command_encoder(&Default::default());
            kernel.encode(&mut encoder, plan, BufferRange::whole(input), BufferRange::whole(output))?;
            ctx.queue().submit([encoder.finish()]);
        }
        device.poll(wgpu::PollType::wait_indefinitely())?;
        Ok(start.elapsed().as_secs_f64() * 1e3)
    };
    let cold_ms = pass()?;
    let warm_ms = pass()?;
    Ok(ColdStart { pads: jobs.len(), pipelines: kernel.compile_count(), cold_ms, warm_ms })
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Record {
    pub dtype: String,
    pub mode: String,
    pub shape: Vec<usize>,
    pub pads: Vec<i64>,
    /// Interior padding per axis (lax.pad's), where the case has some; absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interior: Vec<i64>,
    pub out_bytes: u64,
    /// What a pad must move at the least: the input it keeps, read once, and the output,
    /// written once. Every GB/s figure of the pad is this over its time. (0 in reports
    /// written before it.)
    #[serde(default)]
    pub bytes_moved: u64,
    pub adapter: String,
    pub backend: String,
    pub gpu_timer: String,
    pub cpu_ms: f64,
    /// `cpu::pad`: a new allocation each call, its pages faulted in as the pad writes them.
    pub cpu_fresh_ms: f64,
    /// `cpu::pad_in` on an `OutputArena` that each output is given back to: reused memory.
    #[serde(default)]
    pub cpu_arena_ms: f64,
    pub memcpy_ms: f64,
    /// One dispatch alone in its submit, the host waiting: never at a real GPU's steady
    /// clocks. `gpu_kernel_batch_ms` is the steady figure.
    pub gpu_kernel_ms: f64,
    /// One `copy_buffer_to_buffer` of the output's bytes alone in its submit.
    pub gpu_copy_ms: f64,
    /// The roofline copy shader (`roofline.wgsl`) over the output's bytes, per dispatch, in
    /// steady batches exactly like `gpu_kernel_batch_ms`. (0 in reports written before it.)
    #[serde(default)]
    pub gpu_roofline_ms: f64,
    pub gpu_e2e_pooled_ms: f64,
    pub gpu_e2e_fresh_ms: f64,
    /// The kernel alone on buffers made beforehand, encoded, submitted and waited for (wall
    /// time): the floor of any call that waits for its pad, fixed costs the timestamps of
    /// `gpu_kernel_ms` do not see included. (Absent from reports written before it.)
    #[serde(default)]
    pub gpu_kernel_wall_ms: f64,
    pub cpu_gbps: f64,
    pub cpu_fresh_gbps: f64,
    #[serde(default)]
    pub cpu_arena_gbps: f64,
    /// The host memcpy of the output's bytes: read and written, 2 x out_bytes over its time.
    pub memcpy_gbps: f64,
    /// The kernel at steady clocks: bytes_moved over `gpu_kernel_batch_ms`.
    pub gpu_kernel_gbps: f64,
    /// The buffer copy at steady clocks: 2 x out_bytes over `gpu_copy_batch_ms`.
    pub gpu_copy_gbps: f64,
    /// The roofline: 2 x out_bytes over `gpu_roofline_ms`.
    #[serde(default)]
    pub gpu_roofline_gbps: f64,
    pub gpu_e2e_pooled_gbps: f64,
    pub gpu_e2e_fresh_gbps: f64,
    pub cpu_over_memcpy: f64,
    pub cpu_fresh_over_cpu: f64,
    #[serde(default)]
    pub cpu_arena_over_cpu: f64,
    /// Pooled end to end over (kernel + 2 x the output's buffer copy): upload and readback
    /// at copy speed would make it 1.
    pub gpu_e2e_pooled_over_kernel_and_copies: f64,
    /// Pooled end to end over the kernel's wall time: what a call adds to a bare dispatch.
    #[serde(default)]
    pub gpu_e2e_pooled_over_kernel_wall: f64,
    /// The kernel over `copy_buffer_to_buffer`, both at steady clocks (batches); reports
    /// before the steady method held single dispatches here.
    pub gpu_kernel_over_gpu_copy: f64,
    /// The headline: the kernel over the roofline copy of the output's bytes, both at steady
    /// clocks (`gpu_kernel_batch_ms / gpu_roofline_ms`). 1 is a pad at the speed of a copy.
    #[serde(default)]
    pub gpu_kernel_over_roofline: f64,
    pub gpu_speedup_over_cpu: f64,
    /// Each figure's 95 % interval, MAD and sample count (`gpu_kernel_ci_low_ms`, ...), the
    /// batch figures (`gpu_kernel_batch_ms`, `gpu_copy_batch_ms`, their batch sizes).
    #[serde(flatten, default)]
    pub extra: std::collections::BTreeMap<String, f64>,
    /// Figures whose interval was still wider than `--noise` when `--max-time` ran out.
    #[serde(default)]
    pub noisy: Vec<String>,
    /// Figures not measured (`--steady-only`): 0 in the record, no interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// The pad's gradient was measured (`--backward`), not the pad.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backward: bool,
}

fn wall(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

/// Every GPU error the device raises outside an error scope, kept until asked for: a
/// measurement that met one is not a figure (wgpu rejects the whole submission and only
/// reports it, so the time would be of nothing).
#[derive(Clone, Default)]
pub struct GpuErrors(Arc<Mutex<Vec<String>>>);

impl GpuErrors {
    /// Catches `device`'s uncaptured errors from now on (in place of the context's logger).
    pub fn watch(device: &wgpu::Device) -> GpuErrors {
        let errors = GpuErrors::default();
        let sink = errors.0.clone();
        device.on_uncaptured_error(Arc::new(move |e| {
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(e.to_string());
        }));
        errors
    }

    /// Ok if none was raised since the last check; else every one, with what was being done.
    pub fn check(&self, doing: &str) -> Result<(), Failed> {
        let errors = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        if errors.is_empty() {
            return Ok(());
        }
        let mut distinct: Vec<(String, usize)> = Vec::new();
        for e in errors {
            match distinct.iter_mut().find(|(d, _)| *d == e) {
                Some((_, n)) => *n += 1,
                None => distinct.push((e, 1)),
            }
        }
        let said: Vec<String> = distinct
            .into_iter()
            .map(|(e, n)| if n > 1 { format!("{} ({n} times)", e.trim_end()) } else { e.trim_end().to_string() })
            .collect();
        Err(format!("GPU error while {doing}: {}", said.join("; ")))
    }
}

/// The roofline copy (`roofline.wgsl`) between two buffers of the same size, a multiple of 16,
/// in windows of at most the device's largest storage binding (as the pad splits its own), one
/// dispatch each: every output the pad can take, the roofline can copy.
pub struct Roofline {
    pipeline: wgpu::ComputePipeline,
    windows: Vec<(wgpu::BindGroup, [u32; 2])>,
}

impl Roofline {
    /// Words each workgroup copies: `roofline.wgsl`'s GROUP x WORDS.
    const TILE: u64 = 256 * 4;

    pub fn new(device: &wgpu::Device, src: &wgpu::Buffer, dst: &wgpu::Buffer) -> Roofline {
        // The largest binding as the pad's layout takes it.
        Self::in_windows(device, src, dst, wgpu_pad::gpu::DeviceLimits::from(&device.limits()).max_binding)
    }

    /// The copy in windows of at most `max_binding` bytes (rounded down to whole tiles).
    pub fn in_windows(device: &wgpu::Device, src: &wgpu::Buffer, dst: &wgpu::Buffer, max_binding: u64) -> Roofline {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("roofline copy"),
            source: wgpu::ShaderSource::Wgsl(include_str!("roofline.wgsl").into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("roofline copy"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        // Whole tiles a window (a tile's 16 KiB is a multiple of every storage alignment).
        let tile_bytes = Self::TILE * 16;
        let window = (max_binding / tile_bytes).max(1) * tile_bytes;
        let max = device.limits().max_compute_workgroups_per_dimension as u64;
        let layout = pipeline.get_bind_group_layout(0);
        let mut windows = Vec::new();
        let mut offset = 0;
        while offset < dst.size() {
            let size = window.min(dst.size() - offset);
            let range = |buffer| {
                wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: wgpu::BufferSize::new(size) })
            };
            let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: range(src) },
                    wgpu::BindGroupEntry { binding: 1, resource: range(dst) },
                ],
            });
            let tiles = (size / 16).div_ceil(Self::TILE).max(1);
            let x = tiles.min(max);
            windows.push((bind, [x as u32, tiles.div_ceil(x) as u32]));
            offset += size;
        }
        Roofline { pipeline, windows }
    }

    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_pipeline(&self.pipeline);
        for (bind, [x, y]) in &self.windows {
            pass.set_bind_group(0, bind, &[]);
            pass.dispatch_workgroups(*x, *y, 1);
        }
    }
}

/// The least a pad moves: the input it keeps (each axis less its crops), read once, and
/// the output, written once.
pub fn bytes_moved(plan: &PadPlan) -> u64 {
    let elem = plan.dtype().width().bytes().unwrap_or(0) as u64;
    // The input elements that land in the output: those the crops leave, every interior
    // padding's `interior + 1`-th place of the dilated axis (the plan's lattice of each axis).
    let kept: u64 = (0..plan.in_shape().len()).map(|d| plan.lattice(d).count as u64).product();
    kept * elem + plan.byte_sizes().map_or(0, |(_, out)| out)
}

/// Where each GPU figure's time goes in one repetition, in the record's order.
const GPU_FIGURES: [&str; 9] = [
    "gpu_kernel",
    "gpu_kernel_wall",
    "gpu_copy",
    "gpu_e2e_pooled",
    "gpu_e2e_fresh",
    "gpu_kernel_batch",
    "gpu_copy_batch",
    "gpu_roofline",
    "gpu_forward_kernel_batch",
];

/// The figures only `--backward` takes (a pad's records leave them out, not as skipped): the
/// forward pad of the same case (`pad_into`, its kernel at steady clocks) beside its gradient.
pub const ONLY_BACKWARD: [&str; 2] = ["cpu_forward", "gpu_forward_kernel_batch"];

pub struct Setup<'a> {
    pub ctx: &'a GpuContext,
    pub unpooled: &'a GpuContext,
    pub timer: &'a GpuTimer<'a>,
    pub errors: &'a GpuErrors,
    pub policy: &'a Policy,
    pub steady: &'a Steady,
    /// Only the steady figures (`--steady-only`): the kernel's batch, the buffer copy's and
    /// the roofline's; the CPU path, single dispatches and end-to-end calls are not run.
    pub steady_only: bool,
    /// The pad's gradient (`--backward`) in place of the pad: `cpu::pad_backward`, the GPU's
    /// gradient kernel, `GpuContext::pad_backward`, on a gradient of the output's shape.
    pub backward: bool,
}

/// The figures `--backward` leaves out (the CPU path has one form of the gradient).
pub const NOT_BACKWARD: [&str; 2] = ["cpu_fresh", "cpu_arena"];

/// What the gradient must move at the least: the output's gradient read where the pad read
/// anything (all of it but a constant pad's border) and the input's written.
pub fn bytes_moved_backward(plan: &PadPlan) -> u64 {
    let (in_bytes, out_bytes) = plan.byte_sizes().unwrap_or((0, 0));
    match plan.mode() {
        Mode::Constant => bytes_moved(plan) - out_bytes + in_bytes,
        _ => out_bytes + in_bytes,
    }
}

/// A gradient of `plan`'s output shape in its type (values of a few magnitudes, finite), or
/// why the type has none here.
pub fn gradient_of(plan: &PadPlan) -> Result<Tensor, Failed> {
    use wgpu_pad::DataType;
    let g: Vec<f32> = (0..plan.out_len()).map(|i| ((i * 7919) % 1013) as f32 / 7.0 - 60.0).collect();
    let shape = plan.out_shape().to_vec();
    let tensor = match plan.dtype() {
        DataType::Float32 => Tensor::from_slice(plan.dtype(), shape, &g),
        DataType::Float64 => Tensor::from_slice(plan.dtype(), shape, &g.iter().map(|&x| x as f64).collect::<Vec<_>>()),
        DataType::Float16 => {
            Tensor::from_slice(plan.dtype(), shape, &g.iter().map(|&x| half::f16::from_f32(x)).collect::<Vec<_>>())
        }
        DataType::Bfloat16 => {
            Tensor::from_slice(plan.dtype(), shape, &g.iter().map(|&x| half::bf16::from_f32(x)).collect::<Vec<_>>())
        }
        // Real and imaginary parts.
        DataType::Complex64 => {
            let parts = g.iter().flat_map(|&x| [x, -x / 3.0]).flat_map(f32::to_le_bytes);
            Tensor::from_bytes(plan.dtype(), shape, parts.collect())
        }
        DataType::Complex128 => {
            let parts = g.iter().flat_map(|&x| [x as f64, -x as f64 / 3.0]).flat_map(f64::to_le_bytes);
            Tensor::from_bytes(plan.dtype(), shape, parts.collect())
        }
        // Every byte pattern but NaNs' (whose sums are NaN whatever the order).
        t if has_gradient(t) => {
            let finite: Vec<u8> = (0..=255u8).filter(|&b| !float8_nan(t, b)).collect();
            Tensor::from_bytes(t, shape, (0..plan.out_len()).map(|i| finite[(i * 7919) % finite.len()]).collect())
        }
        other => return Err(format!("{other}: no gradient of its type")),
    };
    tensor.map_err(|e| e.to_string())
}

/// Whether the pad's gradient takes `dtype` (`cpu::pad_backward`'s types: the floats but
/// float8e8m0, and the complex types).
pub fn has_gradient(dtype: wgpu_pad::DataType) -> bool {
    use wgpu_pad::DataType::*;
    matches!(
        dtype,
        Float32
            | Float64
            | Float16
            | Bfloat16
            | Complex64
            | Complex128
            | Float8e4m3fn
            | Float8e4m3fnuz
            | Float8e5m2
            | Float8e5m2fnuz
    )
}

/// Whether byte `b` is a NaN of float8 type `t`: the fnuz types' 0x80; e4m3fn's
/// exponent and mantissa all ones; e5m2's exponent all ones and a mantissa.
fn float8_nan(t: wgpu_pad::DataType, b: u8) -> bool {
    use wgpu_pad::DataType::*;
    match t {
        Float8e4m3fnuz | Float8e5m2fnuz => b == 0x80,
        Float8e4m3fn => b & 0x7f == 0x7f,
        Float8e5m2 => b & 0x7c == 0x7c && b & 0x03 != 0,
        _ => false,
    }
}

/// The figures `--steady-only` leaves out, in report order.
pub const NOT_STEADY: [&str; 9] = [
    "cpu",
    "cpu_fresh",
    "cpu_arena",
    "memcpy",
    "gpu_kernel",
    "gpu_kernel_wall",
    "gpu_copy",
    "gpu_e2e_pooled",
    "gpu_e2e_fresh",
];

/// `a / b`, or 0 where `b` is (a figure left out): a report holds numbers, never NaN.
fn over(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

pub fn measure(setup: &Setup, plan: &PadPlan, input: &Tensor) -> Result<Record, Failed> {
    let Setup { ctx, unpooled, timer, errors, policy, steady, steady_only, backward } = *setup;
    let device = ctx.device();
    let (in_bytes, out_bytes) = plan.byte_sizes().ok_or("fixed-width types only")?;
    let in_data = input.bytes().ok_or("fixed-width types only")?;
    // Refused before anything is timed: a plan the GPU path cannot run (its rank, a limit).
    match backward {
        true => ctx.kernel().check_backward(plan),
        false => ctx.kernel().check_plan(plan),
    }
    .map_err(|e| format!("the GPU cannot run it: {e}"))?;
    // The gradient reads the output's gradient and writes the input's.
    let grad = if backward { Some(gradient_of(plan)?) } else { None };
    let (src_data, src_bytes, dst_bytes) = match &grad {
        Some(g) => (g.bytes().ok_or("fixed-width types only")?, out_bytes, in_bytes),
        None => (in_data, in_bytes, out_bytes),
    };

    // CPU: into a preallocated output, allocating, from an arena, and the memcpy limit,
    // interleaved repetition by repetition so that all four see the same machine state.
    let cpu_figures = match steady_only {
        true => [(Summary::of(&[0.0]), false); 4],
        false => {
            let mut out = vec![0u8; out_bytes as usize];
            let src = vec![1u8; out_bytes as usize];
            let mut dst = vec![0u8; out_bytes as usize];
            let arena = OutputArena::default();
            if let Some(g) = &grad {
                drop(cpu::pad_backward(plan, g).map_err(|e| format!("cpu::pad_backward: {e}"))?);
            }
            cpu::pad_into(plan, in_data, &mut out).map_err(|e| format!("cpu::pad_into: {e}"))?;
            let cpu_figures = sample(policy, || {
                let c = wall(|| dst.copy_from_slice(std::hint::black_box(&src)));
                if let Some(g) = &grad {
                    // The gradient, and the forward pad of the same case (in the fresh slot).
                    let p = wall(|| drop(cpu::pad_backward(plan, g).expect("ran above")));
                    let f = wall(|| cpu::pad_into(plan, in_data, &mut out).expect("ran above"));
                    return [p, f, 0.0, c];
                }
                let p = wall(|| cpu::pad_into(plan, in_data, &mut out).expect("ran above"));
                let f = wall(|| drop(cpu::pad(plan, input).expect("ran above")));
                let a = wall(|| arena.recycle(cpu::pad_in(plan, input, &arena).expect("ran above")));
                [p, f, a, c]
            });
            drop(arena);
            cpu_figures
        }
    };
    let [cpu_s, fresh_s, arena_s, memcpy_s] = cpu_figures;
    let (cpu_ms, cpu_fresh_ms, cpu_arena_ms, memcpy_ms) =
        (cpu_s.0.median, fresh_s.0.median, arena_s.0.median, memcpy_s.0.median);
    // The gradient's runs took the forward pad's time where the pad's own take cpu::pad's.
    let (cpu_fresh_ms, cpu_forward) = match backward {
        true => (0.0, fresh_s),
        false => (cpu_fresh_ms, (Summary::of(&[0.0]), false)),
    };

    // GPU buffers: the kernel's source and destination (the input and output; for the
    // gradient, the output's gradient and the input's), and a copy target of the output's
    // size; the output (the output's gradient) and the copy sized to whole 16-byte words for
    // the roofline, which copies one into the other (the kernel and the buffer copy see the
    // output's own size).
    let size4 = |b: u64| b.next_multiple_of(4).max(4);
    let size16 = |b: u64| b.next_multiple_of(16).max(16);
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let mut padded = src_data.to_vec();
    padded.resize(if backward { size16(src_bytes) } else { size4(src_bytes) } as usize, 0);
    let gin = device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: &padded, usage });
    let mk = |size: u64| {
        device.create_buffer(&wgpu::BufferDescriptor { label: None, size, usage, mapped_at_creation: false })
    };
    let (gout, gcopy) = (mk(size16(dst_bytes)), mk(size16(out_bytes)));
    let src_range = BufferRange { size: Some(size4(src_bytes)), ..BufferRange::whole(&gin) };
    let dst_range = BufferRange { size: Some(size4(dst_bytes)), ..BufferRange::whole(&gout) };
    let pad = match backward {
        true => ctx.kernel().prepare_backward(plan, src_range, dst_range),
        false => ctx.kernel().prepare(plan, BufferRange::whole(&gin), dst_range),
    }
    .map_err(|e| format!("preparing the pad: {e}"))?;
    // The gradient's forward pad, of the same case: from the input's gradient's buffer (the
    // input's size) into the copy target (the output's).
    let forward = match backward {
        true => Some(
            ctx.kernel()
                .prepare(
                    plan,
                    BufferRange { size: Some(size4(in_bytes)), ..BufferRange::whole(&gout) },
                    BufferRange { size: Some(size4(out_bytes)), ..BufferRange::whole(&gcopy) },
                )
                .map_err(|e| format!("preparing the forward pad: {e}"))?,
        ),
        false => None,
    };
    // The roofline and the buffer copy move the output's bytes (the output's gradient's).
    let copied = if backward { &gin } else { &gout };
    let roofline = Roofline::new(device, copied, &gcopy);
    errors.check("making the buffers and pipelines")?;

    let record_pad = |pass: &mut wgpu::ComputePass<'_>| pad.record(pass);
    let record_roofline = |pass: &mut wgpu::ComputePass<'_>| roofline.record(pass);
    let copy_bytes = size4(out_bytes);
    // Steady clocks: each batch figure warmed up and sized from a warm batch of its own.
    let kernel_batch = steady_batch(steady, |n| timer.passes(n, record_pad))?;
    let copy_batch = steady_batch(steady, |n| timer.copies(n, copied, &gcopy, copy_bytes))?;
    let roofline_batch = steady_batch(steady, |n| timer.passes(n, record_roofline))?;
    let record_forward = |pass: &mut wgpu::ComputePass<'_>| {
        if let Some(f) = &forward {
            f.record(pass)
        }
    };
    let forward_batch = match forward {
        Some(_) => steady_batch(steady, |n| timer.passes(n, record_forward))?,
        None => 0,
    };
    errors.check("warming up")?;

    // The GPU figures are interleaved repetition by repetition too: lavapipe's speed flips
    // between runs and within one (its workers get one core or two), and a ratio of figures
    // taken minutes apart would measure that flip. Each end-to-end call is a separate
    // figure: on the context's pooled buffers, and on one that keeps none (every call creates
    // its buffers); both upload, pad and read back into a new tensor.
    let mut failure: Option<Failed> = None;
    let gpu_figures = sample(policy, || {
        let mut keep = |r: Result<f64, Failed>| {
            r.unwrap_or_else(|e| {
                failure.get_or_insert(e);
                f64::NAN
            })
        };
        let steady_figures = |keep: &mut dyn FnMut(Result<f64, Failed>) -> f64| {
            [
                keep(timer.passes(kernel_batch, record_pad)),
                keep(timer.copies(copy_batch, copied, &gcopy, copy_bytes)),
                keep(timer.passes(roofline_batch, record_roofline)),
                match backward {
                    true => keep(timer.passes(forward_batch, record_forward)),
                    false => 0.0,
                },
            ]
        };
        if steady_only {
            let [k, c, r, f] = steady_figures(&mut keep);
            return [0.0, 0.0, 0.0, 0.0, 0.0, k, c, r, f];
        }
        let kernel_ts = keep(timer.passes(1, record_pad));
        let kernel_wall = keep((|| {
            let t = Instant::now();
            let mut enc = device.create_command_encoder(&Default::default());
            record_pad(&mut enc.begin_compute_pass(&Default::default()));
            ctx.queue().submit([enc.finish()]);
            device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| format!("waiting for the GPU: {e}"))?;
            Ok(t.elapsed().as_secs_f64() * 1e3)
        })());
        let copy = keep(timer.copies(1, copied, &gcopy, copy_bytes));
        // Pooled: device buffers kept, and the output given back to the context's arena.
        let pooled = keep((|| {
            let t = Instant::now();
            let padded = match &grad {
                Some(g) => ctx.pad_backward_blocking(plan, g),
                None => ctx.pad_blocking(plan, input),
            }
            .map_err(|e| format!("GpuContext::pad: {e}"))?;
            ctx.output_arena().recycle(padded.tensor);
            Ok(t.elapsed().as_secs_f64() * 1e3)
        })());
        let fresh = keep((|| {
            let t = Instant::now();
            let padded = match &grad {
                Some(g) => unpooled.pad_backward_blocking(plan, g),
                None => unpooled.pad_blocking(plan, input),
            };
            drop(padded.map_err(|e| format!("GpuContext::pad, no pool: {e}"))?);
            Ok(t.elapsed().as_secs_f64() * 1e3)
        })());
        let [kernel_batch_ms, copy_batch_ms, roofline_ms, forward_ms] = steady_figures(&mut keep);
        [kernel_ts, kernel_wall, copy, pooled, fresh, kernel_batch_ms, copy_batch_ms, roofline_ms, forward_ms]
    });
    if let Some(e) = failure {
        return Err(e);
    }
    errors.check("measuring")?;
    let [gpu_kernel_ms, gpu_kernel_wall_ms, gpu_copy_ms, gpu_e2e_pooled_ms, gpu_e2e_fresh_ms, gpu_kernel_batch_ms, gpu_copy_batch_ms, gpu_roofline_ms, gpu_forward_ms] =
        gpu_figures.map(|f| f.0.median);
    // Each figure's interval and MAD, and the ones that hit the time budget.
    let mut extra = std::collections::BTreeMap::new();
    let mut noisy = Vec::new();
    let named = [("cpu", cpu_s), ("cpu_fresh", fresh_s), ("cpu_arena", arena_s), ("memcpy", memcpy_s)]
        .into_iter()
        .chain([("cpu_forward", cpu_forward)])
        .chain(GPU_FIGURES.into_iter().zip(gpu_figures));
    let mut skipped: Vec<String> = match steady_only {
        true => NOT_STEADY.map(String::from).to_vec(),
        false => Vec::new(),
    };
    if backward {
        for name in NOT_BACKWARD {
            if !skipped.iter().any(|s| s == name) {
                skipped.push(name.to_string());
            }
        }
    }
    for (name, (s, hit_budget)) in named {
        let s: Summary = s;
        if skipped.iter().any(|x| x == name) || (!backward && ONLY_BACKWARD.contains(&name)) {
            continue;
        }
        extra.insert(format!("{name}_ci_low_ms"), s.ci_low);
        extra.insert(format!("{name}_ci_high_ms"), s.ci_high);
        extra.insert(format!("{name}_mad_ms"), s.mad);
        extra.insert(format!("{name}_samples"), s.samples as f64);
        if hit_budget {
            noisy.push(name.to_string());
        }
    }
    extra.insert("gpu_kernel_batch_ms".into(), gpu_kernel_batch_ms);
    extra.insert("gpu_copy_batch_ms".into(), gpu_copy_batch_ms);
    extra.insert("gpu_batch".into(), kernel_batch as f64);
    extra.insert("gpu_copy_batch".into(), copy_batch as f64);
    extra.insert("gpu_roofline_batch".into(), roofline_batch as f64);
    // Kept under its older name too, which reports since 5835660 carry.
    let over_copy = gpu_kernel_batch_ms / gpu_copy_batch_ms;
    extra.insert("gpu_kernel_batch_over_gpu_copy_batch".into(), over_copy);
    if backward {
        // The gradient against the forward pad of the same case (issue 84's targets: the
        // kernel within 1.5x, cpu::pad_backward within 1.5x cpu::pad_into).
        extra.insert("gpu_forward_kernel_batch_ms".into(), gpu_forward_ms);
        extra.insert("gpu_kernel_batch_over_forward".into(), gpu_kernel_batch_ms / gpu_forward_ms);
        if !steady_only {
            extra.insert("cpu_forward_ms".into(), cpu_forward.0.median);
            extra.insert("cpu_over_forward".into(), over(cpu_ms, cpu_forward.0.median));
        }
    }

    let moved = if backward { bytes_moved_backward(plan) } else { bytes_moved(plan) };
    let gbps = |bytes: u64, ms: f64| over(bytes as f64, ms * 1e-3) / 1e9;
    let info = ctx.adapter_info();
    Ok(Record {
        dtype: plan.dtype().name().into(),
        mode: plan.mode().name().into(),
        shape: plan.in_shape().to_vec(),
        pads: plan.begins().iter().chain(plan.ends()).copied().collect(),
        interior: match plan.has_interior() {
            true => plan.interior().iter().map(|&k| k as i64).collect(),
            false => Vec::new(),
        },
        out_bytes,
        bytes_moved: moved,
        adapter: info.name.clone(),
        backend: format!("{:?}", info.backend),
        gpu_timer: timer.label().into(),
        cpu_ms,
        cpu_fresh_ms,
        cpu_arena_ms,
        memcpy_ms,
        gpu_kernel_ms,
        gpu_copy_ms,
        gpu_roofline_ms,
        gpu_e2e_pooled_ms,
        gpu_e2e_fresh_ms,
        gpu_kernel_wall_ms,
        cpu_gbps: gbps(moved, cpu_ms),
        cpu_fresh_gbps: gbps(moved, cpu_fresh_ms),
        cpu_arena_gbps: gbps(moved, cpu_arena_ms),
        memcpy_gbps: gbps(2 * out_bytes, memcpy_ms),
        gpu_kernel_gbps: gbps(moved, gpu_kernel_batch_ms),
        gpu_copy_gbps: gbps(2 * out_bytes, gpu_copy_batch_ms),
        gpu_roofline_gbps: gbps(2 * out_bytes, gpu_roofline_ms),
        gpu_e2e_pooled_gbps: gbps(moved, gpu_e2e_pooled_ms),
        gpu_e2e_fresh_gbps: gbps(moved, gpu_e2e_fresh_ms),
        cpu_over_memcpy: over(cpu_ms, memcpy_ms),
        cpu_fresh_over_cpu: over(cpu_fresh_ms, cpu_ms),
        cpu_arena_over_cpu: over(cpu_arena_ms, cpu_ms),
        gpu_e2e_pooled_over_kernel_and_copies: over(gpu_e2e_pooled_ms, gpu_kernel_ms + 2.0 * gpu_copy_ms),
        gpu_e2e_pooled_over_kernel_wall: over(gpu_e2e_pooled_ms, gpu_kernel_wall_ms),
        gpu_kernel_over_gpu_copy: over_copy,
        gpu_kernel_over_roofline: gpu_kernel_batch_ms / gpu_roofline_ms,
        gpu_speedup_over_cpu: cpu_ms / gpu_kernel_batch_ms,
        extra,
        noisy,
        skipped,
        backward,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wgpu_pad::DataType;

    /// The bytes a pad must move: a crop reads less than its input.
    #[test]
    fn bytes_moved_counts_the_kept_input_and_the_output() {
        let plan = PadPlan::new(DataType::Float32, &[4, 6], &PadRequest::new(vec![1, -2, 1, 0])).unwrap();
        // Kept input 4 x 4, output 6 x 4.
        assert_eq!(bytes_moved(&plan), (16 + 24) * 4);
        // The gradient reads the output's gradient where the pad read (a constant pad's kept
        // part; all of it otherwise) and writes the input's. Input 4 x 6, kept 4 x 4, output 7 x 4.
        let request = PadRequest::new(vec![2, -2, 1, 0]);
        let constant = PadPlan::new(DataType::Float32, &[4, 6], &request).unwrap();
        assert_eq!(bytes_moved_backward(&constant), (16 + 24) * 4);
        let edge = PadPlan::new(DataType::Float32, &[4, 6], &request.mode(Mode::Edge)).unwrap();
        assert_eq!(bytes_moved_backward(&edge), (28 + 24) * 4);
        // Interior padding: [4, 6] dilated by 1 and 2 is [7, 16]; -3 and 0 on the first axis keep
        // rows 2 and 3 (at 4 and 6), -2 and -3 on the second columns 1 to 4 (at 3, 6, 9, 12).
        let request = PadRequest::from_padding_config(&[(-3, 0, 1), (-2, -3, 2)]);
        let interior = PadPlan::new(DataType::Float32, &[4, 6], &request).unwrap();
        assert_eq!(interior.out_shape(), &[4, 11]);
        assert_eq!(bytes_moved(&interior), (2 * 4 + 4 * 11) * 4);
    }

    /// `--backward` takes the types `cpu::pad_backward` takes, each gradient of the output's
    /// shape and bytes; a float8's holds no NaN (it would make every sum NaN).
    #[test]
    fn gradients_of_every_type_with_one() {
        let with: Vec<DataType> = DataType::ALL.into_iter().filter(|&t| has_gradient(t)).collect();
        assert_eq!(with.len(), 10, "{with:?}");
        for t in DataType::ALL {
            let plan = PadPlan::new(t, &[3, 50], &PadRequest::new(vec![1, 2, 3, 4])).unwrap();
            let got = gradient_of(&plan);
            assert_eq!(got.is_ok(), has_gradient(t), "{t}: {got:?}");
            if let Ok(zeros) = Tensor::zeros(t, plan.out_shape().to_vec()) {
                let cpu = cpu::pad_backward(&plan, &zeros);
                assert_eq!(cpu.is_ok(), has_gradient(t), "{t}: the CPU path takes the same types");
            }
            let Ok(g) = got else { continue };
            assert_eq!((g.shape(), g.bytes().unwrap().len()), (plan.out_shape(), 7 * 56 * t.width().bytes().unwrap()));
            if t.name().starts_with("float8") {
                assert!(g.bytes().unwrap().iter().all(|&b| !float8_nan(t, b)), "{t}");
            }
        }
        let nan_bytes = |t| (0..=255u8).filter(|&b| float8_nan(t, b)).count();
        let nans: Vec<usize> = [DataType::Float8e4m3fn, DataType::Float8e4m3fnuz, DataType::Float8e5m2]
            .into_iter()
            .map(nan_bytes)
            .collect();
        assert_eq!(nans, [2, 1, 6]);
    }
}

/// On the machine's adapter (lavapipe in CI): skipped without one unless
/// `WGPU_PAD_REQUIRE_GPU=1`, as the crate's GPU tests are.
#[cfg(test)]
mod on_the_gpu {
    use super::*;
    use wgpu_pad::DataType;

    fn context() -> Option<GpuContext> {
        match GpuContext::new_blocking() {
            Ok(ctx) => Some(ctx),
            Err(e) if std::env::var("WGPU_PAD_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
                panic!("WGPU_PAD_REQUIRE_GPU=1 but no GPU: {e}")
            }
            Err(e) => {
                eprintln!("skipped: no GPU ({e})");
                None
            }
        }
    }

    /// A batch of 8 pads raises no GPU error and times within 0.5-2x of one dispatch alone
    /// (5835660's batches named no timestamp in their middle passes: wgpu rejected the
    /// encoder, logged it, and the figure was one dispatch over 8).
    #[test]
    fn a_batch_of_eight_is_valid_and_times_eight_passes() {
        let Some(ctx) = context() else { return };
        let errors = GpuErrors::watch(ctx.device());
        let timer = GpuTimer::new(ctx.device(), ctx.queue());
        let plan =
            PadPlan::new(DataType::Int64, &[2, 3, 64, 64], &PadRequest::new(vec![0, 0, 1, 1, 0, 0, 1, 1])).unwrap();
        let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
        let buffer = |size: u64| {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        let (input, output) = (buffer(in_bytes), buffer(out_bytes));
        let pad = ctx.kernel().prepare(&plan, BufferRange::whole(&input), BufferRange::whole(&output)).unwrap();
        let passes = std::cell::Cell::new(0);
        let record = |pass: &mut wgpu::ComputePass<'_>| {
            passes.set(passes.get() + 1);
            pad.record(pass)
        };
        // What a batch must be; how its time compares with one dispatch's is the benchmarks'
        // business (a timed assertion fails on a busy machine).
        let one = timer.passes(1, record).unwrap();
        assert_eq!(passes.replace(0), 1);
        let batch = timer.passes(8, record).unwrap();
        assert_eq!(passes.get(), 8, "a batch of 8 records 8 passes");
        errors.check("timing a batch").unwrap();
        for figure in [one, batch] {
            assert!(figure.is_finite() && figure > 0.0, "a figure of its own: {one} one, {batch} a batch");
        }
    }

    /// Round six: a record's ratios are of the steady figures they name (the kernel's batch
    /// over the roofline's), not of the single dispatch.
    #[test]
    fn a_records_ratios_are_of_its_steady_figures() {
        let Some(ctx) = context() else { return };
        let unpooled = GpuContext::from_device(ctx.device(), ctx.queue(), ctx.adapter_info().clone()).unwrap();
        let (timer, errors) = (GpuTimer::new(ctx.device(), ctx.queue()), GpuErrors::watch(ctx.device()));
        let policy = Policy { fixed: Some(3), min: 1, noise: 0.02, budget: std::time::Duration::from_secs(2) };
        let steady = Steady { warmup_ms: 1.0, batch_ms: 1.0 };
        let setup = Setup {
            ctx: &ctx,
            unpooled: &unpooled,
            timer: &timer,
            errors: &errors,
            policy: &policy,
            steady: &steady,
            steady_only: false,
            backward: false,
        };
        let plan = PadPlan::new(DataType::Float32, &[64, 64], &PadRequest::new(vec![1, 1, 1, 1])).unwrap();
        let input = Tensor::from_bytes(DataType::Float32, vec![64, 64], vec![7; 64 * 64 * 4]).unwrap();
        let r = measure(&setup, &plan, &input).unwrap();
        let batch = r.extra["gpu_kernel_batch_ms"];
        assert!(batch > 0.0 && r.gpu_roofline_ms > 0.0);
        assert_eq!(r.gpu_kernel_over_roofline, batch / r.gpu_roofline_ms);
        assert_eq!(r.gpu_speedup_over_cpu, r.cpu_ms / batch);
        assert_eq!(r.gpu_kernel_over_gpu_copy, batch / r.extra["gpu_copy_batch_ms"]);
        assert!(r.skipped.is_empty() && r.cpu_ms > 0.0 && r.gpu_e2e_fresh_ms > 0.0 && r.memcpy_ms > 0.0);

        // --steady-only: the steady figures and their ratios alone, the rest 0 and named; the
        // report still a report (no NaN, which JSON writes as null).
        let r = measure(&Setup { steady_only: true, ..setup }, &plan, &input).unwrap();
        let batch = r.extra["gpu_kernel_batch_ms"];
        assert!(batch > 0.0 && r.gpu_roofline_ms > 0.0 && r.extra["gpu_copy_batch_ms"] > 0.0);
        assert_eq!(r.gpu_kernel_over_roofline, batch / r.gpu_roofline_ms);
        assert_eq!(r.skipped, NOT_STEADY.map(String::from).to_vec());
        let left_out = [r.cpu_ms, r.cpu_fresh_ms, r.cpu_arena_ms, r.memcpy_ms, r.gpu_kernel_ms, r.gpu_kernel_wall_ms];
        assert!(left_out.iter().chain(&[r.gpu_copy_ms, r.gpu_e2e_pooled_ms, r.gpu_e2e_fresh_ms]).all(|&x| x == 0.0));
        assert!(!r.extra.contains_key("cpu_ci_low_ms") && r.extra.contains_key("gpu_kernel_batch_ci_low_ms"));
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("null"), "{text}");
        let back: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(back.skipped, r.skipped);
        assert!(!r.extra.keys().any(|k| k.contains("forward")), "a pad's record has no forward figure");

        // --backward: the gradient's kernel and paths on a gradient of the output's shape (its
        // bytes moved: the output's gradient read, the input's written), named a backward case.
        let wrap =
            PadPlan::new(DataType::Float32, &[64, 64], &PadRequest::new(vec![1, 1, 1, 1]).mode(Mode::Wrap)).unwrap();
        let r = measure(&Setup { backward: true, ..setup }, &wrap, &input).unwrap();
        assert!(r.backward && r.extra["gpu_kernel_batch_ms"] > 0.0 && r.cpu_ms > 0.0 && r.gpu_e2e_pooled_ms > 0.0);
        assert_eq!((r.cpu_fresh_ms, r.cpu_arena_ms), (0.0, 0.0));
        assert_eq!(r.skipped, NOT_BACKWARD.map(String::from).to_vec());
        // Beside it the forward pad of the same case, and the ratios: each figure over its own.
        let (fk, fc) = (r.extra["gpu_forward_kernel_batch_ms"], r.extra["cpu_forward_ms"]);
        assert!(fk > 0.0 && fc > 0.0 && r.extra.contains_key("gpu_forward_kernel_batch_ci_low_ms"));
        assert_eq!(r.extra["gpu_kernel_batch_over_forward"], r.extra["gpu_kernel_batch_ms"] / fk);
        assert_eq!(r.extra["cpu_over_forward"], r.cpu_ms / fc);
        assert_eq!(r.bytes_moved, (66 * 66 + 64 * 64) * 4);
        assert!(crate::report::case_name(&r).ends_with("wrap backward"));
        let int = PadPlan::new(DataType::Int32, &[64, 64], &PadRequest::new(vec![1, 1, 1, 1])).unwrap();
        let int_input = Tensor::zeros(DataType::Int32, vec![64, 64]).unwrap();
        assert!(measure(&Setup { backward: true, ..setup }, &int, &int_input).is_err(), "no gradient of an int32");
    }

    /// The roofline copies every byte: one word, a tile less one, and whole tiles with a
    /// partial one after them (its bounds-checked path); and in windows of one tile (round
    /// six: a roofline bound whole failed past the device's largest binding).
    #[test]
    fn the_roofline_copies_every_word() {
        let Some(ctx) = context() else { return };
        let device = ctx.device();
        for (words, max_binding) in [(1u64, None), (1023, None), (1024 * 3 + 17, None), (1024 * 3 + 17, Some(1))] {
            let data: Vec<u8> = (0..words * 16).map(|i| (i * 31 % 251) as u8).collect();
            let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
            let src =
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: &data, usage });
            let dst = device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: words * 16,
                usage,
                mapped_at_creation: false,
            });
            let roofline = match max_binding {
                None => Roofline::new(device, &src, &dst),
                Some(tiles) => Roofline::in_windows(device, &src, &dst, tiles * Roofline::TILE * 16),
            };
            assert_eq!(roofline.windows.len(), if max_binding.is_some() { 4 } else { 1 });
            let mut enc = device.create_command_encoder(&Default::default());
            roofline.record(&mut enc.begin_compute_pass(&Default::default()));
            ctx.queue().submit([enc.finish()]);
            let copied = read(&ctx, &dst);
            assert!(copied == data, "{words} words: the copy differs");
        }
    }

    fn read(ctx: &GpuContext, buffer: &wgpu::Buffer) -> Vec<u8> {
        let device = ctx.device();
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: buffer.size(),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
        ctx.queue().submit([enc.finish()]);
        staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
        device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        let bytes = staging.slice(..).get_mapped_range().unwrap().to_vec();
        bytes
    }
}
