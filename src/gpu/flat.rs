//! The host half of `shaders/flat.wgsl`, the flat-grid kernel variants for wide words
//! (`KernelVariant::FlatU4`, `FlatU8`): the roofline copy's shape. The window's elements
//! (rows along axis 0, the axes above linear) are one flat range; workgroup `b` takes
//! elements `[b * WORKGROUP * U, (b + 1) * WORKGROUP * U)`, lane `l` the `U` of them at
//! `l + u * WORKGROUP`, so each load or store instruction of a SIMD group touches neighbouring
//! elements, and every lane issues its `U` loads before its stores. A lane divides once to
//! find its first element's row and then steps (`WORKGROUP` elements: a whole-row step and a
//! remainder, one compare), walking the row's offsets again only where the row changes.
//! The grid is linear, split over x and y past `max_groups`.

use super::params::{Params, INDEX_LIMIT, WORKGROUP};
use super::window::WindowShape;

/// The elements one workgroup takes, `words` a lane.
fn block(words: u32) -> u64 {
    (WORKGROUP * words) as u64
}

/// Whether a window of this shape fits the flat grid, `words` elements a lane: its
/// elements and the last block's reach within the range the shader divides.
pub(super) fn fits(s: &WindowShape, words: u32) -> bool {
    let total = s.above(0) * s.len(0);
    let groups = total.div_ceil(block(words));
    total + block(words) <= INDEX_LIMIT && groups <= s.max_groups * s.max_groups
}

/// Sets the grid's parameters (`count` rows of `axes[0].len`) and returns its workgroup
/// counts: the blocks, x first, y when x is full.
pub(super) fn grid(s: &WindowShape, params: &mut Params, words: u32) -> [u32; 3] {
    params.count = s.above(0) as u32;
    params.pack = 1;
    let groups = (s.above(0) * s.len(0)).div_ceil(block(words));
    let x = groups.min(s.max_groups);
    [x as u32, groups.div_ceil(x) as u32, 1]
}

/// The shader's body for `words` elements a lane, unrolled (no loop for a compiler to keep):
/// every lane's loads, then its stores.
pub(super) fn wgsl_body(words: u32) -> String {
    let mut s = String::new();
    for u in 0..words {
        if u > 0 {
            s += "    c = flat_next(c, dx, drow);\n";
        }
        s += &format!(
            "    let ok{u} = c.i < total;\n    let d{u} = flat_dst(c);\n    let v{u} = flat_load(ok{u}, c);\n"
        );
    }
    for u in 0..words {
        s += &format!("    if (ok{u}) {{\n        store_dst(2u, d{u}, v{u});\n    }}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::layout::tests::{lay_variant, plan, LIMITS};
    use super::super::program::DeviceLimits;
    use super::super::variant::KernelVariant;
    use super::*;
    use crate::{DataType, Mode};

    /// flat.wgsl's grid and stepping, run on the host: every (row, element) of each window
    /// is written exactly once, on grids past `max_groups` and with rows shorter and longer
    /// than a workgroup.
    #[test]
    fn the_flat_grid_covers_every_element_once() {
        let few_groups = DeviceLimits { max_groups: 7, ..LIMITS };
        let cases: [(&[usize], &[i64]); 6] = [
            (&[50, 7], &[0, 1, 0, 1]),          // rows of 9
            (&[4, 5, 30], &[0, 0, 1, 0, 0, 1]), // rows of 32
            (&[3, 40], &[1, 0, 1, 1]),          // rows of 41
            (&[2, 3000], &[0, 5, 0, 2]),        // long rows
            (&[21], &[2, 3]),                   // rank 1
            (&[9, 64], &[0, 0, 0, 0]),          // rows of exactly a workgroup
        ];
        for (shape, pads) in cases {
            for (limits, variant) in [(&LIMITS, KernelVariant::FlatU4), (&few_groups, KernelVariant::FlatU8)] {
                let l = lay_variant(&plan(DataType::Float32, shape, pads, Mode::Edge), limits, variant);
                assert_eq!(l.key.variant, variant, "{shape:?}");
                let words = variant.flat_words().unwrap() as u64;
                let wg = WORKGROUP as u64;
                for w in &l.dispatches {
                    let (len, rows) = (w.params.axes[0].len as u64, w.params.count as u64);
                    let total = rows * len;
                    let [gx, gy, gz] = w.workgroups.map(u64::from);
                    assert!(gx.max(gy).max(gz) <= limits.max_groups as u64, "{shape:?}: {:?}", w.workgroups);
                    let (drow, dx) = (wg / len, wg % len);
                    let mut seen = vec![0u8; total as usize];
                    for b in 0..gx * gy * gz {
                        for lane in 0..wg {
                            // The shader's cursor: one division, then steps.
                            let mut i = b * wg * words + lane;
                            let (mut row, mut x) = (i / len, i % len);
                            for u in 0..words {
                                if u > 0 {
                                    i += wg;
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
    }

    #[test]
    fn the_body_issues_every_load_before_any_store() {
        for words in [4, 8] {
            let body = wgsl_body(words);
            let last_load = body.rfind("flat_load(").unwrap();
            let first_store = body.find("store_dst(").unwrap();
            assert!(last_load < first_store, "{body}");
            assert_eq!(body.matches("flat_load(").count(), words as usize);
            assert_eq!(body.matches("store_dst(").count(), words as usize);
            assert_eq!(body.matches("flat_next(").count(), words as usize - 1);
        }
    }
}
