//! float32 chains of additions, sixteen rows' at once in AVX registers: each row's sum of its
//! values at one index's images, for an index of many terms (an edge's corner: 101 terms on
//! each of 424 rows where 224 x 224 is padded by 100).

use std::arch::x86_64::*;

use super::{add_f32, gathered_ieee, nan_sums_again};
use crate::adjoint::block_len;

/// Rows summed side by side: two registers of eight, two chains of additions in flight.
const CHAIN_ROWS: usize = 16;

#[cfg(test)]
thread_local! {
    /// Rows whose chains [`f32_chains`] summed in AVX registers on this thread (tests see the
    /// way taken).
    pub(super) static CHAINED_ROWS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `sums[l]`, row `srcs[l]`'s sum of its values at `images`, in their order as
/// [`ordered_sum`](crate::adjoint::ordered_sum) adds them (several terms: from +0.0, in blocks past [`block_len`]).
/// Where the CPU has AVX, eight consecutive ascending images of eight rows are eight loads
/// transposed into eight registers of a term's eight rows, two such chains in flight (224 x
/// 224 edge 100's gradient took 1.6x as long where eight rows' chains each took a load and
/// an addition a term, the compiler's loads and shuffles into two registers); elsewhere
/// [`gathered_ieee`]. The hardware's additions all through, [`add_f32`]'s where no
/// NaN turns up; a row whose sum is NaN is summed again by `add_f32` (the one NaN rule).
pub(super) fn f32_chains(srcs: &[&[f32]], images: &[usize], sums: &mut [f32]) {
    assert_eq!(srcs.len(), sums.len(), "a sum a row");
    debug_assert!(images.len() > 1, "a sum of one term is that term");
    if !std::arch::is_x86_feature_detected!("avx") {
        return gathered_ieee(srcs, images, sums, 0.0, add_f32);
    }
    #[cfg(test)]
    CHAINED_ROWS.set(CHAINED_ROWS.get() + srcs.len());
    let len = srcs.iter().map(|src| src.len()).min().unwrap_or(0);
    // SAFETY: the CPU has AVX; every row is `len` values at least.
    unsafe { chains_avx(srcs, images, sums, len) };
    nan_sums_again(srcs, images, sums, 0.0, add_f32);
}

/// [`f32_chains`]'s sums, [`CHAIN_ROWS`] rows at a time (a last group short of them padded
/// with its first row, its sums dropped), blocks of terms summed apart, then in order.
///
/// # Safety
/// The CPU has AVX; every row of `srcs` is `len` values at least.
#[target_feature(enable = "avx")]
unsafe fn chains_avx(srcs: &[&[f32]], images: &[usize], sums: &mut [f32], len: usize) {
    let block = block_len(images.len());
    for (srcs, sums) in srcs.chunks(CHAIN_ROWS).zip(sums.chunks_mut(CHAIN_ROWS)) {
        let rows: [*const f32; CHAIN_ROWS] = std::array::from_fn(|r| srcs.get(r).unwrap_or(&srcs[0]).as_ptr());
        let totals = match images.len() <= block {
            true => in_order(&rows, images, len),
            false => images.chunks(block).fold([_mm256_setzero_ps(); 2], |totals, images| {
                let parts = in_order(&rows, images, len);
                [_mm256_add_ps(totals[0], parts[0]), _mm256_add_ps(totals[1], parts[1])]
            }),
        };
        let mut out = [0f32; CHAIN_ROWS];
        _mm256_storeu_ps(out.as_mut_ptr(), totals[0]);
        _mm256_storeu_ps(out.as_mut_ptr().add(8), totals[1]);
        sums.copy_from_slice(&out[..sums.len()]);
    }
}

/// Two registers of eight rows' sums of `images` (a block at most) from +0.0, in order.
///
/// # Safety
/// The CPU has AVX; every row `rows` points to is `len` values at least.
#[target_feature(enable = "avx")]
#[inline]
unsafe fn in_order(rows: &[*const f32; CHAIN_ROWS], images: &[usize], len: usize) -> [__m256; 2] {
    let mut acc = [_mm256_setzero_ps(); 2];
    let mut t = 0;
    while t < images.len() {
        let o = images[t];
        let eight_up = t + 8 <= images.len() && (1..8).all(|i| images[t + i] == o + i);
        if eight_up {
            assert!(o + 8 <= len, "an image past a row of grad_out");
            for (h, acc) in acc.iter_mut().enumerate() {
                let r: [__m256; 8] = std::array::from_fn(|i| _mm256_loadu_ps(rows[8 * h + i].add(o)));
                // Pairs of rows interleaved, then quads: [term j of rows 0-3 | term j + 4 of
                // rows 0-3] (a) and of rows 4-7 (b), their halves put together a term each.
                let lo = |i: usize| _mm256_unpacklo_ps(r[i], r[i + 1]);
                let hi = |i: usize| _mm256_unpackhi_ps(r[i], r[i + 1]);
                let (t0, t1, t2, t3) = (lo(0), hi(0), lo(2), hi(2));
                let (t4, t5, t6, t7) = (lo(4), hi(4), lo(6), hi(6));
                let a = [
                    _mm256_shuffle_ps::<0x44>(t0, t2),
                    _mm256_shuffle_ps::<0xEE>(t0, t2),
                    _mm256_shuffle_ps::<0x44>(t1, t3),
                    _mm256_shuffle_ps::<0xEE>(t1, t3),
                ];
                let b = [
                    _mm256_shuffle_ps::<0x44>(t4, t6),
                    _mm256_shuffle_ps::<0xEE>(t4, t6),
                    _mm256_shuffle_ps::<0x44>(t5, t7),
                    _mm256_shuffle_ps::<0xEE>(t5, t7),
                ];
                for j in 0..4 {
                    *acc = _mm256_add_ps(*acc, _mm256_permute2f128_ps::<0x20>(a[j], b[j]));
                }
                for j in 0..4 {
                    *acc = _mm256_add_ps(*acc, _mm256_permute2f128_ps::<0x31>(a[j], b[j]));
                }
            }
            t += 8;
        } else {
            assert!(o < len, "an image past a row of grad_out");
            for (h, acc) in acc.iter_mut().enumerate() {
                let v: [f32; 8] = std::array::from_fn(|i| *rows[8 * h + i].add(o));
                *acc = _mm256_add_ps(*acc, _mm256_loadu_ps(v.as_ptr()));
            }
            t += 1;
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adjoint::ordered_sum;

    /// Each row's sum against `ordered_sum` of its terms by `add_f32`, bit for bit: rows 1-40
    /// (groups of sixteen, a last one short), image lists of ascending runs (eights, and runs
    /// that stop short of eight), a kept position last, descending and scattered ones, sums
    /// past a block; values of every magnitude, -0.0, infinities and NaNs of several payloads.
    #[test]
    fn chains_are_each_rows_ordered_sum() {
        let mut draw = crate::draws(0x5eed_c4a1);
        let specials =
            [-0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, f32::from_bits(0x7fa0_0001), f32::from_bits(0xffc0_0f00)];
        let value = |draw: &mut dyn FnMut(u64) -> u64| match draw(40) {
            0 => specials[draw(specials.len() as u64) as usize],
            // Magnitudes far apart, so that any other order or grouping rounds otherwise.
            _ => (draw(2000) as f32 - 1000.0) * 2f32.powi(draw(40) as i32 - 20),
        };
        let (mut nans, mut blocks) = (0, 0);
        for case in 0..300 {
            let (rows, len) = (1 + draw(40) as usize, 1 + draw(700) as usize);
            let data: Vec<Vec<f32>> = (0..rows).map(|_| (0..len).map(|_| value(&mut draw)).collect()).collect();
            let srcs: Vec<&[f32]> = data.iter().map(|row| &row[..]).collect();
            let run = |start: usize, n: usize| (start..start + n).filter(|&o| o < len).collect::<Vec<_>>();
            let mut images = match case % 5 {
                // An edge's corner before and after: ascending, the kept position last.
                0 => run(0, len),
                1 => [run(1, len), vec![0]].concat(),
                // Runs of 3-12 from random starts, some overlapping.
                2 => (0..1 + draw(8)).flat_map(|_| run(draw(len as u64) as usize, 3 + draw(10) as usize)).collect(),
                3 => (0..len).rev().collect(),
                _ => (0..2 + draw(600)).map(|_| draw(len as u64) as usize).collect(),
            };
            if images.len() < 2 {
                images = vec![0, len - 1];
            }
            blocks += usize::from(images.len() > crate::adjoint::BLOCK);
            let mut sums = vec![f32::NAN; rows];
            f32_chains(&srcs, &images, &mut sums);
            for (r, (src, sum)) in srcs.iter().zip(&sums).enumerate() {
                let want = ordered_sum(images.iter().map(|&o| src[o]), images.len(), 0.0, add_f32);
                assert_eq!(sum.to_bits(), want.to_bits(), "case {case}: row {r} of {rows}, {} images", images.len());
                nans += usize::from(want.is_nan());
            }
        }
        // The NaN rule's rows seen, and sums past a block.
        assert!(nans > 20 && blocks > 20, "{nans} NaN sums, {blocks} past a block");
    }

    /// An image past a row is refused, wherever it falls: in an eight or one at a time.
    #[test]
    fn an_image_past_a_row_is_refused() {
        let (long, short) = (vec![1.0f32; 64], vec![1.0f32; 20]);
        for images in [(0..24).collect::<Vec<_>>(), vec![0, 20], vec![3, 21, 2]] {
            let srcs: Vec<&[f32]> = vec![&long, &short, &long];
            let result = std::panic::catch_unwind(|| f32_chains(&srcs, &images, &mut [0.0; 3]));
            assert!(result.is_err(), "{images:?} read past a row of 20");
        }
    }
}
