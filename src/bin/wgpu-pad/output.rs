//! Where the padded tensor goes, written so that no failure loses or clobbers data.
//!
//! - A regular file (or a path that does not exist yet) is replaced atomically: the data go
//!   to a new file in the same directory, created exclusively under an unpredictable name
//!   (never following a link planted there), fsynced, given the old file's permissions, and
//!   renamed over the target. A link at the target is replaced, not followed.
//! - Anything else that exists (a FIFO, `/dev/null`, a terminal) is written into directly,
//!   never replaced; `-` is standard output.
//! - The temporary file is removed on every error, and on SIGINT, SIGTERM and SIGHUP.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The temporary file being written, for the signal handler to remove.
static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The lock on [`PENDING`]; a panic while it was held leaves nothing half-done in it.
fn pending() -> std::sync::MutexGuard<'static, Option<PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs the handler that removes a pending temporary file when the run is interrupted,
/// then exits as the shell expects of an interrupted command.
pub fn remove_partial_output_on_signals() {
    let installed = ctrlc::set_handler(|| {
        // ctrlc runs this on its own thread, not in signal context, so it may wait for the lock;
        // it exits holding it, so no file is made or renamed into place after the removal.
        let mut pending = pending();
        if let Some(path) = pending.take() {
            let _ = fs::remove_file(path);
        }
        std::process::exit(130);
    });
    if let Err(e) = installed {
        log::warn!("cannot install the signal handler ({e}); an interrupted run may leave a temporary file");
    }
}

/// Writes what `write` produces to `target` (see the module docs for how).
pub fn write_output(target: &Path, write: impl FnOnce(&mut dyn Write) -> Result<(), String>) -> Result<(), String> {
    let named = |e: std::io::Error| format!("{}: {e}", target.display());
    if target.as_os_str() == "-" {
        let stdout = std::io::stdout();
        let mut out = BufWriter::new(stdout.lock());
        write(&mut out)?;
        return out.flush().map_err(|e| format!("standard output: {e}"));
    }
    match fs::metadata(target) {
        Ok(m) if m.is_dir() => Err(format!("{}: is a directory", target.display())),
        Ok(m) if !m.is_file() => {
            // A FIFO, device or socket: write into it; replacing it would break it.
            let file = OpenOptions::new().write(true).open(target).map_err(named)?;
            let mut out = BufWriter::new(file);
            write(&mut out)?;
            out.flush().map_err(named)
        }
        _ => replace(target, write),
    }
}

fn replace(target: &Path, write: impl FnOnce(&mut dyn Write) -> Result<(), String>) -> Result<(), String> {
    let named = |e: std::io::Error| format!("{}: {e}", target.display());
    let name = target.file_name().ok_or_else(|| format!("{}: not a file path", target.display()))?;
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // The old file's permissions, if the target is a file and not a link to one.
    let keep = fs::symlink_metadata(target).ok().filter(|m| m.is_file()).map(|m| m.permissions());
    let mut builder = tempfile::Builder::new();
    builder.prefix(".wgpu-pad-").suffix(".tmp");
    #[cfg(unix)]
    if keep.is_none() {
        // As a new file would be created: 0666 less the umask (tempfile's default is 0600).
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    // The file is created and registered under one hold of the lock: a signal handled in
    // between would find nothing to remove and leave the file behind.
    let tmp = {
        let mut pending = pending();
        let tmp =
            builder.tempfile_in(dir).map_err(|e| format!("{}: creating a file beside {name:?}: {e}", dir.display()))?;
        *pending = Some(tmp.path().to_path_buf());
        tmp
    };
    let result = (|| {
        let mut out = BufWriter::new(tmp.as_file());
        write(&mut out)?;
        out.flush().map_err(named)?;
        drop(out);
        tmp.as_file().sync_all().map_err(named)?;
        if let Some(permissions) = keep {
            tmp.as_file().set_permissions(permissions).map_err(named)?;
        }
        Ok(())
    })();
    // On error, dropping `tmp` removes the file. The rename and forgetting the name are one
    // step for the handler too: it removes the file before the rename or nothing after it.
    {
        let mut pending = pending();
        let result = result.and_then(|()| tmp.persist(target).map(drop).map_err(|e| named(e.error)));
        *pending = None;
        result?;
    }
    // The rename is durable once the directory is.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
