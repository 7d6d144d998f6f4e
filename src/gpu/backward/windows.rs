//! The gradient past one binding: windows of its axes, or its sums in parts.

use crate::adjoint::{image_hull, most_images, BLOCK};
use crate::error::Result;
use crate::mode::Mode;
use crate::plan::PadPlan;

use std::ops::Range;

use super::whole::{Part, Whole, WindowAxis};
use crate::gpu::build::{build, fits, Kind};
use crate::gpu::kernels::Shader;
use crate::gpu::program::{BufferView, DeviceLimits, Dispatch, Program};
use crate::gpu::shader::PipelineKey;
use crate::gpu::view::Span;
use crate::gpu::window::{Extent, MAX_WINDOWS};

/// The program of box `b` of the gradient in windows, cut from grad_in's axes by the builder
/// as every program's are ([`build`], [`GradientWindows`]); each window the whole gradient's pipeline and uniform with its own lengths
/// and bases. An axis the pad touches keeps its images in the whole axis's coordinates: a
/// window's first index moves the axis's crop start (the shader's `k - crop_start` is then the
/// whole axis's kept index, in wrapping arithmetic), and the window binds the hull of its
/// images in `grad_out` ([`crate::adjoint`]'s `image_hull`), its base counted from there
/// (wrapping where the hull starts past the window's first position: only the sums of the
/// offsets are bound). Of `b`, a box of grad_in (per axis: a run of indices, or two with a
/// gap between, [`Sides`]: a window across the gap binds the hull of both and skips the gap's
/// indices); `None` where no windows fit (a wrap whose images span the axis, say: [`parts`]).
/// With a part, the images in it only.
pub(super) fn windows(
    plan: &PadPlan,
    whole: &Whole,
    b: &[Sides],
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Option<Program>> {
    if whole.in_span.is_none() {
        return Ok(None);
    }
    fits(build(&GradientWindows { plan, whole, b, grad_out, grad_in, limits }, limits.max_binding))
}

/// A box of a gradient's `grad_in` as the builder's kind: its windows, each the whole
/// gradient's pipeline and uniform with its own lengths and bases ([`windows`]).
struct GradientWindows<'a> {
    plan: &'a PadPlan,
    whole: &'a Whole,
    b: &'a [Sides],
    grad_out: &'a BufferView<'a>,
    grad_in: &'a BufferView<'a>,
    limits: &'a DeviceLimits,
}

impl Kind for GradientWindows<'_> {
    type Window = Dispatch;

    fn extent(&self) -> (Vec<(usize, usize)>, Vec<usize>) {
        (self.b.iter().map(|sides| (0, sides.len())).collect(), vec![1; self.b.len()])
    }

    /// Window `w`: `len` of each axis's indices from its `at`-th (counted over both sides).
    fn window(&self, w: &Extent) -> Result<Option<Dispatch>> {
        let (axes, mode) = (self.plan.axes(), self.plan.mode());
        // The output coordinates a run of an axis's input indices reads.
        let hull = |a: usize, range: Range<usize>| match (axes[a].is_identity(), self.whole.part) {
            (true, _) => Some((range.start, range.end)),
            (false, Some(part)) if part.axis == a => {
                part.clip(image_hull(&axes[a], mode, range.clone()), &axes[a], range)
            }
            (false, _) => image_hull(&axes[a], mode, range),
        };
        let spans: Vec<_> = (w.iter().zip(self.b).enumerate())
            .map(|(a, (&(at, len), sides))| {
                let (first, last) = (sides.index(at), sides.index(at + len - 1));
                let gap = sides.gap().filter(|&(before, _)| at < before && at + len > before);
                let gap = gap.map(|(before, skipped)| (before - at, skipped));
                WindowAxis { first, len, gap, reads: hull(a, first..last + 1) }
            })
            .collect();
        fits(self.whole.window(&spans, self.grad_out, self.grad_in, self.limits))
    }

    fn settle(&self, windows: Vec<Dispatch>) -> (PipelineKey, Vec<Dispatch>) {
        (self.whole.key, windows)
    }

    fn spans(&self) -> (Option<Span>, Option<Span>) {
        (self.whole.out_span, self.whole.in_span)
    }
}

