//! The measurements: a case on every path (CPU into a buffer, fresh, from an arena, a
//! memcpy; the GPU kernel, a buffer copy, a copy shader, end to end pooled and fresh; the
//! kernel and the buffer copy again as batches back to back), each figure sampled until its
//! interval is narrow (`stats`), and the cold start.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use wgpu::util::DeviceExt;
use wgpu_pad::gpu::{BufferRange, GpuContext};
use wgpu_pad::{cpu, DataType, Mode, OutputArena, PadPlan, PadRequest, Tensor};

use crate::cases::COLD_MIX;
use crate::stats::{sample, Policy, Summary};

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
        for dtype in [DataType::Float32, DataType::Float16, DataType::Uint8, DataType::Int64] {
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
    pub out_bytes: u64,
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
    pub gpu_kernel_ms: f64,
    pub gpu_copy_ms: f64,
    pub gpu_copy_shader_ms: f64,
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
    pub memcpy_gbps: f64,
    pub gpu_kernel_gbps: f64,
    pub gpu_copy_gbps: f64,
    pub gpu_copy_shader_gbps: f64,
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
    pub gpu_kernel_over_gpu_copy: f64,
    pub gpu_kernel_over_gpu_copy_shader: f64,
    pub gpu_speedup_over_cpu: f64,
    /// Each figure's 95 % interval, MAD and sample count (`gpu_kernel_ci_low_ms`, ...) and,
    /// with `--model`, the memory model's figures (`model_store_eff_32`, ...).
    #[serde(flatten, default)]
    pub extra: std::collections::BTreeMap<String, f64>,
    /// Figures whose interval was still wider than `--noise` when `--max-time` ran out.
    #[serde(default)]
    pub noisy: Vec<String>,
}

const COPY_SHADER: &str = r#"
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> b: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i < arrayLength(&b)) { b[i] = a[i]; }
}"#;

fn wall(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

/// Times GPU work: timestamp queries around compute passes (and inside encoders for
/// buffer copies) where the device has them, else wall time around submit and wait.
pub struct GpuTimer<'a> {
    ctx: &'a GpuContext,
    queries: Option<(wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer)>,
    inside_encoders: bool,
}

impl<'a> GpuTimer<'a> {
    pub fn new(ctx: &'a GpuContext) -> Self {
        let device = ctx.device();
        let queries = device.features().contains(wgpu::Features::TIMESTAMP_QUERY).then(|| {
            let set = device.create_query_set(&wgpu::QuerySetDescriptor {
                label: None,
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let read = device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            (set, resolve, read)
        });
        let inside_encoders = device.features().contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
        GpuTimer { ctx, queries, inside_encoders }
    }

    pub fn label(&self) -> &'static str {
        if self.queries.is_some() {
            "timestamp"
        } else {
            "wall"
        }
    }

    /// Times `n` compute passes back to back, one submit, from the first's start to the
    /// last's end, over `n`: `record` records each with the timestamp writes it is given.
    fn passes(
        &self,
        n: usize,
        record: impl Fn(&mut wgpu::CommandEncoder, Option<wgpu::ComputePassTimestampWrites>),
    ) -> f64 {
        let mut enc = self.ctx.device().create_command_encoder(&Default::default());
        let set = self.queries.as_ref().map(|(set, _, _)| set);
        for i in 0..n {
            let writes = set.map(|set| wgpu::ComputePassTimestampWrites {
                query_set: set,
                beginning_of_pass_write_index: (i == 0).then_some(0),
                end_of_pass_write_index: (i + 1 == n).then_some(1),
            });
            record(&mut enc, writes);
        }
        self.finish(enc, set.is_some()) / n as f64
    }

    /// Times `n` buffer copies back to back, over `n`.
    fn copies(&self, n: usize, src: &wgpu::Buffer, dst: &wgpu::Buffer, bytes: u64) -> f64 {
        let mut enc = self.ctx.device().create_command_encoder(&Default::default());
        let set = self.queries.as_ref().filter(|_| self.inside_encoders).map(|(set, _, _)| set);
        if let Some(set) = set {
            enc.write_timestamp(set, 0);
        }
        for _ in 0..n {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, bytes);
        }
        if let Some(set) = set {
            enc.write_timestamp(set, 1);
        }
        self.finish(enc, set.is_some()) / n as f64
    }

    /// Submits `enc` and waits: the time between its two timestamps where it wrote them, else
    /// wall time around the submit and wait.
    fn finish(&self, mut enc: wgpu::CommandEncoder, timestamps: bool) -> f64 {
        match (&self.queries, timestamps) {
            (Some((set, resolve, read)), true) => {
                enc.resolve_query_set(set, 0..2, resolve, 0);
                enc.copy_buffer_to_buffer(resolve, 0, read, 0, 16);
                self.ctx.queue().submit([enc.finish()]);
                self.read_ms(read)
            }
            _ => wall(|| {
                self.ctx.queue().submit([enc.finish()]);
                self.ctx.device().poll(wgpu::PollType::wait_indefinitely()).unwrap();
            }),
        }
    }

