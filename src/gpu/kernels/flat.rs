//! The host half of `shaders/flat.wgsl`, the flat grid for wide words (the default for
//! large outputs and single rows, `default_words`; forced by the `flat-u4` and
//! `device-grid` variants): the roofline copy's shape. The window's elements (rows along
//! axis 0, the axes above linear) are one flat range; workgroup `b` takes elements
//! `[b * WORKGROUP * U, (b + 1) * WORKGROUP * U)`, lane `l` the `U` of them at
//! `l + u * WORKGROUP`, so each load or store instruction of a SIMD group touches neighbouring
//! elements, and every lane issues its `U` loads before its stores. A lane divides once to
//! find its first element's row and then steps (a whole-row step and a remainder, one
//! compare), walking the row's offsets again only where the row changes. The grid is linear,
//! split over x and y past `max_groups`.
//!
//! On the device grid ([`FlatGrid::device`], its own `main`) the grid is sized to the device instead: at
//! most [`DEVICE_LANES`] lanes, lane `l` of workgroup `b` taking elements
//! `b * WORKGROUP + l + k * G` (`G` the grid's lanes), `U` at a time, loads first, for as
//! many rounds as the output needs.

use super::DEVICE_LANES;
use crate::gpu::params::{Params, WgslValue, INDEX_LIMIT, WORKGROUP};
use crate::gpu::variant::KernelVariant;
use crate::gpu::window::WindowShape;

/// A flat grid's shape: what its pipeline (a part of the pipeline key) and its grid are
/// made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FlatGrid {
    /// Elements a lane takes at a time (`FLAT_WORDS`), all loads before the stores.
    pub words: u32,
    /// Lanes a workgroup (`WORKGROUP`).
    pub workgroup: u32,
    /// Sized to the device, a lane's elements a whole grid apart, not to the output.
    pub device: bool,
}

impl FlatGrid {
    /// The flat grid `variant` runs wide words on (`None`: the row grid), given the default
    /// kernels' elements a lane for the pad ([`default_words`]): `flat-u4` and the device
    /// grids force theirs, the reference keeps the row grid, the rest follow the default.
    pub(crate) fn of(variant: KernelVariant, default: Option<u32>) -> Option<FlatGrid> {
        let fixed = |words| FlatGrid { words, workgroup: WORKGROUP, device: false };
        match variant {
            KernelVariant::Reference => None,
            KernelVariant::FlatU4 => Some(fixed(4)),
            KernelVariant::DeviceGrid => Some(FlatGrid { words: 4, workgroup: WORKGROUP, device: true }),
            KernelVariant::DeviceGrid256 => Some(FlatGrid { words: 4, workgroup: 256, device: true }),
            _ => default.map(fixed),
        }
    }

    /// The pipeline's constants.
    pub(crate) fn constants(self) -> Vec<(&'static str, WgslValue)> {
        vec![("FLAT_WORDS", WgslValue::U32(self.words))]
    }

    /// The kernel's WGSL: the cursor's helpers, then `main` for this grid.
    pub(crate) fn wgsl(self) -> String {
        format!("{}\n{}", include_str!("../../../shaders/flat.wgsl"), wgsl_main(self))
    }

    /// For a pipeline's label.
    pub(crate) fn label(self) -> String {
        let device = if self.device { " device" } else { "" };
        format!(" flat {}{device} x{}", self.words, self.workgroup)
    }
}

/// flat.wgsl's entry point for grid `g`: each lane's first element and step, then
/// [`wgsl_body`].
fn wgsl_main(g: FlatGrid) -> String {
    // A lane's elements: a workgroup's width apart, or the whole grid's on the device grid.
    let (step, block) = match g.device {
        false => ("WORKGROUP", "WORKGROUP * FLAT_WORDS"),
        true => ("nwg.x * nwg.y * WORKGROUP", "WORKGROUP"),
    };
    format!(
        "@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {{
    let inner = P.axes[0];
    let total = P.count * inner.len;
    let step = {step};
    let drow = divide(step, inner.len_magic, inner.len_shift);
    let dx = step - drow * inner.len;
    let i = (wid.x + wid.y * nwg.x) * {block} + lid;
    let row = divide(i, inner.len_magic, inner.len_shift);
    var c = FlatCursor(i, i - row * inner.len, row, row, row_of(row));
{}}}
",
        wgsl_body(g)
    )
}

