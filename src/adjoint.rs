//! The pad's adjoint, and the one order its sums take on every path.
//!
//! A pad's output element at `(o_0, …, o_r-1)` reads input `(s_0(o_0), …, s_r-1(o_r-1))`
//! (or the constant), axis by axis, so the gradient of input element `(k_0, …, k_r-1)` is the
//! sum of the output's gradient over the product of each axis's *images* of `k_d`: the
//! output coordinates whose source is `k_d` ([`images`]). The sum is taken axis by axis,
//! the last axis innermost, as a nest:
//!
//! `g_in(k) = S_0(o_0 ∈ I_0(k_0): S_1(o_1 ∈ I_1(k_1): … S_r-1(o_r-1 ∈ I_r-1(k_r-1): g_out(o))))`
//!
//! where each `S_d` is [`ordered_sum`] of its terms in the order [`images`] gives: the pad
//! before (ascending), the pad after (ascending), the kept position last, from `+0.0`; a sum
//! of one term (an axis left as it is, or an index its pads do not fold onto) is that term,
//! bits and all, so an element of one term in all is a slice of the gradient, `-0.0` and a
//! signalling NaN's bits kept, as JAX's and PyTorch's gradients keep them. (An element of
//! several terms is the same bits either way: a sum from `+0.0` is never `-0.0`, and the NaN
//! rule below quiets what it keeps.) That is the order of Burn's own pad's
//! backward (its borders' gradients added first, its kept part's last, axis by axis from the
//! last), so on constant and reflect pads, and edge pads of one element a side, the bits are
//! Burn's. Long sums are cut into at most [`MAX_BLOCKS`] blocks (of [`BLOCK`] terms or more),
//! each summed in order from `+0.0`, the blocks' sums then added in order from `+0.0`: the
//! GPU kernel sums the blocks of one element on as many lanes, and its bits are the CPU's.
//! Each addition keeps one NaN rule (the first NaN operand, quieted; a NaN made from
//! infinities the positive quiet one), which the paths write out
//! rather than leave to their hardware. Nothing here depends on how a path splits its work,
//! so the gradient is the same bits on every run and every path.

use crate::mode::Mode;
use crate::plan::AxisMap;

/// Terms a block of a long sum holds at least ([`ordered_sum`]).
pub const BLOCK: usize = 256;

/// Blocks a long sum is cut into at most ([`ordered_sum`]): a GPU workgroup's lanes.
pub const MAX_BLOCKS: usize = 64;

/// The block length of a sum of `terms` terms: [`BLOCK`], or more where the sum would
/// otherwise take more than [`MAX_BLOCKS`] blocks.
pub fn block_len(terms: usize) -> usize {
    terms.div_ceil(MAX_BLOCKS).max(BLOCK)
}

/// Adds `terms` in the documented order: one term is itself, bits and all (a slice of the
/// gradient: -0.0 and a signalling NaN kept); up to a block's length in order from `zero`; a
/// longer sum in consecutive blocks of [`block_len`] terms, each in order from `zero`, then
/// the blocks' sums in order from `zero`. `add` is the type's own rounded addition.
pub fn ordered_sum<T: Copy>(terms: impl IntoIterator<Item = T>, count: usize, zero: T, add: impl Fn(T, T) -> T) -> T {
    let block = block_len(count);
    let mut terms = terms.into_iter();
    if count == 1 {
        return terms.next().expect("count is the terms'");
    }
    if count <= block {
        return terms.fold(zero, &add);
    }
    let mut total = zero;
    let mut left = count;
    while left > 0 {
        let n = left.min(block);
        let part = terms.by_ref().take(n).fold(zero, &add);
        total = add(total, part);
        left -= n;
    }
    total
}

/// Consecutive output positions of a pad, `o..o + len`, whose sources are input indices in a
/// line: position `o + i` reads `k + i` (`slope` 1), `k - i` (-1) or `k` (0: an edge's, or an
/// axis of one element). A pad's positions are a few such runs: two a period, whatever the
/// pad's length ([`pad_runs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) o: usize,
    pub(crate) k: usize,
    pub(crate) len: usize,
    pub(crate) slope: isize,
}

impl Run {
    /// The input indices the run reads, ascending.
    pub(crate) fn indices(&self) -> std::ops::Range<usize> {
        match self.slope {
            -1 => self.k + 1 - self.len..self.k + 1,
            0 => self.k..self.k + 1,
            _ => self.k..self.k + self.len,
        }
    }
}

