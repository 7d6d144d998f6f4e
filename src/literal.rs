//! Parsing a scalar of any type from text, for constants given on a command line.

use crate::dtype::DataType;
use crate::error::{PadError, Result};
use crate::tensor::Tensor;

fn bad(dtype: DataType, text: &str, why: &str) -> PadError {
    PadError::ConstantValue { reason: format!("{text:?} is not a {dtype} value: {why}") }
}

fn float(text: &str) -> Option<f64> {
    match text.trim().to_ascii_lowercase().as_str() {
        "nan" => Some(f64::NAN),
        "-nan" => Some(-f64::NAN),
        "inf" | "+inf" | "infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        t => t.parse().ok(),
    }
}

/// The value of one bit pattern of an 8-bit or 4-bit float type, or `None` for NaN.
pub(crate) fn small_float_value(dtype: DataType, bits: u8) -> Option<f64> {
    use DataType::*;
    // (exponent bits, mantissa bits, bias, NaN test, has infinities)
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

/// Parses `text` as one element of `dtype`, returning a scalar tensor.
///
/// Integers must fit the type; floats accept `nan` and `inf`; complex takes `re,im` (or
/// `re`); bool takes `true`/`false`/`1`/`0`; strings are taken as they are. Float8 and
/// float4 literals must be exactly representable, or given as raw bits in hex (`0x7e`).
///
/// ```
/// use wgpu_pad::{literal::parse_value, DataType};
/// assert_eq!(parse_value(DataType::Int8, "-3").unwrap().bytes().unwrap(), &[0xfd]);
/// assert_eq!(parse_value(DataType::Float8e4m3fn, "1.5").unwrap().bytes().unwrap(), &[0x3c]);
/// assert!(parse_value(DataType::Uint8, "300").is_err());
/// ```
pub fn parse_value(dtype: DataType, text: &str) -> Result<Tensor> {
    use DataType::*;
    let t = text.trim();
    let int = |min: i128, max: i128| -> Result<i128> {
        let v: i128 =
            t.parse().map_err(|_| match t.trim_start_matches(['-', '+']).bytes().all(|b| b.is_ascii_digit()) {
                true if !t.is_empty() => bad(dtype, text, &format!("outside {min}..={max}")),
                _ => bad(dtype, text, "not an integer"),
            })?;
        if v < min || v > max {
            return Err(bad(dtype, text, &format!("outside {min}..={max}")));
        }
        Ok(v)
    };
    let f = || float(t).ok_or_else(|| bad(dtype, text, "not a number"));
    // A finite literal must stay finite and, if not zero, not zero: silently padding with
    // inf (70000 as float16) or 0 (1e-30 as float16) is not what was asked. `inf`, `-inf`
    // and `nan` say so themselves.
    let fits = |v: f64, got: f64, max: f64| -> Result<()> {
        if v.is_finite() && !got.is_finite() {
            return Err(bad(dtype, text, &format!("out of range: the largest finite {dtype} is {max:e}")));
        }
        if v != 0.0 && v.is_finite() && got == 0.0 {
            return Err(bad(dtype, text, &format!("too small: it rounds to 0 in {dtype}")));
        }
        Ok(())
    };
    let f16 = |v: f64| -> Result<half::f16> {
        let got = half::f16::from_f64(v);
        fits(v, got.to_f64(), half::f16::MAX.to_f64()).map(|()| got)
    };
    let bf16 = |v: f64| -> Result<half::bf16> {
        let got = half::bf16::from_f64(v);
        fits(v, got.to_f64(), half::bf16::MAX.to_f64()).map(|()| got)
    };
    let f32_ = |v: f64| -> Result<f32> { fits(v, v as f32 as f64, f32::MAX as f64).map(|()| v as f32) };
    let bytes: Vec<u8> = match dtype {
        String => return Tensor::from_strings(vec![], vec![text.to_string()]),
        Bool => match t {
            "true" | "True" | "1" => vec![1],
            "false" | "False" | "0" => vec![0],
            _ => return Err(bad(dtype, text, "expected true or false")),
        },
        Int8 => (int(i8::MIN as i128, i8::MAX as i128)? as i8).to_le_bytes().to_vec(),
        Int16 => (int(i16::MIN as i128, i16::MAX as i128)? as i16).to_le_bytes().to_vec(),
        Int32 => (int(i32::MIN as i128, i32::MAX as i128)? as i32).to_le_bytes().to_vec(),
        Int64 => (int(i64::MIN as i128, i64::MAX as i128)? as i64).to_le_bytes().to_vec(),
        Uint8 => (int(0, u8::MAX as i128)? as u8).to_le_bytes().to_vec(),
        Uint16 => (int(0, u16::MAX as i128)? as u16).to_le_bytes().to_vec(),
        Uint32 => (int(0, u32::MAX as i128)? as u32).to_le_bytes().to_vec(),
        Uint64 => (int(0, u64::MAX as i128)? as u64).to_le_bytes().to_vec(),
        Int4 => vec![(int(-8, 7)? as u8) & 0x0f],
        Uint4 => vec![int(0, 15)? as u8],
        Float16 => f16(f()?)?.to_le_bytes().to_vec(),
        Bfloat16 => bf16(f()?)?.to_le_bytes().to_vec(),
        Float32 => f32_(f()?)?.to_le_bytes().to_vec(),
        Float64 => f()?.to_le_bytes().to_vec(),
        Complex64 | Complex128 => {
            let mut parts = t.trim_matches(|c| c == '(' || c == ')').split(',');
            let re = parts.next().and_then(float).ok_or_else(|| bad(dtype, text, "expected re,im"))?;
            let im = match parts.next() {
                Some(p) => float(p).ok_or_else(|| bad(dtype, text, "expected re,im"))?,
                None => 0.0,
            };
            if parts.next().is_some() {
                return Err(bad(dtype, text, "expected re,im"));
            }
            if dtype == Complex64 {
                [f32_(re)?.to_le_bytes(), f32_(im)?.to_le_bytes()].concat()
            } else {
                [re.to_le_bytes(), im.to_le_bytes()].concat()
            }
        }
        Float8e4m3fn | Float8e4m3fnuz | Float8e5m2 | Float8e5m2fnuz | Float8e8m0 | Float4e2m1 => {
            let bits = if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                let b = u8::from_str_radix(hex, 16).map_err(|_| bad(dtype, text, "bad hex bits"))?;
                if dtype == Float4e2m1 && b > 0x0f {
                    return Err(bad(dtype, text, "float4e2m1 has 4 bits"));
                }
                b
            } else {
                let v = f()?;
                let patterns = if dtype == Float4e2m1 { 0..=15u8 } else { 0..=255u8 };
                let found = patterns.into_iter().find(|&b| match small_float_value(dtype, b) {
                    None => v.is_nan(),
                    Some(x) => x == v && x.is_sign_negative() == v.is_sign_negative(),
                });
                found.ok_or_else(|| bad(dtype, text, "not exactly representable; give the bits as 0xNN"))?
            };
            vec![bits]
        }
    };
    Tensor::from_bytes(dtype, vec![], bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(dtype: DataType, text: &str) -> Vec<u8> {
        parse_value(dtype, text).unwrap().bytes().unwrap().to_vec()
    }

    #[test]
    fn literals() {
        assert_eq!(bits(DataType::Float32, "nan"), f32::NAN.to_le_bytes());
        assert_eq!(bits(DataType::Float16, "-inf"), half::f16::NEG_INFINITY.to_le_bytes());
        assert_eq!(bits(DataType::Complex64, "1,-2"), [1f32.to_le_bytes(), (-2f32).to_le_bytes()].concat());
        assert_eq!(bits(DataType::Bool, "true"), [1]);
        assert_eq!(bits(DataType::Int4, "-1"), [0x0f]);
        assert_eq!(bits(DataType::Float4e2m1, "-6"), [0x0f]);
        assert_eq!(bits(DataType::Float8e5m2, "-inf"), [0xfc]);
        assert_eq!(bits(DataType::Float8e8m0, "1"), [127]);
        assert_eq!(bits(DataType::Float8e4m3fnuz, "0x80"), [0x80]);
        assert_eq!(bits(DataType::Float8e4m3fn, "448"), [0x7e]);
        assert!(parse_value(DataType::Float8e4m3fn, "0.3").is_err());
        // Finite literals that would overflow to inf or round to 0 are refused; inf is said.
        for (dtype, text, why) in [
            (DataType::Float32, "1e40", "out of range"),
            (DataType::Float16, "70000", "out of range"),
            (DataType::Bfloat16, "-1e39", "out of range"),
            (DataType::Float16, "1e-30", "rounds to 0"),
            (DataType::Float32, "1e-50", "rounds to 0"),
            (DataType::Complex64, "1,1e40", "out of range"),
            (DataType::Uint8, "256", "outside 0..=255"),
            (DataType::Int64, "99999999999999999999", "outside"),
            (DataType::Int8, "1.5", "not an integer"),
        ] {
            let e = parse_value(dtype, text).unwrap_err().to_string();
            assert!(e.contains(why), "{dtype} {text}: {e}");
        }
        assert_eq!(bits(DataType::Float16, "65504"), half::f16::MAX.to_le_bytes());
        assert_eq!(bits(DataType::Float32, "inf"), f32::INFINITY.to_le_bytes());
        assert_eq!(bits(DataType::Float16, "0"), [0, 0]);
        assert_eq!(bits(DataType::Float16, "-0"), half::f16::NEG_ZERO.to_le_bytes());
        assert!(parse_value(DataType::Int64, "9223372036854775808").is_err());
        assert!(parse_value(DataType::Bool, "yes").is_err());
        assert_eq!(parse_value(DataType::String, "pad").unwrap().strings().unwrap(), &["pad".to_string()]);
    }
}
