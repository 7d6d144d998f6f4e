//! Repeated calls of one plan cost what its dispatches cost: no pipeline compiled after the
//! first call, and the process's resident memory flat, on every kind (the pad, the interior
//! pad, the gradient: one dispatch, sums split over lanes, windows and parts past a binding).
//! Lavapipe (Mesa 22) compiled a shader again at every dispatch, and kept it, where a uniform
//! bounding a loop could be inlined (examples/driver_recompiles.rs shows it in plain wgpu).
//! One test in a binary of its own: resident memory is the process's.

mod common;

use common::{gpu, gpu_small_bindings};
use wgpu_pad::gpu::{ExecPath, GpuContext};
use wgpu_pad::{DataType, Mode, PadPlan, PadRequest};

/// The resident growth allowed over a case's calls (the leak this guards against grew 0.1-1
/// MB a dispatch).
const ALLOWED_GROWTH: u64 = 4 << 20;

fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn plan(dtype: DataType, shape: &[usize], pads: &[i64], mode: Mode, interior: Option<Vec<i64>>) -> PadPlan {
    let mut request = PadRequest::new(pads.to_vec()).mode(mode);
    if let Some(k) = interior {
        request = request.interior(k);
    }
    PadPlan::new(dtype, shape, &request).unwrap()
}

enum Kind {
    Pad,
    Gradient,
}

/// `calls` calls of `plan` after a few that settle the pools (buffers, staging, the driver's).
fn repeat(ctx: &GpuContext, what: &str, kind: &Kind, plan: &PadPlan, calls: usize) {
    let shape = match kind {
        Kind::Pad => plan.in_shape(),
        Kind::Gradient => plan.out_shape(),
    };
    let x = common::random_tensor(plan.dtype(), shape, 7);
    let call = || {
        let r = match kind {
            Kind::Pad => ctx.pad_blocking(plan, &x),
            Kind::Gradient => ctx.pad_backward_blocking(plan, &x),
        };
        let r = r.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(r.path, ExecPath::Gpu, "{what} ran on the GPU");
        r.tensor
    };
    let first = call();
    for _ in 0..5 {
        assert_eq!(call(), first, "{what}: the same bits every call");
    }
    let (compiled, resident) = (ctx.kernel().compile_count(), resident_bytes());
    let start = std::time::Instant::now();
    for i in 0..calls {
        assert_eq!(call(), first, "{what}: the same bits every call");
        if let (Some(before), Some(now)) = (resident, resident_bytes()) {
            let grown = now.saturating_sub(before);
            assert!(grown <= ALLOWED_GROWTH, "{what}: resident memory grew {grown} bytes in {} calls", i + 1);
        }
    }
    let per_call = start.elapsed() / calls as u32;
    assert_eq!(ctx.kernel().compile_count(), compiled, "{what}: a warm call compiled a pipeline");
    let grown = resident.zip(resident_bytes()).map(|(a, b)| b as i64 - a as i64);
    eprintln!("{what}: {per_call:?} a call, resident memory {grown:?} bytes over {calls} calls");
}

#[test]
fn repeated_calls_compile_nothing_and_keep_memory_flat() {
    let Some(ctx) = gpu() else { return };
    let wrap_sides = &[1, 1, 0, 1, 1, 0][..];
    let cases = [
        ("pad f32 reflect", Kind::Pad, plan(DataType::Float32, &[20, 20, 2], wrap_sides, Mode::Reflect, None)),
        ("pad u8 wrap", Kind::Pad, plan(DataType::Uint8, &[3, 5, 7], &[1, 0, 2, 2, 1, 3], Mode::Wrap, None)),
        (
            "pad f16 edge",
            Kind::Pad,
            plan(DataType::Float16, &[4, 3, 5, 6], &[0, 1, 1, 2, 1, 0, 2, 3], Mode::Edge, None),
        ),
        ("interior f32", Kind::Pad, plan(DataType::Float32, &[10, 10, 10], &[0; 6], Mode::Constant, Some(vec![1; 3]))),
        (
            "interior u8",
            Kind::Pad,
            plan(DataType::Uint8, &[6, 7, 3], &[1, 0, 2, 0, 1, 1], Mode::Constant, Some(vec![1, 2, 0])),
        ),
        ("gradient f32 rank 3", Kind::Gradient, plan(DataType::Float32, &[20, 20, 2], wrap_sides, Mode::Wrap, None)),
        (
            "gradient f16 rank 4",
            Kind::Gradient,
            plan(DataType::Float16, &[2, 3, 4, 5], &[1, 0, 2, 1, 0, 1, 1, 2], Mode::Reflect, None),
        ),
        (
            "gradient complex64",
            Kind::Gradient,
            plan(DataType::Complex64, &[4, 3], &[2, 1, 1, 2], Mode::Symmetric, None),
        ),
        // Corners of 301 x 2 terms: sums split over a workgroup's lanes.
        ("gradient split sums", Kind::Gradient, plan(DataType::Float32, &[3, 4], &[300, 1, 0, 1], Mode::Edge, None)),
        (
            "gradient of an interior pad",
            Kind::Gradient,
            plan(DataType::Float32, &[5, 6], &[1, -1, 0, 2], Mode::Constant, Some(vec![1, 2])),
        ),
    ];
    for (what, kind, plan) in &cases {
        repeat(ctx, what, kind, plan, 200);
    }
    // Past 1 KiB bindings: windows and parts, many dispatches a call.
    let small = gpu_small_bindings().expect("a small-binding device beside the shared one");
    let windows = [
        (
            "interior windows",
            Kind::Pad,
            plan(DataType::Float32, &[10, 10, 10], &[0; 6], Mode::Constant, Some(vec![1; 3])),
            100,
        ),
        ("gradient windows", Kind::Gradient, plan(DataType::Float32, &[20, 20, 2], wrap_sides, Mode::Wrap, None), 100),
        // 426 dispatches a call on lavapipe's limits.
        (
            "gradient parts",
            Kind::Gradient,
            plan(DataType::Complex64, &[4, 3], &[93, 102, 113, 116], Mode::Edge, None),
            10,
        ),
    ];
    for (what, kind, plan, calls) in windows {
        repeat(small, what, &kind, &plan, calls);
    }
}
