//! Where the padded tensor goes, written so that no failure loses or clobbers data.
//!
//! - A regular file (or a path that does not exist yet) is replaced atomically: the data go
//!   to a new file in the same directory, fsynced, given the old file's permissions, and
//!   renamed over the target. A file the user could not write to is refused (as `cp`
//!   refuses it) unless `--force`. A link at the target is followed, as a shell's
//!   redirection follows it: the link stays, and the file it names is replaced.
//! - On Linux that new file has no name while it is written (`O_TMPFILE`), so a run killed
//!   by anything, SIGKILL and the OOM killer included, leaves nothing behind; it is linked in
//!   only when complete. Elsewhere, and on filesystems without `O_TMPFILE`, it is created
//!   exclusively under an unpredictable name (never following a link planted there), removed
//!   on every error and on SIGINT, SIGTERM and SIGHUP.
//! - What a path is decides, never how it is spelled: a regular file anywhere (`/dev/shm`
//!   included) is replaced as above; a FIFO, device or socket is written into, never
//!   replaced; one of this process's descriptors (`-`, `/dev/stdout`, `/dev/fd/N`,
//!   `/proc/self/fd/N` in any spelling, or a link to one) is written through a duplicate of
//!   the descriptor, as a shell's redirection does (appending after `>>`). A standard
//!   stream closed when the run started (`>&-`) is an error, as it is for `cat`.

mod destination;
mod signals;

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use destination::write_to_descriptor;
use destination::{destination, may_write, write_into, Destination};
use signals::pending;
pub use signals::{before_interrupted_exit, handle_signals};

/// Writes what `write` produces to `target` (see the module docs for how). A regular file
/// the user could not write to is refused unless `force`.
pub fn write_output(
    target: &Path,
    force: bool,
    write: impl FnOnce(&mut dyn Write) -> Result<(), String>,
) -> Result<(), String> {
    match destination(target)? {
        #[cfg(unix)]
        Destination::Descriptor(fd) => write_to_descriptor(target, fd, write),
        #[cfg(not(unix))]
        Destination::Descriptor(_) => {
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            write(&mut out).map_err(|e| format!("standard output: {e}"))?;
            out.flush().map_err(|e| format!("standard output: writing: {e}"))?;
            placed();
            Ok(())
        }
        Destination::Into(path) => write_into(target, &path, write),
        Destination::Replace(path) => {
            if !force && path.is_file() && !may_write(&path) {
                return Err(format!(
                    "{}: not replaced: permission denied (you cannot write to it; --force replaces it anyway)",
                    target.display()
                ));
            }
            replace(&path, write).map_err(|e| name_the_target(e, target, &path))
        }
    }
}

