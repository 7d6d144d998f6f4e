//! Interior padding on the CPU (JAX's `lax.pad`): each input element that survives the crops
//! written at its place, `begin + i * step` on every axis (`step` the interior count plus
//! one), a run at a time where an axis has no interior padding, and the constant in the places
//! between: every output element written once, in order. The gradient is the same walk the
//! other way: each input element reads its one output position (a strided slice), zero where
//! it was cropped.

use std::mem::MaybeUninit;

use crate::copy::{copy_bytes, uninit_ref};
use crate::error::{PadError, Result};
use crate::plan::{Lattice, PadPlan};

/// `count` runs of `len` kept input elements, back to back from element `input`, landing `gap`
/// elements apart from output element `output` (a row's kept elements: one run of them where
/// the row has no interior padding, else one run each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Runs {
    input: usize,
    output: usize,
    len: usize,
    count: usize,
    gap: usize,
}

impl Runs {
    /// Each run as (input, output, len).
    fn each(self) -> impl Iterator<Item = (usize, usize, usize)> {
        (0..self.count).map(move |j| (self.input + j * self.len, self.output + j * self.gap, self.len))
    }
}

/// Calls `run` for each row of kept input elements, in row-major order of the input. Nothing
/// where nothing is kept.
fn for_each_run(plan: &PadPlan, mut run: impl FnMut(Runs)) {
    let (in_shape, out_shape) = (plan.in_shape(), plan.out_shape());
    let lattices: Vec<Lattice> = (0..in_shape.len()).map(|d| plan.lattice(d)).collect();
    if lattices.iter().any(|l| l.count == 0) {
        return;
    }
    // Trailing axes that neither move nor crop become one unit of `chunk` elements.
    let mut axes = lattices.len();
    let mut chunk = 1;
    while axes > 0 {
        let l = lattices[axes - 1];
        if !(l.step == 1 && l.count == in_shape[axes - 1] && l.count == out_shape[axes - 1]) {
            break;
        }
        chunk *= l.count;
        axes -= 1;
    }
    if axes == 0 {
        return run(Runs { input: 0, output: 0, len: chunk, count: 1, gap: chunk });
    }
    // Element strides of each axis, in the input and the output.
    let mut strides = vec![(chunk, chunk); axes];
    for d in (0..axes - 1).rev() {
        strides[d] = (strides[d + 1].0 * in_shape[d + 1], strides[d + 1].1 * out_shape[d + 1]);
    }
    // The innermost axis left: its kept elements are `chunk` apart in the input (its stride),
    // `step * chunk` in the output.
    let last = lattices[axes - 1];
    let mut inner = |i: usize, o: usize| {
        let (input, output) = (i + last.in_first * chunk, o + last.out_first * chunk);
        run(match last.step {
            1 => Runs { input, output, len: last.count * chunk, count: 1, gap: last.count * chunk },
            step => Runs { input, output, len: chunk, count: last.count, gap: step * chunk },
        })
    };
    // The outer axes as an odometer over their kept indices.
    let outer = &lattices[..axes - 1];
    let mut at = vec![0usize; outer.len()];
    loop {
        let (mut i, mut o) = (0, 0);
        for (d, l) in outer.iter().enumerate() {
            i += (l.in_first + at[d]) * strides[d].0;
            o += (l.out_first + at[d] * l.step) * strides[d].1;
        }
        inner(i, o);
        let mut d = outer.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            at[d] += 1;
            if at[d] < outer[d].count {
                break;
            }
            at[d] = 0;
        }
    }
}