/// An axis of a box of grad_in: a run of indices, and where the box holds a border's two sides
/// (`bulk.rs`), a second run after a gap.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Sides {
    pub(super) first: Range<usize>,
    pub(super) second: Option<Range<usize>>,
}

impl Sides {
    /// One run, no gap.
    pub(super) fn run(indices: Range<usize>) -> Sides {
        Sides { first: indices, second: None }
    }

    /// Every index of axes of `lens`, no gap.
    pub(super) fn every_index(lens: &[usize]) -> Vec<Sides> {
        lens.iter().map(|&n| Sides::run(0..n)).collect()
    }

    /// The indices.
    pub(super) fn len(&self) -> usize {
        self.first.len() + self.second.as_ref().map_or(0, |r| r.len())
    }

    /// The `i`-th index.
    fn index(&self, i: usize) -> usize {
        match &self.second {
            Some(second) if i >= self.first.len() => second.start + i - self.first.len(),
            _ => self.first.start + i,
        }
    }

    /// The gap: the indices before it, and its length.
    fn gap(&self) -> Option<(usize, usize)> {
        self.second.as_ref().map(|second| (self.first.len(), second.start - self.first.end))
    }
}

/// The gradient past one binding where no window's reads fit (a wrap's first and last
/// indices read both ends of the axis): its sums cut into parts along the first axis the pad
/// touches, each part the images at one run of that axis's output positions and run in
/// windows, continuing the sums the parts before it stored. The parts follow the sums' order
/// (the pad before, the pad after, the kept positions: `crate::adjoint`), so the bits are one
/// sum's; the first part writes every element (+0.0 where it has nothing), the others only
/// those with images in them. Only where that axis's sums are single blocks (at most
/// `BLOCK` images an index); else why not (the CPU path runs it).
/// Costs over the windows: the input's gradient written once more and read once a part.
pub(super) fn parts(
    plan: &PadPlan,
    whole: &Whole,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<std::result::Result<Program, String>> {
    let Some(c) = plan.axes().iter().position(|a| !a.is_identity()) else {
        return Ok(Err("nor in parts: no axis is padded or cropped".into()));
    };
    if plan.mode() == Mode::Constant {
        // An index's one image lies in its window: its windows fit where any do.
        return Ok(Err("nor in parts: a constant pad's windows fit wherever its parts would".into()));
    }
    // Parts need the walk that LEAN (one level) leaves out.
    let whole = &match whole.key.shader {
        Shader::Backward { split, levels: 1, .. } => whole.in_state(split, 2),
        _ => whole.clone(),
    };
    let axis = &plan.axes()[c];
    let images = most_images(axis, plan.mode());
    if images > BLOCK as u64 {
        return Ok(Err(format!(
            "nor in parts: an index of axis {c} has {images} images, and parts take sums of at most {BLOCK}"
        )));
    }
    // The pads in runs of output positions at most a binding's rows long (a window's images
    // in them can lie all along them); the kept positions in one (a window's are its own).
    let row = (whole.out_strides[c] * whole.elem).max(1);
    let rows = (limits.max_binding.saturating_sub(limits.storage_alignment) / row).max(1) as usize;
    let (p, n, out) = (axis.pad_before, axis.kept, axis.out_len);
    let mut dispatches = Vec::new();
    for (lo, hi, piece) in [(0, p, rows), (p + n, out, rows), (p, p + n, n.max(1))] {
        for at in (lo..hi).step_by(piece) {
            let part = Part { axis: c, lo: at, hi: hi.min(at + piece) };
            let continues = !dispatches.is_empty();
            let mut w = whole.clone();
            w.part = Some(part);
            (w.params.part_axis, w.params.part_lo, w.params.part_hi) = (c as u32, part.lo as u32, part.hi as u32);
            w.params.part_continues = u32::from(continues);
            let Some(Program { dispatches: mut windows, .. }) =
                windows(plan, &w, &Sides::every_index(plan.in_shape()), grad_out, grad_in, limits)?
            else {
                return Ok(Err(format!(
                    "nor in parts: no window of the part at output positions {}..{} of axis {c} fits",
                    part.lo, part.hi
                )));
            };
            if continues {
                // Windows that read nothing add nothing.
                windows.retain(|d| d.input.is_some());
            }
            dispatches.extend(windows);
            if dispatches.len() as u64 > MAX_WINDOWS {
                return Ok(Err(format!("nor in parts: they take more than {MAX_WINDOWS} dispatches")));
            }
        }
    }
    Ok(Ok(whole.program(dispatches)))
}

impl Part {
    /// The output positions of `hull` (the images of input run `range`) in the part: where
    /// the part is of kept positions, only the run's own.
    fn clip(
        &self,
        hull: Option<(usize, usize)>,
        axis: &crate::plan::AxisMap,
        range: Range<usize>,
    ) -> Option<(usize, usize)> {
        let p = axis.pad_before;
        let (lo, hi) = if self.lo >= p && self.hi <= p + axis.kept {
            let first = range.start.max(axis.crop_start).saturating_sub(axis.crop_start);
            let end = range.end.min(axis.crop_start + axis.kept).saturating_sub(axis.crop_start);
            (self.lo.max(p + first), self.hi.min(p + end))
        } else {
            let (h_lo, h_hi) = hull?;
            (self.lo.max(h_lo), self.hi.min(h_hi))
        };
        (lo < hi).then_some((lo, hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{GpuLimit, PadError};
    use crate::gpu::params::{BackParams, NO_PART};
    use crate::mode::Mode;
    use crate::{DataType, PadRequest};

    /// Past one binding, windows along an axis the pad touches: runs of [20, 20]'s rows
    /// padded by one on each axis, 88-byte rows on 1 KiB bindings at 256-byte alignment, three
    /// windows of 6, 7 and 7 rows (as many equal ones as fit), each binding the output rows its
    /// elements read (rows 1-6, 7-13, 14-20 of 22) and its own rows of the input's gradient; the
    /// window's first row moves the axis's crop start, wrapping below zero.
    #[test]
    fn windows_run_along_padded_axes() {
        let kib = DeviceLimits { max_binding: 1024, storage_alignment: 256, ..DeviceLimits::WEBGPU_DEFAULT };
        let plan = PadPlan::new(DataType::Float32, &[20, 20], &PadRequest::new(vec![1, 1, 1, 1])).unwrap();
        let (i, o) = plan.byte_sizes().unwrap();
        let p = super::super::whole(&plan, &BufferView::dense(0, o), &BufferView::dense(0, i), &kib).unwrap();
        let bindings: Vec<_> = p.dispatches().iter().map(|d| (d.input().unwrap(), d.output())).collect();
        // Reads: bytes [92, 612), [620, 1228), [1236, 1844) (columns 1-20 of those rows) from
        // 256-byte boundaries; writes [0, 480), [480, 1040), [1040, 1600).
        assert_eq!(bindings, [((0, 612), (0, 480)), ((512, 716), (256, 784)), ((1024, 820), (1024, 576))]);
        let params: Vec<BackParams> = p.dispatches().iter().map(|d| *d.params.gradient()).collect();
        let firsts = params.iter().map(|p| (p.count, p.axes[0].in_len, p.axes[0].crop_start, p.out_base, p.in_base));
        // out_base: grad_out's element 0 from the binding's start (0, 128 and 256 elements on).
        let want = [
            (120, 6, 0, 0, 0),
            (140, 7, 0u32.wrapping_sub(6), 0u32.wrapping_sub(128), 56),
            (140, 7, 0u32.wrapping_sub(13), 0u32.wrapping_sub(256), 4),
        ];
        assert_eq!(firsts.collect::<Vec<_>>(), want);
        assert!(
            params.iter().all(|p| p.axes[1] == params[0].axes[1] && p.axes[1].in_len == 20),
            "the inner axis whole"
        );
        assert!(params.iter().all(|p| p.part_axis == NO_PART), "whole sums");
    }

    /// Where no window's reads fit, parts: a wrap of [20, 20] by one (its first and last rows
    /// read from both ends of the axis; 88-byte rows on 1 KiB bindings), in three parts along
    /// axis 0, in the sums' order: output row 0 (the pad before: every window, two of ten rows
    /// as their reads are one row, the one reading row 0 the last), row 21 (the pad after:
    /// only the window of rows 0-9 reads it), rows 1-20 (the kept ones: each window its own
    /// rows, in windows as the windows' above); the parts after the first continue the sums.
    #[test]
    fn windows_that_read_the_whole_axis_run_in_parts() {
        let kib = DeviceLimits { max_binding: 1024, storage_alignment: 256, ..DeviceLimits::WEBGPU_DEFAULT };
        let wrap = PadPlan::new(DataType::Float32, &[20, 20], &PadRequest::new(vec![1; 4]).mode(Mode::Wrap)).unwrap();
        let (i, o) = wrap.byte_sizes().unwrap();
        let p = super::super::whole(&wrap, &BufferView::dense(0, o), &BufferView::dense(0, i), &kib).unwrap();
        let got: Vec<_> = p
            .dispatches()
            .iter()
            .map(|d| {
                let q: BackParams = *d.params.gradient();
                (d.input(), d.output(), (q.part_axis, q.part_lo, q.part_hi, q.part_continues), q.axes[0].in_len)
            })
            .collect();
        let want = [
            (None, (0, 800), (0, 0, 1, 0), 10),
            (Some((0, 88)), (768, 832), (0, 0, 1, 0), 10),
            (Some((1792, 144)), (0, 800), (0, 21, 22, 1), 10),
            (Some((0, 616)), (0, 480), (0, 1, 21, 1), 6),
            (Some((512, 720)), (256, 784), (0, 1, 21, 1), 7),
            (Some((1024, 824)), (1024, 576), (0, 1, 21, 1), 7),
        ];
        assert_eq!(got, want);
        // Output row 21 from its binding at byte 1792: element 0 is 448 elements below it.
        let after: BackParams = *p.dispatches()[2].params.gradient();
        assert_eq!(after.out_base, 0u32.wrapping_sub(448));
        // Parts of axis 1 where the first is left alone and its rows pass a binding.
        let rows =
            PadPlan::new(DataType::Float32, &[3, 400], &PadRequest::new(vec![0, 5, 0, 5]).mode(Mode::Wrap)).unwrap();
        let (ri, ro) = rows.byte_sizes().unwrap();
        let p = super::super::whole(&rows, &BufferView::dense(0, ro), &BufferView::dense(0, ri), &kib).unwrap();
        let q: BackParams = *p.dispatches()[0].params.gradient();
        assert_eq!((q.part_axis, q.part_lo, q.part_hi, q.part_continues), (1, 0, 5, 0));
        // One axis of sums, but parts need the walk that LEAN (one level) compiles out.
        assert!(p.label(0).ends_with("float32 levels 2"), "{}", p.label(0));
        // More than a block's images an index: parts would cut its sums' blocks.
        let wide = PadPlan::new(DataType::Float32, &[4], &PadRequest::new(vec![600, 600]).mode(Mode::Wrap)).unwrap();
        let (wi, wo) = wide.byte_sizes().unwrap();
        let e = super::super::whole(&wide, &BufferView::dense(0, wo), &BufferView::dense(0, wi), &kib).unwrap_err();
        assert!(matches!(e, PadError::GpuLimit { limit: GpuLimit::Windows, .. }), "{e}");
        assert!(e.to_string().contains("an index of axis 0 has 301 images"), "{e}");
        // Sums split over a workgroup's lanes (corners of edge pads of 100 on two axes: rows of
        // 820 bytes), a part a row of the pads: the split pipeline's parts.
        let corners =
            PadPlan::new(DataType::Float32, &[2, 3], &PadRequest::new(vec![100; 4]).mode(Mode::Edge)).unwrap();
        let (ci, co) = corners.byte_sizes().unwrap();
        let p = super::super::whole(&corners, &BufferView::dense(0, co), &BufferView::dense(0, ci), &kib).unwrap();
        assert!(p.wgsl(0).contains("const SPLIT: bool = true;"));
        let parts: Vec<(u32, u32)> =
            p.dispatches().iter().map(|d| *d.params.gradient()).map(|q| (q.part_lo, q.part_hi)).collect();
        let distinct: std::collections::BTreeSet<_> = parts.iter().collect();
        // Rows 0-99 (the pad before), 102-201 (after), then 100-101 (kept) in one part.
        assert_eq!((distinct.len(), parts[0], parts[parts.len() - 1]), (201, (0, 1), (100, 102)));
    }
}
