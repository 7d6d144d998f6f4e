//! The pad's gradient's pipeline pieces (`gpu/backward/` builds its programs; `PipelineKey::wgsl`
//! assembles them as every kernel's): its uniform and bindings, its constants, the element
//! type's loads, stores and rounded addition, and `shaders/backward.wgsl` (the mode's list of
//! an index's images is `Mode::wgsl`'s).

use crate::adjoint::{BLOCK, MAX_BLOCKS};
use crate::cpu::float8::Float8;
use crate::dtype::DataType;
use crate::gpu::params::{BackAxis, BackParams, WgslValue};
use crate::mode::Mode;

/// The element type of a gradient pipeline: what its sums round to at every addition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum GradientElement {
    Float32,
    Float16,
    Bfloat16,
    /// A float8 type but float8e8m0 (which has no zero to start a sum from).
    Float8(crate::DataType),
}

impl GradientElement {
    /// The gradient pipeline's element for `dtype`, where the GPU takes its gradient.
    pub(crate) fn of(dtype: crate::DataType) -> Option<GradientElement> {
        match dtype {
            crate::DataType::Float32 => Some(GradientElement::Float32),
            crate::DataType::Float16 => Some(GradientElement::Float16),
            crate::DataType::Bfloat16 => Some(GradientElement::Bfloat16),
            dtype => crate::cpu::float8::Float8::new(dtype).map(|_| GradientElement::Float8(dtype)),
        }
    }

    /// Bytes an element.
    pub(crate) fn bytes(self) -> u64 {
        match self {
            GradientElement::Float32 => 4,
            GradientElement::Float16 | GradientElement::Bfloat16 => 2,
            GradientElement::Float8(_) => 1,
        }
    }

    /// For a pipeline's label.
    pub(crate) fn name(self) -> &'static str {
        match self {
            GradientElement::Float32 => "float32",
            GradientElement::Float16 => "float16",
            GradientElement::Bfloat16 => "bfloat16",
            GradientElement::Float8(dtype) => dtype.name(),
        }
    }
}

/// The uniform's structs.
pub(super) fn structs() -> String {
    format!("{}{}", BackAxis::WGSL, BackParams::WGSL)
}

/// The bindings: f32 elements a word each; 16- and 8-bit ones packed into words, stored by
/// atomics.
pub(super) fn bindings(element: GradientElement) -> String {
    let (src_words, words) = match element {
        GradientElement::Float32 => ("array<f32>", "array<f32>"),
        _ => ("array<u32>", "array<atomic<u32>>"),
    };
    format!(
        "@group(0) @binding(0) var<uniform> P: BackParams;\n\
         @group(0) @binding(1) var<storage, read_write> src: {src_words};\n\
         @group(0) @binding(2) var<storage, read_write> dst: {words};\n"
    )
}

/// The kernel's constants for `mode` and `element`, its state sized for `levels` axes of
/// several images.
pub(super) fn constants(
    mode: Mode,
    split: bool,
    element: GradientElement,
    levels: u8,
    words: bool,
) -> Vec<(&'static str, WgslValue)> {
    let mut c = vec![
        ("MAX_LEVELS", WgslValue::U32(levels.into())),
        ("BLOCK", WgslValue::U32(BLOCK as u32)),
        ("MAX_BLOCKS", WgslValue::U32(MAX_BLOCKS as u32)),
        ("MIRROR", WgslValue::U32(mode.wgsl().gradient_mirror)),
        ("SPLIT", WgslValue::Bool(split)),
        ("WORDS", WgslValue::Bool(words)),
        ("NO_PART", WgslValue::U32(crate::gpu::params::NO_PART)),
    ];
    match element {
        GradientElement::Float32 => {}
        GradientElement::Float16 | GradientElement::Bfloat16 => c.push(("ELEMENT_BITS", WgslValue::U32(16))),
        GradientElement::Float8(dtype) => {
            c.push(("ELEMENT_BITS", WgslValue::U32(8)));
            c.extend(float8_constants(dtype));
        }
    }
    c
}

/// The element's loads, stores, copy and rounded addition (16- and 8-bit ones: the type's
/// conversions, then `packed.wgsl`).
pub(super) fn element_code(element: GradientElement) -> String {
    let packed =
        |conversions: &str| format!("{conversions}\n{}", include_str!("../../../shaders/backward/packed.wgsl"));
    match element {
        GradientElement::Float32 => "fn load_src(i: u32) -> f32 {\n    return src[i];\n}\n\n\
             fn store_dst(i: u32, v: f32) {\n    dst[i] = v;\n}\n\n\
             fn load_dst(i: u32) -> f32 {\n    return dst[i];\n}\n\n\
             fn copy_element(i: u32, j: u32) {\n    dst[i] = src[j];\n}\n\n\
             fn add_in_type(a: f32, b: f32) -> f32 {\n    return add_f32(a, b);\n}\n\n\
             fn word_on_lane(w: u32) {\n    element_on_lane(w);\n}\n"
            .to_string(),
        GradientElement::Float16 => packed(include_str!("../../../shaders/backward/float16.wgsl")),
        GradientElement::Bfloat16 => packed(include_str!("../../../shaders/backward/bfloat16.wgsl")),
        GradientElement::Float8(_) => packed(include_str!("../../../shaders/backward/float8.wgsl")),
    }
}

