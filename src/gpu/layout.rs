//! From a plan and two buffer views to the dispatches of one pad: the views checked, axes
//! merged where plan and views allow, words widened, and the output split into windows
//! whose input and output each fit one storage binding. What depends on the kernel (its
//! grid, the narrow kernel's dense output and row walk) is its host half's (`kernels/`): `wide.rs`,
//! `narrow.rs`. Pure host code, tested without a device.

use crate::error::{Result, Side};
use crate::mode::Mode;
use crate::plan::{AxisMap, PadPlan};

use super::build::{build, Kind};
use super::checks::{binding, check_axis_range, check_rank, check_views, element_bytes, view};
use super::kernels::{Kernel, Shader};
use super::params::{constant_word, magic_divisor, AxisParams, Params, Uniform};
use super::program::{BufferView, DeviceLimits, Dispatch, Program};
use super::shader::PipelineKey;
use super::variant::KernelVariant;
use super::view::{dense_strides, invalid, Span, View};
use super::window::{Axis, Extent, WindowShape};

/// The range of input indices that output coordinates `[s, e)` of an axis read, or
/// `None` if all of them are constant padding.
fn source_range(mode: Mode, m: &AxisMap, s: usize, e: usize) -> Option<(usize, usize)> {
    let (p, n) = (m.pad_before, m.kept);
    let mut range: Option<(usize, usize)> = None;
    let mut add = |k: usize| {
        range = Some(range.map_or((k, k), |(lo, hi)| (lo.min(k), hi.max(k))));
    };
    let (ks, ke) = (s.max(p), e.min(p + n));
    if ks < ke {
        add(m.crop_start + ks - p);
        add(m.crop_start + ke - 1 - p);
    }
    // The pads before and after the kept part: what each reaches is the mode's rule.
    for (a, b) in [(s, e.min(p)), (s.max(p + n), e)] {
        if let Some((lo, hi)) = mode.pad_reach(a as i64 - p as i64, b as i64 - p as i64, n as u64) {
            add(m.crop_start + lo as usize);
            add(m.crop_start + hi as usize);
        }
    }
    range
}

impl Program {
    /// The program of `plan` reading `input` and writing `output` on a device with
    /// `limits`. Everything is checked here, before anything is created: views (strides,
    /// alignment, bounds, an output writing an element twice) and the device's limits
    /// (`PadError::GpuLimit` names which). Strings and 4-bit types have no program.
    pub fn new(plan: &PadPlan, input: &BufferView, output: &BufferView, limits: &DeviceLimits) -> Result<Program> {
        program(plan, input, output, limits, KernelVariant::Default)
    }
}

/// [`Program::new`] in a kernel variant (for measurement: `gpu::measurement`).
pub(super) fn program(
    plan: &PadPlan,
    input: &BufferView,
    output: &BufferView,
    limits: &DeviceLimits,
    variant: KernelVariant,
) -> Result<Program> {
    if plan.has_interior() {
        return super::interior::program(plan, input, output, limits);
    }
    lay_out(plan, &view(Side::Input, input), &view(Side::Output, output), limits, variant)
}

/// Lays out `plan` reading `input` and writing `output` on a device with `limits`, for the
/// kernel `variant`. Everything is checked here, before anything is created.
fn lay_out(
    plan: &PadPlan,
    input: &View,
    output: &View,
    limits: &DeviceLimits,
    variant: KernelVariant,
) -> Result<Program> {
    let mode = plan.mode();
    let elem = element_bytes(plan)?;
    let ((in_strides, in_span), (out_strides, out_span)) =
        check_views(plan, (input, plan.in_shape()), (output, plan.out_shape()), elem, limits)?;
    let Some(out_span) = out_span else {
        // An empty output: nothing to dispatch, and a key no host compiles.
        let key = PipelineKey::new(mode, elem as u8, false, Shader::all(elem as u8, variant)[0], false);
        return Ok(Program::of(key, Vec::new(), in_span, None));
    };

    let mut axes = merge_axes(plan, &in_strides, &out_strides);
    let (word, in_off, out_off) = widen_inner_axis(mode, &mut axes, elem, input.offset / elem, output.offset / elem);
    let dense = dense_strides(plan.out_shape());
    let dense_output = (0..dense.len()).all(|i| plan.out_shape()[i] <= 1 || out_strides[i] == dense[i]);
    // Whether both views' spans end inside their buffers rounded to whole 16-byte words, as
    // rows16 binds them (every window's bindings lie within the spans).
    let whole_16 = [(input, in_span), (output, Some(out_span))].iter().all(|(v, span)| {
        span.is_none_or(|(_, end)| end.checked_next_multiple_of(16).is_some_and(|e| e <= v.buffer_size))
    });
    let kernel = Kernel::choose(word, &axes, dense_output, whole_16, variant);
    kernel.check_output(plan, &out_strides, elem)?;
    let multi_period = check_index_range(mode, &axes)?;
    let constant = constant_word(plan, kernel.constant_bytes(word));
    let spans = (in_span, Some(out_span));
    let pad =
        Pad { mode, axes: &axes, word, in_off, out_off, input, output, limits, kernel, constant, multi_period, spans };
    build(&pad, limits.max_binding)
}