/// The pads' positions of `axis` (before, then after, ascending) as [`Run`]s, each as long as
/// its line goes, found from the mode's index rule ([`AxisMap::source`]): a run's length by
/// bisection, since a line of slope 1 or -1 leaves the pad's sources only where it leaves
/// the kept indices (a reflection turns, a wrap jumps, at the axis's ends), so no later
/// position returns to it. None for a constant pad; one run a pad for an edge's.
pub(crate) fn pad_runs(axis: &AxisMap, mode: Mode) -> Vec<Run> {
    // Two runs a period of each pad: a few, grown once at most for most pads (the gradient
    // builds them every call; growing a push at a time was a third of a small one's time).
    let mut runs = Vec::with_capacity(8);
    for pad in [0..axis.pad_before, axis.pad_before + axis.kept..axis.out_len] {
        let mut o = pad.start;
        while o < pad.end {
            let Some(k) = axis.source(mode, o) else { break };
            let on_line = |i: usize, slope: isize| {
                k.checked_add_signed(slope * i as isize).is_some_and(|at| axis.source(mode, o + i) == Some(at))
            };
            // An edge's pad, or any pad of one kept element, reads one index throughout.
            if mode == Mode::Edge || axis.kept == 1 {
                runs.push(Run { o, k, len: pad.end - o, slope: 0 });
                break;
            }
            let slope = [1, -1].into_iter().find(|&s| o + 1 < pad.end && on_line(1, s)).unwrap_or(1);
            // The longest run on the line: on_line(len - 1) holds, on_line(len) does not; the
            // rest of the pad first (a pad no longer than the kept indices is one run: one
            // look, where bisection took ten of a 512 pad's).
            let (mut len, mut past) = (1, pad.end - o + 1);
            if on_line(pad.end - o - 1, slope) {
                len = pad.end - o;
            }
            while past - len > 1 {
                let mid = len + (past - len) / 2;
                match on_line(mid - 1, slope) {
                    true => len = mid,
                    false => past = mid,
                }
            }
            runs.push(Run { o, k, len, slope });
            o += len;
        }
    }
    runs
}

/// The output coordinates of `axis` whose source is input index `k` (of the whole input
/// axis), in the order their gradients are summed: the pad before, ascending; the pad after,
/// ascending; the kept position last. Empty where `k` is cropped away.
pub fn images(axis: &AxisMap, mode: Mode, k: usize) -> Vec<usize> {
    let kept_end = axis.pad_before + axis.kept;
    let pads = (0..axis.pad_before).chain(kept_end..axis.out_len).filter(|&o| axis.source(mode, o) == Some(k));
    let kept =
        (axis.crop_start..axis.crop_start + axis.kept).contains(&k).then(|| axis.pad_before + k - axis.crop_start);
    pads.chain(kept).collect()
}

/// The longest run of kept indices of `axis` (counted from its first kept one) with one image
/// each (their kept position): most of a gradient, a slice of the output's gradient (the CPU
/// gradient's one copy on the innermost axis). Found from the few ranges of kept indices the
/// pads read, whatever the axis's length.
pub(crate) fn one_image_run(axis: &AxisMap, mode: Mode) -> std::ops::Range<usize> {
    let (n, p, q) = (axis.kept as u64, axis.pad_before as u64, axis.pad_after as u64);
    // The kept indices the pads read, as ranges [a, b) that may overlap.
    let mut read = Vec::with_capacity(8);
    match mode {
        Mode::Constant => {}
        Mode::Edge => {
            read.extend((p > 0).then_some((0, 1)));
            read.extend((q > 0).then_some((n.saturating_sub(1), n)));
        }
        Mode::Reflect | Mode::Wrap | Mode::Symmetric => {
            let period = mode.period(n);
            // Each pad's offsets from the first kept position: its residues in the period are
            // at most two runs; those past `n` read the mirror image (reflect, symmetric).
            for (first, len) in [(-(p as i128), p), (n as i128, q)] {
                if len >= period {
                    read.push((0, n));
                    continue;
                }
                let r = first.rem_euclid(period as i128) as u64;
                let wrapped = (r + len > period).then(|| (0, r + len - period));
                for (a, b) in std::iter::once((r, (r + len).min(period))).chain(wrapped) {
                    if a < n {
                        read.push((a, b.min(n)));
                    }
                    if b > n {
                        let mirror = |t: u64| match mode {
                            Mode::Reflect => period - t,
                            Mode::Symmetric => period - 1 - t,
                            Mode::Wrap | Mode::Constant | Mode::Edge => unreachable!("a wrap's period is n"),
                        };
                        read.push((mirror(b - 1), mirror(a.max(n)) + 1));
                    }
                }
            }
        }
    }
    read.sort_unstable();
    let (mut best, mut at) = (0..0, 0);
    for (a, b) in read.into_iter().chain([(n, n)]) {
        if a > at && a - at > best.end - best.start {
            best = at..a;
        }
        at = at.max(b);
    }
    best.start as usize..best.end as usize
}

