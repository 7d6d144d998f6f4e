//! Shader specialisation: a [`PipelineKey`] names one pipeline and turns into its WGSL.
//!
//! A key depends on the mode and the moved word width, plus fixed variants: for the
//! periodic modes, whether pads reach past one period (the modulo variant); and the kernel's
//! shader ([`Shader`]: the row grid or the flat grid for wider words; for 8- and 16-bit
//! words how rows are walked: per word, rows of whole words along one or two axes, or rows
//! that end mid-word), which `Kernel::choose` decided. Never on shape's values, only on which
//! of these few it picks. Variants are pipeline constants rather than runtime branches
//! because llvmpipe executes both sides of a uniform branch. A pad's keys number
//! [`PAD_PIPELINES`], an interior pad's [`INTERIOR_PIPELINES`], a gradient's
//! [`GRADIENT_PIPELINES`] (its own and the forward crop's), [`PIPELINES`] in all (a measured
//! variant adds its own); [`PipelineKey::all_of`] lists a kind's.
//!
//! One way of assembling the WGSL: pieces one after another ([`PipelineKey::wgsl`]), the
//! host's constants declared from tables (this file's shared ones, each kernel's own), no
//! piece's text edited.

use crate::mode::Mode;

use super::kernels::{GradientElement, Shader};
use super::params::{declare, WgslValue, MAGIC_DIVIDE_BY_ONE, MAX_RANK};
use super::variant::KernelVariant;
use crate::dtype::DataType;

/// Shared by every pipeline, the gradient's too: division by a runtime value.
pub(crate) const DIVIDE: &str = include_str!("../../shaders/divide.wgsl");

/// Every pipeline a pad can need: wide widths (3) × (constant and edge, and the three
/// periodic modes in two variants: 2 + 3 × 2) × 2 grids, and narrow widths (2) the same × 4
/// row walks.
pub(crate) const PAD_PIPELINES: usize = 3 * (2 + 3 * 2) * 2 + 2 * (2 + 3 * 2) * 4;

/// An interior pad's: one a width (1, 2, 4, 8, 16 bytes), constant mode only.
pub(crate) const INTERIOR_PIPELINES: usize = 5;

/// A constant pad's (a crop's): wide widths (3) × 2 grids, narrow widths (2) × 4 row walks.
const CROP_PIPELINES: usize = 3 * 2 + 2 * 4;

/// A gradient's: its own for 7 element types (float32, float16, bfloat16, four float8s) ×
/// (constant's one, and 4 modes × split or not × 5 sizes of state), and the forward crop's
/// of its bulk (every constant pad's: interior pads' gradients of wider types crop too).
pub(crate) const GRADIENT_PIPELINES: usize = 7 * (1 + 4 * 2 * 5) + CROP_PIPELINES;

/// Every pipeline any program can need, the kinds' together (the gradient's crops are pads'
/// constant pipelines). The one place these numbers are written.
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
pub const PIPELINES: usize = PAD_PIPELINES + INTERIOR_PIPELINES + GRADIENT_PIPELINES - CROP_PIPELINES;

/// The sizes of a gradient pipeline's per-element state (`Shader::Backward`'s levels).
pub(crate) const GRADIENT_LEVELS: [u8; 5] = [1, 2, 4, 8, 16];

/// Bytes a shader moves per element: the type's width, or wider where an unpadded
/// innermost run splits evenly into 4-, 8- or 16-byte words.
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
pub(crate) const WORD_BYTES: [u8; 5] = [1, 2, 4, 8, 16];

/// The kinds of program, each with pipelines of its own: what an engine names to
/// `PadKernel::precompile` so that it compiles everything its pads, dilations and training
/// steps will run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProgramKind {
    /// A pad ([`Program::new`](super::Program::new) of a plan without interior padding).
    Pad,
    /// An interior pad ([`Program::new`](super::Program::new) of a plan with interior padding: constant mode).
    InteriorPad,
    /// A pad's gradient ([`Program::backward`](super::Program::backward), of a pad or an interior pad): the gradient's
    /// own pipelines and the forward crop it copies its bulk with.
    Gradient,
}

