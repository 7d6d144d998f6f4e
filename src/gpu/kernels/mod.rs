//! The pad kernels' host halves, one module each beside its shader, and the one place a pad's
//! kernel is chosen ([`Kernel::choose`]):
//!
//! - `wide`: 32-, 64- and 128-bit words on the row grid (`shaders/wide.wgsl`);
//! - `flat`: wide words on the flat grid, the roofline copy's shape (`shaders/flat.wgsl`);
//! - `narrow`: 8- and 16-bit elements in u32 words, by rows (`shaders/narrow_rows.wgsl`) or
//!   per word (`shaders/narrow_words.wgsl`).
//!
//! Each has its `fits` (whether a window's grid fits the device), its `grid` (the workgroups
//! and the uniform's kernel fields), the shape each kernel variant asks of it (its own enum's
//! `of`), its pipelines' constants and code, and its tests. The layout (`layout.rs`) calls
//! them only through [`Kernel`], shader.rs only through [`Shader`].

pub(super) mod flat;
pub(super) mod narrow;
pub(super) mod wide;

use super::params::{Params, WgslValue, WORKGROUP};
use super::variant::KernelVariant;
use super::window::WindowShape;
use crate::error::Result;
use crate::plan::PadPlan;

/// The lanes a grid sized to the device fills (the `device-grid` variants): an NVIDIA H100's
/// 132 SMs at half their 2,048 resident lanes (a guess the next lease measures; a larger GPU
/// runs it with some SMs idle).
pub(super) const DEVICE_LANES: u64 = 1 << 17;

/// The kernel a pad's windows run on, in the shape its variant asks for, and how its
/// shader binds the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Kernel {
    kind: Kind,
    read_only_input: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Wide words, a row's elements a lane, a grid width apart (`wide`).
    Rows(wide::WideVariant),
    /// Wide words on the flat grid (`flat`).
    Flat(flat::FlatGrid),
    /// 8- and 16-bit elements in u32 words (`narrow`).
    Narrow(narrow::NarrowVariant),
}

impl Kernel {
    /// The kernel for a pad moving `word`-byte words into an output of `out_lens` (its merged
    /// axes' lengths), under `variant`: narrow below 4 bytes; else the flat grid where
    /// `flat::default_words` takes it (or the variant forces it), the row grid otherwise.
    pub(super) fn choose(word: u64, out_lens: &[usize], variant: KernelVariant) -> Kernel {
        let kind = match word {
            ..4 => Kind::Narrow(narrow::NarrowVariant::of(variant)),
            _ => match flat::FlatGrid::of(variant, flat::default_words(out_lens, word)) {
                Some(grid) => Kind::Flat(grid),
                None => Kind::Rows(wide::WideVariant::of(variant)),
            },
        };
        Kernel { kind, read_only_input: variant.read_only_input() }
    }

    /// Whether the shader declares its input read-only.
    pub(super) fn read_only_input(self) -> bool {
        self.read_only_input
    }

    /// What this kernel needs of the output view beyond what every kernel does: the narrow
    /// kernel's one dense run.
    pub(super) fn check_output(self, plan: &PadPlan, out_strides: &[u64], elem: u64) -> Result<()> {
        match self.kind {
            Kind::Narrow(_) => narrow::check_output(plan, out_strides, elem),
            Kind::Rows(_) | Kind::Flat(_) => Ok(()),
        }
    }

    /// Whether a window of `shape` fits this kernel's grid on the device.
    pub(super) fn fits(self, shape: &WindowShape, word: u64) -> bool {
        match self.kind {
            Kind::Rows(v) => wide::fits(shape, v.elems()),
            Kind::Flat(grid) => flat::fits(shape, grid),
            Kind::Narrow(_) => narrow::fits(shape, word),
        }
    }

    /// A window's workgroups, its kernel fields filled in `params`, and whether its narrow
    /// rows end mid-word (`first`: the window's first output word within its binding).
    pub(super) fn grid(self, shape: &WindowShape, params: &mut Params, word: u64, first: u64) -> ([u32; 3], bool) {
        match self.kind {
            Kind::Rows(v) => (wide::grid(shape, params, v.elems()), false),
            Kind::Flat(grid) => (flat::grid(shape, params, grid), false),
            Kind::Narrow(v) => narrow::grid(shape, params, word, first, v),
        }
    }

    /// The pad's shader, once every window has its grid (each window its parameters and
    /// workgroups, and whether its rows end mid-word): the narrow kernel settles the one row
    /// walk its windows share, moving those that disagree to the per-word walk.
    pub(super) fn shader(
        self,
        windows: &mut [(&mut Params, &mut [u32; 3])],
        mid_words: &[bool],
        word: u64,
        max_groups: u64,
    ) -> Shader {
        match self.kind {
            Kind::Rows(v) => Shader::Rows(v),
            Kind::Flat(grid) => Shader::Flat(grid),
            Kind::Narrow(v) => {
                Shader::Narrow(v.shader(narrow::settle_row_walk(windows, mid_words, word, max_groups, v)))
            }
        }
    }
}

/// What a pipeline's kernel code is specialised for, a part of the pipeline key: which
/// kernel, in which shape. Each kernel gives its pipelines' constants and WGSL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Shader {
    /// The wide row grid.
    Rows(wide::WideVariant),
    /// The flat grid.
    Flat(flat::FlatGrid),
    /// The narrow kernel, on its walk.
    Narrow(narrow::NarrowShader),
}

impl Shader {
    /// Every shader a pad moving `word_bytes`-byte words can need under `variant` (what
    /// [`Kernel::choose`] and [`Kernel::shader`] can give).
    pub(crate) fn all(word_bytes: u8, variant: KernelVariant) -> Vec<Shader> {
        if word_bytes < 4 {
            return narrow::NarrowVariant::of(variant).shaders().into_iter().map(Shader::Narrow).collect();
        }
        let mut all = Vec::new();
        for default in [None, Some(8)] {
            let shader = match flat::FlatGrid::of(variant, default) {
                Some(grid) => Shader::Flat(grid),
                None => Shader::Rows(wide::WideVariant::of(variant)),
            };
            if !all.contains(&shader) {
                all.push(shader);
            }
        }
        all
    }

    /// Lanes a workgroup.
    pub(crate) fn workgroup(self) -> u32 {
        match self {
            Shader::Flat(grid) => grid.workgroup,
            Shader::Rows(_) | Shader::Narrow(_) => WORKGROUP,
        }
    }

    /// The kernel's own WGSL constants (`word_bytes`: the moved word's).
    pub(crate) fn constants(self, word_bytes: u8) -> Vec<(&'static str, WgslValue)> {
        match self {
            Shader::Rows(v) => v.constants(),
            Shader::Flat(grid) => grid.constants(),
            Shader::Narrow(n) => n.constants(word_bytes),
        }
    }

    /// The kernel's WGSL: its helpers and its entry point `main`.
    pub(crate) fn wgsl(self) -> String {
        match self {
            Shader::Rows(v) => v.wgsl(),
            Shader::Flat(grid) => grid.wgsl(),
            Shader::Narrow(n) => n.wgsl(),
        }
    }

    /// For a pipeline's label.
    pub(crate) fn label(self) -> String {
        match self {
            Shader::Rows(v) => v.label().to_string(),
            Shader::Flat(grid) => grid.label(),
            Shader::Narrow(n) => n.label(),
        }
    }
}
