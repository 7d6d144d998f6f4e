//! The memory model (`gpu::model`) on a real adapter: plain copies traced as the pad
//! shaders are come out as the model says, and the pad shaders' traces are their own
//! behaviour (every output byte stored once, by the traced workgroups).

mod common;

use wgpu_pad::gpu::model::{analyze, trace, trace_prelude, trace_shader, trace_variant, AccessKind, TraceOptions};
use wgpu_pad::gpu::KernelVariant;
use wgpu_pad::{DataType, Mode, PadPlan, PadRequest};

/// A copy of `words` u32 words, `per_lane` consecutive words an invocation (1: lanes on
/// neighbouring words, a perfect copy; 16: lanes 64 bytes apart).
fn copy_shader(per_lane: u32) -> String {
    format!(
        "{}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
    trace_begin(wid, nwg, lid);
    for (var n = 0u; n < {per_lane}u; n++) {{
        let i = gid.x * {per_lane}u + n;
        store_dst(2u, i, load_src(1u, i));
    }}
}}",
        trace_prelude()
    )
}

#[test]
fn traced_copies_come_out_as_the_model_says() {
    let Some(ctx) = common::gpu() else { return };
    let (device, queue) = (ctx.device(), ctx.queue());
    let words = 64 * 64;
    let input = common::storage(ctx, &vec![1u8; words * 4]);
    let output = common::storage(ctx, &vec![0u8; words * 4]);
    let options = TraceOptions::default();
    let copy = trace_shader(device, queue, &copy_shader(1), &input, &output, [64, 1, 1], &options).unwrap();
    assert_eq!(copy.iter().filter(|a| a.kind == AccessKind::OutputStore).count(), 48 * 64, "48 workgroups traced");
    for lanes in [32, 64] {
        let f = analyze(&copy, lanes);
        assert_eq!((f.store_efficiency, f.load_efficiency, f.traffic_over_ideal), (1.0, 1.0, 1.0), "{f:?}");
    }
    // 16 words a lane: each instruction 128 bytes over 32 sectors (ideal 4 or 5).
    let rows = trace_shader(device, queue, &copy_shader(16), &input, &output, [4, 1, 1], &options).unwrap();
    let f = analyze(&rows, 32);
    assert!((f.store_efficiency - 78.0 / 512.0).abs() < 1e-9, "{f:?}");
    assert_eq!(f.traffic_over_ideal, 1.0);
    common::assert_no_gpu_errors();
}

