//! Outputs are files the user owns: written atomically or into what the path names (a FIFO,
//! a descriptor, a link's target), never a planted link's target, never a write-protected
//! file unless forced, keeping permissions; errors name the user's path.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{
    assert_clean_error, entries_but, pad_command, pad_exe, run, s, scratch, small_input, small_output_ok, start_held,
    stderr_lines, zeros_npy,
};

fn temporaries(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect()
}

/// Runs `cmd` as user and group `nobody` (65534) where the tests run as root, so that
/// permission checks apply as they do to a user; as it is otherwise.
#[cfg(unix)]
fn as_user(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // SAFETY: setgroups, setgid and setuid are async-signal-safe and touch only the child.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    cmd
}

/// Gives `path` to the user [`as_user`] runs as (`nobody` where the tests run as root).
#[cfg(unix)]
fn give_to_user(path: &Path) {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let path = std::ffi::CString::new(s(path)).unwrap();
        // SAFETY: chown on a path the test made, given as a NUL-terminated string.
        assert_eq!(unsafe { libc::chown(path.as_ptr(), 65534, 65534) }, 0);
    }
}

/// A scratch directory anyone may use (`nobody` included), with the small input in it.
#[cfg(unix)]
fn open_scratch() -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let input = small_input(dir.path());
    fs::set_permissions(&input, fs::Permissions::from_mode(0o644)).unwrap();
    (dir, input)
}

/// The process's umask, from `/proc` (reading it with umask(2) would change it for every thread).
#[cfg(target_os = "linux")]
fn umask() -> u32 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Umask:")).expect("Umask in /proc/self/status");
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
}

/// The old temporary name was `.NAME.tmp<pid>`, written with a plain
/// `fs::write` that followed a link planted there. Links planted at every name that scheme
/// could pick for the next few thousand processes must all be left alone. The named
/// temporary file used now (where `O_TMPFILE` is missing; `WGPU_PAD_TEST_NAMED_FILE` takes
/// that way here) cannot be planted in advance: its name is random (two runs differ) and it
/// is created new (a regular file of one link, never a link followed).
#[cfg(unix)]
#[test]
fn links_planted_at_guessable_temporary_names_are_not_followed() {
    use std::os::unix::fs::MetadataExt;
    let dir = scratch();
    let input = small_input(dir.path());
    let victim = dir.path().join("victim");
    fs::write(&victim, b"not yours").unwrap();
    let first = std::process::id();
    for pid in first..first + 3000 {
        std::os::unix::fs::symlink(&victim, dir.path().join(format!(".out.npy.tmp{pid}"))).unwrap();
    }
    let output = dir.path().join("out.npy");
    let args = [s(&input), s(&output), "--pads=1,1", "--mode", "edge", "--device", "cpu"];
    let out = run(&args);
    assert!(out.status.success(), "{:?}", stderr_lines(&out));
    assert_eq!(fs::read(&victim).unwrap(), b"not yours");
    assert!(fs::symlink_metadata(&output).unwrap().file_type().is_file());
    small_output_ok(&fs::read(&output).unwrap());

    let planted = temporaries(dir.path());
    let mut names = Vec::new();
    for _ in 0..2 {
        let (child, marker) = start_held(dir.path(), &args, |cmd| {
            cmd.env("WGPU_PAD_TEST_NAMED_FILE", "1");
        });
        let new: Vec<String> = temporaries(dir.path()).into_iter().filter(|n| !planted.contains(n)).collect();
        assert_eq!(new.len(), 1, "{new:?}");
        let name = new[0].clone();
        let rest = name.strip_prefix(".wgpu-pad-").and_then(|r| r.strip_suffix(".tmp"));
        assert!(rest.is_some_and(|r| r.len() >= 6), "{name}");
        let meta = fs::symlink_metadata(dir.path().join(&name)).unwrap();
        assert!(meta.file_type().is_file() && meta.nlink() == 1, "{name}: {meta:?}");
        fs::remove_file(&marker).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{:?}", String::from_utf8_lossy(&out.stderr));
        names.push(name);
    }
    assert_ne!(names[0], names[1], "the temporary name is predictable");
    assert_eq!(fs::read(&victim).unwrap(), b"not yours");
    small_output_ok(&fs::read(&output).unwrap());
}

