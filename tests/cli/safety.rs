//! The command line never loses or clobbers data and stays within its memory cap: one
//! test per finding of the hostile review (issue 10).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use wgpu_pad::{npy, DataType, Tensor};

use super::{assert_clean_error, output_and_peak, pad_command, pad_exe, raw_npy, run, stderr_lines, SMALL_PEAK};

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("wgpu-pad-safety-").tempdir().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A small f32 input file, `[1, 2, 3]`.
fn small_input(dir: &Path) -> PathBuf {
    let x = Tensor::from_slice(DataType::Float32, vec![3], &[1f32, 2., 3.]).unwrap();
    let path = dir.join("in.npy");
    fs::write(&path, npy::to_bytes(&x, &npy::Descr::parse("<f4").unwrap()).unwrap()).unwrap();
    path
}

/// What `--pads=1,1 --mode edge` makes of [`small_input`].
fn small_output_ok(bytes: &[u8]) {
    let y = npy::to_tensor(&npy::parse(bytes).unwrap(), None).unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap(), &[1., 1., 2., 3., 3.]);
}

/// A file of zeros declaring `shape` of `descr`: sparse, so large ones cost no disk.
fn zeros_npy(path: &Path, descr: &str, shape: &[usize]) {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({},), }}", dims.join(", "));
    let head = raw_npy(&header, &[]);
    let body: u64 = shape.iter().product::<usize>() as u64 * npy::Descr::parse(descr).unwrap().item_bytes() as u64;
    let mut f = fs::File::create(path).unwrap();
    f.write_all(&head).unwrap();
    f.set_len(head.len() as u64 + body).unwrap();
}

fn temporaries(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect()
}

/// Finding 1: the old temporary name was `.NAME.tmp<pid>`, written with a plain
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

/// Finding 2: a FIFO at the output path became a regular file. It must be written into,
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

/// Round three: a write-protected output (0444, the user's own or root's, in a directory
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

/// Round three: an output that is a link is written through, as redirection writes
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

/// Round four: what an output path is decides, never its spelling. A regular file in
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

/// Round four: with standard output closed (`>&-`), `-` and `/dev/stdout` are an error
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

/// The process's umask, from `/proc` (reading it with umask(2) would change it for every thread).
#[cfg(target_os = "linux")]
fn umask() -> u32 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Umask:")).expect("Umask in /proc/self/status");
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
}

/// Finding 3: an existing output's permissions were lost (0600 became 0644), and names of
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

/// Starts the pad `args` held just before it writes its output's bytes (its new file open,
/// nothing in place: the binary's `WGPU_PAD_TEST_HOLD`), with `setup` applied to the
/// command; returns the child and the marker that holds it (remove it to let the run go on).
#[cfg(unix)]
fn start_held(dir: &Path, args: &[&str], setup: impl FnOnce(&mut Command)) -> (std::process::Child, PathBuf) {
    let marker = dir.join("held");
    let mut cmd = Command::new(pad_exe());
    cmd.args(args).env("WGPU_PAD_TEST_HOLD", &marker).stderr(Stdio::piped());
    setup(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let started = std::time::Instant::now();
    while !marker.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it was held: {:?}",
            child.wait_with_output()
        );
        assert!(started.elapsed().as_secs() < 120, "not held after 120 s");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    (child, marker)
}

/// Sends `signal` to `child`.
#[cfg(unix)]
fn send(child: &std::process::Child, signal: i32) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
}

/// The entries of `dir` but the ones named.
fn entries_but(dir: &Path, keep: &[&str]) -> Vec<String> {
    let mut left: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.retain(|n| !keep.contains(&n.as_str()));
    left.sort();
    left
}

