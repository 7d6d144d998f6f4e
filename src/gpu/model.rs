//! A memory-transaction model of the real shaders: how a GPU's SIMD groups would touch
//! memory running a pad, measured from the shaders themselves rather than from a clock.
//!
//! [`trace`] runs a pad's pipelines in their trace variant (the same WGSL with `TRACE`
//! true: every load from the input, store to the output and read of the output goes through
//! `load_src`/`store_dst`/`load_dst`, which then record it) on any adapter, lavapipe
//! included, for a sample of each dispatch's workgroups. [`analyze`] then groups the
//! invocations into SIMD groups by `local_invocation_index` and takes the n-th execution of
//! one access site by a group's lanes as one instruction (lanes that skip it are inactive):
//!
//! - per instruction, the distinct bytes its active lanes ask for, the 32-byte sectors they
//!   lie in (`actual`), and `ideal`, the sectors that many bytes would span were they
//!   contiguous from the first byte asked: ceil((first mod 32 + distinct) / 32). A
//!   contiguous access is perfect at any alignment, a broadcast costs its one sector;
//! - efficiency = sum of ideal / sum of actual (a copy is 1.0, lanes a row apart about
//!   0.125), loads and stores apart; sectors per request, the mean actual;
//! - traffic over ideal = distinct sectors the traced workgroups touch x 32 / the distinct
//!   bytes they ask for: what an ideal cache would still move over what the pad needs.
//!
//! `gpu_vs_cpu --model` reports these per case; BENCHMARKS.md holds the figures.

// The trace runs a device and blocks: not in the browser, where the analysis alone is built.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

use std::collections::{HashMap, HashSet};

use super::params::WORKGROUP;
#[cfg(not(target_arch = "wasm32"))]
use {
    super::buffers::describe,
    super::program::{BufferView, DeviceLimits, Program},
    crate::error::{PadError, Result},
    crate::plan::PadPlan,
};

/// What an access did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// A load from the input.
    InputLoad,
    /// A store to the output.
    OutputStore,
    /// A load from the output (a word partly outside the window keeps its other bytes).
    OutputLoad,
}

impl AccessKind {
    fn from_code(code: u32) -> Option<AccessKind> {
        match code {
            0 => Some(AccessKind::InputLoad),
            1 => Some(AccessKind::OutputStore),
            2 => Some(AccessKind::OutputLoad),
            _ => None,
        }
    }

    /// A load (from the input, or from the output to keep a partial word's other bytes).
    pub fn is_load(self) -> bool {
        self != AccessKind::OutputStore
    }
}

/// One access of one invocation, in its program order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Which dispatch of the program (binding window).
    pub dispatch: u32,
    /// The workgroup's linear id in its dispatch.
    pub workgroup: u32,
    /// `local_invocation_index`.
    pub lane: u32,
    /// The access site in the shader (a number unique within the kernel).
    pub site: u32,
    /// What it did.
    pub kind: AccessKind,
    /// Its first byte, in the buffer (the binding's offset added).
    pub address: u64,
    /// Its size in bytes.
    pub bytes: u32,
}

/// How much of a large dispatch to trace.
#[derive(Debug, Clone, Copy)]
pub struct TraceOptions {
    /// Workgroups traced per dispatch at most: the first, the last and a seeded random set
    /// (all of them where a dispatch has no more).
    pub workgroups_per_dispatch: u32,
    /// The random set's seed.
    pub seed: u64,
    /// Accesses one invocation may record (a trace that needs more is an error).
    pub records_per_invocation: u32,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions { workgroups_per_dispatch: 48, seed: 0x9e37_79b9, records_per_invocation: 512 }
    }
}

/// The model's figures at one SIMD-group size.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Figures {
    /// Lanes per SIMD group.
    pub lanes: u32,
    /// Sum of ideal over actual sectors, stores.
    pub store_efficiency: f64,
    /// The same for loads (from the input, and reads of the output).
    pub load_efficiency: f64,
    /// Mean sectors an instruction touches, loads and stores together.
    pub sectors_per_request: f64,
    /// Distinct sectors touched x 32 over distinct bytes asked, loads and stores together.
    pub traffic_over_ideal: f64,
    /// The same for loads alone.
    pub load_traffic_over_ideal: f64,
    /// The same for stores alone.
    pub store_traffic_over_ideal: f64,
    /// Instructions counted (loads and stores).
    pub instructions: u64,
}

