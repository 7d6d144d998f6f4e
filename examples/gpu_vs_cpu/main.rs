//! The GPU-vs-CPU benchmark harness: the same pads on both paths, against the memory
//! limits of each (a host memcpy; a device buffer copy and a trivial copy shader).
//!
//! ```text
//! cargo run --release --features literal --example gpu_vs_cpu -- [--json FILE] [--svg FILE] [--reps N]
//! cargo run --release --features literal --example gpu_vs_cpu -- --dtype float32 --shape 1,64,512,512 --pads 0,0,1,1,0,0,1,1 --mode reflect
//! ```
//!
//! Every figure is the median of `--reps` repetitions after a warm-up, all measured in
//! this one process and run. The CPU figures and the memcpy are interleaved repetition by
//! repetition, and so are the GPU figures (kernel, copies, end to end). GPU kernel and
//! copy-shader times come from timestamp queries where the adapter has them (else wall
//! time around a wait, noted in the output).

use std::time::Instant;

use clap::Parser;
use serde::{Deserialize, Serialize};
use wgpu::util::DeviceExt;
use wgpu_pad::gpu::{BufferRange, GpuContext};
use wgpu_pad::{cpu, literal, DataType, Mode, OutputArena, PadPlan, PadRequest, Tensor};

/// Compare the GPU and CPU pad paths.
#[derive(Parser, Debug)]
#[command(about)]
struct Args {
    /// A custom case's ONNX type (with --shape, --pads, --mode).
    #[arg(long)]
    dtype: Option<String>,
    /// A custom case's shape, e.g. 1,3,224,224.
    #[arg(long)]
    shape: Option<String>,
    /// A custom case's pads, begins then ends.
    #[arg(long, allow_hyphen_values = true)]
    pads: Option<String>,
    /// A custom case's mode.
    #[arg(long, default_value = "constant")]
    mode: String,
    /// A custom case's constant.
    #[arg(long, allow_hyphen_values = true)]
    value: Option<String>,
    /// Repetitions per figure (after one warm-up); the median is reported.
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Write the records as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Write a bar chart of GB/s per case as SVG.
    #[arg(long)]
    svg: Option<std::path::PathBuf>,
    /// Redraw the SVG (--svg) from a JSON report this harness wrote, measuring nothing.
    #[arg(long)]
    replot: Option<std::path::PathBuf>,
    /// Only the cold start (which the default suite also reports): the first (compiles
    /// included) and second pass over a mix of 120 pads (5 modes x 4 types x 6 shapes) on a
    /// fresh kernel, and the pipelines it compiled.
    #[arg(long)]
    cold_start: bool,
    /// Add the memory-transaction model of the real shaders (gpu::model) to every case:
    /// store and load efficiency, sectors per request and traffic over ideal, per SIMD-group
    /// size of --model-lanes, traced on this adapter.
    #[arg(long)]
    model: bool,
    /// The model alone: trace and print it, measure nothing.
    #[arg(long)]
    model_only: bool,
    /// SIMD-group sizes the model groups lanes by.
    #[arg(long, default_value = "32,64", value_delimiter = ',')]
    model_lanes: Vec<u32>,
    /// Which cases: `default` (the suite of 25), `engine` (the engine shapes of issue 43, every
    /// mode) or `all` (both, and the cold-start mix's shapes).
    #[arg(long, default_value = "default")]
    suite: String,
}

/// The shapes and pads of the cold-start mix (pads begins then ends).
const COLD_MIX: [(&[usize], &[i64]); 6] = [
    (&[1, 3, 224, 224], &[0, 0, 2, 2, 0, 0, 2, 2]),
    (&[8, 4096, 256], &[0, 0, 3, 0, 0, 5]),
    (&[1, 1024, 1024, 3], &[0, 2, 2, 0, 0, 2, 2, 0]),
    (&[2, 3, 8, 8], &[1, 1, 1, 1, 1, 1, 1, 1]),
    (&[17], &[3, 4]),
    (&[4, 5, 6, 7, 2], &[0, 1, -1, 1, 0, 0, 1, -1, 1, 0]),
];

