//! The validated, normalised pad plan that every path executes.
//!
//! A [`PadRequest`] (pads, axes, mode, constant) is checked against an input's type and
//! shape once, in [`PadPlan::new`], following `docs/SEMANTICS.md` sections 1 and 2. The plan
//! then describes each axis as an [`AxisMap`]: crop `[s, s + n')` of the input, add `p`
//! before and `q` after. The CPU and GPU paths only read plans.

use std::fmt;
use std::str::FromStr;

use crate::dtype::{DataType, ElementWidth};
use crate::error::{PadError, Result};
use crate::scalar::Scalar;
use crate::tensor::{element_count, Tensor, TensorData};

/// How padded elements are filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// The constant value (default zero).
    #[default]
    Constant,
    /// Mirror without repeating the edge: `3 2 | 1 2 3 | 2 1`.
    Reflect,
    /// Repeat the edge element: `1 1 | 1 2 3 | 3 3`.
    Edge,
    /// Wrap around: `2 3 | 1 2 3 | 1 2`.
    Wrap,
    /// Mirror repeating the edge: `2 1 | 1 2 3 | 3 2`.
    Symmetric,
}

impl Mode {
    /// Every mode.
    pub const ALL: [Mode; 5] = [Mode::Constant, Mode::Reflect, Mode::Edge, Mode::Wrap, Mode::Symmetric];

    /// The mode's name as ONNX and OpenVINO spell it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Constant => "constant",
            Mode::Reflect => "reflect",
            Mode::Edge => "edge",
            Mode::Wrap => "wrap",
            Mode::Symmetric => "symmetric",
        }
    }

    /// Whether pads longer than one period repeat the period (reflect, wrap, symmetric);
    /// constant and edge pads are the same however long.
    pub fn is_periodic(self) -> bool {
        matches!(self, Mode::Reflect | Mode::Wrap | Mode::Symmetric)
    }

    /// The period of this mode's pads along an axis of `kept` elements: `n` for wrap,
    /// `2n - 2` for reflect (1 where `n` is 1), `2n` for symmetric; 1 for constant and edge,
    /// and for an axis with nothing kept.
    pub fn period(self, kept: u64) -> u64 {
        period(self, kept).max(1)
    }

    /// The longest pad one pass over the kept elements gives without repeating the period:
    /// `n - 1` for reflect (the edge is not repeated), `n` otherwise. Longer pads take
    /// several periods (the GPU path's `multi_period` shaders).
    pub fn one_bounce_limit(self, kept: u64) -> u64 {
        match self {
            Mode::Reflect => kept.saturating_sub(1),
            _ => kept,
        }
    }

    /// What the mode does with the kept elements, for messages.
    pub(crate) fn verb(self) -> &'static str {
        match self {
            Mode::Constant => "pad",
            Mode::Reflect => "reflect",
            Mode::Edge => "repeat",
            Mode::Wrap => "wrap",
            Mode::Symmetric => "mirror",
        }
    }
}

/// [`Mode::period`] in any wide enough integer (`source_index` works in i64 and i128), for
/// `n >= 1`.
fn period<T>(mode: Mode, n: T) -> T
where
    T: Copy + Ord + From<u8> + std::ops::Sub<Output = T> + std::ops::Mul<Output = T>,
{
    let (one, two) = (T::from(1), T::from(2));
    match mode {
        Mode::Wrap => n,
        Mode::Reflect if n > one => two * (n - one),
        Mode::Symmetric => two * n,
        _ => one,
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = PadError;
    /// Parses a mode name, case-sensitively.
    fn from_str(s: &str) -> Result<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| PadError::InvalidMode { mode: s.to_string() })
    }
}

/// The source position for position `j` relative to a kept range of length `kept`
/// (`j` runs from `-p` to `kept + q - 1`): `Some(index in 0..kept)`, or `None` where the
/// constant goes. This is the per-mode index function of `docs/SEMANTICS.md` section 2.
pub fn source_index(mode: Mode, j: i64, kept: u64) -> Option<u64> {
    // i64 suffices unless the period 2n or the offset could overflow it; i128 is a library
    // call on most targets and this runs once per padded row on the CPU path.
    if kept < 1 << 60 && j.unsigned_abs() < 1 << 60 {
        return extend(mode, j, kept as i64).map(|k| k as u64);
    }
    extend(mode, j as i128, kept as i128).map(|k| k as u64)
}

