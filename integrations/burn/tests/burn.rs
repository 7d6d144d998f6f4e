//! The adapter inside Burn, on Burn's own wgpu device: every mode for f32, f16, i32 and
//! bool (u32 storage), from a contiguous and from a transposed input, with a Burn op queued
//! before the pad (its input) and one after (reading its output), nothing synced between.
//! Bit-exact against Burn's own `Tensor::pad` where Burn has the mode, and against
//! `wgpu_pad`'s CPU path for all five. Then the device shared the other way, errors, and
//! ordering across threads.
//!
//! Without a GPU adapter the tests skip, unless `WGPU_PAD_REQUIRE_GPU=1` (CI) makes that a
//! failure.

mod common;

use std::sync::OnceLock;

use burn::tensor::wgpu::wgpu;
use burn::tensor::{Bool, DType, Device, Int, Tensor, TensorData};
use wgpu_pad::{cpu, DataType, Mode};
use wgpu_pad_burn::{BurnPad, Error, PadMode};

/// Burn's wgpu device, made by Burn, and a pad on it; `None` (skip) without an adapter.
fn burn() -> Option<&'static (Device, BurnPad)> {
    static BURN: OnceLock<Option<(Device, BurnPad)>> = OnceLock::new();
    BURN.get_or_init(common::device_and_pad).as_ref()
}

/// The element types under test, as Burn holds them and as `wgpu_pad` pads them.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    F32,
    F16,
    I32,
    Bool,
}

impl Kind {
    fn onnx(self) -> DataType {
        match self {
            Kind::F32 => DataType::Float32,
            Kind::F16 => DataType::Float16,
            Kind::I32 => DataType::Int32,
            Kind::Bool => DataType::Uint32, // Burn's bool on wgpu: a u32 of 0 or 1
        }
    }

    /// Element `i` of the test input, as little-endian bytes (varied, signed, not periodic).
    fn element(self, i: usize) -> Vec<u8> {
        let v = (i as f32 * 0.37).sin() * 40.0;
        match self {
            Kind::F32 => v.to_le_bytes().to_vec(),
            Kind::F16 => half::f16::from_f32(v).to_le_bytes().to_vec(),
            Kind::I32 => (v as i32 * 1000 + i as i32).to_le_bytes().to_vec(),
            Kind::Bool => (((i * 7).is_multiple_of(3)) as u32).to_le_bytes().to_vec(),
        }
    }

    /// What Burn's `neg` (or `bool_not`) does to one element's bytes, exactly.
    fn negate(self, e: &mut [u8]) {
        match self {
            Kind::F32 | Kind::F16 => *e.last_mut().unwrap() ^= 0x80,
            Kind::I32 => {
                let v = i32::from_le_bytes(e.try_into().unwrap());
                e.copy_from_slice(&v.wrapping_neg().to_le_bytes());
            }
            Kind::Bool => e[0] ^= 1,
        }
    }
}

/// A Burn tensor of any kind, so one test body serves all four.
#[derive(Clone)]
enum Any {
    Float(Tensor<3>),
    Int(Tensor<3, Int>),
    Bool(Tensor<3, Bool>),
}

impl Any {
    fn from_elements(kind: Kind, shape: [usize; 3], elements: &[Vec<u8>], device: &Device) -> Any {
        let bytes = elements.concat();
        match kind {
            Kind::F32 => Any::Float(Tensor::from_data(
                TensorData::from_bytes_vec(bytes, shape, DType::F32),
                (device, DType::F32),
            )),
            Kind::F16 => Any::Float(Tensor::from_data(
                TensorData::from_bytes_vec(bytes, shape, DType::F16),
                (device, DType::F16),
            )),
            Kind::I32 => {
                Any::Int(Tensor::from_data(TensorData::from_bytes_vec(bytes, shape, DType::I32), (device, DType::I32)))
            }
            Kind::Bool => {
                let values: Vec<bool> = elements.iter().map(|e| e[0] == 1).collect();
                Any::Bool(Tensor::from_data(TensorData::new(values, shape), device))
            }
        }
    }

    /// Burn's transpose (the last two axes): a strided view, no copy.
    fn transpose(self) -> Any {
        match self {
            Any::Float(t) => Any::Float(t.transpose()),
            Any::Int(t) => Any::Int(t.transpose()),
            Any::Bool(t) => Any::Bool(t.transpose()),
        }
    }

