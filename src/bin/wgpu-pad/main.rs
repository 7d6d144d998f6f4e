//! `wgpu-pad`: pads a `.npy` tensor with ONNX Pad semantics, on the GPU or the CPU.
//!
//! Installed with `cargo install --path . --features cli`; `wgpu-pad --help` says how to
//! use it. On any error: exit 1, one `error: …` line last on standard error, and the
//! output neither created nor changed (see `output.rs`).

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
    /// The GPU when there is an adapter and the type has a GPU kernel, else the CPU.
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
  wgpu-pad x.npy - --pads=1,1 --device cpu -v > y.npy       # to standard output, on the CPU

Types: the descr says it (<f4, <i8, |b1, <U7, …); name it with --dtype where it cannot
(|V1 holds float8e4m3fn and friends, <V2 holds bfloat16) or to reinterpret unsigned integers.";

/// Pad a .npy tensor with ONNX Pad semantics (every mode, all 24 types), on the GPU or the CPU.
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
    /// constant, reflect, edge, wrap or symmetric.
    #[arg(long, default_value = "constant")]
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
    /// The ONNX type, where the descr cannot say it (V1, V2) or to reinterpret unsigned integers.
    #[arg(long)]
    dtype: Option<String>,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = Device::Auto)]
    device: Device,
    /// The most bytes the input may hold in memory (strings: their contents plus 24 each).
    #[arg(long, default_value_t = DEFAULT_MAX_OUTPUT_BYTES)]
    max_input_bytes: u64,
    /// The most bytes the output may hold in memory, and the most its .npy file may take.
    #[arg(long, default_value_t = DEFAULT_MAX_OUTPUT_BYTES)]
    max_output_bytes: u64,
    /// Replace an output file even where you could not write to it (its directory permitting).
    #[arg(long)]
    force: bool,
    /// Print what ran (path=gpu|cpu, adapter, backend) on standard error.
    #[arg(short, long)]
    verbose: bool,
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
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ");
            eprintln!("error: {first} (see --help)");
            return ExitCode::FAILURE;
        }
    };
    output::handle_signals();
    match run(&args) {
        Ok(path) => {
            if args.verbose {
                eprintln!("{path}");
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
    text.split(',').map(|v| v.trim().parse::<i64>().map_err(|_| format!("--{name}: {v:?} is not an integer"))).collect()
}

/// Reads a `.npy` from a file or, for `-`, standard input: the header first, checked
/// (against the file's size where it has one) before any of the body is read.
fn read_npy(path: &Path, dtype: Option<DataType>, max_bytes: u64) -> Result<(Tensor, npy::Descr), String> {
    let named = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let (mut reader, size): (Box<dyn Read>, Option<u64>) = if path.as_os_str() == "-" {
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
    Ok((tensor, header.descr))
}

/// Pads as asked and writes the output; returns the line `-v` prints.
fn run(args: &Args) -> Result<String, String> {
    let dtype = args.dtype.as_deref().map(str::parse::<DataType>).transpose().map_err(|e| e.to_string())?;
    let (input, descr) = read_npy(&args.input, dtype, args.max_input_bytes)?;
    let dtype = input.dtype();
    let mode: Mode = args.mode.parse().map_err(|e: PadError| e.to_string())?;
    let mut request = PadRequest::new(int_list("pads", &args.pads)?).mode(mode).max_output_bytes(args.max_output_bytes);
    if let Some(axes) = &args.axes {
        request = request.axes(int_list("axes", axes)?);
    }
    if let Some(v) = &args.value {
        request = request.constant(literal::parse_value(dtype, v).map_err(|e| e.to_string())?);
    }
    if let Some(path) = &args.value_npy {
        let (value, value_descr) = read_npy(path, Some(dtype), args.max_input_bytes)?;
        if value_descr != descr && dtype != DataType::String {
            return Err(format!("{}: descr {value_descr} differs from the input's {descr}", path.display()));
        }
        request = request.constant(value);
    }
    let plan = PadPlan::new(dtype, input.shape(), &request).map_err(|e| e.to_string())?;

    let use_gpu = match args.device {
        Device::Cpu => false,
        Device::Gpu => true,
        Device::Auto => dtype.gpu_capable(),
    };
    let gpu = if use_gpu {
        match GpuContext::new_blocking() {
            Ok(ctx) => Some(ctx),
            Err(e) if args.device == Device::Gpu => return Err(e.to_string()),
            Err(e) => {
                log::info!("no GPU ({e}); using the CPU");
                None
            }
        }
    } else {
        None
    };
    let (padded, path) = match &gpu {
        Some(ctx) => {
            let padded = ctx.pad_blocking(&plan, &input).map_err(|e| e.to_string())?;
            let info = ctx.adapter_info();
            let path = match padded.path {
                ExecPath::Gpu => format!("path=gpu adapter={} backend={:?}", info.name, info.backend),
                ExecPath::CpuFallback { reason } => format!("path=cpu fallback=\"{reason}\""),
            };
            (padded.tensor, path)
        }
        None => (cpu::pad(&plan, &input).map_err(|e| e.to_string())?, "path=cpu".to_string()),
    };
    drop(input);
    let file_bytes = npy::encoded_len(&padded, &descr).map_err(|e| e.to_string())?;
    if file_bytes > args.max_output_bytes {
        return Err(format!(
            "too large: the output .npy would take {file_bytes} bytes, over the limit of {} (--max-output-bytes)",
            args.max_output_bytes
        ));
    }
    output::write_output(&args.output, args.force, |w| npy::write(w, &padded, &descr).map_err(|e| e.to_string()))?;
    Ok(path)
}
