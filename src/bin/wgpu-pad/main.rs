//! `wgpu-pad`: pads a `.npy` tensor with ONNX Pad semantics, on the GPU or the CPU.
//!
//! Installed with `cargo install --path . --features cli`; `wgpu-pad --help` says how to
//! use it. On any error: exit 1, one `error: …` line last on standard error, and the
//! output neither created nor changed (see `output/`: the atomic replace in `mod.rs`, what a
//! path names in `destination.rs`, signals in `signals.rs`).

/// A test hook's environment variable (`WGPU_PAD_TEST_*`, `WGPU_PAD_PROGRESS_AFTER_MS`): read
/// only in debug builds, which are what `cargo test` builds; in a release binary the name is
/// not compiled in and the hook is `None`.
macro_rules! test_hook {
    ($name:literal) => {{
        #[cfg(debug_assertions)]
        let value = std::env::var_os($name);
        #[cfg(not(debug_assertions))]
        let value: Option<std::ffi::OsString> = None;
        value
    }};
}

mod output;

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use wgpu_pad::gpu::{ExecPath, GpuContext};
use wgpu_pad::{cpu, literal, npy, DataType, Mode, PadError, PadPlan, PadRequest, Tensor, DEFAULT_MAX_OUTPUT_BYTES};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Device {
    /// The GPU when there is a hardware adapter and the type has a GPU kernel, else the CPU
    /// (a CPU-emulated adapter such as llvmpipe only when named by WGPU_ADAPTER_NAME).
    Auto,
    /// The GPU (an adapter is required; strings and 4-bit types fall back to the CPU, visibly).
    Gpu,
    /// The CPU.
    Cpu,
}

const EXAMPLES: &str = "\
Pads are begins then ends, one per padded axis: for a [2, 3] input, --pads=0,1,0,2 adds one
column on the left and two on the right. Negative pads crop. The output keeps the input's
descr; '-' reads standard input or writes standard output.

Examples, one per mode:
  wgpu-pad x.npy y.npy --pads=1,1,1,1                       # constant: zeros around a 2-D x
  wgpu-pad x.npy y.npy --pads=0,2,0,2 --value=-1.5          # constant -1.5 on the last axis
  wgpu-pad x.npy y.npy --pads=2,2 --axes=-1 --mode reflect  # mirror, not repeating the edge
  wgpu-pad x.npy y.npy --pads=0,3,0,3 --mode edge           # repeat the edge element
  wgpu-pad x.npy y.npy --pads=1,0,1,0 --mode wrap           # circular, as torch's 'circular'
  wgpu-pad x.npy y.npy --pads=0,2,0,2 --mode symmetric      # mirror, repeating the edge
  wgpu-pad x.npy y.npy --pads=0,-1,0,-1                     # crop one column from each side
  wgpu-pad x.npy y.npy --pads=0,0,0,0 --interior=1,1        # a zero between neighbours (lax.pad)
  wgpu-pad x.npy - --pads=1,1 --device cpu -v > y.npy       # to standard output, on the CPU

Types: the descr says it (<f4, <i8, |b1, <U7, …); name it with --dtype where it cannot
(|V1 holds float8e4m3fn and friends, <V2 holds bfloat16) or to reinterpret unsigned integers.";

