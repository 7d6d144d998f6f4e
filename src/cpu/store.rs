//! The stores the walk writes through: fixed-width chunks as bytes (vector row ends and
//! planes where the CPU has them), and strings, counted against the output's budget.

use std::mem::MaybeUninit;

use super::extend::{replicate, Rows, Store};
use super::{Planes, RowEnds};
use crate::copy::{copy_bytes, uninit_ref};
use crate::error::PadError;

/// Fixed-width chunks as bytes. The output may start uninitialised (`cpu::pad` does not
/// zero-fill what it is about to overwrite): writes go through raw copies of initialised
/// bytes, and reads (`copy_out`, `copy_reversed`, `repeat`) touch only chunks already written, which the
/// walk guarantees (pads are filled from kept chunks after those are copied).
pub(super) struct ByteStore<'a> {
    pub(super) input: &'a [u8],
    pub(super) out: &'a mut [MaybeUninit<u8>],
    /// Bytes per chunk.
    pub(super) chunk: usize,
    /// The constant, repeated to one chunk.
    pub(super) pattern: &'a [u8],
    /// Writes innermost rows whole, where their pads allow and the CPU can.
    pub(super) row_ends: Option<&'a RowEnds>,
    /// Writes small planes whole, where that is cheaper and the CPU can.
    pub(super) planes: Option<&'a Planes>,
}

impl Store for ByteStore<'_> {
    fn copy_in(&mut self, dst: usize, src: usize, len: usize) {
        let (c, n) = (self.chunk, len * self.chunk);
        copy_bytes(&mut self.out[dst * c..dst * c + n], uninit_ref(&self.input[src * c..src * c + n]));
    }

    fn copy_out(&mut self, dst: usize, src: usize, len: usize) {
        let (c, n) = (self.chunk, len * self.chunk);
        let (d, s) = (dst * c, src * c);
        // Single elements (mirrored pads) are common; give them fixed-size copies.
        match n {
            1 => self.out[d] = self.out[s],
            2 => copy_fixed::<2>(self.out, d, s),
            4 => copy_fixed::<4>(self.out, d, s),
            8 => copy_fixed::<8>(self.out, d, s),
            16 => copy_fixed::<16>(self.out, d, s),
            _ => {
                let (to, from) = disjoint(self.out, d, s, n);
                copy_bytes(to, from);
            }
        }
    }

    fn fill(&mut self, dst: usize, len: usize) {
        if len == 0 {
            return;
        }
        let (c, n) = (self.chunk, len * self.chunk);
        let region = &mut self.out[dst * c..dst * c + n];
        if self.pattern.iter().all(|&b| b == self.pattern[0]) {
            // SAFETY: `region` is in bounds (just sliced) and n bytes long.
            unsafe { std::ptr::write_bytes(region.as_mut_ptr().cast::<u8>(), self.pattern[0], n) };
            return;
        }
        for (to, &from) in region[..c].iter_mut().zip(self.pattern) {
            to.write(from);
        }
        self.repeat(dst + 1, dst, len - 1, 1);
    }

    fn write_plane(&mut self, axis: usize, out_base: usize, in_base: usize) -> bool {
        match self.planes {
            Some(planes) if planes.axis() == axis => {
                let c = self.chunk;
                planes.write(&mut self.out[out_base * c..], &self.input[in_base * c..]);
                true
            }
            _ => false,
        }
    }

    fn write_rows(&mut self, rows: &Rows) -> bool {
        let Some(ends) = self.row_ends else { return false };
        ends.write(self.out, self.input, rows);
        true
    }

    fn pad_row(&mut self, out_base: usize, in_base: usize, pads: &[(usize, usize)]) {
        let c = self.chunk;
        let (out_row, in_row) = (&mut self.out[out_base * c..], &self.input[in_base * c..]);
        // Byte moves: a handful per pad, too few for a library call to pay. They read the
        // input, not the kept part just copied to the output, which would wait for that copy.
        for &(dst, src) in pads {
            out_row[dst].write(in_row[src]);
        }
    }

    fn copy_reversed(&mut self, dst: usize, src: usize, len: usize) {
        let c = self.chunk;
        let (to, from) = disjoint(self.out, dst * c, src * c, len * c);
        // One pass, read backwards (copying, then reversing in place, took two).
        match c {
            1 => copy_reversed_fixed::<1>(to, from),
            2 => copy_reversed_fixed::<2>(to, from),
            4 => copy_reversed_fixed::<4>(to, from),
            8 => copy_reversed_fixed::<8>(to, from),
            16 => copy_reversed_fixed::<16>(to, from),
            _ => to.chunks_exact_mut(c).zip(from.chunks_exact(c).rev()).for_each(|(t, f)| t.copy_from_slice(f)),
        }
    }

    fn repeat(&mut self, dst: usize, src: usize, count: usize, block: usize) {
        let (c, n) = (self.chunk, count * block * self.chunk);
        let (d, s) = (dst * c, src * c);
        // A block of a few bytes (an element, a pixel) repeated over a short run is stored as
        // a pattern: doubling copies would be a library call each for a few bytes. Long runs
        // double: glibc's large copies measured faster than the pattern's stores.
        match block * c {
            _ if n > REPEAT_PATTERN_BYTES => replicate(self, dst, src, count, block),
            1 => {
                let v = self.out[s];
                self.out[d..d + n].fill(v);
            }
            2 => repeat_fixed::<2>(self.out, d, s, n),
            4 => repeat_fixed::<4>(self.out, d, s, n),
            8 => repeat_fixed::<8>(self.out, d, s, n),
            16 => repeat_fixed::<16>(self.out, d, s, n),
            // One block (edge's first or last row of a plane): a copy, not the doubling loop.
            _ if count == 1 => {
                let (to, from) = disjoint(self.out, d, s, n);
                copy_bytes(to, from);
            }
            _ => replicate(self, dst, src, count, block),
        }
    }
}

