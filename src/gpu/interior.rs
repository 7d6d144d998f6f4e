//! Interior padding on the GPU (JAX's `lax.pad`, StableHLO's `pad`). The pad is its own
//! kernel's one dispatch ([`program`]: `kernels/interior.rs`, an invocation per output word;
//! one a window past a binding), so the default kernels carry no branch for it. Its gradient is a strided slice of the
//! output's gradient ([`backward`]): a constant pad by the default kernels, reading the output
//! gradient through a view of every `interior + 1`-th element, windows and all.

use crate::error::{GpuLimit, PadError, Result, Side};
use crate::mode::Mode;
use crate::plan::{PadPlan, PadRequest};

use super::build::{build, fits, Kind};
use super::checks::{check_rank, check_views, element_bytes, grid, limit, view, word_binding};
use super::kernels::{narrow, Shader};
use super::params::{constant_word, magic_divisor, InteriorAxis, InteriorParams, Uniform, INDEX_LIMIT, WORKGROUP};
use super::program::{BufferView, DeviceLimits, Dispatch, Program};
use super::shader::PipelineKey;
use super::view::{dense_strides, Span};
use super::window::{every_index, Extent};

/// The program of an interior pad: one dispatch where each side fits a binding, else one a
/// window of the output (the builder's, [`InteriorPad`]).
pub(super) fn program(
    plan: &PadPlan,
    input: &BufferView,
    output: &BufferView,
    limits: &DeviceLimits,
) -> Result<Program> {
    let pad = InteriorPad::new(plan, input, output, limits)?;
    match pad.spans.1 {
        Some(_) => build(&pad, limits.max_binding),
        None => Ok(Program::of(pad.key(), Vec::new(), pad.spans.0, None)),
    }
}

/// An interior pad as the builder's kind: every check of its plan and views made. Its windows
/// are cut from the output's indices as every program's; each window is its own interior pad
/// of the input indices that land in it (on each axis a begin pad up to the first of them,
/// the rest of its run after the last; all constant where none lands on some axis), at its
/// offsets in both views, in one dispatch of the kernel. Windows of 8- and 16-bit elements
/// start on a word, so that no two write one: pieces of an axis a whole number of words apart.
struct InteriorPad<'a> {
    plan: &'a PadPlan,
    input: &'a BufferView<'a>,
    output: &'a BufferView<'a>,
    limits: &'a DeviceLimits,
    elem: u64,
    in_strides: Vec<u64>,
    out_strides: Vec<u64>,
    spans: (Option<Span>, Option<Span>),
}

impl<'a> InteriorPad<'a> {
    fn new(
        plan: &'a PadPlan,
        input: &'a BufferView<'a>,
        output: &'a BufferView<'a>,
        limits: &'a DeviceLimits,
    ) -> Result<Self> {
        let elem = element_bytes(plan)?;
        let (read, write) = (view(Side::Input, input), view(Side::Output, output));
        let ((in_strides, in_span), (out_strides, out_span)) =
            check_views(plan, (&read, plan.in_shape()), (&write, plan.out_shape()), elem, limits)?;
        Ok(InteriorPad { plan, input, output, limits, elem, in_strides, out_strides, spans: (in_span, out_span) })
    }

    /// The one pipeline: an element's or an 8- and 16-bit word's.
    fn key(&self) -> PipelineKey {
        PipelineKey::new(Mode::Constant, self.elem as u8, false, Shader::Interior { narrow: self.elem < 4 }, false)
    }

