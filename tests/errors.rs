//! Every error kind the crate has, triggered once each: the kind, and a message that names
//! the offending axis or values. (NoGpu runs in tests/no_gpu.rs, its own process; OutOfMemory
//! and the catch-all Gpu variant have no reliable trigger on a software adapter.)

mod common;

use wgpu_pad::gpu::{BufferRange, GpuContext, PadKernel};
use wgpu_pad::{cpu, forms, npy, DataType, FormOptions, Mode, PadError, PadPlan, PadRequest, Tensor};

fn plan(shape: &[usize], req: PadRequest) -> Result<PadPlan, PadError> {
    PadPlan::new(DataType::Float32, shape, &req)
}

/// Asserts the error's kind and that its message holds every one of `needles`.
fn check(result: Result<impl std::fmt::Debug, PadError>, kind: fn(&PadError) -> bool, needles: &[&str]) {
    let e = result.expect_err("expected an error");
    assert!(kind(&e), "wrong kind: {e:?}");
    let msg = e.to_string();
    for n in needles {
        assert!(msg.contains(n), "message {msg:?} lacks {n:?}");
    }
    assert!(!msg.contains('\n'), "message spans lines: {msg:?}");
}

#[test]
fn plan_errors() {
    check("Mirror".parse::<Mode>(), |e| matches!(e, PadError::InvalidMode { .. }), &["\"Mirror\""]);
    check(
        plan(&[2, 3], PadRequest::new(vec![1, 2, 3])),
        |e| matches!(e, PadError::PadsLength { .. }),
        &["3 values", "expected 4", "2 axes"],
    );
    check(
        plan(&[2, 3], PadRequest::new(vec![1, 1]).axes(vec![2])),
        |e| matches!(e, PadError::AxisOutOfRange { .. }),
        &["axis 2", "rank 2"],
    );
    check(
        plan(&[2, 3], PadRequest::new(vec![1, 1, 1, 1]).axes(vec![0, -2])),
        |e| matches!(e, PadError::RepeatedAxis { .. }),
        &["axis 0", "entries 0 and 1"],
    );
    check(
        plan(&[5, 3], PadRequest::new(vec![0, -2, 0, -2])),
        |e| matches!(e, PadError::NegativeOutputDim { .. }),
        &["axis 1", "length 3", "begin -2", "end -2", "-1"],
    );
    check(
        plan(&[2, 3], PadRequest::new(vec![0, -3, 0, 1]).mode(Mode::Wrap)),
        |e| matches!(e, PadError::EmptyAxis { .. }),
        &["wrap pad on axis 1", "cropping 3 of 3"],
    );
    let int_value = Tensor::from_slice(DataType::Int32, vec![], &[1i32]).unwrap();
    check(
        plan(&[2], PadRequest::new(vec![1, 1]).constant(int_value)),
        |e| matches!(e, PadError::ConstantValue { .. }),
        &["int32", "float32"],
    );
    let two = Tensor::from_slice(DataType::Float32, vec![2], &[1f32, 2.]).unwrap();
    check(
        plan(&[2], PadRequest::new(vec![1, 1]).constant(two)),
        |e| matches!(e, PadError::ConstantValue { .. }),
        &["[2]", "2 elements"],
    );
    check(
        plan(&[3], PadRequest::new(vec![i64::MAX, i64::MAX])),
        |e| matches!(e, PadError::TooLarge { .. }),
        &["axis 0", "9223372036854775807"],
    );
    check(
        plan(&[1 << 16, 1 << 16], PadRequest::new(vec![0, 0, 0, 1]).max_output_bytes(1 << 20)),
        |e| matches!(e, PadError::OutputLimit { limit: 1048576, .. }),
        &["[65536, 65537]", "1048576", "max_output_bytes"],
    );
    // Element counts overflowing u64.
    check(
        plan(&[1 << 40, 1 << 40], PadRequest::new(vec![0, 0, 0, 0])),
        |e| matches!(e, PadError::TooLarge { .. }),
        &["more than 2^64"],
    );
}