/// Finding 3: a run killed while writing left its partial temporary file. SIGINT, SIGTERM
/// and SIGHUP, sent while the run is held with its output's new file open, must leave
/// nothing behind and exit 128 + the signal's number, as a shell reports it; on Linux,
/// where that file has no name until it is complete (nothing new in the directory while
/// held), SIGKILL (the OOM killer's) too. The run is held at a known point, so no signal
/// can land after the output is in place.
#[cfg(unix)]
#[test]
fn an_interrupted_run_leaves_nothing_behind() {
    use std::os::unix::process::ExitStatusExt;
    let dir = scratch();
    let input = small_input(dir.path());
    let output = dir.path().join("out.npy");
    let mut signals = vec![("SIGINT", libc::SIGINT), ("SIGTERM", libc::SIGTERM), ("SIGHUP", libc::SIGHUP)];
    if cfg!(target_os = "linux") {
        signals.push(("SIGKILL", libc::SIGKILL));
    }
    // Through an unnamed file (Linux), and through the named one other systems (and
    // filesystems without O_TMPFILE) use, which the signal handler must remove.
    let named_too = if cfg!(target_os = "linux") { &[false, true][..] } else { &[true][..] };
    for (&named_file, (name, signal)) in named_too.iter().flat_map(|n| signals.iter().map(move |s| (n, *s))) {
        if named_file && signal == libc::SIGKILL {
            continue; // nothing can remove a named file on SIGKILL
        }
        for old in [None, Some(&b"old contents"[..])] {
            if let Some(old) = old {
                fs::write(&output, old).unwrap();
            }
            let args = [s(&input), s(&output), "--pads=1,1", "--mode", "edge", "--device", "cpu"];
            let (child, marker) = start_held(dir.path(), &args, |cmd| {
                if named_file {
                    cmd.env("WGPU_PAD_TEST_NAMED_FILE", "1");
                }
                // The caller's dispositions, not the test runner's: a runner started in the
                // background of a non-interactive shell ignores SIGINT, and the binary keeps
                // an ignored signal ignored (the next test), which this one is not about.
                // SAFETY: signal(2) is async-signal-safe; it only sets this child's dispositions.
                unsafe {
                    std::os::unix::process::CommandExt::pre_exec(cmd, || {
                        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                            libc::signal(s, libc::SIG_DFL);
                        }
                        Ok(())
                    });
                }
            });
            if named_file {
                let named = entries_but(dir.path(), &["in.npy", "out.npy", "held"]);
                assert_eq!(named.len(), 1, "{name}: no named temporary file while written: {named:?}");
            } else {
                let named = entries_but(dir.path(), &["in.npy", "out.npy", "held"]);
                assert!(named.is_empty(), "{name}: the new file has a name while written: {named:?}");
            }
            send(&child, signal);
            let status = child.wait_with_output().unwrap().status;
            if signal == libc::SIGKILL {
                assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
            } else {
                assert_eq!(status.code(), Some(128 + signal), "{name}: {status:?}");
            }
            fs::remove_file(&marker).unwrap();
            match old {
                Some(old) => assert_eq!(fs::read(&output).unwrap(), old, "{name}: the old output was changed"),
                None => assert!(!output.exists(), "{name}: an output appeared"),
            }
            assert_eq!(entries_but(dir.path(), &["in.npy", "out.npy"]), Vec::<String>::new(), "{name}: left behind");
            let _ = fs::remove_file(&output);
        }
    }
}

/// Round three: signals the caller ignored (`nohup`, `trap '' INT`) stay ignored: sent while
/// the run is held before writing its output, the run goes on once let go and succeeds.
/// Handled signals sent at the same point end it (the test above), so this one fails if
/// the ignored disposition is not kept.
#[cfg(unix)]
#[test]
fn ignored_signals_stay_ignored() {
    use std::os::unix::process::CommandExt;
    let dir = scratch();
    let input = small_input(dir.path());
    for (name, signal) in [("SIGHUP", libc::SIGHUP), ("SIGINT", libc::SIGINT), ("SIGTERM", libc::SIGTERM)] {
        let output = dir.path().join("out.npy");
        let args = [s(&input), s(&output), "--pads=1,1", "--mode", "edge", "--device", "cpu"];
        let (child, marker) = start_held(dir.path(), &args, |cmd| {
            // SAFETY: signal(2) is async-signal-safe; it only sets this child's disposition.
            unsafe {
                cmd.pre_exec(move || {
                    libc::signal(signal, libc::SIG_IGN);
                    Ok(())
                });
            }
        });
        send(&child, signal);
        // Given time to act on the signal, were it handled, before the run is let go.
        std::thread::sleep(std::time::Duration::from_millis(200));
        fs::remove_file(&marker).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{name} ignored by the caller, yet: {out:?}");
        small_output_ok(&fs::read(&output).unwrap());
        fs::remove_file(&output).unwrap();
    }
}

