//! A pad's constant: as a request gives it ([`ConstantValue`]: an element, or a number as
//! [`Scalar`]), and as a plan holds it ([`Constant`]: one element's bits); and the one rule
//! that turns a number into an element of a data type, shared by the engine API and the
//! command line's literals.

use crate::dtype::{DataType, ElementWidth};
use crate::error::{PadError, Result};
use crate::tensor::{element_count, Tensor, TensorData};

/// A pad constant given as a number, converted to the input's type when the plan is built
/// (what an engine has: Burn, PyTorch and numpy pass a Python or Rust number, not an element
/// of the tensor's type).
///
/// The rule, the same as for the command line's `--value`:
///
/// - **Integer types** (int4 … int64, uint4 … uint64): the value must be a whole number
///   inside the type's range (a `Float` such as `3.0` is fine; `2.5`, `NaN`, `300` for
///   uint8 are refused). [`Scalar::Int`] and [`Scalar::Uint`] are exact for 64-bit values
///   that an `f64` cannot hold.
/// - **Float types** (float16, bfloat16, float32, float64, complex with imaginary part 0, the
///   float8s and float4e2m1): rounded once, from the `f64`, to the nearest value, ties to
///   even, as numpy and ml_dtypes convert; refused where a finite value would become
///   infinite or NaN, or lies past the largest finite value's rounding boundary (70000 as
///   float16, 500 as float8e4m3fn, 7 as float4e2m1, which ml_dtypes saturates to 6), or
///   where a non-zero one would become zero (1e-30 as float16). NaN and ±infinity pass as
///   they are where the type has them.
/// - **bool**: 0 or 1 (or a [`Scalar::Bool`]).
/// - **string**: refused; give a one-element string [`Tensor`] instead.
///
/// ```
/// use wgpu_pad::{DataType, PadPlan, PadRequest, Scalar};
/// // An f64 constant for a float16 tensor, an exact one for an int64 tensor.
/// let req = PadRequest::from_pairs(&[(1, 1)]).constant(1.5);
/// assert!(PadPlan::new(DataType::Float16, &[4], &req).is_ok());
/// let req = PadRequest::from_pairs(&[(1, 1)]).constant(Scalar::Int(i64::MAX));
/// assert!(PadPlan::new(DataType::Int64, &[4], &req).is_ok());
/// // Refused where it does not fit, naming the value and the type.
/// let req = PadRequest::from_pairs(&[(1, 1)]).constant(300);
/// let err = PadPlan::new(DataType::Uint8, &[4], &req).unwrap_err();
/// assert!(err.to_string().contains("300 is not a uint8 value: outside 0..=255"), "{err}");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// A real number.
    Float(f64),
    /// A signed integer, exact.
    Int(i64),
    /// An unsigned integer, exact.
    Uint(u64),
    /// A truth value (1 or 0 for numeric types).
    Bool(bool),
}

macro_rules! scalar_from {
    ($variant:ident: $($t:ty),*) => {$(
        impl From<$t> for Scalar {
            fn from(v: $t) -> Scalar {
                Scalar::$variant(v.into())
            }
        }
    )*};
}
scalar_from!(Float: f64, f32, half::f16, half::bf16);
scalar_from!(Int: i64, i32, i16, i8);
scalar_from!(Uint: u64, u32, u16, u8);
scalar_from!(Bool: bool);

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // Shortest round-tripping digits; an exponent where plain digits would be long
            // (1e40, not forty digits; 1e-50, not fifty).
            Scalar::Float(v) if v.is_finite() && *v != 0.0 && (v.abs() >= 1e16 || v.abs() < 1e-5) => {
                write!(f, "{v:e}")
            }
            Scalar::Float(v) => write!(f, "{v}"),
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::Uint(v) => write!(f, "{v}"),
            Scalar::Bool(v) => write!(f, "{v}"),
        }
    }
}

impl Scalar {
    /// The value as a scalar tensor of `dtype`, by the rule above.
    pub fn to_tensor(self, dtype: DataType) -> Result<Tensor> {
        let shown = self.to_string();
        let number = match self {
            Scalar::Float(v) => Number::Float(v),
            Scalar::Int(v) => Number::Int(v.into()),
            Scalar::Uint(v) => Number::Int(v.into()),
            Scalar::Bool(v) => Number::Int(v.into()),
        };
        let bytes = match dtype {
            DataType::String => return Err(bad(dtype, &shown, "a number is not a string; give a string tensor")),
            DataType::Bool => match number {
                Number::Int(0) => vec![0],
                Number::Int(1) => vec![1],
                Number::Float(0.0) => vec![0], // -0.0 too: float patterns compare with ==
                Number::Float(1.0) => vec![1],
                _ => return Err(bad(dtype, &shown, "expected 0 or 1")),
            },
            DataType::Complex64 | DataType::Complex128 => complex_bytes(dtype, number.as_f64(), 0.0, &shown)?,
            _ => number_bytes(dtype, number, &shown)?,
        };
        Tensor::from_bytes(dtype, vec![], bytes)
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

/// A number on its way to an element: an integer kept exact, or a real.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Number {
    Int(i128),
    Float(f64),
}

impl Number {
    fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(v) => v,
        }
    }
}