/// The plan's axes with their view strides, adjacent ones merged where plan and both views
/// allow it (unpadded axes contiguous on both sides; in constant mode also a padded axis
/// with the unpadded ones inside it), unit unpadded axes dropped; never empty.
fn merge_axes(plan: &PadPlan, in_strides: &[u64], out_strides: &[u64]) -> Vec<Axis> {
    let mut axes: Vec<Axis> = Vec::with_capacity(plan.axes().len());
    for (i, &map) in plan.axes().iter().enumerate() {
        if map.is_identity() && map.in_len == 1 {
            continue;
        }
        let a = Axis { map, in_stride: in_strides[i], out_stride: out_strides[i] };
        if let Some(prev) = axes.last_mut() {
            let contiguous = prev.in_stride == a.in_stride.wrapping_mul(map.in_len as u64)
                && prev.out_stride == a.out_stride.wrapping_mul(map.out_len as u64);
            if contiguous && map.is_identity() && (prev.map.is_identity() || plan.mode() == Mode::Constant) {
                prev.map = prev.map.map_fields(|f| f * map.in_len);
                prev.in_stride = a.in_stride;
                prev.out_stride = a.out_stride;
                continue;
            }
        }
        axes.push(a);
    }
    if axes.is_empty() {
        axes.push(Axis { map: AxisMap::identity(1), in_stride: 1, out_stride: 1 });
    }
    axes
}

/// Widens the innermost axis to words as wide as its bytes allow (an RGBA u8 pixel as one
/// u32, a row of 256 f16 as 32 vec4s) where it is contiguous on both sides and unpadded, or
/// a constant pad whose every length and offset splits into whole words. Returns the moved
/// word's bytes and the views' offsets in such words.
fn widen_inner_axis(mode: Mode, axes: &mut Vec<Axis>, elem: u64, in_off: u64, out_off: u64) -> (u64, u64, u64) {
    let last = axes.len() - 1;
    let inner = axes[last];
    if !((inner.map.is_identity() || mode == Mode::Constant) && inner.in_stride == 1 && inner.out_stride == 1) {
        return (elem, in_off, out_off);
    }
    let fits = |k: u64| {
        inner.map.fields().iter().all(|&f| (f as u64).is_multiple_of(k))
            && axes[..last].iter().all(|a| a.in_stride.is_multiple_of(k) && a.out_stride.is_multiple_of(k))
            && in_off.is_multiple_of(k)
            && out_off.is_multiple_of(k)
    };
    let Some(word) = [16, 8, 4].into_iter().find(|&w| w >= elem && fits(w / elem)) else {
        return (elem, in_off, out_off);
    };
    let k = word / elem;
    axes[last].map = inner.map.map_fields(|f| f / k as usize);
    for a in &mut axes[..last] {
        a.in_stride /= k;
        a.out_stride /= k;
    }
    if axes.len() > 1 && axes[last].map.is_identity() && axes[last].map.in_len == 1 {
        axes.pop();
    }
    (word, in_off / k, out_off / k)
}

