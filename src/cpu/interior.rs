//! Interior padding on the CPU (JAX's `lax.pad`): the output filled with the constant, then
//! each input element that survives the crops written at its place, `begin + i * step` on
//! every axis (`step` the interior count plus one), a run at a time where an axis has no
//! interior padding. The gradient is the same walk the other way: each input element reads
//! its one output position (a strided slice), zero where it was cropped.

use std::mem::MaybeUninit;

use crate::copy::{copy_bytes, uninit_ref};
use crate::error::{PadError, Result};
use crate::plan::{Lattice, PadPlan};

/// Calls `run(input, output, len)` for each run of kept input elements that lands on a run of
/// consecutive output elements, in elements, in row-major order of the input. Nothing where
/// nothing is kept.
fn for_each_run(plan: &PadPlan, mut run: impl FnMut(usize, usize, usize)) {
    let (in_shape, out_shape) = (plan.in_shape(), plan.out_shape());
    let lattices: Vec<Lattice> = (0..in_shape.len()).map(|d| plan.lattice(d)).collect();
    if lattices.iter().any(|l| l.count == 0) {
        return;
    }
    // Trailing axes that neither move nor crop become one unit of `chunk` elements.
    let mut axes = lattices.len();
    let mut chunk = 1;
    while axes > 0 {
        let l = lattices[axes - 1];
        if !(l.step == 1 && l.count == in_shape[axes - 1] && l.count == out_shape[axes - 1]) {
            break;
        }
        chunk *= l.count;
        axes -= 1;
    }
    if axes == 0 {
        return run(0, 0, chunk);
    }
    // Element strides of each axis, in the input and the output.
    let mut strides = vec![(chunk, chunk); axes];
    for d in (0..axes - 1).rev() {
        strides[d] = (strides[d + 1].0 * in_shape[d + 1], strides[d + 1].1 * out_shape[d + 1]);
    }
    let last = lattices[axes - 1];
    let (in_stride, out_stride) = strides[axes - 1];
    let mut inner = |i: usize, o: usize| {
        let (i, o) = (i + last.in_first * in_stride, o + last.out_first * out_stride);
        if last.step == 1 {
            run(i, o, last.count * chunk);
        } else {
            for j in 0..last.count {
                run(i + j * in_stride, o + j * last.step * out_stride, chunk);
            }
        }
    };
    // The outer axes as an odometer over their kept indices.
    let outer = &lattices[..axes - 1];
    let mut at = vec![0usize; outer.len()];
    loop {
        let (mut i, mut o) = (0, 0);
        for (d, l) in outer.iter().enumerate() {
            i += (l.in_first + at[d]) * strides[d].0;
            o += (l.out_first + at[d] * l.step) * strides[d].1;
        }
        inner(i, o);
        let mut d = outer.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            at[d] += 1;
            if at[d] < outer[d].count {
                break;
            }
            at[d] = 0;
        }
    }
}

/// Pads elements of `width` bytes: every byte of `output` written.
pub(super) fn pad_fixed(plan: &PadPlan, width: usize, input: &[u8], output: &mut [MaybeUninit<u8>], constant: &[u8]) {
    fill(output, &constant[..width]);
    let input = uninit_ref(input);
    for_each_run(plan, |i, o, len| {
        copy_bytes(&mut output[o * width..(o + len) * width], &input[i * width..(i + len) * width])
    });
}

/// `output` as copies of `pattern`, back to back (its length a multiple of the pattern's).
fn fill(output: &mut [MaybeUninit<u8>], pattern: &[u8]) {
    if pattern.iter().all(|&b| b == pattern[0]) {
        output.fill(MaybeUninit::new(pattern[0]));
        return;
    }
    let Some(first) = output.get_mut(..pattern.len()) else { return };
    first.copy_from_slice(uninit_ref(pattern));
    // Doubling what is written: a copy per power of two, not per element.
    let mut done = pattern.len();
    while done < output.len() {
        let (written, rest) = output.split_at_mut(done);
        let n = done.min(rest.len());
        copy_bytes(&mut rest[..n], &written[..n]);
        done += n;
    }
}

