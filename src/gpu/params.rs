//! The uniform parameters of one dispatch, each kind's (a pad's `Params`, an interior pad's
//! `InteriorParams`, a gradient's `BackParams`: [`Uniform`]) declared once for Rust and WGSL
//! (`uniform!`), and the constants both sides share (written into the WGSL prelude as
//! declarations, [`declare`], by shader.rs and each kernel's constants table, never repeated
//! as literals in the shaders).

/// Axes a dispatch holds after merging unpadded ones.
pub const MAX_RANK: usize = 16;
/// Invocations per workgroup (`@workgroup_size` in the shaders).
pub(crate) const WORKGROUP: u32 = 64;
/// Elements of a row per invocation in the wide kernel, a grid width apart (so a SIMD
/// group's lanes stay on neighbouring words). Many per invocation amortise the row's
/// offsets; the loop leaves at the row's end, so short rows cost no more.
pub(crate) const WIDE_ELEMS: u32 = 16;
/// Words of a long row per invocation at most in the narrow kernel's rows, a grid width apart
/// (so a SIMD group's lanes store neighbouring words): finding a row (its offsets, the mode on
/// the axes above) is paid once for up to this many words. Rows of up to a workgroup's words
/// take a lane a word instead.
pub(crate) const NARROW_ROW_WORDS: u32 = 32;
/// Words per invocation in the narrow kernel's per-word path (rows too short to walk), a
/// workgroup's width apart so that a SIMD group's lanes store neighbouring words; each
/// finds its row by division.
pub(crate) const NARROW_WORD_RUN: u32 = 16;
/// Largest index the shaders divide (magic division is exact below 2^31).
pub(crate) const INDEX_LIMIT: u64 = (1 << 31) - 8;

/// Declares a uniform struct once: the Rust struct (`repr(C)`, `Pod`) and its WGSL
/// declaration (`WGSL`, written into the shader prelude), field by field, so that the two
/// cannot name or order a field differently. `layout_matches_the_wgsl_struct` checks the
/// offsets and sizes WGSL's layout rules give against Rust's.
macro_rules! uniform {
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident: $ty:ty => $wgsl:literal,)* }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
        pub(crate) struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl $name {
            /// The struct's WGSL declaration.
            pub(crate) const WGSL: &'static str =
                concat!("struct ", stringify!($name), " {\n", $("    ", stringify!($field), ": ", $wgsl, ",\n",)* "}\n");

            /// Its fields as (name, offset, size), for the layout test.
            #[cfg(test)]
            pub(crate) fn fields() -> Vec<(String, u32, u32)> {
                vec![$((stringify!($field).to_string(), std::mem::offset_of!($name, $field) as u32, std::mem::size_of::<$ty>() as u32),)*]
            }
        }
    };
}

uniform! {
    /// One axis of a dispatch, innermost first in [`Params::axes`]. Coordinates are global
    /// (over the whole output); a window covers `[start, start + len)`.
    AxisParams {
        pad_before: u32 => "u32",
        kept: u32 => "u32",
        crop_start: u32 => "u32",
        /// First output coordinate of the window on this axis.
        start: u32 => "u32",
        /// Window length on this axis.
        len: u32 => "u32",
        /// Magic multiplier and shift dividing by `len` (`MAGIC_DIVIDE_BY_ONE`: `len == 1`).
        len_magic: u32 => "u32",
        len_shift: u32 => "u32",
        /// Element strides of the input and output views, in moved words.
        in_stride: u32 => "u32",
        out_stride: u32 => "u32",
        /// The mode's period (1 for constant and edge), an offset making
        /// `(o + period_offset) mod period` the position in the period, and its magic divisor.
        period: u32 => "u32",
        period_offset: u32 => "u32",
        period_magic: u32 => "u32",
        period_shift: u32 => "u32",
        _pad0: u32 => "u32",
        _pad1: u32 => "u32",
        _pad2: u32 => "u32",
    }
}

