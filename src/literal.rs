//! Parsing a scalar of any type from text, for constants given on a command line.

use crate::constant::{bad, complex_bytes, float_value, number_bytes, Number};
use crate::dtype::DataType;
use crate::error::Result;
use crate::tensor::Tensor;

fn float(text: &str) -> Option<f64> {
    match text.trim().to_ascii_lowercase().as_str() {
        "nan" => Some(f64::NAN),
        "-nan" => Some(-f64::NAN),
        "inf" | "+inf" | "infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        t => t.parse().ok(),
    }
}

/// Why a finite literal did not survive parsing as an f64: past its range (Rust parses
/// `1e400` as infinity) or a non-zero one below it (`1e-400` as 0).
fn past_f64(text: &str, v: f64) -> Option<&'static str> {
    let t = text.trim().to_ascii_lowercase();
    let spelled_inf = matches!(t.trim_start_matches(['+', '-']), "inf" | "infinity");
    let mantissa = t.split('e').next().unwrap_or("");
    let nonzero = mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b));
    if v.is_infinite() && !spelled_inf {
        Some("out of range: past float64's, and so past any type's")
    } else if v == 0.0 && nonzero {
        Some("too small: it rounds to 0 in float64, and so in any type")
    } else {
        None
    }
}

/// The bytes of the `dtype` value nearest the decimal `text`, rounded once from the decimal
/// (ties to even), given `v`, the f64 nearest it. Rounding `v` again is the same wherever `v`
/// is not exactly on one of the type's rounding boundaries (a boundary is exact in f64, so
/// `text` lies on `v`'s side of it); on one, `v` may have rounded `text` onto it from either
/// side, and an exact comparison of `text` with `v` decides.
fn rounded_once(dtype: DataType, text: &str, v: f64, shown: &str) -> Result<Vec<u8>> {
    let at = |x: f64| number_bytes(dtype, Number::Float(x), shown);
    if dtype == DataType::Float64 || !v.is_finite() || v == 0.0 {
        return at(v);
    }
    let (below, above) = (at(v.next_down()), at(v.next_up()));
    let value = |b: &Result<Vec<u8>>| b.as_ref().ok().and_then(|b| float_value(dtype, b));
    let on_boundary = match (value(&below), value(&above)) {
        (Some(a), Some(b)) => a != b && (a + b) / 2.0 == v,
        // Past the largest finite value on one side: v is within an f64 step of the boundary
        // past which values are refused; the comparison puts text on its side.
        (Some(_), None) | (None, Some(_)) => true,
        (None, None) => false,
    };
    if !on_boundary {
        return at(v);
    }
    match compare_decimal(text, v) {
        Some(std::cmp::Ordering::Less) if below.is_ok() => below,
        Some(std::cmp::Ordering::Greater) if above.is_ok() => above,
        _ => at(v),
    }
}

/// A decimal's sign, significant digits (no leading or trailing zeros) and exponent, its
/// value being `0.DIGITS × 10^exponent`; `None` if `text` is not a plain decimal.
fn decimal(text: &str) -> Option<(bool, Vec<u8>, i64)> {
    let t = text.trim();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i64>().ok()?),
        None => (t, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty() || !(whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit())) {
        return None;
    }
    let digits: Vec<u8> = whole.bytes().chain(fraction.bytes()).map(|b| b - b'0').collect();
    let leading = digits.iter().take_while(|&&d| d == 0).count();
    let mut significant = digits[leading..].to_vec();
    while significant.last() == Some(&0) {
        significant.pop();
    }
    let exponent = exponent.checked_add(whole.len() as i64 - leading as i64)?;
    Some((negative, significant, exponent))
}

/// How the decimal `text` compares with `v` exactly (`v`'s exact decimal expansion, which
/// Rust's formatting gives at enough digits: an f64 has at most 767 significant ones).
fn compare_decimal(text: &str, v: f64) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    let (neg_a, da, ea) = decimal(text)?;
    let (neg_b, db, eb) = decimal(&format!("{v:.800e}"))?;
    let magnitude = match (da.is_empty(), db.is_empty()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => ea.cmp(&eb).then_with(|| da.cmp(&db)),
    };
    Some(match (neg_a && !da.is_empty(), neg_b && !db.is_empty()) {
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
    })
}

