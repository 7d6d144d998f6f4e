//! The gradient as a crop and its borders. Almost all of `grad_in` is a copy: an element whose
//! every axis the pad touches has one image there (the axis's one-image run,
//! `adjoint::one_image_run`) is that image's value, bits and all, and those elements make one
//! box, a crop of `grad_out`. It runs as the forward pad's crop (`Program::new` of a plan that
//! crops `grad_out` to the box: the forward's kernels, at its speed). The rest, the borders,
//! are boxes around it, each in windows of the gradient's own pipeline: the edges, one axis's
//! indices before its run and after it with every other axis within its run (sums on that
//! axis alone: the one-level pipeline, LEAN, with no walk over several axes), and the corners,
//! two axes or more outside their runs (the plan's pipeline); an axis's two sides are one box,
//! its windows' indices skipping the run between them (a gap in the uniform), so that a 2-D
//! pad's borders are three dispatches, not eight. Each element of `grad_in` is in
//! exactly one box, and a border box holds only elements with a sum, so the gradient's walk
//! (the cost of its pipeline on every element, used or not) runs where there are sums and
//! nowhere else, the general one only where two axes have them.

use std::ops::Range;

use crate::adjoint::one_image_run;
use crate::error::{PadError, Result};
use crate::plan::{PadPlan, PadRequest};

use super::whole::Whole;
use super::windows::{windows, Sides};
use crate::gpu::program::{BufferView, DeviceLimits, Dispatch, Program};
use crate::gpu::variant::KernelVariant;
use crate::gpu::window::MAX_WINDOWS;

