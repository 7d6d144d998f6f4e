//! Shader specialisation: a [`PipelineKey`] names one pipeline and turns into its WGSL.
//!
//! A key depends on the mode and the moved word width, plus fixed variants: for the
//! periodic modes, whether pads reach past one period (the modulo variant); for 8- and
//! 16-bit words, how rows are walked (per word, rows of whole words along one or two axes, or
//! rows that end mid-word); for wider words, the grid (rows, or the flat grid at 8 elements a
//! lane; a measured variant may take 4). Never on shape's values, only on which of these few it picks. Variants
//! are pipeline constants rather than runtime branches because llvmpipe executes both sides
//! of a uniform branch. At most 3 × (2 + 3 × 2) × 2 + 2 × (2 + 3 × 2) × 4 = [`PIPELINES`]
//! pipelines exist (a measured variant adds its own).

use crate::mode::Mode;

use super::kernels::flat::FlatGrid;
use super::params::{AxisParams, Params, MAGIC_DIVIDE_BY_ONE, MAX_RANK, NARROW_ROW_WORDS, ROW_WORDS_NONE, WORKGROUP};
use super::variant::KernelVariant;

/// Every pipeline the kernels can need: wide widths (3) × (constant and edge, and the three
/// periodic modes in two variants: 2 + 3 × 2) × 2 grids, and narrow widths (2) the same × 4
/// row walks. The one place this number is written.
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
pub const PIPELINES: usize = 3 * (2 + 3 * 2) * 2 + 2 * (2 + 3 * 2) * 4;

/// Bytes a shader moves per element: the type's width, or wider where an unpadded
/// innermost run splits evenly into 4-, 8- or 16-byte words.
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
pub(crate) const WORD_BYTES: [u8; 5] = [1, 2, 4, 8, 16];

/// What one pipeline is specialised for ([`Program::pipeline_key`](super::Program::pipeline_key)):
/// two programs with equal keys run the same WGSL, so a host caches pipelines by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PipelineKey {
    pub(crate) mode: Mode,
    /// 1, 2 (the narrow kernel, per u32 word), 4, 8 or 16 (the wide kernel).
    pub(crate) word_bytes: u8,
    /// Some pad reaches past one period of the mode's extension, so the shader needs the
    /// modulo; false for constant and edge, which have no period.
    pub(crate) multi_period: bool,
    /// Narrow kernel: how it walks the output; [`RowWalk::PerWord`] for wide words.
    pub(crate) row_walk: RowWalk,
    /// Wide kernel: elements a lane on the flat grid (flat.rs), 0 on the row grid (wide.rs).
    pub(crate) flat_words: u8,
    /// The kernel variant (variant.rs): [`KernelVariant::Default`] outside measurement.
    pub(crate) variant: KernelVariant,
}

impl PipelineKey {
    /// The key, with `multi_period` dropped for modes without a period.
    pub(crate) fn new(mode: Mode, word_bytes: u8, multi_period: bool, row_walk: RowWalk) -> PipelineKey {
        let periodic = mode.is_periodic();
        let row_walk = if word_bytes < 4 { row_walk } else { RowWalk::PerWord };
        PipelineKey {
            mode,
            word_bytes,
            multi_period: multi_period && periodic,
            row_walk,
            flat_words: 0,
            variant: KernelVariant::Default,
        }
    }

    /// The same key on the flat grid at `words` elements a lane (wide words; `None`: rows).
    pub(crate) fn with_flat(self, words: Option<u32>) -> PipelineKey {
        let flat_words = if self.word_bytes >= 4 { words.unwrap_or(0) as u8 } else { 0 };
        PipelineKey { flat_words, ..self }
    }

    /// The same key for `variant`, or for the default where the variant changes nothing here.
    pub(crate) fn with_variant(self, variant: KernelVariant) -> PipelineKey {
        PipelineKey { variant: variant.for_key(self.word_bytes, self.row_walk != RowWalk::PerWord), ..self }
    }

    /// Every key a type of `elem_bytes` bytes can need in `mode`.
    #[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
    pub(crate) fn all_for(mode: Mode, elem_bytes: u8) -> Vec<PipelineKey> {
        let mut keys = Vec::new();
        for &w in WORD_BYTES.iter().filter(|&&w| w >= elem_bytes) {
            for multi in [false, true] {
                for rows in RowWalk::ALL {
                    for flat in [None, Some(8)] {
                        let k = PipelineKey::new(mode, w, multi, rows).with_flat(flat);
                        if !keys.contains(&k) {
                            keys.push(k);
                        }
                    }
                }
            }
        }
        keys
    }

