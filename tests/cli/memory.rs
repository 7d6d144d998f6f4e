//! Memory and hostile inputs: string contents counted against the cap, interior NULs kept,
//! running out of memory an error, headers checked before a body is read, a refused thread
//! degrading, the peak of a 1 GiB output, and huge empty string tensors.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use wgpu_pad::npy;

use super::{
    assert_clean_error, output_and_peak, pad_command, pad_exe, raw_npy, run, s, scratch, stderr_lines, zeros_npy,
    SMALL_PEAK,
};

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

/// The reader ended a string at its first NUL (`['a\x00b', '\x00x']` came back
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

/// Strings were counted at 24 bytes each, so a 4 MiB `<U1048576` file padded to
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

/// Only the first allocation was fallible; the 4-bit path's unpacked buffers
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

/// The whole input was read before anything was checked (a 3 GiB file with a bad
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

/// `WGPU_PAD_CPU_THREADS=2000` panicked (`failed to spawn thread`, exit 101) when
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

/// The command line held about 3x the output at its peak. For a 1 GiB output from
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

/// `PadPlan::folded` multiplied lengths before checking for an empty output, so
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
