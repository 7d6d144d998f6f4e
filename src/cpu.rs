//! The CPU path: copies contiguous kept runs of the input, then fills each axis's pads by
//! blocks of output already written (or the constant), outermost axis last; an innermost
//! row's few copied pads (a pixel or two) are copied from the input row by a table instead,
//! or, on x86-64, written with the row by byte shuffles (`row_ends`). On x86-64, many small
//! planes (the innermost axes' blocks, up to 1 KiB) are each written whole by shuffles
//! instead, where that is estimated to be cheaper (`planes`).
//!
//! Outputs of 4 MiB and more are split across threads: by default the machine's
//! parallelism, or `WGPU_PAD_CPU_THREADS`, or [`set_max_threads`]; at most [`MAX_THREADS`].
//! A thread the system refuses is done on the calling thread instead.
//!
//! The recursion is written once over a `Store` (output and input access), in units of `chunk` elements (the plan's
//! unpadded trailing axes), so one code path serves every byte width, the 4-bit types
//! (unpacked to bytes, padded, repacked) and strings.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use crate::arena::OutputArena;
use crate::dtype::ElementWidth;
use crate::error::{PadError, Result};
use crate::plan::{AxisMap, Constant, Mode, PadPlan};
use crate::tensor::{output_bytes, try_filled, unpack_nibbles_into, Tensor, TensorData};

#[cfg(target_arch = "x86_64")]
mod row_ends;
#[cfg(target_arch = "x86_64")]
use row_ends::RowEnds;
#[cfg(target_arch = "x86_64")]
mod planes;
#[cfg(target_arch = "x86_64")]
use planes::Planes;

/// Elsewhere than x86-64 no rows or planes are shuffled whole: their pads go through the table.
#[cfg(not(target_arch = "x86_64"))]
enum RowEnds {}

#[cfg(not(target_arch = "x86_64"))]
impl RowEnds {
    fn new(_: &AxisMap, _: Mode, _: usize, _: &[u8]) -> Option<RowEnds> {
        None
    }
    fn write(&self, _: &mut [MaybeUninit<u8>], _: &[u8], _: &Rows) {
        match *self {}
    }
}

#[cfg(not(target_arch = "x86_64"))]
enum Planes {}

#[cfg(not(target_arch = "x86_64"))]
impl Planes {
    fn new(_: &[AxisMap], _: Mode, _: usize, _: &[u8], _: PlaneChoice, _: Option<&RowEnds>) -> Option<Planes> {
        None
    }
    fn axis(&self) -> usize {
        match *self {}
    }
    fn write(&self, _: &mut [MaybeUninit<u8>], _: &[u8]) {
        match *self {}
    }
}

/// Outputs at least this large are split across threads (under Miri, small ones too, so
/// that tests small enough for it reach the threaded code).
const PARALLEL_MIN_BYTES: usize = if cfg!(miri) { 4096 } else { 4 << 20 };

/// Innermost rows whose pads hold at most this many bytes have them written byte by byte
/// from a table (see `Walk::row_pads`) rather than by a library copy or fill per run.
const ROW_PAD_BYTES: usize = 64;

/// The most threads one pad uses, whatever is asked.
pub const MAX_THREADS: usize = 64;

/// Pads `input` on the CPU, allocating the output.
///
/// Allocations are fallible: a host that refuses one gives [`PadError::OutOfMemory`]. For
/// strings the output's contents count against the plan's
/// [`max_output_bytes`](PadPlan::max_output_bytes) as they are copied.
///
/// ```
/// use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};
/// let x = Tensor::from_slice(DataType::Int32, vec![3], &[1i32, 2, 3]).unwrap();
/// let plan = PadPlan::new(x.dtype(), x.shape(), &PadRequest::new(vec![2, 2]).mode(Mode::Reflect)).unwrap();
/// let y = cpu::pad(&plan, &x).unwrap();
/// assert_eq!(y.as_slice::<i32>().unwrap(), &[3, 2, 1, 2, 3, 2, 1]);
/// ```
pub fn pad(plan: &PadPlan, input: &Tensor) -> Result<Tensor> {
    pad_with(plan, input, None)
}

/// [`pad`], writing a large output into memory kept by `arena` where a buffer there fits
/// (given back with [`OutputArena::recycle`]): a repeated pad then costs what padding into
/// a preallocated output does.
pub fn pad_in(plan: &PadPlan, input: &Tensor, arena: &OutputArena) -> Result<Tensor> {
    pad_with(plan, input, Some(arena))
}

