//! The host half of `shaders/narrow*.wgsl` (8- and 16-bit elements in u32 words; one
//! invocation owns each output word it writes). Two walks, a pipeline constant each
//! ([`RowWalk`]): rows on a grid (along axis 0, or axes 0 and 1 where axis 0 is a whole
//! unpadded run), a lane a word (short rows sharing a workgroup) or up to
//! [`NARROW_ROW_WORDS`] words of a long row an invocation, in pairs; or, where rows are too
//! short or windows disagree, [`NARROW_WORD_RUN`] words
//! an invocation a workgroup's width apart, each finding its row by division.
//!
//! The layout asks it, through `Kernel`, three things: whether the output is dense enough
//! ([`check_output`]), each window's grid ([`grid`]), and the one walk all windows of a pad
//! share ([`settle_row_walk`]); shader.rs asks its pipeline's constants and code
//! ([`NarrowShader`]).

use crate::error::{Result, Side};
use crate::gpu::params::{
    magic_divisor, Params, WgslValue, INDEX_LIMIT, NARROW_ROW_WORDS, NARROW_WORD_RUN, ROW_WORDS_NONE, WORKGROUP,
};
use crate::gpu::variant::KernelVariant;
use crate::gpu::view::{dense_strides, invalid};
use crate::gpu::window::WindowShape;
use crate::plan::PadPlan;

/// The narrow kernel's shapes: what each [`KernelVariant`] asks of it ([`NarrowVariant::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NarrowVariant {
    /// Rows where a window has them, long rows' kept words in pairs, one pair's loads in
    /// flight (the default).
    Pairs,
    /// The same, four pairs at a time with all their loads first.
    PairsLoadsFirst,
    /// Long rows spread over whole workgroups, a lane a word, two an iteration.
    Spread,
    /// The design card: every window per word, a word an invocation.
    Reference,
    /// Pairs as by default, long rows over enough lanes to fill the device
    /// ([`DEVICE_LANES`](super::DEVICE_LANES)): 2 to [`NARROW_ROW_WORDS`] words a lane, not
    /// always the most (the same pipeline as the default's; only the grid differs).
    DevicePairs,
}

impl NarrowVariant {
    /// The shape `variant` asks of the narrow kernel (the variants of other kernels: the default).
    pub(crate) fn of(variant: KernelVariant) -> NarrowVariant {
        match variant {
            KernelVariant::Reference => NarrowVariant::Reference,
            KernelVariant::NarrowSpread => NarrowVariant::Spread,
            KernelVariant::NarrowLoadsFirst => NarrowVariant::PairsLoadsFirst,
            KernelVariant::DeviceGrid => NarrowVariant::DevicePairs,
            _ => NarrowVariant::Pairs,
        }
    }

    /// Words of the per-word walk an invocation writes, a workgroup apart.
    pub(crate) fn word_run(self) -> u32 {
        match self {
            NarrowVariant::Reference => 1,
            _ => NARROW_WORD_RUN,
        }
    }

    /// Whether windows may walk rows (else every window goes per word).
    pub(crate) fn row_grids(self) -> bool {
        self != NarrowVariant::Reference
    }

    /// How a window's rows longer than a workgroup's words take their lanes, its rows owning
    /// `total_words` words in all.
    pub(in crate::gpu) fn long_rows(self, total_words: u64) -> LongRows {
        match self {
            NarrowVariant::Spread => LongRows::Spread,
            NarrowVariant::DevicePairs => {
                let words = total_words.div_ceil(super::DEVICE_LANES).next_multiple_of(2);
                LongRows::Pairs { words: words.clamp(2, NARROW_ROW_WORDS as u64) }
            }
            _ => LongRows::Pairs { words: NARROW_ROW_WORDS as u64 },
        }
    }

    /// The pipeline this shape runs walking `walk`: what a variant changes only on rows is
    /// the default's elsewhere, and a grid alone (`DevicePairs`) changes no pipeline.
    pub(crate) fn shader(self, walk: RowWalk) -> NarrowShader {
        let long_rows = match (walk, self) {
            (RowWalk::PerWord, _) => LongRowCode::None,
            (_, NarrowVariant::Spread) => LongRowCode::Spread,
            (_, NarrowVariant::PairsLoadsFirst) => LongRowCode::PairsLoadsFirst,
            _ => LongRowCode::Pairs,
        };
        let word_run = if walk == RowWalk::PerWord { self.word_run() } else { 0 };
        NarrowShader { walk, word_run, long_rows }
    }

