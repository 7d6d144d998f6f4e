//! A straightforward per-element pad written from `docs/SEMANTICS.md`'s formulas, independent
//! of the fast paths: the oracle for property tests, fuzzing and Miri. Slow by design, but not
//! needlessly: every element's source is found on its own, the axes combined in plain loops,
//! and the copying goes a run of consecutive sources at a time (Miri interprets it in
//! `tests/unsafe_paths.rs`, where it had been most of the run).

use crate::constant::Constant;
use crate::dtype::ElementWidth;
use crate::mode::Mode;
use crate::plan::PadPlan;
use crate::tensor::{pack_nibbles, unpack_nibbles, Tensor, TensorData};

/// The source element for output coordinate `o` on an axis of input length `n` with
/// signed pads `b`, `e` and `interior` constants between neighbours (constant mode only): an
/// input index, or `None` for the constant.
fn source(mode: Mode, o: i128, n: i128, b: i128, e: i128, interior: i128) -> Option<i128> {
    if mode == Mode::Constant {
        // Input element i sits at b + i * (interior + 1); anything else is the constant.
        let j = o - b;
        let i = j / (interior + 1);
        return (j >= 0 && j % (interior + 1) == 0 && i < n).then_some(i);
    }
    let s = (-b).max(0);
    let t = n - (-e).max(0);
    let kept = t - s;
    let j = o - b.max(0);
    let f = match mode {
        Mode::Edge => j.clamp(0, kept - 1),
        Mode::Wrap => j.rem_euclid(kept),
        Mode::Reflect if kept == 1 => 0,
        Mode::Reflect => {
            let p = 2 * (kept - 1);
            let k = j.rem_euclid(p);
            if k < kept {
                k
            } else {
                p - k
            }
        }
        Mode::Symmetric => {
            let p = 2 * kept;
            let k = j.rem_euclid(p);
            if k < kept {
                k
            } else {
                p - 1 - k
            }
        }
        Mode::Constant => unreachable!(),
    };
    Some(s + f)
}

/// For each output element, the index of the input element it reads (row-major), or `None`
/// for the constant.
fn sources(plan: &PadPlan) -> Vec<Option<usize>> {
    let out_shape = plan.out_shape().to_vec();
    let in_shape = plan.in_shape();
    let rank = in_shape.len();
    let out_len = plan.out_len();
    if out_len == 0 {
        return Vec::new(); // its axes may have nothing to take from
    }
    // Each axis maps on its own (its source for each of its output coordinates, once), and
    // the elements' sources are those of the axes combined, one axis after another, in plain
    // loops: indexing per element, and iterator chains, were slow under Miri (timed, 2026-11-29).
    let mut sources: Vec<Option<usize>> = vec![Some(0)];
    for d in 0..rank {
        let (n, b, e) = (in_shape[d] as i128, plan.begins()[d] as i128, plan.ends()[d] as i128);
        let interior = plan.interior()[d] as i128;
        let axis: Vec<Option<usize>> =
            (0..out_shape[d]).map(|o| source(plan.mode(), o as i128, n, b, e, interior).map(|i| i as usize)).collect();
        let outer = std::mem::replace(&mut sources, Vec::with_capacity(out_len));
        for &acc in &outer {
            for &i in &axis {
                sources.push(match (acc, i) {
                    (Some(acc), Some(i)) => Some(acc * in_shape[d] + i),
                    _ => None,
                });
            }
        }
    }
    sources
}