pub(crate) fn pad_with(plan: &PadPlan, input: &Tensor, arena: Option<&OutputArena>) -> Result<Tensor> {
    plan.check_input(input)?;
    let out_len = plan.out_len();
    match input.data() {
        TensorData::Strings(strings) => {
            let mut out = try_filled(out_len, String::new(), "the output strings")?;
            if out_len > 0 {
                let constant = match plan.constant() {
                    Constant::String(s) => s.as_str(),
                    Constant::Bytes(_) => "",
                };
                let held = out_len as u64 * std::mem::size_of::<String>() as u64;
                let budget = plan.max_output_bytes().saturating_sub(held);
                let f = plan.folded(true);
                let mut store = StringStore::new(strings, &mut out, f.chunk, constant, budget);
                // A string copy per pad string either way; the table as for one-byte elements.
                Walk::new(&f.axes, plan.mode(), f.chunk, ROW_PAD_BYTES).fill_axis(&mut store, 0, 0, 0);
                match store.error {
                    // Said here, where the limit and the headers' share are known.
                    Some(PadError::TooLarge { .. }) => {
                        return Err(PadError::TooLarge {
                            what: format!(
                                "the output's {out_len} strings hold more than max_output_bytes ({} bytes): \
                                 {held} bytes of String values and over {budget} bytes of text",
                                plan.max_output_bytes()
                            ),
                        })
                    }
                    Some(e) => return Err(e),
                    None => {}
                }
            }
            Tensor::from_strings(plan.out_shape().to_vec(), out)
        }
        TensorData::Bytes(bytes) => {
            let out_bytes = plan.dtype().storage_bytes(out_len as u64).unwrap_or(0) as usize;
            // Not zero-filled first: the pad writes every byte (see `ByteStore`).
            let mut out = output_bytes(out_bytes, "the output", arena)?;
            pad_bytes(plan, bytes, &mut out.spare_capacity_mut()[..out_bytes])?;
            // SAFETY: `pad_bytes` returned Ok, so it wrote all `out_bytes` bytes: every chunk
            // of the output is a kept chunk (copy_in), a constant (fill), a copy of chunks
            // already written (extend_axis) or, for an innermost row's pads from the table,
            // an input chunk (pad_row: the table lists every pad position); a plane written
            // whole (write_plane) is its windows' stores, which cover it, the last moved back
            // to end at its end;
            // and 4-bit outputs are packed byte by byte.
            unsafe { out.set_len(out_bytes) };
            Tensor::from_bytes(plan.dtype(), plan.out_shape().to_vec(), out)
        }
    }
}

/// Pads the bytes of a fixed-width or 4-bit tensor into a preallocated output of exactly
/// the output's byte size. Strings use [`pad`].
pub fn pad_into(plan: &PadPlan, input: &[u8], output: &mut [u8]) -> Result<()> {
    let (in_bytes, out_bytes) = plan.byte_sizes().ok_or_else(|| PadError::Unsupported {
        dtype: plan.dtype().name(),
        reason: "strings have no byte layout; use cpu::pad".into(),
    })?;
    if input.len() as u64 != in_bytes || output.len() as u64 != out_bytes {
        return Err(PadError::InvalidTensor {
            dtype: plan.dtype().name(),
            shape: plan.in_shape().iter().map(|&d| d as u64).collect(),
            reason: format!(
                "input of {} bytes and output of {} bytes given, the plan needs {in_bytes} and {out_bytes}",
                input.len(),
                output.len()
            ),
        });
    }
    pad_bytes(plan, input, as_uninit(output))
}

/// An initialised slice seen as one that may be written without reading.
fn as_uninit(bytes: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: same layout; the pad only ever writes initialised bytes through it, so the
    // slice stays initialised for its owner.
    unsafe { &mut *(bytes as *mut [u8] as *mut [MaybeUninit<u8>]) }
}

/// Pads into `output`, writing every one of its bytes (it may start uninitialised).
fn pad_bytes(plan: &PadPlan, input: &[u8], output: &mut [MaybeUninit<u8>]) -> Result<()> {
    if plan.out_len() == 0 {
        return Ok(());
    }
    let constant = match plan.constant() {
        Constant::Bytes(b) => b.as_slice(),
        Constant::String(_) => &[],
    };
    if plan.dtype().width() == ElementWidth::Bits4 {
        let mut unpacked_in = try_filled(plan.in_len(), 0u8, "the unpacked 4-bit input")?;
        unpack_nibbles_into(input, &mut unpacked_in);
        let mut unpacked_out = try_filled(plan.out_len(), 0u8, "the unpacked 4-bit output")?;
        let unpacked_constant = [constant[0] & 0x0f];
        pad_fixed(plan, 1, &unpacked_in, as_uninit(&mut unpacked_out), &unpacked_constant, PlaneChoice::WhereCheaper);
        // Two elements per byte, low nibble first; every byte of `output` is written.
        for (o, pair) in output.iter_mut().zip(unpacked_out.chunks(2)) {
            o.write((pair[0] & 0x0f) | (pair.get(1).copied().unwrap_or(0) << 4));
        }
    } else {
        let width = plan.dtype().width().bytes().unwrap_or(1);
        pad_fixed(plan, width, input, output, constant, PlaneChoice::WhereCheaper);
    }
    Ok(())
}

/// Whether small planes are written whole (`planes`) where the CPU can.
#[derive(Debug, Clone, Copy, PartialEq)]
enum PlaneChoice {
    /// Where that is estimated to be cheaper than row by row, working out how included.
    WhereCheaper,
    /// Wherever a plane can be (tests).
    #[cfg(test)]
    Always,
    /// Never (tests).
    #[cfg(test)]
    Never,
}

