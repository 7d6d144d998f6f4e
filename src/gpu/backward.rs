//! The pad's gradient on the GPU as a [`Program`] (`shaders/backward.wgsl`): a gather, a lane
//! an element of the input's gradient summing the output's gradient over the positions that
//! read it, in the order `crate::adjoint` documents, so its bits are `cpu::pad_backward`'s.
//! One dispatch a pad where its two views fit a binding; past it, one a window: an index of
//! the outer axes and a run of one axis, padded or not, with the output's gradient it reads.
//! Where no window's reads fit (a wrap's first and last indices read both ends of the axis),
//! the sums in parts along the first touched axis, each part's windows continuing what the
//! parts before stored; a `GpuLimit` where neither fits (an index with more than a block's
//! images on that axis), which `GpuContext::pad_backward` answers on the CPU path. float32, complex64 (its two parts
//! summed alone, as float32 with one more axis), float16 and bfloat16 (16-bit elements two to
//! a word) and the float8s but float8e8m0 (four to a word), summed as f32 rounded to the type
//! at every addition.

use crate::dtype::DataType;
use crate::error::{GpuLimit, PadError, Result, Side};
use crate::mode::Mode;
use crate::plan::{PadPlan, PadRequest};

use super::checks::{binding, check_device, check_view_bounds, grid, limit, view};
use super::kernels::{GradientElement, Shader};
use super::params::{magic_divisor, BackAxis, BackParams, INDEX_LIMIT, MAX_RANK};
use super::program::{BufferView, DeviceLimits, Dispatch, Program};
use super::shader::PipelineKey;
use super::view::{check_no_self_overlap, view_strides, Span};
use crate::adjoint::{block_len, image_hull, BLOCK};

