//! # wgpu-pad-burn
//!
//! Pads [Burn](https://burn.dev) tensors with [`wgpu_pad`] on Burn's own wgpu device:
//! zero-copy (the pad reads the tensor's buffer where Burn keeps it, strides included, and
//! writes an output Burn allocated), in every ONNX mode (constant, reflect, edge, wrap,
//! symmetric; Burn's own `Tensor::pad` has the first three), each output byte written once
//! (one dispatch; one per binding window past the device's binding limit).
//!
//! ```
//! use burn::tensor::{ops::PadMode as BurnMode, Device, Tensor};
//! use wgpu_pad_burn::{BurnPad, PadMode};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Burn makes the device and hands back its wgpu handles; the pad shares them.
//! let (device, setup) = Device::wgpu_options().init_with_setup()?;
//! let pad = BurnPad::new(&device, &setup)?; // once per device: it holds the pipelines
//!
//! let x = Tensor::<4>::ones([1, 8, 16, 16], &device) * 2.0; // queued by Burn
//! let y = pad.pad(x.clone(), &[(3, 3), (3, 3)], PadMode::Wrap)?; // pairs for the last axes
//! let z = pad.pad(x.swap_dims(2, 3), &[(1, 2)], BurnMode::Reflect)?; // any strides; Burn's modes
//! let w = pad.pad(y, &[(1, 1)], PadMode::Constant(0.5.into()))?; // a number, converted
//! let sum = (w + 1.0).sum(); // Burn's next op reads the pad's output: ordered, nothing synced
//! assert_eq!(z.dims(), [1, 8, 16, 19]);
//! assert_eq!(sum.into_scalar::<f32>(), 8.0 * (22.0 * 22.0 * 3.0 + 22.0 * 2.0 * 1.5));
//! # Ok(()) }
//! ```
//!
//! [`BurnPad::pad_interior`] is JAX's `lax.pad`: constants between neighbours too (interior
//! padding), which Burn has no op for.
//!
//! The device can be shared the other way too: [`BurnPad::register`] gives Burn a device
//! the application (or `wgpu_pad::gpu::GpuContext`) made.
//!
//! **Ordering.** With Burn's `fusion` feature (on in `burn`'s default features) the pad is a
//! custom operation in the tensor's fusion stream: Burn runs it in order with the fused work
//! before and after it, on the fusion thread, where it submits its own command buffer on
//! Burn's queue. Without fusion it submits at once. Either way Burn's pending work (the stream
//! that wrote the input and the calling thread's stream) is submitted first, by cubecl's
//! `get_resource` handing over the buffers, so everything Burn queued before the pad runs
//! before it, and everything Burn queues after it (reading the output) runs after. No call
//! waits for the GPU.
//!
//! **Burn's features.** Burn's `wgpu` backend with or without fusion: the adapter builds
//! against whichever the application's `burn` turns on (it asks for neither; its own `fusion`
//! feature only turns Burn's on, for its tests). With its `autodiff` feature (which turns on
//! Burn's) a float tensor Burn's autodiff tracks pads with a backward: the core's gradient
//! kernel for float32 and float16 (one dispatch), else Burn's ops, both in the order of Burn's
//! own pad's backward; without it such a tensor is an [`Error::NotWgpu`].
#![warn(missing_docs)]
// docs.rs (--cfg docsrs, nightly): each feature-gated item says which feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::sync::Arc;

use burn::backend::wgpu::WgpuSetup;
use burn::backend::{CubeDevice, DispatchDevice, DispatchTensor};
use burn::tensor::{BoolStore, DType, Device, Tensor};

use wgpu_pad::gpu::PadKernel;
use wgpu_pad::{DataType, Mode, PadPlan, PadRequest, Scalar};

use crate::backend::PadBackend;

pub use wgpu_pad;

mod backend;
#[cfg(feature = "autodiff")]
mod backward;
mod kinds;

