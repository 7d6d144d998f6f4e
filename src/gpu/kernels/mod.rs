//! The pad kernels' host halves, one module each beside its shader, and the one place a pad's
//! kernel is chosen ([`Kernel::choose`]):
//!
//! - `wide`: 32-, 64- and 128-bit words on the row grid (`shaders/wide.wgsl`);
//! - `flat`: wide words on the flat grid, the roofline copy's shape (`shaders/flat.wgsl`);
//! - `narrow`: 8- and 16-bit elements in u32 words, by rows (`shaders/narrow_rows.wgsl`) or
//!   per word (`shaders/narrow_words.wgsl`);
//! - `rows16` (a variant): dense rows of elements under 16 bytes in 16-byte words
//!   (`shaders/rows16.wgsl`).
//!
//! Each has its `fits` (whether a window's grid fits the device), its `grid` (the workgroups
//! and the uniform's kernel fields), the shape each kernel variant asks of it (its own enum's
//! `of`), its pipelines' constants and code, and its tests. The layout (`layout.rs`) calls
//! them only through [`Kernel`], shader.rs only through [`Shader`].

pub(super) mod flat;
pub(super) mod gradient;
pub(super) mod interior;
pub(super) mod narrow;
pub(super) mod rows16;
pub(super) mod wide;

pub(crate) use gradient::GradientElement;

use super::params::{AxisParams, InteriorAxis, InteriorParams, Params, WgslValue, WORKGROUP};
use super::variant::KernelVariant;
use super::window::{Axis, WindowShape};
use crate::error::Result;

/// The grid's x and y for `groups` workgroups: x first, y when x is full (y may then pass the
/// device's limit: the caller checks).
pub(in crate::gpu) fn split_grid(groups: u64, max_groups: u64) -> [u32; 3] {
    let x = groups.min(max_groups).max(1);
    [x as u32, groups.div_ceil(x) as u32, 1]
}
use crate::mode::Mode;
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
    /// Dense rows in 16-byte words (`rows16`).
    Rows16,
}

impl Kernel {
    /// The kernel for a pad moving `word`-byte words into `axes` (merged, innermost last), on
    /// a dense output or not, its views' buffers holding them rounded to whole 16-byte words
    /// or not (`whole_16`), under `variant`: where the `rows16` variant takes it, that (its
    /// bindings are such words); else narrow below 4 bytes; else the flat grid where
    /// `flat::default_words` takes it (or the variant forces it), the row grid otherwise.
    pub(super) fn choose(
        word: u64,
        axes: &[Axis],
        dense_output: bool,
        whole_16: bool,
        variant: KernelVariant,
    ) -> Kernel {
        let out_lens: Vec<usize> = axes.iter().map(|a| a.map.out_len).collect();
        let rows16 = whole_16 && rows16::applies(word, axes, dense_output);
        Kernel::of(word, rows16, flat::default_words(&out_lens, word), variant)
    }

    /// The choice itself, from the two things [`Kernel::choose`] asks of a pad: whether rows16
    /// could take it, and the flat grid's words a lane by default (`flat::default_words`).
    /// [`Shader::all`] puts every answer to it.
    fn of(word: u64, rows16: bool, flat_words: Option<u32>, variant: KernelVariant) -> Kernel {
        let kind = match word {
            _ if rows16 && variant == KernelVariant::Rows16 => Kind::Rows16,
            ..4 => Kind::Narrow(narrow::NarrowVariant::of(variant)),
            _ => match flat::FlatGrid::of(variant, flat_words) {
                Some(grid) => Kind::Flat(grid),
                None => Kind::Rows(wide::WideVariant::of(variant)),
            },
        };
        Kernel { kind, read_only_input: variant.read_only_input() }
    }

    /// Every shader this kernel can end with ([`Kernel::shader`]: the narrow kernel's, a walk
    /// each).
    fn shaders(self) -> Vec<Shader> {
        match self.kind {
            Kind::Rows(v) => vec![Shader::Rows(v)],
            Kind::Flat(grid) => vec![Shader::Flat(grid)],
            Kind::Narrow(v) => v.shaders().into_iter().map(Shader::Narrow).collect(),
            Kind::Rows16 => vec![Shader::Rows16],
        }
    }

    /// Whether the shader declares its input read-only.
    pub(super) fn read_only_input(self) -> bool {
        self.read_only_input
    }

    /// Bytes a binding's start and end are multiples of (its start also of the device's
    /// storage alignment): the bound word's.
    pub(super) fn binding_granule(self) -> u64 {
        match self.kind {
            Kind::Rows16 => rows16::WORD,
            _ => 4,
        }
    }

