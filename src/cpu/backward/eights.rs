//! float32 sums eight indices at a time in SSE2 registers (part of x86-64), for the
//! gradient's strips and its rows of several images ([`f32_sums_sse2`]).

use std::mem::MaybeUninit;

use super::add_f32;
use crate::adjoint::BLOCK;

/// Sums of float32 terms eight indices at a time in SSE2 registers. Index `j` of `dst` takes
/// over the rows `srcs` in order the sum of each row's terms in order, both as
/// [`ordered_sum`](crate::adjoint::ordered_sum) adds (one term, or one row, itself; several
/// from +0.0); a row's t-th term is at `first[t] + i + j`, or `first[t] - i - j` where it
/// descends (`ascends[t]` false). One row: a lane of a strip's sums (`StripSum`); several:
/// `f32_image_rows`. Each eight: every term's eight loaded (a descending one's reversed by
/// shuffles), added and stored; where the rows' path fills a row, stages each descending term
/// reversed and adds the terms a pass each. A NaN is kept by every later addition, so eight
/// whose sums hold none are the hardware's additions all through, [`add_f32`]'s; eight with
/// one one at a time by [`add_f32`]; a run under eight each sum by the hardware's additions, a
/// NaN one again by [`add_f32`] (f32 \[1,64,256,256\] reflected by 2: 1.22-1.26x the forward
/// pad by its rows' path, 1.03-1.05x so). At most a block of terms and of rows (the
/// callers'). Reflections' shapes (one or two rows of one or two terms) are compiled each with
/// its loops unrolled: as loops over the rows and terms, 224 x 224 reflected by 100 took
/// 1.65x as long.
pub(super) fn f32_sums_sse2(
    srcs: &[&[f32]],
    first: &[usize],
    ascends: &[bool],
    i: usize,
    dst: &mut [MaybeUninit<f32>],
) {
    let n = dst.len();
    // Every term's n values inside every row, checked once: the loads below are not.
    for src in srcs {
        for (&first, &up) in first.iter().zip(ascends) {
            let inside = match up {
                true => first + i + n <= src.len(),
                false => first < src.len() && first + 1 >= i + n,
            };
            assert!(n == 0 || inside, "a term at {first} ({up}) reads outside grad_out for {n} indices from {i}");
        }
    }
    // SAFETY: checked just above.
    unsafe { f32_sums_sse2_unchecked(srcs, first, ascends, i, dst) }
}

/// [`f32_sums_sse2`] without its check of the terms' reach: for a caller that checked every
/// term of a whole row once (`f32_image_rows` makes five calls a row).
///
/// # Safety
/// Every term's values for `dst`'s indices lie inside every row: `first[t] + i + dst.len()`
/// at most the row's length where the term ascends, `first[t]` under it and at least
/// `i + dst.len() - 1` where it descends.
pub(super) unsafe fn f32_sums_sse2_unchecked(
    srcs: &[&[f32]],
    first: &[usize],
    ascends: &[bool],
    i: usize,
    dst: &mut [MaybeUninit<f32>],
) {
    debug_assert!(first.len() <= BLOCK && srcs.len() <= BLOCK && first.len() == ascends.len());
    // ordered_sum's sums of a block at most: one term itself, several in order from +0.0.
    let row = |src: &[f32], j: usize| -> f32 {
        let term = |t: usize| src[if ascends[t] { first[t] + i + j } else { first[t] - i - j }];
        match first.len() {
            1 => term(0),
            terms => (0..terms).fold(0.0, |sum, t| add_f32(sum, term(t))),
        }
    };
    let one = |j: usize| match srcs {
        [src] => row(src, j),
        _ => srcs.iter().fold(0.0, |sum, src| add_f32(sum, row(src, j))),
    };
    // A reflection's strips: the pad's term descending, the kept one ascending (`D` 0b01); a
    // row's kept indices: one ascending term (0).
    match (srcs.len(), ascends) {
        // SAFETY: the terms' bounds are the caller's promise, as `F32Eights::new` asks, and
        // the rows, terms and directions are the arm's.
        (1, [false, true]) => unsafe { F32Eights::<1, 2, 0b01>::new(srcs, first, ascends, i).sums(dst, &one) },
        // SAFETY: as above.
        (2, [true]) => unsafe { F32Eights::<2, 1, 0>::new(srcs, first, ascends, i).sums(dst, &one) },
        // SAFETY: as above.
        (2, [false, true]) => unsafe { F32Eights::<2, 2, 0b01>::new(srcs, first, ascends, i).sums(dst, &one) },
        // SAFETY: as above.
        (1, [_, _]) => unsafe { F32Eights::<1, 2, ANY>::new(srcs, first, ascends, i).sums(dst, &one) },
        // SAFETY: as above.
        (2, [_, _]) => unsafe { F32Eights::<2, 2, ANY>::new(srcs, first, ascends, i).sums(dst, &one) },
        // SAFETY: as above; numbers of 0 read the slices.
        _ => unsafe { F32Eights::<0, 0, ANY> { srcs, first, ascends, i, bases: [], ups: [] }.sums(dst, &one) },
    }
}