/// Pad a .npy tensor with ONNX Pad semantics (every mode, every type of Pad-24), on the GPU or the CPU.
#[derive(Parser, Debug)]
#[command(name = "wgpu-pad", version, about, after_help = EXAMPLES)]
struct Args {
    /// Input .npy file ('-' for standard input).
    input: PathBuf,
    /// Output .npy file ('-' for standard output). A file is replaced atomically, keeping its
    /// permissions; a FIFO or device is written into.
    output: PathBuf,
    /// Pads, begins then ends, comma-separated; negative pads crop; `--pads=` for none (rank 0).
    #[arg(long, allow_hyphen_values = true)]
    pads: String,
    /// The mode (its help lists `Mode::ALL`; parsed by the library, so that a wrong name
    /// is its `InvalidMode` message with exit code 1, not clap's usage error with 2).
    #[arg(long, default_value = "constant", help = format!("{}.", Mode::names()))]
    mode: String,
    /// The constant: a literal of the type (numbers, nan, inf, true/false, strings, complex as re,im).
    #[arg(long, allow_hyphen_values = true, conflicts_with = "value_npy")]
    value: Option<String>,
    /// The constant from a one-element .npy of the input's type.
    #[arg(long)]
    value_npy: Option<PathBuf>,
    /// Axes the pads apply to, comma-separated (negative counts from the back).
    #[arg(long, allow_hyphen_values = true)]
    axes: Option<String>,
    /// Interior padding (JAX's lax.pad): that many constants between neighbours, one per padded
    /// axis, comma-separated; constant mode only.
    #[arg(long, allow_hyphen_values = true)]
    interior: Option<String>,
    /// The ONNX type, where the descr cannot say it (V1, V2) or to reinterpret unsigned integers.
    #[arg(long, long_help = dtype_help())]
    dtype: Option<String>,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    device: Device,
    /// The most bytes the input may hold in memory (strings: their contents plus a String value, 24 bytes, each).
    #[arg(long, default_value_t = DEFAULT_MAX_OUTPUT_BYTES)]
    max_input_bytes: u64,
    /// The most bytes the output may hold in memory, and the most its .npy file may take.
    #[arg(long, default_value_t = DEFAULT_MAX_OUTPUT_BYTES)]
    max_output_bytes: u64,
    /// Replace an output file even where you could not write to it (its directory permitting).
    #[arg(long)]
    force: bool,
    /// Print what ran (path=gpu|cpu, the adapter or why not) and each phase's time on standard error.
    #[arg(short, long)]
    verbose: bool,
}

/// `--dtype`'s long help: every accepted name.
fn dtype_help() -> String {
    format!(
        "The ONNX type, where the descr cannot say it (V1, V2) or to reinterpret unsigned integers: {}; also {}.",
        DataType::names(),
        DataType::ALIASES
    )
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn,wgpu_hal::gles=off")).init();
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) if !e.use_stderr() => {
            print!("{e}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // clap's whole message: the error, the usage line and any tip ("a similar
            // argument exists"), its first line `error: ...` as every error here.
            eprint!("{e}");
            return ExitCode::FAILURE;
        }
    };
    output::handle_signals();
    let progress = Progress::start();
    let result = run(&args, &progress);
    progress.finish();
    match result {
        Ok(lines) => {
            if args.verbose {
                lines.iter().for_each(|l| eprintln!("{l}"));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn int_list(name: &str, text: &str) -> Result<Vec<i64>, String> {
    if text.trim().is_empty() {
        return Ok(vec![]);
    }
    text.split(',')
        .map(|v| {
            v.trim().parse::<i64>().map_err(|e| match e.kind() {
                std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                    format!("--{name}: {v:?} is out of range (a 64-bit integer: at most {})", i64::MAX)
                }
                _ => format!("--{name}: {v:?} is not an integer"),
            })
        })
        .collect()
}

/// Reads a `.npy` from a file or, for `-`, standard input: the header first, checked
/// (against the file's size where it has one) before any of the body is read.
fn read_npy(path: &Path, dtype: Option<DataType>, max_bytes: u64) -> Result<(Tensor, npy::Descr), String> {
    let stdin = path.as_os_str() == "-";
    let shown = if stdin { "standard input".to_string() } else { path.display().to_string() };
    let named = |e: &dyn std::fmt::Display| format!("{shown}: reading: {e}");
    let (mut reader, size): (Box<dyn Read>, Option<u64>) = if stdin {
        (Box::new(std::io::stdin().lock()), None)
    } else {
        let file = File::open(path).map_err(|e| named(&e))?;
        let meta = file.metadata().map_err(|e| named(&e))?;
        if meta.is_dir() {
            return Err(named(&"is a directory"));
        }
        let size = meta.is_file().then_some(meta.len());
        (Box::new(BufReader::with_capacity(1 << 16, file)), size)
    };
    let header = npy::read_header(&mut reader).map_err(|e| named(&e))?;
    if let (Some(size), Some(declared)) = (size, header.file_bytes()) {
        if size != declared {
            return Err(named(&format!(
                "npy: the header declares shape {:?} of {}, {declared} bytes in all, the file has {size}",
                header.shape, header.descr
            )));
        }
    }
    let tensor = npy::read_body(&mut reader, &header, dtype, max_bytes).map_err(|e| named(&e))?;
    // Bytes past the array are refused on a pipe as in a file (whose size was checked above).
    if size.is_none() {
        let mut more = [0u8; 1];
        if reader.read(&mut more).map_err(|e| named(&e))? > 0 {
            return Err(named(&format!(
                "npy: more bytes follow the array (its header declares shape {:?} of {})",
                header.shape, header.descr
            )));
        }
    }
    Ok((tensor, header.descr))
}

/// A spinner on standard error naming the phase, for runs past a second; nothing where
/// standard error is not a terminal (indicatif's standard-error target hides itself there),
/// and nothing for runs that end sooner.
#[derive(Clone)]
struct Progress(indicatif::ProgressBar);

impl Progress {
    fn start() -> Progress {
        let bar = indicatif::ProgressBar::hidden();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        let show = |bar: &indicatif::ProgressBar| {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
        };
        // The tests' `WGPU_PAD_PROGRESS_AFTER_MS` (debug builds only) moves the second (0: at
        // once, before the first phase, so that every phase is drawn).
        let after = test_hook!("WGPU_PAD_PROGRESS_AFTER_MS")
            .and_then(|v| v.to_str().and_then(|v| v.parse().ok()))
            .unwrap_or(1000);
        if after == 0 {
            show(&bar);
        } else {
            let shown = bar.clone();
            let _ = std::thread::Builder::new().name("progress".into()).spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(after));
                if !shown.is_finished() {
                    show(&shown);
                }
            });
        }
        // A signal that ends the run clears the line too, so the shell's prompt starts clean.
        let cleared = bar.clone();
        output::before_interrupted_exit(Box::new(move || cleared.finish_and_clear()));
        Progress(bar)
    }

    fn phase(&self, what: String) {
        self.0.set_message(what);
    }

    /// Clears the spinner, before anything else is printed.
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// Milliseconds since `start`, and a throughput of `bytes` over them.
fn phase(name: &str, start: std::time::Instant, bytes: u64) -> String {
    let s = start.elapsed().as_secs_f64();
    format!("{name}: {:.1} ms, {:.2} GB/s ({bytes} bytes)", s * 1e3, bytes as f64 / s.max(1e-9) / 1e9)
}

