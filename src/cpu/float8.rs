//! Addition in the float8 types as ml_dtypes has it (`a + b` on two float8 arrays): both
//! widened to f32, added there, and the f32 sum rounded to the type, to nearest with ties to
//! the even pattern. f32 holds more than twice a float8's precision, so rounding twice (to
//! f32, then to the type) gives the correctly rounded sum.

use crate::constant::small_float_value;
use crate::dtype::DataType;

/// One float8 type's values and rounding: what [`Float8::add`] needs, built once a gradient.
pub(crate) struct Float8 {
    /// The value of each bit pattern (NaN for the type's NaNs).
    values: [f32; 256],
    /// The non-negative finite values, ascending, with their patterns (+0 first).
    positives: Vec<(f32, u8)>,
    /// Magnitudes past this round past the largest finite value; at it, too, unless that
    /// value's pattern is even (float8e4m3fn's 448 keeps a tie).
    boundary: f32,
    max_keeps_tie: bool,
    /// What a magnitude past the boundary becomes: the type's infinity where it has one
    /// (float8e5m2), else its NaN.
    overflow: Overflow,
    /// The type's NaN, ml_dtypes' quiet NaN (float8e4m3fn 0x7f, float8e5m2 0x7e, the fnuz
    /// types 0x80, their only NaN), whatever the sign of the f32 NaN it stands for.
    nan: u8,
    /// Whether -0 exists (0x80); the fnuz types have none, and -0 is +0 there.
    negative_zero: bool,
}

enum Overflow {
    Infinity,
    Nan,
}

impl Float8 {
    /// The arithmetic of `dtype`: float8e4m3fn, float8e4m3fnuz, float8e5m2 or float8e5m2fnuz
    /// (not float8e8m0, which has no zero to start a sum from).
    pub(crate) fn new(dtype: DataType) -> Option<Float8> {
        use DataType::*;
        let (nan, negative_zero, overflow) = match dtype {
            Float8e4m3fn => (0x7f, true, Overflow::Nan),
            Float8e5m2 => (0x7e, true, Overflow::Infinity),
            Float8e4m3fnuz | Float8e5m2fnuz => (0x80, false, Overflow::Nan),
            _ => return None,
        };
        let mut values = [f32::NAN; 256];
        let mut positives = Vec::with_capacity(128);
        for bits in 0..=255u8 {
            if let Some(v) = small_float_value(dtype, bits) {
                values[bits as usize] = v as f32; // every float8 value is an f32 value
                if v.is_finite() && v.is_sign_positive() {
                    positives.push((v as f32, bits));
                }
            }
        }
        positives.sort_by(|a, b| a.0.total_cmp(&b.0));
        let [.., (below_max, _), (max, max_bits)] = positives[..] else { return None };
        Some(Float8 {
            values,
            boundary: max + (max - below_max) / 2.0,
            max_keeps_tie: max_bits & 1 == 0,
            positives,
            overflow,
            nan,
            negative_zero,
        })
    }

    /// The magnitude past which [`round`](Self::round) overflows, and whether a value at it
    /// keeps the largest finite value (its pattern even) rather than overflowing.
    pub(crate) fn boundary(&self) -> (f32, bool) {
        (self.boundary, self.max_keeps_tie)
    }

    /// Whether a magnitude past the boundary becomes the type's infinity (float8e5m2), not
    /// its NaN.
    pub(crate) fn overflows_to_infinity(&self) -> bool {
        matches!(self.overflow, Overflow::Infinity)
    }

    /// The type's one NaN that a rounding gives.
    pub(crate) fn nan(&self) -> u8 {
        self.nan
    }

    /// `a + b`, rounded to the type.
    pub(crate) fn add(&self, a: u8, b: u8) -> u8 {
        self.round(self.values[a as usize] + self.values[b as usize])
    }

