//! The gradient of a whole plan (`Whole`): its pipeline, uniform, views' strides and spans,
//! every check made once; one dispatch of it, or of one window.

use crate::error::{GpuLimit, PadError, Result, Side};
use crate::plan::PadPlan;

use crate::adjoint::{block_len, most_images, BLOCK};
use crate::gpu::checks::{check_axis_range, check_rank, check_views, grid, limit, view, word_binding};
use crate::gpu::kernels::{GradientElement, Shader};
use crate::gpu::params::{magic_divisor, BackAxis, BackParams, Uniform, INDEX_LIMIT};
use crate::gpu::program::{BufferView, DeviceLimits, Dispatch, Program};
use crate::gpu::shader::PipelineKey;
use crate::gpu::view::Span;

/// What a binding error says the view was for.
const WHAT: &str = "the gradient, where no window of it fits a binding";

/// A window's extent on one axis: its first index and length, its gap (`(at, len)`: its
/// indices from the `at`-th on lie `len` further; a border's two sides in one window), and the
/// output coordinates they read (`lo..hi`; `None`: nothing, every index cropped away).
#[derive(Debug, Clone, Copy)]
pub(super) struct WindowAxis {
    pub(super) first: usize,
    pub(super) len: usize,
    pub(super) gap: Option<(usize, usize)>,
    pub(super) reads: Option<(usize, usize)>,
}

/// A part of the gradient's sums ([`parts`](super::windows::parts)): the images on `axis` at
/// output positions `lo..hi`, all of them kept positions or all pads.
#[derive(Debug, Clone, Copy)]
pub(super) struct Part {
    pub(super) axis: usize,
    pub(super) lo: usize,
    pub(super) hi: usize,
}

/// The gradient of a whole plan: its pipeline, its uniform but for the bindings' bases, its
/// views' strides (in elements) and bytes; every check made but whether a view fits a binding.
/// With `part`, one part of its sums ([`parts`](super::windows::parts)).
#[derive(Clone)]
pub(super) struct Whole {
    pub(super) key: PipelineKey,
    pub(super) params: BackParams,
    pub(super) elem: u64,
    pub(super) out_strides: Vec<u64>,
    pub(super) in_strides: Vec<u64>,
    /// The bytes of `grad_out` and `grad_in`; `None` where empty.
    pub(super) out_span: Option<Span>,
    pub(super) in_span: Option<Span>,
    pub(super) part: Option<Part>,
}

impl Whole {
    pub(super) fn new(
        plan: &PadPlan,
        grad_out: &BufferView,
        grad_in: &BufferView,
        limits: &DeviceLimits,
    ) -> Result<Whole> {
        let Some(element) = GradientElement::of(plan.dtype()) else {
            let reason = match crate::cpu::has_gradient(plan.dtype()) {
                true => "the GPU's gradient takes float32, complex64, float16, bfloat16 and the float8s but float8e8m0; cpu::pad_backward takes float64 and complex128 too",
                false => "no gradient is taken of integer, bool, string, float8e8m0 or 4-bit tensors",
            };
            return Err(PadError::Unsupported { dtype: plan.dtype().name(), reason: reason.into() });
        };
        let elem = element.bytes();
        let (read, write) = (view(Side::Input, grad_out), view(Side::Output, grad_in));
        let ((out_strides, out_span), (in_strides, in_span)) =
            check_views(plan, (&read, plan.out_shape()), (&write, plan.in_shape()), elem, limits)?;
        // The terms a lane sums at most: each touched axis's most images an index has. Where
        // one axis's sum passes a block, or all of them a lane's bound, one axis's sum goes to
        // a workgroup's lanes: the one that leaves a lane the fewest terms.
        let counts: Vec<u64> = plan.axes().iter().map(|a| most_images(a, plan.mode())).collect();
        let whole = counts.iter().product::<u64>();
        let split_at = (0..counts.len())
            .filter(|&d| counts[d] > 1)
            .map(|d| (split_lane_terms(&counts, d), d))
            .min()
            .filter(|_| counts.iter().any(|&c| c > BLOCK as u64) || whole > LANE_TERMS);
        let (split, split_axis, lane_terms) = match split_at {
            Some((terms, d)) => (true, d, terms),
            None => (false, 0, whole),
        };
        if lane_terms > LANE_TERMS {
            return Err(limit(
                GpuLimit::IndexRange,
                format!("an element's gradient sums up to {lane_terms} terms on one lane; the GPU's gradient takes at most {LANE_TERMS}"),
            ));
        }
        let levels = state_levels(&counts);
        let key = PipelineKey::new(
            plan.mode(),
            elem as u8,
            false,
            Shader::Backward { split, element, levels, words: false },
            false,
        );
        let mut p = BackParams::zeroed();
        if in_span.is_some() {
            let rank = plan.axes().len();
            check_rank(rank, format_args!(" in a gradient"))?;
            let count = plan.in_len() as u64;
            if count >= INDEX_LIMIT {
                return Err(limit(
                    GpuLimit::IndexRange,
                    format!("{count} input elements; the GPU's gradient needs under 2^31"),
                ));
            }
            p.rank = rank as u32;
            p.count = count as u32;
            p.split_axis = split_axis as u32;
            for (d, a) in plan.axes().iter().enumerate() {
                let period = plan.mode().period(a.kept as u64);
                // Its input length is under the count's 2^31 (checked above).
                check_axis_range(format_args!("axis {d}"), a.out_len, period)?;
                let (in_magic, in_shift) = magic_divisor(a.in_len.max(1) as u32);
                let (period_magic, period_shift) = magic_divisor(period as u32);
                let run = crate::adjoint::one_image_run(a, plan.mode());
                p.axes[d] = BackAxis {
                    in_len: a.in_len as u32,
                    in_magic,
                    in_shift,
                    out_len: a.out_len as u32,
                    pad_before: a.pad_before as u32,
                    kept: a.kept as u32,
                    crop_start: a.crop_start as u32,
                    period: period as u32,
                    period_magic,
                    period_shift,
                    out_stride: out_strides[d] as u32,
                    in_stride: in_strides[d] as u32,
                    touched: u32::from(!a.is_identity()),
                    run_start: run.start as u32,
                    run_len: run.len() as u32,
                    ..BackAxis::default()
                };
            }
        }
        Ok(Whole { key, params: p, elem, out_strides, in_strides, out_span, in_span, part: None })
    }