/// What can go wrong padding a Burn tensor; never a panic.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The tensor is not on Burn's wgpu backend, or is a tracked float without the `autodiff` feature.
    #[error("the tensor is not a plain tensor of Burn's wgpu backend: {0}")]
    NotWgpu(String),
    /// The tensor is on another wgpu device than the one this pad was made for.
    #[error("the tensor is on {tensor}, but this BurnPad was made for {pad}")]
    OtherDevice {
        /// The tensor's device.
        tensor: String,
        /// The pad's device.
        pad: String,
    },
    /// Burn's data type has no ONNX counterpart (a quantized type).
    #[error("Burn's {0:?} has no ONNX data type to pad (quantized tensors are not padable; dequantize first)")]
    UnsupportedType(DType),
    /// More `(before, after)` pairs than the tensor has axes, or a pad that is not an i64.
    #[error("{0}")]
    Padding(String),
    /// The pad itself: bad pads for the shape and mode, a constant that does not fit the type,
    /// a pad too large, a wgpu error.
    #[error(transparent)]
    Pad(#[from] wgpu_pad::PadError),
    /// Burn's runtime refused to hand over a buffer.
    #[error("Burn's runtime: {0}")]
    Burn(String),
}

/// How to fill the padded region: [`wgpu_pad::Mode`]'s five modes, with the constant (a
/// number, converted to the tensor's type by [`Scalar`]'s rule) inside.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PadMode {
    /// The constant.
    Constant(Scalar),
    /// Mirror without repeating the edge: `[3 2 | 1 2 3 | 2 1]`.
    Reflect,
    /// Repeat the edge: `[1 1 | 1 2 3 | 3 3]`.
    Edge,
    /// Wrap around: `[2 3 | 1 2 3 | 1 2]`.
    Wrap,
    /// Mirror repeating the edge: `[2 1 | 1 2 3 | 3 2]`.
    Symmetric,
}

impl PadMode {
    /// The mode and the constant (zero for the other modes).
    fn split(self) -> (Mode, Scalar) {
        match self {
            PadMode::Constant(v) => (Mode::Constant, v),
            PadMode::Reflect => (Mode::Reflect, Scalar::Int(0)),
            PadMode::Edge => (Mode::Edge, Scalar::Int(0)),
            PadMode::Wrap => (Mode::Wrap, Scalar::Int(0)),
            PadMode::Symmetric => (Mode::Symmetric, Scalar::Int(0)),
        }
    }
}

/// Burn's modes as Burn users write them: `PadMode::Constant(0.0)`, `Reflect`, `Edge`.
impl From<burn::tensor::ops::PadMode> for PadMode {
    fn from(mode: burn::tensor::ops::PadMode) -> PadMode {
        match mode {
            burn::tensor::ops::PadMode::Constant(v) => PadMode::Constant(Scalar::Float(v.into())),
            burn::tensor::ops::PadMode::Reflect => PadMode::Reflect,
            burn::tensor::ops::PadMode::Edge => PadMode::Edge,
        }
    }
}

/// A mode without a constant (constant mode pads with zero).
impl From<Mode> for PadMode {
    fn from(mode: Mode) -> PadMode {
        match mode {
            Mode::Constant => PadMode::Constant(Scalar::Int(0)),
            Mode::Reflect => PadMode::Reflect,
            Mode::Edge => PadMode::Edge,
            Mode::Wrap => PadMode::Wrap,
            Mode::Symmetric => PadMode::Symmetric,
        }
    }
}

/// The ONNX type a Burn data type is padded as, by how Burn stores it on wgpu: `Bool` by
/// its store (`U32`, Burn's default on wgpu, pads as uint32; `U8` and `Native` as one byte),
/// `Flex32` as float32. Quantized types have none.
pub fn onnx_type(dtype: DType) -> Result<DataType, Error> {
    Ok(match dtype {
        DType::F64 => DataType::Float64,
        DType::F32 | DType::Flex32 => DataType::Float32,
        DType::F16 => DataType::Float16,
        DType::BF16 => DataType::Bfloat16,
        DType::I64 => DataType::Int64,
        DType::I32 => DataType::Int32,
        DType::I16 => DataType::Int16,
        DType::I8 => DataType::Int8,
        DType::U64 => DataType::Uint64,
        DType::U32 | DType::Bool(BoolStore::U32) => DataType::Uint32,
        DType::U16 => DataType::Uint16,
        DType::U8 | DType::Bool(BoolStore::U8) => DataType::Uint8,
        DType::Bool(BoolStore::Native) => DataType::Bool,
        DType::QFloat(_) => return Err(Error::UnsupportedType(dtype)),
    })
}