/// Errors about the file a link names also say which path the user gave.
fn name_the_target(e: String, target: &Path, path: &Path) -> String {
    if target == path {
        e
    } else {
        format!("{e} (the file {} links to)", target.display())
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
    /// The old file's permissions, if the target is a file and not a link to one.
    keep: Option<fs::Permissions>,
}

impl<'a> Place<'a> {
    fn of(target: &'a Path) -> Result<Place<'a>, String> {
        target.file_name().ok_or_else(|| format!("{}: not a file path", target.display()))?;
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let keep = fs::symlink_metadata(target).ok().filter(|m| m.is_file()).map(|m| m.permissions());
        Ok(Place { target, dir, keep })
    }

    fn error(&self, e: std::io::Error) -> String {
        format!("{}: {e}", self.target.display())
    }

    fn writing(&self, e: std::io::Error) -> String {
        format!("{}: writing: {e}", self.target.display())
    }
}

/// Fills `file` through `write`, makes it durable and gives it the old file's permissions.
fn fill(file: &File, place: &Place, write: impl FnOnce(&mut dyn Write) -> Result<(), String>) -> Result<(), String> {
    let mut out = BufWriter::new(file);
    hold_for_tests();
    write(&mut out).map_err(|e| format!("{}: {e}", place.target.display()))?;
    out.flush().map_err(|e| place.writing(e))?;
    drop(out);
    file.sync_all().map_err(|e| place.writing(e))?;
    if let Some(permissions) = &place.keep {
        file.set_permissions(permissions.clone()).map_err(|e| place.error(e))?;
    }
    Ok(())
}

/// For the signal tests (debug builds only: a release binary has no such hook): where
/// `WGPU_PAD_TEST_HOLD` names a path that does not exist, a run about to write its output's
/// bytes (its new file open, nothing in place) creates it and waits until it is removed (at
/// most two minutes), so that a test can send a signal at a known point instead of racing the
/// write. An existing path is left alone and nothing waits.
fn hold_for_tests() {
    let Some(marker) = test_hook!("WGPU_PAD_TEST_HOLD") else { return };
    let marker = PathBuf::from(marker);
    if fs::OpenOptions::new().write(true).create_new(true).open(&marker).is_err() {
        return;
    }
    let started = std::time::Instant::now();
    while marker.exists() && started.elapsed() < std::time::Duration::from_secs(120) {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
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
        let tmp = builder.tempfile_in(place.dir).map_err(|e| {
            // tempfile's error keeps the OS's words only as a kind ("entity not found"); a
            // directory that is not there says it in the OS's own.
            let e = std::fs::metadata(place.dir).err().unwrap_or_else(|| os_error(e));
            format!("{}: writing: {e} (creating a file in {})", place.target.display(), place.dir.display())
        })?;
        pending.file = Some(tmp.path().to_path_buf());
        tmp
    };
    let result = fill(tmp.as_file(), place, write);
    // On error, dropping `tmp` removes the file. The rename and forgetting the name are one
    // step for the handler too: it removes the file before the rename or nothing after it.
    {
        let mut pending = pending();
        let result = result.and_then(|()| tmp.persist(place.target).map(drop).map_err(|e| place.error(e.error)));
        pending.file = None;
        result?;
        pending.placed = true;
    }
    sync_directory(place.dir);
    Ok(())
}

/// The operating system's error under `e` (tempfile wraps it in a message naming its
/// temporary file, a name the user never gave).
fn os_error(e: std::io::Error) -> std::io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    let kind = e.kind();
    match e.into_inner() {
        Some(inner) => match inner.source().and_then(|s| s.downcast_ref::<std::io::Error>()) {
            Some(os) => os.raw_os_error().map_or_else(|| std::io::Error::from(kind), std::io::Error::from_raw_os_error),
            None => std::io::Error::from(kind),
        },
        None => std::io::Error::from(kind),
    }
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
        // The tests' `WGPU_PAD_TEST_NAMED_FILE` (debug builds only) takes the named way, as a
        // filesystem without O_TMPFILE does, so that the tests reach it.
        if !Path::new("/proc/self/fd").is_dir() || test_hook!("WGPU_PAD_TEST_NAMED_FILE").is_some() {
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
            let mut pending = super::pending();
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
            pending.placed = true;
        }
        super::sync_directory(place.dir);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use signals::{interrupted, Pending};
    use std::sync::Mutex;

    /// The in-place mark is the process's: tests that write take turns, so that one's
    /// write does not set the mark another checks.
    fn serial() -> std::sync::MutexGuard<'static, ()> {
        static TURN: Mutex<()> = Mutex::new(());
        TURN.lock().unwrap_or_else(|e| e.into_inner())
    }

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

    /// An interruption before the output is in place exits 128 + the signal and removes the
    /// temporary file; after it, 0 (the run succeeded).
    #[test]
    fn interruptions_exit_by_whether_the_output_is_in_place() {
        let _turn = serial();
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join(".wgpu-pad-x.tmp");
        fs::write(&tmp, b"partial").unwrap();
        let mut before = Pending { file: Some(tmp.clone()), placed: false };
        assert_eq!(interrupted(&mut before, 15), 143);
        assert!(!tmp.exists(), "the temporary file was left");
        let mut after = Pending { file: None, placed: true };
        assert_eq!(interrupted(&mut after, 2), 0);
    }

    /// Every way of writing an output marks it in place once it is (so that a signal then
    /// exits 0), and a failed write does not.
    #[test]
    fn outputs_are_marked_in_place_once_they_are() {
        let _turn = serial();
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.npy");
        for (way, replace) in WAYS {
            pending().placed = false;
            assert!(replace(&target, None).is_err());
            assert!(!pending().placed, "{way}: marked after a failed write");
            replace(&target, Some(b"padded")).unwrap();
            assert!(pending().placed, "{way}: not marked once in place");
        }
        #[cfg(unix)]
        {
            pending().placed = false;
            write_output(Path::new("/dev/null"), false, writer(Some(b"padded"))).unwrap();
            assert!(pending().placed, "a device: not marked once written");
        }
    }

    /// Links are followed as redirection follows them: the link stays, the file it names is
    /// replaced (its permissions kept), a link to nothing creates what it names, relative
    /// links resolve from their own directory, and a loop is an error, not a hang.
    #[cfg(unix)]
    #[test]
    fn outputs_through_links_write_what_they_name() {
        let _turn = serial();
        use std::os::unix::fs::{symlink, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.npy");
        fs::write(&real, b"old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.npy");
        symlink("real.npy", &link).unwrap();
        write_output(&link, false, writer(Some(b"new"))).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
        assert_eq!(fs::read(&real).unwrap(), b"new");
        assert_eq!(fs::metadata(&real).unwrap().permissions().mode() & 0o7777, 0o640);

        let dangling = dir.path().join("dangling.npy");
        symlink(dir.path().join("made.npy"), &dangling).unwrap();
        write_output(&dangling, false, writer(Some(b"made"))).unwrap();
        assert_eq!(fs::read(dir.path().join("made.npy")).unwrap(), b"made");

        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        symlink(&b, &a).unwrap();
        symlink(&a, &b).unwrap();
        let e = write_output(&a, false, writer(Some(b"x"))).unwrap_err();
        assert!(e.contains("too many levels of symbolic links"), "{e}");
        assert_eq!(entries(dir.path()), ["a", "b", "dangling.npy", "link.npy", "made.npy", "real.npy"]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_filesystem_gives_unnamed_files() {
        let _turn = serial();
        // Else `replace` would take the named way and the tests below would test it twice.
        let dir = tempfile::tempdir().unwrap();
        assert!(unnamed::create_in(dir.path()).is_some(), "no O_TMPFILE in {}", dir.path().display());
        assert_eq!(entries(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn new_files_are_made_whole_with_a_new_files_permissions() {
        let _turn = serial();
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
        let _turn = serial();
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
        let _turn = serial();
        for (way, replace) in WAYS {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("out.npy");
            // The writer's error, after the output's path.
            let failed = Err(format!("{}: failed half way", target.display()));
            assert_eq!(replace(&target, None), failed, "{way}");
            assert_eq!(entries(dir.path()), Vec::<String>::new(), "{way}: nothing there before");
            fs::write(&target, b"old").unwrap();
            assert_eq!(replace(&target, None), failed, "{way}");
            assert_eq!(fs::read(&target).unwrap(), b"old", "{way}");
            assert_eq!(entries(dir.path()), ["out.npy"], "{way}");
        }
    }
}
