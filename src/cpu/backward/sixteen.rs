//! The 16-bit floats' rows for the gather: float16's and bfloat16's strip sums eight
//! indices at a time in AVX registers (one generic [`strip_16`], a type's conversions its
//! [`Eights16`]) and their whole rows ([`whole_rows`]), where the CPU has the features; the
//! rows' path (half's slice conversions) elsewhere.

#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

#[cfg(target_arch = "x86_64")]
use super::{add_bf16, add_f16, whole_rows, Strip};
use super::{
    add_rows_16, start_rows_16, RowAdd, Rows, StripSum, WholeRows, BF16_EXPONENT, BF16_QUIET, F16_EXPONENT, F16_QUIET,
};

/// A sum's first term in each 16-bit type ([`start_rows_16`]).
const F16_START: &RowAdd<'_, f16> = &|acc, terms| start_rows_16(acc, terms, F16_EXPONENT, F16_QUIET);
const BF16_START: &RowAdd<'_, bf16> = &|acc, terms| start_rows_16(acc, terms, BF16_EXPONENT, BF16_QUIET);

/// float16's rows: half's slice conversions, and its strips and whole rows eight indices at a
/// time where the CPU has F16C ([`f16_strip_f16c`]).
pub(super) fn f16_rows() -> Rows<'static, f16> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("f16c") && std::arch::is_x86_feature_detected!("ssse3") {
        // SAFETY: the CPU has F16C (and so AVX) and SSSE3, just checked.
        let strip: &StripSum<'_, f16> = &|srcs, strip, at, dsts| unsafe { f16_strips_f16c(srcs, strip, at, dsts) };
        // SAFETY: as above.
        let whole: &WholeRows<'_, f16> =
            &|srcs, from, strips, dsts| unsafe { f16_whole_rows_f16c(srcs, from, strips, dsts) };
        return rows_16(F16_START, Some(strip), Some(whole));
    }
    rows_16(F16_START, None, None)
}

/// bfloat16's rows: half's slice conversions, and its strips and whole rows eight indices at a
/// time where the CPU has AVX2 ([`bf16_strip_avx2`]).
pub(super) fn bf16_rows() -> Rows<'static, bf16> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("sse4.1")
        && std::arch::is_x86_feature_detected!("ssse3")
    {
        // SAFETY: the CPU has AVX2, SSE4.1 and SSSE3, just checked.
        let strip: &StripSum<'_, bf16> = &|srcs, strip, at, dsts| unsafe { bf16_strips_avx2(srcs, strip, at, dsts) };
        // SAFETY: as above.
        let whole: &WholeRows<'_, bf16> =
            &|srcs, from, strips, dsts| unsafe { bf16_whole_rows_avx2(srcs, from, strips, dsts) };
        return rows_16(BF16_START, Some(strip), Some(whole));
    }
    rows_16(BF16_START, None, None)
}

/// A 16-bit float type's rows: half's slice conversions, its first term `start`
/// ([`start_rows_16`] with its exponent and quiet bits), and `strip` and `whole` where the CPU
/// has the type's vector conversions (elsewhere the rows' path: every lane's terms staged side
/// by side, a conversion a row).
fn rows_16<H: Copy>(
    start: &'static RowAdd<'static, H>,
    strip: Option<&'static StripSum<'static, H>>,
    whole: Option<&'static WholeRows<'static, H>>,
) -> Rows<'static, H>
where
    [H]: HalfFloatSliceExt,
{
    Rows { add: &add_rows_16, start, strip, image_rows: None, whole_rows: whole }
}

/// float16's [`WholeRows`]: [`whole_rows`] with [`f16_strip_f16c`] inlined into it.
///
/// # Safety
/// The CPU has F16C and SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "f16c,avx,ssse3")]
unsafe fn f16_whole_rows_f16c(srcs: &[&[f16]], from: usize, strips: &[Strip], dsts: &mut [&mut [MaybeUninit<f16>]]) {
    // SAFETY: the caller's (the same features, inlined).
    whole_rows(srcs, from, strips, dsts, |src, strip, dst| unsafe { f16_strip_f16c(src, strip, 0, dst) })
}