    /// The pad of the output indices of box `b` (not the whole output) as an interior pad of
    /// its own, in one dispatch; `None` where it does not fit one.
    fn piece(&self, b: &Extent) -> Result<Option<Dispatch>> {
        let (plan, elem) = (self.plan, self.elem);
        if elem < 4 && !self.output.offset.is_multiple_of(4) {
            // No windows: the whole's refusal, and why.
            let at = self.output.offset;
            return match self.dispatch() {
                Err(PadError::GpuLimit { limit, what }) => {
                    let what = format!("{what}; and {}-bit interior pads take no windows of an output starting mid-word (at byte {at})", 8 * elem);
                    Err(PadError::GpuLimit { limit, what })
                }
                result => result.map(Some),
            };
        }
        let (mut shape, mut begins, mut ends) = (vec![0; b.len()], vec![0; b.len()], vec![0; b.len()]);
        let (mut in_at, mut out_at) = (Some(0u64), 0u64);
        for (a, &(r0, len)) in b.iter().enumerate() {
            let l = plan.lattice(a);
            let (r0, r1, step) = (r0 as u64, (r0 + len) as u64, l.step as u64);
            // The input indices that land before output index o.
            let landed = |o: u64| o.saturating_sub(l.out_first as u64).div_ceil(step).min(l.count as u64);
            let (lo, hi) = (landed(r0), landed(r1));
            out_at += r0 * self.out_strides[a];
            if lo < hi {
                let first = l.out_first as u64 + lo * step - r0;
                (shape[a], begins[a]) = ((hi - lo) as usize, first as i64);
                ends[a] = ((r1 - r0) - (first + (hi - lo - 1) * step + 1)) as i64;
                in_at = in_at.and_then(|at| (l.in_first as u64 + lo).checked_mul(self.in_strides[a])?.checked_add(at));
            } else {
                // No input index lands in the run: all of it the constant.
                begins[a] = (r1 - r0) as i64;
            }
        }
        let byte = |v: &BufferView, elements: Option<u64>| v.offset.checked_add(elements?.checked_mul(elem)?);
        // A window reading nothing binds the view's own offset.
        let in_offset = if shape.contains(&0) { Some(self.input.offset) } else { byte(self.input, in_at) };
        let (Some(in_offset), Some(out_offset)) = (in_offset, byte(self.output, Some(out_at))) else {
            return Err(limit(GpuLimit::Windows, "a window's offset past 2^64 bytes".into()));
        };
        let crate::Constant::Bytes(constant) = plan.constant() else { unreachable!("a string has no element bytes") };
        let request = PadRequest::new(begins.into_iter().chain(ends).collect())
            .interior(plan.interior().iter().map(|&k| k as i64).collect())
            .constant(crate::Tensor::from_bytes(plan.dtype(), vec![], constant.clone())?)
            .max_output_bytes(plan.max_output_bytes());
        let window = PadPlan::new(plan.dtype(), &shape, &request)?;
        let window_in = BufferView { offset: in_offset, strides: Some(&self.in_strides), ..*self.input };
        let window_out = BufferView { offset: out_offset, strides: Some(&self.out_strides), ..*self.output };
        fits(InteriorPad::new(&window, &window_in, &window_out, self.limits)?.dispatch())
    }

