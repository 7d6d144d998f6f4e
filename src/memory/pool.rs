//! A bounded list of buffers kept for reuse, the oldest dropped first: `GpuContext`'s device
//! buffers and a caller's `OutputArena` are both one (nothing is kept process-wide).

/// Something kept for its bytes.
pub(crate) trait Bytes {
    /// Bytes it holds (counted against the limit).
    fn bytes(&self) -> u64;
}

/// Items kept for reuse, at most `limit` bytes in all.
#[derive(Debug)]
pub(crate) struct Kept<T> {
    free: Vec<T>,
    held: u64,
    limit: u64,
}

impl<T: Bytes> Kept<T> {
    pub(crate) const fn new(limit: u64) -> Kept<T> {
        Kept { free: Vec::new(), held: 0, limit }
    }

    /// The most recently kept item that `fits`, taken out.
    pub(crate) fn take(&mut self, fits: impl Fn(&T) -> bool) -> Option<T> {
        let i = self.free.iter().rposition(fits)?;
        let item = self.free.remove(i);
        self.held -= item.bytes();
        Some(item)
    }

    /// Keeps `item`, putting out the oldest kept ones to stay within the limit (or `item`
    /// itself, when larger than the limit). What is put out is returned, for the caller to
    /// drop outside any lock: freeing large memory or a device buffer is no work to hold a
    /// lock over.
    #[must_use = "what was put out is to be dropped outside the lock"]
    pub(crate) fn give(&mut self, item: T) -> Vec<T> {
        let size = item.bytes();
        if size > self.limit {
            return vec![item];
        }
        let out = self.keep_within(self.limit - size);
        self.held += size;
        self.free.push(item);
        out
    }

    /// Sets the limit; the oldest kept items over it are returned, as from [`Kept::give`].
    #[must_use = "what was put out is to be dropped outside the lock"]
    pub(crate) fn set_limit(&mut self, limit: u64) -> Vec<T> {
        self.limit = limit;
        self.keep_within(limit)
    }

    /// Takes out every kept item (for the caller to drop, outside any lock).
    #[must_use = "what was put out is to be dropped outside the lock"]
    pub(crate) fn clear(&mut self) -> Vec<T> {
        self.held = 0;
        std::mem::take(&mut self.free)
    }

    /// Bytes kept.
    pub(crate) fn held(&self) -> u64 {
        self.held
    }

    /// Items kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.free.len()
    }

    /// Takes out the oldest items until at most `bytes` are held.
    fn keep_within(&mut self, bytes: u64) -> Vec<T> {
        let mut n = 0;
        while self.held > bytes {
            self.held -= self.free[n].bytes();
            n += 1;
        }
        self.free.drain(..n).collect()
    }
}
