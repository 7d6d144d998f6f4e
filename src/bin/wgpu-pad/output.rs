//! Where the padded tensor goes, written so that no failure loses or clobbers data.
//!
//! - A regular file (or a path that does not exist yet) is replaced atomically: the data go
//!   to a new file in the same directory, fsynced, given the old file's permissions, and
//!   renamed over the target. A link at the target is replaced, not followed.
//! - On Linux that new file has no name while it is written (`O_TMPFILE`), so a run killed
//!   by anything, SIGKILL and the OOM killer included, leaves nothing behind; it is linked in
//!   only when complete. Elsewhere, and on filesystems without `O_TMPFILE`, it is created
//!   exclusively under an unpredictable name (never following a link planted there), removed
//!   on every error and on SIGINT, SIGTERM and SIGHUP.
//! - Anything else that exists (a FIFO, `/dev/null`, a terminal) is written into directly,
//!   never replaced; `-` is standard output.

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

/// Replaces the regular file (or nothing) at `target` with what `write` produces.
fn replace(target: &Path, write: impl FnOnce(&mut dyn Write) -> Result<(), String>) -> Result<(), String> {
    let place = Place::of(target)?;
    #[cfg(target_os = "linux")]
    if let Some(file) = unnamed::create_in(place.dir) {
        return unnamed::replace(file, &place, write);
    }
    replace_through_named_file(&place, write)
}

/// A file to replace: its path, its directory and name, and its permissions to keep.
struct Place<'a> {
    target: &'a Path,
    dir: &'a Path,
    name: &'a std::ffi::OsStr,
    /// The old file's permissions, if the target is a file and not a link to one.
    keep: Option<fs::Permissions>,
}

impl<'a> Place<'a> {
    fn of(target: &'a Path) -> Result<Place<'a>, String> {
        let name = target.file_name().ok_or_else(|| format!("{}: not a file path", target.display()))?;
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let keep = fs::symlink_metadata(target).ok().filter(|m| m.is_file()).map(|m| m.permissions());
        Ok(Place { target, dir, name, keep })
    }

    fn error(&self, e: std::io::Error) -> String {
        format!("{}: {e}", self.target.display())
    }
}

/// Fills `file` through `write`, makes it durable and gives it the old file's permissions.
fn fill(file: &File, place: &Place, write: impl FnOnce(&mut dyn Write) -> Result<(), String>) -> Result<(), String> {
    let mut out = BufWriter::new(file);
    write(&mut out)?;
    out.flush().map_err(|e| place.error(e))?;
    drop(out);
    file.sync_all().map_err(|e| place.error(e))?;
    if let Some(permissions) = &place.keep {
        file.set_permissions(permissions.clone()).map_err(|e| place.error(e))?;
    }
    Ok(())
}

/// The temporary files' names: `.wgpu-pad-` and random characters, `.tmp`.
fn temporary_names() -> tempfile::Builder<'static, 'static> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".wgpu-pad-").suffix(".tmp");
    builder
}