/// Every mode and every kernel walk, traced whole, in every kernel variant: the stores cover
/// each output byte exactly once (the trace records what the shader does: a variant's lanes
/// storing an element twice, with the same output, fails here), and only input bytes are
/// loaded.
#[test]
fn pad_traces_store_every_output_byte() {
    let Some(ctx) = common::gpu() else { return };
    let options = TraceOptions { workgroups_per_dispatch: u32::MAX, ..TraceOptions::default() };
    let cases: [(DataType, &[usize], &[i64]); 6] = [
        (DataType::Float32, &[3, 5, 7], &[0, 1, 2, 0, 2, 1]),
        (DataType::Int64, &[2, 3, 8, 8], &[0, 0, 1, 1, 0, 0, 1, 1]),
        (DataType::Float16, &[2, 9, 14], &[0, 1, 2, 0, 1, 2]),
        (DataType::Uint8, &[1, 7, 9, 3], &[0, 2, 2, 0, 0, 2, 2, 0]),
        (DataType::Uint8, &[5, 1], &[0, 1, 0, 1]),
        (DataType::Bool, &[4, 77], &[0, 0, 0, 3]),
    ];
    // The default on every case and mode; each other variant on long rows of wide and narrow
    // words (where a lane loops over several elements) in two modes, within CI's time.
    let long: [(DataType, &[usize], &[i64]); 3] = [
        (DataType::Float32, &[2, 3000], &[0, 5, 0, 2]),
        (DataType::Float16, &[3, 301], &[1, 2, 0, 3]),
        (DataType::Uint8, &[2, 3001], &[0, 1, 1, 1]),
    ];
    let default = cases.into_iter().flat_map(|c| Mode::ALL.map(move |m| (c, m, KernelVariant::Default)));
    let variants = long.into_iter().flat_map(|c| {
        KernelVariant::ALL[1..].iter().flat_map(move |&v| [Mode::Edge, Mode::Wrap].map(move |m| (c, m, v)))
    });
    for ((dtype, shape, pads), mode, variant) in default.chain(variants) {
        let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
        let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
        let (_, accesses) = trace_variant(ctx.device(), ctx.queue(), &plan, None, &options, variant).unwrap();
        let mut stored = vec![0u32; out_bytes.next_multiple_of(4) as usize];
        for a in accesses.iter().filter(|a| a.kind == AccessKind::OutputStore) {
            (a.address..a.address + a.bytes as u64).for_each(|b| stored[b as usize] += 1);
        }
        let what = format!("{dtype} {shape:?} {mode} ({})", variant.name());
        let wrong = stored[..out_bytes as usize].iter().position(|&n| n != 1);
        assert!(wrong.is_none(), "{what}: byte {wrong:?} stored {} times", wrong.map_or(0, |i| stored[i]));
        for a in accesses.iter().filter(|a| a.kind == AccessKind::InputLoad) {
            assert!(a.address < in_bytes.next_multiple_of(4).max(16), "{what}: a load past the input");
        }
    }
    common::assert_no_gpu_errors();
}

/// The engine shapes of short 8- and 16-bit rows meet issue 43's targets in the model of the
/// shaders (store ≥ 0.90 and load ≥ 0.80 with 32 lanes, ≥ 0.85 and ≥ 0.75 with 64; traffic
/// ≤ 1.10): a deterministic property of their access pattern, not a timing. They guard the
/// lane-a-word rows and their loads at one site (loads split between a kept word's branch
/// and a pad word's fell to 0.64 on f16 [1,256,7,7]). Rows longer than a workgroup's words
/// are not held to the model: its favourite there (the narrow-spread variant) ran 1.3-2.2 ×
/// slower than the pairs on the H100. Wrap of [1,256,7,7] at 32 lanes is the named exception
/// (its SIMD groups read two runs of a plane).
#[test]
fn narrow_rows_meet_the_coalescing_targets() {
    let Some(ctx) = common::gpu() else { return };
    let cases: [(DataType, &[usize], &[i64]); 4] = [
        (DataType::Float16, &[1, 64, 56, 56], &[0, 0, 1, 1, 0, 0, 1, 1]),
        (DataType::Uint8, &[1, 3, 224, 224], &[0, 0, 3, 3, 0, 0, 3, 3]),
        (DataType::Float16, &[1, 256, 7, 7], &[0, 0, 3, 3, 0, 0, 3, 3]),
        (DataType::Bool, &[4, 77], &[0, 0, 0, 3]),
    ];
    for (dtype, shape, pads) in cases {
        for mode in Mode::ALL {
            let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
            let (_, accesses) = trace(ctx.device(), ctx.queue(), &plan, None, &TraceOptions::default()).unwrap();
            for (lanes, store, load) in [(32, 0.90, 0.80), (64, 0.85, 0.75)] {
                let f = analyze(&accesses, lanes);
                let what = format!("{dtype} {shape:?} {mode}, {lanes} lanes: {f:?}");
                let excepted = shape == [1, 256, 7, 7] && mode == Mode::Wrap && lanes == 32;
                assert!(f.store_efficiency >= store, "{what}");
                assert!(excepted || f.load_efficiency >= load, "{what}");
                assert!(f.traffic_over_ideal <= 1.10, "{what}");
            }
        }
    }
    common::assert_no_gpu_errors();
}
