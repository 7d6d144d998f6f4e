//! Kernel variants kept side by side until a real GPU decides between them (the kernel
//! issue's rule: lavapipe never picks a default). One build runs any of them, so a single
//! harness binary measures them all in one lease (`gpu_vs_cpu --kernel-variant`,
//! `benchmarks/device-ab.sh`'s `VARIANTS`), through the hidden
//! `measurement` entry.
//!
//! A variant is only a name here: what it changes lives in the kernel it changes, which maps
//! the name to its own shape (`kernels/wide.rs`'s `WideVariant::of`, `flat.rs`'s
//! `FlatGrid::of`, `narrow.rs`'s `NarrowVariant::of`); `Kernel::choose` (kernels/mod.rs) is
//! the one place that decides. A variant that loses on the GPU is deleted, not kept as
//! an option.
//!
//! Only the `variants` feature lets measurement select one; without it every pad takes the
//! default and the other names are never made, though the kernels keep their shapes' code
//! (one source for both builds).
#![cfg_attr(not(feature = "variants"), allow(dead_code))]

/// Which kernel shape a [`PadKernel`](super::PadKernel) records. Unstable: for measurement
/// only (`measurement`).
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
    /// lane two neighbouring kept words). Kept for the one case-mode it won on the H100
    /// (ARCHITECTURE.md, "Decisions worth keeping").
    NarrowSpread = 3,
    /// Wide words on the flat grid everywhere, 4 elements a lane (the default takes 8, and
    /// only for large outputs and single rows); 8- and 16-bit types run the default.
    FlatU4 = 4,
    /// Today's kernels with the input declared read-only in the shader (the roofline copy's
    /// binding; SPIR-V's NonWritable, which lets a driver use its read-only load path). The
    /// bind group layout says read-only too, so a pad whose input and output share a buffer
    /// runs the default ([`KernelVariant::with_writable_input`]).
    ReadOnlyInput = 6,
    /// Grids sized to the device, not to the output, filling at most
    /// `kernels::DEVICE_LANES` lanes. Wide words on the flat grid, each lane taking the
    /// elements a whole grid apart (a grid-stride loop, its round count from the uniform),
    /// four at a time with their loads first; small outputs get a lane an element. 8- and
    /// 16-bit long rows in pairs as by default, over as many lanes as fill the device (2 to
    /// 32 words a lane, where the default always takes 32).
    DeviceGrid = 7,
    /// Long 8- and 16-bit rows in pairs as by default, four pairs at a time with all their
    /// loads before their stores (the wide row grid's shape, which won there), where the
    /// default keeps one pair's loads in flight.
    NarrowLoadsFirst = 8,
    /// [`DeviceGrid`](KernelVariant::DeviceGrid)'s wide words in workgroups of 256 lanes
    /// (the roofline copy's), not 64; 8- and 16-bit types run the default.
    DeviceGrid256 = 9,
    /// A row's interior in 16-byte words (`kernels/rows16.rs`): dense outputs of elements
    /// under 16 bytes in rows of two such words or more, output and input bound as
    /// `vec4<u32>`; a word inside one row's kept interior is one or two aligned 16-byte
    /// loads and a funnel shift, the others element by element; four words a lane, loads
    /// first. Where its bindings, rounded to 16 bytes, would pass a buffer's end, the default.
    Rows16 = 10,
    /// The pad's gradient as its own pipeline on every element of `grad_in` (a lane each
    /// walking its images), not the default's crop of the bulk (the forward's kernels) and
    /// that pipeline on the borders only: what the crop replaced, for a real GPU to measure
    /// it against. Pads run the default.
    GradientWhole = 11,
    /// The pad's gradient's borders (8- and 16-bit elements) a lane a u32 word of `grad_in`,
    /// its elements' bits stored at once, where the default takes a lane an element and two
    /// atomics a store (lanes share a word); where a window's rows are not whole words, the
    /// default. Pads run the default.
    GradientWords = 12,
    /// The pad's gradient's borders a box a side: an edge for each side of each axis outside
    /// its one-image run, a corner for each pair of sides (a 2-D pad's borders eight
    /// dispatches), where the default takes an axis's two sides as one box, its windows
    /// skipping the run between them (three; a compare and a select an axis on every lane).
    /// The boxes the default replaced without a GPU (lavapipe: small gradients 0.48-0.75 of the
    /// time), for a real GPU to judge; the shader is the default's, its gap test never
    /// skipping here. Pads run the default.
    GradientSidesApart = 13,
}

impl KernelVariant {
    /// Every variant, the default first.
    pub const ALL: [KernelVariant; 12] = [
        KernelVariant::Default,
        KernelVariant::Reference,
        KernelVariant::NarrowSpread,
        KernelVariant::FlatU4,
        KernelVariant::ReadOnlyInput,
        KernelVariant::NarrowLoadsFirst,
        KernelVariant::DeviceGrid,
        KernelVariant::DeviceGrid256,
        KernelVariant::Rows16,
        KernelVariant::GradientWhole,
        KernelVariant::GradientWords,
        KernelVariant::GradientSidesApart,
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
            KernelVariant::Rows16 => "rows16",
            KernelVariant::GradientWhole => "gradient-whole",
            KernelVariant::GradientWords => "gradient-words",
            KernelVariant::GradientSidesApart => "gradient-sides-apart",
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

    /// Whether the shader declares its input read-only (the bindings, not a kernel's shape).
    pub(crate) fn read_only_input(self) -> bool {
        self == KernelVariant::ReadOnlyInput
    }

    /// The same variant with the input writable (for input and output in one buffer: wgpu
    /// refuses one buffer bound read-only and writable in one dispatch).
    #[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
    pub(crate) fn with_writable_input(self) -> KernelVariant {
        match self {
            KernelVariant::ReadOnlyInput => KernelVariant::Default,
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
        assert_eq!(KernelVariant::from_name("flat-u8"), None, "deleted: it lost on the H100");
    }
}