/// Round three: a run past the spinner's delay shows each phase on a terminal (a
/// pseudo-terminal from `script`), and nothing where standard error is not a terminal.
#[cfg(target_os = "linux")]
#[test]
fn progress_shows_on_a_terminal_only() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("no `script` (util-linux) to make a terminal with: not checked");
        return;
    }
    let dir = scratch();
    let input = dir.path().join("big.npy");
    zeros_npy(&input, "<f4", &[16, 1 << 20]);
    let output = dir.path().join("out.npy");
    let cmd = format!("{} {} {} --pads=0,0,16,0 --device cpu", s(&pad_exe()), s(&input), s(&output));
    let tty = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("WGPU_PAD_PROGRESS_AFTER_MS", "0")
        .output()
        .unwrap();
    assert!(tty.status.success(), "{tty:?}");
    let shown = String::from_utf8_lossy(&tty.stdout);
    for phase in ["reading ", "padding [16, 1048576] to [32, 1048576] on the CPU", "writing "] {
        assert!(shown.contains(phase), "no {phase:?} on the terminal: {shown:?}");
    }
    let piped = pad_command(&[s(&input), s(&output), "--pads=0,0,16,0", "--device", "cpu"])
        .env("WGPU_PAD_PROGRESS_AFTER_MS", "0")
        .output()
        .unwrap();
    assert!(piped.status.success() && piped.stderr.is_empty(), "{:?}", String::from_utf8_lossy(&piped.stderr));
}

