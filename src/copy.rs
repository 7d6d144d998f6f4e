//! Byte copies, shared by both paths: the CPU pad's, GPU readbacks into new vectors, and
//! uploads through a mapping.

use std::mem::MaybeUninit;

use crate::error::Result;
use crate::memory::output_bytes;
use crate::memory::OutputArena;
use crate::threads::{share_out, threads, PARALLEL_MIN_BYTES};

/// A new vector holding `src` (a GPU readback): allocated without zero-filling, on huge
/// pages where large, and copied by up to [`threads`] threads from 4 MiB, since faulting in
/// its fresh pages costs about as much as the copy and spreads across cores.
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
pub(crate) fn copy_to_new_vec(src: &[u8], what: &str, arena: Option<&OutputArena>) -> Result<Vec<u8>> {
    let mut out = output_bytes(src.len(), what, arena)?;
    let dst = &mut out.spare_capacity_mut()[..src.len()];
    let threads = threads();
    if threads > 1 && src.len() >= PARALLEL_MIN_BYTES {
        // Whole pages per part, so no page is faulted by two threads.
        let part = src.len().div_ceil(threads).next_multiple_of(4096);
        share_out(dst.chunks_mut(part).zip(src.chunks(part)).collect(), threads, |(to, from)| {
            copy_bytes(to, uninit_ref(from))
        });
    } else {
        copy_bytes(dst, uninit_ref(src));
    }
    // SAFETY: the parts (or the one copy) cover all `src.len()` bytes, and each was written by
    // `copy_bytes` before the scope ended; a panic there never reaches this line.
    unsafe { out.set_len(src.len()) };
    Ok(out)
}

/// Copies made in pieces of this many bytes when their distance is one `rep movsb` is slow at.
const PIECE_BYTES: usize = 2048;

/// Copies of these sizes go through a vector loop where the CPU has AVX2 (`copy_raw`): from
/// 256 bytes (rows of 64 floats; shorter ones unmeasured) up to 1 MiB, where the loop measured
/// as fast as glibc or faster; larger copies stay glibc's.
#[cfg(target_arch = "x86_64")]
const VECTOR_COPY_BYTES: std::ops::RangeInclusive<usize> = 256..=1 << 20;

/// `to = from` (the same length; disjoint, as borrows are): short copies inline, others by
/// [`copy_raw`].
pub(crate) fn copy_bytes(to: &mut [MaybeUninit<u8>], from: &[MaybeUninit<u8>]) {
    assert_eq!(to.len(), from.len());
    if copy_short::<16>(to, from) || copy_short::<32>(to, from) {
        return;
    }
    // SAFETY: equal lengths, distinct memory (a shared and an exclusive borrow); the bytes
    // copied are initialised (the callers' sources are), and writing bytes into
    // MaybeUninit<u8> memory is always allowed.
    unsafe { copy_raw(to.as_mut_ptr().cast(), from.as_ptr().cast(), to.len()) }
}

/// `to = from` where their length is from `N` to `2N` bytes (true), as two copies of `N`
/// bytes that may overlap; else nothing (false). Rows and blocks of a few pixels are many,
/// and memcpy's call and size dispatch cost more than the copy: f32 \[32,256,7,7\] padded by 1
/// copies rows of 36 bytes.
#[inline(always)]
pub(crate) fn copy_short<const N: usize>(to: &mut [MaybeUninit<u8>], from: &[MaybeUninit<u8>]) -> bool {
    let n = to.len();
    if !(N..=2 * N).contains(&n) {
        return false;
    }
    let head: [MaybeUninit<u8>; N] = from[..N].try_into().expect("N bytes");
    let tail: [MaybeUninit<u8>; N] = from[n - N..].try_into().expect("N bytes");
    to[..N].copy_from_slice(&head);
    to[n - N..].copy_from_slice(&tail);
    true
}

/// Copies `n` bytes from `src` to `dst`: every copy of the CPU path, of GPU readbacks into
/// new vectors and of uploads through a mapping.
///
/// Why not always memcpy: glibc's memcpy moves copies from 2113 bytes up to roughly the L2
/// cache's size with `rep movsb` on CPUs that flag it as fast (FSRM), and on AMD Zen (see
/// <https://lunnova.dev/articles/ryzen-slow-short-rep-mov>; measured on this project's AMD
/// EPYC, glibc 2.36) that runs 10 to 13 times slower when the destination lies a few bytes
/// past the source modulo 4 KiB (slow at 1, 6 and 16 bytes; not at 32, 63 or 64). Padded rows
/// land on such distances now and then (a few of the 1024 rows of u8 \[1,1024,1024,3\] padded
/// by 2, depending on where the buffers start), and every block of a pad can (when the pads
/// add a multiple of 4 KiB per block). And at good distances, such rows (3 KiB) copied one
/// by one took 1.2 times a plain 32-byte vector loop. Shorter copies (up to 8 vectors) glibc
/// stores unaligned, and a buffer from malloc starts 16 bytes past a cache line, so that each
/// of a row's stores crosses one: on an Intel Xeon, rows of 512 bytes (f16 \[8,4096,256\]'s
/// gradient) took 1.29-1.34 ms by glibc against 1.22-1.25 by [`copy_avx2`]'s aligned stores,
/// the 1 KiB rows of f32 \[1,64,256,256\]'s edge gradient 1.59-1.61 against 1.31-1.35. So
/// copies of [`VECTOR_COPY_BYTES`] go through [`copy_avx2`] where the CPU has AVX2 (AMD's CPUs
/// that flag FSRM, Zen 3 on, all have it); elsewhere, at the slow distances (up to 63, for a
/// margin), in 2 KiB pieces, which glibc copies with its own vector loop.
///
/// # Safety
/// `src` is valid for `n` bytes of reads, initialised; `dst` for `n` bytes of writes (it is
/// never read); the two do not overlap.
pub(crate) unsafe fn copy_raw(dst: *mut u8, src: *const u8, n: usize) {
    #[cfg(target_arch = "x86_64")]
    if VECTOR_COPY_BYTES.contains(&n) && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (just checked), n >= 32, and the caller's promises.
        return unsafe { copy_avx2(dst, src, n) };
    }
    // SAFETY: the caller's promises.
    unsafe { copy_in_pieces(dst, src, n) }
}