impl ProgramKind {
    /// Every kind.
    pub const ALL: [ProgramKind; 3] = [ProgramKind::Pad, ProgramKind::InteriorPad, ProgramKind::Gradient];

    /// How many pipelines programs of this kind can run, over every mode and type.
    pub const fn pipelines(self) -> usize {
        match self {
            ProgramKind::Pad => PAD_PIPELINES,
            ProgramKind::InteriorPad => INTERIOR_PIPELINES,
            ProgramKind::Gradient => GRADIENT_PIPELINES,
        }
    }
}

/// What one pipeline is specialised for ([`Program::pipeline_key`](super::Program::pipeline_key)):
/// two programs with equal keys run the same WGSL, so a host caches pipelines by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PipelineKey {
    pub(crate) mode: Mode,
    /// 1, 2 (the narrow kernel, per u32 word), 4, 8 or 16 (the wide kernels).
    pub(crate) word_bytes: u8,
    /// Some pad reaches past one period of the mode's extension, so the shader needs the
    /// modulo; false for constant and edge, which have no period.
    pub(crate) multi_period: bool,
    /// The kernel and its shape, as `Kernel::choose` decided.
    pub(crate) shader: Shader,
    /// The input declared read-only (the `read-only-input` variant; measurement only).
    pub(crate) read_only_input: bool,
}

impl PipelineKey {
    /// The key, with `multi_period` dropped for modes without a period.
    pub(crate) fn new(
        mode: Mode,
        word_bytes: u8,
        multi_period: bool,
        shader: Shader,
        read_only_input: bool,
    ) -> PipelineKey {
        PipelineKey { mode, word_bytes, multi_period: multi_period && mode.is_periodic(), shader, read_only_input }
    }

