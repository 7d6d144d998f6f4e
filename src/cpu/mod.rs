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
//! The recursion (`walk`) is written once over a `Store` (`extend` declares it, `store`
//! implements it: output and input access), in units of `chunk` elements (the plan's unpadded
//! trailing axes), so one code path serves every byte width, the 4-bit types (unpacked to
//! bytes, padded, repacked) and strings; each mode's pads of one axis are `extend`'s. Copies are the crate's (`copy`), shared with the
//! GPU path's readbacks.

use std::mem::MaybeUninit;

use crate::constant::Constant;
use crate::dtype::ElementWidth;
use crate::error::{PadError, Result};
use crate::memory::OutputArena;
use crate::memory::{output_bytes, try_filled};
use crate::plan::PadPlan;
use crate::tensor::{unpack_nibbles_into, Tensor, TensorData};

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
    fn new(_: &crate::plan::AxisMap, _: crate::mode::Mode, _: usize, _: &[u8]) -> Option<RowEnds> {
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
    fn new(
        _: &[crate::plan::AxisMap],
        _: crate::mode::Mode,
        _: usize,
        _: &[u8],
        _: PlaneChoice,
        _: Option<&RowEnds>,
    ) -> Option<Planes> {
        None
    }
    fn axis(&self) -> usize {
        match *self {}
    }
    fn write(&self, _: &mut [MaybeUninit<u8>], _: &[u8]) {
        match *self {}
    }
}

mod backward;
mod extend;
pub(crate) mod float8;
mod interior;
mod store;
mod walk;

pub(crate) use backward::has_gradient;
pub use backward::{pad_backward, pad_backward_in};

pub use crate::threads::{set_max_threads, threads, MAX_THREADS};
use crate::threads::{share_out, PARALLEL_MIN_BYTES};
use extend::Rows;
use store::{ByteStore, StringStore};
use walk::Walk;

/// Innermost rows whose pads hold at most this many bytes have them written byte by byte
/// from a table (see `Walk::row_pads`) rather than by a library copy or fill per run.
const ROW_PAD_BYTES: usize = 64;

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
                let error = if plan.has_interior() {
                    interior::pad_strings(plan, strings, &mut out, constant, budget).err()
                } else {
                    let f = plan.folded(true);
                    let mut store = StringStore::new(strings, &mut out, f.chunk, constant, budget);
                    // A string copy per pad string either way; the table as for one-byte elements.
                    Walk::new(&f.axes, plan.mode(), f.chunk, ROW_PAD_BYTES).fill_axis(&mut store, 0, 0, 0);
                    store.error
                };
                match error {
                    // Said here, where the limit and the headers' share are known.
                    Some(PadError::TooLarge { .. }) => {
                        return Err(PadError::OutputLimit {
                            what: format!(
                                "the output's {out_len} strings need {held} bytes of String values and \
                                 over {budget} bytes of text"
                            ),
                            limit: plan.max_output_bytes(),
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
        pad_any_fixed(plan, 1, &unpacked_in, as_uninit(&mut unpacked_out), &unpacked_constant);
        // Two elements per byte, low nibble first; every byte of `output` is written.
        for (o, pair) in output.iter_mut().zip(unpacked_out.chunks(2)) {
            o.write((pair[0] & 0x0f) | (pair.get(1).copied().unwrap_or(0) << 4));
        }
    } else {
        let width = plan.dtype().width().bytes().unwrap_or(1);
        pad_any_fixed(plan, width, input, output, constant);
    }
    Ok(())
}

/// Elements of `width` bytes, by the interior walk where the plan has interior padding.
fn pad_any_fixed(plan: &PadPlan, width: usize, input: &[u8], output: &mut [MaybeUninit<u8>], constant: &[u8]) {
    match plan.has_interior() {
        true => interior::pad_fixed(plan, width, input, output, constant),
        false => pad_fixed(plan, width, input, output, constant, PlaneChoice::WhereCheaper),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threads::REFUSE_HELPERS;
    use crate::{DataType, Mode, PadRequest};

    /// Round four: outputs of PARALLEL_MIN_BYTES and more are split across threads on any
    /// machine (the count fixed on this thread), and smaller ones are not; bit for bit.
    #[test]
    fn large_outputs_are_split_across_threads() {
        use crate::threads::{PARTS_SHARED, THREADS_HERE};
        let rows = crate::threads::PARALLEL_MIN_BYTES / 4096 + 8;
        for (rows, split) in [(rows, true), (64, false)] {
            let x = Tensor::from_bytes(
                DataType::Uint8,
                vec![rows, 4096],
                (0..rows * 4096).map(|i| (i % 251) as u8).collect(),
            )
            .unwrap();
            let plan = PadPlan::new(x.dtype(), x.shape(), &PadRequest::new(vec![1, 2, 1, 2]).mode(Mode::Edge)).unwrap();
            THREADS_HERE.set(Some(4));
            PARTS_SHARED.set(0);
            let y = crate::cpu::pad(&plan, &x).unwrap();
            let parts = PARTS_SHARED.get();
            THREADS_HERE.set(None);
            assert_eq!(parts, if split { 4 } else { 0 }, "{rows} rows: {parts} parts");
            assert_eq!(y, crate::reference::pad(&plan, &x));
        }
    }

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
        REFUSE_HELPERS.set(true);
        pad_fixed_parallel(&walk, store, 4);
        REFUSE_HELPERS.set(false);
        assert_eq!(out, expected.bytes().unwrap());
    }

    /// A pad whose every block is copied at a distance `rep movsb` is slow at (the input at
    /// an offset in a larger buffer, as engines' pooled tensors are) equals the reference.
    #[test]
    fn pads_at_unlucky_distances_are_whole() {
        let shape = [6usize, 5, 16, 16];
        // Miri's sample: the copies are the same in every mode.
        for mode in Mode::ALL.into_iter().filter(|&m| !crate::MIRI_SAMPLE || m == Mode::Reflect) {
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

    /// `pad` does not zero its output first, so every byte must be written: pads whose
    /// output memory last held 0xAA junk (freed just before, so the allocator likely hands
    /// it back) still equal the reference, constant-0 regions included.
    #[test]
    fn outputs_on_reused_memory_are_fully_written() {
        for (d, dtype) in [DataType::Uint8, DataType::Float16, DataType::Float32, DataType::Complex128, DataType::Int4]
            .into_iter()
            .enumerate()
        {
            for (m, mode) in Mode::ALL.into_iter().enumerate() {
                if crate::MIRI_SAMPLE && (d + m) % 3 != 0 {
                    continue; // Miri's sample: every type and every mode, not every pair
                }
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
        // Miri's sample: a mirror and a repeat.
        for mode in Mode::ALL.into_iter().filter(|&m| !crate::MIRI_SAMPLE || matches!(m, Mode::Reflect | Mode::Wrap)) {
            let plan = PadPlan::new(x.dtype(), x.shape(), &PadRequest::new(vec![1, 70, 0, 75]).mode(mode)).unwrap();
            assert!(pad(&plan, &x).unwrap() == crate::reference::pad(&plan, &x), "{mode}");
        }
    }
}