    /// This gradient in the pipeline of `levels` levels of state, split or not (the shader's
    /// LEAN where one level: no general walk, no parts).
    pub(super) fn in_state(&self, split: bool, levels: u8) -> Whole {
        let Shader::Backward { element, words, .. } = self.key.shader else { unreachable!("a gradient's key") };
        let shader = Shader::Backward { split, element, levels, words };
        Whole { key: PipelineKey::new(self.key.mode, self.key.word_bytes, false, shader, false), ..self.clone() }
    }

    /// This gradient's elements of one level at most (a border box where one axis has sums)
    /// in the LEAN pipeline, where no sum needs splitting (no index has more than a block's
    /// images); `None` where one does.
    pub(super) fn lean(&self, plan: &PadPlan) -> Option<Whole> {
        let long = plan.axes().iter().any(|a| most_images(a, plan.mode()) > BLOCK as u64);
        (!long).then(|| self.in_state(false, 1))
    }

    /// The program of `dispatches`.
    pub(super) fn program(&self, dispatches: Vec<Dispatch>) -> Program {
        Program::of(self.key, dispatches, self.out_span, self.in_span)
    }

    /// The dispatch of uniform `p` (its elements, `p.count`): a workgroup takes
    /// `WORKGROUP` elements, a lane each (where its sums are split, those with a long sum
    /// one after another on all its lanes).
    pub(super) fn dispatch(
        &self,
        p: BackParams,
        input: Option<Span>,
        output: Span,
        limits: &DeviceLimits,
    ) -> Result<Dispatch> {
        let count = p.count as u64;
        let lanes = match self.key.shader {
            Shader::Backward { words: true, .. } => count / (4 / self.elem),
            _ => count,
        };
        let groups = lanes.div_ceil(crate::gpu::params::WORKGROUP as u64);
        let workgroups = grid(groups, limits, count, "elements")?;
        Ok(Dispatch { pipeline: 0, params: Uniform::Gradient(p), workgroups, input, output })
    }

    /// The dispatch of one window ([`windows`](super::windows::windows)), its extent on each axis; a GpuLimit where a
    /// view's part does not fit a binding. Its offsets lie within the views' (checked
    /// whole), so they do not overflow.
    /// This gradient's pipeline a lane a u32 word (the `gradient-words` variant): 8- and
    /// 16-bit elements, not split, not in parts; `None` elsewhere.
    pub(super) fn in_words(&self) -> Option<Whole> {
        let Shader::Backward { split: false, element, levels, words: false } = self.key.shader else { return None };
        if self.elem >= 4 || self.part.is_some() {
            return None;
        }
        let shader = Shader::Backward { split: false, element, levels, words: true };
        Some(Whole { key: PipelineKey::new(self.key.mode, self.key.word_bytes, false, shader, false), ..self.clone() })
    }

    /// Window `d` of this gradient's elements as [`Whole::in_words`]' dispatch: where each of
    /// its rows is whole words of grad_in (its first element starts a word, its innermost axis
    /// is dense and whole words long, every outer axis's stride whole words; the shader's lane
    /// takes a word's elements as consecutive ones); `None` elsewhere.
    pub(super) fn word_window(&self, d: &Dispatch, limits: &DeviceLimits) -> Result<Option<Dispatch>> {
        let (Uniform::Gradient(p), per_word) = (d.params, 4 / self.elem) else { return Ok(None) };
        let Some(inner) = (p.rank as usize).checked_sub(1) else { return Ok(None) };
        let whole_words = u64::from(p.in_base).is_multiple_of(per_word)
            && ![p.gap_axis, p.gap2_axis].contains(&(inner as u32))
            && self.in_strides[inner] == 1
            && u64::from(p.axes[inner].in_len).is_multiple_of(per_word)
            && (0..inner).all(|a| p.axes[a].in_len == 1 || self.in_strides[a].is_multiple_of(per_word));
        match whole_words {
            true => self.dispatch(p, d.input, d.output, limits).map(Some),
            false => Ok(None),
        }
    }