/// One instruction of one SIMD group: (dispatch, workgroup, group, site, kind, execution).
type Instruction = (u32, u32, u32, u32, AccessKind, u32);

/// Bytes in a sector.
pub const SECTOR: u64 = 32;

/// The model of accesses `trace` at SIMD groups of `lanes` (a divisor of the workgroup
/// size, or larger: then groups span workgroups' lanes no further than one workgroup).
pub fn analyze(trace: &[Access], lanes: u32) -> Figures {
    // Instructions: (dispatch, workgroup, SIMD group, site, kind, n-th execution) -> bytes.
    let mut executions: HashMap<(u32, u32, u32, u32), u32> = HashMap::new();
    let mut instructions: HashMap<Instruction, Vec<(u64, u32)>> = HashMap::new();
    for a in trace {
        let n = executions.entry((a.dispatch, a.workgroup, a.lane, a.site)).or_insert(0);
        instructions
            .entry((a.dispatch, a.workgroup, a.lane / lanes.max(1), a.site, a.kind, *n))
            .or_default()
            .push((a.address, a.bytes));
        *n += 1;
    }
    let (mut ideal, mut actual) = ([0u64; 2], [0u64; 2]);
    let mut requests = 0u64;
    for ((.., kind, _), accesses) in &instructions {
        let (distinct, first, sectors) = distinct_bytes_and_sectors(accesses);
        let i = usize::from(kind.is_load());
        ideal[i] += (first % SECTOR + distinct).div_ceil(SECTOR);
        actual[i] += sectors;
        requests += sectors;
    }
    let ratio = |a: u64, b: u64| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    let traffic = |filter: &dyn Fn(AccessKind) -> bool| {
        let mut sectors = HashSet::new();
        let mut bytes = HashSet::new();
        for a in trace.iter().filter(|a| filter(a.kind)) {
            let buffer = u64::from(a.kind == AccessKind::InputLoad);
            for b in a.address..a.address + u64::from(a.bytes) {
                bytes.insert((buffer, b));
                sectors.insert((buffer, b / SECTOR));
            }
        }
        ratio(sectors.len() as u64 * SECTOR, bytes.len() as u64)
    };
    Figures {
        lanes,
        store_efficiency: ratio(ideal[0], actual[0]),
        load_efficiency: ratio(ideal[1], actual[1]),
        sectors_per_request: ratio(requests, instructions.len() as u64),
        traffic_over_ideal: traffic(&|_| true),
        load_traffic_over_ideal: traffic(&AccessKind::is_load),
        store_traffic_over_ideal: traffic(&|k| !k.is_load()),
        instructions: instructions.len() as u64,
    }
}

/// [`analyze`] of each access site alone, in site order: where a kernel's sectors go. A
/// low figure at one site names the loads or stores to look at (a load split between two
/// branches, say, shows as two sites each covering part of the rows).
pub fn analyze_by_site(trace: &[Access], lanes: u32) -> Vec<SiteFigures> {
    // One pass over the trace: each site's accesses by kind, stores before loads at a site.
    let mut sites: std::collections::BTreeMap<(u32, bool, u8), (AccessKind, Vec<Access>)> = Default::default();
    for a in trace {
        sites.entry((a.site, a.kind.is_load(), a.kind as u8)).or_insert((a.kind, Vec::new())).1.push(*a);
    }
    sites
        .into_iter()
        .map(|((site, _, _), (kind, accesses))| SiteFigures {
            site,
            kind,
            accesses: accesses.len(),
            figures: analyze(&accesses, lanes),
        })
        .collect()
}

