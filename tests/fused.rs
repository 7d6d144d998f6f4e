//! The fused pad (`wgpu_pad::fused`): a convolution reading its unpadded input through the
//! generated WGSL functions (their parameters bound as a uniform, and baked as constants)
//! equals our pad followed by the same convolution, bit for bit, in
//! every mode: images padded by 1, crops, pads wider than the axis (the periodic modes
//! repeat their period), a constant other than zero, and audio framing (f32 [1,1,16000]
//! padded by 512, a 1-D filter). The padded path is also checked against the convolution on
//! the host, so that two equal wrong answers cannot pass.

mod common;

#[path = "../examples/fused_conv/conv.rs"]
mod conv;

use conv::{Conv, Load, Prepared};
use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};

fn check(shape: &[usize], pads: &[i64], constant: Option<f32>, out_channels: usize, (kh, kw): (usize, usize)) {
    let Some(ctx) = common::gpu() else { return };
    let (input, weights) = conv::case_data(shape, pads, out_channels, kh, kw);
    let x = Tensor::from_slice(DataType::Float32, shape.to_vec(), &input).unwrap();
    for mode in Mode::ALL {
        let mut request = PadRequest::new(pads.to_vec()).mode(mode);
        if let Some(c) = constant {
            request = request.constant(Tensor::from_slice(DataType::Float32, vec![], &[c]).unwrap());
        }
        let plan = PadPlan::new(DataType::Float32, shape, &request).unwrap();
        let conv = Conv { plan: &plan, out_channels, kh, kw };
        let prepared = Prepared::new(ctx.device(), ctx.kernel(), &conv, &input, &weights);
        let outputs = pollster::block_on(conv::run_all(ctx.device(), ctx.queue(), &prepared));
        let padded = &outputs[2];
        for (load, out) in Load::ALL.iter().zip(&outputs) {
            let differ = out.iter().zip(padded).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
            assert_eq!(differ, 0, "{mode} {shape:?} {pads:?} {load:?}: {differ} of {} outputs differ", out.len());
        }
        let on_cpu = cpu::pad(&plan, &x).unwrap();
        let want = conv::on_host(&conv, on_cpu.as_slice::<f32>().unwrap(), &weights);
        for (i, (g, w)) in padded.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{mode} {shape:?}: output {i} is {g}, the host's {w}");
        }
    }
    common::assert_no_gpu_errors();
}

#[test]
fn an_image_padded_by_one() {
    check(&[2, 3, 9, 7], &[0, 0, 1, 1, 0, 0, 1, 1], None, 4, (3, 3));
}

#[test]
fn crops_and_pads_wider_than_the_axis() {
    // Height: a crop of 1 before, 6 after (wider than the 4 kept); width: 9 before (past
    // two periods of 3 kept), a crop of 2 after.
    check(&[1, 2, 5, 5], &[0, 0, -1, 9, 0, 0, 6, -2], None, 3, (3, 3));
    // Pads on the batch and channel axes too.
    check(&[2, 2, 4, 4], &[1, 0, 2, 2, 0, 1, 3, 1], None, 2, (3, 3));
}

#[test]
fn a_constant_other_than_zero() {
    check(&[1, 2, 6, 6], &[0, 0, 2, 1, 0, 0, 1, 2], Some(2.5), 2, (3, 3));
}

#[test]
fn audio_framing_padded_by_512() {
    check(&[1, 1, 16000], &[0, 0, 512, 0, 0, 512], None, 4, (1, 9));
}