/// Fixed-width elements of `width` bytes: the folded plan's chunks become byte runs.
fn pad_fixed(
    plan: &PadPlan,
    width: usize,
    input: &[u8],
    output: &mut [MaybeUninit<u8>],
    constant: &[u8],
    planes: PlaneChoice,
) {
    let f = plan.folded(true);
    let chunk_bytes = f.chunk * width;
    let pattern: Vec<u8> = constant.iter().copied().cycle().take(chunk_bytes).collect();
    let walk = Walk::new(&f.axes, plan.mode(), chunk_bytes, ROW_PAD_BYTES);
    let row_ends = f.axes.last().and_then(|row| RowEnds::new(row, plan.mode(), chunk_bytes, &pattern));
    let planes = match planes {
        #[cfg(test)]
        PlaneChoice::Never => None,
        choice => Planes::new(&f.axes, plan.mode(), chunk_bytes, &pattern, choice, row_ends.as_ref()),
    };
    let threads = threads();
    let top = f.axes[0];
    let parallel = threads > 1 && f.axes.len() > 1 && output.len() >= PARALLEL_MIN_BYTES && top.kept >= threads;
    let store = ByteStore {
        input,
        out: output,
        chunk: chunk_bytes,
        pattern: &pattern,
        row_ends: row_ends.as_ref(),
        planes: planes.as_ref(),
    };
    if parallel {
        pad_fixed_parallel(&walk, store, threads);
    } else {
        walk.fill_axis(&mut { store }, 0, 0, 0);
    }
}

/// 0: not set from the API.
static MAX_THREADS_SET: AtomicUsize = AtomicUsize::new(0);

/// Sets how many threads a large CPU pad may use, for the whole process (overriding
/// `WGPU_PAD_CPU_THREADS`); clamped to `1..=`[`MAX_THREADS`]. 1 pads on the calling thread.
pub fn set_max_threads(threads: usize) {
    MAX_THREADS_SET.store(threads.clamp(1, MAX_THREADS), Ordering::Relaxed);
}

/// Threads for large outputs: [`set_max_threads`], else `WGPU_PAD_CPU_THREADS`, else the
/// machine's parallelism; at most [`MAX_THREADS`].
pub fn threads() -> usize {
    static FROM_ENV: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    match MAX_THREADS_SET.load(Ordering::Relaxed) {
        0 => *FROM_ENV.get_or_init(|| {
            let asked = std::env::var("WGPU_PAD_CPU_THREADS").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0);
            asked.unwrap_or_else(|| thread::available_parallelism().map_or(1, |n| n.get())).clamp(1, MAX_THREADS)
        }),
        n => n,
    }
}

/// Splits the outermost axis's kept blocks into parts that the calling thread and up to
/// `threads - 1` helpers take in turn; a helper the system refuses leaves its share to the
/// others.
fn pad_fixed_parallel(walk: &Walk, store: ByteStore, threads: usize) {
    let ByteStore { input, out: output, chunk, pattern, row_ends, planes } = store;
    let top = walk.axes[0];
    let block = walk.out_strides[0] * chunk;
    let (_, kept_region) = output.split_at_mut(top.pad_before * block);
    let (kept_region, _) = kept_region.split_at_mut(top.kept * block);
    let per_part = top.kept.div_ceil(threads);
    let parts = kept_region.chunks_mut(per_part * block).enumerate().map(|(i, part)| (i * per_part, part)).collect();
    share_out(parts, threads, |(first, part)| {
        let mut store = ByteStore { input, out: part, chunk, pattern, row_ends, planes };
        for j in 0..store.out.len() / block {
            let in_base = (top.crop_start + first + j) * walk.in_strides[0];
            walk.fill_axis(&mut store, 1, j * walk.out_strides[0], in_base);
        }
    });
    let mut store = ByteStore { input, out: output, chunk, pattern, row_ends, planes };
    walk.extend(&mut store, 0, 0);
}

/// A new vector holding `src` (a GPU readback): allocated without zero-filling, on huge
/// pages where large, and copied by up to [`threads`] threads from 4 MiB, since faulting in
/// its fresh pages costs about as much as the copy and spreads across cores.
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

/// Runs `work` on every one of `parts`, which the calling thread and up to `threads - 1`
/// helpers take in turn; a helper the system refuses leaves its share to the others.
fn share_out<P: Send>(parts: Vec<P>, threads: usize, work: impl Fn(P) + Sync) {
    let parts = std::sync::Mutex::new(parts);
    // `let ... else`, not `while let`: the lock is released before the work.
    let run = || loop {
        let Some(part) = parts.lock().unwrap_or_else(|e| e.into_inner()).pop() else { break };
        work(part);
    };
    thread::scope(|scope| {
        for helper in 1..threads {
            if let Err(e) = spawn_helper(scope, run) {
                log::debug!("CPU: helper thread {helper} refused ({e}); going on with {helper} threads");
                break;
            }
        }
        run();
    });
}

/// Copies made in pieces of this many bytes when their distance is one `rep movsb` is slow at.
const PIECE_BYTES: usize = 2048;

/// Copies of these sizes go through a vector loop where the CPU has AVX2 (`copy_raw`): from
/// glibc 2.36's `rep movsb` threshold on AVX2 machines up to 1 MiB, where the loop measured as
/// fast as glibc at good distances; larger copies stay glibc's.
#[cfg(target_arch = "x86_64")]
const VECTOR_COPY_BYTES: std::ops::RangeInclusive<usize> = 2113..=1 << 20;