/// The most images any index of `axis` has in `mode` (1 for an axis left as it is); for a
/// reflection of three elements or more and for symmetric, up to two more (every period
/// counted with both of an index's images): what the GPU's gradient sizes its state and its
/// lanes' sums by.
pub(crate) fn most_images(axis: &AxisMap, mode: Mode) -> u64 {
    if axis.is_identity() || axis.kept == 0 {
        return 1;
    }
    let (out, n) = (axis.out_len as u64, axis.kept as u64);
    match mode {
        Mode::Constant => 1,
        Mode::Edge if n == 1 => out,
        Mode::Edge => (axis.pad_before.max(axis.pad_after) + 1) as u64,
        Mode::Wrap => out.div_ceil(n),
        // A reflection of one or two elements: each index its own mirror image, one a period.
        Mode::Reflect if n <= 2 => out.div_ceil(mode.period(n)),
        // Two images a period: its index and the mirror image.
        Mode::Reflect | Mode::Symmetric => 2 * out.div_ceil(mode.period(n)),
    }
}

/// The output coordinates of `axis` that read any of the input indices `range` (of the whole
/// input axis), as `(lo, hi)`: the smallest of their [`images`] and one past the largest;
/// `None` where every index of `range` is cropped away. What a window of the gradient along
/// the axis reads of the output's gradient, found without visiting the range.
pub(crate) fn image_hull(axis: &AxisMap, mode: Mode, range: std::ops::Range<usize>) -> Option<(usize, usize)> {
    let (n, p, out) = (axis.kept as u64, axis.pad_before as u64, axis.out_len as u64);
    let first = range.start.max(axis.crop_start) as u64 - axis.crop_start as u64;
    let end = (range.end.min(axis.crop_start + axis.kept) as u64).saturating_sub(axis.crop_start as u64);
    if first >= end {
        return None;
    }
    let (lo, hi) = match mode {
        Mode::Constant => (p + first, p + end),
        Mode::Edge => (if first == 0 { 0 } else { p + first }, if end == n { out } else { p + end }),
        Mode::Reflect | Mode::Wrap | Mode::Symmetric => {
            // Output position x reads kept index j where x = p + t + m * period and t is j
            // or, reflect and symmetric, j's mirror image in the period: the t of the range
            // are at most two runs, their positions' residues at most four.
            let period = mode.period(n);
            let mirrored = match mode {
                Mode::Reflect if n > 1 => Some((period + 1 - end, period + 1 - first)),
                Mode::Symmetric => Some((period - end, period - first)),
                // A reflection of one element reads it alone, as a wrap does.
                Mode::Reflect | Mode::Wrap | Mode::Constant | Mode::Edge => None,
            };
            let mut residues = Vec::with_capacity(4);
            for (t0, t1) in std::iter::once((first, end)).chain(mirrored) {
                let start = (p + t0) % period;
                let len = t1 - t0;
                residues.push((start, (start + len).min(period)));
                if start + len > period {
                    residues.push((0, start + len - period));
                }
            }
            // A residue r's last position below `out` is r + q * period, for the largest q.
            let (last, laps) = ((out - 1) % period, (out - 1) / period);
            let (mut lo, mut hi) = (u64::MAX, 0);
            for (r0, r1) in residues.into_iter().filter(|&(r0, _)| r0 < out) {
                lo = lo.min(r0);
                let top = match r0 <= last {
                    true => (r1 - 1).min(last) + laps * period,
                    false => (r1 - 1) + (laps - 1) * period,
                };
                hi = hi.max(top + 1);
            }
            (lo, hi)
        }
    };
    Some((lo as usize, hi as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataType, PadPlan, PadRequest};

    /// Runs `check(mode, n, (b, e), axis)` on one-axis plans of every mode: lengths 1-5,
    /// crops, pads of many periods (those a mode refuses left out).
    fn each_small_axis(check: impl Fn(Mode, usize, (i64, i64), AxisMap)) {
        for mode in Mode::ALL {
            for n in 1..6usize {
                for (b, e) in [(0i64, 0i64), (1, 0), (0, 2), (3, 4), (-1, 2), (2, -1), (11, 13), (-2, -1), (25, 0)] {
                    if let Ok(plan) = PadPlan::new(DataType::Float32, &[n], &PadRequest::new(vec![b, e]).mode(mode)) {
                        check(mode, n, (b, e), plan.axes()[0]);
                    }
                }
            }
        }
    }

    /// [`each_small_axis`], then axes of 1-9 elements padded by 0-21 a side.
    fn each_axis_and_wide_pads(check: impl Fn(Mode, usize, (i64, i64), AxisMap)) {
        each_small_axis(&check);
        for (mode, n, b, e) in Mode::ALL
            .into_iter()
            .flat_map(|m| (1..10).map(move |n| (m, n)))
            .flat_map(|(m, n)| (0..22).flat_map(move |b| (0..22).map(move |e| (m, n, b, e))))
        {
            if let Ok(plan) = PadPlan::new(DataType::Float32, &[n], &PadRequest::new(vec![b, e]).mode(mode)) {
                check(mode, n, (b, e), plan.axes()[0]);
            }
        }
    }

    /// Every axis's images are exactly the output coordinates whose source is the index, in
    /// the documented order: pad before ascending, pad after ascending, the kept one last;
    /// every mode, crops, pads of many periods, axes of one element.
    #[test]
    fn images_are_the_sources_inverse_in_the_documented_order() {
        each_small_axis(|mode, n, (b, e), axis| {
            let mut seen = vec![0; axis.out_len];
            for k in 0..n {
                let got = images(&axis, mode, k);
                for &o in &got {
                    assert_eq!(axis.source(mode, o), Some(k), "{mode} n={n} pads ({b},{e}): {o} is not {k}'s");
                    seen[o] += 1;
                }
                let kept = axis.crop_start..axis.crop_start + axis.kept;
                if kept.contains(&k) {
                    let (&last, rest) = got.split_last().unwrap();
                    assert_eq!(last, axis.pad_before + k - axis.crop_start, "{mode}: the kept one last");
                    let (before, after): (Vec<usize>, Vec<usize>) = rest.iter().partition(|&&o| o < last);
                    assert_eq!([before.clone(), after.clone()].concat(), rest, "{mode}: before, then after");
                    assert!(before.windows(2).all(|w| w[0] < w[1]) && after.windows(2).all(|w| w[0] < w[1]));
                } else {
                    assert!(got.is_empty(), "{mode}: cropped index {k} has images");
                }
            }
            for (o, &count) in seen.iter().enumerate() {
                let want = usize::from(axis.source(mode, o).is_some());
                assert_eq!(count, want, "{mode} n={n} pads ({b},{e}): output {o}");
            }
        });
    }

    /// The pads' runs are their positions with a source, each once and in order, every
    /// position on its run's line; and few: two a period and the ends (a pad of 512 on an axis
    /// of 16000, one a side), whatever the pad's length. Every mode, crops, pads of many
    /// periods, axes of one element.
    #[test]
    fn pad_runs_are_the_pads_sources_in_a_few_lines() {
        each_small_axis(|mode, n, (b, e), axis| {
            let what = format!("{mode} n={n} pads ({b},{e})");
            let runs = pad_runs(&axis, mode);
            let pads = (0..axis.pad_before).chain(axis.pad_before + axis.kept..axis.out_len);
            let with_source: Vec<usize> = pads.filter(|&o| axis.source(mode, o).is_some()).collect();
            let covered: Vec<usize> = runs.iter().flat_map(|r| r.o..r.o + r.len).collect();
            assert_eq!(covered, with_source, "{what}: {runs:?}");
            for r in &runs {
                for i in 0..r.len {
                    let on_line = r.k as isize + r.slope * i as isize;
                    assert_eq!(axis.source(mode, r.o + i), Some(on_line as usize), "{what}: {r:?} at {i}");
                }
            }
            let period = mode.period(axis.kept as u64) as usize;
            let most = 2 * (axis.pad_before.div_ceil(period) + axis.pad_after.div_ceil(period)) + 2;
            assert!(runs.len() <= most, "{what}: {} runs, more than {most}: {runs:?}", runs.len());
        });
        let audio = PadPlan::new(DataType::Float32, &[16000], &PadRequest::new(vec![512, 512]).mode(Mode::Reflect));
        let runs = pad_runs(&audio.unwrap().axes()[0], Mode::Reflect);
        assert_eq!(runs, [Run { o: 0, k: 512, len: 512, slope: -1 }, Run { o: 16512, k: 15998, len: 512, slope: -1 }]);
    }

    /// The run of one-image indices is the longest run of indices with one image each, every
    /// mode, crops, pads of many periods.
    #[test]
    fn the_one_image_run_is_the_longest() {
        let check = |mode: Mode, n: usize, (b, e): (i64, i64), axis: AxisMap| {
            let ones: Vec<bool> = (0..axis.kept).map(|j| images(&axis, mode, axis.crop_start + j).len() == 1).collect();
            let run = one_image_run(&axis, mode);
            let what = format!("{mode} n={n} pads ({b},{e}): {run:?} of {ones:?}");
            assert!(run.end <= axis.kept && ones[run.clone()].iter().all(|&one| one), "{what}");
            let longest = ones.split(|&one| !one).map(<[bool]>::len).max().unwrap_or(0);
            assert_eq!(run.len(), longest, "{what}");
        };
        each_axis_and_wide_pads(check);
    }

    /// The most images an index has is the most of any index's [`images`] (a reflection's at
    /// most two more: its last period counted whole), every mode, crops, pads of many periods.
    #[test]
    fn most_images_is_the_most_any_index_has() {
        let check = |mode: Mode, n: usize, (b, e): (i64, i64), axis: AxisMap| {
            let most = (0..axis.in_len).map(|k| images(&axis, mode, k).len()).max().unwrap_or(0).max(1);
            let bound = most_images(&axis, mode) as usize;
            let what = format!("{mode} n={n} pads ({b},{e}): {bound} for {most}");
            match mode {
                Mode::Reflect | Mode::Symmetric => assert!(bound >= most && bound <= most + 2, "{what}"),
                Mode::Constant | Mode::Edge | Mode::Wrap => assert_eq!(bound, most, "{what}"),
            }
        };
        each_axis_and_wide_pads(check);
    }

    /// A range's hull is the least and one past the greatest of its indices' images, every
    /// mode, crops, wide pads; `None` where the range is all cropped away.
    #[test]
    fn hulls_span_the_images_of_a_range() {
        each_small_axis(|mode, n, (b, e), axis| {
            for first in 0..n {
                for end in first + 1..=n {
                    let all: Vec<usize> = (first..end).flat_map(|k| images(&axis, mode, k)).collect();
                    let want = all.iter().min().map(|&lo| (lo, all.iter().max().unwrap() + 1));
                    assert_eq!(image_hull(&axis, mode, first..end), want, "{mode} n={n} ({b},{e}) {first}..{end}");
                }
            }
        });
    }

    /// Sums up to a block long run in order from zero; longer ones by blocks, at most
    /// MAX_BLOCKS of them (the order shows in f32: 1 + 2^-24 + ... rounds differently).
    #[test]
    fn long_sums_go_by_blocks() {
        assert_eq!((block_len(10), block_len(BLOCK * MAX_BLOCKS), block_len(BLOCK * MAX_BLOCKS + 1)), (256, 256, 257));
        let add = |a: f32, b: f32| a + b;
        let seq = |v: &[f32]| v.iter().fold(0.0f32, |a, &b| a + b);
        let short: Vec<f32> = (0..BLOCK).map(|i| (i as f32).sin()).collect();
        assert_eq!(ordered_sum(short.iter().copied(), short.len(), 0.0, add).to_bits(), seq(&short).to_bits());
        // 1.0 then many 2^-24: in order they vanish; by blocks each block keeps them.
        let mut long = vec![1.0f32];
        long.extend(std::iter::repeat_n(1.0 / (1 << 24) as f32, 3 * BLOCK));
        let by_blocks = ordered_sum(long.iter().copied(), long.len(), 0.0, add);
        let blocks: Vec<f32> = long.chunks(BLOCK).map(seq).collect();
        assert_eq!(by_blocks.to_bits(), seq(&blocks).to_bits());
        assert_ne!(by_blocks.to_bits(), seq(&long).to_bits(), "the blocks must show");
        assert_eq!(ordered_sum([-0.0f32], 1, 0.0, add).to_bits(), (-0.0f32).to_bits(), "one term is itself");
        assert_eq!(ordered_sum([-0.0f32, -0.0], 2, 0.0, add).to_bits(), 0.0f32.to_bits(), "two from +0.0");
    }
}