#[derive(Serialize, Deserialize, Clone, Copy)]
struct ColdStart {
    pads: usize,
    pipelines: usize,
    cold_ms: f64,
    warm_ms: f64,
}

/// Cold start: every pad of the mix encoded and submitted once on a fresh kernel (pipelines
/// compile on first use), then again; each pass ends with a device sync.
fn cold_start(ctx: &GpuContext) -> Result<ColdStart, Box<dyn std::error::Error>> {
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
struct Record {
    dtype: String,
    mode: String,
    shape: Vec<usize>,
    pads: Vec<i64>,
    out_bytes: u64,
    adapter: String,
    backend: String,
    gpu_timer: String,
    cpu_ms: f64,
    /// `cpu::pad`: a new allocation each call, its pages faulted in as the pad writes them.
    cpu_fresh_ms: f64,
    /// `cpu::pad_in` on an `OutputArena` that each output is given back to: reused memory.
    #[serde(default)]
    cpu_arena_ms: f64,
    memcpy_ms: f64,
    gpu_kernel_ms: f64,
    gpu_copy_ms: f64,
    gpu_copy_shader_ms: f64,
    gpu_e2e_pooled_ms: f64,
    gpu_e2e_fresh_ms: f64,
    /// The kernel alone on buffers made beforehand, encoded, submitted and waited for (wall
    /// time): the floor of any call that waits for its pad, fixed costs the timestamps of
    /// `gpu_kernel_ms` do not see included. (Absent from reports written before it.)
    #[serde(default)]
    gpu_kernel_wall_ms: f64,
    cpu_gbps: f64,
    cpu_fresh_gbps: f64,
    #[serde(default)]
    cpu_arena_gbps: f64,
    memcpy_gbps: f64,
    gpu_kernel_gbps: f64,
    gpu_copy_gbps: f64,
    gpu_copy_shader_gbps: f64,
    gpu_e2e_pooled_gbps: f64,
    gpu_e2e_fresh_gbps: f64,
    cpu_over_memcpy: f64,
    cpu_fresh_over_cpu: f64,
    #[serde(default)]
    cpu_arena_over_cpu: f64,
    /// Pooled end to end over (kernel + 2 x the output's buffer copy): upload and readback
    /// at copy speed would make it 1.
    gpu_e2e_pooled_over_kernel_and_copies: f64,
    /// Pooled end to end over the kernel's wall time: what a call adds to a bare dispatch.
    #[serde(default)]
    gpu_e2e_pooled_over_kernel_wall: f64,
    gpu_kernel_over_gpu_copy: f64,
    gpu_kernel_over_gpu_copy_shader: f64,
    gpu_speedup_over_cpu: f64,
    /// With `--model`: the memory model's figures (`model_store_eff_32`, ...).
    #[serde(flatten, default)]
    model: std::collections::BTreeMap<String, f64>,
}

const SUITE: [(DataType, &[usize], &[i64]); 5] = [
    (DataType::Float32, &[1, 64, 512, 512], &[0, 0, 1, 1, 0, 0, 1, 1]),
    (DataType::Uint8, &[1, 1024, 1024, 3], &[0, 2, 2, 0, 0, 2, 2, 0]),
    (DataType::Float16, &[8, 4096, 256], &[0, 3, 0, 0, 5, 0]),
    (DataType::Int64, &[2, 3, 8, 8], &[0, 0, 1, 1, 0, 0, 1, 1]),
    (DataType::Float32, &[1, 3, 224, 224], &[0, 0, 100, 100, 0, 0, 100, 100]),
];

/// Shapes engines pad most (issue 43): NCHW and NHWC activations and images, short rows, audio
/// framing, a mask.
const ENGINE: [(DataType, &[usize], &[i64]); 8] = [
    (DataType::Float16, &[1, 64, 56, 56], &[0, 0, 1, 1, 0, 0, 1, 1]),
    (DataType::Float16, &[8, 4096, 256], &[0, 0, 0, 0, 0, 8]),
    (DataType::Uint8, &[1, 720, 1280, 3], &[0, 4, 4, 0, 0, 4, 4, 0]),
    (DataType::Uint8, &[1, 3, 224, 224], &[0, 0, 3, 3, 0, 0, 3, 3]),
    (DataType::Float16, &[1, 256, 7, 7], &[0, 0, 3, 3, 0, 0, 3, 3]),
    (DataType::Float32, &[1, 1, 16000], &[0, 0, 512, 0, 0, 512]),
    (DataType::Bool, &[4, 77], &[0, 0, 0, 3]),
    (DataType::Int64, &[2, 3, 8, 8], &[0, 0, 1, 1, 0, 0, 1, 1]),
];

/// The model's fields for one case: `model_<figure>_<lanes>` and `model_dispatches`.
fn model_fields(
    ctx: &GpuContext,
    plan: &PadPlan,
    input: &Tensor,
    lanes: &[u32],
) -> Result<std::collections::BTreeMap<String, f64>, Box<dyn std::error::Error>> {
    use wgpu_pad::gpu::model;
    let (program, accesses) =
        model::trace(ctx.device(), ctx.queue(), plan, input.bytes(), &model::TraceOptions::default())?;
    let mut fields = std::collections::BTreeMap::new();
    fields.insert("model_dispatches".to_string(), program.dispatches().len() as f64);
    for &n in lanes {
        let f = model::analyze(&accesses, n);
        for (name, value) in [
            ("store_eff", f.store_efficiency),
            ("load_eff", f.load_efficiency),
            ("traffic_over_ideal", f.traffic_over_ideal),
            ("sectors_per_request", f.sectors_per_request),
            ("load_traffic_over_ideal", f.load_traffic_over_ideal),
            ("store_traffic_over_ideal", f.store_traffic_over_ideal),
        ] {
            fields.insert(format!("model_{name}_{n}"), value);
        }
    }
    Ok(fields)
}

fn print_model_table(rows: &[(String, std::collections::BTreeMap<String, f64>)], lanes: &[u32]) {
    print!("{:<40} {:>5}", "case (model)", "disp");
    for n in lanes {
        print!(
            " {:>8} {:>8} {:>8} {:>7}",
            format!("store{n}"),
            format!("load{n}"),
            format!("traf{n}"),
            format!("spr{n}")
        );
    }
    println!();
    for (name, f) in rows {
        print!("{:<40} {:>5}", name, f.get("model_dispatches").copied().unwrap_or(0.0));
        for n in lanes {
            let g = |k: &str| f.get(&format!("model_{k}_{n}")).copied().unwrap_or(f64::NAN);
            print!(
                " {:>8.3} {:>8.3} {:>8.3} {:>7.2}",
                g("store_eff"),
                g("load_eff"),
                g("traffic_over_ideal"),
                g("sectors_per_request")
            );
        }
        println!();
    }
}

const COPY_SHADER: &str = r#"
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> b: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i < arrayLength(&b)) { b[i] = a[i]; }
}"#;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn wall(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