/// One access site's share of a trace ([`analyze_by_site`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SiteFigures {
    /// The site's number in the shader (`load_src(N, ..)`, `store_dst(N, ..)`).
    pub site: u32,
    /// What it does.
    pub kind: AccessKind,
    /// Accesses it made in the trace.
    pub accesses: usize,
    /// The model of those accesses alone (the other kind's figures are 1.0: none).
    pub figures: Figures,
}

/// Distinct bytes the accesses ask for, the first of them, and the sectors they lie in.
fn distinct_bytes_and_sectors(accesses: &[(u64, u32)]) -> (u64, u64, u64) {
    let mut ranges: Vec<(u64, u64)> = accesses.iter().map(|&(a, n)| (a, a + u64::from(n))).collect();
    ranges.sort_unstable();
    let (mut distinct, mut sectors) = (0u64, 0u64);
    let (mut end, mut last_sector) = (0u64, None::<u64>);
    for (start, stop) in ranges {
        let start = start.max(end);
        if start < stop {
            distinct += stop - start;
            let (s0, s1) = (start / SECTOR, (stop - 1) / SECTOR);
            let s0 = match last_sector {
                Some(l) if l >= s0 => l + 1,
                _ => s0,
            };
            if s1 >= s0 {
                sectors += s1 - s0 + 1;
            }
            last_sector = Some(last_sector.map_or(s1, |l| l.max(s1)));
            end = stop;
        }
    }
    let first = accesses.iter().map(|a| a.0).min().unwrap_or(0);
    (distinct, first, sectors)
}

/// Consecutive workgroups traced together: a lone workgroup's footprint is a few hundred
/// bytes for short rows, and the partial sectors at its two ends would count as traffic a
/// whole dispatch does not move.
pub const SAMPLE_RUN: u32 = 8;

