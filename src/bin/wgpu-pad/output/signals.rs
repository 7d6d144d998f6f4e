//! Signals: a run interrupted before its output is in place removes its temporary file and
//! exits 128 + the signal's number; once the output is in place it has succeeded, whatever
//! arrives. Signals the caller ignored stay ignored.

use std::fs;
use std::path::PathBuf;
use std::sync::Mutex;

/// The temporary file being written, for the signal handler to remove, and whether the
/// output is in place (then a signal no longer undoes anything: the run has succeeded).
static PENDING: Mutex<Pending> = Mutex::new(Pending { file: None, placed: false });

pub(super) struct Pending {
    pub(super) file: Option<PathBuf>,
    pub(super) placed: bool,
}

/// The lock on [`PENDING`]; a panic while it was held leaves nothing half-done in it.
pub(super) fn pending() -> std::sync::MutexGuard<'static, Pending> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a run interrupted by `signal` exits with: 0 once the output is in place (the work
/// is done; a script may rely on the file), else 128 + the signal's number, as a shell
/// reports a command the signal ended; a pending temporary file is removed first.
pub(super) fn interrupted(pending: &mut Pending, signal: i32) -> i32 {
    if let Some(path) = pending.file.take() {
        let _ = fs::remove_file(path);
    }
    if pending.placed {
        0
    } else {
        128 + signal
    }
}

/// What to do before a signal ends the run (clear the progress line).
static BEFORE_EXIT: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>> = std::sync::OnceLock::new();

/// Sets what runs before a signal ends the run (once; later calls are ignored).
pub fn before_interrupted_exit(f: Box<dyn Fn() + Send + Sync>) {
    let _ = BEFORE_EXIT.set(f);
}

/// Exits as [`interrupted`] says, holding the lock, so that no file is made or put in place
/// after the decision.
fn exit_interrupted(signal: i32) -> ! {
    let mut pending = pending();
    let code = interrupted(&mut pending, signal);
    if let Some(f) = BEFORE_EXIT.get() {
        f();
    }
    std::process::exit(code)
}

/// Marks the output as in place: from now on the run has succeeded, whatever arrives.
pub(super) fn placed() {
    pending().placed = true;
}

/// Handles SIGINT, SIGTERM and SIGHUP, each unless the caller ignored it (under `nohup`,
/// after `trap '' INT`: those stay ignored), on a thread of its own: a pending temporary file
/// is removed and the process exits as [`interrupted`] says.
#[cfg(unix)]
pub fn handle_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let ignored = |signal: i32| {
        // SAFETY: sigaction with no new action only reads the current one into `old`.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        unsafe { libc::sigaction(signal, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN }
    };
    let signals: Vec<i32> = [SIGINT, SIGTERM, SIGHUP].into_iter().filter(|&s| !ignored(s)).collect();
    match signal_hook::iterator::Signals::new(&signals) {
        Ok(mut signals) => {
            let spawned = std::thread::Builder::new().name("signals".into()).spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    exit_interrupted(signal);
                }
            });
            if let Err(e) = spawned {
                log::warn!("cannot start the signal thread ({e}); an interrupted run may leave a temporary file");
            }
        }
        Err(e) => log::warn!("cannot handle signals ({e}); an interrupted run may leave a temporary file"),
    }
}

/// Elsewhere: Ctrl-C and the termination events, as SIGINT.
#[cfg(not(unix))]
pub fn handle_signals() {
    if let Err(e) = ctrlc::set_handler(|| exit_interrupted(2)) {
        log::warn!("cannot install the signal handler ({e}); an interrupted run may leave a temporary file");
    }
}
