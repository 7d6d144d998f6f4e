//! (Public only for diagnostics and benchmarks; not a stable API.)
//!
//! From a plan to the uniform parameters and workgroup counts of one dispatch. Pure host
//! code: the shaders in `shaders/` read exactly this layout.

use crate::dtype::ElementWidth;
use crate::error::{PadError, Result};
use crate::plan::{Constant, PadPlan};

/// Axes the uniform holds after folding.
pub const MAX_RANK: usize = 16;
/// Invocations per workgroup (`@workgroup_size` in the shaders).
pub const WORKGROUP: u32 = 64;
/// Elements of a row per invocation in the wide kernel's row grids (`ELEMS` in wide.wgsl).
pub const WIDE_ELEMS: u64 = 2;
/// Words of a row per invocation in the narrow kernel's row grids (`ROW_WORDS` in narrow.wgsl).
pub const NARROW_ROW_WORDS: u64 = 2;

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
    /// Per axis: magic multiplier and shift for dividing by the output length, input stride.
    pub div: [[u32; 4]; MAX_RANK],
    /// Per axis: period of the mode's extension, offset, period's magic multiplier and shift.
    pub period: [[u32; 4]; MAX_RANK],
}

/// Magic multiplier and shift so that `n / d == mulhi(n, magic) >> shift` for every
/// `n < 2^31` (Granlund and Montgomery: `magic = ceil(2^(31+l) / d)`, `l = ceil(log2 d)`).
/// `d == 1` gives magic 0, which the shader reads as "no division".
pub fn magic_divisor(d: u32) -> (u32, u32) {
    assert!(d > 0, "division by zero");
    if d == 1 {
        return (0, 0);
    }
    let l = 32 - (d - 1).leading_zeros();
    let magic = (1u64 << (31 + l)).div_ceil(d as u64);
    debug_assert!(magic <= u32::MAX as u64);
    (magic as u32, l - 1)
}

/// The shader's division, on the host (for tests).
pub fn divide(n: u32, (magic, shift): (u32, u32)) -> u32 {
    if magic == 0 {
        n
    } else {
        (((n as u64 * magic as u64) >> 32) as u32) >> shift
    }
}

/// Largest numerator the shaders divide: element, word and row indices stay below it.
pub const INDEX_LIMIT: u64 = (1 << 31) - 8;

/// Which main the pipeline runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// One invocation per element (32, 64, 128 bits).
    Wide,
    /// One invocation per output u32 word (8, 16 bits).
    Narrow,
}

/// One dispatch: parameters, workgroup counts, and the width the shader moves.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub params: Params,
    pub workgroups: [u32; 3],
    pub kernel: Kernel,
    /// Bytes the shader moves per element: the type's width, or wider where the innermost
    /// axis is unpadded and its bytes split evenly into 4-, 8- or 16-byte words.
    pub word_bytes: usize,
    /// Every pad is at most one period of the mode's extension, so no modulo is needed.
    pub one_period: bool,
}

