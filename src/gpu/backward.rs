//! The pad's gradient on the GPU as a [`Program`] (`shaders/backward.wgsl`): a gather, a lane
//! an element of the input's gradient summing the output's gradient over the positions that
//! read it, in the order `crate::adjoint` documents, so its bits are `cpu::pad_backward`'s.
//! One dispatch a pad where its two views fit a binding; past it, one a window of the outer
//! axes the pad leaves alone (a `GpuLimit` where no window fits, which
//! `GpuContext::pad_backward` answers on the CPU path). float32, complex64 (its two parts
//! summed alone, as float32 with one more axis), float16 and bfloat16 (16-bit elements two to
//! a word) and the float8s but float8e8m0 (four to a word), summed as f32 rounded to the type
//! at every addition.

use crate::dtype::DataType;
use crate::error::{GpuLimit, PadError, Result, Side};
use crate::mode::Mode;
use crate::plan::{PadPlan, PadRequest};

use super::checks::{binding, check_device, check_view_bounds, grid, limit, view};
use super::kernels::{GradientElement, Shader};
use super::params::{magic_divisor, BackAxis, BackParams, Params, INDEX_LIMIT, MAX_RANK};
use super::program::{BufferView, DeviceLimits, Dispatch, Program};
use super::shader::PipelineKey;
use super::view::{check_no_self_overlap, view_strides};
use crate::adjoint::{block_len, BLOCK};

impl Program {
    /// The program of `plan`'s gradient: reads `grad_out` (the gradient of the pad's output:
    /// the plan's output shape) and writes `grad_in` (of its input shape), any strides on
    /// either side, on a device with `limits`. Each element of `grad_in` is the sum of
    /// `grad_out` over the output positions that read it, in `crate::adjoint`'s order: the
    /// bits of `cpu::pad_backward`. float32, complex64 (its parts as float32), float16,
    /// bfloat16 and the float8s but float8e8m0. One dispatch where both views fit a storage binding; past it, one a window
    /// of the outer axes the pad leaves alone (a batch, channels), each window's sums whole;
    /// else `PadError::GpuLimit`. Everything is checked here.
    pub fn backward(
        plan: &PadPlan,
        grad_out: &BufferView,
        grad_in: &BufferView,
        limits: &DeviceLimits,
    ) -> Result<Program> {
        if plan.has_interior() {
            return super::interior::backward(plan, grad_out, grad_in, limits);
        }
        if plan.dtype() == DataType::Complex64 {
            return complex_as_parts(plan, grad_out, grad_in, limits);
        }
        match one_dispatch(plan, grad_out, grad_in, limits) {
            Err(e @ PadError::GpuLimit { limit: GpuLimit::Windows, .. }) => {
                windows(plan, grad_out, grad_in, limits)?.ok_or(e)
            }
            result => result,
        }
    }
}