    /// Bytes the uniform's constant repeats the element over (a moved word's; 16 for rows16).
    pub(super) fn constant_bytes(self, word: u64) -> u64 {
        match self.kind {
            Kind::Rows16 => rows16::WORD,
            _ => word,
        }
    }

    /// The largest binding the shader indexes, in bytes: u32 indices of its bound words (and
    /// rows16's byte offsets, u32 too).
    pub(super) fn max_binding(self, word: u64) -> u64 {
        match self.kind {
            Kind::Rows16 => u32::MAX as u64 / rows16::WORD * rows16::WORD,
            _ => u32::MAX as u64 * word.max(4),
        }
    }

    /// What this kernel needs of the output view beyond what every kernel does: the narrow
    /// kernel's one dense run.
    pub(super) fn check_output(self, plan: &PadPlan, out_strides: &[u64], elem: u64) -> Result<()> {
        match self.kind {
            Kind::Narrow(_) => narrow::check_output(plan, out_strides, elem),
            Kind::Rows(_) | Kind::Flat(_) | Kind::Rows16 => Ok(()),
        }
    }

    /// Whether a window of `shape` fits this kernel's grid on the device.
    pub(super) fn fits(self, shape: &WindowShape, word: u64) -> bool {
        match self.kind {
            Kind::Rows(v) => wide::fits(shape, v.elems()),
            Kind::Flat(grid) => flat::fits(shape, grid),
            Kind::Narrow(_) => narrow::fits(shape, word),
            Kind::Rows16 => rows16::fits(shape, word),
        }
    }

