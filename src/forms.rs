//! Building a [`PadPlan`] from each operator form: ONNX Pad-1 to Pad-24, com.microsoft
//! Pad-1, OpenVINO Pad-1 and StableHLO's `pad` (XLA's, JAX's `lax.pad`: edges and interior
//! padding). Each checks what its declared version allows (pads as an
//! attribute or an input, which modes and types, whether axes exist), since a model
//! declaring Pad-11 must not get Pad-19's wrap; then hands a [`PadRequest`] to [`PadPlan::new`].

use crate::dtype::DataType;
use crate::error::{PadError, Result};
use crate::mode::Mode;
use crate::plan::{PadPlan, PadRequest, DEFAULT_MAX_OUTPUT_BYTES};
use crate::tensor::Tensor;

/// Options shared by the operator forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormOptions {
    /// Accept modes and types that the declared version lacks (ONNX Runtime, for one, runs
    /// `wrap` in Pad-13 and Pad-18 models). Off by default.
    pub lenient: bool,
    /// Refuse outputs over this many bytes.
    pub max_output_bytes: u64,
}

impl Default for FormOptions {
    fn default() -> Self {
        FormOptions { lenient: false, max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES }
    }
}

impl FormOptions {
    /// Default options with `lenient` on.
    pub fn lenient() -> Self {
        FormOptions { lenient: true, ..Default::default() }
    }
}

/// The Pad versions ONNX defines, for an opset number (e.g. opset 17 runs Pad-13).
pub fn onnx_pad_version(opset: u32) -> u32 {
    [24, 23, 21, 19, 18, 13, 11, 2, 1].into_iter().find(|&v| v <= opset).unwrap_or(1)
}

/// `what` is not in `form`; `hint` says where it first appears or how to accept it anyway.
fn not_in_version(what: impl Into<String>, form: &str, hint: impl Into<String>) -> PadError {
    PadError::NotInVersion { what: what.into(), form: form.to_string(), hint: hint.into() }
}

const LENIENT: &str = "FormOptions::lenient accepts it";

/// Each form's modes (a mode not listed is refused unless lenient): ONNX's with the Pad
/// version that added it, com.microsoft's and OpenVINO's.
const ONNX_MODES: [(Mode, u32); 4] = [(Mode::Constant, 1), (Mode::Reflect, 1), (Mode::Edge, 1), (Mode::Wrap, 19)];
const MICROSOFT_MODES: [Mode; 3] = [Mode::Constant, Mode::Reflect, Mode::Edge];
const OPENVINO_MODES: [Mode; 4] = [Mode::Constant, Mode::Reflect, Mode::Edge, Mode::Symmetric];

/// Parses `mode` and checks it and `dtype` against ONNX Pad-`version`.
fn onnx_check(version: u32, mode: &str, dtype: DataType, opts: &FormOptions) -> Result<Mode> {
    let mode: Mode = mode.parse()?;
    let form = format!("ONNX Pad-{version}");
    if !opts.lenient {
        match ONNX_MODES.iter().find(|&&(m, _)| m == mode) {
            Some(&(_, since)) if since > version => {
                return Err(not_in_version(format!("mode {mode}"), &form, format!("added in Pad-{since}; {LENIENT}")))
            }
            Some(_) => {}
            None => {
                let whose = if OPENVINO_MODES.contains(&mode) { " (OpenVINO's)" } else { "" };
                return Err(not_in_version(
                    format!("mode {mode}"),
                    &form,
                    format!("not an ONNX mode{whose}; {LENIENT}"),
                ));
            }
        }
        let since = dtype.onnx_pad_since();
        if since > version {
            return Err(not_in_version(format!("type {dtype}"), &form, format!("added in Pad-{since}; {LENIENT}")));
        }
    }
    Ok(mode)
}

fn request(pads: Vec<i64>, mode: Mode, opts: &FormOptions) -> PadRequest {
    PadRequest::new(pads).mode(mode).max_output_bytes(opts.max_output_bytes)
}