/// Pads as asked and writes the output; returns the lines `-v` prints: the path taken and
/// why, then each phase's time and throughput.
fn run(args: &Args, progress: &Progress) -> Result<Vec<String>, String> {
    let dtype = args.dtype.as_deref().map(str::parse::<DataType>).transpose().map_err(|e| e.to_string())?;
    let input_name =
        if args.input.as_os_str() == "-" { "standard input".to_string() } else { args.input.display().to_string() };
    progress.phase(format!("reading {input_name}"));
    let started = std::time::Instant::now();
    let (input, descr) = read_npy(&args.input, dtype, args.max_input_bytes)?;
    let read = phase("read", started, input.bytes().map_or(0, |b| b.len() as u64));
    let dtype = input.dtype();
    let mode: Mode = args.mode.parse().map_err(|e: PadError| e.to_string())?;
    let mut request = PadRequest::new(int_list("pads", &args.pads)?).mode(mode).max_output_bytes(args.max_output_bytes);
    if let Some(axes) = &args.axes {
        request = request.axes(int_list("axes", axes)?);
    }
    if let Some(interior) = &args.interior {
        request = request.interior(int_list("interior", interior)?);
    }
    if let Some(v) = &args.value {
        request = request.constant(literal::parse_value(dtype, v).map_err(|e| e.to_string())?);
    }
    if let Some(path) = &args.value_npy {
        // Read as the input is, so another byte order is converted (`>f4` for a `<f4` input);
        // another type or width is refused.
        let (value, value_descr) = read_npy(path, Some(dtype), args.max_input_bytes)?;
        let same_type = (value_descr.kind, value_descr.size) == (descr.kind, descr.size);
        if !same_type && dtype != DataType::String {
            return Err(format!("{}: descr {value_descr} differs from the input's {descr}", path.display()));
        }
        request = request.constant(value);
    }
    let plan = PadPlan::new(dtype, input.shape(), &request).map_err(message)?;

    let (gpu, why_cpu) = choose_device(args.device, dtype, args.verbose)?;
    let on = gpu.as_ref().map_or("the CPU".to_string(), |g| g.adapter_info().name.clone());
    progress.phase(format!("padding {:?} to {:?} on {on}", plan.in_shape(), plan.out_shape()));
    let started = std::time::Instant::now();
    let (padded, path) = match &gpu {
        Some(ctx) => {
            let padded = ctx.pad_blocking(&plan, &input).map_err(message)?;
            let info = ctx.adapter_info();
            let path = match padded.path {
                ExecPath::Gpu => format!("path=gpu adapter={} backend={:?}", info.name, info.backend),
                ExecPath::CpuFallback { reason } => format!("path=cpu reason=\"{reason}\""),
            };
            (padded.tensor, path)
        }
        None => (cpu::pad(&plan, &input).map_err(message)?, format!("path=cpu reason=\"{why_cpu}\"")),
    };
    let pad = phase("pad", started, plan.byte_sizes().map_or(0, |b| b.1));
    drop(input);
    let file_bytes = npy::encoded_len(&padded, &descr).map_err(|e| e.to_string())?;
    if file_bytes > args.max_output_bytes {
        return Err(format!(
            "too large: the output .npy would take {file_bytes} bytes, over the limit of {} bytes (--max-output-bytes)",
            args.max_output_bytes
        ));
    }
    let output_name =
        if args.output.as_os_str() == "-" { "standard output".to_string() } else { args.output.display().to_string() };
    progress.phase(format!("writing {output_name}"));
    let started = std::time::Instant::now();
    // The output's path is put before the writer's error ("out.npy: writing: No space left").
    let write = |w: &mut dyn std::io::Write| {
        npy::write(w, &padded, &descr).map_err(|e| match e {
            PadError::Npy { reason } => reason,
            e => e.to_string(),
        })
    };
    output::write_output(&args.output, args.force, write)?;
    Ok(vec![path, read, pad, phase("write", started, file_bytes)])
}