/// The workgroups of a dispatch of `total` to trace, `limit` in all: every one where there
/// are no more, else runs of [`SAMPLE_RUN`] consecutive workgroups: the first run, the last,
/// and seeded random others.
fn sample(total: u32, limit: u32, seed: u64) -> Vec<u32> {
    if total <= limit {
        return (0..total).collect();
    }
    let run = SAMPLE_RUN.min(limit / 2).max(1);
    let starts = total.div_ceil(run); // runs start at multiples of `run`
    let mut chosen: Vec<u32> = vec![0, starts - 1];
    let mut state = seed | 1;
    while (chosen.len() as u32) < (limit / run).min(starts) {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let r = (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32 % starts;
        if !chosen.contains(&r) {
            chosen.push(r);
        }
    }
    let mut workgroups: Vec<u32> =
        chosen.iter().flat_map(|&s| (s * run..(s * run + run).min(total)).collect::<Vec<_>>()).collect();
    workgroups.sort_unstable();
    workgroups.dedup();
    workgroups
}

/// Runs `plan`'s program on `device` in the trace variant, over dense buffers holding
/// `input` (its bytes, or zeros where `None`), and returns the traced accesses. Blocks
/// until the device is done (a tool, not a recording path); not on wasm32.
#[cfg(not(target_arch = "wasm32"))]
pub fn trace(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    plan: &PadPlan,
    input: Option<&[u8]>,
    options: &TraceOptions,
) -> Result<(Program, Vec<Access>)> {
    trace_variant(device, queue, plan, input, options, super::KernelVariant::Default)
}

/// [`trace`] of a kernel variant (measurement only: the tests check that every variant's
/// lanes store each output byte once).
#[doc(hidden)]
#[cfg(not(target_arch = "wasm32"))]
pub fn trace_variant(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    plan: &PadPlan,
    input: Option<&[u8]>,
    options: &TraceOptions,
    variant: super::KernelVariant,
) -> Result<(Program, Vec<Access>)> {
    use wgpu::util::DeviceExt;
    let (in_bytes, out_bytes) = plan.byte_sizes().ok_or_else(|| PadError::Unsupported {
        dtype: plan.dtype().name(),
        reason: "strings and 4-bit types have no GPU program to trace".into(),
    })?;
    let (in_size, out_size) = (in_bytes.next_multiple_of(4).max(16), out_bytes.next_multiple_of(4).max(4));
    let limits = DeviceLimits::from(&device.limits());
    let (input_view, output_view) = (BufferView::dense(0, in_size), BufferView::dense(0, out_size));
    let program = Program::with_variant(plan, &input_view, &output_view, &limits, variant)?;
    let word = u32::from(program.key.word_bytes.max(4));
    let mut in_data = input.map(<[u8]>::to_vec).unwrap_or_default();
    in_data.resize(in_size as usize, 0);
    let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let in_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("wgpu-pad trace input"),
        contents: &in_data,
        usage: storage,
    });
    let out_buf = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("wgpu-pad trace output"),
        size: out_size,
        usage: storage,
        mapped_at_creation: false,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("wgpu-pad trace"),
        source: wgpu::ShaderSource::Wgsl(program.key.wgsl_traced().into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("wgpu-pad trace"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let mut accesses = Vec::new();
    for (index, d) in program.dispatches().iter().enumerate() {
        let placeholder = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-pad trace empty input"),
            size: Program::EMPTY_INPUT_BYTES,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let input = match d.input() {
            Some(range) => (&in_buf, range),
            None => (&placeholder, (0, Program::EMPTY_INPUT_BYTES)),
        };
        let run =
            Run { params: Some(d.params()), input, output: (&out_buf, d.output()), workgroups: d.workgroups(), word };
        accesses.extend(run.trace(device, queue, &pipeline, index as u32, options, &limits)?);
    }
    Ok((program, accesses))
}

/// One dispatch to trace: its uniform (if the shader has one), its input and output
/// bindings (buffer, (offset, size)), its workgroups and the bytes of one access.
#[cfg(not(target_arch = "wasm32"))]
struct Run<'a> {
    params: Option<&'a [u8]>,
    input: (&'a wgpu::Buffer, (u64, u64)),
    output: (&'a wgpu::Buffer, (u64, u64)),
    workgroups: [u32; 3],
    word: u32,
}

#[cfg(not(target_arch = "wasm32"))]
impl Run<'_> {
    fn trace(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        pipeline: &wgpu::ComputePipeline,
        index: u32,
        options: &TraceOptions,
        limits: &DeviceLimits,
    ) -> Result<Vec<Access>> {
        use wgpu::util::DeviceExt;
        let per_invocation = 1 + 2 * options.records_per_invocation as usize;
        let [x, y, z] = self.workgroups;
        let total = x * y * z;
        let traced = sample(total, options.workgroups_per_dispatch, options.seed ^ u64::from(index));
        let mut header = vec![total, options.records_per_invocation];
        let mut slots = vec![u32::MAX; total as usize];
        for (slot, &wg) in traced.iter().enumerate() {
            slots[wg as usize] = slot as u32;
        }
        header.extend(slots);
        let trace_bytes = (header.len() + traced.len() * WORKGROUP as usize * per_invocation) as u64 * 4;
        if trace_bytes > limits.max_binding {
            return Err(gpu_error(format!(
                "the trace of dispatch {index} needs {trace_bytes} bytes, past the device's binding limit"
            )));
        }
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let trace_buf = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-pad trace"),
            size: trace_bytes,
            usage,
            mapped_at_creation: false,
        });
        queue.write_buffer(&trace_buf, 0, bytemuck::cast_slice(&header));
        let params = self.params.map(|p| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("wgpu-pad trace params"),
                contents: p,
                usage: wgpu::BufferUsages::UNIFORM,
            })
        });
        fn range<'b>((buffer, (offset, size)): (&'b wgpu::Buffer, (u64, u64))) -> wgpu::BindingResource<'b> {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: wgpu::BufferSize::new(size) })
        }
        let mut entries = vec![
            wgpu::BindGroupEntry { binding: 1, resource: range(self.input) },
            wgpu::BindGroupEntry { binding: 2, resource: range(self.output) },
            wgpu::BindGroupEntry { binding: 3, resource: trace_buf.as_entire_binding() },
        ];
        if let Some(p) = &params {
            entries.push(wgpu::BindGroupEntry { binding: 0, resource: p.as_entire_binding() });
        }
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("wgpu-pad trace"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-pad trace readback"),
            size: trace_bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(x, y, z);
        }
        encoder.copy_buffer_to_buffer(&trace_buf, 0, &readback, 0, trace_bytes);
        queue.submit([encoder.finish()]);
        let words = read_back(device, &readback)?;
        let (in_offset, out_offset) = (self.input.1 .0, self.output.1 .0);
        let mut accesses = Vec::new();
        for (slot, &wg) in traced.iter().enumerate() {
            for lane in 0..WORKGROUP {
                let at = header.len() + (slot * WORKGROUP as usize + lane as usize) * per_invocation;
                let count = words[at];
                if count > options.records_per_invocation {
                    return Err(gpu_error(format!(
                        "an invocation made {count} accesses, past the trace's {} (TraceOptions::records_per_invocation)",
                        options.records_per_invocation
                    )));
                }
                for n in 0..count as usize {
                    let (code, address) = (words[at + 1 + 2 * n], words[at + 2 + 2 * n]);
                    let kind = AccessKind::from_code(code >> 16)
                        .ok_or_else(|| gpu_error(format!("a trace record of kind {}", code >> 16)))?;
                    let offset = if kind == AccessKind::InputLoad { in_offset } else { out_offset };
                    accesses.push(Access {
                        dispatch: index,
                        workgroup: wg,
                        lane,
                        site: code & 0xffff,
                        kind,
                        address: offset + u64::from(address),
                        bytes: self.word,
                    });
                }
            }
        }
        Ok(accesses)
    }
}

