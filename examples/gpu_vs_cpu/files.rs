//! The harness's files, written as the command line writes its outputs: into a new file beside
//! the target, synced, then renamed over it (a full disk or a kill leaves the earlier report
//! whole); a link followed to what it names (a dangling one to its target, created there);
//! a FIFO or device written into; every error naming the file. Reports are read with a bound.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The most a report read takes (the largest report, `--suite all`, is well under a MiB).
pub const MAX_REPORT_BYTES: u64 = 64 << 20;

/// What a path names once its links are followed: the file to replace (which need not exist).
/// Links are followed one at a time, relative to the link's directory, at most 40 deep.
pub fn resolve(path: &Path) -> Result<PathBuf, String> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&at).map_err(|e| format!("{}: reading the link: {e}", path.display()))?;
                at = match at.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(format!("{}: too many levels of links", path.display()))
}

/// The directory a new file beside `target` goes in.
fn directory_of(target: &Path) -> &Path {
    match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Whether `target` exists and is something written into rather than replaced (a FIFO, a
/// device, a socket).
fn written_into(target: &Path) -> bool {
    std::fs::metadata(target).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Fails now, before anything is measured, if `path` could not be written: its directory
/// takes no new file, or the file there may not be written. Creates nothing that stays.
pub fn check_writable(path: &Path) -> Result<(), String> {
    let target = resolve(path)?;
    let cannot = |e: std::io::Error| format!("{}: cannot write it: {e}", path.display());
    if written_into(&target) {
        return std::fs::OpenOptions::new().write(true).open(&target).map(drop).map_err(cannot);
    }
    if target.is_dir() {
        return Err(format!("{}: cannot write it: a directory", path.display()));
    }
    if let Ok(m) = std::fs::metadata(&target) {
        // Replacing a file the user may not write would be `cp`'s refusal: refuse it too.
        std::fs::OpenOptions::new().append(true).open(&target).map_err(cannot)?;
        if m.permissions().readonly() {
            return Err(format!("{}: cannot write it: read-only", path.display()));
        }
    }
    tempfile::Builder::new().prefix(".gpu_vs_cpu-").tempfile_in(directory_of(&target)).map(drop).map_err(cannot)
}

/// Writes `bytes` to `path`: atomically for a regular file (or none yet), into it for a FIFO
/// or device. On an error the earlier file is whole and the error names `path`.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let target = resolve(path)?;
    let failed = |e: std::io::Error| format!("{}: writing: {e}", path.display());
    if written_into(&target) {
        let mut f = std::fs::OpenOptions::new().write(true).open(&target).map_err(failed)?;
        return f.write_all(bytes).map_err(failed);
    }
    let mut tmp = tempfile::Builder::new().prefix(".gpu_vs_cpu-").tempfile_in(directory_of(&target)).map_err(failed)?;
    tmp.write_all(bytes).map_err(failed)?;
    tmp.as_file().sync_all().map_err(failed)?;
    if let Ok(m) = std::fs::metadata(&target) {
        tmp.as_file().set_permissions(m.permissions()).map_err(failed)?;
    } else {
        // A new report gets the permissions a plain create would give it, not the temporary
        // file's private 0600.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let umask = process_umask();
            tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o666 & !umask)).map_err(failed)?;
        }
    }
    tmp.persist(&target).map_err(|e| failed(e.error))?;
    Ok(())
}

/// The process's umask, read from /proc (no call that changes it): 0o022 where unreadable.
#[cfg(unix)]
fn process_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Umask:").map(|v| v.trim().to_string())))
        .and_then(|v| u32::from_str_radix(&v, 8).ok())
        .unwrap_or(0o022)
}

/// Reads a JSON report, at most MAX_REPORT_BYTES of it.
pub fn read_report(path: &Path) -> Result<serde_json::Value, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: reading: {e}", path.display()))?;
    let mut text = Vec::new();
    file.take(MAX_REPORT_BYTES + 1).read_to_end(&mut text).map_err(|e| format!("{}: reading: {e}", path.display()))?;
    if text.len() as u64 > MAX_REPORT_BYTES {
        return Err(format!("{}: larger than {} MiB: not a report", path.display(), MAX_REPORT_BYTES >> 20));
    }
    let value: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| format!("{}: not a report: {e}", path.display()))?;
    if !value.is_object() {
        return Err(format!("{}: not a report: a JSON object with \"records\" expected", path.display()));
    }
    Ok(value)
}