    /// The strides (in elements) of Burn's storage under this tensor: what the pad reads.
    /// (With fusion a tensor is a handle in a stream, its strides known only when it runs.)
    #[cfg(not(feature = "fusion"))]
    fn strides(&self) -> Vec<usize> {
        use burn::backend::wgpu::CubeBackend;
        let of = |p: burn::backend::wgpu::CubeTensor| p.meta.strides().to_vec();
        match self {
            Any::Float(t) => of(t.clone().try_into_primitive::<CubeBackend>().unwrap()),
            Any::Int(t) => of(t.clone().try_into_primitive::<CubeBackend>().unwrap()),
            Any::Bool(t) => of(t.clone().try_into_primitive::<CubeBackend>().unwrap()),
        }
    }

    /// Burn's `neg` (`bool_not` for bool): queued, not run.
    fn negate(self) -> Any {
        match self {
            Any::Float(t) => Any::Float(t.neg()),
            Any::Int(t) => Any::Int(t.neg()),
            Any::Bool(t) => Any::Bool(t.bool_not()),
        }
    }

    fn pad(self, pad: &BurnPad, pairs: &[(i64, i64)], mode: PadMode) -> Result<Any, Error> {
        Ok(match self {
            Any::Float(t) => Any::Float(pad.pad(t, pairs, mode)?),
            Any::Int(t) => Any::Int(pad.pad(t, pairs, mode)?),
            Any::Bool(t) => Any::Bool(pad.pad(t, pairs, mode)?),
        })
    }

    fn pad_interior(self, pad: &BurnPad, config: &[(i64, i64, i64)], value: f64) -> Result<Any, Error> {
        Ok(match self {
            Any::Float(t) => Any::Float(pad.pad_interior(t, config, value)?),
            Any::Int(t) => Any::Int(pad.pad_interior(t, config, value)?),
            Any::Bool(t) => Any::Bool(pad.pad_interior(t, config, value)?),
        })
    }

    fn burn_pad(self, pairs: &[(usize, usize)], mode: burn::tensor::ops::PadMode) -> Any {
        match self {
            Any::Float(t) => Any::Float(t.pad(pairs, mode)),
            Any::Int(t) => Any::Int(t.pad(pairs, mode)),
            Any::Bool(t) => Any::Bool(t.int().pad(pairs, mode).bool()),
        }
    }

    fn dims(&self) -> [usize; 3] {
        match self {
            Any::Float(t) => t.dims(),
            Any::Int(t) => t.dims(),
            Any::Bool(t) => t.dims(),
        }
    }

    /// The elements in logical order, as the kind's bytes (bool as u32 0 or 1).
    fn bytes(self) -> Vec<u8> {
        match self {
            Any::Float(t) => t.into_data().as_bytes().to_vec(),
            Any::Int(t) => t.into_data().as_bytes().to_vec(),
            Any::Bool(t) => {
                let values = t.into_data().convert::<u8>();
                values.as_bytes().iter().flat_map(|&b| (b as u32).to_le_bytes()).collect()
            }
        }
    }
}

const SHAPE: [usize; 3] = [2, 5, 7];
/// For the last two axes; fewer pairs than axes, as Burn allows. Reflect needs pads shorter
/// than the axis in Burn (not in ONNX): these are.
const PAIRS: [(i64, i64); 2] = [(1, 3), (4, 2)];

/// The elements of the tensor of `SHAPE` stored as `stored` (its transpose's view of them,
/// where `transposed`), in logical order, negated as Burn's `neg` negates them.
fn negated_logical(kind: Kind, stored: &[Vec<u8>], transposed: bool) -> Vec<u8> {
    (0..SHAPE.iter().product::<usize>())
        .flat_map(|i| {
            let (a, r, c) = (i / (SHAPE[1] * SHAPE[2]), i / SHAPE[2] % SHAPE[1], i % SHAPE[2]);
            let s = if transposed { (a * SHAPE[2] + c) * SHAPE[1] + r } else { i };
            let mut e = stored[s].clone();
            kind.negate(&mut e);
            e
        })
        .collect()
}