/// The shader width for `bytes` per element.
pub fn width_of(bytes: usize) -> ElementWidth {
    match bytes {
        1 => ElementWidth::Bits8,
        2 => ElementWidth::Bits16,
        4 => ElementWidth::Bits32,
        8 => ElementWidth::Bits64,
        _ => ElementWidth::Bits128,
    }
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
    let mut axes = plan.folded(false).axes;
    // The innermost axis moves in words as wide as its bytes allow (an RGBA u8 pixel as
    // one u32, a row of 256 f16 as 32 vec4s): fewer, wider invocations. That needs it
    // unpadded, or a constant pad whose every length and offset splits into whole words.
    let mut word = bytes;
    let inner = *axes.last().expect("at least one axis");
    if inner.is_identity() || plan.mode() == crate::Mode::Constant {
        word = [16, 8, 4]
            .into_iter()
            .find(|&w| w >= bytes && inner.fields().iter().all(|&f| (f * bytes) % w == 0))
            .unwrap_or(bytes);
        let k = word / bytes;
        let last = axes.len() - 1;
        axes[last] = inner.map_fields(|f| f / k);
        if axes.len() > 1 && axes[last].is_identity() && axes[last].in_len == 1 {
            axes.pop();
        }
    }
    let out_elems: u64 = axes.iter().map(|a| a.out_len as u64).product();
    let in_elems: u64 = axes.iter().map(|a| a.in_len as u64).product();
    if out_elems > INDEX_LIMIT || in_elems > INDEX_LIMIT {
        return Err(too_large(format!(
            "{} input and {} output elements; the GPU path indexes fewer than 2^31 words",
            plan.in_len(),
            plan.out_len()
        )));
    }
    let rank = axes.len();
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
        div: [[0; 4]; MAX_RANK],
        period: [[0; 4]; MAX_RANK],
    };
    if let Constant::Bytes(b) = plan.constant() {
        // The constant repeated to fill one word.
        let c: Vec<u8> = b.iter().copied().cycle().take(word).chain(std::iter::repeat(0)).take(16).collect();
        params.constant = bytemuck::pod_read_unaligned(&c);
    }
    // The uniform holds axes innermost first, so the hot fields sit at constant indices.
    let one_period = axes.iter().all(|a| {
        let limit = match plan.mode() {
            crate::Mode::Reflect if a.kept < 2 => 0,
            crate::Mode::Reflect => a.kept - 1,
            _ => a.kept,
        };
        a.pad_before <= limit && a.pad_after <= limit
    });
    let mut stride = 1u64;
    for (i, a) in axes.iter().rev().enumerate() {
        let period = match plan.mode() {
            crate::Mode::Wrap => a.kept as u64,
            crate::Mode::Reflect if a.kept > 1 => 2 * (a.kept as u64 - 1),
            crate::Mode::Symmetric => 2 * a.kept as u64,
            _ => 1,
        }
        .max(1);
        let offset = (period - a.pad_before as u64 % period) % period;
        if a.out_len as u64 + offset >= 1 << 31 {
            return Err(too_large(format!(
                "axis {} (after merging) has {} output elements and a period of {period}; the GPU path needs their sum under 2^31",
                rank - 1 - i,
                a.out_len
            )));
        }
        params.axis[i] = [a.out_len as u32, a.pad_before as u32, a.kept as u32, a.crop_start as u32];
        let (magic, shift) = magic_divisor(a.out_len as u32);
        params.div[i] = [magic, shift, stride as u32, 0];
        let (pmagic, pshift) = magic_divisor(period as u32);
        params.period[i] = [period as u32, offset as u32, pmagic, pshift];
        stride *= a.in_len as u64;
    }

    let groups_for = |items: u64| -> Result<[u32; 2]> {
        let groups = items.div_ceil(WORKGROUP as u64).max(1);
        let x = groups.min(max_groups as u64);
        let y = groups.div_ceil(x);
        if y > max_groups as u64 {
            return Err(too_large(format!("{items} invocations exceed the device's dispatch limits")));
        }
        Ok([x as u32, y as u32])
    };

    let kernel = if word < 4 { Kernel::Narrow } else { Kernel::Wide };
    let workgroups = match kernel {
        Kernel::Narrow => {
            let per_word = 4 / word as u64;
            // Rows of whole words, counting an unpadded innermost run into the row.
            let chunked = rank >= 2 && axes[rank - 1].is_identity();
            let p = if chunked { rank - 2 } else { rank - 1 };
            let c = if chunked { axes[rank - 1].out_len as u64 } else { 1 };
            let row_elems = axes[p].out_len as u64 * c;
            let row_words = row_elems / per_word;
            let rows = out_elems / row_elems;
            let x = row_words.div_ceil(WORKGROUP as u64 * NARROW_ROW_WORDS);
            let y = rows.min(max_groups as u64);
            if row_elems.is_multiple_of(per_word) && x <= max_groups as u64 && rows.div_ceil(y) <= max_groups as u64 {
                params.grid = 10 + if chunked { 4 } else { 0 } + p.min(3) as u32;
                params.count = rows as u32;
                params.out_elems = row_words as u32;
                [x as u32, y as u32, rows.div_ceil(y) as u32]
            } else {
                let words = out_elems.div_ceil(per_word);
                params.count = words as u32;
                params.grid = (rank as u32 - 1).min(3);
                let [x, y] = groups_for(words)?;
                [x, y, 1]
            }
        }
        Kernel::Wide => {
            let inner = axes[rank - 1].out_len as u64;
            let rows = out_elems / inner;
            params.count = rows as u32;
            // Grids 1-3 give each invocation WIDE_ELEMS elements of a row.
            let x = inner.div_ceil(WORKGROUP as u64 * WIDE_ELEMS);
            if rank == 1 {
                params.grid = 0;
                let [x, y] = groups_for(inner)?;
                [x, y, 1]
            } else if inner.div_ceil(WORKGROUP as u64) > max_groups as u64 {
                params.grid = 4;
                let [x, y] = groups_for(out_elems)?;
                [x, y, 1]
            } else {
                let m2 = axes[rank - 2].out_len as u64;
                let outer: u64 = axes[..rank - 2].iter().map(|a| a.out_len as u64).product();
                if m2 <= max_groups as u64 && outer <= max_groups as u64 {
                    params.grid = if rank <= 3 { 1 } else { 2 };
                    [x as u32, m2 as u32, outer as u32]
                } else {
                    params.grid = 3;
                    let y = rows.min(max_groups as u64);
                    let z = rows.div_ceil(y);
                    if z > max_groups as u64 {
                        return Err(too_large(format!("{rows} rows exceed the device's dispatch limits")));
                    }
                    [x as u32, y as u32, z as u32]
                }
            }
        }
    };
    Ok(Launch { params, workgroups, kernel, word_bytes: word, one_period })
}

