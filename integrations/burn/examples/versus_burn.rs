//! Burn's own `Tensor::pad` against this adapter, on the same Burn device and the same
//! tensors (f32 activations, an 8-bit image, and a tiny tensor for the fixed cost of a
//! call): each mode Burn has (constant, reflect, edge), the two calls alternated, each
//! timed from a synced device to a synced device (so Burn's queued kernels and the pad's
//! dispatch are both inside), medians and ratios printed and written as JSON. The outputs
//! are compared bit for bit first.
//!
//! ```text
//! cargo run -p wgpu-pad-burn --profile burn --example versus_burn [--features fusion] -- [--reps N] [--json PATH]
//! ```

use std::time::Instant;

use burn::tensor::ops::PadMode as BurnMode;
use burn::tensor::{DType, Device, Int, Tensor, TensorData};
use wgpu_pad_burn::{BurnPad, PadMode};

#[derive(serde::Serialize)]
struct Row {
    case: String,
    dtype: String,
    shape: Vec<usize>,
    pairs: Vec<(usize, usize)>,
    mode: String,
    out_bytes: u64,
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

/// Either kind of tensor the cases use.
#[derive(Clone)]
enum Input {
    Float(Tensor<4>),
    Int(Tensor<4, Int>),
}

impl Input {
    fn burn_pad(&self, pairs: &[(usize, usize)], mode: BurnMode) -> TensorData {
        match self {
            Input::Float(t) => t.clone().pad(pairs, mode).into_data(),
            Input::Int(t) => t.clone().pad(pairs, mode).into_data(),
        }
    }

    fn adapter_pad(&self, pad: &BurnPad, pairs: &[(usize, usize)], mode: BurnMode) -> TensorData {
        match self {
            Input::Float(t) => pad.pad(t.clone(), pairs, mode).unwrap().into_data(),
            Input::Int(t) => pad.pad(t.clone(), pairs, mode).unwrap().into_data(),
        }
    }

    /// Times one pad, from a synced device until its work is done.
    fn time(&self, device: &Device, run: impl Fn(&Input) -> usize) -> f64 {
        device.sync().unwrap();
        let start = Instant::now();
        let kept = run(self);
        device.sync().unwrap();
        let t = start.elapsed().as_secs_f64() * 1e3;
        std::hint::black_box(kept);
        t
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let reps: usize = arg("--reps").map_or(Ok(10), |v| v.parse())?;
    let json = arg("--json");

    let (device, setup) = Device::wgpu_options().init_with_setup()?;
    let pad = BurnPad::new(&device, &setup)?;
    let info = setup.adapter.get_info();
    let device_name = format!("{} ({:?}, {})", info.name, info.backend, info.driver);
    let fusion = if cfg!(feature = "fusion") { "on" } else { "off" };
    println!("device: {device_name}; Burn's fusion {fusion}; {reps} alternated runs per side; medians in ms");

    // f32 activations as a convolution pads them, and an 8-bit image: u8 where Burn's device
    // has it, else its pixels held in int32 (Burn's `wgpu` backend compiles WGSL, which has
    // no 8-bit storage; its SPIR-V compiler, Burn's `vulkan` feature, has).
    let n = 64 * 256 * 256;
    let acts =
        TensorData::new((0..n).map(|i| ((i % 977) as f32 * 0.37).sin()).collect::<Vec<f32>>(), [1, 64, 256, 256]);
    let m = 3 * 720 * 1280;
    let pixels = (0..m).map(|i: usize| (i * 31 % 251) as u8);
    let image = if device.supports_dtype(DType::U8) {
        Tensor::from_data(TensorData::new(pixels.collect::<Vec<u8>>(), [1, 3, 720, 1280]), (&device, DType::U8))
    } else {
        println!("(this device has no u8 tensors: the image is held in i32)");
        let wide = pixels.map(i32::from).collect::<Vec<i32>>();
        Tensor::from_data(TensorData::new(wide, [1, 3, 720, 1280]), (&device, DType::I32))
    };
    let cases = [
        (
            "activations",
            Input::Float(Tensor::from_data(acts, (&device, DType::F32))),
            vec![(0, 0), (0, 0), (3, 3), (3, 3)],
        ),
        ("image", Input::Int(image), vec![(0, 0), (0, 0), (16, 16), (8, 8)]),
        // Almost no bytes: what each side's launches and host code cost per call.
        ("tiny", Input::Float(Tensor::ones([1, 1, 4, 4], &device)), vec![(0, 0), (0, 0), (1, 1), (1, 1)]),
    ];

    let mut rows = Vec::new();
    println!(
        "{:<12} {:<6} {:<22} {:<9} {:>9} {:>9} {:>8}",
        "case", "dtype", "shape", "mode", "burn", "adapter", "speedup"
    );
    for (name, input, pairs) in &cases {
        let (dtype, shape) = match input {
            Input::Float(t) => (t.dtype(), t.dims().to_vec()),
            Input::Int(t) => (t.dtype(), t.dims().to_vec()),
        };
        for (mode_name, mode) in
            [("constant", BurnMode::Constant(0.5)), ("reflect", BurnMode::Reflect), ("edge", BurnMode::Edge)]
        {
            let mode = match (mode, input) {
                (BurnMode::Constant(_), Input::Int(_)) => BurnMode::Constant(7.0),
                (m, _) => m,
            };
            // Bit for bit first.
            let (ours, theirs) = (input.adapter_pad(&pad, pairs, mode), input.burn_pad(pairs, mode));
            if ours.as_bytes() != theirs.as_bytes() {
                return Err(format!("{name} {mode_name}: the adapter and Burn's pad differ").into());
            }
            let out_bytes = ours.as_bytes().len() as u64;
            let (mut burn_ms, mut adapter_ms) = (Vec::new(), Vec::new());
            for _ in 0..reps {
                burn_ms.push(input.time(&device, |x| match x {
                    Input::Float(t) => t.clone().pad(pairs.as_slice(), mode).dims()[2],
                    Input::Int(t) => t.clone().pad(pairs.as_slice(), mode).dims()[2],
                }));
                adapter_ms.push(input.time(&device, |x| match x {
                    Input::Float(t) => pad.pad(t.clone(), pairs, PadMode::from(mode)).unwrap().dims()[2],
                    Input::Int(t) => pad.pad(t.clone(), pairs, PadMode::from(mode)).unwrap().dims()[2],
                }));
            }
            let (b, a) = (median(burn_ms), median(adapter_ms));
            println!(
                "{name:<12} {:<6} {:<22} {mode_name:<9} {b:>9.2} {a:>9.2} {:>7.2}x",
                format!("{dtype:?}"),
                format!("{shape:?}"),
                b / a
            );
            rows.push(Row {
                case: name.to_string(),
                dtype: format!("{dtype:?}"),
                shape: shape.clone(),
                pairs: pairs.clone(),
                mode: mode_name.to_string(),
                out_bytes,
                burn_ms: b,
                adapter_ms: a,
                speedup: b / a,
            });
        }
    }
    pad.kernel().pop_errors_blocking()?;
    if let Some(path) = json {
        // target/<profile>/examples/versus_burn: the profile it was built in.
        let exe = std::env::current_exe()?;
        let profile = exe.iter().rev().nth(2).map_or("?".into(), |p| p.to_string_lossy().into_owned());
        let report = Report { device: device_name, reps, profile, fusion: cfg!(feature = "fusion"), rows };
        std::fs::write(&path, serde_json::to_string_pretty(&report)? + "\n")?;
        println!("wrote {path}");
    }
    Ok(())
}
