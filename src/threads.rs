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

/// Runs `work` on every one of `parts`, which the calling thread and up to `threads - 1`
/// helpers take in turn; a helper the system refuses leaves its share to the others.
pub(crate) fn share_out<P: Send>(parts: Vec<P>, threads: usize, work: impl Fn(P) + Sync) {
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
pub(crate) static REFUSE_HELPERS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_are_clamped() {
        set_max_threads(100_000);
        assert_eq!(threads(), MAX_THREADS);
        set_max_threads(0);
        assert_eq!(threads(), 1);
        MAX_THREADS_SET.store(0, Ordering::Relaxed);
        assert!((1..=MAX_THREADS).contains(&threads()));
    }
}