/// [`F32Eights`]' directions read at run time (`ups`).
const ANY: u8 = u8::MAX;

/// [`f32_sums_sse2`]'s eights for `S` rows of `T` terms, each term's first value's address
/// (`bases`, a descending one's seven before) and direction (`ups`) taken out of the loop;
/// `S` and `T` 0: any number, read from the slices each eight. `D`: the terms that descend, a
/// bit each, compiled in (read at run time, each term's direction was a branch an eight), or
/// [`ANY`].
struct F32Eights<'a, const S: usize, const T: usize, const D: u8> {
    srcs: &'a [&'a [f32]],
    first: &'a [usize],
    ascends: &'a [bool],
    i: usize,
    bases: [[*const f32; T]; S],
    ups: [bool; T],
}

impl<'a, const S: usize, const T: usize, const D: u8> F32Eights<'a, S, T, D> {
    /// # Safety
    /// Every term's values for the indices `sums` is given lie inside every row (as
    /// [`f32_sums_sse2`] checks); `srcs` holds `S` rows and `first` `T` terms.
    unsafe fn new(srcs: &'a [&'a [f32]], first: &'a [usize], ascends: &'a [bool], i: usize) -> Self {
        let base = |src: &[f32], t: usize| match ascends[t] {
            true => src.as_ptr().wrapping_add(first[t] + i),
            false => src.as_ptr().wrapping_add(first[t]).wrapping_sub(i + 7),
        };
        let (mut bases, mut ups) = ([[std::ptr::null(); T]; S], [false; T]);
        for (s, bases) in bases.iter_mut().enumerate() {
            for (t, base_t) in bases.iter_mut().enumerate() {
                *base_t = base(srcs[s], t);
            }
        }
        ups.iter_mut().zip(ascends).for_each(|(up, &a)| *up = a);
        F32Eights { srcs, first, ascends, i, bases, ups }
    }

    /// Whether term `t` ascends.
    #[inline(always)]
    fn up(&self, t: usize) -> bool {
        match D {
            ANY => self.ups[t],
            _ => D >> t & 1 == 0,
        }
    }

    /// The sums of indices c..c + 8, as two registers.
    ///
    /// # Safety
    /// As [`F32Eights::new`]'s, for c + 8 at most the indices `sums` is given.
    #[inline(always)]
    unsafe fn eight(&self, c: usize) -> (std::arch::x86_64::__m128, std::arch::x86_64::__m128) {
        use std::arch::x86_64::*;
        // SAFETY: an ascending term's eight from its base + c, a descending one's from its
        // base - c (index c's value the eight's last), inside the row (the caller's promise).
        let load = |base: *const f32, up: bool| unsafe {
            match up {
                true => (_mm_loadu_ps(base.wrapping_add(c)), _mm_loadu_ps(base.wrapping_add(c + 4))),
                false => {
                    let p = base.wrapping_sub(c);
                    let (low, high) = (_mm_loadu_ps(p), _mm_loadu_ps(p.wrapping_add(4)));
                    (_mm_shuffle_ps::<0x1b>(high, high), _mm_shuffle_ps::<0x1b>(low, low))
                }
            }
        };
        // SAFETY: SSE2 is part of x86-64.
        let add = |(a, b): (__m128, __m128), (c, d): (__m128, __m128)| unsafe { (_mm_add_ps(a, c), _mm_add_ps(b, d)) };
        // SAFETY: as above.
        let zero = unsafe { (_mm_setzero_ps(), _mm_setzero_ps()) };
        let row = |s: usize| match T {
            0 => {
                let src = self.srcs[s];
                let base = |t: usize| match self.ascends[t] {
                    true => src.as_ptr().wrapping_add(self.first[t] + self.i),
                    false => src.as_ptr().wrapping_add(self.first[t]).wrapping_sub(self.i + 7),
                };
                match self.first.len() {
                    1 => load(base(0), self.ascends[0]),
                    n => (0..n).fold(zero, |sum, t| add(sum, load(base(t), self.ascends[t]))),
                }
            }
            1 => load(self.bases[s][0], self.up(0)),
            _ => (0..T).fold(zero, |sum, t| add(sum, load(self.bases[s][t], self.up(t)))),
        };
        match (S, self.srcs.len()) {
            (0, 1) | (1, _) => row(0),
            (0, n) => (0..n).fold(zero, |sum, s| add(sum, row(s))),
            _ => (0..S).fold(zero, |sum, s| add(sum, row(s))),
        }
    }

    /// Index `j`'s sum ([`crate::adjoint::ordered_sum`]: one term itself, several from +0.0)
    /// by the hardware's additions, for a NaN-free sum the bits `add_f32`'s give.
    #[inline(always)]
    fn plain(&self, j: usize) -> f32 {
        let (first, ascends, i) = (self.first, self.ascends, self.i);
        let row = |src: &[f32]| {
            let term = |t: usize| src[if ascends[t] { first[t] + i + j } else { first[t] - i - j }];
            match first.len() {
                1 => term(0),
                terms => (0..terms).fold(0.0, |sum, t| sum + term(t)),
            }
        };
        match self.srcs {
            [src] => row(src),
            srcs => srcs.iter().fold(0.0, |sum, src| sum + row(src)),
        }
    }

    /// Every index of `dst` ([`f32_sums_sse2`]'s), `one(j)` its sum one at a time by
    /// [`add_f32`] where the hardware's is NaN.
    ///
    /// # Safety
    /// As [`F32Eights::new`]'s, for `dst`'s indices.
    #[inline(always)]
    unsafe fn sums(&self, dst: &mut [MaybeUninit<f32>], one: &impl Fn(usize) -> f32) {
        use std::arch::x86_64::*;
        let n = dst.len();
        if n < 8 {
            // A few indices (a pad of 2's strips): each sum by the hardware's additions, NaN
            // checked once at its end (`add_f32` is IEEE's addition but for NaNs).
            for (j, d) in dst.iter_mut().enumerate() {
                d.write(match self.plain(j) {
                    sum if sum.is_nan() => one(j),
                    sum => sum,
                });
            }
            return;
        }
        let out = dst.as_mut_ptr().cast::<f32>();
        // Eights from 0, the last ending at the run's end (overlapping the one before, its
        // sums written again, the same bits): no index one at a time where the run has eight.
        let (last, mut c) = (n - 8, 0);
        loop {
            let at = c.min(last);
            // SAFETY: at + 8 <= n, as `eight` asks; SSE2 is part of x86-64; the stores are of
            // dst's values at..at + 8.
            let nan = unsafe {
                let (low, high) = self.eight(at);
                let nan = _mm_movemask_ps(_mm_or_ps(_mm_cmpunord_ps(low, low), _mm_cmpunord_ps(high, high))) != 0;
                if !nan {
                    _mm_storeu_ps(out.add(at), low);
                    _mm_storeu_ps(out.add(at + 4), high);
                }
                nan
            };
            if nan {
                dst[at..at + 8].iter_mut().enumerate().for_each(|(j, d)| _ = d.write(one(at + j)));
            }
            if at == last {
                return;
            }
            c += 8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape of rows and terms (the reflections' compiled ones and the general one), from
    /// every offset `i` into the strip and for runs of 1 to 20 indices (under eight, eights,
    /// an eight and a few), against the sums' definition: index j's t-th term of a row at
    /// `first[t] + i + j`, or `first[t] - i - j` descending, the terms and then the rows summed
    /// in order from +0.0 (one itself) by `add_f32`. Every value of a row differs and most
    /// sums' bits show their order (1e8 beside small ones); one NaN, so that most eights hold none.
    #[test]
    fn sums_read_each_term_from_its_offset_in_order() {
        let row = |r: usize| -> Vec<f32> {
            (0..64)
                .map(|k| match ((k, r), (k * 7 + r * 3) % 23) {
                    ((33, 0), _) => f32::from_bits(0x7fc0_0055),
                    (_, 1) => 1e8,
                    (_, 2) => -1e8,
                    (_, m) => (k + 64 * r) as f32 * 0.25 + m as f32,
                })
                .collect()
        };
        let rows: Vec<Vec<f32>> = (0..3).map(row).collect();
        let shapes: [(usize, &[(usize, bool)]); 6] = [
            (1, &[(40, false), (0, true)]),
            (2, &[(3, true)]),
            (2, &[(40, false), (2, true)]),
            (1, &[(1, true), (45, false)]),
            (2, &[(5, true), (0, true)]),
            (3, &[(44, false), (1, true), (30, false)]),
        ];
        for (n_rows, terms) in shapes {
            let srcs: Vec<&[f32]> = rows[..n_rows].iter().map(Vec::as_slice).collect();
            let (first, ascends): (Vec<usize>, Vec<bool>) = terms.iter().copied().unzip();
            for i in 0..6 {
                for n in 1..=20 {
                    let sum_of = |j: usize, src: &[f32]| {
                        let term = |t: usize| src[if ascends[t] { first[t] + i + j } else { first[t] - i - j }];
                        let terms = (0..first.len()).map(term);
                        crate::adjoint::ordered_sum(terms, first.len(), 0.0, add_f32)
                    };
                    let want: Vec<u32> = (0..n)
                        .map(|j| srcs.iter().map(move |src| sum_of(j, src)))
                        .map(|sums| crate::adjoint::ordered_sum(sums, n_rows, 0.0, add_f32).to_bits())
                        .collect();
                    let mut dst = vec![MaybeUninit::new(0f32); n];
                    f32_sums_sse2(&srcs, &first, &ascends, i, &mut dst);
                    // SAFETY: every index was written (a zero beforehand in any case).
                    let got: Vec<u32> = dst.iter().map(|d| unsafe { d.assume_init() }.to_bits()).collect();
                    assert_eq!(got, want, "{n_rows} rows, terms {terms:?}, from {i}, {n} indices");
                }
            }
        }
    }
}
