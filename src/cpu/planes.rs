//! Small planes written whole where the CPU shuffles bytes (x86-64 with SSSE3): the
//! innermost axes' block of a pad, when it is small (a CNN's late feature maps: f32 7 × 7
//! padded by 1 to 9 × 9, 324 bytes), is written 16 output bytes at a time, each 16 the
//! shuffle of one to three 16-byte loads of the input block (or'd with the constant where
//! any of its bytes is not zero), worked out once per pad. Why: row by row, such a plane
//! costs a dispatch, a copy and pad calls per row of a few pixels, several times what a
//! 16-byte shuffled store costs. Planes are taken only where an estimate (`Costs`) says
//! they are the cheaper way, the tables' making included.

use std::mem::MaybeUninit;

use super::PlaneChoice;
use super::RowEnds;
use crate::mode::Mode;
use crate::plan::AxisMap;

/// Bytes per window: one shuffle's.
const W: usize = 16;

/// A shuffle index that selects nothing (a zero byte): the top bit set.
const NONE: u8 = 0x80;

/// The most output bytes a plane may have: its tables (80 bytes per 16 output bytes at
/// most) stay within a few KiB of L1 cache, and larger planes have rows long enough for
/// the row path.
const MAX_PLANE_BYTES: usize = 1024;

/// The most 16-byte input loads one window may take (a wrap's window across its top pad row
/// and the first kept row can take three: the last input row, the first row's start, and
/// the first row's last element, its pad).
const MAX_LOADS: usize = 3;

/// 16 input bytes loaded at `at` (from the input block's start) and shuffled by `mask`,
/// for the window at `out` (from the plane's start).
#[derive(Debug, Clone, Copy)]
struct Load {
    out: u32,
    at: u32,
    mask: [u8; W],
}

/// How the planes of one pad are written, worked out once per pad. Only made where the CPU
/// has SSSE3, checked in [`Planes::new`].
#[derive(Debug)]
pub(super) struct Planes {
    /// The plane's outermost axis in the folded plan: a block of this axis is a plane.
    axis: usize,
    /// Windows of one load (or none: all constant).
    ones: Vec<Load>,
    /// Windows of two or three loads, or'd (a third that is not needed selects nothing).
    many: Vec<[Load; MAX_LOADS]>,
    /// The constant's bytes in each window of `ones`, then of `many`, where any is not zero
    /// (else the shuffles' zeros are the constant).
    constants: Option<Constants>,
}

impl Planes {
    /// The plane writer for the innermost two or more axes of `axes` (in chunks of `chunk`
    /// bytes, padded by `mode`; `pattern`: the constant, one chunk of it): the block of the
    /// most of them that holds at most [`MAX_PLANE_BYTES`] output bytes, at least 16 output
    /// and 16 input bytes and no window of more than three loads, where `choice` takes it
    /// (rows would be written as `row_ends` says: shuffled ends or not); `None` where there
    /// is none, or where the CPU lacks SSSE3.
    pub(super) fn new(
        axes: &[AxisMap],
        mode: Mode,
        chunk: usize,
        pattern: &[u8],
        choice: PlaneChoice,
        row_ends: Option<&RowEnds>,
    ) -> Option<Planes> {
        if !super::row_ends::shuffles() || axes.len() < 2 {
            return None;
        }
        // The outermost axis whose block fits, then the blocks inside it down to the
        // innermost two axes': where a larger block's windows cannot all be made (a wrap or
        // mirror's windows across its blocks can take four loads), a smaller one's may.
        let out_len = |d: usize| axes[d..].iter().fold(chunk, |n, a| n.saturating_mul(a.out_len));
        let outermost = (0..axes.len() - 1).find(|&d| out_len(d) <= MAX_PLANE_BYTES)?;
        (outermost..axes.len() - 1).find_map(|axis| {
            let plane = &axes[axis..];
            let (out_len, in_len) = (out_len(axis), plane.iter().fold(chunk, |n, a| n.saturating_mul(a.in_len)));
            // (Sources and loads are u32s.)
            if out_len < W || !(W..CONSTANT as usize).contains(&in_len) {
                return None;
            }
            let count = axes[..axis].iter().fold(1usize, |n, a| n.saturating_mul(a.out_len));
            // No estimate where every plane is taken (tests).
            let costs =
                (choice == PlaneChoice::WhereCheaper).then(|| Costs::new(plane, chunk, count, out_len, row_ends));
            let cheaper = |ones, many| costs.as_ref().is_none_or(|c| c.cheaper(ones, many));
            // Made only where even windows of one load each would pay.
            if !cheaper(out_len.div_ceil(W), 0) {
                return None;
            }
            let planes = Planes::for_block(plane, axis, mode, chunk, pattern, (out_len, in_len))?;
            cheaper(planes.ones.len(), planes.many.len()).then_some(planes)
        })
    }