/// Round four: a signal on a terminal clears the progress line, so the shell's prompt does
/// not continue it, and standard input is named as such. The run is held reading its input
/// from a FIFO the test feeds part of, then stops feeding: no race with the run's end.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_clears_the_progress_line() {
    use std::io::Read;
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("no `script` (util-linux) to make a terminal with: not checked");
        return;
    }
    let dir = scratch();
    let whole = dir.path().join("big.npy");
    zeros_npy(&whole, "<f4", &[16, 1 << 20]);
    let fifo = dir.path().join("in.fifo");
    let path = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path in the test's own directory.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let pid_file = dir.path().join("pid");
    let output = dir.path().join("out.npy");
    let cmd = format!(
        "echo $$ > {}; exec {} - {} --pads=0,0,16,0 --device cpu < {}",
        s(&pid_file),
        s(&pad_exe()),
        s(&output),
        s(&fifo)
    );
    let mut script = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("WGPU_PAD_PROGRESS_AFTER_MS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let shown = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let reader = {
        let (shown, mut stdout) = (shown.clone(), script.stdout.take().unwrap());
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = stdout.read(&mut chunk) {
                shown.lock().unwrap().extend_from_slice(&chunk[..n]);
            }
        })
    };
    // The header and a page of the body, then nothing more: the run waits reading.
    let mut feed = fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    feed.write_all(&fs::read(&whole).unwrap()[..4096]).unwrap();
    let started = std::time::Instant::now();
    while !String::from_utf8_lossy(&shown.lock().unwrap()).contains("reading standard input") {
        assert!(
            started.elapsed().as_secs() < 60,
            "no phase drawn: {:?}",
            String::from_utf8_lossy(&shown.lock().unwrap())
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let pid: libc::pid_t = fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    // SAFETY: kill(2) on the run the test started (script's child, exec'd in place of its shell).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = script.wait().unwrap();
    drop(feed);
    reader.join().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let shown = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    // What stays on the line after the last "erase line" is nothing but returns and newlines.
    let last_erase = shown.rfind("\x1b[2K").unwrap_or_else(|| panic!("the line was never cleared: {shown:?}"));
    let tail = &shown[last_erase + "\x1b[2K".len()..];
    assert!(tail.chars().all(|c| c == '\r' || c == '\n'), "left on the line after the signal: {tail:?}");
    assert!(!output.exists());
}

/// `<U3` elements from code points (UTF-32LE).
fn utf32(elements: &[&[u32]], chars: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for e in elements {
        let mut units = e.to_vec();
        units.resize(chars, 0);
        out.extend(units.iter().flat_map(|u| u.to_le_bytes()));
    }
    out
}

/// Finding 4: the reader ended a string at its first NUL (`['a\x00b', '\x00x']` came back
/// as `['a', '']`). numpy strips trailing NULs only.
#[test]
fn interior_nuls_in_strings_are_kept() {
    let dir = scratch();
    let input = dir.path().join("s.npy");
    let data = utf32(&[&['a' as u32, 0, 'b' as u32], &[0, 'x' as u32], &['y' as u32, 0, 0]], 3);
    fs::write(&input, raw_npy("{'descr': '<U3', 'fortran_order': False, 'shape': (3,), }", &data)).unwrap();
    let output = dir.path().join("o.npy");
    let out = run(&[s(&input), s(&output), "--pads=1,0", "--mode", "edge"]);
    assert!(out.status.success(), "{:?}", stderr_lines(&out));
    let y = npy::to_tensor(&npy::parse(&fs::read(&output).unwrap()).unwrap(), None).unwrap();
    assert_eq!(y.strings().unwrap(), ["a\0b", "a\0b", "\0x", "y"]);
}

/// Finding 5: strings were counted at 24 bytes each, so a 4 MiB `<U1048576` file padded to
/// 10^6 elements aborted (exit 134) allocating 4 TB. Their contents count now, in memory and
/// in the file the output would take.
#[test]
fn string_contents_count_against_the_cap() {
    let dir = scratch();
    let input = dir.path().join("wide.npy");
    let long: Vec<u32> = vec!['x' as u32; 1 << 20];
    fs::write(
        &input,
        raw_npy("{'descr': '<U1048576', 'fortran_order': False, 'shape': (1,), }", &utf32(&[&long], 1 << 20)),
    )
    .unwrap();
    let output = dir.path().join("o.npy");
    for mode in ["edge", "constant", "wrap"] {
        let out = run(&[s(&input), s(&output), "--pads=0,999999", "--mode", mode]);
        assert_clean_error(&out, mode);
        let line = stderr_lines(&out).pop().unwrap();
        assert!(line.contains("too large") && line.contains("(--max-output-bytes)"), "{mode}: {line}");
        assert!(!output.exists());
    }
    // Within a cap the same pads work: 4 copies of 4 MiB of contents in a 32 MiB cap.
    let out = run(&[s(&input), s(&output), "--pads=0,3", "--mode", "edge", "--max-output-bytes", "33554432"]);
    assert!(out.status.success(), "{:?}", stderr_lines(&out));
    let y = npy::to_tensor(&npy::parse(&fs::read(&output).unwrap()).unwrap(), None).unwrap();
    assert_eq!(y.len(), 4);
    assert!(y.strings().unwrap().iter().all(|s| s.len() == 1 << 20));
    // And a cap below what they hold refuses them.
    let out = run(&[s(&input), s(&output), "--pads=0,3", "--mode", "edge", "--max-output-bytes", "8388608"]);
    assert_clean_error(&out, "string contents over the cap");
    let line = stderr_lines(&out).pop().unwrap();
    assert!(line.contains("limit of 8388608 bytes (--max-output-bytes)"), "{line}");
}

/// Sets an address-space limit on a child before it runs.
#[cfg(target_os = "linux")]
fn with_address_space_limit(cmd: &mut Command, bytes: u64) -> &mut Command {
    use std::os::unix::process::CommandExt;
    let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
    // SAFETY: setrlimit is async-signal-safe, and `limit` is a plain value moved in.
    unsafe {
        cmd.pre_exec(move || match libc::setrlimit(libc::RLIMIT_AS, &limit) {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        })
    }
}

/// Finding 5: only the first allocation was fallible; the 4-bit path's unpacked buffers
/// aborted under memory pressure. Under a 1 GiB address-space limit, an int4 output of
/// 614 MiB (whose unpacked form needs 1.2 GiB more) must be an error, not an abort.
#[cfg(target_os = "linux")]
#[test]
fn running_out_of_memory_is_an_error_not_an_abort() {
    let dir = scratch();
    let input = dir.path().join("nibbles.npy");
    fs::write(&input, raw_npy("{'descr': '|V1', 'fortran_order': False, 'shape': (2,), }", &[1, 2])).unwrap();
    let output = dir.path().join("o.npy");
    let out = with_address_space_limit(&mut Command::new(pad_exe()), 1 << 30)
        .args([s(&input), s(&output), "--dtype", "int4", "--pads=0,1288490186", "--device", "cpu"])
        .output()
        .unwrap();
    assert_clean_error(&out, "int4 under a 1 GiB limit");
    assert!(stderr_lines(&out).last().unwrap().contains("out of memory"), "{:?}", stderr_lines(&out));
    assert!(!output.exists());
}

/// Finding 6: the whole input was read before anything was checked (a 3 GiB file with a bad
/// magic cost 3.15 GB and 14 s; `/dev/zero` read until memory ran out). Shown by each run's
/// peak memory and, for standard input, by the bytes it takes; not by a timing.
#[test]
fn inputs_are_checked_before_their_body_is_read() {
    let dir = scratch();
    let output = dir.path().join("o.npy");
    let bad_magic = dir.path().join("bad.npy");
    let mut f = fs::File::create(&bad_magic).unwrap();
    f.write_all(b"NOTNPY").unwrap();
    f.set_len(3 << 30).unwrap();
    // A header declaring 3 GiB, in a file of 100 bytes; and a file longer than declared.
    let short = dir.path().join("short.npy");
    fs::write(&short, raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (805306368,), }", &[0; 16])).unwrap();
    let long = dir.path().join("long.npy");
    zeros_npy(&long, "<f4", &[4]);
    fs::OpenOptions::new().append(true).open(&long).unwrap().write_all(&[0; 4]).unwrap();
    // Over the input cap, declared honestly (a sparse 1 GiB file).
    let capped = dir.path().join("capped.npy");
    zeros_npy(&capped, "<f4", &[1 << 28]);
    let cap = ["--max-input-bytes", "1000000"];
    let mut cases = vec![
        (bad_magic.clone(), vec![], "bad magic"),
        (short.clone(), vec![], "the file has"),
        (long.clone(), vec![], "the file has"),
        (capped.clone(), cap.to_vec(), "over the limit"),
    ];
    if Path::new("/dev/zero").exists() {
        cases.push((PathBuf::from("/dev/zero"), vec![], "bad magic"));
    }
    for (input, extra, says) in cases {
        let (out, peak) =
            output_and_peak(pad_command(&[s(&input), s(&output), "--pads=1,1", "--device", "cpu"]).args(extra));
        let what = input.display().to_string();
        assert_clean_error(&out, &what);
        assert!(stderr_lines(&out).last().unwrap().contains(says), "{what}: {:?}", stderr_lines(&out));
        assert!(peak.is_none_or(|p| p < SMALL_PEAK), "{what}: peak resident memory {peak:?} bytes");
    }
    assert!(!output.exists());
    // Streamed on standard input, a body that is never stored could still be read through
    // to its end: count what the run takes of 3 GiB offered after a bad or capped header.
    let capped_header = raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (268435456,), }", &[]);
    for (head, extra, says) in
        [(&b"NOTNPY"[..], &[][..], "bad magic"), (&capped_header[..], &cap[..], "over the limit")]
    {
        let mut child = pad_command(&["-", s(&output), "--pads=1,1", "--device", "cpu"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let head = head.to_vec();
        let feeder = std::thread::spawn(move || {
            let zeros = vec![0u8; 1 << 16];
            let mut taken = 0u64;
            // Ends when the run closes its standard input (the write fails) or has it all.
            if stdin.write_all(&head).is_ok() {
                taken += head.len() as u64;
                while taken < 3 << 30 {
                    match stdin.write(&zeros) {
                        Ok(n) => taken += n as u64,
                        Err(_) => break,
                    }
                }
            }
            taken
        });
        let out = child.wait_with_output().unwrap();
        let taken = feeder.join().unwrap();
        assert_clean_error(&out, says);
        assert!(stderr_lines(&out).last().unwrap().contains(says), "{says}: {:?}", stderr_lines(&out));
        // What it read plus what the pipe held when it closed: a few KiB and one pipe buffer.
        assert!(taken < 4 << 20, "{says} on standard input: {taken} bytes were taken");
        assert!(!output.exists());
    }
}

/// Finding 7: `WGPU_PAD_CPU_THREADS=2000` panicked (`failed to spawn thread`, exit 101) when
/// the system refused threads. Here the refusal is an address-space limit too small for
/// 2000 thread stacks, or even 64: the count is clamped, and a refused thread's share is
/// done by the others.
#[cfg(target_os = "linux")]
#[test]
fn a_refused_thread_degrades_instead_of_panicking() {
    let dir = scratch();
    let input = dir.path().join("rows.npy");
    let x: Vec<u8> = (0..4096 * 4096u32).map(|i| (i % 251) as u8).collect();
    fs::write(&input, raw_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4096, 4096), }", &x)).unwrap();
    let (limited, free) = (dir.path().join("limited.npy"), dir.path().join("free.npy"));
    for (output, limit) in [(&limited, Some(200u64 << 20)), (&free, None)] {
        let mut cmd = Command::new(pad_exe());
        if let Some(bytes) = limit {
            with_address_space_limit(&mut cmd, bytes);
        }
        let out = cmd
            .args([s(&input), s(output), "--pads=1,2,3,4", "--mode", "reflect", "--device", "cpu"])
            .env("WGPU_PAD_CPU_THREADS", "2000")
            .output()
            .unwrap();
        assert!(out.status.success(), "limit {limit:?}: {:?} {:?}", out.status, stderr_lines(&out));
    }
    assert!(fs::read(&limited).unwrap() == fs::read(&free).unwrap());
}

/// Finding 5: the command line held about 3x the output at its peak. For a 1 GiB output from
/// a 512 MiB input it must stay within 1.2x of input plus output.
#[cfg(target_os = "linux")]
#[test]
fn a_1_gib_output_peaks_at_input_plus_output() {
    let dir = scratch();
    let input = dir.path().join("half.npy");
    zeros_npy(&input, "<f4", &[8192, 16384]);
    let output = dir.path().join("o.npy");
    let (out, peak) = output_and_peak(&pad_command(&[
        s(&input),
        s(&output),
        "--pads=0,0,8192,0",
        "--mode",
        "wrap",
        "--device",
        "cpu",
    ]));
    assert!(out.status.success(), "{:?} {:?}", out.status, stderr_lines(&out));
    let peak = peak.expect("wait4 on Linux");
    let (in_bytes, out_bytes) = (512u64 << 20, 1u64 << 30);
    assert_eq!(fs::metadata(&output).unwrap().len(), out_bytes + 128);
    let ratio = peak as f64 / (in_bytes + out_bytes) as f64;
    eprintln!("1 GiB output: peak RSS {} MiB = {ratio:.3} x (input + output)", peak >> 20);
    assert!(ratio <= 1.2, "peak RSS {peak} bytes is {ratio:.3} x input plus output");
}

/// Finding 8: `PadPlan::folded` multiplied lengths before checking for an empty output, so
/// a string tensor `[2^40, 2^40, 0]` overflowed in debug builds (which the tests are).
#[test]
fn huge_empty_string_tensors_pad_in_debug_builds() {
    let dir = scratch();
    let input = dir.path().join("empty.npy");
    fs::write(
        &input,
        raw_npy("{'descr': '<U2', 'fortran_order': False, 'shape': (1099511627776, 1099511627776, 0), }", &[]),
    )
    .unwrap();
    let output = dir.path().join("o.npy");
    for mode in ["constant", "edge", "reflect", "wrap", "symmetric"] {
        let out = run(&[s(&input), s(&output), "--pads=0,0,0,0,0,0", "--mode", mode]);
        assert!(out.status.success(), "{mode}: {:?} {:?}", out.status, stderr_lines(&out));
        let y = npy::parse(&fs::read(&output).unwrap()).unwrap();
        assert_eq!(y.shape, [1 << 40, 1 << 40, 0]);
    }
}

/// Round four: a successful run prints nothing on standard error, even where the backends'
/// libraries complain (no XDG_RUNTIME_DIR, as under cron or systemd): their chatter is kept
/// out unless -v.
#[cfg(target_os = "linux")]
#[test]
fn a_successful_run_prints_no_backend_chatter() {
    let dir = scratch();
    let input = small_input(dir.path());
    let output = dir.path().join("out.npy");
    for device in ["auto", "gpu"] {
        let out = Command::new(pad_exe())
            .args([s(&input), s(&output), "--pads=1,1", "--mode", "edge", "--device", device])
            .env_remove("XDG_RUNTIME_DIR")
            .env("RUST_LOG", "warn")
            .output()
            .unwrap();
        if device == "gpu" && !out.status.success() {
            continue; // no adapter here: that error is the run's own, and says so
        }
        assert!(out.status.success(), "{device}: {out:?}");
        assert!(out.stderr.is_empty(), "{device}: {:?}", String::from_utf8_lossy(&out.stderr));
        small_output_ok(&fs::read(&output).unwrap());
    }
}

/// Round four: where the output cannot be created (a link into a missing directory, a
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
