//! Host memory, all of its policy in one place: allocations that fail as errors, never
//! aborts (`try_*`); large outputs advised onto huge pages; where an output's bytes come
//! from ([`output_bytes`]: the caller's [`OutputArena`] when it holds a fitting buffer,
//! else a fresh allocation); and the bounded, size-classed lists of buffers kept for reuse
//! (`pool`), which the arena and `GpuContext`'s device-buffer pool share. Nothing is kept
//! process-wide: a pool is an object its owner passes.

mod arena;
pub(crate) mod pool;

pub use arena::{OutputArena, DEFAULT_OUTPUT_ARENA_BYTES};

use crate::error::{PadError, Result};

/// An empty vector with room for `len` bytes for an output about to be written in full: a
/// buffer of `arena`'s when one fits, else a new allocation (not zero-filled; on Linux
/// advised to use huge pages when large), or [`PadError::OutOfMemory`].
pub(crate) fn output_bytes(len: usize, what: &str, arena: Option<&OutputArena>) -> Result<Vec<u8>> {
    if let Some(bytes) = arena.and_then(|a| a.take(len)) {
        return Ok(bytes);
    }
    let bytes = try_with_capacity(len, what)?;
    advise_huge_pages(&bytes);
    Ok(bytes)
}

/// A zero-filled buffer of `len` items whose size comes from a request or a file: an
/// allocation the host refuses is an [`PadError::OutOfMemory`], never an abort.
pub(crate) fn try_filled<T: Clone>(len: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = try_with_capacity(len, what)?;
    v.resize(len, value);
    Ok(v)
}

/// `len` zero bytes, or [`PadError::OutOfMemory`]: for outputs that are about to be
/// overwritten. Allocated zeroed (calloc hands out fresh pages from the OS without writing
/// them, where `vec.resize(len, 0)` would write every byte once more) and, when large,
/// advised to use huge pages.
pub(crate) fn try_zeroed_bytes(len: usize, what: &str) -> Result<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(len).map_err(|_| too_large(len as u64))?;
    // SAFETY: `layout` has a non-zero size. A non-null result is `len` initialised (zero)
    // bytes from the global allocator with u8's layout, which is how `Vec<u8>` frees them.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(PadError::OutOfMemory { reason: format!("cannot allocate {len} bytes for {what}") });
    }
    // SAFETY: `ptr` is non-null, from the global allocator with u8's layout for `len`
    // bytes, all initialised (zeroed): a Vec<u8> of that capacity and length owns it.
    let v = unsafe { Vec::from_raw_parts(ptr, len, len) };
    advise_huge_pages(&v);
    Ok(v)
}

/// Asks Linux to back a large allocation with transparent huge pages (as numpy does): its
/// first touch then faults 2 MiB at a time instead of 4 KiB, which on a fresh output costs
/// more than the pad itself. Only advice (`MADV_HUGEPAGE` changes no data and may be
/// refused); call it before the memory is first written.
pub(crate) fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE: usize = 2 << 20;
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes < HUGE_PAGE {
            return;
        }
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096).max(1);
        let start = (v.as_ptr() as usize).next_multiple_of(page);
        let end = (v.as_ptr() as usize + bytes) / page * page;
        if end > start {
            // SAFETY: the range lies inside this vector's allocation and is page-aligned;
            // MADV_HUGEPAGE only sets a flag on those pages' mapping and never changes
            // their contents. A refusal (THP disabled, old kernel) is harmless.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// An empty vector with room for `len` items, or [`PadError::OutOfMemory`].
pub(crate) fn try_with_capacity<T>(len: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| PadError::OutOfMemory {
        reason: format!("cannot allocate {} bytes for {what}", (len as u128) * std::mem::size_of::<T>() as u128),
    })?;
    Ok(v)
}

pub(crate) fn too_large(n: u64) -> PadError {
    PadError::TooLarge { what: format!("{n} elements do not fit this machine's address space") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Large zeroed outputs come back zero and marked for huge pages: the kernel says the
    /// mapping is THP-eligible (which with THP in `madvise` mode needs our advice). Skips
    /// where THP is off.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_outputs_are_zero_and_advised_to_use_huge_pages() {
        let v = try_zeroed_bytes(64 << 20, "a test").unwrap();
        assert_eq!(v.len(), 64 << 20);
        assert!(v.iter().step_by(4093).all(|&b| b == 0));
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        if !thp.contains("[madvise]") && !thp.contains("[always]") {
            eprintln!("transparent huge pages are off here: nothing to check");
            return;
        }
        let at = v.as_ptr() as usize + (32 << 20);
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut eligible = None;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ').filter(|(r, _)| r.contains('-') && !r.ends_with(':')) {
                let (lo, hi) = range.split_once('-').unwrap();
                let (lo, hi) = (usize::from_str_radix(lo, 16).unwrap(), usize::from_str_radix(hi, 16).unwrap());
                inside = (lo..hi).contains(&at);
            } else if inside && line.starts_with("THPeligible:") {
                eligible = Some(line.trim_end().ends_with('1'));
            }
        }
        assert_eq!(eligible, Some(true), "the output's mapping is not eligible for huge pages");
        let small = try_zeroed_bytes(1000, "a test").unwrap();
        assert!(small.iter().all(|&b| b == 0));
        assert!(try_zeroed_bytes(0, "a test").unwrap().is_empty());
    }
}