/// One mode and kind, contiguous and transposed: x queued, negated by Burn, padded, negated
/// again by Burn, then read. Both results bit-exact against the CPU path, and against
/// Burn's pad where Burn has the mode.
fn check(kind: Kind, mode: Mode) {
    let Some((device, pad)) = burn() else { return };
    let width = kind.element(0).len();
    for transposed in [false, true] {
        // The stored tensor; its logical view is the transpose when asked.
        let stored_shape = if transposed { [SHAPE[0], SHAPE[2], SHAPE[1]] } else { SHAPE };
        let stored: Vec<Vec<u8>> = (0..SHAPE.iter().product()).map(|i| kind.element(i)).collect();
        let mut x = Any::from_elements(kind, stored_shape, &stored, device);
        if transposed {
            x = x.transpose();
        }
        assert_eq!(x.dims(), SHAPE);
        // The transposed view reaches the pad as strides over the stored buffer (no copy):
        // the output below is right only if the kernel read through them (mutant: the
        // adapter's `with_strides` dropped fails every transposed case).
        #[cfg(not(feature = "fusion"))]
        {
            let contiguous = vec![SHAPE[1] * SHAPE[2], SHAPE[2], 1];
            let view = vec![SHAPE[1] * SHAPE[2], 1, SHAPE[1]];
            assert_eq!(x.strides(), if transposed { view } else { contiguous }, "{kind:?}");
        }
        // The logical elements, negated as Burn's op before the pad will.
        let logical = negated_logical(kind, &stored, transposed);

        let value = if kind == Kind::Bool { 1.0 } else { -3.0 };
        let ours = if mode == Mode::Constant { PadMode::Constant(value.into()) } else { mode.into() };
        // The oracle: the core crate's plan, written from the adapter's contract (Burn's
        // pairs pad the last axes, in order) with the test's own mode, not through the
        // adapter's mapping (a mutant mapping wrap to symmetric would pass itself).
        let full = [(0, 0), PAIRS[0], PAIRS[1]];
        let request = wgpu_pad::PadRequest::from_pairs(&full).mode(mode).constant(value);
        let plan = wgpu_pad::PadPlan::new(kind.onnx(), &SHAPE, &request).unwrap();
        let input = wgpu_pad::Tensor::from_bytes(kind.onnx(), SHAPE.to_vec(), logical.clone()).unwrap();
        let want = cpu::pad(&plan, &input).unwrap().bytes().unwrap().to_vec();
        // The view itself, padded as it is (transposed: its strides are what the kernel
        // reads), before anything else is queued on it.
        let mut not_negated = logical.clone();
        not_negated.chunks_mut(width).for_each(|e| kind.negate(e));
        let direct_input = wgpu_pad::Tensor::from_bytes(kind.onnx(), SHAPE.to_vec(), not_negated).unwrap();
        let direct_want = cpu::pad(&plan, &direct_input).unwrap().bytes().unwrap().to_vec();
        let direct = x.clone().pad(pad, &PAIRS, ours).unwrap();
        let mut want_after = want.clone();
        want_after.chunks_mut(width).for_each(|e| kind.negate(e));

        // Queued: negate, pad, negate; nothing read until the end.
        let negated = x.negate();
        let padded = negated.clone().pad(pad, &PAIRS, ours).unwrap();
        let after = padded.clone().negate();
        let burns = match mode {
            Mode::Constant => Some(burn::tensor::ops::PadMode::Constant(value as f32)),
            Mode::Reflect => Some(burn::tensor::ops::PadMode::Reflect),
            Mode::Edge => Some(burn::tensor::ops::PadMode::Edge),
            Mode::Wrap | Mode::Symmetric => None,
        };
        let usize_pairs = PAIRS.map(|(b, e)| (b as usize, e as usize));
        let burn_padded = burns.map(|m| negated.burn_pad(&usize_pairs, m));

        let case = format!("{kind:?} {mode} transposed={transposed}");
        assert_eq!(padded.dims(), [2, 9, 13], "{case}");
        assert!(after.bytes() == want_after, "{case}: Burn's op after the pad read something else");
        assert!(padded.bytes() == want, "{case}: differs from the CPU path");
        assert!(direct.bytes() == direct_want, "{case}: the view padded directly differs from the CPU path");
        if let Some(b) = burn_padded {
            assert!(b.bytes() == want, "{case}: differs from Burn's own pad");
        }
    }
    pad.kernel().pop_errors_blocking().unwrap();
}