/// The error for a value (`shown` as the caller wrote it) that is not an element of `dtype`.
pub(crate) fn bad(dtype: DataType, shown: &str, why: &str) -> PadError {
    // "an int32", "a uint8" (said "you-int"): the article by how the type's name is said.
    let article = if dtype.name().starts_with('i') { "an" } else { "a" };
    PadError::ConstantValue { reason: format!("{shown} is not {article} {dtype} value: {why}") }
}

/// A whole number in `min..=max`.
fn whole(dtype: DataType, n: Number, min: i128, max: i128, shown: &str) -> Result<i128> {
    let v = match n {
        Number::Int(i) => i,
        Number::Float(v) if v.is_finite() && v.fract() == 0.0 => v as i128,
        Number::Float(_) => return Err(bad(dtype, shown, "not an integer")),
    };
    if v < min || v > max {
        return Err(bad(dtype, shown, &format!("outside {min}..={max}")));
    }
    Ok(v)
}

/// A finite value must stay finite and, if not zero, not zero: silently padding with inf
/// (70000 as float16) or 0 (1e-30 as float16) is not what was asked. NaN and ±inf say so
/// themselves.
fn fits(dtype: DataType, v: f64, got: f64, max: f64, shown: &str) -> Result<()> {
    if v.is_finite() && !got.is_finite() {
        return Err(bad(dtype, shown, &format!("out of range: the largest finite {dtype} is {max:e}")));
    }
    if v != 0.0 && v.is_finite() && got == 0.0 {
        return Err(bad(dtype, shown, &format!("too small: it rounds to 0 in {dtype}")));
    }
    Ok(())
}

fn f32_bits(dtype: DataType, v: f64, shown: &str) -> Result<[u8; 4]> {
    fits(dtype, v, v as f32 as f64, f32::MAX as f64, shown).map(|()| (v as f32).to_le_bytes())
}

/// A complex element: two float32 or two float64.
pub(crate) fn complex_bytes(dtype: DataType, re: f64, im: f64, shown: &str) -> Result<Vec<u8>> {
    Ok(if dtype == DataType::Complex64 {
        [f32_bits(dtype, re, shown)?, f32_bits(dtype, im, shown)?].concat()
    } else {
        [re.to_le_bytes(), im.to_le_bytes()].concat()
    })
}

/// The element of an integer or real `dtype` (not bool, string or complex) for `n`.
pub(crate) fn number_bytes(dtype: DataType, n: Number, shown: &str) -> Result<Vec<u8>> {
    use DataType::*;
    let int = |min: i128, max: i128| whole(dtype, n, min, max, shown);
    Ok(match dtype {
        Int8 => (int(i8::MIN.into(), i8::MAX.into())? as i8).to_le_bytes().to_vec(),
        Int16 => (int(i16::MIN.into(), i16::MAX.into())? as i16).to_le_bytes().to_vec(),
        Int32 => (int(i32::MIN.into(), i32::MAX.into())? as i32).to_le_bytes().to_vec(),
        Int64 => (int(i64::MIN.into(), i64::MAX.into())? as i64).to_le_bytes().to_vec(),
        Uint8 => (int(0, u8::MAX.into())? as u8).to_le_bytes().to_vec(),
        Uint16 => (int(0, u16::MAX.into())? as u16).to_le_bytes().to_vec(),
        Uint32 => (int(0, u32::MAX.into())? as u32).to_le_bytes().to_vec(),
        Uint64 => (int(0, u64::MAX.into())? as u64).to_le_bytes().to_vec(),
        Int4 => vec![(int(-8, 7)? as u8) & 0x0f],
        Uint4 => vec![int(0, 15)? as u8],
        Float16 => {
            // Rounded once, from the f64, to nearest-even (half's own conversion rounds through
            // f32, twice); the result is a float16 value, which half then converts exactly.
            let (v, got) = (n.as_f64(), round_to_format(n.as_f64(), 5, 10));
            fits(dtype, v, got, half::f16::MAX.to_f64(), shown)?;
            half::f16::from_f64(got).to_le_bytes().to_vec()
        }
        Bfloat16 => {
            let (v, got) = (n.as_f64(), round_to_format(n.as_f64(), 8, 7));
            fits(dtype, v, got, half::bf16::MAX.to_f64(), shown)?;
            half::bf16::from_f64(got).to_le_bytes().to_vec()
        }
        Float32 => f32_bits(dtype, n.as_f64(), shown)?.to_vec(),
        Float64 => n.as_f64().to_le_bytes().to_vec(),
        Float8e4m3fn | Float8e4m3fnuz | Float8e5m2 | Float8e5m2fnuz | Float8e8m0 | Float4e2m1 => {
            vec![small_float_bits(dtype, n.as_f64(), shown)?]
        }
        Bool | String | Complex64 | Complex128 => unreachable!("number_bytes is not called for {dtype}"),
    })
}

