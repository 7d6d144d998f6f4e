//! Interior padding on the GPU (JAX's `lax.pad`, StableHLO's `pad`). The pad is its own
//! kernel's one dispatch ([`program`]: `kernels/interior.rs`, an invocation per output word;
//! one a window of an axis past a binding),
//! so the default kernels carry no branch for it. Its gradient is a strided slice of the
//! output's gradient ([`backward`]): a constant pad by the default kernels, reading the output
//! gradient through a view of every `interior + 1`-th element, windows and all.

use crate::error::{GpuLimit, PadError, Result, Side};
use crate::mode::Mode;
use crate::plan::{PadPlan, PadRequest};

use super::checks::{binding, check_views, grid, limit, view, MAX_WINDOWS};
use super::kernels::{narrow, Shader};
use super::params::{constant_word, magic_divisor, AxisParams, Params, INDEX_LIMIT, MAX_RANK, WORKGROUP};
use super::program::{BufferView, DeviceLimits, Dispatch, Program};
use super::shader::PipelineKey;
use super::view::{dense_strides, view_strides};

/// The program of an interior pad: one dispatch where each side fits a binding, else one a
/// window of the first axis the output has more than one index of ([`windows`]).
pub(super) fn program(
    plan: &PadPlan,
    input: &BufferView,
    output: &BufferView,
    limits: &DeviceLimits,
) -> Result<Program> {
    match one_dispatch(plan, input, output, limits) {
        Err(e @ PadError::GpuLimit { limit: GpuLimit::Windows, .. }) => windows(plan, input, output, limits)?.ok_or(e),
        result => result,
    }
}

/// Windows of runs of indices of one axis `d` (the first that gives some: the outermost with
/// more than one output index, then deeper), each of one index of every axis before it: its
/// own interior pad of the input indices that land in it (a begin pad up to the first of
/// them, the rest of the run after the last; all constant where an outer index or the whole
/// run is), at its offsets in both views; as long runs as fit, of near-equal length. `None`
/// where no axis gives any: one index's slab past a binding, more than `MAX_WINDOWS`, or 8-
/// and 16-bit windows that would share a word.
fn windows(plan: &PadPlan, input: &BufferView, output: &BufferView, limits: &DeviceLimits) -> Result<Option<Program>> {
    for d in (0..plan.out_shape().len()).filter(|&d| plan.out_shape()[d] > 1) {
        if let Some(program) = windows_on(plan, d, input, output, limits)? {
            return Ok(Some(program));
        }
    }
    Ok(None)
}