    /// Every pipeline this shape can run (a walk each).
    pub(crate) fn shaders(self) -> Vec<NarrowShader> {
        let walks: &[RowWalk] = if self.row_grids() { &RowWalk::ALL } else { &[RowWalk::PerWord] };
        walks.iter().map(|&w| self.shader(w)).collect()
    }
}

/// What a narrow pipeline is specialised for (a part of the pipeline key): its walk and the
/// code its variant gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct NarrowShader {
    pub(crate) walk: RowWalk,
    /// Words a lane of the per-word walk (0 on the row walks, which have none).
    word_run: u32,
    /// How the row walks take long rows' kept words.
    long_rows: LongRowCode,
}

/// The code that writes long rows' kept words (`long_row_kept` in WGSL), a file each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum LongRowCode {
    /// The per-word walk: no rows.
    None,
    /// Pairs, one pair's loads in flight (`narrow_pairs.wgsl`, the default).
    Pairs,
    /// Pairs four at a time, loads first (`narrow_pairs_loads_first.wgsl`).
    PairsLoadsFirst,
    /// Spread over whole workgroups (`narrow_spread.wgsl`).
    Spread,
}

impl NarrowShader {
    /// The pipeline's constants: the element's geometry in its u32 word, then its walk's
    /// (the per-word walk's words a lane; the row walk's loop bound, the axes of rows of whole
    /// words and whether rows may end mid-word).
    pub(crate) fn constants(self, word_bytes: u8) -> Vec<(&'static str, WgslValue)> {
        use WgslValue::{Bool, Hex, U32};
        let (epw, bits) = (4 / word_bytes as u32, 8 * word_bytes as u32);
        let mut c = vec![
            ("EPW", U32(epw)),
            ("EPW_LOG2", U32(epw.trailing_zeros())),
            ("BITS", U32(bits)),
            ("MASK", Hex(((1u64 << bits) - 1) as u32)),
        ];
        match self.walk {
            RowWalk::PerWord => c.push(("NARROW_WORD_RUN", U32(self.word_run))),
            walk => c.extend([
                ("NARROW_ROW_WORDS", U32(NARROW_ROW_WORDS)),
                ("ROW_AXES", U32(walk.axes())),
                ("MID_WORD", Bool(walk == RowWalk::MidWord)),
            ]),
        }
        c
    }

    /// The kernel's WGSL: what both walks share, then this one's entry point (the row walk's
    /// with its long rows' code).
    pub(crate) fn wgsl(self) -> String {
        let shared = include_str!("../../../shaders/narrow.wgsl");
        let long_rows = match self.long_rows {
            LongRowCode::None => return [shared, include_str!("../../../shaders/narrow_words.wgsl")].join("\n"),
            LongRowCode::Pairs => include_str!("../../../shaders/narrow_pairs.wgsl"),
            LongRowCode::PairsLoadsFirst => include_str!("../../../shaders/narrow_pairs_loads_first.wgsl"),
            LongRowCode::Spread => include_str!("../../../shaders/narrow_spread.wgsl"),
        };
        [shared, ROWS, include_str!("../../../shaders/narrow_rows.wgsl"), long_rows].join("\n")
    }

    /// For a pipeline's label.
    pub(crate) fn label(self) -> String {
        let code = match self.long_rows {
            LongRowCode::None if self.word_run == 1 => " reference",
            LongRowCode::None | LongRowCode::Pairs => "",
            LongRowCode::PairsLoadsFirst => " loads first",
            LongRowCode::Spread => " spread",
        };
        format!(" {}{code}", self.walk.name())
    }
}

/// What the row walks of this kernel and of rows16 share: an element's source in a row.
pub(super) const ROWS: &str = include_str!("../../../shaders/rows.wgsl");

/// How the narrow kernel (8- and 16-bit words) walks its output: its pipeline's entry point
/// (narrow_words.wgsl's or narrow_rows.wgsl's) and constants ([`NarrowShader::constants`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub(crate) enum RowWalk {
    /// One invocation per run of output words, its row found by division (rows too short
    /// to walk, or windows whose rows differ).
    PerWord = 0,
    /// Rows of whole words along axis 0.
    Axis0 = 1,
    /// Rows of whole words along axes 0 and 1 (axis 0 an unpadded run of channels).
    Axes01 = 2,
    /// Rows along either that end mid-word (odd image widths, RGB rows): each row owns the
    /// words that start in it; the axes come from the uniform's `row_first`.
    MidWord = 3,
}

