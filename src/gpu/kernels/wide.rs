//! The host half of `shaders/wide.wgsl` (32-, 64- and 128-bit words): its grid of rows,
//! x the position in a row, y and z (linear) the row over the axes above. Rows longer than
//! half a workgroup take one or more workgroups each, `elems` elements an invocation a grid
//! width apart ([`WIDE_ELEMS`] by default, 1 in the reference
//! variant); shorter rows share a workgroup, one element an invocation.

use crate::gpu::params::{Params, WgslValue, INDEX_LIMIT, WIDE_ELEMS, WORKGROUP};
use crate::gpu::variant::KernelVariant;
use crate::gpu::window::WindowShape;

/// The wide row grid's shapes, each its own pipeline (a part of the pipeline key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum WideVariant {
    /// [`WIDE_ELEMS`] elements an invocation, four at a time with their loads first.
    Default,
    /// The design card: an element an invocation.
    Reference,
}

impl WideVariant {
    /// The shape `variant` asks of the row grid (the variants of other kernels: the default).
    pub(crate) fn of(variant: KernelVariant) -> WideVariant {
        match variant {
            KernelVariant::Reference => WideVariant::Reference,
            _ => WideVariant::Default,
        }
    }

    /// The pipeline's constants.
    pub(crate) fn constants(self) -> Vec<(&'static str, WgslValue)> {
        vec![("WIDE_ELEMS", WgslValue::U32(self.elems()))]
    }

    /// The kernel's WGSL.
    pub(crate) fn wgsl(self) -> String {
        include_str!("../../../shaders/wide.wgsl").to_string()
    }

    /// For a pipeline's label.
    pub(crate) fn label(self) -> &'static str {
        match self {
            WideVariant::Default => "",
            WideVariant::Reference => " reference",
        }
    }

    /// Elements of a row one invocation writes, a grid width apart (`WIDE_ELEMS` in WGSL).
    pub(crate) fn elems(self) -> u32 {
        match self {
            WideVariant::Default => WIDE_ELEMS,
            WideVariant::Reference => 1,
        }
    }
}

/// Rows of `row_len` elements one workgroup takes (`Params::pack`): as many as fit, so that
/// short rows do not leave most of a workgroup idle (a 7 x 7 feature map padded by 1 has
/// rows of 9: a row a workgroup would leave 55 of 64 invocations idle).
pub(in crate::gpu) fn pack(row_len: u64) -> u64 {
    (WORKGROUP as u64 / row_len).max(1)
}

/// Whether a window of this shape fits the grid's dimensions and index range, `elems`
/// elements an invocation.
pub(in crate::gpu) fn fits(s: &WindowShape, elems: u32) -> bool {
    let maxg = s.max_groups;
    let rows = s.above(0);
    let grid = match pack(s.len(0)) {
        1 => s.len(1) <= maxg && s.above(1) <= maxg,
        pack => rows.div_ceil(pack) <= maxg * maxg,
    };
    s.len(0).div_ceil((WORKGROUP * elems) as u64) <= maxg && rows <= INDEX_LIMIT && grid
}

/// Sets the grid's parameters (`count` rows, `pack` a workgroup) and returns its workgroup
/// counts, `elems` elements an invocation.
pub(in crate::gpu) fn grid(s: &WindowShape, params: &mut Params, elems: u32) -> [u32; 3] {
    let (rows, pack) = (s.above(0), pack(s.len(0)));
    params.count = rows as u32;
    params.pack = pack as u32;
    match pack {
        1 => [s.len(0).div_ceil((WORKGROUP * elems) as u64) as u32, s.len(1) as u32, s.above(1) as u32],
        _ => {
            let groups = rows.div_ceil(pack);
            let y = groups.min(s.max_groups);
            [1, y as u32, groups.div_ceil(y) as u32]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::layout::tests::{lay_variant, plan, LIMITS};
    use crate::gpu::program::DeviceLimits;
    use crate::gpu::variant::KernelVariant;
    use crate::{DataType, Mode};

    /// wide.wgsl's grid, run on the host: every (row, element) of each window is written
    /// exactly once, short rows packed several to a workgroup, on grids past `max_groups`.
    #[test]
    fn the_wide_grid_covers_every_element_once() {
        let few_groups = DeviceLimits { max_groups: 7, ..LIMITS };
        let cases: [(&[usize], &[i64]); 5] = [
            (&[50, 7], &[0, 1, 0, 1]),          // rows of 9, 7 to a workgroup, a 2-D grid
            (&[4, 5, 30], &[0, 0, 1, 0, 0, 1]), // rows of 32, 2 to a workgroup
            (&[3, 40], &[1, 0, 1, 1]),          // rows of 41, one each
            (&[2, 3000], &[0, 5, 0, 2]),        // long rows, several workgroups each
            (&[21], &[2, 3]),                   // rank 1
        ];
        for (shape, pads) in cases {
            // The flat grid's variants (and the default's flat grid) are flat.rs's.
            let row_grids = KernelVariant::ALL.into_iter();
            for (limits, variant) in
                [&LIMITS, &few_groups].into_iter().flat_map(|l| row_grids.clone().map(move |v| (l, v)))
            {
                let l = lay_variant(&plan(DataType::Float32, shape, pads, Mode::Reflect), limits, variant);
                if !matches!(l.key().shader, super::super::Shader::Rows(_)) {
                    continue; // the flat grid's (flat.rs: a single row on the default kernels) or rows16's
                }
                let elems = WideVariant::of(variant).elems();
                for w in &l.dispatches {
                    let (len, rows) = (w.params.pad().axes[0].len as u64, w.params.pad().count as u64);
                    let pack = w.params.pad().pack as u64;
                    assert_eq!(pack, super::pack(len));
                    let [gx, gy, gz] = w.workgroups.map(u64::from);
                    assert!(gx.max(gy).max(gz) <= limits.max_groups as u64, "{shape:?}: {:?}", w.workgroups);
                    let mut seen = vec![0u8; (rows * len) as usize];
                    for (x, y, z) in (0..gz).flat_map(|z| (0..gy).flat_map(move |y| (0..gx).map(move |x| (x, y, z)))) {
                        for lane in 0..WORKGROUP as u64 {
                            let gid_x = x * WORKGROUP as u64 + lane;
                            let sub = gid_x / len;
                            let row = (y + z * gy) * pack + sub;
                            if sub >= pack || row >= rows {
                                continue;
                            }
                            for e in 0..elems as u64 {
                                let i = gid_x - sub * len + e * gx * WORKGROUP as u64;
                                if i >= len {
                                    break;
                                }
                                seen[(row * len + i) as usize] += 1;
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
    }
}