/// Parses `text` as one element of `dtype`, returning a scalar tensor.
///
/// Integers must fit the type; floats accept `nan` and `inf`; complex takes `re,im` (or
/// `re`); bool takes `true`/`false`/`1`/`0`; strings are taken as they are. Floats round
/// once, from the decimal, to the nearest value, ties to even (float8 and float4 also take raw bits in hex, `0x7e`);
/// literals past float64's own range (`1e400`) are refused as past any type's, not taken as
/// infinity, and non-zero ones below it (`1e-400`) as rounding to 0.
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
    let shown = format!("{text:?}");
    let bad = |why: &str| bad(dtype, &shown, why);
    let real = |t: &str| {
        let v = float(t).ok_or_else(|| bad("not a number"))?;
        past_f64(t, v).map_or(Ok(v), |why| Err(bad(why)))
    };
    let bytes: Vec<u8> = match dtype {
        String => return Tensor::from_strings(vec![], vec![text.to_string()]),
        Bool => match t {
            "true" | "True" | "1" => vec![1],
            "false" | "False" | "0" => vec![0],
            _ => return Err(bad("expected true or false")),
        },
        Complex64 | Complex128 => {
            let mut parts = t.trim_matches(|c| c == '(' || c == ')').split(',');
            let part = |p: &str| {
                let v = float(p).ok_or_else(|| bad("expected re,im"))?;
                past_f64(p, v).map_or(Ok(v), |why| Err(bad(why)))
            };
            let (re_text, im_text) = (parts.next().unwrap_or(""), parts.next());
            let re = part(re_text)?;
            let im = match im_text {
                Some(p) => part(p)?,
                None => 0.0,
            };
            if parts.next().is_some() {
                return Err(bad("expected re,im"));
            }
            match dtype {
                // Each float32 part rounded once from its decimal, as a float32 is.
                // (A part refused: complex_bytes says why, naming the complex type.)
                Complex64 => match (
                    rounded_once(Float32, re_text, re, &shown),
                    rounded_once(Float32, im_text.unwrap_or("0"), im, &shown),
                ) {
                    (Ok(re), Ok(im)) => [re, im].concat(),
                    _ => complex_bytes(dtype, re, im, &shown)?,
                },
                _ => complex_bytes(dtype, re, im, &shown)?,
            }
        }
        Float8e4m3fn | Float8e4m3fnuz | Float8e5m2 | Float8e5m2fnuz | Float8e8m0 | Float4e2m1
            if t.starts_with("0x") || t.starts_with("0X") =>
        {
            let b = u8::from_str_radix(&t[2..], 16).map_err(|_| bad("bad hex bits"))?;
            if dtype == Float4e2m1 && b > 0x0f {
                return Err(bad("float4e2m1 has 4 bits"));
            }
            vec![b]
        }
        Float16 | Bfloat16 | Float32 | Float64 | Float8e4m3fn | Float8e4m3fnuz | Float8e5m2 | Float8e5m2fnuz
        | Float8e8m0 | Float4e2m1 => rounded_once(dtype, t, real(t)?, &shown)?,
        // Integers are read as integers (exact, and "1.5" or "1e3" is not one).
        Int4 | Int8 | Int16 | Int32 | Int64 | Uint4 | Uint8 | Uint16 | Uint32 | Uint64 => {
            let v: i128 = t.parse().map_err(|_| {
                match !t.is_empty() && t.trim_start_matches(['-', '+']).bytes().all(|b| b.is_ascii_digit()) {
                    // All digits, yet not an i128: far outside every integer type.
                    true => bad("outside the type's range"),
                    false => bad("not an integer"),
                }
            })?;
            number_bytes(dtype, Number::Int(v), &shown)?
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

    /// Round six: a float is rounded once, from the decimal, not through the f64 nearest it
    /// (which can land exactly on the type's rounding boundary from either side).
    #[test]
    fn floats_round_once_from_the_decimal() {
        let f16 = |t: &str| u16::from_le_bytes(bits(DataType::Float16, t).try_into().unwrap());
        assert_eq!(f16("1.00048828125000000001"), 0x3c01); // just past the midpoint
        assert_eq!(f16("1.00048828125"), 0x3c00); // the midpoint: ties to even
        assert_eq!(f16("1.00048828124999999999"), 0x3c00);
        assert_eq!(f16("-1.00048828125000000001"), 0xbc01);
        assert_eq!(f16("1.00146484375000000001"), 0x3c02); // a midpoint whose tie goes up
        assert_eq!(f16("1.00146484374999999999"), 0x3c01);
        let f32 = |t: &str| u32::from_le_bytes(bits(DataType::Float32, t).try_into().unwrap());
        assert_eq!(f32("1.00000005960464477539062500001"), 0x3f80_0001);
        assert_eq!(f32("1.000000059604644775390625"), 0x3f80_0000);
        // Below float32's overflow boundary (340282356779733661637539395458142568448): MAX.
        assert_eq!(f32("3.4028235677973366e38"), f32::MAX.to_bits());
        assert!(parse_value(DataType::Float32, "340282356779733661637539395458142568448").is_err());
        let bf16 = |t: &str| u16::from_le_bytes(bits(DataType::Bfloat16, t).try_into().unwrap());
        assert_eq!(bf16("1.00390625000000000001"), 0x3f81);
        assert_eq!(bf16("1.00390625"), 0x3f80);
        assert_eq!(bits(DataType::Float8e4m3fn, "1.06250000000000000001"), [0x39]);
        assert_eq!(bits(DataType::Float8e4m3fn, "1.0625"), [0x38]);
        let c = bits(DataType::Complex64, "1.00000005960464477539062500001,-1.00000005960464477539062500001");
        assert_eq!(c, [0x3f80_0001u32.to_le_bytes(), 0xbf80_0001u32.to_le_bytes()].concat());
        // The exact comparison itself.
        use std::cmp::Ordering::*;
        assert_eq!(compare_decimal("0.1", 0.1), Some(Less)); // 0.1 in f64 is 0.1000000000000000055...
        assert_eq!(compare_decimal("-0.5", -0.5), Some(Equal));
        assert_eq!(compare_decimal("+5e-1", 0.5), Some(Equal));
        assert_eq!(compare_decimal("-0.50001", -0.5), Some(Less));
        assert_eq!(compare_decimal("1e2", 99.5), Some(Greater));
        assert_eq!(compare_decimal("abc", 1.0), None);
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
        // Rounded to nearest-even: 0.3 lies between 0.28125 (0x29) and 0.3125 (0x2a).
        assert_eq!(bits(DataType::Float8e4m3fn, "0.3"), [0x2a]);
        assert_eq!(bits(DataType::Float16, "1.000488281250001"), [0x01, 0x3c]);
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
            // Past float64's own range: refused for every float type alike, not taken as inf.
            (DataType::Float64, "1e400", "past float64's"),
            (DataType::Float16, "-1e999", "past float64's"),
            (DataType::Float32, "1e-400", "rounds to 0 in float64"),
            (DataType::Complex128, "1e400,0", "past float64's"),
            (DataType::Complex128, "0,-1e-400", "rounds to 0"),
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
