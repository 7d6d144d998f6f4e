//! The pad's gradient's pipeline WGSL (`gpu/backward.rs` builds its programs): the uniform,
//! constants and bindings, the element type's loads, stores and rounded addition, then
//! `shaders/backward.wgsl` and the mode's list of images.

use super::GradientElement;
use crate::adjoint::{BLOCK, MAX_BLOCKS};
use crate::gpu::params::{declare, BackAxis, BackParams, WgslValue, MAX_RANK};
use crate::mode::Mode;

/// The gradient pipeline's WGSL for `mode` and `element`: its uniform, constants and
/// bindings, the element's loads, stores and rounded addition, then the kernel and the mode's
/// `list` of images.
pub(crate) fn wgsl(mode: Mode, workgroup: u32, split: bool, element: GradientElement) -> String {
    let mirror = match mode {
        Mode::Reflect => 1,
        Mode::Symmetric => 2,
        _ => 0,
    };
    let constants = declare(&[
        ("MAX_RANK", WgslValue::U32(MAX_RANK as u32)),
        ("WORKGROUP", WgslValue::U32(workgroup)),
        ("MAGIC_DIVIDE_BY_ONE", WgslValue::U32(crate::gpu::params::MAGIC_DIVIDE_BY_ONE)),
        ("BLOCK", WgslValue::U32(BLOCK as u32)),
        ("MAX_BLOCKS", WgslValue::U32(MAX_BLOCKS as u32)),
        ("MIRROR", WgslValue::U32(mirror)),
        ("SPLIT", WgslValue::Bool(split)),
    ]);
    let list = match mode {
        Mode::Constant => include_str!("../../../shaders/backward/constant.wgsl"),
        Mode::Edge => include_str!("../../../shaders/backward/edge.wgsl"),
        _ => include_str!("../../../shaders/backward/periodic.wgsl"),
    };
    // f32 elements a word each; 16-bit ones two to a word, stored by atomics (half.wgsl).
    let (words, element_code) = match element {
        GradientElement::Float32 => (
            "array<f32>",
            "fn load_src(i: u32) -> f32 {\n    return src[i];\n}\n\n\
             fn store_dst(i: u32, v: f32) {\n    dst[i] = v;\n}\n\n\
             fn add_in_type(a: f32, b: f32) -> f32 {\n    return a + b;\n}\n"
                .to_string(),
        ),
        GradientElement::Float16 | GradientElement::Bfloat16 => (
            "array<atomic<u32>>",
            format!(
                "{}\n{}",
                match element {
                    GradientElement::Float16 => include_str!("../../../shaders/backward/float16.wgsl"),
                    _ => include_str!("../../../shaders/backward/bfloat16.wgsl"),
                },
                include_str!("../../../shaders/backward/half.wgsl")
            ),
        ),
    };
    let src_words = if element == GradientElement::Float32 { "array<f32>" } else { "array<u32>" };
    format!(
        "{}{}{constants}\
         @group(0) @binding(0) var<uniform> P: BackParams;\n\
         @group(0) @binding(1) var<storage, read_write> src: {src_words};\n\
         @group(0) @binding(2) var<storage, read_write> dst: {words};\n\n{element_code}\n{}\n{list}",
        BackAxis::WGSL,
        BackParams::WGSL,
        include_str!("../../../shaders/backward.wgsl")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gradient's pipelines are valid WGSL, every mode.
    #[cfg(not(miri))]
    #[test]
    fn every_gradient_shader_is_valid_wgsl() {
        use GradientElement::*;
        for mode in Mode::ALL {
            for (split, element) in [false, true].into_iter().flat_map(|s| [(s, Float32), (s, Float16), (s, Bfloat16)])
            {
                let src = wgsl(mode, 64, split, element);
                let what = format!("{mode} {element:?} split {split}");
                let module =
                    naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(&src)));
                naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
                    .validate(&module)
                    .unwrap_or_else(|e| panic!("{what}: {e:?}"));
            }
        }
    }
}