/// The kernel: its sums and entry point.
pub(super) const KERNEL: &str = include_str!("../../../shaders/backward.wgsl");

/// A float8 type's constants for `shaders/backward/float8.wgsl`: its mantissa bits and exponent
/// bias, whether it is an fnuz type (0x80 its NaN, no -0) or has infinities, and its rounding's
/// overflow boundary and NaN, these two taken from the CPU path's arithmetic (`cpu::float8`).
fn float8_constants(dtype: DataType) -> Vec<(&'static str, WgslValue)> {
    let f8 = Float8::new(dtype).expect("a float8 type with a gradient");
    let (mantissa, bias, fnuz) = match dtype {
        DataType::Float8e4m3fn => (3, 7, false),
        DataType::Float8e4m3fnuz => (3, 8, true),
        DataType::Float8e5m2 => (2, 15, false),
        DataType::Float8e5m2fnuz => (2, 16, true),
        other => unreachable!("{other} is not a float8 type with a gradient"),
    };
    let (boundary, max_keeps_tie) = f8.boundary();
    vec![
        ("F8_MANTISSA", WgslValue::U32(mantissa)),
        ("F8_BIAS", WgslValue::U32(bias)),
        ("F8_FNUZ", WgslValue::Bool(fnuz)),
        ("F8_INFINITY", WgslValue::Bool(f8.overflows_to_infinity())),
        ("F8_NAN", WgslValue::U32(u32::from(f8.nan()))),
        ("F8_BOUNDARY", WgslValue::F32(boundary)),
        ("F8_MAX_KEEPS_TIE", WgslValue::Bool(max_keeps_tie)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gradient's pipelines are valid WGSL, every mode, element type and size of state.
    #[cfg(not(miri))]
    #[test]
    fn every_gradient_shader_is_valid_wgsl() {
        let elements: Vec<GradientElement> = DataType::ALL.iter().filter_map(|&t| GradientElement::of(t)).collect();
        assert_eq!(elements.len(), 7, "float32, float16, bfloat16 and four float8s: {elements:?}");
        for mode in Mode::ALL {
            let splits = [false, true].into_iter().flat_map(|s| elements.iter().map(move |&e| (s, e)));
            let shapes = splits.flat_map(|k| [1, 2, 4, 8, 16].map(|l| (k, l)));
            for (((split, element), levels), words) in shapes.flat_map(|k| [(k, false), (k, true)]) {
                let shader = super::super::Shader::Backward { split, element, levels, words };
                let key = crate::gpu::shader::PipelineKey::new(mode, element.bytes() as u8, false, shader, false);
                let src = key.wgsl();
                let what = format!("{mode} {element:?} split {split} levels {levels} words {words}");
                let module =
                    naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(&src)));
                naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
                    .validate(&module)
                    .unwrap_or_else(|e| panic!("{what}: {e:?}"));
                assert_no_constant_non_finite_bitcast(&module, &what);
            }
        }
    }

    /// naga accepts, and Chromium's WGSL compiler refuses, a constant expression whose value is
    /// not finite: `bitcast<f32>` of a constant holding a NaN's or an infinity's bits (naga
    /// leaves the bitcast unevaluated, so this looks for it).
    #[cfg(not(miri))]
    fn assert_no_constant_non_finite_bitcast(module: &naga::Module, what: &str) {
        let functions = module.functions.iter().map(|(_, f)| f).chain(module.entry_points.iter().map(|e| &e.function));
        for f in functions {
            for (_, e) in f.expressions.iter() {
                let naga::Expression::As { expr, kind: naga::ScalarKind::Float, convert: None } = *e else { continue };
                let naga::Expression::Constant(c) = f.expressions[expr] else { continue };
                if let naga::Expression::Literal(naga::Literal::U32(bits)) =
                    module.global_expressions[module.constants[c].init]
                {
                    assert!(
                        f32::from_bits(bits).is_finite(),
                        "{what}: bitcast<f32> of constant {:?}: {bits:#x}",
                        module.constants[c].name
                    );
                }
            }
        }
    }
}