    /// [`new`](Self::new) for the block of `plane`'s axes, the first being `axis`, of
    /// `out_len` output and `in_len` input bytes.
    fn for_block(
        plane: &[AxisMap],
        axis: usize,
        mode: Mode,
        chunk: usize,
        pattern: &[u8],
        (out_len, in_len): (usize, usize),
    ) -> Option<Planes> {
        let sources = sources(plane, mode, chunk, out_len);
        let windows = out_len.div_ceil(W);
        let (mut ones, mut many) = (Vec::with_capacity(windows), Vec::new());
        let (mut ones_constant, mut many_constant) = (Vec::with_capacity(windows), Vec::new());
        // Windows every 16 bytes, the last moved back to end at the plane's end (it
        // overlaps the one before, rewriting its bytes with the same values).
        let starts = (0..out_len / W).map(|k| k * W).chain((out_len % W != 0).then_some(out_len - W));
        for out in starts {
            let window = &sources[out..out + W];
            // The fewest loads that cover the window's sources: each from the lowest source
            // not yet covered (moved back where it would run past the input block). In
            // arrays, not vectors: this runs on every pad that takes planes, up to 64 times.
            let mut wanted = [0; W];
            let mut n = 0;
            for &s in window.iter().filter(|&&s| s != CONSTANT) {
                wanted[n] = s;
                n += 1;
            }
            if !wanted[..n].is_sorted() {
                wanted[..n].sort_unstable();
            }
            let nothing = Load { out: out as u32, at: 0, mask: [NONE; W] };
            let mut loads = [nothing; MAX_LOADS];
            let mut count = 0;
            for &s in &wanted[..n] {
                if count == 0 || s >= loads[count - 1].at + W as u32 {
                    if count == MAX_LOADS {
                        return None;
                    }
                    loads[count].at = s.min((in_len - W) as u32);
                    count += 1;
                }
            }
            let mut constant = [0; W];
            // Planes start at a chunk's start, so the pattern's byte is the offset's.
            let mut in_chunk = out % chunk;
            for (i, &s) in window.iter().enumerate() {
                let at = in_chunk;
                in_chunk = if in_chunk + 1 == chunk { 0 } else { in_chunk + 1 };
                if s == CONSTANT {
                    constant[i] = pattern[at];
                    continue;
                }
                let load = loads[..count].iter_mut().find(|l| (l.at..l.at + W as u32).contains(&s));
                let load = load.expect("a load covers every source");
                load.mask[i] = (s - load.at) as u8;
            }
            if count <= 1 {
                ones.push(loads[0]);
                ones_constant.push(constant);
            } else {
                many.push(loads);
                many_constant.push(constant);
            }
        }
        let any_constant = ones_constant.iter().chain(&many_constant).flatten().any(|&b| b != 0);
        Some(Planes {
            axis,
            ones,
            many,
            constants: any_constant.then_some(Constants { ones: ones_constant, many: many_constant }),
        })
    }

    /// The axis whose blocks are the planes.
    pub(super) fn axis(&self) -> usize {
        self.axis
    }