/// Strings' bytes are known only when padding: past the limit, the pad is refused then.
#[test]
fn string_bytes_past_the_limit() {
    let x = Tensor::from_strings(vec![4], vec!["abcdefgh".to_string(); 4]).unwrap();
    // 8 output strings: their String values and 64 bytes of text.
    let need = 8 * std::mem::size_of::<String>() as u64 + 64;
    let request = |limit| PadRequest::new(vec![2, 2]).mode(Mode::Edge).max_output_bytes(limit);
    let at_limit = PadPlan::new(DataType::String, &[4], &request(need)).unwrap();
    assert_eq!(cpu::pad(&at_limit, &x).unwrap().strings().unwrap().len(), 8);
    let under = PadPlan::new(DataType::String, &[4], &request(need - 1)).unwrap();
    check(
        cpu::pad(&under, &x),
        |e| matches!(e, PadError::OutputLimit { .. }),
        &["8 strings", &format!("limit of {} bytes (max_output_bytes)", need - 1), "bytes of text"],
    );
}

#[test]
fn form_and_tensor_errors() {
    let pads = Tensor::from_slice(DataType::Int64, vec![2], &[1i64, 1]).unwrap();
    check(
        forms::onnx_pad(18, DataType::Float32, &[2], "wrap", forms::OnnxPadInputs::new(&pads), FormOptions::default()),
        |e| matches!(e, PadError::NotInVersion { .. }),
        &["mode wrap", "ONNX Pad-18", "Pad-19"],
    );
    let begin = Tensor::from_slice(DataType::Int64, vec![2], &[0i64, -1]).unwrap();
    check(
        forms::openvino_pad(DataType::Float32, &[2, 2], "edge", &begin, &pads, None, FormOptions::default()),
        |e| matches!(e, PadError::InvalidInput { .. }),
        &["pads_begin", "axis 1", "-1"],
    );
    check(
        Tensor::from_bytes(DataType::Int4, vec![5], vec![0; 2]),
        |e| matches!(e, PadError::InvalidTensor { .. }),
        &["int4", "[5]", "2 bytes given, 3 expected"],
    );
    check(
        Tensor::from_utf8(vec![2], vec![b"ok".to_vec(), vec![0xc3]]),
        |e| matches!(e, PadError::InvalidTensor { .. }),
        &["element 1", "UTF-8"],
    );
    check("float33".parse::<DataType>(), |e| matches!(e, PadError::UnknownDataType { .. }), &["float33"]);
    let strings = PadPlan::new(DataType::String, &[1], &PadRequest::new(vec![1, 1])).unwrap();
    check(cpu::pad_into(&strings, &[], &mut []), |e| matches!(e, PadError::Unsupported { .. }), &["string"]);
    check(npy::parse(b"\x93NUMPY\x01\x00"), |e| matches!(e, PadError::Npy { .. }), &["truncated"]);
}

#[test]
fn gpu_errors() {
    let Some(ctx) = common::gpu() else { return };
    let device = ctx.device();
    let kernel = PadKernel::new(device).unwrap();
    let align = device.limits().min_storage_buffer_offset_alignment as u64;
    let p = plan(&[4], PadRequest::new(vec![1, 1])).unwrap();
    let mk = |size, usage| {
        device.create_buffer(&wgpu::BufferDescriptor { label: None, size, usage, mapped_at_creation: false })
    };
    let good = mk(4096, wgpu::BufferUsages::STORAGE);
    let small = mk(16, wgpu::BufferUsages::STORAGE);
    let vertex = mk(64, wgpu::BufferUsages::VERTEX);
    let mut enc = device.create_command_encoder(&Default::default());
    let mut encode = |i: BufferRange, o: BufferRange| kernel.encode(&mut enc, &p, i, o);
    check(
        encode(BufferRange::whole(&good), BufferRange::whole(&small)),
        |e| matches!(e, PadError::BufferTooSmall { .. }),
        &["output", "24", "16"],
    );
    check(
        encode(BufferRange::at(&good, 6), BufferRange::whole(&small)),
        |e| matches!(e, PadError::MisalignedOffset { .. }),
        &["input", "offset 6", "multiple of 4"],
    );
    check(
        encode(BufferRange::whole(&vertex), BufferRange::whole(&good)),
        |e| matches!(e, PadError::BufferUsage { .. }),
        &["input", "STORAGE", "VERTEX"],
    );
    check(
        encode(BufferRange::whole(&good), BufferRange::at(&good, 0)),
        |e| matches!(e, PadError::Overlap { .. }),
        &["0..16", "0..24"],
    );
    let p4 = PadPlan::new(DataType::Uint4, &[4], &PadRequest::new(vec![1, 1])).unwrap();
    check(
        kernel.encode(&mut enc, &p4, BufferRange::whole(&good), BufferRange::at(&good, align)),
        |e| matches!(e, PadError::Unsupported { .. }),
        &["uint4", "CPU path"],
    );
}

