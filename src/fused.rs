//! The pad as WGSL functions an engine's own kernel calls, so that no padded tensor is ever
//! written: a convolution (or any consumer) reads its unpadded input through
//! `{prefix}source`, which maps an output coordinate of the pad to the input element it
//! holds, or to the constant.
//!
//! Two forms of the same functions:
//! - [`wgsl`] (mode and rank fixed, shape free): the engine declares a uniform of type
//!   `{prefix}Params`, fills it with [`uniform_bytes`] per shape, and passes it. One
//!   pipeline serves every shape of that mode and rank.
//! - [`wgsl_baked`] (one plan): the same, plus `{prefix}params()` returning the plan's
//!   parameters as constants, which a compiler folds. One pipeline per shape.
//!
//! The generated text declares only names that start with the caller's prefix, has no
//! bindings and no entry point, and validates under naga when appended to another module.
//! What it declares (`p` the prefix, `R` the rank), stable across releases:
//!
//! | name | what |
//! |---|---|
//! | `const pNONE: u32` | `0xffffffff`: the constant, not an input element |
//! | `struct pAxis` | one axis, outermost first in `pParams::axes`: `pad_before`, `kept`, `crop_start`, `period`, `period_offset`, `in_stride`, `out_len` and `step` (interior padding's count plus one: every `step`-th place of the `kept` span reads the input; 1 without), all `u32` (32 bytes) |
//! | `struct pParams` | `axes: array<pAxis, R>`, then `constant: vec4<u32>`: the constant's bits, little-endian, repeated over the vector (32R + 16 bytes, uniform layout) |
//! | `fn pkept_index(o: u32, a: pAxis) -> u32` | the mode's rule on one axis: output coordinate `o` to the kept index it reads, or `pNONE` |
//! | `fn psource(p: pParams, o: array<u32, R>) -> u32` | an output coordinate to the input's flat element index (`in_stride`s: the dense input's unless the engine writes its own), or `pNONE` |
//! | `fn psource_flat(p: pParams, i: u32) -> u32` | the same from a flat (row-major) output index |
//! | `fn pparams() -> pParams` | [`wgsl_baked`] only: the plan's parameters |
//!
//! Every mode is covered, with crops (negative pads) and pads wider than the axis (the
//! periodic modes repeat their period), and constant mode's interior padding (JAX's
//! `lax.pad`: a transposed convolution reads its input dilated without writing it), bit for
//! bit as the other paths: the tests run a 3×3 convolution through it against the pad
//! followed by the same convolution.
//!
//! ```
//! use wgpu_pad::{fused, DataType, Mode, PadPlan, PadRequest};
//! let plan = PadPlan::new(DataType::Float32, &[1, 3, 64, 64], &PadRequest::new(vec![0, 0, 1, 1, 0, 0, 1, 1]).mode(Mode::Reflect))?;
//! // One pipeline for every reflect pad of rank 4: the engine binds the parameters.
//! let functions = fused::wgsl(Mode::Reflect, 4, "pad_")?;
//! let engine_kernel = format!(
//!     "{functions}
//!     @group(0) @binding(0) var<uniform> pad: pad_Params;
//!     @group(0) @binding(1) var<storage, read> x: array<f32>;
//!     @group(0) @binding(2) var<storage, read_write> y: array<f32>;
//!     @compute @workgroup_size(64)
//!     fn main(@builtin(global_invocation_id) id: vec3<u32>) {{
//!         let s = pad_source_flat(pad, id.x);
//!         var v = bitcast<f32>(pad.constant.x);
//!         if (s != pad_NONE) {{ v = x[s]; }}
//!         y[id.x] = v;
//!     }}"
//! );
//! let params: Vec<u8> = fused::uniform_bytes(&plan)?; // the uniform's contents for this shape
//! assert_eq!(params.len(), fused::uniform_size(4));
//! # let module = naga::front::wgsl::parse_str(&engine_kernel).unwrap();
//! # naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
//! #     .validate(&module)
//! #     .unwrap();
//! # Ok::<(), wgpu_pad::PadError>(())
//! ```