impl RowWalk {
    /// Every walk.
    pub const ALL: [RowWalk; 4] = [RowWalk::PerWord, RowWalk::Axis0, RowWalk::Axes01, RowWalk::MidWord];

    /// The axes a row of whole words spans (its `first`: 1 or 2; the shader's `ROW_AXES`), a
    /// count of its own rather than the variant's number; 0 where rows are not whole words.
    pub fn axes(self) -> u32 {
        match self {
            RowWalk::Axis0 => 1,
            RowWalk::Axes01 => 2,
            RowWalk::PerWord | RowWalk::MidWord => 0,
        }
    }

    /// Rows of whole words along the axes below `first` (1 or 2).
    pub fn whole_words(first: u32) -> RowWalk {
        match first {
            1 => RowWalk::Axis0,
            2 => RowWalk::Axes01,
            _ => unreachable!("rows span one or two axes, not {first}"),
        }
    }

    /// The walk's name, for labels.
    fn name(self) -> &'static str {
        match self {
            RowWalk::PerWord => "per word",
            RowWalk::Axis0 => "rows",
            RowWalk::Axes01 => "rows of pixels",
            RowWalk::MidWord => "rows mid-word",
        }
    }
}

/// How rows longer than a workgroup's words take their lanes ([`lanes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::gpu) enum LongRows {
    /// A lane its kept words two neighbouring ones at a time, `words` (even, at most
    /// [`NARROW_ROW_WORDS`], the shader's loop bound) a lane.
    Pairs { words: u64 },
    /// Whole workgroups, a lane a word, two an iteration a grid width apart.
    Spread,
}

/// Invocations a row owning `row_words` words takes. Up to a workgroup's words, one a word,
/// so that a SIMD group's lanes store neighbouring words, running on into the next row (rows
/// of a window follow each other in the output; such rows share a workgroup). Longer rows in
/// pairs (the default), one invocation per `words` words (rows of up to half a workgroup's
/// lanes sharing one); spread (the narrow-spread variant), whole workgroups (the grid width),
/// enough that each invocation takes at most [`NARROW_ROW_WORDS`] of the row's words, a grid
/// width apart. The shader tells short rows from long by `row_lanes >= row_words`.
pub(in crate::gpu) fn lanes(row_words: u64, long: LongRows) -> u64 {
    let group = WORKGROUP as u64;
    match long {
        _ if row_words <= group => row_words.max(1),
        LongRows::Pairs { words } => row_words.div_ceil(words),
        LongRows::Spread => row_words.div_ceil(group * NARROW_ROW_WORDS as u64) * group,
    }
}

/// Rows owning `row_words` words one workgroup takes: as many as fit, else 1.
pub(in crate::gpu) fn pack(row_words: u64, long: LongRows) -> u64 {
    (WORKGROUP as u64 / lanes(row_words, long)).max(1)
}

/// Whether a window of this shape fits the per-word grid (which every window can fall back on).
pub(in crate::gpu) fn fits(s: &WindowShape, word: u64) -> bool {
    let elems = s.elems();
    elems <= INDEX_LIMIT && elems.div_ceil(4 / word).div_ceil(WORKGROUP as u64) <= s.max_groups * s.max_groups
}

/// One invocation owns each output word, so the output must be one dense run: an error
/// naming the first axis whose stride is not the dense one.
pub(in crate::gpu) fn check_output(plan: &PadPlan, out_strides: &[u64], elem: u64) -> Result<()> {
    let dense = dense_strides(plan.out_shape());
    match (0..dense.len()).find(|&i| plan.out_shape()[i] > 1 && out_strides[i] != dense[i]) {
        Some(axis) => Err(invalid(
            Side::Output,
            format!(
                "axis {axis} has stride {}, but {}-bit outputs must be dense (stride {} there) unless their rows move in whole 4-byte words: the GPU writes them in 32-bit words",
                out_strides[axis],
                8 * elem,
                dense[axis]
            ),
        )),
        None => Ok(()),
    }
}

