//! What an output path names, judged by what it is (never by its spelling), and the writes
//! into what is not replaced: one of this process's descriptors (through a duplicate), a
//! FIFO, device or socket (opened and written into).

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::signals::placed;

/// What an output path is, decided by what it names, never by how it is spelled.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Destination {
    /// One of this process's open descriptors (`-`, `/dev/stdout`, `/dev/fd/N`,
    /// `/proc/self/fd/N`, `/proc/thread-self/fd/N`, however spelled, and links to them):
    /// written through a duplicate, as a shell's redirection does (opening it anew would
    /// need permission on, say, a pipe another user made, and would not append for `>>`).
    Descriptor(i32),
    /// A FIFO, device or socket (or another process's descriptor): written into.
    Into(PathBuf),
    /// A regular file, or nothing yet: replaced atomically (links followed first).
    Replace(PathBuf),
}

/// Follows `target`'s links one at a time, as opening it would, stopping at one of this
/// process's descriptors; then asks what the path names.
pub(super) fn destination(target: &Path) -> Result<Destination, String> {
    if target.as_os_str() == "-" {
        return Ok(Destination::Descriptor(1));
    }
    let mut p = target.to_path_buf();
    for _ in 0..40 {
        match descriptor_entry(&p) {
            Some(DescriptorEntry::Ours(fd)) => return Ok(Destination::Descriptor(fd)),
            // Another process's descriptor: the kernel follows its magic link on open.
            Some(DescriptorEntry::Another) => return Ok(Destination::Into(p)),
            None => {}
        }
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p).map_err(|e| format!("{}: reading the link: {e}", target.display()))?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => {
                return match fs::metadata(&p) {
                    Ok(m) if m.is_dir() => Err(format!("{}: is a directory", target.display())),
                    Ok(m) if !m.is_file() => Ok(Destination::Into(p)),
                    _ => Ok(Destination::Replace(p)),
                };
            }
        }
    }
    Err(format!("{}: too many levels of symbolic links", target.display()))
}

/// An entry of a `/proc/PID/fd` directory (or `/proc/PID/task/TID/fd`): this process's
/// descriptor N, or another process's.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum DescriptorEntry {
    Ours(i32),
    Another,
}

/// Whether `p` is an entry of a descriptor directory, judged by the directory's canonical
/// path (so `/dev/fd/1`, `//dev/fd/1`, `/proc/self/fd/1` and `/proc/thread-self/fd/1` all
/// are; a file named `1` elsewhere is not).
pub(super) fn descriptor_entry(p: &Path) -> Option<DescriptorEntry> {
    let name = p.file_name()?.to_str()?;
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let fd: i32 = name.parse().ok()?;
    let dir = fs::canonicalize(p.parent()?).ok()?;
    let parts: Vec<&str> = dir.to_str()?.split('/').collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let pid = match parts[..] {
        ["", "proc", pid, "fd"] if digits(pid) => pid,
        ["", "proc", pid, "task", tid, "fd"] if digits(pid) && digits(tid) => pid,
        _ => return None,
    };
    Some(if pid == std::process::id().to_string() { DescriptorEntry::Ours(fd) } else { DescriptorEntry::Another })
}

/// Writes into this process's descriptor `fd` through a duplicate (appending where it was
/// opened to append, into a pipe or a terminal as it is). A descriptor that was closed
/// when the run started (`>&-`) is an error, as it is for `cat`: Rust's runtime reopens
/// standard streams on `/dev/null` before `main`, so that is recorded before it does.
#[cfg(unix)]
pub(super) fn write_to_descriptor(
    target: &Path,
    fd: i32,
    write: impl FnOnce(&mut dyn Write) -> Result<(), String>,
) -> Result<(), String> {
    use std::os::unix::io::FromRawFd;
    let shown = if target.as_os_str() == "-" { "standard output".to_string() } else { target.display().to_string() };
    if (0..3).contains(&fd) && closed_at_start::was_closed(fd) {
        return Err(format!("{shown}: writing: Bad file descriptor (it was closed when the run started)"));
    }
    // SAFETY: dup(2) on any number; a valid result is a new descriptor we own.
    let copy = unsafe { libc::dup(fd) };
    if copy < 0 {
        return Err(format!("{shown}: writing: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `copy` was just made and is owned by nothing else.
    let file = unsafe { File::from_raw_fd(copy) };
    let mut out = BufWriter::new(file);
    write(&mut out).map_err(|e| format!("{shown}: {e}"))?;
    out.flush().map_err(|e| format!("{shown}: writing: {e}"))?;
    placed();
    Ok(())
}

/// Which of descriptors 0, 1 and 2 were closed when the process started, read by a
/// constructor that runs before Rust's runtime reopens them on `/dev/null`.
#[cfg(unix)]
mod closed_at_start {
    use std::sync::atomic::{AtomicU8, Ordering};

    static CLOSED: AtomicU8 = AtomicU8::new(0);

    /// Runs from the ELF constructors, before `main` and before Rust's runtime starts.
    extern "C" fn record() {
        for fd in 0..3 {
            // SAFETY: fcntl(F_GETFD) only asks whether `fd` is open.
            if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
                CLOSED.fetch_or(1 << fd, Ordering::Relaxed);
            }
        }
    }

    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    #[used]
    #[link_section = ".init_array"]
    static RECORD: extern "C" fn() = record;

    #[cfg(any(target_os = "macos", target_os = "ios"))]
    #[used]
    #[link_section = "__DATA,__mod_init_func"]
    static RECORD: extern "C" fn() = record;

    /// Whether `fd` (0, 1 or 2) was closed when the process started.
    pub fn was_closed(fd: i32) -> bool {
        CLOSED.load(Ordering::Relaxed) & (1 << fd) != 0
    }
}

/// A FIFO, device, socket or open file: written into (truncated, as `>` does), never
/// replaced, which would break it.
pub(super) fn write_into(
    target: &Path,
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<(), String>,
) -> Result<(), String> {
    let named = |e: std::io::Error| format!("{}: writing: {e}", target.display());
    let file = OpenOptions::new().write(true).truncate(true).open(path).map_err(named)?;
    let mut out = BufWriter::new(file);
    write(&mut out).map_err(|e| format!("{}: {e}", target.display()))?;
    out.flush().map_err(named)?;
    placed();
    Ok(())
}

/// Whether the user may write to the file at `path`: the check `cp` makes by opening it
/// (root may, as with `cp`; nobody may on a read-only filesystem).
#[cfg(unix)]
pub(super) fn may_write(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: `c` is a NUL-terminated path that outlives the call; faccessat only reads it.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

#[cfg(not(unix))]
pub(super) fn may_write(path: &Path) -> bool {
    fs::metadata(path).map_or(true, |m| !m.permissions().readonly())
}