use std::fmt::Write;

use crate::constant::Constant;
use crate::error::{GpuLimit, PadError, Result};
use crate::mode::Mode;
use crate::plan::PadPlan;

/// The most axes the functions take (the GPU path's limit).
pub const MAX_RANK: usize = 16;

/// Bytes of `{prefix}Params` for `rank` axes: what [`uniform_bytes`] returns.
pub const fn uniform_size(rank: usize) -> usize {
    32 * rank + 16
}

/// The index functions for pads of `mode` on tensors of `rank` axes, their parameters a
/// `{prefix}Params` the engine binds ([`uniform_bytes`] fills it). `prefix` starts every
/// name declared (letters, digits and `_`, not starting with a digit or `__`).
pub fn wgsl(mode: Mode, rank: usize, prefix: &str) -> Result<String> {
    check_prefix(prefix)?;
    check_rank(rank)?;
    Ok(functions(mode, rank, prefix))
}

/// [`wgsl`] for `plan`'s mode and rank, plus `{prefix}params()`, which returns the plan's
/// parameters as constants: no uniform to bind, one pipeline per shape.
pub fn wgsl_baked(plan: &PadPlan, prefix: &str) -> Result<String> {
    check_prefix(prefix)?;
    let axes = axes(plan)?;
    let mut s = functions(plan.mode(), axes.len(), prefix);
    let constant = constant_bits(plan)?;
    let list =
        axes.iter().map(|a| format!("{prefix}Axis({})", a.map(|v| format!("{v}u")).join(", "))).collect::<Vec<_>>();
    let _ = write!(
        s,
        "fn {prefix}params() -> {prefix}Params {{\n    return {prefix}Params(array<{prefix}Axis, {}>({}), vec4<u32>({}));\n}}\n",
        axes.len(),
        list.join(", "),
        constant.map(|c| format!("{c:#x}u")).join(", ")
    );
    Ok(s)
}

/// The contents of `{prefix}Params` for `plan`, [`uniform_size`] bytes, little-endian.
pub fn uniform_bytes(plan: &PadPlan) -> Result<Vec<u8>> {
    let axes = axes(plan)?;
    let mut words: Vec<u32> = axes.iter().flatten().copied().collect();
    words.extend(constant_bits(plan)?);
    Ok(words.iter().flat_map(|w| w.to_le_bytes()).collect())
}

/// The constant's bits repeated over a vec4 (the plan's type up to 128 bits).
fn constant_bits(plan: &PadPlan) -> Result<[u32; 4]> {
    let unsupported = |reason: &str| PadError::Unsupported { dtype: plan.dtype().name(), reason: reason.into() };
    let bytes = match plan.constant() {
        Constant::Bytes(b) if plan.dtype().width().bytes().is_some() => b,
        _ => return Err(unsupported("the fused functions take fixed-width types of 8 bits or more")),
    };
    let c: Vec<u8> = bytes.iter().copied().cycle().take(16).collect();
    Ok(bytemuck::pod_read_unaligned(&c))
}

