//! The GPU path: WGSL pad shaders (`shaders/`) run with wgpu.
//!
//! Without the `wgpu` feature (on by default) only [`Program`] and what it needs are here:
//! a pad's WGSL and dispatches as plain data, for a host on another wgpu major or none.
//!
//! - `PadKernel` records a pad into a caller's command encoder or open compute pass, on
//!   the caller's device and buffers, dense or through strided views (the part an
//!   inference engine embeds).
//! - `GpuContext` pads host tensors: its own device, upload, pad, download.
//!
//! Every fixed-width type of 8 bits or more runs here, moved as u32 words (64-bit as
//! `vec2<u32>`, 128-bit as `vec4<u32>`), so no optional device feature is needed. Pads
//! larger than the device's `max_storage_buffer_binding_size` run as several dispatches
//! over binding windows. Strings and 4-bit types have no kernel; `GpuContext::pad` runs
//! them on the CPU path and says so.
//!
//! Inside: `program` (a pad's dispatches as plain data, [`Program`]; it imports no layout),
//! `build` (the one builder every kind of program goes through: its box cut into binding
//! windows, its shader settled, the `Program`), `layout` ([`Program::new`]: merged axes, a
//! pad as the builder's kind), `view` (a view's checks before
//! any layout), `checks` (the device's limits and a view's binding, shared by the layouts),
//! `backward` (the gradient's programs), `interior` (interior padding's programs), `window` (the splitter and a window's shape, shared by the layout and the kernels' host
//! halves), `kernels` (each kernel's host half, `wide`, `flat` and `narrow`, and the one choice
//! among them; `narrow` also the `RowWalk`), `variant` (kernels kept side by side for measurement; `measurement`, hidden, the one entry that selects them), `params` (the uniform and the constants shared with WGSL),
//! `shader` (pipeline keys and their WGSL), `kernel` (`PadKernel`: pipelines, bind groups,
//! recording, through `Program`'s public API), `context` (`GpuContext`: device, upload,
//! readback) and `buffers` (ranges, uploads, the pool).

mod backward;
#[cfg(feature = "wgpu")]
mod buffers;
mod build;
mod checks;
#[cfg(feature = "wgpu")]
mod context;
mod interior;
#[cfg(feature = "wgpu")]
mod kernel;
mod kernels;
mod layout;
#[doc(hidden)]
#[cfg(feature = "variants")]
pub mod measurement;
mod params;
mod program;
mod shader;
mod variant;
mod view;
mod window;

#[cfg(feature = "wgpu")]
pub use buffers::BufferRange;
#[cfg(feature = "wgpu")]
pub use context::{ExecPath, GpuContext, Padded, DEFAULT_BUFFER_POOL_BYTES};
#[cfg(feature = "wgpu")]
pub use kernel::{Encoded, PadKernel, PreparedPad};
pub use params::MAX_RANK;
pub use program::{BufferView, DeviceLimits, Dispatch, Program};
pub use shader::{PipelineKey, ProgramKind};