    /// A window's workgroups, its kernel fields filled in `params`, and whether its narrow
    /// rows end mid-word (`first`: the window's first output word within its binding).
    pub(super) fn grid(self, shape: &WindowShape, params: &mut Params, word: u64, first: u64) -> ([u32; 3], bool) {
        match self.kind {
            Kind::Rows(v) => (wide::grid(shape, params, v.elems()), false),
            Kind::Flat(grid) => (flat::grid(shape, params, grid), false),
            Kind::Narrow(v) => narrow::grid(shape, params, word, first, v),
            Kind::Rows16 => (rows16::grid(shape, params, word, first), false),
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
            Kind::Rows16 => Shader::Rows16,
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
    /// Dense rows in 16-byte words.
    Rows16,
    /// The pad's gradient (`gpu/backward/`; its WGSL assembled there, by mode): a lane an
    /// element, or (`split`) 64 elements a workgroup, the long sums of one axis over its lanes;
    /// its state sized for `levels` axes of several images (a power of two, at least 1);
    /// `words` (the `gradient-words` variant, 8- and 16-bit elements): a lane a u32 word.
    Backward { split: bool, element: GradientElement, levels: u8, words: bool },
    /// Interior padding (`gpu/interior.rs`): an invocation a u32 word, `narrow` for 8- and
    /// 16-bit elements.
    Interior { narrow: bool },
}

impl Shader {
    /// Every shader a pad moving `word_bytes`-byte words can need under `variant`: every
    /// answer to what [`Kernel::choose`] asks of a pad (rows16 only below its own word's
    /// bytes, as `rows16::applies` says), each kernel's shaders.
    pub(crate) fn all(word_bytes: u8, variant: KernelVariant) -> Vec<Shader> {
        let word = word_bytes as u64;
        let mut all = Vec::new();
        for rows16 in [false, word < rows16::WORD] {
            for flat_words in [None, Some(flat::DEFAULT_WORDS)] {
                for shader in Kernel::of(word, rows16, flat_words, variant).shaders() {
                    if !all.contains(&shader) {
                        all.push(shader);
                    }
                }
            }
        }
        all
    }

    /// The WGSL type of a bound word, and the constant as one (`constant_word`) where the
    /// kernel reads it so: `word_bytes`' own, but 16 bytes for rows16 and u32 for the narrow
    /// kernel (which defines `constant_word` itself).
    pub(crate) fn word_defs(self, word_bytes: u8) -> &'static str {
        match (self, word_bytes) {
            (Shader::Rows16, _) => "alias WORD = vec4<u32>;\n",
            (Shader::Backward { .. }, _) => "",
            (Shader::Interior { .. }, _) => "alias WORD = u32;\n",
            (_, 1 | 2) => "alias WORD = u32;\n",
            (_, 4) => "alias WORD = u32;\nfn constant_word() -> WORD { return P.constant.x; }\n",
            (_, 8) => "alias WORD = vec2<u32>;\nfn constant_word() -> WORD { return P.constant.xy; }\n",
            _ => "alias WORD = vec4<u32>;\nfn constant_word() -> WORD { return P.constant; }\n",
        }
    }

    /// Lanes a workgroup.
    pub(crate) fn workgroup(self) -> u32 {
        match self {
            Shader::Flat(grid) => grid.workgroup,
            Shader::Rows(_)
            | Shader::Narrow(_)
            | Shader::Rows16
            | Shader::Backward { .. }
            | Shader::Interior { .. } => WORKGROUP,
        }
    }

    /// The kernel's own WGSL constants (`word_bytes`: the moved word's).
    pub(crate) fn constants(self, mode: Mode, word_bytes: u8) -> Vec<(&'static str, WgslValue)> {
        match self {
            Shader::Rows(v) => v.constants(),
            Shader::Flat(grid) => grid.constants(),
            Shader::Narrow(n) => n.constants(word_bytes),
            Shader::Rows16 => rows16::constants(word_bytes),
            Shader::Backward { split, element, levels, words } => {
                gradient::constants(mode, split, element, levels, words)
            }
            Shader::Interior { .. } => interior::constants(word_bytes),
        }
    }

    /// The uniform's WGSL structs: a pad's `Params`, the gradient's `BackParams`, the
    /// interior pad's `InteriorParams`.
    pub(crate) fn structs(self) -> String {
        match self {
            Shader::Backward { .. } => gradient::structs(),
            Shader::Interior { .. } => format!("{}{}", InteriorAxis::WGSL, InteriorParams::WGSL),
            Shader::Rows(_) | Shader::Flat(_) | Shader::Narrow(_) | Shader::Rows16 => {
                format!("{}{}", AxisParams::WGSL, Params::WGSL)
            }
        }
    }

    /// The bindings: the uniform `P`, `src` and `dst` (a pad's of `WORD`s, the input's with
    /// `src_access`; the gradient's of its element's words).
    pub(crate) fn bindings(self, src_access: &str) -> String {
        match self {
            Shader::Backward { element, .. } => gradient::bindings(element),
            Shader::Rows(_) | Shader::Flat(_) | Shader::Narrow(_) | Shader::Rows16 | Shader::Interior { .. } => {
                let uniform = if let Shader::Interior { .. } = self { "InteriorParams" } else { "Params" };
                format!(
                    "@group(0) @binding(0) var<uniform> P: {uniform};\n\
                 @group(0) @binding(1) var<storage, {src_access}> src: array<WORD>;\n\
                 @group(0) @binding(2) var<storage, read_write> dst: array<WORD>;\n"
                )
            }
        }
    }

    /// What every kernel of its kind shares: a pad's accesses (`access.wgsl`) and walk from
    /// output coordinates to input offsets (`common.wgsl`), an interior pad's accesses, the
    /// gradient's element loads, stores and addition.
    pub(crate) fn prelude(self) -> String {
        const ACCESS: &str = include_str!("../../../shaders/access.wgsl");
        match self {
            Shader::Backward { element, .. } => gradient::element_code(element),
            Shader::Interior { .. } => ACCESS.to_string(),
            Shader::Rows(_) | Shader::Flat(_) | Shader::Narrow(_) | Shader::Rows16 => {
                format!("{ACCESS}\n{}", include_str!("../../../shaders/common.wgsl"))
            }
        }
    }

    /// The mode's index rule: a pad's `source_coord`, the gradient's `list` of images; none
    /// for the interior pad (constant only: its element's source is its kernel's).
    pub(crate) fn mode_wgsl(self, mode: Mode) -> &'static str {
        match self {
            Shader::Backward { .. } => mode.wgsl().gradient_list,
            Shader::Interior { .. } => "",
            Shader::Rows(_) | Shader::Flat(_) | Shader::Narrow(_) | Shader::Rows16 => mode.wgsl().source_coord,
        }
    }

    /// The kernel's WGSL: its helpers and its entry point `main`.
    pub(crate) fn wgsl(self) -> String {
        match self {
            Shader::Rows(v) => v.wgsl(),
            Shader::Flat(grid) => grid.wgsl(),
            Shader::Narrow(n) => n.wgsl(),
            Shader::Rows16 => rows16::wgsl(),
            Shader::Backward { .. } => gradient::KERNEL.to_string(),
            Shader::Interior { narrow } => interior::wgsl(narrow),
        }
    }

    /// For a pipeline's label.
    pub(crate) fn label(self) -> String {
        match self {
            Shader::Rows(v) => v.label().to_string(),
            Shader::Flat(grid) => grid.label(),
            Shader::Narrow(n) => n.label(),
            Shader::Rows16 => " rows16".to_string(),
            Shader::Backward { split, element, levels, words } => {
                let (split, words) = (if split { " split" } else { "" }, if words { " words" } else { "" });
                format!(" gradient {}{split}{words} levels {levels}", element.name())
            }
            Shader::Interior { .. } => " interior".to_string(),
        }
    }
}