/// `to = from` (the same length; disjoint, as borrows are): short copies inline, others by
/// [`copy_raw`].
fn copy_bytes(to: &mut [MaybeUninit<u8>], from: &[MaybeUninit<u8>]) {
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
/// and memcpy's call and size dispatch cost more than the copy: f32 [32,256,7,7] padded by 1
/// copies rows of 36 bytes.
#[inline(always)]
fn copy_short<const N: usize>(to: &mut [MaybeUninit<u8>], from: &[MaybeUninit<u8>]) -> bool {
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
/// land on such distances now and then (a few of the 1024 rows of u8 [1,1024,1024,3] padded
/// by 2, depending on where the buffers start), and every block of a pad can (when the pads
/// add a multiple of 4 KiB per block). And at good distances, such rows (3 KiB) copied one
/// by one took 1.2 times a plain 32-byte vector loop. So copies of those sizes go through
/// [`copy_avx2`] where the CPU has AVX2 (AMD's CPUs that flag FSRM, Zen 3 on, all have it);
/// elsewhere, at the slow distances (up to 63, for a margin), in 2 KiB pieces, which glibc
/// copies with its own vector loop.
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

/// Copies `n` bytes from `src` to `dst` with 32-byte unaligned loads and stores, four at a
/// time, the last 32 bytes (overlapping what went before, if `n` is not a multiple of 32) by
/// themselves.
///
/// # Safety
/// The CPU has AVX2; `n >= 32`; `src` is valid for `n` bytes of reads and `dst` for `n`
/// bytes of writes, and the two do not overlap.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn copy_avx2(dst: *mut u8, src: *const u8, n: usize) {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256 as load, _mm256_storeu_si256 as store};
    debug_assert!(n >= 32);
    let (d, s) = (dst.cast::<__m256i>(), src.cast::<__m256i>());
    // SAFETY (every load and store): offsets below `n - 31`, so within the caller's `n`
    // bytes; unaligned loads and stores need no alignment.
    let mut i = 0;
    while i + 128 <= n {
        let v = [load(s.byte_add(i)), load(s.byte_add(i + 32)), load(s.byte_add(i + 64)), load(s.byte_add(i + 96))];
        for (k, v) in v.into_iter().enumerate() {
            store(d.byte_add(i + 32 * k), v);
        }
        i += 128;
    }
    while i + 32 <= n {
        store(d.byte_add(i), load(s.byte_add(i)));
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
fn uninit_ref(bytes: &[u8]) -> &[MaybeUninit<u8>] {
    // SAFETY: same layout; a shared slice is never written through.
    unsafe { &*(bytes as *const [u8] as *const [MaybeUninit<u8>]) }
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

#[cfg(test)]
static REFUSE_HELPERS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn spawn_helper<'scope, F: FnOnce() + Send + 'scope>(
    scope: &'scope thread::Scope<'scope, '_>,
    f: F,
) -> std::io::Result<()> {
    // Tests stand in for a system that refuses threads (a process limit).
    #[cfg(test)]
    if REFUSE_HELPERS.load(Ordering::Relaxed) {
        return Err(std::io::Error::new(std::io::ErrorKind::WouldBlock, "refused by the test"));
    }
    thread::Builder::new().name("wgpu-pad-cpu".into()).spawn_scoped(scope, f).map(drop)
}

/// The fixed context of one pad's recursion: the folded axes, their strides in chunks
/// (outermost first), and the mode.
struct Walk<'a> {
    axes: &'a [AxisMap],
    out_strides: Vec<usize>,
    in_strides: Vec<usize>,
    mode: Mode,
    /// Per axis, the steps that fill its pads, worked out once and replayed for every block
    /// (the mode's index arithmetic would otherwise run again for every row); `None` where
    /// they are too many to keep (a mirror of many blocks on an outer axis: a copy per block),
    /// which are worked out block by block.
    pad_steps: Vec<Option<Vec<PadStep>>>,
    /// The innermost axis's pads unit by unit (a unit: a byte, or a string), where they are
    /// few and copied (not constant): (output unit from the row's start, the input unit it
    /// copies from the input row's start). A row padded by a pixel or two then costs a few
    /// byte moves, not a library call per run and a mirror's reversal.
    row_pads: Option<Vec<(usize, usize)>>,
}

impl<'a> Walk<'a> {
    /// `unit`: units per chunk; `max_row_pads`: the most pad units per innermost row written
    /// from a table (0 for none).
    fn new(axes: &'a [AxisMap], mode: Mode, unit: usize, max_row_pads: usize) -> Walk<'a> {
        let mut out_strides = vec![1; axes.len()];
        let mut in_strides = vec![1; axes.len()];
        for d in (0..axes.len().saturating_sub(1)).rev() {
            out_strides[d] = out_strides[d + 1] * axes[d + 1].out_len;
            in_strides[d] = in_strides[d + 1] * axes[d + 1].in_len;
        }
        let pad_steps = axes
            .iter()
            .zip(&out_strides)
            .map(|(a, &block)| {
                let mut recorder = Recorder { steps: Vec::new(), overflow: false };
                extend_axis(&mut recorder, a, block, 0, mode);
                (!recorder.overflow).then_some(recorder.steps)
            })
            .collect();
        // Constant pads are runs a fill writes at once (measured slower byte by byte).
        let few = |a: &&AxisMap| {
            mode != Mode::Constant && (1..=max_row_pads).contains(&((a.pad_before + a.pad_after) * unit))
        };
        let row_pads = axes.last().filter(few).map(|a| {
            let pads = (0..a.pad_before).chain(a.pad_before + a.kept..a.out_len);
            let chunks = pads.map(|o| {
                let k = a.source(mode, o);
                (o, k.expect("a source: the plan refuses other modes than constant on emptied axes"))
            });
            chunks.flat_map(|(o, k)| (0..unit).map(move |b| (o * unit + b, k * unit + b))).collect()
        });
        Walk { axes, out_strides, in_strides, mode, pad_steps, row_pads }
    }

    /// Fills the pads of `axis`'s block at `base` (its kept part written already).
    fn extend<S: Store>(&self, store: &mut S, axis: usize, base: usize) {
        match &self.pad_steps[axis] {
            Some(steps) => {
                for step in steps {
                    match *step {
                        PadStep::Copy { dst, src, len } => store.copy_out(base + dst, base + src, len),
                        PadStep::Fill { dst, len } => store.fill(base + dst, len),
                        PadStep::CopyReversed { dst, src, len } => store.copy_reversed(base + dst, base + src, len),
                        PadStep::Repeat { dst, src, count, block } => {
                            store.repeat(base + dst, base + src, count, block)
                        }
                    }
                }
            }
            None => extend_axis(store, &self.axes[axis], self.out_strides[axis], base, self.mode),
        }
    }

    /// Writes the block of `axis` at `out_base`: its kept sub-blocks, then its pads.
    fn fill_axis<S: Store>(&self, store: &mut S, axis: usize, out_base: usize, in_base: usize) {
        let a = self.axes[axis];
        let (out_stride, in_stride) = (self.out_strides[axis], self.in_strides[axis]);
        if store.write_plane(axis, out_base, in_base) {
            return;
        }
        if axis + 1 == self.axes.len() {
            let row = Rows { count: 1, out_first: out_base, out_stride: 0, in_first: in_base, in_stride: 0 };
            return self.fill_rows(store, &row);
        }
        let (out_first, in_first) = (out_base + a.pad_before * out_stride, in_base + a.crop_start * in_stride);
        if axis + 2 < self.axes.len() {
            for j in 0..a.kept {
                self.fill_axis(store, axis + 1, out_first + j * out_stride, in_first + j * in_stride);
            }
        } else {
            // Rows are written here rather than one recursion deeper: there are many, and short.
            self.fill_rows(store, &Rows { count: a.kept, out_first, out_stride, in_first, in_stride });
        }
        self.extend(store, axis, out_base);
    }

    /// Writes innermost rows: all at once where the store can, else one by one.
    fn fill_rows<S: Store>(&self, store: &mut S, rows: &Rows) {
        if !store.write_rows(rows) {
            for r in 0..rows.count {
                self.fill_row(store, rows.out_first + r * rows.out_stride, rows.in_first + r * rows.in_stride);
            }
        }
    }

    /// Writes the innermost row at `out_base`: its kept run, then its pads.
    #[inline]
    fn fill_row<S: Store>(&self, store: &mut S, out_base: usize, in_base: usize) {
        let a = self.axes[self.axes.len() - 1];
        store.copy_in(out_base + a.pad_before, in_base + a.crop_start, a.kept);
        match &self.row_pads {
            Some(pads) => store.pad_row(out_base, in_base, pads),
            None => self.extend(store, self.axes.len() - 1, out_base),
        }
    }
}

/// One step of filling an axis's pads, in chunks from its block's start.
#[derive(Debug, Clone, Copy)]
enum PadStep {
    Copy { dst: usize, src: usize, len: usize },
    Fill { dst: usize, len: usize },
    CopyReversed { dst: usize, src: usize, len: usize },
    Repeat { dst: usize, src: usize, count: usize, block: usize },
}

/// A store that records `extend_axis`'s steps instead of doing them, up to a bound.
struct Recorder {
    steps: Vec<PadStep>,
    overflow: bool,
}

impl Recorder {
    /// More steps than this per axis are not kept (long mirrors on outer axes).
    const MAX_STEPS: usize = 64;

    fn push(&mut self, step: PadStep) {
        match self.steps.len() < Self::MAX_STEPS {
            true => self.steps.push(step),
            false => self.overflow = true,
        }
    }
}

impl Store for Recorder {
    fn copy_in(&mut self, _: usize, _: usize, _: usize) {
        unreachable!("pads are filled from the output, never from the input");
    }
    fn pad_row(&mut self, _: usize, _: usize, _: &[(usize, usize)]) {
        unreachable!("axes' pads are recorded, not rows'");
    }
    fn write_rows(&mut self, _: &Rows) -> bool {
        unreachable!("axes' pads are recorded, not rows'");
    }
    fn copy_out(&mut self, dst: usize, src: usize, len: usize) {
        self.push(PadStep::Copy { dst, src, len });
    }
    fn fill(&mut self, dst: usize, len: usize) {
        if len > 0 {
            self.push(PadStep::Fill { dst, len });
        }
    }
    fn copy_reversed(&mut self, dst: usize, src: usize, len: usize) {
        self.push(PadStep::CopyReversed { dst, src, len });
    }
    fn repeat(&mut self, dst: usize, src: usize, count: usize, block: usize) {
        self.push(PadStep::Repeat { dst, src, count, block });
    }
}

/// Where the output goes and where the input comes from, in chunks.
trait Store {
    /// `out[dst..dst+len] = input[src..src+len]`
    fn copy_in(&mut self, dst: usize, src: usize, len: usize);
    /// `out[dst..dst+len] = out[src..src+len]`, ranges disjoint.
    fn copy_out(&mut self, dst: usize, src: usize, len: usize);
    /// `out[dst..dst+len] = constant`
    fn fill(&mut self, dst: usize, len: usize);
    /// `out[dst..dst+len] = out[src..src+len]` with the chunks in reverse order (a mirror),
    /// ranges disjoint.
    fn copy_reversed(&mut self, dst: usize, src: usize, len: usize);
    /// Fills `count` blocks of `block` chunks at `dst` with copies of the block at `src`
    /// (written already; the ranges disjoint).
    fn repeat(&mut self, dst: usize, src: usize, count: usize, block: usize);
    /// Writes the pads of the output row at chunk `out_base` from `Walk::row_pads`, unit by
    /// unit, from the input row at chunk `in_base`.
    fn pad_row(&mut self, out_base: usize, in_base: usize, pads: &[(usize, usize)]);
    /// Writes `rows` whole, pads included, if this store has a way to (true); else nothing.
    fn write_rows(&mut self, rows: &Rows) -> bool;
    /// Writes the block of `axis` at these bases (in chunks) whole, pads and all, where the
    /// store can: false where it cannot.
    fn write_plane(&mut self, _axis: usize, _out_base: usize, _in_base: usize) -> bool {
        false
    }
}

/// Innermost rows, in chunks: `count` of them, the first at output chunk `out_first` and
/// input chunk `in_first` (the rows' starts), each next one `out_stride` and `in_stride`
/// chunks on.
struct Rows {
    count: usize,
    out_first: usize,
    out_stride: usize,
    in_first: usize,
    in_stride: usize,
}

/// Fills axis `a`'s pads (blocks of `block` chunks) from its kept blocks, already written.
fn extend_axis<S: Store>(store: &mut S, a: &AxisMap, block: usize, base: usize, mode: Mode) {
    let kept_end = a.pad_before + a.kept;
    if mode == Mode::Constant || a.kept == 0 {
        store.fill(base, a.pad_before * block);
        store.fill(base + kept_end * block, a.pad_after * block);
        return;
    }
    for (start, end) in [(0, a.pad_before), (kept_end, kept_end + a.pad_after)] {
        if start == end {
            continue;
        }
        let before = start == 0;
        if mode == Mode::Edge || (mode == Mode::Reflect && a.kept == 1) {
            let src = if before { a.pad_before } else { kept_end - 1 };
            store.repeat(base + start * block, base + src * block, end - start, block);
            continue;
        }
        // Wrap's pads are the kept blocks repeated, a mirror's a period of 2n-2 (reflect) or
        // 2n (symmetric) blocks walked next to the kept blocks, then repeated.
        if mode == Mode::Wrap {
            repeat_period(store, block, base, (start, end), a.kept, a.pad_before, before);
            continue;
        }
        let period = if mode == Mode::Reflect { 2 * a.kept - 2 } else { 2 * a.kept };
        let walked = if before { (end.saturating_sub(period), end) } else { (start, end.min(start + period)) };
        walk_mirror(store, a, block, base, mode, walked.0, walked.1);
        let rest = if before { (start, walked.0) } else { (walked.1, end) };
        repeat_period(store, block, base, rest, period, walked.0, before);
    }
}

/// Fills blocks `lo..hi` from a period of `period` blocks written at `src`, outside them:
/// whole periods by one `repeat` (doubling copies, or a pattern where a period is a few
/// bytes), the part of a period at the far end from `src` by one copy. Before `src`
/// (`part_first`) the whole periods end at `hi`; after it they start at `lo`.
fn repeat_period<S: Store>(
    store: &mut S,
    block: usize,
    base: usize,
    (lo, hi): (usize, usize),
    period: usize,
    src: usize,
    part_first: bool,
) {
    let (periods, rest) = ((hi - lo) / period, (hi - lo) % period);
    let (whole, part, part_src) =
        if part_first { (lo + rest, lo, src + period - rest) } else { (lo, lo + periods * period, src) };
    if periods > 0 {
        store.repeat(base + whole * block, base + src * block, periods, period * block);
    }
    if rest > 0 {
        store.copy_out(base + part * block, base + part_src * block, rest * block);
    }
}

/// Writes blocks `start..end` of axis `a`'s mirrored pads (reflect or symmetric, kept ≥ 2 for
/// reflect) in runs: ascending runs are one copy; descending runs (mirrors) a reversed copy.
fn walk_mirror<S: Store>(store: &mut S, a: &AxisMap, block: usize, base: usize, mode: Mode, start: usize, end: usize) {
    let n = a.kept;
    let j = start as i64 - a.pad_before as i64;
    let mut k = crate::plan::source_index(mode, j, n as u64).unwrap_or(0) as usize;
    let next = crate::plan::source_index(mode, j + 1, n as u64).unwrap_or(0) as usize;
    // Symmetric repeats the top (n-1, n-1): the first of the two ends an ascending run.
    let mut ascending = next == k + 1 || (mode == Mode::Symmetric && next == k && k == n - 1);
    let mut o = start;
    let src = |k: usize| base + (a.pad_before + k) * block;
    while o < end {
        let dst = base + o * block;
        if ascending {
            let run = (n - k).min(end - o);
            store.copy_out(dst, src(k), run * block);
            o += run;
            // After the top: reflect turns at n-2, symmetric at n-1.
            match mode {
                _ if n == 1 => k = 0,
                Mode::Reflect => (k, ascending) = (n - 2, false),
                _ => (k, ascending) = (n - 1, false),
            }
        } else {
            let run = (k + 1).min(end - o);
            // Positions o.. take sources k, k-1, …, k-run+1.
            let low = k + 1 - run;
            if block == 1 {
                store.copy_reversed(dst, src(low), run);
            } else {
                for i in 0..run {
                    store.copy_out(dst + i * block, src(k - i), block);
                }
            }
            o += run;
            // After the bottom: reflect turns at 1, symmetric at 0.
            (k, ascending) = if mode == Mode::Reflect { (1, true) } else { (0, true) };
        }
    }
}

/// [`Store::repeat`] by copies doubling each time.
fn replicate<S: Store>(store: &mut S, dst: usize, src: usize, count: usize, block: usize) {
    if count == 0 {
        return;
    }
    store.copy_out(dst, src, block);
    let total = count * block;
    let mut done = block;
    while done < total {
        let n = done.min(total - done);
        store.copy_out(dst + done, dst, n);
        done += n;
    }
}

/// Fixed-width chunks as bytes. The output may start uninitialised (`cpu::pad` does not
/// zero-fill what it is about to overwrite): writes go through raw copies of initialised
/// bytes, and reads (`copy_out`, `copy_reversed`, `repeat`) touch only chunks already written, which the
/// walk guarantees (pads are filled from kept chunks after those are copied).
struct ByteStore<'a> {
    input: &'a [u8],
    out: &'a mut [MaybeUninit<u8>],
    /// Bytes per chunk.
    chunk: usize,
    /// The constant, repeated to one chunk.
    pattern: &'a [u8],
    /// Writes innermost rows whole, where their pads allow and the CPU can.
    row_ends: Option<&'a RowEnds>,
    /// Writes small planes whole, where that is cheaper and the CPU can.
    planes: Option<&'a Planes>,
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
struct StringStore<'a> {
    input: &'a [String],
    out: &'a mut [String],
    /// Elements per chunk.
    chunk: usize,
    constant: &'a str,
    budget: u64,
    /// The first failure; once set, nothing more is copied.
    error: Option<PadError>,
}

impl<'a> StringStore<'a> {
    fn new(input: &'a [String], out: &'a mut [String], chunk: usize, constant: &'a str, budget: u64) -> Self {
        StringStore { input, out, chunk, constant, budget, error: None }
    }
}

/// `dst[i] = src[i]`, charging `budget` for the bytes and allocating fallibly.
fn copy_strings<'s>(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataType, PadRequest};

    /// A large pad split across threads, each refused, still pads every byte (on the
    /// calling thread) instead of panicking.
    #[test]
    fn refused_threads_leave_the_work_to_the_caller() {
        let x = Tensor::from_bytes(DataType::Uint8, vec![64, 1 << 16], (0..64u32 << 16).map(|i| i as u8).collect())
            .unwrap();
        let request = PadRequest::new(vec![1, 3, 2, 5]).mode(Mode::Reflect);
        let plan = PadPlan::new(x.dtype(), x.shape(), &request).unwrap();
        let expected = crate::reference::pad(&plan, &x);
        let folded = plan.folded(true);
        let walk = Walk::new(&folded.axes, plan.mode(), 1, 0);
        let mut out = vec![0u8; plan.out_len()];
        let store = ByteStore {
            input: x.bytes().unwrap(),
            out: as_uninit(&mut out),
            chunk: folded.chunk,
            pattern: &[0],
            row_ends: None,
            planes: None,
        };
        REFUSE_HELPERS.store(true, Ordering::Relaxed);
        pad_fixed_parallel(&walk, store, 4);
        REFUSE_HELPERS.store(false, Ordering::Relaxed);
        assert_eq!(out, expected.bytes().unwrap());
    }

    /// GPU readbacks are copied out whole, split across threads or not, helpers refused or
    /// not, for sizes around the split and its page-sized parts.
    #[test]
    fn readbacks_are_copied_whole() {
        let split = PARALLEL_MIN_BYTES;
        let src: Vec<u8> = (0..2 * split + 4099).map(|i| (i % 251) as u8).collect();
        for len in [0, 1, 4095, split - 1, split, split + 4097, src.len()] {
            for refuse in [false, true] {
                REFUSE_HELPERS.store(refuse, Ordering::Relaxed);
                let copy = copy_to_new_vec(&src[..len], "a test", None).unwrap();
                REFUSE_HELPERS.store(false, Ordering::Relaxed);
                assert!(copy == src[..len], "{len} bytes, helpers refused: {refuse}");
            }
        }
    }

    /// Copies through the vector loop and in pieces (where `rep movsb` is slow) arrive whole
    /// and write nothing else, whatever the length (every tail of the vector loop, around
    /// each bound) and the distance.
    #[test]
    fn unlucky_distances_copy_whole() {
        type CopyFn = fn(&mut [MaybeUninit<u8>], &[MaybeUninit<u8>]);
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

    /// A pad whose every block is copied at a distance `rep movsb` is slow at (the input at
    /// an offset in a larger buffer, as engines' pooled tensors are) equals the reference.
    #[test]
    fn pads_at_unlucky_distances_are_whole() {
        let shape = [6usize, 5, 16, 16];
        for mode in Mode::ALL {
            let plan =
                PadPlan::new(DataType::Float32, &shape, &PadRequest::new(vec![0, 2, 0, 0, 0, 2, 0, 0]).mode(mode))
                    .unwrap();
            let (in_bytes, out_bytes) = plan.byte_sizes().unwrap();
            let buffer: Vec<u8> = (0..in_bytes as usize + 4096).map(|i| (i * 7 % 251) as u8).collect();
            let mut out = vec![0u8; out_bytes as usize];
            // Block i (5 KiB: two pieces and a part) is copied from in i * 5 KiB to out
            // (i * 9 + 2) KiB, 4 KiB further apart each block: all at the first one's distance, 8.
            let at = (out.as_ptr() as usize + 2048 - 8).wrapping_sub(buffer.as_ptr() as usize) % 4096;
            let input = &buffer[at..at + in_bytes as usize];
            pad_into(&plan, input, &mut out).unwrap();
            let x = Tensor::from_bytes(DataType::Float32, shape.to_vec(), input.to_vec()).unwrap();
            assert!(out == crate::reference::pad(&plan, &x).bytes().unwrap(), "{mode}");
        }
    }

    #[test]
    fn thread_counts_are_clamped() {
        set_max_threads(100_000);
        assert_eq!(threads(), MAX_THREADS);
        set_max_threads(0);
        assert_eq!(threads(), 1);
        MAX_THREADS_SET.store(0, Ordering::Relaxed);
        assert!((1..=MAX_THREADS).contains(&threads()));
    }

    /// `pad` does not zero its output first, so every byte must be written: pads whose
    /// output memory last held 0xAA junk (freed just before, so the allocator likely hands
    /// it back) still equal the reference, constant-0 regions included.
    #[test]
    fn outputs_on_reused_memory_are_fully_written() {
        for dtype in [DataType::Uint8, DataType::Float16, DataType::Float32, DataType::Complex128, DataType::Int4] {
            for mode in Mode::ALL {
                let shape = [3usize, 5, 7];
                let count: usize = shape.iter().product();
                let bytes = dtype.storage_bytes(count as u64).unwrap() as usize;
                let x = Tensor::from_bytes(dtype, shape.to_vec(), (0..bytes).map(|i| (i * 37 + 1) as u8).collect())
                    .unwrap();
                let request = PadRequest::new(vec![1, 0, 2, 2, 3, 1]).mode(mode);
                let plan = PadPlan::new(dtype, &shape, &request).unwrap();
                let out_bytes = plan.byte_sizes().unwrap().1 as usize;
                drop(std::hint::black_box(vec![0xAAu8; out_bytes]));
                let y = pad(&plan, &x).unwrap();
                assert!(y == crate::reference::pad(&plan, &x), "{dtype} {mode}");
            }
        }
    }

    /// String rows whose pads are too long for the row table (over 64 strings) are mirrored,
    /// repeated and copied string by string, and equal the reference.
    #[test]
    fn long_string_pads_equal_the_reference() {
        let strings = (0..14).map(|i| format!("s{i}")).collect();
        let x = Tensor::from_strings(vec![2, 7], strings).unwrap();
        for mode in Mode::ALL {
            let plan = PadPlan::new(x.dtype(), x.shape(), &PadRequest::new(vec![1, 70, 0, 75]).mode(mode)).unwrap();
            assert!(pad(&plan, &x).unwrap() == crate::reference::pad(&plan, &x), "{mode}");
        }
    }

    /// Pad steps are worked out once per axis and replayed per block; an axis that would take
    /// too many (a mirror's long descending run on an outer axis: a copy per block) is worked
    /// out block by block instead. Both agree with the reference.
    #[test]
    fn replayed_and_direct_pad_steps_agree() {
        for mode in Mode::ALL {
            // (shape, pads, the axis looked at, its steps replayed). The innermost pads: from
            // the row table (5 chunks of 2 bytes), from replayed steps (40 chunks: over the
            // table's 64 bytes) and 601 chunks, 100 periods and more, still a few steps: one
            // period written, the rest repeated. Then an outer axis of 100 blocks padded by 99.
            let mirror = matches!(mode, Mode::Reflect | Mode::Symmetric);
            let cases = [
                (vec![3, 2], vec![1i64, 2, 2, 3], 1, true),
                (vec![3, 2], vec![1, 20, 2, 20], 1, true),
                (vec![3, 2], vec![0, 300, 1, 301], 1, true),
                (vec![100, 2], vec![99, 1, 99, 1], 0, !mirror),
            ];
            for (shape, pads, axis, replayed) in cases {
                let n = shape.iter().product::<usize>() as u16;
                let x =
                    Tensor::from_bytes(DataType::Uint16, shape, (0..n).flat_map(u16::to_le_bytes).collect()).unwrap();
                let plan = PadPlan::new(x.dtype(), x.shape(), &PadRequest::new(pads.clone()).mode(mode)).unwrap();
                let folded = plan.folded(true);
                let walk = Walk::new(&folded.axes, plan.mode(), 1, 0);
                let steps = &walk.pad_steps[axis];
                assert_eq!(steps.is_some(), replayed, "{mode} {pads:?}");
                assert!(steps.iter().flatten().count() <= 8, "{mode} {pads:?}: {steps:?}");
                assert!(pad(&plan, &x).unwrap() == crate::reference::pad(&plan, &x), "{mode} {pads:?}");
            }
        }
    }
}