/// A FIFO at the output path became a regular file. It must be written into,
/// and so must `/dev/stdout` and `-`; `-` as input is standard input.
#[cfg(unix)]
#[test]
fn fifos_and_standard_streams_are_written_into_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch();
    let input = small_input(dir.path());
    let fifo = dir.path().join("fifo");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(fifo).unwrap())
    };
    let out = run(&[s(&input), s(&fifo), "--pads=1,1", "--mode", "edge", "--device", "cpu"]);
    assert!(out.status.success(), "{:?}", stderr_lines(&out));
    // Checked before joining: a replaced FIFO leaves the reader waiting for ever.
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    small_output_ok(&reader.join().unwrap());

    for target in ["-", "/dev/stdout"] {
        let out = run(&[s(&input), target, "--pads=1,1", "--mode", "edge", "--device", "cpu"]);
        assert!(out.status.success(), "{target}: {:?}", stderr_lines(&out));
        small_output_ok(&out.stdout);
    }

    let mut child = Command::new(pad_exe())
        .args(["-", "-", "--pads=1,1", "--mode", "edge", "--device", "cpu"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&fs::read(&input).unwrap()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", stderr_lines(&out));
    small_output_ok(&out.stdout);
}

/// A write-protected output (0444, the user's own or root's, in a directory
/// anyone may write) is not replaced, as `cp` and `>` refuse it: the error names it, and
/// it is left as it was; `--force` replaces it.
#[cfg(unix)]
#[test]
fn write_protected_outputs_are_refused_unless_forced() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, input) = open_scratch();
    let keep = dir.path().join("keep.npy");
    for owner in ["the user", "root"] {
        fs::write(&keep, b"precious").unwrap();
        if owner == "the user" {
            give_to_user(&keep);
        }
        fs::set_permissions(&keep, fs::Permissions::from_mode(0o444)).unwrap();
        let args = [s(&input), s(&keep), "--pads=1,1", "--mode", "edge", "--device", "cpu"];
        let out = as_user(Command::new(pad_exe()).args(args)).output().unwrap();
        assert_clean_error(&out, owner);
        let line = stderr_lines(&out).pop().unwrap();
        assert!(line.contains(s(&keep)) && line.contains("permission denied") && line.contains("--force"), "{line}");
        assert_eq!(fs::read(&keep).unwrap(), b"precious", "{owner}'s protected file was changed");
        let forced = as_user(Command::new(pad_exe()).args(args).arg("--force")).output().unwrap();
        assert!(forced.status.success(), "{owner}: {:?}", stderr_lines(&forced));
        small_output_ok(&fs::read(&keep).unwrap());
        fs::remove_file(&keep).unwrap();
    }
}

