//! The walk: one recursion over the folded axes, outermost first, that writes each block's
//! kept part and then its pads, through a [`Store`] (the output and input, in chunks).

use super::extend::{extend_axis, Rows, Store};
use crate::mode::Mode;
use crate::plan::AxisMap;

/// The fixed context of one pad's recursion: the folded axes, their strides in chunks
/// (outermost first), and the mode.
pub(super) struct Walk<'a> {
    pub(super) axes: &'a [AxisMap],
    pub(super) out_strides: Vec<usize>,
    pub(super) in_strides: Vec<usize>,
    pub(super) mode: Mode,
    /// Per axis, the steps that fill its pads, worked out once and replayed for every block
    /// (the mode's index arithmetic would otherwise run again for every row); `None` where
    /// they are too many to keep (a mirror of many blocks on an outer axis: a copy per block),
    /// which are worked out block by block.
    pub(super) pad_steps: Vec<Option<Vec<PadStep>>>,
    /// The innermost axis's pads unit by unit (a unit: a byte, or a string), where they are
    /// few and copied (not constant): (output unit from the row's start, the input unit it
    /// copies from the input row's start). A row padded by a pixel or two then costs a few
    /// byte moves, not a library call per run and a mirror's reversal.
    pub(super) row_pads: Option<Vec<(usize, usize)>>,
}

impl<'a> Walk<'a> {
    /// `unit`: units per chunk; `max_row_pads`: the most pad units per innermost row written
    /// from a table (0 for none).
    pub(super) fn new(axes: &'a [AxisMap], mode: Mode, unit: usize, max_row_pads: usize) -> Walk<'a> {
        let mut out_strides = vec![1; axes.len()];
        let mut in_strides = vec![1; axes.len()];
        for d in (0..axes.len().saturating_sub(1)).rev() {
            out_strides[d] = out_strides[d + 1] * axes[d + 1].out_len;
            in_strides[d] = in_strides[d + 1] * axes[d + 1].in_len;
        }
        let pad_steps = axes
            .iter()
            .zip(&out_strides)
            .map(|(a, &block)| {
                let mut recorder = Recorder { steps: Vec::new(), overflow: false };
                extend_axis(&mut recorder, a, block, 0, mode);
                (!recorder.overflow).then_some(recorder.steps)
            })
            .collect();
        // Constant pads are runs a fill writes at once (measured slower byte by byte).
        let few = |a: &&AxisMap| {
            mode != Mode::Constant && (1..=max_row_pads).contains(&((a.pad_before + a.pad_after) * unit))
        };
        let row_pads = axes.last().filter(few).map(|a| {
            let pads = (0..a.pad_before).chain(a.pad_before + a.kept..a.out_len);
            let chunks = pads.map(|o| {
                let k = a.source(mode, o);
                (o, k.expect("a source: the plan refuses other modes than constant on emptied axes"))
            });
            chunks.flat_map(|(o, k)| (0..unit).map(move |b| (o * unit + b, k * unit + b))).collect()
        });
        Walk { axes, out_strides, in_strides, mode, pad_steps, row_pads }
    }

    /// Fills the pads of `axis`'s block at `base` (its kept part written already).
    pub(super) fn extend<S: Store>(&self, store: &mut S, axis: usize, base: usize) {
        match &self.pad_steps[axis] {
            Some(steps) => {
                for step in steps {
                    match *step {
                        PadStep::Copy { dst, src, len } => store.copy_out(base + dst, base + src, len),
                        PadStep::Fill { dst, len } => store.fill(base + dst, len),
                        PadStep::CopyReversed { dst, src, len } => store.copy_reversed(base + dst, base + src, len),
                        PadStep::Repeat { dst, src, count, block } => {
                            store.repeat(base + dst, base + src, count, block)
                        }
                    }
                }
            }
            None => extend_axis(store, &self.axes[axis], self.out_strides[axis], base, self.mode),
        }
    }

    /// Writes the block of `axis` at `out_base`: its kept sub-blocks, then its pads.
    pub(super) fn fill_axis<S: Store>(&self, store: &mut S, axis: usize, out_base: usize, in_base: usize) {
        let a = self.axes[axis];
        let (out_stride, in_stride) = (self.out_strides[axis], self.in_strides[axis]);
        if store.write_plane(axis, out_base, in_base) {
            return;
        }
        if axis + 1 == self.axes.len() {
            let row = Rows { count: 1, out_first: out_base, out_stride: 0, in_first: in_base, in_stride: 0 };
            return self.fill_rows(store, &row);
        }
        let (out_first, in_first) = (out_base + a.pad_before * out_stride, in_base + a.crop_start * in_stride);
        if axis + 2 < self.axes.len() {
            for j in 0..a.kept {
                self.fill_axis(store, axis + 1, out_first + j * out_stride, in_first + j * in_stride);
            }
        } else {
            // Rows are written here rather than one recursion deeper: there are many, and short.
            self.fill_rows(store, &Rows { count: a.kept, out_first, out_stride, in_first, in_stride });
        }
        self.extend(store, axis, out_base);
    }

    /// Writes innermost rows: all at once where the store can, else one by one.
    pub(super) fn fill_rows<S: Store>(&self, store: &mut S, rows: &Rows) {
        if !store.write_rows(rows) {
            for r in 0..rows.count {
                self.fill_row(store, rows.out_first + r * rows.out_stride, rows.in_first + r * rows.in_stride);
            }
        }
    }

    /// Writes the innermost row at `out_base`: its kept run, then its pads.
    #[inline]
    pub(super) fn fill_row<S: Store>(&self, store: &mut S, out_base: usize, in_base: usize) {
        let a = self.axes[self.axes.len() - 1];
        store.copy_in(out_base + a.pad_before, in_base + a.crop_start, a.kept);
        match &self.row_pads {
            Some(pads) => store.pad_row(out_base, in_base, pads),
            None => self.extend(store, self.axes.len() - 1, out_base),
        }
    }
}

/// One step of filling an axis's pads, in chunks from its block's start.
#[derive(Debug, Clone, Copy)]
pub(super) enum PadStep {
    Copy { dst: usize, src: usize, len: usize },
    Fill { dst: usize, len: usize },
    CopyReversed { dst: usize, src: usize, len: usize },
    Repeat { dst: usize, src: usize, count: usize, block: usize },
}

/// A store that records `extend_axis`'s steps instead of doing them, up to a bound.
struct Recorder {
    pub(super) steps: Vec<PadStep>,
    pub(super) overflow: bool,
}

impl Recorder {
    /// More steps than this per axis are not kept (long mirrors on outer axes).
    pub(super) const MAX_STEPS: usize = 64;

