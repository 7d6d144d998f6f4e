//! Kernel variants kept side by side until a real GPU decides between them (the kernel
//! issue's rule: lavapipe never picks a default). One build runs any of
//! them, so a single harness binary measures them all in one lease
//! (`gpu_vs_cpu --kernel-variant`, `benchmarks/device-ab.sh`'s `VARIANTS`).
//!
//! A variant is a name: what it changes lives in the kernel it changes, as that kernel's own
//! enum (`kernels/wide.rs`'s `WideVariant`, `flat.rs`'s `FlatGrid`, `narrow.rs`'s
//! `NarrowVariant`), which [`KernelVariant::wide`], [`KernelVariant::wide_flat_grid`] and
//! [`KernelVariant::narrow`] map it to.
//!
//! Not a public knob: [`KernelVariant`] is hidden from the documentation and the public API
//! list, and a variant that loses on the GPU is deleted, not kept as an option.

use super::kernels::flat::FlatGrid;
use super::kernels::narrow::NarrowVariant;
use super::kernels::wide::WideVariant;
use super::params::WORKGROUP;

/// Which kernel shape a [`PadKernel`](super::PadKernel) records. Unstable: for measurement
/// only ([`PadKernel::select_variant_for_measurement`](super::PadKernel::select_variant_for_measurement)).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum KernelVariant {
    /// Today's kernels: the default.
    #[default]
    Default = 0,
    /// The design card's shape, the simple kernel tuned ones are checked and measured
    /// against: one invocation per output element (wide words), per u32 word (8- and 16-bit
    /// types, always the per-word walk).
    Reference = 1,
    /// 8- and 16-bit rows longer than a workgroup's words spread over whole workgroups, a
    /// lane a word, two an iteration a grid width apart, instead of the default's pairs (a
    /// lane two neighbouring kept words). Its H100 figures against the default:
    /// ARCHITECTURE.md, "Decisions worth keeping".
    NarrowSpread = 3,
    /// Wide words on the flat grid everywhere, the roofline copy's shape: each workgroup
    /// takes a block of the window's consecutive elements (rows run on into the next), each
    /// lane 4 of them a workgroup's width apart, all their loads before their stores (the
    /// default takes 8 a lane, and only for large outputs and single rows;
    /// `src/gpu/kernels/flat.rs`). 8- and 16-bit types run the default.
    FlatU4 = 4,
    /// Today's kernels with the input declared read-only in the shader (the roofline copy's
    /// binding; SPIR-V's NonWritable, which lets a driver use its read-only load path). The
    /// bind group layout stays read-write, so input and output may still share a buffer
    /// (their ranges never overlap: `PadKernel::prepare` refuses that).
    ReadOnlyInput = 6,
    /// Grids sized to the device, not to the output, filling at most
    /// [`DEVICE_LANES`](super::kernels::DEVICE_LANES) lanes. Wide words on the flat grid,
    /// each lane taking the elements a whole grid apart (a grid-stride loop, its round count
    /// from the uniform), four at a time with their loads first; small outputs get a lane an
    /// element. 8- and 16-bit long rows in pairs as by default, over as many lanes as fill
    /// the device (2 to 32 words a lane, where the default always takes 32).
    DeviceGrid = 7,
    /// Long 8- and 16-bit rows in pairs as by default, four pairs at a time with all their
    /// loads before their stores (the wide row grid's shape, which won there), where the
    /// default keeps one pair's loads in flight.
    NarrowLoadsFirst = 8,
    /// [`DeviceGrid`](KernelVariant::DeviceGrid)'s wide words in workgroups of 256 lanes
    /// (the roofline copy's), not 64; 8- and 16-bit types run the default.
    DeviceGrid256 = 9,
}

impl KernelVariant {
    /// Every variant, the default first.
    pub const ALL: [KernelVariant; 8] = [
        KernelVariant::Default,
        KernelVariant::Reference,
        KernelVariant::NarrowSpread,
        KernelVariant::FlatU4,
        KernelVariant::ReadOnlyInput,
        KernelVariant::NarrowLoadsFirst,
        KernelVariant::DeviceGrid,
        KernelVariant::DeviceGrid256,
    ];

