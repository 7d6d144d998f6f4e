//! The validated, normalised pad plan that every path executes.
//!
//! A [`PadRequest`] (pads, axes, mode, constant) is checked against an input's type and
//! shape once, in [`PadPlan::new`]. The plan then describes each axis as an [`AxisMap`]: crop `[s, s + n')` of the input, add `p`
//! before and `q` after. The CPU and GPU paths only read plans.

use crate::constant::{Constant, ConstantValue};
use crate::dtype::{DataType, ElementWidth};
use crate::error::{PadError, Result};
use crate::mode::{source_index, Mode};
use crate::tensor::{element_count, Tensor};

/// Default cap on a plan's output size: 8 GiB. Raise it with [`PadRequest::max_output_bytes`].
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 8 << 30;

/// A pad as asked for, before validation: pads (begins then ends), optional axes, mode,
/// optional constant value.
///
/// ```
/// use wgpu_pad::{DataType, Mode, PadPlan, PadRequest};
/// let req = PadRequest::new(vec![1, -1]).mode(Mode::Reflect);
/// let plan = PadPlan::new(DataType::Float32, &[5], &req).unwrap();
/// assert_eq!(plan.out_shape(), &[5]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PadRequest {
    /// `[b_1 … b_k, e_1 … e_k]`, signed.
    pub pads: Vec<i64>,
    /// The axes the pads apply to; `None` for all.
    pub axes: Option<Vec<i64>>,
    /// The mode.
    pub mode: Mode,
    /// The constant value; `None` for zero.
    pub constant: Option<ConstantValue>,
    /// Interior padding (JAX's `lax.pad`, StableHLO's `pad`): per padded axis, that many
    /// constants between each pair of neighbours, in the order of `axes` (or every axis);
    /// `None` for none. Constant mode only. ONNX's forms never set it.
    pub interior: Option<Vec<i64>>,
    /// Refuse plans whose output would exceed this many bytes (strings count their
    /// `String` values, `size_of::<String>()` bytes each, and their contents).
    pub max_output_bytes: u64,
}

impl PadRequest {
    /// A constant pad of zero with these pads over all axes.
    pub fn new(pads: Vec<i64>) -> PadRequest {
        PadRequest {
            pads,
            axes: None,
            mode: Mode::Constant,
            constant: None,
            interior: None,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
        }
    }

    /// Sets the mode.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the axes the pads apply to.
    pub fn axes(mut self, axes: Vec<i64>) -> Self {
        self.axes = Some(axes);
        self
    }

    /// Pads from one `(before, after)` pair per axis, as Burn, PyTorch's `F.pad` (reversed)
    /// and numpy's `pad_width` give them; negative values crop. Axes may still be narrowed
    /// with [`axes`](Self::axes), one pair per axis named.
    ///
    /// ```
    /// use wgpu_pad::PadRequest;
    /// assert_eq!(PadRequest::from_pairs(&[(1, 2), (0, -1)]).pads, vec![1, 0, 2, -1]);
    /// ```
    pub fn from_pairs(pairs: &[(i64, i64)]) -> PadRequest {
        let (begins, ends): (Vec<i64>, Vec<i64>) = pairs.iter().copied().unzip();
        PadRequest::new([begins, ends].concat())
    }

    /// Sets the interior padding: one count per padded axis (as `axes` names them, or every
    /// axis), each that many constants between neighbours. An axis of length `d` becomes
    /// `begin + end + d + (d - 1) * interior` (`begin + end` where `d` is 0); negative begins
    /// and ends crop the dilated axis.
    ///
    /// ```
    /// use wgpu_pad::{cpu, DataType, PadPlan, PadRequest, Tensor};
    /// let x = Tensor::from_slice(DataType::Int32, vec![3], &[1i32, 2, 3]).unwrap();
    /// let plan = PadPlan::new(x.dtype(), x.shape(), &PadRequest::new(vec![1, -1]).interior(vec![2])).unwrap();
    /// assert_eq!(cpu::pad(&plan, &x).unwrap().as_slice::<i32>().unwrap(), &[0, 1, 0, 0, 2, 0, 0]);
    /// ```
    pub fn interior(mut self, interior: Vec<i64>) -> Self {
        self.interior = Some(interior);
        self
    }