/// `f(j)` of docs/SEMANTICS.md section 2 for a kept length `n`, in any wide enough integer.
fn extend<T>(mode: Mode, j: T, n: T) -> Option<T>
where
    T: Copy + Ord + From<u8> + std::ops::Sub<Output = T> + std::ops::Mul<Output = T> + RemEuclid,
{
    let (zero, one) = (T::from(0), T::from(1));
    if zero <= j && j < n {
        return Some(j);
    }
    if n == zero {
        return None;
    }
    Some(match mode {
        Mode::Constant => return None,
        Mode::Edge => j.clamp(zero, n - one),
        Mode::Wrap => j.rem_euclid_(n),
        Mode::Reflect if n == one => zero,
        Mode::Reflect => {
            let period = period(mode, n);
            let k = j.rem_euclid_(period);
            if k < n {
                k
            } else {
                period - k
            }
        }
        Mode::Symmetric => {
            let period = period(mode, n);
            let k = j.rem_euclid_(period);
            if k < n {
                k
            } else {
                period - one - k
            }
        }
    })
}

/// `rem_euclid` for the integer types `extend` runs on.
trait RemEuclid {
    fn rem_euclid_(self, n: Self) -> Self;
}

impl RemEuclid for i64 {
    fn rem_euclid_(self, n: i64) -> i64 {
        self.rem_euclid(n)
    }
}

impl RemEuclid for i128 {
    fn rem_euclid_(self, n: i128) -> i128 {
        self.rem_euclid(n)
    }
}

/// The constant's bits: one element of the plan's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Constant {
    /// One element's little-endian bytes; for 4-bit types one byte holding the nibble.
    Bytes(Vec<u8>),
    /// The string.
    String(String),
}

impl Constant {
    /// Zero of the type: all-zero bits, `false`, or the empty string; for float8e8m0,
    /// which has no zero, 0.0 converted to it: its NaN, `0xFF` (as the conformance corpus,
    /// after ml_dtypes, expects).
    pub fn zero(dtype: DataType) -> Constant {
        if dtype == DataType::Float8e8m0 {
            return Constant::Bytes(vec![0xff]);
        }
        match dtype.width() {
            ElementWidth::String => Constant::String(String::new()),
            ElementWidth::Bits4 => Constant::Bytes(vec![0]),
            w => Constant::Bytes(vec![0; w.bytes().unwrap_or(1)]),
        }
    }

    /// Takes the constant from a one-element tensor of type `dtype` (any shape with one
    /// element: `[]`, `[1]`, `[1, 1]`, ...).
    pub fn from_tensor(value: &Tensor, dtype: DataType) -> Result<Constant> {
        if value.dtype() != dtype {
            return Err(PadError::ConstantValue {
                reason: format!("type {} does not match the input's type {dtype}", value.dtype()),
            });
        }
        if element_count(value.shape()) != Some(1) {
            return Err(PadError::ConstantValue {
                reason: format!("shape {:?} has {} elements, expected exactly 1", value.shape(), value.len()),
            });
        }
        Ok(match value.data() {
            TensorData::Strings(s) => Constant::String(s[0].clone()),
            TensorData::Bytes(b) if dtype.width() == ElementWidth::Bits4 => Constant::Bytes(vec![b[0] & 0x0f]),
            TensorData::Bytes(b) => Constant::Bytes(b.clone()),
        })
    }
}

/// A pad's constant as a request gives it: an element of the input's type, or a number
/// to convert to it.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstantValue {
    /// A one-element tensor (any shape with one element) of exactly the input's type.
    Tensor(Tensor),
    /// A number, converted to the input's type when the plan is built (see [`Scalar`]).
    Scalar(Scalar),
}

impl From<Tensor> for ConstantValue {
    fn from(v: Tensor) -> ConstantValue {
        ConstantValue::Tensor(v)
    }
}

macro_rules! constant_from_number {
    ($($t:ty),*) => {$(
        impl From<$t> for ConstantValue {
            fn from(v: $t) -> ConstantValue {
                ConstantValue::Scalar(v.into())
            }
        }
    )*};
}
constant_from_number!(Scalar, f64, f32, half::f16, half::bf16, i64, i32, i16, i8, u64, u32, u16, u8, bool);

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
    /// Refuse plans whose output would exceed this many bytes (strings count 24 bytes each).
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

    /// Sets the constant value: a one-element [`Tensor`] of the input's type, or a number
    /// ([`Scalar`], or any Rust number or `bool`) converted to the input's type by the rule
    /// [`Scalar`] states.
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
/// and `pad_after` elements.
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
    pub fn fields(&self) -> [usize; 6] {
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
    max_output_bytes: u64,
}