/// The gradient as the crop of its bulk and windows of its borders; `None` where it has no
/// bulk (an axis with no index of one image), or where the crop or a border's window does not
/// fit the device (the whole gradient's windows and parts take it then). The edges (sums on
/// one axis) run in the LEAN pipeline where no sum is long ([`Whole::lean`]), the corners in
/// the whole plan's. In the `gradient-words` variant, each's borders a lane a u32 word where
/// every window's rows are whole words ([`Whole::word_window`]); in `gradient-sides-apart`,
/// a box a side.
pub(super) fn crop_and_borders(
    plan: &PadPlan,
    whole: &Whole,
    variant: KernelVariant,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Option<Program>> {
    if whole.in_span.is_none() || whole.part.is_some() {
        return Ok(None);
    }
    let runs = bulk_box(plan, whole.elem);
    if runs.iter().any(|r| r.is_empty()) {
        return Ok(None);
    }
    // The widened box, else the bulk alone (8- and 16-bit rows of an odd length in a view whose
    // rows start at words: only the bulk's whole words crop).
    let wide = widened(plan, &runs);
    let mut program = match crop(plan, whole, &wide, grad_out, grad_in, limits)? {
        Some(program) => program,
        None if wide != runs => match crop(plan, whole, &runs, grad_out, grad_in, limits)? {
            Some(program) => program,
            None => return Ok(None),
        },
        None => return Ok(None),
    };
    let (edges, corners) = border_boxes(plan, &runs);
    let lean = whole.lean(plan);
    let mut dispatches = 0;
    for (boxes, pipeline) in [(edges, lean.as_ref().unwrap_or(whole)), (corners, whole)] {
        let Some(group) = in_windows(plan, pipeline, &boxes, variant, grad_out, grad_in, limits)? else {
            return Ok(None);
        };
        dispatches += group.dispatches.len() as u64;
        if dispatches > MAX_WINDOWS {
            return Ok(None);
        }
        program = program.then(group);
    }
    // The gradient's views, not the crop's (which are the bulk's): what a host checks for
    // overlap.
    (program.in_span, program.out_span) = (whole.out_span, whole.in_span);
    Ok(Some(program))
}

/// A box of grad_in: a run of indices on each axis.
pub(super) type IndexBox = Vec<Range<usize>>;

/// A box of grad_in whose axes may each hold a border's two sides (a run, a gap, a run).
pub(super) type SidedBox = Vec<Sides>;

/// `boxes` in windows of `whole`'s pipeline, as few as fit (in `gradient-words`, a lane a word
/// where every window's rows are whole words); `None` where one does not fit. A box's two
/// sides of an axis share its windows (one dispatch where there were two, four for a
/// corner's; where a window across the gap does not fit a binding,
/// [`split`](crate::gpu::window::split) cuts it at the gap as at any index), but in
/// `gradient-sides-apart`. A lane a word takes no gap on the innermost axis: there the sides
/// are boxes of their own.
fn in_windows(
    plan: &PadPlan,
    whole: &Whole,
    boxes: &[SidedBox],
    variant: KernelVariant,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Option<Program>> {
    let of = |sided: bool| -> Result<Option<Vec<Dispatch>>> {
        let mut dispatches = Vec::new();
        for b in boxes {
            let parts: Vec<SidedBox> = match sided {
                true => vec![b.clone()],
                false => plain(b).into_iter().map(|p| p.into_iter().map(Sides::run).collect()).collect(),
            };
            for part in parts {
                let Some(windows) = windows(plan, whole, &part, grad_out, grad_in, limits)? else { return Ok(None) };
                dispatches.extend(windows.dispatches);
                if dispatches.len() as u64 > MAX_WINDOWS {
                    return Ok(None);
                }
            }
        }
        Ok(Some(dispatches))
    };
    let Some(dispatches) = of(variant != KernelVariant::GradientSidesApart)? else { return Ok(None) };
    if let Some(in_words) = whole.in_words().filter(|_| variant == KernelVariant::GradientWords) {
        let in_words_of = |dispatches: &[Dispatch]| -> Result<Option<Program>> {
            let windows = dispatches.iter().map(|d| in_words.word_window(d, limits)).collect::<Result<Vec<_>>>()?;
            Ok(windows.into_iter().collect::<Option<Vec<_>>>().map(|w| in_words.program(w)))
        };
        // The sides apart only where the sides together do not take words.
        if let Some(program) = in_words_of(&dispatches)? {
            return Ok(Some(program));
        }
        if let Some(program) = of(false)?.map(|apart| in_words_of(&apart)).transpose()?.flatten() {
            return Ok(Some(program));
        }
    }
    Ok(Some(whole.program(dispatches)))
}

/// The plain boxes of `b`: each combination of its axes' sides.
pub(super) fn plain(b: &[Sides]) -> Vec<IndexBox> {
    let mut boxes = vec![Vec::new()];
    for sides in b {
        let runs: Vec<_> = [Some(sides.first.clone()), sides.second.clone()].into_iter().flatten().collect();
        boxes = boxes.iter().flat_map(|b| runs.iter().map(move |r| [b.clone(), vec![r.clone()]].concat())).collect();
    }
    boxes
}

/// The bulk: on each axis the input indices of one image, a run (the whole axis where the
/// pad leaves it alone). For 8- and 16-bit elements the innermost axis's run is narrowed to
/// whole 4-byte words of a dense row, as the forward's kernels write such outputs (the
/// elements it leaves go to the borders).
pub(super) fn bulk_box(plan: &PadPlan, elem: u64) -> Vec<Range<usize>> {
    let mut runs: Vec<Range<usize>> = plan
        .axes()
        .iter()
        .map(|a| match a.is_identity() {
            true => 0..a.in_len,
            false => {
                let r = one_image_run(a, plan.mode());
                a.crop_start + r.start..a.crop_start + r.end
            }
        })
        .collect();
    if let (true, Some(last)) = (elem < 4, runs.last_mut()) {
        let per_word = (4 / elem) as usize;
        let (start, end) = (last.start.next_multiple_of(per_word), last.end / per_word * per_word);
        *last = start..end.max(start);
    }
    runs
}

/// The box the crop writes: the bulk `runs`, but whole on each axis whose every index has a
/// kept position and whose borders are at most an eighth of it. The crop then writes those
/// borders too (the border boxes' dispatches, after it, write them again), in rows the forward
/// writes in wider words with fewer lanes (float16 rows of 256 reflected by 8: 16-byte words,
/// not 4) for an eighth more bytes at most an axis.
pub(super) fn widened(plan: &PadPlan, runs: &[Range<usize>]) -> Vec<Range<usize>> {
    let axes = plan.axes().iter().zip(runs);
    axes.map(|(a, r)| match a.crop_start == 0 && a.kept == a.in_len && (a.in_len - r.len()) * 8 <= a.in_len {
        true => 0..a.in_len,
        false => r.clone(),
    })
    .collect()
}

/// The borders around the bulk `runs`, boxes of grad_in: the edges (one axis outside its run,
/// every other inside: an element there has sums on that axis alone), then the corners (two
/// axes or more outside: for the first two such axes `i < j`, their sides, the other axes
/// before `j` inside their runs, those after it whole). An axis outside its run holds both
/// its sides, the one before the run and the one after it. Empty boxes left out.
pub(super) fn border_boxes(plan: &PadPlan, runs: &[Range<usize>]) -> (Vec<SidedBox>, Vec<SidedBox>) {
    let shape = plan.in_shape();
    let outside: Vec<usize> = (0..shape.len()).filter(|&d| runs[d] != (0..shape[d])).collect();
    let sides = |d: usize| {
        let (before, after) = (0..runs[d].start, runs[d].end..shape[d]);
        match before.is_empty() {
            true => Sides::run(after),
            false => Sides { first: before, second: Some(after).filter(|a| !a.is_empty()) },
        }
    };
    let non_empty = |b: &SidedBox| b.iter().all(|s| s.len() > 0);
    let mut edges = Vec::new();
    for &d in &outside {
        let mut b: SidedBox = runs.iter().cloned().map(Sides::run).collect();
        b[d] = sides(d);
        edges.push(b);
    }
    let mut corners = Vec::new();
    for (n, &i) in outside.iter().enumerate() {
        for &j in &outside[n + 1..] {
            let mut b: SidedBox = runs.iter().cloned().map(Sides::run).collect();
            (b[i], b[j]) = (sides(i), sides(j));
            for (a, r) in b.iter_mut().enumerate().skip(j + 1) {
                *r = Sides::run(0..shape[a]);
            }
            corners.push(b);
        }
    }
    edges.retain(non_empty);
    corners.retain(non_empty);
    (edges, corners)
}

/// The forward pad's program that crops `grad_out` to the bulk and writes it into the bulk of
/// `grad_in` (a view of it at the box's first element, `grad_in`'s strides); `None` where the
/// forward's kernels do not take that view.
fn crop(
    plan: &PadPlan,
    whole: &Whole,
    runs: &[Range<usize>],
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
) -> Result<Option<Program>> {
    let axes = plan.axes();
    // Kept index j of an axis is output position pad_before + j; input index crop_start + j.
    let begins = axes.iter().zip(runs).map(|(a, r)| -((a.pad_before + r.start - a.crop_start) as i64));
    let ends = axes.iter().zip(runs).map(|(a, r)| -((a.out_len - (a.pad_before + r.end - a.crop_start)) as i64));
    let request = PadRequest::new(begins.chain(ends).collect()).max_output_bytes(plan.max_output_bytes());
    let crop = PadPlan::new(plan.dtype(), plan.out_shape(), &request)?;
    let first: u64 = runs.iter().zip(&whole.in_strides).map(|(r, &s)| r.start as u64 * s).sum();
    let bulk = BufferView { offset: grad_in.offset + first * whole.elem, strides: Some(&whole.in_strides), ..*grad_in };
    match Program::new(&crop, grad_out, &bulk, limits) {
        Ok(program) => Ok(Some(program)),
        Err(PadError::GpuLimit { .. } | PadError::InvalidView { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adjoint::images;
    use crate::dtype::DataType;
    use crate::mode::Mode;

    /// Every element of `grad_in` lies in the bulk or in exactly one border box, every element
    /// of an edge has several images on one axis at most (the LEAN pipeline's), and every
    /// element of the bulk has one image on each axis (its gradient a copy); for 8- and 16-bit
    /// elements the bulk's rows are whole 4-byte words. Every mode, ranks 1-3, axes of 1-5,
    /// pads and crops of -2 to 5 a side.
    #[test]
    fn the_bulk_and_its_borders_hold_every_element_once() {
        let (mut seen, mut corners_seen) = (0, 0);
        for mode in Mode::ALL {
            for seed in 0..400u64 {
                let mut x = seed * 0x9e37_79b9 + 7;
                let mut next = |n: u64| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % n
                };
                let rank = 1 + next(3) as usize;
                let shape: Vec<usize> = (0..rank).map(|_| 1 + next(5) as usize).collect();
                let pads: Vec<i64> = (0..2 * rank).map(|_| next(8) as i64 - 2).collect();
                let Ok(plan) = PadPlan::new(DataType::Float32, &shape, &PadRequest::new(pads).mode(mode)) else {
                    continue;
                };
                for elem in [4, 2, 1] {
                    let runs = bulk_box(&plan, elem);
                    let (edges, corners) = border_boxes(&plan, &runs);
                    // An edge a touched axis (its two sides one box), a corner a pair of them.
                    let outside = (0..rank).filter(|&a| runs[a] != (0..shape[a])).count();
                    assert!(
                        edges.len() <= outside && corners.len() <= outside * outside.saturating_sub(1) / 2,
                        "{plan:?}"
                    );
                    let [edges, corners]: [Vec<IndexBox>; 2] =
                        [edges, corners].map(|b| b.iter().flat_map(|b| plain(b)).collect());
                    let mut count = vec![0u32; plan.in_len()];
                    let coordinates = |e: usize| {
                        let mut rest = e;
                        let mut k: Vec<usize> = (0..rank)
                            .rev()
                            .map(|a| {
                                let k = rest % shape[a];
                                rest /= shape[a];
                                k
                            })
                            .collect();
                        k.reverse();
                        k
                    };
                    for (n, b) in edges.iter().chain(&corners).chain([&runs]).enumerate() {
                        for (e, c) in count.iter_mut().enumerate() {
                            let k = coordinates(e);
                            let inside = (0..rank).all(|a| b[a].contains(&k[a]));
                            *c += u32::from(inside);
                            // An edge's elements have sums on one axis at most (the LEAN pipeline's).
                            let several = (0..rank).filter(|&a| images(&plan.axes()[a], mode, k[a]).len() > 1);
                            if inside && n < edges.len() {
                                assert!(several.count() <= 1, "{mode} {plan:?} edge {b:?} element {k:?}");
                            }
                        }
                    }
                    assert!(count.iter().all(|&c| c == 1), "{mode} {plan:?} elem {elem}: {count:?}");
                    corners_seen += corners.len();
                    for (a, (axis, run)) in plan.axes().iter().zip(&runs).enumerate() {
                        for k in run.clone().filter(|_| !axis.is_identity()) {
                            assert_eq!(images(axis, mode, k).len(), 1, "{mode} {plan:?} axis {a} index {k}");
                        }
                    }
                    let last = runs.last().unwrap();
                    let per_word = 4 / elem as usize;
                    let words = last.start.is_multiple_of(per_word) && last.end.is_multiple_of(per_word);
                    assert!(words, "{mode} {plan:?} elem {elem}");
                    seen += usize::from(edges.len() > 1 && runs.iter().all(|r| !r.is_empty()));
                }
            }
        }
        assert!(seen > 300, "{seen} plans with a bulk and borders on two sides or more");
        assert!(corners_seen > 300, "{corners_seen} corners");
    }

    /// The crop's box: whole on an axis whose borders are an eighth of it or less and whose
    /// every index has a kept position, else the bulk's run (a wide border, a crop of the
    /// input, a border past an eighth).
    #[test]
    fn the_crop_writes_whole_axes_where_their_borders_are_narrow() {
        let plan = |shape: &[usize], pads: Vec<i64>| {
            PadPlan::new(DataType::Float16, shape, &PadRequest::new(pads).mode(Mode::Reflect)).unwrap()
        };
        // Rows of 256 reflected by 8 after: the bulk's words 0..246, the crop's whole rows.
        let rows = plan(&[8, 256], vec![0, 0, 0, 8]);
        assert_eq!((bulk_box(&rows, 2), widened(&rows, &bulk_box(&rows, 2))), (vec![0..8, 0..246], vec![0..8, 0..256]));
        // Borders of 32 of 256 (an eighth: reflected by 15 a side, runs 16..240) widen; of 34
        // (by 16) do not; nor an axis cropped by one at either end.
        let cases = [
            (vec![0, 15, 0, 15], 0..256),
            (vec![0, 16, 0, 16], 17..239),
            (vec![0, -1, 0, 1], 1..254),
            (vec![0, 0, 0, -1], 0..255),
        ];
        for (pads, want) in cases {
            let p = plan(&[2, 256], pads.clone());
            let runs = bulk_box(&p, 4);
            assert_eq!(widened(&p, &runs)[1], want, "{pads:?}: bulk {runs:?}");
        }
        // Rows of 63 halves reflected by 1 (grad_out's rows 64), in a view whose rows start at
        // words (64 apart): whole rows are not whole words, so the bulk's words 0..60 are cropped.
        let odd = plan(&[4, 63], vec![0, 0, 0, 1]);
        assert_eq!((bulk_box(&odd, 2)[1].clone(), widened(&odd, &bulk_box(&odd, 2))[1].clone()), (0..60, 0..63));
        let (_, o) = odd.byte_sizes().unwrap();
        let rows = BufferView { offset: 0, strides: Some(&[64, 1]), end: 4 * 64 * 2, buffer_size: 4 * 64 * 2 };
        let p =
            Program::backward(&odd, &BufferView::dense(0, o.next_multiple_of(4)), &rows, &DeviceLimits::WEBGPU_DEFAULT)
                .unwrap();
        assert!(p.pipeline_count() == 2 && !p.wgsl(0).contains("fn nest("), "the crop, then the sums");
        let counts: Vec<u32> = p.dispatches()[1..].iter().map(|d| d.params.gradient().count).collect();
        assert_eq!(counts, [4 * 3], "the borders: indices 60..63 of each row");
    }

    /// `gradient-words`: the borders of 8- and 16-bit gradients a lane a word where every
    /// window's rows are whole words (a lane's workgroups a word's elements fewer, the same
    /// windows and uniforms), the default's lane an element where one is not.
    #[test]
    fn word_lanes_take_whole_words_of_rows() {
        use crate::gpu::kernels::Shader;
        use crate::gpu::variant::KernelVariant;
        let programs = |dtype, shape: &[usize]| {
            let request = PadRequest::new(vec![0, 0, 0, 8]).mode(Mode::Reflect);
            let plan = PadPlan::new(dtype, shape, &request).unwrap();
            let (i, o) = plan.byte_sizes().unwrap();
            let (o, i) = (BufferView::dense(0, o.next_multiple_of(4)), BufferView::dense(0, i.next_multiple_of(4)));
            let limits = DeviceLimits::WEBGPU_DEFAULT;
            let [default, words] = [KernelVariant::Default, KernelVariant::GradientWords]
                .map(|v| super::super::program(&plan, &o, &i, &limits, v).unwrap());
            (default, words)
        };
        let words_of = |p: &Program| match p.pipeline_key(1).shader {
            Shader::Backward { words, .. } => words,
            other => panic!("a gradient's borders, not {other:?}"),
        };
        // Rows of 64 reflected by 8 after: float16's border box 54..64 of 1000 rows, float8's
        // 52..64 (the bulk's rows whole words): 5 and 3 words a row.
        for (dtype, per_word, box_len) in [(DataType::Float16, 2, 10), (DataType::Float8e4m3fn, 4, 12)] {
            let (default, words) = programs(dtype, &[1000, 64]);
            assert!(!words_of(&default) && words_of(&words), "{dtype}");
            assert!(words.label(1).contains(" words"), "{dtype}: {}", words.label(1));
            let (d, w) = (&default.dispatches()[1], &words.dispatches()[1]);
            assert_eq!((d.params, d.input, d.output), (w.params, w.input, w.output), "{dtype}: the same window");
            assert_eq!(d.params.gradient().count, 1000 * box_len);
            let groups = |lanes: u32| lanes.div_ceil(crate::gpu::params::WORKGROUP);
            assert_eq!(d.workgroups[0], groups(1000 * box_len), "{dtype}: a lane an element");
            assert_eq!(w.workgroups[0], groups(1000 * box_len / per_word), "{dtype}: a lane a word");
            assert_eq!(words.dispatches()[0].workgroups, default.dispatches()[0].workgroups, "{dtype}: the crop");
        }
        // float32 has no words.
        let (_, words) = programs(DataType::Float32, &[1000, 64]);
        assert!(!words_of(&words));
        // Rows of 63 float16s: no crop (its rows are not whole words), the gradient's own
        // pipeline on every element, a lane each.
        let (default, words) = programs(DataType::Float16, &[1000, 63]);
        assert_eq!((default.pipeline_count(), words.pipeline_count()), (1, 1));
        assert_eq!(default.pipeline_key(0), words.pipeline_key(0));
        // On 1 KiB bindings the borders' windows cut rows into columns of whole words too.
        let kib = DeviceLimits { max_binding: 1024, storage_alignment: 256, ..DeviceLimits::WEBGPU_DEFAULT };
        for (rows, cols, pad) in [(40, 16, 2), (64, 24, 2), (30, 40, 4)] {
            let request = PadRequest::new(vec![pad, pad, pad, pad]).mode(Mode::Reflect);
            let plan = PadPlan::new(DataType::Float16, &[rows, cols], &request).unwrap();
            let (i, o) = plan.byte_sizes().unwrap();
            let (o, i) = (BufferView::dense(0, o.next_multiple_of(4)), BufferView::dense(0, i.next_multiple_of(4)));
            let p = super::super::program(&plan, &o, &i, &kib, KernelVariant::GradientWords).unwrap();
            assert!(words_of(&p), "{rows}x{cols} by {pad}");
            let borders: Vec<_> = p.dispatches().iter().filter(|d| d.pipeline() == 1).collect();
            assert!(borders.len() > 4, "{rows}x{cols} by {pad}: windows");
            for d in borders {
                let g = d.params.gradient();
                assert!(g.in_base % 2 == 0 && g.axes[1].in_len % 2 == 0, "{rows}x{cols} by {pad}: {g:?}");
                assert_eq!(d.workgroups[0], (g.count / 2).div_ceil(crate::gpu::params::WORKGROUP));
            }
        }
        // A window whose first element is mid-word, or whose rows end mid-word, is not one.
        let plan =
            PadPlan::new(DataType::Float16, &[40, 16], &PadRequest::new(vec![2; 4]).mode(Mode::Reflect)).unwrap();
        let (i, o) = plan.byte_sizes().unwrap();
        let (o, i) = (BufferView::dense(0, o), BufferView::dense(0, i));
        let whole = super::super::whole::Whole::new(&plan, &o, &i, &DeviceLimits::WEBGPU_DEFAULT).unwrap();
        let words = whole.in_words().expect("float16 takes words");
        let p =
            super::super::program(&plan, &o, &i, &DeviceLimits::WEBGPU_DEFAULT, KernelVariant::GradientWords).unwrap();
        let border = &p.dispatches()[1];
        let with = |f: &dyn Fn(&mut crate::gpu::params::BackParams)| {
            let mut d = border.clone();
            let mut g = *d.params.gradient();
            f(&mut g);
            d.params = crate::gpu::params::Uniform::Gradient(g);
            words.word_window(&d, &DeviceLimits::WEBGPU_DEFAULT).unwrap()
        };
        assert!(with(&|_| {}).is_some());
        assert!(with(&|g| g.in_base += 1).is_none(), "starts mid-word");
        assert!(with(&|g| g.axes[1].in_len -= 1).is_none(), "rows end mid-word");
        assert!(whole.in_words().unwrap().in_words().is_none(), "words once");
    }

    fn dense_program(plan: &PadPlan) -> Program {
        let (i, o) = plan.byte_sizes().unwrap();
        let dense = |n: u64| BufferView::dense(0, n.next_multiple_of(4));
        Program::backward(plan, &dense(o), &dense(i), &DeviceLimits::WEBGPU_DEFAULT).unwrap()
    }

    /// `gradient-sides-apart`: the same borders a box a side (an edge each side of each axis,
    /// a corner each pair of sides: 4 + 4 dispatches for a 2-D pad, 3 by default), none with a
    /// gap, the same elements summed in the same pipelines; in a 3-D pad 6 + 12 (6 by default).
    #[test]
    fn sides_apart_are_a_box_a_side() {
        use crate::gpu::variant::KernelVariant;
        let borders = |shape: &[usize], pads: Vec<i64>, variant| {
            let plan = PadPlan::new(DataType::Float32, shape, &PadRequest::new(pads).mode(Mode::Reflect)).unwrap();
            let (i, o) = plan.byte_sizes().unwrap();
            let (o, i) = (BufferView::dense(0, o), BufferView::dense(0, i));
            let p = super::super::program(&plan, &o, &i, &DeviceLimits::WEBGPU_DEFAULT, variant).unwrap();
            let borders: Vec<_> = p.dispatches()[1..].iter().map(|d| (d.pipeline(), *d.params.gradient())).collect();
            (p.pipeline_count(), borders)
        };
        let square = (&[1usize, 64, 64][..], vec![0, 1, 2, 0, 3, 1]);
        let cube = (&[8usize, 8, 8][..], vec![1, 2, 1, 2, 1, 2]);
        for ((shape, pads), (apart_edges, apart_corners), together) in [(square, (4, 4), 3), (cube, (6, 12), 6)] {
            let (pipelines, default) = borders(shape, pads.clone(), KernelVariant::Default);
            let (apart_pipelines, apart) = borders(shape, pads.clone(), KernelVariant::GradientSidesApart);
            assert_eq!((default.len(), apart.len()), (together, apart_edges + apart_corners), "{shape:?}");
            assert_eq!(apart_pipelines, pipelines, "{shape:?}: the same pipelines");
            let no_gap = |g: &crate::gpu::params::BackParams| g.gap_axis == crate::gpu::params::NO_GAP;
            assert!(apart.iter().all(|(_, g)| no_gap(g)), "{shape:?}: no window skips a run");
            assert!(default.iter().all(|(_, g)| !no_gap(g)), "{shape:?}: each default window skips one");
            let sum = |b: &[(usize, crate::gpu::params::BackParams)], edges: bool| -> u32 {
                b.iter().filter(|(p, _)| (*p == 1) == edges).map(|(_, g)| g.count).sum()
            };
            for edges in [true, false] {
                assert_eq!(sum(&apart, edges), sum(&default, edges), "{shape:?}: the same elements");
            }
            let lean = apart.iter().filter(|(p, _)| *p == 1).count();
            assert_eq!(lean, apart_edges, "{shape:?}: the edges in the LEAN pipeline");
        }
    }

    /// The gradient's program: the forward's crop of the bulk first (its own pipeline, not
    /// the gradient's), then a window of the gradient's pipeline per border box (an edge an
    /// axis, a corner a pair of axes, each axis's two sides one window with a gap), which
    /// together hold every element the crop does not; a pad with nothing but one-image
    /// indices is the crop alone; 16-bit elements crop their rows in whole words; where no
    /// index has one image, the gradient's pipeline alone.
    #[test]
    fn a_gradient_is_the_crop_of_its_bulk_and_its_borders() {
        let request = |pads: Vec<i64>, mode| PadRequest::new(pads).mode(mode);
        let plan =
            PadPlan::new(DataType::Float32, &[6, 64, 64], &request(vec![0, 1, 1, 0, 2, 3], Mode::Reflect)).unwrap();
        let p = dense_program(&plan);
        assert_eq!(p.pipeline_count(), 3);
        assert!(!p.wgsl(0).contains("fn nest(") && p.wgsl(1).contains("fn nest("), "the crop, then the sums");
        assert!(p.label(1).ends_with("levels 1") && p.label(2).ends_with("levels 2"), "{} {}", p.label(1), p.label(2));
        let (crop, borders) = p.dispatches().split_first().unwrap();
        assert_eq!(crop.pipeline(), 0);
        // Reflect by 1 then 2 (axis 1: indices 1, 61 and 62 read twice) and by 1 then 3 (axis
        // 2: 1, 60, 61, 62): one-image runs 2..61 and 2..60.
        let runs = bulk_box(&plan, 4);
        assert_eq!(runs, [0..6, 2..61, 2..60]);
        // The edges (sums on one axis) in the LEAN pipeline, an axis's two sides one dispatch;
        // the corners in the plan's, their four one dispatch.
        let pipelines: Vec<usize> = borders.iter().map(|d| d.pipeline()).collect();
        assert_eq!(pipelines, [1, 1, 2]);
        let counts: Vec<u32> = borders.iter().map(|d| d.params.gradient().count).collect();
        assert_eq!(counts, [6 * (2 + 3) * 58, 6 * 59 * (2 + 4), 6 * (2 + 3) * (2 + 4)]);
        assert_eq!(counts.iter().sum::<u32>() as usize, plan.in_len() - 6 * 59 * 58);
        // Each side's length and the gap's: indices 0..2, then 61..64 (axis 1), 0..2, then
        // 60..64 (axis 2); none on an axis inside its run.
        let gaps = |d: &crate::gpu::program::Dispatch| {
            let g = d.params.gradient();
            [(g.gap_axis, g.gaps[0], g.gaps[1]), (g.gap2_axis, g.gaps[2], g.gaps[3])]
        };
        let none = (crate::gpu::params::NO_GAP, 0, 0);
        assert_eq!(gaps(&borders[0]), [(1, 2, 59), none]);
        assert_eq!(gaps(&borders[1]), [(2, 2, 58), none]);
        assert_eq!(gaps(&borders[2]), [(1, 2, 59), (2, 2, 58)]);
        assert_eq!(borders[2].params.gradient().axes[1].in_len, 5, "the window's indices, both sides");
        // The crop writes the bulk's rows: from element (0, 2, 2) of grad_in.
        assert!(crop.output().0 <= (2 * 64 + 2) * 4);
        // A constant pad: all bulk, a crop alone; with a crop of the input, zeros on borders.
        let constant = PadPlan::new(DataType::Float32, &[6, 64], &request(vec![1, 2, 3, 4], Mode::Constant)).unwrap();
        let p = dense_program(&constant);
        assert!(p.pipeline_count() == 1 && !p.wgsl(0).contains("fn nest("));
        let cropped = PadPlan::new(DataType::Float32, &[6, 64], &request(vec![1, -2, 3, 4], Mode::Constant)).unwrap();
        assert_eq!(dense_program(&cropped).pipeline_count(), 2);
        // float16 rows of 64 reflected by 8 after: runs 0..55, cropped in whole words 0..54.
        let halves = PadPlan::new(DataType::Float16, &[4, 64], &request(vec![0, 0, 0, 8], Mode::Reflect)).unwrap();
        assert_eq!(bulk_box(&halves, 2), [0..4, 0..54]);
        let p = dense_program(&halves);
        assert_eq!((p.pipeline_count(), p.dispatches().len()), (2, 2));
        // On 1 KiB bindings the borders' columns are halved along the rows until each fits:
        // still every border element once, each window within a binding.
        let kib = DeviceLimits { max_binding: 1024, storage_alignment: 256, ..DeviceLimits::WEBGPU_DEFAULT };
        let tall = PadPlan::new(DataType::Float16, &[40, 16], &request(vec![2, 2, 2, 2], Mode::Reflect)).unwrap();
        let (i, o) = tall.byte_sizes().unwrap();
        let p = Program::backward(&tall, &BufferView::dense(0, o), &BufferView::dense(0, i), &kib).unwrap();
        assert_eq!(p.pipeline_count(), 3);
        let borders: Vec<_> = p.dispatches().iter().filter(|d| d.pipeline() > 0).collect();
        let count: u32 = borders.iter().map(|d| d.params.gradient().count).sum();
        assert_eq!((bulk_box(&tall, 2), count as usize), (vec![3..37, 4..12], tall.in_len() - 34 * 8));
        assert!(borders.len() > 4 && borders.iter().all(|d| d.output().1 <= 1024 && d.input().unwrap().1 <= 1024));
        // Edge 300 after: the last index's 301 images, a long sum, split over a workgroup's
        // lanes (the plan's pipeline), not LEAN's; edge 30: LEAN's.
        for (pad, label) in [(300, "split levels 1"), (30, "float32 levels 1")] {
            let long = PadPlan::new(DataType::Float32, &[6, 40], &request(vec![0, 0, 0, pad], Mode::Edge)).unwrap();
            let p = dense_program(&long);
            assert!(p.pipeline_count() == 2 && p.label(1).ends_with(label), "{pad}: {}", p.label(1));
        }
        // A wrap of [2] by 3: every index has two images or more, no bulk.
        let wrap = PadPlan::new(DataType::Float32, &[2], &request(vec![3, 3], Mode::Wrap)).unwrap();
        let p = dense_program(&wrap);
        assert!(p.pipeline_count() == 1 && p.wgsl(0).contains("fn nest("));
    }
}