/// An output that is a link is written through, as redirection writes
/// through it: the link stays and the file it names gets the output (atomically, keeping
/// its permissions); `/dev/stdout`, `/dev/fd/1` and `/proc/self/fd/1` write into standard
/// output whether it is a file or a pipe, as the user and as root.
#[cfg(target_os = "linux")]
#[test]
fn links_and_standard_output_paths_are_written_through() {
    let (dir, input) = open_scratch();
    let real = dir.path().join("real.npy");
    fs::write(&real, b"old").unwrap();
    let link = dir.path().join("link.npy");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = run(&[s(&input), s(&link), "--pads=1,1", "--mode", "edge", "--device", "cpu"]);
    assert!(out.status.success(), "{:?}", stderr_lines(&out));
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    small_output_ok(&fs::read(&real).unwrap());

    for target in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"] {
        for user in [false, true] {
            let args = [s(&input), target, "--pads=1,1", "--mode", "edge", "--device", "cpu"];
            // Standard output a file the user may write.
            let file = dir.path().join("stdout.npy");
            let handle = fs::File::create(&file).unwrap();
            let mut cmd = Command::new(pad_exe());
            cmd.args(args).stdout(handle).stderr(Stdio::piped());
            if user {
                as_user(&mut cmd);
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{target}, user {user}, into a file: {:?}", stderr_lines(&out));
            small_output_ok(&fs::read(&file).unwrap());
            assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 4, "{target}: something was left beside");
            fs::remove_file(&file).unwrap();
            // Standard output a pipe.
            let mut cmd = Command::new(pad_exe());
            cmd.args(args);
            if user {
                as_user(&mut cmd);
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{target}, user {user}, into a pipe: {:?}", stderr_lines(&out));
            small_output_ok(&out.stdout);
        }
    }
}