    /// `v` rounded to the type: nearest, ties to the even pattern.
    pub(crate) fn round(&self, v: f32) -> u8 {
        if v.is_nan() {
            return self.nan;
        }
        let sign = if v.is_sign_negative() { 0x80 } else { 0 };
        let a = v.abs();
        if a > self.boundary || (a == self.boundary && !self.max_keeps_tie) {
            return match self.overflow {
                Overflow::Infinity => 0x7c | sign,
                Overflow::Nan => self.nan,
            };
        }
        let above = self.positives.partition_point(|p| p.0 < a).min(self.positives.len() - 1);
        let (hi, hi_bits) = self.positives[above];
        let magnitude = if a >= hi || above == 0 {
            hi_bits // exact, or the largest finite value (a tie at the boundary kept)
        } else {
            let (lo, lo_bits) = self.positives[above - 1];
            // The midpoint of two float8 values is exact in f64, and so is `a`.
            let mid = (lo as f64 + hi as f64) / 2.0;
            match (a as f64).partial_cmp(&mid) {
                Some(std::cmp::Ordering::Less) => lo_bits,
                Some(std::cmp::Ordering::Greater) => hi_bits,
                _ if lo_bits & 1 == 0 => lo_bits,
                _ => hi_bits,
            }
        };
        if magnitude == 0 && !self.negative_zero {
            0
        } else {
            magnitude | sign
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scalar, Tensor};

    const TYPES: [DataType; 4] =
        [DataType::Float8e4m3fn, DataType::Float8e4m3fnuz, DataType::Float8e5m2, DataType::Float8e5m2fnuz];

    /// The constant rule's conversion (constant/mod.rs: each finite value searched for the
    /// nearest, written apart from this), where it takes the value.
    fn by_search(dtype: DataType, v: f32) -> Option<u8> {
        Scalar::from(v as f64).to_tensor(dtype).ok().map(|t: Tensor| t.bytes().unwrap()[0])
    }

    /// Every f32 from a sweep of magnitudes and the midpoints of neighbours (the ties), both
    /// signs: the bits of the nearest-value search wherever it takes the value.
    #[test]
    fn rounding_is_the_nearest_value_ties_to_even() {
        for dtype in TYPES {
            let f8 = Float8::new(dtype).unwrap();
            let mut checked = 0;
            let mut candidates: Vec<f32> = (0..4000).map(|i| 2f32.powf(i as f32 / 200.0 - 18.0)).collect();
            for w in f8.positives.windows(2) {
                candidates.extend([w[0].0, (w[0].0 + w[1].0) / 2.0, w[1].0 * 0.999, w[0].0 * 1.001]);
            }
            for v in candidates.into_iter().flat_map(|v| [v, -v]) {
                if let Some(want) = by_search(dtype, v) {
                    assert_eq!(f8.round(v), want, "{dtype} {v:e}");
                    checked += 1;
                }
            }
            assert!(checked > 1000, "{dtype}: {checked}");
        }
    }

    /// What the search refuses: past the range (the type's inf or NaN, as ml_dtypes gives
    /// them), to zero (a signed zero, +0 where -0 does not exist), NaN and the infinities.
    #[test]
    fn overflow_zeros_and_nans_are_ml_dtypes() {
        use DataType::*;
        let cases: [(DataType, f32, u8); 16] = [
            (Float8e4m3fn, 464.0, 0x7e), // the tie at the boundary stays at 448 (even pattern)
            (Float8e4m3fn, 464.1, 0x7f),
            (Float8e4m3fn, -1e9, 0x7f),
            (Float8e4m3fn, f32::INFINITY, 0x7f),
            (Float8e5m2, 61439.0, 0x7b),
            (Float8e5m2, 61440.0, 0x7c), // the tie goes past 57344 (odd pattern): inf
            (Float8e5m2, -1e9, 0xfc),
            (Float8e4m3fnuz, 247.9, 0x7f),
            (Float8e4m3fnuz, 248.0, 0x80),
            (Float8e5m2fnuz, 61440.0, 0x80),
            (Float8e4m3fn, -1e-9, 0x80),
            (Float8e5m2, 1e-9, 0x00),
            (Float8e4m3fnuz, -1e-9, 0x00),
            (Float8e5m2fnuz, -0.0, 0x00),
            (Float8e5m2, f32::NAN, 0x7e),
            (Float8e4m3fnuz, f32::NAN, 0x80),
        ];
        for (dtype, v, want) in cases {
            assert_eq!(Float8::new(dtype).unwrap().round(v), want, "{dtype} {v:e}");
        }
        assert!(Float8::new(DataType::Float8e8m0).is_none());
    }

    /// A sum is rounded at each addition: in float8e4m3fn 16 + 1 is 16 (a tie, to the even 16),
    /// where 16 + 2 is 18.
    #[test]
    fn each_addition_is_rounded() {
        let f8 = Float8::new(DataType::Float8e4m3fn).unwrap();
        let bits = |v: f32| f8.round(v);
        assert_eq!(f8.add(bits(16.0), bits(1.0)), bits(16.0));
        assert_eq!(f8.add(bits(16.0), bits(2.0)), bits(18.0));
        assert_eq!(f8.add(bits(1.0), bits(-1.0)), 0, "+0, as in f32");
    }
}