    /// A constant pad from JAX's `lax.pad` padding config: one `(low, high, interior)` per
    /// axis. `lax.pad(x, v, [(1, 1, 1), (0, -1, 0)])` is
    /// `PadRequest::from_padding_config(&[(1, 1, 1), (0, -1, 0)]).constant(v)`.
    ///
    /// ```
    /// use wgpu_pad::PadRequest;
    /// let r = PadRequest::from_padding_config(&[(1, 2, 1), (0, -1, 0)]);
    /// assert_eq!((r.pads, r.interior), (vec![1, 0, 2, -1], Some(vec![1, 0])));
    /// ```
    pub fn from_padding_config(config: &[(i64, i64, i64)]) -> PadRequest {
        let pairs: Vec<(i64, i64)> = config.iter().map(|&(low, high, _)| (low, high)).collect();
        PadRequest::from_pairs(&pairs).interior(config.iter().map(|c| c.2).collect())
    }

    /// Sets the constant value: a one-element [`Tensor`] of the input's type, or a number
    /// ([`Scalar`](crate::Scalar), or any Rust number or `bool`) converted to the input's
    /// type by the rule [`Scalar`](crate::Scalar) states.
    pub fn constant(mut self, value: impl Into<ConstantValue>) -> Self {
        self.constant = Some(value.into());
        self
    }

    /// Sets the output size cap.
    pub fn max_output_bytes(mut self, bytes: u64) -> Self {
        self.max_output_bytes = bytes;
        self
    }
}

/// One axis of a plan: keep input `[crop_start, crop_start + kept)`, then add `pad_before`
/// and `pad_after` elements. In a plan with interior padding, the input is the axis after
/// dilation (see [`PadPlan::interior`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisMap {
    /// Input length `n`.
    pub in_len: usize,
    /// Output length `m = p + n' + q`.
    pub out_len: usize,
    /// First kept input index `s`.
    pub crop_start: usize,
    /// Kept length `n'`.
    pub kept: usize,
    /// Elements added before, `p`.
    pub pad_before: usize,
    /// Elements added after, `q`.
    pub pad_after: usize,
}

impl AxisMap {
    pub(crate) fn identity(len: usize) -> AxisMap {
        AxisMap { in_len: len, out_len: len, crop_start: 0, kept: len, pad_before: 0, pad_after: 0 }
    }

    /// True if the axis is neither cropped nor padded.
    pub fn is_identity(&self) -> bool {
        self.in_len == self.out_len && self.kept == self.in_len && self.pad_before == 0
    }

    /// The input index feeding output index `o`, or `None` for the constant.
    pub fn source(&self, mode: Mode, o: usize) -> Option<usize> {
        source_index(mode, o as i64 - self.pad_before as i64, self.kept as u64).map(|k| self.crop_start + k as usize)
    }

    /// Every length and offset of the axis, as an array.
    pub(crate) fn fields(&self) -> [usize; 6] {
        [self.in_len, self.out_len, self.crop_start, self.kept, self.pad_before, self.pad_after]
    }

    /// The axis with `f` applied to every length and offset (to change its unit).
    pub(crate) fn map_fields(&self, f: impl Fn(usize) -> usize) -> AxisMap {
        AxisMap {
            in_len: f(self.in_len),
            out_len: f(self.out_len),
            crop_start: f(self.crop_start),
            kept: f(self.kept),
            pad_before: f(self.pad_before),
            pad_after: f(self.pad_after),
        }
    }
}

/// A plan with adjacent axes merged where that changes nothing, so paths loop over as few
/// axes as possible. `chunk` consecutive elements move as one unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoldedPlan {
    /// The merged axes, outermost first; never empty.
    pub axes: Vec<AxisMap>,
    /// Elements per unit (the trailing unpadded axes, when folded into the unit).
    pub chunk: usize,
}