    pub(super) fn window(
        &self,
        spans: &[WindowAxis],
        grad_out: &BufferView,
        grad_in: &BufferView,
        limits: &DeviceLimits,
    ) -> Result<Dispatch> {
        let elem = self.elem;
        let mut p = self.params;
        let (mut in_first, mut in_last, mut out_first) = (0u64, 0u64, 0u64);
        let (mut lo, mut hi, mut reads) = (0u64, 0u64, true);
        let mut gaps = spans.iter().enumerate().filter_map(|(a, s)| Some((a as u32, s.gap?)));
        for (axis, slot) in [(&mut p.gap_axis, 0), (&mut p.gap2_axis, 2)] {
            if let Some((a, (at, len))) = gaps.next() {
                (*axis, p.gaps[slot], p.gaps[slot + 1]) = (a, at as u32, len as u32);
            }
        }
        assert!(gaps.next().is_none(), "a window has two gaps at most");
        for (a, &WindowAxis { first, len, gap, reads: hull }) in spans.iter().enumerate() {
            let axis = &mut p.axes[a];
            in_first += first as u64 * self.in_strides[a];
            in_last += (len + gap.map_or(0, |(_, skipped)| skipped) - 1) as u64 * self.in_strides[a];
            if len as u32 != axis.in_len {
                axis.in_len = len as u32;
                (axis.in_magic, axis.in_shift) = magic_divisor(len as u32);
            }
            if axis.touched == 1 {
                // Its images are the whole axis's: the window's first index shifts its kept ones.
                axis.crop_start = axis.crop_start.wrapping_sub(first as u32);
            } else {
                out_first += first as u64 * self.out_strides[a];
            }
            match hull {
                Some((h_lo, h_hi)) => {
                    lo += h_lo as u64 * self.out_strides[a];
                    hi += (h_hi - 1) as u64 * self.out_strides[a];
                }
                None => reads = false,
            }
        }
        p.count = spans.iter().map(|s| s.len as u32).product();
        let write = view(Side::Output, grad_in);
        let in_start = grad_in.offset + in_first * elem;
        let output = word_binding(&write, (in_start, in_start + (in_last + 1) * elem), limits, WHAT)?;
        p.in_base = ((in_start - output.0) / elem) as u32;
        let input = match reads {
            true => {
                let read = view(Side::Input, grad_out);
                let span = (grad_out.offset + lo * elem, grad_out.offset + (hi + 1) * elem);
                Some(word_binding(&read, span, limits, WHAT)?)
            }
            false => None,
        };
        // Element 0 of the window's own coordinates, from its binding's start: below it where
        // the hull starts past it, the shader's wrapping sums land within the binding.
        p.out_base =
            input.map_or(0, |(start, _)| (grad_out.offset / elem + out_first).wrapping_sub(start / elem) as u32);
        self.dispatch(p, input, output, limits)
    }
}

/// The levels a pipeline's per-element state holds for axes whose indices have at most
/// `counts` images: those with several, rounded up to the next of `GRADIENT_LEVELS`, so that
/// a few pipelines serve every plan.
pub(super) fn state_levels(counts: &[u64]) -> u8 {
    let several = counts.iter().filter(|&&c| c > 1).count();
    let sizes = crate::gpu::shader::GRADIENT_LEVELS;
    sizes.into_iter().find(|&l| l as usize >= several).unwrap_or(sizes[sizes.len() - 1])
}

/// The terms one lane may sum (a bound a software GPU holds shaders to: lavapipe leaves a
/// loop after 65,535 iterations an invocation, a few of which a term takes).
const LANE_TERMS: u64 = 8192;

/// The terms a lane sums at most where axis `d`'s sums (of at most `counts[d]` terms) are split
/// over a workgroup's lanes: for each image outside it, its share of the blocks (each a nest of
/// the axes inside), then every block's sum.
pub(super) fn split_lane_terms(counts: &[u64], d: usize) -> u64 {
    let (outer, inner) = (counts[..d].iter().product::<u64>(), counts[d + 1..].iter().product::<u64>());
    let n = counts[d];
    let b = if n > BLOCK as u64 { block_len(n as usize) as u64 } else { 1 };
    let blocks = n.div_ceil(b);
    let lanes = crate::gpu::params::WORKGROUP as u64;
    outer * (blocks.div_ceil(lanes) * b * inner + blocks)
}