/// A float16 strip's sums ([`StripSum`]), eight indices at a time: each term's eight loaded
/// (reversed where it descends), widened to f32 and added, the sum rounded to float16 after
/// every addition (`vcvtps2ph`, to nearest even, as half's conversions round), so its bits
/// are [`add_rows_16`]'s; the last few indices zero-padded to eight; eight with a NaN one at a
/// time by [`add_f32`](super::add_f32)'s rule. Against staging every lane's terms in rows (a few small copies
/// a lane and term, which cost more than the sums): f16 \[8,4096,256\] reflected by 8 on its
/// last axis, its gradient about 15 % faster on one core; strips of 1 to 7 indices, each a sum
/// of its own before: f16 \[1,64,256,256\] reflected by 2 on H and W 2.12 to 0.74 ms, edge 1.26
/// to 0.90 (the forward pad 0.60).
///
/// # Safety
/// The CPU has F16C and SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "f16c,avx,ssse3")]
unsafe fn f16_strips_f16c(
    srcs: &[&[f16]],
    strip: &Strip,
    [i, n, at]: [usize; 3],
    dsts: &mut [&mut [MaybeUninit<f16>]],
) {
    for (src, dst) in srcs.iter().zip(dsts.iter_mut()) {
        // SAFETY: the caller's (the same features, inlined).
        unsafe { f16_strip_f16c(src, strip, i, &mut dst[at..][..n]) }
    }
}

/// One lane of [`f16_strips_f16c`]: [`strip_16`] with F16C's conversions.
///
/// # Safety
/// The CPU has F16C and SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "f16c,avx,ssse3")]
#[inline]
unsafe fn f16_strip_f16c(src: &[f16], strip: &Strip, i: usize, dst: &mut [MaybeUninit<f16>]) {
    // SAFETY: the caller's: the features every `Eights16 for f16` conversion uses.
    unsafe { strip_16(src, strip, i, dst) }
}

/// A 16-bit float's eights in AVX registers, for [`strip_16`]: eight values widened to f32,
/// a sum rounded to the type and kept in f32 (exactly: the type's values are f32s), and eight
/// such sums narrowed back. Each is inlined into a caller that has the features its
/// intrinsics need (`f16_strip_f16c`'s, `bf16_strip_avx2`'s).
#[cfg(target_arch = "x86_64")]
trait Eights16: bytemuck::Pod {
    const ZERO: Self;
    /// The type's addition under the one NaN rule, for eights that hold a NaN.
    fn add(a: Self, b: Self) -> Self;
    unsafe fn widen(h: std::arch::x86_64::__m128i) -> std::arch::x86_64::__m256;
    unsafe fn round(sum: std::arch::x86_64::__m256) -> std::arch::x86_64::__m256;
    unsafe fn narrow(rounded: std::arch::x86_64::__m256) -> std::arch::x86_64::__m128i;
}

/// F16C's conversions (`vcvtps2ph` rounds to nearest even, as half's do).
#[cfg(target_arch = "x86_64")]
impl Eights16 for f16 {
    const ZERO: f16 = f16::ZERO;
    fn add(a: f16, b: f16) -> f16 {
        add_f16(a, b)
    }
    #[inline(always)]
    unsafe fn widen(h: std::arch::x86_64::__m128i) -> std::arch::x86_64::__m256 {
        // SAFETY: the caller has F16C.
        unsafe { std::arch::x86_64::_mm256_cvtph_ps(h) }
    }
    #[inline(always)]
    unsafe fn round(sum: std::arch::x86_64::__m256) -> std::arch::x86_64::__m256 {
        // SAFETY: the caller has F16C.
        unsafe { Self::widen(Self::narrow(sum)) }
    }
    #[inline(always)]
    unsafe fn narrow(rounded: std::arch::x86_64::__m256) -> std::arch::x86_64::__m128i {
        use std::arch::x86_64::*;
        // SAFETY: the caller has F16C.
        unsafe { _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(rounded) }
    }
}