/// A validated, normalised pad: what every path executes.
#[derive(Debug, Clone, PartialEq)]
pub struct PadPlan {
    dtype: DataType,
    mode: Mode,
    in_shape: Vec<usize>,
    out_shape: Vec<usize>,
    begins: Vec<i64>,
    ends: Vec<i64>,
    axes: Vec<AxisMap>,
    constant: Constant,
    interior: Vec<usize>,
    max_output_bytes: u64,
}

impl PadPlan {
    /// Validates `request` against an input of type `dtype` and shape `in_shape`.
    ///
    /// Errors, in this order: axis out of range, repeated axis, pads length, interior
    /// padding (its length, a negative count, a mode other than constant), negative output
    /// dimension, output too large, constant value, empty axis (a non-constant mode with
    /// nothing left to extend on an axis it must fill).
    pub fn new(dtype: DataType, in_shape: &[usize], request: &PadRequest) -> Result<PadPlan> {
        let rank = in_shape.len();
        if element_count(in_shape).is_none_or(|n| usize::try_from(n).is_err()) {
            return Err(PadError::TooLarge { what: format!("input shape {in_shape:?} has more than 2^64 elements") });
        }
        let (begins, ends, padded_axes) = per_axis_pads(rank, &request.pads, request.axes.as_deref())?;
        let interior = per_axis_interior(rank, &padded_axes, request)?;

        // Each axis as the edge pads see it: dilated by its interior count first.
        let mut dilated = Vec::with_capacity(rank);
        for axis in 0..rank {
            let (n, k) = (in_shape[axis] as u128, interior[axis] as u128);
            let len = if n == 0 { 0 } else { n + (n - 1) * k };
            dilated.push(usize::try_from(len).map_err(|_| PadError::TooLarge {
                what: format!("axis {axis}: {n} elements with interior padding {k} give {len}, past usize"),
            })?);
        }

        let mut out_shape = Vec::with_capacity(rank);
        for axis in 0..rank {
            let (n, b, e) = (dilated[axis], begins[axis], ends[axis]);
            let out = n as i128 + b as i128 + e as i128;
            if out < 0 && interior[axis] > 0 {
                return Err(PadError::Interior {
                    interior: request.interior.clone().unwrap_or_default(),
                    reason: format!(
                        "axis {axis}: input length {} dilated to {n}, with pads begin {b}, end {e}, gives output \
                         length {out} < 0",
                        in_shape[axis]
                    ),
                });
            }
            if out < 0 {
                return Err(PadError::NegativeOutputDim { axis, len: n as u64, begin: b, end: e, out });
            }
            let out = usize::try_from(out).map_err(|_| PadError::TooLarge {
                what: format!("axis {axis}: output length {out} (input {n}, pads {b}, {e}) does not fit in usize"),
            })?;
            out_shape.push(out);
        }
        let out_count = element_count(&out_shape).ok_or_else(|| PadError::TooLarge {
            what: format!("output shape {out_shape:?} has more than 2^64 elements"),
        })?;
        let elem_bytes: u64 = match dtype.width() {
            // What each string holds besides its contents; the CPU path counts those as it pads.
            ElementWidth::String => std::mem::size_of::<String>() as u64,
            w => w.bytes().unwrap_or(1) as u64,
        };
        let out_bytes = match dtype.width() {
            ElementWidth::Bits4 => Some(out_count.div_ceil(2)),
            _ => out_count.checked_mul(elem_bytes),
        };
        match out_bytes {
            Some(b) if b <= request.max_output_bytes => {}
            _ => {
                return Err(PadError::OutputLimit {
                    what: format!(
                        "output shape {out_shape:?} of {dtype} needs {} bytes",
                        out_bytes.map_or("more than 2^64".to_string(), |b| b.to_string()),
                    ),
                    limit: request.max_output_bytes,
                })
            }
        }

        let constant = match &request.constant {
            Some(ConstantValue::Tensor(v)) => Constant::from_tensor(v, dtype)?,
            Some(ConstantValue::Scalar(v)) => Constant::from_tensor(&v.to_tensor(dtype)?, dtype)?,
            None => Constant::zero(dtype),
        };

        let empty_output = out_shape.contains(&0);
        let mut axes = Vec::with_capacity(rank);
        for axis in 0..rank {
            let (n, b, e) = (dilated[axis] as i128, begins[axis] as i128, ends[axis] as i128);
            let s = (-b).max(0).min(n);
            let t = (n - (-e).max(0)).max(0);
            let kept = (t - s).max(0);
            let out_len = out_shape[axis];
            let mut map = AxisMap {
                in_len: n as usize,
                out_len,
                crop_start: s as usize,
                kept: kept as usize,
                pad_before: b.max(0) as usize,
                pad_after: e.max(0) as usize,
            };
            if kept == 0 {
                // Cropping can remove more than the input has, eating into the padding
                // (n=6, pads 6, -9: output 3): the whole axis is padding then.
                map.crop_start = 0;
                map.pad_before = map.pad_before.min(out_len);
                map.pad_after = out_len - map.pad_before;
            }
            if !empty_output && request.mode != Mode::Constant && map.kept == 0 {
                return Err(PadError::EmptyAxis {
                    mode: request.mode,
                    axis,
                    len: n as u64,
                    cropped: (n - kept) as u64,
                    out: map.out_len as u64,
                });
            }
            axes.push(map);
        }
        Ok(PadPlan {
            dtype,
            mode: request.mode,
            in_shape: in_shape.to_vec(),
            out_shape,
            begins,
            ends,
            axes,
            constant,
            interior,
            max_output_bytes: request.max_output_bytes,
        })
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }
    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// The input's shape.
    pub fn in_shape(&self) -> &[usize] {
        &self.in_shape
    }
    /// The output's shape.
    pub fn out_shape(&self) -> &[usize] {
        &self.out_shape
    }
    /// Signed begin pad per axis (zero for axes not named).
    pub fn begins(&self) -> &[i64] {
        &self.begins
    }
    /// Signed end pad per axis.
    pub fn ends(&self) -> &[i64] {
        &self.ends
    }
    /// Per-axis crop and pad.
    pub fn axes(&self) -> &[AxisMap] {
        &self.axes
    }
    /// Interior padding per axis: that many constants between each pair of neighbours (all
    /// zero unless the request set some). Input element `i` of an axis lands at output
    /// `begin + i * (interior + 1)`.
    pub fn interior(&self) -> &[usize] {
        &self.interior
    }
    /// The input elements of `axis` that survive the crops and where they land, interior
    /// padding included. Panics if `axis` is not below the rank.
    pub fn lattice(&self, axis: usize) -> Lattice {
        lattice(self.in_shape[axis], self.interior[axis], self.begins[axis], self.out_shape[axis])
    }
    /// True if any axis has interior padding.
    pub fn has_interior(&self) -> bool {
        self.interior.iter().any(|&k| k > 0)
    }
    /// The constant (zero of the type unless given; unused by other modes).
    pub fn constant(&self) -> &Constant {
        &self.constant
    }
    /// The cap on what the output may hold, from [`PadRequest::max_output_bytes`]. For
    /// strings the plan checks their own size; the CPU path adds their contents as it pads.
    pub fn max_output_bytes(&self) -> u64 {
        self.max_output_bytes
    }

