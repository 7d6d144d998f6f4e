//! The pad kernels' host halves, one module each beside its shader, and the one place a pad's
//! kernel is chosen ([`Kernel::choose`]):
//!
//! - `wide`: 32-, 64- and 128-bit words on the row grid (`shaders/wide.wgsl`);
//! - `flat`: wide words on the flat grid, the roofline copy's shape (`shaders/flat.wgsl`);
//! - `narrow`: 8- and 16-bit elements in u32 words, by rows (`shaders/narrow_rows.wgsl`) or per word (`shaders/narrow.wgsl`), and the
//!   [`RowWalk`](super::shader::RowWalk) its pipelines are specialised for.
//!
//! Each has its `fits` (whether a window's grid fits the device), its `grid` (the workgroups
//! and the uniform's kernel fields) and its tests; the layout (`layout.rs`) calls them only
//! through [`Kernel`].

pub(super) mod flat;
pub(super) mod narrow;
pub(super) mod wide;

use super::params::Params;
use super::variant::KernelVariant;
use super::window::WindowShape;

/// The lanes a grid sized to the device fills (the `device-grid` variants): an NVIDIA H100's
/// 132 SMs at half their 2,048 resident lanes (a guess the next lease measures; a larger GPU
/// runs it with some SMs idle).
pub(super) const DEVICE_LANES: u64 = 1 << 17;

/// The kernel a pad's windows run on, in the shape its variant asks for (each kernel's own
/// variant enum: the measured alternatives stay inside the kernel they change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kernel {
    /// Wide words, a row's elements a lane, a grid width apart (`wide`).
    Rows(wide::WideVariant),
    /// Wide words on the flat grid (`flat`).
    Flat(flat::FlatGrid),
    /// 8- and 16-bit elements in u32 words (`narrow`; a narrow flat variant inside it).
    Narrow(narrow::NarrowVariant),
}

impl Kernel {
    /// The kernel for a pad moving `word`-byte words into an output of `out_lens` (its merged
    /// axes' lengths), under `variant`: narrow below 4 bytes; else the flat grid where
    /// `flat::default_words` takes it (or the variant forces it), the row grid otherwise.
    pub(super) fn choose(word: u64, out_lens: &[usize], variant: KernelVariant) -> Kernel {
        if word < 4 {
            return Kernel::Narrow(variant.narrow());
        }
        match variant.wide_flat_grid(flat::default_words(out_lens, word)) {
            Some(grid) => Kernel::Flat(grid),
            None => Kernel::Rows(variant.wide()),
        }
    }

    /// The flat grid's words a lane, for the pipeline key (wide words only).
    pub(super) fn flat_words(self) -> Option<u32> {
        match self {
            Kernel::Flat(grid) => Some(grid.words),
            _ => None,
        }
    }

    /// Whether a window of `shape` fits this kernel's grid on the device.
    pub(super) fn fits(self, shape: &WindowShape, word: u64) -> bool {
        match self {
            Kernel::Rows(v) => wide::fits(shape, v.elems()),
            Kernel::Flat(grid) => flat::fits(shape, grid),
            Kernel::Narrow(_) => narrow::fits(shape, word),
        }
    }

    /// A window's workgroups, its kernel fields filled in `params`, and whether its narrow
    /// rows end mid-word (`first`: the window's first output word within its binding).
    pub(super) fn grid(self, shape: &WindowShape, params: &mut Params, word: u64, first: u64) -> ([u32; 3], bool) {
        match self {
            Kernel::Rows(v) => (wide::grid(shape, params, v.elems()), false),
            Kernel::Flat(grid) => (flat::grid(shape, params, grid), false),
            Kernel::Narrow(v) => narrow::grid(shape, params, word, first, v),
        }
    }
}