/// bfloat16 is f32's upper half: widened by a shift, rounded to nearest even by adding 0x7fff
/// and the kept half's lowest bit (past the largest finite value to infinity, as half's
/// `bf16::from_f32` rounds; a NaN never reaches it), narrowed by a shift and a pack.
#[cfg(target_arch = "x86_64")]
impl Eights16 for bf16 {
    const ZERO: bf16 = bf16::ZERO;
    fn add(a: bf16, b: bf16) -> bf16 {
        add_bf16(a, b)
    }
    #[inline(always)]
    unsafe fn widen(h: std::arch::x86_64::__m128i) -> std::arch::x86_64::__m256 {
        use std::arch::x86_64::*;
        // SAFETY: the caller has AVX2.
        unsafe { _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(h))) }
    }
    #[inline(always)]
    unsafe fn round(sum: std::arch::x86_64::__m256) -> std::arch::x86_64::__m256 {
        use std::arch::x86_64::*;
        // SAFETY: the caller has AVX2.
        unsafe {
            let bits = _mm256_castps_si256(sum);
            let odd = _mm256_and_si256(_mm256_srli_epi32::<16>(bits), _mm256_set1_epi32(1));
            let up = _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7fff)), odd);
            _mm256_castsi256_ps(_mm256_and_si256(up, _mm256_set1_epi32(0xffff_0000_u32 as i32)))
        }
    }
    #[inline(always)]
    unsafe fn narrow(rounded: std::arch::x86_64::__m256) -> std::arch::x86_64::__m128i {
        use std::arch::x86_64::*;
        // SAFETY: the caller has AVX2 and SSE4.1.
        unsafe {
            let halves = _mm256_srli_epi32::<16>(_mm256_castps_si256(rounded));
            _mm_packus_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256::<1>(halves))
        }
    }
}

/// One lane's strip sums in a 16-bit float type, eight indices at a time: each term's eight
/// loaded (reversed where it descends), widened to f32 and added, the sum rounded to the type
/// after every addition, so that its bits are [`add_rows_16`]'s; the last few indices
/// zero-padded to eight; eight with a NaN one at a time by [`add_f32`](super::add_f32)'s rule.
///
/// # Safety
/// The CPU has SSSE3 and what `H`'s [`Eights16`] conversions need; inlined into a caller
/// that has them.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn strip_16<H: Eights16>(src: &[H], strip: &Strip, i: usize, dst: &mut [MaybeUninit<H>]) {
    use std::arch::x86_64::*;
    let bits: &[u16] = bytemuck::cast_slice(src);
    let terms = || strip.first.iter().zip(&strip.ascends);
    let one = |j: usize| -> H {
        let term = |(&first, &up): (&usize, &bool)| src[if up { first + i + j } else { first - i - j }];
        crate::adjoint::ordered_sum(terms().map(term), strip.first.len(), H::ZERO, H::add)
    };
    let n = dst.len();
    let mut c = 0;
    while c < n {
        // Eight indices, or the last few zero-padded to eight (a pad of 2's strips: elsewhere
        // each a sum of its own, 3.5x the forward pad on f16 [1,64,256,256] reflected by 2).
        let m = (n - c).min(8);
        // SAFETY: AVX, the caller's.
        let mut acc = unsafe { _mm256_setzero_ps() };
        let mut nan = false;
        for (&first, &up) in terms() {
            // The term's m values from their slice, bounds checked: eight loaded at once (a
            // descending term's reversed), fewer gathered into a row of eight.
            let values = match (m, up) {
                (8, true) => load_halves(&bits[first + i + c..][..8]),
                (8, false) => {
                    let last = first - i - c;
                    // SAFETY: SSSE3, the caller's.
                    unsafe {
                        let reverse = _mm_setr_epi8(14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1);
                        _mm_shuffle_epi8(load_halves(&bits[last - 7..=last]), reverse)
                    }
                }
                (_, up) => {
                    let mut row = [0u16; 8];
                    for (j, h) in row.iter_mut().enumerate().take(m) {
                        *h = bits[if up { first + i + c + j } else { first - i - c - j }];
                    }
                    load_halves(&row)
                }
            };
            // SAFETY: the caller's features.
            unsafe {
                let sum = _mm256_add_ps(acc, H::widen(values));
                if _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(sum, sum)) != 0 {
                    nan = true;
                    break;
                }
                acc = H::round(sum);
            }
        }
        let here = &mut dst[c..c + m];
        match nan {
            false if m == 8 => {
                let eight: &mut [MaybeUninit<H>; 8] = here.try_into().expect("eight values");
                // SAFETY: the caller's features; an unaligned store of eight halves into `eight`.
                unsafe { _mm_storeu_si128(eight.as_mut_ptr().cast(), H::narrow(acc)) }
            }
            false => {
                let mut row = [0u16; 8];
                // SAFETY: the caller's features; an unaligned store of eight halves into `row`.
                unsafe { _mm_storeu_si128(row.as_mut_ptr().cast(), H::narrow(acc)) };
                let row: &[H; 8] = bytemuck::cast_ref(&row);
                for (d, &h) in here.iter_mut().zip(row) {
                    d.write(h);
                }
            }
            true => here.iter_mut().enumerate().for_each(|(j, d)| _ = d.write(one(c + j))),
        }
        c += m;
    }
}