/// Pads elements of `width` bytes: every byte of `output` written once, the kept elements and
/// the constant between them in one pass (a fill first and the kept elements again cost a
/// tenth more, measured against numpy's slice assignment).
pub(super) fn pad_fixed(plan: &PadPlan, width: usize, input: &[u8], output: &mut [MaybeUninit<u8>], constant: &[u8]) {
    let constant = &constant[..width];
    let input = uninit_ref(input);
    // Output bytes written so far: runs come in increasing output order.
    let mut done = 0;
    for_each_run(plan, |r| {
        let (at, from) = (r.output * width, &input[r.input * width..(r.input + r.count * r.len) * width]);
        fill(&mut output[done..at], constant);
        done = (r.output + (r.count - 1) * r.gap + r.len) * width;
        // A strided row of small pieces: where the piece and its gap are a few bytes, each
        // gap written whole from a block of the piece and the constant; else pieces of a
        // word's size, each a move of that size, the constant between them in moves of the
        // same size.
        if r.count > 1 && scatter_small(r.len * width, r.gap * width, &mut output[at..done], from, constant) {
            return;
        }
        match (r.count > 1, r.len * width) {
            (true, 1) => scatter::<1>(&mut output[at..done], r.gap * width, from, constant),
            (true, 2) => scatter::<2>(&mut output[at..done], r.gap * width, from, constant),
            (true, 4) => scatter::<4>(&mut output[at..done], r.gap * width, from, constant),
            (true, 8) => scatter::<8>(&mut output[at..done], r.gap * width, from, constant),
            (true, 16) => scatter::<16>(&mut output[at..done], r.gap * width, from, constant),
            (true, 3) => scatter::<3>(&mut output[at..done], r.gap * width, from, constant),
            (true, 6) => scatter::<6>(&mut output[at..done], r.gap * width, from, constant),
            (true, 12) => scatter::<12>(&mut output[at..done], r.gap * width, from, constant),
            _ => {
                let mut end = at;
                for (i, o, len) in r.each() {
                    fill(&mut output[end..o * width], constant);
                    end = (o + len) * width;
                    copy_bytes(&mut output[o * width..end], &input[i * width..(i + len) * width])
                }
            }
        }
    });
    fill(&mut output[done..], constant);
}

/// `from`'s `W`-byte pieces to `output`, `gap` bytes apart, the constant (`W` a multiple of
/// its width) in the `W`-byte places between. `output` ends with the last piece.
fn scatter<const W: usize>(output: &mut [MaybeUninit<u8>], gap: usize, from: &[MaybeUninit<u8>], constant: &[u8]) {
    let mut between = [MaybeUninit::new(0u8); W];
    for (b, c) in between.iter_mut().zip(constant.iter().cycle()) {
        *b = MaybeUninit::new(*c);
    }
    let count = from.len() / W;
    let (body, last) = output.split_at_mut((count - 1) * gap);
    let (pieces, last_piece) = from.split_at((count - 1) * W);
    last.copy_from_slice(last_piece);
    if gap == 2 * W {
        // One interior element (a stride-2 transposed convolution's): a piece and the constant.
        for (pair, piece) in body.chunks_exact_mut(2 * W).zip(pieces.chunks_exact(W)) {
            pair[..W].copy_from_slice(piece);
            pair[W..].copy_from_slice(&between);
        }
        return;
    }
    for (places, piece) in body.chunks_exact_mut(gap).zip(pieces.chunks_exact(W)) {
        let (first, rest) = places.split_at_mut(W);
        first.copy_from_slice(piece);
        for place in rest.chunks_exact_mut(W) {
            place.copy_from_slice(&between);
        }
    }
}

/// The (piece, gap) sizes in bytes written as blocks ([`scatter_blocks`]), and the call that
/// writes a row of them, saying whether it did.
macro_rules! small_blocks {
    ($(($w:literal, $g:literal)),*) => {
        #[cfg(test)]
        const BLOCKS: &[(usize, usize)] = &[$(($w, $g)),*];

        fn scatter_small(piece: usize, gap: usize, output: &mut [MaybeUninit<u8>], from: &[MaybeUninit<u8>], constant: &[u8]) -> bool {
            match (piece, gap) {
                $(($w, $g) => scatter_blocks::<$w, $g>(output, from, constant),)*
                _ => return false,
            }
            true
        }
    };
}
small_blocks!(
    (1, 2),
    (1, 3),
    (1, 4),
    (2, 4),
    (2, 6),
    (2, 8),
    (3, 6),
    (3, 9),
    (4, 8),
    (4, 12),
    (4, 16),
    (6, 12),
    (8, 16),
    (12, 24)
);

