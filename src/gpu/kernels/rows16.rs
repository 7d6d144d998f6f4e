//! The host half of `shaders/rows16.wgsl` (the `rows16` kernel variant): a row's interior in
//! 16-byte words, for elements of 1, 2, 4 or 8 bytes whose rows the flat grid cannot widen
//! (8- and 16-bit types; f32 rows 4 or 12 bytes off 16). Output and input are bound as
//! `vec4<u32>` words: a binding starts on a 16-byte boundary and holds its last word whole,
//! so a pad takes this kernel only where its output is dense, its rows at least two words
//! long, and its bindings so rounded still lie inside both buffers (else the default's
//! kernels run it: the layout lays it out again).
//!
//! The window (one contiguous run of the dense output, from element `first` of its binding)
//! is a flat range of 16-byte words: workgroup `b` takes words `[b * 4W, (b + 1) * 4W)` of
//! it (`W` lanes a workgroup), lane `l` the four at `l + u * W`, all loads before their
//! stores. A lane divides once to find its first word's row and then steps (`step` elements
//! a word: a whole-row step and a remainder, one compare), walking the row's offsets again
//! only where the row changes. Rows run along axis 0, or along axes 0 and 1 where axis 0 is a
//! whole unpadded run (`row_first` 1 or 2), as the narrow kernel's rows do.

use super::narrow::ROWS;
use crate::gpu::params::{magic_divisor, Params, WgslValue, INDEX_LIMIT, WORKGROUP};
use crate::gpu::window::{Axis, WindowShape};

/// Words a lane takes, a workgroup's width apart.
pub(super) const WORDS_A_LANE: u32 = 4;

/// Bytes of a bound word: bindings start on, and end at, multiples of it.
pub(super) const WORD: u64 = 16;

/// Whether a pad moving `word`-byte elements into `axes` (merged, innermost last) on a dense
/// output may take this kernel: elements under 16 bytes, rows of two words at least.
pub(super) fn applies(word: u64, axes: &[Axis], dense_output: bool) -> bool {
    let inner = axes[axes.len() - 1];
    let whole_run = axes.len() >= 2 && inner.map.is_identity();
    let row = inner.map.out_len as u64 * if whole_run { axes[axes.len() - 2].map.out_len as u64 } else { 1 };
    dense_output && word < WORD && row * word >= 2 * WORD
}

/// Rows of a window: along axes 0 and 1 (2) where axis 0 is a whole unpadded run, else axis 0 (1).
fn row_first(s: &WindowShape) -> usize {
    if s.inner_is_whole_run() {
        2
    } else {
        1
    }
}

/// Whether a window of this shape fits: its elements, its bytes (the shader's byte offsets
/// are u32) and a lane's furthest step within the range the shader divides, its workgroups
/// within the grid.
pub(super) fn fits(s: &WindowShape, word: u64) -> bool {
    let elems = s.elems();
    let words = (elems * word).div_ceil(WORD) + 1;
    let reach = (WORKGROUP * WORDS_A_LANE) as u64 * (WORD / word);
    let groups = words.div_ceil((WORKGROUP * WORDS_A_LANE) as u64);
    elems + reach <= INDEX_LIMIT && elems * word + WORD <= INDEX_LIMIT && groups <= s.max_groups * s.max_groups
}

/// Sets the window's parameters (`first`: its first element from the binding's start, which
/// is a multiple of [`WORD`] bytes) and returns its workgroup counts.
pub(super) fn grid(s: &WindowShape, params: &mut Params, word: u64, first: u64) -> [u32; 3] {
    let epw = WORD / word;
    let f = row_first(s);
    let row = (0..f).map(|d| s.len(d)).product::<u64>();
    params.first = first as u32;
    params.elems = s.elems() as u32;
    params.row_first = f as u32;
    params.row_words = row as u32;
    (params.lanes_magic, params.lanes_shift) = magic_divisor(row as u32);
    let words = (first + s.elems()).div_ceil(epw) - first / epw;
    params.count = words as u32;
    let groups = words.div_ceil((WORKGROUP * WORDS_A_LANE) as u64);
    let x = groups.min(s.max_groups).max(1);
    [x as u32, groups.div_ceil(x) as u32, 1]
}