    /// Number of input elements.
    pub fn in_len(&self) -> usize {
        element_count(&self.in_shape).unwrap_or(0) as usize
    }
    /// Number of output elements.
    pub fn out_len(&self) -> usize {
        element_count(&self.out_shape).unwrap_or(0) as usize
    }
    /// Checks that `input` is what the plan was built for (type and shape).
    pub fn check_input(&self, input: &Tensor) -> Result<()> {
        if input.dtype() != self.dtype || input.shape() != self.in_shape {
            return Err(PadError::InvalidTensor {
                dtype: input.dtype().name(),
                shape: input.shape().iter().map(|&d| d as u64).collect(),
                reason: format!("the plan is for {} of shape {:?}", self.dtype, self.in_shape),
            });
        }
        Ok(())
    }

    /// Bytes of the input and output in this crate's layout (`None` for strings).
    pub fn byte_sizes(&self) -> Option<(u64, u64)> {
        Some((self.dtype.storage_bytes(self.in_len() as u64)?, self.dtype.storage_bytes(self.out_len() as u64)?))
    }

    /// Merges adjacent axes where the result is the same: runs of unpadded axes, and in
    /// constant mode an axis with the unpadded axes inside it. Axes of length one that are
    /// not padded disappear. With `fold_inner`, trailing unpadded axes become the `chunk`.
    /// Meaningful only for non-empty outputs.
    pub(crate) fn folded(&self, fold_inner: bool) -> FoldedPlan {
        if self.out_len() == 0 {
            // Nothing to write; an empty input's other axes may be too long to multiply.
            return FoldedPlan { axes: vec![AxisMap::identity(0)], chunk: 1 };
        }
        let mut axes: Vec<AxisMap> = Vec::with_capacity(self.axes.len());
        for &a in self.axes.iter().filter(|a| !(a.is_identity() && a.in_len == 1)) {
            match axes.last_mut() {
                Some(prev) if prev.is_identity() && a.is_identity() => {
                    *prev = AxisMap::identity(prev.in_len.saturating_mul(a.in_len))
                }
                // Saturating: an empty input's lengths can overflow, and are then never read.
                Some(prev) if self.mode == Mode::Constant && a.is_identity() => {
                    *prev = prev.map_fields(|f| f.saturating_mul(a.in_len))
                }
                _ => axes.push(a),
            }
        }
        if axes.is_empty() {
            axes.push(AxisMap::identity(1));
        }
        let mut chunk = 1;
        if fold_inner && axes.len() > 1 && axes[axes.len() - 1].is_identity() {
            chunk = axes.pop().map_or(1, |a| a.in_len);
        }
        FoldedPlan { axes, chunk }
    }
}