/// A window's grid: rows where the window and the variant allow them ([`row_grid`]), else
/// per word. `first` is the window's first output element, counted from its binding's
/// start. Returns the workgroup counts and whether rows end mid-word.
pub(in crate::gpu) fn grid(
    s: &WindowShape,
    params: &mut Params,
    word: u64,
    first: u64,
    variant: NarrowVariant,
) -> ([u32; 3], bool) {
    params.first = first as u32;
    params.elems = s.elems() as u32;
    let rows = if variant.row_grids() { row_grid(s, params, word, variant) } else { None };
    rows.unwrap_or_else(|| (per_word(params, word, s.max_groups, variant.word_run()), false))
}

/// The pad's walk, one pipeline for all its windows ([`row_walk`]), from each window and
/// whether its rows end mid-word (`mid_words`, in the same order); where windows disagree on
/// their rows, every window with rows goes per word instead.
/// Each window is its parameters and workgroup counts.
pub(in crate::gpu) fn settle_row_walk(
    windows: &mut [(&mut Params, &mut [u32; 3])],
    mid_words: &[bool],
    word: u64,
    max_groups: u64,
    variant: NarrowVariant,
) -> RowWalk {
    let walk = row_walk(windows.iter().zip(mid_words).map(|((p, _), &mid)| (p.row_first, mid)));
    if walk == RowWalk::PerWord {
        for (params, workgroups) in windows.iter_mut().filter(|(p, _)| p.row_first != 0) {
            **workgroups = per_word(params, word, max_groups, variant.word_run());
        }
    }
    walk
}

/// Rows on a row grid where the window allows it: along axis 0, or along axes 0 and 1 where
/// axis 0 is a whole unpadded run (RGB pixels, say). Each row owns the words that start in
/// it: rows of whole words own their own; rows that end mid-word must follow each other in
/// the output and be two words long at least, so that a word runs on into the next row at
/// most. Sets the grid's parameters and returns its workgroup counts and whether rows end
/// mid-word; `None` where no row grid fits (the per-word path then). `params.first` is set.
/// `variant`: how long rows take their lanes ([`NarrowVariant::long_rows`]).
fn row_grid(s: &WindowShape, params: &mut Params, word: u64, variant: NarrowVariant) -> Option<([u32; 3], bool)> {
    let (epw, maxg, rank) = (4 / word, s.max_groups, s.rank());
    let first = params.first as u64;
    let rows_from = |f: usize, mid_word: bool| {
        let row = (0..f).map(|d| s.len(d)).product::<u64>();
        let aligned = first.is_multiple_of(epw)
            && row.is_multiple_of(epw)
            && (f..rank).all(|d| s.out_stride(d).is_multiple_of(epw));
        // (Rows under two words: the per-word path is faster, as finding a row costs more
        // than the one word it gives.)
        let adjacent = row >= 2 * epw
            && (f..rank).all(|d| s.len(d) == 1 || s.out_stride(d) == (0..d).map(|a| s.len(a)).product::<u64>());
        let fits = if mid_word { !aligned && adjacent } else { aligned };
        // Words a row owns at most (the first row also the word the window starts in).
        let words = if aligned { row / epw } else { row.div_ceil(epw) + 1 };
        let rows = s.len(f) * s.above(f);
        let long = variant.long_rows(rows * words);
        let grid = lanes(words, long).div_ceil(WORKGROUP as u64) <= maxg
            && rows <= INDEX_LIMIT
            && rows.div_ceil(pack(words, long)) <= maxg * maxg;
        (fits && grid).then_some((f as u32, words, rows, mid_word, long))
    };
    let whole_run = s.inner_is_whole_run();
    // Rows of whole words first; else rows ending mid-word, the longest first.
    let (f, words, rows, mid_word, long) = rows_from(1, false)
        .or_else(|| if whole_run { rows_from(2, false) } else { None })
        .or_else(|| if whole_run { rows_from(2, true) } else { None })
        .or_else(|| rows_from(1, true))?;
    params.row_first = f;
    params.row_words = words as u32;
    params.count = rows as u32;
    // Rows of up to half a workgroup's words share a workgroup, a lane a word; a row of up to
    // a workgroup's words takes one; a longer row x workgroups, each invocation up to
    // NARROW_ROW_WORDS of its words, a grid width apart.
    let (lanes, pack) = (lanes(words, long), pack(words, long));
    params.pack = pack as u32;
    let x = lanes.div_ceil(WORKGROUP as u64);
    params.row_lanes = if pack > 1 { lanes } else { x * WORKGROUP as u64 } as u32;
    (params.lanes_magic, params.lanes_shift) = magic_divisor(params.row_lanes);
    let groups = rows.div_ceil(pack);
    let y = groups.min(maxg);
    Some(([x as u32, y as u32, groups.div_ceil(y) as u32], mid_word))
}