fn ints<T: std::str::FromStr>(s: &str) -> Vec<T> {
    s.split(',').filter(|x| !x.trim().is_empty()).map(|x| x.trim().parse().ok().expect("a list of integers")).collect()
}

/// Times GPU work: timestamp queries around compute passes (and inside encoders for
/// buffer copies) where the device has them, else wall time around submit and wait.
struct GpuTimer<'a> {
    ctx: &'a GpuContext,
    queries: Option<(wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer)>,
    inside_encoders: bool,
}

impl<'a> GpuTimer<'a> {
    fn new(ctx: &'a GpuContext) -> Self {
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

    fn label(&self) -> &'static str {
        if self.queries.is_some() {
            "timestamp"
        } else {
            "wall"
        }
    }

    /// Times a compute pass that `record` records with the given timestamp writes.
    fn pass(&self, record: impl Fn(&mut wgpu::CommandEncoder, Option<wgpu::ComputePassTimestampWrites>)) -> f64 {
        let device = self.ctx.device();
        let mut enc = device.create_command_encoder(&Default::default());
        match &self.queries {
            Some((set, resolve, read)) => {
                let writes = wgpu::ComputePassTimestampWrites {
                    query_set: set,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                };
                record(&mut enc, Some(writes));
                enc.resolve_query_set(set, 0..2, resolve, 0);
                enc.copy_buffer_to_buffer(resolve, 0, read, 0, 16);
                self.ctx.queue().submit([enc.finish()]);
                self.read_ms(read)
            }
            None => {
                record(&mut enc, None);
                wall(|| {
                    self.ctx.queue().submit([enc.finish()]);
                    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
                })
            }
        }
    }