    /// The pipeline's WGSL: the shared constants, this key's constants, the width's
    /// definitions, the shared prelude, the mode's index function and the width's main.
    pub(crate) fn wgsl(&self) -> String {
        let mode_src = match self.mode {
            Mode::Constant => include_str!("../../shaders/constant.wgsl"),
            Mode::Reflect => include_str!("../../shaders/reflect.wgsl"),
            Mode::Edge => include_str!("../../shaders/edge.wgsl"),
            Mode::Wrap => include_str!("../../shaders/wrap.wgsl"),
            Mode::Symmetric => include_str!("../../shaders/symmetric.wgsl"),
        };
        let (defs, main) = match self.word_bytes {
            1 | 2 => ("alias WORD = u32;\n", NARROW),
            4 => ("alias WORD = u32;\nfn constant_word() -> WORD { return P.constant.x; }\n", WIDE),
            8 => ("alias WORD = vec2<u32>;\nfn constant_word() -> WORD { return P.constant.xy; }\n", WIDE),
            _ => ("alias WORD = vec4<u32>;\nfn constant_word() -> WORD { return P.constant; }\n", WIDE),
        };
        // The flat grid (wide words).
        let main = match self.flat_grid() {
            Some(grid) => {
                std::borrow::Cow::Owned(FLAT.replace("//FLAT_BODY\n", &super::kernels::flat::wgsl_body(grid)))
            }
            None => std::borrow::Cow::Borrowed(main),
        };
        let mut common = std::borrow::Cow::Borrowed(include_str!("../../shaders/common.wgsl"));
        if self.variant.read_only_input() {
            common = common.replace(SRC_BINDING, "var<storage, read> src").into();
        }
        let constants = declare(&self.constants());
        format!("{}{}{constants}{defs}\n{common}\n{mode_src}\n{main}", AxisParams::WGSL, Params::WGSL)
    }

    /// The flat grid, if this pipeline runs on it (wide words; its variant's shape).
    pub(crate) fn flat_grid(&self) -> Option<FlatGrid> {
        Some(self.flat_words as u32).filter(|&w| w > 0).and_then(|w| self.variant.wide_flat_grid(Some(w)))
    }

    /// Every WGSL constant the host gives a pipeline, in one table (the shaders use them and
    /// never define them; their own local constants, such as `NONE`, they define where used):
    /// the shared sizes (params.rs), the row walks' names (narrow.rs), the key's choices, the
    /// variant's knobs (variant.rs) and the word's geometry.
    pub(crate) fn constants(&self) -> Vec<(String, WgslValue)> {
        use WgslValue::{Bool, U32};
        let mut c: Vec<(String, WgslValue)> = vec![
            ("MAX_RANK".into(), U32(MAX_RANK as u32)),
            ("WORKGROUP".into(), U32(self.flat_grid().map_or(WORKGROUP, |g| g.workgroup))),
            ("NARROW_ROW_WORDS".into(), U32(NARROW_ROW_WORDS)),
            ("MAGIC_DIVIDE_BY_ONE".into(), U32(MAGIC_DIVIDE_BY_ONE)),
            ("ROW_WORDS_NONE".into(), U32(ROW_WORDS_NONE)),
            ("WIDE_ELEMS".into(), U32(self.variant.wide().elems())),
        ];
        c.extend(self.variant.narrow().constants().map(|(name, value)| (name.to_string(), value)));
        c.extend(RowWalk::ALL.iter().map(|w| (format!("ROWS_{}", w.wgsl_name()), U32(*w as u32))));
        c.extend([
            ("MULTI_PERIOD".into(), Bool(self.multi_period)),
            ("ROW_WALK".into(), WgslValue::Name(format!("ROWS_{}", self.row_walk.wgsl_name()))),
            ("ROW_AXES".into(), U32(self.row_walk.axes())),
            ("WORD_BYTES".into(), U32(self.word_bytes.max(4) as u32)),
        ]);
        if self.word_bytes < 4 {
            let (epw, bits) = (4 / self.word_bytes as u32, 8 * self.word_bytes as u32);
            c.extend([
                ("EPW".into(), U32(epw)),
                ("EPW_LOG2".into(), U32(epw.trailing_zeros())),
                ("BITS".into(), U32(bits)),
                ("MASK".into(), WgslValue::Hex(((1u64 << bits) - 1) as u32)),
            ]);
        }
        if let Some(grid) = self.flat_grid() {
            c.push(("FLAT_WORDS".into(), U32(grid.words)));
            c.push(("DEVICE_GRID".into(), Bool(grid.device)));
        }
        c
    }

    /// A label for wgpu's debug output.
    pub(crate) fn label(&self) -> String {
        format!(
            "wgpu-pad {} {}-byte{}{}{}",
            self.mode,
            self.word_bytes,
            if self.multi_period { " multi-period" } else { "" },
            match self.flat_words {
                0 => String::new(),
                w => format!(" flat {w}"),
            },
            match self.variant {
                KernelVariant::Default => String::new(),
                v => format!(" ({})", v.name()),
            }
        )
    }
}

