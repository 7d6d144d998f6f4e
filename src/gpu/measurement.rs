//! Unstable and hidden: the one entry for measuring kernel variants side by side (the
//! harness's `--kernel-variant`, `benchmarks/device-ab.sh`, and the variants' tests). Nothing
//! here is part of the crate's API; a variant that loses on a real GPU is deleted with its
//! name.
//!
//! - [`KernelVariant`]: the variants' names (src/gpu/variant.rs);
//! - [`program`]: [`Program::new`] for a variant;
//! - `select` and `selected` (with the `wgpu` feature): the variant a `PadKernel` prepares
//!   pads with from now on (its pipelines cached apart by their keys);
//! - `runs_the_default` (with the `wgpu` feature): whether the selected variant runs a plan
//!   exactly as the default does, so that the variants' tests skip what the default's runs
//!   cover;
//! - [`COLD_MIX`] and [`COLD_MIX_TYPES`]: the cold-start mix (the harness's `--cold-start`,
//!   and the test below of how many pipelines it compiles).

use super::program::{BufferView, DeviceLimits, Program};
pub use super::variant::KernelVariant;
use crate::dtype::DataType;
use crate::error::Result;
use crate::plan::PadPlan;

/// The cold-start mix's shapes and pads (begins then ends): with every mode and each of
/// [`COLD_MIX_TYPES`], the 120 pads an engine's first inferences might ask for.
pub const COLD_MIX: [(&[usize], &[i64]); 6] = [
    (&[1, 3, 224, 224], &[0, 0, 2, 2, 0, 0, 2, 2]),
    (&[8, 4096, 256], &[0, 0, 3, 0, 0, 5]),
    (&[1, 1024, 1024, 3], &[0, 2, 2, 0, 0, 2, 2, 0]),
    (&[2, 3, 8, 8], &[1, 1, 1, 1, 1, 1, 1, 1]),
    (&[17], &[3, 4]),
    (&[4, 5, 6, 7, 2], &[0, 1, -1, 1, 0, 0, 1, -1, 1, 0]),
];

/// The cold-start mix's types.
pub const COLD_MIX_TYPES: [DataType; 4] = [DataType::Float32, DataType::Float16, DataType::Uint8, DataType::Int64];

/// [`Program::new`] in kernel `variant`.
pub fn program(
    plan: &PadPlan,
    input: &BufferView,
    output: &BufferView,
    limits: &DeviceLimits,
    variant: KernelVariant,
) -> Result<Program> {
    super::layout::program(plan, input, output, limits, variant)
}

/// [`Program::backward`] in kernel `variant` (only [`KernelVariant::GradientWhole`],
/// [`KernelVariant::GradientWords`] and [`KernelVariant::GradientSidesApart`] differ).
pub fn backward_program(
    plan: &PadPlan,
    grad_out: &BufferView,
    grad_in: &BufferView,
    limits: &DeviceLimits,
    variant: KernelVariant,
) -> Result<Program> {
    super::backward::program(plan, grad_out, grad_in, limits, variant)
}

/// Pads `kernel` prepares from now on use kernel `variant` (pads already prepared keep theirs).
#[cfg(feature = "wgpu")]
pub fn select(kernel: &super::PadKernel, variant: KernelVariant) {
    kernel.select_variant(variant);
}

/// The kernel variant `kernel` prepares pads with now.
#[cfg(feature = "wgpu")]
pub fn selected(kernel: &super::PadKernel) -> KernelVariant {
    kernel.variant()
}

/// Whether `kernel`'s selected variant runs `plan` as the default does (the same pipeline
/// and dispatches) on dense buffers of its sizes, so that running it there would only test
/// the default again. False for the default itself. The buffers are taken as a pool gives
/// them (whole 256 bytes: `rows16` runs where its 16-byte words fit them), so a variant that
/// may run its own program is never skipped.
#[cfg(feature = "wgpu")]
pub fn runs_the_default(kernel: &super::PadKernel, plan: &PadPlan) -> bool {
    let variant = kernel.variant();
    let Some((i, o)) = plan.byte_sizes().filter(|_| variant != KernelVariant::Default) else { return false };
    let view = |n: u64| BufferView { offset: 0, strides: None, end: n, buffer_size: n.next_multiple_of(256).max(256) };
    let (iv, ov) = (view(i), view(o));
    let limits = kernel.limits();
    let (Ok(a), Ok(b)) = (program(plan, &iv, &ov, &limits, variant), Program::new(plan, &iv, &ov, &limits)) else {
        return false;
    };
    let same = |x: &super::Dispatch, y: &super::Dispatch| {
        (x.pipeline(), x.params(), x.workgroups(), x.input(), x.output())
            == (y.pipeline(), y.params(), y.workgroups(), y.input(), y.output())
    };
    a.pipelines == b.pipelines
        && a.dispatches().len() == b.dispatches().len()
        && a.dispatches().iter().zip(b.dispatches()).all(|(x, y)| same(x, y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::layout::tests::{lay, plan, LIMITS};
    use crate::mode::Mode;

    /// The engine issue's cold-start mix: 5 modes x 4 types x 6 shapes. 38 pipelines on the
    /// row grid alone; the flat grid for large and single-row wide-word outputs adds 11. (On
    /// an H100 the mix's 38 took 3.96 s in a lease's first process, 0.18 s in the next.)
    #[test]
    fn the_cold_start_mix_needs_at_most_49_pipelines() {
        let mut keys = std::collections::HashSet::new();
        for mode in Mode::ALL {
            for dtype in COLD_MIX_TYPES {
                for (shape, pads) in COLD_MIX {
                    keys.insert(lay(&plan(dtype, shape, pads, mode), &LIMITS).key());
                }
            }
        }
        assert!(keys.len() <= 49, "{} pipelines", keys.len());
        assert!(
            keys.iter().any(|k| k.flat_grid().is_some_and(|g| g.words == 8)),
            "the large outputs take the flat grid"
        );
    }
}