/// `from`'s `W`-byte pieces to `output`, each at the start of a block of `G` bytes whose rest
/// is the constant (`W` a multiple of its width); `output` ends with the last piece. Both sizes
/// known, a block is a few register moves.
fn scatter_blocks<const W: usize, const G: usize>(
    output: &mut [MaybeUninit<u8>],
    from: &[MaybeUninit<u8>],
    constant: &[u8],
) {
    let mut template = [MaybeUninit::new(0u8); G];
    for (b, c) in template[W..].iter_mut().zip(constant.iter().cycle()) {
        *b = MaybeUninit::new(*c);
    }
    let count = from.len() / W;
    let (body, last) = output.split_at_mut((count - 1) * G);
    last.copy_from_slice(&from[(count - 1) * W..]);
    let done = widened::<W, G>(body, from, &template);
    for (block, piece) in body[done * G..].chunks_exact_mut(G).zip(from[done * W..].chunks_exact(W)) {
        let mut b = template;
        b[..W].copy_from_slice(piece);
        block.copy_from_slice(&b);
    }
}

/// Blocks a piece is a power-of-two fraction of, written 32 bytes at a time where the CPU has
/// AVX2: the pieces zero-extended into their blocks (x86 is little-endian: a piece is its
/// block's first bytes) and or'd with the constant's bytes. How many of `body`'s blocks it
/// wrote (none elsewhere): f16 \[8,4096,256\] dilated by 3 on its last axis 9.6-12.0 to 5.5-5.6 ms
/// (one core).
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))] // no widening elsewhere
fn widened<const W: usize, const G: usize>(
    body: &mut [MaybeUninit<u8>],
    from: &[MaybeUninit<u8>],
    template: &[MaybeUninit<u8>; G],
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if matches!((W, G), (1, 2) | (1, 4) | (2, 4) | (2, 8) | (4, 8)) && std::arch::is_x86_feature_detected!("avx2") {
        let per_step = 32 / G;
        let steps = body.len() / G / per_step;
        // SAFETY: the template's bytes are all written (the piece's as zero, the rest the
        // constant's).
        let constant: [u8; 32] = std::array::from_fn(|i| unsafe { template[i % G].assume_init() });
        // SAFETY: AVX2 is present (just checked); `steps` steps write 32 bytes each within
        // `body` and read `per_step * W` bytes each within `from` (one piece a block); the
        // input's bytes are initialised.
        unsafe { widen_avx2::<W, G>(body.as_mut_ptr().cast(), from.as_ptr().cast(), steps, &constant) };
        return steps * per_step;
    }
    0
}

/// `steps` times: `32 / G` pieces of `W` bytes from `src` zero-extended to `G` bytes each,
/// or'd with `constant`, stored at `dst`; both move on.
///
/// # Safety
/// The CPU has AVX2; (W, G) is one of [`widened`]'s; `src` is valid for `steps * 32 / G * W`
/// bytes of reads, initialised, and `dst` for `steps * 32` bytes of writes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn widen_avx2<const W: usize, const G: usize>(dst: *mut u8, src: *const u8, steps: usize, constant: &[u8; 32]) {
    use std::arch::x86_64::*;
    // SAFETY: every load and store lies within the caller's ranges, step by step; unaligned
    // loads and stores need no alignment.
    unsafe {
        let c = _mm256_loadu_si256(constant.as_ptr().cast());
        for s in 0..steps {
            let (from, to) = (src.add(s * 32 / G * W), dst.add(s * 32));
            let wide = match (W, G) {
                (1, 2) => _mm256_cvtepu8_epi16(_mm_loadu_si128(from.cast())),
                (1, 4) => _mm256_cvtepu8_epi32(_mm_loadl_epi64(from.cast())),
                (2, 4) => _mm256_cvtepu16_epi32(_mm_loadu_si128(from.cast())),
                (2, 8) => _mm256_cvtepu16_epi64(_mm_loadl_epi64(from.cast())),
                _ => _mm256_cvtepu32_epi64(_mm_loadu_si128(from.cast())),
            };
            _mm256_storeu_si256(to.cast(), _mm256_or_si256(wide, c));
        }
    }
}

/// `output` as copies of `pattern`, back to back (its length a multiple of the pattern's).
fn fill(output: &mut [MaybeUninit<u8>], pattern: &[u8]) {
    if pattern.iter().all(|&b| b == pattern[0]) {
        output.fill(MaybeUninit::new(pattern[0]));
        return;
    }
    let Some(first) = output.get_mut(..pattern.len()) else { return };
    first.copy_from_slice(uninit_ref(pattern));
    // Doubling what is written: a copy per power of two, not per element.
    let mut done = pattern.len();
    while done < output.len() {
        let (written, rest) = output.split_at_mut(done);
        let n = done.min(rest.len());
        copy_bytes(&mut rest[..n], &written[..n]);
        done += n;
    }
}

