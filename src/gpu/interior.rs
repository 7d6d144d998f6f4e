//! Interior padding on the GPU (JAX's `lax.pad`, StableHLO's `pad`). The pad is its own
//! kernel's one dispatch ([`program`]: `kernels/interior.rs`, an invocation per output word),
//! so the default kernels carry no branch for it. Its gradient is a strided slice of the
//! output's gradient ([`backward`]): a constant pad by the default kernels, reading the output
//! gradient through a view of every `interior + 1`-th element, windows and all.

use crate::error::{GpuLimit, PadError, Result, Side};
use crate::mode::Mode;
use crate::plan::{PadPlan, PadRequest};

use super::checks::{binding, check_device, check_view_bounds, limit, view};
use super::kernels::{narrow, Shader};
use super::params::{constant_word, magic_divisor, AxisParams, Params, INDEX_LIMIT, MAX_RANK, WORKGROUP};
use super::program::{BufferView, DeviceLimits, Dispatch, Program};
use super::shader::PipelineKey;
use super::view::{check_no_self_overlap, dense_strides, view_strides};

/// The program of an interior pad: one dispatch, the whole output in one binding (a pad past
/// one is a [`GpuLimit::Windows`], which `GpuContext` runs on the CPU path).
pub(super) fn program(
    plan: &PadPlan,
    input: &BufferView,
    output: &BufferView,
    limits: &DeviceLimits,
) -> Result<Program> {
    let elem = plan.dtype().width().bytes().ok_or_else(|| PadError::Unsupported {
        dtype: plan.dtype().name(),
        reason: "strings and 4-bit types run on the CPU path (cpu::pad, or GpuContext::pad which falls back)".into(),
    })? as u64;
    check_device(plan, limits)?;
    let (read, write) = (view(Side::Input, input), view(Side::Output, output));
    for v in [&read, &write] {
        check_view_bounds(v, limits)?;
    }
    let (in_strides, in_span) = view_strides(&read, plan.in_shape(), elem)?;
    let (out_strides, out_span) = view_strides(&write, plan.out_shape(), elem)?;
    let narrow = elem < 4;
    let key = PipelineKey::new(Mode::Constant, elem as u8, false, Shader::Interior { narrow }, false);
    let mut program = Program { key, dispatches: Vec::new(), in_span, out_span };
    let Some(out_span) = out_span else { return Ok(program) };
    check_no_self_overlap(plan.out_shape(), &out_strides)?;
    if narrow {
        narrow::check_output(plan, &out_strides, elem)?;
    }
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
    let count = match narrow {
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
    let x = groups.min(limits.max_groups as u64).max(1);
    let workgroups = [x as u32, groups.div_ceil(x) as u32, 1];
    if workgroups[1] as u64 > limits.max_groups as u64 {
        return Err(limit(GpuLimit::IndexRange, format!("{count} words need more workgroups than the grid holds")));
    }
    program.dispatches.push(Dispatch { params: p, workgroups, input: bound_in, output: bound_out });
    Ok(program)
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
    let request = PadRequest::new(begins.chain(ends).collect()).max_output_bytes(plan.max_output_bytes());
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
    Program::new(&slice, &read, grad_in, limits)
}
