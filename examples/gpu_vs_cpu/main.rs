//! The GPU-vs-CPU benchmark harness: the same pads on both paths, against the memory
//! limits of each (a host memcpy; on the GPU a roofline copy shader and a buffer copy).
//!
//! ```text
//! cargo run --release --features literal,variants --example gpu_vs_cpu -- [--json FILE] [--svg FILE] [--csv FILE] [--markdown FILE]
//! cargo run --release --features literal,variants --example gpu_vs_cpu -- --dtype float32 --shape 1,64,512,512 --pads 0,0,1,1,0,0,1,1 --mode reflect
//! cargo run --release --features literal,variants --example gpu_vs_cpu -- --sweep --mode wrap --svg sweep.svg
//! cargo run --release --features literal,variants --example gpu_vs_cpu -- --save-baseline main    (then, on a change)
//! cargo run --release --features literal,variants --example gpu_vs_cpu -- --baseline main --fail-on-regression 10
//! cargo run --release --features literal,variants --example gpu_vs_cpu -- --compare old.json new.json
//! cargo run --release --features literal,variants --example gpu_vs_cpu -- --smoke
//! ```
//!
//! Every figure is a median with a 95 % interval (order statistics) and its MAD, all measured
//! in this one process: repetitions go on until each interval is within `--noise` of its
//! median (or `--max-time` runs out: the figure is marked noisy), or exactly `--reps`. The CPU
//! figures alternate repetition by repetition, and so do the GPU figures. GPU kernel and
//! copy times come from timestamp queries where the adapter has them (else wall time); the
//! steady ones (`--batch-ms`) after `--warmup-ms` of GPU work. A GPU error while measuring
//! fails the run, and nothing is written.
//!
//! Its rooms: `cases` (what is measured), `measure` (how), `stats` (how sure), `sweep` (where
//! the GPU wins), `compare` (baselines and verdicts), `machine` (what it ran on), `report`
//! (table, SVG, CSV, Markdown).

mod cases;
mod compare;
mod files;
mod machine;
mod measure;
mod report;
mod stats;
mod sweep;
mod timer;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use wgpu_pad::gpu::{measurement::KernelVariant, GpuContext};
use wgpu_pad::{cpu, literal, DataType, Mode, PadPlan, PadRequest, Tensor};

use machine::Machine;
use measure::{cold_start, measure, GpuErrors, GpuTimer, Record, Setup, Steady};
use stats::Policy;

/// Compare the GPU and CPU pad paths.
#[derive(Parser, Debug)]
#[command(about)]
struct Args {
    /// A custom case's ONNX type (with --shape, --pads, --mode); a sweep's type.
    #[arg(long)]
    dtype: Option<String>,
    /// A custom case's shape, e.g. 1,3,224,224 (a sweep scales its first axis).
    #[arg(long)]
    shape: Option<String>,
    /// A custom case's pads, begins then ends.
    #[arg(long, allow_hyphen_values = true)]
    pads: Option<String>,
    /// A custom case's interior padding (lax.pad's: constants between neighbours), one per
    /// axis; constant mode.
    #[arg(long)]
    interior: Option<String>,
    /// A custom case's mode (and a sweep's).
    #[arg(long, default_value = "constant")]
    mode: String,
    /// A custom case's constant.
    #[arg(long, allow_hyphen_values = true)]
    value: Option<String>,
    /// Repetitions per figure, fixed (after one warm-up). Without it they adapt (--noise).
    #[arg(long)]
    reps: Option<usize>,
    /// Sample until each figure's 95 % interval is within this fraction of its median.
    #[arg(long, default_value_t = 0.02)]
    noise: f64,
    /// Seconds one case's CPU or GPU figures may take before they are reported as noisy.
    #[arg(long, default_value_t = 2.0)]
    max_time: f64,
    /// Repetitions at least, when they adapt.
    #[arg(long, default_value_t = 5)]
    min_reps: usize,
    /// GPU time of one steady batch (back-to-back dispatches timed together), in ms.
    #[arg(long, default_value_t = 20.0)]
    batch_ms: f64,
    /// GPU work before each steady figure of a case, in ms, so that clocks have settled.
    #[arg(long, default_value_t = 100.0)]
    warmup_ms: f64,
    /// Write the report as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write a bar chart of GB/s per case (or a sweep's log-log chart) as SVG.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Write the records as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write the table as Markdown.
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Redraw the SVG (--svg) from a JSON report this harness wrote, measuring nothing.
    #[arg(long)]
    replot: Option<PathBuf>,
    /// Only the cold start: the first (compiles included) and second pass over a mix of 120
    /// pads (5 modes x 4 types x 6 shapes) on a fresh kernel, and the pipelines it compiled.
    #[arg(long)]
    cold_start: bool,
    /// Which cases: `default` (the suite of 25, when none is named), `engine` (issue 43's
    /// engine shapes, every mode), `dram` (outputs past 256 MiB, past a GPU's L2) or `all`
    /// (default and engine, and the cold-start mix's shapes).
    #[arg(long)]
    suite: Option<String>,
    /// Sweep one family (the custom-case flags, or f32 [R,256] padded by 1 in --mode) over
    /// output sizes from 4 KiB in steps of 4x: every path, a fit per path, the crossover.
    #[arg(long)]
    sweep: bool,
    /// A sweep's largest output (bytes; also capped by an eighth of the memory available).
    #[arg(long, default_value_t = 256 << 20)]
    max_bytes: u64,
    /// Only the steady figures (the kernel's batch, the buffer copy's, the roofline's): no CPU
    /// path, single dispatches or end-to-end calls, which are written as 0 and listed under
    /// "skipped". For deciding kernels on a lent GPU, whose minutes are few.
    #[arg(long)]
    steady_only: bool,
    /// The pad's gradient in place of the pad, on each case of a float type (the others are
    /// passed over, said so): `cpu::pad_backward`, the GPU's gradient kernel at steady clocks
    /// against the roofline copy of the output's bytes, `GpuContext::pad_backward` end to end.
    #[arg(long)]
    backward: bool,
    /// Every case of the default suite at a tiny size, once, outputs compared bit for bit
    /// between the paths: seconds, for CI.
    #[arg(long)]
    smoke: bool,
    /// Save this run as a baseline: target/gpu_vs_cpu-baselines/NAME.json of the project the
    /// working directory is in (the nearest directory up with a Cargo.toml), else of the
    /// working directory. NAME: letters, digits, '-', '_', '.'.
    #[arg(long)]
    save_baseline: Option<String>,
    /// Compare this run with a saved baseline (a name, or a JSON report's path).
    #[arg(long)]
    baseline: Option<String>,
    /// Compare two saved reports, measuring nothing (--json writes the comparison).
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"])]
    compare: Option<Vec<PathBuf>>,
    /// Exit 1 when a compared figure is SLOWER by more than this percentage.
    #[arg(long)]
    fail_on_regression: Option<f64>,
    /// The kernel variant the GPU pads run: `default`, or one a real GPU is to decide for
    /// (`reference`, `narrow-spread`, `narrow-loads-first`, `flat-u4`, `read-only-input`,
    /// `device-grid`, `device-grid-256`, `rows16`; `gradient-whole`, `gradient-words`,
    /// `gradient-sides-apart` for --backward; src/gpu/variant.rs). For measurement.
    #[arg(long, default_value = "default")]
    kernel_variant: String,
}

