//! Shared test support: the conformance corpus (`corpus.rs`), GPU contexts, buffers and
//! the helpers the GPU tests share (`gpu.rs`), and the one way a test builds a compute
//! pipeline of its own WGSL (`pipeline.rs`, which the encode bench and the embed example
//! include too). Each test binary uses part of it.
#![allow(dead_code, unused_imports, unused_macros)]

mod corpus;
mod gpu;
mod pipeline;

pub use corpus::*;
pub use gpu::*;
pub use pipeline::compute_pipeline;

use wgpu_pad::{DataType, Mode, PadPlan, PadRequest, Tensor};

/// A plan over all axes with these pads and mode.
pub fn plan(dtype: DataType, shape: &[usize], pads: &[i64], mode: Mode) -> PadPlan {
    PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap()
}

/// Random data of `dtype` and `shape` from `seed` (xorshift64): strings `s0` to `s999`, bools 0
/// or 1, 4-bit types' nibbles packed, other types' bytes.
pub fn random_tensor(dtype: DataType, shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let shape = shape.to_vec();
    match dtype {
        DataType::String => Tensor::from_strings(shape, (0..n).map(|_| format!("s{}", next() % 1000)).collect()),
        DataType::Bool => Tensor::from_bytes(dtype, shape, (0..n).map(|_| (next() & 1) as u8).collect()),
        DataType::Int4 | DataType::Uint4 | DataType::Float4e2m1 => {
            let elems: Vec<u8> = (0..n).map(|_| (next() & 0x0f) as u8).collect();
            Tensor::from_bytes(dtype, shape, wgpu_pad::pack_nibbles(&elems))
        }
        t => {
            let w = t.width().bytes().unwrap();
            Tensor::from_bytes(t, shape, (0..n * w).map(|_| next() as u8).collect())
        }
    }
    .unwrap()
}

/// The seed of a run's property cases: `WGPU_PAD_PROPTEST_SEED` if set (to rerun a failure),
/// else a new one, printed either way so that any failure can be rerun exactly.
pub fn proptest_seed() -> u64 {
    let seed = match std::env::var("WGPU_PAD_PROPTEST_SEED") {
        Ok(s) => s.parse().expect("WGPU_PAD_PROPTEST_SEED: a number"),
        Err(_) => std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64,
    };
    eprintln!("property cases from seed {seed}: WGPU_PAD_PROPTEST_SEED={seed} reruns them");
    seed
}
