//! What Burn's own `Tensor::pad` does and what the adapter adds, found by running both: each
//! mode and type, with pads shorter than the axis, wider than it, and a crop; with the
//! `autodiff` feature, gradients too. Where both pad, their bytes are compared. Prints the
//! Markdown table the adapter's README shows.
//!
//! ```text
//! cargo run -p wgpu-pad-burn --profile burn --example capabilities --features fusion,autodiff
//! ```

use std::panic::{catch_unwind, AssertUnwindSafe};

use burn::tensor::ops::PadMode as BurnMode;
use burn::tensor::{Bool, DType, Device, Int, Tensor, TensorData};
use wgpu_pad_burn::{BurnPad, PadMode};

/// A test tensor of one Burn type.
#[derive(Clone)]
enum Any {
    Float(Tensor<3>),
    Int(Tensor<3, Int>),
    Bool(Tensor<3, Bool>),
}

/// Burn's pad of one case: its bytes, or why none ("no API", "panics").
fn burn_pad(x: &Any, pairs: &[(i64, i64)], mode: Option<BurnMode>) -> Result<Vec<u8>, &'static str> {
    let (Some(mode), true) = (mode, pairs.iter().all(|&(b, e)| b >= 0 && e >= 0)) else {
        return Err("no API"); // Burn's pads are usize; its modes are three
    };
    let pairs: Vec<(usize, usize)> = pairs.iter().map(|&(b, e)| (b as usize, e as usize)).collect();
    let run = || match x {
        Any::Float(t) => Some(t.clone().pad(pairs.as_slice(), mode).into_data()),
        Any::Int(t) => Some(t.clone().pad(pairs.as_slice(), mode).into_data()),
        Any::Bool(_) => None, // `pad` is for numeric kinds only
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Some(data)) => Ok(data.as_bytes().to_vec()),
        Ok(None) => Err("no API"),
        Err(_) => Err("panics"),
    }
}

/// The adapter's pad of one case: its bytes, or its error.
fn adapter_pad(pad: &BurnPad, x: &Any, pairs: &[(i64, i64)], mode: PadMode) -> Result<Vec<u8>, String> {
    let data = match x {
        Any::Float(t) => pad.pad(t.clone(), pairs, mode).map(|t| t.into_data()),
        Any::Int(t) => pad.pad(t.clone(), pairs, mode).map(|t| t.into_data()),
        Any::Bool(t) => pad.pad(t.clone(), pairs, mode).map(|t| t.into_data()),
    };
    data.map(|d| d.as_bytes().to_vec()).map_err(|e| e.to_string())
}