uniform! {
    /// The uniform buffer's contents.
    Params {
        rank: u32 => "u32",
        /// Rows of the window (the wide kernel's rows along axis 0, the narrow kernel's rows
        /// of whole words), or the output words it covers (the narrow kernel per word).
        count: u32 => "u32",
        /// Narrow kernel: the window's first output element, counted from the binding's start.
        first: u32 => "u32",
        /// Narrow kernel: the window's output elements.
        elems: u32 => "u32",
        /// Offsets of coordinate (0, …, 0) into the input and output bindings, in moved
        /// words; wrapping (a window's binding starts past the tensor's start).
        in_base: u32 => "u32",
        out_base: u32 => "u32",
        /// Narrow kernel: rows along axes below `row_first` (1 or 2), each owning at most
        /// `row_words` words (the words that start in it); `row_words` [`ROW_WORDS_NONE`]
        /// for the per-word path.
        row_first: u32 => "u32",
        row_words: u32 => "u32",
        /// Rows one workgroup takes (1 where a row needs more than half a workgroup).
        pack: u32 => "u32",
        /// Narrow kernel's rows: invocations per row (the whole grid width for unpacked rows)
        /// and the magic multiplier and shift dividing by it.
        row_lanes: u32 => "u32",
        lanes_magic: u32 => "u32",
        lanes_shift: u32 => "u32",
        /// The constant's bits, repeated to fill a word (narrow words: one element).
        constant: [u32; 4] => "vec4<u32>",
        /// Innermost first: axis 0 is the row.
        axes: [AxisParams; MAX_RANK] => "array<AxisParams, MAX_RANK>",
    }
}

uniform! {
    /// One axis of the pad's gradient (`shaders/backward.wgsl`), outermost first in
    /// [`BackParams::axes`]: the gradient of the input (`grad_in`, the dispatch's output) is
    /// `in_len` long on it, the gradient of the pad's output (`grad_out`, read) `out_len`.
    BackAxis {
        in_len: u32 => "u32",
        /// Magic multiplier and shift dividing by `in_len`.
        in_magic: u32 => "u32",
        in_shift: u32 => "u32",
        out_len: u32 => "u32",
        pad_before: u32 => "u32",
        kept: u32 => "u32",
        crop_start: u32 => "u32",
        /// The mode's period along the axis, and its magic divisor.
        period: u32 => "u32",
        period_magic: u32 => "u32",
        period_shift: u32 => "u32",
        /// Element strides of `grad_out` and `grad_in`.
        out_stride: u32 => "u32",
        in_stride: u32 => "u32",
        /// 1 where the axis is padded or cropped (its images are summed), 0 where it passes through.
        touched: u32 => "u32",
        /// The kept indices `[run_start, run_start + run_len)` have one image each, their kept
        /// position (`adjoint::one_image_run`): their lists need no arithmetic.
        run_start: u32 => "u32",
        run_len: u32 => "u32",
        _pad0: u32 => "u32",
    }
}

uniform! {
    /// The gradient's uniform: the same size as [`Params`], so that a host binds either alike.
    BackParams {
        rank: u32 => "u32",
        /// Elements of `grad_in` the dispatch writes.
        count: u32 => "u32",
        /// Offsets of element 0 of `grad_out` and `grad_in` in their bindings.
        out_base: u32 => "u32",
        in_base: u32 => "u32",
        /// The axis whose blocks a workgroup's lanes sum apart (the split pipeline).
        split_axis: u32 => "u32",
        /// A part of the sums (`gpu/backward/windows.rs`'s parts): the images of axis `part_axis`
        /// (`NO_PART`: none, the whole sums) at output positions `[part_lo, part_hi)` only,
        /// added to the sums the parts before it stored where `part_continues` is 1.
        part_axis: u32 => "u32",
        part_lo: u32 => "u32",
        part_hi: u32 => "u32",
        part_continues: u32 => "u32",
        /// Up to two axes whose window has a gap (`NO_GAP`: none), so that a border's two
        /// sides run in one dispatch (`gpu/backward/bulk.rs`): on `gap_axis`, the window's
        /// indices from `gaps.x` on lie `gaps.y` further; on `gap2_axis`, from `gaps.z` on,
        /// `gaps.w` further.
        gap_axis: u32 => "u32",
        gap2_axis: u32 => "u32",
        _pad0: u32 => "u32",
        gaps: [u32; 4] => "vec4<u32>",
        /// Outermost first.
        axes: [BackAxis; MAX_RANK] => "array<BackAxis, MAX_RANK>",
    }
}

uniform! {
    /// One axis of an interior pad (`shaders/interior.wgsl`), innermost first in
    /// [`InteriorParams::axes`]: input elements `in_first`, `in_first + 1`, … land on output
    /// places `first`, `first + step`, … within `span` places; every other place is the constant.
    InteriorAxis {
        /// The output's length on the axis, and its magic divisor.
        len: u32 => "u32",
        len_magic: u32 => "u32",
        len_shift: u32 => "u32",
        /// The output place the first landed element takes, and the places from it to the last one's end.
        first: u32 => "u32",
        span: u32 => "u32",
        /// The first input element that lands.
        in_first: u32 => "u32",
        /// Element strides of the input and output views.
        in_stride: u32 => "u32",
        out_stride: u32 => "u32",
        /// Places from one landed element to the next (the interior count plus one), and its magic divisor.
        step: u32 => "u32",
        step_magic: u32 => "u32",
        step_shift: u32 => "u32",
        _pad0: u32 => "u32",
        _pad1: u32 => "u32",
        _pad2: u32 => "u32",
        _pad3: u32 => "u32",
        _pad4: u32 => "u32",
    }
}