/// `v` rounded once to nearest-even in a binary format of `exp_bits` exponent bits and
/// `man_bits` mantissa bits (IEEE layout: subnormals, bias 2^(exp_bits-1) - 1), as an f64;
/// ±inf past the largest finite value's rounding boundary. NaN and ±inf stay as they are.
pub(crate) fn round_to_format(v: f64, exp_bits: u32, man_bits: u32) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    let bias = (1i32 << (exp_bits - 1)) - 1;
    let min_exp = 1 - bias; // of the smallest normal
                            // The exponent of |v| (floor of log2), from its bits: exact for normal f64s; an f64
                            // subnormal is far below any of these formats' subnormals and rounds to 0 here anyway.
    let e = ((v.abs().to_bits() >> 52) as i32 - 1023).max(min_exp);
    let ulp = 2f64.powi(e - man_bits as i32);
    let q = (v.abs() / ulp).round_ties_even();
    let rounded = (q * ulp).copysign(v);
    let max_exp = bias; // of the largest finite value
    let max = (2.0 - 2f64.powi(-(man_bits as i32))) * 2f64.powi(max_exp);
    if rounded.abs() > max {
        f64::INFINITY.copysign(v)
    } else {
        rounded
    }
}

/// The bits of the 8- or 4-bit float nearest to `v`, ties to the even pattern (the one whose
/// last mantissa bit is 0), as ml_dtypes converts; NaN to the type's NaN, ±inf to the type's
/// inf where it has one. Refused as out of range where `v` lies past the largest finite
/// value's rounding boundary (the type has no inf, or it would become one), and where a
/// non-zero `v` rounds to zero.
fn small_float_bits(dtype: DataType, v: f64, shown: &str) -> Result<u8> {
    let patterns: Vec<u8> = if dtype == DataType::Float4e2m1 { (0..=15).collect() } else { (0..=255).collect() };
    if v.is_nan() {
        let nan = patterns.iter().copied().find(|&b| small_float_value(dtype, b).is_none());
        return nan.ok_or_else(|| bad(dtype, shown, "the type has no NaN"));
    }
    let finite: Vec<(u8, f64)> = patterns
        .iter()
        .filter_map(|&b| small_float_value(dtype, b).map(|x| (b, x)))
        .filter(|p| p.1.is_finite())
        .collect();
    if v.is_infinite() {
        let inf = patterns.iter().copied().find(|&b| small_float_value(dtype, b) == Some(v));
        return inf.ok_or_else(|| bad(dtype, shown, "the type has no infinity"));
    }
    let max = finite.iter().map(|p| p.1).fold(0.0, f64::max);
    // The rounding boundary above the largest finite value: half its spacing to the next.
    let below_max = finite.iter().map(|p| p.1).filter(|&x| x < max).fold(f64::MIN, f64::max);
    let boundary = if dtype == DataType::Float8e8m0 { max * 1.5 } else { max + (max - below_max) / 2.0 };
    // At the boundary itself the tie goes to the largest finite value where its pattern is
    // even (float8e4m3fn's 448), else past it.
    let max_is_even = finite.iter().any(|&(b, x)| x == max && b & 1 == 0);
    if v.abs() > boundary || (v.abs() == boundary && !max_is_even) {
        return Err(bad(dtype, shown, &format!("out of range: the largest finite {dtype} is {max:e}")));
    }
    let same_sign = |x: f64| x == 0.0 || x.is_sign_negative() == v.is_sign_negative();
    let mut best: Option<(u8, f64)> = None;
    for &(b, x) in finite.iter().filter(|p| same_sign(p.1) || dtype == DataType::Float8e8m0) {
        let d = (x - v).abs();
        best = match best {
            None => Some((b, x)),
            Some((bb, bx)) => {
                let bd = (bx - v).abs();
                // Nearer wins; a tie goes to the even pattern; among equal values (±0), the
                // one with v's sign.
                let better = d < bd
                    || (d == bd && x != bx && b & 1 == 0 && bb & 1 == 1)
                    || (d == bd
                        && x == bx
                        && x.is_sign_negative() == v.is_sign_negative()
                        && bx.is_sign_negative() != v.is_sign_negative());
                if better {
                    Some((b, x))
                } else {
                    Some((bb, bx))
                }
            }
        };
    }
    let (bits, x) = best.ok_or_else(|| bad(dtype, shown, "no finite value"))?;
    if v != 0.0 && x == 0.0 {
        return Err(bad(dtype, shown, &format!("too small: it rounds to 0 in {dtype}")));
    }
    Ok(bits)
}