/// The kept part of one axis ([`PadPlan::lattice`]): `count` input elements from index
/// `in_first`, landing at output `out_first`, `out_first + step`, `out_first + 2 step`, … (`step`
/// is interior padding's count plus one; 1 without). Every other output element of the axis is
/// the constant (in constant mode) or the mode's extension of the kept part.
///
/// ```
/// use wgpu_pad::{DataType, Lattice, PadPlan, PadRequest};
/// // [a b c d] by 1 between is a . b . c . d; a crop of 3 before leaves . c . d.
/// let plan = PadPlan::new(DataType::Int8, &[4], &PadRequest::new(vec![-3, 0]).interior(vec![1]))?;
/// assert_eq!(plan.lattice(0), Lattice { in_first: 2, count: 2, out_first: 1, step: 2 });
/// # Ok::<(), wgpu_pad::PadError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lattice {
    /// The first input index kept.
    pub in_first: usize,
    /// How many are kept.
    pub count: usize,
    /// The output index of the first.
    pub out_first: usize,
    /// Output indices between neighbours: the interior count plus one.
    pub step: usize,
}

pub(crate) fn lattice(n: usize, interior: usize, begin: i64, out_len: usize) -> Lattice {
    let (n, step, b, m) = (n as i128, interior as i128 + 1, begin as i128, out_len as i128);
    // The first i with b + i * step >= 0, and one past the last with b + i * step < m.
    let first = if b >= 0 { 0 } else { (-b + step - 1) / step };
    let end = if m - 1 - b < 0 { 0 } else { ((m - 1 - b) / step + 1).min(n) };
    let count = (end - first).max(0);
    let first = if count == 0 { 0 } else { first };
    Lattice {
        in_first: first as usize,
        count: count as usize,
        out_first: (b + first * step).max(0) as usize,
        step: step as usize,
    }
}

