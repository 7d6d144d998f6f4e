//! Binding windows: how every program (a pad's, an interior pad's, a gradient's) cuts its
//! views into windows that fit a binding ([`split`]), and a pad window's shape as the kernels'
//! host halves (`wide.rs`, `narrow.rs`) see it to size their grids.

use crate::error::{GpuLimit, PadError, Result};
use crate::plan::AxisMap;

/// Windows (dispatches over parts of a view that fit a binding) one program may take before
/// the GPU path refuses it: a pad's, an interior pad's or a gradient's.
pub(super) const MAX_WINDOWS: u64 = 1 << 16;

/// A refusal of windows.
fn refuse(what: String) -> PadError {
    PadError::GpuLimit { limit: GpuLimit::Windows, what }
}

/// An axis after merging, with its view strides in moved words.
#[derive(Debug, Clone, Copy)]
pub(super) struct Axis {
    pub map: AxisMap,
    pub in_stride: u64,
    pub out_stride: u64,
}

/// A window's extent for the kernels' grids: per axis (outermost first) its start and
/// length in the window, with the merged axes.
pub(super) struct WindowShape<'a> {
    /// Per axis, outermost first: the window's start and length.
    pub b: &'a [(usize, usize)],
    /// The merged axes.
    pub axes: &'a [Axis],
    /// `max_compute_workgroups_per_dimension`.
    pub max_groups: u64,
}

impl WindowShape<'_> {
    /// Axes.
    pub fn rank(&self) -> usize {
        self.b.len()
    }

    /// The window's length on axis `d`, innermost first (1 past the rank).
    pub fn len(&self, d: usize) -> u64 {
        if d < self.rank() {
            self.b[self.rank() - 1 - d].1 as u64
        } else {
            1
        }
    }

    /// Positions of the window over the axes above `d`.
    pub fn above(&self, d: usize) -> u64 {
        (d + 1..self.rank()).map(|a| self.len(a)).product()
    }

    /// Elements in the window.
    pub fn elems(&self) -> u64 {
        self.b.iter().map(|&(_, len)| len as u64).product()
    }

    /// The output stride of axis `d`, innermost first, in moved words (0 past the rank).
    pub fn out_stride(&self, d: usize) -> u64 {
        if d < self.rank() {
            self.axes[self.rank() - 1 - d].out_stride
        } else {
            0
        }
    }

    /// Whether axis 0 is a whole unpadded run (a pixel's channels, say), so that rows can
    /// run along axes 0 and 1.
    pub fn inner_is_whole_run(&self) -> bool {
        let inner = &self.axes[self.rank() - 1].map;
        self.rank() >= 2 && inner.is_identity() && self.len(0) == inner.out_len as u64
    }
}

/// A window: per axis, outermost first, its first index and length.
pub(super) type Extent = [(usize, usize)];

/// Cuts box `whole` (per axis, outermost first: its first index and length) into windows, in
/// order, each what `window` makes of it (`None`: it does not fit a binding, cut it). A box that does not fit
/// is cut along its outermost axis longer than one into as few pieces as fit (each the longest
/// prefix that fits, by bisection: a longer piece reads and writes no less), and those evened
/// out: as many equal pieces where they all fit, else each neighbouring pair's boundary moved
/// to their middle where both still fit. A slice that does not fit alone is cut along its next
/// axis the same way, so boxes stay contiguous runs of their axes. Pieces of axis `a` start
/// on multiples of `granules[a]` (8- and 16-bit windows that must start on a word). A
/// `GpuLimit::Windows` where a piece that cannot be cut does not fit, or past
/// [`MAX_WINDOWS`] windows.
pub(super) fn split<T>(
    whole: &Extent,
    granules: &[usize],
    max_binding: u64,
    window: &mut dyn FnMut(&Extent) -> Result<Option<T>>,
) -> Result<Vec<T>> {
    let mut windows = Vec::new();
    cut(whole.to_vec(), granules, max_binding, window, &mut windows)?;
    Ok(windows)
}

/// The box of every index of axes of `lens`.
pub(super) fn every_index(lens: &[usize]) -> Vec<(usize, usize)> {
    lens.iter().map(|&n| (0, n)).collect()
}