/// Pads strings: `output` (of the output's length) holds the constant everywhere but the
/// kept elements' places, each written once. The output's text must fit in `budget` bytes, checked before any is
/// copied.
pub(super) fn pad_strings(
    plan: &PadPlan,
    input: &[String],
    output: &mut [String],
    constant: &str,
    budget: u64,
) -> Result<()> {
    let (mut kept, mut kept_bytes) = (0u64, 0u64);
    for_each_run(plan, |r| {
        let from = &input[r.input..r.input + r.count * r.len];
        kept += from.len() as u64;
        kept_bytes += from.iter().map(|s| s.len() as u64).sum::<u64>();
    });
    let constant_bytes = (output.len() as u64 - kept).saturating_mul(constant.len() as u64);
    if kept_bytes.saturating_add(constant_bytes) > budget {
        return Err(PadError::TooLarge {
            what: "the output strings hold more than the limit (max_output_bytes)".into(),
        });
    }
    let (mut unlimited, mut error) = (u64::MAX, None);
    // The kept strings and the constant between them, each place written once, in order.
    let mut done = 0;
    for_each_run(plan, |r| {
        for (i, o, len) in r.each() {
            let (between, kept) = output[done..o + len].split_at_mut(o - done);
            super::store::copy_strings(between, std::iter::repeat(constant), &mut unlimited, &mut error);
            super::store::copy_strings(kept, input[i..i + len].iter().map(String::as_str), &mut unlimited, &mut error);
            done = o + len;
        }
    });
    super::store::copy_strings(&mut output[done..], std::iter::repeat(constant), &mut unlimited, &mut error);
    error.map_or(Ok(()), Err)
}