/// Expands pads (and axes) to a begin and an end for every axis; also the axes padded, in
/// the order given.
fn per_axis_pads(rank: usize, pads: &[i64], axes: Option<&[i64]>) -> Result<(Vec<i64>, Vec<i64>, Vec<usize>)> {
    let axes: Vec<usize> = match axes {
        None => (0..rank).collect(),
        Some(given) => {
            let mut seen: Vec<Option<usize>> = vec![None; rank];
            let mut out = Vec::with_capacity(given.len());
            for (i, &a) in given.iter().enumerate() {
                let r = rank as i64;
                if a < -r || a >= r {
                    return Err(PadError::AxisOutOfRange { axis: a, rank });
                }
                let axis = if a < 0 { (a + r) as usize } else { a as usize };
                if let Some(first) = seen[axis] {
                    return Err(PadError::RepeatedAxis { axis, first, second: i });
                }
                seen[axis] = Some(i);
                out.push(axis);
            }
            out
        }
    };
    let k = axes.len();
    if pads.len() != 2 * k {
        return Err(PadError::PadsLength {
            len: pads.len(),
            shape: format!("shape [{}]", pads.len()),
            expected: 2 * k,
            axes: k,
        });
    }
    let mut begins = vec![0; rank];
    let mut ends = vec![0; rank];
    for (i, &axis) in axes.iter().enumerate() {
        begins[axis] = pads[i];
        ends[axis] = pads[k + i];
    }
    Ok((begins, ends, axes))
}