/// [`replace`] where no unnamed file can be made: a named temporary file, registered for the
/// signal handler to remove.
fn replace_through_named_file(
    place: &Place,
    write: impl FnOnce(&mut dyn Write) -> Result<(), String>,
) -> Result<(), String> {
    let mut builder = temporary_names();
    #[cfg(unix)]
    if place.keep.is_none() {
        // As a new file would be created: 0666 less the umask (tempfile's default is 0600).
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    // The file is created and registered under one hold of the lock: a signal handled in
    // between would find nothing to remove and leave the file behind.
    let tmp = {
        let mut pending = pending();
        let tmp = builder
            .tempfile_in(place.dir)
            .map_err(|e| format!("{}: creating a file beside {:?}: {e}", place.dir.display(), place.name))?;
        *pending = Some(tmp.path().to_path_buf());
        tmp
    };
    let result = fill(tmp.as_file(), place, write);
    // On error, dropping `tmp` removes the file. The rename and forgetting the name are one
    // step for the handler too: it removes the file before the rename or nothing after it.
    {
        let mut pending = pending();
        let result = result.and_then(|()| tmp.persist(place.target).map(drop).map_err(|e| place.error(e.error)));
        *pending = None;
        result?;
    }
    sync_directory(place.dir);
    Ok(())
}

/// The rename (or link) is durable once the directory is.
fn sync_directory(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Files written with no name (`O_TMPFILE`) and linked into place when complete.
#[cfg(target_os = "linux")]
mod unnamed {
    use std::ffi::CString;
    use std::fs::File;
    use std::io::{self, Write};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::{AsRawFd, FromRawFd};
    use std::path::Path;

    /// A new file with no name in `dir`, 0666 less the umask; `None` where the kernel or the
    /// filesystem has no `O_TMPFILE`, or where `/proc` (which links it in) is not mounted.
    pub(super) fn create_in(dir: &Path) -> Option<File> {
        if !Path::new("/proc/self/fd").is_dir() {
            return None;
        }
        let dir = CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: `dir` is a NUL-terminated path that outlives the call; open(2) with a mode
        // argument, as O_TMPFILE requires.
        let fd = unsafe { libc::open(dir.as_ptr(), libc::O_TMPFILE | libc::O_WRONLY | libc::O_CLOEXEC, 0o666) };
        if fd < 0 {
            // EOPNOTSUPP (the filesystem), EISDIR or EINVAL (a kernel before 3.11), or any
            // other refusal: the named path reports errors in its own words.
            log::debug!(
                "{}: no unnamed file ({}); writing a named one",
                dir.to_string_lossy(),
                io::Error::last_os_error()
            );
            return None;
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Some(unsafe { File::from_raw_fd(fd) })
    }

    /// Gives `file` the name `path`; fails with `AlreadyExists` if something has it.
    fn link(file: &File, path: &Path) -> io::Result<()> {
        // The kernel follows this link to the open file, not to a path.
        let from = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).expect("no NUL in a number");
        let to =
            CString::new(path.as_os_str().as_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: both paths are NUL-terminated and outlive the call.
        let linked = unsafe {
            libc::linkat(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW)
        };
        if linked == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// [`super::replace`] through `file`, an unnamed file in the target's directory.
    pub(super) fn replace(
        file: File,
        place: &super::Place,
        write: impl FnOnce(&mut dyn Write) -> Result<(), String>,
    ) -> Result<(), String> {
        let target = place.target;
        super::fill(&file, place, write)?;
        {
            // Held so that a signal handled now exits after the target is complete, not while
            // a temporary name exists.
            let _pending = super::pending();
            // Nothing there: one link makes the target (a link never replaces anything).
            let linked = match link(&file, target) {
                Ok(()) => true,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => false,
                Err(e) => return Err(place.error(e)),
            };
            if !linked {
                // Something there: a temporary name, renamed over it (a run killed between the
                // two leaves that name, holding the complete output).
                let tmp = super::temporary_names()
                    .make_in(place.dir, |path| link(&file, path))
                    .map_err(|e| format!("{}: naming the finished file beside it: {e}", target.display()))?;
                tmp.persist(target).map_err(|e| place.error(e.error))?;
            }
        }
        super::sync_directory(place.dir);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Replaces `target` with `bytes`, or fails in the middle of writing when `bytes` is None.
    type Way = fn(&Path, Option<&[u8]>) -> Result<(), String>;

    fn writer(bytes: Option<&[u8]>) -> impl FnOnce(&mut dyn Write) -> Result<(), String> + '_ {
        move |w: &mut dyn Write| match bytes {
            Some(b) => w.write_all(b).map_err(|e| e.to_string()),
            None => {
                w.write_all(b"half").map_err(|e| e.to_string())?;
                Err("failed half way".into())
            }
        }
    }

    fn through_replace(target: &Path, bytes: Option<&[u8]>) -> Result<(), String> {
        replace(target, writer(bytes))
    }

    fn through_named_file(target: &Path, bytes: Option<&[u8]>) -> Result<(), String> {
        replace_through_named_file(&Place::of(target)?, writer(bytes))
    }

    /// Every way a file is replaced: `replace` (an unnamed file on Linux) and the named file
    /// it falls back to.
    const WAYS: [(&str, Way); 2] = [("replace", through_replace), ("named file", through_named_file)];

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_filesystem_gives_unnamed_files() {
        // Else `replace` would take the named way and the tests below would test it twice.
        let dir = tempfile::tempdir().unwrap();
        assert!(unnamed::create_in(dir.path()).is_some(), "no O_TMPFILE in {}", dir.path().display());
        assert_eq!(entries(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn new_files_are_made_whole_with_a_new_files_permissions() {
        for (way, replace) in WAYS {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("out.npy");
            replace(&target, Some(b"padded")).unwrap();
            assert_eq!(fs::read(&target).unwrap(), b"padded", "{way}");
            let fresh = File::create(dir.path().join("fresh")).unwrap().metadata().unwrap().permissions();
            assert_eq!(fs::metadata(&target).unwrap().permissions(), fresh, "{way}");
            assert_eq!(entries(dir.path()), ["fresh", "out.npy"], "{way}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn old_files_are_replaced_keeping_their_permissions_and_links_are_not_followed() {
        use std::os::unix::fs::PermissionsExt;
        for (way, replace) in WAYS {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("out.npy");
            fs::write(&target, b"old contents").unwrap();
            fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
            replace(&target, Some(b"new")).unwrap();
            assert_eq!(fs::read(&target).unwrap(), b"new", "{way}");
            assert_eq!(fs::metadata(&target).unwrap().permissions().mode() & 0o7777, 0o640, "{way}");

            let victim = dir.path().join("victim");
            fs::write(&victim, b"keep me").unwrap();
            let link = dir.path().join("link.npy");
            std::os::unix::fs::symlink(&victim, &link).unwrap();
            replace(&link, Some(b"new")).unwrap();
            assert!(fs::symlink_metadata(&link).unwrap().is_file(), "{way}: the link was followed");
            assert_eq!(fs::read(&link).unwrap(), b"new", "{way}");
            assert_eq!(fs::read(&victim).unwrap(), b"keep me", "{way}");
            assert_eq!(entries(dir.path()), ["link.npy", "out.npy", "victim"], "{way}");
        }
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_nothing_else() {
        for (way, replace) in WAYS {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("out.npy");
            assert_eq!(replace(&target, None), Err("failed half way".into()), "{way}");
            assert_eq!(entries(dir.path()), Vec::<String>::new(), "{way}: nothing there before");
            fs::write(&target, b"old").unwrap();
            assert_eq!(replace(&target, None), Err("failed half way".into()), "{way}");
            assert_eq!(fs::read(&target).unwrap(), b"old", "{way}");
            assert_eq!(entries(dir.path()), ["out.npy"], "{way}");
        }
    }
}