/// Pads `input` element by element. `input` must match the plan's type and shape.
pub fn pad(plan: &PadPlan, input: &Tensor) -> Tensor {
    let out_shape = plan.out_shape().to_vec();
    let out_len = plan.out_len();
    let sources = sources(plan);
    match (input.data(), plan.constant()) {
        (TensorData::Strings(s), c) => {
            let constant = match c {
                Constant::String(c) => c.clone(),
                Constant::Bytes(_) => String::new(),
            };
            let out = sources.iter().map(|i| i.map_or(constant.clone(), |i| s[i].clone())).collect();
            Tensor::from_strings(out_shape, out).expect("shape matches")
        }
        (TensorData::Bytes(b), c) => {
            let constant = match c {
                Constant::Bytes(c) => c.clone(),
                Constant::String(_) => vec![0],
            };
            let bytes = if plan.dtype().width() == ElementWidth::Bits4 {
                let elems = unpack_nibbles(b, plan.in_len());
                let out: Vec<u8> = sources.iter().map(|i| i.map_or(constant[0] & 0x0f, |i| elems[i])).collect();
                pack_nibbles(&out)
            } else {
                let w = plan.dtype().width().bytes().expect("fixed width");
                // Element by element, each run of consecutive input elements copied at once:
                // a copy an element was about half of this under Miri (timed, 2026-11-29).
                let mut out = Vec::with_capacity(out_len * w);
                let mut run: Option<(usize, usize)> = None; // its first element, its length
                for &i in &sources {
                    match (i, run.as_mut()) {
                        (Some(i), Some((first, len))) if *first + *len == i => *len += 1,
                        _ => {
                            if let Some((first, len)) = run.take() {
                                out.extend_from_slice(&b[first * w..(first + len) * w]);
                            }
                            match i {
                                Some(i) => run = Some((i, 1)),
                                None => out.extend_from_slice(&constant),
                            }
                        }
                    }
                }
                if let Some((first, len)) = run {
                    out.extend_from_slice(&b[first * w..(first + len) * w]);
                }
                out
            };
            Tensor::from_bytes(plan.dtype(), out_shape, bytes).expect("shape matches")
        }
    }
}

/// The pad's adjoint as its definition says, a scatter: each output position's gradient
/// added into the input element it read, in output order (numpy's `np.add.at`). Its sums
/// match the library's fixed order only where they are exact (small integers): the oracle of
/// the gradient tests. Floats (f16, bf16, f32, f64, the float8s) and complex types (each part
/// alone).
pub fn backward_by_scatter(plan: &PadPlan, grad_out: &Tensor) -> Tensor {
    use half::{bf16, f16};
    let bytes = grad_out.bytes().expect("a fixed-width gradient");
    let (w, parts) = match plan.dtype() {
        crate::DataType::Complex64 => (4, 2),
        crate::DataType::Complex128 => (8, 2),
        d => (d.width().bytes().expect("fixed width"), 1),
    };
    // In f64, then rounded once into the type: exact for the sums this oracle is meant for.
    // The float8s by their values' definition and the constant rule's rounding (constant/).
    let dtype = plan.dtype();
    let float8 = w == 1;
    let read = |b: &[u8]| -> f64 {
        if float8 {
            return crate::constant::small_float_value(dtype, b[0]).expect("a gradient without NaN");
        }
        match (plan.dtype(), w) {
            (crate::DataType::Float16, _) => f16::from_le_bytes([b[0], b[1]]).to_f64(),
            (crate::DataType::Bfloat16, _) => bf16::from_le_bytes([b[0], b[1]]).to_f64(),
            (_, 4) => f32::from_le_bytes(b.try_into().unwrap()) as f64,
            _ => f64::from_le_bytes(b.try_into().unwrap()),
        }
    };
    let write = |v: f64| -> Vec<u8> {
        if float8 {
            let t = crate::Scalar::from(v).to_tensor(dtype).expect("a sum the type holds");
            return t.bytes().expect("fixed width").to_vec();
        }
        match (plan.dtype(), w) {
            (crate::DataType::Float16, _) => f16::from_f64(v).to_le_bytes().to_vec(),
            (crate::DataType::Bfloat16, _) => bf16::from_f64(v).to_le_bytes().to_vec(),
            (_, 4) => (v as f32).to_le_bytes().to_vec(),
            _ => v.to_le_bytes().to_vec(),
        }
    };
    let mut sums = vec![0f64; plan.in_len() * parts];
    for (o, src) in sources(plan).into_iter().enumerate() {
        if let Some(i) = src {
            for part in 0..parts {
                let at = (o * parts + part) * w;
                sums[i * parts + part] += read(&bytes[at..at + w]);
            }
        }
    }
    let out: Vec<u8> = sums.into_iter().flat_map(write).collect();
    Tensor::from_bytes(plan.dtype(), plan.in_shape().to_vec(), out).expect("shape matches")
}