/// Checks the rank and every axis's index range against what the shaders hold; returns
/// whether some pad reaches past one period of its mode (the modulo variant).
fn check_index_range(mode: Mode, axes: &[Axis]) -> Result<bool> {
    check_rank(axes.len(), format_args!(" remain after merging unpadded ones"))?;
    let mut multi_period = false;
    for (i, a) in axes.iter().enumerate() {
        let m = &a.map;
        check_axis_range(format_args!("axis {i} (after merging)"), m.out_len, mode.period(m.kept as u64))?;
        let one = mode.one_bounce_limit(m.kept as u64);
        multi_period |= m.pad_before as u64 > one || m.pad_after as u64 > one;
    }
    Ok(multi_period)
}

/// A pad's window before its kernel's shader is settled (which may change its uniform and
/// grid): its uniform, grid and bindings, and whether its narrow rows end mid-word (the row
/// walk's business only).
struct Window {
    params: Params,
    workgroups: [u32; 3],
    input: Option<Span>,
    output: Span,
    mid_word: bool,
}

impl Window {
    fn dispatch(self) -> Dispatch {
        let Window { params, workgroups, input, output, .. } = self;
        Dispatch { pipeline: 0, params: Uniform::Pad(params), workgroups, input, output }
    }
}

/// A pad as the builder's kind: its output's windows whose bindings fit the device, each with
/// its parameters and its kernel's grid, the kernel's shader settled over all of them.
struct Pad<'a> {
    mode: Mode,
    axes: &'a [Axis],
    word: u64,
    in_off: u64,
    out_off: u64,
    input: &'a View<'a>,
    output: &'a View<'a>,
    limits: &'a DeviceLimits,
    kernel: Kernel,
    constant: [u32; 4],
    multi_period: bool,
    spans: (Option<Span>, Option<Span>),
}

/// Every window in output order (wrap's pad rows, which read the input's far end, keep windows
/// of their own), each with whether its narrow rows end mid-word, which the narrow kernel's row
/// walk is settled from.
impl Kind for Pad<'_> {
    type Window = Window;

    fn extent(&self) -> (Vec<(usize, usize)>, Vec<usize>) {
        (self.axes.iter().map(|a| (0, a.map.out_len)).collect(), vec![1; self.axes.len()])
    }

    /// The window for a box (per axis, outermost first: start and length) and whether its
    /// narrow rows end mid-word, or `None` if it must be split.
    fn window(&self, b: &Extent) -> Result<Option<Window>> {
        let shape = WindowShape { b, axes: self.axes, max_groups: self.limits.max_groups as u64 };
        if !self.kernel.fits(&shape, self.word) {
            return Ok(None);
        }
        let (mut out_lo, mut out_hi) = (self.out_off, self.out_off);
        let mut in_range = Some((self.in_off, self.in_off));
        for (a, &(s, len)) in self.axes.iter().zip(b) {
            out_lo += s as u64 * a.out_stride;
            out_hi += (s + len - 1) as u64 * a.out_stride;
            in_range = match (in_range, source_range(self.mode, &a.map, s, s + len)) {
                (Some((lo, hi)), Some((k0, k1))) => Some((lo + k0 as u64 * a.in_stride, hi + k1 as u64 * a.in_stride)),
                _ => None,
            };
        }
        // Each binding within the device's and what the shaders index, or the box is cut.
        let input = match in_range {
            Some((lo, hi)) => match self.binding(self.input, lo, hi)? {
                Ok(bound) => Some(bound),
                Err(_) => return Ok(None),
            },
            None => None,
        };
        let Ok(output) = self.binding(self.output, out_lo, out_hi)? else { return Ok(None) };

        let mut params = Params::zeroed();
        params.rank = self.axes.len() as u32;
        params.constant = self.constant;
        let wrap = |x: u64, base_bytes: u64| (x.wrapping_sub(base_bytes / self.word)) as u32;
        params.in_base = wrap(self.in_off, input.map_or(0, |i| i.0));
        params.out_base = wrap(self.out_off, output.0);
        for (i, (a, &(start, len))) in self.axes.iter().rev().zip(b.iter().rev()).enumerate() {
            let m = &a.map;
            let p = self.mode.period(m.kept as u64);
            let (len_magic, len_shift) = magic_divisor(len as u32);
            let (period_magic, period_shift) = magic_divisor(p as u32);
            params.axes[i] = AxisParams {
                pad_before: m.pad_before as u32,
                kept: m.kept as u32,
                crop_start: m.crop_start as u32,
                start: start as u32,
                len: len as u32,
                len_magic,
                len_shift,
                in_stride: a.in_stride as u32,
                out_stride: a.out_stride as u32,
                period: p as u32,
                period_offset: ((p - m.pad_before as u64 % p) % p) as u32,
                period_magic,
                period_shift,
                ..AxisParams::default()
            };
        }
        let first = out_lo - output.0 / self.word;
        let (workgroups, mid_word) = self.kernel.grid(&shape, &mut params, self.word, first);
        Ok(Some(Window { params, workgroups, input, output, mid_word }))
    }

    fn settle(&self, mut windows: Vec<Window>) -> (PipelineKey, Vec<Dispatch>) {
        let mid_words: Vec<bool> = windows.iter().map(|w| w.mid_word).collect();
        let mut grids: Vec<_> = windows.iter_mut().map(|w| (&mut w.params, &mut w.workgroups)).collect();
        let shader = self.kernel.shader(&mut grids, &mid_words, self.word, self.limits.max_groups as u64);
        let key =
            PipelineKey::new(self.mode, self.word as u8, self.multi_period, shader, self.kernel.read_only_input());
        (key, windows.into_iter().map(Window::dispatch).collect())
    }

    fn spans(&self) -> (Option<Span>, Option<Span>) {
        self.spans
    }
}