macro_rules! every_mode_and_kind {
    ($($name:ident: $kind:ident $mode:ident;)*) => {$(
        #[test]
        fn $name() {
            check(Kind::$kind, Mode::$mode);
        }
    )*};
}

every_mode_and_kind! {
    f32_constant: F32 Constant;
    f32_reflect: F32 Reflect;
    f32_edge: F32 Edge;
    f32_wrap: F32 Wrap;
    f32_symmetric: F32 Symmetric;
    f16_constant: F16 Constant;
    f16_reflect: F16 Reflect;
    f16_edge: F16 Edge;
    f16_wrap: F16 Wrap;
    f16_symmetric: F16 Symmetric;
    i32_constant: I32 Constant;
    i32_reflect: I32 Reflect;
    i32_edge: I32 Edge;
    i32_wrap: I32 Wrap;
    i32_symmetric: I32 Symmetric;
    bool_constant: Bool Constant;
    bool_reflect: Bool Reflect;
    bool_edge: Bool Edge;
    bool_wrap: Bool Wrap;
    bool_symmetric: Bool Symmetric;
}

/// The other direction: the application makes the wgpu device, Burn is given it, the pad
/// runs on it; and a tensor of one Burn device is refused by a pad made for another.
#[test]
fn a_device_the_application_made_is_shared_with_burn() {
    let Some((burns_device, _)) = burn() else { return };
    let instance = wgpu::Instance::default();
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).unwrap();
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default())).unwrap();
    let backend = adapter.get_info().backend;
    let setup = burn::tensor::wgpu::WgpuSetup { instance, adapter, device, queue, backend };
    let (device, pad) = BurnPad::register(setup).unwrap();

    let x = Tensor::<2>::from_data(TensorData::new((0..12).map(|i| i as f32).collect::<Vec<_>>(), [3, 4]), &device);
    let y = pad.pad(x.clone(), &[(0, 0), (2, 1)], PadMode::Symmetric).unwrap();
    let got = y.into_data().try_to_vec::<f32>().unwrap();
    let want: Vec<f32> =
        [[1., 0., 0., 1., 2., 3., 3.], [5., 4., 4., 5., 6., 7., 7.], [9., 8., 8., 9., 10., 11., 11.]].concat();
    assert_eq!(got, want);

    // A tensor of Burn's own device, given to the pad of the application's device.
    let other = Tensor::<2>::zeros([2, 2], burns_device);
    let err = pad.pad(other, &[(1, 1)], PadMode::Edge).unwrap_err();
    assert!(matches!(err, Error::OtherDevice { .. }), "{err}");
    pad.kernel().pop_errors_blocking().unwrap();
}

/// Bad requests are typed errors naming what is wrong; nothing panics.
#[test]
fn bad_requests_are_errors() {
    let Some((device, pad)) = burn() else { return };
    let x = Tensor::<2>::ones([3, 4], device);
    let err = pad.pad(x.clone(), &[(1, 1), (1, 1), (1, 1)], PadMode::Edge).unwrap_err();
    assert!(err.to_string().contains("3 (before, after) pairs for a rank-2 tensor"), "{err}");
    // A constant the type cannot hold: 2.5 in an int tensor, 2 in a bool one, 1e6 in f16.
    let ints = Tensor::<2, Int>::ones([3, 4], device);
    let err = pad.pad(ints, &[(1, 1)], PadMode::Constant(2.5.into())).unwrap_err();
    assert!(err.to_string().contains("2.5 is not an int32 value: not an integer"), "{err}");
    let bools = Tensor::<2, Bool>::from_data(TensorData::new(vec![true; 4], [2, 2]), device);
    let err = pad.pad(bools, &[(1, 1)], PadMode::Constant(2.into())).unwrap_err();
    assert!(err.to_string().contains("expected 0 or 1"), "{err}");
    let halves = x.clone().cast(DType::F16);
    let err = pad.pad(halves, &[(1, 1)], PadMode::Constant(1e6.into())).unwrap_err();
    assert!(err.to_string().contains("out of range"), "{err}");
    // An axis cropped below zero; edge on an axis with nothing left.
    let err = pad.pad(x.clone(), &[(-3, -2)], PadMode::Constant(0.into())).unwrap_err();
    assert!(matches!(err, Error::Pad(wgpu_pad::PadError::NegativeOutputDim { axis: 1, .. })), "{err}");
    let err = pad.pad(x.clone(), &[(-4, 1)], PadMode::Edge).unwrap_err();
    assert!(matches!(err, Error::Pad(_)) && err.to_string().contains("axis 1"), "{err}");
    // Past the device's limits: 17 axes that cannot merge (each padded by 1 and cropped by
    // 1), one more than the GPU path holds. Known at the call, fusion or not (round seven:
    // under fusion it had come back only when the output was read).
    let deep = Tensor::<17>::ones([2; 17], device);
    let err = pad.pad(deep, &[(1, -1); 17], PadMode::Edge).unwrap_err();
    let limit = wgpu_pad::GpuLimit::Rank;
    assert!(matches!(err, Error::Pad(wgpu_pad::PadError::GpuLimit { limit: l, .. }) if l == limit), "{err}");
    pad.kernel().pop_errors_blocking().unwrap();
}

