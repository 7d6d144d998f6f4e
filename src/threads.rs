//! Threads for large outputs: how many a pad may use, and sharing the parts of one output
//! among them. A thread the system refuses leaves its share to the others.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// Outputs at least this large are split across threads (under Miri, small ones too, so
/// that tests small enough for it reach the threaded code).
pub(crate) const PARALLEL_MIN_BYTES: usize = if cfg!(miri) { 4096 } else { 4 << 20 };

/// The most threads one pad uses, whatever is asked.
pub const MAX_THREADS: usize = 64;

/// 0: not set from the API.
static MAX_THREADS_SET: AtomicUsize = AtomicUsize::new(0);

/// Sets how many threads a large CPU pad may use, for the whole process (overriding
/// `WGPU_PAD_CPU_THREADS`); clamped to `1..=`[`MAX_THREADS`]. 1 pads on the calling thread.
pub fn set_max_threads(threads: usize) {
    MAX_THREADS_SET.store(clamped(threads), Ordering::Relaxed);
}

fn clamped(threads: usize) -> usize {
    threads.clamp(1, MAX_THREADS)
}

/// The count `WGPU_PAD_CPU_THREADS` asks for (`text`), else the machine's (`available`).
fn from_env(text: Option<&str>, available: usize) -> usize {
    let asked = text.and_then(|v| v.trim().parse().ok()).filter(|&n| n > 0);
    clamped(asked.unwrap_or(available))
}

/// Threads for large outputs: [`set_max_threads`], else `WGPU_PAD_CPU_THREADS`, else the
/// machine's parallelism; at most [`MAX_THREADS`].
pub fn threads() -> usize {
    #[cfg(test)]
    if let Some(n) = THREADS_HERE.get() {
        return n;
    }
    static FROM_ENV: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    match MAX_THREADS_SET.load(Ordering::Relaxed) {
        0 => *FROM_ENV.get_or_init(|| {
            let available = thread::available_parallelism().map_or(1, |n| n.get());
            from_env(std::env::var("WGPU_PAD_CPU_THREADS").ok().as_deref(), available)
        }),
        n => n,
    }
}

/// Runs `work` on every one of `parts`, which the calling thread and up to `threads - 1`
/// helpers take in turn; a helper the system refuses leaves its share to the others.
pub(crate) fn share_out<P: Send>(parts: Vec<P>, threads: usize, work: impl Fn(P) + Sync) {
    #[cfg(test)]
    PARTS_SHARED.set(parts.len());
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

#[cfg(test)]
thread_local! {
    /// Tests fix the thread count on their own thread, whatever the machine and the
    /// process-wide setting other tests use.
    pub(crate) static THREADS_HERE: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// The parts the last `share_out` on this thread split its work into (tests assert the
    /// split happened).
    pub(crate) static PARTS_SHARED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests stand in for a system that refuses threads: per thread, so that one test's
    /// refusal never reaches another running beside it (helpers are spawned by the thread
    /// that shares the work out).
    pub(crate) static REFUSE_HELPERS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn spawn_helper<'scope, F: FnOnce() + Send + 'scope>(
    scope: &'scope thread::Scope<'scope, '_>,
    f: F,
) -> std::io::Result<()> {
    // Tests stand in for a system that refuses threads (a process limit).
    #[cfg(test)]
    if REFUSE_HELPERS.get() {
        return Err(std::io::Error::new(std::io::ErrorKind::WouldBlock, "refused by the test"));
    }
    thread::Builder::new().name("wgpu-pad-cpu".into()).spawn_scoped(scope, f).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts are clamped to 1..=MAX_THREADS, from the API or the environment (checked on
    /// the functions, not the process-wide setting, which tests running beside use).
    #[test]
    fn thread_counts_are_clamped() {
        assert_eq!((clamped(100_000), clamped(0), clamped(3)), (MAX_THREADS, 1, 3));
        assert_eq!(from_env(Some("5"), 2), 5);
        assert_eq!(from_env(Some(" 1000 "), 2), MAX_THREADS);
        for bad in [Some("0"), Some("-3"), Some("many"), Some(""), None] {
            assert_eq!(from_env(bad, 2), 2, "{bad:?}");
        }
        assert_eq!(from_env(None, 0), 1);
        assert!((1..=MAX_THREADS).contains(&threads()));
    }
}
