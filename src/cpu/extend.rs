//! Each mode's pads of one axis, filled from its kept blocks already written: constant
//! fills, edge repeats, wrap's period repeated, a mirror's period walked then repeated; and
//! the `Store` they (and the walk over the axes) write through.

use crate::mode::{source_index, Mode};
use crate::plan::AxisMap;

/// Where the output goes and where the input comes from, in chunks.
pub(super) trait Store {
    /// `out[dst..dst+len] = input[src..src+len]`
    fn copy_in(&mut self, dst: usize, src: usize, len: usize);
    /// `out[dst..dst+len] = out[src..src+len]`, ranges disjoint.
    fn copy_out(&mut self, dst: usize, src: usize, len: usize);
    /// `out[dst..dst+len] = constant`
    fn fill(&mut self, dst: usize, len: usize);
    /// `out[dst..dst+len] = out[src..src+len]` with the chunks in reverse order (a mirror),
    /// ranges disjoint.
    fn copy_reversed(&mut self, dst: usize, src: usize, len: usize);
    /// Fills `count` blocks of `block` chunks at `dst` with copies of the block at `src`
    /// (written already; the ranges disjoint).
    fn repeat(&mut self, dst: usize, src: usize, count: usize, block: usize);
    /// Writes the pads of the output row at chunk `out_base` from `Walk::row_pads`, unit by
    /// unit, from the input row at chunk `in_base`.
    fn pad_row(&mut self, out_base: usize, in_base: usize, pads: &[(usize, usize)]);
    /// Writes `rows` whole, pads included, if this store has a way to (true); else nothing.
    fn write_rows(&mut self, rows: &Rows) -> bool;
    /// Writes the block of `axis` at these bases (in chunks) whole, pads and all, where the
    /// store can: false where it cannot.
    fn write_plane(&mut self, _axis: usize, _out_base: usize, _in_base: usize) -> bool {
        false
    }
}

/// Innermost rows, in chunks: `count` of them, the first at output chunk `out_first` and
/// input chunk `in_first` (the rows' starts), each next one `out_stride` and `in_stride`
/// chunks on.
pub(super) struct Rows {
    pub(super) count: usize,
    pub(super) out_first: usize,
    pub(super) out_stride: usize,
    pub(super) in_first: usize,
    pub(super) in_stride: usize,
}

/// Fills axis `a`'s pads (blocks of `block` chunks) from its kept blocks, already written.
pub(super) fn extend_axis<S: Store>(store: &mut S, a: &AxisMap, block: usize, base: usize, mode: Mode) {
    let kept_end = a.pad_before + a.kept;
    if mode == Mode::Constant || a.kept == 0 {
        store.fill(base, a.pad_before * block);
        store.fill(base + kept_end * block, a.pad_after * block);
        return;
    }
    for (start, end) in [(0, a.pad_before), (kept_end, kept_end + a.pad_after)] {
        if start == end {
            continue;
        }
        let before = start == 0;
        // A period of one element (edge; reflect and wrap of one element): the pads repeat
        // the nearest kept block.
        if mode.period(a.kept as u64) == 1 {
            let src = if before { a.pad_before } else { kept_end - 1 };
            store.repeat(base + start * block, base + src * block, end - start, block);
            continue;
        }
        // Wrap's pads are the kept blocks repeated, a mirror's a period of 2n-2 (reflect) or
        // 2n (symmetric) blocks walked next to the kept blocks, then repeated.
        if mode == Mode::Wrap {
            repeat_period(store, block, base, (start, end), a.kept, a.pad_before, before);
            continue;
        }
        let period = mode.period(a.kept as u64) as usize;
        let walked = if before { (end.saturating_sub(period), end) } else { (start, end.min(start + period)) };
        walk_mirror(store, a, block, base, mode, walked.0, walked.1);
        let rest = if before { (start, walked.0) } else { (walked.1, end) };
        repeat_period(store, block, base, rest, period, walked.0, before);
    }
}

/// Fills blocks `lo..hi` from a period of `period` blocks written at `src`, outside them:
/// whole periods by one `repeat` (doubling copies, or a pattern where a period is a few
/// bytes), the part of a period at the far end from `src` by one copy. Before `src`
/// (`part_first`) the whole periods end at `hi`; after it they start at `lo`.
fn repeat_period<S: Store>(
    store: &mut S,
    block: usize,
    base: usize,
    (lo, hi): (usize, usize),
    period: usize,
    src: usize,
    part_first: bool,
) {
    let (periods, rest) = ((hi - lo) / period, (hi - lo) % period);
    let (whole, part, part_src) =
        if part_first { (lo + rest, lo, src + period - rest) } else { (lo, lo + periods * period, src) };
    if periods > 0 {
        store.repeat(base + whole * block, base + src * block, periods, period * block);
    }
    if rest > 0 {
        store.copy_out(base + part * block, base + part_src * block, rest * block);
    }
}

/// Writes blocks `start..end` of axis `a`'s mirrored pads (reflect or symmetric, kept ≥ 2 for
/// reflect) in runs: ascending runs are one copy; descending runs (mirrors) a reversed copy.
fn walk_mirror<S: Store>(store: &mut S, a: &AxisMap, block: usize, base: usize, mode: Mode, start: usize, end: usize) {
    let n = a.kept;
    let j = start as i64 - a.pad_before as i64;
    let index = |j: i64| source_index(mode, j, n as u64).unwrap_or(0) as usize;
    // Where the mirror turns is the index function's: past the top (position n) and below
    // the bottom (position -1, the same turn by symmetry) it gives the index a run restarts
    // at (reflect: n-2 and 1; symmetric, which repeats the end: n-1 and 0).
    let (after_top, after_bottom) = (index(n as i64), index(-1));
    let mut k = index(j);
    let next = index(j + 1);
    // A mode repeating the top (n-1, n-1): the first of the two ends an ascending run.
    let mut ascending = next == k + 1 || (next == k && k == n - 1);
    let mut o = start;
    let src = |k: usize| base + (a.pad_before + k) * block;
    while o < end {
        let dst = base + o * block;
        if ascending {
            let run = (n - k).min(end - o);
            store.copy_out(dst, src(k), run * block);
            o += run;
            (k, ascending) = (after_top, false);
        } else {
            let run = (k + 1).min(end - o);
            // Positions o.. take sources k, k-1, …, k-run+1.
            let low = k + 1 - run;
            if block == 1 {
                store.copy_reversed(dst, src(low), run);
            } else {
                for i in 0..run {
                    store.copy_out(dst + i * block, src(k - i), block);
                }
            }
            o += run;
            (k, ascending) = (after_bottom, true);
        }
    }
}

/// [`Store::repeat`] by copies doubling each time.
pub(super) fn replicate<S: Store>(store: &mut S, dst: usize, src: usize, count: usize, block: usize) {
    if count == 0 {
        return;
    }
    store.copy_out(dst, src, block);
    let total = count * block;
    let mut done = block;
    while done < total {
        let n = done.min(total - done);
        store.copy_out(dst + done, dst, n);
        done += n;
    }
}
