//! Host memory kept between large outputs, by an object the caller owns and passes.

use std::sync::Mutex;

use super::pool::{Bytes, Kept};
use crate::tensor::{Tensor, TensorData};

/// Bytes an [`OutputArena`] keeps unless told otherwise.
pub const DEFAULT_OUTPUT_ARENA_BYTES: u64 = 256 << 20;

/// Buffers smaller than this are left to the allocator, which keeps small ones itself
/// (glibc, for one, returns every block over 32 MiB to the system when it is freed, and
/// so a large output's fresh pages are faulted in again on every pad).
const KEPT_MIN_BYTES: usize = 16 << 20;

/// Output memory for repeated large pads, owned by the caller: tensors given back with
/// [`recycle`](Self::recycle) are kept (up to a limit, the oldest dropped first) and the
/// next output of a fitting size ([`cpu::pad_in`](crate::cpu::pad_in),
/// `GpuContext`'s readbacks) is written into one of them.
///
/// Why: the kernel zeroes every fresh page before its first write, which for a 64 MiB
/// output costs about as much as the pad. Memory already faulted in costs what padding into
/// a preallocated output does, as ONNX Runtime's session arena and rten's buffer pool give.
/// Nothing is kept unless given back, and everything kept goes with the arena.
///
/// ```
/// use wgpu_pad::{cpu, DataType, Mode, OutputArena, PadPlan, PadRequest, Tensor};
///
/// let arena = OutputArena::new(64 << 20);
/// let x = Tensor::zeros(DataType::Float32, vec![64, 1024, 64])?; // 16 MiB
/// let plan = PadPlan::new(x.dtype(), x.shape(), &PadRequest::new(vec![0, 1, 0, 0, 1, 0]).mode(Mode::Edge))?;
/// for _ in 0..3 {
///     let y = cpu::pad_in(&plan, &x, &arena)?;
///     // ... use y ...
///     arena.recycle(y); // its bytes are the next output's
/// }
/// assert!(arena.held_bytes() > 0);
/// drop(arena); // and the memory is the allocator's again
/// # Ok::<(), wgpu_pad::PadError>(())
/// ```
#[derive(Debug)]
pub struct OutputArena {
    kept: Mutex<Kept<Vec<u8>>>,
}

impl Bytes for Vec<u8> {
    fn bytes(&self) -> u64 {
        self.capacity() as u64
    }
}

impl Default for OutputArena {
    /// An arena of [`DEFAULT_OUTPUT_ARENA_BYTES`].
    fn default() -> Self {
        OutputArena::new(DEFAULT_OUTPUT_ARENA_BYTES)
    }
}

impl OutputArena {
    /// An empty arena that keeps at most `limit_bytes` (counted by capacity); 0 keeps nothing.
    pub fn new(limit_bytes: u64) -> OutputArena {
        OutputArena { kept: Mutex::new(Kept::new(limit_bytes)) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept<Vec<u8>>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `tensor`'s bytes back for a later output. Buffers under 16 MiB (which the
    /// allocator serves cheaply) and strings are simply dropped.
    pub fn recycle(&self, tensor: Tensor) {
        if let TensorData::Bytes(bytes) = tensor.into_data() {
            self.recycle_bytes(bytes);
        }
    }

    /// [`recycle`](Self::recycle) for a byte buffer (a tensor's data already taken out).
    pub fn recycle_bytes(&self, bytes: Vec<u8>) {
        if bytes.capacity() >= KEPT_MIN_BYTES {
            let put_out = self.lock().give(bytes);
            drop(put_out); // outside the lock
        }
    }

    /// Bytes kept now.
    pub fn held_bytes(&self) -> u64 {
        self.lock().held()
    }

    /// Caps the bytes kept, dropping the oldest buffers over it.
    pub fn set_limit(&self, limit_bytes: u64) {
        let put_out = self.lock().set_limit(limit_bytes);
        drop(put_out); // outside the lock
    }

    /// Drops every buffer kept.
    pub fn release(&self) {
        let kept = self.lock().clear();
        drop(kept); // outside the lock
    }

    /// An empty kept buffer with room for `len` bytes and at most a quarter more, if any.
    pub(crate) fn take(&self, len: usize) -> Option<Vec<u8>> {
        if len < KEPT_MIN_BYTES {
            return None;
        }
        take_fitting(&mut self.lock(), len)
    }
}

fn take_fitting(kept: &mut Kept<Vec<u8>>, len: usize) -> Option<Vec<u8>> {
    let mut bytes = kept.take(|b| b.capacity() >= len && b.capacity() - len <= len / 4)?;
    bytes.clear();
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept buffer comes back only where it fits (at most a quarter too big), cleared;
    /// the arena keeps within its limit, oldest out first, and nothing at limit 0.
    #[test]
    fn arenas_reuse_buffers_that_fit_within_their_limit() {
        let mut kept = Kept::<Vec<u8>>::new(100);
        let a = Vec::<u8>::with_capacity(40);
        let a_at = a.as_ptr();
        drop(kept.give(vec![7u8; 40]));
        drop(kept.give(a));
        assert_eq!(kept.held(), 80);
        assert!(take_fitting(&mut kept, 41).is_none(), "too small");
        assert!(take_fitting(&mut kept, 31).is_none(), "more than a quarter too big");
        let b = take_fitting(&mut kept, 32).unwrap();
        assert!(b.is_empty() && b.capacity() == 40 && b.as_ptr() == a_at, "the latest one that fits");
        assert_eq!(kept.held(), 40);
        drop(kept.give(Vec::with_capacity(50)));
        drop(kept.give(Vec::with_capacity(30)));
        assert_eq!(kept.held(), 80, "the 40 kept first went out");
        assert!(take_fitting(&mut kept, 39).is_none());
        drop(kept.give(Vec::with_capacity(101)));
        assert_eq!(kept.held(), 80, "larger than the limit: not kept");
        drop(kept.set_limit(35));
        assert_eq!((kept.held(), kept.len()), (30, 1));
        drop(kept.set_limit(0));
        drop(kept.give(Vec::with_capacity(10)));
        assert_eq!(kept.held(), 0);
        assert_eq!(kept.len(), 0);
    }

    /// Small buffers and strings are not kept; large ones are, until released.
    #[test]
    fn only_large_byte_buffers_are_kept() {
        let arena = OutputArena::new(64 << 20);
        arena.recycle_bytes(vec![0; 1 << 20]);
        arena.recycle(Tensor::from_strings(vec![1], vec!["s".into()]).unwrap());
        assert_eq!(arena.held_bytes(), 0);
        arena.recycle_bytes(Vec::with_capacity(KEPT_MIN_BYTES));
        assert_eq!(arena.held_bytes(), KEPT_MIN_BYTES as u64);
        assert!(arena.take(KEPT_MIN_BYTES - 1).is_none(), "under the size kept");
        assert!(arena.take(KEPT_MIN_BYTES).is_some());
        arena.recycle_bytes(Vec::with_capacity(KEPT_MIN_BYTES));
        arena.release();
        assert_eq!(arena.held_bytes(), 0);
    }
}