/// One table cell: who pads the case.
fn cell(burn: Result<Vec<u8>, &str>, ours: Result<Vec<u8>, String>) -> String {
    match (burn, ours) {
        (Ok(a), Ok(b)) if a == b => "both, same bytes".into(),
        (Ok(_), Ok(_)) => "both, **bytes differ**".into(),
        (Err(why), Ok(_)) => format!("adapter (Burn: {why})"),
        (Ok(_), Err(e)) => format!("Burn; the adapter refuses: {e}"),
        (Err(why), Err(e)) => format!("neither (Burn: {why}; adapter: {e})"),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Burn's panics are outcomes here, not news.
    std::panic::set_hook(Box::new(|_| {}));
    let (device, setup) = Device::wgpu_options().init_with_setup()?;
    let pad = BurnPad::new(&device, &setup)?;
    let shape = [2, 5, 7];
    let n: usize = shape.iter().product();
    let floats = TensorData::new((0..n).map(|i| (i as f32 * 0.37).sin() * 40.0).collect::<Vec<f32>>(), shape);
    let types: Vec<(&str, Any)> = vec![
        ("f32", Any::Float(Tensor::from_data(floats.clone(), (&device, DType::F32)))),
        ("f16", Any::Float(Tensor::<3>::from_data(floats.clone(), (&device, DType::F32)).cast(DType::F16))),
        ("i32", Any::Int(Tensor::from_data(TensorData::new((0..n as i32).collect::<Vec<_>>(), shape), &device))),
        (
            "bool",
            Any::Bool(Tensor::from_data(
                TensorData::new((0..n).map(|i| i % 3 == 0).collect::<Vec<_>>(), shape),
                &device,
            )),
        ),
    ];
    let modes: [(&str, Option<BurnMode>, PadMode); 5] = [
        ("constant", Some(BurnMode::Constant(0.0)), PadMode::Constant(0.into())),
        ("reflect", Some(BurnMode::Reflect), PadMode::Reflect),
        ("edge", Some(BurnMode::Edge), PadMode::Edge),
        ("wrap", None, PadMode::Wrap),
        ("symmetric", None, PadMode::Symmetric),
    ];
    let shapes: [(&str, [(i64, i64); 2]); 3] =
        [("pads < axis", [(1, 3), (4, 2)]), ("pads > axis", [(6, 1), (9, 2)]), ("a crop", [(-1, 2), (3, -2)])];

    let fusion = if cfg!(feature = "fusion") { "on" } else { "off" };
    println!("Burn's fusion {fusion}; input [2, 5, 7], pairs for the last two axes.\n");
    println!("| mode | pads | {} |", types.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(" | "));
    println!("|---|---|{}", "---|".repeat(types.len()));
    for (mode_name, burns, ours) in modes {
        for (what, pairs) in shapes {
            let cells: Vec<String> = types
                .iter()
                .map(|(_, x)| cell(burn_pad(x, &pairs, burns), adapter_pad(&pad, x, &pairs, ours)))
                .collect();
            println!("| {mode_name} | {what} | {} |", cells.join(" | "));
        }
    }
    #[cfg(feature = "autodiff")]
    gradients(&device, &pad, &modes);
    pad.kernel().pop_errors_blocking()?;
    Ok(())
}

/// Under autodiff: does each side's pad of a tracked f32 give a gradient, and the same one?
#[cfg(feature = "autodiff")]
fn gradients(device: &Device, pad: &BurnPad, modes: &[(&str, Option<BurnMode>, PadMode)]) {
    let device = device.clone().autodiff();
    let x = Tensor::<2>::from_data(
        TensorData::new((0..35).map(|i| (i as f32 * 0.37).sin()).collect::<Vec<f32>>(), [5, 7]),
        &device,
    );
    let grad = |f: &dyn Fn(Tensor<2>) -> Tensor<2>| -> Option<Vec<u8>> {
        let x = x.clone().require_grad();
        let run = AssertUnwindSafe(|| {
            let y = f(x.clone());
            let w = Tensor::<2>::from_data(
                TensorData::new(
                    (0..y.dims().iter().product::<usize>()).map(|i| (i as f32 * 0.11).cos()).collect::<Vec<f32>>(),
                    y.dims(),
                ),
                &device,
            );
            let grads = (y * w).sum().backward();
            x.grad(&grads).map(|g| g.into_data().as_bytes().to_vec())
        });
        catch_unwind(run).ok().flatten()
    };
    println!("\nGradients of an f32 [5, 7] padded by (2, 1), (3, 2) under Burn's autodiff:\n");
    println!("| mode | gradient |\n|---|---|");
    for &(name, burns, ours) in modes {
        let theirs = burns.and_then(|m| grad(&|t| t.pad([(2, 1), (3, 2)], m)));
        let mine = grad(&|t| pad.pad(t, &[(2, 1), (3, 2)], ours).unwrap());
        let cell = match (theirs, mine) {
            (Some(a), Some(b)) if a == b => "both, same bytes",
            (Some(_), Some(_)) => "both, **bytes differ**",
            (None, Some(_)) => "adapter (Burn: no API)",
            (_, None) => "adapter: none",
        };
        println!("| {name} | {cell} |");
    }
}