impl Program {
    /// The program of `plan`'s gradient: reads `grad_out` (the gradient of the pad's output:
    /// the plan's output shape) and writes `grad_in` (of its input shape), any strides on
    /// either side, on a device with `limits`. Each element of `grad_in` is the sum of
    /// `grad_out` over the output positions that read it, in `crate::adjoint`'s order: the
    /// bits of `cpu::pad_backward`. float32, complex64 (its parts as float32), float16,
    /// bfloat16 and the float8s but float8e8m0. One dispatch where both views fit a storage binding; past it, one a window
    /// (an index of the outer axes and a run of one axis, padded or not), each window's
    /// sums whole, where a window's part of each view fits a binding (the output's gradient
    /// it reads: every image of its elements); where none fits, the sums in parts (each the
    /// images at a run of output positions of the first axis the pad touches, in windows,
    /// continuing the sums the parts before stored; the dispatches must run in order); else
    /// `PadError::GpuLimit`. Everything is checked here.
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
        let whole = Whole::new(plan, grad_out, grad_in, limits)?;
        match whole.one_dispatch(grad_out, grad_in, limits) {
            Err(e @ PadError::GpuLimit { limit: GpuLimit::Windows, .. }) => {
                match windows(plan, &whole, grad_out, grad_in, limits)? {
                    Some(dispatches) => Ok(whole.program(dispatches)),
                    None => match parts(plan, &whole, grad_out, grad_in, limits)? {
                        Ok(dispatches) => Ok(whole.program(dispatches)),
                        Err(why) => Err(match e {
                            PadError::GpuLimit { limit, what } => {
                                PadError::GpuLimit { limit, what: format!("{what}; {why}") }
                            }
                            e => e,
                        }),
                    },
                }
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

/// What a binding error says the view was for.
const WHAT: &str = "the gradient, where no window of it fits a binding";

/// Windows of the gradient, at most this many: past it, the CPU path.
const MAX_WINDOWS: u64 = 1 << 16;

/// Windows of the gradient past one binding: along an axis `d`, one index of each axis before
/// it and a run of near-equal length of `d`'s, every axis after it whole; each window the
/// whole gradient's pipeline and uniform with its own lengths and bases. An axis the pad
/// touches keeps its images in the whole axis's coordinates: a window's first index moves the
/// axis's crop start (the shader's `k - crop_start` is then the whole axis's kept index, in
/// wrapping arithmetic), and the window binds the hull of its images in `grad_out`
/// ([`crate::adjoint`]'s `image_hull`), its base counted from there (wrapping where the hull
/// starts past the window's first position: only the sums of the offsets are bound). Of the
/// axes, the one that makes the fewest windows; `None` where none fits (a wrap whose images
/// span the axis, say: [`parts`]). With a part, the images in it only.
fn windows(
    plan: &PadPlan,
    whole: &Whole,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Option<Vec<Dispatch>>> {
    if whole.in_span.is_none() {
        return Ok(None);
    }
    let shape = plan.in_shape();
    let (mut best, mut outer): (Option<Vec<Dispatch>>, u64) = (None, 1);
    for (d, &len) in shape.iter().enumerate() {
        // Every axis from here makes at least `outer` windows.
        if best.as_ref().is_some_and(|b| outer >= b.len() as u64) {
            break;
        }
        if let Some(dispatches) = windows_on(plan, whole, d, grad_out, grad_in, limits)? {
            if best.as_ref().is_none_or(|b| dispatches.len() < b.len()) {
                best = Some(dispatches);
            }
        }
        outer = outer.saturating_mul(len as u64);
    }
    Ok(best)
}

/// The gradient past one binding where no window's reads fit (a wrap's first and last
/// indices read both ends of the axis): its sums cut into parts along the first axis the pad
/// touches, each part the images at one run of that axis's output positions and run in
/// windows, continuing the sums the parts before it stored. The parts follow the sums' order
/// (the pad before, the pad after, the kept positions: `crate::adjoint`), so the bits are one
/// sum's; the first part writes every element (+0.0 where it has nothing), the others only
/// those with images in them. Only where that axis's sums are single blocks (at most
/// `BLOCK` images an index) and summed on a lane each; else why not (the CPU path runs it).
/// Costs over the windows: the input's gradient written once more and read once a part.
fn parts(
    plan: &PadPlan,
    whole: &Whole,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<std::result::Result<Vec<Dispatch>, String>> {
    let Some(c) = plan.axes().iter().position(|a| !a.is_identity()) else {
        return Ok(Err("no axis is padded or cropped".into()));
    };
    let axis = &plan.axes()[c];
    let images = most_images(axis, plan.mode());
    if images > BLOCK as u64 {
        return Ok(Err(format!(
            "nor in parts: an index of axis {c} has {images} images, and parts take sums of at most {BLOCK}"
        )));
    }
    if whole.split {
        return Ok(Err("nor in parts: its sums are split over a workgroup's lanes, and parts take a lane's".into()));
    }
    // The pads in runs of output positions at most a binding's rows long (a window's images
    // in them can lie all along them); the kept positions in one (a window's are its own).
    let row = (whole.out_strides[c] * whole.elem).max(1);
    let rows = (limits.max_binding.saturating_sub(limits.storage_alignment) / row).max(1) as usize;
    let (p, n, out) = (axis.pad_before, axis.kept, axis.out_len);
    let mut dispatches = Vec::new();
    for (lo, hi, piece) in [(0, p, rows), (p + n, out, rows), (p, p + n, n.max(1))] {
        for at in (lo..hi).step_by(piece) {
            let part = Part { axis: c, lo: at, hi: hi.min(at + piece), kept: (p, p + n) };
            let continues = !dispatches.is_empty();
            let mut w = whole.clone();
            w.part = Some(part);
            (w.params.part_axis, w.params.part_lo, w.params.part_hi) = (c as u32, part.lo as u32, part.hi as u32);
            w.params.part_continues = u32::from(continues);
            let Some(mut windows) = windows(plan, &w, grad_out, grad_in, limits)? else {
                return Ok(Err(format!(
                    "nor in parts: no window of the part at output positions {}..{} of axis {c} fits",
                    part.lo, part.hi
                )));
            };
            if continues {
                // Windows that read nothing add nothing.
                windows.retain(|d| d.input.is_some());
            }
            dispatches.extend(windows);
            if dispatches.len() as u64 > MAX_WINDOWS {
                return Ok(Err(format!("nor in parts: they take more than {MAX_WINDOWS} dispatches")));
            }
        }
    }
    Ok(Ok(dispatches))
}

/// A part of the gradient's sums ([`parts`]): the images on `axis` at output positions
/// `lo..hi`, within the kept positions `kept` or the pads.
#[derive(Debug, Clone, Copy)]
struct Part {
    axis: usize,
    lo: usize,
    hi: usize,
    kept: (usize, usize),
}

impl Part {
    /// The output positions of `hull` (the images of input run `range`) in the part: where
    /// the part is of kept positions, only the run's own.
    fn clip(
        &self,
        hull: Option<(usize, usize)>,
        axis: &crate::plan::AxisMap,
        range: std::ops::Range<usize>,
    ) -> Option<(usize, usize)> {
        let (lo, hi) = if self.lo >= self.kept.0 && self.hi <= self.kept.1 {
            let first = range.start.max(axis.crop_start).saturating_sub(axis.crop_start);
            let end = range.end.min(axis.crop_start + axis.kept).saturating_sub(axis.crop_start);
            (self.lo.max(self.kept.0 + first), self.hi.min(self.kept.0 + end))
        } else {
            let (h_lo, h_hi) = hull?;
            (self.lo.max(h_lo), self.hi.min(h_hi))
        };
        (lo < hi).then_some((lo, hi))
    }
}

/// The windows along axis `d` ([`windows`]): as few runs of its indices as fit, from as many
/// as the rows of a binding call for, more where a window's reads do not fit (pads at an
/// axis's ends, a reflection's mirror images).
fn windows_on(
    plan: &PadPlan,
    whole: &Whole,
    d: usize,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Option<Vec<Dispatch>>> {
    let (shape, axes, mode) = (plan.in_shape(), plan.axes(), plan.mode());
    // The output coordinates a run of an axis's input indices reads.
    let hull = |a: usize, range: std::ops::Range<usize>| match (axes[a].is_identity(), whole.part) {
        (true, _) => Some((range.start, range.end)),
        (false, Some(part)) if part.axis == a => part.clip(image_hull(&axes[a], mode, range.clone()), &axes[a], range),
        (false, _) => image_hull(&axes[a], mode, range),
    };
    let inner: Vec<Option<(usize, usize)>> = (d + 1..shape.len()).map(|a| hull(a, 0..shape[a])).collect();
    let outer: u64 = shape[..d].iter().map(|&n| n as u64).product();
    let n = shape[d] as u64;
    let unit = (whole.out_strides[d].max(whole.in_strides[d]) * whole.elem).max(1);
    let rows = (limits.max_binding.saturating_sub(limits.storage_alignment) / unit).max(1);
    // Runs of `even` indices (the last shorter), as near equal as their count allows.
    let mut even = n.div_ceil(n.div_ceil(rows));
    loop {
        let runs = n.div_ceil(even);
        if outer.saturating_mul(runs) > MAX_WINDOWS {
            return Ok(None);
        }
        let run_hulls: Vec<_> =
            (0..runs).map(|r| hull(d, (r * even) as usize..(n.min((r + 1) * even)) as usize)).collect();
        let mut dispatches = Vec::with_capacity((outer * runs) as usize);
        'windows: for o in 0..outer {
            let mut spans = vec![WindowAxis { first: 0, len: 0, reads: None }; shape.len()];
            let mut rest = o;
            for a in (0..d).rev() {
                let k = (rest % shape[a] as u64) as usize;
                rest /= shape[a] as u64;
                spans[a] = WindowAxis { first: k, len: 1, reads: hull(a, k..k + 1) };
            }
            for (a, &reads) in inner.iter().enumerate() {
                spans[d + 1 + a] = WindowAxis { first: 0, len: shape[d + 1 + a], reads };
            }
            for (r, &reads) in run_hulls.iter().enumerate() {
                let first = r as u64 * even;
                spans[d] = WindowAxis { first: first as usize, len: even.min(n - first) as usize, reads };
                match whole.window(&spans, grad_out, grad_in, limits) {
                    Ok(dispatch) => dispatches.push(dispatch),
                    Err(PadError::GpuLimit { limit: GpuLimit::Windows, .. }) => break 'windows,
                    Err(e) => return Err(e),
                }
            }
        }
        if dispatches.len() as u64 == outer * runs {
            return Ok(Some(dispatches));
        }
        if even == 1 {
            return Ok(None);
        }
        // Shorter runs, an eighth more of them or at least one more; `even` falls every time.
        even = n.div_ceil((runs + 1).max(runs + runs / 8)).min(even - 1);
    }
}

/// A window's extent on one axis: its first index and length, and the output coordinates
/// they read (`lo..hi`; `None`: nothing, every index cropped away).
#[derive(Debug, Clone, Copy)]
struct WindowAxis {
    first: usize,
    len: usize,
    reads: Option<(usize, usize)>,
}

/// The gradient of a whole plan: its pipeline, its uniform but for the bindings' bases, its
/// views' strides (in elements) and bytes; every check made but whether a view fits a binding.
/// With `part`, one part of its sums ([`parts`]).
#[derive(Clone)]
struct Whole {
    key: PipelineKey,
    params: BackParams,
    split: bool,
    elem: u64,
    out_strides: Vec<u64>,
    in_strides: Vec<u64>,
    /// The bytes of `grad_out` and `grad_in`; `None` where empty.
    out_span: Option<Span>,
    in_span: Option<Span>,
    part: Option<Part>,
}

impl Whole {
    fn new(plan: &PadPlan, grad_out: &BufferView, grad_in: &BufferView, limits: &DeviceLimits) -> Result<Whole> {
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
        let mut p = BackParams::zeroed();
        if in_span.is_some() {
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
            p.rank = rank as u32;
            p.count = count as u32;
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
        }
        Ok(Whole { key, params: p, split, elem, out_strides, in_strides, out_span, in_span, part: None })
    }

    /// The program of `dispatches`.
    fn program(&self, dispatches: Vec<Dispatch>) -> Program {
        Program { key: self.key, dispatches, in_span: self.out_span, out_span: self.in_span }
    }

    /// The program in one dispatch, each view in one binding ([`Program::backward`]).
    fn one_dispatch(&self, grad_out: &BufferView, grad_in: &BufferView, limits: &DeviceLimits) -> Result<Program> {
        let mut program =
            Program { key: self.key, dispatches: Vec::new(), in_span: self.out_span, out_span: self.in_span };
        let Some(in_span) = self.in_span else { return Ok(program) };
        let (read, write) = (view(Side::Input, grad_out), view(Side::Output, grad_in));
        let output = binding(&write, in_span, limits, WHAT)?;
        let input = self.out_span.map(|span| binding(&read, span, limits, WHAT)).transpose()?;
        let mut p = self.params;
        p.out_base = input.map_or(0, |(start, _)| ((grad_out.offset - start) / self.elem) as u32);
        p.in_base = ((grad_in.offset - output.0) / self.elem) as u32;
        program.dispatches.push(self.dispatch(p, input, output, limits)?);
        Ok(program)
    }

    /// The dispatch of uniform `p` (its elements, `p.count`): a lane an element, or a
    /// workgroup an element where its sums are split.
    fn dispatch(&self, p: BackParams, input: Option<Span>, output: Span, limits: &DeviceLimits) -> Result<Dispatch> {
        let count = p.count as u64;
        let groups = if self.split { count } else { count.div_ceil(super::params::WORKGROUP as u64) };
        let workgroups = grid(groups, limits, count, "elements")?;
        Ok(Dispatch { params: bytemuck::cast(p), workgroups, input, output })
    }

    /// The dispatch of one window ([`windows`]), its extent on each axis; a GpuLimit where a
    /// view's part does not fit a binding. Its offsets lie within the views' (checked
    /// whole), so they do not overflow.
    fn window(
        &self,
        spans: &[WindowAxis],
        grad_out: &BufferView,
        grad_in: &BufferView,
        limits: &DeviceLimits,
    ) -> Result<Dispatch> {
        let elem = self.elem;
        let mut p = self.params;
        let (mut in_first, mut in_last, mut out_first) = (0u64, 0u64, 0u64);
        let (mut lo, mut hi, mut reads) = (0u64, 0u64, true);
        for (a, &WindowAxis { first, len, reads: hull }) in spans.iter().enumerate() {
            let axis = &mut p.axes[a];
            in_first += first as u64 * self.in_strides[a];
            in_last += (len as u64 - 1) * self.in_strides[a];
            if len as u32 != axis.in_len {
                axis.in_len = len as u32;
                (axis.in_magic, axis.in_shift) = magic_divisor(len as u32);
            }
            if axis.touched == 1 {
                // Its images are the whole axis's: the window's first index shifts its kept ones.
                axis.crop_start = axis.crop_start.wrapping_sub(first as u32);
            } else {
                out_first += first as u64 * self.out_strides[a];
            }
            match hull {
                Some((h_lo, h_hi)) => {
                    lo += h_lo as u64 * self.out_strides[a];
                    hi += (h_hi - 1) as u64 * self.out_strides[a];
                }
                None => reads = false,
            }
        }
        p.count = spans.iter().map(|s| s.len as u32).product();
        let write = view(Side::Output, grad_in);
        let in_start = grad_in.offset + in_first * elem;
        let output = binding(&write, (in_start, in_start + (in_last + 1) * elem), limits, WHAT)?;
        p.in_base = ((in_start - output.0) / elem) as u32;
        let input = match reads {
            true => {
                let read = view(Side::Input, grad_out);
                let span = (grad_out.offset + lo * elem, grad_out.offset + (hi + 1) * elem);
                Some(binding(&read, span, limits, WHAT)?)
            }
            false => None,
        };
        // Element 0 of the window's own coordinates, from its binding's start: below it where
        // the hull starts past it, the shader's wrapping sums land within the binding.
        p.out_base =
            input.map_or(0, |(start, _)| (grad_out.offset / elem + out_first).wrapping_sub(start / elem) as u32);
        self.dispatch(p, input, output, limits)
    }
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
    use crate::gpu::params::NO_PART;
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
        // A wrap of [5, 7] on both axes: its first and last rows are read from both ends of
        // the axis, and no window of them fits 64 bytes.
        let small = DeviceLimits { max_binding: 64, ..limits };
        let e = Program::backward(&plan, &BufferView::dense(0, o), &BufferView::dense(0, i), &small).unwrap_err();
        assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::Windows, .. }), "{e}");
    }

    /// Past one binding, windows along an axis the pad touches: runs of [20, 20]'s rows
    /// padded by one on each axis, 88-byte rows on 1 KiB bindings at 256-byte alignment, three
    /// windows of 7, 7 and 6 rows, each binding the output rows its elements read (rows 1-7,
    /// 8-14, 15-20 of 22) and its own rows of the input's gradient; the window's first row
    /// moves the axis's crop start, wrapping below zero.
    #[test]
    fn windows_run_along_padded_axes() {
        let kib = DeviceLimits { max_binding: 1024, storage_alignment: 256, ..DeviceLimits::WEBGPU_DEFAULT };
        let plan = PadPlan::new(DataType::Float32, &[20, 20], &PadRequest::new(vec![1, 1, 1, 1])).unwrap();
        let (i, o) = plan.byte_sizes().unwrap();
        let p = Program::backward(&plan, &BufferView::dense(0, o), &BufferView::dense(0, i), &kib).unwrap();
        let bindings: Vec<_> = p.dispatches().iter().map(|d| (d.input().unwrap(), d.output())).collect();
        // Reads: bytes [92, 700), [708, 1316), [1324, 1844) (columns 1-20 of those rows) from
        // 256-byte boundaries; writes [0, 560), [560, 1120), [1120, 1600).
        assert_eq!(bindings, [((0, 700), (0, 560)), ((512, 804), (512, 608)), ((1280, 564), (1024, 576))]);
        let params: Vec<BackParams> = p.dispatches().iter().map(|d| bytemuck::cast(d.params)).collect();
        let firsts = params.iter().map(|p| (p.count, p.axes[0].in_len, p.axes[0].crop_start, p.out_base, p.in_base));
        // out_base: grad_out's element 0 from the binding's start (0, 128 and 320 elements on).
        let want = [
            (140, 7, 0, 0, 0),
            (140, 7, 0u32.wrapping_sub(7), 0u32.wrapping_sub(128), 12),
            (120, 6, 0u32.wrapping_sub(14), 0u32.wrapping_sub(320), 24),
        ];
        assert_eq!(firsts.collect::<Vec<_>>(), want);
        assert!(
            params.iter().all(|p| p.axes[1] == params[0].axes[1] && p.axes[1].in_len == 20),
            "the inner axis whole"
        );
        assert!(params.iter().all(|p| p.part_axis == NO_PART), "whole sums");
    }

    /// Where no window's reads fit, parts: a wrap of [20, 20] by one (its first and last rows
    /// read from both ends of the axis; 88-byte rows on 1 KiB bindings), in three parts along
    /// axis 0, in the sums' order: output row 0 (the pad before: every window, the one
    /// reading row 0 the last), row 21 (the pad after: only the window of rows 0-6 reads it),
    /// rows 1-20 (the kept ones: each window its own rows). Each window's bindings as the
    /// windows' above; the parts after the first continue the sums.
    #[test]
    fn windows_that_read_the_whole_axis_run_in_parts() {
        let kib = DeviceLimits { max_binding: 1024, storage_alignment: 256, ..DeviceLimits::WEBGPU_DEFAULT };
        let wrap = PadPlan::new(DataType::Float32, &[20, 20], &PadRequest::new(vec![1; 4]).mode(Mode::Wrap)).unwrap();
        let (i, o) = wrap.byte_sizes().unwrap();
        let p = Program::backward(&wrap, &BufferView::dense(0, o), &BufferView::dense(0, i), &kib).unwrap();
        let got: Vec<_> = p
            .dispatches()
            .iter()
            .map(|d| {
                let q: BackParams = bytemuck::cast(d.params);
                (d.input(), d.output(), (q.part_axis, q.part_lo, q.part_hi, q.part_continues), q.axes[0].in_len)
            })
            .collect();
        let want = [
            (None, (0, 560), (0, 0, 1, 0), 7),
            (None, (512, 608), (0, 0, 1, 0), 7),
            (Some((0, 88)), (1024, 576), (0, 0, 1, 0), 6),
            (Some((1792, 144)), (0, 560), (0, 21, 22, 1), 7),
            (Some((0, 704)), (0, 560), (0, 1, 21, 1), 7),
            (Some((512, 808)), (512, 608), (0, 1, 21, 1), 7),
            (Some((1280, 568)), (1024, 576), (0, 1, 21, 1), 6),
        ];
        assert_eq!(got, want);
        // Output row 21 from its binding at byte 1792: element 0 is 448 elements below it.
        let after: BackParams = bytemuck::cast(p.dispatches()[3].params);
        assert_eq!(after.out_base, 0u32.wrapping_sub(448));
        // Parts of axis 1 where the first is left alone and its rows pass a binding.
        let rows =
            PadPlan::new(DataType::Float32, &[3, 400], &PadRequest::new(vec![0, 5, 0, 5]).mode(Mode::Wrap)).unwrap();
        let (ri, ro) = rows.byte_sizes().unwrap();
        let p = Program::backward(&rows, &BufferView::dense(0, ro), &BufferView::dense(0, ri), &kib).unwrap();
        let q: BackParams = bytemuck::cast(p.dispatches()[0].params);
        assert_eq!((q.part_axis, q.part_lo, q.part_hi, q.part_continues), (1, 0, 5, 0));
        // More than a block's images an index: parts would cut its sums' blocks.
        let wide = PadPlan::new(DataType::Float32, &[4], &PadRequest::new(vec![600, 600]).mode(Mode::Wrap)).unwrap();
        let (wi, wo) = wide.byte_sizes().unwrap();
        let e = Program::backward(&wide, &BufferView::dense(0, wo), &BufferView::dense(0, wi), &kib).unwrap_err();
        assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::Windows, .. }), "{e}");
        assert!(e.to_string().contains("an index of axis 0 has 301 images"), "{e}");
        // Sums split over a workgroup's lanes (corners of edge pads of 100 on two axes).
        let corners =
            PadPlan::new(DataType::Float32, &[2, 3], &PadRequest::new(vec![100; 4]).mode(Mode::Edge)).unwrap();
        let (ci, co) = corners.byte_sizes().unwrap();
        let e = Program::backward(&corners, &BufferView::dense(0, co), &BufferView::dense(0, ci), &kib).unwrap_err();
        assert!(e.to_string().contains("split over a workgroup's lanes"), "{e}");
    }
}