/// The value of a float type's bytes (little-endian, as [`number_bytes`] writes them), or
/// `None` for NaN and non-float types.
#[cfg_attr(not(feature = "literal"), allow(dead_code))] // literal's parser uses it
pub(crate) fn float_value(dtype: DataType, bytes: &[u8]) -> Option<f64> {
    use DataType::*;
    let v = match (dtype, bytes) {
        (Float16, &[a, b]) => half::f16::from_le_bytes([a, b]).to_f64(),
        (Bfloat16, &[a, b]) => half::bf16::from_le_bytes([a, b]).to_f64(),
        (Float32, &[a, b, c, d]) => f32::from_le_bytes([a, b, c, d]) as f64,
        (Float64, b) => f64::from_le_bytes(b.try_into().ok()?),
        (_, &[b]) => small_float_value(dtype, b)?,
        _ => return None,
    };
    (!v.is_nan()).then_some(v)
}

/// The value of one bit pattern of an 8-bit or 4-bit float type, or `None` for NaN.
pub(crate) fn small_float_value(dtype: DataType, bits: u8) -> Option<f64> {
    use DataType::*;
    // (exponent bits, mantissa bits, bias)
    let (e_bits, m_bits, bias): (u32, u32, i32) = match dtype {
        Float8e4m3fn => (4, 3, 7),
        Float8e4m3fnuz => (4, 3, 8),
        Float8e5m2 => (5, 2, 15),
        Float8e5m2fnuz => (5, 2, 16),
        Float4e2m1 => (2, 1, 1),
        Float8e8m0 => return (bits != 0xff).then(|| 2f64.powi(bits as i32 - 127)),
        _ => return None,
    };
    let total = 1 + e_bits + m_bits;
    let sign = (bits >> (total - 1)) & 1 == 1;
    let exp = ((bits >> m_bits) as u32) & ((1 << e_bits) - 1);
    let man = (bits as u32) & ((1 << m_bits) - 1);
    let fnuz = matches!(dtype, Float8e4m3fnuz | Float8e5m2fnuz);
    if fnuz && bits == 0x80 {
        return None;
    }
    if dtype == Float8e4m3fn && exp == 15 && man == 7 {
        return None;
    }
    if dtype == Float8e5m2 && exp == 31 {
        return if man == 0 { Some(if sign { f64::NEG_INFINITY } else { f64::INFINITY }) } else { None };
    }
    let magnitude = if exp == 0 {
        man as f64 / (1u32 << m_bits) as f64 * 2f64.powi(1 - bias)
    } else {
        (1.0 + man as f64 / (1u32 << m_bits) as f64) * 2f64.powi(exp as i32 - bias)
    };
    Some(if sign { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(dtype: DataType, v: impl Into<Scalar>) -> Vec<u8> {
        v.into().to_tensor(dtype).unwrap().bytes().unwrap().to_vec()
    }

    fn refused(dtype: DataType, v: impl Into<Scalar>) -> String {
        v.into().to_tensor(dtype).unwrap_err().to_string()
    }

    #[test]
    fn numbers_become_elements_of_every_type() {
        use DataType::*;
        assert_eq!(bits(Float16, 1.5), half::f16::from_f32(1.5).to_le_bytes());
        assert_eq!(bits(Bfloat16, -2.0f32), half::bf16::from_f32(-2.0).to_le_bytes());
        assert_eq!(bits(Float32, 0.1), 0.1f32.to_le_bytes());
        assert_eq!(bits(Float64, 0.1), 0.1f64.to_le_bytes());
        assert_eq!(bits(Float32, -0.0), (-0.0f32).to_le_bytes(), "negative zero keeps its sign");
        assert_eq!(bits(Float64, -0.0), (-0.0f64).to_le_bytes());
        assert_eq!(bits(Complex64, -0.0), [(-0.0f32).to_le_bytes(), 0f32.to_le_bytes()].concat());
        assert_eq!(bits(Float32, f64::NAN), f32::NAN.to_le_bytes());
        assert_eq!(bits(Float16, f64::NEG_INFINITY), half::f16::NEG_INFINITY.to_le_bytes());
        assert_eq!(bits(Int32, 3.0), 3i32.to_le_bytes());
        assert_eq!(bits(Int32, -7), (-7i32).to_le_bytes());
        assert_eq!(bits(Int64, i64::MIN), i64::MIN.to_le_bytes());
        assert_eq!(bits(Uint64, u64::MAX), u64::MAX.to_le_bytes());
        assert_eq!(bits(Uint8, 255u8), [255]);
        assert_eq!(bits(Int4, -1), [0x0f]);
        assert_eq!(bits(Uint4, 15), [0x0f]);
        assert_eq!(bits(Bool, 1.0), [1]);
        assert_eq!(bits(Bool, true), [1]);
        assert_eq!(bits(Bool, 0), [0]);
        assert_eq!(bits(Float8e4m3fn, 448.0), [0x7e]);
        assert_eq!(bits(Float4e2m1, -6), [0x0f]);
        assert_eq!(bits(Float8e8m0, 1.0), [127]);
        assert_eq!(bits(Complex64, 2.0), [2f32.to_le_bytes(), 0f32.to_le_bytes()].concat());
        assert_eq!(bits(Float32, true), 1f32.to_le_bytes());
        // An f64 cannot hold 2^63 - 1; the exact form can.
        assert_eq!(bits(Int64, i64::MAX - 1), (i64::MAX - 1).to_le_bytes());
    }

    #[test]
    fn numbers_that_do_not_fit_are_refused_with_the_value_and_the_type() {
        use DataType::*;
        for (err, want) in [
            (refused(Uint8, 300), "300 is not a uint8 value: outside 0..=255"),
            (refused(Uint8, -1), "-1 is not a uint8 value: outside 0..=255"),
            (refused(Int32, 2.5), "2.5 is not an int32 value: not an integer"),
            (refused(Int32, f64::NAN), "NaN is not an int32 value: not an integer"),
            (refused(Float32, 1e40), "1e40 is not a float32 value: out of range"),
            (refused(Float32, 1e-50), "1e-50 is not a float32 value: too small"),
            (refused(Int64, 1e19), "outside"),
            (refused(Float16, 70000.0), "70000 is not a float16 value: out of range"),
            (refused(Float16, 1e-30), "rounds to 0"),
            (refused(Float32, 1e40), "out of range"),
            (refused(Bool, 2), "2 is not a bool value: expected 0 or 1"),
            (refused(Float8e4m3fn, 500.0), "out of range: the largest finite float8e4m3fn is 4.48e2"),
            (refused(Float8e4m3fn, f64::INFINITY), "no infinity"),
            (refused(String, 1.0), "not a string"),
        ] {
            assert!(err.contains(want), "{err:?} should contain {want:?}");
        }
    }

    /// Round four: every float type rounds once, from the f64, to nearest-even, as numpy
    /// (float16) and ml_dtypes (bfloat16, the float8s, float4e2m1) convert: ties, the
    /// largest finite value's rounding boundary, subnormal boundaries, and the refusals.
    /// The cases and the bits numpy 2 and ml_dtypes printed: `rounding_cases.txt`.
    #[test]
    fn floats_round_once_to_nearest_even_as_numpy_and_ml_dtypes_do() {
        let mut count = 0;
        for line in include_str!("rounding_cases.txt").lines().filter(|l| !l.starts_with('#')) {
            let [dtype, v, expected] = line.split(' ').collect::<Vec<_>>()[..] else {
                panic!("not a case: {line:?}");
            };
            let dtype = DataType::from_name(dtype).unwrap_or_else(|| panic!("no type {dtype:?}"));
            let v: f64 = v.parse().unwrap_or_else(|_| panic!("not a number: {v:?}"));
            let expected = match expected {
                "refused" => None,
                bits => Some(u16::from_str_radix(bits.trim_start_matches("0x"), 16).unwrap()),
            };
            let got = number_bytes(dtype, Number::Float(v), "v").ok().map(|b| match b.len() {
                2 => u16::from_le_bytes([b[0], b[1]]),
                _ => u16::from(b[0]),
            });
            assert_eq!(got, expected, "{dtype} {v:e}");
            count += 1;
        }
        assert_eq!(count, 280, "cases read from rounding_cases.txt");
    }
}