/// Each axis's eight words, outermost first, checked against 32-bit indices.
fn axes(plan: &PadPlan) -> Result<Vec<[u32; 8]>> {
    check_rank(plan.axes().len())?;
    let index_range = |what: String| PadError::GpuLimit { limit: GpuLimit::IndexRange, what };
    let in_elems = plan.in_shape().iter().map(|&n| n as u64).product::<u64>();
    if in_elems >= u32::MAX as u64 || plan.out_len() as u64 > u32::MAX as u64 {
        return Err(index_range(format!(
            "{in_elems} input and {} output elements; the fused functions index with u32 (input under 2^32 - 1)",
            plan.out_len()
        )));
    }
    let mode = plan.mode();
    let mut stride = 1u64;
    let mut out = vec![[0u32; 8]; plan.axes().len()];
    for (d, m) in plan.axes().iter().enumerate().rev() {
        let period = mode.period(m.kept as u64);
        if m.out_len as u64 + period >= 1 << 31 {
            return Err(index_range(format!(
                "axis {d} has {} output elements and a period of {period}; their sum must stay under 2^31",
                m.out_len
            )));
        }
        let period_offset = (period - m.pad_before as u64 % period) % period;
        let (mut pad_before, mut kept, mut crop_start, mut step) = (m.pad_before, m.kept, m.crop_start, 1);
        if plan.has_interior() {
            // Kept input elements every `step` places of the output: the span they cover.
            let l = plan.lattice(d);
            step = if l.count > 1 { l.step } else { 1 };
            (pad_before, crop_start) = (l.out_first, l.in_first);
            kept = if l.count == 0 { 0 } else { (l.count - 1) * step + 1 };
        }
        let words = [
            pad_before as u64,
            kept as u64,
            crop_start as u64,
            period,
            period_offset,
            stride,
            m.out_len as u64,
            step as u64,
        ];
        out[d] = words.map(|w| w as u32);
        stride *= plan.in_shape()[d] as u64;
    }
    Ok(out)
}

fn check_rank(rank: usize) -> Result<()> {
    if rank == 0 || rank > MAX_RANK {
        return Err(PadError::GpuLimit {
            limit: GpuLimit::Rank,
            what: format!("rank {rank}; the fused functions take 1 to {MAX_RANK} axes"),
        });
    }
    Ok(())
}

fn check_prefix(prefix: &str) -> Result<()> {
    let ok = !prefix.is_empty()
        && prefix.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !prefix.starts_with(|c: char| c.is_ascii_digit())
        && !prefix.starts_with("__");
    if !ok {
        return Err(PadError::InvalidPrefix {
            prefix: prefix.into(),
            reason: "a WGSL name's start: ASCII letters, digits and '_', not starting with a digit or \"__\"".into(),
        });
    }
    // A prefix and a suffix may spell a reserved word ("re" + "source").
    match NAMES.iter().map(|n| format!("{prefix}{n}")).find(|name| WGSL_RESERVED.contains(&name.as_str())) {
        Some(name) => Err(PadError::InvalidPrefix {
            prefix: prefix.into(),
            reason: format!("it makes `{name}`, a WGSL reserved word"),
        }),
        None => Ok(()),
    }
}

/// What the generated WGSL declares after the prefix.
const NAMES: [&str; 7] = ["Axis", "Params", "params", "source", "source_flat", "kept_index", "NONE"];