/// The plan for padding a Burn tensor of `dtype` and `shape`: `pairs` for the last axes
/// (Burn's rule), the constant converted for the type (a bool tensor's must be 0 or 1).
pub fn plan<P>(dtype: DType, shape: &[usize], pairs: &[(P, P)], mode: impl Into<PadMode>) -> Result<PadPlan, Error>
where
    P: Copy + TryInto<i64> + std::fmt::Debug,
{
    let full = per_axis(shape.len(), pairs.iter().map(|&(b, e)| [b, e]).collect())?;
    let pairs: Vec<(i64, i64)> = full.iter().map(|&[b, e]| (b, e)).collect();
    plan_of_request(dtype, shape, PadRequest::from_pairs(&pairs), mode.into())
}

/// The plan for [`BurnPad::pad_interior`]: JAX's `lax.pad` padding config, one `(low, high,
/// interior)` for each of the last axes (Burn's rule), the constant converted for the type.
pub fn plan_interior<P>(dtype: DType, shape: &[usize], config: &[(P, P, P)], value: Scalar) -> Result<PadPlan, Error>
where
    P: Copy + TryInto<i64> + std::fmt::Debug,
{
    let full = per_axis(shape.len(), config.iter().map(|&(b, e, k)| [b, e, k]).collect())?;
    let config: Vec<(i64, i64, i64)> = full.iter().map(|&[b, e, k]| (b, e, k)).collect();
    plan_of_request(dtype, shape, PadRequest::from_padding_config(&config), PadMode::Constant(value))
}

/// One entry a padded axis, for the last axes of a rank-`rank` tensor (the axes before left
/// alone), each value an i64.
fn per_axis<P, const N: usize>(rank: usize, given: Vec<[P; N]>) -> Result<Vec<[i64; N]>, Error>
where
    P: Copy + TryInto<i64> + std::fmt::Debug,
{
    if given.len() > rank {
        let what = if N == 2 { "(before, after) pairs" } else { "(low, high, interior) triples" };
        return Err(Error::Padding(format!("{} {what} for a rank-{rank} tensor: at most one per axis", given.len())));
    }
    let mut full = vec![[0i64; N]; rank];
    for (i, values) in given.iter().enumerate() {
        let axis = rank - given.len() + i;
        for (slot, &v) in full[axis].iter_mut().zip(values) {
            *slot =
                v.try_into().map_err(|_| Error::Padding(format!("axis {axis}: pad {v:?} does not fit in an i64")))?;
        }
    }
    Ok(full)
}

/// The plan of `request` in `mode`, the constant converted for the type.
fn plan_of_request(dtype: DType, shape: &[usize], request: PadRequest, mode: PadMode) -> Result<PadPlan, Error> {
    let (mode, value) = mode.split();
    let onnx = onnx_type(dtype)?;
    let value = match dtype {
        // The constant of a bool tensor is a bool, whatever its store.
        DType::Bool(_) => {
            let bool = value.to_tensor(DataType::Bool)?;
            Scalar::Uint(bool.bytes().map_or(0, |b| b[0]).into())
        }
        _ => value,
    };
    Ok(PadPlan::new(onnx, shape, &request.mode(mode).constant(value))?)
}

/// Pads Burn tensors on one of Burn's wgpu devices. Make one per device and keep it: it
/// holds the compiled pipelines. Cloning shares them.
#[derive(Clone)]
pub struct BurnPad {
    shared: Arc<Shared>,
}

/// What a pad needs when it runs: on the calling thread without fusion, on Burn's fusion
/// thread with it.
struct Shared {
    kernel: PadKernel,
    queue: burn::backend::wgpu::wgpu::Queue,
    device: CubeDevice,
}

