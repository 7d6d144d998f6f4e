//! # wgpu-pad
//!
//! The ONNX `Pad` operator on the GPU (wgpu compute shaders in WGSL) and on the CPU: every
//! mode (constant, reflect, edge, wrap, symmetric), all 24 data types of Pad-24, every
//! operator version, bit for bit.
//!
//! One validated [`PadPlan`] drives every path:
//!
//! ```
//! use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};
//!
//! let x = Tensor::from_slice(DataType::Float32, vec![2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
//! let request = PadRequest::new(vec![0, 1, 0, 2]).mode(Mode::Reflect); // begins, then ends
//! let plan = PadPlan::new(x.dtype(), x.shape(), &request).unwrap();
//! let y = cpu::pad(&plan, &x).unwrap();
//! assert_eq!(y.shape(), &[2, 6]);
//! assert_eq!(y.as_slice::<f32>().unwrap(), &[2., 1., 2., 3., 2., 1., 5., 4., 5., 6., 5., 4.]);
//! ```
//!
//! - [`forms`] builds plans from ONNX Pad-1 … Pad-24, com.microsoft Pad-1 and OpenVINO Pad-1,
//!   checked against the declared version.
#![cfg_attr(
    feature = "wgpu",
    doc = "- [`gpu`] runs a plan with WGSL compute shaders: [`gpu::PadKernel`] records into an
  engine's own encoder, device and buffers; [`gpu::GpuContext`] pads host tensors."
)]
#![cfg_attr(
    not(feature = "wgpu"),
    doc = "- [`gpu`] runs a plan with WGSL compute shaders: with the `wgpu` feature, `gpu::PadKernel`
  records into an engine's own encoder, device and buffers; `gpu::GpuContext` pads host tensors."
)]
//! - [`fused`] writes the pad as WGSL functions an engine's own kernel calls (a convolution
//!   reading its unpadded input), so no padded tensor is written.
//! - [`cpu`] runs a plan on host memory; [`reference`](mod@reference) is the slow per-element oracle.
//! - The `wgpu` feature (on by default) is the GPU path on wgpu 30 (`gpu::PadKernel`,
//!   `gpu::GpuContext`). Without it the crate has no wgpu at all and still makes every
//!   pad's [`gpu::Program`] (its WGSL and dispatches as plain data) for a host that brings
//!   its own wgpu, of any major, or none.
//! - With the `npy` feature (on by default), `npy` reads and writes `.npy` files, including
//!   ml_dtypes' descrs, streaming and within a memory cap; with `literal`, `literal` parses a
//!   constant of any type from text. The `cli` feature builds the `wgpu-pad` command on them.
//!
//! Every bad request is a [`PadError`] naming the axis and the values, never a panic.
#![warn(missing_docs)]
// docs.rs (--cfg docsrs, nightly): each feature-gated item says which feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod adjoint;
mod constant;
mod copy;
pub mod cpu;
mod dtype;
mod error;
pub mod forms;
pub mod fused;
pub mod gpu;
#[cfg(feature = "literal")]
pub mod literal;
mod memory;
mod mode;
#[cfg(feature = "npy")]
pub mod npy;
mod plan;
pub mod reference;
mod tensor;
mod threads;

pub use memory::{OutputArena, DEFAULT_OUTPUT_ARENA_BYTES};
/// Under Miri, CI's run (`.ci/miri`) takes a sample of the larger unit tests' cases; built
/// with `WGPU_PAD_MIRI_FULL` set (read at compile time: Miri hides the environment), all.
#[cfg(test)]
pub(crate) const MIRI_SAMPLE: bool = cfg!(miri) && option_env!("WGPU_PAD_MIRI_FULL").is_none();

/// The unit tests' random numbers: xorshift64 from `seed` (not zero), each draw below `n`.
#[cfg(test)]
pub(crate) fn draws(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut state = seed;
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    }
}

pub use constant::{Constant, ConstantValue, Scalar};
pub use dtype::{DataType, ElementWidth};
pub use error::{GpuLimit, PadError, Result, Side};
pub use forms::FormOptions;
pub use mode::Mode;
pub use plan::{AxisMap, Lattice, PadPlan, PadRequest, DEFAULT_MAX_OUTPUT_BYTES};
pub use tensor::{pack_nibbles, unpack_nibbles, Tensor, TensorData};