fn windows_on(
    plan: &PadPlan,
    d: usize,
    input: &BufferView,
    output: &BufferView,
    limits: &DeviceLimits,
) -> Result<Option<Program>> {
    let (in_shape, out_shape) = (plan.in_shape(), plan.out_shape());
    let elem = plan.dtype().width().bytes().unwrap_or(1) as u64;
    let strides_of = |v: &BufferView, shape: &[usize]| v.strides.map_or_else(|| dense_strides(shape), <[u64]>::to_vec);
    let (in_strides, out_strides) = (strides_of(input, in_shape), strides_of(output, out_shape));
    // Bytes an output index of axis d moves a window's start. Windows of 8- and 16-bit elements
    // start on a word (runs a multiple of `granule` indices, outer slabs whole words), so that
    // no two write one.
    let row = out_strides[d].saturating_mul(elem);
    let granule = if elem < 4 { 4 / gcd(row % 4, 4) } else { 1 };
    let words = |bytes: u64| elem >= 4 || bytes.is_multiple_of(4);
    if !words(output.offset) || !(0..d).all(|a| words(out_strides[a].saturating_mul(elem))) {
        return Ok(None);
    }
    let constant = match plan.constant() {
        crate::Constant::Bytes(b) => crate::Tensor::from_bytes(plan.dtype(), vec![], b.clone())?,
        crate::Constant::String(_) => return Ok(None),
    };
    let outer: u64 = out_shape[..d].iter().map(|&n| n as u64).product();
    let interior: Vec<i64> = plan.interior().iter().map(|&k| k as i64).collect();
    let lattices: Vec<_> = (0..=d).map(|a| plan.lattice(a)).collect();
    let (m, l) = (out_shape[d] as u64, lattices[d]);
    let step = l.step as u64;
    // The input indices of axis d that land before output index o.
    let landed = |o: u64| o.saturating_sub(l.out_first as u64).div_ceil(step).min(l.count as u64);
    let mut rows = m.div_ceil(2).next_multiple_of(granule);
    loop {
        let runs = m.div_ceil(rows);
        if rows >= m || outer.saturating_mul(runs) > MAX_WINDOWS {
            return Ok(None);
        }
        let mut program: Option<Program> = None;
        'windows: for o in 0..outer {
            // One index of each axis before d: where it reads (or that it is the constant).
            let (mut shape, mut begins, mut ends) = (in_shape.to_vec(), plan.begins().to_vec(), plan.ends().to_vec());
            let (mut in_at, mut out_at, mut rest) = (Some(0u64), 0u64, o);
            for a in (0..d).rev() {
                let oa = rest % out_shape[a] as u64;
                rest /= out_shape[a] as u64;
                out_at += oa * out_strides[a];
                let la = lattices[a];
                let k =
                    oa.checked_sub(la.out_first as u64).filter(|k| k % la.step as u64 == 0).map(|k| k / la.step as u64);
                match k.filter(|&k| k < la.count as u64) {
                    Some(k) => {
                        (shape[a], begins[a], ends[a]) = (1, 0, 0);
                        in_at =
                            in_at.and_then(|at| (la.in_first as u64 + k).checked_mul(in_strides[a])?.checked_add(at));
                    }
                    None => (shape[a], begins[a], ends[a]) = (0, 1, 0),
                }
            }
            for r in 0..runs {
                let (r0, r1) = (r * rows, ((r + 1) * rows).min(m));
                let (lo, hi) = (landed(r0), landed(r1));
                let (mut shape, mut begins, mut ends) = (shape.clone(), begins.clone(), ends.clone());
                let at = if lo < hi {
                    let first = l.out_first as u64 + lo * step - r0;
                    (shape[d], begins[d]) = ((hi - lo) as usize, first as i64);
                    ends[d] = ((r1 - r0) - (first + (hi - lo - 1) * step + 1)) as i64;
                    in_at.and_then(|at| (l.in_first as u64 + lo).checked_mul(in_strides[d])?.checked_add(at))
                } else {
                    // No input index lands in the run: all of it the constant.
                    (shape[d], begins[d], ends[d]) = (0, (r1 - r0) as i64, 0);
                    Some(0)
                };
                let byte = |v: &BufferView, elements: Option<u64>| v.offset.checked_add(elements?.checked_mul(elem)?);
                let (in_offset, out_offset) = match shape.contains(&0) {
                    true => (Some(input.offset), byte(output, Some(out_at + r0 * out_strides[d]))),
                    false => (byte(input, at), byte(output, Some(out_at + r0 * out_strides[d]))),
                };
                let (Some(in_offset), Some(out_offset)) = (in_offset, out_offset) else { return Ok(None) };
                let request = PadRequest::new(begins.into_iter().chain(ends).collect())
                    .interior(interior.clone())
                    .constant(constant.clone())
                    .max_output_bytes(plan.max_output_bytes());
                let window = PadPlan::new(plan.dtype(), &shape, &request)?;
                let window_in = BufferView { offset: in_offset, strides: Some(&in_strides), ..*input };
                let window_out = BufferView { offset: out_offset, strides: Some(&out_strides), ..*output };
                match one_dispatch(&window, &window_in, &window_out, limits) {
                    Ok(p) => {
                        program = Some(match program.take() {
                            Some(all) => all.then(p),
                            None => p,
                        })
                    }
                    Err(PadError::GpuLimit { limit: GpuLimit::Windows, .. }) => {
                        program = None;
                        break 'windows;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        if let Some(mut program) = program {
            // The whole views' spans, as a program of one dispatch has them.
            let (read, write) = (view(Side::Input, input), view(Side::Output, output));
            program.in_span = view_strides(&read, in_shape, elem)?.1;
            program.out_span = view_strides(&write, out_shape, elem)?.1;
            return Ok(Some(program));
        }
        if rows == granule {
            return Ok(None);
        }
        // Shorter runs, of near-equal length: at most about half as long, on the granule.
        let half = (rows / 2).max(granule);
        rows = m.div_ceil(m.div_ceil(half)).next_multiple_of(granule);
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    match b {
        0 => a,
        _ => gcd(b, a % b),
    }
}

/// One dispatch of the interior kernel, each side in one binding (a [`GpuLimit::Windows`]
/// where one does not fit).
fn one_dispatch(plan: &PadPlan, input: &BufferView, output: &BufferView, limits: &DeviceLimits) -> Result<Program> {
    let elem = plan.dtype().width().bytes().ok_or_else(|| PadError::Unsupported {
        dtype: plan.dtype().name(),
        reason: "strings and 4-bit types run on the CPU path (cpu::pad, or GpuContext::pad which falls back)".into(),
    })? as u64;
    let (read, write) = (view(Side::Input, input), view(Side::Output, output));
    let ((in_strides, in_span), (out_strides, out_span)) =
        check_views(plan, (&read, plan.in_shape()), (&write, plan.out_shape()), elem, limits)?;
    let narrow = elem < 4;
    let key = PipelineKey::new(Mode::Constant, elem as u8, false, Shader::Interior { narrow }, false);
    let mut program = Program::of(key, Vec::new(), in_span, out_span);
    let Some(out_span) = out_span else { return Ok(program) };
    let rank = plan.in_shape().len();
    if rank > MAX_RANK {
        return Err(limit(GpuLimit::Rank, format!("{rank} axes; the GPU's interior pad takes at most {MAX_RANK}")));
    }
    let what = "an interior pad, which runs in one binding a side";
    let bound_out = binding(&write, out_span, limits, what)?;
    let bound_in = in_span.map(|span| binding(&read, span, limits, what)).transpose()?;
    // Offsets into the bindings: in elements for 8- and 16-bit types, in u32 words for wider.
    let unit = elem.min(4);
    let (in_base, out_base) =
        ((input.offset - bound_in.map_or(input.offset, |b| b.0)) / unit, (output.offset - bound_out.0) / unit);
    let (elems, words_per_elem) = (plan.out_len() as u64, (elem / 4).max(1));
    let word_rows = narrow && word_rows(plan, &out_strides, elem, output.offset)?;
    let count = match narrow {
        true if word_rows => elems / (4 / elem),
        true => (out_base + elems).div_ceil(4 / elem) - out_base / (4 / elem),
        false => elems * words_per_elem,
    };
    // Every index the shader forms, in its unit, under the magic division's bound.
    let reach = |base: u64, shape: &[usize], strides: &[u64]| -> u64 {
        let last: u64 = shape.iter().zip(strides).map(|(&n, &s)| (n as u64).saturating_sub(1).saturating_mul(s)).sum();
        base.saturating_add(last.saturating_add(1).saturating_mul(words_per_elem))
    };
    let furthest = [
        count,
        out_base + elems,
        reach(out_base, plan.out_shape(), &out_strides),
        reach(in_base, plan.in_shape(), &in_strides),
    ];
    if let Some(&n) = furthest.iter().find(|&&n| n >= INDEX_LIMIT) {
        return Err(limit(
            GpuLimit::IndexRange,
            format!("an interior pad indexing {n} elements; the GPU path needs under 2^31"),
        ));
    }
    let mut p = Params::zeroed();
    p.rank = rank as u32;
    p.count = count as u32;
    p.first = out_base as u32;
    p.elems = elems as u32;
    p.in_base = in_base as u32;
    p.out_base = out_base as u32;
    p.constant = constant_word(plan, elem.max(4));
    // The narrow kernel's rows of whole words, each word's place found through the view.
    p.row_first = u32::from(word_rows);
    for axis in 0..rank {
        let l = plan.lattice(axis);
        // One kept element or none: no step to take (and none to divide by).
        let step = if l.count > 1 { l.step as u32 } else { 1 };
        let span = if l.count == 0 { 0 } else { (l.count as u32 - 1) * step + 1 };
        let out_len = plan.out_shape()[axis] as u32;
        let ((len_magic, len_shift), (period_magic, period_shift)) = (magic_divisor(out_len), magic_divisor(step));
        p.axes[rank - 1 - axis] = AxisParams {
            pad_before: l.out_first as u32,
            kept: span,
            crop_start: l.in_first as u32,
            len: out_len,
            len_magic,
            len_shift,
            in_stride: in_strides[axis] as u32,
            out_stride: out_strides[axis] as u32,
            period: step,
            period_magic,
            period_shift,
            ..AxisParams::default()
        };
    }
    let groups = count.div_ceil(WORKGROUP as u64);
    let workgroups = grid(groups, limits, count, "words")?;
    program.dispatches.push(Dispatch { pipeline: 0, params: p, workgroups, input: bound_in, output: bound_out });
    Ok(program)
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