/// WGSL's keywords and reserved words (the WGSL specification's lists, as naga 30 has them).
const WGSL_RESERVED: &[&str] = &[
    "alias",
    "break",
    "case",
    "const",
    "const_assert",
    "continue",
    "continuing",
    "default",
    "diagnostic",
    "discard",
    "else",
    "enable",
    "false",
    "fn",
    "for",
    "if",
    "let",
    "loop",
    "override",
    "requires",
    "return",
    "struct",
    "switch",
    "true",
    "var",
    "while",
    "NULL",
    "Self",
    "abstract",
    "active",
    "alignas",
    "alignof",
    "as",
    "asm",
    "asm_fragment",
    "async",
    "attribute",
    "auto",
    "await",
    "become",
    "cast",
    "catch",
    "class",
    "co_await",
    "co_return",
    "co_yield",
    "coherent",
    "column_major",
    "common",
    "compile",
    "compile_fragment",
    "concept",
    "const_cast",
    "consteval",
    "constexpr",
    "constinit",
    "crate",
    "debugger",
    "decltype",
    "delete",
    "demote",
    "demote_to_helper",
    "do",
    "dynamic_cast",
    "enum",
    "explicit",
    "export",
    "extends",
    "extern",
    "external",
    "fallthrough",
    "filter",
    "final",
    "finally",
    "friend",
    "from",
    "fxgroup",
    "get",
    "goto",
    "groupshared",
    "highp",
    "impl",
    "implements",
    "import",
    "inline",
    "instanceof",
    "interface",
    "layout",
    "lowp",
    "macro",
    "macro_rules",
    "match",
    "mediump",
    "meta",
    "mod",
    "module",
    "move",
    "mut",
    "mutable",
    "namespace",
    "new",
    "nil",
    "noexcept",
    "noinline",
    "nointerpolation",
    "non_coherent",
    "noncoherent",
    "noperspective",
    "null",
    "nullptr",
    "of",
    "operator",
    "package",
    "packoffset",
    "partition",
    "pass",
    "patch",
    "pixelfragment",
    "precise",
    "precision",
    "premerge",
    "priv",
    "protected",
    "pub",
    "public",
    "readonly",
    "ref",
    "regardless",
    "register",
    "reinterpret_cast",
    "require",
    "resource",
    "restrict",
    "self",
    "set",
    "shared",
    "sizeof",
    "smooth",
    "snorm",
    "static",
    "static_assert",
    "static_cast",
    "std",
    "subroutine",
    "super",
    "target",
    "template",
    "this",
    "thread_local",
    "throw",
    "trait",
    "try",
    "type",
    "typedef",
    "typeid",
    "typename",
    "typeof",
    "union",
    "unless",
    "unorm",
    "unsafe",
    "unsized",
    "use",
    "using",
    "varying",
    "virtual",
    "volatile",
    "wgsl",
    "where",
    "with",
    "writeonly",
    "yield",
];

