//! From a plan and two buffer views to the dispatches of one pad: axes merged where plan
//! and views allow, words widened, and the output split into windows whose input and
//! output each fit one storage binding. Pure host code, tested without a device.

use crate::error::{GpuLimit, PadError, Result, Side};
use crate::plan::{AxisMap, Constant, Mode, PadPlan};

use super::params::{
    magic_divisor, AxisParams, Params, INDEX_LIMIT, MAX_RANK, NARROW_ROW_WORDS, NARROW_WORD_RUN, WIDE_ELEMS, WORKGROUP,
};
use super::shader::{PipelineKey, RowWalk};

/// Windows one pad may split into before the GPU path refuses it.
const MAX_WINDOWS: usize = 1 << 16;

/// What the layout needs of a device.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DeviceLimits {
    pub max_binding: u64,
    pub max_buffer: u64,
    pub storage_alignment: u64,
    pub max_groups: u32,
}

impl DeviceLimits {
    pub fn of(limits: &wgpu::Limits) -> DeviceLimits {
        DeviceLimits {
            max_binding: limits.max_storage_buffer_binding_size.min(limits.max_buffer_size),
            max_buffer: limits.max_buffer_size,
            storage_alignment: limits.min_storage_buffer_offset_alignment as u64,
            max_groups: limits.max_compute_workgroups_per_dimension,
        }
    }
}

/// Where a tensor lies in a buffer: element 0 at byte `offset`, per-axis element strides
/// (`None`: dense, row-major), nothing read or written at or past byte `end`.
#[derive(Debug, Clone)]
pub(crate) struct View<'a> {
    pub which: Side,
    pub offset: u64,
    pub strides: Option<&'a [u64]>,
    pub end: u64,
    pub buffer_size: u64,
}

/// One dispatch: its parameters, workgroups, and the byte ranges it binds.
#[derive(Debug, Clone)]
pub(crate) struct Window {
    pub params: Params,
    /// Narrow rows: the window starts mid-word or its rows end mid-word.
    pub mid_word: bool,
    pub workgroups: [u32; 3],
    /// Input binding (offset, size in bytes); `None` when the window reads nothing.
    pub input: Option<Span>,
    pub output: Span,
}

/// Every dispatch of one pad.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub key: PipelineKey,
    pub windows: Vec<Window>,
    /// Byte ranges the views cover (`None` for an empty tensor).
    pub in_span: Option<Span>,
    pub out_span: Option<Span>,
}

/// An axis after merging, with its view strides in moved words.
#[derive(Debug, Clone, Copy)]
struct Axis {
    map: AxisMap,
    in_stride: u64,
    out_stride: u64,
}

fn dense_strides(shape: &[usize]) -> Vec<u64> {
    let mut strides = vec![1u64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1] as u64);
    }
    strides
}

fn invalid(which: Side, reason: String) -> PadError {
    PadError::InvalidView { which, reason }
}

fn limit(limit: GpuLimit, what: String) -> PadError {
    PadError::GpuLimit { limit, what }
}

/// A byte range `[start, end)` of a buffer.
type Span = (u64, u64);

/// The view's strides, checked against the shape, and the byte range it covers.
fn view_strides(v: &View, shape: &[usize], elem: u64) -> Result<(Vec<u64>, Option<Span>)> {
    let strides = match v.strides {
        Some(s) if s.len() != shape.len() => {
            return Err(invalid(
                v.which,
                format!("{} strides given for {} axes (shape {shape:?})", s.len(), shape.len()),
            ))
        }
        Some(s) => s.to_vec(),
        None => dense_strides(shape),
    };
    if !v.offset.is_multiple_of(elem) {
        return Err(PadError::MisalignedOffset { which: v.which, offset: v.offset, alignment: elem });
    }
    if shape.contains(&0) {
        return Ok((strides, None));
    }
    let mut last = 0u128;
    for (axis, (&n, &s)) in shape.iter().zip(&strides).enumerate() {
        last += (n as u128 - 1) * s as u128;
        if last >= 1 << 62 {
            return Err(invalid(
                v.which,
                format!("axis {axis}: length {n} with stride {s} reaches past 2^62 elements"),
            ));
        }
    }
    let end = v.offset as u128 + (last + 1) * elem as u128;
    if end > v.end as u128 {
        return Err(PadError::BufferTooSmall {
            which: v.which,
            needed: (end - v.offset as u128) as u64,
            offset: v.offset,
            size: v.buffer_size,
        });
    }
    Ok((strides, Some((v.offset, end as u64))))
}