/// Wide words: the flat grid's elements a lane where the default kernels take it, from the
/// output's merged axes' lengths (innermost last) and its moved word's bytes, else `None`
/// (the row grid). Measured on an NVIDIA H100 (BENCHMARKS.md), 8 a lane: outputs of at least
/// [`FLAT_MIN_WORDS`] words ran in 0.66-1.01 of the row grid's time at 16-64 MiB, and a
/// single row (which the row grid gives a workgroup per 1,024 elements) in 0.81-0.85 (a 1-D
/// audio frame); smaller outputs of several rows, whose time is mostly the dispatch's
/// latency, ran 1.04-1.36 times slower flat. Outputs of [`FLAT_MAX_BYTES`] and more keep the
/// row grid: at 257 MiB only 4 a lane was measured, 0.96-1.16 of the row grid's time. One
/// grid size, not also 4 a lane (0.73-0.77 on the single row), so that a cold start compiles
/// fewer pipelines.
pub(in crate::gpu) fn default_words(out_lens: &[usize], word_bytes: u64) -> Option<u32> {
    let words: u64 = out_lens.iter().map(|&n| n as u64).product();
    let rows = words / (*out_lens.last()?).max(1) as u64;
    ((words >= FLAT_MIN_WORDS || rows == 1) && words * word_bytes < FLAT_MAX_BYTES).then_some(DEFAULT_WORDS)
}

/// The flat grid's elements a lane where the default kernels take it ([`default_words`]).
pub(in crate::gpu) const DEFAULT_WORDS: u32 = 8;

/// The outputs (in moved words) from which the default kernels take the flat grid: between
/// the largest measured to lose there (539,000 words) and the smallest measured to win
/// (1,049,000).
pub(in crate::gpu) const FLAT_MIN_WORDS: u64 = 1 << 20;

/// The outputs (in bytes) from which the default kernels keep the row grid again: between
/// the largest measured to win flat (64.5 MiB) and the smallest measured at 257 MiB.
pub(in crate::gpu) const FLAT_MAX_BYTES: u64 = 128 << 20;

/// The elements one workgroup takes, `words` a lane (the fixed grid of [`WORKGROUP`] lanes).
fn block(words: u32) -> u64 {
    (WORKGROUP * words) as u64
}

/// The workgroups for `total` elements: a block each, or on the device grid an element a
/// lane up to [`DEVICE_LANES`] (and the grid's `max_groups` squared: it takes rounds).
fn groups(total: u64, g: FlatGrid, max_groups: u64) -> u64 {
    match g.device {
        false => total.div_ceil((g.workgroup * g.words) as u64),
        true => total.div_ceil(g.workgroup as u64).min(DEVICE_LANES / g.workgroup as u64).min(max_groups * max_groups),
    }
}

/// Whether a window of this shape fits the flat grid `g`: its elements and the last
/// round's reach within the range the shader divides, its workgroups within the grid.
pub(in crate::gpu) fn fits(s: &WindowShape, g: FlatGrid) -> bool {
    let total = s.above(0) * s.len(0);
    let groups = groups(total, g, s.max_groups);
    // The furthest a lane's cursor steps past the last element: a block, or a round of the
    // whole grid (its x rounded up to whole rows of y).
    let reach = match g.device {
        false => block(g.words),
        true => (g.words as u64 + 1) * (groups + s.max_groups) * g.workgroup as u64,
    };
    total + reach <= INDEX_LIMIT && groups <= s.max_groups * s.max_groups
}

/// Sets the grid's parameters (`count` rows of `axes[0].len`) and returns its workgroup
/// counts.
pub(in crate::gpu) fn grid(s: &WindowShape, params: &mut Params, g: FlatGrid) -> [u32; 3] {
    params.count = s.above(0) as u32;
    params.pack = 1;
    super::split_grid(groups(s.above(0) * s.len(0), g, s.max_groups), s.max_groups)
}