    /// Times a buffer copy.
    fn copy(&self, src: &wgpu::Buffer, dst: &wgpu::Buffer, bytes: u64) -> f64 {
        let device = self.ctx.device();
        let mut enc = device.create_command_encoder(&Default::default());
        match (&self.queries, self.inside_encoders) {
            (Some((set, resolve, read)), true) => {
                enc.write_timestamp(set, 0);
                enc.copy_buffer_to_buffer(src, 0, dst, 0, bytes);
                enc.write_timestamp(set, 1);
                enc.resolve_query_set(set, 0..2, resolve, 0);
                enc.copy_buffer_to_buffer(resolve, 0, read, 0, 16);
                self.ctx.queue().submit([enc.finish()]);
                self.read_ms(read)
            }
            _ => {
                enc.copy_buffer_to_buffer(src, 0, dst, 0, bytes);
                wall(|| {
                    self.ctx.queue().submit([enc.finish()]);
                    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
                })
            }
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

fn measure(
    ctx: &GpuContext,
    unpooled: &GpuContext,
    timer: &GpuTimer,
    plan: &PadPlan,
    input: &Tensor,
    reps: usize,
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
    let (mut cpu, mut fresh, mut in_arena, mut copy) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for rep in 0..=reps {
        let c = wall(|| dst.copy_from_slice(std::hint::black_box(&src)));
        let p = wall(|| cpu::pad_into(plan, in_data, &mut out).unwrap());
        let f = wall(|| drop(cpu::pad(plan, input).unwrap()));
        let a = wall(|| arena.recycle(cpu::pad_in(plan, input, &arena).unwrap()));
        if rep > 0 {
            copy.push(c);
            cpu.push(p);
            fresh.push(f);
            in_arena.push(a);
        }
    }
    drop(arena);
    let (cpu_ms, cpu_fresh_ms, cpu_arena_ms, memcpy_ms) = (median(cpu), median(fresh), median(in_arena), median(copy));

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
    let mut figures: [Vec<f64>; 6] = Default::default();
    for rep in 0..=reps {
        let kernel_ts = timer.pass(|enc, ts| {
            kernel.encode_with_timestamps(enc, plan, BufferRange::whole(&gin), BufferRange::whole(&gout), ts).unwrap();
        });
        let kernel_wall = wall(|| {
            let mut enc = device.create_command_encoder(&Default::default());
            kernel.encode(&mut enc, plan, BufferRange::whole(&gin), BufferRange::whole(&gout)).unwrap();
            ctx.queue().submit([enc.finish()]);
            device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        });
        let copy = timer.copy(&gout, &gcopy, size4(out_bytes));
        let copy_shader = timer.pass(|enc, ts| {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: ts });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(gx as u32, gy as u32, 1);
        });
        // Pooled: device buffers kept, and the output given back to the context's arena.
        let pooled = wall(|| ctx.output_arena().recycle(ctx.pad_blocking(plan, input).unwrap().tensor));
        let fresh = wall(|| drop(unpooled.pad_blocking(plan, input).unwrap()));
        if rep > 0 {
            for (list, figure) in figures.iter_mut().zip([kernel_ts, kernel_wall, copy, copy_shader, pooled, fresh]) {
                list.push(figure);
            }
        }
    }
    let [gpu_kernel_ms, gpu_kernel_wall_ms, gpu_copy_ms, gpu_copy_shader_ms, gpu_e2e_pooled_ms, gpu_e2e_fresh_ms] =
        figures.map(median);

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
        model: Default::default(),
    }
}

