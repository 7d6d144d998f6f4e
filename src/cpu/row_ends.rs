//! Innermost rows written whole where the CPU shuffles bytes (x86-64 with SSSE3): a row's
//! first and last 16 output bytes, its pads among them, are byte shuffles of its kept
//! input's first and last 16 bytes (or the constant), one store each, and the bytes between
//! are one copy, or one or two 16-byte moves where they are 32 or fewer. Why: written after
//! the copy, byte by byte (`Walk::row_pads`) or by a fill per run, a row's pads queue behind
//! the copy's stores, which made an image padded by a pixel or two slower than a memcpy of
//! its output; and for rows of a few pixels a library copy's call costs more than the copy.

use std::mem::MaybeUninit;

use super::Rows;
use crate::mode::{source_index, Mode};
use crate::plan::AxisMap;

/// Bytes at each end of a row made by one shuffle.
const END: usize = 16;

/// A shuffle index that selects nothing (a zero byte): the top bit set.
const NONE: u8 = 0x80;

/// How the rows of one pad are written, worked out once per pad. Only made where the CPU
/// has SSSE3, checked in [`RowEnds::new`].
#[derive(Debug)]
pub(super) struct RowEnds {
    /// Bytes per chunk.
    chunk: usize,
    /// Output bytes per row.
    out_len: usize,
    /// The kept input's first byte, from the input row's start, and its length.
    kept_start: usize,
    kept: usize,
    /// Pad bytes before the kept part.
    pad_before: usize,
    /// Whether the bytes between the ends go in one or two 16-byte moves (at most 32 of
    /// them, with 16 kept bytes from the first), else by a copy.
    short_middle: bool,
    head: End,
    tail: End,
}

/// One end of a row: byte `i` is the kept input's first-16 byte `first[i]`, or its last-16
/// byte `last[i]`, or `constant[i]` (the index not used is [`NONE`], the constant 0 when
/// not used).
#[derive(Debug)]
struct End {
    first: [u8; END],
    last: [u8; END],
    constant: [u8; END],
}

/// Where one output byte of a row comes from.
enum Source {
    /// The kept input's byte at this offset.
    Kept(usize),
    /// The constant.
    Constant,
}

impl RowEnds {
    /// The row writer for innermost rows of axis `row` in chunks of `chunk` bytes padded by
    /// `mode` (`pattern`: the constant, one chunk of it), or `None` where the pads or the
    /// kept part do not fit the shuffles (a pad of more than 16 bytes, a kept part under 16,
    /// a pad copying from beyond its 16 bytes), where there is nothing to pad, or where the
    /// CPU lacks SSSE3.
    pub(super) fn new(row: &AxisMap, mode: Mode, chunk: usize, pattern: &[u8]) -> Option<RowEnds> {
        if !shuffles() {
            return None;
        }
        let (before, kept, after) = (row.pad_before * chunk, row.kept * chunk, row.pad_after * chunk);
        let out_len = row.out_len * chunk;
        if before + after == 0 || before > END || after > END || kept < END || out_len < 2 * END {
            return None;
        }
        let source = |o: usize| -> Option<Source> {
            if (before..before + kept).contains(&o) {
                return Some(Source::Kept(o - before));
            }
            if mode == Mode::Constant {
                return Some(Source::Constant);
            }
            let k = source_index(mode, (o / chunk) as i64 - row.pad_before as i64, row.kept as u64)?;
            Some(Source::Kept(k as usize * chunk + o % chunk))
        };
        let end = |start: usize| -> Option<End> {
            let mut end = End { first: [NONE; END], last: [NONE; END], constant: [0; END] };
            for i in 0..END {
                let o = start + i;
                match source(o)? {
                    Source::Kept(b) if b < END => end.first[i] = b as u8,
                    Source::Kept(b) if b >= kept - END => end.last[i] = (b - (kept - END)) as u8,
                    Source::Kept(_) => return None,
                    // Rows start at a chunk's start, so the pattern's byte is the offset's.
                    Source::Constant => end.constant[i] = *pattern.get(o % chunk)?,
                }
            }
            Some(end)
        };
        let middle = out_len - 2 * END;
        Some(RowEnds {
            chunk,
            out_len,
            kept_start: row.crop_start * chunk,
            kept,
            pad_before: before,
            short_middle: middle <= 2 * END && END - before + END <= kept,
            head: end(0)?,
            tail: end(out_len - END)?,
        })
    }