/// Eight halves from their slice (unaligned).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn load_halves(s: &[u16]) -> std::arch::x86_64::__m128i {
    let s: &[u16; 8] = s.try_into().expect("eight halves");
    // SAFETY: an unaligned load of the eight halves `s` holds (SSE2, part of x86-64).
    unsafe { std::arch::x86_64::_mm_loadu_si128(s.as_ptr().cast()) }
}

/// bfloat16's [`StripSum`]: every lane's [`bf16_strip_avx2`], inlined into one call.
///
/// # Safety
/// The CPU has AVX2, SSE4.1 and SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,sse4.1,ssse3")]
unsafe fn bf16_strips_avx2(
    srcs: &[&[bf16]],
    strip: &Strip,
    [i, n, at]: [usize; 3],
    dsts: &mut [&mut [MaybeUninit<bf16>]],
) {
    for (src, dst) in srcs.iter().zip(dsts.iter_mut()) {
        // SAFETY: the caller's (the same features, inlined).
        unsafe { bf16_strip_avx2(src, strip, i, &mut dst[at..][..n]) }
    }
}

/// One lane of bfloat16's strip sums: [`strip_16`] with AVX2's shifts and pack.
///
/// # Safety
/// The CPU has AVX2, SSE4.1 and SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,sse4.1,ssse3")]
#[inline]
unsafe fn bf16_strip_avx2(src: &[bf16], strip: &Strip, i: usize, dst: &mut [MaybeUninit<bf16>]) {
    // SAFETY: the caller's: the features every `Eights16 for bf16` conversion uses.
    unsafe { strip_16(src, strip, i, dst) }
}

/// bfloat16's [`WholeRows`]: [`whole_rows`] with [`bf16_strip_avx2`] inlined into it.
///
/// # Safety
/// The CPU has AVX2, SSE4.1 and SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,sse4.1,ssse3")]
unsafe fn bf16_whole_rows_avx2(srcs: &[&[bf16]], from: usize, strips: &[Strip], dsts: &mut [&mut [MaybeUninit<bf16>]]) {
    // SAFETY: the caller's (the same features, inlined).
    whole_rows(srcs, from, strips, dsts, |src, strip, dst| unsafe { bf16_strip_avx2(src, strip, 0, dst) })
}