    fn read_ms(&self, read: &wgpu::Buffer) -> f64 {
        read.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
        self.ctx.device().poll(wgpu::PollType::wait_indefinitely()).unwrap();
        let ticks: [u64; 2] = bytemuck::pod_read_unaligned(&read.slice(..).get_mapped_range().unwrap()[..16]);
        read.unmap();
        ticks[1].saturating_sub(ticks[0]) as f64 * self.ctx.queue().get_timestamp_period() as f64 / 1e6
    }
}

/// GPU time a batch aims at, in ms: long enough for a GPU's clocks to settle, short enough
/// that a slow adapter (lavapipe, where a large pad takes 100 ms) runs a batch of one.
const BATCH_MS: f64 = 1.0;
/// Dispatches a batch takes at most.
const BATCH_MAX: usize = 64;

/// Dispatches in a batch, given one dispatch's time: about BATCH_MS together, 1 to BATCH_MAX
/// (BATCH_MAX where the time is 0 or not a number: a timer too coarse to see it).
fn batch_size(single_ms: f64) -> usize {
    if single_ms.is_nan() || single_ms <= 0.0 {
        return BATCH_MAX;
    }
    ((BATCH_MS / single_ms).ceil() as usize).clamp(1, BATCH_MAX)
}

pub fn measure(
    ctx: &GpuContext,
    unpooled: &GpuContext,
    timer: &GpuTimer,
    plan: &PadPlan,
    input: &Tensor,
    policy: &Policy,
) -> Record {
    let device = ctx.device();
    let (in_bytes, out_bytes) = plan.byte_sizes().expect("fixed-width types");
    let in_data = input.bytes().unwrap();

    // CPU: into a preallocated output, allocating, from an arena, and the memcpy limit,
    // interleaved repetition by repetition so that all four see the same machine state.
    let mut out = vec![0u8; out_bytes as usize];
    let src = vec![1u8; out_bytes as usize];
    let mut dst = vec![0u8; out_bytes as usize];
    let arena = OutputArena::default();
    let cpu_figures = sample(policy, || {
        let c = wall(|| dst.copy_from_slice(std::hint::black_box(&src)));
        let p = wall(|| cpu::pad_into(plan, in_data, &mut out).unwrap());
        let f = wall(|| drop(cpu::pad(plan, input).unwrap()));
        let a = wall(|| arena.recycle(cpu::pad_in(plan, input, &arena).unwrap()));
        [p, f, a, c]
    });
    drop(arena);
    let [cpu_s, fresh_s, arena_s, memcpy_s] = cpu_figures;
    let (cpu_ms, cpu_fresh_ms, cpu_arena_ms, memcpy_ms) =
        (cpu_s.0.median, fresh_s.0.median, arena_s.0.median, memcpy_s.0.median);

    // GPU buffers: the input, the output, and a copy target of the output's size.
    let size4 = |b: u64| b.next_multiple_of(4).max(4);
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let mut padded = in_data.to_vec();
    padded.resize(size4(in_bytes) as usize, 0);
    let gin = device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: &padded, usage });
    let mk = || {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: size4(out_bytes),
            usage,
            mapped_at_creation: false,
        })
    };
    let (gout, gcopy) = (mk(), mk());

    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(COPY_SHADER.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: gout.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: gcopy.as_entire_binding() },
        ],
    });
    let words = size4(out_bytes) / 4;
    let groups = words.div_ceil(64);
    let max = device.limits().max_compute_workgroups_per_dimension as u64;
    let (gx, gy) = (groups.min(max), groups.div_ceil(groups.min(max)));

    // The GPU figures are interleaved repetition by repetition too: lavapipe's speed flips
    // between runs and within one (its workers get one core or two), and a ratio of figures
    // taken minutes apart would measure that flip. Each end-to-end call is a separate
    // figure: on the context's pooled buffers, and on one that keeps none (every call creates
    // its buffers); both upload, pad and read back into a new tensor.
    let kernel = ctx.kernel();
    let record_kernel = |enc: &mut wgpu::CommandEncoder, ts: Option<wgpu::ComputePassTimestampWrites>| {
        kernel.encode_with_timestamps(enc, plan, BufferRange::whole(&gin), BufferRange::whole(&gout), ts).unwrap();
    };
    // Batches: a real GPU given one dispatch a submit, the host waiting between them, never
    // reaches steady clocks (the H200's 64 MiB copy measured 166 µs in one case and 342 µs
    // in the next). So the kernel and the buffer copy are also timed as `batch` of each back
    // to back in one submit, per dispatch: enough for about BATCH_MS of GPU time.
    // (Sized by the second dispatch: the first carries first-use costs.)
    timer.passes(1, record_kernel);
    let batch = batch_size(timer.passes(1, record_kernel));
    let gpu_figures = sample(policy, || {
        let kernel_ts = timer.passes(1, record_kernel);
        let kernel_batch = timer.passes(batch, record_kernel);
        let kernel_wall = wall(|| {
            let mut enc = device.create_command_encoder(&Default::default());
            kernel.encode(&mut enc, plan, BufferRange::whole(&gin), BufferRange::whole(&gout)).unwrap();
            ctx.queue().submit([enc.finish()]);
            device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        });
        let copy = timer.copies(1, &gout, &gcopy, size4(out_bytes));
        let copy_batch = timer.copies(batch, &gout, &gcopy, size4(out_bytes));
        let copy_shader = timer.passes(1, |enc, ts| {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: ts });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(gx as u32, gy as u32, 1);
        });
        // Pooled: device buffers kept, and the output given back to the context's arena.
        let pooled = wall(|| ctx.output_arena().recycle(ctx.pad_blocking(plan, input).unwrap().tensor));
        let fresh = wall(|| drop(unpooled.pad_blocking(plan, input).unwrap()));
        [kernel_ts, kernel_wall, copy, copy_shader, pooled, fresh, kernel_batch, copy_batch]
    });
    let [gpu_kernel_ms, gpu_kernel_wall_ms, gpu_copy_ms, gpu_copy_shader_ms, gpu_e2e_pooled_ms, gpu_e2e_fresh_ms, gpu_kernel_batch_ms, gpu_copy_batch_ms] =
        gpu_figures.map(|f| f.0.median);
    // Each figure's interval and MAD, and the ones that hit the time budget.
    let mut extra = std::collections::BTreeMap::new();
    let mut noisy = Vec::new();
    let named =
        [("cpu", cpu_s), ("cpu_fresh", fresh_s), ("cpu_arena", arena_s), ("memcpy", memcpy_s)].into_iter().chain(
            [
                "gpu_kernel",
                "gpu_kernel_wall",
                "gpu_copy",
                "gpu_copy_shader",
                "gpu_e2e_pooled",
                "gpu_e2e_fresh",
                "gpu_kernel_batch",
                "gpu_copy_batch",
            ]
            .into_iter()
            .zip(gpu_figures),
        );
    for (name, (s, hit_budget)) in named {
        let s: Summary = s;
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
    extra.insert("gpu_batch".into(), batch as f64);
    extra.insert("gpu_kernel_batch_over_gpu_copy_batch".into(), gpu_kernel_batch_ms / gpu_copy_batch_ms);

    let gbps = |ms: f64| out_bytes as f64 / (ms * 1e-3) / 1e9;
    let info = ctx.adapter_info();
    Record {
        dtype: plan.dtype().name().into(),
        mode: plan.mode().name().into(),
        shape: plan.in_shape().to_vec(),
        pads: plan.begins().iter().chain(plan.ends()).copied().collect(),
        out_bytes,
        adapter: info.name.clone(),
        backend: format!("{:?}", info.backend),
        gpu_timer: timer.label().into(),
        cpu_ms,
        cpu_fresh_ms,
        cpu_arena_ms,
        memcpy_ms,
        gpu_kernel_ms,
        gpu_copy_ms,
        gpu_copy_shader_ms,
        gpu_e2e_pooled_ms,
        gpu_e2e_fresh_ms,
        gpu_kernel_wall_ms,
        cpu_gbps: gbps(cpu_ms),
        cpu_fresh_gbps: gbps(cpu_fresh_ms),
        cpu_arena_gbps: gbps(cpu_arena_ms),
        memcpy_gbps: gbps(memcpy_ms),
        gpu_kernel_gbps: gbps(gpu_kernel_ms),
        gpu_copy_gbps: gbps(gpu_copy_ms),
        gpu_copy_shader_gbps: gbps(gpu_copy_shader_ms),
        gpu_e2e_pooled_gbps: gbps(gpu_e2e_pooled_ms),
        gpu_e2e_fresh_gbps: gbps(gpu_e2e_fresh_ms),
        cpu_over_memcpy: cpu_ms / memcpy_ms,
        cpu_fresh_over_cpu: cpu_fresh_ms / cpu_ms,
        cpu_arena_over_cpu: cpu_arena_ms / cpu_ms,
        gpu_e2e_pooled_over_kernel_and_copies: gpu_e2e_pooled_ms / (gpu_kernel_ms + 2.0 * gpu_copy_ms),
        gpu_e2e_pooled_over_kernel_wall: gpu_e2e_pooled_ms / gpu_kernel_wall_ms,
        gpu_kernel_over_gpu_copy: gpu_kernel_ms / gpu_copy_ms,
        gpu_kernel_over_gpu_copy_shader: gpu_kernel_ms / gpu_copy_shader_ms,
        gpu_speedup_over_cpu: cpu_ms / gpu_kernel_ms,
        extra,
        noisy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_aim_at_a_millisecond_of_gpu_time() {
        assert_eq!(batch_size(0.3), 4); // 1.2 ms
        assert_eq!(batch_size(0.25), 4);
        assert_eq!(batch_size(1.0), 1);
        assert_eq!(batch_size(120.0), 1); // lavapipe's large pads: no repeats
        assert_eq!(batch_size(0.001), BATCH_MAX); // a real GPU's tiny pads: capped
        assert_eq!(batch_size(0.0), BATCH_MAX);
        assert_eq!(batch_size(f64::NAN), BATCH_MAX);
    }
}