/// The shader's body for grid `g`, unrolled (no loop for a compiler to keep): every lane's
/// `g.words` loads, then its stores; on the device grid, as many rounds of those as the
/// output needs (one division a lane).
fn wgsl_body(g: FlatGrid) -> String {
    let mut s = String::new();
    for u in 0..g.words {
        if u > 0 {
            s += "    c = flat_next(c, step, dx, drow);\n";
        }
        s += &format!(
            "    let ok{u} = c.i < total;\n    let d{u} = flat_dst(c);\n    let v{u} = flat_load(ok{u}, c);\n"
        );
    }
    for u in 0..g.words {
        s += &format!("    if (ok{u}) {{\n        store_dst(d{u}, v{u});\n    }}\n");
    }
    if g.device {
        let round = s.lines().map(|l| format!("    {l}\n")).collect::<String>();
        s = format!(
            "    let rounds = (total + (FLAT_WORDS * step - 1u)) / (FLAT_WORDS * step);\n    \
             for (var r = 0u; r < rounds; r++) {{\n{round}        c = flat_next(c, step, dx, drow);\n    }}\n"
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::layout::tests::{lay_variant, plan, LIMITS};
    use crate::gpu::program::DeviceLimits;
    use crate::gpu::variant::KernelVariant;
    use crate::{DataType, Mode};

    /// flat.wgsl's grid and stepping, run on the host: every (row, element) of each window
    /// is written exactly once, on grids past `max_groups` and with rows shorter and longer
    /// than a workgroup, on the fixed grids and the device grid (its rounds run as the
    /// shader counts them, its cursor stepped a whole grid at a time).
    #[test]
    fn the_flat_grid_covers_every_element_once() {
        let few_groups = DeviceLimits { max_groups: 7, ..LIMITS };
        let cases: [(&[usize], &[i64]); 8] = [
            (&[50, 7], &[0, 1, 0, 1]),          // rows of 9
            (&[1, 40000], &[0, 3, 0, 5]),       // one row: the default's 8 a lane
            (&[4, 5, 30], &[0, 0, 1, 0, 0, 1]), // rows of 32
            (&[3, 40], &[1, 0, 1, 1]),          // rows of 41
            (&[2, 3000], &[0, 5, 0, 2]),        // long rows
            (&[21], &[2, 3]),                   // rank 1
            (&[9, 64], &[0, 0, 0, 0]),          // rows of exactly a workgroup
            (&[600, 999], &[0, 1, 0, 0]),       // past the device grid's lanes: rounds
        ];
        let variants = [
            (&LIMITS, KernelVariant::FlatU4),
            (&few_groups, KernelVariant::FlatU4),
            (&LIMITS, KernelVariant::DeviceGrid),
            (&few_groups, KernelVariant::DeviceGrid256),
            (&few_groups, KernelVariant::Default),
        ];
        let (mut rounds_seen, mut default_flat) = (0, 0);
        for (shape, pads) in cases {
            for (limits, variant) in variants {
                let l = lay_variant(&plan(DataType::Float32, shape, pads, Mode::Edge), limits, variant);
                // The default takes the flat grid only for large outputs and single rows.
                let g = match (variant, l.key().flat_grid()) {
                    (KernelVariant::Default, None) => continue,
                    (KernelVariant::Default, Some(g)) => g,
                    (v, _) => FlatGrid::of(v, None).unwrap(),
                };
                default_flat += usize::from(variant == KernelVariant::Default);
                assert_eq!(l.key().flat_grid(), Some(g), "{shape:?}");
                let (words, wg) = (g.words as u64, g.workgroup as u64);
                for w in &l.dispatches {
                    let (len, rows) = (w.params.pad().axes[0].len as u64, w.params.pad().count as u64);
                    let total = rows * len;
                    let [gx, gy, gz] = w.workgroups.map(u64::from);
                    assert!(gx.max(gy).max(gz) <= limits.max_groups as u64, "{shape:?}: {:?}", w.workgroups);
                    // The shader's step, first element and rounds.
                    let lanes = gx * gy * gz * wg;
                    let step = if g.device { lanes } else { wg };
                    let rounds = if g.device { total.div_ceil(words * step) } else { 1 };
                    assert!(!g.device || lanes <= DEVICE_LANES + limits.max_groups as u64 * wg, "{lanes} lanes");
                    rounds_seen += (rounds > 1) as usize;
                    let (drow, dx) = (step / len, step % len);
                    let mut seen = vec![0u8; total as usize];
                    for b in 0..gx * gy * gz {
                        for lane in 0..wg {
                            // The shader's cursor: one division, then steps.
                            let mut i = b * if g.device { wg } else { wg * words } + lane;
                            let (mut row, mut x) = (i / len, i % len);
                            for u in 0..words * rounds {
                                if u > 0 {
                                    i += step;
                                    x += dx;
                                    row += drow;
                                    if x >= len {
                                        x -= len;
                                        row += 1;
                                    }
                                }
                                assert_eq!((row, x), (i / len, i % len), "the stepped cursor");
                                if i < total {
                                    seen[(row * len + x) as usize] += 1;
                                }
                            }
                        }
                    }
                    assert!(
                        seen.iter().all(|&n| n == 1),
                        "{shape:?} pads {pads:?} ({variant:?}): some element written {:?} times",
                        { seen.iter().copied().filter(|&n| n != 1).collect::<std::collections::BTreeSet<_>>() }
                    );
                }
            }
        }
        assert!(rounds_seen > 0, "no window ran the device grid's rounds");
        assert!(default_flat >= 2, "the default's flat grid ran on {default_flat} cases");
    }

    /// A window fits the flat grid only while its lanes' furthest step stays within the
    /// range the shader divides: a block past its end on the fixed grid, a round of the whole
    /// grid on the device grid (one element more and the window splits in two); the device
    /// grid never splits for its workgroups (it takes rounds), and takes as many as it may.
    #[test]
    fn windows_fit_within_the_lanes_reach_and_the_grid() {
        let huge = DeviceLimits { max_binding: 1 << 40, ..LIMITS };
        let windows = |dtype, out: u64, limits: &DeviceLimits, variant| {
            let p = plan(dtype, &[out as usize - 1], &[0, 1], Mode::Edge);
            lay_variant(&p, limits, variant).dispatches.len()
        };
        let maxg = huge.max_groups as u64;
        for variant in [KernelVariant::FlatU4, KernelVariant::DeviceGrid, KernelVariant::DeviceGrid256] {
            let g = FlatGrid::of(variant, None).unwrap();
            let wg = g.workgroup as u64;
            let reach = match g.device {
                false => wg * g.words as u64,
                true => (g.words as u64 + 1) * (DEVICE_LANES / wg + maxg) * wg,
            };
            let fit = INDEX_LIMIT - reach;
            assert_eq!(windows(DataType::Float32, fit, &huge, variant), 1, "{variant:?}: {fit} elements");
            assert_eq!(windows(DataType::Float32, fit + 1, &huge, variant), 2, "{variant:?}: {} elements", fit + 1);
        }
        let few = DeviceLimits { max_groups: 7, ..huge };
        // The device grid on 7 x 7 workgroups: one window, all 49 of them, in rounds.
        let p = plan(DataType::Float32, &[600, 999], &[0, 1, 0, 0], Mode::Edge);
        let l = lay_variant(&p, &few, KernelVariant::DeviceGrid256);
        assert_eq!(l.dispatches.len(), 1);
        assert_eq!(l.dispatches[0].workgroups, [7, 7, 1]);
    }

    /// The default kernels' choice, on the cases it was measured on (BENCHMARKS.md) and at
    /// its threshold.
    #[test]
    fn the_default_takes_the_flat_grid_for_large_outputs_and_single_rows() {
        let flat = |dtype, shape: &[usize], pads: &[i64]| {
            let key = lay_variant(&plan(dtype, shape, pads, Mode::Reflect), &LIMITS, KernelVariant::Default).key();
            key.flat_grid().map_or(0, |g| g.words)
        };
        assert_eq!(flat(DataType::Float32, &[1, 64, 512, 512], &[0, 0, 1, 1, 0, 0, 1, 1]), 8);
        assert_eq!(flat(DataType::Float16, &[8, 4096, 256], &[0, 3, 0, 0, 5, 0]), 8); // 16-byte words
        assert_eq!(flat(DataType::Float32, &[1, 1, 16000], &[0, 0, 512, 0, 0, 512]), 8); // one row
        assert_eq!(flat(DataType::Float32, &[1, 3, 224, 224], &[0, 0, 100, 100, 0, 0, 100, 100]), 0);
        assert_eq!(flat(DataType::Int64, &[2, 3, 8, 8], &[0, 0, 1, 1, 0, 0, 1, 1]), 0);
        assert_eq!(flat(DataType::Float16, &[8, 4096, 264], &[0, 0, 0, 0, 0, 8]), 0); // narrow words
        assert_eq!(flat(DataType::Float32, &[1, 64, 1024, 1024], &[0, 0, 1, 1, 0, 0, 1, 1]), 0); // 257 MiB
        assert_eq!(default_words(&[1024, 1024], 4), Some(8));
        assert_eq!(default_words(&[1023, 1024], 4), None);
        assert_eq!(default_words(&[1, 7], 4), Some(8));
        assert_eq!(default_words(&[8 << 20], 16), None);
        assert_eq!(default_words(&[(8 << 20) - 1], 16), Some(8));
    }

    #[test]
    fn the_body_issues_every_load_before_any_store() {
        for (words, device) in [(4, false), (8, false), (4, true)] {
            let body = wgsl_body(FlatGrid { words, workgroup: WORKGROUP, device });
            let last_load = body.rfind("flat_load(").unwrap();
            let first_store = body.find("store_dst(").unwrap();
            assert!(last_load < first_store, "{body}");
            assert_eq!(body.matches("flat_load(").count(), words as usize);
            assert_eq!(body.matches("store_dst(").count(), words as usize);
            // Between the loads; on the device grid once more, to the next round.
            assert_eq!(body.matches("flat_next(").count(), words as usize - 1 + device as usize);
            assert_eq!(body.contains("for (var r = 0u; r < rounds; r++)"), device, "{body}");
        }
    }
}