/// ONNX Pad-1 and Pad-2, the attribute form: `pads` (Pad-1 calls it `paddings`), `mode`,
/// and `value`, a float converted to the type. `version` is 1 or 2.
///
/// ```
/// use wgpu_pad::{forms, DataType, FormOptions};
/// let plan = forms::onnx_pad_attributes(2, DataType::Float32, &[2], &[1, 1], "edge", 0.0, FormOptions::default()).unwrap();
/// assert_eq!(plan.out_shape(), &[4]);
/// ```
pub fn onnx_pad_attributes(
    version: u32,
    dtype: DataType,
    shape: &[usize],
    pads: &[i64],
    mode: &str,
    value: f32,
    opts: FormOptions,
) -> Result<PadPlan> {
    if !matches!(version, 1 | 2) {
        return Err(PadError::InvalidInput {
            form: format!("ONNX Pad-{version}"),
            input: "pads",
            reason: "only Pad-1 and Pad-2 take pads as an attribute: use onnx_pad".into(),
        });
    }
    let mode = onnx_check(version, mode, dtype, &opts)?;
    // The float attribute becomes an element by the crate's one number-to-element rule
    // (`Scalar`): nearest-even for float types, exact or refused for the others (which Pad-1
    // and Pad-2 take only under `lenient`).
    let req = request(pads.to_vec(), mode, &opts).constant(crate::Scalar::from(value).to_tensor(dtype)?);
    PadPlan::new(dtype, shape, &req)
}

/// The inputs of ONNX Pad-11 to Pad-24 besides the data: `pads` (int64), optional
/// `constant_value` and optional `axes` (int32 or int64, Pad-18 on).
#[derive(Debug, Clone, Copy)]
pub struct OnnxPadInputs<'a> {
    /// Begins then ends, 1-D (or `[1, n]`, as ONNX Runtime accepts).
    pub pads: &'a Tensor,
    /// A scalar or one-element tensor of the data's type.
    pub constant_value: Option<&'a Tensor>,
    /// The axes the pads apply to.
    pub axes: Option<&'a Tensor>,
}

impl<'a> OnnxPadInputs<'a> {
    /// Just `pads`.
    pub fn new(pads: &'a Tensor) -> Self {
        OnnxPadInputs { pads, constant_value: None, axes: None }
    }
    /// With `constant_value`.
    pub fn constant_value(self, value: &'a Tensor) -> Self {
        OnnxPadInputs { constant_value: Some(value), ..self }
    }
    /// With `axes`.
    pub fn axes(self, axes: &'a Tensor) -> Self {
        OnnxPadInputs { axes: Some(axes), ..self }
    }
}

/// Reads an integer tensor (int64, or int32 where `int32_ok`) that is 1-D, or 2-D `[1, n]`
/// where `two_d_ok`.
fn int_values(t: &Tensor, form: &str, input: &'static str, int32_ok: bool, two_d_ok: bool) -> Result<Vec<i64>> {
    let invalid = |reason: String| PadError::InvalidInput { form: form.to_string(), input, reason };
    let shape_ok = t.shape().len() == 1 || (two_d_ok && t.shape().len() == 2 && t.shape()[0] == 1);
    if !shape_ok {
        let want = if two_d_ok { "1-D or [1, n]" } else { "1-D" };
        return Err(invalid(format!("shape {:?}, expected {want}", t.shape())));
    }
    let bytes = t.bytes().unwrap_or(&[]);
    match t.dtype() {
        DataType::Int64 => Ok(bytes.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect()),
        DataType::Int32 if int32_ok => {
            Ok(bytes.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap()) as i64).collect())
        }
        other => Err(invalid(format!("type {other}, expected {}", if int32_ok { "int32 or int64" } else { "int64" }))),
    }
}