/// How the narrow kernel (8- and 16-bit words) walks its output: a pipeline constant
/// (`ROW_WALK` in narrow.wgsl, compared with the `ROWS_` names shader.rs's constants table gives).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub(crate) enum RowWalk {
    /// One invocation per run of output words, its row found by division (rows too short
    /// to walk, or windows whose rows differ); also what wide words always take.
    PerWord = 0,
    /// Rows of whole words along axis 0.
    Axis0 = 1,
    /// Rows of whole words along axes 0 and 1 (axis 0 an unpadded run of channels).
    Axes01 = 2,
    /// Rows along either that end mid-word (odd image widths, RGB rows): each row owns the
    /// words that start in it; the axes come from the uniform's `row_first`.
    MidWord = 3,
}

impl RowWalk {
    /// Every variant.
    pub const ALL: [RowWalk; 4] = [RowWalk::PerWord, RowWalk::Axis0, RowWalk::Axes01, RowWalk::MidWord];

    /// The axes a row of whole words spans (its `first`: 1 or 2; the shader's `ROW_AXES`), a
    /// count of its own rather than the variant's number; 0 where rows are not whole words.
    pub fn axes(self) -> u32 {
        match self {
            RowWalk::Axis0 => 1,
            RowWalk::Axes01 => 2,
            RowWalk::PerWord | RowWalk::MidWord => 0,
        }
    }

    /// Rows of whole words along the axes below `first` (1 or 2).
    pub fn whole_words(first: u32) -> RowWalk {
        match first {
            1 => RowWalk::Axis0,
            2 => RowWalk::Axes01,
            _ => unreachable!("rows span one or two axes, not {first}"),
        }
    }

    pub(in crate::gpu) fn wgsl_name(self) -> &'static str {
        match self {
            RowWalk::PerWord => "PER_WORD",
            RowWalk::Axis0 => "AXIS0",
            RowWalk::Axes01 => "AXES01",
            RowWalk::MidWord => "MID_WORD",
        }
    }
}

const WIDE: &str = include_str!("../../shaders/wide.wgsl");
/// The narrow kernel: its entry point and per-word walk, then its row walk.
const NARROW: &str =
    concat!(include_str!("../../shaders/narrow.wgsl"), "\n", include_str!("../../shaders/narrow_rows.wgsl"));
const FLAT: &str = include_str!("../../shaders/flat.wgsl");
/// The input's declaration in common.wgsl, which the read-only variants replace.
const SRC_BINDING: &str = "var<storage, read_write> src";

/// The constants as WGSL declarations, one a line.
pub(crate) fn declare(constants: &[(String, WgslValue)]) -> String {
    constants.iter().map(|(name, value)| format!("const {name}: {value};\n")).collect()
}

/// A WGSL constant's value, as the table gives it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WgslValue {
    U32(u32),
    /// A u32 written in hex (a mask).
    Hex(u32),
    Bool(bool),
    /// Another constant's name.
    Name(String),
}

impl std::fmt::Display for WgslValue {
    /// The type and value as a WGSL declaration takes them: `u32 = 4u`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WgslValue::U32(v) => write!(f, "u32 = {v}u"),
            WgslValue::Hex(v) => write!(f, "u32 = {v:#x}u"),
            WgslValue::Bool(v) => write!(f, "bool = {v}"),
            WgslValue::Name(n) => write!(f, "u32 = {n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_space_is_bounded() {
        let mut all: Vec<PipelineKey> = Mode::ALL.iter().flat_map(|&m| PipelineKey::all_for(m, 1)).collect();
        all.dedup();
        assert_eq!(all.len(), PIPELINES);
        assert_eq!(PIPELINES, 112, "a change to the key space is a decision: say it in the docs");
        // Constant and edge never take the modulo variant, wide words no row variant.
        let per_word = RowWalk::PerWord;
        assert_eq!(PipelineKey::new(Mode::Edge, 4, true, per_word), PipelineKey::new(Mode::Edge, 4, false, per_word));
        assert_eq!(
            PipelineKey::new(Mode::Wrap, 8, true, RowWalk::Axes01),
            PipelineKey::new(Mode::Wrap, 8, true, per_word)
        );
    }

    /// Pipelines whose whole WGSL is committed in shaders/expanded/, so that a newcomer reads
    /// a pipeline as the driver gets it and a review sees what a change does to the defaults'.
    #[cfg(not(miri))]
    fn snapshots() -> [(&'static str, PipelineKey); 4] {
        [
            ("f32-reflect-rows", PipelineKey::new(Mode::Reflect, 4, false, RowWalk::PerWord)),
            ("f32-reflect-flat8", PipelineKey::new(Mode::Reflect, 4, false, RowWalk::PerWord).with_flat(Some(8))),
            ("u8-wrap-mid-word", PipelineKey::new(Mode::Wrap, 1, false, RowWalk::MidWord)),
            ("f16-edge-axis0", PipelineKey::new(Mode::Edge, 2, false, RowWalk::Axis0)),
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
            let keys = PipelineKey::all_for(mode, 1)
                .into_iter()
                .flat_map(|k| KernelVariant::ALL.map(|v| k.with_variant(v)))
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
