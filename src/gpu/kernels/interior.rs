//! Interior padding's kernel (`shaders/interior*.wgsl`): its own pipelines, so that the default
//! kernels' WGSL has no branch for it. One invocation per output word: per u32 word of an
//! element for 32-bit and wider types (any strides), per u32 word of the dense output for 8-
//! and 16-bit ones, each element found on its own by division. The layout is `gpu/interior.rs`.

use crate::gpu::params::WgslValue;

const SOURCE: &str = include_str!("../../../shaders/interior.wgsl");

/// The pipelines' constants for elements of `elem` bytes.
pub(super) fn constants(elem: u8) -> Vec<(&'static str, WgslValue)> {
    match elem {
        1 | 2 => vec![
            ("ELEMS_PER_WORD", WgslValue::U32(4 / elem as u32)),
            ("ELEM_BITS", WgslValue::U32(8 * elem as u32)),
            ("ELEM_MASK", WgslValue::Hex(((1u64 << (8 * elem)) - 1) as u32)),
        ],
        _ => vec![("ELEM_WORDS", WgslValue::U32(elem as u32 / 4))],
    }
}

/// The kernel's WGSL: the source of an output element, then the entry point for the width.
pub(super) fn wgsl(narrow: bool) -> String {
    let main = match narrow {
        true => include_str!("../../../shaders/interior_narrow.wgsl"),
        false => include_str!("../../../shaders/interior_wide.wgsl"),
    };
    [SOURCE, main].join("\n")
}