/// Pads strings: `output` (of the output's length) holds the constant everywhere but the
/// kept elements' places. The output's text must fit in `budget` bytes, checked before any is
/// copied.
pub(super) fn pad_strings(
    plan: &PadPlan,
    input: &[String],
    output: &mut [String],
    constant: &str,
    budget: u64,
) -> Result<()> {
    let (mut kept, mut kept_bytes) = (0u64, 0u64);
    for_each_run(plan, |i, _, len| {
        kept += len as u64;
        kept_bytes += input[i..i + len].iter().map(|s| s.len() as u64).sum::<u64>();
    });
    let constant_bytes = (output.len() as u64 - kept).saturating_mul(constant.len() as u64);
    if kept_bytes.saturating_add(constant_bytes) > budget {
        return Err(PadError::TooLarge {
            what: "the output strings hold more than the limit (max_output_bytes)".into(),
        });
    }
    let (mut unlimited, mut error) = (u64::MAX, None);
    super::store::copy_strings(output, std::iter::repeat_n(constant, output.len()), &mut unlimited, &mut error);
    for_each_run(plan, |i, o, len| {
        let (to, from) = (&mut output[o..o + len], &input[i..i + len]);
        super::store::copy_strings(to, from.iter().map(String::as_str), &mut unlimited, &mut error);
    });
    error.map_or(Ok(()), Err)
}

/// The gradient, elements of `width` bytes: each input element's is the output gradient at
/// its place, or zero (+0 in every float and complex type) where it was cropped.
pub(super) fn backward(plan: &PadPlan, width: usize, grad_out: &[u8]) -> Vec<u8> {
    let mut grad_in = vec![0u8; plan.in_len() * width];
    for_each_run(plan, |i, o, len| {
        grad_in[i * width..(i + len) * width].copy_from_slice(&grad_out[o * width..(o + len) * width])
    });
    grad_in
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataType, PadRequest};

    #[test]
    fn runs_cover_every_kept_element_once() {
        // [2, 3, 4] with interior (1, 0, 2) and pads that crop and pad: every run's elements
        // are where the definition puts them, and together they are every kept element.
        let request = PadRequest::new(vec![1, -1, 0, 0, 2, -3]).interior(vec![1, 0, 2]);
        let plan = PadPlan::new(DataType::Float32, &[2, 3, 4], &request).unwrap();
        let mut seen = Vec::new();
        for_each_run(&plan, |i, o, len| seen.extend((0..len).map(|k| (i + k, o + k))));
        let mut expected = Vec::new();
        let out = plan.out_shape();
        for (i, (a, b, c)) in (0..2).flat_map(|a| (0..3).flat_map(move |b| (0..4).map(move |c| (a, b, c)))).enumerate()
        {
            let place = [1 + 2 * a as i64, -1 + b as i64, 3 * c as i64];
            if place.iter().zip(out).all(|(&p, &m)| (0..m as i64).contains(&p)) {
                expected.push((i, (place[0] as usize * out[1] + place[1] as usize) * out[2] + place[2] as usize));
            }
        }
        assert_eq!(seen, expected);
    }

    #[test]
    fn rows_without_interior_padding_move_as_one_run() {
        // Interior padding outside, none on the padded rows: a run a kept row, of its kept part.
        let request = PadRequest::new(vec![0, 0, -1, 1, 0, 2]).interior(vec![1, 0, 0]);
        let plan = PadPlan::new(DataType::Float32, &[2, 3, 5], &request).unwrap();
        let mut runs = Vec::new();
        for_each_run(&plan, |i, o, len| runs.push((i, o, len)));
        let out = plan.out_shape();
        assert_eq!(out, &[4, 3, 6]);
        // Row (a, b) of the input, from its element 1, lands on row (2a, b) of the output.
        let expected: Vec<_> =
            (0..2).flat_map(|a| (0..3).map(move |b| (a * 15 + b * 5 + 1, (2 * a * 3 + b) * 6, 4))).collect();
        assert_eq!(runs, expected);
    }
}
