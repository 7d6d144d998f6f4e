//! Pad a .npy tensor from the command line, on the GPU or the CPU.
//!
//! ```text
//! cargo run --release --example pad -- INPUT.npy OUTPUT.npy --pads P1,P2,… \
//!     [--mode constant|reflect|edge|wrap|symmetric] [--value V | --value-npy FILE] \
//!     [--axes A1,…] [--dtype ONNX_TYPE] [--device auto|gpu|cpu] [-v]
//! ```
//!
//! On any error: exit 1, one `error: …` line last on stderr, and the output file neither
//! created nor changed (the result is written beside it, then renamed into place).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use wgpu_pad::gpu::{ExecPath, GpuContext};
use wgpu_pad::{cpu, literal, npy, DataType, Mode, PadError, PadPlan, PadRequest, Tensor};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Device {
    /// The GPU when there is an adapter and the type has a GPU kernel, else the CPU.
    Auto,
    /// The GPU (an adapter is required; strings and 4-bit types fall back to the CPU, visibly).
    Gpu,
    /// The CPU.
    Cpu,
}

/// Pad a .npy tensor with ONNX Pad semantics.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Input .npy file.
    input: PathBuf,
    /// Output .npy file (keeps the input's descr).
    output: PathBuf,
    /// Pads, begins then ends, comma-separated; `--pads=` for none (rank 0).
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
    /// Print what ran on stderr.
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

fn read_npy(path: &Path, dtype: Option<DataType>) -> Result<(Tensor, npy::Descr), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = npy::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let tensor = npy::to_tensor(&file, dtype).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((tensor, file.descr))
}

/// Pads as asked and writes the output; returns the line `-v` prints.
fn run(args: &Args) -> Result<String, String> {
    let dtype = args.dtype.as_deref().map(str::parse::<DataType>).transpose().map_err(|e| e.to_string())?;
    let (input, descr) = read_npy(&args.input, dtype)?;
    let dtype = input.dtype();
    let mode: Mode = args.mode.parse().map_err(|e: PadError| e.to_string())?;
    let mut request = PadRequest::new(int_list("pads", &args.pads)?).mode(mode);
    if let Some(axes) = &args.axes {
        request = request.axes(int_list("axes", axes)?);
    }
    if let Some(v) = &args.value {
        request = request.constant(literal::parse_value(dtype, v).map_err(|e| e.to_string())?);
    }
    if let Some(path) = &args.value_npy {
        let (value, value_descr) = read_npy(path, Some(dtype))?;
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
    let (output, path) = match &gpu {
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
    let bytes = npy::to_bytes(&output, &descr).map_err(|e| e.to_string())?;
    write_atomically(&args.output, &bytes)?;
    Ok(path)
}

/// Writes beside the target, then renames, so a failure leaves no partial file.
fn write_atomically(target: &Path, bytes: &[u8]) -> Result<(), String> {
    let name = target.file_name().ok_or_else(|| format!("{}: not a file path", target.display()))?;
    let tmp = target.with_file_name(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
    let result = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, target));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("{}: {e}", target.display()));
    }
    Ok(())
}