impl PadPlan {
    /// Validates `request` against an input of type `dtype` and shape `in_shape`.
    ///
    /// Errors, in this order: axis out of range, repeated axis, pads length, negative
    /// output dimension, output too large, constant value, empty axis (a non-constant mode
    /// with nothing left to extend on an axis it must fill).
    pub fn new(dtype: DataType, in_shape: &[usize], request: &PadRequest) -> Result<PadPlan> {
        let rank = in_shape.len();
        if element_count(in_shape).is_none_or(|n| usize::try_from(n).is_err()) {
            return Err(PadError::TooLarge { what: format!("input shape {in_shape:?} has more than 2^64 elements") });
        }
        let (begins, ends) = per_axis_pads(rank, &request.pads, request.axes.as_deref())?;

        let mut out_shape = Vec::with_capacity(rank);
        for axis in 0..rank {
            let (n, b, e) = (in_shape[axis], begins[axis], ends[axis]);
            let out = n as i128 + b as i128 + e as i128;
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
                return Err(PadError::TooLarge {
                    what: format!(
                        "output shape {out_shape:?} of {dtype} needs {} bytes, over the limit of {} (max_output_bytes)",
                        out_bytes.map_or("more than 2^64".to_string(), |b| b.to_string()),
                        request.max_output_bytes
                    ),
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
            let (n, b, e) = (in_shape[axis] as i128, begins[axis] as i128, ends[axis] as i128);
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

/// Expands pads (and axes) to a begin and an end for every axis.
fn per_axis_pads(rank: usize, pads: &[i64], axes: Option<&[i64]>) -> Result<(Vec<i64>, Vec<i64>)> {
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
    Ok((begins, ends))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(shape: &[usize], pads: &[i64], mode: Mode) -> Result<PadPlan> {
        PadPlan::new(DataType::Float32, shape, &PadRequest::new(pads.to_vec()).mode(mode))
    }

    #[test]
    fn periods_and_bounces_match_the_index_function() {
        for mode in Mode::ALL {
            for n in 1..8u64 {
                let (p, b) = (mode.period(n) as i64, mode.one_bounce_limit(n) as i64);
                let source = |j: i64| source_index(mode, j, n);
                if mode.is_periodic() {
                    assert!((-40..40).all(|j| source(j) == source(j + p)), "{mode} n={n}: period {p}");
                    if n >= 2 {
                        let shorter = (1..p).find(|q| (-40..40).all(|j| source(j) == source(j + q)));
                        assert_eq!(shorter, None, "{mode} n={n}: a period shorter than {p}");
                    }
                    // Pads up to the bounce limit walk the kept elements one way (a mirror
                    // away from the edge, wrap towards it); the next step turns or jumps.
                    let step = if mode == Mode::Wrap { -1 } else { 1 };
                    let diff = |k: i64| source(-(k + 1)).unwrap() as i64 - source(-k).unwrap() as i64;
                    assert!((1..b).all(|k| diff(k) == step), "{mode} n={n}: bounce limit {b}");
                    if b > 0 {
                        assert_ne!(diff(b), step, "{mode} n={n}: bounce limit {b} not tight");
                    }
                } else {
                    assert_eq!(p, 1, "{mode}");
                }
            }
        }
    }

    #[test]
    fn index_functions_match_numpy_examples() {
        // numpy.pad([1, 2, 3], 4, mode) on positions -4..7, as source indices.
        let expect = |mode, want: [u64; 11]| {
            let got: Vec<u64> = (-4..7).map(|j| source_index(mode, j, 3).unwrap()).collect();
            assert_eq!(got, want, "{mode}");
        };
        expect(Mode::Reflect, [0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2]);
        expect(Mode::Symmetric, [2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0]);
        expect(Mode::Wrap, [2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
        expect(Mode::Edge, [0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 2]);
        assert_eq!(source_index(Mode::Constant, -1, 3), None);
        assert_eq!(source_index(Mode::Reflect, 5, 1), Some(0));
        assert_eq!(source_index(Mode::Wrap, i64::MIN, 7), Some((i64::MIN as i128).rem_euclid(7) as u64));
        assert_eq!(source_index(Mode::Reflect, -(1 << 61), u64::MAX / 2), Some(1 << 61));
        // The i64 and i128 paths agree.
        for mode in Mode::ALL {
            for n in 0..7i64 {
                for j in -30..30i64 {
                    let wide = extend(mode, j as i128, n as i128).map(|k| k as u64);
                    assert_eq!(source_index(mode, j, n as u64), wide, "{mode} j={j} n={n}");
                }
            }
        }
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