impl Args {
    /// Whether the flags name a custom case (any of --dtype, --shape, --pads).
    fn is_custom(&self) -> bool {
        self.dtype.is_some() || self.shape.is_some() || self.pads.is_some()
    }
}

/// Exit codes: 2 for a request that cannot be run as given, 1 for a failure while running.
enum Failure {
    Usage(String),
    Run(String),
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure::Run(e.to_string())
    }
}

fn usage(message: impl Into<String>) -> Failure {
    Failure::Usage(message.into())
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn,wgpu_hal::gles=off")).init();
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(Failure::Usage(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(Failure::Run(e)) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read_report(path: &Path) -> Result<serde_json::Value, Failure> {
    files::read_report(path).map_err(Failure::Run)
}

/// A chart that could not be drawn (plotters' errors name no file): nothing was written.
fn drawing(path: &Path, e: impl std::fmt::Display) -> Failure {
    Failure::Run(format!("{}: drawing the chart: {e} (nothing written)", path.display()))
}

/// Writes one of the run's files (atomically, through links; the error names it).
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    files::write(path, bytes).map_err(Failure::Run)?;
    println!("wrote {}", path.display());
    Ok(())
}

/// Prints a comparison, warns where the machines differ, and says whether it regressed.
/// No case in common is an error naming both sides: a gate that compared nothing must not pass.
fn report_comparison(
    old: (&serde_json::Value, &str),
    new: (&serde_json::Value, &str),
    args: &Args,
) -> Result<(Vec<compare::Entry>, bool), Failure> {
    let ((old, old_name), (new, new_name)) = (old, new);
    if let (Ok(a), Ok(b)) = (
        serde_json::from_value::<Machine>(old["machine"].clone()),
        serde_json::from_value::<Machine>(new["machine"].clone()),
    ) {
        for d in a.differences(&b) {
            eprintln!("warning: the two runs' machines differ: {d}");
        }
    }
    let entries = compare::compare(old, new, args.noise.max(0.02));
    if entries.is_empty() {
        return Err(Failure::Run(format!(
            "{old_name} and {new_name} have no case in common (by type, shape, pads and mode) with a time to compare: nothing was compared"
        )));
    }
    compare::print(&entries);
    let regressed = args.fail_on_regression.is_some_and(|pct| {
        let slower = compare::regressions(&entries, pct);
        for e in &slower {
            eprintln!("regression: {} {}: {:.3} x", e.case, e.column, e.ratio);
        }
        !slower.is_empty()
    });
    Ok((entries, regressed))
}

/// The checks on the flags alone, before anything is opened or measured.
fn validate(args: &Args) -> Result<(), Failure> {
    if args.reps == Some(0) {
        return Err(usage("--reps: at least 1"));
    }
    let in_range = args.noise > 0.0 && args.noise < 1.0 && args.max_time > 0.0 && args.max_time <= 3600.0;
    if !in_range || args.min_reps == 0 {
        return Err(usage(
            "--noise takes a fraction in (0, 1), --max-time a number of seconds in (0, 3600], --min-reps at least 1",
        ));
    }
    // Flags that would be ignored are refused: a run writes what was asked or says why not.
    let outputs =
        [("--svg", args.svg.is_some()), ("--csv", args.csv.is_some()), ("--markdown", args.markdown.is_some())];
    let refuse_with = |what: &str, flags: &[(&str, bool)]| -> Result<(), Failure> {
        match flags.iter().find(|(_, given)| *given) {
            Some((flag, _)) => Err(usage(format!("{what} writes no {flag}: leave it out"))),
            None => Ok(()),
        }
    };
    let baselines = [("--save-baseline", args.save_baseline.is_some()), ("--baseline", args.baseline.is_some())];
    let custom = args.is_custom();
    if args.cold_start {
        if custom || args.sweep || args.smoke || args.suite.is_some() {
            return Err(usage("--cold-start times its own mix: no custom case, --sweep, --smoke or --suite"));
        }
        refuse_with("--cold-start", &outputs)?;
        refuse_with("--cold-start", &baselines)?;
    }
    if args.compare.is_some() {
        refuse_with("--compare", &outputs)?;
        refuse_with("--compare", &baselines)?;
    }
    if args.replot.is_some() {
        refuse_with(
            "--replot",
            &[("--json", args.json.is_some()), ("--csv", args.csv.is_some()), ("--markdown", args.markdown.is_some())],
        )?;
    }
    if args.steady_only && (args.cold_start || args.compare.is_some() || args.replot.is_some()) {
        return Err(usage(
            "--steady-only leaves figures out of measured cases: --cold-start, --compare and --replot measure none",
        ));
    }
    if args.steady_only && (args.sweep || args.smoke) {
        return Err(usage("--steady-only: --sweep fits the CPU and end-to-end paths, --smoke runs them all"));
    }
    if args.backward && (args.cold_start || args.compare.is_some() || args.replot.is_some() || args.sweep || args.smoke)
    {
        return Err(usage("--backward measures a suite's or a custom case's gradient: no --cold-start, --compare, --replot, --sweep or --smoke"));
    }
    if args.sweep && args.suite.is_some() {
        return Err(usage("--sweep runs its own family of sizes: no --suite"));
    }
    if args.fail_on_regression.is_some() && args.baseline.is_none() && args.compare.is_none() {
        return Err(usage("--fail-on-regression needs something to compare: --baseline or --compare"));
    }
    if let Some(name) = &args.save_baseline {
        files::check_baseline_name(name).map_err(usage)?;
    }
    let finite_ms = |x: f64| x.is_finite() && x <= 60_000.0;
    if !(finite_ms(args.batch_ms) && args.batch_ms > 0.0 && finite_ms(args.warmup_ms) && args.warmup_ms >= 0.0) {
        return Err(usage("--batch-ms takes a positive number of ms, --warmup-ms 0 or more (each at most 60000)"));
    }
    if args.fail_on_regression.is_some_and(|p| p.is_nan() || p < 0.0) {
        return Err(usage("--fail-on-regression takes a percentage, 0 or more"));
    }
    let variant = kernel_variant(args)?;
    if variant != KernelVariant::Default && (args.cold_start || args.compare.is_some()) {
        return Err(usage(format!(
            "--kernel-variant {}: the variant runs in measured pads; --cold-start and --compare run none",
            variant.name()
        )));
    }
    Ok(())
}

/// The kernel variant `--kernel-variant` names.
fn kernel_variant(args: &Args) -> Result<KernelVariant, Failure> {
    KernelVariant::from_name(&args.kernel_variant).ok_or_else(|| {
        let names = KernelVariant::ALL.map(|v| v.name()).join(", ");
        usage(format!("--kernel-variant {}: one of {names}", args.kernel_variant))
    })
}

/// The context the pads are measured on and the same device without a buffer pool (every
/// call creates its buffers), both running kernel `variant`.
fn contexts(variant: KernelVariant) -> Result<(GpuContext, GpuContext), Failure> {
    let ctx = GpuContext::new_blocking()?;
    let unpooled = GpuContext::from_device(ctx.device(), ctx.queue(), ctx.adapter_info().clone())?;
    unpooled.set_buffer_pool_limit(0);
    for c in [&ctx, &unpooled] {
        wgpu_pad::gpu::measurement::select(c.kernel(), variant);
    }
    Ok((ctx, unpooled))
}

fn run(args: &Args) -> Result<ExitCode, Failure> {
    validate(args)?;
    for path in [&args.json, &args.svg, &args.csv, &args.markdown].into_iter().flatten() {
        files::check_writable(path).map_err(Failure::Run)?;
    }
    if let Some(paths) = &args.compare {
        let (old, new) = (read_report(&paths[0])?, read_report(&paths[1])?);
        let names = (paths[0].display().to_string(), paths[1].display().to_string());
        let (entries, regressed) = report_comparison((&old, &names.0), (&new, &names.1), args)?;
        if let Some(path) = &args.json {
            let report = serde_json::json!({ "old": names.0, "new": names.1, "comparison": entries });
            write_file(path, serde_json::to_string_pretty(&report)?.as_bytes())?;
        }
        return Ok(if regressed { ExitCode::FAILURE } else { ExitCode::SUCCESS });
    }
    if let Some(path) = &args.replot {
        let svg = args.svg.as_ref().ok_or_else(|| usage("--replot needs --svg"))?;
        let report = read_report(path)?;
        let records: Vec<Record> = match report.get("records") {
            Some(r) => serde_json::from_value(r.clone())
                .map_err(|e| Failure::Run(format!("{}: its \"records\" are not the harness's: {e}", path.display())))?,
            None => return Err(Failure::Run(format!("{}: not a report: no \"records\"", path.display()))),
        };
        write_file(svg, report::svg(&records).map_err(|e| drawing(svg, e))?.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let baseline_file = match &args.save_baseline {
        Some(name) => {
            let dir = files::baseline_dir().map_err(Failure::Run)?;
            std::fs::create_dir_all(&dir).map_err(|e| Failure::Run(format!("{}: creating it: {e}", dir.display())))?;
            let path = dir.join(format!("{name}.json"));
            files::check_writable(&path).map_err(Failure::Run)?;
            Some(path)
        }
        None => None,
    };
    let baseline = match &args.baseline {
        Some(b) => {
            let path = files::baseline_source(b).map_err(Failure::Run)?;
            Some((read_report(&path)?, path.display().to_string()))
        }
        None => None,
    };
    let mut cases = cases_of(args)?;
    if args.backward {
        // The gradient is a float's: the other cases are passed over, and said so.
        let (floats, others): (Vec<_>, Vec<_>) = cases.into_iter().partition(|(p, _)| measure::has_gradient(p.dtype()));
        for (p, _) in &others {
            println!(
                "--backward: {} {:?} {} passed over: no gradient of its type here",
                p.dtype(),
                p.in_shape(),
                p.mode()
            );
        }
        if floats.is_empty() {
            return Err(usage(
                "--backward: no case of a type with a gradient (the floats but float8e8m0, the complex types)",
            ));
        }
        cases = floats;
    }

    let (ctx, unpooled) = contexts(kernel_variant(args)?)?;
    let errors = GpuErrors::watch(ctx.device());
    let machine = Machine::of(&ctx);
    println!("machine: {}", machine.summary());
    let timer = GpuTimer::new(ctx.device(), ctx.queue());
    let policy = Policy {
        fixed: if args.smoke { Some(1) } else { args.reps },
        min: args.min_reps,
        noise: args.noise,
        budget: Duration::from_secs_f64(args.max_time),
    };
    // --smoke's figures are no measurement: no warm-up, and batches short but still of
    // several dispatches where a dispatch is quick (the batch path is what it checks).
    let steady = match args.smoke {
        true => Steady { warmup_ms: 0.0, batch_ms: args.batch_ms.min(2.0) },
        false => Steady { warmup_ms: args.warmup_ms, batch_ms: args.batch_ms },
    };
    println!(
        "steady figures (kb, roof, copyb): batches of {} ms of GPU work after {} ms of it",
        steady.batch_ms, steady.warmup_ms
    );
    match policy.fixed {
        Some(n) => println!("GPU timer: {}; median of {n} after a warm-up", timer.label()),
        None => println!(
            "GPU timer: {}; medians with 95 % intervals, sampled until within {:.1} % or {} s",
            timer.label(),
            args.noise * 100.0,
            args.max_time
        ),
    }
    // The cold start first, on its own fresh kernel, so nothing before it has compiled.
    let custom = args.is_custom();
    let cold = if custom || args.sweep || args.smoke { None } else { Some(cold_start(&ctx)?) };
    errors.check("timing the cold start")?;
    if let Some(c) = &cold {
        println!(
            "cold start: {} pads, {} pipelines, first pass {:.1} ms, second {:.1} ms",
            c.pads, c.pipelines, c.cold_ms, c.warm_ms
        );
    }
    if args.cold_start {
        if let (Some(path), Some(c)) = (&args.json, &cold) {
            let report = serde_json::json!({ "machine": machine, "cold_start": c });
            write_file(path, serde_json::to_string_pretty(&report)?.as_bytes())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let setup = Setup {
        ctx: &ctx,
        unpooled: &unpooled,
        timer: &timer,
        errors: &errors,
        policy: &policy,
        steady: &steady,
        steady_only: args.steady_only,
        backward: args.backward,
    };
    let mut records = Vec::new();
    let mut failed = Vec::new();
    let total = cases.len();
    for (i, (plan, input)) in cases.iter().enumerate() {
        eprint!("\r[{}/{total}] {} {:?} {}...        ", i + 1, plan.dtype(), plan.in_shape(), plan.mode());
        let case = format!("{} {:?} {}", plan.dtype(), plan.in_shape(), plan.mode());
        // A gradient the GPU does not take (sums past a lane's bound) is the CPU path's:
        // passed over, and said so; the pad's own refusals stay errors.
        if let (true, Err(e @ wgpu_pad::PadError::GpuLimit { .. })) = (args.backward, ctx.kernel().check_backward(plan))
        {
            eprintln!("\r{:60}", "");
            println!("--backward: {case} passed over: {e}");
            continue;
        }
        let record = measure(&setup, plan, input).map_err(|e| {
            eprintln!("\r{:60}", "");
            Failure::Run(format!("{case}: {e}"))
        })?;
        if args.smoke {
            let on_gpu = ctx.pad_blocking(plan, input)?;
            if on_gpu.tensor != cpu::pad(plan, input)? {
                failed.push(report::case_name(&record));
            }
        }
        records.push(record);
    }
    eprintln!("\r{:60}", "");
    report::print_table(&records);
    let noisy: Vec<String> = records
        .iter()
        .filter(|r| !r.noisy.is_empty())
        .map(|r| format!("{} ({})", report::case_name(r), r.noisy.join(", ")))
        .collect();
    if !noisy.is_empty() {
        println!(
            "noisy (interval still wider than {:.1} % after {} s): {}",
            args.noise * 100.0,
            args.max_time,
            noisy.join("; ")
        );
    }

    let method =
        serde_json::json!({ "warmup_ms": steady.warmup_ms, "batch_ms": steady.batch_ms, "gpu_timer": timer.label() });
    let mut report =
        serde_json::json!({ "machine": machine, "steady": method, "cold_start": cold, "records": records });
    if args.sweep {
        report["sweep"] = sweep_report(args, &records)?;
    }
    let mut regressed = false;
    if let Some((old, name)) = &baseline {
        let (entries, r) = report_comparison((old, name), (&report, "this run"), args)?;
        report["comparison"] = serde_json::to_value(&entries)?;
        regressed = r;
    }
    let text = serde_json::to_string_pretty(&report)?;
    if let Some(path) = &args.json {
        write_file(path, text.as_bytes())?;
    }
    if let Some(path) = &baseline_file {
        files::write(path, text.as_bytes()).map_err(Failure::Run)?;
        println!("saved baseline {}: {}", args.save_baseline.as_deref().unwrap_or(""), path.display());
    }
    if let Some(path) = &args.svg {
        if !args.sweep {
            write_file(path, report::svg(&records).map_err(|e| drawing(path, e))?.as_bytes())?;
        }
    }
    if let Some(path) = &args.csv {
        write_file(path, report::csv(&records).as_bytes())?;
    }
    if let Some(path) = &args.markdown {
        write_file(path, report::markdown(&machine, &records).as_bytes())?;
    }
    if args.smoke {
        for f in &failed {
            eprintln!("smoke: {f}: the GPU's output differs from the CPU path's");
        }
        println!("smoke: {} passed, {} failed", records.len() - failed.len(), failed.len());
        if !failed.is_empty() {
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(if regressed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// The sweep's JSON (per size and path, a fit per path, the crossover), its table and chart.
fn sweep_report(args: &Args, records: &[Record]) -> Result<serde_json::Value, Failure> {
    let sizes: Vec<u64> = records.iter().map(|r| r.out_bytes).collect();
    let mut points = Vec::new();
    let mut fits = serde_json::Map::new();
    let mut series = Vec::new();
    println!("{:<24} {:>12} {:>10}   (GB/s: the slope over outputs of 1 MiB and more; fixed: the smallest output less its bytes at that rate)", "path", "fixed us", "GB/s");
    for (name, column) in sweep::PATHS {
        let times: Vec<f64> = records.iter().map(column).collect();
        for (r, t) in records.iter().zip(&times) {
            let stem = match name {
                "cpu_pad_into" => "cpu",
                "cpu_pad_fresh" => "cpu_fresh",
                "cpu_pad_arena" => "cpu_arena",
                "gpu_end_to_end_pooled" => "gpu_e2e_pooled",
                other => other,
            };
            points.push(serde_json::json!({ "out_bytes": r.out_bytes, "path": name, "ms": t,
                "ci_low_ms": r.extra.get(&format!("{stem}_ci_low_ms")), "ci_high_ms": r.extra.get(&format!("{stem}_ci_high_ms")) }));
        }
        let fit = sweep::fit(&sizes.iter().copied().zip(times.iter().copied()).collect::<Vec<_>>());
        if let Some(f) = fit {
            println!("{name:<24} {:>12.1} {:>10.2}", f.fixed_us, f.gbps);
        }
        fits.insert(name.to_string(), serde_json::to_value(fit)?);
        series.push((name, times));
    }
    let cpu: Vec<f64> = records.iter().map(|r| r.cpu_ms).collect();
    let gpu: Vec<f64> = records.iter().map(|r| r.gpu_e2e_pooled_ms).collect();
    let crossover = sweep::crossover(&sizes, &cpu, &gpu);
    match crossover {
        Some(b) => println!("crossover: the GPU end to end beats cpu::pad_into from {b} bytes of output"),
        None => println!("crossover: never on this adapter (up to {} bytes)", sizes.last().unwrap_or(&0)),
    }
    if let Some(path) = &args.svg {
        let title = format!("{} {} sweep: time per path (log-log)", records[0].dtype, records[0].mode);
        let chart = sweep::svg(&title, &sizes, &series, crossover).map_err(|e| drawing(path, e))?;
        write_file(path, chart.as_bytes())?;
    }
    Ok(
        serde_json::json!({ "records": points, "fit": fits, "fit_rule": "gbps: least-squares slope over outputs of 1 MiB and more; fixed_us: the smallest output's time less its bytes at gbps", "crossover_bytes": crossover }),
    )
}

/// The cases the flags ask for, each a plan and its input.
fn cases_of(args: &Args) -> Result<Vec<(PadPlan, Tensor)>, Failure> {
    let mut cases = Vec::new();
    let mut add = |dtype: DataType,
                   shape: Vec<usize>,
                   pads: Vec<i64>,
                   mode: Mode,
                   value: Option<Tensor>,
                   interior: Option<Vec<i64>>| {
        let mut req = PadRequest::new(pads).mode(mode);
        if let Some(v) = value {
            req = req.constant(v);
        }
        if let Some(k) = interior {
            req = req.interior(k);
        }
        let plan = PadPlan::new(dtype, &shape, &req).map_err(|e| usage(e.to_string()))?;
        let elem = dtype.width().bytes().ok_or_else(|| usage(format!("{dtype}: fixed-width types only")))?;
        let n = shape.iter().product::<usize>() * elem;
        if plan.byte_sizes().is_some_and(|(_, out)| out == 0) {
            return Err(usage(format!("{dtype} {shape:?}: an empty output measures nothing")));
        }
        let input = Tensor::from_bytes(dtype, shape, (0..n).map(|i| (i * 7 + 3) as u8).collect())?;
        cases.push((plan, input));
        Ok::<(), Failure>(())
    };
    let mode: Mode = args.mode.parse().map_err(|e: wgpu_pad::PadError| usage(format!("--mode: {e}")))?;
    let dtype =
        args.dtype.as_deref().map(|d| d.parse::<DataType>().map_err(|e| usage(format!("--dtype: {e}")))).transpose()?;
    let shape = args.shape.as_deref().map(|s| cases::ints::<usize>("shape", s).map_err(usage)).transpose()?;
    let pads = args.pads.as_deref().map(|s| cases::ints::<i64>("pads", s).map_err(usage)).transpose()?;
    let interior = args.interior.as_deref().map(|s| cases::ints::<i64>("interior", s).map_err(usage)).transpose()?;
    if interior.is_some() && (args.sweep || !args.is_custom()) {
        return Err(usage(
            "--interior: a custom case's (with --dtype, --shape and --pads), not a sweep's or a suite's",
        ));
    }
    let value = match (&args.value, dtype) {
        (Some(v), Some(d)) => Some(literal::parse_value(d, v).map_err(|e| usage(format!("--value: {e}")))?),
        (Some(_), None) => return Err(usage("--value needs --dtype")),
        _ => None,
    };
    if args.sweep {
        let (d0, s0, p0, m) = sweep::default_family(mode);
        let (dtype, shape, pads) = (dtype.unwrap_or(d0), shape.unwrap_or(s0), pads.unwrap_or(p0));
        if pads.len() != 2 * shape.len() {
            return Err(usage(format!(
                "--pads: {} values for a rank-{} shape (begins then ends)",
                pads.len(),
                shape.len()
            )));
        }
        let available = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("MemAvailable:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .map_or(u64::MAX, |kib| kib * 1024 / 8);
        for bytes in sweep::sizes(args.max_bytes.min(available)) {
            add(dtype, sweep::shape_for(dtype, &shape, &pads, bytes), pads.clone(), m, value.clone(), None)?;
        }
        return Ok(cases);
    }
    match (dtype, shape, pads) {
        (Some(dtype), Some(shape), Some(pads)) => add(dtype, shape, pads, mode, value, interior)?,
        (None, None, None) => {
            let suite = args.suite.as_deref().unwrap_or("default");
            let mut shapes: Vec<cases::Shape> = match (args.smoke, suite) {
                (true, _) => cases::SMOKE.to_vec(),
                (false, "default") => cases::SUITE.to_vec(),
                (false, "engine") => cases::ENGINE.to_vec(),
                (false, "dram") => cases::DRAM.to_vec(),
                (false, "all") => cases::SUITE.iter().chain(cases::ENGINE.iter()).copied().collect(),
                (false, other) => return Err(usage(format!("--suite: {other:?} is not default, engine, dram or all"))),
            };
            if suite == "all" && !args.smoke {
                for dtype in cases::COLD_MIX_TYPES {
                    shapes.extend(cases::COLD_MIX.iter().map(|&(shape, pads)| (dtype, shape, pads)));
                }
            }
            for (dtype, shape, pads) in shapes {
                for mode in Mode::ALL {
                    // The cold-start mix has shapes some modes refuse (reflect of a crop).
                    if let Err(Failure::Usage(e)) = add(dtype, shape.to_vec(), pads.to_vec(), mode, None, None) {
                        eprintln!("skipped {dtype} {shape:?} {mode}: {e}");
                    }
                }
            }
            if matches!(suite, "engine" | "all") && !args.smoke {
                for (dtype, shape, config) in cases::ENGINE_INTERIOR {
                    let request = PadRequest::from_padding_config(config);
                    add(dtype, shape.to_vec(), request.pads, Mode::Constant, None, request.interior)?;
                }
            }
        }
        _ => return Err(usage("a custom case needs --dtype, --shape and --pads")),
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("gpu_vs_cpu").chain(args.iter().copied())).unwrap()
    }

    fn usage_error<T>(result: Result<T, Failure>) -> String {
        match result {
            Err(Failure::Usage(e)) => e,
            Err(Failure::Run(e)) => panic!("a run error, not a usage error: {e}"),
            Ok(_) => panic!("accepted"),
        }
    }

    /// Bad requests are usage errors (exit 2) with a message, never a panic; a bad output
    /// path is found before anything is measured (a run error, exit 1).
    #[test]
    fn bad_requests_are_errors_that_say_what_is_wrong() {
        assert!(usage_error(validate(&parse(&["--reps", "0"]))).contains("--reps"));
        assert!(usage_error(validate(&parse(&["--noise", "1.5"]))).contains("--noise"));
        assert!(usage_error(validate(&parse(&["--fail-on-regression=-3"]))).contains("--fail-on-regression"));
        assert!(validate(&parse(&["--reps", "3", "--noise", "0.05"])).is_ok(), "good flags refused");
        let e = usage_error(cases_of(&parse(&["--dtype", "float32", "--shape", "4,a", "--pads", "1,1,1,1"])));
        assert!(e.contains("--shape") && e.contains("\"a\""), "{e}");
        let e = usage_error(cases_of(&parse(&["--dtype", "float32", "--shape", "4,4", "--pads", "-2,0,-2,0"])));
        assert!(e.contains("empty output"), "{e}");
        assert!(usage_error(cases_of(&parse(&["--dtype", "float32"]))).contains("needs --dtype, --shape and --pads"));
        assert!(usage_error(cases_of(&parse(&["--mode", "mirror"]))).contains("--mode"));
        assert!(usage_error(cases_of(&parse(&["--suite", "nope"]))).contains("--suite"));
        assert!(Args::try_parse_from(["gpu_vs_cpu", "--reps", "x"]).is_err(), "clap refuses a non-number");
        // Durations that would panic in Duration::from_secs_f64, and flags a run would ignore.
        for (flags, says) in [
            (&["--max-time", "inf"][..], "--max-time"),
            (&["--max-time", "1e300"], "--max-time"),
            (&["--batch-ms", "0"], "--batch-ms"),
            (&["--warmup-ms", "nan"], "--warmup-ms"),
            (&["--cold-start", "--csv", "x.csv"], "--csv"),
            (&["--cold-start", "--markdown", "x.md"], "--markdown"),
            (&["--cold-start", "--dtype", "float32", "--shape", "4", "--pads", "1,1"], "custom case"),
            (&["--compare", "a.json", "b.json", "--svg", "x.svg"], "--svg"),
            (&["--steady-only", "--cold-start"], "--steady-only"),
            (&["--backward", "--sweep"], "--backward"),
            (&["--backward", "--cold-start"], "--backward"),
            (&["--steady-only", "--sweep"], "--steady-only"),
            (&["--steady-only", "--smoke"], "--steady-only"),
            (&["--sweep", "--suite", "engine"], "--suite"),
            (&["--fail-on-regression", "5"], "something to compare"),
            (&["--save-baseline", "../up"], "--save-baseline"),
            (&["--save-baseline", "a/b"], "--save-baseline"),
            (&["--kernel-variant", "fast"], "one of default, reference"),
            (&["--kernel-variant", "narrow-spread", "--cold-start"], "--cold-start"),
        ] {
            let e = usage_error(validate(&parse(flags)));
            assert!(e.contains(says), "{flags:?}: {e}");
        }
        assert!(validate(&parse(&["--compare", "a", "b", "--fail-on-regression", "5"])).is_ok());
        // Interior padding is a custom case's.
        for flags in [&["--interior", "1"][..], &["--sweep", "--dtype", "float32", "--interior", "1"]] {
            assert!(usage_error(cases_of(&parse(flags))).contains("--interior"), "{flags:?}");
        }
        for v in wgpu_pad::gpu::measurement::KernelVariant::ALL {
            assert!(validate(&parse(&["--kernel-variant", v.name(), "--suite", "engine"])).is_ok(), "{v:?}");
        }
        let e = files::check_writable(Path::new("/nonexistent-dir/out.json")).unwrap_err();
        assert!(e.contains("/nonexistent-dir/out.json"), "{e}");
    }

    /// `--interior` makes the custom case a lax.pad; the engine suite has one such case, in
    /// constant mode; a comparison keeps it apart from the same pads without it.
    #[test]
    fn interior_cases_are_measured_and_named_apart() {
        let custom = ["--dtype", "float32", "--shape", "2,3", "--pads", "0,0,0,1", "--interior", "1,2"];
        let cases = cases_of(&parse(&custom)).ok().unwrap();
        assert_eq!((cases.len(), cases[0].0.out_shape(), cases[0].0.interior()), (1, &[3, 8][..], &[1, 2][..]));
        let engine = cases_of(&parse(&["--suite", "engine"])).ok().unwrap();
        let interior: Vec<_> = engine.iter().filter(|(p, _)| p.has_interior()).collect();
        assert_eq!(interior.len(), 1);
        assert_eq!((interior[0].0.mode(), interior[0].0.out_shape()), (Mode::Constant, &[1, 64, 255, 255][..]));
        let record = |interior: Option<[i64; 1]>| {
            let mut r = serde_json::json!({ "dtype": "float32", "shape": [4], "pads": [1, 1], "mode": "constant", "gpu_kernel_ms": 1.0 });
            if let Some(k) = interior {
                r["interior"] = serde_json::json!(k);
            }
            r
        };
        let old = serde_json::json!({ "records": [record(Some([1]))] });
        let new = serde_json::json!({ "records": [record(None)] });
        assert!(
            report_comparison((&old, "old"), (&new, "new"), &parse(&[])).is_err(),
            "an interior pad matched a plain one"
        );
        let both = serde_json::json!({ "records": [record(Some([1]))] });
        assert_eq!(report_comparison((&old, "old"), (&both, "new"), &parse(&[])).ok().unwrap().0.len(), 1);
    }

    /// A gate that compared nothing fails, naming both sides; one case in common, in one
    /// mode, compares (a case matched without its mode would find two here).
    #[test]
    fn comparisons_of_nothing_fail_and_cases_match_by_mode() {
        let args = parse(&[]);
        for empty in
            [serde_json::json!({}), serde_json::json!({ "records": "x" }), serde_json::json!({ "records": [] })]
        {
            match report_comparison((&empty, "old.json"), (&empty, "new.json"), &args) {
                Err(Failure::Run(e)) => assert!(e.contains("old.json") && e.contains("new.json"), "{e}"),
                _ => panic!("compared nothing and passed"),
            }
        }
        let record = |mode: &str, ms: f64| serde_json::json!({ "dtype": "float32", "shape": [4], "pads": [1, 1], "mode": mode, "gpu_kernel_ms": ms });
        let old = serde_json::json!({ "records": [record("constant", 1.0), record("reflect", 5.0)] });
        let new = serde_json::json!({ "records": [record("reflect", 5.0)] });
        let (entries, regressed) = report_comparison((&old, "old"), (&new, "new"), &args).ok().unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].ratio, 1.0, "matched reflect with constant");
        assert!(!regressed);
        let other = serde_json::json!({ "records": [record("wrap", 5.0)] });
        assert!(report_comparison((&old, "old"), (&other, "new"), &args).is_err(), "a mode in neither matched");
    }

    fn gpu_or_skip() -> bool {
        match GpuContext::new_blocking() {
            Ok(_) => true,
            Err(e) if std::env::var("WGPU_PAD_REQUIRE_GPU").is_ok_and(|v| v == "1") => panic!("no GPU: {e}"),
            Err(_) => false,
        }
    }

    /// Round six: both contexts run the selected variant (a variant on the unpooled kernel
    /// alone would report the default's figures as the variant's).
    #[test]
    fn the_variant_runs_on_both_contexts() {
        if !gpu_or_skip() {
            return;
        }
        let (ctx, unpooled) = contexts(KernelVariant::FlatU4).ok().unwrap();
        assert_eq!(wgpu_pad::gpu::measurement::selected(ctx.kernel()), KernelVariant::FlatU4);
        assert_eq!(wgpu_pad::gpu::measurement::selected(unpooled.kernel()), KernelVariant::FlatU4);
    }

    /// Round six: `--baseline` compares the saved run as the old and this run as the new: a
    /// baseline far faster than any GPU makes this run a regression, one far slower none.
    #[test]
    fn a_baseline_is_the_old_side() {
        if !gpu_or_skip() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("gpu_vs_cpu-baseline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let case = ["--dtype", "float32", "--shape", "64", "--pads", "1,1", "--mode", "edge"];
        let quick = ["--reps", "1", "--warmup-ms", "1", "--batch-ms", "1"];
        for (ms, regresses) in [(1e-9, true), (1e9, false)] {
            let figure = serde_json::json!({"dtype": "float32", "shape": [64], "pads": [1, 1], "mode": "edge",
                "gpu_kernel_batch_ms": ms, "gpu_kernel_batch_ci_low_ms": ms, "gpu_kernel_batch_ci_high_ms": ms});
            let path = dir.join(format!("baseline-{ms}.json"));
            std::fs::write(&path, serde_json::json!({ "records": [figure] }).to_string()).unwrap();
            let mut argv: Vec<&str> = case.iter().chain(&quick).copied().collect();
            let path_text = path.display().to_string();
            argv.extend(["--baseline", &path_text, "--fail-on-regression", "10"]);
            let code = run(&parse(&argv)).ok().unwrap();
            assert_eq!(code == ExitCode::FAILURE, regresses, "a baseline of {ms} ms");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