/// Expands the request's interior counts (one per padded axis) to one for every axis.
fn per_axis_interior(rank: usize, padded_axes: &[usize], request: &PadRequest) -> Result<Vec<usize>> {
    let mut interior = vec![0; rank];
    let Some(given) = &request.interior else { return Ok(interior) };
    let refuse = |reason: String| PadError::Interior { interior: given.clone(), reason };
    if given.len() != padded_axes.len() {
        return Err(refuse(format!(
            "{} values, expected one for each of the {} axes padded",
            given.len(),
            padded_axes.len()
        )));
    }
    for (&axis, &k) in padded_axes.iter().zip(given) {
        if k < 0 {
            return Err(refuse(format!("axis {axis}: {k} is negative (the count of constants between neighbours)")));
        }
        if k > 0 && request.mode != Mode::Constant {
            return Err(refuse(format!(
                "axis {axis}: {k} with mode {}; interior padding is constant only",
                request.mode
            )));
        }
        interior[axis] = usize::try_from(k).map_err(|_| refuse(format!("axis {axis}: {k} does not fit in usize")))?;
    }
    Ok(interior)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(shape: &[usize], pads: &[i64], mode: Mode) -> Result<PadPlan> {
        PadPlan::new(DataType::Float32, shape, &PadRequest::new(pads.to_vec()).mode(mode))
    }

    #[test]
    fn crop_then_pad() {
        let p = plan(&[5], &[-2, 3], Mode::Reflect).unwrap();
        assert_eq!(p.out_shape(), &[6]);
        let a = p.axes()[0];
        assert_eq!((a.crop_start, a.kept, a.pad_before, a.pad_after), (2, 3, 0, 3));
        assert_eq!((0..6).map(|o| a.source(Mode::Reflect, o).unwrap()).collect::<Vec<_>>(), [2, 3, 4, 3, 2, 3]);
    }

    #[test]
    fn errors_name_axis_and_values() {
        let e = plan(&[4, 4], &[0, -4, 0, 1], Mode::Reflect).unwrap_err();
        assert!(matches!(e, PadError::EmptyAxis { axis: 1, len: 4, cropped: 4, .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "reflect pad on axis 1: nothing left to reflect after cropping 4 of 4 elements (output length 1)"
        );
        let e = plan(&[4, 4], &[0, -3, 0, -2], Mode::Constant).unwrap_err();
        assert!(matches!(e, PadError::NegativeOutputDim { axis: 1, out: -1, .. }), "{e}");
        assert!(e.to_string().contains("axis 1"));
        let e = plan(&[4, 4], &[1, 1], Mode::Constant).unwrap_err();
        assert!(matches!(e, PadError::PadsLength { len: 2, expected: 4, .. }), "{e}");
        let r = PadRequest::new(vec![1, 1, 1, 1]).axes(vec![1, -1]);
        let e = PadPlan::new(DataType::Int8, &[2, 2], &r).unwrap_err();
        assert!(matches!(e, PadError::RepeatedAxis { axis: 1, first: 0, second: 1 }), "{e}");
        let r = PadRequest::new(vec![1, 1]).axes(vec![-3]);
        let e = PadPlan::new(DataType::Int8, &[2, 2], &r).unwrap_err();
        assert!(matches!(e, PadError::AxisOutOfRange { axis: -3, rank: 2 }), "{e}");
        assert!("mirror".parse::<Mode>().is_err());
    }

    #[test]
    fn a_lattice_keeps_what_lands_inside_the_output() {
        // [a b c] by 2 between is a . . b . . c; begin -2 and end 1 make it . b . . c . (6).
        let l = lattice(3, 2, -2, 6);
        assert_eq!(l, Lattice { in_first: 1, count: 2, out_first: 1, step: 3 });
        // Cropped to nothing: the begin crops past the last element.
        assert_eq!(lattice(3, 1, -5, 1).count, 0);
        // An end crop: 0 . 1 . 2 with end -2 keeps 0 and 1.
        assert_eq!(lattice(3, 1, 0, 3), Lattice { in_first: 0, count: 2, out_first: 0, step: 2 });
        // Padded on both sides, nothing cropped.
        assert_eq!(lattice(4, 0, 2, 7), Lattice { in_first: 0, count: 4, out_first: 2, step: 1 });
    }

    #[test]
    fn interior_padding_dilates_then_pads_and_refuses_with_the_axis() {
        let interior = |shape: &[usize], pads: Vec<i64>, k: Vec<i64>, mode: Mode| {
            PadPlan::new(DataType::Int8, shape, &PadRequest::new(pads).interior(k).mode(mode))
        };
        // 4 elements with 2 between are 10 long; -3 and +1 make 8. Axis 1, empty, takes its begin.
        let p = interior(&[4, 0], vec![-3, 1, 1, 0], vec![2, 5], Mode::Constant).unwrap();
        assert_eq!((p.out_shape(), p.interior()), (&[8, 1][..], &[2, 5][..]));
        let a = p.axes()[0];
        assert_eq!((a.in_len, a.crop_start, a.kept, a.pad_after), (10, 3, 7, 1));
        // Named axes take their counts in the order named.
        let r = PadRequest::new(vec![0, 0]).axes(vec![-1]).interior(vec![1]);
        assert_eq!(PadPlan::new(DataType::Int8, &[3, 3], &r).unwrap().interior(), &[0, 1]);
        let e = interior(&[3], vec![0, 0], vec![-1], Mode::Constant).unwrap_err();
        assert_eq!(
            e.to_string(),
            "interior padding [-1]: axis 0: -1 is negative (the count of constants between neighbours)"
        );
        let e = interior(&[3, 3], vec![0, 0, 0, 0], vec![0, 1], Mode::Edge).unwrap_err();
        assert!(e.to_string().contains("axis 1: 1 with mode edge; interior padding is constant only"), "{e}");
        // A count of zero is no interior padding, in any mode.
        assert!(interior(&[3, 3], vec![0, 0, 0, 0], vec![0, 0], Mode::Edge).is_ok());
        let e = interior(&[3, 3], vec![0, 0, 0, 0], vec![1], Mode::Constant).unwrap_err();
        assert!(e.to_string().contains("1 values, expected one for each of the 2 axes padded"), "{e}");
        let e = interior(&[3], vec![-4, -2], vec![1], Mode::Constant).unwrap_err();
        assert!(e.to_string().contains("axis 0: input length 3 dilated to 5, with pads begin -4, end -2"), "{e}");
        let e = interior(&[3], vec![0, 0], vec![i64::MAX], Mode::Constant).unwrap_err();
        assert!(matches!(e, PadError::OutputLimit { .. } | PadError::TooLarge { .. }), "{e}");
        let e = interior(&[1 << 40, 2], vec![0, 0, 0, 0], vec![i64::MAX, 0], Mode::Constant).unwrap_err();
        assert!(matches!(e, PadError::TooLarge { .. }), "{e}");
    }

    #[test]
    fn empty_output_wins_over_empty_axis() {
        let p = plan(&[0, 3], &[0, 1, 0, 1], Mode::Wrap).unwrap();
        assert_eq!(p.out_shape(), &[0, 5]);
        assert!(plan(&[0, 3], &[1, 0, 0, 0], Mode::Wrap).is_err());
        assert!(plan(&[0, 3], &[1, 0, 0, 0], Mode::Constant).is_ok());
    }

    #[test]
    fn huge_pads_are_refused_not_overflowed() {
        let e = plan(&[3], &[i64::MAX, i64::MAX], Mode::Constant).unwrap_err();
        assert!(matches!(e, PadError::TooLarge { .. }), "{e}");
        let p = plan(&[6], &[6, -9], Mode::Constant).unwrap();
        let a = p.axes()[0];
        assert_eq!((a.out_len, a.kept, a.pad_before, a.pad_after), (3, 0, 3, 0));
        let e = plan(&[3], &[i64::MIN, i64::MIN], Mode::Constant).unwrap_err();
        assert!(matches!(e, PadError::NegativeOutputDim { axis: 0, .. }), "{e}");
        let e = plan(&[1 << 20, 1 << 20], &[0, 0, 1 << 20, 0], Mode::Constant).unwrap_err();
        assert!(e.to_string().contains("max_output_bytes"), "{e}");
    }

    #[test]
    fn zero_sized_shapes_with_huge_dims() {
        let p = plan(&[1 << 40, 1 << 40, 0], &[0, 0, 0, 0, 0, 0], Mode::Constant).unwrap();
        assert_eq!((p.in_len(), p.out_len()), (0, 0));
        let e = plan(&[1 << 40, 1 << 40], &[0, 0, 0, 0], Mode::Edge).unwrap_err();
        assert!(matches!(e, PadError::TooLarge { .. }), "{e}");
    }

    #[test]
    fn constant_value_checks() {
        let v = Tensor::from_slice(DataType::Float32, vec![1, 1], &[2.5f32]).unwrap();
        let r = PadRequest::new(vec![1, 1]).constant(v);
        assert!(PadPlan::new(DataType::Float32, &[2], &r).is_ok());
        let e = PadPlan::new(DataType::Int32, &[2], &r).unwrap_err();
        assert!(e.to_string().contains("float32 does not match the input's type int32"), "{e}");
        let v = Tensor::from_slice(DataType::Float32, vec![2], &[1f32, 2.0]).unwrap();
        let e = PadPlan::new(DataType::Float32, &[2], &PadRequest::new(vec![1, 1]).constant(v)).unwrap_err();
        assert!(e.to_string().contains("expected exactly 1"), "{e}");
    }

    #[test]
    fn folding_merges_unpadded_axes() {
        let p = plan(&[1, 64, 8, 8], &[0, 0, 1, 1, 0, 0, 1, 1], Mode::Reflect).unwrap();
        let f = p.folded(true);
        assert_eq!(f.axes.iter().map(|a| a.out_len).collect::<Vec<_>>(), [64, 10, 10]);
        assert_eq!(f.chunk, 1);
        let p = plan(&[2, 3, 4, 5], &[0, 1, 0, 0, 0, 1, 0, 0], Mode::Edge).unwrap();
        let f = p.folded(true);
        assert_eq!(f.axes.iter().map(|a| a.out_len).collect::<Vec<_>>(), [2, 5]);
        assert_eq!(f.chunk, 20);
        let p = plan(&[2, 3, 4, 5], &[0, 1, 0, 0, 0, 1, 0, 0], Mode::Constant).unwrap();
        let f = p.folded(false);
        assert_eq!(f.axes.iter().map(|a| (a.out_len, a.pad_before)).collect::<Vec<_>>(), [(2, 0), (100, 20)]);
    }
}