fn functions(mode: Mode, rank: usize, p: &str) -> String {
    let mut s = format!(
        "// wgpu-pad {mode} pad of rank {rank}, as functions (wgpu_pad::fused)\n\
         const {p}NONE: u32 = 0xffffffffu;\n\
         struct {p}Axis {{\n    pad_before: u32,\n    kept: u32,\n    crop_start: u32,\n    period: u32,\n    period_offset: u32,\n    in_stride: u32,\n    out_len: u32,\n    step: u32,\n}}\n\
         struct {p}Params {{\n    axes: array<{p}Axis, {rank}>,\n    constant: vec4<u32>,\n}}\n\
         fn {p}kept_index(o: u32, a: {p}Axis) -> u32 {{\n    let j = o - a.pad_before; // wraps past kept when o < pad_before\n    if (j < a.kept) {{\n        {}\n    }}\n    {}\n}}\n",
        mode.wgsl().fused_kept.replace("NONE", &format!("{p}NONE")),
        mode.wgsl().fused_pad.replace("NONE", &format!("{p}NONE"))
    );
    let _ = writeln!(s, "fn {p}source(p: {p}Params, o: array<u32, {rank}>) -> u32 {{\n    var src = 0u;");
    for d in 0..rank {
        let _ = writeln!(
            s,
            "    let k{d} = {p}kept_index(o[{d}], p.axes[{d}]);\n    if (k{d} == {p}NONE) {{\n        return {p}NONE;\n    }}\n    src += (p.axes[{d}].crop_start + k{d}) * p.axes[{d}].in_stride;"
        );
    }
    let _ = writeln!(s, "    return src;\n}}");
    let _ = writeln!(
        s,
        "fn {p}source_flat(p: {p}Params, i: u32) -> u32 {{\n    var o: array<u32, {rank}>;\n    var rest = i;"
    );
    for d in (1..rank).rev() {
        let _ = writeln!(s, "    o[{d}] = rest % p.axes[{d}].out_len;\n    rest = rest / p.axes[{d}].out_len;");
    }
    let _ = writeln!(s, "    o[0] = rest;\n    return {p}source(p, o);\n}}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataType, PadRequest};

    // naga is not a dev-dependency under Miri (Cargo.toml), which has no use for these.
    #[cfg(not(miri))]
    fn validate(src: &str) {
        let module = naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{}\n{src}", e.emit_to_string(src)));
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{e:?}\n{src}"));
    }

    /// The prefix check knows every name the WGSL declares, and WGSL's reserved words as naga
    /// has them: a prefix it passes never spells one.
    #[cfg(not(miri))]
    #[test]
    fn every_declared_name_is_checked_against_the_reserved_words() {
        let mut ours: Vec<&str> = WGSL_RESERVED.to_vec();
        let mut naga_list: Vec<&str> = naga::keywords::wgsl::RESERVED.to_vec();
        ours.sort_unstable();
        naga_list.sort_unstable();
        assert_eq!(ours, naga_list);
        let plan = PadPlan::new(DataType::Float32, &[2, 3], &PadRequest::new(vec![1, 0, 1, 0])).unwrap();
        let src = wgsl_baked(&plan, "q_").unwrap();
        let mut declared: Vec<String> = src
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter_map(|w| w.strip_prefix("q_"))
            .map(String::from)
            .collect();
        declared.sort_unstable();
        declared.dedup();
        let mut names: Vec<String> = NAMES.iter().map(|n| n.to_string()).collect();
        names.sort_unstable();
        assert_eq!(declared, names, "a name the WGSL declares is missing from NAMES");
    }

    /// `{p}source` of the generated WGSL, run on the host: the same words, the same rule.
    fn host_source(mode: Mode, axes: &[[u32; 8]], o: &[u32]) -> Option<u32> {
        let mut src = 0u32;
        for (a, &o) in axes.iter().zip(o) {
            let [pad_before, kept, crop_start, period, period_offset, in_stride, _, _] = *a;
            let j = o.wrapping_sub(pad_before);
            let k = match j < kept {
                true => j,
                false => crate::mode::fused_pad_on_host(mode, o, [pad_before, kept, period, period_offset])?,
            };
            src += (crop_start + k) * in_stride;
        }
        Some(src)
    }

    /// Every mode's words and rule, on crops, pads past the axis and axes of one element,
    /// give the element the plan's own index function gives, at every output coordinate.
    #[test]
    fn the_parameters_and_rule_follow_the_plan() {
        let cases: [(&[usize], &[i64]); 5] = [
            (&[3, 4], &[1, 2, 2, 1]),
            (&[2, 5], &[-1, 7, 0, 12]), // a crop, pads wider than the axis
            (&[1, 3], &[2, 0, 3, 4]),   // an axis of one
            (&[6], &[-2, -1]),          // crops only
            (&[2, 2, 3], &[1, 0, 4, 0, 3, 5]),
        ];
        for mode in Mode::ALL {
            for (shape, pads) in cases {
                let Ok(plan) = PadPlan::new(DataType::Float32, shape, &PadRequest::new(pads.to_vec()).mode(mode))
                else {
                    continue;
                };
                let axes = axes(&plan).unwrap();
                let out = plan.out_shape();
                for i in 0..plan.out_len() {
                    let mut rest = i;
                    let mut o = vec![0u32; out.len()];
                    for d in (0..out.len()).rev() {
                        o[d] = (rest % out[d]) as u32;
                        rest /= out[d];
                    }
                    let mut want = Some(0usize);
                    let mut stride = 1;
                    for d in (0..out.len()).rev() {
                        want = match (want, plan.axes()[d].source(mode, o[d] as usize)) {
                            (Some(w), Some(k)) => Some(w + k * stride),
                            _ => None,
                        };
                        stride *= plan.in_shape()[d];
                    }
                    assert_eq!(
                        host_source(mode, &axes, &o),
                        want.map(|w| w as u32),
                        "{mode} {shape:?} {pads:?} at {o:?}"
                    );
                }
            }
        }
    }

    /// Both forms, every mode, ranks 1 to 16, validate alone and inside an engine's module
    /// that declares names of its own (the prefix keeps them apart).
    #[cfg(not(miri))]
    #[test]
    fn the_functions_validate_alone_and_composed() {
        for mode in Mode::ALL {
            for rank in [1, 2, 3, 4, 16] {
                let f = wgsl(mode, rank, "pad_").unwrap();
                validate(&f);
                // Inside an engine's module: its own NONE and Params, a second pad's functions.
                let composed = format!(
                    "{f}{}\nconst NONE: u32 = 7u;\nstruct Params {{ x: u32 }}\n\
                     @group(0) @binding(0) var<uniform> pad: pad_Params;\n\
                     @group(0) @binding(1) var<storage, read_write> out: array<u32>;\n\
                     @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {{\n\
                         let q = Params(id.x);\n\
                         out[id.x] = pad_source_flat(pad, id.x) + b_kept_index(q.x, b_Axis(0u, 1u, 0u, 1u, 0u, 1u, 1u, 0u)) + NONE;\n}}\n",
                    wgsl(mode, rank, "b_").unwrap()
                );
                validate(&composed);
            }
            let plan =
                PadPlan::new(DataType::Float16, &[2, 3, 4], &PadRequest::new(vec![0, 1, 9, 0, -1, 2]).mode(mode))
                    .unwrap();
            validate(&wgsl_baked(&plan, "p").unwrap());
        }
    }

    #[test]
    fn bad_prefixes_ranks_and_types_are_refused() {
        for bad in ["", "1pad", "__pad", "pad-", "pa d", "päd"] {
            assert!(matches!(wgsl(Mode::Edge, 2, bad), Err(PadError::InvalidPrefix { .. })), "{bad:?}");
        }
        assert!(wgsl(Mode::Edge, 2, "_p9").is_ok());
        // Round six: "re" + "source" is `resource`, reserved.
        let e = wgsl(Mode::Reflect, 3, "re").unwrap_err();
        assert!(matches!(e, PadError::InvalidPrefix { .. }) && e.to_string().contains("resource"), "{e}");
        let plan = PadPlan::new(DataType::Float32, &[2], &PadRequest::new(vec![1, 1])).unwrap();
        assert!(matches!(wgsl_baked(&plan, "re"), Err(PadError::InvalidPrefix { .. })));
        assert!(matches!(wgsl(Mode::Edge, 0, "p"), Err(PadError::GpuLimit { limit: GpuLimit::Rank, .. })));
        assert!(matches!(wgsl(Mode::Edge, 17, "p"), Err(PadError::GpuLimit { limit: GpuLimit::Rank, .. })));
        let strings = PadPlan::new(DataType::String, &[2], &PadRequest::new(vec![1, 1])).unwrap();
        assert!(matches!(uniform_bytes(&strings), Err(PadError::Unsupported { .. })));
        let int4 = PadPlan::new(DataType::Int4, &[2], &PadRequest::new(vec![1, 1])).unwrap();
        assert!(matches!(wgsl_baked(&int4, "p"), Err(PadError::Unsupported { .. })));
    }

    #[test]
    fn uniform_bytes_lay_out_the_struct() {
        let v = crate::Tensor::from_slice(DataType::Uint16, vec![], &[0xabcdu16]).unwrap();
        let plan = PadPlan::new(DataType::Uint16, &[3, 5], &PadRequest::new(vec![1, -1, 0, 4]).constant(v)).unwrap();
        let b = uniform_bytes(&plan).unwrap();
        assert_eq!(b.len(), uniform_size(2));
        let w = |i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
        // Axis 0: pad 1 before, 3 kept, stride 5 (the input's row), 4 out.
        assert_eq!([w(0), w(1), w(2), w(5), w(6)], [1, 3, 0, 5, 4]);
        // Axis 1: a crop of 1, 4 kept from 1, stride 1, 8 out.
        assert_eq!([w(8), w(9), w(10), w(13), w(14)], [0, 4, 1, 1, 8]);
        assert_eq!([w(16), w(17), w(18), w(19)], [0xabcd_abcd; 4]);
    }
}