    /// Every key a type of `elem_bytes` bytes can need in `mode` under `variant`.
    #[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
    pub(crate) fn all_for(mode: Mode, elem_bytes: u8, variant: KernelVariant) -> Vec<PipelineKey> {
        let mut keys = Vec::new();
        for &w in WORD_BYTES.iter().filter(|&&w| w >= elem_bytes) {
            for multi in [false, true] {
                for shader in Shader::all(w, variant) {
                    let k = PipelineKey::new(mode, w, multi, shader, variant.read_only_input());
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
            }
        }
        keys
    }

    /// Every key a program of `kind` can need for a `dtype` tensor in `mode` (none for a type
    /// or mode the kind never runs on the GPU); a pad's under `variant`.
    #[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
    pub(crate) fn all_of(kind: ProgramKind, mode: Mode, dtype: DataType, variant: KernelVariant) -> Vec<PipelineKey> {
        let Some(bytes) = dtype.width().bytes().map(|b| b as u8) else { return Vec::new() };
        match kind {
            ProgramKind::Pad => PipelineKey::all_for(mode, bytes, variant),
            // Interior padding is constant mode's alone (`PadPlan` refuses it in the others).
            ProgramKind::InteriorPad if mode == Mode::Constant => {
                vec![PipelineKey::new(mode, bytes, false, Shader::Interior { narrow: bytes < 4 }, false)]
            }
            ProgramKind::InteriorPad => Vec::new(),
            ProgramKind::Gradient => {
                if !crate::cpu::has_gradient(dtype) {
                    return Vec::new();
                }
                // The crop of a gradient's bulk, and an interior pad's gradient (a strided
                // slice): a constant pad's pipelines of the type's width (complex64's parts,
                // two float32s a row, are cropped in words of 8 bytes or more).
                let mut keys = PipelineKey::all_for(Mode::Constant, bytes, KernelVariant::Default);
                // complex64's parts are summed as float32's.
                let parts = if dtype == DataType::Complex64 { DataType::Float32 } else { dtype };
                let Some(element) = GradientElement::of(parts) else { return keys };
                let elem = element.bytes() as u8;
                // A constant pad's pads read nothing, so an index's images are its kept
                // position alone: one level, no long sums. Every other mode's pads read kept
                // indices.
                let shapes: Vec<(bool, u8)> = match mode == Mode::Constant {
                    true => vec![(false, 1)],
                    false => [false, true].into_iter().flat_map(|s| GRADIENT_LEVELS.map(|l| (s, l))).collect(),
                };
                for (split, levels) in shapes {
                    keys.push(PipelineKey::new(
                        mode,
                        elem,
                        false,
                        Shader::Backward { split, element, levels, words: false },
                        false,
                    ));
                }
                let mut unique = Vec::new();
                for k in keys {
                    if !unique.contains(&k) {
                        unique.push(k);
                    }
                }
                unique
            }
        }
    }

    /// The pipeline's WGSL, its pieces in order, every kind's alike: the uniform's structs,
    /// the host's constants (shared, then the kernel's), the word's definitions, the bindings,
    /// the kind's prelude (a pad's walk, the gradient's element), the division, the mode's
    /// index rule and the kernel's code.
    pub(crate) fn wgsl(&self) -> String {
        let shader = self.shader;
        // The input is bound read_write, though never written, so that input and output may
        // sit in one pooled buffer: wgpu refuses read-only and writable storage of one buffer
        // in one dispatch (the read-only variant declares it read-only).
        let src_access = if self.read_only_input { "read" } else { "read_write" };
        format!(
            "{}{}{}{}\n{}\n{DIVIDE}\n{}\n{}",
            shader.structs(),
            declare(&self.constants()),
            shader.word_defs(self.word_bytes),
            shader.bindings(src_access),
            shader.prelude(),
            shader.mode_wgsl(self.mode),
            shader.wgsl()
        )
    }

    /// Every WGSL constant the host gives this pipeline, in one table (the shaders use them
    /// and never define them; their own local constants, such as `NONE`, they define where
    /// used): the shared sizes (params.rs) and the key's choice, then the kernel's own
    /// ([`Shader::constants`]).
    pub(crate) fn constants(&self) -> Vec<(&'static str, WgslValue)> {
        use WgslValue::{Bool, U32};
        let mut c = vec![
            ("MAX_RANK", U32(MAX_RANK as u32)),
            ("WORKGROUP", U32(self.shader.workgroup())),
            ("MAGIC_DIVIDE_BY_ONE", U32(MAGIC_DIVIDE_BY_ONE)),
            ("MULTI_PERIOD", Bool(self.multi_period)),
        ];
        c.extend(self.shader.constants(self.mode, self.word_bytes));
        c
    }

    /// The flat grid, if this pipeline runs on it.
    #[cfg(test)]
    pub(crate) fn flat_grid(&self) -> Option<super::kernels::flat::FlatGrid> {
        match self.shader {
            Shader::Flat(grid) => Some(grid),
            _ => None,
        }
    }

    /// The narrow kernel's walk ([`RowWalk::PerWord`](super::kernels::narrow::RowWalk) for wide words).
    #[cfg(test)]
    pub(crate) fn row_walk(&self) -> super::kernels::narrow::RowWalk {
        match self.shader {
            Shader::Narrow(n) => n.walk,
            _ => super::kernels::narrow::RowWalk::PerWord,
        }
    }

    /// A label for wgpu's debug output.
    pub(crate) fn label(&self) -> String {
        format!(
            "wgpu-pad {} {}-byte{}{}{}",
            self.mode,
            self.word_bytes,
            if self.multi_period { " multi-period" } else { "" },
            self.shader.label(),
            if self.read_only_input { " read-only input" } else { "" },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pipeline a program of random plans runs (pads, interior pads and their
    /// gradients, dense and through views that send narrow gradients down their other paths,
    /// on bindings small enough for windows and parts) is among its kind's keys for the
    /// plan's mode and type: what `PadKernel::precompile` compiles is enough.
    #[test]
    fn programs_run_only_their_kinds_keys() {
        use crate::gpu::program::{BufferView, DeviceLimits, Program};
        use crate::plan::{PadPlan, PadRequest};
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let small = DeviceLimits { max_binding: 256, storage_alignment: 4, ..DeviceLimits::WEBGPU_DEFAULT };
        let mut seen = std::collections::HashSet::new();
        let types: Vec<DataType> = DataType::ALL.iter().copied().filter(|t| t.width().bytes().is_some()).collect();
        for round in 0..3000 {
            let dtype = types[next(types.len() as u64) as usize];
            let mode = Mode::ALL[next(5) as usize];
            let rank = 1 + next(3) as usize;
            let shape: Vec<usize> = (0..rank).map(|_| 1 + next(6) as usize).collect();
            let pads: Vec<i64> = (0..2 * rank).map(|_| next(8) as i64 - 2).collect();
            let mut request = PadRequest::new(pads).mode(mode);
            if mode == Mode::Constant && round % 3 == 0 {
                request = request.interior((0..rank).map(|_| next(3) as i64).collect());
            }
            let Ok(plan) = PadPlan::new(dtype, &shape, &request) else { continue };
            let Some((i, o)) = plan.byte_sizes() else { continue };
            // Dense, and the input's side every other element (a narrow type's elements apart).
            let apart: Vec<u64> = plan
                .in_shape()
                .iter()
                .rev()
                .scan(2u64, |s, &n| {
                    let stride = *s;
                    *s *= n.max(1) as u64;
                    Some(stride)
                })
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let dense = |n: u64| BufferView::dense(0, n.next_multiple_of(4).max(4));
            let spread = BufferView {
                offset: 0,
                strides: Some(&apart),
                end: 2 * i + 8,
                buffer_size: (2 * i + 8).next_multiple_of(4),
            };
            let limits = if round % 4 == 1 { small } else { DeviceLimits::WEBGPU_DEFAULT };
            let kind = if plan.has_interior() { ProgramKind::InteriorPad } else { ProgramKind::Pad };
            let mut programs = vec![(kind, Program::new(&plan, &dense(i), &dense(o), &limits))];
            if crate::cpu::has_gradient(dtype) {
                for grad_in in [dense(i), spread] {
                    programs.push((ProgramKind::Gradient, Program::backward(&plan, &dense(o), &grad_in, &limits)));
                }
            }
            for (kind, program) in programs {
                let Ok(program) = program else { continue };
                let keys = PipelineKey::all_of(kind, mode, dtype, KernelVariant::Default);
                for p in 0..program.pipeline_count() {
                    let key = program.pipeline_key(p);
                    assert!(keys.contains(&key), "{kind:?} {plan:?}: {key:?} is not among its kind's keys");
                    seen.insert((kind, key));
                }
            }
        }
        let count = |kind| seen.iter().filter(|(k, _)| *k == kind).count();
        let counts = ProgramKind::ALL.map(count);
        assert!(counts[0] > 40 && counts[1] == 5 && counts[2] > 60, "keys seen a kind: {counts:?}");
    }

    /// Under every variant, each key a pad's layout picks is among the keys `all_for` gives
    /// that variant (what `precompile` compiles and the harness counts): `Shader::all` puts
    /// every answer to `Kernel::choose`'s questions, rows16's included.
    #[test]
    fn every_variants_picks_are_among_its_keys() {
        use crate::gpu::program::{BufferView, DeviceLimits};
        use crate::{PadPlan, PadRequest};
        let cases: [(&[usize], &[i64]); 4] = [
            (&[64, 256], &[0, 2, 0, 2]),             // rows of several words: rows16 where it runs
            (&[16000], &[512, 512]),                 // one row: the flat grid by default
            (&[1, 1100, 1000], &[0, 1, 1, 0, 1, 1]), // a million words: flat too
            (&[3, 5, 7], &[1, 0, 2, 2, 1, 0]),       // small rows
        ];
        let dense = |n: u64| BufferView::dense(0, n.next_multiple_of(16).max(16));
        let mut shaders = std::collections::HashSet::new();
        for variant in KernelVariant::ALL {
            for dtype in
                [DataType::Uint8, DataType::Float16, DataType::Float32, DataType::Float64, DataType::Complex128]
            {
                for mode in Mode::ALL {
                    for (shape, pads) in cases {
                        let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
                        let (i, o) = plan.byte_sizes().unwrap();
                        let limits = DeviceLimits::WEBGPU_DEFAULT;
                        let program =
                            crate::gpu::layout::program(&plan, &dense(i), &dense(o), &limits, variant).unwrap();
                        let keys = PipelineKey::all_for(mode, dtype.width().bytes().unwrap() as u8, variant);
                        for p in 0..program.pipeline_count() {
                            let key = program.pipeline_key(p);
                            assert!(keys.contains(&key), "{variant:?} {plan:?}: {key:?} is not among its keys");
                            shaders.insert(key.shader);
                        }
                    }
                }
            }
        }
        assert!(shaders.contains(&Shader::Rows16), "rows16 picked somewhere: {shaders:?}");
        // And no key that can never be picked: rows16 moves words under its own 16 bytes.
        assert!(!Shader::all(16, KernelVariant::Rows16).contains(&Shader::Rows16));
    }

    #[test]
    fn the_key_space_is_bounded() {
        let all: std::collections::HashSet<PipelineKey> =
            Mode::ALL.iter().flat_map(|&m| PipelineKey::all_for(m, 1, KernelVariant::Default)).collect();
        assert_eq!(all.len(), PAD_PIPELINES);
        assert_eq!(PAD_PIPELINES, 112, "a change to the key space is a decision: say it in the docs");
        // Each kind's keys over every mode and type, and all kinds' together.
        let of = |kind| -> std::collections::HashSet<PipelineKey> {
            let pairs = Mode::ALL.iter().flat_map(|&m| DataType::ALL.iter().map(move |&t| (m, t)));
            pairs.flat_map(|(m, t)| PipelineKey::all_of(kind, m, t, KernelVariant::Default)).collect()
        };
        let mut every = std::collections::HashSet::new();
        for kind in ProgramKind::ALL {
            let keys = of(kind);
            assert_eq!(keys.len(), kind.pipelines(), "{kind:?}");
            every.extend(keys);
        }
        assert_eq!(of(ProgramKind::Pad), all);
        assert_eq!((every.len(), PIPELINES), (PIPELINES, 112 + 5 + 287));
        // Constant and edge never take the modulo variant.
        let rows = Shader::Rows(super::super::kernels::wide::WideVariant::Default);
        assert_eq!(
            PipelineKey::new(Mode::Edge, 4, true, rows, false),
            PipelineKey::new(Mode::Edge, 4, false, rows, false)
        );
        assert_ne!(
            PipelineKey::new(Mode::Wrap, 4, true, rows, false),
            PipelineKey::new(Mode::Wrap, 4, false, rows, false)
        );
    }

    /// A pipeline's WGSL holds its own kernel's code and constants and no other's: no
    /// variant's code in the default's pipelines, no per-word walk in a row walk's and no row
    /// walk in a per-word one, no narrow kernel in a wide one's.
    #[test]
    fn a_pipeline_holds_only_its_own_kernels_code() {
        let has = |key: &PipelineKey, what: &str| key.wgsl().contains(what);
        let mut seen = [0; 4];
        for mode in Mode::ALL {
            for key in PipelineKey::all_for(mode, 1, KernelVariant::Default) {
                // The variants' code: loads-first pairs, spread rows, the device grid, a
                // read-only input.
                for variant_code in ["fn pair_words(", "let v = w + step;", "nwg.x * nwg.y * WORKGROUP", "read> src"] {
                    assert!(!has(&key, variant_code), "{key:?} holds {variant_code}");
                }
                let (flat, rows) = (has(&key, "fn flat_next("), has(&key, "fn wide_element("));
                let (per_word, row_walk) = (has(&key, "const NARROW_WORD_RUN:"), has(&key, "fn narrow_rows("));
                let narrow = has(&key, "const EPW:");
                assert_eq!(
                    [flat, rows, per_word, row_walk].iter().filter(|&&k| k).count(),
                    1,
                    "{key:?}: one kernel's entry point"
                );
                assert_eq!(narrow, per_word || row_walk, "{key:?}");
                assert_eq!(has(&key, "const FLAT_WORDS:"), flat, "{key:?}");
                assert_eq!(has(&key, "const WIDE_ELEMS:"), rows, "{key:?}");
                assert_eq!(has(&key, "const NARROW_ROW_WORDS:"), row_walk, "{key:?}");
                for (n, k) in [flat, rows, per_word, row_walk].into_iter().enumerate() {
                    seen[n] += usize::from(k);
                }
            }
        }
        assert!(seen.iter().all(|&n| n > 0), "every kernel checked: {seen:?}");
    }

    /// Pipelines whose whole WGSL is committed in shaders/expanded/, so that a newcomer reads
    /// a pipeline as the driver gets it and a review sees what a change does to the defaults'.
    #[cfg(not(miri))]
    fn snapshots() -> [(&'static str, PipelineKey); 4] {
        use super::super::kernels::flat::FlatGrid;
        use super::super::kernels::narrow::{NarrowVariant, RowWalk};
        use super::super::kernels::wide::WideVariant;
        let narrow = |walk| Shader::Narrow(NarrowVariant::Pairs.shader(walk));
        let flat8 = Shader::Flat(FlatGrid::of(KernelVariant::Default, Some(8)).unwrap());
        [
            ("f32-reflect-rows", PipelineKey::new(Mode::Reflect, 4, false, Shader::Rows(WideVariant::Default), false)),
            ("f32-reflect-flat8", PipelineKey::new(Mode::Reflect, 4, false, flat8, false)),
            ("u8-wrap-mid-word", PipelineKey::new(Mode::Wrap, 1, false, narrow(RowWalk::MidWord), false)),
            ("f16-edge-axis0", PipelineKey::new(Mode::Edge, 2, false, narrow(RowWalk::Axis0), false)),
        ]
    }

    /// The expanded WGSL of a few default pipelines is the committed one. Where a change is
    /// meant, `WGPU_PAD_BLESS=1 cargo test --lib expanded` rewrites shaders/expanded/ (a test
    /// build's hook, not the library's): commit the diff with the change. Skipped where the
    /// files are not there (the packaged crate).
    #[cfg(not(miri))] // reads files: Miri's isolation refuses them
    #[test]
    fn the_expanded_pipelines_are_the_committed_ones() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/expanded");
        let bless = std::env::var("WGPU_PAD_BLESS").is_ok_and(|v| v == "1");
        if !dir.is_dir() && !bless {
            eprintln!("skipped: no {}", dir.display());
            return;
        }
        for (name, key) in snapshots() {
            let path = dir.join(format!("{name}.wgsl"));
            let wgsl = key.wgsl();
            if bless {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &wgsl).unwrap();
                continue;
            }
            let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let first = committed.lines().zip(wgsl.lines()).position(|(a, b)| a != b);
            assert!(
                committed == wgsl,
                "{name}: the pipeline's WGSL differs from {} (first at line {:?}); if meant, WGPU_PAD_BLESS=1 cargo test --lib expanded and commit the diff",
                path.display(),
                first.map(|l| l + 1)
            );
        }
    }

    // naga is not a dev-dependency under Miri (Cargo.toml), which has no use for this test.
    #[cfg(not(miri))]
    #[test]
    fn every_shader_is_valid_wgsl() {
        for mode in Mode::ALL {
            // Every variant's pads, and the interior pad's pipelines (one a width).
            let interior = DataType::ALL
                .into_iter()
                .flat_map(|t| PipelineKey::all_of(ProgramKind::InteriorPad, mode, t, KernelVariant::Default));
            let keys = KernelVariant::ALL
                .into_iter()
                .flat_map(|v| PipelineKey::all_for(mode, 1, v))
                .chain(interior)
                .collect::<std::collections::HashSet<_>>();
            for (key, src) in keys.into_iter().map(|k| (k, k.wgsl())) {
                let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{key:?}: {e}"));
                naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
                    .validate(&module)
                    .unwrap_or_else(|e| panic!("{key:?}: {e:?}"));
            }
        }
    }
}