    /// The whole pad's one dispatch of the interior kernel, each side in one binding (a
    /// [`GpuLimit::Windows`] where one does not fit); its output is not empty.
    fn dispatch(&self) -> Result<Dispatch> {
        let (plan, elem, limits) = (self.plan, self.elem, self.limits);
        let (in_strides, out_strides) = (&self.in_strides, &self.out_strides);
        let (Some(out_span), in_span) = (self.spans.1, self.spans.0) else { unreachable!("an empty output's pad") };
        let narrow = elem < 4;
        let rank = plan.in_shape().len();
        check_rank(rank, format_args!(" in an interior pad"))?;
        let (read, write) = (view(Side::Input, self.input), view(Side::Output, self.output));
        let what = "an interior pad, in one binding a side";
        let bound_out = word_binding(&write, out_span, limits, what)?;
        let bound_in = in_span.map(|span| word_binding(&read, span, limits, what)).transpose()?;
        let (input, output) = (self.input, self.output);
        // Offsets into the bindings: in elements for 8- and 16-bit types, in u32 words for wider.
        let unit = elem.min(4);
        let (in_base, out_base) =
            ((input.offset - bound_in.map_or(input.offset, |b| b.0)) / unit, (output.offset - bound_out.0) / unit);
        let (elems, words_per_elem) = (plan.out_len() as u64, (elem / 4).max(1));
        let word_rows = narrow && word_rows(plan, out_strides, elem, output.offset)?;
        let count = match narrow {
            true if word_rows => elems / (4 / elem),
            true => (out_base + elems).div_ceil(4 / elem) - out_base / (4 / elem),
            false => elems * words_per_elem,
        };
        // Every index the shader forms, in its unit, under the magic division's bound.
        let reach = |base: u64, shape: &[usize], strides: &[u64]| -> u64 {
            let last: u64 =
                shape.iter().zip(strides).map(|(&n, &s)| (n as u64).saturating_sub(1).saturating_mul(s)).sum();
            base.saturating_add(last.saturating_add(1).saturating_mul(words_per_elem))
        };
        let furthest = [
            count,
            out_base + elems,
            reach(out_base, plan.out_shape(), out_strides),
            reach(in_base, plan.in_shape(), in_strides),
        ];
        if let Some(&n) = furthest.iter().find(|&&n| n >= INDEX_LIMIT) {
            return Err(limit(
                GpuLimit::IndexRange,
                format!("an interior pad indexing {n} elements; the GPU path needs under 2^31"),
            ));
        }
        let mut p = InteriorParams {
            rank: rank as u32,
            count: count as u32,
            first: out_base as u32,
            elems: elems as u32,
            in_base: in_base as u32,
            out_base: out_base as u32,
            word_rows: u32::from(word_rows),
            constant: constant_word(plan, elem.max(4)),
            ..InteriorParams::default()
        };
        for axis in 0..rank {
            let l = plan.lattice(axis);
            // One kept element or none: no step to take (and none to divide by).
            let step = if l.count > 1 { l.step as u32 } else { 1 };
            let len = plan.out_shape()[axis] as u32;
            let ((len_magic, len_shift), (step_magic, step_shift)) = (magic_divisor(len), magic_divisor(step));
            p.axes[rank - 1 - axis] = InteriorAxis {
                len,
                len_magic,
                len_shift,
                first: l.out_first as u32,
                span: if l.count == 0 { 0 } else { (l.count as u32 - 1) * step + 1 },
                in_first: l.in_first as u32,
                in_stride: in_strides[axis] as u32,
                out_stride: out_strides[axis] as u32,
                step,
                step_magic,
                step_shift,
                ..InteriorAxis::default()
            };
        }
        let groups = count.div_ceil(WORKGROUP as u64);
        let workgroups = grid(groups, limits, count, "words")?;
        Ok(Dispatch { pipeline: 0, params: Uniform::Interior(p), workgroups, input: bound_in, output: bound_out })
    }
}

impl Kind for InteriorPad<'_> {
    type Window = Dispatch;

    fn extent(&self) -> (Vec<(usize, usize)>, Vec<usize>) {
        // The indices of each axis a piece takes at a time: whole 4-byte words for 8- and 16-bit
        // elements.
        let granule = |s: u64| if self.elem < 4 { 4 / gcd(s.saturating_mul(self.elem), 4) as usize } else { 1 };
        (every_index(self.plan.out_shape()), self.out_strides.iter().map(|&s| granule(s)).collect())
    }

    fn window(&self, b: &Extent) -> Result<Option<Dispatch>> {
        match b.iter().zip(self.plan.out_shape()).all(|(&(s, len), &n)| (s, len) == (0, n)) {
            true => fits(self.dispatch()),
            false => self.piece(b),
        }
    }

    fn settle(&self, windows: Vec<Dispatch>) -> (PipelineKey, Vec<Dispatch>) {
        (self.key(), windows)
    }

    fn spans(&self) -> (Option<Span>, Option<Span>) {
        self.spans
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    match b {
        0 => a,
        _ => gcd(b, a % b),
    }
}

