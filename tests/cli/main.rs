//! The conformance corpus through the command line (the `wgpu-pad` binary), as the corpus
//! README drives it, plus the command line's own error handling and messages. By subject
//! beside it: `files.rs` (outputs, links, permissions), `signals.rs` (signals and the
//! terminal), `memory.rs` (caps, memory, hostile inputs).

#[path = "../common/mod.rs"]
mod common;
mod files;
mod memory;
mod signals;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use wgpu_pad::{npy, DataType, Tensor};

/// The binary that cargo builds for this test (it needs the `cli` feature).
pub fn pad_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_wgpu-pad"))
}

/// The binary with `args`, logging warnings only.
pub fn pad_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(pad_exe());
    cmd.args(args).env("RUST_LOG", "warn");
    cmd
}

pub fn run(args: &[&str]) -> Output {
    pad_command(args).output().unwrap()
}

/// Runs `cmd` to the end, as `Command::output` does, and measures the peak resident memory
/// of that run alone (`None` off Linux). Refusal tests bound it to show that a bad input was
/// refused before anything big was read or allocated: proof that does not depend on how
/// busy the machine is, as a timing would.
///
/// wait4(2) alone would not do: Linux charges a process, at exec, with the peak of the
/// address space it leaves, and a child spawned here leaves this test process's, hundreds
/// of MiB at times. So a fresh copy of this test binary, running only [`peak_helper`],
/// spawns `cmd` and reports what wait4 says of it.
pub fn output_and_peak(cmd: &Command) -> (Output, Option<u64>) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::process::ExitStatusExt;
        let dir = tempfile::Builder::new().prefix("wgpu-pad-peak-").tempdir().unwrap();
        let mut argv = cmd.get_program().as_bytes().to_vec();
        for arg in cmd.get_args() {
            argv.push(0);
            argv.extend_from_slice(arg.as_bytes());
        }
        std::fs::write(dir.path().join("argv"), argv).unwrap();
        let mut helper = Command::new(std::env::current_exe().unwrap());
        helper.args(["--exact", "peak_helper", "--ignored", "--quiet"]).env(PEAK_RUN, dir.path());
        for (key, value) in cmd.get_envs() {
            match value {
                Some(value) => helper.env(key, value),
                None => helper.env_remove(key),
            };
        }
        let ran = helper.output().unwrap();
        let report = std::fs::read_to_string(dir.path().join("rusage")).unwrap_or_else(|e| {
            panic!("the peak helper left no report ({e}): {}", String::from_utf8_lossy(&ran.stdout))
        });
        let (status, maxrss_kib) = report.split_once(' ').unwrap();
        let out = Output {
            status: std::process::ExitStatus::from_raw(status.parse().unwrap()),
            stdout: std::fs::read(dir.path().join("stdout")).unwrap(),
            stderr: std::fs::read(dir.path().join("stderr")).unwrap(),
        };
        (out, Some(maxrss_kib.parse::<u64>().unwrap() * 1024))
    }
    #[cfg(not(target_os = "linux"))]
    (cmd.output().unwrap(), None)
}

/// The folder through which [`output_and_peak`] and [`peak_helper`] talk.
#[cfg(target_os = "linux")]
const PEAK_RUN: &str = "WGPU_PAD_TEST_PEAK_RUN";

/// Not a test: [`output_and_peak`] runs it, in a fresh copy of this binary, to spawn the
/// command written in `$WGPU_PAD_TEST_PEAK_RUN/argv` and report its exit status and peak
/// resident memory. Run any other way it has nothing to do.
#[cfg(target_os = "linux")]
#[test]
#[ignore = "a helper that output_and_peak runs in a child process"]
fn peak_helper() {
    use std::os::unix::ffi::OsStrExt;
    let Some(dir) = std::env::var_os(PEAK_RUN).map(PathBuf::from) else { return };
    let argv = std::fs::read(dir.join("argv")).unwrap();
    let mut argv = argv.split(|&b| b == 0).map(std::ffi::OsStr::from_bytes);
    #[allow(clippy::zombie_processes)] // reaped by wait4 below, which also gives its rusage
    let child = Command::new(argv.next().unwrap())
        .args(argv)
        .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid, and wait4 fills it for our own child, which
    // nothing else reaps (`child` is never waited on).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4: {}", std::io::Error::last_os_error());
    std::fs::write(dir.join("rusage"), format!("{status} {}", usage.ru_maxrss)).unwrap();
}