/// Where baselines live: `target/gpu_vs_cpu-baselines/` of the project the working directory
/// is in (the nearest directory up holding a Cargo.toml), else of the working directory.
pub fn baseline_dir() -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("the working directory: {e}"))?;
    let project = cwd.ancestors().find(|d| d.join("Cargo.toml").is_file()).unwrap_or(&cwd);
    Ok(project.join("target").join("gpu_vs_cpu-baselines"))
}

/// A baseline's name: letters, digits, `-`, `_` and `.`, not starting with a dot (so no
/// separator, no `..`).
pub fn check_baseline_name(name: &str) -> Result<(), String> {
    let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if name.is_empty() || name.starts_with('.') || !plain {
        return Err(format!(
            "--save-baseline {name:?}: a name of letters, digits, '-', '_' and '.', not starting with '.' (baselines live in {})",
            baseline_dir().map_or_else(|e| e, |d| d.display().to_string())
        ));
    }
    Ok(())
}

/// `--baseline`'s argument: a saved name, or a report's path (a name with a separator, or
/// ending in `.json`).
pub fn baseline_source(arg: &str) -> Result<PathBuf, String> {
    if arg.contains(std::path::MAIN_SEPARATOR) || arg.contains('/') || arg.ends_with(".json") {
        return Ok(PathBuf::from(arg));
    }
    Ok(baseline_dir()?.join(format!("{arg}.json")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report replaces the file atomically, through a link to its target (a dangling one
    /// too: the target is created, the link stays a link), keeps the old file's mode, and an
    /// error leaves the earlier report whole, naming the path.
    #[test]
    fn reports_are_replaced_whole_through_links() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("r.json");
        std::fs::write(&report, "old").unwrap();
        std::fs::set_permissions(&report, std::fs::Permissions::from_mode(0o640)).unwrap();
        write(&report, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&report).unwrap(), "new");
        assert_eq!(std::fs::metadata(&report).unwrap().permissions().mode() & 0o777, 0o640);

        let link = dir.path().join("link.json");
        let target = dir.path().join("sub").join("target.json");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink("sub/target.json", &link).unwrap();
        check_writable(&link).unwrap();
        assert!(!target.exists(), "the check created the target");
        write(&link, b"through").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "through");

        let missing = dir.path().join("no-such-dir").join("r.json");
        let e = write(&missing, b"x").unwrap_err();
        assert!(e.starts_with(&missing.display().to_string()) && e.contains("writing"), "{e}");
        assert!(check_writable(&missing).unwrap_err().contains("no-such-dir"));
        // Nothing but the files written is left in the directory.
        let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["link.json", "r.json", "sub"]);
    }

    /// A full disk (`/dev/full` is a device: written into, and it fails) names the path.
    #[test]
    fn a_failed_write_names_the_file() {
        let e = write(Path::new("/dev/full"), b"x").unwrap_err();
        assert!(e.starts_with("/dev/full: writing:"), "{e}");
    }

    /// Reads are bounded, and what is not an object of a report says so with the path.
    #[test]
    fn reads_are_bounded_and_name_the_file() {
        let e = read_report(Path::new("/dev/zero")).unwrap_err();
        assert!(e.contains("/dev/zero") && e.contains("larger than"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        std::fs::write(&p, "[1, 2]").unwrap();
        let e = read_report(&p).unwrap_err();
        assert!(e.contains("a.json") && e.contains("not a report"), "{e}");
    }

    #[test]
    fn baseline_names_are_plain() {
        for bad in ["", "..", "../x", "a/b", ".hidden", "a b"] {
            assert!(check_baseline_name(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["main", "before-fix_2", "v0.1"] {
            check_baseline_name(good).unwrap();
        }
        assert_eq!(baseline_source("old.json").unwrap(), PathBuf::from("old.json"));
        assert_eq!(baseline_source("dir/x").unwrap(), PathBuf::from("dir/x"));
        assert!(baseline_source("main").unwrap().ends_with("target/gpu_vs_cpu-baselines/main.json"));
    }
}