/// The longest run `ByteStore::repeat` writes as a pattern of a few bytes.
const REPEAT_PATTERN_BYTES: usize = 64 << 10;

/// `out[dst..dst+n]` (`n` a multiple of `N`, disjoint from the source) = the `N` bytes at
/// `src`, repeated.
fn repeat_fixed<const N: usize>(out: &mut [MaybeUninit<u8>], dst: usize, src: usize, n: usize) {
    let pattern: [MaybeUninit<u8>; N] = out[src..src + N].try_into().expect("range of N bytes");
    for to in out[dst..dst + n].chunks_exact_mut(N) {
        to.copy_from_slice(&pattern);
    }
}

/// `to`'s `N`-byte chunks are `from`'s in reverse order.
fn copy_reversed_fixed<const N: usize>(to: &mut [MaybeUninit<u8>], from: &[MaybeUninit<u8>]) {
    for (t, f) in to.chunks_exact_mut(N).zip(from.chunks_exact(N).rev()) {
        t.copy_from_slice(f);
    }
}

fn copy_fixed<const N: usize>(out: &mut [MaybeUninit<u8>], dst: usize, src: usize) {
    let v: [MaybeUninit<u8>; N] = out[src..src + N].try_into().expect("range of N bytes");
    out[dst..dst + N].copy_from_slice(&v);
}

/// Strings, counted as they are copied: what the output holds beyond the `String`s
/// themselves must stay within `budget`, and every allocation is fallible.
pub(super) struct StringStore<'a> {
    pub(super) input: &'a [String],
    pub(super) out: &'a mut [String],
    /// Elements per chunk.
    pub(super) chunk: usize,
    pub(super) constant: &'a str,
    pub(super) budget: u64,
    /// The first failure; once set, nothing more is copied.
    pub(super) error: Option<PadError>,
}

impl<'a> StringStore<'a> {
    pub(super) fn new(
        input: &'a [String],
        out: &'a mut [String],
        chunk: usize,
        constant: &'a str,
        budget: u64,
    ) -> Self {
        StringStore { input, out, chunk, constant, budget, error: None }
    }
}

/// `dst[i] = src[i]`, charging `budget` for the bytes and allocating fallibly.
pub(super) fn copy_strings<'s>(
    dst: &mut [String],
    src: impl Iterator<Item = &'s str>,
    budget: &mut u64,
    error: &mut Option<PadError>,
) {
    if error.is_some() {
        return;
    }
    for (d, s) in dst.iter_mut().zip(src) {
        let bytes = s.len() as u64;
        if bytes > *budget {
            *error = Some(PadError::TooLarge {
                what: "the output strings hold more than the limit (max_output_bytes)".to_string(),
            });
            return;
        }
        *budget -= bytes;
        let mut copy = String::new();
        if copy.try_reserve_exact(s.len()).is_err() {
            *error = Some(PadError::OutOfMemory { reason: format!("cannot allocate a string of {bytes} bytes") });
            return;
        }
        copy.push_str(s);
        *d = copy;
    }
}

impl Store for StringStore<'_> {
    fn copy_in(&mut self, dst: usize, src: usize, len: usize) {
        let (c, n) = (self.chunk, len * self.chunk);
        let src = self.input[src * c..src * c + n].iter().map(String::as_str);
        copy_strings(&mut self.out[dst * c..dst * c + n], src, &mut self.budget, &mut self.error);
    }

    fn copy_out(&mut self, dst: usize, src: usize, len: usize) {
        let (c, n) = (self.chunk, len * self.chunk);
        let (to, from) = disjoint(self.out, dst * c, src * c, n);
        copy_strings(to, from.iter().map(String::as_str), &mut self.budget, &mut self.error);
    }

    fn fill(&mut self, dst: usize, len: usize) {
        let c = self.chunk;
        let constant = std::iter::repeat(self.constant);
        copy_strings(&mut self.out[dst * c..(dst + len) * c], constant, &mut self.budget, &mut self.error);
    }

    fn repeat(&mut self, dst: usize, src: usize, count: usize, block: usize) {
        replicate(self, dst, src, count, block)
    }

    fn copy_reversed(&mut self, dst: usize, src: usize, len: usize) {
        let c = self.chunk;
        let (to, from) = disjoint(self.out, dst * c, src * c, len * c);
        let mirrored = from.chunks(c).rev().flatten().map(String::as_str);
        copy_strings(to, mirrored, &mut self.budget, &mut self.error);
    }

    fn pad_row(&mut self, out_base: usize, in_base: usize, pads: &[(usize, usize)]) {
        let (out_row, in_row) = (out_base * self.chunk, in_base * self.chunk);
        for &(dst, src) in pads {
            let (to, from) = (&mut self.out[out_row + dst..out_row + dst + 1], self.input[in_row + src].as_str());
            copy_strings(to, std::iter::once(from), &mut self.budget, &mut self.error);
        }
    }

    fn write_rows(&mut self, _: &Rows) -> bool {
        false // string by string, as other rows
    }
}

/// `out[dst..dst+n]` (exclusive) and `out[src..src+n]` (shared); the ranges must be disjoint.
fn disjoint<T>(out: &mut [T], dst: usize, src: usize, n: usize) -> (&mut [T], &[T]) {
    if dst > src {
        let (head, tail) = out.split_at_mut(dst);
        (&mut tail[..n], &head[src..src + n])
    } else {
        let (head, tail) = out.split_at_mut(src);
        (&mut head[dst..dst + n], &tail[..n])
    }
}