/// [`split`]'s cut of box `b`, its windows appended to `windows`.
fn cut<T>(
    b: Vec<(usize, usize)>,
    granules: &[usize],
    max_binding: u64,
    window: &mut dyn FnMut(&Extent) -> Result<Option<T>>,
    windows: &mut Vec<T>,
) -> Result<()> {
    if let Some(w) = window(&b)? {
        windows.push(w);
        if windows.len() as u64 > MAX_WINDOWS {
            let what = format!(
                "more than {MAX_WINDOWS} binding windows (views too scattered for bindings of {max_binding} bytes)"
            );
            return Err(refuse(what));
        }
        return Ok(());
    }
    let Some(d) = b.iter().position(|&(_, len)| len > 1) else {
        return Err(refuse(format!("one element does not fit a binding of {max_binding} bytes")));
    };
    let (start, end, granule) = (b[d].0, b[d].0 + b[d].1, granules[d]);
    if end - start <= granule {
        let what = format!(
            "a window of {} indices of axis {d}, which windows take {granule} at a time, does not fit a binding of {max_binding} bytes",
            end - start
        );
        return Err(refuse(what));
    }
    let piece = |s: usize, e: usize| {
        let mut p = b.clone();
        p[d] = (s, e - s);
        p
    };
    let mut fits = |s: usize, e: usize| -> Result<bool> { Ok(window(&piece(s, e))?.is_some()) };
    // As few pieces as fit: from each start the longest that fits, in granules (at least one,
    // which the recursion below cuts further where it does not fit alone).
    let mut cuts = vec![start];
    while let Some(&s) = cuts.last().filter(|&&s| s < end) {
        let (mut fit, mut past) = (0, (end - s).div_ceil(granule) + 1);
        while past - fit > 1 {
            let m = fit + (past - fit) / 2;
            if fits(s, end.min(s + m * granule))? {
                fit = m;
            } else {
                past = m;
            }
        }
        cuts.push(end.min(s + fit.max(1) * granule));
    }
    // Evened out: that many equal pieces where all fit; else neighbours met in the middle.
    let n = cuts.len() - 1;
    let on_granule = |i: usize| start + ((end - start) * i / n).next_multiple_of(granule).min(end - start);
    let equal: Vec<usize> = (0..=n).map(on_granule).collect();
    let mut all_fit = n > 1 && equal.windows(2).all(|w| w[0] < w[1]);
    for w in equal.windows(2) {
        all_fit = all_fit && fits(w[0], w[1])?;
    }
    if all_fit {
        cuts = equal;
    } else {
        for i in 1..n {
            let (a, c) = (cuts[i - 1], cuts[i + 1]);
            let mid = a + ((c - a) / 2).next_multiple_of(granule);
            if mid != cuts[i] && mid > a && mid < c && fits(a, mid)? && fits(mid, c)? {
                cuts[i] = mid;
            }
        }
    }
    for w in cuts.windows(2) {
        cut(piece(w[0], w[1]), granules, max_binding, window, windows)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows of whatever `fits` lets through, or the error's text.
    fn cut_up(
        lens: &[usize],
        granules: &[usize],
        fits: impl Fn(&Extent) -> bool,
    ) -> std::result::Result<Vec<Vec<(usize, usize)>>, String> {
        split(&every_index(lens), granules, 1024, &mut |b| Ok(fits(b).then(|| b.to_vec()))).map_err(|e| match e {
            PadError::GpuLimit { limit: GpuLimit::Windows, what } => what,
            e => e.to_string(),
        })
    }

    /// A box of [5, 37] whose windows hold at most 24 elements, cut on granules of 4 along
    /// axis 1: every row alone (no two fit), each cut as few times as fit (24 + 13) and evened
    /// on the granule (20 + 17), in order. A run that is one granule and does not fit, and more
    /// windows than a program takes, are refused.
    #[test]
    fn boxes_are_cut_outermost_first_into_few_even_pieces_on_their_granules() {
        let small = |b: &Extent| b.iter().map(|&(_, n)| n).product::<usize>() <= 24;
        let want: Vec<_> = (0..5).flat_map(|r| [vec![(r, 1), (0, 20)], vec![(r, 1), (20, 17)]]).collect();
        assert_eq!(cut_up(&[5, 37], &[1, 4], small), Ok(want));
        assert_eq!(
            cut_up(&[2, 30], &[1, 1], small),
            Ok(vec![vec![(0, 1), (0, 15)], vec![(0, 1), (15, 15)], vec![(1, 1), (0, 15)], vec![(1, 1), (15, 15)]])
        );
        // As many equal pieces as the fewest where all fit; else neighbours met in the middle
        // (windows holding index 0 take at most 5, as wrap's pad rows keep windows of their own).
        let runs = |w: Vec<Vec<(usize, usize)>>| w.iter().map(|b| b[0]).collect::<Vec<_>>();
        assert_eq!(cut_up(&[100], &[1], |b| b[0].1 <= 30).map(runs), Ok(vec![(0, 25), (25, 25), (50, 25), (75, 25)]));
        let wrapped = |b: &Extent| b[0].1 <= if b[0].0 == 0 { 5 } else { 30 };
        assert_eq!(cut_up(&[100], &[1], wrapped).map(runs), Ok(vec![(0, 5), (5, 30), (35, 30), (65, 17), (82, 18)]));
        let e = cut_up(&[8], &[4], |b| b[0].1 < 4).unwrap_err();
        assert!(e.contains("4 indices of axis 0"), "{e}");
        let e = cut_up(&[2, 1], &[1, 1], |_| false).unwrap_err();
        assert!(e.contains("one element does not fit"), "{e}");
        let many = MAX_WINDOWS as usize + 1;
        let e = cut_up(&[many], &[1], |b| b[0].1 == 1).unwrap_err();
        assert!(e.contains(&format!("more than {MAX_WINDOWS} binding windows")), "{e}");
        assert_eq!(cut_up(&[many - 1], &[1], |b| b[0].1 == 1).map(|w| w.len()), Ok(many - 1));
    }
}