#[test]
fn a_lost_device_is_an_error() {
    if common::gpu().is_none() {
        return;
    }
    let ctx = GpuContext::new_blocking().unwrap();
    let p = plan(&[4], PadRequest::new(vec![1, 1])).unwrap();
    let x = Tensor::from_slice(DataType::Float32, vec![4], &[1f32, 2., 3., 4.]).unwrap();
    assert!(ctx.pad_blocking(&p, &x).is_ok());
    ctx.device().destroy();
    check(ctx.pad_blocking(&p, &x), |e| matches!(e, PadError::DeviceLost { .. }), &["lost"]);
    // And again: it stays an error, no panic, no hang.
    check(ctx.pad_blocking(&p, &x), |e| matches!(e, PadError::DeviceLost { .. }), &["lost"]);
}

#[test]
fn a_lost_engine_device_is_an_error() {
    // An engine's device, wrapped: the context installs no callback of its own there (the
    // engine's would be replaced), so the loss is read from what the device refuses.
    if common::gpu().is_none() {
        return;
    }
    let owner = GpuContext::new_blocking().unwrap();
    let (device, queue) = (owner.device(), owner.queue());
    let before = GpuContext::from_device(device, queue, owner.adapter_info().clone()).unwrap();
    let p = plan(&[4], PadRequest::new(vec![1, 1])).unwrap();
    let x = Tensor::from_slice(DataType::Float32, vec![4], &[1f32, 2., 3., 4.]).unwrap();
    assert!(before.pad_blocking(&p, &x).is_ok());
    device.destroy();
    check(before.pad_blocking(&p, &x), |e| matches!(e, PadError::DeviceLost { .. }), &["lost"]);
    // Wrapped after the loss.
    let after = GpuContext::from_device(device, queue, owner.adapter_info().clone());
    let after = after.unwrap();
    check(after.pad_blocking(&p, &x), |e| matches!(e, PadError::DeviceLost { .. }), &["lost"]);
}

#[test]
fn rank_64_runs_and_folds() {
    // 64 axes of length 1 and 2, a few padded: valid on both paths.
    let mut shape = vec![1usize; 64];
    shape[3] = 2;
    shape[40] = 2;
    let mut pads = vec![0i64; 128];
    pads[3] = 1;
    pads[64 + 40] = 2;
    pads[64 + 63] = 1;
    let p = PadPlan::new(DataType::Int16, &shape, &PadRequest::new(pads).mode(Mode::Symmetric)).unwrap();
    let x = Tensor::from_slice(DataType::Int16, shape.clone(), &[1i16, 2, 3, 4]).unwrap();
    let y = cpu::pad(&p, &x).unwrap();
    assert!(y == wgpu_pad::reference::pad(&p, &x));
    if let Some(ctx) = common::gpu() {
        assert!(ctx.pad_blocking(&p, &x).unwrap().tensor == y);
    }
    // 64 padded axes of length 1: 3^64 elements overflow u64, refused up front.
    check(
        PadPlan::new(DataType::Int16, &[1; 64], &PadRequest::new(vec![1; 128])),
        |e| matches!(e, PadError::TooLarge { .. }),
        &["more than 2^64"],
    );
}