/// A descriptor destination writes into that very descriptor, not standard output:
/// `/dev/stderr` and `/dev/fd/2` into standard error, `/dev/fd/3` and `/proc/self/fd/3` into a
/// descriptor 3 the run was started with; standard output stays empty.
#[cfg(target_os = "linux")]
#[test]
fn descriptor_paths_write_into_their_own_descriptor() {
    use std::os::unix::io::AsRawFd;
    use std::os::unix::process::CommandExt;
    let (dir, input) = open_scratch();
    for (target, fd) in [("/dev/stderr", 2), ("/dev/fd/2", 2), ("/dev/fd/3", 3), ("/proc/self/fd/3", 3)] {
        let file = dir.path().join("into.npy");
        let handle = fs::File::create(&file).unwrap();
        let mut cmd = Command::new(pad_exe());
        cmd.args([s(&input), target, "--pads=1,1", "--mode", "edge", "--device", "cpu"]).stdout(Stdio::piped());
        if fd == 2 {
            cmd.stderr(handle);
        } else {
            let raw = handle.as_raw_fd();
            cmd.stderr(Stdio::piped());
            // SAFETY: dup2 in the child before exec, on a descriptor the parent keeps open.
            unsafe {
                cmd.pre_exec(move || {
                    // dup2 onto itself keeps close-on-exec: clear it instead.
                    let made = if raw == 3 { libc::fcntl(3, libc::F_SETFD, 0) } else { libc::dup2(raw, 3) };
                    if made < 0 {
                        Err(std::io::Error::last_os_error())
                    } else {
                        Ok(())
                    }
                });
            }
            let out = cmd.output().unwrap();
            drop(handle);
            assert!(out.status.success(), "{target}: {:?}", stderr_lines(&out));
            assert!(out.stdout.is_empty(), "{target}: {} bytes went to standard output", out.stdout.len());
            small_output_ok(&fs::read(&file).unwrap());
            continue;
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{target}");
        assert!(out.stdout.is_empty(), "{target}: {} bytes went to standard output", out.stdout.len());
        small_output_ok(&fs::read(&file).unwrap());
    }
}

/// What an output path is decides, never its spelling. A regular file in
/// `/dev/shm` is replaced atomically (a new file, so a failed write leaves the old one
/// whole) and a new one is created there; a link to `/dev/stdout` writes into the open
/// descriptor, into a pipe and appending after `>>`; `//dev/stdout`, `/dev/./stdout` and
/// `/proc/thread-self/fd/1` are standard output; `/proc/self/cwd/NAME` is an ordinary path.
#[cfg(target_os = "linux")]
#[test]
fn output_paths_are_judged_by_what_they_name() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    let dir = scratch();
    let input = small_input(dir.path());
    let edge = |target: &str| {
        vec![
            s(&input).to_string(),
            target.to_string(),
            "--pads=1,1".into(),
            "--mode".into(),
            "edge".into(),
            "--device".into(),
            "cpu".into(),
        ]
    };

    if Path::new("/dev/shm").is_dir() {
        let shm = tempfile::Builder::new().prefix("wgpu-pad-shm-").tempdir_in("/dev/shm").unwrap();
        let old = shm.path().join("scratch.npy");
        fs::write(&old, vec![7u8; 4096]).unwrap();
        let inode = fs::metadata(&old).unwrap().ino();
        let out = pad_command(&edge(s(&old)).iter().map(String::as_str).collect::<Vec<_>>()).output().unwrap();
        assert!(out.status.success(), "{:?}", stderr_lines(&out));
        small_output_ok(&fs::read(&old).unwrap());
        assert_ne!(fs::metadata(&old).unwrap().ino(), inode, "/dev/shm: written in place, not replaced");
        // A write that fails (a file-size limit of 100 bytes) leaves the old file whole.
        fs::write(&old, vec![7u8; 4096]).unwrap();
        let big = shm.path().join("big.npy");
        zeros_npy(&big, "<f4", &[4096]);
        let mut cmd = Command::new(pad_exe());
        cmd.args([s(&big), s(&old), "--pads=1,1", "--device", "cpu"]).stderr(Stdio::piped());
        // SAFETY: setrlimit and signal are async-signal-safe and touch only the child.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let limit = libc::rlimit { rlim_cur: 100, rlim_max: 100 };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        assert_clean_error(&out, "a write past the file-size limit");
        assert_eq!(fs::read(&old).unwrap(), vec![7u8; 4096], "/dev/shm: the old file was lost");
        let new = shm.path().join("new.npy");
        let out = pad_command(&edge(s(&new)).iter().map(String::as_str).collect::<Vec<_>>()).output().unwrap();
        assert!(out.status.success(), "a new file in /dev/shm: {:?}", stderr_lines(&out));
        small_output_ok(&fs::read(&new).unwrap());
        assert_eq!(entries_but(shm.path(), &[]), ["big.npy", "new.npy", "scratch.npy"]);
    }

    // A link to /dev/stdout (and to /dev/fd/1): into a pipe, and appended to a log opened for
    // appending, never replacing it.
    for via in ["/dev/stdout", "/dev/fd/1"] {
        let link = dir.path().join("to-stdout.npy");
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(via, &link).unwrap();
        let out = pad_command(&edge(s(&link)).iter().map(String::as_str).collect::<Vec<_>>()).output().unwrap();
        assert!(out.status.success(), "a link to {via}, into a pipe: {:?}", stderr_lines(&out));
        small_output_ok(&out.stdout);
        let log = dir.path().join("log.npy");
        fs::write(&log, b"before|").unwrap();
        let inode = fs::metadata(&log).unwrap().ino();
        let append = fs::OpenOptions::new().append(true).open(&log).unwrap();
        let out = pad_command(&edge(s(&link)).iter().map(String::as_str).collect::<Vec<_>>())
            .stdout(append)
            .output()
            .unwrap();
        assert!(out.status.success(), "a link to {via}, >> log: {:?}", stderr_lines(&out));
        let logged = fs::read(&log).unwrap();
        assert_eq!(&logged[..7], b"before|", "a link to {via}: the log's old bytes were lost");
        small_output_ok(&logged[7..]);
        assert_eq!(fs::metadata(&log).unwrap().ino(), inode, "a link to {via}: the log was replaced");
        fs::remove_file(&log).unwrap();
    }

    for spelling in ["//dev/stdout", "/dev/./stdout", "/dev/../dev/fd/1", "/proc/thread-self/fd/1", "/proc/self/fd/./1"]
    {
        let out = pad_command(&edge(spelling).iter().map(String::as_str).collect::<Vec<_>>()).output().unwrap();
        assert!(out.status.success(), "{spelling}: {:?}", stderr_lines(&out));
        small_output_ok(&out.stdout);
    }

    let out = pad_command(&edge("/proc/self/cwd/cwd.npy").iter().map(String::as_str).collect::<Vec<_>>())
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "/proc/self/cwd/cwd.npy: {:?}", stderr_lines(&out));
    small_output_ok(&fs::read(dir.path().join("cwd.npy")).unwrap());
}