/// Copies `n` bytes from `src` to `dst` by memcpy, in the pieces [`copy_piece`] asks for.
///
/// # Safety
/// As [`copy_raw`].
unsafe fn copy_in_pieces(dst: *mut u8, src: *const u8, n: usize) {
    let piece = copy_piece(dst as usize, src as usize, n);
    let mut done = 0;
    while done < n {
        let k = piece.min(n - done);
        // SAFETY: `done + k <= n`, within the caller's ranges, which do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), k) };
        done += k;
    }
}

/// Copies `n` bytes from `src` to `dst` with 32-byte loads and stores, four at a time: the
/// first 32 bytes and the last 32 (each overlapping what the others store, unless `dst` and
/// `n` are multiples of 32) by themselves, unaligned, the rest stored where `dst` is aligned.
///
/// # Safety
/// The CPU has AVX2; `n >= 32`; `src` is valid for `n` bytes of reads and `dst` for `n`
/// bytes of writes, and the two do not overlap.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn copy_avx2(dst: *mut u8, src: *const u8, n: usize) {
    use std::arch::x86_64::{
        __m256i, _mm256_loadu_si256 as load, _mm256_store_si256 as aligned, _mm256_storeu_si256 as store,
    };
    debug_assert!(n >= 32);
    let (d, s) = (dst.cast::<__m256i>(), src.cast::<__m256i>());
    // SAFETY (every load and store): offsets below `n - 31`, so within the caller's `n`
    // bytes; unaligned loads and stores need no alignment, and the aligned stores are at
    // `dst + i` with `i` taking `dst` to a multiple of 32.
    store(d, load(s));
    // The first 32 bytes stored, the rest from where `dst` is 32-aligned: no store crosses
    // a cache line (a buffer from malloc starts 16 bytes past one, and each of a row's
    // unaligned stores would).
    let mut i = 32 - (dst as usize & 31);
    while i + 128 <= n {
        let v = [load(s.byte_add(i)), load(s.byte_add(i + 32)), load(s.byte_add(i + 64)), load(s.byte_add(i + 96))];
        for (k, v) in v.into_iter().enumerate() {
            aligned(d.byte_add(i + 32 * k), v);
        }
        i += 128;
    }
    while i + 32 <= n {
        aligned(d.byte_add(i), load(s.byte_add(i)));
        i += 32;
    }
    store(d.byte_add(n - 32), load(s.byte_add(n - 32)));
}

/// The pieces a copy of `n` bytes from address `from` to address `to` goes in: all `n` at
/// once, or [`PIECE_BYTES`] at a distance `rep movsb` is slow at (see `copy_raw`).
fn copy_piece(to: usize, from: usize, n: usize) -> usize {
    let distance = to.wrapping_sub(from) % 4096;
    let unlucky =
        cfg!(target_arch = "x86_64") && (1..64).contains(&distance) && (PIECE_BYTES + 1..=1 << 20).contains(&n);
    if unlucky {
        PIECE_BYTES
    } else {
        n.max(1)
    }
}