uniform! {
    /// The interior pad's uniform: the same size as [`Params`], so that a host binds either alike.
    InteriorParams {
        rank: u32 => "u32",
        /// Words the dispatch writes: an invocation each.
        count: u32 => "u32",
        /// 8- and 16-bit elements: element 0's place in the output binding, and the output's elements.
        first: u32 => "u32",
        elems: u32 => "u32",
        /// Offsets of element 0 in the input and output bindings (8- and 16-bit elements: in
        /// elements; wider: in u32 words).
        in_base: u32 => "u32",
        out_base: u32 => "u32",
        /// 8- and 16-bit elements: 1 where the output is rows of whole words along axis 0,
        /// each word's place found through the view; 0 where it is dense.
        word_rows: u32 => "u32",
        _pad0: u32 => "u32",
        _pad1: u32 => "u32",
        _pad2: u32 => "u32",
        _pad3: u32 => "u32",
        _pad4: u32 => "u32",
        /// The constant's bits, repeated to fill a word.
        constant: [u32; 4] => "vec4<u32>",
        /// Innermost first.
        axes: [InteriorAxis; MAX_RANK] => "array<InteriorAxis, MAX_RANK>",
    }
}

/// A dispatch's uniform, as its kind of program declares it: every kind's the same size
/// ([`Program::PARAMS_BYTES`](super::program::Program::PARAMS_BYTES)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Uniform {
    Pad(Params),
    Interior(InteriorParams),
    Gradient(BackParams),
}

impl Uniform {
    /// Its bytes, as binding 0 holds them.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Uniform::Pad(p) => bytemuck::bytes_of(p),
            Uniform::Interior(p) => bytemuck::bytes_of(p),
            Uniform::Gradient(p) => bytemuck::bytes_of(p),
        }
    }
}

#[cfg(test)]
impl Uniform {
    /// A pad's uniform (a test's look inside; any other kind fails it).
    pub(crate) fn pad(&self) -> &Params {
        match self {
            Uniform::Pad(p) => p,
            u => panic!("a pad's uniform, not {u:?}"),
        }
    }

    /// A gradient's uniform (a test's look inside; any other kind fails it).
    pub(crate) fn gradient(&self) -> &BackParams {
        match self {
            Uniform::Gradient(p) => p,
            u => panic!("a gradient's uniform, not {u:?}"),
        }
    }
}

impl BackParams {
    /// All zeros but `part_axis` and the gaps' axes: the whole sums, no gap.
    pub fn zeroed() -> BackParams {
        BackParams { part_axis: NO_PART, gap_axis: NO_GAP, gap2_axis: NO_GAP, ..bytemuck::Zeroable::zeroed() }
    }
}

/// [`BackParams::part_axis`] where a dispatch sums the whole of each element's images.
pub(crate) const NO_PART: u32 = u32::MAX;
/// [`BackParams::gap_axis`] and `gap2_axis` where a window has no gap.
pub(crate) const NO_GAP: u32 = u32::MAX;

const _: () = assert!(std::mem::size_of::<BackParams>() == std::mem::size_of::<Params>());
const _: () = assert!(std::mem::size_of::<InteriorParams>() == std::mem::size_of::<Params>());

impl Params {
    pub fn zeroed() -> Params {
        bytemuck::Zeroable::zeroed()
    }
}

/// Bytes between two windows' parameters in one uniform buffer.
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))] // used by the wgpu half
pub(crate) fn params_stride(uniform_alignment: u32) -> u64 {
    (std::mem::size_of::<Params>() as u64).next_multiple_of(uniform_alignment as u64)
}

/// The constant's bits repeated to fill a `word`-byte word (the uniform's vec4).
pub(crate) fn constant_word(plan: &crate::plan::PadPlan, word: u64) -> [u32; 4] {
    match plan.constant() {
        crate::constant::Constant::Bytes(b) => {
            let c: Vec<u8> =
                b.iter().copied().cycle().take(word as usize).chain(std::iter::repeat(0)).take(16).collect();
            bytemuck::pod_read_unaligned(&c)
        }
        crate::constant::Constant::String(_) => [0; 4],
    }
}

/// The magic multiplier that means "divide by 1": no division (`MAGIC_DIVIDE_BY_ONE` in WGSL).
pub(crate) const MAGIC_DIVIDE_BY_ONE: u32 = 0;

/// The per-word walk's `row_words` (`Params::row_words`): no rows.
pub(crate) const ROW_WORDS_NONE: u32 = 0;