/// Refuses an output view that writes some element twice: ordered by stride, each axis
/// must step past everything the axes inside it cover.
fn check_no_self_overlap(shape: &[usize], strides: &[u64]) -> Result<()> {
    let mut axes: Vec<(u64, usize, usize)> =
        shape.iter().zip(strides).enumerate().filter(|(_, (&n, _))| n > 1).map(|(i, (&n, &s))| (s, n, i)).collect();
    axes.sort();
    let mut covered = 1u128; // elements spanned by the axes so far, plus one
    for (s, n, axis) in axes {
        if (s as u128) < covered {
            return Err(invalid(
                Side::Output,
                format!(
                    "axis {axis} (length {n}) has stride {s}, which overlaps the {covered} elements the axes inside it span: each output element must have its own place"
                ),
            ));
        }
        covered += s as u128 * (n as u128 - 1);
    }
    Ok(())
}

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
    if mode == Mode::Constant || n == 0 {
        return range;
    }
    for (a, b) in [(s, e.min(p)), (s.max(p + n), e)] {
        if a >= b {
            continue;
        }
        if mode == Mode::Edge {
            add(if b <= p { m.crop_start } else { m.crop_start + n - 1 });
        } else if b - a >= 2 * n {
            // A whole period: every kept index.
            add(m.crop_start);
            add(m.crop_start + n - 1);
        } else {
            for o in a..b {
                if let Some(k) = m.source(mode, o) {
                    add(k);
                }
            }
        }
    }
    range
}

