//! The checks of a buffer view, before any layout: strides against the shape, alignment,
//! bounds, and an output that would write an element twice.

use crate::error::{PadError, Result, Side};

/// A byte range `[start, end)` of a buffer.
pub(crate) type Span = (u64, u64);

/// A view with the side it is, for messages.
#[derive(Debug, Clone)]
pub(crate) struct View<'a> {
    pub which: Side,
    pub offset: u64,
    pub strides: Option<&'a [u64]>,
    pub end: u64,
    pub buffer_size: u64,
}

pub(crate) fn dense_strides(shape: &[usize]) -> Vec<u64> {
    let mut strides = vec![1u64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1] as u64);
    }
    strides
}

pub(crate) fn invalid(which: Side, reason: String) -> PadError {
    PadError::InvalidView { which, reason }
}

/// The view's strides, checked against the shape, and the byte range it covers.
pub(crate) fn view_strides(v: &View, shape: &[usize], elem: u64) -> Result<(Vec<u64>, Option<Span>)> {
    let strides = match v.strides {
        Some(s) if s.len() != shape.len() => {
            return Err(invalid(
                v.which,
                format!("{} strides given for {} axes (shape {shape:?})", s.len(), shape.len()),
            ))
        }
        Some(s) => s.to_vec(),
        None => dense_strides(shape),
    };
    if !v.offset.is_multiple_of(elem) {
        return Err(PadError::MisalignedOffset { which: v.which, offset: v.offset, alignment: elem });
    }
    if shape.contains(&0) {
        return Ok((strides, None));
    }
    let mut last = 0u128;
    for (axis, (&n, &s)) in shape.iter().zip(&strides).enumerate() {
        last += (n as u128 - 1) * s as u128;
        if last >= 1 << 62 {
            return Err(invalid(
                v.which,
                format!("axis {axis}: length {n} with stride {s} reaches past 2^62 elements"),
            ));
        }
    }
    let end = v.offset as u128 + (last + 1) * elem as u128;
    if end > v.end as u128 {
        return Err(PadError::BufferTooSmall {
            which: v.which,
            needed: (end - v.offset as u128) as u64,
            offset: v.offset,
            size: v.buffer_size,
        });
    }
    Ok((strides, Some((v.offset, end as u64))))
}

/// Refuses an output view that writes some element twice: ordered by stride, each axis
/// must step past everything the axes inside it cover.
pub(crate) fn check_no_self_overlap(shape: &[usize], strides: &[u64]) -> Result<()> {
    let mut axes: Vec<(u64, usize, usize)> =
        shape.iter().zip(strides).enumerate().filter(|(_, (&n, _))| n > 1).map(|(i, (&n, &s))| (s, n, i)).collect();
    axes.sort();
    let mut covered = 1u128; // elements spanned by the axes so far, plus one
    for (s, n, axis) in axes {
        if (s as u128) < covered {
            return Err(invalid(
                Side::Output,
                format!(
                    "axis {axis} (length {n}) has stride {s}, which overlaps the {covered} elements the axes inside it span: each output element must have its own place"
                ),
            ));
        }
        covered += s as u128 * (n as u128 - 1);
    }
    Ok(())
}