    /// Whether the bytes between a row's ends go in one or two 16-byte moves (not a copy).
    pub(super) fn short_middle(&self) -> bool {
        self.short_middle
    }

    /// Writes `rows` (in chunks) of `input` into `out`, each row whole.
    pub(super) fn write(&self, out: &mut [MaybeUninit<u8>], input: &[u8], rows: &Rows) {
        // SAFETY: `new` made `self` only where the CPU has SSSE3.
        unsafe { self.write_ssse3(out, input, rows) }
    }

    /// [`write`](Self::write), by SSSE3's byte shuffle.
    ///
    /// # Safety
    /// The CPU has SSSE3.
    #[target_feature(enable = "ssse3")]
    unsafe fn write_ssse3(&self, out: &mut [MaybeUninit<u8>], input: &[u8], rows: &Rows) {
        use std::arch::x86_64::_mm_storeu_si128 as store;
        use std::arch::x86_64::{__m128i, _mm_loadu_si128 as load, _mm_or_si128 as or, _mm_shuffle_epi8 as shuffle};
        let c = self.chunk;
        let (head, tail) = (&self.head, &self.tail);
        // SAFETY (every load and store): of 16 bytes, from or into an array or slice of 16
        // (the slices' lengths checked by `sixteen`).
        let sixteen = |bytes: &[u8]| <&[u8; END]>::try_from(bytes).expect("16 bytes").as_ptr().cast::<__m128i>();
        let [head_first, head_last, head_constant] = [&head.first, &head.last, &head.constant].map(|b| {
            // SAFETY: a 16-byte load from a 16-byte array.
            unsafe { load(b.as_ptr().cast()) }
        });
        let [tail_first, tail_last, tail_constant] = [&tail.first, &tail.last, &tail.constant].map(|b| {
            // SAFETY: a 16-byte load from a 16-byte array.
            unsafe { load(b.as_ptr().cast()) }
        });
        for r in 0..rows.count {
            let o = (rows.out_first + r * rows.out_stride) * c;
            let i = (rows.in_first + r * rows.in_stride) * c + self.kept_start;
            let kept = &input[i..i + self.kept];
            // SAFETY: 16-byte loads from slices of 16 (`sixteen` checks their lengths).
            let (first, last) = unsafe { (load(sixteen(&kept[..END])), load(sixteen(&kept[self.kept - END..]))) };
            let head = or(or(shuffle(first, head_first), shuffle(last, head_last)), head_constant);
            let tail = or(or(shuffle(first, tail_first), shuffle(last, tail_last)), tail_constant);
            let row = &mut out[o..o + self.out_len];
            // Output byte 16 is kept byte 16 - pad_before; the middle ends at kept byte
            // kept + pad_after - 16, within the kept part, as pad_after <= 16.
            let (from, m) = (END - self.pad_before, self.out_len - 2 * END);
            if self.short_middle {
                // A short middle (rows of a few pixels) in one or two 16-byte moves, not a
                // library call: the first may run past the middle into the tail, stored after
                // it; the second ends at the middle's end.
                let mut move16 = |to: usize, at: usize| {
                    let slot = <&mut [MaybeUninit<u8>; END]>::try_from(&mut row[END + to..2 * END + to]);
                    // SAFETY: a 16-byte store into a 16-byte array, of a 16-byte load from a
                    // slice of 16 (`sixteen` checks it).
                    unsafe { store(slot.expect("16 bytes").as_mut_ptr().cast(), load(sixteen(&kept[at..at + END]))) };
                };
                move16(0, from);
                if m > END {
                    move16(m - END, from + m - END);
                }
            } else {
                crate::copy::copy_bytes(&mut row[END..END + m], crate::copy::uninit_ref(&kept[from..from + m]));
            }
            let (row_head, rest) = row.split_at_mut(END);
            let row_tail = &mut rest[m..];
            let row_head = <&mut [MaybeUninit<u8>; END]>::try_from(row_head).expect("16 bytes");
            let row_tail = <&mut [MaybeUninit<u8>; END]>::try_from(row_tail).expect("16 bytes");
            // SAFETY: 16-byte stores into 16-byte arrays.
            unsafe {
                store(row_head.as_mut_ptr().cast(), head);
                store(row_tail.as_mut_ptr().cast(), tail);
            }
        }
    }
}