/// complex64's gradient: `cpu::pad_backward` sums each of an element's two f32 parts alone,
/// in the one order, so it is the gradient of a float32 pad with one more axis, of the 2
/// parts, that the pad leaves alone; the views' element strides double, the new axis's is 1.
fn complex_as_parts(
    plan: &PadPlan,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Program> {
    let rank = plan.in_shape().len();
    if rank >= MAX_RANK {
        // Said here: the parts' plan would name its own rank, one more than the caller's.
        return Err(limit(
            GpuLimit::Rank,
            format!("complex64 of {rank} axes: its gradient runs as float32 with one more axis (its parts), and the GPU's gradient takes at most {MAX_RANK}"),
        ));
    }
    let shape: Vec<usize> = plan.in_shape().iter().copied().chain([2]).collect();
    let (begins, ends) = (plan.begins().iter().copied().chain([0]), plan.ends().iter().copied().chain([0]));
    let request =
        PadRequest::new(begins.chain(ends).collect()).mode(plan.mode()).max_output_bytes(plan.max_output_bytes());
    let parts = PadPlan::new(DataType::Float32, &shape, &request)?;
    let strides = |v: &BufferView, side: Side| -> Result<Option<Vec<u64>>> {
        let Some(s) = v.strides else { return Ok(None) };
        let doubled: Option<Vec<u64>> = s.iter().map(|&x| x.checked_mul(2)).chain([Some(1)]).collect();
        doubled.map(Some).ok_or_else(|| PadError::InvalidView {
            which: side,
            reason: "a complex64 stride past 2^63 elements (its parts' strides are twice it)".into(),
        })
    };
    let (out_strides, in_strides) = (strides(grad_out, Side::Input)?, strides(grad_in, Side::Output)?);
    let part_out = BufferView { strides: out_strides.as_deref(), ..*grad_out };
    let part_in = BufferView { strides: in_strides.as_deref(), ..*grad_in };
    Program::backward(&parts, &part_out, &part_in, limits)
}

/// Windows of the gradient over the outer axes the pad leaves alone (a batch, channels): a
/// window is one index of each axis before axis `d` and a run of rows of `d`, whose sums read
/// and write their own slabs, so each is the same program on a shorter axis at its offsets.
/// Of the axes `d` where a row fits a binding, the one that makes the fewest windows, its runs
/// of near-equal rows; `None` where no row fits.
fn windows(
    plan: &PadPlan,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Option<Program>> {
    let prefix = plan.axes().iter().take_while(|a| a.is_identity()).count();
    let mut best: Option<Program> = None;
    for d in 0..prefix {
        if let Some(p) = windows_on(plan, d, grad_out, grad_in, limits)? {
            if best.as_ref().is_none_or(|b| p.dispatches.len() < b.dispatches.len()) {
                best = Some(p);
            }
        }
    }
    Ok(best)
}

fn windows_on(
    plan: &PadPlan,
    d: usize,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Option<Program>> {
    let shape = plan.in_shape();
    let elem = GradientElement::of(plan.dtype()).map_or(4, |e| e.bytes());
    let strides_of = |v: &BufferView, shape: &[usize]| match v.strides {
        Some(s) => s.to_vec(),
        None => super::view::dense_strides(shape),
    };
    let (out_strides, in_strides) = (strides_of(grad_out, plan.out_shape()), strides_of(grad_in, shape));
    let pads: Vec<i64> = plan.begins().iter().chain(plan.ends()).copied().collect();
    let request = crate::PadRequest::new(pads).mode(plan.mode());
    let unit = (out_strides[d].max(in_strides[d]) * elem).max(1);
    let mut rows =
        (limits.max_binding.saturating_sub(limits.storage_alignment) / unit).clamp(1, shape[d].max(1) as u64);
    let outer: usize = shape[..d].iter().product();
    loop {
        let runs = (shape[d] as u64).div_ceil(rows);
        let even = (shape[d] as u64).div_ceil(runs.max(1));
        let (mut dispatches, mut key, mut refused) = (Vec::new(), None, false);
        'windows: for o in 0..outer {
            // The offset of outer index o, in elements, on each side.
            let (mut rest, mut out_at, mut in_at) = (o, 0u64, 0u64);
            for a in (0..d).rev() {
                let i = (rest % shape[a]) as u64;
                rest /= shape[a];
                out_at += i * out_strides[a];
                in_at += i * in_strides[a];
            }
            for r in 0..runs {
                let (first, n) = (r * even, even.min(shape[d] as u64 - r * even));
                let mut sub = shape.to_vec();
                sub[..d].fill(1);
                sub[d] = n as usize;
                let window = PadPlan::new(plan.dtype(), &sub, &request)?;
                let at = |v: &BufferView, base: u64, stride: u64| -> Result<u64> {
                    (base.checked_add(first * stride))
                        .and_then(|e| e.checked_mul(elem))
                        .and_then(|b| v.offset.checked_add(b))
                        .ok_or_else(|| limit(GpuLimit::Windows, "a window's offset past 2^64".to_string()))
                };
                let out_view = BufferView { offset: at(grad_out, out_at, out_strides[d])?, ..*grad_out };
                let in_view = BufferView { offset: at(grad_in, in_at, in_strides[d])?, ..*grad_in };
                match one_dispatch(&window, &out_view, &in_view, limits) {
                    Ok(p) => {
                        key = Some(p.key);
                        dispatches.extend(p.dispatches);
                    }
                    Err(PadError::GpuLimit { limit: GpuLimit::Windows, .. }) => {
                        refused = true;
                        break 'windows;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        if !refused {
            let Some(key) = key else { return Ok(None) };
            let (read, write) = (view(Side::Input, grad_out), view(Side::Output, grad_in));
            let (_, in_span) = view_strides(&read, plan.out_shape(), elem)?;
            let (_, out_span) = view_strides(&write, shape, elem)?;
            return Ok(Some(Program { key, dispatches, in_span, out_span }));
        }
        if even <= 1 {
            return Ok(None);
        }
        rows = even - 1;
    }
}

/// The program of `plan`'s gradient in one dispatch ([`Program::backward`]).
fn one_dispatch(plan: &PadPlan, grad_out: &BufferView, grad_in: &BufferView, limits: &DeviceLimits) -> Result<Program> {
    let Some(element) = GradientElement::of(plan.dtype()) else {
        let reason = match crate::cpu::has_gradient(plan.dtype()) {
            true => "the GPU's gradient takes float32, complex64, float16, bfloat16 and the float8s but float8e8m0; cpu::pad_backward takes float64 and complex128 too",
            false => "no gradient is taken of integer, bool, string, float8e8m0 or 4-bit tensors",
        };
        return Err(PadError::Unsupported { dtype: plan.dtype().name(), reason: reason.into() });
    };
    let elem = element.bytes();
    check_device(plan, limits)?;
    let (read, write) = (view(Side::Input, grad_out), view(Side::Output, grad_in));
    for v in [&read, &write] {
        check_view_bounds(v, limits)?;
    }
    let (out_strides, out_span) = view_strides(&read, plan.out_shape(), elem)?;
    let (in_strides, in_span) = view_strides(&write, plan.in_shape(), elem)?;
    if in_span.is_some() {
        check_no_self_overlap(plan.in_shape(), &in_strides)?;
    }
    // The terms a lane sums at most: each touched axis's most images an index has. Where
    // one axis's sum passes a block, or all of them a lane's bound, one axis's sum goes to
    // a workgroup's lanes: the one that leaves a lane the fewest terms.
    let counts: Vec<u64> = plan.axes().iter().map(|a| most_images(a, plan.mode())).collect();
    let whole = counts.iter().product::<u64>();
    let split_at = (0..counts.len())
        .filter(|&d| counts[d] > 1)
        .map(|d| (split_lane_terms(&counts, d), d))
        .min()
        .filter(|_| counts.iter().any(|&c| c > BLOCK as u64) || whole > LANE_TERMS);
    let (split, split_axis, lane_terms) = match split_at {
        Some((terms, d)) => (true, d, terms),
        None => (false, 0, whole),
    };
    if lane_terms > LANE_TERMS {
        return Err(limit(
            GpuLimit::IndexRange,
            format!("an element's gradient sums up to {lane_terms} terms on one lane; the GPU's gradient takes at most {LANE_TERMS}"),
        ));
    }
    let key = PipelineKey::new(plan.mode(), elem as u8, false, Shader::Backward { split, element }, false);
    let mut program = Program { key, dispatches: Vec::new(), in_span: out_span, out_span: in_span };
    let Some(in_span) = in_span else { return Ok(program) };
    let rank = plan.axes().len();
    if rank > MAX_RANK {
        return Err(limit(GpuLimit::Rank, format!("{rank} axes; the GPU's gradient takes at most {MAX_RANK}")));
    }
    let count = plan.in_len() as u64;
    if count >= INDEX_LIMIT {
        return Err(limit(
            GpuLimit::IndexRange,
            format!("{count} input elements; the GPU's gradient needs under 2^31"),
        ));
    }
    let what = "the gradient, where no window of the axes the pad leaves alone fits a binding";
    let output = binding(&write, in_span, limits, what)?;
    let input = out_span.map(|span| binding(&read, span, limits, what)).transpose()?;
    let mut p = BackParams::zeroed();
    p.rank = rank as u32;
    p.count = count as u32;
    p.out_base = input.map_or(0, |(start, _)| ((grad_out.offset - start) / elem) as u32);
    p.in_base = ((grad_in.offset - output.0) / elem) as u32;
    p.split_axis = split_axis as u32;
    for (d, a) in plan.axes().iter().enumerate() {
        let period = plan.mode().period(a.kept as u64);
        if a.out_len as u64 + period >= INDEX_LIMIT || a.in_len as u64 >= INDEX_LIMIT {
            return Err(limit(
                GpuLimit::IndexRange,
                format!(
                    "axis {d} has {} output elements and a period of {period}; the GPU path needs their sum under 2^31",
                    a.out_len
                ),
            ));
        }
        let (in_magic, in_shift) = magic_divisor(a.in_len.max(1) as u32);
        let (period_magic, period_shift) = magic_divisor(period as u32);
        p.axes[d] = BackAxis {
            in_len: a.in_len as u32,
            in_magic,
            in_shift,
            out_len: a.out_len as u32,
            pad_before: a.pad_before as u32,
            kept: a.kept as u32,
            crop_start: a.crop_start as u32,
            period: period as u32,
            period_magic,
            period_shift,
            out_stride: out_strides[d] as u32,
            in_stride: in_strides[d] as u32,
            touched: u32::from(!a.is_identity()),
            ..BackAxis::default()
        };
    }
    // A lane an element, or a workgroup an element where its sums are split.
    let groups = if split { count } else { count.div_ceil(super::params::WORKGROUP as u64) };
    let workgroups = grid(groups, limits, count, "elements")?;
    let params: Params = bytemuck::cast(p);
    program.dispatches.push(Dispatch { params, workgroups, input, output });
    Ok(program)
}

/// The terms one lane may sum (a bound a software GPU holds shaders to: lavapipe leaves a
/// loop after 65,535 iterations an invocation, a few of which a term takes).
const LANE_TERMS: u64 = 8192;

/// The terms a lane sums at most where axis `d`'s sums (of at most `counts[d]` terms) are split
/// over a workgroup's lanes: for each image outside it, its share of the blocks (each a nest of
/// the axes inside), then every block's sum.
fn split_lane_terms(counts: &[u64], d: usize) -> u64 {
    let (outer, inner) = (counts[..d].iter().product::<u64>(), counts[d + 1..].iter().product::<u64>());
    let n = counts[d];
    let b = if n > BLOCK as u64 { block_len(n as usize) as u64 } else { 1 };
    let blocks = n.div_ceil(b);
    let lanes = super::params::WORKGROUP as u64;
    outer * (blocks.div_ceil(lanes) * b * inner + blocks)
}

/// The most images any index of `axis` has in `mode` (1 for an axis left as it is).
fn most_images(axis: &crate::plan::AxisMap, mode: Mode) -> u64 {
    if axis.is_identity() || axis.kept == 0 {
        return 1;
    }
    let (out, n) = (axis.out_len as u64, axis.kept as u64);
    match mode {
        Mode::Constant => 1,
        Mode::Edge if n == 1 => out,
        Mode::Edge => (axis.pad_before.max(axis.pad_after) + 1) as u64,
        Mode::Wrap => out.div_ceil(n),
        // Two images a period: its index and the mirror image.
        _ => 2 * out.div_ceil(mode.period(n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataType, PadRequest};

    /// Programs of the gradient: one dispatch covering every element of grad_in, the types
    /// refused by name, views that do not fit one binding a GpuLimit.
    /// complex64's gradient is its parts' as float32: one more axis of 2 the pad leaves
    /// alone, each view's strides doubled, 1 for the parts.
    #[test]
    fn a_complex64_gradient_is_its_parts_as_float32() {
        let limits = DeviceLimits::WEBGPU_DEFAULT;
        let request = |pads: Vec<i64>| PadRequest::new(pads).mode(Mode::Reflect);
        let c = PadPlan::new(DataType::Complex64, &[3, 4], &request(vec![1, 2, 0, 3])).unwrap();
        let f = PadPlan::new(DataType::Float32, &[3, 4, 2], &request(vec![1, 2, 0, 0, 3, 0])).unwrap();
        let (i, o) = c.byte_sizes().unwrap();
        assert_eq!(f.byte_sizes().unwrap(), (i, o));
        let same = |a: Program, b: Program| assert_eq!(format!("{a:?}"), format!("{b:?}"));
        let dense = BufferView::dense;
        same(
            Program::backward(&c, &dense(0, o), &dense(0, i), &limits).unwrap(),
            Program::backward(&f, &dense(0, o), &dense(0, i), &limits).unwrap(),
        );
        // The output's gradient every other element of rows of 16, the input's transposed.
        fn view(strides: &[u64]) -> BufferView<'_> {
            BufferView { offset: 16, strides: Some(strides), end: 2048, buffer_size: 2048 }
        }
        let (c_out, c_in, f_out, f_in) = ([32, 2], [1, 3], [64, 4, 1], [2, 6, 1]);
        same(
            Program::backward(&c, &view(&c_out), &view(&c_in), &limits).unwrap(),
            Program::backward(&f, &view(&f_out), &view(&f_in), &limits).unwrap(),
        );
        let too_far = [u64::MAX / 2 + 1, 1];
        let e = Program::backward(&c, &view(&too_far), &dense(0, i), &limits).unwrap_err();
        assert!(matches!(e, PadError::InvalidView { which: Side::Input, .. }), "{e}");
        // At the rank limit the parts' axis is one too many: a GpuLimit naming the caller's rank.
        let deep = PadPlan::new(DataType::Complex64, &[1; MAX_RANK], &request(vec![0; 2 * MAX_RANK])).unwrap();
        let e = Program::backward(&deep, &dense(0, 8), &dense(0, 8), &limits).unwrap_err();
        assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::Rank, .. }), "{e}");
        assert!(e.to_string().contains("complex64 of 16 axes"), "{e}");
        let below = PadPlan::new(DataType::Complex64, &[1; MAX_RANK - 1], &request(vec![0; 2 * MAX_RANK - 2])).unwrap();
        assert!(Program::backward(&below, &dense(0, 8), &dense(0, 8), &limits).is_ok());
    }

    #[test]
    fn a_gradient_program_is_one_dispatch() {
        let limits = DeviceLimits::WEBGPU_DEFAULT;
        let plan =
            PadPlan::new(DataType::Float32, &[5, 7], &PadRequest::new(vec![1, 2, 3, 4]).mode(Mode::Wrap)).unwrap();
        let (i, o) = plan.byte_sizes().unwrap();
        let p = Program::backward(&plan, &BufferView::dense(0, o), &BufferView::dense(0, i), &limits).unwrap();
        assert_eq!(p.dispatches().len(), 1);
        let d = &p.dispatches()[0];
        assert_eq!((d.workgroups(), d.input(), d.output()), ([1, 1, 1], Some((0, o)), (0, i)));
        assert!(p.wgsl().contains("fn below("), "wrap's list");
        assert!(p.wgsl().contains("const SPLIT: bool = false;"), "short sums: a lane an element");
        // A 2-element axis wrapped by 30,000 a side: 15,001 images an element, in 59 blocks
        // of 256 on a workgroup's lanes; a workgroup an element.
        let wide =
            PadPlan::new(DataType::Float32, &[2], &PadRequest::new(vec![30000, 30000]).mode(Mode::Wrap)).unwrap();
        let (wi, wo) = wide.byte_sizes().unwrap();
        let p = Program::backward(&wide, &BufferView::dense(0, wo), &BufferView::dense(0, wi), &limits).unwrap();
        assert!(p.wgsl().contains("const SPLIT: bool = true;"));
        assert_eq!(p.dispatches()[0].workgroups(), [2, 1, 1]);
        // Edge pads of 100 on two axes: a corner sums 101 x 101 terms, past a lane's bound,
        // no axis past a block: the outer axis's 101 terms go to the lanes (303 terms a lane,
        // where splitting the inner one would leave 10,403).
        let corners =
            PadPlan::new(DataType::Float32, &[2, 3], &PadRequest::new(vec![100, 100, 100, 100]).mode(Mode::Edge))
                .unwrap();
        let (ci, co) = corners.byte_sizes().unwrap();
        let p = Program::backward(&corners, &BufferView::dense(0, co), &BufferView::dense(0, ci), &limits).unwrap();
        assert!(p.wgsl().contains("const SPLIT: bool = true;"));
        assert_eq!(p.dispatches()[0].workgroups(), [6, 1, 1]);
        let split_axis = bytemuck::cast::<_, BackParams>(p.dispatches()[0].params).split_axis;
        assert_eq!(split_axis, 0);
        assert_eq!((split_lane_terms(&[101, 101], 0), split_lane_terms(&[101, 101], 1)), (303, 10403));
        assert_eq!(split_lane_terms(&[15001], 0), 256 + 59);
        // Long sums on two axes: past a lane's bound, refused (the CPU path runs it).
        let both =
            PadPlan::new(DataType::Float32, &[2, 2], &PadRequest::new(vec![300, 300, 300, 300]).mode(Mode::Wrap))
                .unwrap();
        let (bi, bo) = both.byte_sizes().unwrap();
        let e = Program::backward(&both, &BufferView::dense(0, bo), &BufferView::dense(0, bi), &limits).unwrap_err();
        assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::IndexRange, .. }), "{e}");
        // 16-bit floats: two to a word, stored by atomics; the element's conversions only.
        let halves =
            PadPlan::new(DataType::Bfloat16, &[4, 7], &PadRequest::new(vec![1, 2, 3, 4]).mode(Mode::Wrap)).unwrap();
        let (hi, ho) = halves.byte_sizes().unwrap();
        let h = Program::backward(&halves, &BufferView::dense(0, ho), &BufferView::dense(0, hi), &limits).unwrap();
        assert_eq!((h.dispatches()[0].output(), h.dispatches()[0].input()), ((0, 56), Some((0, 208))));
        assert!(h.wgsl().contains("array<atomic<u32>>") && h.wgsl().contains("0x17fffu"), "bfloat16's rounding");
        assert!(!h.wgsl().contains("0x2fffu") && !p.wgsl().contains("atomic"), "float16's, and float32's plain stores");
        let doubles = PadPlan::new(DataType::Float64, &[5], &PadRequest::new(vec![1, 1])).unwrap();
        let e = Program::backward(&doubles, &BufferView::dense(0, 56), &BufferView::dense(0, 40), &limits).unwrap_err();
        assert!(e.to_string().contains("cpu::pad_backward takes float64"), "{e}");
        let ints = PadPlan::new(DataType::Int32, &[5], &PadRequest::new(vec![1, 1])).unwrap();
        let e = Program::backward(&ints, &BufferView::dense(0, 28), &BufferView::dense(0, 20), &limits).unwrap_err();
        assert!(e.to_string().contains("no gradient"), "{e}");
        // Past one binding, windows of the outer axes the pad leaves alone: 6 rows of 468 bytes
        // of grad_out on bindings of 1 KiB at 256-byte alignment, a row a window.
        let batch =
            PadPlan::new(DataType::Float32, &[6, 5, 7], &PadRequest::new(vec![0, 1, 2, 0, 3, 4]).mode(Mode::Wrap))
                .unwrap();
        let (bi, bo) = batch.byte_sizes().unwrap();
        let kib = DeviceLimits { max_binding: 1024, storage_alignment: 256, ..limits };
        let p = Program::backward(&batch, &BufferView::dense(0, bo), &BufferView::dense(0, bi), &kib).unwrap();
        assert_eq!(p.dispatches().len(), 6);
        for (w, d) in p.dispatches().iter().enumerate() {
            let (start, size) = d.output();
            assert!(
                size <= 1024 && start % 256 == 0 && start <= w as u64 * 140 && start + size >= (w as u64 + 1) * 140
            );
            let (start, size) = d.input().unwrap();
            assert!(size <= 1024 && start <= w as u64 * 468 && start + size >= (w as u64 + 1) * 468);
        }
        // An axis the pad touches is never cut: [5, 7] padded on both cannot be windowed.
        let small = DeviceLimits { max_binding: 64, ..limits };
        let e = Program::backward(&plan, &BufferView::dense(0, o), &BufferView::dense(0, i), &small).unwrap_err();
        assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::Windows, .. }), "{e}");
    }
}