/// ONNX Pad-11 to Pad-24, the input form ([`OnnxPadInputs`]). `version` is the operator's
/// version or the model's opset (mapped with [`onnx_pad_version`]).
///
/// ```
/// use wgpu_pad::{forms, forms::OnnxPadInputs, DataType, FormOptions, Tensor};
/// let pads = Tensor::from_slice(DataType::Int64, vec![2], &[1i64, 2]).unwrap();
/// let axes = Tensor::from_slice(DataType::Int32, vec![1], &[-1i32]).unwrap();
/// let inputs = OnnxPadInputs::new(&pads).axes(&axes);
/// let plan = forms::onnx_pad(19, DataType::Uint8, &[3, 4], "wrap", inputs, FormOptions::default()).unwrap();
/// assert_eq!(plan.out_shape(), &[3, 7]);
/// // wrap arrived in Pad-19
/// assert!(forms::onnx_pad(18, DataType::Uint8, &[3, 4], "wrap", inputs, FormOptions::default()).is_err());
/// ```
pub fn onnx_pad(
    version: u32,
    dtype: DataType,
    shape: &[usize],
    mode: &str,
    inputs: OnnxPadInputs,
    opts: FormOptions,
) -> Result<PadPlan> {
    let version = onnx_pad_version(version);
    let form = format!("ONNX Pad-{version}");
    if version < 11 {
        return Err(PadError::InvalidInput {
            form,
            input: "pads",
            reason: "Pad-1 and Pad-2 take pads as an attribute: use onnx_pad_attributes".into(),
        });
    }
    let mode = onnx_check(version, mode, dtype, &opts)?;
    let pads = int_values(inputs.pads, &form, "pads", false, true)?;
    let mut req = request(pads, mode, &opts);
    if let Some(axes) = inputs.axes {
        if version < 18 && !opts.lenient {
            return Err(not_in_version("input axes", &form, format!("added in Pad-18; {LENIENT}")));
        }
        req = req.axes(int_values(axes, &form, "axes", true, false)?);
    }
    if let Some(v) = inputs.constant_value {
        req = req.constant(v.clone());
    }
    PadPlan::new(dtype, shape, &req)
}

/// com.microsoft Pad-1: `pads` int64, 1-D `[2r]` or 2-D `[1, 2r]`; `value` a scalar or a
/// one-element 1-D tensor; modes constant, reflect, edge; any type.
pub fn microsoft_pad(
    dtype: DataType,
    shape: &[usize],
    mode: &str,
    pads: &Tensor,
    value: Option<&Tensor>,
    opts: FormOptions,
) -> Result<PadPlan> {
    let form = "com.microsoft Pad-1";
    let mode: Mode = mode.parse()?;
    if !MICROSOFT_MODES.contains(&mode) && !opts.lenient {
        return Err(not_in_version(format!("mode {mode}"), form, LENIENT));
    }
    let mut req = request(int_values(pads, form, "pads", false, true)?, mode, &opts);
    if let Some(v) = value {
        if v.shape().len() > 1 {
            return Err(PadError::InvalidInput {
                form: form.into(),
                input: "value",
                reason: format!("shape {:?}, expected a scalar or one-element 1-D tensor", v.shape()),
            });
        }
        req = req.constant(v.clone());
    }
    PadPlan::new(dtype, shape, &req)
}

/// OpenVINO Pad-1: `pads_begin`, `pads_end` (int32 or int64, length r, non-negative),
/// `pad_mode` (constant, edge, reflect, symmetric), optional scalar `pad_value`.
pub fn openvino_pad(
    dtype: DataType,
    shape: &[usize],
    pad_mode: &str,
    pads_begin: &Tensor,
    pads_end: &Tensor,
    pad_value: Option<&Tensor>,
    opts: FormOptions,
) -> Result<PadPlan> {
    let form = "OpenVINO Pad-1";
    let mode: Mode = pad_mode.parse()?;
    if !OPENVINO_MODES.contains(&mode) && !opts.lenient {
        return Err(not_in_version(format!("mode {mode}"), form, LENIENT));
    }
    let begin = int_values(pads_begin, form, "pads_begin", true, false)?;
    let end = int_values(pads_end, form, "pads_end", true, false)?;
    for (input, values) in [("pads_begin", &begin), ("pads_end", &end)] {
        if values.len() != shape.len() {
            return Err(PadError::InvalidInput {
                form: form.into(),
                input,
                reason: format!("{} values for an input of rank {}", values.len(), shape.len()),
            });
        }
        if let Some(axis) = values.iter().position(|&p| p < 0) {
            return Err(PadError::InvalidInput {
                form: form.into(),
                input,
                reason: format!("axis {axis}: pad {} is negative; OpenVINO Pad-1 allows only pads >= 0", values[axis]),
            });
        }
    }
    let mut req = request([begin, end].concat(), mode, &opts);
    if let Some(v) = pad_value {
        req = req.constant(v.clone());
    }
    PadPlan::new(dtype, shape, &req)
}