/// What Burn's pad refuses or cannot do, ONNX semantics do: a reflect longer than the axis
/// (reflecting again), crops, an empty input padded with a constant, an empty output.
#[test]
fn reflects_past_the_axis_crops_and_empty_tensors() {
    let Some((device, pad)) = burn() else { return };
    let x = Tensor::<1>::from_data(TensorData::new(vec![1f32, 2., 3.], [3]), device);
    let y = pad.pad(x.clone(), &[(5, 4)], PadMode::Reflect).unwrap();
    assert_eq!(y.into_data().try_to_vec::<f32>().unwrap(), [2., 1., 2., 3., 2., 1., 2., 3., 2., 1., 2., 3.]);
    let y = pad.pad(x.clone(), &[(-1, 2)], PadMode::Wrap).unwrap();
    assert_eq!(y.into_data().try_to_vec::<f32>().unwrap(), [2., 3., 2., 3.]);
    let empty = Tensor::<2>::zeros([0, 3], device);
    let y = pad.pad(empty, &[(1, 1), (0, 0)], PadMode::Constant(7.into())).unwrap();
    assert_eq!(y.into_data().try_to_vec::<f32>().unwrap(), [7.; 6]);
    let y = pad.pad(x, &[(-2, -1)], PadMode::Edge).unwrap();
    assert_eq!(y.dims(), [0]);
    pad.kernel().pop_errors_blocking().unwrap();
}

/// A pad between two chains Burn fuses (with fusion on): `(x * 2 + 1)`, the pad, then
/// `(y - 3).exp()`, queued together and read once, gives the bytes of the same steps run one
/// by one with a read between each. Several pads of one input shape in one stream, differing
/// only in their pads and mode, each give their own output.
#[test]
fn a_pad_between_fused_chains() {
    let Some((device, pad)) = burn() else { return };
    let values: Vec<f32> = (0..60).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
    let x = Tensor::<2>::from_data(TensorData::new(values.clone(), [6, 10]), device);
    let pairs = [(2i64, 1i64), (1, 3)];

    let queued = pad.pad(x.clone() * 2.0 + 1.0, &pairs, PadMode::Reflect).unwrap();
    let queued = (queued - 3.0).exp();

    // One step at a time, each read back and fed to the next as new data.
    let read = |t: Tensor<2>| t.into_data();
    let first = read(x * 2.0 + 1.0);
    let first = Tensor::<2>::from_data(first, device);
    let second = read(pad.pad(first, &pairs, PadMode::Reflect).unwrap());
    let second = Tensor::<2>::from_data(second, device);
    let stepwise = read((second - 3.0).exp());
    assert_eq!(queued.dims(), [9, 14]);
    assert!(queued.into_data().as_bytes() == stepwise.as_bytes(), "the queued chain differs from the steps");

    // Same input shape, different pads and modes, all queued before any is read.
    let y = Tensor::<2>::from_data(TensorData::new(values, [6, 10]), device) + 0.5;
    let cases =
        [((1i64, 2i64), PadMode::Edge), ((2, 1), PadMode::Edge), ((2, 1), PadMode::Wrap), ((1, 2), PadMode::Symmetric)];
    let padded: Vec<Tensor<2>> = cases.iter().map(|&(p, m)| pad.pad(y.clone(), &[p], m).unwrap() * 1.0).collect();
    let host = y.into_data();
    let input = wgpu_pad::Tensor::from_bytes(DataType::Float32, vec![6, 10], host.as_bytes().to_vec()).unwrap();
    for ((p, m), got) in cases.iter().zip(padded) {
        let mode = match m {
            PadMode::Edge => Mode::Edge,
            PadMode::Wrap => Mode::Wrap,
            _ => Mode::Symmetric,
        };
        let request = wgpu_pad::PadRequest::from_pairs(&[(0, 0), *p]).mode(mode);
        let plan = wgpu_pad::PadPlan::new(DataType::Float32, &[6, 10], &request).unwrap();
        let want = cpu::pad(&plan, &input).unwrap().bytes().unwrap().to_vec();
        assert!(got.into_data().as_bytes() == want, "{p:?} {m:?}");
    }
    pad.kernel().pop_errors_blocking().unwrap();
}