impl std::fmt::Debug for BurnPad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BurnPad").field("device", &self.shared.device).finish_non_exhaustive()
    }
}

impl BurnPad {
    /// A pad for Burn's `device`, whose wgpu handles are `setup` (as
    /// `Device::wgpu_options().init_with_setup()` returns them, or as given to
    /// `Device::wgpu_options().setup(..)`). They must be that device's: Burn does not say
    /// which handles a device has, so this cannot check it. (With another device's handles a
    /// pad is an `Error::Pad` where both come from one wgpu instance; across instances
    /// wgpu 30 itself panics, as `PadKernel`'s docs say.)
    pub fn new(device: &Device, setup: &WgpuSetup) -> Result<BurnPad, Error> {
        let device = match device.as_dispatch() {
            DispatchDevice::Cube(d @ CubeDevice::Wgpu(_)) => d.clone(),
            #[allow(unreachable_patterns)] // other backends exist only in some builds of Burn
            other => return Err(Error::NotWgpu(format!("{other:?} is not a wgpu device"))),
        };
        let shared = Shared { kernel: PadKernel::new(&setup.device)?, queue: setup.queue.clone(), device };
        Ok(BurnPad { shared: Arc::new(shared) })
    }

    /// Gives Burn a wgpu device the application made (one an engine already uses, say):
    /// registers `setup` with Burn's runtime and returns Burn's device for it, with a pad on
    /// it. Register a setup once.
    pub fn register(setup: WgpuSetup) -> Result<(Device, BurnPad), Error> {
        let device = Device::wgpu_options().setup(setup.clone()).init().map_err(|e| Error::Burn(e.to_string()))?;
        let pad = BurnPad::new(&device, &setup)?;
        Ok((device, pad))
    }

    /// The kernel, for pads an engine records itself.
    pub fn kernel(&self) -> &PadKernel {
        &self.shared.kernel
    }

    /// Pads `tensor`: `pairs` of `(before, after)` for its last axes (all of them, or fewer:
    /// Burn's rule; negative values crop), in `mode` (Burn's `PadMode` converts). The output
    /// is a new contiguous tensor of the same type on the same device.
    ///
    /// With Burn's `fusion` feature (a default of `burn`) the pad enters the tensor's fusion
    /// stream as a custom operation, in order with the fused work before and after it; without
    /// it, it is submitted at once. Either way nothing waits for the GPU. A float tensor that
    /// Burn's autodiff tracks gets a backward (this crate's `autodiff` feature): the gradient
    /// of every input element is the sum over the output positions that read it.
    ///
    /// Errors, never panics, returned by this call with fusion or without: not a wgpu tensor
    /// of this pad's device, a quantized type, pads the mode cannot take on that shape (a
    /// reflect longer than the axis is fine: ONNX reflects again), a constant the type cannot
    /// hold, an autodiff tensor without this crate's `autodiff` feature, a plan past the
    /// device's limits (`PadError::GpuLimit`: more than 16 axes left after merging, sizes
    /// past its buffers). With fusion, what only the tensor Burn hands the pad when it runs
    /// can tell (its strides or a tiled layout the GPU path cannot take, wgpu refusing) is
    /// Burn's execution error when the output is read; without fusion, this call's error.
    pub fn pad<const D: usize, K, P>(
        &self,
        tensor: Tensor<D, K>,
        pairs: &[(P, P)],
        mode: impl Into<PadMode>,
    ) -> Result<Tensor<D, K>, Error>
    where
        K: PadKind,
        P: Copy + TryInto<i64> + std::fmt::Debug,
    {
        let mode = mode.into();
        let plan_of = |dtype: DType, shape: &[usize]| plan(dtype, shape, pairs, mode);
        let padded = K::pad_dispatch(self, tensor.into_dispatch(), &plan_of)?;
        Ok(Tensor::from_dispatch(padded))
    }