/// A library error as the command line says it: the output limit is named by its flag.
fn message(e: PadError) -> String {
    match e {
        PadError::OutputLimit { what, limit } => {
            format!("too large: {what}, over the limit of {limit} bytes (--max-output-bytes)")
        }
        e => e.to_string(),
    }
}

/// Runs `f` with standard error pointed at /dev/null unless `verbose`: probing the backends,
/// Vulkan and EGL libraries print to it themselves (`error: XDG_RUNTIME_DIR is invalid or not
/// set` where a service runs without one), which a successful run must not show. What `f`
/// returns, errors included, is printed by the caller afterwards.
#[cfg(unix)]
fn quietly<T>(verbose: bool, f: impl FnOnce() -> T) -> T {
    if verbose {
        return f();
    }
    // SAFETY: dup, open and dup2 on descriptors this function owns or on 2; each result is
    // checked, and standard error is restored before returning.
    unsafe {
        let saved = libc::dup(2);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if saved < 0 || null < 0 || libc::dup2(null, 2) < 0 {
            for fd in [saved, null] {
                if fd >= 0 {
                    libc::close(fd);
                }
            }
            return f();
        }
        libc::close(null);
        let out = f();
        libc::dup2(saved, 2);
        libc::close(saved);
        out
    }
}

#[cfg(not(unix))]
fn quietly<T>(_verbose: bool, f: impl FnOnce() -> T) -> T {
    f()
}

/// The GPU context to pad on, or none and why. `auto` takes the CPU path where the type
/// has no GPU kernel, where there is no adapter, and where the adapter is a CPU emulating a
/// GPU (llvmpipe, SwiftShader, WARP: slower than the CPU path on the same cores, and
/// twice the memory) unless it was asked for by name (`WGPU_ADAPTER_NAME`).
fn choose_device(device: Device, dtype: DataType, verbose: bool) -> Result<(Option<GpuContext>, String), String> {
    match device {
        Device::Cpu => return Ok((None, "--device cpu".into())),
        Device::Auto if !dtype.gpu_capable() => return Ok((None, format!("{dtype} has no GPU kernel"))),
        _ => {}
    }
    let ctx = match quietly(verbose, GpuContext::new_blocking) {
        Ok(ctx) => ctx,
        Err(e) if device == Device::Gpu => return Err(e.to_string()),
        Err(e) => return Ok((None, format!("no GPU: {e}"))),
    };
    let info = ctx.adapter_info();
    if device == Device::Auto
        && info.device_type == wgpu::DeviceType::Cpu
        && std::env::var_os("WGPU_ADAPTER_NAME").is_none()
    {
        let why = format!("the adapter, {}, is a CPU emulating a GPU; --device gpu uses it", info.name);
        return Ok((None, why));
    }
    Ok((Some(ctx), String::new()))
}
