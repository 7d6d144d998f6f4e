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

use wgpu_pad::{DataType, Mode, PadPlan, PadRequest};

/// A plan over all axes with these pads and mode.
pub fn plan(dtype: DataType, shape: &[usize], pads: &[i64], mode: Mode) -> PadPlan {
    PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap()
}