    /// Interior padding, JAX's `lax.pad(x, value, config)`: for each of `tensor`'s last axes
    /// (all of them, or fewer: Burn's rule) a `(low, high, interior)`, that many constants
    /// between neighbours and `low` and `high` at the ends (negative ones crop the dilated
    /// axis). An axis of length `d` becomes `low + high + d + (d - 1) * interior`. The value
    /// is converted to the tensor's type. The dilated input of a stride-2 transposed
    /// convolution, say, over H and W: `pad.pad_interior(x, &[(1, 2, 1), (1, 2, 1)], 0.0)`.
    ///
    /// As [`pad`](Self::pad) in all else: one dispatch (interior padding's own kernel), in
    /// Burn's fusion stream with fusion, the same errors; a float tensor Burn's autodiff
    /// tracks gets its backward, the output gradient's strided slice (a gather with no sums,
    /// every float type on the kernel).
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// use wgpu_pad_burn::BurnPad;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let (device, setup) = Device::wgpu_options().init_with_setup()?;
    /// let pad = BurnPad::new(&device, &setup)?;
    /// let x = Tensor::<1>::from_floats([1.0, 2.0, 3.0], &device);
    /// let y = pad.pad_interior(x, &[(1, -1, 2)], 9.0)?; // lax.pad(x, 9.0, [(1, -1, 2)])
    /// assert_eq!(y.into_data().to_vec::<f32>()?, [9.0, 1.0, 9.0, 9.0, 2.0, 9.0, 9.0]);
    /// # Ok(()) }
    /// ```
    pub fn pad_interior<const D: usize, K, P>(
        &self,
        tensor: Tensor<D, K>,
        config: &[(P, P, P)],
        value: impl Into<Scalar>,
    ) -> Result<Tensor<D, K>, Error>
    where
        K: PadKind,
        P: Copy + TryInto<i64> + std::fmt::Debug,
    {
        let value = value.into();
        let plan_of = |dtype: DType, shape: &[usize]| plan_interior(dtype, shape, config, value);
        let padded = K::pad_dispatch(self, tensor.into_dispatch(), &plan_of)?;
        Ok(Tensor::from_dispatch(padded))
    }

    /// The plan for a primitive of backend `B`, after checking its device.
    fn plan_for<B: PadBackend>(&self, tensor: &B::FloatTensorPrimitive, plan_of: PlanOf) -> Result<PadPlan, Error> {
        let (dtype, shape, device) = B::describe(tensor);
        if device != self.shared.device {
            return Err(Error::OtherDevice { tensor: format!("{device:?}"), pad: format!("{:?}", self.shared.device) });
        }
        let plan = plan_of(dtype, &shape)?;
        // What the plan and the device's limits decide is known now: with fusion the pad runs
        // later, and its error would come only when the output is read.
        self.shared.kernel.check_plan(&plan)?;
        Ok(plan)
    }
}

/// The plan for a tensor's type and shape, from the call's pairs and mode.
type PlanOf<'a> = &'a dyn Fn(DType, &[usize]) -> Result<PadPlan, Error>;

mod sealed {
    pub trait Sealed {}
    impl Sealed for burn::tensor::Float {}
    impl Sealed for burn::tensor::Int {}
    impl Sealed for burn::tensor::Bool {}
}

/// The tensor kinds [`BurnPad::pad`] takes: Burn's `Float`, `Int` and `Bool`. Sealed; its
/// method is the adapter's own.
pub trait PadKind: burn::tensor::kind::Basic + sealed::Sealed {
    #[doc(hidden)]
    fn pad_dispatch(pad: &BurnPad, tensor: DispatchTensor, plan_of: PlanOf) -> Result<DispatchTensor, Error>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_burn_type_but_quantized_has_an_onnx_type() {
        use burn::tensor::quantization::QuantScheme;
        let pairs = [
            (DType::F64, DataType::Float64),
            (DType::F32, DataType::Float32),
            (DType::Flex32, DataType::Float32),
            (DType::F16, DataType::Float16),
            (DType::BF16, DataType::Bfloat16),
            (DType::I64, DataType::Int64),
            (DType::I32, DataType::Int32),
            (DType::I16, DataType::Int16),
            (DType::I8, DataType::Int8),
            (DType::U64, DataType::Uint64),
            (DType::U32, DataType::Uint32),
            (DType::U16, DataType::Uint16),
            (DType::U8, DataType::Uint8),
            (DType::Bool(BoolStore::U32), DataType::Uint32),
            (DType::Bool(BoolStore::U8), DataType::Uint8),
            (DType::Bool(BoolStore::Native), DataType::Bool),
        ];
        for (burn, onnx) in pairs {
            assert_eq!(onnx_type(burn).unwrap(), onnx, "{burn:?}");
            assert_eq!(burn.size(), onnx.width().bytes().unwrap(), "{burn:?}: element sizes differ");
        }
        let q = DType::QFloat(QuantScheme::default());
        let err = onnx_type(q).unwrap_err();
        assert!(matches!(err, Error::UnsupportedType(_)) && err.to_string().contains("quantized"), "{err}");
    }