/// StableHLO's `pad` (XLA's, and what JAX's `lax.pad` lowers to): `edge_padding_low`,
/// `edge_padding_high` and `interior_padding`, one value per axis of the operand, and
/// `padding_value`, a 0-D tensor of the operand's type. Checked as StableHLO's spec states:
/// the value's type is the operand's (C1), each list has one value per axis (C2),
/// `interior_padding` is not negative (C3), and no result dimension is negative (C4's shape).
/// Each refusal is a [`PadError::InvalidInput`] naming the input and the axis.
///
/// ```
/// use wgpu_pad::{cpu, forms, DataType, FormOptions, Tensor};
/// let x = Tensor::from_slice(DataType::Int32, vec![2, 3], &[1i32, 2, 3, 4, 5, 6]).unwrap();
/// let v = Tensor::from_slice(DataType::Int32, vec![], &[0i32]).unwrap();
/// let plan = forms::stablehlo_pad(x.dtype(), x.shape(), &v, &[0, 1], &[1, -1], &[1, 1], FormOptions::default()).unwrap();
/// assert_eq!(plan.out_shape(), &[4, 5]);
/// let y = cpu::pad(&plan, &x).unwrap();
/// assert_eq!(&y.as_slice::<i32>().unwrap()[..10], &[0, 1, 0, 2, 0, 0, 0, 0, 0, 0]);
/// ```
pub fn stablehlo_pad(
    dtype: DataType,
    shape: &[usize],
    padding_value: &Tensor,
    edge_padding_low: &[i64],
    edge_padding_high: &[i64],
    interior_padding: &[i64],
    opts: FormOptions,
) -> Result<PadPlan> {
    let invalid =
        |input: &'static str, reason: String| PadError::InvalidInput { form: "StableHLO pad".into(), input, reason };
    if padding_value.dtype() != dtype || !padding_value.shape().is_empty() {
        return Err(invalid(
            "padding_value",
            format!(
                "{} of shape {:?}, expected a 0-D tensor of the operand's type, {dtype} (C1)",
                padding_value.dtype(),
                padding_value.shape()
            ),
        ));
    }
    let lists = [
        ("edge_padding_low", edge_padding_low),
        ("edge_padding_high", edge_padding_high),
        ("interior_padding", interior_padding),
    ];
    for (input, values) in lists {
        if values.len() != shape.len() {
            return Err(invalid(input, format!("{} values for an operand of rank {} (C2)", values.len(), shape.len())));
        }
    }
    if let Some(axis) = interior_padding.iter().position(|&k| k < 0) {
        let k = interior_padding[axis];
        return Err(invalid("interior_padding", format!("axis {axis}: {k} is negative (C3)")));
    }
    for axis in 0..shape.len() {
        let (n, k) = (shape[axis] as i128, interior_padding[axis] as i128);
        let (low, high) = (edge_padding_low[axis], edge_padding_high[axis]);
        let dilated = n + (n - 1).max(0) * k;
        let out = dilated + low as i128 + high as i128;
        if out < 0 {
            // The side at fault: the negative one, or the one that alone crops past the axis
            // (both where each alone fits and only together they do not).
            let input = match (low < 0, high < 0) {
                (true, false) => "edge_padding_low",
                (false, true) => "edge_padding_high",
                _ if dilated + (low as i128) < 0 => "edge_padding_low",
                _ if dilated + (high as i128) < 0 => "edge_padding_high",
                _ => "edge_padding_low and edge_padding_high",
            };
            return Err(invalid(
                input,
                format!("axis {axis}: length {n} with interior {k}, low {low} and high {high} gives {out} < 0 (C4)"),
            ));
        }
    }
    let pairs: Vec<(i64, i64)> = edge_padding_low.iter().copied().zip(edge_padding_high.iter().copied()).collect();
    let req = PadRequest::from_pairs(&pairs)
        .interior(interior_padding.to_vec())
        .constant(padding_value.clone())
        .max_output_bytes(opts.max_output_bytes);
    PadPlan::new(dtype, shape, &req)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i64s(v: &[i64]) -> Tensor {
        Tensor::from_slice(DataType::Int64, vec![v.len()], v).unwrap()
    }
    const D: FormOptions = FormOptions { lenient: false, max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES };

    #[test]
    fn opset_maps_to_pad_version() {
        assert_eq!(onnx_pad_version(17), 13);
        assert_eq!(onnx_pad_version(20), 19);
        assert_eq!(onnx_pad_version(30), 24);
        assert_eq!(onnx_pad_version(10), 2);
    }

    #[test]
    fn pad_v1_and_v2_convert_value() {
        let p = onnx_pad_attributes(2, DataType::Float16, &[1], &[1, 0], "constant", 1.5, D).unwrap();
        assert_eq!(p.constant(), &crate::constant::Constant::Bytes(half::f16::from_f32(1.5).to_le_bytes().to_vec()));
        let e = onnx_pad_attributes(1, DataType::Int32, &[1], &[1, 0], "constant", 1.5, D).unwrap_err();
        assert!(e.to_string().contains("type int32 is not in ONNX Pad-1 (added in Pad-11"), "{e}");
        let p =
            onnx_pad_attributes(1, DataType::Int32, &[1], &[1, 0], "constant", 7.0, FormOptions::lenient()).unwrap();
        assert_eq!(p.constant(), &crate::constant::Constant::Bytes(7i32.to_le_bytes().to_vec()));
        assert!(onnx_pad_attributes(1, DataType::Float32, &[1], &[1, 0], "wrap", 0.0, D).is_err());
        let e = onnx_pad_attributes(11, DataType::Float32, &[1], &[1, 0], "edge", 0.0, D).unwrap_err();
        assert!(e.to_string().contains("use onnx_pad"), "{e}");
    }

    #[test]
    fn versions_gate_modes_types_and_axes() {
        let pads = i64s(&[1, 1]);
        let e = onnx_pad(13, DataType::Float32, &[2], "wrap", OnnxPadInputs::new(&pads), D).unwrap_err();
        assert!(matches!(e, PadError::NotInVersion { .. }) && e.to_string().contains("Pad-19"), "{e}");
        assert!(
            onnx_pad(13, DataType::Float32, &[2], "wrap", OnnxPadInputs::new(&pads), FormOptions::lenient()).is_ok()
        );
        assert!(onnx_pad(19, DataType::Float32, &[2], "wrap", OnnxPadInputs::new(&pads), D).is_ok());
        assert!(onnx_pad(24, DataType::Float32, &[2], "symmetric", OnnxPadInputs::new(&pads), D).is_err());
        assert!(onnx_pad(11, DataType::Bfloat16, &[2], "edge", OnnxPadInputs::new(&pads), D).is_err());
        assert!(onnx_pad(13, DataType::String, &[2], "edge", OnnxPadInputs::new(&pads), D).is_ok());
        assert!(onnx_pad(19, DataType::Int4, &[2], "edge", OnnxPadInputs::new(&pads), D).is_err());
        assert!(onnx_pad(21, DataType::Int4, &[2], "edge", OnnxPadInputs::new(&pads), D).is_ok());
        assert!(onnx_pad(21, DataType::Float4e2m1, &[2], "edge", OnnxPadInputs::new(&pads), D).is_err());
        assert!(onnx_pad(23, DataType::Float4e2m1, &[2], "edge", OnnxPadInputs::new(&pads), D).is_ok());
        assert!(onnx_pad(23, DataType::Float8e8m0, &[2], "edge", OnnxPadInputs::new(&pads), D).is_err());
        assert!(onnx_pad(24, DataType::Float8e8m0, &[2], "edge", OnnxPadInputs::new(&pads), D).is_ok());
        let axes = Tensor::from_slice(DataType::Int32, vec![1], &[0i32]).unwrap();
        assert!(onnx_pad(13, DataType::Float32, &[2], "edge", OnnxPadInputs::new(&pads).axes(&axes), D).is_err());
        assert!(onnx_pad(18, DataType::Float32, &[2], "edge", OnnxPadInputs::new(&pads).axes(&axes), D).is_ok());
        let e = onnx_pad(11, DataType::Float32, &[2], "edge", OnnxPadInputs::new(&axes), D).unwrap_err();
        assert!(e.to_string().contains("input pads: type int32, expected int64"), "{e}");
        let e = onnx_pad(11, DataType::Float32, &[2], "Edge", OnnxPadInputs::new(&pads), D).unwrap_err();
        assert!(matches!(e, PadError::InvalidMode { .. }), "{e}");
    }

    /// Each ONNX Pad version takes the types its spec lists (each version's `T` constraint,
    /// copied from ../shared/spec's onnx-pad-1-to-23.txt and onnx-pad-24.md, with
    /// float/double named float32/float64) and refuses the rest but when lenient.
    #[test]
    fn each_onnx_version_takes_its_specs_types() {
        let spec: [(u32, &str); 9] = [
            (1, "float64 float32 float16"),
            (2, "float64 float32 float16"),
            (11, "float64 float32 float16 int16 int32 int64 int8 uint16 uint32 uint64 uint8"),
            (13, "bfloat16 bool complex128 complex64 float64 float32 float16 int16 int32 int64 int8 string uint16 uint32 uint64 uint8"),
            (18, "bfloat16 bool complex128 complex64 float64 float32 float16 int16 int32 int64 int8 string uint16 uint32 uint64 uint8"),
            (19, "bfloat16 bool complex128 complex64 float64 float32 float16 int16 int32 int64 int8 string uint16 uint32 uint64 uint8"),
            (21, "bfloat16 bool complex128 complex64 float64 float32 float16 float8e4m3fn float8e4m3fnuz float8e5m2 float8e5m2fnuz int16 int32 int4 int64 int8 string uint16 uint32 uint4 uint64 uint8"),
            (23, "bfloat16 bool complex128 complex64 float64 float32 float16 float4e2m1 float8e4m3fn float8e4m3fnuz float8e5m2 float8e5m2fnuz int16 int32 int4 int64 int8 string uint16 uint32 uint4 uint64 uint8"),
            (24, "bfloat16 bool complex128 complex64 float64 float32 float16 float4e2m1 float8e4m3fn float8e4m3fnuz float8e5m2 float8e5m2fnuz float8e8m0 int16 int32 int4 int64 int8 string uint16 uint32 uint4 uint64 uint8"),
        ];
        let pads = i64s(&[1, 1]);
        for (version, listed) in spec {
            for dtype in DataType::ALL {
                let run = |opts: FormOptions| match version {
                    1 | 2 => onnx_pad_attributes(version, dtype, &[2], &[1, 1], "edge", 0.0, opts),
                    _ => onnx_pad(version, dtype, &[2], "edge", OnnxPadInputs::new(&pads), opts),
                };
                let takes = listed.split(' ').any(|t| t == dtype.name());
                assert_eq!(run(D).is_ok(), takes, "Pad-{version} {dtype}");
                // Lenient takes any (but a string in the attribute form: its value is a float).
                let string_attribute = version <= 2 && dtype == DataType::String;
                assert_eq!(run(FormOptions::lenient()).is_ok(), !string_attribute, "Pad-{version} {dtype} lenient");
            }
        }
        // Every type is in the newest version's list.
        assert!(DataType::ALL.iter().all(|t| spec[spec.len() - 1].1.split(' ').any(|n| n == t.name())));
    }

    /// Each form takes the modes its spec lists (ONNX Pad-13 and Pad-24, com.microsoft's,
    /// OpenVINO's) and refuses the others but when lenient, saying why.
    #[test]
    fn each_form_takes_its_own_modes() {
        let (pads, one) = (i64s(&[1, 1]), Tensor::from_slice(DataType::Int64, vec![1], &[1i64]).unwrap());
        let lists: [(&str, &[&str]); 4] = [
            ("ONNX Pad-13", &["constant", "reflect", "edge"]),
            ("ONNX Pad-24", &["constant", "reflect", "edge", "wrap"]),
            ("com.microsoft Pad-1", &["constant", "reflect", "edge"]),
            ("OpenVINO Pad-1", &["constant", "reflect", "edge", "symmetric"]),
        ];
        for (form, list) in lists {
            for mode in Mode::ALL.map(Mode::name) {
                let run = |opts: FormOptions| match form {
                    "ONNX Pad-13" => onnx_pad(13, DataType::Float32, &[2], mode, OnnxPadInputs::new(&pads), opts),
                    "ONNX Pad-24" => onnx_pad(24, DataType::Float32, &[2], mode, OnnxPadInputs::new(&pads), opts),
                    "com.microsoft Pad-1" => microsoft_pad(DataType::Float32, &[2], mode, &pads, None, opts),
                    _ => openvino_pad(DataType::Float32, &[2], mode, &one, &one, None, opts),
                };
                assert!(run(FormOptions::lenient()).is_ok(), "{form} {mode} lenient");
                match run(D) {
                    Ok(_) => assert!(list.contains(&mode), "{form} took {mode}"),
                    Err(e) => {
                        assert!(!list.contains(&mode), "{form} refused {mode}: {e}");
                        assert!(matches!(e, PadError::NotInVersion { .. }), "{e}");
                        assert!(e.to_string().contains(&format!("mode {mode}")), "{e}");
                    }
                }
            }
        }
        let e = onnx_pad(24, DataType::Float32, &[2], "symmetric", OnnxPadInputs::new(&pads), D).unwrap_err();
        assert!(e.to_string().contains("not an ONNX mode (OpenVINO's)"), "{e}");
    }

    #[test]
    fn microsoft_accepts_2d_pads_and_1d_value() {
        let pads = Tensor::from_slice(DataType::Int64, vec![1, 4], &[0i64, 1, 0, 1]).unwrap();
        let v = Tensor::from_slice(DataType::Int8, vec![1], &[5i8]).unwrap();
        let p = microsoft_pad(DataType::Int8, &[2, 2], "constant", &pads, Some(&v), D).unwrap();
        assert_eq!(p.out_shape(), &[2, 4]);
        let pads3 = Tensor::from_slice(DataType::Int64, vec![2, 2], &[0i64, 1, 0, 1]).unwrap();
        assert!(microsoft_pad(DataType::Int8, &[2, 2], "constant", &pads3, None, D).is_err());
        assert!(microsoft_pad(DataType::Int8, &[2, 2], "wrap", &pads, None, D).is_err());
    }

    #[test]
    fn stablehlo_pad_checks_its_constraints() {
        let v = Tensor::from_slice(DataType::Float32, vec![], &[1f32]).unwrap();
        let pad = |v: &Tensor, low: &[i64], high: &[i64], interior: &[i64]| {
            stablehlo_pad(DataType::Float32, &[2, 3], v, low, high, interior, D)
        };
        let p = pad(&v, &[1, -1], &[0, 2], &[1, 2]).unwrap();
        assert_eq!((p.out_shape(), p.interior()), (&[4, 8][..], &[1, 2][..]));
        let e = pad(&Tensor::from_slice(DataType::Float32, vec![1], &[1f32]).unwrap(), &[0, 0], &[0, 0], &[0, 0]);
        assert!(e.unwrap_err().to_string().contains("input padding_value: float32 of shape [1], expected a 0-D"));
        let e = pad(&Tensor::from_slice(DataType::Int32, vec![], &[1i32]).unwrap(), &[0, 0], &[0, 0], &[0, 0]);
        assert!(e.unwrap_err().to_string().contains("(C1)"));
        for (low, high, interior, input) in [
            (&[0][..], &[0, 0][..], &[0, 0][..], "edge_padding_low"),
            (&[0, 0], &[0, 0, 0], &[0, 0], "edge_padding_high"),
            (&[0, 0], &[0, 0], &[0], "interior_padding"),
        ] {
            let e = pad(&v, low, high, interior).unwrap_err();
            assert!(matches!(&e, PadError::InvalidInput { input: i, .. } if *i == input), "{e}");
            assert!(e.to_string().contains("(C2)"), "{e}");
        }
        let e = pad(&v, &[0, 0], &[0, 0], &[0, -2]).unwrap_err();
        assert!(e.to_string().contains("interior_padding: axis 1: -2 is negative (C3)"), "{e}");
        // Axis 1: 3 with 2 between is 7 long; -4 and -4 leave -1.
        let e = pad(&v, &[0, -4], &[0, -4], &[0, 2]).unwrap_err();
        assert!(
            e.to_string().contains("axis 1: length 3 with interior 2, low -4 and high -4 gives -1 < 0 (C4)"),
            "{e}"
        );
        // The side at fault is named: the negative one, or the one that alone crops past it.
        for (low, high, input) in [
            (0, -6, "edge_padding_high"),
            (-6, 0, "edge_padding_low"),
            (-6, -1, "edge_padding_low"),
            (-1, -6, "edge_padding_high"),
            (-3, -3, "edge_padding_low and edge_padding_high"),
        ] {
            let e = stablehlo_pad(DataType::Float32, &[5], &v, &[low], &[high], &[0], D).unwrap_err();
            assert!(matches!(&e, PadError::InvalidInput { input: i, .. } if *i == input), "{low} {high}: {e}");
            assert!(e.to_string().contains("(C4)"), "{e}");
        }
        // An empty axis dilates to nothing: low and high alone, whatever its interior (not
        // (0 - 1) * 3 = -3, which would refuse these).
        let p = stablehlo_pad(DataType::Float32, &[0], &v, &[2], &[1], &[3], D).unwrap();
        assert_eq!(p.out_shape(), &[3]);
        let p = stablehlo_pad(DataType::Float32, &[0, 2], &v, &[0, 0], &[1, 0], &[3, 0], D).unwrap();
        assert_eq!(p.out_shape(), &[1, 2]);
        // A result of no elements is a result.
        let p = stablehlo_pad(DataType::Float32, &[0, 2], &v, &[0, 0], &[0, 0], &[3, 0], D).unwrap();
        assert_eq!(p.out_shape(), &[0, 2]);
        let x = Tensor::from_slice(DataType::Float32, vec![0, 2], &[] as &[f32]).unwrap();
        assert_eq!(crate::cpu::pad(&p, &x).unwrap().shape(), &[0, 2]);
        let p = stablehlo_pad(DataType::Float32, &[3], &v, &[-2], &[-1], &[0], D).unwrap();
        assert_eq!(p.out_shape(), &[0]);
    }

    #[test]
    fn openvino_symmetric_and_no_negative_pads() {
        let b = Tensor::from_slice(DataType::Int32, vec![2], &[0i32, 2]).unwrap();
        let e_ok = Tensor::from_slice(DataType::Int32, vec![2], &[0i32, 1]).unwrap();
        let p = openvino_pad(DataType::Float32, &[2, 3], "symmetric", &b, &e_ok, None, D).unwrap();
        assert_eq!(p.out_shape(), &[2, 6]);
        let neg = Tensor::from_slice(DataType::Int32, vec![2], &[0i32, -1]).unwrap();
        let e = openvino_pad(DataType::Float32, &[2, 3], "edge", &b, &neg, None, D).unwrap_err();
        assert!(e.to_string().contains("axis 1: pad -1 is negative"), "{e}");
    }
}