/// The gradient, elements of `width` bytes: each input element's is the output gradient at
/// its place, or zero (+0 in every float and complex type) where it was cropped.
pub(super) fn backward(plan: &PadPlan, width: usize, grad_out: &[u8]) -> Vec<u8> {
    let mut grad_in = vec![0u8; plan.in_len() * width];
    for_each_run(plan, |r| {
        for (i, o, len) in r.each() {
            grad_in[i * width..(i + len) * width].copy_from_slice(&grad_out[o * width..(o + len) * width])
        }
    });
    grad_in
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataType, PadRequest};

    /// Rows of small pieces (an element, or a few of a trailing axis left alone) a few bytes
    /// apart, each size of piece and gap the blocks and scatters take: the reference's bytes,
    /// a constant of unequal bytes between.
    #[test]
    fn small_pieces_land_in_their_blocks() {
        use crate::{cpu, reference, Tensor};
        let mut seen = std::collections::BTreeSet::new();
        for (dtype, width) in
            [(DataType::Uint8, 1), (DataType::Float16, 2), (DataType::Float32, 4), (DataType::Float64, 8)]
        {
            // Rows of 5 pieces, and of 41: 32-byte steps of widened blocks and their tails.
            for (channels, len) in (1..4usize).flat_map(|c| [(c, 5), (c, 41)]) {
                for interior in 1..4i64 {
                    let shape = [2, len, channels];
                    let request =
                        PadRequest::new(vec![0, 1, 0, 1, 2, 0]).interior(vec![0, interior, 0]).constant(-1.7f32);
                    let request = if width == 1 { request.constant(171u8) } else { request };
                    let plan = PadPlan::new(dtype, &shape, &request).unwrap();
                    let bytes: Vec<u8> = (0..2 * len * channels * width).map(|i| (i * 37 % 251) as u8).collect();
                    let x = Tensor::from_bytes(dtype, shape.to_vec(), bytes).unwrap();
                    let what = format!(
                        "{dtype} piece {} gap {}",
                        channels * width,
                        (interior as usize + 1) * channels * width
                    );
                    assert_eq!(cpu::pad(&plan, &x).unwrap(), reference::pad(&plan, &x), "{what}");
                    seen.insert((channels * width, (interior as usize + 1) * channels * width));
                }
            }
        }
        assert!(BLOCKS.iter().all(|b| seen.contains(b)), "every block size met: {seen:?}");
    }

    /// Where the CPU has AVX2, blocks a piece is a power-of-two fraction of are widened 32
    /// bytes a step, every whole step of a row (the rest, the scalar loop's), each block its
    /// piece then the constant's bytes; elsewhere none.
    #[test]
    fn widened_blocks_are_whole_steps_of_pieces_and_constant() {
        fn check<const W: usize, const G: usize>() {
            let blocks = 41;
            let mut template = [MaybeUninit::new(0u8); G];
            template[W..].iter_mut().enumerate().for_each(|(i, b)| *b = MaybeUninit::new(0xA0 + i as u8));
            let from: Vec<MaybeUninit<u8>> = (0..blocks * W).map(|i| MaybeUninit::new((i * 37 % 251) as u8)).collect();
            let mut body = vec![MaybeUninit::new(0u8); blocks * G];
            let done = widened::<W, G>(&mut body, &from, &template);
            #[cfg(target_arch = "x86_64")]
            let want = match std::arch::is_x86_feature_detected!("avx2") && 32 % G == 0 && G.is_multiple_of(W) {
                true => blocks / (32 / G) * (32 / G),
                false => 0,
            };
            #[cfg(not(target_arch = "x86_64"))]
            let want = 0;
            assert_eq!(done, want, "piece {W} block {G}");
            // SAFETY: every byte here was written (body's as zeros first).
            let bytes = |v: &[MaybeUninit<u8>]| v.iter().map(|b| unsafe { b.assume_init() }).collect::<Vec<u8>>();
            for (b, (block, piece)) in body.chunks(G).zip(from.chunks(W)).take(done).enumerate() {
                let expected = [bytes(piece), bytes(&template[W..])].concat();
                assert_eq!(bytes(block), expected, "piece {W} block {G}: block {b}");
            }
        }
        check::<1, 2>();
        check::<1, 4>();
        check::<2, 4>();
        check::<2, 8>();
        check::<4, 8>();
        // Other sizes are the scalar loop's.
        check::<3, 6>();
    }

    #[test]
    fn runs_cover_every_kept_element_once() {
        // [2, 3, 4] with interior (1, 0, 2) and pads that crop and pad: every run's elements
        // are where the definition puts them, and together they are every kept element.
        let request = PadRequest::new(vec![1, -1, 0, 0, 2, -3]).interior(vec![1, 0, 2]);
        let plan = PadPlan::new(DataType::Float32, &[2, 3, 4], &request).unwrap();
        let mut seen = Vec::new();
        for_each_run(&plan, |r| {
            for (i, o, len) in r.each() {
                seen.extend((0..len).map(|k| (i + k, o + k)))
            }
        });
        let mut expected = Vec::new();
        let out = plan.out_shape();
        for (i, (a, b, c)) in (0..2).flat_map(|a| (0..3).flat_map(move |b| (0..4).map(move |c| (a, b, c)))).enumerate()
        {
            let place = [1 + 2 * a as i64, -1 + b as i64, 3 * c as i64];
            if place.iter().zip(out).all(|(&p, &m)| (0..m as i64).contains(&p)) {
                expected.push((i, (place[0] as usize * out[1] + place[1] as usize) * out[2] + place[2] as usize));
            }
        }
        assert_eq!(seen, expected);
    }

    #[test]
    fn rows_without_interior_padding_move_as_one_run() {
        // Interior padding outside, none on the padded rows: a run a kept row, of its kept part.
        let request = PadRequest::new(vec![0, 0, -1, 1, 0, 2]).interior(vec![1, 0, 0]);
        let plan = PadPlan::new(DataType::Float32, &[2, 3, 5], &request).unwrap();
        let mut runs = Vec::new();
        for_each_run(&plan, |r| runs.push((r.input, r.output, r.len, r.count)));
        let out = plan.out_shape();
        assert_eq!(out, &[4, 3, 6]);
        // Row (a, b) of the input, from its element 1, lands on row (2a, b) of the output.
        let expected: Vec<_> =
            (0..2).flat_map(|a| (0..3).map(move |b| (a * 15 + b * 5 + 1, (2 * a * 3 + b) * 6, 4, 1))).collect();
        assert_eq!(runs, expected);
    }
}