    #[test]
    fn plans_take_burns_pairs_modes_and_numbers() {
        // Fewer pairs than axes pad the last ones; usize pairs as Burn writes them.
        let p = plan(DType::F32, &[2, 3, 4], &[(1usize, 2usize), (0, 3)], burn::tensor::ops::PadMode::Edge).unwrap();
        assert_eq!(p.out_shape(), &[2, 6, 7]);
        assert_eq!(p.mode(), Mode::Edge);
        // Burn's f32 constant becomes the tensor's type: f16 bits, an exact int.
        let p = plan(DType::F16, &[3], &[(1, 1)], burn::tensor::ops::PadMode::Constant(1.5)).unwrap();
        assert_eq!(p.constant(), &wgpu_pad::Constant::Bytes(half::f16::from_f32(1.5).to_le_bytes().to_vec()));
        let p = plan(DType::I64, &[3], &[(1, 1)], PadMode::Constant(Scalar::Int(i64::MAX))).unwrap();
        assert_eq!(p.constant(), &wgpu_pad::Constant::Bytes(i64::MAX.to_le_bytes().to_vec()));
        // A bool's constant is a bool, stored as Burn stores it.
        let p = plan(DType::Bool(BoolStore::U32), &[3], &[(1, 1)], PadMode::Constant(1.0.into())).unwrap();
        assert_eq!(p.constant(), &wgpu_pad::Constant::Bytes(1u32.to_le_bytes().to_vec()));
        let err = plan(DType::Bool(BoolStore::U32), &[3], &[(1, 1)], PadMode::Constant(0.5.into())).unwrap_err();
        assert!(err.to_string().contains("0.5 is not a bool value"), "{err}");
        // Too many pairs, a pad past i64: errors naming them.
        let err = plan(DType::F32, &[3], &[(1, 1), (1, 1)], Mode::Wrap).unwrap_err();
        assert!(err.to_string().contains("2 (before, after) pairs for a rank-1 tensor"), "{err}");
        let err = plan(DType::F32, &[3], &[(u64::MAX, 0)], Mode::Wrap).unwrap_err();
        assert!(err.to_string().contains("axis 0: pad 18446744073709551615 does not fit in an i64"), "{err}");
    }

    #[test]
    fn interior_plans_take_the_last_axes_and_the_constant() {
        let p = plan_interior(DType::F32, &[2, 3, 4], &[(1, 0, 1), (0, -1, 2)], Scalar::Float(1.5)).unwrap();
        // [3] by 1 between, 1 before: 6; [4] by 2 between, -1 after: 9.
        assert_eq!((p.out_shape(), p.interior()), (&[2, 6, 9][..], &[0, 1, 2][..]));
        assert_eq!(p.constant(), &wgpu_pad::Constant::Bytes(1.5f32.to_le_bytes().to_vec()));
        let err = plan_interior(DType::F32, &[3], &[(0, 0, 1), (0, 0, 1)], Scalar::Int(0)).unwrap_err();
        assert!(err.to_string().contains("2 (low, high, interior) triples for a rank-1 tensor"), "{err}");
        let err = plan_interior(DType::F32, &[3], &[(0i64, 0, -1)], Scalar::Int(0)).unwrap_err();
        assert!(err.to_string().contains("axis 0: -1 is negative"), "{err}");
    }
}