/// With standard output closed (`>&-`), `-` and `/dev/stdout` are an error
/// (exit 1), as `cat` fails there, not a silent success writing nowhere.
#[cfg(target_os = "linux")]
#[test]
fn a_closed_standard_output_is_an_error() {
    use std::os::unix::process::CommandExt;
    let dir = scratch();
    let input = small_input(dir.path());
    for target in ["-", "/dev/stdout"] {
        let mut cmd = pad_command(&[s(&input), target, "--pads=1,1", "--mode", "edge", "--device", "cpu"]);
        cmd.stderr(Stdio::piped());
        // SAFETY: close(2) is async-signal-safe; it closes the child's standard output only.
        unsafe {
            cmd.pre_exec(|| {
                libc::close(1);
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        assert_clean_error(&out, target);
        let line = stderr_lines(&out).pop().unwrap();
        assert!(line.contains("closed"), "{target}: {line}");
    }
}

/// An existing output's permissions were lost (0600 became 0644), and names of
/// 246 bytes and more failed because of the temporary suffix.
#[cfg(target_os = "linux")]
#[test]
fn outputs_keep_their_permissions_and_long_names_work() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, input) = open_scratch();
    for mode in [0o600, 0o640, 0o444] {
        let output = dir.path().join(format!("kept{mode:o}.npy"));
        fs::write(&output, b"old").unwrap();
        give_to_user(&output);
        fs::set_permissions(&output, fs::Permissions::from_mode(mode)).unwrap();
        // As a user (root runs it as `nobody`): a write-protected file takes `--force`.
        let mut args = vec![s(&input), s(&output), "--pads=1,1", "--mode", "edge", "--device", "cpu"];
        if mode & 0o200 == 0 {
            args.push("--force");
        }
        let out = as_user(Command::new(pad_exe()).args(&args)).output().unwrap();
        assert!(out.status.success(), "{mode:o}: {:?}", stderr_lines(&out));
        assert_eq!(fs::metadata(&output).unwrap().permissions().mode() & 0o7777, mode);
        small_output_ok(&fs::read(&output).unwrap());
    }
    let fresh = dir.path().join(format!("{}.npy", "n".repeat(251)));
    let out = run(&[s(&input), s(&fresh), "--pads=1,1", "--mode", "edge", "--device", "cpu"]);
    assert!(out.status.success(), "a 255-byte name: {:?}", stderr_lines(&out));
    assert_eq!(fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o666 & !umask());
    small_output_ok(&fs::read(&fresh).unwrap());
    assert!(temporaries(dir.path()).is_empty(), "{:?}", temporaries(dir.path()));
}

/// Where the output cannot be created (a link into a missing directory, a
/// directory the user may not write), the error names the user's path and its directory,
/// never a temporary file's name the user never gave.
#[cfg(unix)]
#[test]
fn unwritable_outputs_are_named_as_the_user_gave_them() {
    let (dir, input) = open_scratch();
    let dangling = dir.path().join("dang.npy");
    std::os::unix::fs::symlink(dir.path().join("missing/out.npy"), &dangling).unwrap();
    let locked = dir.path().join("locked");
    fs::create_dir(&locked).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
    for target in [dangling.clone(), locked.join("out.npy")] {
        let args = [s(&input), s(&target), "--pads=1,1", "--mode", "edge", "--device", "cpu"];
        let out = as_user(Command::new(pad_exe()).args(args)).output().unwrap();
        assert_clean_error(&out, s(&target));
        let line = stderr_lines(&out).pop().unwrap();
        assert!(line.contains(s(&target)), "{line}");
        assert!(!line.contains(".wgpu-pad-") && !line.contains(".tmp"), "a temporary name: {line}");
    }
}