impl Pad<'_> {
    /// The binding of words `lo..=hi` of view `v` ([`binding`]: in the kernel's bound words,
    /// within what its shaders index), or `Err(size)` where it does not fit one.
    fn binding(&self, v: &View, lo: u64, hi: u64) -> Result<std::result::Result<(u64, u64), u64>> {
        let bytes = |w: u64| {
            w.checked_mul(self.word).ok_or_else(|| {
                let what = format!("its words {lo}..={hi} of {} bytes lie past byte {}", self.word, u64::MAX);
                invalid(v.which, what)
            })
        };
        let span = (bytes(lo)?, bytes(hi.saturating_add(1))?);
        binding(v, span, self.kernel.binding_granule(), self.kernel.max_binding(self.word), self.limits)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::gpu::kernels::narrow::RowWalk;
    use crate::{DataType, PadRequest};

    pub(crate) const LIMITS: DeviceLimits =
        DeviceLimits { max_binding: 128 << 20, max_buffer: 1 << 40, storage_alignment: 256, max_groups: 65535 };

    pub(crate) fn plan(dtype: DataType, shape: &[usize], pads: &[i64], mode: Mode) -> PadPlan {
        PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap()
    }

    fn dense<'a>(which: Side) -> View<'a> {
        View { which, offset: 0, strides: None, end: u64::MAX, buffer_size: u64::MAX }
    }

    pub(crate) fn lay(p: &PadPlan, limits: &DeviceLimits) -> Program {
        lay_variant(p, limits, KernelVariant::Default)
    }

    pub(crate) fn lay_variant(p: &PadPlan, limits: &DeviceLimits, variant: KernelVariant) -> Program {
        lay_out(p, &dense(Side::Input), &dense(Side::Output), limits, variant).unwrap()
    }

    #[test]
    fn unpadded_inner_axes_move_as_wide_words() {
        // RGBA u8: one u32 per pixel.
        let l = lay(&plan(DataType::Uint8, &[1, 64, 64, 4], &[0, 2, 2, 0, 0, 2, 2, 0], Mode::Edge), &LIMITS);
        assert_eq!((l.key().word_bytes, l.dispatches[0].params.pad().rank), (4, 2));
        // 256 f16 per row: 32 vec4 words.
        let l = lay(&plan(DataType::Float16, &[8, 4096, 256], &[0, 3, 0, 0, 5, 0], Mode::Reflect), &LIMITS);
        assert_eq!((l.key().word_bytes, l.dispatches[0].params.pad().rank), (16, 3));
        assert_eq!(l.dispatches[0].params.pad().axes[0].len, 32);
        // 3 bytes per pixel split into no word: u8 stays per byte.
        let l = lay(&plan(DataType::Uint8, &[9, 10, 3], &[1, 1, 0, 1, 1, 0], Mode::Wrap), &LIMITS);
        assert!(l.key().word_bytes < 4);
        // The constant fills the whole word.
        let v = crate::Tensor::from_slice(DataType::Uint16, vec![], &[0xabcdu16]).unwrap();
        let p = PadPlan::new(DataType::Uint16, &[4, 2], &PadRequest::new(vec![1, 0, 0, 0]).constant(v)).unwrap();
        let l = lay(&p, &LIMITS);
        assert_eq!((l.key().word_bytes, l.dispatches[0].params.pad().constant[0]), (4, 0xabcd_abcd));
    }

    #[test]
    fn outputs_past_the_binding_limit_split_into_windows() {
        let small = DeviceLimits { max_binding: 1 << 20, ..LIMITS };
        // 4 MiB out: at least four windows, each binding at most 1 MiB, covering every row once.
        let p = plan(DataType::Float32, &[1000, 1000], &[3, 1, 2, 4], Mode::Reflect);
        let l = lay(&p, &small);
        assert!(l.dispatches.len() >= 4, "{}", l.dispatches.len());
        let mut rows: Vec<(u32, u32)> =
            l.dispatches.iter().map(|w| (w.params.pad().axes[1].start, w.params.pad().axes[1].len)).collect();
        rows.sort();
        let mut next = 0;
        for (s, n) in rows {
            assert_eq!(s, next);
            next += n;
        }
        assert_eq!(next, 1005);
        for w in &l.dispatches {
            assert!(w.output.1 <= 1 << 20 && w.input.unwrap().1 <= 1 << 20);
            assert_eq!(w.output.0 % 256, 0);
        }
        // A 1-D tensor splits along its only axis.
        let p = plan(DataType::Uint8, &[3 << 20], &[5, 7], Mode::Symmetric);
        assert!(lay(&p, &small).dispatches.len() >= 3);
    }

    /// Round seven: windows of near-equal work. Random plans on small bindings whose slices
    /// along the outermost axis are small beside a binding: at most ceil(bytes / binding) + 1
    /// windows (bytes: the larger view's span; binding: what a window may bind less its
    /// alignment and last word), the largest at most twice the smallest (in slices); wrap,
    /// whose pad rows read the input's far end, may take two windows more. (The halving
    /// splitter took 40 windows for an int32 [1048581, 40] wrap on 128 MiB bindings.)
    #[test]
    fn windows_are_few_and_even() {
        let mut next = crate::draws(0x9e37_79b9_7f4a_7c15u64);
        let (mut checked, mut split) = (0, 0);
        for _ in 0..600 {
            let dtype = [DataType::Uint8, DataType::Float16, DataType::Float32, DataType::Int64][next(4) as usize];
            let rank = 1 + next(2) as usize;
            let shape: Vec<usize> =
                (0..rank).map(|i| if i == 0 { 100 + next(3000) as usize } else { 1 + next(6) as usize }).collect();
            let mode = Mode::ALL[next(5) as usize];
            let pads: Vec<i64> = (0..2 * rank).map(|_| next(4) as i64 - 1).collect();
            let Ok(p) = PadPlan::new(dtype, &shape, &PadRequest::new(pads.clone()).mode(mode)) else { continue };
            let binding = 8192u64 << next(2);
            let limits = DeviceLimits { max_binding: binding, storage_alignment: 16, ..LIMITS };
            let dense = |n: u64| BufferView::dense(0, n.next_multiple_of(16).max(16));
            let Some((i, o)) = p.byte_sizes().filter(|&(_, o)| o > 0) else { continue };
            let l = Program::new(&p, &dense(i), &dense(o), &limits).unwrap();
            let bytes = [l.input_span(), l.output_span()].iter().flatten().map(|(a, b)| b - a).max().unwrap();
            let outer = |d: &Dispatch| d.params.pad().axes[d.params.pad().rank as usize - 1];
            let slices: Vec<u64> = l.dispatches.iter().map(|d| outer(d).len as u64).collect();
            let (count, most, least) =
                (slices.len() as u64, *slices.iter().max().unwrap(), *slices.iter().min().unwrap());
            checked += 1;
            split += usize::from(count > 1);
            let bound = bytes.div_ceil(binding - 32) + 1 + if mode == Mode::Wrap { 2 } else { 0 };
            let what = format!("{dtype} {shape:?} {pads:?} {mode} on {binding}: {count} windows of {slices:?} slices for {bytes} bytes");
            assert!(count <= bound, "{what}: more than {bound}");
            assert!(mode == Mode::Wrap || most <= 2 * least.max(1), "{what}: uneven");
        }
        assert!(checked > 400 && split > 200, "{checked} plans checked, {split} split");
        // The probe's case: the wrapped pad rows (3 before, 2 after) a window each, the rows
        // between in two even halves.
        let p = plan(DataType::Int32, &[1048581, 40], &[3, -17, 2, -22], Mode::Wrap);
        let l = lay(&p, &LIMITS);
        let rows: Vec<u32> =
            l.dispatches.iter().map(|d| d.params.pad().axes[d.params.pad().rank as usize - 1].len).collect();
        assert_eq!(rows.len(), 4, "{rows:?}");
        assert_eq!((rows[0], rows[3]), (3, 2), "{rows:?}");
        assert!(rows[1].abs_diff(rows[2]) <= 1, "{rows:?}");
    }

    #[test]
    fn the_key_ignores_shape() {
        let a = lay(&plan(DataType::Float32, &[1, 3, 224, 224], &[0, 0, 2, 2, 0, 0, 2, 2], Mode::Wrap), &LIMITS);
        let b = lay(&plan(DataType::Int32, &[4, 5, 6, 7], &[0, 1, 0, 1, 0, 1, 0, 1], Mode::Wrap), &LIMITS);
        assert_eq!(a.key(), b.key());
        let c = lay(&plan(DataType::Int32, &[3], &[7, 0], Mode::Wrap), &LIMITS);
        assert!(c.key().multi_period && !a.key().multi_period);
    }

    /// Each kernel variant reaches the pipelines and grids it is measured for, and only
    /// those: a variant silently run as the default would pass every correctness test.
    #[test]
    fn kernel_variants_reach_their_keys_and_grids() {
        use KernelVariant::*;
        let f32_image = plan(DataType::Float32, &[1, 64, 512, 512], &[0, 0, 1, 1, 0, 0, 1, 1], Mode::Reflect);
        let u8_image = plan(DataType::Uint8, &[1, 1024, 1024, 3], &[0, 2, 2, 0, 0, 2, 2, 0], Mode::Wrap);
        let (f32_default, u8_default) = (lay(&f32_image, &LIMITS).key(), lay(&u8_image, &LIMITS).key());
        for v in KernelVariant::ALL {
            let l = lay_variant(&f32_image, &LIMITS, v);
            let own = matches!(v, Reference | ReadOnlyInput | DeviceGrid | DeviceGrid256 | FlatU4 | Rows16);
            assert_eq!(l.key() != f32_default, own, "{v:?}: a pipeline of its own");
            assert_eq!(l.key().wgsl().contains("fn funnel("), v == Rows16, "{v:?}");
            // 514 * 514 * 64 words: the default's flat grid, 8 a lane, unless a variant
            // says otherwise.
            let flat = match v {
                Reference | Rows16 => 0,
                FlatU4 | DeviceGrid | DeviceGrid256 => 4,
                _ => 8,
            };
            assert_eq!(l.key().flat_grid().map_or(0, |g| g.words), flat, "{v:?}");
            assert_eq!(l.key().wgsl().contains("fn flat_next("), flat > 0, "{v:?}");
            let wgsl = l.key().wgsl();
            let device = matches!(v, DeviceGrid | DeviceGrid256);
            assert_eq!(wgsl.contains("let step = nwg.x * nwg.y * WORKGROUP;"), device, "{v:?}");
            assert_eq!(wgsl.contains("const WORKGROUP: u32 = 256u;"), v == DeviceGrid256, "{v:?}");
            // Rows of 514: one workgroup a row, 16 elements a lane, or 9 workgroups, one each;
            // flat, 514 * 514 * 64 elements in blocks of 256 or 512 (past 65535: a second row);
            // the device grid, its 2^17 lanes; rows16, 514 * 514 * 64 * 4 bytes in 16-byte
            // words, 256 a workgroup.
            let want = match (v, flat) {
                (Reference, _) => [9, 514, 64],
                (Rows16, _) => [16513, 1, 1],
                (DeviceGrid, _) => [2048, 1, 1],
                (DeviceGrid256, _) => [512, 1, 1],
                (_, 4) => [65535, 2, 1],
                (_, 8) => [33025, 1, 1],
                _ => [1, 514, 64],
            };
            assert_eq!(l.dispatches[0].workgroups, want, "{v:?}");

            let l = lay_variant(&u8_image, &LIMITS, v);
            // The device and flat grids are for wide words: 8-bit ones run the default's pipeline.
            let own = matches!(v, Reference | ReadOnlyInput | NarrowSpread | NarrowLoadsFirst | Rows16);
            assert_eq!(l.key() != u8_default, own, "{v:?}: a pipeline of its own");
            assert_eq!(l.key().wgsl().contains("fn funnel("), v == Rows16, "{v:?}");
            assert_eq!(l.key().wgsl().contains("var<storage, read> src"), v.read_only_input(), "{v:?}");
            assert_eq!(l.key().wgsl().contains("fn pair_words("), v == NarrowLoadsFirst, "{v:?}");
            let d = &l.dispatches[0];
            // Rows of 3084 bytes, 772 words: 25 lanes of pairs, or a workgroup, or per word;
            // sized to the device, 8 words a lane (1028 rows of 772 words over 2^17 lanes),
            // 97 lanes in two workgroups.
            let want_lanes = match v {
                Reference | Rows16 => 0,
                NarrowSpread => 64,
                DeviceGrid => 128,
                _ => 25,
            };
            assert_eq!(d.params.pad().row_lanes, want_lanes, "{v:?}");
            assert_eq!(l.key().row_walk() == RowWalk::PerWord, matches!(v, Reference | Rows16), "{v:?}");
            if v == Rows16 {
                // 1028 x 1028 x 3 bytes in 16-byte words, 256 a workgroup; rows of pixels.
                assert_eq!((d.workgroups, d.params.pad().row_first, d.params.pad().row_words), ([775, 1, 1], 2, 3084));
            }
            if v == Reference {
                // One word an invocation: a workgroup a 64 words.
                let words = (1028 * 1028 * 3u64).div_ceil(4);
                let [x, y, _] = d.workgroups.map(u64::from);
                assert!(x * y >= words.div_ceil(64) && (x - 1) * y < words.div_ceil(64), "{:?}", d.workgroups);
            }
        }
    }

    #[test]
    fn views_are_checked() {
        let p = plan(DataType::Float32, &[4, 4], &[1, 1, 1, 1], Mode::Edge);
        let strides = [1u64, 6];
        let out = View { strides: Some(&strides), ..dense(Side::Output) };
        assert!(lay_out(&p, &dense(Side::Input), &out, &LIMITS, KernelVariant::Default).is_ok());
        let overlapping = [6u64, 2];
        let out = View { strides: Some(&overlapping), ..dense(Side::Output) };
        let e = lay_out(&p, &dense(Side::Input), &out, &LIMITS, KernelVariant::Default).unwrap_err();
        assert!(matches!(e, crate::PadError::InvalidView { which: Side::Output, .. }), "{e}");
        let q = plan(DataType::Uint8, &[4, 4], &[1, 1, 1, 1], Mode::Edge);
        let strided = [12u64, 1];
        let out = View { strides: Some(&strided), ..dense(Side::Output) };
        let e = lay_out(&q, &dense(Side::Input), &out, &LIMITS, KernelVariant::Default).unwrap_err();
        assert!(e.to_string().contains("axis 0 has stride 12"), "{e}");
    }

    #[test]
    fn source_ranges_cover_what_a_window_reads() {
        let m = plan(DataType::Float32, &[10], &[4, 3], Mode::Reflect).axes()[0];
        for s in 0..17 {
            for e in s + 1..=17 {
                let want = (s..e).map(|o| m.source(Mode::Reflect, o).unwrap());
                let (lo, hi) = (want.clone().min().unwrap(), want.max().unwrap());
                assert_eq!(source_range(Mode::Reflect, &m, s, e), Some((lo, hi)), "{s}..{e}");
            }
        }
    }
}
