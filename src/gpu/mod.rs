//! The GPU path: WGSL pad shaders (`shaders/`) run with wgpu.
//!
//! - [`PadKernel`] records a pad into a caller's command encoder, on the caller's device and
//!   buffers (the part an inference engine embeds).
//! - [`GpuContext`] pads host tensors: its own device, upload, pad, download.
//!
//! Every fixed-width type of 8 bits or more runs here, moved as u32 words (64-bit as
//! `vec2<u32>`, 128-bit as `vec4<u32>`), so no optional device feature is needed. Strings
//! and 4-bit types have no kernel; [`GpuContext::pad`] runs them on the CPU path and says so.

mod context;
mod kernel;
#[doc(hidden)]
pub mod launch;

pub use context::{ExecPath, GpuContext, Padded};
pub use kernel::{BufferRange, Encoded, PadKernel};
pub use launch::MAX_RANK;