fn case_name(r: &Record) -> String {
    let shape: Vec<String> = r.shape.iter().map(|d| d.to_string()).collect();
    format!("{} [{}] {}", r.dtype, shape.join(","), r.mode)
}

fn print_table(records: &[Record]) {
    println!(
        "{:<34} {:>8} {:>8} {:>8} {:>7} {:>8} {:>7} {:>8} {:>7} {:>9} {:>8} {:>9} {:>7} {:>8} {:>9} {:>9} {:>7} {:>9} {:>7} {:>8}",
        "case",
        "out MiB",
        "cpu ms",
        "fresh ms",
        "fr/cpu",
        "arena ms",
        "ar/cpu",
        "memcpy",
        "cpu/mc",
        "kernel ms",
        "copy ms",
        "cshad ms",
        "k/copy",
        "k/cshad",
        "e2e pool",
        "e2e new",
        "pool/t",
        "k wall",
        "pool/kw",
        "speedup"
    );
    for r in records {
        println!(
            "{:<34} {:>8.2} {:>8.3} {:>8.3} {:>7.2} {:>8.3} {:>7.2} {:>8.3} {:>7.2} {:>9.3} {:>8.3} {:>9.3} {:>7.2} {:>8.2} {:>9.2} {:>9.2} {:>7.2} {:>9.3} {:>7.2} {:>8.2}",
            case_name(r),
            r.out_bytes as f64 / (1 << 20) as f64,
            r.cpu_ms,
            r.cpu_fresh_ms,
            r.cpu_fresh_over_cpu,
            r.cpu_arena_ms,
            r.cpu_arena_over_cpu,
            r.memcpy_ms,
            r.cpu_over_memcpy,
            r.gpu_kernel_ms,
            r.gpu_copy_ms,
            r.gpu_copy_shader_ms,
            r.gpu_kernel_over_gpu_copy,
            r.gpu_kernel_over_gpu_copy_shader,
            r.gpu_e2e_pooled_ms,
            r.gpu_e2e_fresh_ms,
            r.gpu_e2e_pooled_over_kernel_and_copies,
            r.gpu_kernel_wall_ms,
            r.gpu_e2e_pooled_over_kernel_wall,
            r.gpu_speedup_over_cpu
        );
    }
}

