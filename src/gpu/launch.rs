//! From a plan to the uniform parameters and workgroup counts of one dispatch. Pure host
//! code: the shaders in `shaders/` read exactly this layout.

use crate::dtype::ElementWidth;
use crate::error::{PadError, Result};
use crate::plan::{Constant, PadPlan};

/// Axes the uniform holds after folding.
pub const MAX_RANK: usize = 16;
/// Invocations per workgroup (`@workgroup_size` in the shaders).
pub const WORKGROUP: u32 = 64;

/// The uniform buffer's contents; `shaders/common.wgsl` declares the same struct.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Params {
    pub rank: u32,
    pub count: u32,
    pub out_elems: u32,
    pub grid: u32,
    pub constant: [u32; 4],
    pub axis: [[u32; 4]; MAX_RANK],
    pub in_stride: [u32; MAX_RANK],
}

/// Which main the pipeline runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// One invocation per element (32, 64, 128 bits).
    Wide,
    /// One invocation per output u32 word (8, 16 bits).
    Narrow,
}

/// One dispatch: parameters and workgroup counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub params: Params,
    pub workgroups: [u32; 3],
    pub kernel: Kernel,
}

fn too_large(what: String) -> PadError {
    PadError::TooLarge { what }
}

/// Plans the dispatch of `plan` (non-empty output, GPU-capable type) on a device allowing
/// `max_groups` workgroups per dimension.
pub fn launch(plan: &PadPlan, max_groups: u32) -> Result<Launch> {
    let width = plan.dtype().width();
    let bytes = width.bytes().ok_or_else(|| PadError::Unsupported {
        dtype: plan.dtype().name(),
        reason: "only fixed widths of 8 bits or more run on the GPU".into(),
    })?;
    let out_elems = plan.out_len() as u64;
    let in_elems = plan.in_len() as u64;
    // Element indices are u32 in the shaders, with headroom for the last word's lanes.
    const INDEX_LIMIT: u64 = u32::MAX as u64 - 4;
    if out_elems > INDEX_LIMIT || in_elems > INDEX_LIMIT {
        return Err(too_large(format!(
            "{in_elems} input and {out_elems} output elements; the GPU path indexes at most {INDEX_LIMIT}"
        )));
    }
    let folded = plan.folded(false);
    let rank = folded.axes.len();
    if rank > MAX_RANK {
        return Err(too_large(format!(
            "{rank} axes remain after merging unpadded ones; the GPU path takes at most {MAX_RANK} (use the CPU path)"
        )));
    }
    let mut params = Params {
        rank: rank as u32,
        count: 0,
        out_elems: out_elems as u32,
        grid: 0,
        constant: [0; 4],
        axis: [[0; 4]; MAX_RANK],
        in_stride: [0; MAX_RANK],
    };
    if let Constant::Bytes(b) = plan.constant() {
        let mut c = [0u8; 16];
        c[..b.len().min(16)].copy_from_slice(&b[..b.len().min(16)]);
        params.constant = bytemuck::cast(c);
    }
    let mut stride = 1u64;
    for (d, a) in folded.axes.iter().enumerate().rev() {
        if a.out_len as u64 >= 1 << 31 {
            return Err(too_large(format!(
                "axis {d} (after merging) has {} output elements; the GPU path allows under 2^31 per axis",
                a.out_len
            )));
        }
        params.axis[d] = [
            a.out_len as u32,
            a.pad_before as u32,
            a.kept as u32,
            a.crop_start as u32,
        ];
        params.in_stride[d] = stride as u32;
        stride *= a.in_len as u64;
    }

    let groups_for = |items: u64| -> Result<[u32; 2]> {
        let groups = items.div_ceil(WORKGROUP as u64).max(1);
        let x = groups.min(max_groups as u64);
        let y = groups.div_ceil(x);
        if y > max_groups as u64 {
            return Err(too_large(format!(
                "{items} invocations exceed the device's dispatch limits"
            )));
        }
        Ok([x as u32, y as u32])
    };

    let kernel = if bytes < 4 { Kernel::Narrow } else { Kernel::Wide };
    let workgroups = match kernel {
        Kernel::Narrow => {
            let per_word = 4 / bytes as u64;
            let words = out_elems.div_ceil(per_word);
            params.count = words as u32;
            let [x, y] = groups_for(words)?;
            [x, y, 1]
        }
        Kernel::Wide => {
            let axes = &folded.axes;
            let inner = axes[rank - 1].out_len as u64;
            let x = inner.div_ceil(WORKGROUP as u64).clamp(1, max_groups as u64) as u32;
            let rows = out_elems / inner;
            params.count = rows as u32;
            if rank == 1 {
                params.grid = 0;
                [x, 1, 1]
            } else {
                let m2 = axes[rank - 2].out_len as u64;
                let outer: u64 = axes[..rank - 2].iter().map(|a| a.out_len as u64).product();
                if m2 <= max_groups as u64 && outer <= max_groups as u64 {
                    params.grid = 1;
                    [x, m2 as u32, outer as u32]
                } else {
                    params.grid = 2;
                    let y = rows.min(max_groups as u64);
                    let z = rows.div_ceil(y);
                    if z > max_groups as u64 {
                        return Err(too_large(format!("{rows} rows exceed the device's dispatch limits")));
                    }
                    [x, y as u32, z as u32]
                }
            }
        }
    };
    Ok(Launch {
        params,
        workgroups,
        kernel,
    })
}