/// Whether this CPU has the byte shuffle the row ends (and planes) need.
pub(super) fn shuffles() -> bool {
    std::arch::is_x86_feature_detected!("ssse3")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{cpu, reference, DataType, PadPlan, PadRequest, Tensor};

    /// Rows written by the shuffles equal the reference in every mode and width: pads of up
    /// to 16 bytes a side and crops, kept parts around 16 bytes, chunks of one element and of
    /// two, constants of distinct bytes, under an outer axis padded or cropped. And where the CPU
    /// has SSSE3 the shuffles do write them, short middles by moves and longer ones by a copy
    /// (else the test would pass on the table alone).
    #[test]
    fn shuffled_rows_equal_the_reference() {
        // Plans shuffled: [middle copied, middle moved].
        let mut shuffled = [0; 2];
        for dtype in [DataType::Uint8, DataType::Float16, DataType::Float32, DataType::Int64, DataType::Complex128] {
            let w = dtype.width().bytes().unwrap();
            let constant = Tensor::from_bytes(dtype, vec![], (1..=w as u8).map(|b| b * 15).collect()).unwrap();
            for mode in Mode::ALL {
                for inner in [1usize, 2] {
                    let max_pad = (END / (w * inner)) as i64 + 1;
                    for n in (END / (w * inner)).saturating_sub(1).max(1)..=END / (w * inner) + 3 {
                        for (before, after) in (-1..=max_pad).flat_map(|b| (-1..=max_pad).map(move |a| (b, a))) {
                            let shape = vec![3, n, inner];
                            let count = 3 * n * inner;
                            let bytes = (0..count * w).map(|i| (i * 7 + 3) as u8).collect();
                            let x = Tensor::from_bytes(dtype, shape.clone(), bytes).unwrap();
                            // The outer axis padded, or cropped (the rows start past its first).
                            let outer = if (before + after) % 2 == 0 { 1 } else { -1 };
                            let pads = vec![outer, before, 0, 0, after, 0];
                            let request = PadRequest::new(pads.clone()).mode(mode).constant(constant.clone());
                            let Ok(plan) = PadPlan::new(dtype, &shape, &request) else { continue };
                            let folded = plan.folded(true);
                            let row = folded.axes.last().unwrap();
                            let chunk = folded.chunk * w;
                            let pattern: Vec<u8> =
                                constant.bytes().unwrap().iter().copied().cycle().take(chunk).collect();
                            if let Some(ends) = RowEnds::new(row, mode, chunk, &pattern) {
                                shuffled[ends.short_middle as usize] += 1;
                            }
                            let y = cpu::pad(&plan, &x).unwrap();
                            assert!(y == reference::pad(&plan, &x), "{dtype} {mode} {shape:?} {pads:?}");
                            // One row alone (a 1-D tensor).
                            let x = Tensor::from_bytes(dtype, vec![n], x.bytes().unwrap()[..n * w].to_vec()).unwrap();
                            let request = PadRequest::new(vec![before, after]).mode(mode).constant(constant.clone());
                            let plan = PadPlan::new(dtype, &[n], &request).unwrap();
                            assert!(cpu::pad(&plan, &x).unwrap() == reference::pad(&plan, &x), "{dtype} {mode} [{n}]");
                        }
                    }
                }
            }
        }
        if shuffles() {
            assert!(shuffled[0] > 1000 && shuffled[1] > 1000, "{shuffled:?} plans shuffled their rows");
        }
    }

    /// Which rows the shuffles take: pads of at most 16 bytes whose sources lie in the kept
    /// part's first or last 16 bytes, kept parts of 16 bytes or more.
    #[test]
    fn rows_that_fit_the_shuffles() {
        if !shuffles() {
            return;
        }
        let fits = |mode, kept: usize, before: usize, after: usize| {
            let row = AxisMap {
                in_len: kept,
                out_len: before + kept + after,
                crop_start: 0,
                kept,
                pad_before: before,
                pad_after: after,
            };
            RowEnds::new(&row, mode, 1, &[0]).is_some()
        };
        assert!(fits(Mode::Reflect, 3072, 6, 6), "u8 [1,1024,1024,3] padded by 2");
        assert!(fits(Mode::Wrap, 16, 16, 16));
        assert!(fits(Mode::Constant, 16, 16, 0));
        assert!(!fits(Mode::Edge, 16, 17, 0), "a pad over 16 bytes");
        assert!(!fits(Mode::Edge, 15, 1, 1), "a kept part under 16 bytes");
        assert!(!fits(Mode::Reflect, 64, 16, 0), "reflect's 16th pad copies byte 16");
        assert!(!fits(Mode::Edge, 64, 0, 0), "nothing to pad");
    }
}