/// Gives a window the per-word path: `run` words an invocation, a workgroup apart
/// ([`NARROW_WORD_RUN`] by default, 1 in the reference variant; `row_words` 0, `count` the
/// words it covers); returns its workgroup counts.
fn per_word(p: &mut Params, word: u64, max_groups: u64, run: u32) -> [u32; 3] {
    let epw = 4 / word as u32;
    p.row_first = 0; // no axes in rows
    p.row_words = ROW_WORDS_NONE;
    p.pack = 0;
    let words = (p.first % epw + p.elems).div_ceil(epw);
    p.count = words;
    let groups = (words as u64).div_ceil((WORKGROUP * run) as u64);
    let x = groups.min(max_groups);
    [x as u32, groups.div_ceil(x) as u32, 1]
}

/// The pad's walk, one pipeline for all its windows, from each window's `row_first` and
/// whether its rows end mid-word: rows where every window has them, along the same axes
/// (rows ending mid-word in any window: that pipeline, which runs rows of whole words
/// correctly too); else per word, where the layout gives every window with rows the per-word
/// path ([`per_word`]).
fn row_walk(windows: impl IntoIterator<Item = (u32, bool)>) -> RowWalk {
    let mut windows = windows.into_iter().peekable();
    let Some(&(first, _)) = windows.peek() else { return RowWalk::PerWord };
    let mut mid_word = false;
    for (row_first, mid) in windows {
        if row_first != first {
            return RowWalk::PerWord;
        }
        mid_word |= mid;
    }
    match first {
        0 => RowWalk::PerWord,
        _ if mid_word => RowWalk::MidWord,
        _ => RowWalk::whole_words(first),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::layout::tests::{lay_variant, plan, LIMITS};
    use crate::gpu::program::DeviceLimits;
    use crate::gpu::variant::KernelVariant;
    use crate::{DataType, Mode};

    /// Sized to the device, long rows take as few words a lane as fill it, even (pairs) and
    /// within the shader's loop bound; the others the most.
    #[test]
    fn device_pairs_fill_the_device_within_the_loop_bound() {
        let lanes = super::super::DEVICE_LANES;
        for total in [1, 1000, lanes * 2, lanes * 3 + 1, lanes * 7, lanes * 40, 1 << 31] {
            let LongRows::Pairs { words } = NarrowVariant::DevicePairs.long_rows(total) else { panic!() };
            assert!(words % 2 == 0 && (2..=NARROW_ROW_WORDS as u64).contains(&words), "{total}: {words}");
            assert!(words == NARROW_ROW_WORDS as u64 || total.div_ceil(words) <= lanes, "{total}: {words} too few");
            assert!(words == 2 || total.div_ceil(words - 2) > lanes, "{total}: {words} too many");
            assert_eq!(NarrowVariant::Pairs.long_rows(total), LongRows::Pairs { words: NARROW_ROW_WORDS as u64 });
        }
    }

    /// narrow_rows.wgsl's row grid, run on the host: every word the window touches is written
    /// exactly once and no other, rows of whole words and rows ending mid-word (each row owns
    /// the words that start in it, the first row also the word the window starts in), short
    /// rows packed several to a workgroup, long rows over several workgroups, on grids past
    /// `max_groups`, in windows of small bindings, rows along axis 0 and along axes 0 and 1.
    #[test]
    fn the_narrow_row_grid_covers_every_word_once() {
        // The words one invocation writes: in rows of up to a workgroup's words (row_lanes >=
        // row_words) the row's words a row's lanes apart; in longer rows its kept words [f0, f1)
        // a grid width apart, two an iteration, then the row's others. With `pairs`, its pairs
        // of kept words, pairs a row's lanes apart, an odd last kept word among the others.
        fn lane_words(
            lane: u64,
            lanes: u64,
            row_words: u64,
            (wa, wb): (u64, u64),
            (f0, mut f1): (u64, u64),
            pairs: bool,
        ) -> Vec<u64> {
            if lanes >= row_words {
                return (0..NARROW_ROW_WORDS as u64).map(|n| wa + lane + n * lanes).take_while(|&w| w < wb).collect();
            }
            let mut out = Vec::new();
            if pairs {
                f1 = f0 + ((f1 - f0) & !1);
                for n in 0..NARROW_ROW_WORDS as u64 / 2 {
                    let w = f0 + 2 * (lane + n * lanes);
                    if w >= f1 {
                        break;
                    }
                    out.extend([w, w + 1]);
                }
            }
            for n in 0..if pairs { 0 } else { NARROW_ROW_WORDS as u64 / 2 } {
                let w = f0 + lane + 2 * n * lanes;
                if w >= f1 {
                    break;
                }
                out.push(w);
                if w + lanes < f1 {
                    out.push(w + lanes);
                }
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
            (DataType::Uint8, &[3, 244], &[0, 4, 0, 4]),                      // 63 words, a lane each
            (DataType::Uint8, &[3, 256], &[0, 4, 0, 4]),                      // 66 words, a workgroup
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
        let (mut packed, mut mid_word, mut device_lanes) = (0, 0, 0);
        for (dtype, shape, pads) in cases {
            let variants = [KernelVariant::NarrowSpread, KernelVariant::Default, KernelVariant::DeviceGrid];
            for (limits, variant) in [&LIMITS, &few_groups, &small].into_iter().flat_map(|l| variants.map(|v| (l, v))) {
                let pairs = variant != KernelVariant::NarrowSpread;
                let l = lay_variant(&plan(dtype, shape, pads, Mode::Reflect), limits, variant);
                let row_windows =
                    l.dispatches.iter().filter(|w| w.params.pad().row_words != ROW_WORDS_NONE).collect::<Vec<_>>();
                assert!(limits.max_groups < 100 || !row_windows.is_empty(), "{shape:?}: no row windows");
                for w in row_windows {
                    let p = w.params.pad();
                    let epw = 4 / dtype.width().bytes().unwrap() as u64;
                    let (rows, pack, lanes) = (p.count as u64, p.pack as u64, p.row_lanes as u64);
                    let first = p.row_first as usize;
                    let window_rows = (first..p.rank as usize).map(|d| p.axes[d].len as u64).product::<u64>();
                    assert_eq!(rows, window_rows, "{shape:?}: rows of the window");
                    let long = NarrowVariant::of(variant).long_rows(rows * p.row_words as u64);
                    assert_eq!(pack, super::pack(p.row_words as u64, long));
                    // The default's lanes for these rows (whole workgroups where a row takes one or more).
                    let default = LongRows::Pairs { words: NARROW_ROW_WORDS as u64 };
                    let (l32, wg) = (super::lanes(p.row_words as u64, default), WORKGROUP as u64);
                    let one_group = super::pack(p.row_words as u64, default) > 1;
                    let default_lanes = if one_group { l32 } else { l32.div_ceil(wg) * wg };
                    device_lanes += usize::from(variant == KernelVariant::DeviceGrid && lanes > default_lanes);
                    assert!(lanes == default_lanes || variant == KernelVariant::DeviceGrid || !pairs, "{shape:?}");
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
                    // Kept runs: none, all, from either end, inside (odd and even), of up to three words.
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
                                    1 => (wa, wb),
                                    2 => (wa + n % 2, wb),
                                    3 => (wa + 1.min(n), wb.saturating_sub(1).max(wa + 1.min(n))),
                                    4 => (wa + n / 3, wa + n / 3 + n / 3),
                                    _ => (wa + n / 2, wa + n / 2 + (n - n / 2).min(3)),
                                };
                                let row_words = p.row_words as u64;
                                let lane = gid_x - sub * lanes;
                                for word in lane_words(lane, lanes, row_words, (wa, wb), (f0, f1), pairs) {
                                    assert!(touched.contains(&word), "{shape:?}: word {word} outside {touched:?}");
                                    seen[word as usize] += 1;
                                }
                            }
                        }
                        let wrong = touched.clone().filter(|&w| seen[w as usize] != 1).collect::<Vec<_>>();
                        assert!(
                            wrong.is_empty(),
                            "{shape:?} pads {pads:?} ({variant:?}), run {run}: words {wrong:?} not written once"
                        );
                    }
                }
            }
        }
        assert!(mid_word >= 8, "only {mid_word} windows of rows ending mid-word");
        assert!(packed >= 4, "only {packed} windows packed rows");
        assert!(device_lanes >= 2, "only {device_lanes} windows gave long rows more lanes than the default");
    }
}