/// Initialised bytes seen as possibly uninitialised ones, to copy from.
pub(crate) fn uninit_ref(bytes: &[u8]) -> &[MaybeUninit<u8>] {
    // SAFETY: same layout; a shared slice is never written through.
    unsafe { &*(bytes as *const [u8] as *const [MaybeUninit<u8>]) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threads::REFUSE_HELPERS;

    type CopyFn = fn(&mut [MaybeUninit<u8>], &[MaybeUninit<u8>]);

    /// GPU readbacks are copied out whole, split across threads or not, helpers refused or
    /// not, for sizes around the split and its page-sized parts.
    #[test]
    fn readbacks_are_copied_whole() {
        use crate::threads::{PARTS_SHARED, THREADS_HERE};
        let split = PARALLEL_MIN_BYTES;
        let src: Vec<u8> = (0..2 * split + 4099).map(|i| (i % 251) as u8).collect();
        // Three threads on this thread, whatever the machine has: the split is taken on one
        // core too.
        THREADS_HERE.set(Some(3));
        for len in [0, 1, 4095, split - 1, split, split + 4097, src.len()] {
            for refuse in [false, true] {
                REFUSE_HELPERS.set(refuse);
                PARTS_SHARED.set(0);
                let copy = copy_to_new_vec(&src[..len], "a test", None).unwrap();
                let parts = PARTS_SHARED.get();
                REFUSE_HELPERS.set(false);
                assert!(copy == src[..len], "{len} bytes, helpers refused: {refuse}");
                // The split path shares whole pages out: one part or more (one only where
                // the output is a single page, as under Miri's small split).
                assert_eq!(parts >= 1, len >= split, "{len} bytes: {parts} parts");
            }
        }
        THREADS_HERE.set(None);
    }

    /// The vector loop's copies arrive whole and write nothing else from every start of the
    /// destination within 32 bytes (its first store unaligned, the rest aligned) and of the
    /// source within 8, for lengths around the loop's bounds and its four stores at a time.
    #[test]
    fn vector_copies_are_whole_from_every_alignment() {
        let src: Vec<u8> = (0..4096).map(|i| (i % 251) as u8 + 1).collect();
        let mut dst = vec![MaybeUninit::new(0u8); 4096 + 64];
        let base = (dst.as_ptr() as usize).next_multiple_of(32) - dst.as_ptr() as usize;
        for len in [32, 33, 63, 64, 65, 127, 128, 159, 160, 161, 255, 256, 257, 300, 511, 512, 2112, 2113] {
            for (to, from) in (0..32).flat_map(|to| (0..8).map(move |from| (base + to, from))) {
                let copies: [(&str, CopyFn); 2] = [
                    ("copy_bytes", copy_bytes),
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: AVX2 checked below; len >= 32, equal lengths, distinct vectors.
                    ("copy_avx2", |to, from| unsafe {
                        copy_avx2(to.as_mut_ptr().cast(), from.as_ptr().cast(), to.len())
                    }),
                    #[cfg(not(target_arch = "x86_64"))]
                    ("copy_bytes again", copy_bytes),
                ];
                for (name, copy) in copies {
                    #[cfg(target_arch = "x86_64")]
                    if name == "copy_avx2" && !std::arch::is_x86_feature_detected!("avx2") {
                        continue;
                    }
                    dst.iter_mut().for_each(|b| *b = MaybeUninit::new(0));
                    copy(&mut dst[to..to + len], uninit_ref(&src[from..from + len]));
                    // SAFETY: every byte of `dst` was initialised just above.
                    let got: Vec<u8> = dst.iter().map(|b| unsafe { b.assume_init() }).collect();
                    let what = format!("{name}: {len} bytes to {} past 32, from {from}", to - base);
                    assert!(got[to..to + len] == src[from..from + len], "{what}");
                    assert!(got[..to].iter().chain(&got[to + len..]).all(|&b| b == 0), "{what}: wrote outside");
                }
            }
        }
    }

    /// Copies through the vector loop and in pieces (where `rep movsb` is slow) arrive whole
    /// and write nothing else, whatever the length (every tail of the vector loop, around
    /// each bound) and the distance.
    #[test]
    fn unlucky_distances_copy_whole() {
        let src: Vec<u8> = (0..(1 << 20) + 8192).map(|i| (i % 253) as u8).collect();
        let mut dst = vec![MaybeUninit::new(0u8); src.len() + 8192];
        // Every length's tail modulo the vector loop's 128 bytes, and around each bound.
        let lens = [0, 1, 2048, 2049, 2112, 4095, 4097, 100_000, 1 << 20, (1 << 20) + 1].into_iter();
        for len in lens.chain(2113..2113 + 128) {
            for distance in [0, 1, 8, 63, 64, 4095] {
                let copies: [(&str, CopyFn); 2] = [
                    ("copy_bytes", copy_bytes),
                    // SAFETY: as copy_bytes's.
                    ("copy_in_pieces", |to, from| unsafe {
                        copy_in_pieces(to.as_mut_ptr().cast(), from.as_ptr().cast(), to.len())
                    }),
                ];
                for (name, copy) in copies {
                    // Where `to` starts `distance` bytes past `from`, modulo 4096.
                    let from = &src[..len];
                    let at = (from.as_ptr() as usize + distance).wrapping_sub(dst.as_ptr() as usize) % 4096;
                    dst.iter_mut().for_each(|b| *b = MaybeUninit::new(0));
                    copy(&mut dst[at..at + len], uninit_ref(from));
                    // SAFETY: every byte of `dst` was initialised just above.
                    let got: Vec<u8> = dst.iter().map(|b| unsafe { b.assume_init() }).collect();
                    let what = format!("{name}: {len} bytes at distance {distance}");
                    assert!(got[at..at + len] == *from, "{what}");
                    assert!(got[..at].iter().chain(&got[at + len..]).all(|&b| b == 0), "{what}: wrote outside");
                }
            }
        }
    }
}