    /// The variant's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            KernelVariant::Default => "default",
            KernelVariant::Reference => "reference",
            KernelVariant::NarrowSpread => "narrow-spread",
            KernelVariant::FlatU4 => "flat-u4",
            KernelVariant::ReadOnlyInput => "read-only-input",
            KernelVariant::NarrowLoadsFirst => "narrow-loads-first",
            KernelVariant::DeviceGrid => "device-grid",
            KernelVariant::DeviceGrid256 => "device-grid-256",
        }
    }

    /// The variant named `name`.
    pub fn from_name(name: &str) -> Option<KernelVariant> {
        KernelVariant::ALL.into_iter().find(|v| v.name() == name)
    }

    #[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
    pub(crate) fn from_u8(v: u8) -> KernelVariant {
        KernelVariant::ALL.into_iter().find(|&k| k as u8 == v).unwrap_or_default()
    }

    /// The wide row grid's shape under this variant.
    pub(crate) fn wide(self) -> WideVariant {
        match self {
            KernelVariant::Reference => WideVariant::Reference,
            _ => WideVariant::Default,
        }
    }

    /// The narrow kernel's shape under this variant.
    pub(crate) fn narrow(self) -> NarrowVariant {
        match self {
            KernelVariant::Reference => NarrowVariant::Reference,
            KernelVariant::NarrowSpread => NarrowVariant::Spread,
            KernelVariant::NarrowLoadsFirst => NarrowVariant::PairsLoadsFirst,
            KernelVariant::DeviceGrid => NarrowVariant::DevicePairs,
            _ => NarrowVariant::Pairs,
        }
    }

    /// Wide words: the flat grid this variant runs (`None`: the row grid), given the default
    /// kernels' elements a lane for the pad (`flat::default_words`): the flat variants force
    /// theirs, the reference keeps the row grid, the rest follow the default.
    pub(in crate::gpu) fn wide_flat_grid(self, default: Option<u32>) -> Option<FlatGrid> {
        let fixed = |words| FlatGrid { words, workgroup: WORKGROUP, device: false };
        match self {
            KernelVariant::Reference => None,
            KernelVariant::DeviceGrid => Some(FlatGrid { words: 4, workgroup: WORKGROUP, device: true }),
            KernelVariant::DeviceGrid256 => Some(FlatGrid { words: 4, workgroup: 256, device: true }),
            KernelVariant::FlatU4 => Some(fixed(4)),
            _ => default.map(fixed),
        }
    }

    /// Whether the shader declares its input read-only.
    pub(crate) fn read_only_input(self) -> bool {
        self == KernelVariant::ReadOnlyInput
    }

    /// The same variant with the input writable (for input and output in one buffer).
    #[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
    pub(crate) fn with_writable_input(self) -> KernelVariant {
        match self {
            KernelVariant::ReadOnlyInput => KernelVariant::Default,
            v => v,
        }
    }

    /// The variant a pipeline of `word_bytes`-byte words walking rows so really runs: one
    /// that changes nothing there is the default, so that it shares the default's pipeline.
    pub(crate) fn for_key(self, word_bytes: u8, walks_rows: bool) -> KernelVariant {
        let narrow = word_bytes < 4;
        match self {
            // Wide words: the flat grid is the key's own (`PipelineKey::flat_words`).
            KernelVariant::FlatU4 if !narrow => KernelVariant::Default,
            // Narrow words: the device grid is the default's pipeline on another grid; the
            // flat grid is for wide words only.
            KernelVariant::DeviceGrid | KernelVariant::DeviceGrid256 | KernelVariant::FlatU4 if narrow => {
                KernelVariant::Default
            }
            KernelVariant::NarrowSpread | KernelVariant::NarrowLoadsFirst if !narrow || !walks_rows => {
                KernelVariant::Default
            }
            v => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for v in KernelVariant::ALL {
            assert_eq!(KernelVariant::from_name(v.name()), Some(v));
            assert_eq!(KernelVariant::from_u8(v as u8), v);
        }
        assert_eq!(KernelVariant::from_name("fast"), None);
    }

    #[test]
    fn a_variant_that_changes_nothing_is_the_default() {
        use KernelVariant::*;
        assert_eq!(NarrowSpread.for_key(16, false), Default);
        assert_eq!(NarrowSpread.for_key(1, false), Default);
        assert_eq!(NarrowSpread.for_key(1, true), NarrowSpread);
        assert_eq!(NarrowLoadsFirst.for_key(4, false), Default);
        assert_eq!(NarrowLoadsFirst.for_key(2, false), Default);
        assert_eq!(NarrowLoadsFirst.for_key(2, true), NarrowLoadsFirst);
        assert_eq!(Reference.for_key(1, false), Reference);
        assert_eq!(Reference.for_key(8, false), Reference);
        assert_eq!(FlatU4.for_key(2, false), Default);
        assert_eq!(FlatU4.for_key(4, false), Default);
        assert_eq!(DeviceGrid.for_key(4, false), DeviceGrid);
        assert_eq!(DeviceGrid256.for_key(16, false), DeviceGrid256);
        assert_eq!(DeviceGrid.for_key(2, true), Default);
        assert_eq!(DeviceGrid256.for_key(1, false), Default);
        assert_eq!(ReadOnlyInput.for_key(1, true), ReadOnlyInput);
        assert_eq!(ReadOnlyInput.for_key(4, false), ReadOnlyInput);
    }
}