/// Lays out `plan` reading `input` and writing `output` on a device with `limits`.
/// Everything is checked here, before anything is created.
pub(crate) fn layout(plan: &PadPlan, input: &View, output: &View, limits: &DeviceLimits) -> Result<Layout> {
    let mode = plan.mode();
    let elem = plan.dtype().width().bytes().ok_or_else(|| PadError::Unsupported {
        dtype: plan.dtype().name(),
        reason: "strings and 4-bit types run on the CPU path (cpu::pad, or GpuContext::pad which falls back)".into(),
    })? as u64;
    let (in_strides, in_span) = view_strides(input, plan.in_shape(), elem)?;
    let (out_strides, out_span) = view_strides(output, plan.out_shape(), elem)?;
    if out_span.is_some() {
        check_no_self_overlap(plan.out_shape(), &out_strides)?;
    }
    let (in_bytes, out_bytes) = plan.byte_sizes().unwrap_or((0, 0));
    if in_bytes > limits.max_buffer || out_bytes > limits.max_buffer {
        return Err(limit(
            GpuLimit::BufferSize,
            format!(
                "input of {in_bytes} and output of {out_bytes} bytes; the device's max_buffer_size is {}",
                limits.max_buffer
            ),
        ));
    }
    let mut layout = Layout {
        key: PipelineKey::new(mode, elem as u8, false, RowWalk::PerWord),
        windows: Vec::new(),
        in_span,
        out_span,
    };
    let Some(out_span) = out_span else { return Ok(layout) };

    // Merge adjacent axes where plan and both views allow it.
    let mut axes: Vec<Axis> = Vec::with_capacity(plan.axes().len());
    for (i, &map) in plan.axes().iter().enumerate() {
        if map.is_identity() && map.in_len == 1 {
            continue;
        }
        let a = Axis { map, in_stride: in_strides[i], out_stride: out_strides[i] };
        if let Some(prev) = axes.last_mut() {
            let contiguous = prev.in_stride == a.in_stride.wrapping_mul(map.in_len as u64)
                && prev.out_stride == a.out_stride.wrapping_mul(map.out_len as u64);
            if contiguous && map.is_identity() && (prev.map.is_identity() || mode == Mode::Constant) {
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

    // The innermost axis moves in words as wide as its bytes allow (an RGBA u8 pixel as one
    // u32, a row of 256 f16 as 32 vec4s) where it is contiguous on both sides and unpadded,
    // or a constant pad whose every length and offset splits into whole words.
    let (mut in_off, mut out_off) = (input.offset / elem, output.offset / elem);
    let mut word = elem;
    let last = axes.len() - 1;
    let inner = axes[last];
    if (inner.map.is_identity() || mode == Mode::Constant) && inner.in_stride == 1 && inner.out_stride == 1 {
        let fits = |k: u64| {
            inner.map.fields().iter().all(|&f| (f as u64).is_multiple_of(k))
                && axes[..last].iter().all(|a| a.in_stride.is_multiple_of(k) && a.out_stride.is_multiple_of(k))
                && in_off.is_multiple_of(k)
                && out_off.is_multiple_of(k)
        };
        if let Some(w) = [16, 8, 4].into_iter().find(|&w| w >= elem && fits(w / elem)) {
            let k = w / elem;
            word = w;
            axes[last].map = inner.map.map_fields(|f| f / k as usize);
            for a in &mut axes[..last] {
                a.in_stride /= k;
                a.out_stride /= k;
            }
            (in_off, out_off) = (in_off / k, out_off / k);
            if axes.len() > 1 && axes[last].map.is_identity() && axes[last].map.in_len == 1 {
                axes.pop();
            }
        }
    }
    if word < 4 {
        // One invocation owns each output word, so the output must be one dense run.
        let dense = dense_strides(plan.out_shape());
        if let Some(axis) = (0..dense.len()).find(|&i| plan.out_shape()[i] > 1 && out_strides[i] != dense[i]) {
            return Err(invalid(
                Side::Output,
                format!(
                    "axis {axis} has stride {}, but {}-bit outputs must be dense (stride {} there) unless their rows move in whole 4-byte words: the GPU writes them in 32-bit words",
                    out_strides[axis],
                    8 * elem,
                    dense[axis]
                ),
            ));
        }
    }

    let rank = axes.len();
    if rank > MAX_RANK {
        return Err(limit(
            GpuLimit::Rank,
            format!("{rank} axes remain after merging unpadded ones; the GPU path takes at most {MAX_RANK}"),
        ));
    }
    let mut multi_period = false;
    for (i, a) in axes.iter().enumerate() {
        let m = &a.map;
        let p = mode.period(m.kept as u64);
        if m.out_len as u64 + p >= INDEX_LIMIT {
            return Err(limit(
                GpuLimit::IndexRange,
                format!(
                    "axis {i} (after merging) has {} output elements and a period of {p}; the GPU path needs their sum under 2^31",
                    m.out_len
                ),
            ));
        }
        let one = mode.one_bounce_limit(m.kept as u64);
        multi_period |= m.pad_before as u64 > one || m.pad_after as u64 > one;
    }
    layout.key = PipelineKey::new(mode, word as u8, multi_period, RowWalk::PerWord);

    let constant = match plan.constant() {
        Constant::Bytes(b) => {
            let c: Vec<u8> =
                b.iter().copied().cycle().take(word as usize).chain(std::iter::repeat(0)).take(16).collect();
            bytemuck::pod_read_unaligned(&c)
        }
        Constant::String(_) => [0; 4],
    };
    let splitter = Splitter { mode, axes: &axes, word, in_off, out_off, limits, narrow: word < 4 };
    let mut boxes = vec![axes.iter().map(|a| (0usize, a.map.out_len)).collect::<Vec<_>>()];
    while let Some(b) = boxes.pop() {
        match splitter.window(&b, constant)? {
            Some(w) => {
                layout.windows.push(w);
                if layout.windows.len() > MAX_WINDOWS {
                    return Err(limit(
                        GpuLimit::Windows,
                        format!(
                            "more than {MAX_WINDOWS} binding windows (views too scattered for bindings of {} bytes)",
                            limits.max_binding
                        ),
                    ));
                }
            }
            None => {
                // Halve the outermost axis longer than one: boxes stay contiguous runs.
                let Some(d) = b.iter().position(|&(_, len)| len > 1) else {
                    return Err(limit(GpuLimit::Windows, "one element does not fit a binding".into()));
                };
                let (start, len) = b[d];
                let (mut lo, mut hi) = (b.clone(), b);
                lo[d] = (start, len / 2);
                hi[d] = (start + len / 2, len - len / 2);
                boxes.push(hi);
                boxes.push(lo);
            }
        }
    }
    if word < 4 {
        // One pipeline per pad: rows only if every window has them, along the same axes.
        let first = layout.windows[0].params.row_first;
        if layout.windows.iter().all(|w| w.params.row_first == first) {
            // Rows ending mid-word in any window: the pipeline for those (it runs rows of
            // whole words correctly too).
            layout.key.row_walk = match first {
                0 => RowWalk::PerWord,
                _ if layout.windows.iter().any(|w| w.mid_word) => RowWalk::MidWord,
                _ => RowWalk::whole_words(first),
            };
        } else {
            for w in &mut layout.windows {
                splitter.to_words(w);
            }
        }
    }
    debug_assert!(out_span.1 > out_span.0);
    Ok(layout)
}

/// Rows of `row_len` elements one wide-kernel workgroup takes (`Params::pack`): as many as
/// fit, so that short rows do not leave most of a workgroup idle (lavapipe, f32 [32,256,7,7]
/// padded by 1, a row per workgroup: the kernel took 13 x the copy shader's time).
fn wide_pack(row_len: u64) -> u64 {
    (WORKGROUP as u64 / row_len).max(1)
}

/// Invocations a narrow row owning `row_words` words takes: each writes up to
/// NARROW_ROW_WORDS of it, so that finding the row (its offsets, the mode on the axes above,
/// its kept words) is paid once for many words. (lavapipe, u8 [1,1024,1024,3]: 25 invocations
/// a row against 64 took 0.69-0.86 x the kernel time; f16 [4,512,250], 4 against 64,
/// 0.31-0.32 x; BENCHMARKS.md, section 23.)
fn narrow_lanes(row_words: u64) -> u64 {
    row_words.div_ceil(NARROW_ROW_WORDS as u64).max(1)
}

/// Narrow rows owning `row_words` words one workgroup takes: as many as fit, else 1.
fn narrow_pack(row_words: u64) -> u64 {
    (WORKGROUP as u64 / narrow_lanes(row_words)).max(1)
}

struct Splitter<'a> {
    mode: Mode,
    axes: &'a [Axis],
    word: u64,
    in_off: u64,
    out_off: u64,
    limits: &'a DeviceLimits,
    narrow: bool,
}

impl Splitter<'_> {
    /// Gives a narrow window one invocation per output word (instead of rows).
    fn to_words(&self, w: &mut Window) {
        let epw = 4 / self.word as u32;
        w.mid_word = false;
        let p = &mut w.params;
        p.row_first = 0;
        p.row_words = 0;
        p.pack = 0;
        let words = (p.first % epw + p.elems).div_ceil(epw);
        p.count = words;
        let groups = (words as u64).div_ceil((WORKGROUP * NARROW_WORD_RUN) as u64);
        let x = groups.min(self.limits.max_groups as u64);
        w.workgroups = [x as u32, groups.div_ceil(x) as u32, 1];
    }

    /// A binding of the words `lo..=hi`: (offset, size) in bytes.
    fn binding(&self, lo: u64, hi: u64) -> (u64, u64) {
        let start = lo * self.word / self.limits.storage_alignment * self.limits.storage_alignment;
        let end = ((hi + 1) * self.word).next_multiple_of(4);
        (start, end - start)
    }

    /// The window for a box (per axis, outermost first: start and length), or `None` if
    /// it must be split.
    fn window(&self, b: &[(usize, usize)], constant: [u32; 4]) -> Result<Option<Window>> {
        let maxg = self.limits.max_groups as u64;
        let elems: u64 = b.iter().map(|&(_, len)| len as u64).product();
        let rank = b.len();
        // Window lengths innermost first: axis 0, axis 1, and the product of those above.
        let len = |d: usize| if d < rank { b[rank - 1 - d].1 as u64 } else { 1 };
        let above = |d: usize| (d + 1..rank).map(len).product::<u64>();
        let fits_grid = if self.narrow {
            elems <= INDEX_LIMIT && elems.div_ceil(4 / self.word).div_ceil(WORKGROUP as u64) <= maxg * maxg
        } else {
            let rows = above(0);
            let grid = match wide_pack(len(0)) {
                1 => len(1) <= maxg && above(1) <= maxg,
                pack => rows.div_ceil(pack) <= maxg * maxg,
            };
            len(0).div_ceil((WORKGROUP * WIDE_ELEMS) as u64) <= maxg && rows <= INDEX_LIMIT && grid
        };
        if !fits_grid {
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
        let output = self.binding(out_lo, out_hi);
        let input = in_range.map(|(lo, hi)| self.binding(lo, hi));
        if output.1 > self.limits.max_binding || input.is_some_and(|i| i.1 > self.limits.max_binding) {
            return Ok(None);
        }

        let mut params = Params::zeroed();
        params.rank = self.axes.len() as u32;
        params.constant = constant;
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
        let mut mid_word = false;
        let workgroups = if self.narrow {
            let epw = 4 / self.word;
            let first = out_lo - output.0 / self.word;
            params.first = first as u32;
            params.elems = elems as u32;
            // Rows on a row grid where the window allows it: along axis 0, or along axes 0 and
            // 1 where axis 0 is a whole unpadded run (RGB pixels, say). Each row owns the words
            // that start in it: rows of whole words own their own; rows that end mid-word must
            // follow each other in the output and be two words long at least, so that a word
            // runs on into the next row at most.
            let os = |d: usize| if d < rank { self.axes[rank - 1 - d].out_stride } else { 0 };
            let rows_from = |f: usize, mid_word: bool| {
                let row = (0..f).map(len).product::<u64>();
                let aligned = first.is_multiple_of(epw)
                    && row.is_multiple_of(epw)
                    && (f..rank).all(|d| os(d).is_multiple_of(epw));
                // (Rows under two words measured slower than the per-word path: u8 rows of 7
                // bytes 1.15-1.22 x its time, BENCHMARKS.md section 25.)
                let adjacent =
                    row >= 2 * epw && (f..rank).all(|d| len(d) == 1 || os(d) == (0..d).map(len).product::<u64>());
                let fits = if mid_word { !aligned && adjacent } else { aligned };
                // Words a row owns at most (the first row also the word the window starts in).
                let words = if aligned { row / epw } else { row.div_ceil(epw) + 1 };
                let rows = len(f) * above(f);
                let grid = words.div_ceil((WORKGROUP * NARROW_ROW_WORDS) as u64) <= maxg
                    && rows <= INDEX_LIMIT
                    && rows.div_ceil(narrow_pack(words)) <= maxg * maxg;
                (fits && grid).then_some((f as u32, words, rows, mid_word))
            };
            let chunk_ok =
                rank >= 2 && self.axes[rank - 1].map.is_identity() && len(0) == self.axes[rank - 1].map.out_len as u64;
            // Rows of whole words first; else rows ending mid-word, the longest first.
            let rows = rows_from(1, false)
                .or_else(|| if chunk_ok { rows_from(2, false) } else { None })
                .or_else(|| if chunk_ok { rows_from(2, true) } else { None })
                .or_else(|| rows_from(1, true));
            if let Some((f, words, rows, mid)) = rows {
                mid_word = mid;
                params.row_first = f;
                params.row_words = words as u32;
                params.count = rows as u32;
                // Rows of up to half a workgroup's words share a workgroup; a longer row
                // takes x workgroups. Each invocation writes up to NARROW_ROW_WORDS of a row.
                let pack = narrow_pack(words);
                params.pack = pack as u32;
                let x = if pack > 1 { 1 } else { words.div_ceil((WORKGROUP * NARROW_ROW_WORDS) as u64) };
                params.row_lanes = if pack > 1 { narrow_lanes(words) } else { x * WORKGROUP as u64 } as u32;
                (params.lanes_magic, params.lanes_shift) = magic_divisor(params.row_lanes);
                let groups = rows.div_ceil(pack);
                let y = groups.min(maxg);
                [x as u32, y as u32, groups.div_ceil(y) as u32]
            } else {
                let mut w = Window { params, mid_word: false, workgroups: [0; 3], input, output };
                self.to_words(&mut w);
                return Ok(Some(w));
            }
        } else {
            let (rows, pack) = (above(0), wide_pack(len(0)));
            params.count = rows as u32;
            params.pack = pack as u32;
            match pack {
                1 => [len(0).div_ceil((WORKGROUP * WIDE_ELEMS) as u64) as u32, len(1) as u32, above(1) as u32],
                _ => {
                    let groups = rows.div_ceil(pack);
                    let y = groups.min(maxg);
                    [1, y as u32, groups.div_ceil(y) as u32]
                }
            }
        };
        Ok(Some(Window { params, mid_word, workgroups, input, output }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataType, PadRequest};

    const LIMITS: DeviceLimits =
        DeviceLimits { max_binding: 128 << 20, max_buffer: 1 << 40, storage_alignment: 256, max_groups: 65535 };

    fn plan(dtype: DataType, shape: &[usize], pads: &[i64], mode: Mode) -> PadPlan {
        PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap()
    }

    fn dense<'a>(which: Side) -> View<'a> {
        View { which, offset: 0, strides: None, end: u64::MAX, buffer_size: u64::MAX }
    }

    fn lay(p: &PadPlan, limits: &DeviceLimits) -> Layout {
        layout(p, &dense(Side::Input), &dense(Side::Output), limits).unwrap()
    }

    #[test]
    fn unpadded_inner_axes_move_as_wide_words() {
        // RGBA u8: one u32 per pixel.
        let l = lay(&plan(DataType::Uint8, &[1, 64, 64, 4], &[0, 2, 2, 0, 0, 2, 2, 0], Mode::Edge), &LIMITS);
        assert_eq!((l.key.word_bytes, l.windows[0].params.rank), (4, 2));
        // 256 f16 per row: 32 vec4 words.
        let l = lay(&plan(DataType::Float16, &[8, 4096, 256], &[0, 3, 0, 0, 5, 0], Mode::Reflect), &LIMITS);
        assert_eq!((l.key.word_bytes, l.windows[0].params.rank), (16, 3));
        assert_eq!(l.windows[0].params.axes[0].len, 32);
        // 3 bytes per pixel split into no word: u8 stays per byte.
        let l = lay(&plan(DataType::Uint8, &[9, 10, 3], &[1, 1, 0, 1, 1, 0], Mode::Wrap), &LIMITS);
        assert!(l.key.word_bytes < 4);
        // The constant fills the whole word.
        let v = crate::Tensor::from_slice(DataType::Uint16, vec![], &[0xabcdu16]).unwrap();
        let p = PadPlan::new(DataType::Uint16, &[4, 2], &PadRequest::new(vec![1, 0, 0, 0]).constant(v)).unwrap();
        let l = lay(&p, &LIMITS);
        assert_eq!((l.key.word_bytes, l.windows[0].params.constant[0]), (4, 0xabcd_abcd));
    }

    #[test]
    fn outputs_past_the_binding_limit_split_into_windows() {
        let small = DeviceLimits { max_binding: 1 << 20, ..LIMITS };
        // 4 MiB out: at least four windows, each binding at most 1 MiB, covering every row once.
        let p = plan(DataType::Float32, &[1000, 1000], &[3, 1, 2, 4], Mode::Reflect);
        let l = lay(&p, &small);
        assert!(l.windows.len() >= 4, "{}", l.windows.len());
        let mut rows: Vec<(u32, u32)> =
            l.windows.iter().map(|w| (w.params.axes[1].start, w.params.axes[1].len)).collect();
        rows.sort();
        let mut next = 0;
        for (s, n) in rows {
            assert_eq!(s, next);
            next += n;
        }
        assert_eq!(next, 1005);
        for w in &l.windows {
            assert!(w.output.1 <= 1 << 20 && w.input.unwrap().1 <= 1 << 20);
            assert_eq!(w.output.0 % 256, 0);
        }
        // A 1-D tensor splits along its only axis.
        let p = plan(DataType::Uint8, &[3 << 20], &[5, 7], Mode::Symmetric);
        assert!(lay(&p, &small).windows.len() >= 3);
    }

    /// wide.wgsl's grid, run on the host: every (row, element) of each window is written
    /// exactly once, short rows packed several to a workgroup, on grids past `max_groups`.
    #[test]
    fn the_wide_grid_covers_every_element_once() {
        let few_groups = DeviceLimits { max_groups: 7, ..LIMITS };
        let cases: [(&[usize], &[i64]); 5] = [
            (&[50, 7], &[0, 1, 0, 1]),          // rows of 9, 7 to a workgroup, a 2-D grid
            (&[4, 5, 30], &[0, 0, 1, 0, 0, 1]), // rows of 32, 2 to a workgroup
            (&[3, 40], &[1, 0, 1, 1]),          // rows of 41, one each
            (&[2, 3000], &[0, 5, 0, 2]),        // long rows, several workgroups each
            (&[21], &[2, 3]),                   // rank 1
        ];
        for (shape, pads) in cases {
            for limits in [&LIMITS, &few_groups] {
                let l = lay(&plan(DataType::Float32, shape, pads, Mode::Reflect), limits);
                for w in &l.windows {
                    let (len, rows) = (w.params.axes[0].len as u64, w.params.count as u64);
                    let pack = w.params.pack as u64;
                    assert_eq!(pack, wide_pack(len));
                    let [gx, gy, gz] = w.workgroups.map(u64::from);
                    assert!(gx.max(gy).max(gz) <= limits.max_groups as u64, "{shape:?}: {:?}", w.workgroups);
                    let mut seen = vec![0u8; (rows * len) as usize];
                    for (x, y, z) in (0..gz).flat_map(|z| (0..gy).flat_map(move |y| (0..gx).map(move |x| (x, y, z)))) {
                        for lane in 0..WORKGROUP as u64 {
                            let gid_x = x * WORKGROUP as u64 + lane;
                            let sub = gid_x / len;
                            let row = (y + z * gy) * pack + sub;
                            if sub >= pack || row >= rows {
                                continue;
                            }
                            for e in 0..WIDE_ELEMS as u64 {
                                let i = gid_x - sub * len + e * gx * WORKGROUP as u64;
                                if i >= len {
                                    break;
                                }
                                seen[(row * len + i) as usize] += 1;
                            }
                        }
                    }
                    assert!(
                        seen.iter().all(|&n| n == 1),
                        "{shape:?} pads {pads:?}: some element written {:?} times",
                        { seen.iter().copied().filter(|&n| n != 1).collect::<std::collections::BTreeSet<_>>() }
                    );
                }
            }
        }
    }

    /// narrow.wgsl's row grid, run on the host: every word the window touches is written
    /// exactly once and no other, rows of whole words and rows ending mid-word (each row owns
    /// the words that start in it, the first row also the word the window starts in), short
    /// rows packed several to a workgroup, long rows over several workgroups, on grids past
    /// `max_groups`, in windows of small bindings, rows along axis 0 and along axes 0 and 1,
    /// and wherever a row's run of kept words [f0, f1) lies (the shader writes it in pairs, the
    /// row's other words one by one).
    #[test]
    fn the_narrow_row_grid_covers_every_word_once() {
        // The words one invocation writes: its pairs of kept words, then the row's others.
        fn lane_words(lane: u64, lanes: u64, (wa, wb): (u64, u64), (f0, f1): (u64, u64)) -> Vec<u64> {
            let mut out = Vec::new();
            for n in 0..NARROW_ROW_WORDS as u64 / 2 {
                let w = f0 + 2 * (lane + n * lanes);
                if w >= f1 {
                    break;
                }
                out.extend([w, w + 1]);
            }
            let kept = f1 - f0;
            let mut j = lane;
            while wa + j + kept < wb {
                out.push(if wa + j < f0 { wa + j } else { wa + j + kept });
                j += lanes;
            }
            out
        }
        let few_groups = DeviceLimits { max_groups: 7, ..LIMITS };
        let small = DeviceLimits { max_binding: 1024, ..LIMITS };
        let cases: [(DataType, &[usize], &[i64]); 14] = [
            (DataType::Float16, &[32, 256, 6, 6], &[0, 0, 1, 1, 0, 0, 1, 1]), // rows of 4 words
            (DataType::Uint8, &[4, 6, 8], &[0, 0, 2, 0, 0, 2]),               // 3 words, odd
            (DataType::Uint8, &[2, 5, 6, 3], &[0, 1, 1, 0, 0, 1, 1, 0]),      // along axes 0 and 1
            (DataType::Uint8, &[3, 244], &[0, 4, 0, 4]),                      // 63 words, 2 invocations
            (DataType::Uint8, &[3, 256], &[0, 4, 0, 4]),                      // 66 words, 3 invocations
            (DataType::Uint8, &[2, 6000], &[0, 4, 0, 4]),                     // a workgroup each
            (DataType::Uint8, &[2, 9000], &[0, 4, 0, 4]),                     // several workgroups each
            (DataType::Uint8, &[1, 1024, 1024, 3], &[0, 2, 2, 0, 0, 2, 2, 0]), // long rows of pixels
            (DataType::Uint8, &[20], &[2, 2]),                                // rank 1
            (DataType::Uint8, &[4, 6, 7], &[0, 0, 1, 0, 0, 2]),               // rows of 10 bytes
            (DataType::Uint8, &[2, 5, 7, 3], &[0, 1, 1, 0, 0, 1, 1, 0]),      // 27 bytes, axes 0 and 1
            (DataType::Float16, &[3, 9], &[0, 1, 0, 1]),                      // 11 halves
            (DataType::Uint8, &[3, 300, 301], &[0, 0, 1, 0, 0, 2]),           // 304 bytes, many windows
            (DataType::Uint8, &[3, 1, 5], &[1, 0, 0, 1, 0, 0]),               // 5 bytes, unpadded rows
        ];
        let (mut packed, mut mid_word) = (0, 0);
        for (dtype, shape, pads) in cases {
            for limits in [&LIMITS, &few_groups, &small] {
                let l = lay(&plan(dtype, shape, pads, Mode::Reflect), limits);
                let row_windows = l.windows.iter().filter(|w| w.params.row_words != 0).collect::<Vec<_>>();
                assert!(limits.max_groups < 100 || !row_windows.is_empty(), "{shape:?}: no row windows");
                for w in row_windows {
                    let p = &w.params;
                    let epw = 4 / dtype.width().bytes().unwrap() as u64;
                    let (rows, pack, lanes) = (p.count as u64, p.pack as u64, p.row_lanes as u64);
                    let first = p.row_first as usize;
                    let window_rows = (first..p.rank as usize).map(|d| p.axes[d].len as u64).product::<u64>();
                    assert_eq!(rows, window_rows, "{shape:?}: rows of the window");
                    assert_eq!(pack, narrow_pack(p.row_words as u64));
                    packed += usize::from(pack > 1);
                    let len = (0..first).map(|d| p.axes[d].len).product::<u32>();
                    mid_word += usize::from(!(len as u64).is_multiple_of(epw) || !(p.first as u64).is_multiple_of(epw));
                    let [gx, gy, gz] = w.workgroups.map(u64::from);
                    assert!(gx.max(gy).max(gz) <= limits.max_groups as u64, "{shape:?}: {:?}", w.workgroups);
                    // The row's first element in the binding, as the shader works it out.
                    let base = |row: u64| {
                        let mut dst = p.out_base;
                        let mut lin = row;
                        for d in first..p.rank as usize {
                            let a = p.axes[d];
                            let c = if d + 1 < p.rank as usize { lin % a.len as u64 } else { lin };
                            lin /= a.len as u64;
                            dst = dst.wrapping_add((c as u32 + a.start).wrapping_mul(a.out_stride));
                        }
                        for d in 0..first {
                            dst = dst.wrapping_add(p.axes[d].start.wrapping_mul(p.axes[d].out_stride));
                        }
                        dst as u64
                    };
                    let touched = p.first as u64 / epw..(p.first as u64 + p.elems as u64).div_ceil(epw);
                    let owned = |row: u64| {
                        let b = base(row);
                        let wa = if row == 0 { b / epw } else { b.div_ceil(epw) };
                        (wa, (b + len as u64).div_ceil(epw))
                    };
                    // Kept runs: none, all, from either end, inside, of one pair.
                    let even = |n: u64| n & !1;
                    for run in 0..6 {
                        let mut seen = vec![0u8; touched.end as usize + 2];
                        for (x, y, z) in
                            (0..gz).flat_map(|z| (0..gy).flat_map(move |y| (0..gx).map(move |x| (x, y, z))))
                        {
                            for l in 0..WORKGROUP as u64 {
                                let gid_x = x * WORKGROUP as u64 + l;
                                // The shader's division by row_lanes (magic 0: by 1).
                                let (m, sh) = (p.lanes_magic as u64, p.lanes_shift);
                                let sub = if m == 0 { gid_x } else { ((gid_x * m) >> 32) >> sh };
                                assert_eq!(sub, gid_x / lanes);
                                let row = (y + z * gy) * pack + sub;
                                if sub >= pack || row >= rows {
                                    continue;
                                }
                                let (wa, wb) = owned(row);
                                let n = wb - wa;
                                let (f0, f1) = match run {
                                    0 => (wa, wa),
                                    1 => (wa, wa + even(n)),
                                    2 => (wa + n % 2, wb),
                                    3 => (wa + 1.min(n), wa + 1.min(n) + even(n.saturating_sub(1))),
                                    4 => (wa + n / 3, wa + n / 3 + even(n / 3)),
                                    _ => (wa + n / 2, wa + n / 2 + even((n - n / 2).min(2))),
                                };
                                for word in lane_words(gid_x - sub * lanes, lanes, (wa, wb), (f0, f1)) {
                                    assert!(touched.contains(&word), "{shape:?}: word {word} outside {touched:?}");
                                    seen[word as usize] += 1;
                                }
                            }
                        }
                        let wrong = touched.clone().filter(|&w| seen[w as usize] != 1).collect::<Vec<_>>();
                        assert!(
                            wrong.is_empty(),
                            "{shape:?} pads {pads:?}, run {run}: words {wrong:?} not written once"
                        );
                    }
                }
            }
        }
        assert!(mid_word >= 8, "only {mid_word} windows of rows ending mid-word");
        assert!(packed >= 4, "only {packed} windows packed rows");
    }

    #[test]
    fn the_key_ignores_shape() {
        let a = lay(&plan(DataType::Float32, &[1, 3, 224, 224], &[0, 0, 2, 2, 0, 0, 2, 2], Mode::Wrap), &LIMITS);
        let b = lay(&plan(DataType::Int32, &[4, 5, 6, 7], &[0, 1, 0, 1, 0, 1, 0, 1], Mode::Wrap), &LIMITS);
        assert_eq!(a.key, b.key);
        let c = lay(&plan(DataType::Int32, &[3], &[7, 0], Mode::Wrap), &LIMITS);
        assert!(c.key.multi_period && !a.key.multi_period);
    }

    /// The engine issue's cold-start mix: 5 modes x 4 types x 6 shapes.
    #[test]
    fn the_cold_start_mix_needs_at_most_40_pipelines() {
        let mix: [(&[usize], &[i64]); 6] = [
            (&[1, 3, 224, 224], &[0, 0, 2, 2, 0, 0, 2, 2]),
            (&[8, 4096, 256], &[0, 0, 3, 0, 0, 5]),
            (&[1, 1024, 1024, 3], &[0, 2, 2, 0, 0, 2, 2, 0]),
            (&[2, 3, 8, 8], &[1, 1, 1, 1, 1, 1, 1, 1]),
            (&[17], &[3, 4]),
            (&[4, 5, 6, 7, 2], &[0, 1, -1, 1, 0, 0, 1, -1, 1, 0]),
        ];
        let mut keys = std::collections::HashSet::new();
        for mode in Mode::ALL {
            for dtype in [DataType::Float32, DataType::Float16, DataType::Uint8, DataType::Int64] {
                for (shape, pads) in mix {
                    keys.insert(lay(&plan(dtype, shape, pads, mode), &LIMITS).key);
                }
            }
        }
        assert!(keys.len() <= 40, "{} pipelines", keys.len());
    }

    #[test]
    fn views_are_checked() {
        let p = plan(DataType::Float32, &[4, 4], &[1, 1, 1, 1], Mode::Edge);
        let strides = [1u64, 6];
        let out = View { strides: Some(&strides), ..dense(Side::Output) };
        assert!(layout(&p, &dense(Side::Input), &out, &LIMITS).is_ok());
        let overlapping = [6u64, 2];
        let out = View { strides: Some(&overlapping), ..dense(Side::Output) };
        let e = layout(&p, &dense(Side::Input), &out, &LIMITS).unwrap_err();
        assert!(matches!(e, PadError::InvalidView { which: Side::Output, .. }), "{e}");
        let q = plan(DataType::Uint8, &[4, 4], &[1, 1, 1, 1], Mode::Edge);
        let strided = [12u64, 1];
        let out = View { strides: Some(&strided), ..dense(Side::Output) };
        let e = layout(&q, &dense(Side::Input), &out, &LIMITS).unwrap_err();
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
