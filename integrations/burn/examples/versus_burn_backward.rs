//! The pad's backward under Burn's autodiff: Burn's own `Tensor::pad` against this adapter (its
//! gradient is the core's GPU gradient), on the same Burn device and tensors, f32
//! [1,64,256,256] padded by 2 on H and W, reflect and edge (the modes whose backward sums).
//! Each side builds the graph `sum(pad(x) * w)` from a synced device, then the timed part:
//! `backward()` and `x.grad()` until the device is synced again; the two alternated, medians
//! and the ratio printed and written as JSON. The gradients are compared bit for bit first.
//!
//! ```text
//! cargo run -p wgpu-pad-burn --profile burn --example versus_burn_backward --features fusion,autodiff -- [--reps N] [--json PATH]
//! ```

use std::time::Instant;

use burn::tensor::ops::PadMode as BurnMode;
use burn::tensor::{Device, Tensor, TensorData};
use wgpu_pad_burn::{BurnPad, PadMode};

#[derive(serde::Serialize)]
struct Row {
    shape: Vec<usize>,
    pairs: Vec<(usize, usize)>,
    mode: String,
    burn_ms: f64,
    adapter_ms: f64,
    /// Burn's median over the adapter's: above 1, the adapter is faster.
    speedup: f64,
}

#[derive(serde::Serialize)]
struct Report {
    device: String,
    reps: usize,
    /// The cargo profile it was built in (`burn`: optimised at level 1).
    profile: String,
    /// Burn's fusion on or off in this build (this crate's `fusion` feature turns it on).
    fusion: bool,
    rows: Vec<Row>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `x`'s gradient through `pad` under the loss `sum(pad(x) * w)`, and the ms from a synced
/// device (the forward graph built) through `backward()` and the gradient's read until the
/// device is synced again.
fn backward(
    device: &Device,
    x: &Tensor<4>,
    w: &Tensor<4>,
    pad: impl Fn(Tensor<4>) -> Tensor<4>,
) -> Result<(Tensor<4>, f64), Box<dyn std::error::Error>> {
    let x = x.clone().require_grad();
    let loss = (pad(x.clone()) * w.clone()).sum();
    device.sync()?;
    let start = Instant::now();
    let grads = loss.backward();
    let grad = x.grad(&grads).ok_or("x has no gradient")?;
    device.sync()?;
    Ok((grad, start.elapsed().as_secs_f64() * 1e3))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let reps: usize = arg("--reps").map_or(Ok(10), |v| v.parse())?;
    let json = arg("--json");

    let (device, setup) = Device::wgpu_options().init_with_setup()?;
    let pad = BurnPad::new(&device, &setup)?;
    let device = device.autodiff();
    let info = setup.adapter.get_info();
    let device_name = format!("{} ({:?}, {})", info.name, info.backend, info.driver);
    let fusion = if cfg!(feature = "fusion") { "on" } else { "off" };
    println!("device: {device_name}; Burn's fusion {fusion}; {reps} alternated runs per side; medians in ms");

    let shape = [1, 64, 256, 256];
    let pairs = [(0, 0), (0, 0), (2, 2), (2, 2)];
    let n: usize = shape.iter().product();
    let x = Tensor::<4>::from_data(
        TensorData::new((0..n).map(|i| ((i % 977) as f32 * 0.37).sin()).collect::<Vec<f32>>(), shape),
        &device,
    );
    let out = [1, 64, 260, 260];
    let m: usize = out.iter().product();
    // Upstream gradients of every magnitude, so that the order of each sum shows in its bits.
    let w = Tensor::<4>::from_data(
        TensorData::new(
            (0..m).map(|i| ((i % 1013) as f32 * 0.731).sin() * 2f32.powi((i % 17) as i32 - 8)).collect::<Vec<f32>>(),
            out,
        ),
        &device,
    );
    println!("{:<22} {:<9} {:>9} {:>9} {:>8}", "shape", "mode", "burn", "adapter", "speedup");
    let mut rows = Vec::new();
    for (mode_name, mode) in [("reflect", BurnMode::Reflect), ("edge", BurnMode::Edge)] {
        let theirs = |t: Tensor<4>| t.pad(pairs.as_slice(), mode);
        let ours = |t: Tensor<4>| pad.pad(t, &pairs, PadMode::from(mode)).expect("the adapter's pad");
        // Bit for bit first.
        let (a, _) = backward(&device, &x, &w, ours)?;
        let (b, _) = backward(&device, &x, &w, theirs)?;
        if a.into_data().as_bytes() != b.into_data().as_bytes() {
            return Err(format!("{mode_name}: the adapter's gradient and Burn's differ").into());
        }
        let (mut burn_ms, mut adapter_ms) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            burn_ms.push(backward(&device, &x, &w, theirs)?.1);
            adapter_ms.push(backward(&device, &x, &w, ours)?.1);
        }
        let (b, a) = (median(burn_ms), median(adapter_ms));
        println!("{:<22} {mode_name:<9} {b:>9.2} {a:>9.2} {:>7.2}x", format!("{shape:?}"), b / a);
        rows.push(Row {
            shape: shape.to_vec(),
            pairs: pairs.to_vec(),
            mode: mode_name.into(),
            burn_ms: b,
            adapter_ms: a,
            speedup: b / a,
        });
    }
    pad.kernel().pop_errors_blocking()?;
    if let Some(path) = json {
        // target/<profile>/examples/versus_burn_backward: the profile it was built in.
        let exe = std::env::current_exe()?;
        let profile = exe.iter().rev().nth(2).map_or("?".into(), |p| p.to_string_lossy().into_owned());
        let report = Report { device: device_name, reps, profile, fusion: cfg!(feature = "fusion"), rows };
        std::fs::write(&path, serde_json::to_string_pretty(&report)? + "\n")?;
        println!("wrote {path}");
    }
    Ok(())
}