/// How the narrow interior kernel, an invocation an output word, finds its words: `false` for a
/// dense output (words in a run from the first), `true` for rows along the last axis, of stride
/// one, of whole 4-byte words that start on words (each word's place through the view); any
/// other 8- or 16-bit view is refused, saying which of these it breaks.
fn word_rows(plan: &PadPlan, out_strides: &[u64], elem: u64, offset: u64) -> Result<bool> {
    if narrow::check_output(plan, out_strides, elem).is_ok() {
        return Ok(false);
    }
    let (shape, per_word) = (plan.out_shape(), 4 / elem);
    let last = shape.len() - 1;
    let refuse = |reason: String| {
        Err(PadError::InvalidView {
            which: Side::Output,
            reason: format!(
                "{reason}: {}-bit interior pads write dense outputs or rows along the last axis (stride 1) of whole 4-byte words starting on words (the GPU writes 32-bit words)",
                8 * elem
            ),
        })
    };
    if shape[last] > 1 && out_strides[last] != 1 {
        return refuse(format!("axis {last} (the last) has stride {}", out_strides[last]));
    }
    if !(shape[last] as u64).is_multiple_of(per_word) {
        return refuse(format!("its rows of {} elements are not whole words", shape[last]));
    }
    if let Some(a) = (0..last).find(|&a| shape[a] > 1 && !out_strides[a].is_multiple_of(per_word)) {
        return refuse(format!("axis {a} has stride {}, which starts rows mid-word", out_strides[a]));
    }
    if !offset.is_multiple_of(4) {
        return refuse(format!("the view starts at byte {offset}, mid-word"));
    }
    Ok(true)
}

/// The program of an interior pad's gradient: each input element's is the output gradient at
/// its one place, or zero where it was cropped. That is a constant pad (of zero) of the kept
/// elements' gradients, read through `grad_out` with each axis's stride times its step and
/// element 0 at the first kept place: the default kernels' program, windows and all.
pub(super) fn backward(
    plan: &PadPlan,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Program> {
    if !crate::cpu::has_gradient(plan.dtype()) {
        let reason = "no gradient is taken of integer, bool, string, float8e8m0 or 4-bit tensors";
        return Err(PadError::Unsupported { dtype: plan.dtype().name(), reason: reason.into() });
    }
    let elem = plan.dtype().width().bytes().unwrap_or(1) as u64;
    let rank = plan.in_shape().len();
    let lattices: Vec<_> = (0..rank).map(|axis| plan.lattice(axis)).collect();
    let kept: Vec<usize> = lattices.iter().map(|l| l.count).collect();
    let begins = lattices.iter().map(|l| l.in_first as i64);
    let ends = lattices.iter().zip(plan.in_shape()).map(|(l, &n)| (n - l.in_first - l.count) as i64);
    // The slice's output is grad_in, the input's size, which the forward's cap never bounded:
    // no cap of its own (cpu::pad_backward has none either).
    let request = PadRequest::new(begins.chain(ends).collect()).max_output_bytes(u64::MAX);
    let slice = PadPlan::new(plan.dtype(), &kept, &request)?;
    let strides = grad_out.strides.map_or_else(|| dense_strides(plan.out_shape()), <[u64]>::to_vec);
    let overflow = || PadError::InvalidView {
        which: Side::Input,
        reason: "the gradient's strided slice reaches past 2^64 bytes".into(),
    };
    let mut offset = grad_out.offset;
    let mut stepped = Vec::with_capacity(rank);
    for (l, &s) in lattices.iter().zip(&strides) {
        let place = (l.out_first as u64).checked_mul(s).and_then(|e| e.checked_mul(elem));
        offset = place.and_then(|b| offset.checked_add(b)).ok_or_else(overflow)?;
        stepped.push((l.step as u64).checked_mul(s).ok_or_else(overflow)?);
    }
    // A view reading nothing (an axis keeps no element) starts at the view's own offset.
    if kept.contains(&0) {
        offset = grad_out.offset;
    }
    let read = BufferView { offset, strides: Some(&stepped), ..*grad_out };
    match Program::new(&slice, &read, grad_in, limits) {
        // An 8- or 16-bit grad_in the default kernels cannot write (elements apart inside a
        // word): the gradient's kernel, which stores each element alone, of the crop to the
        // kept elements, each kept one a sum of one term (its bits).
        Err(PadError::InvalidView { which: Side::Output, .. }) if elem < 4 => {
            let crop: Vec<i64> = lattices.iter().map(|l| -(l.in_first as i64)).collect();
            let crop_ends = lattices.iter().zip(plan.in_shape()).map(|(l, &n)| -((n - l.in_first - l.count) as i64));
            let request = PadRequest::new(crop.into_iter().chain(crop_ends).collect()).max_output_bytes(u64::MAX);
            Program::backward(&PadPlan::new(plan.dtype(), plan.in_shape(), &request)?, &read, grad_in, limits)
        }
        result => result,
    }
}