/// A tensor written on one thread (its own Burn stream), padded on another: the writer's
/// stream reaches the queue before the pad (cubecl's `get_resource` submits it). Repeated, with the writer's work still queued each time.
#[test]
fn inputs_written_on_another_thread() {
    let Some((device, pad)) = burn() else { return };
    for round in 0..4 {
        let d = device.clone();
        let x = std::thread::spawn(move || {
            let x = Tensor::<2>::from_data(TensorData::new((0..20).map(|i| i as f32).collect::<Vec<_>>(), [4, 5]), &d);
            x.neg() + round as f32
        })
        .join()
        .unwrap();
        let y = pad.pad(x, &[(0, 0), (1, 1)], PadMode::Edge).unwrap();
        let got = y.into_data().try_to_vec::<f32>().unwrap();
        let want: Vec<f32> = (0..4)
            .flat_map(|r| {
                let row: Vec<f32> = (0..5).map(|c| round as f32 - (r * 5 + c) as f32).collect();
                [vec![row[0]], row.clone(), vec![row[4]]].concat()
            })
            .collect();
        assert_eq!(got, want, "round {round}");
    }
}

/// Interior padding (lax.pad) through the adapter: every kind, contiguous and transposed, a
/// Burn op queued before it and one after; bit for bit the CPU path's, with crops into the
/// dilation and a constant of the kind's own.
#[test]
fn pad_interior_is_the_cores_for_every_kind() {
    let Some((device, pad)) = burn() else { return };
    let config = [(1i64, -2i64, 2i64), (-1, 3, 1)];
    for kind in [Kind::F32, Kind::F16, Kind::I32, Kind::Bool] {
        let width = kind.element(0).len();
        for transposed in [false, true] {
            let stored_shape = if transposed { [SHAPE[0], SHAPE[2], SHAPE[1]] } else { SHAPE };
            let stored: Vec<Vec<u8>> = (0..SHAPE.iter().product()).map(|i| kind.element(i)).collect();
            let mut x = Any::from_elements(kind, stored_shape, &stored, device);
            if transposed {
                x = x.transpose();
            }
            let logical = negated_logical(kind, &stored, transposed);
            let value = if kind == Kind::Bool { 1.0 } else { -3.0 };
            let full = [(0, 0, 0), config[0], config[1]];
            let request = wgpu_pad::PadRequest::from_padding_config(&full).constant(value);
            let plan = wgpu_pad::PadPlan::new(kind.onnx(), &SHAPE, &request).unwrap();
            let input = wgpu_pad::Tensor::from_bytes(kind.onnx(), SHAPE.to_vec(), logical).unwrap();
            let mut want = cpu::pad(&plan, &input).unwrap().bytes().unwrap().to_vec();
            want.chunks_mut(width).for_each(|e| kind.negate(e));
            let padded = x.negate().pad_interior(pad, &config, value).unwrap();
            // 5 by 2 between is 13, 1 before and -2 after: 12; 7 by 1 between is 13, -1 and 3: 15.
            assert_eq!(padded.dims(), [2, 12, 15], "{kind:?}");
            assert!(padded.negate().bytes() == want, "{kind:?} transposed={transposed}: differs from the CPU path");
        }
    }
    pad.kernel().pop_errors_blocking().unwrap();
}