fn write_svg(path: &std::path::Path, records: &[Record]) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    // Outputs under 1 MiB measure fixed costs, not bandwidth: their GB/s would set the scale.
    let records: Vec<Record> = records.iter().filter(|r| r.out_bytes >= 1 << 20).cloned().collect();
    let records = &records[..];
    type Series = (&'static str, RGBColor, fn(&Record) -> f64);
    let series: [Series; 9] = [
        ("CPU pad into a preallocated output", RGBColor(66, 133, 244), |r| r.cpu_gbps),
        ("CPU pad, output allocated (cpu::pad)", RGBColor(30, 80, 170), |r| r.cpu_fresh_gbps),
        ("CPU pad, output from an arena (cpu::pad_in)", RGBColor(100, 60, 160), |r| r.cpu_arena_gbps),
        ("host memcpy", RGBColor(160, 190, 240), |r| r.memcpy_gbps),
        ("GPU pad kernel", RGBColor(219, 68, 55), |r| r.gpu_kernel_gbps),
        ("GPU copy shader (one u32 per invocation)", RGBColor(245, 150, 60), |r| r.gpu_copy_shader_gbps),
        ("GPU buffer copy", RGBColor(240, 170, 160), |r| r.gpu_copy_gbps),
        ("GPU end to end, pooled buffers", RGBColor(15, 157, 88), |r| r.gpu_e2e_pooled_gbps),
        ("GPU end to end, new buffers", RGBColor(140, 210, 160), |r| r.gpu_e2e_fresh_gbps),
    ];
    let top = records.iter().flat_map(|r| series.iter().map(move |s| (s.2)(r))).fold(0.0, f64::max) * 1.1;
    // Empty rows below the last case hold the legend, so it covers no bar.
    let legend_rows = 3;
    let height = 160 + 26 * 4 * (records.len() + legend_rows) as u32;
    let root = SVGBackend::new(path, (1000, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!(
        "Pad throughput, GB/s of output, outputs of 1 MiB and more (GPU: {})",
        records.first().map_or("", |r| r.adapter.as_str())
    );
    let n = records.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(260)
        .build_cartesian_2d(0.0..top.max(0.001), (n + legend_rows as f64)..0.0)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels((records.len() + legend_rows) * 2 + 1)
        .y_label_formatter(&|y| {
            let i = (*y - 0.5).round();
            if (y - 0.5 - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < records.len() {
                case_name(&records[i as usize])
            } else {
                String::new()
            }
        })
        .x_desc("output bytes per second, GB/s (higher is faster)")
        .draw()?;
    for (k, (name, color, value)) in series.iter().enumerate() {
        let color = *color;
        chart
            .draw_series(records.iter().enumerate().map(|(i, r)| {
                let y0 = i as f64 + 0.05 + k as f64 * 0.1;
                Rectangle::new([(0.0, y0), (value(r), y0 + 0.09)], color.filled())
            }))?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn,wgpu_hal::gles=off")).init();
    let args = Args::parse();
    if let Some(report) = &args.replot {
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(report)?)?;
        let records: Vec<Record> = serde_json::from_value(report["records"].clone())?;
        let svg = args.svg.as_ref().ok_or("--replot needs --svg")?;
        write_svg(svg, &records)?;
        println!("wrote {}", svg.display());
        return Ok(());
    }
    let ctx = GpuContext::new_blocking()?;
    let timer = GpuTimer::new(&ctx);
    let info = ctx.adapter_info();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "adapter: {} ({:?}), GPU timer: {}, CPU threads: {threads}, median of {} after a warm-up",
        info.name,
        info.backend,
        timer.label(),
        args.reps
    );

    // The cold start first, on its own fresh kernel, so nothing before it has compiled.
    let custom = args.dtype.is_some() || args.shape.is_some() || args.pads.is_some();
    let cold = match custom || args.model_only {
        true => None,
        false => Some(cold_start(&ctx)?),
    };
    if let Some(c) = &cold {
        println!(
            "cold start: {} pads, {} pipelines, first pass {:.1} ms, second {:.1} ms",
            c.pads, c.pipelines, c.cold_ms, c.warm_ms
        );
    }
    if args.cold_start {
        if let (Some(path), Some(c)) = (&args.json, &cold) {
            std::fs::write(path, serde_json::to_string_pretty(c)?)?;
            println!("wrote {}", path.display());
        }
        return Ok(());
    }
    // The same device without a buffer pool: every call creates its buffers.
    let unpooled = GpuContext::from_device(ctx.device(), ctx.queue(), info.clone())?;
    unpooled.set_buffer_pool_limit(0);

    let mut cases: Vec<(PadPlan, Tensor)> = Vec::new();
    let mut add = |dtype: DataType, shape: Vec<usize>, pads: Vec<i64>, mode: Mode, value: Option<Tensor>| {
        let mut req = PadRequest::new(pads).mode(mode);
        if let Some(v) = value {
            req = req.constant(v);
        }
        let plan = PadPlan::new(dtype, &shape, &req)?;
        let n = shape.iter().product::<usize>() * dtype.width().bytes().ok_or("fixed-width types only")?;
        let input = Tensor::from_bytes(dtype, shape, (0..n).map(|i| (i * 7 + 3) as u8).collect())?;
        cases.push((plan, input));
        Ok::<(), Box<dyn std::error::Error>>(())
    };
    match (&args.dtype, &args.shape, &args.pads) {
        (Some(dtype), Some(shape), Some(pads)) => {
            let dtype: DataType = dtype.parse()?;
            let value = args.value.as_deref().map(|v| literal::parse_value(dtype, v)).transpose()?;
            add(dtype, ints(shape), ints(pads), args.mode.parse()?, value)?;
        }
        (None, None, None) => {
            let mut shapes: Vec<(DataType, &[usize], &[i64])> = match args.suite.as_str() {
                "default" => SUITE.to_vec(),
                "engine" => ENGINE.to_vec(),
                "all" => SUITE.iter().chain(ENGINE.iter()).copied().collect(),
                other => return Err(format!("--suite: {other:?} is not default, engine or all").into()),
            };
            if args.suite == "all" {
                for dtype in [DataType::Float32, DataType::Float16, DataType::Uint8, DataType::Int64] {
                    shapes.extend(COLD_MIX.iter().map(|&(shape, pads)| (dtype, shape, pads)));
                }
            }
            for (dtype, shape, pads) in shapes {
                for mode in Mode::ALL {
                    if let Err(e) = add(dtype, shape.to_vec(), pads.to_vec(), mode, None) {
                        // The cold-start mix has a shape some modes refuse (reflect of a crop).
                        eprintln!("skipped {dtype} {shape:?} {mode}: {e}");
                    }
                }
            }
        }
        _ => return Err("a custom case needs --dtype, --shape and --pads".into()),
    }

    if args.model_only {
        let mut rows = Vec::new();
        for (plan, input) in &cases {
            let shape: Vec<String> = plan.in_shape().iter().map(|d| d.to_string()).collect();
            let name = format!("{} [{}] {}", plan.dtype().name(), shape.join(","), plan.mode().name());
            rows.push((name, model_fields(&ctx, plan, input, &args.model_lanes)?));
        }
        print_model_table(&rows, &args.model_lanes);
        if let Some(path) = &args.json {
            let records: Vec<_> = rows
                .iter()
                .zip(&cases)
                .map(|((name, f), (plan, _))| {
                    let mut v = serde_json::json!({ "case": name, "dtype": plan.dtype().name(), "mode": plan.mode().name(),
                        "shape": plan.in_shape(), "pads": plan.begins().iter().chain(plan.ends()).collect::<Vec<_>>(),
                        "out_bytes": plan.byte_sizes().map_or(0, |s| s.1) });
                    for (k, x) in f {
                        v[k] = serde_json::json!(x);
                    }
                    v
                })
                .collect();
            std::fs::write(path, serde_json::to_string_pretty(&serde_json::json!({ "model": records }))?)?;
            println!("wrote {}", path.display());
        }
        return Ok(());
    }
    let mut records = Vec::new();
    let total = cases.len();
    for (i, (plan, input)) in cases.iter().enumerate() {
        eprint!("\r[{}/{total}] {} {:?} {}...        ", i + 1, plan.dtype(), plan.in_shape(), plan.mode());
        let mut record = measure(&ctx, &unpooled, &timer, plan, input, args.reps);
        if args.model {
            record.model = model_fields(&ctx, plan, input, &args.model_lanes)?;
        }
        records.push(record);
    }
    eprintln!("\r{:60}", "");
    print_table(&records);
    if args.model {
        let rows: Vec<_> = records.iter().map(|r| (case_name(r), r.model.clone())).collect();
        print_model_table(&rows, &args.model_lanes);
    }
    if let Some(path) = &args.json {
        let report = serde_json::json!({ "cold_start": cold, "records": records });
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &args.svg {
        write_svg(path, &records)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