/// The constants as WGSL declarations, one a line: how every constant the host gives a
/// pipeline reaches its WGSL (the shaders use them and never define them).
pub(crate) fn declare(constants: &[(&str, WgslValue)]) -> String {
    constants.iter().map(|(name, value)| format!("const {name}: {value};\n")).collect()
}

/// A WGSL constant's value, as a constants table gives it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WgslValue {
    U32(u32),
    /// A u32 written in hex (a mask).
    Hex(u32),
    Bool(bool),
    /// An f32, written so that WGSL reads back the same value (Rust's shortest round trip).
    F32(f32),
}

impl std::fmt::Display for WgslValue {
    /// The type and value as a WGSL declaration takes them: `u32 = 4u`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WgslValue::U32(v) => write!(f, "u32 = {v}u"),
            WgslValue::Hex(v) => write!(f, "u32 = {v:#x}u"),
            WgslValue::Bool(v) => write!(f, "bool = {v}"),
            WgslValue::F32(v) => write!(f, "f32 = {v:?}f"),
        }
    }
}

/// Magic multiplier and shift so that `n / d == mulhi(n, magic) >> shift` for every
/// `n < 2^31` (Granlund and Montgomery: `magic = ceil(2^(31+l) / d)`, `l = ceil(log2 d)`).
/// `d == 1` gives [`MAGIC_DIVIDE_BY_ONE`], which the shader reads as "no division".
pub(crate) fn magic_divisor(d: u32) -> (u32, u32) {
    assert!(d > 0, "division by zero");
    if d == 1 {
        return (MAGIC_DIVIDE_BY_ONE, 0);
    }
    let l = 32 - (d - 1).leading_zeros();
    let magic = (1u64 << (31 + l)).div_ceil(d as u64);
    debug_assert!(magic <= u32::MAX as u64);
    (magic as u32, l - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shader's division, on the host.
    fn divide(n: u32, (magic, shift): (u32, u32)) -> u32 {
        if magic == MAGIC_DIVIDE_BY_ONE {
            n
        } else {
            (((n as u64 * magic as u64) >> 32) as u32) >> shift
        }
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

    /// Every member of each uniform struct (a pad's, a gradient's, an interior pad's) in the generated WGSL has the offset and
    /// size of the Rust field of its name: the declarations are one (`uniform!`), and this
    /// checks that WGSL's layout rules (uniform alignment) place them where `repr(C)` does.
    // naga is not a dev-dependency under Miri (Cargo.toml), which has no use for this test.
    #[cfg(not(miri))]
    #[test]
    fn layout_matches_the_wgsl_struct() {
        use std::mem::size_of;
        let key = super::super::shader::PipelineKey::all_for(crate::Mode::Wrap, 1, Default::default())[0];
        let element = super::super::kernels::GradientElement::Float16;
        let shader = super::super::kernels::Shader::Backward { split: true, element, levels: 2, words: false };
        let gradient = super::super::shader::PipelineKey::new(crate::Mode::Wrap, 2, false, shader, false);
        let interior = super::super::kernels::Shader::Interior { narrow: true };
        let interior = super::super::shader::PipelineKey::new(crate::Mode::Constant, 1, false, interior, false);
        for src in [key.wgsl(), gradient.wgsl(), interior.wgsl()] {
            let module = naga::front::wgsl::parse_str(&src).expect("the shader parses");
            let members = |name: &str| {
                let (_, ty) = module.types.iter().find(|(_, t)| t.name.as_deref() == Some(name))?;
                let naga::TypeInner::Struct { members, span } = &ty.inner else { panic!("{name} is not a struct") };
                let mut layouter = naga::proc::Layouter::default();
                layouter.update(module.to_ctx()).unwrap();
                let list: Vec<(String, u32, u32)> =
                    members.iter().map(|m| (m.name.clone().unwrap(), m.offset, layouter[m.ty].size)).collect();
                Some((list, *span))
            };
            let structs = [
                ("AxisParams", AxisParams::fields(), size_of::<AxisParams>()),
                ("Params", Params::fields(), size_of::<Params>()),
                ("BackAxis", BackAxis::fields(), size_of::<BackAxis>()),
                ("BackParams", BackParams::fields(), size_of::<BackParams>()),
                ("InteriorAxis", InteriorAxis::fields(), size_of::<InteriorAxis>()),
                ("InteriorParams", InteriorParams::fields(), size_of::<InteriorParams>()),
            ];
            let mut found = 0;
            for (name, fields, size) in structs {
                if let Some(got) = members(name) {
                    assert_eq!(got, (fields, size as u32), "{name}");
                    found += 1;
                }
            }
            assert_eq!(found, 2, "each shader declares its two structs");
        }
    }
}
