//! How a planned pad runs on Burn's `Cube` backend: at once on `CubeBackend`, or as a custom
//! operation in the fusion stream on `Fusion<CubeBackend>`; either way in Burn's memory, on
//! Burn's queue, after the work Burn queued before it.

use std::sync::Arc;

use burn::backend::wgpu::{AutoCompiler, CubeBackend, CubeTensor, WgpuResource};
use burn::backend::{BackendTypes, CubeDevice, ExecutionError};
use burn::tensor::DType;
use burn_fusion::{Fusion, FusionBackend, FusionTensor};
use cubecl::server::Handle;
use cubecl::wgpu::WgpuServer;
use wgpu_pad::gpu::BufferRange;
use wgpu_pad::PadPlan;

use crate::{Error, Shared};

/// Burn's `Cube` backend as this build of Burn has it: `CubeBackend`, or `Fusion<CubeBackend>`
/// where Burn's `fusion` feature is on. Each tensor kind has the same primitive on either.
pub(crate) trait PadBackend: BackendTypes {
    /// The tensor's type, shape and device.
    fn describe(tensor: &Self::FloatTensorPrimitive) -> (DType, Vec<usize>, CubeDevice);
    /// Pads `tensor` by `plan` (made for its type and shape), into a new tensor; or, where
    /// `work` is the gradient, takes `plan`'s gradient of `tensor` (the gradient of the pad's
    /// output) into a new tensor of the plan's input shape.
    fn pad_planned(
        shared: &Arc<Shared>,
        tensor: Self::FloatTensorPrimitive,
        plan: PadPlan,
        work: Work,
    ) -> Result<Self::FloatTensorPrimitive, Error>;
}

/// What a planned run computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Work {
    /// The pad.
    Pad,
    /// The pad's gradient: from its output's to its input's.
    Gradient,
}

impl PadBackend for CubeBackend {
    fn describe(tensor: &CubeTensor) -> (DType, Vec<usize>, CubeDevice) {
        (tensor.dtype, tensor.meta.shape().to_vec(), tensor.device.clone())
    }

    fn pad_planned(shared: &Arc<Shared>, tensor: CubeTensor, plan: PadPlan, work: Work) -> Result<CubeTensor, Error> {
        shared.pad_now(&tensor, &plan, work)
    }
}

/// With fusion: a custom operation in the stream, run on Burn's fusion thread when the stream
/// reaches it, on the `CubeBackend` tensors fusion hands it.
impl<B> PadBackend for Fusion<B>
where
    B: FusionBackend<
        FloatTensorPrimitive = CubeTensor,
        IntTensorPrimitive = CubeTensor,
        BoolTensorPrimitive = CubeTensor,
    >,
    B::FusionRuntime: burn_fusion::FusionRuntime<FusionDevice = CubeDevice>,
{
    fn describe(tensor: &FusionTensor<B::FusionRuntime>) -> (DType, Vec<usize>, CubeDevice) {
        (tensor.dtype, tensor.shape.to_vec(), tensor.client.device().clone())
    }

    fn pad_planned(
        shared: &Arc<Shared>,
        tensor: FusionTensor<B::FusionRuntime>,
        plan: PadPlan,
        work: Work,
    ) -> Result<FusionTensor<B::FusionRuntime>, Error> {
        use burn_fusion::custom::{CustomOpIr, HandleContainer, OperationFn, OperationIr, StreamId, TensorIr};
        use burn_fusion::FusionRuntime;

        let client = tensor.client.clone();
        let dtype = tensor.dtype;
        let output_id = client.create_empty_handle();
        let shape = match work {
            Work::Pad => plan.out_shape(),
            Work::Gradient => plan.in_shape(),
        };
        let output = TensorIr::uninit(output_id, shape.to_vec().into(), dtype);
        let input = tensor.into_ir();
        // The plan travels in the operation itself; the description tells fusion only what
        // the pad reads and writes (several pads of one shape, differing in pads and mode, in
        // one stream: tested).
        let id = match work {
            Work::Pad => "wgpu_pad",
            Work::Gradient => "wgpu_pad_gradient",
        };
        let description =
            CustomOpIr { id: id.into(), inputs: vec![input.clone()], outputs: vec![output], scalars: vec![] };
        let shared = Arc::clone(shared);
        let operation =
            OperationFn(move |handles: &mut HandleContainer<<B::FusionRuntime as FusionRuntime>::FusionHandle>| {
                // Each kind has its own table of handles; the type says which holds the input.
                let tensor = if dtype.is_float() {
                    handles.get_float_tensor::<B>(&input)
                } else if dtype.is_bool() {
                    handles.get_bool_tensor::<B>(&input)
                } else {
                    handles.get_int_tensor::<B>(&input)
                };
                let padded =
                    shared.pad_now(&tensor, &plan, work).map_err(|e| ExecutionError::generic(e.to_string()))?;
                if dtype.is_float() {
                    handles.register_float_tensor::<B>(&output_id, padded);
                } else if dtype.is_bool() {
                    handles.register_bool_tensor::<B>(&output_id, padded);
                } else {
                    handles.register_int_tensor::<B>(&output_id, padded);
                }
                Ok(())
            });
        let mut outputs = client.register(StreamId::current(), OperationIr::Custom(description), operation);
        outputs.pop().ok_or_else(|| Error::Burn("fusion registered the pad without its output".into()))
    }
}