    pub(super) fn push(&mut self, step: PadStep) {
        match self.steps.len() < Self::MAX_STEPS {
            true => self.steps.push(step),
            false => self.overflow = true,
        }
    }
}

impl Store for Recorder {
    fn copy_in(&mut self, _: usize, _: usize, _: usize) {
        unreachable!("pads are filled from the output, never from the input");
    }
    fn pad_row(&mut self, _: usize, _: usize, _: &[(usize, usize)]) {
        unreachable!("axes' pads are recorded, not rows'");
    }
    fn write_rows(&mut self, _: &Rows) -> bool {
        unreachable!("axes' pads are recorded, not rows'");
    }
    fn copy_out(&mut self, dst: usize, src: usize, len: usize) {
        self.push(PadStep::Copy { dst, src, len });
    }
    fn fill(&mut self, dst: usize, len: usize) {
        if len > 0 {
            self.push(PadStep::Fill { dst, len });
        }
    }
    fn copy_reversed(&mut self, dst: usize, src: usize, len: usize) {
        self.push(PadStep::CopyReversed { dst, src, len });
    }
    fn repeat(&mut self, dst: usize, src: usize, count: usize, block: usize) {
        self.push(PadStep::Repeat { dst, src, count, block });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::pad;
    use crate::{DataType, PadPlan, PadRequest, Tensor};

    /// Pad steps are worked out once per axis and replayed per block; an axis that would take
    /// too many (a mirror's long descending run on an outer axis: a copy per block) is worked
    /// out block by block instead. Both agree with the reference.
    #[test]
    fn replayed_and_direct_pad_steps_agree() {
        // Miri's sample: a fill, a mirror and a repeat.
        let sampled = |m: &Mode| !crate::MIRI_SAMPLE || matches!(m, Mode::Constant | Mode::Reflect | Mode::Wrap);
        for mode in Mode::ALL.into_iter().filter(sampled) {
            // (shape, pads, the axis looked at, its steps replayed). The innermost pads: from
            // the row table (5 chunks of 2 bytes), from replayed steps (40 chunks: over the
            // table's 64 bytes) and 601 chunks, 100 periods and more, still a few steps: one
            // period written, the rest repeated. Then an outer axis of 100 blocks padded by 99.
            let mirror = matches!(mode, Mode::Reflect | Mode::Symmetric);
            let cases = [
                (vec![3, 2], vec![1i64, 2, 2, 3], 1, true),
                (vec![3, 2], vec![1, 20, 2, 20], 1, true),
                (vec![3, 2], vec![0, 300, 1, 301], 1, true),
                (vec![100, 2], vec![99, 1, 99, 1], 0, !mirror),
            ];
            for (shape, pads, axis, replayed) in cases {
                let n = shape.iter().product::<usize>() as u16;
                let x =
                    Tensor::from_bytes(DataType::Uint16, shape, (0..n).flat_map(u16::to_le_bytes).collect()).unwrap();
                let plan = PadPlan::new(x.dtype(), x.shape(), &PadRequest::new(pads.clone()).mode(mode)).unwrap();
                let folded = plan.folded(true);
                let walk = Walk::new(&folded.axes, plan.mode(), 1, 0);
                let steps = &walk.pad_steps[axis];
                assert_eq!(steps.is_some(), replayed, "{mode} {pads:?}");
                assert!(steps.iter().flatten().count() <= 8, "{mode} {pads:?}: {steps:?}");
                assert!(pad(&plan, &x).unwrap() == crate::reference::pad(&plan, &x), "{mode} {pads:?}");
            }
        }
    }
}