/// The pipeline's constants (`word`: the element's bytes).
pub(super) fn constants(word: u8) -> Vec<(&'static str, WgslValue)> {
    let bits = 8 * word.min(4) as u32;
    vec![
        ("ELEM", WgslValue::U32(word as u32)),
        ("EPW16", WgslValue::U32(WORD as u32 / word as u32)),
        ("MASK", WgslValue::Hex(((1u64 << bits) - 1) as u32)),
    ]
}

/// The kernel's WGSL: rows' sources (shared with the narrow kernel's rows), then its own.
pub(super) fn wgsl() -> String {
    [ROWS, include_str!("../../../shaders/rows16.wgsl")].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::layout::tests::{lay_variant, plan, LIMITS};
    use crate::gpu::program::DeviceLimits;
    use crate::gpu::variant::KernelVariant;
    use crate::{DataType, Mode};

    /// rows16.wgsl's grid and cursor, run on the host: each 16-byte word a window touches has
    /// one lane, the stepped cursor is each word's element (afresh by division for the word
    /// the window starts in), windows start and end mid-word, rows of whole words and of
    /// pixels (along axes 0 and 1), on grids past `max_groups` and in small bindings.
    #[test]
    fn the_grid_covers_every_word_once_and_steps_to_its_element() {
        let small = DeviceLimits { max_binding: 1 << 10, max_groups: 7, ..LIMITS };
        let cases: [(DataType, &[usize], &[i64]); 6] = [
            (DataType::Uint8, &[4, 300], &[0, 1, 0, 2]),   // rows of 303 bytes
            (DataType::Float16, &[3, 260], &[1, 4, 0, 4]), // rows of 268 halves
            (DataType::Uint8, &[2, 40, 50, 3], &[0, 2, 2, 0, 0, 2, 2, 0]), // rows of pixels
            (DataType::Float32, &[5, 1021], &[0, 1, 0, 2]), // rows 4 bytes off 16
            (DataType::Int64, &[7, 33], &[2, 1, 0, 0]),    // 8-byte elements
            (DataType::Uint8, &[3, 9000], &[0, 5, 0, 3]),  // long rows
        ];
        let (mut mid_word_starts, mut pixel_rows, mut windows) = (0, 0, 0);
        for (dtype, shape, pads) in cases {
            for limits in [&LIMITS, &small] {
                let l = lay_variant(&plan(dtype, shape, pads, Mode::Reflect), limits, KernelVariant::Rows16);
                assert!(matches!(l.key().shader, super::super::Shader::Rows16), "{shape:?}: {:?}", l.key().shader);
                let word = l.key().word_bytes as u64;
                let epw = WORD / word;
                let (wg, lane_words) = (WORKGROUP as u64, WORDS_A_LANE as u64);
                for w in &l.dispatches {
                    windows += 1;
                    let p = w.params.pad();
                    let (first, elems, len) = (p.first as u64, p.elems as u64, p.row_words as u64);
                    assert_eq!(w.output.0 % WORD, 0, "a binding starts on a word");
                    assert_eq!(w.output.1 % WORD, 0, "a binding ends on a word");
                    mid_word_starts += usize::from(first % epw != 0);
                    pixel_rows += usize::from(p.row_first == 2);
                    let [gx, gy, gz] = w.workgroups.map(u64::from);
                    assert!(gx.max(gy) <= limits.max_groups as u64 && gz == 1, "{:?}", w.workgroups);
                    let w0 = first / epw;
                    assert_eq!(p.count as u64, (first + elems).div_ceil(epw) - w0);
                    let step = wg * epw;
                    let (drow, dx) = (step / len, step % len);
                    let mut seen = vec![0u8; p.count as usize];
                    for b in 0..gx * gy {
                        for lane in 0..wg {
                            let i = b * wg * lane_words + lane;
                            // The shader's cursor: e wraps below 0 for the word the window starts in.
                            let e = ((w0 + i) * epw).wrapping_sub(first) as u32;
                            let before = (w0 + i) * epw < first;
                            let (mut row, mut x) = if before { (0, e) } else { (e / len as u32, e % len as u32) };
                            let mut e = e;
                            for u in 0..lane_words {
                                if u > 0 {
                                    let was_before = x >= len as u32;
                                    e = e.wrapping_add(step as u32);
                                    if was_before {
                                        (row, x) = (e / len as u32, e % len as u32);
                                    } else {
                                        x += dx as u32;
                                        row += drow as u32;
                                        if x >= len as u32 {
                                            x -= len as u32;
                                            row += 1;
                                        }
                                    }
                                }
                                let k = i + u * wg;
                                if k >= p.count as u64 {
                                    continue;
                                }
                                seen[k as usize] += 1;
                                // The word's first element, where it is in the window.
                                let want = ((w0 + k) * epw).checked_sub(first);
                                match want {
                                    Some(want) => assert_eq!(
                                        (row as u64, x as u64),
                                        (want / len, want % len),
                                        "{shape:?}: the cursor of word {k}"
                                    ),
                                    None => assert_eq!((k, x as u64 + (first - w0 * epw)), (0, 1 << 32)),
                                }
                            }
                        }
                    }
                    assert!(seen.iter().all(|&n| n == 1), "{shape:?}: a word not taken once");
                }
            }
        }
        assert!(mid_word_starts > 0 && pixel_rows > 0 && windows > 12, "{mid_word_starts} {pixel_rows} {windows}");
    }

    /// The kernel takes dense outputs of elements under 16 bytes in rows of two words or
    /// more, and nothing else.
    #[test]
    fn it_takes_long_dense_rows_of_narrow_elements() {
        let key = |dtype, shape: &[usize], pads: &[i64]| {
            let l = lay_variant(&plan(dtype, shape, pads, Mode::Edge), &LIMITS, KernelVariant::Rows16);
            matches!(l.key().shader, super::super::Shader::Rows16)
        };
        assert!(key(DataType::Uint8, &[1, 1024, 1024, 3], &[0, 2, 2, 0, 0, 2, 2, 0]));
        assert!(key(DataType::Float16, &[8, 4096, 256], &[0, 0, 0, 0, 0, 8]));
        assert!(key(DataType::Float32, &[1, 64, 1024, 1024], &[0, 0, 1, 1, 0, 0, 1, 1]));
        assert!(!key(DataType::Float32, &[8, 64, 64], &[0, 1, 0, 0, 1, 0]), "16-byte words: the default's");
        assert!(!key(DataType::Uint8, &[50, 7], &[0, 1, 0, 1]), "rows of 9 bytes");
        assert!(key(DataType::Uint8, &[50, 30], &[0, 1, 0, 1]), "rows of 32 bytes");
        assert!(!key(DataType::Uint8, &[50, 29], &[0, 1, 0, 1]), "rows of 31 bytes");
    }

    /// Where a binding rounded to whole 16-byte words would pass its buffer's end, the pad
    /// runs on the default's kernels.
    #[test]
    fn bindings_past_a_buffer_fall_back_to_the_default() {
        use crate::gpu::program::BufferView;
        let p = plan(DataType::Uint8, &[3, 100], &[0, 1, 0, 2], Mode::Wrap); // 309 bytes out
        let shader = |in_size: u64, out_size: u64| {
            let (i, o) = (BufferView::dense(0, in_size), BufferView::dense(0, out_size));
            crate::gpu::layout::program(&p, &i, &o, &LIMITS, KernelVariant::Rows16).unwrap().key().shader
        };
        // 300 bytes in need 304 bound, 309 out 320.
        assert!(matches!(shader(304, 320), super::super::Shader::Rows16));
        assert!(matches!(shader(304, 312), super::super::Shader::Narrow(_)), "the output's last word");
        assert!(matches!(shader(300, 320), super::super::Shader::Narrow(_)), "the input's last word");
    }
}
