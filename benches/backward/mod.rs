//! The gradient's cases (`benchmarks/jax_backward.py` times XLA's vjp of `jnp.pad` on them):
//! issue 84's nine, and the 16 MiB image's in the two 16-bit types mixed-precision training
//! pads in; shared by `cpu_pad`'s `backward/` group and `backward_minima`.

use wgpu_pad::{DataType, Mode, PadPlan, PadRequest, Tensor};

/// name, type, shape, ONNX pads, mode.
pub type BackwardCase = (&'static str, DataType, &'static [usize], &'static [i64], Mode);

pub const BACKWARD_CASES: [BackwardCase; 11] = [
    ("f32_1x64x256x256_hw2", DataType::Float32, &[1, 64, 256, 256], &[0, 0, 2, 2, 0, 0, 2, 2], Mode::Constant),
    ("f32_1x64x256x256_hw2", DataType::Float32, &[1, 64, 256, 256], &[0, 0, 2, 2, 0, 0, 2, 2], Mode::Reflect),
    ("f32_1x64x256x256_hw2", DataType::Float32, &[1, 64, 256, 256], &[0, 0, 2, 2, 0, 0, 2, 2], Mode::Edge),
    ("f32_1x64x256x256_hw2", DataType::Float32, &[1, 64, 256, 256], &[0, 0, 2, 2, 0, 0, 2, 2], Mode::Wrap),
    ("f32_1x64x256x256_hw2", DataType::Float32, &[1, 64, 256, 256], &[0, 0, 2, 2, 0, 0, 2, 2], Mode::Symmetric),
    ("f32_1x3x224x224_hw100", DataType::Float32, &[1, 3, 224, 224], &[0, 0, 100, 100, 0, 0, 100, 100], Mode::Reflect),
    ("f32_1x3x224x224_hw100", DataType::Float32, &[1, 3, 224, 224], &[0, 0, 100, 100, 0, 0, 100, 100], Mode::Edge),
    ("f16_8x4096x256_last8", DataType::Float16, &[8, 4096, 256], &[0, 0, 0, 0, 0, 8], Mode::Reflect),
    ("f32_16000_512", DataType::Float32, &[16000], &[512, 512], Mode::Reflect),
    ("f16_1x64x256x256_hw2", DataType::Float16, &[1, 64, 256, 256], &[0, 0, 2, 2, 0, 0, 2, 2], Mode::Reflect),
    ("bf16_1x64x256x256_hw2", DataType::Bfloat16, &[1, 64, 256, 256], &[0, 0, 2, 2, 0, 0, 2, 2], Mode::Edge),
];

/// A case's plan, its grad_out (small integers: no sum overflows, no NaN or subnormal slows
/// either side) and the forward's input (written, as the gradient's is: a zeroed vector is
/// the kernel's zero page until written, every read one cached page; a copy from it took
/// 0.70 ms where one from written memory took 1.17).
pub fn backward_case(case: &BackwardCase) -> (PadPlan, Tensor, Vec<u8>) {
    let (_, dtype, shape, pads, mode) = *case;
    let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).expect("a valid case");
    let (in_bytes, _) = plan.byte_sizes().expect("sizes that fit");
    let value = |i: usize| ((i % 7) as f32) - 3.0;
    let grad = match dtype {
        DataType::Float16 => {
            let g: Vec<half::f16> = (0..plan.out_len()).map(|i| half::f16::from_f32(value(i))).collect();
            Tensor::from_slice(dtype, plan.out_shape().to_vec(), &g)
        }
        DataType::Bfloat16 => {
            let g: Vec<half::bf16> = (0..plan.out_len()).map(|i| half::bf16::from_f32(value(i))).collect();
            Tensor::from_slice(dtype, plan.out_shape().to_vec(), &g)
        }
        _ => {
            let g: Vec<f32> = (0..plan.out_len()).map(value).collect();
            Tensor::from_slice(dtype, plan.out_shape().to_vec(), &g)
        }
    };
    let input = (0..in_bytes as usize).map(|i| (i % 251) as u8).collect();
    (plan, grad.expect("a tensor of the plan's output shape"), input)
}