/// The shader source for one mode and width: the per-mode index function, the shared
/// prelude, the width's definitions and its main.
pub fn shader_source(mode: crate::Mode, width: ElementWidth) -> String {
    use crate::Mode::*;
    let mode_src = match mode {
        Constant => include_str!("../../shaders/constant.wgsl"),
        Reflect => include_str!("../../shaders/reflect.wgsl"),
        Edge => include_str!("../../shaders/edge.wgsl"),
        Wrap => include_str!("../../shaders/wrap.wgsl"),
        Symmetric => include_str!("../../shaders/symmetric.wgsl"),
    };
    let (defs, main) = match width {
        ElementWidth::Bits8 => (
            "alias WORD = u32;\nconst EPW: u32 = 4u;\nconst BITS: u32 = 8u;\nconst MASK: u32 = 0xffu;\n",
            include_str!("../../shaders/narrow.wgsl"),
        ),
        ElementWidth::Bits16 => (
            "alias WORD = u32;\nconst EPW: u32 = 2u;\nconst BITS: u32 = 16u;\nconst MASK: u32 = 0xffffu;\n",
            include_str!("../../shaders/narrow.wgsl"),
        ),
        ElementWidth::Bits32 => (
            "alias WORD = u32;\nfn constant_word() -> WORD { return P.constant.x; }\n",
            include_str!("../../shaders/wide.wgsl"),
        ),
        ElementWidth::Bits64 => (
            "alias WORD = vec2<u32>;\nfn constant_word() -> WORD { return P.constant.xy; }\n",
            include_str!("../../shaders/wide.wgsl"),
        ),
        _ => (
            "alias WORD = vec4<u32>;\nfn constant_word() -> WORD { return P.constant; }\n",
            include_str!("../../shaders/wide.wgsl"),
        ),
    };
    format!(
        "{defs}\n{}\n{mode_src}\n{main}",
        include_str!("../../shaders/common.wgsl")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataType, Mode, PadRequest};

    fn plan(dtype: DataType, shape: &[usize], pads: &[i64], mode: Mode) -> PadPlan {
        PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap()
    }

    #[test]
    fn rank3_uses_the_grid_for_rows() {
        let l = launch(
            &plan(
                DataType::Float32,
                &[1, 64, 512, 512],
                &[0, 0, 1, 1, 0, 0, 1, 1],
                Mode::Edge,
            ),
            65535,
        )
        .unwrap();
        assert_eq!(l.kernel, Kernel::Wide);
        assert_eq!(l.params.grid, 1);
        assert_eq!(l.workgroups, [9, 514, 64]);
        assert_eq!(l.params.axis[2], [514, 1, 512, 0]);
        assert_eq!(&l.params.in_stride[..3], &[512 * 512, 512, 1]);
    }

    #[test]
    fn long_outputs_use_two_dimensions() {
        let l = launch(&plan(DataType::Uint8, &[1 << 26], &[1, 1], Mode::Wrap), 65535).unwrap();
        assert_eq!(l.kernel, Kernel::Narrow);
        let [x, y, _] = l.workgroups;
        assert!(x as u64 * y as u64 * 64 * 4 >= (1 << 26) + 2);
        let l = launch(
            &plan(DataType::Uint8, &[70000, 70000], &[0, 1, 0, 1], Mode::Constant),
            65535,
        );
        assert!(matches!(l, Err(PadError::TooLarge { .. })));
    }

    #[test]
    fn every_shader_is_assembled() {
        for mode in Mode::ALL {
            for w in [
                ElementWidth::Bits8,
                ElementWidth::Bits16,
                ElementWidth::Bits32,
                ElementWidth::Bits64,
                ElementWidth::Bits128,
            ] {
                let s = shader_source(mode, w);
                assert!(s.contains("fn source_coord") && s.contains("fn main"));
            }
        }
    }
}