/// Traces a hand-written shader as the pad shaders are traced: `wgsl` starts with
/// [`trace_prelude`], declares `@compute @workgroup_size(64) fn main` calling
/// `trace_begin(workgroup_id, num_workgroups, local_invocation_index)` first, and reaches
/// its bindings 1 and 2 (`input` and `output`, whole) through `load_src` and `store_dst`.
/// The model's own tests trace plain copies this way.
#[cfg(not(target_arch = "wasm32"))]
pub fn trace_shader(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    wgsl: &str,
    input: &wgpu::Buffer,
    output: &wgpu::Buffer,
    workgroups: [u32; 3],
    options: &TraceOptions,
) -> Result<Vec<Access>> {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("wgpu-pad traced shader"),
        source: wgpu::ShaderSource::Wgsl(wgsl.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("wgpu-pad traced shader"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let run = Run {
        params: None,
        input: (input, (0, input.size())),
        output: (output, (0, output.size())),
        workgroups,
        word: 4,
    };
    run.trace(device, queue, &pipeline, 0, options, &DeviceLimits::from(&device.limits()))
}

#[cfg(not(target_arch = "wasm32"))]
fn gpu_error(reason: String) -> PadError {
    PadError::Gpu { reason }
}

#[cfg(not(target_arch = "wasm32"))]
fn read_back(device: &wgpu::Device, buffer: &wgpu::Buffer) -> Result<Vec<u32>> {
    let (tx, rx) = std::sync::mpsc::channel();
    buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| gpu_error(describe(&e)))?;
    rx.recv().map_err(|e| gpu_error(describe(&e)))?.map_err(|e| gpu_error(describe(&e)))?;
    let view = buffer.slice(..).get_mapped_range().map_err(|e| gpu_error(describe(&e)))?;
    let words = bytemuck::pod_collect_to_vec(&view[..]);
    drop(view);
    buffer.unmap();
    Ok(words)
}

/// The WGSL prelude a hand-written shader starts with to be traced as the pad shaders are
/// ([`trace_shader`]): `trace_begin`, `trace_access`, `load_src` and `store_dst` over
/// `array<u32>` bindings 1 and 2, and `WORKGROUP`.
pub fn trace_prelude() -> String {
    format!(
        "const WORKGROUP: u32 = {WORKGROUP}u;\nconst WORD_BYTES: u32 = 4u;\nalias WORD = u32;\n{}{}\n\
         @group(0) @binding(1) var<storage, read_write> src: array<u32>;\n\
         @group(0) @binding(2) var<storage, read_write> dst: array<u32>;\n\
         fn load_src(site: u32, i: u32) -> u32 {{ trace_access(site, TRACE_INPUT_LOAD, i * 4u); return src[i]; }}\n\
         fn store_dst(site: u32, i: u32, v: u32) {{ trace_access(site, TRACE_OUTPUT_STORE, i * 4u); dst[i] = v; }}\n",
        super::shader::declare(&super::shader::trace_constants(true)),
        super::shader::trace_prelude(true)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic trace: `lanes` invocations of one workgroup, each making the accesses
    /// `at(lane)` gives (site, kind, address, bytes), in order.
    fn synthetic(lanes: u32, at: impl Fn(u32) -> Vec<(u32, AccessKind, u64, u32)>) -> Vec<Access> {
        (0..lanes)
            .flat_map(|lane| {
                at(lane).into_iter().map(move |(site, kind, address, bytes)| Access {
                    dispatch: 0,
                    workgroup: 0,
                    lane,
                    site,
                    kind,
                    address,
                    bytes,
                })
            })
            .collect()
    }

    use AccessKind::{InputLoad as L, OutputStore as S};

    #[test]
    fn a_copy_is_perfect() {
        let t = synthetic(64, |l| vec![(1, L, 4 * l as u64, 4), (2, S, 4096 + 4 * l as u64, 4)]);
        for lanes in [32, 64] {
            let f = analyze(&t, lanes);
            assert_eq!((f.store_efficiency, f.load_efficiency, f.traffic_over_ideal), (1.0, 1.0, 1.0), "{f:?}");
            assert_eq!(f.sectors_per_request, (lanes as f64 * 4.0) / 32.0);
        }
    }

    /// Per site, each site's own figures: a coalesced load site and a strided one apart,
    /// where together they average out.
    #[test]
    fn sites_are_told_apart() {
        // Site 1: lanes on neighbouring words (1.00); site 2: lanes 64 bytes apart (4 bytes of
        // each 32-byte sector used: 4 ideal sectors of 32 touched, 0.125).
        let t = synthetic(32, |l| vec![(1, L, 4 * l as u64, 4), (2, L, 8192 + 64 * l as u64, 4)]);
        let sites = analyze_by_site(&t, 32);
        assert_eq!(sites.iter().map(|s| (s.site, s.kind, s.accesses)).collect::<Vec<_>>(), [(1, L, 32), (2, L, 32)]);
        assert_eq!(sites[0].figures.load_efficiency, 1.0);
        assert_eq!(sites[1].figures.load_efficiency, 4.0 / 32.0);
        let whole = analyze(&t, 32).load_efficiency;
        assert_eq!(whole, (4.0 + 4.0) / (4.0 + 32.0));
    }

    #[test]
    fn an_unaligned_contiguous_load_and_a_broadcast_are_perfect() {
        // 32 lanes from byte 4 on: 128 bytes over 5 sectors, as ideal as possible.
        let f = analyze(&synthetic(32, |l| vec![(1, L, 4 + 4 * l as u64, 4)]), 32);
        assert_eq!(f.load_efficiency, 1.0);
        assert_eq!(f.sectors_per_request, 5.0);
        // Every lane the same word: one sector, ideal.
        let f = analyze(&synthetic(32, |_| vec![(1, L, 100, 4)]), 32);
        assert_eq!((f.load_efficiency, f.sectors_per_request), (1.0, 1.0));
    }

    #[test]
    fn lanes_a_row_apart_and_a_transposed_copy_cost_what_they_should() {
        // Each lane stores 16 consecutive words (64 bytes): lanes 64 bytes apart. Instruction
        // n asks for 32 x 4 = 128 bytes from byte 4n over 32 sectors; ideal is
        // ceil((4n mod 32 + 128) / 32): 4 for n = 0 and 8, else 5; 78 over 512 in all.
        let rows = synthetic(32, |l| (0..16).map(|n| (1, S, 64 * l as u64 + 4 * n, 4)).collect());
        let f = analyze(&rows, 32);
        assert_eq!(f.store_efficiency, 78.0 / 512.0);
        assert_eq!(f.traffic_over_ideal, 1.0, "every byte of the sectors is used, by some instruction");
        // A 32 x 32 transpose of u32: loads along rows (perfect), stores down columns (a lane
        // 128 bytes from the next): instruction r ideal 4 (r a multiple of 8) or 5, over 32.
        let t = synthetic(32, |l| {
            (0..32)
                .flat_map(|r| [(1, L, 128 * r + 4 * l as u64, 4), (2, S, 8192 + 128 * l as u64 + 4 * r, 4)])
                .collect()
        });
        let f = analyze(&t, 32);
        assert_eq!((f.load_efficiency, f.store_efficiency), (1.0, (4.0 * 4.0 + 28.0 * 5.0) / 1024.0));
        // Every other word (pairs a grid width apart): 128 bytes over 8 sectors each, ideal
        // 4 for the first and 5 for the second (it starts at byte 4).
        let pairs = synthetic(32, |l| vec![(1, S, 8 * l as u64, 4), (2, S, 8 * l as u64 + 4, 4)]);
        assert_eq!(analyze(&pairs, 32).store_efficiency, 9.0 / 16.0);
    }

    #[test]
    fn traffic_counts_sectors_touched_over_bytes_asked() {
        // One 4-byte word from each of 8 sectors: 256 bytes moved for 32 asked.
        let f = analyze(&synthetic(8, |l| vec![(1, L, 32 * l as u64, 4)]), 32);
        assert_eq!(f.load_traffic_over_ideal, 8.0);
        assert_eq!(f.store_traffic_over_ideal, 1.0, "no stores: nothing over ideal");
    }

    /// Input and output are two buffers: loads and stores at the same addresses touch
    /// different sectors. 16 bytes read from the input's first sector and 16 written to the
    /// output's (at bytes 16-31) are two sectors for 32 bytes, twice the ideal; one buffer
    /// would make it one sector, 1.0.
    #[test]
    fn traffic_tells_the_input_from_the_output() {
        let t = synthetic(4, |l| vec![(1, L, 4 * l as u64, 4), (2, S, 16 + 4 * l as u64, 4)]);
        let f = analyze(&t, 32);
        assert_eq!((f.traffic_over_ideal, f.load_traffic_over_ideal, f.store_traffic_over_ideal), (2.0, 2.0, 2.0));
        // A word of the output read back (OutputLoad) shares the output's sectors.
        let back = synthetic(4, |l| vec![(1, AccessKind::OutputLoad, 4 * l as u64, 4), (2, S, 16 + 4 * l as u64, 4)]);
        assert_eq!(analyze(&back, 32).traffic_over_ideal, 1.0);
    }

    /// A store site is a store site: its kind, and its stores' figures (a strided store site
    /// beside a coalesced load site).
    #[test]
    fn store_sites_are_stores() {
        let t = synthetic(32, |l| vec![(1, L, 4 * l as u64, 4), (2, S, 8192 + 64 * l as u64, 4)]);
        let sites = analyze_by_site(&t, 32);
        assert_eq!(sites.iter().map(|s| (s.site, s.kind)).collect::<Vec<_>>(), [(1, L), (2, S)]);
        assert_eq!(sites[1].figures.store_efficiency, 4.0 / 32.0);
        assert_eq!(sites[1].figures.load_efficiency, 1.0, "no loads at a store site");
        assert_eq!(sites[0].figures.store_efficiency, 1.0, "no stores at a load site");
    }

    #[test]
    fn samples_take_runs_at_the_first_the_last_and_distinct_others() {
        assert_eq!(sample(5, 48, 1), vec![0, 1, 2, 3, 4]);
        let s = sample(100_000, 48, 7);
        assert_eq!(s.len(), 48);
        assert_eq!(&s[..8], &[0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(s[47], 99_999);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert!(s.chunks(8).all(|c| c[7] - c[0] == 7), "runs of 8: {s:?}");
        assert_eq!(s, sample(100_000, 48, 7), "seeded");
        assert_ne!(s, sample(100_000, 48, 8));
        // An uneven last run is cut at the end.
        let s = sample(1001, 48, 3);
        assert_eq!(s.last(), Some(&1000));
    }
}