    /// Writes one plane: `out` from the plane's first byte, `input` from its input block's.
    pub(super) fn write(&self, out: &mut [MaybeUninit<u8>], input: &[u8]) {
        // SAFETY: `new` made `self` only where the CPU has SSSE3.
        unsafe {
            match &self.constants {
                None => self.write_ssse3::<false>(out, input, &[], &[]),
                Some(c) => self.write_ssse3::<true>(out, input, &c.ones, &c.many),
            }
        }
    }

    /// [`write`](Self::write), by SSSE3's byte shuffle; `OR_CONSTANT`: whether to or the
    /// windows' constant bytes in.
    ///
    /// # Safety
    /// The CPU has SSSE3.
    #[target_feature(enable = "ssse3")]
    unsafe fn write_ssse3<const OR_CONSTANT: bool>(
        &self,
        out: &mut [MaybeUninit<u8>],
        input: &[u8],
        ones_constant: &[[u8; W]],
        many_constant: &[[u8; W]],
    ) {
        use std::arch::x86_64::_mm_storeu_si128 as store;
        use std::arch::x86_64::{__m128i, _mm_loadu_si128 as load, _mm_or_si128 as or, _mm_shuffle_epi8 as shuffle};
        // SAFETY (every load and store): of 16 bytes, from or into an array or a slice of 16
        // (the slices' lengths checked by `try_from`).
        let bytes = |b: &[u8; W]| {
            // SAFETY: a 16-byte load from a 16-byte array.
            unsafe { load(b.as_ptr().cast()) }
        };
        let take = |l: &Load| {
            let at = l.at as usize;
            let from = <&[u8; W]>::try_from(&input[at..at + W]).expect("16 bytes");
            shuffle(bytes(from), bytes(&l.mask))
        };
        let mut put = |at: u32, v: __m128i| {
            let at = at as usize;
            let to = <&mut [MaybeUninit<u8>; W]>::try_from(&mut out[at..at + W]).expect("16 bytes");
            // SAFETY: a 16-byte store into a 16-byte array.
            unsafe { store(to.as_mut_ptr().cast(), v) };
        };
        for (k, l) in self.ones.iter().enumerate() {
            let v = take(l);
            put(l.out, if OR_CONSTANT { or(v, bytes(&ones_constant[k])) } else { v });
        }
        for (k, [a, b, c]) in self.many.iter().enumerate() {
            let v = or(or(take(a), take(b)), take(c));
            put(a.out, if OR_CONSTANT { or(v, bytes(&many_constant[k])) } else { v });
        }
    }
}

/// The constant's bytes per window of [`Planes::ones`] and of [`Planes::many`].
#[derive(Debug)]
struct Constants {
    ones: Vec<[u8; W]>,
    many: Vec<[u8; W]>,
}

/// Estimated costs of a pad's planes, in halves of what writing one window of one load
/// costs, fitted to pads of planes from 3 × 3 to 30 × 30 measured row by row and whole on
/// the CI machine (an x86-64 server core): a window of two or three
/// loads 4; a row with shuffled ends and a middle of at most 32 bytes 7, a longer one
/// (its middle copied) 16 and one more per 32 bytes, a row without shuffled ends 16, and 14
/// more per plane for its pads' calls; making the tables about 170 per window.
struct Costs {
    /// Planes in the output.
    count: usize,
    /// Writing one plane row by row.
    rows: usize,
    /// Making the tables, as a share of which the planes must save four times over.
    making: usize,
}

impl Costs {
    fn new(plane: &[AxisMap], chunk: usize, count: usize, out_len: usize, row_ends: Option<&RowEnds>) -> Costs {
        let row_bytes = plane[plane.len() - 1].out_len * chunk;
        let per_row = match row_ends {
            Some(ends) if ends.short_middle() => 7,
            Some(_) => 16 + row_bytes / 32,
            None => 16,
        };
        Costs { count, rows: 14 + per_row * (out_len / row_bytes), making: 170 * out_len.div_ceil(W) }
    }

    /// Whether planes of `ones` windows of one load and `many` of more save more than four
    /// times their tables' making.
    fn cheaper(&self, ones: usize, many: usize) -> bool {
        let windows = 2 * ones + 4 * many;
        self.rows > windows && (self.rows - windows).saturating_mul(self.count) > 4 * self.making
    }
}