impl Shared {
    /// Allocates the output in Burn's memory, reaches both buffers (which puts Burn's work
    /// before them on the queue) and submits the pad.
    fn pad_now(&self, input: &CubeTensor, plan: &PadPlan, work: Work) -> Result<CubeTensor, Error> {
        if input.device != self.device {
            return Err(Error::OtherDevice {
                tensor: format!("{:?}", input.device),
                pad: format!("{:?}", self.device),
            });
        }
        if input.meta.is_tiled() {
            return Err(Error::NotWgpu("a tiled storage layout has no per-axis strides".into()));
        }
        let (shape, reads, writes) = match work {
            Work::Pad => (plan.out_shape(), plan.in_len(), plan.out_len()),
            Work::Gradient => (plan.in_shape(), plan.out_len(), plan.in_len()),
        };
        let output = burn_cubecl::ops::numeric::empty_device_contiguous_dtype(
            input.client.clone(),
            input.device.clone(),
            shape.to_vec().into(),
            input.dtype,
        );
        if writes > 0 {
            self.record_and_submit(plan, input, &output, reads > 0, work)?;
        }
        Ok(output)
    }

    fn record_and_submit(
        &self,
        plan: &PadPlan,
        input: &CubeTensor,
        output: &CubeTensor,
        reads: bool,
        work: Work,
    ) -> Result<(), Error> {
        let client = &output.client;
        let resource = |handle: &Handle| {
            client.get_resource::<WgpuServer<AutoCompiler>>(handle.clone()).map_err(|e| Error::Burn(format!("{e:?}")))
        };
        let out = resource(&output.handle)?;
        let out: &WgpuResource = out.resource();
        // An empty input (a constant pad of a zero-length axis) has no memory; the plan reads
        // none, and the binding only needs some valid range.
        let held_input = if reads { Some(resource(&input.handle)?) } else { None };
        let strides: Vec<u64> = input.meta.strides().iter().map(|&s| s as u64).collect();
        let input_range = match &held_input {
            Some(r) => {
                let r: &WgpuResource = r.resource();
                BufferRange::new(&r.buffer, r.offset, r.size).with_strides(&strides)
            }
            None => BufferRange::new(&out.buffer, out.offset, 0),
        };
        let output_range = BufferRange::new(&out.buffer, out.offset, out.size);

        // Burn's queued work is on the queue already: `get_resource` (cubecl-wgpu 0.11's
        // server) submits the calling thread's stream and the stream that wrote the buffer,
        // before it hands the buffer over. Burn's work before the pad therefore runs first;
        // the tests (an op queued before and after the pad, and an input written on another
        // thread) fail if a cubecl update stops doing so. No flush of our own: it would
        // submit nothing.
        let device = self.kernel.device();
        let mut encoder = device.create_command_encoder(&Default::default());
        match work {
            Work::Pad => self.kernel.encode(&mut encoder, plan, input_range, output_range)?,
            Work::Gradient => self.kernel.encode_backward(&mut encoder, plan, input_range, output_range)?,
        };
        self.queue.submit([encoder.finish()]);
        Ok(())
    }
}
