//! A convolution that reads its unpadded input through `wgpu_pad::fused`'s WGSL functions,
//! against our pad followed by the same convolution: bit for bit, every mode, and a stride-2
//! transposed convolution reading its input through an interior pad (JAX's `lax.pad`), never
//! writing the dilated tensor, bit for bit the direct transposed convolution; and what the
//! fusion saves (the padded tensor's bytes, written and read, and the time of pad + conv
//! against the fused conv, its parameters bound as a uniform or baked as constants), on this
//! machine's adapter.
//!
//! ```text
//! cargo run --release --example fused_conv
//! ```
//!
//! Times are at steady clocks, by the harness's timer (`examples/gpu_vs_cpu/timer.rs`): each
//! load warmed up for 200 ms, then medians of five alternated batches of about 20 ms, from GPU
//! timestamps where the device writes them in an encoder, else wall time around submit and
//! wait (on lavapipe, a CPU, they rank nothing about a GPU; BENCHMARKS.md has the figures and
//! where they came from).

mod conv;
#[path = "../gpu_vs_cpu/timer.rs"]
mod timer;

use conv::{Conv, Load, Prepared};
use timer::{steady_batch, GpuTimer, Steady};
use wgpu_pad::gpu::GpuContext;
use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};

/// The cases: a 3x3 convolution over an image padded by 1 (the CNN pattern), and audio framing
/// (f32 [1,1,16000] padded by 512 on its last axis, the STFT pattern) under a 1-D filter.
/// A case: its name, the input's shape, the pads, the filters, and each filter's height and width.
type Case = (&'static str, &'static [usize], &'static [i64], usize, usize, usize);

const CASES: [Case; 2] = [
    ("f32 [1,16,64,64] pad 1, 3x3 conv to 16 channels", &[1, 16, 64, 64], &[0, 0, 1, 1, 0, 0, 1, 1], 16, 3, 3),
    ("f32 [1,1,16000] pad 512, 1-D conv of 9 taps to 8 channels", &[1, 1, 16000], &[0, 0, 512, 0, 0, 512], 8, 1, 9),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let ctx = GpuContext::new_blocking()?;
    let (device, queue) = (ctx.device(), ctx.queue());
    let timer = GpuTimer::new(device, queue);
    let steady = Steady { warmup_ms: 200.0, batch_ms: 20.0 };
    println!(
        "adapter: {} ({:?}); {} times",
        ctx.adapter_info().name,
        ctx.adapter_info().backend,
        timer.encoded_label()
    );
    println!(
        "{:<58} {:<9} {:>10} {:>12} {:>9} {:>9} {:>7} {:>7}",
        "case", "mode", "saved MiB", "pad+conv ms", "fused ms", "baked ms", "ratio", "baked"
    );
    for (name, shape, pads, out_channels, kh, kw) in CASES {
        let (input, weights) = conv::case_data(shape, pads, out_channels, kh, kw);
        for mode in Mode::ALL {
            let plan = PadPlan::new(DataType::Float32, shape, &PadRequest::new(pads.to_vec()).mode(mode))?;
            let conv = Conv { plan: &plan, out_channels, kh, kw };
            let prepared = Prepared::new(device, ctx.kernel(), &conv, &input, &weights);
            let outputs = pollster::block_on(conv::run_all(device, queue, &prepared));
            let padded = &outputs[2];
            for (load, out) in Load::ALL.iter().zip(&outputs) {
                if !out.iter().zip(padded).all(|(a, b)| a.to_bits() == b.to_bits()) {
                    return Err(format!("{name} {mode}: the {load:?} convolution differs from pad + conv").into());
                }
            }
            // And the convolution is one: the host's, over the CPU path's pad, within rounding.
            let x = Tensor::from_slice(DataType::Float32, shape.to_vec(), &input)?;
            let want = conv::on_host(&conv, cpu::pad(&plan, &x)?.as_slice::<f32>().ok_or("f32 data")?, &weights);
            if let Some(i) = padded.iter().zip(&want).position(|(g, w)| (g - w).abs() > 1e-4 * (1.0 + w.abs())) {
                return Err(format!("{name} {mode}: output {i} is {}, the host's {}", padded[i], want[i]).into());
            }
            let (u, f, b) = times(&timer, &steady, &prepared)?;
            // The padded tensor is written once and read by the convolution: twice its bytes.
            let saved = 2.0 * conv.padded_bytes() as f64 / (1 << 20) as f64;
            println!(
                "{name:<58} {:<9} {saved:>10.2} {u:>12.3} {f:>9.3} {b:>9.3} {:>7.2} {:>7.2}",
                mode.to_string(),
                u / f,
                u / b
            );
        }
    }
    transposed(&ctx, &timer, &steady)?;
    ctx.kernel().pop_errors_blocking()?;
    println!("every mode: the fused convolutions (parameters bound and baked) equal pad + conv bit for bit; ratio: pad+conv over fused, parameters bound (fused) or baked");
    println!("the transposed convolution: fused, baked and dilate + conv equal the direct transposed convolution on the host bit for bit");
    Ok(())
}

/// A stride-2 transposed 3x3 convolution, f32 [1,16,64,64] to [1,16,128,128]: a convolution
/// reading its input through the fused interior pad, against the same over the dilated
/// tensor our pad writes first, both bit for bit the direct transposed convolution on the host.
fn transposed(ctx: &GpuContext, timer: &GpuTimer, steady: &Steady) -> Result<(), Box<dyn std::error::Error>> {
    let (shape, out_channels) = ([1, 16, 64, 64], 16);
    let (input, transposed) = conv::exact_data(&shape, out_channels, 3, 3);
    let weights = conv::flipped(&transposed, shape[1], out_channels, 3, 3);
    let plan = PadPlan::new(DataType::Float32, &shape, &PadRequest::from_padding_config(&conv::TRANSPOSED_PADDING))?;
    let conv = Conv { plan: &plan, out_channels, kh: 3, kw: 3 };
    let prepared = Prepared::new(ctx.device(), ctx.kernel(), &conv, &input, &weights);
    let outputs = pollster::block_on(conv::run_all(ctx.device(), ctx.queue(), &prepared));
    let want = conv::transposed_on_host(&input, &shape, &transposed, out_channels, 3, 3);
    for (load, out) in Load::ALL.iter().zip(&outputs) {
        if let Some(i) = out.iter().zip(&want).position(|(a, b)| a.to_bits() != b.to_bits()) {
            return Err(format!("transposed: the {load:?} output {i} is {}, the host's {}", out[i], want[i]).into());
        }
    }
    let (u, f, b) = times(timer, steady, &prepared)?;
    let saved = 2.0 * conv.padded_bytes() as f64 / (1 << 20) as f64;
    let name = "f32 [1,16,64,64] stride-2 transposed 3x3 conv (dilate 1)";
    println!("{name:<58} {:<9} {saved:>10.2} {u:>12.3} {f:>9.3} {b:>9.3} {:>7.2} {:>7.2}", "constant", u / f, u / b);
    Ok(())
}

/// Medians of five alternated runs of each load at steady clocks (so that drift falls on all
/// alike), in ms: pad + conv, fused, baked.
fn times(
    timer: &GpuTimer,
    steady: &Steady,
    prepared: &Prepared,
) -> Result<(f64, f64, f64), Box<dyn std::error::Error>> {
    let record = move |load: Load| move |enc: &mut wgpu::CommandEncoder| prepared.record(enc, load);
    let mut batches = [0; 3];
    for (batch, load) in batches.iter_mut().zip(Load::ALL) {
        *batch = steady_batch(steady, |n| timer.encoded(n, record(load)))?;
    }
    let time = |load: Load| timer.encoded(batches[Load::ALL.iter().position(|&l| l == load).unwrap()], record(load));
    let (mut unfused, mut fused_ms, mut baked_ms) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        unfused.push(time(Load::Padded)?);
        fused_ms.push(time(Load::Fused)?);
        baked_ms.push(time(Load::Baked)?);
    }
    Ok((median(&mut unfused), median(&mut fused_ms), median(&mut baked_ms)))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
