//! Signals and what reaches the terminal: an interrupted run leaves nothing behind, ignored
//! signals stay ignored, the progress line shows only on a terminal and is cleared on a
//! signal, and a successful run prints nothing on standard error. Runs are held at known
//! points (`WGPU_PAD_TEST_HOLD`, a FIFO the test stops feeding), never raced.

use std::fs;
use std::io::Write;
use std::process::{Command, Stdio};

use super::{
    assert_test_hooks, entries_but, pad_command, pad_exe, s, scratch, small_input, small_output_ok, start_held,
    zeros_npy,
};

/// Sends `signal` to `child`.
#[cfg(unix)]
fn send(child: &std::process::Child, signal: i32) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
}

/// Gives `cmd` default dispositions for SIGINT, SIGTERM and SIGHUP: the caller's, not the
/// test runner's. A runner started in the background of a non-interactive shell (as CI is)
/// ignores SIGINT, a child would inherit that, and the binary rightly keeps an ignored signal
/// ignored (`ignored_signals_stay_ignored`), which the tests that send one are not about.
#[cfg(unix)]
fn default_dispositions(cmd: &mut Command) {
    // SAFETY: signal(2) is async-signal-safe; it only sets the child's dispositions.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(cmd, || {
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(s, libc::SIG_DFL);
            }
            Ok(())
        });
    }
}

/// A run killed while writing left its partial temporary file. SIGINT, SIGTERM
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
                default_dispositions(cmd);
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

/// Signals the caller ignored (`nohup`, `trap '' INT`) stay ignored: sent while
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

/// Whether `script` (util-linux) is here to make a terminal with; says so where it is not.
#[cfg(target_os = "linux")]
fn has_script() -> bool {
    let here = Command::new("script").arg("--version").output().is_ok();
    if !here {
        eprintln!("no `script` (util-linux) to make a terminal with: not checked");
    }
    here
}

/// A run past the spinner's delay shows each phase on a terminal (a
/// pseudo-terminal from `script`), and nothing where standard error is not a terminal.
#[cfg(target_os = "linux")]
#[test]
fn progress_shows_on_a_terminal_only() {
    assert_test_hooks();
    if !has_script() {
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

/// A signal on a terminal clears the progress line, so the shell's prompt does
/// not continue it, and standard input is named as such. The run is held reading its input
/// from a FIFO the test feeds part of, then stops feeding: no race with the run's end.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_clears_the_progress_line() {
    use std::io::Read;
    assert_test_hooks();
    if !has_script() {
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
    let mut command = Command::new("script");
    command.args(["-qec", &cmd, "/dev/null"]).env("WGPU_PAD_PROGRESS_AFTER_MS", "0");
    command.stdin(Stdio::null()).stdout(Stdio::piped());
    // (Through script and its shell, which keep the dispositions they are given.)
    default_dispositions(&mut command);
    let mut script = command.spawn().unwrap();
    // Whatever goes wrong below, the run and its terminal do not outlive the test.
    // (Only while it is not reaped: its pid could be another process's after that.)
    struct KillOnDrop(Option<u32>);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            if let Some(pid) = self.0 {
                // SAFETY: kill(2) on the test's own child, not yet reaped.
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            }
        }
    }
    let mut guard = KillOnDrop(Some(script.id()));
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
    // The header and a page of the body, then nothing more: the run waits reading. Opened
    // for reading too, so that the open never blocks (Linux), whether or not the run has
    // opened its end yet, and the run never sees the end of its input.
    let mut feed = fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
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
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = script.try_wait().unwrap() {
            guard.0 = None;
            break status;
        }
        assert!(started.elapsed().as_secs() < 60, "the run did not end on SIGINT");
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
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

/// A successful run prints nothing on standard error, even where the backends'
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