/// The shader source for one mode and width: the per-mode index function, the shared
/// prelude, the width's definitions and its main.
pub fn shader_source(mode: crate::Mode, width: ElementWidth, grid: u32, one_period: bool) -> String {
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
            "alias WORD = u32;\nconst EPW: u32 = 4u;\nconst EPW_LOG2: u32 = 2u;\nconst BITS: u32 = 8u;\nconst MASK: u32 = 0xffu;\n",
            include_str!("../../shaders/narrow.wgsl"),
        ),
        ElementWidth::Bits16 => (
            "alias WORD = u32;\nconst EPW: u32 = 2u;\nconst EPW_LOG2: u32 = 1u;\nconst BITS: u32 = 16u;\nconst MASK: u32 = 0xffffu;\n",
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
    let common = include_str!("../../shaders/common.wgsl");
    format!("const GRID: u32 = {grid}u;\nconst ONE_PERIOD: bool = {one_period};\n{defs}\n{common}\n{mode_src}\n{main}")
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
        let l =
            launch(&plan(DataType::Float32, &[1, 64, 512, 512], &[0, 0, 1, 1, 0, 0, 1, 1], Mode::Edge), 65535).unwrap();
        assert_eq!(l.kernel, Kernel::Wide);
        assert_eq!(l.params.grid, 1);
        assert_eq!(l.workgroups, [5, 514, 64]);
        assert_eq!(l.params.axis[0], [514, 1, 512, 0]);
        assert_eq!([l.params.div[0][2], l.params.div[1][2], l.params.div[2][2]], [1, 512, 512 * 512]);
        // edge has no period; reflect's offset puts o = 0 at position p mod 2(n-1) = 1022 - 1.
        let r = launch(&plan(DataType::Float32, &[1, 64, 512, 512], &[0, 0, 1, 1, 0, 0, 1, 1], Mode::Reflect), 65535)
            .unwrap();
        assert_eq!(&r.params.period[0][..2], &[1022, 1021]);
        assert_eq!(l.word_bytes, 4);
    }

    #[test]
    fn unpadded_inner_axes_move_as_wide_words() {
        // RGBA u8: one u32 per pixel, on the wide kernel.
        let l = launch(&plan(DataType::Uint8, &[1, 64, 64, 4], &[0, 2, 2, 0, 0, 2, 2, 0], Mode::Edge), 65535).unwrap();
        assert_eq!((l.kernel, l.word_bytes, l.params.rank), (Kernel::Wide, 4, 2));
        assert_eq!(l.params.axis[0], [68, 2, 64, 0]);
        // 256 f16 per row: 32 vec4 words.
        let l = launch(&plan(DataType::Float16, &[8, 4096, 256], &[0, 3, 0, 0, 5, 0], Mode::Reflect), 65535).unwrap();
        assert_eq!((l.word_bytes, l.params.rank), (16, 3));
        assert_eq!(l.params.axis[0], [32, 0, 32, 0]);
        // 3 bytes per pixel split into no word: u8 stays per byte, in rows of whole words
        // (12 pixels of 3 bytes: 9 words), one axis above.
        let l = launch(&plan(DataType::Uint8, &[9, 10, 3], &[1, 1, 0, 1, 1, 0], Mode::Wrap), 65535).unwrap();
        assert_eq!((l.kernel, l.word_bytes, l.params.grid), (Kernel::Narrow, 1, 15));
        assert_eq!((l.params.count, l.params.out_elems), (11, 9));
        // Rows that are not whole words: the per-word walk.
        let l = launch(&plan(DataType::Uint8, &[9, 9, 3], &[1, 1, 0, 1, 1, 0], Mode::Wrap), 65535).unwrap();
        assert_eq!((l.kernel, l.params.grid), (Kernel::Narrow, 2));
        // The constant fills the whole word.
        let v = crate::Tensor::from_slice(DataType::Uint16, vec![], &[0xabcdu16]).unwrap();
        let p = PadPlan::new(DataType::Uint16, &[4, 2], &PadRequest::new(vec![1, 0, 0, 0]).constant(v)).unwrap();
        let l = launch(&p, 65535).unwrap();
        assert_eq!((l.word_bytes, l.params.constant[0]), (4, 0xabcd_abcd));
        assert_eq!((l.params.rank, l.params.axis[0]), (1, [5, 1, 4, 0]));
        // A constant pad of odd bytes stays per element.
        let p = PadPlan::new(DataType::Uint8, &[4, 2], &PadRequest::new(vec![0, 1, 0, 0])).unwrap();
        assert_eq!(launch(&p, 65535).unwrap().word_bytes, 1);
    }

    #[test]
    fn magic_division_is_exact() {
        let mut divisors: Vec<u32> = (1..=1000).collect();
        divisors.extend([1023, 1024, 1025, 65535, 65536, 65537, 1 << 20, (1 << 30) + 1, (1 << 31) - 1, 1 << 31]);
        for &d in &divisors {
            let m = magic_divisor(d);
            let edges = [0u32, 1, d - 1, d, d + 1, 2 * d.min(1 << 29) - 1, (1 << 31) - 1, (1 << 31) - 2];
            let mut n = 12345u32;
            for k in edges.into_iter().chain((0..200).map(|_| {
                n = n.wrapping_mul(1_103_515_245).wrapping_add(12345);
                n >> 1
            })) {
                if k < 1 << 31 {
                    assert_eq!(divide(k, m), k / d, "{k} / {d}");
                }
            }
        }
    }

    #[test]
    fn long_outputs_use_two_dimensions() {
        let l = launch(&plan(DataType::Uint8, &[1 << 26], &[1, 1], Mode::Wrap), 65535).unwrap();
        assert_eq!(l.kernel, Kernel::Narrow);
        let [x, y, _] = l.workgroups;
        assert!(x as u64 * y as u64 * 64 * 4 >= (1 << 26) + 2);
        let l = launch(&plan(DataType::Uint8, &[70000, 70000], &[0, 1, 0, 1], Mode::Constant), 65535);
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
                let s = shader_source(mode, w, 1, false);
                assert!(s.contains("fn source_coord") && s.contains("fn main"));
            }
        }
    }
}