/// A source that is the constant (`sources`).
const CONSTANT: u32 = u32::MAX;

/// Per output byte of a block of `plane`'s axes (`out_len` bytes, chunks of `chunk`), the
/// input byte it copies, from the input block's start (fewer than `u32::MAX`), or
/// [`CONSTANT`].
fn sources(plane: &[AxisMap], mode: Mode, chunk: usize, out_len: usize) -> Vec<u32> {
    // Input chunks, from the outermost axis in: each block's source, its axis's mode index
    // function worked out once per output index (this runs on every pad that takes planes).
    let mut blocks = vec![0];
    for a in plane {
        let map: Vec<u32> = (0..a.out_len).map(|o| a.source(mode, o).map_or(CONSTANT, |i| i as u32)).collect();
        let mut next = Vec::with_capacity(blocks.len() * map.len());
        for &b in &blocks {
            next.extend(map.iter().map(|&k| {
                if b == CONSTANT || k == CONSTANT {
                    CONSTANT
                } else {
                    b * a.in_len as u32 + k
                }
            }));
        }
        blocks = next;
    }
    let mut sources = Vec::with_capacity(out_len);
    for &c in &blocks {
        match c {
            CONSTANT => sources.extend(std::iter::repeat_n(CONSTANT, chunk)),
            c => sources.extend(c * chunk as u32..(c + 1) * chunk as u32),
        }
    }
    debug_assert_eq!(sources.len(), out_len);
    sources
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::{pad_fixed, PlaneChoice};
    use crate::{reference, DataType, PadPlan, PadRequest, Tensor};

    /// Pads `shape` both ways (planes wherever they can be made, and rows alone) into junk,
    /// checking each against the reference: `None` where the plan is invalid, else the
    /// planes that can be made (`None` on CPUs without SSSE3 or for blocks that make none).
    fn check_both_ways(
        dtype: DataType,
        shape: &[usize],
        pads: &[i64],
        mode: Mode,
        constant: &Tensor,
        seed: u64,
    ) -> Option<Option<Planes>> {
        let w = dtype.width().bytes().unwrap();
        let request = PadRequest::new(pads.to_vec()).mode(mode).constant(constant.clone());
        let plan = PadPlan::new(dtype, shape, &request).ok()?;
        let bytes = (0..shape.iter().product::<usize>() * w).map(|i| (i as u64 * 7 + seed) as u8).collect();
        let x = Tensor::from_bytes(dtype, shape.to_vec(), bytes).unwrap();
        let want = reference::pad(&plan, &x);
        for choice in [PlaneChoice::Always, PlaneChoice::Never] {
            let mut out = vec![0xa5; want.bytes().unwrap().len()];
            pad_fixed(&plan, w, x.bytes().unwrap(), crate::cpu::as_uninit(&mut out), constant.bytes().unwrap(), choice);
            assert!(out == want.bytes().unwrap(), "{dtype} {mode} {shape:?} {pads:?} {choice:?}");
        }
        let f = plan.folded(true);
        let pattern: Vec<u8> = constant.bytes().unwrap().iter().copied().cycle().take(f.chunk * w).collect();
        Some(Planes::new(&f.axes, mode, f.chunk * w, &pattern, PlaneChoice::Always, None))
    }

    /// A constant of distinct bytes (15, 30, ...) of `dtype`'s width.
    fn distinct_constant(dtype: DataType) -> Tensor {
        let w = dtype.width().bytes().unwrap();
        Tensor::from_bytes(dtype, vec![], (1..=w as u8).map(|b| b * 15).collect()).unwrap()
    }

    const WIDTHS: [DataType; 5] =
        [DataType::Uint8, DataType::Float16, DataType::Float32, DataType::Int64, DataType::Complex128];

    /// Planes written whole equal the reference in every mode and width (and so do the same
    /// pads row by row): planes of 1 to 7 rows of 1 to 7 elements, pads of up to 3 and crops
    /// on both axes, under an outer axis padded or cropped, constants of distinct bytes. And
    /// where the CPU has SSSE3 planes are made, with windows of one load and of several
    /// (else the test would pass on the row path alone).
    #[test]
    fn planes_equal_the_reference() {
        let (mut made, mut with_many) = (0, 0);
        for dtype in WIDTHS {
            let constant = distinct_constant(dtype);
            for mode in Mode::ALL {
                for (h, width) in [(1, 5), (2, 7), (3, 3), (5, 5), (7, 7), (4, 1), (6, 2)] {
                    for [top, left, bottom, right] in
                        [[1, 1, 1, 1], [0, 2, 3, 0], [-1, 1, 2, -1], [3, 3, 0, 1], [2, -1, -1, 3]]
                    {
                        let outer = if (top + left) % 2 == 0 { 1 } else { -1 };
                        let pads = [outer, top, left, 0, bottom, right];
                        if let Some(Some(planes)) = check_both_ways(dtype, &[3, h, width], &pads, mode, &constant, 3) {
                            made += 1;
                            with_many += !planes.many.is_empty() as usize;
                        }
                    }
                }
            }
        }
        if super::super::row_ends::shuffles() {
            assert!(made > 500 && with_many > 100, "{made} plans made planes, {with_many} with windows of many loads");
        }
    }

    /// A few planes written whole (and the same pads row by row), small enough for Miri
    /// (`.ci/miri` runs this): windows of one, two and three loads, with the constant or'd
    /// in and without, the last window moved back, chunks of 1 to 16 bytes, into junk.
    #[test]
    fn planes_are_written_whole() {
        let cases: [(DataType, &[usize], [i64; 6], Mode); 6] = [
            (DataType::Float32, &[2, 7, 7], [0, 1, 1, 0, 1, 1], Mode::Wrap),
            (DataType::Uint8, &[3, 4, 14], [0, 1, 1, 0, 1, 1], Mode::Constant),
            (DataType::Float16, &[2, 5, 5], [1, 2, 0, 0, 1, 2], Mode::Reflect),
            (DataType::Int64, &[2, 3, 3], [0, 1, -1, 0, 0, 2], Mode::Edge),
            (DataType::Complex128, &[2, 2, 3], [0, 1, 1, 1, 0, 1], Mode::Constant),
            (DataType::Uint8, &[2, 5, 9], [1, 0, 3, 0, 2, 1], Mode::Wrap),
        ];
        let (mut made, mut most_loads, mut with_constant, mut moved_back) = (0, 0, 0, 0);
        for (dtype, shape, pads, mode) in cases {
            let planes =
                check_both_ways(dtype, shape, &pads, mode, &distinct_constant(dtype), 3).expect("a valid plan");
            if let Some(planes) = planes {
                made += 1;
                let loads = planes.many.iter().map(|l| l.iter().filter(|l| l.mask != [NONE; W]).count());
                most_loads = most_loads.max(loads.max().unwrap_or(1));
                with_constant += planes.constants.is_some() as usize;
                moved_back +=
                    planes.ones.iter().chain(planes.many.iter().map(|l| &l[0])).any(|l| l.out % 16 != 0) as usize;
            }
        }
        if super::super::row_ends::shuffles() {
            assert_eq!((made, most_loads), (6, 3), "every case made planes, some window of three loads");
            assert!((2..6).contains(&with_constant) && moved_back >= 2, "{with_constant} {moved_back}");
        }
    }

    /// Random pads of ranks 2-4 (axes of 1-9, pads -2 to 4 or none, so that trailing
    /// unpadded axes fold into chunks of several elements and blocks span two to four
    /// axes), every mode and width, a random constant: planes written wherever they can be
    /// equal the reference, and so do the rows. Planes are made in a good share of cases.
    #[test]
    fn random_planes_equal_the_reference() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let cases = (2usize..=4).prop_flat_map(|rank| {
            (
                proptest::sample::select(&WIDTHS[..]),
                proptest::collection::vec(1usize..=9, rank),
                proptest::collection::vec(prop_oneof![2 => Just(0i64), 3 => -2..=4i64], 2 * rank),
                proptest::sample::select(&Mode::ALL[..]),
                any::<u64>(),
            )
        });
        // Counted through cells: the runner takes a `Fn`.
        let (ran, made) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
        let mut runner = TestRunner::new(Config { cases: 512, failure_persistence: None, ..Config::default() });
        runner
            .run(&cases, |(dtype, shape, mut pads, mode, seed)| {
                // Crops of at most half an axis a side, so that most plans are valid.
                let rank = shape.len();
                for d in 0..rank {
                    let n = shape[d] as i64;
                    pads[d] = pads[d].max(-(n / 2));
                    pads[rank + d] = pads[rank + d].max(-(n - n / 2));
                }
                let w = dtype.width().bytes().unwrap();
                let constant = Tensor::from_bytes(dtype, vec![], seed.to_le_bytes().repeat(2)[..w].to_vec()).unwrap();
                if let Some(planes) = check_both_ways(dtype, &shape, &pads, mode, &constant, seed) {
                    ran.set(ran.get() + 1);
                    made.set(made.get() + planes.is_some() as usize);
                }
                Ok(())
            })
            .unwrap();
        let (ran, made) = (ran.get(), made.get());
        assert!(ran >= 400, "only {ran} of 512 plans valid");
        if super::super::row_ends::shuffles() {
            assert!(made * 3 >= ran, "only {made} of {ran} pads made planes");
        }
    }

    /// Windows per plane.
    fn windows(planes: &Planes) -> usize {
        planes.ones.len() + planes.many.len()
    }

    /// Which blocks make planes: two axes or more, 16 to 1024 output bytes, 16 input bytes.
    #[test]
    fn blocks_that_make_planes() {
        if !super::super::row_ends::shuffles() {
            return;
        }
        let planes = |dtype: DataType, shape: &[usize], pads: &[i64], mode| {
            let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
            let f = plan.folded(true);
            let w = dtype.width().bytes().unwrap();
            Planes::new(&f.axes, mode, f.chunk * w, &vec![0; f.chunk * w], PlaneChoice::Always, None)
                .map(|p| (p.axis, windows(&p)))
        };
        let f32 = DataType::Float32;
        assert_eq!(
            planes(f32, &[32, 256, 7, 7], &[0, 0, 1, 1, 0, 0, 1, 1], Mode::Constant),
            Some((1, 21)),
            "324 bytes"
        );
        assert_eq!(planes(f32, &[4, 14, 14], &[0, 1, 1, 0, 1, 1], Mode::Edge), Some((1, 64)), "1024 bytes");
        assert_eq!(planes(f32, &[4, 15, 14], &[0, 1, 1, 0, 1, 1], Mode::Edge), None, "1088 bytes");
        assert_eq!(
            planes(f32, &[2, 3, 3], &[1, 1, 1, 1, 1, 1], Mode::Reflect),
            Some((0, 25)),
            "all three axes: 400 bytes"
        );
        assert_eq!(planes(f32, &[9], &[1, 1], Mode::Reflect), None, "one axis: a row");
        assert_eq!(planes(DataType::Uint8, &[2, 2], &[1, 1, 1, 1], Mode::Edge), None, "4 input bytes");
        // A wrap of f32 rows of 7: the window across the top pad row (the last input row)
        // and the first kept row takes three loads (the last row; the first row's first 16
        // bytes; its last element, the pad before it). The block of both planes (648 bytes)
        // would take four across them, so each plane is one.
        let request = PadRequest::new(vec![0, 1, 1, 0, 1, 1]).mode(Mode::Wrap);
        let f = PadPlan::new(f32, &[2, 7, 7], &request).unwrap().folded(true);
        let wrap = Planes::new(&f.axes, Mode::Wrap, 4, &[0; 4], PlaneChoice::Always, None).unwrap();
        assert_eq!((wrap.axis, windows(&wrap)), (1, 21));
        assert!(wrap.many.iter().any(|loads| loads.iter().all(|l| l.mask != [NONE; W])), "a window of three loads");
    }
}