/// A peak resident memory far below any input these tests refuse (the smallest is 1 GiB
/// of body; a refused run peaks near 13 MiB).
pub const SMALL_PEAK: u64 = 64 << 20;

pub fn stderr_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr).lines().map(str::to_string).collect()
}

/// Checks an error run: non-zero exit, one `error:` line, last, or followed only by clap's
/// usage line and tips for a command line it refused.
pub fn assert_clean_error(out: &Output, what: &str) {
    let lines = stderr_lines(out);
    // The README promises exit code 1 for every error.
    assert_eq!(out.status.code(), Some(1), "{what}: {:?}", out.status);
    assert_eq!(lines.iter().filter(|l| l.starts_with("error:")).count(), 1, "{what}: {lines:?}");
    let at = lines.iter().position(|l| l.starts_with("error: ")).unwrap();
    let usage = |l: &&String| {
        l.is_empty() || l.starts_with(' ') || l.starts_with("Usage:") || l.starts_with("For more information")
    };
    assert!(lines[at + 1..].iter().all(|l| usage(&l)), "{what}: after the error line: {lines:?}");
}

fn corpus_through_cli(device: &str, cases: Vec<common::Case>, corpus: &str) {
    let tmp = std::env::temp_dir().join(format!("wgpu-pad-cli-{corpus}-{device}-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let failures: Vec<String> = std::thread::scope(|s| {
        let chunks: Vec<_> = cases.chunks(cases.len().div_ceil(4).max(1)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| s.spawn(|| chunk.iter().filter_map(|c| check_case(c, device, &tmp).err()).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    std::fs::remove_dir_all(&tmp).ok();
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

fn check_case(case: &common::Case, device: &str, tmp: &Path) -> Result<(), String> {
    let out_path = tmp.join(format!("{}.npy", case.name));
    let join = |v: &[i64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",");
    let mut args = vec![
        case.dir.join("input.npy").display().to_string(),
        out_path.display().to_string(),
        "--dtype".into(),
        case.dtype.name().into(),
        "--mode".into(),
        case.mode.clone(),
        format!("--pads={}", join(&case.pads)),
        "--device".into(),
        device.into(),
        "-v".into(),
    ];
    if let Some(axes) = &case.axes {
        args.push(format!("--axes={}", join(axes)));
    }
    if let Some(interior) = &case.interior {
        args.push(format!("--interior={}", join(interior)));
    }
    if case.dir.join("value.npy").exists() {
        args.push("--value-npy".into());
        args.push(case.dir.join("value.npy").display().to_string());
    }
    let out = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let name = &case.name;
    match &case.expect {
        Err(kind) => {
            if out.status.success() {
                return Err(format!("{name}: expected an error, exited 0"));
            }
            // One error line, last, and the error the corpus expects, not any error.
            let lines = stderr_lines(&out);
            let errors = lines.iter().filter(|l| l.starts_with("error")).count();
            let last = lines.last().filter(|l| l.starts_with("error: ") && errors == 1);
            let Some(last) = last else { return Err(format!("{name}: not one error line, last: {lines:?}")) };
            if !last.contains(common::error_words(kind)) {
                return Err(format!("{name}: expected a {kind:?} error, got {last:?}"));
            }
            if out_path.exists() {
                return Err(format!("{name}: output file created on error"));
            }
        }
        Ok(_) => {
            if !out.status.success() {
                return Err(format!("{name}: failed: {:?}", stderr_lines(&out)));
            }
            let lines = stderr_lines(&out);
            let path_line = lines.iter().find(|l| l.starts_with("path=")).cloned().unwrap_or_default();
            let want = match device {
                "cpu" => "path=cpu",
                _ if case.dtype.gpu_capable() => "path=gpu adapter=",
                _ => "path=cpu reason=",
            };
            if !path_line.starts_with(want) {
                return Err(format!("{name}: -v said {path_line:?}, expected {want}…"));
            }
            let got = npy::parse(&std::fs::read(&out_path).map_err(|e| format!("{name}: {e}"))?)
                .map_err(|e| format!("{name}: {e}"))?;
            let expected = npy::parse(&std::fs::read(case.dir.join("expected.npy")).unwrap()).unwrap();
            if got.descr != expected.descr || got.shape != expected.shape || got.data != expected.data {
                return Err(format!(
                    "{name}: got {} {:?}, expected {} {:?} (data equal: {})",
                    got.descr,
                    got.shape,
                    expected.descr,
                    expected.shape,
                    got.data == expected.data
                ));
            }
            std::fs::remove_file(&out_path).ok();
        }
    }
    Ok(())
}

#[test]
fn corpus_through_cli_on_cpu() {
    corpus_through_cli("cpu", common::cases(), "onnx");
}

#[test]
fn corpus_through_cli_on_gpu() {
    if common::gpu().is_none() {
        return;
    }
    corpus_through_cli("gpu", common::cases(), "onnx");
}

/// The interior corpus (`--interior`), on both devices.
#[test]
fn interior_corpus_through_cli() {
    corpus_through_cli("cpu", common::interior_cases(), "interior");
    if common::gpu().is_some() {
        corpus_through_cli("gpu", common::interior_cases(), "interior");
    }
}

#[test]
fn cli_errors_are_one_line_and_leave_output_untouched() {
    let dir = std::env::temp_dir().join(format!("wgpu-pad-cli-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.npy");
    let x = wgpu_pad::Tensor::from_slice(wgpu_pad::DataType::Float32, vec![3], &[1f32, 2., 3.]).unwrap();
    std::fs::write(&input, npy::to_bytes(&x, &npy::Descr::parse("<f4").unwrap()).unwrap()).unwrap();
    let existing = dir.join("existing.npy");
    std::fs::write(&existing, b"keep me").unwrap();
    let (i, e) = (input.to_str().unwrap(), existing.to_str().unwrap());
    let missing_dir = dir.join("no/such/dir/out.npy");
    for (what, args) in [
        ("bad mode", vec![i, e, "--pads=1,1", "--mode", "mirror", "--device", "cpu"]),
        ("bad pads", vec![i, e, "--pads", "1,x", "--device", "cpu"]),
        ("pads length", vec![i, e, "--pads", "-1,2,3", "--device", "cpu"]),
        ("bad value", vec![i, e, "--pads=1,1", "--value", "abc", "--device", "cpu"]),
        ("missing input", vec!["/no/such.npy", e, "--pads=1,1"]),
        ("unknown flag", vec![i, e, "--pads=1,1", "--frobnicate"]),
        ("bad dtype", vec![i, e, "--pads=1,1", "--dtype", "float33"]),
        ("reflect empty", vec![i, e, "--pads=-3,1", "--mode", "reflect", "--device", "cpu"]),
    ] {
        let out = run(&args);
        assert_clean_error(&out, what);
        assert_eq!(std::fs::read(&existing).unwrap(), b"keep me", "{what}: output changed");
    }
    let out = run(&[i, missing_dir.to_str().unwrap(), "--pads=1,1", "--device", "cpu"]);
    assert_clean_error(&out, "missing output directory");
    // Both pads spellings work, and -v reports the path.
    let o = dir.join("o.npy");
    for pads in [&["--pads", "-1,2"][..], &["--pads=-1,2"][..]] {
        let mut args = vec![i, o.to_str().unwrap(), "--device", "cpu", "-v", "--mode", "edge"];
        args.extend_from_slice(pads);
        let out = run(&args);
        assert!(out.status.success(), "{:?}", stderr_lines(&out));
        let lines = stderr_lines(&out);
        assert_eq!(lines[0], "path=cpu reason=\"--device cpu\"");
        for (line, phase) in lines[1..].iter().zip(["read: ", "pad: ", "write: "]) {
            assert!(line.starts_with(phase) && line.contains(" ms, ") && line.ends_with(" bytes)"), "{lines:?}");
        }
        assert_eq!(lines.len(), 4, "{lines:?}");
        let y = npy::to_tensor(&npy::parse(&std::fs::read(&o).unwrap()).unwrap(), None).unwrap();
        assert_eq!(y.as_slice::<f32>().unwrap(), &[2., 3., 3., 3.]);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A .npy file from a raw header dict and data.
pub fn raw_npy(header: &str, data: &[u8]) -> Vec<u8> {
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend_from_slice(&(header.len() as u16).to_le_bytes());
    v.extend_from_slice(header.as_bytes());
    v.extend_from_slice(data);
    v
}

#[test]
fn hostile_npy_files_are_refused_cheaply_and_cleanly() {
    let dir = std::env::temp_dir().join(format!("wgpu-pad-cli-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let existing = dir.join("existing.npy");
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("empty file", vec![]),
        ("truncated magic", b"\x93NUM".to_vec()),
        ("truncated header", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", &[])[..30].to_vec()),
        ("header length past the file", b"\x93NUMPY\x01\x00\xff\xff{'descr'".to_vec()),
        ("malformed dict", raw_npy("{'descr': '<f4' 'shape': (2,)}", &[0; 8])),
        ("shape not a tuple", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': 2, }", &[0; 8])),
        ("shape disagrees with length", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", &[0; 8])),
        (
            "10^18 elements",
            raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", &[0; 8]),
        ),
        ("unknown descr", raw_npy("{'descr': '<S4', 'fortran_order': False, 'shape': (2,), }", &[0; 8])),
        ("object descr", raw_npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", &[0; 16])),
        ("negative dim", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", &[0; 8])),
        ("unknown key", raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", &[0; 8])),
    ];
    for (what, bytes) in &files {
        let input = dir.join("in.npy");
        std::fs::write(&input, bytes).unwrap();
        std::fs::write(&existing, b"keep me").unwrap();
        let (out, peak) = output_and_peak(&pad_command(&[
            input.to_str().unwrap(),
            existing.to_str().unwrap(),
            "--pads=1,1",
            "--device",
            "cpu",
        ]));
        assert_clean_error(&out, what);
        assert!(peak.is_none_or(|p| p < SMALL_PEAK), "{what}: peak resident memory {peak:?} bytes");
        assert_eq!(std::fs::read(&existing).unwrap(), b"keep me", "{what}: output changed");
    }
    // A 4-bit element with its high nibble set.
    let input = dir.join("nibble.npy");
    std::fs::write(&input, raw_npy("{'descr': '|V1', 'fortran_order': False, 'shape': (2,), }", &[0x01, 0x1f]))
        .unwrap();
    let out = run(&[input.to_str().unwrap(), existing.to_str().unwrap(), "--pads=1,1", "--dtype", "int4"]);
    assert_clean_error(&out, "high nibble");
    assert!(stderr_lines(&out).last().unwrap().contains("high nibble"));
    // Outputs that cannot be written: a missing directory, a path under a file.
    let good = dir.join("good.npy");
    std::fs::write(&good, raw_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", &[1, 0, 2, 0])).unwrap();
    for target in [dir.join("missing/dir/out.npy"), existing.join("under_a_file.npy")] {
        let out = run(&[good.to_str().unwrap(), target.to_str().unwrap(), "--pads=1,1", "--device", "cpu"]);
        assert_clean_error(&out, &target.display().to_string());
        assert!(!target.exists());
    }
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep me");
    // Leftover temporary files: none.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fortran_order_and_big_endian_are_read_correctly() {
    let dir = std::env::temp_dir().join(format!("wgpu-pad-cli-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // [[1, 2, 3], [4, 5, 6]] as big-endian i2 in Fortran order: 1 4 2 5 3 6.
    let data: Vec<u8> = [1i16, 4, 2, 5, 3, 6].iter().flat_map(|v| v.to_be_bytes()).collect();
    let input = dir.join("f.npy");
    std::fs::write(&input, raw_npy("{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }", &data)).unwrap();
    let output = dir.join("o.npy");
    let out = run(&[
        input.to_str().unwrap(),
        output.to_str().unwrap(),
        "--pads=0,1,0,0",
        "--mode",
        "edge",
        "--device",
        "cpu",
    ]);
    assert!(out.status.success(), "{:?}", stderr_lines(&out));
    let y = npy::parse(&std::fs::read(&output).unwrap()).unwrap();
    // The output keeps the input's descr (big-endian), in C order.
    assert_eq!(y.descr.to_string(), ">i2");
    assert_eq!(npy::to_tensor(&y, None).unwrap().as_slice::<i16>().unwrap(), &[1, 1, 2, 3, 4, 4, 5, 6]);
    std::fs::remove_dir_all(&dir).ok();
}

/// A constant in the other byte order (`>f4` for a `<f4` input) is converted, as the input
/// path converts one: the same output as the same value little-endian. Another width is
/// still refused.
#[test]
fn a_constant_in_the_other_byte_order_is_converted() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.npy");
    std::fs::write(&input, raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", &[0; 8])).unwrap();
    let value = |name: &str, descr: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            raw_npy(&format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (), }}"), bytes),
        )
        .unwrap();
        path
    };
    let little = value("le.npy", "<f4", &(-1.5f32).to_le_bytes());
    let big = value("be.npy", ">f4", &(-1.5f32).to_be_bytes());
    let wide = value("f8.npy", "<f8", &(-1.5f64).to_le_bytes());
    let pad = |value: &Path, out: &str| {
        let out = dir.path().join(out);
        let args = [input.to_str().unwrap(), out.to_str().unwrap(), "--pads=1,1", "--device", "cpu", "--value-npy"];
        (run(&[&args[..], &[value.to_str().unwrap()]].concat()), out)
    };
    let (ok, from_little) = pad(&little, "le-out.npy");
    assert!(ok.status.success(), "{:?}", stderr_lines(&ok));
    let (ok, from_big) = pad(&big, "be-out.npy");
    assert!(ok.status.success(), "a big-endian constant: {:?}", stderr_lines(&ok));
    assert_eq!(std::fs::read(&from_big).unwrap(), std::fs::read(&from_little).unwrap());
    let y = npy::parse(&std::fs::read(&from_big).unwrap()).unwrap();
    assert_eq!(npy::to_tensor(&y, None).unwrap().as_slice::<f32>().unwrap(), &[-1.5, 0.0, 0.0, -1.5]);
    let (refused, out) = pad(&wide, "f8-out.npy");
    assert_clean_error(&refused, "a float64 constant for float32");
    let line = stderr_lines(&refused).pop().unwrap();
    assert!(line.contains("f8.npy") && line.contains("<f8"), "{line}");
    assert!(!out.exists());
}

/// An output in a directory that is not there: the OS's own words and the path.
#[test]
fn a_missing_output_directory_says_so_in_the_os_words() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("x.npy");
    std::fs::write(&input, raw_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", &[1, 2])).unwrap();
    let out_path = dir.path().join("no-such-dir").join("y.npy");
    let out = run(&[input.to_str().unwrap(), out_path.to_str().unwrap(), "--pads=1,1", "--device", "cpu"]);
    assert_clean_error(&out, "a missing output directory");
    let line = stderr_lines(&out).pop().unwrap();
    assert!(line.contains(out_path.to_str().unwrap()) && line.contains("No such file or directory"), "{line}");
}

/// A 200 MiB output on the GPU through the command line, past lavapipe's 128 MiB
/// storage-binding limit: `path=gpu`, and the same file as the CPU path writes.
#[test]
fn a_200_mib_output_runs_on_the_gpu() {
    if common::gpu().is_none() {
        return;
    }
    let tmp = std::env::temp_dir().join(format!("wgpu-pad-cli-200mib-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    // f32 [1, 50, 1024, 1024] padded by 2 on H and W: 50 * 1028 * 1028 * 4 bytes = 201.5 MiB.
    let n = 50 * 1024 * 1024usize;
    let data: Vec<u8> = (0..n * 4).map(|i| (i as u8).wrapping_mul(13) ^ (i >> 20) as u8).collect();
    let input = tmp.join("in.npy");
    std::fs::write(&input, raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 50, 1024, 1024), }", &data))
        .unwrap();
    drop(data);
    let (gpu_out, cpu_out) = (tmp.join("gpu.npy"), tmp.join("cpu.npy"));
    let mut outputs = Vec::new();
    for (device, out) in [("gpu", &gpu_out), ("cpu", &cpu_out)] {
        let o = run(&[
            input.to_str().unwrap(),
            out.to_str().unwrap(),
            "--pads=0,0,2,2,0,0,2,2",
            "--mode",
            "reflect",
            "--device",
            device,
            "-v",
        ]);
        assert!(o.status.success(), "{device}: {:?}", stderr_lines(&o));
        outputs.push(String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr));
    }
    assert!(outputs[0].contains("path=gpu"), "{}", outputs[0]);
    assert!(outputs[1].contains("path=cpu"), "{}", outputs[1]);
    let (g, c) = (std::fs::read(&gpu_out).unwrap(), std::fs::read(&cpu_out).unwrap());
    std::fs::remove_dir_all(&tmp).ok();
    assert!(g.len() > 200 << 20, "{} bytes", g.len());
    assert!(g == c, "the GPU's output file differs from the CPU's");
    // On 128 MiB bindings (lavapipe's, WebGPU's default) that pad is several dispatches: the
    // program says so without a device.
    use wgpu_pad::gpu::{BufferView, DeviceLimits, Program};
    let request = wgpu_pad::PadRequest::new(vec![0, 0, 2, 2, 0, 0, 2, 2]).mode(wgpu_pad::Mode::Reflect);
    let plan = wgpu_pad::PadPlan::new(wgpu_pad::DataType::Float32, &[1, 50, 1024, 1024], &request).unwrap();
    let (i, o) = plan.byte_sizes().unwrap();
    let limits = DeviceLimits { max_buffer: 1 << 40, ..DeviceLimits::WEBGPU_DEFAULT };
    let program = Program::new(&plan, &BufferView::dense(0, i), &BufferView::dense(0, o), &limits).unwrap();
    assert!(program.dispatches().len() > 1, "one dispatch past 128 MiB bindings");
}

/// I/O errors name the user's path (standard input and output by name) and say
/// reading or writing, small outputs and large alike; bytes after the array are refused on
/// standard input as in a file; an integer out of range is said to be.
#[cfg(target_os = "linux")]
#[test]
fn io_errors_name_the_path_and_what_failed() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let write_npy = |name: &str, n: usize| {
        let x = wgpu_pad::Tensor::from_bytes(wgpu_pad::DataType::Uint8, vec![n], vec![7; n]).unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, npy::to_bytes(&x, &npy::Descr::parse("|u1").unwrap()).unwrap()).unwrap();
        path
    };
    let (small, large) = (write_npy("small.npy", 3), write_npy("large.npy", 1 << 20));
    for input in [&small, &large] {
        let out = run(&[input.to_str().unwrap(), "/dev/full", "--pads=1,1", "--device", "cpu"]);
        assert_clean_error(&out, "/dev/full");
        let line = stderr_lines(&out).pop().unwrap();
        assert!(line.starts_with("error: /dev/full: writing: No space left on device"), "{line}");
    }
    // Standard input: named so, not "-"; a stray byte after the array refused, as in a file.
    let mut bytes = std::fs::read(&small).unwrap();
    for (what, extra, want) in
        [("garbage", &b"NOTNPY"[..], "standard input: reading: npy"), ("trailing", &b"x"[..], "more bytes follow")]
    {
        let input = if what == "garbage" { extra.to_vec() } else { [&bytes[..], extra].concat() };
        let mut child = pad_command(&["-", "-", "--pads=1,1", "--device", "cpu"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_clean_error(&out, what);
        let line = stderr_lines(&out).pop().unwrap();
        assert!(line.contains(want), "{what}: {line}");
    }
    bytes.push(b'x');
    let trailing = dir.path().join("trailing.npy");
    std::fs::write(&trailing, &bytes).unwrap();
    let out = run(&[trailing.to_str().unwrap(), "-", "--pads=1,1", "--device", "cpu"]);
    assert_clean_error(&out, "trailing bytes in a file");
    let out = run(&[small.to_str().unwrap(), "-", "--pads=99999999999999999999,1", "--device", "cpu"]);
    let line = stderr_lines(&out).pop().unwrap();
    assert!(line.contains("out of range") && !line.contains("not an integer"), "{line}");
}

/// `--device auto` does not take a CPU emulating a GPU (llvmpipe) over the CPU
/// path unless it is asked for by name, and `-v` says which path ran and why.
#[test]
fn auto_prefers_the_cpu_path_over_an_emulated_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.npy");
    let x = wgpu_pad::Tensor::from_slice(wgpu_pad::DataType::Float32, vec![3], &[1f32, 2., 3.]).unwrap();
    std::fs::write(&input, npy::to_bytes(&x, &npy::Descr::parse("<f4").unwrap()).unwrap()).unwrap();
    let out = dir.path().join("out.npy");
    let args = [input.to_str().unwrap(), out.to_str().unwrap(), "--pads=1,1", "-v"];
    let o = run(&args);
    assert!(o.status.success(), "{:?}", stderr_lines(&o));
    let path = stderr_lines(&o).into_iter().find(|l| l.starts_with("path=")).unwrap();
    // A power preference wgpu cannot read is an error, not silently another adapter.
    let bogus = pad_command(&[args[0], args[1], "--pads=1,1", "--device", "gpu"])
        .env("WGPU_POWER_PREF", "bogus")
        .output()
        .unwrap();
    assert_clean_error(&bogus, "WGPU_POWER_PREF=bogus");
    assert!(stderr_lines(&bogus).pop().unwrap().contains("WGPU_POWER_PREF=\"bogus\" is none of low, high or none"));
    let emulated = ["llvmpipe", "SwiftShader", "WARP"];
    if path.starts_with("path=gpu") {
        assert!(!emulated.iter().any(|e| path.contains(e)), "auto took an emulated GPU: {path}");
        return;
    }
    assert!(path.starts_with("path=cpu reason=\""), "{path}");
    if path.contains("llvmpipe") {
        assert!(path.contains("a CPU emulating a GPU"), "{path}");
        // Named, it is taken.
        let o = pad_command(&args).env("WGPU_ADAPTER_NAME", "llvmpipe").output().unwrap();
        let path = stderr_lines(&o).into_iter().find(|l| l.starts_with("path=")).unwrap_or_default();
        assert!(path.starts_with("path=gpu adapter=llvmpipe"), "{path}");
    } else if std::env::var_os("WGPU_PAD_REQUIRE_GPU").is_some() {
        // CI has lavapipe: auto must have seen it and said so.
        panic!("auto went to the CPU without naming the emulated adapter: {path}");
    }
}

/// Clap's whole message, not its first line: which arguments are missing, the
/// tip for a misspelt flag, the values a flag takes; every type name in the unknown-type
/// error and in `--help`.
#[test]
fn usage_errors_say_what_to_do() {
    let checks: [(&[&str], &[&str]); 4] = [
        (&[], &["<INPUT>", "<OUTPUT>", "--pads", "Usage:"]),
        (&["in.npy", "out.npy", "--pad=1,1"], &["--pads", "Usage:"]),
        (&["in.npy", "out.npy", "--pads=1,1", "--device"], &["auto", "gpu", "cpu"]),
        (
            &["in.npy", "out.npy", "--pads=1,1", "--dtype", "float33"],
            &["float8e4m3fn", "bfloat16", "float8_e4m3fn", "BFLOAT16"],
        ),
    ];
    for (args, wanted) in checks {
        let out = run(args);
        assert_clean_error(&out, &format!("{args:?}"));
        let text = String::from_utf8_lossy(&out.stderr);
        for w in wanted {
            assert!(text.contains(w), "{args:?}: no {w:?} in:\n{text}");
        }
    }
    let help = String::from_utf8_lossy(&run(&["--help"]).stdout).into_owned();
    for name in wgpu_pad::DataType::ALL.map(|t| t.name()) {
        assert!(help.contains(name), "--help does not name {name}");
    }
}

#[test]
fn help_and_version() {
    let out = run(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for mode in ["constant", "reflect", "edge", "wrap", "symmetric"] {
        assert!(help.contains(&format!("--mode {mode}")) || mode == "constant", "no {mode} example in:\n{help}");
    }
    for flag in [
        "--pads",
        "--value",
        "--value-npy",
        "--axes",
        "--interior",
        "--dtype",
        "--device",
        "--max-output-bytes",
        "--verbose",
    ] {
        assert!(help.contains(flag), "{flag} missing from --help");
    }
    let out = run(&["--version"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("wgpu-pad {}", env!("CARGO_PKG_VERSION")));
}

// What the subject files (files.rs, signals.rs, memory.rs) share: scratch directories, small
// and sparse inputs, runs held at a known point.

/// A scratch directory of the test's own.
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("wgpu-pad-safety-").tempdir().unwrap()
}

/// A path as text (the tests' paths are UTF-8).
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A small f32 input file, `[1, 2, 3]`.
pub fn small_input(dir: &Path) -> PathBuf {
    let x = Tensor::from_slice(DataType::Float32, vec![3], &[1f32, 2., 3.]).unwrap();
    let path = dir.join("in.npy");
    fs::write(&path, npy::to_bytes(&x, &npy::Descr::parse("<f4").unwrap()).unwrap()).unwrap();
    path
}

/// What `--pads=1,1 --mode edge` makes of [`small_input`].
pub fn small_output_ok(bytes: &[u8]) {
    let y = npy::to_tensor(&npy::parse(bytes).unwrap(), None).unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap(), &[1., 1., 2., 3., 3.]);
}

/// A file of zeros declaring `shape` of `descr`: sparse, so large ones cost no disk.
pub fn zeros_npy(path: &Path, descr: &str, shape: &[usize]) {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({},), }}", dims.join(", "));
    let head = raw_npy(&header, &[]);
    let body: u64 = shape.iter().product::<usize>() as u64 * npy::Descr::parse(descr).unwrap().item_bytes() as u64;
    let mut f = fs::File::create(path).unwrap();
    f.write_all(&head).unwrap();
    f.set_len(head.len() as u64 + body).unwrap();
}

/// The binary's test hooks (`WGPU_PAD_TEST_*`, `WGPU_PAD_PROGRESS_AFTER_MS`) exist only in
/// debug builds, as this test binary's own profile says: a test that needs one says so
/// rather than waiting on a hook that is not there.
pub fn assert_test_hooks() {
    if !cfg!(debug_assertions) {
        panic!("this test drives the binary through its test hooks, which only debug builds have: run `cargo test`, not `cargo test --release`");
    }
}

/// Starts the pad `args` held just before it writes its output's bytes (its new file open,
/// nothing in place: the binary's `WGPU_PAD_TEST_HOLD`), with `setup` applied to the
/// command; returns the child and the marker that holds it (remove it to let the run go on).
#[cfg(unix)]
pub fn start_held(dir: &Path, args: &[&str], setup: impl FnOnce(&mut Command)) -> (std::process::Child, PathBuf) {
    assert_test_hooks();
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

/// The entries of `dir` but the ones named.
pub fn entries_but(dir: &Path, keep: &[&str]) -> Vec<String> {
    let mut left: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.retain(|n| !keep.contains(&n.as_str()));
    left.sort();
    left
}
